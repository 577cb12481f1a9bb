//! A world built from a scene file: [`build_world`] turns a validated [`SceneDescription`] into an
//! engine [`World`], the [`BodyId`] of every named body, and a surface to draw each body with.
//!
//! How each body's geometry becomes a collider:
//! - spheres, cuboids, capsules and half-spaces are the engine's analytic shapes (exact signed
//!   distance), with surface particles [`PARTICLE_SPACING_FRACTION`] of the body's smallest
//!   extent apart (a tenth: a 20 cm brick face carries about ten particles across, enough that a
//!   face lying on another face is held at many points, few enough that a wall of bricks collides
//!   in milliseconds);
//! - mesh files become level sets with [`MESH_LEVEL_SET_CELLS`] cells along the longest side of
//!   the mesh's box. A dynamic body's mass and inertia come from the closed mesh's exact volume
//!   integrals, and the engine moves its body frame to the mesh's centre of mass and principal
//!   axes ([`World::geometry_frame`]); its drawn surface is moved into that frame with it. Static
//!   and kinematic meshes keep the file's frame as their body frame and may be open surfaces.
//!
//! Mass, friction, restitution, kind, pose and velocities are passed on as the file gives them.
//! The file gives the velocity of the shape's reference point; for a mesh whose centre of mass lies
//! elsewhere the engine is given the centre of mass's velocity `v + w x (c - p)`.
//!
//! Joints: anchors and hinge axes are world frame at the initial poses, as both the file and the
//! engine take them. Softness given as ERP and CFM or as a frequency and damping ratio applies to
//! every row of the joint; a stiffness and damping (N/m, N s/m) applies to the rows that hold the
//! anchors together, and the angular rows of hinges and welds stay rigid (their stiffness would be
//! in N m/rad, which the file format does not carry).
//!
//! A joint's `break_impulse` becomes the engine's breaking impulse: the joint is removed in the
//! step whose impulse exceeds it.
//!
//! Fracture: bodies whose `fracture` block names the `prescored` model are made breakable in one
//! prescored model, set up by the top-level `prescored` block ([`prescored`] documents both);
//! bodies naming `modes` break along a precomputed modes asset ([`modes`]); bodies naming `sph`
//! crack as SPH particle solids ([`sph`]); bodies naming `bem` crack on boundary-element stress
//! with their crack fronts tracked on the surface mesh ([`bem`]).
//!
//! Errors name the JSON path of the body or joint at fault (`bodies[3]`, `joints[0]`) with the
//! body's name and the engine's reason, and leave nothing half built.

pub mod bem;
pub mod modes;
pub mod prescored;
mod render_mesh;
pub mod sph;

use std::collections::BTreeMap;
use std::sync::Arc;

use glam::DVec3;

use crate::collision::{Collider, Geometry, GeometryError, Shape, SignedDistance, TriMesh};
use crate::engine::joints::DEFAULT_JOINT_SOFTNESS;
use crate::engine::{BodyDesc, BodyGeometry, BodyId, JointDesc, MAX_TIME_STEP, MassSource, Material, World};
use crate::export::Normals;
use crate::fracture::energized::EnergizedFracture;
use crate::integrators::BodyKind;
use crate::scene_file::{
    BodyDescription, JointDescription, JsonPath, MassDescription, SceneDescription, SceneError, ShapeDescription,
    Softness,
};
use crate::solver::Softness as RowSoftness;

pub use render_mesh::{
    CAPSULE_RINGS, CAPSULE_SEGMENTS, HALF_SPACE_RENDER_SIZE, HALF_SPACE_RENDER_THICKNESS, SPHERE_SUBDIVISIONS,
    capsule_mesh, collider_mesh, half_space_slab, in_body_frame, shape_mesh,
};

/// Surface particles are this fraction of a body's smallest extent apart (the smallest side of
/// its bounding box), dimensionless. A flat static surface's smallest extent may be zero, so the
/// extent used is never below a twentieth of the largest.
pub const PARTICLE_SPACING_FRACTION: f64 = 0.1;

/// Level-set cells along the longest side of a mesh body's box. 56 resolves features of about
/// 2 % of the body's size and keeps one level set under a megabyte (60^3 samples with padding).
pub const MESH_LEVEL_SET_CELLS: usize = 56;

/// Colour (linear RGB) of static bodies: a neutral grey ground.
pub const STATIC_COLOR: DVec3 = DVec3::new(0.45, 0.45, 0.42);
/// Colour of kinematic bodies: ochre, so moving scenery stands out from the ground.
pub const KINEMATIC_COLOR: DVec3 = DVec3::new(0.8, 0.6, 0.15);
/// Colour of dynamic cuboids: brick red.
pub const CUBOID_COLOR: DVec3 = DVec3::new(0.55, 0.18, 0.1);
/// Colour of dynamic spheres: steel.
pub const SPHERE_COLOR: DVec3 = DVec3::new(0.6, 0.62, 0.66);
/// Colour of dynamic capsules: slate blue.
pub const CAPSULE_COLOR: DVec3 = DVec3::new(0.25, 0.35, 0.6);
/// Colour of dynamic mesh bodies and of fragments: pale stone.
pub const MESH_COLOR: DVec3 = DVec3::new(0.75, 0.72, 0.65);

/// One body of a built scene.
#[derive(Clone, Debug)]
pub struct SceneBody {
    /// Its name in the scene file.
    pub name: String,
    /// Its handle in the world.
    pub id: BodyId,
    /// Its surface in the body frame (origin at the centre of mass, principal axes), m; bodies of
    /// identical primitive shape share one mesh.
    pub mesh: Arc<TriMesh>,
    /// Base colour for viewers, linear RGB in [0, 1].
    pub color: DVec3,
    /// How viewers shade it: smooth for spheres, capsules and scanned meshes, flat for boxes.
    pub normals: Normals,
}

/// A world built from a scene, with the scene's bodies in file order.
#[derive(Debug)]
pub struct SceneWorld {
    /// The world, with gravity set and every body and joint added.
    pub world: World,
    /// The bodies, in the scene file's order.
    pub bodies: Vec<SceneBody>,
    /// Time step, s: one step per frame.
    pub dt: f64,
    /// Number of frames (steps) the scene asks for.
    pub frames: usize,
    by_name: BTreeMap<String, usize>,
}

impl SceneWorld {
    /// A world built in code (such as the fracture methods' scenes), made ready to record at one
    /// frame per `dt` (s) for `frames` frames: every body is drawn from its collider (analytic
    /// shapes exactly, level sets contoured) and coloured by its kind and shape as scene-file
    /// bodies are. `names` names some bodies; the others are `body_N`, N their place in the store.
    /// Fails if a level set cannot be contoured.
    pub fn from_world(world: World, dt: f64, frames: usize, names: &[(BodyId, &str)]) -> Result<Self, GeometryError> {
        let mut bodies = Vec::with_capacity(world.bodies().len());
        let mut by_name = BTreeMap::new();
        for (index, id) in world.bodies().ids().enumerate() {
            let view = world.bodies().view(index);
            let collider = &view.record.collider;
            let name = names
                .iter()
                .find(|(named, _)| *named == id)
                .map_or_else(|| format!("body_{index}"), |(_, name)| (*name).to_string());
            let shape = match collider.geometry() {
                Geometry::Shape(shape) => Some(shape),
                Geometry::LevelSet(_) => None,
            };
            let normals = match shape {
                Some(Shape::Sphere(_) | Shape::Capsule(_)) => Normals::Smooth,
                _ => Normals::Flat,
            };
            let color = color(view.kind, shape);
            by_name.insert(name.clone(), bodies.len());
            bodies.push(SceneBody {
                name,
                id,
                mesh: Arc::new(collider_mesh(collider)?),
                color,
                normals,
            });
        }
        Ok(Self {
            world,
            bodies,
            dt,
            frames,
            by_name,
        })
    }

    /// The body named `name` in the scene file.
    pub fn body(&self, name: &str) -> Option<&SceneBody> {
        self.by_name.get(name).map(|i| &self.bodies[*i])
    }

    /// The handle of the body named `name`.
    pub fn id(&self, name: &str) -> Option<BodyId> {
        self.body(name).map(|b| b.id)
    }
}

/// Builds the world `scene` describes. Fails naming the JSON path (and name) of the first body or
/// joint the engine refuses, or a setting out of the engine's range.
pub fn build_world(scene: &SceneDescription) -> Result<SceneWorld, SceneError> {
    let root = JsonPath::root();
    if !(scene.dt.is_finite() && scene.dt > 0.0 && scene.dt <= MAX_TIME_STEP) {
        return Err(SceneError::invalid(
            &root.key("dt"),
            scene.dt,
            "a time step in (0, 1] s",
        ));
    }
    let mut world = World::new();
    world
        .set_gravity(scene.gravity)
        .map_err(|e| SceneError::at(&root.key("gravity"), e.to_string()))?;
    if let Some(settings) = scene.energized_model() {
        let model =
            EnergizedFracture::try_new(settings).map_err(|e| SceneError::at(&root.key("energized"), e.to_string()))?;
        world.add_fracture_model(Box::new(model));
    }
    let mut meshes: Vec<(Shape, Arc<TriMesh>)> = Vec::new();
    let mut bodies = Vec::with_capacity(scene.bodies.len());
    let mut by_name = BTreeMap::new();
    for (index, body) in scene.bodies.iter().enumerate() {
        let path = root.key("bodies").index(index);
        let named = |message: String| SceneError::at(&path, format!("body {:?}: {message}", body.name));
        let built = add_body(&mut world, body, &mut meshes).map_err(named)?;
        by_name.insert(body.name.clone(), index);
        bodies.push(built);
    }
    for (index, joint) in scene.joints.iter().enumerate() {
        let path = root.key("joints").index(index);
        add_joint(&mut world, joint, &bodies, &path)?;
    }
    let ids: Vec<BodyId> = bodies.iter().map(|b: &SceneBody| b.id).collect();
    if let Some(model) = prescored::prescored_model(scene, &world, &ids)? {
        world.add_fracture_model(Box::new(model));
    }
    if let Some(model) = modes::modes_model(scene, &world, &ids)? {
        world.add_fracture_model(Box::new(model));
    }
    if let Some(model) = sph::sph_model(scene, &world, &ids)? {
        world.add_fracture_model(Box::new(model));
    }
    if let Some(model) = bem::bem_model(scene, &world, &ids)? {
        world.add_fracture_model(Box::new(model));
    }
    Ok(SceneWorld {
        world,
        bodies,
        dt: scene.dt,
        frames: scene.frames,
        by_name,
    })
}

/// Distance between surface particles for a body whose bounding box has `size`, m.
pub fn particle_spacing(size: DVec3) -> f64 {
    PARTICLE_SPACING_FRACTION * size.min_element().max(size.max_element() / 20.0)
}

/// Adds `body` to `world`; the error is the engine's reason, for the caller to place.
fn add_body(
    world: &mut World,
    body: &BodyDescription,
    meshes: &mut Vec<(Shape, Arc<TriMesh>)>,
) -> Result<SceneBody, String> {
    let dynamic = body.kind == BodyKind::Dynamic;
    let (geometry, mesh) = match &body.shape {
        ShapeDescription::Primitive(shape) => {
            let spacing = shape.bounds().map_or(1.0, |b| particle_spacing(b.size()));
            let collider = Collider::from_shape(*shape, spacing).map_err(|e| format!("shape: {e}"))?;
            let mesh = match meshes.iter().find(|(s, _)| s == shape) {
                Some((_, mesh)) => Arc::clone(mesh),
                None => {
                    let mesh = Arc::new(shape_mesh(shape));
                    meshes.push((*shape, Arc::clone(&mesh)));
                    mesh
                }
            };
            (BodyGeometry::Collider(collider), Some(mesh))
        }
        ShapeDescription::Mesh(file) => {
            let size = file.mesh.bounds().map(|b| b.size()).ok_or("shape: the mesh is empty")?;
            let spacing = particle_spacing(size);
            if dynamic {
                let geometry = BodyGeometry::Mesh {
                    mesh: (*file.mesh).clone(),
                    cells: MESH_LEVEL_SET_CELLS,
                    particle_spacing: spacing,
                };
                // The body frame is known once the engine has integrated the mesh (below).
                (geometry, None)
            } else {
                let collider = Collider::from_mesh(&file.mesh, MESH_LEVEL_SET_CELLS, spacing)
                    .map_err(|e| format!("shape.mesh {:?}: {e}", file.source))?;
                (BodyGeometry::Collider(collider), Some(Arc::clone(&file.mesh)))
            }
        }
    };
    let mass = match body.mass {
        Some(MassDescription::Density(density)) => MassSource::Density(density),
        Some(MassDescription::Mass(mass)) => MassSource::Mass(mass),
        None => MassSource::Density(crate::engine::DEFAULT_DENSITY),
    };
    let mut desc = BodyDesc::new(body.kind, geometry)
        .with_position(body.position)
        .with_orientation(body.orientation)
        .with_velocity(body.linear_velocity, body.angular_velocity)
        .with_material(Material {
            friction: body.friction,
            restitution: body.restitution,
        });
    desc.mass = mass;
    let id = world.add_body(desc).map_err(|e| e.to_string())?;
    let frame = world.geometry_frame(id).map_err(|e| e.to_string())?;
    let mesh = match (mesh, &body.shape) {
        (Some(mesh), _) => mesh,
        (None, ShapeDescription::Mesh(file)) => Arc::new(in_body_frame(&file.mesh, &frame)),
        (None, ShapeDescription::Primitive(_)) => unreachable!("primitives always have their mesh"),
    };
    if frame.position != DVec3::ZERO && body.angular_velocity != DVec3::ZERO {
        // The file's velocity is that of the mesh's origin; the engine's, of the centre of mass.
        let arm = body.orientation * frame.position;
        let linear = body.linear_velocity + body.angular_velocity.cross(arm);
        world
            .set_velocity(id, linear, body.angular_velocity)
            .map_err(|e| e.to_string())?;
    }
    let (color, normals) = appearance(body);
    Ok(SceneBody {
        name: body.name.clone(),
        id,
        mesh,
        color,
        normals,
    })
}

/// How a body is drawn: its colour and shading.
fn appearance(body: &BodyDescription) -> (DVec3, Normals) {
    let normals = match &body.shape {
        ShapeDescription::Primitive(Shape::Sphere(_) | Shape::Capsule(_)) | ShapeDescription::Mesh(_) => {
            Normals::Smooth
        }
        ShapeDescription::Primitive(_) => Normals::Flat,
    };
    let shape = match &body.shape {
        ShapeDescription::Primitive(shape) => Some(shape),
        ShapeDescription::Mesh(_) => None,
    };
    (color(body.kind, shape), normals)
}

/// The colour of a body of `kind` with analytic `shape` (`None`: a mesh or level set).
fn color(kind: BodyKind, shape: Option<&Shape>) -> DVec3 {
    match (kind, shape) {
        (BodyKind::Static, _) => STATIC_COLOR,
        (BodyKind::Kinematic, _) => KINEMATIC_COLOR,
        (_, Some(Shape::Cuboid(_))) => CUBOID_COLOR,
        (_, Some(Shape::Sphere(_))) => SPHERE_COLOR,
        (_, Some(Shape::Capsule(_))) => CAPSULE_COLOR,
        _ => MESH_COLOR,
    }
}

/// Adds `joint` (at JSON path `path`) between bodies already built.
fn add_joint(
    world: &mut World,
    joint: &JointDescription,
    bodies: &[SceneBody],
    path: &JsonPath,
) -> Result<(), SceneError> {
    let mut ids = [None; 2];
    for (k, index) in joint.bodies.iter().enumerate() {
        ids[k] = Some(bodies.get(*index).map(|b| b.id).ok_or_else(|| {
            SceneError::invalid(
                &path.key("bodies").index(k),
                index,
                &format!("the index of one of the {} bodies", bodies.len()),
            )
        })?);
    }
    let [Some(a), Some(b)] = ids else {
        unreachable!("both filled above")
    };
    let kind = joint.kind;
    let (point, angular) = match joint.softness {
        None => (DEFAULT_JOINT_SOFTNESS, DEFAULT_JOINT_SOFTNESS),
        Some(Softness::ErpCfm { erp, cfm }) => {
            let s = RowSoftness::ErpCfm { erp, cfm };
            (s, s)
        }
        Some(Softness::Frequency { hertz, damping_ratio }) => {
            let s = RowSoftness::Frequency { hertz, damping_ratio };
            (s, s)
        }
        Some(Softness::StiffnessDamping { stiffness, damping }) => {
            (RowSoftness::SpringDamper { stiffness, damping }, DEFAULT_JOINT_SOFTNESS)
        }
    };
    let mut desc = JointDesc::new(kind, a, Some(b), joint.anchor).with_softness(point, angular);
    desc.breaking_impulse = joint.break_impulse;
    let refused = |e: String| {
        let name = |i: usize| bodies[joint.bodies[i]].name.as_str();
        let label = joint.name.as_deref().map_or(String::new(), |n| format!(" {n:?}"));
        SceneError::at(
            path,
            format!("joint{label} between {:?} and {:?}: {e}", name(0), name(1)),
        )
    };
    let id = world.add_joint(desc).map_err(|e| refused(e.to_string()))?;
    if let Some(rule) = joint.breakable {
        let model = world
            .fracture_model_mut::<EnergizedFracture>()
            .expect("registered by build_world when a joint is breakable");
        model.add_joint(id, rule).map_err(|e| refused(e.to_string()))?;
    }
    Ok(())
}
