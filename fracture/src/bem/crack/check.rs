//! The tests every local mesh change must pass before it is committed (the "safe operation"
//! discipline of El Topo, Brochu and Bridson 2009): the triangles it would create keep their
//! angles within bounds, do not turn over against the triangles they replace, and intersect
//! nothing that stays. A vertex move is the same test with the moved vertex's triangles as both
//! the old and the new ones.

use glam::DVec3;
use shatter_collision::Aabb;
use shatter_collision::triangle_intersection::mesh_triangles_intersect;

use super::mesh::CrackMesh;
use super::validate::{AngleBounds, triangle_angles};

/// How far a new triangle's normal may turn from the area-weighted normal of the triangles it
/// replaces: cosine of 60 degrees. A change that turns the surface further alters its shape, not
/// just its triangulation.
pub const MAX_NORMAL_TURN_COS: f64 = 0.5;

/// A limit on how far new triangles may turn: added triangle `i`'s unit normal must have at
/// least `min_cos` along `normals[i]` (the normal of the triangle it replaces, taken before any
/// vertex moves).
#[derive(Clone, Debug)]
pub struct Turn {
    /// Reference unit normal per added triangle.
    pub normals: Vec<DVec3>,
    /// Least cosine allowed between an added triangle's normal and its reference.
    pub min_cos: f64,
}

/// Whether a change keeps the mesh valid (see the module docs): removing the live triangle
/// slots `removed` and adding triangles with corners `added`, at the mesh's current positions (a
/// proposed vertex move is applied to the positions first), with new triangles turning no
/// further than `turn` allows (`None`: no limit, for moves that may turn triangles, like a crack
/// front sweeping into the material).
pub fn acceptable(
    mesh: &CrackMesh,
    removed: &[u32],
    added: &[[u32; 3]],
    bounds: AngleBounds,
    turn: Option<&Turn>,
) -> bool {
    let positions = mesh.positions();
    let corners = |t: [u32; 3]| t.map(|v| positions[v as usize]);
    for (i, &t) in added.iter().enumerate() {
        let angles = triangle_angles(corners(t));
        if !angles
            .iter()
            .all(|a| *a >= bounds.min_degrees && *a <= bounds.max_degrees)
        {
            return false;
        }
        if let Some(turn) = turn {
            let [a, b, c] = corners(t);
            if (b - a).cross(c - a).normalize_or_zero().dot(turn.normals[i]) < turn.min_cos {
                return false;
            }
        }
    }
    !intersects_mesh(mesh, removed, added)
}

/// Whether any added triangle intersects another added triangle or a live triangle the change
/// keeps.
fn intersects_mesh(mesh: &CrackMesh, removed: &[u32], added: &[[u32; 3]]) -> bool {
    let positions = mesh.positions();
    let boxes: Vec<Aabb> = added
        .iter()
        .map(|t| Aabb::from_points(t.map(|v| positions[v as usize])))
        .collect();
    let all = boxes
        .iter()
        .fold(Aabb::from_points([positions[added[0][0] as usize]]), |acc, b| {
            acc.union(*b)
        });
    for (i, &t) in added.iter().enumerate() {
        for (j, &u) in added.iter().enumerate().skip(i + 1) {
            if boxes[i].overlaps(&boxes[j]) && mesh_triangles_intersect(positions, t, u) {
                return true;
            }
        }
    }
    let slots = mesh.triangle_slots();
    for u in mesh.triangles_near(all.min, all.max) {
        if removed.contains(&u) {
            continue;
        }
        let ub = Aabb::from_points(mesh.corners(u));
        if !ub.overlaps(&all) {
            continue;
        }
        for (i, &t) in added.iter().enumerate() {
            if boxes[i].overlaps(&ub) && mesh_triangles_intersect(positions, t, slots[u as usize]) {
                return true;
            }
        }
    }
    false
}

/// Tries moving vertex `v` to `x`: keeps the move when its triangles stay within bounds and
/// intersect nothing, and when each turns by no more than the angle whose cosine is
/// `normal_turn_cos` (if given); otherwise restores the old position. Returns whether it moved.
pub fn try_move(mesh: &mut CrackMesh, v: u32, x: DVec3, bounds: AngleBounds, normal_turn_cos: Option<f64>) -> bool {
    let old = mesh.positions()[v as usize];
    let triangles: Vec<u32> = mesh.incident(v).to_vec();
    let corners: Vec<[u32; 3]> = triangles.iter().map(|&t| mesh.triangle_slots()[t as usize]).collect();
    let old_normals: Vec<DVec3> = triangles.iter().map(|&t| mesh.triangle_normal(t)).collect();
    mesh.set_position(v, x);
    let turned = normal_turn_cos.is_some_and(|cos| {
        triangles
            .iter()
            .zip(&old_normals)
            .any(|(&t, old)| mesh.triangle_normal(t).dot(*old) < cos)
    });
    // The triangles are both removed and re-added: the check tests them against the rest.
    let ok = !turned && acceptable(mesh, &triangles, &corners, bounds, None);
    if !ok {
        mesh.set_position(v, old);
    }
    ok
}
