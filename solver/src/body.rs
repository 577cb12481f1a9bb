//! The per-body data the solver reads and writes: velocities and inverse mass, in world frame.
//!
//! The solver sees a body only through `M^-1`: a 6x6 block `diag(m^-1 I_3, I^-1)` with the
//! world-frame inverse inertia tensor `I^-1 = R diag(1/I_principal) R^T`. Static and kinematic bodies
//! have a zero block, so no impulse moves them; a kinematic body's prescribed velocity still enters
//! every row's `J v`, which is how a moving platform carries what rests on it.

use crate::twist::Twist;
use glam::{DMat3, DVec3};
use shatter_integrators::{BodyKind, MassProperties, RigidState};

use crate::error::SolverError;

/// The index a row uses for "no body": the side of the row attached to the fixed world frame.
pub const NO_BODY: u32 = u32::MAX;

/// Relative tolerance of the symmetry and positive semi-definiteness checks on an inverse inertia
/// tensor: a rotated diagonal tensor is symmetric only to round-off.
const INERTIA_TOLERANCE: f64 = 1e-9;

/// Per-body data the solver reads and writes, world frame.
///
/// Static bodies have zero inverse mass, zero inverse inertia and zero velocities; kinematic bodies
/// the same zero inverses with their prescribed velocities. The solver writes velocities of dynamic
/// bodies only (an impulse scaled by a zero inverse is exactly zero).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolverBody {
    /// Velocity of the centre of mass, m/s.
    pub linear_velocity: DVec3,
    /// Angular velocity, rad/s.
    pub angular_velocity: DVec3,
    /// `1 / mass`, 1/kg; zero for static and kinematic bodies.
    pub inverse_mass: f64,
    /// Inverse inertia tensor about the centre of mass in world frame, 1/(kg m^2): symmetric
    /// positive semi-definite; zero for static and kinematic bodies.
    pub inverse_inertia: DMat3,
}

impl SolverBody {
    /// A body that never moves: zero velocities, zero inverse mass and inertia.
    pub const STATIC: Self = Self {
        linear_velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
        inverse_mass: 0.0,
        inverse_inertia: DMat3::ZERO,
    };

    /// A kinematic body moving with the prescribed `linear_velocity` (m/s) and world-frame
    /// `angular_velocity` (rad/s): infinite mass, so no row changes its velocity.
    pub fn kinematic(linear_velocity: DVec3, angular_velocity: DVec3) -> Self {
        Self {
            linear_velocity,
            angular_velocity,
            ..Self::STATIC
        }
    }

    /// The solver's view of an integrator body: world-frame velocities and `M^-1` from its state
    /// and mass properties. Static bodies get zero velocities, kinematic bodies keep theirs, and
    /// both get zero inverses.
    pub fn from_state(kind: BodyKind, state: &RigidState, mass: &MassProperties) -> Self {
        match kind {
            BodyKind::Static => Self::STATIC,
            BodyKind::Kinematic => Self::kinematic(state.linear_velocity, state.angular_velocity()),
            BodyKind::Dynamic => Self {
                linear_velocity: state.linear_velocity,
                angular_velocity: state.angular_velocity(),
                inverse_mass: mass.inverse_mass(),
                inverse_inertia: mass.inverse_inertia_world(state.orientation),
            },
        }
    }

    /// Whether any impulse can move this body (a non-zero inverse mass or inverse inertia).
    pub fn is_dynamic(&self) -> bool {
        self.inverse_mass != 0.0 || self.inverse_inertia != DMat3::ZERO
    }

    /// Checks that the body can enter a solve: finite velocities, a finite non-negative inverse
    /// mass, a finite symmetric positive semi-definite inverse inertia. `index` names the body in
    /// the error.
    pub fn validate(&self, index: usize) -> Result<(), SolverError> {
        if !self.linear_velocity.is_finite() {
            return Err(SolverError::body(
                index,
                "linear velocity (m/s)",
                self.linear_velocity,
                "finite components",
            ));
        }
        if !self.angular_velocity.is_finite() {
            return Err(SolverError::body(
                index,
                "angular velocity (rad/s)",
                self.angular_velocity,
                "finite components",
            ));
        }
        if !(self.inverse_mass.is_finite() && self.inverse_mass >= 0.0) {
            return Err(SolverError::body(
                index,
                "inverse mass (1/kg)",
                self.inverse_mass,
                "a finite number >= 0 (0 for static and kinematic bodies)",
            ));
        }
        let m = self.inverse_inertia;
        if !m.is_finite() {
            return Err(SolverError::body(
                index,
                "inverse inertia (1/(kg m^2))",
                m,
                "finite components",
            ));
        }
        if !is_symmetric_psd(m) {
            return Err(SolverError::body(
                index,
                "inverse inertia (1/(kg m^2))",
                m,
                "a symmetric positive semi-definite matrix (R diag(1/I) R^T)",
            ));
        }
        Ok(())
    }

    /// The velocity change of this body per unit impulse along the Jacobian block
    /// `(linear, angular)`: `(m^-1 linear, I^-1 angular)` (m/s and rad/s per N s). The sweeps
    /// in lanes compute the same products in the same order from the body's [`SlotMass`], so
    /// both give the same bits.
    #[inline]
    pub(crate) fn response(&self, linear: DVec3, angular: DVec3) -> (DVec3, DVec3) {
        let m = &self.inverse_inertia;
        (
            linear * self.inverse_mass,
            m.x_axis * angular.x + m.y_axis * angular.y + m.z_axis * angular.z,
        )
    }
}

/// A solver slot's `M^-1` as the sweeps in lanes read it (lanes.rs): each row's response
/// `M^-1 J^T` is formed from these and its Jacobian as [`SolverBody::response`] forms it, rather
/// than stored with every row (a large island's sweeps are limited by the bytes of rows they
/// read).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SlotMass {
    /// `1 / mass`, 1/kg; zero for static and kinematic bodies and for the world slot.
    pub(crate) inverse_mass: f64,
    /// The world-frame inverse inertia, 1/(kg m^2), column by column (`x_axis`, `y_axis`,
    /// `z_axis`); zero where the inverse mass is.
    pub(crate) inverse_inertia: [f64; 9],
}

impl SlotMass {
    /// This slot's `M^-1` applied to `jacobian`: for its block of a row's `J`, the row's response
    /// `M^-1 J^T` on it (m/s and rad/s per N s), what [`SolverBody::response`] gives, the same
    /// bits; for a sum of such blocks times impulses (`J^T lambda`), the velocity change they make.
    #[inline]
    pub(crate) fn response(&self, jacobian: &Twist) -> Twist {
        jacobian.response(self.inverse_mass, &self.inverse_inertia)
    }

    /// The slots of `bodies` in order, then the world slot (zero).
    pub(crate) fn fill(bodies: &[SolverBody], out: &mut Vec<SlotMass>) {
        out.clear();
        out.extend(bodies.iter().map(|body| SlotMass {
            inverse_mass: body.inverse_mass,
            inverse_inertia: body.inverse_inertia.to_cols_array(),
        }));
        out.push(SlotMass::default());
    }
}

/// The velocities of `bodies`' slots in order, then the world slot's (zero): what a solve starts
/// from, m/s and rad/s.
pub(crate) fn fill_slot_velocities(bodies: &[SolverBody], out: &mut Vec<Twist>) {
    out.clear();
    out.extend(
        (bodies.iter())
            .map(|body| Twist::new(body.linear_velocity, body.angular_velocity))
            .chain(core::iter::once(Twist::default())),
    );
}

/// Whether `m` is symmetric and positive semi-definite to round-off: Sylvester's criterion for
/// semi-definiteness needs every principal minor (three 1x1, three 2x2, the determinant) to be
/// non-negative, each compared with the scale of the matrix.
fn is_symmetric_psd(m: DMat3) -> bool {
    let a = m.to_cols_array_2d();
    let scale = a.iter().flatten().fold(0.0_f64, |s, v| s.max(v.abs()));
    if scale == 0.0 {
        return true;
    }
    let tolerance = INERTIA_TOLERANCE * scale;
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        if (a[i][j] - a[j][i]).abs() > tolerance {
            return false;
        }
    }
    if (0..3).any(|i| a[i][i] < -tolerance) {
        return false;
    }
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        if a[i][i] * a[j][j] - a[i][j] * a[j][i] < -tolerance * scale {
            return false;
        }
    }
    m.determinant() >= -tolerance * scale * scale
}

/// A per-body velocity pair, world frame: used for the split (pseudo) velocities that the solve
/// returns and the integrator adds to the positions only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SplitVelocity {
    /// Pseudo linear velocity of the centre of mass, m/s.
    pub linear: DVec3,
    /// Pseudo angular velocity, rad/s.
    pub angular: DVec3,
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;

    #[test]
    fn body_from_state_matches_mass_properties() {
        let mass = MassProperties::try_new(2.0, DVec3::new(1.0, 2.0, 2.5)).unwrap();
        let q = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.7);
        let state = RigidState::moving(DVec3::ONE, q, DVec3::X, DVec3::Y);
        let body = SolverBody::from_state(BodyKind::Dynamic, &state, &mass);
        assert_eq!(body.inverse_mass, 0.5);
        assert!((body.angular_velocity - DVec3::Y).length() < 1e-15);
        assert!(body.validate(0).is_ok());
        let kinematic = SolverBody::from_state(BodyKind::Kinematic, &state, &mass);
        assert!(!kinematic.is_dynamic());
        assert_eq!(kinematic.linear_velocity, DVec3::X);
        assert_eq!(
            SolverBody::from_state(BodyKind::Static, &state, &mass),
            SolverBody::STATIC
        );
    }

    /// A slot's response formed in the solver's lane layout (`SlotMass::response`, what the
    /// prepared rows' users apply) has the bits of the body's own (`SolverBody::response`, glam's
    /// matrix product), for turned bodies with full inverse inertias and Jacobian blocks at random:
    /// every component, so a lane or a column taken from the wrong place shows.
    #[test]
    fn body_slot_response_has_the_bits_of_the_body_response() {
        let mut rng = shatter_integrators::SplitMix64::new(23);
        for _ in 0..200 {
            // A box's moments, which meet the triangle inequality.
            let (m, [a, b, c]) = (rng.range(0.5, 4.0), [0; 3].map(|_| rng.range(0.2, 2.0)));
            let moments = DVec3::new(b * b + c * c, a * a + c * c, a * a + b * b) * (m / 12.0);
            let mass = MassProperties::try_new(m, moments).unwrap();
            let turn = DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 3.0));
            let state = RigidState::moving(DVec3::ZERO, turn, DVec3::ZERO, DVec3::ZERO);
            let body = SolverBody::from_state(BodyKind::Dynamic, &state, &mass);
            let mut slots = Vec::new();
            SlotMass::fill(&[body], &mut slots);
            let (linear, angular) = (
                rng.unit_vector() * rng.range(0.1, 2.0),
                rng.unit_vector() * rng.range(0.1, 2.0),
            );
            let (want_linear, want_angular) = body.response(linear, angular);
            let got = slots[0].response(&Twist::new(linear, angular));
            let bits = |v: DVec3| v.to_array().map(f64::to_bits);
            assert_eq!(bits(got.linear()), bits(want_linear));
            assert_eq!(bits(got.angular()), bits(want_angular));
            // The world slot moves nothing.
            let world = slots[1].response(&Twist::new(linear, angular));
            assert!(world.linear() == DVec3::ZERO && world.angular() == DVec3::ZERO);
        }
    }

    #[test]
    fn body_validation_names_the_bad_value() {
        let mut body = SolverBody {
            inverse_mass: -1.0,
            ..SolverBody::STATIC
        };
        let message = body.validate(3).unwrap_err().to_string();
        assert!(message.contains("body 3") && message.contains("inverse mass") && message.contains("-1"));
        body.inverse_mass = 1.0;
        body.linear_velocity.y = f64::NAN;
        assert!(body.validate(0).unwrap_err().to_string().contains("NaN"));
        body.linear_velocity.y = 0.0;
        body.inverse_inertia = DMat3::from_cols_array(&[1.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        assert!(body.validate(0).unwrap_err().to_string().contains("symmetric"));
        body.inverse_inertia = DMat3::from_diagonal(DVec3::new(1.0, -1.0, 1.0));
        assert!(body.validate(0).is_err());
        // Symmetric with a non-negative diagonal but indefinite: only the minors catch it.
        body.inverse_inertia = DMat3::from_cols_array(&[1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        assert!(body.validate(0).is_err());
        body.inverse_inertia = DMat3::from_diagonal(DVec3::new(1.0, 0.0, 1.0));
        assert!(body.validate(0).is_ok());
    }
}
