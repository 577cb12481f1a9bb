//! Stage `apply_forces`: gravity into the velocities of awake dynamic bodies, `v += h g`.
//!
//! This comes after the collision pass and before the constraint solve, as in Guendelman et al.
//! 2003 and Su 2009: collisions see the velocities of the end of the last step, contacts see the
//! velocities gravity is about to integrate, so a resting body's contacts cancel exactly the
//! `h g` of this step. Together with `x += h v` in the integrate stage this is symplectic Euler:
//! after `N` steps of free fall, `x_N = x_0 + N h v_0 + h^2 g N (N + 1) / 2`.

use glam::DVec3;

use crate::store::BodyStore;

/// Adds `gravity * dt` (m/s) to every awake dynamic body's velocity; returns how many it touched.
pub(crate) fn run(bodies: &mut BodyStore, gravity: DVec3, dt: f64) -> usize {
    let dv = gravity * dt;
    let moving: Vec<usize> = (0..bodies.len()).filter(|&i| bodies.is_awake_dynamic(i)).collect();
    let states = bodies.states_mut();
    for &i in &moving {
        states[i].linear_velocity += dv;
    }
    moving.len()
}
