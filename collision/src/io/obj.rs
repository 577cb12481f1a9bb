//! Wavefront OBJ: vertex positions (`v`) and polygons (`f`), the geometry subset of the format
//! (Wavefront Technologies, "Appendix B1: Object Files", Advanced Visualizer manual).
//!
//! Read: `v x y z` (extra components, the `w` weight or the `r g b` colour some writers add, are
//! ignored); `f` polygons of any arity with corners `v`, `v/vt`, `v//vn` or `v/vt/vn`, fan
//! triangulated; positive indices count from 1 over the whole file (a face may name a vertex
//! defined below it), negative ones count back from the last vertex defined above the face; a
//! backslash at the end of a line continues it; `#` starts a comment. Texture coordinates,
//! normals, groups, smoothing, materials, lines, points and the free-form statements are skipped.
//! Any other statement is an error: a file that is not OBJ should not load as an empty mesh.
//! Vertex numbers in error messages are OBJ's, counting from 1.
//!
//! Written: `v` with every coordinate in its shortest exact decimal form and `f` triangles, so
//! reading a written mesh gives back the same bits (for a welded, compact mesh, which is what the
//! readers return).

use std::borrow::Cow;

use glam::DVec3;

use super::text::{self, axis_name, show};
use super::{MeshFormat, finish, triangulate_fan};
use crate::error::GeometryError;
use crate::trimesh::TriMesh;

/// Statements that carry no triangle geometry, skipped (the OBJ appendix's full list).
const SKIPPED: &[&[u8]] = &[
    b"vt",
    b"vn",
    b"vp",
    b"g",
    b"o",
    b"s",
    b"mg",
    b"usemtl",
    b"mtllib",
    b"usemap",
    b"maplib",
    b"l",
    b"p",
    b"cstype",
    b"deg",
    b"bmat",
    b"step",
    b"curv",
    b"curv2",
    b"surf",
    b"parm",
    b"trim",
    b"hole",
    b"scrv",
    b"sp",
    b"end",
    b"con",
    b"lod",
    b"bevel",
    b"c_interp",
    b"d_interp",
    b"trace_obj",
    b"shadow_obj",
    b"ctech",
    b"stech",
    b"call",
    b"csh",
];

/// Reads an OBJ file's bytes into a welded, compacted mesh (see the [module docs](self)).
pub fn read_obj(bytes: &[u8]) -> Result<TriMesh, GeometryError> {
    let mut vertices: Vec<DVec3> = Vec::new();
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    let mut polygon: Vec<u32> = Vec::new();
    // Largest positive (1-based) index and its line: forward references are legal, so positive
    // indices are checked against the final vertex count.
    let mut largest: Option<(u32, usize)> = None;
    for (number, statement) in statements(bytes) {
        let error = |message: String| GeometryError::parse("OBJ", format!("line {number}"), message);
        let line = strip_comment(&statement);
        let mut tokens = text::tokens(line);
        let Some(keyword) = tokens.next() else {
            continue;
        };
        match keyword {
            b"v" => {
                let position = vertex(tokens, vertices.len() + 1).map_err(error)?;
                vertices.push(position);
            }
            b"f" | b"fo" => {
                polygon.clear();
                for token in tokens {
                    let (index, positive) = corner(token, vertices.len()).map_err(error)?;
                    if positive && largest.is_none_or(|(l, _)| index > l) {
                        largest = Some((index, number));
                    }
                    polygon.push(index);
                }
                if polygon.len() < 3 {
                    return Err(error(format!(
                        "a face with {} vertices: faces need at least 3",
                        polygon.len()
                    )));
                }
                triangulate_fan(&polygon, &mut triangles);
            }
            keyword if SKIPPED.contains(&keyword) => {}
            keyword => return Err(error(format!("unknown statement '{}'", show(keyword)))),
        }
    }
    if let Some((index, number)) = largest
        && index as usize >= vertices.len()
    {
        return Err(GeometryError::parse(
            "OBJ",
            format!("line {number}"),
            format!(
                "vertex index {} is out of range: the file defines {} vertices",
                u64::from(index) + 1,
                vertices.len()
            ),
        ));
    }
    finish(MeshFormat::Obj, vertices, triangles)
}

/// Logical lines: physical lines joined where one ends in a backslash, each numbered by the
/// physical line it starts on. A line that starts with `#` is a comment and never continues.
fn statements(bytes: &[u8]) -> impl Iterator<Item = (usize, Cow<'_, [u8]>)> {
    let mut physical = text::lines(bytes, 1);
    std::iter::from_fn(move || {
        let (number, first) = physical.next()?;
        let mut joined = Cow::Borrowed(first);
        if first.trim_ascii_start().first() == Some(&b'#') {
            return Some((number, joined));
        }
        // Extend one buffer in place: copying the joined line per continuation would make a
        // long chain of continued lines quadratic.
        while let Some(head) = joined.trim_ascii_end().strip_suffix(b"\\").map(<[u8]>::len) {
            let Some((_, next)) = physical.next() else {
                joined = Cow::Owned(joined[..head].to_vec());
                break;
            };
            let owned = joined.to_mut();
            owned.truncate(head);
            owned.push(b' ');
            owned.extend_from_slice(next);
        }
        Some((number, joined))
    })
}

/// The line up to its first `#`.
fn strip_comment(line: &[u8]) -> &[u8] {
    line.iter().position(|b| *b == b'#').map_or(line, |end| &line[..end])
}

/// The position of `v` statement `number` (1-based) from its coordinate tokens.
fn vertex<'a>(mut tokens: impl Iterator<Item = &'a [u8]>, number: usize) -> Result<DVec3, String> {
    let mut xyz = [0.0; 3];
    for (axis, slot) in xyz.iter_mut().enumerate() {
        let token = tokens
            .next()
            .ok_or_else(|| format!("vertex {number} has {axis} coordinates: `v` needs x, y and z"))?;
        let value = text::parse_f64(token).ok_or_else(|| {
            format!(
                "vertex {number}: {} coordinate '{}' is not a number",
                axis_name(axis),
                show(token)
            )
        })?;
        if !value.is_finite() {
            return Err(format!(
                "vertex {number} has a non-finite {} coordinate: {}",
                axis_name(axis),
                show(token)
            ));
        }
        *slot = value;
    }
    Ok(DVec3::from_array(xyz))
}

/// The 0-based vertex index of a face corner (`v`, `v/vt`, `v//vn`, `v/vt/vn`) with `defined`
/// vertices above it, and whether it was given as a positive (absolute) index.
fn corner(token: &[u8], defined: usize) -> Result<(u32, bool), String> {
    let position = token.split(|b| *b == b'/').next().unwrap_or_default();
    let raw = text::parse_i64(position)
        .ok_or_else(|| format!("face corner '{}' does not start with a vertex index", show(token)))?;
    let too_large = || format!("vertex index {raw} is out of range: at most 2^32 - 1 vertices are supported");
    match raw {
        0 => Err("vertex index 0: OBJ counts vertices from 1 (or from -1 backwards)".to_string()),
        1.. => Ok((u32::try_from(raw - 1).map_err(|_| too_large())?, true)),
        _ => {
            let back = raw.unsigned_abs();
            let index = (defined as u64).checked_sub(back).ok_or_else(|| {
                format!(
                    "relative vertex index {raw} reaches before the first vertex: {defined} vertices are defined above it"
                )
            })?;
            Ok((u32::try_from(index).map_err(|_| too_large())?, false))
        }
    }
}

/// The OBJ text of `mesh`: a comment, the vertices with exact coordinates, the triangles.
pub fn write_obj(mesh: &TriMesh) -> Vec<u8> {
    use std::fmt::Write;
    let mut out = String::with_capacity(64 * mesh.vertices().len() + 24 * mesh.triangles().len());
    // Writing into a String cannot fail.
    let _ = writeln!(
        out,
        "# {} vertices, {} triangles, counter-clockwise seen from outside",
        mesh.vertices().len(),
        mesh.triangles().len()
    );
    for v in mesh.vertices() {
        out.push('v');
        for c in [v.x, v.y, v.z] {
            out.push(' ');
            text::write_f64(&mut out, c);
        }
        out.push('\n');
    }
    for [a, b, c] in mesh.triangles() {
        let _ = writeln!(out, "f {} {} {}", a + 1, b + 1, c + 1);
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn message(bytes: &str) -> String {
        read_obj(bytes.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn io_obj_reads_polygons_index_forms_and_skips_the_rest() {
        // A unit cube: quads with every corner form, a relative-index face, comments, groups,
        // materials, texture seams (vertex 9 repeats vertex 1), a continued line and a w weight.
        let source = "# cube\nmtllib cube.mtl\no cube\ng side\nusemtl red\ns off\n\
            v 0 0 0 1.0\nv 1 0 0\nv 1 1 0\nv 0 1 0 0.5 0.5 0.5\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n\
            v 0 0 0\nvt 0 0\nvt 1 0\nvn 0 0 1\n\
            f 9 4 3 2\nf 5/1 6/2 7/1 8/2 # top\nf 1//1 5//1 8//1 4//1\n\
            f 2/1/1 3/2/1 \\\n 7/1/1 6/1/1\nf 1 2 6 5\nf -6 -2 -3 -7\n";
        let mesh = read_obj(source.as_bytes()).unwrap();
        assert_eq!(mesh.vertices().len(), 8, "vertex 9 welds onto vertex 1");
        assert_eq!(mesh.triangles().len(), 12);
        assert!((mesh.signed_volume() - 1.0).abs() < 1e-15);
        crate::topology::require_solid(&mesh).unwrap();
        // Relative indices -6 -2 -3 -7 after 9 vertices are 4 8 7 3 (1-based): the +y face.
        assert_eq!(mesh.triangles()[10], [3, 7, 6]);
    }

    #[test]
    fn io_obj_rejects_bad_indices_and_faces_by_line() {
        let v = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
        assert_eq!(
            message(&format!("{v}f 1 2 0\n")),
            "OBJ line 4: vertex index 0: OBJ counts vertices from 1 (or from -1 backwards)"
        );
        assert_eq!(
            message(&format!("{v}\nf 1 2 4\n")),
            "OBJ line 5: vertex index 4 is out of range: the file defines 3 vertices"
        );
        assert_eq!(
            message(&format!("{v}f -1 -2 -4\n")),
            "OBJ line 4: relative vertex index -4 reaches before the first vertex: 3 vertices are defined above it"
        );
        assert_eq!(
            message(&format!("{v}f 1 2\n")),
            "OBJ line 4: a face with 2 vertices: faces need at least 3"
        );
        assert_eq!(
            message(&format!("{v}f 1 a/2 3\n")),
            "OBJ line 4: face corner 'a/2' does not start with a vertex index"
        );
        assert!(message(&format!("{v}f 1 2 5000000000\n")).contains("at most 2^32 - 1"));
        // Forward references are legal.
        assert_eq!(
            read_obj(b"f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 1 0\n")
                .unwrap()
                .triangles()
                .len(),
            1
        );
    }

    #[test]
    fn io_obj_rejects_bad_vertices_by_name() {
        assert_eq!(
            message("v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n"),
            "OBJ line 2: vertex 2 has a non-finite y coordinate: nan"
        );
        assert_eq!(
            message("v 0 0 1e999\n"),
            "OBJ line 1: vertex 1 has a non-finite z coordinate: 1e999"
        );
        assert_eq!(
            message("v 0 0\n"),
            "OBJ line 1: vertex 1 has 2 coordinates: `v` needs x, y and z"
        );
        assert_eq!(
            message("v 0 0,5 1\n"),
            "OBJ line 1: vertex 1: y coordinate '0,5' is not a number"
        );
        assert_eq!(message("solid cube\n"), "OBJ line 1: unknown statement 'solid'");
        assert_eq!(
            message("v 0 0 0\n# only a vertex\n"),
            "OBJ end of file: no triangles (1 vertices): not a triangle mesh"
        );
        // A Latin-1 comment is fine.
        assert!(read_obj(b"# caf\xe9\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3").is_ok());
    }

    #[test]
    fn io_obj_joins_long_chains_of_continued_lines() {
        let mut source = String::from("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 \\\n");
        source.push_str(&" \\\n".repeat(100_000));
        source.push_str("2 3 \\");
        let mesh = read_obj(source.as_bytes()).unwrap();
        assert_eq!(mesh.triangles(), &[[0, 1, 2]]);
        // A comment line does not continue, even when it ends in a backslash.
        assert!(read_obj(b"# note \\\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").is_ok());
    }

    #[test]
    fn io_obj_round_trips_exactly() {
        let mesh = TriMesh::icosphere(1.0 / 3.0, 2);
        assert_eq!(read_obj(&write_obj(&mesh)).unwrap(), mesh);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn io_obj_round_trips_any_finite_coordinates(
            coordinates in prop::collection::vec(
                prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO, 9..60),
            seed in any::<u64>(),
        ) {
            let vertices: Vec<DVec3> = coordinates.chunks_exact(3).map(DVec3::from_slice).collect();
            let n = vertices.len() as u32;
            // Every vertex used, in scrambled triangles.
            let triangles = (0..n).map(|i| [i, (i + 1 + (seed % 7) as u32) % n, (i * 5 + seed as u32 % n) % n]).collect();
            let mesh = super::super::weld::weld_exact(&TriMesh::try_new(vertices, triangles).unwrap());
            let back = read_obj(&write_obj(&mesh)).unwrap();
            prop_assert_eq!(back.triangles(), mesh.triangles());
            for (a, b) in back.vertices().iter().zip(mesh.vertices()) {
                prop_assert_eq!(a.to_array().map(f64::to_bits), b.to_array().map(f64::to_bits));
            }
        }
    }
}
