//! Fracture patterns on disk: a small binary format, little-endian, that stores what defines a
//! pattern (sites and weights, or region grids; impact point; frame). What is derived from it
//! (cell planes, candidate lattices) is rebuilt on loading by the same deterministic code, so a
//! loaded pattern equals the saved one exactly.
//!
//! Layout: the 8 bytes `SHATPAT1`; impact point (3 x f64); frame quaternion x, y, z, w
//! (4 x f64); a kind byte. Kind 0 (power diagram): site count n (u32), n sites (3 x f64 each),
//! n weights (f64). Kind 1 (grid regions): region count n (u32), then per region its origin
//! (3 x f64), spacing (f64), sample counts (3 x u32) and samples (f64, x fastest).

use std::path::Path;

use glam::{DQuat, DVec3};
use shatter_collision::{GridSpec, SdfGrid};

use super::pattern::{FracturePattern, Regions};
use crate::error::FractureError;

const MAGIC: &[u8; 8] = b"SHATPAT1";

impl FracturePattern {
    /// The pattern as bytes: the 8 bytes `SHATPAT1`, then what defines the pattern, little-endian
    /// (the layout is described where the format is implemented, `prescored/file.rs`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        put_vec(&mut out, self.impact_point());
        let q = self.frame();
        for x in [q.x, q.y, q.z, q.w] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        match self.regions() {
            Regions::Power(diagram) => {
                out.push(0);
                out.extend_from_slice(&(diagram.sites.len() as u32).to_le_bytes());
                for site in &diagram.sites {
                    put_vec(&mut out, *site);
                }
                for weight in &diagram.weights {
                    out.extend_from_slice(&weight.to_le_bytes());
                }
            }
            Regions::LevelSets(grids) => {
                out.push(1);
                out.extend_from_slice(&(grids.len() as u32).to_le_bytes());
                for grid in grids {
                    let spec = grid.spec();
                    put_vec(&mut out, spec.origin);
                    out.extend_from_slice(&spec.spacing.to_le_bytes());
                    for n in spec.dims {
                        out.extend_from_slice(&(n as u32).to_le_bytes());
                    }
                    for v in grid.values() {
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
        }
        out
    }

    /// A pattern from [`FracturePattern::to_bytes`]'s output. Fails saying what is wrong and
    /// where (bad header, truncated data, an invalid value), never panics.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FractureError> {
        let mut reader = Reader { bytes, at: 0 };
        if reader.take(8)? != MAGIC {
            return Err(FractureError::input(
                "not a fracture pattern: the file does not start with SHATPAT1",
            ));
        }
        let impact = reader.vec()?;
        let [x, y, z, w] = [reader.f64()?, reader.f64()?, reader.f64()?, reader.f64()?];
        let frame = DQuat::from_xyzw(x, y, z, w);
        let kind = reader.take(1)?[0];
        let count = reader.u32()? as usize;
        let pattern = match kind {
            0 => {
                reader.require(count * 32, "sites and weights")?;
                let sites = (0..count).map(|_| reader.vec()).collect::<Result<Vec<_>, _>>()?;
                let weights = (0..count).map(|_| reader.f64()).collect::<Result<Vec<_>, _>>()?;
                Self::power_diagram(sites, weights, impact, frame)?
            }
            1 => {
                let mut grids = Vec::with_capacity(count.min(1 << 16));
                for _ in 0..count {
                    let origin = reader.vec()?;
                    let spacing = reader.f64()?;
                    let dims = [reader.u32()? as usize, reader.u32()? as usize, reader.u32()? as usize];
                    let spec = GridSpec::try_new(origin, spacing, dims)?;
                    reader.require(spec.sample_count() * 8, "grid samples")?;
                    let values = (0..spec.sample_count())
                        .map(|_| reader.f64())
                        .collect::<Result<Vec<_>, _>>()?;
                    grids.push(SdfGrid::try_from_values(spec, values)?);
                }
                Self::from_level_sets(grids, impact, frame)?
            }
            other => {
                return Err(FractureError::invalid(
                    "pattern kind byte",
                    other,
                    "0 (power diagram) or 1 (grid regions)",
                ));
            }
        };
        if reader.at != bytes.len() {
            return Err(FractureError::input(format!(
                "fracture pattern has {} bytes after its end",
                bytes.len() - reader.at
            )));
        }
        Ok(pattern)
    }

    /// Writes the pattern to `path`. Fails naming the path on an I/O error.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), FractureError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_bytes())
            .map_err(|e| FractureError::input(format!("cannot write fracture pattern {}: {e}", path.display())))
    }

    /// Reads a pattern written by [`FracturePattern::save`]. Fails naming the path on a missing
    /// or unreadable file, and saying what is wrong with a malformed one.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, FractureError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| FractureError::input(format!("cannot read fracture pattern {}: {e}", path.display())))?;
        Self::from_bytes(&bytes).map_err(|e| FractureError::input(format!("fracture pattern {}: {e}", path.display())))
    }
}

fn put_vec(out: &mut Vec<u8>, v: DVec3) {
    for x in v.to_array() {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// Reads little-endian values, failing on truncation.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], FractureError> {
        self.require(n, "data")?;
        let slice = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(slice)
    }

    fn require(&self, n: usize, what: &str) -> Result<(), FractureError> {
        if self.bytes.len().saturating_sub(self.at) < n {
            return Err(FractureError::input(format!(
                "fracture pattern truncated: {what} needs {n} bytes at offset {}, {} left",
                self.at,
                self.bytes.len().saturating_sub(self.at)
            )));
        }
        Ok(())
    }

    fn f64(&mut self) -> Result<f64, FractureError> {
        let b = self.take(8)?;
        Ok(f64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn u32(&mut self) -> Result<u32, FractureError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    fn vec(&mut self) -> Result<DVec3, FractureError> {
        Ok(DVec3::new(self.f64()?, self.f64()?, self.f64()?))
    }
}
