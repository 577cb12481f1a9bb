//! The stress a crack's own tip adds ahead of its front, for fronts that move in the uncracked
//! body's stress ([`super::EventSettings::crack_tips`]).
//!
//! Zhu 2015 solves the stress again on the cracked surface before every sub-step, so the
//! concentration at the crack tip drives the front. Without that solve (the default,
//! [`super::EventSettings::substeps_per_solve`] = 0) a front reads only the uncracked body's
//! stress and arrests where that stress falls below the propagation threshold, however long the
//! crack behind it. Linear elastic fracture mechanics gives the missing part without a solve.
//!
//! **Superposition (Bueckner's principle).** The cracked body under its loads is the uncracked
//! body under them plus the cracked body with the tractions `-sigma0 n` on its crack faces. Only
//! the second problem has the singular tip field, and what it sheds onto the material ahead is
//! fixed by the uncracked opening stress `p = n . sigma0 n` over the crack (`n` the crack
//! plane's normal; at a front node, the summed normal of its wall triangles, so a curved crack
//! is read across its own faces near the front).
//!
//! **Stress intensity.** Each front node is taken as the tip of an edge crack of a half-plane
//! along its own path back to the mouth: depth `a` from the node back across the crack's cut
//! region ([`super::region::CutRegion::depth_behind`]) to the surface, and
//!
//! `K_I = 2 / sqrt(pi a) * integral_0^a p(x) F(x / a) / sqrt(1 - (x / a)^2) dx`,
//! `F(u) = 1.3 - 0.3 u^(5/4)`,
//!
//! with `x` measured from the mouth (Tada, Paris and Irwin, *The Stress Analysis of Cracks
//! Handbook*, the edge crack of a semi-infinite plate under crack-face loads; uniform `p` gives
//! `1.1215 p sqrt(pi a)`). With `x = a sin(theta)` the integrand is smooth and eight Gauss points
//! integrate it. This is exact in form for the straight front of a crack through a wall (a plate
//! or a shell: the plane problem); for a thumbnail crack whose front curves round to the surface
//! it overestimates (a semicircular surface crack has 0.66 to 0.73 `p sqrt(pi a)` at its deepest
//! point, Newman and Raju 1981). A closed loop has no cut region: its depth is the distance from
//! the node to the nearest vertex of its mouth. An end of a line, on the surface, runs on along
//! it: its crack reaches back along the chord to where the crack opened.
//!
//! **Net section.** The half-plane leaves out the rise of `K_I` as the ligament ahead narrows,
//! which in a bent bar outgrows everything else: the opening stress near a deep crack's tip is
//! compressive, so `K_I` from the half-plane falls to zero there, while the ligament has to carry
//! all the moment the crack faces shed. So the ligament `b` ahead of each interior node (a ray to
//! the surface) is read as a beam carrying the shed force `F = integral p dx` and moment `M`
//! about its middle: `F / b + 6 M / b^2` at the tip. The larger of the two estimates is used,
//! as the two-criteria approach of engineering fracture assessment takes the worse of fracture
//! and net-section collapse (Dowling and Townley 1975). Without it, a bar in three-point bending
//! stopped its crack a few centimetres under the load; with it, the bar splits
//! (`tests/bem_crack.rs`). No ligament is read ahead of an end: the surface there curves away
//! or turns at a ridge.
//!
//! **Tip field.** Directly ahead of the tip the opening stress rises by `K_I / sqrt(2 pi r)` at
//! distance `r` (Irwin's near-tip field at angle zero). [`TipField::added`] adds the larger of
//! that and the net-section stress to the uncracked stress as a multiple of `n n^T`, where `r` is
//! the distance from the nearest front point to the point read (the front's probe, half an edge
//! ahead), never taken under that probe distance: an end of a line reads its stress half an edge
//! inside the surface, within a fraction of an element of its own front's nodes, where
//! `1 / sqrt(r)` grew without bound (the ends of cracks through a 12 mm plate read 7 to 480 MPa
//! while the front below them read under 0.5 MPa half an edge ahead, and the mouths ran across
//! the plate over shallow fronts that arrested; measured). Nearer than that the
//! piecewise-constant stress resolves nothing anyway. Read at the probe, the Rankine propagation
//! threshold `sigma_p` then acts as a fracture toughness `K_c = (sigma_p - p) sqrt(2 pi r)`: a crack under a uniform opening stress
//! runs once `1.12 sqrt(a / 2 r)` reaches `sigma_p / p - 1`, the unstable growth of a brittle
//! crack under a load that does not fall, while a crack running out of the loaded region sees
//! `K_I` fall and arrests. Negative values (faces pressed together) add nothing.
//!
//! **Measured, and why it is off by default.** The pressed block of `tests/bem_crack.rs` with
//! its propagation threshold at 80 % of the peak stress: the crack arrests over 0.035 m^2 of the
//! 0.08 m^2 section in the uncracked stress, and cuts the block in two with the tips' field. On
//! the scenes of Zhu's figures it does not yet change what breaks: `scenes/bem_spot.json` (a
//! solid body) still cracks without breaking, with less crack (0.32 and 0.19 m^2 of crack over
//! its two events against 0.50 and 0.38 m^2 without; its fronts stop where the mesh checks refuse
//! their moves, not where the stress falls, and the faster fronts are refused sooner); a dropped
//! 24 cm plate 1.2 cm thick, meshed at 4 mm (three elements through it), grows 4.9e-3 m^2 of
//! crack against 2.2e-3 m^2, its rim crack running 18 cm instead of 8 cm, until it meets another
//! crack; a 2 cm hollow sphere at 6 mm grows about as much crack either way. What keeps those
//! bodies whole is the tracking (cracks that meet stop, ends refused at ridges, fronts short of
//! the far surface), not the stress: with break-outs, and the ends of cracks through a wall
//! extending into the wedge ahead of a front that leans forward (`extend`), the plate and the
//! shell of `examples/bem_plate_and_shell.rs` break into large pieces with the tips' field.

use glam::{DMat3, DVec3};
use hashbrown::HashMap;
use rayon::prelude::*;

use super::mesh::CrackMesh;
use super::propagate::{first_hit, heading};
use super::region::CutRegion;
use crate::bem::quadrature::GAUSS8;

/// How far ahead of a front node, in crack depths (or probe distances, if more), its ligament
/// is looked for. Under a uniform opening `p` a ligament ten depths long adds `0.43 p` at the
/// tip, less than the near-tip term `0.79 p sqrt(a / r)` read at the probe `r <= a`: a longer
/// ligament never decides, and the ray, which checks the triangles in its box, stays short.
const LIGAMENT_READ: f64 = 10.0;

/// The uncracked body's Cauchy stress (Pa) at a material point (m).
pub type UncrackedStress<'a> = &'a (dyn Fn(DVec3) -> DMat3 + Sync);

/// What the crack faces shed at one front point (an interior node of a line, or an end).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TipNode {
    /// The point's position (m, material frame).
    pub position: DVec3,
    /// Its crack plane's unit normal.
    pub normal: DVec3,
    /// The crack's depth behind it (m).
    pub depth: f64,
    /// The uncut material ahead of it to the surface (m), where it was read.
    pub ligament: Option<f64>,
    /// Mode I stress intensity (Pa m^1/2), not below zero.
    pub intensity: f64,
    /// The ligament's added net-section stress at the tip (Pa), not below zero; zero without a
    /// ligament.
    pub net_section: f64,
}

/// A front point as read off the crack, before its stress is integrated.
struct FrontPoint {
    /// Where it is (m).
    position: DVec3,
    /// Where its crack is read back from (m): the point itself, or just inside an end.
    from: DVec3,
    /// Unit direction it runs in, within the crack plane.
    ahead: DVec3,
    /// The crack plane's unit normal.
    normal: DVec3,
    /// The crack's depth behind it (m).
    depth: f64,
    /// The uncut material ahead of it (m), where read.
    ligament: Option<f64>,
}

impl FrontPoint {
    /// The bits of everything its shed stress is integrated from (`from`, `ahead`, `normal`,
    /// `depth`, `ligament`): points with equal keys shed the same under one stress field.
    fn key(&self) -> PointKey {
        let [a, b, c] = self.from.to_array().map(f64::to_bits);
        let [d, e, f] = self.ahead.to_array().map(f64::to_bits);
        let [g, h, i] = self.normal.to_array().map(f64::to_bits);
        let ligament = self.ligament.map_or(u64::MAX, f64::to_bits);
        [a, b, c, d, e, f, g, h, i, self.depth.to_bits(), ligament]
    }
}

/// A front point's key ([`FrontPoint::key`]).
type PointKey = [u64; 11];

/// The stress intensities along every crack front of a surface, read once per sub-step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TipField {
    nodes: Vec<TipNode>,
    /// Each node's [`PointKey`], for [`TipField::update`].
    keys: Vec<PointKey>,
    /// Farthest distance (m) from a front node at which its tip field is added.
    reach: f64,
    /// Least distance (m) the near-tip field is read at: the fronts' probe distance.
    nearest: f64,
}

impl TipField {
    /// What the crack faces shed at every front point of every line of `crack` that is not cut
    /// through, from the uncracked stress `sigma0` (see the module docs): its interior nodes, and
    /// the ends of an open line, read from `inset` (m) inside them; the tip field is added up to
    /// `reach` (m) from a point. Costs, per front point, eight stress evaluations and a ray
    /// through the triangles near it (at most ten crack depths ahead).
    pub fn of(crack: &CrackMesh, sigma0: UncrackedStress<'_>, inset: f64, reach: f64) -> Self {
        Self::read(crack, sigma0, inset, reach, None)
    }

    /// The field of [`TipField::of`] read again on `crack` after a sub-step, with this field's
    /// inset and reach, under the same uncracked stress `sigma0`: a front point read exactly as
    /// this field read it (bit for bit the same place, direction, normal, depth and ligament)
    /// keeps its intensity and net-section stress, and only the others are integrated. The
    /// result is the same as reading it afresh. A point's direction and normal follow its line
    /// neighbours and the wall triangles round it, so what is reused is the stretches of front
    /// that have stopped, away from the remeshing round the running parts: on the hollow sphere
    /// of `examples/bem_plate_and_shell.rs`, whose fronts grow to about 500 points, reading
    /// them all took three quarters of its tracking time, and this halves that time.
    pub fn update(&self, crack: &CrackMesh, sigma0: UncrackedStress<'_>) -> Self {
        Self::read(crack, sigma0, self.nearest, self.reach, Some(self))
    }

    /// [`TipField::of`], reusing what `previous` integrated where a point's key matches.
    fn read(
        crack: &CrackMesh,
        sigma0: UncrackedStress<'_>,
        inset: f64,
        reach: f64,
        previous: Option<&TipField>,
    ) -> Self {
        let mut points: Vec<FrontPoint> = Vec::new();
        for (l, line) in crack.lines().iter().enumerate() {
            if line.through || line.nodes.len() < 3 {
                continue;
            }
            let normal = line.plane_normal;
            let region = CutRegion::of_line(crack, l);
            let mouth = if region.is_none() {
                mouth_vertices(crack, l)
            } else {
                Vec::new()
            };
            let k = line.nodes.len();
            let interior = if line.closed { 0..k } else { 1..k - 1 };
            for i in interior {
                let f = line.nodes[i];
                let x = crack.positions()[f as usize];
                let normal = local_normal(crack, f, normal);
                // Ahead: the way the front moves on (`propagate`), within the local plane.
                let (p, q) = (line.nodes[(i + k - 1) % k], line.nodes[(i + 1) % k]);
                let Some(ahead) = heading(crack, f, p, q, normal, region.as_ref()) else {
                    continue;
                };
                let depth = match &region {
                    Some(region) => region.depth_behind(x, ahead),
                    None => mouth.iter().map(|m| m.distance(x)).min_by(f64::total_cmp),
                };
                if let Some(depth) = depth.filter(|d| d.is_finite() && *d > 0.0) {
                    points.push(FrontPoint {
                        position: x,
                        from: x,
                        ahead,
                        normal,
                        depth,
                        ligament: first_hit(crack, f, x, ahead, LIGAMENT_READ * depth.max(inset)).map(|(d, _)| d),
                    });
                }
            }
            // The ends run on along the surface: their crack reaches back to where it started.
            // Ahead of an end the surface curves away or turns at a ridge, so no ligament is
            // read there.
            if line.closed {
                continue;
            }
            for v in [line.nodes[0], line.nodes[line.nodes.len() - 1]] {
                let x = crack.positions()[v as usize];
                let inward = crack.surface_normal(v) * inset;
                let from = x - inward;
                let chord = from - (line.plane_point - inward);
                let chord = chord - normal * normal.dot(chord);
                let depth = chord.length();
                if depth.is_finite() && depth > 0.0 {
                    points.push(FrontPoint {
                        position: x,
                        from,
                        ahead: chord / depth,
                        normal,
                        depth,
                        ligament: None,
                    });
                }
            }
        }
        let known: HashMap<PointKey, Shed> = previous.map_or_else(HashMap::new, |field| {
            field
                .keys
                .iter()
                .zip(&field.nodes)
                .map(|(key, node)| {
                    let shed = Shed {
                        intensity: node.intensity,
                        net_section: node.net_section,
                    };
                    (*key, shed)
                })
                .collect()
        });
        let keys: Vec<PointKey> = points.iter().map(FrontPoint::key).collect();
        let nodes: Vec<TipNode> = points
            .par_iter()
            .zip(&keys)
            .map(|(p, key)| {
                let shed = known.get(key).copied().unwrap_or_else(|| {
                    let opening = |x: DVec3| p.normal.dot(sigma0(x) * p.normal);
                    shed_by_edge_crack(&opening, p.from, p.ahead, p.depth, p.ligament)
                });
                TipNode {
                    position: p.position,
                    normal: p.normal,
                    depth: p.depth,
                    ligament: p.ligament,
                    intensity: shed.intensity.max(0.0),
                    net_section: shed.net_section.max(0.0),
                }
            })
            .collect();
        Self {
            nodes,
            keys,
            reach,
            nearest: inset,
        }
    }

    /// The front points read.
    pub fn nodes(&self) -> &[TipNode] {
        &self.nodes
    }

    /// The stress (Pa) the nearest front's tip adds at `x` (m): the larger of `K_I / sqrt(2 pi r)`
    /// and the ligament's net-section stress, times `n n^T`, for the front node nearest `x`, at
    /// distance `r` from it (never less than the inset the field was built with, see the module
    /// docs); zero beyond the reach or with no front.
    pub fn added(&self, x: DVec3) -> DMat3 {
        let nearest = self
            .nodes
            .iter()
            .map(|node| (node.position.distance_squared(x), node))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        match nearest {
            Some((r2, node)) if r2 <= self.reach * self.reach && r2 > 0.0 => {
                let r = r2.sqrt().max(self.nearest);
                let rise = (node.intensity / (core::f64::consts::TAU * r).sqrt()).max(node.net_section);
                let n = node.normal;
                DMat3::from_cols(n * n.x, n * n.y, n * n.z) * rise
            }
            _ => DMat3::ZERO,
        }
    }
}

/// What the faces of a crack shed onto the material ahead of its tip (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shed {
    /// Mode I stress intensity (Pa m^1/2), Tada's edge-crack weight function.
    pub intensity: f64,
    /// The net-section stress the ligament adds at the tip (Pa): the force and moment of the
    /// crack-face tractions carried by the ligament as a beam, `F / b + 6 M / b^2`; zero without
    /// a ligament.
    pub net_section: f64,
}

/// What an edge crack of depth `depth` (m) behind `tip`, against unit `ahead`, sheds when its
/// faces carried the opening stress `opening` (Pa) of the uncracked body, with `ligament` (m) of
/// uncut material ahead of the tip when known: eight Gauss points in `x = a sin(theta)` serve the
/// weight-function integral and the force and moment alike.
pub fn shed_by_edge_crack(
    opening: &dyn Fn(DVec3) -> f64,
    tip: DVec3,
    ahead: DVec3,
    depth: f64,
    ligament: Option<f64>,
) -> Shed {
    let half_pi = core::f64::consts::FRAC_PI_2;
    let b = ligament.filter(|b| b.is_finite() && *b > 0.0);
    let (mut weighted, mut force, mut moment) = (0.0, 0.0, 0.0);
    for &(s, w) in &GAUSS8 {
        let theta = half_pi * s;
        let u = theta.sin();
        // x = a u from the mouth: a (1 - u) behind the tip.
        let behind = depth * (1.0 - u);
        let p = opening(tip - ahead * behind);
        weighted += p * (1.3 - 0.3 * u.powf(1.25)) * w;
        // dx = a cos(theta) d(theta); the lever arm about the ligament's middle.
        let dx = depth * theta.cos() * w;
        force += p * dx;
        moment += p * dx * (behind + 0.5 * b.unwrap_or(0.0));
    }
    let intensity = 2.0 * (depth / core::f64::consts::PI).sqrt() * half_pi * weighted;
    let net_section = b.map_or(0.0, |b| half_pi * (force / b + 6.0 * moment / (b * b)));
    Shed { intensity, net_section }
}

/// The crack plane's unit normal at front node `f`: the area vectors of its wall triangles,
/// each turned to the side of the line's `plane_normal` and summed (a curved crack turns away
/// from the plane it opened across); the line's normal when they cancel.
pub(crate) fn local_normal(crack: &CrackMesh, f: u32, plane_normal: DVec3) -> DVec3 {
    let sum: DVec3 = crack
        .incident(f)
        .iter()
        .filter(|&&t| crack.is_wall(t))
        .map(|&t| {
            let [a, b, c] = crack.corners(t);
            let area = (b - a).cross(c - a);
            if area.dot(plane_normal) < 0.0 { -area } else { area }
        })
        .sum();
    let n = sum.normalize_or_zero();
    if n == DVec3::ZERO { plane_normal } else { n }
}

/// The positions (m) of line `l`'s mouth: its walls' vertices on the body's surface.
fn mouth_vertices(crack: &CrackMesh, l: usize) -> Vec<DVec3> {
    let mut vertices: Vec<u32> = crack
        .live_triangles()
        .filter(|&t| crack.wall_of(t) == Some(l))
        .flat_map(|t| crack.triangle_slots()[t as usize])
        .filter(|&v| crack.incident(v).iter().any(|&t| !crack.is_wall(t)))
        .collect();
    vertices.sort_unstable();
    vertices.dedup();
    vertices.iter().map(|&v| crack.positions()[v as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crack_tip_edge_crack_under_uniform_opening_has_tadas_intensity() {
        // Uniform p: K = 1.1215 p sqrt(pi a) (Tada's handbook, within its stated 1 %).
        for depth in [0.01, 0.1, 2.0] {
            let k = shed_by_edge_crack(&|_| 3.0e6, DVec3::ZERO, DVec3::X, depth, None).intensity;
            let exact = 1.1215 * 3.0e6 * (core::f64::consts::PI * depth).sqrt();
            assert!((k / exact - 1.0).abs() < 0.005, "a = {depth}: {k} against {exact}");
        }
    }

    #[test]
    fn crack_tip_edge_crack_weights_the_stress_near_its_tip_most() {
        // An opening rising linearly from the mouth to the tip, and one falling: the weight
        // 1 / sqrt(1 - (x / a)^2) makes the rising one count for more, the two add up to the
        // uniform one (the integral is linear in p), and each matches a fine integration of
        // Tada's formula.
        let (a, p) = (0.2, 1.0e6);
        let rising = |x: DVec3| p * (1.0 + x.x / a);
        let falling = |x: DVec3| p * (-x.x / a);
        let k_rising = shed_by_edge_crack(&rising, DVec3::ZERO, DVec3::X, a, None).intensity;
        let k_falling = shed_by_edge_crack(&falling, DVec3::ZERO, DVec3::X, a, None).intensity;
        let k_all = shed_by_edge_crack(&|_| p, DVec3::ZERO, DVec3::X, a, None).intensity;
        assert!(k_rising > 1.5 * k_falling, "{k_rising} against {k_falling}");
        assert!(((k_rising + k_falling) / k_all - 1.0).abs() < 1e-12);
        // 2 sqrt(a / pi) * integral over theta of p(a sin theta) F(sin theta), midpoint rule.
        let fine = |share: &dyn Fn(f64) -> f64| {
            let n = 200_000;
            let h = core::f64::consts::FRAC_PI_2 / n as f64;
            let sum: f64 = (0..n)
                .map(|i| {
                    let u = ((i as f64 + 0.5) * h).sin();
                    share(u) * (1.3 - 0.3 * u.powf(1.25))
                })
                .sum();
            2.0 * (a / core::f64::consts::PI).sqrt() * p * sum * h
        };
        let exact_rising = fine(&|u| u);
        // u^(5/4) is not smooth at the mouth (theta = 0): eight points are within about 5e-6.
        assert!(
            (k_rising / exact_rising - 1.0).abs() < 3e-5,
            "{k_rising} against {exact_rising}"
        );
        let exact_falling = fine(&|u| 1.0 - u);
        assert!(
            (k_falling / exact_falling - 1.0).abs() < 3e-5,
            "{k_falling} against {exact_falling}"
        );
    }

    #[test]
    fn crack_tip_ligament_carries_the_shed_force_and_moment_as_a_beam() {
        // Uniform p over a crack of depth a with a ligament b ahead: the ligament carries the
        // force p a at an eccentricity (a + b) / 2 from its middle, so at the tip it adds
        // p a / b + 6 p a (a + b) / (2 b^2). Without a ligament nothing is added.
        let (p, a, b) = (2.0e6, 0.3, 0.1);
        let shed = shed_by_edge_crack(&|_| p, DVec3::ZERO, DVec3::X, a, Some(b));
        let exact = p * a / b + 3.0 * p * a * (a + b) / (b * b);
        assert!(
            (shed.net_section / exact - 1.0).abs() < 1e-9,
            "{} against {exact}",
            shed.net_section
        );
        assert_eq!(
            shed_by_edge_crack(&|_| p, DVec3::ZERO, DVec3::X, a, None).net_section,
            0.0
        );
        // Its intensity does not depend on the ligament.
        assert_eq!(
            shed.intensity,
            shed_by_edge_crack(&|_| p, DVec3::ZERO, DVec3::X, a, None).intensity
        );
    }

    #[test]
    fn crack_tip_field_adds_irwins_opening_stress_near_the_front_only() {
        let field = TipField {
            nodes: vec![TipNode {
                position: DVec3::ZERO,
                normal: DVec3::Y,
                depth: 0.1,
                ligament: None,
                intensity: 2.0e6,
                net_section: 0.0,
            }],
            keys: vec![[0; 11]],
            reach: 0.05,
            nearest: 0.005,
        };
        let irwin = |r: f64| 2.0e6 / (core::f64::consts::TAU * r).sqrt();
        let r: f64 = 0.01;
        let added = field.added(DVec3::new(r, 0.0, 0.0));
        assert!((added.y_axis.y / irwin(r) - 1.0).abs() < 1e-12);
        // Nearer than the probe distance the field is that at the probe distance.
        let near = field.added(DVec3::new(0.001, 0.0, 0.0));
        assert!((near.y_axis.y / irwin(0.005) - 1.0).abs() < 1e-12);
        assert_eq!(added.x_axis.x, 0.0);
        assert_eq!(field.added(DVec3::new(0.06, 0.0, 0.0)), DMat3::ZERO);
        assert_eq!(TipField::default().added(DVec3::X), DMat3::ZERO);
    }
}
