//! Mass properties from geometry: one implementation per representation (a closed triangle mesh,
//! a level-set grid, a tetrahedral mesh), all reduced to the same volume integrals.
//!
//! Every representation sums exact [`VolumeIntegrals`] of simple pieces (signed tetrahedra from a
//! mesh's triangles, grid cells, tets). [`BodyMassProperties::from_integrals`] turns the sums
//! into mass, centre of mass, principal inertia and the principal frame, as Su 2009 section 4.2
//! does for fragments: `m = rho V`, `c = V^-1 int x`, `I = rho (tr(S) 1 - S)` with `S` the second
//! moment about the centre of mass.

use glam::{DMat3, DQuat, DVec3};
use shatter_integrators::MassProperties;

use rayon::prelude::*;

use crate::error::GeometryError;
use crate::grid::SdfGrid;
use crate::tet_mesh::TetMesh;
use crate::topology::require_solid;
use crate::trimesh::TriMesh;

/// Exact volume integrals of a solid about the origin of its frame: `V = int dV`,
/// `first = int x dV`, `second = int x x^T dV`. Additive over disjoint pieces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeIntegrals {
    /// Volume, m^3.
    pub volume: f64,
    /// First moment `int x dV`, m^4.
    pub first: DVec3,
    /// Second moment `int x x^T dV` (symmetric), m^5.
    pub second: DMat3,
}

impl Default for VolumeIntegrals {
    /// The integrals of nothing: all zero. (Derived `Default` would make `second` the identity,
    /// glam's default matrix.)
    fn default() -> Self {
        Self {
            volume: 0.0,
            first: DVec3::ZERO,
            second: DMat3::ZERO,
        }
    }
}

impl VolumeIntegrals {
    /// The integrals of the tetrahedron `a, b, c, d`, signed: positive when
    /// `(b - a) . ((c - a) x (d - a)) > 0`, negative for the mirror ordering.
    pub fn tetrahedron(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> Self {
        let volume = (b - a).dot((c - a).cross(d - a)) / 6.0;
        let sum = a + b + c + d;
        // int x x^T over a tetrahedron = V / 20 (sum_i v_i v_i^T + s s^T), s = sum_i v_i.
        let outer = |v: DVec3| DMat3::from_cols(v * v.x, v * v.y, v * v.z);
        let second = (outer(a) + outer(b) + outer(c) + outer(d) + outer(sum)) * (volume / 20.0);
        Self {
            volume,
            first: sum * (volume / 4.0),
            second,
        }
    }

    /// The integrals of the axis-aligned box centred at `center` with edge lengths `size`.
    pub fn cuboid(center: DVec3, size: DVec3) -> Self {
        let volume = size.element_product();
        let outer = DMat3::from_cols(center * center.x, center * center.y, center * center.z);
        let own = DMat3::from_diagonal(size * size / 12.0);
        Self {
            volume,
            first: center * volume,
            second: (outer + own) * volume,
        }
    }

    /// The sum of two sets of integrals over disjoint regions.
    pub fn plus(self, other: Self) -> Self {
        Self {
            volume: self.volume + other.volume,
            first: self.first + other.first,
            second: self.second + other.second,
        }
    }

    /// The inertia tensor (kg m^2) of the solid at uniform `density` (kg/m^3) about the origin
    /// of these integrals: `rho (tr(S) 1 - S)` with `S = int x x^T dV`.
    pub fn inertia_tensor(self, density: f64) -> DMat3 {
        let s = self.second;
        (DMat3::from_diagonal(DVec3::splat(s.x_axis.x + s.y_axis.y + s.z_axis.z)) - s) * density
    }

    /// The integrals of the same region in a frame whose origin is at `origin` (old coordinates).
    pub fn about(self, origin: DVec3) -> Self {
        let o = origin;
        let outer = |u: DVec3, v: DVec3| DMat3::from_cols(u * v.x, u * v.y, u * v.z);
        Self {
            volume: self.volume,
            first: self.first - o * self.volume,
            second: self.second - outer(self.first, o) - outer(o, self.first) + outer(o, o) * self.volume,
        }
    }
}

/// Mass properties of a body made from geometry, and where its body frame sits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyMassProperties {
    /// Mass and principal inertia (body frame: origin at the centre of mass, axes along the
    /// principal axes, moments ascending along x, y, z).
    pub mass: MassProperties,
    /// Volume, m^3.
    pub volume: f64,
    /// Centre of mass in the geometry's frame, m.
    pub center_of_mass: DVec3,
    /// Rotation from the principal (body) frame to the geometry's frame.
    pub principal_frame: DQuat,
}

impl BodyMassProperties {
    /// Mass properties of a solid of uniform `density` (kg/m^3) from its volume integrals.
    ///
    /// Fails on a non-positive or non-finite density or volume, naming it.
    pub fn from_integrals(integrals: VolumeIntegrals, density: f64) -> Result<Self, GeometryError> {
        if !(density.is_finite() && density > 0.0) {
            return Err(GeometryError::invalid(
                "density",
                density,
                "a positive finite density in kg/m^3",
            ));
        }
        let volume = integrals.volume;
        if !(volume.is_finite() && volume > 0.0) {
            return Err(GeometryError::invalid(
                "volume",
                volume,
                "a positive finite volume (closed, outward-wound geometry)",
            ));
        }
        let center = integrals.first / volume;
        let about_center = integrals.about(center);
        let tensor = about_center.inertia_tensor(density);
        let (mass, principal_frame) = MassProperties::from_inertia_tensor(density * volume, tensor)
            .map_err(|e| GeometryError::invalid("inertia tensor", e.to_string(), "the inertia of a real solid"))?;
        Ok(Self {
            mass,
            volume,
            center_of_mass: center,
            principal_frame,
        })
    }

    /// Mass properties of the solid bounded by a closed mesh, by exact surface integrals: the sum
    /// of the signed tetrahedra spanned by each triangle and a reference point (the divergence
    /// theorem). Fails, with the defect counts, unless the mesh bounds a solid.
    pub fn from_mesh(mesh: &TriMesh, density: f64) -> Result<Self, GeometryError> {
        require_solid(mesh)?;
        Self::from_integrals(mesh_integrals(mesh), density)
    }
}

impl BodyMassProperties {
    /// Mass properties of the region where a level set is negative, from cell sums (Su 2009
    /// section 4.2).
    ///
    /// With `subsamples = 1` each grid cell counts whole or not at all by the sign at its centre
    /// (the mean of its corners), as the paper does. With `subsamples = m > 1`, cells whose
    /// corners disagree in sign are split into `m^3` sub-cells classified by the trilinear value at
    /// their centres, which removes the staircase but keeps the interpolation's own O(h^2) error
    /// on curved surfaces. Measured on a sphere 64 cells across: volume +0.086 percent with
    /// `m = 1`, -0.054 percent with `m = 4`. Fails on a zero `subsamples`, a bad density or a grid
    /// with no inside.
    pub fn from_grid(grid: &SdfGrid, density: f64, subsamples: usize) -> Result<Self, GeometryError> {
        Self::from_integrals(grid_integrals(grid, subsamples)?, density)
    }
}

/// Volume integrals of the region where `grid` is negative (see
/// [`BodyMassProperties::from_grid`] for `subsamples`).
pub fn grid_integrals(grid: &SdfGrid, subsamples: usize) -> Result<VolumeIntegrals, GeometryError> {
    if subsamples == 0 {
        return Err(GeometryError::invalid("grid subsamples", subsamples, "at least 1"));
    }
    let spec = *grid.spec();
    let [nx, ny, nz] = spec.dims;
    let h = spec.spacing;
    let m = subsamples;
    // Integrate about the grid origin (small coordinates), one z slab per task, then add the
    // slabs in order so the result does not depend on the thread count.
    let slabs: Vec<VolumeIntegrals> = (0..nz - 1)
        .into_par_iter()
        .map(|k| {
            let mut sum = VolumeIntegrals::default();
            for j in 0..ny - 1 {
                for i in 0..nx - 1 {
                    let corner = |di: usize, dj: usize, dk: usize| grid.sample(i + di, j + dj, k + dk);
                    let c = [
                        corner(0, 0, 0),
                        corner(1, 0, 0),
                        corner(0, 1, 0),
                        corner(1, 1, 0),
                        corner(0, 0, 1),
                        corner(1, 0, 1),
                        corner(0, 1, 1),
                        corner(1, 1, 1),
                    ];
                    let low = DVec3::new(i as f64, j as f64, k as f64) * h;
                    let whole = VolumeIntegrals::cuboid(low + DVec3::splat(0.5 * h), DVec3::splat(h));
                    let negative = c.iter().filter(|v| **v < 0.0).count();
                    if m == 1 {
                        if c.iter().sum::<f64>() < 0.0 {
                            sum = sum.plus(whole);
                        }
                    } else if negative == 8 {
                        sum = sum.plus(whole);
                    } else if negative > 0 {
                        sum = sum.plus(subcell_integrals(&c, low, h, m));
                    }
                }
            }
            sum
        })
        .collect();
    let total = slabs
        .into_iter()
        .fold(VolumeIntegrals::default(), VolumeIntegrals::plus);
    Ok(total.about(-spec.origin))
}

/// Integrals of the sub-cells of one cell (corner values `c`, x fastest) whose trilinear value at
/// the sub-cell centre is negative.
fn subcell_integrals(c: &[f64; 8], low: DVec3, h: f64, m: usize) -> VolumeIntegrals {
    let step = h / m as f64;
    let mut sum = VolumeIntegrals::default();
    for c_k in 0..m {
        for c_j in 0..m {
            for c_i in 0..m {
                let t = (DVec3::new(c_i as f64, c_j as f64, c_k as f64) + 0.5) / m as f64;
                let lerp = |a: f64, b: f64, s: f64| a + (b - a) * s;
                let x0 = lerp(lerp(c[0], c[1], t.x), lerp(c[2], c[3], t.x), t.y);
                let x1 = lerp(lerp(c[4], c[5], t.x), lerp(c[6], c[7], t.x), t.y);
                if lerp(x0, x1, t.z) < 0.0 {
                    sum = sum.plus(VolumeIntegrals::cuboid(low + t * h, DVec3::splat(step)));
                }
            }
        }
    }
    sum
}

impl BodyMassProperties {
    /// Mass properties of a tet mesh of uniform `density` (kg/m^3): exact for the tets, so they
    /// err only by how far the tets are from the solid they mesh. Fails on a bad density.
    pub fn from_tet_mesh(mesh: &TetMesh, density: f64) -> Result<Self, GeometryError> {
        Self::from_integrals(tet_integrals(mesh), density)
    }
}

/// Volume integrals of a tet mesh: the exact integrals of its tets, summed about a point near the
/// mesh (round-off independent of where it sits) in fixed chunks added in order, so the bits do
/// not depend on the thread count.
pub fn tet_integrals(mesh: &TetMesh) -> VolumeIntegrals {
    const CHUNK: usize = 4096;
    let reference = mesh.bounds().center();
    let chunks: Vec<VolumeIntegrals> = mesh
        .tets()
        .par_chunks(CHUNK)
        .map(|tets| {
            tets.iter().fold(VolumeIntegrals::default(), |sum, tet| {
                sum.plus(tet_about(mesh, tet, reference))
            })
        })
        .collect();
    let local = chunks
        .into_iter()
        .fold(VolumeIntegrals::default(), VolumeIntegrals::plus);
    local.about(-reference)
}

/// Volume integrals of the tets `tets` (indices) of `mesh`: a piece of it, summed in the given
/// order about the same reference point as [`tet_integrals`].
pub fn tet_set_integrals(mesh: &TetMesh, tets: &[usize]) -> VolumeIntegrals {
    let reference = mesh.bounds().center();
    let local = tets.iter().fold(VolumeIntegrals::default(), |sum, &t| {
        sum.plus(tet_about(mesh, &mesh.tets()[t], reference))
    });
    local.about(-reference)
}

/// The integrals of one tet with its vertices taken relative to `reference`.
fn tet_about(mesh: &TetMesh, tet: &[u32; 4], reference: DVec3) -> VolumeIntegrals {
    let [a, b, c, d] = tet.map(|i| mesh.vertices()[i as usize] - reference);
    VolumeIntegrals::tetrahedron(a, b, c, d)
}

/// Volume integrals of the region a closed, outward-wound mesh bounds (not checked: see
/// [`BodyMassProperties::from_mesh`]).
pub fn mesh_integrals(mesh: &TriMesh) -> VolumeIntegrals {
    // Tetrahedra from a point near the mesh keep round-off independent of where the mesh sits.
    let reference = mesh.bounds().map_or(DVec3::ZERO, |b| b.center());
    let local = (0..mesh.triangles().len()).fold(VolumeIntegrals::default(), |sum, i| {
        let [a, b, c] = mesh.triangle(i).map(|p| p - reference);
        sum.plus(VolumeIntegrals::tetrahedron(DVec3::ZERO, a, b, c))
    });
    local.about(-reference)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DAffine3;

    #[test]
    fn mass_properties_of_a_box_mesh_match_the_closed_form() {
        let half = DVec3::new(0.3, 1.1, 2.5);
        let shift = DVec3::new(10.0, -3.0, 7.0);
        let rotation = DQuat::from_euler(glam::EulerRot::XYZ, 0.4, -1.2, 2.2);
        let mesh = TriMesh::cuboid(half).transformed(DAffine3::from_rotation_translation(rotation, shift));
        let density = 700.0;
        let props = BodyMassProperties::from_mesh(&mesh, density).unwrap();
        let volume = 8.0 * half.element_product();
        let mass = density * volume;
        let exact = MassProperties::solid_cuboid(mass, half).unwrap();
        let rel = |a: f64, b: f64| ((a - b) / b).abs();
        assert!(rel(props.volume, volume) < 1e-12);
        assert!(rel(props.mass.mass(), mass) < 1e-12);
        assert!((props.center_of_mass - shift).length() < 1e-12 * shift.length());
        let mut moments = exact.principal_inertia().to_array();
        moments.sort_by(f64::total_cmp);
        let got = props.mass.principal_inertia();
        for (g, e) in got.to_array().iter().zip(moments) {
            assert!(rel(*g, e) < 1e-12, "{got} vs {moments:?}");
        }
        // The principal frame maps body axes onto the box's rotated axes (up to sign).
        let frame = props.principal_frame;
        let longest_body_axis = frame * DVec3::X; // smallest moment: along the longest edge
        assert!((longest_body_axis.dot(rotation * DVec3::Z).abs() - 1.0).abs() < 1e-10);
    }

    #[test]
    fn mass_properties_of_a_fine_sphere_mesh_approach_the_sphere() {
        let radius = 0.75;
        let mesh = TriMesh::icosphere(radius, 6);
        let props = BodyMassProperties::from_mesh(&mesh, 1000.0).unwrap();
        let volume = 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
        let inertia = 0.4 * 1000.0 * volume * radius * radius;
        // A polyhedron inscribed in the sphere: errors of order (edge / radius)^2, about 1e-4 here.
        assert!((props.volume / volume - 1.0).abs() < 3e-4, "{}", props.volume / volume);
        for moment in props.mass.principal_inertia().to_array() {
            assert!((moment / inertia - 1.0).abs() < 5e-4, "{moment} vs {inertia}");
        }
        assert!(props.center_of_mass.length() < 1e-12);
    }

    #[test]
    fn mass_properties_from_a_sphere_grid_converge_to_the_sphere() {
        use crate::aabb::Aabb;
        use crate::grid::GridSpec;
        let (radius, density) = (0.6, 500.0);
        let center = DVec3::new(0.3, -0.2, 0.1);
        let spec = GridSpec::with_resolution(Aabb::from_center(center, DVec3::splat(radius)), 64, 2).unwrap();
        let grid = SdfGrid::from_fn(spec, |p| (p - center).length() - radius).unwrap();
        let volume = 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
        let inertia = 0.4 * density * volume * radius * radius;
        let mesh = BodyMassProperties::from_mesh(&TriMesh::icosphere(radius, 6), density).unwrap();
        // At 64 cells across, both rules err by about 0.1 percent (h^2 on a curved surface).
        for (subsamples, tolerance) in [(1, 1.5e-3), (4, 1.5e-3)] {
            let props = BodyMassProperties::from_grid(&grid, density, subsamples).unwrap();
            assert!(
                (props.volume / volume - 1.0).abs() < tolerance,
                "m = {subsamples}: {}",
                props.volume / volume
            );
            assert!((props.center_of_mass - center).length() < tolerance * radius);
            for moment in props.mass.principal_inertia().to_array() {
                assert!(
                    (moment / inertia - 1.0).abs() < 2.0 * tolerance,
                    "m = {subsamples}: {moment} vs {inertia}"
                );
            }
            // And it agrees with the mesh's exact surface integrals to the same tolerance.
            assert!((props.volume / mesh.volume - 1.0).abs() < tolerance + 3e-4);
        }
        assert!(
            BodyMassProperties::from_grid(&grid, density, 0)
                .unwrap_err()
                .to_string()
                .contains("subsamples")
        );
        let empty = SdfGrid::from_fn(spec, |_| 1.0).unwrap();
        assert!(
            BodyMassProperties::from_grid(&empty, density, 1)
                .unwrap_err()
                .to_string()
                .contains("volume")
        );
    }

    #[test]
    fn mass_properties_integrals_are_additive_and_shift_exactly() {
        let a = VolumeIntegrals::cuboid(DVec3::new(1.0, 2.0, 3.0), DVec3::new(0.5, 0.25, 2.0));
        let tet = VolumeIntegrals::tetrahedron(DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z);
        assert!((tet.volume - 1.0 / 6.0).abs() < 1e-15);
        assert!((tet.first - DVec3::splat(1.0 / 24.0)).length() < 1e-15);
        // int x^2 over the unit corner tet = 1/60, int xy = 1/120.
        assert!((tet.second.x_axis.x - 1.0 / 60.0).abs() < 1e-15 && (tet.second.y_axis.x - 1.0 / 120.0).abs() < 1e-15);
        let shifted = a.about(DVec3::new(1.0, 2.0, 3.0));
        assert!(shifted.first.length() < 1e-14);
        let back = shifted.about(DVec3::new(-1.0, -2.0, -3.0));
        for c in 0..3 {
            assert!((back.second.col(c) - a.second.col(c)).length() < 1e-13);
        }
        let err = BodyMassProperties::from_integrals(a, 0.0).unwrap_err();
        assert!(err.to_string().contains("density"));
        assert_eq!(VolumeIntegrals::default().second, DMat3::ZERO);
        let err = BodyMassProperties::from_integrals(VolumeIntegrals::default(), 1.0).unwrap_err();
        assert!(err.to_string().contains("volume"));
    }
}
