//! Both engines get the same bodies from each benchmark scene, and step them sanely.
//!
//! rapier3d (default features) holds `f32`, so its values are compared with the description
//! rounded to `f32` (positions and orientations exactly, masses, which rapier computes in `f32`,
//! to a few `f32` roundings); shatter's with the description itself to 1e-9 relative.

use glam::{DQuat, DVec3};
use shatter_peers::{BodySample, Case, RapierWorld, ShatterWorld, fastest};

/// Relative tolerance for values shatter computes in `f64`.
const F64_TOLERANCE: f64 = 1e-9;
/// Relative tolerance for masses rapier computes in `f32` from a density and a volume: a few
/// roundings.
const F32_TOLERANCE: f64 = 4.0 * f32::EPSILON as f64;

/// One case per scene, sleeping off.
fn one_case_per_scene() -> Vec<Case> {
    Case::all()
        .into_iter()
        .filter(|case| !case.sleeping)
        .fold(Vec::new(), |mut cases, case| {
            if cases.iter().all(|c: &Case| c.scene.name != case.scene.name) {
                cases.push(case);
            }
            cases
        })
}

fn close(a: f64, b: f64, relative: f64) -> bool {
    (a - b).abs() <= relative * a.abs().max(b.abs())
}

fn close3(a: DVec3, b: DVec3, relative: f64) -> bool {
    (0..3).all(|i| close(a[i], b[i], relative))
}

fn rounded(v: DVec3) -> DVec3 {
    v.as_vec3().as_dvec3()
}

fn rounded_quat(q: DQuat) -> DQuat {
    DQuat::from_xyzw(
        q.x as f32 as f64,
        q.y as f32 as f64,
        q.z as f32 as f64,
        q.w as f32 as f64,
    )
}

fn all_finite(bodies: &[BodySample]) -> bool {
    bodies
        .iter()
        .all(|b| b.position.is_finite() && b.orientation.is_finite() && b.linear_velocity.is_finite())
}

#[test]
fn peers_both_engines_build_the_described_bodies() {
    let cases = one_case_per_scene();
    assert_eq!(cases.len(), 4, "one case for each benchmark scene");
    for case in &cases {
        let name = case.scene.name;
        let shatter = ShatterWorld::new(case).bodies();
        let rapier = RapierWorld::new(case).bodies();
        assert_eq!(shatter.len(), case.scene.bodies.len(), "{name}");
        assert_eq!(rapier.len(), case.scene.bodies.len(), "{name}");
        for ((described, s), r) in case.scene.bodies.iter().zip(&shatter).zip(&rapier) {
            assert_eq!((s.fixed, r.fixed), (described.fixed, described.fixed), "{name}");
            assert!(close3(s.position, described.position, F64_TOLERANCE), "{name}: {s:?}");
            assert!(
                close3(r.position, rounded(described.position), F64_TOLERANCE),
                "{name}: {r:?}"
            );
            // Cross-engine: the same place to within one rounding to f32.
            assert!(
                close3(s.position, r.position, f32::EPSILON as f64),
                "{name}: {s:?} {r:?}"
            );
            assert!(
                s.orientation.dot(described.orientation).abs() > 1.0 - F64_TOLERANCE,
                "{name}"
            );
            assert_eq!(r.orientation, rounded_quat(described.orientation), "{name}");
            if !described.fixed {
                let mass = described.mass();
                assert!(
                    close(s.mass, mass, F64_TOLERANCE),
                    "{name}: shatter {} kg, {mass} kg",
                    s.mass
                );
                assert!(
                    close(r.mass, mass, F32_TOLERANCE),
                    "{name}: rapier {} kg, {mass} kg",
                    r.mass
                );
            }
        }
    }
}

#[test]
fn peers_a_few_steps_keep_every_body_finite_and_falling_under_gravity() {
    let steps = 5;
    for case in one_case_per_scene() {
        let name = case.scene.name;
        let mut shatter = ShatterWorld::new(&case);
        let mut rapier = RapierWorld::new(&case);
        for _ in 0..steps {
            shatter.step();
            rapier.step();
        }
        let (s, r) = (shatter.bodies(), rapier.bodies());
        assert!(all_finite(&s), "{name}: shatter");
        assert!(all_finite(&r), "{name}: rapier");
        // The top body of the axis-aligned pile and of the balls is in free fall (the turned boxes
        // start overlapping their neighbours, the pyramid's top box rests on the stack). Each
        // engine's fall is the exact 1/2 g t^2 plus what its time stepping adds: semi-implicit Euler
        // steps of h (shatter's steps, rapier's substeps) fall 1/2 g h t further, at most
        // 1/2 g dt t.
        if !matches!(name, "pile_1000" | "spheres_on_table_1000") {
            continue;
        }
        let top = (0..case.scene.bodies.len())
            .max_by(|&i, &j| {
                case.scene.bodies[i]
                    .position
                    .y
                    .total_cmp(&case.scene.bodies[j].position.y)
            })
            .expect("bodies");
        let start = case.scene.bodies[top].position.y;
        let t = steps as f64 * case.dt;
        let exact = 0.5 * 9.81 * t * t;
        let most = 0.5 * 9.81 * case.dt * t;
        for (engine, fall) in [
            ("shatter", start - s[top].position.y),
            ("rapier", start - r[top].position.y),
        ] {
            let excess = fall - exact;
            assert!(
                excess > -1e-6 && excess < most + 1e-6,
                "{name}: {engine} fell {fall} m, {exact} m"
            );
        }
    }
}

#[test]
fn peers_fastest_is_the_largest_speed_of_a_dynamic_body() {
    let body = |fixed: bool, velocity: DVec3| BodySample {
        fixed,
        position: DVec3::ZERO,
        orientation: DQuat::IDENTITY,
        linear_velocity: velocity,
        mass: 1.0,
        awake: true,
    };
    let bodies = [
        body(false, DVec3::new(3.0, -4.0, 0.0)),
        // A static body's velocity (whatever an engine reports for it) is not a body moving.
        body(true, DVec3::new(0.0, 0.0, 20.0)),
        body(false, DVec3::new(0.0, 1.0, 0.0)),
    ];
    assert_eq!(fastest(&bodies), 5.0);
    assert_eq!(fastest(&bodies[1..2]), 0.0);
}
