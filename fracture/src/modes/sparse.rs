//! Symmetric sparse matrices in compressed rows (which, for a symmetric matrix, are also its
//! compressed columns), assembled from triplets.
//!
//! Assembly sorts the triplets by (row, column) and sums duplicates in that order, so the stored
//! values are a pure function of the triplet list, whatever the thread count.

/// A square symmetric matrix with both triangles stored, rows sorted by column.
#[derive(Clone, Debug, PartialEq)]
pub struct SymmetricMatrix {
    size: usize,
    row_starts: Vec<usize>,
    columns: Vec<u32>,
    values: Vec<f64>,
}

impl SymmetricMatrix {
    /// The matrix `sum (row, column, value)` of `size x size`, each off-diagonal triplet given once
    /// for the pair (it is mirrored here); diagonal triplets are added once.
    ///
    /// # Panics
    /// On an index out of range (a programmer error: callers build indices from their meshes).
    pub fn from_lower_triplets(size: usize, triplets: &[(u32, u32, f64)]) -> Self {
        let mut all: Vec<(u32, u32, f64)> = Vec::with_capacity(2 * triplets.len());
        for &(i, j, v) in triplets {
            assert!(
                (i as usize) < size && (j as usize) < size,
                "triplet ({i}, {j}) outside {size}"
            );
            all.push((i, j, v));
            if i != j {
                all.push((j, i, v));
            }
        }
        all.sort_by_key(|&(i, j, _)| (i, j));
        let mut row_starts = vec![0; size + 1];
        let mut columns = Vec::with_capacity(all.len());
        let mut values: Vec<f64> = Vec::with_capacity(all.len());
        let mut last: Option<(u32, u32)> = None;
        for (i, j, v) in all {
            if last == Some((i, j)) {
                *values.last_mut().expect("a previous entry") += v;
            } else {
                columns.push(j);
                values.push(v);
                row_starts[i as usize + 1] += 1;
                last = Some((i, j));
            }
        }
        for r in 0..size {
            row_starts[r + 1] += row_starts[r];
        }
        Self {
            size,
            row_starts,
            columns,
            values,
        }
    }

    /// Rows (and columns).
    pub fn size(&self) -> usize {
        self.size
    }

    /// The columns and values of row `row`, by increasing column.
    pub fn row(&self, row: usize) -> (&[u32], &[f64]) {
        let range = self.row_starts[row]..self.row_starts[row + 1];
        (&self.columns[range.clone()], &self.values[range])
    }

    /// `out = self * x`.
    pub fn multiply(&self, x: &[f64], out: &mut [f64]) {
        for (row, slot) in out.iter_mut().enumerate() {
            let (columns, values) = self.row(row);
            *slot = columns.iter().zip(values).map(|(&c, v)| v * x[c as usize]).sum();
        }
    }

    /// The same matrix plus `shift * diagonal` (`diagonal` one value per row; every row must
    /// already store its diagonal entry).
    ///
    /// # Panics
    /// When a row has no stored diagonal entry.
    pub fn plus_diagonal(&self, shift: f64, diagonal: &[f64]) -> Self {
        let mut out = self.clone();
        for (row, &d) in diagonal.iter().enumerate() {
            let range = out.row_starts[row]..out.row_starts[row + 1];
            let at = out.columns[range.clone()]
                .binary_search(&(row as u32))
                .unwrap_or_else(|_| panic!("row {row} stores no diagonal entry"));
            out.values[range.start + at] += shift * d;
        }
        out
    }

    /// The same matrix times `factor`.
    pub fn scaled(&self, factor: f64) -> Self {
        let mut out = self.clone();
        out.values.iter_mut().for_each(|v| *v *= factor);
        out
    }

    /// The diagonal entries.
    pub fn diagonal(&self) -> Vec<f64> {
        (0..self.size)
            .map(|row| {
                let (columns, values) = self.row(row);
                columns.binary_search(&(row as u32)).map_or(0.0, |at| values[at])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_sparse_assembly_sums_duplicates_and_mirrors() {
        let m = SymmetricMatrix::from_lower_triplets(
            3,
            &[(0, 0, 2.0), (1, 0, -1.0), (1, 0, -0.5), (2, 2, 1.0), (1, 1, 3.0)],
        );
        let mut out = vec![0.0; 3];
        m.multiply(&[1.0, 2.0, 3.0], &mut out);
        assert_eq!(out, vec![2.0 - 3.0, -1.5 + 6.0, 3.0]);
        assert_eq!(m.values.len(), 5);
        assert_eq!(m.diagonal(), vec![2.0, 3.0, 1.0]);
    }
}
