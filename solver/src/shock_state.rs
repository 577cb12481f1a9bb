//! What the shock pass's row updates read and write: the solve's own arrays, or one group's
//! private copy, so that the groups of one contact level can be solved side by side.
//!
//! Within a level, the shock pass (shock.rs) solves each moving body against supports of lower
//! levels, which are final by then. A group writes only its moving body's velocity, its own rows'
//! impulses and the energy budgets of its own body pairs (each pair holds its moving body), and
//! reads, besides those, only the velocities of lower levels. So the groups of a level do not see
//! each other: each can work on a [`Detached`] copy of what it touches, and the copies are
//! committed in group order afterwards. The arithmetic is the same in both states, so a level
//! solved side by side gives the same bits as one solved group after group, whatever the thread
//! count.

use core::cell::RefCell;

use smallvec::SmallVec;

use crate::body::SlotMass;
use crate::settings::SolveReport;
use crate::twist::Twist;
use shatter_integrators::ClampVerdict;

/// Access to the impulses (N s), velocities (m/s, rad/s) and per-pair energy budgets (J) of a
/// shock group's rows.
pub(crate) trait GroupState {
    /// Velocity of slot `slot`.
    fn velocity(&self, slot: usize) -> Twist;
    /// Sets the velocity of slot `slot`.
    fn set_velocity(&mut self, slot: usize, velocity: Twist);
    /// Inverse mass of slot `slot`, from which a row's response `M^-1 J^T` on it is formed.
    fn mass(&self, slot: usize) -> &SlotMass;
    /// Impulse of row `row`.
    fn lambda(&self, row: usize) -> f64;
    /// Sets the impulse of row `row`.
    fn set_lambda(&mut self, row: usize, lambda: f64);
    /// Energy budget of body pair `pair`.
    fn budget(&self, pair: usize) -> f64;
    /// Sets the energy budget of body pair `pair`.
    fn set_budget(&mut self, pair: usize, budget: f64);
    /// Counts an energy clamp's verdict.
    fn count(&mut self, verdict: ClampVerdict);
}

/// The solve's own arrays.
pub(crate) struct Shared<'a> {
    pub(crate) lambdas: &'a mut [f64],
    pub(crate) velocities: &'a mut [Twist],
    pub(crate) masses: &'a [SlotMass],
    pub(crate) budgets: &'a mut [f64],
    pub(crate) report: &'a mut SolveReport,
}

impl GroupState for Shared<'_> {
    #[inline]
    fn velocity(&self, slot: usize) -> Twist {
        self.velocities[slot]
    }
    #[inline]
    fn set_velocity(&mut self, slot: usize, velocity: Twist) {
        self.velocities[slot] = velocity;
    }
    #[inline]
    fn mass(&self, slot: usize) -> &SlotMass {
        &self.masses[slot]
    }
    #[inline]
    fn lambda(&self, row: usize) -> f64 {
        self.lambdas[row]
    }
    #[inline]
    fn set_lambda(&mut self, row: usize, lambda: f64) {
        self.lambdas[row] = lambda;
    }
    #[inline]
    fn budget(&self, pair: usize) -> f64 {
        self.budgets[pair]
    }
    #[inline]
    fn set_budget(&mut self, pair: usize, budget: f64) {
        self.budgets[pair] = budget;
    }
    #[inline]
    fn count(&mut self, verdict: ClampVerdict) {
        count_into(self.report, verdict);
    }
}

/// Adds an energy clamp's verdict to the report's counts.
#[inline]
fn count_into(report: &mut SolveReport, verdict: ClampVerdict) {
    match verdict {
        ClampVerdict::Scaled => report.scaled_increments += 1,
        ClampVerdict::Dropped => report.dropped_increments += 1,
        ClampVerdict::Kept | ClampVerdict::NoEffect => {}
    }
}

thread_local! {
    /// Place of each row in the group this thread is solving, `u32::MAX` for every other row, so
    /// that a detached group finds its own impulses in constant time.
    static PLACES: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Runs `work` on a [`Detached`] copy for the group `rows` (ascending by row) moving slot
/// `moving`, over the solve's arrays (the slots' velocities and inverse masses), and returns what
/// it changed.
pub(crate) fn detached(
    rows: &[(usize, crate::shock::Frozen)],
    moving: usize,
    lambdas: &[f64],
    (velocities, masses): (&[Twist], &[SlotMass]),
    budgets: &[f64],
    work: impl FnOnce(&mut Detached<'_>),
) -> GroupChange {
    PLACES.with(|cell| {
        let mut places = cell.borrow_mut();
        if places.len() < lambdas.len() {
            places.resize(lambdas.len(), u32::MAX);
        }
        for (k, &(row, _)) in rows.iter().enumerate() {
            places[row] = k as u32;
        }
        let mut own = Detached {
            lambdas,
            velocities,
            masses,
            budgets,
            places: &places,
            rows,
            moving,
            velocity: velocities[moving],
            own: rows.iter().map(|&(row, _)| lambdas[row]).collect(),
            pairs: SmallVec::new(),
            report: SolveReport::default(),
        };
        work(&mut own);
        let change = own.into_change();
        for &(row, _) in rows {
            places[row] = u32::MAX;
        }
        change
    })
}

/// One group's private copy of what it writes, over read-only views of the solve's arrays.
pub(crate) struct Detached<'a> {
    /// Place of each row in `rows`, `u32::MAX` for others.
    places: &'a [u32],
    lambdas: &'a [f64],
    velocities: &'a [Twist],
    masses: &'a [SlotMass],
    budgets: &'a [f64],
    /// The group's `(row, frozen side)` entries, ascending by row.
    rows: &'a [(usize, crate::shock::Frozen)],
    /// The group's moving body and its velocity so far.
    moving: usize,
    velocity: Twist,
    /// The group's rows' impulses so far, by place in `rows`.
    own: SmallVec<[f64; 16]>,
    /// `(pair, budget)` of the pairs written so far.
    pairs: SmallVec<[(usize, f64); 4]>,
    report: SolveReport,
}

impl Detached<'_> {
    /// What the group changed, detached from the arrays it read.
    fn into_change(self) -> GroupChange {
        GroupChange {
            rows: self.rows.iter().map(|&(row, _)| row).zip(self.own).collect(),
            moving: self.moving,
            velocity: self.velocity,
            pairs: self.pairs,
            scaled: self.report.scaled_increments,
            dropped: self.report.dropped_increments,
        }
    }

    /// Place of row `row` in the group, if it is one of the group's rows.
    #[inline]
    fn place(&self, row: usize) -> Option<usize> {
        let place = self.places[row];
        (place != u32::MAX).then_some(place as usize)
    }
}

impl GroupState for Detached<'_> {
    #[inline]
    fn velocity(&self, slot: usize) -> Twist {
        if slot == self.moving {
            self.velocity
        } else {
            self.velocities[slot]
        }
    }
    #[inline]
    fn set_velocity(&mut self, slot: usize, velocity: Twist) {
        debug_assert_eq!(slot, self.moving, "a shock group moves only its own body");
        self.velocity = velocity;
    }
    #[inline]
    fn mass(&self, slot: usize) -> &SlotMass {
        &self.masses[slot]
    }
    #[inline]
    fn lambda(&self, row: usize) -> f64 {
        self.place(row).map_or(self.lambdas[row], |k| self.own[k])
    }
    #[inline]
    fn set_lambda(&mut self, row: usize, lambda: f64) {
        let place = self.place(row);
        debug_assert!(place.is_some(), "a shock group writes only its own rows");
        if let Some(k) = place {
            self.own[k] = lambda;
        }
    }
    #[inline]
    fn budget(&self, pair: usize) -> f64 {
        self.pairs
            .iter()
            .find(|(p, _)| *p == pair)
            .map_or(self.budgets[pair], |&(_, budget)| budget)
    }
    #[inline]
    fn set_budget(&mut self, pair: usize, budget: f64) {
        match self.pairs.iter_mut().find(|(p, _)| *p == pair) {
            Some(entry) => entry.1 = budget,
            None => self.pairs.push((pair, budget)),
        }
    }
    #[inline]
    fn count(&mut self, verdict: ClampVerdict) {
        count_into(&mut self.report, verdict);
    }
}

/// The writes of one detached group, to be committed to the solve's arrays.
pub(crate) struct GroupChange {
    rows: SmallVec<[(usize, f64); 16]>,
    moving: usize,
    velocity: Twist,
    pairs: SmallVec<[(usize, f64); 4]>,
    scaled: usize,
    dropped: usize,
}

impl GroupChange {
    /// Writes the change into the solve's arrays and counts.
    pub(crate) fn commit(&self, state: &mut Shared<'_>) {
        for &(row, lambda) in &self.rows {
            state.lambdas[row] = lambda;
        }
        state.velocities[self.moving] = self.velocity;
        for &(pair, budget) in &self.pairs {
            state.budgets[pair] = budget;
        }
        state.report.scaled_increments += self.scaled;
        state.report.dropped_increments += self.dropped;
    }
}
