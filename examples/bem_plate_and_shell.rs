//! A ceramic plate and a hollow ceramic sphere dropped on a stone floor (Zhu 2015, Fig. 16):
//! boundary-element stress from the landing's contact impulses, cracks started by the Rankine
//! criterion and tracked on each surface mesh until they cut through.
//!
//! Both walls are meshed three elements or more through their thickness (the plate at 4 mm, the
//! shell at about 6 mm), which thin walls need before their bending shows in the stress
//! (`bem::crack::event`); the fronts add their own tips' field (`bem::crack::tip`), and runs of a
//! front that reach the far face break out through it (`bem::crack::breakout`), so a crack
//! through a wall runs on along it.
//!
//! A crack started in a thin wall runs through it: each body's ligament that breaks is its
//! wall's thickness, so the pieces are wherever the through-wall cracks span the body or meet
//! one another (`bem::crack::separate`, found on a grid when the surface's own cuts leave it
//! whole).
//!
//! What to look for: the plate, landing on its rim at a tilt, cracks from the rim where it
//! strikes, the cracks fanning out across it, and breaks into four large pieces (41, 23, 21 and
//! 15 % of its volume) and a chip; the shell cracks where it lands, cracks run through its wall
//! and round it, and it breaks in two (56 and 38 % of its volume) with chips along the cracks
//! (measured: plate 70 sub-steps, shell 167). Writes `out/bem/plate_and_shell.glb` and the
//! crack surfaces, in each body's own frame, to `out/bem/plate_and_shell_cracks.obj`. About
//! 90 s on two cores.
//!
//! `cargo run --release --example bem_plate_and_shell -- [FRAMES]` (default 30: one second).

use std::path::Path;

use glam::{DQuat, DVec3};
use shatter::bem_run::run_bem;
use shatter::collision::{Collider, Cuboid, Pose, Shape, TriMesh};
use shatter::engine::{BodyDesc, BodyId, World};
use shatter::fracture::bem::crack::{EventSettings, Rankine};
use shatter::fracture::bem::meshes::{disc, hollow_sphere};
use shatter::fracture::bem::{BemFracture, BemFractureSettings, BemMaterial, Elastic, bem_body_desc};
use shatter::scene_world::SceneWorld;

/// Porcelain: Young's modulus (Pa), Poisson's ratio and density (kg/m^3).
const PORCELAIN: (f64, f64, f64) = (70.0e9, 0.22, 2400.0);

/// A breakable porcelain body: its surface (edges about `edge`, m), wall thickness (m), where
/// it starts and how fast it moves.
struct Porcelain {
    mesh: TriMesh,
    edge: f64,
    wall: f64,
    pose: Pose,
    velocity: DVec3,
}

/// Adds `body` to `world`, breakable by `model`, cracking above `initiate` (Pa).
fn porcelain(
    world: &mut World,
    model: &mut BemFracture,
    body: Porcelain,
    initiate: f64,
) -> Result<BodyId, Box<dyn std::error::Error>> {
    let Porcelain {
        mesh,
        edge,
        wall,
        pose,
        velocity,
    } = body;
    let (young, poisson, density) = PORCELAIN;
    let settings = BemFractureSettings::default();
    let desc = bem_body_desc(&mesh, density, &pose, settings.resolution)?;
    let id = world.add_body(desc.with_velocity(velocity, DVec3::ZERO))?;
    // Fronts run on down to a fifth of the stress that starts a crack.
    let mut event = EventSettings::new(
        Elastic::try_new(young, poisson)?,
        Rankine::try_new(initiate, 0.2 * initiate)?,
        edge,
        0.1 * edge,
    );
    // The fronts move in the uncracked stress; their tips' field lets a crack run on.
    event.crack_tips = true;
    // A crack through the wall breaks out through the far face and runs on through it.
    event.track.break_out = true;
    // Fronts move at most half an edge per sub-step: crossing the 24 cm plate at 4 mm takes
    // 120 of them, more than the default allows.
    event.max_substeps = 200;
    // A crack started in a thin wall under bending runs through it (its stress intensity grows
    // with its depth): whatever ligament a stopped front leaves in the wall breaks, and the
    // cracks that span the wall, or meet one another, cut the body into pieces.
    event.ligament = wall + 0.5 * edge;
    model.make_breakable(world, id, mesh, BemMaterial::new(event, density), &pose, 5.0)?;
    Ok(id)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: usize = std::env::args().nth(1).map_or(Ok(30), |a| a.parse())?;
    let mut world = World::new();
    let floor = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::new(2.0, 0.25, 2.0))?), 0.1)?;
    world.add_body(BodyDesc::fixed(floor).with_position(DVec3::new(0.0, -0.25, 0.0)))?;
    let mut model = BemFracture::new(BemFractureSettings::default());
    // A 24 cm plate, 1.2 cm thick, tilted 20 degrees, its rim 2 cm above the floor at 5 m/s.
    let tilt = DQuat::from_rotation_z(20f64.to_radians());
    let plate_pose = Pose::new(DVec3::new(-0.3, 0.07, 0.0), tilt);
    let plate = porcelain(
        &mut world,
        &mut model,
        Porcelain {
            mesh: disc(0.12, 0.012, 0.004)?,
            edge: 0.004,
            wall: 0.012,
            pose: plate_pose,
            velocity: DVec3::new(0.0, -5.0, 0.0),
        },
        2.0e6,
    )?;
    // A shell of 10 cm outer and 8 cm inner radius, 2 cm above the floor at 6 m/s.
    let shell_pose = Pose::new(DVec3::new(0.3, 0.12, 0.0), DQuat::IDENTITY);
    let shell = porcelain(
        &mut world,
        &mut model,
        Porcelain {
            mesh: hollow_sphere(0.08, 0.1, 4)?,
            edge: 0.006,
            wall: 0.02,
            pose: shell_pose,
            velocity: DVec3::new(0.0, -6.0, 0.0),
        },
        2.0e6,
    )?;
    world.add_fracture_model(Box::new(model));
    let mut built = SceneWorld::from_world(world, 1.0 / 30.0, frames, &[(plate, "plate"), (shell, "shell")])?;
    let out = Path::new("out/bem");
    std::fs::create_dir_all(out)?;
    println!("a porcelain plate and a hollow sphere dropped on stone, {frames} frames at 30 Hz");
    print!("{}", run_bem("plate_and_shell", &mut built, frames, out)?);
    Ok(())
}
