//! Joints: a pendulum's period and joint error, a hinge that only turns about its axis, a fixed
//! cantilever and the impulses that hold it, soft joints that sag by weight over stiffness,
//! breaking thresholds, and the consistency of every row's error with its Jacobian.

mod common;

use common::{GRAVITY, box_inertia, dynamic_body, vec3};
use glam::{DMat3, DQuat, DVec3};
use proptest::prelude::*;
use shatter_solver::{
    JointAnchor, JointPose, JointRows, JointSpec, NO_BODY, Row, Softness, SolverBody, SolverSettings, ball_joint_rows,
    fixed_joint_rows, group_impulse, hinge_joint_rows, row_group_broken, solve,
};

/// A one-body scene jointed to the world, stepped with symplectic Euler: `v += g h`, solve,
/// `x += v h`, `q = exp(w h) q`.
struct Scene {
    body: [SolverBody; 1],
    principal_inertia: DVec3,
    pose: JointPose,
    /// Joint frame on the body, in its body frame.
    frame: JointPose,
    /// Joint frame on the world.
    world_frame: JointPose,
    softness: Softness,
    gravity: DVec3,
    lambdas: Vec<f64>,
    rows: Vec<Row>,
}

type Builder = fn(&[SolverBody], &JointSpec, f64) -> Result<JointRows, shatter_solver::SolverError>;

impl Scene {
    fn new(mass: f64, principal_inertia: DVec3, pose: JointPose, frame: JointPose, world_frame: JointPose) -> Self {
        Self {
            body: [dynamic_body(
                mass,
                principal_inertia,
                pose.orientation,
                DVec3::ZERO,
                DVec3::ZERO,
            )],
            principal_inertia,
            pose,
            frame,
            world_frame,
            softness: Softness::rigid(0.2),
            gravity: GRAVITY,
            lambdas: Vec::new(),
            rows: Vec::new(),
        }
    }

    fn spec(&self) -> JointSpec {
        JointSpec {
            a: JointAnchor {
                body: 0,
                pose: self.pose,
                frame: self.frame,
            },
            b: JointAnchor {
                body: NO_BODY,
                pose: JointPose::IDENTITY,
                frame: self.world_frame,
            },
            softness: self.softness,
            angular_softness: self.softness,
            breaking_impulse: None,
        }
    }

    fn step(&mut self, build: Builder, dt: f64, iterations: usize) {
        let mass = 1.0 / self.body[0].inverse_mass;
        let velocity = self.body[0].linear_velocity + self.gravity * dt;
        let angular = self.body[0].angular_velocity;
        self.body[0] = dynamic_body(mass, self.principal_inertia, self.pose.orientation, velocity, angular);
        self.rows = build(&self.body, &self.spec(), dt).unwrap().rows.to_vec();
        for (row, lambda) in self.rows.iter_mut().zip(&self.lambdas) {
            row.warm = *lambda;
        }
        let settings = SolverSettings {
            iterations,
            tolerance: 1e-13,
            ..SolverSettings::default()
        };
        solve(&mut self.body, &mut self.rows, dt, &settings).unwrap();
        self.lambdas = self.rows.iter().map(|r| r.warm).collect();
        self.pose.position += self.body[0].linear_velocity * dt;
        self.pose.orientation =
            (DQuat::from_scaled_axis(self.body[0].angular_velocity * dt) * self.pose.orientation).normalize();
    }

    /// World distance between the two joint anchors, m.
    fn anchor_error(&self) -> f64 {
        (self.pose.position + self.pose.orientation * self.frame.position - self.world_frame.position).length()
    }
}

/// A ball-jointed pendulum (1 m, 5 cm sphere) released at 0.05 rad and stepped at 1 ms: the joint
/// error stays below 1 micrometre and the period matches 2 pi sqrt(L/g) within 1 percent, and the
/// physical-pendulum value with its finite-amplitude correction within 0.01 percent.
#[test]
fn joints_pendulum_period_and_joint_error() {
    let (length, theta, radius, mass, dt) = (1.0, 0.05f64, 0.05, 1.0, 1e-3);
    let inertia = 0.4 * mass * radius * radius;
    let start = DVec3::new(length * theta.sin(), -length * theta.cos(), 0.0);
    let mut scene = Scene::new(
        mass,
        DVec3::splat(inertia),
        JointPose::new(start, DQuat::IDENTITY),
        JointPose::new(-start, DQuat::IDENTITY),
        JointPose::IDENTITY,
    );
    let mut crossings = Vec::new();
    let mut worst_error: f64 = 0.0;
    for n in 0..7000 {
        let before = scene.pose.position.x;
        scene.step(ball_joint_rows, dt, 20);
        let after = scene.pose.position.x;
        worst_error = worst_error.max(scene.anchor_error());
        if before > 0.0 && after <= 0.0 {
            crossings.push((n as f64 + before / (before - after)) * dt);
        }
    }
    assert!(worst_error < 1e-6, "joint error {worst_error} m");
    assert!(crossings.len() >= 3, "{crossings:?}");
    let period = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    let g = -GRAVITY.y;
    let simple = 2.0 * std::f64::consts::PI * (length / g).sqrt();
    let physical = 2.0
        * std::f64::consts::PI
        * ((inertia + mass * length * length) / (mass * g * length)).sqrt()
        * (1.0 + theta * theta / 16.0);
    assert!(
        (period / simple - 1.0).abs() < 0.01,
        "period {period} s vs 2 pi sqrt(L/g) = {simple} s"
    );
    assert!(
        (period / physical - 1.0).abs() < 1e-4,
        "period {period} s vs physical {physical} s"
    );
}

/// One solve of a hinge at the centre of mass of a tumbling body with a rotated anisotropic inertia:
/// the point rows stop the centre, and the angular velocity becomes the M-orthogonal projection onto
/// the hinge axis, `w' = w - I^-1 P (P^T I^-1 P)^-1 P^T w` with `P` the two perpendicular axes.
#[test]
fn joints_hinge_removes_all_but_axial_rotation() {
    let axis = DVec3::new(0.3, 0.5, 0.8).normalize();
    let orientation = DQuat::from_axis_angle(DVec3::new(1.0, -1.0, 0.5).normalize(), 0.8);
    let hinge_frame = DQuat::from_rotation_arc(DVec3::X, axis);
    let mut scene = Scene::new(
        2.0,
        DVec3::new(0.3, 0.5, 0.6),
        JointPose::new(DVec3::new(0.0, 1.0, 0.0), orientation),
        JointPose::new(DVec3::ZERO, orientation.inverse() * hinge_frame),
        JointPose::new(DVec3::new(0.0, 1.0, 0.0), hinge_frame),
    );
    scene.gravity = DVec3::ZERO;
    let w = DVec3::new(1.0, 2.0, 3.0);
    scene.body[0].angular_velocity = w;
    scene.body[0].linear_velocity = DVec3::new(0.5, -0.2, 0.1);
    scene.step(hinge_joint_rows, 0.01, 200);
    let (p, q) = shatter_solver::tangent_basis(axis);
    let inverse = scene.body[0].inverse_inertia;
    let gram = [
        [p.dot(inverse * p), p.dot(inverse * q)],
        [q.dot(inverse * p), q.dot(inverse * q)],
    ];
    let det = gram[0][0] * gram[1][1] - gram[0][1] * gram[1][0];
    let rhs = [p.dot(w), q.dot(w)];
    let mu = [
        (gram[1][1] * rhs[0] - gram[0][1] * rhs[1]) / det,
        (gram[0][0] * rhs[1] - gram[1][0] * rhs[0]) / det,
    ];
    let expected = w - inverse * (p * mu[0] + q * mu[1]);
    let got = scene.body[0].angular_velocity;
    assert!((got - expected).length() <= 1e-9, "w = {got}, expected {expected}");
    assert!(got.cross(axis).length() <= 1e-9);
    assert!(scene.body[0].linear_velocity.length() <= 1e-9);
}

/// A door (1 m x 2 m x 5 cm, 10 kg) hinged at its edge about Y and set spinning at 2 rad/s: over
/// two seconds at 120 Hz it turns about the hinge axis only, keeps its speed, and its hinge holds to
/// the Baumgarte steady state: each step `x += v h` moves the centre off its circle by
/// `(w h)^2 r / 2`, of which ERP is removed per step, so the error settles below `(w h)^2 r / (2 ERP)`.
#[test]
fn joints_hinge_door_swings_about_axis_only() {
    let half = DVec3::new(0.5, 1.0, 0.025);
    let mut scene = Scene::new(
        10.0,
        box_inertia(10.0, half),
        JointPose::new(DVec3::new(0.5, 0.0, 0.0), DQuat::IDENTITY),
        JointPose::new(DVec3::new(-0.5, 0.0, 0.0), DQuat::from_rotation_arc(DVec3::X, DVec3::Y)),
        JointPose::new(DVec3::ZERO, DQuat::from_rotation_arc(DVec3::X, DVec3::Y)),
    );
    scene.gravity = DVec3::ZERO;
    scene.body[0].angular_velocity = DVec3::new(0.0, 2.0, 0.0);
    scene.body[0].linear_velocity = DVec3::new(0.0, 2.0, 0.0).cross(DVec3::new(0.5, 0.0, 0.0));
    let (dt, omega, radius) = (1.0 / 120.0, 2.0, 0.5);
    let bound = (omega * dt) * (omega * dt) * radius / (2.0 * 0.2);
    for _ in 0..240 {
        scene.step(hinge_joint_rows, dt, 30);
        let w = scene.body[0].angular_velocity;
        assert!(w.cross(DVec3::Y).length() <= 1e-9, "w = {w}");
        // The velocity projection can only dissipate: no gain, and under 0.5 percent lost.
        assert!(w.y <= 2.0 + 1e-12 && w.y >= 1.99, "w = {w}");
        assert!(
            scene.anchor_error() <= bound,
            "anchor error {} above {bound}",
            scene.anchor_error()
        );
        let door_axis = scene.pose.orientation * DVec3::Y;
        assert!(door_axis.cross(DVec3::Y).length() <= 1e-9);
    }
    // It turned through 4 rad about the hinge.
    let (axis, angle) = scene.pose.orientation.to_axis_angle();
    assert!((axis.dot(DVec3::Y).abs() - 1.0).abs() < 1e-9);
    assert!(
        (angle - 4.0).abs() < 1e-2 || (angle - (2.0 * std::f64::consts::PI - 4.0)).abs() < 1e-2,
        "{angle}"
    );
}

/// A 1 m, 2 kg beam welded to the world at one end under gravity for two seconds: it stays put
/// (tip drop and rotation below 1e-6), and the joint's impulses are exactly what statics demands,
/// the weight `m g h` up and the moment `m g (L/2) h` about z.
#[test]
fn joints_fixed_cantilever_holds() {
    let (mass, dt) = (2.0, 1.0 / 60.0);
    let half = DVec3::new(0.5, 0.05, 0.05);
    let mut scene = Scene::new(
        mass,
        box_inertia(mass, half),
        JointPose::new(DVec3::new(0.5, 0.0, 0.0), DQuat::IDENTITY),
        JointPose::new(DVec3::new(-0.5, 0.0, 0.0), DQuat::IDENTITY),
        JointPose::IDENTITY,
    );
    for _ in 0..120 {
        scene.step(fixed_joint_rows, dt, 50);
        let tip = scene.pose.position + scene.pose.orientation * DVec3::new(0.5, 0.0, 0.0);
        assert!((tip - DVec3::X).length() <= 1e-6, "tip at {tip}");
        assert!(scene.pose.orientation.angle_between(DQuat::IDENTITY) <= 1e-6);
    }
    let impulse = group_impulse(&scene.rows);
    let weight = mass * -GRAVITY.y * dt;
    assert!(
        (impulse.linear - DVec3::new(0.0, weight, 0.0)).length() <= 1e-9 * weight,
        "{impulse:?}"
    );
    assert!(
        (impulse.angular - DVec3::new(0.0, 0.0, 0.5 * weight)).length() <= 1e-9 * weight,
        "{impulse:?}"
    );
}

/// A mass hung from a soft ball joint at its centre settles at `m g / k` below the anchor (the CFM
/// acts as the spring the softness encodes), the stored energy of the loaded row is `1/2 k x^2`, and
/// the breaking threshold separates loads just above and below the weight impulse.
#[test]
fn joints_soft_ball_joint_sags_by_weight_over_stiffness() {
    let (mass, stiffness, dt) = (3.0, 3000.0, 1.0 / 120.0);
    let mut scene = Scene::new(
        mass,
        DVec3::splat(0.1),
        JointPose::IDENTITY,
        JointPose::IDENTITY,
        JointPose::IDENTITY,
    );
    scene.softness = Softness::SpringDamper {
        stiffness,
        damping: 2.0 * (stiffness * mass).sqrt(),
    };
    for _ in 0..600 {
        scene.step(ball_joint_rows, dt, 10);
    }
    let g = -GRAVITY.y;
    let sag = -scene.pose.position.y;
    assert!(
        (sag - mass * g / stiffness).abs() <= 1e-9,
        "sag {sag} m vs m g / k = {}",
        mass * g / stiffness
    );
    let energy = scene.rows[1].stored_energy(dt);
    let spring = 0.5 * stiffness * sag * sag;
    assert!(
        (energy - spring).abs() <= 1e-6 * spring,
        "stored {energy} J vs 1/2 k x^2 = {spring} J"
    );

    let weight = mass * g * dt;
    assert!(row_group_broken(&scene.rows, 0.99 * weight));
    assert!(!row_group_broken(&scene.rows, 1.01 * weight));
    let mut spec = scene.spec();
    spec.breaking_impulse = Some(0.99 * weight);
    let joint = ball_joint_rows(&scene.body, &spec, dt).unwrap();
    assert!(joint.is_broken(&scene.rows));
    spec.breaking_impulse = None;
    assert!(!ball_joint_rows(&scene.body, &spec, dt).unwrap().is_broken(&scene.rows));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// For every row of every joint kind, the rate of change of its position error when both bodies
    /// move with random velocities is `J v` (finite differences, near-aligned joint frames).
    #[test]
    fn joints_position_error_rate_matches_jacobian(
        kind in 0..3usize,
        x_a in vec3(1.0), x_b in vec3(1.0), r_a in vec3(0.5), rotation_a in vec3(3.0), rotation_b in vec3(3.0),
        frame_a in vec3(3.0), offset in vec3(1e-4), twist in vec3(1e-4),
        v_a in vec3(1.0), w_a in vec3(1.0), v_b in vec3(1.0), w_b in vec3(1.0),
    ) {
        // Body B's frame is placed to nearly coincide with A's: errors of 1e-4 m and 1e-4 rad.
        let q_a = DQuat::from_scaled_axis(rotation_a);
        let q_b = DQuat::from_scaled_axis(rotation_b);
        let frame_world = q_a * DQuat::from_scaled_axis(frame_a);
        let anchor_world = x_a + q_a * r_a + offset;
        let frame_b = JointPose::new(
            q_b.inverse() * (anchor_world - x_b),
            q_b.inverse() * DQuat::from_scaled_axis(twist) * frame_world,
        );
        let frame_a = JointPose::new(r_a, DQuat::from_scaled_axis(frame_a));
        let bodies = [SolverBody { inverse_mass: 1.0, inverse_inertia: DMat3::IDENTITY, ..SolverBody::STATIC }; 2];
        let build = |eps: f64| {
            let pose = |x: DVec3, q: DQuat, v: DVec3, w: DVec3| {
                JointPose::new(x + v * eps, DQuat::from_scaled_axis(w * eps) * q)
            };
            let spec = JointSpec {
                a: JointAnchor { body: 0, pose: pose(x_a, q_a, v_a, w_a), frame: frame_a },
                b: JointAnchor { body: 1, pose: pose(x_b, q_b, v_b, w_b), frame: frame_b },
                softness: Softness::rigid(0.2),
                angular_softness: Softness::rigid(0.2),
                breaking_impulse: None,
            };
            [ball_joint_rows, hinge_joint_rows, fixed_joint_rows][kind](&bodies, &spec, 0.01).unwrap().rows
        };
        let eps = 1e-6;
        let (now, later) = (build(0.0), build(eps));
        prop_assert_eq!(now.len(), [3, 5, 6][kind]);
        for (row, next) in now.iter().zip(&later) {
            let j = &row.jacobian;
            let jv = j.linear_a.dot(v_a) + j.angular_a.dot(w_a) + j.linear_b.dot(v_b) + j.angular_b.dot(w_b);
            let rate = (next.position_error - row.position_error) / eps;
            prop_assert!((rate - jv).abs() <= 2e-3, "d phi/dt = {rate}, J v = {jv}");
        }
    }
}

/// Builders refuse bad specs by name.
#[test]
fn joints_builders_reject_bad_input() {
    let bodies = [
        dynamic_body(1.0, DVec3::ONE, DQuat::IDENTITY, DVec3::ZERO, DVec3::ZERO),
        SolverBody::STATIC,
    ];
    let anchor = |body| JointAnchor {
        body,
        pose: JointPose::IDENTITY,
        frame: JointPose::IDENTITY,
    };
    let good = JointSpec {
        a: anchor(0),
        b: anchor(NO_BODY),
        softness: Softness::rigid(0.2),
        angular_softness: Softness::rigid(0.2),
        breaking_impulse: Some(1.0),
    };
    assert!(fixed_joint_rows(&bodies, &good, 0.01).is_ok());
    let mut cases: Vec<(JointSpec, f64, &str)> = Vec::new();
    let mut spec = good;
    spec.a.body = 5;
    cases.push((spec, 0.01, "joint body a"));
    let mut spec = good;
    spec.b.body = 0;
    cases.push((spec, 0.01, "joint bodies"));
    let mut spec = good;
    spec.a.pose.position.x = f64::NAN;
    cases.push((spec, 0.01, "joint body pose"));
    let mut spec = good;
    spec.b.frame.orientation = DQuat::from_xyzw(0.0, 0.0, 0.0, 2.0);
    cases.push((spec, 0.01, "joint frame"));
    let mut spec = good;
    spec.breaking_impulse = Some(-1.0);
    cases.push((spec, 0.01, "breaking impulse"));
    let mut spec = good;
    spec.angular_softness = Softness::ErpCfm { erp: 2.0, cfm: 0.0 };
    cases.push((spec, 0.01, "erp"));
    let mut spec = good;
    spec.a.body = 1; // static: no effective mass for a frequency
    spec.softness = Softness::Frequency {
        hertz: 5.0,
        damping_ratio: 1.0,
    };
    cases.push((spec, 0.01, "effective mass"));
    cases.push((good, 0.0, "time step"));
    for (spec, dt, word) in cases {
        // A ball joint has no angular rows, so it never reads the angular softness.
        let builders: &[Builder] = if word == "erp" {
            &[hinge_joint_rows, fixed_joint_rows]
        } else {
            &[ball_joint_rows, hinge_joint_rows, fixed_joint_rows]
        };
        for build in builders {
            let message = build(&bodies, &spec, dt).map(|_| ()).unwrap_err().to_string();
            assert!(message.contains(word), "{message:?} lacks {word:?}");
        }
    }
}

/// A chain of `links` bodies with random masses, inertias, orientations and velocities, each
/// joined to the next (and the first to the world) by a joint built by `build` at a random anchor.
fn random_chain(seed: u64, links: usize, build: Builder, dt: f64) -> (Vec<SolverBody>, Vec<Row>) {
    let mut rng = shatter_integrators::SplitMix64::new(seed);
    let bodies: Vec<SolverBody> = (0..links)
        .map(|_| {
            let mass = rng.range(0.5, 20.0);
            let inertia = DVec3::new(rng.range(0.01, 2.0), rng.range(0.01, 2.0), rng.range(0.01, 2.0));
            dynamic_body(
                mass,
                inertia,
                rng.rotation(),
                rng.unit_vector() * rng.range(0.0, 3.0),
                rng.unit_vector() * rng.range(0.0, 3.0),
            )
        })
        .collect();
    let poses: Vec<JointPose> = (0..links)
        .map(|i| JointPose::new(DVec3::new(0.0, -(i as f64), 0.0), rng.rotation()))
        .collect();
    let mut rows = Vec::new();
    for i in 0..links {
        let anchor = DVec3::new(rng.range(-0.2, 0.2), 0.5 - i as f64, rng.range(-0.2, 0.2));
        let frame =
            |pose: &JointPose| JointPose::new(pose.orientation.inverse() * (anchor - pose.position), DQuat::IDENTITY);
        let a = JointAnchor {
            body: i as u32,
            pose: poses[i],
            frame: frame(&poses[i]),
        };
        let b = if i == 0 {
            JointAnchor {
                body: NO_BODY,
                pose: JointPose::IDENTITY,
                frame: JointPose::new(anchor + DVec3::X * 0.01, DQuat::IDENTITY),
            }
        } else {
            JointAnchor {
                body: i as u32 - 1,
                pose: poses[i - 1],
                frame: frame(&poses[i - 1]),
            }
        };
        let spec = JointSpec {
            a,
            b,
            softness: Softness::rigid(0.2),
            angular_softness: Softness::rigid(0.2),
            breaking_impulse: None,
        };
        rows.extend(build(&bodies, &spec, dt).unwrap().rows);
    }
    (bodies, rows)
}

/// One sweep meets every joint row of a chain exactly: the joint rows are solved together by a
/// direct factorization, so each row ends with `J v + (CFM / h) lambda` equal to its target
/// `-ERP phi / h` to round-off, whatever the chain's masses, lever arms and velocities (Gauss-Seidel
/// alone leaves errors of order one after one sweep on such chains).
#[test]
fn joints_chain_rows_are_met_exactly_in_one_sweep() {
    let dt = 1.0 / 30.0;
    let settings = SolverSettings {
        iterations: 1,
        shock_sweeps: 0,
        split_iterations: 0,
        warm_start: false,
        ..SolverSettings::default()
    };
    for (seed, build) in [
        (1, ball_joint_rows as Builder),
        (2, hinge_joint_rows),
        (3, fixed_joint_rows),
    ] {
        let (mut bodies, mut rows) = random_chain(seed, 12, build, dt);
        solve(&mut bodies, &mut rows, dt, &settings).unwrap();
        let velocity = |index: u32| {
            bodies
                .get(index as usize)
                .map_or((DVec3::ZERO, DVec3::ZERO), |b| (b.linear_velocity, b.angular_velocity))
        };
        for (index, row) in rows.iter().enumerate() {
            let (va, wa) = velocity(row.a);
            let (vb, wb) = velocity(row.b);
            let j = &row.jacobian;
            let jv = j.linear_a.dot(va) + j.angular_a.dot(wa) + j.linear_b.dot(vb) + j.angular_b.dot(wb);
            let target = row.target_velocity - row.erp * row.position_error / dt;
            let error = jv + row.cfm / dt * row.lambda - target;
            assert!(
                error.abs() < 1e-8,
                "seed {seed}: row {index} misses its target by {error} m/s"
            );
        }
    }
}
