//! The `shatter` command-line tool.
//!
//! With no arguments it runs the default job: the spin-drift study of free, ill-conditioned,
//! fast-spinning bodies at one step per 30 Hz frame, printed as a table and written to
//! `out/spin_drift.csv` and `out/spin_drift.svg`.

use std::path::PathBuf;
use std::process::ExitCode;

use shatter::spin_drift::run_study;

const USAGE: &str = "usage: shatter [--out DIR] [--bodies N] [--seconds S]

Runs the spin-drift study: random ill-conditioned bodies spinning freely at one step per
30 Hz frame, with and without the energy fix, and writes DIR/spin_drift.csv and
DIR/spin_drift.svg (default DIR: out).";

struct Options {
    out: PathBuf,
    bodies: usize,
    seconds: f64,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        out: PathBuf::from("out"),
        bodies: 1000,
        seconds: 100.0,
    };
    while let Some(flag) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "--out" => options.out = PathBuf::from(value("--out")?),
            "--bodies" => {
                let text = value("--bodies")?;
                options.bodies = text
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--bodies {text}: expected a positive whole number"))?;
            }
            "--seconds" => {
                let text = value("--seconds")?;
                options.seconds = text
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 1.0 && *s <= 1e5)
                    .ok_or_else(|| format!("--seconds {text}: expected a number of seconds from 1 to 100000"))?;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("error: {message}\n");
            }
            eprintln!("{USAGE}");
            return if message.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    let study = run_study(options.bodies, options.seconds, 2009);
    print!("{}", study.table());
    let written = std::fs::create_dir_all(&options.out).and_then(|()| {
        let csv = options.out.join("spin_drift.csv");
        let svg = options.out.join("spin_drift.svg");
        std::fs::write(&csv, study.csv())?;
        std::fs::write(&svg, study.svg())?;
        Ok((csv, svg))
    });
    match written {
        Ok((csv, svg)) => {
            println!("\nwrote {} and {}", csv.display(), svg.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: cannot write to {}: {error}", options.out.display());
            ExitCode::FAILURE
        }
    }
}
