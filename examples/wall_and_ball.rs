//! The built-in scene, looked at: a wall of 48 bricks in running bond on the ground, hit at 12 m/s
//! by a 514 kg steel ball coming from -z.
//!
//! What to look for: the trace printed every 5 frames shows the ball reaching the wall (z near 0)
//! at about 0.3 s and slowing as it pushes through; the bricks it hits move to +z and drop; every
//! brick ends at a height of a resting brick or a stack of them (centre y = 0.1 m, 0.3 m, ...),
//! never below 0.1 m, which would mean it sank into the ground. The frames written to
//! `out/wall_and_ball/frame_NNN.png` draw the
//! same run from the side and above with a small software rasterizer (flat shading, a z-buffer,
//! the ground as a checkerboard), so the result can be looked at without a glTF viewer.
//!
//! `cargo run --release --example wall_and_ball -- [STEPS] [FRAME...]` (default 90 steps, frames
//! 0 15 30 45 60 90).

use std::path::Path;

use glam::{DMat3, DVec3};
use shatter::collision::Pose;
use shatter::export::Recording;
use shatter::recorder::run_and_record;
use shatter::scene_world::build_world;
use shatter::scenes::wall_and_ball;

const WIDTH: usize = 640;
const HEIGHT: usize = 400;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let steps: usize = args.next().map_or(Ok(90), |a| a.parse())?;
    let mut frames: Vec<usize> = args.map(|a| a.parse()).collect::<Result<_, _>>()?;
    if frames.is_empty() {
        frames = vec![0, 15, 30, 45, 60, 90];
    }
    let mut scene = build_world(&wall_and_ball())?;
    let (recording, summary) = run_and_record(&mut scene, steps, |_, _, _| {})?;
    println!("{summary:?}");
    trace(&recording);
    let directory = Path::new("out/wall_and_ball");
    std::fs::create_dir_all(directory)?;
    for frame in frames.into_iter().filter(|f| *f < recording.frame_count()) {
        let path = directory.join(format!("frame_{frame:03}.png"));
        std::fs::write(&path, render(&recording, frame))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Prints the ball and a few bricks every 5 frames, and the lowest brick centre at the end.
fn trace(recording: &Recording) {
    let names = ["ball", "brick_3_2", "brick_5_3", "brick_7_2", "brick_0_3", "brick_6_0"];
    let tracks: Vec<_> = names
        .iter()
        .filter_map(|n| recording.tracks.iter().find(|t| t.name == *n))
        .collect();
    print!("frame   t(s)");
    for t in &tracks {
        print!(" | {:>22}", t.name);
    }
    println!();
    for frame in (0..recording.frame_count()).step_by(5) {
        print!("{frame:5} {:6.3}", recording.time(frame));
        for t in &tracks {
            match t.pose_at(frame) {
                Some(p) => print!(" | {:6.2} {:6.2} {:6.2}", p.position.x, p.position.y, p.position.z),
                None => print!(" | {:>22}", "-"),
            }
        }
        println!();
    }
    let last = recording.frame_count() - 1;
    let mut lowest = (f64::MAX, "");
    let mut moved = 0;
    for t in recording.tracks.iter().filter(|t| t.name.starts_with("brick")) {
        let (Some(start), Some(end)) = (t.pose_at(0), t.pose_at(last)) else {
            continue;
        };
        if (end.position - start.position).length() > 0.05 {
            moved += 1;
        }
        if end.position.y < lowest.0 {
            lowest = (end.position.y, &t.name);
        }
    }
    println!(
        "bricks moved more than 5 cm: {moved}; lowest brick centre at the end: {} at y = {:.4} m",
        lowest.1, lowest.0
    );
}

/// A pinhole camera: world to camera frame (x right, y up, looking down -z).
struct Camera {
    eye: DVec3,
    /// Rows are the camera's right, up and backward axes in world frame.
    to_camera: DMat3,
    /// Focal length in pixels.
    focal: f64,
}

impl Camera {
    fn looking_at(eye: DVec3, target: DVec3, vertical_fov: f64) -> Self {
        let back = (eye - target).normalize();
        let right = DVec3::Y.cross(back).normalize();
        let up = back.cross(right);
        Self {
            eye,
            to_camera: DMat3::from_cols(right, up, back).transpose(),
            focal: HEIGHT as f64 / 2.0 / (vertical_fov / 2.0).tan(),
        }
    }

    /// Pixel coordinates and depth (distance along the view axis) of a world point.
    fn project(&self, p: DVec3) -> (f64, f64, f64) {
        let c = self.to_camera * (p - self.eye);
        let depth = -c.z;
        (
            WIDTH as f64 / 2.0 + self.focal * c.x / depth,
            HEIGHT as f64 / 2.0 - self.focal * c.y / depth,
            depth,
        )
    }

    /// The world direction through pixel centre (x, y).
    fn ray(&self, x: f64, y: f64) -> DVec3 {
        let c = DVec3::new(x - WIDTH as f64 / 2.0, HEIGHT as f64 / 2.0 - y, -self.focal);
        (self.to_camera.transpose() * c).normalize()
    }
}

/// Frame `frame` of `recording` as a PNG image: the ground plane y = 0 as a checkerboard under a
/// plain sky, then every non-static body's triangles, flat shaded, through a z-buffer.
fn render(recording: &Recording, frame: usize) -> Vec<u8> {
    let camera = Camera::looking_at(DVec3::new(4.2, 2.6, -4.2), DVec3::new(0.0, 0.5, 0.6), 0.75);
    let light = DVec3::new(0.4, 1.0, -0.6).normalize();
    let mut color = vec![DVec3::ZERO; WIDTH * HEIGHT];
    let mut depth = vec![f64::INFINITY; WIDTH * HEIGHT];
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let ray = camera.ray(x as f64 + 0.5, y as f64 + 0.5);
            color[y * WIDTH + x] = if ray.y < -1e-9 {
                let hit = camera.eye + ray * (-camera.eye.y / ray.y);
                let checker = (hit.x.floor() + hit.z.floor()).rem_euclid(2.0);
                DVec3::splat(0.35 + 0.1 * checker)
            } else {
                DVec3::new(0.7, 0.8, 0.95)
            };
        }
    }
    for track in &recording.tracks {
        let Some(pose) = track.pose_at(frame) else { continue };
        // The ground is drawn as the checkerboard; its slab is as wide as the view.
        if track.mesh.bounds().is_some_and(|b| b.size().max_element() > 30.0) {
            continue;
        }
        let base = track.color.unwrap_or(DVec3::splat(0.8));
        for index in 0..track.mesh.triangles().len() {
            draw_triangle(
                &camera,
                &pose,
                track.mesh.triangle(index),
                base,
                light,
                &mut color,
                &mut depth,
            );
        }
    }
    // Linear colour to display values (gamma 2.2, near enough to sRGB for looking).
    let rgb: Vec<[u8; 3]> = color
        .iter()
        .map(|c| {
            c.to_array()
                .map(|v| (v.clamp(0.0, 1.0).powf(1.0 / 2.2) * 255.0).round() as u8)
        })
        .collect();
    png(&rgb)
}

/// An 8-bit RGB PNG of `WIDTH x HEIGHT` pixels (PNG specification, ISO/IEC 15948): the image data
/// deflated as stored (uncompressed) blocks, RFC 1950/1951, so no compressor is needed.
fn png(rgb: &[[u8; 3]]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(HEIGHT * (1 + 3 * WIDTH));
    for row in rgb.chunks(WIDTH) {
        raw.push(0); // filter type: none
        raw.extend(row.iter().flatten());
    }
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let length = block.len() as u16;
        zlib.extend(length.to_le_bytes());
        zlib.extend((!length).to_le_bytes());
        zlib.extend(*block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for byte in &raw {
        a = (a + u32::from(*byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend(((b << 16) | a).to_be_bytes());
    let mut header = Vec::new();
    header.extend((WIDTH as u32).to_be_bytes());
    header.extend((HEIGHT as u32).to_be_bytes());
    header.extend([8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, adaptive filtering, no interlace
    let mut out = vec![0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];
    for (kind, data) in [(b"IHDR", header), (b"IDAT", zlib), (b"IEND", Vec::new())] {
        out.extend((data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend(kind);
        out.extend(&data);
        out.extend(crc32(&out[start..]).to_be_bytes());
    }
    out
}

/// CRC-32 (ISO 3309, reflected polynomial 0xEDB88320), bit by bit: a few images need no table.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn draw_triangle(
    camera: &Camera,
    pose: &Pose,
    triangle: [DVec3; 3],
    base: DVec3,
    light: DVec3,
    color: &mut [DVec3],
    depth: &mut [f64],
) {
    let world = triangle.map(|v| pose.transform_point(v));
    let normal = (world[1] - world[0]).cross(world[2] - world[0]).normalize_or_zero();
    if normal.dot(camera.eye - world[0]) <= 0.0 {
        return; // back face
    }
    let shade = base * (0.3 + 0.7 * normal.dot(light).max(0.0));
    let p = world.map(|v| camera.project(v));
    if p.iter().any(|v| v.2 < 0.05) {
        return;
    }
    let area = (p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (p[1].1 - p[0].1);
    if area.abs() < 1e-12 {
        return;
    }
    let min_x = p.iter().map(|v| v.0).fold(f64::MAX, f64::min).floor().max(0.0) as usize;
    let max_x = p
        .iter()
        .map(|v| v.0)
        .fold(f64::MIN, f64::max)
        .ceil()
        .min(WIDTH as f64 - 1.0);
    let min_y = p.iter().map(|v| v.1).fold(f64::MAX, f64::min).floor().max(0.0) as usize;
    let max_y = p
        .iter()
        .map(|v| v.1)
        .fold(f64::MIN, f64::max)
        .ceil()
        .min(HEIGHT as f64 - 1.0);
    if max_x < 0.0 || max_y < 0.0 {
        return;
    }
    for y in min_y..=max_y as usize {
        for x in min_x..=max_x as usize {
            let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
            let edge = |a: (f64, f64, f64), b: (f64, f64, f64)| (b.0 - a.0) * (py - a.1) - (px - a.0) * (b.1 - a.1);
            let w = [
                edge(p[1], p[2]) / area,
                edge(p[2], p[0]) / area,
                edge(p[0], p[1]) / area,
            ];
            if w.iter().any(|w| *w < 0.0) {
                continue;
            }
            let z = w[0] * p[0].2 + w[1] * p[1].2 + w[2] * p[2].2;
            let at = y * WIDTH + x;
            if z < depth[at] {
                depth[at] = z;
                color[at] = shade;
            }
        }
    }
}
