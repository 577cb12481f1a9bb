//! How far apart a speculative contact may be: the contact margin plus what the pair's motion
//! closes along the contact's normal within the step.
//!
//! A contact that is `g` apart at the start of a step matters to that step only if the two
//! surfaces can meet before it ends: at the contact point `p` with normal `n` (from B to A) the
//! gap closes at `-(v_A(p) - v_B(p)) . n`, the relative velocity of the two rigid bodies'
//! material at `p`. So a contact is kept when `g <= margin + max(0, -v_rel(p) . n h + b)` in a
//! step `h` ([`Closing::keeps`]), to second order: `b` is the bend of the two turning paths along
//! the normal, `-(a_rel . n) h^2 / 2` with `a_rel` the difference of the two centripetal
//! accelerations `w x (w x r)` (a point `r` from a centre turning at `w` strays `w^2 r h^2 / 2`
//! off its tangent: 3 mm for a 5 cm reach at 10 rad/s in 1/30 s, but 3 cm for a half-metre slab,
//! which the collision pass, testing the step's turned end poses, does see). The margin covers
//! the rest: the velocity the step's forces add (none when the caller gives the velocities the
//! step will have, gravity included), higher orders, and the flicker of a resting contact.
//!
//! The bound without a normal ([`Closing::reach_near`]): every point within `r` of `q` moves
//! relative to the other body at most `|v_rel(q)| + |w_rel| r`, since the relative velocity field
//! of two rigid bodies is `v_rel(q) + w_rel x (p - q)`, and bends by at most the sum of the two
//! bodies' `w^2 r h^2 / 2` in any direction. The narrow phase uses it to skip whole
//! clusters of particles, and as the pair's largest gap ([`Closing::pair_margin`]) for tests
//! that cannot look along a normal first.
//!
//! Either body may also be stopped within the step by something else: the bottom ball of a
//! falling column lands, and the ball above it, 10 cm behind and falling with it at 5 m/s, meets
//! it before a 30 Hz step is two thirds through. Their relative velocity was zero when the
//! contacts were made, so a bound on it alone made no contact between them, the solve let the
//! upper ball fall on at full speed, and it ended the step 7 cm deep in the one below (measured: a
//! column of ten balls of radius 0.25 m dropped together from 1 m sank by up to 25 cm into
//! itself, and took a second of position correction before it could sleep). So each body's own motion counts too: a
//! gap is kept when the step closes it with the other body held still, A's material velocity at
//! the point against a still B or B's against a still A, whichever closes most (a body the
//! other's collisions push along can only slow the closing down). Bodies moving side by side, and
//! pieces flying apart, gain nothing from it: neither moves towards the other along the normal.
//!
//! That part of the bound is for pairs of exact shapes only, whose contacts are found in closed
//! form whatever the margin, so a wider one costs just the rows of the contacts it keeps. A pair
//! with a level set ([`Closing::relative_only`]) has its particles culled by the normal-free bound
//! (above), and a body's own speed in every direction is far looser there than the relative motion
//! of neighbouring pieces: with it, the narrow phase of Su's table scene after the break (2558
//! pieces and 1000 balls falling together) went from 72 to 107 ms a step and the solve from 55
//! to 77 ms, for contacts that are nearly all between pieces that never stop short of each
//! other. Level-set debris falling in step can therefore still land in each other, and is then
//! pushed apart by the split pass.
//!
//! Why per contact: after a body shatters, its pieces fly apart at metres per second, each within
//! a bound on its speed of a dozen neighbours it is leaving. A margin that bounds the closing of
//! every point in every direction let through ten times the contacts that could close, each with
//! no impulse but three solver rows.

use glam::DVec3;

use super::Contact;

/// The motion of body A relative to body B over one step, and the margin kept whatever it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Closing {
    /// Gap kept whatever the motion, m.
    pub margin: f64,
    /// The step, s.
    pub dt: f64,
    /// Where `linear` is measured (body A's centre), world frame, m.
    pub anchor: DVec3,
    /// Velocity of A's material at `anchor` relative to B's material there, m/s, world frame.
    pub linear: DVec3,
    /// Angular velocity of A relative to B, rad/s, world frame.
    pub angular: DVec3,
    /// Body B's centre, world frame, m.
    pub centre_b: DVec3,
    /// Angular velocities of A and B, rad/s, world frame: their turning bends each point's path
    /// off its tangent.
    pub spins: [DVec3; 2],
    /// Velocities of A's and B's centres, m/s, world frame: what each closes on the other should
    /// the other be stopped within the step (module docs); `None` bounds the relative motion
    /// alone ([`Closing::relative_only`]).
    pub own: Option<[DVec3; 2]>,
}

impl Closing {
    /// Bodies at rest relative to each other: contacts within `margin` m.
    pub fn at_rest(margin: f64) -> Self {
        Self {
            margin,
            dt: 0.0,
            anchor: DVec3::ZERO,
            linear: DVec3::ZERO,
            angular: DVec3::ZERO,
            centre_b: DVec3::ZERO,
            spins: [DVec3::ZERO; 2],
            own: None,
        }
    }

    /// Body A at `centre_a` moving at `linear_a` and `angular_a`, body B likewise (m, m/s, rad/s,
    /// world frame), over a step of `dt` s, with `margin` m kept whatever the motion.
    pub fn of_bodies(
        margin: f64,
        dt: f64,
        [centre_a, linear_a, angular_a]: [DVec3; 3],
        [centre_b, linear_b, angular_b]: [DVec3; 3],
    ) -> Self {
        Self {
            margin,
            dt,
            anchor: centre_a,
            linear: linear_a - linear_b - angular_b.cross(centre_a - centre_b),
            angular: angular_a - angular_b,
            centre_b,
            spins: [angular_a, angular_b],
            own: Some([linear_a, linear_b]),
        }
    }

    /// Acceleration of A's material at `point` relative to B's material there from their
    /// turning (the centripetal `w x (w x r)` of each; their centres move alike under gravity),
    /// m/s^2.
    fn bend_acceleration(&self, point: DVec3) -> DVec3 {
        let [wa, wb] = self.spins;
        let centripetal = |w: DVec3, r: DVec3| w.cross(w.cross(r));
        centripetal(wa, point - self.anchor) - centripetal(wb, point - self.centre_b)
    }

    /// Velocity of A's material at world point `point` relative to B's material there, m/s.
    pub fn velocity_at(&self, point: DVec3) -> DVec3 {
        self.linear + self.angular.cross(point - self.anchor)
    }

    /// The same motion with the gaps bounded by the relative motion alone, neither body
    /// supposed stopped (what a pair with a level set uses, module docs).
    pub fn relative_only(&self) -> Self {
        Self { own: None, ..*self }
    }

    /// Velocities of A's and of B's material at world point `point`, each on its own, m/s, when
    /// the bound counts them.
    fn own_velocities_at(&self, point: DVec3) -> Option<[DVec3; 2]> {
        let [va, vb] = self.own?;
        let [wa, wb] = self.spins;
        Some([va + wa.cross(point - self.anchor), vb + wb.cross(point - self.centre_b)])
    }

    /// How fast the gap at `point` along unit `normal` (from B towards A) closes, m/s: with both
    /// bodies moving as they do, or (when the bound counts them) with B held still or with A held
    /// still, whichever is most.
    fn closing_speed(&self, point: DVec3, normal: DVec3) -> f64 {
        let together = -self.velocity_at(point).dot(normal);
        match self.own_velocities_at(point) {
            Some([a, b]) => together.max(-a.dot(normal)).max(b.dot(normal)),
            None => together,
        }
    }

    /// Largest gap a contact at `point` with unit `normal` (from B towards A) may have, m: the
    /// margin plus how far the step closes it along the normal, to second order in `dt`, either
    /// body perhaps held still by something else (module docs).
    pub fn reach_along(&self, point: DVec3, normal: DVec3) -> f64 {
        // The gap along the normal to second order in the step: the closing velocity's part
        // and the bend of the two turning paths (which the collision pass, testing the turned end
        // poses, sees). Pieces of one spinning body bend apart, not together.
        let h = self.dt;
        let velocity = self.closing_speed(point, normal) * h;
        let bend = -0.5 * self.bend_acceleration(point).dot(normal) * h * h;
        self.margin + (velocity + bend).max(0.0)
    }

    /// Largest gap any contact within `radius` m of world point `point` may have, whatever its
    /// normal, m.
    pub fn reach_near(&self, point: DVec3, radius: f64) -> f64 {
        self.near_reach().reach_near(point, radius)
    }

    /// [`Closing::reach_near`] for many points of this motion, its per-pair terms taken once.
    pub fn near_reach(&self) -> NearReach {
        NearReach {
            closing: *self,
            turning: self.angular.length(),
            turning_own: self.spins.map(DVec3::length),
            spins: self.spins.map(|w| w.length_squared()),
        }
    }

    /// Largest gap any contact of the pair may have, m, when one of the bodies lies within
    /// `reach` m of world point `centre`: a contact `g` apart lies within `g / 2` of each body's
    /// surface, so within `reach + g / 2` of `centre` (one step of that fixed point is taken;
    /// the margin covers the rest).
    pub fn pair_margin(&self, centre: DVec3, reach: f64) -> f64 {
        let near = self.near_reach();
        let first = near.reach_near(centre, reach);
        near.reach_near(centre, reach + 0.5 * first)
    }

    /// Whether `contact` (normal from B to A, depth negative for a gap) can close within the step.
    pub fn keeps(&self, contact: &Contact) -> bool {
        self.keeps_gap(-contact.depth, contact.point, contact.normal)
    }

    /// Whether a gap of `gap` m at world point `point` along unit `normal` (from B to A) can
    /// close within the step ([`Closing::keeps`] before the contact is made).
    pub fn keeps_gap(&self, gap: f64, point: DVec3, normal: DVec3) -> bool {
        gap <= self.margin || gap <= self.reach_along(point, normal)
    }
}

/// [`Closing::reach_near`] with the motion's own terms taken once: a pair's narrow phase asks it
/// for every cluster of particles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NearReach {
    closing: Closing,
    /// `|w_rel|`, rad/s.
    turning: f64,
    /// `|w_A|` and `|w_B|`, rad/s.
    turning_own: [f64; 2],
    /// `|w_A|^2` and `|w_B|^2`, rad^2/s^2.
    spins: [f64; 2],
}

impl NearReach {
    /// Largest gap any contact within `radius` m of world point `point` may have, whatever its
    /// normal, m: the margin, the step's motion of the points (`|v_rel(q)| + |w_rel| r` per
    /// second, or either body's own `|v(q)| + |w| r` should the other be held still), and how
    /// far the turning of the two bodies can bend their paths off their tangents in any direction
    /// (a point `r` from a centre turning at `w` strays at most `w^2 r h^2 / 2` in a step `h`).
    #[inline]
    pub fn reach_near(&self, point: DVec3, radius: f64) -> f64 {
        let Closing {
            margin,
            dt,
            anchor,
            centre_b,
            ..
        } = self.closing;
        let mut speed = self.closing.velocity_at(point).length() + self.turning * radius;
        if let Some([a, b]) = self.closing.own_velocities_at(point) {
            let [turning_a, turning_b] = self.turning_own;
            speed = speed
                .max(a.length() + turning_a * radius)
                .max(b.length() + turning_b * radius);
        }
        let [spin_a, spin_b] = self.spins;
        let arms = spin_a * ((point - anchor).length() + radius) + spin_b * ((point - centre_b).length() + radius);
        margin + speed * dt + 0.5 * arms * dt * dt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrow_phase::FeatureId;

    fn contact(point: DVec3, normal: DVec3, gap: f64) -> Contact {
        Contact {
            point,
            normal,
            depth: -gap,
            feature: FeatureId::of_a(0),
        }
    }

    /// Two boxes' rigid fields: the relative velocity at a point is A's material velocity minus
    /// B's, each `v + w x (p - x)`, wherever the anchor is.
    #[test]
    fn closing_velocity_is_the_difference_of_the_two_rigid_fields() {
        let a = [
            DVec3::new(1.0, 2.0, 0.5),
            DVec3::new(0.3, -1.0, 2.0),
            DVec3::new(4.0, -2.0, 1.0),
        ];
        let b = [
            DVec3::new(-1.0, 0.0, 2.0),
            DVec3::new(-0.7, 0.2, 0.1),
            DVec3::new(-3.0, 0.5, 6.0),
        ];
        let closing = Closing::of_bodies(0.01, 0.1, a, b);
        for p in [DVec3::ZERO, DVec3::new(0.4, 1.1, -0.3), DVec3::new(-2.0, 5.0, 1.0)] {
            let field = |[x, v, w]: [DVec3; 3]| v + w.cross(p - x);
            let expected = field(a) - field(b);
            assert!((closing.velocity_at(p) - expected).length() < 1e-12 * expected.length().max(1.0));
        }
    }

    #[test]
    fn closing_keeps_gaps_the_step_can_close_and_drops_the_rest() {
        // A moves down at 3 m/s onto B (normal +y from B to A); 0.1 s closes 0.3 m.
        let falling = Closing::of_bodies(
            0.02,
            0.1,
            [DVec3::Y, DVec3::new(0.0, -3.0, 0.0), DVec3::ZERO],
            [DVec3::ZERO, DVec3::ZERO, DVec3::ZERO],
        );
        assert!(falling.keeps(&contact(DVec3::ZERO, DVec3::Y, 0.31)));
        assert!(!falling.keeps(&contact(DVec3::ZERO, DVec3::Y, 0.33)));
        // Separating along the normal: only the margin.
        assert!(falling.keeps(&contact(DVec3::ZERO, -DVec3::Y, 0.019)));
        assert!(!falling.keeps(&contact(DVec3::ZERO, -DVec3::Y, 0.021)));
        // Sliding past: no approach along a sideways normal.
        assert!(!falling.keeps(&contact(DVec3::ZERO, DVec3::X, 0.05)));
        // A point swinging round at 10 rad/s, 0.5 m from its centre, moves along the contact
        // plane; its path bends by w^2 r h^2 / 2 = 0.25 m within the step towards the centre:
        // towards B when the centre lies on B's side, away from it otherwise.
        let swinging = |centre: f64| {
            Closing::of_bodies(
                0.0,
                0.1,
                [DVec3::new(centre, 0.0, 0.0), DVec3::ZERO, DVec3::new(0.0, 0.0, 10.0)],
                [DVec3::new(-1.0, 0.0, 0.0), DVec3::ZERO, DVec3::ZERO],
            )
        };
        assert!(swinging(-0.5).keeps(&contact(DVec3::ZERO, DVec3::X, 0.24)));
        assert!(!swinging(-0.5).keeps(&contact(DVec3::ZERO, DVec3::X, 0.26)));
        assert!(!swinging(0.5).keeps(&contact(DVec3::ZERO, DVec3::X, 0.01)));
        // Penetrating contacts always stay.
        assert!(Closing::at_rest(0.0).keeps(&contact(DVec3::ZERO, DVec3::X, -0.01)));
    }

    /// Either body may be stopped within the step by something else: a ball falling 10 cm behind
    /// another at the same 5 m/s closes 17 cm on it in a 30 Hz step should the lower one land, so
    /// that gap is kept (a bound on the relative motion alone, zero here, dropped it); one beyond
    /// the reach is not. Neither body moving towards the other along the normal (side by side,
    /// or flying apart) keeps only the margin.
    #[test]
    fn closing_keeps_the_gap_a_body_closes_on_one_that_stops() {
        let h = 1.0 / 30.0;
        let fall = DVec3::new(0.0, -5.0, 0.0);
        let column = Closing::of_bodies(
            0.02,
            h,
            [DVec3::new(0.0, 0.6, 0.0), fall, DVec3::ZERO],
            [DVec3::ZERO, fall, DVec3::ZERO],
        );
        let point = DVec3::new(0.0, 0.3, 0.0);
        assert!((column.reach_along(point, DVec3::Y) - (0.02 + 5.0 * h)).abs() < 1e-12);
        assert!(column.keeps(&contact(point, DVec3::Y, 0.1)));
        assert!(!column.keeps(&contact(point, DVec3::Y, 0.02 + 5.0 * h + 1e-3)));
        // The same with the roles swapped: B rising into a still A closes as fast.
        let rising = Closing::of_bodies(
            0.02,
            h,
            [DVec3::new(0.0, 0.6, 0.0), -fall, DVec3::ZERO],
            [DVec3::ZERO, -fall, DVec3::ZERO],
        );
        assert!(rising.keeps(&contact(point, DVec3::Y, 0.1)));
        // Side by side, falling together: nothing closes along a sideways normal.
        assert!(!column.keeps(&contact(point, DVec3::X, 0.05)));
        // Flying apart, each at 5 m/s: only the margin.
        let apart = Closing::of_bodies(
            0.02,
            h,
            [DVec3::new(0.0, 0.6, 0.0), -fall, DVec3::ZERO],
            [DVec3::ZERO, fall, DVec3::ZERO],
        );
        assert!(apart.keeps(&contact(point, DVec3::Y, 0.019)));
        assert!(!apart.keeps(&contact(point, DVec3::Y, 0.021)));
        // A spinning B, its material at the point rising at w r = 5 m/s, under an A rising with
        // it: no relative motion there, but A may be stopped.
        let spinning = Closing::of_bodies(
            0.0,
            h,
            [DVec3::new(0.0, 0.6, 0.0), -fall, DVec3::ZERO],
            [DVec3::new(-1.0, 0.3, 0.0), DVec3::ZERO, DVec3::new(0.0, 0.0, 5.0)],
        );
        assert!(spinning.keeps(&contact(point, DVec3::Y, 0.16)));
        assert!(!spinning.keeps(&contact(point, DVec3::Y, 0.17)));
        // Bounded by the relative motion alone, the column keeps the margin only.
        let relative = column.relative_only();
        assert!(relative.keeps(&contact(point, DVec3::Y, 0.019)));
        assert!(!relative.keeps(&contact(point, DVec3::Y, 0.021)));
        assert_eq!(relative.reach_near(point, 0.1), relative.margin);
    }

    /// Two cubes falling together 10 cm apart, one above the other: as exact shapes their margin
    /// reaches past the gap (the lower one may land within the step), and the contact is made;
    /// as level sets it is the relative motion's, the margin alone, and no contact is made.
    #[test]
    fn closing_the_stopped_partner_bound_is_for_exact_shapes_only() {
        use crate::TriMesh;
        use crate::narrow_phase::{Collider, ContactManifold, collide_closing_into, pair_margin};
        use crate::pose::Pose;
        use crate::shapes::{Cuboid, Shape};
        let half = DVec3::splat(0.5);
        let exact = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(half).unwrap()), 0.1).unwrap();
        let level_set = Collider::from_mesh(&TriMesh::cuboid(half), 20, 0.1).unwrap();
        let (upper, lower) = (Pose::from_position(DVec3::new(0.0, 1.1, 0.0)), Pose::IDENTITY);
        let fall = DVec3::new(0.0, -5.0, 0.0);
        let closing = Closing::of_bodies(
            0.02,
            1.0 / 30.0,
            [upper.position, fall, DVec3::ZERO],
            [lower.position, fall, DVec3::ZERO],
        );
        let mut manifold = ContactManifold::default();
        assert!(pair_margin(&closing, &exact, &upper, &exact, &lower) > 0.1);
        collide_closing_into(&exact, &upper, &exact, &lower, &closing, &mut manifold).unwrap();
        assert!(!manifold.is_empty());
        assert_eq!(pair_margin(&closing, &level_set, &upper, &level_set, &lower), 0.02);
        collide_closing_into(&level_set, &upper, &level_set, &lower, &closing, &mut manifold).unwrap();
        assert!(manifold.is_empty());
    }

    #[test]
    fn closing_refuses_a_non_finite_motion_by_name() {
        use crate::narrow_phase::{Collider, ContactManifold, collide_closing_into};
        use crate::pose::Pose;
        use crate::shapes::{Shape, Sphere};
        let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.5).unwrap()), 0.2).unwrap();
        let (pa, pb) = (Pose::IDENTITY, Pose::from_position(DVec3::X));
        let mut bad = Closing::at_rest(0.01);
        bad.linear = DVec3::new(f64::NAN, 0.0, 0.0);
        let mut manifold = ContactManifold::default();
        let error = collide_closing_into(&ball, &pa, &ball, &pb, &bad, &mut manifold).unwrap_err();
        assert!(error.to_string().contains("relative motion"), "{error}");
        bad = Closing {
            dt: -1.0,
            ..Closing::at_rest(0.01)
        };
        assert!(collide_closing_into(&ball, &pa, &ball, &pb, &bad, &mut manifold).is_err());
        assert!(manifold.is_empty());
    }

    /// A caller's margin gives what the test works out itself, and a margin that cannot be the
    /// pair's (not finite, or below the world's) is refused by name with the manifold left empty.
    #[test]
    fn closing_a_given_pair_margin_finds_what_the_test_finds_and_a_bad_one_is_refused() {
        use crate::narrow_phase::{
            Collider, ContactManifold, collide_closing_into, collide_within_margin_into, pair_margin,
        };
        use crate::pose::Pose;
        use crate::shapes::{Cuboid, Shape};
        let cube = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(0.5)).unwrap()), 0.1).unwrap();
        let (pa, pb) = (Pose::IDENTITY, Pose::from_position(DVec3::new(0.2, 0.99, 0.1)));
        let closing = Closing::of_bodies(
            0.01,
            1.0 / 30.0,
            [pa.position, DVec3::Y, DVec3::Z],
            [pb.position, -DVec3::Y, DVec3::X],
        );
        let margin = pair_margin(&closing, &cube, &pa, &cube, &pb);
        let (mut own, mut given) = (ContactManifold::default(), ContactManifold::default());
        collide_closing_into(&cube, &pa, &cube, &pb, &closing, &mut own).unwrap();
        collide_within_margin_into(&cube, &pa, &cube, &pb, &closing, margin, &mut given).unwrap();
        assert!(!own.is_empty());
        assert_eq!(format!("{own:?}"), format!("{given:?}"));
        for bad in [f64::NAN, 0.005] {
            let error = collide_within_margin_into(&cube, &pa, &cube, &pb, &closing, bad, &mut given).unwrap_err();
            assert!(error.to_string().contains("pair margin"), "{error}");
            assert!(given.is_empty());
        }
    }

    /// The normal-free bounds are at least every normal's reach for points they cover.
    #[test]
    fn closing_bounds_without_a_normal_cover_every_normal() {
        let closing = Closing::of_bodies(
            0.02,
            1.0 / 30.0,
            [
                DVec3::new(0.1, 0.2, 0.0),
                DVec3::new(1.0, -2.0, 0.5),
                DVec3::new(0.0, 7.0, 3.0),
            ],
            [
                DVec3::new(0.3, 0.0, 0.1),
                DVec3::new(-0.5, 0.0, 0.0),
                DVec3::new(2.0, 0.0, -1.0),
            ],
        );
        let (centre, radius) = (DVec3::new(0.2, 0.25, 0.05), 0.08);
        let near = closing.reach_near(centre, radius);
        let pair = closing.pair_margin(closing.anchor, 0.3);
        for k in 0..500 {
            let t = k as f64 * 0.37;
            let unit = DVec3::new(t.sin() * (1.3 * t).cos(), (1.3 * t).sin(), t.cos() * (1.3 * t).cos()).normalize();
            let offset = unit * radius * ((k % 7) as f64 / 6.0);
            let normal = DVec3::new((2.1 * t).cos(), (0.7 * t).sin(), (1.7 * t).sin()).normalize();
            assert!(closing.reach_along(centre + offset, normal) <= near + 1e-12);
            let on_a = closing.anchor + unit * 0.3 * ((k % 5) as f64 / 4.0);
            assert!(closing.reach_along(on_a, normal) <= pair + 1e-12);
        }
    }
}
