//! Where a virtual displacement goes: the solid's quasi-static equilibrium.
//!
//! Chen 2014 displaces the colliding surface particles and reads the stress off the SPH
//! gradient with every other particle at rest, which puts all of the stress in the contact's
//! own neighbourhood: a beam hit in the middle would never crack on its far, tension side.
//! Here the rest of the solid settles where its elastic energy is least, and the SPH gradient
//! then reads the stress off that field ([`super::stress`]).
//!
//! The energy is that of the particles' own tets as linear finite elements
//! (`E = sum_t V_t (mu eps_t : eps_t + lambda/2 tr(eps_t)^2)`, small strain) on the nodes of
//! [`super::nodes`]: split along cracks, hanging nodes of split tets tied to their coarse face.
//! Minimising an SPH energy of the particles themselves was tried first and rejected: nodal
//! (particle-centred) integration has spurious modes, per-particle offsets that repeat from
//! cell to cell and that the gradient misreads as less strain, so a bar pulled to strain `e`
//! settled with its particles reading 0.4 `e` to 0.85 `e` however much hourglass control was
//! added. Linear elements reproduce a linear field exactly, so a particle's displacement (the
//! mean of its tet's four nodes, the field at the centroid) gives the SPH gradient its exact
//! value wherever the elastic solution is linear.
//!
//! Held: the prescribed particles' nodes. The body's inertia holds the rest: per connected
//! piece, the mass-weighted mean displacement and mean rotation of the nodes are zero (the
//! Lagrange multipliers of those six conditions are d'Alembert's body force of a rigid
//! acceleration, `-rho (a + alpha x r)`, so the load is balanced by the body's own inertia as
//! in a short impact). Solved by conjugate gradients on the free nodes, projected onto the
//! conditions, with a Jacobi preconditioner; element forces are summed in particle order, so
//! the bits do not depend on the thread count.

use glam::{DMat3, DVec3};
use rayon::prelude::*;

use super::material::SphMaterial;
use super::nodes::Nodes;
use super::solid::ParticleSolid;
use super::stress::linear_stress;
use crate::error::FractureError;

/// How the equilibrium is solved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EquilibriumSettings {
    /// Stop when the projected residual has fallen by this factor.
    pub tolerance: f64,
    /// Most conjugate-gradient iterations.
    pub max_iterations: usize,
}

impl Default for EquilibriumSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-8,
            max_iterations: 5000,
        }
    }
}

/// A solved equilibrium.
#[derive(Clone, Debug, PartialEq)]
pub struct Equilibrium {
    /// Displacement of every particle (the field at its centroid), m.
    pub displacement: Vec<DVec3>,
    /// Displacement of every node, m.
    pub nodal: Vec<DVec3>,
    /// Its elastic energy, J.
    pub energy: f64,
    /// Conjugate-gradient iterations taken.
    pub iterations: usize,
    /// Final projected residual relative to the first.
    pub residual: f64,
}

/// The stiffness `K` of a solid's tets over its nodes: `K u` is the gradient of `E(u)`.
pub struct ElasticOperator<'a> {
    nodes: &'a Nodes,
    /// Per tet: its nodes, the gradients of its four shape functions (1/m) and its volume.
    elements: Vec<([usize; 4], [DVec3; 4], f64)>,
    material: SphMaterial,
}

impl<'a> ElasticOperator<'a> {
    /// The operator of `solid`'s tets on `nodes` (built on it) in `material`.
    pub fn new(solid: &ParticleSolid, nodes: &'a Nodes, material: &SphMaterial) -> Self {
        let elements = solid
            .particles()
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let [a, b, c, d] = p.tet;
                let inverse = DMat3::from_cols(b - a, c - a, d - a).inverse().transpose();
                let grads = [inverse.x_axis, inverse.y_axis, inverse.z_axis];
                let first = -(grads[0] + grads[1] + grads[2]);
                (
                    std::array::from_fn(|v| nodes.of_vertex[4 * i + v]),
                    [first, grads[0], grads[1], grads[2]],
                    p.volume,
                )
            })
            .collect();
        Self {
            nodes,
            elements,
            material: *material,
        }
    }

    /// `K u` at the free and prescribed nodes (hanging nodes' shares moved to their masters),
    /// with `u`'s hanging nodes set from their masters first, N.
    pub fn apply(&self, u: &mut [DVec3]) -> Vec<DVec3> {
        self.nodes.interpolate(u);
        let forces: Vec<[DVec3; 4]> = self
            .elements
            .par_iter()
            .map(|(nodes, grads, volume)| {
                let mut h = DMat3::ZERO;
                for (n, g) in nodes.iter().zip(grads) {
                    let d = u[*n];
                    h += DMat3::from_cols(d * g.x, d * g.y, d * g.z);
                }
                let stress = linear_stress(&self.material, (h + h.transpose()) * 0.5) * *volume;
                grads.map(|g| stress * g)
            })
            .collect();
        let mut out = vec![DVec3::ZERO; u.len()];
        for ((nodes, _, _), f) in self.elements.iter().zip(&forces) {
            for (n, f) in nodes.iter().zip(f) {
                out[*n] += *f;
            }
        }
        self.nodes.gather(&mut out);
        out
    }

    /// `E(u) = 1/2 u . K u`, J.
    pub fn energy(&self, u: &mut [DVec3]) -> f64 {
        let ku = self.apply(u);
        0.5 * dot(u, &ku)
    }

    /// The diagonal of `K` per node (the Jacobi preconditioner), N/m.
    fn diagonal(&self) -> Vec<f64> {
        let stiffness = self.material.lambda() + 2.0 * self.material.mu();
        let mut diagonal = vec![0.0; self.nodes.len()];
        for (nodes, grads, volume) in &self.elements {
            for (n, g) in nodes.iter().zip(grads) {
                diagonal[*n] += stiffness * volume * g.length_squared();
            }
        }
        // A hanging node's stiffness acts on its masters with its tie weights squared (the
        // diagonal of `T^T K T`).
        for tie in &self.nodes.ties {
            let own = diagonal[tie.node];
            for (m, w) in tie.masters.iter().zip(&tie.weights) {
                diagonal[*m] += own * w * w;
            }
        }
        diagonal
    }
}

/// `a . b` summed in fixed chunks, so the bits do not depend on the thread count.
fn dot(a: &[DVec3], b: &[DVec3]) -> f64 {
    const CHUNK: usize = 1024;
    let partial: Vec<f64> = a
        .par_chunks(CHUNK)
        .zip(b.par_chunks(CHUNK))
        .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p.dot(*q)).sum())
        .collect();
    partial.iter().sum()
}

/// The rigid conditions of every connected piece over its free points, orthonormalised:
/// rows `q` (over the piece's members, zero at its prescribed points) and the values
/// `q . z` the free displacement `z` must take.
struct RigidConditions {
    pieces: Vec<Vec<usize>>,
    /// (piece, row over the piece's members, value).
    rows: Vec<(usize, Vec<DVec3>, f64)>,
}

impl RigidConditions {
    /// Gram-Schmidt over the six conditions of each piece (points `label`led into `count`
    /// pieces, weighted by `weights`, some `fixed`); a condition the free points cannot change
    /// (a piece with fewer than three free points, or none) is dropped.
    fn new(points: &[DVec3], weights: &[f64], label: &[u32], count: usize, fixed: &[Option<DVec3>]) -> Self {
        let mut pieces = vec![Vec::new(); count];
        for (i, l) in label.iter().enumerate() {
            pieces[*l as usize].push(i);
        }
        let mut rows = Vec::new();
        for (piece, members) in pieces.iter().enumerate() {
            let volume: f64 = members.iter().map(|&i| weights[i]).sum();
            if !(volume > 0.0) {
                continue;
            }
            let centre = members.iter().map(|&i| points[i] * weights[i]).sum::<DVec3>() / volume;
            let mut basis: Vec<(Vec<DVec3>, f64)> = Vec::new();
            for r in 0..6 {
                let axis = DVec3::AXES[r % 3];
                let direction = |i: usize| {
                    if r < 3 { axis } else { axis.cross(points[i] - centre) }
                };
                let mut row = vec![DVec3::ZERO; members.len()];
                let mut target = 0.0;
                for (slot, &i) in members.iter().enumerate() {
                    match fixed[i] {
                        Some(g) => target -= weights[i] * direction(i).dot(g),
                        None => row[slot] = direction(i) * weights[i],
                    }
                }
                let size = dot(&row, &row).sqrt();
                // c_r . z = sum_s (c_r . q_s) y_s + |c_r - proj| y_r: forward substitution.
                let mut known = 0.0;
                for (q, y) in &basis {
                    let c = dot(&row, q);
                    known += c * y;
                    for (x, v) in row.iter_mut().zip(q) {
                        *x -= *v * c;
                    }
                }
                let norm = dot(&row, &row).sqrt();
                if !(norm > 1e-9 * size) {
                    continue;
                }
                row.iter_mut().for_each(|x| *x /= norm);
                basis.push((row, (target - known) / norm));
            }
            rows.extend(basis.into_iter().map(|(row, y)| (piece, row, y)));
        }
        Self { pieces, rows }
    }

    /// The free displacement of least norm meeting the conditions.
    fn particular(&self, n: usize) -> Vec<DVec3> {
        let mut z = vec![DVec3::ZERO; n];
        for (piece, q, y) in &self.rows {
            for (&i, v) in self.pieces[*piece].iter().zip(q) {
                z[i] += *v * *y;
            }
        }
        z
    }

    /// Removes from `r` its part along the conditions.
    fn project(&self, r: &mut [DVec3]) {
        for (piece, q, _) in &self.rows {
            let members = &self.pieces[*piece];
            let c: f64 = members.iter().zip(q).map(|(&i, v)| r[i].dot(*v)).sum();
            for (&i, v) in members.iter().zip(q) {
                r[i] -= *v * c;
            }
        }
    }
}

/// The equilibrium of `solid` with particles `prescribed` (each with its tet's nodes, a flat
/// punch) held at their displacements (m; a node two prescribed particles share takes their
/// mean). Fails naming a non-finite displacement or a particle out of range.
pub fn solve_equilibrium(
    solid: &ParticleSolid,
    material: &SphMaterial,
    prescribed: &[(usize, DVec3)],
    settings: &EquilibriumSettings,
) -> Result<Equilibrium, FractureError> {
    let nodes = Nodes::new(solid);
    let mut sum = vec![(DVec3::ZERO, 0u32); nodes.len()];
    for &(i, g) in prescribed {
        if i >= solid.len() {
            return Err(FractureError::invalid(
                "prescribed particle",
                i,
                "an index below the particle count",
            ));
        }
        if !g.is_finite() {
            return Err(FractureError::invalid("prescribed displacement (m)", g, "finite"));
        }
        for v in 0..4 {
            let node = nodes.of_vertex[4 * i + v];
            sum[node].0 += g;
            sum[node].1 += 1;
        }
    }
    let fixed = sum
        .iter()
        .map(|(g, count)| (*count > 0).then(|| *g / f64::from(*count)))
        .collect();
    solve(solid, &nodes, material, fixed, settings)
}

/// The equilibrium of `solid` with every node at which `held` answers a displacement (m) held
/// there (a region clamped to a field). Fails naming a non-finite displacement.
pub fn solve_held(
    solid: &ParticleSolid,
    material: &SphMaterial,
    held: &dyn Fn(DVec3) -> Option<DVec3>,
    settings: &EquilibriumSettings,
) -> Result<Equilibrium, FractureError> {
    let nodes = Nodes::new(solid);
    let fixed: Vec<Option<DVec3>> = nodes.positions.iter().map(|x| held(*x)).collect();
    if let Some(bad) = fixed.iter().flatten().find(|g| !g.is_finite()) {
        return Err(FractureError::invalid("held displacement (m)", bad, "finite"));
    }
    solve(solid, &nodes, material, fixed, settings)
}

/// The equilibrium with nodes `fixed` held (hanging nodes follow their masters instead).
fn solve(
    solid: &ParticleSolid,
    nodes: &Nodes,
    material: &SphMaterial,
    mut fixed: Vec<Option<DVec3>>,
    settings: &EquilibriumSettings,
) -> Result<Equilibrium, FractureError> {
    let n = nodes.len();
    let mut hanging = vec![false; n];
    for tie in &nodes.ties {
        hanging[tie.node] = true;
        fixed[tie.node] = None;
    }
    let (label, count) = solid.components();
    // The conditions weigh each node by the exact (consistent) mass its shape function
    // carries: `int N_n dV = V/4` and `int N_n x dV = V/20 (x_n + 4 c_t)` per tet, hanging
    // nodes' shares moved to their masters. With them, a linear field meets the conditions
    // exactly when it does in the continuum (lumped weights would make a linear field look
    // slightly rotated on a mesh whose tets are not symmetric).
    let mut node_label = vec![0u32; n];
    let mut weights = vec![0.0; n];
    let mut moments = vec![DVec3::ZERO; n];
    for (i, p) in solid.particles().iter().enumerate() {
        for v in 0..4 {
            let node = nodes.of_vertex[4 * i + v];
            node_label[node] = label[i];
            weights[node] += 0.25 * p.volume;
            moments[node] += (p.tet[v] + p.centroid * 4.0) * (p.volume / 20.0);
        }
    }
    for tie in &nodes.ties {
        let (w, m) = (
            std::mem::take(&mut weights[tie.node]),
            std::mem::take(&mut moments[tie.node]),
        );
        for (master, beta) in tie.masters.iter().zip(&tie.weights) {
            weights[*master] += w * beta;
            moments[*master] += m * *beta;
        }
    }
    let points: Vec<DVec3> = moments
        .iter()
        .zip(&weights)
        .zip(&nodes.positions)
        .map(|((m, w), x)| if *w > 0.0 { *m / *w } else { *x })
        .collect();
    let operator = ElasticOperator::new(solid, nodes, material);
    let conditions = RigidConditions::new(&points, &weights, &node_label, count, &fixed);
    let mut u = conditions.particular(n);
    for (x, g) in u.iter_mut().zip(&fixed) {
        if let Some(g) = g {
            *x = *g;
        }
    }
    let held = |v: &mut [DVec3]| {
        for ((x, g), hangs) in v.iter_mut().zip(&fixed).zip(&hanging) {
            if g.is_some() || *hangs {
                *x = DVec3::ZERO;
            }
        }
    };
    let inverse_diagonal: Vec<f64> = operator
        .diagonal()
        .iter()
        .map(|d| if *d > 0.0 { 1.0 / d } else { 0.0 })
        .collect();
    let precondition = |r: &[DVec3]| {
        let mut y: Vec<DVec3> = r.iter().zip(&inverse_diagonal).map(|(x, d)| *x * *d).collect();
        held(&mut y);
        conditions.project(&mut y);
        y
    };
    let mut r: Vec<DVec3> = operator.apply(&mut u).iter().map(|x| -*x).collect();
    held(&mut r);
    conditions.project(&mut r);
    let first = dot(&r, &r).sqrt();
    let mut iterations = 0;
    let mut residual = 0.0;
    if first > 0.0 {
        let mut y = precondition(&r);
        let mut p = y.clone();
        let mut ry = dot(&r, &y);
        while iterations < settings.max_iterations {
            let mut q = operator.apply(&mut p);
            held(&mut q);
            let pq = dot(&p, &q);
            if !(pq > 0.0) {
                break;
            }
            let step = ry / pq;
            for ((x, pi), (ri, qi)) in u.iter_mut().zip(&p).zip(r.iter_mut().zip(&q)) {
                *x += *pi * step;
                *ri -= *qi * step;
            }
            conditions.project(&mut r);
            iterations += 1;
            residual = dot(&r, &r).sqrt() / first;
            if residual <= settings.tolerance {
                break;
            }
            y = precondition(&r);
            let ry_next = dot(&r, &y);
            let beta = ry_next / ry;
            ry = ry_next;
            for (pi, yi) in p.iter_mut().zip(&y) {
                *pi = *yi + *pi * beta;
            }
        }
    }
    let energy = operator.energy(&mut u);
    if !energy.is_finite() {
        return Err(FractureError::input("the SPH equilibrium diverged (non-finite energy)"));
    }
    let displacement = (0..solid.len())
        .map(|i| (0..4).map(|v| u[nodes.of_vertex[4 * i + v]]).sum::<DVec3>() * 0.25)
        .collect();
    Ok(Equilibrium {
        displacement,
        nodal: u,
        energy,
        iterations,
        residual,
    })
}
