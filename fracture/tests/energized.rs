//! Energized fracture in whole steps: the energy a break gives back, plain deletion at alpha 0,
//! momentum, the plate of Li 2018 Fig. 4, and pure tension.

use std::sync::{Arc, Mutex};

use glam::DVec3;
use shatter_engine::{BodyId, FractureContext, FractureModel, SolvedJoint, World};
use shatter_fracture::energized::scenes::{Observers, chain, hanging_pair, plate};
use shatter_fracture::energized::{EnergizedBreak, EnergizedFracture, EnergizedSettings, Reinjection, joint_energy};

/// One body's velocities and mass as a probe saw them.
#[derive(Clone, Copy, Debug)]
struct Seen {
    id: BodyId,
    mass: f64,
    inertia: glam::DMat3,
    position: DVec3,
    linear: DVec3,
    angular: DVec3,
}

/// What a probe saw in one step: every dynamic body, and the joints with their rows.
#[derive(Clone, Debug, Default)]
struct Frame {
    bodies: Vec<Seen>,
    joints: Vec<SolvedJoint>,
}

impl Frame {
    fn kinetic_energy(&self) -> f64 {
        self.bodies
            .iter()
            .map(|b| 0.5 * b.mass * b.linear.length_squared() + 0.5 * b.angular.dot(b.inertia * b.angular))
            .sum()
    }

    fn momentum(&self) -> (DVec3, DVec3) {
        self.bodies.iter().fold((DVec3::ZERO, DVec3::ZERO), |(p, l), b| {
            let linear = b.linear * b.mass;
            (p + linear, l + b.position.cross(linear) + b.inertia * b.angular)
        })
    }

    /// `1/2 dv^T M dv` from this frame to `after`.
    fn energy_of_change(&self, after: &Frame) -> f64 {
        self.bodies
            .iter()
            .zip(&after.bodies)
            .map(|(b, a)| {
                assert_eq!(b.id, a.id);
                let (dv, dw) = (a.linear - b.linear, a.angular - b.angular);
                0.5 * b.mass * dv.length_squared() + 0.5 * dw.dot(b.inertia * dw)
            })
            .sum()
    }
}

/// Records a [`Frame`] every step.
struct Probe {
    frames: Arc<Mutex<Vec<Frame>>>,
}

impl FractureModel for Probe {
    fn name(&self) -> &str {
        "probe"
    }

    fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String> {
        let store = context.bodies();
        let bodies = (0..store.len())
            .filter_map(|dense| {
                let id = store.records()[dense].id;
                let view = store.get(id).ok()?;
                (!view.mass.is_infinite()).then(|| Seen {
                    id,
                    mass: view.mass.mass(),
                    inertia: view.mass.inertia_world(view.state.orientation),
                    position: view.state.position,
                    linear: view.state.linear_velocity,
                    angular: view.state.angular_velocity(),
                })
            })
            .collect();
        self.frames.lock().unwrap().push(Frame {
            bodies,
            joints: context.joints().to_vec(),
        });
        Ok(())
    }
}

type Frames = Arc<Mutex<Vec<Frame>>>;

/// A probe to run before the energized model (pass it to the scene) and the frames it records.
fn probe_before() -> (Observers, Frames) {
    let frames = Frames::default();
    (vec![Box::new(Probe { frames: frames.clone() })], frames)
}

/// Adds a probe after the energized model; returns its frames.
fn probe_after(world: &mut World) -> Frames {
    let frames = Frames::default();
    world.add_fracture_model(Box::new(Probe { frames: frames.clone() }));
    frames
}

fn last(frames: &Frames) -> Frame {
    frames.lock().unwrap().last().cloned().unwrap()
}

fn settings(alpha: f64, reinjection: Reinjection) -> EnergizedSettings {
    EnergizedSettings {
        alpha,
        reinjection,
        ..EnergizedSettings::default()
    }
}

const H: f64 = 1.0 / 60.0;

/// The hanging pair after its watched joint was made to break: what the probes saw just before
/// and just after the energized model, in the step it broke.
struct PairBreak {
    before: Frame,
    after: Frame,
    /// The joint's stored energy from its rows as the step left them, J.
    stored: f64,
    breaks: Vec<EnergizedBreak>,
    injected: f64,
    stiffness: f64,
}

/// Builds the hanging pair, gives its boxes `swing` (linear and angular velocity of the upper and
/// the lower box) if any, steps `steps` times, lowers the threshold and steps once more.
fn break_pair(reinjection: Reinjection, alpha: f64, steps: usize, swing: Option<[(DVec3, DVec3); 2]>) -> PairBreak {
    let (observers, before) = probe_before();
    let mut pair = hanging_pair(settings(alpha, reinjection), 2.0e4, observers).unwrap();
    let after = probe_after(&mut pair.world);
    if let Some([(v_upper, w_upper), (v_lower, w_lower)]) = swing {
        pair.world.set_velocity(pair.upper, v_upper, w_upper).unwrap();
        pair.world.set_velocity(pair.lower, v_lower, w_lower).unwrap();
    }
    for _ in 0..steps {
        pair.world.step(H).unwrap();
    }
    let model = pair.world.fracture_model_mut::<EnergizedFracture>().unwrap();
    assert!(model.breaks().is_empty());
    model.set_threshold(pair.joint, 1e-3).unwrap();
    let report = pair.world.step(H).unwrap();
    assert_eq!(report.broken_joints, 1);
    let (before, after) = (last(&before), last(&after));
    let joint = before.joints.iter().find(|j| j.id == pair.joint).unwrap();
    let stored = joint_energy(&joint.rows, H);
    let breaks = pair
        .world
        .fracture_model::<EnergizedFracture>()
        .unwrap()
        .breaks()
        .to_vec();
    assert_eq!(breaks.len(), 1);
    assert!((breaks[0].stored_energy - stored).abs() <= 1e-15 * stored);
    PairBreak {
        before,
        after,
        stored,
        breaks,
        injected: report.energy_injected_by_fracture,
        stiffness: pair.stiffness,
    }
}

#[test]
fn energized_preloaded_pair_at_rest_gains_exactly_alpha_times_the_stored_energy() {
    for reinjection in [Reinjection::PerBody, Reinjection::MomentumConserving] {
        for alpha in [0.0, 0.5, 1.0, 1.5] {
            let broken = break_pair(reinjection, alpha, 240, None);
            let speed = broken
                .before
                .bodies
                .iter()
                .map(|b| b.linear.length() + b.angular.length())
                .fold(0.0, f64::max);
            assert!(speed < 1e-12, "not at rest: {speed}");
            // The stored energy in closed form: the spring carries the lower box's weight,
            // F = m g = 2 x 9.81 N, so E = F^2 / (2 k).
            let weight = 2.0 * 9.81;
            let spring = weight * weight / (2.0 * broken.stiffness);
            let stored = broken.stored;
            assert!((stored - spring).abs() < 1e-6 * spring, "{stored} vs {spring}");
            let gained = broken.after.kinetic_energy() - broken.before.kinetic_energy();
            let change = broken.before.energy_of_change(&broken.after);
            let expected = alpha * stored;
            let tolerance = 1e-9 * stored;
            assert!(
                (gained - expected).abs() <= tolerance,
                "{reinjection:?} alpha {alpha}: gained {gained}, expected {expected}"
            );
            assert!(
                (change - expected).abs() <= tolerance,
                "{reinjection:?} alpha {alpha}: 1/2 dv M dv {change}"
            );
            assert!((broken.injected - expected).abs() <= tolerance);
        }
    }
}

#[test]
fn energized_moving_pair_gains_alpha_e_plus_the_cross_term_the_paper_drops() {
    // The pair swinging about the upper joint, broken after 20 steps.
    let swing = [(DVec3::X * 0.3, DVec3::Z * -3.0), (DVec3::X * 0.9, DVec3::Z * -3.0)];
    for reinjection in [Reinjection::PerBody, Reinjection::MomentumConserving] {
        for alpha in [0.0, 0.5, 1.0, 1.5] {
            let broken = break_pair(reinjection, alpha, 20, Some(swing));
            let (stored, expected) = (broken.stored, alpha * broken.stored);
            let change = broken.before.energy_of_change(&broken.after);
            assert!(
                (change - expected).abs() <= 1e-9 * stored,
                "{reinjection:?} alpha {alpha}: {change} vs {expected}"
            );
            // What the kinetic energy really did: alpha E plus the cross term v^T M dv.
            let gained = broken.after.kinetic_energy() - broken.before.kinetic_energy();
            let cross = broken.breaks[0].cross_term;
            assert!(
                (gained - expected - cross).abs() <= 1e-9 * (stored + cross.abs()),
                "{gained} vs {expected} + {cross}"
            );
            if alpha > 0.0 {
                assert!(
                    cross.abs() > 1e-3 * expected,
                    "the pair moves, so the cross term is there: {cross}"
                );
            } else {
                assert_eq!(cross, 0.0);
            }
        }
    }
}

/// A model that deletes the plate's joints by the energized rule (any row over the threshold) and
/// does nothing else: what "deleting the joint" means.
struct Deleter {
    threshold: f64,
}

impl FractureModel for Deleter {
    fn name(&self) -> &str {
        "deleter"
    }

    fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String> {
        let doomed: Vec<_> = context
            .joints()
            .iter()
            .filter(|j| j.rows.iter().any(|row| row.lambda.abs() > self.threshold))
            .map(|j| j.id)
            .collect();
        for id in doomed {
            context.break_joint(id).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

#[test]
fn energized_alpha_zero_is_bit_for_bit_plain_deletion() {
    let mut energized = plate(settings(0.0, Reinjection::PerBody), 0.5, Vec::new()).unwrap();
    // The same plate whose energized model never breaks anything, with the deleter before it.
    let mut deleted = plate(
        settings(1.0, Reinjection::PerBody),
        0.5,
        vec![Box::new(Deleter { threshold: 4.0 })],
    )
    .unwrap();
    let model = deleted.world.fracture_model_mut::<EnergizedFracture>().unwrap();
    for &joint in &deleted.joints {
        model.set_threshold(joint, 1e300).unwrap();
    }
    let mut broken = 0;
    for step in 0..60 {
        let a = energized.world.step(H).unwrap();
        let b = deleted.world.step(H).unwrap();
        assert_eq!(a.broken_joints, b.broken_joints, "step {step}");
        broken += a.broken_joints;
        assert_eq!(energized.world.state_hash(), deleted.world.state_hash(), "step {step}");
    }
    assert!(
        broken > 50,
        "the plate must break for this to mean anything: {broken} joints"
    );
}

#[test]
fn energized_momentum_conserving_breaks_keep_momentum_to_round_off() {
    for reinjection in [Reinjection::MomentumConserving, Reinjection::PerBody] {
        let (observers, before) = probe_before();
        let mut scene = plate(settings(1.5, reinjection), 0.5, observers).unwrap();
        let after = probe_after(&mut scene.world);
        let (mut breaks, mut largest_change) = (0, 0.0f64);
        for _ in 0..40 {
            let report = scene.world.step(H).unwrap();
            if report.broken_joints == 0 {
                continue;
            }
            breaks += report.broken_joints;
            let (seen_before, seen_after) = (last(&before), last(&after));
            let (p0, l0) = seen_before.momentum();
            let (p1, l1) = seen_after.momentum();
            // Scale: the momenta the kicks carried, |dp| summed over bodies.
            let scale: f64 = seen_before
                .bodies
                .iter()
                .zip(&seen_after.bodies)
                .map(|(b, a)| (a.linear - b.linear).length() * b.mass * (1.0 + b.position.length()))
                .sum();
            assert!(scale > 0.0);
            let change = ((p1 - p0).length() + (l1 - l0).length()) / scale;
            largest_change = largest_change.max(change);
        }
        assert!(breaks > 50, "{breaks}");
        match reinjection {
            Reinjection::MomentumConserving => assert!(largest_change < 1e-13, "{largest_change}"),
            // The paper's kicks do change momentum: the check above can see it.
            Reinjection::PerBody => assert!(largest_change > 1e-3, "{largest_change}"),
        }
    }
}

#[test]
fn energized_plate_fragments_move_faster_the_larger_alpha() {
    let mut energies = Vec::new();
    for alpha in [0.0, 0.5, 1.0, 1.5] {
        let mut scene = plate(settings(alpha, Reinjection::PerBody), 0.5, Vec::new()).unwrap();
        let mut impact = None;
        for step in 0..60 {
            scene.world.step(H).unwrap();
            let touched = scene
                .world
                .contacts()
                .iter()
                .any(|c| c.body_a == scene.sphere || c.body_b == scene.sphere);
            if impact.is_none() && touched {
                impact = Some(step);
            }
            // 0.1 s after the impact: six steps at 60 Hz.
            if impact.is_some_and(|i| step == i + 6) {
                break;
            }
        }
        assert!(impact.is_some(), "the plate never reached the sphere");
        let energy: f64 = scene
            .pieces
            .iter()
            .map(|&id| {
                let body = scene.world.body(id).unwrap();
                body.state.kinetic_energy(body.mass)
            })
            .sum();
        energies.push(energy);
    }
    assert!(
        energies.windows(2).all(|w| w[1] > w[0]),
        "kinetic energy 0.1 s after impact at alpha 0, 0.5, 1, 1.5: {energies:?}"
    );
}

#[test]
fn energized_chain_snaps_with_a_kick_orthogonal_to_the_tension_drawn_from_the_seed() {
    let first_break = |seed: u64| {
        let model = EnergizedSettings {
            seed,
            group_interval: 0.3,
            ..EnergizedSettings::default()
        };
        let mut scene = chain(model, 8, 0.05, Vec::new()).unwrap();
        for _ in 0..600 {
            scene.world.step(H).unwrap();
            let breaks = scene.world.fracture_model::<EnergizedFracture>().unwrap().breaks();
            if !breaks.is_empty() {
                return breaks.to_vec();
            }
        }
        panic!("the chain never snapped");
    };
    let breaks = first_break(5);
    // The rate limit: one joint of the uniformly loaded chain, not all of them.
    assert_eq!(breaks.len(), 1);
    let snap = &breaks[0];
    assert!(snap.drawn_direction, "pure tension leaves the direction to the seed");
    assert!(!snap.impulses.is_empty());
    for kick in &snap.impulses {
        let (force, impulse) = (kick.joint_force, kick.impulse);
        assert!(force.length() > 0.0 && impulse.length() > 0.0);
        let cosine = force.dot(impulse) / (force.length() * impulse.length());
        assert!(cosine.abs() < 1e-9, "kick not orthogonal to the tension: cos {cosine}");
    }
    // Reproducible for a seed, and the seed decides.
    assert_eq!(first_break(5), breaks);
    let other = first_break(6);
    assert_eq!(other[0].joint, snap.joint);
    assert_ne!(other[0].impulses[0].impulse, snap.impulses[0].impulse);
}

#[test]
fn energized_bunny_is_prescored_into_ten_glued_pieces_that_hold_in_flight_and_break_on_landing() {
    use shatter_collision::TriMesh;
    use shatter_collision::topology::inspect;
    use shatter_fracture::energized::scenes::bunny;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/meshes/stanford-bunny.obj");
    let mesh = TriMesh::load(&path).unwrap();
    let mut scene = bunny(settings(1.0, Reinjection::PerBody), &mesh, 0.5, Vec::new()).unwrap();
    // Li's bunny: ten face-connected pieces of a hollowed coarse tet mesh, glued at every vertex
    // of every face two pieces share.
    let cut = &scene.cut;
    assert_eq!((cut.pieces.count(), scene.pieces.len()), (10, 10));
    let anchors = cut.pieces.shared_face_anchors(&cut.tets);
    assert_eq!(scene.joints.len(), anchors.len());
    assert!(anchors.len() > 100, "{}", anchors.len());
    let mut mass = 0.0;
    for (piece, &id) in scene.pieces.iter().enumerate() {
        let surface = cut.pieces.surface(&cut.tets, piece);
        assert_eq!(inspect(&surface).boundary_edges, 0, "piece {piece} is open");
        let body = scene.world.body(id).unwrap();
        let volume: f64 = cut.pieces.tets_of(piece).map(|t| cut.tets.volumes()[t]).sum();
        assert!((body.mass.mass() - 2000.0 * volume).abs() <= 1e-9 * body.mass.mass());
        mass += body.mass.mass();
    }
    // Hollow: well under the solid bunny's mass at the same density and scale.
    let scale = shatter_fracture::energized::scenes::BUNNY_HEIGHT / mesh.bounds().unwrap().size().y;
    let solid = 2000.0 * mesh.signed_volume() * scale.powi(3);
    assert!(
        mass < 0.8 * solid && mass > 0.3 * solid,
        "{mass} kg of a {solid} kg solid"
    );
    // 0.5 m of free fall takes 0.32 s: nothing breaks in the air, the landing breaks it.
    let mut broken_in_flight = 0;
    let mut broken = 0;
    for step in 0..60 {
        scene.world.step(H).unwrap();
        let now = scene
            .world
            .fracture_model::<EnergizedFracture>()
            .unwrap()
            .breaks()
            .len();
        if step < 15 {
            broken_in_flight += now;
        }
        broken += now;
    }
    assert_eq!(broken_in_flight, 0);
    assert!(broken > anchors.len() / 2, "{broken} of {} joints broke", anchors.len());
}
