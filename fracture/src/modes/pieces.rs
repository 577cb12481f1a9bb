//! The pieces a mode (or a set of modes) breaks a tet mesh into: tets joined by an interior face
//! across which the field jumps by less than a threshold stay together; connected components
//! are the pieces.
//!
//! The threshold is relative to the field's root mean square value over the mesh, so it means
//! the same at any scale: a mode is M-normalized, so its root mean square is `1 / sqrt(V)`, and
//! the reference's absolute 0.1 on a shape of unit volume is [`PIECE_THRESHOLD`] here.

use shatter_collision::TetMesh;
use shatter_engine::islands::UnionFind;

use super::iccm::FractureModes;
use crate::error::FractureError;
use crate::prescore::TetPieces;

/// Default jump, relative to a mode's root mean square value, under which two tets stay joined.
pub const PIECE_THRESHOLD: f64 = 0.1;

/// Component labels of `sets`, numbered densely in order of first appearance.
pub(crate) fn dense_labels(sets: &mut UnionFind) -> Vec<u32> {
    let mut label_of_root = vec![u32::MAX; sets.len()];
    let mut next = 0;
    sets.roots()
        .into_iter()
        .map(|root| {
            if label_of_root[root] == u32::MAX {
                label_of_root[root] = next;
                next += 1;
            }
            label_of_root[root]
        })
        .collect()
}

/// The pieces of `mesh` that mode `index` of `modes` breaks it into, with faces joined where the
/// mode's jump is below `threshold` times its root mean square value. Fails on a mode index out of
/// range or modes of another mesh.
pub fn mode_pieces(
    mesh: &TetMesh,
    modes: &FractureModes,
    index: usize,
    threshold: f64,
) -> Result<TetPieces, FractureError> {
    pieces_where(mesh, modes, threshold, |m| m == index)
}

/// The atomic pieces of `mesh`: tets that stay together in every mode of `modes`, so that any
/// combination of the modes moves each atomic piece rigidly (the reference's fragment
/// candidates).
pub fn atomic_pieces(mesh: &TetMesh, modes: &FractureModes, threshold: f64) -> Result<TetPieces, FractureError> {
    pieces_where(mesh, modes, threshold, |_| true)
}

fn pieces_where(
    mesh: &TetMesh,
    modes: &FractureModes,
    threshold: f64,
    selected: impl Fn(usize) -> bool,
) -> Result<TetPieces, FractureError> {
    if modes.tets != mesh.tets().len() || modes.faces != mesh.interior_faces().len() {
        return Err(FractureError::input(format!(
            "modes of a mesh with {} tets and {} interior faces given with a mesh of {} and {}",
            modes.tets,
            modes.faces,
            mesh.tets().len(),
            mesh.interior_faces().len()
        )));
    }
    if !(threshold.is_finite() && threshold > 0.0) {
        return Err(FractureError::invalid(
            "piece threshold (relative jump)",
            threshold,
            "a positive finite number",
        ));
    }
    let count = modes.modes.len();
    if !(0..count).any(&selected) {
        return Err(FractureError::input(format!("no mode selected of {count}")));
    }
    let d = modes.dimension.components();
    let volume: f64 = mesh.volumes().iter().sum();
    let limit = threshold / volume.sqrt();
    let mut components = UnionFind::new(mesh.tets().len());
    for face in mesh.interior_faces() {
        let [a, b] = face.tets.map(|t| t as usize * d);
        let joined = (0..count).filter(|&m| selected(m)).all(|m| {
            let mode = &modes.modes[m];
            let jump: f64 = (0..d).map(|k| (mode[a + k] - mode[b + k]).powi(2)).sum::<f64>().sqrt();
            jump < limit
        });
        if joined {
            components.union(face.tets[0] as usize, face.tets[1] as usize);
        }
    }
    TetPieces::try_new(mesh, dense_labels(&mut components))
}
