//! Li 2018 Fig. 6: a hollow bunny prescored into ten pieces, dropped on the floor.
//!
//! Built as the paper builds it (section 4): a coarse tet mesh of the bunny, the interior tets
//! removed, a round-robin flood fill from ten random seed tets, and a breakable fixed joint at every
//! vertex of every face two pieces share ([`crate::prescore::prescore_mesh`],
//! [`crate::prescore::TetPieces::shared_face_anchors`]).

use glam::{DAffine3, DVec3};
use shatter_collision::{Pose, TriMesh};
use shatter_engine::{BodyId, JointId, World, WorldSettings};
use shatter_solver::Softness;

use super::{Observers, add_ground, world_with_model};
use crate::energized::{Breakable, EnergizedSettings, Glue, glue};
use crate::error::FractureError;
use crate::fragments::FragmentResolution;
use crate::prescore::{PrescoreSettings, Prescored, prescore_mesh};

/// Height the bunny is scaled to, m.
pub const BUNNY_HEIGHT: f64 = 0.6;
/// Density of the bunny (fired clay), kg/m^3.
const BUNNY_DENSITY: f64 = 2000.0;
/// Depth of the shell kept under the surface, m (tets with a vertex this close stay).
const SHELL: f64 = 0.02;
/// Pieces, as in the paper.
const PIECES: usize = 10;
/// Seed of the flood fill's seed tets.
const FILL_SEED: u64 = 2;
/// Level-set cells along a piece's longest side.
const PIECE_CELLS: usize = 24;
/// Surface particle spacing of the pieces, m.
const PIECE_PARTICLE_SPACING: f64 = 0.03;

/// The [`bunny`] scene.
pub struct Bunny {
    /// The world, with its energized model.
    pub world: World,
    /// The pieces, in flood-fill order.
    pub pieces: Vec<BodyId>,
    /// The glue joints, one per (pair of pieces, shared vertex).
    pub joints: Vec<JointId>,
    /// The cut: the tet mesh (in the scaled mesh's frame) and its pieces.
    pub cut: Prescored,
    /// Where the scaled mesh's frame sits in the world at the start.
    pub pose: Pose,
}

/// The bunny `mesh` (any closed or nearly closed scan, such as the Stanford bunny; the inside is
/// decided by the winding number), scaled to [`BUNNY_HEIGHT`] m tall, filled with a coarse tet
/// mesh (8 lattice cubes across), hollowed to the tets within 2 cm of the surface, cut into 10
/// pieces at 2000 kg/m^3 (about 56 kg in all) glued at every shared face vertex (about 300
/// joints) at 1e5 N/m (angular 1e3 N m/rad) breaking above 0.4 N s, and dropped from `drop` m (its
/// lowest point's height) onto the floor. The glue's load at rest on the floor is a fraction of
/// the threshold; the landing from 0.5 m breaks it.
pub fn bunny(
    model: EnergizedSettings,
    mesh: &TriMesh,
    drop: f64,
    observers: Observers,
) -> Result<Bunny, FractureError> {
    if !(drop.is_finite() && drop >= 0.0) {
        return Err(FractureError::invalid("drop height (m)", drop, "a finite height >= 0"));
    }
    let bounds = mesh
        .bounds()
        .ok_or_else(|| FractureError::input("the bunny mesh is empty"))?;
    let size = bounds.size();
    if !(size.y > 0.0) {
        return Err(FractureError::invalid(
            "bunny height (mesh units)",
            size.y,
            "a positive height",
        ));
    }
    let scale = BUNNY_HEIGHT / size.y;
    // Scaled, centred over the origin in x and z, its lowest point at y = 0.
    let base = DVec3::new(
        0.5 * (bounds.min.x + bounds.max.x),
        bounds.min.y,
        0.5 * (bounds.min.z + bounds.max.z),
    );
    let scaled = mesh.transformed(DAffine3::from_scale(DVec3::splat(scale)) * DAffine3::from_translation(-base));
    let cut = prescore_mesh(
        &scaled,
        &PrescoreSettings {
            pieces: PIECES,
            seed: FILL_SEED,
            level_set_cells: 48,
            tet_cells: 8,
            shell: Some(SHELL),
        },
    )?;
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    let mut world = world_with_model(settings, model, observers)?;
    add_ground(&mut world)?;
    let pose = Pose::from_position(DVec3::Y * drop);
    let resolution = FragmentResolution {
        cells: PIECE_CELLS,
        particle_spacing: PIECE_PARTICLE_SPACING,
    };
    let descs = cut.pieces.body_descs(&cut.tets, &pose, BUNNY_DENSITY, resolution)?;
    let mut pieces = Vec::with_capacity(descs.len());
    for desc in descs {
        pieces.push(world.add_body(desc)?);
    }
    let anchors: Vec<_> = cut
        .pieces
        .shared_face_anchors(&cut.tets)
        .into_iter()
        .map(|a| a.transformed(&pose))
        .collect();
    let piece_mass = BUNNY_DENSITY * cut.tets.volume() / pieces.len() as f64;
    let piece_size = cut.tets.volume().cbrt() / (pieces.len() as f64).cbrt();
    let glue_rule = Glue {
        softness: Softness::SpringDamper {
            stiffness: 1.0e5,
            damping: 2.0 * (1.0e5 * piece_mass).sqrt(),
        },
        angular_softness: Softness::SpringDamper {
            stiffness: 1.0e3,
            damping: 2.0 * (1.0e3 * piece_mass * piece_size * piece_size / 6.0).sqrt(),
        },
        breakable: Breakable::new(0.4),
    };
    let joints = glue(&mut world, &pieces, &anchors, &glue_rule)?;
    Ok(Bunny {
        world,
        pieces,
        joints,
        cut,
        pose,
    })
}
