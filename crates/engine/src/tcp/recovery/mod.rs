//! Loss recovery: what an ack, a duplicate ack or a timeout does to the
//! sequence space. One file per variant, each following the ns-2 2.35 agent
//! the papers ran (and quoting the RFC it approximates).
//!
//! A variant reads and updates the shared [`TcpState`] and returns
//! [`Action`]s — take an RTT sample and grow the window, enter recovery,
//! retransmit a packet, send what the window allows — that the connection
//! (`sender`) applies in order. It never touches the window or the timer
//! itself, and it does not know the connection.

pub mod newreno;
pub mod rack;
pub mod reno;
pub mod sack;
pub mod tahoe;

use super::state::{CwndAction, TcpState};
use crate::net::packet::{Packet, SackBlock};
use crate::plan::Variant;
use std::mem::MaybeUninit;

/// What loss recovery asks the connection to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// The cumulative ack advanced to `ack` (the sequence space has already
    /// moved): take the RTT sample Karn's rule allows, re-arm the timer
    /// (ns-2 `newack()`); if `grow`, tell congestion control about the
    /// `acked` packets (ns-2 `recv_newack_helper()`).
    NewAck { ack: i64, acked: i64, grow: bool },
    /// A loss was detected: a congestion event for the window in use
    /// `window`; `to_one`: Tahoe's restart from one packet.
    EnterRecovery { window: f64, to_one: bool },
    /// Recovery is over (the ack covered `recover`).
    ExitRecovery,
    /// After a fast retransmit: re-arm the timer, stop timing; unless
    /// `mild`, go back to the first unacked packet (go-back-N).
    ResetTimer { mild: bool },
    /// Re-arm or cancel the timer after an ack that did not end recovery (ns-2 `newtimer()`).
    Newtimer(i64),
    /// A partial ack: back off no more (RFC 6298 §5.7's fresh start).
    ResetBackoff,
    /// A partial ack covered the timed packet: no sample (Karn), stop timing.
    StopTiming(i64),
    /// Take `n` packets out of the congestion window (NewReno's deflation).
    Deflate(i64),
    /// Send this packet again.
    Retransmit(i64),
    /// A loss repaired without recovery (a tail loss probe's): reduce the
    /// window once for the window in use `window` (Linux's CWR state).
    Reduce { window: f64 },
    /// A tail loss probe: send packet `seq` whatever the window — new data
    /// (`new`: the next new packet) or the highest sent again — and restart
    /// the RTO from it.
    Probe { seq: i64, new: bool },
    /// Send what the window allows, at most `maxburst` packets (0: no limit).
    SendMuch { maxburst: u32 },
    /// Limited transmit: one new packet on an early duplicate ack.
    SendOne,
    /// A fast retransmit in the window an echoed mark has already reduced
    /// (ECN): no second reduction; `to_one`: Tahoe restarts from one packet
    /// and keeps ssthresh (ns-2 `slowdown(CLOSE_CWND_ONE)`).
    RepairAfterEcn { to_one: bool },
}

/// The actions of one ack: at most five, kept inline (no allocation, and
/// no initialization of unused slots, on the hot path).
pub struct Actions {
    buf: [MaybeUninit<Action>; 6],
    n: usize,
}

impl Default for Actions {
    #[inline]
    fn default() -> Self {
        Actions {
            buf: [const { MaybeUninit::uninit() }; 6],
            n: 0,
        }
    }
}

impl Actions {
    #[inline]
    pub fn push(&mut self, a: Action) {
        // no ack yields more than five actions (the type's contract); checked in debug builds
        debug_assert!(
            self.n < self.buf.len(),
            "more than {} actions",
            self.buf.len()
        );
        // SAFETY: `n < 6`, as asserted
        unsafe { self.buf.get_unchecked_mut(self.n) }.write(a);
        self.n += 1;
    }

    #[inline]
    pub fn as_slice(&self) -> &[Action] {
        // SAFETY: the first `n` slots were written by `push`, and
        // `MaybeUninit<Action>` has the layout of `Action`.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr() as *const Action, self.n) }
    }
}

pub enum Recovery {
    Tahoe,
    Reno,
    NewReno(newreno::State),
    Sack(sack::State),
}

/// The cumulative ack an ack packet carries, in ns-2's numbering (highest
/// packet received in order; −1 for none).
#[inline]
pub fn cumulative_ack(pkt: &Packet) -> i64 {
    pkt.seq as i64 - 1
}

/// Advance the sequence space to `ack` and say so.
#[inline]
fn new_ack(st: &mut TcpState, ack: i64, grow: bool) -> Action {
    let acked = ack - st.last_ack();
    st.advance(ack);
    Action::NewAck { ack, acked, grow }
}

impl Recovery {
    /// The `linux` profile's SACK recovery: `rack` detects losses by
    /// RACK-TLP instead of ns-2's three duplicate acks, and `prr` sends by
    /// Proportional Rate Reduction instead of pipe < cwnd (Linux runs PRR
    /// only for a controller without its own `cong_control`, so not BBR).
    /// `note_sacked`: SACK keeps each ack's newly SACKed packets for a
    /// delivery-rate sampler.
    pub fn new(v: Variant, rack: bool, prr: bool, note_sacked: bool) -> Self {
        match v {
            Variant::Tahoe => Recovery::Tahoe,
            Variant::Reno => Recovery::Reno,
            Variant::NewReno => Recovery::NewReno(newreno::State::default()),
            Variant::Sack => Recovery::Sack(sack::State::new(prr, rack, note_sacked)),
        }
    }

    /// RACK's state, if this recovery runs it.
    #[inline]
    pub fn rack(&self) -> Option<&rack::Rack> {
        match self {
            Recovery::Sack(x) => x.rack(),
            _ => None,
        }
    }

    #[inline]
    pub fn rack_mut(&mut self) -> Option<&mut rack::Rack> {
        match self {
            Recovery::Sack(x) => x.rack_mut(),
            _ => None,
        }
    }

    /// The variant's invariants (debug builds).
    #[cfg(debug_assertions)]
    pub fn check_invariants(&self, st: &TcpState) {
        if let Recovery::Sack(x) = self {
            x.check_invariants(st);
        }
    }

    /// An ack with cumulative ack `ack` and SACK blocks `blocks` (read by
    /// SACK only); `cwnd`: the congestion window now.
    #[inline]
    pub fn on_ack(
        &mut self,
        st: &mut TcpState,
        ack: i64,
        blocks: &[SackBlock],
        cwnd: f64,
        acts: &mut Actions,
    ) {
        match self {
            Recovery::Tahoe => tahoe::on_ack(st, ack, cwnd, acts),
            Recovery::Reno => reno::on_ack(st, ack, cwnd, acts),
            Recovery::NewReno(x) => x.on_ack(st, ack, cwnd, acts),
            Recovery::Sack(x) => x.on_ack(st, ack, blocks, cwnd, acts),
        }
    }

    /// The RACK-TLP timer recovery wants armed before the RTO, if any; see
    /// [`sack::State::rack_timer`].
    #[inline]
    pub fn rack_timer(&self, st: &TcpState, clock: &sack::ProbeClock) -> Option<sack::RackTimer> {
        match self {
            Recovery::Sack(x) => x.rack_timer(st, clock),
            _ => None,
        }
    }

    /// The RACK-TLP timer recovery asked for fired: the reordering timer
    /// marks what is lost by now, the probe timer sends a probe.
    pub fn on_rack_timer(
        &mut self,
        st: &mut TcpState,
        timer: sack::RackTimer,
        cwnd: f64,
        acts: &mut Actions,
    ) {
        if let Recovery::Sack(x) = self {
            match timer {
                sack::RackTimer::Reorder(_) => x.on_reo_timeout(st, cwnd, acts),
                sack::RackTimer::Probe(_) => x.on_probe_timeout(st, acts),
            }
        }
    }

    /// The variant's part of a timeout, before the connection's (ns-2's
    /// variant `timeout()` calling `TcpAgent::timeout()`).
    pub fn on_timeout(&mut self, st: &mut TcpState) {
        match self {
            Recovery::Tahoe => {}
            Recovery::Reno | Recovery::NewReno(_) => reno::timeout_prelude(st),
            Recovery::Sack(x) => x.timeout_prelude(st),
        }
    }
}

/// What the duplicate ack that reaches the threshold does (the test every
/// ns-2 variant's `dupack_action()` opens with).
pub(crate) enum FastRetransmit {
    /// A loss in a new window: retransmit and reduce.
    Reduce,
    /// A loss in the window an echoed mark reduced (ECN): retransmit only.
    AfterEcn,
    /// A window that was already reduced (ns-2 `bugFix_`): nothing.
    No,
}

/// ns-2's test: a new window (`highest_ack > recover`), no `bugFix_` (and no
/// ECN), a variant that allows re-entry (`allow`), or the first packet lost
/// reduces; after a mark's reduction in this window (ECN) the loss is only
/// repaired; otherwise `bugFix_` holds it back.
#[inline]
pub(crate) fn fast_retransmit(st: &TcpState, allow: bool) -> FastRetransmit {
    let recovered = st.highest_ack() > st.recover();
    if recovered || (!st.bug_fix() && !st.ecn()) || allow || st.highest_ack() == 0 {
        FastRetransmit::Reduce
    } else if st.ecn() && st.last_cwnd_action() == CwndAction::Ecn {
        FastRetransmit::AfterEcn
    } else if !st.bug_fix() {
        FastRetransmit::Reduce
    } else {
        FastRetransmit::No
    }
}

/// The part of ns-2's `dupack_action()` every variant shares: this window's
/// recovery point is the highest packet sent, and the congestion control cuts
/// (to one packet for Tahoe's slow start, to the reduced window otherwise).
pub(crate) fn begin_recovery(st: &mut TcpState, cwnd: f64, acts: &mut Actions, to_one: bool) {
    st.mark_recover();
    st.note_cwnd_action(CwndAction::Dupack);
    acts.push(Action::EnterRecovery {
        window: st.windowd(cwnd),
        to_one,
    });
}
