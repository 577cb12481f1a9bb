//! PLY reader tests: every encoding and scalar type against one cube, extra elements and list
//! properties skipped, and malformed headers and bodies rejected with their location.

use super::ply::read_ply;
use glam::DVec3;

/// Corners of the unit cube and its quads, counter-clockwise seen from outside.
const CORNERS: [[f64; 3]; 8] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [1.0, 0.0, 1.0],
    [1.0, 1.0, 1.0],
    [0.0, 1.0, 1.0],
];
const QUADS: [[u32; 4]; 6] = [
    [0, 3, 2, 1],
    [4, 5, 6, 7],
    [0, 4, 7, 3],
    [1, 2, 6, 5],
    [0, 1, 5, 4],
    [3, 7, 6, 2],
];

/// One value in a record: its PLY type and its value.
type Value = (&'static str, f64);

/// The bytes of `records` in `format` ("ascii", "binary_little_endian", "binary_big_endian").
fn encode(records: &[Vec<Value>], format: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for record in records {
        if format == "ascii" {
            let line: Vec<String> = record.iter().map(|(_, v)| v.to_string()).collect();
            out.extend_from_slice(line.join(" ").as_bytes());
            out.push(b'\n');
            continue;
        }
        for (ty, v) in record {
            let mut bytes = match *ty {
                "char" | "int8" => (*v as i8).to_le_bytes().to_vec(),
                "uchar" | "uint8" => (*v as u8).to_le_bytes().to_vec(),
                "short" | "int16" => (*v as i16).to_le_bytes().to_vec(),
                "ushort" | "uint16" => (*v as u16).to_le_bytes().to_vec(),
                "int" | "int32" => (*v as i32).to_le_bytes().to_vec(),
                "uint" | "uint32" => (*v as u32).to_le_bytes().to_vec(),
                "float" | "float32" => (*v as f32).to_le_bytes().to_vec(),
                "double" | "float64" => v.to_le_bytes().to_vec(),
                other => panic!("no type {other}"),
            };
            if format == "binary_big_endian" {
                bytes.reverse();
            }
            out.extend_from_slice(&bytes);
        }
    }
    out
}

/// A unit cube with every kind of distraction: mixed coordinate types, a colour, a list in the
/// vertex element, an edge element, a second list in the face element, comments. With
/// `faces_first` the faces come before the vertices and use the `vertex_index` spelling.
pub(super) fn cube(format: &str, faces_first: bool) -> Vec<u8> {
    let vertex_header = "element vertex 8\nproperty float32 x\nproperty double y\nproperty short z\n\
        property uchar red\nproperty list uchar float extra\n";
    let index_name = if faces_first { "vertex_index" } else { "vertex_indices" };
    let face_header =
        format!("element face 6\nproperty list uint8 int32 {index_name}\nproperty list ushort float texcoord\n");
    let edge_header = "element edge 1\nproperty int vertex1\nproperty uint vertex2\n";
    let vertices: Vec<Vec<Value>> = CORNERS
        .iter()
        .map(|[x, y, z]| {
            vec![
                ("float", *x),
                ("double", *y),
                ("short", *z),
                ("uchar", 200.0),
                ("uchar", 2.0),
                ("float", 0.5),
                ("float", -1.5),
            ]
        })
        .collect();
    let faces: Vec<Vec<Value>> = QUADS
        .iter()
        .map(|q| {
            let mut record = vec![("uint8", 4.0)];
            record.extend(q.iter().map(|i| ("int32", f64::from(*i))));
            record.extend([("ushort", 1.0), ("float", 0.25)]);
            record
        })
        .collect();
    let edges = vec![vec![("int", 0.0), ("uint", 1.0)]];
    let mut out = format!("ply\nformat {format} 1.0\ncomment a unit cube\nobj_info by hand\n").into_bytes();
    if faces_first {
        out.extend_from_slice(format!("{face_header}{edge_header}{vertex_header}end_header\n").as_bytes());
        out.extend(encode(&faces, format));
        out.extend(encode(&edges, format));
        out.extend(encode(&vertices, format));
    } else {
        out.extend_from_slice(format!("{vertex_header}{edge_header}{face_header}end_header\n").as_bytes());
        out.extend(encode(&vertices, format));
        out.extend(encode(&edges, format));
        out.extend(encode(&faces, format));
    }
    out
}

/// `bytes` with the first `from` replaced by `to`.
fn replace(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let at = bytes
        .windows(from.len())
        .position(|w| w == from.as_bytes())
        .expect("present");
    [&bytes[..at], to.as_bytes(), &bytes[at + from.len()..]].concat()
}

fn message(bytes: &[u8]) -> String {
    read_ply(bytes).unwrap_err().to_string()
}

#[test]
fn io_ply_reads_every_encoding_and_skips_what_it_does_not_need() {
    let reference = read_ply(&cube("ascii", false)).unwrap();
    assert_eq!(reference.vertices().len(), 8);
    assert_eq!(reference.triangles().len(), 12);
    assert!((reference.signed_volume() - 1.0).abs() < 1e-15);
    crate::topology::require_solid(&reference).unwrap();
    for format in ["ascii", "binary_little_endian", "binary_big_endian"] {
        for faces_first in [false, true] {
            let mesh = read_ply(&cube(format, faces_first)).unwrap();
            assert_eq!(mesh, reference, "{format}, faces first: {faces_first}");
        }
    }
    // CRLF header lines.
    let crlf = String::from_utf8(cube("ascii", false)).unwrap().replace('\n', "\r\n");
    assert_eq!(read_ply(crlf.as_bytes()).unwrap(), reference);
}

#[test]
fn io_ply_reads_every_scalar_type_and_alias() {
    let types = ["char", "uchar", "short", "ushort", "int", "uint", "float", "double"];
    let aliases = [
        "int8", "uint8", "int16", "uint16", "int32", "uint32", "float32", "float64",
    ];
    for ty in types.into_iter().chain(aliases) {
        // Indices of the same type when it is an integer type.
        let index = if ty.starts_with('f') || ty == "double" {
            "int"
        } else {
            ty
        };
        for format in ["ascii", "binary_little_endian", "binary_big_endian"] {
            let mut file = format!(
                "ply\nformat {format} 1.0\nelement vertex 3\nproperty {ty} x\nproperty {ty} y\nproperty {ty} z\n\
                 element face 1\nproperty list {index} {index} vertex_indices\nend_header\n"
            )
            .into_bytes();
            let corners = [[1.0, 2.0, 3.0], [7.0, 2.0, 3.0], [1.0, 127.0, 3.0]];
            let records: Vec<Vec<Value>> = corners.iter().map(|c| c.map(|v| (ty, v)).to_vec()).collect();
            file.extend(encode(&records, format));
            file.extend(encode(
                &[vec![(index, 3.0), (index, 0.0), (index, 1.0), (index, 2.0)]],
                format,
            ));
            let mesh = read_ply(&file).unwrap_or_else(|e| panic!("{ty}, {format}: {e}"));
            assert_eq!(mesh.triangle(0), corners.map(DVec3::from_array), "{ty}, {format}");
        }
    }
}

#[test]
fn io_ply_rejects_malformed_headers() {
    let header = |body: &str| format!("ply\nformat ascii 1.0\n{body}end_header\n").into_bytes();
    assert_eq!(
        message(b"PLY\n"),
        "PLY line 1: not a PLY file: the first line must be 'ply'"
    );
    assert_eq!(
        message(b"ply\nformat ascii 1.0\nelement vertex 3\n"),
        "PLY line 4: the header has no 'end_header' line (truncated?)"
    );
    assert_eq!(
        message(b"ply\nformat binary_middle_endian 1.0\nend_header\n"),
        "PLY line 2: unknown format 'binary_middle_endian'"
    );
    assert_eq!(
        message(&header("element vertex -3\n")),
        "PLY line 3: element 'vertex': count '-3' is not a non-negative integer"
    );
    assert_eq!(
        message(&header("element vertex 3\nproperty half x\n")),
        "PLY line 4: unknown property type 'half'"
    );
    assert_eq!(
        message(&header("property float x\n")),
        "PLY line 3: a property before any element"
    );
    assert_eq!(
        message(&header("element vertex 0\nproperty list float int x\n")),
        "PLY line 4: a list's count type must be an integer type"
    );
    assert_eq!(
        message(&header("elephant\n")),
        "PLY line 3: unknown header line 'elephant'"
    );
    assert_eq!(
        message(b"ply\nelement vertex 0\nend_header\n"),
        "PLY line 3: no 'format' line in the header"
    );
    assert_eq!(
        message(&header("element vertex 0\nproperty float x\nproperty float y\n")),
        "PLY header: the 'vertex' element has no 'z' property"
    );
    let vertex = "element vertex 0\nproperty float x\nproperty float y\nproperty float z\n";
    assert_eq!(
        message(&header(vertex)),
        "PLY header: no 'face' element: not a triangle mesh (a point cloud?)"
    );
    assert_eq!(
        message(&header(&format!(
            "{vertex}element face 0\nproperty list uchar float vertex_indices\n"
        ))),
        "PLY header: face property 'vertex_indices' must be a list of integers"
    );
    assert_eq!(
        message(&header(&format!(
            "{vertex}element face 0\nproperty list uchar int vertex_indices\n"
        ))),
        "PLY end of file: no triangles (0 vertices): not a triangle mesh"
    );
}

#[test]
fn io_ply_rejects_malformed_bodies_with_their_location() {
    let ascii = String::from_utf8(cube("ascii", false)).unwrap();
    // Header: 17 lines; vertices on lines 18 to 25, the edge on 26, faces on 27 to 32.
    let nan = ascii.replacen("1 1 0 200", "1 nan 0 200", 1);
    assert_eq!(
        message(nan.as_bytes()),
        "PLY line 20: element 'vertex' record 2, property 'y': vertex 2 has a non-finite y coordinate: NaN"
    );
    let out_of_range = ascii.replacen("4 0 4 7 3", "4 0 4 8 3", 1);
    assert_eq!(
        message(out_of_range.as_bytes()),
        "PLY line 29: vertex index 8 is out of range: the file has 8 vertices"
    );
    let negative = ascii.replacen("4 0 4 7 3", "4 0 4 -7 3", 1);
    assert_eq!(
        message(negative.as_bytes()),
        "PLY line 29: element 'face' record 2, property 'vertex_indices': vertex index -7 is out of range"
    );
    let two = ascii.replacen("4 0 4 7 3 1 0.25", "2 0 4 1 0.25", 1);
    assert_eq!(
        message(two.as_bytes()),
        "PLY line 29: element 'face' record 2, property 'vertex_indices': a face with 2 vertices: faces need at least 3"
    );
    let word = ascii.replacen("200", "red", 1);
    assert_eq!(
        message(word.as_bytes()),
        "PLY line 18: element 'vertex' record 0, property 'red': 'red' is not an integer"
    );
    let big = ascii.replacen("200", "256", 1);
    assert_eq!(
        message(big.as_bytes()),
        "PLY line 18: element 'vertex' record 0, property 'red': 256 is out of range [0, 255] for its type"
    );
    let truncated = &ascii[..ascii.len() - 10];
    assert!(
        message(truncated.as_bytes()).ends_with("the file ends early (truncated?)"),
        "{}",
        message(truncated.as_bytes())
    );
    let extra = format!("{ascii}5\n");
    assert_eq!(
        message(extra.as_bytes()),
        "PLY line 33: unexpected '5' after the last element"
    );

    let binary = cube("binary_little_endian", false);
    // Records: vertex 24 bytes, edge 8, face 23.
    let body = binary.len() - (8 * 24 + 8 + 6 * 23);
    let cut = &binary[..binary.len() - 8];
    assert_eq!(
        message(cut),
        format!(
            "PLY byte {}: element 'face' record 5, property 'vertex_indices': the file ends at byte {} inside a 4-byte value (truncated?)",
            binary.len() - 10,
            binary.len() - 8
        )
    );
    let mut longer = binary.clone();
    longer.push(0);
    assert_eq!(
        message(&longer),
        format!("PLY byte {}: 1 bytes follow the last element", binary.len())
    );
    // Vertex 0's y (a double after the 4-byte x) set to infinity.
    let mut infinite = binary.clone();
    infinite[body + 4..body + 12].copy_from_slice(&f64::INFINITY.to_le_bytes());
    assert_eq!(
        message(&infinite),
        format!(
            "PLY byte {}: element 'vertex' record 0, property 'y': vertex 0 has a non-finite y coordinate: inf",
            body + 4
        )
    );
}

#[test]
fn io_ply_refuses_absurd_counts_before_allocating() {
    for format in ["ascii", "binary_little_endian", "binary_big_endian"] {
        let file = cube(format, false);
        let vertices = replace(&file, "element vertex 8", "element vertex 4000000000");
        let err = message(&vertices);
        assert!(
            err.contains("element 'vertex' announces 4000000000 records"),
            "{format}: {err}"
        );
        let faces = replace(&file, "element face 6", "element face 18446744073709551615");
        let err = message(&faces);
        assert!(
            err.contains("element 'face' announces 18446744073709551615 records"),
            "{format}: {err}"
        );
    }
    // A face list announcing four billion indices in a binary file.
    let mut file = b"ply\nformat binary_little_endian 1.0\nelement face 1\nproperty list uint uint vertex_indices\n\
        element vertex 0\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
        .to_vec();
    let body = file.len();
    file.extend_from_slice(&4_000_000_000u32.to_le_bytes());
    file.extend_from_slice(&[0; 12]);
    assert_eq!(
        message(&file),
        format!(
            "PLY byte {}: element 'face' record 0, property 'vertex_indices': the file ends at byte {} inside a 4-byte value (truncated?)",
            body + 16,
            body + 16
        )
    );
}

/// An element without properties takes no bytes, whatever its count: it is passed over at once.
#[test]
fn io_ply_empty_elements_cost_nothing() {
    let file = String::from_utf8(cube("ascii", false)).unwrap().replacen(
        "element edge 1",
        "element nothing 4000000000\nelement edge 1",
        1,
    );
    assert_eq!(read_ply(file.as_bytes()).unwrap().triangles().len(), 12);
}
