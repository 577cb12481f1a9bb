//! One fracture event of a boundary-element body (Zhu 2015 Algorithm 1 after the rigid step,
//! with Algorithms 2 and 3): solve the stress under the step's loads, start cracks where the
//! Rankine criterion holds, advance their fronts with the stress solved again on the cracked
//! surface, cut through where fronts have reached the far surface, and hand back the pieces.
//!
//! The loads are given as a function of the surface, not as per-triangle values: the surface is
//! remeshed as cracks grow, and every solve asks for the loads on the surface it solves.
//!
//! A crack whose front has stopped within [`EventSettings::ligament`] of the far surface all
//! along has its last ligament broken before the cut through: its front is driven on to that
//! surface, in its plane, at the speed of a front at the propagation threshold, its ends held. A
//! ligament under two elements thick is below what the stress solve resolves: the stress in it,
//! read half an edge ahead of the front, is that of the loading zone (a crack in bending stops in
//! the compression under the load, a splitting crack under the loaded faces), not of the ligament
//! that carries the whole load across the crack, whose net section is far above the strength.
//! A crack closed into a loop round the body (`loops`) has no far surface to be driven to: the
//! ligament it encircles is cut as it stands once it is no wider than that.
//!
//! In a wall one or two elements thick, one element inside is the mid-plane or the far face,
//! where the wall's bending does not show. Reading a quarter of the wall inside instead was
//! tried (2026-11): a 0.3 x 0.02 x 0.06 m plate two elements thick in three-point bending then
//! started its crack on its tension face, but a dropped 0.5 x 0.1 x 0.3 m slab two elements thick
//! started cracks at its edges and corners, where the piecewise-constant stress is still wrong
//! half an element in. Thin walls need four elements through their thickness (or linear
//! elements) before their initiation can be trusted.
//!
//! The pieces: where the surface's own cuts split it, its closed pieces; where they leave it
//! whole, the pieces its cracks cut the body into, found on a grid of its material
//! ([`super::separate()`]), so that cracks spanning the body, meeting one another, or stopped
//! within [`EventSettings::ligament`] of a surface break it even where a cut was refused.
//!
//! The stress at the surface vertices is read one target edge inside (the mitigation for sharp
//! edges of `bem::solution`), the stress at a front half an edge ahead of it
//! ([`super::propagate::FrontSettings::probe`]). Whether and how often the stress is solved
//! again on the cracked surface is a setting ([`EventSettings::substeps_per_solve`]).

use std::time::Instant;

use glam::DVec3;
use shatter_collision::TriMesh;
use shatter_collision::mass_properties::VolumeIntegrals;

use super::initiate::{Rankine, candidates, initiate};
use super::loops::cut_loop;
use super::mesh::CrackMesh;
use super::separate::{Separation, separate};
use super::through::{cut_through_locally, ligament_within};
use super::tip::TipField;
use super::track::{TrackSettings, any_active, substep};
use super::widen::widened_surface;
use crate::bem::{BemSettings, Elastic, ElasticBody, Loads, Surface, principal_stress};
use crate::error::FractureError;

/// The loads of one event on a surface (tractions and body force), built for whatever surface
/// the solve runs on.
pub type LoadsOn<'a> = &'a dyn Fn(&Surface) -> Result<Loads, FractureError>;

/// How a fracture event runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventSettings {
    /// The material.
    pub material: Elastic,
    /// Its two Rankine thresholds (Pa).
    pub rankine: Rankine,
    /// Crack tracking: target edge length, crack thickness, front motion, remeshing.
    pub track: TrackSettings,
    /// Most sub-steps of front motion in one event.
    pub max_substeps: usize,
    /// Sub-steps between stress solves on the cracked surface (1: before every sub-step, as
    /// Zhu does; 0: never, the fronts move in the uncracked body's stress). A solve that does
    /// not converge falls back on the uncracked body's stress for its sub-steps.
    ///
    /// The default is 0: a solve per sub-step costs a whole solve each (a 704-triangle bar in
    /// three-point bending: 0.95 s of solves for 6 sub-steps, against 0.12 s for the one solve),
    /// and the crack surfaces it grows are curved more often, which the cut through refuses more
    /// often (`through`). On the surface with its slots widened ([`super::widen`]) the solves
    /// converge in 9 to 23 iterations (0.4 x 0.4 x 0.2 m block split by a crack, 0.05 m edges,
    /// 2 mm crack); on the surface as tracked they stagnated.
    pub substeps_per_solve: usize,
    /// Thickest ligament (m) that breaks once a crack has stopped with its whole front that
    /// close to the far surface (see the module docs); zero: none does.
    pub ligament: f64,
    /// Width (m) the stress solve on the cracked surface sees each slot widened to
    /// ([`super::widen`]); the default, one target edge, keeps the operator well conditioned.
    pub analysis_width: f64,
    /// Whether fronts moving in the uncracked body's stress add the field of their own tips:
    /// the larger of the stress intensity's near-tip stress and the ligament's net-section
    /// stress, from the crack-face tractions by superposition ([`super::tip`]). Without it a
    /// front arrests wherever the uncracked stress falls below the propagation threshold. Solves
    /// on the cracked surface ([`EventSettings::substeps_per_solve`]) carry the tips' field
    /// themselves and do not add it. Default: off (the `tip` module docs give what it was
    /// measured to change, and why it is not the default).
    pub crack_tips: bool,
    /// The boundary-element solve.
    pub bem: BemSettings,
    /// Least distance between two cracks started in one event (m): a crack relieves the stress
    /// around it, which the single solve before initiation does not see, so of candidates closer
    /// than this only the strongest opens.
    pub start_spacing: f64,
    /// Distance between the samples (m) of the grid the pieces are found on when the surface's
    /// own cuts leave it whole ([`super::separate()`]); the pieces' surfaces are resolved to it.
    pub piece_spacing: f64,
    /// Smallest piece (m^3) that grid finds; smaller regions join a neighbour.
    pub smallest_piece: f64,
}

impl EventSettings {
    /// Settings for `material` with thresholds `rankine`, crack thickness `thickness` (m) on a
    /// surface whose edges are about `target_edge` (m): at most 60 sub-steps in the uncracked
    /// body's stress, crack starts at least ten edges apart, default quadrature and stopping.
    pub fn new(material: Elastic, rankine: Rankine, target_edge: f64, thickness: f64) -> Self {
        Self {
            material,
            rankine,
            track: TrackSettings::new(target_edge, rankine.propagate, thickness),
            max_substeps: 60,
            substeps_per_solve: 0,
            analysis_width: 1.0 * target_edge,
            ligament: 2.0 * target_edge,
            crack_tips: false,
            bem: BemSettings::default(),
            start_spacing: 10.0 * target_edge,
            piece_spacing: 0.5 * target_edge,
            smallest_piece: (2.0 * target_edge).powi(3),
        }
    }

    /// How the pieces are found on a grid ([`super::separate()`]): [`Self::piece_spacing`], the
    /// ligament that breaks, [`Self::smallest_piece`], the target edge.
    pub fn separation(&self) -> Separation {
        Separation {
            spacing: self.piece_spacing,
            ligament: self.ligament,
            smallest: self.smallest_piece,
            edge: self.track.front.target_edge,
        }
    }
}

impl EventSettings {
    /// Checks the lengths and counts the event needs, naming the first bad one: target edge,
    /// crack thickness and start spacing finite and positive (m); ligament and analysis width
    /// finite and not negative (m).
    pub fn validate(&self) -> Result<(), FractureError> {
        for (what, value) in [
            ("target edge length (m)", self.track.front.target_edge),
            ("crack thickness (m)", self.track.thickness),
            ("crack start spacing (m)", self.start_spacing),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(FractureError::invalid(what, value, "a positive finite length"));
            }
        }
        for (what, value) in [
            ("ligament that breaks (m)", self.ligament),
            ("analysis width (m)", self.analysis_width),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(FractureError::invalid(what, value, "a finite length >= 0"));
            }
        }
        self.separation().validate()
    }
}

/// What an event did, and what it cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventReport {
    /// Triangles of the body's surface: the boundary elements of its first solve.
    pub triangles: usize,
    /// Stress solves that converged, with the BiCGSTAB iterations of each (the first is the
    /// uncracked body's).
    pub iterations: Vec<usize>,
    /// Solves on the cracked surface that did not converge, or whose surface the solver
    /// refused (their sub-steps used the uncracked body's stress).
    pub unconverged: usize,
    /// Crack lines opened.
    pub opened: usize,
    /// Sub-steps of front motion.
    pub substeps: usize,
    /// Sub-steps that drove fronts through ligaments thinner than
    /// [`EventSettings::ligament`] (see the module docs).
    pub finish_substeps: usize,
    /// Lines cut through.
    pub cut_through: usize,
    /// Closed pieces (solids, each with its cavities) the body is in at the end.
    pub pieces: usize,
    /// Whether those pieces were found on the grid of [`super::separate()`] (the surface's own
    /// cuts left it whole while its cracks cut the body apart), not cut from the surface.
    pub pieces_on_grid: bool,
    /// Each piece's volume (m^3), in the order of the pieces.
    pub piece_volumes: Vec<f64>,
    /// Seconds spent building operators and solving.
    pub solve_seconds: f64,
    /// Seconds spent evaluating stress at the surface vertices (for initiation).
    pub stress_seconds: f64,
    /// Seconds spent tracking cracks (sub-steps and cuts, stress at the fronts included).
    pub track_seconds: f64,
}

/// What a fracture event leaves.
#[derive(Clone, Debug)]
pub struct EventOutcome {
    /// The cracked surface (material frame, m).
    pub crack: CrackMesh,
    /// The closed pieces the body is in, each with its volume integrals (material frame): one
    /// when it stays whole (see [`EventReport::pieces_on_grid`] for where they came from).
    pub pieces: Vec<(TriMesh, VolumeIntegrals)>,
    /// What the event did, and what it cost.
    pub report: EventReport,
}

/// Runs one fracture event on the closed surface `mesh` (material frame, m) under `loads` (see
/// the module docs). Returns the cracked surface, the pieces and the report; with no vertex
/// above the initiation threshold the surface comes back uncracked, in one piece. Fails on bad
/// settings (named), a surface the solver refuses or a validation fault (when validation is
/// on).
pub fn fracture_event(
    mesh: &TriMesh,
    loads: LoadsOn<'_>,
    settings: &EventSettings,
) -> Result<EventOutcome, FractureError> {
    settings.validate()?;
    let mut report = EventReport {
        triangles: mesh.triangles().len(),
        ..EventReport::default()
    };
    let mut crack = CrackMesh::try_new(mesh)?;
    let edge = settings.track.front.target_edge;
    let started = Instant::now();
    let body = ElasticBody::try_new(mesh.clone(), settings.material, settings.bem)?;
    let solution = body.solve(&loads(body.surface())?)?;
    report.iterations.push(solution.report().convergence.iterations);
    let solved = Instant::now();
    let stresses = solution.inset_vertex_stresses(edge);
    report.stress_seconds = solved.elapsed().as_secs_f64();
    report.solve_seconds = (solved - started).as_secs_f64();
    let rankine = settings.rankine;
    let mut found = candidates(&crack, &stresses, &|_| rankine.initiate)?;
    // A crack relieves the stress around it: weaker starts near a stronger one are dropped.
    let mut kept: Vec<DVec3> = Vec::new();
    found.retain(|c| {
        let x = mesh.vertices()[c.vertex as usize];
        let far = kept.iter().all(|k| k.distance(x) >= settings.start_spacing);
        if far {
            kept.push(x);
        }
        far
    });
    let thickness = settings.track.thickness;
    let bounds = settings.track.front.bounds;
    report.opened = initiate(&mut crack, &found, thickness, 0.5 * edge, bounds).len();
    let tracking = Instant::now();
    let mut solve_time = 0.0;
    let every = settings.substeps_per_solve;
    let mut tips_read: Option<TipField> = None;
    while any_active(&crack) && report.substeps < settings.max_substeps {
        // The stress of these sub-steps: solved again on the cracked surface when asked for
        // and it converges, else the uncracked body's.
        let at = Instant::now();
        let cracked = if every > 0 {
            let surface = widened_surface(&crack, settings.analysis_width, settings.track.thickness)?;
            let body = ElasticBody::try_new(surface, settings.material, settings.bem).ok();
            report.unconverged += usize::from(body.is_none());
            body
        } else {
            None
        };
        let resolved = match &cracked {
            Some(body) => match body.solve(&loads(body.surface())?) {
                Ok(solved) => Some(solved),
                Err(_) => {
                    report.unconverged += 1;
                    None
                }
            },
            None => None,
        };
        solve_time += at.elapsed().as_secs_f64();
        let current = resolved.as_ref().unwrap_or(&solution);
        if let Some(solved) = &resolved {
            report.iterations.push(solved.report().convergence.iterations);
        }
        let batch = if every > 0 { every } else { settings.max_substeps };
        for _ in 0..batch {
            if !any_active(&crack) || report.substeps >= settings.max_substeps {
                break;
            }
            // Fronts in the uncracked body's stress add their own tips' field (`tip`); a solve on
            // the cracked surface carries it already.
            // Without a solve of their own the sub-steps read the uncracked stress throughout, so
            // the last sub-step's field is read again, reusing the points that stood still.
            let tips = if resolved.is_none() && settings.crack_tips {
                let sigma0 = |x: DVec3| solution.stress(x);
                let field = match &tips_read {
                    Some(last) => last.update(&crack, &sigma0),
                    None => TipField::of(&crack, &sigma0, 0.5 * edge, 2.0 * edge),
                };
                Some(&*tips_read.insert(field))
            } else {
                None
            };
            let stress = |x: DVec3| {
                let sigma = match &tips {
                    Some(tips) => current.stress(x) + tips.added(x),
                    None => current.stress(x),
                };
                principal_stress(sigma).map_or((0.0, DVec3::X), |p| (p.values[0], p.directions[0]))
            };
            substep(&mut crack, &stress, &settings.track).map_err(|fault| FractureError::input(fault.to_string()))?;
            report.substeps += 1;
        }
    }
    if !any_active(&crack) {
        report.finish_substeps = finish_ligaments(&mut crack, settings)?;
    }
    for line in 0..crack.lines().len() {
        // A loop has no far surface to be driven to: its ligament is cut as it stands once it
        // is no wider than the thickest ligament that breaks.
        let cut = if crack.lines()[line].closed {
            cut_loop(&mut crack, line, settings.ligament, thickness, bounds)
        } else {
            // Sides read from the rings: a crack that broke out may be through the body
            // elsewhere already.
            cut_through_locally(&mut crack, line, edge, thickness, bounds)
        };
        if cut.is_ok() {
            report.cut_through += 1;
        }
    }
    let pieces = event_pieces(mesh, &crack, settings, &mut report)?;
    report.track_seconds = tracking.elapsed().as_secs_f64() - solve_time;
    report.solve_seconds += solve_time;
    Ok(EventOutcome { crack, pieces, report })
}

/// The pieces at the end of an event: the surface's own closed pieces when its cuts split it,
/// else, when some crack has been opened, the pieces the cracks cut the body (bounded by
/// `mesh` before it cracked) into on a grid (`separate`: cracks that span the body, or meet
/// round a piece, and ligaments thin enough to break). Fills in the report's piece count and
/// where they came from.
fn event_pieces(
    mesh: &TriMesh,
    crack: &CrackMesh,
    settings: &EventSettings,
    report: &mut EventReport,
) -> Result<Vec<(TriMesh, VolumeIntegrals)>, FractureError> {
    let cut = super::pieces::pieces(crack)?;
    let pieces = if cut.len() < 2 && !crack.lines().is_empty() {
        let found = separate(mesh, crack, &settings.separation())?;
        report.pieces_on_grid = found.len() >= 2;
        if report.pieces_on_grid { found } else { cut }
    } else {
        cut
    };
    report.pieces = pieces.len();
    report.piece_volumes = pieces.iter().map(|(_, integrals)| integrals.volume).collect();
    Ok(pieces)
}

/// Most sub-steps a ligament's finish may take beyond the ligament's thickness over the
/// sub-step length: remeshing may hold a node back a sub-step or two.
const FINISH_SLACK: usize = 4;

/// Breaks the thin ligaments (see the module docs): every crack stopped with its whole front
/// within [`EventSettings::ligament`] of the far surface has its interior front nodes driven on,
/// at the propagation threshold's speed and in its plane, its ends held. Returns the sub-steps
/// taken.
fn finish_ligaments(crack: &mut CrackMesh, settings: &EventSettings) -> Result<usize, FractureError> {
    if settings.ligament <= 0.0 {
        return Ok(0);
    }
    let finishing: Vec<usize> = (0..crack.lines().len())
        .filter(|&l| ligament_within(crack, l, settings.ligament))
        .collect();
    if finishing.is_empty() {
        return Ok(0);
    }
    let mut held = Vec::with_capacity(finishing.len());
    for &l in &finishing {
        let line = &mut crack.lines_mut()[l];
        held.push(line.blocked);
        line.blocked = [true; 2];
        let nodes = line.nodes.clone();
        for &f in &nodes[1..nodes.len() - 1] {
            crack.set_active(f, true);
            crack.unstall(f);
        }
    }
    let mut track = settings.track;
    track.front.planar = true;
    let threshold = track.front.threshold;
    let forced = |_: DVec3| (threshold, DVec3::X);
    let most = (settings.ligament / (track.front.speed * track.front.target_edge)).ceil() as usize + FINISH_SLACK;
    let mut taken = 0;
    while any_active(crack) && taken < most {
        substep(crack, &forced, &track).map_err(|fault| FractureError::input(fault.to_string()))?;
        taken += 1;
    }
    // Nodes still held back stop where they are.
    for &l in &finishing {
        let nodes = crack.lines()[l].nodes.clone();
        for f in nodes {
            crack.set_active(f, false);
        }
    }
    for (&l, blocked) in finishing.iter().zip(held) {
        crack.lines_mut()[l].blocked = blocked;
    }
    Ok(taken)
}
