//! Fracture modes as a world's fracture model: a body made breakable with a shape's modes
//! breaks when a contact impulse on it exceeds its threshold, into the fragments the impact's
//! projection onto the modes separates ([`super::runtime`]).
//!
//! Each step the model takes, per breakable body, the strongest contact pair impulse above the
//! body's threshold (crate::impacts), moves its point and direction into the frame of the body's
//! tet mesh, and asks the projector for the fragments at the body's toughness. When there is more
//! than one, the parent is replaced by the fragments ([`super::fragment_bodies`]: exact mass from
//! their tets, momentum kept); with `replay_impact` the impact is replayed so the impactor meets
//! the fragments. Fragments are ordinary bodies and do not break again: the modes belong to the
//! whole shape (Sellan et al. precompute them once per shape; a fragment would need its own).

use std::collections::BTreeMap;
use std::sync::Arc;

use shatter_collision::{Pose, TetMesh};
use shatter_engine::{BodyDesc, BodyId, FractureContext, FractureModel, SpawnTicket, Spawned, World};

use super::breakup::{ModesParent, fragment_bodies};
use super::runtime::{Impact, ImpactProjector};
use crate::error::FractureError;
use crate::fragments::{FragmentResolution, ParentMomentum, fragment_desc};
use crate::impacts::{Hit, break_hit_bodies, breakable_body_pose, strongest_hits};
use crate::prescore::TetPieces;

/// A shape with precomputed modes, shared by every body made of it.
#[derive(Debug)]
pub struct ModesShape {
    /// The tet mesh the modes were computed on, in its own frame.
    pub mesh: TetMesh,
    /// The runtime projection of its modes.
    pub projector: ImpactProjector,
    /// Density, kg/m^3.
    pub density: f64,
    /// Resolution of fragments' colliders.
    pub resolution: FragmentResolution,
}

impl ModesShape {
    /// A shape from its mesh and projector at `density`. Fails naming a bad density.
    pub fn new(
        mesh: TetMesh,
        projector: ImpactProjector,
        density: f64,
        resolution: FragmentResolution,
    ) -> Result<Self, FractureError> {
        if !(density.is_finite() && density > 0.0) {
            return Err(FractureError::invalid(
                "density (kg/m^3)",
                density,
                "a positive finite number",
            ));
        }
        Ok(Self {
            mesh,
            projector,
            density,
            resolution,
        })
    }

    /// A dynamic body of the whole shape whose mesh frame sits at `mesh_pose` in the world, at
    /// rest (set its velocity on the description).
    pub fn body_desc(&self, mesh_pose: &Pose) -> Result<BodyDesc, FractureError> {
        let whole = TetPieces::try_new(&self.mesh, vec![0; self.mesh.tets().len()])?;
        fragment_desc(
            &whole.surface(&self.mesh, 0),
            whole.integrals(&self.mesh, 0),
            self.density,
            mesh_pose,
            self.resolution,
            None,
        )
    }
}

/// How the modes model breaks bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModesFractureSettings {
    /// Take the step's contact impulses back from a breaking body and return them to the bodies
    /// that gave them, so the impactor meets the fragments (crate::impacts).
    pub replay_impact: bool,
}

impl Default for ModesFractureSettings {
    fn default() -> Self {
        Self { replay_impact: true }
    }
}

#[derive(Clone, Debug)]
struct Breakable {
    shape: Arc<ModesShape>,
    /// Impulse on the body above which it is tested, N s.
    threshold: f64,
    /// Jump at which atomic pieces separate, N s.
    toughness: f64,
    /// Where the shape's mesh frame sits in the body frame.
    mesh_in_body: Pose,
}

/// One body breaking along its modes.
#[derive(Clone, Debug, PartialEq)]
pub struct ModesFractureEvent {
    /// The body that broke (removed).
    pub parent: BodyId,
    /// Simulated time at the start of the step, s.
    pub time: f64,
    /// The impact, in the frame of the parent's tet mesh.
    pub impact: Impact,
    /// The fragments (filled when the step has spawned them).
    pub fragments: Vec<BodyId>,
    /// The parent's momentum the fragments share, world frame.
    pub momentum_before: ParentMomentum,
    /// The fragments' momentum, world frame: `momentum_before` to round-off.
    pub momentum_after: ParentMomentum,
}

/// The fracture-modes model. Register it with `World::add_fracture_model` after making bodies
/// breakable with [`ModesFracture::make_breakable`].
#[derive(Debug, Default)]
pub struct ModesFracture {
    settings: ModesFractureSettings,
    bodies: BTreeMap<BodyId, Breakable>,
    events: Vec<ModesFractureEvent>,
    pending: Vec<(usize, Vec<SpawnTicket>)>,
    failures: Vec<String>,
}

impl ModesFracture {
    /// A model with `settings`.
    pub fn new(settings: ModesFractureSettings) -> Self {
        Self {
            settings,
            ..Self::default()
        }
    }

    /// Makes dynamic body `id` of `world`, whose shape is `shape`'s mesh with its frame now at
    /// `mesh_pose` in the world (as [`ModesShape::body_desc`] placed it, or as a scene placed the
    /// surface the tets were made from), break along `shape`'s modes when a contact impulse on it
    /// exceeds `threshold` (N s), separating pieces whose projected jump reaches `toughness`
    /// (N s). Fails, changing nothing, naming a stale or non-dynamic body or a bad threshold or
    /// toughness.
    pub fn make_breakable(
        &mut self,
        world: &World,
        id: BodyId,
        shape: Arc<ModesShape>,
        mesh_pose: &Pose,
        threshold: f64,
        toughness: f64,
    ) -> Result<(), FractureError> {
        if !(toughness.is_finite() && toughness > 0.0) {
            return Err(FractureError::invalid(
                "toughness (N s)",
                toughness,
                "a positive impulse",
            ));
        }
        let body_pose = breakable_body_pose(world, id, threshold)?;
        let mesh_in_body = body_pose.relative_pose(mesh_pose);
        self.bodies.insert(
            id,
            Breakable {
                shape,
                threshold,
                toughness,
                mesh_in_body,
            },
        );
        Ok(())
    }

    /// Whether body `id` is breakable (and has not broken).
    pub fn is_breakable(&self, id: BodyId) -> bool {
        self.bodies.contains_key(&id)
    }

    /// Every fracture so far, in order.
    pub fn events(&self) -> &[ModesFractureEvent] {
        &self.events
    }

    /// Bodies that should have broken and could not, with why.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    /// Breaks body `id` at `hit`; `false` when the impact leaves it in one piece.
    fn break_body(&mut self, context: &mut FractureContext<'_>, id: BodyId, hit: &Hit) -> Result<bool, FractureError> {
        let body = &self.bodies[&id];
        let view = context.body(id)?;
        let body_pose = view.pose();
        let mesh_pose = body_pose.compose(&body.mesh_in_body);
        let impact = Impact {
            point: mesh_pose.inverse_transform_point(hit.point),
            direction: mesh_pose.orientation.inverse() * hit.impulse,
            magnitude: hit.impulse.length(),
        };
        let fragments = body.shape.projector.fragments(&impact, body.toughness)?;
        if fragments.count() < 2 {
            return Ok(false);
        }
        let momentum = hit.before_contacts(ParentMomentum::of(view.state, view.mass));
        let parent = ModesParent {
            mesh_pose,
            momentum,
            density: body.shape.density,
        };
        let descs = fragment_bodies(&body.shape.mesh, &fragments, &parent, body.shape.resolution)?;
        let mut after = ParentMomentum::default();
        for desc in &descs {
            after = after + ParentMomentum::of_desc(desc)?;
        }
        context.despawn(id)?;
        let tickets = descs.into_iter().map(|desc| context.spawn(desc)).collect();
        self.events.push(ModesFractureEvent {
            parent: id,
            time: context.time(),
            impact,
            fragments: Vec::new(),
            momentum_before: momentum,
            momentum_after: after,
        });
        self.pending.push((self.events.len() - 1, tickets));
        self.bodies.remove(&id);
        Ok(true)
    }
}

impl FractureModel for ModesFracture {
    fn name(&self) -> &str {
        "modes"
    }

    fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String> {
        self.bodies.retain(|id, _| context.bodies().contains(*id));
        let bodies = &self.bodies;
        let floor = bodies.values().map(|b| b.threshold).fold(f64::INFINITY, f64::min);
        let hits = strongest_hits(
            context,
            floor,
            |id| bodies.get(&id).map(|b| b.threshold),
            self.settings.replay_impact,
        );
        let mut failures = Vec::new();
        let replay = self.settings.replay_impact;
        break_hit_bodies(
            context,
            &hits,
            replay,
            "did not break",
            &mut failures,
            |context, id, hit| self.break_body(context, id, hit),
        );
        self.failures.extend(failures);
        Ok(())
    }

    fn spawned(&mut self, spawned: &[Spawned]) {
        let by_ticket: BTreeMap<u32, BodyId> = spawned.iter().map(|s| (s.ticket.0, s.id)).collect();
        for (event, tickets) in std::mem::take(&mut self.pending) {
            for ticket in tickets {
                if let Some(&id) = by_ticket.get(&ticket.0) {
                    self.events[event].fragments.push(id);
                }
            }
        }
    }
}
