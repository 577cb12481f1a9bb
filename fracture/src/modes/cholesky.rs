//! Sparse Cholesky factorization `P A P^T = L L^T` of a symmetric positive definite matrix, for
//! the solves the fracture-modes method repeats many times against one matrix: the Laplacian
//! shifted for the eigenvector guesses, the face-jump normal equations of the convex subproblem,
//! and the implicit blur of the runtime projection.
//!
//! Up-looking (row by row) factorization as in Davis, "Direct Methods for Sparse Linear Systems"
//! (2006), chapter 4: the elimination tree gives each row's pattern as the union of tree paths
//! (the row subtree), a first pass counts the entries of each column, a second computes them by a
//! sparse triangular solve per row. The factorization runs once per matrix and has no
//! supernodes: the matrices here have a few thousand to a few hundred thousand unknowns, for
//! which a nested-dissection ordering keeps the factor within a few million entries. The solves,
//! repeated hundreds of times, take its runs of columns with one row pattern as dense blocks
//! ([`solve`]). Every sum runs in a fixed order, so the factor and the solves are bit-identical
//! run to run.
//!
//! The factorization and the solves (repeated hundreds of times per mode) run on two threads
//! where the elimination tree allows: nested dissection leaves two subtrees under the top
//! separator whose columns touch only their own rows and the separator's, so the matrix is
//! renumbered to make each a contiguous range (another topological order of the same tree, so
//! the same fill), their rows are factored side by side and then the separator's, and both
//! triangular solves take the two side by side ([`Split`]). Measured on spot, two threads, the
//! first two scalar modes: at 10,937 tets (646k entries) 0.39 s to 0.33 s with the split solves;
//! at 22,424 tets the face Laplacian's factorization 0.23 s to 0.155 s with the split
//! factorization. The solves by supernodes ([`solve`]) took one solve there from 8.0-8.9 ms to
//! 4.5-5.4 ms on two threads (on a machine where the whole modes bench ran about 3.5 times
//! slower than on the one the figures before were measured on).

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
    /// Two independent subtrees of the elimination tree for the solves to run side by side
    /// (see [`Split`]), when the ordering has them.
    split: Option<Split>,
    /// Runs of columns with one row pattern, which the solves take as dense blocks.
    supernodes: Supernodes,
}

/// The top of a nested-dissection elimination tree: the columns `0..a` and `a..b` are two
/// unions of whole subtrees, so neither has an entry in the other's rows, and `b..n` is the
/// separator above both. A column before `b` has its rows in its own part first (they are
/// sorted), then in the separator.
#[derive(Clone, Debug)]
struct Split {
    a: usize,
    b: usize,
}

const NONE: u32 = u32::MAX;

mod solve;
use solve::Supernodes;

impl Cholesky {
    /// Factors `matrix` in the order `order` (new position to old unknown, a permutation).
    ///
    /// # Panics
    /// When `order` is not a permutation of the matrix's unknowns.
    pub fn factor(matrix: &SymmetricMatrix, order: Vec<u32>) -> Result<Self, NotPositiveDefinite> {
        let n = matrix.size();
        assert_eq!(order.len(), n, "the ordering covers every unknown");
        let mut order = order;
        let mut symbolic = Symbolic::of(matrix, &order);
        // Renumbered so that two independent subtrees are contiguous, when the tree has them:
        // the same factor, whose two parts are then factored and solved side by side.
        let plan = Split::plan(&symbolic.parent, &symbolic.counts);
        if let Some((renumbered, _, _)) = &plan {
            order = renumbered.iter().map(|&old| order[old as usize]).collect();
            symbolic = symbolic.renumbered(renumbered);
        }
        let Symbolic {
            upper,
            diagonal_of,
            parent,
            counts,
        } = symbolic;
        let mut starts = vec![0usize; n + 1];
        for j in 0..n {
            starts[j + 1] = starts[j] + counts[j];
        }
        let total = starts[n];
        let mut rows = vec![0u32; total];
        let mut values = vec![0.0; total];
        let mut filled = starts[..n].to_vec();
        let mut diagonal = vec![0.0; n];
        let numeric = Numeric {
            upper: &upper,
            diagonal_of: &diagonal_of,
            parent: &parent,
            starts: &starts,
        };
        let (a, b) = plan.as_ref().map_or((0, 0), |&(_, a, b)| (a, b));
        let failed = |(k, pivot): (usize, f64)| NotPositiveDefinite {
            unknown: order[k] as usize,
            pivot,
        };
        {
            // The two parts' rows only reach their own columns.
            let (rows_first, rows_rest) = rows.split_at_mut(starts[a]);
            let (values_first, values_rest) = values.split_at_mut(starts[a]);
            let (filled_first, filled_rest) = filled.split_at_mut(a);
            let (diagonal_first, diagonal_rest) = diagonal.split_at_mut(a);
            let second = starts[b] - starts[a];
            let (first, second) = rayon::join(
                || {
                    let columns = Columns {
                        first: 0,
                        rows: rows_first,
                        values: values_first,
                        filled: filled_first,
                        diagonal: diagonal_first,
                    };
                    numeric.rows(0..a, columns)
                },
                || {
                    let columns = Columns {
                        first: a,
                        rows: &mut rows_rest[..second],
                        values: &mut values_rest[..second],
                        filled: &mut filled_rest[..b - a],
                        diagonal: &mut diagonal_rest[..b - a],
                    };
                    numeric.rows(a..b, columns)
                },
            );
            first.and(second).map_err(failed)?;
        }
        let columns = Columns {
            first: 0,
            rows: &mut rows,
            values: &mut values,
            filled: &mut filled,
            diagonal: &mut diagonal,
        };
        numeric.rows(b..n, columns).map_err(failed)?;
        let split = plan.map(|(_, a, b)| Split { a, b });
        let supernodes = Supernodes::of(&parent, &starts, split.as_ref().map(|s| [s.a, s.b]));
        Ok(Self {
            order,
            starts,
            rows,
            values,
            diagonal,
            split,
            supernodes,
        })
    }

    /// The length `solve_in_place` needs of its `work` slice: the matrix's size, plus twice the
    /// separator's when the solves run in two parts (each part's sums into it), plus a buffer
    /// of the longest supernode's rows for each part.
    pub fn work_len(&self) -> usize {
        let n = self.size();
        let rows = self.supernodes.longest_rows;
        n + self.split.as_ref().map_or(rows, |s| 2 * (n - s.b) + 2 * rows)
    }

    /// Unknowns.
    pub fn size(&self) -> usize {
        self.diagonal.len()
    }

    /// Entries of `L` below the diagonal: the factor's memory is about 12 bytes each.
    pub fn fill(&self) -> usize {
        self.values.len()
    }
}

impl Split {
    /// Parts worth running side by side: neither under this share of the factor's entries.
    const SMALLEST_SHARE: f64 = 0.2;

    /// A renumbering (new position to old column) of the factor whose elimination tree is
    /// `parent` and whose columns hold `counts` entries below the diagonal, with the ends `a`
    /// and `b` of its two parts; `None` when the tree has no such top or its parts are too
    /// unequal to gain.
    ///
    /// The separator is the chain of single-child nodes from the root down to the first node
    /// with two or more children (that node included); that node's child subtrees are dealt
    /// into two parts of about equal entries, largest first. Every node is in one of them or in
    /// the chain. The new numbering keeps each class in its old order, parts first: a column's
    /// rows are its ancestors, in its own part or the separator, so the factor of the matrix so
    /// renumbered has the same entries (the order is another topological order of the same
    /// tree), its rows still sorted, and neither part's rows reach the other part's columns, in
    /// the factorization or in the solves.
    fn plan(parent: &[u32], counts: &[usize]) -> Option<(Vec<u32>, usize, usize)> {
        let n = parent.len();
        if n < 2 {
            return None;
        }
        let parent_of = |j: usize| (parent[j] != NONE).then(|| parent[j] as usize);
        let mut children = vec![0u32; n];
        let mut a_child = vec![NONE; n];
        let mut entries: Vec<usize> = counts.iter().map(|c| c + 1).collect();
        for j in 0..n {
            if let Some(p) = parent_of(j) {
                children[p] += 1;
                a_child[p] = j as u32;
                entries[p] += entries[j];
            }
        }
        // Down the chain from the root (a tree, not a forest: the root holds every entry).
        let total: usize = counts.iter().sum::<usize>() + n;
        let mut top = n - 1;
        if parent_of(top).is_some() || entries[top] != total {
            return None;
        }
        while children[top] == 1 {
            // The only child.
            top = a_child[top] as usize;
        }
        if children[top] < 2 {
            return None;
        }
        // Deal the top's subtrees into two parts, largest first, each to the lighter part.
        const SEPARATOR: u8 = 2;
        let mut part = vec![SEPARATOR; n];
        let mut subtrees: Vec<usize> = (0..top).filter(|&j| parent_of(j) == Some(top)).collect();
        subtrees.sort_by_key(|&c| (std::cmp::Reverse(entries[c]), c));
        let mut load = [0usize; 2];
        for &c in &subtrees {
            let lighter = usize::from(load[1] < load[0]);
            load[lighter] += entries[c];
            part[c] = lighter as u8;
        }
        if (load[0].min(load[1]) as f64) < Self::SMALLEST_SHARE * total as f64 {
            return None;
        }
        // Every other node below the top takes its parent's part (parents come later).
        for j in (0..top).rev() {
            if part[j] == SEPARATOR {
                part[j] = part[parent_of(j)?];
            }
        }
        let part = &part;
        let renumbered: Vec<u32> = [0, 1, SEPARATOR]
            .iter()
            .flat_map(|&p| (0..n as u32).filter(move |&j| part[j as usize] == p))
            .collect();
        let a = part.iter().filter(|&&p| p == 0).count();
        let b = a + part.iter().filter(|&&p| p == 1).count();
        Some((renumbered, a, b))
    }
}

/// The symbolic analysis of `P A P^T`: its strict upper triangle by columns (column `k` holds
/// rows `i < k`), its diagonal, its elimination tree and the entries per column of `L`.
struct Symbolic {
    upper: Vec<Vec<(u32, f64)>>,
    diagonal_of: Vec<f64>,
    parent: Vec<u32>,
    counts: Vec<usize>,
}

impl Symbolic {
    /// The analysis of `matrix` in `order` (new position to old unknown).
    ///
    /// # Panics
    /// When `order` is not a permutation of the matrix's unknowns.
    fn of(matrix: &SymmetricMatrix, order: &[u32]) -> Self {
        let n = matrix.size();
        let mut position = vec![NONE; n];
        for (new, &old) in order.iter().enumerate() {
            assert_eq!(position[old as usize], NONE, "unknown {old} ordered twice");
            position[old as usize] = new as u32;
        }
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
        let mut mark = vec![NONE; n];
        let mut counts = vec![0usize; n];
        let mut pattern = Vec::new();
        for (k, column) in upper.iter().enumerate() {
            row_pattern(k, column, &parent, &mut mark, &mut pattern);
            for &j in &pattern {
                counts[j as usize] += 1;
            }
        }
        Self {
            upper,
            diagonal_of,
            parent,
            counts,
        }
    }
}

impl Symbolic {
    /// The same analysis in the numbering `renumbered` (new position to old), a topological order
    /// of the elimination tree ([`Split::plan`]'s): every entry `(i, k)` of the upper triangle
    /// has `k` an ancestor of `i`, so it stays above the diagonal, and the tree and its column
    /// counts carry over node by node (the fill does not change).
    fn renumbered(self, renumbered: &[u32]) -> Self {
        let mut new_of = vec![0u32; renumbered.len()];
        for (new, &old) in renumbered.iter().enumerate() {
            new_of[old as usize] = new as u32;
        }
        let mut upper = self.upper;
        let upper = renumbered
            .iter()
            .map(|&old| {
                let mut column = std::mem::take(&mut upper[old as usize]);
                column.iter_mut().for_each(|(i, _)| *i = new_of[*i as usize]);
                debug_assert!(column.iter().all(|&(i, _)| i < new_of[old as usize]));
                column
            })
            .collect();
        let parent = renumbered
            .iter()
            .map(|&old| match self.parent[old as usize] {
                NONE => NONE,
                p => new_of[p as usize],
            })
            .collect();
        Self {
            upper,
            diagonal_of: renumbered.iter().map(|&old| self.diagonal_of[old as usize]).collect(),
            parent,
            counts: renumbered.iter().map(|&old| self.counts[old as usize]).collect(),
        }
    }
}

/// What the numeric factorization reads.
struct Numeric<'a> {
    upper: &'a [Vec<(u32, f64)>],
    diagonal_of: &'a [f64],
    parent: &'a [u32],
    starts: &'a [usize],
}

/// The columns `first..` of `L` a range of rows writes: their entries (from `starts[first]`),
/// fill counters and diagonal.
struct Columns<'a> {
    first: usize,
    rows: &'a mut [u32],
    values: &'a mut [f64],
    filled: &'a mut [usize],
    diagonal: &'a mut [f64],
}

impl Numeric<'_> {
    /// Computes rows `range` of `L` (up-looking: row `k` by a sparse triangular solve with the
    /// columns before it), whose columns all lie in `out`. Fails with the row and pivot of the
    /// first pivot that is not positive.
    fn rows(&self, range: std::ops::Range<usize>, out: Columns<'_>) -> Result<(), (usize, f64)> {
        let n = self.parent.len();
        let (column, entry) = (out.first, self.starts[out.first]);
        let mut work = vec![0.0; n];
        let mut mark = vec![NONE; n];
        let mut pattern = Vec::new();
        for k in range {
            row_pattern(k, &self.upper[k], self.parent, &mut mark, &mut pattern);
            for &(i, v) in &self.upper[k] {
                work[i as usize] = v;
            }
            let mut pivot = self.diagonal_of[k];
            // `pattern` is in topological order (every column before its ancestors), so each
            // l_kj is final when it is used.
            for &j in &pattern {
                let j = j as usize;
                let l_kj = work[j] / out.diagonal[j - column];
                work[j] = 0.0;
                for p in self.starts[j] - entry..out.filled[j - column] - entry {
                    work[out.rows[p] as usize] -= out.values[p] * l_kj;
                }
                pivot -= l_kj * l_kj;
                let at = out.filled[j - column] - entry;
                out.rows[at] = k as u32;
                out.values[at] = l_kj;
                out.filled[j - column] += 1;
            }
            if !(pivot > 0.0) {
                return Err((k, pivot));
            }
            out.diagonal[k - column] = pivot.sqrt();
        }
        Ok(())
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
        factor.solve_in_place(&mut x, &mut vec![0.0; factor.work_len()]);
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

    /// A nested-dissection factor splits in two parts factored and solved side by side: the
    /// factor and the solves have the same bits on one thread as on two, the split solve gives
    /// the one-part solve's answer to round-off, and a natural (banded) order, whose tree is one
    /// chain, does not split.
    #[test]
    fn modes_cholesky_split_solve_matches_the_sequential_solve() {
        let (matrix, points) = grid_laplacian(12, 1e-2);
        let order = nested_dissection(&matrix, &points);
        let factored = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| Cholesky::factor(&matrix, order.clone()).unwrap())
        };
        let (factor, on_two) = (factored(1), factored(2));
        // The parts are factored side by side: the same entries on any thread count.
        assert_eq!(factor.order, on_two.order);
        assert_eq!(factor.rows, on_two.rows);
        let bits = |f: &Cholesky| {
            f.values
                .iter()
                .chain(&f.diagonal)
                .map(|x| x.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&factor), bits(&on_two));
        let split = factor.split.as_ref().expect("nested dissection has a top separator");
        assert!(split.a > 0 && split.a < split.b && split.b < matrix.size());
        // The parts' columns have no rows in the other part.
        for j in 0..split.b {
            let part = if j < split.a { 0..split.a } else { split.a..split.b };
            for p in factor.starts[j]..factor.starts[j + 1] {
                let r = factor.rows[p] as usize;
                assert!(part.contains(&r) || r >= split.b, "column {j} has row {r}");
            }
        }
        let natural = Cholesky::factor(&matrix, (0..matrix.size() as u32).collect()).unwrap();
        assert!(natural.split.is_none());
        let whole = Cholesky {
            split: None,
            ..factor.clone()
        };
        let rhs: Vec<f64> = (0..matrix.size())
            .map(|i| ((i * 53) % 97) as f64 / 48.0 - 1.0)
            .collect();
        let solve = |factor: &Cholesky, threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut x = rhs.clone();
            pool.install(|| factor.solve_in_place(&mut x, &mut vec![0.0; factor.work_len()]));
            x
        };
        let (one, two, reference) = (solve(&factor, 1), solve(&factor, 2), solve(&whole, 1));
        assert_eq!(
            one.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            two.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        let scale = reference.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let difference = one
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(difference <= 1e-12 * scale, "split {difference} of {scale}");
    }

    /// Every supernode's columns hold the rows the solves assume: column `c` of a supernode
    /// ending at column `last` has the rows `c + 1 ..= last` and then exactly the rows of
    /// `last`; supernodes start at both ends of the split's parts; and on a 3D grid of 1728
    /// unknowns more than 60 % of the factor lies in supernodes of more than one column (69 %
    /// measured; 90 % on spot's face Laplacian at 22,424 tets).
    #[test]
    fn modes_cholesky_supernodes_share_their_rows() {
        let (matrix, points) = grid_laplacian(12, 1e-2);
        let factor = Cholesky::factor(&matrix, nested_dissection(&matrix, &points)).unwrap();
        let firsts = &factor.supernodes.firsts;
        assert_eq!(*firsts.last().unwrap() as usize, matrix.size());
        let split = factor.split.as_ref().unwrap();
        assert!(firsts.contains(&(split.a as u32)) && firsts.contains(&(split.b as u32)));
        let column = |j: usize| &factor.rows[factor.starts[j]..factor.starts[j + 1]];
        let mut in_wide = 0;
        for w in firsts.windows(2) {
            let (first, last) = (w[0] as usize, w[1] as usize - 1);
            for c in first..=last {
                let expected: Vec<u32> = (c as u32 + 1..=last as u32)
                    .chain(column(last).iter().copied())
                    .collect();
                assert_eq!(
                    column(c),
                    expected.as_slice(),
                    "column {c} of supernode {first}..={last}"
                );
                if last > first {
                    in_wide += column(c).len();
                }
            }
        }
        assert!(
            in_wide * 10 > factor.fill() * 6,
            "{in_wide} of {} entries in supernodes",
            factor.fill()
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
