//! The deterministic generator shared with the packet engine (`tcplab-rng`):
//! xoshiro256** seeded through splitmix64. Same seed ⇒ same stream everywhere.

pub use tcplab_rng::Rng;
