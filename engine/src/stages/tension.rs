//! Part of stage `solve_constraints`: the rotational inertia that joints under tension give the
//! bodies they pull on for the solve (shatter_solver's geometric.rs says why and how much).
//!
//! Each joint's point rows pulled body A's anchor with the impulse its rows carried last step (its
//! warm start, `Joint::impulses` along world x, y, z) and body B's with the opposite; divided by `h` that is
//! the force whose geometric stiffness [`anchor_geometric_stiffness`] measures. Each solver body
//! sums the stiffness of its anchors and gets the inertia [`stabilizing_inertia`] prescribes at
//! [`MAX_STEP_STIFFNESS`], for this solve only: the store's mass properties do not change. Bodies
//! pulled gently (every body of a chain of up to about ten capsule links at 30 Hz) get nothing.
//! Measured before this: a hanging chain of 20 ball-jointed capsules at 30 Hz came apart by metres
//! after a kick of 1 mm/s at its bottom link.

use glam::{DMat3, DVec3};
use shatter_solver::{MAX_STEP_STIFFNESS, NO_BODY, SolverBody, anchor_geometric_stiffness, stabilizing_inertia};

use crate::joints::Joint;
use crate::store::BodyStore;

/// Adds to each of `bodies` (the solver bodies; `index` maps a dense store index to its solver
/// index, [`NO_BODY`] for none) the inertia that the tension of `joints` calls for at step `dt`
/// (s). `stiffness` is scratch memory.
pub(crate) fn add_tension_inertia(
    store: &BodyStore,
    joints: &[Joint],
    bodies: &mut [SolverBody],
    index: &[u32],
    dt: f64,
    stiffness: &mut Vec<DMat3>,
) {
    stiffness.clear();
    stiffness.resize(bodies.len(), DMat3::ZERO);
    for joint in joints {
        // Point rows come first, along world x, y, z: their impulses are the pull on A's anchor.
        let pull = DVec3::new(joint.impulses[0], joint.impulses[1], joint.impulses[2]) / dt;
        if pull == DVec3::ZERO {
            continue;
        }
        let sides = [
            (Some(joint.body_a), joint.local_anchor_a, pull),
            (joint.body_b, joint.local_anchor_b, -pull),
        ];
        for (body, local_anchor, force) in sides {
            let Some(dense) = body.and_then(|id| store.dense_index(id).ok()) else {
                continue;
            };
            let slot = index[dense];
            if slot == NO_BODY {
                continue;
            }
            let arm = store.states()[dense].orientation * local_anchor;
            stiffness[slot as usize] += anchor_geometric_stiffness(arm, force);
        }
    }
    for (body, &stiffness) in bodies.iter_mut().zip(stiffness.iter()) {
        if stiffness != DMat3::ZERO && body.is_dynamic() {
            let added = stabilizing_inertia(body.inverse_inertia, stiffness, dt, MAX_STEP_STIFFNESS);
            *body = body.with_added_inertia(added);
        }
    }
}
