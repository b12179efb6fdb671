//! Dialogue tests' harness (in the style of smoltcp's socket tests): feed
//! the sender an ack at time t, then state exactly which packets it sent
//! and what its window is. Acks are written in ns-2's numbering: `ack(t, k)`
//! means the receiver holds every packet up to k.

use super::sender::TcpSender;
use crate::net::packet::{Kind, Packet, SackBlock};
use crate::plan::{TcpParams, Variant};
use crate::time::SimTime;

pub fn params(variant: Variant, initial_cwnd: u32, initial_ssthresh: u32) -> TcpParams {
    TcpParams {
        cc: crate::plan::Cc::Reno,
        profile: crate::plan::Profile::Ns2v235,
        variant,
        alpha: 1.0,
        beta: 0.5,
        window: 1000,
        max_cwnd: 0,
        initial_cwnd,
        initial_ssthresh,
        initial_rto_ns: 3_000_000_000,
        min_rto_ns: 200_000_000,
        max_rto_ns: 60_000_000_000,
        tick_ns: 10_000_000,
        tick_seed: None,
        dupack_threshold: 3,
        limited_transmit: true,
        bug_fix: true,
        syn: false,
        header_size: 40,
        packet_size: 1000,
        delayed_ack: false,
        delack_interval_ns: 100_000_000,
        syn_immediate_ack: true,
        ecn: false,
    }
}

pub struct Dialogue {
    pub s: TcpSender,
    out: Vec<Packet>,
}

fn ms(t: u64) -> SimTime {
    t * 1_000_000
}

impl Dialogue {
    /// A bulk sender started at t = 0 with this initial window and ssthresh
    /// (no SYN); its first flight is waiting to be checked with `sent`.
    pub fn start(variant: Variant, initial_cwnd: u32, initial_ssthresh: u32) -> Self {
        Dialogue::with(params(variant, initial_cwnd, initial_ssthresh))
    }

    /// The same with any parameters.
    pub fn with(p: TcpParams) -> Self {
        let mut d = Dialogue {
            s: TcpSender::new(0, p, 0.0),
            out: Vec::new(),
        };
        d.s.start(0, &mut d.out);
        d
    }

    /// An ack at `t_ms` covering every packet up to `k`.
    pub fn ack(&mut self, t_ms: u64, k: i64) -> &mut Self {
        self.ack_sack(t_ms, k, &[])
    }

    /// An ack at `t_ms` covering every packet up to `k` that echoes a
    /// congestion mark (ECE).
    pub fn ack_ece(&mut self, t_ms: u64, k: i64) -> &mut Self {
        assert!(self.out.is_empty(), "unchecked packets {:?}", self.seqs());
        let mut pkt = Packet::new(Kind::Ack, 0, (k + 1) as u32, 40);
        pkt.ecn = crate::net::packet::ECE;
        self.s.on_ack(&pkt, &[], ms(t_ms), &mut self.out);
        self
    }

    /// The ECN bits of the packets sent since the last check, in order.
    #[track_caller]
    pub fn ecn_bits(&mut self, bits: &[u8]) -> &mut Self {
        let got: Vec<u8> = self.out.iter().map(|p| p.ecn).collect();
        assert_eq!(got, bits, "ECN bits of {:?}", self.seqs());
        self
    }

    /// The same with SACK blocks `[start, end)`, most recent first.
    pub fn ack_sack(&mut self, t_ms: u64, k: i64, blocks: &[(u32, u32)]) -> &mut Self {
        assert!(self.out.is_empty(), "unchecked packets {:?}", self.seqs());
        let pkt = Packet::new(Kind::Ack, 0, (k + 1) as u32, 40);
        let b: Vec<SackBlock> = blocks
            .iter()
            .map(|&(start, end)| SackBlock { start, end })
            .collect();
        self.s.on_ack(&pkt, &b, ms(t_ms), &mut self.out);
        self
    }

    /// The retransmission timer fires at `t_ms` (it must be due then).
    pub fn timeout(&mut self, t_ms: u64) -> &mut Self {
        assert!(self.out.is_empty(), "unchecked packets {:?}", self.seqs());
        assert_eq!(self.s.rto_deadline(), Some(ms(t_ms)), "timer deadline");
        self.s.on_timeout(ms(t_ms), &mut self.out);
        self
    }

    fn seqs(&self) -> Vec<i64> {
        self.out.iter().map(|p| p.seq as i64).collect()
    }

    /// Forget what was sent since the last check.
    pub fn out_clear(&mut self) {
        self.out.clear();
    }

    /// Exactly these packets were sent since the last check, in this order.
    #[track_caller]
    pub fn sent(&mut self, seqs: &[i64]) -> &mut Self {
        assert_eq!(self.seqs(), seqs, "packets sent");
        self.out.clear();
        self
    }

    /// The congestion window and ssthresh now.
    #[track_caller]
    pub fn window(&mut self, cwnd: f64, ssthresh: i64) -> &mut Self {
        assert!(
            (self.s.cwnd() - cwnd).abs() < 1e-9,
            "cwnd {} != {cwnd}",
            self.s.cwnd()
        );
        assert_eq!(self.s.ssthresh(), ssthresh, "ssthresh");
        self
    }

    /// The retransmission timer is due at `t_ms`.
    #[track_caller]
    pub fn timer(&mut self, t_ms: u64) -> &mut Self {
        assert_eq!(self.s.rto_deadline(), Some(ms(t_ms)), "timer deadline");
        self
    }

    /// The common opening of the loss tests: an initial window of 10 packets
    /// (0..9) in slow start (ssthresh 40); acks for 0, 1, 2 each grow cwnd by
    /// one and release two packets, so 0..15 are out and cwnd is 13.
    pub fn opened(variant: Variant) -> Self {
        let mut d = Dialogue::start(variant, 10, 40);
        d.sent(&(0..10).collect::<Vec<_>>());
        d.ack(100, 0).sent(&[10, 11]).window(11.0, 40);
        d.ack(110, 1).sent(&[12, 13]);
        d.ack(120, 2).sent(&[14, 15]).window(13.0, 40);
        d
    }
}
