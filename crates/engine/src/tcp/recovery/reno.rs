//! TCP Reno (ns-2 `Agent/TCP/Reno`, RFC 5681 §3.2): on the third duplicate
//! ack, retransmit the first unacked packet, set ssthresh = cwnd = β·W, and
//! inflate the usable window by one packet per further duplicate ack
//! (`dupwnd`) until a new ack ends fast recovery. Several losses in one
//! window usually end in a timeout.

use super::cumulative_ack;
use crate::net::packet::Packet;
use crate::tcp::sender::{CwndAction, TcpSender};
use crate::tcp::window::Reduction;
use crate::time::SimTime;

pub fn on_ack(s: &mut TcpSender, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
    let ack = cumulative_ack(pkt);
    let thresh = s.p.dupack_threshold;
    if ack > s.last_ack {
        if s.last_cwnd_action == CwndAction::Dupack {
            s.last_cwnd_action = CwndAction::Exited;
        }
        s.dupwnd = 0;
        s.recv_newack(ack, now);
    } else if ack == s.last_ack {
        s.dupacks += 1;
        if s.dupacks == thresh {
            dupack_action(s, now, out, s.last_cwnd_action == CwndAction::Dupack);
        } else if s.dupacks > thresh && s.last_cwnd_action == CwndAction::Dupack {
            s.dupwnd += 1; // fast recovery: each dupack means a packet left the network
        } else if s.dupacks < thresh && s.p.limited_transmit {
            s.send_one(now, out);
        }
    }
    if ack >= s.last_ack && (s.dupacks == 0 || s.dupacks > thresh - 1) {
        s.send_much(now, 0, out);
    }
}

/// Enter fast retransmit / fast recovery unless this window already had one
/// (ns-2 `bugFix_`). `allow` lets Reno re-enter while still in recovery.
pub fn dupack_action(s: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>, allow: bool) {
    let recovered = s.highest_ack > s.recover;
    if recovered || !s.p.bug_fix || allow || s.highest_ack == 0 {
        s.recover = s.maxseq;
        s.last_cwnd_action = CwndAction::Dupack;
        s.counters.fast_retransmits += 1;
        s.reduce(Reduction::Multiplicative);
        s.reset_rtx_timer(now, true, false);
        s.output(s.last_ack + 1, now, out);
        s.dupwnd = s.p.dupack_threshold as i64;
    }
}

/// Reno's and NewReno's part of a timeout (ns-2 `RenoTcpAgent::timeout()`).
pub fn timeout_prelude(s: &mut TcpSender) {
    s.dupwnd = 0;
    s.dupacks = 0;
    if s.p.bug_fix {
        s.recover = s.maxseq;
    }
}
