//! Narrow phase, box against box: exact face manifolds for stacked and bonded boxes, edge-edge
//! contacts against a brute-force oracle, and random poses against an independent axis test.

use glam::{DQuat, DVec3};
use proptest::prelude::*;
use shatter_collision::{Collider, ContactManifold, Cuboid, FeatureId, Pose, Shape, SignedDistance, collide};

/// A box collider with surface particles 5 cm apart (the edge-edge oracle samples them).
fn cuboid(half: DVec3) -> Collider {
    Collider::from_shape(Shape::Cuboid(Cuboid::try_new(half).unwrap()), 0.05).unwrap()
}

/// A box collider with coarse particles, for tests that never look at them.
fn coarse_cuboid(half: DVec3) -> Collider {
    Collider::from_shape(Shape::Cuboid(Cuboid::try_new(half).unwrap()), 1.0).unwrap()
}

fn corners(half: DVec3, pose: &Pose) -> [DVec3; 8] {
    Cuboid::try_new(half)
        .unwrap()
        .corners()
        .map(|c| pose.transform_point(c))
}

fn axes(pose: &Pose) -> [DVec3; 3] {
    [DVec3::X, DVec3::Y, DVec3::Z].map(|a| pose.orientation * a)
}

/// Overlap of the two point sets' projections on unit `axis`, measured from B's points towards
/// A's (negative when the axis separates them by that much).
fn overlap(a: &[DVec3], b: &[DVec3], axis: DVec3) -> f64 {
    let range = |points: &[DVec3]| {
        points
            .iter()
            .map(|p| p.dot(axis))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)))
    };
    let ((a_lo, a_hi), (b_lo, b_hi)) = (range(a), range(b));
    (a_hi - b_lo).min(b_hi - a_lo)
}

/// The least overlap of the two boxes over the fifteen axes, from projected corners (an axis test
/// written independently of the library's): the boxes' penetration depth when positive.
fn sat_min(half_a: DVec3, pose_a: &Pose, half_b: DVec3, pose_b: &Pose) -> f64 {
    let (ca, cb) = (corners(half_a, pose_a), corners(half_b, pose_b));
    let (aa, ab) = (axes(pose_a), axes(pose_b));
    let mut candidates: Vec<DVec3> = aa.iter().chain(&ab).copied().collect();
    for x in aa {
        for y in ab {
            let l = x.cross(y);
            if l.length() > 1e-6 {
                candidates.push(l.normalize());
            }
        }
    }
    candidates
        .iter()
        .map(|l| overlap(&ca, &cb, *l))
        .fold(f64::INFINITY, f64::min)
}

/// Signed distance of a world point to a posed box.
fn distance(half: DVec3, pose: &Pose, point: DVec3) -> f64 {
    Cuboid::try_new(half)
        .unwrap()
        .distance(pose.inverse_transform_point(point))
}

fn ids(manifold: &ContactManifold) -> Vec<FeatureId> {
    manifold.contacts.iter().map(|c| c.feature).collect()
}

/// Every contact has normal `normal` and depth `depth` to 1e-12.
fn assert_uniform(manifold: &ContactManifold, normal: DVec3, depth: f64) {
    for c in &manifold.contacts {
        assert!((c.normal - normal).length() < 1e-12, "{c:?}");
        assert!((c.depth - depth).abs() < 1e-12, "{c:?}");
    }
}

/// The contacts' points projected on the xz plane, sorted.
fn footprint(manifold: &ContactManifold) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = manifold.contacts.iter().map(|c| (c.point.x, c.point.z)).collect();
    points.sort_by(|p, q| p.partial_cmp(q).unwrap());
    points
}

fn assert_footprint(manifold: &ContactManifold, expected: &[(f64, f64)]) {
    let mut expected = expected.to_vec();
    expected.sort_by(|p, q| p.partial_cmp(q).unwrap());
    let got = footprint(manifold);
    assert_eq!(got.len(), expected.len(), "{manifold:?}");
    for (g, e) in got.iter().zip(&expected) {
        assert!(
            (g.0 - e.0).abs() < 1e-12 && (g.1 - e.1).abs() < 1e-12,
            "{got:?} vs {expected:?}"
        );
    }
}

const UNIT: DVec3 = DVec3::splat(0.5);

#[test]
fn narrow_phase_box_box_equal_cubes_stacked_flush_touch_at_the_top_cubes_corners() {
    let cube = cuboid(UNIT);
    let bottom = Pose::IDENTITY;
    let top = Pose::from_position(DVec3::new(0.0, 0.999, 0.0));
    let manifold = collide(&cube, &top, &cube, &bottom, 0.0).unwrap();
    assert_eq!(manifold.len(), 4, "{manifold:?}");
    assert_uniform(&manifold, DVec3::Y, 1e-3);
    for c in &manifold.contacts {
        // Midway between the top cube's bottom (0.499) and the bottom cube's top (0.5).
        assert!((c.point.y - 0.4995).abs() < 1e-12, "{c:?}");
    }
    assert_footprint(&manifold, &[(-0.5, -0.5), (-0.5, 0.5), (0.5, -0.5), (0.5, 0.5)]);
    // The other way round: normals flipped, the same points.
    let flipped = collide(&cube, &bottom, &cube, &top, 0.0).unwrap();
    assert_uniform(&flipped, -DVec3::Y, 1e-3);
    assert_eq!(footprint(&flipped), footprint(&manifold));
    // A 0.1 mm drift sideways keeps the contacts' identities (for warm starting).
    for drift in [DVec3::X, DVec3::Z, -DVec3::X, DVec3::new(1.0, 0.0, -1.0).normalize()] {
        let drifted = Pose::from_position(top.position + drift * 1e-4);
        assert_eq!(
            ids(&collide(&cube, &drifted, &cube, &bottom, 0.0).unwrap()),
            ids(&manifold)
        );
    }
}

#[test]
fn narrow_phase_box_box_cube_turned_45_degrees_clips_to_an_octagon_reduced_to_four() {
    let cube = cuboid(UNIT);
    let top = Pose::new(
        DVec3::new(0.0, 0.999, 0.0),
        DQuat::from_rotation_y(std::f64::consts::FRAC_PI_4),
    );
    let manifold = collide(&cube, &top, &cube, &Pose::IDENTITY, 0.0).unwrap();
    assert_eq!(manifold.len(), 4, "{manifold:?}");
    assert_uniform(&manifold, DVec3::Y, 1e-3);
    // Each point is a vertex of the octagon where the square and the turned square cross: on the
    // boundary of both, |x| or |z| = 0.5 and |x| + |z| = sqrt(2) / 2.
    let half_diagonal = std::f64::consts::FRAC_1_SQRT_2;
    let mut seen = Vec::new();
    for c in &manifold.contacts {
        let (x, z) = (c.point.x, c.point.z);
        assert!((x.abs().max(z.abs()) - 0.5).abs() < 1e-12, "{c:?}");
        assert!((x.abs() + z.abs() - half_diagonal).abs() < 1e-12, "{c:?}");
        assert!(!seen.contains(&c.feature));
        seen.push(c.feature);
    }
    // The four kept span the largest area the reduction can find: no three of them on one side.
    let area = {
        let mut p = footprint(&manifold);
        p.sort_by(|a, b| a.1.atan2(a.0).partial_cmp(&b.1.atan2(b.0)).unwrap());
        (0..4)
            .map(|i| p[i].0 * p[(i + 1) % 4].1 - p[(i + 1) % 4].0 * p[i].1)
            .sum::<f64>()
            / 2.0
    };
    assert!(area > 0.5, "area {area}");
}

#[test]
fn narrow_phase_box_box_small_box_on_a_big_box_touches_at_its_own_corners() {
    let (small_half, big_half) = (DVec3::new(0.2, 0.1, 0.15), DVec3::new(1.0, 0.5, 1.2));
    let (small, big) = (cuboid(small_half), cuboid(big_half));
    let yaw = DQuat::from_rotation_y(0.3);
    let big_pose = Pose::from_position(DVec3::new(0.0, -0.5, 0.0));
    let small_pose = Pose::new(DVec3::new(0.3, 0.098, -0.2), yaw);
    let bottom_corners: Vec<(f64, f64)> = corners(small_half, &small_pose)
        .iter()
        .filter(|c| c.y < small_pose.position.y)
        .map(|c| (c.x, c.z))
        .collect();
    for (swapped, normal) in [(false, DVec3::Y), (true, -DVec3::Y)] {
        let pair = |small_pose: &Pose| {
            if swapped {
                collide(&big, &big_pose, &small, small_pose, 0.0).unwrap()
            } else {
                collide(&small, small_pose, &big, &big_pose, 0.0).unwrap()
            }
        };
        let manifold = pair(&small_pose);
        assert_eq!(manifold.len(), 4, "{manifold:?}");
        assert_uniform(&manifold, normal, 0.002);
        assert_footprint(&manifold, &bottom_corners);
        let drifted = Pose::new(small_pose.position + DVec3::new(1e-4, 0.0, -1e-4), yaw);
        assert_eq!(ids(&pair(&drifted)), ids(&manifold));
    }
}

#[test]
fn narrow_phase_box_box_brick_bond_bears_on_half_of_each_box_below() {
    // A cube on two cubes side by side, centred over their joint: its bottom covers half of each.
    let cube = cuboid(UNIT);
    let top = Pose::from_position(DVec3::new(0.0, 0.999, 0.0));
    for (side, x_far) in [(-1.0, -0.5), (1.0, 0.5)] {
        let below = Pose::from_position(DVec3::new(0.5 * side, 0.0, 0.0));
        let manifold = collide(&cube, &top, &cube, &below, 0.0).unwrap();
        assert_eq!(manifold.len(), 4, "{manifold:?}");
        assert_uniform(&manifold, DVec3::Y, 1e-3);
        assert_footprint(&manifold, &[(0.0, -0.5), (0.0, 0.5), (x_far, -0.5), (x_far, 0.5)]);
        for drift in [DVec3::X, DVec3::Z, -DVec3::Z] {
            let drifted = Pose::from_position(top.position + drift * 1e-4);
            assert_eq!(
                ids(&collide(&cube, &drifted, &cube, &below, 0.0).unwrap()),
                ids(&manifold)
            );
        }
    }
}

/// Cubes in a grid, as in a wall of aligned boxes: a neighbour beside, above or behind shares a
/// face and gets the face's four contacts; one diagonally beside shares only an edge and one
/// diagonally across only a corner, and those get no contact, placed exactly, within the 0.5 mm
/// tolerance either way, or turned by a microradian (no direction is the contact normal there:
/// box_box.rs). Pressed 1 mm into each other along one of the axes, or 1 cm apart along one
/// within the margin, they get contacts again (a face contact along the other axis, or a
/// speculative one across the gap).
#[test]
fn narrow_phase_box_box_cubes_sharing_only_an_edge_or_a_corner_get_no_contact() {
    let cube = coarse_cuboid(UNIT);
    let at = |x: f64, y: f64, z: f64| Pose::from_position(DVec3::new(x, y, z));
    let margin = 0.02;
    let pair = |pose: &Pose| collide(&cube, pose, &cube, &Pose::IDENTITY, margin).unwrap();
    for neighbour in [at(1.0, 0.0, 0.0), at(0.0, 1.0, 0.0), at(0.0, 0.0, -1.0)] {
        assert_eq!(pair(&neighbour).len(), 4, "{neighbour:?}: {:?}", pair(&neighbour));
    }
    let turned = |pose: Pose| Pose::new(pose.position, DQuat::from_rotation_z(1e-6));
    for neighbour in [
        at(1.0, 1.0, 0.0),
        at(-1.0, 0.0, 1.0),
        at(0.0, -1.0, -1.0),
        at(1.0, 1.0, 1.0),
        at(1.0004, 0.9996, 0.0),
        at(-0.9996, -1.0004, 0.0),
    ] {
        for pose in [neighbour, turned(neighbour)] {
            assert!(pair(&pose).is_empty(), "{pose:?}: {:?}", pair(&pose));
            let reversed = collide(&cube, &Pose::IDENTITY, &cube, &pose, margin).unwrap();
            assert!(reversed.is_empty(), "{pose:?} the other way round: {reversed:?}");
        }
    }
    // Pressed 1 mm together along x: a face contact along y, on the 1 mm strip the faces share.
    let pressed = pair(&at(0.999, 1.0, 0.0));
    assert!(!pressed.is_empty());
    assert_uniform(&pressed, DVec3::Y, 0.0);
    for c in &pressed.contacts {
        assert!(c.point.x >= 0.499 - 1e-12 && c.point.x <= 0.5 + 1e-12, "{c:?}");
    }
    // 1 cm apart along y, within the margin: speculative contacts across the gap.
    let apart = pair(&at(1.0, 1.01, 0.0));
    assert!(!apart.is_empty());
    assert_uniform(&apart, DVec3::Y, -0.01);
}

/// Overlap of the two bodies' surface samples along unit `direction` (from B towards A).
fn sampled_overlap(a: &[DVec3], b: &[DVec3], direction: DVec3) -> f64 {
    let lowest_a = a.iter().map(|p| p.dot(direction)).fold(f64::INFINITY, f64::min);
    let highest_b = b.iter().map(|p| p.dot(direction)).fold(f64::NEG_INFINITY, f64::max);
    highest_b - lowest_a
}

#[test]
fn narrow_phase_box_box_crossed_ridges_meet_edge_to_edge_as_a_brute_force_search_finds() {
    // B: a cube on an edge, ridge along x on top; A: a cube on an edge, ridge along z at the
    // bottom, 1 cm lower than touching. Then the whole scene turned, so no axis is a world axis.
    let cube = cuboid(UNIT);
    let apex = std::f64::consts::FRAC_1_SQRT_2;
    let (gap, dx, dz) = (-0.01, 0.1, -0.15);
    let turns = [
        DQuat::IDENTITY,
        DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1),
        DQuat::from_euler(glam::EulerRot::XYZ, -1.2, 0.4, 2.5),
    ];
    let mut rng = shatter_integrators::SplitMix64::new(11);
    let directions: Vec<DVec3> = (0..20_000).map(|_| rng.unit_vector()).collect();
    for turn in turns {
        let pose_b = Pose::new(DVec3::ZERO, turn * DQuat::from_rotation_x(std::f64::consts::FRAC_PI_4));
        let pose_a = Pose::new(
            turn * DVec3::new(dx, 2.0 * apex + gap, dz),
            turn * DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4),
        );
        let manifold = collide(&cube, &pose_a, &cube, &pose_b, 0.0).unwrap();
        assert_eq!(manifold.len(), 1, "{manifold:?}");
        let c = manifold.contacts[0];
        assert!(
            (c.depth + gap).abs() < 1e-12 && (c.normal - turn * DVec3::Y).length() < 1e-12,
            "{c:?}"
        );
        // Midway between the ridges where they cross: A's edge point is on A's surface at depth
        // inside B, and the other way round.
        let expected = turn * DVec3::new(dx, apex + 0.5 * gap, 0.0);
        assert!((c.point - expected).length() < 1e-12, "{c:?}");
        let (on_a, on_b) = (c.point - c.normal * 0.5 * c.depth, c.point + c.normal * 0.5 * c.depth);
        assert!(distance(UNIT, &pose_a, on_a).abs() < 1e-12 && distance(UNIT, &pose_b, on_b).abs() < 1e-12);
        // Brute force: the surfaces sampled densely; no direction of 20,000 random ones, then a
        // local search from the best, separates them by a shorter move than the contact's depth.
        let world = |pose: &Pose| {
            cube.particles()
                .iter()
                .map(|p| pose.transform_point(*p))
                .collect::<Vec<_>>()
        };
        let (a, b) = (world(&pose_a), world(&pose_b));
        assert!((sampled_overlap(&a, &b, c.normal) - c.depth).abs() < 1e-12);
        let mut best = directions
            .iter()
            .map(|d| (sampled_overlap(&a, &b, *d), *d))
            .fold((f64::INFINITY, DVec3::Y), |x, y| if y.0 < x.0 { y } else { x });
        let mut step = 0.05;
        while step > 1e-9 {
            let mut improved = false;
            for axis in [DVec3::X, DVec3::Y, DVec3::Z, -DVec3::X, -DVec3::Y, -DVec3::Z] {
                let d = (best.1 + axis * step).normalize();
                let o = sampled_overlap(&a, &b, d);
                if o < best.0 {
                    (best, improved) = ((o, d), true);
                }
            }
            if !improved {
                step *= 0.5;
            }
        }
        assert!(
            best.0 >= c.depth - 1e-12,
            "brute force found {best:?} below {}",
            c.depth
        );
        assert!(best.0 - c.depth < 1e-6, "brute force {} vs {}", best.0, c.depth);
    }
}

#[test]
fn narrow_phase_box_box_separated_boxes_touch_only_within_the_margin() {
    let cube = cuboid(UNIT);
    // Face to face, 1 cm apart.
    let top = Pose::from_position(DVec3::new(0.2, 1.01, 0.0));
    assert!(collide(&cube, &top, &cube, &Pose::IDENTITY, 0.0).unwrap().is_empty());
    assert!(collide(&cube, &top, &cube, &Pose::IDENTITY, 0.0099).unwrap().is_empty());
    let speculative = collide(&cube, &top, &cube, &Pose::IDENTITY, 0.02).unwrap();
    assert_eq!(speculative.len(), 4);
    assert_uniform(&speculative, DVec3::Y, -0.01);
    // Ridges crossed 1 cm apart: nothing, or one speculative edge-edge contact.
    let apex = std::f64::consts::FRAC_1_SQRT_2;
    let pose_b = Pose::new(DVec3::ZERO, DQuat::from_rotation_x(std::f64::consts::FRAC_PI_4));
    let pose_a = Pose::new(
        DVec3::new(0.0, 2.0 * apex + 0.01, 0.0),
        DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4),
    );
    assert!(collide(&cube, &pose_a, &cube, &pose_b, 0.005).unwrap().is_empty());
    let edge = collide(&cube, &pose_a, &cube, &pose_b, 0.02).unwrap();
    assert_eq!(edge.len(), 1);
    assert!((edge.contacts[0].depth + 0.01).abs() < 1e-12);
    // Far apart along a diagonal.
    let far = Pose::new(DVec3::splat(3.0), DQuat::from_rotation_y(0.4));
    assert!(collide(&cube, &far, &cube, &Pose::IDENTITY, 0.1).unwrap().is_empty());
}

#[test]
fn narrow_phase_box_box_refuses_a_nan_pose_by_name() {
    let cube = cuboid(UNIT);
    let bad = Pose::new(DVec3::new(0.0, f64::NAN, 0.0), DQuat::IDENTITY);
    let err = collide(&cube, &Pose::IDENTITY, &cube, &bad, 0.0).unwrap_err();
    assert!(err.to_string().contains("pose of body B"), "{err}");
}

fn unit_quaternion() -> impl Strategy<Value = DQuat> {
    // A uniform point in the unit 4-ball, away from the origin, normalized: uniform rotations.
    prop::array::uniform4(-1.0f64..1.0)
        .prop_filter("inside the ball, not at its centre", |q| {
            let n = q.iter().map(|x| x * x).sum::<f64>();
            n > 0.01 && n <= 1.0
        })
        .prop_map(|q| DQuat::from_xyzw(q[0], q[1], q[2], q[3]).normalize())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn narrow_phase_box_box_random_overlaps_are_resolved_by_the_contact_normal(
        half_a in prop::array::uniform3(0.1f64..1.0),
        half_b in prop::array::uniform3(0.1f64..1.0),
        rot_a in unit_quaternion(),
        rot_b in unit_quaternion(),
        direction in prop::array::uniform3(-1.0f64..1.0),
        depth_fraction in 0.001f64..0.2,
    ) {
        let (half_a, half_b) = (DVec3::from(half_a), DVec3::from(half_b));
        let direction = DVec3::from(direction);
        prop_assume!(direction.length() > 0.1);
        let direction = direction.normalize();
        let smallest = half_a.min_element().min(half_b.min_element());
        let target = depth_fraction * smallest;
        let pose_a = Pose::new(DVec3::new(0.3, -0.2, 0.1), rot_a);
        let place = |d: f64| Pose::new(pose_a.position - direction * d, rot_b);
        // B moved away from A along `direction` until the boxes overlap by `target` (the least
        // overlap decreases as B moves away): bisection.
        let (mut near, mut far) = (0.0, 4.0);
        for _ in 0..100 {
            let mid = 0.5 * (near + far);
            if sat_min(half_a, &pose_a, half_b, &place(mid)) > target { near = mid } else { far = mid }
        }
        let pose_b = place(0.5 * (near + far));
        let penetration = sat_min(half_a, &pose_a, half_b, &pose_b);
        let manifold = collide(&coarse_cuboid(half_a), &pose_a, &coarse_cuboid(half_b), &pose_b, 0.0).unwrap();
        prop_assert!(!manifold.is_empty() && manifold.len() <= 4, "{manifold:?}");
        let normal = manifold.contacts[0].normal;
        prop_assert!((normal.length() - 1.0).abs() < 1e-12);
        for c in &manifold.contacts {
            prop_assert!(c.normal == normal, "{manifold:?}");
            prop_assert!(c.depth > 0.0 && c.depth <= penetration + 1e-3 * smallest + 1e-12, "{c:?} vs {penetration}");
            // Midway between the surfaces: inside or on each box to within half the depth.
            prop_assert!(distance(half_a, &pose_a, c.point) <= 0.5 * c.depth + 1e-12, "{c:?}");
            prop_assert!(distance(half_b, &pose_b, c.point) <= 0.5 * c.depth + 1e-12, "{c:?}");
        }
        // The deepest contact is the penetration depth, up to the tolerance that prefers face axes
        // and the band within which the reduction counts depths as tied (it keeps the lowest
        // feature id among them, so the kept four do not flip on rounding noise).
        let band = 1e-3 * smallest;
        let deepest = manifold.max_depth().unwrap();
        prop_assert!(deepest >= penetration - band - 1e-12 && deepest <= penetration + band + 1e-12,
            "deepest {deepest} vs penetration {penetration}");
        // Moving B by the deepest depth and the band against the normal separates the boxes.
        let moved = Pose::new(pose_b.position - normal * (deepest + band + 1e-9), rot_b);
        prop_assert!(sat_min(half_a, &pose_a, half_b, &moved) < 0.0);
    }
}
