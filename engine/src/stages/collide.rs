//! Stage `collide`, first half: the narrow phase over the candidate pairs.
//!
//! Every pair goes through `shatter_collision::collide` at the poses of the start of the step, in
//! parallel, unless the manifold cache (`manifold_cache.rs`) carries its manifold over from an
//! earlier step (a resting pair) or knows it is still apart; the results are collected in pair
//! order (already sorted by body handle), so the list is the same whatever the thread count.
//!
//! Every contact the step could make is present as a speculative contact, which the collision
//! pass then tests at the predicted positions and the solve keeps from closing more than its gap.
//! A speculative contact is kept only where the step can close its gap: within the world's margin
//! plus what the relative velocity of the two bodies at its point (gravity of this step included)
//! closes along its normal in `dt` (`shatter_collision::Closing`, which says why). The pair's
//! largest such gap bounds the manifold cache and the tests that cannot look along a normal first.
//!
//! Friction and restitution of a pair are combined here (geometric mean of the frictions, the
//! larger restitution; see [`crate::Material`]).

use bytemuck::Zeroable;
use glam::DVec3;
use rayon::prelude::*;
use shatter_collision::narrow_phase::pair_margin;
use shatter_collision::{Closing, Contact, ContactManifold, collide_within_margin_into};
use shatter_integrators::BodyKind;
use shatter_integrators::parallel::task_len;

use crate::contact_cache::WarmStart;
use crate::contacts::{ContactPoint, PairContacts, tangent_basis};
use crate::error::EngineError;
use crate::handle::BodyId;
use crate::manifold_cache::{CachedManifold, ManifoldCache, Relative};
use crate::settings::WorldSettings;
use crate::store::BodyStore;
use smallvec::SmallVec;

/// What the narrow phase reads of one body for each of its pairs, worked out once a step: a
/// body has a dozen candidate pairs in a heap of debris, and its angular velocity (a rotation of
/// its body-frame value) and reach (a root) cost more than the reads.
#[derive(Clone, Copy, Debug, Default)]
struct BodyMotion {
    /// Centre, velocity and angular velocity as the step begins (world frame, m, m/s, rad/s):
    /// what the last step left, close to zero for a body at rest on others.
    now: [DVec3; 3],
    /// The velocity as the solve will see it, m/s: an awake dynamic body's already carries this
    /// step's gravity.
    pushed: DVec3,
    /// Largest distance from the body's origin (its centre of mass) to its bounds, m; zero for
    /// an unbounded body.
    reach: f64,
}

impl BodyMotion {
    /// Body `dense` of `bodies` in a step of `dt` s under `gravity` (m/s^2).
    fn of(bodies: &BodyStore, dense: usize, gravity: DVec3, dt: f64) -> Self {
        let state = &bodies.states()[dense];
        let falls = bodies.kinds()[dense] == BodyKind::Dynamic && bodies.is_moving(dense);
        let push = if falls { gravity * dt } else { DVec3::ZERO };
        Self {
            now: [state.position, state.linear_velocity, state.angular_velocity()],
            pushed: state.linear_velocity + push,
            reach: bodies.records()[dense].collider.reach().unwrap_or(0.0),
        }
    }

    /// Centre, velocity and angular velocity as the solve will see them.
    fn motion(&self) -> [DVec3; 3] {
        let [position, _, spin] = self.now;
        [position, self.pushed, spin]
    }
}

/// Candidate pairs per parallel task. Fixed, so the tasks (and everything they write) do not
/// depend on the thread count; large enough that a task's overhead is small against 64 box-box
/// tests, small enough that two threads share a pile's few thousand pairs evenly.
const CHUNK: usize = 64;

/// Records (or cache entries) written by one thread in a row when they are written on the pool.
const WRITE_RUN: usize = 64;

/// Where a pair's manifold cache entry for the next step is.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// Last step's entry, reused: its index in the previous cache.
    Kept(u32),
    /// A new entry: its index in the chunk's list of them.
    Made(u32),
}

/// A candidate pair that touches: its dense bodies and where its contacts lie in its task's list.
#[derive(Clone, Debug)]
struct Touching {
    pair: [u32; 2],
    contacts: core::ops::Range<u32>,
}

/// What one task of the narrow phase found, compactly: the touching pairs and their contacts as
/// the collision crate gives them (a quarter of the size of the step's [`PairContacts`], which
/// are then written once, straight into the step's list), and the pairs' manifold cache entries.
#[derive(Clone, Debug, Default)]
struct Chunk {
    touching: Vec<Touching>,
    contacts: Vec<Contact>,
    /// The cache entry of every pair that has one (touching, or apart by a known gap), in order.
    entries: Vec<Entry>,
    /// The entries made afresh.
    made: Vec<CachedManifold>,
    /// The pair being tested (kept to write into, a manifold being a few hundred bytes).
    manifold: ContactManifold,
    /// How many of its touching pairs carried their manifold over from an earlier step.
    carried: usize,
    /// The first failure among its pairs, if any.
    error: Option<EngineError>,
}

/// What the narrow phase reads.
pub(crate) struct Narrow<'a> {
    /// The bodies, at the start of the step.
    pub(crate) bodies: &'a BodyStore,
    /// Last step's manifolds.
    pub(crate) previous: &'a ManifoldCache,
    /// The step, s.
    pub(crate) dt: f64,
    /// The world's contact margin, m.
    pub(crate) margin: f64,
    /// [`crate::WorldSettings::contact_reuse_distance`], m.
    pub(crate) reuse_distance: f64,
    /// The world's gravity, m/s^2.
    pub(crate) gravity: DVec3,
}

impl<'a> Narrow<'a> {
    /// The job for a step of `dt` s over `bodies`, with last step's manifolds `previous` and the
    /// world's contact margin and reuse distance from `settings`.
    pub(crate) fn new(bodies: &'a BodyStore, previous: &'a ManifoldCache, settings: &WorldSettings, dt: f64) -> Self {
        Self {
            bodies,
            previous,
            dt,
            margin: settings.contact_margin,
            reuse_distance: settings.contact_reuse_distance,
            gravity: settings.gravity,
        }
    }
}

impl Chunk {
    /// Tests `pairs` (bodies moving as `motions` says), replacing what the chunk held; stops at
    /// the first failure.
    fn run(&mut self, job: &Narrow<'_>, motions: &[BodyMotion], pairs: &[[u32; 2]]) {
        self.touching.clear();
        self.contacts.clear();
        self.entries.clear();
        self.made.clear();
        self.carried = 0;
        self.error = None;
        let bodies = job.bodies;
        let records = bodies.records();
        // Pairs and cache are both sorted by handles: one search, then a walk.
        let previous = job.previous.entries();
        let mut cursor = pairs.first().map_or(0, |&[a, b]| {
            let key = (records[a as usize].id, records[b as usize].id);
            previous.partition_point(|e| (e.body_a, e.body_b) < key)
        });
        for &[a, b] in pairs {
            let (va, vb) = (bodies.view(a as usize), bodies.view(b as usize));
            let key = (va.record.id, vb.record.id);
            while cursor < previous.len() && (previous[cursor].body_a, previous[cursor].body_b) < key {
                cursor += 1;
            }
            let (motion_a, motion_b) = (&motions[a as usize], &motions[b as usize]);
            let poses = [va.pose(), vb.pose()];
            let closing = Closing::of_bodies(job.margin, job.dt, motion_a.motion(), motion_b.motion());
            let (ca, cb) = (&va.record.collider, &vb.record.collider);
            let margin = pair_margin(&closing, ca, &poses[0], cb, &poses[1]);
            let relative = Relative::of(&poses[0], motion_a.reach, &poses[1], motion_b.reach);
            let start = self.contacts.len();
            let reused = previous
                .get(cursor)
                .filter(|e| (e.body_a, e.body_b) == key && e.reusable(&relative, margin, job.reuse_distance));
            if let Some(cached) = reused {
                cached.contacts_at([&poses[0], &poses[1]], &relative, margin, &mut self.contacts);
                // A pair whose carried contacts all fell beyond the margin is tested afresh next.
                if cached.count == 0 || self.contacts.len() > start {
                    self.entries.push(Entry::Kept(cursor as u32));
                }
                // Only those the step can close, as a fresh test keeps.
                let mut kept = start;
                for k in start..self.contacts.len() {
                    if closing.keeps(&self.contacts[k]) {
                        self.contacts[kept] = self.contacts[k];
                        kept += 1;
                    }
                }
                self.contacts.truncate(kept);
                self.carried += usize::from(self.contacts.len() > start);
            } else {
                let (pa, pb) = (&poses[0], &poses[1]);
                if let Err(error) = collide_within_margin_into(ca, pa, cb, pb, &closing, margin, &mut self.manifold) {
                    self.error = Some(EngineError::geometry("narrow phase")(error));
                    return;
                }
                self.contacts.extend_from_slice(&self.manifold.contacts);
                // Gravity's push is what the contacts take back: a body at rest keeps the
                // velocity it ended the last step with.
                let moving = relative.motion_bound([motion_a.now, motion_b.now], margin, job.dt);
                if CachedManifold::worth_making(&self.manifold, &relative, margin, job.reuse_distance, moving) {
                    let ids = [key.0, key.1];
                    self.entries.push(Entry::Made(self.made.len() as u32));
                    self.made
                        .push(CachedManifold::new(ids, [pa, pb], &relative, margin, &self.manifold));
                }
            }
            if self.contacts.len() > start {
                self.touching.push(Touching {
                    pair: [a, b],
                    contacts: start as u32..self.contacts.len() as u32,
                });
            }
        }
    }

    /// The manifold cache entry `k` of the chunk, for the next step.
    fn entry(&self, previous: &ManifoldCache, k: usize) -> CachedManifold {
        match self.entries[k] {
            Entry::Kept(i) => previous.entries()[i as usize],
            Entry::Made(i) => self.made[i as usize],
        }
    }

    /// Writes the step's record of touching pair `k` into `record`, over whatever it held: its
    /// contacts are written straight into the record's own list rather than built apart and
    /// moved in (a record is 760 bytes, most of it the room for four contacts).
    fn write_pair_contacts(&self, bodies: &BodyStore, k: usize, record: &mut PairContacts) {
        let Touching {
            pair: [a, b],
            ref contacts,
            ..
        } = self.touching[k];
        let (ra, rb) = (&bodies.records()[a as usize], &bodies.records()[b as usize]);
        record.body_a = ra.id;
        record.body_b = rb.id;
        record.friction = (ra.material.friction * rb.material.friction).sqrt();
        record.restitution = ra.material.restitution.max(rb.material.restitution);
        record.dense = [a, b];
        // Analytic manifolds share one normal: its tangents are computed once.
        let mut basis = (DVec3::NAN, [DVec3::ZERO; 2]);
        let mut point = |c: &Contact| {
            if c.normal != basis.0 {
                basis = (c.normal, tangent_basis(c.normal));
            }
            ContactPoint {
                point: c.point,
                normal: c.normal,
                depth: c.depth,
                feature: c.feature,
                tangents: basis.1,
                collision_impulse: 0.0,
                normal_impulse: 0.0,
                friction_impulse: [0.0; 2],
                warm_start: WarmStart::default(),
            }
        };
        // Written over the record's own points where it has them (each is 176 bytes: built and
        // then pushed, every point was copied once more).
        let source = &self.contacts[contacts.start as usize..contacts.end as usize];
        record.contacts.truncate(source.len());
        let kept = record.contacts.len();
        for (slot, c) in record.contacts.iter_mut().zip(source) {
            *slot = point(c);
        }
        for c in &source[kept..] {
            record.contacts.push(point(c));
        }
    }
}

/// Reusable buffers of the narrow phase, kept from step to step so that a step allocates nothing
/// here once the scene has been seen.
#[derive(Clone, Debug, Default)]
pub(crate) struct NarrowScratch {
    /// Every body's motion this step, dense order.
    motions: Vec<BodyMotion>,
    chunks: Vec<Chunk>,
    /// Every touching pair as (chunk, index in it), in pair order.
    touching: Vec<(u32, u32)>,
    /// Every cache entry as (chunk, index in it), in pair order.
    entries: Vec<(u32, u32)>,
    /// Touching pairs whose manifold was carried over, since the count was last taken.
    pub(crate) carried: usize,
}

/// Writes into `out`, after its first `live` records (any records past those are spare: written
/// over or dropped), the contacts of every candidate pair at the start-of-step poses, empty pairs
/// dropped, in pair order, and likewise into `manifolds` after its first `cached` entries their
/// cache entries for the next step (touching pairs, and pairs apart by a known gap; none when
/// reuse is off). A pair reuses last step's
/// entry when the manifold cache allows (see `manifold_cache.rs`), else goes through the narrow
/// phase. Pairs are cut into fixed chunks that
/// are tested in parallel, each into its own reused lists; the step's records of the touching
/// pairs are then written in parallel straight into `out`, in order. Fails with the first failure
/// in pair order.
pub(crate) fn narrow_phase(
    job: &Narrow<'_>,
    pairs: &[[u32; 2]],
    scratch: &mut NarrowScratch,
    (out, live): (&mut Vec<PairContacts>, usize),
    (manifolds, cached): (&mut Vec<CachedManifold>, usize),
) -> Result<(), EngineError> {
    let tasks = pairs.len().div_ceil(CHUNK);
    if scratch.chunks.len() < tasks {
        scratch.chunks.resize_with(tasks, Chunk::default);
    }
    let bodies = job.bodies;
    scratch.motions.clear();
    if pairs.is_empty() {
        out.truncate(live);
        manifolds.truncate(cached);
        // A world asleep has no pairs: nothing reads the motions, so none are computed.
        scratch.touching.clear();
        scratch.entries.clear();
        return Ok(());
    }
    // Left whole on the step's thread in a step too small to share work (`parallel::alone`).
    scratch.motions.par_extend(
        (0..bodies.len())
            .into_par_iter()
            .with_min_len(task_len(1))
            .map(|dense| BodyMotion::of(bodies, dense, job.gravity, job.dt)),
    );
    let (chunks, motions) = (&mut scratch.chunks[..tasks], &scratch.motions[..]);
    shatter_integrators::parallel::for_each_mut(chunks, 1, &|c, chunk| {
        chunk.run(job, motions, &pairs[c * CHUNK..((c + 1) * CHUNK).min(pairs.len())])
    });
    scratch.touching.clear();
    scratch.entries.clear();
    for (c, chunk) in chunks.iter_mut().enumerate() {
        if let Some(error) = chunk.error.take() {
            out.truncate(live);
            manifolds.truncate(cached);
            return Err(error);
        }
        scratch.carried += chunk.carried;
        let c = c as u32;
        scratch
            .touching
            .extend((0..chunk.touching.len() as u32).map(|k| (c, k)));
        scratch.entries.extend((0..chunk.entries.len() as u32).map(|k| (c, k)));
    }
    let chunks = &scratch.chunks;
    let blank_record = || PairContacts {
        body_a: BodyId::zeroed(),
        body_b: BodyId::zeroed(),
        friction: 0.0,
        restitution: 0.0,
        contacts: SmallVec::new(),
        dense: [0; 2],
    };
    write_after((out, live), &scratch.touching, blank_record, |&(c, k), record| {
        chunks[c as usize].write_pair_contacts(job.bodies, k as usize, record)
    });
    write_after(
        (manifolds, cached),
        &scratch.entries,
        CachedManifold::zeroed,
        |&(c, k), entry| *entry = chunks[c as usize].entry(job.previous, k as usize),
    );
    Ok(())
}

/// Makes `list` its first `live` entries followed by one entry per item of `sources`, each
/// written by `write` on the pool. The entries past `live` are spare (an earlier step's) and are
/// written over where they lie; only entries beyond them are made (`blank`, then written).
fn write_after<T: Send, S: Sync>(
    (list, live): (&mut Vec<T>, usize),
    sources: &[S],
    blank: impl FnMut() -> T,
    write: impl Fn(&S, &mut T) + Sync + Send,
) {
    list.resize_with(live + sources.len(), blank);
    shatter_integrators::parallel::for_each_mut(&mut list[live..], WRITE_RUN, &|k, entry| write(&sources[k], entry));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BodyDesc, World, WorldSettings};
    use glam::DQuat;
    use shatter_collision::{Collider, Cuboid, HalfSpace, Shape, Sphere};

    /// A ground, four boxes (two resting on it, two tilted across them) and a column of three
    /// balls: pairs of one to four contacts, and pairs apart.
    fn heap() -> World {
        let mut world = World::try_with_settings(WorldSettings::default()).unwrap();
        let ground = Shape::HalfSpace(HalfSpace::ground(0.0).unwrap());
        world
            .add_body(BodyDesc::fixed(Collider::from_shape(ground, 1.0).unwrap()))
            .unwrap();
        let cube = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(0.5)).unwrap()), 0.25).unwrap();
        let boxes = [
            (DVec3::new(0.0, 0.5, 0.0), DQuat::IDENTITY),
            (DVec3::new(1.05, 0.5, 0.0), DQuat::IDENTITY),
            (DVec3::new(0.5, 1.2, 0.0), DQuat::from_rotation_z(0.3)),
            (DVec3::new(0.6, 1.9, 0.1), DQuat::from_rotation_x(0.2)),
        ];
        for (position, orientation) in boxes {
            let desc = BodyDesc::dynamic(cube.clone())
                .with_position(position)
                .with_orientation(orientation);
            world.add_body(desc).unwrap();
        }
        let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.25).unwrap()), 0.1).unwrap();
        for level in 0..3 {
            let desc = BodyDesc::dynamic(ball.clone()).with_position(DVec3::new(4.0, 0.25 + 0.499 * level as f64, 0.0));
            world.add_body(desc).unwrap();
        }
        world
    }

    /// The narrow phase writes the same records and cache entries over a list's spare entries,
    /// fewer or more than it needs, as into an empty list, and leaves the live entries before
    /// them as they were.
    #[test]
    fn collide_narrow_phase_writes_over_spare_entries_as_into_an_empty_list() {
        let world = heap();
        let count = world.bodies.len() as u32;
        let pairs: Vec<[u32; 2]> = (0..count).flat_map(|a| (a + 1..count).map(move |b| [a, b])).collect();
        let job = Narrow::new(&world.bodies, &world.manifold_cache, &world.settings, 1.0 / 30.0);
        let run = |out: &mut Vec<PairContacts>, live: usize, manifolds: &mut Vec<CachedManifold>, cached: usize| {
            let mut scratch = NarrowScratch::default();
            narrow_phase(&job, &pairs, &mut scratch, (out, live), (manifolds, cached)).unwrap();
        };
        let (mut records, mut entries) = (Vec::new(), Vec::new());
        run(&mut records, 0, &mut entries, 0);
        let sizes: Vec<usize> = records.iter().map(|pair| pair.contacts.len()).collect();
        assert!(sizes.contains(&1) && sizes.contains(&4), "contacts per pair: {sizes:?}");
        assert!(!entries.is_empty());
        // Spare entries unlike any the narrow phase writes: another pair's, four contacts each.
        let mut junk = records[sizes.iter().position(|&n| n == 4).unwrap()].clone();
        (junk.body_a, junk.body_b, junk.dense) = (junk.body_b, junk.body_a, [7, 9]);
        let mut junk_entry = entries[0];
        junk_entry.count = 3;
        junk_entry.separation = 42.0;
        let spares = |needed: usize| [1, needed - 1, needed, needed + 5];
        for live in [0, 2] {
            for (spare, spare_entries) in spares(records.len()).into_iter().zip(spares(entries.len())) {
                let mut out = vec![junk.clone(); live + spare];
                let mut manifolds = vec![junk_entry; live + spare_entries];
                run(&mut out, live, &mut manifolds, live);
                assert!(out[..live].iter().all(|record| *record == junk), "live {live}");
                assert!(out[live..] == records[..], "live {live}, spare {spare}: records differ");
                assert!(manifolds[..live].iter().all(|entry| *entry == junk_entry));
                assert!(
                    manifolds[live..] == entries[..],
                    "live {live}, spare {spare_entries}: entries differ"
                );
            }
        }
    }
}
