//! Congestion control: how big the window is. It sees events only — an ack
//! with the packets it newly acknowledged and its RTT sample, a congestion
//! event, a retransmission timeout, an ECN echo — never packets or the
//! sequence space (as Linux's `tcp_congestion_ops`, ns-3's
//! `TcpCongestionOps`, quinn's and s2n-quic's controllers). Loss recovery
//! decides *when* a congestion event happens; this part decides what it
//! does to the window.
//!
//! Dispatch is an enum and a `match` (one call per ack, on the hot path).

pub mod aimd;

use crate::scenario::TcpParams;

/// What a window reduction does (ns-2's `slowdown()` flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// Fast retransmit of Tahoe: ssthresh ← β·W (½ the first time), cwnd ← 1.
    ToOne,
    /// Fast recovery of Reno/NewReno/SACK: ssthresh ← cwnd ← β·W.
    Multiplicative,
    /// Retransmission timeout: ssthresh ← W/2, cwnd ← 1 (ns-2 `CLOSE_CWND_RESTART`).
    Timeout,
    /// Timeout with nothing outstanding: cwnd ← 1, ssthresh kept.
    Restart,
}

pub enum Cc {
    /// TCP(α, β); Reno is (1, ½).
    Aimd(aimd::Aimd),
}

impl Cc {
    pub fn new(p: &TcpParams) -> Self {
        Cc::Aimd(aimd::Aimd::new(
            p.alpha,
            p.beta,
            p.initial_cwnd,
            p.initial_ssthresh,
            p.window,
            p.max_cwnd,
            p.syn,
        ))
    }

    /// Congestion window, packets.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        match self {
            Cc::Aimd(a) => a.cwnd,
        }
    }

    /// Slow-start threshold, packets.
    #[inline]
    pub fn ssthresh(&self) -> i64 {
        match self {
            Cc::Aimd(a) => a.ssthresh,
        }
    }

    /// An ack acknowledged `acked` new packets; `rtt_s` is its RTT sample,
    /// if Karn's rule allowed one.
    #[inline]
    pub fn on_ack(&mut self, acked: i64, rtt_s: Option<f64>) {
        let _ = (acked, rtt_s); // TCP(α, β) in ns-2 grows per ack, not per byte
        match self {
            Cc::Aimd(a) => a.open(),
        }
    }

    /// Loss recovery detected a loss. `window`: the window in use when it
    /// did (ns-2 `windowd()`); `to_one`: restart from one packet (Tahoe);
    /// `after_timeout`: the last window change was a timeout.
    pub fn on_congestion_event(&mut self, window: f64, to_one: bool, after_timeout: bool) {
        let how = if to_one {
            Reduction::ToOne
        } else {
            Reduction::Multiplicative
        };
        match self {
            Cc::Aimd(a) => a.reduce(how, window, after_timeout),
        }
    }

    /// The retransmission timer expired. `outstanding`: data was in flight
    /// (otherwise it is an idle restart: cwnd ← 1, ssthresh kept).
    pub fn on_rto(&mut self, window: f64, outstanding: bool, after_timeout: bool) {
        let how = if outstanding {
            Reduction::Timeout
        } else {
            Reduction::Restart
        };
        match self {
            Cc::Aimd(a) => a.reduce(how, window, after_timeout),
        }
    }

    /// An ack echoed a congestion mark (RFC 3168 §6.1.2: "the TCP source
    /// halves the congestion window "cwnd" and reduces the slow start
    /// threshold "ssthresh""), once per window; nothing is retransmitted.
    pub fn on_ecn(&mut self, window: f64) {
        match self {
            Cc::Aimd(a) => a.reduce(Reduction::Multiplicative, window, false),
        }
    }

    /// A partial ack took `packets` out of the window (NewReno's deflation).
    pub fn deflate(&mut self, packets: i64) {
        match self {
            Cc::Aimd(a) => {
                a.cwnd -= packets as f64;
                if a.cwnd < 1.0 {
                    a.cwnd = 1.0;
                }
            }
        }
    }

    /// The SYN was acked: start from the initial window (ns-2 `delay_growth_`).
    pub fn on_syn_acked(&mut self) {
        match self {
            Cc::Aimd(a) => a.cwnd = a.wnd_init,
        }
    }

    /// The first packet was lost: do not use the larger initial window
    /// (ns-2 `bugfix_ss_`).
    pub fn on_first_packet_lost(&mut self) {
        match self {
            Cc::Aimd(a) => {
                if a.wnd_init > 1.0 {
                    a.wnd_init = 1.0;
                }
            }
        }
    }
}
