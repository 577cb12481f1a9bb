//! Rounding a smooth guess to a cut: the best threshold ("sweep") cut of a Laplacian
//! eigenvector, the classical rounding of spectral partitioning (the Cheeger inequality's proof;
//! Hein and Buehler 2010 start their 1-Laplacian iteration the same way).
//!
//! A smooth eigenvector jumps a little across every face, so a subproblem started from it spends
//! most of its iterations driving thousands of small jumps to zero. Its best threshold cut is
//! already a two-piece field, near the piecewise-constant optimum the convexification converges
//! to: starting there, the first subproblem is as cheap as the later, warm-started ones.
//!
//! Of the `T - 1` thresholds between consecutive sorted values, the one minimizing
//! `w(cut) / sqrt(V_S (V - V_S) / V)` is taken: the jump energy of the indicator of the lower side
//! `S` over its mass norm once the mean is removed, the quotient the mode minimizes.

use super::problem::JumpProblem;

/// The indicator (1 on the lower side) of the best threshold cut of the scalar tet field
/// `values`, or `None` when every threshold cuts nothing (a field that is constant on every
/// connected part).
pub fn sweep_cut(problem: &JumpProblem, values: &[f64]) -> Option<Vec<f64>> {
    let n = problem.tets;
    // Faces of each tet, as (other tet, weight), in face order.
    let mut starts = vec![0usize; n + 1];
    for [a, b] in &problem.faces {
        starts[*a as usize + 1] += 1;
        starts[*b as usize + 1] += 1;
    }
    for t in 0..n {
        starts[t + 1] += starts[t];
    }
    let mut fill = starts.clone();
    let mut neighbours = vec![(0u32, 0.0); starts[n]];
    for ([a, b], w) in problem.faces.iter().zip(&problem.weights) {
        neighbours[fill[*a as usize]] = (*b, *w);
        fill[*a as usize] += 1;
        neighbours[fill[*b as usize]] = (*a, *w);
        fill[*b as usize] += 1;
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by(|&a, &b| values[a as usize].total_cmp(&values[b as usize]).then(a.cmp(&b)));
    let total: f64 = problem.masses.iter().sum();
    let mut inside = vec![false; n];
    let (mut cut, mut volume) = (0.0, 0.0);
    let mut best: Option<(f64, usize)> = None;
    for (rank, &t) in order[..n - 1].iter().enumerate() {
        let t = t as usize;
        inside[t] = true;
        volume += problem.masses[t];
        for &(other, w) in &neighbours[starts[t]..starts[t + 1]] {
            if inside[other as usize] { cut -= w } else { cut += w }
        }
        let spread = volume * (total - volume) / total;
        if cut > 0.0 && spread > 0.0 {
            let quotient = cut / spread.sqrt();
            if best.is_none_or(|(q, _)| quotient < q) {
                best = Some((quotient, rank));
            }
        }
    }
    let (_, rank) = best?;
    let mut indicator = vec![0.0; n];
    for &t in &order[..=rank] {
        indicator[t as usize] = 1.0;
    }
    Some(indicator)
}
