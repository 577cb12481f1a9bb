//! Snapshots: a world's evolving state as bytes, restored exactly, and its hash.
//!
//! A snapshot holds what the step changes: every body's [`RigidState`] and [`BodyMotion`] (sleep
//! bookkeeping), every joint's warm-start impulses, the contact cache, the manifold cache (the
//! contact manifolds touching pairs may reuse, which the next step depends on), the time and the
//! step count, each section a `bytemuck::Pod` array behind a small header (the manifold cache's
//! behind its own count). It does not hold the
//! structure (which bodies and joints exist, their colliders, materials and settings): restoring
//! requires the same bodies and joints in the same order (checked by handle), which is what
//! rewinding a world or comparing two runs needs. Bytes are in the machine's byte order.
//!
//! [`World::state_hash`] is the 64-bit FNV-1a hash of the snapshot bytes: equal hashes mean
//! bit-identical states (up to hash collisions), the oracle of the determinism tests.

use bytemuck::{Pod, Zeroable};
use shatter_integrators::RigidState;

use crate::contact_cache::CachedContact;
use crate::error::EngineError;
use crate::handle::{BodyId, JointId};
use crate::manifold_cache::{CachedManifold, ManifoldCache};
use crate::store::BodyMotion;
use crate::world::World;

const MAGIC: u64 = u64::from_le_bytes(*b"SHATTER1");
const VERSION: u32 = 2;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
struct Header {
    magic: u64,
    version: u32,
    bodies: u32,
    joints: u32,
    contacts: u32,
    steps: u64,
    time: f64,
}

/// Reads sections off the front of a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take<T: Pod>(&mut self, count: usize, what: &str) -> Result<Vec<T>, EngineError> {
        let size = size_of::<T>()
            .checked_mul(count)
            .filter(|size| *size <= self.bytes.len())
            .ok_or_else(|| {
                EngineError::snapshot(format!(
                    "{what}: {count} entries do not fit in the {} bytes left",
                    self.bytes.len()
                ))
            })?;
        let (head, rest) = self.bytes.split_at(size);
        self.bytes = rest;
        Ok(head
            .chunks_exact(size_of::<T>().max(1))
            .map(bytemuck::pod_read_unaligned)
            .collect())
    }
}

impl World {
    /// The world's evolving state as bytes (see the [module docs](self)).
    pub fn snapshot(&self) -> Vec<u8> {
        let header = Header {
            magic: MAGIC,
            version: VERSION,
            bodies: self.bodies.len() as u32,
            joints: self.joints.len() as u32,
            contacts: self.contact_cache.len() as u32,
            steps: self.steps,
            time: self.time,
        };
        let ids: Vec<BodyId> = self.bodies.ids().collect();
        let joint_ids: Vec<JointId> = self.joints.joints().iter().map(|j| j.id).collect();
        let impulses: Vec<[f64; 6]> = self.joints.joints().iter().map(|j| j.impulses).collect();
        let mut bytes = Vec::new();
        bytes.extend_from_slice(bytemuck::bytes_of(&header));
        bytes.extend_from_slice(bytemuck::cast_slice(&ids));
        bytes.extend_from_slice(bytemuck::cast_slice(self.bodies.states()));
        bytes.extend_from_slice(bytemuck::cast_slice(self.bodies.motion()));
        bytes.extend_from_slice(bytemuck::cast_slice(&joint_ids));
        bytes.extend_from_slice(bytemuck::cast_slice(&impulses));
        bytes.extend_from_slice(bytemuck::cast_slice(self.contact_cache.entries()));
        let manifolds = self.manifold_cache.entries();
        bytes.extend_from_slice(bytemuck::bytes_of(&(manifolds.len() as u64)));
        bytes.extend_from_slice(bytemuck::cast_slice(manifolds));
        bytes
    }

    /// Puts back the state of [`World::snapshot`] bytes. Fails, changing nothing, when the bytes
    /// are not a snapshot, or hold other bodies or joints than the world has, or hold a
    /// non-finite state (naming the body).
    pub fn restore(&mut self, bytes: &[u8]) -> Result<(), EngineError> {
        let mut reader = Reader { bytes };
        let [header]: [Header; 1] = reader
            .take::<Header>(1, "header")?
            .try_into()
            .map_err(|_| EngineError::snapshot("no header"))?;
        if header.magic != MAGIC || header.version != VERSION {
            return Err(EngineError::snapshot(format!(
                "not a version {VERSION} snapshot (magic {:#x}, version {})",
                header.magic, header.version
            )));
        }
        let n = header.bodies as usize;
        if n != self.bodies.len() || header.joints as usize != self.joints.len() {
            return Err(EngineError::snapshot(format!(
                "it holds {n} bodies and {} joints, the world {} and {}",
                header.joints,
                self.bodies.len(),
                self.joints.len()
            )));
        }
        if !(header.time.is_finite() && header.time >= 0.0) {
            return Err(EngineError::snapshot(format!("time {} s is not valid", header.time)));
        }
        let ids: Vec<BodyId> = reader.take(n, "body handles")?;
        let states: Vec<RigidState> = reader.take(n, "body states")?;
        let motion: Vec<BodyMotion> = reader.take(n, "body motion")?;
        let joint_ids: Vec<JointId> = reader.take(header.joints as usize, "joint handles")?;
        let impulses: Vec<[f64; 6]> = reader.take(header.joints as usize, "joint impulses")?;
        let cache: Vec<CachedContact> = reader.take(header.contacts as usize, "contact cache")?;
        let [count]: [u64; 1] = reader
            .take::<u64>(1, "manifold count")?
            .try_into()
            .map_err(|_| EngineError::snapshot("no manifold count"))?;
        let count = usize::try_from(count).map_err(|_| EngineError::snapshot(format!("{count} manifolds")))?;
        let manifolds: Vec<CachedManifold> = reader.take(count, "manifold cache")?;
        if !reader.bytes.is_empty() {
            return Err(EngineError::snapshot(format!("{} bytes left over", reader.bytes.len())));
        }
        if let Some((id, _)) = ids.iter().zip(self.bodies.ids()).find(|(a, b)| a != &b) {
            return Err(EngineError::snapshot(format!(
                "{id} is not where the world has it; restore into the world the snapshot came from"
            )));
        }
        if let Some((id, _)) = joint_ids.iter().zip(self.joints.joints()).find(|(a, b)| **a != b.id) {
            return Err(EngineError::snapshot(format!("{id} is not where the world has it")));
        }
        if let Some((id, state)) = ids.iter().zip(&states).find(|(_, s)| !s.is_valid()) {
            let detail = state.validate().err().map_or_else(String::new, |e| e.to_string());
            return Err(EngineError::snapshot(format!("state of {id}: {detail}")));
        }
        let known = BodyMotion::AWAKE | BodyMotion::QUARANTINED;
        if let Some((id, m)) = ids
            .iter()
            .zip(&motion)
            .find(|(_, m)| m.flags & !known != 0 || !(m.resting_time.is_finite() && m.resting_time >= 0.0))
        {
            return Err(EngineError::snapshot(format!("sleep data of {id} is not valid: {m:?}")));
        }
        if let Some(bad) = impulses.iter().find(|i| !i.iter().all(|v| v.is_finite())) {
            return Err(EngineError::snapshot(format!("joint impulses {bad:?} are not finite")));
        }
        let mut contact_cache = self.contact_cache.clone();
        contact_cache.replace(cache).map_err(EngineError::snapshot)?;
        let mut manifold_cache = ManifoldCache::default();
        manifold_cache.replace(manifolds).map_err(EngineError::snapshot)?;
        // Every check passed: now write.
        self.contact_cache = contact_cache;
        self.manifold_cache = manifold_cache;
        for (dense, state) in states.iter().enumerate() {
            *self.bodies.edit_state(dense) = *state;
        }
        self.bodies.update_motion(|records| records.copy_from_slice(&motion));
        for (joint, impulses) in self.joints.joints_mut().iter_mut().zip(impulses) {
            joint.impulses = impulses;
        }
        self.time = header.time;
        self.steps = header.steps;
        self.contacts.clear();
        Ok(())
    }

    /// 64-bit FNV-1a hash of [`World::snapshot`]: equal for bit-identical world states.
    pub fn state_hash(&self) -> u64 {
        fnv1a(&self.snapshot())
    }
}

/// The 64-bit FNV-1a hash of `bytes` (Fowler, Noll and Vo; offset basis and prime from the
/// reference implementation).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_fnv1a_matches_reference_vectors() {
        // Test vectors from the FNV reference page.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
