//! Scenes of the energized method, shared by its tests, benches and examples (the facade's scene
//! library re-exports them): Li 2018's four scenes, a beam struck between two posts (Fig. 3,
//! [`beam`]), a plate dropped on a sphere (Fig. 4, [`plate`]), a chain pulled apart (Fig. 5,
//! [`chain`]) and a hollow bunny dropped on the floor (Fig. 6, [`bunny`]), and a preloaded pair
//! for the energy balance.
//!
//! Every scene takes the model's [`EnergizedSettings`], so one scene is run at several `alpha`, and
//! `observers`: fracture models registered before the energized one, which therefore see each
//! step's bodies before any break of that step (tests measure what a break changed with them).

use glam::DVec3;
use shatter_collision::{Collider, Cuboid, HalfSpace, Shape};
use shatter_engine::{BodyDesc, BodyId, FractureModel, JointDesc, JointId, JointKind, World, WorldSettings};
use shatter_solver::Softness;

use super::{Breakable, EnergizedFracture, EnergizedSettings, Glue, glue};
use crate::error::FractureError;
use crate::prescore::PieceAnchor;

mod beam;
mod bunny;
mod chain;
mod plate;

pub use beam::{BEAM_PIECE, Beam, beam};
pub use bunny::{BUNNY_HEIGHT, Bunny, bunny};
pub use chain::{CHAIN_LINK, Chain, chain};
pub use plate::{PLATE_CUBE, Plate, plate};

/// Surface particle spacing of the scenes' boxes, m.
const PARTICLE_SPACING: f64 = 0.05;

/// A box collider of half extents `half` (m).
pub fn box_collider(half: DVec3) -> Result<Collider, FractureError> {
    Ok(Collider::from_shape(
        Shape::Cuboid(Cuboid::try_new(half)?),
        PARTICLE_SPACING,
    )?)
}

/// Models that run before the energized model in each step.
pub type Observers = Vec<Box<dyn FractureModel>>;

/// A world with `settings`, the `observers`, and an energized model with `model`.
fn world_with_model(
    settings: WorldSettings,
    model: EnergizedSettings,
    observers: Observers,
) -> Result<World, FractureError> {
    let mut world = World::try_with_settings(settings)?;
    for observer in observers {
        world.add_fracture_model(observer);
    }
    world.add_fracture_model(Box::new(EnergizedFracture::try_new(model)?));
    Ok(world)
}

/// The static ground: the half-space below y = 0.
fn add_ground(world: &mut World) -> Result<BodyId, FractureError> {
    let plane = HalfSpace::ground(0.0)?;
    Ok(world.add_body(BodyDesc::fixed(Collider::from_shape(Shape::HalfSpace(plane), 1.0)?))?)
}

/// The anchors of a grid of boxes (pieces numbered x fastest, then y, then z; `count` per axis,
/// each `size` m, the grid's corner at `corner`): the four corners of every face two neighbours
/// share, world frame.
pub fn box_grid_anchors(count: [usize; 3], size: DVec3, corner: DVec3) -> Vec<PieceAnchor> {
    let index = |i: usize, j: usize, k: usize| (i + count[0] * (j + count[1] * k)) as u32;
    let mut anchors = Vec::new();
    for k in 0..count[2] {
        for j in 0..count[1] {
            for i in 0..count[0] {
                let cell = [i, j, k];
                for axis in 0..3 {
                    if cell[axis] + 1 >= count[axis] {
                        continue;
                    }
                    let mut next = cell;
                    next[axis] += 1;
                    let (u, w) = ((axis + 1) % 3, (axis + 2) % 3);
                    for (du, dw) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        let mut point = [cell[0] as f64, cell[1] as f64, cell[2] as f64];
                        point[axis] += 1.0;
                        point[u] += du as f64;
                        point[w] += dw as f64;
                        anchors.push(PieceAnchor {
                            pieces: [index(i, j, k), index(next[0], next[1], next[2])],
                            point: corner + DVec3::from_array(point) * size,
                        });
                    }
                }
            }
        }
    }
    anchors
}

/// Two boxes, one hanging under the other by a watched fixed joint, the upper one held to the
/// world by an unwatched rigid ball joint: at rest the watched joint carries the lower box's
/// weight, so lowering its threshold breaks a preloaded joint of two bodies at rest.
pub struct HangingPair {
    /// The world, with its energized model.
    pub world: World,
    /// The upper box (1 kg, held to the world).
    pub upper: BodyId,
    /// The lower box (2 kg).
    pub lower: BodyId,
    /// The watched joint between them (threshold far above the load).
    pub joint: JointId,
    /// Stiffness of the watched joint's point rows, N/m.
    pub stiffness: f64,
}

/// The [`HangingPair`] with `model`, joined by a spring of `stiffness` (N/m, also N m/rad for the
/// angular rows), critically damped for the lower box.
pub fn hanging_pair(
    model: EnergizedSettings,
    stiffness: f64,
    observers: Observers,
) -> Result<HangingPair, FractureError> {
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    let mut world = world_with_model(settings, model, observers)?;
    let half = DVec3::splat(0.1);
    let upper = world.add_body(
        BodyDesc::dynamic(box_collider(half)?)
            .with_mass(1.0)
            .with_position(DVec3::Y * 2.0),
    )?;
    let lower = world.add_body(
        BodyDesc::dynamic(box_collider(half)?)
            .with_mass(2.0)
            .with_position(DVec3::new(0.0, 1.8, 0.0)),
    )?;
    world.add_joint(JointDesc::new(JointKind::Ball, upper, None, DVec3::Y * 2.1))?;
    let spring = Softness::SpringDamper {
        stiffness,
        damping: 2.0 * (stiffness * 2.0).sqrt(),
    };
    let glue_rule = Glue {
        softness: spring,
        angular_softness: spring,
        breakable: Breakable::new(1e9),
    };
    let anchor = PieceAnchor {
        pieces: [0, 1],
        point: DVec3::Y * 1.9,
    };
    let joint = glue(&mut world, &[upper, lower], &[anchor], &glue_rule)?[0];
    Ok(HangingPair {
        world,
        upper,
        lower,
        joint,
        stiffness,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energized_box_grid_anchors_are_the_corners_of_shared_faces() {
        let anchors = box_grid_anchors([5, 1, 5], DVec3::splat(0.2), DVec3::ZERO);
        // 2 x 4 x 5 shared faces, four corners each.
        assert_eq!(anchors.len(), 160);
        for anchor in &anchors {
            let [a, b] = anchor.pieces.map(|p| p as usize);
            let centre = |p: usize| DVec3::new((p % 5) as f64 + 0.5, 0.5, (p / 5) as f64 + 0.5) * 0.2;
            // Each anchor lies on the face between the two cube centres.
            let (ca, cb) = (centre(a), centre(b));
            assert!(((cb - ca).length() - 0.2).abs() < 1e-12);
            let mid = (ca + cb) * 0.5;
            let offset = anchor.point - mid;
            assert!(offset.dot(cb - ca).abs() < 1e-12);
            assert!((offset.abs() - (DVec3::splat(0.1) - (cb - ca).abs() * 0.5)).length() < 1e-12);
        }
    }
}
