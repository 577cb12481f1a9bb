//! Contact reduction: at most four points per pair, keeping the deepest and spanning the largest
//! area, so a resting box keeps its corners and the solver has few, well-spread rows; and the
//! same four from one step to the next while the contact persists, so warm starting finds them.
//!
//! The choice (as in Bullet's `sortCachedPoints` and Box2D's manifold reduction): the deepest
//! contact; the one farthest from it; the one farthest from the line through those two (the
//! largest triangle); then the one that adds the most area to that triangle. Distances and areas
//! are measured in the contact plane (orthogonal to the normal), so contacts stacked along the
//! normal do not count as spread. Contacts already touching come first (see [`select`]).
//!
//! Stability: each choice takes the best score, except that scores within a tolerance of the
//! best count as tied, and ties go to the lowest feature id. Taking the strict maximum instead
//! flips the choice on rounding noise whenever two candidates score alike (a box turned 45
//! degrees on another clips to a regular octagon whose eight corners are equally deep): the kept
//! four change from step to step, and warm starting finds none of last step's impulses. With the
//! band, a perturbation of the poses smaller than the tolerance can change a choice only for a
//! candidate whose score sits right at the edge of the band. The price: the first contact kept
//! may be up to the tolerance shallower than the deepest, and the area spanned up to about the
//! tolerance times the manifold's size smaller than the greedy choice's.
//!
//! How much area is kept: an inscribed quadrilateral reaches at best `2 / pi` of a smooth convex
//! set (the ellipse is the worst case) and `1 / sqrt(2)` of a regular octagon. The greedy choice
//! is followed by a swap pass (`improve`). Measured over a million random box pairs (a tilted box
//! resting on a cube, as in the `box_manifold` tests): the greedy four alone, the deepest forced
//! among them, spanned as little as 0.58 of the touching candidates' convex hull, where the best
//! four including the deepest spanned at least 0.64; with the swaps the least was 0.61. The
//! `box_manifold` tests check at least 0.6 over random pairs (the candidates not yet touching
//! count only as the spreading rule above lets them).

use glam::{DVec2, DVec3};

use super::{Contact, ContactManifold, FeatureId, MAX_CONTACTS};

/// Candidates whose scores differ by less than this times the candidate set's extent count as
/// tied (for the general path, where the caller knows no size of its own).
pub const RELATIVE_TOLERANCE: f64 = 1e-3;

/// The third and fourth contacts kept are touching ones while the best touching candidate
/// spreads the manifold at least this share of what the best candidate of all would. A stick
/// lying on a face, rocked a little, otherwise kept its speculative side corners (which project
/// beyond its bottom edge) instead of the far bottom edge it rested on, and rolled for good; a
/// tilted box landing on a face still spreads its manifold with the corners about to touch.
const SPREAD_SHARE: f64 = 0.5;

/// One contact candidate as the reduction sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Position in the contact plane, m (any orthonormal coordinates of it).
    pub plane: DVec2,
    /// Penetration, m.
    pub depth: f64,
    /// The contact's feature id: the tie-breaker.
    pub feature: FeatureId,
}

/// Which candidates are kept: indices into the candidate list, in the order they were chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    indices: [usize; MAX_CONTACTS],
    len: usize,
}

impl Kept {
    /// The kept indices, in the order they were chosen (the deepest first).
    pub fn as_slice(&self) -> &[usize] {
        &self.indices[..self.len]
    }

    fn push(&mut self, index: usize) {
        self.indices[self.len] = index;
        self.len += 1;
    }
}

/// Chooses at most [`MAX_CONTACTS`] of `candidates` as the module describes: depths and
/// distances within `tolerance` m of the best tie, and added areas within `tolerance` times the
/// manifold's length. All of them are kept when there are at most [`MAX_CONTACTS`].
pub fn select(candidates: &[Candidate], tolerance: f64) -> Kept {
    let mut kept = Kept::default();
    if candidates.len() <= MAX_CONTACTS {
        (0..candidates.len()).for_each(|i| kept.push(i));
        return kept;
    }
    // The deepest contact and the one farthest from it are chosen among the contacts already
    // touching (to within the band, so that resting contacts at zero depth do not change sides on
    // rounding noise): they carry the load, and a speculative contact a little farther out must
    // not take the place of one that is in the body (a thin bar standing on an edge kept its far
    // side's speculative corners instead of the penetrating far end of the edge, and sank into
    // the ground for good). The last two spread the manifold: a touching contact still comes
    // first unless a speculative one spreads it more than twice as far ([`SPREAD_SHARE`]).
    let touching = Touching { depth: -tolerance };
    let first = pick(candidates, touching, 0.0, &kept, tolerance, |c| c.depth);
    kept.push(first);
    let p0 = candidates[first].plane;
    let second = pick(candidates, touching, 0.0, &kept, tolerance, |c| (c.plane - p0).length());
    kept.push(second);
    let p1 = candidates[second].plane;
    let base = p1 - p0;
    let length = base.length();
    // Distance from the line p0 p1; with every candidate on one spot, all tie at zero.
    let height = |c: &Candidate| {
        if length > 0.0 {
            base.perp_dot(c.plane - p0).abs() / length
        } else {
            0.0
        }
    };
    let third = pick(candidates, touching, SPREAD_SHARE, &kept, tolerance, height);
    kept.push(third);
    let p2 = candidates[third].plane;
    let area = triangle_area(p0, p1, p2);
    // The area a candidate outside the triangle adds to it (zero inside).
    let added = |c: &Candidate| {
        triangle_area(p0, p1, c.plane) + triangle_area(p1, p2, c.plane) + triangle_area(p2, p0, c.plane) - area
    };
    let fourth = pick(candidates, touching, SPREAD_SHARE, &kept, tolerance * length, added);
    kept.push(fourth);
    improve(candidates, touching, &mut kept, tolerance * length);
    kept
}

/// Most swaps [`improve`] makes; each gains more than the band, so a few reach a local optimum
/// and this only bounds the work.
const MAX_SWAPS: usize = 8;

/// The swap pass after the greedy choice: while replacing one of the kept contacts other than the
/// deepest by an unkept one enlarges the area the four span by more than `band` (m^2), the best
/// such swap is made (gains within `band` of the best tie, ties to the lowest feature id). A
/// touching contact is replaced only by a touching one. The greedy choice alone has no area
/// guarantee once the deepest contact is forced (a tilted box's overlap kept 58 percent of what
/// its touching corners span, where four of them including the deepest span 64 percent or more);
/// the swaps leave four that no single exchange enlarges.
fn improve(candidates: &[Candidate], touching: Touching, kept: &mut Kept, band: f64) {
    let area = |kept: &Kept| {
        let [a, b, c, d] = kept.indices.map(|i| candidates[i].plane);
        quadrilateral_hull_area(a, b, c, d)
    };
    // Calls `visit(gain, feature, slot, index)` for every allowed swap.
    let swaps = |kept: &Kept, visit: &mut dyn FnMut(f64, FeatureId, usize, usize)| {
        let current = area(kept);
        for slot in 1..MAX_CONTACTS {
            let out = &candidates[kept.indices[slot]];
            for (i, candidate) in candidates.iter().enumerate() {
                if kept.as_slice().contains(&i) || (touching.holds(out) && !touching.holds(candidate)) {
                    continue;
                }
                let mut trial = *kept;
                trial.indices[slot] = i;
                visit(area(&trial) - current, candidate.feature, slot, i);
            }
        }
    };
    for _ in 0..MAX_SWAPS {
        let mut top = f64::NEG_INFINITY;
        swaps(kept, &mut |gain, _, _, _| top = top.max(gain));
        if top <= band {
            return;
        }
        // Among the swaps within the band of the best, the lowest feature id (then slot) wins.
        let mut chosen: Option<(FeatureId, usize, usize)> = None;
        swaps(kept, &mut |gain, feature, slot, i| {
            if gain >= top - band && chosen.is_none_or(|(f, ..)| feature < f) {
                chosen = Some((feature, slot, i));
            }
        });
        let (_, slot, i) = chosen.expect("the best swap is within the band of itself");
        kept.indices[slot] = i;
    }
}

/// Area of the convex hull of four points in the plane, m^2: the largest of the three
/// quadrilaterals through them (the convex one when they are in convex position) and of the four
/// triangles (when one lies inside the others' triangle).
fn quadrilateral_hull_area(a: DVec2, b: DVec2, c: DVec2, d: DVec2) -> f64 {
    // A quadrilateral's area is half the cross product of its diagonals.
    let quad = |p: DVec2, q: DVec2, r: DVec2, s: DVec2| 0.5 * (r - p).perp_dot(s - q).abs();
    [
        quad(a, b, c, d),
        quad(a, b, d, c),
        quad(a, c, b, d),
        triangle_area(a, b, c),
        triangle_area(a, b, d),
        triangle_area(a, c, d),
        triangle_area(b, c, d),
    ]
    .into_iter()
    .fold(0.0, f64::max)
}

/// Area of the triangle `a b c` in the plane, m^2.
#[inline]
fn triangle_area(a: DVec2, b: DVec2, c: DVec2) -> f64 {
    0.5 * (b - a).perp_dot(c - a).abs()
}

/// Which candidates count as touching: those at least this deep (m; a small negative number, so
/// that resting contacts at zero depth do not change sides on rounding noise). A threshold rather
/// than a list of flags, so reducing a manifold allocates nothing.
#[derive(Clone, Copy)]
struct Touching {
    depth: f64,
}

impl Touching {
    #[inline]
    fn holds(self, candidate: &Candidate) -> bool {
        candidate.depth >= self.depth
    }
}

/// The unkept candidate with the best `score`, scores within `band` of the best counting as tied
/// and ties going to the lowest feature id (then the lowest index). Touching candidates come first
/// while the best of them scores above the band and at least `share` of the best of all; only
/// then does one that is not yet touching compete.
fn pick(
    candidates: &[Candidate],
    touching: Touching,
    share: f64,
    kept: &Kept,
    band: f64,
    score: impl Fn(&Candidate) -> f64,
) -> usize {
    let unkept = |i: &usize| !kept.as_slice().contains(i);
    let best_of = |only_touching: bool| {
        (0..candidates.len())
            .filter(|i| unkept(i) && (touching.holds(&candidates[*i]) || !only_touching))
            .map(|i| score(&candidates[i]))
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let best_touching = best_of(true);
    let only_touching = best_touching > band && best_touching >= share * best_of(false);
    let open = |i: &usize| unkept(i) && (touching.holds(&candidates[*i]) || !only_touching);
    let best = best_of(only_touching);
    (0..candidates.len())
        .filter(open)
        .filter(|&i| score(&candidates[i]) >= best - band)
        .min_by_key(|&i| candidates[i].feature)
        .expect("more candidates than are kept")
}

/// Reduces `contacts` to at most [`MAX_CONTACTS`] as the module describes, in the plane
/// orthogonal to their mean normal, with ties within [`RELATIVE_TOLERANCE`] times the extent of
/// the set; the kept contacts come sorted by feature id. The input is left as it was.
pub fn reduce(contacts: &mut [Contact]) -> ContactManifold {
    let mut manifold = ContactManifold::default();
    reduce_into(contacts, &mut manifold);
    manifold
}

/// [`reduce`] writing into `manifold` (its contacts replaced).
pub fn reduce_into(contacts: &[Contact], manifold: &mut ContactManifold) {
    manifold.contacts.clear();
    if contacts.len() <= MAX_CONTACTS {
        manifold.contacts.extend_from_slice(contacts);
    } else {
        let mean = contacts.iter().map(|c| c.normal).sum::<DVec3>();
        let normal = if mean.length_squared() > 0.0 {
            mean.normalize()
        } else {
            DVec3::Y
        };
        let (u, v) = normal.any_orthonormal_pair();
        let candidates: Vec<Candidate> = contacts
            .iter()
            .map(|c| Candidate {
                plane: DVec2::new(c.point.dot(u), c.point.dot(v)),
                depth: c.depth,
                feature: c.feature,
            })
            .collect();
        let (low, high) = candidates.iter().fold(
            (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)),
            |(low, high), c| (low.min(c.plane), high.max(c.plane)),
        );
        let tolerance = RELATIVE_TOLERANCE * (high - low).length();
        let kept = select(&candidates, tolerance);
        manifold.contacts.extend(kept.as_slice().iter().map(|&i| contacts[i]));
    }
    manifold.contacts.sort_by_key(|c| c.feature);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contact(x: f64, z: f64, depth: f64, id: usize) -> Contact {
        Contact {
            point: DVec3::new(x, 0.0, z),
            normal: DVec3::Y,
            depth,
            feature: FeatureId::of_a(id),
        }
    }

    fn ids(manifold: &ContactManifold) -> Vec<usize> {
        manifold.contacts.iter().map(|c| c.feature.index()).collect()
    }

    #[test]
    fn reduce_keeps_the_deepest_and_the_corners_of_a_grid_of_contacts() {
        let mut contacts: Vec<Contact> = (0..25)
            .map(|i| contact((i % 5) as f64, (i / 5) as f64, if i == 12 { 0.1 } else { 0.01 }, i))
            .collect();
        let manifold = reduce(&mut contacts);
        assert_eq!(manifold.len(), 4);
        let ids = ids(&manifold);
        assert!(ids.contains(&12), "the deepest is kept: {ids:?}");
        // With the centre taken, the three others are corners of the 5 x 5 grid.
        let corners = [0, 4, 20, 24];
        assert_eq!(ids.iter().filter(|i| corners.contains(i)).count(), 3, "{ids:?}");
        assert!(manifold.contacts.windows(2).all(|w| w[0].feature < w[1].feature));
    }

    #[test]
    fn reduce_quadrilateral_hull_area_is_that_of_the_hull_in_any_order() {
        let [a, b, c, d] = [(0.0, 0.0), (2.0, 0.0), (2.0, 1.0), (0.0, 1.0)].map(|(x, y)| DVec2::new(x, y));
        for [p, q, r, s] in [[a, b, c, d], [a, c, b, d], [b, d, a, c], [d, a, c, b]] {
            assert_eq!(quadrilateral_hull_area(p, q, r, s), 2.0);
        }
        // One point inside the others' triangle: the triangle's area.
        let inside = DVec2::new(1.5, 0.4);
        assert_eq!(quadrilateral_hull_area(a, inside, b, c), 1.0);
        assert_eq!(quadrilateral_hull_area(inside, c, a, b), 1.0);
    }

    #[test]
    fn reduce_keeps_small_manifolds_whole() {
        let mut contacts = vec![contact(0.0, 0.0, 0.1, 3), contact(1.0, 0.0, 0.1, 1)];
        let manifold = reduce(&mut contacts);
        assert_eq!(manifold.len(), 2);
        assert_eq!(manifold.contacts[0].feature.index(), 1);
    }

    /// The eight corners of a regular octagon of circumradius 1, ids 0..8 around it, each 1 cm
    /// deep plus `noise(id)`.
    fn octagon(noise: impl Fn(usize) -> f64) -> Vec<Contact> {
        (0..8)
            .map(|i| {
                let angle = i as f64 * std::f64::consts::FRAC_PI_4;
                contact(angle.cos(), angle.sin(), 0.01 + noise(i), i)
            })
            .collect()
    }

    #[test]
    fn reduce_of_equally_deep_corners_ignores_rounding_noise_in_the_depths() {
        let reference = reduce(&mut octagon(|_| 0.0));
        // Ties go to the lowest id: corner 0, the opposite corner 4, then 2 and 6 (a square).
        assert_eq!(ids(&reference), vec![0, 2, 4, 6]);
        for seed in 0..8 {
            // Noise far below the tolerance (1e-3 of the set's 2 m extent) keeps the same four;
            // a strict maximum would follow the noise to whichever corner it makes deepest.
            let noisy = reduce(&mut octagon(|i| 1e-9 * (((i * 7 + seed) % 5) as f64 - 2.0)));
            assert_eq!(ids(&noisy), ids(&reference), "seed {seed}");
        }
        // A corner deeper by more than the tolerance is kept, and the rest are spread from it.
        let deeper = reduce(&mut octagon(|i| if i == 3 { 0.01 } else { 0.0 }));
        assert_eq!(ids(&deeper), vec![1, 3, 5, 7]);
    }

    /// A bar standing on an edge: the edge's particles are in the ground (deeper at one end), its
    /// far corners a few millimetres above it, within the speculative margin and a little wider
    /// apart. Both ends of the edge are kept before any corner that is not yet touching, and the
    /// corners fill the slots the edge, a line, leaves.
    #[test]
    fn reduce_keeps_a_penetrating_edge_before_speculative_corners_farther_out() {
        let mut contacts: Vec<Contact> = (0..11)
            .map(|i| contact(0.0, -0.1 + 0.02 * i as f64, 0.01 - 0.0005 * i as f64, i))
            .collect();
        for (k, (x, z)) in [(0.014, -0.1), (-0.014, -0.1), (0.014, 0.1), (-0.014, 0.1)]
            .into_iter()
            .enumerate()
        {
            contacts.push(contact(x, z, -0.005, 20 + k));
        }
        let manifold = reduce(&mut contacts);
        let ids = ids(&manifold);
        assert!(ids.contains(&0) && ids.contains(&10), "both ends of the edge: {ids:?}");
        assert_eq!(ids.iter().filter(|&&i| i >= 20).count(), 2, "{ids:?}");
    }

    /// Spreading the manifold, a touching contact comes before a speculative one that spreads it
    /// less than twice as far, and after one that spreads it farther.
    #[test]
    fn reduce_spreads_with_touching_contacts_unless_a_speculative_one_spreads_twice_as_far() {
        let kept = |speculative_height: f64| {
            let mut contacts = vec![
                contact(0.0, 0.0, 0.01, 0),
                contact(1.0, 0.0, 0.002, 1),
                contact(0.5, -0.5, 0.001, 2),
                contact(0.5, 0.05, 0.001, 3),
                contact(0.5, speculative_height, -0.01, 4),
                contact(0.2, speculative_height, -0.01, 5),
            ];
            ids(&reduce(&mut contacts))
        };
        // The speculative pair spreads 0.9 against the touching contact's 0.5: touching first.
        let near = kept(0.9);
        assert!(near.contains(&2) && near.contains(&0) && near.contains(&1), "{near:?}");
        assert_eq!(near.iter().filter(|&&i| i >= 4).count(), 1, "{near:?}");
        // At 1.1 they spread more than twice as far: one of them is the third.
        let far = kept(1.1);
        assert!(far.iter().any(|&i| i >= 4), "{far:?}");
    }
}
