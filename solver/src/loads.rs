//! The load pass: after the shock pass, impulses that carry each resting body's load down to
//! the ground, as the next step's warm start.
//!
//! The shock pass (shock.rs) settles a stack's velocities from the ground up with each body's
//! supports held still, so the supports never feel the corrections it makes to the rows above
//! them: its impulses answer this step's leftover error, not the stack's load, and warm starting
//! from them kept a random pile rocking (`Row::warm`). The sweeps' impulses, the warm start
//! otherwise, are the load only once the sweeps converge, and on a stack they do not: a column's
//! weight spreads one contact per sweep (a column of ten balls: the warm start's error shrank by
//! 0.78 a step at ten sweeps), and boxes on two supports wander through the friction they share.
//! So every step of a resting stack ran all its sweeps and the whole shock pass.
//!
//! This pass visits the shock order's groups from the top level down. Each body first takes, as
//! a change of its velocity, the reaction of every impulse the rows above it changed from the
//! sweeps' (in the shock pass or in this one); then its rows to its supports, the supports held
//! at their velocities after the shock pass, are solved as one block (shock_block.rs) so that
//! they hold again. With `lambda` the impulses it leaves, every body of a group it solved
//! satisfies its support rows at `v* + M^-1 J^T lambda`: the impulses are a load the stack can
//! carry, each body's weight handed down through its supports (a column's contact `k` from the
//! top carries `k` bodies' weight, exactly). Warm started from them, the next step's sweeps find
//! the rows already holding; they stop after one sweep (within the tolerance), and the shock
//! pass and the split pass's shock pass are skipped for an island whose sweeps converged. Its
//! blocks are solved to round-off (`Accuracy::Refined`, free_rows.rs), as is the shock pass
//! before it when the island is nearly at rest (phases.rs): with the filtered solve alone the
//! loads held only to about 1e-9 m/s, the solver's tolerance itself, and the pyramid's sweeps
//! converged one step and ran out the next.
//!
//! The velocities it works on are a copy: the solve's velocities, impulses and energy budgets
//! are left as the shock pass left them, so the pass cannot add energy (the warm start it feeds
//! is energy-clamped as any other, warm_start.rs). A group the block cannot solve keeps the
//! shock pass's impulses and hands its changes down all the same.
//!
//! It runs only for an island whose bodies all move slower than [`LOAD_PASS_SPEED`]: in a heap
//! still tumbling the next step's rows differ anyway, and the pass is a second block solve per
//! body (measured on the random 1000-cube pile at 30 Hz, two threads: 1.4 ms a step, the step 18
//! percent longer, with no sweeps saved).
//!
//! Where bodies of one level press on each other (a heap of debris, a wall's courses) the loads
//! alone are not the warm start: the rows between such bodies keep the sweeps' impulses beside
//! them, and in a heap the mix does not balance, so warm started from it every step the sweeps
//! never converged and the heap crept (64 cubes in random orientations at 60 Hz, sleeping off:
//! from 15 s to 20 s the cube that moved most moved 0.25 mm to 5.0 cm, over five lattices). A
//! running-bond wall needs the loads all the same (without them its top moved 3.0 cm in 20 s at
//! 30 Hz, with them 0.78 mm). So the loads are only offered: warm_choice.rs keeps them where a
//! trial sweep finds them nearer to holding than the sweeps' impulses; the heaps then come to rest
//! and the wall stands. Tried before that and dropped: carrying the loads only where the rows off
//! the load path bore at most a tenth of the largest load (a wall of aligned columns pressed side
//! by side no longer fell asleep); giving those rows no impulse, the shock pass's, a few
//! Gauss-Seidel sweeps at the loads' velocities, or iterating each level's groups with them in
//! the shock pass (the heaps still crept); giving a cube that rests on another of its level the
//! level above it (the same).

use rayon::prelude::*;

use crate::body::SlotMass;
use crate::free_rows::Accuracy;
use crate::pgs::Prepared;
use crate::settings::SolveReport;
use crate::shock::{Frozen, SIDE_BY_SIDE_GROUPS, ShockOrder, moving_slot};
use crate::shock_block::solve_group;
use crate::shock_state::{GroupChange, Shared, detached};
use crate::twist::Twist;

/// Fastest body speed, m/s (and angular speed, rad/s), of an island whose loads are carried.
/// Measured with `cargo run --release -p shatter-peers --example stage_times` on two threads
/// (median of three runs of three), this pass and the skipping of converged islands' shock
/// passes against neither: the 210-box pyramid's step 1.10 -> 0.82 ms, the aligned 1000-box
/// pile's 2.46 -> 1.93 ms at 60 Hz and 2.48 -> 1.86 ms at 30 Hz, the sphere columns' 1.47 -> 1.28
/// ms, the random pile's unchanged within the noise (9.0 ms at 30 Hz, 8.4 ms at 60 Hz). With the
/// limit at 1 m/s the random pile was 3 to 5 percent slower, without one 18 percent; at 0.1 m/s
/// the others gained a third less.
pub(crate) const LOAD_PASS_SPEED: f64 = 0.25;

/// Whether the loads of an island with these velocity slots are carried: every slot slower than
/// [`LOAD_PASS_SPEED`].
pub(crate) fn resting(velocities: &[Twist]) -> bool {
    all_slower_than(velocities, LOAD_PASS_SPEED)
}

/// Whether every slot of `velocities` moves slower than `speed` (m/s, and rad/s).
pub(crate) fn all_slower_than(velocities: &[Twist], speed: f64) -> bool {
    velocities
        .iter()
        .all(|v| v.linear().length_squared() <= speed * speed && v.angular().length_squared() <= speed * speed)
}

/// The load pass's memory, kept from step to step.
#[derive(Default)]
pub(crate) struct LoadScratch {
    /// The impulses the pass arrives at, N s.
    loads: Vec<f64>,
    /// Its copy of the velocities, per slot.
    velocities: Vec<Twist>,
    /// Per slot, the velocity change the reactions of the rows above it owe it.
    owed: Vec<Twist>,
    /// Energy budgets per body pair for the block solve, J: unlimited, since the pass changes no
    /// velocity the solve returns.
    budgets: Vec<f64>,
    /// What each group of a side-by-side level changed.
    changes: Vec<Option<GroupChange>>,
}

impl ShockOrder {
    /// Writes into `warm` the loads of the module docs, from the sweeps' impulses (`warm` as it
    /// comes in), the impulses after the shock pass (`lambdas`) and the velocities after it, for
    /// the rows of this order's groups with a held side (over `prepared`, whose energy-clamped
    /// rows name `pairs` body pairs, and the slots' inverse `masses`); every other row (joints,
    /// rows between bodies of one level) keeps the sweeps' impulse. A wide level's groups are
    /// solved side by side on the rayon pool, as in the shock pass, with the bits of one after
    /// another.
    pub(crate) fn carry_loads(
        &self,
        scratch: &mut LoadScratch,
        (prepared, pairs): (&[Prepared], usize),
        lambdas: &[f64],
        (velocities, masses): (&[Twist], &[SlotMass]),
        warm: &mut [f64],
        tolerance: f64,
    ) {
        let LoadScratch {
            loads,
            velocities: v,
            owed,
            budgets,
            changes,
        } = scratch;
        loads.clear();
        loads.extend_from_slice(lambdas);
        v.clear();
        v.extend_from_slice(velocities);
        owed.clear();
        owed.resize(v.len(), Twist::default());
        budgets.clear();
        budgets.resize(pairs, f64::INFINITY);
        let mut report = SolveReport::default();
        let threads = rayon::current_num_threads();
        for &(first, last, side_by_side) in self.batches.iter().rev() {
            let groups = &self.groups[first..last];
            for &(start, end) in groups {
                if let Some(moving) = moving_slot(prepared, &self.rows[start..end]) {
                    v[moving] = v[moving].add_scaled(&owed[moving], 1.0);
                }
            }
            let wide = side_by_side && threads > 1 && groups.len() >= SIDE_BY_SIDE_GROUPS;
            if wide {
                let (read_loads, read_v, read_budgets) = (&loads[..], &v[..], &budgets[..]);
                groups
                    .par_iter()
                    .map(|&(start, end)| {
                        let group = &self.rows[start..end];
                        let moving = moving_slot(prepared, group)?;
                        Some(detached(
                            group,
                            moving,
                            read_loads,
                            (read_v, masses),
                            read_budgets,
                            |own| {
                                solve_group(group, prepared, own, tolerance, Accuracy::Refined);
                            },
                        ))
                    })
                    .collect_into_vec(changes);
            }
            let mut shared = Shared {
                lambdas: loads,
                velocities: v,
                masses,
                budgets,
                report: &mut report,
            };
            if wide {
                for change in changes.iter().flatten() {
                    change.commit(&mut shared);
                }
            } else {
                for &(start, end) in groups {
                    let group = &self.rows[start..end];
                    if moving_slot(prepared, group).is_some() {
                        solve_group(group, prepared, &mut shared, tolerance, Accuracy::Refined);
                    }
                }
            }
            // The supports owe the reactions of every change from the sweeps' impulses; the rows
            // take their loads as their warm start.
            for &(start, end) in groups {
                for &(index, frozen) in &self.rows[start..end] {
                    let row = &prepared[index];
                    let change = loads[index] - warm[index];
                    match frozen {
                        Frozen::A => {
                            owed[row.a()] = owed[row.a()].add_scaled(&row.response_a(&masses[row.a()]), change)
                        }
                        Frozen::B => {
                            owed[row.b()] = owed[row.b()].add_scaled(&row.response_b(&masses[row.b()]), change)
                        }
                        Frozen::None => continue,
                    }
                    warm[index] = loads[index];
                }
            }
        }
    }
}
