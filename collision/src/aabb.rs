//! Axis-aligned bounding boxes.

use glam::DVec3;

/// An axis-aligned box `[min, max]`, in whatever frame its user states. Bounds are inclusive: boxes
/// that touch overlap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Smallest corner.
    pub min: DVec3,
    /// Largest corner.
    pub max: DVec3,
}

impl Aabb {
    /// The box with corners `min` and `max` (it is empty when some `min` component exceeds `max`).
    pub const fn new(min: DVec3, max: DVec3) -> Self {
        Self { min, max }
    }

    /// The empty box: the identity of [`Aabb::union`].
    pub const EMPTY: Self = Self {
        min: DVec3::INFINITY,
        max: DVec3::NEG_INFINITY,
    };

    /// The smallest box holding every point; [`Aabb::EMPTY`] for none.
    pub fn from_points(points: impl IntoIterator<Item = DVec3>) -> Self {
        points.into_iter().fold(Self::EMPTY, |b, p| b.including(p))
    }

    /// A box centred at `center` with half extents `half_extents`.
    pub fn from_center(center: DVec3, half_extents: DVec3) -> Self {
        Self::new(center - half_extents, center + half_extents)
    }

    /// Whether no point is inside.
    pub fn is_empty(&self) -> bool {
        self.min.x > self.max.x || self.min.y > self.max.y || self.min.z > self.max.z
    }

    /// This box grown to hold `point`.
    pub fn including(self, point: DVec3) -> Self {
        Self::new(self.min.min(point), self.max.max(point))
    }

    /// The smallest box holding both.
    pub fn union(self, other: Self) -> Self {
        Self::new(self.min.min(other.min), self.max.max(other.max))
    }

    /// This box grown by `margin` on every side (shrunk for a negative margin).
    pub fn expanded(self, margin: f64) -> Self {
        Self::new(self.min - DVec3::splat(margin), self.max + DVec3::splat(margin))
    }

    /// Whether the boxes share at least one point.
    pub fn overlaps(&self, other: &Self) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// Whether `other` lies entirely inside this box.
    pub fn contains(&self, other: &Self) -> bool {
        self.min.cmple(other.min).all() && other.max.cmple(self.max).all()
    }

    /// Whether `point` lies inside or on the box.
    pub fn contains_point(&self, point: DVec3) -> bool {
        self.min.cmple(point).all() && point.cmple(self.max).all()
    }

    /// The centre.
    pub fn center(&self) -> DVec3 {
        0.5 * (self.min + self.max)
    }

    /// Edge lengths.
    pub fn size(&self) -> DVec3 {
        self.max - self.min
    }

    /// Surface area, the cost measure of bounding volume hierarchies.
    pub fn surface_area(&self) -> f64 {
        let d = self.size().max(DVec3::ZERO);
        2.0 * (d.x * d.y + d.y * d.z + d.z * d.x)
    }

    /// The point of the box closest to `point`.
    pub fn closest_point(&self, point: DVec3) -> DVec3 {
        point.clamp(self.min, self.max)
    }

    /// Squared distance from `point` to the box (zero inside).
    pub fn distance_squared(&self, point: DVec3) -> f64 {
        (point - self.closest_point(point)).length_squared()
    }
}

/// The best split of binned boxes by the surface-area heuristic: given the union of the boxes
/// falling in each bin along one axis and their counts, the bin `i` after which to split
/// (bins `0..=i` left) and the cost `area(left) n_left + area(right) n_right`, minimal over the
/// splits that leave both sides non-empty; `None` when every item is in one bin. Shared by the
/// triangle BVH and the broad phase's tree builds.
pub(crate) fn best_binned_split<const B: usize>(bounds: &[Aabb; B], counts: &[usize; B]) -> Option<(f64, usize)> {
    // Sweep from the right first: area and count of everything after each bin.
    let mut right_area = [0.0; B];
    let mut right_count = [0usize; B];
    let (mut acc, mut n) = (Aabb::EMPTY, 0);
    for i in (1..B).rev() {
        acc = acc.union(bounds[i]);
        n += counts[i];
        right_area[i] = acc.surface_area();
        right_count[i] = n;
    }
    let (mut acc, mut n) = (Aabb::EMPTY, 0);
    let mut best: Option<(f64, usize)> = None;
    for i in 0..B.saturating_sub(1) {
        acc = acc.union(bounds[i]);
        n += counts[i];
        if n == 0 || right_count[i + 1] == 0 {
            continue;
        }
        let cost = acc.surface_area() * n as f64 + right_area[i + 1] * right_count[i + 1] as f64;
        if best.is_none_or(|(c, _)| cost < c) {
            best = Some((cost, i));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aabb_overlap_is_inclusive_and_symmetric() {
        let a = Aabb::new(DVec3::ZERO, DVec3::ONE);
        let b = Aabb::new(DVec3::new(1.0, 0.5, 0.5), DVec3::splat(2.0));
        let c = Aabb::new(DVec3::new(1.0 + 1e-12, 0.0, 0.0), DVec3::splat(2.0));
        assert!(a.overlaps(&b) && b.overlaps(&a));
        assert!(!a.overlaps(&c) && !c.overlaps(&a));
        assert!(Aabb::EMPTY.is_empty() && !Aabb::EMPTY.overlaps(&a));
        assert_eq!(
            Aabb::from_points([DVec3::ONE, DVec3::ZERO, DVec3::X * 3.0]),
            Aabb::new(DVec3::ZERO, DVec3::new(3.0, 1.0, 1.0))
        );
        assert_eq!(a.surface_area(), 6.0);
        assert_eq!(a.distance_squared(DVec3::new(2.0, 0.5, 0.5)), 1.0);
    }
}
