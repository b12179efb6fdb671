//! The TCP receiver (ns-2 `Agent/TCPSink`, `.../Sack1`, `.../DelAck`): holds
//! out-of-order packets, delivers in order, and acks every packet with the
//! next packet it expects — or, with delayed acks, every second in-order
//! packet or after `delack_interval`, whichever is first, and at once for
//! out-of-order data (RFC 5681 §4.2). SACK blocks (RFC 2018 §4): the first
//! block holds the packet just received, then the most recently reported
//! other blocks, at most three.

use crate::net::packet::{Kind, Packet, SackBlock, CE, CWR, ECE, ECT, MAX_SACK_BLOCKS};
use crate::plan::{TcpParams, Variant};
use crate::tcp::cc::Cc;
use crate::time::SimTime;

pub struct TcpSink {
    flow: u32,
    /// Next packet expected in order (= cumulative ack + 1).
    next_expected: u32,
    /// Received ranges above `next_expected`, sorted, disjoint, [start, end).
    ooo: Vec<SackBlock>,
    /// SACK blocks in order of recency.
    recent: Vec<SackBlock>,
    sack: bool,
    delayed_ack: bool,
    /// With delayed acks, packet 0 is acked at once (ns-2's DelAck
    /// `SYN_immediate_ack_`, true since 2010/02).
    syn_immediate_ack: bool,
    delack_interval_ns: SimTime,
    /// A delayed ack is owed; the timer is due then.
    delack_deadline: Option<SimTime>,
    /// A packet marked CE arrived since the last ack: echo it (ECE).
    ce_pending: bool,
    /// Classic ECN (RFC 3168 §6.1.3): echo every ack from a mark until a
    /// packet with CWR arrives (ns-2 `ecn_unacked`); otherwise (DCTCP, RFC
    /// 8257 §3.2) echo exactly the marks of the data an ack covers.
    classic_ecn: bool,
    ecn_unacked: bool,
    /// DCTCP's receiver state (RFC 8257 §3.2, `DCTCP.CE`): the CE mark of
    /// the last data packet, echoed on every ack.
    dctcp_ce: bool,
    /// An ack the last data packet released before its own (DCTCP: the
    /// delayed ack of the packets before a change of CE state); the
    /// caller sends it first.
    prior_ack: Option<Packet>,
    /// Since the last ack: a packet with CWR, an ECN-capable packet, and the
    /// sender's offer (ECE without ECT on packet 0) arrived.
    cwr_seen: bool,
    ect_seen: bool,
    offer_seen: bool,
    /// Packet 0 is a header-only SYN that carries no data.
    syn: bool,
    payload_bytes: u32,
    /// An ack's size on the wire: a bare TCP/IP header of the group's
    /// `header_size` (40 bytes; 52 with the linux profile's timestamps),
    /// as ns-2's sink (`packetSize_`, the export writes it) and the kernel send.
    ack_bytes: u32,
    delivered_packets: u64,
    delivered_bytes: u64,
    /// SACK blocks of the acks sent, by ack id (`Packet::sack_id`): a ring
    /// of power-of-two length holding ids `oldest..next_sack_id`, doubled
    /// (rarely: only when more acks with blocks are unread than it holds)
    /// so that sending an ack allocates nothing.
    sent: Vec<SentSack>,
    next_sack_id: u32,
    /// Acks with a lower id were read by the sender or dropped: acks of a
    /// flow follow one route of FIFO links, so they arrive in id order.
    oldest_sack_id: u32,
}

#[derive(Clone, Copy, Default)]
struct SentSack {
    id: u32,
    blocks: [SackBlock; MAX_SACK_BLOCKS],
}

impl TcpSink {
    /// The receiver of flow `flow` with its group's parameters `p`; a full
    /// packet carries `payload_bytes` of data.
    /// Delayed acks are on.
    #[inline]
    pub fn delayed_ack(&self) -> bool {
        self.delayed_ack
    }

    /// A delayed ack is owed; its timer is due then.
    #[inline]
    pub fn delack_deadline(&self) -> Option<SimTime> {
        self.delack_deadline
    }

    /// The ack the last data packet released before its own, if any: the
    /// caller sends it first.
    #[inline]
    pub fn take_prior_ack(&mut self) -> Option<Packet> {
        // (tested first: almost every data packet finds none, and `take`
        // would move the whole option out and back)
        if self.prior_ack.is_none() {
            return None;
        }
        self.prior_ack.take()
    }

    /// Packets delivered in order to the application.
    #[inline]
    pub fn delivered_packets(&self) -> u64 {
        self.delivered_packets
    }

    /// Bytes delivered in order to the application.
    #[inline]
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }

    pub fn new(flow: u32, p: &TcpParams, payload_bytes: u32) -> Self {
        TcpSink {
            flow,
            next_expected: 0,
            ooo: Vec::new(),
            recent: Vec::new(),
            sack: p.variant == Variant::Sack,
            delayed_ack: p.delayed_ack,
            syn_immediate_ack: p.syn_immediate_ack,
            delack_interval_ns: p.delack_interval_ns,
            delack_deadline: None,
            ce_pending: false,
            classic_ecn: p.ecn && p.cc != Cc::Dctcp,
            ecn_unacked: false,
            dctcp_ce: false,
            prior_ack: None,
            cwr_seen: false,
            ect_seen: false,
            offer_seen: false,
            syn: p.syn,
            payload_bytes,
            ack_bytes: p.header_size,
            delivered_packets: 0,
            delivered_bytes: 0,
            sent: if p.variant == Variant::Sack {
                vec![SentSack::default(); 64]
            } else {
                Vec::new()
            },
            next_sack_id: 0,
            oldest_sack_id: 0,
        }
    }

    /// The SACK blocks of an ack this sink sent, read once by the sender
    /// when the ack arrives.
    pub fn take_sack(&mut self, ack: &Packet) -> &[SackBlock] {
        if ack.nsack == 0 {
            return &[];
        }
        let id = ack.sack_id;
        let e = &self.sent[id as usize & (self.sent.len() - 1)];
        assert_eq!(e.id, id, "SACK blocks of ack {id} overwritten");
        if id.wrapping_sub(self.oldest_sack_id) < 1 << 31 {
            self.oldest_sack_id = id.wrapping_add(1);
        }
        &e.blocks[..ack.nsack as usize]
    }

    /// Keep the `n` most recent blocks for the ack being built; its id.
    /// (Out of line: the common ack carries none, and the caller stays a
    /// leaf without it.)
    #[inline(never)]
    fn store_sack(&mut self, n: usize) -> u32 {
        if self.next_sack_id.wrapping_sub(self.oldest_sack_id) as usize == self.sent.len() {
            self.grow_sent();
        }
        let id = self.next_sack_id;
        self.next_sack_id = id.wrapping_add(1);
        let mask = self.sent.len() - 1;
        let e = &mut self.sent[id as usize & mask];
        e.id = id;
        e.blocks[..n].copy_from_slice(&self.recent[..n]);
        id
    }

    /// Every slot of the ring holds an unread ack's blocks: double it.
    #[cold]
    #[inline(never)]
    fn grow_sent(&mut self) {
        let mut grown = vec![SentSack::default(); self.sent.len() * 2];
        let mask = grown.len() - 1;
        let mut id = self.oldest_sack_id;
        while id != self.next_sack_id {
            grown[id as usize & mask] = self.sent[id as usize & (self.sent.len() - 1)];
            id = id.wrapping_add(1);
        }
        self.sent = grown;
    }

    /// A data packet arrives; returns the ack to send now, if any.
    pub fn on_data(&mut self, pkt: &Packet, now: SimTime) -> Option<Packet> {
        let seq = pkt.seq;
        if pkt.ecn != 0 || self.dctcp_ce {
            self.ecn_arrival(pkt);
        }
        let in_order = seq == self.next_expected;
        let had_holes = !self.ooo.is_empty();
        if in_order {
            let mut end = seq + 1;
            if let Some(first) = self.ooo.first() {
                if first.start == end {
                    end = first.end;
                    self.ooo.remove(0);
                }
            }
            self.deliver(end);
            self.recent.retain(|b| b.end > end);
        } else if seq > self.next_expected {
            let block = self.insert(seq);
            if self.sack {
                self.recent
                    .retain(|b| b.end < block.start || b.start > block.end);
                self.recent.insert(0, block);
            }
        }
        // ns-2's DelAckSink delays the ack of a packet that leaves it the
        // highest in order with nothing above (`seqno == Seqno()` and not
        // below `maxseen_`): a new in-order packet, or again the last one
        // (a go-back-N duplicate) — any other duplicate is acked at once
        let delayable = seq + 1 == self.next_expected && !had_holes;
        if self.delayed_ack && delayable && !(self.syn_immediate_ack && seq == 0) {
            if self.delack_deadline.is_some() {
                self.delack_deadline = None;
                return Some(self.ack());
            }
            self.delack_deadline = Some(now + self.delack_interval_ns);
            return None;
        }
        self.delack_deadline = None;
        Some(self.ack())
    }

    /// The ECN bits of an arriving data packet: what the next ack echoes.
    #[cold]
    fn ecn_arrival(&mut self, pkt: &Packet) {
        if !self.classic_ecn && (pkt.ecn & CE != 0) != self.dctcp_ce {
            self.dctcp_state_change();
        }
        self.ce_pending |= pkt.ecn & CE != 0;
        self.cwr_seen |= pkt.ecn & CWR != 0;
        self.ect_seen |= pkt.ecn & ECT != 0;
        self.offer_seen |= pkt.ecn & (ECT | ECE) == ECE;
    }

    /// RFC 8257 §3.2: "If the CE codepoint is set and DCTCP.CE is false, set
    /// DCTCP.CE to true and send an immediate ACK. If the CE codepoint is not
    /// set and DCTCP.CE is true, set DCTCP.CE to false and send an immediate
    /// ACK." As Linux (`dctcp_ece_ack_update`): a delayed ack owed for the
    /// packets before this one goes now, echoing their state; this packet
    /// starts the count again under the new one.
    #[cold]
    fn dctcp_state_change(&mut self) {
        if self.delack_deadline.take().is_some() {
            self.prior_ack = Some(self.ack());
        }
        self.dctcp_ce = !self.dctcp_ce;
    }

    /// The delayed-ack timer fired at `now`.
    pub fn on_delack_timer(&mut self, now: SimTime) -> Option<Packet> {
        match self.delack_deadline {
            Some(d) if d <= now => {
                self.delack_deadline = None;
                Some(self.ack())
            }
            _ => None,
        }
    }

    /// RFC 3168 §6.1.3 as ns-2's `TcpSink::ack()` does it for the data
    /// since the last ack (one packet, or two with delayed acks): a CWR ends
    /// the echo, then a mark starts it; an ack of ECN-capable data carries
    /// it, and the ack of the sender's offer answers it.
    #[cold]
    fn classic_echo(&mut self, a: &mut Packet) {
        if self.cwr_seen {
            self.ecn_unacked = false;
        }
        if self.ce_pending {
            self.ecn_unacked = true;
        }
        if (self.ect_seen && self.ecn_unacked) || self.offer_seen {
            a.ecn = ECE;
        }
        self.ce_pending = false;
        self.cwr_seen = false;
        self.ect_seen = false;
        self.offer_seen = false;
    }

    fn deliver(&mut self, new_next: u32) {
        let mut n = (new_next - self.next_expected) as u64;
        if self.syn && self.next_expected == 0 {
            n -= 1; // the SYN carries no data
        }
        self.delivered_packets += n;
        self.delivered_bytes += n * self.payload_bytes as u64;
        self.next_expected = new_next;
    }

    /// Add `seq` to the out-of-order ranges; returns the range now holding it.
    fn insert(&mut self, seq: u32) -> SackBlock {
        let i = self.ooo.partition_point(|b| b.end < seq);
        if i < self.ooo.len() && self.ooo[i].start <= seq && seq < self.ooo[i].end {
            return self.ooo[i]; // duplicate
        }
        if i < self.ooo.len() && self.ooo[i].end == seq {
            self.ooo[i].end += 1;
            if i + 1 < self.ooo.len() && self.ooo[i + 1].start == seq + 1 {
                self.ooo[i].end = self.ooo[i + 1].end;
                self.ooo.remove(i + 1);
            }
            return self.ooo[i];
        }
        if i < self.ooo.len() && self.ooo[i].start == seq + 1 {
            self.ooo[i].start = seq;
            return self.ooo[i];
        }
        let b = SackBlock {
            start: seq,
            end: seq + 1,
        };
        self.ooo.insert(i, b);
        b
    }

    #[inline]
    fn ack(&mut self) -> Packet {
        let mut a = Packet::new(Kind::Ack, self.flow, self.next_expected, self.ack_bytes);
        if self.classic_ecn {
            self.classic_echo(&mut a);
        } else if self.dctcp_ce {
            // RFC 8257 §3.2 (paraphrased): every ack echoes DCTCP.CE, the state of the data
            // it acknowledges (not until CWR: DCTCP counts the marked acks)
            a.ecn = ECE;
        }
        if self.sack {
            let n = self.recent.len().min(MAX_SACK_BLOCKS);
            if n > 0 {
                a.sack_id = self.store_sack(n);
            }
            a.nsack = n as u8;
            // each block is two 4-byte words on the wire (ns-2's Sacker adds
            // 8 bytes per block to the ack's size): acks carrying SACK
            // blocks take longer to serialize
            a.size_bytes += 8 * n as u32;
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u32) -> Packet {
        Packet::new(Kind::Data, 0, seq, 1000)
    }

    /// A receiver with SACK or not, delayed acks every `interval` ns or not,
    /// packet 0 a SYN or not, and classic ECN or not (ns-2 2.35's profile).
    fn sink(sack: bool, delack: bool, interval: SimTime, syn: bool, classic_ecn: bool) -> TcpSink {
        let mut p =
            crate::tcp::dialogue::params(if sack { Variant::Sack } else { Variant::Reno }, 2, 40);
        (p.delayed_ack, p.delack_interval_ns, p.syn, p.ecn) = (delack, interval, syn, classic_ecn);
        TcpSink::new(0, &p, 960)
    }

    #[test]
    fn acks_every_packet_with_the_next_expected() {
        let mut s = sink(false, false, 0, true, false);
        assert_eq!(s.on_data(&data(0), 0).unwrap().seq, 1);
        assert_eq!(s.on_data(&data(1), 0).unwrap().seq, 2);
        // packet 2 lost: 3 and 4 produce duplicate acks for 2
        assert_eq!(s.on_data(&data(3), 0).unwrap().seq, 2);
        assert_eq!(s.on_data(&data(4), 0).unwrap().seq, 2);
        // the retransmission fills the hole: everything up to 4 is delivered
        assert_eq!(s.on_data(&data(2), 0).unwrap().seq, 5);
        assert_eq!(s.delivered_packets, 4, "SYN not counted");
        assert_eq!(s.delivered_bytes, 4 * 960);
    }

    #[test]
    fn sack_blocks_most_recent_first() {
        let mut s = sink(true, false, 0, false, false);
        s.on_data(&data(0), 0);
        s.on_data(&data(2), 0);
        s.on_data(&data(3), 0);
        let a = s.on_data(&data(6), 0).unwrap();
        assert_eq!(a.seq, 1);
        assert_eq!(
            s.take_sack(&a),
            &[
                SackBlock { start: 6, end: 7 },
                SackBlock { start: 2, end: 4 }
            ]
        );
        let a = s.on_data(&data(4), 0).unwrap();
        assert_eq!(
            s.take_sack(&a),
            &[
                SackBlock { start: 2, end: 5 },
                SackBlock { start: 6, end: 7 }
            ]
        );
        let a = s.on_data(&data(1), 0).unwrap();
        assert_eq!(a.seq, 5);
        assert_eq!(s.take_sack(&a), &[SackBlock { start: 6, end: 7 }]);
    }

    #[test]
    fn sack_blocks_survive_many_unread_acks_and_drops() {
        // 300 acks with blocks sent before the sender reads any (more than
        // the ring's first 64 slots): each keeps its own blocks; acks never
        // read (dropped on the way) do not block the ring.
        let mut s = sink(true, false, 0, false, false);
        s.on_data(&data(0), 0);
        let acks: Vec<Packet> = (0..300)
            .map(|k| s.on_data(&data(2 + 2 * k), 0).unwrap())
            .collect();
        for (k, a) in acks.iter().enumerate() {
            let b = SackBlock {
                start: 2 + 2 * k as u32,
                end: 3 + 2 * k as u32,
            };
            assert_eq!(s.take_sack(a)[0], b);
        }
        for k in 0..1000 {
            let a = s.on_data(&data(1000 + 2 * k), 0).unwrap();
            if k % 3 == 0 {
                assert_eq!(s.take_sack(&a)[0].start, 1000 + 2 * k);
            }
        }
        assert_eq!(s.sent.len(), 512);
    }

    #[test]
    fn an_ack_is_a_bare_header_of_the_groups_header_size() {
        // the linux profile's 52 bytes (12 of timestamps), as the ns-2 export's
        // sink (`packetSize_ header_size`) and the kernel send: not a fixed 40
        let mut p = crate::tcp::dialogue::params(Variant::Reno, 2, 40);
        p.header_size = 52;
        let mut s = TcpSink::new(0, &p, 948);
        assert_eq!(s.on_data(&data(0), 0).unwrap().size_bytes, 52);
    }

    #[test]
    fn acks_grow_by_eight_bytes_per_sack_block() {
        // ns-2's Sacker: size += 8 per block (two 4-byte words)
        let mut s = sink(true, false, 0, false, false);
        assert_eq!(s.on_data(&data(0), 0).unwrap().size_bytes, 40);
        assert_eq!(s.on_data(&data(2), 0).unwrap().size_bytes, 48);
        assert_eq!(s.on_data(&data(4), 0).unwrap().size_bytes, 56);
        assert_eq!(s.on_data(&data(6), 0).unwrap().size_bytes, 64);
        assert_eq!(
            s.on_data(&data(8), 0).unwrap().size_bytes,
            64,
            "three blocks at most"
        );
        let mut plain = sink(false, false, 0, false, false);
        plain.on_data(&data(0), 0);
        assert_eq!(plain.on_data(&data(2), 0).unwrap().size_bytes, 40);
    }

    #[test]
    fn delayed_ack_every_second_packet_or_timer() {
        let mut s = sink(false, true, 100, false, false);
        // ns-2 2.35's DelAck sink acks packet 0 at once (SYN_immediate_ack_)
        assert_eq!(s.on_data(&data(0), 0).unwrap().seq, 1);
        assert!(s.on_data(&data(1), 5).is_none());
        assert_eq!(s.on_data(&data(2), 10).unwrap().seq, 3);
        assert!(s.on_data(&data(3), 20).is_none());
        assert_eq!(s.on_delack_timer(120).unwrap().seq, 4);
        // a duplicate of the highest in-order packet (3) is delayed as ns-2's
        // `seqno == Seqno()` test does; an older duplicate is acked at once
        assert!(s.on_data(&data(3), 125).is_none());
        assert_eq!(s.on_data(&data(1), 126).unwrap().seq, 4);
        // out of order: immediate
        assert_eq!(s.on_data(&data(5), 130).unwrap().seq, 4);
        // before 2010/02 packet 0 waited like any other
        let mut s = sink(false, true, 100, false, false);
        s.syn_immediate_ack = false;
        assert!(s.on_data(&data(0), 0).is_none());
        assert_eq!(s.on_data(&data(1), 10).unwrap().seq, 2);
    }

    fn with(seq: u32, ecn: u8) -> Packet {
        let mut p = data(seq);
        p.ecn = ecn;
        p
    }

    #[test]
    fn classic_ecn_echoes_from_the_mark_until_cwr() {
        // RFC 3168 §6.1.3 (paraphrased): after a CE packet the receiver sets
        // ECN-Echo on every ack until a packet with CWR arrives
        let mut s = sink(false, false, 0, false, true);
        let echo = |s: &mut TcpSink, p: Packet| s.on_data(&p, 0).unwrap().ecn & ECE != 0;
        assert!(
            echo(&mut s, with(0, ECE)),
            "the offer on packet 0 is answered"
        );
        assert!(!echo(&mut s, with(1, ECT)));
        assert!(echo(&mut s, with(2, ECT | CE)));
        assert!(echo(&mut s, with(3, ECT)), "unmarked, still echoed");
        assert!(echo(&mut s, with(4, ECT)));
        assert!(!echo(&mut s, with(5, ECT | CWR)), "the sender has reacted");
        assert!(!echo(&mut s, with(6, ECT)));
        // a CWR and a new mark on one packet: the mark wins (ns-2 clears, then sets)
        assert!(echo(&mut s, with(7, ECT | CWR | CE)));
        // DCTCP echoes each mark once (RFC 8257 §3.2)
        let mut d = sink(false, false, 0, false, false);
        assert!(echo(&mut d, with(0, ECT | CE)));
        assert!(!echo(&mut d, with(1, ECT)));
    }

    #[test]
    fn dctcp_with_delayed_acks_acks_at_once_when_the_ce_state_changes() {
        // RFC 8257 §3.2 (paraphrased): a change of DCTCP.CE sends an immediate ack; as in
        // Linux, that ack covers the packets before the change and echoes
        // their state, and every ack echoes the current state
        let mut d = sink(false, true, 100, false, false);
        let ece = |a: &Packet| a.ecn & ECE != 0;
        assert!(!ece(&d.on_data(&with(0, ECT), 0).unwrap())); // packet 0 at once
        assert!(d.on_data(&with(1, ECT), 10).is_none()); // delayed
                                                         // 2 is marked: the ack owed for 1 goes now, unmarked; 2 waits
        assert!(d.on_data(&with(2, ECT | CE), 20).is_none());
        let prior = d.prior_ack.take().unwrap();
        assert_eq!((prior.seq, ece(&prior)), (2, false));
        // 3 marked too: the pair 2, 3 is acked, echoing the mark
        let a = d.on_data(&with(3, ECT | CE), 30).unwrap();
        assert_eq!((a.seq, ece(&a)), (4, true));
        // 4 unmarked: nothing owed, so no early ack; the timer's ack echoes no mark
        assert!(d.on_data(&with(4, ECT), 40).is_none());
        assert!(d.prior_ack.is_none());
        let a = d.on_delack_timer(140).unwrap();
        assert_eq!((a.seq, ece(&a)), (5, false));
    }
}
