//! BBR version 1 as Linux's `tcp_bbr.c` implements it, in packets.
//!
//! tcp_bbr.c: "BBR congestion control computes the sending rate based on
//! the delivery rate (throughput) estimated from ACKs. In a nutshell: On
//! each ACK, update our model of the network path: bottleneck_bandwidth =
//! windowed_max(delivered / elapsed, 10 round trips) min_rtt =
//! windowed_min(rtt, 10 seconds) pacing_rate = pacing_gain *
//! bottleneck_bandwidth cwnd = max(cwnd_gain * bottleneck_bandwidth *
//! min_rtt, 4)". "The core algorithm does not react directly to packet
//! losses or delays". Its states: "STARTUP: ramp up sending rate rapidly
//! to fill pipe", "DRAIN: drain any queue created during startup",
//! "PROBE_BW: discover, share bw: pace around estimated bw",
//! "PROBE_RTT: cut inflight to min to probe min_rtt".
//!
//! Left out: the long-term bandwidth ("policer") mode (`bbr_lt_bw_*`), the
//! ack-aggregation extra window (`bbr_extra_acked`), TSO sizing (a
//! packet is one segment; the quantization budget adds 3 × 2 segments as
//! Linux does for rates above 1.2 Mb/s), idle restarts (bulk senders are
//! never idle) and application-limited samples. Loss recovery's "packet
//! conservation" is kept for the first round of a recovery; the saved
//! window is restored when a probe-rtt ends, not when recovery ends (this
//! controller sees no recovery-exit event). The probe-bw phase a flow
//! starts in is drawn from its flow number, not a random number.

use super::AckEvent;
use crate::scenario::TcpParams;
use crate::tcp::rate::RateSample;
use crate::time::SimTime;
use std::collections::VecDeque;

/// "We use a high_gain value of 2/ln(2) because it's the smallest pacing
/// gain that will allow a smoothly increasing pacing rate that will double
/// each RTT and send the same number of packets per RTT that an un-paced,
/// slow-starting Reno or CUBIC flow would".
pub const HIGH_GAIN: f64 = 2885.0 / 1000.0;
/// "The pacing gain of 1/high_gain in BBR_DRAIN is calculated to
/// typically drain the queue created in BBR_STARTUP in a single round".
pub const DRAIN_GAIN: f64 = 1000.0 / 2885.0;
/// "The gain for deriving steady-state cwnd tolerates delayed/stretched
/// ACKs".
pub const CWND_GAIN: f64 = 2.0;
/// "The pacing_gain values for the PROBE_BW gain cycle, to discover/share
/// bw": 5/4, 3/4, then six phases of 1.
pub const PACING_GAIN: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// "Window length of bw filter (in rounds)".
pub const BW_FILTER_ROUNDS: u64 = 10;
/// "Window length of min_rtt filter (in sec)".
pub const MIN_RTT_WIN_NS: SimTime = 10_000_000_000;
/// "Minimum time (in ms) spent at bbr_cwnd_min_target in BBR_PROBE_RTT mode".
pub const PROBE_RTT_NS: SimTime = 200_000_000;
/// "Try to keep at least this many packets in flight, if things go
/// smoothly. For smooth functioning, a sliding window protocol ACKing every
/// other packet needs at least 4 packets in flight".
pub const CWND_MIN_TARGET: u32 = 4;
/// "If bw has increased significantly (1.25x), there may be more bw
/// available", "But after 3 rounds w/o significant bw growth, estimate
/// pipe is full".
pub const FULL_BW_THRESH: f64 = 1.25;
pub const FULL_BW_CNT: u32 = 3;
/// "Pace at ~1% below estimated bw, on average, to reduce queue at
/// bottleneck."
pub const PACING_MARGIN: f64 = 0.99;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

pub struct Bbr {
    pub mode: Mode,
    /// `snd_cwnd`, packets.
    pub cwnd: u32,
    pub wnd_init: u32,
    prior_cwnd: u32,
    /// Packet size, bits (for the pacing rate).
    bits: f64,
    /// The windowed max of the delivery rate: (round, packets/s), the
    /// rates decreasing from front to back.
    bw: VecDeque<(u64, f64)>,
    pub min_rtt_ns: SimTime,
    min_rtt_stamp: SimTime,
    pub round: u64,
    next_rtt_delivered: i64,
    round_start: bool,
    full_bw: f64,
    full_bw_cnt: u32,
    pub full_bw_reached: bool,
    pub pacing_gain: f64,
    cwnd_gain: f64,
    cycle_idx: usize,
    cycle_stamp: SimTime,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// Pacing rate, bits/s.
    pub pacing_bps: f64,
    /// Packets in flight at the last ack.
    inflight: i64,
    /// A recovery's first round: "packet conservation".
    conservation_until: Option<i64>,
    /// Probe-rtt entries so far (for tests and traces).
    pub probe_rtts: u32,
    /// Selects the first probe-bw phase.
    pub seed: u32,
}

impl Bbr {
    pub fn new(p: &TcpParams) -> Self {
        let init = if p.syn { 1 } else { p.initial_cwnd.max(1) };
        let mut b = Bbr {
            mode: Mode::Startup,
            cwnd: init,
            wnd_init: p.initial_cwnd.max(1),
            prior_cwnd: 0,
            bits: p.packet_size as f64 * 8.0,
            bw: VecDeque::new(),
            min_rtt_ns: SimTime::MAX,
            min_rtt_stamp: 0,
            round: 0,
            next_rtt_delivered: 0,
            round_start: false,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            cycle_idx: 0,
            cycle_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            pacing_bps: 0.0,
            inflight: 0,
            conservation_until: None,
            probe_rtts: 0,
            seed: 0,
        };
        // bbr_init_pacing_rate_from_rtt: "nominal_rtt = 1ms" with no RTT
        // sample yet, rate = high_gain × cwnd / rtt
        b.pacing_bps = HIGH_GAIN * init as f64 * b.bits / 1e-3 * PACING_MARGIN;
        b
    }

    /// The bottleneck bandwidth estimate, packets/s.
    pub fn max_bw(&self) -> f64 {
        self.bw.front().map_or(0.0, |&(_, r)| r)
    }

    /// "bdp = bw * min_rtt ... cwnd = bdp * gain" plus the quantization
    /// budget ("3 * tso_segs_goal", 2 segments each) and, in the first
    /// probe-bw phase, 2 more ("to allow for ... a gain > 1").
    fn target(&self, gain: f64) -> u32 {
        if self.min_rtt_ns == SimTime::MAX {
            return self.wnd_init;
        }
        let bdp = self.max_bw() * self.min_rtt_ns as f64 * 1e-9;
        let mut t = (bdp * gain).ceil() as u32 + 6;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            t += 2;
        }
        t
    }

    fn bdp_packets(&self, gain: f64) -> f64 {
        if self.min_rtt_ns == SimTime::MAX {
            return self.wnd_init as f64;
        }
        self.max_bw() * self.min_rtt_ns as f64 * 1e-9 * gain
    }

    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        // "See if we've reached the next RTT"
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.total_delivered;
            self.round += 1;
            self.round_start = true;
        }
        let bw = rs.rate_pps();
        while matches!(self.bw.back(), Some(&(_, r)) if r <= bw) {
            self.bw.pop_back();
        }
        self.bw.push_back((self.round, bw));
        while matches!(self.bw.front(), Some(&(r, _)) if r + BW_FILTER_ROUNDS <= self.round) {
            self.bw.pop_front();
        }
    }

    /// bbr_check_full_bw_reached: "estimate pipe is full" after 3 rounds
    /// without 25% growth.
    fn check_full_bw(&mut self) {
        if self.full_bw_reached || !self.round_start {
            return;
        }
        let bw = self.max_bw();
        if bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn enter_probe_bw(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        self.cwnd_gain = CWND_GAIN;
        // "cycle_idx = CYCLE_LEN - 1 - prandom_u32_max(bbr_cycle_rand)":
        // any phase but the 3/4 one
        self.cycle_idx = (PACING_GAIN.len() - 1 - (self.seed as usize % 7)) % PACING_GAIN.len();
        self.advance_cycle(now);
    }

    fn advance_cycle(&mut self, now: SimTime) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
        self.cycle_stamp = now;
        self.pacing_gain = PACING_GAIN[self.cycle_idx];
    }

    /// bbr_is_next_cycle_phase.
    fn next_phase(&self, now: SimTime, lost: bool) -> bool {
        let full_length = now.saturating_sub(self.cycle_stamp) > self.min_rtt_ns;
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        // "A pacing_gain > 1.0 probes for bw by trying to raise inflight to
        // at least pacing_gain*BDP"
        if self.pacing_gain > 1.0 {
            return full_length
                && (lost || self.inflight as f64 >= self.bdp_packets(self.pacing_gain));
        }
        // "A pacing_gain < 1.0 tries to drain extra queue we added if bw
        // probing didn't find more bw"
        full_length || self.inflight as f64 <= self.bdp_packets(1.0)
    }

    fn reset_mode(&mut self, now: SimTime) {
        if self.full_bw_reached {
            self.enter_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
            self.pacing_gain = HIGH_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
    }

    /// bbr_update_min_rtt and the probe-rtt state: "If the min_rtt filter
    /// window has expired, then enter PROBE_RTT", "spend at least
    /// bbr_probe_rtt_mode_ms at this low cwnd and at least one packet-timed
    /// round trip".
    fn update_min_rtt(&mut self, now: SimTime, rtt: Option<SimTime>, delivered: i64) {
        let expired = now > self.min_rtt_stamp + MIN_RTT_WIN_NS;
        if let Some(r) = rtt {
            if r < self.min_rtt_ns || expired {
                self.min_rtt_ns = r;
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt && self.min_rtt_ns != SimTime::MAX {
            self.mode = Mode::ProbeRtt;
            self.probe_rtts += 1;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            match self.probe_rtt_done {
                None if self.inflight <= CWND_MIN_TARGET as i64 => {
                    self.probe_rtt_done = Some(now + PROBE_RTT_NS);
                    self.probe_rtt_round_done = false;
                    self.next_rtt_delivered = delivered;
                }
                None => {}
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && now >= done {
                        self.min_rtt_stamp = now;
                        self.cwnd = self.cwnd.max(self.prior_cwnd);
                        self.prior_cwnd = 0;
                        self.reset_mode(now);
                    }
                }
            }
        }
    }

    pub fn on_ack(&mut self, ev: &AckEvent) {
        let now = ev.now;
        self.inflight = ev.next_seq - ev.highest_ack - 1;
        let Some(rs) = ev.rate else {
            return;
        };
        // tcp_rate_gen: "Normally we expect interval_us >= min-rtt. Note
        // that rate may still be over-estimated when a spuriously
        // retransmitted skb was first (s)acked": shorter intervals are
        // discarded
        let valid = self.min_rtt_ns == SimTime::MAX || rs.interval_ns >= self.min_rtt_ns;
        if valid {
            self.update_bw(&rs);
        } else {
            self.round_start = false;
            if rs.prior_delivered >= self.next_rtt_delivered {
                self.next_rtt_delivered = rs.total_delivered;
                self.round += 1;
                self.round_start = true;
            }
        }
        if self.mode == Mode::ProbeBw && self.next_phase(now, false) {
            self.advance_cycle(now);
        }
        self.check_full_bw();
        // bbr_check_drain
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.pacing_gain = DRAIN_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.mode == Mode::Drain && self.inflight as f64 <= self.bdp_packets(1.0) {
            self.enter_probe_bw(now);
        }
        self.update_min_rtt(now, ev.ack_rtt_ns, rs.total_delivered);
        self.set_pacing_rate();
        self.set_cwnd(ev.acked.max(0) as u32, rs.total_delivered);
    }

    /// bbr_set_pacing_rate: "pacing_rate = pacing_gain * bw", raised only
    /// until the pipe is full ("if (bbr_full_bw_reached(sk) || rate >
    /// sk->sk_pacing_rate)").
    fn set_pacing_rate(&mut self) {
        let bw = self.max_bw();
        if bw <= 0.0 {
            return;
        }
        let rate = self.pacing_gain * bw * self.bits * PACING_MARGIN;
        if self.full_bw_reached || rate > self.pacing_bps {
            self.pacing_bps = rate;
        }
    }

    /// bbr_set_cwnd: "If we're below target cwnd, slow start cwnd toward
    /// target cwnd", once full "cwnd = min(cwnd + acked, target_cwnd)",
    /// never below 4, and at most 4 in probe-rtt.
    fn set_cwnd(&mut self, acked: u32, delivered: i64) {
        if let Some(end) = self.conservation_until {
            if delivered < end {
                // "packet conservation": send as many as were delivered
                self.cwnd = self.cwnd.max(self.inflight.max(0) as u32 + acked);
            } else {
                self.conservation_until = None;
            }
        }
        if self.conservation_until.is_none() {
            let target = self.target(self.cwnd_gain);
            if self.full_bw_reached {
                self.cwnd = (self.cwnd + acked).min(target);
            } else if self.cwnd < target || delivered < self.wnd_init as i64 {
                self.cwnd += acked;
            }
        }
        self.cwnd = self.cwnd.max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// Loss recovery began: "On the first round of recovery, follow packet
    /// conservation principle: send P packets per P packets acked"
    /// (bbr_set_cwnd_to_recover_or_restore), starting from what is in
    /// flight; the window before is saved (bbr_save_cwnd).
    pub fn on_congestion_event(&mut self) {
        self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        self.cwnd = (self.inflight.max(0) as u32).max(CWND_MIN_TARGET);
        // one round: until what is in flight now is delivered
        self.conservation_until = Some(self.next_rtt_delivered + self.inflight.max(1));
    }

    /// A retransmission timeout: Linux's `tcp_enter_loss` leaves one
    /// packet in the window ("tcp_packets_in_flight(tp) + 1" with all
    /// marked lost); BBR then grows it by what is acked.
    pub fn on_rto(&mut self) {
        self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        self.cwnd = 1;
        self.conservation_until = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Variant;
    use crate::tcp::dialogue::params;

    fn ev(now: SimTime, acked: i64, rs: RateSample, rtt: SimTime) -> AckEvent {
        AckEvent {
            now,
            acked,
            rtt_s: None,
            ack_rtt_ns: Some(rtt),
            highest_ack: 0,
            next_seq: 1,
            rate: Some(rs),
            ece: false,
            grow: true,
        }
    }

    /// Startup feeds rounds whose delivery rate grows by `growth` each;
    /// returns the round in which BBR leaves startup.
    fn rounds_to_leave_startup(growth: &[f64]) -> Option<usize> {
        let mut b = Bbr::new(&params(Variant::Sack, 10, 1000));
        let ms = 1_000_000;
        let mut delivered = 0;
        let mut rate = 1000.0;
        for (k, g) in growth.iter().enumerate() {
            rate *= g;
            let n = (rate * 0.1) as i64; // packets in a 100 ms round
            let rs = RateSample {
                delivered: n,
                prior_delivered: delivered,
                interval_ns: 100 * ms,
                total_delivered: delivered + n,
            };
            delivered += n;
            b.on_ack(&ev((k as u64 + 1) * 100 * ms, n, rs, 100 * ms));
            if b.mode != Mode::Startup {
                return Some(k);
            }
        }
        None
    }

    /// "after 3 rounds w/o significant bw growth, estimate pipe is full":
    /// doubling keeps BBR in startup; growth below 25% a round for three
    /// rounds ends it (and growing 25% or more resets the count).
    #[test]
    fn startup_ends_after_three_rounds_without_a_quarter_more_bandwidth() {
        assert_eq!(rounds_to_leave_startup(&[2.0; 12]), None);
        // rounds 0..3 double, then 1.05× growth: rounds 4, 5, 6 count
        let mut g = vec![2.0; 4];
        g.extend([1.05; 5]);
        assert_eq!(rounds_to_leave_startup(&g), Some(6));
        // a 1.3× round in between restarts the count
        let mut g = vec![2.0, 2.0, 1.1, 1.1, 1.3, 1.0, 1.0, 1.0, 1.0];
        assert_eq!(rounds_to_leave_startup(&g), Some(7));
        g.truncate(7);
        assert_eq!(rounds_to_leave_startup(&g), None);
    }

    /// Probe-bw cycles through 5/4, 3/4 and six phases of 1, each about
    /// one min_rtt long.
    #[test]
    fn probe_bw_cycles_its_eight_gains() {
        let mut b = Bbr::new(&params(Variant::Sack, 10, 1000));
        b.min_rtt_ns = 10;
        b.bw.push_back((0, 1e9));
        b.seed = 0; // start at phase 0
        b.enter_probe_bw(0);
        assert_eq!(b.pacing_gain, 1.25);
        let mut seen = vec![];
        for t in 1..=8 {
            b.inflight = 1000; // reached 5/4 × BDP
            if b.next_phase(t * 11, false) {
                b.advance_cycle(t * 11);
            }
            seen.push(b.pacing_gain);
        }
        assert_eq!(seen, [0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.25]);
    }
}
