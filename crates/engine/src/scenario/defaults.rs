//! Defaults of the scenario schema.

pub(crate) fn default_seed() -> u64 {
    1
}

pub(crate) fn one() -> u32 {
    1
}
pub(crate) fn default_packet_size() -> u32 {
    1000
}

pub(crate) fn default_reference() -> String {
    "capacity".into()
}

/// Advertised window when the scenario gives none: large enough that a
/// greedy flow is never receiver-limited (ns-2's own default, 20, would cap
/// the papers' flows; the ns-2 export always writes the value explicitly).
pub const DEFAULT_WINDOW: u32 = 100_000;
