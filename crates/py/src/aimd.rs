//! Bindings for the hybrid AIMD model (tcplab-aimd): convert in, simulate with the
//! GIL released, convert out as plain lists in a dict.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tcplab_aimd::{simulate, Config, Policy, Tag};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("AIMD_VERSION", tcplab_aimd::VERSION)?;
    m.add_function(wrap_pyfunction!(aimd_simulate, m)?)?;
    Ok(())
}

fn policy_from(
    name: &str,
    weights: Option<Vec<f64>>,
    probs: Option<Vec<f64>>,
    tag: &str,
) -> PyResult<Policy> {
    let tag = match tag {
        "largest" | "largest-rate" => Tag::Largest,
        "rate-proportional" => Tag::RateProportional,
        other => {
            return Err(PyValueError::new_err(format!(
                "tag: expected 'largest' or 'rate-proportional', got {other:?}"
            )))
        }
    };
    Ok(match name {
        "rate-proportional" => Policy::RateProportional,
        "largest-rate" => Policy::LargestRate,
        "rate-independent" => Policy::RateIndependent { weights: weights.unwrap_or_default() },
        "beatdown" => Policy::Beatdown { tag },
        "all" => Policy::All,
        "subset" => Policy::Subset {
            probs: probs.ok_or_else(|| PyValueError::new_err("probs: the subset policy needs one probability per connection"))?,
        },
        other => {
            return Err(PyValueError::new_err(format!(
                "policy: expected one of rate-proportional, largest-rate, rate-independent, beatdown, all, subset; got {other:?}"
            )))
        }
    })
}

/// Run the hybrid AIMD model of paper C; returns a dict of plain values and lists
/// (rates normalized by the capacity). Raises ValueError on bad input.
#[pyfunction]
#[pyo3(signature = (*, eta, beta, policy, events, warmup, seed, capacity=1.0, weights=None, probs=None, tag="largest", batches=32, initial=None, trace_events=0, histogram_bins=0))]
#[allow(clippy::too_many_arguments)]
fn aimd_simulate<'py>(
    py: Python<'py>,
    eta: Vec<f64>,
    beta: Vec<f64>,
    policy: &str,
    events: u64,
    warmup: u64,
    seed: u64,
    capacity: f64,
    weights: Option<Vec<f64>>,
    probs: Option<Vec<f64>>,
    tag: &str,
    batches: usize,
    initial: Option<Vec<f64>>,
    trace_events: usize,
    histogram_bins: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = Config {
        capacity,
        eta,
        beta,
        policy: policy_from(policy, weights, probs, tag)?,
        events,
        warmup,
        seed,
        batches,
        initial,
        trace_events,
        histogram_bins,
    };
    let out = py
        .detach(|| simulate(&cfg))
        .map_err(PyValueError::new_err)?;
    let d = PyDict::new(py);
    d.set_item("mean_aggregate", out.mean_aggregate)?;
    d.set_item("mean_aggregate_ci95", out.mean_aggregate_ci95)?;
    d.set_item("aggregate_second_moment", out.aggregate_second_moment)?;
    d.set_item("duration", out.duration)?;
    d.set_item("events", out.events)?;
    let col = |f: fn(&tcplab_aimd::FlowStats) -> f64| out.flows.iter().map(f).collect::<Vec<f64>>();
    d.set_item("flow_mean", col(|f| f.mean))?;
    d.set_item("flow_mean_ci95", col(|f| f.mean_ci95))?;
    d.set_item("flow_second_moment", col(|f| f.second_moment))?;
    d.set_item("flow_second_moment_ci95", col(|f| f.second_moment_ci95))?;
    d.set_item("flow_mean_at_congestion", col(|f| f.mean_at_congestion))?;
    d.set_item("flow_cut_share", col(|f| f.cut_share))?;
    d.set_item("histogram", out.histogram)?;
    d.set_item("final_rates", out.final_rates)?;
    d.set_item("trace_time", out.trace.time)?;
    d.set_item("trace_rates", out.trace.rates)?;
    Ok(d)
}
