//! Frame-rate stability, determinism: the 1000-box pile of randomly turned boxes dropped from a
//! lattice gives the same state hash after 300 steps at 30 Hz on 1, 2 and 4 rayon threads and
//! across runs (each step's work shared among the threads, `PoolUse::Shared`).

use shatter::engine::{PoolUse, WorldSettings};
use shatter::scenes::{FRAME_30HZ, box_lattice, world_with_ground};

/// Steps 300 frames of a 10 x 10 x 10 lattice of unit boxes (1.1 m pitch, random orientations, so
/// they start interpenetrating and tumble into a pile: the scene of `stability_stacks`'s random
/// pile) on `threads` threads; returns the state hash and the number of contacts summed over the
/// steps.
fn run_pile(threads: usize) -> (u64, usize) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let (mut world, _) = world_with_ground(box_lattice(10, 1.1, Some(7)));
        let shared = WorldSettings {
            pool_use: PoolUse::Shared,
            ..*world.settings()
        };
        world.set_settings(shared).unwrap();
        let mut contacts = 0;
        for _ in 0..300 {
            contacts += world.step(FRAME_30HZ).unwrap().contacts;
        }
        (world.state_hash(), contacts)
    })
}

#[test]
fn stability_determinism_pile_hash_is_the_same_on_1_2_and_4_threads_and_across_runs() {
    let (reference, contacts) = run_pile(1);
    assert!(
        contacts > 1_000_000,
        "the pile should touch: {contacts} contacts in 300 steps"
    );
    for threads in [2, 4, 1] {
        assert_eq!(run_pile(threads), (reference, contacts), "{threads} threads");
    }
}
