//! Contact reduction: at most four points per pair, keeping the deepest and spanning the largest
//! area, so a resting box keeps its corners and the solver has few, well-spread rows.
//!
//! The choice (as in Bullet and Box2D's manifold reduction): the deepest contact; the one
//! farthest from it; the one making the largest triangle with those two; then the one that adds
//! the most area to that triangle. Distances and areas are measured in the plane orthogonal to
//! the mean normal, so contacts stacked along the normal do not count as spread.

use glam::DVec3;

use super::{Contact, ContactManifold, MAX_CONTACTS};

/// Reduces `contacts` to at most [`MAX_CONTACTS`] and sorts them by feature id (ties broken by
/// position order of the input). The input is reordered.
pub fn reduce(contacts: &mut [Contact]) -> ContactManifold {
    let mut manifold = ContactManifold::default();
    if contacts.len() <= MAX_CONTACTS {
        manifold.contacts.extend_from_slice(contacts);
    } else {
        let mean = contacts.iter().map(|c| c.normal).sum::<DVec3>();
        let normal = if mean.length_squared() > 0.0 {
            mean.normalize()
        } else {
            DVec3::Y
        };
        let flat = |p: DVec3| p - normal * normal.dot(p);
        let by = |score: &dyn Fn(&Contact) -> f64, chosen: &[usize]| -> Option<usize> {
            // Highest score among the unchosen; ties go to the earliest, so the result is
            // deterministic.
            (0..contacts.len())
                .filter(|i| !chosen.contains(i))
                .fold(None, |best: Option<(usize, f64)>, i| {
                    let s = score(&contacts[i]);
                    match best {
                        Some((_, b)) if s <= b => best,
                        _ => Some((i, s)),
                    }
                })
                .map(|(i, _)| i)
        };
        let mut chosen: Vec<usize> = Vec::with_capacity(MAX_CONTACTS);
        let first = by(&|c: &Contact| c.depth, &chosen).unwrap_or(0);
        chosen.push(first);
        let p0 = flat(contacts[first].point);
        if let Some(second) = by(&|c: &Contact| (flat(c.point) - p0).length_squared(), &chosen) {
            chosen.push(second);
        }
        let p1 = flat(contacts[chosen[1]].point);
        if let Some(third) = by(&|c: &Contact| (p1 - p0).cross(flat(c.point) - p0).length(), &chosen) {
            chosen.push(third);
        }
        let p2 = flat(contacts[chosen[2]].point);
        let triangle = |a: DVec3, b: DVec3, c: DVec3| 0.5 * (b - a).cross(c - a).length();
        let base = triangle(p0, p1, p2);
        let added = |c: &Contact| {
            let p = flat(c.point);
            triangle(p0, p1, p) + triangle(p1, p2, p) + triangle(p2, p0, p) - base
        };
        if let Some(fourth) = by(&added, &chosen) {
            chosen.push(fourth);
        }
        manifold.contacts.extend(chosen.iter().map(|i| contacts[*i]));
    }
    manifold.contacts.sort_by_key(|c| c.feature);
    manifold
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrow_phase::FeatureId;

    fn contact(x: f64, z: f64, depth: f64, id: usize) -> Contact {
        Contact {
            point: DVec3::new(x, 0.0, z),
            normal: DVec3::Y,
            depth,
            feature: FeatureId::of_a(id),
        }
    }

    #[test]
    fn reduce_keeps_the_deepest_and_the_corners_of_a_grid_of_contacts() {
        let mut contacts: Vec<Contact> = (0..25)
            .map(|i| contact((i % 5) as f64, (i / 5) as f64, if i == 12 { 0.1 } else { 0.01 }, i))
            .collect();
        let manifold = reduce(&mut contacts);
        assert_eq!(manifold.len(), 4);
        let ids: Vec<usize> = manifold.contacts.iter().map(|c| c.feature.index()).collect();
        assert!(ids.contains(&12), "the deepest is kept: {ids:?}");
        // With the centre taken, the three others are corners of the 5 x 5 grid.
        let corners = [0, 4, 20, 24];
        assert_eq!(ids.iter().filter(|i| corners.contains(i)).count(), 3, "{ids:?}");
        assert!(manifold.contacts.windows(2).all(|w| w[0].feature < w[1].feature));
    }

    #[test]
    fn reduce_keeps_small_manifolds_whole() {
        let mut contacts = vec![contact(0.0, 0.0, 0.1, 3), contact(1.0, 0.0, 0.1, 1)];
        let manifold = reduce(&mut contacts);
        assert_eq!(manifold.len(), 2);
        assert_eq!(manifold.contacts[0].feature.index(), 1);
    }
}
