//! Bindings for the packet engine: a scenario goes in as JSON, the run happens
//! with the GIL released, the summary comes back as JSON and traces as raw
//! little-endian column buffers (numpy reads them without copying per value).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use tcplab_engine::record::Column;
use tcplab_engine::scenario::Scenario;

fn scenario_error(e: tcplab_engine::scenario::ScenarioError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Parse and resolve a scenario (JSON text); returns the resolved scenario as JSON.
/// Raises ValueError("key.path: what was expected") for invalid input.
#[pyfunction]
fn resolve_scenario(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let text = scenario_json.to_owned();
    py.detach(move || {
        Scenario::from_json(&text)
            .and_then(|s| s.resolve())
            .map(|s| s.to_json())
    })
    .map_err(scenario_error)
}

/// Run a scenario (JSON text). Returns (resolved_json, summary_json, traces)
/// where traces maps a table name to {column: (dtype, bytes)}.
#[pyfunction]
fn run_scenario<'py>(
    py: Python<'py>,
    scenario_json: &str,
) -> PyResult<(String, String, Bound<'py, PyDict>)> {
    let text = scenario_json.to_owned();
    let (sc, out) = py
        .detach(move || tcplab_engine::sim::run_json(&text))
        .map_err(scenario_error)?;
    let summary =
        serde_json::to_string(&out.summary).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let traces = PyDict::new(py);
    for table in out.traces {
        let cols = PyDict::new(py);
        for (name, col) in table.columns {
            let (dtype, bytes): (&str, Vec<u8>) = match col {
                Column::F64(v) => ("<f8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
                Column::I64(v) => ("<i8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            };
            cols.set_item(name, (dtype, PyBytes::new(py, &bytes)))?;
        }
        traces.set_item(table.name, cols)?;
    }
    Ok((sc.to_json(), summary, traces))
}

/// Departure times (ns, little-endian int64 bytes) of UDP flow `flow` of a
/// scenario: the schedule the packet engine sends, for the ns-2 export.
#[pyfunction]
fn udp_departures<'py>(
    py: Python<'py>,
    scenario_json: &str,
    flow: u32,
) -> PyResult<Bound<'py, PyBytes>> {
    let text = scenario_json.to_owned();
    let times = py
        .detach(move || {
            let sc = Scenario::from_json(&text)?.resolve()?;
            Ok(tcplab_engine::sim::udp_departures(&sc, flow))
        })
        .map_err(scenario_error)?
        .ok_or_else(|| PyValueError::new_err(format!("flow {flow} is not a UDP flow")))?;
    let bytes: Vec<u8> = times
        .iter()
        .flat_map(|t| (*t as i64).to_le_bytes())
        .collect();
    Ok(PyBytes::new(py, &bytes))
}

/// Outages [(start_ns, end_ns), ...] of link `link` (the packet engine's
/// link index) before the run ends: the schedule the engine draws, for the
/// ns-2 export.
#[pyfunction]
fn link_outages(py: Python<'_>, scenario_json: &str, link: u32) -> PyResult<Vec<(u64, u64)>> {
    let text = scenario_json.to_owned();
    py.detach(move || {
        let sc = Scenario::from_json(&text)?.resolve()?;
        Ok(tcplab_engine::sim::link_outages(&sc, link))
    })
    .map_err(scenario_error)?
    .ok_or_else(|| PyValueError::new_err(format!("no link {link}")))
}

/// [(start_ns, stop_ns), ...] of every flow in id order (start jitter, join
/// and leave schedules applied): when the packet engine starts and stops each.
#[pyfunction]
fn flow_times(py: Python<'_>, scenario_json: &str) -> PyResult<Vec<(u64, u64)>> {
    let text = scenario_json.to_owned();
    py.detach(move || {
        let sc = Scenario::from_json(&text)?.resolve()?;
        Ok(tcplab_engine::sim::flow_times(&sc))
    })
    .map_err(scenario_error)
}

/// The rate (bit/s) a scenario normalizes throughput by (`measure.reference`;
/// "free" subtracts the clipped mean of every UDP shape).
#[pyfunction]
fn reference_bps(py: Python<'_>, scenario_json: &str) -> PyResult<f64> {
    let text = scenario_json.to_owned();
    py.detach(move || {
        Scenario::from_json(&text)
            .and_then(|s| s.resolve())
            .map(|s| s.reference_bps())
    })
    .map_err(scenario_error)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resolve_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(udp_departures, m)?)?;
    m.add_function(wrap_pyfunction!(reference_bps, m)?)?;
    m.add_function(wrap_pyfunction!(link_outages, m)?)?;
    m.add_function(wrap_pyfunction!(flow_times, m)?)?;
    Ok(())
}
