//! Tests of the SPH method's parts, with closed-form oracles where there are any.

use glam::{DMat3, DVec3};
use shatter_collision::TriMesh;

use super::*;
use crate::modes::scenes::voxel_solid;
use crate::modes::solid_tets;

/// A bar of `n` voxels of `size` m along x, y and z.
fn bar(n: [usize; 3], size: f64) -> ParticleSolid {
    ParticleSolid::from_tet_mesh(&voxel_solid(n, size, |_, _, _| true)).unwrap()
}

/// A ball of radius 0.5 m filled by isosurface stuffing: tets of every shape near its surface.
fn ball() -> ParticleSolid {
    ParticleSolid::from_tet_mesh(&solid_tets(&TriMesh::icosphere(0.5, 3), 32, 6).unwrap()).unwrap()
}

fn surface_area(solid: &ParticleSolid) -> f64 {
    (0..solid.len())
        .flat_map(|i| solid.surface_triangles(i))
        .map(|t| 0.5 * (t[1] - t[0]).cross(t[2] - t[0]).length())
        .sum()
}

fn links_are_symmetric(solid: &ParticleSolid) -> bool {
    (0..solid.len()).all(|i| {
        solid.links(i).iter().all(|l| {
            solid
                .links(l.other as usize)
                .iter()
                .any(|b| b.other as usize == i && b.face == l.other_face && b.other_face == l.face)
        })
    })
}

#[test]
fn sph_subdivision_conserves_volume_makes_no_inverted_tets_and_keeps_the_surface_closed() {
    let mut solid = ball();
    let volume = solid.volume();
    let area = surface_area(&solid);
    let mass = |s: &ParticleSolid| s.particles().iter().map(|p| p.volume * 2500.0).sum::<f64>();
    let mass_before = mass(&solid);
    // A particle and all its neighbours, then a child of it again (two levels), then a
    // surface particle: splits beside splits, at different levels.
    let first = 100;
    let mut split: Vec<usize> = solid.links(first).iter().map(|l| l.other as usize).collect();
    split.push(first);
    let mut children = Vec::new();
    for i in split {
        children = subdivide(&mut solid, i);
    }
    let grandchildren = subdivide(&mut solid, children[5]);
    let surface = (0..solid.len())
        .find(|&i| solid.is_surface(i) && solid.particles()[i].level == 0)
        .unwrap();
    subdivide(&mut solid, surface);
    assert_eq!(grandchildren.len(), 12);
    assert!(solid.particles().iter().any(|p| p.level == 2));
    for p in solid.particles() {
        let [a, b, c, d] = p.tet;
        let signed = (b - a).dot((c - a).cross(d - a)) / 6.0;
        assert!(
            signed > 0.0 && (signed - p.volume).abs() <= 1e-15 * signed,
            "inverted or wrong volume"
        );
    }
    assert!(
        (solid.volume() - volume).abs() <= 1e-13 * volume,
        "{} vs {volume}",
        solid.volume()
    );
    assert!((mass(&solid) - mass_before).abs() <= 1e-13 * mass_before);
    // Links rebuilt exactly: no internal face is left uncovered and none was lost.
    assert!(links_are_symmetric(&solid));
    assert!(
        (surface_area(&solid) - area).abs() <= 1e-12 * area,
        "{} vs {area}",
        surface_area(&solid)
    );
    assert_eq!(solid.components().1, 1);
}

#[test]
fn sph_split_children_hold_an_eighth_and_a_sixteenth_of_the_volume() {
    let parent = Particle::of_tet(
        [
            DVec3::ZERO,
            DVec3::new(1.0, 0.1, 0.0),
            DVec3::new(0.2, 0.9, 0.1),
            DVec3::new(0.3, 0.2, 1.1),
        ],
        0,
    );
    let children = split_tet(&parent);
    for (k, (_, child)) in children.iter().enumerate() {
        let share = if k < 4 { 8.0 } else { 16.0 };
        assert!(
            (child.volume * share - parent.volume).abs() <= 1e-14 * parent.volume,
            "child {k}"
        );
        assert_eq!(child.level, 1);
    }
}

#[test]
fn sph_corrected_gradient_reproduces_linear_fields_at_every_particle() {
    let a = DMat3::from_cols_array(&[0.3, -0.1, 0.7, 0.2, 0.5, -0.4, -0.6, 0.1, 0.25]);
    let b = DVec3::new(0.1, -2.0, 0.3);
    let mut solid = ball();
    for round in 0..2 {
        let stencil = Stencil::new(&solid, 3.0);
        assert_eq!(stencil.uncorrected(), 0);
        let u: Vec<DVec3> = solid.particles().iter().map(|p| a * p.centroid + b).collect();
        let mut worst = [0.0f64; 2];
        for i in 0..solid.len() {
            let error = stencil.gradient(i, &u) - a;
            let size = error.to_cols_array().iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let slot = usize::from(solid.is_surface(i));
            worst[slot] = worst[slot].max(size);
        }
        // Interior and surface alike: the correction makes the gradient exact for linear fields.
        assert!(worst[0] <= 1e-10 && worst[1] <= 1e-10, "round {round}: {worst:?}");
        // Again after splitting a particle and its neighbours.
        let mut split: Vec<usize> = solid.links(40).iter().map(|l| l.other as usize).collect();
        split.push(40);
        for i in split {
            subdivide(&mut solid, i);
        }
    }
}

#[test]
fn sph_uniaxial_stretch_gives_uniaxial_stress_in_the_interior() {
    let material = SphMaterial {
        poisson: 0.25,
        ..SphMaterial::brittle(1e6, 0.1)
    };
    let (length, strain) = (1.2, 1e-4);
    let solid = bar([24, 4, 4], 0.05);
    let stencil = Stencil::new(&solid, 3.0);
    let interior = |p: &Particle| (p.centroid.x - 0.5 * length).abs() < 0.2 * length;
    let expected = material.young * strain;
    // (a) The exact field of uniaxial stress: x stretched, y and z contracted by nu.
    let u: Vec<DVec3> = solid
        .particles()
        .iter()
        .map(|p| {
            DVec3::new(
                strain * p.centroid.x,
                -material.poisson * strain * p.centroid.y,
                -material.poisson * strain * p.centroid.z,
            )
        })
        .collect();
    let stress = stress::particle_stresses(&stencil, &material, &u);
    for (p, s) in solid.particles().iter().zip(&stress) {
        assert!(
            (s.x_axis.x - expected).abs() <= 1e-3 * expected,
            "{} vs {expected}",
            s.x_axis.x
        );
        assert!(
            s.y_axis.y.abs() <= 1e-3 * expected && s.z_axis.z.abs() <= 1e-3 * expected,
            "{p:?}"
        );
    }
    // (b) The patch test: the equilibrium of the bar with only its end particles held on that
    // field (the elastic solve, then the SPH gradient) gives the same stress at every particle.
    let field = |x: DVec3| {
        let x = x - DVec3::new(0.5 * length, 0.1, 0.1);
        DVec3::new(
            strain * x.x,
            -material.poisson * strain * x.y,
            -material.poisson * strain * x.z,
        )
    };
    let held = |x: DVec3| (x.x < 0.06 || x.x > length - 0.06).then(|| field(x));
    let solved = elastic::solve_held(&solid, &material, &held, &Default::default()).unwrap();
    assert!(
        solved.residual <= 1e-8,
        "{} after {}",
        solved.residual,
        solved.iterations
    );
    let stress = stress::particle_stresses(&stencil, &material, &solved.displacement);
    // The stress of that field exactly, Green's strain included (it differs from E e by e/2).
    let gradient = DMat3::from_diagonal(DVec3::new(1.0, -material.poisson, -material.poisson) * strain);
    let exact = stress::linear_stress(&material, stress::green_strain(gradient));
    let mut worst = 0.0f64;
    for (p, s) in solid.particles().iter().zip(&stress) {
        let off = (*s - exact).to_cols_array().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        worst = worst.max(off / expected);
        if interior(p) {
            assert!((s.x_axis.x - expected).abs() <= 0.05 * expected, "{p:?}: {s}");
        }
    }
    eprintln!(
        "uniaxial patch test: worst relative stress error {worst:.2e} after {} iterations",
        solved.iterations
    );
    assert!(worst <= 1e-6, "{worst}");
}

#[test]
fn sph_three_point_bending_cracks_first_at_mid_span_on_the_tension_side() {
    let height = 0.15;
    let solid = bar([24, 3, 3], 0.05);
    let material = SphMaterial::brittle(1e6, 0.06);
    let contacts = three_point(&solid, &material, 2.0);
    let settings = CrackSettings::default();
    let field = stress_field(&solid, &material, &contacts, &settings).unwrap();
    let (at, top) = field
        .principal
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.values[0].total_cmp(&b.1.values[0]))
        .unwrap();
    let x = solid.particles()[at].centroid;
    eprintln!(
        "bending: max {:.3e} Pa at {x}, dir {}, {} its",
        top.values[0], top.directions[0], field.iterations
    );
    assert!((x.x - 0.6).abs() < 0.1 && x.y < 0.5 * height, "{x}");
    assert!(top.directions[0].x.abs() > 0.9, "{}", top.directions[0]);
}

/// The three-point bend of `bar([24, 3, 3], 0.05)`: a push down at mid-span on top, half of it
/// up at each support underneath, impulse `j` N s.
fn three_point(solid: &ParticleSolid, material: &SphMaterial, j: f64) -> Vec<ContactLoad> {
    three_point_over(solid, material, j, 0.05, 1.15)
}

/// A three-point bend of a piece of that bar (15 cm high) on supports at `x = lo` and `hi`.
fn three_point_over(solid: &ParticleSolid, material: &SphMaterial, j: f64, lo: f64, hi: f64) -> Vec<ContactLoad> {
    let mass = solid.volume() * material.density;
    let load = |x: f64, y: f64, j: f64| ContactLoad {
        point: DVec3::new(x, y, 0.075),
        impulse: DVec3::Y * j,
        normal: DVec3::Y * j.signum(),
        depth: 0.0,
        effective_mass: mass,
    };
    vec![
        load(0.5 * (lo + hi), 0.15, -j),
        load(lo, 0.0, 0.5 * j),
        load(hi, 0.0, 0.5 * j),
    ]
}

#[test]
fn sph_three_point_bend_breaks_at_mid_span_into_two_pieces_that_keep_mass_and_momentum() {
    let mut solid = bar([24, 3, 3], 0.05);
    // A crack radius above the bar's height: one crack can cut through the section.
    let material = SphMaterial {
        contact_radius: 0.06,
        ..SphMaterial::brittle(1e6, 0.2)
    };
    let before = solid.clone();
    let contacts = three_point(&solid, &material, 6.0);
    let settings = CrackSettings::default();
    let report = crack_solid(&mut solid, &material, &contacts, &settings).unwrap();
    for p in &report.passes {
        eprintln!(
            "pass: max {:.3e} its {} cracks {:?}",
            p.max_stress,
            p.iterations,
            p.cracks
                .iter()
                .map(|(s, c)| (s.origin, s.normal, c.cut, c.split))
                .collect::<Vec<_>>()
        );
    }
    let first = report.starts().next().expect("a crack");
    eprintln!(
        "bend: {} passes, first crack at {} ({:.3e} Pa), {} links cut, {} split, {} particles",
        report.passes.len(),
        first.origin,
        first.stress,
        report.links_cut(),
        report.particles_split(),
        solid.len()
    );
    assert!(
        (first.origin.x - 0.6).abs() < 0.1 && first.origin.y < 0.075,
        "{}",
        first.origin
    );
    let pieces = breakup::pieces(&solid);
    assert!(pieces.len() >= 2, "{} pieces", pieces.len());
    // The two largest pieces are the bar's halves, split near mid-span.
    let mut sizes: Vec<(f64, f64)> = pieces
        .iter()
        .map(|m| {
            let v: f64 = m.iter().map(|&i| solid.particles()[i].volume).sum();
            let x = m
                .iter()
                .map(|&i| solid.particles()[i].centroid.x * solid.particles()[i].volume)
                .sum::<f64>()
                / v;
            (v, x)
        })
        .collect();
    sizes.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total = before.volume();
    assert!(
        sizes[0].0 + sizes[1].0 > 0.9 * total && sizes[1].0 > 0.3 * total,
        "{:?}",
        &sizes[..sizes.len().min(5)]
    );
    assert!((sizes[0].1 - 0.6).signum() != (sizes[1].1 - 0.6).signum(), "{sizes:?}");
    // Subdivision conserved the volume, and the fragments keep mass and momentum.
    assert!((solid.volume() - total).abs() <= 1e-13 * total);
    let frame = shatter_collision::Pose::new(DVec3::new(2.0, 1.0, -3.0), glam::DQuat::from_rotation_y(0.3));
    let whole = shatter_collision::BodyMassProperties::from_integrals(
        before.integrals(&(0..before.len()).collect::<Vec<_>>()),
        material.density,
    )
    .unwrap();
    let centre = frame.transform_point(whole.center_of_mass);
    let (v, w) = (DVec3::new(1.0, -2.0, 0.5), DVec3::new(0.3, -0.8, 2.0));
    let momentum = crate::fragments::ParentMomentum {
        linear: v * whole.mass.mass(),
        angular: centre.cross(v * whole.mass.mass())
            + DMat3::from_quat(frame.orientation * whole.principal_frame)
                * (whole.mass.principal_inertia()
                    * (DMat3::from_quat(frame.orientation * whole.principal_frame).transpose() * w)),
    };
    let parent = SphParent {
        mesh_pose: frame,
        momentum,
        density: material.density,
    };
    let resolution = crate::fragments::FragmentResolution {
        cells: 12,
        particle_spacing: 0.04,
    };
    let fragments = fragment_bodies(&solid, &parent, resolution).unwrap();
    assert_eq!(fragments.len(), pieces.len());
    let mut mass = 0.0;
    let mut after = crate::fragments::ParentMomentum::default();
    for f in &fragments {
        let shatter_engine::MassSource::Properties(p) = f.desc.mass else {
            panic!("fragments carry mass")
        };
        mass += p.mass();
        after = after + crate::fragments::ParentMomentum::of_desc(&f.desc).unwrap();
    }
    assert!(
        (mass - whole.mass.mass()).abs() <= 1e-12 * mass,
        "{mass} vs {}",
        whole.mass.mass()
    );
    assert!((after.linear - momentum.linear).length() <= 1e-9 * momentum.linear.length());
    assert!(
        (after.angular - momentum.angular).length() <= 1e-9 * momentum.angular.length(),
        "{} vs {}",
        after.angular,
        momentum.angular
    );
    // A fragment cracks again: the left half, bent over a span of its own (too stubby for the
    // crack to be sure to start at mid-span), breaks again and keeps its volume.
    let left = pieces
        .iter()
        .max_by(|a, b| a.len().cmp(&b.len()).then(b.cmp(a)))
        .filter(|m| solid.particles()[m[0]].centroid.x < 0.6)
        .or_else(|| {
            pieces
                .iter()
                .find(|m| m.iter().all(|&i| solid.particles()[i].centroid.x < 0.6))
        })
        .expect("a left half");
    let mut half = solid.subset(left);
    let (lo, hi) = half
        .particles()
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.centroid.x), hi.max(p.centroid.x))
        });
    // Supports clear of the jagged crack face at the right end.
    let (lo, hi) = (lo + 0.025, hi - 0.125);
    let again = three_point_over(&half, &material, 12.0, lo, hi);
    let volume = half.volume();
    let report = crack_solid(&mut half, &material, &again, &CrackSettings::default()).unwrap();
    assert!(report.links_kept_cut() > 0, "the half cracks");
    assert!(breakup::pieces(&half).len() >= 2, "the half breaks again");
    assert!((half.volume() - volume).abs() <= 1e-13 * volume);
}

/// A brick of 8 x 4 x 2 voxels of 5 cm dropped flat at `speed` m/s onto a fixed ground box,
/// cracking in `material`, stepped `steps` frames at 30 Hz.
fn dropped_brick(material: SphMaterial, speed: f64, steps: usize) -> (shatter_engine::World, shatter_engine::BodyId) {
    use shatter_collision::{Collider, Cuboid, Pose, Shape};
    use shatter_engine::{BodyDesc, World};
    let solid = bar([8, 4, 2], 0.05);
    let settings = SphFractureSettings::default();
    let mesh_pose = Pose::new(DVec3::new(-0.2, 0.3, -0.05), glam::DQuat::from_rotation_z(0.3));
    let mut world = World::new();
    let ground =
        Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::new(2.0, 0.25, 2.0)).unwrap()), 0.1).unwrap();
    world
        .add_body(BodyDesc::fixed(ground).with_position(DVec3::new(0.0, -0.25, 0.0)))
        .unwrap();
    let desc = sph_body_desc(&solid, &material, &mesh_pose, settings.resolution).unwrap();
    let brick = world
        .add_body(desc.with_velocity(DVec3::new(0.0, -speed, 0.0), DVec3::ZERO))
        .unwrap();
    let mut model = SphFracture::new(settings);
    let bad = model.make_breakable(&world, brick, solid.clone(), material, &mesh_pose, f64::NAN);
    assert!(bad.unwrap_err().to_string().contains("threshold"));
    let bad = model.make_breakable(
        &world,
        brick,
        solid.clone(),
        SphMaterial {
            poisson: 0.5,
            ..material
        },
        &mesh_pose,
        1.0,
    );
    assert!(bad.unwrap_err().to_string().contains("Poisson"));
    assert!(!model.is_breakable(brick), "a refused call changes nothing");
    model
        .make_breakable(&world, brick, solid, material, &mesh_pose, 1.0)
        .unwrap();
    world.add_fracture_model(Box::new(model));
    for _ in 0..steps {
        world.step(1.0 / 30.0).unwrap();
    }
    (world, brick)
}

#[test]
fn sph_world_dropped_brick_breaks_keeps_momentum_and_its_fragments_stay_breakable() {
    let material = SphMaterial {
        contact_radius: 0.05,
        ..SphMaterial::brittle(2e6, 0.25)
    };
    let (world, brick) = dropped_brick(material, 4.0, 4);
    let model = world.fracture_model::<SphFracture>().unwrap();
    assert!(model.failures().is_empty(), "{:?}", model.failures());
    let broke: Vec<&SphFractureEvent> = model.events().iter().filter(|e| e.pieces > 1).collect();
    assert!(!broke.is_empty(), "{} events, none broke", model.events().len());
    let event = broke[0];
    eprintln!(
        "world: {} events, first break into {} at t = {:.3} s, {} links cut, {} split",
        model.events().len(),
        event.pieces,
        event.time,
        event.report.links_cut(),
        event.report.particles_split()
    );
    assert_eq!(event.body, brick);
    assert!(!world.contains(brick));
    assert_eq!(event.fragments.len(), event.pieces);
    let scale = event.momentum_before.linear.length().max(1.0);
    assert!((event.momentum_after.linear - event.momentum_before.linear).length() <= 1e-9 * scale);
    assert!((event.momentum_after.angular - event.momentum_before.angular).length() <= 1e-9 * scale);
    // Every fragment still in the world, of this break or a later one, is breakable with its own
    // particles, whose tets carry exactly its mass (a fragment that broke again has left the
    // world, and its own fragments are checked in its stead).
    let mut live = 0;
    let fragments = model.events().iter().flat_map(|e| e.fragments.iter());
    for f in fragments.filter(|f| world.contains(**f)) {
        let solid = model.solid(*f).expect("a fragment stays breakable");
        let mass = world.body(*f).unwrap().mass.mass();
        assert!((solid.volume() * material.density - mass).abs() <= 1e-12 * mass);
        live += 1;
    }
    assert!(live > 0);
}

#[test]
fn sph_world_brick_below_its_strength_stays_whole() {
    let material = SphMaterial::brittle(1e9, 0.1);
    let (world, brick) = dropped_brick(material, 2.0, 8);
    let model = world.fracture_model::<SphFracture>().unwrap();
    assert!(world.contains(brick));
    assert!(model.is_breakable(brick));
    assert!(
        model
            .events()
            .iter()
            .all(|e| e.pieces == 1 && e.report.links_cut() == 0)
    );
    assert!(!model.events().is_empty(), "the landing was stressed");
}

#[test]
fn sph_cracking_is_identical_across_runs_and_thread_counts() {
    let material = SphMaterial::brittle(1e6, 0.06);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut solid = bar([24, 3, 3], 0.05);
            let contacts = three_point(&solid, &material, 20.0);
            let field = stress_field(&solid, &material, &contacts, &CrackSettings::default()).unwrap();
            crack_solid(&mut solid, &material, &contacts, &CrackSettings::default()).unwrap();
            (solid, field.stress)
        })
    };
    let first = run(1);
    assert!(first.0.len() > bar([24, 3, 3], 0.05).len(), "the run split particles");
    for threads in [1, 2, 4] {
        let again = run(threads);
        assert!(again.0 == first.0, "{threads} threads: another solid");
        let bits = |s: &[DMat3]| {
            s.iter()
                .flat_map(|m| m.to_cols_array().map(f64::to_bits))
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&again.1), bits(&first.1), "{threads} threads: other stress bits");
    }
}

#[test]
fn sph_bad_input_is_refused_by_name_and_changes_nothing() {
    let mut solid = bar([6, 2, 2], 0.05);
    let before = solid.clone();
    let material = SphMaterial::brittle(1e3, 0.06);
    let good = three_point(&solid, &material, 1.0);
    let settings = CrackSettings::default();
    let with = |f: &dyn Fn(&mut ContactLoad)| {
        let mut contacts = good.clone();
        f(&mut contacts[0]);
        contacts
    };
    let cases: [(Vec<ContactLoad>, SphMaterial, &str); 6] = [
        (with(&|c| c.point.x = f64::NAN), material, "contact point"),
        (with(&|c| c.impulse.y = f64::INFINITY), material, "contact impulse"),
        (with(&|c| c.effective_mass = 0.0), material, "effective mass"),
        (
            good.clone(),
            SphMaterial {
                young: -1.0,
                ..material
            },
            "Young's modulus",
        ),
        (
            good.clone(),
            SphMaterial {
                density: f64::NAN,
                ..material
            },
            "density",
        ),
        (
            good.clone(),
            SphMaterial {
                crack_radius: 0.0,
                ..material
            },
            "crack radius",
        ),
    ];
    for (contacts, material, named) in cases {
        let error = crack_solid(&mut solid, &material, &contacts, &settings)
            .unwrap_err()
            .to_string();
        assert!(error.contains(named), "{error} should name {named}");
        assert!(solid == before, "a refused event changed the solid");
    }
    let held = |_: DVec3| Some(DVec3::new(f64::NAN, 0.0, 0.0));
    let error = elastic::solve_held(&solid, &material, &held, &Default::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("held displacement"), "{error}");
}

#[test]
fn sph_penetration_depth_pushes_the_patch_by_that_depth_along_the_normal() {
    let solid = bar([24, 3, 3], 0.05);
    let material = SphMaterial {
        contact_radius: 0.04,
        ..SphMaterial::brittle(1e6, 0.06)
    };
    let depth = 2e-3;
    let contact = ContactLoad {
        point: DVec3::new(0.6, 0.15, 0.075),
        impulse: DVec3::new(0.3, -5.0, 0.0),
        normal: -DVec3::Y,
        depth,
        effective_mass: 10.0,
    };
    let settings = CrackSettings {
        depth: VirtualDepth::Penetration,
        ..CrackSettings::default()
    };
    let field = stress_field(&solid, &material, &[contact], &settings).unwrap();
    let mut patch = 0;
    for (i, p) in solid.particles().iter().enumerate() {
        if solid.is_surface(i) && (p.centroid - contact.point).length() <= material.contact_radius {
            patch += 1;
            assert!(
                (field.displacement[i] + DVec3::Y * depth).length() <= 1e-15,
                "{}",
                field.displacement[i]
            );
        }
    }
    assert!(patch > 0);
    // The rest of the bar holds its centre of mass: the mean displacement is zero.
    let volume = solid.volume();
    let mean: DVec3 = solid
        .particles()
        .iter()
        .zip(&field.displacement)
        .map(|(p, u)| *u * p.volume)
        .sum::<DVec3>()
        / volume;
    assert!(mean.length() <= 1e-3 * depth, "{mean}");
    let bad = ContactLoad {
        normal: DVec3::new(0.0, -2.0, 0.0),
        ..contact
    };
    let error = stress_field(&solid, &material, &[bad], &settings)
        .unwrap_err()
        .to_string();
    assert!(error.contains("contact normal"), "{error}");
}

#[test]
fn sph_rigid_rotation_gives_no_stress_with_greens_strain() {
    // A large rotation is no strain: Green's strain of J = R is zero, where the small-strain
    // tensor sym(R - I) would read (cos 0.8 - 1) = -0.30.
    let solid = ball();
    let material = SphMaterial::brittle(1e6, 0.1);
    let rotation = DMat3::from_axis_angle(DVec3::new(1.0, -2.0, 0.5).normalize(), 0.8);
    let u: Vec<DVec3> = solid
        .particles()
        .iter()
        .map(|p| rotation * p.centroid - p.centroid)
        .collect();
    let stress = stress::particle_stresses(&Stencil::new(&solid, 3.0), &material, &u);
    let worst = stress
        .iter()
        .flat_map(|s| s.to_cols_array())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(worst <= 1e-9 * material.young, "{worst}");
}
