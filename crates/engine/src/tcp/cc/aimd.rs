//! TCP(α, β) congestion control, Reno's included: slow start below
//! ssthresh, then +α packets per RTT (α/cwnd per new ack), and ×β on a loss
//! indication. Plain TCP is α = 1, β = ½. RFC 5681 §3.1:
//!
//! > During slow start, a TCP increments cwnd by at most SMSS bytes for each
//! > ACK received that cumulatively acknowledges new data. [...] During
//! > congestion avoidance, cwnd is incremented by roughly 1 full-sized
//! > segment per round-trip time (RTT).
//!
//! and, on a loss (equation (4)): `ssthresh = max (FlightSize / 2, 2*SMSS)`.
//!
//! ns-2 differs from the RFC, and this follows ns-2 (`opencwnd()`,
//! `slowdown()`), which the papers ran: growth counts acks, not bytes
//! (`wnd_option_` 1: cwnd += 1/cwnd per ack, no byte counting); the reduction
//! is taken from the window in use (cwnd, inflated by Reno's dupwnd, capped
//! by the receiver's window) rather than FlightSize; and the connection's
//! first reduction, a reduction in slow start, and the one after a timeout
//! halve the window whatever β is.
//!
//! It sees events only (an ack, a congestion event, a timeout, an ECN
//! echo), never packets.

use super::Reduction;

#[derive(Clone, Debug)]
pub struct Aimd {
    /// Congestion window, packets.
    pub(super) cwnd: f64,
    /// Slow-start threshold, packets (an integer in ns-2).
    pub(super) ssthresh: i64,
    pub(super) alpha: f64,
    pub(super) beta: f64,
    /// Upper bound on cwnd, 0 = none.
    pub(super) max_cwnd: u32,
    /// Initial window (ns-2 `wnd_init_`; dropped to 1 if the first packet is lost).
    pub(super) wnd_init: f64,
    first_decrease: bool,
}

impl Aimd {
    /// With a SYN, cwnd is 1 until the SYN is acked, then `initial_cwnd`
    /// (ns-2 `set_initial_window()` with `syn_` and `delay_growth_`).
    pub fn new(
        alpha: f64,
        beta: f64,
        initial_cwnd: u32,
        initial_ssthresh: u32,
        wnd: u32,
        max_cwnd: u32,
        syn: bool,
    ) -> Self {
        Aimd {
            cwnd: if syn { 1.0 } else { initial_cwnd as f64 },
            ssthresh: if initial_ssthresh == 0 {
                wnd as i64
            } else {
                initial_ssthresh as i64
            },
            alpha,
            beta,
            max_cwnd,
            wnd_init: initial_cwnd as f64,
            first_decrease: true,
        }
    }

    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh as f64
    }

    /// A new ack arrived: grow the window (ns-2 `opencwnd()`, `wnd_option_` 1).
    #[inline]
    pub fn open(&mut self) {
        // RFC 5681 §3.1: "During slow start, a TCP increments cwnd by at most SMSS bytes for each
        // ACK received that cumulatively acknowledges new data."
        if self.in_slow_start() {
            self.cwnd += 1.0;
        } else {
            self.cwnd += self.alpha / self.cwnd;
        }
        if self.max_cwnd > 0 && self.cwnd as u32 > self.max_cwnd {
            self.cwnd = self.max_cwnd as f64;
        }
    }

    /// Reduce the window. `w` is the window in use (min(cwnd, wnd), inflated
    /// by Reno's dupwnd); `after_timeout` is ns-2's
    /// `last_cwnd_action_ == CWND_ACTION_TIMEOUT`.
    pub fn reduce(&mut self, how: Reduction, w: f64, after_timeout: bool) {
        let slow_start = self.in_slow_start();
        let halfwin = w / 2.0; // ns-2 precisionReduce_ true
        let decreasewin = self.beta * w;
        let halve = self.first_decrease || slow_start;
        match how {
            Reduction::ToOne | Reduction::Multiplicative | Reduction::Timeout => {
                self.ssthresh = if halve || after_timeout {
                    halfwin as i64
                } else {
                    decreasewin as i64
                };
            }
            Reduction::Restart => {}
        }
        match how {
            Reduction::Multiplicative => {
                self.cwnd = if halve || self.beta == 0.5 {
                    halfwin
                } else {
                    decreasewin
                };
            }
            // RFC 5681 §3.1: "Furthermore, upon a timeout (as specified in [RFC2988]) cwnd MUST be
            // set to no more than the loss window, LW, which equals 1 full-sized segment
            // (regardless of the value of IW)."
            Reduction::ToOne | Reduction::Timeout | Reduction::Restart => self.cwnd = 1.0,
        }
        if self.ssthresh < 2 {
            self.ssthresh = 2;
        }
        // ns-2's slowdown() does not round a halved window up: an echoed
        // mark at cwnd ≤ 1 leaves less than one packet (the timer sends next)
        if self.cwnd < 1.0 && how != Reduction::Multiplicative {
            self.cwnd = 1.0;
        }
        self.first_decrease = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_doubles_per_rtt_then_grows_by_alpha() {
        let mut w = Aimd::new(1.0, 0.5, 2, 8, 1000, 0, false);
        // One RTT of acks for a window of 2 → 4, then 4 → 8.
        for _ in 0..6 {
            w.open();
        }
        assert_eq!(w.cwnd, 8.0);
        // Congestion avoidance: a window's worth of acks adds about α.
        for _ in 0..8 {
            w.open();
        }
        assert!((w.cwnd - 8.96).abs() < 0.05, "{}", w.cwnd);
    }

    #[test]
    fn first_reduction_halves_even_for_other_beta() {
        let mut w = Aimd::new(0.31, 0.875, 2, 2, 1000, 0, false);
        w.cwnd = 40.0;
        w.reduce(Reduction::Multiplicative, 40.0, false);
        assert_eq!((w.cwnd, w.ssthresh), (20.0, 20));
        // Later reductions use β.
        w.cwnd = 40.0;
        w.reduce(Reduction::Multiplicative, 40.0, false);
        assert_eq!((w.cwnd, w.ssthresh), (35.0, 35));
    }

    #[test]
    fn timeout_halves_ssthresh_and_restarts() {
        let mut w = Aimd::new(1.0, 0.5, 2, 2, 1000, 0, false);
        w.cwnd = 30.0;
        w.reduce(Reduction::Timeout, 30.0, true);
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 15));
        w.cwnd = 3.0;
        w.reduce(Reduction::Timeout, 3.0, true);
        assert_eq!(w.ssthresh, 2, "ssthresh never goes below 2");
    }

    #[test]
    fn max_cwnd_caps_growth() {
        let mut w = Aimd::new(1.0, 0.5, 2, 1000, 1000, 5, false);
        for _ in 0..10 {
            w.open();
        }
        assert_eq!(w.cwnd, 5.0);
    }
}
