//! Pieces found on a grid (`separate`): a crack across a slab that the surface was never cut
//! along still splits it, where the ligament left is thin enough to break, and only there.

use glam::DVec3;
use shatter_collision::TriMesh;

use super::super::mesh::{CrackMesh, mean_edge};
use super::super::separate::{Separation, separate};
use super::super::track::{TrackSettings, any_active, substep};
use super::{grow, opened, slab_with_cells};
use crate::error::FractureError;

/// Half extents of the slab of `slab_with_cells` (m).
const HALF: DVec3 = DVec3::new(0.5, 0.2, 0.3);

/// Crack thickness (m).
const THICKNESS: f64 = 0.002;

/// The slab on 0.1 m cells with a crack opened on its top face across x, grown for at most
/// `substeps` sub-steps (stress 1.5 against threshold 1); the crack plane's x and the edge.
fn cracked_slab(substeps: usize) -> (TriMesh, CrackMesh, f64, f64) {
    let mesh = slab_with_cells(0.1);
    let edge = mean_edge(&mesh);
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, THICKNESS);
    grow(&mut crack, mesh.signed_volume(), 1.5, edge, THICKNESS, substeps);
    let x0 = crack.positions()[crack.lines()[0].nodes[0] as usize].x;
    (mesh, crack, x0, edge)
}

fn settings(edge: f64, ligament: f64) -> Separation {
    Separation {
        spacing: 0.25 * edge,
        ligament,
        smallest: (2.0 * edge).powi(3),
        edge,
    }
}

/// A crack grown until its front stopped a quarter edge short of the slab's far faces, never
/// cut: the grid finds the slab's two sides, each a closed solid on its side of the crack plane
/// whose volume is the box on that side to within a layer of samples over the section (the
/// pieces' surfaces are resolved to the grid) and the slot.
#[test]
fn separate_finds_the_two_sides_of_a_slab_its_uncut_crack_spans() {
    let (mesh, crack, x0, edge) = cracked_slab(200);
    assert!(crack.lines().iter().all(|l| !l.through), "the crack is not cut through");
    let separation = settings(edge, 2.0 * edge);
    let pieces = separate(&mesh, &crack, &separation).unwrap();
    assert_eq!(pieces.len(), 2);
    let section = 4.0 * HALF.y * HALF.z;
    let layer = separation.spacing * section;
    let mut total = 0.0;
    for (piece, integrals) in &pieces {
        shatter_collision::topology::require_solid(piece).unwrap();
        let (lo, hi) = piece
            .vertices()
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v.x), h.max(v.x)));
        // Each piece on one side: its surface stops within a sample of the crack plane.
        let above = lo > x0 - separation.spacing;
        assert!(above || hi < x0 + separation.spacing, "x from {lo} to {hi} about {x0}");
        let side = if above { HALF.x - x0 } else { x0 + HALF.x };
        let expected = side * section;
        println!("piece volume {:.5} against {expected:.5}", integrals.volume);
        assert!(
            (integrals.volume - expected).abs() < layer + THICKNESS * section,
            "{} against {expected}",
            integrals.volume
        );
        total += integrals.volume;
        // Simplified to the body's edge: no more triangles than twice an even mesh of that
        // edge over the piece's area, and none of the contour's slivers.
        let even = piece.surface_area() / (3f64.sqrt() / 4.0 * edge * edge);
        assert!(
            (piece.triangles().len() as f64) < 2.0 * even,
            "{} triangles, even {even}",
            piece.triangles().len()
        );
        let sharpest = (0..piece.triangles().len())
            .flat_map(|t| crate::bem::crack::validate::triangle_angles(piece.triangle(t)))
            .fold(f64::INFINITY, f64::min);
        println!(
            "{} triangles, smallest angle {sharpest:.1} degrees",
            piece.triangles().len()
        );
        assert!(sharpest > 5.0, "a {sharpest} degree angle");
    }
    let whole = 8.0 * HALF.x * HALF.y * HALF.z;
    assert!((total - whole).abs() < 2.0 * layer, "{total} of {whole}");
}

/// A crack under a stress above the threshold only in the slab's upper half: it runs across
/// the top and down the sides and arrests about half way down. With a ligament of one edge the
/// slab holds; with one wider than what is left below the front it breaks in two, the ligament
/// bridged.
#[test]
fn separate_breaks_only_ligaments_no_thicker_than_the_setting() {
    let mesh = slab_with_cells(0.1);
    let edge = mean_edge(&mesh);
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, THICKNESS);
    let stress = |x: DVec3| (if x.y > 0.0 { 1.5 } else { 0.5 }, DVec3::X);
    let track = TrackSettings {
        validate: true,
        ..TrackSettings::new(edge, 1.0, THICKNESS)
    };
    for step in 0..100 {
        if !any_active(&crack) {
            break;
        }
        substep(&mut crack, &stress, &track).unwrap_or_else(|f| panic!("sub-step {step}: {f}"));
    }
    let deepest = crack.lines()[0]
        .nodes
        .iter()
        .map(|&v| crack.positions()[v as usize].y)
        .fold(f64::MAX, f64::min);
    let ligament = deepest + HALF.y;
    println!("front down to y = {deepest:.3}: ligament {ligament:.3} m");
    for &v in &crack.lines()[0].nodes {
        println!(
            "  node {:?} active {}",
            crack.positions()[v as usize],
            crack.is_active(v)
        );
    }
    assert!(
        ligament > edge,
        "the front should stop more than an edge from the floor"
    );
    assert!(separate(&mesh, &crack, &settings(edge, edge)).unwrap().is_empty());
    let pieces = separate(&mesh, &crack, &settings(edge, 2.0 * HALF.y)).unwrap();
    assert_eq!(pieces.len(), 2, "a ligament within the setting breaks");
}

/// The pieces are the same, bit for bit, on one and on two threads.
#[test]
fn separate_is_the_same_on_any_thread_count() {
    let (mesh, crack, _, edge) = cracked_slab(200);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| separate(&mesh, &crack, &settings(edge, 2.0 * edge)).unwrap())
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(one.len(), two.len());
    for ((a, _), (b, _)) in one.iter().zip(&two) {
        assert_eq!(a.vertices(), b.vertices());
        assert_eq!(a.triangles(), b.triangles());
    }
}

/// A surface without cracks stays whole, and bad settings are refused by name.
#[test]
fn separate_refuses_bad_settings_and_leaves_an_uncracked_body_whole() {
    let mesh = slab_with_cells(0.1);
    let crack = CrackMesh::try_new(&mesh).unwrap();
    assert!(separate(&mesh, &crack, &settings(0.1, 0.2)).unwrap().is_empty());
    for (bad, name) in [
        (
            Separation {
                spacing: 0.0,
                ..settings(0.1, 0.2)
            },
            "spacing",
        ),
        (
            Separation {
                spacing: f64::NAN,
                ..settings(0.1, 0.2)
            },
            "spacing",
        ),
        (
            Separation {
                ligament: -1.0,
                ..settings(0.1, 0.2)
            },
            "ligament",
        ),
        (
            Separation {
                smallest: f64::INFINITY,
                ..settings(0.1, 0.2)
            },
            "smallest",
        ),
        (
            Separation {
                edge: -0.1,
                ..settings(0.1, 0.2)
            },
            "surface edge",
        ),
    ] {
        match separate(&mesh, &crack, &bad) {
            Err(FractureError::InvalidValue { what, .. }) => assert!(what.contains(name), "{what}"),
            other => panic!("{bad:?} gave {other:?}"),
        }
    }
}
