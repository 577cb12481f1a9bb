//! The face-by-face passes of the modes' ADMM ([`super::admm`]): the jumps `D u`, the sums
//! `D^T v`, and the two passes over the iteration's state `v`: the u step's right-hand side
//! `D^T W (z - y)` and the over-relaxed z and y steps.
//!
//! Each pass is written once over `D` components per face and compiled for the scalar (`D = 1`)
//! and vector (`D = 3`) problems, so the per-face loops unroll, and a scalar face's shrink is a
//! clamp, with no square root and no branch (which face is cut does not follow a pattern the
//! processor can predict). Measured on spot at 22,424 tets (43k faces, one thread): the z and y
//! steps took 11.4 ns per face with the component count known only at run time, 7.5 ns
//! compiled per count, 3.4 ns with the clamp.
//!
//! The jumps and the z and y steps run on the rayon pool in tasks of [`FACES_PER_TASK`] faces;
//! each task's partial sums are its own, added in task order, so the bits do not depend on the
//! thread count. The sums `D^T` scatter into the tets in face order on one thread: a gather
//! by tets on the pool gave the same bits but ran slower.

use rayon::prelude::*;

use super::problem::JumpProblem;

/// Faces one task takes in the face-by-face passes.
pub(crate) const FACES_PER_TASK: usize = 4096;

/// The factor `1 - threshold / ||v||` the block shrink keeps of a face's `v`, zero inside the
/// ball of radius `threshold`.
#[inline]
fn shrink_factor(v: &[f64], threshold: f64) -> f64 {
    // Most faces are uncut: their test needs no square root.
    let squared = v.iter().map(|x| x * x).sum::<f64>();
    if squared > threshold * threshold {
        1.0 - threshold / squared.sqrt()
    } else {
        0.0
    }
}

/// A face's state `v` split into its block shrink `z` and the rest `y = v - z` (the part in the
/// ball of radius `threshold`). A scalar face is clamped, with no square root and no branch.
#[inline]
fn split<const D: usize>(v: &[f64], threshold: f64) -> ([f64; D], [f64; D]) {
    let mut z = [0.0; D];
    let mut y = [0.0; D];
    if D == 1 {
        y[0] = v[0].clamp(-threshold, threshold);
        z[0] = v[0] - y[0];
    } else {
        let keep = shrink_factor(v, threshold);
        for k in 0..D {
            z[k] = keep * v[k];
            y[k] = v[k] - z[k];
        }
    }
    (z, y)
}

/// The larger of two numbers, neither NaN (one instruction, where `f64::max` also orders NaN).
#[inline]
fn larger(a: f64, b: f64) -> f64 {
    if a > b { a } else { b }
}

/// Calls `$pass::<D>` with `D` the problem's component count.
macro_rules! by_components {
    ($d:expr, $pass:ident ( $($argument:expr),* $(,)? )) => {
        match $d {
            1 => $pass::<1>($($argument),*),
            3 => $pass::<3>($($argument),*),
            d => unreachable!("{d} components per face"),
        }
    };
}

/// The state `v` split face by face into the kept jumps `z` (its block shrink with `threshold`)
/// and the rest `y = v - z`, as the iteration splits it.
pub(crate) fn split_state(problem: &JumpProblem, v: &[f64], threshold: f64) -> (Vec<f64>, Vec<f64>) {
    by_components!(problem.dimension.components(), split_fields(v, threshold))
}

fn split_fields<const D: usize>(v: &[f64], threshold: f64) -> (Vec<f64>, Vec<f64>) {
    let mut z = Vec::with_capacity(v.len());
    let mut y = Vec::with_capacity(v.len());
    for face in v.chunks_exact(D) {
        let (kept, rest) = split::<D>(face, threshold);
        z.extend_from_slice(&kept);
        y.extend_from_slice(&rest);
    }
    (z, y)
}

/// Adds the u step's right-hand side `D^T W (z - y)` of the state `v` (`z` its block shrink with
/// `threshold`, `y` the rest) into `out`, each face's `z - y` taken where it is added.
pub(crate) fn add_target_sums(problem: &JumpProblem, v: &[f64], threshold: f64, out: &mut [f64]) {
    by_components!(
        problem.dimension.components(),
        target_sums_pass(problem, v, threshold, out)
    )
}

fn target_sums_pass<const D: usize>(problem: &JumpProblem, v: &[f64], threshold: f64, out: &mut [f64]) {
    let faces = problem.faces.iter().zip(&problem.weights).zip(v.chunks_exact(D));
    for (([a, b], w), v) in faces {
        let (z, y) = split::<D>(v, threshold);
        let (a, b) = (*a as usize * D, *b as usize * D);
        for k in 0..D {
            let value = w * (z[k] - y[k]);
            out[a + k] += value;
            out[b + k] -= value;
        }
    }
}

/// The sums one over-relaxed z and y step returns, each over the faces with the face weights
/// `w_f` (the W metric).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct StepSums {
    /// `||D u - z'||^2`: the primal residual.
    pub primal: f64,
    /// `||z' - z||^2`: the dual residual over `rho`.
    pub dual: f64,
    /// `sum_f max(||D_f u||^2, ||z'_f||^2)`: the primal residual's scale.
    pub scale_primal: f64,
    /// `||y'||^2`: the dual residual's scale over `rho`.
    pub scale_dual: f64,
    /// `||v' - v||^2`: the squared length of the state's step.
    pub step: f64,
    /// `||(v' - v) - previous||^2`: how much the step changed since the one before.
    pub change: f64,
}

impl StepSums {
    fn add(self, other: Self) -> Self {
        Self {
            primal: self.primal + other.primal,
            dual: self.dual + other.dual,
            scale_primal: self.scale_primal + other.scale_primal,
            scale_dual: self.scale_dual + other.scale_dual,
            step: self.step + other.step,
            change: self.change + other.change,
        }
    }
}

/// The fields of one z and y step.
pub(crate) struct RelaxedStep<'a> {
    /// The state `v` the step starts from.
    pub state: &'a [f64],
    /// The jumps `D u` of the u step.
    pub jumps: &'a [f64],
    /// The state's step before this one.
    pub previous: &'a [f64],
    /// The over-relaxation `alpha`.
    pub relaxation: f64,
    /// The shrink threshold `1 / rho`.
    pub threshold: f64,
}

/// The over-relaxed z and y steps from the state `v` with `z = shrink(v)`, `y = v - z`: the next
/// state `fresh = alpha D u + (1 - alpha) z + y` and its step `fresh - v`, with their sums.
pub(crate) fn relaxed_step(
    problem: &JumpProblem,
    step: &RelaxedStep<'_>,
    fresh: &mut [f64],
    difference: &mut [f64],
) -> StepSums {
    by_components!(
        problem.dimension.components(),
        relaxed_pass(step, &problem.weights, fresh, difference)
    )
}

fn relaxed_pass<const D: usize>(
    step: &RelaxedStep<'_>,
    weights: &[f64],
    fresh: &mut [f64],
    difference: &mut [f64],
) -> StepSums {
    let chunk = FACES_PER_TASK * D;
    let (alpha, threshold) = (step.relaxation, step.threshold);
    let sums: Vec<StepSums> = fresh
        .par_chunks_mut(chunk)
        .zip(difference.par_chunks_mut(chunk))
        .zip(step.state.par_chunks(chunk).zip(step.jumps.par_chunks(chunk)))
        .zip(step.previous.par_chunks(chunk).zip(weights.par_chunks(FACES_PER_TASK)))
        .map(|(((fresh, difference), (v, du)), (previous, weights))| {
            let mut sums = StepSums::default();
            let faces = fresh
                .chunks_exact_mut(D)
                .zip(difference.chunks_exact_mut(D))
                .zip(v.chunks_exact(D).zip(du.chunks_exact(D)))
                .zip(previous.chunks_exact(D).zip(weights));
            for (((fresh, difference), (v, du)), (previous, &w)) in faces {
                let (z_old, y_old) = split::<D>(v, threshold);
                for k in 0..D {
                    fresh[k] = alpha * du[k] + (1.0 - alpha) * z_old[k] + y_old[k];
                }
                let (z, y) = split::<D>(fresh, threshold);
                let mut face = StepSums::default();
                for k in 0..D {
                    difference[k] = fresh[k] - v[k];
                    face.primal += (du[k] - z[k]) * (du[k] - z[k]);
                    face.dual += (z[k] - z_old[k]) * (z[k] - z_old[k]);
                    face.scale_primal += larger(du[k] * du[k], z[k] * z[k]);
                    face.scale_dual += y[k] * y[k];
                    face.step += difference[k] * difference[k];
                    face.change += (difference[k] - previous[k]) * (difference[k] - previous[k]);
                }
                sums.primal += w * face.primal;
                sums.dual += w * face.dual;
                sums.scale_primal += w * face.scale_primal;
                sums.scale_dual += w * face.scale_dual;
                sums.step += w * face.step;
                sums.change += w * face.change;
            }
            sums
        })
        .collect();
    sums.into_iter().fold(StepSums::default(), StepSums::add)
}

/// `out = D u`, the jumps of every face.
pub(crate) fn apply_d(problem: &JumpProblem, u: &[f64], out: &mut [f64]) {
    by_components!(problem.dimension.components(), jumps_pass(problem, u, out))
}

fn jumps_pass<const D: usize>(problem: &JumpProblem, u: &[f64], out: &mut [f64]) {
    out.par_chunks_mut(FACES_PER_TASK * D)
        .zip(problem.faces.par_chunks(FACES_PER_TASK))
        .for_each(|(out, faces)| {
            for (jump, [a, b]) in out.chunks_exact_mut(D).zip(faces) {
                let (a, b) = (*a as usize * D, *b as usize * D);
                for k in 0..D {
                    jump[k] = u[a + k] - u[b + k];
                }
            }
        });
}

/// `out = D^T v`.
pub(crate) fn apply_dt(problem: &JumpProblem, v: &[f64], out: &mut [f64]) {
    by_components!(problem.dimension.components(), sums_pass(problem, v, out))
}

fn sums_pass<const D: usize>(problem: &JumpProblem, v: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for ([a, b], v) in problem.faces.iter().zip(v.chunks_exact(D)) {
        let (a, b) = (*a as usize * D, *b as usize * D);
        for k in 0..D {
            out[a + k] += v[k];
            out[b + k] -= v[k];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::problem::Dimension;
    use crate::modes::scenes::dumbbell;

    /// A dumbbell's jump problem (more faces than one task takes) and a field of `d` components
    /// per face whose faces are spread inside and outside the ball of radius `threshold` (a
    /// quarter to two fifths of them outside).
    fn problem_and_state(dimension: Dimension, threshold: f64) -> (JumpProblem, Vec<f64>) {
        let mesh = dumbbell(7, 1, 0.1);
        let problem = JumpProblem::try_new(&mesh, dimension, 0.01, None).expect("a jump problem");
        let d = dimension.components();
        let v = (0..problem.faces.len() * d)
            .map(|i| 3.2 * threshold / (d as f64).sqrt() * ((i as f64 * 0.618_034).fract() - 0.5))
            .collect();
        (problem, v)
    }

    /// The block shrink by its definition: `z = v (1 - t / ||v||)` outside the ball, zero inside.
    fn shrunk(v: &[f64], threshold: f64) -> Vec<f64> {
        let length = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let keep = if length > threshold {
            1.0 - threshold / length
        } else {
            0.0
        };
        v.iter().map(|x| keep * x).collect()
    }

    #[test]
    fn modes_face_passes_split_is_the_block_shrink() {
        let threshold = 0.5;
        for (d, v) in [
            (1, vec![0.7]),
            (1, vec![-0.7]),
            (1, vec![0.3]),
            (3, vec![0.3, -0.4, 0.2]),
        ] {
            let (z, y) = if d == 1 {
                let (z, y) = split::<1>(&v, threshold);
                (z.to_vec(), y.to_vec())
            } else {
                let (z, y) = split::<3>(&v, threshold);
                (z.to_vec(), y.to_vec())
            };
            let expected = shrunk(&v, threshold);
            for k in 0..d {
                assert!(
                    (z[k] - expected[k]).abs() <= 1e-15,
                    "{v:?}: z {z:?} against {expected:?}"
                );
                assert_eq!(y[k], v[k] - z[k]);
            }
            // The rest lies in the ball.
            assert!(y.iter().map(|x| x * x).sum::<f64>().sqrt() <= threshold * (1.0 + 1e-15));
        }
        // The whole-state split is the face-by-face one, for scalar and vector problems.
        for dimension in [Dimension::Scalar, Dimension::Vector] {
            let (problem, v) = problem_and_state(dimension, threshold);
            let d = dimension.components();
            let (z, y) = split_state(&problem, &v, threshold);
            for (f, face) in v.chunks_exact(d).enumerate() {
                let expected = shrunk(face, threshold);
                for k in 0..d {
                    assert!((z[f * d + k] - expected[k]).abs() <= 1e-15, "face {f}");
                    assert_eq!(y[f * d + k], face[k] - z[f * d + k]);
                }
            }
            let cut = z.chunks_exact(d).filter(|z| z.iter().any(|&x| x != 0.0)).count();
            let faces = problem.faces.len();
            assert!(
                cut > faces / 10 && cut < faces / 2,
                "cut and uncut faces: {cut} of {faces}"
            );
        }
        // A vector face outside the ball keeps its direction and loses `threshold` of length.
        let (z, _) = split::<3>(&[0.0, 3.0, 4.0], 0.5);
        assert!((z[1] - 2.7).abs() < 1e-15 && (z[2] - 3.6).abs() < 1e-15 && z[0] == 0.0);
    }

    /// `D^T` is the adjoint of `D`, and the right-hand side is `D^T W (z - y)` added to what was
    /// there, for scalar and vector problems.
    #[test]
    fn modes_face_passes_sums_are_the_adjoint_of_the_jumps() {
        let threshold = 0.3;
        for dimension in [Dimension::Scalar, Dimension::Vector] {
            let (problem, v) = problem_and_state(dimension, threshold);
            let d = dimension.components();
            let n = problem.tets * d;
            let u: Vec<f64> = (0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) * 0.1).collect();
            let mut jumps = vec![0.0; v.len()];
            apply_d(&problem, &u, &mut jumps);
            let mut sums = vec![0.0; n];
            apply_dt(&problem, &v, &mut sums);
            let left: f64 = jumps.iter().zip(&v).map(|(a, b)| a * b).sum();
            let right: f64 = u.iter().zip(&sums).map(|(a, b)| a * b).sum();
            assert!(
                (left - right).abs() <= 1e-12 * left.abs().max(1.0),
                "{left} against {right}"
            );
            // The right-hand side against D^T of W (z - y) formed face by face.
            let mut weighted = vec![0.0; v.len()];
            for (f, w) in problem.weights.iter().enumerate() {
                let face = &v[f * d..(f + 1) * d];
                let z = shrunk(face, threshold);
                for k in 0..d {
                    weighted[f * d + k] = w * (z[k] - (face[k] - z[k]));
                }
            }
            let mut expected = vec![0.0; n];
            apply_dt(&problem, &weighted, &mut expected);
            let mut rhs = vec![1.0; n];
            add_target_sums(&problem, &v, threshold, &mut rhs);
            for (r, e) in rhs.iter().zip(&expected) {
                assert!((r - 1.0 - e).abs() <= 1e-12, "{r} against 1 + {e}");
            }
        }
    }

    /// The relaxed step's new state and sums against their definitions, face by face, and the
    /// same bits on one thread and on four.
    #[test]
    fn modes_face_passes_relaxed_step_matches_its_definition() {
        let (threshold, alpha) = (0.3, 1.6);
        for dimension in [Dimension::Scalar, Dimension::Vector] {
            let (problem, v) = problem_and_state(dimension, threshold);
            assert!(problem.faces.len() > FACES_PER_TASK, "two tasks or more");
            let d = dimension.components();
            let jumps: Vec<f64> = v
                .iter()
                .enumerate()
                .map(|(i, x)| 0.8 * x + 0.01 * (i % 5) as f64)
                .collect();
            let previous: Vec<f64> = v.iter().map(|x| 0.1 * x).collect();
            let step = RelaxedStep {
                state: &v,
                jumps: &jumps,
                previous: &previous,
                relaxation: alpha,
                threshold,
            };
            let run = |threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("a pool");
                let mut fresh = vec![0.0; v.len()];
                let mut difference = vec![0.0; v.len()];
                let sums = pool.install(|| relaxed_step(&problem, &step, &mut fresh, &mut difference));
                (sums, fresh, difference)
            };
            let (sums, fresh, difference) = run(1);
            let mut expected = StepSums::default();
            for (f, w) in problem.weights.iter().enumerate() {
                let range = f * d..(f + 1) * d;
                let z_old = shrunk(&v[range.clone()], threshold);
                let next: Vec<f64> = range
                    .clone()
                    .enumerate()
                    .map(|(k, i)| alpha * jumps[i] + (1.0 - alpha) * z_old[k] + (v[i] - z_old[k]))
                    .collect();
                let z = shrunk(&next, threshold);
                for (k, i) in range.enumerate() {
                    assert!((fresh[i] - next[k]).abs() <= 1e-15, "face {f}");
                    assert_eq!(difference[i], fresh[i] - v[i]);
                    expected.primal += w * (jumps[i] - z[k]).powi(2);
                    expected.dual += w * (z[k] - z_old[k]).powi(2);
                    expected.scale_primal += w * jumps[i].powi(2).max(z[k] * z[k]);
                    expected.scale_dual += w * (next[k] - z[k]).powi(2);
                    expected.step += w * (next[k] - v[i]).powi(2);
                    expected.change += w * (next[k] - v[i] - previous[i]).powi(2);
                }
            }
            let pairs = [
                (sums.primal, expected.primal),
                (sums.dual, expected.dual),
                (sums.scale_primal, expected.scale_primal),
                (sums.scale_dual, expected.scale_dual),
                (sums.step, expected.step),
                (sums.change, expected.change),
            ];
            for (i, (got, want)) in pairs.into_iter().enumerate() {
                assert!(want > 0.0, "sum {i} is exercised");
                assert!((got - want).abs() <= 1e-12 * want, "sum {i}: {got} against {want}");
            }
            let (sums_four, fresh_four, _) = run(4);
            assert_eq!(sums, sums_four);
            assert_eq!(fresh, fresh_four);
        }
    }
}
