//! Initial guesses of the fracture modes: the smallest eigenvectors of the unexploded tet mesh's
//! Laplacian (Sellán et al. 2023 section 3.5, as the reference does it), deterministic where a
//! random start would make every run break differently.
//!
//! The Laplacian is the linear finite-element stiffness `K_ij = sum_t V_t grad phi_i . grad phi_j`
//! over vertices (which is the cotangent Laplacian of tet meshes), with the lumped mass
//! `M_ii = sum_t V_t / 4`. Its smallest eigenpairs `K x = lambda M x` come from a block Krylov
//! method on the shifted inverse `(K + sigma M)^-1 M` (block Lanczos with full
//! re-orthogonalization, Rayleigh-Ritz on `K`): the inverse turns the smallest eigenvalues into
//! the best separated ones, so a few dozen solves against one sparse Cholesky factor find them,
//! and the block of four start vectors finds every vector of an eigenvalue repeated up to four
//! times (a cube's first non-zero eigenvalue is triple). The start block is pseudo-random from a
//! fixed seed: a block built from coordinates would share the shape's symmetries and never reach
//! the eigenvectors of another symmetry class. A vertex eigenvector becomes a tet field by the
//! mean over the tet's four vertices.

use glam::{DMat3, DVec3};
use shatter_collision::TetMesh;
use shatter_integrators::SplitMix64;

use super::cholesky::Cholesky;
use super::dense::symmetric_eigen;
use super::ordering::nested_dissection;
use super::sparse::SymmetricMatrix;
use crate::error::FractureError;

/// Start vectors per Krylov block: the largest eigenvalue multiplicity found reliably.
const BLOCK: usize = 4;
/// Seed of the start block.
const START_SEED: u64 = 0x5e11a2023;
/// Relative eigen-residual `||K x - lambda M x|| / (||K|| ||x||)` at which a Ritz vector is
/// accepted.
const RESIDUAL: f64 = 1e-9;

/// The vertex Laplacian and lumped mass of a tet mesh, over the vertices its tets use.
pub struct VertexLaplacian {
    /// Stiffness `K`, over used vertices.
    pub stiffness: SymmetricMatrix,
    /// Lumped mass per used vertex, m^3.
    pub mass: Vec<f64>,
    /// The mesh vertex of each unknown.
    pub vertex_of: Vec<u32>,
    /// The unknown of each mesh vertex (`u32::MAX` for an unused vertex).
    pub unknown_of: Vec<u32>,
}

impl VertexLaplacian {
    /// The Laplacian of `mesh` (see the module docs).
    pub fn of(mesh: &TetMesh) -> Self {
        let mut unknown_of = vec![u32::MAX; mesh.vertices().len()];
        let mut vertex_of = Vec::new();
        for tet in mesh.tets() {
            for &v in tet {
                if unknown_of[v as usize] == u32::MAX {
                    unknown_of[v as usize] = vertex_of.len() as u32;
                    vertex_of.push(v);
                }
            }
        }
        let mut mass = vec![0.0; vertex_of.len()];
        let mut triplets = Vec::with_capacity(10 * mesh.tets().len());
        for (t, tet) in mesh.tets().iter().enumerate() {
            let p = mesh.tet(t);
            let volume = mesh.volumes()[t];
            let edges = DMat3::from_cols(p[1] - p[0], p[2] - p[0], p[3] - p[0]);
            // Rows of E^-1 are the gradients of the barycentric coordinates 1..3.
            let inverse = edges.inverse().transpose();
            let g = [
                -(inverse.x_axis + inverse.y_axis + inverse.z_axis),
                inverse.x_axis,
                inverse.y_axis,
                inverse.z_axis,
            ];
            let ids = tet.map(|v| unknown_of[v as usize]);
            for i in 0..4 {
                mass[ids[i] as usize] += volume / 4.0;
                for j in 0..=i {
                    let (a, b) = if ids[i] >= ids[j] {
                        (ids[i], ids[j])
                    } else {
                        (ids[j], ids[i])
                    };
                    triplets.push((a, b, volume * g[i].dot(g[j])));
                }
            }
        }
        Self {
            stiffness: SymmetricMatrix::from_lower_triplets(vertex_of.len(), &triplets),
            mass,
            vertex_of,
            unknown_of,
        }
    }
}

/// The `count` smallest eigenpairs of the Laplacian of `mesh`, as (eigenvalues ascending, tet
/// fields: the mean of each eigenvector over each tet's vertices), unit-normalized in the tet
/// mass inner product.
pub fn laplacian_guesses(mesh: &TetMesh, count: usize) -> Result<(Vec<f64>, Vec<Vec<f64>>), FractureError> {
    let laplacian = VertexLaplacian::of(mesh);
    let (values, vectors) = smallest_eigenpairs(&laplacian, mesh.vertices(), count)?;
    let volumes = mesh.volumes();
    let fields = vectors
        .iter()
        .map(|x| {
            let mut field: Vec<f64> = mesh
                .tets()
                .iter()
                .map(|tet| {
                    tet.iter()
                        .map(|&v| x[laplacian.unknown_of[v as usize] as usize])
                        .sum::<f64>()
                        / 4.0
                })
                .collect();
            let norm = field.iter().zip(volumes).map(|(c, v)| v * c * c).sum::<f64>().sqrt();
            field.iter_mut().for_each(|c| *c /= norm);
            field
        })
        .collect();
    Ok((values, fields))
}

/// The `count` smallest eigenpairs of `K x = lambda M x` (see the module docs), M-orthonormal.
pub fn smallest_eigenpairs(
    laplacian: &VertexLaplacian,
    vertices: &[DVec3],
    count: usize,
) -> Result<(Vec<f64>, Vec<Vec<f64>>), FractureError> {
    let n = laplacian.mass.len();
    let count = count.min(n);
    let k = &laplacian.stiffness;
    let m = &laplacian.mass;
    let scale = k.diagonal().iter().sum::<f64>() / m.iter().sum::<f64>();
    let shift = 1e-5 * scale;
    let shifted = k.plus_diagonal(shift, m);
    let points: Vec<DVec3> = laplacian.vertex_of.iter().map(|&v| vertices[v as usize]).collect();
    let factor = Cholesky::factor(&shifted, nested_dissection(&shifted, &points)).map_err(|e| {
        FractureError::input(format!(
            "the tet mesh's Laplacian is not positive definite at vertex {} (pivot {:e}): the mesh has flat tets",
            laplacian.vertex_of[e.unknown], e.pivot
        ))
    })?;
    let mdot = |a: &[f64], b: &[f64]| -> f64 { a.iter().zip(b).zip(m).map(|((x, y), w)| x * y * w).sum() };
    let mut random = SplitMix64::new(START_SEED);
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut block: Vec<Vec<f64>> = (0..BLOCK.min(n))
        .map(|_| (0..n).map(|_| random.range(-1.0, 1.0)).collect())
        .collect();
    let limit = n.min((4 * count).max(count + 24));
    let norm_k = scale * m.iter().cloned().fold(0.0, f64::max);
    let mut work = vec![0.0; factor.work_len()];
    loop {
        // M-orthonormalize the new block against the basis and itself (twice, classical
        // Gram-Schmidt: "twice is enough", Giraud et al. 2005).
        let mut added = 0;
        for mut v in block.drain(..) {
            let before = mdot(&v, &v).sqrt();
            for _pass in 0..2 {
                for q in &basis {
                    let c = mdot(q, &v);
                    v.iter_mut().zip(q).for_each(|(x, y)| *x -= c * y);
                }
            }
            let after = mdot(&v, &v).sqrt();
            if after > 1e-10 * before && basis.len() < n {
                v.iter_mut().for_each(|x| *x /= after);
                basis.push(v);
                added += 1;
            }
        }
        let size = basis.len();
        if size >= count && (size >= limit || added == 0 || size % (2 * BLOCK) == 0) {
            let (values, vectors) = ritz(k, &basis);
            let converged = (0..count).all(|i| {
                let x = &vectors[i];
                let mut kx = vec![0.0; n];
                k.multiply(x, &mut kx);
                let r: f64 = kx
                    .iter()
                    .zip(x)
                    .zip(m)
                    .map(|((a, b), w)| (a - values[i] * w * b).powi(2))
                    .sum::<f64>()
                    .sqrt();
                let xn = x.iter().map(|a| a * a).sum::<f64>().sqrt();
                r <= RESIDUAL * norm_k * xn
            });
            if converged || size >= limit || added == 0 {
                return Ok((values[..count].to_vec(), vectors[..count].to_vec()));
            }
        }
        let start = size - added;
        for q in &basis[start..] {
            let mut w: Vec<f64> = q.iter().zip(m).map(|(a, b)| a * b).collect();
            factor.solve_in_place(&mut w, &mut work);
            block.push(w);
        }
        if block.is_empty() {
            let (values, vectors) = ritz(k, &basis);
            return Ok((values[..count].to_vec(), vectors[..count].to_vec()));
        }
    }
}

/// Rayleigh-Ritz of `K` on the M-orthonormal `basis`: Ritz values ascending and vectors.
fn ritz(k: &SymmetricMatrix, basis: &[Vec<f64>]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let size = basis.len();
    let n = basis[0].len();
    let kq: Vec<Vec<f64>> = basis
        .iter()
        .map(|q| {
            let mut out = vec![0.0; n];
            k.multiply(q, &mut out);
            out
        })
        .collect();
    let mut h = vec![0.0; size * size];
    for i in 0..size {
        for j in 0..=i {
            let v: f64 = basis[i].iter().zip(&kq[j]).map(|(a, b)| a * b).sum();
            h[i * size + j] = v;
            h[j * size + i] = v;
        }
    }
    let (values, s) = symmetric_eigen(h, size);
    let vectors = (0..size)
        .map(|col| {
            let mut x = vec![0.0; n];
            for (row, q) in basis.iter().enumerate() {
                let c = s[row * size + col];
                x.iter_mut().zip(q).for_each(|(a, b)| *a += c * b);
            }
            x
        })
        .collect();
    (values, vectors)
}
