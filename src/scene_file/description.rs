//! What a scene file describes, validated: plain data in SI units and glam types, ready to build a
//! world from.

/// What a joint allows: the engine's own kinds (ball, fixed, hinge with a world-frame axis).
pub use crate::engine::JointKind;
use std::path::PathBuf;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use serde_json::{Map, Value};

use crate::collision::{Shape, TriMesh};
/// The energized model's settings and a watched joint's breaking rule, as the fracture crate
/// defines them.
pub use crate::fracture::energized::{Breakable, EnergizedSettings, Reinjection};
use crate::integrators::BodyKind;

/// A validated scene: the world's settings, its bodies and the joints between them. Two
/// descriptions are equal when they describe the same scene, wherever they were read from (the
/// base directory is not compared).
#[derive(Clone, Debug)]
pub struct SceneDescription {
    /// Free text for people reading the file.
    pub description: Option<String>,
    /// Gravitational acceleration, world frame, m/s^2.
    pub gravity: DVec3,
    /// Time step, s: one step per frame.
    pub dt: f64,
    /// Number of frames (steps) to run.
    pub frames: usize,
    /// The bodies, in file order; names are unique.
    pub bodies: Vec<BodyDescription>,
    /// The joints, in file order.
    pub joints: Vec<JointDescription>,
    /// The energized-fracture model (Li 2018) watching the joints marked
    /// [`JointDescription::breakable`]; `None` when the file gives no `energized` block (a
    /// breakable joint then gets the model's defaults, see [`SceneDescription::energized_model`]).
    pub energized: Option<EnergizedSettings>,
    /// The `prescored` block (the prescored model's settings and named fracture patterns), kept
    /// as given: the model checks it when the world is built (`scene_world`).
    pub prescored: Option<Map<String, Value>>,
    /// The directory that relative file paths in the scene (meshes, fracture-pattern files) are
    /// read against: the scene file's own directory.
    pub base_directory: PathBuf,
}

/// One body as the scene file places it.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyDescription {
    /// Unique name, used by joints and shown by viewers.
    pub name: String,
    /// The body's geometry, in its own frame.
    pub shape: ShapeDescription,
    /// How the body moves.
    pub kind: BodyKind,
    /// How heavy it is: `Some` for dynamic bodies, `None` for static and kinematic ones.
    pub mass: Option<MassDescription>,
    /// Coulomb friction coefficient, dimensionless, >= 0.
    pub friction: f64,
    /// Coefficient of restitution in [0, 1]: 0 stops dead, 1 bounces back at full speed.
    pub restitution: f64,
    /// World position of the shape's reference point (a primitive's centre; a mesh file's
    /// origin), m. The engine moves the body frame to the centre of mass.
    pub position: DVec3,
    /// Rotation from the shape's frame to the world frame; unit.
    pub orientation: DQuat,
    /// Initial velocity of the reference point, world frame, m/s.
    pub linear_velocity: DVec3,
    /// Initial angular velocity, world frame, rad/s.
    pub angular_velocity: DVec3,
    /// How the body breaks, when it does.
    pub fracture: Option<FractureDescription>,
}

/// A body's geometry.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeDescription {
    /// A sphere, cuboid, capsule or half-space with exact signed distance.
    Primitive(Shape),
    /// A triangle mesh read from a file.
    Mesh(MeshShape),
}

/// A triangle-mesh shape and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshShape {
    /// The path as the scene file gives it (relative to the scene file's directory, or absolute).
    pub source: String,
    /// The file actually read.
    pub path: PathBuf,
    /// Uniform scale applied to the file's coordinates, dimensionless, > 0.
    pub scale: f64,
    /// The mesh, scaled, in the file's frame, m.
    pub mesh: Arc<TriMesh>,
    /// Enclosed volume, m^3, when the mesh bounds a solid; `None` for an open surface (allowed
    /// for static and kinematic bodies only).
    pub volume: Option<f64>,
}

/// How a dynamic body's mass is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MassDescription {
    /// Uniform density, kg/m^3.
    Density(f64),
    /// Total mass, kg (the density follows from the shape's volume).
    Mass(f64),
}

/// The fracture methods a body can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FractureModel {
    /// Breakable joints between prescored pieces with energy release (Li 2018).
    Energized,
    /// A fracture pattern aligned at the impact (Su 2009 section 4).
    Prescored,
    /// Precomputed fracture modes (Sellan 2023).
    Modes,
    /// Boundary-element stress with Rankine cracks (Zhu 2015).
    Bem,
    /// SPH stress on tets bound to particles (Chen 2014).
    Sph,
}

impl FractureModel {
    /// Every model, in the order the scene-file documentation lists them.
    pub const ALL: [Self; 5] = [Self::Energized, Self::Prescored, Self::Modes, Self::Bem, Self::Sph];

    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Energized => "energized",
            Self::Prescored => "prescored",
            Self::Modes => "modes",
            Self::Bem => "bem",
            Self::Sph => "sph",
        }
    }

    /// The model named `name` in a scene file.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Which fracture method a body uses, and that method's own parameters, kept as given: each
/// method validates its parameters when it is attached to a body.
#[derive(Clone, Debug, PartialEq)]
pub struct FractureDescription {
    /// The method.
    pub model: FractureModel,
    /// Every other member of the `fracture` object.
    pub parameters: Map<String, Value>,
}

/// A joint between two bodies.
#[derive(Clone, Debug, PartialEq)]
pub struct JointDescription {
    /// Optional name, for messages.
    pub name: Option<String>,
    /// What the joint allows.
    pub kind: JointKind,
    /// The two bodies, as indices into [`SceneDescription::bodies`]; distinct.
    pub bodies: [usize; 2],
    /// The shared point, world frame at the initial poses, m.
    pub anchor: DVec3,
    /// How soft the joint is; `None` for rigid.
    pub softness: Option<Softness>,
    /// Impulse above which the engine removes the joint, N s, giving nothing back; `None` for
    /// unbreakable. Not together with `breakable`.
    pub break_impulse: Option<f64>,
    /// When the energized model breaks the joint and gives its springs' energy back as motion;
    /// `None`: the model does not watch it.
    pub breakable: Option<Breakable>,
}

/// How soft a joint's constraint is, in one of the three usual parametrizations; the solver
/// turns any of them into ERP and CFM.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Softness {
    /// Raw error reduction parameter in (0, 1] and constraint force mixing >= 0, per step, as ODE
    /// and Bullet define them.
    ErpCfm {
        /// Fraction of the position error removed per step.
        erp: f64,
        /// Constraint force mixing.
        cfm: f64,
    },
    /// A spring and damper on the joint's linear rows.
    StiffnessDamping {
        /// Spring stiffness, N/m, > 0.
        stiffness: f64,
        /// Damping coefficient, N s/m, >= 0.
        damping: f64,
    },
    /// A spring by its natural frequency and damping ratio, independent of the masses.
    Frequency {
        /// Natural frequency, Hz, > 0.
        hertz: f64,
        /// Damping ratio, dimensionless, >= 0 (1 is critical).
        damping_ratio: f64,
    },
}

impl ShapeDescription {
    /// Enclosed volume, m^3: analytic for primitives, by the divergence theorem for solid meshes;
    /// `None` for a half-space or an open mesh.
    pub fn volume(&self) -> Option<f64> {
        match self {
            Self::Primitive(shape) => shape.volume(),
            Self::Mesh(mesh) => mesh.volume,
        }
    }
}

impl BodyDescription {
    /// Mass, kg, of a dynamic body; `None` for static and kinematic bodies.
    pub fn mass_kg(&self) -> Option<f64> {
        match self.mass? {
            MassDescription::Mass(mass) => Some(mass),
            MassDescription::Density(density) => self.shape.volume().map(|v| v * density),
        }
    }
}

impl PartialEq for SceneDescription {
    fn eq(&self, other: &Self) -> bool {
        // Destructured so that a new field cannot be left out of the comparison unnoticed.
        let Self {
            description,
            gravity,
            dt,
            frames,
            bodies,
            joints,
            energized,
            prescored,
            base_directory: _,
        } = self;
        *description == other.description
            && *gravity == other.gravity
            && *dt == other.dt
            && *frames == other.frames
            && *bodies == other.bodies
            && *joints == other.joints
            && *energized == other.energized
            && *prescored == other.prescored
    }
}

impl SceneDescription {
    /// The energized model's settings when the scene needs the model (an `energized` block, or a
    /// joint marked breakable: then the defaults, alpha 1), `None` otherwise.
    pub fn energized_model(&self) -> Option<EnergizedSettings> {
        self.energized.or_else(|| {
            self.joints
                .iter()
                .any(|j| j.breakable.is_some())
                .then(EnergizedSettings::default)
        })
    }

    /// The indices of the bodies whose fracture block names `model`, in file order.
    pub fn bodies_using(&self, model: FractureModel) -> Vec<usize> {
        (0..self.bodies.len())
            .filter(|&i| self.bodies[i].fracture.as_ref().is_some_and(|f| f.model == model))
            .collect()
    }

    /// Total mass of the dynamic bodies, kg.
    pub fn total_mass(&self) -> f64 {
        self.bodies.iter().filter_map(BodyDescription::mass_kg).sum()
    }

    /// The index of the body named `name`.
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.bodies.iter().position(|b| b.name == name)
    }
}
