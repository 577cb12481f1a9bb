//! What a solve is asked to do ([`SolverSettings`]) and what it reports back ([`SolveReport`]).

use crate::body::SplitVelocity;
use crate::error::SolverError;

/// Iteration counts and limits of a solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverSettings {
    /// Most Gauss-Seidel sweeps over the rows in the velocity solve (0: apply the warm start only).
    ///
    /// The default, 6, was 10. On contact stacks the sweeps do not converge either way (friction
    /// shared between supports keeps them wandering, and a column's weight spreads one contact
    /// per sweep; measured: nearly every island of the benchmark piles, pyramid and sphere
    /// columns ran all 10), and the shock pass after them settles what they leave, so the last
    /// four sweeps bought little. Measured with `cargo run --release -p shatter-peers --example
    /// stage_times` on two threads (median of three runs of three): the 210-box pyramid's step
    /// 1.23 -> 1.07 ms, the aligned 1000-box pile's 2.57 -> 2.40 ms and the random one's 9.27 ->
    /// 8.62 ms at 30 Hz; the random pile at 60 Hz (8.14 -> 8.10 ms) and the sphere columns (1.47
    /// -> 1.45 ms) within the noise. Every stability test holds (the pyramid's top box moved 5e-5
    /// m in 20 s, 1e-8 m since the load pass, loads.rs; the pile ends at rest). Joint impulses need the sweeps more than contacts do: at
    /// 4 the energized beam scene (`scenes/energized_beam.json`) broke one of its four glue joints
    /// instead of all (at 3 and 5 all four: whether a glue joint's impulse reaches its threshold
    /// is that sensitive), so this stays above rapier3d's 4.
    pub iterations: usize,
    /// Shock-propagation passes after the velocity sweeps (shock.rs): each settles contact stacks
    /// from the ground up; 0 disables them.
    pub shock_sweeps: usize,
    /// Most Gauss-Seidel iterations over one body's rows to its supports within the velocity
    /// solve's shock pass (stopped early by `tolerance`), where solving those rows as one block
    /// (shock_block.rs) gives up. The block settles nearly every group of aligned stacks; the
    /// groups it leaves (a third of the random 1000-cube pile's: bodies on three supports or more,
    /// guesses that cycle) only iterate, one body after another on the pass's critical path. The
    /// default, 2, was 20 and then 8 (with the split pass's count, which stays 8, see
    /// `split_shock_iterations`). Measured with `cargo run --release -p shatter-peers --example
    /// stage_times -- --scene pile_1000_random_orientation --runs 1 --pool-use shared`, two
    /// threads, alternating the builds, median of six runs: 6.91 -> 6.46 ms a step at 30 Hz and
    /// 6.98 -> 6.49 ms at 60 Hz; 20 -> 8 had saved 9 percent of that pile's step. The
    /// stacks do not notice (the 210-box pyramid's top box moves 1e-8 m in 20 s either way: its
    /// groups are settled by the block or by the load pass, loads.rs), and the random pile still
    /// settles within the stability test's bounds (tests/stability_stacks.rs); 1 iteration was
    /// no faster than 2.
    pub shock_iterations: usize,
    /// Most Gauss-Seidel iterations over one body's rows to its supports in the split pass's shock
    /// order (split.rs; stopped early by `tolerance`). It stays 8 where the velocity pass's
    /// `shock_iterations` went to 2: these iterations push out what a heap presses in, and at 2
    /// the random 1000-cube pile's cubes went deeper into the ground on their way to rest at 30
    /// Hz (deepest corner over 15 s: 0.24 m against 0.14 m at 8; at 60 Hz 0.05 against 0.01-0.04
    /// m), for 5 percent of its step.
    pub split_shock_iterations: usize,
    /// Most sweeps of the split (position correction) solve; 0 disables it. The default stays 10
    /// where `iterations` went to 6: the split rows push out what the heap presses in, and with 6
    /// of each the deepest cube centre of the random 1000-cube pile (`pile_1000_random_orientation`,
    /// 8 s, two threads) went from 0.467 to 0.419 m at 30 Hz and from 0.499 to 0.469 m at 60 Hz
    /// (8 cm into the ground for a moment instead of 3), for little time: the split rows carry
    /// no friction and stop early in most islands, and a large island's split pass runs beside
    /// its velocity sweeps (measured as above, 6 split sweeps against 10 made only the random
    /// pile at 60 Hz faster, by 4 percent).
    pub split_iterations: usize,
    /// Start from the rows' incoming `warm` impulses instead of zero.
    pub warm_start: bool,
    /// After the shock pass of an island at rest, leave as each row's `warm` the impulses that
    /// carry every body's load down to the ground (the load pass, loads.rs) instead of the
    /// sweeps' impulses, so that the next step's sweeps find the rows holding and stop early;
    /// kept only where a trial sweep finds them nearer to holding than the sweeps' impulses
    /// (warm_choice.rs).
    pub carry_loads: bool,
    /// Cap on the pseudo velocity any split row asks for, m/s (rad/s), > 0 (may be infinite): keeps
    /// the correction of a deep penetration bounded per step.
    pub max_split_velocity: f64,
    /// A sweep stops the solve early when no row moved its `J v + (CFM / h) lambda` by more than this,
    /// m/s (rad/s); 0 always runs every sweep. A contact's split push no larger than this is taken
    /// as zero (round-off of its depth), so a stack at rest runs no split pass.
    pub tolerance: f64,
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            iterations: 6,
            shock_sweeps: 1,
            shock_iterations: 2,
            split_shock_iterations: 8,
            split_iterations: 10,
            warm_start: true,
            carry_loads: true,
            max_split_velocity: 3.0,
            tolerance: 1e-9,
        }
    }
}

impl SolverSettings {
    /// Whether a pass whose last of `iterations` sweeps changed no row by more than `residual`
    /// (m/s) stopped within the tolerance; then the shock order has nothing left to settle.
    pub(crate) fn converged(&self, iterations: usize, residual: f64) -> bool {
        iterations > 0 && residual <= self.tolerance
    }

    /// Checks the settings; errors name the bad one.
    pub fn validate(&self) -> Result<(), SolverError> {
        if !(self.max_split_velocity > 0.0) {
            return Err(SolverError::invalid(
                "max split velocity (m/s)",
                self.max_split_velocity,
                "a positive number (may be infinite)",
            ));
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(SolverError::invalid(
                "tolerance (m/s)",
                self.tolerance,
                "a finite number >= 0",
            ));
        }
        Ok(())
    }
}

/// What a solve did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveReport {
    /// Sweeps of the velocity solve that ran.
    pub iterations: usize,
    /// Largest change of any row's `J v + (CFM / h) lambda` in the last velocity sweep, m/s (rad/s);
    /// 0 when no sweep ran.
    pub residual: f64,
    /// Sweeps of the split solve that ran.
    pub split_iterations: usize,
    /// Largest change in the last split sweep, m/s (rad/s).
    pub split_residual: f64,
    /// Energy-clamped increments that were scaled down (warm start included).
    pub scaled_increments: usize,
    /// Energy-clamped increments that were dropped entirely.
    pub dropped_increments: usize,
    /// Rows that could not act because neither of their bodies is dynamic along them
    /// (`J M^-1 J^T = 0`); their `lambda` is set to 0.
    pub inactive_rows: usize,
    /// Per body, the split (pseudo) velocities to add to the position update only, world frame; zero
    /// for bodies no split row moved. Never added to the real velocities.
    pub split_velocities: Vec<SplitVelocity>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_default_is_valid_and_bad_values_are_named() {
        assert!(SolverSettings::default().validate().is_ok());
        let infinite = SolverSettings {
            max_split_velocity: f64::INFINITY,
            tolerance: 0.0,
            ..SolverSettings::default()
        };
        assert!(infinite.validate().is_ok());
        for (settings, name) in [
            (
                SolverSettings {
                    max_split_velocity: -1.0,
                    ..SolverSettings::default()
                },
                "max split velocity",
            ),
            (
                SolverSettings {
                    max_split_velocity: f64::NAN,
                    ..SolverSettings::default()
                },
                "max split velocity",
            ),
            (
                SolverSettings {
                    tolerance: -1e-9,
                    ..SolverSettings::default()
                },
                "tolerance",
            ),
        ] {
            assert!(settings.validate().unwrap_err().to_string().contains(name));
        }
    }
}
