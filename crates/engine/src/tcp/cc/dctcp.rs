//! DCTCP: Data Center TCP, as RFC 8257 ("Data Center TCP (DCTCP): TCP
//! Congestion Control for Data Centers", Bensley et al., October 2017)
//! specifies it and Linux's `tcp_dctcp.c` runs it.
//!
//! RFC 8257 §3.3, the sender:
//!
//! > "the sender maintains an estimate of the fraction of bytes marked,
//! > DCTCP.Alpha ... updated once per window of data"; "DCTCP.Alpha =
//! > DCTCP.Alpha * (1 - g) + g * M" where M is the fraction of bytes acked
//! > with ECE over the window and g = 1/16 (§4.2: "g = 1/16");
//! > "when the sender receives an ACK with ECE set ... cwnd = cwnd * (1 -
//! > DCTCP.Alpha / 2)", at most once per window (RFC 3168's CWR).
//!
//! Losses are handled as Reno handles them (§3.3: "DCTCP ... should
//! respond to loss as a standard TCP would"); the window grows as Reno's.
//! Counts are in packets (every data packet is full size here), which is
//! what the RFC's bytes become. As Linux (`dctcp_alpha_on_init` 1024 of
//! 1024), α starts at 1: the first marks halve the window. The reduced
//! window is at least 2 packets (`dctcp_ssthresh`), and the window does not
//! grow until the data sent before the reduction is acknowledged (the CWR
//! state of RFC 3168 §6.1.2).

use super::{AckEvent, Controller};

/// RFC 8257 §4.2: the estimation gain.
pub const G: f64 = 1.0 / 16.0;

pub struct Dctcp {
    /// The Reno window underneath (ns-2's or Linux's, by profile).
    pub(super) reno: Controller,
    /// The estimate of the fraction of marked packets.
    pub(super) alpha: f64,
    /// Packets acked, and of them acked with ECE, in this observation window.
    acked: i64,
    marked: i64,
    /// The observation window ends when an ack covers this packet (the next
    /// sequence number when it began: `DCTCP.WindowEnd` = `SND.NXT`).
    window_end: i64,
    /// No second reduction, and no growth, until an ack covers this packet.
    cwr_end: i64,
}

impl Dctcp {
    pub fn new(reno: Controller) -> Dctcp {
        Dctcp {
            reno,
            alpha: 1.0,
            acked: 0,
            marked: 0,
            window_end: 0,
            cwr_end: 0,
        }
    }

    /// An ack that acknowledges new data (in loss recovery too).
    pub fn on_ack(&mut self, ev: &AckEvent) {
        let n = ev.acked.max(0);
        self.acked += n;
        if ev.ece {
            self.marked += n;
        }
        if ev.highest_ack >= self.window_end {
            if self.acked > 0 {
                let m = self.marked as f64 / self.acked as f64;
                self.alpha = self.alpha * (1.0 - G) + G * m;
            }
            self.acked = 0;
            self.marked = 0;
            self.window_end = ev.next_seq;
        }
        if ev.ece && ev.highest_ack >= self.cwr_end {
            let w = self.reno.cwnd();
            let cut = (w * (1.0 - self.alpha / 2.0)).max(2.0);
            self.reno.set_window(cut, cut);
            self.cwr_end = ev.next_seq;
        } else if ev.grow && ev.highest_ack >= self.cwr_end {
            self.reno.on_ack(ev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::G;
    use crate::plan::Variant;
    use crate::tcp::cc::{Cc, Controller};
    use crate::tcp::dialogue::{params, Dialogue};

    fn alpha(d: &Dialogue) -> f64 {
        match &d.s.cc() {
            Controller::Dctcp(x) => x.alpha,
            _ => unreachable!(),
        }
    }

    fn dctcp() -> Dialogue {
        let mut p = params(Variant::Reno, 10, 40);
        p.cc = Cc::Dctcp;
        p.ecn = true;
        Dialogue::with(p)
    }

    /// RFC 8257 §3.3: α = α·(1 − g) + g·M once per window of data, M the
    /// fraction acked with ECE; on ECE, cwnd = cwnd·(1 − α/2), once per
    /// window. α starts at 1 (Linux), so the first mark halves the window.
    #[test]
    fn alpha_follows_the_marked_fraction_and_cuts_the_window_by_half_of_it() {
        let mut d = dctcp();
        d.ecn_bits(&[crate::net::packet::ECT; 10])
            .sent(&(0..10).collect::<Vec<_>>());
        // the first ack ends the first observation window (nothing marked):
        // α = 1·(1 − g) + g·0; Reno grows 10 → 11 (ns-2 profile: per ack)
        d.ack(100, 0)
            .ecn_bits(&[crate::net::packet::ECT; 2])
            .sent(&[10, 11])
            .window(11.0, 40);
        assert!((alpha(&d) - (1.0 - G)).abs() < 1e-12);
        // a marked ack: cwnd = 11·(1 − α/2), ssthresh the same, nothing resent
        let a = alpha(&d);
        d.ack_ece(110, 1);
        let cut = 11.0 * (1.0 - a / 2.0);
        d.window(cut, cut as i64).sent(&[]);
        // a second mark in the same window of data: no second cut, no growth
        d.ack_ece(120, 2).window(cut, cut as i64).sent(&[]);
        // unmarked acks in that window do not grow it either (CWR)
        d.ack(130, 3).window(cut, cut as i64);
        assert!(d.s.cwnd() < 11.0);
    }

    /// The observation window: the acks up to the packet that was next when
    /// it began; 2 marked of 4 acked packets move α by g·(1/2 − α).
    #[test]
    fn alpha_is_updated_once_per_window_with_the_fraction_marked() {
        let mut d = dctcp();
        d.sent(&(0..10).collect::<Vec<_>>());
        d.ack(100, 0).sent(&[10, 11]); // window ends; next window ends at 12
        let a0 = alpha(&d);
        // acks for 1..=11 in steps: 2 packets marked of 11 acked
        d.ack_ece(110, 2);
        d.out_clear();
        d.ack(120, 6);
        d.out_clear();
        d.ack(130, 11);
        d.out_clear();
        // packets 1..11 acked: 11, of which 2 with ECE (the ack covering 1, 2)
        let m = 2.0 / 11.0;
        assert!(
            (alpha(&d) - (a0 * (1.0 - G) + G * m)).abs() < 1e-12,
            "{}",
            alpha(&d)
        );
    }
}
