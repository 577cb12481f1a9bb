//! Binary glTF 2.0 (`.glb`): one node per body, one animation that replays the recording.
//!
//! What the file holds (glTF 2.0 specification, sections 3.5 to 3.11 and 5):
//! - one mesh per distinct (mesh, shading, colour): POSITION and NORMAL as `f32` VEC3 (POSITION
//!   with its `min`/`max`), `u32` indices, triangles (mode 4). Bodies sharing an `Arc<TriMesh>`
//!   and a colour share a glTF mesh, so a wall of identical bricks stores one brick;
//! - one material per distinct colour: metallic-roughness with `baseColorFactor` = the colour
//!   (linear RGB, as glTF defines it), not metallic, fairly rough;
//! - one node per body, its TRS set to the body's first pose;
//! - one animation, "simulation", with a translation and a rotation channel per body (LINEAR: the
//!   viewer lerps positions and slerps rotations between frames; rotations are written as unit
//!   `f32` quaternions x, y, z, w, each on the same side of the 4-sphere as the one before so the
//!   slerp takes the short way), keyed at `frame / frame_rate` s over the frames the body exists.
//!   A body that appears after frame 0 or disappears before the end gets a scale channel (STEP):
//!   0 before its first frame, 1 from it, 0 again after its last, so it pops in and out of
//!   existence exactly at those frames. Such a node's static scale is 0 when it does not exist at
//!   frame 0, so a viewer that ignores the animation shows frame 0 as it was.

use std::collections::HashMap;

use glam::{DQuat, DVec3};
use serde_json::{Value, json};

use super::error::ExportError;
use super::glb::{BufferBuilder, container};
use super::recording::{Normals, Recording, Track};
use crate::collision::TriMesh;

/// Roughness of every material: matte, so shapes read by shading rather than highlights.
const ROUGHNESS: f64 = 0.7;

/// The `.glb` bytes of `recording`. Fails, naming the value, on anything
/// [`Recording::validate`] rejects, or when frame times no longer increase once rounded to `f32`
/// (millions of frames).
pub fn to_glb(recording: &Recording) -> Result<Vec<u8>, ExportError> {
    recording.validate()?;
    let mut buffer = BufferBuilder::default();
    let mut scene = SceneParts::default();
    let frame_count = recording.frame_count();
    for (index, track) in recording.tracks.iter().enumerate() {
        let mesh = scene.mesh(&mut buffer, track);
        let first = track.poses[0];
        let mut node = json!({
            "name": track.name,
            "mesh": mesh,
            "translation": vec3_f32(first.position),
            "rotation": quat_f32(first.orientation),
        });
        if track.first_frame > 0 {
            node["scale"] = json!([0.0, 0.0, 0.0]);
        }
        scene.nodes.push(node);
        scene.animate(&mut buffer, recording, index, frame_count)?;
    }
    let mut document = json!({
        "asset": {
            "version": "2.0",
            "generator": concat!("shatter ", env!("CARGO_PKG_VERSION")),
        },
        "scene": 0,
    });
    let node_list: Vec<usize> = (0..scene.nodes.len()).collect();
    document["scenes"] = if node_list.is_empty() {
        json!([{}])
    } else {
        json!([{ "nodes": node_list }])
    };
    if !scene.channels.is_empty() {
        document["animations"] = json!([{
            "name": "simulation",
            "channels": scene.channels,
            "samplers": scene.samplers,
            "extras": { "frame_rate": recording.frame_rate, "frames": frame_count },
        }]);
    }
    // The schema gives these arrays at least one item: leave out the empty ones.
    for (key, items) in [
        ("nodes", scene.nodes),
        ("meshes", scene.meshes),
        ("materials", scene.materials),
        ("accessors", buffer.accessors),
        ("bufferViews", buffer.views),
    ] {
        if !items.is_empty() {
            document[key] = Value::Array(items);
        }
    }
    if !buffer.bytes.is_empty() {
        document["buffers"] = json!([{ "byteLength": buffer.bytes.len() }]);
    }
    container(&document, &buffer.bytes)
}

/// The JSON arrays of the document other than the buffer's, and the tables that deduplicate them.
#[derive(Default)]
struct SceneParts {
    nodes: Vec<Value>,
    meshes: Vec<Value>,
    materials: Vec<Value>,
    channels: Vec<Value>,
    samplers: Vec<Value>,
    /// glTF mesh index by (the TriMesh's address, shading, material). Only looked up, never
    /// iterated, so its order cannot reach the file.
    mesh_index: HashMap<(usize, Normals, Option<usize>), usize>,
    /// Material index by the colour's bits.
    material_index: HashMap<[u64; 3], usize>,
    /// Key-time accessor by (first frame, last frame).
    times_index: HashMap<(usize, usize), usize>,
}

impl SceneParts {
    /// The glTF mesh for `track`, written to the buffer on first use.
    fn mesh(&mut self, buffer: &mut BufferBuilder, track: &Track) -> usize {
        let material = track.color.map(|color| {
            let next = self.materials.len();
            *self
                .material_index
                .entry(color.to_array().map(f64::to_bits))
                .or_insert_with(|| {
                    self.materials.push(json!({
                        "pbrMetallicRoughness": {
                            "baseColorFactor": [color.x, color.y, color.z, 1.0],
                            "metallicFactor": 0.0,
                            "roughnessFactor": ROUGHNESS,
                        }
                    }));
                    next
                })
        });
        let key = (std::sync::Arc::as_ptr(&track.mesh) as usize, track.normals, material);
        if let Some(index) = self.mesh_index.get(&key) {
            return *index;
        }
        let (positions, normals, indices) = vertex_arrays(&track.mesh, track.normals);
        let mut primitive = json!({
            "attributes": {
                "POSITION": buffer.positions(&positions),
                "NORMAL": buffer.normals(&normals),
            },
            "indices": buffer.indices(&indices),
            "mode": 4,
        });
        if let Some(material) = material {
            primitive["material"] = json!(material);
        }
        self.meshes
            .push(json!({ "name": track.name, "primitives": [primitive] }));
        self.mesh_index.insert(key, self.meshes.len() - 1);
        self.meshes.len() - 1
    }

    /// The translation, rotation and, where needed, scale channels of track `index`.
    fn animate(
        &mut self,
        buffer: &mut BufferBuilder,
        recording: &Recording,
        index: usize,
        frame_count: usize,
    ) -> Result<(), ExportError> {
        let track = &recording.tracks[index];
        let (first, last) = (track.first_frame, track.first_frame + track.poses.len() - 1);
        let times = match self.times_index.get(&(first, last)) {
            Some(accessor) => *accessor,
            None => {
                let times = key_times(recording, first..=last, &track.name)?;
                let accessor = buffer.times(&times);
                self.times_index.insert((first, last), accessor);
                accessor
            }
        };
        let translations: Vec<[f32; 3]> = track.poses.iter().map(|p| vec3_f32(p.position)).collect();
        let mut previous = DQuat::IDENTITY;
        let rotations: Vec<[f32; 4]> = track
            .poses
            .iter()
            .map(|p| {
                let q = p.orientation.normalize();
                // q and -q are the same rotation; slerp between neighbours goes the short way only
                // when they lie in the same hemisphere.
                let q = if q.dot(previous) < 0.0 { -q } else { q };
                previous = q;
                quat_f32(q)
            })
            .collect();
        let translation = buffer.vec3(&translations, None);
        let rotation = buffer.vec4(&rotations);
        self.channel(index, "translation", times, translation, "LINEAR");
        self.channel(index, "rotation", times, rotation, "LINEAR");

        // Existence as a step function of scale: present (1) on [first, last], absent (0) outside.
        let mut keys: Vec<(usize, f32)> = Vec::new();
        if first > 0 {
            keys.extend([(0, 0.0), (first, 1.0)]);
        }
        if last + 1 < frame_count {
            if keys.is_empty() {
                keys.push((0, 1.0));
            }
            keys.push((last + 1, 0.0));
        }
        if !keys.is_empty() {
            let times = key_times(recording, keys.iter().map(|k| k.0), &track.name)?;
            let scales: Vec<[f32; 3]> = keys.iter().map(|k| [k.1; 3]).collect();
            let (input, output) = (buffer.times(&times), buffer.vec3(&scales, None));
            self.channel(index, "scale", input, output, "STEP");
        }
        Ok(())
    }

    fn channel(&mut self, node: usize, path: &str, input: usize, output: usize, interpolation: &str) {
        self.samplers.push(json!({
            "input": input,
            "output": output,
            "interpolation": interpolation,
        }));
        self.channels.push(json!({
            "sampler": self.samplers.len() - 1,
            "target": { "node": node, "path": path },
        }));
    }
}

/// Key times of `frames`, s, as `f32`; fails unless they are finite and strictly increasing after
/// rounding (a viewer would otherwise reject the sampler).
fn key_times(recording: &Recording, frames: impl Iterator<Item = usize>, name: &str) -> Result<Vec<f32>, ExportError> {
    let times: Vec<f32> = frames.map(|frame| recording.time(frame) as f32).collect();
    if let Some(bad) = times.windows(2).position(|w| !(w[1] > w[0] && w[1].is_finite())) {
        return Err(ExportError::invalid(
            format!("key time {} of body {name:?}", bad + 1),
            times[bad + 1],
            "key times strictly increasing in f32: fewer frames or a higher frame rate",
        ));
    }
    Ok(times)
}

/// Vertex positions, unit normals and triangle indices of `mesh` shaded with `normals`.
fn vertex_arrays(mesh: &TriMesh, normals: Normals) -> (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u32>) {
    let face_normal = |t: usize| {
        let [a, b, c] = mesh.triangle(t);
        (b - a).cross(c - a)
    };
    match normals {
        Normals::Flat => {
            let mut positions = Vec::with_capacity(3 * mesh.triangles().len());
            let mut out_normals = Vec::with_capacity(positions.capacity());
            for t in 0..mesh.triangles().len() {
                let normal = vec3_f32(unit_or_up(face_normal(t)));
                for corner in mesh.triangle(t) {
                    positions.push(vec3_f32(corner));
                    out_normals.push(normal);
                }
            }
            let indices = (0..positions.len() as u32).collect();
            (positions, out_normals, indices)
        }
        Normals::Smooth => {
            // Area-weighted vertex normals (the unnormalized face normal is twice the area times
            // the unit normal), over the used vertices only: glTF viewers would still upload
            // unused ones, and their normals would be undefined.
            let mut sums = vec![DVec3::ZERO; mesh.vertices().len()];
            for (t, triangle) in mesh.triangles().iter().enumerate() {
                let n = face_normal(t);
                for i in triangle {
                    sums[*i as usize] += n;
                }
            }
            let mut remap = vec![u32::MAX; mesh.vertices().len()];
            let mut positions = Vec::new();
            let mut out_normals = Vec::new();
            let mut indices = Vec::with_capacity(3 * mesh.triangles().len());
            for i in mesh.triangles().iter().flatten() {
                let i = *i as usize;
                if remap[i] == u32::MAX {
                    remap[i] = positions.len() as u32;
                    positions.push(vec3_f32(mesh.vertices()[i]));
                    out_normals.push(vec3_f32(unit_or_up(sums[i])));
                }
                indices.push(remap[i]);
            }
            (positions, out_normals, indices)
        }
    }
}

/// `v` normalized; +Y for a zero vector (degenerate triangles), since glTF requires unit normals.
fn unit_or_up(v: DVec3) -> DVec3 {
    v.try_normalize().unwrap_or(DVec3::Y)
}

fn vec3_f32(v: DVec3) -> [f32; 3] {
    v.as_vec3().to_array()
}

fn quat_f32(q: DQuat) -> [f32; 4] {
    // Normalize in f64, then round: each component is then within half an f32 ulp of the unit
    // quaternion, and the length within about 1e-7 of 1.
    q.normalize().as_quat().to_array()
}
