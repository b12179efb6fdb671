//! RACK-TLP loss detection (RFC 8985) for SACK under the `linux` profile,
//! as Linux runs it (`net/ipv4/tcp_recovery.c`, `tcp_send_loss_probe` and
//! `tcp_schedule_loss_probe` in `tcp_output.c`).
//!
//! RACK (RFC 8985 §6.2) marks a packet lost by time, not by count: "a
//! segment is lost if a segment sent sufficiently later has been
//! delivered". It remembers the send time of the most recently sent
//! packet that was delivered (cumulatively acked or SACKed), `RACK.xmit_ts`,
//! and that packet's RTT, `RACK.rtt`; a packet sent before it and not yet
//! delivered is lost once
//!
//! > `RACK.rtt + RACK.reo_wnd − (Now − Segment.xmit_ts) <= 0`
//!
//! and otherwise the reordering timer waits for the largest such remainder.
//! The reordering window is Linux's `tcp_rack_reo_wnd`: `min_rtt/4`
//! (capped at srtt), but 0 — no waiting — in recovery or once as many
//! packets are SACKed as the reordering degree (3, the duplicate
//! threshold), as long as no reordering has been seen (the engine's links
//! never reorder, so it never is). A packet already marked lost is skipped
//! until it is retransmitted; a retransmission can be marked lost again.
//!
//! TLP (RFC 8985 §7): in the open state (no recovery, nothing SACKed) with
//! data in flight, a probe timeout `PTO = 2·srtt` (plus `TCP_RTO_MIN` for
//! the receiver's delayed ack when one packet is in flight, else two
//! jiffies), never later than the RTO, sends one packet regardless of the
//! window: new data if there is any, else the last packet again. At most
//! one probe is outstanding. The probe's loss detection (`tcp_process_tlp_ack`,
//! RFC 8985 §7.4): an ack beyond the probe after a retransmitted probe means
//! the probe repaired a loss, and the window is reduced once (Linux's CWR);
//! a pure duplicate ack says the original arrived too (Linux has the DSACK
//! for this; the engine's receiver sends none, so the plain duplicate ack
//! the probe's arrival causes is what tells).
//!
//! One timer per flow: the reordering timer and the probe timer take the
//! retransmission timer's place while they are due earlier (Linux's
//! `icsk_pending`), and the RTO comes back once they have run.

use crate::time::SimTime;

/// A packet has been retransmitted (Linux `TCPCB_EVER_RETRANS`).
const RETRANS: u8 = 1;
/// RACK marked the packet lost and it has not been retransmitted since.
const LOST: u8 = 2;
/// The packet is in the send-time list (sent, not SACKed since its last
/// transmission, not cumulatively acked).
const LISTED: u8 = 4;
/// No packet (the list's end).
const NIL: u32 = u32::MAX;

/// `TCP_TIMEOUT_MIN` (2 jiffies) at `HZ` 250, the probe timer's slack when
/// more than one packet is in flight.
pub const TIMEOUT_MIN_NS: SimTime = 8_000_000;
/// `TCP_TIMEOUT_MIN_US`, added to the reordering timer.
pub const TIMEOUT_MIN_US_NS: SimTime = 2_000_000;

/// A packet's entry, a quarter of a cache line (`align(16)`: none
/// straddles two lines, as a third of the 24-byte entries did).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Seg {
    /// When the packet last left (its latest transmission), shifted up
    /// three bits, with the flags (`RETRANS`, `LOST`, `LISTED`) in the low
    /// three. The time fits: it is an event's time, and runs end by
    /// `MAX_TIME_NS` (10¹⁸ ns, below 2⁶⁰), so `at << 3` stays below 2⁶³.
    stamp: u64,
    /// The packets sent just before and after it, in the send-time list.
    prev: u32,
    next: u32,
}

/// The flags' bits in `Seg::stamp`.
const FLAGS: u64 = 7;

impl Seg {
    #[inline(always)]
    fn new(at: SimTime, prev: u32, next: u32, flags: u8) -> Seg {
        debug_assert!(at < 1 << 61);
        Seg {
            stamp: at << 3 | flags as u64,
            prev,
            next,
        }
    }

    /// When the packet last left.
    #[inline(always)]
    fn at(&self) -> SimTime {
        self.stamp >> 3
    }

    #[inline(always)]
    fn flags(&self) -> u8 {
        (self.stamp & FLAGS) as u8
    }

    #[inline(always)]
    fn set(&mut self, flags: u8) {
        self.stamp |= flags as u64;
    }

    #[inline(always)]
    fn clear(&mut self, flags: u8) {
        self.stamp &= !(flags as u64);
    }
}

impl Default for Seg {
    fn default() -> Self {
        Seg::new(0, NIL, NIL, 0)
    }
}

/// RACK's state and the send times it reads.
pub struct Rack {
    /// Per packet above the cumulative ack: packet k at slot k mod len.
    segs: Vec<Seg>,
    /// The packets neither SACKed nor cumulatively acked, in the order they
    /// last left (Linux's `tsorted_sent_queue`): oldest and newest.
    first: u32,
    last: u32,
    /// `RACK.xmit_ts`, `RACK.end_seq` (the packet), `RACK.rtt`.
    xmit_ts: SimTime,
    end_seq: i64,
    rtt: SimTime,
    /// A delivery moved RACK since the last detection (`rack.advanced`).
    advanced: bool,
    /// The smallest RTT seen (Linux's windowed `tcp_min_rtt`; a flow's
    /// path does not change in the engine).
    min_rtt: SimTime,
    /// Packets marked lost and not retransmitted since (Linux `lost_out`
    /// less `retrans_out`).
    lost: i64,
    /// Retransmitted packets not yet cumulatively acked.
    rtx_out: i64,
    /// The lowest packet that may be marked lost (a scan hint).
    lost_from: i64,
    /// Reordering timer: when the packet that waits longest is due (with
    /// `TCP_TIMEOUT_MIN_US`), if one waits.
    reo_at: Option<SimTime>,
    /// The RTT sample of the last cumulative ack: now − the latest send of
    /// the first packet it covered (with timestamps, `tcp_rtt_tsopt_us`).
    ack_rtt: Option<SimTime>,
    /// The outstanding probe: the highest packet sent when it left
    /// (`tlp_high_seq`), and whether it was a retransmission.
    tlp_high: Option<i64>,
    tlp_retrans: bool,
    /// Probes sent (Linux `TCPLossProbes`) and the losses they repaired
    /// (`TCPLossProbeRecovery`).
    probes: u64,
    probe_recoveries: u64,
    /// The time and the smoothed RTT of the event being handled (the
    /// connection sets them before it hands recovery an ack or a timer).
    now: SimTime,
    srtt: SimTime,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            segs: Vec::new(),
            first: NIL,
            last: NIL,
            xmit_ts: 0,
            end_seq: -1,
            rtt: 0,
            advanced: false,
            min_rtt: SimTime::MAX,
            lost: 0,
            rtx_out: 0,
            lost_from: 0,
            reo_at: None,
            ack_rtt: None,
            tlp_high: None,
            tlp_retrans: false,
            probes: 0,
            probe_recoveries: 0,
            now: 0,
            srtt: 0,
        }
    }
}

impl Rack {
    /// Packets marked lost and not yet retransmitted.
    #[inline]
    pub fn lost(&self) -> i64 {
        self.lost
    }

    /// The time of the event being handled.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// The smoothed RTT at the event being handled, ns (0: none yet).
    #[inline]
    pub fn srtt(&self) -> SimTime {
        self.srtt
    }

    /// When the reordering timer is due, if a packet waits for it.
    #[inline]
    pub fn reo_at(&self) -> Option<SimTime> {
        self.reo_at
    }

    /// A tail loss probe is out and its fate not yet known.
    #[inline]
    pub fn probe_outstanding(&self) -> bool {
        self.tlp_high.is_some()
    }

    /// Probes sent (Linux `TCPLossProbes`).
    #[inline]
    pub fn probes(&self) -> u64 {
        self.probes
    }

    /// The connection hands RACK the time and smoothed RTT of the event it
    /// is about to handle.
    #[inline]
    pub fn set_clock(&mut self, now: SimTime, srtt: SimTime) {
        self.now = now;
        self.srtt = srtt;
    }

    /// The RTT sample of the last cumulative ack, once.
    #[inline]
    pub fn take_ack_rtt(&mut self) -> Option<SimTime> {
        self.ack_rtt.take()
    }

    /// An ack that moves the cumulative ack re-arms the probe or the RTO in
    /// the reordering timer's place (Linux's `FLAG_SET_XMIT_TIMER`).
    #[inline]
    pub fn cancel_reo_timer(&mut self) {
        self.reo_at = None;
    }

    /// A window reduction (recovery, the loss state) ends any probe's watch
    /// (`tcp_init_cwnd_reduction` clears `tlp_high_seq`).
    #[inline]
    pub fn end_probe_watch(&mut self) {
        self.tlp_high = None;
    }

    /// A probe left: `high` was the highest packet sent, `retrans` whether
    /// it resent one (Linux's `tcp_send_loss_probe`).
    #[inline]
    pub fn on_probe_sent(&mut self, high: i64, retrans: bool) {
        self.tlp_high = Some(high);
        self.tlp_retrans = retrans;
        self.probes += 1;
    }

    /// The probe's fate at an ack for `ack` (`tcp_process_tlp_ack`);
    /// `plain_dupack`: a duplicate ack that SACKs nothing new. True if the
    /// probe repaired a loss, which calls for one reduction (CWR).
    #[inline]
    pub fn probe_fate(&mut self, ack: i64, plain_dupack: bool) -> bool {
        let Some(high) = self.tlp_high else {
            return false;
        };
        if ack < high {
            return false;
        }
        if !self.tlp_retrans || plain_dupack {
            // new data acked, or a plain duplicate ack: the original arrived
            // as well as the probe — no loss
            self.tlp_high = None;
            false
        } else if ack > high {
            // the probe repaired a loss
            self.tlp_high = None;
            self.probe_recoveries += 1;
            true
        } else {
            false
        }
    }

    #[inline]
    fn seg(&self, seq: i64) -> Seg {
        self.segs[seq as usize & (self.segs.len() - 1)]
    }

    #[inline]
    fn seg_mut(&mut self, seq: i64) -> &mut Seg {
        let m = self.segs.len() - 1;
        &mut self.segs[seq as usize & m]
    }

    /// Packet `seq` leaves at `now`; `base` is the first packet not
    /// cumulatively acked, `maxseq` the highest sent before this one.
    pub fn on_send(&mut self, seq: i64, now: SimTime, base: i64, maxseq: i64) {
        let span = (seq - base) as usize;
        if span >= self.segs.len() {
            let len = (2 * span).next_power_of_two().max(64);
            let mut grown = vec![Seg::default(); len];
            if !self.segs.is_empty() {
                for k in base..=maxseq.min(seq - 1) {
                    grown[k as usize & (len - 1)] = self.seg(k);
                }
            }
            self.segs = grown;
        }
        let rtx = seq <= maxseq;
        let old = self.seg(seq).flags();
        if rtx {
            self.rtx_out += i64::from(old & RETRANS == 0);
            self.lost -= i64::from(old & LOST != 0);
            self.unlink(seq);
        }
        *self.seg_mut(seq) = Seg::new(
            now,
            self.last,
            NIL,
            if rtx { RETRANS | LISTED } else { LISTED },
        );
        // the newest in the send-time list
        match self.last {
            NIL => self.first = seq as u32,
            l => self.seg_mut(l as i64).next = seq as u32,
        }
        self.last = seq as u32;
    }

    /// Take packet `seq` out of the send-time list, if it is in it.
    #[inline]
    fn unlink(&mut self, seq: i64) {
        let s = self.seg(seq);
        if s.flags() & LISTED == 0 {
            return;
        }
        match s.prev {
            NIL => self.first = s.next,
            p => self.seg_mut(p as i64).next = s.next,
        }
        match s.next {
            NIL => self.last = s.prev,
            n => self.seg_mut(n as i64).prev = s.prev,
        }
        self.seg_mut(seq).clear(LISTED);
    }

    /// `RACK_update` (RFC 8985 §6.2 step 2) for a packet just delivered.
    #[inline]
    fn advance(&mut self, seq: i64, now: SimTime) {
        let s = self.seg(seq);
        let rtt = now.saturating_sub(s.at());
        // a retransmission delivered sooner than the path's RTT may be the
        // original arriving: ambiguous, no update
        if s.flags() & RETRANS != 0 && rtt < self.min_rtt {
            return;
        }
        self.min_rtt = self.min_rtt.min(rtt);
        self.advanced = true;
        self.rtt = rtt;
        if sent_after(s.at(), seq, self.xmit_ts, self.end_seq) {
            self.xmit_ts = s.at();
            self.end_seq = seq;
        }
    }

    /// Packet `seq` was newly SACKed.
    pub fn on_sacked(&mut self, seq: i64, now: SimTime) {
        self.unlink(seq);
        let s = self.seg(seq);
        if s.flags() & LOST != 0 {
            // delivered after all (its retransmission is not needed)
            self.seg_mut(seq).clear(LOST);
            self.lost -= 1;
        }
        self.advance(seq, now);
    }

    /// The cumulative ack moved from `from` to `to` (packets from+1..=to
    /// delivered; `sacked(k)`: k had been SACKed before).
    pub fn on_cum_ack(&mut self, from: i64, to: i64, now: SimTime, sacked: impl Fn(i64) -> bool) {
        if self.segs.is_empty() {
            return;
        }
        self.ack_rtt = Some(now.saturating_sub(self.seg(from + 1).at()));
        for k in from + 1..=to {
            let s = self.seg(k);
            if s.flags() & RETRANS != 0 {
                self.rtx_out -= 1;
            }
            if s.flags() & LOST != 0 {
                self.lost -= 1;
            }
            if !sacked(k) {
                self.advance(k, now);
            }
            self.unlink(k);
            self.seg_mut(k).clear(RETRANS | LOST | LISTED);
        }
        self.lost_from = self.lost_from.max(to + 1);
    }

    /// Whether detection can find anything: something SACKed, recovery,
    /// or a retransmission in flight (a packet sent after originals that
    /// are not yet delivered).
    #[inline]
    pub fn wants_detection(&self, sacked_any: bool, in_recovery: bool) -> bool {
        self.advanced && (sacked_any || in_recovery || self.rtx_out > 0)
    }

    /// `tcp_rack_reo_wnd`: a quarter of the minimum RTT, at most srtt;
    /// none when `zero_wnd`.
    #[inline]
    fn reo_wnd(&self, srtt: SimTime, zero_wnd: bool) -> SimTime {
        if zero_wnd || self.min_rtt == SimTime::MAX {
            0
        } else {
            (self.min_rtt / 4).min(srtt)
        }
    }

    /// `tcp_rack_detect_loss`: mark lost every packet not delivered and
    /// sent before RACK's packet whose time is up; note how long the others
    /// still need. It walks the packets in the order they last left, as
    /// Linux walks its `tsorted_sent_queue`, and stops at the first that
    /// left after RACK's packet (a packet of the same instant is asked, as
    /// `RACK_sent_after` orders those by sequence); `sacked(k)`: the
    /// receiver holds k. `zero_wnd`: no reordering window (recovery, or as
    /// many SACKed as the duplicate threshold). Returns how many it marked.
    // RFC 8985 §6.2 (paraphrased): a packet is lost once a packet sent sufficiently later (by more
    // than the reordering window) has been delivered.
    pub fn detect(
        &mut self,
        now: SimTime,
        srtt: SimTime,
        zero_wnd: bool,
        sacked: impl Fn(i64) -> bool,
    ) -> i64 {
        let Some(reo_wnd) = self.begin_detection(srtt, zero_wnd) else {
            return 0;
        };
        // in the order they last left, up to RACK's packet: every packet
        // after it in the list left after it too (a flow's sends are in
        // time order), and the list holds no packet SACKed or cumulatively
        // acked — but one SACKed and sent again, which `sacked` tells
        let mut marked = 0;
        let mut wait: Option<SimTime> = None;
        let mut k = self.first;
        while k != NIL {
            let s = self.seg(k as i64);
            if s.at() > self.xmit_ts {
                break;
            }
            let seq = k as i64;
            if !sacked(seq) {
                self.detect_one(seq, now, reo_wnd, &mut marked, &mut wait);
            }
            k = s.next;
        }
        self.end_detection(now, wait);
        marked
    }

    /// A detection begins: RACK's advance is taken, the reordering timer
    /// off; the reordering window, or None with nothing sent yet.
    #[inline]
    fn begin_detection(&mut self, srtt: SimTime, zero_wnd: bool) -> Option<SimTime> {
        self.advanced = false;
        self.reo_at = None;
        (!self.segs.is_empty()).then(|| self.reo_wnd(srtt, zero_wnd))
    }

    /// The reordering timer waits for the packet that needs longest (with
    /// `TCP_TIMEOUT_MIN_US`), if one waits.
    #[inline]
    fn end_detection(&mut self, now: SimTime, wait: Option<SimTime>) {
        self.reo_at = wait.map(|w| now + w + TIMEOUT_MIN_US_NS);
    }

    /// `detect` for packet `k`, not SACKed: skip it if marked already or
    /// sent after RACK's packet, else mark it lost if its time is up, or
    /// note how long it still needs.
    #[inline(always)]
    fn detect_one(
        &mut self,
        k: i64,
        now: SimTime,
        reo_wnd: SimTime,
        marked: &mut i64,
        wait: &mut Option<SimTime>,
    ) {
        let s = self.seg(k);
        if s.flags() & LOST != 0 || !sent_after(self.xmit_ts, self.end_seq, s.at(), k) {
            return;
        }
        let deadline = s.at() + self.rtt + reo_wnd;
        if deadline <= now {
            self.seg_mut(k).set(LOST);
            self.lost += 1;
            self.lost_from = self.lost_from.min(k);
            *marked += 1;
        } else {
            let w = deadline - now;
            *wait = Some(wait.map_or(w, |x: SimTime| x.max(w)));
        }
    }

    /// The lowest packet marked lost and not yet retransmitted.
    pub fn next_lost(&mut self, base: i64, maxseq: i64) -> Option<i64> {
        if self.lost <= 0 {
            return None;
        }
        let from = self.lost_from.max(base);
        for k in from..=maxseq {
            if self.seg(k).flags() & LOST != 0 {
                self.lost_from = k;
                return Some(k);
            }
        }
        None
    }

    /// A timeout: Linux's loss state (`tcp_enter_loss`, its marking in
    /// `tcp_timeout_mark_lost`). What the receiver SACKed stays delivered;
    /// every other packet from `base` (the first not cumulatively acked)
    /// to `maxseq` is marked lost — a retransmission too, lost again — but
    /// one sent within RACK.rtt of now ("don't mark recently sent ones
    /// lost yet"); `base` itself always is. The loss state then resends
    /// the marked packets, lowest first, as the window lets it. Returns
    /// how many are marked.
    pub fn on_timeout(&mut self, base: i64, maxseq: i64, sacked: impl Fn(i64) -> bool) -> i64 {
        self.reo_at = None;
        self.tlp_high = None;
        self.lost = 0;
        self.lost_from = base;
        if self.segs.is_empty() {
            return 0;
        }
        let (rtt, now) = (self.rtt, self.now);
        for k in base..=maxseq {
            let s = self.seg_mut(k);
            s.clear(LOST);
            if sacked(k) || (k != base && s.at() + rtt > now) {
                continue;
            }
            s.set(LOST);
            self.lost += 1;
        }
        self.lost
    }
}

/// RFC 8985 `RACK_sent_after(t1, seq1, t2, seq2)`: (t1, seq1) left after (t2, seq2).
#[inline]
fn sent_after(t1: SimTime, seq1: i64, t2: SimTime, seq2: i64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

#[cfg(test)]
mod tests {
    use crate::plan::Variant;
    use crate::tcp::cc::Cc;
    use crate::tcp::dialogue::{params, Dialogue};
    use crate::tcp::profiles::Profile;
    use crate::time::SimTime;

    /// A SACK sender with Reno, initial window 10, ssthresh 20, under
    /// `profile` (`linux`: Linux's Reno, RACK-TLP, PRR, Linux's RTO).
    fn sender(profile: Profile) -> Dialogue {
        let mut p = params(Variant::Sack, 10, 20);
        p.cc = Cc::Reno;
        p.profile = profile;
        Dialogue::with(p)
    }

    fn linux() -> Dialogue {
        sender(Profile::Linux)
    }

    /// The common opening: 0..9 leave at 0; acks for 0..8 at 100 ms (RTT
    /// 100 ms) in slow start release two packets each, 10..27, so 9..27
    /// are out and cwnd is 19.
    fn opened(profile: Profile) -> Dialogue {
        let mut d = sender(profile);
        d.sent(&(0..10).collect::<Vec<_>>());
        for k in 0..9 {
            d.ack(100, k).sent(&[10 + 2 * k, 11 + 2 * k]);
        }
        d
    }

    /// RFC 8985 §6.2: a packet is lost once a packet sent `reo_wnd` after
    /// it is delivered — one duplicate ack is enough, where the
    /// three-duplicate rule would wait for two more.
    #[test]
    fn rack_detects_a_loss_on_the_first_duplicate_ack() {
        // acks for 0..8 at 100 ms (RTT 100 ms, min_rtt 100 ms): slow start,
        // two packets per ack; ack k releases 10 + 2k, 11 + 2k; cwnd 19
        let mut d = opened(Profile::Linux);
        d.window(19.0, 20);
        // packet 9 (sent at 0) is lost; packet 10 (sent at 100) is SACKed at
        // 200: RACK.rtt = 100 ms, reo_wnd = min_rtt/4 = 25 ms, and 9 is
        // lost since 0 + 100 + 25 <= 200. Recovery at once: Linux's Reno
        // ssthresh = 19/2 = 9; PRR sends ⌈9·1/19⌉ = 1: the retransmission
        d.ack_sack(200, 8, &[(10, 11)]).sent(&[9]).window(9.0, 9);
        assert_eq!(d.s.counters().fast_retransmits, 1);

        // the same under ns-2's three-duplicate rule: limited transmit only
        let mut d = opened(Profile::Ns2v235);
        d.ack_sack(200, 8, &[(10, 11)]).sent(&[28]);
        assert_eq!(d.s.counters().fast_retransmits, 0);
    }

    /// RFC 8985 §6.2 step 4: a packet sent in the same burst as the one
    /// SACKed is not lost yet — RACK waits out the reordering window on a
    /// timer (Linux's `ICSK_TIME_REO_TIMEOUT`, plus `TCP_TIMEOUT_MIN_US`),
    /// then marks it lost and starts recovery, still with a single
    /// duplicate ack.
    #[test]
    fn rack_reordering_timer_marks_the_loss_after_min_rtt_over_4() {
        let mut d = linux();
        d.sent(&(0..10).collect::<Vec<_>>());
        for k in 0..8 {
            d.ack(100, k).sent(&[10 + 2 * k, 11 + 2 * k]);
        }
        d.window(18.0, 20);
        // 8 is lost; 9, sent with it at 0, is SACKed at 109: RACK.rtt =
        // 109 ms, and 8 is due at 0 + 109 + 25 = 134 > 109. Limited
        // transmit sends 26; the timer is set for 109 + 25 + 2 = 136 (the
        // probe and the RTO are later)
        d.ack_sack(109, 7, &[(9, 10)]).sent(&[26]).timer(136);
        assert_eq!(d.s.counters().fast_retransmits, 0);
        // at 136, 8 is lost: recovery (ssthresh 18/2 = 9), and PRR's
        // first packet is its retransmission
        d.timeout(136).sent(&[8]).window(9.0, 9);
        assert_eq!(
            (d.s.counters().fast_retransmits, d.s.counters().timeouts),
            (1, 0)
        );
    }

    /// RFC 8985 §7: the last two packets of a transfer are lost, so no ack
    /// follows them. The probe timeout, 2·srtt + 2 jiffies (8 ms) with two
    /// packets in flight, resends the last packet; its SACK lets RACK mark
    /// the other lost, and recovery repairs it: no RTO.
    #[test]
    fn a_tail_loss_is_repaired_by_a_probe_without_a_timeout() {
        let mut d = linux();
        d.sent(&(0..10).collect::<Vec<_>>());
        d.s.stop(); // nothing more to send
                    // one ack for 0..7 at 100 ms: srtt 100 ms; rttvar = max(2·100, 200)
                    // ms, RTO = 100 + 200 = 300 ms, due at 400; the probe is due at
                    // 100 + 2·100 + 8 = 308
        d.ack(100, 7).sent(&[]).window(18.0, 20).timer(308);
        // the probe: no new data, so the last packet again; the RTO
        // restarts from it (308 + 300)
        d.timeout(308).sent(&[9]).timer(608);
        // its SACK: RACK.rtt = 100 ms (the probe's), 8 (sent at 0) is lost;
        // recovery: ssthresh 18/2 = 9, PRR sends the retransmission
        d.ack_sack(408, 7, &[(9, 10)]).sent(&[8]).window(9.0, 9);
        d.ack(508, 9).sent(&[]);
        assert_eq!(d.s.rto_deadline(), None, "everything acked");
        assert_eq!(
            (d.s.counters().timeouts, d.s.counters().retransmissions),
            (0, 2)
        );
        let r = d.s.recovery().rack().unwrap();
        assert_eq!(r.probes(), 1);

        // under ns-2's profile the same losses wait for the RTO
        let mut d = sender(Profile::Ns2v235);
        d.sent(&(0..10).collect::<Vec<_>>());
        d.s.stop();
        d.ack(100, 7).sent(&[]);
        let rto = d.s.rto_deadline().unwrap() / 1_000_000;
        d.timeout(rto).sent(&[8]);
        assert_eq!(d.s.counters().timeouts, 1);
    }

    /// Linux's loss state after an RTO (`tcp_enter_loss`): the SACKed
    /// packets stay delivered, every other one is marked lost, and the
    /// window of one grows by slow start while the marked packets are
    /// resent in order — the SACKed ones are skipped, where ns-2's
    /// go-back-N resends them too.
    #[test]
    fn after_a_timeout_the_loss_state_resends_only_what_was_not_sacked() {
        let mut d = opened(Profile::Linux);
        // 9..27 out (10..27 sent at 100 ms), cwnd 19; only 15 and 16 arrive:
        // 9 is lost by RACK, recovery (ssthresh 9) resends it — lost again
        d.ack_sack(200, 8, &[(15, 17)]).sent(&[9]).window(9.0, 9);
        // no ack comes back: the reordering timer marks 10..14 lost and
        // sends by PRR, then the RTO fires (the timers in between)
        let mut t = 0;
        while d.s.counters().timeouts == 0 {
            d.out_clear();
            t = d.s.rto_deadline().expect("a timer") / 1_000_000;
            d.timeout(t);
        }
        assert!(t >= 500, "the RTO comes after 300 ms at least: {t}");
        // the loss state: cwnd 1, ssthresh kept (this loss was cut for
        // already), the first hole resent
        d.sent(&[9]).window(1.0, 9);
        // each ack doubles the window; 15 and 16 are never resent
        d.ack(t + 100, 9).sent(&[10, 11]).window(2.0, 9);
        d.ack(t + 200, 11).sent(&[12, 13, 14, 17]).window(4.0, 9);
        // three more delivered: cwnd 7; 17 is still in flight, so six go
        d.ack(t + 300, 14)
            .sent(&(18..24).collect::<Vec<_>>())
            .window(7.0, 9);
        assert_eq!(d.s.counters().timeouts, 1);

        // ns-2's go-back-N after the same timeout: 15 and 16 go again
        let mut d = opened(Profile::Ns2v235);
        d.ack_sack(200, 8, &[(15, 17)]).out_clear();
        let t = d.s.rto_deadline().unwrap() / 1_000_000;
        d.timeout(t).sent(&[9]);
        d.ack(t + 100, 9).sent(&[10, 11]);
        d.ack(t + 200, 11).sent(&[12, 13, 14]);
        d.ack(t + 300, 14).sent(&[15, 16, 17, 18]);
    }

    impl super::Rack {
        /// What `detect` computes, by its definition: every packet above
        /// the cumulative ack not SACKed is asked.
        fn detect_by_scan(
            &mut self,
            base: i64,
            maxseq: i64,
            now: SimTime,
            srtt: SimTime,
            zero_wnd: bool,
            sacked: impl Fn(i64) -> bool,
        ) -> i64 {
            let Some(reo_wnd) = self.begin_detection(srtt, zero_wnd) else {
                return 0;
            };
            let (mut marked, mut wait) = (0, None);
            for k in base..=maxseq {
                if !sacked(k) {
                    self.detect_one(k, now, reo_wnd, &mut marked, &mut wait);
                }
            }
            self.end_detection(now, wait);
            marked
        }
    }

    /// `detect` walks the packets in the order they last left and stops at
    /// RACK's packet; it must mark, and time, exactly what asking every
    /// packet above the cumulative ack does. Random sends, retransmissions
    /// (of SACKed packets too), SACKs, cumulative acks and RTO-style
    /// markings, several sends per instant; both after every step.
    #[test]
    fn detection_by_send_order_marks_what_asking_every_packet_marks() {
        use super::{Rack, LOST};
        use std::collections::BTreeSet;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut fast, mut slow) = (Rack::default(), Rack::default());
        let mut sacked = BTreeSet::new();
        let (mut base, mut maxseq, mut now) = (0i64, -1i64, 0 as SimTime);
        let ms = 1_000_000;
        let (mut marked_any, mut waited_any) = (0, 0);
        for step in 0..30_000 {
            now += rnd(3) * ms; // a third of the steps at the instant before
            let out = maxseq - base + 1;
            match rnd(10) {
                0..=3 => {
                    let seq = maxseq + 1;
                    for r in [&mut fast, &mut slow] {
                        r.on_send(seq, now, base, maxseq);
                    }
                    maxseq = seq;
                }
                4 if out > 0 => {
                    let seq = base + rnd(out as u64) as i64;
                    for r in [&mut fast, &mut slow] {
                        r.on_send(seq, now, base, maxseq);
                    }
                }
                5..=7 if out > 0 => {
                    let seq = base + rnd(out as u64) as i64;
                    if sacked.insert(seq) {
                        for r in [&mut fast, &mut slow] {
                            r.on_sacked(seq, now);
                        }
                    }
                }
                8 if out > 0 => {
                    let to = base + rnd((out as u64).min(4)) as i64;
                    for r in [&mut fast, &mut slow] {
                        r.on_cum_ack(base - 1, to, now, |k| sacked.contains(&k));
                    }
                    sacked.retain(|&k| k > to);
                    base = to + 1;
                }
                9 if step % 97 == 0 => {
                    for r in [&mut fast, &mut slow] {
                        r.now = now;
                        r.on_timeout(base, maxseq, |k| sacked.contains(&k));
                    }
                }
                _ => {}
            }
            let (srtt, zero) = (rnd(50) * ms, rnd(2) == 0);
            let a = fast.detect(now, srtt, zero, |k| sacked.contains(&k));
            let b = slow.detect_by_scan(base, maxseq, now, srtt, zero, |k| sacked.contains(&k));
            assert_eq!(
                (a, fast.reo_at, fast.lost),
                (b, slow.reo_at, slow.lost),
                "step {step}"
            );
            for k in base..=maxseq {
                assert_eq!(
                    fast.seg(k).flags() & LOST,
                    slow.seg(k).flags() & LOST,
                    "step {step}, packet {k}"
                );
            }
            marked_any += a;
            waited_any += i64::from(fast.reo_at.is_some());
        }
        // the random walk reached both outcomes often
        assert!(
            marked_any > 1000 && waited_any > 1000,
            "{marked_any} {waited_any}"
        );
    }
}
