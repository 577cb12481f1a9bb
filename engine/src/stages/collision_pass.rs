//! Stage `collide`, second half: the elastic collision pass (Guendelman, Bridson and Fedkiw 2003
//! section 6; Su, Schroeder and Fedkiw 2009 sections 3.1 and 3.2).
//!
//! Before forces act, each contact is tested at the positions the bodies would reach with their
//! current velocities, `x^{n+1} = x^n + h v^n`. To first order in `h` the gap there is
//! `g' = g + h v_n` (gap `g = -depth` at the start of the step, `v_n` the normal relative velocity
//! at the contact, positive when separating). A contact that would overlap (`g' < 0`) while
//! approaching faster than the restitution threshold (`-v_n > v_t`) receives a normal impulse that
//! reverses the approach with the pair's restitution `e`: `v_n' = -e v_n`. Slower approaches are
//! left to the constraint solve, which stops them inelastically, so resting contacts do not bounce
//! off the speed gravity gave them in one step (Box2D's restitution threshold). The impulse is
//! `j = (v_n' - v_n) / K` with the effective mass `K = 1/m_a + 1/m_b + (r_a x n) . I_a^-1 (r_a x n)
//! + (r_b x n) . I_b^-1 (r_b x n)`. Contacts are swept in pair order a few times
//! ([`crate::WorldSettings::collision_passes`]) so impulses travel through stacks.
//!
//! Each impulse is clamped with [`clamp_pair_impulse`] (Su 2009 section 3.2) against the non-split
//! state: positions have not moved, so the bodies' states are exactly the time-`n` state Su clamps
//! collisions against. What clamping removes is measured and reported.
//!
//! Rejected: a second narrow phase at the predicted poses (Guendelman's literal scheme). It doubles
//! the narrow-phase cost; the first-order gap is exact for translation and differs by
//! `O(h^2 |w|^2 r)` under rotation, which the speculative contacts of the solve absorb.

use glam::DVec3;
use shatter_integrators::{
    BodyKind, ClampBody, ClampVerdict, MassProperties, PairImpulse, RigidState, apply_impulse, clamp_pair_impulse,
};

use crate::contacts::{ContactPoint, PairContacts};
use crate::settings::WorldSettings;
use crate::store::BodyStore;

/// What the collision pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct CollisionPassOutcome {
    /// Impulses applied (after clamping, non-zero ones).
    pub(crate) impulses: usize,
    /// Impulses the clamp scaled down or dropped.
    pub(crate) clamped: usize,
    /// Kinetic energy the clamp kept from being added, J.
    pub(crate) energy_removed: f64,
}

/// `(r x d) . I^-1 (r x d)` plus `1/m`: the inverse effective mass of one body along `d` at arm `r`.
pub(crate) fn inverse_effective_mass(state: &RigidState, mass: &MassProperties, arm: DVec3, direction: DVec3) -> f64 {
    if mass.is_infinite() {
        return 0.0;
    }
    let u = state.orientation.inverse() * arm.cross(direction);
    mass.inverse_mass() + u.dot(u * mass.inverse_principal_inertia())
}

/// How the pass treats body `dense`: awake dynamic bodies as they are; everything else (static,
/// kinematic, sleeping, quarantined) as infinitely heavy, so a sleeper is a wall for the rest of
/// the step (it wakes at the end of it; see the sleep stage).
pub(crate) fn as_seen(bodies: &BodyStore, dense: usize) -> (BodyKind, MassProperties) {
    if bodies.is_awake_dynamic(dense) {
        (BodyKind::Dynamic, bodies.masses()[dense])
    } else if bodies.is_moving(dense) {
        (BodyKind::Kinematic, MassProperties::infinite())
    } else {
        (BodyKind::Static, MassProperties::infinite())
    }
}

/// What the approach test reads of a pair's two bodies: centres and world-frame linear and
/// angular velocities, taken once per pair rather than once per contact (the angular one costs a
/// rotation), and again after an impulse changed them.
struct PairMotion {
    positions: [DVec3; 2],
    linear: [DVec3; 2],
    angular: [DVec3; 2],
}

impl PairMotion {
    fn of(states: &[RigidState], a: usize, b: usize) -> Self {
        let (sa, sb) = (&states[a], &states[b]);
        Self {
            positions: [sa.position, sb.position],
            linear: [sa.linear_velocity, sb.linear_velocity],
            angular: [sa.angular_velocity(), sb.angular_velocity()],
        }
    }

    /// Normal relative velocity at `point` along `n`, positive when separating, m/s: the same
    /// arithmetic as [`RigidState::point_velocity`] on each body.
    fn approach(&self, point: DVec3, n: DVec3) -> f64 {
        let velocity = |k: usize| self.linear[k] + self.angular[k].cross(point - self.positions[k]);
        n.dot(velocity(0) - velocity(1))
    }
}

/// Runs the pass over `pairs` (whose bodies are awake or fixed); records each contact's impulse.
pub(crate) fn run(
    bodies: &mut BodyStore,
    pairs: &mut [PairContacts],
    dt: f64,
    settings: &WorldSettings,
) -> CollisionPassOutcome {
    let mut outcome = CollisionPassOutcome::default();
    for _ in 0..settings.collision_passes {
        let mut any = false;
        for pair in pairs.iter_mut() {
            let [a, b] = pair.dense.map(|i| i as usize);
            // Nothing moves the pair unless one of its bodies is awake and dynamic (`as_seen`).
            if !(bodies.is_awake_dynamic(a) || bodies.is_awake_dynamic(b)) {
                continue;
            }
            // Resting contacts, the many, are passed over on the velocities alone.
            let mut motion = PairMotion::of(bodies.states(), a, b);
            for contact in pair.contacts.iter_mut() {
                let approach = motion.approach(contact.point, contact.normal);
                let predicted_gap = -contact.depth + dt * approach;
                // Slow approaches are the solve's: it stops them as inelastic contact (exactly at
                // the surface, thanks to the speculative gap), so resting contacts never bounce
                // and the pass does not chase round-off.
                if !(-approach > settings.restitution_threshold && predicted_gap < 0.0) {
                    continue;
                }
                if collide_contact(bodies, [a, b], contact, pair.restitution, &mut outcome) {
                    motion = PairMotion::of(bodies.states(), a, b);
                    any = true;
                }
            }
        }
        if !any {
            break;
        }
    }
    outcome
}

/// Gives `contact` of the dense pair `[a, b]` its clamped restitution impulse (see the module
/// docs); returns whether a non-zero impulse was applied.
fn collide_contact(
    bodies: &mut BodyStore,
    [a, b]: [usize; 2],
    contact: &mut ContactPoint,
    restitution: f64,
    outcome: &mut CollisionPassOutcome,
) -> bool {
    let ((ka, ma), (kb, mb)) = (as_seen(bodies, a), as_seen(bodies, b));
    let states = bodies.states_mut();
    let (mut sa, mut sb) = (states[a], states[b]);
    let n = contact.normal;
    let arm_a = contact.point - sa.position;
    let arm_b = contact.point - sb.position;
    let approach = n.dot(sa.point_velocity(arm_a) - sb.point_velocity(arm_b));
    let target = -restitution * approach;
    let k = inverse_effective_mass(&sa, &ma, arm_a, n) + inverse_effective_mass(&sb, &mb, arm_b, n);
    if !(k > 0.0) {
        return false;
    }
    let magnitude = (target - approach) / k;
    let impulse = PairImpulse {
        linear: n * magnitude,
        arm_a,
        arm_b,
        angular: DVec3::ZERO,
    };
    let body_a = ClampBody {
        kind: ka,
        state: &sa,
        mass: &ma,
    };
    let body_b = ClampBody {
        kind: kb,
        state: &sb,
        mass: &mb,
    };
    // Inputs are finite (states are checked at every stage boundary), so the clamp cannot fail; a
    // failure would drop the impulse rather than spread NaN.
    let Ok(clamp) = clamp_pair_impulse(body_a, body_b, &impulse) else {
        return false;
    };
    if matches!(clamp.verdict, ClampVerdict::Scaled | ClampVerdict::Dropped) {
        outcome.clamped += 1;
        outcome.energy_removed += energy_kept_out(body_a, body_b, &impulse, clamp.scale);
    }
    let applied = magnitude * clamp.scale;
    if applied == 0.0 {
        return false;
    }
    // apply_impulse only refuses non-finite input, checked above.
    let _ = apply_impulse(&mut sa, &ma, ka, n * applied, arm_a, DVec3::ZERO);
    let _ = apply_impulse(&mut sb, &mb, kb, -n * applied, arm_b, DVec3::ZERO);
    states[a] = sa;
    states[b] = sb;
    contact.collision_impulse += applied;
    outcome.impulses += 1;
    true
}

/// Kinetic energy of the pair after the whole `impulse` minus after `scale` times it, J.
fn energy_kept_out(a: ClampBody<'_>, b: ClampBody<'_>, impulse: &PairImpulse, scale: f64) -> f64 {
    let after = |factor: f64| {
        let (mut sa, mut sb) = (*a.state, *b.state);
        let _ = apply_impulse(
            &mut sa,
            a.mass,
            a.kind,
            impulse.linear * factor,
            impulse.arm_a,
            DVec3::ZERO,
        );
        let _ = apply_impulse(
            &mut sb,
            b.mass,
            b.kind,
            -impulse.linear * factor,
            impulse.arm_b,
            DVec3::ZERO,
        );
        sa.kinetic_energy(a.mass) + sb.kinetic_energy(b.mass)
    };
    after(1.0) - after(scale)
}
