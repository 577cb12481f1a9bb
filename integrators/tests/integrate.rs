//! The pose update of one step (module `integrate`): batch and single updates agree bit for bit,
//! results do not depend on the thread count, and bad input is refused by name with nothing moved.

mod common;

use common::{FRAME, free_body, sample};
use glam::{DQuat, DVec3};
use shatter_integrators::{
    BodyKind, EnergyFixOutcome, IntegrationSettings, IntegratorError, Kernel, MassProperties, RigidState, integrate,
    integrate_batch, integrate_batch_with,
};

fn bodies(count: usize) -> (Vec<RigidState>, Vec<MassProperties>, Vec<BodyKind>) {
    let drawn = sample(free_body(50.0), count);
    let kinds = (0..count)
        .map(|i| match i % 11 {
            3 => BodyKind::Static,
            7 => BodyKind::Kinematic,
            _ => BodyKind::Dynamic,
        })
        .collect();
    let masses = drawn
        .iter()
        .enumerate()
        .map(|(i, (m, _))| {
            if i % 11 == 3 || i % 11 == 7 {
                MassProperties::infinite()
            } else {
                *m
            }
        })
        .collect();
    (drawn.into_iter().map(|(_, s)| s).collect(), masses, kinds)
}

fn bits(states: &[RigidState]) -> Vec<u8> {
    bytemuck::cast_slice(states).to_vec()
}

#[test]
fn integrate_batch_matches_single_body_updates_bit_for_bit() {
    let (mut batch, masses, kinds) = bodies(1001);
    let mut single = batch.clone();
    let settings = IntegrationSettings::default();
    for _ in 0..50 {
        let tally = integrate_batch(&mut batch, &masses, &kinds, FRAME, &settings).unwrap();
        assert_eq!(
            tally.primary + tally.fallback + tally.skipped + tally.unreachable,
            kinds.iter().filter(|k| **k == BodyKind::Dynamic).count()
        );
        for ((state, mass), kind) in single.iter_mut().zip(&masses).zip(&kinds) {
            integrate(state, mass, *kind, FRAME, &settings).unwrap();
        }
    }
    assert_eq!(bits(&batch), bits(&single));
}

#[test]
fn integrate_batch_is_independent_of_thread_count() {
    let (start, masses, kinds) = bodies(20_000);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut states = start.clone();
        pool.install(|| {
            for _ in 0..20 {
                integrate_batch(&mut states, &masses, &kinds, FRAME, &IntegrationSettings::default()).unwrap();
            }
        });
        bits(&states)
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(4));
}

#[test]
fn integrate_moves_static_and_kinematic_bodies_as_prescribed() {
    let spin = DVec3::new(0.0, 2.0, 0.0);
    let mut kinematic = RigidState::moving(DVec3::ZERO, DQuat::IDENTITY, DVec3::new(1.0, 0.0, 0.0), spin);
    let mut fixed = kinematic;
    let infinite = MassProperties::infinite();
    let settings = IntegrationSettings::default();
    for _ in 0..30 {
        assert_eq!(
            integrate(&mut kinematic, &infinite, BodyKind::Kinematic, FRAME, &settings).unwrap(),
            None
        );
        assert_eq!(
            integrate(&mut fixed, &infinite, BodyKind::Static, FRAME, &settings).unwrap(),
            None
        );
    }
    assert!((kinematic.position - DVec3::new(1.0, 0.0, 0.0)).length() < 1e-14);
    let expected = DQuat::from_rotation_y(2.0);
    assert!(common::rotation_angle(kinematic.orientation, expected) < 1e-13);
    assert!((kinematic.angular_velocity() - spin).length() < 1e-14);
    assert_eq!(fixed.position, DVec3::ZERO);
    assert_eq!(fixed.orientation, DQuat::IDENTITY);
}

#[test]
fn integrate_reports_the_fix_for_dynamic_bodies() {
    let mass = MassProperties::solid_cuboid(2.0, DVec3::new(0.05, 0.5, 2.0)).unwrap();
    let mut state = RigidState::moving(DVec3::ZERO, DQuat::IDENTITY, DVec3::ZERO, DVec3::new(3.0, 0.1, 5.0));
    let outcome = integrate(
        &mut state,
        &mass,
        BodyKind::Dynamic,
        FRAME,
        &IntegrationSettings::default(),
    )
    .unwrap();
    assert!(matches!(outcome, Some(EnergyFixOutcome::Rotated { .. })), "{outcome:?}");
    let outcome = integrate(
        &mut state,
        &mass,
        BodyKind::Dynamic,
        FRAME,
        &IntegrationSettings::without_energy_fix(),
    )
    .unwrap();
    assert_eq!(outcome, None);
}

#[test]
fn integrate_refuses_bad_input_by_name_and_moves_nothing() {
    let mass = MassProperties::solid_sphere(1.0, 0.5).unwrap();
    let good = RigidState::moving(DVec3::ONE, DQuat::IDENTITY, DVec3::X, DVec3::Y);
    let settings = IntegrationSettings::default();
    for dt in [0.0, -1.0 / 30.0, f64::NAN, f64::INFINITY] {
        let mut state = good;
        let err = integrate(&mut state, &mass, BodyKind::Dynamic, dt, &settings).unwrap_err();
        assert!(matches!(err, IntegratorError::InvalidTimeStep { .. }), "{err}");
        assert_eq!(state, good);
    }
    type Spoil = fn(&mut RigidState);
    let cases: [(&str, Spoil); 5] = [
        ("position", |s| s.position.y = f64::NAN),
        ("orientation", |s| s.orientation.w = f64::INFINITY),
        ("norm", |s| s.orientation = DQuat::from_xyzw(0.0, 0.0, 0.0, 2.0)),
        ("linear velocity", |s| s.linear_velocity.z = f64::NEG_INFINITY),
        ("angular velocity", |s| s.body_angular_velocity.x = f64::NAN),
    ];
    for (name, spoil) in cases {
        let mut state = good;
        spoil(&mut state);
        let before = state;
        let err = integrate(&mut state, &mass, BodyKind::Dynamic, FRAME, &settings).unwrap_err();
        assert!(err.to_string().contains(name), "{name}: {err}");
        assert_eq!(bytemuck::bytes_of(&state), bytemuck::bytes_of(&before));
    }
    let mut state = good;
    let err = integrate(
        &mut state,
        &MassProperties::infinite(),
        BodyKind::Dynamic,
        FRAME,
        &settings,
    )
    .unwrap_err();
    assert!(matches!(err, IntegratorError::InvalidMass { .. }), "{err}");
    // Finite but absurd: the update overflows and is refused, the state kept.
    let mut state = RigidState::moving(DVec3::ZERO, DQuat::IDENTITY, DVec3::new(1e308, 0.0, 0.0), DVec3::ZERO);
    let before = state;
    let err = integrate(&mut state, &mass, BodyKind::Dynamic, 1e10, &settings).unwrap_err();
    assert!(err.to_string().contains("position after the step"), "{err}");
    assert_eq!(state, before);
}

#[test]
fn integrate_batch_refuses_a_bad_body_and_moves_none() {
    let (mut states, masses, kinds) = bodies(9000);
    states[7001].body_angular_velocity.y = f64::NAN;
    states[8500].position.x = f64::INFINITY;
    let before = bits(&states);
    let err = integrate_batch(&mut states, &masses, &kinds, FRAME, &IntegrationSettings::default()).unwrap_err();
    assert_eq!(err.index, 7001);
    assert!(
        err.to_string().contains("body 7001") && err.to_string().contains("angular velocity"),
        "{err}"
    );
    assert_eq!(bits(&states), before);
    let err = integrate_batch(&mut states, &masses, &kinds, -1.0, &IntegrationSettings::default()).unwrap_err();
    assert!(matches!(err.error, IntegratorError::InvalidTimeStep { .. }));
}

/// The AVX2 build of the batch loop (where the machine has AVX2) and the portable one agree bit for
/// bit: neither uses fused multiply-add, so every operation rounds the same way.
#[test]
fn integrate_batch_kernels_agree_bit_for_bit() {
    let (start, masses, kinds) = bodies(5000);
    let run = |kernel: Kernel| {
        let mut states = start.clone();
        for _ in 0..30 {
            integrate_batch_with(
                &mut states,
                &masses,
                &kinds,
                FRAME,
                &IntegrationSettings::default(),
                kernel,
            )
            .unwrap();
        }
        bits(&states)
    };
    assert_eq!(run(Kernel::Portable), run(Kernel::Fastest));
}
