//! Runs every benchmark case in shatter and in rapier3d over the same horizon, times each step, and
//! prints a markdown table: the median time per step of each engine, their ratio, and what each
//! engine's bodies look like at the end (kinetic energy, mean and lowest centre height, bodies
//! still awake, and the fastest body after [`shatter_peers::FAST_AFTER`]), so a reader sees
//! whether both did the same physics.
//!
//! `cargo run --release -p shatter-peers -- [--steps N] [--scene NAME]`: `--steps` runs every case
//! for N steps instead of the horizon ([`shatter_peers::HORIZON`] of simulated time); `--scene`
//! runs only the scene called NAME. shatter steps inside a rayon pool of
//! [`shatter_peers::SHATTER_THREADS`] threads, rapier3d on one thread (its default features).

use std::process::ExitCode;
use std::time::Instant;

use shatter_peers::{
    Case, FAST_AFTER, HORIZON, RapierWorld, SHATTER_THREADS, ShatterWorld, fastest, median, scene_names,
};

/// What the command line asked for.
struct Options {
    steps: Option<usize>,
    scene: Option<String>,
}

const USAGE: &str = "usage: shatter-peers [--steps N] [--scene NAME]";

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        steps: None,
        scene: None,
    };
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--steps" => {
                let text = value("--steps")?;
                let steps = text
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or(format!("--steps {text:?}: expected a whole number above zero"))?;
                options.steps = Some(steps);
            }
            "--scene" => options.scene = Some(value("--scene")?),
            "--help" | "-h" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(options)
}

/// Median wall-clock milliseconds of `steps` calls of `step` on `world`, each timed on its own,
/// and the largest speed (m/s) `speed` reads off the world after any step that ends later than
/// [`FAST_AFTER`] into a run of time step `dt` (s), outside the timing.
fn time_steps<W>(
    world: &mut W,
    (steps, dt): (usize, f64),
    step: impl Fn(&mut W),
    speed: impl Fn(&W) -> f64,
) -> (f64, f64) {
    let mut fastest: f64 = 0.0;
    let mut times: Vec<f64> = (0..steps)
        .map(|k| {
            let start = Instant::now();
            step(world);
            let elapsed = start.elapsed().as_secs_f64() * 1e3;
            if (k + 1) as f64 * dt > FAST_AFTER {
                fastest = fastest.max(speed(world));
            }
            elapsed
        })
        .collect();
    (median(&mut times), fastest)
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("shatter-peers: {message}");
            return ExitCode::FAILURE;
        }
    };
    let cases: Vec<Case> = Case::all()
        .into_iter()
        .filter(|case| {
            options
                .scene
                .as_ref()
                .is_none_or(|name| case.scene.name == name.as_str())
        })
        .collect();
    if cases.is_empty() {
        eprintln!(
            "shatter-peers: no scene called {:?}; the scenes are {}",
            options.scene.unwrap_or_default(),
            scene_names()
        );
        return ExitCode::FAILURE;
    }
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(SHATTER_THREADS).build() {
        Ok(pool) => pool,
        Err(error) => {
            eprintln!("shatter-peers: a rayon pool of {SHATTER_THREADS} threads: {error}");
            return ExitCode::FAILURE;
        }
    };
    match options.steps {
        Some(steps) => println!("{steps} steps per run.\n"),
        None => println!("{HORIZON} s of simulated time per run.\n"),
    }
    println!(
        "| scene | dt (s) | sleeping | shatter ms/step | rapier ms/step | shatter / rapier | \
         kinetic energy at end, J (shatter / rapier) | mean height, m | lowest centre, m | awake at end | \
         fastest after {FAST_AFTER} s, m/s |"
    );
    println!("|---|---|---|---:|---:|---:|---|---|---|---|---|");
    for case in &cases {
        let steps = options.steps.unwrap_or_else(|| case.steps());
        eprintln!("shatter-peers: {} ({steps} steps)", case.label());
        let mut shatter = ShatterWorld::new(case);
        let (shatter_ms, shatter_fastest) = pool.install(|| {
            time_steps(
                &mut shatter,
                (steps, case.dt),
                |world| {
                    world.step();
                },
                |world| fastest(&world.bodies()),
            )
        });
        let mut rapier = RapierWorld::new(case);
        let (rapier_ms, rapier_fastest) = time_steps(&mut rapier, (steps, case.dt), RapierWorld::step, |world| {
            fastest(&world.bodies())
        });
        let (s, r) = (shatter.summary(), rapier.summary());
        println!(
            "| {} | 1/{:.0} | {} | {shatter_ms:.3} | {rapier_ms:.3} | {:.1} | {:.3e} / {:.3e} | {:.3} / {:.3} | \
             {:.3} / {:.3} | {} / {} | {shatter_fastest:.2} / {rapier_fastest:.2} |",
            case.scene.name,
            1.0 / case.dt,
            if case.sleeping { "default" } else { "off" },
            shatter_ms / rapier_ms,
            s.kinetic_energy,
            r.kinetic_energy,
            s.mean_height,
            r.mean_height,
            s.lowest,
            r.lowest,
            s.awake,
            r.awake,
        );
    }
    ExitCode::SUCCESS
}
