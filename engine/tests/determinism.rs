//! Determinism of the step: the same scene gives the same bits run to run and on any number of
//! threads.

mod common;

use common::{FRAME, pile};
use shatter_engine::World;

fn run_pile(threads: usize) -> (u64, usize) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut world = World::new();
        pile(&mut world, 9);
        let mut contacts = 0;
        for _ in 0..100 {
            contacts += world.step(FRAME).unwrap().contacts;
        }
        (world.state_hash(), contacts)
    })
}

#[test]
fn step_determinism_pile_hash_is_the_same_on_1_2_and_4_threads_and_across_runs() {
    let (reference, contacts) = run_pile(1);
    assert!(
        contacts > 100,
        "the pile should touch: {contacts} contacts in 100 steps"
    );
    for threads in [1, 2, 4] {
        assert_eq!(run_pile(threads), (reference, contacts), "{threads} threads");
    }
}
