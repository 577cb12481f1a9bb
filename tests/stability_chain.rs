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
    println!("hanging chain: worst joint gap {worst:.2e} m, fastest link {fastest:.2e} m/s");
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

/// Steps a kicked chain for `steps` steps and returns the worst joint gap (m), the total energy
/// after the first step (J), the highest total energy after it (J), and the total energy at the
/// end (J).
fn kicked_chain(links: usize, kick: f64, steps: usize) -> (f64, f64, f64, f64) {
    let mut chain = hanging_chain(links);
    let bottom = *chain.links.last().unwrap();
    chain.world.set_velocity(bottom, DVec3::X * kick, DVec3::ZERO).unwrap();
    let energy = |world: &World| world.kinetic_energy() + world.potential_energy();
    let (mut worst, mut first, mut highest): (f64, f64, f64) = (0.0, 0.0, f64::NEG_INFINITY);
    for step in 0..steps {
        chain.world.step(FRAME_30HZ).unwrap();
        worst = worst.max(worst_joint_gap(&chain.world));
        if step == 0 {
            first = energy(&chain.world);
        }
        highest = highest.max(energy(&chain.world));
    }
    (worst, first, highest, energy(&chain.world))
}

#[test]
fn stability_chain_kicked_20_links_holds_its_joints_within_a_millimetre_and_gains_no_energy() {
    // The bottom link kicked sideways at 1 m/s swings up and turns at about 3 rad/s. Integrating
    // a turn along its tangent would open a joint with two 0.15 m arms by h^2 w^2 r per step,
    // 1.5 mm at 30 Hz; the joints' position pass takes that back within the step. A millimetre,
    // what the chain holds at rest, is less than one step's drift: the bound fails when the pass
    // does not work (measured without it: 3.3 mm, Baumgarte alone) as well as when the chain
    // wobbles apart (6 m before the links' tension inertia). Measured: 0.17 mm.
    let (worst, first, highest, last) = kicked_chain(20, 1.0, 300);
    assert!(worst < 1e-3, "a joint came {worst} m apart");
    // Nothing drives the chain after the kick: the first step takes what the joints absorb of
    // it, and from then on the total energy may only fall. 1 mJ is 0.2 percent of the 0.49 J
    // left after the first step.
    assert!(
        highest <= first + 1e-3,
        "the energy rose {} J above its value after the first step",
        highest - first
    );
    // Not by damping the swing away: the chain keeps most of the kick's energy (measured: it
    // loses 16 percent of the 0.49 J in the 10 s).
    let kick = 0.5 * 1.0 * 1.0 * chain_link_mass();
    assert!(
        first - last < 0.5 * kick,
        "the chain lost {} J of {kick} J",
        first - last
    );
}

#[test]
fn stability_chain_kicked_hard_40_links_holds_its_joints_within_5_mm() {
    // Kicked at 3 m/s the bottom link turns at about 9 rad/s: 13 mm of drift per step at the
    // bottom joint before the position pass (18 mm of gap measured without the pass). Measured
    // with it: 1.2 mm.
    let (worst, first, highest, _) = kicked_chain(40, 3.0, 300);
    assert!(worst < 5e-3, "a joint came {worst} m apart");
    assert!(highest <= first + 1e-2, "the energy rose {} J", highest - first);
}

#[test]
fn stability_chain_kicked_gently_40_links_does_not_start_to_wobble() {
    // A kick of 1 cm/s is a small perturbation of a stable equilibrium: it must stay small. The
    // links' zig-zag mode near the top of a 40-link chain is too stiff for a 30 Hz step without
    // the tension inertia, and a kick like this grew until the chain came apart by 13 m.
    // Measured with it: 2e-8 m.
    let (worst, first, highest, _) = kicked_chain(40, 0.01, 300);
    assert!(worst < 1e-5, "a joint came {worst} m apart");
    assert!(highest <= first + 1e-6, "the energy rose {} J", highest - first);
}

/// Mass of one chain link, kg.
fn chain_link_mass() -> f64 {
    let chain = hanging_chain(1);
    1.0 / chain.world.body(chain.links[0]).unwrap().mass.inverse_mass()
}
