//! Deterministic random streams: the shared generator (`tcplab-rng`), plus the
//! component ids the engine derives its streams from.

pub use tcplab_rng::Rng;

/// Well-known component ids, combined with an index (flow, link) to name a stream.
pub mod stream {
    pub const FLOW_START: u64 = 1;
    pub const LINK_ERRORS: u64 = 2;
    pub const LINK_OUTAGES: u64 = 3;
    pub const UDP_SOURCE: u64 = 4;
    pub const QUEUE: u64 = 5;
}

/// ns-2's default random generator (tools/rng.cc, L'Ecuyer's MRG32k3a) as it
/// runs after `$defaultRNG seed K`: all six state words set to K, each draw
/// one step of the two recurrences. `uniform()` is ns-2's `Random::uniform()`
/// to the last bit, so a component that draws from it where ns-2 draws from
/// its default generator makes the same choices (RED with `red.seed`, the
/// clock phase of `tick_seed`).
#[derive(Clone, Debug)]
pub struct Ns2Rng {
    s: [f64; 6],
}

impl Ns2Rng {
    const M1: f64 = 4294967087.0;
    const M2: f64 = 4294944443.0;

    /// `seed` in 1..2^31-1, as ns-2 accepts.
    pub fn new(seed: u32) -> Self {
        Ns2Rng {
            s: [seed as f64; 6],
        }
    }

    /// The next U(0, 1) (exact in f64: every product is below 2^53).
    pub fn uniform(&mut self) -> f64 {
        let s = &mut self.s;
        let mut p1 = 1403580.0 * s[1] - 810728.0 * s[0];
        p1 -= (p1 / Self::M1).trunc() * Self::M1;
        if p1 < 0.0 {
            p1 += Self::M1;
        }
        s[0] = s[1];
        s[1] = s[2];
        s[2] = p1;
        let mut p2 = 527612.0 * s[5] - 1370589.0 * s[3];
        p2 -= (p2 / Self::M2).trunc() * Self::M2;
        if p2 < 0.0 {
            p2 += Self::M2;
        }
        s[3] = s[4];
        s[4] = s[5];
        s[5] = p2;
        let norm = 1.0 / (Self::M1 + 1.0);
        if p1 > p2 {
            (p1 - p2) * norm
        } else {
            (p1 - p2 + Self::M1) * norm
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ns2Rng;

    #[test]
    fn ns2_rng_draws_what_ns2_draws() {
        // printed by ns-2 2.35 itself: `$defaultRNG seed K`, then
        // `$defaultRNG next-random` (RNG::next() = rand_int(0, MAXINT) =
        // ⌊2^31 · U01⌋, the same U01 Random::uniform() returns)
        for (seed, want) in [
            (
                12345,
                &[272754307, 684032738, 663971912, 1773492633, 475946620][..],
            ),
            (1, &[729236, 1193744747, 30504276][..]),
        ] {
            let mut r = Ns2Rng::new(seed);
            for &w in want {
                assert_eq!((2147483648.0 * r.uniform()) as i64, w, "seed {seed}");
            }
        }
    }
}
