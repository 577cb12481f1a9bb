//! A solid steel ball thrown at a wall (Chen 2014, Fig. 9), run twice: with the particles as
//! the mesh made them, and with particles split 1-to-12 along every crack.
//!
//! What to look for: the ball punches a hole and cracks run out from it; with subdivision the
//! crack faces follow the crack planes more closely and the pieces have finer edges (more
//! particles along the cracks, more links cut). Writes `out/sph/wall_plain.glb` and
//! `out/sph/wall_subdivided.glb`.
//!
//! `cargo run --release --example sph_wall -- [FRAMES] [CELLS]` (default 45 frames, 20 lattice
//! boxes along the wall's length).

use std::path::Path;

use glam::DVec3;
use shatter::collision::{Collider, Cuboid, Pose, Shape, Sphere};
use shatter::engine::{BodyDesc, World};
use shatter::fracture::fragments::FragmentResolution;
use shatter::fracture::sph::scenes::box_solid;
use shatter::fracture::sph::{CrackSettings, SphFracture, SphFractureSettings, SphMaterial, sph_body_desc};
use shatter::scene_world::SceneWorld;
use shatter::sph_run::run_sph;

/// The wall's half extents, m: 1.6 m long, 1 m high, 20 cm thick.
const WALL: DVec3 = DVec3::new(0.8, 0.5, 0.1);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let frames: usize = args.next().map_or(Ok(45), |a| a.parse())?;
    let cells: usize = args.next().map_or(Ok(20), |a| a.parse())?;
    let out = Path::new("out/sph");
    std::fs::create_dir_all(out)?;
    for (name, subdivision) in [("wall_plain", false), ("wall_subdivided", true)] {
        let mut world = World::new();
        let ground = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::new(4.0, 0.25, 4.0))?), 0.2)?;
        let ground = world.add_body(BodyDesc::fixed(ground).with_position(DVec3::new(0.0, -0.25, 0.0)))?;
        let solid = box_solid(WALL, cells)?;
        let particles = solid.len();
        let material = SphMaterial {
            density: 1800.0,
            young: 1.0e10,
            poisson: 0.2,
            tensile_strength: 1.5e6,
            crack_radius: 0.3,
            contact_radius: 0.1,
            subdivision,
            max_level: 1,
        };
        let settings = SphFractureSettings {
            resolution: FragmentResolution {
                cells: 28,
                particle_spacing: 0.02,
            },
            crack: CrackSettings {
                min_piece: 0.0005,
                ..CrackSettings::default()
            },
            ..SphFractureSettings::default()
        };
        let mesh_pose = Pose::new(DVec3::new(0.0, WALL.y, 0.0), glam::DQuat::IDENTITY);
        let wall = world.add_body(sph_body_desc(&solid, &material, &mesh_pose, settings.resolution)?)?;
        let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.15)?), 0.03)?;
        let ball = world.add_body(
            BodyDesc::dynamic(ball)
                .with_density(7800.0)
                .with_position(DVec3::new(0.1, 0.55, 0.6))
                .with_velocity(DVec3::new(0.0, 0.0, -12.0), DVec3::ZERO),
        )?;
        let mut model = SphFracture::new(settings);
        model.make_breakable(&world, wall, solid, material, &mesh_pose, 400.0)?;
        world.add_fracture_model(Box::new(model));
        let names = [(ground, "ground"), (wall, "wall"), (ball, "ball")];
        let mut built = SceneWorld::from_world(world, 1.0 / 30.0, frames, &names)?;
        println!("{name}: {particles} particles, subdivision {subdivision}");
        print!("{}", run_sph(name, &mut built, frames, out)?);
    }
    Ok(())
}
