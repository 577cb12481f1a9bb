//! Gluing prescored pieces: breakable fixed joints at anchors, watched by the world's
//! [`EnergizedFracture`].

use shatter_engine::{BodyId, JointDesc, JointId, JointKind, World};
use shatter_integrators::BodyKind;
use shatter_solver::Softness;

use super::{Breakable, EnergizedFracture};
use crate::error::FractureError;
use crate::prescore::PieceAnchor;

/// How pieces are glued: the springs of each fixed joint and when it breaks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Glue {
    /// Softness of the three rows holding the anchor points together (a spring in N/m). A rigid
    /// row (CFM 0) stores no energy, so a break of it gives nothing back.
    pub softness: Softness,
    /// Softness of the three rows holding the relative orientation (N m/rad).
    pub angular_softness: Softness,
    /// When a joint breaks.
    pub breakable: Breakable,
}

/// Joins `bodies[anchor.pieces[0]]` and `bodies[anchor.pieces[1]]` with one fixed joint at each
/// anchor (world frame, at the bodies' current poses) and has the world's [`EnergizedFracture`]
/// watch it as `glue` says. The joints are unbreakable to the engine itself; the model breaks them.
/// Returns the joints in anchor order.
///
/// Checks everything before adding anything, and fails, changing nothing, when: the world has no
/// energized model; an anchor names a piece outside `bodies`, the same piece twice, or a
/// non-finite point; a body is stale or neither of a pair is dynamic; a softness or the threshold
/// is invalid.
pub fn glue(
    world: &mut World,
    bodies: &[BodyId],
    anchors: &[PieceAnchor],
    glue: &Glue,
) -> Result<Vec<JointId>, FractureError> {
    if world.fracture_model::<EnergizedFracture>().is_none() {
        return Err(FractureError::input(
            "gluing needs an EnergizedFracture registered with the world first (World::add_fracture_model)",
        ));
    }
    glue.breakable.validate()?;
    for softness in [glue.softness, glue.angular_softness] {
        // The effective mass only matters to the frequency form; any positive one checks the rest.
        softness
            .erp_cfm(1.0 / 60.0, 1.0)
            .map_err(|error| FractureError::input(format!("glue softness: {error}")))?;
    }
    for (k, anchor) in anchors.iter().enumerate() {
        let [a, b] = anchor.pieces.map(|p| p as usize);
        if a >= bodies.len() || b >= bodies.len() || a == b {
            return Err(FractureError::input(format!(
                "anchor {k} joins pieces {a} and {b}; expected two different pieces below {}",
                bodies.len()
            )));
        }
        if !anchor.point.is_finite() {
            return Err(FractureError::invalid(
                "anchor point (m)",
                anchor.point,
                "a finite point",
            ));
        }
        let dynamic = |id: BodyId| world.body(id).map(|view| view.kind == BodyKind::Dynamic);
        if !(dynamic(bodies[a])? || dynamic(bodies[b])?) {
            return Err(FractureError::input(format!(
                "anchor {k} joins {} and {}, neither of which is dynamic",
                bodies[a], bodies[b]
            )));
        }
    }
    let mut joints = Vec::with_capacity(anchors.len());
    for anchor in anchors {
        let [a, b] = anchor.pieces.map(|p| bodies[p as usize]);
        let desc = JointDesc::new(JointKind::Fixed, a, Some(b), anchor.point)
            .with_softness(glue.softness, glue.angular_softness);
        match world.add_joint(desc) {
            Ok(id) => joints.push(id),
            Err(error) => {
                // Checked above, so not expected; undo what was added.
                for id in joints {
                    let _ = world.remove_joint(id);
                }
                return Err(error.into());
            }
        }
    }
    let model = world
        .fracture_model_mut::<EnergizedFracture>()
        .expect("checked at the start");
    for &id in &joints {
        model.add_joint(id, glue.breakable)?;
    }
    Ok(joints)
}
