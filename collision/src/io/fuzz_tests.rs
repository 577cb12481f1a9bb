//! No reader panics, whatever the bytes: random bytes, and valid files mutated by byte flips,
//! truncation, inserted garbage lines and inflated numbers, fed to every reader. A call passes if
//! it returns, `Ok` or `Err`; an `Ok` mesh must also be non-empty with in-range indices (which
//! `TriMesh` guarantees) and an `Err` must have a message.

use proptest::prelude::*;

use super::{read_obj, read_ply, read_stl, write_obj, write_stl};
use crate::trimesh::TriMesh;

/// Every reader on the same bytes.
fn read_all(bytes: &[u8]) -> Result<(), TestCaseError> {
    for result in [read_obj(bytes), read_stl(bytes), read_ply(bytes)] {
        match result {
            Ok(mesh) => prop_assert!(!mesh.is_empty()),
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }
    Ok(())
}

fn obj_seeds() -> Vec<Vec<u8>> {
    let cube = "# cube\nmtllib cube.mtl\no cube\ng side\nusemtl red\ns off\n\
        v 0 0 0 1.0\nv 1 0 0\nv 1 1 0\nv 0 1 0 0.5 0.5 0.5\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n\
        v 0 0 0\nvt 0 0\nvt 1 0\nvn 0 0 1\n\
        f 9 4 3 2\nf 5/1 6/2 7/1 8/2 # top\nf 1//1 5//1 8//1 4//1\n\
        f 2/1/1 3/2/1 \\\n 7/1/1 6/1/1\nf 1 2 6 5\nf -6 -2 -3 -7\n";
    vec![cube.as_bytes().to_vec(), write_obj(&TriMesh::icosphere(0.7, 1))]
}

fn stl_seeds() -> Vec<Vec<u8>> {
    let ascii = "solid tet\nfacet normal 0 0 -1\n outer loop\n  vertex 0 0 0\n  vertex 0 1 0\n  vertex 1 0 0\n \
        endloop\nendfacet\nfacet normal 1 1 1\n outer loop\n  vertex 1 0 0\n  vertex 0 1 0\n  vertex 0 0 1\n \
        endloop\nendfacet\nendsolid tet\n";
    let binary = write_stl(&TriMesh::icosphere(1.0, 0)).expect("a small sphere fits f32");
    // A binary file whose header starts with "solid", as many exporters write.
    let mut solid_header = binary.clone();
    solid_header[..6].copy_from_slice(b"solid ");
    vec![ascii.as_bytes().to_vec(), binary, solid_header]
}

fn ply_seeds() -> Vec<Vec<u8>> {
    ["ascii", "binary_little_endian", "binary_big_endian"]
        .into_iter()
        .flat_map(|format| {
            [
                super::ply_tests::cube(format, false),
                super::ply_tests::cube(format, true),
            ]
        })
        .collect()
}

/// One edit of a file. Positions are taken modulo the file's length at the time of the edit.
#[derive(Clone, Debug)]
enum Mutation {
    /// XOR one byte.
    Flip { at: usize, mask: u8 },
    /// Cut the file.
    Truncate { at: usize },
    /// Insert a line of arbitrary bytes at the start of the line holding `at`.
    InsertLine { at: usize, garbage: Vec<u8> },
    /// Overwrite the digit run holding `at` with a huge number, to inflate counts and indices.
    Inflate { at: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 1..=255u8).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        1 => any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        2 => (any::<usize>(), prop::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(at, garbage)| Mutation::InsertLine { at, garbage }),
        2 => any::<usize>().prop_map(|at| Mutation::Inflate { at }),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        if bytes.is_empty() {
            break;
        }
        let len = bytes.len();
        match m {
            Mutation::Flip { at, mask } => bytes[at % len] ^= mask,
            Mutation::Truncate { at } => bytes.truncate(at % len),
            Mutation::InsertLine { at, garbage } => {
                let start = bytes[..at % len].iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
                let mut line = garbage.clone();
                line.push(b'\n');
                bytes.splice(start..start, line);
            }
            Mutation::Inflate { at } => {
                let at = at % len;
                let start = bytes[..at]
                    .iter()
                    .rposition(|b| !b.is_ascii_digit())
                    .map_or(0, |p| p + 1);
                let end = bytes[at..]
                    .iter()
                    .position(|b| !b.is_ascii_digit())
                    .map_or(len, |p| at + p);
                bytes.splice(start..end, b"4294967295".iter().copied());
            }
        }
    }
    bytes
}

/// Prefixes that get random bytes past the first check of each format.
const PREFIXES: [&[u8]; 6] = [
    b"",
    b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf ",
    b"solid x\nfacet normal 0 0 1\nouter loop\nvertex ",
    b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n",
    b"ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uint uint vertex_indices\nend_header\n",
    b"ply\nformat binary_big_endian 1.0\nelement vertex 3\nproperty double x\nproperty double y\nproperty double z\nelement face 2\nproperty list int short vertex_index\nend_header\n",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn io_fuzz_random_bytes_never_panic(
        prefix in 0..PREFIXES.len(),
        random in prop::collection::vec(any::<u8>(), 0..1500),
    ) {
        let mut bytes = PREFIXES[prefix].to_vec();
        bytes.extend(random);
        read_all(&bytes)?;
    }

    #[test]
    fn io_fuzz_mutated_obj_never_panics(
        seed in 0..2usize,
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        read_all(&apply(obj_seeds()[seed].clone(), &mutations))?;
    }

    #[test]
    fn io_fuzz_mutated_stl_never_panics(
        seed in 0..3usize,
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        read_all(&apply(stl_seeds()[seed].clone(), &mutations))?;
    }

    #[test]
    fn io_fuzz_mutated_ply_never_panics(
        seed in 0..6usize,
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        read_all(&apply(ply_seeds()[seed].clone(), &mutations))?;
    }
}

#[test]
fn io_fuzz_seeds_are_valid() {
    for seed in obj_seeds() {
        read_obj(&seed).unwrap();
    }
    for seed in stl_seeds() {
        read_stl(&seed).unwrap();
    }
    for seed in ply_seeds() {
        read_ply(&seed).unwrap();
    }
}
