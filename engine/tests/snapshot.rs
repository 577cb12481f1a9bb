//! Snapshots: byte round trips that continue bit for bit, and bytes that do not fit refused.

mod common;

use common::{FRAME, pile};
use shatter_engine::World;

fn positions(world: &World) -> Vec<glam::DVec3> {
    world.bodies().states().iter().map(|s| s.position).collect()
}

#[test]
fn snapshot_restore_continues_bit_for_bit() {
    let mut world = World::new();
    pile(&mut world, 6);
    for _ in 0..10 {
        world.step(FRAME).unwrap();
    }
    let bytes = world.snapshot();
    let hash_at_snapshot = world.state_hash();
    for _ in 0..15 {
        world.step(FRAME).unwrap();
    }
    let (hash, where_they_are) = (world.state_hash(), positions(&world));
    assert_ne!(hash, hash_at_snapshot, "the pile should have moved");
    world.restore(&bytes).unwrap();
    assert_eq!(world.state_hash(), hash_at_snapshot);
    assert_eq!(world.step_count(), 10);
    for _ in 0..15 {
        world.step(FRAME).unwrap();
    }
    assert_eq!(world.state_hash(), hash);
    assert_eq!(positions(&world), where_they_are);
}

#[test]
fn snapshot_bytes_that_do_not_fit_are_refused_and_change_nothing() {
    let mut world = World::new();
    pile(&mut world, 4);
    world.step(FRAME).unwrap();
    let bytes = world.snapshot();
    world.step(FRAME).unwrap();
    let hash = world.state_hash();
    let mut other = World::new();
    pile(&mut other, 3);
    let foreign = other.snapshot();
    let mut nan_state = bytes.clone();
    // The first body state's position x sits after the 40-byte header and the handles.
    let offset = 40 + 8 * world.bodies().len();
    nan_state[offset..offset + 8].copy_from_slice(&f64::NAN.to_ne_bytes());
    let mut wrong_magic = bytes.clone();
    wrong_magic[0] ^= 1;
    let cases: [(&[u8], &str); 6] = [
        (&[], "header"),
        (&bytes[..bytes.len() - 1], "do not fit"),
        (&wrong_magic, "not a version"),
        (&foreign, "holds 4 bodies"),
        (&nan_state, "state of body"),
        (&[bytes.as_slice(), &[0u8; 8]].concat(), "left over"),
    ];
    for (bad, needle) in cases {
        let err = world.restore(bad).unwrap_err().to_string();
        assert!(err.contains(needle), "expected {needle:?} in: {err}");
        assert_eq!(world.state_hash(), hash);
    }
}
