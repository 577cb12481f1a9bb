//! Several independent islands solved in one call, the sweeps of small islands side by side.
//!
//! A pile at rest falls apart into many small islands of the same make (columns of boxes, each ten
//! contact patches long). Alone, such an island's sweeps fill one lane of each batch (lanes.rs).
//! Given together, up to four islands whose runs have the same shapes in the same order share
//! the batches, one island per lane: batch `k` holds run `k` of each, so each island is swept in
//! its own order with its own arithmetic, and stops when its own residual meets the tolerance (its
//! lane is then left as it is). Each pass's first sweep runs row by row, island by island (the
//! same arithmetic), and only the islands it leaves unconverged share batches for the rest: a pile
//! at rest converges in that sweep. Everything else (validation, warm start, shock and split passes)
//! is each island's own. So every island gets the bits [`solve_with`] gives it alone, whichever
//! islands it is given with: the results do not depend on how a caller groups its islands.

use smallvec::SmallVec;

use crate::body::{SlotMass, SolverBody};
use crate::error::SolverError;
use crate::lanes::{LANES, LaneBatches, LaneIsland, Pass, same_runs};
#[cfg(doc)]
use crate::pgs::solve_with;
use crate::pgs::sweep_rows;
use crate::phases::{finish, shareable, start};
use crate::row::Row;
use crate::settings::{SolveReport, SolverSettings};
use crate::split::sweep_split_rows;
use crate::twist::Twist;
use crate::workspace::SolverWorkspace;

/// One island for [`solve_together`]: its bodies and rows, as [`solve_with`] takes them, and the
/// memory its solve works in.
#[derive(Debug)]
pub struct IslandSolve<'a> {
    /// The island's scratch memory, kept by the caller between steps.
    pub workspace: &'a mut SolverWorkspace,
    /// The island's bodies; the dynamic ones get their new velocities.
    pub bodies: &'a mut [SolverBody],
    /// The island's rows; each gets its new `lambda` and `warm`.
    pub rows: &'a mut [Row],
}

/// The memory of islands swept together, kept in the first island's workspace.
#[derive(Default)]
pub(crate) struct TogetherScratch {
    /// The islands' velocity slots one after another, each island's world slot last.
    velocities: Vec<Twist>,
    /// The slots' `M^-1`, slot for slot with `velocities` (the split pass's pseudo velocities
    /// have the same slots).
    masses: Vec<SlotMass>,
    /// The islands' energy budgets one after another, J.
    budgets: Vec<f64>,
    lanes: LaneBatches,
}

/// Solves independent `islands` for one step of length `dt` (s), each exactly as [`solve_with`]
/// would solve it alone (the same bits, the same errors), and returns their results in order.
/// Islands whose sweeps can share batches (small islands without joint rows whose runs have the
/// same shapes) are swept side by side; give a call islands of the same make to profit from it.
pub fn solve_together(
    islands: &mut [IslandSolve<'_>],
    dt: f64,
    settings: &SolverSettings,
) -> Vec<Result<SolveReport, SolverError>> {
    let mut started: SmallVec<[Result<SolveReport, SolverError>; LANES]> = islands
        .iter_mut()
        .map(|island| start(island.workspace, island.bodies, island.rows, dt, settings))
        .collect();
    let can_share: SmallVec<[bool; 8]> = islands
        .iter()
        .zip(&started)
        .map(|(island, result)| result.is_ok() && shareable(island.workspace, settings))
        .collect();
    let mut swept: SmallVec<[bool; 8]> = SmallVec::from_elem(false, islands.len());
    for group in share_groups(islands, &can_share) {
        let mut members: SmallVec<[(&mut SolverWorkspace, &mut SolveReport); LANES]> = islands
            .iter_mut()
            .zip(started.iter_mut())
            .enumerate()
            .filter(|(k, _)| group.contains(k))
            .filter_map(|(_, (island, result))| result.as_mut().ok().map(|report| (&mut *island.workspace, report)))
            .collect();
        sweep_together(&mut members, settings);
        for &k in &group {
            swept[k] = true;
        }
    }
    islands
        .iter_mut()
        .zip(started)
        .zip(swept)
        .map(|((island, result), swept)| {
            result.and_then(|report| finish(island.workspace, island.bodies, island.rows, settings, report, swept))
        })
        .collect()
}

/// The groups of started islands that share batches: in order, each island with up to
/// [`LANES`] - 1 later ones whose runs have the same shapes in both passes ([`alike`]), among
/// those that `can_share`.
fn share_groups(islands: &[IslandSolve<'_>], can_share: &[bool]) -> SmallVec<[SmallVec<[usize; LANES]>; 2]> {
    let mut taken: SmallVec<[bool; 8]> = SmallVec::from_elem(false, islands.len());
    let mut groups = SmallVec::new();
    for first in 0..islands.len() {
        if !can_share[first] || taken[first] {
            continue;
        }
        let mut group: SmallVec<[usize; LANES]> = SmallVec::new();
        group.push(first);
        for other in first + 1..islands.len() {
            if group.len() == LANES {
                break;
            }
            if can_share[other] && !taken[other] && alike(&islands[first], &islands[other]) {
                group.push(other);
            }
        }
        if group.len() > 1 {
            for &k in &group {
                taken[k] = true;
            }
            groups.push(group);
        }
    }
    groups
}

/// Whether two started islands' runs have the same shapes in both passes (the velocity sweeps'
/// runs and the split pass's), so that they can share batches run by run.
fn alike(one: &IslandSolve<'_>, other: &IslandSolve<'_>) -> bool {
    let (a, b) = (&*one.workspace, &*other.workspace);
    same_runs(&lane_island(one), &lane_island(other))
        && same_runs(
            &a.split.lane_island((&a.prepared, &a.heads), 0),
            &b.split.lane_island((&b.prepared, &b.heads), 0),
        )
}

/// A started island's part in shared batches, at offset zero.
fn lane_island<'a>(island: &'a IslandSolve<'_>) -> LaneIsland<'a> {
    let workspace = &*island.workspace;
    LaneIsland {
        pass: Pass::Velocity,
        prepared: &workspace.prepared,
        heads: &workspace.heads,
        runs: &workspace.runs,
        slot_offset: 0,
        pair_offset: 0,
    }
}

/// The Gauss-Seidel sweeps of both passes of started islands whose runs have the same shapes (at
/// most [`LANES`]), one island per lane; each island's report and split pass count their own
/// sweeps.
///
/// Each pass's first sweep runs row by row in each island, which is its lane's arithmetic in its
/// lane's order (lanes.rs), and only the islands it leaves short of the tolerance go on in
/// batches: the same bits as every sweep in batches. A pile at rest is warm started from the
/// loads its rows carry (loads.rs), so its islands' first sweeps find them holding, and building
/// the batches for that one sweep cost more than the sweep (measured on the aligned 1000-box
/// pile's hundred columns at 30 Hz: batches built 94 us and swept once 64 us a step, of the
/// velocity pass alone, summed over both threads).
fn sweep_together(members: &mut [(&mut SolverWorkspace, &mut SolveReport)], settings: &SolverSettings) {
    let Some((first, _)) = members.first_mut() else {
        return;
    };
    let mut scratch = core::mem::take(&mut first.together);
    let mut going_on = [false; LANES];
    if settings.iterations > 0 {
        for (lane, (workspace, report)) in members.iter_mut().enumerate() {
            let SolverWorkspace {
                prepared,
                runs,
                velocities,
                masses,
                lambdas,
                budgets,
                ..
            } = &mut **workspace;
            let residual = sweep_rows((prepared, masses), runs, velocities, lambdas, budgets, report);
            report.iterations += 1;
            report.residual = residual;
            going_on[lane] = residual > settings.tolerance;
        }
    }
    if going_on.contains(&true) {
        sweep_velocities_in_batches(members, &mut scratch, going_on, settings);
    }
    let mut going_on = [false; LANES];
    if settings.split_iterations > 0 {
        for (lane, (workspace, _)) in members.iter_mut().enumerate() {
            let split = &mut workspace.split;
            if split.work {
                let rows = (&workspace.prepared[..], &workspace.masses[..]);
                split.residual = sweep_split_rows(rows, &split.runs, &mut split.pseudo, &mut split.lambdas);
                split.iterations += 1;
                going_on[lane] = split.residual > settings.tolerance;
            }
        }
    }
    if going_on.contains(&true) {
        sweep_split_in_batches(members, &mut scratch, going_on, settings);
    }
    members[0].0.together = scratch;
}

/// The velocity sweeps after the first of the islands `going_on`, in shared batches.
fn sweep_velocities_in_batches(
    members: &mut [(&mut SolverWorkspace, &mut SolveReport)],
    scratch: &mut TogetherScratch,
    going_on: [bool; LANES],
    settings: &SolverSettings,
) {
    let TogetherScratch {
        velocities,
        masses,
        budgets,
        lanes,
    } = scratch;
    let mut offsets: SmallVec<[(usize, usize); LANES]> = SmallVec::new();
    velocities.clear();
    masses.clear();
    budgets.clear();
    for (workspace, _) in members.iter() {
        offsets.push((velocities.len(), budgets.len()));
        velocities.extend_from_slice(&workspace.velocities);
        masses.extend_from_slice(&workspace.masses);
        budgets.extend_from_slice(&workspace.budgets);
    }
    let islands: SmallVec<[LaneIsland<'_>; LANES]> = members
        .iter()
        .zip(&offsets)
        .map(|((workspace, _), &(slot_offset, pair_offset))| LaneIsland {
            pass: Pass::Velocity,
            prepared: &workspace.prepared,
            heads: &workspace.heads,
            runs: &workspace.runs,
            slot_offset,
            pair_offset,
        })
        .collect();
    // The first island's world slot: immovable, so padding lanes read it harmlessly.
    lanes.build_together(&islands, members[0].0.velocities.len() - 1);
    drop(islands);
    lanes.load_lambdas(|lane| &members[lane].0.lambdas);
    let outcome = sweep_lanes(
        lanes,
        (velocities, masses),
        budgets,
        going_on,
        settings.iterations - 1,
        settings.tolerance,
    );
    let members = members.iter_mut().zip(&offsets).enumerate();
    for (lane, ((workspace, report), &(slot_offset, pair_offset))) in members.filter(|(lane, _)| going_on[*lane]) {
        report.iterations += outcome.iterations[lane];
        if outcome.iterations[lane] > 0 {
            report.residual = outcome.residual[lane];
        }
        report.scaled_increments += outcome.scaled[lane];
        report.dropped_increments += outcome.dropped[lane];
        lanes.scatter(Some(lane), &mut workspace.lambdas);
        let slots = workspace.velocities.len();
        workspace
            .velocities
            .copy_from_slice(&velocities[slot_offset..slot_offset + slots]);
        let pairs = workspace.budgets.len();
        workspace
            .budgets
            .copy_from_slice(&budgets[pair_offset..pair_offset + pairs]);
    }
}

/// The split sweeps after the first, on the pseudo velocities, of the islands `going_on`, in
/// shared batches.
fn sweep_split_in_batches(
    members: &mut [(&mut SolverWorkspace, &mut SolveReport)],
    scratch: &mut TogetherScratch,
    going_on: [bool; LANES],
    settings: &SolverSettings,
) {
    let TogetherScratch {
        velocities,
        masses,
        lanes,
        ..
    } = scratch;
    let mut offsets: SmallVec<[usize; LANES]> = SmallVec::new();
    velocities.clear();
    masses.clear();
    for (workspace, _) in members.iter() {
        debug_assert_eq!(workspace.split.pseudo.len(), workspace.masses.len());
        offsets.push(velocities.len());
        velocities.extend_from_slice(&workspace.split.pseudo);
        masses.extend_from_slice(&workspace.masses);
    }
    let islands: SmallVec<[LaneIsland<'_>; LANES]> = members
        .iter()
        .zip(&offsets)
        .map(|((workspace, _), &slot_offset)| {
            workspace
                .split
                .lane_island((&workspace.prepared, &workspace.heads), slot_offset)
        })
        .collect();
    lanes.build_together(&islands, members[0].0.split.pseudo.len() - 1);
    drop(islands);
    lanes.load_lambdas(|lane| &members[lane].0.split.lambdas);
    let outcome = sweep_lanes(
        lanes,
        (velocities, masses),
        &mut [],
        going_on,
        settings.split_iterations - 1,
        settings.tolerance,
    );
    let members = members.iter_mut().zip(&offsets).enumerate();
    for (lane, ((workspace, _), &slot_offset)) in members.filter(|(lane, _)| going_on[*lane]) {
        let split = &mut workspace.split;
        split.iterations += outcome.iterations[lane];
        if outcome.iterations[lane] > 0 {
            split.residual = outcome.residual[lane];
        }
        lanes.scatter(Some(lane), &mut split.lambdas);
        let slots = split.pseudo.len();
        split
            .pseudo
            .copy_from_slice(&velocities[slot_offset..slot_offset + slots]);
    }
}

/// What the sweeps did in each lane.
#[derive(Default)]
struct LaneSweeps {
    /// Sweeps run, and the residual of the last (m/s).
    iterations: [usize; LANES],
    residual: [f64; LANES],
    /// Energy-clamped increments scaled down and dropped.
    scaled: [usize; LANES],
    dropped: [usize; LANES],
}

/// Up to `iterations` sweeps of `lanes` over the slots' velocities and `M^-1`; a lane stops (and
/// is left as it is) once its own residual is within `tolerance`, as its island's solve alone
/// stops.
fn sweep_lanes(
    lanes: &mut LaneBatches,
    (velocities, masses): (&mut [Twist], &[SlotMass]),
    budgets: &mut [f64],
    mut active: [bool; LANES],
    iterations: usize,
    tolerance: f64,
) -> LaneSweeps {
    let mut outcome = LaneSweeps::default();
    for _ in 0..iterations {
        if !active.contains(&true) {
            break;
        }
        let sweep = lanes.sweep(velocities, masses, budgets, active);
        let swept = active;
        for lane in (0..LANES).filter(|&lane| swept[lane]) {
            outcome.iterations[lane] += 1;
            outcome.residual[lane] = sweep.residual[lane];
            outcome.scaled[lane] += sweep.scaled[lane];
            outcome.dropped[lane] += sweep.dropped[lane];
            if sweep.residual[lane] <= tolerance {
                active[lane] = false;
            }
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::NO_BODY;
    use crate::joints::{JointAnchor, JointPose, JointSpec, ball_joint_rows};
    use crate::pgs::solve_with;
    use crate::row::BiasMode;
    use crate::softness::Softness;
    use crate::test_scenes::{FACE_CORNERS, push_stacked_patch};
    use glam::{DMat3, DVec3};
    use shatter_integrators::SplitMix64;

    const DT: f64 = 1.0 / 30.0;

    /// A column of `height` boxes on the ground, moving and spinning at random, each resting on
    /// the one below on four points.
    fn column(rng: &mut SplitMix64, height: usize) -> (Vec<SolverBody>, Vec<Row>) {
        let bodies: Vec<SolverBody> = (0..height)
            .map(|_| SolverBody {
                linear_velocity: DVec3::new(0.0, -0.33, 0.0) + rng.unit_vector() * rng.range(0.0, 0.3),
                angular_velocity: rng.unit_vector() * rng.range(0.0, 0.5),
                inverse_mass: 1.0 / rng.range(0.5, 3.0),
                inverse_inertia: DMat3::from_diagonal(DVec3::splat(6.0 / rng.range(0.5, 3.0))),
            })
            .collect();
        let mut rows = Vec::new();
        for k in 0..height {
            let below = if k == 0 { NO_BODY } else { (k - 1) as u32 };
            let corners = FACE_CORNERS;
            let friction = rng.range(0.2, 1.0);
            push_stacked_patch(
                &mut rows,
                &bodies,
                (k as u32, below),
                &corners,
                (rng, (-0.005, 0.01)),
                (friction, true),
            );
        }
        for row in &mut rows {
            row.warm = rng.range(0.0, 0.2);
        }
        (bodies, rows)
    }

    /// Islands of several makes: five columns of six boxes (one of them with a contact outside the
    /// split pass), two of four, one of six holding a ball joint (swept alone, with its joints'
    /// block) and one of six with a NaN velocity (refused).
    fn islands() -> Vec<(Vec<SolverBody>, Vec<Row>)> {
        let mut rng = SplitMix64::new(23);
        let mut islands: Vec<_> = [6, 4, 6, 6, 4, 6, 6].into_iter().map(|h| column(&mut rng, h)).collect();
        let (bodies, mut rows) = column(&mut rng, 6);
        // Boxes 4 and 5 held at a shared corner; their centres 1 m apart along y.
        let anchor = |body: u32, y: f64, corner: DVec3| JointAnchor {
            body,
            pose: JointPose::new(DVec3::new(0.0, y, 0.0), glam::DQuat::IDENTITY),
            frame: JointPose::new(corner, glam::DQuat::IDENTITY),
        };
        let spec = JointSpec {
            a: anchor(4, 4.5, DVec3::new(0.5, 0.5, 0.5)),
            b: anchor(5, 5.5, DVec3::new(0.5, -0.5, 0.5)),
            softness: Softness::rigid(0.2),
            angular_softness: Softness::rigid(0.2),
            breaking_impulse: None,
        };
        rows.extend(ball_joint_rows(&bodies, &spec, DT).unwrap().rows);
        islands.insert(3, (bodies, rows));
        let (mut bodies, rows) = column(&mut rng, 6);
        bodies[2].angular_velocity.y = f64::NAN;
        islands.push((bodies, rows));
        // Island 2's top contact corrects penetration by Baumgarte bias, not by the split pass: its
        // velocity runs have the shapes of the other columns of six, its split runs do not.
        for row in islands[2].1.iter_mut().rev().take(4) {
            row.bias_mode = BiasMode::Velocity;
        }
        islands
    }

    /// The islands as the solver takes them, each with a workspace.
    fn island_solves<'a>(
        given: &'a mut [(Vec<SolverBody>, Vec<Row>)],
        workspaces: &'a mut [SolverWorkspace],
    ) -> Vec<IslandSolve<'a>> {
        let pairs = given.iter_mut().zip(workspaces.iter_mut());
        pairs
            .map(|((bodies, rows), workspace)| IslandSolve {
                workspace,
                bodies,
                rows,
            })
            .collect()
    }

    /// The bits of the bodies' velocities, linear then angular, body by body.
    fn velocity_bits(bodies: &[SolverBody]) -> Vec<u64> {
        (bodies.iter())
            .flat_map(|b| [b.linear_velocity.to_array(), b.angular_velocity.to_array()].concat())
            .map(f64::to_bits)
            .collect()
    }

    /// The bits of the rows' impulses and warm starts, row by row.
    fn impulse_bits(rows: &[Row]) -> Vec<u64> {
        rows.iter()
            .flat_map(|r| [r.lambda.to_bits(), r.warm.to_bits()])
            .collect()
    }

    #[test]
    fn together_each_island_gets_the_bits_it_gets_alone_whatever_it_is_grouped_with() {
        let settings = SolverSettings::default();
        let alone: Vec<_> = islands()
            .into_iter()
            .map(|(mut bodies, mut rows)| {
                let result = solve_with(&mut SolverWorkspace::default(), &mut bodies, &mut rows, DT, &settings);
                (bodies, rows, result)
            })
            .collect();
        assert!(alone[8].2.is_err(), "the NaN velocity is refused");
        assert!(
            alone
                .iter()
                .filter(|(_, _, r)| r.is_ok())
                .all(|(_, _, r)| r.as_ref().unwrap().iterations > 1)
        );

        let mut workspaces: Vec<SolverWorkspace> = (0..9).map(|_| SolverWorkspace::default()).collect();
        // Twice in one order with the same workspaces (their memory reused), then reversed.
        for order in [(0..9).collect::<Vec<usize>>(), (0..9).collect(), (0..9).rev().collect()] {
            let mut given = islands();
            let island_bodies: Vec<*const SolverBody> = given.iter().map(|(b, _)| b.as_ptr()).collect();
            let mut solves = island_solves(&mut given, &mut workspaces);
            solves.sort_by_key(|island| {
                order
                    .iter()
                    .position(|&k| core::ptr::eq(island.bodies.as_ptr(), island_bodies[k]))
            });
            let results = solve_together(&mut solves, DT, &settings);
            drop(solves);
            for (position, &k) in order.iter().enumerate() {
                let (bodies, rows, result) = &alone[k];
                match (&results[position], result) {
                    (Ok(together), Ok(alone)) => assert_eq!(together, alone, "island {k}"),
                    (Err(together), Err(alone)) => assert_eq!(together.to_string(), alone.to_string()),
                    _ => panic!("island {k}: one solve failed and the other did not"),
                }
                assert_eq!(velocity_bits(&given[k].0), velocity_bits(bodies), "island {k}");
                assert_eq!(impulse_bits(&given[k].1), impulse_bits(rows), "island {k}");
            }
        }
    }

    /// A column of `height` boxes at rest with no warm impulses: its first velocity sweep finds
    /// every row holding (its pushes are the split pass's), and with `gaps` its contacts are all
    /// apart, so that the split pass has no work either.
    fn resting_column(rng: &mut SplitMix64, height: usize, gaps: bool) -> (Vec<SolverBody>, Vec<Row>) {
        let (mut bodies, mut rows) = column(rng, height);
        for body in &mut bodies {
            body.linear_velocity = DVec3::ZERO;
            body.angular_velocity = DVec3::ZERO;
        }
        for row in &mut rows {
            row.warm = 0.0;
            if gaps {
                row.position_error = row.position_error.abs() + 1e-3;
            }
        }
        (bodies, rows)
    }

    /// Islands of one make whose first sweeps leave some of them converged and others not (the
    /// converged ones go no further, the others on in batches), or all of them converged (no
    /// batches at all), get the bits and reports they get alone: a group of two resting columns
    /// and two moving ones, in both orders, and a group of four resting ones, two of them without
    /// split work.
    #[test]
    fn together_islands_converged_by_their_first_sweep_get_the_bits_they_get_alone() {
        let settings = SolverSettings::default();
        let mut rng = SplitMix64::new(41);
        let mixed = vec![
            resting_column(&mut rng, 4, false),
            column(&mut rng, 4),
            resting_column(&mut rng, 4, false),
            column(&mut rng, 4),
        ];
        let mut reversed = mixed.clone();
        reversed.reverse();
        let resting = vec![
            resting_column(&mut rng, 4, false),
            resting_column(&mut rng, 4, true),
            resting_column(&mut rng, 4, true),
            resting_column(&mut rng, 4, false),
        ];
        for (name, group) in [("mixed", mixed), ("reversed", reversed), ("resting", resting)] {
            let alone: Vec<_> = group
                .iter()
                .cloned()
                .map(|(mut bodies, mut rows)| {
                    let result = solve_with(&mut SolverWorkspace::default(), &mut bodies, &mut rows, DT, &settings);
                    (bodies, rows, result.unwrap())
                })
                .collect();
            let first_sweep = alone.iter().filter(|(_, _, report)| report.iterations == 1).count();
            let no_split = alone
                .iter()
                .filter(|(_, _, report)| report.split_iterations == 0)
                .count();
            match name {
                "resting" => assert_eq!((first_sweep, no_split), (4, 2), "{name}"),
                _ => assert_eq!((first_sweep, no_split), (2, 0), "{name}"),
            }
            // The split passes with work go on past their first sweep, in batches.
            assert!(alone.iter().all(|(_, _, report)| report.split_iterations != 1));
            let mut given = group.clone();
            let mut workspaces: Vec<SolverWorkspace> = (0..4).map(|_| SolverWorkspace::default()).collect();
            let mut solves = island_solves(&mut given, &mut workspaces);
            let results = solve_together(&mut solves, DT, &settings);
            drop(solves);
            for (k, (result, (bodies, rows, report))) in results.iter().zip(&alone).enumerate() {
                assert_eq!(result.as_ref().unwrap(), report, "{name} island {k}");
                assert_eq!(velocity_bits(&given[k].0), velocity_bits(bodies), "{name} island {k}");
                assert_eq!(impulse_bits(&given[k].1), impulse_bits(rows), "{name} island {k}");
            }
        }
    }

    #[test]
    fn together_groups_started_islands_of_one_make_four_at_a_time() {
        let settings = SolverSettings::default();
        let mut given = islands();
        let mut workspaces: Vec<SolverWorkspace> = (0..9).map(|_| SolverWorkspace::default()).collect();
        let mut solves = island_solves(&mut given, &mut workspaces);
        let can_share: Vec<bool> = solves
            .iter_mut()
            .map(|island| {
                start(island.workspace, island.bodies, island.rows, DT, &settings).is_ok()
                    && shareable(island.workspace, &settings)
            })
            .collect();
        // Columns of six at 0, 2, 4 (the jointed one at 3 sweeps alone), 6 and 7, island 2's
        // split runs unlike the others'; of four at 1 and 5; the refused one at 8 never started.
        assert_eq!(can_share, [true, true, true, false, true, true, true, true, false]);
        let groups: Vec<Vec<usize>> = share_groups(&solves, &can_share)
            .into_iter()
            .map(|g| g.to_vec())
            .collect();
        assert_eq!(groups, [vec![0, 4, 6, 7], vec![1, 5]]);
    }
}
