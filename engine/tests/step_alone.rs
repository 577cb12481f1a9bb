//! A step with too few moving bodies to share its work runs wholly on the thread that calls it:
//! with every thread of the global rayon pool held, a world of three awake balls stepped from
//! outside the pool still steps, while one of a hundred (which shares its work) waits for the
//! pool until it is let go. Its own test binary, as it holds the global pool.

mod common;

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::time::Duration;

use common::{FRAME, ball, ground};
use glam::DVec3;
use shatter_engine::{BodyDesc, PoolUse, World, WorldSettings};

/// Every thread of the global pool waiting until the flag is set.
type Hold = Arc<(Mutex<bool>, Condvar)>;

/// Holds every thread of the global pool; returns once all of them wait.
fn hold_the_pool() -> Hold {
    let threads = rayon::current_num_threads();
    let arrived = Arc::new(Barrier::new(threads + 1));
    let hold: Hold = Arc::new((Mutex::new(false), Condvar::new()));
    let (arrive, held) = (Arc::clone(&arrived), Arc::clone(&hold));
    rayon::spawn_broadcast(move |_| {
        arrive.wait();
        let (released, wake) = &*held;
        let mut released = released.lock().unwrap();
        while !*released {
            released = wake.wait(released).unwrap();
        }
    });
    arrived.wait();
    hold
}

/// Lets the threads `hold_the_pool` holds go back to the pool's work.
fn let_go(hold: &Hold) {
    let (released, wake) = &**hold;
    *released.lock().unwrap() = true;
    wake.notify_all();
}

/// `balls` awake balls rolling on the ground, 2 m apart, in a world whose steps use the pool as
/// `pool_use` says.
fn rolling_balls(balls: usize, pool_use: PoolUse) -> World {
    let mut world = World::try_with_settings(WorldSettings {
        pool_use,
        ..WorldSettings::default()
    })
    .unwrap();
    world.add_body(ground()).unwrap();
    for k in 0..balls {
        let position = DVec3::new(2.0 * (k % 10) as f64, 0.5, 2.0 * (k / 10) as f64);
        let desc = BodyDesc::dynamic(ball(0.5))
            .with_position(position)
            .with_velocity(DVec3::X, DVec3::ZERO);
        world.add_body(desc).unwrap();
    }
    world
}

/// Steps `world` 30 frames on a new thread (outside the pool); its count of moving bodies comes
/// back once it is done.
fn stepping(mut world: World) -> mpsc::Receiver<usize> {
    let (done, steps) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..30 {
            world.step(FRAME).unwrap();
        }
        let _ = done.send(world.bodies().moving().len());
    });
    steps
}

#[test]
fn step_alone_too_few_moving_bodies_hands_nothing_to_the_pool() {
    let hold = hold_the_pool();
    // Three balls: every stage on the calling thread, so the held pool does not matter. A stage
    // that handed work to the pool would wait for it as long as the pool is held.
    let small = stepping(rolling_balls(3, PoolUse::Faster)).recv_timeout(Duration::from_secs(120));
    // A hundred balls share their work: the step waits for the pool (this shows the test can
    // tell), and goes on once the pool is let go.
    let large = stepping(rolling_balls(100, PoolUse::Shared));
    let waited = large.recv_timeout(Duration::from_secs(1));
    let_go(&hold);
    assert_eq!(small, Ok(3), "the small world's step waited for the held pool");
    assert_eq!(
        waited,
        Err(RecvTimeoutError::Timeout),
        "the large world stepped without the pool"
    );
    assert_eq!(large.recv_timeout(Duration::from_secs(120)), Ok(100));
}
