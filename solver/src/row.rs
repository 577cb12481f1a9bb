//! Constraint rows: one scalar constraint between two bodies, with its Jacobian, impulse bounds,
//! softness and position error, and the accumulated impulse the solve reads and writes.
//!
//! A row constrains the scalar relative velocity
//!
//! ```text
//! J v = linear_a . v_a + angular_a . w_a + linear_b . v_b + angular_b . w_b      (m/s or rad/s)
//! ```
//!
//! and applies the generalized impulse `J^T lambda`: `lambda linear_a` (N s) and `lambda angular_a`
//! (N m s) to body A, likewise to B. For a contact at world arms `r_a`, `r_b` with normal `n` from
//! B to A, `J = (n, r_a x n, -n, -(r_b x n))`, and `J v` is the separating speed.

use glam::DVec3;

use crate::body::{NO_BODY, SolverBody};
use crate::error::SolverError;
#[cfg(doc)]
use crate::settings::SolverSettings;
use crate::softness::{RowSoftness, check_erp};

/// The four blocks of a row's Jacobian, world frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Jacobian {
    /// Coefficient of body A's linear velocity, dimensionless: a unit direction for contacts and
    /// point joints, zero for angular rows.
    pub linear_a: DVec3,
    /// Coefficient of body A's angular velocity: `r_a x n` (m) for a linear row at arm `r_a`, a unit
    /// axis for an angular row.
    pub angular_a: DVec3,
    /// Coefficient of body B's linear velocity.
    pub linear_b: DVec3,
    /// Coefficient of body B's angular velocity.
    pub angular_b: DVec3,
}

impl Jacobian {
    /// The row `n . (p_a' - p_b')` of a linear constraint along the world direction `n` between the
    /// points at arms `arm_a` and `arm_b` (m, from each centre of mass): `(n, r_a x n, -n, -(r_b x n))`.
    pub fn linear(direction: DVec3, arm_a: DVec3, arm_b: DVec3) -> Self {
        Self {
            linear_a: direction,
            angular_a: arm_a.cross(direction),
            linear_b: -direction,
            angular_b: -arm_b.cross(direction),
        }
    }

    /// The row `axis . (w_a - w_b)` of an angular constraint about the world `axis`.
    pub fn angular(axis: DVec3) -> Self {
        Self {
            linear_a: DVec3::ZERO,
            angular_a: axis,
            linear_b: DVec3::ZERO,
            angular_b: -axis,
        }
    }

    /// Whether every component is finite.
    pub fn is_finite(&self) -> bool {
        self.linear_a.is_finite()
            && self.angular_a.is_finite()
            && self.linear_b.is_finite()
            && self.angular_b.is_finite()
    }
}

/// Marks a row as Coulomb friction: its bounds are `-mu N` and `+mu N`, with `N` the sum of
/// `|lambda|` over its normal rows (`normal_count` consecutive rows from `normal_row`), re-read every
/// time the row is solved; the row's own `lower` and `upper` are ignored. One normal row is the
/// friction of a contact point; several are the friction of a contact patch (patch.rs), whose
/// friction rows act at the patch centre and are bounded by the patch's whole normal impulse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Friction {
    /// Index of the first normal row in the same row slice; no normal row may be a friction row.
    pub normal_row: u32,
    /// Number of consecutive normal rows, at least 1.
    pub normal_count: u32,
    /// Friction coefficient: mu (dimensionless, >= 0) for a force row; mu times the patch's
    /// twist radius (m) for a row that resists twisting about the normal.
    pub coefficient: f64,
}

impl Friction {
    /// Friction bounded by the one normal row `normal_row` with coefficient `coefficient`.
    pub const fn point(normal_row: u32, coefficient: f64) -> Self {
        Self {
            normal_row,
            normal_count: 1,
            coefficient,
        }
    }

    /// The normal rows' indices.
    pub fn normal_rows(&self) -> core::ops::Range<usize> {
        let start = self.normal_row as usize;
        start..start + self.normal_count as usize
    }
}

/// How a row corrects its position error `phi`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BiasMode {
    /// Baumgarte stabilization in the velocity solve: the row aims at `J v = -ERP phi / h`, so the
    /// correction becomes real velocity (and kinetic energy). For joints.
    #[default]
    Velocity,
    /// Split impulse, for contacts: the velocity solve only lets a speculative gap (`phi > 0`) close
    /// (`J v >= -phi / h`); penetration (`phi < 0`) is removed by a separate solve over pseudo
    /// velocities that move positions but never touch the real velocities (see split.rs).
    Split,
}

/// One scalar constraint row between bodies `a` and `b` (indices into the body slice; either may be
/// [`NO_BODY`] for the world, not both).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// Index of body A in the body slice, or [`NO_BODY`].
    pub a: u32,
    /// Index of body B in the body slice, or [`NO_BODY`].
    pub b: u32,
    /// The row's Jacobian, world frame.
    pub jacobian: Jacobian,
    /// Lower bound of the accumulated impulse, N s (N m s for angular rows); may be `-inf`.
    /// Ignored for friction rows.
    pub lower: f64,
    /// Upper bound of the accumulated impulse, N s (N m s for angular rows); may be `+inf`.
    /// Ignored for friction rows.
    pub upper: f64,
    /// `Some` for a friction row: the bounds become `+-mu |lambda_normal|`.
    pub friction: Option<Friction>,
    /// Position error `phi`, m (rad for angular rows): negative for penetration or violation,
    /// positive for a gap.
    pub position_error: f64,
    /// Error reduction parameter in (0, 1].
    pub erp: f64,
    /// Constraint force mixing, s/kg (rad/(N m s) for angular rows), >= 0.
    pub cfm: f64,
    /// Where the position error is corrected.
    pub bias_mode: BiasMode,
    /// Extra desired `J v`, m/s (rad/s): a motor speed. Restitution is not done here.
    pub target_velocity: f64,
    /// The row's impulse at the end of the solve, N s (N m s): output. Each body felt all of it,
    /// except the lower body of a contact the shock pass settled with that body held still
    /// (shock.rs), which felt only [`Row::exchanged`].
    pub lambda: f64,
    /// The part of [`Row::lambda`] both bodies felt, N s (N m s): output, what contact reports and
    /// fracture models read. The same as `lambda`, except for a contact row the shock pass settled
    /// with one body held still: there the impulse the sweeps reached before that pass, all the
    /// held body felt, while the other body also took the pass's settling (`lambda - exchanged`),
    /// a correction of its velocity against a support that does not give way, which no body
    /// exerted. Action and reaction hold for it, so a fracture model may take it back from one
    /// body and give it to the other (shatter-fracture's impacts.rs). Read from `lambda`, the
    /// settling of a fragment wedged between two others that the pass held (33 000 and 52 000
    /// N s, cancelling on the wedged fragment) was taken back from those two when they broke,
    /// which had never felt it: their pieces flew off at up to 1.5 km/s and the fracture stage
    /// raised the kinetic energy from 4.7e4 J to 6.7e7 J (measured at 1.27 s on the scene of Su
    /// 2009 Fig. 7, `--example prescored_corner`, with a variant of the narrow phase's crease test
    /// that was not kept; with `exchanged` the same run has no such event).
    pub exchanged: f64,
    /// The impulse the solve starts this row from, N s (N m s): the warm start, input. The solve
    /// writes back what the next step's solve should start from. Not the shock pass's impulse:
    /// the pass freezes each contact level's lower bodies in turn, so its impulses answer this
    /// step's leftover error, not the stack's steady load, and a pile warm started from them keeps
    /// rocking (measured: warm started from the sweeps' impulses, every box of the random
    /// 1000-box pile is asleep from 11 s at 30 Hz and from 8 s at 60 Hz; from the shock pass's,
    /// columns still toppled after 20 s). For a contact row of an island at rest (every body
    /// slower than 0.25 m/s), the load the row carries once each body's weight is handed down to
    /// the ground (the load pass, loads.rs, with [`SolverSettings::carry_loads`]) where a trial
    /// sweep finds the island's loads nearer to holding than its sweeps' impulses; for every
    /// other row the impulse its sweeps reached before the shock pass (the same as `lambda` when
    /// there is none).
    pub warm: f64,
    /// Clamp every impulse increment of this row so it cannot add kinetic energy (Su 2009 section
    /// 3.2); meant for contact rows.
    pub energy_clamp: bool,
}

impl Row {
    /// A rigid bilateral row (ERP 1, CFM 0, unbounded, no bias, no target) with `jacobian` between
    /// `a` and `b`: a starting point for builders, which then set the fields that differ.
    pub fn new(a: u32, b: u32, jacobian: Jacobian) -> Self {
        Self {
            a,
            b,
            jacobian,
            lower: f64::NEG_INFINITY,
            upper: f64::INFINITY,
            friction: None,
            position_error: 0.0,
            erp: 1.0,
            cfm: 0.0,
            bias_mode: BiasMode::Velocity,
            target_velocity: 0.0,
            lambda: 0.0,
            exchanged: 0.0,
            warm: 0.0,
            energy_clamp: false,
        }
    }

    /// Sets ERP and CFM from a converted softness.
    pub fn with_softness(mut self, softness: RowSoftness) -> Self {
        self.erp = softness.erp;
        self.cfm = softness.cfm;
        self
    }

    /// ERP and CFM of this row.
    pub fn softness(&self) -> RowSoftness {
        RowSoftness {
            erp: self.erp,
            cfm: self.cfm,
        }
    }

    /// Potential energy in the row's spring at its current impulse, J, for the step `dt` (s) it was
    /// solved with: `1/2 h^-2 lambda^2 C`, `C = h CFM / ERP` (Li 2018 section 3.4, errata). This is
    /// what the energized fracture returns as kinetic energy when the row breaks.
    pub fn stored_energy(&self, dt: f64) -> f64 {
        self.softness().stored_energy(self.lambda, dt)
    }

    /// Checks the row on its own and against `body_count` bodies and `row_count` rows; `index`
    /// names the row in the error. `check_warm` also checks the warm-start impulse.
    pub(crate) fn validate(
        &self,
        index: usize,
        body_count: usize,
        row_count: usize,
        check_warm: bool,
    ) -> Result<(), SolverError> {
        if self.plainly_valid(index, body_count, row_count, check_warm) {
            return Ok(());
        }
        self.find_fault(index, body_count, row_count, check_warm)
    }

    /// The checks of `validate` one by one: the first fault found, named.
    fn find_fault(
        &self,
        index: usize,
        body_count: usize,
        row_count: usize,
        check_warm: bool,
    ) -> Result<(), SolverError> {
        for (field, body) in [("body a", self.a), ("body b", self.b)] {
            if body != NO_BODY && body as usize >= body_count {
                return Err(SolverError::IndexOutOfRange {
                    row: index,
                    field,
                    index: body,
                    count: body_count,
                });
            }
        }
        if self.a == self.b {
            return Err(SolverError::row(
                index,
                "bodies (a, b)",
                (self.a, self.b),
                "two different bodies, at most one of them NO_BODY (the world)",
            ));
        }
        if !self.jacobian.is_finite() {
            return Err(SolverError::row(index, "jacobian", self.jacobian, "finite components"));
        }
        let finite = |field, value: f64| {
            if value.is_finite() {
                Ok(())
            } else {
                Err(SolverError::row(index, field, value, "a finite number"))
            }
        };
        finite("position error (m or rad)", self.position_error)?;
        finite("target velocity (m/s or rad/s)", self.target_velocity)?;
        if check_warm {
            finite("warm (warm-start impulse, N s)", self.warm)?;
        }
        if check_erp(self.erp).is_err() {
            return Err(SolverError::row(index, "erp", self.erp, "a number in (0, 1]"));
        }
        if !(self.cfm.is_finite() && self.cfm >= 0.0) {
            return Err(SolverError::row(index, "cfm (s/kg)", self.cfm, "a finite number >= 0"));
        }
        match self.friction {
            None => {
                if self.lower.is_nan() || self.upper.is_nan() || self.lower > self.upper {
                    return Err(SolverError::row(
                        index,
                        "bounds (lower, upper) (N s)",
                        (self.lower, self.upper),
                        "lower <= upper, neither NaN",
                    ));
                }
            }
            Some(friction) => {
                if friction.normal_count == 0 {
                    return Err(SolverError::row(
                        index,
                        "friction normal row count",
                        friction.normal_count,
                        "at least 1",
                    ));
                }
                let last = u64::from(friction.normal_row) + u64::from(friction.normal_count) - 1;
                if last >= row_count as u64 {
                    return Err(SolverError::IndexOutOfRange {
                        row: index,
                        field: "friction normal row",
                        index: u32::try_from(last).unwrap_or(u32::MAX),
                        count: row_count,
                    });
                }
                if friction.normal_rows().contains(&index) {
                    return Err(SolverError::row(
                        index,
                        "friction normal row",
                        friction.normal_row,
                        "another row (the contact's normal row)",
                    ));
                }
                if !(friction.coefficient.is_finite() && friction.coefficient >= 0.0) {
                    return Err(SolverError::row(
                        index,
                        "friction coefficient",
                        friction.coefficient,
                        "a finite number >= 0",
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Row {
    /// Whether `validate` would accept the row, decided with few branches (a solve checks every
    /// row every step); `validate` goes through the checks one by one only when this says no, to
    /// name what is wrong.
    #[inline]
    pub(crate) fn plainly_valid(&self, index: usize, body_count: usize, row_count: usize, check_warm: bool) -> bool {
        let j = &self.jacobian;
        // `x * 0` is 0 for every finite `x` and NaN for an infinite or NaN one.
        let warm = if check_warm { self.warm } else { 0.0 };
        let finite = (j.linear_a * 0.0 + j.angular_a * 0.0 + j.linear_b * 0.0 + j.angular_b * 0.0).element_sum()
            + (self.position_error * 0.0 + self.target_velocity * 0.0 + self.cfm * 0.0 + warm * 0.0)
            == 0.0;
        let in_range = |body: u32| body == NO_BODY || (body as usize) < body_count;
        let bounds = match self.friction {
            // False when either bound is NaN.
            None => self.lower <= self.upper,
            Some(friction) => {
                let rows = friction.normal_rows();
                friction.normal_count > 0
                    && rows.end <= row_count
                    && !rows.contains(&index)
                    && friction.coefficient.is_finite()
                    && friction.coefficient >= 0.0
            }
        };
        finite
            & in_range(self.a)
            & in_range(self.b)
            & (self.a != self.b)
            & (self.erp > 0.0)
            & (self.erp <= 1.0)
            & (self.cfm >= 0.0)
            & bounds
    }
}

/// `J M^-1 J^T` of `row` over `bodies`, 1/kg (1/(kg m^2) for angular rows): the inverse of the row's
/// effective mass, without CFM. Zero when neither body can move along the row; a side whose index is
/// [`NO_BODY`] or out of range counts as the world.
pub fn inverse_effective_mass(bodies: &[SolverBody], row: &Row) -> f64 {
    let side = |index: u32, linear: DVec3, angular: DVec3| match bodies.get(index as usize) {
        Some(body) if index != NO_BODY => {
            linear.length_squared() * body.inverse_mass + angular.dot(body.inverse_inertia * angular)
        }
        _ => 0.0,
    };
    let j = &row.jacobian;
    side(row.a, j.linear_a, j.angular_a) + side(row.b, j.linear_b, j.angular_b)
}

/// The impulse a group of rows (a joint, a contact) applied to its body A, summed over the rows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GroupImpulse {
    /// `sum lambda_i linear_a_i`: the linear impulse on body A, N s.
    pub linear: DVec3,
    /// `sum lambda_i angular_a_i` over the purely angular rows (zero linear part): the constraint
    /// torque impulse on A, N m s, without the moment of the linear impulse.
    pub angular: DVec3,
    /// The largest `|lambda_i|` of any row, N s or N m s (the per-row rule of Li 2018 section 3.5).
    pub max_row: f64,
}

/// Sums the impulses of a group of rows; see [`GroupImpulse`].
pub fn group_impulse(rows: &[Row]) -> GroupImpulse {
    let mut total = GroupImpulse::default();
    for row in rows {
        if row.jacobian.linear_a == DVec3::ZERO && row.jacobian.linear_b == DVec3::ZERO {
            total.angular += row.lambda * row.jacobian.angular_a;
        } else {
            total.linear += row.lambda * row.jacobian.linear_a;
        }
        total.max_row = total.max_row.max(row.lambda.abs());
    }
    total
}

/// Whether a group of solved rows (one joint) carried more than `threshold`: the norm of the group's
/// linear impulse on body A (N s) when the group has linear rows, else the norm of its angular
/// impulse (N m s).
///
/// The norm rather than the largest `|lambda_i|` (Li 2018's per-row rule, available as
/// [`GroupImpulse::max_row`]) because a ball joint's three rows lie along the world axes: the
/// largest component of the same pull would depend on how the joint happens to be oriented
/// relative to them, by up to a factor sqrt(3).
pub fn row_group_broken(rows: &[Row], threshold: f64) -> bool {
    let impulse = group_impulse(rows);
    let has_linear = rows
        .iter()
        .any(|row| row.jacobian.linear_a != DVec3::ZERO || row.jacobian.linear_b != DVec3::ZERO);
    let magnitude = if has_linear {
        impulse.linear.length()
    } else {
        impulse.angular.length()
    };
    magnitude > threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_lambda(jacobian: Jacobian, lambda: f64) -> Row {
        Row {
            lambda,
            ..Row::new(0, NO_BODY, jacobian)
        }
    }

    /// A pull of 5 N s split 3 / 4 over the x and y rows of a point joint: the group impulse is the
    /// vector sum, the breaking rule reads its norm (5), not the largest row (4).
    #[test]
    fn row_group_impulse_and_breaking_rule() {
        let arm = DVec3::new(0.0, 1.0, 0.0);
        let rows = [
            with_lambda(Jacobian::linear(DVec3::X, arm, DVec3::ZERO), 3.0),
            with_lambda(Jacobian::linear(DVec3::Y, arm, DVec3::ZERO), 4.0),
            with_lambda(Jacobian::linear(DVec3::Z, arm, DVec3::ZERO), 0.0),
            with_lambda(Jacobian::angular(DVec3::Z), 0.5),
        ];
        let impulse = group_impulse(&rows);
        assert_eq!(impulse.linear, DVec3::new(3.0, 4.0, 0.0));
        assert_eq!(impulse.angular, DVec3::new(0.0, 0.0, 0.5));
        assert_eq!(impulse.max_row, 4.0);
        assert!(row_group_broken(&rows, 4.99));
        assert!(!row_group_broken(&rows, 5.01));
        // A purely angular group breaks on its torque impulse.
        assert!(row_group_broken(&rows[3..], 0.49));
        assert!(!row_group_broken(&rows[3..], 0.51));
    }

    #[test]
    fn row_inverse_effective_mass_counts_dynamic_sides_only() {
        let body = SolverBody {
            inverse_mass: 0.5,
            inverse_inertia: glam::DMat3::from_diagonal(DVec3::new(1.0, 2.0, 3.0)),
            ..SolverBody::STATIC
        };
        let bodies = [body, SolverBody::STATIC];
        let jacobian = Jacobian::linear(DVec3::X, DVec3::Y, DVec3::Z);
        // 0.5 |x|^2 + (y x x) . I^-1 (y x x) = 0.5 + 3 for the dynamic side, nothing for the static.
        for (a, b) in [(0, 1), (0, NO_BODY)] {
            let k = inverse_effective_mass(&bodies, &Row::new(a, b, jacobian));
            assert!((k - 3.5).abs() < 1e-15, "{k}");
        }
        let reversed = inverse_effective_mass(&bodies, &Row::new(1, 0, jacobian));
        // Body 0 now sits on side B: 0.5 |x|^2 + (z x x) . I^-1 (z x x) = 0.5 + 2.
        assert!((reversed - 2.5).abs() < 1e-15, "{reversed}");
    }

    /// The quick check accepts exactly the rows the one-by-one checks accept: a valid contact,
    /// friction and joint row, each with one field spoiled in every way that matters.
    #[test]
    fn row_quick_check_agrees_with_the_checks_one_by_one() {
        let jacobian = Jacobian::linear(DVec3::Y, DVec3::new(0.3, -0.5, 0.2), DVec3::new(-0.1, 0.5, 0.4));
        let normal = Row {
            lower: 0.0,
            bias_mode: BiasMode::Split,
            energy_clamp: true,
            warm: 0.4,
            position_error: -0.01,
            erp: 0.2,
            ..Row::new(1, 0, jacobian)
        };
        let friction = Row {
            friction: Some(Friction::point(0, 0.5)),
            ..Row::new(1, NO_BODY, jacobian)
        };
        let joint = Row::new(0, 1, Jacobian::angular(DVec3::Z));
        let spoiled = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 0.0, 2.0, 1e300];
        let mut variants = Vec::new();
        for base in [normal, friction, joint] {
            variants.push(base);
            for value in spoiled {
                let mut with = |edit: &dyn Fn(&mut Row)| {
                    let mut row = base;
                    edit(&mut row);
                    variants.push(row);
                };
                with(&|r| r.jacobian.linear_a.x = value);
                with(&|r| r.jacobian.angular_a.z = value);
                with(&|r| r.jacobian.linear_b.y = value);
                with(&|r| r.jacobian.angular_b.x = value);
                with(&|r| r.position_error = value);
                with(&|r| r.target_velocity = value);
                with(&|r| r.warm = value);
                with(&|r| r.erp = value);
                with(&|r| r.cfm = value);
                with(&|r| r.lower = value);
                with(&|r| r.upper = -value);
                with(&|r| {
                    if let Some(f) = &mut r.friction {
                        f.coefficient = value;
                    }
                });
            }
            for (a, b) in [(0, 0), (5, 0), (0, 5), (NO_BODY, NO_BODY), (NO_BODY, 1)] {
                variants.push(Row { a, b, ..base });
            }
            for (first, count) in [(0, 0), (1, 1), (0, 3), (2, 1), (u32::MAX, 2)] {
                if base.friction.is_some() {
                    variants.push(Row {
                        friction: Some(Friction {
                            normal_row: first,
                            normal_count: count,
                            coefficient: 0.5,
                        }),
                        ..base
                    });
                }
            }
        }
        let (mut accepted, mut refused) = (0, 0);
        for row in &variants {
            for check_warm in [false, true] {
                let quick = row.plainly_valid(1, 2, 3, check_warm);
                let careful = row.find_fault(1, 2, 3, check_warm);
                assert_eq!(quick, careful.is_ok(), "{row:?}: {careful:?}");
                if quick {
                    accepted += 1;
                } else {
                    refused += 1;
                }
            }
        }
        assert!(accepted > 20 && refused > 100, "{accepted} accepted, {refused} refused");
    }
}
