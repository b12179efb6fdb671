//! The packet: a small `Copy` struct moved by value along its route.

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// TCP data; `seq` is the packet number (ns-2 counts packets, not bytes).
    Data = 0,
    /// TCP acknowledgement; `seq` is the next packet the receiver expects
    /// (ns-2's cumulative ack + 1), plus up to three SACK blocks (held by the
    /// sink, see `Packet::sack_id`).
    Ack = 1,
    /// UDP datagram.
    Udp = 2,
}

/// A SACK block [start, end) in packet numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u32,
    pub end: u32,
}

pub const MAX_SACK_BLOCKS: usize = 3;

/// Direction along a flow's route.
pub const FORWARD: u8 = 0;
pub const REVERSE: u8 = 1;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub seq: u32,
    pub size_bytes: u32,
    pub kind: Kind,
    /// FORWARD (data, UDP) or REVERSE (acks).
    pub dir: u8,
    /// Index of the link the packet is on (or arrives at next) in its route.
    pub hop: u8,
    /// Number of SACK blocks the ack carries (0 for everything else).
    pub nsack: u8,
    /// A retransmission (for traces; the network does not look).
    pub rtx: bool,
    /// ECN bits: [`ECT`], [`CE`] on data, [`ECE`] on acks (RFC 3168).
    pub ecn: u8,
    /// With `nsack > 0`: the id under which the sink keeps this ack's SACK
    /// blocks (`TcpSink::take_sack`). The blocks stay out of the packet so
    /// that the packet moved through link pipes and queues is 24 bytes, not
    /// 44; the network never looks at them.
    pub sack_id: u32,
}

/// ECN-capable transport: the sender may be marked instead of dropped.
pub const ECT: u8 = 1;
/// Congestion experienced: a queue marked the packet.
pub const CE: u8 = 2;
/// ECN-echo on an ack: the data it acknowledges was marked. On data packet
/// 0 without ECT, the sender's offer of ECN (ns-2's one-way negotiation).
pub const ECE: u8 = 4;
/// Congestion window reduced, on data: the sender has reacted, so the
/// receiver may stop echoing (RFC 3168 §6.1.2; ns-2 `cong_action`).
pub const CWR: u8 = 8;

impl Packet {
    pub fn new(kind: Kind, flow: u32, seq: u32, size_bytes: u32) -> Self {
        Packet {
            flow,
            seq,
            size_bytes,
            kind,
            dir: if kind == Kind::Ack { REVERSE } else { FORWARD },
            hop: 0,
            nsack: 0,
            rtx: false,
            ecn: 0,
            sack_id: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_is_small() {
        assert_eq!(std::mem::size_of::<super::Packet>(), 24);
        assert_eq!(std::mem::size_of::<(u64, super::Packet)>(), 32);
    }
}
