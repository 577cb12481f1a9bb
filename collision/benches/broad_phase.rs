//! `broad_phase`: one step of a settling pile, timed as every box's update plus the pair query.
//!
//! Scenes `update_10k` and `update_100k`: boxes 0.2 to 1 m along each axis, scattered in a slab
//! 8 m high over static ground at 1.74 boxes per cubic metre, so that each box's tight box
//! overlaps about three others. Every step every box moves by a random displacement of up to 5 cm
//! (one 30 Hz frame of a jostling pile; each box wanders within 25 cm of its place) and 1% of the
//! boxes jump to a random place in the slab. Only `update` for every box and `update_pairs` are
//! timed; making up the motion is not. Rayon pools of one and two threads, the steps run inside
//! the pool; the default margin (0.1 m).

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use glam::DVec3;
use shatter_collision::{Aabb, BroadPhase, BroadPhaseSettings, ProxyId};
use shatter_integrators::SplitMix64;

/// Boxes per cubic metre: with a mean Minkowski-sum volume of 1.2^3 m^3 per pair, about three
/// overlaps per box.
const DENSITY: f64 = 1.74;
const HEIGHT: f64 = 8.0;
/// Largest displacement per step, m.
const STEP: f64 = 0.05;
/// How far a box wanders from its place, m per axis.
const WANDER: f64 = 0.25;
/// Fraction of boxes that jump each step.
const JUMPS: f64 = 0.01;

struct Pile {
    side: f64,
    home: Vec<DVec3>,
    offset: Vec<DVec3>,
    half: Vec<DVec3>,
    ids: Vec<ProxyId>,
    rng: SplitMix64,
}

impl Pile {
    fn new(count: usize, bp: &mut BroadPhase) -> Self {
        let side = (count as f64 / DENSITY / HEIGHT).sqrt();
        let mut rng = SplitMix64::new(count as u64);
        let mut pile = Self {
            side,
            home: Vec::with_capacity(count),
            offset: vec![DVec3::ZERO; count],
            half: Vec::with_capacity(count),
            ids: Vec::with_capacity(count),
            rng: SplitMix64::new(0),
        };
        for k in 0..count {
            let home = pile.random_place(&mut rng);
            let half = DVec3::new(rng.range(0.1, 0.5), rng.range(0.1, 0.5), rng.range(0.1, 0.5));
            pile.home.push(home);
            pile.half.push(half);
            pile.ids
                .push(bp.insert(Aabb::from_center(home, half), k as u64).expect("a valid box"));
        }
        let ground = Aabb::new(DVec3::new(0.0, -1.0, 0.0), DVec3::new(side, 0.0, side));
        bp.insert_static(ground, u64::MAX).expect("a valid box");
        pile.rng = rng;
        pile
    }

    fn random_place(&self, rng: &mut SplitMix64) -> DVec3 {
        DVec3::new(
            rng.range(0.0, self.side),
            rng.range(0.5, HEIGHT),
            rng.range(0.0, self.side),
        )
    }

    /// Moves every box for the next step: a random walk held within `WANDER` of its place, and a
    /// few jumps.
    fn advance(&mut self) {
        let mut rng = self.rng.clone();
        for k in 0..self.home.len() {
            if rng.next_f64() < JUMPS {
                self.home[k] = self.random_place(&mut rng);
                self.offset[k] = DVec3::ZERO;
                continue;
            }
            // Uniform in the ball of radius STEP, by rejection.
            let d = loop {
                let d = DVec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
                if d.length_squared() <= 1.0 {
                    break d * STEP;
                }
            };
            let o = self.offset[k] + d;
            // Reflect at the wander limit.
            self.offset[k] = o.clamp(DVec3::splat(-WANDER), DVec3::splat(WANDER)) * 2.0 - o;
        }
        self.rng = rng;
    }

    /// The timed part: every box's update, then the pairs. Returns how many fat boxes changed.
    fn step(&self, bp: &mut BroadPhase, pairs: &mut Vec<(u64, u64)>) -> usize {
        let mut renewed = 0;
        for k in 0..self.ids.len() {
            let aabb = Aabb::from_center(self.home[k] + self.offset[k], self.half[k]);
            renewed += usize::from(bp.update(self.ids[k], aabb).expect("a live proxy and a valid box"));
        }
        bp.update_pairs(pairs);
        renewed
    }
}

fn broad_phase(c: &mut Criterion) {
    let mut group = c.benchmark_group("broad_phase");
    for (name, count, samples) in [("update_10k", 10_000, 100), ("update_100k", 100_000, 20)] {
        group.sample_size(samples);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a rayon pool");
            // The pairs of tight boxes (a broad phase without margin), to show the density.
            let mut exact = BroadPhase::try_with_settings(BroadPhaseSettings {
                margin: 0.0,
                prediction: 0.0,
            })
            .expect("valid settings");
            Pile::new(count, &mut exact);
            let tight = exact.pairs().len();
            let mut bp = BroadPhase::new();
            let mut pile = Pile::new(count, &mut bp);
            let mut pairs = Vec::new();
            // Settle into the steady state (fat boxes spread over their wander), then report it.
            let (mut renewed, steps) = (0, 30);
            for _ in 0..steps {
                pile.advance();
                renewed += pool.install(|| pile.step(&mut bp, &mut pairs));
            }
            eprintln!(
                "{name}: {count} boxes, {tight} pairs of tight boxes, {} pairs of fat boxes, {:.1}% of fat boxes renewed per step",
                pairs.len(),
                100.0 * renewed as f64 / (steps * count) as f64
            );
            group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, _| {
                // The whole batch runs inside the pool, as a step of the engine would: entering a
                // pool from outside wakes a sleeping thread, which is not the broad phase's cost.
                b.iter_custom(|iterations| {
                    pool.install(|| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iterations {
                            pile.advance();
                            let start = Instant::now();
                            pile.step(&mut bp, &mut pairs);
                            total += start.elapsed();
                        }
                        total
                    })
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, broad_phase);
criterion_main!(benches);
