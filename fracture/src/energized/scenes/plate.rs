//! Li 2018 Fig. 4: a plate of cubes dropped on a sphere.

use glam::DVec3;
use shatter_collision::{Collider, Shape, Sphere};
use shatter_engine::{BodyDesc, BodyId, JointId, World, WorldSettings};
use shatter_solver::Softness;

use super::{Observers, PARTICLE_SPACING, add_ground, box_collider, box_grid_anchors, world_with_model};
use crate::energized::{Breakable, EnergizedSettings, Glue, glue};
use crate::error::FractureError;

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
