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
//! Kept: the ack-aggregation extra window (`bbr_extra_acked`), the
//! quantization budget from `bbr_tso_segs_goal` (a packet is one segment on
//! the wire: TSO only sizes the budget), and the window saved at a loss and
//! restored when recovery (or a timeout's loss state) ends. A packet counts
//! as delivered when it is SACKed or acked, and every ack that delivers
//! reaches the controller — duplicate and partial acks in recovery too —
//! with what it delivered (`rs->acked_sacked`). In flight is what was sent
//! and not cumulatively acked (Linux's `tcp_packets_in_flight` also
//! subtracts SACKed and lost packets; the engine does so in the loss state
//! after a timeout only). Left out: the long-term bandwidth ("policer")
//! mode (`bbr_lt_bw_*`), idle restarts (bulk senders are never idle),
//! application-limited samples, and `rs->losses` (this controller is not
//! told of losses: no "cwnd - rs->losses", and a probing phase does not end
//! early on a loss). The probe-bw phase a flow starts in is drawn from its
//! flow number, not a random number.

use super::AckEvent;
use crate::plan::TcpParams;
use crate::tcp::rate::RateSample;
use crate::time::{ns_f64, SimTime};

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
/// "Window length of extra_acked window" (rounds), "Max allowed val for
/// ack_epoch_acked, after which sampling epoch is reset", "Time period for
/// clamping cwnd increment due to ack aggregation".
pub const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
const ACK_EPOCH_RESET: u32 = 1 << 20;
pub const EXTRA_ACKED_MAX_NS: SimTime = 100_000_000;
/// `TCP_INIT_CWND`: "cwnd + acked" while fewer were delivered.
pub const TCP_INIT_CWND: i64 = 10;
/// `MAX_TCP_HEADER` on x86-64 (the TSO burst stays below 64 KB minus it).
const MAX_TCP_HEADER: u64 = 320;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Laid out by what an ack and a send touch (`repr(C)`, a line of its
/// own): ten flows take turns, so a flow's model is cold in the cache when
/// its ack arrives, and each line it touches is a miss. The first line holds
/// what the send path reads (`cwnd`, the pacing rate) and what every ack
/// writes or tests first; the second the round, the epochs and the gains;
/// the third the ack-aggregation counts and the bandwidth filter's head,
/// whose ring follows; the rest is read on rare events only.
#[repr(C, align(64))]
pub struct Bbr {
    /// `snd_cwnd`, packets.
    pub(super) cwnd: u32,
    /// `3 * tso_segs_goal()` at this pacing rate (the quantization budget
    /// each window target adds; it changes only with the rate).
    quanta: u32,
    /// Pacing rate, bits/s.
    pub(super) pacing_bps: f64,
    /// Packets in flight at the last ack.
    inflight: i64,
    /// `snd_nxt` and `tp->delivered` at the last ack.
    next_seq: i64,
    delivered: i64,
    pub(super) min_rtt_ns: SimTime,
    pub(super) pacing_gain: f64,
    pub(super) mode: Mode,
    round_start: bool,
    pub(super) full_bw_reached: bool,
    /// A recovery's first round: "packet conservation".
    conservation: bool,
    /// The probe-bw phase (an index into `PACING_GAIN`).
    cycle_idx: u8,
    /// The `extra_acked` window in use (0 or 1).
    extra_acked_idx: u8,
    // second line
    next_rtt_delivered: i64,
    pub(super) round: u64,
    /// Ack aggregation: the epoch's start.
    ack_epoch_start: SimTime,
    cycle_stamp: SimTime,
    min_rtt_stamp: SimTime,
    /// Packet size, bits (for the pacing rate).
    bits: f64,
    cwnd_gain: f64,
    /// In loss recovery (fast recovery or after a timeout) until this
    /// packet is acked; the saved window is restored then. `NO_RECOVERY`
    /// (above any packet number) when not in recovery.
    recover: i64,
    // third line
    /// Ack aggregation: the two windows of `extra_acked` (packets), rounds
    /// in the window in use, and the packets acked in the epoch.
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_rounds: u32,
    pub(super) wnd_init: u32,
    prior_cwnd: u32,
    /// The windowed max of the delivery rate, packets/s (its maximum and
    /// head here, its ring on the next lines).
    bw: MaxFilter,
    // read on rare events
    /// Payload per packet, bytes (`mss_cache`).
    mss: f64,
    full_bw: f64,
    probe_rtt_done: Option<SimTime>,
    full_bw_cnt: u32,
    probe_rtt_round_done: bool,
    /// Probe-rtt entries so far (for tests and traces).
    pub(super) probe_rtts: u32,
    /// Selects the first probe-bw phase.
    pub(super) seed: u32,
}

/// `Bbr::recover` outside recovery: above every packet number (`BULK` is
/// `i64::MAX / 4`), so `highest_ack >= recover` is false.
const NO_RECOVERY: i64 = i64::MAX;

impl Bbr {
    /// Seed the per-flow choices (ProbeBW's starting phase) with `seed`:
    /// the flow's id, so flows that start together do not cycle in step.
    pub fn seed_with(&mut self, seed: u32) {
        self.seed = seed;
    }

    pub fn new(p: &TcpParams) -> Self {
        let init = if p.syn { 1 } else { p.initial_cwnd.max(1) };
        let mut b = Bbr {
            mode: Mode::Startup,
            cwnd: init,
            wnd_init: p.initial_cwnd.max(1),
            prior_cwnd: 0,
            bits: p.packet_size as f64 * 8.0,
            mss: p.packet_size.saturating_sub(p.header_size).max(1) as f64,
            bw: MaxFilter::default(),
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
            quanta: 0,
            inflight: 0,
            conservation: false,
            extra_acked: [0; 2],
            extra_acked_idx: 0,
            extra_acked_rounds: 0,
            ack_epoch_start: 0,
            ack_epoch_acked: 0,
            recover: NO_RECOVERY,
            next_seq: 0,
            delivered: 0,
            probe_rtts: 0,
            seed: 0,
        };
        // bbr_init_pacing_rate_from_rtt: "nominal_rtt = 1ms" with no RTT
        // sample yet, rate = high_gain × cwnd / rtt
        b.set_pacing_bps(HIGH_GAIN * init as f64 * b.bits / 1e-3 * PACING_MARGIN);
        b
    }

    /// The pacing rate becomes `rate` bits/s.
    #[inline]
    fn set_pacing_bps(&mut self, rate: f64) {
        if rate != self.pacing_bps {
            self.pacing_bps = rate;
            self.quanta = 3 * self.tso_segs_goal();
        }
    }

    /// The bottleneck bandwidth estimate, packets/s.
    pub fn max_bw(&self) -> f64 {
        self.bw.max
    }

    /// bbr_tso_segs_goal: the segments of one TSO burst, "Sort of
    /// tcp_tso_autosize()": about 1 ms at the pacing rate
    /// (`sk_pacing_rate >> sk_pacing_shift`, shift 10) below 64 KB, at
    /// least 2 segments (1 below `bbr_min_tso_rate`, 1.2 Mb/s), at most 127.
    pub fn tso_segs_goal(&self) -> u32 {
        // the kernel's pacing rate is payload bytes per second
        let rate_bytes = self.pacing_bps / self.bits * self.mss;
        let bytes = ((rate_bytes as u64) >> 10).min(65536 - 1 - MAX_TCP_HEADER) as f64;
        let min_segs = if rate_bytes < (1_200_000 >> 3) as f64 {
            1
        } else {
            2
        };
        ((bytes / self.mss) as u32).max(min_segs).min(0x7f)
    }

    /// bbr_inflight: "bdp = bw * min_rtt ... cwnd = bdp * gain" (rounded
    /// up, plus `extra` packets) with bbr_quantization_budget: "3 *
    /// tso_segs_goal", rounded up to even ("Reduce delayed ACKs"), and in
    /// the first probe-bw phase 2 more ("Ensure gain cycling gets inflight
    /// above BDP even for small BDPs").
    fn inflight_target(&self, gain: f64, extra: u32) -> u32 {
        if self.min_rtt_ns == SimTime::MAX {
            return self.wnd_init;
        }
        let bdp = self.max_bw() * ns_f64(self.min_rtt_ns) * 1e-9;
        let mut t = ceil_u32(bdp * gain) + extra;
        t += self.quanta;
        t = (t + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            t += 2;
        }
        t
    }

    fn update_bw(&mut self, rs: &RateSample) {
        // "See if we've reached the next RTT"
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.total_delivered;
            self.round += 1;
            self.round_start = true;
            self.conservation = false;
        }
        self.bw.update(self.round, rs.rate_pps());
    }

    /// bbr_update_ack_aggregation: "Estimates the windowed max degree of
    /// ack aggregation", "extra data acked beyond expected": the packets
    /// acked since the epoch began beyond `bw × epoch`, the epoch restarting
    /// whenever acks fall behind that rate; the max over two windows of 5
    /// rounds ("an approximate sliding window of 5-10 (packet timed) round
    /// trips"), each value at most cwnd.
    fn update_ack_aggregation(&mut self, now: SimTime, acked: u32) {
        if acked == 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_rounds = (self.extra_acked_rounds + 1).min(0x1f);
            if self.extra_acked_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                self.extra_acked_rounds = 0;
                self.extra_acked_idx ^= 1;
                self.extra_acked[self.extra_acked_idx as usize] = 0;
            }
        }
        let epoch_ns = now.saturating_sub(self.ack_epoch_start);
        let expected = (self.max_bw() * ns_f64(epoch_ns) * 1e-9) as u32;
        // the epoch restarts when acks fell behind the rate or its count
        // would overflow; as selects, not a branch (it goes either way from
        // ack to ack: half the model's mispredictions were here)
        let reset =
            (self.ack_epoch_acked <= expected) | (self.ack_epoch_acked + acked >= ACK_EPOCH_RESET);
        let (acked_before, expected) = if reset {
            (0, 0)
        } else {
            (self.ack_epoch_acked, expected)
        };
        self.ack_epoch_start = if reset { now } else { self.ack_epoch_start };
        self.ack_epoch_acked = (acked_before + acked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected).min(self.cwnd);
        let w = &mut self.extra_acked[self.extra_acked_idx as usize];
        *w = (*w).max(extra);
    }

    /// bbr_ack_aggregation_cwnd: once the pipe is full, the larger window's
    /// extra_acked, at most 100 ms at the estimated bandwidth.
    pub fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        let cap = (self.max_bw() * EXTRA_ACKED_MAX_NS as f64 * 1e-9) as u32;
        self.extra_acked[0].max(self.extra_acked[1]).min(cap)
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
        self.cycle_idx =
            ((PACING_GAIN.len() - 1 - (self.seed as usize % 7)) % PACING_GAIN.len()) as u8;
        self.advance_cycle(now);
    }

    fn advance_cycle(&mut self, now: SimTime) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len() as u8;
        self.cycle_stamp = now;
        self.pacing_gain = PACING_GAIN[self.cycle_idx as usize];
    }

    /// bbr_is_next_cycle_phase.
    fn next_phase(&self, now: SimTime, lost: bool, prior_in_flight: i64) -> bool {
        let full_length = now.saturating_sub(self.cycle_stamp) > self.min_rtt_ns;
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        // "A pacing_gain > 1.0 probes for bw by trying to raise inflight to
        // at least pacing_gain*BDP"
        if self.pacing_gain > 1.0 {
            return full_length
                && (lost || prior_in_flight >= self.inflight_target(self.pacing_gain, 0) as i64);
        }
        // "A pacing_gain < 1.0 tries to drain extra queue we added if bw
        // probing didn't find more bw"
        full_length || prior_in_flight <= self.inflight_target(1.0, 0) as i64
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
            self.probe_rtts += 1;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.save_cwnd();
            self.mode = Mode::ProbeRtt;
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
                        self.reset_mode(now);
                    }
                }
            }
        }
    }

    pub fn on_ack(&mut self, ev: &AckEvent) {
        let now = ev.now;
        self.inflight = ev.in_flight;
        self.next_seq = ev.next_seq;
        let Some(rs) = ev.rate else {
            return;
        };
        self.delivered = rs.total_delivered;
        // bbr_main: what this ack delivered, acked or SACKed
        let acked = rs.acked_sacked.max(0) as u32;
        // tcp_rate_gen: "Normally we expect interval_us >= min-rtt. Note
        // that rate may still be over-estimated when a spuriously
        // retransmitted skb was first (s)acked": shorter intervals are
        // discarded, and bbr_update_bw counts no round on them ("Not a
        // valid observation")
        self.round_start = false;
        let valid = self.min_rtt_ns == SimTime::MAX || rs.interval_ns >= self.min_rtt_ns;
        if valid {
            self.update_bw(&rs);
            self.update_ack_aggregation(now, acked);
        }
        let prior_in_flight = ev.in_flight + acked as i64;
        if self.mode == Mode::ProbeBw && self.next_phase(now, false, prior_in_flight) {
            self.advance_cycle(now);
        }
        self.check_full_bw();
        // bbr_check_drain
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.pacing_gain = DRAIN_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.mode == Mode::Drain && self.inflight <= self.inflight_target(1.0, 0) as i64 {
            self.enter_probe_bw(now);
        }
        self.update_min_rtt(now, ev.ack_rtt_ns, rs.total_delivered);
        self.set_pacing_rate();
        self.set_cwnd(acked, rs.total_delivered, ev.highest_ack);
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
            self.set_pacing_bps(rate);
        }
    }

    /// bbr_set_cwnd: "If we're below target cwnd, slow start cwnd toward
    /// target cwnd", once full "cwnd = min(cwnd + acked, target_cwnd)",
    /// never below 4, and at most 4 in probe-rtt.
    fn set_cwnd(&mut self, acked: u32, delivered: i64, highest_ack: i64) {
        if acked == 0 {
            // "no packet fully ACKed; just apply caps"
            if self.mode == Mode::ProbeRtt {
                self.cwnd = self.cwnd.min(CWND_MIN_TARGET);
            }
            return;
        }
        // bbr_set_cwnd_to_recover_or_restore: "Exiting loss recovery;
        // restore cwnd saved before recovery" (Linux leaves recovery, and
        // the loss state after a timeout, once snd_una passes the
        // recovery point)
        if highest_ack >= self.recover {
            self.recover = NO_RECOVERY;
            self.cwnd = self.cwnd.max(self.prior_cwnd);
            self.conservation = false;
        }
        if self.conservation {
            // "packet conservation": send as many as were delivered
            self.cwnd = self.cwnd.max(self.inflight.max(0) as u32 + acked);
        } else {
            let target = self.inflight_target(self.cwnd_gain, self.ack_aggregation_cwnd());
            if self.full_bw_reached {
                self.cwnd = (self.cwnd + acked).min(target);
            } else if delivered < TCP_INIT_CWND {
                self.cwnd += acked;
            } else if self.cwnd < target {
                // "slow start cwnd toward target cwnd"
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
        self.save_cwnd();
        self.cwnd = (self.inflight.max(0) as u32).max(CWND_MIN_TARGET);
        // "Starting 1st round of Recovery, so do packet conservation":
        // "start round now"
        self.conservation = true;
        self.next_rtt_delivered = self.delivered;
        self.recover = self.next_seq - 1;
    }

    /// bbr_save_cwnd: "Save "last known good" cwnd so we can restore it
    /// after losses or PROBE_RTT": the window itself, unless "loss recovery
    /// or BBR_PROBE_RTT have temporarily cut cwnd" (then the larger).
    fn save_cwnd(&mut self) {
        if self.recover == NO_RECOVERY && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// A retransmission timeout: Linux's `tcp_enter_loss` leaves one
    /// packet in the window ("tcp_packets_in_flight(tp) + 1" with all
    /// marked lost); BBR then grows it by what is acked.
    pub fn on_rto(&mut self) {
        self.save_cwnd();
        self.cwnd = 1;
        self.conservation = false;
        // the loss state lasts until what was sent before is acked
        // (`high_seq`); bbr_set_state: "full_bw = 0"
        self.recover = self.next_seq - 1;
        self.full_bw = 0.0;
    }
}

/// `x.ceil() as u32` for 0 <= x < 2^32 without the library call the
/// baseline x86-64 target makes of `ceil`.
#[inline(always)]
fn ceil_u32(x: f64) -> u32 {
    let t = x as u32;
    if (t as f64) < x {
        t.saturating_add(1)
    } else {
        t
    }
}

/// The windowed maximum of the delivery rate over `BW_FILTER_ROUNDS`
/// rounds: a monotone queue of (round, rate), rates falling from the
/// oldest, at most one entry per round (a sample no larger than one of its
/// own round can never be the maximum while that one is kept, and both
/// leave together), so a fixed ring holds it.
/// `repr(C)`: the maximum, the head and a copy of the newest entry first
/// (on `Bbr`'s third line), the ring after them: a sample no larger than
/// its round's entry is decided without touching the ring.
#[derive(Default)]
#[repr(C)]
struct MaxFilter {
    /// The oldest entry's rate (0 when empty): the maximum.
    max: f64,
    head: usize,
    len: usize,
    /// The newest entry, `ring[(head + len - 1) & 15]`, when `len > 0`.
    last: (u64, f64),
    ring: [(u64, f64); 16],
}

impl MaxFilter {
    #[inline]
    fn at(&self, i: usize) -> (u64, f64) {
        self.ring[(self.head + i) & 15]
    }

    #[inline]
    fn update(&mut self, round: u64, bw: f64) {
        if self.len > 0 {
            let (r, b) = self.last;
            debug_assert_eq!(self.last, self.at(self.len - 1));
            if r == round && bw <= b {
                return;
            }
        }
        while self.len > 0 && self.at(self.len - 1).1 <= bw {
            self.len -= 1;
        }
        self.ring[(self.head + self.len) & 15] = (round, bw);
        self.last = (round, bw);
        self.len += 1;
        while self.len > 0 && self.at(0).0 + BW_FILTER_ROUNDS <= round {
            self.head = (self.head + 1) & 15;
            self.len -= 1;
        }
        self.max = if self.len > 0 { self.at(0).1 } else { 0.0 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Variant;
    use crate::tcp::dialogue::params;

    fn ev(now: SimTime, acked: i64, rs: RateSample, rtt: SimTime) -> AckEvent {
        AckEvent {
            now,
            acked,
            rtt_s: None,
            ack_rtt_ns: Some(rtt),
            highest_ack: 0,
            next_seq: 1,
            in_flight: 0,
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
                acked_sacked: n,
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
        b.bw.update(0, 1e9);
        b.seed = 0; // start at phase 0
        b.enter_probe_bw(0);
        assert_eq!(b.pacing_gain, 1.25);
        let mut seen = vec![];
        for t in 1..=8 {
            b.inflight = 1000; // reached 5/4 × BDP
            if b.next_phase(t * 11, false, b.inflight) {
                b.advance_cycle(t * 11);
            }
            seen.push(b.pacing_gain);
        }
        assert_eq!(seen, [0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.25]);
    }

    /// The bandwidth filter is the maximum over the samples of the last
    /// `BW_FILTER_ROUNDS` rounds (bbr_update_bw's `minmax_running_max`
    /// window), checked against the plain maximum on a pseudo-random run of
    /// samples, several per round, rounds sometimes skipped.
    #[test]
    fn the_bandwidth_filter_is_the_max_over_the_last_ten_rounds() {
        let mut f = MaxFilter::default();
        let mut seen: Vec<(u64, f64)> = vec![];
        let (mut round, mut x) = (0u64, 12345u64);
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            round += [0, 0, 0, 1, 1, 2][(x >> 33) as usize % 6];
            let bw = ((x >> 40) % 1000) as f64;
            f.update(round, bw);
            seen.push((round, bw));
            let want = seen
                .iter()
                .filter(|&&(r, _)| r + BW_FILTER_ROUNDS > round)
                .map(|&(_, b)| b)
                .fold(0.0, f64::max);
            assert_eq!(f.max, want, "round {round}");
        }
    }

    /// What an ack touches sits on `Bbr`'s first three lines: the send
    /// path's and the first tests on the first, the round and epochs on the
    /// second, ack aggregation and the filter's head on the third.
    #[test]
    fn the_model_is_laid_out_by_what_an_ack_touches() {
        use std::mem::{align_of, offset_of};
        assert_eq!(align_of::<Bbr>(), 64);
        let line = |off: usize| off / 64;
        for off in [
            offset_of!(Bbr, cwnd),
            offset_of!(Bbr, pacing_bps),
            offset_of!(Bbr, inflight),
            offset_of!(Bbr, min_rtt_ns),
            offset_of!(Bbr, pacing_gain),
            offset_of!(Bbr, mode),
            offset_of!(Bbr, extra_acked_idx),
        ] {
            assert_eq!(line(off), 0);
        }
        for off in [
            offset_of!(Bbr, next_rtt_delivered),
            offset_of!(Bbr, recover),
        ] {
            assert_eq!(line(off), 1);
        }
        let bw = offset_of!(Bbr, bw);
        for off in [
            offset_of!(Bbr, extra_acked),
            offset_of!(Bbr, prior_cwnd),
            bw + offset_of!(MaxFilter, max),
            bw + offset_of!(MaxFilter, len),
            bw + offset_of!(MaxFilter, last) + 15,
        ] {
            assert_eq!(line(off), 2);
        }
    }

    /// A BBR past startup with bw = 1000 packets/s (1 per ms) and min_rtt
    /// = 100 ms: BDP 100 packets.
    fn steady() -> Bbr {
        let mut b = Bbr::new(&params(Variant::Sack, 10, 1000));
        b.min_rtt_ns = 100_000_000;
        b.min_rtt_stamp = 0;
        b.bw.update(0, 1000.0);
        b.full_bw_reached = true;
        b.seed = 3; // enter_probe_bw: cycle_idx (7 − 3) + 1 = 5, gain 1
        b.enter_probe_bw(0);
        b.set_pacing_rate();
        b
    }

    /// bbr_tso_segs_goal: `sk_pacing_rate >> 10` bytes over mss. At 100
    /// Mb/s of 1000-byte packets (mss 960), bw 12 500 packets/s: gain 1
    /// paces 12 500 × 960 × 0.99 = 11 880 000 B/s, >> 10 = 11 601 bytes,
    /// / 960 = 12 segments; startup's 2.885 paces 34 273 800 B/s, >> 10 =
    /// 33 470, / 960 = 34. At 1 Mb/s (125 packets/s, 118 800 B/s < 1.2
    /// Mb/s / 8) the minimum is 1 segment, above it 2.
    #[test]
    fn tso_segs_goal_is_a_millisecond_at_the_pacing_rate() {
        let mut b = Bbr::new(&params(Variant::Sack, 10, 1000));
        let at = |b: &mut Bbr, pps: f64, gain: f64| {
            b.pacing_bps = gain * pps * 8000.0 * PACING_MARGIN;
            b.tso_segs_goal()
        };
        assert_eq!(at(&mut b, 12_500.0, 1.0), 12);
        assert_eq!(at(&mut b, 12_500.0, HIGH_GAIN), 34);
        assert_eq!(at(&mut b, 125.0, 1.0), 1);
        assert_eq!(at(&mut b, 1250.0, 1.0), 2);
    }

    /// bbr_inflight = bbr_bdp + bbr_quantization_budget: BDP 100 packets,
    /// gain 2 → 200; pacing at 1 × bw = 1000 × 960 × 0.99 = 950 400 B/s,
    /// >> 10 = 928 bytes < one mss: tso goal 2 (above 1.2 Mb/s), + 3 × 2 =
    /// 206, even; in phase 0 (gain 5/4), 2 more. With gain 5/4 the BDP part
    /// is ceil(125) = 125 → 131 → 132 (even) + 2 = 134.
    #[test]
    fn inflight_target_adds_the_quantization_budget() {
        let mut b = steady();
        assert_eq!(b.pacing_gain, 1.0);
        assert_eq!(b.inflight_target(2.0, 0), 206);
        assert_eq!(b.inflight_target(2.0, 7), 214); // 207 + 6 = 213 → 214
        b.cycle_idx = 0;
        assert_eq!(b.inflight_target(1.25, 0), 134);
    }

    /// bbr_update_ack_aggregation with bw 1 packet/ms: an ack of 2 at 0
    /// starts an epoch; at 10 ms 10 were expected and 2 came, so the epoch
    /// restarts with the ack of 30 (extra 30); at 20 ms 10 more are expected
    /// (epoch 10 ms) and 35 came: extra 25, the max stays 30. Once the pipe
    /// is full it is added to the window, at most 100 ms × bw = 100.
    #[test]
    fn ack_aggregation_counts_packets_acked_beyond_the_bandwidth() {
        let ms = 1_000_000;
        let mut b = steady();
        b.cwnd = 1000;
        b.update_ack_aggregation(0, 2);
        b.update_ack_aggregation(10 * ms, 30);
        assert_eq!(b.extra_acked[b.extra_acked_idx as usize], 30);
        b.update_ack_aggregation(20 * ms, 5);
        assert_eq!(b.ack_epoch_acked, 35);
        assert_eq!(b.ack_aggregation_cwnd(), 30);
        b.update_ack_aggregation(21 * ms, 200);
        assert_eq!(b.ack_aggregation_cwnd(), 100); // 224 extra, capped
        b.full_bw_reached = false;
        assert_eq!(b.ack_aggregation_cwnd(), 0);
        // five round starts open the other window, the older one still counts
        b.full_bw_reached = true;
        b.round_start = true;
        for k in 0..5 {
            // a second on: 1000 expected, the epoch restarts with 1
            b.update_ack_aggregation((1000 + k) * ms, 1);
        }
        assert_eq!(b.extra_acked[b.extra_acked_idx as usize], 1);
        assert_eq!(b.ack_aggregation_cwnd(), 100);
    }

    /// bbr_update_min_rtt: probe-rtt holds the window at 4 until what is in
    /// flight (`tcp_packets_in_flight`: not SACKed, not lost) is 4, then 200
    /// ms and a round. After a timeout Linux marks everything outstanding
    /// lost: with 5000 packets beyond snd_una but 4 resent since, probe-rtt
    /// must still end (it never did when in flight was snd_nxt − snd_una).
    #[test]
    fn probe_rtt_ends_on_packets_in_flight_not_on_outstanding_sequence() {
        let ms = 1_000_000;
        let mut b = steady();
        b.min_rtt_stamp = 0;
        let mut delivered = 0;
        let mut t = 10_001 * ms; // the 10 s min_rtt window has expired
        let mut modes = vec![];
        while t < 10_600 * ms {
            let rs = RateSample {
                delivered: 2,
                prior_delivered: delivered,
                interval_ns: 200 * ms,
                total_delivered: delivered + 2,
                acked_sacked: 2,
            };
            delivered += 2;
            let mut e = ev(t, 2, rs, 150 * ms);
            e.highest_ack = 10_000;
            e.next_seq = 15_001;
            e.in_flight = 4;
            b.on_ack(&e);
            modes.push(b.mode);
            t += 50 * ms;
        }
        assert_eq!(modes[0], Mode::ProbeRtt);
        assert_eq!(b.probe_rtts, 1);
        assert_eq!(b.mode, Mode::ProbeBw, "{modes:?}");
    }

    /// bbr_update_bw: "if (rs->delivered < 0 || rs->interval_us <= 0)
    /// return; /* Not a valid observation */" comes before the round check,
    /// and tcp_rate_gen makes an interval shorter than min_rtt invalid: such
    /// an ack ends no round.
    #[test]
    fn an_invalid_rate_sample_ends_no_round() {
        let ms = 1_000_000;
        let mut b = steady();
        let round = b.round;
        let short = RateSample {
            delivered: 2,
            prior_delivered: 0,
            interval_ns: 50 * ms,
            total_delivered: 2,
            acked_sacked: 2,
        };
        b.on_ack(&ev(ms, 2, short, 100 * ms));
        assert_eq!(b.round, round);
        let long = RateSample {
            interval_ns: 100 * ms,
            ..short
        };
        b.on_ack(&ev(2 * ms, 2, long, 100 * ms));
        assert_eq!(b.round, round + 1);
    }

    /// bbr_set_cwnd_to_recover_or_restore: entering recovery the window is
    /// what is in flight (bbr_save_cwnd keeps the old one); when snd_una
    /// passes the recovery point, "restore cwnd saved before recovery",
    /// capped by the target. With acks of 2 every 60 ms (60 expected at 1
    /// packet/ms, so extra_acked is 2) the target is BDP 100 × 2 + 2 + 6 =
    /// 208. After a timeout the window is 1 (grown by what is acked, at
    /// least 4) until the loss state ends, then restored the same way.
    #[test]
    fn the_window_saved_at_a_loss_is_restored_when_recovery_ends() {
        let ms = 1_000_000;
        let mut b = steady();
        b.cwnd = 208;
        let rs = |prior: i64, total: i64| RateSample {
            delivered: 2,
            prior_delivered: prior,
            interval_ns: 100 * ms,
            total_delivered: total,
            acked_sacked: 2,
        };
        let mut e = ev(60 * ms, 2, rs(0, 2), 100 * ms);
        e.next_seq = 301;
        // one ack: at `t` ms, snd_una − 1, in flight, (prior, total) delivered
        let mut ack = |b: &mut Bbr, t: u64, highest: i64, in_flight: i64, d: (i64, i64)| {
            e.now = t * ms;
            e.highest_ack = highest;
            e.in_flight = in_flight;
            e.rate = Some(rs(d.0, d.1));
            if highest == 300 {
                e.next_seq = 601; // sent on since
            }
            b.on_ack(&e);
            b.cwnd
        };
        assert_eq!(ack(&mut b, 60, 100, 150, (0, 2)), 208);
        b.on_congestion_event();
        assert_eq!(b.cwnd, 150);
        // below the recovery point (300), in the first round: conservation
        assert_eq!(ack(&mut b, 120, 200, 60, (0, 4)), 150);
        assert_eq!(ack(&mut b, 180, 300, 0, (4, 6)), 208);
        // a timeout: the loss state lasts until 600 is acked (snd_nxt − 1)
        b.on_rto();
        assert_eq!(b.cwnd, 1);
        assert_eq!(ack(&mut b, 240, 450, 0, (6, 8)), CWND_MIN_TARGET); // 1 + 2, at least 4
        assert_eq!(ack(&mut b, 300, 600, 0, (8, 10)), 208);
    }

    /// Startup grows cwnd by what is acked toward high_gain × BDP: BDP 100,
    /// ceil(288.5) = 289 + 3 × 2 (pacing 2.885 × 1000 × 960 × 0.99 = 2 742
    /// 084 B/s, >> 10 = 2 677 bytes: 2 segments) = 295, even: 296.
    /// bbr_set_cwnd: "If we're below target cwnd, slow start cwnd toward
    /// target cwnd" — `cwnd + acked` while below it, so the last ack may
    /// carry it a little past (what it delivered, acked or SACKed); then it
    /// stays. Once the pipe is full, `min(cwnd + acked, target_cwnd)`.
    #[test]
    fn startup_grows_the_window_by_what_is_delivered_up_to_the_target() {
        let mut b = steady();
        b.full_bw_reached = false;
        b.mode = Mode::Startup;
        b.cwnd_gain = HIGH_GAIN;
        b.pacing_gain = HIGH_GAIN;
        b.set_pacing_rate();
        b.cwnd = 100;
        b.set_cwnd(2, 5000, 0);
        assert_eq!(b.cwnd, 102);
        b.cwnd = 295;
        b.set_cwnd(4, 5004, 0);
        assert_eq!(b.cwnd, 299);
        b.set_cwnd(2, 5006, 0);
        assert_eq!(b.cwnd, 299);
        b.full_bw_reached = true;
        b.set_cwnd(2, 5008, 0);
        assert_eq!(b.cwnd, 296);
    }
}
