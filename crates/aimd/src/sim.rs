//! The event-driven simulation of eqs. (2)–(4): between link congestion times every
//! rate is linear, so the state jumps from one congestion event to the next and the
//! time integrals of xᵢ, xᵢ², Σxᵢ and (Σxᵢ)² over each segment are exact polynomials.

use crate::beatdown;
use crate::policy::{argmax, draw_subset, draw_weighted, first_cut_cdf, Policy, Tag};
use crate::rng::Rng;
use crate::stats::ratio_ci95;

/// A run of the hybrid AIMD model.
#[derive(Clone, Debug)]
pub struct Config {
    /// Link capacity c (rates are reported normalized by it).
    pub capacity: f64,
    /// Additive-increase rates ηᵢ > 0 (rate units per time unit), one per connection.
    pub eta: Vec<f64>,
    /// Multiplicative-decrease factors 0 < βᵢ < 1.
    pub beta: Vec<f64>,
    pub policy: Policy,
    /// Congestion events measured (for beatdown: tag times, Sec. IV.B).
    pub events: u64,
    /// Congestion events simulated and discarded before measuring.
    pub warmup: u64,
    pub seed: u64,
    /// Batches for the batch-means confidence intervals (≥ 2, ≤ events).
    pub batches: usize,
    /// Rates at time 0 (Σ ≤ c); `None` starts every connection at 0.
    pub initial: Option<Vec<f64>>,
    /// Record the sample path over the first this many measured events.
    pub trace_events: usize,
    /// Bins over [0, c] of the histogram of rates just before congestion events.
    pub histogram_bins: usize,
}

impl Config {
    /// N identical connections (η = 1, c = 1) — the setting of Theorem 1.
    pub fn homogeneous(n: usize, beta: f64, policy: Policy, events: u64, seed: u64) -> Self {
        Config {
            capacity: 1.0,
            eta: vec![1.0; n],
            beta: vec![beta; n],
            policy,
            events,
            warmup: events / 10,
            seed,
            batches: 32,
            initial: None,
            trace_events: 0,
            histogram_bins: 0,
        }
    }

    pub fn n(&self) -> usize {
        self.eta.len()
    }

    /// Checks every input; the message names the field and what was expected.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.n();
        if n == 0 {
            return Err("n: expected at least one connection".into());
        }
        if !(self.capacity.is_finite() && self.capacity > 0.0) {
            return Err(format!(
                "capacity: expected a positive number, got {}",
                self.capacity
            ));
        }
        if self.beta.len() != n {
            return Err(format!(
                "beta: expected {n} values (one per connection), got {}",
                self.beta.len()
            ));
        }
        for (i, &e) in self.eta.iter().enumerate() {
            if !(e.is_finite() && e > 0.0) {
                return Err(format!("eta[{i}]: expected a positive number, got {e}"));
            }
        }
        for (i, &b) in self.beta.iter().enumerate() {
            if !(b > 0.0 && b < 1.0) {
                return Err(format!("beta[{i}]: expected 0 < beta < 1, got {b}"));
            }
        }
        if self.batches < 2 {
            return Err(format!(
                "batches: expected at least 2, got {}",
                self.batches
            ));
        }
        if self.events < self.batches as u64 {
            return Err(format!(
                "events: expected at least as many events as batches ({}), got {}",
                self.batches, self.events
            ));
        }
        match &self.policy {
            Policy::RateIndependent { weights } if !weights.is_empty() => {
                check_weights("weights", weights, n)?;
                if weights.iter().sum::<f64>() <= 0.0 {
                    return Err("weights: expected at least one positive weight".into());
                }
            }
            Policy::Subset { probs } => {
                check_weights("probs", probs, n)?;
                if let Some((i, p)) = probs.iter().enumerate().find(|(_, &p)| p > 1.0) {
                    return Err(format!(
                        "probs[{i}]: expected a probability in [0, 1], got {p}"
                    ));
                }
                if probs.iter().all(|&p| p == 0.0) {
                    return Err("probs: expected at least one positive probability".into());
                }
            }
            _ => {}
        }
        self.check_memory()?;
        if let Some(x0) = &self.initial {
            check_weights("initial", x0, n)?;
            let s: f64 = x0.iter().sum();
            if s > self.capacity * (1.0 + 1e-12) {
                return Err(format!(
                    "initial: the rates sum to {s}, more than the capacity {}",
                    self.capacity
                ));
            }
        }
        Ok(())
    }

    /// Refuse a run whose tables would not fit in memory, naming the key
    /// that makes them large, instead of aborting on allocation: per
    /// connection, a histogram (counts and fractions, 16 bytes a bin) and a
    /// batch row (16 bytes a batch); the trace, 8 bytes per connection per
    /// traced event. The limit is the packet engine's (6 GiB: a 2-core
    /// 24 GiB machine, with room for Python's copies of the results).
    fn check_memory(&self) -> Result<(), String> {
        const LIMIT: f64 = 6.0 * (1u64 << 30) as f64;
        let n = self.n() as f64;
        let parts = [
            ("histogram_bins", n * 16.0 * self.histogram_bins as f64),
            ("batches", n * 16.0 * self.batches as f64),
            (
                "trace_events",
                8.0 * (n + 1.0) * (self.trace_events as f64).min(self.events as f64),
            ),
            ("n", n * 128.0),
        ];
        let total: f64 = parts.iter().map(|p| p.1).sum();
        if total > LIMIT {
            let key = parts.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
            return Err(format!(
                "{key}: this run would hold ~{:.1} GiB for {} connections (limit {:.0} GiB); \
                 use fewer connections, bins, batches or traced events",
                total / (1u64 << 30) as f64,
                self.n(),
                LIMIT / (1u64 << 30) as f64
            ));
        }
        Ok(())
    }
}

fn check_weights(name: &str, w: &[f64], n: usize) -> Result<(), String> {
    if w.len() != n {
        return Err(format!(
            "{name}: expected {n} values (one per connection), got {}",
            w.len()
        ));
    }
    for (i, &v) in w.iter().enumerate() {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!(
                "{name}[{i}]: expected a non-negative number, got {v}"
            ));
        }
    }
    Ok(())
}

/// Per-connection results, normalized by c (means) and c² (second moments).
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    /// Time average of xᵢ/c.
    pub mean: f64,
    pub mean_ci95: f64,
    /// Time average of (xᵢ/c)².
    pub second_moment: f64,
    pub second_moment_ci95: f64,
    /// Mean of xᵢ/c just before congestion events (the Palm mean).
    pub mean_at_congestion: f64,
    /// Share of the measured events at which this connection was cut (tagged,
    /// for beatdown). Sums to 1 under ONE.
    pub cut_share: f64,
}

/// A sampled path: at each recorded instant, the time and all N rates (row-major).
/// Each congestion event contributes the rates just before and just after the cut
/// at the same time, so joining the points with straight lines is exact.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub time: Vec<f64>,
    /// time.len() × N rates, normalized by c.
    pub rates: Vec<f64>,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct Output {
    /// Time average of Σxᵢ/c.
    pub mean_aggregate: f64,
    pub mean_aggregate_ci95: f64,
    /// Time average of (Σxᵢ/c)².
    pub aggregate_second_moment: f64,
    /// Measured time span (in the time unit of η).
    pub duration: f64,
    /// Measured congestion events (beatdown: tag times).
    pub events: u64,
    pub flows: Vec<FlowStats>,
    /// histogram[i][k]: fraction of measured events at which connection i had
    /// x/c in bin k of [0, 1] (`histogram_bins` equal bins).
    pub histogram: Vec<Vec<f64>>,
    /// x/c just before the last measured congestion event (beatdown: tag time).
    pub final_rates: Vec<f64>,
    pub trace: Trace,
}

/// Per-batch integrals: duration, ∫X, ∫X², then ∫xᵢ, ∫xᵢ² for each i.
struct Batches {
    n: usize,
    data: Vec<f64>,
}

impl Batches {
    const STRIDE0: usize = 3;
    fn new(b: usize, n: usize) -> Self {
        Batches {
            n,
            data: vec![0.0; b * (Self::STRIDE0 + 2 * n)],
        }
    }
    #[inline]
    fn row(&mut self, b: usize) -> &mut [f64] {
        let w = Self::STRIDE0 + 2 * self.n;
        &mut self.data[b * w..(b + 1) * w]
    }
    fn column(&self, col: usize) -> Vec<f64> {
        let w = Self::STRIDE0 + 2 * self.n;
        self.data.chunks(w).map(|r| r[col]).collect()
    }
}

/// Runs the model. Deterministic for a given `Config` (seed included).
pub fn simulate(cfg: &Config) -> Result<Output, String> {
    cfg.validate()?;
    let n = cfg.n();
    let c = cfg.capacity;
    let eta = &cfg.eta;
    let beta = &cfg.beta;
    let eta_bar: f64 = eta.iter().sum();
    let mut rng = Rng::seed_from_u64(cfg.seed);

    // Policy tables, built once.
    let weights: Vec<f64> = match &cfg.policy {
        Policy::RateIndependent { weights } if !weights.is_empty() => weights.clone(),
        _ => vec![1.0; n],
    };
    let weight_total: f64 = weights.iter().sum();
    let (probs, subset_cdf) = match &cfg.policy {
        Policy::Subset { probs } => (probs.clone(), first_cut_cdf(probs)),
        _ => (Vec::new(), Vec::new()),
    };
    // With one connection beatdown is plain AIMD: each cut is followed by a
    // congestion event at the same rate, so nothing accumulates.
    let beatdown_tag = match cfg.policy {
        Policy::Beatdown { tag } if n >= 2 => Some(tag),
        _ => None,
    };

    // Start: advance from the initial rates to the first congestion event.
    let mut x: Vec<f64> = cfg.initial.clone().unwrap_or_else(|| vec![0.0; n]);
    let s0 = ((c - x.iter().sum::<f64>()) / eta_bar).max(0.0);
    for i in 0..n {
        x[i] += eta[i] * s0;
    }
    let mut time = s0;

    let nb = cfg.batches;
    let mut batches = Batches::new(nb, n);
    let bins = cfg.histogram_bins;
    let mut hist = vec![vec![0u64; bins]; n];
    let mut palm = vec![0.0; n];
    let mut cuts = vec![0u64; n];
    let mut trace = Trace::default();
    let mut cut = vec![false; n];
    let mut final_rates = x.clone();

    let total = cfg.warmup + cfg.events;
    for k in 0..total {
        let measuring = k >= cfg.warmup;
        let m = k.wrapping_sub(cfg.warmup);
        let tracing = measuring && (m as usize) < cfg.trace_events;
        if measuring {
            final_rates.copy_from_slice(&x);
            for i in 0..n {
                palm[i] += x[i];
                if bins > 0 {
                    let b = ((x[i] / c * bins as f64) as usize).min(bins - 1);
                    hist[i][b] += 1;
                }
            }
        }
        if tracing {
            trace.time.push(time);
            trace.rates.extend(x.iter().map(|v| v / c));
        }
        let batch = if measuring {
            (m as u128 * nb as u128 / cfg.events as u128) as usize
        } else {
            0
        };

        if let Some(tag) = beatdown_tag {
            // Sec. IV.B: tag M, beat it down to 0 through infinitely many cuts.
            let mi = match tag {
                Tag::Largest => argmax(&x),
                Tag::RateProportional => draw_weighted(&x, x.iter().sum(), &mut rng),
            };
            let y = x[mi];
            let ph = beatdown::phase(y, eta[mi], beta[mi], eta_bar, c);
            let d = ph.duration;
            if tracing {
                trace_beatdown_cuts(&mut trace, &x, mi, eta, beta[mi], eta_bar, time, c);
            }
            if measuring {
                cuts[mi] += 1;
                let row = batches.row(batch);
                row[0] += d;
                row[1] += ph.aggregate_int1;
                row[2] += ph.aggregate_int2;
                for i in 0..n {
                    let (i1, i2) = if i == mi {
                        (ph.tagged_int1, ph.tagged_int2)
                    } else {
                        linear_integrals(x[i], eta[i], d)
                    };
                    row[3 + 2 * i] += i1;
                    row[4 + 2 * i] += i2;
                }
            }
            for i in 0..n {
                x[i] += eta[i] * d;
            }
            x[mi] = 0.0;
            time += d;
            continue;
        }

        // Eq. (3): choose z(n) and cut.
        match &cfg.policy {
            Policy::All => cut.fill(true),
            Policy::Subset { .. } => draw_subset(&probs, &subset_cdf, &mut rng, &mut cut),
            _ => {
                let i = if n == 1 {
                    0
                } else {
                    match &cfg.policy {
                        Policy::RateProportional => draw_weighted(&x, x.iter().sum(), &mut rng),
                        Policy::RateIndependent { .. } => {
                            draw_weighted(&weights, weight_total, &mut rng)
                        }
                        _ => argmax(&x), // LargestRate, and Beatdown with N = 1
                    }
                };
                cut.fill(false);
                cut[i] = true;
            }
        }
        let mut a = 0.0; // Σ rates after the cut
        for i in 0..n {
            if cut[i] {
                x[i] *= beta[i];
                if measuring {
                    cuts[i] += 1;
                }
            }
            a += x[i];
        }
        if tracing {
            trace.time.push(time);
            trace.rates.extend(x.iter().map(|v| v / c));
        }
        // Eq. (4): time to the next congestion event.
        let s = ((c - a) / eta_bar).max(0.0);
        if measuring {
            let row = batches.row(batch);
            row[0] += s;
            let (g1, g2) = linear_integrals(a, eta_bar, s);
            row[1] += g1;
            row[2] += g2;
            for i in 0..n {
                let (i1, i2) = linear_integrals(x[i], eta[i], s);
                row[3 + 2 * i] += i1;
                row[4 + 2 * i] += i2;
            }
        }
        // Eq. (2): linear growth to the next congestion time.
        for i in 0..n {
            x[i] += eta[i] * s;
        }
        time += s;
    }
    if cfg.trace_events > 0 && (cfg.events as usize) <= cfg.trace_events {
        trace.time.push(time);
        trace.rates.extend(x.iter().map(|v| v / c));
    }

    let dur = batches.column(0);
    let total_time: f64 = dur.iter().sum();
    let ev = cfg.events as f64;
    let avg = |col: usize, scale: f64| -> (f64, f64) {
        let y = batches.column(col);
        let mean = y.iter().sum::<f64>() / total_time / scale;
        (mean, ratio_ci95(&y, &dur) / scale)
    };
    let (mean_aggregate, mean_aggregate_ci95) = avg(1, c);
    let (aggregate_second_moment, _) = avg(2, c * c);
    let flows = (0..n)
        .map(|i| {
            let (mean, mean_ci95) = avg(3 + 2 * i, c);
            let (second_moment, second_moment_ci95) = avg(4 + 2 * i, c * c);
            FlowStats {
                mean,
                mean_ci95,
                second_moment,
                second_moment_ci95,
                mean_at_congestion: palm[i] / ev / c,
                cut_share: cuts[i] as f64 / ev,
            }
        })
        .collect();
    let histogram = hist
        .into_iter()
        .map(|h| h.into_iter().map(|k| k as f64 / ev).collect())
        .collect();
    Ok(Output {
        mean_aggregate,
        mean_aggregate_ci95,
        aggregate_second_moment,
        duration: total_time,
        events: cfg.events,
        flows,
        histogram,
        final_rates: final_rates.iter().map(|v| v / c).collect(),
        trace,
    })
}

/// ∫₀ˢ (x + η t) dt and ∫₀ˢ (x + η t)² dt.
#[inline]
fn linear_integrals(x: f64, eta: f64, s: f64) -> (f64, f64) {
    let es = eta * s;
    (s * (x + es / 2.0), s * (x * x + x * es + es * es / 3.0))
}

/// Trace points of the first cuts of a beatdown phase (until the tagged rate is
/// below 1e-3 of where it started, at most 64 cuts): before and after each cut.
#[allow(clippy::too_many_arguments)]
fn trace_beatdown_cuts(
    trace: &mut Trace,
    x: &[f64],
    mi: usize,
    eta: &[f64],
    beta_m: f64,
    eta_bar: f64,
    t0: f64,
    c: f64,
) {
    let y = x[mi];
    let a = beatdown::contraction(eta[mi], beta_m, eta_bar);
    let mut u = y;
    let mut elapsed = 0.0;
    for _ in 0..64 {
        if u < 1e-3 * y {
            break;
        }
        let at = |tr: &mut Trace, xm: f64| {
            tr.time.push(t0 + elapsed);
            tr.rates.extend((0..x.len()).map(|j| {
                if j == mi {
                    xm / c
                } else {
                    (x[j] + eta[j] * elapsed) / c
                }
            }));
        };
        if elapsed > 0.0 {
            at(trace, u);
        }
        at(trace, beta_m * u);
        elapsed += (1.0 - beta_m) * u / eta_bar;
        u *= a;
    }
}
