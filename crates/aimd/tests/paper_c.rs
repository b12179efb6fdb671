//! Facts of paper C (Altman, Barman, Tuffin, Vojnović, Infocom 2006) that the
//! hybrid AIMD model must reproduce.
//!
//! Run lengths. Under ONE with identical β the deficit c − ΣX and the aggregate X
//! are tied path by path: between events d/dt Σxᵢ² = 2η Σxᵢ, a cut of x_M lowers
//! Σxᵢ² by (1−β²)x_M² and opens a deficit whose integral is (1−β)²x_M²/(2η̄).
//! Over n events the two sums therefore agree up to the boundary term Σxᵢ² ≤ c²,
//! i.e. a relative error of order N/(n(1−β²)) on the small quantity 1 − E[X]/c.
//! With n = 20 000 that is < 0.3% of the deficit, < 0.05% of E[X] for N ≤ 15 —
//! ten times inside the 0.5% of the issue. Second moments have no such identity:
//! their run lengths come from the measured batch-means CI (stated at each test).

use tcplab_aimd::{simulate, theory, Config, Output, Policy, Tag};

const BETAS: [f64; 3] = [0.3, 0.5, 0.8];

fn run(n: usize, beta: f64, policy: Policy, events: u64, seed: u64) -> Output {
    simulate(&Config::homogeneous(n, beta, policy, events, seed)).expect("valid config")
}

/// Every loss policy of the paper that satisfies ONE, plus two more that do.
fn one_policies(n: usize) -> Vec<Policy> {
    vec![
        Policy::RateProportional,
        Policy::LargestRate,
        Policy::RateIndependent { weights: vec![] },
        // an arbitrary bias: connection i chosen with probability ∝ i + 1
        Policy::RateIndependent {
            weights: (1..=n).map(|i| i as f64).collect(),
        },
        Policy::Beatdown { tag: Tag::Largest },
        Policy::Beatdown {
            tag: Tag::RateProportional,
        },
    ]
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn theorem1_holds_for_every_one_policy() {
    for n in 1..=15 {
        for beta in BETAS {
            let want = theory::theorem1(n, beta);
            for policy in one_policies(n) {
                let out = run(n, beta, policy.clone(), 20_000, 11);
                let got = out.mean_aggregate;
                assert!(
                    rel(got, want) < 0.005,
                    "{} N={n} β={beta}: E[X]/c = {got:.5}, Theorem 1 says {want:.5}",
                    policy.name()
                );
                assert!(
                    out.mean_aggregate_ci95 < 0.001 * want,
                    "CI {}",
                    out.mean_aggregate_ci95
                );
                let shares: f64 = out.flows.iter().map(|f| f.cut_share).sum();
                assert!((shares - 1.0).abs() < 1e-12, "ONE: one cut per event");
            }
        }
    }
}

#[test]
fn synchronized_losses_give_one_plus_beta_over_two_for_every_n() {
    for n in 1..=15 {
        for beta in BETAS {
            let out = run(n, beta, Policy::All, 2_000, 1);
            let want = theory::all_policy(beta);
            assert!(
                rel(out.mean_aggregate, want) < 1e-9,
                "ALL N={n} β={beta}: {}",
                out.mean_aggregate
            );
            // ... and ONE beats ALL for N > 1 (Sec. II.B.3)
            if n > 1 {
                assert!(theory::theorem1(n, beta) > out.mean_aggregate);
            }
        }
    }
    // Heterogeneous increase rates do not matter to ALL: the aggregate is one AIMD.
    let mut cfg = Config::homogeneous(3, 0.5, Policy::All, 2_000, 1);
    cfg.eta = vec![1.0, 2.5, 7.0];
    let out = simulate(&cfg).unwrap();
    assert!(rel(out.mean_aggregate, 0.75) < 1e-9);
    // Subset with every probability 1 is ALL.
    let sub = run(
        4,
        0.5,
        Policy::Subset {
            probs: vec![1.0; 4],
        },
        2_000,
        3,
    );
    assert!(rel(sub.mean_aggregate, 0.75) < 1e-9);
}

#[test]
fn multtcp_is_one_connection_with_eta_n_and_beta_one_minus_one_over_2n() {
    for n in [1usize, 2, 5, 10] {
        let mut cfg = Config::homogeneous(1, 1.0 - 1.0 / (2.0 * n as f64), Policy::All, 1_000, 1);
        cfg.eta = vec![n as f64];
        let out = simulate(&cfg).unwrap();
        assert!(rel(out.mean_aggregate, theory::multtcp(n)) < 1e-9, "N={n}");
    }
}

/// Example 1: N = 4, rate-independent, connections 1, 2 chosen with probability
/// σ/2 each and 3, 4 with (1−σ)/2. The rarely cut connections (σ = 0.1 or 0.9)
/// have the longest memory: at 4·10⁵ events their 95% CI is ≈ 0.0036 (asserted
/// < 0.005), while one 0.1 step in σ moves each connection by ≈ 0.04.
#[test]
fn example1_bias_moves_the_classes_not_the_aggregate() {
    let want = theory::theorem1(4, 0.5);
    let mut previous: Option<(f64, f64)> = None;
    for k in 1..=9 {
        let sigma = k as f64 / 10.0;
        let weights = vec![sigma, sigma, 1.0 - sigma, 1.0 - sigma];
        let out = run(4, 0.5, Policy::RateIndependent { weights }, 400_000, 40 + k);
        assert!(
            rel(out.mean_aggregate, want) < 0.005,
            "σ={sigma}: {} vs {want}",
            out.mean_aggregate
        );
        let class1 = out.flows[0].mean + out.flows[1].mean;
        let class2 = out.flows[2].mean + out.flows[3].mean;
        for f in &out.flows {
            assert!(f.mean_ci95 < 0.005, "σ={sigma}: CI {}", f.mean_ci95);
        }
        // The two members of a class are treated alike (within 1.5× the sum of
        // their CI half-widths, about 4 standard errors of the difference).
        let alike = |i: usize, j: usize| {
            let (a, b) = (&out.flows[i], &out.flows[j]);
            (a.mean - b.mean).abs() < 1.5 * (a.mean_ci95 + b.mean_ci95)
        };
        assert!(alike(0, 1) && alike(2, 3), "σ={sigma}: {:?}", out.flows);
        if k == 5 {
            assert!(alike(0, 2), "σ = ½ favours no one");
        }
        if let Some((p1, p2)) = previous {
            assert!(
                class1 < p1 - 0.01,
                "class 1 loses as σ grows: {class1} after {p1}"
            );
            assert!(
                class2 > p2 + 0.01,
                "class 2 gains as σ grows: {class2} after {p2}"
            );
        }
        previous = Some((class1, class2));
    }
}

/// Theorem 2 (N = 2, β = ½): E[X₁²]/c² is not insensitive to the loss policy.
/// 10⁶ events for the random policies: measured 95% CI ≈ 0.35% (rate-independent)
/// and ≈ 0.18% (rate-proportional), so the 1% tolerance is ≥ 5 standard errors.
#[test]
fn theorem2_second_moments() {
    for (policy, events, name) in [
        (
            Policy::RateIndependent { weights: vec![] },
            1_000_000,
            "rate-independent",
        ),
        (Policy::RateProportional, 1_000_000, "rate-proportional"),
        (Policy::LargestRate, 10_000, "largest-rate"),
    ] {
        let want = theory::theorem2_paper(name).unwrap();
        let out = run(2, 0.5, policy, events, 7);
        for f in &out.flows {
            assert!(
                rel(f.second_moment, want) < 0.01,
                "{name}: {} vs {want}",
                f.second_moment
            );
            assert!(
                f.second_moment_ci95 < 0.004 * want,
                "{name}: CI {}",
                f.second_moment_ci95
            );
        }
    }
}

/// Beatdown, N = 2, β = ½ in the exact model. After the tag, connection M is at c
/// and the other at 0. The other grows as t for one time unit (∫x² = 1/3). M is
/// cut at rates uₖ = (¾)ᵏ and grows from uₖ/2 for uₖ/4 each time, so
/// ∫x_M² = Σ[(¾uₖ)³ − (½uₖ)³]/3 = (19/192)·Σuₖ³ = (19/192)(64/37) = 19/111.
/// Hence E[X₁²]/c² = (1/3 + 19/111)/2 = 28/111 ≈ 0.2523, while E[X₁]/c = 3/7 and
/// E[X₁+X₂]/c = 6/7 as Theorems 1 and 3 say.
///
/// The paper's 1/3 is the value of the limit path on which the tagged rate is
/// c − Σothers (aggregate ≡ c: X₁ uniform on [0, c]); that path has E[X]/c = 1,
/// which would contradict Theorem 3. The exact model keeps Theorem 3 and gives
/// 28/111, so this test states that value and records the disagreement.
#[test]
fn theorem2_beatdown_in_the_exact_model_is_28_over_111() {
    let out = run(2, 0.5, Policy::Beatdown { tag: Tag::Largest }, 1_000, 1);
    for f in &out.flows {
        assert!(
            rel(f.second_moment, 28.0 / 111.0) < 1e-6,
            "{}",
            f.second_moment
        );
        assert!(rel(f.mean, 3.0 / 7.0) < 1e-6);
        let paper = theory::theorem2_paper("beatdown").unwrap();
        assert!(
            rel(f.second_moment, paper) > 0.2,
            "differs from the paper's 1/3"
        );
    }
    assert!(rel(out.mean_aggregate, 6.0 / 7.0) < 1e-6);
    // The ordering the paper discusses still holds with the exact value: beatdown
    // has the largest second moment of the four policies.
    let rate_independent = theory::theorem2_paper("rate-independent").unwrap();
    assert!(out.flows[0].second_moment > rate_independent);
}

/// Rows of a trace as rate vectors.
fn rows(out: &Output, n: usize) -> Vec<&[f64]> {
    out.trace.rates.chunks(n).collect()
}

fn sorted_desc(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(|a, b| b.partial_cmp(a).unwrap());
    s
}

/// Proposition 1: from all-equal start the largest-rate dynamics reaches the
/// fixed point of eq. (9) and cuts the connections in round-robin order.
#[test]
fn largest_rate_converges_to_the_fixed_point_of_eq9_in_round_robin() {
    for n in 2..=15 {
        for beta in BETAS {
            let mut cfg = Config::homogeneous(n, beta, Policy::LargestRate, 10 * n as u64, 1);
            cfg.warmup = 2_000;
            cfg.batches = 2;
            cfg.trace_events = usize::MAX;
            let out = simulate(&cfg).unwrap();
            let got = sorted_desc(&out.final_rates);
            let want = theory::largest_rate_fixed_point(n, beta);
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() < 1e-9,
                    "N={n} β={beta}: {got:?} vs eq. 9 {want:?}"
                );
            }
            // Round robin: the connection cut at event k is cut again at k + N,
            // and no other event in between cuts it.
            let r = rows(&out, n);
            let cut_at: Vec<usize> = r
                .chunks(2)
                .filter(|p| p.len() == 2)
                .map(|p| (0..n).find(|&i| p[1][i] < p[0][i]).unwrap())
                .collect();
            for k in 0..cut_at.len() - n {
                assert_eq!(cut_at[k], cut_at[k + n], "N={n} β={beta}: not round robin");
            }
            let mut first: Vec<usize> = cut_at[..n].to_vec();
            first.sort();
            assert_eq!(first, (0..n).collect::<Vec<_>>());
        }
    }
}

/// Sec. IV.B: embedded at tag times, beatdown (largest rate tagged) reaches the
/// stationary point ỹₖ = 2(N−k)/(N(N−1)).
#[test]
fn beatdown_reaches_its_stationary_point() {
    for n in 2..=15 {
        let mut cfg = Config::homogeneous(n, 0.5, Policy::Beatdown { tag: Tag::Largest }, 10, 1);
        cfg.warmup = 200;
        cfg.batches = 2;
        let out = simulate(&cfg).unwrap();
        let got = sorted_desc(&out.final_rates);
        let want = theory::beatdown_stationary_point(n);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-9, "N={n}: {got:?} vs {want:?}");
        }
    }
}

#[test]
fn per_connection_means_add_up_to_the_aggregate() {
    let mut policies = one_policies(5);
    policies.push(Policy::All);
    policies.push(Policy::Subset {
        probs: vec![0.1, 0.2, 0.3, 0.4, 0.9],
    });
    for policy in policies {
        let mut cfg = Config::homogeneous(5, 0.5, policy.clone(), 10_000, 3);
        cfg.eta = vec![1.0, 2.0, 0.5, 3.0, 1.5];
        cfg.beta = vec![0.5, 0.7, 0.3, 0.5, 0.6];
        let out = simulate(&cfg).unwrap();
        let sum: f64 = out.flows.iter().map(|f| f.mean).sum();
        assert!(
            rel(sum, out.mean_aggregate) < 1e-9,
            "{}: {sum} vs {}",
            policy.name(),
            out.mean_aggregate
        );
        assert!(out.mean_aggregate <= 1.0 + 1e-12);
    }
}

#[test]
fn deterministic_for_a_seed() {
    for policy in one_policies(4).into_iter().chain([Policy::Subset {
        probs: vec![0.5; 4],
    }]) {
        let mut cfg = Config::homogeneous(4, 0.5, policy.clone(), 5_000, 99);
        cfg.trace_events = 50;
        cfg.histogram_bins = 20;
        let a = simulate(&cfg).unwrap();
        let b = simulate(&cfg).unwrap();
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{}", policy.name());
        let random = matches!(
            policy,
            Policy::RateProportional | Policy::RateIndependent { .. } | Policy::Subset { .. }
        );
        if random {
            cfg.seed = 100;
            let c = simulate(&cfg).unwrap();
            assert_ne!(
                a.flows[0].mean.to_bits(),
                c.flows[0].mean.to_bits(),
                "{}",
                policy.name()
            );
        }
    }
}

#[test]
fn bad_input_is_rejected_with_the_field_named() {
    let mut cfg = Config::homogeneous(3, 1.5, Policy::LargestRate, 100, 1);
    assert!(simulate(&cfg).unwrap_err().starts_with("beta[0]"));
    cfg.beta = vec![0.5; 3];
    cfg.policy = Policy::RateIndependent {
        weights: vec![1.0, 2.0],
    };
    assert!(simulate(&cfg).unwrap_err().starts_with("weights"));
    cfg.policy = Policy::Subset {
        probs: vec![0.0; 3],
    };
    assert!(simulate(&cfg).unwrap_err().starts_with("probs"));
    cfg.policy = Policy::All;
    cfg.initial = Some(vec![0.5, 0.5, 0.5]);
    assert!(simulate(&cfg).unwrap_err().starts_with("initial"));
}
