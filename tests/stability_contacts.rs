//! Frame-rate stability, single contacts: a box on an incline (Su 2009 figure 3) and a bouncing
//! ball with restitution.

use glam::DVec3;
use shatter::scenes::{FRAME_30HZ, bouncing_ball, incline, tipped_bar};

/// Standard gravity of the default settings, m/s^2.
const G: f64 = 9.81;

/// The box's position along the slope after `steps` frames at 30 Hz (m, from where it started),
/// with its speed along the slope (m/s).
fn slide(angle: f64, mu: f64, steps: usize) -> (f64, f64) {
    let mut scene = incline(angle, mu);
    let start = scene.world.pose(scene.block).unwrap().position;
    for _ in 0..steps {
        scene.world.step(FRAME_30HZ).unwrap();
    }
    let end = scene.world.pose(scene.block).unwrap().position;
    let v = scene.world.linear_velocity(scene.block).unwrap();
    ((end - start).dot(scene.down_slope), v.dot(scene.down_slope))
}

#[test]
fn stability_incline_box_slides_at_the_coulomb_rate_with_mu_0_3() {
    let angle = 30f64.to_radians();
    let mu = 0.3;
    let steps = 60;
    let t = steps as f64 * FRAME_30HZ;
    let a = G * (angle.sin() - mu * angle.cos());
    let (distance, speed) = slide(angle, mu, steps);
    // Acceleration from the speed, and from the distance (symplectic Euler at constant a travels
    // a h^2 n (n + 1) / 2 in n steps).
    let from_speed = speed / t;
    let from_distance = 2.0 * distance / (FRAME_30HZ * FRAME_30HZ * (steps * (steps + 1)) as f64);
    println!("mu 0.3: {from_speed:.4} m/s^2 from the speed, {from_distance:.4} from the distance, expected {a:.4}");
    for measured in [from_speed, from_distance] {
        assert!(
            (measured - a).abs() < 0.05 * a,
            "slid at {measured} m/s^2, expected g (sin a - mu cos a) = {a}"
        );
    }
}

#[test]
fn stability_incline_box_stays_put_with_mu_0_7() {
    // tan 30 degrees = 0.577 < 0.7: static friction holds the box. Two seconds of frames may move
    // it by at most a millimetre (a box that slid at even 1 percent of the frictionless rate would
    // travel 10 cm).
    let (distance, speed) = slide(30f64.to_radians(), 0.7, 60);
    println!("mu 0.7: crept {distance:.2e} m in 2 s, moving at {speed:.2e} m/s");
    assert!(distance.abs() < 1e-3, "crept {distance} m down the slope");
    assert!(speed.abs() < 1e-3, "moving at {speed} m/s");
}

#[test]
fn stability_bounce_ball_with_restitution_half_rebounds_to_a_quarter_of_its_drop() {
    // Dropped from h = 1 m with e = 0.5 it leaves the ground at e sqrt(2 g h) and climbs to
    // e^2 h = 0.25 m.
    let dt = 1.0 / 240.0;
    let (mut world, ball) = bouncing_ball(1.0, 0.5);
    let radius = 0.1;
    let mut bounced = false;
    let mut peak = 0.0_f64;
    for _ in 0..(1.5 / dt) as usize {
        let report = world.step(dt).unwrap();
        bounced |= report.collision_impulses > 0;
        if bounced {
            peak = peak.max(world.pose(ball).unwrap().position.y - radius);
        }
    }
    assert!(bounced, "the ball never hit the ground");
    println!("rebounded to {peak:.4} m (0.25 m expected)");
    assert!(
        (peak - 0.25).abs() < 0.03 * 0.25,
        "rebounded to {peak} m, expected 0.25 m"
    );
}

/// Bars of concrete 2 cm thick, 2, 4 and 10 cm wide and 20 cm long, landing on an edge at one
/// step per frame, tip onto a face and rest there: centre of mass half the bar's extent across that face up,
/// and asleep within two seconds, also when dropped nearly balanced on an edge. (The contact reduction once
/// kept a bar's speculative far corners over the penetrating end of the edge it stood on: the bar
/// stayed on that edge, half sunk into the ground, for good.)
#[test]
fn stability_thin_bars_landing_on_an_edge_rest_on_a_face() {
    for (half_width, tilt) in [(0.01, 0.1), (0.01, 0.7), (0.02, 0.1), (0.02, 1.2), (0.05, 0.1)] {
        let (mut world, bar) = tipped_bar(DVec3::new(half_width, 0.01, 0.1), tilt);
        for _ in 0..60 {
            world.step(FRAME_30HZ).unwrap();
        }
        let pose = world.pose(bar).unwrap();
        let case = format!("bar {half_width} m half wide tipped {tilt} rad");
        // Lying on a face: one of its axes across the length stands upright, and its centre is
        // that axis's half extent up.
        let (upright, half) = [(DVec3::X, half_width), (DVec3::Y, 0.01)]
            .map(|(axis, half)| ((pose.orientation * axis).y.abs(), half))
            .into_iter()
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap();
        assert!(upright > 0.999, "{case}: turned {} rad from a face", upright.acos());
        assert!(
            (pose.position.y - half).abs() < 5e-4,
            "{case}: centre {} m up",
            pose.position.y
        );
        assert!(!world.is_awake(bar).unwrap(), "{case}: still awake after 2 s");
    }
}
