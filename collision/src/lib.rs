//! Geometry and contact generation for shatter.
//!
//! What this crate is for: every geometric thing the engine and the fracture methods need, in one
//! place, exact where it can be, with clear errors on bad geometry:
//! - triangle meshes ([`TriMesh`]) with readers and writers for OBJ, STL and PLY, and topology
//!   checks that say why a mesh does not bound a solid;
//! - analytic shapes with exact signed distance;
//! - signed-distance level sets on regular grids ([`SdfGrid`]) built from meshes or shapes, with
//!   trilinear queries; surface particles; contouring back to meshes; tetrahedral meshes;
//! - mass properties from meshes, grids and tets;
//! - the broad phase over moving boxes and the narrow phase that turns overlapping pairs into
//!   contacts.
//!
//! What it is not: it knows no velocities, no solver and no world. All coordinates are `f64`,
//! in SI units, in the frame each function states (usually the body frame, origin at the centre of
//! mass).

pub mod aabb;
pub mod broad_phase;
pub mod bvh;
pub mod error;
pub mod grid;
pub mod io;
pub mod level_set;
pub mod marching_cubes;
pub mod mass_properties;
pub mod narrow_phase;
pub mod particles;
pub mod pose;
pub mod predicates;
pub mod shapes;
pub mod simplify;
pub mod tet_mesh;
pub mod tetrahedralize;
pub mod topology;
pub mod triangle_intersection;
pub mod trimesh;
pub mod winding;

pub use aabb::Aabb;
pub use broad_phase::{BroadPhase, BroadPhaseSettings, ProxyId, ProxyKind};
pub use error::{GeometryError, MeshDefects};
pub use grid::{GridSpec, SdfGrid};
pub use mass_properties::{BodyMassProperties, VolumeIntegrals};
pub use narrow_phase::{
    Closing, Collider, Contact, ContactManifold, FeatureId, Geometry, collide, collide_closing_into, collide_into,
    collide_within_margin_into,
};
pub use pose::Pose;
pub use shapes::{Capsule, Cuboid, HalfSpace, Shape, SignedDistance, Sphere};
pub use tet_mesh::TetMesh;
pub use tetrahedralize::{LatticeResolution, tetrahedralize, tetrahedralize_with_report};
pub use trimesh::TriMesh;
