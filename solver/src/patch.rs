//! Contact patches: the rows of several contact points that share one contact plane, with their
//! friction acting at the patch centre.
//!
//! A box resting on a face touches at four corners. Per-point friction gives it eight friction rows
//! whose impulses can balance one another (equal and opposite pairs exert no net force or torque),
//! so the friction of a statically indeterminate contact has a null space: the sweeps leave
//! self-cancelling impulses in it, each step's warm start carries them on, and once one corner's
//! share reaches its bound `mu lambda_n` the box slides. Measured before this: a column of five unit
//! boxes at 30 Hz took lateral speeds of 1 cm/s on its first step even with 200 sweeps, and walked
//! 10 cm in three seconds.
//!
//! A patch keeps one normal row per point (penetration and tipping are pointwise) and replaces the
//! per-point friction with three rows at the centroid `c` of the points, as in the patch friction of
//! PhysX and of Bullet's "friction anchors":
//!
//! - two tangent rows `J = (t, r_a x t, -t, -(r_b x t))` with arms `r = c - x`, each bounded by
//!   `mu N`, `N` the sum of the patch's normal impulses (a pyramid, as for points; contact.rs);
//! - one twist row `J = (0, n, 0, -n)` resisting spin about the normal, bounded by `mu r_t N` with
//!   `r_t` the mean distance of the points from the centroid in the contact plane: the torque the
//!   points' Coulomb friction can resist when they share the load equally.
//!
//! The three rows move the bodies' relative motion at the patch in three independent directions,
//! so their impulses are unique for given normal impulses: there is nothing left to drift. They are
//! listed before the normal rows, so each sweep ends on the normal rows (non-penetration matters
//! more than friction, as in Box2D).

use glam::DVec3;

use crate::body::SolverBody;
use crate::contact::{UNIT_TOLERANCE, contact_normal_row, contact_normal_row_with, tangent_basis, validate_pair};
use crate::error::SolverError;
use crate::row::{Friction, Jacobian, Row};
use crate::softness::{RowSoftness, Softness};
use smallvec::{SmallVec, smallvec};

/// One point of a contact patch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PatchPoint {
    /// From A's centre of mass to the contact point, world frame, m.
    pub arm_a: DVec3,
    /// From B's centre of mass to the contact point, world frame, m.
    pub arm_b: DVec3,
    /// Unit normal at the point, from B towards A, world frame.
    pub normal: DVec3,
    /// Penetration along the normal, m: positive for overlap, negative for a speculative gap.
    pub depth: f64,
}

/// Contact points between bodies `a` and `b` that share (nearly) one contact plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPatch<'p> {
    /// Index of body A in the body slice, or [`NO_BODY`](crate::body::NO_BODY).
    pub a: u32,
    /// Index of body B in the body slice, or [`NO_BODY`](crate::body::NO_BODY).
    pub b: u32,
    /// The points, at least one.
    pub points: &'p [PatchPoint],
    /// Unit normal of the contact plane, from B towards A: the friction rows act in the plane
    /// normal to it and the twist row about it.
    pub normal: DVec3,
    /// Coulomb friction coefficient mu, >= 0.
    pub friction: f64,
    /// Softness of the normal rows.
    pub softness: Softness,
    /// Clamp every impulse increment of the rows so it cannot add kinetic energy (Su 2009 §3.2).
    pub energy_clamp: bool,
    /// Direction for the first friction tangent (projected onto the contact plane), e.g. the
    /// relative sliding velocity at the centre; `None` for a basis from the normal alone.
    pub friction_direction: Option<DVec3>,
}

/// Where a patch's rows went in the row list, and the geometry that maps their impulses back to
/// the points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PatchRows {
    /// Index of the first friction row: tangent `t1`, then `t2` at `friction + 1`; `None` for a
    /// patch without friction (coefficient zero), which has no friction or twist rows.
    pub friction: Option<u32>,
    /// Index of the twist row, when the patch has an extent to twist about.
    pub twist: Option<u32>,
    /// Index of the first normal row; point `k`'s is `normals + k`.
    pub normals: u32,
    /// The friction tangents `t1`, `t2`, unit, with `t1 x t2` the patch normal.
    pub tangents: [DVec3; 2],
    /// The patch centre, relative to A's centre of mass, world frame, m.
    pub centre_arm_a: DVec3,
}

/// Appends the rows of `patch` for a step of `dt` (s): two tangent rows and a twist row at the
/// centre (the twist row only when the points span a length), then one normal row per point.
/// A patch without friction (coefficient zero) has its normal rows only: its friction rows would
/// be bounded by `0 N` and never act, and a heap of debris spends most of its rows on friction.
/// Errors name the bad field; on error `rows` is left as it was.
pub fn push_patch_rows(
    rows: &mut Vec<Row>,
    bodies: &[SolverBody],
    patch: &ContactPatch<'_>,
    dt: f64,
) -> Result<PatchRows, SolverError> {
    validate(bodies, patch)?;
    let count = patch.points.len();
    let start = u32::try_from(rows.len())
        .ok()
        .filter(|&i| u64::from(i) + count as u64 + 3 < u64::from(u32::MAX))
        .ok_or_else(|| SolverError::invalid("row count", rows.len(), "fewer than u32::MAX rows"))?;
    let (a, b, n) = (patch.a, patch.b, patch.normal);
    let inverse_count = 1.0 / count as f64;
    let centre_arm_a = patch.points.iter().map(|p| p.arm_a).sum::<DVec3>() * inverse_count;
    let centre_arm_b = patch.points.iter().map(|p| p.arm_b).sum::<DVec3>() * inverse_count;
    let twist_radius = patch
        .points
        .iter()
        .map(|p| {
            let offset = p.arm_a - centre_arm_a;
            (offset - n * n.dot(offset)).length()
        })
        .sum::<f64>()
        * inverse_count;
    let has_friction = patch.friction > 0.0;
    let has_twist = has_friction && twist_radius > 1e-9 && count > 1;
    let friction_rows = u32::from(has_friction) * 2 + u32::from(has_twist);
    let normals = start + friction_rows;

    let tangents = friction_tangents(n, patch.friction_direction);
    // Each normal row's ERP and CFM, found (and checked) before any row is written: one pair for
    // the whole patch, unless its softness is a frequency, which reads each row's own effective
    // mass.
    let at = |point: &PatchPoint| (point.arm_a, point.arm_b, point.normal, point.depth);
    let softness: SmallVec<[RowSoftness; 4]> = match patch.softness {
        Softness::Frequency { .. } => (patch.points.iter())
            .map(|point| {
                contact_normal_row(bodies, (a, b), at(point), patch.softness, patch.energy_clamp, dt)
                    .map(|row| row.softness())
            })
            .collect::<Result<_, _>>()?,
        shared => smallvec![shared.erp_cfm(dt, f64::NAN)?],
    };
    // The rows are written where they lie in `rows` (a row is 208 bytes: built apart and then
    // pushed, each was copied once or twice more, a fifth of the row building of the aligned
    // 1000-box pile).
    let friction = |jacobian: Jacobian, coefficient: f64| Row {
        friction: Some(Friction {
            normal_row: normals,
            normal_count: count as u32,
            coefficient,
        }),
        energy_clamp: patch.energy_clamp,
        ..Row::new(a, b, jacobian)
    };
    if has_friction {
        rows.extend(
            tangents
                .iter()
                .map(|&tangent| friction(Jacobian::linear(tangent, centre_arm_a, centre_arm_b), patch.friction)),
        );
    }
    if has_twist {
        rows.extend([friction(Jacobian::angular(n), patch.friction * twist_radius)]);
    }
    rows.extend(patch.points.iter().enumerate().map(|(k, point)| {
        contact_normal_row_with(a, b, at(point), patch.energy_clamp, softness[k.min(softness.len() - 1)])
    }));
    Ok(PatchRows {
        friction: has_friction.then_some(start),
        twist: has_twist.then_some(start + 2),
        normals,
        tangents,
        centre_arm_a,
    })
}

/// The friction tangents of a contact plane with unit normal `n`: `t1` along `direction` projected
/// onto the plane when that is well defined, else the fixed basis of [`tangent_basis`].
pub(crate) fn friction_tangents(n: DVec3, direction: Option<DVec3>) -> [DVec3; 2] {
    if let Some(direction) = direction {
        let in_plane = direction - n * n.dot(direction);
        let length = in_plane.length();
        if length > 1e-12 * direction.length() && length > 0.0 {
            let t1 = in_plane / length;
            return [t1, n.cross(t1)];
        }
    }
    let (t1, t2) = tangent_basis(n);
    [t1, t2]
}

/// Checks a patch: body indices, at least one point, finite arms and depths, unit normals, a valid
/// friction coefficient and direction.
fn validate(bodies: &[SolverBody], patch: &ContactPatch<'_>) -> Result<(), SolverError> {
    validate_pair(
        bodies,
        ["patch body a", "patch body b", "patch bodies (a, b)"],
        (patch.a, patch.b),
        patch.friction,
        patch.friction_direction,
    )?;
    if patch.points.is_empty() {
        return Err(SolverError::invalid("patch point count", 0, "at least one point"));
    }
    let unit = |n: DVec3| n.is_finite() && (n.length() - 1.0).abs() <= UNIT_TOLERANCE;
    if !unit(patch.normal) {
        return Err(SolverError::invalid(
            "patch normal",
            patch.normal,
            "a finite unit vector",
        ));
    }
    for point in patch.points {
        if !(point.arm_a.is_finite() && point.arm_b.is_finite()) {
            return Err(SolverError::invalid(
                "patch point arms (m)",
                (point.arm_a, point.arm_b),
                "finite components",
            ));
        }
        if !unit(point.normal) {
            return Err(SolverError::invalid(
                "patch point normal",
                point.normal,
                "a finite unit vector",
            ));
        }
        if !point.depth.is_finite() {
            return Err(SolverError::invalid(
                "patch point depth (m)",
                point.depth,
                "a finite number",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::NO_BODY;
    use crate::pgs::solve;
    use crate::settings::SolverSettings;
    use glam::DMat3;

    /// A unit box of 1000 kg resting on the ground with its four bottom corners as one patch.
    fn box_on_ground(rows: &mut Vec<Row>, bodies: &[SolverBody], depth: f64) -> PatchRows {
        box_on_ground_with(rows, bodies, depth, 0.5)
    }

    /// [`box_on_ground`] with friction coefficient `friction`.
    fn box_on_ground_with(rows: &mut Vec<Row>, bodies: &[SolverBody], depth: f64, friction: f64) -> PatchRows {
        let points: Vec<PatchPoint> = [(-0.5, -0.5), (0.5, -0.5), (-0.5, 0.5), (0.5, 0.5)]
            .iter()
            .map(|&(x, z)| PatchPoint {
                arm_a: DVec3::new(x, -0.5, z),
                arm_b: DVec3::new(x, 0.0, z),
                normal: DVec3::Y,
                depth,
            })
            .collect();
        let patch = ContactPatch {
            a: 0,
            b: NO_BODY,
            points: &points,
            normal: DVec3::Y,
            friction,
            softness: Softness::rigid(0.2),
            energy_clamp: true,
            friction_direction: None,
        };
        push_patch_rows(rows, bodies, &patch, 1.0 / 30.0).unwrap()
    }

    fn resting_box(velocity: DVec3, spin: DVec3) -> SolverBody {
        SolverBody {
            linear_velocity: velocity,
            angular_velocity: spin,
            inverse_mass: 1e-3,
            inverse_inertia: DMat3::IDENTITY * (6.0 / 1000.0),
        }
    }

    /// A box landing flat at `g dt` is stopped by normal impulses summing to `m g dt`, with no
    /// friction force and no twist; a spinning box sliding on its face is slowed by a friction
    /// force and a twist within their Coulomb bounds `mu N` and `mu r_t N` (`r_t = sqrt(2) / 2` m
    /// for the corners of a unit square).
    #[test]
    fn patch_rows_stop_a_landing_box_and_bound_friction_and_twist() {
        let dt = 1.0 / 30.0;
        let g_dt = 9.81 * dt;
        let mut bodies = [resting_box(DVec3::NEG_Y * g_dt, DVec3::ZERO)];
        let mut rows = Vec::new();
        let patch = box_on_ground(&mut rows, &bodies, 0.0);
        assert_eq!((patch.friction, patch.twist, patch.normals), (Some(0), Some(2), 3));
        solve(&mut bodies, &mut rows, dt, &SolverSettings::default()).unwrap();
        let normal: f64 = rows[3..7].iter().map(|r| r.lambda).sum();
        assert!(
            (normal - 1000.0 * g_dt).abs() < 1e-6 * normal,
            "normal impulse {normal}"
        );
        let left = bodies[0].linear_velocity.length();
        assert!(left < 1e-5, "the box still moves at {left} m/s");
        for row in &rows[0..3] {
            assert!(row.lambda.abs() < 1e-6 * normal, "friction {}", row.lambda);
        }

        let mut bodies = [resting_box(DVec3::new(3.0, -g_dt, 0.0), DVec3::Y * 5.0)];
        let mut rows = Vec::new();
        box_on_ground(&mut rows, &bodies, 0.0);
        solve(&mut bodies, &mut rows, dt, &SolverSettings::default()).unwrap();
        let normal: f64 = rows[3..7].iter().map(|r| r.lambda).sum();
        let force = DVec3::new(rows[0].lambda, 0.0, rows[1].lambda).length();
        assert!(
            force <= 0.5 * normal * (1.0 + 1e-9) * 2f64.sqrt(),
            "friction {force} of {normal}"
        );
        assert!(
            force > 0.4 * normal,
            "a sliding box feels friction: {force} of {normal}"
        );
        let twist_bound = 0.5 * 0.5 * 2f64.sqrt() * normal;
        assert!(rows[2].lambda.abs() <= twist_bound * (1.0 + 1e-9));
        assert!(
            rows[2].lambda < -0.5 * twist_bound,
            "the spin is resisted: {}",
            rows[2].lambda
        );
        assert!(bodies[0].linear_velocity.x < 3.0 && bodies[0].angular_velocity.y < 5.0);
    }

    /// A patch without friction is its normal rows alone, and while its points stay apart it
    /// solves as the patch with friction does (whose friction is bounded by normal impulses that
    /// stay zero): a box sliding at 1 m/s 5 mm above the ground, falling 2 mm within the step,
    /// keeps its velocity either way. Touching the ground, the box is slowed by the friction rows
    /// and slides on without them.
    #[test]
    fn patch_rows_without_friction_are_the_normal_rows_alone() {
        let dt = 1.0 / 30.0;
        let solved = |depth: f64, velocity: DVec3, friction: f64| {
            let mut bodies = [resting_box(velocity, DVec3::new(0.0, 0.3, 0.0))];
            let mut rows = Vec::new();
            let patch = box_on_ground_with(&mut rows, &bodies, depth, friction);
            solve(&mut bodies, &mut rows, dt, &SolverSettings::default()).unwrap();
            (patch, rows, bodies[0])
        };
        let apart = DVec3::new(1.0, -0.002 / dt, 0.0);
        let (patch, rows, without) = solved(-0.005, apart, 0.0);
        assert_eq!((patch.friction, patch.twist, patch.normals), (None, None, 0));
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(|row| row.friction.is_none() && row.lambda == 0.0));
        let (patch, _, with) = solved(-0.005, apart, 0.5);
        assert_eq!((patch.friction, patch.normals), (Some(0), 3));
        assert_eq!(with.linear_velocity, apart);
        assert_eq!(without.linear_velocity, apart);
        assert_eq!(with.angular_velocity, without.angular_velocity);

        let touching = DVec3::new(1.0, -9.81 * dt, 0.0);
        let (_, _, slowed) = solved(0.0, touching, 0.5);
        let (_, _, sliding) = solved(0.0, touching, 0.0);
        // `mu g dt` = 0.16 m/s taken off by the friction rows; none without them.
        assert!(
            (slowed.linear_velocity.x - (1.0 - 0.5 * 9.81 * dt)).abs() < 1e-6,
            "{slowed:?}"
        );
        assert!((sliding.linear_velocity.x - 1.0).abs() < 1e-12, "{sliding:?}");
        assert!(sliding.linear_velocity.y.abs() < 1e-9, "{sliding:?}");
    }

    /// A patch's normal rows are the rows `contact_normal_row` builds for its points alone, bit
    /// for bit, for a softness shared by the whole patch and for a frequency, which gives each
    /// row the ERP and CFM of its own effective mass (here different: the corners' arms differ);
    /// a frequency refused leaves the row list as it was.
    #[test]
    fn patch_normal_rows_match_contact_normal_rows_for_every_softness() {
        let dt = 1.0 / 60.0;
        let bodies = [resting_box(DVec3::ZERO, DVec3::ZERO)];
        let points = [(-0.5, 0.0), (0.5, 0.2), (0.1, 0.5)].map(|(x, z)| PatchPoint {
            arm_a: DVec3::new(x, -0.5, z),
            arm_b: DVec3::new(x, 0.0, z),
            normal: DVec3::Y,
            depth: 0.01,
        });
        for softness in [
            Softness::rigid(0.2),
            Softness::ErpCfm { erp: 0.5, cfm: 1e-4 },
            Softness::SpringDamper {
                stiffness: 1e5,
                damping: 1e3,
            },
            Softness::Frequency {
                hertz: 5.0,
                damping_ratio: 0.7,
            },
        ] {
            let patch = ContactPatch {
                a: 0,
                b: NO_BODY,
                points: &points,
                normal: DVec3::Y,
                friction: 0.5,
                softness,
                energy_clamp: true,
                friction_direction: None,
            };
            let mut rows = Vec::new();
            let built = push_patch_rows(&mut rows, &bodies, &patch, dt).unwrap();
            let normals = &rows[built.normals as usize..];
            assert_eq!(normals.len(), points.len());
            for (row, point) in normals.iter().zip(&points) {
                let at = (point.arm_a, point.arm_b, point.normal, point.depth);
                let alone = contact_normal_row(&bodies, (0, NO_BODY), at, softness, true, dt).unwrap();
                assert_eq!(*row, alone, "{softness:?}");
            }
            if let Softness::Frequency { .. } = softness {
                assert_ne!(normals[0].cfm, normals[2].cfm, "each row its own effective mass");
            }
        }
        let mut rows = Vec::new();
        box_on_ground(&mut rows, &bodies, 0.0);
        let before = rows.clone();
        let refused = ContactPatch {
            a: 0,
            b: NO_BODY,
            points: &points,
            normal: DVec3::Y,
            friction: 0.5,
            softness: Softness::Frequency {
                hertz: 0.0,
                damping_ratio: 0.7,
            },
            energy_clamp: true,
            friction_direction: None,
        };
        let error = push_patch_rows(&mut rows, &bodies, &refused, dt)
            .unwrap_err()
            .to_string();
        assert!(error.contains("frequency"), "{error}");
        assert_eq!(rows, before);
    }

    /// Bad patches are refused with the offending field named, and the row list is left as it was.
    #[test]
    fn patch_bad_input_is_named() {
        let bodies = [resting_box(DVec3::ZERO, DVec3::ZERO)];
        let point = PatchPoint {
            arm_a: DVec3::ZERO,
            arm_b: DVec3::ZERO,
            normal: DVec3::Y,
            depth: f64::NAN,
        };
        let mut patch = ContactPatch {
            a: 0,
            b: NO_BODY,
            points: &[],
            normal: DVec3::Y,
            friction: 0.5,
            softness: Softness::rigid(0.2),
            energy_clamp: true,
            friction_direction: None,
        };
        let mut rows = Vec::new();
        let message = |patch: &ContactPatch<'_>, rows: &mut Vec<Row>| {
            push_patch_rows(rows, &bodies, patch, 0.1).unwrap_err().to_string()
        };
        assert!(message(&patch, &mut rows).contains("patch point count"));
        let points = [point];
        patch.points = &points;
        assert!(message(&patch, &mut rows).contains("patch point depth"));
        patch.friction = -1.0;
        assert!(message(&patch, &mut rows).contains("friction coefficient"));
        patch.friction = 0.5;
        patch.b = 7;
        assert!(message(&patch, &mut rows).contains("patch body b"));
        assert!(rows.is_empty());
        // A softness refused once the patch's friction rows are in: the rows already there stay,
        // and nothing of the refused patch is left behind.
        box_on_ground(&mut rows, &bodies, 0.0);
        let before = rows.clone();
        let corner = |x: f64| PatchPoint {
            arm_a: DVec3::new(x, -0.5, 0.0),
            arm_b: DVec3::new(x, 0.0, 0.0),
            normal: DVec3::Y,
            depth: 0.0,
        };
        let points = [corner(-0.5), corner(0.5)];
        patch.points = &points;
        patch.b = NO_BODY;
        patch.softness = Softness::ErpCfm { erp: 1.5, cfm: 0.0 };
        assert!(message(&patch, &mut rows).contains("erp"));
        assert_eq!(rows, before);
    }
}
