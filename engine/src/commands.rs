//! The command buffer: structural changes queued during the fracture stage and applied right
//! after it, so no stage ever sees the store change under it (Jolt's step listeners may read and
//! write bodies but not add or remove them; DESIGN.md).
//!
//! A fracture model queues spawns (a fragment as a [`BodyDesc`]) and despawns (the parent) through
//! its [`crate::FractureContext`]. The step applies them in the order they were queued, after every
//! model has run and before the integrate stage, so the new bodies move in the same step. A spawn
//! has no [`BodyId`] until it is applied; it is named meanwhile by a [`SpawnTicket`], and the
//! model learns the ticket's body through [`crate::FractureModel::spawned`] (the step's report
//! lists them too). A command that fails (an invalid description, a body despawned twice) is
//! skipped and reported; the others still apply.

use crate::desc::BodyDesc;
use crate::handle::BodyId;

/// Names a queued spawn until it is applied: unique within one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpawnTicket(pub u32);

/// One queued structural change.
#[derive(Clone, Debug)]
pub enum Command {
    /// Add a body.
    Spawn {
        /// The spawn's name until it is applied.
        ticket: SpawnTicket,
        /// What to add.
        desc: Box<BodyDesc>,
    },
    /// Remove a body (and its joints and contacts).
    Despawn {
        /// The body.
        id: BodyId,
    },
}

/// A spawn that was applied: its ticket and the body it became.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spawned {
    /// The ticket [`CommandBuffer::spawn`] returned.
    pub ticket: SpawnTicket,
    /// The new body.
    pub id: BodyId,
}

/// Queued structural changes, applied in order. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct CommandBuffer {
    commands: Vec<Command>,
    next_ticket: u32,
}

impl CommandBuffer {
    /// Queues a new body; returns its ticket.
    pub fn spawn(&mut self, desc: BodyDesc) -> SpawnTicket {
        let ticket = SpawnTicket(self.next_ticket);
        self.next_ticket += 1;
        self.commands.push(Command::Spawn {
            ticket,
            desc: Box::new(desc),
        });
        ticket
    }

    /// Queues the removal of body `id`.
    pub fn despawn(&mut self, id: BodyId) {
        self.commands.push(Command::Despawn { id });
    }

    /// The queued commands, in order.
    pub fn commands(&self) -> &[Command] {
        &self.commands
    }

    /// Number of queued commands.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// The ticket the next spawn will get.
    pub(crate) fn next_ticket(&self) -> u32 {
        self.next_ticket
    }

    /// Drops the commands queued after the first `mark` (those of a fracture model that failed).
    pub(crate) fn truncate(&mut self, mark: usize) {
        self.commands.truncate(mark);
    }

    /// Takes every command out and starts the tickets again (once per step).
    pub(crate) fn take(&mut self) -> Vec<Command> {
        self.next_ticket = 0;
        std::mem::take(&mut self.commands)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_collision::{Collider, Shape, Sphere};

    #[test]
    fn commands_keep_order_and_number_spawns() {
        let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.5).unwrap()), 0.2).unwrap();
        let mut buffer = CommandBuffer::default();
        let first = buffer.spawn(BodyDesc::dynamic(ball.clone()));
        buffer.despawn(BodyId::new(3, 1));
        let second = buffer.spawn(BodyDesc::dynamic(ball));
        assert_eq!((first, second), (SpawnTicket(0), SpawnTicket(1)));
        assert!(matches!(buffer.commands()[1], Command::Despawn { id } if id == BodyId::new(3, 1)));
        buffer.truncate(1);
        assert_eq!(buffer.len(), 1);
        assert_eq!(buffer.take().len(), 1);
        assert!(buffer.is_empty());
        assert_eq!(
            buffer.spawn(BodyDesc::fixed(
                Collider::from_shape(Shape::Sphere(Sphere::try_new(1.0).unwrap()), 0.5).unwrap()
            )),
            SpawnTicket(0)
        );
    }
}
