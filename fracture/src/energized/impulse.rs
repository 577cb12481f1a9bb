//! The impulses that give a broken joint's stored energy back as motion (Li 2018 section 3.6),
//! and a momentum-conserving variant.
//!
//! # Li's impulse at the pivot ([`Reinjection::PerBody`])
//!
//! Each dynamic body `k` of the joint gets one impulse `mu l_k` at its pivot (its anchor of the
//! joint). The direction is orthogonal to both the force `f_k` and the torque `tau_k` (about the
//! body's centre of mass) that the joint applied to it over the step, `J_k^T lambda / h`:
//! `l_k = -(tau_k x f_k) / |tau_k x f_k|`, which follows the bending or stretching the joint
//! resisted. When `tau_k x f_k` vanishes (pure tension or compression along a line through the
//! centre, a chain link) any direction orthogonal to `f_k` is as good, and one is drawn from the
//! seeded stream; with no force at all, orthogonal to the torque.
//!
//! One deviation in sign: `l_k` is oriented so that it does not push the body's centre toward its
//! pivot. With the torque about the centre of mass, a joint force `f` at arm `r` gives
//! `tau = r x f`, and the printed `-(tau x f) = |f|^2 r_perp` points from the centre to the pivot,
//! whatever the sign convention of `lambda` (it flips `tau` and `f` together): every kick drives a
//! piece into the piece it was glued to, whose contact takes the energy straight back out.
//! Measured on the plate of Li's Fig. 4 (scenes.rs, dropped 0.5 m, 112 joints broken) with the
//! printed sign: the fragments' kinetic energy 0.1 s after impact fell with alpha (158, 154, 154
//! and 152 J at alpha 0, 0.5, 1 and 1.5, joints of 1e6 N/m); oriented away from the pivot it rises
//! (158, 161, 167, 170 J), as the paper's figures show.
//!
//! Magnitude: an impulse `G^T mu` with `G = [l, r x l]` for one body changes its kinetic energy by
//! `1/2 mu^2 G M^-1 G^T = 1/2 mu^2 / m_G` when the cross term `v^T M dv` is dropped (Li's eq. 5
//! and 7), so one body alone takes `mu = sqrt(2 alpha E m_G)` (the paper's printed form is garbled,
//! see the errata). The paper gives that to each body; for a joint between two dynamic bodies that
//! adds `2 alpha E`. Here the energy is shared the way a released spring shares it: both bodies get
//! the same magnitude `mu = sqrt(2 alpha E / (w_1 + w_2))`, `w_k = G_k M_k^-1 G_k^T`, so the body
//! that is lighter at its pivot takes the larger share and the total is `alpha E`. With one
//! dynamic body this is the paper's formula.
//!
//! This variant changes the linear and angular momentum of the pair (the two impulses are not
//! opposite): use it where the look of the break matters more than momentum, which is what the
//! paper's scenes do.
//!
//! # Equal and opposite ([`Reinjection::MomentumConserving`])
//!
//! One direction `d` and one point `p` (the midpoint of the two pivots): body A gets `+mu d` at
//! `p`, body B `-mu d` at `p`. Their sum is zero and so is the sum of their moments about any
//! point, so linear and angular momentum are unchanged to round-off, and the kinetic energy rises
//! by `1/2 mu^2 (w_A + w_B)` (cross term aside), so `mu = sqrt(2 alpha E / (w_A + w_B))` with
//! `w = G M^-1 G^T` of each body at `p` along `d`: the pair's effective mass. `d` is the line of
//! the force the joint applied to A, oriented to push A away from B's centre of mass (a stretched
//! or compressed part springs apart either way); with no force, the line between the centres.
//! Use it when a broken structure must keep its momentum (debris of a moving object, a property
//! test), or for a joint to the world (whose side takes nothing).

use glam::{DMat3, DVec3};
use smallvec::SmallVec;

use shatter_integrators::SplitMix64;

/// How the stored energy of a broken joint is given back. See the [module docs](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reinjection {
    /// Li 2018: one impulse per dynamic body at its pivot, orthogonal to the force and torque the
    /// joint applied to it. Lively; changes momentum.
    #[default]
    PerBody,
    /// An equal and opposite pair of impulses along one line through one point: momentum kept.
    MomentumConserving,
}

/// Below this arm (m), `|tau x f| / |f|^2`, the joint's force passed through the body's centre of
/// mass: the tension-only case of Li 2018 section 3.6.1.
pub const TENSION_ONLY_ARM: f64 = 1e-9;

/// One side of a broken joint as the re-injection sees it, world frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PivotBody {
    /// 1 / mass, 1/kg; zero for a side that cannot move (static, kinematic, the world).
    pub inverse_mass: f64,
    /// Inverse inertia tensor, world frame, 1/(kg m^2); zero for a side that cannot move.
    pub inverse_inertia: DMat3,
    /// Centre of mass, m.
    pub centre: DVec3,
    /// The body's anchor of the joint, m.
    pub pivot: DVec3,
    /// Force the joint applied to the body over the step, `J^T lambda / h` (linear part), N.
    pub force: DVec3,
    /// Torque the joint applied about the centre of mass, N m.
    pub torque: DVec3,
    /// Velocity of the centre of mass, m/s.
    pub linear_velocity: DVec3,
    /// Angular velocity, rad/s.
    pub angular_velocity: DVec3,
}

impl PivotBody {
    /// Whether the body moves under an impulse.
    pub fn is_dynamic(&self) -> bool {
        self.inverse_mass > 0.0
    }

    /// `G M^-1 G^T` for a unit impulse along `direction` at world `point`: the inverse of the
    /// effective mass seen there, 1/kg.
    pub fn inverse_effective_mass(&self, point: DVec3, direction: DVec3) -> f64 {
        let moment = (point - self.centre).cross(direction);
        self.inverse_mass * direction.length_squared() + moment.dot(self.inverse_inertia * moment)
    }

    /// The cross term `v^T M dv = v . j + w . (r x j)` of an impulse `j` at `point`, J.
    fn cross_term(&self, impulse: DVec3, point: DVec3) -> f64 {
        self.linear_velocity.dot(impulse) + self.angular_velocity.dot((point - self.centre).cross(impulse))
    }
}

/// One impulse a break applies: `magnitude * direction` (N s) at `point` (m) on side `side`
/// (0: body A, 1: body B).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kick {
    /// Which side of the joint: 0 for A, 1 for B.
    pub side: usize,
    /// Unit direction of the impulse, world frame.
    pub direction: DVec3,
    /// Impulse magnitude, N s.
    pub magnitude: f64,
    /// Where it acts, world frame, m.
    pub point: DVec3,
}

impl Kick {
    /// The impulse vector, N s.
    pub fn impulse(&self) -> DVec3 {
        self.direction * self.magnitude
    }
}

/// The impulses of one break.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kicks {
    /// One per dynamic side (none when nothing can move or there is no energy to give).
    pub kicks: SmallVec<[Kick; 2]>,
    /// `1/2 dv^T M dv` of the kicks, J: `alpha E` up to round-off.
    pub energy: f64,
    /// `v^T M dv`, the cross term the energy balance leaves out (Li 2018 eq. 4 to 5), J: what the
    /// kicks add on top of `energy` (or take, when negative) because the bodies already moved.
    pub cross_term: f64,
    /// Whether some direction was drawn at random (no torque about the force's line).
    pub drawn: bool,
}

/// The kicks that give back `energy` (J, >= 0: `alpha E`) for a joint between `sides` (A, B), by
/// `variant`; `random` supplies directions the physics leaves free.
pub fn kicks(sides: [&PivotBody; 2], energy: f64, variant: Reinjection, random: &mut SplitMix64) -> Kicks {
    let mut out = Kicks::default();
    if !(energy > 0.0) || !sides.iter().any(|side| side.is_dynamic()) {
        return out;
    }
    let mut planned: SmallVec<[(usize, DVec3, DVec3); 2]> = SmallVec::new();
    match variant {
        Reinjection::PerBody => {
            for (k, side) in sides.iter().enumerate().filter(|(_, side)| side.is_dynamic()) {
                let (direction, drawn) = li_direction(side.force, side.torque, random);
                let direction = away_from_pivot(direction, side);
                out.drawn |= drawn;
                planned.push((k, direction, side.pivot));
            }
        }
        Reinjection::MomentumConserving => {
            let point = if sides[1].is_dynamic() && sides[0].is_dynamic() {
                (sides[0].pivot + sides[1].pivot) * 0.5
            } else if sides[0].is_dynamic() {
                sides[0].pivot
            } else {
                sides[1].pivot
            };
            let (direction, drawn) = pair_direction(sides, random);
            out.drawn = drawn;
            for (k, sign) in [(0, 1.0), (1, -1.0)] {
                if sides[k].is_dynamic() {
                    planned.push((k, direction * sign, point));
                }
            }
        }
    }
    let inverse_mass: f64 = planned
        .iter()
        .map(|&(k, direction, point)| sides[k].inverse_effective_mass(point, direction))
        .sum();
    if !(inverse_mass > 0.0) {
        return out;
    }
    let magnitude = (2.0 * energy / inverse_mass).sqrt();
    for (side, direction, point) in planned {
        let kick = Kick {
            side,
            direction,
            magnitude,
            point,
        };
        out.cross_term += sides[side].cross_term(kick.impulse(), point);
        out.kicks.push(kick);
    }
    out.energy = 0.5 * magnitude * magnitude * inverse_mass;
    out
}

/// Li 2018 section 3.6.1: `-(tau x f) / |tau x f|`, or a drawn direction orthogonal to `f` (to
/// `tau` when there is no force; any when there is neither) when the arm `|tau x f| / |f|^2` is
/// below [`TENSION_ONLY_ARM`]. Returns the unit direction and whether it was drawn.
pub fn li_direction(force: DVec3, torque: DVec3, random: &mut SplitMix64) -> (DVec3, bool) {
    let cross = torque.cross(force);
    let force_squared = force.length_squared();
    if force_squared > 0.0 && cross.length() > TENSION_ONLY_ARM * force_squared {
        return (-cross.normalize(), false);
    }
    let axis = if force_squared > 0.0 {
        force
    } else if torque.length_squared() > 0.0 {
        torque
    } else {
        return (random.unit_vector(), true);
    };
    (random_orthogonal(axis, random), true)
}

/// `direction`, or its opposite where it would push the body's centre toward its pivot (into the
/// piece it was joined to): see the module docs.
fn away_from_pivot(direction: DVec3, side: &PivotBody) -> DVec3 {
    if direction.dot(side.pivot - side.centre) > 0.0 {
        -direction
    } else {
        direction
    }
}

/// The line of the momentum-conserving pair: along the force on A, oriented away from B's centre;
/// with no force, from B's centre to A's; drawn when the centres coincide too.
fn pair_direction([a, b]: [&PivotBody; 2], random: &mut SplitMix64) -> (DVec3, bool) {
    let apart = a.centre - b.centre;
    if a.force.length_squared() > 0.0 {
        let line = a.force.normalize();
        return (if line.dot(apart) < 0.0 { -line } else { line }, false);
    }
    if apart.length_squared() > 0.0 {
        return (apart.normalize(), false);
    }
    (random.unit_vector(), true)
}

/// A unit vector orthogonal to `axis` (non-zero), at a uniform random angle about it.
fn random_orthogonal(axis: DVec3, random: &mut SplitMix64) -> DVec3 {
    let (u, w) = axis.normalize().any_orthonormal_pair();
    let angle = std::f64::consts::TAU * random.next_f64();
    u * angle.cos() + w * angle.sin()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;
    use proptest::prelude::*;

    /// A box of mass `m` and half extents `he`, turned by `q`, at `centre`, with its pivot at
    /// `pivot`, pushed by `force` at the pivot and `couple`, moving at `v`, `w`.
    #[allow(clippy::too_many_arguments)]
    fn body(
        m: f64,
        he: DVec3,
        q: DQuat,
        centre: DVec3,
        pivot: DVec3,
        force: DVec3,
        couple: DVec3,
        v: DVec3,
    ) -> PivotBody {
        let principal = DVec3::new(
            he.y * he.y + he.z * he.z,
            he.x * he.x + he.z * he.z,
            he.x * he.x + he.y * he.y,
        ) * (m / 3.0);
        let rotation = DMat3::from_quat(q);
        let inverse_inertia = rotation * DMat3::from_diagonal(principal.recip()) * rotation.transpose();
        PivotBody {
            inverse_mass: 1.0 / m,
            inverse_inertia,
            centre,
            pivot,
            force,
            torque: (pivot - centre).cross(force) + couple,
            linear_velocity: v,
            angular_velocity: DVec3::new(0.3, -1.0, 0.7),
        }
    }

    fn world_side(pivot: DVec3) -> PivotBody {
        PivotBody {
            inverse_mass: 0.0,
            inverse_inertia: DMat3::ZERO,
            centre: DVec3::ZERO,
            pivot,
            force: DVec3::ZERO,
            torque: DVec3::ZERO,
            linear_velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
        }
    }

    /// `1/2 dv^T M dv` of `kicks` measured by applying them to `sides`' mass matrices.
    fn applied_energy(sides: [&PivotBody; 2], kicks: &Kicks) -> f64 {
        let mut total = 0.0;
        for (k, side) in sides.iter().enumerate() {
            let (mut linear, mut angular) = (DVec3::ZERO, DVec3::ZERO);
            for kick in kicks.kicks.iter().filter(|kick| kick.side == k) {
                linear += kick.impulse();
                angular += (kick.point - side.centre).cross(kick.impulse());
            }
            if side.is_dynamic() {
                let dv = linear * side.inverse_mass;
                let dw = side.inverse_inertia * angular;
                total += 0.5 * (linear.dot(dv) + angular.dot(dw));
            }
        }
        total
    }

    fn vec3() -> impl Strategy<Value = DVec3> {
        (-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64).prop_map(|(x, y, z)| DVec3::new(x, y, z))
    }

    proptest! {
        #[test]
        fn energized_kicks_give_back_exactly_the_asked_energy(
            m_a in 0.1..20.0f64, m_b in 0.1..20.0f64,
            he_a in vec3(), he_b in vec3(), axis in vec3(), angle in 0.0..3.0f64,
            pivot in vec3(), offset in vec3(), force in vec3(), couple in vec3(), v in vec3(),
            energy in 1e-6..1e3f64, with_world in any::<bool>(), conserving in any::<bool>(),
        ) {
            let q = DQuat::from_axis_angle((axis + DVec3::X * 2.0).normalize(), angle);
            let a = body(m_a, he_a.abs() + 0.05, q, DVec3::ZERO, pivot, force * 100.0, couple * 10.0, v);
            let b = if with_world {
                world_side(pivot + offset * 1e-3)
            } else {
                body(m_b, he_b.abs() + 0.05, q.inverse(), offset * 2.0, pivot + offset * 1e-3, -force * 100.0, -couple, -v)
            };
            let variant = if conserving { Reinjection::MomentumConserving } else { Reinjection::PerBody };
            let kicks = kicks([&a, &b], energy, variant, &mut SplitMix64::new(3));
            prop_assert_eq!(kicks.kicks.len(), if with_world { 1 } else { 2 });
            let measured = applied_energy([&a, &b], &kicks);
            prop_assert!((measured - energy).abs() <= 1e-12 * energy, "{} vs {}", measured, energy);
            prop_assert!((kicks.energy - energy).abs() <= 1e-12 * energy);
            if conserving && !with_world {
                let linear: DVec3 = kicks.kicks.iter().map(Kick::impulse).sum();
                let moment: DVec3 = kicks.kicks.iter().map(|k| k.point.cross(k.impulse())).sum();
                let scale = kicks.kicks[0].magnitude * (1.0 + kicks.kicks[0].point.length());
                prop_assert!(linear.length() <= 1e-15 * scale && moment.length() <= 1e-15 * scale);
            }
        }
    }

    #[test]
    fn energized_li_direction_is_orthogonal_to_force_and_torque() {
        let force = DVec3::new(0.0, -30.0, 4.0);
        let torque = DVec3::new(2.0, 0.5, -1.0);
        let (l, drawn) = li_direction(force, torque, &mut SplitMix64::new(1));
        assert!(!drawn);
        assert!(l.dot(force).abs() < 1e-12 * force.length() && l.dot(torque).abs() < 1e-12 * torque.length());
        // The sign of the paper: -(tau x f).
        assert!(l.dot(torque.cross(force)) < 0.0);
    }

    #[test]
    fn energized_pure_tension_draws_a_reproducible_direction_orthogonal_to_the_force() {
        let force = DVec3::new(1.0, 2.0, -0.5) * 40.0;
        // The torque of a force through the centre: round-off only.
        let torque = DVec3::new(1e-15, -2e-15, 0.0);
        let draw = |seed| li_direction(force, torque, &mut SplitMix64::new(seed));
        let (first, drawn) = draw(9);
        assert!(drawn);
        assert!(first.dot(force).abs() <= 1e-14 * force.length());
        assert!((first.length() - 1.0).abs() < 1e-14);
        assert_eq!(draw(9).0, first);
        assert!(draw(10).0.dot(first) < 1.0 - 1e-6);
        // A pure couple: orthogonal to the torque; nothing at all: still a unit vector.
        let (l, _) = li_direction(DVec3::ZERO, torque * 1e15, &mut SplitMix64::new(2));
        assert!(l.dot(torque).abs() < 1e-14 * torque.length() * 1e15);
        let (l, drawn) = li_direction(DVec3::ZERO, DVec3::ZERO, &mut SplitMix64::new(2));
        assert!(drawn && (l.length() - 1.0).abs() < 1e-14);
    }

    #[test]
    fn energized_shared_energy_gives_the_lighter_body_the_larger_share() {
        let he = DVec3::splat(0.5);
        let force = DVec3::X * 10.0;
        let couple = DVec3::Z;
        let heavy = body(
            9.0,
            he,
            DQuat::IDENTITY,
            -DVec3::X,
            DVec3::ZERO,
            force,
            couple,
            DVec3::ZERO,
        );
        let light = body(
            1.0,
            he,
            DQuat::IDENTITY,
            DVec3::X,
            DVec3::ZERO,
            -force,
            -couple,
            DVec3::ZERO,
        );
        let kicks = kicks([&heavy, &light], 2.0, Reinjection::PerBody, &mut SplitMix64::new(0));
        let share = |side: &PivotBody, kick: &Kick| {
            0.5 * kick.magnitude.powi(2) * side.inverse_effective_mass(kick.point, kick.direction)
        };
        let (e_heavy, e_light) = (share(&heavy, &kicks.kicks[0]), share(&light, &kicks.kicks[1]));
        assert!((e_heavy + e_light - 2.0).abs() < 1e-12);
        assert!(e_light > 5.0 * e_heavy, "{e_light} vs {e_heavy}");
        // With the world on the other side one body takes it all: the paper's sqrt(2 E m_G).
        let alone = kicks_alone(&light);
        let m_g = 1.0 / light.inverse_effective_mass(alone.point, alone.direction);
        assert!((alone.magnitude - (2.0 * 2.0 * m_g).sqrt()).abs() < 1e-12 * alone.magnitude);
    }

    fn kicks_alone(side: &PivotBody) -> Kick {
        let world = world_side(side.pivot);
        kicks([side, &world], 2.0, Reinjection::PerBody, &mut SplitMix64::new(0)).kicks[0]
    }

    #[test]
    fn energized_per_body_kick_points_away_from_the_pivot() {
        // A box pulled down at a pivot on its right face: the printed -(tau x f) is +x, from the
        // centre toward the pivot; the kick goes the other way, out of the joint.
        let side = body(
            1.0,
            DVec3::splat(0.5),
            DQuat::IDENTITY,
            DVec3::ZERO,
            DVec3::X * 0.5,
            -DVec3::Y * 50.0,
            DVec3::ZERO,
            DVec3::ZERO,
        );
        let (printed, _) = li_direction(side.force, side.torque, &mut SplitMix64::new(0));
        assert!(printed.dot(DVec3::X) > 0.999);
        let world = world_side(side.pivot);
        let kicks = kicks([&side, &world], 1.0, Reinjection::PerBody, &mut SplitMix64::new(0));
        assert!(kicks.kicks[0].direction.dot(DVec3::X) < -0.999);
    }

    #[test]
    fn energized_no_energy_or_nothing_dynamic_gives_no_kick() {
        let world = world_side(DVec3::ZERO);
        let b = body(
            1.0,
            DVec3::splat(0.5),
            DQuat::IDENTITY,
            DVec3::X,
            DVec3::ZERO,
            DVec3::X,
            DVec3::ZERO,
            DVec3::ZERO,
        );
        for variant in [Reinjection::PerBody, Reinjection::MomentumConserving] {
            assert!(
                kicks([&world, &world], 1.0, variant, &mut SplitMix64::new(0))
                    .kicks
                    .is_empty()
            );
            assert!(
                kicks([&b, &world], 0.0, variant, &mut SplitMix64::new(0))
                    .kicks
                    .is_empty()
            );
        }
    }

    #[test]
    fn energized_momentum_conserving_pair_pushes_the_bodies_apart() {
        let he = DVec3::splat(0.5);
        // Tension: the joint pulled A (left) toward B (right); compression: pushed it away.
        for pull in [1.0, -1.0] {
            let force = DVec3::X * 20.0 * pull;
            let a = body(
                1.0,
                he,
                DQuat::IDENTITY,
                -DVec3::X,
                DVec3::ZERO,
                force,
                DVec3::ZERO,
                DVec3::ZERO,
            );
            let b = body(
                2.0,
                he,
                DQuat::IDENTITY,
                DVec3::X,
                DVec3::ZERO,
                -force,
                DVec3::ZERO,
                DVec3::ZERO,
            );
            let kicks = kicks([&a, &b], 1.0, Reinjection::MomentumConserving, &mut SplitMix64::new(0));
            assert_eq!(kicks.kicks[0].impulse().x.signum(), -1.0);
            assert_eq!(kicks.kicks[1].impulse().x.signum(), 1.0);
        }
    }
}
