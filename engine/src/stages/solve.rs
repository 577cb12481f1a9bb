//! Stage `solve_constraints`: contacts and joints as one LCP through the solver crate.
//!
//! Every contact becomes one normal row and two friction rows (`shatter_solver::push_contact_rows`:
//! bounds `[0, inf)`, position error `-depth`, [`BiasMode::Split`] so penetration is pushed out by
//! pseudo velocities that never become kinetic energy, and the Su 2009 energy clamp on every
//! increment, measured against the non-split state the velocities are in: positions have not moved
//! since the start of the step). A sliding contact's first friction row lies along its sliding
//! velocity (see [`SLIDING_SPEED`]); warm-start friction is kept as a world vector and projected
//! onto whatever tangents the rows have. Every joint becomes its rows (ball 3, hinge 5, fixed 6) with
//! [`BiasMode::Velocity`] Baumgarte at the joint's softness. All rows go into one projected
//! Gauss-Seidel solve, warm started from last step's impulses: contacts from the contact cache by
//! pair and feature, joints from their stored row impulses. Bodies that joints pull on hard get
//! extra rotational inertia for the solve (tension.rs), without which a heavy chain's links turn
//! back and forth faster than the step resolves. The LCP falls apart into independent
//! islands of dynamic bodies; they are solved in parallel (solve_islands.rs). The contact rows
//! are built in parallel too, in fixed chunks of pairs joined in pair order, so the row list is
//! the same whatever the thread count.
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
use rayon::prelude::*;
use shatter_integrators::BodyKind;
use shatter_solver::{
    ContactPatch, DEFAULT_CONTACT_ERP, JointAnchor, JointPose, JointRows, JointSpec, NO_BODY, PatchPoint, PatchRows,
    Row, Softness, SolverBody, ball_joint_rows, fixed_joint_rows, hinge_joint_rows, push_patch_rows, row_group_broken,
};
use smallvec::SmallVec;

use crate::contact_cache::ContactCache;
use crate::contacts::PairContacts;
use crate::handle::{BodyId, JointId};
use crate::joints::{Joint, JointKind, JointRowImpulse, SolvedJoint};
use crate::stages::collision_pass::as_seen;
use crate::stages::patches::{distribute_patch, group_patches, patch_normal, warm_start_patch};
use crate::stages::solve_islands::{IslandScratch, solve_islands};
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
    /// The solver bodies as they were before the solve.
    before: Vec<SolverBody>,
    rows: Vec<Row>,
    joint_slices: Vec<JointSlice>,
    /// Each solver body's geometric stiffness from the joints pulling on it (tension.rs).
    tension_stiffness: Vec<DMat3>,
    islands: IslandScratch,
    /// The solver slots `(a, b)` of each contact pair.
    pair_slots: Vec<(u32, u32)>,
    /// The rows of each chunk of [`PAIRS_PER_CHUNK`] contact pairs, built side by side.
    chunks: Vec<ContactChunk>,
}

/// Contact pairs whose rows one task builds. Fixed, so the chunks are the same whatever the
/// thread count (and the joined rows are the same in any case).
const PAIRS_PER_CHUNK: usize = 64;

/// The rows of a run of contact pairs, numbered from 0 within the chunk.
#[derive(Debug, Default)]
struct ContactChunk {
    rows: Vec<Row>,
    patches: Vec<SolvedPatch>,
    failures: Vec<String>,
    /// Contact points of its patches warm-started from last step's contact cache.
    warm_started: usize,
    /// Where the chunk's rows start in the step's rows once joined ([`append_chunks`]), and
    /// whether they fit there at all.
    start: u32,
    kept: bool,
}

impl ContactChunk {
    fn clear(&mut self) {
        self.rows.clear();
        self.patches.clear();
        self.failures.clear();
        self.warm_started = 0;
    }
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
        if self.index[dense] != NO_BODY {
            return self.index[dense];
        }
        let (kind, mass) = as_seen(store, dense);
        if kind == BodyKind::Static {
            return NO_BODY;
        }
        let index = self.bodies.len() as u32;
        self.bodies
            .push(SolverBody::from_state(kind, &store.states()[dense], &mass));
        self.owners.push(dense);
        self.index[dense] = index;
        index
    }
}

/// A contact patch in the row list, and what maps its impulses back to its contacts.
#[derive(Debug)]
struct SolvedPatch {
    /// Index of the pair in the step's contacts.
    pair: usize,
    /// Indices of its contacts in the pair.
    contacts: SmallVec<[usize; 4]>,
    points: SmallVec<[PatchPoint; 4]>,
    normal: DVec3,
    rows: PatchRows,
}

/// Where a joint's rows sit in the row list.
#[derive(Debug)]
struct JointSlice {
    joint: usize,
    start: usize,
    end: usize,
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
        before,
        rows,
        joint_slices,
        tension_stiffness,
        islands,
        pair_slots,
        chunks,
    } = scratch;
    solver.bodies.clear();
    solver.owners.clear();
    solver.index.clear();
    solver.index.resize(store.len(), NO_BODY);
    rows.clear();
    joint_slices.clear();
    // Solver slots in pair order, one thread: the numbering is the order of first use.
    pair_slots.clear();
    pair_slots.extend(contacts.iter().map(|pair| {
        let [da, db] = pair.dense.map(|i| i as usize);
        (solver.slot(store, da), solver.slot(store, db))
    }));
    // Each pair's rows depend on that pair alone, so chunks of pairs are built side by side and
    // joined in pair order, their row indices shifted: the same rows as one pair after another.
    let chunk_count = contacts.len().div_ceil(PAIRS_PER_CHUNK);
    if chunks.len() < chunk_count {
        chunks.resize_with(chunk_count, ContactChunk::default);
    }
    let bodies = &solver.bodies;
    let build = |(k, chunk): (usize, &mut ContactChunk)| {
        chunk.clear();
        let first = k * PAIRS_PER_CHUNK;
        // The pairs come in order, so each one's remembered contacts are found from the last's.
        let mut hint = 0;
        for p in first..contacts.len().min(first + PAIRS_PER_CHUNK) {
            pair_rows(
                p,
                &contacts[p],
                pair_slots[p],
                store,
                bodies,
                (&world.contact_cache, &mut hint),
                dt,
                chunk,
            );
        }
    };
    if chunk_count > 1 {
        chunks[..chunk_count].par_iter_mut().enumerate().for_each(build);
    } else {
        chunks[..chunk_count].iter_mut().enumerate().for_each(build);
    }
    let chunks = &mut chunks[..chunk_count];
    append_chunks(chunks, rows, &mut outcome.failures);
    for (j, joint) in world.joints.joints().iter().enumerate() {
        match joint_rows(store, solver, joint, dt) {
            Ok(Some(joint_rows)) => {
                let start = rows.len();
                rows.extend(
                    (joint_rows.rows.iter().zip(joint.impulses)).map(|(row, impulse)| Row { warm: impulse, ..*row }),
                );
                joint_slices.push(JointSlice {
                    joint: j,
                    start,
                    end: rows.len(),
                });
            }
            Ok(None) => {}
            Err(error) => outcome.failures.push(format!("{}: {error}", joint.id)),
        }
    }
    add_tension_inertia(
        store,
        world.joints.joints(),
        &mut solver.bodies,
        &solver.index,
        dt,
        tension_stiffness,
    );
    outcome.rows = rows.len();
    outcome.warm_started = chunks
        .iter()
        .filter(|chunk| chunk.kept)
        .map(|chunk| chunk.warm_started)
        .sum();
    if !rows.is_empty() {
        before.clear();
        before.extend_from_slice(&solver.bodies);
        let solved = solve_islands(&mut solver.bodies, rows, dt, &world.settings.solver, islands);
        outcome.islands = solved.islands;
        outcome.iterations = solved.iterations;
        outcome.clamped = solved.clamped;
        outcome.failures.extend(solved.failures);
        let states = world.bodies.states_mut();
        for ((body, old), &dense) in solver.bodies.iter().zip(before.iter()).zip(&solver.owners) {
            // Bodies of an island the solver refused keep their velocities bit for bit.
            if body.is_dynamic() && body != old {
                states[dense].linear_velocity = body.linear_velocity;
                states[dense].set_angular_velocity(body.angular_velocity);
            }
        }
        for (split, &dense) in solved.split.iter().zip(&solver.owners) {
            if split.linear != DVec3::ZERO || split.angular != DVec3::ZERO {
                let id = world.bodies.records()[dense].id;
                outcome.split.push((id, split.linear, split.angular));
            }
        }
        let rows = &*rows;
        visit_patches(contacts, chunks, |pair, patch| {
            distribute_patch(rows, &patch.rows, &patch.points, patch.normal, pair, &patch.contacts)
        });
        let joints = world.joints.joints_mut();
        for slice in joint_slices.iter() {
            let mut impulses = [0.0; 6];
            for (k, row) in rows[slice.start..slice.end].iter().enumerate() {
                impulses[k] = row.warm;
            }
            joints[slice.joint].impulses = impulses;
            if let Some(threshold) = joints[slice.joint].breaking_impulse
                && row_group_broken(&rows[slice.start..slice.end], threshold)
            {
                outcome.broken.push(joints[slice.joint].id);
            }
        }
    }
    outcome.joints = solved_joints(world, rows, joint_slices);
    outcome
}

/// Appends the rows of contact pair `p` (`pair`, whose bodies have the solver slots `(a, b)`) to
/// `chunk`: one patch of rows per group of its contacts, warm started from `cache` (searched from
/// `hint`, which is left past the pair's entries: [`ContactCache::pair_from`]). A pair that
/// neither side can move this step gets none; a patch the solver refuses is named in the chunk's
/// failures.
#[allow(clippy::too_many_arguments)]
fn pair_rows(
    p: usize,
    pair: &PairContacts,
    (a, b): (u32, u32),
    store: &BodyStore,
    bodies: &[SolverBody],
    (cache, hint): (&ContactCache, &mut usize),
    dt: f64,
    chunk: &mut ContactChunk,
) {
    if a == b {
        return; // Neither side can move this step.
    }
    let [da, db] = pair.dense.map(|i| i as usize);
    let (xa, xb) = (store.states()[da].position, store.states()[db].position);
    let (remembered, next) = cache.pair_from(*hint, pair.body_a, pair.body_b);
    *hint = next;
    for group in group_patches(pair) {
        let points: SmallVec<[PatchPoint; 4]> = group
            .iter()
            .map(|&c| {
                let contact = &pair.contacts[c];
                PatchPoint {
                    arm_a: contact.point - xa,
                    arm_b: contact.point - xb,
                    normal: contact.normal,
                    depth: contact.depth,
                }
            })
            .collect();
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
                chunk.warm_started +=
                    warm_start_patch(&mut chunk.rows, &patch_rows, &points, normal, pair, &group, &remembered);
                chunk.patches.push(SolvedPatch {
                    pair: p,
                    contacts: group,
                    points,
                    normal,
                    rows: patch_rows,
                });
            }
            Err(error) => chunk.failures.push(format!(
                "contacts {group:?} of {} and {}: {error}",
                pair.body_a, pair.body_b
            )),
        }
    }
}

/// Copies the chunks' rows and moves their failures to the ends of the step's lists, chunk after
/// chunk, shifting every row index a chunk holds (friction rows' normal rows, and its patches'
/// rows, which stay in the chunk) by the rows before it. A chunk whose rows would not fit the
/// solver's `u32` row numbers is left out (`kept` false) with a failure naming its patches.
fn append_chunks(chunks: &mut [ContactChunk], rows: &mut Vec<Row>, failures: &mut Vec<String>) {
    // Each chunk's first row's place in `rows`, in chunk order; a chunk left out takes no room.
    let mut end = rows.len();
    for chunk in chunks.iter_mut() {
        chunk.start = end as u32;
        chunk.kept = u32::try_from(end + chunk.rows.len()).is_ok_and(|last| last < u32::MAX);
        if chunk.kept {
            end += chunk.rows.len();
        }
    }
    // Every row is copied on its own, so the copying (tens of megabytes for a heap of debris) is
    // shared among threads, each row finding its chunk by its place (the last chunk starting at
    // or before it: a chunk left out or empty takes no room, so it is never the last one there):
    // the same rows in the same order as one chunk after another.
    let first = rows.len();
    let chunks_ref = &*chunks;
    let shifted = |place: usize| {
        let chunk = &chunks_ref[chunks_ref.partition_point(|chunk| chunk.start as usize <= place) - 1];
        let mut row = chunk.rows[place - chunk.start as usize];
        if let Some(friction) = &mut row.friction {
            friction.normal_row += chunk.start;
        }
        row
    };
    if end - first >= PARALLEL_APPEND_ROWS {
        rows.par_extend((first..end).into_par_iter().map(shifted));
    } else {
        rows.extend((first..end).map(shifted));
    }
    // The patches stay in their chunks (a heap of debris has tens of thousands, hundreds of
    // bytes each), their rows shifted where they are.
    let shift = |chunk: &mut ContactChunk| {
        let offset = chunk.start;
        for patch in chunk.patches.iter_mut().filter(|_| chunk.kept) {
            patch.rows.friction = patch.rows.friction.map(|first| first + offset);
            patch.rows.normals += offset;
            patch.rows.twist = patch.rows.twist.map(|twist| twist + offset);
        }
    };
    if end - first >= PARALLEL_APPEND_ROWS {
        chunks.par_iter_mut().for_each(shift);
    } else {
        chunks.iter_mut().for_each(shift);
    }
    for chunk in chunks.iter_mut() {
        if !chunk.kept {
            failures.push(format!(
                "{} contact patches: more rows than the solver can number (u32)",
                chunk.patches.len()
            ));
            continue;
        }
        failures.append(&mut chunk.failures);
    }
}

/// Calls `visit` with each patch of the kept `chunks` (rows shifted by [`append_chunks`]) and its
/// pair's contacts, patch after patch within a pair (a pair's patches are consecutive, as they
/// were built). Chunk `k` holds the patches of the pairs `k * PAIRS_PER_CHUNK` onwards, which
/// only its patches write, so with many patches the chunks are visited side by side on the pool:
/// the same writes in the same order for every pair.
fn visit_patches(
    contacts: &mut [PairContacts],
    chunks: &[ContactChunk],
    visit: impl Fn(&mut PairContacts, &SolvedPatch) + Sync,
) {
    let visit_chunk = |(k, (pairs, chunk)): (usize, (&mut [PairContacts], &ContactChunk))| {
        let first = k * PAIRS_PER_CHUNK;
        for patch in chunk.patches.iter().filter(|_| chunk.kept) {
            debug_assert!(
                (first..first + pairs.len()).contains(&patch.pair),
                "patch of another chunk"
            );
            visit(&mut pairs[patch.pair - first], patch);
        }
    };
    let patches: usize = chunks.iter().map(|chunk| chunk.patches.len()).sum();
    if patches >= PARALLEL_PATCHES {
        (contacts.par_chunks_mut(PAIRS_PER_CHUNK).zip(chunks.par_iter()))
            .enumerate()
            .for_each(visit_chunk);
    } else {
        (contacts.chunks_mut(PAIRS_PER_CHUNK).zip(chunks.iter()))
            .enumerate()
            .for_each(visit_chunk);
    }
}

/// Patches from which [`visit_patches`] visits the pairs on the pool. Measured on two threads
/// (`stage_times`, 30 Hz), the impulses handed back to the contacts took 40 -> 26 us a step for the
/// 210-box pyramid's 400 patches and 94 -> 52 us for the aligned 1000-box pile's 1000 when this
/// was lowered from 2048.
const PARALLEL_PATCHES: usize = 256;

/// Rows from which [`append_chunks`] copies on the pool: a thousand rows (a quarter of a megabyte)
/// take long enough on one thread to pay for a second (measured at 4096 against 1024 on two
/// threads: the 210-box pyramid's 2800 rows took 49 us a step on one, and its step was 4 percent
/// shorter with this and the islands' renumbering, solve_islands.rs, on the pool).
const PARALLEL_APPEND_ROWS: usize = 1024;

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
fn solved_joints(world: &World, rows: &[Row], slices: &[JointSlice]) -> Vec<SolvedJoint> {
    let anchor = |body: Option<BodyId>, local: DVec3| match body.and_then(|b| world.bodies.get(b).ok()) {
        Some(view) => view.pose().transform_point(local),
        None => local,
    };
    let mut slice_of: Vec<Option<&JointSlice>> = vec![None; world.joints.len()];
    for slice in slices {
        slice_of[slice.joint] = Some(slice);
    }
    world
        .joints
        .joints()
        .iter()
        .zip(slice_of)
        .map(|(joint, slice)| {
            let own: SmallVec<[JointRowImpulse; 6]> = slice
                .map(|slice| {
                    rows[slice.start..slice.end]
                        .iter()
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
    use shatter_solver::{ContactPoint, push_contact_rows};

    /// A chunk of `contacts` contacts between neighbouring bodies of a row of `bodies`, each
    /// contact's three rows numbered from the chunk's start, and one patch naming rows of it.
    fn chunk(bodies: &[SolverBody], first: usize, contacts: usize) -> ContactChunk {
        let mut chunk = ContactChunk::default();
        for k in first..first + contacts {
            let (a, b) = ((k % (bodies.len() - 1)) as u32, (k % (bodies.len() - 1) + 1) as u32);
            let point = ContactPoint::new(a, b, DVec3::X * 0.5, DVec3::NEG_X * 0.5, DVec3::X, 1e-3, 0.4);
            push_contact_rows(&mut chunk.rows, bodies, &point, 1.0 / 30.0).unwrap();
        }
        chunk.patches.push(SolvedPatch {
            pair: first,
            contacts: SmallVec::new(),
            points: SmallVec::new(),
            normal: DVec3::X,
            rows: PatchRows {
                friction: Some(1),
                twist: Some(2),
                normals: 0,
                tangents: [DVec3::Y, DVec3::Z],
                centre_arm_a: DVec3::ZERO,
            },
        });
        chunk.failures.push(format!("chunk from contact {first}"));
        chunk
    }

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

    /// The chunks joined one after another, spelled out: rows copied in order with their friction
    /// rows' normal rows shifted by the rows before them.
    fn joined(chunks: &[ContactChunk]) -> (Vec<Row>, Vec<[u32; 3]>, Vec<String>) {
        let (mut rows, mut patches, mut failures) = (Vec::new(), Vec::new(), Vec::new());
        for chunk in chunks {
            let offset = rows.len() as u32;
            for row in &chunk.rows {
                let mut row = *row;
                if let Some(friction) = row.friction.as_mut() {
                    friction.normal_row += offset;
                }
                rows.push(row);
            }
            for patch in &chunk.patches {
                let twist = patch.rows.twist.map_or(u32::MAX, |t| t + offset);
                let friction = patch.rows.friction.map_or(u32::MAX, |f| f + offset);
                patches.push([friction, patch.rows.normals + offset, twist]);
            }
            failures.extend(chunk.failures.iter().cloned());
        }
        (rows, patches, failures)
    }

    /// Joining chunks gives the rows, patches and failures of joining them one after another,
    /// below and above the size from which the rows are copied on the pool (the larger case on a
    /// pool of two threads, so the copy is shared), empty chunks among them.
    #[test]
    fn solve_append_chunks_matches_joining_chunk_after_chunk() {
        let bodies: Vec<SolverBody> = (0..40)
            .map(|k| SolverBody {
                linear_velocity: DVec3::new(0.1 * k as f64, -1.0, 0.0),
                angular_velocity: DVec3::ZERO,
                inverse_mass: 1.0,
                inverse_inertia: DMat3::IDENTITY * 6.0,
            })
            .collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        // Every seventh chunk (from the fourth) is empty: it takes no room among the rows.
        for (count, contacts) in [(5, 5), (100, 70)] {
            let mut chunks: Vec<ContactChunk> = (0..count)
                .map(|c| chunk(&bodies, c * contacts, if c % 7 == 3 { 0 } else { contacts + c % 3 }))
                .collect();
            let (rows_expected, patches_expected, failures_expected) = joined(&chunks);
            assert_eq!(count >= 100, rows_expected.len() >= PARALLEL_APPEND_ROWS);
            let (mut rows, mut failures) = (Vec::new(), Vec::new());
            pool.install(|| append_chunks(&mut chunks, &mut rows, &mut failures));
            assert!(rows == rows_expected, "{count} chunks: rows differ");
            let patches: Vec<[u32; 3]> = (chunks.iter().flat_map(|chunk| &chunk.patches))
                .map(|p| {
                    [
                        p.rows.friction.unwrap_or(u32::MAX),
                        p.rows.normals,
                        p.rows.twist.unwrap_or(u32::MAX),
                    ]
                })
                .collect();
            assert_eq!(patches, patches_expected);
            assert_eq!(failures, failures_expected);
        }
    }

    /// Visiting the patches chunk by chunk on the pool makes the writes of visiting them one after
    /// another: every pair's contacts see their patches in order (an order-sensitive update), and
    /// pairs without patches are left alone.
    #[test]
    fn solve_visit_patches_matches_visiting_patch_after_patch() {
        use crate::contact_cache::WarmStart;
        use shatter_collision::FeatureId;
        let point = crate::contacts::ContactPoint {
            point: DVec3::ZERO,
            normal: DVec3::Y,
            depth: 0.0,
            feature: FeatureId::of_a(0),
            tangents: [DVec3::X, DVec3::Z],
            collision_impulse: 0.0,
            normal_impulse: 1.0,
            friction_impulse: [0.0; 2],
            warm_start: WarmStart::default(),
        };
        let pairs: usize = 3000;
        let contacts: Vec<PairContacts> = (0..pairs)
            .map(|p| PairContacts {
                body_a: BodyId::new(p as u32, 0),
                body_b: BodyId::new(p as u32 + 1, 0),
                friction: 0.5,
                restitution: 0.0,
                contacts: SmallVec::from_elem(point, 4),
                dense: [p as u32, p as u32 + 1],
            })
            .collect();
        // Every third pair has none, the others one to three patches, in chunks of pairs.
        let patch = |(pair, k): (usize, usize)| SolvedPatch {
            pair,
            contacts: (0..4).filter(|c| (c + k) % 2 == 0 || k == 0).collect(),
            points: SmallVec::new(),
            normal: DVec3::Y,
            rows: PatchRows {
                friction: Some((3 * pair + k) as u32),
                twist: None,
                normals: 0,
                tangents: [DVec3::X, DVec3::Z],
                centre_arm_a: DVec3::ZERO,
            },
        };
        let chunks: Vec<ContactChunk> = (0..pairs.div_ceil(PAIRS_PER_CHUNK))
            .map(|c| ContactChunk {
                patches: (c * PAIRS_PER_CHUNK..pairs.min((c + 1) * PAIRS_PER_CHUNK))
                    .filter(|p| p % 3 != 1)
                    .flat_map(|p| (0..1 + p % 4 % 3).map(move |k| (p, k)))
                    .map(patch)
                    .collect(),
                kept: true,
                ..ContactChunk::default()
            })
            .collect();
        let patches: Vec<&SolvedPatch> = chunks.iter().flat_map(|chunk| &chunk.patches).collect();
        assert!(patches.len() >= PARALLEL_PATCHES, "{} patches", patches.len());
        let visit = |pair: &mut PairContacts, patch: &SolvedPatch| {
            for &c in &patch.contacts {
                let impulse = &mut pair.contacts[c].normal_impulse;
                *impulse = *impulse * 3.0 + f64::from(patch.rows.friction.unwrap());
            }
        };
        let mut expected = contacts.clone();
        for patch in &patches {
            visit(&mut expected[patch.pair], patch);
        }
        let mut visited = contacts.clone();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        pool.install(|| visit_patches(&mut visited, &chunks, visit));
        assert!(visited == expected);
        assert!(visited != contacts, "the visit wrote something");
    }
}
