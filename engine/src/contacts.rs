//! The contacts of a step, with the impulses the step gave them: what the narrow phase found per
//! body pair, and what the collision pass and the constraint solver did there.
//!
//! This is the form in which fracture models read a step's contacts ([`crate::FractureContext`]).
//! Conventions follow the narrow phase: the normal points from body B towards body A (the
//! direction in which B pushes A), so a positive normal impulse pushes A along the normal and B
//! against it. Impulses are in N s; a resting box of mass `m` on the ground carries a total
//! normal impulse of about `m g dt` per step, shared among its contacts.

use glam::DVec3;
use shatter_collision::FeatureId;
use smallvec::SmallVec;

use crate::contact_cache::WarmStart;
use crate::handle::BodyId;

/// One contact point and the impulses applied there this step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// Midway between the two surfaces at the start of the step, world frame, m.
    pub point: DVec3,
    /// Unit normal from body B towards body A, world frame.
    pub normal: DVec3,
    /// Penetration along the normal at the start of the step, m (negative: still apart).
    pub depth: f64,
    /// Which feature produced it (stable from step to step: the key for warm starting).
    pub feature: FeatureId,
    /// The two friction directions the solve used, unit, orthogonal to the normal and to each
    /// other: the first along the sliding velocity when the contact slides (where the solver's
    /// friction pyramid is exact Coulomb friction), else a fixed function of the normal.
    pub tangents: [DVec3; 2],
    /// Impulse of the elastic collision pass along the normal, on A, N s (>= 0).
    pub collision_impulse: f64,
    /// Contact impulse of the constraint solve along the normal, on A, N s (>= 0): the impulse
    /// the two bodies exchanged, each feeling it (B with the opposite sign). The upper body of a
    /// contact the solve's shock pass settled with the lower one held still also took that pass's
    /// settling, which is not in it ([`shatter_solver::Row::exchanged`]).
    pub normal_impulse: f64,
    /// Friction impulses of the constraint solve along `tangents`, on A, N s: exchanged, as
    /// `normal_impulse` is.
    pub friction_impulse: [f64; 2],
    /// Where the next step's solve starts at this point: the impulses the solve's sweeps reached
    /// before its shock pass ([`shatter_solver::Row::warm`]), which the contact cache keeps. Not an
    /// impulse applied this step: read `normal_impulse` and `friction_impulse` for that.
    pub warm_start: WarmStart,
}

impl ContactPoint {
    /// Total impulse this step on body A at this point, collision pass and solve together,
    /// world frame, N s; body B received the negation.
    pub fn total_impulse(&self) -> DVec3 {
        self.normal * (self.collision_impulse + self.normal_impulse)
            + self.tangents[0] * self.friction_impulse[0]
            + self.tangents[1] * self.friction_impulse[1]
    }
}

/// The contacts of one body pair, `body_a < body_b`.
#[derive(Clone, Debug, PartialEq)]
pub struct PairContacts {
    /// The lower body handle.
    pub body_a: BodyId,
    /// The higher body handle.
    pub body_b: BodyId,
    /// Combined friction coefficient of the pair.
    pub friction: f64,
    /// Combined coefficient of restitution of the pair.
    pub restitution: f64,
    /// The contacts, sorted by feature id; at most four.
    pub contacts: SmallVec<[ContactPoint; 4]>,
    /// Dense indices of the two bodies during the step (internal: stale once the store changes).
    pub(crate) dense: [u32; 2],
}

impl PairContacts {
    /// Sum of [`ContactPoint::total_impulse`] over the pair's contacts, on A, N s.
    pub fn total_impulse(&self) -> DVec3 {
        self.contacts.iter().map(ContactPoint::total_impulse).sum()
    }
}

/// The two friction directions of a contact with unit `normal`: the solver's basis
/// (`shatter_solver::tangent_basis`, a fixed function of the normal), so the friction impulses
/// reported here are along the very rows the solver used, and a contact whose normal does not
/// change keeps its directions from step to step (what warm starting needs).
pub fn tangent_basis(normal: DVec3) -> [DVec3; 2] {
    let (t1, t2) = shatter_solver::tangent_basis(normal);
    [t1, t2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contacts_tangent_basis_is_orthonormal_and_right_handed() {
        let normals = [
            DVec3::Y,
            DVec3::NEG_Y,
            DVec3::Z,
            DVec3::NEG_Z,
            DVec3::new(0.3, -0.8, 0.1).normalize(),
            DVec3::new(-1e-9, 0.0, -1.0).normalize(),
        ];
        for n in normals {
            let [t1, t2] = tangent_basis(n);
            for (u, v) in [(t1, t2), (t1, n), (t2, n)] {
                assert!(u.dot(v).abs() < 1e-14, "{n}: {u} . {v}");
            }
            assert!((t1.length() - 1.0).abs() < 1e-14 && (t2.length() - 1.0).abs() < 1e-14);
            assert!((t1.cross(t2) - n).length() < 1e-14, "{n}: not right-handed");
        }
    }
}
