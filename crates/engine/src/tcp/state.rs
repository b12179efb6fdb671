//! The small state every part of a TCP connection reads: the sequence space
//! (ns-2's one-way TCP counts packets; `highest_ack` is the highest packet
//! acknowledged cumulatively, −1 before any ack) and the few facts loss
//! recovery and the connection share. Congestion control never sees it.

use crate::plan::TcpParams;

/// The last thing that changed the window (ns-2 `last_cwnd_action_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndAction {
    None,
    Timeout,
    Dupack,
    Exited,
    /// An echoed congestion mark halved the window (ns-2 `CWND_ACTION_ECN`).
    Ecn,
}

pub struct TcpState {
    /// Next packet to send (ns-2 `t_seqno_`).
    pub t_seqno: i64,
    /// Highest packet sent (ns-2 `maxseq_`).
    pub maxseq: i64,
    /// Highest cumulative ack (ns-2 `highest_ack_`).
    pub highest_ack: i64,
    /// Last ack that advanced the window (ns-2 `last_ack_`).
    pub last_ack: i64,
    /// Highest packet sent when the last recovery began (ns-2 `recover_`).
    pub recover: i64,
    pub dupacks: u32,
    /// Reno's window inflation during fast recovery, packets.
    pub dupwnd: i64,
    pub last_cwnd_action: CwndAction,
    /// One past the last packet the application has supplied (bulk: unbounded).
    pub curseq: i64,
    /// The sender has been started and not stopped.
    pub active: bool,
    /// Receiver's advertised window, packets (ns-2 `wnd_`).
    pub wnd: f64,
    /// Duplicate acks that signal a loss (ns-2 `numdupacks_`).
    pub dupack_threshold: u32,
    /// RFC 3042 limited transmit (ns-2 `singledup_`).
    pub limited_transmit: bool,
    /// ns-2 `bugFix_`: no second fast retransmit for one window of data.
    pub bug_fix: bool,
    /// Classic ECN (ns-2 `ecn_`, RFC 3168): a loss soon after an echoed mark
    /// is repaired without a second reduction.
    pub ecn: bool,
}

impl TcpState {
    pub fn new(p: &TcpParams) -> Self {
        TcpState {
            t_seqno: 0,
            maxseq: -1,
            highest_ack: -1,
            last_ack: -1,
            recover: 0,
            dupacks: 0,
            dupwnd: 0,
            last_cwnd_action: CwndAction::None,
            curseq: 0,
            active: false,
            wnd: p.window as f64,
            dupack_threshold: p.dupack_threshold,
            limited_transmit: p.limited_transmit,
            bug_fix: p.bug_fix,
            ecn: p.ecn && p.cc != crate::tcp::cc::Cc::Dctcp,
        }
    }

    /// The usable window for a congestion window `cwnd`, packets (ns-2
    /// `window()`; Reno adds `dupwnd`).
    #[inline]
    pub fn window(&self, cwnd: f64) -> i64 {
        let w = cwnd as i64 + self.dupwnd;
        w.min(self.wnd as i64)
    }

    /// The same as a real number (ns-2 `windowd()`).
    #[inline]
    pub fn windowd(&self, cwnd: f64) -> f64 {
        (cwnd + self.dupwnd as f64).min(self.wnd)
    }

    /// An ack advanced the window: the sequence-space half of ns-2
    /// `newack()` (the timer and RTT half is the connection's).
    #[inline]
    pub fn advance(&mut self, ack: i64) {
        self.dupacks = 0;
        self.last_ack = ack;
        self.highest_ack = ack;
        if self.t_seqno < ack + 1 {
            self.t_seqno = ack + 1;
        }
    }
}
