//! Work shared among the rayon pool's threads with the waiting thread kept awake: two pieces side
//! by side ([`join`]), and a list halved down to runs of items ([`for_each_mut`]); and work kept
//! on the calling thread where it is too short to share ([`alone`], with [`task_len`] for rayon's
//! own parallel iterators).
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

use core::cell::Cell;
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
    if is_alone() {
        let first = a();
        return (first, b());
    }
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

/// Runs `work` on the calling thread with every [`join`] and [`for_each_mut`] it makes there done
/// in order on that thread, and every rayon iterator whose tasks are [`task_len`] long left whole
/// on it, handing nothing to the pool: for a step with too few moving bodies to share its work
/// (the engine's test). A join costs a few microseconds when the pool's threads are at hand and
/// far more when they sleep or the caller is none of them (rayon then hands the pair to the pool
/// and blocks until it is done), which is more than such a step's pieces take: three awake balls
/// on a ground, stepped from outside the pool, took 37.8 us a step with three joins more than
/// they had at 23.4 us, and three rolling balls 40.7 us with two rayon iterators still split
/// against 4.6 us with none. The same bits either way (the determinism tests).
pub fn alone<R>(work: impl FnOnce() -> R) -> R {
    /// Puts back the calling thread's setting before `alone` (also when `work` unwinds).
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ALONE.with(|alone| alone.set(self.0));
        }
    }
    let _restore = Restore(ALONE.with(|alone| alone.replace(true)));
    work()
}

/// The fewest items one task of a rayon parallel iterator takes, for its `with_min_len`: `min`
/// (at least one), or every item inside [`alone`], where the iterator is then never split and
/// runs on the calling thread. A rayon iterator splits its items among the pool's threads however
/// few they are, and from outside the pool each split hands a task to the pool and blocks until
/// it is done, as a join does ([`alone`]).
pub fn task_len(min: usize) -> usize {
    if is_alone() { usize::MAX } else { min.max(1) }
}

thread_local! {
    /// Whether the calling thread runs inside [`alone`].
    static ALONE: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread runs inside [`alone`].
fn is_alone() -> bool {
    ALONE.with(Cell::get)
}

/// Calls `visit(index, item)` for every item of `items`, shared among the pool's threads by
/// halving the list (through [`join`], so no thread that waits for the other half sleeps) down to
/// runs of at most `min_len` items (at least one), each visited in order on one thread.
pub fn for_each_mut<T: Send>(items: &mut [T], min_len: usize, visit: &(impl Fn(usize, &mut T) + Sync)) {
    for_each_mut_from(0, items, min_len.max(1), visit);
}

/// [`for_each_mut`] over `items`, the first of which is item `first` of the whole list.
fn for_each_mut_from<T: Send>(first: usize, items: &mut [T], min_len: usize, visit: &(impl Fn(usize, &mut T) + Sync)) {
    if items.len() <= min_len || rayon::current_num_threads() < 2 || is_alone() {
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
    use rayon::prelude::*;

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

    /// Inside `alone`, a join's two pieces and every item of a halved loop run on the calling
    /// thread, also where that thread is none of a pool's (where a join would hand them to the
    /// global pool and wait), with the results in order; outside, before and after (the setting
    /// is put back), a join goes to the pool.
    #[test]
    fn parallel_alone_keeps_joins_and_loops_on_the_calling_thread() {
        let outside = std::thread::spawn(|| {
            let before = join(rayon::current_thread_index, || (rayon::current_thread_index(), 2));
            // Where each of 100 items of a rayon iterator with tasks of `task_len(1)` is visited.
            let visited = || -> Vec<Option<usize>> {
                let mut out = Vec::new();
                (0..100)
                    .into_par_iter()
                    .with_min_len(task_len(1))
                    .map(|_| rayon::current_thread_index())
                    .collect_into_vec(&mut out);
                out
            };
            let inside = alone(|| {
                let joined = join(rayon::current_thread_index, || (rayon::current_thread_index(), 2));
                let mut items = vec![(0, Some(7)); 100];
                for_each_mut(&mut items, 1, &|k, item| *item = (k, rayon::current_thread_index()));
                (joined, items, visited())
            });
            let after = join(rayon::current_thread_index, || (rayon::current_thread_index(), 2));
            (before, inside, after, visited())
        });
        let (before, ((a, (b, two)), items, iterated), after, iterated_after) = outside.join().unwrap();
        assert_eq!((a, b, two), (None, None, 2));
        assert!(items.iter().enumerate().all(|(k, &item)| item == (k, None)));
        assert_eq!(iterated, vec![None; 100]);
        // Outside `alone` the iterator is split: every item is visited on the pool.
        assert!(iterated_after.iter().all(Option::is_some), "{iterated_after:?}");
        for (c, (d, again)) in [before, after] {
            assert!(c.is_some() && d.is_some() && again == 2, "{c:?} {d:?}");
        }
    }
}
