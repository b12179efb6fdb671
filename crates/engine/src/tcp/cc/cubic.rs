//! CUBIC congestion control, as RFC 9438 specifies it and as Linux's
//! `net/ipv4/tcp_cubic.c` (version 2.3, the kernel's default) computes it:
//! the window is whole segments, time is jiffies (the kernel here has
//! `CONFIG_HZ=250`), K is in 1/1024 s, RTTs in µs; see [`super::linux`] for
//! the window arithmetic it shares with Linux's Reno.
//!
//! RFC 9438 §4.2, the window increase function:
//!
//! > W_cubic(t) = C * (t - K)^3 + W_max
//! >
//! > where t is the elapsed time in seconds from the beginning of the
//! > current congestion avoidance stage [...] K is the time period that the
//! > above function takes to increase the congestion window size at the
//! > beginning of the current congestion avoidance stage to W_max [...]
//! > K = cubic_root((W_max - cwnd_epoch) / C)
//!
//! §5.1: "C SHOULD be set to 0.4"; §4.6: "β_cubic SHOULD be set to 0.7".
//! Linux: `bic_scale` 41 (C = 41·10/1024 ≈ 0.4), `beta` 717 (717/1024 ≈ 0.7).
//!
//! §4.4 (concave and convex regions): "cwnd MUST be incremented by
//! (target - cwnd) / cwnd for each received new ACK", target = W_cubic(t +
//! RTT) limited to [cwnd, 1.5·cwnd]. Linux: `cnt = cwnd / (target − cwnd)`
//! acked segments per increase, t includes the minimum RTT (`delay_min`),
//! `cnt` ≥ 2 (at most 1.5× per RTT), `cnt` ≤ 20 before the first loss
//! ("increase cwnd 5% per RTT"), and `cnt` is recomputed at most once per
//! jiffy.
//!
//! §4.3, the Reno-friendly region: "W_est = W_est + α_cubic * segments_acked
//! / cwnd", α_cubic = 3(1 − β)/(1 + β), and "If W_cubic(t) is less than
//! W_est, [...] cwnd SHOULD be set to W_est at each reception of a new ACK."
//! Linux counts acked segments (`ack_cnt`) and grows its estimate
//! (`tcp_cwnd`) by one per `cwnd · 15/8` of them (`beta_scale` =
//! 8(1024+717)/3/(1024−717) = 15, integer), then lets cwnd grow at least
//! that fast.
//!
//! §4.7, fast convergence: "if (cwnd < W_max and fast convergence enabled)
//! { W_max = cwnd * (1 + β_cubic) / 2; } else { W_max = cwnd; }"
//!
//! §4.6 (multiplicative decrease): "ssthresh = flight_size * β_cubic [...]
//! cwnd = max(ssthresh, 2)"; Linux takes cwnd for flight_size
//! (`cubictcp_recalc_ssthresh`). §4.8 (timeout): "During the first
//! congestion avoidance stage after a timeout, CUBIC increases its
//! congestion window size using Figure 1, where t is the elapsed time since
//! the beginning of the current congestion avoidance stage, K is set to 0,
//! and W_max is set to the congestion window size at the beginning of the
//! current congestion avoidance stage." Linux gets this by zeroing its
//! state on entering the Loss state (`bictcp_reset`).
//!
//! Slow start exits by HyStart as Linux runs it (not RFC 9406's HyStart++,
//! which Linux does not implement): from 16 segments on (`hystart_low_window`),
//! the *ack train* (acks no more than 2 ms apart, `hystart_ack_delta_us`,
//! spanning more than half the minimum RTT plus `hystart_ack_delay` since
//! the round began) or the *delay increase* (the least RTT of a round's
//! first 8 samples above delay_min + clamp(delay_min/8, 4 ms, 16 ms)) sets
//! ssthresh to cwnd. The RTT samples are one per ack (the newest packet
//! acked, not a retransmission), as Linux takes them.
//!
//! Differences from the kernel, all small: K is the exact cube root
//! truncated (Linux's table-and-Newton `cubic_root` errs by ≈ 0.2%);
//! `hystart_ack_delay` is its 1 ms cap (the kernel's value whenever four
//! 64 KB GSO bursts take longer than 1 ms at the pacing rate); the sender
//! is always taken as cwnd-limited (`tcp_is_cwnd_limited`, true for bulk
//! transfers); after a timeout, HyStart's round restarts at the first ack
//! rather than at the timeout; the idle restart (`CA_EVENT_TX_START`) and
//! undo (`tcp_reno_undo_cwnd`) are not modelled.

use super::linux::LinuxWindow;
use super::{AckEvent, Reduction};
use crate::plan::TcpParams;
use crate::time::SimTime;

/// The kernel's tick rate (`CONFIG_HZ` of the kernel the `linux` engine runs).
pub const HZ: u32 = 250;
const NS_PER_JIFFY: SimTime = 1_000_000_000 / HZ as SimTime;
const BICTCP_BETA_SCALE: u32 = 1024;
/// β = 717/1024.
// RFC 8312 §4.5: "Parameter beta_cubic SHOULD be set to 0.7."
const BETA: u32 = 717;
/// C = 41·10/1024.
// RFC 8312 §5.1: "Therefore, C SHOULD be set to 0.4."
const BIC_SCALE: u64 = 41;
const BICTCP_HZ: u32 = 10;
const CUBE_RTT_SCALE: u64 = BIC_SCALE * 10;
/// 2^40 / (C·1024): K = cbrt(CUBE_FACTOR·(W_max − cwnd)) in 1/1024 s.
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;
const BETA_SCALE: u32 = 8 * (BICTCP_BETA_SCALE + BETA) / 3 / (BICTCP_BETA_SCALE - BETA);
const FAST_CONVERGENCE: bool = true;
const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_ACK_DELTA_US: u32 = 2000;
const HYSTART_ACK_DELAY_US: u32 = 1000;
const HYSTART_MIN_SAMPLES: u8 = 8;
const HYSTART_DELAY_MIN_US: u32 = 4000;
const HYSTART_DELAY_MAX_US: u32 = 16000;

#[inline]
fn jiffies(now: SimTime) -> u32 {
    (now / NS_PER_JIFFY) as u32
}

#[inline]
fn usecs(now: SimTime) -> u32 {
    (now / 1000) as u32
}

/// `usecs_to_jiffies` (rounds up).
#[inline]
fn usecs_to_jiffies(us: u32) -> u32 {
    let per = 1_000_000 / HZ;
    us.div_ceil(per)
}

#[derive(Clone, Debug)]
pub struct Cubic {
    pub(super) w: LinuxWindow,
    /// Acked segments per one-segment increase.
    pub(crate) cnt: u32,
    /// W_max, segments.
    pub(crate) last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    pub(crate) bic_origin_point: u32,
    /// K, 1/1024 s.
    pub(crate) bic_k: u32,
    /// Minimum RTT, µs (0: none yet).
    pub(crate) delay_min: u32,
    /// Start of the congestion avoidance epoch, jiffies.
    pub(crate) epoch_start: Option<u32>,
    ack_cnt: u32,
    /// The Reno-friendly estimate W_est, segments.
    pub(crate) tcp_cwnd: u32,
    // HyStart
    pub(crate) found: bool,
    sample_cnt: u8,
    round_start: u32,
    end_seq: i64,
    last_ack: u32,
    curr_rtt: u32,
}

impl Cubic {
    pub fn new(p: &TcpParams) -> Self {
        Cubic {
            w: LinuxWindow::new(p),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            sample_cnt: 0,
            round_start: 0,
            // the first sampled ack starts HyStart's first round
            end_seq: i64::MIN,
            last_ack: 0,
            curr_rtt: u32::MAX,
        }
    }

    /// `bictcp_reset`: everything but HyStart's round.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// `bictcp_hystart_reset`: a new round of HyStart starts now and ends
    /// when `next_seq` is acked.
    fn hystart_reset(&mut self, now_us: u32, next_seq: i64) {
        self.round_start = now_us;
        self.last_ack = now_us;
        self.end_seq = next_seq;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `cubictcp_acked` and `cubictcp_cong_avoid` for one ack.
    pub fn on_ack(&mut self, ev: &AckEvent) {
        if let Some(rtt) = ev.ack_rtt_ns {
            self.pkts_acked(ev, rtt);
        }
        self.w.reduced = false;
        if ev.acked <= 0 {
            return;
        }
        let mut acked = ev.acked as u32;
        if self.w.in_slow_start() {
            acked = self.w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(jiffies(ev.now), acked);
        let cnt = self.cnt;
        self.w.cong_avoid_ai(cnt, acked);
    }

    /// `cubictcp_acked`: track the minimum RTT, run HyStart in slow start.
    fn pkts_acked(&mut self, ev: &AckEvent, rtt_ns: SimTime) {
        let j = jiffies(ev.now);
        // "Discard delay samples right after fast recovery"
        if let Some(e) = self.epoch_start {
            if (j.wrapping_sub(e) as i32) < HZ as i32 {
                return;
            }
        }
        let delay = ((rtt_ns / 1000) as u32).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.found && self.w.in_slow_start() {
            self.hystart_update(ev, delay);
        }
    }

    fn hystart_update(&mut self, ev: &AckEvent, delay: u32) {
        let now = usecs(ev.now);
        // after(snd_una, end_seq): the round's last packet is acked
        if ev.highest_ack + 1 > self.end_seq {
            self.hystart_reset(now, ev.next_seq);
        }
        if self.w.cwnd < HYSTART_LOW_WINDOW {
            return;
        }
        // ack train: closely spaced acks for longer than half the minimum RTT
        if (now.wrapping_sub(self.last_ack) as i32) <= HYSTART_ACK_DELTA_US as i32 {
            self.last_ack = now;
            // no pacing (SK_PACING_NONE): half of it
            let threshold = (self.delay_min + HYSTART_ACK_DELAY_US) >> 1;
            if (now.wrapping_sub(self.round_start) as i32) > threshold as i32 {
                self.found = true;
                self.w.ssthresh = self.w.cwnd;
            }
        }
        // delay increase: the round's least RTT, after 8 samples
        if self.curr_rtt > delay {
            self.curr_rtt = delay;
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
            if self.curr_rtt > self.delay_min + thresh {
                self.found = true;
                self.w.ssthresh = self.w.cwnd;
            }
        }
    }

    /// `bictcp_update`: the acked segments per increase, `cnt`, for the
    /// window `cwnd` at jiffy `j`.
    fn update(&mut self, j: u32, acked: u32) {
        let cwnd = self.w.cwnd;
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && (j.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }
        // the cubic function updates cnt at most once per jiffy
        if !(self.epoch_start.is_some() && j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = j;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(j);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.bic_origin_point = cwnd;
                    } else {
                        let x = CUBE_FACTOR * (self.last_max_cwnd - cwnd) as u64;
                        self.bic_k = (x as f64).cbrt() as u32;
                        self.bic_origin_point = self.last_max_cwnd;
                    }
                    j
                }
            };
            // t, in 1/1024 s, one minimum RTT ahead
            let mut t = j.wrapping_sub(epoch) as i32 as i64 as u64;
            t += usecs_to_jiffies(self.delay_min) as u64;
            t = (t << BICTCP_HZ) / HZ as u64;
            let k = self.bic_k as u64;
            let offs = if t < k { k - t } else { t - k };
            let delta = (CUBE_RTT_SCALE
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let target = if t < k {
                self.bic_origin_point.saturating_sub(delta)
            } else {
                self.bic_origin_point.saturating_add(delta)
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd // very small increment
            };
            // "The initial growth of cubic function may be too conservative
            // when the available bandwidth is still unknown."
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // the Reno-friendly region
        let delta = (cwnd * BETA_SCALE) >> 3;
        if delta > 0 && self.ack_cnt > delta {
            let n = (self.ack_cnt - 1) / delta;
            self.ack_cnt -= n * delta;
            self.tcp_cwnd += n;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            if self.cnt > max_cnt {
                self.cnt = max_cnt;
            }
        }
        // at most one segment per two acked: 1.5× per RTT
        self.cnt = self.cnt.max(2);
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, remember W_max (less,
    /// with fast convergence, if the window did not reach the last one),
    /// and return β·cwnd.
    fn recalc_ssthresh(&mut self) -> u32 {
        self.epoch_start = None;
        let cwnd = self.w.cwnd;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && FAST_CONVERGENCE {
            cwnd * (BICTCP_BETA_SCALE + BETA) / (2 * BICTCP_BETA_SCALE)
        } else {
            cwnd
        };
        (cwnd * BETA / BICTCP_BETA_SCALE).max(2)
    }

    /// Fast retransmit (or an ECN echo): ssthresh ← β·cwnd, and cwnd with
    /// it (Tahoe: cwnd ← 1).
    pub fn on_congestion_event(&mut self, how: Reduction) {
        let ss = self.recalc_ssthresh();
        self.w.reduce(how, ss);
    }

    /// A retransmission timeout: ssthresh ← β·cwnd unless this loss was
    /// already cut for, cwnd ← 1, and CUBIC starts over (W_max and K
    /// forgotten, HyStart on again).
    pub fn on_rto(&mut self, how: Reduction) {
        if how == Reduction::Restart {
            self.w.reduce(how, self.w.ssthresh);
            return;
        }
        let ss = if self.w.reduced {
            self.w.ssthresh
        } else {
            self.recalc_ssthresh()
        };
        self.w.reduce(how, ss);
        self.reset();
        self.end_seq = i64::MIN;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Variant;
    use crate::tcp::dialogue::params;

    const MS: SimTime = 1_000_000;

    fn cubic(cwnd: u32, ssthresh: u32) -> Cubic {
        let mut p = params(Variant::Sack, cwnd, ssthresh);
        p.syn = false;
        Cubic::new(&p)
    }

    fn ack(now: SimTime, acked: i64, rtt: Option<SimTime>) -> AckEvent {
        AckEvent {
            now,
            acked,
            rtt_s: None,
            ack_rtt_ns: rtt,
            highest_ack: 0,
            next_seq: 0,
            in_flight: 0,
            rate: None,
            ece: false,
            grow: true,
        }
    }

    /// Drive `c` with one ack per segment for `secs`, a window of acks
    /// spread evenly over each RTT of `rtt` ns; returns cwnd every RTT.
    fn run(c: &mut Cubic, t0: SimTime, secs: f64, rtt: SimTime) -> Vec<(f64, u32)> {
        let mut t = t0;
        let end = t0 + (secs * 1e9) as SimTime;
        let mut out = Vec::new();
        while t < end {
            let n = c.w.cwnd as SimTime;
            for i in 0..n {
                c.on_ack(&ack(t + i * rtt / n, 1, Some(rtt)));
            }
            t += rtt;
            out.push((((t - t0) as f64) / 1e9, c.w.cwnd));
        }
        out
    }

    /// RFC 9438 Figure 1 and 2: after a loss at W_max = 100 the window
    /// follows W(t) = C(t − K)³ + W_max with C = 0.4 and K = ∛((W_max −
    /// cwnd_epoch)/C) = ∛(30/0.4) ≈ 4.22 s — concave up to W_max, convex
    /// after. Linux aims one RTT ahead, W(s + RTT) at each ack s, and the
    /// window reaches the aim within that RTT: at the end of the RTT ending
    /// at t, cwnd lies between W(t) and W(t + RTT), give or take the
    /// integer arithmetic (1.5 segments).
    #[test]
    fn window_follows_the_cubic_closed_form_after_a_loss() {
        let rtt = 100 * MS;
        let mut c = cubic(100, 2);
        // an RTT sample before the loss sets delay_min
        c.on_ack(&ack(0, 0, Some(rtt)));
        c.on_congestion_event(Reduction::Multiplicative);
        assert_eq!((c.w.cwnd, c.w.ssthresh, c.last_max_cwnd), (70, 70, 100));
        let trace = run(&mut c, 1000 * MS, 8.0, rtt);
        // Linux's C is 410/1024 = 0.4004
        let cc = 410.0 / 1024.0;
        let k = (30.0f64 / cc).cbrt();
        assert!((c.bic_k as f64 / 1024.0 - k).abs() < 0.002, "K {}", c.bic_k);
        assert!((k - (30.0f64 / 0.4).cbrt()).abs() < 0.002);
        let w = |t: f64| cc * (t - k).powi(3) + 100.0;
        for &(t, cwnd) in trace.iter().filter(|(t, _)| *t >= 0.5) {
            let (lo, hi) = (w(t) - 1.5, w(t + 0.1) + 1.5);
            assert!(
                (lo..=hi).contains(&(cwnd as f64)),
                "t {t:.1}: cwnd {cwnd}, W(t) {:.1}, W(t+RTT) {:.1}",
                w(t),
                w(t + 0.1)
            );
        }
        // it flattens at W_max: the plateau around K
        let near_k: Vec<u32> = trace
            .iter()
            .filter(|(t, _)| (t - k).abs() < 0.5)
            .map(|x| x.1)
            .collect();
        assert!(
            near_k.iter().all(|&x| (99..=101).contains(&x)),
            "{near_k:?}"
        );
        let (_, last) = trace.last().unwrap();
        assert!(*last > 110, "convex region past K: {last}");
    }

    /// RFC 9438 §4.3: where Reno would be faster — a small window on a
    /// short RTT — cwnd follows W_est, which grows by α_cubic = 3(1 −
    /// β)/(1 + β) ≈ 0.53 segment per RTT (Linux: 8/15 per window of acked
    /// segments), not the cubic curve (W_cubic stays near W_max = 20 for ∛(6/0.4) ≈ 2.5 s).
    #[test]
    fn reno_friendly_region_grows_like_reno_with_beta_0_7() {
        let rtt = 10 * MS;
        let mut c = cubic(20, 2);
        c.on_ack(&ack(0, 0, Some(rtt)));
        c.on_congestion_event(Reduction::Multiplicative);
        assert_eq!(c.w.cwnd, 14);
        let trace = run(&mut c, 1000 * MS, 2.0, rtt);
        let rtts = trace.len() as f64;
        let (_, cwnd) = *trace.last().unwrap();
        let w_est = 14.0 + rtts * 8.0 / 15.0;
        assert!(
            (cwnd as f64 - w_est).abs() <= 3.0,
            "cwnd {cwnd}, W_est {w_est:.1} after {rtts} RTTs"
        );
    }

    /// RFC 9438 §4.7: a loss below the last W_max lowers W_max to
    /// cwnd·(1 + β)/2, releasing bandwidth to newer flows; ssthresh is
    /// β·cwnd (§4.6).
    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = cubic(100, 2);
        c.on_congestion_event(Reduction::Multiplicative);
        assert_eq!(c.last_max_cwnd, 100);
        c.w.cwnd = 90;
        c.on_congestion_event(Reduction::Multiplicative);
        // 90·1741/2048 = 76.5 → 76 (integer, as Linux); 90·717/1024 = 63.02 → 63
        assert_eq!((c.last_max_cwnd, c.w.ssthresh, c.w.cwnd), (76, 63, 63));
        // a loss above W_max sets W_max to cwnd
        c.w.cwnd = 80;
        c.on_congestion_event(Reduction::Multiplicative);
        assert_eq!(c.last_max_cwnd, 80);
    }

    /// RFC 9438 §4.8: after a timeout K = 0 and W_max is the window when
    /// avoidance starts; ssthresh is cut once for the loss, not again on
    /// the timer's backoff.
    #[test]
    fn timeout_forgets_w_max_and_cuts_once() {
        let mut c = cubic(100, 2);
        c.on_rto(Reduction::Timeout);
        assert_eq!((c.w.cwnd, c.w.ssthresh, c.last_max_cwnd), (1, 70, 0));
        c.on_rto(Reduction::Timeout);
        assert_eq!(c.w.ssthresh, 70, "the backoff does not cut again");
        // slow start to ssthresh, then the curve starts at the window: K = 0
        run(&mut c, 0, 1.0, 100 * MS);
        assert_eq!((c.bic_k, c.bic_origin_point), (0, 70));
    }

    /// Linux's HyStart (delay increase): once cwnd ≥ 16, a round whose
    /// first 8 RTT samples all exceed delay_min + max(4 ms, delay_min/8)
    /// ends slow start at the current window.
    fn hystart_delay_round(rtt_in_round: SimTime) -> Cubic {
        let mut c = cubic(16, 0);
        c.w.ssthresh = 10_000;
        let base = 40 * MS;
        let mut ev = ack(0, 0, Some(base));
        ev.highest_ack = -1;
        ev.next_seq = 0;
        c.on_ack(&ev); // delay_min 40 ms; this round ends at once
                       // the next round: acks 3 ms apart (no ack train), packets 0.. of 16
        for i in 1..=9 {
            let mut ev = ack(i * 3 * MS, 0, Some(rtt_in_round));
            ev.highest_ack = i as i64 - 1;
            ev.next_seq = 16;
            c.on_ack(&ev);
            if i <= 8 {
                assert!(!c.found, "fewer than 8 samples at ack {i}");
            }
        }
        c
    }

    #[test]
    fn hystart_leaves_slow_start_when_the_rtt_grows() {
        // threshold 40 + clamp(40/8, 4, 16) = 45 ms
        let c = hystart_delay_round(46 * MS);
        assert!(c.found);
        assert_eq!(c.w.ssthresh, c.w.cwnd);
        // 45 ms is not above it: slow start goes on
        let c = hystart_delay_round(45 * MS);
        assert!(!c.found);
        assert_eq!(c.w.ssthresh, 10_000);
    }

    /// Linux's HyStart (ack train): acks less than 2 ms apart for more than
    /// (delay_min + 1 ms)/2 since the round began mean the pipe is full.
    #[test]
    fn hystart_ack_train_ends_slow_start() {
        let mut c = cubic(20, 0);
        c.w.ssthresh = 10_000;
        let rtt = 20 * MS;
        let mut ev = ack(0, 0, Some(rtt));
        ev.next_seq = 1000;
        c.on_ack(&ev); // round starts at 0, delay_min 20 ms → threshold 10.5 ms
        let mut t = 0;
        while !c.found && t < 30 * MS {
            t += MS;
            let mut ev = ack(t, 0, Some(rtt));
            ev.next_seq = 1000;
            c.on_ack(&ev);
        }
        assert_eq!(t, 11 * MS, "first ack past 10.5 ms of the train");
        assert_eq!(c.w.ssthresh, 20);
    }
}
