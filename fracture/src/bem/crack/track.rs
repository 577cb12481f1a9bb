//! One crack-tracking sub-step (Zhu 2015 Algorithm 3): move the fronts, extend the ends where
//! the Rankine or smoothness criterion holds, then remesh around the cracks; optionally validate
//! the whole surface after it.

use super::breakout::{break_out, reached_run};
use super::check::try_move;
use super::extend::{End, extend_end};
use super::improve::{RemeshCounts, RemeshSettings, improve, near_cracks};
use super::loops::{close_loop, ends_meet};
use super::mesh::CrackMesh;
use super::open::Refusal;
use super::propagate::{FrontSettings, FrontStep, FrontStress, MAX_STALLS, advance_fronts};
use super::validate::{MeshCheck, MeshFault, validate};

/// How cracks are tracked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackSettings {
    /// How fronts move.
    pub front: FrontSettings,
    /// How the surface around cracks is remeshed.
    pub remesh: RemeshSettings,
    /// Crack thickness (m): the mouth width of every slot.
    pub thickness: f64,
    /// An end extends when its front neighbour is farther than this many target edge lengths
    /// from it, whatever the stress (the smoothness criterion).
    pub smoothness: f64,
    /// Run the full validator after every sub-step (tests turn it on).
    pub validate: bool,
    /// Break runs of front nodes out through the surface they reached while the rest of the
    /// front runs on (`breakout`), so a crack through a thin wall runs on through it; off, a
    /// line is cut through only once its whole front has reached the far surface.
    pub break_out: bool,
}

impl TrackSettings {
    /// Settings for target edge length `target_edge` (m), propagation threshold `threshold`
    /// (Pa) and crack thickness `thickness` (m): speed 0.5, a gap of a quarter edge, stress read
    /// half an edge ahead of the front, walls bending by a quarter of the thickness in
    /// remeshing, ends extending past two edges, no break-outs, no validation.
    pub fn new(target_edge: f64, threshold: f64, thickness: f64) -> Self {
        let remesh = RemeshSettings {
            wall_tolerance: 0.25 * thickness,
            ..RemeshSettings::for_edge(target_edge)
        };
        Self {
            front: FrontSettings {
                target_edge,
                speed: 0.5,
                threshold,
                gap: 0.25 * target_edge,
                bounds: remesh.bounds,
                probe: 0.5 * target_edge,
                planar: false,
            },
            remesh,
            thickness,
            smoothness: 2.0,
            validate: false,
            break_out: false,
        }
    }
}

/// What a sub-step did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubStep {
    /// The fronts' motion.
    pub front: FrontStep,
    /// Ends extended.
    pub extended: usize,
    /// Lines whose two ends met and closed them into loops.
    pub closed: usize,
    /// Runs of front nodes that broke out through the surface they reached (`breakout`).
    pub broken_out: usize,
    /// Ends that ran into a different crack and stopped there.
    pub crossings: usize,
    /// Lines stopped because their walls had not grown by a twentieth of an element for
    /// [`MAX_STALLS`] sub-steps in a row (see `stop_stalled_lines`).
    pub stopped: usize,
    /// Remeshing counts.
    pub remesh: RemeshCounts,
    /// The validator's measurements, when validation is on.
    pub check: Option<MeshCheck>,
}

/// Whether any crack node is still active.
pub fn any_active(mesh: &CrackMesh) -> bool {
    mesh.lines()
        .iter()
        .flat_map(|l| l.nodes.iter())
        .any(|&v| mesh.is_active(v))
}

/// Runs one sub-step; fails with the first fault when validation is on and finds one.
pub fn substep(mesh: &mut CrackMesh, stress: FrontStress<'_>, settings: &TrackSettings) -> Result<SubStep, MeshFault> {
    let front = advance_fronts(mesh, stress, &settings.front);
    let Extensions {
        closed,
        crossings,
        ends,
    } = extend_ends(mesh, stress, settings);
    let extended = ends.len();
    let mut region = near_cracks(mesh, 2.0 * settings.front.target_edge);
    let remesh = improve(mesh, &settings.remesh, &mut region);
    // The front node an extension put below an end keeps running even when remeshing merged it
    // into a stopped neighbour: the end's new line neighbour is active. (Making every merge keep
    // a running node changes which node survives everywhere along the fronts; measured, the
    // dropped glass slab of scenes/bem_slab.json then no longer cut through.)
    for (l, end) in ends {
        let nodes = &mesh.lines()[l].nodes;
        if mesh.lines()[l].closed || nodes.len() < 3 {
            continue;
        }
        let next = match end {
            End::Start => nodes[1],
            End::Finish => nodes[nodes.len() - 2],
        };
        mesh.set_active(next, true);
    }
    let broken_out = if settings.break_out {
        break_out_runs(mesh, settings)
    } else {
        0
    };
    if settings.front.planar {
        square_walls(mesh, settings);
    }
    let stopped = stop_stalled_lines(mesh, settings.front.target_edge);
    let check = if settings.validate {
        Some(validate(mesh, settings.front.bounds)?)
    } else {
        None
    };
    Ok(SubStep {
        front,
        extended,
        closed,
        broken_out,
        crossings,
        stopped,
        remesh,
        check,
    })
}

/// Breaks every run of front nodes that has reached the surface out through it (see
/// `breakout`), the lines split off included; returns the runs broken out.
fn break_out_runs(mesh: &mut CrackMesh, settings: &TrackSettings) -> usize {
    // Nodes that reach a surface stop a quarter of an edge short of it (`gap`); a front within
    // half an edge of it all along a run has reached it there.
    let reach = BREAKOUT_REACH * settings.front.target_edge;
    let mut broken = 0;
    let mut l = 0;
    while l < mesh.lines().len() {
        while let Some(run) = reached_run(mesh, l, reach) {
            if break_out(mesh, l, run, reach, settings.thickness, settings.front.bounds).is_ok() {
                broken += 1;
            }
        }
        l += 1;
    }
    broken
}

/// How near the surface (in target edges) a run of front nodes must have stopped to break out.
const BREAKOUT_REACH: f64 = 0.5;

/// What the ends of the lines did in one sub-step.
struct Extensions {
    closed: usize,
    crossings: usize,
    /// The ends extended: line and end.
    ends: Vec<(usize, End)>,
}

/// Extends every open, unblocked end whose stress (read half an edge inside) reaches the
/// propagation threshold, or whose front neighbour has run ahead by more than the smoothness
/// limit; an end that would extend while the line's other end is its neighbour closes the line
/// into a loop instead (`loops`). An end whose extension or closing is refused is marked
/// blocked.
fn extend_ends(mesh: &mut CrackMesh, stress: FrontStress<'_>, settings: &TrackSettings) -> Extensions {
    let (mut closed, mut met) = (0, 0);
    let mut ends = Vec::new();
    let edge = settings.front.target_edge;
    for l in 0..mesh.lines().len() {
        for (slot, end) in [(0, End::Start), (1, End::Finish)] {
            let line = &mesh.lines()[l];
            if line.closed || line.blocked[slot] || line.nodes.len() < 2 {
                continue;
            }
            let n = line.nodes.len();
            let (a, n1) = if slot == 0 {
                (line.nodes[0], line.nodes[1])
            } else {
                (line.nodes[n - 1], line.nodes[n - 2])
            };
            let x = mesh.positions()[a as usize];
            let (sigma, direction) = stress(x - mesh.surface_normal(a) * (0.5 * edge));
            let ahead = mesh.positions()[n1 as usize].distance(x) > settings.smoothness * edge;
            if !(sigma >= settings.front.threshold || ahead) {
                continue;
            }
            let e = if direction.dot(line.plane_normal) < 0.0 {
                -direction
            } else {
                direction
            };
            let e = if sigma >= settings.front.threshold && !settings.front.planar {
                e
            } else {
                line.plane_normal
            };
            if ends_meet(mesh, l, e) {
                match close_loop(mesh, l, end, e, settings.thickness, 0.5 * edge, settings.front.bounds) {
                    Ok(()) => {
                        closed += 1;
                        break;
                    }
                    Err(_) => {
                        mesh.lines_mut()[l].blocked[slot] = true;
                        continue;
                    }
                }
            }
            match extend_end(mesh, l, end, e, settings.thickness, 0.5 * edge, settings.front.bounds) {
                Ok(_) => ends.push((l, end)),
                Err(Refusal::MetCrack(other)) => {
                    // An end that runs into another crack stops there, and the rest of both
                    // cracks runs on: where they meet they cut the body together (the
                    // separation bridges the gap between them, `barrier`). Zhu's passive
                    // strategy stopped both whole cracks, which left the pieces they were
                    // about to cut off attached (measured on the Fig. 16 plate). A line meeting
                    // itself elsewhere than at its other end (which closes it, above) stops
                    // that end the same way.
                    mesh.lines_mut()[l].blocked[slot] = true;
                    if other != l {
                        met += 1;
                    }
                }
                Err(_) => mesh.lines_mut()[l].blocked[slot] = true,
            }
        }
    }
    Extensions {
        closed,
        crossings: met,
        ends,
    }
}

/// Stops every line that still has active nodes but whose walls have not grown for
/// [`MAX_STALLS`] sub-steps in a row by a twentieth of a target element (`edge` squared, m^2)
/// past their largest area: its nodes move without advancing (nodes moved on and pulled back by
/// the remeshing, say), and only a crack that grows is still running. Returns the lines stopped.
pub(crate) fn stop_stalled_lines(mesh: &mut CrackMesh, edge: f64) -> usize {
    let mut stopped = 0;
    for l in 0..mesh.lines().len() {
        let line = &mesh.lines()[l];
        if line.through || !line.nodes.iter().any(|&v| mesh.is_active(v)) {
            continue;
        }
        let area = mesh.wall_area(l);
        if mesh.note_growth(l, area, 0.05 * edge * edge) >= MAX_STALLS {
            stop_line(mesh, l);
            stopped += 1;
        }
    }
    stopped
}

/// Stops every node of line `l` and blocks both its ends.
fn stop_line(mesh: &mut CrackMesh, l: usize) {
    for v in mesh.lines()[l].nodes.clone() {
        mesh.set_active(v, false);
    }
    mesh.lines_mut()[l].blocked = [true; 2];
}

/// Keeps the walls of planar cracks a thickness apart: every wall vertex off the crack lines and
/// off the body's surface moves onto its side's offset plane, half the thickness from the crack
/// plane, when the move keeps the mesh valid. The slot is then as wide everywhere as at its
/// mouth, narrowing only over the last row of triangles at the front, so its two walls never
/// interleave where they meet (which would leave no room to cut through, `through`).
fn square_walls(mesh: &mut CrackMesh, settings: &TrackSettings) {
    let half = 0.5 * settings.thickness;
    for l in 0..mesh.lines().len() {
        let (e, origin) = (mesh.lines()[l].plane_normal, mesh.lines()[l].plane_point);
        let mut vertices: Vec<u32> = mesh
            .live_triangles()
            .filter(|&t| mesh.wall_of(t) == Some(l))
            .flat_map(|t| mesh.triangle_slots()[t as usize])
            .collect();
        vertices.sort_unstable();
        vertices.dedup();
        for v in vertices {
            let fan = mesh.incident(v);
            if mesh.is_crack_node(v) || fan.iter().any(|&t| mesh.wall_of(t) != Some(l)) {
                continue;
            }
            // The positive wall bounds the material on the side `e` points to: its outward
            // normals point against `e`.
            let facing: f64 = fan.iter().map(|&t| mesh.triangle_normal(t).dot(e)).sum();
            let side = if facing < 0.0 { 1.0 } else { -1.0 };
            let x = mesh.positions()[v as usize];
            let target = x - e * (e.dot(x - origin) - side * half);
            if target.distance_squared(x) > 0.0 {
                try_move(mesh, v, target, settings.front.bounds, None);
            }
        }
    }
}
