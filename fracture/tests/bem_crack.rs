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

/// A whole fracture event on boundary-element stress: a notched bar pulled at both ends (1 MPa
/// on the end caps) opens one crack at the notch, across the pull, and its front, moving in the
/// bar's stress with the surface validated after every sub-step, spreads over the whole section
/// until every node has stopped.
#[test]
fn bem_crack_event_on_a_notched_bar_spreads_a_crack_across_the_section() {
    use shatter_fracture::bem::crack::{EventSettings, Rankine, fracture_event};
    let (half, spacing, s) = (DVec3::new(0.5, 0.2, 0.2), 0.05, 1.0e6);
    let mesh = notched_bar(half, spacing, 0.1, 0.1).unwrap();
    let loads = |surface: &shatter_fracture::bem::Surface| {
        let mut loads = Loads::new(surface, 2500.0)?;
        for i in 0..surface.len() {
            let n = surface.normals()[i];
            if n.x.abs() > 0.99 && surface.centroids()[i].x.abs() > 0.45 {
                loads.add_traction(i, n * s)?;
            }
        }
        Ok(loads)
    };
    let material = Elastic::try_new(20.0e9, 0.25).unwrap();
    let rankine = Rankine::try_new(1.1 * s, 0.5 * s).unwrap();
    let mut settings = EventSettings::new(material, rankine, spacing, 0.002);
    settings.track.validate = true;
    settings.track.front.planar = true;
    let run = || fracture_event(&mesh, &loads, &settings).unwrap();
    let (crack, report) = run();
    let area = crack.crack_area();
    println!("notched bar event: {report:?}, crack area {area:.4} m^2");
    assert_eq!(report.opened, 1);
    assert_eq!(report.iterations.len(), 1);
    assert!(report.substeps < settings.max_substeps, "the fronts should stop");
    let line = &crack.lines()[0];
    let start = crack.positions()[line.nodes.first().copied().unwrap_or(line.nodes[0]) as usize];
    assert!(
        start.x.abs() <= 0.1 + spacing && line.plane_normal.x.abs() > 0.99,
        "{start:?} {:?}",
        line.plane_normal
    );
    // The section above the notch at the crack is about 0.4 x 0.33 m.
    assert!(area > 0.7 * 0.4 * 0.33 && area < 0.4 * 0.4, "crack area {area}");
    // The same event gives the same surface, bit for bit.
    let (again, _) = run();
    let bits = |m: &CrackMesh| {
        let (t, _) = m.to_trimesh().unwrap();
        (
            t.vertices()
                .iter()
                .flat_map(|v| v.to_array().map(f64::to_bits))
                .collect::<Vec<_>>(),
            t.triangles().to_vec(),
        )
    };
    assert_eq!(bits(&crack), bits(&again));
}
