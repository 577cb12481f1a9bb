//! The fracture interface: what a hook sees (contacts with impulses, joints, bodies), what it may
//! do (impulses, joint breaks, queued spawns and despawns) and when that takes effect.

mod common;

use std::sync::{Arc, Mutex};

use common::{FRAME, G, ball, cuboid, ground, weightless};
use glam::DVec3;
use shatter_engine::{
    BodyDesc, EngineError, FractureContext, FractureModel, JointDesc, JointKind, Spawned, World, WorldSettings,
};

/// A model that runs a closure each step and records what `spawned` told it.
struct Probe<F> {
    name: &'static str,
    hook: F,
    spawned: Arc<Mutex<Vec<Spawned>>>,
}

impl<F> FractureModel for Probe<F>
where
    F: FnMut(&mut FractureContext<'_>) -> Result<(), String> + Send + 'static,
{
    fn name(&self) -> &str {
        self.name
    }

    fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String> {
        (self.hook)(context)
    }

    fn spawned(&mut self, spawned: &[Spawned]) {
        self.spawned.lock().unwrap().extend_from_slice(spawned);
    }
}

fn probe<F>(name: &'static str, hook: F) -> (Box<dyn FractureModel>, Arc<Mutex<Vec<Spawned>>>)
where
    F: FnMut(&mut FractureContext<'_>) -> Result<(), String> + Send + 'static,
{
    let spawned = Arc::new(Mutex::new(Vec::new()));
    let model = Probe {
        name,
        hook,
        spawned: spawned.clone(),
    };
    (Box::new(model), spawned)
}

#[test]
fn fracture_hook_sees_the_contact_impulses_of_a_resting_box() {
    // Kept awake, so the contacts are there to see at every step.
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    let mut world = World::try_with_settings(settings).unwrap();
    world.add_body(ground()).unwrap();
    let he = DVec3::new(0.3, 0.2, 0.25);
    let boxed = world
        .add_body(BodyDesc::dynamic(cuboid(he)).with_position(DVec3::Y * he.y))
        .unwrap();
    let mass = world.body(boxed).unwrap().mass.mass();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let (model, _) = probe("recorder", move |context| {
        let total: DVec3 = context.contacts_of(boxed).map(|pair| pair.total_impulse()).sum();
        let points = context
            .contacts_of(boxed)
            .map(|pair| pair.contacts.len())
            .sum::<usize>();
        // The box is body B of its pair with the ground (added first, lower handle): the impulse on
        // it is the negation of the impulse on A.
        log.lock().unwrap().push((-total, points, context.dt()));
        Ok(())
    });
    world.add_fracture_model(model);
    for _ in 0..30 {
        world.step(FRAME).unwrap();
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 30);
    let (impulse, points, dt) = *seen.last().unwrap();
    assert_eq!(points, 4, "a box resting flat touches at four corners");
    assert_eq!(dt, FRAME);
    // The ground carries the box's weight: m g dt per step, upwards.
    let weight = mass * G * FRAME;
    assert!(
        (impulse.y - weight).abs() < 0.02 * weight,
        "{impulse} against m g dt = {weight}"
    );
    assert!(impulse.x.abs() + impulse.z.abs() < 1e-3 * weight);
}

#[test]
fn fracture_hook_spawns_exist_after_the_step_and_not_during_any_hook() {
    let mut world = weightless();
    world.add_body(BodyDesc::dynamic(ball(0.5))).unwrap();
    let counts = Arc::new(Mutex::new(Vec::new()));
    let log = counts.clone();
    let mut calls = 0;
    let (first, spawned) = probe("spawner", move |context| {
        calls += 1;
        log.lock().unwrap().push(context.bodies().len());
        if calls == 2 {
            let desc = BodyDesc::dynamic(ball(0.1))
                .with_position(DVec3::X * 3.0)
                .with_user_data(77);
            context.spawn(desc);
            // Queued, not applied: the store is as it was.
            assert_eq!(context.bodies().len(), 1);
        }
        Ok(())
    });
    let later = counts.clone();
    let (second, _) = probe("watcher", move |context| {
        later.lock().unwrap().push(context.bodies().len());
        Ok(())
    });
    world.add_fracture_model(first);
    world.add_fracture_model(second);
    world.step(FRAME).unwrap();
    let report = world.step(FRAME).unwrap();
    // Both hooks of step 2 saw one body, though the first had queued a spawn.
    assert_eq!(*counts.lock().unwrap(), [1, 1, 1, 1]);
    assert_eq!(report.spawned.len(), 1);
    let spawned = spawned.lock().unwrap().clone();
    assert_eq!(spawned, report.spawned);
    let id = spawned[0].id;
    assert_eq!(world.user_data(id).unwrap(), 77);
    assert_eq!(world.bodies().len(), 2);
    // Spawned before integration: it moved with the step (here: not at all, at rest), and the
    // next step's hooks see it.
    world.step(FRAME).unwrap();
    assert_eq!(counts.lock().unwrap()[4..], [2, 2]);
}

#[test]
fn fracture_hook_failure_discards_what_it_asked_for() {
    let mut world = weightless();
    let target = world.add_body(BodyDesc::dynamic(ball(0.5))).unwrap();
    let (failing, _) = probe("failing", move |context| {
        context.apply_impulse(target, DVec3::X, DVec3::ZERO).unwrap();
        context.despawn(target).unwrap();
        context.spawn(BodyDesc::dynamic(ball(0.1)));
        Err("gave up".to_string())
    });
    world.add_fracture_model(failing);
    let report = world.step(FRAME).unwrap();
    assert_eq!(report.fracture_failures.len(), 1);
    assert_eq!(report.fracture_failures[0].model, "failing");
    assert_eq!(report.fracture_failures[0].message, "gave up");
    assert!(world.contains(target));
    assert_eq!(world.bodies().len(), 1);
    assert_eq!(world.linear_velocity(target).unwrap(), DVec3::ZERO);
}

#[test]
fn fracture_hook_impulses_apply_when_the_hook_returns_and_count_as_injected_energy() {
    let mut world = weightless();
    let target = world.add_body(BodyDesc::dynamic(ball(0.5)).with_mass(2.0)).unwrap();
    let stale = world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::Y * 5.0))
        .unwrap();
    world.remove_body(stale).unwrap();
    let j = DVec3::new(4.0, 0.0, 0.0);
    let mut fired = false;
    let (pusher, _) = probe("pusher", move |context| {
        if !fired {
            fired = true;
            assert_eq!(
                context.apply_impulse(stale, j, DVec3::ZERO),
                Err(EngineError::StaleBody { id: stale })
            );
            assert!(context.apply_impulse(target, DVec3::NAN, DVec3::ZERO).is_err());
            context
                .apply_impulse(target, j, context.body(target).unwrap().state.position)
                .unwrap();
            // Not yet applied while the hook runs.
            assert_eq!(context.body(target).unwrap().state.linear_velocity, DVec3::ZERO);
        }
        Ok(())
    });
    let seen = Arc::new(Mutex::new(DVec3::ZERO));
    let log = seen.clone();
    let (watcher, _) = probe("watcher", move |context| {
        *log.lock().unwrap() = context.body(target).unwrap().state.linear_velocity;
        Ok(())
    });
    world.add_fracture_model(pusher);
    world.add_fracture_model(watcher);
    let report = world.step(FRAME).unwrap();
    // The next model saw it, and it moved within the same step.
    assert_eq!(*seen.lock().unwrap(), j / 2.0);
    assert!((world.pose(target).unwrap().position - j / 2.0 * FRAME).length() < 1e-15);
    let injected = 0.5 * j.length_squared() / 2.0;
    assert!((report.energy_injected_by_fracture - injected).abs() < 1e-12);
}

#[test]
fn fracture_hook_breaks_joints_and_despawns_bodies() {
    let mut world = weightless();
    let a = world.add_body(BodyDesc::dynamic(ball(0.5))).unwrap();
    let b = world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::X * 2.0))
        .unwrap();
    let c = world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::X * 4.0))
        .unwrap();
    let ab = world
        .add_joint(JointDesc::new(JointKind::Ball, a, Some(b), DVec3::X))
        .unwrap();
    let bc = world
        .add_joint(JointDesc::new(JointKind::Fixed, b, Some(c), DVec3::X * 3.0))
        .unwrap();
    let mut done = false;
    let (breaker, _) = probe("breaker", move |context| {
        if !done {
            done = true;
            assert_eq!(context.joints().len(), 2);
            let joint = context.joints().iter().find(|j| j.id == ab).unwrap();
            assert!((joint.anchor_a - DVec3::X).length() < 1e-12 && (joint.anchor_b - DVec3::X).length() < 1e-12);
            context.break_joint(ab).unwrap();
            context.break_joint(ab).unwrap();
            context.despawn(c).unwrap();
        }
        Ok(())
    });
    world.add_fracture_model(breaker);
    let report = world.step(FRAME).unwrap();
    // One break asked twice, plus the joint that went with the despawned body.
    assert_eq!(report.broken_joints, 2);
    assert_eq!(report.fractures, 1);
    assert!(world.joint(ab).is_err() && world.joint(bc).is_err());
    assert!(!world.contains(c));
}

#[test]
fn fracture_hook_sees_the_impulse_of_a_joint_holding_a_weight() {
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    let mut world = World::try_with_settings(settings).unwrap();
    let weight = world
        .add_body(BodyDesc::dynamic(ball(0.2)).with_position(DVec3::Y))
        .unwrap();
    let joint = world
        .add_joint(JointDesc::new(JointKind::Ball, weight, None, DVec3::Y * 1.5))
        .unwrap();
    let mass = world.body(weight).unwrap().mass.mass();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let (model, _) = probe("joint recorder", move |context| {
        let solved = context.joints().iter().find(|j| j.id == joint).unwrap();
        log.lock().unwrap().push((solved.impulse_on_a().0, solved.rows.len()));
        Ok(())
    });
    world.add_fracture_model(model);
    for _ in 0..30 {
        world.step(FRAME).unwrap();
    }
    let (impulse, rows) = *seen.lock().unwrap().last().unwrap();
    assert_eq!(rows, 3);
    let expected = mass * G * FRAME;
    assert!(
        (impulse - DVec3::Y * expected).length() < 0.02 * expected,
        "{impulse} against {expected}"
    );
    assert!((world.pose(weight).unwrap().position - DVec3::Y).length() < 1e-3);
}

#[test]
fn fracture_hook_impulse_that_overflows_a_sleeping_body_quarantines_it_where_it_rested() {
    let mut world = World::default();
    world.add_body(ground()).unwrap();
    let he = DVec3::splat(0.5);
    let at = DVec3::new(5.0, he.y, -2.0);
    let sleeper = world.add_body(BodyDesc::dynamic(cuboid(he)).with_position(at)).unwrap();
    for _ in 0..60 {
        world.step(FRAME).unwrap();
    }
    assert!(!world.is_awake(sleeper).unwrap(), "the box should have fallen asleep");
    let rested = world.pose(sleeper).unwrap().position;
    // The hook wakes the sleeper with an impulse whose kinetic energy overflows: the integrate
    // stage catches it, and quarantine puts it back where it was woken.
    let (model, _) = probe("overflow", move |context| {
        context
            .apply_impulse(sleeper, DVec3::X * 1e300, rested)
            .map_err(|e| e.to_string())
    });
    world.add_fracture_model(model);
    let report = world.step(FRAME).unwrap();
    assert_eq!(report.quarantined.len(), 1, "{:?}", report.quarantined);
    assert_eq!(report.quarantined[0].id, sleeper);
    assert_eq!(world.pose(sleeper).unwrap().position, rested);
    assert_eq!(world.linear_velocity(sleeper).unwrap(), DVec3::ZERO);
}

/// A model that counts its calls.
struct Counter {
    calls: usize,
}

impl FractureModel for Counter {
    fn name(&self) -> &str {
        "counter"
    }

    fn fracture(&mut self, _context: &mut FractureContext<'_>) -> Result<(), String> {
        self.calls += 1;
        Ok(())
    }
}

#[test]
fn fracture_hook_models_are_found_again_by_type() {
    let mut world = World::new();
    let (other, _) = probe("other", |_| Ok(()));
    world.add_fracture_model(other);
    assert!(world.fracture_model::<Counter>().is_none());
    world.add_fracture_model(Box::new(Counter { calls: 0 }));
    world.step(FRAME).unwrap();
    world.step(FRAME).unwrap();
    assert_eq!(world.fracture_model::<Counter>().map(|c| c.calls), Some(2));
    world.fracture_model_mut::<Counter>().unwrap().calls = 10;
    world.step(FRAME).unwrap();
    assert_eq!(world.fracture_model::<Counter>().unwrap().calls, 11);
}
