//! Oracles of the boundary-element stress solve (`fracture::bem`, Zhu 2015 sections 4-5):
//! closed-form elastostatic solutions the discretisation must reproduce. Mesh sizes are in each
//! test; `-- --nocapture` prints the measured errors.

use glam::{DMat3, DVec3};
use shatter_collision::TriMesh;
use shatter_fracture::bem::kernel::Kelvin;
use shatter_fracture::bem::meshes::{Grading, grid_box, hollow_sphere};
use shatter_fracture::bem::quadrature::visit_adaptive;
use shatter_fracture::bem::{Balance, BemSettings, Elastic, ElasticBody, Loads, Solution};

/// A stone-like material: E = 20 GPa, nu = 0.25.
fn rock() -> Elastic {
    Elastic::try_new(20.0e9, 0.25).unwrap()
}

/// Mass density of the test bodies, kg/m^3.
const DENSITY: f64 = 2500.0;

fn max_abs(m: DMat3) -> f64 {
    m.to_cols_array().iter().fold(0.0f64, |a, v| a.max(v.abs()))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn body(mesh: TriMesh) -> ElasticBody {
    ElasticBody::try_new(mesh, rock(), BemSettings::default()).unwrap()
}

/// Sample points of the ball of radius `r` (centre, axes, diagonals, an irregular direction).
fn ball_points(radii: &[f64]) -> Vec<DVec3> {
    let dirs = [
        DVec3::X,
        DVec3::NEG_Y,
        DVec3::Z,
        DVec3::new(1.0, 1.0, 1.0).normalize(),
        DVec3::new(-0.3, 0.2, -0.9).normalize(),
    ];
    let mut points = vec![DVec3::ZERO];
    for &r in radii {
        points.extend(dirs.iter().map(|d| *d * r));
    }
    points
}

/// Oracle a and g: under uniform pressure p every closed body has stress -p I. On icospheres of
/// 320, 1280 and 5120 triangles the largest error at interior points (r <= 0.9 R) and at the
/// vertices must be under 8, 5 and 2 percent, and halve with each refinement (first order); the
/// per-triangle recovery (each facet in its own frame) must meet the same bounds (measured 5.5,
/// 2.5 and 1.3 percent).
#[test]
fn bem_sphere_under_uniform_pressure_has_stress_minus_p_identity() {
    let p = 1.0e6;
    let expected = DMat3::IDENTITY * -p;
    let mut previous = f64::INFINITY;
    for (subdivisions, bound) in [(2, 0.08), (3, 0.05), (4, 0.02)] {
        let body = body(TriMesh::icosphere(1.0, subdivisions));
        let mut loads = Loads::new(body.surface(), DENSITY).unwrap();
        loads.add_pressure(body.surface(), p).unwrap();
        let solution = body.solve(&loads).unwrap();
        let interior = ball_points(&[0.3, 0.6, 0.8, 0.9])
            .iter()
            .fold(0.0f64, |a, x| a.max(max_abs(solution.stress(*x) - expected) / p));
        let vertex = solution
            .vertex_stresses()
            .iter()
            .fold(0.0f64, |a, s| a.max(max_abs(*s - expected) / p));
        let triangle = solution
            .triangle_stresses(&solution.vertex_displacements())
            .iter()
            .fold(0.0f64, |a, s| a.max(max_abs(*s - expected) / p));
        let iterations = solution.report().convergence.iterations;
        println!(
            "sphere, {} triangles: {iterations} iterations, max error interior {:.2}%, vertices {:.2}%, triangles {:.2}%",
            body.surface().len(),
            interior * 100.0,
            vertex * 100.0,
            triangle * 100.0
        );
        assert!(interior < bound && vertex < bound, "{interior} {vertex} over {bound}");
        assert!(triangle < bound, "triangles {triangle} over {bound}");
        assert!(iterations < 50);
        let error = interior.max(vertex);
        assert!(
            error < previous / 1.6,
            "error {error} did not fall at first order from {previous}"
        );
        previous = error;
    }
}

/// Lame's thick-walled sphere (oracle b): inner radius a, outer b, internal pressure p:
/// sigma_rr = p a^3 / (b^3 - a^3) (1 - b^3 / r^3), sigma_tt = p a^3 / (b^3 - a^3) (1 + b^3 / (2 r^3)).
fn lame(p: f64, a: f64, b: f64, x: DVec3) -> DMat3 {
    let r = x.length();
    let k = p * a.powi(3) / (b.powi(3) - a.powi(3));
    let (rr, tt) = (
        k * (1.0 - b.powi(3) / r.powi(3)),
        k * (1.0 + b.powi(3) / (2.0 * r.powi(3))),
    );
    let e = x / r;
    DMat3::IDENTITY * tt + DMat3::from_cols(e * e.x, e * e.y, e * e.z) * (rr - tt)
}

/// Oracle b, on a hollow sphere a = 0.5 m, b = 1 m of 2 x 5120 triangles: the cavity is the second
/// sheet, whose jump term must have the same sign as the outer one's. Errors are relative to the
/// largest exact stress component at each point; medians under 2 percent at the vertices and
/// 5 percent inside.
#[test]
fn bem_hollow_sphere_under_internal_pressure_matches_lame() {
    let (a, b, p) = (0.5, 1.0, 1.0e6);
    let body = body(hollow_sphere(a, b, 4).unwrap());
    let s = body.surface();
    assert!(s.components()[1].is_cavity());
    let mut loads = Loads::new(s, DENSITY).unwrap();
    for i in 0..s.len() {
        if s.component_of()[i] == 1 {
            loads.add_traction(i, -s.normals()[i] * p).unwrap();
        }
    }
    let solution = body.solve(&loads).unwrap();
    let relative = |x: DVec3, sigma: DMat3| {
        let exact = lame(p, a, b, x);
        max_abs(sigma - exact) / max_abs(exact)
    };
    let vertices = s.mesh().vertices();
    let boundary: Vec<f64> = solution
        .vertex_stresses()
        .iter()
        .zip(vertices)
        .map(|(sigma, x)| relative(*x, *sigma))
        .collect();
    let inside: Vec<f64> = ball_points(&[0.6, 0.7, 0.8, 0.9])
        .into_iter()
        .skip(1)
        .map(|x| relative(x, solution.stress(x)))
        .collect();
    let (boundary, inside) = (median(boundary), median(inside));
    println!(
        "hollow sphere, {} triangles: {} iterations, median error boundary {:.2}%, inside {:.2}%",
        s.len(),
        solution.report().convergence.iterations,
        boundary * 100.0,
        inside * 100.0
    );
    assert!(boundary < 0.02 && inside < 0.05, "{boundary} {inside}");
}

/// A bar of `half` extents, tractions `s` pulling on both x faces.
fn pulled_bar(half: DVec3, spacing: f64, grading: Grading, s: f64) -> (ElasticBody, Loads) {
    let body = body(grid_box(half, spacing, grading).unwrap());
    let surface = body.surface();
    let mut loads = Loads::new(surface, DENSITY).unwrap();
    for i in 0..surface.len() {
        let n = surface.normals()[i];
        if n.x.abs() > 0.99 {
            loads.add_traction(i, n * s).unwrap();
        }
    }
    (body, loads)
}

fn bar_interior(half: DVec3) -> Vec<DVec3> {
    let mut points = Vec::new();
    for fx in [-0.5, 0.0, 0.3, 0.5] {
        for (fy, fz) in [(0.0, 0.0), (0.5, 0.0), (-0.4, 0.4), (0.0, -0.6)] {
            points.push(DVec3::new(fx * half.x, fy * half.y, fz * half.z));
        }
    }
    points
}

/// Oracles c and d: a 1 m cube pulled by s on two opposite faces has sigma = s e_x e_x inside
/// (16 interior points, within 2 percent of s on 3072 triangles graded towards the edges) and
/// displacement of strain s / E along, -nu s / E across (within 3 percent, fitted over the interior
/// points, rigid motion removed). The vertex stress on the faces, edges and corners is measured and
/// printed: at edges and corners it does not converge (see `bem::solution`).
#[test]
fn bem_cube_under_opposite_tractions_is_uniaxial() {
    let (half, s) = (DVec3::splat(0.5), 1.0e6);
    let expected = DMat3::from_cols(DVec3::X * s, DVec3::ZERO, DVec3::ZERO);
    let m = rock();
    let mut errors = Vec::new();
    for spacing in [0.125, 0.0625] {
        let (body, loads) = pulled_bar(half, spacing, Grading::Cosine, s);
        let solution = body.solve(&loads).unwrap();
        let points = bar_interior(half);
        let interior = points
            .iter()
            .fold(0.0f64, |a, x| a.max(max_abs(solution.stress(*x) - expected) / s));
        let strain = fitted_strain(&solution, &points);
        let along = (strain.x_axis.x - s / m.young()).abs() / (s / m.young());
        let lateral = m.poisson() * s / m.young();
        let across = (strain.y_axis.y + lateral).abs().max((strain.z_axis.z + lateral).abs()) / lateral;
        let vertices = body.surface().mesh().vertices();
        let on_edge = |x: &DVec3| {
            let at = (x.abs() - half).abs().cmple(DVec3::splat(1e-9));
            u32::from(at.x) + u32::from(at.y) + u32::from(at.z) >= 2
        };
        let (mut smooth, mut sharp) = (Vec::new(), Vec::new());
        for (sigma, x) in solution.vertex_stresses().iter().zip(vertices) {
            let error = max_abs(*sigma - expected) / s;
            if on_edge(x) {
                sharp.push(error)
            } else {
                smooth.push(error)
            }
        }
        let sharp_max = sharp.iter().fold(0.0f64, |a, e| a.max(*e));
        let inset: Vec<f64> = solution
            .inset_vertex_stresses(spacing)
            .iter()
            .map(|sigma| max_abs(*sigma - expected) / s)
            .collect();
        println!(
            "cube, {} triangles: {} iterations, interior max {:.2}%, strain along {:.2}% across {:.2}%, vertices: \
             faces median {:.1}%, edges and corners median {:.1}% max {:.1}%; one spacing inside: median {:.1}% max {:.1}%",
            body.surface().len(),
            solution.report().convergence.iterations,
            interior * 100.0,
            along * 100.0,
            across * 100.0,
            median(smooth) * 100.0,
            median(sharp.clone()) * 100.0,
            sharp_max * 100.0,
            median(inset.clone()) * 100.0,
            inset.iter().fold(0.0f64, |a, e| a.max(*e)) * 100.0
        );
        errors.push((interior, along.max(across)));
    }
    let (coarse, fine) = (errors[0], errors[1]);
    assert!(fine.0 < 0.02 && fine.0 < coarse.0, "interior stress errors {errors:?}");
    assert!(fine.1 < 0.03, "strain errors {errors:?}");
}

/// A slender 2 x 0.5 x 0.5 m bar under the same load converges, but slowly: the single-layer
/// density of a convex edge carries the singularity of the exterior's re-entrant 270 degree wedge
/// (density ~ d^-0.46), so the interior error falls like h^0.55 (measured: 23 then 15 percent on
/// 576 and 2304 uniform triangles). This test pins that the error falls under refinement and
/// prints it; slender bodies need meshes graded towards their edges.
#[test]
fn bem_slender_bar_converges_under_refinement() {
    let (half, s) = (DVec3::new(1.0, 0.25, 0.25), 1.0e6);
    let mut errors = Vec::new();
    for spacing in [0.125, 0.0625] {
        let (body, loads) = pulled_bar(half, spacing, Grading::Uniform, s);
        let solution = body.solve(&loads).unwrap();
        let centre = solution.stress(DVec3::ZERO).x_axis.x;
        let error = (centre - s).abs() / s;
        println!(
            "slender bar, {} triangles: sigma_xx at the centre {:.1}% off",
            body.surface().len(),
            error * 100.0
        );
        errors.push(error);
    }
    assert!(errors[1] < errors[0] * 0.8, "{errors:?}");
}

/// The symmetric part of the least-squares linear fit of the displacement over `points`.
fn fitted_strain(solution: &Solution<'_>, points: &[DVec3]) -> DMat3 {
    let center = points.iter().copied().sum::<DVec3>() / points.len() as f64;
    let mean_u = points.iter().map(|x| solution.displacement(*x)).sum::<DVec3>() / points.len() as f64;
    // Normal equations: (sum dx dx^T) G^T = sum dx du^T.
    let (mut xx, mut xu) = (DMat3::ZERO, DMat3::ZERO);
    for x in points {
        let (dx, du) = (*x - center, solution.displacement(*x) - mean_u);
        xx += DMat3::from_cols(dx * dx.x, dx * dx.y, dx * dx.z);
        xu += DMat3::from_cols(dx * du.x, dx * du.y, dx * du.z);
    }
    let gradient = (xx.inverse() * xu).transpose();
    (gradient + gradient.transpose()) * 0.5
}

/// Oracle e: a 1 m block (a short column, 3072 triangles) under its own weight standing on a
/// uniform supporting traction has sigma_zz = -rho g (h - z) and no other stress, within 2.5
/// percent of rho g h (measured 2.0); its loads balance, so the inertia carries nothing.
#[test]
fn bem_column_under_self_weight_has_linear_vertical_stress() {
    let half = DVec3::splat(0.5);
    let g = 9.81;
    let body = body(grid_box(half, 0.0625, Grading::Cosine).unwrap());
    let s = body.surface();
    let mut loads = Loads::new(s, DENSITY).unwrap();
    loads.set_gravity(DVec3::new(0.0, 0.0, -g)).unwrap();
    let base = DENSITY * g * 2.0 * half.z;
    for i in 0..s.len() {
        if s.normals()[i].z < -0.99 {
            loads.add_traction(i, DVec3::Z * base).unwrap();
        }
    }
    let solution = body.solve(&loads).unwrap();
    assert!(
        solution.report().acceleration.length() < 1e-9 * g,
        "{:?}",
        solution.report().acceleration
    );
    let mut worst = 0.0f64;
    for z in [-0.3, -0.15, 0.0, 0.15, 0.3] {
        for (x, y) in [(0.0, 0.0), (0.2, -0.2), (-0.25, 0.1)] {
            let p = DVec3::new(x, y, z);
            let exact = DMat3::from_cols(DVec3::ZERO, DVec3::ZERO, DVec3::Z * (-DENSITY * g * (half.z - z)));
            worst = worst.max(max_abs(solution.stress(p) - exact) / base);
        }
    }
    println!(
        "column, {} triangles: max error {:.2}% of rho g h",
        s.len(),
        worst * 100.0
    );
    assert!(worst < 0.025, "{worst}");
}

/// Point 2: a free 1 m cube (3072 triangles) pulled by s on one face only accelerates at s / (rho L);
/// with the d'Alembert force its stress is the exact ramp sigma_xx = s (x + L/2) / L. Solved as
/// given (no balance) the answer is wrong (measured 14 percent off: the solve's rigid-motion
/// completion spreads the unbalanced resultant over the surface like a rigid motion, not through
/// the volume as inertia does). Placed elsewhere (translated and turned), the balanced
/// answer is the same in the body's frame.
#[test]
fn bem_inertial_balance_carries_an_unbalanced_load() {
    let (half, s) = (DVec3::splat(0.5), 1.0e6);
    let mesh = grid_box(half, 0.0625, Grading::Cosine).unwrap();
    let length = 2.0 * half.x;
    let load = |body: &ElasticBody, axis: DVec3, balance: Balance| {
        let surface = body.surface();
        let mut loads = Loads::new(surface, DENSITY).unwrap().with_balance(balance);
        for i in 0..surface.len() {
            if surface.normals()[i].dot(axis) > 0.99 {
                loads.add_traction(i, axis * s).unwrap();
            }
        }
        loads
    };
    let free = body(mesh.clone());
    let solution = free.solve(&load(&free, DVec3::X, Balance::Inertial)).unwrap();
    let a = solution.report().acceleration;
    let expected_a = s / (DENSITY * length);
    assert!((a - DVec3::X * expected_a).length() < 1e-9 * expected_a, "{a:?}");
    let ramp = |x: DVec3| DMat3::from_cols(DVec3::X * (s * (x.x + half.x) / length), DVec3::ZERO, DVec3::ZERO);
    let points = bar_interior(half);
    let balanced = points
        .iter()
        .fold(0.0f64, |e, x| e.max(max_abs(solution.stress(*x) - ramp(*x)) / s));
    // The same body placed elsewhere: turned about z by 90 degrees and moved.
    let turn = glam::DQuat::from_rotation_z(core::f64::consts::FRAC_PI_2);
    let shift = DVec3::new(3.0, -2.0, 5.0);
    let (v, t) = mesh.clone().into_parts();
    let moved_mesh = TriMesh::try_new(v.iter().map(|p| turn * *p + shift).collect(), t).unwrap();
    let moved = body(moved_mesh);
    let moved_solution = moved.solve(&load(&moved, turn * DVec3::X, Balance::Inertial)).unwrap();
    let placement = points.iter().fold(0.0f64, |e, x| {
        let rotation = DMat3::from_quat(turn);
        let back = rotation.transpose() * moved_solution.stress(turn * *x + shift) * rotation;
        e.max(max_abs(back - solution.stress(*x)) / s)
    });
    // Omitting the inertia: the unbalanced load solved as it is.
    let unbalanced = free.solve(&load(&free, DVec3::X, Balance::None));
    let omitted = match &unbalanced {
        Ok(wrong) => points
            .iter()
            .fold(0.0f64, |e, x| e.max(max_abs(wrong.stress(*x) - ramp(*x)) / s)),
        Err(_) => f64::INFINITY,
    };
    println!(
        "free cube: balanced max error {:.2}%, placement change {:.2e}, unbalanced max error {:.1}%",
        balanced * 100.0,
        placement,
        omitted * 100.0
    );
    assert!(balanced < 0.02, "{balanced}");
    assert!(placement < 1e-6, "{placement}");
    assert!(omitted > 0.1, "{omitted}");
}

/// Oracle f, equilibrium of the kernel: the traction of a point force over any closed surface
/// around it sums to -F (and to 0 when the force is outside).
#[test]
fn bem_kernel_traction_over_a_closed_surface_is_minus_the_force() {
    let kelvin = Kelvin::new(&rock());
    let force = DVec3::new(3.0, -1.0, 2.0);
    for (mesh, inside) in [
        (TriMesh::icosphere(1.0, 3), DVec3::new(0.2, -0.3, 0.1)),
        (
            grid_box(DVec3::new(0.5, 0.3, 0.4), 0.1, Grading::Uniform).unwrap(),
            DVec3::new(0.1, 0.05, -0.2),
        ),
    ] {
        for (source, expected) in [(inside, -force), (DVec3::new(3.0, 0.5, 0.0), DVec3::ZERO)] {
            let mut sum = DVec3::ZERO;
            for i in 0..mesh.triangles().len() {
                let t = mesh.triangle(i);
                let n = (t[1] - t[0]).cross(t[2] - t[0]).normalize();
                visit_adaptive(&t, source, 6.0, &mut |x, w| {
                    sum += kelvin.traction(x - source, n) * force * w
                });
            }
            assert!(
                (sum - expected).length() < 1e-6 * force.length(),
                "{sum:?} vs {expected:?}"
            );
        }
    }
}

/// Oracle f, the jump: approaching a centroid from inside, the traction of the single layer
/// tends to the operator's value 1/2 rho + p.v.; from outside to -1/2 rho + p.v. (icosphere of
/// 320 triangles, a smooth density, approached to a thousandth of a triangle).
#[test]
fn bem_single_layer_traction_jumps_by_the_density() {
    let body = body(TriMesh::icosphere(1.0, 2));
    let s = body.surface();
    let kelvin = Kelvin::new(&rock());
    let rho: Vec<DVec3> = s
        .centroids()
        .iter()
        .map(|c| DVec3::new(1.0 + c.x, c.y * c.z, 0.5 - c.z) * 1e6)
        .collect();
    let mut operator = vec![DVec3::ZERO; s.len()];
    body.apply(&rho, &mut operator);
    let traction_at = |x: DVec3, n: DVec3| {
        let mut sigma = DMat3::ZERO;
        for (j, density) in rho.iter().enumerate() {
            visit_adaptive(&s.triangle(j), x, 4.0, &mut |y, w| {
                sigma += kelvin.stress(x - y, *density * w)
            });
        }
        sigma * n
    };
    for i in [0, 17, 150, 301] {
        let (c, n) = (s.centroids()[i], s.normals()[i]);
        let delta = 1e-3 * s.diameters()[i];
        let inside = traction_at(c - n * delta, n);
        let outside = traction_at(c + n * delta, n);
        let scale = rho[i].length();
        assert!(
            (inside - outside - rho[i]).length() < 2e-3 * scale,
            "jump {:?} vs {:?}",
            inside - outside,
            rho[i]
        );
        assert!(
            (inside - operator[i]).length() < 2e-3 * scale,
            "{inside:?} vs {:?}",
            operator[i]
        );
    }
}

/// The multipole far field gives the solve the direct one's answer: a 5120-triangle sphere under
/// pressure, stress at interior points within 1e-4 of p between the two.
#[test]
fn bem_multipole_solve_matches_the_direct_solve() {
    use shatter_fracture::bem::FarField;
    use shatter_fracture::bem::fmm::FmmSettings;
    let p = 1.0e6;
    let solve = |far_field: FarField| {
        let settings = BemSettings {
            far_field,
            ..BemSettings::default()
        };
        let body = ElasticBody::try_new(TriMesh::icosphere(1.0, 4), rock(), settings).unwrap();
        assert_eq!(
            body.operator().uses_multipole(),
            matches!(far_field, FarField::Multipole(_))
        );
        let mut loads = Loads::new(body.surface(), DENSITY).unwrap();
        loads.add_pressure(body.surface(), p).unwrap();
        let solution = body.solve(&loads).unwrap();
        let iterations = solution.report().convergence.iterations;
        let stresses: Vec<DMat3> = ball_points(&[0.5, 0.9]).iter().map(|x| solution.stress(*x)).collect();
        (iterations, stresses)
    };
    let (direct_iterations, direct) = solve(FarField::Direct);
    let (fmm_iterations, fmm) = solve(FarField::Multipole(FmmSettings::default()));
    let difference = direct
        .iter()
        .zip(&fmm)
        .fold(0.0f64, |a, (d, f)| a.max(max_abs(*d - *f) / p));
    println!(
        "direct {direct_iterations} iterations, multipole {fmm_iterations}, largest difference {difference:.2e} of p"
    );
    assert!(difference < 1e-4, "{difference}");
}

/// A solve whose late products use cheaper far fields (the default) gives the stress of the solve
/// that takes every product at full accuracy: a 5120-triangle unit sphere pulled at its poles by
/// forces of p newtons spread over 0.3 m, multipole far field at 1e-5 (relaxed: order 6),
/// both to the residual tolerance of 1e-8 for the full operator; stresses at interior points
/// within 1e-7 p of each other.
#[test]
fn bem_relaxed_solve_matches_the_full_accuracy_solve() {
    use shatter_fracture::bem::FarField;
    use shatter_fracture::bem::fmm::FmmSettings;
    let p = 1.0e6;
    let solve = |relaxation: bool| {
        let settings = BemSettings {
            far_field: FarField::Multipole(FmmSettings::default()),
            relaxation,
            ..BemSettings::default()
        };
        let body = ElasticBody::try_new(TriMesh::icosphere(1.0, 4), rock(), settings).unwrap();
        assert_eq!(body.operator().relaxed_far_fields().len(), usize::from(relaxation));
        let mut loads = Loads::new(body.surface(), DENSITY).unwrap();
        for sign in [-1.0, 1.0] {
            loads
                .add_force(body.surface(), DVec3::X * sign, DVec3::X * (sign * p), 0.3)
                .unwrap();
        }
        let solution = body.solve(&loads).unwrap();
        let convergence = solution.report().convergence;
        let stresses: Vec<DMat3> = ball_points(&[0.5, 0.9]).iter().map(|x| solution.stress(*x)).collect();
        (convergence, stresses)
    };
    let (full, full_stress) = solve(false);
    let (relaxed, relaxed_stress) = solve(true);
    let difference = full_stress
        .iter()
        .zip(&relaxed_stress)
        .fold(0.0f64, |a, (f, r)| a.max(max_abs(*f - *r) / p));
    println!("full {full:?}\nrelaxed {relaxed:?}\nlargest difference {difference:.2e} of p");
    assert!(full.converged && relaxed.converged);
    assert!(relaxed.relative_residual <= 1e-8);
    assert_eq!(full.relaxed_products, 0);
    assert!(relaxed.relaxed_products > 0 && relaxed.exact_products < full.exact_products);
    assert!(difference < 1e-7, "{difference}");
}

/// Stress at many interior points by the multipole method (`Solution::stresses_at`, what the
/// vertex stresses of initiation use on large surfaces) matches the direct sum point by point:
/// a 0.4 x 0.2 x 0.2 m bar (1280 triangles) pulled at its ends, its far field forced to the
/// multipole method at 1e-6 with small leaves, every vertex read one cell inside; the largest
/// difference is under 1e-5 of the largest stress.
#[test]
fn bem_stresses_at_by_multipole_match_the_direct_sums() {
    use shatter_fracture::bem::FarField;
    use shatter_fracture::bem::fmm::FmmSettings;
    let spacing = 0.025;
    // Leaves of 8 points, so most of the sum goes through the multipole passes.
    let multipole = FmmSettings {
        leaf_size: 8,
        ..FmmSettings::for_accuracy(1e-6)
    };
    let settings = BemSettings {
        far_field: FarField::Multipole(multipole),
        ..BemSettings::default()
    };
    let mesh = grid_box(DVec3::new(0.2, 0.1, 0.1), spacing, Grading::Uniform).unwrap();
    let body = ElasticBody::try_new(mesh, rock(), settings).unwrap();
    let surface = body.surface();
    let mut loads = Loads::new(surface, DENSITY).unwrap();
    for i in 0..surface.len() {
        let n = surface.normals()[i];
        if n.x.abs() > 0.99 {
            loads.add_traction(i, n * 1.0e6).unwrap();
        }
    }
    let solution = body.solve(&loads).unwrap();
    let fast = solution.inset_vertex_stresses(spacing);
    let s = body.surface();
    let largest = fast.iter().map(|m| max_abs(*m)).fold(0.0, f64::max);
    let mut worst = 0.0f64;
    for (v, triangles) in s.vertex_triangles().iter().enumerate() {
        let normal: DVec3 = triangles
            .iter()
            .map(|&t| s.normals()[t as usize] * s.areas()[t as usize])
            .sum();
        let x = s.mesh().vertices()[v] - normal.normalize() * spacing;
        worst = worst.max(max_abs(fast[v] - solution.stress(x)));
    }
    println!(
        "{} points: largest stress {largest:.4e} Pa, largest difference {worst:.3e} Pa",
        fast.len()
    );
    assert!(largest > 0.9e6, "{largest}");
    assert!(worst < 1e-5 * largest, "{worst} of {largest}");
}

/// The preconditioner changes the iteration, not the answer: cow.obj (5804 triangles, sharp ears
/// and horns, long thin triangles) pulled apart along its length, a 0.4 x 0.2 x 0.2 m bar (1280
/// regular triangles) pulled by 1 MPa on its ends and a 1280-triangle sphere pulled at its poles,
/// each solved to 1e-8 without it, with the default (Schwarz, overlap 0.25) and, on the cow,
/// with block Jacobi. The stresses half a triangle inside every 25th centroid agree within 1e-6
/// of the largest of them; on the cow each saves at least a quarter of the iterations (measured
/// 45, 23 and 32), on the bar and the sphere, already short solves, the default costs at most 3
/// (see `bem::schwarz`).
#[test]
fn bem_preconditioned_solve_matches_the_plain_solve() {
    use shatter_collision::io::{read_mesh, weld::weld_exact};
    use shatter_fracture::bem::Preconditioner;
    let cow = weld_exact(&read_mesh(format!("{}/../../shared/meshes/cow.obj", env!("CARGO_MANIFEST_DIR"))).unwrap());
    let bar = grid_box(DVec3::new(0.2, 0.1, 0.1), 0.025, Grading::Uniform).unwrap();
    let sphere = TriMesh::icosphere(1.0, 3);
    // Each mesh's body is prepared once and given each preconditioner in turn (its operator, most
    // of the cost, is the same for all).
    let solve = |body: &ElasticBody| {
        let surface = body.surface();
        let bounds = surface.mesh().bounds().unwrap();
        let mut loads = Loads::new(surface, DENSITY).unwrap();
        for (end, sign) in [bounds.min.x, bounds.max.x].into_iter().zip([-1.0, 1.0]) {
            let point = DVec3::new(
                end,
                0.5 * (bounds.min.y + bounds.max.y),
                0.5 * (bounds.min.z + bounds.max.z),
            );
            let radius = 0.1 * (bounds.max - bounds.min).x;
            loads
                .add_force(surface, point, DVec3::X * (sign * 1.0e6), radius)
                .unwrap();
        }
        let solution = body.solve(&loads).unwrap();
        let stresses: Vec<DMat3> = (0..surface.len())
            .step_by(25)
            .map(|i| {
                let inside = surface.centroids()[i] - surface.normals()[i] * (0.5 * surface.diameters()[i]);
                solution.stress(inside)
            })
            .collect();
        (solution.report().convergence, stresses)
    };
    let block_jacobi = Preconditioner::Schwarz {
        cluster_size: 32,
        overlap: 0.0,
    };
    let cases = [
        ("cow", &cow, vec![Preconditioner::default(), block_jacobi]),
        ("bar", &bar, vec![Preconditioner::default()]),
        ("sphere", &sphere, vec![Preconditioner::default()]),
    ];
    for (name, mesh, preconditioners) in cases {
        let settings = BemSettings {
            preconditioner: Preconditioner::None,
            ..BemSettings::default()
        };
        let mut body = ElasticBody::try_new(mesh.clone(), rock(), settings).unwrap();
        let (plain, plain_stress) = solve(&body);
        for preconditioner in preconditioners {
            body.set_preconditioner(preconditioner).unwrap();
            let (preconditioned, stress) = solve(&body);
            let largest = plain_stress.iter().fold(0.0f64, |a, s| a.max(max_abs(*s)));
            let difference = plain_stress
                .iter()
                .zip(&stress)
                .fold(0.0f64, |a, (p, q)| a.max(max_abs(*p - *q) / largest));
            println!(
                "{name}, {preconditioner:?}: plain {} iterations, preconditioned {}, largest difference {difference:.2e} of the largest stress",
                plain.iterations, preconditioned.iterations
            );
            assert!(plain.converged && preconditioned.converged);
            assert!(preconditioned.relative_residual <= 1e-8);
            assert!(difference < 1e-6, "{name}: {difference}");
            if name == "cow" {
                assert!(4 * preconditioned.iterations <= 3 * plain.iterations, "{name}");
            } else {
                assert!(preconditioned.iterations <= plain.iterations + 3, "{name}");
            }
        }
    }
}
