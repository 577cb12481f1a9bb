//! Boundary-element fracture as a world's fracture model (Zhu 2015 Algorithm 1): after the
//! solver, a breakable body whose contact impulse in the step exceeds its threshold is loaded
//! with the step's contacts and goes through one fracture event ([`super::crack::event`]); when
//! its surface has fallen into pieces, the pieces replace it as bodies, each breakable again.
//!
//! Coupling:
//! - each contact impulse `I` (N s) becomes a force `f = I / t_d` with the material's contact
//!   duration `t_d` (s), spread over the surface patch around the contact point (the smooth
//!   weight of [`super::Loads::add_force`], radius two target edges), in the body's material
//!   frame. Zhu applies the impulses of a 1 ms simulation step over that step; `t_d` plays that
//!   role at the frame rate, where one step's impulse gathers a whole impact. The default, 1 ms,
//!   is of the order of the contact time of a hard sphere on stone or glass at metres per
//!   second (Hertz: tens to hundreds of microseconds for centimetre spheres, milliseconds for
//!   decimetre bodies);
//! - gravity is the body force, and the rigid acceleration the unbalanced contacts give the
//!   body is carried by its d'Alembert inertial load ([`super::Balance`]);
//! - the screening bound is the body's impulse threshold (N s): a step whose strongest contact
//!   impulse on a body is below it costs that body nothing, so resting bodies never solve.
//!
//! Pieces share the parent's whole mass: the crack slots' volume (thickness times crack area)
//! is a numerical allowance, so the pieces' density is raised by the ratio of the parent's
//! volume to theirs, and no mass or kinetic energy is made or lost in the split.
//!
//! The stress solve and the crack tracking run on the body's own surface mesh in its material
//! frame; a body that cracks without falling apart keeps its uncracked surface (the next event
//! starts afresh), as the SPH model does by default.

use std::collections::BTreeMap;

use glam::DVec3;

use shatter_collision::{Pose, TriMesh};
use shatter_engine::{BodyDesc, BodyId, FractureContext, FractureModel, Spawned, World};

use super::crack::{EventReport, EventSettings, fracture_event};
use super::{Loads, Surface};
use crate::error::FractureError;
use crate::fragments::{BreakingParent, FragmentResolution, ParentMomentum, fragment_desc, piece_bodies};
use crate::impacts::{
    Hit, Pending, StepContact, adopt_spawned, breakable_body_pose, replace_with_fragments, stress_hit_bodies,
};

/// What a boundary-element body is made of and how it cracks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BemMaterial {
    /// Elasticity, thresholds, crack thickness and tracking (see [`EventSettings`]).
    pub event: EventSettings,
    /// Density, kg/m^3.
    pub density: f64,
    /// How long a contact impulse takes to deliver (s): the force is the impulse over it.
    pub contact_duration: f64,
}

impl BemMaterial {
    /// A material with event settings `event`, `density` (kg/m^3) and a contact duration of
    /// 1 ms.
    pub fn new(event: EventSettings, density: f64) -> Self {
        Self {
            event,
            density,
            contact_duration: 1.0e-3,
        }
    }

    /// Checks the density, contact duration and event settings, naming a bad one.
    pub fn validate(&self) -> Result<(), FractureError> {
        self.event.validate()?;
        if !(self.density.is_finite() && self.density > 0.0) {
            return Err(FractureError::invalid(
                "density (kg/m^3)",
                self.density,
                "a positive finite number",
            ));
        }
        if !(self.contact_duration.is_finite() && self.contact_duration > 0.0) {
            return Err(FractureError::invalid(
                "contact duration (s)",
                self.contact_duration,
                "a positive finite number",
            ));
        }
        Ok(())
    }
}

/// How the boundary-element model breaks bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BemFractureSettings {
    /// Take the step's contact impulses back from a breaking body and return them to the bodies
    /// that gave them, so the impactor meets the fragments (crate::impacts). Off by default.
    pub replay_impact: bool,
    /// Resolution of fragments' colliders, unless set per body
    /// ([`BemFracture::set_resolution`]).
    pub resolution: FragmentResolution,
}

impl Default for BemFractureSettings {
    fn default() -> Self {
        Self {
            replay_impact: false,
            resolution: FragmentResolution {
                cells: 24,
                particle_spacing: 0.05,
            },
        }
    }
}

/// A dynamic body of the solid bounded by `mesh` (material frame at `mesh_pose` in the world)
/// of `density` (kg/m^3), at rest, with a collider of `resolution`. Fails naming a bad density
/// or a surface that does not bound a solid.
pub fn bem_body_desc(
    mesh: &TriMesh,
    density: f64,
    mesh_pose: &Pose,
    resolution: FragmentResolution,
) -> Result<BodyDesc, FractureError> {
    shatter_collision::topology::require_solid(mesh)?;
    let integrals = shatter_collision::mass_properties::mesh_integrals(mesh);
    fragment_desc(mesh, integrals, density, mesh_pose, resolution, None)
}

#[derive(Clone, Debug)]
struct Breakable {
    mesh: TriMesh,
    material: BemMaterial,
    /// Impulse on the body above which it is stressed, N s.
    threshold: f64,
    /// Where the material frame sits in the body frame.
    mesh_in_body: Pose,
    /// Resolution of its fragments' colliders.
    resolution: FragmentResolution,
}

/// One fracture event on a body.
#[derive(Clone, Debug, PartialEq)]
pub struct BemFractureEvent {
    /// The body loaded (removed when it broke).
    pub body: BodyId,
    /// Simulated time at the start of the step, s.
    pub time: f64,
    /// Contacts that loaded it.
    pub contacts: usize,
    /// What the event did (solves, cracks, sub-steps, cuts, pieces, times).
    pub report: EventReport,
    /// The walls of the cracks the event made, in the body's material frame (m): both faces of
    /// each crack surface, for drawing where the cracks ran.
    pub crack_walls: Vec<[DVec3; 3]>,
    /// The fragments (filled when the step has spawned them; empty when it stayed whole).
    pub fragments: Vec<BodyId>,
    /// Wall-clock time of the whole event, fragment bodies included, s.
    pub seconds: f64,
    /// The parent's momentum the fragments share, world frame.
    pub momentum_before: ParentMomentum,
    /// The fragments' momentum, world frame: `momentum_before` to round-off.
    pub momentum_after: ParentMomentum,
}

/// The boundary-element fracture model. Register it with `World::add_fracture_model` after
/// making bodies breakable with [`BemFracture::make_breakable`].
#[derive(Debug, Default)]
pub struct BemFracture {
    settings: BemFractureSettings,
    bodies: BTreeMap<BodyId, Breakable>,
    events: Vec<BemFractureEvent>,
    pending: Pending<Breakable>,
    failures: Vec<String>,
}

impl BemFracture {
    /// A model with `settings`.
    pub fn new(settings: BemFractureSettings) -> Self {
        Self {
            settings,
            ..Self::default()
        }
    }

    /// Makes dynamic body `id` of `world`, whose surface is `mesh` with its material frame now
    /// at `mesh_pose` in the world (as [`bem_body_desc`] placed it), crack in `material` when a
    /// contact impulse on it exceeds `threshold` (N s). Fails, changing nothing, naming a stale
    /// or non-dynamic body, a bad threshold, a bad material value or a mesh that does not bound
    /// a solid.
    pub fn make_breakable(
        &mut self,
        world: &World,
        id: BodyId,
        mesh: TriMesh,
        material: BemMaterial,
        mesh_pose: &Pose,
        threshold: f64,
    ) -> Result<(), FractureError> {
        material.validate()?;
        shatter_collision::topology::require_solid(&mesh)?;
        let body_pose = breakable_body_pose(world, id, threshold)?;
        let mesh_in_body = body_pose.relative_pose(mesh_pose);
        self.bodies.insert(
            id,
            Breakable {
                mesh,
                material,
                threshold,
                mesh_in_body,
                resolution: self.settings.resolution,
            },
        );
        Ok(())
    }

    /// Sets the resolution of breakable body `id`'s fragments' colliders (and theirs in turn);
    /// `false` when `id` is not breakable.
    pub fn set_resolution(&mut self, id: BodyId, resolution: FragmentResolution) -> bool {
        self.bodies.get_mut(&id).map(|b| b.resolution = resolution).is_some()
    }

    /// Whether body `id` is breakable (and has not broken).
    pub fn is_breakable(&self, id: BodyId) -> bool {
        self.bodies.contains_key(&id)
    }

    /// The surface of breakable body `id`, material frame.
    pub fn mesh(&self, id: BodyId) -> Option<&TriMesh> {
        self.bodies.get(&id).map(|b| &b.mesh)
    }

    /// The material breakable body `id` cracks in (its elastic constants, thresholds and event
    /// settings, density and contact duration).
    pub fn material(&self, id: BodyId) -> Option<&BemMaterial> {
        self.bodies.get(&id).map(|b| &b.material)
    }

    /// Every fracture event so far, in order.
    pub fn events(&self) -> &[BemFractureEvent] {
        &self.events
    }

    /// Bodies that should have been stressed or broken and could not, with why.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    /// Runs a fracture event on body `id`, hit by `hit`, loaded by `touching` (every contact it
    /// had in the step); `true` when it broke.
    fn stress_body(
        &mut self,
        context: &mut FractureContext<'_>,
        id: BodyId,
        hit: &Hit,
        touching: &[StepContact],
    ) -> Result<bool, FractureError> {
        let started = std::time::Instant::now();
        let view = context.body(id)?;
        let body = &self.bodies[&id];
        let mesh_pose = view.pose().compose(&body.mesh_in_body);
        let turn = mesh_pose.orientation.inverse();
        let material = body.material;
        let radius = 2.0 * material.event.track.front.target_edge;
        let forces: Vec<_> = touching
            .iter()
            .map(|c| {
                (
                    mesh_pose.inverse_transform_point(c.point),
                    turn * c.impulse / material.contact_duration,
                )
            })
            .collect();
        let gravity = turn * context.gravity();
        let loads = |surface: &Surface| {
            let mut loads = Loads::new(surface, material.density)?;
            loads.set_gravity(gravity)?;
            for &(point, force) in &forces {
                loads.add_force(surface, point, force, radius)?;
            }
            Ok(loads)
        };
        let outcome = fracture_event(&body.mesh, &loads, &material.event)?;
        let (crack, report) = (outcome.crack, outcome.report);
        let mut event = BemFractureEvent {
            body: id,
            time: context.time(),
            contacts: forces.len(),
            report,
            crack_walls: crack.wall_triangles(),
            fragments: Vec::new(),
            seconds: 0.0,
            momentum_before: ParentMomentum::default(),
            momentum_after: ParentMomentum::default(),
        };
        let pieces = outcome.pieces;
        if pieces.len() < 2 {
            event.seconds = started.elapsed().as_secs_f64();
            self.events.push(event);
            return Ok(false);
        }
        let now = ParentMomentum::of(view.state, view.mass);
        let momentum = if self.settings.replay_impact {
            hit.before_contacts(now)
        } else {
            now
        };
        // The crack slots' volume (thickness times crack area) is a numerical allowance, not
        // lost material: the pieces share the parent's whole mass, their density raised by the
        // ratio of the parent's volume to theirs, so no mass and no kinetic energy is made or
        // lost in the split.
        let whole = shatter_collision::mass_properties::mesh_integrals(&body.mesh).volume;
        let split: f64 = pieces.iter().map(|(_, integrals)| integrals.volume).sum();
        let material = BemMaterial {
            density: material.density * whole / split,
            ..material
        };
        let parent = BreakingParent {
            mesh_pose,
            momentum,
            density: material.density,
        };
        let (threshold, resolution) = (body.threshold, body.resolution);
        let descs = piece_bodies(&pieces, &parent, resolution)?;
        let fragments = descs
            .into_iter()
            .zip(pieces)
            .map(|(desc, (mesh, _))| {
                let breakable = Breakable {
                    mesh,
                    material,
                    threshold,
                    mesh_in_body: desc.pose.relative_pose(&mesh_pose),
                    resolution,
                };
                (desc, breakable)
            })
            .collect();
        let (tickets, after) = replace_with_fragments(context, id, fragments)?;
        event.momentum_before = momentum;
        event.momentum_after = after;
        event.seconds = started.elapsed().as_secs_f64();
        self.events.push(event);
        self.pending.push((self.events.len() - 1, tickets));
        self.bodies.remove(&id);
        Ok(true)
    }
}

impl FractureModel for BemFracture {
    fn name(&self) -> &str {
        "bem"
    }

    fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String> {
        self.bodies.retain(|id, _| context.bodies().contains(*id));
        let thresholds: BTreeMap<BodyId, f64> = self.bodies.iter().map(|(id, b)| (*id, b.threshold)).collect();
        let mut failures = Vec::new();
        stress_hit_bodies(
            context,
            |id| thresholds.get(&id).copied(),
            self.settings.replay_impact,
            &mut failures,
            |context, id, hit, touching| self.stress_body(context, id, hit, touching),
        );
        self.failures.extend(failures);
        Ok(())
    }

    fn spawned(&mut self, spawned: &[Spawned]) {
        let (events, bodies) = (&mut self.events, &mut self.bodies);
        adopt_spawned(spawned, &mut self.pending, |event, id, breakable| {
            events[event].fragments.push(id);
            bodies.insert(id, breakable);
        });
    }
}
