//! TCP NewReno (ns-2 `Agent/TCP/Newreno`, RFC 6582): like Reno, but an ack
//! that advances yet does not cover `recover` (a partial ack) retransmits the
//! next hole at once and keeps the sender in fast recovery, deflating the
//! window by the amount acked (ns-2 `partial_window_deflation_` 1). Only the
//! first partial ack re-arms the timer (ns-2 `newreno_changes1_` 1).

use super::cumulative_ack;
use super::Recovery;
use crate::net::packet::Packet;
use crate::tcp::sender::{CwndAction, TcpSender};
use crate::time::SimTime;

#[derive(Default)]
pub struct State {
    firstpartial: bool,
}

fn state(s: &mut TcpSender) -> &mut State {
    match &mut s.rec {
        Recovery::NewReno(st) => st,
        _ => unreachable!("newreno state on a newreno sender"),
    }
}

pub fn on_ack(s: &mut TcpSender, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
    let ack = cumulative_ack(pkt);
    let thresh = s.p.dupack_threshold;
    if ack > s.last_ack {
        if ack >= s.recover || s.last_cwnd_action != CwndAction::Dupack {
            if s.dupwnd > 0 {
                s.dupwnd = 0;
                if s.last_cwnd_action == CwndAction::Dupack {
                    s.last_cwnd_action = CwndAction::Exited;
                }
            }
            state(s).firstpartial = false;
            s.recv_newack(ack, now);
        } else {
            partial_ack(s, ack, now, out);
        }
    } else if ack == s.last_ack {
        s.dupacks += 1;
        if s.dupacks == thresh {
            // NewReno never re-enters while in recovery (allow_fast_retransmit 0).
            super::reno::dupack_action(s, now, out, false);
        } else if s.dupacks > thresh && s.last_cwnd_action == CwndAction::Dupack {
            s.dupwnd += 1;
        } else if s.dupacks < thresh && s.p.limited_transmit {
            s.send_one(now, out);
        }
    }
    if ack >= s.last_ack {
        if s.dupacks == 0 {
            s.send_much(now, 0, out);
        } else if s.dupacks > thresh - 1 {
            s.send_much(now, 2, out);
        }
    }
}

/// A partial ack: deflate, retransmit the next hole, stay in recovery.
fn partial_ack(s: &mut TcpSender, ack: i64, now: SimTime, out: &mut Vec<Packet>) {
    if !state(s).firstpartial {
        state(s).firstpartial = true;
        s.newtimer(ack, now);
    }
    let deflate = ack - s.last_ack;
    if s.dupwnd > deflate {
        s.dupwnd -= deflate - 1;
    } else {
        s.w.cwnd -= (deflate - s.dupwnd) as f64;
        s.dupwnd = 1;
    }
    if s.w.cwnd < 1.0 {
        s.w.cwnd = 1.0;
    }
    s.last_ack = ack;
    s.highest_ack = ack;
    if s.t_seqno < ack + 1 {
        s.t_seqno = ack + 1;
    }
    if s.rtt.active && ack >= s.rtt.timed_seq {
        s.rtt.active = false;
        s.rtt.reset_backoff();
    }
    s.output(ack + 1, now, out);
}
