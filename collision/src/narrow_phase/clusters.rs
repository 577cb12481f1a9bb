//! Particle clusters: a body's surface particles grouped into small balls, so that the narrow
//! phase skips a whole group with one test when the ball is clear of the other body.
//!
//! A pair of neighbouring fragments touches over one face; most of each body's particles are
//! nowhere near the other. Testing every particle costs a transform and a box test each, and a
//! grid lookup for each one inside the other body's box; a ball around eight particles costs the
//! same once. The grouping: particles sorted along a Morton (Z-order) curve of their body-frame
//! positions, cut into runs of [`CLUSTER_SIZE`] (the curve keeps a run compact), each run's ball
//! centred on its box. A ball is skipped when it lies outside the other body's box grown by the
//! margin, or when the other body's signed distance at its centre exceeds the margin by more than
//! the distance can change within the ball (its Lipschitz bound times the radius,
//! [`super::Collider::distance_lipschitz`]): both tests are exact bounds, so a skipped particle is
//! always one the per-particle test would have rejected.
//!
//! Large bodies (a cylinder's or a bunny's fragments: thousands of particles) have hundreds of
//! clusters, most of them far from the other body of a pair; the clusters are therefore grouped
//! again, runs of [`GROUP_SIZE`] along the same curve, each group a ball around its clusters'
//! balls, tested first with the same bounds. A group's bounds hold for every ball inside it (a
//! ball within the group's ball is no nearer the other body, and what the pair's motion can close
//! near it is no more: `Closing::reach_near` grows with the distance from the bodies' centres plus
//! the radius), so the skipping stays exact.
//!
//! Particles keep their indices (feature ids, which warm starting matches from step to step); the
//! clusters list them in curve order beside their positions.

use glam::DVec3;

use crate::aabb::Aabb;

/// Particles per cluster: small enough that a ball is a fraction of a fragment a few centimetres
/// across, large enough that the ball test saves most of the per-particle work.
pub const CLUSTER_SIZE: usize = 8;

/// Clusters per group.
pub const GROUP_SIZE: usize = 8;

/// Bits per axis of the Morton code.
const MORTON_BITS: u32 = 10;

/// A ball around a run of members: particles for a cluster, clusters for a group.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ball {
    /// Centre of the ball, body frame, m.
    pub centre: DVec3,
    /// Radius of the ball: every member (every member's ball, for a group) is within it, m.
    pub radius: f64,
    /// The members: a cluster's are `members[start..end]` of [`ParticleClusters`], a group's
    /// `clusters[start..end]`.
    pub start: u32,
    /// One past the last member.
    pub end: u32,
}

/// Balls around consecutive runs of `size` of `items`, each item a ball itself (centre and
/// radius; zero for a point): each ball is centred on the box of its run's balls.
fn balls_of_runs<T>(items: &[T], size: usize, ball: impl Fn(&T) -> (DVec3, f64)) -> Box<[Ball]> {
    items
        .chunks(size)
        .enumerate()
        .map(|(k, run)| {
            let corners = run.iter().flat_map(|item| {
                let (centre, radius) = ball(item);
                [centre - DVec3::splat(radius), centre + DVec3::splat(radius)]
            });
            let centre = Aabb::from_points(corners).center();
            let radius = run
                .iter()
                .map(|item| {
                    let (c, r) = ball(item);
                    (c - centre).length() + r
                })
                .fold(0.0, f64::max);
            let start = (k * size) as u32;
            Ball {
                centre,
                radius,
                start,
                end: start + run.len() as u32,
            }
        })
        .collect()
}

/// A body's particles in clusters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParticleClusters {
    groups: Box<[Ball]>,
    clusters: Box<[Ball]>,
    /// Every particle once, cluster by cluster: its position (body frame, m) and its index in the
    /// body's particle list.
    members: Box<[(DVec3, u32)]>,
}

impl ParticleClusters {
    /// Clusters of `particles` (body frame, m), built as the module describes.
    pub fn new(particles: &[DVec3]) -> Self {
        if particles.is_empty() {
            return Self::default();
        }
        let bounds = Aabb::from_points(particles.iter().copied());
        let size = bounds.size().max(DVec3::splat(f64::MIN_POSITIVE));
        let scale = f64::from((1u32 << MORTON_BITS) - 1);
        let code = |p: DVec3| {
            let q = ((p - bounds.min) / size * scale).round();
            morton(q.x as u32) | morton(q.y as u32) << 1 | morton(q.z as u32) << 2
        };
        let mut order: Vec<(u64, u32)> = particles
            .iter()
            .enumerate()
            .map(|(i, &p)| (code(p), i as u32))
            .collect();
        order.sort_unstable();
        let members: Box<[(DVec3, u32)]> = order.iter().map(|&(_, i)| (particles[i as usize], i)).collect();
        let clusters = balls_of_runs(&members, CLUSTER_SIZE, |m| (m.0, 0.0));
        let groups = balls_of_runs(&clusters, GROUP_SIZE, |c| (c.centre, c.radius));
        Self {
            groups,
            clusters,
            members,
        }
    }

    /// The groups of clusters.
    pub fn groups(&self) -> &[Ball] {
        &self.groups
    }

    /// The clusters of `group`.
    pub fn group_clusters(&self, group: &Ball) -> &[Ball] {
        &self.clusters[group.start as usize..group.end as usize]
    }

    /// The clusters.
    pub fn clusters(&self) -> &[Ball] {
        &self.clusters
    }

    /// The members of `cluster`: position (body frame, m) and particle index.
    pub fn members(&self, cluster: &Ball) -> &[(DVec3, u32)] {
        &self.members[cluster.start as usize..cluster.end as usize]
    }
}

/// `value`'s low [`MORTON_BITS`] bits spread to every third bit.
fn morton(value: u32) -> u64 {
    let mut x = u64::from(value) & ((1 << MORTON_BITS) - 1);
    x = (x | x << 16) & 0x0300_00ff;
    x = (x | x << 8) & 0x0300_f00f;
    x = (x | x << 4) & 0x030c_30c3;
    x = (x | x << 2) & 0x0924_9249;
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_integrators::SplitMix64;

    #[test]
    fn clusters_hold_every_particle_once_inside_their_balls() {
        let mut random = SplitMix64::new(3);
        let particles: Vec<DVec3> = (0..203)
            .map(|_| DVec3::new(random.next_f64(), random.next_f64() * 0.3, random.next_f64() * 2.0))
            .collect();
        let clusters = ParticleClusters::new(&particles);
        let mut seen = vec![false; particles.len()];
        for cluster in clusters.clusters() {
            assert!(cluster.end - cluster.start <= CLUSTER_SIZE as u32);
            for &(p, i) in clusters.members(cluster) {
                assert_eq!(p, particles[i as usize]);
                assert!((p - cluster.centre).length() <= cluster.radius);
                assert!(!seen[i as usize], "particle {i} twice");
                seen[i as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
        // Every cluster once, in its group's ball.
        let mut in_groups = 0;
        for group in clusters.groups() {
            for cluster in clusters.group_clusters(group) {
                assert!((cluster.centre - group.centre).length() + cluster.radius <= group.radius * (1.0 + 1e-12));
                assert_eq!(cluster.start as usize, in_groups * CLUSTER_SIZE);
                in_groups += 1;
            }
        }
        assert_eq!(in_groups, clusters.clusters().len());
        // The curve keeps runs compact: its balls are less than half the size of balls around
        // runs of eight taken in the given (random) order.
        let mean = clusters.clusters().iter().map(|c| c.radius).sum::<f64>() / clusters.clusters().len() as f64;
        let unsorted: Vec<f64> = particles
            .chunks(CLUSTER_SIZE)
            .map(|run| {
                let centre = Aabb::from_points(run.iter().copied()).center();
                run.iter().map(|p| (*p - centre).length()).fold(0.0, f64::max)
            })
            .collect();
        let unsorted_mean = unsorted.iter().sum::<f64>() / unsorted.len() as f64;
        assert!(
            mean < 0.5 * unsorted_mean,
            "mean cluster radius {mean}, unsorted {unsorted_mean}"
        );
    }

    #[test]
    fn clusters_of_morton_codes_interleave_bits() {
        assert_eq!(morton(1), 1);
        assert_eq!(morton(2), 8);
        assert_eq!(morton(3), 9);
        assert_eq!(morton(1023), 0x0924_9249);
    }
}
