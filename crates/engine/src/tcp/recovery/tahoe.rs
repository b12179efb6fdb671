//! TCP Tahoe (ns-2 `Agent/TCP`): on the third duplicate ack, or a timeout,
//! set ssthresh to half the window, cwnd to 1, and resend go-back-N from the
//! first unacknowledged packet — even packets the receiver already holds.
//! Paper D's triple slow-start depends on exactly this.
//!
//! With ns-2's `bugFix_`, duplicate acks for data sent before the last
//! retransmission (highest ack ≤ `recover`) trigger nothing.

use super::cumulative_ack;
use crate::net::packet::Packet;
use crate::tcp::sender::{CwndAction, TcpSender};
use crate::tcp::window::Reduction;
use crate::time::SimTime;

pub fn on_ack(s: &mut TcpSender, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
    let ack = cumulative_ack(pkt);
    if ack > s.last_ack {
        s.recv_newack(ack, now);
    } else if ack == s.last_ack {
        s.dupacks += 1;
        if s.dupacks == s.p.dupack_threshold {
            dupack_action(s, now);
        } else if s.dupacks < s.p.dupack_threshold && s.p.limited_transmit {
            s.send_one(now, out);
        }
    }
    if ack >= s.last_ack {
        s.send_much(now, 0, out);
    }
}

fn dupack_action(s: &mut TcpSender, now: SimTime) {
    let recovered = s.highest_ack > s.recover;
    if recovered || !s.p.bug_fix || s.highest_ack == 0 {
        s.recover = s.maxseq;
        s.last_cwnd_action = CwndAction::Dupack;
        s.counters.fast_retransmits += 1;
        s.reduce(Reduction::ToOne);
        s.reset_rtx_timer(now, false, false);
    }
}
