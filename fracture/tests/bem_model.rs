//! Boundary-element fracture coupled to rigid contacts (`fracture::bem::model`, Zhu 2015
//! Algorithm 1): the screening bound keeps resting bodies free of stress solves, and a hard
//! landing runs one fracture event on the step's contacts as forces `I / t_d`.

use glam::DVec3;
use shatter_collision::{Collider, Cuboid, Pose, Shape};
use shatter_engine::{BodyDesc, BodyId, World};
use shatter_fracture::bem::crack::{EventSettings, Rankine};
use shatter_fracture::bem::meshes::{Grading, grid_box};
use shatter_fracture::bem::{BemFracture, BemFractureSettings, BemMaterial, Elastic, bem_body_desc};

/// A 0.5 x 0.1 x 0.3 m glass slab (37.5 kg) falling at `speed` (m/s) onto a fixed ground box,
/// breakable above `threshold` (N s); `steps` steps of 1/30 s.
fn dropped_slab(speed: f64, threshold: f64, steps: usize) -> (World, BodyId) {
    let mesh = grid_box(DVec3::new(0.25, 0.05, 0.15), 0.05, Grading::Uniform).unwrap();
    let mut world = World::new();
    let ground =
        Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::new(2.0, 0.25, 2.0)).unwrap()), 0.1).unwrap();
    world
        .add_body(BodyDesc::fixed(ground).with_position(DVec3::new(0.0, -0.25, 0.0)))
        .unwrap();
    let mesh_pose = Pose::new(DVec3::new(0.0, 0.06, 0.0), glam::DQuat::IDENTITY);
    let settings = BemFractureSettings::default();
    let desc = bem_body_desc(&mesh, 2500.0, &mesh_pose, settings.resolution).unwrap();
    let slab = world
        .add_body(desc.with_velocity(DVec3::new(0.0, -speed, 0.0), DVec3::ZERO))
        .unwrap();
    let event = EventSettings::new(
        Elastic::try_new(60.0e9, 0.22).unwrap(),
        Rankine::try_new(1.0e6, 0.5e6).unwrap(),
        0.05,
        0.002,
    );
    let mut model = BemFracture::new(settings);
    let material = BemMaterial::new(event, 2500.0);
    let bad = model.make_breakable(
        &world,
        slab,
        mesh.clone(),
        BemMaterial {
            contact_duration: 0.0,
            ..material
        },
        &mesh_pose,
        threshold,
    );
    assert!(bad.unwrap_err().to_string().contains("contact duration"));
    let mut thin = material;
    thin.event.track.thickness = f64::NAN;
    let bad = model.make_breakable(&world, slab, mesh.clone(), thin, &mesh_pose, threshold);
    assert!(bad.unwrap_err().to_string().contains("crack thickness"));
    let mut loose = material;
    loose.event.ligament = -0.1;
    let bad = model.make_breakable(&world, slab, mesh.clone(), loose, &mesh_pose, threshold);
    assert!(bad.unwrap_err().to_string().contains("ligament"));
    assert!(!model.is_breakable(slab), "a refused call changes nothing");
    model
        .make_breakable(&world, slab, mesh, material, &mesh_pose, threshold)
        .unwrap();
    world.add_fracture_model(Box::new(model));
    for _ in 0..steps {
        world.step(1.0 / 30.0).unwrap();
    }
    (world, slab)
}

/// A slab set down gently rests on the ground for two seconds: its contact impulses (about
/// m g dt = 12 N s per step) stay under the 50 N s screen, and no stress is ever solved.
#[test]
fn bem_model_resting_body_costs_no_solve() {
    let (world, slab) = dropped_slab(0.0, 50.0, 60);
    let model = world.fracture_model::<BemFracture>().unwrap();
    assert!(world.contains(slab) && model.is_breakable(slab));
    assert!(model.events().is_empty(), "{} events", model.events().len());
    assert!(model.failures().is_empty(), "{:?}", model.failures());
}

/// The same slab landing at 5 m/s (an impulse of about 190 N s) runs a fracture event on the
/// landing step: the contacts load it, the stress solve converges, a crack starts, and the
/// body's momentum is handed on whole if it breaks (it stays one piece here: the cut through is
/// refused where the crack's walls meet the surface at a slant).
#[test]
fn bem_model_hard_landing_runs_one_event_on_its_contacts() {
    let (world, slab) = dropped_slab(5.0, 50.0, 4);
    let model = world.fracture_model::<BemFracture>().unwrap();
    assert!(model.failures().is_empty(), "{:?}", model.failures());
    let events = model.events();
    assert!(!events.is_empty(), "the landing should be stressed");
    let event = &events[0];
    println!(
        "landing: {:?}, {} crack wall triangles",
        event.report,
        event.crack_walls.len()
    );
    assert_eq!(event.body, slab);
    assert!(event.contacts > 0);
    assert!(!event.report.iterations.is_empty() && event.report.iterations[0] < 50);
    // At 1 MPa the landing starts a crack (at 4 MPa, measured, it does not).
    assert!(event.report.opened >= 1, "{:?}", event.report);
    if event.report.pieces > 1 {
        assert!(!world.contains(slab));
        let scale = event.momentum_before.linear.length().max(1.0);
        assert!((event.momentum_after.linear - event.momentum_before.linear).length() <= 1e-9 * scale);
    } else {
        assert!(world.contains(slab) && model.is_breakable(slab));
    }
}
