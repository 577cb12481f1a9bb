//! The scene library: the same scenes for tests, benches, examples and the command-line tool.

use glam::DVec3;

use crate::integrators::{BodyKind, MassProperties, RigidState, SplitMix64};
use crate::scene_file::{SceneDescription, parse_scene};

/// The scene file `scenes/wall_and_ball.json`, built into the library so the command-line tool's
/// default run needs no file: a wall of 48 bricks in running bond hit at 12 m/s by a 514 kg steel
/// ball.
pub const WALL_AND_BALL_JSON: &str = include_str!("../scenes/wall_and_ball.json");

/// [`WALL_AND_BALL_JSON`], read and validated.
pub fn wall_and_ball() -> SceneDescription {
    // The file is part of the build and covered by tests: it is valid and names no mesh file.
    parse_scene(WALL_AND_BALL_JSON, std::path::Path::new("scenes")).expect("the built-in scene is valid")
}

/// The scene file `scenes/shatter_wall.json`, built in for the default run: a concrete wall hit
/// at 12 m/s by a 510 kg steel ball, shattering around the impact with an impact-centred
/// prescored pattern (Su 2009 Fig. 4).
pub const SHATTER_WALL_JSON: &str = include_str!("../scenes/shatter_wall.json");

/// [`SHATTER_WALL_JSON`], read and validated.
pub fn shatter_wall() -> SceneDescription {
    // The file is part of the build and covered by tests: it is valid and names no mesh file.
    parse_scene(SHATTER_WALL_JSON, std::path::Path::new("scenes")).expect("the built-in scene is valid")
}

/// Density of the generated bodies, kg/m^3 (water).
pub const SPINNING_BODY_DENSITY: f64 = 1000.0;
/// Fastest initial spin of a generated body, rad/s.
pub const SPINNING_BODY_MAX_SPEED: f64 = 50.0;
/// Half extents are drawn log-uniformly from this range, m. Its ratio (44.5) makes the most
/// elongated rod's inertia ratio just under 1000.
pub const SPINNING_BODY_HALF_EXTENTS: (f64, f64) = (0.04, 1.78);

/// A set of free bodies as parallel arrays, ready for the batch integrator.
#[derive(Clone, Debug, Default)]
pub struct BodySet {
    /// Poses and velocities.
    pub states: Vec<RigidState>,
    /// Mass properties.
    pub masses: Vec<MassProperties>,
    /// Body kinds.
    pub kinds: Vec<BodyKind>,
}

/// `count` free, dynamic, ill-conditioned boxes (rods, plates and everything between, principal
/// inertia ratios up to 1:1000) in random orientations, spinning about random axes at up to
/// 50 rad/s, on a 4 m grid with a little drift. The same `seed` gives the same bodies.
pub fn spinning_bodies(count: usize, seed: u64) -> BodySet {
    let mut rng = SplitMix64::new(seed);
    let (low, high) = SPINNING_BODY_HALF_EXTENTS;
    let side = (count as f64).cbrt().ceil().max(1.0) as usize;
    let mut set = BodySet::default();
    for i in 0..count {
        let half_extents = DVec3::new(
            low * (high / low).powf(rng.next_f64()),
            low * (high / low).powf(rng.next_f64()),
            low * (high / low).powf(rng.next_f64()),
        );
        let mass = SPINNING_BODY_DENSITY * 8.0 * half_extents.element_product();
        let grid = DVec3::new(
            (i % side) as f64,
            ((i / side) % side) as f64,
            (i / (side * side)) as f64,
        );
        let state = RigidState::moving(
            grid * 4.0,
            rng.rotation(),
            rng.unit_vector() * rng.range(0.0, 1.0),
            rng.unit_vector() * rng.range(0.0, SPINNING_BODY_MAX_SPEED),
        );
        set.masses
            .push(MassProperties::solid_cuboid(mass, half_extents).expect("positive extents and mass"));
        set.states.push(state);
        set.kinds.push(BodyKind::Dynamic);
    }
    set
}

/// The box of the published comparison: half extents (0.05, 0.5, 2.0) m, 1000 kg/m^3, spinning at
/// (3, 0.1, 5) rad/s (world frame, body axes aligned with the world axes).
pub fn reference_spinning_box() -> (RigidState, MassProperties) {
    let half_extents = DVec3::new(0.05, 0.5, 2.0);
    let mass = SPINNING_BODY_DENSITY * 8.0 * half_extents.element_product();
    let state = RigidState::moving(
        DVec3::ZERO,
        glam::DQuat::IDENTITY,
        DVec3::ZERO,
        DVec3::new(3.0, 0.1, 5.0),
    );
    (
        state,
        MassProperties::solid_cuboid(mass, half_extents).expect("positive extents and mass"),
    )
}

mod benchmarks;
mod stability;

/// The energized-fracture scenes of Li 2018 (the beam, the plate, the chain, the hollow bunny) and
/// the preloaded pair.
pub use shatter_fracture::energized::scenes as energized;
/// The prescored-fracture scenes of Su 2009 (walls hit at several places, a cylinder, the bunny,
/// a wall broken twice), built in the fracture crate so its tests and benches share them.
pub use shatter_fracture::prescored::scenes as prescored;

pub use benchmarks::{
    BALL_CLEARANCE, BALL_PITCH, BALL_RADIUS, BENCHMARK_DENSITY, BENCHMARK_FRICTION, BenchmarkBody, BenchmarkScene,
    BenchmarkShape, GROUND_HALF_EXTENTS, PILE_CLEARANCE, PILE_ORIENTATION_SEED, PILE_PITCH, SLAB_HALF_EXTENTS,
    STATIC_PARTICLE_FRACTION, benchmark_scene, benchmark_scenes, pile_1000, pile_1000_random_orientation, pyramid_20,
    spheres_on_table_1000,
};

pub use stability::{
    CHAIN_LINK_HALF_HEIGHT, CHAIN_LINK_PITCH, CHAIN_LINK_RADIUS, Chain, FRAME_30HZ, Incline, LATTICE_BOX_SIZE,
    ball_collider, bouncing_ball, box_collider, box_lattice, ground, hanging_chain, incline, pyramid, random_drop,
    running_bond_wall, stack_bond_wall, tipped_bar, world_with_ground,
};
