//! Contouring level sets back to meshes: closed, manifold, outward, sliver-free output from any
//! grid; accuracy against exact spheres, boxes and source meshes; thread-count determinism.

use std::f64::consts::PI;

use glam::DVec3;
use proptest::prelude::*;
use shatter_collision::marching_cubes::{CROSSING_CLAMP, contour, contour_at};
use shatter_collision::{
    Aabb, Cuboid, GeometryError, GridSpec, SdfGrid, SignedDistance, TriMesh, level_set::level_set_from_mesh, topology,
};
use shatter_integrators::SplitMix64;

/// A mesh that bounds a solid, with its component count.
fn solid_components(mesh: &TriMesh) -> usize {
    let defects = topology::inspect(mesh);
    assert!(defects.is_solid(), "{defects}");
    defects.components
}

/// Signed volume of every component of `mesh`.
fn component_volumes(mesh: &TriMesh) -> Vec<f64> {
    let (labels, count) = topology::components(mesh);
    let mut volumes = vec![0.0; count];
    for (t, label) in labels.iter().enumerate() {
        let [a, b, c] = mesh.triangle(t);
        volumes[*label as usize] += a.dot(b.cross(c)) / 6.0;
    }
    volumes
}

fn sphere_grid(centre: DVec3, radius: f64, cells: usize) -> SdfGrid {
    let spec = GridSpec::with_resolution(Aabb::from_center(centre, DVec3::splat(radius)), cells, 2).unwrap();
    SdfGrid::from_fn(spec, |p| (p - centre).length() - radius).unwrap()
}

#[test]
fn marching_cubes_sphere_at_64_cells_matches_volume_and_surface() {
    let (centre, radius) = (DVec3::new(0.3, -0.2, 0.1), 0.8);
    let grid = sphere_grid(centre, radius, 64);
    let h = grid.spec().spacing;
    let mesh = contour(&grid).unwrap();
    assert_eq!(solid_components(&mesh), 1);
    let exact = 4.0 / 3.0 * PI * radius.powi(3);
    let error = (mesh.signed_volume() - exact) / exact;
    let worst = mesh
        .vertices()
        .iter()
        .map(|p| ((*p - centre).length() - radius).abs() / h)
        .fold(0.0, f64::max);
    println!("sphere 64 cells: volume error {error:e}, worst vertex {worst:e} cells off the sphere");
    // Chords cut inside a convex surface: the volume falls short by O(h^2), never exceeds.
    assert!(error < 0.0 && error > -1e-3, "relative volume error {error}");
    // A vertex interpolates the distance linearly along its edge; the error is bounded by the
    // sagitta of the longest edge (the cube diagonal, sqrt(3) h): 3 h^2 / (8 r), in cells.
    let sagitta = 3.0 * h / (8.0 * radius);
    assert!(
        worst < 1.05 * sagitta,
        "a vertex {worst} cells off the sphere (sagitta {sagitta})"
    );
}

#[test]
fn marching_cubes_box_matches_its_volume() {
    let cuboid = Cuboid::try_new(DVec3::new(0.61, 0.37, 0.45)).unwrap();
    let spec = GridSpec::with_resolution(cuboid.bounds().unwrap(), 64, 2).unwrap();
    let grid = SdfGrid::from_fn(spec, |p| cuboid.distance(p)).unwrap();
    let mesh = contour(&grid).unwrap();
    assert_eq!(solid_components(&mesh), 1);
    let error = (mesh.signed_volume() - cuboid.volume()) / cuboid.volume();
    // The faces are planes, reproduced exactly; only the edges and corners are chamfered inside
    // a cell.
    println!("box 64 cells: volume error {error:e}");
    assert!(error.abs() < 2e-3, "relative volume error {error}");
    // Faces are found exactly, up to the clamp where a sample lies on one.
    let bounds = mesh.bounds().unwrap();
    let slack = 2.0 * CROSSING_CLAMP * spec.spacing;
    assert!(
        (bounds.max - cuboid.half_extents()).abs().max_element() < slack,
        "{bounds:?}"
    );
    assert!(
        (bounds.min + cuboid.half_extents()).abs().max_element() < slack,
        "{bounds:?}"
    );
}

#[test]
fn marching_cubes_level_sets_of_meshes_give_back_their_volume() {
    for (name, source) in [
        ("icosphere", TriMesh::icosphere(0.7, 3)),
        ("cuboid", TriMesh::cuboid(DVec3::new(0.5, 0.3, 0.4))),
    ] {
        let spec = GridSpec::with_resolution(source.bounds().unwrap(), 64, 3).unwrap();
        let mesh = contour(&level_set_from_mesh(&source, spec).unwrap()).unwrap();
        assert_eq!(solid_components(&mesh), 1, "{name}");
        let error = (mesh.signed_volume() - source.signed_volume()) / source.signed_volume();
        println!("{name} level set 64 cells: volume error {error:e}");
        assert!(error.abs() < 2e-3, "{name}: relative volume error {error}");
    }
}

#[test]
fn marching_cubes_plane_through_samples_is_closed_and_flat() {
    // A plane through a whole layer of samples (exact zeros) and a tilted one through many more,
    // the inside running into the grid's border on every side but one.
    let spec = GridSpec::try_new(DVec3::ZERO, 0.25, [9, 10, 11]).unwrap();
    let bounds = spec.bounds();
    // Unnormalized, so that the zeros are exact; the second member is the gradient's length.
    type Plane = fn(DVec3) -> f64;
    let planes: [(Plane, f64); 3] = [
        (|p: DVec3| p.y - 1.0, 1.0),
        (|p: DVec3| p.x + p.y - 1.5, 2f64.sqrt()),
        (|p: DVec3| p.x - p.y + 2.0 * p.z - 1.0, 6f64.sqrt()),
    ];
    for (plane, slope) in planes {
        let grid = SdfGrid::from_fn(spec, plane).unwrap();
        let zeros = grid.values().iter().filter(|v| **v == 0.0).count();
        assert!(zeros >= 20, "{zeros} exact zeros");
        let mesh = contour(&grid).unwrap();
        assert_eq!(solid_components(&mesh), 1);
        // Inside the grid every vertex is on the plane, at most the clamp from its crossing;
        // the rest form the cap outside the border.
        let h = spec.spacing;
        let mut on_plane = 0;
        for p in mesh.vertices() {
            if bounds.contains_point(*p) {
                let distance = plane(*p) / slope;
                assert!(distance.abs() <= 2.0 * CROSSING_CLAMP * h, "{p} is {distance} off");
                on_plane += 1;
            } else {
                assert!(bounds.distance_squared(*p) <= 3.0 * h * h, "{p} strays from the grid");
            }
        }
        assert!(on_plane > 40, "{on_plane} vertices on the plane");
    }
}

#[test]
fn marching_cubes_sphere_through_samples_is_closed() {
    // Radius 13 on the unit lattice: integer points such as (5, 12, 0) and (3, 4, 12) lie on it
    // exactly.
    let spec = GridSpec::try_new(DVec3::splat(-15.0), 1.0, [31, 31, 31]).unwrap();
    let grid = SdfGrid::from_fn(spec, |p| p.length() - 13.0).unwrap();
    let zeros = grid.values().iter().filter(|v| **v == 0.0).count();
    assert!(zeros >= 50, "{zeros} exact zeros");
    let mesh = contour(&grid).unwrap();
    assert_eq!(solid_components(&mesh), 1);
    let exact = 4.0 / 3.0 * PI * 13f64.powi(3);
    let error = (mesh.signed_volume() - exact) / exact;
    assert!(error < 0.0 && error > -1e-2, "relative volume error {error}");
    // Within the sagitta of the longest (cube-diagonal) edge, 3 h^2 / (8 r).
    let sagitta = 3.0 / (8.0 * 13.0);
    for p in mesh.vertices() {
        assert!(
            (p.length() - 13.0).abs() < 1.05 * sagitta,
            "{p} is {} off",
            p.length() - 13.0
        );
    }
}

#[test]
fn marching_cubes_two_blobs_are_two_closed_components() {
    let (a, b, radius) = (DVec3::new(-0.6, 0.0, 0.0), DVec3::new(0.7, 0.1, 0.0), 0.4);
    let spec = GridSpec::with_resolution(Aabb::new(DVec3::splat(-1.2), DVec3::splat(1.2)), 48, 1).unwrap();
    let grid = SdfGrid::from_fn(spec, |p| ((p - a).length() - radius).min((p - b).length() - radius)).unwrap();
    let mesh = contour(&grid).unwrap();
    assert_eq!(solid_components(&mesh), 2);
    let exact = 4.0 / 3.0 * PI * radius.powi(3);
    for volume in component_volumes(&mesh) {
        // Eight cells per radius: chords cut off about one percent.
        assert!(
            volume < exact && volume > 0.985 * exact,
            "component volume {volume} vs {exact}"
        );
    }
}

#[test]
fn marching_cubes_inside_reaching_the_border_is_capped_half_a_cell_out() {
    // Every sample inside: the cap between the border (value -1) and the virtual samples (one
    // spacing, here 1) crosses halfway.
    let spec = GridSpec::try_new(DVec3::new(2.0, -1.0, 0.5), 1.0, [4, 3, 5]).unwrap();
    let grid = SdfGrid::try_from_values(spec, vec![-1.0; 60]).unwrap();
    let mesh = contour(&grid).unwrap();
    assert_eq!(solid_components(&mesh), 1);
    let bounds = mesh.bounds().unwrap();
    let expected = spec.bounds().expanded(0.5);
    assert!((bounds.min - expected.min).abs().max_element() < 1e-12, "{bounds:?}");
    assert!((bounds.max - expected.max).abs().max_element() < 1e-12, "{bounds:?}");
    // Chamfered along the grid's edges: less than the padded box, more than the grid's own.
    let volume = mesh.signed_volume();
    assert!(volume < 4.0 * 5.0 * 6.0 && volume > 3.0 * 2.0 * 4.0, "{volume}");
}

#[test]
fn marching_cubes_rejects_bad_iso_and_empty_interiors_by_name() {
    let grid = sphere_grid(DVec3::ZERO, 1.0, 8);
    let err = contour_at(&grid, f64::NAN).unwrap_err();
    assert!(err.to_string().contains("iso value"), "{err}");
    // Below the deepest sample: nothing inside. Zeros count as outside.
    assert_eq!(
        contour_at(&grid, -2.0).unwrap_err(),
        GeometryError::Empty {
            what: "level set interior"
        }
    );
    let zeros = SdfGrid::try_from_values(*grid.spec(), vec![0.0; grid.values().len()]).unwrap();
    assert!(matches!(contour(&zeros), Err(GeometryError::Empty { .. })));
    // A higher iso value grows the sphere: radius 1.25.
    let grown = contour_at(&grid, 0.25).unwrap();
    let exact = 4.0 / 3.0 * PI * 1.25f64.powi(3);
    assert!((grown.signed_volume() - exact).abs() < 0.05 * exact);
}

#[test]
fn marching_cubes_is_bit_identical_across_thread_counts() {
    let mut rng = SplitMix64::new(7);
    let spec = GridSpec::with_resolution(Aabb::from_center(DVec3::ZERO, DVec3::ONE), 40, 2).unwrap();
    let values = (0..spec.sample_count())
        .map(|i| {
            let [x, y, z] = spec.coordinates(i);
            spec.position(x, y, z).length() - 0.8 + rng.range(-0.05, 0.05)
        })
        .collect();
    let grid = SdfGrid::try_from_values(spec, values).unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| contour(&grid).unwrap())
    };
    let one = run(1);
    solid_components(&one);
    for threads in [2, 4] {
        let other = run(threads);
        assert_eq!(one.triangles(), other.triangles(), "{threads} threads");
        let bits =
            |m: &TriMesh| -> Vec<[u64; 3]> { m.vertices().iter().map(|v| v.to_array().map(f64::to_bits)).collect() };
        assert_eq!(bits(&one), bits(&other), "{threads} threads");
    }
}

/// Brute force: the number of surface components predicted from the samples alone. Each surface
/// component is the whole interface between one connected inside region and one connected
/// outside region (a closed surface separates space), so the count is the number of adjacent
/// (inside region, outside region) pairs, regions connected along the lattice edges of the Kuhn
/// split (the seven forward directions and their opposites), the grid padded with outside.
fn predicted_components(dims: [usize; 3], inside: impl Fn([usize; 3]) -> bool) -> usize {
    let padded = dims.map(|d| d + 2);
    let count = padded[0] * padded[1] * padded[2];
    let index = |p: [usize; 3]| p[0] + padded[0] * (p[1] + padded[1] * p[2]);
    let point = |i: usize| [i % padded[0], (i / padded[0]) % padded[1], i / (padded[0] * padded[1])];
    let is_inside = |p: [usize; 3]| (0..3).all(|a| p[a] >= 1 && p[a] <= dims[a]) && inside(p.map(|c| c - 1));
    let mut parent: Vec<usize> = (0..count).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            x = parent[x];
        }
        x
    }
    let forward = |i: usize, d: usize| {
        let p = point(i);
        let q = [p[0] + (d & 1), p[1] + ((d >> 1) & 1), p[2] + ((d >> 2) & 1)];
        (q[0] < padded[0] && q[1] < padded[1] && q[2] < padded[2]).then_some(q)
    };
    for i in 0..count {
        for d in 1..8 {
            match forward(i, d) {
                Some(q) if is_inside(point(i)) == is_inside(q) => {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, index(q)));
                    parent[a.max(b)] = a.min(b);
                }
                _ => {}
            }
        }
    }
    let mut pairs = Vec::new();
    for i in 0..count {
        for d in 1..8 {
            match forward(i, d) {
                Some(q) if is_inside(point(i)) != is_inside(q) => {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, index(q)));
                    pairs.push(if is_inside(point(i)) { (a, b) } else { (b, a) });
                }
                _ => {}
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs.len()
}

/// Sample values with many exact zeros, ties and extreme magnitudes.
fn sample_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => Just(0.0),
        2 => Just(1.0),
        2 => Just(-1.0),
        4 => -1.0..1.0f64,
        1 => prop_oneof![Just(1e-300), Just(-1e-300), Just(5e-324), Just(-5e-324)],
        1 => prop_oneof![Just(1e300), Just(-1e300), Just(f64::MAX), Just(-f64::MAX)],
    ]
}

fn random_grid() -> impl Strategy<Value = (SdfGrid, f64)> {
    (
        prop::array::uniform3(2usize..7),
        -3.0..3.0f64,
        prop::array::uniform3(-100.0..100.0f64),
    )
        .prop_flat_map(|(dims, log_spacing, origin)| {
            let count = dims[0] * dims[1] * dims[2];
            (
                Just(dims),
                Just(10f64.powf(log_spacing)),
                Just(DVec3::from(origin)),
                prop::collection::vec(sample_value(), count),
                // The iso value: zero, or one of the samples (ties on the level).
                prop_oneof![Just(None), (0..count).prop_map(Some)],
            )
        })
        .prop_map(|(dims, spacing, origin, values, iso)| {
            let iso = iso.map_or(0.0, |i| values[i]);
            let spec = GridSpec::try_new(origin, spacing, dims).unwrap();
            (SdfGrid::try_from_values(spec, values).unwrap(), iso)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn marching_cubes_random_grids_give_solid_meshes((grid, iso) in random_grid()) {
        let spec = *grid.spec();
        let inside = |p: [usize; 3]| grid.sample(p[0], p[1], p[2]) < iso;
        match contour_at(&grid, iso) {
            Err(GeometryError::Empty { .. }) => prop_assert!(grid.values().iter().all(|v| *v >= iso)),
            Err(other) => prop_assert!(false, "unexpected error {other}"),
            Ok(mesh) => {
                let defects = topology::inspect(&mesh);
                prop_assert!(defects.is_solid(), "{defects}");
                prop_assert_eq!(defects.components, predicted_components(spec.dims, inside));
                // Welded: every vertex used, all distinct.
                let mut used = vec![false; mesh.vertices().len()];
                mesh.triangles().iter().flatten().for_each(|i| used[*i as usize] = true);
                prop_assert!(used.iter().all(|u| *u));
                let mut bits: Vec<[u64; 3]> =
                    mesh.vertices().iter().map(|v| v.to_array().map(f64::to_bits)).collect();
                bits.sort_unstable();
                bits.dedup();
                prop_assert_eq!(bits.len(), mesh.vertices().len());
            }
        }
    }
}
