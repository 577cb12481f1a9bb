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
//! step moves the whole state by the same amount (measured: spot's fourth scalar mode at 10k
//! tets, whose first subproblem ran 1129 iterations with the dual residual flat at 3.0e-2, then
//! 3.4e-3, then 1.1e-3). The same jump applies, its end now also where a cut face's jump,
//! shrinking, would reach zero and leave the cut set; that subproblem then took 223 iterations,
//! and the default ten modes at 10k tets 1.9 to 2.4 s instead of 3.3 s.
//!
//! The state is the iteration's `v = z + y` per face ([`super::admm`]): a face is cut when its
//! `v_f` lies outside the ball of radius `1 / rho` (its jump `z_f` is the excess), so both ends
//! are one test, the first face whose `v_f`, moved on by whole steps, crosses that sphere.

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

/// Whether a step of the iteration, of squared length `squared_step`, is a drift after the step
/// before, from which it differs by `squared_change` (both in one metric): the step repeats to
/// [`STEADY`] of its length.
pub(crate) fn is_drift(squared_step: f64, squared_change: f64) -> bool {
    squared_step > 0.0 && squared_change <= STEADY * STEADY * squared_step
}

/// Faces that would change sides within this factor of the steps the first one takes change
/// together in one jump (measured on spot at 10k and 20k tets with jumps over dual drifts only:
/// 1 to 1.5 cut the subproblems' iterations from 262 to 159 and from 166 to 150; 3 kept them;
/// 10 let faces out too early and took 411 and 178). With the drifts of the whole state jumped
/// too, spot's default ten modes took 1880 ADMM iterations at 22,424 tets with 1.5 against
/// 2011 with 1.2, 1799 with 2 and 1765 with 3, and at 10,937 tets (d = 1, d = 3) 994 and 640
/// with 1.5, 917 and 634 with 2, 909 and 677 with 3.
pub(crate) const TOGETHER: f64 = 2.0;

/// Whole steps the drift `step` (per face component, `d` per face) jumps the state `v` on: those
/// before the first face changes sides (its `v_f`, moved on by whole steps, crosses the sphere
/// of radius `threshold`: an uncut face's dual leaving its ball, or a cut face's jump shrinking
/// to zero), or, when other faces would follow within [`TOGETHER`] times as many steps, those
/// before the last of them. The plain iteration after the jump moves them across. `None` when
/// no face is heading across.
pub(crate) fn steps_before_change(v: &[f64], step: &[f64], d: usize, threshold: f64) -> Option<usize> {
    // The last whole step each face stays on its side, if it is heading across.
    let stays_for = |face: usize| -> Option<f64> {
        let range = face * d..(face + 1) * d;
        let (v, s) = (&v[range.clone()], &step[range]);
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let (vv, vs, ss) = (dot(v, v), dot(v, s), dot(s, s));
        if ss == 0.0 {
            return None;
        }
        // The roots of ||v + n s|| = threshold.
        let discriminant = vs * vs - ss * (vv - threshold * threshold);
        if vv <= threshold * threshold {
            // Inside, so the discriminant is not negative (clamped against round-off): the
            // larger root is where it leaves.
            return Some(((-vs + discriminant.max(0.0).sqrt()) / ss).floor());
        }
        // Outside: it enters at the smaller root, if the line meets the sphere ahead.
        let enters = (-vs - discriminant.sqrt()) / ss;
        (discriminant >= 0.0 && enters > 0.0).then(|| enters.floor())
    };
    let faces = v.len() / d;
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

    /// A step that changed by half of [`STEADY`] of its length is a drift, one that changed by
    /// twice that is not, and no step is not one.
    #[test]
    fn modes_drift_is_a_repeated_step() {
        let squared_step = 0.41;
        let squared_change = |relative: f64| (relative * STEADY).powi(2) * squared_step;
        assert!(is_drift(squared_step, 0.0));
        assert!(is_drift(squared_step, squared_change(0.5)));
        assert!(!is_drift(squared_step, squared_change(2.0)));
        assert!(!is_drift(0.0, 0.0));
    }

    /// A cut face (outside the ball) whose `v` heads into the ball stays cut for the whole steps
    /// before it enters, for scalar and vector faces; one heading past the ball or away from it
    /// does not limit the jump.
    #[test]
    fn modes_drift_jump_stops_short_of_a_cut_face_closing() {
        // Face 0 cut at 1.5 shrinking by 0.03 (inside after 16.7 steps); face 1 cut and growing;
        // face 2 uncut, its dual far from leaving.
        let (v, step) = ([1.5, -1.2, 0.0], [-0.03, -0.01, 1e-4]);
        assert_eq!(steps_before_change(&v, &step, 1, 1.0), Some(16));
        // In 3D, a cut face passing beside the ball (closest approach 1.2 > 1) stays cut: the
        // first face to change is then the uncut one, 10,000 steps out.
        let v = [1.5, 1.2, 0.0, 0.0, 0.0, 0.0];
        let step = [-0.03, 0.0, 0.0, 0.0, 3e-4, 0.0];
        assert_eq!(steps_before_change(&v, &step, 3, 1.0), Some(3333));
    }

    /// The jump lands where stepping one at a time would be on the last step before a face's
    /// `v` crosses the sphere, for scalar and vector faces, found by brute force; faces that would
    /// follow within [`TOGETHER`] times as many steps change with it.
    #[test]
    fn modes_drift_jump_stops_short_of_the_cuts_it_reaches() {
        let threshold = 1.0;
        for (d, expected) in [(1, 37), (3, 37)] {
            // Face 0 is cut and heads away; 1 drifts out slowly, 2 fast, 3 first inward then out;
            // 4 is cut and heads in, too late to count.
            let mut v = vec![0.0; 5 * d];
            let mut step = vec![0.0; 5 * d];
            (v[0], step[0]) = (1.5, 5.0);
            (v[d], step[d]) = (0.1, 0.01);
            (v[2 * d], step[2 * d]) = (-0.2, -0.03);
            if d == 3 {
                step[2 * d + 2] = 0.02;
            }
            (v[3 * d], step[3 * d]) = (0.9, -0.051);
            (v[4 * d], step[4 * d]) = (-3.0, 0.03);
            let n = steps_before_change(&v, &step, d, threshold).expect("a face drifts across");
            // Brute force: the last step each face stays on its side of the sphere.
            let across = |f: usize| {
                let length = |k: usize| -> f64 {
                    (0..d)
                        .map(|c| (v[f * d + c] + k as f64 * step[f * d + c]).powi(2))
                        .sum::<f64>()
                        .sqrt()
                };
                let outside = length(0) > threshold;
                (1..100_000usize).find(|&k| (length(k) > threshold) != outside)
            };
            let stays: Vec<usize> = (0..5).filter_map(across).map(|k| k - 1).collect();
            let first = *stays.iter().min().expect("faces cross");
            let last = stays
                .iter()
                .copied()
                .filter(|&k| k as f64 <= TOGETHER * first as f64)
                .max();
            assert_eq!(Some(n), last, "d = {d}");
            assert_eq!(n, expected, "d = {d}");
        }
        assert_eq!(steps_before_change(&[0.5], &[0.0], 1, 1.0), None);
        assert_eq!(steps_before_change(&[1.5], &[0.1], 1, 1.0), None);
    }
}
