//! Anderson acceleration of a fixed-point iteration, for the ADMM of the modes' subproblems
//! ([`super::admm`]).

use std::collections::VecDeque;

use rayon::prelude::*;

use super::dense::{cholesky, cholesky_solve};
use crate::sums::{dot, dot_pair, weighted_dot};

/// Entries of a field one task takes in the element-wise passes (they run on the rayon pool).
const BLOCK: usize = 1024;

/// Longest extrapolation, in plain steps (residual lengths).
const MAX_EXTRAPOLATION: f64 = 10.0;

/// Type-II Anderson acceleration (Walker and Ni 2011) of a fixed-point map `x -> g(x)`: the next
/// point is `g_k - sum_i gamma_i (g_i+1 - g_i)` with `gamma` minimizing the weighted norm of the
/// combined residual `f_k - sum_i gamma_i (f_i+1 - f_i)` over the last few steps. The Gram matrix
/// of the residual steps is kept up to date one row per step, and step buffers are reused.
///
/// The residual steps are stored already multiplied by the weights (they only ever enter
/// weighted dot products), so each step costs one pass over the stored steps, which takes the
/// Gram matrix's new row and the least-squares right-hand side together: with a memory of ten
/// on a 43k-face mesh the history is 14 MB, more than the caches hold, and each pass over it is
/// a fifth of a sparse Cholesky solve.
pub(crate) struct Anderson {
    memory: usize,
    has_previous: bool,
    previous_g: Vec<f64>,
    previous_f: Vec<f64>,
    steps_g: VecDeque<Vec<f64>>,
    /// The residual steps times the weights, `W (f_i+1 - f_i)`.
    steps_f: VecDeque<Vec<f64>>,
    /// `gram[i][j] = <f_i+1 - f_i, f_j+1 - f_j>_W`, over the stored steps.
    gram: VecDeque<Vec<f64>>,
    spare: Vec<Vec<f64>>,
    extrapolation: Vec<f64>,
}

impl Anderson {
    pub(crate) fn new(memory: usize) -> Self {
        Self {
            memory,
            has_previous: false,
            previous_g: Vec::new(),
            previous_f: Vec::new(),
            steps_g: Default::default(),
            steps_f: Default::default(),
            gram: Default::default(),
            spare: Vec::new(),
            extrapolation: Vec::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.steps_g.len()
    }

    pub(crate) fn clear(&mut self) {
        self.has_previous = false;
        self.spare.extend(self.steps_g.drain(..));
        self.spare.extend(self.steps_f.drain(..));
        self.gram.clear();
    }

    fn buffer(&mut self, length: usize) -> Vec<f64> {
        let mut b = self.spare.pop().unwrap_or_default();
        b.resize(length, 0.0);
        b
    }

    /// Records `(g, f)` and writes the extrapolated point into `out` (which holds `g`).
    pub(crate) fn extrapolate(&mut self, g: &[f64], f: &[f64], weights: &[f64], out: &mut [f64]) {
        // <W s_i, f> for every stored step, the new one last.
        let mut rhs = Vec::with_capacity(self.memory);
        if self.has_previous {
            if self.steps_g.len() == self.memory {
                let old_g = self.steps_g.pop_front().expect("a full history");
                let old_f = self.steps_f.pop_front().expect("a full history");
                self.spare.push(old_g);
                self.spare.push(old_f);
                self.gram.pop_front();
                self.gram.iter_mut().for_each(|row| {
                    row.remove(0);
                });
            }
            let mut step_g = self.buffer(g.len());
            let mut step_f = self.buffer(f.len());
            let differences = |step: &mut [f64], now: &[f64], before: &[f64]| {
                step.par_chunks_mut(BLOCK)
                    .zip(now.par_chunks(BLOCK).zip(before.par_chunks(BLOCK)))
                    .for_each(|(s, (a, b))| s.iter_mut().zip(a.iter().zip(b)).for_each(|(s, (a, b))| *s = a - b));
            };
            differences(&mut step_g, g, &self.previous_g);
            differences(&mut step_f, f, &self.previous_f);
            // Each product is one thread's whole sum, whichever thread takes it: the same bits
            // on any thread count.
            let pairs: Vec<(f64, f64)> = self.steps_f.par_iter().map(|s| dot_pair(s, &step_f, f)).collect();
            let (row, with_f): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
            rhs.extend(with_f);
            for (r, v) in self.gram.iter_mut().zip(&row) {
                r.push(*v);
            }
            let mut own = row;
            own.push(weighted_dot(&step_f, &step_f, weights));
            self.gram.push_back(own);
            step_f.iter_mut().zip(weights).for_each(|(s, w)| *s *= w);
            rhs.push(dot(&step_f, f));
            self.steps_g.push_back(step_g);
            self.steps_f.push_back(step_f);
        }
        self.previous_g.clear();
        self.previous_g.extend_from_slice(g);
        self.previous_f.clear();
        self.previous_f.extend_from_slice(f);
        self.has_previous = true;
        let k = self.steps_f.len();
        if k == 0 {
            return;
        }
        let mut gram = vec![0.0; k * k];
        for (i, row) in self.gram.iter().enumerate() {
            gram[i * k..(i + 1) * k].copy_from_slice(row);
        }
        let trace: f64 = (0..k).map(|i| gram[i * k + i]).sum();
        for i in 0..k {
            gram[i * k + i] += 1e-10 * trace;
        }
        let Some(l) = cholesky(&gram, k) else {
            return;
        };
        cholesky_solve(&l, k, &mut rhs);
        // sum_i gamma_i (g_i+1 - g_i), a block at a time so the block stays in cache while
        // every step is added into it.
        self.extrapolation.clear();
        self.extrapolation.resize(g.len(), 0.0);
        let steps_g = &self.steps_g;
        self.extrapolation
            .par_chunks_mut(BLOCK)
            .enumerate()
            .for_each(|(b, block)| {
                let range = b * BLOCK..b * BLOCK + block.len();
                for (gamma, step) in rhs.iter().zip(steps_g) {
                    block
                        .iter_mut()
                        .zip(&step[range.clone()])
                        .for_each(|(o, s)| *o += gamma * s);
                }
            });
        // Where the residual hardly changes from step to step (a drift), the least squares are
        // ill-posed and would jump arbitrarily far along the drift; no jump goes further than
        // a bounded number of plain steps.
        let length = weighted_dot(&self.extrapolation, &self.extrapolation, weights).sqrt();
        let limit = MAX_EXTRAPOLATION * weighted_dot(f, f, weights).sqrt();
        let scale = if length > limit { limit / length } else { 1.0 };
        out.iter_mut()
            .zip(&self.extrapolation)
            .for_each(|(o, e)| *o -= scale * e);
    }
}
