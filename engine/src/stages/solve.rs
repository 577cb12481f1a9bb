//! Stage `solve_constraints`: contacts and joints as one LCP through the solver crate.
//!
//! Every contact becomes one normal row and two friction rows (`shatter_solver::push_contact_rows`:
//! bounds `[0, inf)`, position error `-depth`, [`BiasMode::Split`] so penetration is pushed out by
//! pseudo velocities that never become kinetic energy, and the Su 2009 energy clamp on every
//! increment, measured against the non-split state the velocities are in: positions have not moved
//! since the start of the step). A sliding contact's first friction row lies along its sliding
//! velocity (see [`SLIDING_SPEED`]); warm-start friction is kept as a world vector and projected
//! onto whatever tangents the rows have. A side contact (normal within about 6 degrees of
//! horizontal, patches.rs) has its friction bounded by last step's normal impulse instead of this
//! solve's, so that boxes of one course cannot hold weight through a squeeze the sweeps make up.
//! Every joint becomes its rows (ball 3, hinge 5, fixed 6) with
//! [`BiasMode::Velocity`] Baumgarte at the joint's softness. All rows go into one projected
//! Gauss-Seidel solve, warm started from last step's impulses: contacts from the contact cache by
//! pair and feature, joints from their stored row impulses. Bodies that joints pull on hard get
//! extra rotational inertia for the solve (tension.rs), without which a heavy chain's links turn
//! back and forth faster than the step resolves. The LCP falls apart into independent
//! islands of dynamic bodies, found from the contact pairs and joints before any row is built
//! (solve_islands.rs); each island's rows are built straight into its own list, in parallel, in
//! chunks of pairs joined in pair order (island_rows.rs), and the islands are solved in
//! parallel, so the rows and their solve are the same whatever the thread count.
//!
//! Solver bodies are the per-awake-body tier of the store, built here: one [`SolverBody`] per awake
//! dynamic body or moving kinematic body that a row touches, world frame; static bodies, sleeping
//! bodies and quarantined ones are the world side of a row ([`NO_BODY`]) or a zero-inverse body.
//! Afterwards the real velocities go back to the store, each contact and joint learns its impulses,
//! and the split velocities are handed to the integrate stage (positions only).
//!
//! [`BiasMode::Split`]: shatter_solver::BiasMode::Split
//! [`BiasMode::Velocity`]: shatter_solver::BiasMode::Velocity

use glam::{DMat3, DVec3};
use shatter_integrators::parallel::{for_each_mut, join};
use shatter_integrators::prefetch::prefetch;
use shatter_integrators::{BodyKind, RigidState};
use shatter_solver::{
    ContactPatch, DEFAULT_CONTACT_ERP, JointAnchor, JointPose, JointRows, JointSpec, NO_BODY, PatchPoint, PatchRows,
    Row, Softness, SolverBody, ball_joint_rows, fixed_joint_rows, hinge_joint_rows, push_patch_rows, row_group_broken,
};
use smallvec::SmallVec;

use crate::contact_cache::PairCache;
use crate::contacts::PairContacts;
use crate::handle::{BodyId, JointId};
use crate::joints::{Joint, JointKind, JointRowImpulse, SolvedJoint};
use crate::stages::collision_pass::as_seen;
use crate::stages::island_rows::ContactChunk;
use crate::stages::patches::{
    PlaneOffsets, distribute_patch, group_patches, hold_friction_bounds, patch_normal, plane_offsets, side_contact,
    warm_start_patch,
};
use crate::stages::solve_islands::IslandScratch;
use crate::stages::tension::add_tension_inertia;
use crate::store::BodyStore;
use crate::world::World;

/// Relative tangential speed above which a contact counts as sliding and its first friction row
/// is laid along the sliding direction, m/s. The solver's friction is a pyramid, exact Coulomb
/// friction only along its two tangents; aligned with the sliding, a sliding box feels `mu N`, not
/// up to `sqrt(2) mu N` (measured before this: a box on a 30 degree slope with `mu = 0.3` slid at
/// 62 percent of the Coulomb speed). Below it (resting contacts), the basis is a fixed function of
/// the normal, so it does not jitter with round-off.
const SLIDING_SPEED: f64 = 1e-4;

/// What the solve did.
#[derive(Clone, Debug, Default)]
pub(crate) struct SolveOutcome {
    /// Rows solved.
    pub(crate) rows: usize,
    /// Contact points warm-started from last step's contact cache.
    pub(crate) warm_started: usize,
    /// The most sweeps (velocity and split passes together) any island ran.
    pub(crate) iterations: usize,
    /// The most velocity sweeps any island ran.
    pub(crate) velocity_iterations: usize,
    /// Islands solved.
    pub(crate) islands: usize,
    /// Energy-clamped increments the solver scaled down or dropped.
    pub(crate) clamped: usize,
    /// Every joint with its row impulses.
    pub(crate) joints: Vec<SolvedJoint>,
    /// Joints whose impulse this step exceeded their breaking impulse, in joint order.
    pub(crate) broken: Vec<JointId>,
    /// Pseudo velocities per body (linear m/s, angular rad/s, world frame), for positions only.
    pub(crate) split: Vec<(BodyId, DVec3, DVec3)>,
    /// Why rows or the whole solve were skipped, if they were.
    pub(crate) failures: Vec<String>,
}

/// The solve stage's lists, kept from step to step for their memory (a pile's rows are megabytes).
#[derive(Debug, Default)]
pub(crate) struct SolveScratch {
    solver: SolverBodies,
    /// Every joint's rows, bodies numbered as solver slots (each island copies its own).
    joint_rows: Vec<Row>,
    joint_slices: JointSlices,
    /// Each solver body's geometric stiffness from the joints pulling on it (tension.rs).
    tension_stiffness: Vec<DMat3>,
    islands: IslandScratch,
    /// The solver slots `(a, b)` of each contact pair.
    pair_slots: Vec<(u32, u32)>,
    /// Where each contact pair's entries are in the contact cache.
    cache_spans: Vec<(usize, usize)>,
    /// Per solver body, the linear (world frame) and angular (body frame) velocities the solve
    /// left it, m/s and rad/s; `None` where they are the ones it came with.
    solved_velocities: Vec<Option<(DVec3, DVec3)>>,
}

/// The solver's bodies and which store body each one is.
#[derive(Debug, Default)]
struct SolverBodies {
    bodies: Vec<SolverBody>,
    /// Dense store index of each solver body.
    owners: Vec<usize>,
    /// Solver index of each store body, [`NO_BODY`] when it has none (yet).
    index: Vec<u32>,
}

impl SolverBodies {
    /// The solver index of store body `dense`, adding it on first use; [`NO_BODY`] for bodies that
    /// are the fixed world for this step (static, sleeping, quarantined).
    fn slot(&mut self, store: &BodyStore, dense: usize) -> u32 {
        let first = self.bodies.len();
        let index = self.number(store, dense);
        self.fill(store, first);
        index
    }

    /// [`SolverBodies::slot`] without the new body's data: a place held for it, which
    /// [`SolverBodies::fill`] fills. Numbering is one pass in order of first use; filling (the
    /// velocities and world inverse inertia of each body) runs in parallel.
    fn number(&mut self, store: &BodyStore, dense: usize) -> u32 {
        if self.index[dense] != NO_BODY {
            return self.index[dense];
        }
        let (kind, _) = as_seen(store, dense);
        if kind == BodyKind::Static {
            return NO_BODY;
        }
        let index = self.bodies.len() as u32;
        self.bodies.push(SolverBody::STATIC);
        self.owners.push(dense);
        self.index[dense] = index;
        index
    }

    /// Fills the solver bodies numbered from `first` on with their store bodies' data, in
    /// parallel (each on its own, so the same bits on any thread count).
    fn fill(&mut self, store: &BodyStore, first: usize) {
        let owners = &self.owners[first..];
        for_each_mut(&mut self.bodies[first..], FILL_CHUNK, &|k, body| {
            let dense = owners[k];
            let (kind, mass) = as_seen(store, dense);
            *body = SolverBody::from_state(kind, &store.states()[dense], &mass);
        });
    }
}

/// Solver bodies one task fills, or reads back after the solve.
const FILL_CHUNK: usize = 128;

/// A contact patch in its island's rows, and what maps its impulses back to its contacts.
#[derive(Debug)]
pub(crate) struct SolvedPatch {
    /// Index of the pair in the step's contacts.
    pub(crate) pair: usize,
    /// Indices of its contacts in the pair.
    pub(crate) contacts: SmallVec<[usize; 4]>,
    /// Its points' offsets from its centre within its plane, m (patches.rs, `plane_offsets`).
    pub(crate) offsets: PlaneOffsets,
    pub(crate) normal: DVec3,
    /// Its rows, numbered in its chunk while built and then among its island's rows.
    pub(crate) rows: PatchRows,
}

/// The joints with rows this step, as three lists by joint slice: which joint, its two solver
/// bodies, and where its rows are among every joint's rows.
#[derive(Debug, Default)]
struct JointSlices {
    joints: Vec<usize>,
    ends: Vec<[u32; 2]>,
    ranges: Vec<(usize, usize)>,
}

impl JointSlices {
    fn clear(&mut self) {
        self.joints.clear();
        self.ends.clear();
        self.ranges.clear();
    }

    /// The rows of joint slice `j` as solved: in its island's rows, or, for a joint in no island
    /// (neither body dynamic), as built in `all` (every joint's rows).
    fn rows<'a>(&self, islands: &'a IslandScratch, all: &'a [Row], j: usize) -> &'a [Row] {
        let (start, end) = self.ranges[j];
        islands.joint_rows(j, end - start).unwrap_or(&all[start..end])
    }
}

/// Solves the step's contacts and joints, writing impulses into `contacts`, the store's velocities
/// and the joints' warm-start impulses.
pub(crate) fn run(world: &mut World, contacts: &mut [PairContacts], dt: f64) -> SolveOutcome {
    let mut scratch = core::mem::take(&mut world.scratch.solve);
    let outcome = run_in(world, contacts, dt, &mut scratch);
    world.scratch.solve = scratch;
    outcome
}

/// [`run`] with the stage's lists in `scratch`.
fn run_in(world: &mut World, contacts: &mut [PairContacts], dt: f64, scratch: &mut SolveScratch) -> SolveOutcome {
    let mut outcome = SolveOutcome::default();
    let store = &world.bodies;
    let SolveScratch {
        solver,
        joint_rows: all_joint_rows,
        joint_slices,
        tension_stiffness,
        islands,
        pair_slots,
        cache_spans,
        solved_velocities,
    } = scratch;
    solver.bodies.clear();
    solver.owners.clear();
    solver.index.clear();
    solver.index.resize(store.len(), NO_BODY);
    all_joint_rows.clear();
    joint_slices.clear();
    // Where each pair's contacts of the last step lie in the contact cache, for their warm start,
    // is found beside the numbering and the islands, which read neither the cache nor those
    // spans. On the step's thread after them, the three took 49 us a step of the aligned
    // 1000-box pile at 60 Hz on two threads, 170 us of the random pile's at 30 Hz and 16 us of
    // the pyramid's; side by side 44, 140 and 13 us (temporary timers, means over three runs).
    let (joints, cache) = (&world.joints, &world.contact_cache);
    let pairs: &[PairContacts] = contacts;
    let (mut joint_failures, ()) = join(
        || {
            // Solver slots in pair order, then joint order, one thread: the numbering is the
            // order of first use.
            pair_slots.clear();
            pair_slots.extend(pairs.iter().map(|pair| {
                let [da, db] = pair.dense.map(|i| i as usize);
                (solver.number(store, da), solver.number(store, db))
            }));
            solver.fill(store, 0);
            let mut joint_failures = Vec::new();
            for (j, joint) in joints.joints().iter().enumerate() {
                match joint_rows(store, solver, joint, dt) {
                    Ok(Some(built)) if !built.rows.is_empty() => {
                        let start = all_joint_rows.len();
                        all_joint_rows.extend(
                            (built.rows.iter().zip(joint.impulses)).map(|(row, impulse)| Row { warm: impulse, ..*row }),
                        );
                        joint_slices.joints.push(j);
                        joint_slices.ends.push([built.rows[0].a, built.rows[0].b]);
                        joint_slices.ranges.push((start, all_joint_rows.len()));
                    }
                    Ok(_) => {}
                    Err(error) => joint_failures.push(format!("{}: {error}", joint.id)),
                }
            }
            // The islands, from the pairs and joints, before any row is built: each island's
            // rows are built straight into its own list (island_rows.rs).
            islands.find(&solver.bodies, pair_slots, &joint_slices.ends);
            joint_failures
        },
        || cache.pair_spans(pairs, cache_spans),
    );
    let bodies = &solver.bodies;
    let up = (-world.settings.gravity).normalize_or_zero();
    islands.build_rows(
        |p, chunk| {
            let remembered = cache.span(cache_spans[p]);
            let step = RowStep { up, dt };
            pair_rows(p, &contacts[p], pair_slots[p], store, bodies, &remembered, step, chunk)
        },
        |p| {
            // What `pair_rows` reads of the pair: its contacts, their cached impulses, and its
            // bodies' solver bodies and states (the last two: 210 -> 201 us a step on two threads
            // for the aligned pile at 60 Hz, as measured in `build_rows`).
            let pair = &contacts[p];
            prefetch(pair);
            cache.span(cache_spans[p]).prefetch();
            let (a, b) = pair_slots[p];
            for slot in [a, b] {
                if let Some(body) = bodies.get(slot as usize) {
                    prefetch(body);
                }
            }
            for dense in pair.dense {
                prefetch(&store.states()[dense as usize]);
            }
        },
    );
    add_tension_inertia(
        store,
        world.joints.joints(),
        &mut solver.bodies,
        &solver.index,
        dt,
        tension_stiffness,
    );
    outcome.failures = islands.finish_rows(&solver.bodies, all_joint_rows, &joint_slices.ranges);
    outcome.failures.append(&mut joint_failures);
    let outside_islands: usize = (joint_slices.ranges.iter().enumerate())
        .filter(|&(j, _)| !islands.has_joint(j))
        .map(|(_, (start, end))| end - start)
        .sum();
    outcome.rows = islands.rows() + outside_islands;
    outcome.warm_started = islands.warm_started();
    if outcome.rows > 0 {
        let solved = islands.solve(&mut solver.bodies, dt, &world.settings.solver);
        outcome.islands = solved.islands;
        outcome.iterations = solved.iterations;
        outcome.velocity_iterations = solved.velocity_iterations;
        outcome.clamped = solved.clamped;
        outcome.failures.extend(solved.failures);
        // Each body's new velocities in parallel (`solved_velocities`), then written to the store
        // one after another.
        let states = world.bodies.states();
        solved_velocities.clear();
        solved_velocities.resize(solver.bodies.len(), None);
        let (bodies, owners) = (&solver.bodies, &solver.owners);
        for_each_mut(solved_velocities, FILL_CHUNK, &|k, out| {
            *out = solved_velocity(&bodies[k], &states[owners[k]]);
        });
        let states = world.bodies.states_mut();
        for (velocities, &dense) in solved_velocities.iter().zip(owners) {
            if let &Some((linear, angular)) = velocities {
                states[dense].linear_velocity = linear;
                states[dense].body_angular_velocity = angular;
            }
        }
        for (split, &dense) in solved.split.iter().zip(&solver.owners) {
            if split.linear != DVec3::ZERO || split.angular != DVec3::ZERO {
                let id = world.bodies.records()[dense].id;
                outcome.split.push((id, split.linear, split.angular));
            }
        }
        islands.visit_patches(contacts, |pair, patch, rows| {
            distribute_patch(rows, &patch.rows, &patch.offsets, patch.normal, pair, &patch.contacts)
        });
        let joints = world.joints.joints_mut();
        for (j, &joint) in joint_slices.joints.iter().enumerate() {
            let rows = joint_slices.rows(islands, all_joint_rows, j);
            let mut impulses = [0.0; 6];
            for (k, row) in rows.iter().enumerate() {
                impulses[k] = row.warm;
            }
            joints[joint].impulses = impulses;
            if let Some(threshold) = joints[joint].breaking_impulse
                && row_group_broken(rows, threshold)
            {
                outcome.broken.push(joints[joint].id);
            }
        }
    }
    outcome.joints = solved_joints(world, islands, all_joint_rows, joint_slices);
    outcome
}

/// Appends the rows of contact pair `p` (`pair`, whose bodies have the solver slots `(a, b)`) to
/// `chunk`: one patch of rows per group of its contacts, warm started from what the contact cache
/// `remembered` of the pair. A pair that neither side can move this step gets none; a patch the
/// solver refuses is named in the chunk's failures.
#[allow(clippy::too_many_arguments)]
fn pair_rows(
    p: usize,
    pair: &PairContacts,
    (a, b): (u32, u32),
    store: &BodyStore,
    bodies: &[SolverBody],
    remembered: &PairCache<'_>,
    RowStep { up, dt }: RowStep,
    chunk: &mut ContactChunk,
) {
    if a == b {
        return; // Neither side can move this step.
    }
    let [da, db] = pair.dense.map(|i| i as usize);
    let (xa, xb) = (store.states()[da].position, store.states()[db].position);
    for group in group_patches(pair) {
        // Pushed one by one: collected, the same points took about 110 instructions more a patch
        // (measured on the 210-box pyramid's 400 patches).
        let mut points: SmallVec<[PatchPoint; 4]> = SmallVec::new();
        for &c in &group {
            let contact = &pair.contacts[c];
            points.push(PatchPoint {
                arm_a: contact.point - xa,
                arm_b: contact.point - xb,
                normal: contact.normal,
                depth: contact.depth,
            });
        }
        let normal = patch_normal(&points);
        let centre = points.iter().map(|p| p.arm_a).sum::<DVec3>() / points.len() as f64;
        let relative = point_velocity(bodies, a, centre) - point_velocity(bodies, b, centre + xa - xb);
        let sliding = relative - normal * normal.dot(relative);
        let patch = ContactPatch {
            a,
            b,
            points: &points,
            normal,
            friction: if apart_through_the_step(&points, bodies, (a, b), dt) {
                0.0
            } else {
                pair.friction
            },
            softness: Softness::rigid(DEFAULT_CONTACT_ERP),
            energy_clamp: true,
            friction_direction: (sliding.length() > SLIDING_SPEED).then_some(sliding),
        };
        match push_patch_rows(&mut chunk.rows, bodies, &patch, dt) {
            Ok(patch_rows) => {
                let offsets = plane_offsets(&points, patch_rows.centre_arm_a, normal);
                chunk.warm_started +=
                    warm_start_patch(&mut chunk.rows, &patch_rows, &offsets, normal, pair, &group, remembered);
                if side_contact(normal, up) {
                    hold_friction_bounds(&mut chunk.rows, &patch_rows, points.len());
                }
                chunk.patches.push(SolvedPatch {
                    pair: p,
                    contacts: group,
                    offsets,
                    normal,
                    rows: patch_rows,
                });
            }
            Err(error) => chunk.failures.push((
                p,
                format!("contacts {group:?} of {} and {}: {error}", pair.body_a, pair.body_b),
            )),
        }
    }
}

/// The velocities to write to a body's `state` after the solve, from its solver body `body`
/// (made from that state, `SolverBody::from_state`): its linear velocity, m/s, and its angular
/// velocity turned into its body frame, rad/s; `None` for a body the solve left alone, which
/// keeps its state's velocities bit for bit (a body of an island the solver refused, one no
/// impulse reached), and for a static or kinematic one. The solve changes only the solver
/// bodies' velocities, and the state's world-frame angular velocity is worked out as
/// `from_state` worked it out (the same bits), so a body left alone is one whose velocities
/// still equal its state's: compared so, rather than with a copy of every solver body made
/// before the solve on the step's thread (7 us of the aligned 1000-box pile's step on two
/// threads, 7 of the random pile's; temporary timers).
fn solved_velocity(body: &SolverBody, state: &RigidState) -> Option<(DVec3, DVec3)> {
    let moved = body.linear_velocity != state.linear_velocity || body.angular_velocity != state.angular_velocity();
    (body.is_dynamic() && moved).then(|| {
        (
            body.linear_velocity,
            state.orientation.inverse() * body.angular_velocity,
        )
    })
}

/// What every pair's rows of a step share: the unit vector against gravity (zero without
/// gravity) and the time step, s.
#[derive(Clone, Copy)]
struct RowStep {
    up: DVec3,
    dt: f64,
}

/// A contact patch whose every point is apart by more than this beyond what the bodies' velocities
/// close along its normal within the step is solved without friction, m (see
/// [`apart_through_the_step`]).
const FRICTIONLESS_GAP: f64 = 1e-3;

/// Whether every point of a patch between solver bodies `a` and `b` is apart by more than its
/// approach within the step `dt` (s) at the bodies' velocities, gravity included, plus
/// [`FRICTIONLESS_GAP`]. Such a patch is a speculative one: its normal rows act only if the solve
/// itself turns the bodies towards each other by more than `FRICTIONLESS_GAP / dt` along it (3
/// cm/s at 30 Hz), and its friction, bounded by `mu` times their impulses, is zero otherwise; so it
/// is solved without friction rows (`mu = 0`), and at worst a patch that the solve does close
/// slides for that one step. A heap of debris is mostly such patches, each of whose two friction
/// rows cost a contact row's sweeps (in Su's Fig. 8, 13 000 of 30 000 patches: a quarter of the
/// rows).
fn apart_through_the_step(points: &[PatchPoint], bodies: &[SolverBody], (a, b): (u32, u32), dt: f64) -> bool {
    points.iter().all(|point| {
        let relative = point_velocity(bodies, a, point.arm_a) - point_velocity(bodies, b, point.arm_b);
        let approach = (-relative.dot(point.normal) * dt).max(0.0);
        -point.depth > approach + FRICTIONLESS_GAP
    })
}

/// Velocity of the material point at world `arm` of solver body `index` (zero for the world).
fn point_velocity(bodies: &[SolverBody], index: u32, arm: DVec3) -> DVec3 {
    bodies.get(index as usize).map_or(DVec3::ZERO, |body| {
        body.linear_velocity + body.angular_velocity.cross(arm)
    })
}

/// The rows of `joint`, or `None` when neither of its bodies can move this step.
fn joint_rows(
    store: &BodyStore,
    solver: &mut SolverBodies,
    joint: &Joint,
    dt: f64,
) -> Result<Option<JointRows>, String> {
    let side = |solver: &mut SolverBodies, body: Option<BodyId>, anchor: DVec3, frame| -> Result<JointAnchor, String> {
        let Some(id) = body else {
            return Ok(JointAnchor {
                body: NO_BODY,
                pose: JointPose::IDENTITY,
                frame: JointPose::new(anchor, frame),
            });
        };
        let dense = store.dense_index(id).map_err(|e| e.to_string())?;
        let state = store.states()[dense];
        Ok(JointAnchor {
            body: solver.slot(store, dense),
            pose: JointPose::new(state.position, state.orientation),
            frame: JointPose::new(anchor, frame),
        })
    };
    let a = side(solver, Some(joint.body_a), joint.local_anchor_a, joint.frame_a)?;
    let b = side(solver, joint.body_b, joint.local_anchor_b, joint.frame_b)?;
    if a.body == b.body {
        return Ok(None);
    }
    let spec = JointSpec {
        a,
        b,
        softness: joint.softness,
        angular_softness: joint.angular_softness,
        breaking_impulse: None,
    };
    let built = match joint.kind {
        JointKind::Ball => ball_joint_rows(&solver.bodies, &spec, dt),
        JointKind::Hinge { .. } => hinge_joint_rows(&solver.bodies, &spec, dt),
        JointKind::Fixed => fixed_joint_rows(&solver.bodies, &spec, dt),
    };
    built.map(Some).map_err(|e| e.to_string())
}

/// Every joint, with its rows' impulses when it had rows this step.
fn solved_joints(world: &World, islands: &IslandScratch, all: &[Row], slices: &JointSlices) -> Vec<SolvedJoint> {
    let anchor = |body: Option<BodyId>, local: DVec3| match body.and_then(|b| world.bodies.get(b).ok()) {
        Some(view) => view.pose().transform_point(local),
        None => local,
    };
    let mut slice_of: Vec<Option<&[Row]>> = vec![None; world.joints.len()];
    for (j, &joint) in slices.joints.iter().enumerate() {
        slice_of[joint] = Some(slices.rows(islands, all, j));
    }
    world
        .joints
        .joints()
        .iter()
        .zip(slice_of)
        .map(|(joint, slice)| {
            let own: SmallVec<[JointRowImpulse; 6]> = slice
                .map(|rows| {
                    rows.iter()
                        .map(|row| JointRowImpulse {
                            jacobian: [
                                row.jacobian.linear_a,
                                row.jacobian.angular_a,
                                row.jacobian.linear_b,
                                row.jacobian.angular_b,
                            ],
                            lambda: row.lambda,
                            erp: row.erp,
                            cfm: row.cfm,
                        })
                        .collect()
                })
                .unwrap_or_default();
            SolvedJoint {
                id: joint.id,
                body_a: joint.body_a,
                body_b: joint.body_b,
                anchor_a: anchor(Some(joint.body_a), joint.local_anchor_a),
                anchor_b: anchor(joint.body_b, joint.local_anchor_b),
                rows: own,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DMat3;

    /// A patch is solved without friction when every point's gap exceeds its approach within
    /// the step by [`FRICTIONLESS_GAP`]: at rest, 2 mm apart but not 0.9 mm; falling at 1 cm/s
    /// (1 mm in the step), 2.5 mm apart but not 1.9 mm; rising, by its gap alone; a point swung
    /// towards the other body by its body's spin keeps friction where the same point at rest does
    /// not; and one point near enough keeps its whole patch's friction.
    #[test]
    fn solve_patches_apart_through_the_step_are_frictionless() {
        let dt = 0.1;
        let body = |linear: DVec3, angular: DVec3| SolverBody {
            linear_velocity: linear,
            angular_velocity: angular,
            inverse_mass: 1.0,
            inverse_inertia: DMat3::IDENTITY,
        };
        let point = |x: f64, depth: f64| PatchPoint {
            arm_a: DVec3::new(x, -0.5, 0.0),
            arm_b: DVec3::new(x, 0.5, 0.0),
            normal: DVec3::Y,
            depth,
        };
        let apart = |points: &[PatchPoint], a: SolverBody| apart_through_the_step(points, &[a], (0, NO_BODY), dt);
        let resting = body(DVec3::ZERO, DVec3::ZERO);
        assert!(apart(&[point(0.0, -0.002)], resting));
        assert!(!apart(&[point(0.0, -0.0009)], resting));
        assert!(!apart(&[point(0.0, 0.001)], resting));
        let falling = body(DVec3::new(0.0, -0.01, 0.0), DVec3::ZERO);
        assert!(apart(&[point(0.0, -0.0025)], falling));
        assert!(!apart(&[point(0.0, -0.0019)], falling));
        let rising = body(DVec3::new(0.0, 1.0, 0.0), DVec3::ZERO);
        assert!(apart(&[point(0.0, -0.0011)], rising));
        assert!(!apart(&[point(0.0, -0.0009)], rising));
        // Turning at -0.1 rad/s about z, the point 0.5 m out along x moves down at 5 cm/s.
        let turning = body(DVec3::ZERO, DVec3::new(0.0, 0.0, -0.1));
        assert!(!apart(&[point(0.5, -0.004)], turning));
        assert!(apart(&[point(0.5, -0.004)], resting));
        assert!(apart(&[point(-0.5, -0.004)], turning));
        assert!(!apart(&[point(-0.5, -0.005), point(0.0, -0.0005)], resting));
    }

    /// A solver body the solve left alone gives nothing to write, so its state keeps its
    /// velocities bit for bit (the round trip through the world frame would not: it is checked
    /// here to change the body-frame angular velocity); one whose linear or angular velocity the
    /// solve changed gives both, the angular one in its body frame; a static or kinematic body,
    /// nothing.
    #[test]
    fn solve_writes_back_only_the_velocities_the_solve_changed() {
        let state = RigidState {
            position: DVec3::new(1.0, 2.0, 3.0),
            orientation: glam::DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
            linear_velocity: DVec3::new(0.1, -0.2, 0.3),
            body_angular_velocity: DVec3::new(0.7, -0.3, 0.11),
        };
        let mass = shatter_integrators::MassProperties::try_new(2.0, DVec3::new(0.5, 0.7, 0.9)).unwrap();
        let body = SolverBody::from_state(BodyKind::Dynamic, &state, &mass);
        assert_eq!(solved_velocity(&body, &state), None);
        let round_trip = state.orientation.inverse() * body.angular_velocity;
        assert_ne!(
            round_trip, state.body_angular_velocity,
            "the round trip is not exact here"
        );
        let pushed = SolverBody {
            linear_velocity: body.linear_velocity + DVec3::X,
            ..body
        };
        assert_eq!(
            solved_velocity(&pushed, &state),
            Some((pushed.linear_velocity, round_trip))
        );
        let spun = SolverBody {
            angular_velocity: DVec3::new(0.0, 0.0, 1.0),
            ..body
        };
        let (linear, angular) = solved_velocity(&spun, &state).unwrap();
        assert_eq!(linear, state.linear_velocity);
        assert!((state.orientation * angular - DVec3::Z).length() < 1e-15);
        for kind in [BodyKind::Static, BodyKind::Kinematic] {
            let other = SolverBody::from_state(kind, &state, &mass);
            let moved = SolverBody {
                linear_velocity: DVec3::Y,
                ..other
            };
            assert_eq!(solved_velocity(&moved, &state), None);
        }
    }
}
