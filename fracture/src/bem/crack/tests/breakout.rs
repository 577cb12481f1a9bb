//! Breaking out through a thin wall (`breakout`): a crack through a plate becomes lines through
//! the wall, whose ends extend along both faces and which split the plate.

use glam::DVec3;

use super::super::check::try_move;
use super::super::extend::{End, LEAST_DIP, extend_end};
use super::super::mesh::{CrackLine, CrackMesh, mean_edge};
use super::super::open::Refusal;
use super::super::pieces::pieces;
use super::super::through::cut_through_locally;
use super::super::track::{TrackSettings, any_active, substep};
use super::super::validate::{AngleBounds, validate};
use super::{assert_two_sides, opened};
use crate::bem::meshes::{Grading, grid_box};

/// Half extents of the plate (m): 12 mm thick, three elements of 4 mm.
const HALF: DVec3 = DVec3::new(0.04, 0.006, 0.03);

/// Crack thickness (m).
const THICKNESS: f64 = 0.0004;

/// Runs validated sub-steps under a stress across the crack plane (x = 0) of 1.5 within `band`
/// of z = 0 and 0.5 outside (threshold 1), until no node is active, checking the volume lost
/// since `volume0` against the thickness times the crack area.
fn run(crack: &mut CrackMesh, settings: &TrackSettings, band: f64, volume0: f64) {
    let stress = move |x: DVec3| (if x.z.abs() < band { 1.5 } else { 0.5 }, DVec3::X);
    for step in 0..200 {
        if !any_active(crack) {
            return;
        }
        let report = substep(crack, &stress, settings).unwrap_or_else(|f| panic!("sub-step {step}: {f}"));
        let removed = volume0 - report.check.expect("validated").volume;
        assert!(
            removed.abs() <= THICKNESS * crack.crack_area() + 1e-12,
            "sub-step {step}: volume change {removed} beyond t A {}",
            THICKNESS * crack.crack_area()
        );
    }
    panic!("still active after 200 sub-steps");
}

/// The lowest and highest y (m) of `line`'s two ends.
fn ends_y(crack: &CrackMesh, line: &CrackLine) -> (f64, f64) {
    let y = |v: u32| crack.positions()[v as usize].y;
    let (a, b) = (y(line.nodes[0]), y(line.nodes[line.nodes.len() - 1]));
    (a.min(b), a.max(b))
}

/// Line `l`'s end vertex at `end` and the line's node next to it.
fn end_and_next(crack: &CrackMesh, l: usize, end: End) -> (u32, u32) {
    let nodes = &crack.lines()[l].nodes;
    match end {
        End::Start => (nodes[0], nodes[1]),
        End::Finish => (nodes[nodes.len() - 1], nodes[nodes.len() - 2]),
    }
}

/// The crack of [`plate_crack`] with break-outs in a plate twice as wide, so the ends of its
/// lines through the wall stop well short of the plate's edges: the crack, its settings, the
/// mean edge (m) and every end of those lines.
fn wide_plate_ends() -> (CrackMesh, TrackSettings, f64, Vec<(usize, End)>) {
    let half = DVec3::new(HALF.x, HALF.y, 2.0 * HALF.z);
    let (crack, settings, edge, _) = plate_crack(half, true);
    let ends = (0..crack.lines().len())
        .filter(|&l| !crack.lines()[l].through)
        .flat_map(|l| [(l, End::Start), (l, End::Finish)])
        .collect();
    (crack, settings, edge, ends)
}

/// The plate of half extents `half` (m) with a crack opened at the middle of its top face and
/// run, with break-outs as `break_out` says, under the stress of [`run`] in a band 24 mm wide:
/// the crack, its settings, the mean edge (m) and the plate's volume (m^3).
fn plate_crack(half: DVec3, break_out: bool) -> (CrackMesh, TrackSettings, f64, f64) {
    let mesh = grid_box(half, 0.004, Grading::Uniform).unwrap();
    let edge = mean_edge(&mesh);
    let volume0 = mesh.signed_volume();
    let settings = TrackSettings {
        validate: true,
        break_out,
        ..TrackSettings::new(edge, 1.0, THICKNESS)
    };
    let mut crack = opened(&mesh, DVec3::new(0.0, half.y, 0.0), DVec3::X, THICKNESS);
    run(&mut crack, &settings, 0.024, volume0);
    (crack, settings, edge, volume0)
}

/// A crack through a thin wall breaks out through the far face and runs on through the wall:
/// in a 12 mm plate (three elements thick) under a stress across the crack above the threshold
/// only in a band 24 mm wide, the crack opened on the top face reaches the bottom face in the
/// middle of its front; broken out there it is two lines, each with one end on either face.
/// With the stress raised everywhere they run out to the plate's edges, are cut through (the
/// ring-read cut, as a crack that broke out is) and the plate is in two halves. Without
/// break-outs the crack stays one line with both ends on the top face. Validated after every
/// sub-step, the volume within the thickness times the crack area.
#[test]
fn crack_break_out_runs_a_crack_through_a_thin_plate_and_splits_it() {
    for break_out in [false, true] {
        let (mut crack, settings, edge, volume0) = plate_crack(HALF, break_out);
        let open: Vec<_> = crack.lines().iter().filter(|l| !l.through).collect();
        if !break_out {
            assert_eq!(crack.lines().len(), 1);
            let (low, _) = ends_y(&crack, open[0]);
            assert!(low > 0.0, "both ends stay on the top face: {low}");
            continue;
        }
        assert!(open.len() >= 2, "{} lines", open.len());
        for line in &open {
            let (low, high) = ends_y(&crack, line);
            assert!(
                low < -0.9 * HALF.y && high > 0.0,
                "a line through the wall has ends at y {low} and {high}"
            );
        }
        // The stress rises above the threshold everywhere: the through-wall fronts run on.
        for l in 0..crack.lines().len() {
            if crack.lines()[l].through {
                continue;
            }
            crack.lines_mut()[l].blocked = [false; 2];
            let nodes = crack.lines()[l].nodes.clone();
            for &f in &nodes[1..nodes.len() - 1] {
                crack.set_active(f, true);
            }
        }
        run(&mut crack, &settings, 1.0, volume0);
        // Every end has run out to the plate's rim and stops there: turning round it onto the
        // rim's face would fold the front back over that face.
        for l in 0..crack.lines().len() {
            if crack.lines()[l].through {
                continue;
            }
            for end in [End::Start, End::Finish] {
                let a = crack.positions()[end_and_next(&crack, l, end).0 as usize];
                assert!(
                    (a.z.abs() - HALF.z).abs() < 1e-9,
                    "line {l} {end:?} stopped at {a}, off the rim"
                );
                let refusal = extend_end(
                    &mut crack.clone(),
                    l,
                    end,
                    DVec3::X,
                    THICKNESS,
                    0.5 * edge,
                    settings.front.bounds,
                );
                assert_eq!(refusal, Err(Refusal::AtRim), "line {l} {end:?} at {a}");
            }
        }
        for l in 0..crack.lines().len() {
            if !crack.lines()[l].through {
                cut_through_locally(&mut crack, l, edge, THICKNESS, AngleBounds::default()).unwrap();
            }
        }
        let check = validate(&crack, AngleBounds::default()).unwrap();
        let pieces = pieces(&crack).unwrap();
        let total = assert_two_sides(&pieces, 0.0, edge, HALF, THICKNESS);
        assert!((total - check.volume).abs() < 1e-12 * volume0);
    }
}

/// Every end of the lines through the plate's wall extends along its own face, away from the
/// middle, with its line's next node moved straight below it, across the wall (not beside it
/// under the surface, as at the end of a crack that opened there): the front node the extension
/// puts in goes halfway between that node and the new end (`extend`), not straight below the
/// end, where it would lie on the segment to the node and the slot is refused. The mesh stays
/// valid.
#[test]
fn crack_break_out_ends_through_a_wall_extend_along_their_faces() {
    let (mut crack, settings, _, ends) = wide_plate_ends();
    let bounds = settings.front.bounds;
    // Two lines through the wall, each with an end on either face.
    assert!(ends.len() >= 4, "{} ends", ends.len());
    for &(l, end) in &ends {
        let (a, n1) = end_and_next(&crack, l, end);
        let old = crack.positions()[a as usize];
        // The front node next to the end straight below it, as a front that ran on under a
        // held end leaves it (the plate of `examples/bem_plate_and_shell.rs`: within 13
        // degrees of the normal, 4.4 mm down).
        let below = DVec3::new(old.x, crack.positions()[n1 as usize].y, old.z);
        assert!(
            try_move(&mut crack, n1, below, bounds, None),
            "line {l} {end:?}: {below}"
        );
        let c = extend_end(
            &mut crack,
            l,
            end,
            DVec3::X,
            THICKNESS,
            0.5 * settings.front.target_edge,
            bounds,
        )
        .unwrap_or_else(|r| panic!("line {l} {end:?} at {old}: {r}"));
        let new = crack.positions()[c as usize];
        assert!(
            (new.y - old.y).abs() < 1e-12,
            "line {l} {end:?}: {old} to {new}, off its face"
        );
        assert!(
            new.z.abs() > old.z.abs(),
            "line {l} {end:?}: {old} to {new}, not outward"
        );
        assert!(
            new.x.abs() <= 0.5 * THICKNESS,
            "line {l} {end:?}: {new} off the crack plane"
        );
    }
    validate(&crack, bounds).unwrap();
}

/// An end whose front leans forward from its face (the line's next node ahead of it along the
/// face and under it, as on the hollow sphere of `examples/bem_plate_and_shell.rs`) extends
/// along its face with the new front node in the wedge between the face and the front: ahead
/// of the old end and dipping at least [`LEAST_DIP`] under the face, not straight below the old
/// end, which lies behind the front in the slot already cut (that slot is refused). Before the
/// halfway node was tried for such ends, each of these extensions was refused. The mesh stays
/// valid.
#[test]
fn crack_break_out_ends_leaning_forward_extend_ahead_of_the_front() {
    let (mut crack, settings, edge, ends) = wide_plate_ends();
    let bounds = settings.front.bounds;
    let depth = 0.5 * settings.front.target_edge;
    // Two lines through the wall, each with an end on either face.
    assert!(ends.len() >= 4, "{} ends", ends.len());
    for &(l, end) in &ends {
        let (a, n1) = end_and_next(&crack, l, end);
        let old = crack.positions()[a as usize];
        // One edge from the end, 20 degrees under its face, away from the middle.
        let (outward, inward) = (DVec3::Z * old.z.signum(), DVec3::Y * -old.y.signum());
        let (sin, cos) = 20f64.to_radians().sin_cos();
        let ahead = old + (outward * cos + inward * sin) * edge;
        assert!(
            try_move(&mut crack, n1, ahead, bounds, None),
            "line {l} {end:?}: {ahead}"
        );
        let c = extend_end(&mut crack, l, end, DVec3::X, THICKNESS, depth, bounds)
            .unwrap_or_else(|r| panic!("line {l} {end:?} at {old}: {r}"));
        let new = crack.positions()[c as usize];
        assert!((new.y - old.y).abs() < 1e-12, "line {l} {end:?}: {new} off its face");
        assert!(
            new.z.abs() > old.z.abs(),
            "line {l} {end:?}: {old} to {new}, not outward"
        );
        let g = crack.positions()[end_and_next(&crack, l, end).1 as usize];
        let under = (old.y - g.y) * old.y.signum();
        assert!(
            under >= LEAST_DIP * depth * (1.0 - 1e-9) && under < depth * sin,
            "line {l} {end:?}: front node {g} {under} m under the face"
        );
        assert!(
            g.z.abs() > old.z.abs() + 0.25 * depth,
            "line {l} {end:?}: front node {g} not ahead of the end {old}"
        );
    }
    validate(&crack, bounds).unwrap();
}
