//! Jumping over the dual drifts of the modes' ADMM ([`super::admm`]).
//!
//! Near a subproblem's solution ADMM often stalls in a drift: the cut faces and the field stay
//! put, and on some uncut faces the scaled dual grows by the same step `alpha D_f u` every
//! iteration until one of them leaves its ball `||y_f|| <= 1 / rho` and the face is cut. Each
//! such stretch takes tens to hundreds of identical iterations (measured on spot at 10k tets:
//! a final subproblem of 452 iterations whose cut set grew from 3 to 47 faces one face at a
//! time, with the dual residual at 1e-9 and the primal one flat at 2e-5 in between). Anderson
//! acceleration cannot shorten them: its residuals are all equal, so no combination of them is
//! smaller. The stretch is linear, though, so its end is known in closed form: the first uncut
//! face whose dual, moved on by whole steps, leaves its ball. The iteration jumps to the step
//! before that one, which is where the plain iteration would have arrived (or past it, to let
//! out together the faces that would follow within [`TOGETHER`] times as many steps), and goes
//! on from there; where the field was not quite still, the following iterations correct it
//! (ADMM converges from any point). Spot's first two scalar modes at 10k tets took 544 ADMM
//! iterations in all without jumps, 262 with jumps to the first face, 159 with [`TOGETHER`].
//!
//! Far from the solution the drift can carry the cut jumps too: with the cut set fixed, every
//! step moves the whole state `(z, y)` by the same amount (measured: spot's fourth scalar mode
//! at 10k tets, whose first subproblem ran 1129 iterations with the dual residual flat at
//! 3.0e-2, then 3.4e-3, then 1.1e-3). The same jump applies, its end now also where a cut
//! face's jump, shrinking, would reach zero and leave the cut set; that subproblem then took
//! 223 iterations, and the default ten modes at 10k tets 1.9 to 2.4 s instead of 3.3 s.

/// A drift is recognized when the step of the iteration has changed by less than this, relative
/// to its length, since the step before. Under the Anderson acceleration a drift's steps settle
/// slowly (on spot at 22k tets their change shrank by about a tenth every 15 iterations, from
/// 0.3 after a jump), so a tighter test waits tens of iterations on every stretch. Measured on
/// spot's default ten modes against 1e-4, runs alternated: 7.6-8.1 s -> 6.5-6.9 s at 22,424 tets
/// (d = 1), 1.85 -> 1.65 s and 3.4 -> 2.9 s at 10,937 tets (d = 1 and d = 3); 2e-3 and 4e-3 did
/// no better, and 1e-2 worse (7.1 s at 22k: jumps taken on steps still changing land off the
/// drift). Accepting looser steps for short jumps only (the jump's length times the step's
/// change bounded) was slower still: the long jumps are the ones that pay.
pub(crate) const STEADY: f64 = 1e-3;

/// Shortest jump worth taking, in steps.
pub(crate) const SHORTEST: usize = 2;

/// Whether `step` (the change of the state `(z, y)` of one iteration) is a drift after
/// `previous` (the step before): the step repeats to [`STEADY`] of its length in the `weights`
/// metric.
pub(crate) fn is_drift(step: &[f64], previous: &[f64], weights: &[f64]) -> bool {
    let (mut length, mut change) = (0.0, 0.0);
    for ((s, p), w) in step.iter().zip(previous).zip(weights) {
        length += w * s * s;
        change += w * (s - p) * (s - p);
    }
    length > 0.0 && change <= STEADY * STEADY * length
}

/// Faces that would change sides within this factor of the steps the first one takes change
/// together in one jump (measured on spot at 10k and 20k tets with jumps over dual drifts only:
/// 1 to 1.5 cut the subproblems' iterations from 262 to 159 and from 166 to 150; 3 kept them;
/// 10 let faces out too early and took 411 and 178).
pub(crate) const TOGETHER: f64 = 1.5;

/// Whole steps the drift `(step_z, step_y)` (per face component, `d` per face) jumps the state
/// `(z, y)` on: those before the first face changes sides (an uncut face, all of its `z` zero,
/// whose dual leaves the ball of radius `threshold`; a cut face whose jump, shrinking, comes
/// closest to zero, where it leaves the cut set), or, when other faces would follow within
/// [`TOGETHER`] times as many steps, those before the last of them. The plain iteration after
/// the jump moves them across. `None` when no face is heading across.
pub(crate) fn steps_before_change(
    z: &[f64],
    y: &[f64],
    step_z: &[f64],
    step_y: &[f64],
    d: usize,
    threshold: f64,
) -> Option<usize> {
    // The last whole step each face stays on its side, if it is heading across.
    let stays_for = |face: usize| -> Option<f64> {
        let range = face * d..(face + 1) * d;
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let (z, sz) = (&z[range.clone()], &step_z[range.clone()]);
        if z.iter().any(|&x| x != 0.0) {
            // A cut face: its jump shrinks to its closest approach to zero.
            let (zs, ss) = (dot(z, sz), dot(sz, sz));
            return (zs < 0.0).then(|| (-zs / ss).floor());
        }
        let (y, s) = (&y[range.clone()], &step_y[range]);
        let (yy, ys, ss) = (dot(y, y), dot(y, s), dot(s, s));
        if ss == 0.0 {
            return None;
        }
        // Smallest n > 0 with ||y + n s|| = threshold; y lies inside the ball, so the
        // discriminant is not negative (clamped against round-off).
        let discriminant = (ys * ys - ss * (yy - threshold * threshold)).max(0.0);
        Some(((-ys + discriminant.sqrt()) / ss).floor())
    };
    let faces = z.len() / d;
    let first = (0..faces).filter_map(stays_for).fold(f64::INFINITY, f64::min);
    if !(first.is_finite() && first >= 0.0) {
        return None;
    }
    let last = (0..faces)
        .filter_map(stays_for)
        .filter(|&n| n <= TOGETHER * first)
        .fold(first, f64::max);
    Some(last as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_drift_is_a_repeated_step() {
        let weights = [1.0, 4.0, 1.0, 16.0];
        let step = [0.0, 0.2, 0.3, -0.1];
        assert!(is_drift(&step, &step, &weights));
        assert!(!is_drift(&step, &[0.0, 0.2, 0.3, -0.2], &weights));
        assert!(!is_drift(&[0.0; 4], &[0.0; 4], &weights));
        // A change of the last entry by `delta` is `4 delta / sqrt(0.41)` of the step in the
        // weighted metric (`delta / sqrt(0.14)` unweighted, 0.43 times as much): half of STEADY
        // is a drift, twice it is not, and the second would pass for a drift if the weights
        // were left out.
        let changed = |relative: f64| {
            let delta = relative * STEADY * 0.41f64.sqrt() / 4.0;
            [0.0, 0.2, 0.3, -0.1 + delta]
        };
        assert!(is_drift(&step, &changed(0.5), &weights));
        assert!(!is_drift(&step, &changed(2.0), &weights));
        assert!(is_drift(&step, &changed(2.0), &[1.0; 4]));
    }

    /// A cut face whose jump shrinks stays cut for the whole steps before it passes zero; one
    /// that grows does not limit the jump.
    #[test]
    fn modes_drift_jump_stops_short_of_a_cut_face_closing() {
        // Face 0 cut at 0.5 shrinking by 0.03 (zero after 16.7 steps); face 1 cut and growing;
        // face 2 uncut, its dual far from leaving.
        let (z, step_z) = ([0.5, -0.2, 0.0], [-0.03, -0.01, 0.0]);
        let (y, step_y) = ([0.1, -0.1, 0.0], [0.0, 0.0, 1e-4]);
        assert_eq!(steps_before_change(&z, &y, &step_z, &step_y, 1, 1.0), Some(16));
    }

    /// The jump lands where stepping one at a time would be on the last step before a face's
    /// dual leaves the ball, for scalar and vector faces; faces that would follow within
    /// [`TOGETHER`] times as many steps leave with it.
    #[test]
    fn modes_drift_jump_stops_short_of_the_cuts_it_reaches() {
        let threshold = 1.0;
        for (d, expected) in [(1, 37), (3, 22)] {
            // Face 0 is cut (ignored); 1 drifts out slowly, 2 fast, 3 first inward then out.
            let mut z = vec![0.0; 4 * d];
            let mut y = vec![0.0; 4 * d];
            let mut step = vec![0.0; 4 * d];
            (z[0], step[0]) = (0.5, 5.0);
            (y[d], step[d]) = (0.1, 0.01);
            (y[2 * d], step[2 * d]) = (-0.2, -0.03);
            if d == 3 {
                step[2 * d + 2] = 0.02;
            }
            (y[3 * d], step[3 * d]) = (0.9, -0.051);
            let n = steps_before_change(&z, &y, &vec![0.0; 4 * d], &step, d, threshold).expect("a face drifts out");
            // Brute force: the last step each uncut face stays inside its ball.
            let inside = |f: usize| {
                (0..10_000usize).find(|&k| {
                    let r: f64 = (0..d)
                        .map(|c| (y[f * d + c] + k as f64 * step[f * d + c]).powi(2))
                        .sum();
                    r.sqrt() > threshold
                })
            };
            let inside: Vec<usize> = (1..4).filter_map(inside).map(|k| k - 1).collect();
            let first = *inside.iter().min().expect("faces leave");
            let last = inside
                .iter()
                .copied()
                .filter(|&k| k as f64 <= TOGETHER * first as f64)
                .max();
            assert_eq!(Some(n), last, "d = {d}");
            assert_eq!(n, expected, "d = {d}");
        }
        assert_eq!(steps_before_change(&[0.0], &[0.5], &[0.0], &[0.0], 1, 1.0), None);
    }
}
