//! Stage `apply_forces`: gravity into the velocities of awake dynamic bodies, `v += h g`.
//!
//! This comes after the collision pass and before the constraint solve, as in Guendelman et al.
//! 2003 and Su 2009: collisions see the velocities of the end of the last step, contacts see the
//! velocities gravity is about to integrate, so a resting body's contacts cancel exactly the
//! `h g` of this step. Together with `x += h v` in the integrate stage this is symplectic Euler:
//! after `N` steps of free fall, `x_N = x_0 + N h v_0 + h^2 g N (N + 1) / 2`.

use glam::DVec3;

use shatter_integrators::BodyKind;

use crate::store::BodyStore;

/// Adds `gravity * dt` (m/s) to every awake dynamic body's velocity; returns how many it touched.
pub(crate) fn run(bodies: &mut BodyStore, gravity: DVec3, dt: f64) -> usize {
    let dv = gravity * dt;
    let (moving, states, kinds) = bodies.moving_states_mut();
    let mut pushed = 0;
    for &i in moving {
        if kinds[i as usize] == BodyKind::Dynamic {
            states[i as usize].linear_velocity += dv;
            pushed += 1;
        }
    }
    pushed
}
