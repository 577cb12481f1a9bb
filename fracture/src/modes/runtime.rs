//! Impact projection at run time (Sellán et al. 2023 sections 3.3 and 3.4): an impact becomes a
//! displacement field by one mat-vec, and the faces where that field jumps break.
//!
//! An impact at material point `p` with direction `n` and impulse `s` (N s) loads the vertices
//! within the impact radius of `p` with a field `g_hat` of total `s n` (`s` alone for scalar
//! modes), blurs it with one implicit heat step `g = (M + l^2 K)^-1 M g_hat` over the vertex
//! Laplacian `K` and lumped mass `M` ([`super::guesses`]; `l` is the blur length, so the step's
//! "time" `h = l^2` is scale-free), averages it onto tets, and then either
//! - projects it onto the modes, `u = U U^T M g` (the paper's projection), or
//! - projects it onto constants per atomic piece (the reference implementation's default).
//!
//! Everything between the impact and the piece values is linear and folded into one matrix
//! per vertex at build time, so an impact costs a sum over the vertices in its radius, a
//! product per atomic piece, and a jump per piece-graph edge.
//!
//! Atomic pieces are the tets that stay together in every mode ([`super::atomic_pieces`]): any
//! combination of modes moves each rigidly, so the fragments of an impact are unions of them.
//! Two adjacent pieces separate when `V * ||u_p - u_q||` reaches the body's toughness (N s): the
//! field is an impulse density (N s / m^3), and `V` (the body's volume) makes the threshold an
//! impulse. The model is linear in `s`, so a larger impulse separates a superset of the edges and
//! gives at least as many fragments.

use glam::DVec3;
use shatter_collision::TetMesh;
use shatter_engine::islands::UnionFind;

use super::cholesky::Cholesky;
use super::guesses::VertexLaplacian;
use super::iccm::FractureModes;
use super::ordering::nested_dissection;
use super::pieces::{atomic_pieces, dense_labels};
use crate::error::FractureError;
use crate::prescore::TetPieces;

/// What an impact is projected onto.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Projection {
    /// The modes: `u = U U^T M g` (Sellán et al. section 3.4).
    #[default]
    Modes,
    /// Constants per atomic piece: `u_p` the volume-weighted mean of `g` over piece `p`.
    PieceConstant,
}

/// How impacts are turned into fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProjectionSettings {
    /// What the blurred impact is projected onto.
    pub projection: Projection,
    /// Vertices within this distance of the impact point are loaded, as a fraction of the mesh's
    /// box diagonal (the reference's 0.05 on normalized shapes).
    pub impact_radius: f64,
    /// Blur length `l` of the heat step, as a fraction of the box diagonal (the reference's
    /// `h = 1/30` on normalized shapes is `l = 0.18`).
    pub blur: f64,
    /// Jump, relative to a mode's root mean square value, under which tets are in one atomic
    /// piece.
    pub piece_threshold: f64,
}

impl Default for ProjectionSettings {
    fn default() -> Self {
        Self {
            projection: Projection::Modes,
            impact_radius: 0.05,
            blur: 0.18,
            piece_threshold: super::PIECE_THRESHOLD,
        }
    }
}

/// An impact on a body with modes, in the frame of its tet mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Impact {
    /// Contact point, m.
    pub point: DVec3,
    /// Direction of the impulse on the body (unit).
    pub direction: DVec3,
    /// Impulse magnitude, N s.
    pub magnitude: f64,
}

/// The precomputed runtime of one shape's modes.
#[derive(Clone, Debug, PartialEq)]
pub struct ImpactProjector {
    /// Components per tet.
    pub(super) d: usize,
    /// Values per piece: modes (times d), or pieces for the piece-constant projection.
    pub(super) columns: usize,
    pub(super) projection: Projection,
    pub(super) pieces: TetPieces,
    /// Per atomic piece, the modes' values there (`modes x d`, volume-weighted means).
    pub(super) piece_modes: Vec<f64>,
    /// Adjacent atomic pieces, lower index first, sorted.
    pub(super) edges: Vec<[u32; 2]>,
    /// Used vertices' positions and lumped masses.
    pub(super) positions: Vec<DVec3>,
    pub(super) vertex_mass: Vec<f64>,
    /// Per vertex, per component, the row that maps a unit load there to the projection's
    /// coefficients (`columns` values).
    pub(super) loads: Vec<f64>,
    pub(super) radius: f64,
    pub(super) volume: f64,
}

impl ImpactProjector {
    /// Builds the runtime for `modes` of `mesh` (one sparse factorization and a solve per mode
    /// and component). Fails on modes of another mesh or settings out of range.
    pub fn new(mesh: &TetMesh, modes: &FractureModes, settings: &ProjectionSettings) -> Result<Self, FractureError> {
        for (what, value) in [
            ("impact radius (fraction of the box diagonal)", settings.impact_radius),
            ("blur length (fraction of the box diagonal)", settings.blur),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(FractureError::invalid(what, value, "a positive finite number"));
            }
        }
        let pieces = atomic_pieces(mesh, modes, settings.piece_threshold)?;
        let d = modes.dimension.components();
        let count = pieces.count();
        let bounds = mesh.bounds();
        let diagonal = bounds.size().length();
        let volume: f64 = mesh.volumes().iter().sum();
        let laplacian = VertexLaplacian::of(mesh);
        let n = laplacian.mass.len();
        let h = (settings.blur * diagonal).powi(2);
        let blur = laplacian.stiffness.scaled(h).plus_diagonal(1.0, &laplacian.mass);
        let points: Vec<DVec3> = laplacian
            .vertex_of
            .iter()
            .map(|&v| mesh.vertices()[v as usize])
            .collect();
        let factor = Cholesky::factor(&blur, nested_dissection(&blur, &points)).map_err(|e| {
            FractureError::input(format!(
                "the blur matrix is not positive definite at unknown {}",
                e.unknown
            ))
        })?;
        // Piece volumes and the modes' means per piece.
        let mut piece_volume = vec![0.0; count];
        for (t, &p) in pieces.piece_of_tet().iter().enumerate() {
            piece_volume[p as usize] += mesh.volumes()[t];
        }
        let k = modes.modes.len();
        let mut piece_modes = vec![0.0; count * k * d];
        for (t, &p) in pieces.piece_of_tet().iter().enumerate() {
            let share = mesh.volumes()[t] / piece_volume[p as usize];
            for (j, mode) in modes.modes.iter().enumerate() {
                for c in 0..d {
                    piece_modes[(p as usize * k + j) * d + c] += share * mode[t * d + c];
                }
            }
        }
        // Rows of the load map: for each output column, the tet-space weights w (length tets)
        // such that column = sum_t w_t (P g)_t; then load_v = M_v (M + h K)^-1 P^T w.
        let columns = match settings.projection {
            Projection::Modes => k,
            Projection::PieceConstant => count,
        };
        let tets = mesh.tets().len();
        let mut loads = vec![0.0; n * d * columns];
        let mut work = vec![0.0; factor.work_len()];
        for column in 0..columns {
            for c in 0..d {
                let weight = |t: usize| match settings.projection {
                    Projection::Modes => mesh.volumes()[t] * modes.modes[column][t * d + c],
                    Projection::PieceConstant => {
                        let p = pieces.piece_of_tet()[t] as usize;
                        if p == column {
                            mesh.volumes()[t] / piece_volume[p]
                        } else {
                            0.0
                        }
                    }
                };
                // For the piece-constant projection the components share one row; only c = 0.
                if settings.projection == Projection::PieceConstant && c > 0 {
                    continue;
                }
                let mut x = vec![0.0; n];
                for t in 0..tets {
                    let w = weight(t) / 4.0;
                    if w != 0.0 {
                        for &v in &mesh.tets()[t] {
                            x[laplacian.unknown_of[v as usize] as usize] += w;
                        }
                    }
                }
                factor.solve_in_place(&mut x, &mut work);
                for v in 0..n {
                    loads[(v * d + c) * columns + column] = laplacian.mass[v] * x[v];
                }
            }
        }
        let mut edges: Vec<[u32; 2]> = mesh
            .interior_faces()
            .iter()
            .map(|f| f.tets.map(|t| pieces.piece_of_tet()[t as usize]))
            .filter(|[a, b]| a != b)
            .map(|[a, b]| [a.min(b), a.max(b)])
            .collect();
        edges.sort_unstable();
        edges.dedup();
        Ok(Self {
            d,
            columns,
            projection: settings.projection,
            pieces,
            piece_modes,
            edges,
            positions: points,
            vertex_mass: laplacian.mass,
            loads,
            radius: settings.impact_radius * diagonal,
            volume,
        })
    }

    /// The atomic pieces.
    pub fn pieces(&self) -> &TetPieces {
        &self.pieces
    }

    /// Adjacent atomic pieces.
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// The projected field per atomic piece (`d` values each, an impulse density, N s / m^3)
    /// of `impact`. Fails on a non-finite impact or a zero direction.
    pub fn piece_field(&self, impact: &Impact) -> Result<Vec<f64>, FractureError> {
        if !(impact.point.is_finite() && impact.direction.is_finite() && impact.magnitude.is_finite()) {
            return Err(FractureError::invalid(
                "impact",
                impact,
                "a finite point, direction and magnitude",
            ));
        }
        let length = impact.direction.length();
        if !(length > 0.0) {
            return Err(FractureError::invalid(
                "impact direction",
                impact.direction,
                "a non-zero vector",
            ));
        }
        let direction = impact.direction / length;
        let d = self.d;
        // Loaded vertices: within the radius, or the nearest one.
        let mut loaded: Vec<usize> = (0..self.positions.len())
            .filter(|&v| self.positions[v].distance_squared(impact.point) <= self.radius * self.radius)
            .collect();
        if loaded.is_empty() {
            let nearest = (0..self.positions.len())
                .min_by(|&a, &b| {
                    self.positions[a]
                        .distance_squared(impact.point)
                        .total_cmp(&self.positions[b].distance_squared(impact.point))
                })
                .expect("a mesh has vertices");
            loaded.push(nearest);
        }
        let loaded_mass: f64 = loaded.iter().map(|&v| self.vertex_mass[v]).sum();
        // g_hat = s n / V_r on the loaded vertices: its mass integral is the impulse.
        let load: [f64; 3] = if d == 1 {
            [impact.magnitude / loaded_mass, 0.0, 0.0]
        } else {
            (direction * impact.magnitude / loaded_mass).to_array()
        };
        let mut coefficients = vec![0.0; self.columns];
        for &v in &loaded {
            for (c, &amount) in load.iter().enumerate().take(d) {
                let row = &self.loads[(v * d + c) * self.columns..(v * d + c + 1) * self.columns];
                coefficients.iter_mut().zip(row).for_each(|(a, r)| *a += amount * r);
            }
        }
        let count = self.pieces.count();
        let mut field = vec![0.0; count * d];
        match self.projection {
            Projection::Modes => {
                let k = self.columns;
                for p in 0..count {
                    for (j, a) in coefficients.iter().enumerate() {
                        for c in 0..d {
                            field[p * d + c] += a * self.piece_modes[(p * k + j) * d + c];
                        }
                    }
                }
            }
            Projection::PieceConstant => {
                // Scalar g per piece; a vector impact moves each piece along its direction.
                for p in 0..count {
                    if d == 1 {
                        field[p] = coefficients[p];
                    } else {
                        for c in 0..d {
                            field[p * d + c] = coefficients[p] * direction[c];
                        }
                    }
                }
            }
        }
        Ok(field)
    }

    /// The fragments `impact` breaks the body into when adjacent atomic pieces separate at
    /// `toughness` (N s; see the module docs). Fails on a bad impact or toughness.
    pub fn fragments(&self, impact: &Impact, toughness: f64) -> Result<TetPieces, FractureError> {
        if !(toughness.is_finite() && toughness > 0.0) {
            return Err(FractureError::invalid(
                "toughness (N s)",
                toughness,
                "a positive finite number",
            ));
        }
        let field = self.piece_field(impact)?;
        let d = self.d;
        let mut joined = UnionFind::new(self.pieces.count());
        for &[a, b] in &self.edges {
            let (a, b) = (a as usize, b as usize);
            let jump: f64 = (0..d)
                .map(|c| (field[a * d + c] - field[b * d + c]).powi(2))
                .sum::<f64>()
                .sqrt();
            if self.volume * jump < toughness {
                joined.union(a, b);
            }
        }
        let fragment_of_piece = dense_labels(&mut joined);
        let labels = self
            .pieces
            .piece_of_tet()
            .iter()
            .map(|&p| fragment_of_piece[p as usize])
            .collect();
        Ok(TetPieces::from_dense_labels(labels))
    }
}
