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
pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod linux;

use crate::plan::{Profile, TcpParams};
use crate::time::SimTime;

/// Which congestion control a flow group runs (defined with the Plan's types).
pub use crate::plan::Cc;

/// What an ack tells congestion control: the time, the packets it newly
/// acknowledged, the RTT sample Karn's rule allows (ns-2: one timed packet
/// per RTT) and, for controllers that want one per ack as Linux takes them,
/// the RTT of the newest packet it acknowledged; and where the sequence
/// space is (Linux's HyStart ends its rounds at `snd_nxt`).
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    pub now: SimTime,
    pub acked: i64,
    pub rtt_s: Option<f64>,
    /// RTT of the newest packet this ack covers, if it was sent once, ns
    /// (with a rate sampler, BBR's: of the highest packet it newly SACKed
    /// that was sent once, if any — Linux's `ca_rtt_us`).
    pub ack_rtt_ns: Option<SimTime>,
    /// Highest packet cumulatively acked (`snd_una` − 1).
    pub highest_ack: i64,
    /// Next new packet to send (`snd_nxt`).
    pub next_seq: i64,
    /// Packets in the network: sent and not cumulatively acked; after a
    /// timeout, in Linux's loss state (`profile = "linux"`) the pipe —
    /// neither SACKed nor marked lost, as `tcp_packets_in_flight` — and
    /// under ns-2's go-back-N what was resent since.
    pub in_flight: i64,
    /// A delivery-rate sample (`tcp_rate.c`), for controllers that take them.
    pub rate: Option<crate::tcp::rate::RateSample>,
    /// The ack echoes a congestion mark (ECE).
    pub ece: bool,
    /// Loss recovery lets the window grow on this ack (not in recovery).
    pub grow: bool,
}

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

/// The running controller of one connection.
pub enum Controller {
    /// TCP(α, β); Reno is (1, ½) (ns-2's `opencwnd()`/`slowdown()`).
    Aimd(aimd::Aimd),
    /// Linux's Reno: `tcp_reno_cong_avoid`, `tcp_reno_ssthresh`.
    LinuxReno(linux::LinuxWindow),
    Cubic(Box<cubic::Cubic>),
    Bbr(Box<bbr::Bbr>),
    Dctcp(Box<dctcp::Dctcp>),
}

impl Controller {
    pub fn new(p: &TcpParams) -> Self {
        match (p.cc, p.profile) {
            (Cc::Reno, Profile::Linux) => Controller::LinuxReno(linux::LinuxWindow::new(p)),
            (Cc::Reno, _) => Controller::Aimd(aimd::Aimd::new(
                p.alpha,
                p.beta,
                p.initial_cwnd,
                p.initial_ssthresh,
                p.window,
                p.max_cwnd,
                p.syn,
            )),
            (Cc::Cubic, _) => Controller::Cubic(Box::new(cubic::Cubic::new(p))),
            (Cc::Bbr, _) => Controller::Bbr(Box::new(bbr::Bbr::new(p))),
            (Cc::Dctcp, profile) => {
                let reno = Controller::new(&TcpParams {
                    cc: Cc::Reno,
                    profile,
                    ..*p
                });
                Controller::Dctcp(Box::new(dctcp::Dctcp::new(reno)))
            }
        }
    }

    /// The controller sees every ack that acknowledges new data, in loss
    /// recovery too (BBR's model, DCTCP's marked fraction).
    pub fn sees_every_ack(&self) -> bool {
        matches!(self, Controller::Bbr(_) | Controller::Dctcp(_))
    }

    /// The controller wants an RTT sample on every ack (`AckEvent::ack_rtt_ns`).
    pub fn wants_ack_rtt(&self) -> bool {
        match self {
            Controller::Cubic(_) | Controller::Bbr(_) => true,
            Controller::Dctcp(d) => d.reno.wants_ack_rtt(),
            _ => false,
        }
    }

    /// Set the window after an ECN reaction: cwnd and ssthresh, packets.
    pub fn set_window(&mut self, cwnd: f64, ssthresh: f64) {
        match self {
            Controller::Aimd(a) => {
                a.cwnd = cwnd;
                a.ssthresh = ssthresh as i64;
            }
            Controller::LinuxReno(w) => {
                w.cwnd = cwnd as u32;
                w.ssthresh = ssthresh as u32;
            }
            Controller::Cubic(c) => {
                c.w.cwnd = cwnd as u32;
                c.w.ssthresh = ssthresh as u32;
            }
            Controller::Bbr(_) => {}
            Controller::Dctcp(d) => d.reno.set_window(cwnd, ssthresh),
        }
    }

    /// The rate the pacer sends at, bits/s; 0: no pacing.
    #[inline]
    pub fn pacing_rate_bps(&self) -> f64 {
        match self {
            Controller::Bbr(b) => b.pacing_bps,
            _ => 0.0,
        }
    }

    /// Congestion window, packets.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        match self {
            Controller::Aimd(a) => a.cwnd,
            Controller::LinuxReno(w) => w.cwnd as f64,
            Controller::Cubic(c) => c.w.cwnd as f64,
            Controller::Bbr(b) => b.cwnd as f64,
            Controller::Dctcp(d) => d.reno.cwnd(),
        }
    }

    /// Slow-start threshold, packets.
    #[inline]
    pub fn ssthresh(&self) -> i64 {
        match self {
            Controller::Aimd(a) => a.ssthresh,
            Controller::LinuxReno(w) => w.ssthresh as i64,
            Controller::Cubic(c) => c.w.ssthresh as i64,
            // "BBR does not use ssthresh" (TCP_INFINITE_SSTHRESH)
            Controller::Bbr(_) => 0x7fff_ffff,
            Controller::Dctcp(d) => d.reno.ssthresh(),
        }
    }

    /// An ack acknowledged new data.
    #[inline]
    pub fn on_ack(&mut self, ev: &AckEvent) {
        match self {
            // TCP(α, β) in ns-2 grows per ack, not per packet acked
            Controller::Aimd(a) => a.open(),
            Controller::LinuxReno(w) => w.reno_cong_avoid(ev.acked.max(0) as u32),
            Controller::Cubic(c) => c.on_ack(ev),
            Controller::Bbr(b) => b.on_ack(ev),
            Controller::Dctcp(d) => d.on_ack(ev),
        }
    }

    /// [`Controller::on_ack`] for a sender without per-packet hooks (ns-2's
    /// families, and Linux Reno and DCTCP without them), building the event
    /// only for a controller that reads it: TCP(α, β) grows per ack and reads
    /// nothing, so its hot path skips the event (the same dispatch, one arm
    /// taken before the event exists).
    #[inline]
    pub fn on_ack_with(&mut self, ev: impl FnOnce() -> AckEvent) {
        match self {
            Controller::Aimd(a) => a.open(),
            cc => cc.on_ack(&ev()),
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
            Controller::Aimd(a) => a.reduce(how, window, after_timeout),
            Controller::LinuxReno(w) => w.reduce(how, w.reno_ssthresh()),
            Controller::Cubic(c) => c.on_congestion_event(how),
            Controller::Bbr(b) => b.on_congestion_event(),
            // a loss: Reno's reaction (RFC 8257 §3.3)
            Controller::Dctcp(d) => d.reno.on_congestion_event(window, to_one, after_timeout),
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
            Controller::Aimd(a) => a.reduce(how, window, after_timeout),
            Controller::LinuxReno(w) => {
                let ss = w.rto_ssthresh(w.reno_ssthresh());
                w.reduce(how, ss);
            }
            Controller::Cubic(c) => c.on_rto(how),
            Controller::Bbr(b) => {
                if outstanding {
                    b.on_rto()
                }
            }
            Controller::Dctcp(d) => d.reno.on_rto(window, outstanding, after_timeout),
        }
    }

    /// An ack echoed a congestion mark (RFC 3168 §6.1.2: "the TCP source
    /// halves the congestion window "cwnd" and reduces the slow start
    /// threshold "ssthresh""), once per window; nothing is retransmitted.
    pub fn on_ecn(&mut self, window: f64) {
        match self {
            Controller::Aimd(a) => a.reduce(Reduction::Multiplicative, window, false),
            Controller::LinuxReno(w) => w.reduce(Reduction::Multiplicative, w.reno_ssthresh()),
            Controller::Cubic(c) => c.on_congestion_event(Reduction::Multiplicative),
            // BBRv1 does not react to ECN
            Controller::Bbr(_) => {}
            // DCTCP reacts in `on_ack`, by the marked fraction
            Controller::Dctcp(_) => {}
        }
    }

    /// A partial ack took `packets` out of the window (NewReno's deflation).
    pub fn deflate(&mut self, packets: i64) {
        match self {
            Controller::Aimd(a) => {
                a.cwnd -= packets as f64;
                if a.cwnd < 1.0 {
                    a.cwnd = 1.0;
                }
            }
            Controller::LinuxReno(w) => w.deflate(packets),
            Controller::Cubic(c) => c.w.deflate(packets),
            Controller::Bbr(_) => {}
            Controller::Dctcp(d) => d.reno.deflate(packets),
        }
    }

    /// The SYN was acked: start from the initial window (ns-2 `delay_growth_`).
    pub fn on_syn_acked(&mut self) {
        match self {
            Controller::Aimd(a) => a.cwnd = a.wnd_init,
            Controller::LinuxReno(w) => w.cwnd = w.wnd_init,
            Controller::Cubic(c) => c.w.cwnd = c.w.wnd_init,
            Controller::Bbr(b) => b.cwnd = b.wnd_init,
            Controller::Dctcp(d) => d.reno.on_syn_acked(),
        }
    }

    /// The first packet was lost: do not use the larger initial window
    /// (ns-2 `bugfix_ss_`).
    pub fn on_first_packet_lost(&mut self) {
        match self {
            Controller::Aimd(a) => {
                if a.wnd_init > 1.0 {
                    a.wnd_init = 1.0;
                }
            }
            // RFC 6928 §2: "if the SYN or SYN/ACK is lost, the initial
            // window used by a sender after a correctly transmitted SYN MUST
            // be one segment"
            Controller::LinuxReno(w) => w.wnd_init = 1,
            Controller::Cubic(c) => c.w.wnd_init = 1,
            Controller::Bbr(b) => b.wnd_init = 1,
            Controller::Dctcp(d) => d.reno.on_first_packet_lost(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Cc, Controller};
    use crate::plan::Variant;
    use crate::tcp::dialogue::{params, Dialogue};
    use crate::tcp::profiles::Profile;

    fn cubic_linux() -> Dialogue {
        let mut p = params(Variant::Sack, 10, 40);
        p.cc = Cc::Cubic;
        p.profile = Profile::Linux;
        Dialogue::with(p)
    }

    fn delay_min_us(d: &Dialogue) -> u32 {
        match &d.s.cc() {
            Controller::Cubic(c) => c.delay_min,
            _ => unreachable!(),
        }
    }

    /// A delayed ack for two segments opens a Linux window by two (RFC 3465
    /// §2.1, "increased by the number of bytes acknowledged"): 10 → 12, so
    /// the two freed slots and two more go out. ns-2's agents grow by one
    /// per ack whatever it covers: 10 → 11.
    #[test]
    fn a_linux_window_grows_by_the_segments_an_ack_covers() {
        let mut d = cubic_linux();
        d.sent(&(0..10).collect::<Vec<_>>());
        d.ack(100, 1).sent(&[10, 11, 12, 13]).window(12.0, 40);
        d.ack(150, 3).sent(&[14, 15, 16, 17]).window(14.0, 40);
        let mut d = Dialogue::start(Variant::Sack, 10, 40);
        d.sent(&(0..10).collect::<Vec<_>>());
        d.ack(100, 1).sent(&[10, 11, 12]).window(11.0, 40);
    }

    /// CUBIC takes an RTT from every ack, as Linux does: the newest packet
    /// it covers, sent once. Packet 1 left at 0 and is acked at 100 ms;
    /// packet 3 (also sent at 0) at 150 ms does not lower the minimum;
    /// packet 11, sent at 100 ms and acked at 160 ms, does: 60 ms.
    #[test]
    fn cubic_samples_the_rtt_of_every_ack() {
        let mut d = cubic_linux();
        d.sent(&(0..10).collect::<Vec<_>>());
        d.ack(100, 1).sent(&[10, 11, 12, 13]);
        assert_eq!(delay_min_us(&d), 100_000);
        d.ack(150, 3).sent(&[14, 15, 16, 17]);
        assert_eq!(delay_min_us(&d), 100_000);
        // 4..11 acked: 8 segments, cwnd 14 → 22, packets up to 11 + 22 = 33 go out
        d.ack(160, 11)
            .sent(&(18..34).collect::<Vec<_>>())
            .window(22.0, 40);
        assert_eq!(delay_min_us(&d), 60_000);
    }
}
