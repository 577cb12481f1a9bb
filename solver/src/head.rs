//! Row heads: what the solve's bookkeeping reads of each prepared row, packed apart from it.
//!
//! A prepared row holds everything its sweeps read that they cannot form from the bodies
//! (Jacobians, bounds, targets: 192 bytes). Most passes that arrange the rows read only the row's
//! two bodies and what kind of row it is: the shock order's contact levels and groups, the runs of
//! rows between one body pair, the split pass's rows, the batches' plans, the energy budgets'
//! pairs, the joints' block. For a heap of debris in one island each such pass streamed the tens
//! of megabytes of prepared rows; the heads hold what they read in 20 bytes a row, written as the
//! rows are prepared.

use crate::joint_block::is_bilateral;
use crate::pgs::Prepared;

/// One prepared row's bodies and kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RowHead {
    /// The row's velocity slots (body A, body B).
    bodies: [u32; 2],
    /// For a friction row, the normal rows that bound it, `first..end`; zeros otherwise.
    normals: [u32; 2],
    /// The kind bits below.
    kind: u32,
}

/// The row can act (`J M^-1 J^T > 0`).
const ACTIVE: u32 = 1;
/// A friction row (bounded by normal rows).
const FRICTION: u32 = 1 << 1;
/// The row takes part in the split pass (it has a split target).
const SPLIT: u32 = 1 << 2;
/// Its split target is positive: the split pass has a penetration to correct.
const PUSHES: u32 = 1 << 3;
/// Su's energy clamp applies to it.
const CLAMPED: u32 = 1 << 4;
/// A bilateral row of the joints' block (joint_block.rs).
const BILATERAL: u32 = 1 << 5;

impl RowHead {
    /// The head of `row`.
    pub(crate) fn of(row: &Prepared) -> Self {
        let bit = |on: bool, bit: u32| if on { bit } else { 0 };
        let normals = row
            .friction()
            .map_or([0; 2], |(first, end, _)| [first as u32, end as u32]);
        Self {
            bodies: [row.a() as u32, row.b() as u32],
            normals,
            kind: bit(row.active, ACTIVE)
                | bit(row.friction().is_some(), FRICTION)
                | bit(row.split_target().is_some(), SPLIT)
                | bit(row.split_target().is_some_and(|target| target > 0.0), PUSHES)
                | bit(row.energy_clamp, CLAMPED)
                | bit(is_bilateral(row), BILATERAL),
        }
    }

    /// Body A's velocity slot.
    #[inline]
    pub(crate) fn a(&self) -> usize {
        self.bodies[0] as usize
    }

    /// Body B's velocity slot.
    #[inline]
    pub(crate) fn b(&self) -> usize {
        self.bodies[1] as usize
    }

    /// Whether the row can act at all.
    #[inline]
    pub(crate) fn active(&self) -> bool {
        self.kind & ACTIVE != 0
    }

    /// For a friction row, its normal rows `(first, end)`.
    #[inline]
    pub(crate) fn friction(&self) -> Option<(usize, usize)> {
        (self.kind & FRICTION != 0).then_some((self.normals[0] as usize, self.normals[1] as usize))
    }

    /// Whether the row is a contact's normal row: a split row that is not a friction row (the
    /// shock order freezes the lower body of these and of their friction rows).
    #[inline]
    pub(crate) fn is_contact(&self) -> bool {
        self.kind & (SPLIT | FRICTION) == SPLIT
    }

    /// Whether the split pass solves the row: an active contact normal row.
    #[inline]
    pub(crate) fn is_split(&self) -> bool {
        self.active() && self.is_contact()
    }

    /// Whether the row's split target is positive.
    #[inline]
    pub(crate) fn pushes(&self) -> bool {
        self.kind & PUSHES != 0
    }

    /// Whether Su's energy clamp applies to the row.
    #[inline]
    pub(crate) fn clamped(&self) -> bool {
        self.kind & CLAMPED != 0
    }

    /// Whether the row belongs to the joints' block ([`is_bilateral`]).
    #[inline]
    pub(crate) fn bilateral(&self) -> bool {
        self.kind & BILATERAL != 0
    }

    /// Whether `other` has this head's slots, normal rows and kind, whether or not either pushes
    /// (structure.rs: nothing worked out from the structure reads that bit).
    #[inline]
    pub(crate) fn same_structure(&self, other: &RowHead) -> bool {
        self.bodies == other.bodies && self.normals == other.normals && (self.kind ^ other.kind) & !PUSHES == 0
    }
}

/// The heads of `prepared`, in order.
#[cfg(test)]
pub(crate) fn heads_of(prepared: &[Prepared]) -> Vec<RowHead> {
    prepared.iter().map(RowHead::of).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{NO_BODY, SolverBody};
    use crate::row::Row;
    use crate::test_scenes::{FACE_CORNERS, prepare_rows, push_stacked_patch};
    use glam::{DMat3, DVec3};
    use shatter_integrators::SplitMix64;

    /// Every accessor says what the prepared row says, for contact, friction and joint rows.
    #[test]
    fn head_tells_what_the_prepared_row_tells() {
        let body = SolverBody {
            linear_velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            inverse_mass: 1.0,
            inverse_inertia: DMat3::IDENTITY,
        };
        let bodies = [body, body];
        let mut rows: Vec<Row> = Vec::new();
        let corners = FACE_CORNERS;
        let mut rng = SplitMix64::new(8);
        push_stacked_patch(
            &mut rows,
            &bodies,
            (1, 0),
            &corners,
            (&mut rng, (-0.01, 0.01)),
            (0.5, true),
        );
        push_stacked_patch(
            &mut rows,
            &bodies,
            (0, NO_BODY),
            &corners,
            (&mut rng, (-0.01, 0.01)),
            (0.5, false),
        );
        rows.push(Row::new(0, 1, rows[0].jacobian));
        let prepared = prepare_rows(&rows, &bodies, 1.0 / 30.0);
        let kinds = |f: fn(&RowHead) -> bool| heads_of(&prepared).iter().filter(|h| f(h)).count();
        assert!(kinds(RowHead::pushes) > 0 && kinds(RowHead::pushes) < kinds(RowHead::is_split));
        assert!(kinds(RowHead::clamped) > 0 && kinds(RowHead::clamped) < prepared.len());
        assert_eq!(kinds(RowHead::bilateral), 1);
        for (row, head) in prepared.iter().zip(heads_of(&prepared)) {
            assert_eq!((head.a(), head.b()), (row.a(), row.b()));
            assert_eq!(head.active(), row.active);
            assert_eq!(head.friction(), row.friction().map(|(first, end, _)| (first, end)));
            assert_eq!(
                head.is_contact(),
                row.split_target().is_some() && row.friction().is_none()
            );
            assert_eq!(
                head.is_split(),
                row.active && row.split_target().is_some() && row.friction().is_none()
            );
            assert_eq!(head.pushes(), row.split_target().is_some_and(|t| t > 0.0));
            assert_eq!(head.clamped(), row.energy_clamp);
            assert_eq!(head.bilateral(), is_bilateral(row));
        }
    }
}
