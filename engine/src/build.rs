//! Turning a [`BodyDesc`] into the data the store holds: validation, mass properties, and the
//! body frame at the centre of mass and principal axes.
//!
//! Mass properties come from one place per kind of geometry:
//! - analytic shapes in closed form (sphere `2/5 m r^2`; cuboid `m (b^2 + c^2) / 3` with half
//!   extents; capsule as a cylinder plus two hemispheres, below);
//! - meshes from the exact volume integrals of `BodyMassProperties::from_mesh`, whose centre of
//!   mass and principal frame become the body frame (Su 2009 section 4.2);
//! - or given explicitly.
//!
//! Level sets are not integrated here: a grid cannot be re-centred on its centre of mass without
//! resampling, so a level-set collider must come with explicit mass properties (or as a mesh).

use glam::{DAffine3, DMat3, DVec3};
use shatter_collision::{BodyMassProperties, Collider, Geometry, Pose, Shape};
use shatter_integrators::state::UNIT_QUATERNION_TOLERANCE;
use shatter_integrators::{BodyKind, MassProperties, RigidState};

use crate::desc::{BodyDesc, BodyGeometry, MassSource, Material};
use crate::error::{EngineError, check_finite3};

/// A validated body, ready for the store.
#[derive(Clone, Debug)]
pub(crate) struct ResolvedBody {
    pub(crate) kind: BodyKind,
    pub(crate) collider: Collider,
    pub(crate) mass: MassProperties,
    pub(crate) state: RigidState,
    /// The body frame in the geometry frame.
    pub(crate) geometry_frame: Pose,
    pub(crate) material: Material,
    pub(crate) user_data: u64,
}

/// Checks `desc` and computes everything the store needs. Pure: nothing is touched on error.
pub(crate) fn resolve(desc: BodyDesc) -> Result<ResolvedBody, EngineError> {
    check_pose("body pose", &desc.pose)?;
    check_finite3("linear velocity (m/s)", desc.linear_velocity)?;
    check_finite3("angular velocity (rad/s)", desc.angular_velocity)?;
    check_material(&desc.material)?;
    let dynamic = desc.kind == BodyKind::Dynamic;
    if dynamic {
        check_mass_source(&desc.mass)?;
    }
    let (collider, mass, geometry_frame) = match desc.geometry {
        BodyGeometry::Collider(collider) => {
            let mass = if dynamic {
                collider_mass(&collider, &desc.mass)?
            } else {
                MassProperties::infinite()
            };
            (collider, mass, Pose::IDENTITY)
        }
        BodyGeometry::Mesh {
            mesh,
            cells,
            particle_spacing,
        } => {
            let (mass, frame) = match desc.mass {
                MassSource::Properties(mass) if dynamic => (mass, Pose::IDENTITY),
                source => {
                    let density = match source {
                        MassSource::Density(density) => density,
                        MassSource::Mass(mass) => mass / mesh.signed_volume(),
                        MassSource::Properties(_) => crate::desc::DEFAULT_DENSITY,
                    };
                    let props = BodyMassProperties::from_mesh(&mesh, density)
                        .map_err(EngineError::geometry("mass properties of the body mesh"))?;
                    let mass = if dynamic {
                        props.mass
                    } else {
                        MassProperties::infinite()
                    };
                    (mass, Pose::new(props.center_of_mass, props.principal_frame))
                }
            };
            // body = R^T (geometry - c): the mesh in the principal frame about its centre of mass.
            let to_body = DAffine3::from_mat3_translation(
                DMat3::from_quat(frame.orientation.inverse()),
                -(frame.orientation.inverse() * frame.position),
            );
            let collider = Collider::from_mesh(&mesh.transformed(to_body), cells, particle_spacing)
                .map_err(EngineError::geometry("collider of the body mesh"))?;
            (collider, mass, frame)
        }
    };
    if dynamic && collider.local_bounds().is_none() {
        return Err(EngineError::description(
            "a dynamic body cannot be an unbounded half-space; make the ground static",
        ));
    }
    let position = desc.pose.transform_point(geometry_frame.position);
    let orientation = (desc.pose.orientation * geometry_frame.orientation).normalize();
    let state = RigidState::moving(position, orientation, desc.linear_velocity, desc.angular_velocity);
    Ok(ResolvedBody {
        kind: desc.kind,
        collider,
        mass,
        state,
        geometry_frame,
        material: desc.material,
        user_data: desc.user_data,
    })
}

/// Checks a pose given by the user: finite, and a unit orientation to within the integrators'
/// tolerance (never normalized silently: a wrong quaternion usually means a wrong input).
pub(crate) fn check_pose(what: &'static str, pose: &Pose) -> Result<(), EngineError> {
    check_finite3(what, pose.position)?;
    let q = pose.orientation;
    if !q.is_finite() {
        return Err(EngineError::invalid(what, q, "a finite unit orientation quaternion"));
    }
    if (q.length() - 1.0).abs() > UNIT_QUATERNION_TOLERANCE {
        return Err(EngineError::InvalidValue {
            what,
            value: format!("{q:?} (norm {})", q.length()),
            expected: "a unit orientation quaternion (normalize it first)",
        });
    }
    Ok(())
}

fn check_material(material: &Material) -> Result<(), EngineError> {
    if !(material.friction.is_finite() && material.friction >= 0.0) {
        return Err(EngineError::invalid(
            "friction coefficient",
            material.friction,
            "a finite number >= 0",
        ));
    }
    if !(material.restitution >= 0.0 && material.restitution <= 1.0) {
        return Err(EngineError::invalid(
            "coefficient of restitution",
            material.restitution,
            "a number in [0, 1]",
        ));
    }
    Ok(())
}

fn check_mass_source(source: &MassSource) -> Result<(), EngineError> {
    match *source {
        MassSource::Density(density) if !(density.is_finite() && density > 0.0) => Err(EngineError::invalid(
            "density (kg/m^3)",
            density,
            "a positive finite density",
        )),
        MassSource::Mass(mass) if !(mass.is_finite() && mass > 0.0) => {
            Err(EngineError::invalid("mass (kg)", mass, "a positive finite mass"))
        }
        MassSource::Properties(props) => MassProperties::try_new(props.mass(), props.principal_inertia())
            .map(|_| ())
            .map_err(EngineError::integrator("explicit mass properties")),
        _ => Ok(()),
    }
}

/// Mass properties of a dynamic body whose collider is already in its body frame.
fn collider_mass(collider: &Collider, source: &MassSource) -> Result<MassProperties, EngineError> {
    if let MassSource::Properties(props) = source {
        return Ok(*props);
    }
    let shape = match collider.geometry() {
        Geometry::Shape(shape) => shape,
        Geometry::LevelSet(_) => {
            return Err(EngineError::description(
                "a level-set collider needs explicit mass properties (MassSource::Properties), \
                 or give the mesh as BodyGeometry::Mesh so the world can integrate it",
            ));
        }
    };
    let volume = Shape::volume(shape).ok_or_else(|| {
        EngineError::description("a dynamic body cannot be an unbounded half-space; make the ground static")
    })?;
    let mass = match *source {
        MassSource::Density(density) => density * volume,
        MassSource::Mass(mass) => mass,
        MassSource::Properties(_) => unreachable!("handled above"),
    };
    shape_mass(shape, mass).map_err(EngineError::integrator("mass properties of the shape"))
}

/// Mass properties of a solid analytic shape of total `mass` kg about its centre, in its own
/// axes (which are principal for all of them).
pub(crate) fn shape_mass(shape: &Shape, mass: f64) -> Result<MassProperties, shatter_integrators::IntegratorError> {
    match shape {
        Shape::Sphere(s) => MassProperties::solid_sphere(mass, s.radius()),
        Shape::Cuboid(c) => MassProperties::solid_cuboid(mass, c.half_extents()),
        Shape::Capsule(c) => MassProperties::try_new(mass, capsule_inertia(mass, c.half_height(), c.radius())),
        Shape::HalfSpace(_) => Ok(MassProperties::infinite()),
    }
}

/// Principal inertia of a solid capsule along y (core segment half length `h`, radius `r`, total
/// mass `m`), kg m^2. With cylinder height `H = 2h`, cylinder mass `m_c` and ball mass `m_s` split
/// in proportion to volume:
///
/// ```text
/// I_y = m_c r^2 / 2 + m_s 2 r^2 / 5
/// I_x = I_z = m_c (r^2 / 4 + H^2 / 12) + m_s (2 r^2 / 5 + H^2 / 4 + 3 H r / 8)
/// ```
///
/// The caps' term: each hemisphere has `83/320 m r^2` about its own centre of mass, which sits
/// `3r/8` from its flat face, i.e. `h + 3r/8` from the capsule's centre; the parallel-axis sum over
/// both collapses to the bracket above.
pub(crate) fn capsule_inertia(mass: f64, h: f64, r: f64) -> DVec3 {
    let height = 2.0 * h;
    let cylinder_volume = height * r * r;
    let ball_volume = 4.0 / 3.0 * r * r * r;
    // pi cancels in the split.
    let m_c = mass * cylinder_volume / (cylinder_volume + ball_volume);
    let m_s = mass - m_c;
    let r2 = r * r;
    let axial = m_c * r2 / 2.0 + m_s * 0.4 * r2;
    let transverse =
        m_c * (r2 / 4.0 + height * height / 12.0) + m_s * (0.4 * r2 + height * height / 4.0 + 3.0 * height * r / 8.0);
    DVec3::new(transverse, axial, transverse)
}
