//! Whether a step shares its work among the threads of the rayon pool it runs in, or runs on one
//! thread: [`PoolUse`], and the choice between the two by the time each takes (`PoolChoice`).
//!
//! Sharing a step's work is not always faster. Its stages hand work to the pool a dozen times or
//! more and pass their arrays from thread to thread (rows built on one thread are prepared on
//! another, the prepared rows swept on a third), so a step pays for every cache line that moves
//! between cores. Measured on the two-core machine kind this is built on (a virtual machine
//! whose two cores the host places near each other or far apart, and moves between the two
//! from minute to minute): while a cache line's round trip between the cores took 65 ns, the
//! 210-box pyramid stepped in 0.48 ms on two threads and 0.69 ms on one; while it took 330 ns,
//! in 1.27 ms on two threads, and still 0.69 ms on one. Machines whose cores sit on separate
//! dies or sockets are the same in kind.
//!
//! So by default ([`PoolUse::Faster`]) a world times its steps and runs them the faster way. It
//! steps the way it has settled on and, after [`FIRST_TRIAL_AFTER`] such steps, once its last
//! [`RECENT`] steps are steady (the slowest within [`STEADY_SPREAD`] times the fastest: not while
//! a pile is landing), tries the other way for [`TRIAL_STEPS`] steps. The first of them is not
//! timed: it pays for moving the world's arrays to the other thread's cache (measured where the
//! cores are far apart: the 1000 balls' first step on one thread after shared ones took 2.9 ms,
//! the next 1.5 ms, then 1.35 ms). The median of the others is the trial's time, and the world
//! settles on the other way when that is under [`SWITCH_BELOW`] of the median of the settled
//! way's last [`RECENT`] steps. Medians and the margin are chosen against the noise of step
//! times, which change with what the bodies do (a pile's landing steps vary threefold from one
//! step to the next): a trial must be faster on most of its steps, and a burst of slow settled
//! steps does not move their median. Each trial that loses doubles the wait before the next, up
//! to [`LAST_TRIAL_AFTER`] steps, and a switch starts the waits over. A wrong choice lasts until
//! the next trial, and once settled the trials are under 2 percent of the steps.
//!
//! Either way the results are the same bits: every stage gives the same bits whatever the thread
//! count (the determinism tests), so this changes only how long a step takes.

use std::sync::Arc;
use std::time::Instant;

use smallvec::SmallVec;

/// How [`crate::World::step`] uses the threads of the rayon pool it runs in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PoolUse {
    /// Each step runs the way its recent steps ran faster: sharing its work among the pool's
    /// threads, or on one thread (see the module docs for how it is measured). A step with too
    /// few moving bodies to share work at all, or one in a pool of one thread, runs where it is
    /// called.
    #[default]
    Faster,
    /// Every step shares its work among the pool's threads.
    Shared,
    /// Every step runs on one thread: a pool of one thread the world makes for it (if the
    /// operating system refuses the thread, the step runs where it is called).
    ///
    /// [`PoolUse::Faster`] makes that pool too, the first time it tries one thread. It lives as
    /// long as the world.
    OneThread,
}

/// How one step ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Way {
    /// In the pool it was called in, its work shared among the pool's threads.
    #[default]
    Shared,
    /// On the world's one-thread pool.
    OneThread,
}

impl Way {
    fn other(self) -> Self {
        match self {
            Way::Shared => Way::OneThread,
            Way::OneThread => Way::Shared,
        }
    }
}

/// Settled steps before the first trial of the other way, and after a switch.
pub const FIRST_TRIAL_AFTER: u32 = 30;

/// The longest wait between trials, settled steps (8 s of steps at 30 Hz).
pub const LAST_TRIAL_AFTER: u32 = 240;

/// Steps of one trial of the other way; the first is not timed.
pub const TRIAL_STEPS: u32 = 4;

/// A trial wins when the median of its timed steps is less than this fraction of the settled
/// way's median step. Sharing a step's work is about 1.5 times as fast as one thread where the
/// cores are near (the 210-box pyramid, the 1000-box pile and the 1000 balls on two threads of
/// this machine kind), so a wrong switch needs two of three trial steps 1.6 times faster than
/// they should be, right after nine steady ones: in 7 rounds of the four peer scenes and 3 of
/// the 30 Hz pile and the 60 Hz random pile, two worlds each, no step but the trials' ran on
/// one thread. Where the cores are far apart, one thread took 0.54 (pyramid), 0.78 (balls) and
/// 0.84 (pile at 60 Hz) of the shared step's time; at 0.85 the balls did not switch (1.64 ms a
/// step), at 0.9 they do (1.39 ms).
pub const SWITCH_BELOW: f64 = 0.9;

/// The settled way's last steps whose median a trial is measured against.
pub const RECENT: usize = 9;

/// A trial starts only while the slowest of the settled way's last [`RECENT`] steps took at most
/// this many times the fastest. Measured on the 1000-box pile at 60 Hz: a trial while it landed
/// (steps from 1 to 4 ms, one to the next) fell on quiet steps, won against the median of busy
/// ones, and left one run in three on one thread until the next trial, 1.5 times slower.
pub const STEADY_SPREAD: f64 = 1.5;

/// A world's choice between the two ways of stepping, and what it measured of them.
#[derive(Debug, Default)]
pub(crate) struct PoolChoice {
    /// The way steps run between trials.
    settled: Way,
    /// The settled way's last timed steps, s: a ring of [`RECENT`], `timed` of them written.
    recent: [f64; RECENT],
    timed: usize,
    /// Settled steps since the last trial ended (or since the choice began).
    since_trial: u32,
    /// Trials lost since the last switch (or since the choice began): each doubles the wait.
    losses: u32,
    /// Steps of the trial under way run so far (0: none under way).
    trial_steps: u32,
    /// The timed steps of the trial under way so far, s.
    trial_times: SmallVec<[f64; TRIAL_STEPS as usize]>,
    /// Whether the next settled step follows a trial: its time, paid partly for moving the
    /// world's arrays back to the settled way's thread, is not counted.
    after_trial: bool,
    /// The one-thread pool, made when first needed; `Some(None)` once making it failed.
    one_thread: Option<Option<Arc<rayon::ThreadPool>>>,
}

impl PoolChoice {
    /// Runs `step` the way `pool_use` asks for; `shares` says whether the step has enough moving
    /// bodies to share work at all (without, [`PoolUse::Faster`] runs it where it is called,
    /// untimed). Returns its result and how many threads its work could be shared among. A
    /// step that fails is not timed (it may have stopped early).
    pub(crate) fn run<T: Send, E: Send>(
        &mut self,
        pool_use: PoolUse,
        shares: bool,
        step: impl FnOnce() -> Result<T, E> + Send,
    ) -> (Result<T, E>, usize) {
        let choosing = pool_use == PoolUse::Faster && shares && rayon::current_num_threads() >= 2;
        let way = match pool_use {
            PoolUse::Shared => Way::Shared,
            PoolUse::OneThread => Way::OneThread,
            PoolUse::Faster if choosing => self.next(),
            PoolUse::Faster => Way::Shared,
        };
        let pool = match way {
            Way::OneThread => self.one_thread_pool(),
            Way::Shared => None,
        };
        let started = Instant::now();
        let (result, threads) = match pool {
            Some(pool) => (pool.install(step), 1),
            // Also a one-thread step whose pool could not be made.
            None => (step(), rayon::current_num_threads()),
        };
        if choosing && result.is_ok() {
            let ran = if threads == 1 { Way::OneThread } else { Way::Shared };
            self.record(ran, started.elapsed().as_secs_f64());
        }
        (result, threads)
    }

    /// The way the next step of [`PoolUse::Faster`] runs.
    fn next(&self) -> Way {
        if self.trial_steps > 0 || (self.since_trial >= self.wait() && self.steady()) {
            self.settled.other()
        } else {
            self.settled
        }
    }

    /// Takes note that a step of [`PoolUse::Faster`] ran `way` in `seconds`.
    fn record(&mut self, way: Way, seconds: f64) {
        if way == self.settled {
            self.since_trial += 1;
            if !std::mem::take(&mut self.after_trial) {
                self.recent[self.timed % RECENT] = seconds;
                self.timed += 1;
            }
            return;
        }
        self.trial_steps += 1;
        if self.trial_steps > 1 {
            self.trial_times.push(seconds);
        }
        if self.trial_steps < TRIAL_STEPS {
            return;
        }
        // The trial's last step.
        let trial = median(&mut self.trial_times).unwrap_or(f64::INFINITY);
        self.trial_times.clear();
        self.trial_steps = 0;
        self.since_trial = 0;
        if self
            .settled_median()
            .is_some_and(|settled| trial < SWITCH_BELOW * settled)
        {
            self.settled = way;
            self.recent[0] = trial;
            self.timed = 1;
            self.losses = 0;
            self.after_trial = false;
        } else {
            self.losses = self.losses.saturating_add(1);
            self.after_trial = true;
        }
    }

    /// Settled steps to wait before the next trial: [`FIRST_TRIAL_AFTER`], doubled for each trial
    /// lost since the last switch, up to [`LAST_TRIAL_AFTER`].
    fn wait(&self) -> u32 {
        // Four doublings already pass the longest wait; the shift stays far from overflow.
        (FIRST_TRIAL_AFTER << self.losses.min(4)).min(LAST_TRIAL_AFTER)
    }

    /// Whether the settled way's last [`RECENT`] steps were timed and are steady.
    fn steady(&self) -> bool {
        let recent = &self.recent[..self.timed.min(RECENT)];
        let fastest = recent.iter().copied().fold(f64::INFINITY, f64::min);
        let slowest = recent.iter().copied().fold(0.0, f64::max);
        recent.len() == RECENT && slowest <= STEADY_SPREAD * fastest
    }

    /// The median of the settled way's last timed steps, s (`None` before the first).
    fn settled_median(&self) -> Option<f64> {
        let mut times: SmallVec<[f64; RECENT]> = self.recent[..self.timed.min(RECENT)].iter().copied().collect();
        median(&mut times)
    }

    /// The world's one-thread pool, made on first use; `None` if it cannot be made.
    fn one_thread_pool(&mut self) -> Option<Arc<rayon::ThreadPool>> {
        self.one_thread
            .get_or_insert_with(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(|_| "shatter-one-thread".to_string())
                    .build()
                    .ok()
                    .map(Arc::new)
            })
            .clone()
    }

    /// The way steps run between trials now.
    #[cfg(test)]
    pub(crate) fn settled(&self) -> Way {
        self.settled
    }
}

/// The median of `times` (the upper one of an even count), s; `None` for none.
fn median(times: &mut [f64]) -> Option<f64> {
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps `choice` `steps` times, each taking the seconds `time` gives for the way it runs;
    /// returns the ways in order.
    fn drive(choice: &mut PoolChoice, steps: usize, mut time: impl FnMut(Way) -> f64) -> Vec<Way> {
        (0..steps)
            .map(|_| {
                let way = choice.next();
                choice.record(way, time(way));
                way
            })
            .collect()
    }

    /// Where one thread is faster by more than the margin, the first trial switches to it, and
    /// it stays there while it stays faster; where the two are within the margin nothing
    /// switches; and when sharing becomes faster again, the next trial switches back.
    #[test]
    fn pool_use_choice_settles_on_the_faster_way_and_follows_a_change() {
        let mut choice = PoolChoice::default();
        let slow_sharing = |way| if way == Way::Shared { 1.27e-3 } else { 0.69e-3 };
        let ways = drive(&mut choice, 40, slow_sharing);
        let (first_trial, trial) = (FIRST_TRIAL_AFTER as usize, TRIAL_STEPS as usize);
        assert!(ways[..first_trial].iter().all(|&w| w == Way::Shared));
        assert!(ways[first_trial..].iter().all(|&w| w == Way::OneThread), "{ways:?}");
        assert_eq!(choice.settled(), Way::OneThread);

        // Sharing stays slower: the trials of it lose, each wait twice the last.
        let ways = drive(&mut choice, 400, slow_sharing);
        assert_eq!(choice.settled(), Way::OneThread);
        let trials: Vec<usize> = (1..ways.len())
            .filter(|&k| ways[k] == Way::Shared && ways[k - 1] == Way::OneThread)
            .collect();
        let gaps: Vec<usize> = trials.windows(2).map(|pair| pair[1] - pair[0] - trial).collect();
        assert_eq!(trials.len(), 3, "trials at {trials:?}");
        assert_eq!(gaps, [60, 120], "settled steps between trials");

        // Sharing becomes faster: the next trial switches back.
        let fast_sharing = |way| if way == Way::Shared { 0.48e-3 } else { 0.69e-3 };
        drive(&mut choice, LAST_TRIAL_AFTER as usize + trial, fast_sharing);
        assert_eq!(choice.settled(), Way::Shared);

        // Within the margin: no switch, however many trials.
        let close = |way| if way == Way::Shared { 1.0e-3 } else { 0.95e-3 };
        drive(&mut choice, 2000, close);
        assert_eq!(choice.settled(), Way::Shared);
    }

    /// The trial's first step is not timed (it moves the world's arrays between threads) and the
    /// median of its others is its time: a trial whose first step alone is slow wins, and so
    /// does one with one slow step among the timed ones; one with two slow timed steps loses.
    /// A burst of slow settled steps does not move the median a trial is measured against: a
    /// trial hardly faster than the settled way's usual steps loses after it.
    #[test]
    fn pool_use_choice_times_the_trials_median_step_after_its_first() {
        let trials = [
            ([5e-3, 0.5e-3, 0.5e-3, 0.5e-3], true),
            ([0.5e-3, 0.5e-3, 5e-3, 0.5e-3], true),
            ([0.5e-3, 0.5e-3, 5e-3, 5e-3], false),
            ([0.5e-3, 5e-3, 0.5e-3, 5e-3], false),
        ];
        for (steps, wins) in trials {
            let mut choice = PoolChoice::default();
            drive(&mut choice, FIRST_TRIAL_AFTER as usize, |_| 1e-3);
            for seconds in steps {
                assert_eq!(choice.next(), Way::OneThread);
                choice.record(Way::OneThread, seconds);
            }
            let expected = if wins { Way::OneThread } else { Way::Shared };
            assert_eq!(choice.settled(), expected, "trial steps {steps:?} s against 1 ms");
        }

        let mut choice = PoolChoice::default();
        let mut times = vec![1e-3; FIRST_TRIAL_AFTER as usize - 3];
        times.extend([1.5e-3; 3]);
        for seconds in times {
            assert_eq!(choice.next(), Way::Shared);
            choice.record(Way::Shared, seconds);
        }
        let ways = drive(&mut choice, TRIAL_STEPS as usize, |_| 0.98e-3);
        assert!(ways.iter().all(|&way| way == Way::OneThread), "the trial: {ways:?}");
        assert_eq!(
            choice.settled(),
            Way::Shared,
            "a 0.98 ms trial after three 1.5 ms steps"
        );
    }

    /// No trial starts while the settled way's steps are unsteady (a landing pile's), however
    /// long that lasts; the first starts once its last steps are steady again.
    #[test]
    fn pool_use_choice_waits_for_steady_steps_to_try() {
        let mut choice = PoolChoice::default();
        let mut step = 0;
        let ways = drive(&mut choice, 200, |_| {
            step += 1;
            if step % 5 == 0 { 2e-3 } else { 1e-3 }
        });
        assert!(ways.iter().all(|&way| way == Way::Shared), "a trial while unsteady");
        let ways = drive(&mut choice, 20, |way| if way == Way::Shared { 1e-3 } else { 0.5e-3 });
        let first = ways.iter().position(|&way| way == Way::OneThread);
        assert_eq!(first, Some(RECENT), "the first trial: {ways:?}");
        assert_eq!(choice.settled(), Way::OneThread);
    }
}
