//! Work shared among the rayon pool's threads with the waiting thread kept awake: two pieces side
//! by side ([`join`]), and a list halved down to runs of items ([`for_each_mut`]).
//!
//! `rayon::join(a, b)` runs `a` on the calling thread and lets another thread take `b`. When `a`
//! ends first, the calling thread waits for `b` as any idle rayon thread does: it looks for other
//! work a few dozen times, yielding between looks, and then sleeps until `b`'s thread wakes it.
//! On the two-core machine kind this engine is measured on, that wake-up costs tens of
//! microseconds: the solve of the 210-box pyramid put its warm start (120 us) beside the building
//! of its sweep batches (100 us), and the pair took 167 us where the longer took 129; rayon's
//! parallel loops wait the same way for their last pieces, and the step's thread slept in two of
//! them nearly every step of the aligned 1000-box pile. [`join`] keeps the calling thread running
//! the pool's pending work (`b`'s own pieces among it) or spinning while `b` runs on another
//! thread, so it goes on the moment `b` ends. What runs where may differ from `rayon::join`;
//! nothing a step computes depends on it (the determinism tests).

use core::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// `b` has not begun: the calling thread runs it itself once `a` ends (rayon's join does).
const NOT_BEGUN: u8 = 0;
/// `b` runs on another thread.
const RUNNING: u8 = 1;
/// `b` has ended.
const ENDED: u8 = 2;

/// The longest the calling thread spins for `b` before it waits as rayon's threads do: far
/// longer than the pieces of a step, and a bound should `b` be held up (a thread that took it
/// may run other pool work first).
const SPIN_LIMIT: Duration = Duration::from_millis(2);

/// Spins between readings of the clock.
const SPINS_PER_CLOCK_READ: u32 = 64;

/// Runs `a` and `b`, possibly side by side, and returns both results, as `rayon::join` does;
/// when `a` ends while `b` runs on another thread, the calling thread spins until `b` ends (or
/// for 2 ms, a bound should `b` be held up) instead of going to sleep.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let state = AtomicU8::new(NOT_BEGUN);
    let state = &state;
    rayon::join(
        move || {
            let result = a();
            // Not begun: nobody took `b`, and rayon runs it on this thread next.
            if state.load(Ordering::Acquire) == RUNNING {
                let start = Instant::now();
                let mut spins = 0u32;
                while state.load(Ordering::Acquire) == RUNNING {
                    // `b`'s own parallel pieces, or any other of the pool's, are run here.
                    if rayon::yield_now() == Some(rayon::Yield::Executed) {
                        continue;
                    }
                    core::hint::spin_loop();
                    spins = spins.wrapping_add(1);
                    if spins % SPINS_PER_CLOCK_READ == 0 && start.elapsed() > SPIN_LIMIT {
                        break;
                    }
                }
            }
            result
        },
        move || {
            state.store(RUNNING, Ordering::Release);
            let result = b();
            state.store(ENDED, Ordering::Release);
            result
        },
    )
}

/// [`join`] where `share` says the two are worth handing to the pool; otherwise `a` and then `b` on
/// the calling thread, with no job for the pool and no thread woken. A join costs a few
/// microseconds when the pool's threads are at hand, and far more when they have gone to sleep or
/// the caller is not one of them (rayon then hands the pair to the pool and blocks until it is
/// done): more than two small pieces of work take together.
pub fn join_if<A, B, RA, RB>(share: bool, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    if share {
        join(a, b)
    } else {
        let first = a();
        (first, b())
    }
}

/// Calls `visit(index, item)` for every item of `items`, shared among the pool's threads by
/// halving the list (through [`join`], so no thread that waits for the other half sleeps) down to
/// runs of at most `min_len` items (at least one), each visited in order on one thread.
pub fn for_each_mut<T: Send>(items: &mut [T], min_len: usize, visit: &(impl Fn(usize, &mut T) + Sync)) {
    for_each_mut_from(0, items, min_len.max(1), visit);
}

/// [`for_each_mut`] over `items`, the first of which is item `first` of the whole list.
fn for_each_mut_from<T: Send>(first: usize, items: &mut [T], min_len: usize, visit: &(impl Fn(usize, &mut T) + Sync)) {
    if items.len() <= min_len || rayon::current_num_threads() < 2 {
        for (k, item) in items.iter_mut().enumerate() {
            visit(first + k, item);
        }
        return;
    }
    let half = items.len() / 2;
    let (front, back) = items.split_at_mut(half);
    join(
        || for_each_mut_from(first, front, min_len, visit),
        || for_each_mut_from(first + half, back, min_len, visit),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both results come back, on one thread and on several, whichever half ends first.
    #[test]
    fn parallel_join_returns_both_results() {
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let busy = |micros: u64| {
                    let start = Instant::now();
                    while start.elapsed() < Duration::from_micros(micros) {
                        core::hint::spin_loop();
                    }
                    micros
                };
                assert_eq!(join(|| busy(10), || busy(300)), (10, 300));
                assert_eq!(join(|| busy(300), || busy(10)), (300, 10));
                // Nested, as the solve nests its joins in the islands' join.
                let (x, (y, z)) = join(|| busy(50), || join(|| busy(100), || busy(20)));
                assert_eq!((x, y, z), (50, 100, 20));
            });
        }
    }

    /// Every item is visited once, with its own index, for lists shorter and longer than the
    /// runs, on one thread and on several.
    #[test]
    fn parallel_for_each_mut_visits_every_item_once_with_its_index() {
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for (len, min_len) in [(0, 1), (1, 1), (7, 0), (100, 1), (1000, 64), (1000, 999), (1000, 4000)] {
                let mut items: Vec<(usize, u32)> = (0..len).map(|k| (k, 0)).collect();
                pool.install(|| {
                    for_each_mut(&mut items, min_len, &|index, item: &mut (usize, u32)| {
                        assert_eq!(index, item.0, "item {} visited as {index}", item.0);
                        item.1 += 1;
                    })
                });
                assert!(
                    items.iter().all(|&(_, visits)| visits == 1),
                    "{len} items, runs of {min_len}"
                );
            }
        }
    }

    /// Unshared, both pieces run on the calling thread, also where that thread is none of a
    /// pool's (where a join would hand them to the global pool and wait); shared, they go to the
    /// pool as a join's do. Either way both results come back, in order.
    #[test]
    fn parallel_join_if_keeps_unshared_work_on_the_calling_thread() {
        let outside = std::thread::spawn(|| {
            let unshared = join_if(false, rayon::current_thread_index, || {
                (rayon::current_thread_index(), 2)
            });
            let shared = join_if(true, rayon::current_thread_index, || (rayon::current_thread_index(), 2));
            (unshared, shared)
        });
        let ((a, (b, two)), (c, (d, again))) = outside.join().unwrap();
        assert_eq!((a, b, two), (None, None, 2));
        assert!(c.is_some() && d.is_some() && again == 2, "{c:?} {d:?}");
    }
}
