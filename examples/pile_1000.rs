//! A thousand unit boxes dropped from a 10 x 10 x 10 lattice (1.1 m pitch) onto the ground, one
//! step per frame, with a trace of how the pile settles: kinetic and potential energy, the fastest
//! box, the lowest box centre (0.5 m is a box lying flat on the ground), and the time per step.
//!
//! What to look for: the pile collapses in the first few seconds (boxes from the top layers fall
//! about 10 m, so speeds of 13 to 14 m/s are free fall, not ejection), then the kinetic energy
//! falls to a tiny fraction of the potential energy released and every box rests on or above the
//! ground. With `random`, the boxes start in random orientations and interpenetrating, like freshly
//! spawned fracture debris.
//!
//! `cargo run --release --example pile_1000 -- [aligned|random] [FRAME_RATE_HZ] [SECONDS]`
//! (defaults: aligned, 30 Hz, 15 s).

use std::process::ExitCode;
use std::time::Instant;

use shatter::engine::Stage;
use shatter::scenes::{box_lattice, world_with_ground};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let seed = match args.next().as_deref() {
        None | Some("aligned") => None,
        Some("random") => Some(7),
        Some(other) => {
            eprintln!("pile_1000: unknown arrangement {other:?}: expected aligned or random");
            return ExitCode::FAILURE;
        }
    };
    let rate: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(30.0);
    let seconds: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(15.0);
    let (mut world, ids) = world_with_ground(box_lattice(10, 1.1, seed));
    let dt = 1.0 / rate;
    let steps = (seconds * rate).round() as usize;
    let start_potential = world.potential_energy();
    let clock = Instant::now();
    let mut fastest_after_first_second: f64 = 0.0;
    let mut stage_seconds = [0.0; Stage::COUNT];
    let (mut contacts, mut iterations) = (0usize, 0usize);
    println!(
        "{:>6} {:>7} {:>12} {:>12} {:>9} {:>9} {:>9}",
        "step", "t (s)", "KE (J)", "PE (J)", "vmax", "lowest", "ms/step"
    );
    for step in 1..=steps {
        let report = match world.step(dt) {
            Ok(report) => report,
            Err(error) => {
                eprintln!("pile_1000: step {step}: {error}");
                return ExitCode::FAILURE;
            }
        };
        for stage in Stage::ALL {
            stage_seconds[stage.index()] += report.stage(stage).time.as_secs_f64();
        }
        contacts += report.contacts;
        iterations = iterations.max(report.solver_iterations);
        let fastest = ids
            .iter()
            .filter_map(|id| world.linear_velocity(*id).ok())
            .map(|v| v.length())
            .fold(0.0, f64::max);
        if step as f64 * dt > 1.0 {
            fastest_after_first_second = fastest_after_first_second.max(fastest);
        }
        if step % (rate as usize / 6).max(1) == 0 && step as f64 * dt <= 4.0
            || step % (2 * rate as usize).max(1) == 0
            || step == steps
        {
            let lowest = ids
                .iter()
                .filter_map(|id| world.pose(*id).ok())
                .map(|pose| pose.position.y)
                .fold(f64::INFINITY, f64::min);
            println!(
                "{step:>6} {:>7.2} {:>12.4e} {:>12.4e} {fastest:>9.2} {lowest:>9.3} {:>9.2}",
                step as f64 * dt,
                world.kinetic_energy(),
                world.potential_energy(),
                clock.elapsed().as_secs_f64() * 1e3 / step as f64
            );
        }
    }
    let released = start_potential - world.potential_energy();
    println!(
        "kinetic energy / potential energy released: {:.3e}; fastest box after the first second: {:.2} m/s",
        world.kinetic_energy() / released,
        fastest_after_first_second
    );
    let per_step = |seconds: f64| seconds * 1e3 / steps as f64;
    let stages: Vec<String> = Stage::ALL
        .iter()
        .map(|stage| format!("{stage} {:.2}", per_step(stage_seconds[stage.index()])))
        .collect();
    println!("ms per step by stage: {}", stages.join(", "));
    println!(
        "contacts per step: {:.0}; most solver sweeps in a step: {iterations}",
        contacts as f64 / steps as f64
    );
    ExitCode::SUCCESS
}
