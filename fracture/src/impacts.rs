//! The impacts a step delivered to breakable bodies, shared by the methods that break a body at
//! its strongest contact (prescored patterns, fracture modes), and the step's contacts of the
//! bodies hit, which the stress-based methods (SPH, boundary elements) load with.
//!
//! The step has already applied its contact impulses when a fracture model runs. To have the
//! impactor meet the fragments (as Su 2009 does by testing the impulse before applying it), a
//! model can replay the impact: it takes every contact impulse the parent received in the step
//! back from the parent's momentum (the fragments share the momentum from before the contacts)
//! and returns each to the body that gave it. Taking back the impactor's impulse alone is not
//! enough: a table top on legs hit from above gets the ball's push and, in the same solve, the
//! legs' push back; leaving the legs' half in would launch the fragments upward with the energy
//! the ball brought. Total momentum is unchanged by the replay. The contacts report the impulses
//! the two bodies exchanged (`ContactPoint::normal_impulse`): the solve's shock pass also settles
//! an upper body against a support it holds still, a correction the support never feels, and
//! that is not in them, so what is taken back from one body and returned to the other is what
//! each felt (`shatter_solver::Row::exchanged` says what went wrong when it was).

use std::collections::BTreeMap;

use glam::DVec3;
use shatter_collision::Pose;
use shatter_engine::{BodyDesc, BodyId, FractureContext, SpawnTicket, Spawned, World};
use shatter_integrators::BodyKind;

use crate::error::FractureError;
use crate::fragments::ParentMomentum;

/// The strongest contact of a breakable body in a step.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Impulse on the breakable body, world frame, N s.
    pub impulse: DVec3,
    /// Impulse-weighted mean of the contact points, world frame, m.
    pub point: DVec3,
    /// Every contact of the body this step, with every other body (the hit pair's included):
    /// the other body, the point and the impulse on the breakable body.
    pub received: Vec<(BodyId, DVec3, DVec3)>,
}

impl Hit {
    /// `momentum` with every impulse this body received in the step taken back.
    pub fn before_contacts(&self, mut momentum: ParentMomentum) -> ParentMomentum {
        for (_, point, impulse) in &self.received {
            momentum.linear -= *impulse;
            momentum.angular -= point.cross(*impulse);
        }
        momentum
    }
}

/// Per body, the strongest pair impulse above its threshold this step; `threshold(id)` is
/// `None` for a body that cannot break now, and no threshold is below `floor` (N s), so a pair
/// whose impulse is no more than `floor` is passed over without asking (a heap of debris has
/// tens of thousands of resting pairs a step, and the callers look thresholds up in a map).
/// With `replay`, each hit also lists every contact impulse its body received.
pub fn strongest_hits(
    context: &FractureContext<'_>,
    floor: f64,
    threshold: impl Fn(BodyId) -> Option<f64>,
    replay: bool,
) -> BTreeMap<BodyId, Hit> {
    let mut hits: BTreeMap<BodyId, Hit> = BTreeMap::new();
    for pair in context.contacts() {
        let on_a = pair.total_impulse();
        // Either body's impulse has this length (negating a vector keeps its length's bits).
        if on_a.length() <= floor {
            continue;
        }
        for (id, sign) in [(pair.body_a, 1.0), (pair.body_b, -1.0)] {
            let Some(limit) = threshold(id) else { continue };
            let impulse = on_a * sign;
            let magnitude = impulse.length();
            if magnitude <= limit || hits.get(&id).is_some_and(|h| h.impulse.length() >= magnitude) {
                continue;
            }
            let contacts = pair.contacts.iter().map(|c| (c.point, c.total_impulse().length()));
            let total: f64 = contacts.clone().map(|(_, j)| j).sum();
            let point = contacts.map(|(p, j)| p * (j / total)).sum();
            hits.insert(
                id,
                Hit {
                    impulse,
                    point,
                    received: Vec::new(),
                },
            );
        }
    }
    if replay && !hits.is_empty() {
        for pair in context.contacts() {
            for (id, other, sign) in [(pair.body_a, pair.body_b, 1.0), (pair.body_b, pair.body_a, -1.0)] {
                if let Some(hit) = hits.get_mut(&id) {
                    let on_body = pair.contacts.iter().map(|c| (other, c.point, c.total_impulse() * sign));
                    hit.received.extend(on_body);
                }
            }
        }
    }
    hits
}

/// Returns the impulses the `broken` bodies received to the dynamic bodies that gave them
/// (unless that body broke too: it took back its own side of the pair), noting failures.
pub fn return_impulses(
    context: &mut FractureContext<'_>,
    hits: &BTreeMap<BodyId, Hit>,
    broken: &[BodyId],
    failures: &mut Vec<String>,
) {
    for id in broken {
        for (other, point, impulse) in &hits[id].received {
            let dynamic = context.body(*other).is_ok_and(|v| v.kind == BodyKind::Dynamic);
            if dynamic && !broken.contains(other) {
                if let Err(error) = context.apply_impulse(*other, *impulse, *point) {
                    failures.push(format!("impulse not returned to body {other:?}: {error}"));
                }
            }
        }
    }
}

/// The pose of body `id` of `world`, which a model is making breakable at `threshold` (N s).
/// Fails naming a threshold that is not a positive impulse, or a stale or non-dynamic body.
pub fn breakable_body_pose(world: &World, id: BodyId, threshold: f64) -> Result<Pose, FractureError> {
    if !(threshold.is_finite() && threshold > 0.0) {
        return Err(FractureError::invalid(
            "fracture threshold (N s)",
            threshold,
            "a positive impulse",
        ));
    }
    let view = world.body(id)?;
    if view.kind != BodyKind::Dynamic {
        return Err(FractureError::input(format!(
            "body {id:?} is not dynamic: only dynamic bodies break"
        )));
    }
    Ok(view.pose())
}

/// Hands each hit body to `break_body` (which answers whether it broke), noting its errors as
/// `body ID WHAT: ERROR`; then, with `replay`, returns the impulses the broken bodies received
/// to the bodies that gave them ([`return_impulses`]).
pub fn break_hit_bodies(
    context: &mut FractureContext<'_>,
    hits: &BTreeMap<BodyId, Hit>,
    replay: bool,
    what: &str,
    failures: &mut Vec<String>,
    mut break_body: impl FnMut(&mut FractureContext<'_>, BodyId, &Hit) -> Result<bool, FractureError>,
) {
    let mut broken = Vec::with_capacity(hits.len());
    for (id, hit) in hits {
        match break_body(context, *id, hit) {
            Ok(true) => broken.push(*id),
            Ok(false) => {}
            Err(error) => failures.push(format!("body {id:?} {what}: {error}")),
        }
    }
    if replay {
        return_impulses(context, hits, &broken, failures);
    }
}

/// A contact of a body in the step, world frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepContact {
    /// The body it touched.
    pub other: BodyId,
    /// Where, m.
    pub point: DVec3,
    /// The impulse the body received, N s.
    pub impulse: DVec3,
    /// Unit normal into the body.
    pub normal: DVec3,
    /// Penetration at the start of the step, m.
    pub depth: f64,
}

/// Every contact with a non-zero impulse of each body in `hits`, in one pass over the step's
/// contact pairs.
pub(crate) fn step_contacts(
    context: &FractureContext<'_>,
    hits: &BTreeMap<BodyId, Hit>,
) -> BTreeMap<BodyId, Vec<StepContact>> {
    let mut touching: BTreeMap<BodyId, Vec<StepContact>> = hits.keys().map(|id| (*id, Vec::new())).collect();
    for pair in context.contacts() {
        for (id, other, sign) in [(pair.body_a, pair.body_b, 1.0), (pair.body_b, pair.body_a, -1.0)] {
            let Some(list) = touching.get_mut(&id) else { continue };
            for contact in &pair.contacts {
                let impulse = contact.total_impulse() * sign;
                if impulse.length_squared() > 0.0 {
                    list.push(StepContact {
                        other,
                        point: contact.point,
                        impulse,
                        normal: contact.normal * sign,
                        depth: contact.depth,
                    });
                }
            }
        }
    }
    touching
}

/// One step of a stress-based model (SPH, boundary elements): every body whose strongest contact
/// impulse exceeds its threshold (`threshold` answers per body, `None` when it is not breakable)
/// goes to `stress` with its hit and every contact it had in the step (which answers whether it
/// broke); errors are noted in `failures` as `body ID was not stressed: ERROR`; with `replay`,
/// the impulses broken bodies received go back to the bodies that gave them.
pub(crate) fn stress_hit_bodies(
    context: &mut FractureContext<'_>,
    threshold: impl Fn(BodyId) -> Option<f64>,
    replay: bool,
    failures: &mut Vec<String>,
    mut stress: impl FnMut(&mut FractureContext<'_>, BodyId, &Hit, &[StepContact]) -> Result<bool, FractureError>,
) {
    let hits = strongest_hits(context, 0.0, threshold, replay);
    let touching = step_contacts(context, &hits);
    break_hit_bodies(
        context,
        &hits,
        replay,
        "was not stressed",
        failures,
        |context, id, hit| stress(context, id, hit, &touching[&id]),
    );
}

/// Fragments waiting for their ids: per event (an index), the spawn tickets of its fragments with
/// what the model keeps for each.
pub(crate) type Pending<B> = Vec<(usize, Vec<(SpawnTicket, B)>)>;

/// Gives each pending fragment that `spawned` lists to `adopt` with its event and new id, and
/// empties `pending`.
pub(crate) fn adopt_spawned<B>(spawned: &[Spawned], pending: &mut Pending<B>, mut adopt: impl FnMut(usize, BodyId, B)) {
    let by_ticket: BTreeMap<u32, BodyId> = spawned.iter().map(|s| (s.ticket.0, s.id)).collect();
    for (event, tickets) in std::mem::take(pending) {
        for (ticket, kept) in tickets {
            if let Some(&id) = by_ticket.get(&ticket.0) {
                adopt(event, id, kept);
            }
        }
    }
}

/// Replaces broken body `id` by its fragments: each body description with what the model keeps
/// for that fragment. Despawns the parent and queues the spawns; returns the spawn tickets with
/// the kept values, and the fragments' total momentum (world frame), which the caller compares
/// with the parent's.
pub(crate) fn replace_with_fragments<B>(
    context: &mut FractureContext<'_>,
    id: BodyId,
    fragments: Vec<(BodyDesc, B)>,
) -> Result<(Vec<(SpawnTicket, B)>, ParentMomentum), FractureError> {
    let mut after = ParentMomentum::default();
    for (desc, _) in &fragments {
        after = after + ParentMomentum::of_desc(desc)?;
    }
    context.despawn(id)?;
    let tickets = fragments
        .into_iter()
        .map(|(desc, kept)| (context.spawn(desc), kept))
        .collect();
    Ok((tickets, after))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_collision::{Collider, Cuboid, Shape};
    use shatter_engine::{BodyDesc, FractureModel};
    use std::sync::{Arc, Mutex};

    /// A hook that breaks nothing: it compares the hits found with the least threshold as the
    /// floor against those found asking every pair, and counts the hits.
    struct Compare {
        thresholds: BTreeMap<BodyId, f64>,
        hits: Arc<Mutex<usize>>,
    }

    impl FractureModel for Compare {
        fn name(&self) -> &str {
            "compare"
        }

        fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String> {
            let threshold = |id| self.thresholds.get(&id).copied();
            let floor = self.thresholds.values().copied().fold(f64::INFINITY, f64::min);
            let summary = |hits: BTreeMap<BodyId, Hit>| {
                hits.into_iter()
                    .map(|(id, hit)| (id, hit.impulse.to_array().map(f64::to_bits), hit.received.len()))
                    .collect::<Vec<_>>()
            };
            let fast = summary(strongest_hits(context, floor, threshold, true));
            let every = summary(strongest_hits(context, 0.0, threshold, true));
            assert_eq!(fast, every);
            *self.hits.lock().unwrap() += fast.len();
            Ok(())
        }
    }

    /// The floor changes no hit: unit boxes (1000 kg, resting on one another with 327 N s a
    /// step and more below) of thresholds 200 N s, 2000 N s and out of reach, dropped in a column
    /// onto the ground, find step after step the same hits with the least threshold as the floor
    /// as without one, and some bodies are hit (a floor twice the least threshold loses hits).
    #[test]
    fn impacts_floor_finds_the_hits_asking_every_pair_finds() {
        let mut world = World::new();
        let cube = |half: f64| Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(half)).unwrap()), 0.1);
        world
            .add_body(BodyDesc::fixed(cube(5.0).unwrap()).with_position(DVec3::new(0.0, -5.0, 0.0)))
            .unwrap();
        let mut thresholds = BTreeMap::new();
        for k in 0..12 {
            let position = DVec3::new(0.1 * (k % 3) as f64, 0.6 + 1.05 * k as f64, 0.0);
            let id = world
                .add_body(BodyDesc::dynamic(cube(0.5).unwrap()).with_position(position))
                .unwrap();
            thresholds.insert(id, [200.0, 2000.0, 1e6][k % 3]);
        }
        let hits = Arc::new(Mutex::new(0));
        world.add_fracture_model(Box::new(Compare {
            thresholds,
            hits: hits.clone(),
        }));
        for _ in 0..90 {
            world.step(1.0 / 30.0).unwrap();
        }
        assert!(*hits.lock().unwrap() > 10, "{} hits", hits.lock().unwrap());
    }
}
