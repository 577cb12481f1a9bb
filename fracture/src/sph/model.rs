//! SPH fracture as a world's fracture model: a breakable body carries its particle solid; a
//! step whose contact impulses on it exceed its threshold loads the solid with those contacts
//! ([`super::load`]), cracks it ([`super::event`]), and, when the links left fall into more
//! than one piece, replaces the body by its pieces ([`super::breakup`]), each breakable again
//! with its own particles. Cracks that leave the body whole are dropped unless
//! [`SphFractureSettings::keep_partial_cracks`] is set.
//!
//! The threshold is a cheap screen (N s): resting contacts cost nothing, and only a body hit
//! harder than it pays for a stress solve. Whether it cracks is then the Rankine criterion's.

use std::collections::BTreeMap;

use shatter_collision::Pose;
use shatter_engine::{BodyDesc, BodyId, FractureContext, FractureModel, Spawned, World};
use shatter_integrators::BodyKind;

use super::breakup::{SphParent, fragment_bodies, pieces, surface_mesh};
use super::event::{CrackReport, CrackSettings, crack_solid};
use super::load::ContactLoad;
use super::material::SphMaterial;
use super::solid::ParticleSolid;
use crate::error::FractureError;
use crate::fragments::{FragmentResolution, ParentMomentum, fragment_desc};
use crate::impacts::{
    Hit, Pending, StepContact, adopt_spawned, breakable_body_pose, replace_with_fragments, stress_hit_bodies,
};

/// How the SPH model breaks bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphFractureSettings {
    /// Take the step's contact impulses back from a breaking body and return them to the bodies
    /// that gave them, so the impactor meets the fragments (crate::impacts). Off by default:
    /// a body breaking on the ground would otherwise hand its fragments the speed the ground
    /// had just taken away, and they would land, and break, again in the next step.
    pub replay_impact: bool,
    /// Stress and crack settings of each event.
    pub crack: CrackSettings,
    /// Keep the cracks of an event that leaves the body whole, so the next impact meets them.
    /// Off by default: an impact that does not break a body leaves it as it was, so a body's
    /// cost does not grow with every impact it survives (each crack splits particles 1-to-12).
    pub keep_partial_cracks: bool,
    /// Resolution of fragments' colliders, unless set per body
    /// ([`SphFracture::set_resolution`]).
    pub resolution: FragmentResolution,
}

impl Default for SphFractureSettings {
    fn default() -> Self {
        Self {
            replay_impact: false,
            keep_partial_cracks: false,
            crack: CrackSettings::default(),
            resolution: FragmentResolution {
                cells: 24,
                particle_spacing: 0.05,
            },
        }
    }
}

/// A dynamic body of the whole of `solid` (particle frame at `mesh_pose` in the world) in
/// `material`, at rest, with a collider of `resolution`. Fails naming a bad density or a
/// surface the level set refuses.
pub fn sph_body_desc(
    solid: &ParticleSolid,
    material: &SphMaterial,
    mesh_pose: &Pose,
    resolution: FragmentResolution,
) -> Result<BodyDesc, FractureError> {
    let all: Vec<usize> = (0..solid.len()).collect();
    fragment_desc(
        &surface_mesh(solid, &all)?,
        solid.integrals(&all),
        material.density,
        mesh_pose,
        resolution,
        None,
    )
}

#[derive(Clone, Debug)]
struct Breakable {
    solid: ParticleSolid,
    material: SphMaterial,
    /// Impulse on the body above which it is stressed, N s.
    threshold: f64,
    /// Where the particle frame sits in the body frame.
    mesh_in_body: Pose,
    /// Resolution of its fragments' colliders (theirs in turn).
    resolution: FragmentResolution,
}

/// One stress event on a body.
#[derive(Clone, Debug, PartialEq)]
pub struct SphFractureEvent {
    /// The body loaded (removed when it broke).
    pub body: BodyId,
    /// Simulated time at the start of the step, s.
    pub time: f64,
    /// The contacts that loaded it, particle frame.
    pub contacts: Vec<ContactLoad>,
    /// What the stress passes did.
    pub report: CrackReport,
    /// Particles in the body before the event.
    pub particles: usize,
    /// The fragments (filled when the step has spawned them; empty when it stayed whole).
    pub fragments: Vec<BodyId>,
    /// How many pieces the event left (1: cracked or not, but whole).
    pub pieces: usize,
    /// Wall-clock time the event took (stress passes, cracks and fragment bodies), s.
    pub seconds: f64,
    /// The parent's momentum the fragments share, world frame.
    pub momentum_before: ParentMomentum,
    /// The fragments' momentum, world frame: `momentum_before` to round-off.
    pub momentum_after: ParentMomentum,
}

/// The SPH fracture model. Register it with `World::add_fracture_model` after making bodies
/// breakable with [`SphFracture::make_breakable`].
#[derive(Debug, Default)]
pub struct SphFracture {
    settings: SphFractureSettings,
    bodies: BTreeMap<BodyId, Breakable>,
    events: Vec<SphFractureEvent>,
    pending: Pending<Breakable>,
    failures: Vec<String>,
}

impl SphFracture {
    /// A model with `settings`.
    pub fn new(settings: SphFractureSettings) -> Self {
        Self {
            settings,
            ..Self::default()
        }
    }

    /// Makes dynamic body `id` of `world`, whose shape is `solid` with its particle frame now
    /// at `mesh_pose` in the world (as [`sph_body_desc`] placed it), crack in `material` when a
    /// contact impulse on it exceeds `threshold` (N s). Fails, changing nothing, naming a stale
    /// or non-dynamic body, a bad threshold or a bad material value.
    pub fn make_breakable(
        &mut self,
        world: &World,
        id: BodyId,
        solid: ParticleSolid,
        material: SphMaterial,
        mesh_pose: &Pose,
        threshold: f64,
    ) -> Result<(), FractureError> {
        material.validate()?;
        let body_pose = breakable_body_pose(world, id, threshold)?;
        let mesh_in_body = body_pose.relative_pose(mesh_pose);
        self.bodies.insert(
            id,
            Breakable {
                solid,
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

    /// The particle solid of breakable body `id`, with the cracks it has so far.
    pub fn solid(&self, id: BodyId) -> Option<&ParticleSolid> {
        self.bodies.get(&id).map(|b| &b.solid)
    }

    /// Where the particle frame of breakable body `id` sits in its body frame.
    pub fn mesh_in_body(&self, id: BodyId) -> Option<Pose> {
        self.bodies.get(&id).map(|b| b.mesh_in_body)
    }

    /// Every stress event so far, in order.
    pub fn events(&self) -> &[SphFractureEvent] {
        &self.events
    }

    /// Bodies that should have been stressed or broken and could not, with why.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    /// Stresses body `id`, hit by `hit`, with `touching`, every contact it had in the step;
    /// `true` when it broke.
    fn stress_body(
        &mut self,
        context: &mut FractureContext<'_>,
        id: BodyId,
        hit: &Hit,
        touching: &[StepContact],
    ) -> Result<bool, FractureError> {
        let view = context.body(id)?;
        let body_pose = view.pose();
        let mass = view.mass.mass();
        let body = &self.bodies[&id];
        let mesh_pose = body_pose.compose(&body.mesh_in_body);
        let turn = mesh_pose.orientation.inverse();
        let mut contacts = Vec::with_capacity(touching.len());
        for contact in touching {
            let effective_mass = match context.body(contact.other) {
                Ok(o) if o.kind == BodyKind::Dynamic => {
                    let m = o.mass.mass();
                    mass * m / (mass + m)
                }
                _ => mass,
            };
            contacts.push(ContactLoad {
                point: mesh_pose.inverse_transform_point(contact.point),
                impulse: turn * contact.impulse,
                normal: turn * contact.normal,
                depth: contact.depth,
                effective_mass,
            });
        }
        let started = std::time::Instant::now();
        let mut solid = body.solid.clone();
        let particles = solid.len();
        let report = crack_solid(&mut solid, &body.material, &contacts, &self.settings.crack)?;
        let count = pieces(&solid).len();
        let mut event = SphFractureEvent {
            body: id,
            time: context.time(),
            contacts,
            report,
            particles,
            fragments: Vec::new(),
            pieces: count,
            seconds: 0.0,
            momentum_before: ParentMomentum::default(),
            momentum_after: ParentMomentum::default(),
        };
        if count < 2 {
            if self.settings.keep_partial_cracks {
                self.bodies.get_mut(&id).expect("the body is breakable").solid = solid;
            }
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
        let parent = SphParent {
            mesh_pose,
            momentum,
            density: body.material.density,
        };
        let (material, threshold, resolution) = (body.material, body.threshold, body.resolution);
        let fragments = fragment_bodies(&solid, &parent, resolution)?
            .into_iter()
            .map(|fragment| {
                let breakable = Breakable {
                    solid: fragment.solid,
                    material,
                    threshold,
                    mesh_in_body: fragment.desc.pose.relative_pose(&mesh_pose),
                    resolution,
                };
                (fragment.desc, breakable)
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

impl FractureModel for SphFracture {
    fn name(&self) -> &str {
        "sph"
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
