//! The exporters on closed-form motion, no simulation: a box in free fall
//! (`y = y0 - g t^2 / 2`) tumbling at a constant rate, a plate spinning about its axis once a
//! second over a static ground slab, and at frame 15 a fragment and a shard that appear and fly on
//! parabolas; the shard vanishes after frame 44.
//!
//! What to look for: open `out/export_sample.glb` in a glTF viewer (Blender, three.js editor, the
//! Khronos sample viewer) and play the animation "simulation" (2 s at 30 Hz): the box falls
//! faster and faster, the fragment and shard pop into existence mid-air at 0.5 s and the shard pops
//! out again at 1.5 s. With `obj` the same frames go to `out/export_sample/frame_NNNNN.obj`.
//!
//! `cargo run --release --example export_sample -- [glb|obj] [PATH]`

use std::path::PathBuf;
use std::process::ExitCode;

use shatter::export::analytic::sample_recording;
use shatter::export::{ExportFormat, write};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let format = match args.next().as_deref() {
        None | Some("glb") => ExportFormat::Glb,
        Some("obj") => ExportFormat::Obj,
        Some(other) => {
            eprintln!("export_sample: unknown format {other}: expected glb or obj");
            return ExitCode::from(2);
        }
    };
    let path = args.next().map(PathBuf::from).unwrap_or_else(|| match format {
        ExportFormat::Glb => PathBuf::from("out/export_sample.glb"),
        ExportFormat::Obj => PathBuf::from("out/export_sample"),
    });
    match write(&sample_recording(60, 30.0), format, &path) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("export_sample: {error}");
            ExitCode::FAILURE
        }
    }
}
