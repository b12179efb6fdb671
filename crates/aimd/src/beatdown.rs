//! Beatdown's accumulation of congestion times, summed in closed form.
//!
//! Paper C, Sec. IV.B: once connection M is tagged at τₙ with rate y, it is cut by
//! β_M at every congestion event until its rate reaches 0. Between cuts all rates
//! grow, so the link is congested again after (1−β_M)u/η̄, where u is M's rate at
//! the previous cut. M's rate just before its k-th cut is therefore geometric,
//!
//!   u_k = y aᵏ,  a = β_M + (1−β_M) η_M/η̄ < 1,
//!
//! infinitely many events fall in a finite time (E⁰[T₁] = 0), and the phase ends at
//! τₙ₊₁ = τₙ + y/(η̄ − η_M) (eq. 11) with M at 0 and every other connection j at
//! yⱼ + ηⱼ(τₙ₊₁ − τₙ) (eq. 10). An event loop would never get there; instead the
//! time integrals of the tagged rate and of the aggregate over the phase are
//! geometric series, summed here exactly.

/// Time integrals over one beatdown phase (from a tag time to the next).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    /// τₙ₊₁ − τₙ = y / (η̄ − η_M)  (eq. 11).
    pub duration: f64,
    /// ∫ x_M dt over the phase.
    pub tagged_int1: f64,
    /// ∫ x_M² dt over the phase.
    pub tagged_int2: f64,
    /// ∫ Σᵢ xᵢ dt over the phase.
    pub aggregate_int1: f64,
    /// ∫ (Σᵢ xᵢ)² dt over the phase.
    pub aggregate_int2: f64,
}

/// Ratio a of the tagged rate just before successive cuts.
#[inline]
pub fn contraction(eta_m: f64, beta_m: f64, eta_bar: f64) -> f64 {
    beta_m + (1.0 - beta_m) * eta_m / eta_bar
}

/// Integrals over the phase started by tagging a connection of rate `y`
/// (requires η_M < η̄, i.e. at least two connections).
///
/// Cut k leaves the tagged rate at β u_k and the aggregate at c − δ_k with
/// δ_k = (1−β)u_k; both then grow for s_k = δ_k/η̄, so with Σ_k u_kᵖ = yᵖ/(1−aᵖ):
///   ∫x_M   = Σ [β u_k s_k + η_M s_k²/2]
///   ∫x_M²  = Σ [β²u_k² s_k + β u_k η_M s_k² + η_M² s_k³/3]
///   ∫X     = Σ [(c − δ_k) s_k + η̄ s_k²/2]          = c·D − Σδ_k²/(2η̄)
///   ∫X²    = Σ [c³ − (c − δ_k)³]/(3η̄)               = (c²Σδ − cΣδ² + Σδ³/3)/η̄.
pub fn phase(y: f64, eta_m: f64, beta_m: f64, eta_bar: f64, capacity: f64) -> Phase {
    let a = contraction(eta_m, beta_m, eta_bar);
    let g = 1.0 - beta_m; // δ_k = g u_k, s_k = g u_k / η̄
    let sum_u1 = y / (1.0 - a);
    let sum_u2 = y * y / (1.0 - a * a);
    let sum_u3 = y * y * y / (1.0 - a * a * a);
    let duration = y / (eta_bar - eta_m);
    let s = g / eta_bar; // s_k / u_k
    let tagged_int1 = sum_u2 * (beta_m * s + eta_m * s * s / 2.0);
    let tagged_int2 =
        sum_u3 * (beta_m * beta_m * s + beta_m * eta_m * s * s + eta_m * eta_m * s * s * s / 3.0);
    let (d1, d2, d3) = (g * sum_u1, g * g * sum_u2, g * g * g * sum_u3);
    let c = capacity;
    Phase {
        duration,
        tagged_int1,
        tagged_int2,
        aggregate_int1: c * duration - d2 / (2.0 * eta_bar),
        aggregate_int2: (c * c * d1 - c * d2 + d3 / 3.0) / eta_bar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed form equals the explicit sum over cuts, truncated where the
    /// remaining terms are below 1e-15 of the total.
    #[test]
    fn closed_form_equals_explicit_sum_over_cuts() {
        let (y, eta_m, beta_m, eta_bar, c) = (0.7, 1.3, 0.4, 3.1, 1.0);
        let a = contraction(eta_m, beta_m, eta_bar);
        let (mut t, mut i1, mut i2, mut a1, mut a2) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let mut u = y;
        while u > 1e-16 {
            let x0 = beta_m * u;
            let s = (1.0 - beta_m) * u / eta_bar;
            let agg0 = c - (1.0 - beta_m) * u;
            t += s;
            i1 += x0 * s + eta_m * s * s / 2.0;
            i2 += ((x0 + eta_m * s).powi(3) - x0.powi(3)) / (3.0 * eta_m);
            a1 += agg0 * s + eta_bar * s * s / 2.0;
            a2 += ((agg0 + eta_bar * s).powi(3) - agg0.powi(3)) / (3.0 * eta_bar);
            let next = x0 + eta_m * s;
            assert!((next - a * u).abs() < 1e-15);
            u = next;
        }
        let p = phase(y, eta_m, beta_m, eta_bar, c);
        for (name, got, want) in [
            ("duration", p.duration, t),
            ("∫x_M", p.tagged_int1, i1),
            ("∫x_M²", p.tagged_int2, i2),
            ("∫X", p.aggregate_int1, a1),
            ("∫X²", p.aggregate_int2, a2),
        ] {
            assert!(
                (got - want).abs() < 1e-12 * want.abs().max(1.0),
                "{name}: {got} vs {want}"
            );
        }
    }
}
