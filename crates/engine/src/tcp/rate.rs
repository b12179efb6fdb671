//! Delivery-rate samples as Linux's `tcp_rate.c` takes them, in packets.
//!
//! tcp_rate.c: "The bandwidth estimator estimates the rate at which the
//! network can currently deliver outbound data packets for this flow. At a
//! high level, it operates by taking a delivery rate sample for each ACK.
//! A rate sample records the rate at which the network delivered packets
//! for this flow, calculated over the time interval between the
//! transmission of a data packet and the acknowledgment of that packet."
//! Each packet remembers, when sent, how much had been delivered
//! (`delivered`), when (`delivered_mstamp`) and when the packet that began
//! the current send interval left (`first_tx_mstamp`). "send_rate =
//! #pkts_delivered/(last_snd_time - first_snd_time)", "ack_rate =
//! #pkts_delivered/(last_ack_time - first_ack_time)", "bw = min(send_rate,
//! ack_rate)": the interval is the longer of the two.
//!
//! A packet counts as delivered when it is SACKed or, if it was not,
//! cumulatively acked ("Mark off the skb delivered once it's sacked to
//! avoid being used again when it's cumulatively acked"); an ack's sample
//! is taken from the most recently sent packet it delivers
//! (`tcp_rate_skb_delivered`). Bulk senders are never application-limited
//! (no `app_limited` marking).

use crate::time::{ns_f64, SimTime};

/// A packet's snapshot, half a cache line (`align(32)`: an ack or a send
/// touches one line of the table, not two for the entries that would
/// straddle one at 40 bytes).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
struct Snap {
    /// `tp->delivered` when the packet left, shifted up two bits, with the
    /// flags `RTX` (sent more than once, Karn's rule: no RTT sample from
    /// it) and `DONE` (delivered already, SACKed: not counted again when
    /// acked) in the low two. The count fits: it is at most the number of
    /// distinct packets delivered, and packet numbers stay below `BULK`
    /// (`i64::MAX / 4`), so `delivered << 2` is below `i64::MAX`.
    delivered_flags: i64,
    delivered_time: SimTime,
    first_tx: SimTime,
    sent: SimTime,
}

const RTX: i64 = 1;
const DONE: i64 = 2;

impl Snap {
    #[inline(always)]
    fn delivered(&self) -> i64 {
        self.delivered_flags >> 2
    }

    #[inline(always)]
    fn rtx(&self) -> bool {
        self.delivered_flags & RTX != 0
    }

    #[inline(always)]
    fn done(&self) -> bool {
        self.delivered_flags & DONE != 0
    }
}

/// One rate sample (`struct rate_sample`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Packets delivered over the interval.
    pub delivered: i64,
    /// `prior_delivered`: what had been delivered when the packet left.
    pub prior_delivered: i64,
    /// The interval, ns (> 0).
    pub interval_ns: SimTime,
    /// Packets delivered so far, this ack included (`tp->delivered`).
    pub total_delivered: i64,
    /// Packets this ack newly delivered, acked or SACKed (`acked_sacked`).
    pub acked_sacked: i64,
}

impl RateSample {
    /// Packets per second.
    pub fn rate_pps(&self) -> f64 {
        self.delivered as f64 * 1e9 / ns_f64(self.interval_ns)
    }
}

/// The connection's side of it (`tp->delivered`, `delivered_mstamp`,
/// `first_tx_mstamp`) and each outstanding packet's snapshot.
pub struct RateState {
    delivered: i64,
    delivered_time: SimTime,
    first_tx: SimTime,
    /// Snapshot of packet k at slot k mod len.
    snaps: Vec<Snap>,
    base: i64,
    /// The ack being taken: the packet its sample comes from, the most
    /// recently sent of those it delivers (seq −1: none yet), and when
    /// that packet was sent.
    pick_seq: i64,
    pick_sent: SimTime,
    /// That packet's snapshot, copied once the ack's deliveries are
    /// counted (before anything is sent on the ack, which could reuse the
    /// slot); `sealed` once copied.
    pick: Snap,
    sealed: bool,
    /// What the ack delivered.
    acked_sacked: i64,
    /// The highest packet the ack newly SACKed that was never resent, and
    /// when it was sent (−1: none): Linux's `last_sackt`.
    sack_last: i64,
    sack_last_sent: SimTime,
    /// The highest packet counted as cumulatively acked.
    acked_to: i64,
}

impl Default for RateState {
    fn default() -> Self {
        RateState {
            delivered: 0,
            delivered_time: 0,
            first_tx: 0,
            snaps: Vec::new(),
            base: 0,
            pick_seq: -1,
            pick_sent: 0,
            pick: Snap::default(),
            sealed: true,
            acked_sacked: 0,
            sack_last: -1,
            sack_last_sent: 0,
            acked_to: -1,
        }
    }
}

impl RateState {
    /// The slot of packet `seq` in the snapshot table (its length a power
    /// of two).
    #[inline(always)]
    fn slot(&self, seq: i64) -> usize {
        seq as usize & self.snaps.len().wrapping_sub(1)
    }

    /// Slot `i` of the table, for `i` from [`RateState::slot`] of a table
    /// that is not empty: the masked index is in bounds. Unchecked: the
    /// callers (`on_send` after growing it, `deliver` and `seal` from
    /// `on_sacked` and `on_cum_ack`, which return on an empty table) run on
    /// every packet and ack of a paced flow.
    #[inline(always)]
    fn snap(&self, i: usize) -> &Snap {
        debug_assert!(i < self.snaps.len());
        // SAFETY: as `snap_mut`'s
        unsafe { self.snaps.get_unchecked(i) }
    }

    /// [`RateState::snap`], to change.
    #[inline(always)]
    fn snap_mut(&mut self, i: usize) -> &mut Snap {
        debug_assert!(i < self.snaps.len());
        // SAFETY: `snaps` is not empty (see above) and its length is a
        // power of two (`on_send` grows it to one), so `slot`'s mask keeps
        // the index below it.
        unsafe { self.snaps.get_unchecked_mut(i) }
    }

    /// Packet `seq` leaves at `now` with `in_flight` packets out before it
    /// (`tcp_rate_skb_sent`: "if (!tp->packets_out) ... tp->first_tx_mstamp
    /// = tp->delivered_mstamp = tstamp").
    pub fn on_send(&mut self, seq: i64, now: SimTime, in_flight: i64, highest_ack: i64, rtx: bool) {
        if in_flight <= 0 {
            self.first_tx = now;
            self.delivered_time = now;
        }
        let span = (seq - highest_ack).max(1) as usize;
        if span >= self.snaps.len() {
            let len = (2 * span).next_power_of_two().max(64);
            let mut grown = vec![Snap::default(); len];
            let old = self.snaps.len();
            if old > 0 {
                for k in (highest_ack + 1).max(self.base)..seq {
                    grown[k as usize & (len - 1)] = self.snaps[k as usize & (old - 1)];
                }
            }
            self.snaps = grown;
        }
        self.base = highest_ack + 1;
        let i = self.slot(seq);
        debug_assert!((0..1 << 61).contains(&self.delivered));
        *self.snap_mut(i) = Snap {
            delivered_flags: self.delivered << 2 | if rtx { RTX } else { 0 },
            delivered_time: self.delivered_time,
            first_tx: self.first_tx,
            sent: now,
        };
    }

    /// Packet `seq` is delivered by the ack being taken
    /// (`tcp_rate_skb_delivered`): counted once, and the sample's packet
    /// if it left after the one chosen so far.
    #[inline]
    fn deliver(&mut self, seq: i64) -> usize {
        let i = self.slot(seq);
        let p = self.snap(i);
        if p.done() {
            return i;
        }
        let sent = p.sent;
        self.delivered += 1;
        self.acked_sacked += 1;
        if self.pick_seq < 0
            || sent > self.pick_sent
            || (sent == self.pick_sent && seq > self.pick_seq)
        {
            self.pick_seq = seq;
            self.pick_sent = sent;
            self.sealed = false;
            // "Record send time of most recently ACKed packet"
            self.first_tx = sent;
        }
        i
    }

    /// The ack's deliveries are counted: keep its sample packet's snapshot.
    #[inline]
    fn seal(&mut self) {
        if !self.sealed {
            self.pick = *self.snap(self.slot(self.pick_seq));
            self.sealed = true;
        }
    }

    /// Packets were SACKed and no ack has taken them yet.
    #[inline]
    pub fn pending(&self) -> bool {
        self.acked_sacked > 0
    }

    /// Packet `seq` was newly SACKed by the ack being taken.
    pub fn on_sacked(&mut self, seq: i64) {
        if self.snaps.is_empty() {
            return;
        }
        let i = self.deliver(seq);
        let p = self.snap_mut(i);
        p.delivered_flags |= DONE;
        let (rtx, sent) = (p.rtx(), p.sent);
        if !rtx && seq > self.sack_last {
            self.sack_last = seq;
            self.sack_last_sent = sent;
        }
    }

    /// The RTT sample the ack's SACKs give, taken once: `now` less the
    /// send time of the highest packet it newly SACKed that was never
    /// resent (`tcp_sacktag_one` keeps `last_sackt`, the last such packet
    /// in sequence order, and `tcp_clean_rtx_queue` makes it `ca_rtt_us`,
    /// the "RTT of last (S)ACKed packet" every rate sample carries).
    pub fn take_sack_rtt(&mut self, now: SimTime) -> Option<SimTime> {
        if self.sack_last < 0 {
            return None;
        }
        self.sack_last = -1;
        Some(now.saturating_sub(self.sack_last_sent))
    }

    /// The RTT sample of an ack that newly acked `acked` packets up to
    /// `ack`, taken from packet `ack` at `now`. Karn's rule over the whole
    /// ack as `tcp_clean_rtx_queue` applies it: no sample when any packet
    /// the ack newly covers was retransmitted ("if (likely(first_ackt) &&
    /// !(flag & FLAG_RETRANS_DATA_ACKED))"). Without it, the ack that a
    /// retransmission draws after a loss, which also covers the packets
    /// the receiver held behind the hole, would time packet `ack` from its
    /// first sending — seconds after a timeout.
    pub fn ack_rtt(&self, ack: i64, acked: i64, now: SimTime) -> Option<SimTime> {
        if self.snaps.is_empty() || ack < 0 {
            return None;
        }
        let len = self.snaps.len();
        let first = (ack - acked.clamp(1, len as i64) + 1).max(0);
        if (first..=ack).any(|k| self.snaps[k as usize & (len - 1)].rtx()) {
            return None;
        }
        let p = &self.snaps[ack as usize & (len - 1)];
        (p.sent <= now).then(|| now - p.sent)
    }

    /// The cumulative ack being taken reaches `ack` (a partial ack in
    /// recovery delivers too).
    pub fn on_cum_ack(&mut self, ack: i64) {
        if self.snaps.is_empty() {
            return;
        }
        if ack > self.acked_to {
            let mut k = self.acked_to.max(ack - self.snaps.len() as i64) + 1;
            while k <= ack {
                self.deliver(k);
                k += 1;
            }
            self.acked_to = ack;
        }
        self.seal();
    }

    /// The ack being taken, cumulative up to `ack`, after `on_sacked` for
    /// what it newly SACKed (`tcp_rate_gen`). None when it delivered
    /// nothing or no interval can be measured.
    pub fn on_ack(&mut self, ack: i64, now: SimTime) -> Option<RateSample> {
        if self.snaps.is_empty() || ack < 0 {
            return None;
        }
        self.on_cum_ack(ack);
        let acked_sacked = std::mem::take(&mut self.acked_sacked);
        if self.pick_seq < 0 {
            return None;
        }
        self.pick_seq = -1;
        if acked_sacked == 0 {
            return None;
        }
        self.delivered_time = now;
        let p = self.pick;
        // "an ACK with a send_rate lower than the ack_rate ... use the
        // longer of the send and ack intervals"
        let snd = p.sent.saturating_sub(p.first_tx);
        let ack_iv = now.saturating_sub(p.delivered_time);
        let interval_ns = snd.max(ack_iv);
        (interval_ns > 0).then_some(RateSample {
            delivered: self.delivered - p.delivered(),
            prior_delivered: p.delivered(),
            interval_ns,
            total_delivered: self.delivered,
            acked_sacked,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot is half a line, so none straddles two.
    #[test]
    fn a_snapshot_is_half_a_line() {
        assert_eq!(std::mem::size_of::<Snap>(), 32);
        assert_eq!(std::mem::align_of::<Snap>(), 32);
    }

    /// Karn's rule over the whole ack, as `tcp_clean_rtx_queue` applies it
    /// ("!(flag & FLAG_RETRANS_DATA_ACKED)"): packets 0..=4 leave at 0, 1,
    /// 2, 3, 4 ms; packet 2 is resent at 300 ms. The ack at 310 ms that
    /// covers 2..=4 (its retransmission filled the hole) gives no sample —
    /// timing packet 4 would say 306 ms for a 10 ms path; an ack of 3..=4
    /// alone (nothing resent among them) times packet 4: 310 − 4 = 306 ms.
    #[test]
    fn an_ack_covering_a_retransmission_gives_no_rtt_sample() {
        let ms = 1_000_000;
        let mut r = RateState::default();
        for k in 0..5 {
            r.on_send(k, k as SimTime * ms, k, -1, false);
        }
        r.on_send(2, 300 * ms, 2, 1, true);
        assert_eq!(r.ack_rtt(4, 3, 310 * ms), None);
        assert_eq!(r.ack_rtt(4, 2, 310 * ms), Some(306 * ms));
        assert_eq!(r.ack_rtt(1, 2, 10 * ms), Some(9 * ms));
    }

    /// `ca_rtt_us` from a SACK (`tcp_sacktag_one`'s `last_sackt`): the
    /// highest packet the ack newly SACKed that was never resent, taken
    /// once. Packets 0..=5 leave at 0..5 ms, 3 again at 50 ms; an ack at
    /// 100 ms SACKs 5, 3 and 4 (blocks in any order): the sample is packet
    /// 5's, 95 ms; an ack SACKing only the resent 3 gives none.
    #[test]
    fn a_sack_gives_the_rtt_of_the_highest_packet_it_newly_sacked_never_resent() {
        let ms = 1_000_000;
        let sent = || {
            let mut r = RateState::default();
            for k in 0..6 {
                r.on_send(k, k as SimTime * ms, k, -1, false);
            }
            r.on_send(3, 50 * ms, 3, -1, true);
            r
        };
        let mut r = sent();
        for k in [5, 3, 4] {
            r.on_sacked(k);
        }
        assert_eq!(r.take_sack_rtt(100 * ms), Some(95 * ms));
        assert_eq!(r.take_sack_rtt(100 * ms), None, "taken once");
        let mut r = sent();
        r.on_sacked(3);
        assert_eq!(
            r.take_sack_rtt(100 * ms),
            None,
            "a resent packet gives no sample"
        );
    }
}
