//! A recording made from closed-form motion, no simulation involved: the sample that checks the
//! exporters end to end and shows in a viewer what a recording looks like.
//!
//! Every motion is an exact solution of the rigid-body equations, so a viewer showing anything
//! else points at the exporter:
//! - a box in free fall, `y(t) = y0 - g t^2 / 2`, spinning at a constant rate (a cube's inertia is
//!   isotropic, so any constant angular velocity is torque-free motion);
//! - a plate spinning about its symmetry axis (a principal axis: steady rotation);
//! - a fragment that appears at frame 15 and flies on a parabola while spinning, as a fracture
//!   fragment would;
//! - a shard that appears at frame 15 and is despawned after frame 44;
//! - a static ground slab.

use std::sync::Arc;

use glam::{DQuat, DVec3};

use super::recording::{Normals, Recording, Track};
use crate::collision::{Pose, TriMesh};

/// Standard gravity of the sample, m/s^2 (acting along -Y).
pub const SAMPLE_GRAVITY: f64 = 9.81;
/// Frame at which the sample's fragment and shard appear.
pub const SAMPLE_SPAWN_FRAME: usize = 15;
/// Last frame in which the sample's shard exists.
pub const SAMPLE_SHARD_LAST_FRAME: usize = 44;
/// Height of the falling box's centre at t = 0, m.
pub const SAMPLE_DROP_HEIGHT: f64 = 12.0;

/// The sample recording over `frames` frames at `frame_rate` Hz (the shard's despawn shows only
/// when `frames > 45`, the spawns only when `frames > 15`). Bodies, in order: "ground",
/// "falling_box", "spinning_plate", "fragment", "shard".
pub fn sample_recording(frames: usize, frame_rate: f64) -> Recording {
    let mut recording = Recording::new(frame_rate);
    if frames == 0 {
        return recording;
    }
    let end = frames - 1;
    let time = |frame: usize| frame as f64 / frame_rate;
    let mut track = |track: Track, last: usize, pose: &dyn Fn(f64) -> Pose| {
        let mut track = track;
        track.poses = (track.first_frame..=last).map(|f| pose(time(f))).collect();
        if !track.poses.is_empty() {
            recording.tracks.push(track);
        }
    };

    let ground = Arc::new(TriMesh::cuboid(DVec3::new(6.0, 0.25, 6.0)));
    track(
        Track::new("ground", ground).with_color(DVec3::new(0.35, 0.35, 0.38)),
        end,
        &|_| Pose::from_position(DVec3::new(0.0, -0.25, 0.0)),
    );

    let spin = DVec3::new(1.0, 2.0, 0.5);
    track(
        Track::new("falling_box", Arc::new(TriMesh::cuboid(DVec3::splat(0.5)))).with_color(DVec3::new(0.8, 0.3, 0.1)),
        end,
        &|t| {
            Pose::new(
                DVec3::new(-2.0, SAMPLE_DROP_HEIGHT - 0.5 * SAMPLE_GRAVITY * t * t, 0.0),
                DQuat::from_scaled_axis(spin * t),
            )
        },
    );

    track(
        Track::new("spinning_plate", Arc::new(TriMesh::cuboid(DVec3::new(1.0, 0.05, 0.6))))
            .with_color(DVec3::new(0.2, 0.5, 0.8)),
        end,
        &|t| {
            Pose::new(
                DVec3::new(2.0, 1.5, 0.0),
                DQuat::from_rotation_y(std::f64::consts::TAU * t),
            )
        },
    );

    // Ballistic from (0, 3, 0) with velocity (1, 4, 1) m/s, starting at the spawn time.
    let spawn_time = time(SAMPLE_SPAWN_FRAME);
    let ballistic = move |t: f64, velocity: DVec3| {
        let s = t - spawn_time;
        DVec3::new(0.0, 3.0, 0.0) + velocity * s - DVec3::Y * (0.5 * SAMPLE_GRAVITY * s * s)
    };
    track(
        Track::new("fragment", Arc::new(TriMesh::icosphere(0.3, 2)))
            .with_color(DVec3::new(0.9, 0.8, 0.2))
            .with_normals(Normals::Smooth)
            .starting_at(SAMPLE_SPAWN_FRAME),
        end,
        &|t| {
            Pose::new(
                ballistic(t, DVec3::new(1.0, 4.0, 1.0)),
                DQuat::from_rotation_x(3.0 * (t - spawn_time)),
            )
        },
    );
    track(
        Track::new("shard", Arc::new(TriMesh::cuboid(DVec3::new(0.3, 0.1, 0.15))))
            .with_color(DVec3::new(0.6, 0.2, 0.7))
            .starting_at(SAMPLE_SPAWN_FRAME),
        end.min(SAMPLE_SHARD_LAST_FRAME),
        &|t| {
            Pose::new(
                ballistic(t, DVec3::new(-1.0, 5.0, -0.5)),
                DQuat::from_rotation_z(-4.0 * (t - spawn_time)),
            )
        },
    );
    recording
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gltf_obj_sample_recording_follows_the_closed_forms() {
        let recording = sample_recording(60, 30.0);
        recording.validate().unwrap();
        let names: Vec<&str> = recording.tracks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["ground", "falling_box", "spinning_plate", "fragment", "shard"]);
        assert_eq!(recording.frame_count(), 60);
        let falling = &recording.tracks[1];
        for frame in [0, 17, 59] {
            let t = frame as f64 / 30.0;
            let y = falling.pose_at(frame).unwrap().position.y;
            assert!((y - (12.0 - 4.905 * t * t)).abs() < 1e-12, "frame {frame}: y = {y}");
        }
        // The plate turns once a second: back to the identity after 30 frames.
        let plate = recording.tracks[2].pose_at(30).unwrap().orientation;
        assert!(plate.angle_between(DQuat::IDENTITY) < 1e-12);
        let fragment = &recording.tracks[3];
        assert_eq!((fragment.first_frame, fragment.last_frame()), (15, Some(59)));
        assert_eq!(fragment.pose_at(15).unwrap().position, DVec3::new(0.0, 3.0, 0.0));
        let shard = &recording.tracks[4];
        assert_eq!((shard.first_frame, shard.last_frame()), (15, Some(44)));
        // Too few frames for the spawn: the spawned bodies are left out rather than empty.
        assert_eq!(sample_recording(10, 30.0).tracks.len(), 3);
        assert!(sample_recording(0, 30.0).tracks.is_empty());
    }
}
