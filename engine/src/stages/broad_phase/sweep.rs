//! The proxy pairs of a step in which most bodies move, by sort and sweep over their swept boxes:
//! the boxes sorted by where they start along one axis, each box meets only the boxes that start
//! before it ends.
//!
//! When most bodies move, the persistent pair set of the collision crate's [`BroadPhase`] saves
//! nothing: every one of its pairs has to be read, looked up and filtered by the swept boxes each
//! step. Its fat boxes are grown by a margin fixed in metres (0.1 m, Box2D's, for bodies of about
//! a metre), so around a heap of centimetre-sized debris they overlap far more often than the
//! swept boxes do: the broken table of Su 2009 Fig. 8 holds 455 000 fat pairs for 79 000 swept
//! ones, and reading them was most of the broad phase's 14 ms a frame. The swept boxes sorted
//! along the axis on which their centres spread most give those pairs directly.
//!
//! The pairs are exactly those of the pair set: two bodies with proxies whose swept boxes overlap
//! (closed boxes, [`Aabb::overlaps`]), one of them moving, their roles wanting the pair, not
//! jointed; each fat box holds its swept box, so the pair set holds every such pair. Test builds
//! check the two against each other every time. The sort and the sweep depend on the boxes and
//! dense indices alone, and the pairs are sorted by handle after, so the thread count cannot
//! change the list.
//!
//! While the sweep serves, the broad phase still takes every moved box, but its trees and pair
//! set are brought up to date only by the next search that reads them (a step with fewer bodies
//! moving), all moves at once.
//!
//! [`BroadPhase`]: shatter_collision::BroadPhase

use rayon::prelude::*;
use shatter_collision::Aabb;

use super::{BroadScratch, Found, Role, ordered, wanted};
use crate::handle::BodyId;
use crate::store::BodyStore;

/// Boxes per parallel task of the sweep: fixed, so the tasks do not depend on the thread count.
const BOXES_PER_TASK: usize = 128;

/// How many fat-box margins across the mean swept box may be for the sweep to serve.
const SMALL_BODY_MARGINS: f64 = 4.0;

/// Whether the bodies' swept boxes are, on average across their longest side, under
/// [`SMALL_BODY_MARGINS`] times the fat boxes' `margin` (m): then the fat boxes overlap far more
/// often than the swept boxes (a fat box several times its body's size), and the sweep beats
/// reading the broad phase's pairs. Around bodies of about a metre the pair set holds little
/// more than the pairs, and a sweep along one axis meets every box of a slab of the heap (a
/// lattice of 1000 unit cubes: 100 000 boxes met for 1000 pairs, 0.4 ms against the list's
/// 0.05 ms).
pub(super) fn bodies_are_small(swept: &[super::Swept], margin: f64) -> bool {
    let (total, count) = (swept.iter().filter_map(super::Swept::swept)).fold((0.0, 0usize), |(total, count), b| {
        (total + b.size().max_element(), count + 1)
    });
    count > 0 && total < SMALL_BODY_MARGINS * margin * count as f64
}

/// The axis (0, 1, 2 for x, y, z) along which the centres of `boxes` spread furthest: sweeping
/// along it, a box meets the fewest boxes that only overlap it along that axis.
fn sweep_axis<'a>(boxes: impl Iterator<Item = &'a Aabb>) -> usize {
    let mut low = [f64::INFINITY; 3];
    let mut high = [f64::NEG_INFINITY; 3];
    for b in boxes {
        let centre = b.center().to_array();
        for axis in 0..3 {
            low[axis] = low[axis].min(centre[axis]);
            high[axis] = high[axis].max(centre[axis]);
        }
    }
    let spread = |axis: usize| high[axis] - low[axis];
    (0..3).fold(0, |best, axis| if spread(axis) > spread(best) { axis } else { best })
}

/// A swept box in the sweep order: its start along the sweep axis, its body, the box, and what
/// the pair tests read of the body (its handle, whether it moves, its role), so that a box's
/// sweep reads only the entries it meets.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    start: f64,
    dense: u32,
    moving: bool,
    role: Role,
    id: BodyId,
    aabb: Aabb,
}

/// The proxy pairs of the search into `scratch.proxy_pairs`, sorted by handles, from the swept
/// boxes (see the module docs). `connected` lists the jointed pairs (sorted handle bits).
pub(super) fn pairs_by_sweep(bodies: &BodyStore, connected: &[(u64, u64)], scratch: &mut BroadScratch) {
    let records = bodies.records();
    let swept = &scratch.swept;
    // Only bodies with a proxy take part, as in the pair set.
    let boxed = |dense: usize| records[dense].proxy.and(swept[dense].swept());
    let axis = sweep_axis((0..swept.len()).filter_map(boxed));
    let order = &mut scratch.sweep_order;
    order.clear();
    order.extend((0..swept.len()).filter_map(|dense| {
        boxed(dense).map(|&aabb| Entry {
            start: aabb.min[axis],
            dense: dense as u32,
            moving: bodies.is_moving(dense),
            role: swept[dense].role,
            id: records[dense].id,
            aabb,
        })
    }));
    order.par_sort_unstable_by(|x, y| x.start.total_cmp(&y.start).then(x.dense.cmp(&y.dense)));
    let order = &scratch.sweep_order;
    // Boxes that overlap, with the list's other tests: one moving body, roles, joints.
    let pair = |first: &Entry, second: &Entry| -> Option<Found> {
        if !((first.moving || second.moving) && wanted(first.role, second.role)) {
            return None;
        }
        let (a, b) = (first.id, second.id);
        let bits = (a.to_bits().min(b.to_bits()), a.to_bits().max(b.to_bits()));
        let (i, j) = (first.dense as usize, second.dense as usize);
        connected.binary_search(&bits).is_err().then(|| ordered(a, i, b, j))
    };
    scratch.proxy_pairs.clear();
    scratch
        .proxy_pairs
        .par_extend(
            order
                .par_iter()
                .enumerate()
                .with_min_len(BOXES_PER_TASK)
                .flat_map_iter(|(k, first)| {
                    let end = first.aabb.max[axis];
                    order[k + 1..]
                        .iter()
                        .take_while(move |second| second.start <= end)
                        .filter(move |second| first.aabb.overlaps(&second.aabb))
                        .filter_map(move |second| pair(first, second))
                }),
        );
    // Live bodies have distinct slots, so the slots order pairs as the handles do, and the
    // unstable sort has one answer.
    scratch
        .proxy_pairs
        .par_sort_unstable_by_key(|(a, b, _)| (u64::from(a.index) << 32) | u64::from(b.index));
}
