//! The discrete fracture-mode problem on a tet mesh (Sellán et al. 2023 section 3.7 and
//! Appendix B, in the form confirmed against the authors' reference): one displacement per tet
//! (the "exploded" mesh, on which strain energy vanishes), a discontinuity energy
//! `E(u) = sum_f w_f ||u_a - u_b||_2` over the interior faces `f` between tets `a` and `b`, and
//! the diagonal mass matrix of tet volumes.

use shatter_collision::TetMesh;

use crate::error::FractureError;

/// How many displacement components each tet carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dimension {
    /// One scalar per tet (`d = 1`): the reference implementation's default, cheapest, and
    /// enough to find where a shape breaks.
    #[default]
    Scalar,
    /// A displacement vector per tet (`d = 3`): modes can also tell pieces apart by the direction
    /// they move in, at three times the unknowns.
    Vector,
}

impl Dimension {
    /// Components per tet: 1 or 3.
    pub fn components(self) -> usize {
        match self {
            Self::Scalar => 1,
            Self::Vector => 3,
        }
    }
}

/// The jump energy and mass of one tet mesh, what every mode is computed against.
#[derive(Clone, Debug, PartialEq)]
pub struct JumpProblem {
    /// Tets, the unknowns per component.
    pub tets: usize,
    /// Components per tet.
    pub dimension: Dimension,
    /// The two tets of every interior face.
    pub faces: Vec<[u32; 2]>,
    /// The face weights `w_f = omega * area_f * field_f`, J/m^2 times m^2 per unit jump.
    pub weights: Vec<f64>,
    /// Tet volumes, the diagonal of the mass matrix, m^3.
    pub masses: Vec<f64>,
}

impl JumpProblem {
    /// The problem of `mesh` with discontinuity weight `omega` per unit area and an optional
    /// `field` multiplying each interior face's weight (paper eq. 26: a heterogeneous or
    /// anisotropic material, or a large value where the shape must not break), in the order of
    /// [`TetMesh::interior_faces`]. Fails naming a weight that is not positive and finite, or a
    /// field of the wrong length.
    pub fn try_new(
        mesh: &TetMesh,
        dimension: Dimension,
        omega: f64,
        field: Option<&[f64]>,
    ) -> Result<Self, FractureError> {
        if !(omega.is_finite() && omega > 0.0) {
            return Err(FractureError::invalid(
                "discontinuity weight omega",
                omega,
                "a positive finite number",
            ));
        }
        let faces = mesh.interior_faces();
        if let Some(field) = field {
            if field.len() != faces.len() {
                return Err(FractureError::input(format!(
                    "the face weight field has {} values for {} interior faces",
                    field.len(),
                    faces.len()
                )));
            }
            if let Some((face, value)) = field.iter().enumerate().find(|(_, w)| !(w.is_finite() && **w > 0.0)) {
                return Err(FractureError::input(format!(
                    "face weight {value} of interior face {face} must be positive and finite \
                     (use a large weight, not zero or infinity, for faces that must not break)"
                )));
            }
        }
        let weights = faces
            .iter()
            .enumerate()
            .map(|(i, f)| omega * f.area * field.map_or(1.0, |w| w[i]))
            .collect();
        Ok(Self {
            tets: mesh.tets().len(),
            dimension,
            faces: faces.iter().map(|f| f.tets).collect(),
            weights,
            masses: mesh.volumes().to_vec(),
        })
    }

    /// Unknowns of one mode: tets times components.
    pub fn unknowns(&self) -> usize {
        self.tets * self.dimension.components()
    }

    /// The jump `u_a - u_b` of face `face` for the field `u` (components interleaved per tet),
    /// written into `out` (length `d`).
    pub fn jump(&self, u: &[f64], face: usize, out: &mut [f64]) {
        let d = self.dimension.components();
        let [a, b] = self.faces[face].map(|t| t as usize * d);
        for k in 0..d {
            out[k] = u[a + k] - u[b + k];
        }
    }

    /// The discontinuity energy `sum_f w_f ||u_a - u_b||`.
    pub fn energy(&self, u: &[f64]) -> f64 {
        let d = self.dimension.components();
        let mut jump = [0.0; 3];
        (0..self.faces.len())
            .map(|f| {
                self.jump(u, f, &mut jump[..d]);
                self.weights[f] * jump[..d].iter().map(|x| x * x).sum::<f64>().sqrt()
            })
            .sum()
    }

    /// `u^T M v`, the mass inner product (each component weighted by its tet's volume).
    pub fn mass_dot(&self, u: &[f64], v: &[f64]) -> f64 {
        let d = self.dimension.components();
        u.iter()
            .zip(v)
            .enumerate()
            .map(|(i, (a, b))| self.masses[i / d] * a * b)
            .sum()
    }

    /// `M u`.
    pub fn mass_times(&self, u: &[f64]) -> Vec<f64> {
        let d = self.dimension.components();
        u.iter().enumerate().map(|(i, a)| self.masses[i / d] * a).collect()
    }
}
