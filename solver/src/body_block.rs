//! Soft joint rows solved directly in body space: the same linear system as the row-space block
//! (joint_block.rs), for joint sets with many more rows than their bodies have velocities.
//!
//! With every bilateral row soft (`C = CFM / h > 0`, a diagonal), the Woodbury identity turns the
//! row system `(J W J^T + C) dlambda = b` (`W = M^-1`) into one over the bodies' velocity changes
//! `dv`:
//!
//! ```text
//! (M + J^T C^-1 J) dv = J^T C^-1 b,        dlambda = C^-1 (b - J dv),
//! ```
//!
//! (from `M dv = J^T dlambda` and `J dv + C dlambda = b`). The body matrix has six rows per body
//! whatever the number of joints between them, and couples only bodies a joint joins. Prescored
//! pieces glued at many anchors are the case it is for: Li 2018's plate of 25 cubes has 160 fixed
//! joints, 960 rows in a row-space profile about 400 wide (17 ms per factorization, measured),
//! but 150 body velocities in a band of about 36 (a grid of bodies in Cuthill-McKee order).
//! Rigid rows (`C = 0`) cannot be written this way; sets with any are left to the row block.

use glam::DMat3;

use crate::body::SolverBody;
use crate::joint_block::reverse_cuthill_mckee;
use crate::pgs::Prepared;
use crate::profile::Profile;
use crate::twist::Twist;

/// The factored body-space block of one solve.
pub(crate) struct BodyBlock {
    /// The bilateral rows (indices into the prepared rows), ascending.
    rows: Vec<usize>,
    /// Per velocity slot, the first of its six unknowns, or `None` for a slot that does not move.
    unknown: Vec<Option<usize>>,
    /// `M + J^T C^-1 J` over the moving bodies' velocities, factored.
    matrix: Profile,
    /// Scratch of [`BodyBlock::solve`], kept so sweeps do not allocate: each row's wanted change,
    /// and the velocity changes.
    wanted: Vec<f64>,
    change: Vec<f64>,
}

/// Relative floor on a pivot (the matrix is positive definite; this only guards round-off).
const PIVOT_FLOOR: f64 = 1e-12;

impl BodyBlock {
    /// The block of bilateral `rows` of `prepared` over `bodies` (the velocity slot after the last
    /// body is the world); `None` when a row is rigid, a moving body's inertia cannot be inverted,
    /// or the bodies have at least as many velocities as there are rows (the row block is then no
    /// larger).
    pub(crate) fn new(prepared: &[Prepared], rows: &[usize], bodies: &[SolverBody]) -> Option<Self> {
        if rows.iter().any(|&r| !(prepared[r].cfm_over_h > 0.0)) {
            return None;
        }
        let moving = |slot: usize| slot < bodies.len() && bodies[slot].inverse_mass > 0.0;
        // Moving bodies in the order they first appear, and their neighbours through rows.
        let mut local = vec![usize::MAX; bodies.len() + 1];
        let mut slots: Vec<usize> = Vec::new();
        for &r in rows {
            for slot in [prepared[r].a, prepared[r].b] {
                if moving(slot) && local[slot] == usize::MAX {
                    local[slot] = slots.len();
                    slots.push(slot);
                }
            }
        }
        if slots.is_empty() || 6 * slots.len() >= rows.len() {
            return None;
        }
        let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); slots.len()];
        for &r in rows {
            let (a, b) = (prepared[r].a, prepared[r].b);
            if moving(a) && moving(b) {
                neighbours[local[a]].push(local[b]);
                neighbours[local[b]].push(local[a]);
            }
        }
        for list in &mut neighbours {
            list.sort_unstable();
            list.dedup();
        }
        let order = reverse_cuthill_mckee(&neighbours);
        let mut position = vec![0usize; slots.len()];
        for (p, &k) in order.iter().enumerate() {
            position[k] = p;
        }
        let mut unknown: Vec<Option<usize>> = vec![None; bodies.len() + 1];
        for (k, &slot) in slots.iter().enumerate() {
            unknown[slot] = Some(6 * position[k]);
        }
        let first: Vec<usize> = (0..6 * slots.len())
            .map(|p| {
                let k = order[p / 6];
                let lowest = neighbours[k].iter().map(|&o| position[o]).fold(p / 6, usize::min);
                6 * lowest
            })
            .collect();
        let mut matrix = Profile::zeros(first);
        for &slot in &slots {
            let base = unknown[slot].expect("a moving body");
            let body = &bodies[slot];
            let inertia = inverse(body.inverse_inertia)?;
            for d in 0..3 {
                *matrix.diagonal_mut(base + d) += 1.0 / body.inverse_mass;
                *matrix.diagonal_mut(base + 3 + d) += inertia.col(d)[d];
                for e in 0..d {
                    *matrix.lower_mut(base + 3 + d, base + 3 + e) += inertia.col(e)[d];
                }
            }
        }
        for &r in rows {
            let row = &prepared[r];
            let sides = [
                (unknown[row.a], row.jacobian_a.components()),
                (unknown[row.b], row.jacobian_b.components()),
            ];
            let weight = 1.0 / row.cfm_over_h;
            for &(p_base, j_p) in &sides {
                let Some(p_base) = p_base else { continue };
                for &(q_base, j_q) in &sides {
                    let Some(q_base) = q_base else { continue };
                    for (d, &jd) in j_p.iter().enumerate() {
                        for (e, &je) in j_q.iter().enumerate() {
                            let (p, q) = (p_base + d, q_base + e);
                            if q < p {
                                *matrix.lower_mut(p, q) += weight * jd * je;
                            } else if q == p {
                                *matrix.diagonal_mut(p) += weight * jd * je;
                            }
                        }
                    }
                }
            }
        }
        matrix.factor(PIVOT_FLOOR);
        Some(Self {
            rows: rows.to_vec(),
            unknown,
            matrix,
            wanted: Vec::with_capacity(rows.len()),
            change: Vec::with_capacity(6 * slots.len()),
        })
    }

    /// Solves the block against the current velocities (see [`crate::joint_block::RowBlock::solve`]:
    /// the same system, the same result up to round-off). Returns the largest change of a row's
    /// `J v + (CFM / h) lambda`, m/s.
    pub(crate) fn solve(&mut self, prepared: &[Prepared], lambdas: &mut [f64], velocities: &mut [Twist]) -> f64 {
        let Self {
            rows,
            unknown,
            matrix,
            wanted,
            change,
        } = self;
        wanted.clear();
        wanted.extend(rows.iter().map(|&r| {
            let row = &prepared[r];
            row.target - row.relative_velocity(velocities) - row.cfm_over_h * lambdas[r]
        }));
        let residual = wanted.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        change.clear();
        change.resize(matrix.len(), 0.0);
        for (&r, &b) in rows.iter().zip(wanted.iter()) {
            let row = &prepared[r];
            for (slot, jacobian) in [(row.a, &row.jacobian_a), (row.b, &row.jacobian_b)] {
                if let Some(base) = unknown[slot] {
                    for (d, j) in jacobian.components().into_iter().enumerate() {
                        change[base + d] += j * b / row.cfm_over_h;
                    }
                }
            }
        }
        matrix.solve(change);
        for (&r, &b) in rows.iter().zip(wanted.iter()) {
            let row = &prepared[r];
            let mut moved = 0.0;
            for (slot, jacobian) in [(row.a, &row.jacobian_a), (row.b, &row.jacobian_b)] {
                if let Some(base) = unknown[slot] {
                    moved += jacobian
                        .components()
                        .into_iter()
                        .zip(&change[base..base + 6])
                        .map(|(j, v)| j * v)
                        .sum::<f64>();
                }
            }
            let delta = (b - moved) / row.cfm_over_h;
            if delta != 0.0 {
                lambdas[r] += delta;
                row.apply(velocities, delta);
            }
        }
        residual
    }
}

/// The inverse of a symmetric positive definite 3 x 3 matrix, `None` when it is singular.
fn inverse(matrix: DMat3) -> Option<DMat3> {
    let determinant = matrix.determinant();
    (determinant > 0.0 && determinant.is_finite()).then(|| matrix.inverse())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::joint_block::{JointBlock, RowBlock, is_bilateral};
    use crate::joints::{JointAnchor, JointPose, JointSpec, fixed_joint_rows};
    use crate::pgs::prepare;
    use crate::settings::SolverSettings;
    use crate::softness::Softness;
    use glam::{DQuat, DVec3};
    use shatter_integrators::SplitMix64;

    /// A 4 x 3 grid of 1 kg boxes glued to their neighbours by four soft fixed joints per shared
    /// face (`soft` false: rigid point rows), one corner box also glued to the world, moving at
    /// random: 17 x 4 joints, 408 rows over 72 body velocities.
    fn glued_grid(soft: bool) -> (Vec<SolverBody>, Vec<Prepared>) {
        let mut random = SplitMix64::new(4);
        let (nx, nz) = (4, 3);
        let bodies: Vec<SolverBody> = (0..nx * nz)
            .map(|_| SolverBody {
                linear_velocity: random.unit_vector(),
                angular_velocity: random.unit_vector() * 2.0,
                inverse_mass: 1.0,
                inverse_inertia: DMat3::from_diagonal(DVec3::new(6.0, 5.0, 7.0)),
            })
            .collect();
        let centre = |k: usize| DVec3::new((k % nx) as f64, 0.0, (k / nx) as f64);
        let spring = Softness::SpringDamper {
            stiffness: 1.0e5,
            damping: 600.0,
        };
        let point = if soft { spring } else { Softness::rigid(0.2) };
        let side = |body: u32, anchor: DVec3| {
            let pose = if body == crate::body::NO_BODY {
                JointPose::IDENTITY
            } else {
                JointPose::new(centre(body as usize), DQuat::IDENTITY)
            };
            JointAnchor {
                body,
                pose,
                frame: JointPose::new(anchor - pose.position, DQuat::IDENTITY),
            }
        };
        let mut rows = Vec::new();
        let mut glue = |a: u32, b: u32, anchor: DVec3| {
            let spec = JointSpec {
                a: side(a, anchor),
                b: side(b, anchor),
                softness: point,
                angular_softness: spring,
                breaking_impulse: None,
            };
            rows.extend(fixed_joint_rows(&bodies, &spec, 1.0 / 60.0).unwrap().rows);
        };
        for k in 0..nx * nz {
            for (step, axis, other) in [(1, DVec3::X, DVec3::Z), (nx, DVec3::Z, DVec3::X)] {
                let next = k + step;
                if (step == 1 && k % nx == nx - 1) || next >= nx * nz {
                    continue;
                }
                let mid = centre(k) + axis * 0.5;
                for (u, w) in [(-0.5, -0.5), (0.5, -0.5), (-0.5, 0.5), (0.5, 0.5)] {
                    glue(k as u32, next as u32, mid + other * u + DVec3::Y * w);
                }
            }
        }
        for (u, w) in [(-0.5, -0.5), (0.5, -0.5), (-0.5, 0.5), (0.5, 0.5)] {
            glue(0, crate::body::NO_BODY, DVec3::new(-0.5, w, u));
        }
        let settings = SolverSettings::default();
        let prepared = rows
            .iter()
            .map(|row| prepare(row, &bodies, 1.0 / 60.0, &settings))
            .collect();
        (bodies, prepared)
    }

    fn velocities(bodies: &[SolverBody]) -> Vec<Twist> {
        bodies
            .iter()
            .map(|b| Twist::new(b.linear_velocity, b.angular_velocity))
            .chain([Twist::new(DVec3::ZERO, DVec3::ZERO)])
            .collect()
    }

    #[test]
    fn joints_body_space_block_solves_the_row_space_system() {
        let (bodies, prepared) = glued_grid(true);
        let rows: Vec<usize> = (0..prepared.len()).filter(|&i| is_bilateral(&prepared[i])).collect();
        assert_eq!(rows.len(), prepared.len());
        let mut by_bodies = BodyBlock::new(&prepared, &rows, &bodies).expect("soft rows, more rows than velocities");
        let mut by_rows = RowBlock::new(&prepared, rows.clone(), bodies.len() + 1);
        let mut lambdas_bodies: Vec<f64> = (0..prepared.len()).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut lambdas_rows = lambdas_bodies.clone();
        let (mut v_bodies, mut v_rows) = (velocities(&bodies), velocities(&bodies));
        by_bodies.solve(&prepared, &mut lambdas_bodies, &mut v_bodies);
        by_rows.solve(&prepared, &mut lambdas_rows, &mut v_rows);
        let scale = lambdas_rows.iter().fold(0.0f64, |m, l| m.max(l.abs()));
        for (a, b) in lambdas_bodies.iter().zip(&lambdas_rows) {
            assert!((a - b).abs() <= 1e-9 * scale, "{a} vs {b}");
        }
        for (a, b) in v_bodies.iter().zip(&v_rows) {
            assert!((a.linear() - b.linear()).length() + (a.angular() - b.angular()).length() <= 1e-9 * scale);
        }
        // Solved: a second solve changes nothing and reports a residual at round-off.
        let residual = by_bodies.solve(&prepared, &mut lambdas_bodies, &mut v_bodies);
        assert!(residual <= 1e-10 * scale, "{residual}");
        // The dispatcher picks the body space here, the row space once a row is rigid.
        assert!(matches!(
            JointBlock::new(&prepared, &bodies),
            Some(JointBlock::Bodies(_))
        ));
        let (bodies, prepared) = glued_grid(false);
        assert!(matches!(JointBlock::new(&prepared, &bodies), Some(JointBlock::Rows(_))));
    }
}
