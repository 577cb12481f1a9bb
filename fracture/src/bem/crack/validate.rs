//! The crack mesh's validator: everything a surface must satisfy after every crack sub-step for
//! the stress solve, the fragments and the renderer to trust it. Tests run it after every
//! operation and every sub-step.
//!
//! Checked, in order (the first fault found is returned):
//! 1. every edge has exactly two triangles, traversing it in opposite directions;
//! 2. no pinched vertex: the triangles around every vertex form one closed fan;
//! 3. every triangle's angles lie within [`AngleBounds`];
//! 4. no two triangles intersect other than in the vertices and edge they share, decided with
//!    exact predicates (`shatter_collision::triangle_intersection`) over the pairs whose bounding
//!    boxes overlap (a sweep along x);
//! 5. every connected component is closed with non-zero volume, and each component with negative
//!    volume (a cavity) lies inside one with positive volume, so every fragment's volume is
//!    positive.

use std::fmt;

use glam::DVec3;
use hashbrown::HashMap;
use shatter_collision::triangle_intersection::first_meeting_pair;
use shatter_collision::winding::solid_angle;

use super::mesh::CrackMesh;

/// The range every triangle angle must stay in (degrees).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AngleBounds {
    /// Smallest allowed angle (degrees).
    pub min_degrees: f64,
    /// Largest allowed angle (degrees).
    pub max_degrees: f64,
}

impl Default for AngleBounds {
    /// 1 to 175 degrees: what the remesher guarantees after every operation it accepts
    /// (LosTopos's hard limits are 0 and 180; its soft targets are tighter).
    fn default() -> Self {
        Self {
            min_degrees: 1.0,
            max_degrees: 175.0,
        }
    }
}

/// A defect of a crack mesh, with the elements that show it.
#[derive(Clone, Debug, PartialEq)]
pub enum MeshFault {
    /// An edge used by `uses` triangles instead of two.
    EdgeUses {
        /// The edge's vertices, lower index first.
        edge: [u32; 2],
        /// Live triangles using it.
        uses: usize,
    },
    /// An edge whose two triangles traverse it in the same direction.
    EdgeOrientation {
        /// The edge's vertices, lower index first.
        edge: [u32; 2],
    },
    /// A vertex whose triangles do not form one closed fan.
    Pinched {
        /// The vertex.
        vertex: u32,
    },
    /// A triangle with an angle outside the bounds.
    Angle {
        /// The triangle slot.
        triangle: u32,
        /// The offending angle (degrees; NaN for a zero-length edge).
        degrees: f64,
    },
    /// Two triangles that intersect.
    Intersection {
        /// The two triangle slots, lower first.
        triangles: [u32; 2],
    },
    /// A component enclosing no volume, or a cavity inside no solid.
    Volume {
        /// The component, numbered as [`components`] does.
        component: usize,
        /// Its signed volume (m^3).
        volume: f64,
    },
}

impl fmt::Display for MeshFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EdgeUses { edge, uses } => write!(f, "edge {edge:?} has {uses} triangles instead of 2"),
            Self::EdgeOrientation { edge } => write!(f, "edge {edge:?} is traversed twice in the same direction"),
            Self::Pinched { vertex } => write!(f, "vertex {vertex} is pinched (its triangles form more than one fan)"),
            Self::Angle { triangle, degrees } => write!(f, "triangle {triangle} has an angle of {degrees} degrees"),
            Self::Intersection { triangles } => write!(f, "triangles {triangles:?} intersect"),
            Self::Volume { component, volume } => write!(
                f,
                "component {component} encloses volume {volume} m^3 (empty, or a cavity outside every solid)"
            ),
        }
    }
}

/// What the validator measured on a valid mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshCheck {
    /// Live triangles.
    pub triangles: usize,
    /// Connected components (fragments and their cavities).
    pub components: usize,
    /// Smallest and largest triangle angle (degrees).
    pub angle_range: (f64, f64),
    /// Enclosed volume (m^3).
    pub volume: f64,
}

/// Checks `mesh` (see the module docs); returns the first fault found.
pub fn validate(mesh: &CrackMesh, bounds: AngleBounds) -> Result<MeshCheck, MeshFault> {
    check_edges(mesh)?;
    for v in 0..mesh.positions().len() as u32 {
        if mesh.vertex_in_use(v) && mesh.ring(v).is_none() {
            return Err(MeshFault::Pinched { vertex: v });
        }
    }
    let angle_range = check_angles(mesh, bounds)?;
    check_intersections(mesh)?;
    let (components, volume) = check_volumes(mesh)?;
    Ok(MeshCheck {
        triangles: mesh.triangle_count(),
        components,
        angle_range,
        volume,
    })
}

fn check_edges(mesh: &CrackMesh) -> Result<(), MeshFault> {
    // Per undirected edge: uses, and uses traversing it from the lower index.
    let mut edges: HashMap<(u32, u32), (usize, usize)> = HashMap::new();
    for t in mesh.live_triangles() {
        let tri = mesh.triangle_slots()[t as usize];
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let entry = edges.entry((a.min(b), a.max(b))).or_insert((0, 0));
            entry.0 += 1;
            entry.1 += usize::from(a < b);
        }
    }
    let mut sorted: Vec<_> = edges.into_iter().collect();
    sorted.sort_unstable_by_key(|(edge, _)| *edge);
    for ((a, b), (uses, forward)) in sorted {
        if uses != 2 {
            return Err(MeshFault::EdgeUses { edge: [a, b], uses });
        }
        if forward != 1 {
            return Err(MeshFault::EdgeOrientation { edge: [a, b] });
        }
    }
    Ok(())
}

/// The three angles of a triangle (degrees); NaN where an edge has zero length.
pub fn triangle_angles([a, b, c]: [DVec3; 3]) -> [f64; 3] {
    let angle = |p: DVec3, q: DVec3, r: DVec3| (q - p).angle_between(r - p).to_degrees();
    [angle(a, b, c), angle(b, c, a), angle(c, a, b)]
}

fn check_angles(mesh: &CrackMesh, bounds: AngleBounds) -> Result<(f64, f64), MeshFault> {
    let mut range = (f64::INFINITY, f64::NEG_INFINITY);
    for t in mesh.live_triangles() {
        for degrees in triangle_angles(mesh.corners(t)) {
            if !(degrees >= bounds.min_degrees && degrees <= bounds.max_degrees) {
                return Err(MeshFault::Angle { triangle: t, degrees });
            }
            range = (range.0.min(degrees), range.1.max(degrees));
        }
    }
    Ok(range)
}

fn check_intersections(mesh: &CrackMesh) -> Result<(), MeshFault> {
    let slots = mesh.triangle_slots();
    let live: Vec<(u32, [u32; 3])> = mesh.live_triangles().map(|t| (t, slots[t as usize])).collect();
    match first_meeting_pair(mesh.positions(), &live) {
        Some(triangles) => Err(MeshFault::Intersection { triangles }),
        None => Ok(()),
    }
}

/// The live triangles' edge-connected components: a label per triangle slot (`u32::MAX` for
/// dead slots) and the count, labelled in order of their lowest triangle.
pub fn components(mesh: &CrackMesh) -> (Vec<u32>, usize) {
    components_apart(mesh, |_, _| false)
}

/// As [`components`], with the triangles on each edge `u v` for which `apart(u, v)` holds kept
/// apart (the flood does not cross it).
pub fn components_apart(mesh: &CrackMesh, apart: impl Fn(u32, u32) -> bool) -> (Vec<u32>, usize) {
    let slots = mesh.triangle_slots();
    let mut label = vec![u32::MAX; slots.len()];
    let mut count = 0;
    let mut stack = Vec::new();
    for seed in mesh.live_triangles() {
        if label[seed as usize] != u32::MAX {
            continue;
        }
        label[seed as usize] = count;
        stack.push(seed);
        while let Some(t) = stack.pop() {
            let tri = slots[t as usize];
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                if apart(a, b) {
                    continue;
                }
                for u in mesh.edge_triangles(a, b) {
                    if label[u as usize] == u32::MAX {
                        label[u as usize] = count;
                        stack.push(u);
                    }
                }
            }
        }
        count += 1;
    }
    (label, count as usize)
}

fn check_volumes(mesh: &CrackMesh) -> Result<(usize, f64), MeshFault> {
    let (label, count) = components(mesh);
    let mut volume = vec![0.0; count];
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
    for t in mesh.live_triangles() {
        let [a, b, c] = mesh.corners(t);
        volume[label[t as usize] as usize] += a.dot(b.cross(c)) / 6.0;
        members[label[t as usize] as usize].push(t);
    }
    for (component, &v) in volume.iter().enumerate() {
        let probe = mesh.corners(members[component][0])[0];
        let enclosed = (0..count).any(|outer| {
            outer != component
                && volume[outer] > 0.0
                && winding_number(mesh, members[outer].iter().copied(), probe) > 0.5
        });
        if v == 0.0 || (v < 0.0 && !enclosed) {
            return Err(MeshFault::Volume { component, volume: v });
        }
    }
    Ok((count, volume.iter().sum()))
}

/// The generalized winding number of the closed surface made of `triangles` at `x`: 1 inside,
/// 0 outside (the solid angles of its triangles, summed, over 4 pi).
pub fn winding_number(mesh: &CrackMesh, triangles: impl IntoIterator<Item = u32>, x: DVec3) -> f64 {
    let total: f64 = triangles
        .into_iter()
        .map(|t| {
            let [a, b, c] = mesh.corners(t).map(|p| p - x);
            solid_angle(a, b, c)
        })
        .sum();
    total / (4.0 * std::f64::consts::PI)
}
