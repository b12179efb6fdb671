//! Rate shapes: how fast a UDP source sends over time. A source paces its
//! packets exactly by the shape: the next packet leaves when the integral of
//! the (clipped) rate since the last one reaches the packet's size, so there
//! are no stepping artefacts.
//!
//! Sines are integrated in closed form, F(t) = offset·t − Σ aᵢ/ωᵢ·cos(ωᵢt + φᵢ),
//! and the reference solve finds F(x) − F(a) = bits by safeguarded Newton.
//! Clipping at 0 needs the rate's zero crossings: the search walks forward in
//! brackets of 1/(32·f_max) (not a rate step — only where to look for a sign
//! change), finds a crossing inside a bracket by bisection, and integrates
//! only the positive parts. A dip below zero that starts and ends inside one
//! bracket is missed (for one sine only when the amplitude is within ~2 % of
//! the mean); its area is below a·(2π/32)²/8·bracket ≈ 0.5 % of one bracket's
//! peak volume.
//!
//! Fast paths give the same departures at a quarter of the cost (bench/NOTES.md):
//! a never-clipped sum of sines and a single clipped sine whose silences and
//! positive stretches are longer than two brackets (`Humps`) solve the volume
//! relative to the packet's start, by Newton from a third-order start with
//! series sin/cos, and find a clipped sine's stretches from the phase. They
//! are more accurate than the reference (which stops at a 1e-11 s bracket), so
//! where their result lies within the reference's error of a half ns — where
//! the two could round to different ns, 2-5 % of departures — the reference
//! solve runs instead, and every departure is the one it always was.
//!
//! Piecewise-linear tables are integrated exactly too: the integral is a
//! quadratic on each segment, solved in closed form. On/off sources send at
//! a constant rate during on periods only; the volume a packet needs carries
//! across off periods. Their period lengths come from the flow's own random
//! stream, so an on/off shape has state and is driven forward in time.

use crate::plan::{PeriodDistribution, PeriodPlan, ShapePlan};
use crate::rng::{stream, Rng};
use crate::time::{SimTime, NS_PER_S};
use std::f64::consts::PI;

/// Long-run means of clipped sums of sines computed so far, keyed by the bits
/// of (offset, (amplitude, ω, phase)…): the last 256.
#[allow(clippy::type_complexity)]
static MEANS: std::sync::Mutex<Vec<(Vec<u64>, f64)>> = std::sync::Mutex::new(Vec::new());

/// Held while a mean is computed: `reproduce`'s two workers start a sweep
/// point's seeds together, and the second waits for the mean the first is
/// computing instead of computing it again.
static AVERAGING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The rate of `offset_bps` + Σ `terms` clipped at 0 (`Shape::rate_s`),
/// averaged over 200 periods of its slowest component in two million samples
/// (the sums as `Iterator::sum` adds: in order, from −0).
fn average(offset_bps: f64, terms: &[Sine]) -> f64 {
    let f_min = terms
        .iter()
        .map(|s| s.omega / (2.0 * PI))
        .fold(f64::INFINITY, f64::min);
    let span = 200.0 / f_min;
    let n = 2_000_000usize;
    let dt = span / n as f64;
    let mut sum = -0.0;
    for i in 0..n {
        let t = (i as f64 + 0.5) * dt;
        let mut r = -0.0;
        for s in terms {
            r += s.amp_bps * (s.omega * t + s.phase).sin();
        }
        sum += (offset_bps + r).max(0.0);
    }
    sum / n as f64
}

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
        /// One clipped sine whose silences and positive stretches are both
        /// longer than two brackets: its departures are solved in closed-form
        /// stretches (see `Humps`); else the bracket walk.
        humps: Option<Humps>,
        /// (sin θᵢ, cos θᵢ) of each term at the start of the stretch being
        /// solved: scratch space, so the fast path allocates nothing.
        at0: Vec<(f64, f64)>,
        /// The never-clipped solve's last start (s), whose phases `at0`
        /// holds, and how many more starts may rotate them on before they
        /// are computed afresh (see `Shape::monotone_departure`).
        at0_from: (f64, u32),
    },
    Piecewise(Piecewise),
    OnOff(OnOff),
}

impl Shape {
    /// The shape of UDP flow `flow` of a plan with master `seed` (only an
    /// on/off shape draws random numbers, from the flow's own stream).
    pub fn from_plan(plan: &ShapePlan, seed: u64, flow: u32) -> Self {
        match plan {
            &ShapePlan::Constant { rate_bps } => Shape::Constant { bps: rate_bps },
            ShapePlan::Piecewise { points, repeat } => {
                Shape::Piecewise(Piecewise::from_plan(points, *repeat))
            }
            ShapePlan::Onoff { rate_bps, on, off } => Shape::OnOff(OnOff::new(
                *rate_bps,
                Period::from_plan(on),
                Period::from_plan(off),
                Rng::stream(seed, stream::UDP_SOURCE, flow as u64),
            )),
            &ShapePlan::Sine {
                mean_bps,
                amplitude_bps,
                frequency_hz,
                phase_rad,
            } => Shape::sines(
                mean_bps,
                vec![Sine {
                    amp_bps: amplitude_bps,
                    omega: 2.0 * PI * frequency_hz,
                    phase: phase_rad,
                }],
            ),
            ShapePlan::Sines {
                offset_bps,
                components,
            } => Shape::sines(
                *offset_bps,
                components
                    .iter()
                    .map(|c| Sine {
                        amp_bps: c.amplitude_bps,
                        omega: 2.0 * PI * c.frequency_hz,
                        phase: c.phase_rad,
                    })
                    .collect(),
            ),
        }
    }

    /// Long-run mean rate of a planned shape in bit/s (of the clipped shape;
    /// on/off: its expectation, rate·E[on]/(E[on] + E[off])).
    pub fn mean_of(plan: &ShapePlan) -> f64 {
        match plan {
            &ShapePlan::Constant { rate_bps } => rate_bps,
            _ => Shape::from_plan(plan, 0, 0).mean_bps(),
        }
    }

    /// Mean rate of a planned shape over simulation time [a, b] (bit/s):
    /// exact for piecewise tables (which need not repeat), the long-run mean
    /// otherwise.
    pub fn mean_over(plan: &ShapePlan, a: SimTime, b: SimTime) -> f64 {
        match plan {
            ShapePlan::Piecewise { points, repeat } if b > a => {
                Piecewise::from_plan(points, *repeat).mean_between(a, b)
            }
            _ => Shape::mean_of(plan),
        }
    }

    pub fn sines(offset_bps: f64, terms: Vec<Sine>) -> Self {
        let f_max = terms
            .iter()
            .map(|s| s.omega / (2.0 * PI))
            .fold(0.0, f64::max);
        let amp_sum: f64 = terms.iter().map(|s| s.amp_bps.abs()).sum();
        let bracket_s = 1.0 / (32.0 * f_max.max(1e-9));
        let never_clipped = offset_bps >= amp_sum;
        let humps = match terms[..] {
            [s] if !never_clipped => Humps::new(offset_bps, s, bracket_s),
            _ => None,
        };
        Shape::Sines {
            offset_bps,
            bracket_s,
            never_clipped,
            humps,
            at0: vec![(0.0, 0.0); terms.len()],
            at0_from: (f64::NAN, 0),
            terms,
        }
    }

    /// Instantaneous rate at `t`, bit/s (clipped at 0).
    pub fn rate_at(&self, t: SimTime) -> f64 {
        match self {
            Shape::Piecewise(p) => p.rate_s(t as f64 / NS_PER_S as f64),
            Shape::OnOff(o) => o.bps * o.on as u8 as f64,
            _ => self.rate_s(t as f64 / NS_PER_S as f64).max(0.0),
        }
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
            Shape::Piecewise(p) => p.rate_s(t),
            Shape::OnOff(_) => unreachable!("on/off has no closed form"),
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
            Shape::Piecewise(p) => p.integral_s(t),
            Shape::OnOff(_) => unreachable!("on/off has no closed form"),
        }
    }

    /// (`integral_s`, `rate_s`) of a sum of sines at `t` seconds.
    #[inline]
    fn integral_and_rate_s(&self, t: f64) -> (f64, f64) {
        let Shape::Sines {
            offset_bps, terms, ..
        } = self
        else {
            return (self.integral_s(t), self.rate_s(t));
        };
        let (mut f, mut r) = (0.0, 0.0);
        for s in terms {
            let (sin, cos) = (s.omega * t + s.phase).sin_cos();
            f += s.amp_bps / s.omega * cos;
            r += s.amp_bps * sin;
        }
        (offset_bps * t - f, offset_bps + r)
    }

    /// Long-run mean of the clipped rate, bit/s.
    pub fn mean_bps(&self) -> f64 {
        match self {
            Shape::Constant { bps } => *bps,
            Shape::Piecewise(p) => p.mean_bps(),
            Shape::OnOff(o) => o.bps * o.on_len.mean() / (o.on_len.mean() + o.off_len.mean()),
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
                // periods of the slowest component, finely sampled. That is
                // ~0.7 G instructions, and a run asks more than once (scenario
                // validation, the reference rate; a sweep's seeds): remembered.
                let key: Vec<u64> = std::iter::once(*offset_bps)
                    .chain(terms.iter().flat_map(|s| [s.amp_bps, s.omega, s.phase]))
                    .map(f64::to_bits)
                    .collect();
                let known = || {
                    let means = MEANS.lock().unwrap_or_else(|e| e.into_inner());
                    means.iter().find(|(k, _)| *k == key).map(|&(_, m)| m)
                };
                if let Some(mean) = known() {
                    return mean;
                }
                let _one = AVERAGING.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(mean) = known() {
                    return mean;
                }
                let mean = average(*offset_bps, terms);
                let mut means = MEANS.lock().unwrap_or_else(|e| e.into_inner());
                if means.len() >= 256 {
                    means.remove(0);
                }
                means.push((key, mean));
                mean
            }
        }
    }

    /// The time at which `bits` more have been sent, starting at `t`; None if
    /// never. Calls must come in time order (an on/off shape moves forward).
    pub fn next_departure(&mut self, t: SimTime, bits: f64) -> Option<SimTime> {
        match self {
            Shape::Piecewise(p) => p.next_departure(t, bits),
            Shape::OnOff(o) => Some(o.next_departure(t, bits)),
            &mut Shape::Constant { bps } => {
                if bps <= 0.0 {
                    None
                } else {
                    Some(t.saturating_add((bits / bps * NS_PER_S as f64).round() as SimTime))
                }
            }
            &mut Shape::Sines {
                bracket_s,
                never_clipped,
                ..
            } => {
                let t0 = t as f64 / NS_PER_S as f64;
                let fast = if never_clipped {
                    self.monotone_departure(t0, bits)
                } else if self.has_humps() {
                    self.hump_departure(t0, bits)
                } else {
                    None
                };
                let x = match fast {
                    Some(x) => x,
                    None if never_clipped => self.reference_monotone(t0, bits, bracket_s),
                    None => self.clipped_departure(t0, bits, bracket_s, true)?,
                };
                let ns = crate::time::round_ns(x * NS_PER_S as f64);
                Some(ns.max(t))
            }
        }
    }

    /// The departure of a never-clipped sum of sines, fast: Newton on the
    /// volume since `t0` written relative to `t0` (`newton`), with the phases
    /// at `t0` evaluated once. This is more accurate than the reference solve
    /// (no difference of two absolute integrals of size m·t, no 1e-11 s stop),
    /// but the reference's result, rounded to the ns, is what departure times
    /// have always been; so when the solution lies within the reference's
    /// error of a half ns — where the two could round apart — this returns
    /// None and the caller runs the reference solve. None also when Newton
    /// does not settle.
    ///
    /// Each start is the last departure, a packet's time later: the phases
    /// at it are the last start's turned by ωᵢ·(t0 − last) (`rotate`, a short
    /// series instead of a `sin_cos` of the whole phase), computed afresh
    /// every `ROTATIONS` starts. Their error stays some ulps of a phase, far
    /// below the reference's error bound that decides the fallback.
    fn monotone_departure(&mut self, t0: f64, bits: f64) -> Option<f64> {
        let &mut Shape::Sines {
            ref terms,
            ref mut at0,
            ref mut at0_from,
            bracket_s,
            ..
        } = self
        else {
            unreachable!()
        };
        let (from, left) = *at0_from;
        let step = t0 - from;
        // (NaN before the first start: computed afresh; within a bracket,
        // every term turns by less than 2π/32)
        if left > 0 && step >= 0.0 && step <= bracket_s {
            for (s, sc) in terms.iter().zip(at0.iter_mut()) {
                *sc = rotate(*sc, s.omega * step);
            }
            *at0_from = (t0, left - 1);
        } else {
            phases_at(terms, at0, t0);
            *at0_from = (t0, ROTATIONS);
        }
        self.solve_at(t0, bits, f64::INFINITY, 0.0)
    }

    /// Newton for the volume `need` from `start` (within `limit` s of it),
    /// the phases at `start` evaluated once; None if Newton does not settle
    /// or the result lies within the reference's error of a half ns (the
    /// error grows with the `brackets` the reference walked).
    fn solve_from(&mut self, start: f64, need: f64, limit: f64, brackets: f64) -> Option<f64> {
        let Shape::Sines {
            terms,
            at0,
            at0_from,
            ..
        } = self
        else {
            unreachable!()
        };
        phases_at(terms, at0, start);
        *at0_from = (f64::NAN, 0);
        self.solve_at(start, need, limit, brackets)
    }

    /// `solve_from` with the phases at `start` in `at0`.
    #[inline]
    fn solve_at(&mut self, start: f64, need: f64, limit: f64, brackets: f64) -> Option<f64> {
        let &mut Shape::Sines {
            offset_bps,
            ref terms,
            ref at0,
            bracket_s,
            ..
        } = self
        else {
            unreachable!()
        };
        let (d, r) = newton(offset_bps, terms, at0, need, limit, 8.0 * bracket_s)?;
        let x = start + d;
        (!near_half_ns(x, self.noise_s(x, r, brackets))).then_some(x)
    }

    fn has_humps(&self) -> bool {
        matches!(self, Shape::Sines { humps: Some(_), .. })
    }

    /// The departure of one clipped sine (`Humps`), fast: the volume left in
    /// the current positive stretch, whole stretches skipped by their
    /// volume, and Newton inside the stretch where the packet completes.
    /// None near a half ns, as `monotone_departure`.
    fn hump_departure(&mut self, t0: f64, bits: f64) -> Option<f64> {
        let &mut Shape::Sines {
            offset_bps,
            ref terms,
            ref mut at0,
            humps: Some(h),
            bracket_s,
            ..
        } = self
        else {
            unreachable!()
        };
        let s = terms[0];
        let theta0 = s.omega * t0 + s.phase;
        // phase since the start of the current (or last) positive stretch
        let psi = (theta0 - h.start_phase).rem_euclid(2.0 * PI);
        let mut need = bits;
        let mut start = if psi < h.width {
            at0[0] = theta0.sin_cos();
            let len = (h.width - psi) / s.omega;
            let left = stretch_volume(offset_bps, s, at0[0], len);
            if left >= need {
                let (d, r) = newton(offset_bps, terms, at0, need, len, 8.0 * bracket_s)?;
                let x = t0 + d;
                return (!near_half_ns(x, self.noise_s(x, r, d / bracket_s))).then_some(x);
            }
            need -= left;
            (2.0 * PI - psi) / s.omega
        } else {
            (2.0 * PI - psi) / s.omega
        };
        let period = 2.0 * PI / s.omega;
        let whole = ((need / h.volume).ceil() - 1.0).max(0.0);
        need -= whole * h.volume;
        start += whole * period;
        at0[0] = h.start_sc;
        let (d, r) = newton(
            offset_bps,
            terms,
            at0,
            need,
            h.width / s.omega,
            8.0 * bracket_s,
        )?;
        let x = t0 + start + d;
        (!near_half_ns(x, self.noise_s(x, r, (start + d) / bracket_s))).then_some(x)
    }

    /// A bound on how far the reference solve's result can lie from the true
    /// root `x` (rate `r` there), seconds: it stops once its bracket is
    /// narrower than `SOLVE_TOL` and returns one end, and its bracket can miss
    /// the root by the rounding noise of the absolute integrals it
    /// differences, F ≈ m·x + Σ aᵢ/ωᵢ·cos(ωᵢx + φᵢ) (ulp of F, and of the
    /// phase ωᵢx, times aᵢ/ωᵢ), divided by the rate — once more for each of
    /// the `brackets` a clipped walk subtracts from the volume it still
    /// needs; plus ulps of x. The factor on the noise is far above what was
    /// measured (bench/NOTES.md).
    fn noise_s(&self, x: f64, r: f64, brackets: f64) -> f64 {
        let Shape::Sines {
            offset_bps, terms, ..
        } = self
        else {
            unreachable!()
        };
        let mut scale = offset_bps.abs() * x;
        for s in terms {
            scale += s.amp_bps.abs() * (x + 1.0 / s.omega);
        }
        SOLVE_TOL
            + NOISE_FACTOR * (2.0 + brackets) * scale * f64::EPSILON / r
            + 4.0 * x * f64::EPSILON
    }

    /// The reference solve of a never-clipped sum of sines: bracket by
    /// doubling, then `solve` on the absolute integral.
    fn reference_monotone(&self, t0: f64, bits: f64, bracket_s: f64) -> f64 {
        let f0 = self.integral_s(t0);
        let mut hi = t0 + bracket_s;
        while self.integral_s(hi) - f0 < bits {
            hi = t0 + 2.0 * (hi - t0);
        }
        self.solve(t0, hi, f0 + bits)
    }

    /// Walk brackets from `t0`, integrating only where the rate is positive.
    /// With `fast`, the walk is the same (the same brackets, crossings and
    /// volumes, each integral at a bracket's start reused from the end of the
    /// one before: bit for bit the same values), but the last solve is
    /// `walk_solve` where that is safe.
    fn clipped_departure(&mut self, t0: f64, bits: f64, h: f64, fast: bool) -> Option<f64> {
        let mut need = bits;
        let mut u = t0;
        let mut ru = self.rate_s(u);
        // (x, F(x)) at the end of the last bracket integrated
        let mut last = (f64::NAN, 0.0);
        // A shape that validated has a positive mean, so positive stretches
        // recur; the cap only guards against a pathological table.
        for k in 0..100_000_000u64 {
            let v = u + h;
            let rv = self.rate_s(v);
            if ru > 0.0 || rv > 0.0 {
                let (a, b) = if ru > 0.0 && rv > 0.0 {
                    (u, v)
                } else if ru > 0.0 {
                    (u, self.zero_crossing(u, v, true))
                } else {
                    (self.zero_crossing(u, v, false), v)
                };
                let fa = if a == last.0 {
                    last.1
                } else {
                    self.integral_s(a)
                };
                let fb = self.integral_s(b);
                last = (b, fb);
                let got = fb - fa;
                if got >= need {
                    if fast && ru > 0.0 && rv > 0.0 {
                        if let Some(x) = self.walk_solve(a, b, ru.min(rv), need, k as f64) {
                            return Some(x);
                        }
                    }
                    return Some(self.solve(a, b, fa + need));
                }
                need -= got;
            }
            u = v;
            ru = rv;
        }
        None
    }

    /// The last solve of the bracket walk, fast: Newton relative to the
    /// bracket's start `a` for the volume `need`, as `monotone_departure`.
    /// Only for a bracket whose rate is positive throughout, so that the
    /// volume is increasing and has one root, the reference's too: the rate
    /// is at least min(r(a), r(b)) − |r″|max·(b − a)²/8 there (`r_ends` is
    /// that min). None near a half ns (the reference's error grows with the
    /// `brackets` walked) or if Newton does not settle.
    fn walk_solve(&mut self, a: f64, b: f64, r_ends: f64, need: f64, brackets: f64) -> Option<f64> {
        let Shape::Sines { terms, .. } = &*self else {
            unreachable!()
        };
        let ddr_max: f64 = terms
            .iter()
            .map(|s| (s.amp_bps * s.omega * s.omega).abs())
            .sum();
        if r_ends - ddr_max * (b - a) * (b - a) / 8.0 <= 0.0 {
            return None;
        }
        self.solve_from(a, need, b - a, brackets)
    }

    /// The sign change of the rate in [u, v]: exactly one end is positive,
    /// `u`'s if `up`.
    fn zero_crossing(&self, mut u: f64, mut v: f64, up: bool) -> f64 {
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
            // (the integral and the rate at x from one `sin_cos` per term:
            // the same values as `integral_s` and `rate_s`, which run the
            // library's cos and sin apart; the rate is unused only at the
            // last of ~7 steps)
            let (f, r) = self.integral_and_rate_s(x);
            let g = f - target;
            if g > 0.0 {
                b = x;
            } else {
                a = x;
            }
            if b - a < SOLVE_TOL || g == 0.0 {
                break;
            }
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

/// The positive stretches ("humps") of one clipped sine m + a·sin θ, |a| > m:
/// where the phase θ is in (start_phase, start_phase + width) mod 2π.
#[derive(Clone, Copy, Debug)]
pub struct Humps {
    start_phase: f64,
    /// (sin, cos) of `start_phase`.
    start_sc: (f64, f64),
    /// Angular length of a positive stretch, rad.
    width: f64,
    /// Bits sent in one whole positive stretch.
    volume: f64,
}

impl Humps {
    /// None when a silence or a positive stretch is shorter than two brackets
    /// of the reference walk: such a shape keeps the walk, whose brackets can
    /// then hold both ends of one and treat it as the other.
    fn new(m: f64, s: Sine, bracket_s: f64) -> Option<Self> {
        let a = s.amp_bps.abs();
        // m + a sin u > 0 for u in (α, π − α), α = asin(−m/a); a < 0 shifts by π
        let alpha = (-m / a).clamp(-1.0, 1.0).asin();
        let start_phase = if s.amp_bps > 0.0 { alpha } else { alpha - PI };
        let width = PI - 2.0 * alpha;
        let bracket = s.omega * bracket_s;
        if !(width > 2.0 * bracket && 2.0 * PI - width > 2.0 * bracket) {
            return None;
        }
        let start_sc = start_phase.sin_cos();
        Some(Humps {
            start_phase,
            start_sc,
            width,
            volume: stretch_volume(m, s, start_sc, width / s.omega),
        })
    }
}

/// Starts of the never-clipped solve whose phases are turned on from the
/// last start's (`rotate`) before they are computed afresh with `sin_cos`.
const ROTATIONS: u32 = 63;

/// (sin θᵢ, cos θᵢ) of each term at `t` s, into `at0`.
#[inline]
fn phases_at(terms: &[Sine], at0: &mut [(f64, f64)], t: f64) {
    for (s, sc) in terms.iter().zip(at0.iter_mut()) {
        *sc = (s.omega * t + s.phase).sin_cos();
    }
}

/// (sin(θ + u), cos(θ + u)) from (sin θ, cos θ) = `sc`, for |u| ≤ 1.
#[inline]
fn rotate((s, c): (f64, f64), u: f64) -> (f64, f64) {
    let (su, vu) = sin_versin(u);
    (s + (c * su - s * vu), c - (s * su + c * vu))
}

/// ∫ over [t, t + d] of m + a·sin(θ + ωu) du, where (sin θ, cos θ) = `sc`.
#[inline]
fn stretch_volume(m: f64, s: Sine, sc: (f64, f64), d: f64) -> f64 {
    let (su, vu) = sin_versin(s.omega * d);
    m * d + s.amp_bps / s.omega * (sc.1 * vu + sc.0 * su)
}

/// (sin u, 1 − cos u). For |u| ≤ 1 — the phase advance over one packet in
/// nearly every step of a departure solve — by their Taylor series to u²¹
/// and u²² (truncation below 1e-19, and 1 − cos u without cancellation):
/// a third of the cost of the library's sincos on large arguments.
#[inline]
fn sin_versin(u: f64) -> (f64, f64) {
    if u.abs() > 1.0 {
        let (s, c) = u.sin_cos();
        return (s, 1.0 - c);
    }
    let x = u * u;
    if x <= 1.0 / 256.0 {
        // |u| ≤ 1/16 (a packet's turn of the phase, below ~10 Hz): to u¹¹
        // and u¹², the next terms below 1e-20 of the sums
        let ps = (((S[4] * x + S[3]) * x + S[2]) * x + S[1]) * x + S[0];
        let pv = (((V[4] * x + V[3]) * x + V[2]) * x + V[1]) * x + V[0];
        return (u * ps, x * pv);
    }
    // sin u = u·Σ (−x)^k/(2k+1)!, 1 − cos u = x·Σ (−x)^k/(2k+2)!, k = 0..9
    const S: [f64; 10] = [
        1.0,
        -1.0 / 6.0,
        1.0 / 120.0,
        -1.0 / 5040.0,
        1.0 / 362880.0,
        -1.0 / 39916800.0,
        1.0 / 6227020800.0,
        -1.0 / 1307674368000.0,
        1.0 / 355687428096000.0,
        -1.0 / 121645100408832000.0,
    ];
    const V: [f64; 10] = [
        1.0 / 2.0,
        -1.0 / 24.0,
        1.0 / 720.0,
        -1.0 / 40320.0,
        1.0 / 3628800.0,
        -1.0 / 479001600.0,
        1.0 / 87178291200.0,
        -1.0 / 20922789888000.0,
        1.0 / 6402373705728000.0,
        -1.0 / 2432902008176640000.0,
    ];
    let (mut ps, mut pv) = (S[9], V[9]);
    for k in (0..9).rev() {
        ps = ps * x + S[k];
        pv = pv * x + V[k];
    }
    (u * ps, x * pv)
}

/// Solve G(Δ) = `need` for Δ in (0, `hi`], where
///   G(Δ) = mΔ + Σ aᵢ/ωᵢ·(cos θᵢ·(1 − cos ωᵢΔ) + sin θᵢ·sin ωᵢΔ)
/// is the volume sent since a time where (sin θᵢ, cos θᵢ) = `at0`, and the
/// rate m + Σ aᵢ sin(θᵢ + ωᵢΔ) is positive on (0, hi) (so G is increasing
/// there). Newton from a third-order start (r₀Δ + r₀′Δ²/2 + r₀″Δ³/6 = need,
/// approximately), kept inside a bracket of the root: a step out of it
/// bisects, none is longer than `max_step`. Usually one evaluation suffices:
/// the last step is taken without evaluating again once its error bound is
/// negligible. Returns Δ and the rate there; None if it does not settle.
fn newton(
    m: f64,
    terms: &[Sine],
    at0: &[(f64, f64)],
    need: f64,
    hi: f64,
    max_step: f64,
) -> Option<(f64, f64)> {
    let want = (need, hi, max_step);
    // one sine (paper A's shapes): the same sums, with the loops over
    // the terms unrolled
    match (terms, at0) {
        ([s], [sc]) => newton_of(m, std::slice::from_ref(s), std::slice::from_ref(sc), want),
        _ => newton_of(m, terms, at0, want),
    }
}

/// `newton`, inlined into it for one term and for any number; `want` is
/// (need, hi, max_step).
#[inline(always)]
fn newton_of(
    m: f64,
    terms: &[Sine],
    at0: &[(f64, f64)],
    (need, hi, max_step): (f64, f64, f64),
) -> Option<(f64, f64)> {
    // rate, its first two derivatives at the start, and a bound on |r′|
    let (mut r0, mut dr0, mut ddr0, mut dr_max) = (m, 0.0, 0.0, 0.0);
    for (s, &(s0, c0)) in terms.iter().zip(at0) {
        r0 += s.amp_bps * s0;
        dr0 += s.amp_bps * s.omega * c0;
        ddr0 -= s.amp_bps * s.omega * s.omega * s0;
        dr_max += (s.amp_bps * s.omega).abs();
    }
    // third-order start: the root of r₀Δ + r₀′Δ²/2 = need, then one
    // correction for the r₀″Δ³/6 term; where the rate changes little over
    // the packet (|r₀′u/r₀|, |r₀″u²/r₀| ≤ 1/64, u = need/r₀: nearly always),
    // the root of the cubic by its series in u instead, Δ = u − (a₁/2)u² +
    // (a₁²/2 − a₂/6)u³ with aₖ = r₀⁽ᵏ⁾/r₀ (one division, no square root on
    // the departure's chain of dependent steps; Newton then corrects the
    // O(u⁴) rest as it corrects the other start's)
    let inv = 1.0 / r0;
    let (u, a1, a2) = (need * inv, dr0 * inv, ddr0 * inv);
    let disc = r0 * r0 + 2.0 * dr0 * need;
    let mut d = if r0 > 0.0 && (a1 * u).abs() <= 1.0 / 64.0 && (a2 * u * u).abs() <= 1.0 / 64.0 {
        u * (1.0 + u * (-0.5 * a1 + u * (0.5 * a1 * a1 - a2 * (1.0 / 6.0))))
    } else if disc > 0.0 && r0 + disc.sqrt() > 0.0 {
        let d2 = 2.0 * need / (r0 + disc.sqrt());
        let slope = r0 + dr0 * d2;
        if slope > 0.0 {
            d2 - ddr0 * d2 * d2 * d2 / (6.0 * slope)
        } else {
            d2
        }
    } else {
        max_step
    };
    if !(d > 0.0) {
        d = max_step;
    }
    let (mut lo, mut hi) = (0.0f64, hi);
    d = d.min(max_step).min(hi);
    for _ in 0..MAX_NEWTON {
        let (mut g, mut r) = (m * d - need, m);
        for (s, &(s0, c0)) in terms.iter().zip(at0) {
            let (su, vu) = sin_versin(s.omega * d);
            g += s.amp_bps / s.omega * (c0 * vu + s0 * su);
            r += s.amp_bps * (s0 * (1.0 - vu) + c0 * su);
        }
        if g < 0.0 {
            lo = d;
        } else {
            hi = d;
        }
        let step = g / r;
        // Newton's error after this step is about |r′|max/(2r)·step²: stop
        // when that is below 1e-15 s (the callers' slack is over 1e-11 s)
        if r > 0.0 && dr_max * step * step <= 2e-15 * r && step.abs() < 1e-6 {
            return Some((d - step, r));
        }
        let next = d - step;
        d = if r > 0.0 && next > lo && next < hi && (next - d).abs() <= max_step {
            next
        } else if hi.is_finite() {
            0.5 * (lo + hi)
        } else {
            lo + max_step
        };
    }
    None
}

/// Newton steps of the fast departure solve before it gives up (and the
/// reference solve runs).
const MAX_NEWTON: usize = 40;

/// The reference solve stops once its bracket is narrower than this, seconds.
const SOLVE_TOL: f64 = 1e-11;

/// Safety factor of `Shape::noise_s` over the reference solver's rounding noise.
const NOISE_FACTOR: f64 = 16.0;

/// Whether `x` seconds lies within `noise` seconds of a half ns, where a
/// result that close could round to either neighbouring ns.
#[inline]
fn near_half_ns(x: f64, noise: f64) -> bool {
    let y = x * NS_PER_S as f64;
    // y's fraction, y − ⌊y⌋, without the library's `floor` where it can
    let frac = match crate::time::whole_and_fraction_ns(y) {
        Some((_, f)) => f,
        None => y - y.floor(),
    };
    (frac - 0.5).abs() <= noise * NS_PER_S as f64
}

/// A piecewise-linear rate through (tᵢ, rᵢ), tᵢ nondecreasing from 0 (two
/// equal times make a step). After the last point the table repeats (period
/// = last time) or the last rate holds.
#[derive(Clone, Debug)]
pub struct Piecewise {
    t: Vec<f64>,
    r: Vec<f64>,
    /// ∫₀^tᵢ r, bits.
    cum: Vec<f64>,
    repeat: bool,
}

impl Piecewise {
    /// A planned table: (t_ns, bit/s) points.
    pub fn from_plan(points: &[(SimTime, f64)], repeat: bool) -> Self {
        Piecewise::new(
            points
                .iter()
                .map(|p| p.0 as f64 / NS_PER_S as f64)
                .collect(),
            points.iter().map(|p| p.1.max(0.0)).collect(),
            repeat,
        )
    }

    pub fn new(t: Vec<f64>, r: Vec<f64>, repeat: bool) -> Self {
        let mut cum = vec![0.0; t.len()];
        for i in 1..t.len() {
            cum[i] = cum[i - 1] + 0.5 * (r[i - 1] + r[i]) * (t[i] - t[i - 1]);
        }
        let repeat = repeat && *t.last().unwrap_or(&0.0) > 0.0;
        Piecewise { t, r, cum, repeat }
    }

    fn period(&self) -> f64 {
        *self.t.last().unwrap()
    }

    /// Rate at `x` seconds (x ≥ 0); at a step, the rate after it.
    pub fn rate_s(&self, x: f64) -> f64 {
        let x = if self.repeat {
            x.rem_euclid(self.period())
        } else {
            x
        };
        let j = self.t.partition_point(|&ti| ti <= x);
        if j >= self.t.len() {
            return *self.r.last().unwrap();
        }
        let i = j.max(1) - 1;
        let dt = self.t[j] - self.t[i];
        if dt <= 0.0 {
            return self.r[j];
        }
        self.r[i] + (self.r[j] - self.r[i]) * (x - self.t[i]) / dt
    }

    /// ∫₀ˣ r within one table (x ≥ 0; past the end the last rate holds).
    fn table_integral(&self, x: f64) -> f64 {
        let n = self.t.len();
        let j = self.t.partition_point(|&ti| ti <= x);
        if j >= n {
            return self.cum[n - 1] + self.r[n - 1] * (x - self.t[n - 1]);
        }
        let i = j.max(1) - 1;
        let dx = x - self.t[i];
        let dt = self.t[j] - self.t[i];
        let slope = if dt > 0.0 {
            (self.r[j] - self.r[i]) / dt
        } else {
            0.0
        };
        self.cum[i] + self.r[i] * dx + 0.5 * slope * dx * dx
    }

    /// ∫₀ˣ r, bits.
    pub fn integral_s(&self, x: f64) -> f64 {
        if self.repeat {
            let p = self.period();
            let k = (x / p).floor();
            k * self.cum[self.cum.len() - 1] + self.table_integral(x - k * p)
        } else {
            self.table_integral(x)
        }
    }

    /// The x with ∫₀ˣ r = v within one table (0 ≤ v; None if never).
    fn table_inverse(&self, v: f64) -> Option<f64> {
        let n = self.t.len();
        let total = self.cum[n - 1];
        if v > total {
            let last = self.r[n - 1];
            return (last > 0.0).then(|| self.t[n - 1] + (v - total) / last);
        }
        // first point whose cumulative volume reaches v; the segment before
        // it has a positive volume and holds the answer
        let j = self.cum.partition_point(|&c| c < v);
        if j == 0 {
            return Some(0.0);
        }
        let i = j - 1;
        let need = v - self.cum[i];
        let dt = self.t[j] - self.t[i];
        let slope = (self.r[j] - self.r[i]) / dt;
        // r_i·x + slope·x²/2 = need, the root in [0, dt] in its stable form
        let disc = (self.r[i] * self.r[i] + 2.0 * slope * need).max(0.0);
        let den = self.r[i] + disc.sqrt();
        let x = if den > 0.0 { 2.0 * need / den } else { 0.0 };
        Some(self.t[i] + x.clamp(0.0, dt))
    }

    /// The x with ∫₀ˣ r = v.
    fn inverse(&self, v: f64) -> Option<f64> {
        if !self.repeat {
            return self.table_inverse(v);
        }
        let (p, total) = (self.period(), self.cum[self.cum.len() - 1]);
        let mut k = (v / total).floor();
        let mut rem = v - k * total;
        if rem <= 0.0 && k > 0.0 {
            // exactly a period's end: the end of the previous period, not
            // the start of the next (which may be a silent stretch later)
            k -= 1.0;
            rem += total;
        }
        Some(k * p + self.table_inverse(rem)?)
    }

    pub fn next_departure(&self, t: SimTime, bits: f64) -> Option<SimTime> {
        let t0 = t as f64 / NS_PER_S as f64;
        let x = self.inverse(self.integral_s(t0) + bits)?;
        Some(((x * NS_PER_S as f64).round() as SimTime).max(t))
    }

    /// Long-run mean: over one period, or the rate after the table.
    pub fn mean_bps(&self) -> f64 {
        if self.repeat {
            self.cum[self.cum.len() - 1] / self.period()
        } else {
            *self.r.last().unwrap()
        }
    }

    /// Exact mean over simulation time [a, b].
    pub fn mean_between(&self, a: SimTime, b: SimTime) -> f64 {
        let (x, y) = (a as f64 / NS_PER_S as f64, b as f64 / NS_PER_S as f64);
        (self.integral_s(y) - self.integral_s(x)) / (y - x)
    }
}

/// Lengths of on or off periods, seconds.
#[derive(Clone, Copy, Debug)]
pub enum Period {
    Fixed(f64),
    Exponential(f64),
    /// Scale x_m and shape α: P(X > x) = (x_m/x)^α, mean α·x_m/(α−1).
    Pareto {
        scale: f64,
        alpha: f64,
    },
}

impl Period {
    pub fn from_plan(p: &PeriodPlan) -> Self {
        let mean = p.mean_ns as f64 / NS_PER_S as f64;
        match p.distribution {
            PeriodDistribution::Fixed => Period::Fixed(mean),
            PeriodDistribution::Exponential => Period::Exponential(mean),
            PeriodDistribution::Pareto => {
                let alpha = p.alpha.unwrap_or(1.5);
                Period::Pareto {
                    scale: mean * (alpha - 1.0) / alpha,
                    alpha,
                }
            }
        }
    }

    pub fn mean(&self) -> f64 {
        match *self {
            Period::Fixed(m) | Period::Exponential(m) => m,
            Period::Pareto { scale, alpha } => alpha * scale / (alpha - 1.0),
        }
    }

    /// One period length, seconds (inverse transform: 1 − U is in (0, 1]).
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        match *self {
            Period::Fixed(m) => m,
            Period::Exponential(m) => -m * (1.0 - rng.uniform()).ln(),
            Period::Pareto { scale, alpha } => scale / (1.0 - rng.uniform()).powf(1.0 / alpha),
        }
    }
}

/// Constant rate during on periods, silence during off periods. The first
/// on period begins at the flow's first packet.
#[derive(Clone, Debug)]
pub struct OnOff {
    pub bps: f64,
    pub on_len: Period,
    pub off_len: Period,
    rng: Rng,
    started: bool,
    /// In an on period (else off).
    on: bool,
    /// End of the current period, seconds of simulation time.
    until: f64,
}

impl OnOff {
    pub fn new(bps: f64, on_len: Period, off_len: Period, rng: Rng) -> Self {
        OnOff {
            bps,
            on_len,
            off_len,
            rng,
            started: false,
            on: true,
            until: 0.0,
        }
    }

    /// When `bits` more have been sent at `bps` during on periods from `t`.
    pub fn next_departure(&mut self, t: SimTime, bits: f64) -> SimTime {
        let mut x = t as f64 / NS_PER_S as f64;
        if !self.started {
            self.started = true;
            self.on = true;
            self.until = x + self.on_len.draw(&mut self.rng);
        }
        let mut need = bits / self.bps; // seconds of on time
        loop {
            if x >= self.until {
                self.on = !self.on;
                let len = if self.on {
                    self.on_len.draw(&mut self.rng)
                } else {
                    self.off_len.draw(&mut self.rng)
                };
                // A period shorter than the clock's resolution at this time (a
                // nanosecond is below the ulp of seconds past ~10^7 s) would not
                // move `until`: the loop must still advance (it hung here).
                let next = self.until + len;
                self.until = if next > self.until {
                    next
                } else {
                    self.until.next_up()
                };
                continue;
            }
            if !self.on {
                x = self.until;
                continue;
            }
            if self.until - x >= need {
                x += need;
                break;
            }
            need -= self.until - x;
            x = self.until;
        }
        ((x * NS_PER_S as f64).round() as SimTime).max(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow starting at 10^8 s with nanosecond on/off periods: adding a
    /// nanosecond to 10^8 s changes nothing in f64, and the period loop
    /// spun forever inside one event (Ctrl-C could not stop it either).
    #[test]
    fn periods_below_the_clock_resolution_still_end() {
        let fixed = Period::Fixed(1e-9);
        let mut s = OnOff::new(0.5e6, fixed.clone(), fixed, Rng::stream(1, 0, 0));
        let t0: SimTime = 100_000_000 * NS_PER_S;
        let mut t = t0;
        for _ in 0..10 {
            let next = s.next_departure(t, 8000.0);
            assert!(next >= t);
            t = next;
        }
        // half the time on: 10 packets of 16 ms at 0.5 Mb/s take about 0.32 s
        let took = (t - t0) as f64 / NS_PER_S as f64;
        assert!((0.2..0.5).contains(&took), "{took}");
    }

    #[test]
    fn constant_rate_paces_exactly() {
        let mut s = Shape::Constant { bps: 0.5e6 };
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
    fn check_counts(s: &mut Shape, bits: f64, span_s: f64, bins: usize) {
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
                .map(|i| s.rate_at(((lo + (i as f64 + 0.5) * w / m as f64) * 1e9) as SimTime))
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
            check_counts(&mut sine(0.5e6, 0.5e6, f), 8000.0, 5.0 / f.min(1.0), 40);
        }
    }

    #[test]
    fn clipped_sine_is_silent_below_zero() {
        // a > m: silent for part of each period; mean from the closed form
        let mut s = sine(0.2e6, 0.5e6, 1.0);
        check_counts(&mut s, 8000.0, 4.0, 80);
        let mean_numeric: f64 = (0..100_000)
            .map(|i| s.rate_s(i as f64 * 1e-5).max(0.0))
            .sum::<f64>()
            / 100_000.0;
        assert!((s.mean_bps() - mean_numeric).abs() < 1e-3 * mean_numeric);
    }

    #[test]
    fn sum_of_sines_is_paced_by_its_integral() {
        let mut s = Shape::sines(
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
        check_counts(&mut s, 8000.0, 10.0, 100);
    }

    /// Shapes that take the fast paths: never-clipped sines (touching zero
    /// or not, one or two terms), single clipped sines (either sign of the
    /// amplitude, a phase), clipped sums of sines.
    fn fast_shapes() -> Vec<(String, Shape)> {
        let one = |m: f64, a: f64, f: f64, phase: f64| {
            Shape::sines(
                m,
                vec![Sine {
                    amp_bps: a,
                    omega: 2.0 * PI * f,
                    phase,
                }],
            )
        };
        let mut out = Vec::new();
        for f in [0.05, 0.4, 3.0, 10.0] {
            out.push((format!("m = a, f = {f}"), one(0.5e6, 0.5e6, f, 0.0)));
        }
        out.push(("m > a, phase".into(), one(0.5e6, 0.2e6, 0.7, 2.0)));
        for (a, f) in [
            (0.6e6, 0.1),
            (1e6, 1.0),
            (2e6, 7.0),
            (-1e6, 0.4),
            (2e6, 40.0),
        ] {
            out.push((format!("clipped a = {a}, f = {f}"), one(0.5e6, a, f, 0.7)));
        }
        let two = |off: f64| {
            Shape::sines(
                off,
                vec![
                    Sine {
                        amp_bps: 0.3e6,
                        omega: 2.0 * PI * 0.4,
                        phase: 0.0,
                    },
                    Sine {
                        amp_bps: 0.2e6,
                        omega: 2.0 * PI * 2.0,
                        phase: 0.5,
                    },
                ],
            )
        };
        out.push(("two sines touching".into(), two(0.5e6)));
        out.push(("two sines above".into(), two(1e6)));
        // clipped sums of sines keep the bracket walk; its last solve is fast
        out.push(("two sines clipped".into(), two(0.25e6)));
        out.push(("two sines clipped low".into(), two(0.1e6)));
        out
    }

    /// The reference solve alone (bracket doubling or bracket walk, Newton
    /// on the absolute integral): what departures were before the fast paths.
    fn reference_departure(s: &Shape, t: SimTime, bits: f64) -> Option<SimTime> {
        let &Shape::Sines {
            bracket_s,
            never_clipped,
            ..
        } = s
        else {
            unreachable!()
        };
        let t0 = t as f64 / NS_PER_S as f64;
        let x = if never_clipped {
            s.reference_monotone(t0, bits, bracket_s)
        } else {
            s.clone().clipped_departure(t0, bits, bracket_s, false)?
        };
        Some(((x * NS_PER_S as f64).round() as SimTime).max(t))
    }

    #[test]
    fn series_sin_and_versin_match_the_library() {
        for i in -1200..=1200 {
            let u = i as f64 * 1e-3 + 1e-7;
            let (s, v) = sin_versin(u);
            assert!(
                (s - u.sin()).abs() <= 4.0 * f64::EPSILON * u.sin().abs(),
                "{u}"
            );
            // 1 − cos u against 2 sin²(u/2), which has no cancellation
            let v_ref = 2.0 * (0.5 * u).sin().powi(2);
            assert!(
                (v - v_ref).abs() <= 8.0 * f64::EPSILON * v_ref,
                "{u}: {v} {v_ref}"
            );
        }
    }

    #[test]
    fn phases_rotated_for_a_stretch_of_starts_stay_those_of_sin_cos() {
        // the never-clipped solve turns its phases on `ROTATIONS` times
        // between two `sin_cos`: steps of one packet at a few rates
        for (omega, step) in [(0.415f64, 1.6e-3), (2.5, 8e-4), (62.8, 9.7e-4), (0.3, 0.9)] {
            let theta0: f64 = 1.23;
            let mut sc = theta0.sin_cos();
            for k in 1..=ROTATIONS {
                sc = rotate(sc, omega * step);
                let want = (theta0 + omega * step * k as f64).sin_cos();
                let err = (sc.0 - want.0).abs().max((sc.1 - want.1).abs());
                assert!(err < 1e-14, "ω = {omega}, step {k}: {err:e}");
            }
        }
    }

    #[test]
    fn fast_departures_round_exactly_as_the_reference_solve() {
        // bench/udp_identical.py checks this over 27 M departures of every
        // shaped scenario; here a sample, early in a run and late (where the
        // reference's absolute integrals are large and noisy)
        for (name, mut s) in fast_shapes() {
            // 150 000 bits span several positive stretches of the 40 Hz sine
            for (start, bits, n) in [
                (0, 8000.0, 4000),
                (987_654_321_000, 4000.0, 4000),
                (1_800_000_000_000, 12000.0, 4000),
                (5_000_000_000, 150_000.0, 500),
            ] {
                let mut t = start;
                for i in 0..n {
                    let want = reference_departure(&s, t, bits);
                    let got = s.next_departure(t, bits);
                    assert_eq!(got, want, "{name}: departure {i} after t = {t} ns");
                    t = got.unwrap();
                }
            }
        }
    }

    #[test]
    fn each_departure_completes_its_packet_volume() {
        // An independent check of every departure: the clipped rate's volume
        // from one departure to the next, computed by the antiderivative
        // written out here over the positive stretches (zero crossings found
        // by a 0.1 ms scan and bisection), brackets the packet's size within
        // the ns rounding: V(t_i, t_i+1 − 0.51 ns) ≤ bits ≤ V(t_i, t_i+1 + 0.51 ns),
        // up to 1e-6 bits of rounding noise in V.
        fn terms_of(s: &Shape) -> (f64, Vec<Sine>) {
            let Shape::Sines {
                offset_bps, terms, ..
            } = s
            else {
                unreachable!()
            };
            (*offset_bps, terms.clone())
        }
        fn volume(m: f64, terms: &[Sine], a: f64, b: f64) -> f64 {
            let rate = |t: f64| {
                m + terms
                    .iter()
                    .map(|s| s.amp_bps * (s.omega * t + s.phase).sin())
                    .sum::<f64>()
            };
            let anti = |t: f64| {
                m * t
                    - terms
                        .iter()
                        .map(|s| s.amp_bps / s.omega * (s.omega * t + s.phase).cos())
                        .sum::<f64>()
            };
            let crossing = |mut u: f64, mut v: f64| {
                let up = rate(u) > 0.0;
                for _ in 0..60 {
                    let c = 0.5 * (u + v);
                    if (rate(c) > 0.0) == up {
                        u = c
                    } else {
                        v = c
                    }
                }
                0.5 * (u + v)
            };
            let (mut total, mut u) = (0.0, a);
            let mut on_from = (rate(a) > 0.0).then_some(a);
            while u < b {
                let v = (u + 1e-4).min(b);
                match (on_from, rate(v) > 0.0) {
                    (None, true) => on_from = Some(crossing(u, v)),
                    (Some(s), false) => {
                        total += anti(crossing(u, v)) - anti(s);
                        on_from = None;
                    }
                    _ => {}
                }
                u = v;
            }
            if let Some(s) = on_from {
                total += anti(b) - anti(s);
            }
            total
        }
        for (name, mut s) in fast_shapes() {
            let (m, terms) = terms_of(&s);
            for (start, bits, n) in [
                (0, 8000.0, 1500),
                (987_654_321_000, 8000.0, 1500),
                (5_000_000_000, 150_000.0, 200),
            ] {
                let mut t = start;
                for i in 0..n {
                    let next = s.next_departure(t, bits).unwrap();
                    let (a, x) = (t as f64 / 1e9, next as f64 / 1e9);
                    let lo = volume(m, &terms, a, x - 0.51e-9);
                    let hi = volume(m, &terms, a, x + 0.51e-9);
                    assert!(
                        lo <= bits + 1e-6 && hi >= bits - 1e-6,
                        "{name}: departure {i} at {next} ns after {t}: volume {lo}..{hi}"
                    );
                    t = next;
                }
            }
        }
    }

    fn pw(points: &[(f64, f64)], repeat: bool) -> Shape {
        Shape::Piecewise(Piecewise::new(
            points.iter().map(|p| p.0).collect(),
            points.iter().map(|p| p.1).collect(),
            repeat,
        ))
    }

    #[test]
    fn piecewise_integral_is_the_trapezoid_sum() {
        let Shape::Piecewise(p) = pw(&[(0.0, 1e6), (10.0, 3e6), (10.0, 0.0), (12.0, 0.0)], true)
        else {
            unreachable!()
        };
        assert_eq!(p.integral_s(10.0), 20e6);
        assert_eq!(p.integral_s(12.0), 20e6);
        assert_eq!(p.integral_s(17.0), 20e6 + 5.0 * 1e6 + 0.5 * 5.0 * 1e6);
        assert_eq!(p.mean_bps(), 20e6 / 12.0);
        assert_eq!(p.rate_s(5.0), 2e6);
        assert_eq!(p.rate_s(11.0), 0.0);
        assert_eq!(p.rate_s(24.0 + 5.0), 2e6);
    }

    #[test]
    fn piecewise_ramps_steps_and_silences_are_paced_by_their_integral() {
        // a ramp up, a step down, a silence, a ramp down to 0; repeated
        let pts = [
            (0.0, 0.1e6),
            (3.0, 0.9e6),
            (3.0, 0.3e6),
            (4.0, 0.3e6),
            (4.0, 0.0),
            (5.0, 0.0),
            (7.0, 0.6e6),
            (8.0, 0.0),
        ];
        check_counts(&mut pw(&pts, true), 8000.0, 24.0, 96);
        check_counts(&mut pw(&pts, true), 12000.0, 24.0, 240);
        // without repeat the last rate (0) holds: nothing after t = 8 s
        let mut s = pw(&pts, false);
        let mut t = 0;
        let mut n = 0;
        while let Some(next) = s.next_departure(t, 8000.0) {
            t = next;
            n += 1;
        }
        assert!(t <= 8_000_000_000, "{t}");
        let Shape::Piecewise(p) = s else {
            unreachable!()
        };
        assert_eq!(n, (p.integral_s(8.0) / 8000.0).floor() as i32);
        // a constant table paces like a constant
        let mut c = pw(&[(0.0, 0.5e6)], false);
        assert_eq!(c.next_departure(0, 8000.0), Some(16_000_000));
    }

    fn onoff(on: Period, off: Period) -> OnOff {
        OnOff::new(1e6, on, off, Rng::stream(7, stream::UDP_SOURCE, 3))
    }

    /// Departures over `span_s`: mean rate and the on/off periods they reveal
    /// (a gap longer than 1.5 packet times is an off period).
    fn onoff_run(o: &mut OnOff, span_s: f64) -> (f64, Vec<f64>) {
        let bits = 1000.0; // 1 ms per packet at 1 Mb/s
        let mut t = 0u64;
        let mut n = 0u64;
        let mut offs = Vec::new();
        while (t as f64) < span_s * 1e9 {
            let next = o.next_departure(t, bits);
            let gap = (next - t) as f64 / 1e9;
            if gap > 1.5e-3 {
                offs.push(gap - 1e-3);
            }
            t = next;
            n += 1;
        }
        (n as f64 * bits / (t as f64 / 1e9), offs)
    }

    #[test]
    fn onoff_mean_rate_is_rate_times_on_share() {
        // fixed 0.3 s on / 0.7 s off: exactly 0.3 Mb/s, every gap 0.7 s
        let mut o = onoff(Period::Fixed(0.3), Period::Fixed(0.7));
        let (mean, offs) = onoff_run(&mut o, 100.0);
        assert!((mean - 0.3e6).abs() < 0.3e6 * 1e-3, "{mean}");
        assert!(
            offs.iter().all(|g| (g - 0.7).abs() < 1e-6),
            "{:?}",
            &offs[..3]
        );
        // exponential 1 s / 1 s over 20 000 s: 10 000 cycles; the share of
        // on time has σ ≈ 0.5·sqrt(2/10 000)/... ≈ 0.0035: allow 0.015
        let mut o = onoff(Period::Exponential(1.0), Period::Exponential(1.0));
        let (mean, offs) = onoff_run(&mut o, 20_000.0);
        assert!((mean - 0.5e6).abs() < 0.015e6, "{mean}");
        let m_off = offs.iter().sum::<f64>() / offs.len() as f64;
        // gaps below 0.5 ms are not seen as off periods: E[X | X > 0.5ms] − ...
        // is within 0.001 s of 1 s; σ of the mean of ~10 000 ≈ 0.01
        assert!((m_off - 1.0).abs() < 0.04, "{m_off}");
    }

    #[test]
    fn pareto_periods_have_the_mean_they_are_given() {
        // α = 2.5 has a finite variance (σ² = x_m²α/((α−1)²(α−2)) = 1.25·0.36);
        // the mean of 200 000 draws has σ ≈ 0.0025 → allow 0.015
        let p = Period::Pareto {
            scale: 0.6,
            alpha: 2.5,
        };
        assert!((p.mean() - 1.0).abs() < 1e-12);
        let mut rng = Rng::stream(1, stream::UDP_SOURCE, 0);
        let draws: Vec<f64> = (0..200_000).map(|_| p.draw(&mut rng)).collect();
        let m = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((m - 1.0).abs() < 0.015, "{m}");
        assert!(draws.iter().all(|&x| x >= 0.6));
        // tail: P(X > 2) = (0.6/2)^2.5 = 0.0493; σ ≈ 0.0005
        let tail = draws.iter().filter(|&&x| x > 2.0).count() as f64 / draws.len() as f64;
        assert!((tail - 0.3f64.powf(2.5)).abs() < 0.002, "{tail}");
        let e = Period::Exponential(0.5);
        let m = (0..200_000).map(|_| e.draw(&mut rng)).sum::<f64>() / 200_000.0;
        assert!((m - 0.5).abs() < 0.005, "{m}"); // σ ≈ 0.0011
                                                 // an on/off source with Pareto periods (α = 1.5, heavy tail) still
                                                 // averages to rate·on/(on + off) over a long run: here within 5 %
        let mut o = onoff(
            Period::from_plan(&PeriodPlan {
                distribution: PeriodDistribution::Pareto,
                mean_ns: 200_000_000,
                alpha: Some(1.5),
            }),
            Period::Exponential(0.2),
        );
        let (mean, _) = onoff_run(&mut o, 20_000.0);
        assert!((mean - 0.5e6).abs() < 0.025e6, "{mean}");
    }
}
