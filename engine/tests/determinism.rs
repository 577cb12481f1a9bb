//! Determinism of the step: the same scene gives the same bits run to run and on any number of
//! threads.

mod common;

use common::{FRAME, pile};
use shatter_engine::{PoolUse, World, WorldSettings};

/// A world whose steps use the pool as `pool_use` says.
fn world_using(pool_use: PoolUse) -> World {
    let mut world = World::new();
    let mut settings = WorldSettings {
        pool_use,
        ..*world.settings()
    };
    settings.sleep.enabled = false;
    world.set_settings(settings).unwrap();
    world
}

fn run_pile(threads: usize) -> (u64, usize) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut world = world_using(PoolUse::Shared);
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

/// Every way a step can use the pool gives the same bits: a toppling column of 80 bodies (enough
/// moving bodies for the steps to share work, and chaotic, so any difference grows) stepped 100
/// times in a pool of two threads, its work always shared, always on one thread, and the faster
/// way, ends in the same state; each step reports the threads it ran on.
#[test]
fn step_determinism_pool_use_gives_the_same_bits_every_way() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let run = |pool_use| {
        pool.install(|| {
            let mut world = world_using(pool_use);
            pile(&mut world, 80);
            let threads: Vec<usize> = (0..100).map(|_| world.step(FRAME).unwrap().threads).collect();
            (world.state_hash(), threads)
        })
    };
    let (shared, threads) = run(PoolUse::Shared);
    assert!(threads.iter().all(|&t| t == 2), "shared: {threads:?}");
    let (one_thread, threads) = run(PoolUse::OneThread);
    assert!(threads.iter().all(|&t| t == 1), "one thread: {threads:?}");
    assert_eq!(one_thread, shared, "one thread against shared");
    // Which steps the faster way runs on one thread depends on the machine's timing (its
    // choice is tested in pool_use.rs); each runs one way or the other.
    let (faster, threads) = run(PoolUse::Faster);
    assert!(threads.iter().all(|&t| t == 1 || t == 2), "faster: {threads:?}");
    assert_eq!(faster, shared, "faster against shared");
}
