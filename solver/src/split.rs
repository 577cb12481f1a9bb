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
//!   max_split_velocity)`, with the row's own bounds (`[0, inf)` for contacts, so it only pushes);
//! - the integrator moves positions by `(v + u) h` and keeps `v`: the correction removes
//!   `ERP * depth` per step and leaves no velocity behind.
//!
//! Only split rows (and never friction rows) take part, so joints do not constrain the pseudo
//! velocities; a joint disturbed by a contact's position correction is restored by its own
//! Baumgarte bias next step. The pass is not energy-clamped: pseudo velocities carry no kinetic
//! energy.

use crate::body::SplitVelocity;
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

/// The split pass's arrays, kept in the solver workspace between solves.
#[derive(Default)]
pub(crate) struct SplitBuffers {
    /// Pseudo velocity per slot (the last is the world).
    pseudo: Vec<Twist>,
    /// `(row, split target)` of the rows in the pass.
    rows: Vec<(usize, f64)>,
    /// Split impulse per row, N s.
    lambdas: Vec<f64>,
    /// The shock pass's memory for this pass.
    shock: ShockScratch,
}

/// Runs the split pass over the prepared rows for `world` bodies.
/// With `shock`, a shock-propagation pass (shock.rs) follows the sweeps, so that a stack's
/// penetration is pushed out from the ground up rather than one contact per sweep.
pub(crate) fn solve_split(
    prepared: &[Prepared],
    world: usize,
    settings: &SolverSettings,
    shock: Option<&ShockOrder>,
    buffers: &mut SplitBuffers,
) -> SplitOutcome {
    let SplitBuffers {
        pseudo,
        rows: split_rows,
        lambdas,
        shock: scratch,
    } = buffers;
    pseudo.clear();
    pseudo.resize(world + 1, Twist::default());
    split_rows.clear();
    split_rows.extend(
        prepared
            .iter()
            .enumerate()
            .filter(|(_, row)| row.active && row.friction.is_none())
            .filter_map(|(index, row)| row.split_target.map(|target| (index, target))),
    );
    lambdas.clear();
    lambdas.resize(prepared.len(), 0.0);
    let mut iterations = 0;
    let mut residual: f64 = 0.0;
    // Nothing to correct: leave every pseudo velocity at exactly zero.
    if split_rows.iter().any(|(_, target)| *target > 0.0) {
        for _ in 0..settings.split_iterations {
            residual = 0.0;
            for &(index, target) in split_rows.iter() {
                let (row, lambda) = (&prepared[index], &mut lambdas[index]);
                let ju = row.relative_velocity(pseudo);
                let wanted = (target - ju - row.cfm_over_h * *lambda) * row.inverse_diagonal;
                let delta = clamp(*lambda + wanted, row.lower, row.upper) - *lambda;
                if delta != 0.0 {
                    *lambda += delta;
                    row.apply(pseudo, delta);
                }
                residual = residual.max(delta.abs() * row.diagonal);
            }
            iterations += 1;
            if residual <= settings.tolerance {
                break;
            }
        }
        if let Some(order) = shock.filter(|_| settings.split_iterations > 0) {
            for _ in 0..settings.shock_sweeps {
                order.sweep_split(
                    scratch,
                    prepared,
                    lambdas,
                    pseudo,
                    settings.shock_iterations,
                    settings.tolerance,
                );
            }
        }
    }
    SplitOutcome {
        iterations,
        residual,
        velocities: pseudo[..world]
            .iter()
            .map(|twist| SplitVelocity {
                linear: twist.linear(),
                angular: twist.angular(),
            })
            .collect(),
    }
}
