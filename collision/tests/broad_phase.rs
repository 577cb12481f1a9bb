//! The broad phase's contract: the pairs are exactly the overlapping fat boxes (brute force), no
//! overlapping tight boxes are missed, touching counts, errors change nothing, and results do not
//! depend on the thread count.

use glam::DVec3;
use proptest::prelude::*;
use shatter_collision::{Aabb, BroadPhase, BroadPhaseSettings, GeometryError, ProxyId, ProxyKind};
use shatter_integrators::SplitMix64;

/// Every live proxy: (id, tight box, fat box, key, kind).
type Snapshot = Vec<(ProxyId, Aabb, Aabb, u64, ProxyKind)>;

fn snapshot(bp: &BroadPhase) -> Snapshot {
    bp.proxies()
        .map(|id| {
            (
                id,
                bp.aabb(id).unwrap(),
                bp.fat_aabb(id).unwrap(),
                bp.user_key(id).unwrap(),
                bp.kind(id).unwrap(),
            )
        })
        .collect()
}

/// The keys of every two proxies whose boxes (fat with `fat`, tight otherwise) overlap, neither
/// both static nor sharing a key, by brute force over all pairs of proxies; sorted, with
/// repeats (proxies sharing keys).
fn brute_force_proxy_pairs(bp: &BroadPhase, fat: bool) -> Vec<(u64, u64)> {
    let proxies = snapshot(bp);
    let mut pairs = Vec::new();
    for (i, a) in proxies.iter().enumerate() {
        for b in &proxies[i + 1..] {
            let (box_a, box_b) = if fat { (a.2, b.2) } else { (a.1, b.1) };
            let both_static = a.4 == ProxyKind::Static && b.4 == ProxyKind::Static;
            if a.3 != b.3 && !both_static && box_a.overlaps(&box_b) {
                pairs.push((a.3.min(b.3), a.3.max(b.3)));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

/// The contract: [`brute_force_proxy_pairs`], each pair of keys once.
fn brute_force(bp: &BroadPhase, fat: bool) -> Vec<(u64, u64)> {
    let mut pairs = brute_force_proxy_pairs(bp, fat);
    pairs.dedup();
    pairs
}

/// Whether sorted `small` is a subset of sorted `large`.
fn is_subset(small: &[(u64, u64)], large: &[(u64, u64)]) -> bool {
    small.iter().all(|p| large.binary_search(p).is_ok())
}

/// Checks the reported pairs against both oracles.
fn check_pairs(bp: &mut BroadPhase) -> Vec<(u64, u64)> {
    let pairs = bp.pairs();
    assert!(pairs.windows(2).all(|w| w[0] < w[1]), "pairs not sorted and unique");
    assert!(pairs.iter().all(|(a, b)| a < b), "pair not ordered or a self-pair");
    let proxy_pairs = brute_force_proxy_pairs(bp, true);
    assert_eq!(
        bp.proxy_pair_count(),
        proxy_pairs.len(),
        "proxy pairs held twice or lost"
    );
    let mut expected = proxy_pairs;
    expected.dedup();
    assert_eq!(pairs, expected, "pairs differ from brute force over fat boxes");
    assert!(
        is_subset(&brute_force(bp, false), &pairs),
        "an overlapping pair of tight boxes was missed"
    );
    pairs
}

// ---------------------------------------------------------------------------------------------
// Random edit sequences against brute force.

/// Coordinates on a 1/8 m lattice (exact in binary), so faces of boxes and of fat boxes (margins
/// are lattice multiples too) often touch exactly.
fn lattice(steps: i32) -> impl Strategy<Value = f64> {
    (-steps..=steps).prop_map(|i| i as f64 / 8.0)
}

fn lattice_box() -> impl Strategy<Value = Aabb> {
    (prop::array::uniform3(lattice(24)), prop::array::uniform3(0..=6i32)).prop_map(|(min, size)| {
        let min = DVec3::from(min);
        Aabb::new(min, min + DVec3::from(size.map(|s| s as f64 / 8.0)))
    })
}

#[derive(Clone, Debug)]
enum Op {
    Insert(Aabb, u64, bool),
    Remove(usize),
    RemoveStale(usize),
    /// A small move: up to a quarter metre, on a 1/32 m lattice.
    Nudge(usize, [i32; 3]),
    /// A far move to a new box.
    Jump(usize, Aabb),
    /// A move with a predicted displacement (1/32 m lattice).
    Predicted(usize, [i32; 3], [i32; 3]),
    /// An update with a bad box: 0 NaN, 1 infinite, 2 inverted.
    Bad(usize, u8),
    Pairs,
}

fn op() -> impl Strategy<Value = Op> {
    let offset = || prop::array::uniform3(-8..=8i32);
    prop_oneof![
        6 => (lattice_box(), 0..40u64, prop::bool::weighted(0.15)).prop_map(|(b, k, s)| Op::Insert(b, k, s)),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::RemoveStale),
        6 => (any::<usize>(), offset()).prop_map(|(i, d)| Op::Nudge(i, d)),
        2 => (any::<usize>(), lattice_box()).prop_map(|(i, b)| Op::Jump(i, b)),
        2 => (any::<usize>(), offset(), offset()).prop_map(|(i, d, v)| Op::Predicted(i, d, v)),
        1 => (any::<usize>(), 0..3u8).prop_map(|(i, w)| Op::Bad(i, w)),
        3 => Just(Op::Pairs),
    ]
}

fn shifted(b: Aabb, d: [i32; 3]) -> Aabb {
    let d = DVec3::from(d.map(|x| x as f64 / 32.0));
    Aabb::new(b.min + d, b.max + d)
}

/// Asserts that `result` failed and that `bp` is as `before`.
fn assert_refused<T: core::fmt::Debug>(result: Result<T, GeometryError>, bp: &BroadPhase, before: &BroadPhase) {
    assert!(result.is_err(), "accepted: {result:?}");
    assert_eq!(snapshot(bp), snapshot(before));
    assert_eq!(bp.clone().pairs(), before.clone().pairs());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn broad_phase_pairs_match_brute_force_through_random_edits(
        margin in prop::sample::select(vec![0.0, 0.125, 0.25]),
        prediction in prop::sample::select(vec![0.0, 1.0, 2.0]),
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut bp = BroadPhase::try_with_settings(BroadPhaseSettings { margin, prediction }).unwrap();
        let mut live: Vec<ProxyId> = Vec::new();
        let mut dead: Vec<ProxyId> = Vec::new();
        for op in ops {
            let pick = |i: usize| live[i % live.len()];
            match op {
                Op::Insert(b, key, is_static) => {
                    let id = if is_static { bp.insert_static(b, key) } else { bp.insert(b, key) };
                    live.push(id.unwrap());
                }
                Op::Remove(i) if !live.is_empty() => {
                    let id = live.swap_remove(i % live.len());
                    let key = bp.user_key(id).unwrap();
                    prop_assert_eq!(bp.remove(id).unwrap(), key);
                    dead.push(id);
                }
                Op::RemoveStale(i) if !dead.is_empty() => {
                    let before = bp.clone();
                    let id = dead[i % dead.len()];
                    let result = bp.remove(id);
                    assert_refused(result, &bp, &before);
                    assert_refused(bp.update(id, Aabb::new(DVec3::ZERO, DVec3::ONE)), &bp, &before);
                    assert_refused(bp.fat_aabb(id), &bp, &before);
                }
                Op::Nudge(i, d) if !live.is_empty() => {
                    let id = pick(i);
                    bp.update(id, shifted(bp.aabb(id).unwrap(), d)).unwrap();
                }
                Op::Jump(i, b) if !live.is_empty() => {
                    bp.update(pick(i), b).unwrap();
                }
                Op::Predicted(i, d, v) if !live.is_empty() => {
                    let id = pick(i);
                    let displacement = DVec3::from(v.map(|x| x as f64 / 32.0));
                    bp.update_with_displacement(id, shifted(bp.aabb(id).unwrap(), d), displacement).unwrap();
                }
                Op::Bad(i, which) if !live.is_empty() => {
                    let before = bp.clone();
                    let mut b = bp.aabb(pick(i)).unwrap();
                    match which {
                        0 => b.max.y = f64::NAN,
                        1 => b.min.z = f64::NEG_INFINITY,
                        _ => b.min.x = b.max.x + 1.0,
                    }
                    assert_refused(bp.update(pick(i), b), &bp, &before);
                    assert_refused(bp.insert(b, 7), &bp, &before);
                }
                Op::Pairs => {
                    check_pairs(&mut bp);
                }
                _ => {}
            }
            for (_, tight, fat, _, _) in snapshot(&bp) {
                prop_assert!(fat.contains(&tight), "fat box {fat:?} does not hold {tight:?}");
            }
        }
        check_pairs(&mut bp);
    }
}

// ---------------------------------------------------------------------------------------------
// A pile of thousands of boxes, stepped, on one and two threads.

/// `count` boxes of 0.2 to 1 m heaped in a cone on static ground, dense enough that each touches
/// a few others.
/// A uniform random offset in the cube of half side `half`, m.
fn cube_offset(rng: &mut SplitMix64, half: f64) -> DVec3 {
    DVec3::new(rng.range(-half, half), rng.range(-half, half), rng.range(-half, half))
}

fn pile(rng: &mut SplitMix64, count: usize) -> Vec<Aabb> {
    let radius = 0.7 * (count as f64).cbrt();
    (0..count)
        .map(|_| {
            // Uniform in a cone: height by inverse transform of (1 - h)^2, then a disc.
            let h = 1.0 - (1.0 - rng.next_f64()).cbrt();
            let r = radius * (1.0 - h) * rng.next_f64().sqrt();
            let angle = rng.range(0.0, std::f64::consts::TAU);
            let center = DVec3::new(r * angle.cos(), 0.5 + h * radius, r * angle.sin());
            let half = DVec3::new(rng.range(0.1, 0.5), rng.range(0.1, 0.5), rng.range(0.1, 0.5));
            Aabb::from_center(center, half)
        })
        .collect()
}

/// Runs a pile for a few steps in a pool of `threads` threads and returns the pairs of each step,
/// checking every step against brute force.
fn run_pile(threads: usize) -> Vec<Vec<(u64, u64)>> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut rng = SplitMix64::new(17);
        let count = 2500;
        let mut boxes = pile(&mut rng, count);
        let mut bp = BroadPhase::new();
        let ground = Aabb::new(DVec3::new(-30.0, -1.0, -30.0), DVec3::new(30.0, 0.0, 30.0));
        bp.insert_static(ground, u64::MAX).unwrap();
        let mut ids: Vec<ProxyId> = boxes
            .iter()
            .enumerate()
            .map(|(k, b)| bp.insert(*b, k as u64).unwrap())
            .collect();
        let mut steps = vec![check_pairs(&mut bp)];
        let tight_pairs = brute_force(&bp, false).len();
        assert!(
            tight_pairs > 2 * count,
            "not a pile: {tight_pairs} touching pairs for {count} boxes"
        );
        for step in 0..4 {
            for (k, b) in boxes.iter_mut().enumerate() {
                let d = if rng.next_f64() < 0.02 {
                    cube_offset(&mut rng, 4.0)
                } else {
                    cube_offset(&mut rng, 0.05)
                };
                *b = Aabb::new(b.min + d, b.max + d);
                bp.update(ids[k], *b).unwrap();
            }
            // Fracture-like churn: a few bodies replaced by new ones with new keys.
            for k in (step..count).step_by(97) {
                bp.remove(ids[k]).unwrap();
                ids[k] = bp.insert(boxes[k], (count * (step + 1) + k) as u64).unwrap();
            }
            steps.push(check_pairs(&mut bp));
        }
        steps
    })
}

#[test]
fn broad_phase_pile_matches_brute_force_on_one_and_two_threads() {
    let one = run_pile(1);
    let two = run_pile(2);
    assert_eq!(one, two, "pairs depend on the thread count");
}

// ---------------------------------------------------------------------------------------------
// Degenerate boxes, touching, statics, shared keys.

fn tight() -> BroadPhase {
    BroadPhase::try_with_settings(BroadPhaseSettings {
        margin: 0.0,
        prediction: 0.0,
    })
    .unwrap()
}

#[test]
fn broad_phase_touching_and_degenerate_boxes_pair_as_aabb_overlaps_says() {
    let unit = Aabb::new(DVec3::ZERO, DVec3::ONE);
    let boxes = [
        unit,
        Aabb::new(DVec3::new(1.0, 0.2, 0.2), DVec3::new(2.0, 0.8, 0.8)), // touches a face
        Aabb::new(DVec3::new(1.0, 1.0, 0.0), DVec3::new(2.0, 2.0, 1.0)), // touches an edge
        Aabb::new(DVec3::ONE, DVec3::splat(2.0)),                        // touches a corner
        Aabb::new(DVec3::ONE, DVec3::ONE),                               // a point on that corner
        Aabb::new(DVec3::splat(0.5), DVec3::splat(0.5)),                 // a point inside
        Aabb::new(DVec3::new(-5.0, 0.0, -5.0), DVec3::new(5.0, 0.0, 5.0)), // a plane (zero height)
        Aabb::new(DVec3::new(1.0 + 1e-12, 0.0, 0.0), DVec3::splat(2.0)), // a hair apart
        unit,                                                            // the same box again
        Aabb::new(DVec3::new(3.0, 0.5, 0.5), DVec3::new(3.0, 0.5, 0.5)), // an isolated point
    ];
    let mut bp = tight();
    for (key, b) in boxes.iter().enumerate() {
        bp.insert(*b, key as u64).unwrap();
    }
    let mut expected = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if boxes[i].overlaps(&boxes[j]) {
                expected.push((i as u64, j as u64));
            }
        }
    }
    let pairs = bp.pairs();
    assert_eq!(pairs, expected);
    for touching in [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (0, 8), (3, 4)] {
        assert!(pairs.contains(&touching), "{touching:?} touch but were not paired");
    }
    assert!(!pairs.contains(&(0, 7)) && !pairs.iter().any(|p| p.1 == 9));
    // A margin of exactly the gap makes the isolated point touch box 1's fat box... and no more.
    let mut fat = BroadPhase::try_with_settings(BroadPhaseSettings {
        margin: 0.5,
        prediction: 0.0,
    })
    .unwrap();
    fat.insert(boxes[1], 1).unwrap();
    fat.insert(boxes[9], 9).unwrap();
    assert_eq!(fat.pairs(), vec![(1, 9)]);
    fat.insert(
        Aabb::new(DVec3::new(4.0 + 1e-9, 0.5, 0.5), DVec3::new(4.5, 0.6, 0.6)),
        10,
    )
    .unwrap();
    assert_eq!(fat.pairs(), vec![(1, 9)], "fat boxes 1e-9 m apart paired");
}

#[test]
fn broad_phase_statics_never_pair_with_statics_and_shared_keys_never_pair() {
    let mut bp = tight();
    let ground = bp
        .insert_static(Aabb::new(DVec3::new(-9.0, -1.0, -9.0), DVec3::new(9.0, 0.0, 9.0)), 100)
        .unwrap();
    let wall = bp
        .insert_static(Aabb::new(DVec3::new(8.0, -1.0, -9.0), DVec3::new(9.0, 5.0, 9.0)), 101)
        .unwrap();
    let crate_box = bp.insert(Aabb::new(DVec3::ZERO, DVec3::ONE), 1).unwrap();
    assert_eq!(
        bp.pairs(),
        vec![(1, 100)],
        "the two static boxes overlap but must not pair"
    );
    // A compound body: two boxes with key 2, overlapping each other and both overlapping the crate.
    bp.insert(Aabb::new(DVec3::new(0.5, 0.5, 0.5), DVec3::splat(1.5)), 2)
        .unwrap();
    let part = bp
        .insert(Aabb::new(DVec3::new(0.9, 0.0, 0.0), DVec3::new(2.0, 1.0, 1.0)), 2)
        .unwrap();
    assert_eq!(bp.pairs(), vec![(1, 2), (1, 100), (2, 100)]);
    // Move the crate into the wall and lift it off the ground; then move the wall away.
    bp.update(
        crate_box,
        Aabb::new(DVec3::new(8.5, 2.0, 0.0), DVec3::new(9.5, 3.0, 1.0)),
    )
    .unwrap();
    assert_eq!(bp.pairs(), vec![(1, 101), (2, 100)]);
    bp.update(
        wall,
        Aabb::new(DVec3::new(20.0, -1.0, -9.0), DVec3::new(21.0, 5.0, 9.0)),
    )
    .unwrap();
    assert_eq!(bp.pairs(), vec![(2, 100)]);
    bp.remove(part).unwrap();
    bp.remove(ground).unwrap();
    assert!(bp.pairs().is_empty());
    assert_eq!(bp.len(), 3);
}

#[test]
fn broad_phase_fat_boxes_follow_the_documented_rule() {
    let margin = 0.1;
    let mut bp = BroadPhase::try_with_settings(BroadPhaseSettings {
        margin,
        prediction: 2.0,
    })
    .unwrap();
    let tight_box = Aabb::new(DVec3::ZERO, DVec3::ONE);
    let id = bp.insert(tight_box, 1).unwrap();
    assert_eq!(bp.fat_aabb(id).unwrap(), tight_box.expanded(margin));
    // Within the margin: nothing changes.
    let nudged = Aabb::new(DVec3::splat(0.09), DVec3::splat(1.09));
    assert!(!bp.update(id, nudged).unwrap());
    assert_eq!(bp.fat_aabb(id).unwrap(), tight_box.expanded(margin));
    assert_eq!(bp.aabb(id).unwrap(), nudged);
    // Out of it: a new fat box around the new tight box.
    let out = Aabb::new(DVec3::new(0.11, 0.0, 0.0), DVec3::new(1.11, 1.0, 1.0));
    assert!(bp.update(id, out).unwrap());
    assert_eq!(bp.fat_aabb(id).unwrap(), out.expanded(margin));
    // A fast body: stretched by twice its displacement ahead of it, not behind.
    let fast = Aabb::new(DVec3::new(3.0, 0.0, 0.0), DVec3::new(4.0, 1.0, 1.0));
    assert!(
        bp.update_with_displacement(id, fast, DVec3::new(0.15, -0.25, 0.0))
            .unwrap()
    );
    let stretched = bp.fat_aabb(id).unwrap();
    assert!(
        (stretched.max - DVec3::new(4.4, 1.1, 1.1)).abs().max_element() < 1e-15,
        "{stretched:?}"
    );
    assert!(
        (stretched.min - DVec3::new(2.9, -0.6, -0.1)).abs().max_element() < 1e-15,
        "{stretched:?}"
    );
    // It moves on inside the stretched box: kept.
    let next = Aabb::new(DVec3::new(3.15, -0.25, 0.0), DVec3::new(4.15, 0.75, 1.0));
    assert!(
        !bp.update_with_displacement(id, next, DVec3::new(0.15, -0.25, 0.0))
            .unwrap()
    );
    assert_eq!(bp.fat_aabb(id).unwrap(), stretched);
    // A jump with a long predicted displacement, then it stops where it is: the stretched box is
    // more than four margins longer than a fresh one, so it shrinks back.
    let far = Aabb::new(DVec3::splat(10.0), DVec3::splat(11.0));
    assert!(bp.update_with_displacement(id, far, DVec3::new(1.0, 0.0, 0.0)).unwrap());
    assert!((bp.fat_aabb(id).unwrap().max.x - 13.1).abs() < 1e-14);
    assert!(bp.update(id, far).unwrap());
    assert_eq!(bp.fat_aabb(id).unwrap(), far.expanded(margin));
    // Static boxes are not fattened.
    let ground = bp.insert_static(tight_box, 2).unwrap();
    assert_eq!(bp.fat_aabb(ground).unwrap(), tight_box);
}

#[test]
fn broad_phase_pairs_appear_and_disappear_with_the_margin() {
    let margin = 0.1;
    let mut bp = BroadPhase::try_with_settings(BroadPhaseSettings {
        margin,
        prediction: 0.0,
    })
    .unwrap();
    let a = bp.insert(Aabb::new(DVec3::ZERO, DVec3::ONE), 10).unwrap();
    let b_box = |x: f64| Aabb::new(DVec3::new(x, 0.0, 0.0), DVec3::new(x + 1.0, 1.0, 1.0));
    let b = bp.insert(b_box(1.5), 20).unwrap();
    assert!(bp.pairs().is_empty());
    bp.update(b, b_box(1.25)).unwrap();
    assert!(bp.pairs().is_empty(), "0.25 m apart with a 0.1 m margin");
    bp.update(b, b_box(1.125)).unwrap();
    assert!(bp.fat_aabb(a).unwrap().overlaps(&bp.fat_aabb(b).unwrap()));
    assert_eq!(bp.pairs(), vec![(10, 20)], "0.125 m apart: fat boxes overlap");
    bp.update(b, b_box(0.5)).unwrap();
    assert_eq!(bp.pairs(), vec![(10, 20)]);
    bp.update(b, b_box(30.0)).unwrap();
    assert!(bp.pairs().is_empty(), "a far jump must drop the pair");
    bp.update(a, b_box(29.5)).unwrap();
    assert_eq!(bp.pairs(), vec![(10, 20)]);
}

#[test]
fn broad_phase_query_finds_the_overlapping_fat_boxes() {
    let mut rng = SplitMix64::new(5);
    let boxes = pile(&mut rng, 600);
    let mut bp = BroadPhase::new();
    let ids: Vec<ProxyId> = boxes
        .iter()
        .enumerate()
        .map(|(k, b)| bp.insert(*b, k as u64).unwrap())
        .collect();
    // Right after the inserts, and after the pair update that files them.
    probe_all(&bp, &ids, &mut rng);
    bp.pairs();
    probe_all(&bp, &ids, &mut rng);
    // Queries see moves at once, before the next pair update (the trees are valid throughout).
    for (k, id) in ids.iter().enumerate() {
        let d = if k % 10 == 0 {
            cube_offset(&mut rng, 5.0)
        } else {
            cube_offset(&mut rng, 0.3)
        };
        bp.update(*id, Aabb::new(boxes[k].min + d, boxes[k].max + d)).unwrap();
    }
    probe_all(&bp, &ids, &mut rng);
    let nan = Aabb::new(DVec3::ZERO, DVec3::new(1.0, f64::NAN, 1.0));
    assert!(bp.query(&nan, |_, _| panic!("visited")).is_err());
}

/// Checks 50 random queries of `bp` (proxies `ids`, the key of each its position) against brute
/// force over the fat boxes.
fn probe_all(bp: &BroadPhase, ids: &[ProxyId], rng: &mut SplitMix64) {
    for _ in 0..50 {
        let probe = Aabb::from_center(
            cube_offset(rng, 4.0) + DVec3::Y * 3.0,
            DVec3::splat(rng.range(0.0, 1.5)),
        );
        let mut found = Vec::new();
        bp.query(&probe, |id, key| found.push((id, key))).unwrap();
        found.sort_unstable();
        let expected: Vec<(ProxyId, u64)> = ids
            .iter()
            .enumerate()
            .filter(|(_, id)| bp.fat_aabb(**id).unwrap().overlaps(&probe))
            .map(|(k, id)| (*id, k as u64))
            .collect();
        assert_eq!(found, expected);
    }
}

// ---------------------------------------------------------------------------------------------
// Errors.

fn message<T: core::fmt::Debug>(result: Result<T, GeometryError>) -> String {
    result.expect_err("should be refused").to_string()
}

#[test]
fn broad_phase_errors_name_the_bad_value_and_change_nothing() {
    let mut bp = BroadPhase::new();
    let a = bp.insert(Aabb::new(DVec3::ZERO, DVec3::ONE), 1).unwrap();
    let b = bp.insert(Aabb::new(DVec3::splat(0.5), DVec3::splat(2.0)), 2).unwrap();
    bp.remove(b).unwrap();
    let b2 = bp.insert(Aabb::new(DVec3::splat(0.5), DVec3::splat(2.0)), 3).unwrap();
    assert_eq!(
        b2.index(),
        b.index() + 1,
        "a freed slot is not reused before the next pair update"
    );
    assert_eq!(bp.pairs(), vec![(1, 3)]);
    let c = bp.insert(Aabb::new(DVec3::splat(5.0), DVec3::splat(6.0)), 4).unwrap();
    assert_eq!(c.index(), b.index(), "then it is, with a new generation");
    assert_ne!(c, b);
    let before = bp.clone();

    let stale = message(bp.remove(b));
    assert!(
        stale.contains("proxy id") && stale.contains(&format!("{b:?}")),
        "{stale}"
    );
    assert!(message(bp.update(b, Aabb::new(DVec3::ZERO, DVec3::ONE))).contains(&format!("{b:?}")));
    assert!(bp.aabb(b).is_err() && bp.user_key(b).is_err() && bp.kind(b).is_err());
    let mut other = BroadPhase::new();
    for k in 0..10 {
        other.insert(Aabb::new(DVec3::ZERO, DVec3::ONE), k).unwrap();
    }
    let foreign = other.proxies().last().unwrap();
    assert!(message(bp.remove(foreign)).contains(&format!("{foreign:?}")));

    let nan = Aabb::new(DVec3::ZERO, DVec3::new(1.0, f64::NAN, 1.0));
    let text = message(bp.update(a, nan));
    assert!(text.contains("max.y") && text.contains("NaN"), "{text}");
    let text = message(bp.insert(Aabb::new(DVec3::new(f64::INFINITY, 0.0, 0.0), DVec3::ONE), 9));
    assert!(text.contains("min.x") && text.contains("inf"), "{text}");
    let inverted = Aabb::new(DVec3::new(0.0, 0.0, 2.5), DVec3::new(1.0, 1.0, 1.5));
    let text = message(bp.insert_static(inverted, 9));
    assert!(text.contains("min.z = 2.5 > max.z = 1.5"), "{text}");
    let text = message(bp.update_with_displacement(a, Aabb::new(DVec3::ZERO, DVec3::ONE), DVec3::NAN));
    assert!(text.contains("displacement") && text.contains("NaN"), "{text}");
    let text = message(bp.update_with_displacement(a, Aabb::new(DVec3::ZERO, DVec3::ONE), DVec3::X * f64::MAX));
    assert!(text.contains("displacement") && text.contains("1.79769"), "{text}");
    assert!(Aabb::EMPTY.is_empty() && bp.insert(Aabb::EMPTY, 9).is_err());

    assert_eq!(snapshot(&bp), snapshot(&before));
    assert_eq!(bp.len(), 3);
    assert_eq!(bp.pairs(), before.clone().pairs());

    let mut huge = BroadPhase::try_with_settings(BroadPhaseSettings {
        margin: 1e308,
        prediction: 0.0,
    })
    .unwrap();
    let text = message(huge.insert(Aabb::new(DVec3::ZERO, DVec3::splat(1e308)), 9));
    assert!(
        text.contains("box") && text.contains("1e308"),
        "a box that overflows when fattened: {text}"
    );
    assert!(huge.is_empty());

    for (margin, prediction) in [(-0.1, 2.0), (f64::NAN, 2.0), (0.1, f64::INFINITY), (0.1, -1.0)] {
        let text = message(BroadPhase::try_with_settings(BroadPhaseSettings { margin, prediction }));
        let named = if margin.is_finite() && margin >= 0.0 {
            "prediction"
        } else {
            "margin"
        };
        assert!(text.contains(named), "{text}");
    }
}

/// The pair stamp names the pairs: kept while no update changes them (a box moved within its
/// fat box changes nothing), new after an update that applies a move, an insert or a removal
/// (each announced by `has_pending_changes` until then), kept by a clone, and never reused: a
/// clone and its original changed apart get different stamps.
#[test]
fn broad_phase_pair_stamp_names_the_pairs_until_an_update_changes_them() {
    let mut bp = BroadPhase::new();
    let unit = |x: f64| Aabb::new(DVec3::new(x, 0.0, 0.0), DVec3::new(x + 1.0, 1.0, 1.0));
    let first = bp.insert(unit(0.0), 1).unwrap();
    let second = bp.insert(unit(1.05), 2).unwrap();
    assert!(bp.has_pending_changes(), "inserts are pending");
    assert_eq!(bp.pairs(), vec![(1, 2)]);
    let stamp = bp.pair_stamp();
    assert!(!bp.has_pending_changes());
    assert_eq!(bp.pairs(), vec![(1, 2)]);
    assert_eq!(
        bp.pair_stamp(),
        stamp,
        "an update with nothing to apply renamed the pairs"
    );
    assert!(!bp.update(second, unit(1.06)).unwrap(), "a move within the fat box");
    assert!(!bp.has_pending_changes());
    assert!(bp.update(second, unit(3.0)).unwrap(), "a move out of the fat box");
    assert!(bp.has_pending_changes());
    let clone = bp.clone();
    assert!(bp.pairs().is_empty());
    let moved = bp.pair_stamp();
    assert_ne!(moved, stamp);
    let mut clone = clone;
    assert_eq!(clone.pair_stamp(), stamp, "a clone keeps its original's stamp");
    assert!(clone.pairs().is_empty());
    assert!(![stamp, moved].contains(&clone.pair_stamp()), "a stamp drawn twice");
    bp.remove(first).unwrap();
    assert!(bp.has_pending_changes(), "a removal is pending");
    assert!(bp.pairs().is_empty());
    assert_ne!(bp.pair_stamp(), moved, "a removal kept the stamp");
}

/// `keeps_fat_box` answers, without changing anything, what `update_with_displacement` does
/// with the same arguments: through random small and large moves and displacements of dynamic
/// and static proxies it says "kept" exactly when the update then returns that the fat box did
/// not change; and it says "not kept" wherever the update fails (a stale id, a non-finite
/// displacement, an inverted box).
#[test]
fn broad_phase_keeps_fat_box_answers_as_the_update_does() {
    let mut bp = BroadPhase::new();
    let mut rng = SplitMix64::new(3);
    let mut ids = Vec::new();
    for key in 0..40 {
        let corner = DVec3::new(rng.range(-5.0, 5.0), rng.range(-5.0, 5.0), rng.range(-5.0, 5.0));
        let b = Aabb::new(corner, corner + DVec3::splat(rng.range(0.1, 1.0)));
        ids.push(if key % 8 == 0 {
            bp.insert_static(b, key).unwrap()
        } else {
            bp.insert(b, key).unwrap()
        });
    }
    let (mut kept, mut renewed) = (0, 0);
    for round in 0..2000 {
        let id = ids[round % ids.len()];
        let old = bp.aabb(id).unwrap();
        let reach = if round % 5 == 0 { 0.5 } else { 0.02 };
        let shift = DVec3::new(
            rng.range(-reach, reach),
            rng.range(-reach, reach),
            rng.range(-reach, reach),
        );
        let b = Aabb::new(old.min + shift, old.max + shift);
        let displacement = shift * rng.range(0.0, 3.0);
        let before = snapshot(&bp);
        let keeps = bp.keeps_fat_box(id, &b, displacement);
        assert_eq!(snapshot(&bp), before, "the question changed the broad phase");
        let changed = bp.update_with_displacement(id, b, displacement).unwrap();
        assert_eq!(keeps, !changed, "round {round}");
        if keeps {
            kept += 1
        } else {
            renewed += 1
        }
        if round % 100 == 0 {
            bp.pairs();
        }
    }
    assert!(kept > 200 && renewed > 200, "{kept} kept, {renewed} renewed");
    let some = bp.aabb(ids[1]).unwrap();
    assert!(!bp.keeps_fat_box(ids[1], &some, DVec3::new(f64::NAN, 0.0, 0.0)));
    assert!(!bp.keeps_fat_box(
        ids[1],
        &Aabb {
            min: some.max + DVec3::ONE,
            max: some.max
        },
        DVec3::ZERO
    ));
    bp.remove(ids[1]).unwrap();
    assert!(!bp.keeps_fat_box(ids[1], &some, DVec3::ZERO), "a stale id");
}
