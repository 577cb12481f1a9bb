//! Prescored fracture (Su 2009 section 4): patterns, one fracture event, and the world model.
//! Every test name starts with `prescored` so `cargo test -p shatter-fracture prescored` runs them.

use std::sync::{Arc, OnceLock};

use glam::{DMat3, DQuat, DVec3};
use shatter_collision::{Aabb, Collider, Cuboid, Geometry, GridSpec, Pose, SdfGrid, Shape, SignedDistance, TriMesh};
use shatter_engine::{BodyDesc, BodyGeometry, MassSource, World};
use shatter_fracture::fragments::ParentMomentum;
use shatter_fracture::prescored::{
    Alignment, Debris, FracturePattern, Parent, PrescoredFracture, PrescoredSettings, RadialPattern, ShatterSettings,
    Shattered, SpiralPattern, shape_lattice, shatter,
};

/// Half extents of the test wall: 3 m x 0.2 m x 2 m, 150 x 10 x 100 cells (Su 2009 Fig. 4).
const WALL: DVec3 = DVec3::new(1.5, 0.1, 1.0);
const SPACING: f64 = 0.02;

fn wall_shape() -> Shape {
    Shape::Cuboid(Cuboid::try_new(WALL).unwrap())
}

/// The wall's level set on its lattice and its surface particles, body frame.
fn wall() -> &'static (SdfGrid, Vec<DVec3>) {
    static WALL_LATTICE: OnceLock<(SdfGrid, Vec<DVec3>)> = OnceLock::new();
    WALL_LATTICE.get_or_init(|| {
        let shape = wall_shape();
        let grid = shape_lattice(&shape, 150).unwrap();
        assert_eq!(grid.spec().dims, [154, 14, 104]);
        let particles = Collider::from_shape(shape, 0.03).unwrap().particles().to_vec();
        (grid, particles)
    })
}

fn settings(debris: Debris, min_fragment_volume: f64) -> ShatterSettings {
    ShatterSettings {
        alignment: Alignment::Overlay,
        min_fragment_volume,
        debris,
        particle_spacing: 0.03,
    }
}

fn radial() -> &'static FracturePattern {
    static RADIAL: OnceLock<FracturePattern> = OnceLock::new();
    RADIAL.get_or_init(|| FracturePattern::radial(&RadialPattern::default()).unwrap())
}

/// World-frame inertia tensor of a body with principal inertia `principal` at `orientation`.
fn world_inertia(principal: DVec3, orientation: DQuat) -> DMat3 {
    let rotation = DMat3::from_quat(orientation);
    rotation * DMat3::from_diagonal(principal) * rotation.transpose()
}

/// Mass, momentum and angular momentum (about the world origin) of fragment descriptions.
fn totals(fragments: &[BodyDesc]) -> (f64, DVec3, DVec3) {
    let mut sums = (0.0, DVec3::ZERO, DVec3::ZERO);
    for desc in fragments {
        let MassSource::Properties(mass) = desc.mass else {
            panic!("fragments carry mass properties")
        };
        sums.0 += mass.mass();
        sums.1 += desc.linear_velocity * mass.mass();
        sums.2 += desc.pose.position.cross(desc.linear_velocity * mass.mass())
            + world_inertia(mass.principal_inertia(), desc.pose.orientation) * desc.angular_velocity;
    }
    sums
}

fn collider(desc: &BodyDesc) -> &Collider {
    let BodyGeometry::Collider(collider) = &desc.geometry else {
        panic!("a prepared collider")
    };
    collider
}

/// The wall at `pose` moving with `v`, `w`, and its mass (2300 kg/m^3).
fn moving_wall(pose: Pose, v: DVec3, w: DVec3) -> (f64, ParentMomentum) {
    let mass = 2300.0 * 8.0 * WALL.element_product();
    let inertia = shatter_integrators::MassProperties::solid_cuboid(mass, WALL).unwrap();
    let momentum = ParentMomentum {
        linear: v * mass,
        angular: pose.position.cross(v * mass) + world_inertia(inertia.principal_inertia(), pose.orientation) * w,
    };
    (mass, momentum)
}

fn break_wall(
    pattern: &FracturePattern,
    pose: Pose,
    mass: f64,
    momentum: ParentMomentum,
    debris: Debris,
    min: f64,
) -> Shattered {
    let (grid, particles) = wall();
    let parent = Parent {
        level_set: grid,
        particles,
        pose,
        mass,
        momentum,
    };
    // Hit on the +y face, pushed along -y.
    shatter(
        &parent,
        pattern,
        DVec3::new(0.4, 0.1, -0.3),
        -DVec3::Y,
        &settings(debris, min),
    )
    .unwrap()
}

fn assert_close(found: DVec3, expected: DVec3, relative: f64, what: &str) {
    assert!(
        (found - expected).length() <= relative * expected.length(),
        "{what}: {found} against {expected}"
    );
}

#[test]
fn prescored_wall_fragments_keep_mass_and_momentum() {
    let pose = Pose::new(DVec3::new(0.0, 1.0, 0.0), DQuat::from_rotation_y(0.3));
    let (v, w) = (DVec3::new(0.5, -0.2, 1.0), DVec3::new(0.3, -0.1, 0.7));
    let (mass, momentum) = moving_wall(pose, v, w);
    let shattered = break_wall(radial(), pose, mass, momentum, Debris::Keep, 0.0);
    let (m, p, l) = totals(&shattered.fragments);
    assert!((m - mass).abs() <= 1e-12 * mass, "mass {m} against {mass}");
    assert_close(p, momentum.linear, 1e-9, "linear momentum");
    assert_close(l, momentum.angular, 1e-9, "angular momentum");
    // The wall's box is a whole number of cells, so its cells tile it exactly and the motion the
    // fragments share is the wall's own.
    let volume = 8.0 * WALL.element_product();
    assert!(
        (shattered.cell_volume - volume).abs() <= 1e-12 * volume,
        "cells {} against {volume}",
        shattered.cell_volume
    );
    assert_close(shattered.motion.angular_velocity, w, 1e-9, "shared angular velocity");
    assert!((shattered.motion.linear_velocity - v).length() < 1e-12 * v.length());
    assert!(
        shattered.fragments.len() >= 15,
        "{} fragments",
        shattered.fragments.len()
    );
}

/// The wall at rest at the origin, broken once (shared by the tests that only read it).
fn resting_break() -> &'static Shattered {
    static RESTING: OnceLock<Shattered> = OnceLock::new();
    RESTING.get_or_init(|| {
        break_wall(
            radial(),
            Pose::IDENTITY,
            100.0,
            ParentMomentum::default(),
            Debris::Keep,
            0.0,
        )
    })
}

#[test]
fn prescored_fragment_level_sets_are_right_at_their_particles() {
    let shattered = resting_break();
    let mut checked = 0;
    for desc in &shattered.fragments {
        let collider = collider(desc);
        assert!(!collider.particles().is_empty(), "a fragment without particles");
        for p in collider.particles() {
            let (value, gradient) = collider.distance_and_gradient(*p);
            let normal = gradient.normalize();
            // On the surface to within three quarters of a cell, inside one cell in, outside one out.
            assert!(value.abs() <= 0.75 * SPACING, "particle {p} at level {value}");
            assert!(
                collider.distance(*p - normal * SPACING) < 0.0,
                "inside below particle {p}"
            );
            assert!(
                collider.distance(*p + normal * SPACING) > 0.0,
                "outside above particle {p}"
            );
            checked += 1;
        }
    }
    assert!(checked > 1000);
}

/// Mean fragment mass within half a metre of the wall's impact point and beyond it, kg, with
/// the number of fragments in each.
fn near_and_far(shattered: &Shattered) -> ((f64, usize), (f64, usize)) {
    let impact = DVec3::new(0.4, 0.1, -0.3);
    let (mut near, mut far) = (Vec::new(), Vec::new());
    for desc in &shattered.fragments {
        let MassSource::Properties(mass) = desc.mass else {
            unreachable!()
        };
        let distance = (desc.pose.position - impact).length();
        if distance < 0.5 {
            near.push(mass.mass())
        } else {
            far.push(mass.mass())
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    ((mean(&near), near.len()), (mean(&far), far.len()))
}

#[test]
fn prescored_impact_centred_pattern_makes_small_fragments_near_the_impact() {
    // Concentration 1: a spiral piece's area grows in proportion to its distance from the impact.
    let spiral = FracturePattern::spiral(&SpiralPattern {
        count: 600,
        concentration: 1.0,
        ..SpiralPattern::default()
    })
    .unwrap();
    assert_eq!(spiral.region_count(), 600);
    let spiral_break = break_wall(
        &spiral,
        Pose::IDENTITY,
        100.0,
        ParentMomentum::default(),
        Debris::Keep,
        0.0,
    );
    // The radial pattern's rings double in radius; the spiral's pieces grow more gently.
    for (name, shattered, ratio) in [("radial", resting_break(), 4.0), ("spiral", &spiral_break, 2.0)] {
        let ((near, near_count), (far, far_count)) = near_and_far(shattered);
        assert!(
            near_count >= 5 && far_count >= 5,
            "{name}: {near_count} near, {far_count} far"
        );
        assert!(near * ratio < far, "{name}: near {near} kg, far {far} kg");
    }
    // The spiral's pieces cover the wall: many more than the radial pattern's few dozen.
    assert!(spiral_break.fragments.len() >= 100, "{}", spiral_break.fragments.len());
    // Out-of-range settings are refused by name.
    for (bad, what) in [
        (
            SpiralPattern {
                count: 1,
                ..SpiralPattern::default()
            },
            "count",
        ),
        (
            SpiralPattern {
                radius: 0.0,
                ..SpiralPattern::default()
            },
            "radius",
        ),
        (
            SpiralPattern {
                concentration: 0.2,
                ..SpiralPattern::default()
            },
            "concentration",
        ),
        (
            SpiralPattern {
                jitter: f64::NAN,
                ..SpiralPattern::default()
            },
            "jitter",
        ),
    ] {
        let message = FracturePattern::spiral(&bad)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(message.contains(what), "{what}: {message}");
    }
}

#[test]
fn prescored_fragment_of_a_fragment_keeps_mass_and_momentum() {
    let pose = Pose::new(DVec3::new(0.3, 2.0, -1.0), DQuat::from_rotation_x(0.2));
    let (mass, momentum) = moving_wall(pose, DVec3::new(-1.0, 0.5, 0.0), DVec3::new(0.2, 0.9, -0.4));
    let first = break_wall(radial(), pose, mass, momentum, Debris::Keep, 0.0);
    // Break the largest fragment again, at one of its particles, along its inward normal there.
    let desc = first
        .fragments
        .iter()
        .max_by(|a, b| {
            totals(std::slice::from_ref(a))
                .0
                .total_cmp(&totals(std::slice::from_ref(b)).0)
        })
        .unwrap();
    let collider = collider(desc);
    let Geometry::LevelSet(grid) = collider.geometry() else {
        panic!("a level set")
    };
    let frame = collider.grid_frame();
    let lattice_pose = Pose::new(
        desc.pose.transform_point(frame.position),
        desc.pose.orientation * frame.orientation,
    );
    let particles: Vec<DVec3> = collider
        .particles()
        .iter()
        .map(|p| frame.inverse_transform_point(*p))
        .collect();
    let (own_mass, own_linear, own_angular) = totals(std::slice::from_ref(desc));
    let parent = Parent {
        level_set: grid,
        particles: &particles,
        pose: lattice_pose,
        mass: own_mass,
        momentum: ParentMomentum {
            linear: own_linear,
            angular: own_angular,
        },
    };
    let hit = particles[particles.len() / 2];
    let inward = -grid.gradient(hit);
    let second = shatter(&parent, radial(), hit, inward, &settings(Debris::Keep, 0.0)).unwrap();
    assert!(
        second.fragments.len() >= 5,
        "{} fragments of the fragment",
        second.fragments.len()
    );
    let (m, p, l) = totals(&second.fragments);
    assert!((m - own_mass).abs() <= 1e-12 * own_mass);
    assert_close(p, own_linear, 1e-9, "linear momentum");
    assert_close(l, own_angular, 1e-9, "angular momentum");
    // On the same lattice the fragment's cells are its parent's: the shared motion is exactly its
    // own, v_f = v_p + w_p x r_f with w_f = w_p.
    assert_close(
        second.motion.angular_velocity,
        desc.angular_velocity,
        1e-9,
        "angular velocity",
    );
}

#[test]
fn prescored_debris_is_removed_merged_or_kept() {
    let pose = Pose::IDENTITY;
    let (mass, momentum) = moving_wall(pose, DVec3::new(0.0, 0.0, 2.0), DVec3::new(0.0, 1.0, 0.0));
    let min = 0.002; // m^3, 250 cells
    let kept = break_wall(radial(), pose, mass, momentum, Debris::Keep, min);
    let merged = break_wall(radial(), pose, mass, momentum, Debris::Merge, min);
    let removed = break_wall(radial(), pose, mass, momentum, Debris::Remove, min);
    let small = kept
        .fragments
        .iter()
        .filter(|d| totals(std::slice::from_ref(d)).0 < min * mass / kept.cell_volume)
        .count();
    assert!(small > 0, "the threshold should catch some debris");
    assert_eq!(merged.fragments.len() + small, kept.fragments.len());
    assert_eq!(removed.fragments.len() + small, kept.fragments.len());
    let (m, p, l) = totals(&merged.fragments);
    assert!((m - mass).abs() <= 1e-12 * mass);
    assert_close(p, momentum.linear, 1e-9, "merged linear momentum");
    assert_close(l, momentum.angular, 1e-9, "merged angular momentum");
    let (m, p, l) = totals(&removed.fragments);
    assert!(removed.removed_mass > 0.0);
    assert!((m + removed.removed_mass - mass).abs() <= 1e-12 * mass);
    assert_close(
        p + removed.removed_momentum.linear,
        momentum.linear,
        1e-9,
        "with removed debris",
    );
    assert_close(
        l + removed.removed_momentum.angular,
        momentum.angular,
        1e-9,
        "with removed debris",
    );
}

#[test]
fn prescored_overlay_is_exact_on_the_lattice_and_snaps_by_at_most_half_a_cell() {
    let (grid, particles) = wall();
    let parent = Parent {
        level_set: grid,
        particles,
        pose: Pose::IDENTITY,
        mass: 100.0,
        momentum: ParentMomentum::default(),
    };
    let spec = grid.spec();
    let on_lattice = spec.position(90, 11, 30);
    let run = |point: DVec3, alignment| {
        let settings = ShatterSettings {
            alignment,
            ..settings(Debris::Keep, 0.0)
        };
        shatter(&parent, radial(), point, -DVec3::Y, &settings).unwrap()
    };
    let masses =
        |s: &Shattered| -> Vec<f64> { s.fragments.iter().map(|d| totals(std::slice::from_ref(d)).0).collect() };
    let overlay = run(on_lattice, Alignment::Overlay);
    let exact = run(on_lattice, Alignment::Exact);
    assert_eq!(overlay.placement.point, exact.placement.point);
    assert!(
        (overlay.placement.rotation - exact.placement.rotation)
            .abs()
            .to_cols_array()
            .iter()
            .all(|e| *e < 1e-12)
    );
    let (a, b) = (masses(&overlay), masses(&exact));
    assert_eq!(a.len(), b.len());
    assert!(
        a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-9 * x),
        "{a:?} against {b:?}"
    );
    let off = on_lattice + DVec3::new(0.3, 0.0, -0.4) * SPACING;
    let snapped = run(off, Alignment::Overlay);
    assert_eq!(snapped.placement.point, on_lattice);
    assert_eq!(masses(&snapped), masses(&overlay));
}

#[test]
fn prescored_a_region_the_body_splits_gives_one_fragment_per_piece() {
    // A U: a base and two arms. One slab of the pattern holds both arms, which do not touch.
    let base = Cuboid::try_new(DVec3::new(0.5, 0.1, 0.2)).unwrap();
    let arm = Cuboid::try_new(DVec3::new(0.1, 0.4, 0.2)).unwrap();
    let u = move |x: DVec3| {
        let b = base.distance(x - DVec3::new(0.0, -0.3, 0.0));
        let left = arm.distance(x - DVec3::new(-0.4, 0.1, 0.0));
        let right = arm.distance(x - DVec3::new(0.4, 0.1, 0.0));
        b.min(left).min(right)
    };
    let spec = GridSpec::covering(
        Aabb::from_center(DVec3::new(0.0, 0.05, 0.0), DVec3::new(0.5, 0.45, 0.2)),
        0.02,
        2,
    )
    .unwrap();
    let grid = SdfGrid::from_fn(spec, u).unwrap();
    // Cut across y just above the base.
    let slabs = FracturePattern::slices(DVec3::Y, &[0.05]).unwrap();
    let parent = Parent {
        level_set: &grid,
        particles: &[],
        pose: Pose::IDENTITY,
        mass: 10.0,
        momentum: ParentMomentum::default(),
    };
    let settings = ShatterSettings {
        alignment: Alignment::Exact,
        ..settings(Debris::Keep, 0.0)
    };
    let shattered = shatter(&parent, &slabs, DVec3::new(0.0, -0.2, 0.0), DVec3::Y, &settings).unwrap();
    assert_eq!(shattered.fragments.len(), 3);
    assert_eq!(
        shattered.regions.iter().filter(|r| **r == shattered.regions[1]).count(),
        2
    );
    // Each arm is inside exactly its own fragment: negative there, positive in the other arm
    // (the two share a pattern region, so only the flood fill tells them apart).
    let arms = [DVec3::new(-0.4, 0.2, 0.0), DVec3::new(0.4, 0.2, 0.0)];
    for arm in arms {
        let owners: Vec<usize> = (0..3)
            .filter(|&f| {
                let desc = &shattered.fragments[f];
                collider(desc).distance(desc.pose.inverse_transform_point(arm)) < 0.0
            })
            .collect();
        assert_eq!(owners.len(), 1, "arm at {arm} lies in fragments {owners:?}");
        assert_eq!(shattered.regions[owners[0]], shattered.regions[1]);
    }
}

#[test]
fn prescored_patterns_round_trip_through_files() {
    let halves = [
        TriMesh::cuboid(DVec3::new(0.25, 0.5, 0.5))
            .transformed(glam::DAffine3::from_translation(DVec3::new(0.25, 0.5, 0.5))),
        TriMesh::cuboid(DVec3::new(0.25, 0.5, 0.5))
            .transformed(glam::DAffine3::from_translation(DVec3::new(0.75, 0.5, 0.5))),
    ];
    let patterns = [
        radial().clone(),
        FracturePattern::uniform(30, 7).unwrap(),
        FracturePattern::slices(DVec3::new(0.0, 0.6, 0.8), &[-0.2, 0.0, 0.3]).unwrap(),
        FracturePattern::from_meshes(&halves, 16, DVec3::splat(0.5), DQuat::IDENTITY).unwrap(),
    ];
    let directory = std::env::temp_dir().join(format!("shatter-patterns-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    for (index, pattern) in patterns.iter().enumerate() {
        let bytes = pattern.to_bytes();
        assert_eq!(&FracturePattern::from_bytes(&bytes).unwrap(), pattern);
        let path = directory.join(format!("{index}.pattern"));
        pattern.save(&path).unwrap();
        assert_eq!(&FracturePattern::load(&path).unwrap(), pattern);
        let truncated = FracturePattern::from_bytes(&bytes[..bytes.len() - 3]).unwrap_err();
        assert!(truncated.to_string().contains("truncated"), "{truncated}");
    }
    // The mesh pattern puts each half of the box in its region.
    assert_eq!(patterns[3].locate(DVec3::new(0.2, 0.3, 0.9)), 0);
    assert_eq!(patterns[3].locate(DVec3::new(0.8, 0.6, 0.1)), 1);
    let missing = FracturePattern::load(directory.join("none.pattern")).unwrap_err();
    assert!(missing.to_string().contains("none.pattern"), "{missing}");
    let bad = FracturePattern::from_bytes(b"NOTAPATTERN").unwrap_err();
    assert!(bad.to_string().contains("SHATPAT1"), "{bad}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn prescored_bad_input_is_refused_by_name() {
    let near = |e: shatter_fracture::FractureError, what: &str| {
        assert!(e.to_string().contains(what), "{e} should name {what}");
    };
    near(
        FracturePattern::power_diagram(
            vec![DVec3::ZERO, DVec3::ONE],
            vec![0.0; 2],
            DVec3::new(0.5, 1.2, 0.5),
            DQuat::IDENTITY,
        )
        .unwrap_err(),
        "impact point",
    );
    near(
        FracturePattern::power_diagram(
            vec![DVec3::ONE, DVec3::ONE],
            vec![0.0; 2],
            DVec3::splat(0.5),
            DQuat::IDENTITY,
        )
        .unwrap_err(),
        "given twice",
    );
    near(FracturePattern::uniform(1, 0).unwrap_err(), "site count");
    near(
        FracturePattern::slices(DVec3::X * 2.0, &[0.1]).unwrap_err(),
        "slice direction",
    );
    let open = TriMesh::try_new(vec![DVec3::ZERO, DVec3::X, DVec3::Y], vec![[0, 1, 2]]).unwrap();
    near(
        FracturePattern::from_meshes(&[open.clone(), open], 8, DVec3::splat(0.5), DQuat::IDENTITY).unwrap_err(),
        "region mesh 0",
    );
    let (grid, particles) = wall();
    let parent = Parent {
        level_set: grid,
        particles,
        pose: Pose::IDENTITY,
        mass: 100.0,
        momentum: ParentMomentum::default(),
    };
    let ok = settings(Debris::Keep, 0.0);
    near(
        shatter(&parent, radial(), DVec3::NAN, DVec3::Y, &ok).unwrap_err(),
        "impact point",
    );
    near(
        shatter(&parent, radial(), DVec3::ZERO, DVec3::ZERO, &ok).unwrap_err(),
        "impact direction",
    );
    let light = Parent { mass: 0.0, ..parent };
    near(
        shatter(&light, radial(), DVec3::ZERO, DVec3::Y, &ok).unwrap_err(),
        "parent mass",
    );
    // The world model refuses bad thresholds and bodies, and keeps nothing of them.
    let mut world = World::new();
    let ground = world
        .add_body(BodyDesc::fixed(Collider::from_shape(wall_shape(), 0.05).unwrap()))
        .unwrap();
    let body = world
        .add_body(BodyDesc::dynamic(Collider::from_shape(wall_shape(), 0.05).unwrap()).with_density(2300.0))
        .unwrap();
    let mut model = PrescoredFracture::new(PrescoredSettings::default()).unwrap();
    let pattern = Arc::new(radial().clone());
    near(
        model
            .make_breakable(&world, body, pattern.clone(), f64::NAN, 100)
            .unwrap_err(),
        "threshold",
    );
    near(
        model
            .make_breakable(&world, ground, pattern.clone(), 10.0, 100)
            .unwrap_err(),
        "not dynamic",
    );
    near(
        model
            .make_breakable(&world, body, pattern.clone(), 10.0, 2)
            .unwrap_err(),
        "lattice cells",
    );
    world.remove_body(body).unwrap();
    assert!(model.make_breakable(&world, body, pattern, 10.0, 100).is_err());
    assert_eq!(model.breakable_bodies().count(), 0);
    let bad = PrescoredSettings {
        cooldown: -1.0,
        ..PrescoredSettings::default()
    };
    near(PrescoredFracture::new(bad).unwrap_err(), "cooldown");
}

/// A 25 cm steel ball at `position` moving down at 12 m/s.
fn falling_ball(position: DVec3) -> BodyDesc {
    let shape = Shape::Sphere(shatter_collision::Sphere::try_new(0.25).unwrap());
    BodyDesc::dynamic(Collider::from_shape(shape, 0.05).unwrap())
        .with_density(7800.0)
        .with_position(position)
        .with_velocity(DVec3::new(0.0, -12.0, 0.0), DVec3::ZERO)
}

/// Makes `wall` (the test wall) breakable with the radial pattern at `threshold` N s, on the
/// wall's 150-cell lattice, and registers the model with default settings.
fn register_breakable(world: &mut World, wall: shatter_engine::BodyId, threshold: f64) {
    let mut model = PrescoredFracture::new(PrescoredSettings::default()).unwrap();
    model
        .make_breakable(world, wall, Arc::new(radial().clone()), threshold, 150)
        .unwrap();
    world.add_fracture_model(Box::new(model));
}

#[test]
fn prescored_wall_hit_by_a_ball_breaks_in_the_world_and_keeps_momentum() {
    let mut world = World::new();
    world.set_gravity(DVec3::ZERO).unwrap();
    let wall = world
        .add_body(BodyDesc::dynamic(Collider::from_shape(wall_shape(), 0.05).unwrap()).with_density(2300.0))
        .unwrap();
    let ball = world.add_body(falling_ball(DVec3::new(0.3, 0.6, -0.2))).unwrap();
    register_breakable(&mut world, wall, 500.0);
    let momentum = |world: &World| -> (DVec3, DVec3) {
        world.bodies().ids().fold((DVec3::ZERO, DVec3::ZERO), |(p, l), id| {
            let view = world.body(id).unwrap();
            let linear = view.state.linear_momentum(view.mass);
            (
                p + linear,
                l + view.state.position.cross(linear) + view.state.angular_momentum(view.mass),
            )
        })
    };
    // Over the step the wall breaks in, the breaking contact's impulses are taken back from both
    // bodies, so the world's momentum is what it was before the step.
    let dt = 1.0 / 30.0;
    let mut around_break = None;
    for _ in 0..4 {
        let before = momentum(&world);
        world.step(dt).unwrap();
        let broke = !world.fracture_model::<PrescoredFracture>().unwrap().events().is_empty();
        if broke && around_break.is_none() {
            around_break = Some((before, momentum(&world)));
        }
    }
    let model = world.fracture_model::<PrescoredFracture>().unwrap();
    assert!(model.failures().is_empty(), "{:?}", model.failures());
    assert_eq!(model.events().len(), 1, "the wall breaks once");
    let event = &model.events()[0];
    assert_eq!(event.parent, wall);
    assert!(!world.contains(wall));
    assert!(event.fragments.len() >= 10, "{} fragments", event.fragments.len());
    assert!(
        event
            .fragments
            .iter()
            .all(|f| world.contains(*f) && model.is_breakable(*f))
    );
    assert_close(
        event.momentum_after.linear,
        event.momentum_before.linear,
        1e-9,
        "event linear momentum",
    );
    assert_close(
        event.momentum_after.angular,
        event.momentum_before.angular,
        1e-9,
        "event angular momentum",
    );
    let (before, after) = around_break.unwrap();
    assert_close(after.0, before.0, 1e-9, "world linear momentum");
    assert_close(after.1, before.1, 1e-9, "world angular momentum");
    // The ball went on into the fragments: it kept moving down.
    assert!(world.linear_velocity(ball).unwrap().y < -1.0);
}

#[test]
fn prescored_a_table_top_broken_from_above_gives_back_what_its_supports_pushed() {
    // A table top on two static supports hit from above: in the step it breaks, the solve pushes
    // it down with the ball and up with the supports. Replaying the impact takes back both (not
    // the ball's impulse alone, which would leave the supports' push in the fragments and launch
    // them), so every body is where gravity alone would have taken it.
    let mut world = World::new();
    let dt = 1.0 / 30.0;
    let g = world.gravity();
    let support = Shape::Cuboid(Cuboid::try_new(DVec3::new(0.1, 0.45, 1.0)).unwrap());
    for x in [-1.3, 1.3] {
        let desc = BodyDesc::fixed(Collider::from_shape(support, 0.05).unwrap());
        world.add_body(desc.with_position(DVec3::new(x, 0.45, 0.0))).unwrap();
    }
    let top = world
        .add_body(
            BodyDesc::dynamic(Collider::from_shape(wall_shape(), 0.05).unwrap())
                .with_density(2300.0)
                .with_position(DVec3::new(0.0, 1.0, 0.0)),
        )
        .unwrap();
    world.add_body(falling_ball(DVec3::new(0.3, 1.4, -0.2))).unwrap();
    register_breakable(&mut world, top, 2000.0);
    for _ in 0..4 {
        // Kinetic energy once gravity alone has acted for a step: no contact may add to it.
        let with_gravity: f64 = world
            .bodies()
            .ids()
            .map(|id| world.body(id).unwrap())
            .filter(|view| view.kind == shatter_integrators::BodyKind::Dynamic)
            .map(|view| {
                let mut state = *view.state;
                state.linear_velocity += g * dt;
                state.kinetic_energy(view.mass)
            })
            .sum();
        let report = world.step(dt).unwrap();
        if report.fractures == 0 {
            continue;
        }
        let model = world.fracture_model::<PrescoredFracture>().unwrap();
        assert!(model.failures().is_empty(), "{:?}", model.failures());
        let fragments = &model.events()[0].fragments;
        assert!(fragments.len() >= 10, "{} fragments", fragments.len());
        assert!(
            report.kinetic_energy_after <= with_gravity * (1.0 + 1e-9),
            "{} J after the break, {with_gravity} J with gravity alone",
            report.kinetic_energy_after
        );
        // The top was at rest: its pieces fall with gravity's step of speed, none goes up.
        for fragment in fragments {
            let v = world.linear_velocity(*fragment).unwrap();
            assert!(
                (v - g * dt).length() < 0.05,
                "fragment velocity {v} m/s, gravity alone gives {} m/s",
                g * dt
            );
        }
        return;
    }
    panic!("the table top did not break");
}

/// Volume inside a fragment's level set, measured by `per_axis^3` points in each cell of its
/// grid, m^3.
fn level_set_volume(desc: &BodyDesc, per_axis: usize) -> f64 {
    let Geometry::LevelSet(grid) = collider(desc).geometry() else {
        panic!("a fragment has a level set")
    };
    let spec = grid.spec();
    let h = spec.spacing;
    let step = h / per_axis as f64;
    let [nx, ny, nz] = spec.dims.map(|n| (n - 1) * per_axis);
    let mut inside = 0usize;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let x = spec.origin + (DVec3::new(i as f64, j as f64, k as f64) + 0.5) * step;
                inside += usize::from(grid.value(x) < 0.0);
            }
        }
    }
    inside as f64 * step * step * step
}

/// A fragment's collision geometry holds the solid its mass stands for: the level set's inside
/// has the volume of the fragment's cells, piece by piece, on the thinnest pieces too (a piece
/// whose geometry is much smaller than its mass rocks on its few particles and never rests).
#[test]
fn prescored_fragment_level_sets_hold_the_volume_of_their_cells() {
    let spiral = FracturePattern::spiral(&SpiralPattern {
        count: 2000,
        ..SpiralPattern::default()
    })
    .unwrap();
    let mass = 100.0;
    let shattered = break_wall(
        &spiral,
        Pose::IDENTITY,
        mass,
        ParentMomentum::default(),
        Debris::Keep,
        0.0,
    );
    let density = mass / shattered.cell_volume;
    let mut ratios: Vec<f64> = shattered
        .fragments
        .iter()
        .map(|desc| {
            let MassSource::Properties(properties) = desc.mass else {
                unreachable!()
            };
            level_set_volume(desc, 4) / (properties.mass() / density)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let quantile = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    eprintln!(
        "{} fragments; level-set volume over cell volume: min {:.3}, p10 {:.3}, median {:.3}, p90 {:.3}, max {:.3}",
        ratios.len(),
        ratios[0],
        quantile(0.1),
        quantile(0.5),
        quantile(0.9),
        ratios[ratios.len() - 1]
    );
    assert!(ratios.len() > 500, "{} fragments", ratios.len());
    // The cells' edges and corners are rounded by trilinear interpolation; nothing else is lost,
    // and nothing is added beyond the cells.
    assert!(ratios[0] >= 0.6, "a fragment holds {:.3} of its cells", ratios[0]);
    assert!(
        quantile(0.1) >= 0.9,
        "a tenth of the fragments hold under {:.3}",
        quantile(0.1)
    );
    assert!(
        ratios[ratios.len() - 1] <= 1.0,
        "a fragment holds {:.3}",
        ratios[ratios.len() - 1]
    );

    // The particles reach as far as the cells do, every way along the lattice, to within a
    // quarter of a cell: a fragment lying on any side stands on the corners of its cells.
    let mut widest = 0.0f64;
    for desc in &shattered.fragments {
        let collider = collider(desc);
        let Geometry::LevelSet(grid) = collider.geometry() else {
            unreachable!()
        };
        let cells = grid.inside_samples_box().unwrap().expanded(0.5 * SPACING);
        let frame = collider.grid_frame();
        let (mut low, mut high) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        for p in collider.particles() {
            let x = frame.inverse_transform_point(*p);
            low = low.min(x);
            high = high.max(x);
        }
        let gap = (low - cells.min).max(cells.max - high).max_element();
        widest = widest.max(gap);
        assert!(
            gap <= 0.25 * SPACING,
            "a fragment's particles span {low}..{high}, its cells {}..{}",
            cells.min,
            cells.max
        );
    }
    eprintln!("largest gap between particles and cells: {widest:.2e} m");
}

/// A 6 x 6 x 20 cm bar (3 x 3 x 10 cells of 2 cm) cut lengthwise into nine sticks one cell
/// across by a pattern whose walls pass 3 mm from the middle row of samples: the middle stick's
/// pattern region is a 6 mm needle, but its mass is its whole 2 x 2 x 20 cm of cells. Returns
/// the middle stick and the bar's mass.
fn middle_stick() -> (BodyDesc, f64) {
    let half = DVec3::new(0.03, 0.03, 0.1);
    let shape = Shape::Cuboid(Cuboid::try_new(half).unwrap());
    let lattice = shape_lattice(&shape, 10).unwrap();
    assert_eq!(lattice.spec().spacing, SPACING);
    let particles = Collider::from_shape(shape, 0.03).unwrap().particles().to_vec();
    // The pattern's box is scaled to enclose the bar from its centre: 0.2 m per pattern unit.
    // Sites 0.03 units (6 mm) apart put walls 3 mm either side of the middle sample.
    let centre = shatter_fracture::prescored::BOX_CENTRE;
    let mut sites = Vec::new();
    for i in -1..=1 {
        for j in -1..=1 {
            sites.push(centre + DVec3::new(i as f64, j as f64, 0.0) * 0.03);
        }
    }
    let pattern = FracturePattern::power_diagram(sites, vec![0.0; 9], centre, DQuat::IDENTITY).unwrap();
    let mass = 2300.0 * 8.0 * half.element_product();
    let parent = Parent {
        level_set: &lattice,
        particles: &particles,
        pose: Pose::IDENTITY,
        mass,
        momentum: ParentMomentum::default(),
    };
    let settings = ShatterSettings {
        alignment: Alignment::Exact,
        ..settings(Debris::Keep, 0.0)
    };
    let shattered = shatter(&parent, &pattern, DVec3::ZERO, DVec3::Z, &settings).unwrap();
    assert!((shattered.placement.scale - 0.2).abs() < 1e-12);
    assert_eq!(shattered.fragments.len(), 9);
    let middle = shattered
        .fragments
        .iter()
        .find(|desc| desc.pose.position.truncate().length() < 1e-9)
        .expect("a stick along the bar's axis")
        .clone();
    (middle, mass)
}

/// The needle-thin middle stick, laid on the ground turned a little about its length, tips onto
/// a face of its cells and rests there, its centre of mass half a cell up, and falls asleep. (Its
/// geometry was once the thin tube of its pattern region with its particles along a line, from
/// which it hung rocking at up to 14 rad/s and never slept.)
#[test]
fn prescored_a_stick_one_cell_across_rests_on_a_face_of_its_cells() {
    let (stick, bar_mass) = middle_stick();
    let MassSource::Properties(properties) = stick.mass else {
        unreachable!()
    };
    assert!((properties.mass() - bar_mass / 9.0).abs() < 1e-9 * bar_mass);
    let mut world = World::new();
    // The scenes' ground: a plane.
    let ground = Shape::HalfSpace(shatter_collision::HalfSpace::try_new(DVec3::Y, 0.0).unwrap());
    world
        .add_body(BodyDesc::fixed(Collider::from_shape(ground, 0.05).unwrap()))
        .unwrap();
    // Lying along z, a centimetre above where it would rest, turned 0.1 rad about its length.
    let orientation = DQuat::from_rotation_z(0.1) * stick.pose.orientation;
    let id = world
        .add_body(
            stick
                .with_position(DVec3::new(0.0, 0.5 * SPACING + 0.01, 0.0))
                .with_orientation(orientation),
        )
        .unwrap();
    let dt = 1.0 / 30.0;
    let mut fastest_late = 0.0f64;
    for step in 0..60 {
        world.step(dt).unwrap();
        if step >= 30 {
            fastest_late = fastest_late.max(world.angular_velocity(id).unwrap().length());
        }
    }
    let height = world.pose(id).unwrap().position.y;
    assert!(
        (height - 0.5 * SPACING).abs() < 0.05 * SPACING,
        "the stick's centre rests {height} m up"
    );
    assert!(
        fastest_late < 0.05,
        "the stick still turns at {fastest_late} rad/s after 1 s"
    );
    assert!(!world.is_awake(id).unwrap(), "the stick is still awake after 2 s");
}

/// Su 2009 Fig. 5 as the `cylinder` scene builds it: over the 2 s after the ball arrives the
/// cylinder breaks once, in the step the ball reaches it, into about 25 pieces, and none of the
/// pieces breaks again as they topple onto the ground (at the cylinder's own threshold, one of
/// them landing flat did in some runs: the scene makes its pieces stronger).
#[test]
fn prescored_cylinder_scene_breaks_once_into_about_25_pieces() {
    let mut world = shatter_fracture::prescored::scenes::cylinder().unwrap().world;
    for _ in 0..60 {
        world.step(1.0 / 30.0).unwrap();
    }
    let model = world.fracture_model::<PrescoredFracture>().unwrap();
    assert!(model.failures().is_empty(), "{:?}", model.failures());
    let events: Vec<(f64, usize)> = model.events().iter().map(|e| (e.time, e.fragments.len())).collect();
    assert_eq!(events.len(), 1, "breaks (time, pieces): {events:?}");
    let (time, pieces) = events[0];
    assert!(time < 0.1, "broke at {time} s");
    assert!((15..=40).contains(&pieces), "{pieces} pieces");
}
