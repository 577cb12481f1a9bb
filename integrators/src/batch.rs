//! Many independent bodies at once: the data-parallel form of [`crate::integrate()`].
//!
//! Bodies are split into chunks for rayon; inside a chunk, runs of dynamic bodies go through the
//! lane kernel of [`crate::lanes`] four at a time. On x86-64 machines with AVX2 the chunk loop is
//! compiled a second time with AVX2 enabled and chosen at run time. The two versions give the same
//! bits: both use only correctly rounded IEEE operations (no fused multiply-add, which would round
//! differently), and AVX2 only changes how many lanes one instruction carries.

use core::array::from_fn;

use rayon::prelude::*;

use crate::energy_fix::EnergyFixOutcome;
use crate::error::IntegratorError;
use crate::integrate::{
    IntegrationSettings, LaneResult, advance_dynamic_lanes, advance_validated, validate_body, validate_time_step,
};
use crate::mass::MassProperties;
use crate::state::{BodyKind, RigidState};

/// Counts of what the energy fix did over a batch of bodies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnergyFixTally {
    /// Bodies rotated about the primary axis `L x w`.
    pub primary: usize,
    /// Bodies rotated about a fallback axis `L x r_max` or `L x r_min`.
    pub fallback: usize,
    /// Bodies left alone: error at round-off or energy negligible.
    pub skipped: usize,
    /// Bodies whose target energy was out of reach (round-off only); left alone.
    pub unreachable: usize,
}

impl EnergyFixTally {
    pub(crate) fn record(mut self, outcome: Option<EnergyFixOutcome>) -> Self {
        use crate::energy_fix::FixAxis;
        match outcome {
            Some(EnergyFixOutcome::Rotated {
                axis: FixAxis::Primary, ..
            }) => self.primary += 1,
            Some(EnergyFixOutcome::Rotated { .. }) => self.fallback += 1,
            Some(EnergyFixOutcome::Unreachable { .. }) => self.unreachable += 1,
            Some(_) => self.skipped += 1,
            None => {}
        }
        self
    }

    fn merge(self, other: Self) -> Self {
        Self {
            primary: self.primary + other.primary,
            fallback: self.fallback + other.fallback,
            skipped: self.skipped + other.skipped,
            unreachable: self.unreachable + other.unreachable,
        }
    }
}

/// A batch integration failed at body `index`.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchError {
    /// Index of the first offending body in the slices given.
    pub index: usize,
    /// What was wrong with it.
    pub error: IntegratorError,
}

impl core::fmt::Display for BatchError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "body {}: {}", self.index, self.error)
    }
}

impl std::error::Error for BatchError {}

/// Bodies per rayon task in [`integrate_batch`], a multiple of [`LANES`]: about 7 us of work,
/// enough to amortize scheduling, and small enough that a 1000-body world is shared among threads.
/// Measured on two threads with the pool's threads kept looking for work during the step (the
/// engine's step does): the integrate stage of the 1000-box pile at 30 Hz took 98-100 us with 256
/// bodies per task and 110-112 us with 1024 (which keeps it on one thread); without the threads
/// kept awake, waking one cost more than it saved (150 us with 256).
const BATCH_CHUNK: usize = 256;

/// Dynamic bodies advanced in lock step by [`integrate_batch`] (see [`crate::lanes`]): two AVX
/// registers per value. Eight lanes measured 30 percent faster than four (two independent
/// dependency chains hide the latency of square roots and divisions); sixteen spill registers and
/// run at half the speed of eight.
const LANES: usize = 8;

/// Advances many independent bodies by `dt` seconds on the current rayon pool.
///
/// `states`, `masses` and `kinds` are parallel arrays. Every body is checked first; if any is
/// invalid, the error names the lowest such index and nothing changes. A body whose update would
/// overflow (finite but absurd velocities) is left unchanged and reported the same way, the
/// others having moved. Results do not depend on the thread count.
///
/// # Panics
///
/// If the three slices differ in length (a programming error, not bad data).
pub fn integrate_batch(
    states: &mut [RigidState],
    masses: &[MassProperties],
    kinds: &[BodyKind],
    dt: f64,
    settings: &IntegrationSettings,
) -> Result<EnergyFixTally, BatchError> {
    integrate_batch_with(states, masses, kinds, dt, settings, Kernel::Fastest)
}

/// Which compiled version of the batch loop runs. Both give bit-identical results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// The fastest version this machine supports (AVX2 on x86-64 when present).
    #[default]
    Fastest,
    /// The version built for the baseline instruction set, on every machine.
    Portable,
}

/// [`integrate_batch`] with an explicit choice of compiled kernel (to compare them, or to rule
/// one out while debugging).
///
/// # Panics
///
/// If the three slices differ in length (a programming error, not bad data).
pub fn integrate_batch_with(
    states: &mut [RigidState],
    masses: &[MassProperties],
    kinds: &[BodyKind],
    dt: f64,
    settings: &IntegrationSettings,
    kernel: Kernel,
) -> Result<EnergyFixTally, BatchError> {
    assert!(
        states.len() == masses.len() && states.len() == kinds.len(),
        "integrate_batch: states, masses and kinds must have the same length"
    );
    validate_time_step(dt).map_err(|error| BatchError { index: 0, error })?;
    let first_bad = states
        .par_chunks(BATCH_CHUNK)
        .zip(masses.par_chunks(BATCH_CHUNK).zip(kinds.par_chunks(BATCH_CHUNK)))
        .enumerate()
        .filter_map(|(chunk, (states, (masses, kinds)))| {
            let valid = |((state, mass), kind): ((&RigidState, &MassProperties), &BodyKind)| {
                state.is_valid() && !(*kind == BodyKind::Dynamic && mass.is_infinite())
            };
            let offset = states.iter().zip(masses).zip(kinds).position(|body| !valid(body))?;
            Some(chunk * BATCH_CHUNK + offset)
        })
        .min();
    if let Some(index) = first_bad {
        let error = validate_body(&states[index], &masses[index], kinds[index]).expect_err("found invalid above");
        return Err(BatchError { index, error });
    }

    let kernel = kernel.resolve();
    let results: Vec<(EnergyFixTally, Option<BatchError>)> = states
        .par_chunks_mut(BATCH_CHUNK)
        .zip(masses.par_chunks(BATCH_CHUNK).zip(kinds.par_chunks(BATCH_CHUNK)))
        .enumerate()
        .map(|(chunk, (states, (masses, kinds)))| {
            let chunk = Chunk {
                states,
                masses,
                kinds,
                first_index: chunk * BATCH_CHUNK,
            };
            kernel.run(chunk, dt, settings)
        })
        .collect();
    let mut tally = EnergyFixTally::default();
    for (chunk_tally, failure) in results {
        if let Some(failure) = failure {
            return Err(failure);
        }
        tally = tally.merge(chunk_tally);
    }
    Ok(tally)
}

/// One rayon task's share of the bodies.
struct Chunk<'a> {
    states: &'a mut [RigidState],
    masses: &'a [MassProperties],
    kinds: &'a [BodyKind],
    /// Index of the chunk's first body in the whole batch.
    first_index: usize,
}

/// A compiled version of the chunk loop that this machine can run.
#[derive(Clone, Copy, Debug)]
enum ResolvedKernel {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Kernel {
    fn resolve(self) -> ResolvedKernel {
        #[cfg(target_arch = "x86_64")]
        if self == Kernel::Fastest && std::arch::is_x86_feature_detected!("avx2") {
            return ResolvedKernel::Avx2;
        }
        ResolvedKernel::Portable
    }
}

impl ResolvedKernel {
    fn run(self, chunk: Chunk<'_>, dt: f64, settings: &IntegrationSettings) -> (EnergyFixTally, Option<BatchError>) {
        match self {
            ResolvedKernel::Portable => advance_chunk(chunk, dt, settings),
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: `Avx2` is only made by `Kernel::resolve`, after `is_x86_feature_detected!`
            // confirmed that this machine executes AVX2 instructions.
            ResolvedKernel::Avx2 => unsafe { advance_chunk_avx2(chunk, dt, settings) },
        }
    }
}

/// [`advance_chunk`] compiled with AVX2 enabled.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
fn advance_chunk_avx2(
    chunk: Chunk<'_>,
    dt: f64,
    settings: &IntegrationSettings,
) -> (EnergyFixTally, Option<BatchError>) {
    advance_chunk(chunk, dt, settings)
}

/// Advances one chunk of validated bodies: runs of four dynamic bodies through the lane kernel,
/// everything else one by one.
#[inline(always)]
fn advance_chunk(chunk: Chunk<'_>, dt: f64, settings: &IntegrationSettings) -> (EnergyFixTally, Option<BatchError>) {
    let mut tally = EnergyFixTally::default();
    let mut failure = None;
    let mut note = |index: usize, result: Result<Option<EnergyFixOutcome>, IntegratorError>| match result {
        Ok(outcome) => tally = tally.record(outcome),
        Err(error) => {
            if failure.is_none() {
                failure = Some(BatchError {
                    index: chunk.first_index + index,
                    error,
                });
            }
        }
    };
    let groups = chunk
        .states
        .chunks_mut(LANES)
        .zip(chunk.masses.chunks(LANES))
        .zip(chunk.kinds.chunks(LANES))
        .enumerate();
    for (group, ((states, masses), kinds)) in groups {
        let start = group * LANES;
        let lanes: Option<&mut [RigidState; LANES]> = states.try_into().ok();
        match lanes {
            Some(lanes) if kinds.iter().all(|k| *k == BodyKind::Dynamic) => {
                let results = advance_dynamic_lanes(lanes.each_mut(), from_fn(|i| &masses[i]), dt, settings);
                for (i, result) in results.into_iter().enumerate() {
                    match result {
                        LaneResult::Advanced(outcome) => note(start + i, Ok(outcome)),
                        overflow => note(start + i, overflow.into_result()),
                    }
                }
            }
            _ => {
                for (i, ((state, mass), kind)) in states.iter_mut().zip(masses).zip(kinds).enumerate() {
                    note(start + i, advance_validated(state, mass, *kind, dt, settings));
                }
            }
        }
    }
    (tally, failure)
}
