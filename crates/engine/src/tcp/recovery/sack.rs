//! TCP SACK (ns-2 `Agent/TCP/Sack1` with the `Agent/TCPSink/Sack1` receiver;
//! RFC 2018 blocks, recovery in the spirit of RFC 6675). A scoreboard records
//! which packets above the cumulative ack the receiver holds. Fast recovery
//! starts on the third duplicate ack that brings new SACK information; it
//! estimates the packets in the network (`pipe`), sends while pipe < cwnd —
//! first the holes below the highest SACKed packet, then new data — and
//! ends when an ack covers everything sent before it began (`recover`).

use super::cumulative_ack;
use super::Recovery;
use crate::net::packet::{Packet, SackBlock};
use crate::tcp::sender::{CwndAction, TcpSender};
use crate::tcp::window::Reduction;
use crate::time::SimTime;
use std::collections::VecDeque;

/// Which packets above the cumulative ack the receiver has reported (ns-2 `ScoreBoardRQ`).
#[derive(Default)]
pub struct Scoreboard {
    /// First packet not cumulatively acked (ns-2 `sack_min`).
    base: i64,
    /// `sacked[i]`: packet `base + i` is held by the receiver.
    sacked: VecDeque<bool>,
    total: usize,
    /// Retransmission pointer: holes below it have been resent (ns-2 `h_seqno_`).
    next_retran: i64,
    /// The last update changed what is known.
    pub changed: bool,
}

impl Scoreboard {
    pub fn clear(&mut self) {
        self.sacked.clear();
        self.total = 0;
    }

    /// Record a duplicate ack's cumulative ack and SACK blocks.
    pub fn update(&mut self, last_ack: i64, blocks: &[SackBlock]) {
        let old_total = self.total;
        self.changed = false;
        if self.base <= last_ack {
            let shift = (last_ack + 1 - self.base) as usize;
            if self.total > 0 {
                self.changed = true;
            }
            for _ in 0..shift.min(self.sacked.len()) {
                if self.sacked.pop_front() == Some(true) {
                    self.total -= 1;
                }
            }
            if shift > self.sacked.len() {
                self.sacked.clear();
                self.total = 0;
            }
            self.base = last_ack + 1;
        }
        for b in blocks {
            let lo = (b.start as i64).max(self.base);
            let hi = b.end as i64;
            for seq in lo..hi {
                let i = (seq - self.base) as usize;
                if i >= self.sacked.len() {
                    self.sacked.resize(i + 1, false);
                }
                if !self.sacked[i] {
                    self.sacked[i] = true;
                    self.total += 1;
                }
            }
        }
        self.changed = self.changed || old_total != self.total;
    }

    /// The next hole to retransmit: not SACKed, not yet resent, with SACKed data above it.
    pub fn next_retran(&mut self) -> Option<i64> {
        if self.next_retran < self.base {
            self.next_retran = self.base;
        }
        let start = (self.next_retran - self.base) as usize;
        let hole = (start..self.sacked.len()).find(|&i| !self.sacked[i])?;
        // sacked never ends with `false` after an update, so a hole has SACKed data above it
        let seq = self.base + hole as i64;
        self.next_retran = self.next_retran.max(seq);
        Some(seq)
    }

    pub fn mark_retran(&mut self, seq: i64) {
        if seq >= self.next_retran {
            self.next_retran = seq + 1;
        }
    }
}

#[derive(Default)]
pub struct State {
    pub fastrecov: bool,
    /// Estimated packets in the network during fast recovery.
    pub pipe: i64,
    /// Set by a timeout until the next new ack (ns-2 `timeout_`).
    pub after_timeout: bool,
    pub scb: Scoreboard,
}

fn st(s: &mut TcpSender) -> &mut State {
    match &mut s.rec {
        Recovery::Sack(st) => st,
        _ => unreachable!("sack state on a sack sender"),
    }
}

pub fn on_ack(
    s: &mut TcpSender,
    pkt: &Packet,
    blocks: &[SackBlock],
    now: SimTime,
    out: &mut Vec<Packet>,
) {
    let ack = cumulative_ack(pkt);
    let valid = ack >= s.last_ack;
    if !st(s).fastrecov {
        if ack > s.last_ack {
            s.recv_newack(ack, now);
            let x = st(s);
            x.after_timeout = false;
            x.scb.clear();
        } else if ack == s.last_ack && !st(s).after_timeout {
            let highest = s.highest_ack;
            let x = st(s);
            x.scb.update(highest, blocks);
            if x.scb.changed {
                s.dupacks += 1;
                if s.dupacks == s.p.dupack_threshold {
                    dupack_action(s, now, out);
                } else if s.dupacks < s.p.dupack_threshold && s.p.limited_transmit {
                    s.send_one(now, out);
                }
            }
        }
        if valid && s.dupacks == 0 {
            send_much(s, now, out);
        }
    } else {
        st(s).pipe -= 1;
        if ack >= s.recover {
            // Recovery is over; cwnd stays at β·W (no growth on this ack).
            s.recover = 0;
            let x = st(s);
            x.fastrecov = false;
            s.newack(ack, now);
            let x = st(s);
            x.after_timeout = false;
            x.scb.clear();
        } else if ack > s.highest_ack {
            // Partial ack: the retransmission arrived, count it out of the pipe.
            s.highest_ack = ack;
            let x = st(s);
            x.scb.update(ack, blocks);
            x.pipe -= 1;
            s.newtimer(ack, now);
            s.rtt.reset_backoff();
        } else if !st(s).after_timeout {
            let highest = s.highest_ack;
            let x = st(s);
            x.scb.update(highest, blocks);
            if x.scb.changed && s.dupacks > 0 {
                s.dupacks += 1;
            }
        }
        if valid {
            send_much(s, now, out);
        }
    }
}

fn dupack_action(s: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
    let recovered = s.highest_ack > s.recover;
    if !(recovered || !s.p.bug_fix || s.highest_ack == 0) {
        return;
    }
    s.recover = s.maxseq;
    let pipe = s.maxseq - s.highest_ack - s.p.dupack_threshold as i64;
    s.reset_rtx_timer(now, true, false);
    let first_hole = s.highest_ack + 1;
    let x = st(s);
    x.pipe = pipe;
    x.fastrecov = true;
    x.scb.mark_retran(first_hole);
    s.last_cwnd_action = CwndAction::Dupack;
    s.counters.fast_retransmits += 1;
    s.reduce(Reduction::Multiplicative);
    s.output(s.last_ack + 1, now, out);
}

/// SACK's own `send_much()`: outside recovery the window rules; inside it,
/// the pipe estimate does, and holes go before new data.
pub fn send_much(s: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
    let mut win = s.window();
    let wnd = s.w.wnd as i64;
    loop {
        let fastrecov = st(s).fastrecov;
        let open = if fastrecov {
            st(s).pipe < s.w.cwnd as i64
        } else {
            s.t_seqno <= s.last_ack + win
        };
        if !open || s.last_ack + 1 >= s.curseq {
            break;
        }
        let seq = match st(s).scb.next_retran() {
            None => {
                let room = if fastrecov {
                    s.t_seqno <= s.highest_ack + wnd
                } else {
                    s.t_seqno <= s.highest_ack + win
                };
                if room && s.t_seqno < s.curseq {
                    let q = s.t_seqno;
                    s.t_seqno += 1;
                    q
                } else {
                    break;
                }
            }
            Some(x) => {
                if s.recover > 0 && x <= s.highest_ack + wnd {
                    st(s).scb.mark_retran(x);
                    win = s.window();
                    x
                } else {
                    break;
                }
            }
        };
        s.output(seq, now, out);
        if s.t_seqno <= seq {
            s.t_seqno = seq + 1;
        }
        st(s).pipe += 1;
    }
}

/// SACK's part of a timeout (ns-2 `Sack1TcpAgent::timeout()`).
pub fn timeout_prelude(s: &mut TcpSender) {
    s.dupacks = 0;
    if s.highest_ack > s.last_ack {
        s.last_ack = s.highest_ack;
    }
    s.recover = s.maxseq;
    let x = st(s);
    x.fastrecov = false;
    x.after_timeout = true;
    x.scb.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoreboard_finds_holes_below_sacked_data() {
        let mut sb = Scoreboard::default();
        // cumulative ack 9 (10 is lost), receiver holds 11..14 and 16..17
        sb.update(
            9,
            &[
                SackBlock { start: 16, end: 18 },
                SackBlock { start: 11, end: 15 },
            ],
        );
        assert!(sb.changed);
        assert_eq!(sb.next_retran(), Some(10));
        sb.mark_retran(10);
        assert_eq!(sb.next_retran(), Some(15));
        sb.mark_retran(15);
        assert_eq!(sb.next_retran(), None, "nothing above 17 is known lost");
        // the same information again is no news
        sb.update(9, &[SackBlock { start: 16, end: 18 }]);
        assert!(!sb.changed);
    }
}
