//! Li 2018 Fig. 5: a chain pulled apart until it snaps.

use glam::DVec3;
use shatter_engine::{BodyDesc, BodyId, JointId, World, WorldSettings};
use shatter_solver::Softness;

use super::{Observers, box_collider, world_with_model};
use crate::energized::{Breakable, EnergizedSettings, Glue, glue};
use crate::error::FractureError;
use crate::prescore::PieceAnchor;

/// Li 2018 Fig. 5: a straight chain of links between two end cubes that are driven apart slowly,
/// without gravity, so every joint is in pure tension until one snaps.
pub struct Chain {
    /// The world, with its energized model.
    pub world: World,
    /// The links, from the left end.
    pub links: Vec<BodyId>,
    /// The two kinematic end cubes (left, right).
    pub ends: [BodyId; 2],
    /// The joints, from the left: end-link, link-link, ..., link-end; all in rate-limit group 0.
    pub joints: Vec<JointId>,
}

/// Length of one chain link along the chain, m.
pub const CHAIN_LINK: f64 = 0.2;

/// The [`Chain`] of `links` links (0.2 x 0.1 x 0.1 m, 2 kg), glued end to end on the x axis by
/// fixed joints of 1e4 N/m (angular 1e2 N m/rad) breaking above 2 N s, the end cubes moving apart
/// at `speed` m/s each.
pub fn chain(model: EnergizedSettings, links: usize, speed: f64, observers: Observers) -> Result<Chain, FractureError> {
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    settings.gravity = DVec3::ZERO;
    let mut world = world_with_model(settings, model, observers)?;
    let half = DVec3::new(CHAIN_LINK / 2.0, 0.05, 0.05);
    let length = CHAIN_LINK * links as f64;
    let mut bodies = Vec::with_capacity(links + 2);
    let end = DVec3::splat(0.1);
    let left = world.add_body(
        BodyDesc::kinematic(box_collider(end)?)
            .with_position(DVec3::new(-length / 2.0 - 0.1, 0.0, 0.0))
            .with_velocity(DVec3::new(-speed, 0.0, 0.0), DVec3::ZERO),
    )?;
    bodies.push(left);
    let mut chain_links = Vec::with_capacity(links);
    for k in 0..links {
        let x = -length / 2.0 + (k as f64 + 0.5) * CHAIN_LINK;
        let link = world.add_body(
            BodyDesc::dynamic(box_collider(half)?)
                .with_mass(2.0)
                .with_position(DVec3::X * x),
        )?;
        chain_links.push(link);
        bodies.push(link);
    }
    let right = world.add_body(
        BodyDesc::kinematic(box_collider(end)?)
            .with_position(DVec3::new(length / 2.0 + 0.1, 0.0, 0.0))
            .with_velocity(DVec3::new(speed, 0.0, 0.0), DVec3::ZERO),
    )?;
    bodies.push(right);
    let anchors: Vec<PieceAnchor> = (0..=links)
        .map(|k| PieceAnchor {
            pieces: [k as u32, k as u32 + 1],
            point: DVec3::X * (-length / 2.0 + k as f64 * CHAIN_LINK),
        })
        .collect();
    let glue_rule = Glue {
        softness: Softness::SpringDamper {
            stiffness: 1.0e4,
            damping: 2.0 * (1.0e4 * 2.0f64).sqrt(),
        },
        angular_softness: Softness::SpringDamper {
            stiffness: 1.0e2,
            damping: 2.0 * (1.0e2 * 2.0 * CHAIN_LINK * CHAIN_LINK / 12.0).sqrt(),
        },
        breakable: Breakable::new(2.0).in_group(0),
    };
    let joints = glue(&mut world, &bodies, &anchors, &glue_rule)?;
    Ok(Chain {
        world,
        links: chain_links,
        ends: [left, right],
        joints,
    })
}
