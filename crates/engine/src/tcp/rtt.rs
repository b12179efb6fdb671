//! RTT estimation and the retransmission timeout, as ns-2's `TcpAgent`
//! computes them (RFC 6298 in integer ticks of `tcpTick_`):
//! srtt ← srtt + (m − srtt)/8, rttvar ← rttvar + (|m − srtt| − rttvar)/4,
//! RTO = srtt + 4·rttvar, clamped to [min_rto, max_rto] after backoff.
//! One segment is timed per RTT (no timestamps option), Karn's rule applies.

use crate::time::{secs, SimTime};

const T_SRTT_BITS: u32 = 3; // ns-2 T_SRTT_BITS
const T_RTTVAR_BITS: u32 = 2; // ns-2 T_RTTVAR_BITS
const RTTVAR_EXP: u32 = 2; // ns-2 rttvar_exp_

#[derive(Clone, Debug)]
pub struct RttEstimator {
    tick_s: f64,
    min_rto_s: f64,
    max_rto_s: f64,
    /// Offset of this host's clock ticks (ns-2 `boot_time_ = U[0, tcpTick_)`).
    boot_time_s: f64,
    /// 8 × srtt in ticks.
    t_srtt: i64,
    /// 4 × rttvar in ticks.
    t_rttvar: i64,
    /// Last measured RTT in ticks.
    pub t_rtt: i64,
    /// Current RTO before backoff, seconds.
    pub t_rtxcur_s: f64,
    /// Exponential backoff multiplier (1, 2, 4, ...).
    pub backoff: u32,
    /// `timeout_s()` in nanoseconds, kept current (it is read on every ack).
    pub timeout_ns: SimTime,
    /// A segment is being timed.
    pub active: bool,
    /// The timed segment and when it was sent.
    pub timed_seq: i64,
    pub timed_at: SimTime,
}

impl RttEstimator {
    pub fn new(
        tick_ns: SimTime,
        initial_rto_ns: SimTime,
        min_rto_ns: SimTime,
        max_rto_ns: SimTime,
        boot_time_s: f64,
    ) -> Self {
        let tick_s = secs(tick_ns);
        let mut e = RttEstimator {
            tick_s,
            min_rto_s: secs(min_rto_ns),
            max_rto_s: secs(max_rto_ns),
            boot_time_s,
            t_srtt: 0,                                           // ns-2 srtt_init_ 0
            t_rttvar: ((12.0 / tick_s) as i64) << T_RTTVAR_BITS, // ns-2 rttvar_init_ 12
            t_rtt: 0,
            t_rtxcur_s: secs(initial_rto_ns),
            backoff: 1,
            timeout_ns: 0,
            active: false,
            timed_seq: -1,
            timed_at: 0,
        };
        e.refresh();
        e
    }

    fn refresh(&mut self) {
        self.timeout_ns = crate::time::from_secs(self.timeout_s());
    }

    /// Reset the backoff after a valid RTT sample or a partial ack.
    pub fn reset_backoff(&mut self) {
        if self.backoff != 1 {
            self.backoff = 1;
            self.refresh();
        }
    }

    /// Feed one RTT sample `tao_s` measured at `now`.
    pub fn update(&mut self, now: SimTime, tao_s: f64) {
        let sendtime = secs(now) - tao_s + self.boot_time_s;
        let tickoff = sendtime % self.tick_s;
        self.t_rtt = ((tao_s + tickoff) / self.tick_s) as i64;
        if self.t_rtt < 1 {
            self.t_rtt = 1;
        }
        if self.t_srtt != 0 {
            let mut delta = self.t_rtt - (self.t_srtt >> T_SRTT_BITS);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta -= self.t_rttvar >> T_RTTVAR_BITS;
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = self.t_rtt << T_SRTT_BITS;
            self.t_rttvar = self.t_rtt << (T_RTTVAR_BITS - 1);
        }
        self.t_rtxcur_s = (((self.t_rttvar << (RTTVAR_EXP + (T_SRTT_BITS - T_RTTVAR_BITS)))
            + self.t_srtt)
            >> T_SRTT_BITS) as f64
            * self.tick_s;
        self.refresh();
    }

    /// The timeout to arm now, seconds (ns-2 `rtt_timeout()` with `rfc2988_`).
    pub fn timeout_s(&self) -> f64 {
        let mut t = if self.t_rtxcur_s < self.min_rto_s {
            self.min_rto_s * self.backoff as f64
        } else {
            self.t_rtxcur_s * self.backoff as f64
        };
        if t > self.max_rto_s {
            t = self.max_rto_s;
        }
        if t < 2.0 * self.tick_s {
            t = 2.0 * self.tick_s;
        }
        t
    }

    /// Double the backoff after a timeout (ns-2 `rtt_backoff()`).
    pub fn back_off(&mut self) {
        if self.backoff < 64 || self.timeout_s() < self.max_rto_s {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            self.t_rttvar += self.t_srtt >> T_SRTT_BITS;
            self.t_srtt = 0;
        }
        self.refresh();
    }

    /// RTT variation, seconds (ns-2's `t_rttvar_` holds 4 × rttvar in ticks;
    /// its variable trace prints `t_rttvar_ · tick / 4`, unrounded, as here).
    pub fn rttvar_s(&self) -> f64 {
        self.t_rttvar as f64 * self.tick_s / (1 << T_RTTVAR_BITS) as f64
    }

    /// Smoothed RTT, seconds (0 before the first sample).
    pub fn srtt_s(&self) -> f64 {
        (self.t_srtt >> T_SRTT_BITS) as f64 * self.tick_s
    }
}

/// The clock offset ns-2 gives a TCP agent whose reset draws `boot_time_ =
/// Random::uniform(tcpTick_)` right after `$defaultRNG seed seed`: ns-2's RNG
/// (tools/rng.cc, L'Ecuyer's MRG32k3a) seeded with `seed` in all six state
/// words, one step, times the tick. The scenario key `tick_seed` uses it so
/// both simulators place a flow's clock ticks identically (the ns-2 export
/// reseeds and resets each agent at time 0). `seed` must be in 1..2^31-1.
pub fn ns2_boot_time_s(seed: u32, tick_s: f64) -> f64 {
    tick_s * crate::rng::Ns2Rng::new(seed).uniform()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(10_000_000, 3_000_000_000, 200_000_000, 60_000_000_000, 0.0)
    }

    #[test]
    fn boot_time_is_ns2s_first_draw_after_seeding() {
        // printed by ns-2 2.35 itself: `set r [new RNG]; $r seed K; $r testdouble 1`
        // (RNG::uniform(1.0) = U01, as Random::uniform(tcpTick_) = tcpTick_·U01;
        // ns-2 prints it with "%6e", hence the 7-digit tolerance)
        for (k, want) in [
            (1, 3.395772e-04),
            (2, 6.738822e-04),
            (7, 2.345407e-03),
            (12345, 1.270111e-01),
            (2147483646, 7.564584e-01),
        ] {
            let got = ns2_boot_time_s(k, 1.0);
            assert!(
                (got - want).abs() <= 5e-7 * want,
                "seed {k}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn initial_rto_is_three_seconds() {
        assert_eq!(est().timeout_s(), 3.0);
    }

    #[test]
    fn steady_samples_converge_to_min_rto_floor() {
        // A constant 100 ms RTT: srtt → 10 ticks, rttvar → 0, RTO → max(0.2, 0.1+...) = 0.2 s.
        let mut e = est();
        for i in 1..100u64 {
            e.update(i * 1_000_000_000, 0.1);
        }
        assert!((e.srtt_s() - 0.1).abs() < 0.011);
        assert_eq!(e.timeout_s(), 0.2);
    }

    #[test]
    fn first_sample_sets_rto_to_three_rtts() {
        // srtt = m, rttvar = m/2 → RTO = m + 4·m/2 = 3m (1 s sample → 3 s).
        let mut e = est();
        e.update(2_005_000_000, 1.0);
        assert!((e.t_rtxcur_s - 3.0).abs() < 1e-9);
    }

    #[test]
    fn backoff_doubles_up_to_max_rto() {
        let mut e = est();
        e.update(1_005_000_000, 1.0);
        let base = e.timeout_s();
        e.back_off();
        assert!((e.timeout_s() - 2.0 * base).abs() < 1e-9);
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.timeout_s(), 60.0);
    }
}
