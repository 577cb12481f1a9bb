//! Body store: generational handles, dense arrays under inserts and removes.

mod common;

use common::{ball, weightless};
use glam::DVec3;
use shatter_engine::{BodyDesc, BodyId, EngineError, World};
use shatter_integrators::SplitMix64;

#[test]
fn store_stale_handle_is_refused_by_name_never_a_wrong_body() {
    let mut world = weightless();
    let a = world.add_body(BodyDesc::dynamic(ball(0.5)).with_user_data(1)).unwrap();
    let b = world.add_body(BodyDesc::dynamic(ball(0.5)).with_user_data(2)).unwrap();
    world.remove_body(a).unwrap();
    // The freed slot is reused by the next body, with a new generation.
    let c = world.add_body(BodyDesc::dynamic(ball(0.5)).with_user_data(3)).unwrap();
    assert_eq!(c.index, a.index);
    assert_ne!(c.generation, a.generation);
    for result in [
        world.user_data(a).map(|_| ()),
        world.pose(a).map(|_| ()),
        world.set_velocity(a, DVec3::X, DVec3::ZERO),
        world.apply_impulse(a, DVec3::X, DVec3::ZERO),
        world.remove_body(a).map(|_| ()),
    ] {
        let err = result.unwrap_err();
        assert_eq!(err, EngineError::StaleBody { id: a });
        assert!(err.to_string().contains(&a.to_string()), "{err}");
    }
    assert_eq!(world.user_data(b).unwrap(), 2);
    assert_eq!(world.user_data(c).unwrap(), 3);
    // A made-up handle is refused too.
    assert!(world.body(BodyId::new(99, 0)).is_err());
    // The failed calls changed nothing about c.
    assert_eq!(world.linear_velocity(c).unwrap(), DVec3::ZERO);
}

#[test]
fn store_random_inserts_and_removes_keep_handles_and_data_together() {
    let mut world = weightless();
    let mut rng = SplitMix64::new(3);
    let mut live: Vec<(BodyId, u64)> = Vec::new();
    let mut dead: Vec<BodyId> = Vec::new();
    for step in 0..600u64 {
        if live.is_empty() || rng.next_u64() % 3 != 0 {
            let id = world
                .add_body(BodyDesc::dynamic(ball(0.1)).with_user_data(step))
                .unwrap();
            live.push((id, step));
        } else {
            let k = (rng.next_u64() % live.len() as u64) as usize;
            let (id, _) = live.swap_remove(k);
            world.remove_body(id).unwrap();
            dead.push(id);
        }
        world.bodies().check_consistency().unwrap();
    }
    assert_eq!(world.bodies().len(), live.len());
    for (id, data) in &live {
        assert_eq!(world.user_data(*id).unwrap(), *data);
    }
    for id in &dead {
        assert_eq!(world.user_data(*id), Err(EngineError::StaleBody { id: *id }));
    }
}

#[test]
fn store_dense_order_depends_only_on_the_operations() {
    let build = || {
        let mut world = World::new();
        let ids: Vec<BodyId> = (0..10)
            .map(|i| {
                world
                    .add_body(BodyDesc::dynamic(ball(0.1)).with_position(DVec3::X * i as f64))
                    .unwrap()
            })
            .collect();
        world.remove_body(ids[3]).unwrap();
        world.remove_body(ids[0]).unwrap();
        world.add_body(BodyDesc::dynamic(ball(0.2))).unwrap();
        world
    };
    let (a, b) = (build(), build());
    assert!(a.bodies().ids().eq(b.bodies().ids()));
    assert_eq!(a.state_hash(), b.state_hash());
}
