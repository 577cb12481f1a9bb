//! What each engine makes of the 1000-cube pile in random orientations, side by side: every half
//! second of simulated time, the mean centre height of the cubes (m), how many are above 4 m,
//! the kinetic energy (J), and the touching pairs and contact points each engine's solver had
//! that step; then the median step time of each over the benchmark horizon
//! ([`shatter_peers::HORIZON`]), shatter on [`shatter_peers::SHATTER_THREADS`] threads and
//! rapier3d on one, sleeping off in both.
//!
//! The scene's cubes start interpenetrating (1.1 m pitch, unit cubes turned at random). The
//! engines part them differently: shatter pushes overlaps apart by position only (the split pass
//! leaves no velocity behind), while rapier3d's cubes come out of the overlaps moving (at 1.5 s
//! its kinetic energy is 25 times shatter's). So the lattice lands as a jammed block in shatter
//! and spreads into a low heap in rapier3d, and the peer table's times for this scene are for
//! different numbers of contacts (measured at 30 Hz, in the first 3 s: 2400 to 3200 touching
//! pairs in shatter, 1300 to 1900 in rapier3d). `--pitch-scale K` spreads the lattice by `K`
//! about its lowest layer first (1.64 gives a 1.8 m pitch, beyond the cubes' diagonal: no
//! overlaps), for the same comparison without them.
//!
//! `cargo run --release -p shatter-peers --example pile_physics -- [--hz 30|60] [--seconds S]
//! [--pitch-scale K]`: step rate (default 30), simulated seconds (default 6) and spread (default
//! 1).

use std::process::ExitCode;
use std::time::Instant;

use glam::DVec3;
use shatter_peers::{BodySample, Case, HORIZON, RapierWorld, SHATTER_THREADS, ShatterWorld, median};

/// What the command line asked for.
struct Options {
    hz: f64,
    seconds: f64,
    pitch_scale: f64,
}

const USAGE: &str = "usage: pile_physics [--hz 30|60] [--seconds S] [--pitch-scale K]";

/// A finite number above zero from the value of `flag`.
fn positive(flag: &str, text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .ok_or(format!("{flag} {text:?}: expected a number above zero"))
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        hz: 30.0,
        seconds: 6.0,
        pitch_scale: 1.0,
    };
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--hz" => options.hz = positive("--hz", &value("--hz")?)?,
            "--seconds" => options.seconds = positive("--seconds", &value("--seconds")?)?,
            "--pitch-scale" => options.pitch_scale = positive("--pitch-scale", &value("--pitch-scale")?)?,
            "--help" | "-h" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    match parse(std::env::args().skip(1)).and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// The benchmark case of the random pile at `hz`, its lattice spread by `scale` about its lowest
/// layer (the ground stays).
fn case(hz: f64, scale: f64) -> Result<Case, String> {
    let mut case = Case::all()
        .into_iter()
        .find(|c| c.scene.name == "pile_1000_random_orientation" && !c.sleeping && (1.0 / c.dt - hz).abs() < 0.5)
        .ok_or(format!("--hz {hz}: the random pile runs at 30 and 60 Hz"))?;
    let cubes = || case.scene.bodies.iter().filter(|b| !b.fixed);
    let lowest = cubes().map(|b| b.position.y).fold(f64::INFINITY, f64::min);
    for body in case.scene.bodies.iter_mut().filter(|b| !b.fixed) {
        let p = body.position;
        body.position = DVec3::new(p.x * scale, lowest + (p.y - lowest) * scale, p.z * scale);
    }
    Ok(case)
}

/// Cubes whose centre is above 4 m.
fn above_4_m(bodies: &[BodySample]) -> usize {
    bodies.iter().filter(|b| !b.fixed && b.position.y > 4.0).count()
}

fn run(options: Options) -> Result<(), String> {
    let case = case(options.hz, options.pitch_scale)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(SHATTER_THREADS)
        .build()
        .map_err(|e| format!("thread pool: {e}"))?;
    let (mut shatter, mut rapier) = (ShatterWorld::new(&case), RapierWorld::new(&case));
    let steps = (options.seconds / case.dt).round() as usize;
    let (timed, every) = (case.steps(), ((0.5 / case.dt).round() as usize).max(1));
    let (mut shatter_ms, mut rapier_ms) = (Vec::new(), Vec::new());
    println!(
        "pile_1000_random_orientation at 1/{} s, lattice pitch {:.2} m, sleeping off\n",
        options.hz,
        1.1 * options.pitch_scale
    );
    println!(
        "| t s | mean height m (shatter / rapier3d) | cubes above 4 m | kinetic energy J | touching pairs | contact points |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for step in 1..=steps {
        let start = Instant::now();
        let report = pool.install(|| shatter.step());
        let middle = Instant::now();
        rapier.step();
        let end = Instant::now();
        if step <= timed {
            shatter_ms.push((middle - start).as_secs_f64() * 1e3);
            rapier_ms.push((end - middle).as_secs_f64() * 1e3);
        }
        if step % every == 0 {
            let (ours, theirs) = (shatter.summary(), rapier.summary());
            let (mut pairs, mut points) = (0, 0);
            for pair in rapier.world.narrow_phase.contact_pairs() {
                if pair.has_any_active_contact() {
                    pairs += 1;
                    points += pair
                        .manifolds()
                        .iter()
                        .map(|m| m.data.solver_contacts.len())
                        .sum::<usize>();
                }
            }
            println!(
                "| {:.1} | {:.2} / {:.2} | {} / {} | {:.2e} / {:.2e} | {} / {pairs} | {} / {points} |",
                step as f64 * case.dt,
                ours.mean_height,
                theirs.mean_height,
                above_4_m(&shatter.bodies()),
                above_4_m(&rapier.bodies()),
                ours.kinetic_energy,
                theirs.kinetic_energy,
                report.manifolds,
                report.contacts,
            );
        }
    }
    if shatter_ms.is_empty() {
        return Ok(());
    }
    println!(
        "\nmedian step over the first {HORIZON} s (or all steps run): shatter {:.3} ms, rapier3d {:.3} ms",
        median(&mut shatter_ms),
        median(&mut rapier_ms)
    );
    Ok(())
}
