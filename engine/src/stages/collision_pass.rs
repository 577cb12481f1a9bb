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
use rayon::prelude::*;
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

    /// Whether `contact` takes a collision impulse in a step of `dt` s: it would overlap at the
    /// predicted positions while approaching faster than `threshold` (m/s). Slow approaches are
    /// the solve's: it stops them as inelastic contact (exactly at the surface, thanks to the
    /// speculative gap), so resting contacts never bounce and the pass does not chase round-off.
    fn collides(&self, contact: &ContactPoint, dt: f64, threshold: f64) -> bool {
        let approach = self.approach(contact.point, contact.normal);
        let predicted_gap = -contact.depth + dt * approach;
        -approach > threshold && predicted_gap < 0.0
    }
}

/// The pass's lists, kept from step to step for their memory.
#[derive(Clone, Debug, Default)]
pub(crate) struct CollisionScratch {
    /// Per pair, its two bodies' dense indices and whether it collides at the velocities a pass
    /// starts from: what the walk in pair order reads of a pair it passes over, a few bytes
    /// instead of the pair's record (most of a kilobyte).
    colliding: Vec<([u32; 2], bool)>,
    /// Per body, the last pass whose impulses moved it (passes count from 1; 0 for none).
    moved_in: Vec<usize>,
}

/// Runs the pass over `pairs` (whose bodies are awake or fixed); records each contact's impulse.
pub(crate) fn run(
    bodies: &mut BodyStore,
    pairs: &mut [PairContacts],
    dt: f64,
    settings: &WorldSettings,
    scratch: &mut CollisionScratch,
) -> CollisionPassOutcome {
    let mut outcome = CollisionPassOutcome::default();
    let threshold = settings.restitution_threshold;
    let CollisionScratch { colliding, moved_in } = scratch;
    moved_in.clear();
    moved_in.resize(bodies.len(), 0);
    for pass in 1..=settings.collision_passes {
        // Most pairs rest, and a pair whose bodies no impulse of this pass has moved yet is
        // tested at the velocities the pass started from: those tests are made at once, in
        // parallel, and the walk in pair order tests afresh only the pairs the pass has moved.
        // The same tests at the same velocities, so the same impulses in the same order.
        let states = bodies.states();
        let collides = |pair: &PairContacts| (pair.dense, collides_at(bodies, states, pair, dt, threshold));
        if pairs.len() >= PARALLEL_PAIRS {
            pairs.par_iter().map(collides).collect_into_vec(colliding);
        } else {
            colliding.clear();
            colliding.extend(pairs.iter().map(collides));
        }
        // The walk applies impulses only where a pair collides or a body was moved by this pass:
        // with no pair colliding at its start nothing moves, in this pass or any after it, so
        // the passes end here.
        if !colliding.iter().any(|&(_, collides)| collides) {
            break;
        }
        let mut any = false;
        for (pair, &(dense, collides)) in pairs.iter_mut().zip(colliding.iter()) {
            let [a, b] = dense.map(|i| i as usize);
            if !collides && moved_in[a] != pass && moved_in[b] != pass {
                continue;
            }
            // Nothing moves the pair unless one of its bodies is awake and dynamic (`as_seen`).
            if !(bodies.is_awake_dynamic(a) || bodies.is_awake_dynamic(b)) {
                continue;
            }
            let mut motion = PairMotion::of(bodies.states(), a, b);
            for contact in pair.contacts.iter_mut() {
                if !motion.collides(contact, dt, threshold) {
                    continue;
                }
                if collide_contact(bodies, [a, b], contact, pair.restitution, &mut outcome) {
                    motion = PairMotion::of(bodies.states(), a, b);
                    (moved_in[a], moved_in[b]) = (pass, pass);
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

/// Pairs from which the test at the start of a pass is made on the pool.
///
/// It was 1024, which left the 210-box pyramid (400 pairs) and the aligned 1000-box pile while
/// it lands (about 850 pairs a step on average over its first three seconds) testing on one
/// thread, at about 40 ns a pair (each pair's record is most of a kilobyte). At 256, on two
/// threads (`cargo run --release -p shatter-peers --example stage_times -- --threads 2 --runs 3
/// --pool-use shared`, temporary timers): the pass took 13 us a step instead of 17 for the
/// pyramid and 42 instead of 58 for the aligned pile at 60 Hz; median step over four
/// interleaved rounds 0.386 -> 0.372 ms and 1.034 -> 1.005 ms, the 1000 spheres on the table
/// unchanged.
const PARALLEL_PAIRS: usize = 256;

/// Whether any contact of `pair` collides ([`PairMotion::collides`]) with its bodies at `states`
/// (a pair none of whose bodies is awake and dynamic never does: nothing moves it, `as_seen`).
fn collides_at(bodies: &BodyStore, states: &[RigidState], pair: &PairContacts, dt: f64, threshold: f64) -> bool {
    let [a, b] = pair.dense.map(|i| i as usize);
    if !(bodies.is_awake_dynamic(a) || bodies.is_awake_dynamic(b)) {
        return false;
    }
    let motion = PairMotion::of(states, a, b);
    pair.contacts
        .iter()
        .any(|contact| motion.collides(contact, dt, threshold))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact_cache::WarmStart;
    use crate::contacts::tangent_basis;
    use crate::{BodyDesc, Material, World};
    use shatter_collision::{Collider, FeatureId, Shape, Sphere};
    use shatter_integrators::SplitMix64;
    use smallvec::SmallVec;

    /// The pass as first written: every pair of every pass tested in pair order.
    fn every_pair_every_pass(
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
                if !(bodies.is_awake_dynamic(a) || bodies.is_awake_dynamic(b)) {
                    continue;
                }
                let mut motion = PairMotion::of(bodies.states(), a, b);
                for contact in pair.contacts.iter_mut() {
                    if !motion.collides(contact, dt, settings.restitution_threshold) {
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

    /// Rows of balls, each touching its neighbours along the row and the one below, with random
    /// velocities (some fast enough to collide, most not) and a static ball among them: the
    /// contacts of `pairs` pairs, with impulses that travel along the rows from pass to pass.
    fn heap(pairs: usize, seed: u64) -> (World, Vec<PairContacts>) {
        let mut world = World::new();
        let mut rng = SplitMix64::new(seed);
        let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.1).unwrap()), 0.05).unwrap();
        let material = Material {
            friction: 0.5,
            restitution: 0.3,
        };
        let (width, count) = (40, pairs / 2 + 41);
        let mut ids = Vec::new();
        for k in 0..count {
            let position = DVec3::new(0.199 * (k % width) as f64, 0.199 * (k / width) as f64, 0.0);
            let speed = if rng.range(0.0, 1.0) < 0.2 { 3.0 } else { 0.3 };
            let velocity = DVec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-0.2, 0.2)) * speed;
            let desc = if k % 97 == 13 {
                BodyDesc::fixed(ball.clone())
            } else {
                BodyDesc::dynamic(ball.clone()).with_velocity(velocity, DVec3::new(0.0, 0.0, rng.range(-2.0, 2.0)))
            };
            ids.push(
                world
                    .add_body(desc.with_position(position).with_material(material))
                    .unwrap(),
            );
        }
        let contact = |a: usize, b: usize| {
            let (ia, ib) = (ids[a], ids[b]);
            let (da, db) = (
                world.bodies.dense_index(ia).unwrap(),
                world.bodies.dense_index(ib).unwrap(),
            );
            let (pa, pb) = (world.bodies.states()[da].position, world.bodies.states()[db].position);
            let normal = (pa - pb).normalize();
            PairContacts {
                body_a: ia,
                body_b: ib,
                friction: 0.5,
                restitution: 0.3,
                contacts: SmallVec::from_iter([ContactPoint {
                    point: 0.5 * (pa + pb),
                    normal,
                    depth: 0.001,
                    feature: FeatureId::of_a(0),
                    tangents: tangent_basis(normal),
                    collision_impulse: 0.0,
                    normal_impulse: 0.0,
                    friction_impulse: [0.0; 2],
                    warm_start: WarmStart::default(),
                }]),
                dense: [da as u32, db as u32],
            }
        };
        let mut list = Vec::new();
        for k in 0..count {
            if k % width + 1 < width && k + 1 < count {
                list.push(contact(k, k + 1));
            }
            if k + width < count {
                list.push(contact(k, k + width));
            }
        }
        list.truncate(pairs);
        (world, list)
    }

    /// Testing the pairs the pass has not moved at the velocities it started from, all at once,
    /// changes nothing: over heaps below and above the size tested on the pool, the states,
    /// impulses and counts are those of testing every pair in order in every pass, bit for bit.
    #[test]
    fn collision_pass_gives_the_bits_of_testing_every_pair_in_every_pass() {
        for (pairs, seed) in [(PARALLEL_PAIRS - 56, 1), (PARALLEL_PAIRS + 500, 2), (3000, 3)] {
            let (mut world, mut contacts) = heap(pairs, seed);
            let settings = WorldSettings::default();
            let (mut bodies, mut reference) = (world.bodies.clone(), contacts.clone());
            let expected = every_pair_every_pass(&mut bodies, &mut reference, 1.0 / 30.0, &settings);
            let mut scratch = CollisionScratch::default();
            let found = run(&mut world.bodies, &mut contacts, 1.0 / 30.0, &settings, &mut scratch);
            assert!(
                expected.impulses > pairs / 10,
                "{} impulses over {pairs} pairs",
                expected.impulses
            );
            assert_eq!(found, expected, "{pairs} pairs");
            for (got, want) in world.bodies.states().iter().zip(bodies.states()) {
                assert_eq!(bytemuck::bytes_of(got), bytemuck::bytes_of(want));
            }
            for (got, want) in contacts.iter().zip(&reference) {
                assert_eq!(
                    got.contacts[0].collision_impulse.to_bits(),
                    want.contacts[0].collision_impulse.to_bits()
                );
            }
        }
    }
}
