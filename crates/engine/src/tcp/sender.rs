//! The TCP connection's sending side: sequence space, output, the
//! retransmission timer, and the shared pieces every loss recovery uses.
//! Sequence numbers count packets, as in ns-2's one-way TCP; `highest_ack`
//! is the highest packet acknowledged cumulatively (−1 before any ack).

use super::recovery::Recovery;
use super::rtt::RttEstimator;
use super::window::{Reduction, Window};
use crate::net::packet::{Kind, Packet, SackBlock};
use crate::scenario::{TcpParams, Variant};
use crate::time::SimTime;

/// The last thing that changed the window (ns-2 `last_cwnd_action_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndAction {
    None,
    Timeout,
    Dupack,
    Exited,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct TcpCounters {
    /// Packets handed to the network, retransmissions included.
    pub sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub acks: u64,
}

pub struct TcpSender {
    pub flow: u32,
    pub p: TcpParams,
    pub w: Window,
    pub rtt: RttEstimator,
    pub rec: Recovery,
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
    /// Retransmission timer deadline, if armed.
    pub rto_deadline: Option<SimTime>,
    /// Time of this sender's live entry in the event queue (MAX if none).
    pub rto_entry: SimTime,
    pub counters: TcpCounters,
}

/// "Infinite" data for a bulk sender (ns-2 `TCP_MAXSEQ`).
pub const BULK: i64 = i64::MAX / 4;

impl TcpSender {
    pub fn new(flow: u32, p: TcpParams, boot_time_s: f64) -> Self {
        TcpSender {
            flow,
            p,
            w: Window::new(
                p.alpha,
                p.beta,
                p.initial_cwnd,
                p.initial_ssthresh,
                p.window,
                p.max_cwnd,
                p.syn,
            ),
            rtt: RttEstimator::new(
                p.tick_ns,
                p.initial_rto_ns,
                p.min_rto_ns,
                p.max_rto_ns,
                boot_time_s,
            ),
            rec: Recovery::new(p.variant),
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
            rto_deadline: None,
            rto_entry: SimTime::MAX,
            counters: TcpCounters::default(),
        }
    }

    pub fn variant(&self) -> Variant {
        self.p.variant
    }

    /// The usable window, packets (ns-2 `window()`; Reno adds `dupwnd`).
    #[inline]
    pub fn window(&self) -> i64 {
        let w = self.w.cwnd as i64 + self.dupwnd;
        w.min(self.w.wnd as i64)
    }

    /// The same as a real number (ns-2 `windowd()`).
    #[inline]
    pub fn windowd(&self) -> f64 {
        (self.w.cwnd + self.dupwnd as f64).min(self.w.wnd)
    }

    /// Packets sent and not yet cumulatively acked.
    pub fn in_flight(&self) -> i64 {
        self.maxseq - self.highest_ack
    }

    /// The application starts a bulk transfer.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.active = true;
        self.curseq = BULK;
        self.send_much(now, 0, out);
    }

    /// An application that writes (CBR) starts: nothing to send until it
    /// writes (ns-2: `curseq_` 0 until the first `sendmsg`).
    pub fn start_app(&mut self) {
        self.active = true;
        self.curseq = 0;
    }

    /// The application wrote `n` packets (ns-2 `sendmsg`): send what the
    /// window allows. Ignored once stopped.
    pub fn app_write(&mut self, n: i64, now: SimTime, out: &mut Vec<Packet>) {
        if self.active {
            self.curseq += n;
            self.send_much(now, 0, out);
        }
    }

    /// Packets written and not yet cumulatively acknowledged (sent or not).
    pub fn buffered(&self) -> i64 {
        self.curseq - self.highest_ack - 1
    }

    /// The application stops: nothing new is sent; outstanding data is still
    /// recovered. The timer is disarmed once everything is acked.
    pub fn stop(&mut self) {
        self.active = false;
        self.curseq = self.t_seqno.max(self.maxseq + 1);
    }

    /// Send packet `seqno` (ns-2 `output()`).
    pub fn output(&mut self, seqno: i64, now: SimTime, out: &mut Vec<Packet>) {
        // ns-2 `output()` adds the header bytes (`useHeaders_`) in the else branch of
        // its packet-0 test, so packet 0 is the bare header with `syn_`, and the bare
        // payload without it
        let size = match (seqno, self.p.syn) {
            (0, true) => self.p.header_size,
            (0, false) => self.p.packet_size - self.p.header_size,
            _ => self.p.packet_size,
        };
        let mut pkt = Packet::new(Kind::Data, self.flow, seqno as u32, size);
        let force_timer = self.highest_ack == self.maxseq;
        self.counters.sent += 1;
        if seqno > self.maxseq {
            self.maxseq = seqno;
            if !self.rtt.active {
                self.rtt.active = true;
                if seqno > self.rtt.timed_seq {
                    self.rtt.timed_seq = seqno;
                    self.rtt.timed_at = now;
                }
            }
        } else {
            pkt.rtx = true;
            self.counters.retransmissions += 1;
        }
        out.push(pkt);
        if self.rto_deadline.is_none() || force_timer {
            self.set_rtx_timer(now);
        }
    }

    /// Send as much as the window allows (ns-2 `send_much()`; SACK has its own).
    pub fn send_much(&mut self, now: SimTime, maxburst: u32, out: &mut Vec<Packet>) {
        if let Recovery::Sack(_) = self.rec {
            return super::recovery::sack::send_much(self, now, out);
        }
        let mut win = self.window();
        let mut n = 0;
        while self.t_seqno <= self.highest_ack + win && self.t_seqno < self.curseq {
            self.output(self.t_seqno, now, out);
            self.t_seqno += 1;
            n += 1;
            win = self.window();
            if maxburst > 0 && n == maxburst {
                break;
            }
        }
    }

    /// Limited transmit: one new packet on an early duplicate ack (RFC 3042; ns-2 `send_one()`).
    pub fn send_one(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.t_seqno <= self.highest_ack + self.w.wnd as i64
            && self.t_seqno < self.curseq
            && (self.t_seqno as f64) <= self.highest_ack as f64 + self.w.cwnd + self.dupacks as f64
        {
            self.output(self.t_seqno, now, out);
            self.t_seqno += 1;
        }
    }

    #[inline]
    pub fn set_rtx_timer(&mut self, now: SimTime) {
        self.rto_deadline = Some(now + self.rtt.timeout_ns);
    }

    #[inline]
    pub fn cancel_rtx_timer(&mut self) {
        self.rto_deadline = None;
    }

    /// ns-2 `reset_rtx_timer(mild, backoff)`: after a timeout or a fast
    /// retransmit. Not mild: go back to the first unacked packet (go-back-N).
    pub fn reset_rtx_timer(&mut self, now: SimTime, mild: bool, backoff: bool) {
        if backoff {
            self.rtt.back_off();
        }
        self.set_rtx_timer(now);
        if !mild {
            self.t_seqno = self.highest_ack + 1;
        }
        self.rtt.active = false;
    }

    /// Re-arm or cancel the timer after an ack (ns-2 `newtimer()`).
    pub fn newtimer(&mut self, ack: i64, now: SimTime) {
        if self.t_seqno > ack || ack < self.maxseq || self.w.cwnd < 1.0 {
            self.set_rtx_timer(now);
        } else {
            self.cancel_rtx_timer();
        }
    }

    /// An ack advanced the window (ns-2 `newack()`): update the sequence
    /// space, take an RTT sample (Karn: only for a timed, never retransmitted
    /// segment), re-arm the timer.
    pub fn newack(&mut self, ack: i64, now: SimTime) {
        self.dupacks = 0;
        self.last_ack = ack;
        self.highest_ack = ack;
        if self.t_seqno < ack + 1 {
            self.t_seqno = ack + 1;
        }
        if self.rtt.active && ack >= self.rtt.timed_seq {
            self.rtt.reset_backoff();
            self.rtt.active = false;
            let tao = crate::time::secs(now - self.rtt.timed_at);
            self.rtt.update(now, tao);
        }
        self.newtimer(ack, now);
    }

    /// New ack: advance, then grow the window (ns-2 `recv_newack_helper()`),
    /// and after the SYN's ack restart from the initial window (ns-2 `delay_growth_`).
    pub fn recv_newack(&mut self, ack: i64, now: SimTime) {
        self.newack(ack, now);
        self.w.open();
        if self.last_ack == 0 && self.p.syn {
            self.w.cwnd = self.w.wnd_init;
        }
    }

    /// Reduce the window (ns-2 `slowdown()`).
    pub fn reduce(&mut self, how: Reduction) {
        let w = self.windowd();
        let after_timeout = self.last_cwnd_action == CwndAction::Timeout;
        self.w.reduce(how, w, after_timeout);
    }

    /// The retransmission timer expired (ns-2 `TcpAgent::timeout()`); the
    /// variant's own timeout runs first (see `recovery`).
    pub fn base_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.w.cwnd < 1.0 {
            self.w.cwnd = 1.0;
        }
        let nothing_outstanding = self.highest_ack == self.maxseq;
        self.recover = self.maxseq;
        if self.highest_ack == -1 && self.w.wnd_init > 1.0 {
            // First packet lost: do not use the larger initial window (ns-2 bugfix_ss_).
            self.w.wnd_init = 1.0;
        }
        if nothing_outstanding {
            self.reduce(Reduction::Restart);
        } else {
            self.counters.timeouts += 1;
            self.last_cwnd_action = CwndAction::Timeout;
            self.reduce(Reduction::Timeout);
        }
        self.reset_rtx_timer(now, false, !nothing_outstanding);
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_much(now, 0, out);
    }

    /// An ack arrived from the receiver; `sack`: its SACK blocks
    /// (`TcpSink::take_sack`).
    pub fn on_ack(
        &mut self,
        pkt: &Packet,
        sack: &[SackBlock],
        now: SimTime,
        out: &mut Vec<Packet>,
    ) {
        self.counters.acks += 1;
        super::recovery::on_ack(self, pkt, sack, now, out);
        if !self.active && self.highest_ack >= self.maxseq {
            self.cancel_rtx_timer();
        }
    }

    /// The retransmission timer fired.
    pub fn on_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.rto_deadline = None;
        if !self.active && self.highest_ack >= self.maxseq {
            return;
        }
        super::recovery::on_timeout(self, now, out);
    }
}
