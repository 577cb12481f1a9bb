//! Prescored fracture as a world's fracture model: bodies made breakable with a pattern and a
//! threshold break when a contact impulse on them exceeds it (Su 2009 section 4.2).
//!
//! Each step the model reads the step's contact pairs: the impulse a pair gave a breakable body
//! (collision pass and solve together) is compared with the body's threshold, and the body
//! breaks at the pair with the largest one. The pattern is aligned on the impulse-weighted mean of
//! the pair's contact points, its impact direction along that impulse. The fragments replace the
//! parent and inherit its pattern, so they can break again (Su Fig. 7), with a threshold scaled
//! by [`PrescoredSettings::fragment_threshold_scale`] after a short cooldown.
//!
//! Su 2009 tests the impulse a collision *would* apply and breaks the body before applying it, so
//! the impactor goes on into the fragments; with [`PrescoredSettings::replay_impact`] the model
//! does the same by replaying the impact (crate::impacts).

use std::collections::BTreeMap;
use std::sync::Arc;

use glam::DVec3;
use shatter_collision::SignedDistance;
use shatter_collision::{Geometry, GridSpec, Pose, SdfGrid};
use shatter_engine::{BodyDesc, BodyGeometry, BodyId, FractureContext, FractureModel, SpawnTicket, Spawned, World};

use super::intersect::Debris;
use super::pattern::FracturePattern;
use super::placement::{Alignment, Placement};
use super::shatter::{Parent, ShatterSettings, shatter};
use crate::error::FractureError;
use crate::fragments::ParentMomentum;
use crate::impacts::{Hit, break_hit_bodies, breakable_body_pose, strongest_hits};

/// How the prescored model breaks bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrescoredSettings {
    /// How a pattern is aligned with an impact.
    pub alignment: Alignment,
    /// Fragments below this volume are debris, m^3.
    pub min_fragment_volume: f64,
    /// What happens to debris.
    pub debris: Debris,
    /// Bodies below this volume do not break again, m^3.
    pub min_breakable_volume: f64,
    /// A fragment's threshold is its parent's times this.
    pub fragment_threshold_scale: f64,
    /// Time after a fragment is made before it can break, s.
    pub cooldown: f64,
    /// Distance between surface particles on cut faces, in lattice spacings.
    pub particle_spacing_cells: f64,
    /// Take the breaking impulse back from both bodies so the impactor meets the fragments.
    pub replay_impact: bool,
}

impl Default for PrescoredSettings {
    fn default() -> Self {
        Self {
            alignment: Alignment::Overlay,
            min_fragment_volume: 0.0,
            debris: Debris::Merge,
            min_breakable_volume: 0.0,
            fragment_threshold_scale: 1.0,
            cooldown: 0.1,
            particle_spacing_cells: 1.5,
            replay_impact: true,
        }
    }
}

impl PrescoredSettings {
    /// Checks every value, naming the first bad one.
    pub fn validate(&self) -> Result<(), FractureError> {
        let checks = [
            ("minimum fragment volume (m^3)", self.min_fragment_volume),
            ("minimum breakable volume (m^3)", self.min_breakable_volume),
            ("cooldown (s)", self.cooldown),
        ];
        for (what, value) in checks {
            if !(value.is_finite() && value >= 0.0) {
                return Err(FractureError::invalid(what, value, "zero or a positive finite number"));
            }
        }
        for (what, value) in [
            ("fragment threshold scale", self.fragment_threshold_scale),
            ("particle spacing (cells)", self.particle_spacing_cells),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(FractureError::invalid(what, value, "a positive finite number"));
            }
        }
        Ok(())
    }
}

/// A breakable body's side data.
#[derive(Clone, Debug)]
struct Breakable {
    pattern: Arc<FracturePattern>,
    /// Impulse that breaks it, N s.
    threshold: f64,
    /// Its level set on its lattice, in the lattice's frame.
    lattice: Arc<SdfGrid>,
    /// Where the lattice's frame sits in the body frame.
    lattice_frame: Pose,
    /// Volume of its inside cells, m^3.
    volume: f64,
    /// Simulated time before which it does not break, s.
    ready_at: f64,
}

/// One body breaking.
#[derive(Clone, Debug, PartialEq)]
pub struct FractureEvent {
    /// The body that broke (removed).
    pub parent: BodyId,
    /// Simulated time at the start of the step it broke in, s.
    pub time: f64,
    /// The impulse that broke it, on it, world frame, N s.
    pub impulse: DVec3,
    /// Where it was hit, world frame, m.
    pub point: DVec3,
    /// Where the pattern was placed, parent body frame.
    pub placement: Placement,
    /// The fragments (filled when the step has spawned them).
    pub fragments: Vec<BodyId>,
    /// Each fragment's mass, kg.
    pub fragment_masses: Vec<f64>,
    /// Mass of debris taken out of the world, kg.
    pub removed_mass: f64,
    /// The parent's momentum the fragments share (after taking back the step's contact impulses
    /// when the impact is replayed), world frame.
    pub momentum_before: ParentMomentum,
    /// The fragments' momentum plus that of the removed debris, world frame: equal to
    /// `momentum_before` to round-off.
    pub momentum_after: ParentMomentum,
}

/// The prescored fracture model. Register it with `World::add_fracture_model` after making
/// bodies breakable with [`PrescoredFracture::make_breakable`].
#[derive(Debug)]
pub struct PrescoredFracture {
    settings: PrescoredSettings,
    bodies: BTreeMap<BodyId, Breakable>,
    events: Vec<FractureEvent>,
    /// Events of this step waiting for their fragments' handles, with each fragment's spawn
    /// ticket and side data.
    pending: Vec<(usize, Vec<(SpawnTicket, Breakable)>)>,
    failures: Vec<String>,
}

impl PrescoredFracture {
    /// A model with `settings`; fails naming a bad value.
    pub fn new(settings: PrescoredSettings) -> Result<Self, FractureError> {
        settings.validate()?;
        Ok(Self {
            settings,
            bodies: BTreeMap::new(),
            events: Vec::new(),
            pending: Vec::new(),
            failures: Vec::new(),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &PrescoredSettings {
        &self.settings
    }

    /// Makes dynamic body `id` of `world` break with `pattern` when a contact impulse on it
    /// exceeds `threshold` (N s). A level-set body is cut on its own lattice; an analytic shape is
    /// sampled on a lattice of `cells` cells along its longest side. Fails, changing nothing,
    /// naming a stale or non-dynamic body, an unbounded shape, or a bad threshold or resolution.
    pub fn make_breakable(
        &mut self,
        world: &World,
        id: BodyId,
        pattern: Arc<FracturePattern>,
        threshold: f64,
        cells: usize,
    ) -> Result<(), FractureError> {
        breakable_body_pose(world, id, threshold)?;
        let view = world.body(id)?;
        let collider = &view.record.collider;
        let lattice = match collider.geometry() {
            Geometry::LevelSet(grid) => grid.clone(),
            Geometry::Shape(shape) => Arc::new(shape_lattice(shape, cells)?),
        };
        let entry = breakable(pattern, threshold, lattice, collider.grid_frame(), 0.0);
        self.bodies.insert(id, entry);
        Ok(())
    }

    /// Whether body `id` is breakable (and has not broken).
    pub fn is_breakable(&self, id: BodyId) -> bool {
        self.bodies.contains_key(&id)
    }

    /// Breakable bodies, ascending.
    pub fn breakable_bodies(&self) -> impl Iterator<Item = BodyId> + '_ {
        self.bodies.keys().copied()
    }

    /// Every fracture so far, in order.
    pub fn events(&self) -> &[FractureEvent] {
        &self.events
    }

    /// Bodies that should have broken and could not, with why (the step went on without them).
    pub fn failures(&self) -> &[String] {
        &self.failures
    }
}

/// Padding of a shape's lattice, samples.
const SHAPE_PADDING: usize = 2;

/// The level set of an analytic `shape` on a lattice of `cells` cells along its longest side,
/// body frame. The samples sit at the centres of the cells that tile the shape's box, so a box
/// whose sides are whole numbers of cells (the paper's 150 x 10 x 100 wall) is tiled exactly and
/// its cells carry its exact mass properties. Fails naming an unbounded shape or a resolution
/// outside 4..=1024.
pub fn shape_lattice(shape: &shatter_collision::Shape, cells: usize) -> Result<SdfGrid, FractureError> {
    if !(4..=1024).contains(&cells) {
        return Err(FractureError::invalid("lattice cells", cells, "between 4 and 1024"));
    }
    let bounds = shape
        .bounds()
        .ok_or_else(|| FractureError::input("an unbounded shape (a half-space) cannot break"))?;
    let spacing = bounds.size().max_element() / cells as f64;
    let counts = (bounds.size() / spacing).round().max(DVec3::ONE);
    let origin = bounds.center() - counts * (0.5 * spacing) + DVec3::splat((0.5 - SHAPE_PADDING as f64) * spacing);
    let dims = counts.to_array().map(|n| n as usize + 2 * SHAPE_PADDING);
    let spec = GridSpec::try_new(origin, spacing, dims)?;
    let shape = *shape;
    Ok(SdfGrid::from_fn(spec, move |x| shape.distance(x))?)
}

fn breakable(
    pattern: Arc<FracturePattern>,
    threshold: f64,
    lattice: Arc<SdfGrid>,
    lattice_frame: Pose,
    ready_at: f64,
) -> Breakable {
    let spacing = lattice.spec().spacing;
    let inside = lattice.values().iter().filter(|v| **v < 0.0).count();
    Breakable {
        pattern,
        threshold,
        volume: inside as f64 * spacing * spacing * spacing,
        lattice,
        lattice_frame,
        ready_at,
    }
}

impl FractureModel for PrescoredFracture {
    fn name(&self) -> &str {
        "prescored"
    }

    fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String> {
        self.bodies.retain(|id, _| context.bodies().contains(*id));
        let time = context.time();
        let bodies = &self.bodies;
        let threshold = |id| bodies.get(&id).filter(|b| time >= b.ready_at).map(|b| b.threshold);
        let floor = bodies.values().map(|b| b.threshold).fold(f64::INFINITY, f64::min);
        let hits = strongest_hits(context, floor, threshold, self.settings.replay_impact);
        if hits.is_empty() {
            return Ok(());
        }
        // Without replay the hits list no received impulses, so there is nothing to return.
        let mut failures = Vec::new();
        break_hit_bodies(
            context,
            &hits,
            true,
            "did not break",
            &mut failures,
            |context, id, hit| self.break_body(context, id, hit),
        );
        self.failures.extend(failures);
        Ok(())
    }

    fn spawned(&mut self, spawned: &[Spawned]) {
        let by_ticket: hashbrown::HashMap<u32, BodyId> = spawned.iter().map(|s| (s.ticket.0, s.id)).collect();
        for (event, children) in std::mem::take(&mut self.pending) {
            for (ticket, child) in children {
                // A spawn the world refused is missing from `spawned`: that fragment is not made.
                if let Some(&id) = by_ticket.get(&ticket.0) {
                    self.events[event].fragments.push(id);
                    self.bodies.insert(id, child);
                }
            }
        }
    }
}

impl PrescoredFracture {
    /// Breaks body `id` at `hit`: queues its fragments and its removal, and records the event.
    /// `false` when the body stays whole (too small to break, or the pattern leaves it in one
    /// piece).
    fn break_body(&mut self, context: &mut FractureContext<'_>, id: BodyId, hit: &Hit) -> Result<bool, FractureError> {
        let body = &self.bodies[&id];
        if body.volume < self.settings.min_breakable_volume {
            return Ok(false);
        }
        let view = context.body(id)?;
        // The event works in the lattice's frame; its pose in the world is the body's pose
        // composed with where the lattice sits in the body.
        let body_pose = view.pose();
        let frame = body.lattice_frame;
        let pose = Pose::new(
            body_pose.transform_point(frame.position),
            (body_pose.orientation * frame.orientation).normalize(),
        );
        let particles: Vec<DVec3> = view
            .record
            .collider
            .particles()
            .iter()
            .map(|p| frame.inverse_transform_point(*p))
            .collect();
        let state = *view.state;
        let mass = *view.mass;
        let momentum = hit.before_contacts(ParentMomentum::of(&state, &mass));
        let parent = Parent {
            level_set: &body.lattice,
            particles: &particles,
            pose,
            mass: mass.mass(),
            momentum,
        };
        let spacing = body.lattice.spec().spacing;
        let settings = ShatterSettings {
            alignment: self.settings.alignment,
            min_fragment_volume: self.settings.min_fragment_volume,
            debris: self.settings.debris,
            particle_spacing: self.settings.particle_spacing_cells * spacing,
        };
        let local_point = pose.inverse_transform_point(hit.point);
        let local_normal = pose.orientation.inverse() * hit.impulse;
        let result = shatter(&parent, &body.pattern, local_point, local_normal, &settings)?;
        if result.fragments.len() < 2 {
            // Every other piece was debris merged into one: the body stays whole.
            return Ok(false);
        }
        let mut after = result.removed_momentum;
        let mut children = Vec::with_capacity(result.fragments.len());
        let mut masses = Vec::with_capacity(result.fragments.len());
        let threshold = body.threshold * self.settings.fragment_threshold_scale;
        let ready_at = context.time() + self.settings.cooldown;
        for desc in &result.fragments {
            let (fragment_mass, lattice, lattice_frame) = fragment_parts(desc)?;
            after = after + ParentMomentum::of_desc(desc)?;
            masses.push(fragment_mass.mass());
            children.push(breakable(
                body.pattern.clone(),
                threshold,
                lattice,
                lattice_frame,
                ready_at,
            ));
        }
        context.despawn(id)?;
        let children: Vec<(SpawnTicket, Breakable)> = result
            .fragments
            .into_iter()
            .zip(children)
            .map(|(desc, child)| (context.spawn(desc), child))
            .collect();
        self.events.push(FractureEvent {
            parent: id,
            time: context.time(),
            impulse: hit.impulse,
            point: hit.point,
            placement: result.placement,
            fragments: Vec::new(),
            fragment_masses: masses,
            removed_mass: result.removed_mass,
            momentum_before: momentum,
            momentum_after: after,
        });
        self.pending.push((self.events.len() - 1, children));
        self.bodies.remove(&id);
        Ok(true)
    }
}

/// A fragment description's mass properties, level set and the level set's frame.
fn fragment_parts(desc: &BodyDesc) -> Result<(shatter_integrators::MassProperties, Arc<SdfGrid>, Pose), FractureError> {
    let shatter_engine::MassSource::Properties(mass) = desc.mass else {
        return Err(FractureError::input("a fragment carries its mass properties"));
    };
    let BodyGeometry::Collider(collider) = &desc.geometry else {
        return Err(FractureError::input("a fragment carries a prepared collider"));
    };
    let Geometry::LevelSet(grid) = collider.geometry() else {
        return Err(FractureError::input("a fragment carries a level set"));
    };
    Ok((mass, grid.clone(), collider.grid_frame()))
}
