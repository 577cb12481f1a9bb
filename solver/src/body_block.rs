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
//!
//! Sweeps after the first cost nothing per row. A solve leaves every row at
//! `lambda = C^-1 (target - J v+)`, `v+` the velocities it left, and moves the bodies by exactly
//! `dv` (`M dv = J^T dlambda`). So when the other rows have since moved the bodies to `v`, the
//! right side is `J^T C^-1 b = J^T C^-1 J (v+ - v) = A (v+ - v)`, with `A = J^T C^-1 J` the
//! springs' stiffness over the bodies, kept from the factorization. The rows' own impulses are
//! written once, when the sweeps are done ([`BodyBlock::finish`]): the glued bunny's 2 600 rows
//! over 60 body velocities cost two passes over the rows per step instead of one per sweep.

use std::cmp::Ordering;

use glam::{DMat3, DVec3};

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
    /// The moving bodies' velocity slots, in unknown order (slot `k` holds unknowns `6k..6k+6`).
    slots: Vec<usize>,
    /// `A = J^T C^-1 J` over the moving bodies' velocities, not factored.
    stiffness: Profile,
    /// `M + A`, factored.
    matrix: Profile,
    /// Per pair of velocity slots the rows join, the largest Euclidean norm of a row's Jacobian on
    /// either side: bounds a row's `|J dv|` without visiting the rows.
    pairs: Vec<JacobianBound>,
    /// The moving bodies' velocities as the last solve left them (`v+`), once there was one.
    after: Option<Vec<f64>>,
    /// Scratch of [`BodyBlock::solve`], kept so sweeps do not allocate: each row's wanted change
    /// (first solve), the velocity changes, and `v+ - v`.
    wanted: Vec<f64>,
    change: Vec<f64>,
    moved: Vec<f64>,
}

/// The rows between two velocity slots, for the residual bound of [`BodyBlock::solve`].
struct JacobianBound {
    /// The first unknown of each side, `None` for a side that does not move.
    sides: [Option<usize>; 2],
    /// The largest norm of a row's Jacobian block on each side.
    norms: [f64; 2],
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
            for slot in [prepared[r].a(), prepared[r].b()] {
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
            let (a, b) = (prepared[r].a(), prepared[r].b());
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
        // A = sum of w J^T J over the rows (w = h / CFM), gathered per pair of sides in a dense
        // 12 x 12 block (lower half) and scattered into the profile once per pair.
        let side = |slot: usize| unknown[slot].unwrap_or(usize::MAX);
        let mut keyed: Vec<([usize; 2], usize)> = rows
            .iter()
            .map(|&r| ([side(prepared[r].a()), side(prepared[r].b())], r))
            .collect();
        keyed.sort_unstable();
        let mut stiffness = Profile::zeros(first.clone());
        let mut pairs: Vec<JacobianBound> = Vec::new();
        for group in keyed.chunk_by(|x, y| x.0 == y.0) {
            let key = group[0].0;
            let mut block = [[0.0f64; 12]; 12];
            let mut norms = [0.0f64; 2];
            for &(_, r) in group {
                let row = &prepared[r];
                let (ja, jb) = (row.jacobian_a.components(), row.jacobian_b.components());
                let mut j = [0.0f64; 12];
                j[..6].copy_from_slice(&ja);
                j[6..].copy_from_slice(&jb);
                let weight = 1.0 / row.cfm_over_h;
                for i in 0..12 {
                    let wi = weight * j[i];
                    for k in 0..=i {
                        block[i][k] += wi * j[k];
                    }
                }
                norms = [norms[0].max(squared(&ja)), norms[1].max(squared(&jb))];
            }
            let global = |i: usize| {
                let base = key[i / 6];
                if base == usize::MAX { None } else { Some(base + i % 6) }
            };
            for (i, block_row) in block.iter().enumerate() {
                let Some(p) = global(i) else { continue };
                for (k, &value) in block_row.iter().enumerate().take(i + 1) {
                    let Some(q) = global(k) else { continue };
                    match p.cmp(&q) {
                        Ordering::Equal => *stiffness.diagonal_mut(p) += value,
                        Ordering::Greater => *stiffness.lower_mut(p, q) += value,
                        Ordering::Less => *stiffness.lower_mut(q, p) += value,
                    }
                }
            }
            pairs.push(JacobianBound {
                sides: key.map(|base| (base != usize::MAX).then_some(base)),
                norms: norms.map(f64::sqrt),
            });
        }
        let mut matrix = stiffness.clone();
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
        matrix.factor(PIVOT_FLOOR);
        let mut by_unknown = vec![0; slots.len()];
        for &slot in &slots {
            by_unknown[unknown[slot].expect("a moving body") / 6] = slot;
        }
        let n = 6 * slots.len();
        Some(Self {
            rows: rows.to_vec(),
            unknown,
            slots: by_unknown,
            stiffness,
            matrix,
            pairs,
            after: None,
            wanted: Vec::with_capacity(rows.len()),
            change: Vec::with_capacity(n),
            moved: Vec::with_capacity(n),
        })
    }

    /// Solves the block against the current velocities (see [`crate::joint_block::RowBlock::solve`]:
    /// the same system, the same result up to round-off). The rows' impulses in `lambdas` are up
    /// to date only after [`BodyBlock::finish`]. Returns the largest change of a row's
    /// `J v + (CFM / h) lambda`, m/s: exact at the first solve, an upper bound after.
    pub(crate) fn solve(&mut self, prepared: &[Prepared], lambdas: &[f64], velocities: &mut [Twist]) -> f64 {
        let Self {
            rows,
            unknown,
            slots,
            stiffness,
            matrix,
            pairs,
            after,
            wanted,
            change,
            moved,
        } = self;
        change.clear();
        change.resize(matrix.len(), 0.0);
        let residual = match after {
            None => {
                // J^T C^-1 b over the rows, from the impulses the solve started with.
                wanted.clear();
                wanted.extend(rows.iter().map(|&r| {
                    let row = &prepared[r];
                    row.target - row.relative_velocity(velocities) - row.cfm_over_h * lambdas[r]
                }));
                for (&r, &b) in rows.iter().zip(wanted.iter()) {
                    let row = &prepared[r];
                    for (slot, jacobian) in [(row.a(), &row.jacobian_a), (row.b(), &row.jacobian_b)] {
                        if let Some(base) = unknown[slot] {
                            for (d, j) in jacobian.components().into_iter().enumerate() {
                                change[base + d] += j * b / row.cfm_over_h;
                            }
                        }
                    }
                }
                wanted.iter().fold(0.0f64, |m, v| m.max(v.abs()))
            }
            Some(last) => {
                // A (v+ - v): what the other rows moved the bodies by, against the springs.
                moved.clear();
                for &slot in slots.iter() {
                    moved.extend(velocities[slot].components());
                }
                for (m, l) in moved.iter_mut().zip(last.iter()) {
                    *m = l - *m;
                }
                stiffness.multiply(moved, change);
                let speed = |side: Option<usize>| side.map_or(0.0, |base| norm(&moved[base..base + 6]));
                pairs.iter().fold(0.0f64, |m, pair| {
                    m.max(pair.norms[0] * speed(pair.sides[0]) + pair.norms[1] * speed(pair.sides[1]))
                })
            }
        };
        matrix.solve(change);
        let last = after.get_or_insert_with(|| vec![0.0; change.len()]);
        for (k, &slot) in slots.iter().enumerate() {
            let v = velocities[slot].components();
            let dv = &change[6 * k..6 * k + 6];
            for d in 0..6 {
                last[6 * k + d] = v[d] + dv[d];
            }
            let l = &last[6 * k..6 * k + 6];
            velocities[slot] = Twist::new(DVec3::new(l[0], l[1], l[2]), DVec3::new(l[3], l[4], l[5]));
        }
        residual
    }

    /// Writes every row's impulse as the last solve left it, `lambda = C^-1 (target - J v+)`
    /// (bodies that do not move contribute their own, unchanged velocities). Nothing to do before
    /// the first solve: the impulses are still the ones the solve started with.
    pub(crate) fn finish(&self, prepared: &[Prepared], lambdas: &mut [f64], velocities: &[Twist]) {
        let Some(last) = &self.after else { return };
        for &r in &self.rows {
            let row = &prepared[r];
            let mut relative = 0.0;
            for (slot, jacobian) in [(row.a(), &row.jacobian_a), (row.b(), &row.jacobian_b)] {
                let j = jacobian.components();
                let own;
                let v: &[f64] = match self.unknown[slot] {
                    Some(base) => &last[base..base + 6],
                    None => {
                        own = velocities[slot].components();
                        &own
                    }
                };
                relative += j.iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
            }
            lambdas[r] = (row.target - relative) / row.cfm_over_h;
        }
    }
}

/// Sum of squares of a few components.
fn squared(values: &[f64]) -> f64 {
    values.iter().map(|v| v * v).sum()
}

/// Euclidean norm of a few components.
fn norm(values: &[f64]) -> f64 {
    squared(values).sqrt()
}

/// The inverse of a symmetric positive definite 3 x 3 matrix, `None` when it is singular.
fn inverse(matrix: DMat3) -> Option<DMat3> {
    let determinant = matrix.determinant();
    (determinant > 0.0 && determinant.is_finite()).then(|| matrix.inverse())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::SlotMass;
    use crate::head::heads_of;
    use crate::joint_block::{JointBlock, RowBlock, is_bilateral};
    use crate::joints::{JointAnchor, JointPose, JointSpec, fixed_joint_rows};
    use crate::softness::Softness;
    use crate::test_scenes::prepare_rows;
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
        let prepared = prepare_rows(&rows, &bodies, 1.0 / 60.0);
        (bodies, prepared)
    }

    fn slot_masses(bodies: &[SolverBody]) -> Vec<SlotMass> {
        let mut masses = Vec::new();
        SlotMass::fill(bodies, &mut masses);
        masses
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
        let masses = slot_masses(&bodies);
        let mut by_rows = RowBlock::new(&prepared, rows.clone(), &masses);
        let mut lambdas_bodies: Vec<f64> = (0..prepared.len()).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut lambdas_rows = lambdas_bodies.clone();
        let (mut v_bodies, mut v_rows) = (velocities(&bodies), velocities(&bodies));
        by_bodies.solve(&prepared, &lambdas_bodies, &mut v_bodies);
        by_bodies.finish(&prepared, &mut lambdas_bodies, &v_bodies);
        by_rows.solve(&prepared, &mut lambdas_rows, &mut v_rows);
        let scale = lambdas_rows.iter().fold(0.0f64, |m, l| m.max(l.abs()));
        let agree = |lambdas_bodies: &[f64], lambdas_rows: &[f64], v_bodies: &[Twist], v_rows: &[Twist]| {
            for (a, b) in lambdas_bodies.iter().zip(lambdas_rows) {
                assert!((a - b).abs() <= 1e-9 * scale, "{a} vs {b}");
            }
            for (a, b) in v_bodies.iter().zip(v_rows) {
                assert!((a.linear() - b.linear()).length() + (a.angular() - b.angular()).length() <= 1e-9 * scale);
            }
        };
        agree(&lambdas_bodies, &lambdas_rows, &v_bodies, &v_rows);
        // Solved: a second solve changes nothing and reports a residual at round-off.
        let residual = by_bodies.solve(&prepared, &lambdas_bodies, &mut v_bodies);
        assert!(residual <= 1e-10 * scale, "{residual}");
        // Other rows move the bodies between sweeps (here: a kick to every body); the next solves
        // (from the springs' stiffness, not the rows) still match the row block's.
        let mut random = SplitMix64::new(9);
        for _ in 0..3 {
            for (a, b) in v_bodies.iter_mut().zip(v_rows.iter_mut()).take(bodies.len()) {
                let kick = Twist::new(random.unit_vector() * 0.3, random.unit_vector() * 0.5);
                *a = a.add_scaled(&kick, 1.0);
                *b = b.add_scaled(&kick, 1.0);
            }
            let residual_rows = by_rows.solve(&prepared, &mut lambdas_rows, &mut v_rows);
            let bound = by_bodies.solve(&prepared, &lambdas_bodies, &mut v_bodies);
            // The body block's residual is a bound on the row block's, and not a loose one.
            assert!(
                bound >= residual_rows * (1.0 - 1e-9) && bound < 4.0 * residual_rows,
                "{bound} {residual_rows}"
            );
        }
        by_bodies.finish(&prepared, &mut lambdas_bodies, &v_bodies);
        agree(&lambdas_bodies, &lambdas_rows, &v_bodies, &v_rows);
        // The dispatcher picks the body space here, the row space once a row is rigid.
        assert!(matches!(
            JointBlock::new(&prepared, &heads_of(&prepared), (&bodies, &masses)),
            Some(JointBlock::Bodies(_))
        ));
        let (bodies, prepared) = glued_grid(false);
        assert!(matches!(
            JointBlock::new(&prepared, &heads_of(&prepared), (&bodies, &slot_masses(&bodies))),
            Some(JointBlock::Rows(_))
        ));
    }
}
