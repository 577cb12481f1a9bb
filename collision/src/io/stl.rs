//! STL: a list of triangles, each with its own three corners and a facet normal (3D Systems,
//! "StereoLithography Interface Specification", 1989).
//!
//! Binary STL is an 80-byte header, a little-endian `u32` triangle count `n`, then `n` records of
//! 50 bytes (normal and three corners as `f32`, a `u16` attribute), so a binary file is exactly
//! `84 + 50 n` bytes long. ASCII STL starts with `solid`, but so do the headers of many binary
//! files, so the size decides: a file of exactly that size is binary, else one starting with
//! `solid` is ASCII, else it is a binary file of the wrong size and fails, saying by how much.
//! The size check also means a header announcing billions of triangles fails before anything is
//! allocated.
//!
//! Facet normals are ignored when reading (the corners' order defines the orientation, and
//! writers disagree on normals far more than on corners); corners are welded by exact position.
//! Written files are binary with unit facet normals computed from the `f32` corners.

use glam::DVec3;

use super::text::{self, axis_name, show};
use super::{MeshFormat, finish, triangulate_fan};
use crate::error::GeometryError;
use crate::trimesh::TriMesh;

/// Bytes before the first binary triangle record: the header and the count.
const FIRST_RECORD: usize = 84;
/// Bytes per binary triangle record.
const RECORD_BYTES: usize = 50;
/// Header of written files. It must not start with "solid", which would suggest ASCII.
const HEADER: &[u8] = b"binary STL written by shatter: corners counter-clockwise seen from outside";

/// Reads an STL file's bytes, ASCII or binary, into a welded, compacted mesh (see the
/// [module docs](self)).
pub fn read_stl(bytes: &[u8]) -> Result<TriMesh, GeometryError> {
    let exact_binary_size = announced_count(bytes).map(binary_size);
    if exact_binary_size == Some(bytes.len() as u64) || !starts_with_solid(bytes) {
        read_binary(bytes)
    } else {
        // ASCII STL holds no NUL byte: a file that does is a binary one of the wrong size, and
        // the binary reader's message says so better than a complaint about line 1.
        read_ascii(bytes).map_err(|error| {
            if bytes.contains(&0) {
                read_binary(bytes).err().unwrap_or(error)
            } else {
                error
            }
        })
    }
}

/// The triangle count in a binary header, if the file is long enough to have one.
fn announced_count(bytes: &[u8]) -> Option<u32> {
    let count: [u8; 4] = bytes.get(80..FIRST_RECORD)?.try_into().ok()?;
    Some(u32::from_le_bytes(count))
}

/// Size in bytes of a binary STL with `count` triangles.
fn binary_size(count: u32) -> u64 {
    FIRST_RECORD as u64 + RECORD_BYTES as u64 * u64::from(count)
}

fn starts_with_solid(bytes: &[u8]) -> bool {
    let start = bytes.trim_ascii_start();
    start.len() >= 5
        && start[..5].eq_ignore_ascii_case(b"solid")
        && start.get(5).is_none_or(|b| b.is_ascii_whitespace())
}

fn read_binary(bytes: &[u8]) -> Result<TriMesh, GeometryError> {
    let length = bytes.len() as u64;
    let error = |offset: u64, message: String| GeometryError::parse("STL", format!("byte {offset}"), message);
    let Some(count) = announced_count(bytes) else {
        return Err(error(
            length,
            format!(
                "the file ends after {length} bytes, but a binary STL starts with an 80-byte header and a 4-byte triangle count (and an ASCII STL with 'solid')"
            ),
        ));
    };
    let needed = binary_size(count);
    if length < needed {
        let complete = (length - FIRST_RECORD as u64) / RECORD_BYTES as u64;
        return Err(error(
            binary_size(complete as u32),
            format!(
                "the header announces {count} triangles ({needed} bytes) but the file has {length} bytes: it ends inside triangle {complete}"
            ),
        ));
    }
    if length > needed {
        return Err(error(
            needed,
            format!(
                "{} bytes follow the {count} triangles the header announces: the count or the file is wrong",
                length - needed
            ),
        ));
    }
    // The size check bounds `count` by the input length: this allocation is safe.
    let mut vertices = Vec::with_capacity(3 * count as usize);
    for (t, record) in bytes[FIRST_RECORD..].chunks_exact(RECORD_BYTES).enumerate() {
        for corner in 0..3 {
            let mut xyz = [0.0; 3];
            for (axis, slot) in xyz.iter_mut().enumerate() {
                // Skip the 12-byte normal; corners are 12 bytes each.
                let at = 12 + 12 * corner + 4 * axis;
                let value = f32::from_le_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]]);
                if !value.is_finite() {
                    return Err(error(
                        binary_size(t as u32) + at as u64,
                        format!(
                            "vertex {} (triangle {t}, corner {corner}) has a non-finite {} coordinate: {value}",
                            3 * t + corner,
                            axis_name(axis)
                        ),
                    ));
                }
                *slot = f64::from(value);
            }
            vertices.push(DVec3::from_array(xyz));
        }
    }
    let triangles = (0..count).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect();
    finish(MeshFormat::Stl, vertices, triangles)
}

/// ASCII STL: `solid name`, then per facet `facet normal nx ny nz`, `outer loop`, `vertex x y z`
/// (three times; more are fan triangulated), `endloop`, `endfacet`, and finally `endsolid name`.
/// Several solids may follow each other. Keywords are matched without regard to letter case.
fn read_ascii(bytes: &[u8]) -> Result<TriMesh, GeometryError> {
    let mut tokens = Tokens {
        inner: text::lines(bytes, 1)
            .flat_map(|(number, line)| text::tokens(line).map(move |token| (number, token)))
            .peekable(),
    };
    let mut vertices: Vec<DVec3> = Vec::new();
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    let mut polygon: Vec<u32> = Vec::new();
    while tokens.inner.peek().is_some() {
        let number = tokens.keyword("solid", "at the start of a solid")?;
        // The rest of the line is the solid's name.
        tokens.skip_line(number);
        loop {
            let (number, token) = tokens.next("inside a solid: expected 'facet' or 'endsolid'")?;
            if token.eq_ignore_ascii_case(b"endsolid") {
                tokens.skip_line(number);
                break;
            }
            if !token.eq_ignore_ascii_case(b"facet") {
                return Err(ascii_error(
                    number,
                    format!("expected 'facet' or 'endsolid', found '{}'", show(token)),
                ));
            }
            // The normal is ignored: corner order defines orientation.
            tokens.skip_line(number);
            tokens.keyword("outer", "after 'facet'")?;
            tokens.keyword("loop", "after 'outer'")?;
            polygon.clear();
            loop {
                let (number, token) = tokens.next("inside a loop: expected 'vertex' or 'endloop'")?;
                if token.eq_ignore_ascii_case(b"endloop") {
                    if polygon.len() < 3 {
                        return Err(ascii_error(
                            number,
                            format!("a facet with {} vertices: facets need 3", polygon.len()),
                        ));
                    }
                    break;
                }
                if !token.eq_ignore_ascii_case(b"vertex") {
                    return Err(ascii_error(
                        number,
                        format!("expected 'vertex' or 'endloop', found '{}'", show(token)),
                    ));
                }
                let index = u32::try_from(vertices.len())
                    .map_err(|_| ascii_error(number, "more than 2^32 - 1 vertices".to_string()))?;
                vertices.push(tokens.vertex(vertices.len())?);
                polygon.push(index);
            }
            triangulate_fan(&polygon, &mut triangles);
            tokens.keyword("endfacet", "after 'endloop'")?;
        }
    }
    finish(MeshFormat::Stl, vertices, triangles)
}

fn ascii_error(line: usize, message: String) -> GeometryError {
    GeometryError::parse("STL", format!("line {line}"), message)
}

/// The tokens of an ASCII STL with their line numbers.
struct Tokens<'a, I: Iterator<Item = (usize, &'a [u8])>> {
    inner: std::iter::Peekable<I>,
}

impl<'a, I: Iterator<Item = (usize, &'a [u8])>> Tokens<'a, I> {
    /// The next token; at the end of the file, an error saying what was `expected`.
    fn next(&mut self, expected: &str) -> Result<(usize, &'a [u8]), GeometryError> {
        self.inner
            .next()
            .ok_or_else(|| GeometryError::parse("STL", "end of file", format!("the file ends {expected} (truncated?)")))
    }

    /// Consumes `keyword` and returns its line, or fails saying what was found instead.
    fn keyword(&mut self, keyword: &str, place: &str) -> Result<usize, GeometryError> {
        let (number, token) = self.next(&format!("where '{keyword}' is expected {place}"))?;
        if token.eq_ignore_ascii_case(keyword.as_bytes()) {
            Ok(number)
        } else {
            Err(ascii_error(
                number,
                format!("expected '{keyword}' {place}, found '{}'", show(token)),
            ))
        }
    }

    /// Skips the rest of line `number` (a solid's name, a facet's normal).
    fn skip_line(&mut self, number: usize) {
        while self.inner.next_if(|(n, _)| *n == number).is_some() {}
    }

    /// The three coordinates after `vertex`, for vertex `index` (counting from 0).
    fn vertex(&mut self, index: usize) -> Result<DVec3, GeometryError> {
        let mut xyz = [0.0; 3];
        for (axis, slot) in xyz.iter_mut().enumerate() {
            let (number, token) = self.next("inside a vertex")?;
            let name = axis_name(axis);
            let value = text::parse_f64(token).ok_or_else(|| {
                ascii_error(
                    number,
                    format!("vertex {index}: {name} coordinate '{}' is not a number", show(token)),
                )
            })?;
            if !value.is_finite() {
                return Err(ascii_error(
                    number,
                    format!("vertex {index} has a non-finite {name} coordinate: {}", show(token)),
                ));
            }
            *slot = value;
        }
        Ok(DVec3::from_array(xyz))
    }
}

/// The binary STL of `mesh`: corners rounded to `f32`, unit facet normals from the rounded
/// corners (zero for a degenerate triangle), attribute 0.
///
/// Fails when a coordinate does not fit an `f32` or there are more than 2^32 - 1 triangles.
pub fn write_stl(mesh: &TriMesh) -> Result<Vec<u8>, GeometryError> {
    let count = u32::try_from(mesh.triangles().len()).map_err(|_| {
        GeometryError::invalid(
            "triangle count",
            mesh.triangles().len(),
            "at most 2^32 - 1 for binary STL",
        )
    })?;
    // Export is the one place where coordinates become f32.
    let single = |v: DVec3| [v.x as f32, v.y as f32, v.z as f32];
    if let Some((index, v)) = mesh
        .vertices()
        .iter()
        .enumerate()
        .find(|(_, v)| !single(**v).iter().all(|c| c.is_finite()))
    {
        return Err(GeometryError::invalid(
            "vertex coordinate",
            format!("vertex {index} = {v}"),
            "magnitudes below 3.4e38, the f32 range of binary STL",
        ));
    }
    let mut out = Vec::with_capacity(FIRST_RECORD + RECORD_BYTES * mesh.triangles().len());
    out.extend_from_slice(HEADER);
    out.resize(80, b' ');
    out.extend_from_slice(&count.to_le_bytes());
    for t in 0..mesh.triangles().len() {
        let corners = mesh.triangle(t).map(single);
        let [a, b, c] = corners.map(|p| DVec3::from_array(p.map(f64::from)));
        let normal = (b - a).cross(c - a).normalize_or_zero();
        for value in single(normal).into_iter().chain(corners.into_iter().flatten()) {
            out.extend_from_slice(&value.to_le_bytes());
        }
        out.extend_from_slice(&0u16.to_le_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(bytes: &[u8]) -> String {
        read_stl(bytes).unwrap_err().to_string()
    }

    /// A binary STL of `count` triangles whose header starts with `header`, corners from `corner`.
    fn binary(header: &[u8], count: u32, corner: impl Fn(usize) -> [f32; 3]) -> Vec<u8> {
        let mut out = header.to_vec();
        out.resize(80, 0);
        out.extend_from_slice(&count.to_le_bytes());
        for t in 0..count as usize {
            out.extend_from_slice(&[0u8; 12]);
            for c in 0..3 {
                for value in corner(3 * t + c) {
                    out.extend_from_slice(&value.to_le_bytes());
                }
            }
            out.extend_from_slice(&[0, 0]);
        }
        out
    }

    const TETRAHEDRON: &str = "solid tet made by hand\n\
        facet normal 0 0 -1\n outer loop\n  vertex 0 0 0\n  vertex 0 1 0\n  vertex 1 0 0\n endloop\nendfacet\n\
        facet normal 0 -1 0\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 0 1\n endloop\nendfacet\n\
        FACET NORMAL -1 0 0\n OUTER LOOP\n  VERTEX 0 0 0\n  VERTEX 0 0 1\n  VERTEX 0 1 0\n ENDLOOP\nENDFACET\n\
        facet normal 1 1 1\n outer loop\n  vertex 1 0 0\n  vertex 0 1 0\n  vertex 0 0 1\n endloop\nendfacet\n\
        endsolid tet\n";

    #[test]
    fn io_stl_reads_ascii_and_welds_corners() {
        let mesh = read_stl(TETRAHEDRON.as_bytes()).unwrap();
        assert_eq!(mesh.vertices().len(), 4);
        assert_eq!(mesh.triangles().len(), 4);
        assert_eq!(mesh.signed_volume(), 1.0 / 6.0);
        crate::topology::require_solid(&mesh).unwrap();
        // Two solids in one file, CRLF line ends.
        let twice = format!("{TETRAHEDRON}{TETRAHEDRON}").replace('\n', "\r\n");
        assert_eq!(read_stl(twice.as_bytes()).unwrap().triangles().len(), 8);
    }

    #[test]
    fn io_stl_rejects_malformed_ascii_by_line() {
        let truncated = &TETRAHEDRON[..TETRAHEDRON.find("endsolid").unwrap()];
        assert_eq!(
            message(truncated.as_bytes()),
            "STL end of file: the file ends inside a solid: expected 'facet' or 'endsolid' (truncated?)"
        );
        let short = TETRAHEDRON.replacen("  vertex 1 0 0\n endloop", " endloop", 1);
        assert_eq!(
            message(short.as_bytes()),
            "STL line 6: a facet with 2 vertices: facets need 3"
        );
        let nan = TETRAHEDRON.replacen("vertex 0 0 1", "vertex 0 0 NaN", 1);
        assert_eq!(
            message(nan.as_bytes()),
            "STL line 13: vertex 5 has a non-finite z coordinate: NaN"
        );
        let garbage = TETRAHEDRON.replacen("outer loop", "outer space", 1);
        assert_eq!(
            message(garbage.as_bytes()),
            "STL line 3: expected 'loop' after 'outer', found 'space'"
        );
        let word = TETRAHEDRON.replacen("vertex 0 1 0", "vertex 0 one 0", 1);
        assert_eq!(
            message(word.as_bytes()),
            "STL line 5: vertex 1: y coordinate 'one' is not a number"
        );
        assert_eq!(
            message(b"solid empty\nendsolid empty\n"),
            "STL end of file: no triangles (0 vertices): not a triangle mesh"
        );
    }

    #[test]
    fn io_stl_detects_binary_by_size_even_after_solid() {
        let corners = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]];
        let file = binary(b"solid but binary", 1, |i| corners[i]);
        let mesh = read_stl(&file).unwrap();
        assert_eq!(mesh.vertices(), &[DVec3::ZERO, DVec3::Y, DVec3::X]);
        // One byte too many: not ASCII either (it holds NUL bytes), so the size is reported.
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(
            message(&longer),
            "STL byte 134: 1 bytes follow the 1 triangles the header announces: the count or the file is wrong"
        );
        // Without "solid", the size is reported.
        let file = binary(b"plain", 2, |i| corners[i % 3]);
        assert_eq!(
            message(&file[..150]),
            "STL byte 134: the header announces 2 triangles (184 bytes) but the file has 150 bytes: it ends inside triangle 1"
        );
        let mut padded = file.clone();
        padded.extend_from_slice(&[0; 7]);
        assert_eq!(
            message(&padded),
            "STL byte 184: 7 bytes follow the 2 triangles the header announces: the count or the file is wrong"
        );
        assert!(message(&file[..40]).starts_with("STL byte 40: the file ends after 40 bytes"));
    }

    #[test]
    fn io_stl_refuses_absurd_counts_and_names_non_finite_corners() {
        // Four billion triangles announced in a 134-byte file: refused by size, nothing allocated.
        let mut file = binary(b"", 1, |_| [0.0; 3]);
        file[80..84].copy_from_slice(&4_000_000_000u32.to_le_bytes());
        assert!(message(&file).contains("announces 4000000000 triangles (200000000084 bytes)"));
        let file = binary(b"", 2, |i| {
            if i == 4 {
                [0.0, f32::INFINITY, 0.0]
            } else {
                [i as f32; 3]
            }
        });
        // Triangle 1 starts at byte 134; its corner 1 at +24, its y at +4 more.
        assert_eq!(
            message(&file),
            "STL byte 162: vertex 4 (triangle 1, corner 1) has a non-finite y coordinate: inf"
        );
    }

    #[test]
    fn io_stl_binary_round_trip_to_f32_precision() {
        let mesh =
            TriMesh::icosphere(1.0 / 3.0, 2).transformed(glam::DAffine3::from_translation(DVec3::new(0.1, 2.0, -7.0)));
        let file = write_stl(&mesh).unwrap();
        assert_eq!(file.len(), 84 + 50 * mesh.triangles().len());
        assert!(!starts_with_solid(&file));
        let back = read_stl(&file).unwrap();
        assert_eq!(back.vertices().len(), mesh.vertices().len());
        assert_eq!(back.triangles().len(), mesh.triangles().len());
        let round = |v: DVec3| DVec3::new(f64::from(v.x as f32), f64::from(v.y as f32), f64::from(v.z as f32));
        for t in 0..mesh.triangles().len() {
            assert_eq!(back.triangle(t), mesh.triangle(t).map(round), "triangle {t}");
            // The stored normal is the unit outward normal, to f32 precision.
            let at = 84 + 50 * t;
            let normal = DVec3::from_array(
                [0, 1, 2].map(|k| f64::from(f32::from_le_bytes(file[at + 4 * k..at + 4 * k + 4].try_into().unwrap()))),
            );
            let [a, b, c] = back.triangle(t);
            assert!(
                (normal - (b - a).cross(c - a).normalize()).length() < 2e-7,
                "triangle {t}"
            );
        }
        crate::topology::require_solid(&back).unwrap();
        let huge = TriMesh::try_new(vec![DVec3::ZERO, DVec3::X, DVec3::Y * 1e39], vec![[0, 1, 2]]).unwrap();
        assert!(write_stl(&huge).unwrap_err().to_string().contains("vertex 2"));
    }
}
