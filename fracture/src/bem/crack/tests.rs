//! Tests of crack tracking on the surface mesh: the validator, the remeshing rules, opening a
//! crack and moving its front, each checked by the validator after every step.

use glam::DVec3;
use proptest::prelude::*;
use shatter_collision::TriMesh;

use super::improve::RemeshSettings;
use super::mesh::{CrackMesh, mean_edge};
use super::open::{Opening, Refusal, open_crack};
use super::ops::{collapse_edge, flip_edge, split_edge};
use super::track::{TrackSettings, any_active, substep};
use super::validate::{AngleBounds, MeshFault, validate};
use crate::bem::meshes::{Grading, grid_box, hollow_sphere};

mod breakout;
mod loops;
mod separate;

fn sphere() -> TriMesh {
    TriMesh::icosphere(1.0, 3)
}

fn slab() -> TriMesh {
    slab_with_cells(0.1)
}

/// The 1.0 x 0.4 x 0.6 m slab with cells of `spacing` (m).
fn slab_with_cells(spacing: f64) -> TriMesh {
    grid_box(DVec3::new(0.5, 0.2, 0.3), spacing, Grading::Uniform).unwrap()
}

/// The vertex of `mesh` nearest `x`.
fn nearest_vertex(mesh: &CrackMesh, x: DVec3) -> u32 {
    (0..mesh.positions().len() as u32)
        .filter(|&v| mesh.vertex_in_use(v))
        .min_by(|&a, &b| {
            let da = mesh.positions()[a as usize].distance_squared(x);
            let db = mesh.positions()[b as usize].distance_squared(x);
            da.total_cmp(&db).then(a.cmp(&b))
        })
        .unwrap()
}

#[test]
fn crack_validator_accepts_solids_and_names_each_fault() {
    let bounds = AngleBounds::default();
    for mesh in [sphere(), slab()] {
        let check = validate(&CrackMesh::try_new(&mesh).unwrap(), bounds).unwrap();
        assert_eq!(check.components, 1);
        assert!((check.volume - mesh.signed_volume()).abs() < 1e-12);
    }
    // A hollow sphere: the cavity has negative volume but lies inside the solid.
    let hollow = CrackMesh::try_new(&hollow_sphere(0.5, 1.0, 2).unwrap()).unwrap();
    assert_eq!(validate(&hollow, bounds).unwrap().components, 2);

    let mut flipped = CrackMesh::try_new(&sphere()).unwrap();
    let [a, b, c] = flipped.triangle_slots()[7];
    flipped.replace_triangle(7, [a, c, b]);
    assert!(matches!(
        validate(&flipped, bounds),
        Err(MeshFault::EdgeOrientation { .. })
    ));

    let mut open = CrackMesh::try_new(&sphere()).unwrap();
    open.remove_triangle(3);
    assert!(matches!(
        validate(&open, bounds),
        Err(MeshFault::EdgeUses { uses: 1, .. })
    ));

    // Push a vertex through the far side of the sphere.
    let mut pierced = CrackMesh::try_new(&sphere()).unwrap();
    let x = pierced.positions()[0];
    pierced.set_position(0, -1.2 * x);
    let loose = AngleBounds {
        min_degrees: 0.0,
        max_degrees: 180.0,
    };
    assert!(matches!(validate(&pierced, loose), Err(MeshFault::Intersection { .. })));
    // A vertex moved onto the segment between two of its neighbours makes a flat triangle.
    let mut flat = CrackMesh::try_new(&sphere()).unwrap();
    let ring = flat.ring(0).unwrap();
    let middle = (flat.positions()[ring[0] as usize] + flat.positions()[ring[1] as usize]) * 0.5;
    flat.set_position(0, middle);
    assert!(matches!(validate(&flat, bounds), Err(MeshFault::Angle { degrees, .. }) if degrees > 179.0));

    // Two tetrahedra sharing one vertex: the vertex is pinched.
    let v = vec![
        DVec3::ZERO,
        DVec3::X,
        DVec3::Y,
        DVec3::Z,
        -DVec3::X,
        -DVec3::Y,
        -DVec3::Z,
    ];
    let tet = |a: u32, b: u32, c: u32| [[0, b, a], [0, a, c], [0, c, b], [a, b, c]];
    let mut triangles = tet(1, 2, 3).to_vec();
    triangles.extend(tet(4, 6, 5));
    let pinched = TriMesh::try_new(v, triangles).unwrap();
    let pinched = CrackMesh::try_new(&pinched).unwrap();
    assert!(matches!(
        validate(&pinched, loose),
        Err(MeshFault::Pinched { vertex: 0 })
    ));

    // Inside out: every edge is consistent, but the volume is negative with nothing around it.
    let mut inverted = CrackMesh::try_new(&sphere()).unwrap();
    for t in 0..inverted.triangle_slots().len() as u32 {
        let [a, b, c] = inverted.triangle_slots()[t as usize];
        inverted.replace_triangle(t, [a, c, b]);
    }
    assert!(matches!(validate(&inverted, bounds), Err(MeshFault::Volume { .. })));
}

/// Opens a crack at the vertex of `mesh` nearest `at`, across `plane_normal`.
fn opened(mesh: &TriMesh, at: DVec3, plane_normal: DVec3, thickness: f64) -> CrackMesh {
    let mut crack = CrackMesh::try_new(mesh).unwrap();
    let vertex = nearest_vertex(&crack, at);
    let depth = 0.5 * mean_edge(mesh);
    open_crack(
        &mut crack,
        Opening {
            vertex,
            plane_normal,
            thickness,
            depth,
        },
        AngleBounds::default(),
    )
    .unwrap();
    crack
}

#[test]
fn crack_opening_cuts_a_thin_slot_and_keeps_the_mesh_valid() {
    let thickness = 0.002;
    for (mesh, at, e) in [
        (sphere(), DVec3::new(0.3, 0.9, 0.3), DVec3::X),
        (slab(), DVec3::new(0.04, 0.2, 0.03), DVec3::new(1.0, 0.0, 0.2)),
    ] {
        let before = mesh.signed_volume();
        let crack = opened(&mesh, at, e, thickness);
        let check = validate(&crack, AngleBounds::default()).unwrap();
        assert_eq!(check.components, 1);
        let line = &crack.lines()[0];
        assert_eq!(line.nodes.len(), 3);
        let [a, f, b] = [line.nodes[0], line.nodes[1], line.nodes[2]];
        assert!(crack.is_active(f) && !crack.is_active(a) && !crack.is_active(b));
        assert!([a, f, b].iter().all(|&v| crack.is_crack_node(v)));
        // The ends lie on the crack plane (within the snap angle), the front is inside.
        let x = |v: u32| crack.positions()[v as usize];
        let e = e.normalize();
        let origin = x(f);
        for end in [a, b] {
            let d = x(end) - origin;
            assert!(e.dot(d).abs() <= d.length() * super::open::SNAP_DEGREES.to_radians().sin() + 1e-12);
        }
        // The slot removes volume, at most the thickness times the crack area.
        let removed = before - check.volume;
        let area = crack.crack_area();
        assert!(
            removed > 0.0 && removed <= thickness * area,
            "removed {removed}, t A {}",
            thickness * area
        );
    }
}

#[test]
fn crack_remeshing_follows_the_crack_node_rules() {
    let bounds = AngleBounds::default();
    let mesh = slab();
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, 0.002);
    let line = crack.lines()[0].nodes.clone();
    let (a, f) = (line[0], line[1]);
    // Splitting a segment of the line inserts an active crack node into the line.
    let mid = (crack.positions()[a as usize] + crack.positions()[f as usize]) * 0.5;
    let m = split_edge(&mut crack, a, f, mid, bounds).expect("split of a line segment");
    assert!(crack.is_crack_node(m) && crack.is_active(m));
    assert_eq!(crack.lines()[0].nodes[..3], [a, m, f]);
    validate(&crack, bounds).unwrap();
    // Splitting a wall edge from the front to the mouth gives an ordinary vertex.
    let ring = crack.ring(f).unwrap();
    let mouth = *ring.iter().find(|&&r| !crack.is_crack_node(r)).unwrap();
    let mid = (crack.positions()[mouth as usize] + crack.positions()[f as usize]) * 0.5;
    let w = split_edge(&mut crack, f, mouth, mid, bounds).expect("split of a wall edge");
    assert!(!crack.is_crack_node(w));
    validate(&crack, bounds).unwrap();
    // A crack line segment is never flipped away.
    assert!(!flip_edge(&mut crack, m, f, bounds, 35.0));
    // A front node is never merged into the line's end (the front would retreat to the surface).
    let before = crack.positions().to_vec();
    assert_eq!(collapse_edge(&mut crack, m, a, &RemeshSettings::for_edge(0.1)), None);
    assert_eq!(crack.positions(), &before[..]);
    // Two front nodes merge along their line: a node split in next to f merges back into it, f
    // stays where it is, and the other leaves the line and stops being a crack node.
    let b = crack.lines()[0].nodes[3];
    let near = crack.positions()[m as usize].lerp(crack.positions()[f as usize], 0.9);
    let n = split_edge(&mut crack, m, f, near, bounds).expect("split of a line segment");
    assert_eq!(crack.lines()[0].nodes, [a, m, n, f, b]);
    let at = crack.positions()[f as usize];
    assert_eq!(collapse_edge(&mut crack, f, n, &RemeshSettings::for_edge(0.1)), Some(f));
    assert_eq!(crack.lines()[0].nodes, [a, m, f, b]);
    assert_eq!(crack.positions()[f as usize], at);
    assert!(!crack.is_crack_node(n) && !crack.vertex_in_use(n));
    validate(&crack, bounds).unwrap();
}

/// Runs validated sub-steps under a uniform principal stress `sigma` across the first line's
/// plane until no node is active or `limit` sub-steps, checking after each that the volume lost
/// since the uncracked `volume0` stays within the thickness times the crack area; returns the
/// sub-steps run, the nodes that reached the surface and the ends extended.
fn grow(
    crack: &mut CrackMesh,
    volume0: f64,
    sigma: f64,
    target_edge: f64,
    thickness: f64,
    limit: usize,
) -> (usize, usize, usize) {
    let e = crack.lines()[0].plane_normal;
    let stress = move |_x: DVec3| (sigma, e);
    let settings = TrackSettings {
        validate: true,
        ..TrackSettings::new(target_edge, 1.0, thickness)
    };
    let (mut reached, mut extended) = (0, 0);
    for step in 0..limit {
        if !any_active(crack) {
            return (step, reached, extended);
        }
        let report = substep(crack, &stress, &settings).unwrap_or_else(|f| panic!("sub-step {step}: {f}"));
        reached += report.front.reached.len();
        extended += report.extended;
        let volume = report.check.expect("validated").volume;
        let removed = volume0 - volume;
        assert!(
            removed.abs() <= thickness * crack.crack_area() + 1e-12,
            "sub-step {step}: volume change {removed} beyond t A {}",
            thickness * crack.crack_area()
        );
    }
    (limit, reached, extended)
}

/// Under a uniform stress above the threshold a crack opened on the top of a slab spreads
/// across the whole section: the fronts reach the far faces, the ends extend along the surface
/// until they are blocked, and the crack surface covers most of the 0.4 x 0.6 m section (all of
/// it but the ligament the fronts stop short of the surface).
#[test]
fn crack_front_spreads_across_a_slab_section() {
    let mesh = slab();
    let edge = mean_edge(&mesh);
    let thickness = 0.002;
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, thickness);
    let (steps, reached, extended) = grow(&mut crack, mesh.signed_volume(), 1.5, edge, thickness, 200);
    let area = crack.crack_area();
    println!(
        "slab: {steps} sub-steps, {reached} nodes reached the surface, {extended} extensions, crack area {area:.4} m^2"
    );
    assert!(
        steps < 200,
        "the fronts should stop: still active after {steps} sub-steps"
    );
    assert!(reached > 0 && extended > 0);
    for line in crack.lines() {
        assert!(line.closed || line.blocked == [true, true], "{line:?}");
    }
    assert!(area > 0.7 * 0.24 && area < 0.24, "crack area {area}");
}

/// The triangle grid stays true to the surface through a crack's growth, and the inside test
/// the fronts use (a ray's signed crossings, found through the grid) agrees with the solid-angle
/// winding number everywhere, the slot's mouth and walls included.
#[test]
fn crack_grid_and_ray_inside_test_agree_with_brute_force() {
    use super::propagate::inside;
    use super::validate::winding_number;
    let mesh = slab();
    let edge = mean_edge(&mesh);
    let thickness = 0.01;
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, thickness);
    grow(&mut crack, mesh.signed_volume(), 1.5, edge, thickness, 6);
    for t in crack.live_triangles() {
        let [a, b, c] = crack.corners(t);
        assert!(
            crack.triangles_near(a.min(b).min(c), a.max(b).max(c)).contains(&t),
            "triangle {t} is missing from the grid cells it covers"
        );
    }
    let (lo, hi) = crack.bounds();
    let plane = crack.lines()[0].plane_point.x;
    let (mut tested, mut in_slot) = (0, 0);
    for i in 0..12 {
        for j in 0..12 {
            for k in 0..12 {
                let f = DVec3::new(i as f64, j as f64, k as f64) / 11.0;
                let x = lo - 0.05 + (hi - lo + 0.1) * f;
                // Points in the crack's plane sample the slot itself.
                let xs = [x, DVec3::new(plane, x.y, x.z)];
                for x in xs {
                    let brute = winding_number(&crack, crack.live_triangles(), x) > 0.5;
                    assert_eq!(inside(&crack, x), brute, "at {x}");
                    tested += 1;
                    in_slot += usize::from(x.x == plane && !brute && x.y.abs() < 0.2 && x.z.abs() < 0.3);
                }
            }
        }
    }
    assert!(in_slot > 0, "some of {tested} points lie in the slot");
}

/// A crack whose walls stop growing stops: three sub-steps in a row without growth and every
/// node of its line is inactive, both ends blocked; growth in between starts the count again.
#[test]
fn crack_line_that_stops_growing_is_stopped() {
    use super::track::stop_stalled_lines;
    let mesh = slab();
    let edge = mean_edge(&mesh);
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, 0.002);
    assert!(any_active(&crack));
    assert_eq!(stop_stalled_lines(&mut crack, edge), 0, "it grew from nothing");
    assert_eq!(stop_stalled_lines(&mut crack, edge), 0);
    assert_eq!(stop_stalled_lines(&mut crack, edge), 0);
    // It grows: the count starts again.
    let e = crack.lines()[0].plane_normal;
    let stress = move |_x: DVec3| (1.5, e);
    let settings = TrackSettings::new(edge, 1.0, 0.002);
    substep(&mut crack, &stress, &settings).unwrap();
    assert!(any_active(&crack), "a sub-step that grows the crack keeps it running");
    for _ in 0..2 {
        assert_eq!(stop_stalled_lines(&mut crack, edge), 0);
    }
    assert_eq!(
        stop_stalled_lines(&mut crack, edge),
        1,
        "the third sub-step without growth stops it"
    );
    assert!(!any_active(&crack));
    assert_eq!(crack.lines()[0].blocked, [true, true]);
}

/// Two cracks across each other on the top of a slab: the one running along x reaches the
/// other's mouth and that end stops there, while both cracks run on (Zhu's passive strategy
/// stopped both whole); the mesh stays valid throughout.
#[test]
fn crack_lines_that_meet_stop_that_end_and_run_on() {
    let mesh = slab();
    let edge = mean_edge(&mesh);
    let mut crack = CrackMesh::try_new(&mesh).unwrap();
    let bounds = AngleBounds::default();
    for (at, e) in [
        (DVec3::new(-0.2, 0.2, 0.0), DVec3::X),
        (DVec3::new(0.1, 0.2, 0.0), DVec3::Z),
    ] {
        let vertex = nearest_vertex(&crack, at);
        open_crack(
            &mut crack,
            Opening {
                vertex,
                plane_normal: e,
                thickness: 0.002,
                depth: 0.5 * edge,
            },
            bounds,
        )
        .unwrap();
    }
    // Each crack sees its own plane's stress: only ends and fronts of both move.
    let planes = [DVec3::X, DVec3::Z];
    let stress = move |x: DVec3| if x.x < -0.1 { (1.5, planes[0]) } else { (1.5, planes[1]) };
    let settings = TrackSettings {
        validate: true,
        ..TrackSettings::new(edge, 1.0, 0.002)
    };
    let mut met = None;
    for step in 0..60 {
        if !any_active(&crack) {
            break;
        }
        let report = substep(&mut crack, &stress, &settings).unwrap_or_else(|f| panic!("sub-step {step}: {f}"));
        if met.is_none() && report.crossings > 0 {
            let running: Vec<bool> = crack
                .lines()
                .iter()
                .map(|l| l.nodes.iter().any(|&v| crack.is_active(v)))
                .collect();
            met = Some((step, running, crack.crack_area()));
        }
    }
    let (step, running, area) = met.expect("the cracks should meet");
    assert_eq!(
        running,
        [true, true],
        "both cracks run on after they meet at sub-step {step}"
    );
    assert!(crack.crack_area() > area, "and grow on");
    assert!(!any_active(&crack));
    // The line along x ran into the other: its end towards it stopped there.
    let x_line = &crack.lines()[1];
    let towards =
        crack.positions()[x_line.nodes[0] as usize].x < crack.positions()[*x_line.nodes.last().unwrap() as usize].x;
    assert!(x_line.blocked[if towards { 0 } else { 1 }]);
}

/// The same crack under the same stress gives the same mesh, bit for bit (everything runs in
/// index order, on one thread).
#[test]
fn crack_tracking_is_deterministic() {
    let mesh = sphere();
    let edge = mean_edge(&mesh);
    let run = || {
        let mut crack = opened(&mesh, DVec3::new(0.3, 0.9, 0.3), DVec3::X, 0.002);
        let stress = |_: DVec3| (1.5, DVec3::X);
        let settings = TrackSettings::new(edge, 1.0, 0.002);
        for _ in 0..6 {
            substep(&mut crack, &stress, &settings).unwrap();
        }
        let (trimesh, _) = crack.to_trimesh().unwrap();
        let bits: Vec<u64> = trimesh
            .vertices()
            .iter()
            .flat_map(|v| v.to_array())
            .map(f64::to_bits)
            .collect();
        (bits, trimesh.triangles().to_vec())
    };
    let first = run();
    assert!(first.1.len() > mesh.triangles().len());
    assert_eq!(first, run());
}

#[test]
fn crack_front_arrests_where_the_stress_is_below_the_propagation_threshold() {
    let mesh = slab();
    let edge = mean_edge(&mesh);
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, 0.002);
    let before = crack.positions().to_vec();
    let (steps, reached, extended) = grow(&mut crack, mesh.signed_volume(), 0.5, edge, 0.002, 10);
    assert_eq!((steps, reached, extended), (1, 0, 0));
    let f = crack.lines()[0].nodes[1];
    assert_eq!(crack.positions()[f as usize], before[f as usize]);
}

/// Bad input is refused with the value named, and a refused opening leaves the mesh as it was.
#[test]
fn crack_bad_input_is_refused_and_changes_nothing() {
    use super::initiate::{Rankine, candidates};
    for (initiate, propagate) in [(f64::NAN, 1.0), (-1.0, -2.0), (1.0, 2.0), (1.0, 0.0)] {
        let message = Rankine::try_new(initiate, propagate).unwrap_err().to_string();
        assert!(message.contains("threshold"), "{message}");
    }
    assert!(Rankine::try_new(2.0e6, 1.0e6).is_ok());
    let mesh = sphere();
    let mut crack = CrackMesh::try_new(&mesh).unwrap();
    let message = candidates(&crack, &[glam::DMat3::IDENTITY; 3], &|_| 1.0)
        .unwrap_err()
        .to_string();
    assert!(message.contains("3 vertex stresses"), "{message}");
    let mut stresses = vec![glam::DMat3::IDENTITY; mesh.vertices().len()];
    stresses[5].x_axis.x = f64::NAN;
    assert!(
        candidates(&crack, &stresses, &|_| 1.0)
            .unwrap_err()
            .to_string()
            .contains("vertex 5")
    );
    let (volume, triangles) = (crack.volume(), crack.triangle_count());
    let bad = [
        Opening {
            vertex: 0,
            plane_normal: DVec3::ZERO,
            thickness: 0.01,
            depth: 0.05,
        },
        Opening {
            vertex: 0,
            plane_normal: DVec3::X,
            thickness: f64::NAN,
            depth: 0.05,
        },
        Opening {
            vertex: 0,
            plane_normal: DVec3::X,
            thickness: 0.01,
            depth: f64::INFINITY,
        },
        Opening {
            vertex: 100_000,
            plane_normal: DVec3::X,
            thickness: 0.01,
            depth: 0.05,
        },
    ];
    for (opening, named) in bad.into_iter().zip(["normal", "thickness", "depth", "vertex"]) {
        let refusal = open_crack(&mut crack, opening, AngleBounds::default()).unwrap_err();
        assert!(refusal.to_string().contains(named), "{refusal}");
        assert_eq!((crack.volume(), crack.triangle_count()), (volume, triangles));
    }
    assert!(crack.lines().is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random crack planes through spheres and boxes: the opening and every sub-step of growth
    /// keep the mesh closed, oriented, unpinched, non-intersecting, within the angle bounds, and
    /// within the volume bound.
    #[test]
    fn crack_random_planes_through_spheres_and_boxes_keep_the_mesh_valid(
        use_box in any::<bool>(),
        point in prop::array::uniform3(-1.0f64..1.0),
        normal in prop::array::uniform3(-1.0f64..1.0),
        thickness_scale in 0.002f64..0.05,
        sigma in 1.0f64..2.0,
    ) {
        let mesh = if use_box { slab() } else { sphere() };
        let edge = mean_edge(&mesh);
        let thickness = thickness_scale * edge;
        let mut crack = CrackMesh::try_new(&mesh).unwrap();
        // Points spread past the box reach its faces, edges and corners alike.
        let vertex = nearest_vertex(&crack, DVec3::from(point) * if use_box { 0.7 } else { 2.0 });
        // A plane across the surface: the random normal made tangent to it, or skip.
        let n = crack.vertex_normal(vertex);
        let e = DVec3::from(normal);
        let e = e - n * n.dot(e) * 0.9;
        prop_assume!(e.length() > 0.2);
        let opening = Opening { vertex, plane_normal: e.normalize(), thickness, depth: 0.5 * edge };
        let volume0 = crack.volume();
        if open_crack(&mut crack, opening, AngleBounds::default()).is_err() {
            // A refused opening leaves a valid mesh of the same volume.
            validate(&crack, AngleBounds::default()).unwrap();
            prop_assert!((crack.volume() - volume0).abs() < 1e-12);
            return Ok(());
        }
        validate(&crack, AngleBounds::default()).unwrap();
        grow(&mut crack, volume0, sigma, edge, thickness, 12);
        // Cutting through, made or refused, leaves a valid mesh within the volume bound.
        for line in 0..crack.lines().len() {
            let _ = super::through::cut_through(&mut crack, line, edge, thickness, AngleBounds::default());
            let check = validate(&crack, AngleBounds::default()).unwrap();
            prop_assert!((volume0 - check.volume).abs() <= thickness * crack.crack_area() + 1e-12);
        }
    }
}

/// A crack grown across a slab's whole section cuts through: the surface falls into two closed
/// pieces, one on either side of the crack plane, whose volumes add up to the slab's less at
/// most the thickness times the crack area; as bodies they carry the slab's momentum. On 0.1
/// and 0.05 m cells.
#[test]
fn crack_through_a_slab_splits_it_in_two() {
    for spacing in [0.1, 0.05] {
        split_slab(spacing);
    }
}

fn split_slab(spacing: f64) {
    use super::pieces::{fragment_bodies, pieces};
    use super::through::cut_through;
    use crate::fragments::{BreakingParent, FragmentResolution, ParentMomentum};
    use shatter_collision::Pose;
    let mesh = slab_with_cells(spacing);
    let edge = mean_edge(&mesh);
    let thickness = 0.002;
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, thickness);
    let volume0 = mesh.signed_volume();
    grow(&mut crack, volume0, 1.5, edge, thickness, 200);
    let whole = crack.clone();
    // The crack plane x = x0 passes through the vertex the crack opened at.
    let x0 = crack.positions()[crack.lines()[0].nodes[0] as usize].x;
    cut_through(&mut crack, 0, edge, thickness, AngleBounds::default()).unwrap();
    let check = assert_cut(&crack, volume0, thickness);
    // Cutting through removes only a slot as thin as the crack over the ligament.
    let cut = whole.volume() - check.volume;
    assert!(cut.abs() < thickness * 0.3 * 0.3, "{cut}");
    // A second cut of the same line is refused and changes nothing.
    let before = crack.clone();
    assert_eq!(
        cut_through(&mut crack, 0, edge, thickness, AngleBounds::default()),
        Err(Refusal::NotThrough)
    );
    assert_eq!(crack.triangle_count(), before.triangle_count());
    let pieces = pieces(&crack).unwrap();
    let total = assert_two_sides(&pieces, x0, edge, DVec3::new(0.5, 0.2, 0.3), thickness);
    assert!((total - check.volume).abs() < 1e-12 * volume0);
    // As bodies, moving and spinning, the pieces carry the slab's momentum.
    let parent = BreakingParent {
        mesh_pose: Pose::new(DVec3::new(1.0, 2.0, 3.0), glam::DQuat::from_rotation_y(0.3)),
        momentum: ParentMomentum {
            linear: DVec3::new(3.0, -1.0, 0.5),
            angular: DVec3::new(0.2, 1.0, -0.4),
        },
        density: 2500.0,
    };
    let resolution = FragmentResolution {
        cells: 16,
        particle_spacing: 0.05,
    };
    let bodies = fragment_bodies(&crack, &parent, resolution).unwrap();
    let sum = bodies
        .iter()
        .map(|b| ParentMomentum::of_desc(b).unwrap())
        .fold(ParentMomentum::default(), |s, m| s + m);
    assert!((sum.linear - parent.momentum.linear).length() < 1e-9 * parent.momentum.linear.length());
    assert!((sum.angular - parent.momentum.angular).length() < 1e-9 * parent.momentum.angular.length());
    let mass: f64 = bodies
        .iter()
        .map(|b| match b.mass {
            shatter_engine::MassSource::Properties(m) => m.mass(),
            _ => 0.0,
        })
        .sum();
    assert!((mass - 2500.0 * check.volume).abs() < 1e-9 * mass);
}

/// Checks line 0 of `crack` after its cut through: the mesh is valid, the line has no nodes left
/// and is marked through, and the volume lost since the uncracked `volume0` is positive and
/// within the `thickness` times the crack area. Returns the validator's measurements.
fn assert_cut(crack: &CrackMesh, volume0: f64, thickness: f64) -> super::validate::MeshCheck {
    let check = validate(crack, AngleBounds::default()).unwrap();
    assert!(crack.lines()[0].through && crack.lines()[0].nodes.is_empty());
    let removed = volume0 - check.volume;
    assert!(
        removed > 0.0 && removed <= thickness * crack.crack_area(),
        "volume lost {removed}"
    );
    check
}

/// Checks that a box of `half` extents (m, centred at the origin) cut across x = `x0` fell into
/// two `pieces`, each on one side of the plane (remeshing lets the walls wander from it by up
/// to a tenth of an `edge`: 7 mm measured on 0.1 m cells) and each the box on its side less
/// half the slot (to the `thickness` times the section). Returns their total volume.
fn assert_two_sides(
    pieces: &[(TriMesh, shatter_collision::mass_properties::VolumeIntegrals)],
    x0: f64,
    edge: f64,
    half: DVec3,
    thickness: f64,
) -> f64 {
    assert_eq!(pieces.len(), 2);
    let section = 4.0 * half.y * half.z;
    let mut total = 0.0;
    for (piece, integrals) in pieces {
        let xs: Vec<f64> = piece.vertices().iter().map(|v| v.x).collect();
        let (lo, hi) = xs.iter().fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(*x), h.max(*x)));
        let above = lo > x0 - 0.1 * edge;
        assert!(
            above || hi < x0 + 0.1 * edge,
            "a piece spans the crack plane x = {x0}: x from {lo} to {hi}"
        );
        let side = if above { half.x - x0 } else { x0 + half.x };
        assert!(
            (integrals.volume - side * section).abs() < thickness * section,
            "{} against {}",
            integrals.volume,
            side * section
        );
        total += integrals.volume;
    }
    total
}

/// The solve's surface (`widen`): a crack grown a few sub-steps into a slab, widened from 2 mm
/// to 5 cm, keeps its triangles, its front nodes and every vertex off the walls where they are;
/// wall vertices farther than the width from the front move into the material by half the
/// widening (2.4 cm), against their walls' normals, i.e. along the crack-plane normal away from
/// the crack; nearer ones by less, in proportion to their distance; and the slot's volume grows
/// by about the widening times the crack area.
#[test]
fn crack_widened_surface_moves_only_the_walls() {
    let mesh = slab();
    let edge = mean_edge(&mesh);
    let thickness = 0.002;
    let mut crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, thickness);
    grow(&mut crack, mesh.signed_volume(), 1.5, edge, thickness, 4);
    let (tracked, index) = crack.to_trimesh().unwrap();
    let width = 0.05;
    let wide = super::widen::widened_surface(&crack, width, thickness).unwrap();
    assert_eq!(wide.triangles(), tracked.triangles());
    let fronts: Vec<DVec3> = crack.lines()[0]
        .nodes
        .iter()
        .map(|&n| crack.positions()[n as usize])
        .collect();
    let half = 0.5 * (width - thickness);
    let mid = crack.lines()[0].plane_point.x;
    let mut full = 0;
    for (new, &old) in index.iter().enumerate() {
        let (x, y) = (tracked.vertices()[new], wide.vertices()[new]);
        let on_wall = crack.incident(old).iter().any(|&t| crack.is_wall(t));
        if crack.is_crack_node(old) || !on_wall {
            assert_eq!(x, y, "vertex {old} moved");
            continue;
        }
        let to_front = fronts.iter().map(|f| f.distance(x)).fold(f64::INFINITY, f64::min);
        let moved = y - x;
        assert!(
            (moved.length() - half * (to_front / width).min(1.0)).abs() < 1e-12,
            "{moved}"
        );
        // Away from the crack's mid-plane (the wall side the vertex is on).
        assert!(
            moved.x * (x.x - mid) >= 0.0 && moved.x.abs() > 0.99 * moved.length(),
            "{x} {moved}"
        );
        full += usize::from(to_front >= width);
    }
    assert!(full > 4, "{full} wall vertices a width from the front");
    let grown = tracked.signed_volume() - wide.signed_volume();
    let expected = (width - thickness) * crack.crack_area();
    assert!(grown > 0.3 * expected && grown < expected, "{grown} vs {expected}");
    // No widening asked: the surface as tracked.
    let same = super::widen::widened_surface(&crack, thickness, thickness).unwrap();
    assert_eq!(same.vertices(), tracked.vertices());
}

/// The tip tests' slab (1.0 x 0.4 x 0.6 m, 5 cm cells), its mean edge (m), their crack
/// thickness (m), and a crack opened on its top face across x, not yet grown.
fn tip_slab_crack() -> (TriMesh, f64, f64, CrackMesh) {
    let mesh = slab_with_cells(0.05);
    let edge = mean_edge(&mesh);
    let thickness = 0.002;
    let crack = opened(&mesh, DVec3::new(0.04, 0.2, 0.03), DVec3::X, thickness);
    (mesh, edge, thickness, crack)
}

/// The tip field on a real crack (`tip`): a crack opened on top of the 1.0 x 0.4 x 0.6 m slab
/// and grown a few sub-steps, read in a uniform opening stress `p` across its plane. Every front
/// point gets Tada's `1.1215 p sqrt(pi a)` for its own depth; the deepest node's depth is its
/// distance below the top face and its ligament its height above the bottom face (each within
/// an element, the node's path being slanted by the front's shape), and its net-section stress
/// is the beam formula for them; the ends read back along the surface to where the crack
/// opened; the added stress opens the crack plane only, and only near the front.
#[test]
fn crack_tip_field_reads_depth_ligament_and_intensity_off_the_crack() {
    let (mesh, edge, thickness, mut crack) = tip_slab_crack();
    grow(&mut crack, mesh.signed_volume(), 1.5, edge, thickness, 4);
    let p = 3.0e6;
    let uniform = |_: DVec3| glam::DMat3::from_diagonal(DVec3::new(p, 0.0, 0.0));
    let field = super::tip::TipField::of(&crack, &uniform, 0.5 * edge, 2.0 * edge);
    let line = &crack.lines()[0];
    assert!(
        field.nodes().len() >= line.nodes.len(),
        "{} points",
        field.nodes().len()
    );
    for node in field.nodes() {
        let exact = 1.1215 * p * (core::f64::consts::PI * node.depth).sqrt();
        assert!((node.intensity / exact - 1.0).abs() < 0.005, "{node:?}");
        assert!(node.normal.x.abs() > 0.99, "{node:?}");
    }
    let deepest = field
        .nodes()
        .iter()
        .min_by(|a, b| a.position.y.total_cmp(&b.position.y))
        .unwrap();
    let below_top = 0.2 - deepest.position.y;
    assert!(below_top > edge, "the crack has grown: {deepest:?}");
    assert!((deepest.depth - below_top).abs() < edge, "{deepest:?}");
    let ligament = deepest.ligament.expect("the bottom face ahead");
    assert!((ligament - (deepest.position.y + 0.2)).abs() < edge, "{deepest:?}");
    let (a, b) = (deepest.depth, ligament);
    let beam = p * a / b + 3.0 * p * a * (a + b) / (b * b);
    assert!(
        (deepest.net_section / beam - 1.0).abs() < 1e-9,
        "{deepest:?} against {beam}"
    );
    // The ends: on the top face, read back to the opening point, with no ligament.
    let start = line.plane_point;
    for &v in [line.nodes[0], line.nodes[line.nodes.len() - 1]].iter() {
        let x = crack.positions()[v as usize];
        let end = field.nodes().iter().find(|n| n.position == x).expect("an end point");
        assert!(end.ligament.is_none());
        let along = DVec3::new(0.0, 0.0, x.z - start.z).length();
        assert!((end.depth - along).abs() < 0.25 * edge, "{end:?} from {start}");
    }
    // Half an edge below the deepest node the plane's normal stress rises, nothing else does;
    // five edges away nothing is added.
    let below = field.added(deepest.position - DVec3::Y * (0.5 * edge));
    assert!(below.x_axis.x > 0.0 && below.y_axis.y.abs() < 1e-6 * below.x_axis.x);
    assert_eq!(
        field.added(deepest.position - DVec3::Y * (5.0 * edge)),
        glam::DMat3::ZERO
    );
}

/// The tip field read again after a sub-step (`TipField::update`) is the field read afresh, bit
/// for bit, and integrates only the front points that changed: the slab's crack of
/// `crack_tip_field_reads_depth_ligament_and_intensity_off_the_crack` and a second one across
/// the slab, grown one sub-step more with the second stopped, read under an opening stress that
/// varies over the body: points of the stopped crack are reused.
#[test]
fn crack_tip_field_read_again_after_a_substep_is_the_fresh_read_integrating_only_what_changed() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (mesh, edge, thickness, mut crack) = tip_slab_crack();
    // A second crack across the slab from the first.
    let vertex = nearest_vertex(&crack, DVec3::new(-0.3, 0.2, 0.03));
    let opening = Opening {
        vertex,
        plane_normal: DVec3::X,
        thickness,
        depth: 0.5 * edge,
    };
    open_crack(&mut crack, opening, AngleBounds::default()).unwrap();
    grow(&mut crack, mesh.signed_volume(), 1.5, edge, thickness, 4);
    let reads = AtomicUsize::new(0);
    let varying = |x: DVec3| {
        reads.fetch_add(1, Ordering::Relaxed);
        glam::DMat3::from_diagonal(DVec3::new(3.0e6 * (1.0 + x.y + 0.5 * x.z), 1.0e5, 0.0))
    };
    let before = super::tip::TipField::of(&crack, &varying, 0.5 * edge, 2.0 * edge);
    // The second crack stops, as a front does where it reaches the far surface or the stress
    // falls.
    for f in crack.lines()[1].nodes.clone() {
        crack.set_active(f, false);
    }
    let (steps, _, _) = grow(&mut crack, mesh.signed_volume(), 1.5, edge, thickness, 1);
    assert_eq!(steps, 1, "the front was still running");
    reads.store(0, Ordering::Relaxed);
    let fresh = super::tip::TipField::of(&crack, &varying, 0.5 * edge, 2.0 * edge);
    let fresh_reads = reads.swap(0, Ordering::Relaxed);
    let again = before.update(&crack, &varying);
    let again_reads = reads.load(Ordering::Relaxed);
    assert_eq!(again, fresh);
    assert_eq!(fresh_reads, 8 * fresh.nodes().len());
    // The running crack's points are all read again; of the stopped one's, those whose wall
    // triangles the remeshing left as they were are reused (a flip or a slide of a wall vertex
    // turns a point's normal in its last bits, and it is read again).
    let running = fresh.nodes().iter().filter(|n| n.position.x > -0.15).count();
    assert!(running > 0 && running < fresh.nodes().len());
    assert!(
        again_reads >= 8 * running && again_reads < fresh_reads && again_reads % 8 == 0,
        "{again_reads} stress reads against {fresh_reads}, {running} running points"
    );
}
