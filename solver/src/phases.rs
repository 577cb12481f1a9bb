//! One island's solve in two phases, so that several islands can share their sweeps.
//!
//! [`start`] validates the input, prepares the rows, warm starts, finds the runs of rows between
//! one body pair and, for an island swept on its own in batches, builds the velocity sweeps'
//! batches; [`finish`] runs the island's own sweeps (unless they were run together with other
//! islands, together.rs; the split sweeps' batches are built there, beside the velocity sweeps),
//! the shock pass and the load pass (loads.rs; both skipped when the sweeps converged), the
//! split pass, and writes the results back.
//! [`solve_with`](crate::pgs::solve_with) is the two in a row.

use crate::body::{SlotMass, SolverBody, fill_slot_velocities};
use crate::error::SolverError;
use crate::free_rows::Accuracy;
use crate::head::RowHead;
use crate::joint_block::JointBlock;
use crate::lanes::{LANES, LaneBatches, LaneIsland, Pass, WIDE_RUNS, runs_are_regular};
use crate::loads::{all_slower_than, resting};
use crate::pgs::{Prepared, assign_pairs, prepare, sweep_rows};
use crate::row::Row;
use crate::settings::{SolveReport, SolverSettings};
use crate::shock::{Frozen, ShockOrder, ShockScratch};
use crate::split::{build_split_batches, finish_split, start_split, sweep_split_alone};
use crate::twist::Twist;
use crate::warm_start::warm_start;
use crate::workspace::SolverWorkspace;
use core::sync::atomic::{AtomicBool, Ordering};
use rayon::prelude::*;

/// Rows from which a solve shares its work among threads where the result cannot depend on it:
/// the rows are checked and prepared in parallel and the split pass runs beside the velocity
/// solve. Below this the work is too short to pay for handing it to another thread.
const PARALLEL_ISLAND_ROWS: usize = 256;

/// Validates the bodies, rows, `dt` and settings (the bodies and rows are left as they are on an
/// error), prepares the rows in `workspace`, applies the warm start, lists the runs of swept rows
/// and builds the velocity sweeps' batches of an island swept on its own. Returns the report so
/// far.
pub(crate) fn start(
    workspace: &mut SolverWorkspace,
    bodies: &[SolverBody],
    rows: &[Row],
    dt: f64,
    settings: &SolverSettings,
) -> Result<SolveReport, SolverError> {
    if !(dt.is_finite() && dt > 0.0) {
        return Err(SolverError::InvalidTimeStep { dt });
    }
    settings.validate()?;
    for (index, body) in bodies.iter().enumerate() {
        body.validate(index)?;
    }
    let (body_count, row_count) = (bodies.len(), rows.len());
    // A friction row bounded by another friction row, if any: the first such row and that row.
    let friction_on_friction = |index: usize, row: &Row| {
        row.friction
            .and_then(|friction| friction.normal_rows().find(|&n| rows[n].friction.is_some()))
            .map(|normal| (index, normal))
    };
    let plainly_valid = |(index, row): (usize, &Row)| {
        row.plainly_valid(index, body_count, row_count, settings.warm_start)
            && friction_on_friction(index, row).is_none()
    };

    let SolverWorkspace {
        prepared,
        heads,
        budgets,
        pairs,
        velocities,
        masses,
        lambdas,
        warm,
        warm_scratch,
        runs,
        lanes,
        batched,
        immovable,
        shock,
        split,
        structure,
        ..
    } = workspace;
    // Each row is checked and prepared on its own (`prepare` takes any row, valid or not), so a
    // large island shares the work among threads: the same rows in the same order either way,
    // each read once. Each row's head (head.rs) is read off it at once. Only whether every row
    // passes is kept; the first error is then found in row order on one thread, and what was
    // prepared is dropped. On the pool the rows are prepared into the places the last solve
    // left (only new places are made): collected from the pool instead, each prepared row was
    // copied once more after it was built, 4 percent of the 210-box pyramid's step on one thread.
    let valid = AtomicBool::new(true);
    // Each energy-clamped row's pair number as the structure last solved here had it (the same
    // numbers `assign_pairs` gives it below if the structure is still that one); the others'
    // pair is 0, as `assign_pairs` leaves it.
    let remembered_pair = |index: usize, head: &RowHead| {
        if head.clamped() {
            structure.remembered_pair(index)
        } else {
            0
        }
    };
    let prepare_one = |(index, row): (usize, &Row)| {
        if !plainly_valid((index, row)) {
            valid.store(false, Ordering::Relaxed);
        }
        prepare(row, bodies, dt, settings)
    };
    if rows.len() >= PARALLEL_ISLAND_ROWS {
        prepared.resize(rows.len(), Prepared::unset());
        heads.resize(rows.len(), RowHead::default());
        (prepared.par_iter_mut().zip(heads.par_iter_mut()))
            .zip(rows.par_iter().enumerate())
            .for_each(|((out, head), (index, row))| {
                *out = prepare_one((index, row));
                *head = RowHead::of(out);
                out.set_pair(remembered_pair(index, head));
            });
    } else {
        // Prepared in place (a push of each would copy its few hundred bytes once more).
        prepared.clear();
        prepared.extend(rows.iter().enumerate().map(|(index, row)| {
            if !plainly_valid((index, row)) {
                valid.store(false, Ordering::Relaxed);
            }
            let mut out = prepare(row, bodies, dt, settings);
            out.set_pair(remembered_pair(index, &RowHead::of(&out)));
            out
        }));
        heads.clear();
        heads.extend(prepared.iter().map(RowHead::of));
    }
    if !valid.into_inner() {
        for (index, row) in rows.iter().enumerate() {
            row.validate(index, body_count, row_count, settings.warm_start)?;
        }
        if let Some((index, normal)) =
            (rows.iter().enumerate()).find_map(|(index, row)| friction_on_friction(index, row))
        {
            return Err(SolverError::row(
                index,
                "friction normal row",
                normal,
                "a row that is not itself a friction row",
            ));
        }
    }
    let heads = &heads[..];
    immovable.clear();
    immovable.extend(
        bodies
            .iter()
            .map(|body| !body.is_dynamic())
            .chain(core::iter::once(true)),
    );
    // Rows of the structure the last solve in this workspace had keep what was worked out from it
    // (structure.rs).
    let same = structure.same(heads, immovable, settings);
    // Energy removed so far by each body pair's clamped rows, J (clamp.rs): zero at the start.
    let pair_count = if same {
        structure.pair_count()
    } else {
        let count = assign_pairs(prepared, heads, pairs);
        structure.keep_pairs(prepared, count);
        count
    };
    budgets.clear();
    budgets.resize(pair_count, 0.0);
    fill_slot_velocities(bodies, velocities);
    SlotMass::fill(bodies, masses);
    lambdas.clear();
    lambdas.resize(rows.len(), 0.0);
    let mut report = SolveReport {
        inactive_rows: heads.iter().filter(|head| !head.active()).count(),
        ..SolveReport::default()
    };
    // The warm start reads the prepared rows and sets the impulses; everything else here reads
    // only the rows' heads: the shock order, then from its contact levels the velocity sweeps'
    // runs and the dealing of their batches. Where the structure changed the two go side by side,
    // and the split pass's start goes after the warm start, the shorter of them for a heap of
    // debris; otherwise only the warm start has work. The batches' rows (whose impulses are
    // loaded from the warm start's as the sweeps begin) are written after both. The split sweeps'
    // batches, which need the levels and the split runs, are built by the split pass itself
    // (`finish`), beside the velocity sweeps.
    let prepared = &prepared[..];
    let immovable = &immovable[..];
    let velocity_plan = &mut structure.velocity_plan;
    let mut order = || {
        // The same structure: the shock order, the runs and whether they are batched stand.
        if !same {
            if shock_on(settings) {
                shock.rebuild(heads, immovable);
            }
            list_runs(heads, runs);
            *batched = sweeps_in_lanes(heads, runs, settings);
        }
        if *batched && !*velocity_plan {
            let island = velocity_island(prepared, heads, runs);
            let levels = shock_on(settings).then(|| shock.levels());
            lanes.deal_alone(&island, immovable, levels, body_count);
            *velocity_plan = true;
        }
    };
    let report_ref = &mut report;
    let mut rest = || {
        if settings.warm_start {
            let slots = (&mut velocities[..], &masses[..]);
            warm_start(prepared, lambdas, slots, (warm, warm_scratch), budgets, report_ref);
        }
        start_split(heads, body_count, split, same);
    };
    // With the structure the same there is nothing to do beside the warm start: handed to another
    // thread, it ran on a core whose cache held half the rows it read, while this one waited
    // (pyramid on two threads, temporary timers: 105 us for the pair against 75 us of warm start;
    // median step 0.448 -> 0.439 ms over eleven interleaved rounds, calm machine).
    if rows.len() >= PARALLEL_ISLAND_ROWS && !same {
        shatter_integrators::parallel::join(order, rest);
    } else {
        order();
        rest();
    }
    // The batches' rows are written once the warm start is done, on the pool's threads (lanes.rs).
    // Written beside it, they held the pool's other thread through the warm start, which then ran
    // on a core whose cache did not hold the rows it read (on two threads the pyramid's warm start
    // took 103 us there against 54 us on one thread); median step on two threads with this, calm
    // machine, interleaved runs: pyramid 0.515 -> 0.502 ms, random pile at 30 Hz 6.98 -> 6.91 ms.
    if *batched {
        lanes.fill_planned(&velocity_island(prepared, heads, runs));
    }
    Ok(report)
}

/// The velocity pass's view of one island swept on its own: its prepared rows, their heads and
/// its runs, at offset zero.
fn velocity_island<'a>(prepared: &'a [Prepared], heads: &'a [RowHead], runs: &'a [(usize, usize)]) -> LaneIsland<'a> {
    LaneIsland {
        pass: Pass::Velocity,
        prepared,
        heads,
        runs,
        slot_offset: 0,
        pair_offset: 0,
    }
}

/// Lists the swept rows (by their `heads`) in `runs` between one pair of bodies (a contact
/// patch's rows are one run), so a sweep loads and stores the pair's velocities once per run
/// rather than once per row. The joints' rows are left to their block where there is one.
fn list_runs(heads: &[RowHead], runs: &mut Vec<(usize, usize)>) {
    let joints = heads.iter().any(RowHead::bilateral);
    runs.clear();
    for (index, row) in heads.iter().enumerate() {
        if !row.active() || (joints && row.bilateral()) {
            continue;
        }
        match runs.last_mut() {
            Some((start, end)) if *end == index && heads[*start].a() == row.a() && heads[*start].b() == row.b() => {
                *end += 1;
            }
            _ => runs.push((index, index + 1)),
        }
    }
}

/// Whether the shock pass runs.
fn shock_on(settings: &SolverSettings) -> bool {
    settings.shock_sweeps > 0 && settings.iterations > 0
}

/// Whether a started solve's sweeps can share batches with other islands' (together.rs): its
/// runs are few enough to be swept in their own order, all in batches, and no joint block sweeps
/// with them.
pub(crate) fn shareable(workspace: &SolverWorkspace, settings: &SolverSettings) -> bool {
    settings.iterations > 0
        && workspace.runs.len() < WIDE_RUNS
        && runs_are_regular(&workspace.heads, &workspace.runs)
        && !workspace.heads.iter().any(RowHead::bilateral)
}

/// Finishes a started solve: its own Gauss-Seidel sweeps of both passes unless `swept` (then
/// they ran together with other islands'), the shock pass, the split pass's shock pass; then
/// writes the velocities of the dynamic bodies and every row's `lambda` and `warm`, if all are
/// finite (otherwise nothing is written and the overflow is named).
pub(crate) fn finish(
    workspace: &mut SolverWorkspace,
    bodies: &mut [SolverBody],
    rows: &mut [Row],
    settings: &SolverSettings,
    mut report: SolveReport,
    swept: bool,
) -> Result<SolveReport, SolverError> {
    let world = bodies.len();
    let SolverWorkspace {
        prepared,
        heads,
        budgets,
        velocities,
        masses,
        lambdas,
        warm,
        held_rows,
        runs,
        lanes,
        batched,
        shock,
        shock_scratch,
        loads,
        warm_choice,
        split: split_buffers,
        immovable,
        structure,
        ..
    } = workspace;
    let (prepared, shock) = (&prepared[..], shock_on(settings).then_some(&*shock));
    let report_ref = &mut report;
    let body_data: &[SolverBody] = bodies;
    // The split pass reads the prepared rows and the shock order only, never the velocity solve's
    // results, so a large island runs the two at the same time: the same bits either way.
    let velocity_pass = || {
        let mut joints = JointBlock::new(prepared, heads, (body_data, masses));
        if !swept {
            let buffers = (&mut *lanes, *batched, &masses[..]);
            sweep_alone(
                prepared,
                runs,
                velocities,
                lambdas,
                budgets,
                buffers,
                joints.as_mut(),
                settings,
                report_ref,
            );
        }
        // The next step starts from the sweeps' impulses, not the shock pass's (Row::warm), or
        // from the loads they carry where the island rests (loads.rs). Sweeps that converged
        // leave the shock pass nothing to settle.
        warm.clear();
        warm.extend_from_slice(lambdas);
        held_rows.clear();
        if settings.converged(report_ref.iterations, report_ref.residual) {
            return;
        }
        shock_pass(
            prepared,
            (velocities, masses),
            lambdas,
            budgets,
            shock.map(|order| (order, shock_scratch)),
            joints.as_mut(),
            settings,
            report_ref,
        );
        // What both bodies of each row felt: the held body of a row the shock pass settled felt
        // only the sweeps' impulse (still in `warm`, which the load pass may overwrite below).
        if let Some(order) = shock {
            held_rows.extend(
                (order.rows.iter())
                    .filter(|(_, frozen)| *frozen != Frozen::None)
                    .map(|&(index, _)| (index as u32, warm[index])),
            );
        }
        if let Some(order) = shock.filter(|_| settings.carry_loads && resting(velocities)) {
            let pairs = budgets.len();
            warm_choice.keep_sweeps(warm);
            let slots = (&velocities[..], &masses[..]);
            order.carry_loads(loads, (prepared, pairs), lambdas, slots, warm, settings.tolerance);
            warm_choice.choose(warm, (prepared, runs, pairs), (body_data, masses), settings.tolerance);
        }
    };
    // The split pass beside the velocity solve (a large island) keeps its shock pass's groups on
    // its own thread: the velocity solve, the longer of the two, holds the other, and a group
    // handed to the pool only pays for its private copy (shock_state.rs). Once the split pass is
    // done, its thread takes groups of the velocity solve's shock pass instead.
    let beside = prepared.len() >= PARALLEL_ISLAND_ROWS;
    let mut split_pass = || {
        if !swept {
            let levels = shock.map(ShockOrder::levels);
            let plan = (&immovable[..], levels, &mut structure.split_plan);
            build_split_batches((prepared, heads), settings, split_buffers, plan);
            sweep_split_alone(prepared, settings, split_buffers, masses);
        }
        finish_split((prepared, masses), world, settings, (shock, !beside), split_buffers)
    };
    let split = if beside {
        shatter_integrators::parallel::join(velocity_pass, split_pass).1
    } else {
        velocity_pass();
        split_pass()
    };
    report.split_iterations = split.iterations;
    report.split_residual = split.residual;
    report.split_velocities = split.velocities;

    // Commit only finite results, so an overflow leaves the caller's data as it was.
    if let Some(index) = velocities[..world].iter().position(|v| !v.is_finite()) {
        return Err(SolverError::Diverged {
            what: "body velocity",
            index,
        });
    }
    if let Some(index) = (lambdas.iter().zip(warm.iter())).position(|(l, w)| !(l.is_finite() && w.is_finite())) {
        return Err(SolverError::Diverged {
            what: "row impulse",
            index,
        });
    }
    if let Some(&(index, _)) = held_rows.iter().find(|(_, exchanged)| !exchanged.is_finite()) {
        return Err(SolverError::Diverged {
            what: "row impulse",
            index: index as usize,
        });
    }
    if let Some(index) = report
        .split_velocities
        .iter()
        .position(|v| !(v.linear.is_finite() && v.angular.is_finite()))
    {
        return Err(SolverError::Diverged {
            what: "body split velocity",
            index,
        });
    }
    for (body, velocity) in bodies.iter_mut().zip(velocities.iter()) {
        // Static and kinematic velocities are the caller's to prescribe: leave their bits alone.
        if body.is_dynamic() {
            body.linear_velocity = velocity.linear();
            body.angular_velocity = velocity.angular();
        }
    }
    // Each row is written on its own: a large island's rows (tens of megabytes) on the pool.
    let write = |((row, lambda), warm): ((&mut Row, &f64), &f64)| {
        row.lambda = *lambda;
        row.warm = *warm;
        row.exchanged = *lambda;
    };
    if rows.len() >= PARALLEL_ISLAND_ROWS {
        (rows.par_iter_mut().zip(lambdas.par_iter()).zip(warm.par_iter())).for_each(write);
    } else {
        rows.iter_mut().zip(lambdas.iter()).zip(warm.iter()).for_each(write);
    }
    for &(index, exchanged) in held_rows.iter() {
        rows[index as usize].exchanged = exchanged;
    }
    Ok(report)
}

/// The velocity sweeps' batches of an island swept alone (built by [`start`]), whether its sweeps
/// run in them, and the slots' `M^-1`.
type AloneBuffers<'a> = (&'a mut LaneBatches, bool, &'a [SlotMass]);

/// One island's Gauss-Seidel sweeps: a wide island's runs in batches (lanes.rs), a small one's
/// (or one with a friction row bounded by rows outside its run) row by row; the joints' block
/// after each sweep.
#[allow(clippy::too_many_arguments)]
fn sweep_alone(
    prepared: &[Prepared],
    runs: &[(usize, usize)],
    velocities: &mut [Twist],
    lambdas: &mut [f64],
    budgets: &mut [f64],
    (lanes, in_lanes, masses): AloneBuffers<'_>,
    mut joints: Option<&mut JointBlock>,
    settings: &SolverSettings,
    report: &mut SolveReport,
) {
    if in_lanes {
        lanes.load_lambdas(|_| lambdas);
    }
    for _ in 0..settings.iterations {
        let mut residual = if in_lanes {
            let sweep = lanes.sweep(velocities, masses, budgets, [true; LANES]);
            report.scaled_increments += sweep.scaled.iter().sum::<usize>();
            report.dropped_increments += sweep.dropped.iter().sum::<usize>();
            sweep.residual.into_iter().fold(0.0, f64::max)
        } else {
            sweep_rows((prepared, masses), runs, velocities, lambdas, budgets, report)
        };
        if let Some(block) = joints.as_deref_mut() {
            residual = residual.max(block.solve(prepared, lambdas, velocities));
        }
        report.iterations += 1;
        report.residual = residual;
        if residual <= settings.tolerance {
            break;
        }
    }
    if let Some(block) = joints {
        block.finish(prepared, lambdas, velocities);
    }
    if in_lanes {
        lanes.scatter(None, lambdas);
    }
}

/// Whether an island swept alone sweeps its runs in batches (lanes.rs). A small island alone fills
/// one lane per batch: row by row is the same arithmetic in the same order, without building the
/// batches; so is an island with a friction row bounded by rows outside its run.
fn sweeps_in_lanes(heads: &[RowHead], runs: &[(usize, usize)], settings: &SolverSettings) -> bool {
    settings.iterations > 0 && runs.len() >= WIDE_RUNS && runs_are_regular(heads, runs)
}

/// Fastest body speed after the sweeps, m/s (and rad/s), of an island whose shock pass solves
/// its blocks to round-off ([`Accuracy::Refined`]) rather than filtered only.
///
/// The load pass (loads.rs) hands down loads from the velocities the shock pass leaves; with the
/// filtered blocks' error (near 1e-9 m/s, free_rows.rs) in them, the next step's sweeps, warm
/// started from those loads, stopped just inside the solver's 1e-9 m/s tolerance, and the step
/// after ran all its sweeps and both passes again: the 210-box pyramid did so every other step
/// at 30 Hz, the aligned 1000-box pile's columns at 60 Hz a fifth of them each step. Refined
/// from the step the boxes land, their sweeps converge at once, step after step, and neither
/// pass runs again. Above the load pass's 0.25 m/s so that it covers that step: a body landing
/// from rest still moves at up to `g dt` (0.33 m/s at 30 Hz) after it; at 0.25 m/s the pyramid
/// kept alternating. Below the speeds of a tumbling heap, where the second solve only adds
/// cost: refined at any speed, the random 1000-cube pile's step was 3 to 7 percent longer.
/// Measured with `cargo run --release -p shatter-peers --example stage_times` (two threads,
/// medians of three runs of three, against the filtered blocks alone): pyramid 0.74 -> 0.68 ms,
/// aligned pile at 60 Hz 1.83 -> 1.70 ms, the other scenes within the noise.
const REFINED_BLOCK_SPEED: f64 = 1.0;

/// The shock pass over `shock` when given, then the joints' block once more, on the `velocities`
/// of slots with inverse masses `masses`.
#[allow(clippy::too_many_arguments)]
fn shock_pass(
    prepared: &[Prepared],
    (velocities, masses): (&mut [Twist], &[SlotMass]),
    lambdas: &mut [f64],
    budgets: &mut [f64],
    shock: Option<(&ShockOrder, &mut ShockScratch)>,
    joints: Option<&mut JointBlock>,
    settings: &SolverSettings,
    report: &mut SolveReport,
) {
    if let Some((order, scratch)) = shock {
        let accuracy = if all_slower_than(velocities, REFINED_BLOCK_SPEED) {
            Accuracy::Refined
        } else {
            Accuracy::Filtered
        };
        for _ in 0..settings.shock_sweeps {
            order.sweep(
                scratch,
                prepared,
                lambdas,
                (&mut *velocities, masses),
                budgets,
                (settings.shock_iterations, accuracy),
                settings.tolerance,
                report,
            );
        }
        if let Some(block) = joints {
            block.solve(prepared, lambdas, velocities);
            block.finish(prepared, lambdas, velocities);
        }
    }
}
