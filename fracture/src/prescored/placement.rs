//! Aligning a pattern with an impact (Su 2009 sections 4.1 and 4.2): the pattern's impact point
//! on the collision point, its impact direction along the collision normal, and its box scaled to
//! enclose the body.
//!
//! Two ways, chosen by [`Alignment`]. `Overlay` is the paper's optimization, used for all its
//! examples: the pattern is laid over the parent's material space with its impact point on the
//! parent lattice sample nearest the collision (at most half a cell away in each axis) and its
//! axes on the parent's axes (the one of the 24 axis-aligned turns nearest the collision's
//! frame), so the pattern is evaluated exactly at the parent's own samples and nothing is
//! interpolated between lattices. `Exact` keeps the collision point and normal as they are.
//! For the power-diagram patterns the region level sets are exact at any point, so both paths
//! evaluate them without interpolation; grid patterns interpolate their own samples trilinearly
//! wherever the two lattices do not coincide.

use glam::{DMat3, DQuat, DVec3};
use shatter_collision::{Aabb, GridSpec};

use super::pattern::FracturePattern;
use crate::error::FractureError;

/// How a pattern is aligned with an impact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Alignment {
    /// On the parent's lattice: impact point snapped to the nearest sample, axes to the nearest
    /// axis-aligned turn (Su 2009's no-interpolation optimization).
    #[default]
    Overlay,
    /// On the collision point and normal as they are.
    Exact,
}

/// Where a pattern sits in a body's frame: `x = point + scale * rotation * (p - impact)` for a
/// pattern point `p` and its body-frame image `x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// The body-frame point the pattern's impact point lands on, m.
    pub point: DVec3,
    /// From pattern axes to body axes.
    pub rotation: DMat3,
    /// Metres of body per pattern unit.
    pub scale: f64,
    /// The pattern's impact point, pattern space.
    pub impact: DVec3,
    /// `rotation^T / scale`: body offsets to pattern offsets.
    to_pattern: DMat3,
}

impl Placement {
    /// The placement of `pattern` for an impact at body-frame `point` whose impulse pushes the
    /// body along `normal` (body frame; any length), on a body inside `bounds` sampled on
    /// `lattice`. Fails naming a non-finite point or a zero or non-finite normal.
    pub fn new(
        pattern: &FracturePattern,
        lattice: &GridSpec,
        bounds: Aabb,
        point: DVec3,
        normal: DVec3,
        alignment: Alignment,
    ) -> Result<Self, FractureError> {
        if !point.is_finite() {
            return Err(FractureError::invalid("impact point (m)", point, "finite coordinates"));
        }
        let Some(direction) = normal.try_normalize() else {
            return Err(FractureError::invalid(
                "impact direction",
                normal,
                "a finite, non-zero vector",
            ));
        };
        let turn = DQuat::from_rotation_arc(DVec3::Z, direction) * pattern.frame().inverse();
        let mut rotation = DMat3::from_quat(turn);
        let mut point = point;
        if alignment == Alignment::Overlay {
            rotation = nearest_axis_turn(rotation);
            let local = ((point - lattice.origin) / lattice.spacing).round();
            let last = DVec3::new(
                (lattice.dims[0] - 1) as f64,
                (lattice.dims[1] - 1) as f64,
                (lattice.dims[2] - 1) as f64,
            );
            point = lattice.origin + local.clamp(DVec3::ZERO, last) * lattice.spacing;
        }
        let impact = pattern.impact_point();
        // The smallest scale that keeps every corner of the body's box inside the pattern's box:
        // per axis a, impact_a + q_a / s must lie in [0, 1] for q = R^T (corner - point).
        let mut scale = f64::MIN_POSITIVE;
        for c in 0..8 {
            let corner = DVec3::new(
                if c & 1 == 0 { bounds.min.x } else { bounds.max.x },
                if c & 2 == 0 { bounds.min.y } else { bounds.max.y },
                if c & 4 == 0 { bounds.min.z } else { bounds.max.z },
            );
            let q = rotation.transpose() * (corner - point);
            for a in 0..3 {
                let room = if q[a] > 0.0 { 1.0 - impact[a] } else { impact[a] };
                scale = scale.max(q[a].abs() / room);
            }
        }
        Ok(Self {
            point,
            rotation,
            scale,
            impact,
            to_pattern: rotation.transpose() * (1.0 / scale),
        })
    }

    /// The pattern-space image of body-frame `x`.
    #[inline]
    pub fn to_pattern(&self, x: DVec3) -> DVec3 {
        self.impact + self.to_pattern * (x - self.point)
    }

    /// The body-frame image of pattern-space `p`.
    #[inline]
    pub fn to_body(&self, p: DVec3) -> DVec3 {
        self.point + self.rotation * (p - self.impact) * self.scale
    }

    /// Region `region`'s level set at body-frame `x` (m) where it is at most `cap` (m); above it,
    /// some value above `cap`.
    #[inline]
    pub fn region_value_capped(&self, pattern: &FracturePattern, region: u32, x: DVec3, cap: f64) -> f64 {
        pattern.value_capped(region, self.to_pattern(x), cap / self.scale) * self.scale
    }
}

/// The rotation among the 24 that map axes onto axes (signed permutations of determinant +1)
/// nearest `rotation`: the one with the largest trace of `rotation^T P`.
fn nearest_axis_turn(rotation: DMat3) -> DMat3 {
    const PERMUTATIONS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    let mut best = (f64::NEG_INFINITY, DMat3::IDENTITY);
    for permutation in PERMUTATIONS {
        for signs in 0..8 {
            let sign = |a: usize| if signs & (1 << a) == 0 { 1.0 } else { -1.0 };
            let mut columns = [DVec3::ZERO; 3];
            for (column, &row) in permutation.iter().enumerate() {
                columns[column][row] = sign(column);
            }
            let candidate = DMat3::from_cols(columns[0], columns[1], columns[2]);
            if candidate.determinant() < 0.0 {
                continue;
            }
            let score: f64 = (0..3).map(|c| candidate.col(c).dot(rotation.col(c))).sum();
            if score > best.0 {
                best = (score, candidate);
            }
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prescored_placement_encloses_the_body_and_overlay_snaps_by_at_most_half_a_cell() {
        let pattern = FracturePattern::uniform(8, 3).unwrap();
        let bounds = Aabb::from_center(DVec3::ZERO, DVec3::new(1.5, 0.1, 1.0));
        let lattice = GridSpec::covering(bounds, 0.02, 2).unwrap();
        let point = DVec3::new(0.3131, 0.1, -0.2077);
        let normal = DVec3::new(0.2, -1.0, 0.1);
        for alignment in [Alignment::Overlay, Alignment::Exact] {
            let placed = Placement::new(&pattern, &lattice, bounds, point, normal, alignment).unwrap();
            for c in 0..8 {
                let corner = DVec3::new(
                    if c & 1 == 0 { -1.5 } else { 1.5 },
                    if c & 2 == 0 { -0.1 } else { 0.1 },
                    if c & 4 == 0 { -1.0 } else { 1.0 },
                );
                let p = placed.to_pattern(corner);
                assert!(p.cmpge(DVec3::splat(-1e-12)).all() && p.cmple(DVec3::splat(1.0 + 1e-12)).all());
                assert!((placed.to_body(p) - corner).length() < 1e-12);
            }
            let shift = (placed.point - point).abs();
            match alignment {
                Alignment::Overlay => {
                    assert!(shift.max_element() <= 0.5 * lattice.spacing + 1e-12);
                    // The impact direction (pattern z) lands on the body axis nearest the normal.
                    assert_eq!(placed.rotation * DVec3::Z, -DVec3::Y);
                }
                Alignment::Exact => {
                    assert_eq!(shift, DVec3::ZERO);
                    assert!((placed.rotation * DVec3::Z - normal.normalize()).length() < 1e-12);
                }
            }
        }
        let flat = Placement::new(&pattern, &lattice, bounds, point, DVec3::ZERO, Alignment::Exact);
        assert!(flat.unwrap_err().to_string().contains("impact direction"));
    }
}
