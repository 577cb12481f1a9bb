//! Li 2018 Fig. 3: a beam prescored into two pieces lying in front of two goal posts, struck in
//! the middle by a fast block that pushes it through the goal.
//!
//! The paper's caption pins the beam between its posts; its text places the beam in front of the
//! posts as a block is pushed through the goal, which is what is built here. Pinned ends (rigid
//! ball joints) take up what the breaks give back: the kicks of Li's direction `-(tau x f)` point
//! along the beam into the pins, and the halves' motion 0.1 s after the break was the same at every
//! alpha (28.1, 28.3, 28.2, 28.2 J at alpha 0, 0.5, 1, 1.5).

use glam::DVec3;
use shatter_engine::{BodyDesc, BodyId, JointId, World, WorldSettings};
use shatter_solver::Softness;

use super::{Observers, add_ground, box_collider, box_grid_anchors, world_with_model};
use crate::energized::{Breakable, EnergizedSettings, Glue, glue};
use crate::error::FractureError;

/// Length of one beam piece along the beam (x), m; the beam is two of them.
pub const BEAM_PIECE: f64 = 1.0;
/// Side of the beam's square cross-section, m.
const BEAM_SECTION: f64 = 0.25;
/// Height of the beam's axis above the ground, m: it lies on the ground.
const BEAM_HEIGHT: f64 = BEAM_SECTION / 2.0;
/// Height of the goal posts, m.
const POST_HEIGHT: f64 = 1.5;
/// Gap between the beam and the posts, and between the block and the ground at the start, m.
const POST_GAP: f64 = 0.01;
/// Density of the beam (timber), kg/m^3.
const BEAM_DENSITY: f64 = 600.0;
/// Side of the block, m.
const BLOCK_SIDE: f64 = 0.4;
/// Density of the block, kg/m^3.
const BLOCK_DENSITY: f64 = 1000.0;
/// Side of a goal post's square cross-section, m.
const POST_SIDE: f64 = 0.2;

/// The [`beam`] scene.
pub struct Beam {
    /// The world, with its energized model.
    pub world: World,
    /// The two beam pieces, left (-x) then right.
    pub pieces: [BodyId; 2],
    /// The block, flying along +z at the beam's middle.
    pub block: BodyId,
    /// The two static posts, left then right.
    pub posts: [BodyId; 2],
    /// The glue joints between the pieces (the four corners of their shared face).
    pub joints: Vec<JointId>,
}

/// Two [`BEAM_PIECE`] m timber pieces (0.25 m square, 37.5 kg each) lying end to end on the
/// ground along x, glued at the four corners of their shared face (1e5 N/m, angular 1e3 N m/rad,
/// critically damped for one piece, breaking above 15 N s); two 1.5 m static goal posts stand just
/// behind the beam's ends; a 0.4 m block (64 kg) starts 1.2 m in front of the beam, 1 cm off the
/// ground, moving at `speed` m/s along +z into the beam's middle. The glue carries nothing at
/// rest; at 6 m/s the block breaks it, at 4 m/s it does not.
pub fn beam(model: EnergizedSettings, speed: f64, observers: Observers) -> Result<Beam, FractureError> {
    if !(speed.is_finite() && speed >= 0.0) {
        return Err(FractureError::invalid(
            "block speed (m/s)",
            speed,
            "a finite speed >= 0",
        ));
    }
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    let mut world = world_with_model(settings, model, observers)?;
    add_ground(&mut world)?;
    let half = DVec3::new(BEAM_PIECE, BEAM_SECTION, BEAM_SECTION) * 0.5;
    let piece = |world: &mut World, side: f64| -> Result<BodyId, FractureError> {
        Ok(world.add_body(
            BodyDesc::dynamic(box_collider(half)?)
                .with_density(BEAM_DENSITY)
                .with_position(DVec3::new(side * half.x, BEAM_HEIGHT, 0.0)),
        )?)
    };
    let pieces = [piece(&mut world, -1.0)?, piece(&mut world, 1.0)?];
    // The goal posts stand just behind the beam's ends.
    let post_half = DVec3::new(POST_SIDE / 2.0, POST_HEIGHT / 2.0, POST_SIDE / 2.0);
    let post = |world: &mut World, side: f64| -> Result<BodyId, FractureError> {
        let at = DVec3::new(
            side * (BEAM_PIECE - post_half.x),
            post_half.y,
            half.z + POST_GAP + post_half.z,
        );
        Ok(world.add_body(BodyDesc::fixed(box_collider(post_half)?).with_position(at))?)
    };
    let posts = [post(&mut world, -1.0)?, post(&mut world, 1.0)?];
    let block = world.add_body(
        BodyDesc::dynamic(box_collider(DVec3::splat(BLOCK_SIDE / 2.0))?)
            .with_density(BLOCK_DENSITY)
            .with_position(DVec3::new(0.0, BLOCK_SIDE / 2.0 + POST_GAP, -1.2))
            .with_velocity(DVec3::Z * speed, DVec3::ZERO),
    )?;
    let piece_mass = BEAM_DENSITY * BEAM_PIECE * BEAM_SECTION * BEAM_SECTION;
    let piece_inertia = piece_mass * (BEAM_PIECE * BEAM_PIECE + BEAM_SECTION * BEAM_SECTION) / 12.0;
    let corner = DVec3::new(-BEAM_PIECE, BEAM_HEIGHT - half.y, -half.z);
    let anchors = box_grid_anchors([2, 1, 1], 2.0 * half, corner);
    let glue_rule = Glue {
        softness: Softness::SpringDamper {
            stiffness: 1.0e5,
            damping: 2.0 * (1.0e5 * piece_mass).sqrt(),
        },
        angular_softness: Softness::SpringDamper {
            stiffness: 1.0e3,
            damping: 2.0 * (1.0e3 * piece_inertia).sqrt(),
        },
        breakable: Breakable::new(15.0),
    };
    let joints = glue(&mut world, &pieces, &anchors, &glue_rule)?;
    Ok(Beam {
        world,
        pieces,
        block,
        posts,
        joints,
    })
}
