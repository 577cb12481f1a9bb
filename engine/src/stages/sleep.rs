//! Stage `sleep`: islands at rest go to sleep; islands touched by something awake wake up.
//!
//! Every awake dynamic body counts how long it has stayed below both velocity thresholds
//! ([`crate::SleepSettings`]). Islands are the connected groups of dynamic bodies linked by the
//! step's contacts and joints (see [`crate::islands`]); an island sleeps when its least rested
//! body has rested for `time_to_sleep`: its velocities are zeroed and it leaves the step (no
//! gravity, no integration, no pairs among its own bodies) until it is woken. Each sleeper records
//! its island's tag (the slot index of the island's lowest body), so the island wakes as a whole.
//!
//! Waking: a joint between a sleeping body and a moving one wakes the sleeper's island at the
//! start of the step; a contact does so in the collide stage, which then finds the woken bodies'
//! own pairs and contacts, so they take part in the step fully (Box2D v3 also wakes islands
//! between collide and solve). Only a chain of islands too long to wake in one step leaves wake
//! requests, granted here at the end of the step; until then such a sleeper acts as a fixed body.
//! User calls that change a body's motion wake its island at once.

use glam::DVec3;
use shatter_integrators::BodyKind;

use crate::islands::UnionFind;
use crate::settings::SleepSettings;
use crate::stages::integrate::SplitVelocity;
use crate::store::{BodyMotion, BodyStore};

/// What the stage did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SleepOutcome {
    /// Bodies that fell asleep.
    pub(crate) fell_asleep: usize,
    /// Bodies woken by requests.
    pub(crate) woken: usize,
}

/// Wakes every sleeping dynamic body of island `tag`; returns their dense indices, ascending.
pub(crate) fn wake_island(bodies: &mut BodyStore, tag: u32) -> Vec<usize> {
    let sleepers: Vec<usize> = (0..bodies.len())
        .filter(|&i| {
            let m = bodies.motion()[i];
            bodies.kinds()[i] == BodyKind::Dynamic && !m.is_awake() && !m.is_quarantined() && m.island == tag
        })
        .collect();
    if !sleepers.is_empty() {
        bodies.update_motion(|motion| {
            for &i in &sleepers {
                motion[i].flags |= BodyMotion::AWAKE;
                motion[i].resting_time = 0.0;
            }
        });
    }
    sleepers
}

/// The wake request a link between bodies `a` and `b` (dense) files, if any: the island tag of a
/// sleeper linked to a body that moves.
pub(crate) fn wake_request(bodies: &BodyStore, a: usize, b: usize) -> Option<u32> {
    let asleep = |i: usize| {
        let m = bodies.motion()[i];
        bodies.kinds()[i] == BodyKind::Dynamic && !m.is_awake() && !m.is_quarantined()
    };
    let moves = |i: usize| {
        let state = bodies.states()[i];
        bodies.is_awake_dynamic(i)
            || (bodies.kinds()[i] == BodyKind::Kinematic
                && (state.linear_velocity != DVec3::ZERO || state.body_angular_velocity != DVec3::ZERO))
    };
    if asleep(a) && moves(b) {
        Some(bodies.motion()[a].island)
    } else if asleep(b) && moves(a) {
        Some(bodies.motion()[b].island)
    } else {
        None
    }
}

/// The sleep stage's arrays, kept from step to step so that a step costs time in proportion to
/// its moving bodies and links, not to every body in the world.
#[derive(Debug, Default)]
pub(crate) struct SleepScratch {
    /// The step's members (awake dynamic bodies and dynamic bodies linked to another dynamic
    /// body), dense indices, ascending.
    members: Vec<usize>,
    /// Member number of each dense body, [`NOT_MEMBER`] outside the step's members; reset after
    /// every step, so only members' entries are ever written.
    number: Vec<u32>,
    /// Per member: `None` when not awake, else whether it is slow enough to rest.
    resting: Vec<Option<bool>>,
    /// Per member: the least resting time of its island (when the member is the island's root).
    least: Vec<f64>,
    /// The members' islands, and each member's root.
    islands: UnionFind,
    roots: Vec<usize>,
}

/// [`SleepScratch::number`] of a body that is not among the step's members.
const NOT_MEMBER: u32 = u32::MAX;

/// Grants `requests`, counts resting time, and puts resting islands to sleep. `links` are the
/// step's contact and joint pairs as dense indices; `pushed` the step's split (penetration
/// correction) velocities. A body still being pushed out of a penetration is not at rest, however
/// slowly it really moves: asleep, it would keep the penetration (a body spawned overlapping
/// another was put to sleep 7 mm deep, its split velocity still 5 cm/s).
///
/// Islands are found among the step's members only: the awake dynamic bodies and the dynamic
/// bodies linked to another dynamic body. A body outside them is neither awake nor linked, so it
/// neither sleeps nor keeps anyone awake.
pub(crate) fn run(
    bodies: &mut BodyStore,
    links: &[[u32; 2]],
    pushed: &[SplitVelocity],
    requests: &mut Vec<u32>,
    dt: f64,
    settings: &SleepSettings,
    scratch: &mut SleepScratch,
) -> SleepOutcome {
    let mut outcome = SleepOutcome::default();
    requests.sort_unstable();
    requests.dedup();
    for tag in requests.drain(..) {
        outcome.woken += wake_island(bodies, tag).len();
    }
    if !settings.enabled {
        return outcome;
    }
    let dynamic = |bodies: &BodyStore, i: usize| bodies.kinds()[i] == BodyKind::Dynamic;
    // Only awake bodies count resting time or fall asleep: with none, there is nothing to do.
    if !bodies.moving().iter().any(|&i| dynamic(bodies, i as usize)) {
        return outcome;
    }
    let SleepScratch {
        members,
        number,
        resting,
        least,
        islands,
        roots,
    } = scratch;
    members.clear();
    members.extend(
        bodies
            .moving()
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| dynamic(bodies, i)),
    );
    let dynamic_link = |bodies: &BodyStore, &[a, b]: &[u32; 2]| {
        let (a, b) = (a as usize, b as usize);
        (dynamic(bodies, a) && dynamic(bodies, b)).then_some([a, b])
    };
    members.extend(links.iter().filter_map(|link| dynamic_link(bodies, link)).flatten());
    members.sort_unstable();
    members.dedup();
    number.resize(bodies.len(), NOT_MEMBER);
    for (k, &i) in members.iter().enumerate() {
        number[i] = k as u32;
    }
    // Per member: None when not awake, else whether it is slow enough to rest. Decided before
    // writing the motion records so no copy of the states is needed.
    let slow = |linear: DVec3, angular: DVec3| {
        linear.length() < settings.linear_threshold && angular.length() < settings.angular_threshold
    };
    resting.clear();
    resting.resize(members.len(), None);
    for &i in bodies.moving() {
        let i = i as usize;
        if dynamic(bodies, i) {
            let s = &bodies.states()[i];
            resting[number[i] as usize] = Some(slow(s.linear_velocity, s.body_angular_velocity));
        }
    }
    for split in pushed {
        let member = number.get(split.dense as usize).copied().unwrap_or(NOT_MEMBER);
        if member != NOT_MEMBER && resting[member as usize] == Some(true) && !slow(split.linear, split.angular) {
            resting[member as usize] = Some(false);
        }
    }
    bodies.update_resting_times(|i, time| match number.get(i).map(|&k| resting.get(k as usize)) {
        Some(Some(Some(true))) => time + dt,
        Some(Some(Some(false))) => 0.0,
        _ => time,
    });
    // Members are numbered in ascending dense order and union-find keeps the lowest member as
    // the representative, so each island's root is its lowest body, as the tags say.
    islands.reset(members.len());
    for [a, b] in links.iter().filter_map(|link| dynamic_link(bodies, link)) {
        islands.union(number[a] as usize, number[b] as usize);
    }
    islands.roots_into(roots);
    // Least resting time per island; an island with any member not awake (a sleeper that was
    // linked but not woken, or a quarantined body) stays as it is.
    least.clear();
    least.resize(members.len(), f64::INFINITY);
    for (k, &i) in members.iter().enumerate() {
        let time = if resting[k].is_some() {
            bodies.motion()[i].resting_time
        } else {
            f64::NEG_INFINITY
        };
        least[roots[k]] = least[roots[k]].min(time);
    }
    let sleepers: Vec<(usize, usize)> = (0..members.len())
        // Summed time steps fall short of their product by rounding (15 x 1/30 < 0.5); that must
        // not cost a whole step.
        .filter(|&k| resting[k].is_some() && least[roots[k]] >= settings.time_to_sleep * (1.0 - 1e-9))
        .map(|k| (members[k], members[roots[k]]))
        .collect();
    for &i in members.iter() {
        number[i] = NOT_MEMBER;
    }
    if !sleepers.is_empty() {
        let (states, _, _) = bodies.dynamics_mut();
        for &(i, _) in &sleepers {
            states[i].linear_velocity = DVec3::ZERO;
            states[i].body_angular_velocity = DVec3::ZERO;
        }
        let tags: Vec<u32> = sleepers
            .iter()
            .map(|&(_, root)| bodies.records()[root].id.index)
            .collect();
        bodies.update_motion(|motion| {
            for (&(i, _), &tag) in sleepers.iter().zip(&tags) {
                motion[i].flags &= !BodyMotion::AWAKE;
                motion[i].island = tag;
            }
        });
    }
    outcome.fell_asleep = sleepers.len();
    outcome
}
