//! Frame-rate stability, joints: a hanging chain of ball-jointed capsules settles and then holds
//! its joints together at 30 Hz.

use glam::DVec3;
use shatter::engine::World;
use shatter::scenes::{FRAME_30HZ, hanging_chain};

/// The largest distance between the two anchors of any joint, m (world frame, current poses).
fn worst_joint_gap(world: &World) -> f64 {
    world
        .joints()
        .joints()
        .iter()
        .map(|joint| {
            let a = world.pose(joint.body_a).unwrap();
            let anchor_a = a.position + a.orientation * joint.local_anchor_a;
            let anchor_b = match joint.body_b {
                Some(b) => {
                    let b = world.pose(b).unwrap();
                    b.position + b.orientation * joint.local_anchor_b
                }
                None => joint.local_anchor_b,
            };
            (anchor_a - anchor_b).length()
        })
        .fold(0.0, f64::max)
}

#[test]
fn stability_chain_of_20_links_holds_its_joints_within_a_millimetre_at_rest() {
    let mut chain = hanging_chain(20);
    assert_eq!(chain.world.joints().len(), 20);
    // It starts hanging at rest; ten seconds, then three more in which it must hang still and
    // joined.
    for _ in 0..300 {
        chain.world.step(FRAME_30HZ).unwrap();
    }
    let mut worst: f64 = 0.0;
    let mut fastest: f64 = 0.0;
    for _ in 0..90 {
        chain.world.step(FRAME_30HZ).unwrap();
        worst = worst.max(worst_joint_gap(&chain.world));
        for &link in &chain.links {
            fastest = fastest.max(chain.world.linear_velocity(link).unwrap().length());
        }
    }
    assert!(worst < 1e-3, "a joint came {worst} m apart");
    // At rest: hanging straight down under the top joint, not swinging.
    assert!(fastest < 0.05, "a link still moves at {fastest} m/s");
    let top = chain.world.joints().joints()[0].local_anchor_b;
    let bottom = chain.world.pose(*chain.links.last().unwrap()).unwrap().position;
    let sideways = (bottom - top) * DVec3::new(1.0, 0.0, 1.0);
    assert!(
        sideways.length() < 0.05,
        "the bottom link hangs {sideways} m off the vertical"
    );
}
