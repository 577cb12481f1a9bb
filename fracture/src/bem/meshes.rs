//! Closed meshes with known elastic solutions, for the oracles, benches and examples: a box with
//! its faces divided into a grid, and a hollow sphere (an outer sphere and an inward-wound cavity);
//! and an even point set on a sphere for the multipole benches.

use glam::DVec3;
use hashbrown::HashMap;
use shatter_collision::TriMesh;

use crate::error::FractureError;

/// How [`grid_box`] spaces its grid lines along each edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grading {
    /// Equal cells.
    Uniform,
    /// Cells shrinking towards the box's edges as `-cos(pi k / n)` (Chebyshev points): the
    /// single-layer density is singular at convex edges (see `bem::solution`), and smaller cells
    /// there halve the interior error of a cube at the same triangle count.
    Cosine,
}

/// A box of `half_extents` (m) centred at the origin, each face divided into a grid of about
/// `spacing` (m) on average, each cell split into two triangles with alternating diagonals;
/// wound outward. Fails on non-positive sizes or more than ten million triangles.
pub fn grid_box(half_extents: DVec3, spacing: f64, grading: Grading) -> Result<TriMesh, FractureError> {
    if !(half_extents.is_finite() && half_extents.min_element() > 0.0) {
        return Err(FractureError::invalid(
            "box half extents (m)",
            half_extents,
            "finite and > 0",
        ));
    }
    if !(spacing.is_finite() && spacing > 0.0) {
        return Err(FractureError::invalid("box spacing (m)", spacing, "finite and > 0"));
    }
    let cells = (half_extents * 2.0 / spacing).round().max(DVec3::ONE);
    let triangles_needed = 4.0 * (cells.x * cells.y + cells.y * cells.z + cells.z * cells.x);
    if triangles_needed > 1e7 {
        return Err(FractureError::invalid(
            "box spacing (m)",
            spacing,
            "a spacing giving at most 1e7 triangles",
        ));
    }
    let n = [cells.x as i64, cells.y as i64, cells.z as i64];
    let mut index: HashMap<[i64; 3], u32> = HashMap::new();
    let mut vertices = Vec::new();
    let grade = |f: f64| match grading {
        Grading::Uniform => 2.0 * f - 1.0,
        Grading::Cosine => -(core::f64::consts::PI * f).cos(),
    };
    let mut vertex = |p: [i64; 3]| {
        *index.entry(p).or_insert_with(|| {
            vertices.push(DVec3::new(
                half_extents.x * grade(p[0] as f64 / n[0] as f64),
                half_extents.y * grade(p[1] as f64 / n[1] as f64),
                half_extents.z * grade(p[2] as f64 / n[2] as f64),
            ));
            (vertices.len() - 1) as u32
        })
    };
    let mut triangles = Vec::new();
    for axis in 0..3 {
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        for side in [0, n[axis]] {
            for i in 0..n[u] {
                for j in 0..n[v] {
                    let corner = |di: i64, dj: i64| {
                        let mut p = [0; 3];
                        p[axis] = side;
                        p[u] = i + di;
                        p[v] = j + dj;
                        p
                    };
                    let q = [
                        vertex(corner(0, 0)),
                        vertex(corner(1, 0)),
                        vertex(corner(1, 1)),
                        vertex(corner(0, 1)),
                    ];
                    // (u, v, axis) is right-handed: counter-clockwise in (u, v) faces +axis.
                    // Diagonals alternate like a chequerboard so no direction is favoured.
                    let q = if (i + j) % 2 == 0 { q } else { [q[1], q[2], q[3], q[0]] };
                    if side == 0 {
                        triangles.push([q[0], q[2], q[1]]);
                        triangles.push([q[0], q[3], q[2]]);
                    } else {
                        triangles.push([q[0], q[1], q[2]]);
                        triangles.push([q[0], q[2], q[3]]);
                    }
                }
            }
        }
    }
    Ok(TriMesh::try_new(vertices, triangles)?)
}

/// A bar of `half_extents` (m) with a V notch across its bottom face (y = -half_extents.y) at
/// mid-length: [`grid_box`] with each vertex lifted by
/// `depth * max(0, 1 - |x| / half_width) * (half_extents.y - y) / (2 half_extents.y)`, so the
/// bottom face dips to `depth` (m) at x = 0 over a width of `2 half_width` (m) and the top face
/// stays flat. The lift is monotone in y, so the mesh stays closed and outward-wound. An even
/// number of cells along x puts the notch root on a row of vertices.
pub fn notched_bar(half_extents: DVec3, spacing: f64, depth: f64, half_width: f64) -> Result<TriMesh, FractureError> {
    if !(depth.is_finite() && depth > 0.0 && depth < half_extents.y) {
        return Err(FractureError::invalid(
            "notch depth (m)",
            depth,
            "finite, > 0 and under the bar's half height",
        ));
    }
    if !(half_width.is_finite() && half_width > 0.0 && half_width < half_extents.x) {
        return Err(FractureError::invalid(
            "notch half width (m)",
            half_width,
            "finite, > 0 and under the bar's half length",
        ));
    }
    let (mut vertices, triangles) = grid_box(half_extents, spacing, Grading::Uniform)?.into_parts();
    for x in &mut vertices {
        let lift = depth * (1.0 - x.x.abs() / half_width).max(0.0);
        x.y += lift * (half_extents.y - x.y) / (2.0 * half_extents.y);
    }
    Ok(TriMesh::try_new(vertices, triangles)?)
}

/// A hollow sphere of inner radius `inner` and outer radius `outer` (m) centred at the origin:
/// two icospheres of `subdivisions` levels each, the inner one wound into the cavity.
pub fn hollow_sphere(inner: f64, outer: f64, subdivisions: u32) -> Result<TriMesh, FractureError> {
    if !(inner.is_finite() && inner > 0.0 && outer.is_finite() && outer > inner) {
        return Err(FractureError::invalid(
            "hollow sphere radii (m)",
            (inner, outer),
            "0 < inner < outer",
        ));
    }
    let (mut vertices, mut triangles) = TriMesh::icosphere(outer, subdivisions).into_parts();
    let offset = vertices.len() as u32;
    let (cavity_vertices, cavity_triangles) = TriMesh::icosphere(inner, subdivisions).into_parts();
    vertices.extend(cavity_vertices);
    triangles.extend(
        cavity_triangles
            .iter()
            .map(|t| [t[0] + offset, t[2] + offset, t[1] + offset]),
    );
    Ok(TriMesh::try_new(vertices, triangles)?)
}

/// `n` points spread evenly over the unit sphere (a Fibonacci lattice), for the multipole
/// benches: every point has neighbours at about the same distance, as on a mesh, with none of
/// the close pairs of random points.
pub fn fibonacci_sphere(n: usize) -> Vec<DVec3> {
    let golden = core::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|i| {
            let z = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
            let r = (1.0 - z * z).sqrt();
            let phi = golden * i as f64;
            DVec3::new(r * phi.cos(), r * phi.sin(), z)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_collision::topology::require_solid;

    #[test]
    fn bem_meshes_grid_box_is_a_closed_outward_box() {
        let mesh = grid_box(DVec3::new(0.5, 0.25, 1.0), 0.1, Grading::Cosine).unwrap();
        require_solid(&mesh).unwrap();
        assert!((mesh.signed_volume() - 1.0).abs() < 1e-12);
        assert_eq!(mesh.triangles().len(), 4 * (10 * 5 + 5 * 20 + 20 * 10));
        let hollow = hollow_sphere(0.5, 1.0, 2).unwrap();
        require_solid(&hollow).unwrap();
    }
}
