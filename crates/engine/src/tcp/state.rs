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

/// The struct, with a getter of the same name for each field: the fields
/// are private, and the sender and loss recovery change them through the
/// methods below, each named for the event it records.
macro_rules! state_with_getters {
    ($(#[$m:meta])* pub struct $s:ident { $($(#[$f:meta])* $name:ident: $ty:ty,)* }) => {
        $(#[$m])*
        pub struct $s {
            $($(#[$f])* $name: $ty,)*
        }

        impl $s {
            $(
                #[inline(always)]
                pub fn $name(&self) -> $ty {
                    self.$name
                }
            )*
        }
    };
}

state_with_getters! {
    /// The sequence space and the facts loss recovery and the connection share.
    pub struct TcpState {
        /// Next packet to send (ns-2 `t_seqno_`).
        t_seqno: i64,
        /// Highest packet sent (ns-2 `maxseq_`).
        maxseq: i64,
        /// Highest cumulative ack (ns-2 `highest_ack_`).
        highest_ack: i64,
        /// Last ack that advanced the window (ns-2 `last_ack_`).
        last_ack: i64,
        /// Highest packet sent when the last recovery began (ns-2 `recover_`).
        recover: i64,
        dupacks: u32,
        /// Reno's window inflation during fast recovery, packets.
        dupwnd: i64,
        last_cwnd_action: CwndAction,
        /// One past the last packet the application has supplied (bulk: unbounded).
        curseq: i64,
        /// Receiver's advertised window, packets (ns-2 `wnd_`; an integer,
        /// set from a `u32`, so `window` compares it without converting a
        /// float, saturating, on every ask).
        wnd: i64,
        /// Duplicate acks that signal a loss (ns-2 `numdupacks_`).
        dupack_threshold: u32,
        /// RFC 3042 limited transmit (ns-2 `singledup_`).
        limited_transmit: bool,
        /// ns-2 `bugFix_`: no second fast retransmit for one window of data.
        bug_fix: bool,
        /// Classic ECN (ns-2 `ecn_`, RFC 3168): a loss soon after an echoed mark
        /// is repaired without a second reduction.
        ecn: bool,
    }
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
            wnd: p.window as i64,
            dupack_threshold: p.dupack_threshold,
            limited_transmit: p.limited_transmit,
            bug_fix: p.bug_fix,
            ecn: p.ecn && p.cc != crate::tcp::cc::Cc::Dctcp,
        }
    }

    /// The sequence space's invariants (debug builds): acks never pass
    /// what was sent, what is sent next lies between the cumulative ack and
    /// one past the highest packet sent, and the window is never deflated
    /// below nothing.
    #[cfg(debug_assertions)]
    pub fn check_invariants(&self) {
        debug_assert!(self.highest_ack >= -1, "highest_ack {}", self.highest_ack);
        debug_assert!(
            self.last_ack <= self.highest_ack,
            "last_ack {} > highest_ack {}",
            self.last_ack,
            self.highest_ack
        );
        // snd_una ≤ snd_nxt
        debug_assert!(
            self.highest_ack <= self.maxseq,
            "highest_ack {} > maxseq {}",
            self.highest_ack,
            self.maxseq
        );
        debug_assert!(
            self.highest_ack < self.t_seqno && self.t_seqno <= self.maxseq + 1,
            "t_seqno {} outside (highest_ack {}, maxseq {} + 1]",
            self.t_seqno,
            self.highest_ack,
            self.maxseq
        );
        debug_assert!(
            self.recover <= self.maxseq.max(0),
            "recover {} > maxseq {}",
            self.recover,
            self.maxseq
        );
        debug_assert!(self.dupwnd >= 0, "dupwnd {}", self.dupwnd);
    }

    /// The usable window for a congestion window `cwnd`, packets (ns-2
    /// `window()`; Reno adds `dupwnd`).
    #[inline]
    pub fn window(&self, cwnd: f64) -> i64 {
        let w = cwnd as i64 + self.dupwnd;
        w.min(self.wnd)
    }

    /// The same as a real number (ns-2 `windowd()`).
    #[inline]
    pub fn windowd(&self, cwnd: f64) -> f64 {
        (cwnd + self.dupwnd as f64).min(self.wnd as f64)
    }

    /// An ack advanced the window: the sequence-space half of ns-2
    /// `newack()` (the timer and RTT half is the connection's).
    #[inline]
    pub fn advance(&mut self, ack: i64) {
        self.dupacks = 0;
        self.partial_ack(ack);
    }

    /// NewReno's partial ack: the window advances to `ack` as for a new
    /// ack, but the duplicate acks still count (recovery goes on).
    #[inline]
    pub fn partial_ack(&mut self, ack: i64) {
        self.last_ack = ack;
        self.highest_ack = ack;
        self.skip_past(ack);
    }

    /// SACK's partial ack in recovery: the cumulative ack moves, `last_ack`
    /// stays where recovery began (ns-2's `Sack1TcpAgent`).
    #[inline]
    pub fn sack_partial_ack(&mut self, ack: i64) {
        self.highest_ack = ack;
    }

    /// Another duplicate ack; returns how many in a row.
    #[inline]
    pub fn count_dupack(&mut self) -> u32 {
        self.dupacks += 1;
        self.dupacks
    }

    /// Forget the duplicate acks (a timeout).
    #[inline]
    pub fn clear_dupacks(&mut self) {
        self.dupacks = 0;
    }

    /// Reno's fast recovery begins: the window is inflated by the packets the
    /// duplicate acks say have left the network.
    #[inline]
    pub fn begin_inflation(&mut self) {
        self.dupwnd = self.dupack_threshold as i64;
    }

    /// One more duplicate ack in fast recovery: one more packet has left.
    #[inline]
    pub fn inflate(&mut self) {
        self.dupwnd += 1;
    }

    /// Fast recovery is over (or a timeout): no inflation.
    #[inline]
    pub fn end_inflation(&mut self) {
        self.dupwnd = 0;
    }

    /// NewReno's partial ack of `acked` packets takes them out of the
    /// inflation, adding back the one the ack lets out; what the inflation
    /// cannot cover is returned, for the congestion window to give up
    /// (RFC 6582 §3.2 step 3's deflation).
    #[inline]
    pub fn deflate(&mut self, acked: i64) -> Option<i64> {
        if self.dupwnd > acked {
            self.dupwnd -= acked - 1;
            None
        } else {
            let rest = acked - self.dupwnd;
            self.dupwnd = 1;
            Some(rest)
        }
    }

    /// This window's recovery point is the highest packet sent (ns-2
    /// `recover_ = maxseq_`).
    #[inline]
    pub fn mark_recover(&mut self) {
        self.recover = self.maxseq;
    }

    /// SACK recovery is over: no recovery point.
    #[inline]
    pub fn clear_recover(&mut self) {
        self.recover = 0;
    }

    /// Record what last changed the window.
    #[inline]
    pub fn note_cwnd_action(&mut self, a: CwndAction) {
        self.last_cwnd_action = a;
    }

    /// After a timeout, duplicate acks count from the cumulative ack that
    /// partial acks reached (ns-2 `Sack1TcpAgent::timeout()`).
    #[inline]
    pub fn catch_up_last_ack(&mut self) {
        if self.highest_ack > self.last_ack {
            self.last_ack = self.highest_ack;
        }
    }

    /// Packet `t_seqno` left as new data: the next one is next.
    #[inline]
    pub fn sent_next(&mut self) {
        self.t_seqno += 1;
    }

    /// Packet `seq` left: what is sent next lies beyond it.
    #[inline]
    pub fn skip_past(&mut self, seq: i64) {
        if self.t_seqno < seq + 1 {
            self.t_seqno = seq + 1;
        }
    }

    /// Go-back-N: resend from the first unacked packet.
    #[inline]
    pub fn go_back_n(&mut self) {
        self.t_seqno = self.highest_ack + 1;
    }

    /// Packet `seqno` left; true if it is new (beyond `maxseq`, which moves).
    #[inline]
    pub fn note_output(&mut self, seqno: i64) -> bool {
        if seqno > self.maxseq {
            self.maxseq = seqno;
            true
        } else {
            false
        }
    }

    /// The application supplies `n` more packets.
    #[inline]
    pub fn supply(&mut self, n: i64) {
        self.curseq += n;
    }

    /// The application's data ends at `curseq` (a bulk transfer: never,
    /// [`crate::tcp::sender::BULK`]; a writer: where it has written to).
    #[inline]
    pub fn supply_to(&mut self, curseq: i64) {
        self.curseq = curseq;
    }

    /// The application stops: nothing beyond what was sent is new data.
    #[inline]
    pub fn close(&mut self) {
        self.curseq = self.t_seqno.max(self.maxseq + 1);
    }
}
