//! A shape's fracture modes and their runtime matrices on disk: computed once, offline (tens of
//! seconds), loaded by a game in milliseconds.
//!
//! Layout (native little-endian f64 and u32, every section a multiple of 8 bytes): a [`Header`]
//! (magic `SHMODES\0`, [`VERSION`], counts, the mesh fingerprint), then the modes (`modes x tets
//! x d` f64), their energies, per mode its report (7 f64), the atomic piece of every tet (u32,
//! padded to 8 bytes), the piece-graph edges (u32 pairs), the modes' piece means, the loaded
//! vertices' positions (3 f64) and masses, and the load rows. The cut jumps of each mode (a
//! diagnostic of the computation) are not stored. A file from another version, another machine
//! byte order or another mesh is refused by name.

use std::path::Path;

use bytemuck::{Pod, Zeroable};
use glam::DVec3;
use shatter_collision::TetMesh;

use super::admm::Kkt;
use super::iccm::{FractureModes, ModeReport};
use super::problem::Dimension;
use super::runtime::{ImpactProjector, Projection};
use crate::error::FractureError;
use crate::prescore::TetPieces;

/// The first 8 bytes of a modes file.
pub const MAGIC: [u8; 8] = *b"SHMODES\0";
/// The layout version this code writes and reads.
pub const VERSION: u32 = 1;
/// Written as-is: reads back as this only on a machine of the same byte order.
const BYTE_ORDER: u32 = 0x0102_0304;

/// The fixed-size start of a modes file.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Header {
    magic: [u8; 8],
    version: u32,
    byte_order: u32,
    dimension: u32,
    projection: u32,
    tets: u64,
    faces: u64,
    modes: u64,
    pieces: u64,
    edges: u64,
    vertices: u64,
    columns: u64,
    fingerprint: u64,
    radius: f64,
    volume: f64,
}

/// Modes and their runtime, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ModesAsset {
    /// The modes (their `cuts` are empty after loading).
    pub modes: FractureModes,
    /// The runtime projection built from them.
    pub projector: ImpactProjector,
}

/// A 64-bit FNV-1a hash of a tet mesh's vertex positions and tets: a file's modes are used only
/// with the mesh they were computed on.
pub fn mesh_fingerprint(mesh: &TetMesh) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for v in mesh.vertices() {
        eat(bytemuck::cast_slice(&v.to_array()));
    }
    eat(bytemuck::cast_slice(mesh.tets()));
    hash
}

impl ModesAsset {
    /// The asset as bytes, for the mesh `mesh` the modes were computed on.
    pub fn to_bytes(&self, mesh: &TetMesh) -> Vec<u8> {
        let (m, p) = (&self.modes, &self.projector);
        let header = Header {
            magic: MAGIC,
            version: VERSION,
            byte_order: BYTE_ORDER,
            dimension: m.dimension.components() as u32,
            projection: match p.projection {
                Projection::Modes => 0,
                Projection::PieceConstant => 1,
            },
            tets: m.tets as u64,
            faces: m.faces as u64,
            modes: m.modes.len() as u64,
            pieces: p.pieces.count() as u64,
            edges: p.edges.len() as u64,
            vertices: p.positions.len() as u64,
            columns: p.columns as u64,
            fingerprint: mesh_fingerprint(mesh),
            radius: p.radius,
            volume: p.volume,
        };
        let mut out = bytemuck::bytes_of(&header).to_vec();
        for mode in &m.modes {
            out.extend_from_slice(bytemuck::cast_slice(mode));
        }
        out.extend_from_slice(bytemuck::cast_slice(&m.energies));
        for r in &m.reports {
            let row = [
                r.iterations as f64,
                r.change,
                r.kkt.feasibility,
                r.kkt.stationarity,
                r.kkt.gap,
                r.kkt.iterations as f64,
                f64::from(u8::from(r.converged)),
            ];
            out.extend_from_slice(bytemuck::cast_slice(&row));
        }
        put_u32s(&mut out, p.pieces.piece_of_tet());
        let flat: Vec<u32> = p.edges.iter().flatten().copied().collect();
        put_u32s(&mut out, &flat);
        out.extend_from_slice(bytemuck::cast_slice(&p.piece_modes));
        let positions: Vec<f64> = p.positions.iter().flat_map(|v| v.to_array()).collect();
        out.extend_from_slice(bytemuck::cast_slice(&positions));
        out.extend_from_slice(bytemuck::cast_slice(&p.vertex_mass));
        out.extend_from_slice(bytemuck::cast_slice(&p.loads));
        out
    }

    /// Reads an asset from `bytes` for `mesh`, checking the version, the byte order, every
    /// length and that `mesh` is the one the modes were computed on.
    pub fn from_bytes(bytes: &[u8], mesh: &TetMesh) -> Result<Self, FractureError> {
        let mut reader = Reader { bytes, at: 0 };
        let header: Header = bytemuck::pod_read_unaligned(reader.take(size_of::<Header>(), "header")?);
        if header.magic != MAGIC {
            return Err(FractureError::input(
                "not a modes file (it does not start with SHMODES)",
            ));
        }
        if header.version != VERSION {
            return Err(FractureError::input(format!(
                "modes file version {} cannot be read by this build, which reads version {VERSION}: \
                 precompute the modes again",
                header.version
            )));
        }
        if header.byte_order != BYTE_ORDER {
            return Err(FractureError::input(
                "the modes file was written on a machine of the other byte order: precompute it here",
            ));
        }
        let fingerprint = mesh_fingerprint(mesh);
        if header.tets as usize != mesh.tets().len()
            || header.faces as usize != mesh.interior_faces().len()
            || header.fingerprint != fingerprint
        {
            return Err(FractureError::input(format!(
                "the modes file belongs to another mesh: {} tets, {} interior faces, fingerprint {:016x}; \
                 this mesh has {}, {}, {fingerprint:016x}",
                header.tets,
                header.faces,
                header.fingerprint,
                mesh.tets().len(),
                mesh.interior_faces().len()
            )));
        }
        let dimension = match header.dimension {
            1 => Dimension::Scalar,
            3 => Dimension::Vector,
            other => {
                return Err(FractureError::input(format!(
                    "modes file dimension {other}, expected 1 or 3"
                )));
            }
        };
        let projection = match header.projection {
            0 => Projection::Modes,
            1 => Projection::PieceConstant,
            other => return Err(FractureError::input(format!("modes file projection kind {other}"))),
        };
        let d = dimension.components();
        let (tets, count) = (header.tets as usize, header.modes as usize);
        let modes = (0..count)
            .map(|_| reader.f64s(tets * d, "mode values"))
            .collect::<Result<Vec<_>, _>>()?;
        let energies = reader.f64s(count, "mode energies")?;
        let reports = reader
            .f64s(7 * count, "mode reports")?
            .chunks(7)
            .map(|r| ModeReport {
                iterations: r[0] as usize,
                change: r[1],
                kkt: Kkt {
                    feasibility: r[2],
                    stationarity: r[3],
                    gap: r[4],
                    iterations: r[5] as usize,
                },
                converged: r[6] != 0.0,
            })
            .collect();
        let labels = reader.u32s(tets, "atomic pieces")?;
        let pieces = header.pieces as usize;
        if labels.iter().any(|&l| l as usize >= pieces) {
            return Err(FractureError::input(
                "modes file: an atomic piece label is out of range",
            ));
        }
        let edges: Vec<[u32; 2]> = reader
            .u32s(2 * header.edges as usize, "piece edges")?
            .chunks(2)
            .map(|e| [e[0], e[1]])
            .collect();
        if edges.iter().flatten().any(|&p| p as usize >= pieces) {
            return Err(FractureError::input("modes file: a piece edge is out of range"));
        }
        let piece_modes = reader.f64s(pieces * count * d, "piece means")?;
        let vertices = header.vertices as usize;
        let positions = reader
            .f64s(3 * vertices, "vertex positions")?
            .chunks(3)
            .map(|p| DVec3::new(p[0], p[1], p[2]))
            .collect();
        let vertex_mass = reader.f64s(vertices, "vertex masses")?;
        let columns = header.columns as usize;
        let loads = reader.f64s(vertices * d * columns, "load rows")?;
        if reader.at != bytes.len() {
            return Err(FractureError::input(format!(
                "modes file has {} bytes after its end",
                bytes.len() - reader.at
            )));
        }
        let modes = FractureModes {
            dimension,
            tets,
            faces: header.faces as usize,
            modes,
            energies,
            cuts: vec![Vec::new(); count],
            reports,
        };
        let projector = ImpactProjector {
            d,
            columns,
            projection,
            pieces: TetPieces::from_dense_labels(labels),
            piece_modes,
            edges,
            positions,
            vertex_mass,
            loads,
            radius: header.radius,
            volume: header.volume,
        };
        Ok(Self { modes, projector })
    }

    /// Writes the asset to `path`. Fails naming the path on an I/O error.
    pub fn save(&self, mesh: &TetMesh, path: &Path) -> Result<(), FractureError> {
        std::fs::write(path, self.to_bytes(mesh))
            .map_err(|e| FractureError::input(format!("cannot write {}: {e}", path.display())))
    }

    /// Reads the asset at `path` for `mesh`. Fails naming the path or what is wrong with it.
    pub fn load(path: &Path, mesh: &TetMesh) -> Result<Self, FractureError> {
        let bytes =
            std::fs::read(path).map_err(|e| FractureError::input(format!("cannot read {}: {e}", path.display())))?;
        Self::from_bytes(&bytes, mesh).map_err(|e| FractureError::input(format!("{}: {e}", path.display())))
    }
}

/// Appends `values` as u32, padded with zeros to a multiple of 8 bytes.
fn put_u32s(out: &mut Vec<u8>, values: &[u32]) {
    out.extend_from_slice(bytemuck::cast_slice(values));
    if values.len() % 2 == 1 {
        out.extend_from_slice(&[0; 4]);
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, length: usize, what: &str) -> Result<&'a [u8], FractureError> {
        let end = self
            .at
            .checked_add(length)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| FractureError::input(format!("modes file ends inside its {what} (truncated or corrupt)")))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn f64s(&mut self, count: usize, what: &str) -> Result<Vec<f64>, FractureError> {
        let bytes = self.take(count.saturating_mul(8), what)?;
        let values: Vec<f64> = bytes.chunks_exact(8).map(bytemuck::pod_read_unaligned).collect();
        if values.iter().any(|v| !v.is_finite()) {
            return Err(FractureError::input(format!(
                "modes file: a non-finite value in its {what}"
            )));
        }
        Ok(values)
    }

    fn u32s(&mut self, count: usize, what: &str) -> Result<Vec<u32>, FractureError> {
        let padded = count + count % 2;
        let bytes = self.take(padded.saturating_mul(4), what)?;
        let mut values: Vec<u32> = bytes.chunks_exact(4).map(bytemuck::pod_read_unaligned).collect();
        values.truncate(count);
        Ok(values)
    }
}
