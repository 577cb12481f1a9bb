//! Contact rows: one normal row and two friction rows per contact point.
//!
//! For a contact at world arms `r_a`, `r_b` (from each centre of mass to the contact point) with unit
//! normal `n` pointing from B towards A (the convention of `shatter_collision::Contact`), the normal
//! row is `J = (n, r_a x n, -n, -(r_b x n))`: `J v` is the separating speed. Its impulse is bounded to
//! `[0, inf)` (contacts push, never pull), its position error is `phi = -depth`, and its bias is
//! [`BiasMode::Split`]: penetration is corrected on pseudo velocities (split.rs).
//!
//! Friction is a pyramid: two rows along orthogonal tangents `t1`, `t2`, each bounded by
//! `+-mu lambda_n`. Along a tangent the pyramid is exact Coulomb friction; along a diagonal it allows
//! up to `sqrt(2) mu lambda_n`. Giving [`ContactPoint::friction_direction`] (the relative sliding
//! velocity, say) puts `t1` along it, where pyramid and cone agree for pure sliding. By default the
//! basis depends on the normal alone, so that friction impulses the engine carries from step to step
//! for warm starting still point the same way; a sliding-aligned basis turns with the velocity.
//! Rejected: a true cone (a 2D projection per contact) couples the two tangent rows and breaks the
//! one-row-at-a-time update the energy clamp is derived for.

use glam::DVec3;

use crate::body::SolverBody;
use crate::error::SolverError;
use crate::patch::friction_tangents;
use crate::row::{BiasMode, Friction, Jacobian, Row, inverse_effective_mass};
use crate::softness::{RowSoftness, Softness};

/// How far a contact normal's length may be from 1.
pub(crate) const UNIT_TOLERANCE: f64 = 1e-6;

/// The Baumgarte fraction of penetration removed per step by default (ODE's default ERP).
pub const DEFAULT_CONTACT_ERP: f64 = 0.2;

/// One contact point between bodies `a` and `b`, as the solver needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// Index of body A in the body slice, or [`NO_BODY`](crate::body::NO_BODY).
    pub a: u32,
    /// Index of body B in the body slice, or [`NO_BODY`](crate::body::NO_BODY).
    pub b: u32,
    /// From A's centre of mass to the contact point, world frame, m.
    pub arm_a: DVec3,
    /// From B's centre of mass to the contact point, world frame, m.
    pub arm_b: DVec3,
    /// Unit normal from B towards A, world frame.
    pub normal: DVec3,
    /// Penetration along the normal, m: positive for overlap, negative for a speculative gap.
    pub depth: f64,
    /// Coulomb friction coefficient mu, >= 0.
    pub friction: f64,
    /// Softness of the normal row; `Softness::rigid(DEFAULT_CONTACT_ERP)` by default.
    pub softness: Softness,
    /// Clamp every impulse increment of the three rows so it cannot add kinetic energy (Su 2009
    /// section 3.2); on by default.
    pub energy_clamp: bool,
    /// Direction for the first friction tangent (projected onto the contact plane), e.g. the relative
    /// sliding velocity; `None` for a basis from the normal alone.
    pub friction_direction: Option<DVec3>,
}

impl ContactPoint {
    /// A rigid, energy-clamped contact with the default ERP and a tangent basis from the normal.
    pub fn new(a: u32, b: u32, arm_a: DVec3, arm_b: DVec3, normal: DVec3, depth: f64, friction: f64) -> Self {
        Self {
            a,
            b,
            arm_a,
            arm_b,
            normal,
            depth,
            friction,
            softness: Softness::rigid(DEFAULT_CONTACT_ERP),
            energy_clamp: true,
            friction_direction: None,
        }
    }
}

/// A right-handed orthonormal basis `(t1, t2)` of the plane normal to the unit vector `n`, with
/// `t1 x t2 = n`, depending on `n` alone and continuous except where `n.z` changes sign (Duff et al.
/// 2017, "Building an orthonormal basis, revisited", listing 3).
pub fn tangent_basis(n: DVec3) -> (DVec3, DVec3) {
    let sign = 1.0_f64.copysign(n.z);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    let t1 = DVec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x);
    let t2 = DVec3::new(b, sign + n.y * n.y * a, -n.y);
    (t1, t2)
}

/// The normal row of a contact point between bodies `(a, b)` at arms `(arm_a, arm_b)` (m) with unit
/// normal `n` and penetration `depth` (m): bounds `[0, inf)`, position error `-depth` corrected by
/// the split pass, the softness converted with the row's own effective mass for the step `dt`.
pub(crate) fn contact_normal_row(
    bodies: &[SolverBody],
    (a, b): (u32, u32),
    at: (DVec3, DVec3, DVec3, f64),
    softness: Softness,
    energy_clamp: bool,
    dt: f64,
) -> Result<Row, SolverError> {
    let row = contact_normal_row_with(a, b, at, energy_clamp, RowSoftness { erp: 1.0, cfm: 0.0 });
    // Only a frequency softness reads the effective mass; a contact's rows are built by the
    // thousand each step, so the others skip computing it.
    let effective_mass = match softness {
        Softness::Frequency { .. } => 1.0 / inverse_effective_mass(bodies, &row),
        Softness::ErpCfm { .. } | Softness::SpringDamper { .. } => f64::NAN,
    };
    Ok(row.with_softness(softness.erp_cfm(dt, effective_mass)?))
}

/// The normal row of a contact between bodies `a` and `b` at `(arm_a, arm_b, n, depth)` (as
/// [`contact_normal_row`]) with its ERP and CFM already found.
#[inline]
pub(crate) fn contact_normal_row_with(
    a: u32,
    b: u32,
    (arm_a, arm_b, n, depth): (DVec3, DVec3, DVec3, f64),
    energy_clamp: bool,
    softness: RowSoftness,
) -> Row {
    Row {
        lower: 0.0,
        upper: f64::INFINITY,
        position_error: -depth,
        bias_mode: BiasMode::Split,
        energy_clamp,
        erp: softness.erp,
        cfm: softness.cfm,
        ..Row::new(a, b, Jacobian::linear(n, arm_a, arm_b))
    }
}

/// The three rows of a contact: `[normal, friction along t1, friction along t2]`, for a time step
/// `dt` (s). `normal_row` is the index the normal row will have in the slice handed to the solver
/// (the friction rows refer to it); see [`push_contact_rows`] for the common case.
///
/// Bodies are read for the index check and for the normal row's effective mass (used by
/// [`Softness::Frequency`]). Errors name the bad field.
pub fn contact_rows(
    bodies: &[SolverBody],
    contact: &ContactPoint,
    normal_row: u32,
    dt: f64,
) -> Result<[Row; 3], SolverError> {
    validate(bodies, contact)?;
    let (a, b) = (contact.a, contact.b);
    let n = contact.normal;
    let point = (contact.arm_a, contact.arm_b, n, contact.depth);
    let normal = contact_normal_row(bodies, (a, b), point, contact.softness, contact.energy_clamp, dt)?;

    let [t1, t2] = friction_tangents(n, contact.friction_direction);
    let friction_row = |tangent: DVec3| {
        let mut row = Row::new(a, b, Jacobian::linear(tangent, contact.arm_a, contact.arm_b));
        row.friction = Some(Friction::point(normal_row, contact.friction));
        row.energy_clamp = contact.energy_clamp;
        row
    };
    Ok([normal, friction_row(t1), friction_row(t2)])
}

/// Appends the three rows of `contact` to `rows` and returns the index of its normal row.
pub fn push_contact_rows(
    rows: &mut Vec<Row>,
    bodies: &[SolverBody],
    contact: &ContactPoint,
    dt: f64,
) -> Result<u32, SolverError> {
    let index = u32::try_from(rows.len())
        .ok()
        .filter(|&i| i < u32::MAX - 3)
        .ok_or_else(|| SolverError::invalid("row count", rows.len(), "fewer than u32::MAX - 3 rows"))?;
    rows.extend(contact_rows(bodies, contact, index, dt)?);
    Ok(index)
}

/// Checks a contact: the bodies and friction (as for a patch), finite arms, a unit normal, a
/// finite depth.
fn validate(bodies: &[SolverBody], contact: &ContactPoint) -> Result<(), SolverError> {
    validate_pair(
        bodies,
        ["contact body a", "contact body b", "contact bodies (a, b)"],
        (contact.a, contact.b),
        contact.friction,
        contact.friction_direction,
    )?;
    for (name, arm) in [
        ("contact arm a (m)", contact.arm_a),
        ("contact arm b (m)", contact.arm_b),
    ] {
        if !arm.is_finite() {
            return Err(SolverError::invalid(name, arm, "finite components"));
        }
    }
    let n = contact.normal;
    if !(n.is_finite() && (n.length() - 1.0).abs() <= UNIT_TOLERANCE) {
        return Err(SolverError::invalid("contact normal", n, "a finite unit vector"));
    }
    if !contact.depth.is_finite() {
        return Err(SolverError::invalid(
            "contact depth (m)",
            contact.depth,
            "a finite number",
        ));
    }
    Ok(())
}

/// Checks what a contact point and a contact patch share: bodies `a` and `b` index the body slice
/// (or are `NO_BODY`) and differ, the friction coefficient is finite and `>= 0`, the friction
/// direction (if any) is finite. `names` are the fields of body a, body b and the pair, as errors
/// name them.
pub(crate) fn validate_pair(
    bodies: &[SolverBody],
    names: [&'static str; 3],
    (a, b): (u32, u32),
    friction: f64,
    friction_direction: Option<DVec3>,
) -> Result<(), SolverError> {
    for (name, body) in [(names[0], a), (names[1], b)] {
        if body != crate::body::NO_BODY && body as usize >= bodies.len() {
            return Err(SolverError::invalid(
                name,
                body,
                "an index into the body slice, or NO_BODY",
            ));
        }
    }
    if a == b {
        return Err(SolverError::invalid(
            names[2],
            (a, b),
            "two different bodies, at most one of them NO_BODY",
        ));
    }
    if !(friction.is_finite() && friction >= 0.0) {
        return Err(SolverError::invalid(
            "friction coefficient",
            friction,
            "a finite number >= 0",
        ));
    }
    if let Some(direction) = friction_direction
        && !direction.is_finite()
    {
        return Err(SolverError::invalid(
            "friction direction",
            direction,
            "finite components",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The tangent basis is orthonormal and right-handed with the normal, for any unit normal.
        #[test]
        fn contact_tangent_basis_is_orthonormal(x in -1.0..1.0f64, y in -1.0..1.0f64, z in -1.0..1.0f64) {
            let v = DVec3::new(x, y, z);
            prop_assume!(v.length() > 1e-3);
            let n = v.normalize();
            let (t1, t2) = tangent_basis(n);
            for (u, w, expected) in [(t1, t1, 1.0), (t2, t2, 1.0), (t1, t2, 0.0), (t1, n, 0.0), (t2, n, 0.0)] {
                prop_assert!((u.dot(w) - expected).abs() < 1e-12);
            }
            prop_assert!((t1.cross(t2) - n).length() < 1e-12);
        }
    }
}
