//! The constraint solve split into islands, solved in parallel.
//!
//! Rows couple only the dynamic bodies they touch, so the LCP of a step falls apart into
//! independent blocks: the islands of dynamic bodies linked by rows (union-find, as for sleep).
//! Static and kinematic bodies do not link islands (no row changes their velocity), so each island
//! gets its own copy of those it touches. Each island is one `shatter_solver::solve` call on its
//! own bodies and rows, in the global row order; islands run in parallel on the rayon pool and
//! their results are merged back in island order. A solve is a pure function of its island, so
//! the results are the same bits whatever the thread count. (The solver crate asks the engine to
//! parallelise this way: one island per call.)

use rayon::prelude::*;
use shatter_solver::{NO_BODY, Row, SolverBody, SolverSettings, SplitVelocity, solve};

use crate::islands::UnionFind;

/// What the solves of all islands did together.
#[derive(Clone, Debug, Default)]
pub(crate) struct IslandsReport {
    /// Islands solved.
    pub(crate) islands: usize,
    /// The most sweeps (velocity plus split) any island ran.
    pub(crate) iterations: usize,
    /// Energy-clamped increments scaled down or dropped, all islands.
    pub(crate) clamped: usize,
    /// Split velocity per body of the global slice.
    pub(crate) split: Vec<SplitVelocity>,
    /// Islands the solver refused (their bodies and rows were left as they were), with why.
    pub(crate) failures: Vec<String>,
}

/// One island: its bodies (global indices) and rows (global indices), both ascending.
struct Island {
    bodies: Vec<u32>,
    rows: Vec<usize>,
}

/// Solves `rows` over `bodies` island by island; updates velocities and impulses in place.
pub(crate) fn solve_islands(
    bodies: &mut [SolverBody],
    rows: &mut [Row],
    dt: f64,
    settings: &SolverSettings,
) -> IslandsReport {
    let islands = find_islands(bodies, rows);
    let results: Vec<_> = islands
        .par_iter()
        .map(|island| {
            // Global to local body indices.
            let mut local_bodies: Vec<SolverBody> = island.bodies.iter().map(|&b| bodies[b as usize]).collect();
            let local_index = |global: u32| -> u32 {
                if global == NO_BODY {
                    return NO_BODY;
                }
                island.bodies.binary_search(&global).map_or(NO_BODY, |i| i as u32)
            };
            let local_row = |global: usize| island.rows.binary_search(&global).unwrap_or(0) as u32;
            let mut local_rows: Vec<Row> = island
                .rows
                .iter()
                .map(|&r| {
                    let mut row = rows[r];
                    row.a = local_index(row.a);
                    row.b = local_index(row.b);
                    if let Some(friction) = row.friction.as_mut() {
                        friction.normal_row = local_row(friction.normal_row as usize);
                    }
                    row
                })
                .collect();
            let report = solve(&mut local_bodies, &mut local_rows, dt, settings);
            (local_bodies, local_rows, report)
        })
        .collect();
    let mut outcome = IslandsReport {
        islands: islands.len(),
        split: vec![SplitVelocity::default(); bodies.len()],
        ..IslandsReport::default()
    };
    for (island, (local_bodies, local_rows, report)) in islands.iter().zip(results) {
        match report {
            Ok(report) => {
                outcome.iterations = outcome.iterations.max(report.iterations + report.split_iterations);
                outcome.clamped += report.scaled_increments + report.dropped_increments;
                for (k, &global) in island.bodies.iter().enumerate() {
                    bodies[global as usize] = local_bodies[k];
                    outcome.split[global as usize] = report.split_velocities[k];
                }
                for (k, &global) in island.rows.iter().enumerate() {
                    rows[global].lambda = local_rows[k].lambda;
                }
            }
            Err(error) => {
                for &global in &island.rows {
                    rows[global].lambda = 0.0;
                }
                outcome
                    .failures
                    .push(format!("an island of {} rows: {error}", island.rows.len()));
            }
        }
    }
    outcome
}

/// The islands of `rows`, ordered by their lowest dynamic body; rows touching no dynamic body are
/// left out (nothing they do can change a velocity).
fn find_islands(bodies: &[SolverBody], rows: &[Row]) -> Vec<Island> {
    let dynamic = |b: u32| b != NO_BODY && bodies[b as usize].is_dynamic();
    let mut sets = UnionFind::new(bodies.len());
    for row in rows {
        if dynamic(row.a) && dynamic(row.b) {
            sets.union(row.a as usize, row.b as usize);
        }
    }
    let roots = sets.roots();
    // Island number of each root, in order of first appearance by body index.
    let mut number = vec![u32::MAX; bodies.len()];
    let mut islands: Vec<Island> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let owner = if dynamic(row.a) {
            row.a
        } else if dynamic(row.b) {
            row.b
        } else {
            continue;
        };
        let root = roots[owner as usize];
        if number[root] == u32::MAX {
            number[root] = islands.len() as u32;
            islands.push(Island {
                bodies: Vec::new(),
                rows: Vec::new(),
            });
        }
        let island = &mut islands[number[root] as usize];
        island.rows.push(r);
        for b in [row.a, row.b] {
            if b != NO_BODY {
                island.bodies.push(b);
            }
        }
    }
    for island in &mut islands {
        island.bodies.sort_unstable();
        island.bodies.dedup();
    }
    islands
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DMat3, DVec3};
    use shatter_solver::{ContactPoint, push_contact_rows};

    fn ball(x: f64, vy: f64) -> SolverBody {
        SolverBody {
            linear_velocity: DVec3::new(x * 0.0, vy, 0.0),
            angular_velocity: DVec3::ZERO,
            inverse_mass: 1.0,
            inverse_inertia: DMat3::IDENTITY * 10.0,
        }
    }

    /// Two separate stacks solved as islands give the same bits as each stack solved alone.
    #[test]
    fn solve_islands_match_separate_solves() {
        let dt = 1.0 / 30.0;
        let settings = SolverSettings::default();
        let mut bodies = vec![ball(0.0, -1.0), ball(5.0, -2.0), ball(0.0, -0.5), ball(5.0, -0.1)];
        let mut rows = Vec::new();
        let contact = |a, b| ContactPoint::new(a, b, DVec3::NEG_Y * 0.5, DVec3::Y * 0.5, DVec3::Y, 0.01, 0.5);
        // Stack one: ground - 0 - 2; stack two: ground - 1 - 3. Interleaved on purpose.
        for (a, b) in [(0, NO_BODY), (1, NO_BODY), (2, 0), (3, 1)] {
            push_contact_rows(&mut rows, &bodies, &contact(a, b), dt).unwrap();
        }
        let mut together_bodies = bodies.clone();
        let mut together_rows = rows.clone();
        let report = solve_islands(&mut together_bodies, &mut together_rows, dt, &settings);
        assert_eq!(report.islands, 2);
        assert!(report.failures.is_empty());
        // Stack one alone: bodies 0 and 2 as 0 and 1.
        let mut alone_bodies = vec![bodies[0], bodies[2]];
        let mut alone_rows = Vec::new();
        for (a, b) in [(0, NO_BODY), (1, 0)] {
            push_contact_rows(&mut alone_rows, &alone_bodies, &contact(a, b), dt).unwrap();
        }
        solve(&mut alone_bodies, &mut alone_rows, dt, &settings).unwrap();
        assert_eq!(together_bodies[0], alone_bodies[0]);
        assert_eq!(together_bodies[2], alone_bodies[1]);
        assert_eq!(together_rows[6].lambda, alone_rows[3].lambda);
        bodies.clear();
    }
}
