//! Fracture modes (Sellán 2023): the offline computation on shapes whose breaking places are
//! known. Every test name starts with `modes` so `cargo test -p shatter-fracture modes` runs them.

use std::sync::OnceLock;

use glam::{DQuat, DVec3};
use shatter_collision::{Pose, TetMesh};
use shatter_engine::{BodyDesc, MassSource, World};
use shatter_fracture::fragments::{FragmentResolution, ParentMomentum};
use shatter_fracture::modes::guesses::{VertexLaplacian, smallest_eigenpairs};
use shatter_fracture::modes::scenes::{dumbbell, notched_bar, voxel_solid};
use shatter_fracture::modes::{
    Dimension, FractureModes, Impact, ImpactProjector, JumpProblem, ModeSettings, ModesParent, PIECE_THRESHOLD,
    Projection, ProjectionSettings, compute_modes, fragment_bodies, mode_pieces,
};

/// Voxel side of the test shapes, m.
const VOXEL: f64 = 0.1;

fn dumbbell_mesh() -> &'static TetMesh {
    static MESH: OnceLock<TetMesh> = OnceLock::new();
    // Two 4-voxel cubes joined by a 1 x 1 x 2 neck: 780 tets.
    MESH.get_or_init(|| dumbbell(4, 2, VOXEL))
}

fn notched_mesh() -> &'static TetMesh {
    static MESH: OnceLock<TetMesh> = OnceLock::new();
    // A 16 x 4 x 4 bar with a notch 2 voxels deep in column 7 of 16: 1488 tets.
    MESH.get_or_init(|| notched_bar(16, 4, 4, 2, 7, VOXEL))
}

fn settings(modes: usize, dimension: Dimension) -> ModeSettings {
    ModeSettings {
        modes,
        dimension,
        ..ModeSettings::default()
    }
}

fn dumbbell_modes(dimension: Dimension) -> &'static FractureModes {
    static SCALAR: OnceLock<FractureModes> = OnceLock::new();
    static VECTOR: OnceLock<FractureModes> = OnceLock::new();
    let (cell, count) = match dimension {
        Dimension::Scalar => (&SCALAR, 4),
        Dimension::Vector => (&VECTOR, 6),
    };
    cell.get_or_init(|| compute_modes(dumbbell_mesh(), &settings(count, dimension), None, |_| ()).unwrap())
}

fn notched_modes() -> &'static FractureModes {
    static MODES: OnceLock<FractureModes> = OnceLock::new();
    MODES.get_or_init(|| compute_modes(notched_mesh(), &settings(6, Dimension::Scalar), None, |_| ()).unwrap())
}

/// The interior faces of the dumbbell's neck: those with both tets' centroids... no: those
/// between tets on either side of a plane x = const inside the neck.
fn is_neck_tet(mesh: &TetMesh, tet: usize) -> bool {
    let x = mesh.centroids()[tet].x;
    (4.0 * VOXEL..6.0 * VOXEL).contains(&x)
}

#[test]
fn modes_laplacian_eigenvalues_of_a_box_match_the_closed_form() {
    // A 2 x 1 x 1 box: Neumann eigenvalues (pi k / L)^2: 0, (pi/2)^2 (along x), pi^2 three times
    // (k = 2 along x, k = 1 along y and z).
    let n = 8;
    let mesh = voxel_solid([2 * n, n, n], 1.0 / n as f64, |_, _, _| true);
    let laplacian = VertexLaplacian::of(&mesh);
    let (values, vectors) = smallest_eigenpairs(&laplacian, mesh.vertices(), 5).unwrap();
    let pi2 = std::f64::consts::PI.powi(2);
    let expected = [0.0, pi2 / 4.0, pi2, pi2, pi2];
    assert!(values[0].abs() < 1e-9, "constant mode {}", values[0]);
    for (value, exact) in values.iter().zip(expected).skip(1) {
        // Linear tets with a lumped mass on 8 cells per unit: a few percent (second order).
        assert!((value - exact).abs() < 0.03 * exact, "{value} vs {exact}");
    }
    // The triple eigenvalue is found three times, M-orthonormal.
    for i in 0..5 {
        for j in 0..5 {
            let dot: f64 = vectors[i]
                .iter()
                .zip(&vectors[j])
                .zip(&laplacian.mass)
                .map(|((a, b), m)| a * b * m)
                .sum();
            assert!((dot - if i == j { 1.0 } else { 0.0 }).abs() < 1e-9, "({i}, {j}) {dot}");
        }
    }
}

#[test]
fn modes_dumbbell_first_nontrivial_mode_jumps_only_across_the_neck() {
    for dimension in [Dimension::Scalar, Dimension::Vector] {
        let mesh = dumbbell_mesh();
        let modes = dumbbell_modes(dimension);
        let d = dimension.components();
        // The trivial modes (rigid translations) come first, with zero energy.
        for k in 0..d {
            assert!(
                modes.energies[k] < 1e-12,
                "{dimension:?} mode {k}: {}",
                modes.energies[k]
            );
        }
        let first = &modes.modes[d];
        let problem = JumpProblem::try_new(mesh, dimension, 0.01, None).unwrap();
        let (mut neck, mut elsewhere) = (0.0, 0.0);
        let mut jump = [0.0; 3];
        for (f, face) in mesh.interior_faces().iter().enumerate() {
            problem.jump(first, f, &mut jump[..d]);
            let energy = problem.weights[f] * jump[..d].iter().map(|x| x * x).sum::<f64>().sqrt();
            let in_neck = face.tets.iter().any(|&t| is_neck_tet(mesh, t as usize));
            if in_neck { neck += energy } else { elsewhere += energy }
        }
        assert!(neck > 0.0);
        assert!(
            elsewhere <= 1e-6 * neck,
            "{dimension:?}: {elsewhere:e} of the jump energy off the neck, {neck:e} on it"
        );
        // Its pieces: the two blocks (the neck goes with one side or splits between them).
        let pieces = mode_pieces(mesh, modes, d, PIECE_THRESHOLD).unwrap();
        assert_eq!(pieces.count(), 2, "{dimension:?}");
        let left = pieces.piece_of_tet()[0];
        for (t, &piece) in pieces.piece_of_tet().iter().enumerate() {
            let x = mesh.centroids()[t].x;
            if x < 4.0 * VOXEL {
                assert_eq!(piece, left);
            } else if x > 6.0 * VOXEL {
                assert_ne!(piece, left);
            }
        }
    }
}

#[test]
fn modes_notched_bar_first_mode_breaks_at_the_notch() {
    let mesh = notched_mesh();
    let modes = notched_modes();
    let pieces = mode_pieces(mesh, modes, 1, PIECE_THRESHOLD).unwrap();
    assert_eq!(pieces.count(), 2);
    // Closed form: a field taking one value on each piece, M-orthogonal to the constants and of
    // unit mass norm, has energy w(cut) / sqrt(V_a V_b / V); the mode must be that field.
    let problem = JumpProblem::try_new(mesh, Dimension::Scalar, 0.01, None).unwrap();
    let mut volumes = [0.0; 2];
    for (t, &p) in pieces.piece_of_tet().iter().enumerate() {
        volumes[p as usize] += mesh.volumes()[t];
    }
    let cut: f64 = mesh
        .interior_faces()
        .iter()
        .zip(&problem.weights)
        .filter(|(f, _)| pieces.piece_of_tet()[f.tets[0] as usize] != pieces.piece_of_tet()[f.tets[1] as usize])
        .map(|(_, w)| w)
        .sum();
    let expected = cut / (volumes[0] * volumes[1] / (volumes[0] + volumes[1])).sqrt();
    assert!(
        (modes.energies[1] - expected).abs() <= 1e-6 * expected,
        "{} vs {expected}",
        modes.energies[1]
    );
    // Every face between the pieces lies in the notch's column (x between 7 and 8 voxels).
    for face in mesh.interior_faces() {
        let [a, b] = face.tets.map(|t| t as usize);
        if pieces.piece_of_tet()[a] != pieces.piece_of_tet()[b] {
            let x = mesh.vertices()[face.vertices[0] as usize].x;
            assert!((7.0 * VOXEL - 1e-9..=8.0 * VOXEL + 1e-9).contains(&x), "cut at x = {x}");
        }
    }
}

#[test]
fn modes_are_m_orthonormal_with_nondecreasing_energies_and_optimal_subproblems() {
    let cases = [
        (notched_mesh(), notched_modes(), Dimension::Scalar),
        (dumbbell_mesh(), dumbbell_modes(Dimension::Scalar), Dimension::Scalar),
        (dumbbell_mesh(), dumbbell_modes(Dimension::Vector), Dimension::Vector),
    ];
    for (mesh, modes, dimension) in cases {
        let problem = JumpProblem::try_new(mesh, dimension, 0.01, None).unwrap();
        for (i, a) in modes.modes.iter().enumerate() {
            for (j, b) in modes.modes.iter().enumerate() {
                let dot = problem.mass_dot(a, b);
                let expected = if i == j { 1.0 } else { 0.0 };
                assert!((dot - expected).abs() < 1e-8, "{dimension:?} <{i}, {j}>_M = {dot}");
            }
            assert!((problem.energy(a) - modes.energies[i]).abs() <= 1e-12 * modes.energies[i].max(1.0));
        }
        // Modes are ordered by energy after they are found (see iccm.rs): this checks the order
        // the asset is used in, not the greedy search.
        for pair in modes.energies.windows(2) {
            assert!(
                pair[1] >= pair[0] * (1.0 - 1e-6),
                "{dimension:?} energies {:?}",
                modes.energies
            );
        }
        for (k, report) in modes.reports.iter().enumerate() {
            assert!(report.converged, "{dimension:?} mode {k}: {report:?}");
            assert!(
                report.kkt.residual() <= 1e-6,
                "{dimension:?} mode {k}: {:?}",
                report.kkt
            );
        }
    }
}

#[test]
fn modes_are_identical_across_runs_and_thread_counts() {
    let mesh = dumbbell_mesh();
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| compute_modes(mesh, &settings(3, Dimension::Scalar), None, |_| ()).unwrap())
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(4));
}

#[test]
fn modes_refuse_bad_settings_and_fields_by_name() {
    let mesh = dumbbell_mesh();
    let bad = |settings: ModeSettings, field: Option<&[f64]>| {
        compute_modes(mesh, &settings, field, |_| ()).unwrap_err().to_string()
    };
    let mut nan_omega = settings(2, Dimension::Scalar);
    nan_omega.omega = f64::NAN;
    assert!(bad(nan_omega, None).contains("omega"));
    assert!(bad(settings(0, Dimension::Scalar), None).contains("mode count"));
    let short = vec![1.0; 3];
    assert!(bad(settings(2, Dimension::Scalar), Some(&short)).contains("interior faces"));
    let mut zero = vec![1.0; mesh.interior_faces().len()];
    zero[5] = 0.0;
    assert!(bad(settings(2, Dimension::Scalar), Some(&zero)).contains("face weight 0 of interior face 5"));
}

/// The notched bar's projector, with `projection`.
fn notched_projector(projection: Projection) -> ImpactProjector {
    let settings = ProjectionSettings {
        projection,
        ..ProjectionSettings::default()
    };
    ImpactProjector::new(notched_mesh(), notched_modes(), &settings).unwrap()
}

/// A downward hit on the bar's top at `x` (m), of `magnitude` N s.
fn hit(x: f64, magnitude: f64) -> Impact {
    Impact {
        point: DVec3::new(x, 0.4, 0.2),
        direction: DVec3::NEG_Y,
        magnitude,
    }
}

/// Whether every fragment of `fine` lies inside one fragment of `coarse`.
fn refines(fine: &[u32], coarse: &[u32]) -> bool {
    let mut parent = std::collections::HashMap::new();
    fine.iter()
        .zip(coarse)
        .all(|(f, c)| *parent.entry(*f).or_insert(*c) == *c)
}

#[test]
fn modes_runtime_larger_impacts_break_into_refinements() {
    for projection in [Projection::Modes, Projection::PieceConstant] {
        let projector = notched_projector(projection);
        // Field linear in the magnitude.
        let one = projector.piece_field(&hit(0.3, 1.0)).unwrap();
        let three = projector.piece_field(&hit(0.3, 3.0)).unwrap();
        for (a, b) in one.iter().zip(&three) {
            assert!((3.0 * a - b).abs() <= 1e-12 * b.abs().max(1e-300), "{projection:?}");
        }
        let mut previous: Option<Vec<u32>> = None;
        let mut counts = Vec::new();
        for magnitude in [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0] {
            let fragments = projector.fragments(&hit(0.3, magnitude), 1.0).unwrap();
            counts.push(fragments.count());
            if let Some(coarse) = &previous {
                assert!(
                    refines(fragments.piece_of_tet(), coarse),
                    "{projection:?} at {magnitude} N s"
                );
            }
            previous = Some(fragments.piece_of_tet().to_vec());
        }
        assert_eq!(
            counts[0], 1,
            "{projection:?}: a light touch breaks nothing ({counts:?})"
        );
        assert!(
            counts.last().unwrap() > &2,
            "{projection:?}: a hard hit breaks ({counts:?})"
        );
    }
}

#[test]
fn modes_runtime_impacts_at_different_places_break_differently() {
    let projector = notched_projector(Projection::Modes);
    // Just strong enough to break the bar somewhere, at its two ends.
    let toughness = 1.0;
    let breaking = |x: f64| {
        (0..40)
            .map(|i| 10f64.powf(-2.0 + 0.1 * i as f64))
            .find_map(|m| {
                let f = projector.fragments(&hit(x, m), toughness).unwrap();
                (f.count() > 1).then(|| f.piece_of_tet().to_vec())
            })
            .expect("some impulse breaks the bar")
    };
    assert_ne!(breaking(0.05), breaking(1.55));
}

#[test]
fn modes_runtime_fragments_keep_the_parent_mass_and_momentum() {
    let mesh = notched_mesh();
    let projector = notched_projector(Projection::Modes);
    let fragments = projector.fragments(&hit(0.75, 1000.0), 1.0).unwrap();
    assert!(fragments.count() > 1);
    let density = 2400.0;
    let velocity = DVec3::new(1.0, -2.0, 0.5);
    let spin = DVec3::new(0.3, 0.0, -1.2);
    let mesh_pose = Pose::new(DVec3::new(0.0, 3.0, 1.0), DQuat::from_rotation_z(0.3));
    // The whole bar as one piece gives the parent's own mass properties and momentum.
    let whole = shatter_fracture::prescore::TetPieces::try_new(mesh, vec![0; mesh.tets().len()]).unwrap();
    let props = whole.mass_properties(mesh, 0, density).unwrap();
    let centre = mesh_pose.transform_point(props.center_of_mass);
    let rotation = glam::DMat3::from_quat(mesh_pose.orientation * props.principal_frame);
    let inertia = rotation * glam::DMat3::from_diagonal(props.mass.principal_inertia()) * rotation.transpose();
    let momentum = ParentMomentum {
        linear: velocity * props.mass.mass(),
        angular: centre.cross(velocity * props.mass.mass()) + inertia * spin,
    };
    let parent = ModesParent {
        mesh_pose,
        momentum,
        density,
    };
    let resolution = FragmentResolution {
        cells: 16,
        particle_spacing: 0.05,
    };
    let bodies = fragment_bodies(mesh, &fragments, &parent, resolution).unwrap();
    assert_eq!(bodies.len(), fragments.count());
    let (mut mass, mut total) = (0.0, ParentMomentum::default());
    for body in &bodies {
        let MassSource::Properties(p) = body.mass else {
            panic!("fragments carry mass properties")
        };
        mass += p.mass();
        total = total + ParentMomentum::of_desc(body).unwrap();
    }
    assert!((mass - props.mass.mass()).abs() <= 1e-12 * mass);
    assert!((total.linear - momentum.linear).length() <= 1e-9 * momentum.linear.length());
    assert!((total.angular - momentum.angular).length() <= 1e-9 * momentum.angular.length());
}

#[test]
fn modes_asset_round_trips_and_refuses_another_mesh_or_version() {
    use shatter_fracture::modes::ModesAsset;
    let mesh = notched_mesh();
    let asset = ModesAsset {
        modes: notched_modes().clone(),
        projector: notched_projector(Projection::Modes),
    };
    let bytes = asset.to_bytes(mesh);
    let back = ModesAsset::from_bytes(&bytes, mesh).unwrap();
    assert_eq!(back.projector, asset.projector);
    assert_eq!(back.modes.modes, asset.modes.modes);
    assert_eq!(back.modes.energies, asset.modes.energies);
    assert_eq!(back.modes.reports, asset.modes.reports);
    let impact = hit(0.3, 50.0);
    assert_eq!(
        back.projector.fragments(&impact, 1.0).unwrap(),
        asset.projector.fragments(&impact, 1.0).unwrap()
    );
    // Another mesh (the dumbbell), a changed version, a truncated file.
    let other = ModesAsset::from_bytes(&bytes, dumbbell_mesh()).unwrap_err().to_string();
    assert!(other.contains("another mesh"), "{other}");
    let mut moved = notched_bar(16, 4, 4, 2, 7, VOXEL).into_parts();
    moved.0[0].x += 1e-9;
    let moved = TetMesh::try_new(moved.0, moved.1).unwrap();
    assert!(
        ModesAsset::from_bytes(&bytes, &moved)
            .unwrap_err()
            .to_string()
            .contains("fingerprint")
    );
    let mut versioned = bytes.clone();
    versioned[8] = 9;
    let version = ModesAsset::from_bytes(&versioned, mesh).unwrap_err().to_string();
    assert!(version.contains("version 9"), "{version}");
    let truncated = ModesAsset::from_bytes(&bytes[..bytes.len() - 5], mesh)
        .unwrap_err()
        .to_string();
    assert!(truncated.contains("truncated"), "{truncated}");
    let path = std::env::temp_dir().join("shatter_modes_asset_test.modes");
    asset.save(mesh, &path).unwrap();
    assert_eq!(ModesAsset::load(&path, mesh).unwrap().projector, asset.projector);
    std::fs::remove_file(&path).unwrap();
    let missing = ModesAsset::load(&path, mesh).unwrap_err().to_string();
    assert!(missing.contains("cannot read"), "{missing}");
}

#[test]
fn modes_world_bar_hit_by_a_ball_breaks_and_keeps_momentum() {
    use shatter_collision::{Collider, Shape, Sphere};
    use shatter_fracture::modes::{ModesFracture, ModesFractureSettings, ModesShape};
    use std::sync::Arc;
    let resolution = FragmentResolution {
        cells: 16,
        particle_spacing: 0.05,
    };
    let shape = Arc::new(
        ModesShape::new(
            notched_mesh().clone(),
            notched_projector(Projection::Modes),
            2400.0,
            resolution,
        )
        .unwrap(),
    );
    let mut world = World::new();
    world.set_gravity(DVec3::ZERO).unwrap();
    let bar = world.add_body(shape.body_desc(&Pose::IDENTITY).unwrap()).unwrap();
    let ball = Shape::Sphere(Sphere::try_new(0.15).unwrap());
    world
        .add_body(
            BodyDesc::dynamic(Collider::from_shape(ball, 0.03).unwrap())
                .with_density(7800.0)
                .with_position(DVec3::new(0.75, 0.65, 0.2))
                .with_velocity(DVec3::new(0.0, -15.0, 0.0), DVec3::ZERO),
        )
        .unwrap();
    let mut model = ModesFracture::new(ModesFractureSettings::default());
    model
        .make_breakable(&world, bar, shape.clone(), &Pose::IDENTITY, 1.0, 1.0)
        .unwrap();
    let bad = model.make_breakable(&world, bar, shape.clone(), &Pose::IDENTITY, f64::NAN, 1.0);
    assert!(bad.unwrap_err().to_string().contains("threshold"));
    world.add_fracture_model(Box::new(model));
    for _ in 0..6 {
        world.step(1.0 / 30.0).unwrap();
    }
    let model = world.fracture_model::<ModesFracture>().unwrap();
    assert!(model.failures().is_empty(), "{:?}", model.failures());
    assert_eq!(model.events().len(), 1, "the bar breaks once");
    let event = &model.events()[0];
    assert!(!world.contains(bar));
    assert!(event.fragments.len() >= 2, "{} fragments", event.fragments.len());
    assert!(event.fragments.iter().all(|f| world.contains(*f)));
    let scale = event.momentum_before.linear.length().max(1.0);
    assert!((event.momentum_after.linear - event.momentum_before.linear).length() <= 1e-9 * scale);
    assert!((event.momentum_after.angular - event.momentum_before.angular).length() <= 1e-9 * scale);
}

#[test]
fn modes_weight_field_keeps_a_stiffened_notch_whole() {
    // The same notched bar with the faces across the notch's column made 50 times stronger
    // (paper eq. 26's "do not break here"): the first mode must cut elsewhere.
    let mesh = notched_mesh();
    let in_notch_column = |x: f64| (7.0 * VOXEL - 1e-9..=8.0 * VOXEL + 1e-9).contains(&x);
    let field: Vec<f64> = mesh
        .interior_faces()
        .iter()
        .map(|f| {
            let on_plane = f
                .vertices
                .iter()
                .all(|&v| in_notch_column(mesh.vertices()[v as usize].x));
            if on_plane { 50.0 } else { 1.0 }
        })
        .collect();
    let modes = compute_modes(mesh, &settings(2, Dimension::Scalar), Some(&field), |_| ()).unwrap();
    let pieces = mode_pieces(mesh, &modes, 1, PIECE_THRESHOLD).unwrap();
    assert_eq!(pieces.count(), 2);
    let mut cut_faces = 0;
    for (f, face) in mesh.interior_faces().iter().enumerate() {
        let [a, b] = face.tets.map(|t| pieces.piece_of_tet()[t as usize]);
        if a != b {
            cut_faces += 1;
            assert_eq!(field[f], 1.0, "the mode cut a stiffened face");
        }
    }
    assert!(cut_faces > 0);
    // And the unweighted bar's first mode is cheaper than the weighted one's.
    assert!(notched_modes().energies[1] < modes.energies[1]);
}
