//! The solved single layer and what can be read from it: displacement and Cauchy stress at any
//! interior point, and at the surface's vertices.
//!
//! Interior points sum every triangle's integral of the Kelvin kernels (the adaptive rule near
//! the point, the centroid far from it) and add the particular solution. At the surface the
//! stress integral is hypersingular, so surface stress is recovered instead from what the surface
//! knows exactly (the boundary-element "traction plus tangential strain" recovery):
//!
//! - the traction `t = sigma n` on each triangle is the boundary condition the solve met;
//! - the tangential strain `eps_ab` (a, b along the triangle) comes from the displacement at the
//!   triangle's vertices (the single layer is continuous across the surface, and its value at a
//!   vertex is a weakly singular integral: Duffy-transformed on the triangles that share it);
//! - Hooke's law gives the rest: `eps_nn = (t_n - lambda (eps_aa + eps_bb)) / (lambda + 2 mu)`,
//!   then `sigma_ab = 2 mu eps_ab + lambda tr(eps) delta_ab`.
//!
//! At a vertex the same recovery runs in the vertex's own frame, from the area-weighted means of
//! its triangles' normals, tractions and surface gradients ([`Solution::vertex_stresses`]). On
//! smooth parts this converges at first order; at sharp edges and corners the single-layer
//! density is singular and the recovered stress does not converge (measured on a cube pulled on
//! two faces, 3072 triangles: median error 11 percent at vertices on the faces, 34 percent at
//! edges and corners, up to 116 percent): cracks must not start from it there. Evaluating one
//! triangle inside ([`Solution::inset_vertex_stresses`]) is the mitigation this module
//! recommends (median 4.6 percent on the same cube); higher-order elements or meshes graded
//! towards the edges are the real cure.
//!
//! Bending converges slowly, and slender bodies amplify it. Under the pure-bending tractions
//! `t = (sigma_0 y n_x, 0, 0)` the exact stress is `sigma_xx = sigma_0 y` everywhere. Measured
//! (interior points, 2026-11): on a unit sphere the error is 14, 7.5 and 4.0 percent at 320, 1280
//! and 5120 triangles (first order, twice the constant of uniform pressure); on a
//! 0.2 x 0.2 x 0.2 m cube with 0.05 / 0.025 m cells 18 / 11 percent at the centre; on a
//! 1.0 x 0.2 x 0.2 m bar (704 / 2816 triangles) the mid-span stress is 6 / 14 percent of the
//! exact value, decaying from the loaded ends. The surface's piecewise-constant density carries
//! the bending moment along the bar through nearly rigid rotation modes of the lateral surface,
//! where collocation errors of a percent of the traction cancel the whole moment. Quadrature
//! is not the limit (a near-field radius of 10 diameters instead of 4 and a finer adaptive rule
//! change the sphere's figures by under half a percent). Stress in slender parts under bending is therefore not to be trusted at these
//! resolutions; linear elements are the cure.

use glam::{DMat3, DVec3};
use hashbrown::HashMap;
use rayon::prelude::*;

use super::body::{ElasticBody, SolveReport};
use super::fmm::Fmm;
use super::kernel::outer;
use super::particular::Particular;
use super::point_sums::PointForces;
use super::quadrature::{visit_adaptive, visit_duffy};

/// The density of a solved load case and its evaluation.
#[derive(Clone, Debug)]
pub struct Solution<'a> {
    body: &'a ElasticBody,
    density: Vec<DVec3>,
    particular: Particular,
    /// Traction of the homogeneous part on each triangle (the loads less the particular
    /// solution's), Pa.
    homogeneous_traction: Vec<DVec3>,
    report: SolveReport,
}

impl<'a> Solution<'a> {
    pub(super) fn new(
        body: &'a ElasticBody,
        density: Vec<DVec3>,
        particular: Particular,
        homogeneous_traction: Vec<DVec3>,
        report: SolveReport,
    ) -> Self {
        Self {
            body,
            density,
            particular,
            homogeneous_traction,
            report,
        }
    }

    /// The single-layer density per triangle, Pa.
    pub fn density(&self) -> &[DVec3] {
        &self.density
    }

    /// What the solve found.
    pub fn report(&self) -> &SolveReport {
        &self.report
    }

    /// The particular solution of the body force.
    pub fn particular(&self) -> &Particular {
        &self.particular
    }

    /// Calls `f(point, weight, density)` over every triangle's quadrature for a target `x`: the
    /// adaptive rule on triangles within the near-field ratio, the centroid elsewhere, Duffy on
    /// the triangles listed in `touching` (which have `x` at their vertex).
    fn visit(&self, x: DVec3, touching: &[u32], f: &mut impl FnMut(DVec3, f64, DVec3)) {
        let s = self.body.surface();
        let accuracy = self.body.settings().accuracy;
        for (j, (&c, &d)) in s.centroids().iter().zip(s.diameters()).enumerate() {
            let rho = self.density[j];
            if touching.contains(&(j as u32)) {
                let t = s.triangle(j);
                // Rotate the corners so the singular vertex comes first.
                let k = (0..3).min_by(|a, b| (t[*a] - x).length_squared().total_cmp(&(t[*b] - x).length_squared()));
                let k = k.unwrap_or(0);
                let rotated = [t[k], t[(k + 1) % 3], t[(k + 2) % 3]];
                visit_duffy(&rotated, &mut |y, w| f(y, w, rho));
            } else if (x - c).length_squared() < (accuracy.near_ratio * d).powi(2) {
                visit_adaptive(&s.triangle(j), x, accuracy.evaluation_ratio, &mut |y, w| f(y, w, rho));
            } else {
                f(c, s.areas()[j], rho);
            }
        }
    }

    /// The displacement at `x` (m), a point inside the body or on its surface away from vertices.
    pub fn displacement(&self, x: DVec3) -> DVec3 {
        self.homogeneous_displacement(x, &[]) + self.particular.displacement(x)
    }

    fn homogeneous_displacement(&self, x: DVec3, touching: &[u32]) -> DVec3 {
        let kelvin = self.body.operator().kelvin();
        let mut u = DVec3::ZERO;
        self.visit(x, touching, &mut |y, w, rho| {
            u += kelvin.displacement(x - y) * (rho * w)
        });
        u
    }

    /// The Cauchy stress at `x` (Pa), a point strictly inside the body.
    ///
    /// The quadrature points are gathered as point forces and summed four at a time
    /// ([`Kelvin::stress_sum`](super::kernel::Kelvin::stress_sum)).
    pub fn stress(&self, x: DVec3) -> DMat3 {
        let kelvin = self.body.operator().kelvin();
        let mut forces = PointForces::new();
        self.visit(x, &[], &mut |y, w, rho| forces.push(y, rho * w));
        kelvin.stress_sum(x, &forces) + self.particular.stress(x)
    }

    /// The displacement (m) at every vertex of the mesh.
    pub fn vertex_displacements(&self) -> Vec<DVec3> {
        let s = self.body.surface();
        let vertices = s.mesh().vertices();
        (0..vertices.len())
            .into_par_iter()
            .map(|v| {
                let x = vertices[v];
                self.homogeneous_displacement(x, &s.vertex_triangles()[v]) + self.particular.displacement(x)
            })
            .collect()
    }

    /// The in-plane gradient of the homogeneous displacement on every triangle, as the 3x3
    /// surface gradient `d_e1 e1^T + d_e2 e2^T` (`e1, e2` along the triangle), from the vertex
    /// displacements `vertex_displacements`.
    fn surface_gradients(&self, vertex_displacements: &[DVec3]) -> Vec<DMat3> {
        let s = self.body.surface();
        (0..s.len())
            .into_par_iter()
            .map(|i| {
                let t = s.triangle(i);
                let tri = s.mesh().triangles()[i];
                // Only the homogeneous part is recovered; the particular stress is exact.
                let u: Vec<DVec3> = (0..3)
                    .map(|k| vertex_displacements[tri[k] as usize] - self.particular.displacement(t[k]))
                    .collect();
                let n = s.normals()[i];
                let e1 = (t[1] - t[0]).normalize();
                let e2 = n.cross(e1);
                let (p1, p2) = (t[1] - t[0], t[2] - t[0]);
                let (x1, y1, x2, y2) = (p1.dot(e1), p1.dot(e2), p2.dot(e1), p2.dot(e2));
                let det = x1 * y2 - x2 * y1;
                let (du1, du2) = (u[1] - u[0], u[2] - u[0]);
                let d_e1 = (du1 * y2 - du2 * y1) / det;
                let d_e2 = (du2 * x1 - du1 * x2) / det;
                outer(d_e1, e1) + outer(d_e2, e2)
            })
            .collect()
    }

    /// Hooke's law completed from a surface gradient `grad` (3x3, zero along `n`) and the
    /// traction `traction` on the plane of unit normal `n`: the stress whose traction is
    /// `traction` and whose tangential strain is `grad`'s (see the module docs), Pa.
    fn recover(&self, grad: DMat3, traction: DVec3, n: DVec3) -> DMat3 {
        let m = self.body.material();
        let (mu, lambda) = (m.shear(), m.lambda());
        let e1 = n.any_orthonormal_vector();
        let e2 = n.cross(e1);
        let (d1, d2) = (grad * e1, grad * e2);
        let (e11, e22) = (d1.dot(e1), d2.dot(e2));
        let e12 = 0.5 * (d1.dot(e2) + d2.dot(e1));
        let (t1, t2, tn) = (traction.dot(e1), traction.dot(e2), traction.dot(n));
        let enn = (tn - lambda * (e11 + e22)) / (lambda + 2.0 * mu);
        let trace = e11 + e22 + enn;
        let s11 = 2.0 * mu * e11 + lambda * trace;
        let s22 = 2.0 * mu * e22 + lambda * trace;
        let s12 = 2.0 * mu * e12;
        let frame = DMat3::from_cols(e1, e2, n);
        let local = DMat3::from_cols(
            DVec3::new(s11, s12, t1),
            DVec3::new(s12, s22, t2),
            DVec3::new(t1, t2, tn),
        );
        frame * local * frame.transpose()
    }

    /// The Cauchy stress (Pa) of each triangle recovered from its traction and tangential strain
    /// (see the module docs), from the vertex displacements `vertex_displacements`.
    pub fn triangle_stresses(&self, vertex_displacements: &[DVec3]) -> Vec<DMat3> {
        let s = self.body.surface();
        self.surface_gradients(vertex_displacements)
            .into_iter()
            .enumerate()
            .map(|(i, grad)| {
                self.recover(grad, self.homogeneous_traction[i], s.normals()[i])
                    + self.particular.stress(s.centroids()[i])
            })
            .collect()
    }

    /// The Cauchy stress (Pa) at every vertex, recovered in the vertex's own frame: the normal
    /// is the area-weighted mean of its triangles' normals, the traction and the surface gradient
    /// are their area-weighted means (the gradient projected onto the vertex's tangent plane), and
    /// Hooke's law completes the tensor. Recovering per triangle and averaging the tensors instead
    /// would mix each facet's normal stress into its neighbours' tangential directions, an error of
    /// the squared angle between facets (5 percent of the hoop stress on a 320-triangle sphere).
    /// See the module docs for where this is and is not accurate.
    pub fn vertex_stresses(&self) -> Vec<DMat3> {
        let s = self.body.surface();
        let vertices = s.mesh().vertices();
        let gradients = self.surface_gradients(&self.vertex_displacements());
        s.vertex_triangles()
            .par_iter()
            .enumerate()
            .map(|(v, triangles)| {
                let (mut normal, mut traction, mut grad, mut area) = (DVec3::ZERO, DVec3::ZERO, DMat3::ZERO, 0.0);
                for &t in triangles {
                    let (t, a) = (t as usize, s.areas()[t as usize]);
                    normal += s.normals()[t] * a;
                    traction += self.homogeneous_traction[t] * a;
                    grad += gradients[t] * a;
                    area += a;
                }
                let n = normal.normalize();
                let tangent = DMat3::IDENTITY - outer(n, n);
                self.recover(grad * (1.0 / area) * tangent, traction / area, n) + self.particular.stress(vertices[v])
            })
            .collect()
    }

    /// The Cauchy stress (Pa) at every vertex evaluated `depth` (m, > 0) inside the body along
    /// the vertex's inward normal (the area-weighted mean of its triangles' normals): the
    /// mitigation for sharp edges and corners, where the recovered surface stress does not
    /// converge. A depth of about one triangle keeps the quadrature accurate and the point close
    /// enough to stand for the surface. Points that would leave a thin body are the caller's to
    /// avoid: in a wall one or two elements thick the point lands near the other face or the
    /// mid-plane (see `bem::crack::event`). Summed as [`Solution::stresses_at`] sums (measured at
    /// 9856 triangles on two threads: 0.14 s by the multipole method).
    pub fn inset_vertex_stresses(&self, depth: f64) -> Vec<DMat3> {
        let s = self.body.surface();
        let vertices = s.mesh().vertices();
        let points: Vec<DVec3> = s
            .vertex_triangles()
            .iter()
            .enumerate()
            .map(|(v, triangles)| {
                let normal: DVec3 = triangles
                    .iter()
                    .map(|&t| s.normals()[t as usize] * s.areas()[t as usize])
                    .sum();
                vertices[v] - normal.normalize() * depth
            })
            .collect();
        self.stresses_at(&points)
    }

    /// The Cauchy stress (Pa) at each of `points`, strictly inside the body: [`Solution::stress`]
    /// at each, summed by the multipole method when the body's far field uses it (every
    /// triangle's centroid term from the multipole sum, the triangles within the near-field
    /// ratio of a point integrated accurately in its place), so the cost grows as the points
    /// plus the triangles, not as their product.
    pub fn stresses_at(&self, points: &[DVec3]) -> Vec<DMat3> {
        let s = self.body.surface();
        let Some(settings) = self.body.settings().far_field.multipole(s.len()) else {
            return points.par_iter().map(|&x| self.stress(x)).collect();
        };
        let kelvin = self.body.operator().kelvin();
        let n = s.len();
        let mut sites = s.centroids().to_vec();
        sites.extend_from_slice(points);
        let mut charges: Vec<DVec3> = (0..n).map(|j| self.density[j] * s.areas()[j]).collect();
        charges.resize(sites.len(), DVec3::ZERO);
        let far = Fmm::new(*kelvin, &sites, settings).evaluate_stress(&charges, n);
        // Near triangles: their accurate integral in place of the centroid term, found through a
        // grid of cells as wide as the largest near-field reach.
        let ratio = self.body.settings().accuracy;
        let reach: Vec<f64> = s.diameters().iter().map(|d| d * ratio.near_ratio).collect();
        let cell = reach.iter().fold(f64::MIN_POSITIVE, |a, &r| a.max(r));
        let key = |p: DVec3| {
            let k = (p / cell).floor();
            (k.x as i64, k.y as i64, k.z as i64)
        };
        let mut grid: HashMap<(i64, i64, i64), Vec<u32>> = HashMap::new();
        for (j, &c) in s.centroids().iter().enumerate() {
            grid.entry(key(c)).or_default().push(j as u32);
        }
        points
            .par_iter()
            .zip(&far[n..])
            .map_init(PointForces::new, |near, (&x, &far)| {
                // The near triangles' quadrature points as forces, less their centroid terms,
                // summed in one vectorised pass per coordinate plane.
                near.clear();
                let (cx, cy, cz) = key(x);
                for dx in -1..=1 {
                    for dy in -1..=1 {
                        for dz in -1..=1 {
                            let Some(cell) = grid.get(&(cx + dx, cy + dy, cz + dz)) else {
                                continue;
                            };
                            for &j in cell {
                                let j = j as usize;
                                let c = s.centroids()[j];
                                if (x - c).length_squared() >= reach[j] * reach[j] {
                                    continue;
                                }
                                let rho = self.density[j];
                                near.push(c, -rho * s.areas()[j]);
                                visit_adaptive(&s.triangle(j), x, ratio.evaluation_ratio, &mut |y, w| {
                                    near.push(y, rho * w)
                                });
                            }
                        }
                    }
                }
                far + kelvin.stress_sum(x, near) + self.particular.stress(x)
            })
            .collect()
    }
}
