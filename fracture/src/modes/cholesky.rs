//! Sparse Cholesky factorization `P A P^T = L L^T` of a symmetric positive definite matrix, for
//! the solves the fracture-modes method repeats many times against one matrix: the Laplacian
//! shifted for the eigenvector guesses, the face-jump normal equations of the convex subproblem,
//! and the implicit blur of the runtime projection.
//!
//! Up-looking (row by row) factorization as in Davis, "Direct Methods for Sparse Linear Systems"
//! (2006), chapter 4: the elimination tree gives each row's pattern as the union of tree paths
//! (the row subtree), a first pass counts the entries of each column, a second computes them by a
//! sparse triangular solve per row. No supernodes: the matrices here have a few thousand to a few
//! hundred thousand unknowns, for which a nested-dissection ordering keeps the factor within a few
//! million entries. Every sum runs in a fixed order, so the factor is bit-identical run to run.

use super::sparse::SymmetricMatrix;

/// Why a matrix could not be factored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NotPositiveDefinite {
    /// The unknown (in the caller's numbering) whose pivot was not positive.
    pub unknown: usize,
    /// The pivot found there.
    pub pivot: f64,
}

/// The factor `L` of `P A P^T`, with the permutation.
#[derive(Clone, Debug)]
pub struct Cholesky {
    /// `order[new] = old`.
    order: Vec<u32>,
    /// Column starts of `L` (strictly below the diagonal).
    starts: Vec<usize>,
    rows: Vec<u32>,
    values: Vec<f64>,
    diagonal: Vec<f64>,
}

const NONE: u32 = u32::MAX;

impl Cholesky {
    /// Factors `matrix` in the order `order` (new position to old unknown, a permutation).
    ///
    /// # Panics
    /// When `order` is not a permutation of the matrix's unknowns.
    pub fn factor(matrix: &SymmetricMatrix, order: Vec<u32>) -> Result<Self, NotPositiveDefinite> {
        let n = matrix.size();
        assert_eq!(order.len(), n, "the ordering covers every unknown");
        let mut position = vec![NONE; n];
        for (new, &old) in order.iter().enumerate() {
            assert_eq!(position[old as usize], NONE, "unknown {old} ordered twice");
            position[old as usize] = new as u32;
        }
        // Upper triangle of P A P^T by columns: column k holds rows i < k.
        let mut upper: Vec<Vec<(u32, f64)>> = vec![Vec::new(); n];
        let mut diagonal_of = vec![0.0; n];
        for (new, &old) in order.iter().enumerate() {
            let (columns, values) = matrix.row(old as usize);
            for (&c, &v) in columns.iter().zip(values) {
                let other = position[c as usize];
                if (other as usize) < new {
                    upper[new].push((other, v));
                } else if other as usize == new {
                    diagonal_of[new] += v;
                }
            }
        }
        let parent = elimination_tree(&upper);
        // Symbolic pass: entries per column of L.
        let mut mark = vec![NONE; n];
        let mut counts = vec![0usize; n];
        let mut pattern = Vec::new();
        for (k, column) in upper.iter().enumerate() {
            row_pattern(k, column, &parent, &mut mark, &mut pattern);
            for &j in &pattern {
                counts[j as usize] += 1;
            }
        }
        let mut starts = vec![0usize; n + 1];
        for j in 0..n {
            starts[j + 1] = starts[j] + counts[j];
        }
        let total = starts[n];
        let mut rows = vec![0u32; total];
        let mut values = vec![0.0; total];
        let mut filled = starts[..n].to_vec();
        let mut diagonal = vec![0.0; n];
        let mut work = vec![0.0; n];
        mark.fill(NONE);
        for k in 0..n {
            row_pattern(k, &upper[k], &parent, &mut mark, &mut pattern);
            for &(i, v) in &upper[k] {
                work[i as usize] = v;
            }
            let mut pivot = diagonal_of[k];
            // `pattern` is in topological order (every column before its ancestors), so each
            // l_kj is final when it is used.
            for &j in &pattern {
                let j = j as usize;
                let l_kj = work[j] / diagonal[j];
                work[j] = 0.0;
                for p in starts[j]..filled[j] {
                    work[rows[p] as usize] -= values[p] * l_kj;
                }
                pivot -= l_kj * l_kj;
                rows[filled[j]] = k as u32;
                values[filled[j]] = l_kj;
                filled[j] += 1;
            }
            if !(pivot > 0.0) {
                return Err(NotPositiveDefinite {
                    unknown: order[k] as usize,
                    pivot,
                });
            }
            diagonal[k] = pivot.sqrt();
        }
        Ok(Self {
            order,
            starts,
            rows,
            values,
            diagonal,
        })
    }

    /// Unknowns.
    pub fn size(&self) -> usize {
        self.diagonal.len()
    }

    /// Entries of `L` below the diagonal: the factor's memory is about 12 bytes each.
    pub fn fill(&self) -> usize {
        self.values.len()
    }

    /// Solves `A x = b` in place (`b` in, `x` out), with `work` of the matrix's size.
    pub fn solve_in_place(&self, b: &mut [f64], work: &mut [f64]) {
        let n = self.size();
        for (new, &old) in self.order.iter().enumerate() {
            work[new] = b[old as usize];
        }
        // L y = P b, by columns.
        for j in 0..n {
            let y = work[j] / self.diagonal[j];
            work[j] = y;
            for p in self.starts[j]..self.starts[j + 1] {
                work[self.rows[p] as usize] -= self.values[p] * y;
            }
        }
        // L^T z = y, by columns of L (rows of L^T).
        for j in (0..n).rev() {
            let mut sum = work[j];
            for p in self.starts[j]..self.starts[j + 1] {
                sum -= self.values[p] * work[self.rows[p] as usize];
            }
            work[j] = sum / self.diagonal[j];
        }
        for (new, &old) in self.order.iter().enumerate() {
            b[old as usize] = work[new];
        }
    }
}

/// The elimination tree of the matrix whose strict upper triangle by columns is `upper`
/// (Liu 1986, with path compression through `ancestor`).
fn elimination_tree(upper: &[Vec<(u32, f64)>]) -> Vec<u32> {
    let n = upper.len();
    let mut parent = vec![NONE; n];
    let mut ancestor = vec![NONE; n];
    for (k, column) in upper.iter().enumerate() {
        for &(i, _) in column {
            let mut i = i;
            while i != NONE && (i as usize) < k {
                let next = ancestor[i as usize];
                ancestor[i as usize] = k as u32;
                if next == NONE {
                    parent[i as usize] = k as u32;
                }
                i = next;
            }
        }
    }
    parent
}

/// The columns `j < k` of row `k` of `L`, in topological order: the union of the tree paths
/// from each `i` of column `k` up to `k`.
fn row_pattern(k: usize, column: &[(u32, f64)], parent: &[u32], mark: &mut [u32], out: &mut Vec<u32>) {
    out.clear();
    mark[k] = k as u32;
    let mut stack: Vec<u32> = Vec::new();
    for &(i, _) in column {
        let mut i = i;
        stack.clear();
        while mark[i as usize] != k as u32 {
            stack.push(i);
            mark[i as usize] = k as u32;
            i = parent[i as usize];
        }
        // Each path is pushed bottom up; paths found later end where earlier ones began, so
        // reversing the whole list at the end puts ancestors after descendants.
        out.extend(stack.iter().rev());
    }
    out.reverse();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::ordering::nested_dissection;
    use glam::DVec3;

    /// The graph Laplacian of an `n x n x n` grid plus `shift` on the diagonal.
    fn grid_laplacian(n: usize, shift: f64) -> (SymmetricMatrix, Vec<DVec3>) {
        let index = |x: usize, y: usize, z: usize| (x + n * (y + n * z)) as u32;
        let mut triplets = Vec::new();
        let mut points = Vec::new();
        for z in 0..n {
            for y in 0..n {
                for x in 0..n {
                    points.push(DVec3::new(x as f64, y as f64, z as f64));
                    let here = index(x, y, z);
                    let mut degree = 0.0;
                    for (dx, dy, dz) in [(1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                        if x + dx < n && y + dy < n && z + dz < n {
                            triplets.push((index(x + dx, y + dy, z + dz), here, -1.0));
                        }
                    }
                    for (dx, dy, dz) in [(1i64, 0i64, 0i64), (0, 1, 0), (0, 0, 1)] {
                        for s in [-1i64, 1] {
                            let (a, b, c) = (x as i64 + s * dx, y as i64 + s * dy, z as i64 + s * dz);
                            if (0..n as i64).contains(&a) && (0..n as i64).contains(&b) && (0..n as i64).contains(&c) {
                                degree += 1.0;
                            }
                        }
                    }
                    triplets.push((here, here, degree + shift * (1.0 + (x % 3) as f64)));
                }
            }
        }
        (SymmetricMatrix::from_lower_triplets(n * n * n, &triplets), points)
    }

    #[test]
    fn modes_cholesky_solves_a_grid_laplacian_to_round_off() {
        let (matrix, points) = grid_laplacian(14, 1e-3);
        let order = nested_dissection(&matrix, &points);
        let factor = Cholesky::factor(&matrix, order).unwrap();
        let expected: Vec<f64> = (0..matrix.size())
            .map(|i| ((i * 37) % 101) as f64 / 50.0 - 1.0)
            .collect();
        let mut b = vec![0.0; matrix.size()];
        matrix.multiply(&expected, &mut b);
        let mut x = b.clone();
        factor.solve_in_place(&mut x, &mut vec![0.0; matrix.size()]);
        let error = x.iter().zip(&expected).map(|(a, e)| (a - e).abs()).fold(0.0, f64::max);
        // Condition number about 12 / 1e-3: a backward-stable solve loses about 4 digits.
        assert!(error < 1e-9, "max error {error}");
        // Nested dissection keeps the fill far below the dense n^2 / 2 (about 3.8 million).
        assert!(factor.fill() < 400_000, "fill {}", factor.fill());
        let natural = Cholesky::factor(&matrix, (0..matrix.size() as u32).collect()).unwrap();
        assert!(
            factor.fill() < natural.fill(),
            "{} vs banded {}",
            factor.fill(),
            natural.fill()
        );
    }

    #[test]
    fn modes_cholesky_names_a_matrix_that_is_not_positive_definite() {
        let matrix = SymmetricMatrix::from_lower_triplets(2, &[(0, 0, 1.0), (1, 0, 2.0), (1, 1, 1.0)]);
        let error = Cholesky::factor(&matrix, vec![0, 1]).unwrap_err();
        assert_eq!(error.unknown, 1);
        assert!(error.pivot < 0.0);
    }
}
