//! The one place a piece of geometry becomes a body (DESIGN.md): its mass properties, its body
//! frame at the centre of mass on the principal axes, its collider in that frame, and, for a piece
//! broken off a moving body, the velocity that keeps linear and angular momentum.
//!
//! A piece is given as its closed surface and its volume integrals, both in one frame (the
//! *geometry frame*: a tet mesh's, a parent body's) that sits at a pose in the world. The surface
//! only shapes the collider (a level set built from the generalized winding number, so a surface
//! with an edge shared by four faces, where a piece touches itself along an edge, is fine); the
//! mass comes from the integrals, which a tet set gives exactly.
//!
//! Velocities: a fragment of a parent moving with `v_p`, `w_p` about its centre of mass `c_p`
//! moves rigidly with it, `v_f = v_p + w_p x (x_f - c_p)`, `w_f = w_p`. Summed over fragments that
//! partition the parent this gives back `M v_p` and, by the parallel-axis theorem, the parent's
//! angular momentum `I_p w_p`: no momentum is made or lost by breaking.

use std::sync::Arc;

use glam::{DAffine3, DMat3, DVec3};
use shatter_collision::mass_properties::VolumeIntegrals;
use shatter_collision::{BodyMassProperties, Collider, Pose, SdfGrid, TriMesh};
use shatter_engine::{BodyDesc, MassSource};
use shatter_integrators::{MassProperties, RigidState};

use crate::error::FractureError;

/// How finely a fragment's collider resolves it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FragmentResolution {
    /// Level-set cells along the longest side of the fragment's box.
    pub cells: usize,
    /// Distance between surface particles, m.
    pub particle_spacing: f64,
}

/// How the body a fragment comes from moves, world frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParentMotion {
    /// The parent's centre of mass, m.
    pub centre: DVec3,
    /// Its velocity, m/s.
    pub linear_velocity: DVec3,
    /// Its angular velocity, rad/s.
    pub angular_velocity: DVec3,
}

/// A dynamic body for the piece bounded by `surface` with volume integrals `integrals` (both in
/// the geometry frame, which sits at `frame` in the world), of uniform `density` (kg/m^3); at rest,
/// or moving with `parent`. Fails naming a bad density or a surface the level set refuses.
pub fn fragment_desc(
    surface: &TriMesh,
    integrals: VolumeIntegrals,
    density: f64,
    frame: &Pose,
    resolution: FragmentResolution,
    parent: Option<&ParentMotion>,
) -> Result<BodyDesc, FractureError> {
    if !(density.is_finite() && density > 0.0) {
        return Err(FractureError::invalid(
            "density (kg/m^3)",
            density,
            "a positive finite number",
        ));
    }
    let props = BodyMassProperties::from_integrals(integrals, density)?;
    // body = R^T (geometry - c): the surface about the centre of mass, on the principal axes.
    let turn = props.principal_frame.inverse();
    let to_body = DAffine3::from_quat(turn) * DAffine3::from_translation(-props.center_of_mass);
    let collider = Collider::from_mesh(
        &surface.transformed(to_body),
        resolution.cells,
        resolution.particle_spacing,
    )?;
    let placed = Pose::new(
        frame.transform_point(props.center_of_mass),
        (frame.orientation * props.principal_frame).normalize(),
    );
    let mut desc = BodyDesc::dynamic(collider)
        .with_mass_properties(props.mass)
        .with_pose(placed);
    if let Some(parent) = parent {
        let linear = parent.linear_velocity + parent.angular_velocity.cross(placed.position - parent.centre);
        desc = desc.with_velocity(linear, parent.angular_velocity);
    }
    Ok(desc)
}

/// A body about to break into pieces given as closed surfaces in its own geometry frame (a tet
/// mesh's, a particle solid's, a surface mesh's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakingParent {
    /// Where the geometry frame sits in the world.
    pub mesh_pose: Pose,
    /// Its momentum, world frame.
    pub momentum: ParentMomentum,
    /// Its density, kg/m^3.
    pub density: f64,
}

/// A dynamic body per piece (its closed surface and volume integrals, geometry frame), in order,
/// placed where it sits in the parent and moving so that together they carry the parent's
/// momentum ([`assembly_motion`]). Fails naming a bad density or a piece the level set refuses.
pub fn piece_bodies(
    pieces: &[(TriMesh, VolumeIntegrals)],
    parent: &BreakingParent,
    resolution: FragmentResolution,
) -> Result<Vec<BodyDesc>, FractureError> {
    let props = pieces
        .iter()
        .map(|(_, integrals)| BodyMassProperties::from_integrals(*integrals, parent.density))
        .collect::<Result<Vec<_>, _>>()?;
    let motion = assembly_motion(&props, &parent.mesh_pose, &parent.momentum)?;
    pieces
        .iter()
        .map(|(surface, integrals)| {
            fragment_desc(
                surface,
                *integrals,
                parent.density,
                &parent.mesh_pose,
                resolution,
                Some(&motion),
            )
        })
        .collect()
}

/// The linear and angular momentum of a body about to break (or of its pieces), world frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ParentMomentum {
    /// Linear momentum, N s.
    pub linear: DVec3,
    /// Angular momentum about the world origin, N m s.
    pub angular: DVec3,
}

impl ParentMomentum {
    /// The momentum of a body in `state` with `mass` (the integrators' own sums).
    pub fn of(state: &RigidState, mass: &MassProperties) -> Self {
        Self {
            linear: state.linear_momentum(mass),
            angular: state.angular_momentum_about(mass, DVec3::ZERO),
        }
    }

    /// The momentum of the body `desc` describes, as it will be spawned. Fails on a description
    /// without explicit mass properties (every fragment has them).
    pub fn of_desc(desc: &BodyDesc) -> Result<Self, FractureError> {
        let MassSource::Properties(mass) = desc.mass else {
            return Err(FractureError::input("a fragment carries its mass properties"));
        };
        let state = RigidState::moving(
            desc.pose.position,
            desc.pose.orientation,
            desc.linear_velocity,
            desc.angular_velocity,
        );
        Ok(Self::of(&state, &mass))
    }
}

impl std::ops::Add for ParentMomentum {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            linear: self.linear + other.linear,
            angular: self.angular + other.angular,
        }
    }
}

/// The rigid motion of a set of fragments (mass properties `pieces`, in the geometry frame that
/// sits at `frame`) that carries exactly `momentum`: the velocity `V` of their joint centre of
/// mass `c` and the angular velocity `W` with `sum_f (I_f + m_f [r_f]^T [r_f]) W = L - M c x V`,
/// `r_f = c_f - c`. Each fragment then moves with `v_f = V + W x r_f`, `w_f = W`
/// (`ParentMotion { centre: c, .. }`).
///
/// When the pieces have the parent's own mass properties (a level-set body broken on its own
/// lattice) this is the parent's `(v_p, w_p)` and the formula is Su 2009 section 4.2's. When the
/// parent's mass properties came from other geometry (exact integrals of an analytic shape or a
/// mesh) the pieces' cells differ from them by a layer of cells, and `(V, W)` differs from
/// `(v_p, w_p)` by as much; taking `(v_p, w_p)` as they are would instead make or lose momentum.
/// Fails on pieces with no mass.
pub fn assembly_motion(
    pieces: &[BodyMassProperties],
    frame: &Pose,
    momentum: &ParentMomentum,
) -> Result<ParentMotion, FractureError> {
    let world = |piece: &BodyMassProperties| {
        let rotation = DMat3::from_quat(frame.orientation * piece.principal_frame);
        let inertia = rotation * DMat3::from_diagonal(piece.mass.principal_inertia()) * rotation.transpose();
        (piece.mass.mass(), frame.transform_point(piece.center_of_mass), inertia)
    };
    let mass: f64 = pieces.iter().map(|p| p.mass.mass()).sum();
    if !(mass.is_finite() && mass > 0.0) {
        return Err(FractureError::invalid("fragments' total mass (kg)", mass, "positive"));
    }
    let centre = pieces.iter().map(&world).fold(DVec3::ZERO, |c, (m, x, _)| c + x * m) / mass;
    let mut inertia = DMat3::ZERO;
    for piece in pieces {
        let (m, x, own) = world(piece);
        let r = x - centre;
        inertia += own + (DMat3::from_diagonal(DVec3::splat(r.length_squared())) - outer(r, r)) * m;
    }
    let velocity = momentum.linear / mass;
    let spin = momentum.angular - centre.cross(momentum.linear);
    // A single piece of a body spinning about a thin axis may have a near-singular tensor only
    // when it is a line of cells; its inverse is then as good as the cells allow.
    let angular_velocity = if inertia.determinant().abs() > 0.0 {
        inertia.inverse() * spin
    } else {
        DVec3::ZERO
    };
    Ok(ParentMotion {
        centre,
        linear_velocity: velocity,
        angular_velocity,
    })
}

/// A piece of a level-set body: what [`level_set_fragment_desc`] needs, in the geometry frame
/// (the frame of the parent's lattice).
pub struct LevelSetPiece {
    /// Mass properties of the piece (from its cells), geometry frame.
    pub mass: BodyMassProperties,
    /// The piece's level set on a grid in the geometry frame (negative inside, m).
    pub level_set: SdfGrid,
    /// Surface particles, geometry frame.
    pub particles: Vec<DVec3>,
}

/// A dynamic body for a piece cut from a level-set body (Su 2009 section 4.2): body frame at the
/// piece's centre of mass on its principal axes, its particles moved into that frame and its
/// level set kept on the geometry frame's lattice with the transform stored beside it (as the
/// paper does), placed where the geometry frame sits (`frame`) and moving with `motion`. Fails
/// when the level set has no inside or a particle is not finite.
pub fn level_set_fragment_desc(
    piece: LevelSetPiece,
    frame: &Pose,
    motion: &ParentMotion,
) -> Result<BodyDesc, FractureError> {
    let props = piece.mass;
    let turn = props.principal_frame.inverse();
    // body = R^T (geometry - c), so the grid's frame sits at (-R^T c, R^T) in the body frame.
    let grid_frame = Pose::new(-(turn * props.center_of_mass), turn);
    let particles = piece
        .particles
        .iter()
        .map(|p| turn * (*p - props.center_of_mass))
        .collect();
    let collider = Collider::from_level_set_in_frame(Arc::new(piece.level_set), grid_frame, particles)?;
    let placed = Pose::new(
        frame.transform_point(props.center_of_mass),
        (frame.orientation * props.principal_frame).normalize(),
    );
    let linear = motion.linear_velocity + motion.angular_velocity.cross(placed.position - motion.centre);
    Ok(BodyDesc::dynamic(collider)
        .with_mass_properties(props.mass)
        .with_pose(placed)
        .with_velocity(linear, motion.angular_velocity))
}

/// `u v^T`.
fn outer(u: DVec3, v: DVec3) -> DMat3 {
    DMat3::from_cols(u * v.x, u * v.y, u * v.z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prescore::flood_fill;
    use crate::prescore::tests::cube_lattice;
    use glam::{DMat3, DQuat};
    use shatter_collision::mass_properties::{tet_integrals, tet_set_integrals};
    use shatter_engine::MassSource;

    #[test]
    fn fragments_of_a_moving_body_keep_its_mass_and_momentum() {
        let mesh = cube_lattice([4, 3, 2], 0.25);
        let pieces = flood_fill(&mesh, 5, 2).unwrap();
        let density = 800.0;
        let frame = Pose::new(DVec3::new(1.0, 4.0, -2.0), DQuat::from_rotation_x(0.4));
        let whole = BodyMassProperties::from_integrals(tet_integrals(&mesh), density).unwrap();
        let centre = frame.transform_point(whole.center_of_mass);
        let parent = ParentMotion {
            centre,
            linear_velocity: DVec3::new(3.0, -1.0, 0.5),
            angular_velocity: DVec3::new(0.7, 2.0, -1.1),
        };
        let resolution = FragmentResolution {
            cells: 12,
            particle_spacing: 0.1,
        };
        let (mut mass, mut momentum, mut angular) = (0.0, DVec3::ZERO, DVec3::ZERO);
        for piece in 0..pieces.count() {
            let tets: Vec<usize> = pieces.tets_of(piece).collect();
            let integrals = tet_set_integrals(&mesh, &tets);
            let surface = pieces.surface(&mesh, piece);
            let desc = fragment_desc(&surface, integrals, density, &frame, resolution, Some(&parent)).unwrap();
            let MassSource::Properties(props) = desc.mass else {
                panic!("a fragment carries its mass properties")
            };
            let rotation = DMat3::from_quat(desc.pose.orientation);
            let inertia = rotation * DMat3::from_diagonal(props.principal_inertia()) * rotation.transpose();
            mass += props.mass();
            momentum += desc.linear_velocity * props.mass();
            angular += (desc.pose.position - centre).cross(desc.linear_velocity * props.mass())
                + inertia * desc.angular_velocity;
        }
        let parent_rotation = DMat3::from_quat((frame.orientation * whole.principal_frame).normalize());
        let parent_inertia =
            parent_rotation * DMat3::from_diagonal(whole.mass.principal_inertia()) * parent_rotation.transpose();
        let expected_angular = parent_inertia * parent.angular_velocity;
        assert!((mass - whole.mass.mass()).abs() <= 1e-12 * mass);
        assert!((momentum - parent.linear_velocity * mass).length() <= 1e-12 * momentum.length());
        assert!(
            (angular - expected_angular).length() <= 1e-11 * expected_angular.length(),
            "{angular} vs {expected_angular}"
        );
        let bad = fragment_desc(
            &pieces.surface(&mesh, 0),
            tet_integrals(&mesh),
            -1.0,
            &frame,
            resolution,
            None,
        );
        assert!(bad.unwrap_err().to_string().contains("density"));
    }
}
