//! Impulse clamping (Su 2009 section 3.2, module `impulse`): collisions and contacts never add
//! kinetic energy, conserve momentum between dynamic bodies, and still let an elevator lift a box.

mod common;

use common::free_body;
use glam::DVec3;
use proptest::prelude::*;
use shatter_integrators::{
    BodyKind, ClampBody, ClampVerdict, IntegrationSettings, IntegratorError, MassProperties, PairImpulse, RigidState,
    apply_impulse, clamp_pair_impulse, integrate,
};

fn body<'a>(kind: BodyKind, state: &'a RigidState, mass: &'a MassProperties) -> ClampBody<'a> {
    ClampBody { kind, state, mass }
}

/// Applies `impulse` scaled by `scale` to the pair.
fn apply_pair(
    (a, mass_a, kind_a): (&mut RigidState, &MassProperties, BodyKind),
    (b, mass_b, kind_b): (&mut RigidState, &MassProperties, BodyKind),
    impulse: &PairImpulse,
    scale: f64,
) {
    let (j, tau) = (impulse.linear * scale, impulse.angular * scale);
    apply_impulse(a, mass_a, kind_a, j, impulse.arm_a, tau).unwrap();
    apply_impulse(b, mass_b, kind_b, -j, impulse.arm_b, -tau).unwrap();
}

fn kinetic(state: &RigidState, mass: &MassProperties, kind: BodyKind) -> f64 {
    if kind == BodyKind::Dynamic {
        state.kinetic_energy(mass)
    } else {
        0.0
    }
}

fn vector(range: f64) -> impl Strategy<Value = DVec3> {
    prop::array::uniform3(-range..range).prop_map(DVec3::from)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Clamped impulses never raise the kinetic energy, and between two
    /// dynamic bodies conserve linear and angular momentum to round-off.
    #[test]
    fn impulse_clamp_never_raises_energy_and_conserves_momentum(
        (mass_a, mut a) in free_body(20.0),
        (mass_b, mut b) in free_body(20.0),
        offset_a in vector(3.0),
        offset_b in vector(3.0),
        contact in vector(3.0),
        linear in vector(200.0),
        angular in vector(50.0),
        pair in 0usize..3,
    ) {
        a.position = offset_a;
        b.position = offset_b;
        let (kind_a, kind_b) = [(BodyKind::Dynamic, BodyKind::Dynamic), (BodyKind::Dynamic, BodyKind::Static), (BodyKind::Static, BodyKind::Dynamic)][pair];
        let impulse = PairImpulse { linear, arm_a: contact - a.position, arm_b: contact - b.position, angular };
        let clamp = clamp_pair_impulse(body(kind_a, &a, &mass_a), body(kind_b, &b, &mass_b), &impulse).unwrap();
        prop_assert!((0.0..=1.0).contains(&clamp.scale));
        let before = kinetic(&a, &mass_a, kind_a) + kinetic(&b, &mass_b, kind_b);
        let momentum = a.linear_momentum(&mass_a) + b.linear_momentum(&mass_b);
        let spin = a.angular_momentum_about(&mass_a, DVec3::ZERO) + b.angular_momentum_about(&mass_b, DVec3::ZERO);
        let (mut a2, mut b2) = (a, b);
        apply_pair((&mut a2, &mass_a, kind_a), (&mut b2, &mass_b, kind_b), &impulse, clamp.scale);
        let after = kinetic(&a2, &mass_a, kind_a) + kinetic(&b2, &mass_b, kind_b);
        prop_assert!(after <= before * (1.0 + 1e-12), "{:?}: kinetic energy {before} -> {after}", clamp.verdict);
        if clamp.verdict == ClampVerdict::Scaled {
            // Scaled exactly to the energy-conserving root.
            prop_assert!((after - before).abs() <= 1e-11 * before.max(1e-300));
        }
        if kind_a == BodyKind::Dynamic && kind_b == BodyKind::Dynamic {
            let scale = momentum.length() + linear.length() + 1.0;
            prop_assert!((a2.linear_momentum(&mass_a) + b2.linear_momentum(&mass_b) - momentum).length() <= 1e-12 * scale);
            let spin_after = a2.angular_momentum_about(&mass_a, DVec3::ZERO) + b2.angular_momentum_about(&mass_b, DVec3::ZERO);
            let spin_scale = spin.length() + 10.0 * linear.length() + angular.length() + 1.0;
            prop_assert!((spin_after - spin).length() <= 1e-12 * spin_scale, "{spin} -> {spin_after}");
        }
    }

    /// Against a moving kinematic body the energy of the dynamic body never grows in the frame of
    /// the kinematic body's point velocity.
    #[test]
    fn impulse_clamp_kinematic_partner_measures_in_its_frame(
        (mass_a, a) in free_body(20.0),
        platform_velocity in vector(5.0),
        platform_spin in vector(2.0),
        contact in vector(2.0),
        linear in vector(200.0),
    ) {
        let platform_mass = MassProperties::infinite();
        let platform = RigidState::moving(DVec3::new(0.0, -2.0, 0.0), glam::DQuat::IDENTITY, platform_velocity, platform_spin);
        let impulse = PairImpulse { linear, arm_a: contact - a.position, arm_b: contact - platform.position, angular: DVec3::ZERO };
        let clamp = clamp_pair_impulse(body(BodyKind::Dynamic, &a, &mass_a), body(BodyKind::Kinematic, &platform, &platform_mass), &impulse).unwrap();
        let frame = platform.point_velocity(impulse.arm_b);
        let relative = |s: &RigidState| {
            let mut moved = *s;
            moved.linear_velocity -= frame;
            moved.kinetic_energy(&mass_a)
        };
        let mut a2 = a;
        apply_impulse(&mut a2, &mass_a, BodyKind::Dynamic, linear * clamp.scale, impulse.arm_a, DVec3::ZERO).unwrap();
        prop_assert!(relative(&a2) <= relative(&a) * (1.0 + 1e-12));
    }
}

#[test]
fn impulse_clamp_verdicts_match_the_physics() {
    let mass = MassProperties::solid_sphere(2.0, 0.5).unwrap();
    let wall_mass = MassProperties::infinite();
    let wall = RigidState::default();
    let ball = RigidState {
        linear_velocity: DVec3::new(-1.0, 0.0, 0.0),
        ..RigidState::default()
    };
    let clamp_for = |j: f64, ball: &RigidState| {
        let impulse = PairImpulse {
            linear: DVec3::new(j, 0.0, 0.0),
            ..PairImpulse::default()
        };
        clamp_pair_impulse(
            body(BodyKind::Dynamic, ball, &mass),
            body(BodyKind::Static, &wall, &wall_mass),
            &impulse,
        )
        .unwrap()
    };
    // Inelastic (stops the ball) and elastic (reverses it) collisions remove no more than they may.
    assert_eq!(clamp_for(2.0, &ball).verdict, ClampVerdict::Kept);
    assert_eq!(clamp_for(4.0, &ball).verdict, ClampVerdict::Kept);
    // Restitution 2 would double the speed: scaled to restitution 1, exactly.
    let clamp = clamp_for(6.0, &ball);
    assert_eq!(clamp.verdict, ClampVerdict::Scaled);
    assert!((clamp.scale - 2.0 / 3.0).abs() < 1e-15, "{}", clamp.scale);
    // Pushing the ball along its own motion only adds energy.
    assert_eq!(
        clamp_for(-1.0, &ball),
        shatter_integrators::ImpulseClamp {
            scale: 0.0,
            verdict: ClampVerdict::Dropped
        }
    );
    // Nothing dynamic, nothing to clamp.
    let impulse = PairImpulse {
        linear: DVec3::X,
        ..PairImpulse::default()
    };
    let clamp = clamp_pair_impulse(
        body(BodyKind::Static, &wall, &wall_mass),
        body(BodyKind::Kinematic, &wall, &wall_mass),
        &impulse,
    )
    .unwrap();
    assert_eq!(clamp.verdict, ClampVerdict::NoEffect);
    assert_eq!(clamp.scale, 1.0);
}

/// A box resting on a kinematic platform that rises at 1 m/s must be lifted.
/// Treating the platform as a static wall in the clamp (the naive reading) leaves the box behind.
#[test]
fn impulse_clamp_elevator_lifts_the_box() {
    let ride = |platform_kind_in_clamp: BodyKind| {
        let half = 0.5;
        let box_mass = MassProperties::solid_cuboid(10.0, DVec3::splat(half)).unwrap();
        let platform_mass = MassProperties::infinite();
        let mut platform = RigidState {
            linear_velocity: DVec3::new(0.0, 1.0, 0.0),
            ..RigidState::default()
        };
        let mut cargo = RigidState::at_rest(DVec3::new(0.0, half, 0.0), glam::DQuat::IDENTITY);
        let dt = 1.0 / 30.0;
        let settings = IntegrationSettings::default();
        for _ in 0..60 {
            cargo.linear_velocity.y -= 9.81 * dt;
            let touching = cargo.position.y - half <= platform.position.y + 1e-9;
            let closing = cargo.linear_velocity.y - platform.linear_velocity.y;
            if touching && closing < 0.0 {
                let impulse = PairImpulse {
                    linear: DVec3::new(0.0, -closing * box_mass.mass(), 0.0),
                    arm_a: DVec3::new(0.0, -half, 0.0),
                    arm_b: DVec3::ZERO,
                    angular: DVec3::ZERO,
                };
                let clamp = clamp_pair_impulse(
                    body(BodyKind::Dynamic, &cargo, &box_mass),
                    body(platform_kind_in_clamp, &platform, &platform_mass),
                    &impulse,
                )
                .unwrap();
                apply_impulse(
                    &mut cargo,
                    &box_mass,
                    BodyKind::Dynamic,
                    impulse.linear * clamp.scale,
                    impulse.arm_a,
                    DVec3::ZERO,
                )
                .unwrap();
            }
            integrate(&mut cargo, &box_mass, BodyKind::Dynamic, dt, &settings).unwrap();
            integrate(&mut platform, &platform_mass, BodyKind::Kinematic, dt, &settings).unwrap();
        }
        (cargo.position.y - half) - platform.position.y
    };
    let lifted = ride(BodyKind::Kinematic);
    let left_behind = ride(BodyKind::Static);
    println!(
        "box bottom minus platform top after 2 s: {lifted:+.4} m (kinematic frame), {left_behind:+.4} m (as if static)"
    );
    assert!(lifted.abs() < 1e-9, "the box should ride the platform: gap {lifted} m");
    assert!(
        left_behind < -1.0,
        "a clamp blind to the platform's motion should drop the box: gap {left_behind} m"
    );
}

#[test]
fn impulse_clamp_rejects_non_finite_input_by_name() {
    let mass = MassProperties::solid_sphere(1.0, 1.0).unwrap();
    let state = RigidState::default();
    let good = PairImpulse::default();
    let a = body(BodyKind::Dynamic, &state, &mass);
    for (field, bad) in [
        (
            "linear impulse",
            PairImpulse {
                linear: DVec3::new(f64::NAN, 0.0, 0.0),
                ..good
            },
        ),
        (
            "angular impulse",
            PairImpulse {
                angular: DVec3::splat(f64::INFINITY),
                ..good
            },
        ),
        (
            "arm on body A",
            PairImpulse {
                arm_a: DVec3::new(0.0, f64::NAN, 0.0),
                ..good
            },
        ),
        (
            "arm on body B",
            PairImpulse {
                arm_b: DVec3::new(0.0, 0.0, f64::NEG_INFINITY),
                ..good
            },
        ),
    ] {
        let err = clamp_pair_impulse(a, a, &bad).unwrap_err();
        assert!(
            matches!(err, IntegratorError::NotFinite { .. }) && err.to_string().contains(field),
            "{err}"
        );
    }
    let mut moved = state;
    let err = apply_impulse(
        &mut moved,
        &mass,
        BodyKind::Dynamic,
        DVec3::X,
        DVec3::new(f64::NAN, 0.0, 0.0),
        DVec3::ZERO,
    )
    .unwrap_err();
    assert!(err.to_string().contains("impulse arm"), "{err}");
    assert_eq!(moved, state);
    let mut broken = state;
    broken.linear_velocity.x = f64::NAN;
    let err = clamp_pair_impulse(a, body(BodyKind::Dynamic, &broken, &mass), &good).unwrap_err();
    assert!(err.to_string().contains("linear velocity"), "{err}");
}
