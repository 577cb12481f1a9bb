use glam::DVec3;

use super::*;
use crate::aabb::Aabb;
use crate::grid::{GridSpec, SdfGrid};
use crate::marching_cubes::contour;
use crate::topology::components;
use crate::triangle_intersection::first_self_intersection;

/// The contoured zero set of `distance` over `bounds`, `spacing` apart.
fn contoured(bounds: Aabb, spacing: f64, distance: impl Fn(DVec3) -> f64 + Sync) -> TriMesh {
    let spec = GridSpec::covering(bounds, spacing, 2).unwrap();
    contour(&SdfGrid::from_fn(spec, distance).unwrap()).unwrap()
}

fn cube(r: f64) -> Aabb {
    Aabb {
        min: DVec3::splat(-r),
        max: DVec3::splat(r),
    }
}

fn smallest_angle_degrees(mesh: &TriMesh) -> f64 {
    (0..mesh.triangles().len())
        .map(|t| surface::smallest_angle(mesh.triangle(t)).to_degrees())
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn simplify_a_contoured_sphere_keeps_it_closed_round_and_its_volume() {
    let (radius, h) = (0.5, 0.02);
    let mesh = contoured(cube(0.6), h, |p| p.length() - radius);
    let target = 2.0 * h;
    let deviation = 0.1 * h;
    let (out, report) = simplify(&mesh, &Simplification::new(target, deviation)).unwrap();
    require_solid(&out).unwrap();
    assert!(first_self_intersection(&out).is_none());
    assert_eq!(components(&out).1, 1);
    assert!(!report.unchanged, "{report:?}");
    // An even mesh of edge L holds about area / (sqrt(3)/4 L^2) triangles; allow twice that.
    let area = 4.0 * std::f64::consts::PI * radius * radius;
    let even = area / (3f64.sqrt() / 4.0 * target * target);
    assert!(
        (out.triangles().len() as f64) < 2.0 * even && out.triangles().len() * 3 < mesh.triangles().len(),
        "{} triangles from {} (an even mesh holds {even:.0})",
        out.triangles().len(),
        mesh.triangles().len()
    );
    // Every vertex stays within the deviation of the contoured sphere plus the contour's own
    // error (a chord of the lattice, under a tenth of a spacing at this radius).
    let worst = out
        .vertices()
        .iter()
        .map(|p| (p.length() - radius).abs())
        .fold(0.0, f64::max);
    assert!(worst < deviation + 0.1 * h, "vertex {worst} m off the sphere");
    // Chords up to 4/3 L long cut under the sphere by their sagitta, (4/3 L)^2 / (8 R): a
    // relative volume of at most three times sagitta over radius.
    let exact = 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
    let change = (out.signed_volume() - mesh.signed_volume()).abs() / exact;
    let sagitta = (4.0 / 3.0 * target).powi(2) / (8.0 * radius);
    assert!(change < 3.0 * sagitta / radius, "volume changed by {change}");
    // The contour's slivers are gone.
    assert!(smallest_angle_degrees(&mesh) < 5.0);
    assert!(smallest_angle_degrees(&out) > 10.0, "{}", smallest_angle_degrees(&out));
    assert_eq!(report.triangles_after, out.triangles().len());
}

#[test]
fn simplify_keeps_a_box_s_corners_and_edges() {
    let h = 0.05;
    let half = DVec3::new(0.4, 0.3, 0.2);
    // A box whose faces lie between samples, so the contour has its corners where the box has.
    let mesh = contoured(cube(0.6), h, |p| {
        let q = p.abs() - half;
        q.max(DVec3::ZERO).length() + q.max_element().min(0.0)
    });
    let (out, report) = simplify(&mesh, &Simplification::new(3.0 * h, 0.05 * h)).unwrap();
    require_solid(&out).unwrap();
    assert!(out.triangles().len() * 3 < mesh.triangles().len(), "{report:?}");
    let (a, b) = (mesh.bounds().unwrap(), out.bounds().unwrap());
    let moved = (a.min - b.min).abs().max(a.max - b.max).max_element();
    assert!(moved < 1e-9, "faces moved by {moved} m");
    let change = (out.signed_volume() - mesh.signed_volume()).abs() / mesh.signed_volume();
    assert!(change < 1e-3, "volume changed by {change}");
}

#[test]
fn simplify_a_thin_shell_keeps_both_walls_apart() {
    // A hollow sphere whose wall is three samples thick: collapses on one wall must not reach
    // through to the other.
    let h = 0.02;
    let (inner, outer) = (0.3, 0.36);
    let mesh = contoured(cube(0.45), h, |p| (p.length() - outer).max(inner - p.length()));
    let target = 4.0 * h;
    let (out, _) = simplify(&mesh, &Simplification::new(target, 0.2 * h)).unwrap();
    require_solid(&out).unwrap();
    assert!(first_self_intersection(&out).is_none());
    assert_eq!(components(&out).1, 2);
    // Each sphere's chords cut under it by at most their sagitta (see the sphere's test).
    let sweep = |r: f64| 4.0 * std::f64::consts::PI * r * r * (4.0 / 3.0 * target).powi(2) / (8.0 * r);
    let change = (out.signed_volume() - mesh.signed_volume()).abs();
    assert!(change < sweep(outer) + sweep(inner), "volume changed by {change} m^3");
    assert!(out.triangles().len() * 4 < mesh.triangles().len());
}

#[test]
fn simplify_is_deterministic_and_leaves_an_even_mesh_alone() {
    let mesh = TriMesh::icosphere(1.0, 3);
    let settings = Simplification::new(0.05, 0.01);
    let (out, report) = simplify(&mesh, &settings).unwrap();
    // Its edges (about 0.3 m) are all far above the band: nothing to collapse.
    assert_eq!(report.collapses, 0);
    assert_eq!(out.triangles().len(), mesh.triangles().len());
    let wavy = contoured(cube(1.2), 0.1, |p| p.length() - 1.0 - 0.05 * (5.0 * p.x).sin());
    let settings = Simplification::new(0.25, 0.01);
    assert_eq!(simplify(&wavy, &settings).unwrap(), simplify(&wavy, &settings).unwrap());
}

#[test]
fn simplify_names_bad_settings_and_refuses_an_open_mesh() {
    let mesh = TriMesh::icosphere(1.0, 1);
    for (settings, name) in [
        (Simplification::new(f64::NAN, 0.1), "target edge"),
        (Simplification::new(0.1, -1.0), "largest deviation"),
        (
            Simplification {
                min_angle_degrees: 70.0,
                ..Simplification::new(0.1, 0.1)
            },
            "smallest angle",
        ),
        (
            Simplification {
                max_turn_degrees: 0.0,
                ..Simplification::new(0.1, 0.1)
            },
            "largest normal turn",
        ),
    ] {
        let message = simplify(&mesh, &settings).unwrap_err().to_string();
        assert!(message.contains(name), "{message}");
    }
    let (positions, mut triangles) = mesh.into_parts();
    triangles.pop();
    let open = TriMesh::try_new(positions, triangles).unwrap();
    assert!(matches!(
        simplify(&open, &Simplification::new(0.1, 0.1)),
        Err(GeometryError::NotSolid(_))
    ));
}

#[test]
fn simplify_keeps_the_sheets_of_a_thin_wavy_shell_apart() {
    // Two sheets a little over a sample apart with a deviation bound of a sample: the bound
    // alone would let each sheet move into the other; the edits' intersection checks do not.
    let h = 0.02;
    let (inner, outer) = (0.3, 0.325);
    let wave = |p: DVec3| 0.02 * (7.0 * p.x).sin() * (5.0 * p.z).cos();
    let mesh = contoured(cube(0.4), h, |p| {
        let r = p.length() + wave(p);
        (r - outer).max(inner - r)
    });
    assert!(first_self_intersection(&mesh).is_none());
    let (out, report) = simplify(&mesh, &Simplification::new(4.0 * h, 1.0 * h)).unwrap();
    assert!(!report.unchanged, "{report:?}");
    assert!(first_self_intersection(&out).is_none());
    require_solid(&out).unwrap();
    assert_eq!(components(&out).1, components(&mesh).1);
    assert!(out.triangles().len() * 4 < mesh.triangles().len(), "{report:?}");
}
