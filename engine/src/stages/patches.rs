//! A pair's contacts as contact patches for the solver (shatter_solver::patch): grouping by
//! normal, warm starting the patch's friction from the contact cache, bounding a side contact's
//! friction by last step's normal impulse ([`hold_friction_bounds`]), and handing the patch's
//! impulses back to its points.
//!
//! Contacts whose normals agree within [`PATCH_NORMAL_COS`] share a patch (a box on a face: one
//! patch of four; a box on the edge between two faces of a level set: two). The patch's friction
//! acts at its centre as a force `F` along the plane and a twist `tau` about the normal. Each point
//! reports its share: `f_k = F / n + tau (n x r_k) / sum_j |r_j|^2`, with `r_k` the point's offset
//! from the centre within the plane. The shares sum to `F` (the offsets sum to zero) and their
//! moments about the centre sum to `tau`, so fracture models see the same total impulse and torque
//! the solver applied, and the contact cache, which keeps each point's share as a world vector,
//! gives back the same `F` and `tau` next step while the points persist.

use glam::DVec3;
use shatter_solver::{PatchPoint, PatchRows, Row};
use smallvec::SmallVec;

use crate::contact_cache::{PairCache, WarmStart};
use crate::contacts::PairContacts;

/// Cosine of the largest angle between two contact normals of one patch (about 5.7 degrees).
pub(crate) const PATCH_NORMAL_COS: f64 = 0.995;

/// The contact indices of `pair`, grouped into patches: each contact joins the first patch whose
/// first normal is within [`PATCH_NORMAL_COS`] of its own, in contact order (deterministic).
pub(crate) fn group_patches(pair: &PairContacts) -> SmallVec<[SmallVec<[usize; 4]>; 2]> {
    let mut patches: SmallVec<[SmallVec<[usize; 4]>; 2]> = SmallVec::new();
    for (c, contact) in pair.contacts.iter().enumerate() {
        match patches
            .iter_mut()
            .find(|patch| pair.contacts[patch[0]].normal.dot(contact.normal) >= PATCH_NORMAL_COS)
        {
            Some(patch) => patch.push(c),
            None => patches.push(SmallVec::from_slice(&[c])),
        }
    }
    patches
}

/// The unit normal of a patch: the normalized sum of its points' normals.
pub(crate) fn patch_normal(points: &[PatchPoint]) -> DVec3 {
    let sum: DVec3 = points.iter().map(|p| p.normal).sum();
    sum.try_normalize().unwrap_or(points[0].normal)
}

/// Offsets of a patch's points from its centre, projected onto its plane (world frame, m), one per
/// point: what shares the patch's friction force and twist among its points (module docs).
pub(crate) type PlaneOffsets = SmallVec<[DVec3; 4]>;

/// Offsets of the points from the patch centre, projected onto the plane normal to `normal`
/// (world frame, m), from the points' arms on body A. Worked out once a patch is built and kept
/// with it ([`SolvedPatch`](crate::stages::solve::SolvedPatch)): the warm start reads them, and
/// handing the impulses back reads them again, where the points themselves are no longer needed.
pub(crate) fn plane_offsets(points: &[PatchPoint], centre_arm_a: DVec3, normal: DVec3) -> PlaneOffsets {
    // Pushed one by one: collected, the same offsets took about 50 instructions more a patch
    // (measured on the 210-box pyramid's 400 patches).
    let mut offsets = PlaneOffsets::new();
    for p in points {
        let offset = p.arm_a - centre_arm_a;
        offsets.push(offset - normal * normal.dot(offset));
    }
    offsets
}

/// Sets the warm-start impulses of a patch's rows from the cache: each point's normal impulse, and
/// the friction force and twist rebuilt from the points' remembered friction vectors (`offsets`:
/// the points' [`plane_offsets`]). Returns how many of the patch's points the cache remembered.
pub(crate) fn warm_start_patch(
    rows: &mut [Row],
    patch: &PatchRows,
    offsets: &[DVec3],
    normal: DVec3,
    pair: &PairContacts,
    contacts: &[usize],
    cache: &PairCache<'_>,
) -> usize {
    let (mut force, mut twist) = (DVec3::ZERO, 0.0);
    let mut remembered = 0;
    for (k, &c) in contacts.iter().enumerate() {
        if let Some(warm) = cache.lookup(pair.contacts[c].feature) {
            rows[patch.normals as usize + k].warm = warm.normal;
            force += warm.friction;
            twist += offsets[k].cross(warm.friction).dot(normal);
            remembered += 1;
        }
    }
    if let Some(first) = patch.friction {
        rows[first as usize].warm = force.dot(patch.tangents[0]);
        rows[first as usize + 1].warm = force.dot(patch.tangents[1]);
    }
    if let Some(row) = patch.twist {
        rows[row as usize].warm = twist;
    }
    remembered
}

/// A patch whose normal is within this cosine of horizontal (`|n . up| <` it, about 5.7 degrees)
/// is a side contact ([`side_contact`]).
pub(crate) const SIDE_CONTACT_COSINE: f64 = 0.1;

/// Whether a patch of unit normal `normal` is a side contact under gravity along `-up` (`up` unit,
/// or zero without gravity): the bodies touch beside each other, not one on the other, and its
/// friction is bounded by last step's normal impulse ([`hold_friction_bounds`]). Without gravity
/// no patch is one.
pub(crate) fn side_contact(normal: DVec3, up: DVec3) -> bool {
    up != DVec3::ZERO && normal.dot(up).abs() < SIDE_CONTACT_COSINE
}

/// Bounds a side contact's friction and twist rows by the normal impulse the patch had at the
/// end of last step (its normal rows' warm starts, `rows` as [`warm_start_patch`] left them)
/// instead of the normal impulse the sweeps reach now, and clips their warm starts to those
/// bounds. Friction bounded by the impulses it is solved with lets the sweeps hold weight
/// between boxes of one course through a squeeze: a box's load can go down through its support
/// or sideways through its neighbour's friction (statically indeterminate), the sweeps press
/// the neighbours together to reach friction there, and the squeeze and the friction wander
/// from step to step. In a pyramid of flush unit boxes (base 10, no gaps, 30 Hz, sleeping off)
/// the top box moved at up to 1.6e-3 m/s in the first seconds, and with level-set cubes of 24
/// cells it jittered at up to 9e-2 m/s and walked 3.7 cm in 20 s; with these bounds neither body
/// moved faster than 3e-9 m/s in those 20 s (tests/stability_stacks.rs holds both for 10 s).
/// Fixed bounds make each step's friction a box constraint that the sweeps converge on. The cost
/// is one step of lag: a side contact touching for its first step has no friction, and a squeeze
/// that grows has last step's.
pub(crate) fn hold_friction_bounds(rows: &mut [Row], patch: &PatchRows, points: usize) {
    let first_normal = patch.normals as usize;
    let held: f64 = rows[first_normal..first_normal + points]
        .iter()
        .map(|r| r.warm.abs())
        .sum();
    let friction_rows = patch.friction.into_iter().flat_map(|f| [f, f + 1]).chain(patch.twist);
    for index in friction_rows {
        let row = &mut rows[index as usize];
        if let Some(friction) = row.friction.take() {
            let bound = friction.coefficient * held;
            row.lower = -bound;
            row.upper = bound;
            row.warm = row.warm.clamp(-bound, bound);
        }
    }
}

/// Hands a solved patch's impulses back to its points: normal impulses one to one, the friction
/// force and twist shared as the module docs say, along the patch's tangents; the impulses both
/// bodies felt (`Row::exchanged`) as the points' impulses, the warm starts (`Row::warm`) as their
/// warm starts. `offsets` are the points' [`plane_offsets`].
pub(crate) fn distribute_patch(
    rows: &[Row],
    patch: &PatchRows,
    offsets: &[DVec3],
    normal: DVec3,
    pair: &mut PairContacts,
    contacts: &[usize],
) {
    let spread: f64 = offsets.iter().map(|r| r.length_squared()).sum();
    // Each point's share of the patch friction whose rows' impulses `impulse` reads (none for a
    // patch without friction rows).
    let shares = |impulse: fn(&Row) -> f64| {
        let force = patch.friction.map_or(DVec3::ZERO, |first| {
            let first = first as usize;
            patch.tangents[0] * impulse(&rows[first]) + patch.tangents[1] * impulse(&rows[first + 1])
        });
        let twist = patch.twist.map_or(0.0, |row| impulse(&rows[row as usize]));
        let per_point = force / contacts.len() as f64;
        offsets.iter().map(move |offset| {
            if spread > 0.0 {
                per_point + normal.cross(*offset) * (twist / spread)
            } else {
                per_point
            }
        })
    };
    let applied = shares(|row| row.exchanged);
    let warm = shares(|row| row.warm);
    for (k, ((&c, share), warm_share)) in contacts.iter().zip(applied).zip(warm).enumerate() {
        let normal_row = &rows[patch.normals as usize + k];
        let contact = &mut pair.contacts[c];
        contact.normal_impulse = normal_row.exchanged;
        contact.friction_impulse = [share.dot(patch.tangents[0]), share.dot(patch.tangents[1])];
        contact.tangents = patch.tangents;
        contact.warm_start = WarmStart {
            normal: normal_row.warm,
            friction: warm_share,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contacts::ContactPoint;
    use crate::handle::BodyId;
    use glam::DMat3;
    use shatter_collision::FeatureId;
    use shatter_solver::{ContactPatch, NO_BODY, Softness, SolverBody, push_patch_rows};

    /// A unit cube of 1 kg (solid: inverse inertia 6 / (kg m^2)) moving at `velocity`, m/s.
    fn unit_cube(velocity: DVec3) -> SolverBody {
        SolverBody {
            linear_velocity: velocity,
            angular_velocity: DVec3::ZERO,
            inverse_mass: 1.0,
            inverse_inertia: DMat3::IDENTITY * 6.0,
        }
    }

    /// The patch of solver body 0 against the world at `points` (of one normal), with friction
    /// coefficient `mu`, rigid, energy-clamped, its tangents from the normal alone.
    fn world_patch(points: &[PatchPoint], mu: f64) -> ContactPatch<'_> {
        ContactPatch {
            a: 0,
            b: NO_BODY,
            points,
            normal: points[0].normal,
            friction: mu,
            softness: Softness::rigid(0.2),
            energy_clamp: true,
            friction_direction: None,
        }
    }

    /// The four corners of a unit cube's face on the world side (`B`) along `normal` (a world
    /// axis), as contact points: arms from the cube's centre and from the face's.
    fn face_corners(normal: DVec3) -> Vec<PatchPoint> {
        let [u, w] = [
            normal.any_orthonormal_vector(),
            normal.cross(normal.any_orthonormal_vector()),
        ];
        [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]
            .iter()
            .map(|&(x, z)| PatchPoint {
                arm_a: u * x + w * z - normal * 0.5,
                arm_b: u * x + w * z,
                normal,
                depth: 0.001,
            })
            .collect()
    }

    /// A patch's points report the impulses both bodies felt (`Row::exchanged`), not the moving
    /// body's total (`Row::lambda`, which also holds a shock pass's settling): each normal row's
    /// own, and the friction rows' shared so that the points' friction sums to the rows' force
    /// along the tangents. The warm starts stay `Row::warm`.
    #[test]
    fn patches_report_the_exchanged_impulses() {
        let body = unit_cube(DVec3::ZERO);
        let points = face_corners(DVec3::Y);
        let patch = world_patch(&points, 0.5);
        let mut rows = Vec::new();
        let patch_rows = push_patch_rows(&mut rows, &[body], &patch, 1.0 / 30.0).unwrap();
        for (k, row) in rows.iter_mut().enumerate() {
            row.exchanged = 1.0 + k as f64;
            row.lambda = row.exchanged + 40.0;
            row.warm = -row.exchanged;
        }
        let contact = |k: u32| ContactPoint {
            point: DVec3::ZERO,
            normal: DVec3::Y,
            depth: 0.001,
            feature: FeatureId(k),
            tangents: [DVec3::X, DVec3::Z],
            collision_impulse: 0.0,
            normal_impulse: f64::NAN,
            friction_impulse: [f64::NAN; 2],
            warm_start: WarmStart::default(),
        };
        let mut pair = PairContacts {
            body_a: BodyId {
                index: 0,
                generation: 0,
            },
            body_b: BodyId {
                index: 1,
                generation: 0,
            },
            friction: 0.5,
            restitution: 0.0,
            contacts: (0..4).map(contact).collect(),
            dense: [0, 1],
        };
        let offsets = plane_offsets(&points, patch_rows.centre_arm_a, DVec3::Y);
        distribute_patch(&rows, &patch_rows, &offsets, DVec3::Y, &mut pair, &[0, 1, 2, 3]);
        let first = patch_rows.friction.unwrap() as usize;
        let [t1, t2] = patch_rows.tangents;
        let force = t1 * rows[first].exchanged + t2 * rows[first + 1].exchanged;
        let mut reported = DVec3::ZERO;
        for (k, contact) in pair.contacts.iter().enumerate() {
            let normal_row = &rows[patch_rows.normals as usize + k];
            assert_eq!(contact.normal_impulse, normal_row.exchanged, "point {k}");
            assert_eq!(contact.warm_start.normal, normal_row.warm, "point {k}");
            reported += t1 * contact.friction_impulse[0] + t2 * contact.friction_impulse[1];
        }
        assert!((reported - force).length() < 1e-12, "{reported} vs {force}");
    }

    /// A side contact's friction is bounded by last step's normal impulse, not this step's: a
    /// 1 kg cube sliding down a wall at 2 m/s and hitting it at 1 m/s (this step's normal impulse
    /// about 1 N s) with 0.1 N s of normal impulse remembered and mu = 0.5 feels at most 0.05
    /// N s of friction along each tangent (0.5 N s with the bounds of the same solve), the twist
    /// row at most mu times the twist radius times 0.1 N s, and warm starts beyond those bounds
    /// are cut to them.
    #[test]
    fn patches_side_friction_is_bounded_by_last_steps_normal_impulse() {
        let mut bodies = [unit_cube(DVec3::new(-1.0, -2.0, 0.0))];
        let points = face_corners(DVec3::X);
        let mu = 0.5;
        let patch = world_patch(&points, mu);
        let dt = 1.0 / 30.0;
        let mut rows = Vec::new();
        let patch_rows = push_patch_rows(&mut rows, &bodies, &patch, dt).unwrap();
        let (first, twist) = (
            patch_rows.friction.unwrap() as usize,
            patch_rows.twist.unwrap() as usize,
        );
        let normals = patch_rows.normals as usize..patch_rows.normals as usize + points.len();
        let twist_coefficient = rows[twist].friction.unwrap().coefficient;
        for row in &mut rows[normals.clone()] {
            row.warm = 0.025;
        }
        (rows[first].warm, rows[first + 1].warm, rows[twist].warm) = (3.0, -3.0, 3.0);
        assert!(side_contact(DVec3::X, DVec3::Y) && !side_contact(DVec3::Y, DVec3::Y));
        assert!(
            !side_contact(DVec3::X, DVec3::ZERO),
            "without gravity no contact is a side contact"
        );
        hold_friction_bounds(&mut rows, &patch_rows, points.len());
        let held = 0.1;
        for (index, bound) in [
            (first, mu * held),
            (first + 1, mu * held),
            (twist, twist_coefficient * held),
        ] {
            let row = &rows[index];
            assert!(row.friction.is_none(), "row {index}");
            assert!(
                (row.upper - bound).abs() < 1e-15 && (row.lower + bound).abs() < 1e-15,
                "row {index}"
            );
            assert_eq!(
                row.warm.abs(),
                row.upper,
                "row {index}: the warm start is cut to the bound"
            );
        }
        for row in &mut rows {
            row.warm = 0.0;
        }
        shatter_solver::solve(&mut bodies, &mut rows, dt, &shatter_solver::SolverSettings::default()).unwrap();
        let normal: f64 = rows[normals].iter().map(|r| r.lambda).sum();
        assert!(normal > 0.9, "this step's normal impulse {normal} N s");
        let friction = DVec3::new(0.0, rows[first].lambda, rows[first + 1].lambda);
        assert!(
            rows[first].lambda.abs().max(rows[first + 1].lambda.abs()) <= mu * held + 1e-12,
            "{friction}"
        );
        assert!(
            friction.length() > 0.99 * mu * held,
            "the cube slides, so friction is at its bound: {friction}"
        );
        assert!(bodies[0].linear_velocity.y < -1.9, "{}", bodies[0].linear_velocity);
    }
}
