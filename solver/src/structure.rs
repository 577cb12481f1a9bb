//! What the last solve in a workspace worked out from its rows' structure alone, kept for the
//! next solve whose rows have the same structure.
//!
//! A solve numbers the body pairs of its energy-clamped rows (`assign_pairs`), lists the runs of
//! rows between one body pair and deals the runs into the batches of both passes' sweeps
//! (lanes.rs): all of it from the rows' heads (head.rs), which slots are immovable, the body count
//! and the settings, never from a row's numbers. A resting stack keeps its rows from step to step,
//! so each step worked all of it out again, to the same result. When a solve's structure equals
//! the last one's in its workspace (the heads compared without the bit that says whether a split
//! row pushes, which nothing here reads), it keeps the pair numbers, both passes' runs, the shock
//! order (shock.rs) and both plans, and writes only the batches' rows (the
//! plan's places, from this step's prepared rows). The kept results are what working them out
//! again gives, so the solve's results are the same bits either way, in whatever workspace it
//! runs; a different structure works everything out again and remembers it.
//!
//! Measured with `tools/instructions.sh` (one thread, instructions per step): the 210-box pyramid
//! at 30 Hz 8.05 -> 7.34 million, the aligned 1000-box pile at 60 Hz 22.18 -> 21.33 million, the
//! sphere columns 15.23 -> 14.87 million; the random 1000-cube pile, whose large island changes
//! its rows every step, 99.91 -> 100.21 million (comparing and remembering the heads).

use crate::head::RowHead;
use crate::pgs::Prepared;
use crate::settings::SolverSettings;

/// The structure a workspace's derived arrays were last worked out for, and which of them are.
#[derive(Default)]
pub(crate) struct StructureMemo {
    /// The rows' heads (the pushing bit is ignored), the immovable slots (the world's last) and
    /// the settings of that solve; `None` before the first.
    heads: Vec<RowHead>,
    immovable: Vec<bool>,
    settings: Option<SolverSettings>,
    /// Each row's pair number (`Prepared::pair`) and the number of pairs.
    pairs: Vec<u32>,
    pair_count: usize,
    /// Whether the workspace's velocity batches and split batches were dealt for this structure
    /// (each is dealt only by a solve that sweeps in them).
    pub(crate) velocity_plan: bool,
    pub(crate) split_plan: bool,
    /// Whether the last solve found the structure it remembered (read by the tests).
    #[cfg(test)]
    kept: bool,
}

impl StructureMemo {
    /// Whether `heads`, `immovable` and `settings` are the structure remembered; if not, remembers
    /// them instead and forgets every result worked out for the old one.
    pub(crate) fn same(&mut self, heads: &[RowHead], immovable: &[bool], settings: &SolverSettings) -> bool {
        let same = self.settings.as_ref() == Some(settings)
            && self.immovable == immovable
            && self.heads.len() == heads.len()
            && self.heads.iter().zip(heads).all(|(was, now)| was.same_structure(now));
        if !same {
            self.heads.clear();
            self.heads.extend_from_slice(heads);
            self.immovable.clear();
            self.immovable.extend_from_slice(immovable);
            self.settings = Some(*settings);
            self.pairs.clear();
            self.pair_count = 0;
            self.velocity_plan = false;
            self.split_plan = false;
        }
        #[cfg(test)]
        {
            self.kept = same;
        }
        same
    }

    /// Whether the last solve in the workspace kept what was worked out before (its rows had the
    /// remembered structure).
    #[cfg(test)]
    pub(crate) fn kept(&self) -> bool {
        self.kept
    }

    /// Remembers the pair numbers `assign_pairs` gave `prepared` and their count.
    pub(crate) fn keep_pairs(&mut self, prepared: &[Prepared], count: usize) {
        self.pairs.clear();
        self.pairs.extend(prepared.iter().map(|row| row.pair() as u32));
        self.pair_count = count;
    }

    /// The pair number remembered for row `index` (0 past the remembered rows). The rows are
    /// given it as they are prepared, before anyone knows whether their structure is the one
    /// remembered: if it is, they have their numbers without another pass over them (which on two
    /// threads wrote to rows the other core had just prepared); if not, `assign_pairs` numbers
    /// them anew.
    pub(crate) fn remembered_pair(&self, index: usize) -> u32 {
        self.pairs.get(index).copied().unwrap_or(0)
    }

    /// The number of pairs remembered for the structure.
    pub(crate) fn pair_count(&self) -> usize {
        self.pair_count
    }
}

#[cfg(test)]
mod tests {
    use crate::body::{NO_BODY, SolverBody};
    use crate::pgs::{PairKeys, Prepared, assign_pairs, solve_with};
    use crate::row::Row;
    use crate::settings::SolverSettings;
    use crate::test_scenes::push_stacked_patch;
    use crate::workspace::SolverWorkspace;
    use glam::{DMat3, DVec3};
    use shatter_integrators::SplitMix64;

    const DT: f64 = 1.0 / 30.0;

    /// A wall of boxes two high on the ground (`bottom` boxes, one fewer on top, each on two
    /// below): more runs than an island needs to sweep in batches. The boxes move and spin at
    /// random and the patches' depths are drawn from -1 to 2 cm, so that the sweeps, the shock
    /// pass and the split pass all have work; `seed` draws the numbers, `rest_on` says which
    /// lower box (`0` left, `1` right) each top box's first patch is on (the structure).
    fn wall(seed: u64, bottom: usize, rest_on: impl Fn(usize) -> u32) -> (Vec<SolverBody>, Vec<Row>) {
        let mut rng = SplitMix64::new(seed);
        let count = 2 * bottom - 1;
        let bodies: Vec<SolverBody> = (0..count)
            .map(|_| SolverBody {
                linear_velocity: rng.unit_vector() * rng.range(0.0, 0.5) + DVec3::new(0.0, -0.3, 0.0),
                angular_velocity: rng.unit_vector() * rng.range(0.0, 0.5),
                inverse_mass: 1.0 / rng.range(0.5, 3.0),
                inverse_inertia: DMat3::from_diagonal(DVec3::new(6.0, 4.0, 9.0) / rng.range(0.5, 3.0)),
            })
            .collect();
        let mut rows = Vec::new();
        let mut patch = |rows: &mut Vec<Row>, pair: (u32, u32)| {
            push_stacked_patch(rows, &bodies, pair, &FACE, (&mut rng, DEPTHS), (0.6, true));
        };
        for i in 0..bottom {
            patch(&mut rows, (i as u32, NO_BODY));
        }
        for top in bottom..count {
            let left = (top - bottom) as u32;
            let first = left + rest_on(top);
            let second = 2 * left + 1 - first;
            for below in [first, second] {
                patch(&mut rows, (top as u32, below));
            }
        }
        // Warm impulses drawn at random, so that Su's clamp scales increments by the pairs'
        // budgets (clamp.rs): those are numbered by body pair, which a kept structure keeps.
        for row in &mut rows {
            row.warm = rng.range(-0.5, 1.5);
        }
        (bodies, rows)
    }

    const FACE: [(f64, f64); 4] = [(-0.4, -0.4), (0.4, -0.4), (0.4, 0.4), (-0.4, 0.4)];
    const DEPTHS: (f64, f64) = (-0.01, 0.02);

    /// Every bit a solve leaves: the rows' impulses, the bodies' velocities, the split
    /// velocities and the sweep counts.
    fn solve_bits(
        workspace: &mut SolverWorkspace,
        (mut bodies, mut rows): (Vec<SolverBody>, Vec<Row>),
        settings: &SolverSettings,
    ) -> Vec<u64> {
        let report = solve_with(workspace, &mut bodies, &mut rows, DT, settings).unwrap();
        let mut bits: Vec<u64> = rows
            .iter()
            .flat_map(|row| [row.lambda, row.warm, row.exchanged])
            .map(f64::to_bits)
            .collect();
        for body in &bodies {
            bits.extend(body.linear_velocity.to_array().map(f64::to_bits));
            bits.extend(body.angular_velocity.to_array().map(f64::to_bits));
        }
        for split in &report.split_velocities {
            bits.extend(split.linear.to_array().map(f64::to_bits));
            bits.extend(split.angular.to_array().map(f64::to_bits));
        }
        bits.extend([report.iterations, report.split_iterations, report.scaled_increments].map(|n| n as u64));
        bits
    }

    /// A solve whose rows have the structure of the last solve in its workspace (other
    /// velocities, masses and depths: some rows push where they did not) keeps the pair numbers,
    /// runs and both batch plans, and gives the bits of a solve in a fresh workspace.
    #[test]
    fn structure_kept_gives_the_bits_of_a_fresh_workspace() {
        let settings = SolverSettings::default();
        let left = |_| 0;
        let mut workspace = SolverWorkspace::default();
        solve_bits(&mut workspace, wall(1, 20, left), &settings);
        assert!(!workspace.structure.kept());
        assert!(
            workspace.structure.velocity_plan && workspace.structure.split_plan,
            "both passes in batches"
        );
        let (bodies, rows) = wall(2, 20, left);
        let pushes = |rows: &[Row]| rows.iter().map(|row| row.position_error < 0.0).collect::<Vec<_>>();
        assert_ne!(
            pushes(&rows),
            pushes(&wall(1, 20, left).1),
            "some rows push only in one"
        );
        let kept = solve_bits(&mut workspace, (bodies.clone(), rows.clone()), &settings);
        assert!(workspace.structure.kept());
        // The rows' pair numbers are the ones numbering them again gives.
        let mut numbered = workspace.prepared.clone();
        assign_pairs(&mut numbered, &workspace.heads, &mut PairKeys::default());
        let pairs = |rows: &[Prepared]| rows.iter().map(Prepared::pair).collect::<Vec<_>>();
        assert_eq!(pairs(&workspace.prepared), pairs(&numbered));
        assert!(pairs(&numbered).iter().any(|&pair| pair > 0));
        let fresh = solve_bits(&mut SolverWorkspace::default(), (bodies, rows), &settings);
        assert!(kept == fresh, "the kept structure changed the solve's bits");
        assert!(fresh[fresh.len() - 1] > 0, "Su's clamp scaled increments");
    }

    /// A solve whose structure differs from the last one's in the same workspace (with as many
    /// rows: a top box on its other support first, a body made immovable, other settings) works
    /// it out again and gives the bits of a fresh workspace.
    #[test]
    fn structure_changed_is_worked_out_again() {
        let settings = SolverSettings::default();
        let left = |_| 0;
        let other_support = wall(2, 20, |top| u32::from(top == 27));
        let mut immovable = wall(2, 20, left);
        immovable.0[5].inverse_mass = 0.0;
        immovable.0[5].inverse_inertia = DMat3::ZERO;
        let fewer_sweeps = SolverSettings {
            iterations: 3,
            ..settings
        };
        for (name, scene, settings) in [
            ("other support", other_support.clone(), settings),
            ("immovable body", immovable.clone(), settings),
            ("other settings", wall(2, 20, left), fewer_sweeps),
        ] {
            let mut workspace = SolverWorkspace::default();
            solve_bits(&mut workspace, wall(1, 20, left), &SolverSettings::default());
            let again = solve_bits(&mut workspace, scene.clone(), &settings);
            assert!(!workspace.structure.kept(), "{name}");
            let fresh = solve_bits(&mut SolverWorkspace::default(), scene, &settings);
            assert!(
                again == fresh,
                "{name}: the solve's bits differ from a fresh workspace's"
            );
        }
    }
}
