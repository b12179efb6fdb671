//! Rate shapes: how fast a UDP source sends over time. A source paces its
//! packets exactly by the shape: the next packet leaves when the integral of
//! the rate since the last one reaches the packet's size, so there are no
//! stepping artefacts. Constant today; sine, sum of sines, piecewise-linear
//! and on/off shapes are further variants of [`Shape`] that implement the
//! same `next_departure`.

use crate::scenario::RateShape;
use crate::time::{SimTime, NS_PER_S};

#[derive(Clone, Debug)]
pub enum Shape {
    Constant { bps: f64 },
}

impl Shape {
    pub fn from_spec(spec: &RateShape) -> Self {
        match spec {
            RateShape::Constant(r) => Shape::Constant { bps: r.0 },
        }
    }

    /// Instantaneous rate at `t`, bit/s.
    pub fn rate_at(&self, _t: SimTime) -> f64 {
        match self {
            Shape::Constant { bps } => *bps,
        }
    }

    /// The time at which `bits` more have been sent, starting at `t`; None if never.
    pub fn next_departure(&self, t: SimTime, bits: f64) -> Option<SimTime> {
        match self {
            Shape::Constant { bps } => {
                if *bps <= 0.0 {
                    None
                } else {
                    Some(t + (bits / bps * NS_PER_S as f64).round() as SimTime)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_rate_paces_exactly() {
        let s = Shape::Constant { bps: 0.5e6 };
        // 8000 bits at 0.5 Mb/s = 16 ms
        assert_eq!(s.next_departure(0, 8000.0), Some(16_000_000));
    }
}
