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

use glam::{DAffine3, DVec3};
use shatter_collision::mass_properties::VolumeIntegrals;
use shatter_collision::{BodyMassProperties, Collider, Pose, TriMesh};
use shatter_engine::BodyDesc;

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
