//! Tet meshes of the shapes the fracture-modes tests, benches and examples share: solids made of
//! voxels (a dumbbell, a notched bar), so where they must break is known exactly.

use glam::DVec3;
use shatter_collision::TetMesh;

/// The solid of the voxels `filled(i, j, k)` of an `n[0] x n[1] x n[2]` grid of cubes of side
/// `size` (m, corner at the origin), each cube cut into six tets around its main diagonal (a
/// conforming split). Vertices of no filled voxel are left out.
///
/// # Panics
/// When no voxel is filled.
pub fn voxel_solid(n: [usize; 3], size: f64, filled: impl Fn(usize, usize, usize) -> bool) -> TetMesh {
    let grid_index = |i: usize, j: usize, k: usize| i + (n[0] + 1) * (j + (n[1] + 1) * k);
    let mut vertex_of = vec![u32::MAX; (n[0] + 1) * (n[1] + 1) * (n[2] + 1)];
    let mut vertices = Vec::new();
    let mut tets = Vec::new();
    let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                if !filled(i, j, k) {
                    continue;
                }
                for order in orders {
                    let mut corner = [i, j, k];
                    let mut path = [corner; 4];
                    for (step, axis) in order.into_iter().enumerate() {
                        corner[axis] += 1;
                        path[step + 1] = corner;
                    }
                    let mut tet = path.map(|[a, b, c]| {
                        let slot = &mut vertex_of[grid_index(a, b, c)];
                        if *slot == u32::MAX {
                            *slot = vertices.len() as u32;
                            vertices.push(DVec3::new(a as f64, b as f64, c as f64) * size);
                        }
                        *slot
                    });
                    let p = tet.map(|v| vertices[v as usize]);
                    if (p[1] - p[0]).dot((p[2] - p[0]).cross(p[3] - p[0])) < 0.0 {
                        tet.swap(2, 3);
                    }
                    tets.push(tet);
                }
            }
        }
    }
    TetMesh::try_new(vertices, tets).expect("at least one voxel, and voxel tets are valid")
}

/// Two cubes of `block` voxels a side joined along x by a neck one voxel square and `neck`
/// voxels long, voxels of `size` m. The neck runs through the blocks' middle.
pub fn dumbbell(block: usize, neck: usize, size: f64) -> TetMesh {
    let middle = block / 2;
    voxel_solid([2 * block + neck, block, block], size, |i, j, k| {
        i < block || i >= block + neck || (j == middle && k == middle)
    })
}

/// A bar of `length x height x depth` voxels of `size` m along x, with a notch one voxel wide
/// and `notch` voxels deep cut from its top (y) at voxel column `at`.
pub fn notched_bar(length: usize, height: usize, depth: usize, notch: usize, at: usize, size: f64) -> TetMesh {
    voxel_solid([length, height, depth], size, |i, j, _| {
        !(i == at && j + notch >= height)
    })
}
