//! A UDP source sending fixed-size packets paced by a rate shape, and its
//! sink, which only counts.

use super::shape::Shape;
use crate::net::packet::{Kind, Packet};
use crate::time::SimTime;

pub struct UdpSource {
    pub flow: u32,
    pub shape: Shape,
    pub packet_size: u32,
    pub active: bool,
    pub sent: u64,
    next_seq: u32,
}

impl UdpSource {
    pub fn new(flow: u32, shape: Shape, packet_size: u32) -> Self {
        UdpSource {
            flow,
            shape,
            packet_size,
            active: false,
            sent: 0,
            next_seq: 0,
        }
    }

    /// Emit one packet at `now`; returns it and when the next one is due.
    pub fn emit(&mut self, now: SimTime) -> (Packet, Option<SimTime>) {
        let p = Packet::new(Kind::Udp, self.flow, self.next_seq, self.packet_size);
        self.next_seq = self.next_seq.wrapping_add(1);
        self.sent += 1;
        (
            p,
            self.shape
                .next_departure(now, self.packet_size as f64 * 8.0),
        )
    }
}

/// Every departure time of a source with `shape` that starts at `start` and
/// stops at `stop`: the first packet leaves at the start, each next one when
/// the shape's integral since the previous reaches its size (exactly what
/// the simulator does; the ns-2 export plays these times from a trace file).
pub fn departures(shape: &Shape, packet_size: u32, start: SimTime, stop: SimTime) -> Vec<SimTime> {
    let mut out = Vec::new();
    let bits = packet_size as f64 * 8.0;
    let mut t = start;
    while t < stop {
        out.push(t);
        match shape.next_departure(t, bits) {
            Some(n) => t = n,
            None => break,
        }
    }
    out
}
