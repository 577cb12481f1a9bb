//! Where shatter's step spends its time in one benchmark case: the median time per step of each
//! stage of the step (`StepReport::stage`), of the work between the stages (the report's energy
//! sums, setting the pool's threads to watch for work: the step's wall time less its stages; the
//! start states kept for quarantine and the contact cache's rebuild run beside the broad phase and
//! the integration, and count in theirs), and of the whole step, over the case's run of [`shatter_peers::HORIZON`]
//! simulated seconds from a fresh world, repeated `--runs` times. Also the solver's rows, islands
//! and sweeps (median per step). One engine runs at a time; the peer table (`shatter-peers`)
//! compares the two.
//!
//! `cargo run --release -p shatter-peers --example stage_times -- [--scene NAME] [--hz HZ]
//! [--threads N] [--runs N] [--sleeping] [--pool-use faster|shared|one-thread]`: the scene
//! (default `pyramid_20`), one of its step rates (default its first), the rayon pool's threads
//! (default [`shatter_peers::SHATTER_THREADS`]), runs (default 3), each engine's default
//! sleeping instead of none, and how shatter's steps use the pool (`WorldSettings::pool_use`,
//! default `faster`). Also prints how many steps ran on one thread.
//!
//! With `--engine rapier` the case runs in rapier3d instead (as the peer table builds it, on one
//! thread) and only its whole step is timed: the same runs for an instruction count of each
//! engine's step (`tools/instructions.sh --engine`).

use std::process::ExitCode;
use std::time::Instant;

use shatter::engine::{PoolUse, Stage, WorldSettings};
use shatter_peers::{Case, HORIZON, RapierWorld, SHATTER_THREADS, ShatterWorld, median, scene_names};

/// What the command line asked for.
struct Options {
    scene: String,
    hz: Option<f64>,
    threads: usize,
    runs: usize,
    sleeping: bool,
    pool_use: PoolUse,
    /// Whether rapier3d runs the case instead of shatter.
    rapier: bool,
}

const USAGE: &str = "usage: stage_times [--scene NAME] [--hz HZ] [--threads N] [--runs N] [--sleeping] [--pool-use faster|shared|one-thread] [--engine shatter|rapier]";

/// A whole number above zero from the value of `flag`.
fn count(flag: &str, text: &str) -> Result<usize, String> {
    text.parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or(format!("{flag} {text:?}: expected a whole number above zero"))
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        scene: "pyramid_20".to_string(),
        hz: None,
        threads: SHATTER_THREADS,
        runs: 3,
        sleeping: false,
        pool_use: PoolUse::default(),
        rapier: false,
    };
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--scene" => options.scene = value("--scene")?,
            "--hz" => {
                let text = value("--hz")?;
                let hz = text
                    .parse::<f64>()
                    .ok()
                    .filter(|hz| hz.is_finite() && *hz > 0.0)
                    .ok_or(format!("--hz {text:?}: expected a step rate in Hz above zero"))?;
                options.hz = Some(hz);
            }
            "--threads" => options.threads = count("--threads", &value("--threads")?)?,
            "--runs" => options.runs = count("--runs", &value("--runs")?)?,
            "--sleeping" => options.sleeping = true,
            "--pool-use" => {
                options.pool_use = match value("--pool-use")?.as_str() {
                    "faster" => PoolUse::Faster,
                    "shared" => PoolUse::Shared,
                    "one-thread" => PoolUse::OneThread,
                    other => return Err(format!("--pool-use {other:?}: expected faster, shared or one-thread")),
                }
            }
            "--engine" => {
                options.rapier = match value("--engine")?.as_str() {
                    "shatter" => false,
                    "rapier" => true,
                    other => return Err(format!("--engine {other:?}: expected shatter or rapier")),
                }
            }
            "--help" | "-h" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(options)
}

/// The case the options name, or why there is none.
fn case_of(options: &Options) -> Result<Case, String> {
    let cases: Vec<Case> = Case::all()
        .into_iter()
        .filter(|case| case.scene.name == options.scene && case.sleeping == options.sleeping)
        .collect();
    if cases.is_empty() {
        return Err(format!(
            "no scene called {:?}; the scenes are {}",
            options.scene,
            scene_names()
        ));
    }
    let rates: Vec<String> = cases.iter().map(|case| format!("{:.0}", 1.0 / case.dt)).collect();
    match options.hz {
        None => Ok(cases[0].clone()),
        Some(hz) => cases
            .into_iter()
            .find(|case| (case.dt * hz - 1.0).abs() < 1e-9)
            .ok_or(format!(
                "{} runs at {} Hz, not {hz} Hz",
                options.scene,
                rates.join(" and ")
            )),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("stage_times: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the case the command line names and prints its table, or says why it cannot.
fn run() -> Result<(), String> {
    let options = parse(std::env::args().skip(1))?;
    let case = case_of(&options)?;
    if options.rapier {
        run_rapier(&case, options.runs);
        return Ok(());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .map_err(|error| format!("a rayon pool of {} threads: {error}", options.threads))?;
    // Milliseconds per step: each stage's, the step's wall time, and the rest.
    let mut stages = vec![Vec::new(); Stage::COUNT];
    let (mut whole, mut between) = (Vec::new(), Vec::new());
    let (mut rows, mut islands, mut sweeps) = (Vec::new(), Vec::new(), Vec::new());
    let mut one_thread_steps = 0;
    for _ in 0..options.runs {
        let mut world = ShatterWorld::new(&case);
        let settings = WorldSettings {
            pool_use: options.pool_use,
            ..*world.world.settings()
        };
        world.world.set_settings(settings).map_err(|error| error.to_string())?;
        pool.install(|| {
            for _ in 0..case.steps() {
                let start = Instant::now();
                let report = world.step();
                let wall = start.elapsed().as_secs_f64() * 1e3;
                let mut staged = 0.0;
                for (k, stage) in Stage::ALL.iter().enumerate() {
                    let time = report.stage(*stage).time.as_secs_f64() * 1e3;
                    stages[k].push(time);
                    staged += time;
                }
                whole.push(wall);
                between.push(wall - staged);
                rows.push(report.solver_rows as f64);
                islands.push(report.solver_islands as f64);
                sweeps.push(report.solver_iterations as f64);
                one_thread_steps += usize::from(report.threads == 1);
            }
        });
    }
    let step = median(&mut whole);
    println!(
        "{} at 1/{:.0} s, sleeping {}, {} threads, {} runs of {} steps ({HORIZON} s):\n",
        case.scene.name,
        1.0 / case.dt,
        if case.sleeping { "on" } else { "off" },
        options.threads,
        options.runs,
        case.steps()
    );
    println!("| part of the step | median ms | share of the median step |");
    println!("|---|---:|---:|");
    let row = |name: String, ms: f64| println!("| {name} | {ms:.3} | {:.0} % |", 100.0 * ms / step);
    for (k, stage) in Stage::ALL.iter().enumerate() {
        row(format!("{stage:?}"), median(&mut stages[k]));
    }
    row("between the stages".to_string(), median(&mut between));
    row("whole step".to_string(), step);
    println!(
        "\nsolver, median per step: rows {:.0}, islands {:.0}, sweeps {:.0} (velocity and split, the most of any island)",
        median(&mut rows),
        median(&mut islands),
        median(&mut sweeps)
    );
    println!(
        "steps run on one thread: {one_thread_steps} of {} (pool use {:?})",
        whole.len(),
        options.pool_use
    );
    Ok(())
}

/// Runs `case` in rapier3d `runs` times from a fresh world and prints its median step time.
fn run_rapier(case: &Case, runs: usize) {
    let mut whole = Vec::new();
    for _ in 0..runs {
        let mut world = RapierWorld::new(case);
        for _ in 0..case.steps() {
            let start = Instant::now();
            world.step();
            whole.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    println!(
        "{} at 1/{:.0} s, sleeping {}, rapier3d on one thread, {runs} runs of {} steps ({HORIZON} s):\n",
        case.scene.name,
        1.0 / case.dt,
        if case.sleeping { "on" } else { "off" },
        case.steps()
    );
    println!("| part of the step | median ms |");
    println!("|---|---:|");
    println!("| whole step | {:.3} |", median(&mut whole));
}
