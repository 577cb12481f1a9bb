//! What a body is made of: [`BodyDesc`], the description [`crate::World::add_body`] turns into a
//! body, and the surface [`Material`].
//!
//! A description names the geometry, how the mass is found, where the body starts and how it
//! moves. Nothing is checked here; [`crate::World::add_body`] checks everything and refuses the
//! description by name, leaving the world unchanged.
//!
//! Frames: the body frame has its origin at the centre of mass and its axes along the principal
//! axes of inertia (DESIGN.md). An analytic shape or a prepared [`Collider`] is already in that
//! frame. A mesh ([`BodyGeometry::Mesh`]) is given in its own frame, the *geometry frame*; the
//! world moves the body frame to the mesh's centre of mass and principal axes and transforms the
//! mesh accordingly, and [`crate::World::geometry_frame`] says where the body frame sits in the
//! geometry frame (a renderer holding the original mesh needs it).

use glam::{DQuat, DVec3};
use shatter_collision::{Collider, Pose, TriMesh};
use shatter_integrators::{BodyKind, MassProperties};

/// Density used when a description names none, kg/m^3 (water).
pub const DEFAULT_DENSITY: f64 = 1000.0;

/// Surface properties of a body, combined per contact pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Coulomb friction coefficient, dimensionless, >= 0. A pair uses the geometric mean
    /// `sqrt(mu_a mu_b)`, so a frictionless body makes every contact frictionless (Box2D's rule).
    pub friction: f64,
    /// Coefficient of restitution in [0, 1]: the fraction of the approach speed a collision gives
    /// back. A pair uses the larger of the two (Box2D's rule: a bouncy ball bounces on any floor).
    pub restitution: f64,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            friction: 0.5,
            restitution: 0.0,
        }
    }
}

/// The geometry of a body.
#[derive(Clone, Debug)]
pub enum BodyGeometry {
    /// A collider already in the body frame (origin at the centre of mass, principal axes):
    /// analytic shapes, or a prepared level set.
    Collider(Collider),
    /// A closed triangle mesh in its own frame. The body frame is put at its centre of mass and
    /// principal axes; the mesh is transformed into that frame and a level set of `cells` cells
    /// along its longest side is built, with surface particles about `particle_spacing` m apart.
    Mesh {
        /// The mesh, geometry frame, m.
        mesh: TriMesh,
        /// Level-set resolution: cells along the longest side of the mesh's box.
        cells: usize,
        /// Distance between surface particles, m.
        particle_spacing: f64,
    },
}

/// How a dynamic body's mass is found. Static and kinematic bodies have infinite mass whatever
/// this says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MassSource {
    /// Uniform density, kg/m^3: mass and inertia from the geometry's volume integrals.
    Density(f64),
    /// Total mass, kg, spread uniformly over the geometry's volume.
    Mass(f64),
    /// Explicit mass properties in the body frame; the geometry frame is taken as the body frame
    /// as it is (no centring), so the geometry must already be centred on its centre of mass.
    Properties(MassProperties),
}

/// A description of a body for [`crate::World::add_body`]. Build one with [`BodyDesc::dynamic`],
/// [`BodyDesc::fixed`], [`BodyDesc::kinematic`] or [`BodyDesc::dynamic_mesh`] and the `with_`
/// methods.
#[derive(Clone, Debug)]
pub struct BodyDesc {
    /// How the body moves.
    pub kind: BodyKind,
    /// The geometry.
    pub geometry: BodyGeometry,
    /// How the mass is found (dynamic bodies only).
    pub mass: MassSource,
    /// Where the geometry frame is placed in the world (for a [`BodyGeometry::Collider`] this is
    /// the body frame itself): position in m, unit orientation quaternion.
    pub pose: Pose,
    /// Velocity of the centre of mass, world frame, m/s.
    pub linear_velocity: DVec3,
    /// Angular velocity, world frame, rad/s.
    pub angular_velocity: DVec3,
    /// Surface properties.
    pub material: Material,
    /// A number the world stores and returns untouched (an index into the user's own tables).
    pub user_data: u64,
}

impl BodyDesc {
    /// A body of `kind` with `geometry`, at the origin, at rest, of [`DEFAULT_DENSITY`].
    pub fn new(kind: BodyKind, geometry: BodyGeometry) -> Self {
        Self {
            kind,
            geometry,
            mass: MassSource::Density(DEFAULT_DENSITY),
            pose: Pose::IDENTITY,
            linear_velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            material: Material::default(),
            user_data: 0,
        }
    }

    /// A dynamic body with a collider already in its body frame.
    pub fn dynamic(collider: Collider) -> Self {
        Self::new(BodyKind::Dynamic, BodyGeometry::Collider(collider))
    }

    /// A static body (ground, walls): never moves, infinite mass.
    pub fn fixed(collider: Collider) -> Self {
        Self::new(BodyKind::Static, BodyGeometry::Collider(collider))
    }

    /// A kinematic body: moves with the velocity it is given, infinite mass.
    pub fn kinematic(collider: Collider) -> Self {
        Self::new(BodyKind::Kinematic, BodyGeometry::Collider(collider))
    }

    /// A dynamic body from a closed mesh in its own frame (see [`BodyGeometry::Mesh`]).
    pub fn dynamic_mesh(mesh: TriMesh, cells: usize, particle_spacing: f64) -> Self {
        Self::new(
            BodyKind::Dynamic,
            BodyGeometry::Mesh {
                mesh,
                cells,
                particle_spacing,
            },
        )
    }

    /// Places the geometry frame at `pose`.
    pub fn with_pose(mut self, pose: Pose) -> Self {
        self.pose = pose;
        self
    }

    /// Places the geometry frame at `position` (m), keeping the orientation.
    pub fn with_position(mut self, position: DVec3) -> Self {
        self.pose.position = position;
        self
    }

    /// Turns the geometry frame to `orientation` (a unit quaternion), keeping the position.
    pub fn with_orientation(mut self, orientation: DQuat) -> Self {
        self.pose.orientation = orientation;
        self
    }

    /// Starts the body with centre-of-mass velocity `linear` (m/s) and angular velocity
    /// `angular` (rad/s), both world frame.
    pub fn with_velocity(mut self, linear: DVec3, angular: DVec3) -> Self {
        self.linear_velocity = linear;
        self.angular_velocity = angular;
        self
    }

    /// Uniform density, kg/m^3.
    pub fn with_density(mut self, density: f64) -> Self {
        self.mass = MassSource::Density(density);
        self
    }

    /// Total mass, kg, spread uniformly.
    pub fn with_mass(mut self, mass: f64) -> Self {
        self.mass = MassSource::Mass(mass);
        self
    }

    /// Explicit mass properties in the body frame.
    pub fn with_mass_properties(mut self, mass: MassProperties) -> Self {
        self.mass = MassSource::Properties(mass);
        self
    }

    /// Surface properties.
    pub fn with_material(mut self, material: Material) -> Self {
        self.material = material;
        self
    }

    /// The user's number for this body.
    pub fn with_user_data(mut self, user_data: u64) -> Self {
        self.user_data = user_data;
        self
    }
}
