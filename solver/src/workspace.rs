//! The buffers one solve works in, kept by the caller between solves.
//!
//! A solve needs a dozen arrays the size of its rows and bodies (prepared rows, velocities,
//! impulses, the shock order, the split pass's pseudo velocities). Allocated afresh every step, a
//! large island's arrays come from the operating system as zeroed pages and go back when freed:
//! measured on a 210-box pyramid, page faults and copies were a quarter of the step. A caller that
//! solves every step keeps one [`SolverWorkspace`] per island slot and passes it to
//! [`solve_with`](crate::pgs::solve_with); once the arrays have grown to the largest island, a
//! step allocates nothing. What it keeps from one call to the next besides capacity (the shock
//! order, and the pair numbers, runs and batch plans of structure.rs) is only ever used by a call
//! whose rows have the structure it was worked out for, where working it out again gives the
//! same: the results are the same bits whichever workspace a solve is given.

use crate::body::SlotMass;
use crate::head::RowHead;
use crate::lanes::LaneBatches;
use crate::loads::LoadScratch;
use crate::pgs::{PairKeys, Prepared};
use crate::shock::{ShockOrder, ShockScratch};
use crate::split::SplitBuffers;
use crate::structure::StructureMemo;
use crate::together::TogetherScratch;
use crate::twist::Twist;
use crate::warm_choice::WarmChoice;
use crate::warm_start::WarmScratch;

/// Reusable scratch memory for [`solve_with`](crate::pgs::solve_with): capacity, and what was
/// worked out from the last solve's row structure (the module docs); no state the results depend
/// on.
#[derive(Default)]
pub struct SolverWorkspace {
    /// The rows with everything fixed during the sweeps precomputed.
    pub(crate) prepared: Vec<Prepared>,
    /// Their bodies and kinds, packed (head.rs).
    pub(crate) heads: Vec<RowHead>,
    /// Energy removed so far by each body pair's clamped rows, J.
    pub(crate) budgets: Vec<f64>,
    /// The numbering of the energy-clamped rows' body pairs.
    pub(crate) pairs: PairKeys,
    /// Velocities per slot (the last slot is the world).
    pub(crate) velocities: Vec<Twist>,
    /// `M^-1` per slot, as the sweeps in lanes read it (the last slot is the world).
    pub(crate) masses: Vec<SlotMass>,
    /// Accumulated impulse per row, N s.
    pub(crate) lambdas: Vec<f64>,
    /// Warm-start impulses clamped to the rows' bounds, N s; after the sweeps, the sweeps' impulses
    /// (the next step's warm start).
    pub(crate) warm: Vec<f64>,
    /// The rows the shock pass settled with one body held still, each with the impulse both its
    /// bodies felt (`Row::exchanged`, the sweeps' impulse), N s; every other row's is its final
    /// impulse. Kept as a list of those rows, so that a solve without the pass (a converged one)
    /// streams no array more.
    pub(crate) held_rows: Vec<(u32, f64)>,
    /// The warm start's memory.
    pub(crate) warm_scratch: WarmScratch,
    /// `(first, end)` of each run of swept rows between one pair of bodies.
    pub(crate) runs: Vec<(usize, usize)>,
    /// The runs dealt into batches swept four at a time.
    pub(crate) lanes: LaneBatches,
    /// Whether the solve's own velocity sweeps run in `lanes` (set as the solve starts).
    pub(crate) batched: bool,
    /// Which slots the solve cannot move.
    pub(crate) immovable: Vec<bool>,
    /// The shock pass's row order.
    pub(crate) shock: ShockOrder,
    /// The velocity shock pass's memory.
    pub(crate) shock_scratch: ShockScratch,
    /// The load pass's memory (loads.rs).
    pub(crate) loads: LoadScratch,
    /// Which warm start an island at rest keeps (warm_choice.rs).
    pub(crate) warm_choice: WarmChoice,
    /// The split pass's arrays.
    pub(crate) split: SplitBuffers,
    /// The memory of sweeps shared with other islands (together.rs).
    pub(crate) together: TogetherScratch,
    /// The structure the pair numbers, `runs`, `batched`, the split pass's runs and both passes'
    /// batch plans were last worked out for (structure.rs).
    pub(crate) structure: StructureMemo,
}

impl core::fmt::Debug for SolverWorkspace {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SolverWorkspace")
            .field("row_capacity", &self.prepared.capacity())
            .field("slot_capacity", &self.velocities.capacity())
            .finish()
    }
}
