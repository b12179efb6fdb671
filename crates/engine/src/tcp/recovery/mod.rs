//! Loss recovery: what an ack, a duplicate ack or a timeout does to the
//! sequence space. One file per variant, each following the ns-2 2.35 agent
//! the papers ran (and the RFC it approximates).

pub mod newreno;
pub mod reno;
pub mod sack;
pub mod tahoe;

use super::sender::TcpSender;
use crate::net::packet::{Packet, SackBlock};
use crate::scenario::Variant;
use crate::time::SimTime;

pub enum Recovery {
    Tahoe,
    Reno,
    NewReno(newreno::State),
    Sack(sack::State),
}

impl Recovery {
    pub fn new(v: Variant) -> Self {
        match v {
            Variant::Tahoe => Recovery::Tahoe,
            Variant::Reno => Recovery::Reno,
            Variant::NewReno => Recovery::NewReno(newreno::State::default()),
            Variant::Sack => Recovery::Sack(sack::State::default()),
        }
    }
}

/// The cumulative ack an ack packet carries, in ns-2's numbering (highest
/// packet received in order; −1 for none).
#[inline]
pub fn cumulative_ack(pkt: &Packet) -> i64 {
    pkt.seq as i64 - 1
}

/// `blocks`: the ack's SACK blocks (`TcpSink::take_sack`), read by SACK only.
pub fn on_ack(
    s: &mut TcpSender,
    pkt: &Packet,
    blocks: &[SackBlock],
    now: SimTime,
    out: &mut Vec<Packet>,
) {
    match s.rec {
        Recovery::Tahoe => tahoe::on_ack(s, pkt, now, out),
        Recovery::Reno => reno::on_ack(s, pkt, now, out),
        Recovery::NewReno(_) => newreno::on_ack(s, pkt, now, out),
        Recovery::Sack(_) => sack::on_ack(s, pkt, blocks, now, out),
    }
}

pub fn on_timeout(s: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
    match s.rec {
        Recovery::Tahoe => {}
        Recovery::Reno | Recovery::NewReno(_) => reno::timeout_prelude(s),
        Recovery::Sack(_) => sack::timeout_prelude(s),
    }
    s.base_timeout(now, out);
}
