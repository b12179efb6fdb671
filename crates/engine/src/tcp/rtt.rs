//! RTT estimation and the retransmission timeout, as ns-2's `TcpAgent`
//! computes them (RFC 6298 in integer ticks of `tcpTick_`):
//! srtt ← srtt + (m − srtt)/8, rttvar ← rttvar + (|m − srtt| − rttvar)/4,
//! RTO = srtt + 4·rttvar, clamped to [min_rto, max_rto] after backoff.
//! One segment is timed per RTT (no timestamps option), Karn's rule applies.
//!
//! Under the `linux` profile the estimator is Linux's instead
//! ([`LinuxRtt`]): `tcp_rtt_estimator` and `__tcp_set_rto` of
//! `net/ipv4/tcp_input.c`, in microseconds.

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
    t_rtt: i64,
    /// Current RTO before backoff, seconds.
    t_rtxcur_s: f64,
    /// Exponential backoff multiplier (1, 2, 4, ...).
    backoff: u32,
    /// `timeout_s()` in nanoseconds, kept current (it is read on every ack).
    timeout_ns: SimTime,
    /// A segment is being timed.
    active: bool,
    /// The timed segment and when it was sent.
    timed_seq: i64,
    timed_at: SimTime,
    /// Linux's estimator (the `linux` profile), if it replaces ns-2's.
    linux: Option<LinuxRtt>,
}

/// Linux's RTT estimator and RTO (`tcp_rtt_estimator`, `tcp_set_rto`,
/// `__tcp_set_rto`, `tcp_bound_rto` in `net/ipv4/tcp_input.c`), all in µs:
///
/// * srtt as RFC 6298 (gain 1/8), kept as 8·srtt;
/// * `mdev` the mean deviation (gain 1/4), kept as 4·mdev — but when a
///   sample is *below* srtt its deviation enters with gain 1/32 instead
///   (a falling RTT must not raise the RTO: the Eifel-like rule);
/// * `mdev_max`: the largest 4·mdev within the current RTT, restarted at
///   `TCP_RTO_MIN` once per RTT (when the cumulative ack passes
///   `rtt_seq`, the next packet to send when the last RTT began);
/// * `rttvar` follows `mdev_max` up at once and down by 1/4 of the gap
///   per RTT, so it never goes below `TCP_RTO_MIN`;
/// * RTO = srtt + rttvar, at most `TCP_RTO_MAX`, doubled per backoff.
///
/// The first sample m sets srtt = m, 4·mdev = 2m and rttvar =
/// max(2m, `TCP_RTO_MIN`). For a steady RTT R, 4·mdev decays to 0 and
/// rttvar to `TCP_RTO_MIN`: RTO → R + 200 ms, where ns-2's (and RFC 6298's
/// with its 1 s floor lowered to 200 ms) gives max(R + 4·rttvar, 200 ms).
/// Jiffies are not modelled (`usecs_to_jiffies` rounds the RTO up to one).
#[derive(Clone, Debug, Default)]
pub struct LinuxRtt {
    /// 8 × srtt, µs (0: no sample yet).
    srtt_us: i64,
    /// 4 × mdev, µs.
    mdev_us: i64,
    mdev_max_us: i64,
    rttvar_us: i64,
    /// The packet whose cumulative ack ends this RTT (`rtt_seq`).
    rtt_seq: i64,
    /// `TCP_RTO_MIN` (the profile's `min_rto`), µs.
    rto_min_us: i64,
}

impl LinuxRtt {
    /// One sample `m_us` on an ack whose cumulative ack is `una` (the first
    /// packet not acked), `nxt` the next packet to send.
    pub fn sample(&mut self, m_us: i64, una: i64, nxt: i64) {
        let mut m = m_us.max(1);
        let mut srtt = self.srtt_us;
        if srtt != 0 {
            m -= srtt >> 3; // the error of the estimate
            srtt += m; // srtt = 7/8 srtt + 1/8 m
            if m < 0 {
                m = -m - (self.mdev_us >> 2);
                if m > 0 {
                    m >>= 3; // a falling RTT: gain 1/32
                }
            } else {
                m -= self.mdev_us >> 2;
            }
            self.mdev_us += m; // 4·mdev = 3/4 · 4·mdev + |error|
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if una > self.rtt_seq {
                // an RTT has passed: rttvar decays toward this RTT's maximum
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = nxt;
                self.mdev_max_us = self.rto_min_us;
            }
        } else {
            srtt = m << 3;
            self.mdev_us = m << 1; // rto = 3·m
            self.rttvar_us = self.mdev_us.max(self.rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = nxt;
        }
        self.srtt_us = srtt.max(1);
    }

    /// `__tcp_set_rto`: srtt + rttvar, µs.
    pub fn rto_us(&self) -> i64 {
        (self.srtt_us >> 3) + self.rttvar_us
    }
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
            linux: None,
        };
        e.refresh();
        e
    }

    fn refresh(&mut self) {
        self.timeout_ns = crate::time::from_secs(self.timeout_s());
    }

    /// Exponential backoff multiplier (1, 2, 4, ...).
    #[inline]
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// The retransmission timeout, backoff included, ns.
    #[inline]
    pub fn timeout_ns(&self) -> SimTime {
        self.timeout_ns
    }

    /// Linux's estimator replaces ns-2's.
    #[inline]
    pub fn is_linux(&self) -> bool {
        self.linux.is_some()
    }

    /// Linux's smoothed RTT, ns, whole µs (0: none yet, or ns-2's estimator).
    #[inline]
    pub fn linux_srtt_ns(&self) -> SimTime {
        self.linux.as_ref().map_or(0, |l| l.srtt_us >> 3) as SimTime * 1000
    }

    /// New data, packet `seqno`, leaves at `now`: if no packet is being
    /// timed, time this one (ns-2 `output()`: one timed packet per RTT; it
    /// only moves forward, Karn's rule keeping retransmissions out).
    #[inline]
    pub fn time_new(&mut self, seqno: i64, now: SimTime) {
        if !self.active {
            self.active = true;
            if seqno > self.timed_seq {
                self.timed_seq = seqno;
                self.timed_at = now;
            }
        }
    }

    /// A retransmission: the timed packet may arrive as either copy, so it
    /// gives no sample (Karn's rule).
    #[inline]
    pub fn stop_timing(&mut self) {
        self.active = false;
    }

    /// The cumulative ack `ack` covers the timed packet: timing stops and
    /// the measured time is returned, ns (to be fed to the estimator).
    #[inline]
    pub fn sample_ack(&mut self, ack: i64, now: SimTime) -> Option<SimTime> {
        if self.active && ack >= self.timed_seq {
            self.active = false;
            Some(now - self.timed_at)
        } else {
            None
        }
    }

    /// A partial ack covered the timed packet, which a retransmission may
    /// have delivered: no sample (Karn's rule), timing stops and the backoff
    /// ends (RFC 6298 §5.7's fresh start). True if it did.
    #[inline]
    // RFC 6298 §3: "RTT samples MUST NOT be made using segments that were retransmitted (and thus
    // for which it is ambiguous whether the reply was for the first instance of the packet or a
    // later instance)."
    pub fn discard_sample(&mut self, ack: i64) -> bool {
        if self.active && ack >= self.timed_seq {
            self.active = false;
            self.reset_backoff();
            true
        } else {
            false
        }
    }

    /// Use Linux's estimator (the `linux` profile) from now on.
    pub fn use_linux(&mut self) {
        self.linux = Some(LinuxRtt {
            rto_min_us: (self.min_rto_s * 1e6).round() as i64,
            ..Default::default()
        });
    }

    /// Feed Linux's estimator one sample of `m` ns (see [`LinuxRtt::sample`]);
    /// a sample ends any backoff (`tcp_ack_update_rtt`).
    pub fn update_linux(&mut self, m: SimTime, una: i64, nxt: i64) {
        let l = self.linux.as_mut().expect("Linux's estimator");
        l.sample((m / 1000) as i64, una, nxt);
        self.t_rtxcur_s = l.rto_us() as f64 * 1e-6;
        self.backoff = 1;
        self.refresh();
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
        let tickoff = rem_exact(sendtime, self.tick_s);
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
        if self.linux.is_some() {
            // Linux's RTO has its floor inside (rttvar ≥ TCP_RTO_MIN)
            return (self.t_rtxcur_s * self.backoff as f64).min(self.max_rto_s);
        }
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
    // RFC 6298 §5: "(5.5) The host MUST set RTO <- RTO * 2 ("back off the timer")."
    pub fn back_off(&mut self) {
        if self.linux.is_some() {
            // `icsk_backoff++`; the RTO doubles up to TCP_RTO_MAX
            if self.timeout_s() < self.max_rto_s {
                self.backoff <<= 1;
            }
            return self.refresh();
        }
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
        if let Some(l) = &self.linux {
            // the kernel reports mdev (`tcpi_rttvar` = mdev_us / 4)
            return (l.mdev_us >> 2) as f64 * 1e-6;
        }
        self.t_rttvar as f64 * self.tick_s / (1 << T_RTTVAR_BITS) as f64
    }

    /// Smoothed RTT, seconds (0 before the first sample).
    pub fn srtt_s(&self) -> f64 {
        if let Some(l) = &self.linux {
            return (l.srtt_us >> 3) as f64 * 1e-6;
        }
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

/// `x % y` (C's `fmod`), bit for bit, without the software `fmod` the
/// release build links (compiler_builtins' shift-and-subtract loop, one
/// step per bit of x / y: ~100 instructions for a send time of 1e4 s on a
/// 10 ms tick). For 0 ≤ x < 2^52·y and y in a range where nothing under- or
/// overflows, q = trunc(fl(x / y)) is the true quotient n = ⌊x/y⌋ or n + 1
/// (rounding is monotone and x/y < 2^52 is rounded by less than ½), and
/// x − q·y is then a multiple of ulp(y) smaller than 2y in magnitude, so
/// representable; it is computed exactly as (x − p) − e with p + e = q·y
/// (Dekker's product: no FMA in the generic x86-64 build, where
/// `f64::mul_add` is a libm call), x − p being exact by Sterbenz's lemma
/// (p lies in [x/2, 2x] when q ≥ 1). Adding y back when q was n + 1 is
/// exact too. Everything else goes to `%`.
#[inline]
pub(crate) fn rem_exact(x: f64, y: f64) -> f64 {
    const TWO52: f64 = 4_503_599_627_370_496.0;
    if !(x >= 0.0 && x < y * TWO52 && y >= 1e-250 && y <= 1e250) {
        return x % y;
    }
    let q = (x / y) as i64 as f64; // trunc, exact: 0 ≤ q ≤ 2^52
                                   // Dekker's exact product q·y = p + e (Veltkamp splits into 26-bit halves)
    const SPLIT: f64 = 134_217_729.0; // 2^27 + 1
    let p = q * y;
    let cq = SPLIT * q;
    let qh = cq - (cq - q);
    let ql = q - qh;
    let cy = SPLIT * y;
    let yh = cy - (cy - y);
    let yl = y - yh;
    let e = ((qh * yh - p) + qh * yl + ql * yh) + ql * yl;
    let r = (x - p) - e;
    if r < 0.0 {
        r + y
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(10_000_000, 3_000_000_000, 200_000_000, 60_000_000_000, 0.0)
    }

    /// `rem_exact` is `%` bit for bit: random send times and ticks, the
    /// estimator's own (send times to 1e4 s and beyond, ticks 10 ms, 100 ms,
    /// 500 ms, 1 ms), values a few ulps around multiples of the tick (where
    /// the quotient rounds up), huge and tiny ratios, and the edges that go
    /// to `%` (negative, NaN, infinite, 2^52 · y and beyond).
    #[test]
    fn rem_exact_is_fmod_bit_for_bit() {
        fn check(x: f64, y: f64) {
            let (got, want) = (rem_exact(x, y), x % y);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{x:e} % {y:e}: {got:e} != {want:e}"
            );
        }
        let mut s = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let unit = |b: u64| (b >> 11) as f64 / (1u64 << 53) as f64;
        let up = |x: f64, k: i64| f64::from_bits((x.to_bits() as i64 + k) as u64);
        let n = if cfg!(debug_assertions) {
            20_000
        } else {
            400_000
        };
        let ticks = [0.01, 0.1, 0.5, 0.001, 1.0, 0.03, 0.2];
        for i in 0..n {
            let y = if i % 2 == 0 {
                ticks[i % ticks.len()]
            } else {
                // any tick: mantissa and exponent at random
                (1.0 + unit(next())) * 2f64.powi((next() % 120) as i32 - 60)
            };
            // a send time at random, 0..1e4 s and over a wide exponent range
            check(unit(next()) * 1e4, y);
            check(unit(next()) * 2f64.powi((next() % 100) as i32 - 50), y);
            // around a multiple of y: k·y rounded, a few ulps either side
            let k = (next() % (1 << (next() % 52))) as f64;
            let m = k * y;
            for d in -4..=4 {
                if m > 0.0 {
                    check(up(m, d), y);
                }
            }
            // and around (k ± ½)·y, and the sums the estimator forms
            check((k + 0.5) * y, y);
            check(m - y * 0.5 + unit(next()) * 1e-9, y);
            let now = unit(next()) * 1e4;
            let tao = unit(next()) * 0.5;
            check(now - tao + unit(next()) * y, y);
        }
        // edges: zeros, tiny, the largest quotient the fast path takes, beyond it
        for &y in &[0.01, 0.1, 0.5, 3.0, 1e-200, 1e200] {
            let big = y * 4_503_599_627_370_496.0;
            for x in [
                0.0,
                -0.0,
                y,
                up(y, -1),
                up(y, 1),
                y * 0.5,
                2.0 * y,
                up(2.0 * y, -1),
                big,
                up(big, -1),
                up(big, -2),
                up(big, 1),
                big * 3.0,
                1e300,
                f64::MAX,
                f64::MIN_POSITIVE,
                5e-324,
                -1.0,
                -y,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
            ] {
                check(x, y);
            }
        }
        for y in [0.0, -0.01, f64::INFINITY, f64::NAN, 5e-324, 1e-300, 1e300] {
            for x in [0.0, 1.0, 1e4, 7.3e-3] {
                check(x, y);
            }
        }
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

    /// Linux's `tcp_rtt_estimator` and `__tcp_set_rto`, worked by hand (µs;
    /// srtt8 = 8·srtt, mdev = 4·mdev, TCP_RTO_MIN = 200 000), one sample
    /// per RTT (each ack's una passes the last rtt_seq):
    ///
    /// 1. m = 100 000 (first): srtt8 = 800 000, mdev = 2m = 200 000,
    ///    rttvar = max(200 000, 200 000), mdev_max = rttvar; RTO = 100 000 +
    ///    200 000 = 300 ms.
    /// 2. m = 100 000: error 0, mdev += 0 − 200 000/4 → 150 000 (below
    ///    mdev_max); an RTT passed: rttvar stays (mdev_max = rttvar),
    ///    mdev_max ← 200 000. RTO = 300 ms — where ns-2's formula gives
    ///    max(100 + 4·rttvar, 200) and falls to 200 ms for a steady RTT.
    /// 3. m = 300 000: error 200 000, srtt8 = 1 000 000 (125 ms); mdev +=
    ///    200 000 − 150 000/4 = 162 500 → 312 500 > mdev_max → mdev_max =
    ///    rttvar = 312 500. RTO = 125 000 + 312 500 = 437 500.
    /// 4. m = 100 000: error −25 000, srtt8 = 975 000 (121 875); |error| −
    ///    mdev/4 = 25 000 − 78 125 = −53 125 (negative: no 1/8 scaling),
    ///    mdev = 259 375 → mdev_max = 259 375 < rttvar: an RTT passed, so
    ///    rttvar −= (312 500 − 259 375) >> 2 = 13 281 → 299 219. RTO =
    ///    121 875 + 299 219 = 421 094.
    /// 5. m = 50 000 (the RTT falls): error −71 875, srtt8 = 903 125
    ///    (112 890); 71 875 − 259 375/4 = 71 875 − 64 843 = 7 032 > 0, so
    ///    scaled by 1/8 (the Eifel-like rule) → 879: mdev = 260 254 =
    ///    mdev_max; rttvar −= (299 219 − 260 254) >> 2 = 9 741 → 289 478.
    ///    RTO = 112 890 + 289 478 = 402 368.
    #[test]
    fn linux_rto_follows_the_kernels_estimator() {
        let mut l = LinuxRtt {
            rto_min_us: 200_000,
            ..Default::default()
        };
        let mut rtos = vec![];
        for (i, m) in [100_000, 100_000, 300_000, 100_000, 50_000]
            .iter()
            .enumerate()
        {
            let una = 10 * i as i64 + 1;
            l.sample(*m, una, una + 9);
            rtos.push(l.rto_us());
        }
        assert_eq!(rtos, [300_000, 300_000, 437_500, 421_094, 402_368]);
        assert_eq!(
            (l.srtt_us >> 3, l.mdev_us, l.rttvar_us),
            (112_890, 260_254, 289_478)
        );
        // and through the estimator, in seconds, backing off to TCP_RTO_MAX
        let mut e = RttEstimator::new(1_000_000, 1_000_000_000, 200_000_000, 120_000_000_000, 0.0);
        e.use_linux();
        assert_eq!(e.timeout_s(), 1.0); // TCP_TIMEOUT_INIT
        for k in 0..50 {
            e.update_linux(100_000_000, 10 * k + 1, 10 * k + 10);
        }
        assert!((e.timeout_s() - 0.3).abs() < 1e-9, "{}", e.timeout_s());
        e.back_off();
        assert!((e.timeout_s() - 0.6).abs() < 1e-9);
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.timeout_s(), 120.0);
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
