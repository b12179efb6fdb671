//! The TCP connection's sending side: it owns the shared state
//! ([`TcpState`]), the congestion control ([`Cc`]), the loss recovery
//! ([`Recovery`]), the RTT estimator and the retransmission timer, and does
//! the output. An ack goes to loss recovery, which returns actions; the
//! connection applies them, telling congestion control the events.

use super::cc::{AckEvent, Controller};
use super::profiles::Profile;
use super::recovery::sack::{ProbeClock, RackTimer};
use super::recovery::{cumulative_ack, Action, Actions, Recovery};
use super::rtt::RttEstimator;
pub use super::state::CwndAction;
use super::state::TcpState;
use crate::net::packet::{Kind, Packet, SackBlock, CWR, ECE, ECT};
use crate::plan::{TcpParams, Variant};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, Default)]
pub struct TcpCounters {
    /// Packets handed to the network, retransmissions included.
    pub sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub acks: u64,
}

pub struct TcpSender {
    flow: u32,
    p: TcpParams,
    /// Sequence space and the facts loss recovery shares.
    st: TcpState,
    cc: Controller,
    rec: Recovery,
    /// Send times by packet, for a controller that takes an RTT sample on
    /// every ack as Linux does (empty otherwise): packet k at slot
    /// k mod len; `SimTime::MAX` marks a retransmission (Karn's rule).
    sent_at: Vec<SimTime>,
    /// Delivery-rate state (`tcp_rate.c`) for a controller that takes rate
    /// samples; `None` otherwise.
    rate: Option<Box<super::rate::RateState>>,
    /// The pacer: the earliest time the next packet may leave; a rate of
    /// 0 means no pacing (every controller but one that sets a rate).
    pacing_rate_bps: f64,
    next_send: SimTime,
    /// The last gap the pacer computed: (rate, packet size, ns) — the rate
    /// changes far less often than packets leave.
    pace_gap: (f64, u32, SimTime),
    /// The pacer holds packets back until this time (None: not waiting).
    pace_deadline: Option<SimTime>,
    /// Time of this sender's one pending pacer event (MAX if none).
    pace_entry: SimTime,
    /// The controller keeps per-packet state beside the window (send
    /// times, rate samples, a pacer): CUBIC and BBR. Reno's family does
    /// not, and its hot path tests this one flag instead of each hook.
    hooks: bool,
    /// The ack being processed echoes a congestion mark (ECN flows only).
    ece: bool,
    /// Classic ECN: an ack has echoed the offer of packet 0, so acks that
    /// echo a mark no longer open the window (ns-2 `ect_`).
    ect: bool,
    /// Classic ECN: the window was reduced; the next packet out says so
    /// (CWR, RFC 3168 §6.1.2; ns-2 `cong_action_`).
    cwr_pending: bool,
    /// Classic ECN: a mark was echoed at a window of one packet or less;
    /// another such mark backs the timer off (ns-2 `ecn_backoff_`).
    ecn_backoff: bool,
    rtt: RttEstimator,
    /// The sender has been started and not stopped.
    active: bool,
    /// The simulator held an ack on the way to this sender, and acks may
    /// be queued behind it on its last link (`Sim::drain_to_senders`).
    acks_queued: bool,
    /// Retransmission timer deadline, if armed.
    rto_deadline: Option<SimTime>,
    /// Time of this sender's live entry in the event queue (MAX if none).
    rto_entry: SimTime,
    counters: TcpCounters,
    /// RACK-TLP's reordering or probe timer, when it holds the one timer
    /// in the RTO's place (`rto_deadline` is then its time).
    early: Option<Early>,
    /// Loss recovery runs RACK-TLP (the `linux` profile with SACK).
    rack: bool,
    /// `send_hooks` has something to do (`hooks` or `rack`).
    send_hooks_on: bool,
}

/// A RACK-TLP timer due before the RTO (Linux's `icsk_pending`), which
/// recovery chose ([`Recovery::rack_timer`]) and handles when it fires.
#[derive(Clone, Copy, Debug)]
struct Early {
    timer: RackTimer,
    /// The RTO deadline it displaced.
    rto: Option<SimTime>,
}

/// "Infinite" data for a bulk sender (ns-2 `TCP_MAXSEQ`).
pub const BULK: i64 = i64::MAX / 4;

impl TcpSender {
    pub fn new(flow: u32, p: TcpParams, boot_time_s: f64) -> Self {
        let mut cc = Controller::new(&p);
        if let Controller::Bbr(b) = &mut cc {
            b.seed_with(flow);
        }
        let hooks = cc.wants_ack_rtt() || cc.sees_every_ack();
        let mut rtt = RttEstimator::new(
            p.tick_ns,
            p.initial_rto_ns,
            p.min_rto_ns,
            p.max_rto_ns,
            boot_time_s,
        );
        if p.profile == Profile::Linux {
            rtt.use_linux();
        }
        let linux = p.profile == Profile::Linux;
        // Linux runs PRR only for a controller without `cong_control`
        // (tcp_cong_control), so not for BBR; but without PRR this engine's
        // SACK recovery sends while its pipe is below cwnd, which with RACK
        // let a BBR startup overshoot to thousands of packets and stall (a
        // merge of two branches found it): BBR keeps PRR until that is fixed
        let bbr = matches!(p.cc, super::cc::Cc::Bbr);
        let mut rec = Recovery::new(p.variant, linux, linux, bbr);
        let rack = rec.rack_mut().is_some();
        TcpSender {
            flow,
            p,
            st: TcpState::new(&p),
            cc,
            rec,
            rack,
            send_hooks_on: hooks || rack,
            sent_at: Vec::new(),
            rate: bbr.then(Box::default),
            pacing_rate_bps: 0.0,
            next_send: 0,
            pace_gap: (0.0, 0, 0),
            pace_deadline: None,
            pace_entry: SimTime::MAX,
            hooks,
            ece: false,
            ect: false,
            cwr_pending: false,
            ecn_backoff: false,
            rtt,
            active: false,
            acks_queued: false,
            rto_deadline: None,
            rto_entry: SimTime::MAX,
            counters: TcpCounters::default(),
            early: None,
        }
    }

    /// Remember when packet `seqno` left (or that it is a retransmission),
    /// keeping every packet not yet acked in its own slot.
    fn note_sent(&mut self, seqno: i64, now: SimTime, rtx: bool) {
        let span = (seqno - self.st.highest_ack()) as usize;
        if span >= self.sent_at.len() {
            let len = (2 * span).next_power_of_two().max(64);
            let mut grown = vec![SimTime::MAX; len];
            let old = self.sent_at.len();
            if old > 0 {
                for k in (self.st.highest_ack() + 1)..=self.st.maxseq().min(seqno - 1) {
                    grown[k as usize & (len - 1)] = self.sent_at[k as usize & (old - 1)];
                }
            }
            self.sent_at = grown;
        }
        let len = self.sent_at.len();
        self.sent_at[seqno as usize & (len - 1)] = if rtx { SimTime::MAX } else { now };
    }

    /// The RTT of packet `ack`, if it was sent once (with rate samples:
    /// if none of the `acked` packets the ack covers was resent).
    fn ack_rtt(&self, ack: i64, acked: i64, now: SimTime) -> Option<SimTime> {
        if let Some(r) = &self.rate {
            return r.ack_rtt(ack, acked, now);
        }
        if self.sent_at.is_empty() || ack < 0 {
            return None;
        }
        let t = self.sent_at[ack as usize & (self.sent_at.len() - 1)];
        (t <= now).then(|| now - t)
    }

    /// The RTT estimator (read-only: the sender feeds it).
    #[inline]
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// What this sender has done so far.
    #[inline]
    pub fn counters(&self) -> &TcpCounters {
        &self.counters
    }

    /// The congestion control (read-only).
    #[inline]
    pub fn cc(&self) -> &Controller {
        &self.cc
    }

    /// The loss recovery (read-only).
    #[inline]
    pub fn recovery(&self) -> &Recovery {
        &self.rec
    }

    /// The sender has been started and not stopped.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// When the one retransmission (or RACK-TLP) timer is due, if armed.
    #[inline]
    pub fn rto_deadline(&self) -> Option<SimTime> {
        self.rto_deadline
    }

    /// The time of this sender's live timer entry in the event queue
    /// (`SimTime::MAX`: none).
    #[inline]
    pub fn rto_entry(&self) -> SimTime {
        self.rto_entry
    }

    /// The event queue holds this sender's timer entry for time `at`
    /// (`SimTime::MAX`: it holds none, the entry having fired).
    #[inline]
    pub fn note_rto_entry(&mut self, at: SimTime) {
        self.rto_entry = at;
    }

    /// The pacer holds packets back until this time (None: not waiting).
    #[inline]
    pub fn pace_deadline(&self) -> Option<SimTime> {
        self.pace_deadline
    }

    /// The event queue holds no pacer event for this sender.
    #[inline]
    pub fn pace_unscheduled(&self) -> bool {
        self.pace_entry == SimTime::MAX
    }

    /// The time of this sender's pending pacer event (`SimTime::MAX`: none).
    #[inline]
    pub fn pace_entry(&self) -> SimTime {
        self.pace_entry
    }

    /// The event queue holds this sender's pacer event for time `at`.
    #[inline]
    pub fn note_pace_entry(&mut self, at: SimTime) {
        self.pace_entry = at;
    }

    /// Acks may be queued on this sender's last link behind one the
    /// simulator held (it takes them ahead of the clock when it can).
    #[inline]
    pub fn acks_queued(&self) -> bool {
        self.acks_queued
    }

    /// Say whether acks may be queued on this sender's last link.
    #[inline]
    pub fn note_acks_queued(&mut self, queued: bool) {
        self.acks_queued = queued;
    }

    /// The pacer's event fired: none is pending, nothing waits.
    #[inline]
    pub fn pace_fired(&mut self) {
        self.pace_entry = SimTime::MAX;
        self.pace_deadline = None;
    }

    pub fn variant(&self) -> Variant {
        self.p.variant
    }

    /// Congestion window, packets.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        self.cc.cwnd()
    }

    /// Slow-start threshold, packets.
    #[inline]
    pub fn ssthresh(&self) -> i64 {
        self.cc.ssthresh()
    }

    /// Highest cumulative ack (−1 before any).
    #[inline]
    pub fn highest_ack(&self) -> i64 {
        self.st.highest_ack()
    }

    /// The usable window, packets (ns-2 `window()`; Reno adds `dupwnd`).
    #[inline]
    pub fn window(&self) -> i64 {
        self.st.window(self.cc.cwnd())
    }

    /// Packets sent and not yet cumulatively acked.
    pub fn in_flight(&self) -> i64 {
        self.st.maxseq() - self.st.highest_ack()
    }

    /// The application starts a bulk transfer.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.active = true;
        self.st.supply_to(BULK);
        self.pacing_rate_bps = self.cc.pacing_rate_bps();
        self.send_much(now, 0, out);
    }

    /// An application that writes (CBR) starts: nothing to send until it
    /// writes (ns-2: `curseq_` 0 until the first `sendmsg`).
    pub fn start_app(&mut self) {
        self.active = true;
        self.st.supply_to(0);
    }

    /// The application wrote `n` packets (ns-2 `sendmsg`): send what the
    /// window allows. Ignored once stopped.
    pub fn app_write(&mut self, n: i64, now: SimTime, out: &mut Vec<Packet>) {
        if self.active {
            self.st.supply(n);
            self.send_much(now, 0, out);
        }
    }

    /// Packets written and not yet cumulatively acknowledged (sent or not).
    pub fn buffered(&self) -> i64 {
        self.st.curseq() - self.st.highest_ack() - 1
    }

    /// The application stops: nothing new is sent; outstanding data is still
    /// recovered. The timer is disarmed once everything is acked.
    pub fn stop(&mut self) {
        self.active = false;
        self.st.close();
    }

    /// Send packet `seqno` (ns-2 `output()`).
    pub fn output(&mut self, seqno: i64, now: SimTime, out: &mut Vec<Packet>) {
        // ns-2 `output()` adds the header bytes (`useHeaders_`) in the else branch of
        // its packet-0 test, so packet 0 is the bare header with `syn_`, and the bare
        // payload without it
        let size = match (seqno, self.p.syn) {
            (0, true) => self.p.header_size,
            (0, false) => self.p.packet_size - self.p.header_size,
            _ => self.p.packet_size,
        };
        let mut pkt = Packet::new(Kind::Data, self.flow, seqno as u32, size);
        if self.p.ecn {
            self.ecn_bits(&mut pkt);
        }
        let force_timer = self.st.highest_ack() == self.st.maxseq();
        self.counters.sent += 1;
        if self.send_hooks_on {
            self.send_hooks(seqno, size, now);
        }
        if self.st.note_output(seqno) {
            self.rtt.time_new(seqno, now);
        } else {
            pkt.rtx = true;
            self.counters.retransmissions += 1;
        }
        out.push(pkt);
        // RFC 6298 §5: "(5.1) Every time a packet containing data is sent (including a
        // retransmission), if the timer is not running, start it running so that it will expire
        // after RTO seconds (for the current value of RTO)."
        if self.rto_deadline.is_none() || force_timer {
            self.set_rtx_timer(now);
        }
    }

    /// The ECN bits on a data packet. DCTCP: every packet is ECT. Classic
    /// ECN, as ns-2's `output()` sets them: packet 0 offers ECN (ECE, not
    /// ECT: RFC 3168 §6.1.1 keeps the SYN unmarkable), every other packet is
    /// ECT, and the first packet after a reduction — a retransmission too
    /// (ns-2's `SetCWRonRetransmit_`) — carries CWR.
    #[cold]
    fn ecn_bits(&mut self, pkt: &mut Packet) {
        if !self.st.ecn() {
            pkt.ecn = ECT;
            return;
        }
        pkt.ecn = if pkt.seq == 0 { ECE } else { ECT };
        if self.cwr_pending {
            pkt.ecn |= CWR;
            self.cwr_pending = false;
        }
    }

    /// What a controller with per-packet state (or RACK) notes as packet `seqno` of
    /// `size` bytes leaves (before `maxseq` moves).
    #[inline]
    fn send_hooks(&mut self, seqno: i64, size: u32, now: SimTime) {
        if self.rack {
            self.rack_on_send(seqno, now);
        }
        if let Some(r) = &mut self.rate {
            // the rate table keeps the send times too
            let rtx = seqno <= self.st.maxseq();
            r.on_send(
                seqno,
                now,
                self.st.maxseq() - self.st.highest_ack(),
                self.st.highest_ack(),
                rtx,
            );
        } else if self.cc.wants_ack_rtt() {
            self.note_sent(seqno, now, seqno <= self.st.maxseq());
        }
        if self.pacing_rate_bps > 0.0 {
            // the next packet may leave one packet time at the pacing rate
            // after this one (Linux's `tcp_update_skb_after_send`)
            let gap = self.pace_gap(size);
            self.next_send = self.next_send.max(now) + gap;
        }
    }

    /// One packet time of `size` bytes at the pacing rate, ns.
    #[inline]
    fn pace_gap(&mut self, size: u32) -> SimTime {
        let (rate, sz, ns) = self.pace_gap;
        if rate == self.pacing_rate_bps && sz == size {
            return ns;
        }
        let ns = (size as f64 * 8e9 / self.pacing_rate_bps) as SimTime;
        self.pace_gap = (self.pacing_rate_bps, size, ns);
        ns
    }

    /// Send as much as the window allows (ns-2 `send_much()`; SACK plans its own).
    #[inline]
    pub fn send_much(&mut self, now: SimTime, maxburst: u32, out: &mut Vec<Packet>) {
        // a SACK sender held by the pacer sends nothing: said here, without
        // the call (half of a paced flow's calls end so)
        if matches!(self.rec, Recovery::Sack(_)) && self.paced(now) {
            return;
        }
        self.send_much_unpaced(now, maxburst, out)
    }

    #[inline(never)]
    fn send_much_unpaced(&mut self, now: SimTime, maxburst: u32, out: &mut Vec<Packet>) {
        if let Recovery::Sack(_) = self.rec {
            let cwnd = self.cc.cwnd(); // output never changes it
            loop {
                let Recovery::Sack(x) = &mut self.rec else {
                    unreachable!()
                };
                match x.next_send(&mut self.st, cwnd) {
                    Some(seq) => self.output(seq, now, out),
                    None => return,
                }
                if self.paced(now) {
                    return;
                }
            }
        }
        // (asked once: sending changes neither the window nor `dupwnd`, as
        // ns-2's loop asks it again after each packet and gets the same)
        let win = self.window();
        let mut n = 0;
        while self.st.t_seqno() <= self.st.highest_ack() + win
            && self.st.t_seqno() < self.st.curseq()
        {
            if self.paced(now) {
                return;
            }
            self.output(self.st.t_seqno(), now, out);
            self.st.sent_next();
            n += 1;
            debug_assert_eq!(win, self.window());
            if maxburst > 0 && n == maxburst {
                break;
            }
        }
    }

    /// The pacer holds the next packet back: it may not leave before
    /// `next_send`; note when to try again (one pending event per flow).
    #[inline]
    fn paced(&mut self, now: SimTime) -> bool {
        // (the time first: it is false for every flow not paced)
        if self.next_send > now && self.pacing_rate_bps > 0.0 {
            self.pace_deadline = Some(self.next_send);
            return true;
        }
        false
    }

    /// Limited transmit: one new packet on an early duplicate ack (RFC 3042; ns-2 `send_one()`).
    pub fn send_one(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let st = &self.st;
        // RFC 3042 §2: "The receiver's advertised window allows the transmission of the segment."
        if st.t_seqno() <= st.highest_ack() + st.wnd()
            && st.t_seqno() < st.curseq()
            // RFC 3042 §2: "The amount of outstanding data would remain less than or equal to the
            // congestion window plus 2 segments."
            && (st.t_seqno() as f64)
                <= st.highest_ack() as f64 + self.cc.cwnd() + st.dupacks() as f64
        {
            self.output(self.st.t_seqno(), now, out);
            self.st.sent_next();
        }
    }

    #[inline]
    pub fn set_rtx_timer(&mut self, now: SimTime) {
        self.rto_deadline = Some(now + self.rtt.timeout_ns());
    }

    #[inline]
    pub fn cancel_rtx_timer(&mut self) {
        self.rto_deadline = None;
    }

    /// ns-2 `reset_rtx_timer(mild, backoff)`: after a timeout or a fast
    /// retransmit. Not mild: go back to the first unacked packet (go-back-N).
    pub fn reset_rtx_timer(&mut self, now: SimTime, mild: bool, backoff: bool) {
        if backoff {
            self.rtt.back_off();
        }
        self.set_rtx_timer(now);
        // RFC 6298 §5: "(5.4) Retransmit the earliest segment that has not been acknowledged by the
        // TCP receiver."
        if !mild {
            self.st.go_back_n();
        }
        self.rtt.stop_timing();
    }

    /// Re-arm or cancel the timer after an ack (ns-2 `newtimer()`).
    pub fn newtimer(&mut self, ack: i64, now: SimTime) {
        if self.st.t_seqno() > ack || ack < self.st.maxseq() || self.cc.cwnd() < 1.0 {
            // RFC 6298 §5: "(5.3) When an ACK is received that acknowledges new data, restart the
            // retransmission timer so that it will expire after RTO seconds (for the current value
            // of RTO)."
            self.set_rtx_timer(now);
        } else {
            // RFC 6298 §5: "(5.2) When all outstanding data has been acknowledged, turn off the
            // retransmission timer."
            self.cancel_rtx_timer();
        }
    }

    /// The timer half of ns-2 `newack()`: an RTT sample (Karn's rule: only
    /// for the timed packet, which a retransmission stops timing), then
    /// re-arm the timer. Returns the sample, seconds.
    #[inline(always)]
    fn newack_timing(&mut self, ack: i64, now: SimTime) -> Option<f64> {
        if self.rtt.is_linux() {
            return self.linux_timing(ack, now);
        }
        let mut sample = None;
        if let Some(m) = self.rtt.sample_ack(ack, now) {
            // (not while marks keep a one-packet window backed off)
            if !(self.ecn_backoff && self.ect && self.ece) {
                self.rtt.reset_backoff();
                self.ecn_backoff = false;
            }
            let tao = crate::time::secs(m);
            self.rtt.update(now, tao);
            sample = Some(tao);
        }
        self.newtimer(ack, now);
        sample
    }

    /// The timer half of a new ack under the `linux` profile: Linux's
    /// estimator takes a sample on every ack — with RACK, from the send
    /// time of the first packet the ack covers (the timestamp it echoes);
    /// otherwise from the one timed packet, Karn's rule applying.
    #[cold]
    fn linux_timing(&mut self, ack: i64, now: SimTime) -> Option<f64> {
        let m = match self.rec.rack_mut() {
            Some(r) => r.take_ack_rtt(),
            None => self.rtt.sample_ack(ack, now),
        };
        if let Some(m) = m {
            self.rtt
                .update_linux(m, ack + 1, self.st.maxseq().max(ack) + 1);
        }
        self.newtimer(ack, now);
        m.map(crate::time::secs)
    }

    /// Re-arm the one timer after an ack or a timer under RACK-TLP: the
    /// timer recovery asks for (the reordering timer, or the probe timeout
    /// in the open state), if it is due before the RTO, which stays
    /// underneath; recovery handles it when it fires ([`Self::early_timeout`]).
    #[cold]
    fn linux_timer(&mut self, now: SimTime) {
        if self.rec.rack().is_none() {
            return;
        }
        // the RTO the ns-2 logic wants: the displaced one while the early
        // timer is still in place, else whatever it has set since
        let rto = match (self.rto_deadline, self.early.take()) {
            (Some(d), Some(e)) if d == e.timer.at() => e.rto,
            (d, _) => d,
        };
        self.rto_deadline = rto;
        let Some(rto_at) = rto else {
            return;
        };
        let clock = ProbeClock {
            now,
            srtt_ns: self.rtt.linux_srtt_ns(),
            initial_rto_ns: self.p.initial_rto_ns,
            min_rto_ns: self.p.min_rto_ns,
        };
        if let Some(timer) = self.rec.rack_timer(&self.st, &clock) {
            if timer.at() < rto_at {
                self.early = Some(Early { timer, rto });
                self.rto_deadline = Some(timer.at());
            }
        }
    }

    /// Send the tail loss probe recovery asked for: packet `seq`, new data
    /// if `new`; the RTO restarts from it.
    #[cold]
    #[inline(never)]
    fn send_probe(&mut self, seq: i64, new: bool, now: SimTime, out: &mut Vec<Packet>) {
        self.output(seq, now, out);
        if new {
            self.st.sent_next();
        }
        self.set_rtx_timer(now);
    }

    /// RACK notes the send time of packet `seqno` (before `maxseq` moves).
    #[inline]
    fn rack_on_send(&mut self, seqno: i64, now: SimTime) {
        let (base, maxseq) = (self.st.highest_ack() + 1, self.st.maxseq());
        if let Some(r) = self.rec.rack_mut() {
            r.on_send(seqno, now, base, maxseq);
        }
    }

    /// A tail loss probe repaired a loss: reduce the window once (CWR).
    #[cold]
    fn probe_reduce(&mut self, window: f64) {
        self.cc.on_congestion_event(window, false, false);
        self.cwr_pending = self.st.ecn();
    }

    /// Hand RACK the time and the smoothed RTT of the event at hand.
    #[inline(never)]
    fn rack_clock(&mut self, now: SimTime) -> bool {
        let srtt = self.rtt.linux_srtt_ns();
        match self.rec.rack_mut() {
            Some(r) => {
                r.set_clock(now, srtt);
                true
            }
            None => false,
        }
    }

    /// Apply one of loss recovery's actions.
    #[inline(always)]
    fn apply(&mut self, a: Action, now: SimTime, out: &mut Vec<Packet>) {
        match a {
            Action::NewAck { ack, acked, grow } => {
                let sample = self.newack_timing(ack, now);
                if self.hooks {
                    self.ack_hooks(ack, acked, grow, sample, now);
                } else if grow && !(self.ece && self.ect) {
                    // (an ack echoing a mark does not open the window: ns-2's
                    // recv_newack_helper skips opencwnd() on ECN-Echo once
                    // the offer was echoed)
                    let st = &self.st;
                    self.cc.on_ack_with(|| AckEvent {
                        now,
                        acked,
                        rtt_s: sample,
                        ack_rtt_ns: None,
                        highest_ack: ack,
                        next_seq: st.maxseq() + 1,
                        in_flight: st.maxseq() - ack,
                        rate: None,
                        ece: false,
                        grow,
                    });
                    if ack == 0 && self.p.syn {
                        self.cc.on_syn_acked();
                    }
                }
                if self.ect && !self.ece {
                    self.ecn_backoff = false;
                }
                if self.ece && !self.ect {
                    self.ect = true;
                }
            }
            Action::EnterRecovery { window, to_one } => {
                self.counters.fast_retransmits += 1;
                // recovery has just recorded the dupack as the last window change
                self.cc.on_congestion_event(window, to_one, false);
                self.cwr_pending = self.st.ecn();
            }
            Action::RepairAfterEcn { to_one } => {
                self.counters.fast_retransmits += 1;
                if to_one {
                    let w = self.st.windowd(self.cc.cwnd());
                    self.cc.on_rto(w, false, false);
                    self.cwr_pending = true;
                }
            }
            Action::ExitRecovery => {}
            Action::Reduce { window } => self.probe_reduce(window),
            Action::ResetTimer { mild } => self.reset_rtx_timer(now, mild, false),
            Action::Newtimer(ack) => self.newtimer(ack, now),
            Action::ResetBackoff => self.rtt.reset_backoff(),
            Action::StopTiming(ack) => {
                self.rtt.discard_sample(ack);
            }
            Action::Deflate(n) => self.cc.deflate(n),
            Action::Retransmit(seq) => self.output(seq, now, out),
            Action::SendMuch { maxburst } => self.send_much(now, maxburst, out),
            Action::SendOne => self.send_one(now, out),
            Action::Probe { seq, new } => self.send_probe(seq, new, now, out),
        }
    }

    /// The packets the last ack newly SACKed or cumulatively acked — a
    /// partial ack in recovery too — are delivered now, for the
    /// delivery-rate sample (Linux's `tcp_sacktag_one` and
    /// `tcp_clean_rtx_queue` → `tcp_rate_skb_delivered`). Every ack of a
    /// flow with a rate sampler (BBR) comes here.
    #[inline]
    fn rate_sacked(&mut self) {
        let Some(rate) = &mut self.rate else {
            return;
        };
        if let Recovery::Sack(x) = &mut self.rec {
            for k in x.drain_sacked_now() {
                rate.on_sacked(k);
            }
        }
        rate.on_cum_ack(self.st.highest_ack());
    }

    /// A new ack for a controller with per-packet state: its RTT and rate
    /// samples, the ack event (BBR's `cong_control` sees every ack, in
    /// recovery too) and the pacing rate it sets.
    #[inline(never)]
    fn ack_hooks(&mut self, ack: i64, acked: i64, grow: bool, sample: Option<f64>, now: SimTime) {
        // with the rate sample, the RTT of the last packet the ack SACKed
        // (`ca_rtt_us`: a SACK's sample replaces the ack's)
        let (rate, sack_rtt) = match &mut self.rate {
            Some(r) => (r.on_ack(ack, now), r.take_sack_rtt(now)),
            None => (None, None),
        };
        // BBR (`cong_control`) and DCTCP see every ack, in recovery too
        if grow || self.cc.sees_every_ack() {
            let ack_rtt_ns = match sack_rtt {
                Some(_) => sack_rtt,
                None if acked > 0 => self.ack_rtt(ack, acked, now),
                None => None,
            };
            self.cc.on_ack(&AckEvent {
                now,
                acked,
                rtt_s: sample,
                ack_rtt_ns,
                highest_ack: ack,
                next_seq: self.st.maxseq() + 1,
                in_flight: self.packets_in_flight(ack),
                rate,
                ece: self.ece,
                grow,
            });
            if self.rate.is_some() {
                // only a rate-based controller (BBR) sets a pacing rate
                self.pacing_rate_bps = self.cc.pacing_rate_bps();
            }
            if ack == 0 && self.p.syn {
                self.cc.on_syn_acked();
            }
        }
    }

    /// Packets in flight once `ack` is taken (Linux's
    /// `tcp_packets_in_flight`): after a timeout, ns-2's go-back-N resends
    /// from `highest_ack`, so what is in flight is what left since; in
    /// Linux's loss state (RACK), the scoreboard's pipe — what is neither
    /// SACKed nor marked lost.
    #[inline]
    fn packets_in_flight(&self, ack: i64) -> i64 {
        match &self.rec {
            Recovery::Sack(x) => x.loss_pipe(),
            _ => None,
        }
        .unwrap_or_else(|| (self.st.t_seqno() - 1).min(self.st.maxseq()) - ack)
    }

    /// The retransmission timer expired (ns-2 `TcpAgent::timeout()`); the
    /// variant's own part has run first.
    fn base_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let nothing_outstanding = self.st.highest_ack() == self.st.maxseq();
        self.st.mark_recover();
        if self.st.highest_ack() == -1 {
            self.cc.on_first_packet_lost();
        }
        self.cwr_pending = self.st.ecn();
        let w = self.st.windowd(self.cc.cwnd());
        if nothing_outstanding {
            let after = self.st.last_cwnd_action() == CwndAction::Timeout;
            self.cc.on_rto(w, false, after);
        } else if self.st.ecn() && self.st.last_cwnd_action() == CwndAction::Ecn {
            // in the window an echoed mark reduced: restart from one packet,
            // ssthresh kept (ns-2's timeout() "if we are in recovery from a
            // recent ECN, don't cut down ssthresh_"; not counted in nrexmit_)
            self.cc.on_rto(w, false, false);
        } else {
            self.counters.timeouts += 1;
            self.st.note_cwnd_action(CwndAction::Timeout);
            self.cc.on_rto(w, true, true);
        }
        // go-back-N (ns-2) — but Linux's loss state resends what RACK's
        // timeout marked, from where it is (`snd_nxt` stays)
        self.reset_rtx_timer(now, self.rack, !nothing_outstanding);
        self.st.note_cwnd_action(CwndAction::Timeout);
        self.send_much(now, 0, out);
    }

    /// An ack arrived from the receiver; `sack`: its SACK blocks
    /// (`TcpSink::take_sack`).
    pub fn on_ack(
        &mut self,
        pkt: &Packet,
        sack: &[SackBlock],
        now: SimTime,
        out: &mut Vec<Packet>,
    ) {
        self.counters.acks += 1;
        if self.p.ecn {
            self.ece = pkt.ecn & ECE != 0;
            if self.ece && !self.cc.sees_every_ack() {
                self.ecn_echo(cumulative_ack(pkt));
            }
        }
        let mut acts = Actions::default();
        let cwnd = self.cc.cwnd();
        let rack = self.rack && self.rack_clock(now);
        self.rec
            .on_ack(&mut self.st, cumulative_ack(pkt), sack, cwnd, &mut acts);
        self.rate_sacked();
        for &a in acts.as_slice() {
            self.apply(a, now, out);
        }
        if matches!(&self.rate, Some(r) if r.pending()) {
            // an ack that only SACKs: the controller sees it too
            // (`tcp_ack` calls `cong_control` on every ack that delivers)
            self.ack_hooks(self.st.highest_ack(), 0, false, None, now);
        }
        if !self.active && self.st.highest_ack() >= self.st.maxseq() {
            self.cancel_rtx_timer();
        }
        if rack {
            self.linux_timer(now);
        }
        self.check_invariants();
    }

    /// The connection's invariants, at the end of every ack and timer
    /// (debug and test builds only: compiled out of release builds). A
    /// failure is a bug in the sequence space, the scoreboard or the window.
    #[inline]
    fn check_invariants(&self) {
        #[cfg(debug_assertions)]
        {
            self.st.check_invariants();
            self.rec.check_invariants(&self.st);
            let cwnd = self.cc.cwnd();
            debug_assert!(cwnd.is_finite() && cwnd >= 1.0, "cwnd {cwnd}");
            debug_assert!(
                self.rto_deadline.is_some() || self.early.is_none(),
                "an early RACK-TLP timer without the timer armed"
            );
        }
    }

    /// An ack for `ack` echoed a congestion mark (RFC 3168 §6.1.2): halve
    /// the window as for a loss, without retransmitting, before the ack
    /// releases anything (ns-2's `ecn()` runs first in `recv`, for duplicate
    /// acks too); at most once per window of data: only an ack beyond the
    /// last reduction's window (`recover`, which losses move too), or the
    /// first after a timeout. The next packet out carries CWR.
    #[cold]
    fn ecn_echo(&mut self, ack: i64) {
        let st = &mut self.st;
        if ack > st.recover() || st.last_cwnd_action() == CwndAction::Timeout {
            st.mark_recover();
            st.note_cwnd_action(CwndAction::Ecn);
            if self.cc.cwnd() <= 1.0 {
                // a window of one marked again: back off as for a timeout
                if self.ecn_backoff {
                    self.rtt.back_off();
                }
                self.ecn_backoff = true;
            } else {
                self.ecn_backoff = false;
            }
            // RFC 3168 §6.1.2: "That is, the TCP source halves the congestion window "cwnd" and
            // reduces the slow start threshold "ssthresh"."
            self.cc.on_ecn(st.windowd(self.cc.cwnd()));
            self.cwr_pending = true;
        }
    }

    /// The retransmission timer fired.
    pub fn on_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.rto_deadline = None;
        if let Some(e) = self.early.take() {
            if e.timer.at() == now {
                return self.early_timeout(e, now, out);
            }
        }
        if !self.active && self.st.highest_ack() >= self.st.maxseq() {
            return;
        }
        if self.rack {
            self.rack_clock(now);
        }
        self.rec.on_timeout(&mut self.st);
        self.base_timeout(now, out);
        self.check_invariants();
    }

    /// RACK's reordering timer or TLP's probe timer fired in the RTO's place.
    #[cold]
    fn early_timeout(&mut self, e: Early, now: SimTime, out: &mut Vec<Packet>) {
        self.rto_deadline = e.rto;
        self.rack_clock(now);
        let mut acts = Actions::default();
        let cwnd = self.cc.cwnd();
        self.rec
            .on_rack_timer(&mut self.st, e.timer, cwnd, &mut acts);
        for &a in acts.as_slice() {
            self.apply(a, now, out);
        }
        self.linux_timer(now);
        self.check_invariants();
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::Variant;
    use crate::tcp::cc::Cc;
    use crate::tcp::dialogue::{params, Dialogue};
    use crate::tcp::profiles::Profile;

    /// The send times CUBIC's per-ack RTTs come from survive the table's
    /// growth: 80 packets out past the last ack need more than its first
    /// 64 slots, and packets 70.., sent at 30 ms, still read 30 ms after.
    #[test]
    fn send_times_survive_the_table_growing() {
        let mut p = params(Variant::Sack, 10, 1000);
        p.cc = Cc::Cubic;
        p.profile = Profile::Linux;
        let mut d = Dialogue::with(p);
        d.sent(&(0..10).collect::<Vec<_>>());
        d.ack(10, 9).sent(&(10..30).collect::<Vec<_>>());
        d.ack(20, 29).sent(&(30..70).collect::<Vec<_>>());
        assert_eq!(d.s.sent_at.len(), 64);
        d.ack(30, 69).sent(&(70..150).collect::<Vec<_>>());
        assert_eq!(d.s.sent_at.len(), 128);
        let ms = 1_000_000;
        for k in [70, 75, 100, 133, 149] {
            assert_eq!(d.s.ack_rtt(k, 1, 100 * ms), Some(70 * ms), "packet {k}");
        }
        // Reno under ns-2's profile keeps no table
        let d = Dialogue::start(Variant::Sack, 10, 1000);
        assert!(d.s.sent_at.is_empty());
    }

    /// RFC 3168 §6.1.2: on an ECN-Echo "the TCP source halves the
    /// congestion window "cwnd" and reduces the slow start threshold
    /// "ssthresh"", at most once per window of data, and retransmits
    /// nothing; data packets carry ECT.
    #[test]
    fn an_ecn_echo_halves_the_window_once_per_window_without_a_retransmission() {
        use crate::net::packet::{CWR, ECE, ECT};
        let mut p = params(Variant::Reno, 10, 40);
        p.ecn = true;
        let mut d = Dialogue::with(p);
        // packet 0 offers ECN (ECE, not ECT: RFC 3168 §6.1.1); the rest are ECT
        d.ecn_bits(&[ECE, ECT, ECT, ECT, ECT, ECT, ECT, ECT, ECT, ECT])
            .sent(&(0..10).collect::<Vec<_>>());
        // the receiver answers the offer: no reduction (nothing beyond `recover`
        // = 0 is acked), slow start goes on
        d.ack_ece(100, 0).sent(&[10, 11]).window(11.0, 40);
        // a mark echoed: ns-2's TCP(1, ½) halves the window in use, 11 → 5.5,
        // ssthresh 5; the window (5 from packet 2) releases nothing
        d.ack_ece(110, 1).window(5.5, 5).sent(&[]);
        // the receiver echoes until it sees CWR: for data sent before the
        // reduction no second cut, and echoing acks do not open the window
        d.ack_ece(120, 2).sent(&[]);
        d.ack_ece(130, 3).window(5.5, 5).sent(&[]);
        // an ack without the echo opens it: 5.5 + 1/5.5; 4 + 5 < 12, nothing out
        d.ack(140, 4).sent(&[]);
        // 5.68 + 1/5.68 = 5.86: 7 + 5 = 12 goes, and says the window was reduced
        let w = 5.5 + 1.0 / 5.5;
        let w = w + 1.0 / w;
        d.ack(150, 7)
            .ecn_bits(&[ECT | CWR])
            .sent(&[12])
            .window(w, 5);
        // an echo beyond the reduction's window (11) cuts again: 5.86 → 2.93,
        // and the first of the packets 12 + 2 releases says so
        d.ack_ece(160, 12)
            .window(w / 2.0, 2)
            .ecn_bits(&[ECT | CWR, ECT])
            .sent(&[13, 14]);
        // without ECN the same acks do nothing special
        let mut d = Dialogue::start(Variant::Reno, 10, 40);
        d.sent(&(0..10).collect::<Vec<_>>());
        d.ack(100, 0).sent(&[10, 11]).window(11.0, 40);
        d.ack_ece(110, 1).window(12.0, 40).sent(&[12, 13]);
    }

    /// RFC 6298 §5.5: "The host MUST set RTO <- RTO * 2 ("back off the
    /// timer")"; Karn's rule (RFC 6298 §3): "RTT samples MUST NOT be made
    /// using segments that were retransmitted", and the backed-off RTO is
    /// kept until a valid sample. §2.2 (first sample R): SRTT <- R,
    /// RTTVAR <- R/2, RTO <- SRTT + 4·RTTVAR = 3R.
    #[test]
    fn rto_backs_off_and_karn_takes_no_sample_from_a_retransmission() {
        let mut d = Dialogue::start(Variant::Reno, 2, 40);
        d.sent(&[0, 1]).timer(3000); // initial RTO 3 s
                                     // timeout: ssthresh = max(W/2, 2), cwnd 1, resend 0, RTO doubled
        d.timeout(3000).sent(&[0]).window(1.0, 2).timer(9000);
        d.timeout(9000).sent(&[0]).timer(21000);
        assert_eq!(d.s.rtt.backoff(), 4);
        // the ack covers the retransmitted 0 and 1: no RTT sample, the
        // backed-off RTO (12 s) stays
        d.ack(9100, 1).sent(&[2, 3]).window(2.0, 2).timer(21100);
        assert_eq!((d.s.rtt.backoff(), d.s.rtt.srtt_s()), (4, 0.0));
        // 2 was sent once, at 9100: a valid 200 ms sample ends the backoff
        d.ack(9300, 2).sent(&[4]);
        assert_eq!(d.s.rtt.backoff(), 1);
        let srtt = d.s.rtt.srtt_s();
        assert!((0.19..=0.2).contains(&srtt), "srtt {srtt}");
        let rto = crate::time::secs(d.s.rtt.timeout_ns());
        assert!((rto - 3.0 * srtt).abs() < 1e-9, "rto {rto} srtt {srtt}");
    }
}
