//! Server-generated ids: UUID v7, time-ordered.
//!
//! The random bits come from a per-thread generator seeded once from the operating system, not
//! from a system call per id: ids are unique names, not secrets (tasks are protected by the
//! caller's scope, not by their ids being hard to guess).

use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

/// 64 bits from the operating system's generator (through uuid's own v7 builder).
fn seed() -> u64 {
    let bytes = uuid::Uuid::now_v7().into_bytes();
    let mut seed = [0u8; 8];
    seed.copy_from_slice(&bytes[8..]);
    u64::from_le_bytes(seed)
}

/// wyrand: a small, fast generator with a full 2^64 period.
fn next_random() -> u64 {
    STATE.with(|state| {
        let s = state.get().wrapping_add(0xa076_1d64_78bd_642f);
        state.set(s);
        let product = u128::from(s) * u128::from(s ^ 0xe703_7ed1_a0b4_28db);
        (product as u64) ^ ((product >> 64) as u64)
    })
}

/// A fresh, time-ordered unique id (UUID v7, 74 random bits).
pub(crate) fn new_id() -> String {
    let millis = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let mut random = [0u8; 10];
    random[..8].copy_from_slice(&next_random().to_le_bytes());
    random[8..].copy_from_slice(&next_random().to_le_bytes()[..2]);
    let id = uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid();
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    id.hyphenated().encode_lower(&mut text).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_v7_unique_and_time_ordered() {
        let ids: Vec<String> = (0..1000).map(|_| new_id()).collect();
        let parsed: Vec<uuid::Uuid> = ids.iter().map(|id| uuid::Uuid::parse_str(id).unwrap()).collect();
        assert!(parsed.iter().all(|id| id.get_version_num() == 7));
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        let millis = |id: &uuid::Uuid| id.get_timestamp().unwrap().to_unix();
        assert!(parsed.windows(2).all(|w| millis(&w[0]) <= millis(&w[1])));
    }
}
