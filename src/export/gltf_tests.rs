//! glTF export tests: the written `.glb` is read back by a minimal, independent GLB reader that
//! checks the container and the buffer layout against the specification, then every mesh and
//! animation against the recording it came from.

use std::sync::Arc;

use glam::{DQuat, DVec3, Vec3};
use serde_json::Value;

use super::analytic::{SAMPLE_DROP_HEIGHT, SAMPLE_GRAVITY, SAMPLE_SPAWN_FRAME, sample_recording};
use super::gltf::to_glb;
use super::recording::{Recording, Track};
use crate::collision::{Pose, TriMesh};

/// A parsed GLB: the JSON document and the BIN chunk (empty when there is none).
struct Glb {
    json: Value,
    bin: Vec<u8>,
}

fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// Reads a GLB by the specification (section 4.4), asserting every structural rule on the way.
fn parse_glb(bytes: &[u8]) -> Glb {
    assert_eq!(&bytes[0..4], b"glTF", "magic");
    assert_eq!(word(bytes, 4), 2, "version");
    assert_eq!(word(bytes, 8) as usize, bytes.len(), "header length");
    let json_length = word(bytes, 12) as usize;
    assert_eq!(&bytes[16..20], b"JSON");
    assert_eq!(json_length % 4, 0, "JSON chunk padded to 4 bytes");
    let json_bytes = &bytes[20..20 + json_length];
    let text = std::str::from_utf8(json_bytes).unwrap();
    let end = text.trim_end().len();
    assert!(json_bytes[end..].iter().all(|b| *b == b' '), "JSON padding is spaces");
    let json: Value = serde_json::from_str(text).unwrap();
    let mut at = 20 + json_length;
    let mut bin = Vec::new();
    if at < bytes.len() {
        let bin_length = word(bytes, at) as usize;
        assert_eq!(&bytes[at + 4..at + 8], b"BIN\0");
        assert_eq!(bin_length % 4, 0, "BIN chunk padded to 4 bytes");
        bin = bytes[at + 8..at + 8 + bin_length].to_vec();
        at += 8 + bin_length;
        let declared = json["buffers"][0]["byteLength"].as_u64().unwrap() as usize;
        assert!(
            declared <= bin_length && bin_length - declared < 4,
            "buffer length {declared}"
        );
        assert!(bin[declared..].iter().all(|b| *b == 0), "BIN padding is zeros");
    }
    assert_eq!(at, bytes.len(), "nothing after the chunks");
    Glb { json, bin }
}

impl Glb {
    fn accessor(&self, index: &Value) -> &Value {
        &self.json["accessors"][index.as_u64().unwrap() as usize]
    }

    /// The accessor's components as raw 4-byte words, grouped per element, after checking that
    /// it lies in its view, its view in the buffer, and both are 4-byte aligned.
    fn words(&self, index: &Value) -> Vec<Vec<[u8; 4]>> {
        let accessor = self.accessor(index);
        let width = match accessor["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            other => panic!("unexpected accessor type {other}"),
        };
        let count = accessor["count"].as_u64().unwrap() as usize;
        assert!(count > 0);
        let view = &self.json["bufferViews"][accessor["bufferView"].as_u64().unwrap() as usize];
        let offset = view["byteOffset"].as_u64().unwrap_or(0) as usize;
        let length = view["byteLength"].as_u64().unwrap() as usize;
        let inner = accessor["byteOffset"].as_u64().unwrap_or(0) as usize;
        assert_eq!((offset % 4, inner % 4), (0, 0), "alignment");
        assert!(offset + length <= self.json["buffers"][0]["byteLength"].as_u64().unwrap() as usize);
        assert!(inner + count * width * 4 <= length, "accessor fits in its view");
        let data = &self.bin[offset + inner..offset + inner + count * width * 4];
        data.chunks(width * 4)
            .map(|element| element.chunks(4).map(|w| w.try_into().unwrap()).collect())
            .collect()
    }

    fn floats(&self, index: &Value) -> Vec<Vec<f32>> {
        assert_eq!(self.accessor(index)["componentType"], 5126);
        let words = self.words(index);
        words
            .iter()
            .map(|e| e.iter().map(|w| f32::from_le_bytes(*w)).collect())
            .collect()
    }

    fn indices(&self, index: &Value) -> Vec<u32> {
        assert_eq!(self.accessor(index)["componentType"], 5125);
        self.words(index).iter().map(|e| u32::from_le_bytes(e[0])).collect()
    }

    /// The (input times, output values, interpolation) of node `node`'s channel `path`.
    fn channel(&self, node: usize, path: &str) -> Option<(Vec<f32>, Vec<Vec<f32>>, String)> {
        let animation = &self.json["animations"][0];
        let channel = animation["channels"].as_array()?.iter().find(|c| {
            c["target"]["node"].as_u64() == Some(node as u64) && c["target"]["path"].as_str() == Some(path)
        })?;
        let sampler = &animation["samplers"][channel["sampler"].as_u64().unwrap() as usize];
        let times: Vec<f32> = self.floats(&sampler["input"]).iter().map(|t| t[0]).collect();
        let input = self.accessor(&sampler["input"]);
        assert_eq!(input["min"][0].as_f64().unwrap() as f32, times[0], "input min");
        assert_eq!(
            input["max"][0].as_f64().unwrap() as f32,
            *times.last().unwrap(),
            "input max"
        );
        assert!(times.windows(2).all(|w| w[1] > w[0]), "{path} times strictly increase");
        let values = self.floats(&sampler["output"]);
        assert_eq!(values.len(), times.len());
        Some((times, values, sampler["interpolation"].as_str().unwrap().to_string()))
    }
}

fn to_f32_vec(v: &[f32]) -> Vec3 {
    Vec3::new(v[0], v[1], v[2])
}

#[test]
fn gltf_sample_scene_reads_back_as_written() {
    let recording = sample_recording(60, 30.0);
    let glb = parse_glb(&to_glb(&recording).unwrap());
    assert_eq!(glb.json["asset"]["version"], "2.0");
    assert_eq!(glb.json["scenes"][0]["nodes"].as_array().unwrap().len(), 5);
    for (n, track) in recording.tracks.iter().enumerate() {
        let node = &glb.json["nodes"][n];
        assert_eq!(node["name"], track.name.as_str());
        let primitive = &glb.json["meshes"][node["mesh"].as_u64().unwrap() as usize]["primitives"][0];
        let positions = glb.floats(&primitive["attributes"]["POSITION"]);
        let normals = glb.floats(&primitive["attributes"]["NORMAL"]);
        let indices = glb.indices(&primitive["indices"]);
        assert_eq!(normals.len(), positions.len());
        assert_eq!(indices.len(), 3 * track.mesh.triangles().len());
        assert!(indices.iter().all(|i| (*i as usize) < positions.len()));
        // min and max are exactly the extremes of the stored values, and the mesh's bounds.
        let accessor = glb.accessor(&primitive["attributes"]["POSITION"]);
        let bounds = track.mesh.bounds().unwrap();
        for k in 0..3 {
            let min = positions.iter().map(|p| p[k]).fold(f32::INFINITY, f32::min);
            let max = positions.iter().map(|p| p[k]).fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(accessor["min"][k].as_f64().unwrap() as f32, min);
            assert_eq!(accessor["max"][k].as_f64().unwrap() as f32, max);
            assert_eq!(min, bounds.min[k] as f32);
            assert_eq!(max, bounds.max[k] as f32);
        }
        for (p, normal) in positions.iter().zip(&normals) {
            let normal = to_f32_vec(normal);
            assert!((normal.length() - 1.0).abs() < 1e-6, "unit normal");
            if track.name == "fragment" {
                // Smooth normals of a subdivided icosphere point almost radially.
                assert!(normal.dot(to_f32_vec(p).normalize()) > 0.99);
            }
        }
        if track.name != "fragment" {
            // Flat: every triangle's three normals equal its outward face normal.
            for t in indices.chunks(3) {
                let [a, b, c] = [0, 1, 2].map(|k| to_f32_vec(&positions[t[k] as usize]));
                let face = (b - a).cross(c - a).normalize();
                assert!((to_f32_vec(&normals[t[0] as usize]) - face).length() < 1e-5);
                assert!(face.dot((a + b + c) / 3.0) > 0.0, "outward");
            }
        }

        // Translation and rotation: keyed at frame / rate over the frames the body exists.
        let (times, translations, interpolation) = glb.channel(n, "translation").unwrap();
        assert_eq!(interpolation, "LINEAR");
        let (rotation_times, rotations, _) = glb.channel(n, "rotation").unwrap();
        assert_eq!(rotation_times, times);
        assert_eq!(times.len(), track.poses.len());
        for (k, pose) in track.poses.iter().enumerate() {
            let frame = track.first_frame + k;
            assert_eq!(times[k], (frame as f64 / 30.0) as f32);
            assert_eq!(to_f32_vec(&translations[k]), pose.position.as_vec3());
            let q = &rotations[k];
            let length = q.iter().map(|c| c * c).sum::<f32>().sqrt();
            assert!((length - 1.0).abs() < 1e-6, "unit quaternion");
            let q = DQuat::from_xyzw(q[0].into(), q[1].into(), q[2].into(), q[3].into());
            // Componentwise up to sign (acos near 1 would amplify f32 rounding into 1e-3 rad).
            let p = pose.orientation;
            assert!((q - p).length().min((q + p).length()) < 1e-6, "{q} vs {p}");
        }
        assert_eq!(node["translation"].as_array().unwrap().len(), 3);
        assert_eq!(node["translation"][1].as_f64().unwrap() as f32, translations[0][1]);
    }

    // The falling box follows y0 - g t^2 / 2 at every key.
    let (times, translations, _) = glb.channel(1, "translation").unwrap();
    for (t, p) in times.iter().zip(&translations) {
        let t = f64::from(*t);
        let expected = SAMPLE_DROP_HEIGHT - 0.5 * SAMPLE_GRAVITY * t * t;
        assert!((f64::from(p[1]) - expected).abs() < 1e-5, "t = {t}: {}", p[1]);
    }

    // Existence: the ground, box and plate have no scale channel; the fragment appears at frame
    // 15; the shard appears at 15 and is gone from frame 45.
    for n in 0..3 {
        assert!(glb.channel(n, "scale").is_none());
        assert!(glb.json["nodes"][n].get("scale").is_none());
    }
    let spawn = (SAMPLE_SPAWN_FRAME as f64 / 30.0) as f32;
    let (times, scales, interpolation) = glb.channel(3, "scale").unwrap();
    assert_eq!(interpolation, "STEP");
    assert_eq!(times, [0.0, spawn]);
    assert_eq!(scales, [vec![0.0; 3], vec![1.0; 3]]);
    assert_eq!(glb.json["nodes"][3]["scale"], serde_json::json!([0.0, 0.0, 0.0]));
    let (times, scales, _) = glb.channel(4, "scale").unwrap();
    assert_eq!(times, [0.0, spawn, (45.0f64 / 30.0) as f32]);
    assert_eq!(scales, [vec![0.0; 3], vec![1.0; 3], vec![0.0; 3]]);
}

#[test]
fn gltf_shares_meshes_and_materials_and_keeps_rotations_in_one_hemisphere() {
    let cube = Arc::new(TriMesh::cuboid(DVec3::splat(0.5)));
    let q = DQuat::from_rotation_z(1.0);
    let mut recording = Recording::new(30.0);
    for (name, color) in [("a", 0.2), ("b", 0.2), ("c", 0.9)] {
        let mut track = Track::new(name, cube.clone()).with_color(DVec3::splat(color));
        // q and -q are the same rotation: the file must not slerp the long way between them.
        track.poses = [q, -q, q, -q].map(|r| Pose::new(DVec3::ZERO, r)).to_vec();
        recording.tracks.push(track);
    }
    // A body present at frame 0 that is despawned after frame 1.
    let mut gone = Track::new("gone", Arc::new(TriMesh::icosphere(1.0, 0)));
    gone.poses = vec![Pose::IDENTITY; 2];
    recording.tracks.push(gone);
    let glb = parse_glb(&to_glb(&recording).unwrap());
    assert_eq!(glb.json["meshes"].as_array().unwrap().len(), 3);
    assert_eq!(glb.json["materials"].as_array().unwrap().len(), 2);
    assert_eq!(glb.json["nodes"][0]["mesh"], glb.json["nodes"][1]["mesh"]);
    assert_ne!(glb.json["nodes"][0]["mesh"], glb.json["nodes"][2]["mesh"]);
    assert!(glb.json["meshes"][2]["primitives"][0].get("material").is_none());
    let factor = &glb.json["materials"][1]["pbrMetallicRoughness"]["baseColorFactor"];
    assert_eq!(factor, &serde_json::json!([0.9, 0.9, 0.9, 1.0]));
    let (_, rotations, _) = glb.channel(0, "rotation").unwrap();
    for pair in rotations.windows(2) {
        let dot: f32 = pair[0].iter().zip(&pair[1]).map(|(a, b)| a * b).sum();
        assert!(dot > 0.999, "neighbouring keys in one hemisphere: {dot}");
    }
    let (times, scales, _) = glb.channel(3, "scale").unwrap();
    assert_eq!(times, [0.0, (2.0f64 / 30.0) as f32]);
    assert_eq!(scales, [vec![1.0; 3], vec![0.0; 3]]);
    assert!(glb.json["nodes"][3].get("scale").is_none());
}

#[test]
fn gltf_empty_recordings_and_bad_input() {
    let glb = parse_glb(&to_glb(&Recording::new(30.0)).unwrap());
    assert!(glb.bin.is_empty());
    assert!(glb.json.get("nodes").is_none() && glb.json.get("buffers").is_none());

    let mut recording = Recording::new(30.0);
    recording.tracks.push(Track::new("empty", Arc::new(TriMesh::default())));
    let err = to_glb(&recording).unwrap_err().to_string();
    assert!(err.starts_with("track 0 (\"empty\") mesh"), "{err}");

    // Frame times that collide in f32 are refused rather than written as a broken sampler.
    let mut track = Track::new("late", Arc::new(TriMesh::cuboid(DVec3::ONE))).starting_at(1 << 26);
    track.poses = vec![Pose::IDENTITY; 3];
    let mut recording = Recording::new(1.0);
    recording.tracks.push(track);
    let err = to_glb(&recording).unwrap_err().to_string();
    assert!(err.contains("key time 1 of body \"late\""), "{err}");
}
