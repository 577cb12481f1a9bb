//! Benchmark scenes: piles of boxes and balls dropped on a static box, described in terms any
//! rigid-body engine understands (a list of boxes and balls with a pose, a density and a surface
//! material), so that the same bodies can be built in shatter and in another engine and the two
//! timed side by side (the `shatter-peers` crate does that with rapier3d).
//!
//! Every scene lists its static ground first, then its dynamic bodies. The ground's top face is the
//! plane y = 0. Units are SI, Y up.

use glam::{DQuat, DVec3};

use super::stability::{LATTICE_BOX_SIZE, ball_collider, box_collider, box_lattice, pyramid};
use crate::collision::{Collider, Cuboid, Geometry, Shape};
use crate::engine::{BodyDesc, BodyGeometry, BodyId, MassSource, Material, World, WorldSettings};
use crate::integrators::BodyKind;

/// The solid a benchmark body is made of, centred on its centre of mass, in its body frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BenchmarkShape {
    /// A box with these half extents, m.
    Cuboid(DVec3),
    /// A ball of this radius, m.
    Ball(f64),
}

impl BenchmarkShape {
    /// Enclosed volume, m^3.
    pub fn volume(&self) -> f64 {
        match *self {
            Self::Cuboid(half_extents) => 8.0 * half_extents.element_product(),
            Self::Ball(radius) => 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3),
        }
    }
}

/// Surface particles of a static box are this fraction of its longest side apart. Box pairs take
/// the closed form, so a static box's particles only ever meet dynamic balls, whose own particles
/// already find the box's exact distance; a coarse set (the corners are always particles) keeps a
/// 100 m ground from needing hundreds of thousands of them.
pub const STATIC_PARTICLE_FRACTION: f64 = 1.0 / 20.0;

/// One body of a benchmark scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchmarkBody {
    /// Static (never moves, infinite mass) rather than dynamic.
    pub fixed: bool,
    /// The solid.
    pub shape: BenchmarkShape,
    /// Centre of mass, world frame, m.
    pub position: DVec3,
    /// Rotation from the body frame to the world frame, a unit quaternion.
    pub orientation: DQuat,
    /// Uniform density of a dynamic body, kg/m^3 (unused for a static one).
    pub density: f64,
    /// Friction and restitution; shatter combines a pair's as [`Material`] says (geometric mean of
    /// the frictions, larger restitution).
    pub material: Material,
}

impl BenchmarkBody {
    /// Mass of a dynamic body, kg; infinite for a static one.
    pub fn mass(&self) -> f64 {
        if self.fixed {
            f64::INFINITY
        } else {
            self.density * self.shape.volume()
        }
    }

    /// The same body read back from a scene-library description: a dynamic or static analytic box
    /// or ball whose mass is given by a density. `None` for anything else (meshes, level sets,
    /// capsules, half-spaces, kinematic bodies, explicit masses, moving bodies).
    pub fn from_desc(desc: &BodyDesc) -> Option<Self> {
        let BodyGeometry::Collider(collider) = &desc.geometry else {
            return None;
        };
        let shape = match collider.geometry() {
            Geometry::Shape(Shape::Cuboid(cuboid)) => BenchmarkShape::Cuboid(cuboid.half_extents()),
            Geometry::Shape(Shape::Sphere(sphere)) => BenchmarkShape::Ball(sphere.radius()),
            _ => return None,
        };
        let MassSource::Density(density) = desc.mass else {
            return None;
        };
        let fixed = match desc.kind {
            BodyKind::Static => true,
            BodyKind::Dynamic => false,
            BodyKind::Kinematic => return None,
        };
        let at_rest = desc.linear_velocity == DVec3::ZERO && desc.angular_velocity == DVec3::ZERO;
        at_rest.then_some(Self {
            fixed,
            shape,
            position: desc.pose.position,
            orientation: desc.pose.orientation,
            density,
            material: desc.material,
        })
    }

    /// shatter's collider for the body: a dynamic body's surface particles as the scene library's
    /// [`box_collider`] and [`ball_collider`] place them, a static box's
    /// [`STATIC_PARTICLE_FRACTION`] of its longest side apart.
    pub fn collider(&self) -> Collider {
        match (self.shape, self.fixed) {
            (BenchmarkShape::Cuboid(half_extents), true) => {
                let cuboid = Cuboid::try_new(half_extents).expect("positive half extents");
                let spacing = 2.0 * half_extents.max_element() * STATIC_PARTICLE_FRACTION;
                Collider::from_shape(Shape::Cuboid(cuboid), spacing).expect("a valid cuboid")
            }
            (BenchmarkShape::Cuboid(half_extents), false) => box_collider(half_extents),
            (BenchmarkShape::Ball(radius), _) => ball_collider(radius),
        }
    }

    /// shatter's description of the body, with `collider` (which must be [`Self::collider`]).
    fn desc_with(&self, collider: Collider) -> BodyDesc {
        let desc = if self.fixed {
            BodyDesc::fixed(collider)
        } else {
            BodyDesc::dynamic(collider).with_density(self.density)
        };
        desc.with_position(self.position)
            .with_orientation(self.orientation)
            .with_material(self.material)
    }
}

/// A benchmark scene: its name, its bodies and the time steps it is run at.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchmarkScene {
    /// Short name, as benches and tables print it (`pile_1000`).
    pub name: &'static str,
    /// The bodies, static ground first.
    pub bodies: Vec<BenchmarkBody>,
    /// Time steps the scene is meant to be run at, s, one step per frame.
    pub time_steps: Vec<f64>,
}

impl BenchmarkScene {
    /// shatter's descriptions of the bodies, in order. Bodies of the same shape and kind share one
    /// collider (clones of a collider share its particles), so building is cheap after the first.
    pub fn descs(&self) -> Vec<BodyDesc> {
        let mut colliders: Vec<((BenchmarkShape, bool), Collider)> = Vec::new();
        self.bodies
            .iter()
            .map(|body| {
                let key = (body.shape, body.fixed);
                let collider = match colliders.iter().find(|(k, _)| *k == key) {
                    Some((_, collider)) => collider.clone(),
                    None => {
                        let collider = body.collider();
                        colliders.push((key, collider.clone()));
                        collider
                    }
                };
                body.desc_with(collider)
            })
            .collect()
    }

    /// A world with the default settings, sleeping on or off, holding `descs` (from
    /// [`Self::descs`]); returns it with the bodies' handles in order.
    pub fn world_from(descs: Vec<BodyDesc>, sleeping: bool) -> (World, Vec<BodyId>) {
        let mut settings = WorldSettings::default();
        settings.sleep.enabled = sleeping;
        let mut world = World::try_with_settings(settings).expect("the default settings are valid");
        let ids = descs
            .into_iter()
            .map(|desc| world.add_body(desc).expect("a valid benchmark body"))
            .collect();
        (world, ids)
    }

    /// The scene as a shatter world with the default settings, sleeping on or off; returns it
    /// with the bodies' handles in order.
    pub fn world(&self, sleeping: bool) -> (World, Vec<BodyId>) {
        Self::world_from(self.descs(), sleeping)
    }

    /// Number of dynamic bodies.
    pub fn dynamic_count(&self) -> usize {
        self.bodies.iter().filter(|body| !body.fixed).count()
    }
}

/// Density of every dynamic benchmark body, kg/m^3 (water).
pub const BENCHMARK_DENSITY: f64 = 1000.0;
/// Friction coefficient of every benchmark surface, dynamic and static.
pub const BENCHMARK_FRICTION: f64 = 0.5;
/// Half extents of the ground box under the box scenes, m (a 100 x 1 x 100 m box).
pub const GROUND_HALF_EXTENTS: DVec3 = DVec3::new(50.0, 0.5, 50.0);
/// Half extents of the slab under the falling balls, m (a 10 x 0.5 x 10 m slab).
pub const SLAB_HALF_EXTENTS: DVec3 = DVec3::new(5.0, 0.25, 5.0);
/// Distance between neighbouring box centres in the piles, m.
pub const PILE_PITCH: f64 = 1.1;
/// Gap between the lowest boxes of a pile and the ground, m.
pub const PILE_CLEARANCE: f64 = 0.1;
/// Seed of the random orientations of [`pile_1000_random_orientation`].
pub const PILE_ORIENTATION_SEED: u64 = 7;
/// Radius of the falling balls, m.
pub const BALL_RADIUS: f64 = 0.25;
/// Distance between neighbouring ball centres, m.
pub const BALL_PITCH: f64 = 0.6;
/// Gap between the lowest balls and the slab, m.
pub const BALL_CLEARANCE: f64 = 1.0;

/// Every benchmark scene, in the order tables print them.
pub fn benchmark_scenes() -> Vec<BenchmarkScene> {
    vec![
        pile_1000(),
        pile_1000_random_orientation(),
        pyramid_20(),
        spheres_on_table_1000(),
    ]
}

/// The benchmark scene called `name`, if there is one.
pub fn benchmark_scene(name: &str) -> Option<BenchmarkScene> {
    benchmark_scenes().into_iter().find(|scene| scene.name == name)
}

/// A static box with `half_extents` (m) whose top face is the plane y = 0.
fn ground_box(half_extents: DVec3) -> BenchmarkBody {
    BenchmarkBody {
        fixed: true,
        shape: BenchmarkShape::Cuboid(half_extents),
        position: DVec3::new(0.0, -half_extents.y, 0.0),
        orientation: DQuat::IDENTITY,
        density: BENCHMARK_DENSITY,
        material: benchmark_material(),
    }
}

/// Friction [`BENCHMARK_FRICTION`], no restitution.
fn benchmark_material() -> Material {
    Material {
        friction: BENCHMARK_FRICTION,
        restitution: 0.0,
    }
}

/// The ground box and the bodies of `descs` moved up by `lift` m.
fn on_ground(descs: &[BodyDesc], lift: f64, time_steps: Vec<f64>, name: &'static str) -> BenchmarkScene {
    let mut bodies = vec![ground_box(GROUND_HALF_EXTENTS)];
    bodies.extend(descs.iter().map(|desc| {
        let mut body = BenchmarkBody::from_desc(desc).expect("the scene library's boxes are plain boxes");
        body.position.y += lift;
        body
    }));
    BenchmarkScene {
        name,
        bodies,
        time_steps,
    }
}

/// A thousand unit boxes (water density, friction 0.5, no restitution) on a 10 x 10 x 10
/// lattice of 1.1 m pitch, axis-aligned, the lowest layer's bottom faces 0.1 m above a static
/// 100 x 1 x 100 m ground box. The top layer falls about 10 m. Run at 1/60 and 1/30 s.
pub fn pile_1000() -> BenchmarkScene {
    pile(None, "pile_1000", vec![1.0 / 60.0, 1.0 / 30.0])
}

/// [`pile_1000`] with every box in a uniformly random orientation (seed
/// [`PILE_ORIENTATION_SEED`]); neighbours may start interpenetrating, like freshly spawned fracture
/// debris. Run at 1/30 and 1/60 s.
pub fn pile_1000_random_orientation() -> BenchmarkScene {
    pile(
        Some(PILE_ORIENTATION_SEED),
        "pile_1000_random_orientation",
        vec![1.0 / 30.0, 1.0 / 60.0],
    )
}

/// The boxes of [`box_lattice`] (lowest centres one pitch up) lowered so the lowest bottom faces
/// are [`PILE_CLEARANCE`] above the ground.
fn pile(seed: Option<u64>, name: &'static str, time_steps: Vec<f64>) -> BenchmarkScene {
    let lift = LATTICE_BOX_SIZE / 2.0 + PILE_CLEARANCE - PILE_PITCH;
    on_ground(&box_lattice(10, PILE_PITCH, seed), lift, time_steps, name)
}

/// The two-dimensional pyramid of [`pyramid`]`(20, 0.05)`: 210 unit boxes (water density,
/// friction 0.5, no restitution), 20 in the bottom row, resting on a static 100 x 1 x 100 m ground
/// box. Run at 1/30 s.
pub fn pyramid_20() -> BenchmarkScene {
    on_ground(&pyramid(20, 0.05), 0.0, vec![1.0 / 30.0], "pyramid_20")
}

/// A thousand balls of radius 0.25 m (water density, friction 0.5, no restitution) on a
/// 10 x 10 x 10 lattice of 0.6 m pitch centred over the origin, the lowest balls' bottoms 1 m above
/// a static 10 x 0.5 x 10 m slab. Run at 1/30 s.
pub fn spheres_on_table_1000() -> BenchmarkScene {
    let side = 10;
    let offset = (side as f64 - 1.0) * BALL_PITCH / 2.0;
    let mut bodies = vec![ground_box(SLAB_HALF_EXTENTS)];
    for layer in 0..side {
        for row in 0..side {
            for column in 0..side {
                bodies.push(BenchmarkBody {
                    fixed: false,
                    shape: BenchmarkShape::Ball(BALL_RADIUS),
                    position: DVec3::new(
                        column as f64 * BALL_PITCH - offset,
                        BALL_CLEARANCE + BALL_RADIUS + layer as f64 * BALL_PITCH,
                        row as f64 * BALL_PITCH - offset,
                    ),
                    orientation: DQuat::IDENTITY,
                    density: BENCHMARK_DENSITY,
                    material: benchmark_material(),
                });
            }
        }
    }
    BenchmarkScene {
        name: "spheres_on_table_1000",
        bodies,
        time_steps: vec![1.0 / 30.0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lowest point of a dynamic body (its centre minus its reach straight down), m.
    fn bottom(body: &BenchmarkBody) -> f64 {
        match body.shape {
            BenchmarkShape::Cuboid(half_extents) => {
                let axes = [DVec3::X, DVec3::Y, DVec3::Z].map(|axis| body.orientation * axis);
                let reach: f64 = (0..3).map(|i| half_extents[i] * axes[i].y.abs()).sum();
                body.position.y - reach
            }
            BenchmarkShape::Ball(radius) => body.position.y - radius,
        }
    }

    fn dynamic(scene: &BenchmarkScene) -> Vec<BenchmarkBody> {
        scene.bodies.iter().filter(|b| !b.fixed).copied().collect()
    }

    #[test]
    fn benchmarks_ground_comes_first_with_its_top_at_zero() {
        for scene in benchmark_scenes() {
            let ground = scene.bodies[0];
            let BenchmarkShape::Cuboid(half_extents) = ground.shape else {
                panic!("{}: the ground is a box", scene.name);
            };
            assert!(ground.fixed, "{}", scene.name);
            assert_eq!(ground.position.y + half_extents.y, 0.0, "{}", scene.name);
            assert_eq!(scene.dynamic_count(), scene.bodies.len() - 1, "{}", scene.name);
        }
    }

    #[test]
    fn benchmarks_pile_hangs_its_clearance_above_the_ground_on_its_pitch() {
        let scene = pile_1000();
        let boxes = dynamic(&scene);
        assert_eq!(boxes.len(), 1000);
        let lowest = boxes.iter().map(bottom).fold(f64::INFINITY, f64::min);
        assert!((lowest - 0.1).abs() < 1e-12, "lowest bottom face {lowest} m");
        let highest = boxes.iter().map(|b| b.position.y).fold(f64::NEG_INFINITY, f64::max);
        assert!(
            (highest - (0.6 + 9.0 * 1.1)).abs() < 1e-12,
            "highest centre {highest} m"
        );
        // Neighbours along x, one pitch apart; the lattice is centred over the origin.
        assert!((boxes[1].position.x - boxes[0].position.x - 1.1).abs() < 1e-12);
        assert!((boxes[0].position.x + boxes[9].position.x).abs() < 1e-12);
        assert!(
            boxes
                .iter()
                .all(|b| b.orientation == DQuat::IDENTITY && b.mass() == 1000.0)
        );
        assert!(
            boxes
                .iter()
                .all(|b| b.material.friction == 0.5 && b.material.restitution == 0.0)
        );
    }

    #[test]
    fn benchmarks_random_orientation_turns_the_boxes_in_place() {
        let (aligned, turned) = (pile_1000(), pile_1000_random_orientation());
        assert_eq!(aligned.bodies.len(), turned.bodies.len());
        let mut mean_cos = 0.0;
        for (a, t) in aligned.bodies.iter().zip(&turned.bodies).skip(1) {
            assert_eq!(a.position, t.position);
            assert!((t.orientation.length() - 1.0).abs() < 1e-12);
            // |cos| of the angle between each box's x axis and the world's: 1/2 on average for
            // uniform rotations, 1 for aligned boxes.
            mean_cos += (t.orientation * DVec3::X).x.abs() / 1000.0;
        }
        assert!((mean_cos - 0.5).abs() < 0.05, "mean |cos| {mean_cos}");
    }

    #[test]
    fn benchmarks_pyramid_is_the_scene_library_pyramid_on_the_ground() {
        let scene = pyramid_20();
        let library = pyramid(20, 0.05);
        assert_eq!(scene.bodies.len(), 211);
        for (body, desc) in scene.bodies[1..].iter().zip(&library) {
            assert_eq!(body.position, desc.pose.position);
            assert_eq!(body.orientation, desc.pose.orientation);
        }
        let lowest = dynamic(&scene).iter().map(bottom).fold(f64::INFINITY, f64::min);
        assert!(lowest.abs() < 1e-12, "the bottom row rests on the ground: {lowest} m");
    }

    #[test]
    fn benchmarks_spheres_start_apart_over_the_slab() {
        let scene = spheres_on_table_1000();
        let balls = dynamic(&scene);
        assert_eq!(balls.len(), 1000);
        let lowest = balls.iter().map(bottom).fold(f64::INFINITY, f64::min);
        assert!((lowest - 1.0).abs() < 1e-12, "lowest ball bottom {lowest} m");
        for ball in &balls {
            assert!(ball.position.x.abs() + 0.25 < 5.0 && ball.position.z.abs() + 0.25 < 5.0);
        }
        let closest = balls[..100]
            .iter()
            .enumerate()
            .flat_map(|(i, a)| balls[i + 1..].iter().map(move |b| a.position.distance(b.position)))
            .fold(f64::INFINITY, f64::min);
        assert!((closest - 0.6).abs() < 1e-12, "closest centres {closest} m");
        let expected_mass = 1000.0 * 4.0 / 3.0 * std::f64::consts::PI / 64.0;
        assert!(
            balls
                .iter()
                .all(|b| (b.mass() - expected_mass).abs() < 1e-9 * expected_mass)
        );
    }

    #[test]
    fn benchmarks_descriptions_read_back_unchanged() {
        for scene in benchmark_scenes() {
            let read: Vec<_> = scene.descs().iter().map(BenchmarkBody::from_desc).collect();
            let expected: Vec<_> = scene.bodies.iter().copied().map(Some).collect();
            assert_eq!(read, expected, "{}", scene.name);
        }
    }

    #[test]
    fn benchmarks_worlds_hold_the_described_bodies() {
        for scene in benchmark_scenes() {
            for sleeping in [false, true] {
                let (world, ids) = scene.world(sleeping);
                assert_eq!(world.settings().sleep.enabled, sleeping);
                assert_eq!(ids.len(), scene.bodies.len());
                for (body, id) in scene.bodies.iter().zip(&ids) {
                    let view = world.body(*id).expect("a live body");
                    assert_eq!(view.state.position, body.position, "{}", scene.name);
                    assert!(view.state.orientation.dot(body.orientation).abs() > 1.0 - 1e-12);
                    let (mass, expected) = (view.mass.mass(), body.mass());
                    if body.fixed {
                        assert!(view.mass.is_infinite(), "{}", scene.name);
                    } else {
                        assert!((mass - expected).abs() <= 1e-9 * expected, "{}: {mass} kg", scene.name);
                    }
                }
            }
        }
    }
}
