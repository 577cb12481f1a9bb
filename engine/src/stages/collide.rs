//! Stage `collide`, first half: the narrow phase over the candidate pairs.
//!
//! Every pair goes through `shatter_collision::collide` at the poses of the start of the step, in
//! parallel; the results are collected in pair order (already sorted by body handle), so the list
//! is the same whatever the thread count. The contact margin of a pair is the world's margin plus
//! the distance the pair can close within the step (relative speed of the centres plus each
//! body's angular speed times its reach), so every contact the step could make is present as a
//! speculative contact: the collision pass then tests it at the predicted positions and the solve
//! keeps it from closing more than its gap.
//!
//! Friction and restitution of a pair are combined here (geometric mean of the frictions, the
//! larger restitution; see [`crate::Material`]).

use rayon::prelude::*;
use shatter_collision::{Pose, collide};
use shatter_integrators::RigidState;
use smallvec::SmallVec;

use crate::contacts::{ContactPoint, PairContacts, tangent_basis};
use crate::error::EngineError;
use crate::store::BodyStore;

/// Largest distance from a body's origin (its centre of mass) to its bounds, m; zero for
/// unbounded bodies.
fn reach(bodies: &BodyStore, dense: usize) -> f64 {
    bodies.records()[dense]
        .collider
        .local_bounds()
        .map_or(0.0, |b| b.min.abs().max(b.max.abs()).length())
}

/// How far the two bodies can close in `dt`, m: an upper bound from their velocities.
fn closing_distance(a: &RigidState, reach_a: f64, b: &RigidState, reach_b: f64, dt: f64) -> f64 {
    let linear = (a.linear_velocity - b.linear_velocity).length();
    let angular = a.body_angular_velocity.length() * reach_a + b.body_angular_velocity.length() * reach_b;
    (linear + angular) * dt
}

/// Contacts of every candidate pair at the start-of-step poses, empty pairs dropped.
pub(crate) fn narrow_phase(
    bodies: &BodyStore,
    pairs: &[[u32; 2]],
    dt: f64,
    margin: f64,
) -> Result<Vec<PairContacts>, EngineError> {
    let results: Vec<Result<Option<PairContacts>, EngineError>> = pairs
        .par_iter()
        .map(|&[a, b]| {
            let (va, vb) = (bodies.view(a as usize), bodies.view(b as usize));
            let pair_margin = margin
                + closing_distance(
                    va.state,
                    reach(bodies, a as usize),
                    vb.state,
                    reach(bodies, b as usize),
                    dt,
                );
            let manifold = collide(
                &va.record.collider,
                &Pose::new(va.state.position, va.state.orientation),
                &vb.record.collider,
                &Pose::new(vb.state.position, vb.state.orientation),
                pair_margin,
            )
            .map_err(EngineError::geometry("narrow phase"))?;
            if manifold.is_empty() {
                return Ok(None);
            }
            let contacts: SmallVec<[ContactPoint; 4]> = manifold
                .contacts
                .iter()
                .map(|c| ContactPoint {
                    point: c.point,
                    normal: c.normal,
                    depth: c.depth,
                    feature: c.feature,
                    tangents: tangent_basis(c.normal),
                    collision_impulse: 0.0,
                    normal_impulse: 0.0,
                    friction_impulse: [0.0; 2],
                })
                .collect();
            let (ma, mb) = (va.record.material, vb.record.material);
            Ok(Some(PairContacts {
                body_a: va.record.id,
                body_b: vb.record.id,
                friction: (ma.friction * mb.friction).sqrt(),
                restitution: ma.restitution.max(mb.restitution),
                contacts,
                dense: [a, b],
            }))
        })
        .collect();
    let mut manifolds = Vec::with_capacity(results.len());
    for result in results {
        if let Some(pair) = result? {
            manifolds.push(pair);
        }
    }
    Ok(manifolds)
}
