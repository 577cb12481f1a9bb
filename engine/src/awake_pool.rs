//! Keeping the rayon pool's other threads at hand for the length of a step.
//!
//! A step hands work to the pool a dozen times or more (broad phase, narrow phase, the rows, the
//! islands, the sweeps' batches, the integrator), with stretches of one-thread work in between.
//! Rayon puts an idle worker to sleep after a few microseconds, and waking it again takes tens:
//! measured on the two-core machine kind this is built on, a `join` of two 20 us halves took
//! 21 us right after other parallel work but 56-83 us after 20 us or more of one-thread work, as
//! long as the two halves done one after the other. So the stretches of a step that were given
//! to the pool gained little, and a step with many short ones (the 210-box pyramid) ran slower
//! on two threads than on one.
//!
//! While a step runs, every other thread of the pool therefore runs a *watcher*: it looks for the
//! pool's work (`rayon::yield_now`) and runs what it finds, spinning in between, until the step
//! ends. The step's results do not depend on which thread runs what (the determinism tests), so
//! this changes only when things run. The watchers use the pool's threads while the step runs,
//! as the step's parallel stages would; a pool of one thread gets none.
//!
//! A watcher also leaves after [`IDLE_LIMIT`] without finding work. That bounds what it costs
//! during a long one-thread stretch, and it rules out a wait that never ends: a thread that picks
//! up a watcher while it waits inside another job (rayon runs pending jobs while a `join` waits)
//! holds that job until the watcher leaves, and if the watcher's own step needed that job to end,
//! neither would without the limit (two worlds stepped side by side on one pool).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a watcher waits for work before it leaves: longer than the one-thread stretches of a
/// step between its parallel stages (well under a millisecond for scenes of a few thousand
/// bodies), short against a frame.
pub(crate) const IDLE_LIMIT: Duration = Duration::from_millis(2);

/// Spins between looks for work, checking the clock every this many looks.
const LOOKS_PER_CLOCK_READ: u32 = 64;

/// The pool's other threads watching for work until this is dropped (at the end of the step,
/// however it ends).
#[derive(Debug)]
pub(crate) struct AwakePool {
    /// Set when the step ends; `None` when the pool has one thread.
    done: Option<Arc<AtomicBool>>,
}

impl AwakePool {
    /// Starts a watcher on every thread of the current pool but the calling one.
    pub(crate) fn start() -> Self {
        if rayon::current_num_threads() < 2 {
            return Self { done: None };
        }
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        let caller = rayon::current_thread_index();
        rayon::spawn_broadcast(move |context| {
            if Some(context.index()) != caller {
                watch(&flag);
            }
        });
        Self { done: Some(done) }
    }
}

impl Drop for AwakePool {
    fn drop(&mut self) {
        if let Some(done) = &self.done {
            done.store(true, Ordering::Release);
        }
    }
}

/// Runs the pool's pending work as it comes until `done` is set or none has come for
/// [`IDLE_LIMIT`].
fn watch(done: &AtomicBool) {
    let mut idle_since = Instant::now();
    let mut looks = 0u32;
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle_since = Instant::now();
            looks = 0;
            continue;
        }
        looks += 1;
        if looks == LOOKS_PER_CLOCK_READ {
            looks = 0;
            if idle_since.elapsed() >= IDLE_LIMIT {
                return;
            }
        }
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
    }

    /// The watchers run the pool's work: parallel sums over a pool of three, between stretches of
    /// one-thread work, give the sums; the second half of a `join` whose first half waits for it
    /// (up to two seconds, so a loaded machine cannot fail the test by scheduling alone) is run
    /// off the calling thread; and every watcher has left soon after the guard drops.
    #[test]
    fn awake_pool_watchers_run_work_and_leave() {
        let pool = pool(3);
        let (sum, elsewhere) = pool.install(|| {
            let awake = AwakePool::start();
            assert!(awake.done.is_some());
            let mut sum = 0u64;
            for round in 0..50u64 {
                // A stretch of one-thread work between parallel ones, as in a step.
                let start = Instant::now();
                while start.elapsed() < Duration::from_micros(50) {
                    std::hint::spin_loop();
                }
                sum += rayon::iter::ParallelIterator::sum::<u64>(rayon::iter::ParallelIterator::map(
                    rayon::iter::IntoParallelIterator::into_par_iter(0..1000u64),
                    |k| k * round,
                ));
            }
            let caller = rayon::current_thread_index();
            let taken = AtomicBool::new(false);
            let (_, second) = rayon::join(
                || {
                    let start = Instant::now();
                    while !taken.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(2) {
                        std::hint::spin_loop();
                    }
                },
                || {
                    taken.store(true, Ordering::Release);
                    rayon::current_thread_index()
                },
            );
            drop(awake);
            (sum, second != caller)
        });
        assert_eq!(sum, (0..50u64).map(|round| round * 999 * 1000 / 2).sum::<u64>());
        assert!(elsewhere, "no work ran off the calling thread");
        // Once the step is over the watchers leave: the pool runs a broadcast on every thread,
        // which it could not while a watcher held one.
        assert_eq!(pool.broadcast(|context| context.index()), vec![0, 1, 2]);
    }

    /// A pool of one thread gets no watcher, and a watcher with no step to serve leaves after
    /// the idle limit: the guard is kept, so `done` is never set, yet the pool can run a
    /// broadcast on every thread again (were the watcher to stay, this would never return).
    #[test]
    fn awake_pool_needs_two_threads_and_watchers_time_out() {
        assert!(pool(1).install(AwakePool::start).done.is_none());
        let pool = pool(2);
        let awake = pool.install(AwakePool::start);
        assert_eq!(pool.broadcast(|context| context.index()), vec![0, 1]);
        drop(awake);
    }

    /// Two steps side by side on one pool, each with its watchers and nested parallel work,
    /// both finish (a thread waiting inside one step's job may pick up the other's watcher).
    #[test]
    fn awake_pool_steps_side_by_side_finish() {
        let pool = pool(2);
        let step = |seed: u64| {
            let _awake = AwakePool::start();
            (0..20u64)
                .map(|round| {
                    rayon::iter::ParallelIterator::sum::<u64>(rayon::iter::ParallelIterator::map(
                        rayon::iter::IntoParallelIterator::into_par_iter(0..200u64),
                        |k| k ^ (seed + round),
                    ))
                })
                .sum::<u64>()
        };
        let expected = |seed: u64| {
            (0..20u64)
                .map(|round| (0..200u64).map(|k| k ^ (seed + round)).sum::<u64>())
                .sum::<u64>()
        };
        for _ in 0..20 {
            let (a, b) = pool.install(|| rayon::join(|| step(1), || step(2)));
            assert_eq!((a, b), (expected(1), expected(2)));
        }
    }
}
