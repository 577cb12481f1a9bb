//! Frame-rate stability scenes (Su, Schroeder and Fedkiw 2009, "Energy stability and fracture for
//! frame rate rigid body simulations", section 2 and figure 3): a box on an incline, a bouncing
//! ball, a hanging chain, random drops, a box pyramid and a lattice of falling boxes.
//!
//! Each function builds a fresh [`World`] with the default settings (what a game would use) and
//! returns it with the handles a check needs; the lists of [`BodyDesc`] behind the big scenes are
//! public too, so a bench or a comparison with another engine can build the same bodies. Units
//! are SI, Y up, the ground is the plane y = 0 unless a scene says otherwise.

use glam::{DQuat, DVec3};

use crate::collision::{Capsule, Collider, Cuboid, HalfSpace, Shape, Sphere};
use crate::engine::{BodyDesc, BodyId, JointDesc, JointId, JointKind, Material, World, WorldSettings};
use crate::integrators::SplitMix64;

/// The frame-rate time step the scenes are meant for, s (one step per frame at 30 Hz).
pub const FRAME_30HZ: f64 = 1.0 / 30.0;

/// A ball of `radius` m with surface particles a third of the radius apart.
pub fn ball_collider(radius: f64) -> Collider {
    Collider::from_shape(
        Shape::Sphere(Sphere::try_new(radius).expect("positive radius")),
        radius / 3.0,
    )
    .expect("a valid sphere")
}

/// A box of `half_extents` m with surface particles half its smallest half extent apart.
pub fn box_collider(half_extents: DVec3) -> Collider {
    Collider::from_shape(
        Shape::Cuboid(Cuboid::try_new(half_extents).expect("positive half extents")),
        half_extents.min_element() / 2.0,
    )
    .expect("a valid cuboid")
}

/// The static ground: the half-space below the plane y = `height` m, with `material`.
pub fn ground(height: f64, material: Material) -> BodyDesc {
    let plane = HalfSpace::ground(height).expect("a finite height");
    BodyDesc::fixed(Collider::from_shape(Shape::HalfSpace(plane), 1.0).expect("a valid half-space"))
        .with_material(material)
}

/// A concrete bar of `half_extents` m (its length along z) tipped by `tilt` rad about its length,
/// its centre half its height plus a centimetre above a static plane at y = 0: debris as a
/// fracture leaves it, small and light, landing on an edge. Returns the world and the bar.
pub fn tipped_bar(half_extents: DVec3, tilt: f64) -> (World, BodyId) {
    let mut world = World::new();
    world.add_body(ground(0.0, Material::default())).expect("the ground");
    let bar = BodyDesc::dynamic(box_collider(half_extents))
        .with_density(2300.0)
        .with_position(DVec3::new(0.0, half_extents.y + 0.01, 0.0))
        .with_orientation(DQuat::from_rotation_z(tilt));
    let bar = world.add_body(bar).expect("a valid bar");
    (world, bar)
}

/// A box on an incline (Su 2009 figure 3).
#[derive(Debug)]
pub struct Incline {
    /// The world: a static tilted half-space through the origin and the box lying flat on it.
    pub world: World,
    /// The box: half extents (0.3, 0.1, 0.2) m, water density, at rest, touching the slope.
    pub block: BodyId,
    /// Unit vector pointing down the slope, world frame.
    pub down_slope: DVec3,
}

/// A box resting on a slope of `angle` rad (rising towards -x) with Coulomb friction `friction` on
/// both surfaces and no restitution. It slides at `g (sin a - mu cos a)` when `mu < tan a` and stays
/// put otherwise.
pub fn incline(angle: f64, friction: f64) -> Incline {
    let mut world = World::new();
    let normal = DVec3::new(angle.sin(), angle.cos(), 0.0);
    let material = Material {
        friction,
        restitution: 0.0,
    };
    let slope = HalfSpace::try_new(normal, 0.0).expect("a unit normal");
    let plane = Collider::from_shape(Shape::HalfSpace(slope), 1.0).expect("a valid half-space");
    world
        .add_body(BodyDesc::fixed(plane).with_material(material))
        .expect("a valid slope");
    let half_extents = DVec3::new(0.3, 0.1, 0.2);
    let block = world
        .add_body(
            BodyDesc::dynamic(box_collider(half_extents))
                .with_position(normal * half_extents.y)
                .with_orientation(DQuat::from_rotation_z(-angle))
                .with_material(material),
        )
        .expect("a valid box");
    Incline {
        world,
        block,
        down_slope: DVec3::new(angle.cos(), -angle.sin(), 0.0),
    }
}

/// A ball of radius 0.1 m dropped from rest with its lowest point `height` m above the ground, both
/// surfaces with restitution `restitution` and friction 0.5. Returns the world and the ball.
pub fn bouncing_ball(height: f64, restitution: f64) -> (World, BodyId) {
    let mut world = World::new();
    let material = Material {
        friction: 0.5,
        restitution,
    };
    world.add_body(ground(0.0, material)).expect("a valid ground");
    let radius = 0.1;
    let ball = world
        .add_body(
            BodyDesc::dynamic(ball_collider(radius))
                .with_position(DVec3::Y * (height + radius))
                .with_material(material),
        )
        .expect("a valid ball");
    (world, ball)
}

/// Radius of a chain link's capsule, m.
pub const CHAIN_LINK_RADIUS: f64 = 0.04;
/// Half the length of a chain link's capsule segment, m.
pub const CHAIN_LINK_HALF_HEIGHT: f64 = 0.1;
/// Distance between the centres of neighbouring links, m: the capsules (0.28 m long) leave a
/// 2 cm gap, so jointed neighbours never touch and only the joints act between them.
pub const CHAIN_LINK_PITCH: f64 = 0.3;

/// A hanging chain.
#[derive(Debug)]
pub struct Chain {
    /// The world, sleeping disabled so the chain is simulated for as long as a check runs.
    pub world: World,
    /// The links, top first.
    pub links: Vec<BodyId>,
    /// The ball joints: the first holds the top link to the world, joint `i` joins link `i - 1`
    /// to link `i` (body A is the lower link).
    pub joints: Vec<JointId>,
}

/// `links` vertical capsules (axis along y) hanging from a ball joint to the world at
/// (0, `links` x pitch + 0.5, 0), each joined to the next by a ball joint midway between them,
/// hanging straight down at rest: the state it must keep.
pub fn hanging_chain(links: usize) -> Chain {
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    let mut world = World::try_with_settings(settings).expect("the default settings are valid");
    let top = DVec3::Y * (links as f64 * CHAIN_LINK_PITCH + 0.5);
    // Joint i sits at the top of link i; link i's centre half a pitch below it.
    let joint_point = |i: usize| top + DVec3::NEG_Y * CHAIN_LINK_PITCH * i as f64;
    let capsule = Capsule::try_new(CHAIN_LINK_HALF_HEIGHT, CHAIN_LINK_RADIUS).expect("positive sizes");
    let collider = Collider::from_shape(Shape::Capsule(capsule), CHAIN_LINK_RADIUS / 2.0).expect("a valid capsule");
    let mut ids: Vec<BodyId> = Vec::with_capacity(links);
    let mut joints = Vec::with_capacity(links);
    for i in 0..links {
        let (upper, lower) = (joint_point(i), joint_point(i + 1));
        let axis = (upper - lower).normalize();
        let id = world
            .add_body(
                BodyDesc::dynamic(collider.clone())
                    .with_position((upper + lower) / 2.0)
                    .with_orientation(DQuat::from_rotation_arc(DVec3::Y, axis)),
            )
            .expect("a valid link");
        let parent = ids.last().copied();
        joints.push(
            world
                .add_joint(JointDesc::new(JointKind::Ball, id, parent, upper))
                .expect("a valid joint"),
        );
        ids.push(id);
    }
    Chain {
        world,
        links: ids,
        joints,
    }
}

/// `count` boxes and balls (every third a ball) of random sizes (0.1 to 0.4 m), orientations,
/// friction and restitution (each uniform in [0, 1]), placed 1.5 m apart in a column from 0.8 m up
/// (a body reaches at most `sqrt(3) 0.4 = 0.69` m from its centre, so none starts touching another
/// or the ground), with a little random sideways offset and spin, above a ground whose material is
/// random too.
/// The same `seed` gives the same scene.
pub fn random_drop(seed: u64, count: usize) -> (World, Vec<BodyId>) {
    let mut rng = SplitMix64::new(seed);
    let mut world = World::new();
    let ground_material = Material {
        friction: rng.next_f64(),
        restitution: rng.next_f64(),
    };
    world.add_body(ground(0.0, ground_material)).expect("a valid ground");
    let ids = (0..count)
        .map(|i| {
            let material = Material {
                friction: rng.next_f64(),
                restitution: rng.next_f64(),
            };
            let position = DVec3::new(rng.range(-0.2, 0.2), 0.8 + 1.5 * i as f64, rng.range(-0.2, 0.2));
            let desc = if i % 3 == 2 {
                BodyDesc::dynamic(ball_collider(rng.range(0.1, 0.4)))
            } else {
                let half_extents = DVec3::new(rng.range(0.1, 0.4), rng.range(0.1, 0.4), rng.range(0.1, 0.4));
                BodyDesc::dynamic(box_collider(half_extents))
            };
            world
                .add_body(
                    desc.with_position(position)
                        .with_orientation(rng.rotation())
                        .with_velocity(DVec3::ZERO, rng.unit_vector() * rng.range(0.0, 3.0))
                        .with_material(material),
                )
                .expect("a valid body")
        })
        .collect();
    (world, ids)
}

/// `base (base + 1) / 2` unit boxes (water density, friction 0.5, no restitution) stacked in a
/// two-dimensional pyramid on the ground: the bottom row has `base` boxes `gap` m apart along x,
/// each row above one box fewer, centred, so every box rests on the two below it, offset by half a
/// box. Listed row by row from the bottom; the last box is the top one.
pub fn pyramid(base: usize, gap: f64) -> Vec<BodyDesc> {
    let pitch = LATTICE_BOX_SIZE + gap;
    let collider = box_collider(DVec3::splat(LATTICE_BOX_SIZE / 2.0));
    let mut descs = Vec::with_capacity(base * (base + 1) / 2);
    for row in 0..base {
        let count = base - row;
        for column in 0..count {
            let x = (column as f64 - (count as f64 - 1.0) / 2.0) * pitch;
            let y = LATTICE_BOX_SIZE * (row as f64 + 0.5);
            descs.push(BodyDesc::dynamic(collider.clone()).with_position(DVec3::new(x, y, 0.0)));
        }
    }
    descs
}

/// A wall of unit boxes (water density, friction 0.5, no restitution) laid in running bond on the
/// ground, `courses` courses high and `length` m long along x, centred over the origin: even
/// courses (from the bottom, the first is course 0) are `length` boxes end to end; odd courses
/// are shifted by half a box, `length - 1` boxes with a half box (0.5 x 1 x 1 m) closing each
/// end flush, as bricklayers close a course. So every box rests on two below it, every half box
/// on one, and each presses on its neighbours in its course. Listed course by course from the
/// bottom, left to right; the last body is the top course's last. No bodies when `length` is 0.
pub fn running_bond_wall(courses: usize, length: usize) -> Vec<BodyDesc> {
    if length == 0 {
        return Vec::new();
    }
    let half = LATTICE_BOX_SIZE / 2.0;
    let whole = box_collider(DVec3::splat(half));
    let closer = box_collider(DVec3::new(half / 2.0, half, half));
    let left = -(length as f64) * LATTICE_BOX_SIZE / 2.0;
    let mut descs = Vec::with_capacity(courses * (length + 1));
    for course in 0..courses {
        let y = LATTICE_BOX_SIZE * (course as f64 + 0.5);
        let at = |x: f64| DVec3::new(x, y, 0.0);
        if course % 2 == 0 {
            for k in 0..length {
                descs.push(
                    BodyDesc::dynamic(whole.clone()).with_position(at(left + (k as f64 + 0.5) * LATTICE_BOX_SIZE)),
                );
            }
        } else {
            descs.push(BodyDesc::dynamic(closer.clone()).with_position(at(left + half / 2.0)));
            for k in 0..length - 1 {
                descs.push(
                    BodyDesc::dynamic(whole.clone())
                        .with_position(at(left + half + (k as f64 + 0.5) * LATTICE_BOX_SIZE)),
                );
            }
            let right = left + length as f64 * LATTICE_BOX_SIZE;
            descs.push(BodyDesc::dynamic(closer.clone()).with_position(at(right - half / 2.0)));
        }
    }
    descs
}

/// A wall of boxes of `half_extents` m (water density, friction 0.5, no restitution) laid in
/// stack bond on the ground: `courses` courses high and `length` boxes long along x, centred over
/// the origin, every box on the one below it and touching its neighbours in its course, so that
/// each box also meets the boxes diagonally below and above it along an edge. Listed course by
/// course from the bottom, left to right; the last body is the top course's last.
pub fn stack_bond_wall(courses: usize, length: usize, half_extents: DVec3) -> Vec<BodyDesc> {
    let brick = box_collider(half_extents);
    let size = 2.0 * half_extents;
    let left = -(length as f64) * size.x / 2.0;
    (0..courses)
        .flat_map(|course| (0..length).map(move |k| (course, k)))
        .map(|(course, k)| {
            let x = left + (k as f64 + 0.5) * size.x;
            let y = size.y * (course as f64 + 0.5);
            BodyDesc::dynamic(brick.clone()).with_position(DVec3::new(x, y, 0.0))
        })
        .collect()
}

/// Edge of a lattice box, m.
pub const LATTICE_BOX_SIZE: f64 = 1.0;

/// `side^3` unit boxes (water density, friction 0.5, no restitution) on a lattice of pitch
/// `pitch` m, the lowest layer's centres at `pitch` m above the ground, centred over the origin.
/// With `seed` the boxes get random orientations (uniform rotations; with a pitch below
/// `sqrt(3)` m they may start interpenetrating), without it they are axis-aligned.
pub fn box_lattice(side: usize, pitch: f64, seed: Option<u64>) -> Vec<BodyDesc> {
    let mut rng = seed.map(SplitMix64::new);
    let offset = (side as f64 - 1.0) * pitch / 2.0;
    let half_extents = DVec3::splat(LATTICE_BOX_SIZE / 2.0);
    let collider = box_collider(half_extents);
    let mut descs = Vec::with_capacity(side * side * side);
    for layer in 0..side {
        for row in 0..side {
            for column in 0..side {
                let position = DVec3::new(
                    column as f64 * pitch - offset,
                    pitch * (layer as f64 + 1.0),
                    row as f64 * pitch - offset,
                );
                let orientation = rng.as_mut().map_or(DQuat::IDENTITY, SplitMix64::rotation);
                descs.push(
                    BodyDesc::dynamic(collider.clone())
                        .with_position(position)
                        .with_orientation(orientation),
                );
            }
        }
    }
    descs
}

/// A world with the ground (friction 0.5) and the bodies of `descs`; returns it with their handles.
pub fn world_with_ground(descs: Vec<BodyDesc>) -> (World, Vec<BodyId>) {
    let mut world = World::new();
    world
        .add_body(ground(0.0, Material::default()))
        .expect("a valid ground");
    let ids = descs
        .into_iter()
        .map(|desc| world.add_body(desc).expect("a valid body"))
        .collect();
    (world, ids)
}
