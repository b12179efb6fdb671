//! Linux's window arithmetic, shared by its Reno and CUBIC: the window is a
//! whole number of segments (`snd_cwnd`) with a counter of acked segments
//! toward the next increase (`snd_cwnd_cnt`), and growth counts the
//! segments an ack covers, not the acks (RFC 3465, Appropriate Byte
//! Counting, in segments). From `net/ipv4/tcp_cong.c`:
//!
//! * `tcp_slow_start(tp, acked)`: cwnd ← min(cwnd + acked, ssthresh); the
//!   acked segments left over once ssthresh is reached go on to congestion
//!   avoidance. RFC 3465 §2.2 limits the increase to L = 2 segments per
//!   ack; Linux has no such limit (it was removed in 3.x with the move to
//!   counting packets), and neither does this.
//! * `tcp_cong_avoid_ai(tp, w, acked)`: add `acked` to the counter; each
//!   time it reaches `w`, cwnd grows by one segment. Reno's `w` is cwnd
//!   (one segment per window of acked data, RFC 5681 §3.1); CUBIC's is its
//!   `cnt`.
//! * `tcp_reno_ssthresh`: ssthresh ← max(cwnd / 2, 2) (RFC 5681's
//!   equation (4) with cwnd for FlightSize, as Linux does).
//!
//! Loss recovery stays the flow's variant: entering recovery sets cwnd to
//! ssthresh at once (under SACK, PRR then paces what recovery sends, see
//! `tcp::recovery::sack::Prr`), a timeout sets cwnd to one segment.

use super::Reduction;
use crate::plan::TcpParams;

#[derive(Clone, Debug)]
pub struct LinuxWindow {
    /// `snd_cwnd`, segments.
    pub(super) cwnd: u32,
    /// `snd_cwnd_cnt`: segments acked toward the next increase.
    pub(super) cnt: u32,
    /// `snd_ssthresh`, segments.
    pub(super) ssthresh: u32,
    /// `snd_cwnd_clamp` (the scenario's `max_cwnd`; none by default).
    pub(super) clamp: u32,
    /// The initial window once the SYN is acked.
    pub(super) wnd_init: u32,
    /// The window was cut for a loss no new ack has passed yet: a timeout
    /// now does not cut ssthresh again (`tcp_enter_loss` reduces only when
    /// the state is below Recovery or recovery is over, and once per RTO
    /// episode, not on its backoffs).
    pub(super) reduced: bool,
}

impl LinuxWindow {
    pub fn new(p: &TcpParams) -> Self {
        LinuxWindow {
            cwnd: if p.syn { 1 } else { p.initial_cwnd.max(1) },
            cnt: 0,
            ssthresh: if p.initial_ssthresh == 0 {
                p.window
            } else {
                p.initial_ssthresh
            },
            clamp: if p.max_cwnd == 0 {
                u32::MAX
            } else {
                p.max_cwnd
            },
            wnd_init: p.initial_cwnd.max(1),
            reduced: false,
        }
    }

    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_slow_start`: grow by the segments acked, up to ssthresh; return
    /// the segments left over for congestion avoidance.
    #[inline]
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd);
        self.cwnd = cwnd.min(self.clamp);
        left
    }

    /// `tcp_cong_avoid_ai`: one segment more per `w` segments acked.
    #[inline]
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        // "If credits accumulated at a higher w, apply them gently now."
        if self.cnt >= w {
            self.cnt = 0;
            self.cwnd += 1;
        }
        self.cnt += acked;
        if self.cnt >= w {
            let delta = self.cnt / w;
            self.cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.clamp);
    }

    /// `tcp_reno_cong_avoid` (a bulk sender is always cwnd-limited).
    #[inline]
    pub fn reno_cong_avoid(&mut self, acked: u32) {
        self.reduced = false;
        let mut acked = acked;
        if self.in_slow_start() {
            acked = self.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let w = self.cwnd;
        self.cong_avoid_ai(w, acked);
    }

    /// `tcp_reno_ssthresh`.
    pub fn reno_ssthresh(&self) -> u32 {
        (self.cwnd >> 1).max(2)
    }

    /// ssthresh for a timeout: `new` unless this loss was already cut for.
    pub fn rto_ssthresh(&self, new: u32) -> u32 {
        if self.reduced {
            self.ssthresh
        } else {
            new
        }
    }

    /// Apply a reduction whose new ssthresh is `ssthresh`: fast recovery
    /// ends at cwnd = ssthresh (what PRR converges to), a timeout restarts
    /// from one segment (`tcp_enter_loss`: in flight + 1, all of it lost).
    pub fn reduce(&mut self, how: Reduction, ssthresh: u32) {
        self.reduced = how != Reduction::Restart;
        match how {
            Reduction::Multiplicative => {
                self.ssthresh = ssthresh;
                self.cwnd = ssthresh;
            }
            Reduction::ToOne | Reduction::Timeout => {
                self.ssthresh = ssthresh;
                self.cwnd = 1;
            }
            Reduction::Restart => self.cwnd = 1,
        }
        self.cnt = 0;
    }

    /// NewReno's partial-ack deflation.
    pub fn deflate(&mut self, packets: i64) {
        let p = packets.clamp(0, u32::MAX as i64) as u32;
        self.cwnd = self.cwnd.saturating_sub(p).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Variant;
    use crate::tcp::dialogue::params;

    fn win(cwnd: u32, ssthresh: u32) -> LinuxWindow {
        let mut p = params(Variant::Sack, cwnd, ssthresh);
        p.syn = false;
        LinuxWindow::new(&p)
    }

    /// RFC 3465 §2.1: "cwnd is increased by the number of bytes
    /// acknowledged" — an ack for two segments (a delayed ack) opens the
    /// window by two in slow start, where ns-2's per-ack growth adds one.
    #[test]
    fn slow_start_counts_segments_not_acks() {
        let mut w = win(10, 100);
        w.reno_cong_avoid(2);
        assert_eq!(w.cwnd, 12);
        // crossing ssthresh: the segments left over go to avoidance
        let mut w = win(10, 11);
        w.reno_cong_avoid(3);
        assert_eq!((w.cwnd, w.cnt), (11, 2));
    }

    /// RFC 5681 §3.1: "cwnd is incremented by roughly 1 full-sized segment
    /// per round-trip time" — one window of acked segments (here 20, in
    /// delayed acks of 2) adds exactly one segment.
    #[test]
    fn avoidance_adds_one_segment_per_window_of_acked_segments() {
        let mut w = win(20, 2);
        for _ in 0..9 {
            w.reno_cong_avoid(2);
        }
        assert_eq!((w.cwnd, w.cnt), (20, 18));
        w.reno_cong_avoid(2);
        assert_eq!((w.cwnd, w.cnt), (21, 0));
    }

    #[test]
    fn reno_halves_and_a_timeout_restarts_from_one() {
        let mut w = win(31, 2);
        let ss = w.reno_ssthresh();
        w.reduce(Reduction::Multiplicative, ss);
        assert_eq!((w.cwnd, w.ssthresh), (15, 15));
        let ss = w.reno_ssthresh();
        w.reduce(Reduction::Timeout, ss);
        assert_eq!((w.cwnd, w.ssthresh), (1, 7));
        let w = win(3, 2);
        assert_eq!(w.reno_ssthresh(), 2, "never below 2");
    }
}
