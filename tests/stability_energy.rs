//! Frame-rate stability, energy: random drops of boxes and balls at 30 Hz never gain energy where
//! physics says they cannot (Su 2009 section 3: collisions and contacts are energy clamped).

use proptest::prelude::*;
use shatter::engine::Stage;
use shatter::scenes::{FRAME_30HZ, random_drop};

/// Standard gravity of the default settings, m/s^2.
const G: f64 = 9.81;

/// Steps per case: two seconds at 30 Hz, enough for every body to land and settle or bounce.
const STEPS: usize = 60;

/// Relative round-off allowed on a kinetic energy that may not grow.
const ROUND_OFF: f64 = 1e-12;

/// The penetration slop of the energy bound, m. The split pass (solver/src/split.rs) has no slop of
/// its own: it pushes out a fraction of every penetration per step on pseudo velocities that leave
/// no kinetic energy, so it can raise potential energy by at most `m g` times the depth a body was
/// in. Total energy may therefore exceed its start by at most `M g` times this allowance for the
/// depth the split pass corrects against gravity.
const PENETRATION_SLOP: f64 = 0.005;

/// Runs one drop; returns the largest rise of total energy over its start, in metres of the total
/// mass lifted against gravity (`(E - E0) / (M g)`).
fn drop_case(seed: u64, count: usize) -> Result<f64, TestCaseError> {
    let (mut world, ids) = random_drop(seed, count);
    let total_mass: f64 = ids.iter().map(|&id| world.body(id).unwrap().mass.mass()).sum();
    let start = world.kinetic_energy() + world.potential_energy();
    let mut rise = f64::NEG_INFINITY;
    for step in 0..STEPS {
        let report = world.step(FRAME_30HZ).unwrap();
        for stage in [Stage::Collide, Stage::SolveConstraints] {
            let figures = report.stage(stage);
            let (before, after) = (figures.kinetic_energy_before, figures.kinetic_energy_after);
            prop_assert!(
                after <= before * (1.0 + ROUND_OFF) + f64::MIN_POSITIVE,
                "seed {seed}, step {step}: {stage} raised kinetic energy {before} J -> {after} J"
            );
        }
        rise = rise.max((report.energy_after() - start) / (total_mass * G));
    }
    Ok(rise)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn stability_energy_random_drops_never_gain_energy(seed in any::<u64>(), count in 1usize..=4) {
        let rise = drop_case(seed, count)?;
        prop_assert!(
            rise <= PENETRATION_SLOP,
            "seed {seed}: total energy rose by M g x {rise} m over its start"
        );
    }
}
