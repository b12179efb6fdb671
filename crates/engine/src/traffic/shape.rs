//! Rate shapes: how fast a UDP source sends over time. A source paces its
//! packets exactly by the shape: the next packet leaves when the integral of
//! the (clipped) rate since the last one reaches the packet's size, so there
//! are no stepping artefacts.
//!
//! Sines are integrated in closed form, F(t) = offset·t − Σ aᵢ/ωᵢ·cos(ωᵢt + φᵢ),
//! and the departure solves F(x) − F(a) = bits by safeguarded Newton. Clipping
//! at 0 needs the rate's zero crossings: the search walks forward in brackets
//! of 1/(32·f_max) (not a rate step — only where to look for a sign change),
//! finds a crossing inside a bracket by bisection, and integrates only the
//! positive parts. A dip below zero that starts and ends inside one bracket
//! (possible only for sums of sines, never for one sine) is missed; its area
//! is below a·(2π/32)²/8·bracket ≈ 0.5 % of one bracket's peak volume.

use crate::scenario::{RateShape, ShapeKind};
use crate::time::{SimTime, NS_PER_S};
use std::f64::consts::PI;

/// One sine term: amplitude (bit/s), angular frequency (rad/s), phase (rad).
#[derive(Clone, Copy, Debug)]
pub struct Sine {
    pub amp_bps: f64,
    pub omega: f64,
    pub phase: f64,
}

#[derive(Clone, Debug)]
pub enum Shape {
    Constant {
        bps: f64,
    },
    /// offset + Σ sines, clipped at 0.
    Sines {
        offset_bps: f64,
        terms: Vec<Sine>,
        /// Bracket length for the zero-crossing search, seconds.
        bracket_s: f64,
        /// The rate can never be negative (offset ≥ Σ|aᵢ|): no brackets needed.
        never_clipped: bool,
    },
}

impl Shape {
    pub fn from_spec(spec: &RateShape) -> Self {
        match spec {
            RateShape::Constant(r) => Shape::Constant { bps: r.0 },
            RateShape::Shaped(t) => {
                let (offset_bps, terms) = match t.shape {
                    ShapeKind::Sine => (
                        t.mean.map_or(0.0, |m| m.0),
                        vec![Sine {
                            amp_bps: t.amplitude.map_or(0.0, |a| a.0),
                            omega: 2.0 * PI * t.frequency.map_or(1.0, |f| f.0),
                            phase: t.phase.unwrap_or(0.0),
                        }],
                    ),
                    ShapeKind::Sines => (
                        t.offset.map_or(0.0, |o| o.0),
                        t.components
                            .iter()
                            .flatten()
                            .map(|c| Sine {
                                amp_bps: c.amplitude.0,
                                omega: 2.0 * PI * c.frequency.0,
                                phase: c.phase,
                            })
                            .collect(),
                    ),
                };
                Shape::sines(offset_bps, terms)
            }
        }
    }

    pub fn sines(offset_bps: f64, terms: Vec<Sine>) -> Self {
        let f_max = terms
            .iter()
            .map(|s| s.omega / (2.0 * PI))
            .fold(0.0, f64::max);
        let amp_sum: f64 = terms.iter().map(|s| s.amp_bps.abs()).sum();
        Shape::Sines {
            offset_bps,
            bracket_s: 1.0 / (32.0 * f_max.max(1e-9)),
            never_clipped: offset_bps >= amp_sum,
            terms,
        }
    }

    /// Instantaneous rate at `t`, bit/s (clipped at 0).
    pub fn rate_at(&self, t: SimTime) -> f64 {
        self.rate_s(t as f64 / NS_PER_S as f64).max(0.0)
    }

    /// Unclipped rate at `t` seconds.
    #[inline]
    fn rate_s(&self, t: f64) -> f64 {
        match self {
            Shape::Constant { bps } => *bps,
            Shape::Sines {
                offset_bps, terms, ..
            } => {
                offset_bps
                    + terms
                        .iter()
                        .map(|s| s.amp_bps * (s.omega * t + s.phase).sin())
                        .sum::<f64>()
            }
        }
    }

    /// Antiderivative of the unclipped rate, bits.
    #[inline]
    fn integral_s(&self, t: f64) -> f64 {
        match self {
            Shape::Constant { bps } => bps * t,
            Shape::Sines {
                offset_bps, terms, ..
            } => {
                offset_bps * t
                    - terms
                        .iter()
                        .map(|s| s.amp_bps / s.omega * (s.omega * t + s.phase).cos())
                        .sum::<f64>()
            }
        }
    }

    /// Long-run mean of the clipped rate, bit/s.
    pub fn mean_bps(&self) -> f64 {
        match self {
            Shape::Constant { bps } => *bps,
            Shape::Sines {
                offset_bps,
                terms,
                never_clipped,
                ..
            } => {
                if *never_clipped {
                    return *offset_bps;
                }
                if terms.len() == 1 {
                    // mean of max(0, m + a sin x): positive where sin x > c = −m/a
                    let (m, a) = (*offset_bps, terms[0].amp_bps.abs());
                    let c = (-m / a).clamp(-1.0, 1.0);
                    let asin_c = c.asin();
                    return (m * (PI - 2.0 * asin_c) + 2.0 * a * (1.0 - c * c).sqrt()) / (2.0 * PI);
                }
                // No period in general: average the clipped rate over many
                // periods of the slowest component, finely sampled.
                let f_min = terms
                    .iter()
                    .map(|s| s.omega / (2.0 * PI))
                    .fold(f64::INFINITY, f64::min);
                let span = 200.0 / f_min;
                let n = 2_000_000usize;
                let dt = span / n as f64;
                (0..n)
                    .map(|i| self.rate_s((i as f64 + 0.5) * dt).max(0.0))
                    .sum::<f64>()
                    / n as f64
            }
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
            Shape::Sines {
                bracket_s,
                never_clipped,
                ..
            } => {
                let t0 = t as f64 / NS_PER_S as f64;
                let x = if *never_clipped {
                    // One monotone solve; bracket it by doubling.
                    let f0 = self.integral_s(t0);
                    let mut hi = t0 + bracket_s;
                    while self.integral_s(hi) - f0 < bits {
                        hi = t0 + 2.0 * (hi - t0);
                    }
                    self.solve(t0, hi, f0 + bits)
                } else {
                    self.clipped_departure(t0, bits, *bracket_s)?
                };
                let ns = (x * NS_PER_S as f64).round() as SimTime;
                Some(ns.max(t))
            }
        }
    }

    /// Walk brackets from `t0`, integrating only where the rate is positive.
    fn clipped_departure(&self, t0: f64, bits: f64, h: f64) -> Option<f64> {
        let mut need = bits;
        let mut u = t0;
        let mut ru = self.rate_s(u);
        // A shape that validated has a positive mean, so positive stretches
        // recur; the cap only guards against a pathological table.
        for _ in 0..100_000_000u64 {
            let v = u + h;
            let rv = self.rate_s(v);
            if ru > 0.0 || rv > 0.0 {
                let (a, b) = if ru > 0.0 && rv > 0.0 {
                    (u, v)
                } else if ru > 0.0 {
                    (u, self.zero_crossing(u, v))
                } else {
                    (self.zero_crossing(u, v), v)
                };
                let fa = self.integral_s(a);
                let got = self.integral_s(b) - fa;
                if got >= need {
                    return Some(self.solve(a, b, fa + need));
                }
                need -= got;
            }
            u = v;
            ru = rv;
        }
        None
    }

    /// The sign change of the rate in [u, v] (exactly one end is positive).
    fn zero_crossing(&self, mut u: f64, mut v: f64) -> f64 {
        let up = self.rate_s(u) > 0.0;
        for _ in 0..60 {
            let m = 0.5 * (u + v);
            if (self.rate_s(m) > 0.0) == up {
                u = m;
            } else {
                v = m;
            }
            if v - u < 1e-12 {
                break;
            }
        }
        0.5 * (u + v)
    }

    /// Solve F(x) = target on [a, b], F nondecreasing there: Newton steps
    /// kept inside a shrinking bisection bracket.
    fn solve(&self, mut a: f64, mut b: f64, target: f64) -> f64 {
        let mut x = 0.5 * (a + b);
        for _ in 0..100 {
            let g = self.integral_s(x) - target;
            if g > 0.0 {
                b = x;
            } else {
                a = x;
            }
            if b - a < 1e-11 || g == 0.0 {
                break;
            }
            let r = self.rate_s(x);
            let newton = if r > 0.0 { x - g / r } else { f64::NAN };
            x = if newton > a && newton < b {
                newton
            } else {
                0.5 * (a + b)
            };
        }
        x
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

    fn sine(m: f64, a: f64, f: f64) -> Shape {
        Shape::sines(
            m,
            vec![Sine {
                amp_bps: a,
                omega: 2.0 * PI * f,
                phase: 0.0,
            }],
        )
    }

    /// Departures k·bits apart in the integral: the count in any window is
    /// within one packet of ∫r/bits over it.
    fn check_counts(s: &Shape, bits: f64, span_s: f64, bins: usize) {
        let mut t = 0;
        let mut times = vec![0.0];
        while (t as f64) < span_s * 1e9 {
            t = s.next_departure(t, bits).unwrap();
            times.push(t as f64 / 1e9);
        }
        let w = span_s / bins as f64;
        for k in 0..bins {
            let (lo, hi) = (k as f64 * w, (k + 1) as f64 * w);
            let n = times.iter().filter(|&&x| x > lo && x <= hi).count() as f64;
            // clipped integral over the bin by fine midpoint rule
            let m = 2000;
            let exp: f64 = (0..m)
                .map(|i| s.rate_s(lo + (i as f64 + 0.5) * w / m as f64).max(0.0))
                .sum::<f64>()
                * (w / m as f64)
                / bits;
            assert!(
                (n - exp).abs() < 1.0 + 1e-3,
                "bin {k}: {n} packets, expected {exp}"
            );
        }
    }

    #[test]
    fn paper_a_sine_is_paced_by_its_integral() {
        // m = a: the rate touches zero once per period
        for f in [0.05, 0.4, 2.0, 10.0] {
            check_counts(&sine(0.5e6, 0.5e6, f), 8000.0, 5.0 / f.min(1.0), 40);
        }
    }

    #[test]
    fn clipped_sine_is_silent_below_zero() {
        // a > m: silent for part of each period; mean from the closed form
        let s = sine(0.2e6, 0.5e6, 1.0);
        check_counts(&s, 8000.0, 4.0, 80);
        let mean_numeric: f64 = (0..100_000)
            .map(|i| s.rate_s(i as f64 * 1e-5).max(0.0))
            .sum::<f64>()
            / 100_000.0;
        assert!((s.mean_bps() - mean_numeric).abs() < 1e-3 * mean_numeric);
    }

    #[test]
    fn sum_of_sines_is_paced_by_its_integral() {
        let s = Shape::sines(
            0.25e6,
            vec![
                Sine {
                    amp_bps: 0.5e6,
                    omega: 2.0 * PI * 0.3,
                    phase: 0.0,
                },
                Sine {
                    amp_bps: 0.25e6,
                    omega: 2.0 * PI * 3.0,
                    phase: 1.0,
                },
            ],
        );
        check_counts(&s, 8000.0, 10.0, 100);
    }
}
