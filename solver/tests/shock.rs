//! The shock pass on a box resting on the ground at its four corners (one contact patch): after a
//! single ordinary sweep and with a single Gauss-Seidel iteration per group, the pass must land on
//! the solution of the contact LCP, which only its block solve (shock_block.rs) can do in one go.

mod common;

use common::{GRAVITY, bottom_corners, box_inertia, dynamic_body, kinetic_energy, vec3};
use glam::{DQuat, DVec3};
use proptest::prelude::*;
use shatter_solver::{
    ContactPatch, ContactPoint, NO_BODY, PatchPoint, PatchRows, Row, Softness, SolverBody, SolverSettings,
    push_contact_rows, push_patch_rows, solve,
};

const DT: f64 = 1.0 / 30.0;
const HALF: DVec3 = DVec3::new(0.5, 0.5, 0.5);
const MASS: f64 = 3.0;

/// One ordinary sweep, then the shock pass with one Gauss-Seidel iteration per group behind the
/// block.
fn shock_only() -> SolverSettings {
    SolverSettings {
        iterations: 1,
        shock_sweeps: 1,
        shock_iterations: 1,
        split_iterations: 0,
        ..SolverSettings::default()
    }
}

/// A unit box resting flat on the ground plane y = 0, moving with `linear` and `angular`, and its
/// contact patch's rows with friction `mu` (tangent `t1` along `direction` when given).
fn box_on_ground(
    linear: DVec3,
    angular: DVec3,
    mu: f64,
    direction: Option<DVec3>,
) -> (Vec<SolverBody>, Vec<Row>, PatchRows) {
    let bodies = vec![dynamic_body(
        MASS,
        box_inertia(MASS, HALF),
        DQuat::IDENTITY,
        linear,
        angular,
    )];
    let points: Vec<PatchPoint> = bottom_corners(HALF)
        .into_iter()
        .map(|corner| PatchPoint {
            arm_a: corner,
            arm_b: DVec3::new(corner.x, 0.0, corner.z),
            normal: DVec3::Y,
            depth: 0.0,
        })
        .collect();
    let patch = ContactPatch {
        a: 0,
        b: NO_BODY,
        points: &points,
        normal: DVec3::Y,
        friction: mu,
        softness: Softness::rigid(0.2),
        energy_clamp: true,
        friction_direction: direction,
    };
    let mut rows = Vec::new();
    let patch_rows = push_patch_rows(&mut rows, &bodies, &patch, DT).unwrap();
    (bodies, rows, patch_rows)
}

/// `J v` of a row of the box (body 0) against the ground.
fn row_velocity(body: &SolverBody, row: &Row) -> f64 {
    row.jacobian.linear_a.dot(body.linear_velocity) + row.jacobian.angular_a.dot(body.angular_velocity)
}

/// The first LCP condition of the patch that a solve left broken by more than `tolerance` (m/s):
/// normal impulses push, corners do not approach, a pushing corner does not separate, friction
/// within `mu` times the normal impulse (times the twist radius for the twist row) and a friction
/// row strictly inside its bound has no slip.
fn lcp_violation(body: &SolverBody, rows: &[Row], patch: &PatchRows, tolerance: f64) -> Option<String> {
    let normals = patch.normals as usize..rows.len();
    let total: f64 = rows[normals.clone()].iter().map(|r| r.lambda).sum();
    for (k, row) in rows[normals].iter().enumerate() {
        let (lambda, jv) = (row.lambda, row_velocity(body, row));
        if lambda < 0.0 {
            return Some(format!("corner {k} pulls: {lambda}"));
        }
        if jv < -tolerance {
            return Some(format!("corner {k} approaches at {jv} m/s"));
        }
        if lambda * jv > tolerance * MASS {
            return Some(format!("corner {k} pushes ({lambda}) while separating at {jv} m/s"));
        }
    }
    // A frictionless patch has no friction rows.
    let friction = patch.friction.map_or(patch.normals, |first| first) as usize;
    for (k, row) in rows[friction..patch.normals as usize].iter().enumerate() {
        // The twist row's coefficient is mu times the patch's twist radius.
        let limit = row.friction.unwrap().coefficient * total;
        let (lambda, jv) = (row.lambda, row_velocity(body, row));
        if lambda.abs() > limit * (1.0 + 1e-9) + 1e-12 {
            return Some(format!("friction row {k}: {lambda} past {limit}"));
        }
        if lambda.abs() < limit * (1.0 - 1e-6) && jv.abs() > tolerance {
            return Some(format!("sticking friction row {k} slips at {jv}"));
        }
        if jv * lambda > tolerance * MASS {
            return Some(format!("friction row {k} pushes along the slip: {jv}"));
        }
    }
    None
}

/// Panics with the broken condition, if any (see [`lcp_violation`]).
fn assert_solves_the_lcp(body: &SolverBody, rows: &[Row], patch: &PatchRows, tolerance: f64) {
    if let Some(violation) = lcp_violation(body, rows, patch, tolerance) {
        panic!("{violation}");
    }
}

/// A box landing flat at 2 m/s while sliding at `u` along x: the normal impulse stops the fall,
/// `m * 2` N s over the four corners, and friction takes `min(u, 2 mu)` off the slide (closed form),
/// with no spin.
#[test]
fn shock_block_lands_a_sliding_box_at_the_coulomb_speed() {
    for (u, mu) in [(0.5, 0.5), (3.0, 0.5), (1.0, 0.2), (0.1, 0.0)] {
        let (mut bodies, mut rows, patch) = box_on_ground(DVec3::new(u, -2.0, 0.0), DVec3::ZERO, mu, Some(DVec3::X));
        solve(&mut bodies, &mut rows, DT, &shock_only()).unwrap();
        let expected = (u - 2.0 * mu).max(0.0);
        let body = &bodies[0];
        assert!(
            (body.linear_velocity - DVec3::new(expected, 0.0, 0.0)).length() < 1e-6,
            "u {u} mu {mu}: {}",
            body.linear_velocity
        );
        assert!(
            body.angular_velocity.length() < 1e-6,
            "u {u} mu {mu}: spin {}",
            body.angular_velocity
        );
        let normal: f64 = rows[patch.normals as usize..].iter().map(|r| r.lambda).sum();
        assert!((normal - 2.0 * MASS).abs() < 1e-6 * MASS, "normal impulse {normal}");
        assert_solves_the_lcp(body, &rows, &patch, 1e-6);
    }
}

/// A box resting under gravity: the pass holds it still (to the regularization's 1e-8 of the
/// impulse change) and the corners carry its weight between them.
#[test]
fn shock_block_holds_a_resting_box_and_carries_its_weight() {
    let (mut bodies, mut rows, patch) = box_on_ground(GRAVITY * DT, DVec3::ZERO, 0.6, None);
    solve(&mut bodies, &mut rows, DT, &shock_only()).unwrap();
    assert!(
        bodies[0].linear_velocity.length() < 1e-8,
        "{}",
        bodies[0].linear_velocity
    );
    assert!(
        bodies[0].angular_velocity.length() < 1e-8,
        "{}",
        bodies[0].angular_velocity
    );
    let weight = MASS * 9.81 * DT;
    let carried: f64 = rows[patch.normals as usize..].iter().map(|r| r.lambda).sum();
    assert!(
        (carried - weight).abs() < 1e-6 * weight,
        "corners carry {carried} of {weight} N s"
    );
    assert_solves_the_lcp(&bodies[0], &rows, &patch, 1e-8);
}

/// Deterministic pseudo-random numbers in `[0, 1)` (a 64-bit linear congruential generator).
fn uniform(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// Over 1000 fixed random motions of the box (landing at 0.1 to 3 m/s, sliding and spinning at up
/// to 3 m/s and rad/s, mu 0 to 1.5), one shock pass with a single Gauss-Seidel iteration behind
/// the block solves the patch's LCP in at least 98 percent: the block settles nearly every group by
/// itself (measured: 995 of 1000). The others need more Gauss-Seidel (next test).
#[test]
fn shock_block_solves_nearly_every_patch_by_itself() {
    let mut state = 7;
    let cases = 1000;
    let mut solved = 0;
    for _ in 0..cases {
        let mut draw = |range: f64| (2.0 * uniform(&mut state) - 1.0) * range;
        let linear = DVec3::new(draw(3.0), draw(3.0), draw(3.0)) - DVec3::Y * (0.1 + 2.9 * (draw(1.0) * 0.5 + 0.5));
        let angular = DVec3::new(draw(3.0), draw(3.0), draw(3.0));
        let mu = 0.75 + draw(0.75);
        let (mut bodies, mut rows, patch) = box_on_ground(linear, angular, mu, None);
        solve(&mut bodies, &mut rows, DT, &shock_only()).unwrap();
        solved += usize::from(lcp_violation(&bodies[0], &rows, &patch, 1e-6).is_none());
    }
    println!("one pass solved {solved} of {cases} patches");
    assert!(solved * 100 >= cases * 98, "solved {solved} of {cases}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the box's motion, one shock pass (block, then Gauss-Seidel where the block gives
    /// up) solves the patch's LCP and never raises the kinetic energy: the block never accepts an
    /// impulse that breaks a condition.
    #[test]
    fn shock_block_solves_the_patch_and_never_adds_energy(
        linear in vec3(3.0), angular in vec3(3.0), mu in 0.0..1.5f64, down in 0.1..3.0f64,
    ) {
        let linear = linear - DVec3::Y * down;
        let (mut bodies, mut rows, patch) = box_on_ground(linear, angular, mu, None);
        let before = kinetic_energy(&bodies);
        let settings = SolverSettings { shock_iterations: 2000, tolerance: 1e-12, ..shock_only() };
        solve(&mut bodies, &mut rows, DT, &settings).unwrap();
        let after = kinetic_energy(&bodies);
        prop_assert!(after <= before * (1.0 + 1e-12), "kinetic energy {before} -> {after}");
        assert_solves_the_lcp(&bodies[0], &rows, &patch, 1e-6);
    }
}

/// The box of the two tests below: rising at 0.6 m/s while it turns onto one edge and slides at
/// 2.75 m/s, `mu` 1.44.
fn tipping_box() -> (Vec<SolverBody>, Vec<Row>, PatchRows) {
    let linear = DVec3::new(0.006545124848718454, 0.6997544275989197 - 0.1, 2.752285987892791);
    let angular = DVec3::new(-1.3393707538071966, 0.0, 0.0);
    box_on_ground(linear, angular, 1.4438613930303348, None)
}

/// A rare case a property-test seed found: a box rising at 0.6 m/s while turning onto one edge and
/// sliding at 2.75 m/s with `mu` 1.44. The block runs out of guesses (friction makes its pivoting
/// cycle), and plain Gauss-Seidel fell into a two-sweep cycle (the edge's corners pushing and
/// releasing in turn, the residual 0.1 m/s every sweep), leaving a corner pushing 0.030 N s while
/// separating at 7.6 mm/s; the group's Gauss-Seidel now under-relaxes once it stops converging.
#[test]
fn shock_block_alone_solves_a_box_tipping_onto_an_edge_with_high_friction() {
    let (mut bodies, mut rows, patch) = tipping_box();
    let settings = SolverSettings {
        shock_iterations: 2000,
        tolerance: 1e-12,
        ..shock_only()
    };
    solve(&mut bodies, &mut rows, DT, &settings).unwrap();
    assert_solves_the_lcp(&bodies[0], &rows, &patch, 1e-6);
}

/// The same contact with the default velocity sweeps before the shock pass is solved exactly.
#[test]
fn shock_block_after_the_default_sweeps_solves_a_box_tipping_onto_an_edge_with_high_friction() {
    let (mut bodies, mut rows, patch) = tipping_box();
    let before = kinetic_energy(&bodies);
    let settings = SolverSettings {
        iterations: SolverSettings::default().iterations,
        shock_iterations: 2000,
        tolerance: 1e-12,
        ..shock_only()
    };
    solve(&mut bodies, &mut rows, DT, &settings).unwrap();
    assert!(kinetic_energy(&bodies) <= before * (1.0 + 1e-12));
    assert_solves_the_lcp(&bodies[0], &rows, &patch, 1e-6);
}

/// A 0.5 kg ball wedged between two 10 kg boxes that slide towards each other at 0.5 m/s on the
/// ground, touching neither the ground nor anything above. The shock pass holds both boxes still
/// while it solves the ball, so the ball's two contacts ask for velocities it cannot have at once
/// (the boxes still close on it after the sweeps). Their least-squares compromise costs impulses
/// of the size of the momenta involved; the block's regularization alone (1e-8 of its diagonal)
/// once answered with opposing impulses of millions of N s on the ball, which a fracture model
/// reads as a crushing blow.
#[test]
fn shock_block_gives_a_pinched_body_impulses_of_the_momenta_involved() {
    let half = DVec3::splat(0.5);
    let (box_mass, ball_mass, radius, speed) = (10.0, 0.5, 0.1, 0.5);
    let moving_box = |velocity: f64| {
        dynamic_body(
            box_mass,
            box_inertia(box_mass, half),
            DQuat::IDENTITY,
            DVec3::new(velocity, 0.0, 0.0),
            DVec3::ZERO,
        )
    };
    let ball_inertia = DVec3::splat(0.4 * ball_mass * radius * radius);
    let ball = dynamic_body(ball_mass, ball_inertia, DQuat::IDENTITY, DVec3::ZERO, DVec3::ZERO);
    let mut bodies = vec![moving_box(speed), moving_box(-speed), ball];
    let mut rows = Vec::new();
    for body in [0, 1] {
        common::box_on_ground(&mut rows, &bodies, body, half, 0.0, 0.5, DT);
    }
    // The boxes' faces at x = -0.1 and 0.1 (centres at -0.6 and 0.6, half a metre up), the ball
    // between them at the origin of that height.
    for (other, side) in [(0u32, -1.0), (1, 1.0)] {
        let point = DVec3::new(side * radius, 0.5, 0.0);
        let box_centre = DVec3::new(side * 0.6, 0.5, 0.0);
        let contact = ContactPoint::new(
            2,
            other,
            point - DVec3::new(0.0, 0.5, 0.0),
            point - box_centre,
            DVec3::new(-side, 0.0, 0.0),
            0.0,
            0.5,
        );
        push_contact_rows(&mut rows, &bodies, &contact, DT).unwrap();
    }
    let before = kinetic_energy(&bodies);
    solve(&mut bodies, &mut rows, DT, &shock_only()).unwrap();
    let momenta = 2.0 * box_mass * speed;
    let largest = rows.iter().map(|row| row.lambda.abs()).fold(0.0, f64::max);
    assert!(
        largest <= 2.0 * momenta,
        "largest impulse {largest} N s against momenta of {momenta} N s"
    );
    assert!(kinetic_energy(&bodies) <= before * (1.0 + 1e-12));
}
