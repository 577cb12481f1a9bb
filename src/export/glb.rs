//! The binary side of glTF: one buffer of little-endian arrays described by buffer views and
//! accessors, and the GLB container that holds the JSON and the buffer in one file.
//!
//! glTF 2.0 specification, section 3.6 (buffers, buffer views, accessors) and section 4.4 (GLB):
//! - every accessor's offset is a multiple of its component size; all our components are 4 bytes
//!   wide (`f32`, `u32`), and each view starts on a 4-byte boundary, so that holds everywhere;
//! - the file is a 12-byte header (magic `glTF`, version 2, total length) and chunks of
//!   (length, type, data), the JSON chunk first, padded to 4 bytes with spaces (0x20), then the
//!   BIN chunk padded with zeros. The buffer's `byteLength` is the unpadded length.

use serde_json::{Value, json};

use super::error::ExportError;

/// `glTF` read as a little-endian u32.
pub(crate) const GLB_MAGIC: u32 = 0x4654_6C67;
/// `JSON` read as a little-endian u32.
pub(crate) const CHUNK_JSON: u32 = 0x4E4F_534A;
/// `BIN\0` read as a little-endian u32.
pub(crate) const CHUNK_BIN: u32 = 0x004E_4942;

/// glTF componentType for `f32`.
const FLOAT: u32 = 5126;
/// glTF componentType for `u32`.
const UNSIGNED_INT: u32 = 5125;
/// bufferView target for vertex attributes.
const ARRAY_BUFFER: u32 = 34962;
/// bufferView target for indices.
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// The buffer being filled, with the views and accessors that describe it.
#[derive(Default)]
pub(crate) struct BufferBuilder {
    pub bytes: Vec<u8>,
    pub views: Vec<Value>,
    pub accessors: Vec<Value>,
}

impl BufferBuilder {
    /// Appends `data` as a new buffer view (4-byte aligned) and returns the view's index.
    fn push_view(&mut self, data: impl Iterator<Item = [u8; 4]>, target: Option<u32>) -> usize {
        pad(&mut self.bytes, 0);
        let offset = self.bytes.len();
        self.bytes.extend(data.flatten());
        let mut view = json!({
            "buffer": 0,
            "byteOffset": offset,
            "byteLength": self.bytes.len() - offset,
        });
        if let Some(target) = target {
            view["target"] = json!(target);
        }
        self.views.push(view);
        self.views.len() - 1
    }

    /// A new accessor of `count` elements of `kind` ("SCALAR", "VEC3", ...) over the whole view.
    fn push_accessor(&mut self, view: usize, component: u32, count: usize, kind: &str) -> usize {
        self.accessors.push(json!({
            "bufferView": view,
            "componentType": component,
            "count": count,
            "type": kind,
        }));
        self.accessors.len() - 1
    }

    /// Vertex positions, with the `min` and `max` the specification requires of POSITION,
    /// computed from the `f32` values actually stored so a validator finds them exact.
    pub fn positions(&mut self, points: &[[f32; 3]]) -> usize {
        let accessor = self.vec3(points, Some(ARRAY_BUFFER));
        let (min, max) = bounds(points);
        self.accessors[accessor]["min"] = json!(min);
        self.accessors[accessor]["max"] = json!(max);
        accessor
    }

    /// An array of `f32` 3-vectors (normals, translations, scales); `target` is the bufferView
    /// target (vertex attributes) or `None` (animation data).
    pub fn vec3(&mut self, values: &[[f32; 3]], target: Option<u32>) -> usize {
        let view = self.push_view(values.iter().flatten().map(|x| x.to_le_bytes()), target);
        self.push_accessor(view, FLOAT, values.len(), "VEC3")
    }

    /// Vertex normals: unit `f32` 3-vectors.
    pub fn normals(&mut self, normals: &[[f32; 3]]) -> usize {
        self.vec3(normals, Some(ARRAY_BUFFER))
    }

    /// An array of `f32` 4-vectors (rotations as x, y, z, w) for animation outputs.
    pub fn vec4(&mut self, values: &[[f32; 4]]) -> usize {
        let view = self.push_view(values.iter().flatten().map(|x| x.to_le_bytes()), None);
        self.push_accessor(view, FLOAT, values.len(), "VEC4")
    }

    /// Animation key times, s, with the `min` and `max` the specification requires of sampler
    /// inputs.
    pub fn times(&mut self, times: &[f32]) -> usize {
        let view = self.push_view(times.iter().map(|t| t.to_le_bytes()), None);
        let accessor = self.push_accessor(view, FLOAT, times.len(), "SCALAR");
        let min = times.iter().copied().fold(f32::INFINITY, f32::min);
        let max = times.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        self.accessors[accessor]["min"] = json!([min]);
        self.accessors[accessor]["max"] = json!([max]);
        accessor
    }

    /// Triangle vertex indices.
    pub fn indices(&mut self, indices: &[u32]) -> usize {
        let view = self.push_view(indices.iter().map(|i| i.to_le_bytes()), Some(ELEMENT_ARRAY_BUFFER));
        self.push_accessor(view, UNSIGNED_INT, indices.len(), "SCALAR")
    }
}

/// Component-wise bounds of a non-empty point list.
fn bounds(points: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    let mut min = [f32::INFINITY; 3];
    let mut max = [f32::NEG_INFINITY; 3];
    for p in points {
        for k in 0..3 {
            min[k] = min[k].min(p[k]);
            max[k] = max[k].max(p[k]);
        }
    }
    (min, max)
}

/// Pads `bytes` with `fill` to a multiple of 4.
fn pad(bytes: &mut Vec<u8>, fill: u8) {
    while bytes.len() % 4 != 0 {
        bytes.push(fill);
    }
}

/// The GLB file holding `document` and, when it is not empty, the binary buffer `bin`. Fails
/// when the file would exceed the 4 GiB that its 32-bit length field can describe.
pub(crate) fn container(document: &Value, bin: &[u8]) -> Result<Vec<u8>, ExportError> {
    // Serializing a Value built from finite numbers and strings cannot fail.
    let mut json_chunk = serde_json::to_vec(document).unwrap_or_default();
    pad(&mut json_chunk, b' ');
    let mut bin_chunk = bin.to_vec();
    pad(&mut bin_chunk, 0);
    let bin_total = if bin.is_empty() { 0 } else { 8 + bin_chunk.len() };
    let total = 12 + 8 + json_chunk.len() + bin_total;
    if u32::try_from(total).is_err() {
        return Err(ExportError::invalid(
            "GLB file size",
            total,
            "at most 4 GiB (2^32 - 1 bytes): export fewer frames or bodies",
        ));
    }
    let mut out = Vec::with_capacity(total);
    for word in [GLB_MAGIC, 2, total as u32, json_chunk.len() as u32, CHUNK_JSON] {
        out.extend(word.to_le_bytes());
    }
    out.extend(&json_chunk);
    if !bin.is_empty() {
        out.extend((bin_chunk.len() as u32).to_le_bytes());
        out.extend(CHUNK_BIN.to_le_bytes());
        out.extend(&bin_chunk);
    }
    Ok(out)
}
