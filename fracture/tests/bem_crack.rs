//! Crack initiation on boundary-element stress (`fracture::bem::crack`, Zhu 2015 section 6.3):
//! where the Rankine criterion starts cracks, and why the stress at sharp edges must be read one
//! triangle inside the body. `-- --nocapture` prints the measured stresses.

use glam::{DMat3, DVec3};
use shatter_collision::TriMesh;
use shatter_fracture::bem::crack::{AngleBounds, CrackMesh, candidates, initiate, validate};
use shatter_fracture::bem::meshes::{Grading, grid_box, notched_bar};
use shatter_fracture::bem::{BemSettings, Elastic, ElasticBody, Loads, principal_stress};

/// Pull `s` (Pa) on both x faces of `mesh` (every triangle facing +-x within 8 degrees), and
/// return the body, the stress at each vertex read `inset` (m) inside, and the recovered stress
/// at the surface itself.
fn pulled(mesh: TriMesh, s: f64, inset: f64) -> (ElasticBody, Vec<DMat3>, Vec<DMat3>) {
    let body = ElasticBody::try_new(mesh, Elastic::try_new(20.0e9, 0.25).unwrap(), BemSettings::default()).unwrap();
    let surface = body.surface();
    let mut loads = Loads::new(surface, 2500.0).unwrap();
    for i in 0..surface.len() {
        let n = surface.normals()[i];
        if n.x.abs() > 0.99 {
            loads.add_traction(i, n * s).unwrap();
        }
    }
    let solution = body.solve(&loads).unwrap();
    let (inside, at_surface) = (solution.inset_vertex_stresses(inset), solution.vertex_stresses());
    drop(solution);
    (body, inside, at_surface)
}

/// Point 5: under uniform tension s the stress is s everywhere, so a threshold of 1.1 s starts
/// no crack. The stress is read one triangle inside each vertex (the mitigation of
/// `bem::solution` for sharp edges): measured on 768 triangles, the largest principal stress is
/// at most 1.04 s on the faces and 1.00 s at edges and corners (read at the surface it is 1.00 s
/// on the faces and 0.85 s at the edges: the unconverged edge stress errs in other components).
#[test]
fn bem_crack_uniform_tension_starts_no_crack_at_a_cubes_edges() {
    let (half, spacing, s) = (DVec3::splat(0.5), 0.125, 1.0e6);
    let mesh = grid_box(half, spacing, Grading::Cosine).unwrap();
    let (_, inside, at_surface) = pulled(mesh.clone(), s, spacing);
    let on_edge = |v: usize| {
        let at = (mesh.vertices()[v].abs() - half).abs().cmple(DVec3::splat(1e-9));
        u32::from(at.x) + u32::from(at.y) + u32::from(at.z) >= 2
    };
    let largest = |stresses: &[DMat3], edge: bool| {
        (0..stresses.len())
            .filter(|&v| on_edge(v) == edge)
            .map(|v| principal_stress(stresses[v]).unwrap().values[0] / s)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    println!(
        "cube under tension, largest principal stress / s: inside faces {:.3}, edges {:.3}; at the surface faces {:.3}, edges {:.3}",
        largest(&inside, false),
        largest(&inside, true),
        largest(&at_surface, false),
        largest(&at_surface, true)
    );
    let crack = CrackMesh::try_new(&mesh).unwrap();
    let found = candidates(&crack, &inside, &|_| 1.1 * s).unwrap();
    assert!(found.is_empty(), "{found:?}");
    // The same threshold just under s finds candidates: the test can fail.
    assert!(!candidates(&crack, &inside, &|_| 0.99 * s).unwrap().is_empty());
}

/// Point 5: a notched bar under the same tension starts its crack at the notch root, across the
/// pull direction, and the opening leaves a valid mesh.
#[test]
fn bem_crack_notched_bar_starts_at_the_notch() {
    let (half, spacing, s) = (DVec3::new(0.5, 0.2, 0.2), 0.05, 1.0e6);
    let (depth, half_width) = (0.1, 0.1);
    let mesh = notched_bar(half, spacing, depth, half_width).unwrap();
    let (_, inside, _) = pulled(mesh.clone(), s, spacing);
    let mut crack = CrackMesh::try_new(&mesh).unwrap();
    let found = candidates(&crack, &inside, &|_| 1.1 * s).unwrap();
    let root = DVec3::new(0.0, -half.y + depth, 0.0);
    println!(
        "notched bar: {} candidates, strongest {:.2} s at {:?}",
        found.len(),
        found.first().map_or(0.0, |c| c.stress / s),
        found.first().map(|c| mesh.vertices()[c.vertex as usize])
    );
    let first = found.first().expect("the notch concentrates the stress above 1.1 s");
    let at = mesh.vertices()[first.vertex as usize];
    assert!(
        (at.x - root.x).abs() <= spacing + 1e-9 && (at.y - root.y).abs() <= spacing + 1e-9,
        "{at:?}"
    );
    assert!(
        first.direction.x.abs() > 0.9,
        "the crack plane is across the pull: {:?}",
        first.direction
    );
    for c in &found {
        let x = mesh.vertices()[c.vertex as usize];
        assert!(
            x.x.abs() <= half_width + spacing,
            "a candidate away from the notch at {x:?}"
        );
    }
    let lines = initiate(&mut crack, &found, 0.002, 0.5 * spacing, AngleBounds::default());
    assert!(!lines.is_empty());
    validate(&crack, AngleBounds::default()).unwrap();
}
