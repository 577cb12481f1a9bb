//! Which overloaded joints break this step: all of them, except that a joint group breaks at most
//! once per interval (Li 2018 section 4: the chain breaks at most one link per ~0.3 s, which also
//! stops a uniformly loaded chain from losing every link in one step).

use hashbrown::HashMap;

/// A joint whose row impulse exceeded its threshold this step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Candidate {
    /// Position in the step's joint list.
    pub index: usize,
    /// Largest row impulse over the threshold (> 1).
    pub overload: f64,
    /// Rate-limit group.
    pub group: Option<u32>,
}

/// The candidates that break at step start `time` (s), in joint order: every ungrouped one, and
/// per group the most overloaded (the first of equals) if the group's last break, in `last_break`,
/// is at least `interval` (s) ago; `last_break` is updated. With `interval` 0 every candidate
/// breaks.
pub(crate) fn choose(
    candidates: &[Candidate],
    last_break: &mut HashMap<u32, f64>,
    time: f64,
    interval: f64,
) -> Vec<Candidate> {
    if interval == 0.0 {
        return candidates.to_vec();
    }
    let mut best: HashMap<u32, Candidate> = HashMap::new();
    for candidate in candidates {
        if let Some(group) = candidate.group {
            let slot = best.entry(group).or_insert(*candidate);
            if candidate.overload > slot.overload {
                *slot = *candidate;
            }
        }
    }
    best.retain(|group, _| last_break.get(group).is_none_or(|&last| time - last >= interval));
    for group in best.keys() {
        last_break.insert(*group, time);
    }
    candidates
        .iter()
        .filter(|c| {
            c.group
                .is_none_or(|group| best.get(&group).is_some_and(|b| b.index == c.index))
        })
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(index: usize, overload: f64, group: Option<u32>) -> Candidate {
        Candidate { index, overload, group }
    }

    #[test]
    fn energized_rate_limit_breaks_one_joint_per_group_per_interval() {
        let mut last = HashMap::new();
        let all = [
            candidate(0, 1.5, Some(1)),
            candidate(1, 2.0, Some(1)),
            candidate(2, 2.0, Some(1)),
            candidate(3, 1.1, None),
            candidate(4, 1.2, Some(2)),
        ];
        let indices = |chosen: Vec<Candidate>| chosen.iter().map(|c| c.index).collect::<Vec<_>>();
        // The most overloaded of group 1 (the first of the two equal ones), the ungrouped one, and
        // group 2's only one.
        assert_eq!(indices(choose(&all, &mut last, 1.0, 0.3)), vec![1, 3, 4]);
        // 0.2 s later both groups wait; the ungrouped joint does not.
        assert_eq!(indices(choose(&all, &mut last, 1.2, 0.3)), vec![3]);
        assert_eq!(indices(choose(&all, &mut last, 1.3, 0.3)), vec![1, 3, 4]);
        // No limit: everything breaks and nothing is remembered.
        let mut fresh = HashMap::new();
        assert_eq!(indices(choose(&all, &mut fresh, 1.0, 0.0)), vec![0, 1, 2, 3, 4]);
        assert!(fresh.is_empty());
    }
}
