//! Scenes of the energized method, shared by its tests, benches and examples (the facade's scene
//! library re-exports them): Li 2018's plate (Fig. 4) and chain (Fig. 5), and a preloaded pair
//! for the energy balance.
//!
//! Every scene takes the model's [`EnergizedSettings`], so one scene is run at several `alpha`, and
//! `observers`: fracture models registered before the energized one, which therefore see each
//! step's bodies before any break of that step (tests measure what a break changed with them).

use glam::DVec3;
use shatter_collision::{Collider, Cuboid, HalfSpace, Shape, Sphere};
use shatter_engine::{BodyDesc, BodyId, FractureModel, JointDesc, JointId, JointKind, World, WorldSettings};
use shatter_solver::Softness;

use super::{Breakable, EnergizedFracture, EnergizedSettings, Glue, glue};
use crate::error::FractureError;
use crate::prescore::PieceAnchor;

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

/// Li 2018 Fig. 4: a plate of 5 x 5 cubes, glued at the corners of every shared face, dropped flat
/// from `drop` m onto a fixed sphere under its centre.
pub struct Plate {
    /// The world, with its energized model.
    pub world: World,
    /// The 25 cubes, x fastest then z.
    pub pieces: Vec<BodyId>,
    /// The sphere.
    pub sphere: BodyId,
    /// The glue joints.
    pub joints: Vec<JointId>,
}

/// Side of one plate cube, m.
pub const PLATE_CUBE: f64 = 0.2;

/// The [`Plate`] with `model`; cubes of [`PLATE_CUBE`] m at 1000 kg/m^3 (8 kg), joints of
/// 1e5 N/m (angular 1e3 N m/rad), critically damped for one cube, breaking above 4 N s.
pub fn plate(model: EnergizedSettings, drop: f64, observers: Observers) -> Result<Plate, FractureError> {
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    let mut world = world_with_model(settings, model, observers)?;
    add_ground(&mut world)?;
    let radius = 0.4;
    let sphere = world.add_body(
        BodyDesc::fixed(Collider::from_shape(
            Shape::Sphere(Sphere::try_new(radius)?),
            PARTICLE_SPACING,
        )?)
        .with_position(DVec3::Y * radius),
    )?;
    let size = DVec3::splat(PLATE_CUBE);
    let bottom = 2.0 * radius + drop;
    let corner = DVec3::new(-2.5 * PLATE_CUBE, bottom, -2.5 * PLATE_CUBE);
    let mut pieces = Vec::with_capacity(25);
    for k in 0..5 {
        for i in 0..5 {
            let centre = corner + (DVec3::new(i as f64, 0.0, k as f64) + 0.5) * size;
            pieces.push(world.add_body(BodyDesc::dynamic(box_collider(size * 0.5)?).with_position(centre))?);
        }
    }
    let anchors = box_grid_anchors([5, 1, 5], size, corner);
    // Pieces are numbered x fastest, then y (one layer), then z: the order they were added in.
    let cube_mass = 1000.0 * PLATE_CUBE.powi(3);
    let glue_rule = Glue {
        softness: Softness::SpringDamper {
            stiffness: 1.0e5,
            damping: 2.0 * (1.0e5 * cube_mass).sqrt(),
        },
        angular_softness: Softness::SpringDamper {
            stiffness: 1.0e3,
            damping: 2.0 * (1.0e3 * cube_mass * PLATE_CUBE * PLATE_CUBE / 6.0).sqrt(),
        },
        breakable: Breakable::new(4.0),
    };
    let joints = glue(&mut world, &pieces, &anchors, &glue_rule)?;
    Ok(Plate {
        world,
        pieces,
        sphere,
        joints,
    })
}

/// Li 2018 Fig. 5: a straight chain of links between two end cubes that are driven apart slowly,
/// without gravity, so every joint is in pure tension until one snaps.
pub struct Chain {
    /// The world, with its energized model.
    pub world: World,
    /// The links, from the left end.
    pub links: Vec<BodyId>,
    /// The two kinematic end cubes (left, right).
    pub ends: [BodyId; 2],
    /// The joints, from the left: end-link, link-link, ..., link-end; all in rate-limit group 0.
    pub joints: Vec<JointId>,
}

/// Length of one chain link along the chain, m.
pub const CHAIN_LINK: f64 = 0.2;

/// The [`Chain`] of `links` links (0.2 x 0.1 x 0.1 m, 2 kg), glued end to end on the x axis by
/// fixed joints of 1e4 N/m (angular 1e2 N m/rad) breaking above 2 N s, the end cubes moving apart
/// at `speed` m/s each.
pub fn chain(model: EnergizedSettings, links: usize, speed: f64, observers: Observers) -> Result<Chain, FractureError> {
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    settings.gravity = DVec3::ZERO;
    let mut world = world_with_model(settings, model, observers)?;
    let half = DVec3::new(CHAIN_LINK / 2.0, 0.05, 0.05);
    let length = CHAIN_LINK * links as f64;
    let mut bodies = Vec::with_capacity(links + 2);
    let end = DVec3::splat(0.1);
    let left = world.add_body(
        BodyDesc::kinematic(box_collider(end)?)
            .with_position(DVec3::new(-length / 2.0 - 0.1, 0.0, 0.0))
            .with_velocity(DVec3::new(-speed, 0.0, 0.0), DVec3::ZERO),
    )?;
    bodies.push(left);
    let mut chain_links = Vec::with_capacity(links);
    for k in 0..links {
        let x = -length / 2.0 + (k as f64 + 0.5) * CHAIN_LINK;
        let link = world.add_body(
            BodyDesc::dynamic(box_collider(half)?)
                .with_mass(2.0)
                .with_position(DVec3::X * x),
        )?;
        chain_links.push(link);
        bodies.push(link);
    }
    let right = world.add_body(
        BodyDesc::kinematic(box_collider(end)?)
            .with_position(DVec3::new(length / 2.0 + 0.1, 0.0, 0.0))
            .with_velocity(DVec3::new(speed, 0.0, 0.0), DVec3::ZERO),
    )?;
    bodies.push(right);
    let anchors: Vec<PieceAnchor> = (0..=links)
        .map(|k| PieceAnchor {
            pieces: [k as u32, k as u32 + 1],
            point: DVec3::X * (-length / 2.0 + k as f64 * CHAIN_LINK),
        })
        .collect();
    let glue_rule = Glue {
        softness: Softness::SpringDamper {
            stiffness: 1.0e4,
            damping: 2.0 * (1.0e4 * 2.0f64).sqrt(),
        },
        angular_softness: Softness::SpringDamper {
            stiffness: 1.0e2,
            damping: 2.0 * (1.0e2 * 2.0 * CHAIN_LINK * CHAIN_LINK / 12.0).sqrt(),
        },
        breakable: Breakable::new(2.0).in_group(0),
    };
    let joints = glue(&mut world, &bodies, &anchors, &glue_rule)?;
    Ok(Chain {
        world,
        links: chain_links,
        ends: [left, right],
        joints,
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
