//! Boundary-element elastostatics on a closed surface mesh (Zhu, Bridson and Greif 2015,
//! sections 4-5): the stress a rigid body's loads cause inside it, from a solve on its surface
//! alone.
//!
//! The displacement is a single-layer potential of the Kelvin solution ([`kernel`]) with an
//! unknown density on the surface, plus a particular solution for the body force
//! ([`particular`]). The traction boundary condition at every triangle's centroid gives a
//! second-kind integral equation ([`operator`]), solved by BiCGSTAB ([`bicgstab`]) preconditioned
//! by the operator's blocks over small overlapping clusters of triangles ([`schwarz`]); its late iterations take
//! cheaper far-field products within the error they may have ([`relaxed`]). Loads are tractions
//! per triangle and gravity, balanced by the body's own inertia ([`loads`]). Stress and
//! displacement can then be read anywhere inside and at the surface vertices ([`solution`]), and
//! decomposed into principal stresses ([`principal`]) for a Rankine criterion. The far field of
//! every mat-vec is summed directly or by a kernel-independent fast multipole method ([`fmm`]).
//!
//! Units are SI throughout: m, Pa, N, kg/m^3. Everything is in the body's material frame.

pub mod bicgstab;
pub mod body;
pub(crate) mod buckets;
pub mod crack;
pub(crate) mod dense_lu;
pub mod fmm;
pub mod kernel;
pub(crate) mod lanes;
pub mod loads;
pub mod material;
pub mod meshes;
pub mod model;
pub mod operator;
pub mod particular;
pub mod point_sums;
pub mod principal;
pub mod quadrature;
pub mod relaxed;
pub mod rigid;
pub mod schwarz;
pub mod solution;
pub mod surface;

pub use bicgstab::{Convergence, Stopping};
pub use body::{BemSettings, ElasticBody, SolveReport};
pub use kernel::Kelvin;
pub use loads::{Balance, Loads};
pub use material::Elastic;
pub use model::{BemFracture, BemFractureEvent, BemFractureSettings, BemMaterial, bem_body_desc};
pub use operator::{Accuracy, FarField};
pub use point_sums::PointForces;
pub use principal::{PrincipalStress, principal_stress};
pub use schwarz::Preconditioner;
pub use solution::Solution;
pub use surface::{Component, Surface};
