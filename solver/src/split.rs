//! Split impulses: penetration correction on pseudo velocities that move positions only.
//!
//! # Why not Baumgarte for contacts
//!
//! A Baumgarte bias `-ERP phi / h` in the velocity solve turns position error into real velocity:
//! a penetrated box leaves the ground with kinetic energy it never had ("popping"), and that energy
//! survives the step. Worse, it fights the energy clamp of Su 2009 section 3.2 (clamp.rs): on a
//! resting contact the velocity solve has already reached `J v = 0`, so the extra push `delta > 0`
//! has `P = delta J v = 0`, and the clamp drops it: an energy-clamped Baumgarte contact would never
//! push a resting penetration out. The clamp cannot tell a position fix from energy gain.
//!
//! So rows in [`BiasMode::Split`](crate::row::BiasMode::Split) split the work (Catto's split
//! impulses, as in Bullet and Box2D v2.x's position pass, but at velocity level):
//! - the velocity solve aims only at `J v >= -max(phi, 0) / h` (a speculative gap may close, nothing
//!   more), energy-clamped, and its impulses are the physical ones the fracture methods read;
//! - a second projected Gauss-Seidel solve over pseudo velocities `u` (zero at the start of every
//!   step, never warm-started) aims at `J u + (CFM / h) lambda_s = min(-ERP min(phi, 0) / h,
//!   max_split_velocity)` (zero where that is no larger than the sweeps' tolerance: round-off of
//!   the depth), with the row's own bounds (`[0, inf)` for contacts, so it only pushes);
//! - the integrator moves positions by `(v + u) h` and keeps `v`: the correction removes
//!   `ERP * depth` per step and leaves no velocity behind.
//!
//! Only split rows (and never friction rows) take part, so joints do not constrain the pseudo
//! velocities; a joint disturbed by a contact's position correction is restored by its own
//! Baumgarte bias next step. The pass is not energy-clamped: pseudo velocities carry no kinetic
//! energy.

use crate::body::{SlotMass, SplitVelocity};
use crate::head::RowHead;
use crate::lanes::{LANES, LaneBatches, LaneIsland, Pass, WIDE_RUNS};
use crate::pgs::{Prepared, clamp};
use crate::settings::SolverSettings;
use crate::shock::{ShockOrder, ShockScratch};
use crate::twist::Twist;

/// The result of the split pass.
pub(crate) struct SplitOutcome {
    /// Sweeps run.
    pub(crate) iterations: usize,
    /// Largest change in the last sweep, m/s.
    pub(crate) residual: f64,
    /// Pseudo velocities per body (the world slot removed).
    pub(crate) velocities: Vec<SplitVelocity>,
}

/// The split pass's arrays, kept in the solver workspace between solves, and where the pass of
/// the current solve stands.
#[derive(Default)]
pub(crate) struct SplitBuffers {
    /// Pseudo velocity per slot (the last is the world).
    pub(crate) pseudo: Vec<Twist>,
    /// `(first, end)` of each run of split rows between one body pair.
    pub(crate) runs: Vec<(usize, usize)>,
    /// Split impulse per row, N s.
    pub(crate) lambdas: Vec<f64>,
    /// Whether any split row has something to correct (otherwise no sweep runs and every pseudo
    /// velocity stays exactly zero).
    pub(crate) work: bool,
    /// Sweeps run so far and the residual of the last, m/s.
    pub(crate) iterations: usize,
    pub(crate) residual: f64,
    /// The runs in batches, for an island swept alone.
    lanes: LaneBatches,
    /// The shock pass's memory for this pass.
    shock: ShockScratch,
}

impl SplitBuffers {
    /// The island's split rows (of its `prepared` rows with their `heads`) as a part in batches
    /// shared with other islands (together.rs).
    pub(crate) fn lane_island<'a>(
        &'a self,
        (prepared, heads): (&'a [Prepared], &'a [RowHead]),
        slot_offset: usize,
    ) -> LaneIsland<'a> {
        LaneIsland {
            pass: Pass::Split,
            prepared,
            heads,
            runs: &self.runs,
            slot_offset,
            pair_offset: 0,
        }
    }
}

/// Starts the split pass over the prepared rows (by their `heads`) for `world` bodies: pseudo
/// velocities and split impulses at zero, the runs of split rows (active, not friction, with a
/// split target) between one body pair. Where `kept` says the rows have the structure of the
/// last solve in the workspace (structure.rs), its runs stand. Returns whether there is anything
/// to correct.
pub(crate) fn start_split(heads: &[RowHead], world: usize, buffers: &mut SplitBuffers, kept: bool) -> bool {
    buffers.pseudo.clear();
    buffers.pseudo.resize(world + 1, Twist::default());
    buffers.lambdas.clear();
    buffers.lambdas.resize(heads.len(), 0.0);
    buffers.iterations = 0;
    buffers.residual = 0.0;
    if kept {
        buffers.work = heads.iter().any(|row| row.is_split() && row.pushes());
        return buffers.work;
    }
    buffers.runs.clear();
    buffers.work = false;
    for (index, row) in heads.iter().enumerate() {
        if !row.is_split() {
            continue;
        }
        buffers.work |= row.pushes();
        match buffers.runs.last_mut() {
            Some((start, end)) if *end == index && heads[*start].a() == row.a() && heads[*start].b() == row.b() => {
                *end += 1;
            }
            _ => buffers.runs.push((index, index + 1)),
        }
    }
    buffers.work
}

/// Builds the batches of an island's split sweeps on its own (lanes.rs) over its prepared rows
/// and their heads, dealt as the velocity sweeps deal theirs: `immovable` slots, the shock
/// order's contact `levels`. Only for an island whose split sweeps run in batches
/// ([`sweeps_in_lanes`]); the sweeps themselves are [`sweep_split_alone`]'s, right after. Where
/// `dealt` says the batches were dealt for rows of this structure (structure.rs), only their rows
/// are written; otherwise they are dealt and `dealt` set.
pub(crate) fn build_split_batches(
    rows: (&[Prepared], &[RowHead]),
    settings: &SolverSettings,
    buffers: &mut SplitBuffers,
    (immovable, levels, dealt): (&[bool], Option<&[u32]>, &mut bool),
) {
    if !sweeps_in_lanes(buffers, settings) {
        return;
    }
    let mut lanes = core::mem::take(&mut buffers.lanes);
    let island = buffers.lane_island(rows, 0);
    if *dealt {
        lanes.fill_planned(&island);
    } else {
        lanes.build_alone(&island, immovable, levels, buffers.pseudo.len() - 1);
        *dealt = true;
    }
    buffers.lanes = lanes;
}

/// Whether an island's split sweeps on its own run in batches. A small island alone fills one
/// lane per batch: row by row is the same arithmetic in the same order (lanes.rs), without
/// building the batches.
fn sweeps_in_lanes(buffers: &SplitBuffers, settings: &SolverSettings) -> bool {
    buffers.work && settings.split_iterations > 0 && buffers.runs.len() >= WIDE_RUNS
}

/// The split sweeps of an island on its own, over the slots' `M^-1` (`masses`): in the batches
/// [`build_split_batches`] built, or row by row.
pub(crate) fn sweep_split_alone(
    prepared: &[Prepared],
    settings: &SolverSettings,
    buffers: &mut SplitBuffers,
    masses: &[SlotMass],
) {
    if !buffers.work || settings.split_iterations == 0 {
        return;
    }
    let in_lanes = sweeps_in_lanes(buffers, settings);
    let SplitBuffers {
        pseudo,
        runs,
        lambdas,
        iterations,
        residual,
        lanes,
        ..
    } = buffers;
    if in_lanes {
        lanes.load_lambdas(|_| lambdas);
    }
    for _ in 0..settings.split_iterations {
        *residual = if in_lanes {
            let sweep = lanes.sweep(pseudo, masses, &mut [], [true; LANES]);
            sweep.residual.into_iter().fold(0.0, f64::max)
        } else {
            sweep_split_rows((prepared, masses), runs, pseudo, lambdas)
        };
        *iterations += 1;
        if *residual <= settings.tolerance {
            break;
        }
    }
    if in_lanes {
        lanes.scatter(None, lambdas);
    }
}

/// One split sweep over `runs`, row by row, over the slots' `M^-1` (`masses`): updates the pseudo
/// velocities and split impulses and returns the largest `|delta| * diagonal` (m/s).
pub(crate) fn sweep_split_rows(
    (prepared, masses): (&[Prepared], &[SlotMass]),
    runs: &[(usize, usize)],
    pseudo: &mut [Twist],
    lambdas: &mut [f64],
) -> f64 {
    let mut residual: f64 = 0.0;
    for index in runs.iter().flat_map(|&(start, end)| start..end) {
        let (row, lambda) = (&prepared[index], &mut lambdas[index]);
        let target = row.split_target().unwrap_or(0.0);
        let ju = row.relative_velocity(pseudo);
        let wanted = (target - ju - row.cfm_over_h * *lambda) * row.inverse_diagonal;
        let delta = clamp(*lambda + wanted, row.lower(), row.upper) - *lambda;
        if delta != 0.0 {
            *lambda += delta;
            row.apply(masses, pseudo, delta);
        }
        residual = residual.max(delta.abs() * row.diagonal());
    }
    residual
}

/// Ends the split pass after its sweeps: with `shock`, a shock-propagation pass (shock.rs)
/// follows them, so that a stack's penetration is pushed out from the ground up rather than one
/// contact per sweep; `share` says whether that pass may hand groups to the pool (not while the
/// velocity solve runs beside it, shock.rs). Returns the pseudo velocities of the `world` bodies.
/// `masses` are the slots' `M^-1`.
pub(crate) fn finish_split(
    (prepared, masses): (&[Prepared], &[SlotMass]),
    world: usize,
    settings: &SolverSettings,
    (shock, share): (Option<&ShockOrder>, bool),
    buffers: &mut SplitBuffers,
) -> SplitOutcome {
    let SplitBuffers {
        pseudo,
        lambdas,
        shock: scratch,
        work,
        iterations,
        residual,
        ..
    } = buffers;
    if *work
        && !settings.converged(*iterations, *residual)
        && let Some(order) = shock.filter(|_| settings.split_iterations > 0)
    {
        for _ in 0..settings.shock_sweeps {
            order.sweep_split(
                scratch,
                prepared,
                lambdas,
                (&mut pseudo[..], masses),
                (settings.split_shock_iterations, settings.tolerance),
                share,
            );
        }
    }
    SplitOutcome {
        iterations: *iterations,
        residual: *residual,
        velocities: pseudo[..world]
            .iter()
            .map(|twist| SplitVelocity {
                linear: twist.linear(),
                angular: twist.angular(),
            })
            .collect(),
    }
}
