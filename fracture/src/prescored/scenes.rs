//! Scenes of the prescored method, shared by its tests, benches and examples (the facade's scene
//! library re-exports them): Su 2009's walls hit at several places by one pattern and a ball that
//! shatters on a wall that holds (Fig. 4, [`walls`]), a cylinder shattered by a sphere (Fig. 5,
//! [`cylinder`]), the Stanford bunny (Fig. 6, [`bunny`]) and a wall broken in a corner whose large
//! fragment a second ball breaks again (Fig. 7, [`corner`]), and a table top under a pile of
//! small spheres shattered into thousands of pieces by a large one (Fig. 8, [`table`]).
//!
//! Every scene is a world on a static ground with the prescored model registered; one step per
//! 30 Hz frame. Level-set resolutions are the paper's: walls 150 x 10 x 100, balls 55 across, the
//! cylinder 55 x 105 x 55, the bunny 70 x 60 x 45, the table top 150 x 10 x 100.

use std::sync::{Arc, OnceLock};

use glam::{DQuat, DVec3};
use shatter_collision::level_set::level_set_from_mesh;
use shatter_collision::particles::sample_surface;
use shatter_collision::{BodyMassProperties, Collider, Cuboid, GridSpec, HalfSpace, Pose, Shape, Sphere, TriMesh};
use shatter_engine::{BodyDesc, BodyId, Material, World};
use shatter_integrators::SplitMix64;

use super::generators::{RadialPattern, SpiralPattern, SpokeLayout};
use super::intersect::lattice_integrals;
use super::model::{PrescoredFracture, PrescoredSettings};
use super::pattern::FracturePattern;
use crate::error::FractureError;
use crate::fragments::{LevelSetPiece, ParentMotion, level_set_fragment_desc};

/// A wall's half extents, m: 3 m wide, 2 m tall, 0.2 m thick.
pub const WALL_HALF_EXTENTS: DVec3 = DVec3::new(1.5, 1.0, 0.1);
/// Lattice cells along a wall's longest side (150 x 100 x 10 in all).
pub const WALL_CELLS: usize = 150;
/// Density of the walls, the cylinder and the bunny (concrete), kg/m^3.
pub const CONCRETE: f64 = 2300.0;
/// Density of the balls (steel), kg/m^3.
pub const STEEL: f64 = 7800.0;
/// Radius of the balls, m.
pub const BALL_RADIUS: f64 = 0.25;
/// Surface particle spacing of the scenes' analytic bodies, m.
const PARTICLE_SPACING: f64 = 0.03;

/// A scene: the world, ready to step, and names for its bodies.
pub struct PrescoredScene {
    /// The world, with the prescored model registered.
    pub world: World,
    /// Names of the bodies for viewers.
    pub names: Vec<(BodyId, String)>,
}

impl PrescoredScene {
    /// An empty scene: a ground plane, no gravity change (-9.81 m/s^2 along y).
    fn new() -> Result<Self, FractureError> {
        let mut world = World::new();
        let ground = world.add_body(
            BodyDesc::fixed(Collider::from_shape(
                Shape::HalfSpace(HalfSpace::try_new(DVec3::Y, 0.0)?),
                1.0,
            )?)
            .with_material(Material {
                friction: 0.8,
                restitution: 0.0,
            }),
        )?;
        Ok(Self {
            world,
            names: vec![(ground, "ground".into())],
        })
    }

    /// Adds a body named `name`.
    fn add(&mut self, desc: BodyDesc, name: impl Into<String>) -> Result<BodyId, FractureError> {
        let id = self.world.add_body(desc)?;
        self.names.push((id, name.into()));
        Ok(id)
    }

    /// Adds a standing wall centred at `x` (m) along the x axis, face towards +z.
    fn wall(&mut self, x: f64, name: &str) -> Result<BodyId, FractureError> {
        let shape = Shape::Cuboid(Cuboid::try_new(WALL_HALF_EXTENTS)?);
        let desc = BodyDesc::dynamic(Collider::from_shape(shape, PARTICLE_SPACING)?)
            .with_density(CONCRETE)
            .with_position(DVec3::new(x, WALL_HALF_EXTENTS.y, 0.0))
            .with_material(Material {
                friction: 0.7,
                restitution: 0.0,
            });
        self.add(desc, name)
    }

    /// Adds a steel ball at `position` moving with `velocity`.
    fn ball(&mut self, position: DVec3, velocity: DVec3, name: &str) -> Result<BodyId, FractureError> {
        let shape = Shape::Sphere(Sphere::try_new(BALL_RADIUS)?);
        let desc = BodyDesc::dynamic(Collider::from_shape(shape, PARTICLE_SPACING)?)
            .with_density(STEEL)
            .with_position(position)
            .with_velocity(velocity, DVec3::ZERO);
        self.add(desc, name)
    }

    /// Registers `model`.
    fn finish(mut self, model: PrescoredFracture) -> Self {
        self.world.add_fracture_model(Box::new(model));
        self
    }
}

/// The impact-centred dart board of the walls: rings of cells growing outward, cut by spokes,
/// regions running through the wall's thickness.
pub fn dartboard() -> Result<FracturePattern, FractureError> {
    FracturePattern::radial(&RadialPattern::default())
}

/// The impact-centred pattern of solid bodies: rings of wedges in every direction.
pub fn starburst(rings: usize, spokes: usize) -> Result<FracturePattern, FractureError> {
    FracturePattern::radial(&RadialPattern {
        rings,
        spokes,
        inner_radius: 0.06,
        growth: 1.9,
        layout: SpokeLayout::Sphere,
        ..RadialPattern::default()
    })
}

/// Settings the scenes share: debris below 0.2 litre (a 6 cm cube) merged into its neighbour.
fn settings() -> PrescoredSettings {
    PrescoredSettings {
        min_fragment_volume: 2e-4,
        ..PrescoredSettings::default()
    }
}

/// Su 2009 Fig. 4: three walls, each hit by a 12 m/s ball at a different place (centre, lower
/// left, upper right), all broken by the same dart-board pattern aligned on each impact; and a
/// fourth wall, made too strong to break, hit by a ball that shatters with the same pattern.
pub fn walls() -> Result<PrescoredScene, FractureError> {
    let mut scene = PrescoredScene::new()?;
    let pattern = Arc::new(dartboard()?);
    let mut model = PrescoredFracture::new(settings())?;
    let hits = [
        DVec3::new(0.0, 1.0, 0.0),
        DVec3::new(-0.9, 0.45, 0.0),
        DVec3::new(0.8, 1.55, 0.0),
    ];
    for (index, hit) in hits.iter().enumerate() {
        let x = 4.0 * index as f64;
        let wall = scene.wall(x, &format!("wall_{index}"))?;
        model.make_breakable(&scene.world, wall, pattern.clone(), 2000.0, WALL_CELLS)?;
        scene.ball(
            DVec3::new(x + hit.x, hit.y, 1.0),
            DVec3::new(0.0, 0.0, -12.0),
            &format!("ball_{index}"),
        )?;
    }
    let strong = scene.wall(12.0, "wall_strong")?;
    model.make_breakable(&scene.world, strong, pattern.clone(), 1e9, WALL_CELLS)?;
    let ball = scene.ball(DVec3::new(12.0, 1.0, 1.0), DVec3::new(0.0, 0.0, -12.0), "ball_brittle")?;
    model.make_breakable(&scene.world, ball, pattern, 500.0, 55)?;
    Ok(scene.finish(model))
}

/// How much stronger the cylinder's pieces are than the cylinder (see [`cylinder`]).
const CYLINDER_PIECES_STRENGTH: f64 = 2.0;

/// Su 2009 Fig. 5: a concrete cylinder 1 m across and 1.91 m tall (lattice 55 x 105 x 55) hit
/// at 10 m/s by a steel ball at two thirds of its height, broken into about 25 pieces.
pub fn cylinder() -> Result<PrescoredScene, FractureError> {
    let mut scene = PrescoredScene::new()?;
    let height = 105.0 / 55.0;
    let mesh = cylinder_mesh(0.5, height, 48);
    // A centimetre above the ground, so it settles with its weight's impulse, far below the
    // threshold, while the ball is on its way.
    let desc = BodyDesc::dynamic_mesh(mesh, 105, PARTICLE_SPACING)
        .with_density(CONCRETE)
        .with_position(DVec3::new(0.0, 0.5 * height + 0.01, 0.0));
    let cylinder = scene.add(desc, "cylinder")?;
    scene.ball(DVec3::new(0.0, 0.66 * height, 1.0), DVec3::new(0.0, 0.0, -10.0), "ball")?;
    // The figure breaks once. Its pieces weigh up to a few hundred kilograms, and one toppling
    // flat onto the ground lands with 1.5 to 2.7 kN s, about the cylinder's own threshold: at
    // that threshold whether one breaks again within the 2 s depends on the smallest change in
    // how the pieces fall. At twice it none does.
    let mut model = PrescoredFracture::new(PrescoredSettings {
        fragment_threshold_scale: CYLINDER_PIECES_STRENGTH,
        ..settings()
    })?;
    model.make_breakable(&scene.world, cylinder, Arc::new(starburst(3, 16)?), 2500.0, 105)?;
    Ok(scene.finish(model))
}

/// Su 2009 Fig. 6: the Stanford bunny `mesh` scaled to 1 m long (lattice 70 x 60 x 45), hit at
/// 10 m/s by a steel ball, broken into about 35 pieces.
pub fn bunny(mesh: &TriMesh) -> Result<PrescoredScene, FractureError> {
    let bounds = mesh
        .bounds()
        .ok_or_else(|| FractureError::input("the bunny mesh is empty"))?;
    let scale = 1.0 / bounds.size().max_element();
    let centred = mesh.transformed(glam::DAffine3::from_scale_rotation_translation(
        DVec3::splat(scale),
        DQuat::IDENTITY,
        -bounds.center() * scale,
    ));
    let lift = 0.5 * bounds.size().y * scale + 0.01;
    let mut scene = PrescoredScene::new()?;
    // The scan is open at its base: the level set takes its inside from the winding number, and
    // the mass properties come from the level set's cells (so its fragments' cells are its own).
    let spec = GridSpec::with_resolution(centred.bounds().unwrap_or(bounds), 70, 2)?;
    let level_set = level_set_from_mesh(&centred, spec)?;
    let mass = BodyMassProperties::from_integrals(lattice_integrals(&level_set), CONCRETE)?;
    let piece = LevelSetPiece {
        mass,
        level_set,
        particles: sample_surface(&centred, PARTICLE_SPACING, 0)?,
    };
    let at_rest = ParentMotion {
        centre: DVec3::ZERO,
        linear_velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
    };
    let desc = level_set_fragment_desc(piece, &Pose::from_position(DVec3::new(0.0, lift, 0.0)), &at_rest)?;
    let bunny = scene.add(desc, "bunny")?;
    scene.ball(DVec3::new(0.0, lift, 1.2), DVec3::new(0.0, 0.0, -10.0), "ball")?;
    let mut model = PrescoredFracture::new(settings())?;
    model.make_breakable(&scene.world, bunny, Arc::new(starburst(4, 16)?), 400.0, 70)?;
    Ok(scene.finish(model))
}

/// Su 2009 Fig. 7: a wall hit in its lower right corner, leaving large pieces far from the
/// impact; a second ball, launched from farther away, arrives later and breaks one of those again.
pub fn corner() -> Result<PrescoredScene, FractureError> {
    let mut scene = PrescoredScene::new()?;
    let wall = scene.wall(0.0, "wall")?;
    scene.ball(DVec3::new(1.2, 0.3, 0.8), DVec3::new(0.0, 0.0, -12.0), "ball_corner")?;
    scene.ball(DVec3::new(-0.8, 1.4, 7.0), DVec3::new(0.0, 0.0, -15.0), "ball_second")?;
    let mut model = PrescoredFracture::new(settings())?;
    model.make_breakable(&scene.world, wall, Arc::new(dartboard()?), 2000.0, WALL_CELLS)?;
    Ok(scene.finish(model))
}

/// The table top's half extents, m: 3 m x 2 m, 0.2 m thick (lattice 150 x 10 x 100).
pub const TABLE_HALF_EXTENTS: DVec3 = DVec3::new(1.5, 0.1, 1.0);
/// Radius of the small spheres piled on the table, m.
pub const SMALL_SPHERE_RADIUS: f64 = 0.05;
/// Radius of the steel sphere that shatters the table, m.
pub const LARGE_SPHERE_RADIUS: f64 = 0.4;
/// Frame (30 Hz) by which the large sphere has hit the table.
pub const TABLE_IMPACT_FRAME: usize = 52;

/// The table top's pattern: thousands of prisms across the top, a few centimetres wide at the
/// impact and growing outward.
pub fn table_pattern() -> Result<FracturePattern, FractureError> {
    FracturePattern::spiral(&SpiralPattern {
        count: 8000,
        radius: 0.75,
        concentration: 0.7,
        ..SpiralPattern::default()
    })
}

/// [`table_pattern`], made once per process: its 8000 sites take seconds to cut into cells, and
/// every table scene (each run of a bench) uses the same pattern.
fn shared_table_pattern() -> Result<Arc<FracturePattern>, FractureError> {
    static PATTERN: OnceLock<Arc<FracturePattern>> = OnceLock::new();
    if let Some(pattern) = PATTERN.get() {
        return Ok(pattern.clone());
    }
    let made = Arc::new(table_pattern()?);
    Ok(PATTERN.get_or_init(|| made).clone())
}

/// Contact margin of the table scene, m (see [`table`]).
pub const TABLE_CONTACT_MARGIN: f64 = 0.005;

/// Su 2009 Fig. 8: `spheres` small rubber spheres (the paper drops 1000) fall in a loose column
/// onto a concrete table top resting on four static legs; once they have landed, a 2 t steel
/// sphere dropped from 14 m hits the top (by [`TABLE_IMPACT_FRAME`]) and shatters it into
/// thousands of pieces that fall with the spheres to the ground.
pub fn table(spheres: usize) -> Result<PrescoredScene, FractureError> {
    let mut scene = PrescoredScene::new()?;
    // The pieces are a few centimetres across: the world's default margin (2 cm) would keep
    // every piece in contact with all its neighbours within half a piece, three rows each. What
    // the margin is for beyond the pair's own approach (which speculative contacts follow
    // anyway) is the curvature of a spinning point's path, millimetres here.
    let mut settings = *scene.world.settings();
    settings.contact_margin = TABLE_CONTACT_MARGIN;
    scene.world.set_settings(settings)?;
    let top_height = 1.0;
    let leg_half = DVec3::new(0.08, 0.5 * (top_height - TABLE_HALF_EXTENTS.y), 0.08);
    for (index, (x, z)) in [(-1.3, -0.8), (1.3, -0.8), (-1.3, 0.8), (1.3, 0.8)]
        .into_iter()
        .enumerate()
    {
        let leg = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(leg_half)?), PARTICLE_SPACING)?;
        let desc = BodyDesc::fixed(leg).with_position(DVec3::new(x, leg_half.y, z));
        scene.add(desc, format!("leg_{index}"))?;
    }
    let top = Shape::Cuboid(Cuboid::try_new(TABLE_HALF_EXTENTS)?);
    let desc = BodyDesc::dynamic(Collider::from_shape(top, PARTICLE_SPACING)?)
        .with_density(CONCRETE)
        .with_position(DVec3::new(0.0, top_height, 0.0))
        .with_material(Material {
            friction: 0.7,
            restitution: 0.0,
        });
    let table = scene.add(desc, "table")?;
    // A 10 x 10 column of layers, 13 cm apart, each sphere nudged by up to a centimetre so the
    // column topples into a pile instead of standing.
    let mut random = SplitMix64::new(8);
    let pitch = 0.13;
    for i in 0..spheres {
        let (column, row, layer) = (i % 10, (i / 10) % 10, i / 100);
        let nudge = DVec3::new(random.next_f64() - 0.5, 0.0, random.next_f64() - 0.5) * 0.02;
        let position = DVec3::new(
            (column as f64 - 4.5) * pitch,
            top_height + 0.25 + layer as f64 * pitch,
            (row as f64 - 4.5) * pitch,
        ) + nudge;
        let sphere = Collider::from_shape(Shape::Sphere(Sphere::try_new(SMALL_SPHERE_RADIUS)?), 0.02)?;
        let desc = BodyDesc::dynamic(sphere)
            .with_density(1100.0)
            .with_position(position)
            .with_material(Material {
                friction: 0.6,
                restitution: 0.0,
            });
        scene.add(desc, format!("sphere_{i}"))?;
    }
    let large = Collider::from_shape(Shape::Sphere(Sphere::try_new(LARGE_SPHERE_RADIUS)?), PARTICLE_SPACING)?;
    let desc = BodyDesc::dynamic(large)
        .with_density(STEEL)
        .with_position(DVec3::new(0.5, 14.0, 0.35));
    scene.add(desc, "large_sphere")?;
    let mut model = PrescoredFracture::new(PrescoredSettings {
        min_fragment_volume: 1e-5,
        ..PrescoredSettings::default()
    })?;
    model.make_breakable(&scene.world, table, shared_table_pattern()?, 4000.0, WALL_CELLS)?;
    Ok(scene.finish(model))
}

/// A closed cylinder of `radius` and `height` (m) about the y axis, centred, `segments` around.
pub fn cylinder_mesh(radius: f64, height: f64, segments: usize) -> TriMesh {
    let half = 0.5 * height;
    let mut vertices = vec![DVec3::new(0.0, -half, 0.0), DVec3::new(0.0, half, 0.0)];
    for i in 0..segments {
        let angle = std::f64::consts::TAU * i as f64 / segments as f64;
        let (s, c) = angle.sin_cos();
        vertices.push(DVec3::new(radius * c, -half, radius * s));
        vertices.push(DVec3::new(radius * c, half, radius * s));
    }
    let mut triangles = Vec::with_capacity(4 * segments);
    for i in 0..segments as u32 {
        let (b0, t0) = (2 + 2 * i, 3 + 2 * i);
        let next = (i + 1) % segments as u32;
        let (b1, t1) = (2 + 2 * next, 3 + 2 * next);
        triangles.push([0, b0, b1]);
        triangles.push([1, t1, t0]);
        triangles.push([b0, t0, t1]);
        triangles.push([b0, t1, b1]);
    }
    TriMesh::try_new(vertices, triangles).expect("indices are in range")
}
