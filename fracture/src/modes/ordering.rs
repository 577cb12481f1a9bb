//! Fill-reducing orderings for sparse Cholesky: geometric nested dissection.
//!
//! The matrices factored here (a tet mesh's Laplacian, the graph Laplacian of its face
//! adjacency) come with a position per unknown, so the separators are found geometrically: split
//! the unknowns at the median along an axis, take as separator the unknowns of the lower half
//! with a neighbour in the upper half, order each half recursively and the separator last
//! (George 1973; Miller, Teng, Thurston and Vavasis 1998 for the geometric form). Of the three
//! axes, the split with the smallest separator is taken: the longest side of the box, the only
//! one tried before, is not always the thinnest cut of a curved shape (spot's face Laplacian at
//! 22,424 tets: 1.83 million entries in the factor with the longest side, 1.62 million with the
//! best of three, for three times the splitting work, which is small beside the factorization).
//! On a 3D mesh of `n` unknowns this leaves O(n^(4/3)) fill and O(n^2) work, against O(n^(5/3))
//! and O(n^(7/3)) for a banded (reverse Cuthill-McKee) profile. A graph-only ordering
//! (approximate minimum degree) was not needed: every caller has positions.
//!
//! Ties at the median are broken by index, so the ordering is a pure function of its input.

use glam::DVec3;

use super::sparse::SymmetricMatrix;

/// Unknowns at most this many are ordered as they come (their fill is at most a dense block
/// of this size).
const LEAF: usize = 16;

/// A permutation `order` (new position to old unknown) of `matrix`'s unknowns, whose positions
/// are `points`, that keeps the Cholesky factor sparse.
///
/// # Panics
/// When `points` does not hold one position per unknown.
pub fn nested_dissection(matrix: &SymmetricMatrix, points: &[DVec3]) -> Vec<u32> {
    assert_eq!(points.len(), matrix.size(), "one position per unknown");
    let mut nodes: Vec<u32> = (0..matrix.size() as u32).collect();
    let mut order = Vec::with_capacity(nodes.len());
    let mut stamp = vec![0u32; matrix.size()];
    let mut next_stamp = 0;
    dissect(matrix, points, &mut nodes, &mut stamp, &mut next_stamp, &mut order);
    order
}

fn dissect(
    matrix: &SymmetricMatrix,
    points: &[DVec3],
    nodes: &mut [u32],
    stamp: &mut [u32],
    next_stamp: &mut u32,
    order: &mut Vec<u32>,
) {
    if nodes.len() <= LEAF {
        order.extend_from_slice(nodes);
        return;
    }
    // Of the three axis-aligned median splits, the one with the smallest separator (ties to
    // the longest side of the box, then x, y, z).
    let (low, high) = nodes
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &n| {
            (lo.min(points[n as usize]), hi.max(points[n as usize]))
        });
    let extent = high - low;
    let longest = if extent.x >= extent.y && extent.x >= extent.z {
        0
    } else if extent.y >= extent.z {
        1
    } else {
        2
    };
    let half = nodes.len() / 2;
    let split = |nodes: &mut [u32], axis: usize, stamp: &mut [u32], next_stamp: &mut u32| -> (u32, usize) {
        nodes.select_nth_unstable_by(half, |&a, &b| {
            points[a as usize][axis]
                .total_cmp(&points[b as usize][axis])
                .then(a.cmp(&b))
        });
        *next_stamp += 1;
        let upper = *next_stamp;
        for &n in &nodes[half..] {
            stamp[n as usize] = upper;
        }
        let separator = nodes[..half]
            .iter()
            .filter(|&&n| matrix.row(n as usize).0.iter().any(|&c| stamp[c as usize] == upper))
            .count();
        (upper, separator)
    };
    // The longest side first, so it wins ties; the stamps of the last split tried stay valid
    // when it is the one kept.
    let mut best: Option<(usize, usize)> = None;
    let mut last = (longest, 0);
    for axis in std::iter::once(longest).chain((0..3).filter(|&a| a != longest)) {
        let (upper, size) = split(nodes, axis, stamp, next_stamp);
        if best.is_none_or(|(smallest, _)| size < smallest) {
            best = Some((size, axis));
        }
        last = (axis, upper);
    }
    let axis = best.map_or(longest, |(_, axis)| axis);
    let upper = if axis == last.0 {
        last.1
    } else {
        split(nodes, axis, stamp, next_stamp).0
    };
    // Lower half: interior first, separator (a neighbour above the split) last.
    let (lower, rest) = nodes.split_at_mut(half);
    lower.sort_unstable_by_key(|&n| {
        let (columns, _) = matrix.row(n as usize);
        let touches = columns.iter().any(|&c| stamp[c as usize] == upper);
        (touches, n)
    });
    let interior = lower
        .iter()
        .position(|&n| matrix.row(n as usize).0.iter().any(|&c| stamp[c as usize] == upper))
        .unwrap_or(lower.len());
    let (inside, separator) = lower.split_at_mut(interior);
    rest.sort_unstable();
    dissect(matrix, points, inside, stamp, next_stamp, order);
    dissect(matrix, points, rest, stamp, next_stamp, order);
    order.extend_from_slice(separator);
}
