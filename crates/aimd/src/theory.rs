//! Closed forms of paper C (Altman, Barman, Tuffin, Vojnović, "Parallel TCP
//! sockets", Infocom 2006). All rates are normalized by the link capacity c.

/// Theorem 1, eq. (5): time-average aggregate rate E[X]/c of N identical AIMD
/// connections under any loss policy that cuts ONE connection per congestion event:
/// 1 − 1/(1 + N(1+β)/(1−β)).
pub fn theorem1(n: usize, beta: f64) -> f64 {
    1.0 - 1.0 / (1.0 + n as f64 * (1.0 + beta) / (1.0 - beta))
}

/// Eq. (6): synchronized losses (policy ALL) give E[X]/c = (1+β)/2 for every N.
pub fn all_policy(beta: f64) -> f64 {
    (1.0 + beta) / 2.0
}

/// MultTCP with β = ½ (Sec. II.B.4): one AIMD connection with η' = Nη and
/// β' = 1 − 1/(2N), so by eq. (6) E[X]/c = 1 − 1/(4N).
pub fn multtcp(n: usize) -> f64 {
    1.0 - 1.0 / (4.0 * n as f64)
}

/// Theorem 2: time-stationary second moment E[X₁²]/c² of one of N = 2 identical
/// connections with β = ½, as stated by the paper, for
/// `"beatdown"`, `"rate-independent"`, `"rate-proportional"`, `"largest-rate"`.
pub fn theorem2_paper(policy: &str) -> Option<f64> {
    match policy {
        "beatdown" => Some(1.0 / 3.0),
        "rate-independent" => Some(5.0 / 24.0),
        "rate-proportional" => Some(679.0 / 3396.0),
        "largest-rate" => Some(4.0 / 21.0),
        _ => None,
    }
}

/// Proposition 1, eq. (9): the fixed point of the largest-rate dynamics, i.e. the
/// rates just before a congestion event sorted in decreasing order,
/// x⁰₁ = 2/((1+β)N + (1−β)), x⁰ᵢ = x⁰₁ (1 − (1−β)(i−1)/N).
/// Along it the connections are cut in round-robin order.
pub fn largest_rate_fixed_point(n: usize, beta: f64) -> Vec<f64> {
    let nf = n as f64;
    let x1 = 2.0 / ((1.0 + beta) * nf + (1.0 - beta));
    (0..n)
        .map(|i| x1 * (1.0 - (1.0 - beta) * i as f64 / nf))
        .collect()
}

/// Sec. IV.B: the stationary point of the beatdown dynamics embedded at tag times
/// (the largest rate is tagged and beaten down to 0 while the others share its
/// rate), sorted in decreasing order: ỹₖ = ỹ₁ (N−k)/(N−1) with ỹ₁ = 2/N, i.e.
/// ỹₖ = 2(N−k)/(N(N−1)).
///
/// The paper prints ỹᵢ = (1 − i/N)/(N−1) for 2 ≤ i ≤ N−1, which is half of this
/// and does not sum to 1 (N = 3: 2/3 + 1/6 + 0); its own recursion
/// ỹₖ = ỹₖ₊₁ + ỹ₁/(N−1) and Σỹ = 1 give the factor 2 used here.
pub fn beatdown_stationary_point(n: usize) -> Vec<f64> {
    assert!(n >= 2, "beatdown needs at least two connections");
    let nf = n as f64;
    (1..=n)
        .map(|k| 2.0 * (nf - k as f64) / (nf * (nf - 1.0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theorem1_numbers_quoted_in_the_paper() {
        // "0.75 at N = 1, >= 0.9 at N = 3, almost 0.95 at N = 6" (β = ½).
        assert!((theorem1(1, 0.5) - 0.75).abs() < 1e-12);
        assert!(theorem1(3, 0.5) >= 0.9);
        assert!((theorem1(6, 0.5) - 0.95).abs() < 0.005);
        // N = 1 reduces to eq. (6).
        for b in [0.3, 0.5, 0.8] {
            assert!((theorem1(1, b) - all_policy(b)).abs() < 1e-12);
        }
    }

    #[test]
    fn multtcp_within_2_5_percent_of_n_tcp_connections() {
        // Sec. II.B.4: E[X_MultTCP] / E[X_ONE] < 1.025 for all N.
        for n in 1..100 {
            let r = multtcp(n) / theorem1(n, 0.5);
            assert!((1.0..1.025).contains(&r), "N={n}: {r}");
        }
    }

    #[test]
    fn fixed_points_lie_on_the_simplex() {
        for n in 2..20 {
            for b in [0.3, 0.5, 0.8] {
                let s: f64 = largest_rate_fixed_point(n, b).iter().sum();
                assert!((s - 1.0).abs() < 1e-12, "eq. 9 N={n} β={b}: {s}");
            }
            let s: f64 = beatdown_stationary_point(n).iter().sum();
            assert!((s - 1.0).abs() < 1e-12, "IV.B N={n}: {s}");
        }
    }
}
