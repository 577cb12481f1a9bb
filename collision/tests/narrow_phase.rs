//! Narrow-phase contacts: exact analytic pairs, particle-against-level-set pairs, conventions.

use glam::{DQuat, DVec3};
use shatter_collision::{
    Capsule, Collider, Cuboid, GridSpec, HalfSpace, Pose, SdfGrid, Shape, Sphere, TriMesh, collide,
    level_set::level_set_from_mesh, particles::sample_surface,
};

fn cuboid(half: f64) -> Collider {
    Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(half)).unwrap()), 0.1).unwrap()
}

fn ground() -> Collider {
    Collider::from_shape(Shape::HalfSpace(HalfSpace::ground(0.0).unwrap()), 0.1).unwrap()
}

#[test]
fn narrow_phase_box_resting_on_ground_gives_its_four_corners() {
    let yaw = DQuat::from_rotation_y(0.37);
    let pose_box = Pose::new(DVec3::new(2.0, 0.499, -1.0), yaw);
    let manifold = collide(&cuboid(0.5), &pose_box, &ground(), &Pose::IDENTITY, 0.0).unwrap();
    assert_eq!(manifold.len(), 4);
    for contact in &manifold.contacts {
        assert!((contact.normal - DVec3::Y).length() < 1e-9, "{contact:?}");
        assert!((contact.depth - 0.001).abs() < 1e-9);
        // Corner index: bit 1 clear means the bottom face.
        assert_eq!(contact.feature.index() & 2, 0);
        let corner =
            pose_box.transform_point(Cuboid::try_new(DVec3::splat(0.5)).unwrap().corners()[contact.feature.index()]);
        assert!((contact.point - (corner + DVec3::Y * 0.0005)).length() < 1e-9);
    }
    // The same pair the other way round: same contacts, normals flipped, features of body B.
    let flipped = collide(&ground(), &Pose::IDENTITY, &cuboid(0.5), &pose_box, 0.0).unwrap();
    assert_eq!(flipped.len(), 4);
    for (c, f) in manifold.contacts.iter().zip(&flipped.contacts) {
        assert!((c.normal + f.normal).length() < 1e-15 && f.feature.is_b() && c.depth == f.depth);
    }
    // Lifted 2 mm: nothing without margin, four speculative contacts with a 5 mm margin.
    let lifted = Pose::new(DVec3::new(2.0, 0.502, -1.0), yaw);
    assert!(
        collide(&cuboid(0.5), &lifted, &ground(), &Pose::IDENTITY, 0.0)
            .unwrap()
            .is_empty()
    );
    let speculative = collide(&cuboid(0.5), &lifted, &ground(), &Pose::IDENTITY, 0.005).unwrap();
    assert_eq!(speculative.len(), 4);
    assert!(speculative.contacts.iter().all(|c| (c.depth + 0.002).abs() < 1e-12));
}

#[test]
fn narrow_phase_sphere_pairs_are_exact() {
    let a = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.5).unwrap()), 0.1).unwrap();
    let b = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.75).unwrap()), 0.1).unwrap();
    let direction = DVec3::new(1.0, 2.0, -2.0) / 3.0;
    let pose_b = Pose::from_position(DVec3::new(0.1, 0.2, 0.3));
    let pose_a = Pose::from_position(pose_b.position + direction * 1.2);
    let manifold = collide(&a, &pose_a, &b, &pose_b, 0.0).unwrap();
    assert_eq!(manifold.len(), 1);
    let c = manifold.contacts[0];
    assert!((c.depth - 0.05).abs() < 1e-14, "{}", c.depth);
    assert!((c.normal - direction).length() < 1e-15);
    assert!((c.point - (pose_b.position + direction * 0.725)).length() < 1e-14);
    // Against the ground, and a capsule lying on it touches with both ends.
    let on_ground = collide(
        &a,
        &Pose::from_position(DVec3::Y * 0.4),
        &ground(),
        &Pose::IDENTITY,
        0.0,
    )
    .unwrap();
    assert!((on_ground.contacts[0].depth - 0.1).abs() < 1e-15 && on_ground.contacts[0].normal == DVec3::Y);
    let capsule = Collider::from_shape(Shape::Capsule(Capsule::try_new(1.0, 0.2).unwrap()), 0.1).unwrap();
    let lying = Pose::new(DVec3::Y * 0.19, DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2));
    let manifold = collide(&capsule, &lying, &ground(), &Pose::IDENTITY, 0.0).unwrap();
    assert_eq!(manifold.len(), 2);
    assert!(manifold.contacts.iter().all(|c| (c.depth - 0.01).abs() < 1e-12));
}

#[test]
fn narrow_phase_level_set_normals_follow_the_surface() {
    // A level-set ball 64 cells across (from a sphere mesh of 20,480 faces) against a small
    // analytic ball pressed into it from many directions: each contact normal is within 1 degree
    // of the sphere's true normal where the contact is.
    let mesh = TriMesh::icosphere(1.0, 5);
    let spec = GridSpec::with_resolution(mesh.bounds().unwrap(), 64, 3).unwrap();
    let grid = level_set_from_mesh(&mesh, spec).unwrap();
    let big = Collider::from_level_set(grid, sample_surface(&mesh, 0.1, 1).unwrap()).unwrap();
    let probe = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.05).unwrap()), 0.02).unwrap();
    let mut rng = shatter_integrators::SplitMix64::new(5);
    let mut worst = 0.0f64;
    for _ in 0..200 {
        let direction = rng.unit_vector();
        let pose = Pose::from_position(direction * 1.04);
        let manifold = collide(&probe, &pose, &big, &Pose::IDENTITY, 0.0).unwrap();
        assert!(!manifold.is_empty());
        for c in &manifold.contacts {
            if !c.feature.is_b() {
                worst = worst.max(c.normal.angle_between(c.point.normalize()).to_degrees());
            }
        }
    }
    println!("worst level-set contact normal error: {worst:.3} degrees");
    assert!(worst < 1.0, "worst level-set normal error {worst} degrees");
}

#[test]
fn narrow_phase_level_set_box_on_ground_keeps_four_spread_contacts() {
    let mesh = TriMesh::cuboid(DVec3::new(0.5, 0.25, 0.5));
    let spec = GridSpec::with_resolution(mesh.bounds().unwrap(), 32, 3).unwrap();
    let grid = level_set_from_mesh(&mesh, spec).unwrap();
    let slab = Collider::from_level_set(grid, sample_surface(&mesh, 0.1, 2).unwrap()).unwrap();
    let pose = Pose::from_position(DVec3::Y * 0.24);
    let manifold = collide(&slab, &pose, &ground(), &Pose::IDENTITY, 0.0).unwrap();
    assert_eq!(manifold.len(), 4);
    let corners = manifold
        .contacts
        .iter()
        .filter(|c| c.point.x.abs() > 0.49 && c.point.z.abs() > 0.49)
        .count();
    assert!(corners >= 3, "{manifold:?}");
    assert!(
        manifold
            .contacts
            .iter()
            .all(|c| c.normal == DVec3::Y && (c.depth - 0.01).abs() < 1e-12)
    );
    // Same contacts the next step after a sub-millimetre drift: the feature ids are stable.
    let drifted = collide(
        &slab,
        &Pose::from_position(DVec3::new(1e-4, 0.2401, 0.0)),
        &ground(),
        &Pose::IDENTITY,
        0.0,
    )
    .unwrap();
    let ids = |m: &shatter_collision::ContactManifold| m.contacts.iter().map(|c| c.feature).collect::<Vec<_>>();
    assert_eq!(ids(&manifold), ids(&drifted));
}

#[test]
fn narrow_phase_refuses_bad_poses_and_margins_by_name() {
    let bad = Pose::new(DVec3::new(f64::NAN, 0.0, 0.0), DQuat::IDENTITY);
    let err = collide(&cuboid(1.0), &bad, &ground(), &Pose::IDENTITY, 0.0).unwrap_err();
    assert!(err.to_string().contains("pose of body A"), "{err}");
    let err = collide(&cuboid(1.0), &Pose::IDENTITY, &ground(), &Pose::IDENTITY, -1.0).unwrap_err();
    assert!(err.to_string().contains("contact margin"), "{err}");
    let spec = GridSpec::try_new(DVec3::ZERO, 1.0, [3, 3, 3]).unwrap();
    let outside = SdfGrid::from_fn(spec, |_| 1.0).unwrap();
    assert!(
        Collider::from_level_set(outside, vec![])
            .unwrap_err()
            .to_string()
            .contains("empty")
    );
}

#[test]
fn narrow_phase_grid_only_body_gets_particles_on_its_zero_set() {
    // A ball known only by its level set: particles come from the grid itself.
    let radius = 0.5;
    let bounds = shatter_collision::Aabb::from_center(DVec3::ZERO, DVec3::splat(radius));
    let spec = GridSpec::with_resolution(bounds, 32, 3).unwrap();
    let grid = SdfGrid::from_fn(spec, |p| p.length() - radius).unwrap();
    let ball = Collider::from_grid(grid, 0.05).unwrap();
    let cell = spec.spacing;
    // The trilinear zero set departs from the sphere by at most 3 h^2 / (8 r) (interpolation
    // error of a field with curvature 1/r along three axes): 0.023 cells here.
    let bound = 3.0 * cell * cell / (8.0 * radius);
    let worst = ball
        .particles()
        .iter()
        .map(|p| (p.length() - radius).abs())
        .fold(0.0, f64::max);
    assert!(worst < bound, "a particle is {worst} m off the sphere (bound {bound})");
    let manifold = collide(
        &ball,
        &Pose::from_position(DVec3::Y * 0.49),
        &ground(),
        &Pose::IDENTITY,
        0.0,
    )
    .unwrap();
    let deepest = manifold.max_depth().unwrap();
    assert!((deepest - 0.01).abs() < bound, "deepest {deepest}");
    assert!(manifold.contacts.iter().all(|c| c.normal == DVec3::Y));
}

/// Signed distance from `p` (box frame) to the surface of the box with `half` extents, by brute
/// force: the nearest of a dense grid of surface points, signed by containment.
fn box_distance_brute(p: DVec3, half: DVec3) -> f64 {
    let n = 120;
    let mut best = f64::INFINITY;
    for axis in 0..3 {
        for sign in [-1.0, 1.0] {
            for i in 0..=n {
                for j in 0..=n {
                    let (u, v) = (i as f64 / n as f64 * 2.0 - 1.0, j as f64 / n as f64 * 2.0 - 1.0);
                    let mut q = DVec3::ZERO;
                    q[axis] = sign * half[axis];
                    q[(axis + 1) % 3] = u * half[(axis + 1) % 3];
                    q[(axis + 2) % 3] = v * half[(axis + 2) % 3];
                    best = best.min((p - q).length());
                }
            }
        }
    }
    let inside = p.x.abs() < half.x && p.y.abs() < half.y && p.z.abs() < half.z;
    if inside { -best } else { best }
}

#[test]
fn narrow_phase_ball_against_box_matches_brute_force_distance() {
    // Balls in random places around (and inside) a rotated, off-centre box: one contact whose
    // depth is the ball's radius minus the brute-force signed distance of its centre (within the
    // surface grid's resolution), whose normal points from the box to the ball, and whose point
    // lies midway between the surfaces. The reversed pair gives the same contact turned round.
    let half = DVec3::new(0.7, 0.3, 0.45);
    let boxed = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(half).unwrap()), 0.1).unwrap();
    let radius = 0.25;
    let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(radius).unwrap()), 0.1).unwrap();
    let pose_box = Pose::new(
        DVec3::new(0.3, -1.0, 2.0),
        DQuat::from_euler(glam::EulerRot::XYZ, 0.4, -1.1, 0.3),
    );
    let mut rng = shatter_integrators::SplitMix64::new(11);
    let (mut touching, mut inside) = (0, 0);
    for _ in 0..300 {
        let local = DVec3::new(rng.range(-1.1, 1.1), rng.range(-0.7, 0.7), rng.range(-0.8, 0.8));
        let pose_ball = Pose::from_position(pose_box.transform_point(local));
        let expected_depth = radius - box_distance_brute(local, half);
        let manifold = collide(&ball, &pose_ball, &boxed, &pose_box, 0.0).unwrap();
        if expected_depth < -0.01 {
            assert!(manifold.is_empty(), "{local} {manifold:?}");
            assert!(
                (manifold.separation + expected_depth).abs() < 0.01,
                "{}",
                manifold.separation
            );
            continue;
        }
        if expected_depth < 0.01 {
            continue;
        }
        touching += 1;
        inside += usize::from(local.abs().cmplt(half).all());
        assert_eq!(manifold.len(), 1, "{local}");
        let c = manifold.contacts[0];
        assert!(
            (c.depth - expected_depth).abs() < 0.01,
            "{local}: {} vs {expected_depth}",
            c.depth
        );
        assert!((c.normal.length() - 1.0).abs() < 1e-12);
        // The ball's deepest point and the box's surface point straddle the contact point.
        let ball_deepest = pose_ball.position - c.normal * radius;
        assert!((c.point - (ball_deepest + c.normal * 0.5 * c.depth)).length() < 1e-12);
        let surface = pose_box.inverse_transform_point(c.point + c.normal * 0.5 * c.depth);
        assert!(box_distance_brute(surface, half).abs() < 0.01, "{surface}");
        let flipped = collide(&boxed, &pose_box, &ball, &pose_ball, 0.0).unwrap();
        let f = flipped.contacts[0];
        assert!(f.normal == -c.normal && f.depth == c.depth && f.point == c.point && f.feature.is_b());
    }
    assert!(touching > 50 && inside > 5, "{touching} touching, {inside} inside");
}

#[test]
fn narrow_phase_ball_on_box_top_is_one_exact_contact() {
    // A ball resting 1 mm into the top face of a slab, off its centre: the exact vertical contact
    // the particle path only approximated; a ball lifted 2 mm has only a speculative contact
    // within a 5 mm margin, and none without one.
    let slab = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::new(5.0, 0.25, 5.0)).unwrap()), 0.1).unwrap();
    let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.25).unwrap()), 0.1).unwrap();
    let slab_pose = Pose::from_position(DVec3::new(0.0, -0.25, 0.0));
    let resting = Pose::from_position(DVec3::new(1.3, 0.249, -2.7));
    let manifold = collide(&ball, &resting, &slab, &slab_pose, 0.0).unwrap();
    assert_eq!(manifold.len(), 1);
    let c = manifold.contacts[0];
    assert!((c.depth - 0.001).abs() < 1e-12 && c.normal == DVec3::Y);
    assert!((c.point - DVec3::new(1.3, -0.0005, -2.7)).length() < 1e-12);
    let lifted = Pose::from_position(DVec3::new(1.3, 0.252, -2.7));
    let apart = collide(&ball, &lifted, &slab, &slab_pose, 0.0).unwrap();
    assert!(apart.is_empty() && (apart.separation - 0.002).abs() < 1e-12);
    let speculative = collide(&ball, &lifted, &slab, &slab_pose, 0.005).unwrap();
    assert!(speculative.len() == 1 && (speculative.contacts[0].depth + 0.002).abs() < 1e-12);
}

#[test]
fn narrow_phase_ball_against_capsule_is_exact() {
    // A ball beside a tilted capsule's cylinder, then over one of its caps: depth from the
    // distance to the segment, normal along the perpendicular.
    let capsule = Collider::from_shape(Shape::Capsule(Capsule::try_new(0.8, 0.2).unwrap()), 0.1).unwrap();
    let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.3).unwrap()), 0.1).unwrap();
    let tilt = DQuat::from_rotation_z(0.6);
    let pose_capsule = Pose::new(DVec3::new(1.0, 2.0, 3.0), tilt);
    let axis = tilt * DVec3::Y;
    let side = tilt * DVec3::X;
    // Beside the cylinder, 0.45 m from the axis: 0.05 m deep.
    let beside = Pose::from_position(pose_capsule.position + axis * 0.3 + side * 0.45);
    let c = collide(&ball, &beside, &capsule, &pose_capsule, 0.0).unwrap().contacts[0];
    assert!((c.depth - 0.05).abs() < 1e-12 && (c.normal - side).length() < 1e-12);
    // Beyond the top cap along a diagonal: distance from the cap's centre.
    let direction = (axis + side).normalize();
    let over = Pose::from_position(pose_capsule.position + axis * 0.8 + direction * 0.48);
    let c = collide(&ball, &over, &capsule, &pose_capsule, 0.0).unwrap().contacts[0];
    assert!((c.depth - 0.02).abs() < 1e-12 && (c.normal - direction).length() < 1e-12);
    let flipped = collide(&capsule, &pose_capsule, &ball, &over, 0.0).unwrap().contacts[0];
    assert!(flipped.normal == -c.normal && flipped.depth == c.depth && flipped.feature.is_b());
}

fn capsule(half_height: f64, radius: f64) -> Collider {
    Collider::from_shape(Shape::Capsule(Capsule::try_new(half_height, radius).unwrap()), 0.1).unwrap()
}

#[test]
fn narrow_phase_capsule_lying_on_a_box_rests_on_two_exact_points() {
    // Lying along x on a slab's top face, 1 mm deep: the segment's two ends, exact depth, the
    // face's normal. Pushed half over the edge: the second point is where the segment leaves the
    // face. Tilted 0.2 rad: only the lower end touches.
    let slab = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::new(2.0, 0.25, 1.0)).unwrap()), 0.1).unwrap();
    let slab_pose = Pose::new(DVec3::new(0.0, -0.25, 0.0), DQuat::from_rotation_y(0.3));
    let lying = DQuat::from_rotation_y(0.3) * DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
    let rod = capsule(0.5, 0.2);
    let pose = Pose::new(DVec3::new(0.0, 0.199, 0.0), lying);
    let manifold = collide(&rod, &pose, &slab, &slab_pose, 0.0).unwrap();
    assert_eq!(manifold.len(), 2, "{manifold:?}");
    for c in &manifold.contacts {
        assert!(
            (c.depth - 0.001).abs() < 1e-12 && (c.normal - DVec3::Y).length() < 1e-12,
            "{c:?}"
        );
    }
    let span = (manifold.contacts[0].point - manifold.contacts[1].point).length();
    assert!((span - 1.0).abs() < 1e-12, "{span}");
    // Over the edge at x = 2 (slab frame): the segment spans 1.7 to 2.7, the face ends at 2.
    let over = Pose::new(slab_pose.transform_point(DVec3::new(2.2, 0.449, 0.0)), lying);
    let manifold = collide(&rod, &over, &slab, &slab_pose, 0.0).unwrap();
    let mut xs: Vec<f64> = manifold
        .contacts
        .iter()
        .map(|c| slab_pose.inverse_transform_point(c.point).x)
        .collect();
    xs.sort_by(f64::total_cmp);
    assert_eq!(xs.len(), 2, "{manifold:?}");
    assert!((xs[0] - 1.7).abs() < 1e-9 && (xs[1] - 2.0).abs() < 1e-9, "{xs:?}");
    let tilted = Pose::new(
        DVec3::new(0.0, 0.199 + 0.5 * 0.2f64.sin(), 0.0),
        lying * DQuat::from_rotation_z(0.2),
    );
    let manifold = collide(&rod, &tilted, &slab, &slab_pose, 0.0).unwrap();
    assert_eq!(manifold.len(), 1, "{manifold:?}");
    assert!((manifold.contacts[0].depth - 0.001).abs() < 1e-9);
    // The same pair the other way round: normals turned, features of body B.
    let flipped = collide(&slab, &slab_pose, &rod, &pose, 0.0).unwrap();
    assert!(
        flipped.len() == 2
            && flipped
                .contacts
                .iter()
                .all(|c| c.feature.is_b() && (c.normal + DVec3::Y).length() < 1e-12)
    );
}

#[test]
fn narrow_phase_capsule_against_box_matches_brute_force_depth() {
    // Random capsules around a rotated box: where only the rounded part overlaps, the deepest
    // contact is the capsule radius minus the least distance of the segment from the box, found
    // here by sampling the segment densely and measuring each sample against a dense grid of
    // surface points.
    let half = DVec3::new(0.6, 0.35, 0.45);
    let boxed = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(half).unwrap()), 0.1).unwrap();
    let rod = capsule(0.4, 0.15);
    let pose_box = Pose::new(
        DVec3::new(-0.5, 0.2, 1.0),
        DQuat::from_euler(glam::EulerRot::XYZ, -0.3, 0.8, 0.1),
    );
    let mut rng = shatter_integrators::SplitMix64::new(3);
    let mut touching = 0;
    for _ in 0..60 {
        let local = DVec3::new(rng.range(-1.2, 1.2), rng.range(-0.9, 0.9), rng.range(-1.0, 1.0));
        let pose = Pose::new(pose_box.transform_point(local), pose_box.orientation * rng.rotation());
        let [p, q] = [DVec3::new(0.0, -0.4, 0.0), DVec3::new(0.0, 0.4, 0.0)]
            .map(|end| pose_box.inverse_transform_point(pose.transform_point(end)));
        let nearest = (0..=80)
            .map(|k| box_distance_brute(p.lerp(q, k as f64 / 80.0), half))
            .fold(f64::INFINITY, f64::min);
        let expected = 0.15 - nearest;
        let manifold = collide(&rod, &pose, &boxed, &pose_box, 0.0).unwrap();
        if expected < -0.01 {
            assert!(manifold.is_empty());
            continue;
        }
        if expected < 0.01 {
            continue;
        }
        touching += 1;
        let deepest = manifold.max_depth().unwrap();
        if nearest >= 0.0 {
            // Only the rounded part overlaps: the deepest contact is exactly the overlap.
            assert!((deepest - expected).abs() < 0.012, "{local}: {deepest} vs {expected}");
        } else {
            // The segment itself is inside: the contacts push out along one face normal, at least
            // as far as the segment's deepest point is below the surface.
            assert!(deepest >= expected - 0.012, "{local}: {deepest} vs {expected}");
        }
    }
    assert!(touching > 15, "{touching}");
}

#[test]
fn narrow_phase_capsules_side_by_side_touch_along_their_overlap() {
    // Two parallel capsules along x, one on top of the other and shifted 0.3 m: two contacts at
    // the ends of the overlap, 2 mm deep, normal +y. Crossed at right angles: one contact.
    let rod = capsule(0.5, 0.2);
    let along_x = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
    let lower = Pose::new(DVec3::ZERO, along_x);
    let upper = Pose::new(DVec3::new(0.3, 0.398, 0.0), along_x);
    let manifold = collide(&rod, &upper, &rod, &lower, 0.0).unwrap();
    assert_eq!(manifold.len(), 2, "{manifold:?}");
    let mut xs: Vec<f64> = manifold.contacts.iter().map(|c| c.point.x).collect();
    xs.sort_by(f64::total_cmp);
    assert!((xs[0] + 0.2).abs() < 1e-12 && (xs[1] - 0.5).abs() < 1e-12, "{xs:?}");
    assert!(
        manifold
            .contacts
            .iter()
            .all(|c| (c.depth - 0.002).abs() < 1e-12 && (c.normal - DVec3::Y).length() < 1e-12)
    );
    let crossed = Pose::new(
        DVec3::new(0.1, 0.398, 0.05),
        DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2),
    );
    let manifold = collide(&rod, &crossed, &rod, &lower, 0.0).unwrap();
    assert_eq!(manifold.len(), 1, "{manifold:?}");
    assert!((manifold.contacts[0].depth - 0.002).abs() < 1e-12);
    assert!((manifold.contacts[0].point - DVec3::new(0.1, 0.199, 0.0)).length() < 1e-12);
}
