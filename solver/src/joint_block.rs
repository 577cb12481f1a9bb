//! The bilateral rows of a solve (joints: rows with unbounded impulses that are not energy-clamped)
//! solved together, exactly, by a sparse Cholesky factorization: block Gauss-Seidel whose joint
//! block is a direct solve.
//!
//! Gauss-Seidel over joint rows converges slowly exactly where joints are used: a pendulum whose
//! anchor sits far from a small bob couples its three rows through the bob's rotation (measured: a
//! 1 m pendulum with a 0.1 m ball stretched 9 percent at 10 sweeps), and a chain passes a link's
//! weight on by one joint per sweep (a 20-link chain at 20 warm-started sweeps gained energy every
//! step and flew apart). With the contact impulses held as they are, the joint rows are a linear
//! system,
//!
//! ```text
//! (J M^-1 J^T + CFM / h) dlambda = target - J v - (CFM / h) lambda,
//! ```
//!
//! symmetric positive (semi)definite and sparse: two rows couple only through a body they share.
//! It is factored once per solve (`L D L^T` over a profile, in reverse Cuthill-McKee order, which
//! gives chains and trees a narrow band and grids a band of one grid row) and solved once per sweep,
//! after the sweep's other rows (profile.rs). When every row is soft and the rows outnumber their
//! bodies' velocities (many joints gluing few bodies), the same system is factored over the
//! velocities instead (body_block.rs), which is far smaller. A pivot that vanishes (redundant
//! joints, e.g. two fixed joints on one pair) is replaced by `PIVOT_FLOOR` times its row's
//! diagonal: those rows then behave as slightly soft instead of making the factorization fail.

use crate::body::{SlotMass, SolverBody};
use crate::body_block::BodyBlock;
use crate::head::RowHead;
use crate::pgs::Prepared;
use crate::profile::Profile;
use crate::twist::Twist;

/// Relative floor on a pivot of the factorization, against rank-deficient joint sets.
const PIVOT_FLOOR: f64 = 1e-10;

/// The factored joint block of one solve, in row space.
pub(crate) struct RowBlock {
    /// Row indices (into the prepared rows) in elimination order.
    order: Vec<usize>,
    /// Each of those rows' responses `M^-1 J^T` on its two bodies.
    responses: Vec<[Twist; 2]>,
    /// `J M^-1 J^T + CFM / h` over those rows, factored.
    matrix: Profile,
    /// Scratch of [`RowBlock::solve`], kept so sweeps do not allocate.
    scratch: Vec<f64>,
}

/// Whether a row belongs in the joint block: unbounded both ways, not friction, not energy-clamped.
pub(crate) fn is_bilateral(row: &Prepared) -> bool {
    row.active
        && row.friction().is_none()
        && row.split_target().is_none()
        && !row.energy_clamp
        && row.lower() == f64::NEG_INFINITY
        && row.upper == f64::INFINITY
}

/// The bilateral rows of one solve, factored the cheaper of two ways.
pub(crate) enum JointBlock {
    /// Over the rows (any rows, rigid ones included).
    Rows(RowBlock),
    /// Over the bodies' velocities (all rows soft, more rows than velocities: body_block.rs).
    Bodies(Box<BodyBlock>),
}

impl JointBlock {
    /// Factors the bilateral rows of `prepared` (found by their `heads`) for `bodies` and their
    /// slots' inverse masses `masses` (the velocity slot after the last body is the world, which
    /// couples nothing); `None` when there are none.
    pub(crate) fn new(
        prepared: &[Prepared],
        heads: &[RowHead],
        (bodies, masses): (&[SolverBody], &[SlotMass]),
    ) -> Option<Self> {
        let rows: Vec<usize> = (0..heads.len()).filter(|&i| heads[i].bilateral()).collect();
        if rows.is_empty() {
            return None;
        }
        if let Some(block) = BodyBlock::new(prepared, &rows, bodies) {
            return Some(Self::Bodies(Box::new(block)));
        }
        Some(Self::Rows(RowBlock::new(prepared, rows, masses)))
    }

    /// Solves the block against the current velocities: every bilateral row's impulse changes so
    /// that all of them meet their targets together (written to `lambdas` at once by the row
    /// block, by [`JointBlock::finish`] for the body block). Returns the largest change of a row's
    /// `J v + (CFM / h) lambda`, m/s (an upper bound after the body block's first solve).
    pub(crate) fn solve(&mut self, prepared: &[Prepared], lambdas: &mut [f64], velocities: &mut [Twist]) -> f64 {
        match self {
            Self::Rows(block) => block.solve(prepared, lambdas, velocities),
            Self::Bodies(block) => block.solve(prepared, lambdas, velocities),
        }
    }

    /// Brings the rows' impulses in `lambdas` up to date with the last solve; call it when the
    /// sweeps are done, before anything reads them.
    pub(crate) fn finish(&self, prepared: &[Prepared], lambdas: &mut [f64], velocities: &[Twist]) {
        if let Self::Bodies(block) = self {
            block.finish(prepared, lambdas, velocities);
        }
    }
}

impl RowBlock {
    /// Factors the block of the bilateral `rows` of `prepared` over the velocity slots of inverse
    /// masses `masses` (the last is the world, which couples nothing).
    pub(crate) fn new(prepared: &[Prepared], rows: Vec<usize>, masses: &[SlotMass]) -> Self {
        let slots = masses.len();
        let world = slots - 1;
        // Rows touching each body, and each row's neighbours (rows sharing a moving body).
        let mut by_body: Vec<Vec<usize>> = vec![Vec::new(); slots];
        for (k, &r) in rows.iter().enumerate() {
            let row = &prepared[r];
            for body in [row.a(), row.b()] {
                if body != world && by_body[body].last() != Some(&k) {
                    by_body[body].push(k);
                }
            }
        }
        let neighbours: Vec<Vec<usize>> = rows
            .iter()
            .enumerate()
            .map(|(k, &r)| {
                let row = &prepared[r];
                let mut list: Vec<usize> = [row.a(), row.b()]
                    .iter()
                    .filter(|&&body| body != world)
                    .flat_map(|&body| by_body[body].iter().copied())
                    .filter(|&other| other != k)
                    .collect();
                list.sort_unstable();
                list.dedup();
                list
            })
            .collect();
        let order_local = reverse_cuthill_mckee(&neighbours);
        let mut position = vec![0usize; rows.len()];
        for (p, &k) in order_local.iter().enumerate() {
            position[k] = p;
        }
        let n = rows.len();
        let first: Vec<usize> = order_local
            .iter()
            .enumerate()
            .map(|(p, &k)| {
                neighbours[k]
                    .iter()
                    .map(|&o| position[o])
                    .filter(|&q| q < p)
                    .min()
                    .unwrap_or(p)
            })
            .collect();
        let mut matrix = Profile::zeros(first);
        for p in 0..n {
            let i = &prepared[rows[order_local[p]]];
            *matrix.diagonal_mut(p) = i.diagonal();
            for q in matrix.first(p)..p {
                let j = &prepared[rows[order_local[q]]];
                *matrix.lower_mut(p, q) = coupling(i, j, masses, world);
            }
        }
        matrix.factor(PIVOT_FLOOR);
        let order: Vec<usize> = order_local.iter().map(|&k| rows[k]).collect();
        Self {
            responses: order
                .iter()
                .map(|&r| {
                    let row = &prepared[r];
                    [row.response_a(&masses[row.a()]), row.response_b(&masses[row.b()])]
                })
                .collect(),
            order,
            matrix,
            scratch: Vec::with_capacity(n),
        }
    }

    /// Solves the block against the current velocities: every bilateral row's impulse changes so
    /// that all of them meet their targets together. Returns the largest change of a row's
    /// `J v + (CFM / h) lambda`, m/s.
    pub(crate) fn solve(&mut self, prepared: &[Prepared], lambdas: &mut [f64], velocities: &mut [Twist]) -> f64 {
        let x = &mut self.scratch;
        x.clear();
        x.extend(self.order.iter().map(|&r| {
            let row = &prepared[r];
            row.target - row.relative_velocity(velocities) - row.cfm_over_h * lambdas[r]
        }));
        let residual = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        self.matrix.solve(x);
        for (p, (&r, [response_a, response_b])) in self.order.iter().zip(&self.responses).enumerate() {
            if x[p] != 0.0 {
                let row = &prepared[r];
                lambdas[r] += x[p];
                velocities[row.a()] = velocities[row.a()].add_scaled(response_a, x[p]);
                velocities[row.b()] = velocities[row.b()].add_scaled(response_b, x[p]);
            }
        }
        residual
    }
}

/// `J_i M^-1 J_j^T`: the change of row `i`'s `J v` per unit impulse of row `j`, through the bodies
/// they share (the world slot couples nothing), the slots' inverse masses in `masses`.
fn coupling(i: &Prepared, j: &Prepared, masses: &[SlotMass], world: usize) -> f64 {
    let mut sum = 0.0;
    for (body_i, jacobian_i) in [(i.a(), &i.jacobian_a), (i.b(), &i.jacobian_b)] {
        if body_i == world {
            continue;
        }
        if j.a() == body_i {
            sum += jacobian_i.dot(&j.response_a(&masses[body_i]));
        }
        if j.b() == body_i {
            sum += jacobian_i.dot(&j.response_b(&masses[body_i]));
        }
    }
    sum
}

/// Reverse Cuthill-McKee order of a graph given by sorted neighbour lists: each connected
/// component breadth first from a node of least degree, neighbours by ascending degree (ties by
/// index), reversed. Deterministic.
pub(crate) fn reverse_cuthill_mckee(neighbours: &[Vec<usize>]) -> Vec<usize> {
    let n = neighbours.len();
    let mut by_degree: Vec<usize> = (0..n).collect();
    by_degree.sort_by_key(|&k| (neighbours[k].len(), k));
    let mut visited = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for &seed in &by_degree {
        if visited[seed] {
            continue;
        }
        visited[seed] = true;
        let mut head = order.len();
        order.push(seed);
        while head < order.len() {
            let node = order[head];
            head += 1;
            let mut next: Vec<usize> = neighbours[node].iter().copied().filter(|&k| !visited[k]).collect();
            next.sort_by_key(|&k| (neighbours[k].len(), k));
            for k in next {
                visited[k] = true;
                order.push(k);
            }
        }
    }
    order.reverse();
    order
}
