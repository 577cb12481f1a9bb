//! World: bodies from descriptions (validation, mass properties, frames), the body API, joints.

mod common;

use common::{ball, cuboid, ground, weightless};
use glam::{DAffine3, DQuat, DVec3};
use shatter_collision::{
    Aabb, BodyMassProperties, Capsule, Collider, GridSpec, Pose, SdfGrid, Shape, SignedDistance, TriMesh,
};
use shatter_engine::{BodyDesc, EngineError, JointDesc, JointKind, Material, World};
use shatter_integrators::{BodyKind, MassProperties};

fn assert_refused(world: &mut World, desc: BodyDesc, needle: &str) {
    let (hash, count) = (world.state_hash(), world.bodies().len());
    let err = world.add_body(desc).unwrap_err().to_string();
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    assert_eq!(
        (world.state_hash(), world.bodies().len()),
        (hash, count),
        "the world changed"
    );
}

#[test]
fn world_add_body_refuses_bad_descriptions_by_name_and_changes_nothing() {
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::Y))
        .unwrap();
    let good = || BodyDesc::dynamic(ball(0.5));
    assert_refused(&mut world, good().with_position(DVec3::new(0.0, f64::NAN, 0.0)), "NaN");
    assert_refused(
        &mut world,
        good().with_velocity(DVec3::new(f64::INFINITY, 0.0, 0.0), DVec3::ZERO),
        "linear velocity",
    );
    assert_refused(
        &mut world,
        good().with_velocity(DVec3::ZERO, DVec3::new(0.0, 0.0, f64::NAN)),
        "angular velocity",
    );
    assert_refused(
        &mut world,
        good().with_orientation(DQuat::from_xyzw(0.0, 0.0, 0.0, 2.0)),
        "norm 2",
    );
    assert_refused(
        &mut world,
        good().with_orientation(DQuat::from_xyzw(0.0, f64::NAN, 0.0, 1.0)),
        "orientation",
    );
    assert_refused(&mut world, good().with_density(0.0), "density (kg/m^3) = 0.0");
    assert_refused(&mut world, good().with_density(-5.0), "density (kg/m^3) = -5.0");
    assert_refused(&mut world, good().with_density(f64::NAN), "density (kg/m^3) = NaN");
    assert_refused(&mut world, good().with_mass(0.0), "mass (kg) = 0.0");
    assert_refused(&mut world, good().with_mass(-1.0), "mass (kg) = -1.0");
    assert_refused(&mut world, good().with_mass(f64::NAN), "mass (kg) = NaN");
    let bad_material = Material {
        friction: 0.5,
        restitution: 1.5,
    };
    assert_refused(&mut world, good().with_material(bad_material), "restitution = 1.5");
    let bad_material = Material {
        friction: -0.1,
        restitution: 0.0,
    };
    assert_refused(
        &mut world,
        good().with_material(bad_material),
        "friction coefficient = -0.1",
    );
    let mut dynamic_ground = ground();
    dynamic_ground.kind = BodyKind::Dynamic;
    assert_refused(&mut world, dynamic_ground, "half-space");
    let spec = GridSpec::try_new(DVec3::splat(-1.0), 0.25, [9, 9, 9]).unwrap();
    let grid = SdfGrid::from_fn(spec, |p| p.length() - 0.6).unwrap();
    let level_set = Collider::from_grid(grid, 0.2).unwrap();
    assert_refused(
        &mut world,
        BodyDesc::dynamic(level_set.clone()),
        "explicit mass properties",
    );
    // The same level set with explicit mass properties is fine.
    let props = MassProperties::solid_sphere(2.0, 0.6).unwrap();
    world
        .add_body(BodyDesc::dynamic(level_set).with_mass_properties(props))
        .unwrap();
}

#[test]
fn world_shapes_get_closed_form_mass_properties() {
    let mut world = World::new();
    let rho = 700.0;
    let sphere = world.add_body(BodyDesc::dynamic(ball(0.5)).with_density(rho)).unwrap();
    let mass = *world.body(sphere).unwrap().mass;
    let m = rho * 4.0 / 3.0 * std::f64::consts::PI * 0.125;
    assert!((mass.mass() - m).abs() < 1e-12 * m);
    assert!(
        (mass.principal_inertia() - DVec3::splat(0.4 * m * 0.25))
            .abs()
            .max_element()
            < 1e-12 * m
    );
    let h = DVec3::new(0.5, 1.0, 1.5);
    let boxed = world.add_body(BodyDesc::dynamic(cuboid(h)).with_mass(12.0)).unwrap();
    let mass = *world.body(boxed).unwrap().mass;
    // I_x = m (b^2 + c^2) / 12 with full edge lengths b = 2 h_y = 2, c = 2 h_z = 3.
    let expected = DVec3::new(4.0 + 9.0, 1.0 + 9.0, 1.0 + 4.0);
    assert!(
        (mass.principal_inertia() - expected).abs().max_element() < 1e-12,
        "{}",
        mass.principal_inertia()
    );
}

#[test]
fn world_capsule_inertia_matches_a_level_set_integration() {
    let (h, r, rho) = (0.5, 0.3, 1000.0);
    let capsule = Capsule::try_new(h, r).unwrap();
    let mut world = World::new();
    let collider = Collider::from_shape(Shape::Capsule(capsule), 0.1).unwrap();
    let id = world.add_body(BodyDesc::dynamic(collider).with_density(rho)).unwrap();
    let mass = *world.body(id).unwrap().mass;
    // Independent oracle: Su 2009 section 4.2 cell sums over the capsule's exact distance.
    let bounds = Aabb::new(DVec3::new(-r, -h - r, -r), DVec3::new(r, h + r, r));
    let grid = SdfGrid::from_fn(GridSpec::with_resolution(bounds, 96, 2).unwrap(), |p| {
        capsule.distance(p)
    })
    .unwrap();
    let numeric = BodyMassProperties::from_grid(&grid, rho, 4).unwrap();
    assert!((numeric.mass.mass() - mass.mass()).abs() < 2e-3 * mass.mass());
    let mut ours = mass.principal_inertia().to_array();
    ours.sort_by(f64::total_cmp);
    let theirs = numeric.mass.principal_inertia().to_array();
    for (a, b) in ours.iter().zip(theirs) {
        assert!(
            (a - b).abs() < 3e-3 * a,
            "capsule inertia {ours:?} against cell sums {theirs:?}"
        );
    }
}

#[test]
fn world_mesh_bodies_sit_at_their_centre_of_mass_on_principal_axes() {
    let he = DVec3::new(0.2, 0.4, 0.6);
    let turn = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1);
    let offset = DVec3::new(1.0, 2.0, 3.0);
    let mesh = TriMesh::cuboid(he).transformed(DAffine3::from_rotation_translation(turn, offset));
    let pose = Pose::new(DVec3::new(-1.0, 0.5, 0.0), DQuat::from_rotation_y(0.4));
    let mut world = World::new();
    let id = world
        .add_body(BodyDesc::dynamic_mesh(mesh, 8, 0.2).with_density(500.0).with_pose(pose))
        .unwrap();
    let view = world.body(id).unwrap();
    // The centre of mass is the box centre, wherever the geometry frame is put.
    let expected_position = pose.transform_point(offset);
    assert!((view.state.position - expected_position).length() < 1e-12);
    assert!((view.record.geometry_frame.position - offset).length() < 1e-12);
    let m = 500.0 * 8.0 * he.x * he.y * he.z;
    let reference = MassProperties::solid_cuboid(m, he).unwrap();
    let mut moments = reference.principal_inertia().to_array();
    moments.sort_by(f64::total_cmp);
    assert!((view.mass.mass() - m).abs() < 1e-12 * m);
    assert!(
        (view.mass.principal_inertia() - DVec3::from(moments))
            .abs()
            .max_element()
            < 1e-12 * m
    );
    // The world inertia tensor is the box's, turned by the geometry pose and the mesh's turn.
    let world_tensor = view.mass.inertia_world(view.state.orientation);
    let expected = reference.inertia_world(pose.orientation * turn);
    for c in 0..3 {
        assert!((world_tensor.col(c) - expected.col(c)).abs().max_element() < 1e-10 * m);
    }
    // The collider lies in the body frame: the body-frame box is centred on the origin.
    let bounds = view.record.collider.local_bounds().unwrap();
    assert!(bounds.center().length() < 0.1, "{bounds:?}");
}

#[test]
fn world_setters_refuse_bad_values_and_change_nothing() {
    let mut world = World::new();
    let floor = world.add_body(ground()).unwrap();
    let id = world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::Y))
        .unwrap();
    let hash = world.state_hash();
    let nan = DVec3::new(0.0, f64::NAN, 0.0);
    assert!(
        world
            .set_pose(id, Pose::new(nan, DQuat::IDENTITY))
            .unwrap_err()
            .to_string()
            .contains("NaN")
    );
    assert!(
        world
            .set_pose(id, Pose::new(DVec3::ZERO, DQuat::from_xyzw(0.0, 0.0, 0.0, 0.5)))
            .is_err()
    );
    assert!(world.set_velocity(id, nan, DVec3::ZERO).is_err());
    assert!(
        world
            .apply_impulse(id, nan, DVec3::ZERO)
            .unwrap_err()
            .to_string()
            .contains("impulse")
    );
    assert!(
        world
            .set_velocity(floor, DVec3::X, DVec3::ZERO)
            .unwrap_err()
            .to_string()
            .contains("static")
    );
    assert!(world.set_gravity(nan).is_err());
    assert_eq!(world.state_hash(), hash);
}

#[test]
fn world_apply_impulse_changes_momentum_by_the_impulse() {
    let mut world = weightless();
    let id = world
        .add_body(BodyDesc::dynamic(cuboid(DVec3::new(0.1, 0.2, 0.3))).with_mass(3.0))
        .unwrap();
    let (j, point) = (DVec3::new(0.3, -1.2, 0.6), DVec3::new(0.1, 0.15, -0.2));
    world.apply_impulse(id, j, point).unwrap();
    let view = world.body(id).unwrap();
    assert!((view.state.linear_momentum(view.mass) - j).length() < 1e-14);
    // Angular momentum about the centre of mass is r x j.
    assert!((view.state.angular_momentum(view.mass) - point.cross(j)).length() < 1e-14);
}

#[test]
fn world_joints_need_live_distinct_bodies() {
    let mut world = World::new();
    let floor = world.add_body(ground()).unwrap();
    let a = world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::Y))
        .unwrap();
    let b = world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::Y * 2.0))
        .unwrap();
    let gone = world.add_body(BodyDesc::dynamic(ball(0.5))).unwrap();
    world.remove_body(gone).unwrap();
    let at = DVec3::Y * 1.5;
    let err = world
        .add_joint(JointDesc::new(JointKind::Ball, a, Some(gone), at))
        .unwrap_err();
    assert_eq!(err, EngineError::StaleBody { id: gone });
    assert!(
        world
            .add_joint(JointDesc::new(JointKind::Ball, a, Some(a), at))
            .unwrap_err()
            .to_string()
            .contains("twice")
    );
    assert!(
        world
            .add_joint(JointDesc::new(JointKind::Ball, floor, None, at))
            .unwrap_err()
            .to_string()
            .contains("dynamic")
    );
    let hinge = JointKind::Hinge { axis: DVec3::ZERO };
    assert!(
        world
            .add_joint(JointDesc::new(hinge, a, Some(b), at))
            .unwrap_err()
            .to_string()
            .contains("hinge axis")
    );
    assert!(world.joints().is_empty());
    let joint = world
        .add_joint(JointDesc::new(JointKind::Ball, a, Some(b), at))
        .unwrap();
    let to_world = world.add_joint(JointDesc::new(JointKind::Fixed, b, None, at)).unwrap();
    // Anchors are stored in body frames: A's is half a metre above its centre.
    assert!((world.joint(joint).unwrap().local_anchor_a - DVec3::Y * 0.5).length() < 1e-15);
    // Removing a body removes its joints; their handles go stale.
    assert_eq!(world.remove_body(b).unwrap(), 2);
    assert_eq!(world.joint(joint).unwrap_err(), EngineError::StaleJoint { id: joint });
    assert_eq!(
        world.remove_joint(to_world).unwrap_err(),
        EngineError::StaleJoint { id: to_world }
    );
}

#[test]
fn world_settings_refuse_bad_values() {
    let mut settings = shatter_engine::WorldSettings {
        contact_margin: -1.0,
        ..Default::default()
    };
    assert!(
        World::try_with_settings(settings)
            .unwrap_err()
            .to_string()
            .contains("contact margin")
    );
    let mut world = World::new();
    settings.contact_margin = 0.01;
    settings.sleep.time_to_sleep = f64::NAN;
    assert!(world.set_settings(settings).is_err());
    assert_eq!(world.settings().sleep.time_to_sleep, 0.5);
}

mod random_descriptions {
    use super::*;
    use proptest::prelude::*;

    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => -10.0..10.0f64,
            1 => Just(0.0),
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => Just(-1.0),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever numbers a description holds, adding it either succeeds with a valid body or
        /// fails leaving the world as it was; it never panics.
        #[test]
        fn world_add_body_never_panics_and_failures_change_nothing(
            p in prop::array::uniform3(number()),
            v in prop::array::uniform3(number()),
            q in prop::array::uniform4(number()),
            density in number(),
            friction in number(),
            restitution in number(),
        ) {
            let mut world = World::new();
            world.add_body(ground()).unwrap();
            let before = world.state_hash();
            let desc = BodyDesc::dynamic(ball(0.5))
                .with_position(DVec3::from(p))
                .with_orientation(DQuat::from_array(q))
                .with_velocity(DVec3::from(v), DVec3::ZERO)
                .with_density(density)
                .with_material(Material { friction, restitution });
            match world.add_body(desc) {
                Ok(id) => {
                    let view = world.body(id).unwrap();
                    prop_assert!(view.state.is_valid());
                    prop_assert!(view.mass.mass().is_finite() && view.mass.mass() > 0.0);
                }
                Err(error) => {
                    prop_assert!(!error.to_string().is_empty());
                    prop_assert_eq!(world.state_hash(), before);
                    prop_assert_eq!(world.bodies().len(), 1);
                }
            }
        }
    }
}
