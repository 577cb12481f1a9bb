//! The spin-drift study: energy and angular-momentum drift of free, ill-conditioned, fast-spinning
//! bodies at one step per 30 Hz frame, with and without the energy fix of Su 2009 section 2, for
//! both base orientation updates. It is what `shatter` runs by default for now, and what the
//! `spin_drift` example prints.

use std::fmt::Write as _;

use rayon::prelude::*;

use crate::integrators::{
    BodyKind, IntegrationSettings, MassProperties, OrientationScheme, RigidState, integrate, integrate_batch,
};
use crate::scenes::{BodySet, reference_spinning_box, spinning_bodies};

/// One step per 30 Hz frame, s.
pub const FRAME_DT: f64 = 1.0 / 30.0;

/// An integrator configuration compared in the study.
#[derive(Clone, Copy, Debug)]
pub struct DriftConfig {
    /// Short name used in tables, CSV headers and the plot legend.
    pub name: &'static str,
    /// The integration settings.
    pub settings: IntegrationSettings,
}

/// The configurations the study compares: both base updates, each with and without the fix.
pub fn configurations() -> [DriftConfig; 4] {
    let with = |scheme| IntegrationSettings {
        orientation_scheme: scheme,
        ..IntegrationSettings::default()
    };
    let without = |scheme| IntegrationSettings {
        energy_fix: None,
        ..with(scheme)
    };
    [
        DriftConfig {
            name: "splitting+fix",
            settings: with(OrientationScheme::Splitting),
        },
        DriftConfig {
            name: "splitting",
            settings: without(OrientationScheme::Splitting),
        },
        DriftConfig {
            name: "expmap+fix",
            settings: with(OrientationScheme::ExponentialMap),
        },
        DriftConfig {
            name: "expmap",
            settings: without(OrientationScheme::ExponentialMap),
        },
    ]
}

/// Drift of many random bodies under one configuration.
#[derive(Clone, Debug)]
pub struct PopulationDrift {
    /// The configuration's name.
    pub name: &'static str,
    /// Worst body's largest relative kinetic-energy error `|KE(t) - KE(0)| / KE(0)` over the run.
    pub worst_energy_drift: f64,
    /// Median over bodies of each body's largest relative kinetic-energy error.
    pub median_energy_drift: f64,
    /// Fraction of bodies whose kinetic energy strayed by more than 1 percent at some frame.
    pub fraction_over_one_percent: f64,
    /// Worst body's largest relative angular-momentum error `|L(t) - L(0)| / |L(0)|`.
    pub worst_momentum_drift: f64,
    /// Worst `| |q| - 1 |` of an orientation quaternion.
    pub worst_unit_norm_error: f64,
    /// Once per simulated second: (time s, worst and median relative energy error at that frame).
    pub series: Vec<(f64, f64, f64)>,
}

/// Drift of the reference box under one configuration.
#[derive(Clone, Copy, Debug)]
pub struct ReferenceDrift {
    /// The configuration's name.
    pub name: &'static str,
    /// Signed relative kinetic-energy change at the end of the run.
    pub final_energy_change: f64,
    /// Largest relative kinetic-energy error over the run.
    pub worst_energy_drift: f64,
    /// Largest `|L(t)/|L(t)| - L(0)/|L(0)||` over the run: drift of the momentum direction.
    pub worst_direction_drift: f64,
}

/// Everything the study measured.
#[derive(Clone, Debug)]
pub struct DriftStudy {
    /// Number of random bodies.
    pub body_count: usize,
    /// Simulated time, s.
    pub seconds: f64,
    /// One row per configuration, for the random bodies.
    pub population: Vec<PopulationDrift>,
    /// One row per configuration, for the reference box.
    pub reference: Vec<ReferenceDrift>,
}

/// Runs the study: `body_count` random bodies from [`spinning_bodies`] (seeded by `seed`) and the
/// reference box, for `seconds` of simulated time at one step per frame.
pub fn run_study(body_count: usize, seconds: f64, seed: u64) -> DriftStudy {
    let frames = (seconds / FRAME_DT).round() as usize;
    let bodies = spinning_bodies(body_count, seed);
    let configs = configurations();
    DriftStudy {
        body_count,
        seconds,
        population: configs.iter().map(|c| population_drift(&bodies, c, frames)).collect(),
        reference: configs.iter().map(|c| reference_drift(c, frames)).collect(),
    }
}

fn relative_energy_error(state: &RigidState, mass: &MassProperties, initial: f64) -> f64 {
    ((state.rotational_kinetic_energy(mass) - initial) / initial).abs()
}

fn population_drift(bodies: &BodySet, config: &DriftConfig, frames: usize) -> PopulationDrift {
    let mut states = bodies.states.clone();
    let initial: Vec<(f64, glam::DVec3)> = states
        .iter()
        .zip(&bodies.masses)
        .map(|(s, m)| (s.rotational_kinetic_energy(m), s.angular_momentum(m)))
        .collect();
    let mut worst_per_body = vec![0.0f64; states.len()];
    let (mut worst_momentum, mut worst_norm) = (0.0f64, 0.0f64);
    let mut series = Vec::new();
    let frames_per_second = (1.0 / FRAME_DT).round() as usize;
    for frame in 1..=frames {
        integrate_batch(&mut states, &bodies.masses, &bodies.kinds, FRAME_DT, &config.settings)
            .expect("generated bodies are valid");
        let errors: Vec<(f64, f64, f64)> = states
            .par_iter()
            .zip(bodies.masses.par_iter().zip(initial.par_iter()))
            .map(|(s, (m, (energy, momentum)))| {
                (
                    relative_energy_error(s, m, *energy),
                    (s.angular_momentum(m) - *momentum).length() / momentum.length(),
                    (s.orientation.length() - 1.0).abs(),
                )
            })
            .collect();
        for (worst, (energy, momentum, norm)) in worst_per_body.iter_mut().zip(&errors) {
            *worst = worst.max(*energy);
            worst_momentum = worst_momentum.max(*momentum);
            worst_norm = worst_norm.max(*norm);
        }
        if frame % frames_per_second == 0 {
            let mut now: Vec<f64> = errors.iter().map(|e| e.0).collect();
            now.sort_by(f64::total_cmp);
            series.push((frame as f64 * FRAME_DT, now[now.len() - 1], now[now.len() / 2]));
        }
    }
    let mut sorted = worst_per_body.clone();
    sorted.sort_by(f64::total_cmp);
    let over = sorted.iter().filter(|e| **e > 0.01).count();
    PopulationDrift {
        name: config.name,
        worst_energy_drift: sorted.last().copied().unwrap_or(0.0),
        median_energy_drift: sorted.get(sorted.len() / 2).copied().unwrap_or(0.0),
        fraction_over_one_percent: over as f64 / sorted.len().max(1) as f64,
        worst_momentum_drift: worst_momentum,
        worst_unit_norm_error: worst_norm,
        series,
    }
}

fn reference_drift(config: &DriftConfig, frames: usize) -> ReferenceDrift {
    let (mut state, mass) = reference_spinning_box();
    let energy = state.rotational_kinetic_energy(&mass);
    let direction = state.angular_momentum(&mass).normalize();
    let (mut worst_energy, mut worst_direction) = (0.0f64, 0.0f64);
    for _ in 0..frames {
        integrate(&mut state, &mass, BodyKind::Dynamic, FRAME_DT, &config.settings).expect("valid body");
        worst_energy = worst_energy.max(relative_energy_error(&state, &mass, energy));
        worst_direction = worst_direction.max((state.angular_momentum(&mass).normalize() - direction).length());
    }
    ReferenceDrift {
        name: config.name,
        final_energy_change: (state.rotational_kinetic_energy(&mass) - energy) / energy,
        worst_energy_drift: worst_energy,
        worst_direction_drift: worst_direction,
    }
}

impl DriftStudy {
    /// A plain-text table of the results.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} random bodies (inertia ratios up to 1:1000, up to 50 rad/s), {} s at 30 Hz, one step per frame",
            self.body_count, self.seconds
        );
        let _ = writeln!(
            out,
            "{:<15} {:>14} {:>14} {:>10} {:>14} {:>12}",
            "integrator", "worst |dKE|/KE", "median", ">1 % drift", "worst |dL|/|L|", "| |q|-1 |"
        );
        for p in &self.population {
            let _ = writeln!(
                out,
                "{:<15} {:>14.3e} {:>14.3e} {:>9.1}% {:>14.3e} {:>12.1e}",
                p.name,
                p.worst_energy_drift,
                p.median_energy_drift,
                100.0 * p.fraction_over_one_percent,
                p.worst_momentum_drift,
                p.worst_unit_norm_error
            );
        }
        let _ = writeln!(
            out,
            "\nreference box: half extents (0.05, 0.5, 2.0) m spinning at (3, 0.1, 5) rad/s, {} s",
            self.seconds
        );
        let _ = writeln!(
            out,
            "{:<15} {:>16} {:>14} {:>20}",
            "integrator", "final dKE/KE", "worst |dKE|/KE", "worst L direction"
        );
        for r in &self.reference {
            let _ = writeln!(
                out,
                "{:<15} {:>+16.3e} {:>14.3e} {:>20.3e}",
                r.name, r.final_energy_change, r.worst_energy_drift, r.worst_direction_drift
            );
        }
        out
    }

    /// The per-second series as CSV: time, then worst and median relative energy error per
    /// configuration.
    pub fn csv(&self) -> String {
        let mut out = String::from("time_s");
        for p in &self.population {
            let _ = write!(out, ",{0}_worst_rel_energy_error,{0}_median_rel_energy_error", p.name);
        }
        out.push('\n');
        let rows = self.population.first().map_or(0, |p| p.series.len());
        for row in 0..rows {
            let _ = write!(out, "{}", self.population[0].series[row].0);
            for p in &self.population {
                let (_, worst, median) = p.series[row];
                let _ = write!(out, ",{worst:e},{median:e}");
            }
            out.push('\n');
        }
        out
    }

    /// An SVG plot of the worst relative energy error against time, log scale, one line per
    /// configuration. Opens in any web browser.
    pub fn svg(&self) -> String {
        let (width, height, margin) = (800.0, 480.0, 70.0);
        let (log_min, log_max) = (-16.0f64, 2.0f64);
        let x = |t: f64| margin + (width - 2.0 * margin) * t / self.seconds.max(f64::MIN_POSITIVE);
        let y = |e: f64| {
            let log = e.max(1e-300).log10().clamp(log_min, log_max);
            height - margin - (height - 2.0 * margin) * (log - log_min) / (log_max - log_min)
        };
        let colors = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a"];
        let mut out = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
             <text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">Worst relative kinetic-energy error of {} spinning bodies, one step per 30 Hz frame</text>\n",
            width / 2.0,
            self.body_count
        );
        for decade in (log_min as i32..=log_max as i32).step_by(2) {
            let yy = y(10f64.powi(decade));
            let _ = writeln!(
                out,
                "<line x1=\"{margin}\" x2=\"{}\" y1=\"{yy}\" y2=\"{yy}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">1e{decade}</text>",
                width - margin,
                margin - 6.0,
                yy + 4.0
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">simulated time (s)</text>\n<text x=\"{margin}\" y=\"{}\" text-anchor=\"middle\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            width / 2.0,
            height - 20.0,
            height - margin + 16.0,
            width - margin,
            height - margin + 16.0,
            self.seconds
        );
        for (i, p) in self.population.iter().enumerate() {
            let points: Vec<String> = p
                .series
                .iter()
                .map(|(t, worst, _)| format!("{:.1},{:.1}", x(*t), y(*worst)))
                .collect();
            let color = colors[i % colors.len()];
            let _ = writeln!(
                out,
                "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n<text x=\"{}\" y=\"{}\" fill=\"{color}\">{}</text>",
                points.join(" "),
                margin + 10.0,
                margin + 16.0 * (i as f64 + 1.0),
                p.name
            );
        }
        out.push_str("</svg>\n");
        out
    }
}
