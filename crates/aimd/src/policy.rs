//! Loss policies: which connections a congestion event signals (z_j(n) in eq. 3).

use crate::rng::Rng;

/// Who is cut at a link congestion event (Σ xᵢ = c).
#[derive(Clone, Debug, PartialEq)]
pub enum Policy {
    /// ONE: connection i with probability xᵢ/c (Sec. I, policy (i)).
    RateProportional,
    /// ONE: the connection with the largest rate; ties go to the lowest index
    /// (policy (ii); deterministic, Sec. IV.A).
    LargestRate,
    /// ONE: connection i with a fixed probability ∝ `weights[i]` (policy (iii));
    /// empty weights mean uniform. Example 1's bias σ is
    /// `weights = [σ, σ, 1−σ, 1−σ]`.
    RateIndependent { weights: Vec<f64> },
    /// ONE: a tagged connection is cut at every congestion event, as long as the
    /// link capacity permits, i.e. until its rate reaches 0; then the next one is
    /// tagged (policy (iv), Sec. IV.B). The congestion times accumulate; the
    /// simulation jumps from tag time to tag time (eqs. 10–11) and integrates the
    /// infinitely many cuts in between in closed form (see `beatdown.rs`).
    Beatdown { tag: Tag },
    /// Every connection is cut at every event (synchronization, eq. 6).
    All,
    /// Each connection is cut independently with probability `probs[i]`
    /// (Baccelli–Hong), conditioned on at least one being cut so that the
    /// aggregate falls below c. `probs` all 1 is ALL.
    Subset { probs: Vec<f64> },
}

/// Which connection beatdown tags when the previous one has been beaten to 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// The largest rate (the dynamics of Sec. IV.B, with its stationary point).
    Largest,
    /// Probability proportional to the rate (a zero rate is never tagged).
    RateProportional,
}

impl Policy {
    /// The name used by the CLI and the result.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::RateProportional => "rate-proportional",
            Policy::LargestRate => "largest-rate",
            Policy::RateIndependent { .. } => "rate-independent",
            Policy::Beatdown { .. } => "beatdown",
            Policy::All => "all",
            Policy::Subset { .. } => "subset",
        }
    }

    /// Whether the policy satisfies (ONE): exactly one connection per event.
    pub fn is_one(&self) -> bool {
        !matches!(self, Policy::All | Policy::Subset { .. })
    }
}

/// Index of the largest entry; the lowest index wins ties.
#[inline]
pub(crate) fn argmax(x: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate().skip(1) {
        if v > x[best] {
            best = i;
        }
    }
    best
}

/// Draw i with probability w[i] / Σw by a linear scan (N is small).
#[inline]
pub(crate) fn draw_weighted(w: &[f64], total: f64, rng: &mut Rng) -> usize {
    let mut u = rng.uniform() * total;
    for (i, &wi) in w.iter().enumerate() {
        if u < wi {
            return i;
        }
        u -= wi;
    }
    // Rounding left u ≥ the last weight: return the last positive one.
    w.iter().rposition(|&wi| wi > 0.0).unwrap_or(0)
}

/// Independent Bernoulli(pᵢ) cuts conditioned on a non-empty set, drawn exactly
/// without rejection: the first cut index is i with probability
/// pᵢ Πⱼ<ᵢ(1−pⱼ) / (1 − Πⱼ(1−pⱼ)); later indices are then independent.
/// `first_cut_cdf` holds the unnormalized cumulative probabilities of "first cut is i".
pub(crate) fn draw_subset(probs: &[f64], first_cut_cdf: &[f64], rng: &mut Rng, cut: &mut [bool]) {
    let total = *first_cut_cdf.last().expect("at least one connection");
    let u = rng.uniform() * total;
    let first = first_cut_cdf
        .iter()
        .position(|&c| u < c)
        .unwrap_or(probs.len() - 1);
    for (i, flag) in cut.iter_mut().enumerate() {
        *flag = match i.cmp(&first) {
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => true,
            std::cmp::Ordering::Greater => rng.uniform() < probs[i],
        };
    }
}

/// Cumulative, unnormalized P(first cut index = i) for `draw_subset`.
pub(crate) fn first_cut_cdf(probs: &[f64]) -> Vec<f64> {
    let mut none_before = 1.0;
    let mut acc = 0.0;
    probs
        .iter()
        .map(|&p| {
            acc += p * none_before;
            none_before *= 1.0 - p;
            acc
        })
        .collect()
}
