//! Closed meshes with known elastic solutions, for the oracles, benches and examples: a box with
//! its faces divided into a grid, a flat disc (a plate), and a hollow sphere (an outer sphere and
//! an inward-wound cavity);
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

/// A flat disc (a plate) of `radius` and `thickness` (m), its axis along y, centred at the
/// origin, with edges of about `spacing` (m): each face in rings of `6 k` vertices at radius
/// `k / K` of the rim (nearly equilateral triangles), the rim in as many layers as the thickness
/// holds `spacing`s (at least one); wound outward. Fails on non-positive sizes or more than ten
/// million triangles.
pub fn disc(radius: f64, thickness: f64, spacing: f64) -> Result<TriMesh, FractureError> {
    if !(radius.is_finite() && radius > 0.0 && thickness.is_finite() && thickness > 0.0) {
        return Err(FractureError::invalid(
            "disc radius and thickness (m)",
            (radius, thickness),
            "finite and > 0",
        ));
    }
    if !(spacing.is_finite() && spacing > 0.0) {
        return Err(FractureError::invalid("disc spacing (m)", spacing, "finite and > 0"));
    }
    let rings = (radius / spacing).round().max(1.0) as usize;
    let layers = (thickness / spacing).round().max(1.0) as usize;
    let triangles_estimate = 2 * 6 * rings * rings + 2 * 6 * rings * layers;
    if triangles_estimate > 10_000_000 {
        return Err(FractureError::invalid(
            "disc triangles",
            triangles_estimate,
            "at most ten million",
        ));
    }
    let mut vertices: Vec<DVec3> = Vec::new();
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    // A ring of `n` vertices (n = 0: the centre) at radius `r`, height `y`; its first index.
    let ring = |vertices: &mut Vec<DVec3>, n: usize, r: f64, y: f64| {
        let first = vertices.len() as u32;
        if n == 0 {
            vertices.push(DVec3::new(0.0, y, 0.0));
        }
        for i in 0..n {
            let angle = std::f64::consts::TAU * i as f64 / n as f64;
            vertices.push(DVec3::new(r * angle.cos(), y, r * angle.sin()));
        }
        first
    };
    // Triangles between two rings (`na` and `nb` vertices from `a` and `b`, by angle), each
    // wound so its normal leans along `out(centroid)`.
    let zip = |vertices: &[DVec3],
               triangles: &mut Vec<[u32; 3]>,
               (a, na): (u32, usize),
               (b, nb): (u32, usize),
               out: &dyn Fn(DVec3) -> DVec3| {
        let mut push = |t: [u32; 3]| {
            let [p, q, r] = t.map(|v| vertices[v as usize]);
            let centroid = (p + q + r) / 3.0;
            if (q - p).cross(r - p).dot(out(centroid)) >= 0.0 {
                triangles.push(t);
            } else {
                triangles.push([t[0], t[2], t[1]]);
            }
        };
        if na == 0 {
            for j in 0..nb {
                push([a, b + j as u32, b + ((j + 1) % nb) as u32]);
            }
            return;
        }
        let (mut i, mut j) = (0, 0);
        while i < na || j < nb {
            let angle = |k: usize, n: usize| k as f64 / n as f64;
            let take_a = j >= nb || (i < na && angle(i + 1, na) <= angle(j + 1, nb));
            if take_a {
                push([a + (i % na) as u32, a + ((i + 1) % na) as u32, b + (j % nb) as u32]);
                i += 1;
            } else {
                push([a + (i % na) as u32, b + ((j + 1) % nb) as u32, b + (j % nb) as u32]);
                j += 1;
            }
        }
    };
    let half = 0.5 * thickness;
    for (y, up) in [(half, 1.0), (-half, -1.0)] {
        let mut previous = (ring(&mut vertices, 0, 0.0, y), 0);
        for k in 1..=rings {
            let current = (ring(&mut vertices, 6 * k, radius * k as f64 / rings as f64, y), 6 * k);
            zip(&vertices, &mut triangles, previous, current, &|_| DVec3::Y * up);
            previous = current;
        }
    }
    // The rim: the faces' outer rings, with layers between them.
    let n = 6 * rings;
    let top = (1 + 3 * rings * (rings + 1) - n) as u32;
    let bottom = top + (1 + 3 * rings * (rings + 1)) as u32;
    let outward = |c: DVec3| DVec3::new(c.x, 0.0, c.z);
    let mut previous = top;
    for l in 1..layers {
        let y = half - thickness * l as f64 / layers as f64;
        let current = ring(&mut vertices, n, radius, y);
        zip(&vertices, &mut triangles, (previous, n), (current, n), &outward);
        previous = current;
    }
    zip(&vertices, &mut triangles, (previous, n), (bottom, n), &outward);
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

    /// A disc is a closed outward solid with the volume of its 6K-gon prism (within 1e-12) and
    /// edges between half and twice the spacing; bad sizes are refused by name.
    #[test]
    fn bem_meshes_disc_is_a_closed_outward_plate() {
        let (radius, thickness, spacing) = (0.12, 0.012, 0.01);
        let mesh = disc(radius, thickness, spacing).unwrap();
        require_solid(&mesh).unwrap();
        let n = 6.0 * 12.0;
        let polygon = 0.5 * n * radius * radius * (std::f64::consts::TAU / n).sin();
        assert!(
            (mesh.signed_volume() - polygon * thickness).abs() < 1e-12,
            "{}",
            mesh.signed_volume()
        );
        let v = mesh.vertices();
        for t in mesh.triangles() {
            for k in 0..3 {
                let length = v[t[k] as usize].distance(v[t[(k + 1) % 3] as usize]);
                assert!(length > 0.5 * spacing && length < 2.0 * spacing, "{length}");
            }
        }
        assert!(disc(-1.0, 0.1, 0.01).unwrap_err().to_string().contains("disc radius"));
        assert!(
            disc(1.0, 0.1, f64::NAN)
                .unwrap_err()
                .to_string()
                .contains("disc spacing")
        );
    }
}
