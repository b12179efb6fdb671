//! TCP SACK (ns-2 `Agent/TCP/Sack1` with the `Agent/TCPSink/Sack1` receiver;
//! RFC 2018 blocks, recovery in the spirit of RFC 6675). A scoreboard records
//! which packets above the cumulative ack the receiver holds. Fast recovery
//! starts on the third duplicate ack that brings new SACK information; it
//! estimates the packets in the network (`pipe`), sends while pipe < cwnd —
//! first the holes below the highest SACKed packet, then new data — and
//! ends when an ack covers everything sent before it began (`recover`).

use super::rack::Rack;
use super::{fast_retransmit, new_ack, Action, Actions, FastRetransmit};
use crate::net::packet::SackBlock;
use crate::tcp::state::{CwndAction, TcpState};
use crate::time::SimTime;

/// Which packets above the cumulative ack the receiver has reported (ns-2 `ScoreBoardRQ`).
#[derive(Default)]
pub struct Scoreboard {
    /// First packet not cumulatively acked (ns-2 `sack_min`).
    base: i64,
    /// One past the highest packet SACKed above `base` (`base` if none).
    end: i64,
    /// A bit per packet, packet k at bit k mod 64 of word (k / 64) mod
    /// `bits.len()` (a power of two): set if `base <= k < end` and the
    /// receiver holds k; every other bit is clear. Per word, not per
    /// packet: a SACK block is recorded and a scan skips SACKed runs 64 at a
    /// time (BBR keeps this scoreboard busy on most acks).
    bits: Vec<u64>,
    total: usize,
    /// Retransmission pointer: holes below it have been resent (ns-2 `h_seqno_`).
    next_retran: i64,
    /// The last update changed what is known.
    changed: bool,
}

/// The bits `off..off + len` of a word (`off + len <= 64`, `len >= 1`).
#[inline]
fn bit_range(off: i64, len: i64) -> u64 {
    (u64::MAX >> (64 - len)) << off
}

impl Scoreboard {
    /// The last update SACKed something new.
    #[inline]
    pub fn changed(&self) -> bool {
        self.changed
    }

    pub fn clear(&mut self) {
        if self.end > self.base {
            self.take(self.base, self.end);
        }
        self.end = self.base;
        self.total = 0;
    }

    /// The word of packet `seq` (the ring holds it).
    #[inline]
    fn word(&self, seq: i64) -> usize {
        (seq >> 6) as usize & (self.bits.len() - 1)
    }

    /// Word `i` of the ring, for `i` from [`Scoreboard::word`] of a packet
    /// in `base..end` (or reserved): the ring then has its slots (`reserve`
    /// grew it to cover them), so the masked index is in bounds. Unchecked:
    /// the bounds check's panic path, inlined into `Sim::forward`, kept a
    /// register and two spills in its every call.
    #[inline(always)]
    fn word_mut(&mut self, i: usize) -> &mut u64 {
        debug_assert!(i < self.bits.len());
        // SAFETY: callers pass `word(seq)` of a packet the ring holds
        // (`take`: `base <= lo < hi <= end`, held since `reserve(end)`;
        // `update_with`: after `reserve(hi)`): `bits` is non-empty and the
        // index is masked by `len - 1`.
        unsafe { self.bits.get_unchecked_mut(i) }
    }

    /// Clear the bits of packets `lo..hi` (`base <= lo < hi <= end`); how
    /// many were set.
    fn take(&mut self, lo: i64, hi: i64) -> usize {
        let mut n = 0;
        let mut s = lo;
        while s < hi {
            let e = hi.min(((s >> 6) + 1) << 6);
            let m = bit_range(s & 63, e - s);
            let i = self.word(s);
            let w = self.word_mut(i);
            n += (*w & m).count_ones() as usize;
            *w &= !m;
            s = e;
        }
        n
    }

    /// Make room for packets `base..hi`.
    #[inline]
    fn reserve(&mut self, hi: i64) {
        let need = (((hi - 1) >> 6) - (self.base >> 6) + 1) as usize;
        if need > self.bits.len() {
            self.grow(need);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, need: usize) {
        let len = (2 * need).next_power_of_two().max(4);
        let mut bits = vec![0u64; len];
        if self.end > self.base {
            for w in (self.base >> 6)..=((self.end - 1) >> 6) {
                bits[w as usize & (len - 1)] = self.bits[self.word(w << 6)];
            }
        }
        self.bits = bits;
    }

    /// Record a duplicate ack's cumulative ack and SACK blocks.
    #[inline]
    pub fn update(&mut self, last_ack: i64, blocks: &[SackBlock]) {
        self.update_with(last_ack, blocks, |_| {})
    }

    /// Packet `seq` is held by the receiver (above the cumulative ack).
    #[inline]
    pub fn is_sacked(&self, seq: i64) -> bool {
        seq >= self.base && seq < self.end && self.bits[self.word(seq)] >> (seq & 63) & 1 != 0
    }

    /// The first packet at or after `seq` the receiver does not hold.
    #[inline]
    pub fn unsacked_from(&self, seq: i64) -> i64 {
        if !self.is_sacked(seq) {
            return seq;
        }
        let mut s = seq;
        // every packet from `end` on is unsacked: the scan stops by then
        while s < self.end {
            let w0 = (s >> 6) << 6;
            let holes = !self.bits[self.word(s)] & (u64::MAX << (s & 63));
            if holes != 0 {
                return (w0 + holes.trailing_zeros() as i64).min(self.end);
            }
            s = w0 + 64;
        }
        self.end
    }

    /// Packets SACKed above the cumulative ack.
    #[inline]
    pub fn total(&self) -> i64 {
        self.total as i64
    }

    /// The same, telling `newly` each packet SACKed for the first time.
    #[inline]
    pub fn update_with(&mut self, last_ack: i64, blocks: &[SackBlock], mut newly: impl FnMut(i64)) {
        let old_total = self.total;
        self.changed = false;
        if self.base <= last_ack {
            if self.total > 0 {
                self.changed = true;
            }
            // the packets up to the ack leave; what lies above stays
            let shift = last_ack + 1 - self.base;
            let cut = (self.base + shift).min(self.end);
            if cut > self.base {
                self.total -= self.take(self.base, cut);
            }
            self.base = last_ack + 1;
            if cut == self.end {
                self.end = self.base;
            }
        }
        for b in blocks {
            let lo = (b.start as i64).max(self.base);
            let hi = b.end as i64;
            if lo >= hi {
                continue;
            }
            self.reserve(hi);
            let mut s = lo;
            while s < hi {
                let e = hi.min(((s >> 6) + 1) << 6);
                let i = self.word(s);
                let w = self.word_mut(i);
                let mut new = bit_range(s & 63, e - s) & !*w;
                if new != 0 {
                    *w |= new;
                    let w0 = (s >> 6) << 6;
                    // counted bit by bit (an ack SACKs one or two new
                    // packets, cheaper than a popcount without the
                    // instruction on the baseline target)
                    while new != 0 {
                        newly(w0 + new.trailing_zeros() as i64);
                        self.total += 1;
                        new &= new - 1;
                    }
                }
                s = e;
            }
            self.end = self.end.max(hi);
        }
        self.changed = self.changed || old_total != self.total;
    }

    /// The next hole to retransmit: not SACKed, not yet resent, with SACKed data above it.
    pub fn next_retran(&mut self) -> Option<i64> {
        if self.next_retran < self.base {
            self.next_retran = self.base;
        }
        // nothing SACKed from here up (outside recovery, always): no hole
        if self.next_retran >= self.end {
            return None;
        }
        // the highest packet known, end - 1, is SACKed: a hole below `end`
        // has SACKed data above it
        let seq = self.unsacked_from(self.next_retran);
        if seq >= self.end {
            return None;
        }
        self.next_retran = seq;
        Some(seq)
    }

    pub fn mark_retran(&mut self, seq: i64) {
        if seq >= self.next_retran {
            self.next_retran = seq + 1;
        }
    }
}

/// Proportional Rate Reduction (RFC 6937) as Linux runs it
/// (`tcp_cwnd_reduction`), for the `linux` profile. RFC 6937 §3.1:
///
/// > ```text
/// > if (pipe > ssthresh) {
/// >    // Proportional Rate Reduction
/// >    sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
/// > } else {
/// >    // Two versions of the Reduction Bound
/// >    if (conservative) {    // PRR-CRB
/// >      limit = prr_delivered - prr_out
/// >    } else {               // PRR-SSRB
/// >      limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS
/// >    }
/// >    // Attempt to catch up, as permitted by limit
/// >    sndcnt = MIN(ssthresh - pipe, limit)
/// > }
/// > ```
///
/// Linux takes the window before the cut for RecoverFS (`prior_cwnd`),
/// adds the SSRB's one segment only when the ack advanced `snd_una`, sends
/// nothing on an ack that delivered nothing, and at least the fast
/// retransmission. Here `pipe` is the scoreboard's estimate and ssthresh
/// the window congestion control set on entering recovery; the window it
/// reports during recovery stays ssthresh (the kernel's is pipe + sndcnt),
/// where both end.
#[derive(Default, Clone, Debug)]
pub struct Prr {
    /// Packets delivered (cumulatively acked or newly SACKed) since recovery began.
    delivered: i64,
    /// Packets sent since recovery began, the fast retransmission included.
    out: i64,
    /// The window before the cut (Linux's RecoverFS).
    prior_cwnd: i64,
    /// Packets the last ack delivered, and whether it advanced the cumulative ack.
    this: i64,
    una_advanced: bool,
    /// Packets the last ack lets out (computed at its first send).
    sndcnt: Option<i64>,
}

impl Prr {
    /// `sndcnt` for the last ack.
    fn budget(&self, pipe: i64, ssthresh: i64) -> i64 {
        if self.this <= 0 {
            return 0;
        }
        let n = if pipe > ssthresh {
            // CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out
            (ssthresh * self.delivered + self.prior_cwnd - 1) / self.prior_cwnd.max(1) - self.out
        } else {
            let limit = (self.delivered - self.out).max(self.this) + i64::from(self.una_advanced);
            (ssthresh - pipe).min(limit)
        };
        n.max(if self.out == 0 { 1 } else { 0 })
    }
}

/// A RACK-TLP timer recovery wants armed in the RTO's place, due at the time
/// it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RackTimer {
    /// RACK's reordering timer: a packet waits out the reordering window
    /// before it is deemed lost (Linux's `tcp_rack_reo_timeout`).
    Reorder(SimTime),
    /// TLP's probe timeout (Linux's `tcp_schedule_loss_probe`).
    Probe(SimTime),
}

impl RackTimer {
    /// When it is due.
    #[inline]
    pub fn at(self) -> SimTime {
        match self {
            RackTimer::Reorder(at) | RackTimer::Probe(at) => at,
        }
    }
}

/// The connection's clock and timer settings the probe timeout reads.
#[derive(Clone, Copy, Debug)]
pub struct ProbeClock {
    pub now: SimTime,
    /// The smoothed RTT now, ns (0: no sample yet).
    pub srtt_ns: SimTime,
    /// The initial RTO (`TCP_TIMEOUT_INIT`) and the minimum RTO, ns.
    pub initial_rto_ns: SimTime,
    pub min_rto_ns: SimTime,
}

/// Where SACK recovery stands, in the spirit of Linux's congestion-avoidance
/// states (`tcp_ca_state`); ns-2's `Sack1TcpAgent` knows the first two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossState {
    /// No loss being repaired (Linux's `TCP_CA_Open` and `TCP_CA_Disorder`):
    /// the window rules what is sent; duplicate acks (or RACK) may start
    /// recovery. After a timeout without RACK this is the state too, with
    /// `after_timeout` set (ns-2 resends by go-back-N).
    #[default]
    Open,
    /// Fast recovery (`TCP_CA_Recovery`, ns-2's `fastrecov_`): from the fast
    /// retransmit until the ack covers `recover`; the pipe estimate (or
    /// PRR) rules what is sent, holes before new data.
    Recovery,
    /// Linux's loss state after a timeout (`TCP_CA_Loss`, with RACK only):
    /// every packet not SACKed is marked lost and resent while the pipe is
    /// below the window, until the ack covers `recover`; no fast recovery
    /// starts meanwhile.
    Loss,
}

#[derive(Default)]
pub struct State {
    state: LossState,
    /// PRR's counters when recovery sends by it (the `linux` profile).
    prr: Option<Prr>,
    /// Estimated packets in the network during fast recovery.
    pipe: i64,
    /// Set by a timeout until the next new ack (ns-2 `timeout_`): no
    /// duplicate ack counts meanwhile. Not a [`LossState`]: it ends at the
    /// next new ack, not at `recover`, and under RACK it can outlast the
    /// loss state (a timeout with nothing outstanding: the loss state ends
    /// at once, and a later RACK loss starts recovery before a new ack).
    after_timeout: bool,
    /// The packets the last ack newly SACKed, when the connection keeps
    /// delivery-rate samples (`note_sacked`): they count as delivered now.
    sacked_now: Vec<i64>,
    note_sacked: bool,
    scb: Scoreboard,
    /// RACK-TLP loss detection (the `linux` profile), replacing the
    /// duplicate-ack threshold and the scoreboard's holes.
    rack: Option<Box<Rack>>,
}

impl State {
    /// SACK recovery; with `prr`, sending by Proportional Rate Reduction;
    /// with `rack`, detecting losses by RACK-TLP; with `note_sacked`,
    /// keeping the packets each ack newly SACKs for the delivery-rate
    /// sampler ([`State::drain_sacked_now`]).
    pub fn new(prr: bool, rack: bool, note_sacked: bool) -> Self {
        State {
            prr: prr.then(Prr::default),
            rack: rack.then(Box::default),
            note_sacked,
            ..Default::default()
        }
    }

    /// RACK's state, if this recovery runs it.
    #[inline]
    pub fn rack(&self) -> Option<&Rack> {
        self.rack.as_deref()
    }

    #[inline]
    pub fn rack_mut(&mut self) -> Option<&mut Rack> {
        self.rack.as_deref_mut()
    }

    /// The packets the last ack newly SACKed (with `note_sacked`), once.
    #[inline]
    pub fn drain_sacked_now(&mut self) -> std::vec::Drain<'_, i64> {
        self.sacked_now.drain(..)
    }

    /// The scoreboard's and the pipe's invariants (debug builds): what is
    /// SACKed was sent and not cumulatively acked; RACK marks lost only what
    /// is outstanding; the loss state is RACK's. The pipe counts each
    /// outstanding packet at most twice, the original and one
    /// retransmission: RFC 6675's SetPipe adds one for a packet not deemed
    /// lost and one more if it was retransmitted, and ns-2's estimate keeps
    /// counting a lost original beside its retransmission (a first version
    /// of this check, pipe ≤ outstanding, failed on a plain ns-2 SACK run
    /// with several holes retransmitted: pipe 59, outstanding 56).
    #[cfg(debug_assertions)]
    pub fn check_invariants(&self, st: &TcpState) {
        let outstanding = st.maxseq() - st.highest_ack();
        debug_assert!(
            self.scb.total() <= outstanding,
            "SACKed {} > outstanding {outstanding}",
            self.scb.total()
        );
        if self.state != LossState::Open {
            debug_assert!(
                self.pipe <= 2 * outstanding,
                "pipe {} > 2 × outstanding {outstanding} ({:?})",
                self.pipe,
                self.state
            );
        }
        if let Some(r) = self.rack() {
            debug_assert!(
                (0..=outstanding).contains(&r.lost()),
                "RACK lost {} outside 0..={outstanding}",
                r.lost()
            );
        } else {
            debug_assert!(self.state != LossState::Loss, "loss state without RACK");
        }
    }

    /// In fast recovery.
    #[inline]
    fn in_recovery(&self) -> bool {
        self.state == LossState::Recovery
    }

    /// In Linux's loss state (RACK, after a timeout).
    #[inline]
    fn in_loss(&self) -> bool {
        self.state == LossState::Loss
    }

    /// Where recovery stands.
    #[inline]
    pub fn loss_state(&self) -> LossState {
        self.state
    }

    /// In Linux's loss state, the scoreboard's pipe (what is neither SACKed
    /// nor marked lost); `None` otherwise.
    #[inline]
    pub fn loss_pipe(&self) -> Option<i64> {
        self.in_loss().then_some(self.pipe)
    }

    /// A tail loss probe may be scheduled: the open state (no recovery, no
    /// timeout being repaired), nothing SACKed, no probe already out
    /// (RFC 8985 §7.2, Linux's `tcp_schedule_loss_probe`).
    #[inline]
    fn may_probe(&self) -> bool {
        self.state == LossState::Open
            && !self.after_timeout
            && self.scb.total() == 0
            && !self.rack().is_some_and(|r| r.probe_outstanding())
    }

    #[inline]
    pub fn on_ack(
        &mut self,
        st: &mut TcpState,
        ack: i64,
        blocks: &[SackBlock],
        cwnd: f64,
        acts: &mut Actions,
    ) {
        let before = (st.highest_ack(), self.scb.total as i64);
        if self.rack.is_some() {
            self.on_ack_rack(st, ack, blocks, cwnd, acts);
        } else {
            self.on_ack_inner(st, ack, blocks, cwnd, acts);
        }
        if self.in_recovery() {
            if let Some(p) = &mut self.prr {
                let this = (st.highest_ack() - before.0) + (self.scb.total as i64 - before.1);
                p.this = this;
                p.una_advanced = st.highest_ack() > before.0;
                p.delivered += this.max(0);
                p.sndcnt = None;
            }
        }
    }

    #[inline]
    fn on_ack_inner(
        &mut self,
        st: &mut TcpState,
        ack: i64,
        blocks: &[SackBlock],
        cwnd: f64,
        acts: &mut Actions,
    ) {
        let valid = ack >= st.last_ack();
        if !self.in_recovery() {
            if ack > st.last_ack() {
                acts.push(new_ack(st, ack, true));
                self.after_timeout = false;
                self.scb.clear();
            } else if ack == st.last_ack() && !self.after_timeout {
                self.scb.update(st.highest_ack(), blocks);
                if self.scb.changed {
                    st.count_dupack();
                    if st.dupacks() == st.dupack_threshold() {
                        self.dupack_action(st, cwnd, acts);
                    } else if st.dupacks() < st.dupack_threshold() && st.limited_transmit() {
                        acts.push(Action::SendOne);
                    }
                }
            }
            if valid && st.dupacks() == 0 {
                acts.push(Action::SendMuch { maxburst: 0 });
            }
        } else {
            self.pipe -= 1;
            // RFC 6675 §5: "When the TCP sender receives a cumulative ACK for this data octet, the
            // loss recovery phase is terminated."
            if ack >= st.recover() {
                // Recovery is over; cwnd stays at β·W (no growth on this ack).
                st.clear_recover();
                self.state = LossState::Open;
                acts.push(Action::ExitRecovery);
                acts.push(new_ack(st, ack, false));
                self.after_timeout = false;
                self.scb.clear();
            } else if ack > st.highest_ack() {
                // Partial ack: the retransmission arrived, count it out of the pipe.
                st.sack_partial_ack(ack);
                self.scb.update(ack, blocks);
                self.pipe -= 1;
                acts.push(Action::Newtimer(ack));
                acts.push(Action::ResetBackoff);
            } else if !self.after_timeout {
                self.scb.update(st.highest_ack(), blocks);
                if self.scb.changed && st.dupacks() > 0 {
                    st.count_dupack();
                }
            }
            if valid {
                acts.push(Action::SendMuch { maxburst: 0 });
            }
        }
    }

    fn dupack_action(&mut self, st: &mut TcpState, cwnd: f64, acts: &mut Actions) {
        self.enter_recovery(st, cwnd, acts, true);
    }

    /// Start recovery (ns-2's `dupack_action`, Linux's `tcp_enter_recovery`).
    /// `fast_retransmit`: ns-2's way — the pipe estimated from the
    /// duplicate threshold, the first hole retransmitted at once (PRR's
    /// first packet out); otherwise RACK's — its lost packets go by PRR,
    /// the first one at once.
    fn enter_recovery(
        &mut self,
        st: &mut TcpState,
        cwnd: f64,
        acts: &mut Actions,
        fast_retransmit_now: bool,
    ) {
        let reduce = match fast_retransmit(st, false) {
            FastRetransmit::Reduce => true,
            FastRetransmit::AfterEcn => false,
            FastRetransmit::No => return,
        };
        // RFC 6675 §5: "(4.1) RecoveryPoint = HighData"
        if reduce {
            st.mark_recover();
        }
        acts.push(Action::ResetTimer { mild: true });
        if fast_retransmit_now {
            self.pipe = st.maxseq() - st.highest_ack() - st.dupack_threshold() as i64;
            // RFC 6675 §5: "Retransmit the first data segment presumed dropped"
            self.scb.mark_retran(st.highest_ack() + 1);
        }
        self.state = LossState::Recovery;
        if let Some(p) = &mut self.prr {
            *p = Prr {
                out: i64::from(fast_retransmit_now),
                prior_cwnd: cwnd as i64,
                ..Default::default()
            };
        }
        st.note_cwnd_action(CwndAction::Dupack);
        acts.push(if reduce {
            Action::EnterRecovery {
                window: st.windowd(cwnd),
                to_one: false,
            }
        } else {
            Action::RepairAfterEcn { to_one: false }
        });
        acts.push(if fast_retransmit_now {
            Action::Retransmit(st.last_ack() + 1)
        } else {
            Action::SendMuch { maxburst: 0 }
        });
    }

    /// SACK's own `send_much()`, one packet per call: the next packet to
    /// send, or None. Outside recovery the window rules; inside it, the pipe
    /// estimate does, and holes go before new data.
    #[inline]
    pub fn next_send(&mut self, st: &mut TcpState, cwnd: f64) -> Option<i64> {
        // (the windows are asked where they are needed: the receiver's is a
        // float, and each conversion costs)
        // the usable window, when the Open state has computed it (two float
        // conversions, the receiver's window saturated: asked once)
        let mut open_window = 0;
        let open = match self.state {
            // RFC 6675 §5 (paraphrased): in recovery the sender may transmit while cwnd − pipe is
            // at least one segment, holes (NextSeg) before new data.
            LossState::Recovery => match &mut self.prr {
                None => self.pipe < cwnd as i64,
                Some(p) => {
                    let pipe = self.pipe;
                    if p.sndcnt.is_none() {
                        p.sndcnt = Some(p.budget(pipe, cwnd as i64));
                    }
                    // RFC 6937 §3.1 (paraphrased): PRR lets out, per ack, the share of what was
                    // delivered that brings the flight down to ssthresh by the end of recovery.
                    p.sndcnt > Some(0)
                }
            },
            LossState::Loss => self.pipe < cwnd as i64,
            LossState::Open => {
                let w = st.window(cwnd);
                open_window = w;
                st.t_seqno() <= st.last_ack() + w
            }
        };
        if !open || st.last_ack() + 1 >= st.curseq() {
            return None;
        }
        let hole = match &mut self.rack {
            None => self.scb.next_retran(),
            Some(r) => r.next_lost(st.highest_ack() + 1, st.maxseq()),
        };
        let seq = match hole {
            None => {
                let room = if self.state != LossState::Open {
                    st.t_seqno() <= st.highest_ack() + st.wnd()
                } else {
                    // (`st` is unchanged since the Open arm computed it)
                    st.t_seqno() <= st.highest_ack() + open_window
                };
                if room && st.t_seqno() < st.curseq() {
                    let q = st.t_seqno();
                    st.sent_next();
                    q
                } else {
                    return None;
                }
            }
            Some(x) => {
                if (st.recover() > 0 || self.rack.is_some()) && x <= st.highest_ack() + st.wnd() {
                    self.scb.mark_retran(x);
                    x
                } else {
                    return None;
                }
            }
        };
        st.skip_past(seq);
        self.pipe += 1;
        if self.in_recovery() {
            if let Some(p) = &mut self.prr {
                p.out += 1;
                if let Some(n) = &mut p.sndcnt {
                    *n -= 1;
                }
            }
        }
        Some(seq)
    }

    /// Linux's pipe (`tcp_packets_in_flight`): sent and not acked, less
    /// what is SACKed, less the `lost` packets not yet resent.
    #[inline]
    fn linux_pipe(&self, st: &TcpState, lost: i64) -> i64 {
        (st.maxseq() - st.highest_ack()) - self.scb.total() - lost
    }

    /// SACK's part of a timeout (ns-2 `Sack1TcpAgent::timeout()`).
    pub fn timeout_prelude(&mut self, st: &mut TcpState) {
        st.clear_dupacks();
        st.catch_up_last_ack();
        st.mark_recover();
        self.state = LossState::Open;
        self.after_timeout = true;
        match &mut self.rack {
            None => self.scb.clear(),
            Some(r) => {
                // Linux keeps the scoreboard (the receiver never reneges
                // here) and marks the rest lost: the loss state resends
                // only those, while the pipe is below the window
                let scb = &self.scb;
                let lost = r.on_timeout(st.highest_ack() + 1, st.maxseq(), |k| scb.is_sacked(k));
                self.state = LossState::Loss;
                self.pipe = self.linux_pipe(st, lost);
            }
        }
    }

    /// An ack under RACK (Linux's `tcp_ack` with `tcp_fastretrans_alert`):
    /// the scoreboard takes the SACK blocks, then the cumulative ack; each
    /// packet delivered moves RACK; detection marks what is lost, and a
    /// loss outside recovery starts it. Recovery then sends by PRR, lost
    /// packets first, and ends when `recover` is acked, as without RACK.
    fn on_ack_rack(
        &mut self,
        st: &mut TcpState,
        ack: i64,
        blocks: &[SackBlock],
        cwnd: f64,
        acts: &mut Actions,
    ) {
        let valid = ack >= st.last_ack();
        let mut r = self.rack.take().expect("RACK");
        let now = r.now();
        let una = st.highest_ack();
        // SACK first, then the cumulative ack (the kernel's order)
        let (note, sacked_now) = (self.note_sacked, &mut self.sacked_now);
        self.scb.update_with(una, blocks, |k| {
            r.on_sacked(k, now);
            if note {
                sacked_now.push(k);
            }
        });
        let changed = self.scb.changed;
        if ack > una {
            let scb = &self.scb;
            r.on_cum_ack(una, ack, now, |k| scb.is_sacked(k));
            self.scb.update(ack, &[]);
        }
        // the probe's fate (`tcp_process_tlp_ack`)
        if r.probe_fate(ack, ack == st.last_ack() && !changed) {
            acts.push(Action::Reduce {
                window: st.windowd(cwnd),
            });
        }
        let dupack = ack == st.last_ack() && changed;
        if self.state == LossState::Loss && ack >= st.recover() {
            // everything sent before the timeout is delivered: the loss
            // state is over (`tcp_process_loss`, "recovered")
            self.state = LossState::Open;
        }
        if !self.in_recovery() {
            if ack > st.last_ack() {
                acts.push(new_ack(st, ack, true));
                self.after_timeout = false;
            } else if dupack && !self.in_loss() {
                st.count_dupack();
            }
            // no reordering window in the loss state either (`tcp_rack_reo_wnd`)
            let zero_wnd = self.in_loss() || self.scb.total() >= st.dupack_threshold() as i64;
            if r.wants_detection(self.scb.total() > 0, self.in_loss()) {
                let scb = &self.scb;
                r.detect(now, r.srtt(), zero_wnd, |k| scb.is_sacked(k));
            } else if ack > una {
                // an ack that moves snd_una re-arms the probe or the RTO
                // in the reordering timer's place (`FLAG_SET_XMIT_TIMER`)
                r.cancel_reo_timer();
            }
            if r.lost() > 0 && !self.in_loss() {
                self.enter_recovery(st, cwnd, acts, false);
                if self.in_recovery() {
                    // a reduction ends any probe's watch
                    // (`tcp_init_cwnd_reduction` clears `tlp_high_seq`)
                    r.end_probe_watch();
                }
            } else if dupack && st.limited_transmit() {
                acts.push(Action::SendOne);
            }
            if valid && st.dupacks() == 0 && !self.in_recovery() {
                acts.push(Action::SendMuch { maxburst: 0 });
            }
        } else {
            if ack >= st.recover() {
                st.clear_recover();
                self.state = LossState::Open;
                acts.push(Action::ExitRecovery);
                acts.push(new_ack(st, ack, false));
                self.after_timeout = false;
            } else if ack > st.highest_ack() {
                // a partial ack
                st.sack_partial_ack(ack);
                acts.push(Action::Newtimer(ack));
                acts.push(Action::ResetBackoff);
            }
            if r.wants_detection(true, true) {
                let scb = &self.scb;
                r.detect(now, r.srtt(), true, |k| scb.is_sacked(k));
            } else if ack > una {
                r.cancel_reo_timer();
            }
            if valid {
                acts.push(Action::SendMuch { maxburst: 0 });
            }
        }
        // Linux's pipe: in flight, less SACKed, less lost and not resent
        self.pipe = self.linux_pipe(st, r.lost());
        self.rack = Some(r);
    }

    /// The RACK-TLP timer to arm after an ack or a timer (RFC 8985 §7.2,
    /// Linux's `tcp_schedule_loss_probe`): the reordering timer if RACK
    /// waits for one, else, in the open state with data in flight, the
    /// probe timeout. None without RACK.
    pub fn rack_timer(&self, st: &TcpState, clock: &ProbeClock) -> Option<RackTimer> {
        let r = self.rack()?;
        if let Some(at) = r.reo_at() {
            return Some(RackTimer::Reorder(at));
        }
        let in_flight = st.maxseq() - st.highest_ack();
        if !self.may_probe() || in_flight <= 0 {
            return None;
        }
        let srtt = clock.srtt_ns;
        // RFC 8985 §7.2 (paraphrased): the probe timeout is twice the smoothed RTT, plus room
        // for a delayed ack when one packet is in flight, and fires before the RTO.
        let pto = if srtt == 0 {
            clock.initial_rto_ns // TCP_TIMEOUT_INIT
        } else if in_flight == 1 {
            // room for the receiver's delayed ack
            2 * srtt + clock.min_rto_ns
        } else {
            2 * srtt + super::rack::TIMEOUT_MIN_NS
        };
        Some(RackTimer::Probe(clock.now + pto))
    }

    /// The probe timeout fired (Linux's `tcp_send_loss_probe`): one packet
    /// whatever the window — new data if any may go, else the highest packet
    /// sent again — whose fate the next acks tell (RFC 8985 §7.3).
    pub fn on_probe_timeout(&mut self, st: &TcpState, acts: &mut Actions) {
        let new = st.t_seqno() > st.maxseq()
            && st.t_seqno() < st.curseq()
            && st.t_seqno() <= st.highest_ack() + st.wnd();
        let seq = if new {
            st.t_seqno()
        } else if st.maxseq() > st.highest_ack() {
            st.maxseq()
        } else {
            return;
        };
        if let Some(r) = self.rack_mut() {
            // the highest packet sent once the probe is out
            r.on_probe_sent(seq.max(st.maxseq()), !new);
        }
        acts.push(Action::Probe { seq, new });
    }

    /// The reordering timer fired (`tcp_rack_reo_timeout`): mark what is
    /// lost by now; a loss outside recovery starts it; send.
    pub fn on_reo_timeout(&mut self, st: &mut TcpState, cwnd: f64, acts: &mut Actions) {
        let Some(mut r) = self.rack.take() else {
            return;
        };
        let zero_wnd =
            self.state != LossState::Open || self.scb.total() >= st.dupack_threshold() as i64;
        let scb = &self.scb;
        let marked = r.detect(r.now(), r.srtt(), zero_wnd, |k| scb.is_sacked(k));
        self.pipe = self.linux_pipe(st, r.lost());
        self.rack = Some(r);
        if marked > 0 {
            if self.state == LossState::Open {
                self.enter_recovery(st, cwnd, acts, false);
                if let Some(r) = &mut self.rack {
                    r.end_probe_watch();
                }
                if let Some(p) = &mut self.prr {
                    // `tcp_cwnd_reduction(sk, 1, ...)`: one packet's worth
                    p.this = 1;
                    p.delivered = 1;
                    p.sndcnt = None;
                }
            } else {
                acts.push(Action::SendMuch { maxburst: 0 });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoreboard_finds_holes_below_sacked_data() {
        let mut sb = Scoreboard::default();
        // cumulative ack 9 (10 is lost), receiver holds 11..14 and 16..17
        sb.update(
            9,
            &[
                SackBlock { start: 16, end: 18 },
                SackBlock { start: 11, end: 15 },
            ],
        );
        assert!(sb.changed);
        assert_eq!(sb.next_retran(), Some(10));
        sb.mark_retran(10);
        assert_eq!(sb.next_retran(), Some(15));
        sb.mark_retran(15);
        assert_eq!(sb.next_retran(), None, "nothing above 17 is known lost");
        // the same information again is no news
        sb.update(9, &[SackBlock { start: 16, end: 18 }]);
        assert!(!sb.changed);
    }

    /// A cumulative ack that covers the holes below SACKed packets, but
    /// not all of them, keeps what is known above it (RACK reads the
    /// scoreboard after the ack: an emptied one made it mark SACKed
    /// packets lost and resend them).
    #[test]
    fn a_cumulative_ack_into_the_scoreboard_keeps_what_lies_above_it() {
        let mut sb = Scoreboard::default();
        // cumulative ack 11 (12..14 missing), the receiver holds 15 and 16
        sb.update(11, &[SackBlock { start: 15, end: 17 }]);
        assert_eq!(sb.total(), 2);
        // the holes 12..14 arrive: the next ack covers 14, no new blocks
        sb.update(14, &[]);
        assert!(sb.is_sacked(15) && sb.is_sacked(16));
        assert_eq!(sb.total(), 2);
        // an ack beyond all of it empties it
        sb.update(16, &[]);
        assert_eq!(sb.total(), 0);
        assert!(!sb.is_sacked(17));
    }

    #[test]
    fn dialogue_retransmits_scoreboard_holes_before_new_data() {
        use crate::plan::Variant;
        use crate::tcp::dialogue::Dialogue;
        // 0..15 out, cwnd 13; packets 3 and 6 are lost.
        let mut d = Dialogue::opened(Variant::Sack);
        d.ack_sack(130, 2, &[(4, 5)]).sent(&[16]); // limited transmit
        d.ack_sack(131, 2, &[(4, 6)]).sent(&[17]);
        // third dupack with new SACK information: retransmit 3, cwnd = W/2,
        // pipe = 17 − 2 − 3 = 12
        d.ack_sack(132, 2, &[(7, 8), (4, 6)])
            .sent(&[3])
            .window(6.5, 6);
        // each ack takes one packet out of the pipe; nothing goes while pipe ≥ 6
        for t in 133..139 {
            d.ack_sack(t, 2, &[(7, 9), (4, 6)]).sent(&[]);
        }
        // pipe 5: the next hole is 6 (4 and 5 are SACKed), before any new data
        d.ack_sack(139, 2, &[(7, 9), (4, 6)]).sent(&[6]);
        // no hole left below the highest SACKed packet: new data
        d.ack_sack(140, 2, &[(7, 9), (4, 6)]).sent(&[18]);
        // the ack covering recover (17) ends recovery without growth
        d.ack(300, 17).sent(&[19, 20, 21, 22, 23]).window(6.5, 6);
        assert_eq!(d.s.counters().fast_retransmits, 1);
    }

    /// RFC 6937 under the `linux` profile: while the pipe is above ssthresh,
    /// recovery sends ssthresh/RecoverFS of what is delivered — here 10/20,
    /// one new packet per two SACKed — instead of ns-2's silence until
    /// pipe < cwnd followed by a burst; and it ends at cwnd = ssthresh.
    #[test]
    fn prr_sends_in_proportion_to_what_is_delivered() {
        use crate::plan::Variant;
        use crate::tcp::cc::Cc;
        use crate::tcp::dialogue::{params, Dialogue};
        use crate::tcp::profiles::Profile;
        let mut p = params(Variant::Sack, 20, 20);
        p.cc = Cc::Reno;
        p.profile = Profile::Linux;
        let mut d = Dialogue::with(p);
        d.sent(&(0..20).collect::<Vec<_>>());
        d.ack(100, 0).sent(&[20]).window(20.0, 20); // packet 1 is lost
        d.ack_sack(110, 0, &[(2, 3)]).sent(&[21]); // limited transmit
        d.ack_sack(111, 0, &[(2, 4)]).sent(&[22]);
        // third dupack: Linux's Reno cuts to 20/2; the fast retransmission is PRR's first out
        d.ack_sack(112, 0, &[(2, 5)]).sent(&[1]).window(10.0, 10);
        // delivered 2, 3, 4, 5: sndcnt = ⌈10·delivered/20⌉ − out = 0, 1, 0, 1
        d.ack_sack(113, 0, &[(2, 6)]).sent(&[]);
        d.ack_sack(114, 0, &[(2, 7)]).sent(&[23]);
        d.ack_sack(115, 0, &[(2, 8)]).sent(&[]);
        d.ack_sack(116, 0, &[(2, 9)]).sent(&[24]);
        // everything up to recover (22) acked: recovery ends at cwnd = ssthresh
        d.ack(200, 24)
            .sent(&(25..35).collect::<Vec<_>>())
            .window(10.0, 10);
    }
}
