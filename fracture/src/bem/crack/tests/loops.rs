//! Crack loops: a crack that runs round a bar closes into a loop, and the loop, driven on into
//! the bar, cuts it in two.

use glam::DVec3;

use super::super::loops::{cut_loop, loop_width};
use super::super::mesh::{CrackMesh, mean_edge};
use super::super::open::Refusal;
use super::super::pieces::pieces;
use super::super::track::{TrackSettings, any_active, substep};
use super::super::validate::AngleBounds;
use super::{assert_cut, assert_two_sides, opened, slab};
use crate::bem::meshes::{Grading, grid_box};

/// Half extents of [`slab`] (m).
const HALF: DVec3 = DVec3::new(0.5, 0.2, 0.3);

/// Runs validated sub-steps under `stress` until no node is active or `limit` sub-steps, checking
/// the volume lost since `volume0` against the thickness times the crack area; returns the
/// sub-steps run and the lines closed into loops.
fn run(
    crack: &mut CrackMesh,
    stress: &dyn Fn(DVec3) -> (f64, DVec3),
    volume0: f64,
    edge: f64,
    thickness: f64,
    limit: usize,
    planar: bool,
) -> (usize, usize) {
    let mut settings = TrackSettings {
        validate: true,
        ..TrackSettings::new(edge, 1.0, thickness)
    };
    settings.front.planar = planar;
    let mut closed = 0;
    for step in 0..limit {
        if !any_active(crack) {
            return (step, closed);
        }
        let report = substep(crack, stress, &settings).unwrap_or_else(|f| panic!("sub-step {step}: {f}"));
        closed += report.closed;
        let removed = volume0 - report.check.expect("validated").volume;
        assert!(
            removed.abs() <= thickness * crack.crack_area() + 1e-12,
            "sub-step {step}: volume change {removed} beyond t A {}",
            thickness * crack.crack_area()
        );
    }
    (limit, closed)
}

/// A skin in tension round an unstressed core (as a quenched bar has): the largest principal
/// stress is 1.5 (along x) within `skin` (m) of the slab's faces and 0.5 inside, below the
/// threshold of 1.
fn skin_stress(skin: f64) -> impl Fn(DVec3) -> (f64, DVec3) {
    move |x: DVec3| {
        let depth = (HALF - x.abs()).min_element();
        (if depth < skin { 1.5 } else { 0.5 }, DVec3::X)
    }
}

/// A crack opened on the top of the slab, in a skin under tension, arrests at the core while
/// its ends run down the sides and along the bottom until they meet: the line closes into a
/// loop, the mesh stays valid at every sub-step, the crack covers the section but the core, and
/// the slab is still one piece.
#[test]
fn crack_loop_closes_where_its_ends_meet() {
    let mesh = slab();
    let edge = mean_edge(&mesh);
    let thickness = 0.002;
    let skin = 0.07;
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, thickness);
    let (steps, closed) = run(
        &mut crack,
        &skin_stress(skin),
        mesh.signed_volume(),
        edge,
        thickness,
        200,
        false,
    );
    let line = &crack.lines()[0];
    let area = crack.crack_area();
    let width = loop_width(&crack, 0);
    println!(
        "loop: {steps} sub-steps, closed {closed}, {} nodes, crack area {area:.4} m^2, ligament width {width:?}",
        line.nodes.len()
    );
    assert!(steps < 200, "still active after {steps} sub-steps");
    assert_eq!(closed, 1);
    assert!(line.closed && !line.through);
    // A front node stops once the stress half an edge ahead of it (the probe) is the core's:
    // at least that far short of the core, and at most one step (three quarters of an edge)
    // further in. The crack covers the 0.4 x 0.6 m section less a core between those two, and
    // the loop runs round it (a w x h core is 2 w h / (w + h) wide).
    let core = |depth: f64| (0.4 - 2.0 * depth, 0.6 - 2.0 * depth);
    let probe = 0.5 * edge;
    let (shallow, deep) = (core(skin - probe), core(skin + 0.75 * edge));
    let (least, most) = (0.24 - shallow.0 * shallow.1, 0.24 - deep.0 * deep.1);
    assert!(area > least && area < most, "crack area {area} outside {least}..{most}");
    let width = width.expect("a closed loop has a ligament");
    let across = |(w, h): (f64, f64)| 2.0 * w * h / (w + h);
    assert!(
        width > across(deep) && width < across(shallow),
        "ligament width {width}"
    );
    assert_eq!(pieces(&crack).unwrap().len(), 1, "the core holds the slab together");
    // A loop round an uncut core is not cut through.
    assert!(cut_loop(&mut crack, 0, edge, thickness, AngleBounds::default()).is_err());
}

/// Half extents of the bar of [`ring_round_a_bar`] (m).
const BAR_HALF: DVec3 = DVec3::new(0.5, 0.1, 0.1);
/// Crack thickness of [`ring_round_a_bar`] (m).
const RING_THICKNESS: f64 = 0.002;

/// The bar of [`BAR_HALF`] on 5 cm cells, and on it a crack opened on top and grown, validated,
/// in a skin under tension (1.5 within 3.5 cm of the faces, 0.5 inside, threshold 1) until it has
/// closed into a ring round the bar.
fn ring_round_a_bar() -> (shatter_collision::TriMesh, CrackMesh) {
    let mesh = grid_box(BAR_HALF, 0.05, Grading::Uniform).unwrap();
    let edge = mean_edge(&mesh);
    let mut crack = opened(&mesh, DVec3::new(0.01, 0.1, 0.01), DVec3::X, RING_THICKNESS);
    let skin = move |x: DVec3| {
        let near_face = (BAR_HALF - x.abs()).min_element() < 0.035;
        (if near_face { 1.5 } else { 0.5 }, DVec3::X)
    };
    let (_, closed) = run(
        &mut crack,
        &skin,
        mesh.signed_volume(),
        edge,
        RING_THICKNESS,
        200,
        false,
    );
    assert_eq!(closed, 1);
    (mesh, crack)
}

/// A shallow ring crack round a 0.2 x 0.2 m bar (cells of 5 cm), driven on into the bar under
/// tension everywhere and in its plane (as an event drives a thin ligament), closes in on its
/// ligament; cutting through then splits the bar into its two sides, each of the volume on its
/// side of the crack plane less half the slot, and the mesh is valid.
#[test]
fn crack_loop_cut_through_splits_a_bar() {
    let (mesh, mut crack) = ring_round_a_bar();
    let (edge, thickness, half) = (mean_edge(&mesh), RING_THICKNESS, BAR_HALF);
    let volume0 = mesh.signed_volume();
    let x0 = crack.lines()[0].plane_point.x;
    let width = loop_width(&crack, 0).unwrap();
    println!(
        "bar: ring crack of {} nodes round a ligament {width:.4} m wide",
        crack.lines()[0].nodes.len()
    );
    // Nothing is cut through a ligament wider than the reach; three edges reach this one.
    assert!(width < 3.0 * edge, "ligament {width} m wide");
    assert_eq!(
        cut_loop(&mut crack, 0, 0.9 * width, thickness, AngleBounds::default()),
        Err(Refusal::NotThrough)
    );
    cut_loop(&mut crack, 0, 3.0 * edge, thickness, AngleBounds::default()).unwrap();
    assert_cut(&crack, volume0, thickness);
    assert_two_sides(&pieces(&crack).unwrap(), x0, edge, half, thickness);
}

/// Bad input to closing and cutting loops is refused with the value named, and a refusal leaves
/// the mesh as it was: a young line whose ends do not meet is not closed, an open line is not
/// cut as a loop.
#[test]
fn crack_loop_bad_input_is_refused_and_changes_nothing() {
    use super::super::extend::End;
    use super::super::loops::{close_loop, ends_meet};
    let mesh = slab();
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, 0.002);
    let bounds = AngleBounds::default();
    let before = (crack.volume(), crack.triangle_count(), crack.lines().to_vec());
    let state = |c: &CrackMesh| (c.volume(), c.triangle_count(), c.lines().to_vec());
    let closings = [
        (7, DVec3::X, 0.002, 0.05, "line"),
        (0, DVec3::ZERO, 0.002, 0.05, "normal"),
        (0, DVec3::new(f64::NAN, 0.0, 0.0), 0.002, 0.05, "normal"),
        (0, DVec3::X, f64::NAN, 0.05, "thickness"),
        (0, DVec3::X, 0.002, -1.0, "depth"),
    ];
    for (line, normal, thickness, depth, named) in closings {
        let refusal = close_loop(&mut crack, line, End::Finish, normal, thickness, depth, bounds).unwrap_err();
        assert!(
            matches!(refusal, Refusal::BadInput(_)) && refusal.to_string().contains(named),
            "{refusal}"
        );
        assert_eq!(state(&crack), before);
    }
    assert!(!ends_meet(&crack, 0, DVec3::X));
    assert_eq!(
        close_loop(&mut crack, 0, End::Start, DVec3::X, 0.002, 0.05, bounds),
        Err(Refusal::Crossings)
    );
    assert_eq!(state(&crack), before);
    for (line, reach, thickness, named) in [
        (7, 0.1, 0.002, "line"),
        (0, f64::NAN, 0.002, "reach"),
        (0, 0.1, 0.0, "thickness"),
    ] {
        let refusal = cut_loop(&mut crack, line, reach, thickness, bounds).unwrap_err();
        assert!(refusal.to_string().contains(named), "{refusal}");
    }
    assert_eq!(cut_loop(&mut crack, 0, 0.1, 0.002, bounds), Err(Refusal::NotThrough));
    assert_eq!(loop_width(&crack, 0), None);
    assert_eq!(state(&crack), before);
}

/// On a curved body: a crack opened on top of a unit sphere (5,120 triangles), in a skin under
/// tension, runs round a great circle and closes into a loop; the mesh is valid at every
/// sub-step and the sphere is one piece.
#[test]
fn crack_loop_closes_round_a_sphere() {
    let mesh = shatter_collision::TriMesh::icosphere(1.0, 4);
    let edge = mean_edge(&mesh);
    let thickness = 0.002;
    let mut crack = opened(&mesh, DVec3::new(0.0, 1.0, 0.0), DVec3::X, thickness);
    let skin = move |x: DVec3| (if 1.0 - x.length() < 1.5 * edge { 1.5 } else { 0.5 }, DVec3::X);
    let (steps, closed) = run(&mut crack, &skin, mesh.signed_volume(), edge, thickness, 400, false);
    let width = loop_width(&crack, 0);
    println!("sphere: {steps} sub-steps, closed {closed}, ligament width {width:?}, edge {edge:.4}");
    assert_eq!(closed, 1);
    // The loop runs round the uncut core: its front stops at least a quarter of an edge inside
    // (the gap kept from the surface) and at most the skin and one step (three quarters of an
    // edge) in, so the ligament's diameter lies between.
    let width = width.expect("a closed loop has a ligament");
    let (least, most) = (2.0 * (1.0 - 2.25 * edge), 2.0 * (1.0 - 0.25 * edge));
    assert!(
        width > least && width < most,
        "ligament {width} outside {least}..{most}"
    );
    assert_eq!(pieces(&crack).unwrap().len(), 1);
}

/// The tip field of a closed loop (`tip`): a ring crack has no cut region to read its depth
/// across, so each node's depth is its distance to the nearest vertex of the mouth, which round
/// a 0.2 x 0.2 m bar is the node's depth below the bar's faces (within an element); under a
/// uniform opening stress every node gets Tada's intensity for that depth, and the ligament
/// ahead of it runs across the uncut core, no wider than the bar.
#[test]
fn crack_tip_field_reads_a_loop_by_its_mouth() {
    let (mesh, crack) = ring_round_a_bar();
    let edge = mean_edge(&mesh);
    let p = 2.0e6;
    let uniform = |_: DVec3| glam::DMat3::from_diagonal(DVec3::new(p, 0.0, 0.0));
    let field = super::super::tip::TipField::of(&crack, &uniform, 0.5 * edge, 2.0 * edge);
    let ring = &crack.lines()[0].nodes;
    assert_eq!(field.nodes().len(), ring.len(), "every loop node, no ends");
    for node in field.nodes() {
        let below = 0.1 - node.position.y.abs().max(node.position.z.abs());
        assert!((node.depth - below).abs() < edge, "{node:?}: {below} below the faces");
        let exact = 1.1215 * p * (core::f64::consts::PI * node.depth).sqrt();
        assert!((node.intensity / exact - 1.0).abs() < 0.005, "{node:?}");
        let ligament = node.ligament.expect("the core ahead");
        assert!(ligament > 0.0 && ligament < 0.2 * 2f64.sqrt(), "{node:?}");
        assert!(node.net_section > 0.0);
    }
}
