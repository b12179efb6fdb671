//! Bindings for the packet engine: a scenario goes in as JSON, the run happens
//! with the GIL released, and the results come back as columns: numbers as raw
//! little-endian buffers (numpy reads them without copying per value), labels
//! as lists of strings. The summary's per-flow and per-link tables cross the
//! same way as the traces, not as JSON records: parsing those (hundreds of
//! records for 100 flows) cost Python more than the rest of a short run's
//! result handling.

use std::cell::UnsafeCell;

use pyo3::exceptions::{PyBufferError, PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use tcplab_engine::record::Column;
use tcplab_engine::scenario::{Plan, Scenario, Variant};
use tcplab_engine::sim::{FlowResult, LinkResult, RunSummary};

/// Bumped by [`cancel_runs`]: a run that started before stops at its next
/// poll of `run_until_stopped` (every 2^15 events).
static CANCELS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Stop every packet-engine run in flight in this process, whatever thread
/// runs it: each raises KeyboardInterrupt within a few ms of work. Python
/// runs signal handlers in the main thread only, so a run on a worker thread
/// (a sweep's point, `tcplab reproduce`'s shared pool) never sees Ctrl-C
/// itself; what stops on Ctrl-C calls this. Runs started after it are not
/// affected.
#[pyfunction]
fn cancel_runs() {
    CANCELS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

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

/// A numeric column's numpy dtype.
fn dtype(col: &Column) -> &'static str {
    match col {
        Column::F64(_) => "<f8",
        Column::I64(_) => "<i8",
    }
}

/// A numeric column as numpy reads it: (dtype, little-endian bytes). The
/// bytes are written straight into the Python object: a trace column can be
/// tens of MB, and building it in a `Vec` first cost a second copy.
fn numeric<'py>(py: Python<'py>, col: &Column) -> PyResult<(&'static str, Bound<'py, PyBytes>)> {
    fn le_bytes<'py, const N: usize>(
        py: Python<'py>,
        values: impl ExactSizeIterator<Item = [u8; N]>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        PyBytes::new_with(py, values.len() * N, |buf| {
            for (dst, v) in buf.chunks_exact_mut(N).zip(values) {
                dst.copy_from_slice(&v);
            }
            Ok(())
        })
    }
    let bytes = match col {
        Column::F64(v) => le_bytes(py, v.iter().map(|x| x.to_le_bytes()))?,
        Column::I64(v) => le_bytes(py, v.iter().map(|x| x.to_le_bytes()))?,
    };
    Ok((dtype(col), bytes))
}

/// A trace column handed to numpy without a copy: it exports its values
/// through the buffer protocol (writable little-endian bytes, like a
/// `bytearray`), and the array `numpy.frombuffer` makes of it views them for
/// as long as it lives. A long traced run's columns are hundreds of MB, and
/// copying them into `bytes` cost a pass over them and a page fault per
/// 4 KB. Writable, so that pandas can hold the arrays as they are: a frame
/// over read-only arrays refuses in-place assignment, and consolidating the
/// columns into one block (a copy) cost more than the run on paper C's
/// per-ack traces.
///
/// The column sits in an `UnsafeCell`: once it is here, Rust never reads
/// or writes it again (only `Drop` frees it); its bytes are Python's, which
/// writes them through the views it asked for, under the GIL, as it writes
/// a `bytearray`'s.
#[pyclass(frozen, module = "tcplab._core")]
struct ColumnBuffer(UnsafeCell<Column>);

// SAFETY: the cell's column is only reached through `__getbuffer__`'s raw
// pointer (Python's views) and by `Drop`, never through a Rust reference
// shared between threads.
unsafe impl Sync for ColumnBuffer {}

#[pymethods]
impl ColumnBuffer {
    /// # Safety
    /// Called by Python with a valid `view` (the buffer protocol).
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: std::ffi::c_int,
    ) -> PyResult<()> {
        use pyo3::ffi;
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        // SAFETY: no Rust reference to the column is alive (see the type):
        // this one lives for the match below, which takes the values'
        // address and length and changes nothing.
        let (ptr, len) = match unsafe { &mut *slf.get().0.get() } {
            Column::F64(v) => (v.as_mut_ptr().cast::<u8>(), v.len() * 8),
            Column::I64(v) => (v.as_mut_ptr().cast::<u8>(), v.len() * 8),
        };
        // SAFETY: `view` is the caller's, not null (checked). The bytes are
        // the column's, which live as long as `slf`: `view.obj` holds a
        // reference to it until the view is released, and nothing resizes
        // the column (it is private, and Rust no longer touches it). The
        // format is a static string, so there is nothing for
        // `__releasebuffer__` to free.
        unsafe {
            (*view).obj = slf.into_any().into_ptr();
            (*view).buf = ptr as *mut std::ffi::c_void;
            (*view).len = len as isize;
            (*view).readonly = 0;
            (*view).itemsize = 1;
            (*view).format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
                c"B".as_ptr() as *mut std::ffi::c_char
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
                &mut (*view).len
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                &mut (*view).itemsize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }
}

/// A trace column as numpy reads it: (dtype, an object exporting its
/// little-endian bytes); the values are not copied where the machine's
/// numbers are little-endian already.
fn trace_column(py: Python<'_>, col: Column) -> PyResult<(&'static str, Bound<'_, PyAny>)> {
    if cfg!(target_endian = "little") {
        Ok((
            dtype(&col),
            Bound::new(py, ColumnBuffer(UnsafeCell::new(col)))?.into_any(),
        ))
    } else {
        numeric(py, &col).map(|(d, b)| (d, b.into_any()))
    }
}

/// One summary column (the `columns!` kinds).
trait SummaryValue {
    fn column<'py>(py: Python<'py>, values: Vec<&Self>) -> PyResult<Bound<'py, PyAny>>;
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl SummaryValue for $t {
            fn column<'py>(py: Python<'py>, v: Vec<&Self>) -> PyResult<Bound<'py, PyAny>> {
                let col = Column::I64(v.into_iter().map(|x| *x as i64).collect());
                numeric(py, &col)?.into_pyobject(py).map(|t| t.into_any())
            }
        }
    )*};
}
int_value!(u32, u64);

impl SummaryValue for f64 {
    fn column<'py>(py: Python<'py>, v: Vec<&Self>) -> PyResult<Bound<'py, PyAny>> {
        let col = Column::F64(v.into_iter().copied().collect());
        numeric(py, &col)?.into_pyobject(py).map(|t| t.into_any())
    }
}

impl SummaryValue for String {
    fn column<'py>(py: Python<'py>, v: Vec<&Self>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, v.into_iter().map(|x| x.as_str())).map(|l| l.into_any())
    }
}

impl SummaryValue for &'static str {
    fn column<'py>(py: Python<'py>, v: Vec<&Self>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, v.into_iter().copied()).map(|l| l.into_any())
    }
}

impl SummaryValue for Option<Variant> {
    fn column<'py>(py: Python<'py>, v: Vec<&Self>) -> PyResult<Bound<'py, PyAny>> {
        let name = |x: &Variant| {
            serde_json::to_value(x)
                .ok()
                .and_then(|j| j.as_str().map(String::from))
        };
        PyList::new(py, v.into_iter().map(|x| x.as_ref().and_then(name))).map(|l| l.into_any())
    }
}

/// A table of summary rows as a dict of columns, in the rows' field order (the
/// order of their JSON keys). The field list is exhaustive: a field added to
/// the struct fails to compile here until it is listed.
macro_rules! columns {
    ($py:expr, $rows:expr, $ty:ident { $($field:ident),* $(,)? }) => {{
        #[allow(dead_code)]
        fn every_field(r: &$ty) {
            let $ty { $($field: _),* } = r;
        }
        let d = PyDict::new($py);
        $( d.set_item(stringify!($field), SummaryValue::column($py, $rows.iter().map(|r| &r.$field).collect())?)?; )*
        d
    }};
}

/// The run summary as a dict: scalars, and `flows`/`links` as dicts of columns
/// ({name: (dtype, bytes) or [str]}), the columns `pd.DataFrame` would make of
/// the summary's JSON records.
fn summary_dict<'py>(py: Python<'py>, s: &RunSummary) -> PyResult<Bound<'py, PyDict>> {
    let RunSummary {
        engine,
        engine_version,
        measured_s,
        reference_bps,
        events,
        flows,
        links,
    } = s;
    let f = columns!(
        py,
        flows,
        FlowResult {
            id,
            group,
            kind,
            variant,
            start_s,
            stop_s,
            delivered_packets,
            delivered_bytes,
            goodput_bps,
            throughput_bps,
            sent_packets,
            retransmissions,
            timeouts,
            fast_retransmits,
            drops,
        }
    );
    // `variant` is left out of a UDP flow's JSON record (skip_serializing_if), so
    // the records' columns have it in place if the first flow has one, last if
    // only a later flow has one, and not at all if none has.
    match flows.iter().position(|r| r.variant.is_some()) {
        None => f.del_item("variant")?,
        Some(0) => {}
        Some(_) => {
            let v = f.get_item("variant")?;
            f.del_item("variant")?;
            f.set_item("variant", v)?;
        }
    }
    let l = columns!(
        py,
        links,
        LinkResult {
            id,
            name,
            direction,
            rate_bps,
            arrivals,
            drops,
            errors,
            departures,
            utilization,
        }
    );
    let d = PyDict::new(py);
    d.set_item("engine", engine)?;
    d.set_item("engine_version", engine_version)?;
    d.set_item("measured_s", measured_s)?;
    d.set_item("reference_bps", reference_bps)?;
    d.set_item("events", events)?;
    d.set_item("flows", f)?;
    d.set_item("links", l)?;
    Ok(d)
}

/// Run a scenario (JSON text). Returns (resolved_json, summary, traces): the
/// summary as `summary_dict` makes it, traces as {table: {column: (dtype, bytes)}}.
/// With `trace_dir`, the traces are streamed into that folder as the run goes,
/// `trace_rows` rows of a table at a time (`Sim::spill_traces`: memory flat
/// in the run's duration), and such a table comes back as
/// ([(column, dtype)], [(file stem, rows)]): its parts in row order, column
/// `c` of part `p` in `trace_dir/p.c` as raw little-endian values; a failure
/// to write them raises OSError. (Playback reads stay in memory.)
/// A run beyond the engine's work or memory limits (`tcplab_engine::budget`)
/// raises ValueError naming the key, unless `force`. Ctrl-C (any pending
/// Python signal whose handler raises) stops the run within milliseconds and
/// raises that exception (KeyboardInterrupt).
#[pyfunction]
#[pyo3(signature = (scenario_json, force=false, trace_dir=None, trace_rows=65536))]
fn run_scenario<'py>(
    py: Python<'py>,
    scenario_json: &str,
    force: bool,
    trace_dir: Option<std::path::PathBuf>,
    trace_rows: usize,
) -> PyResult<(String, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let text = scenario_json.to_owned();
    let epoch = CANCELS.load(std::sync::atomic::Ordering::SeqCst);
    let (sc, out) = py.detach(move || -> PyResult<_> {
        let sc = Scenario::from_json(&text)
            .and_then(|s| s.resolve())
            .map_err(scenario_error)?;
        match &trace_dir {
            // streamed traces are not held: they cost no memory
            Some(_) => tcplab_engine::budget::check_streamed(&sc, force),
            None => tcplab_engine::budget::check(&sc, force),
        }
        .map_err(scenario_error)?;
        let plan = Plan::from_scenario(&sc).map_err(scenario_error)?;
        // the GIL is taken back for a moment every few ms of work to run
        // Python's signal handlers (the run holds it released)
        let mut raised = None;
        let mut sim = tcplab_engine::sim::Sim::new(&plan);
        drop(plan); // not needed through the run (see `run::run_json`)
        if let Some(dir) = trace_dir {
            sim = sim.spill_traces(dir, trace_rows);
        }
        let out = sim.run_until_stopped(|| {
            if CANCELS.load(std::sync::atomic::Ordering::Relaxed) != epoch {
                return true;
            }
            raised = Python::attach(|py| py.check_signals().err());
            raised.is_some()
        });
        match out {
            Some(out) => Ok((sc, out)),
            None => Err(raised.unwrap_or_else(|| {
                PyKeyboardInterrupt::new_err("the run was cancelled: tcplab is stopping")
            })),
        }
    })?;
    if let Some(e) = out.trace_error {
        return Err(PyOSError::new_err(format!("writing the traces: {e}")));
    }
    let summary = summary_dict(py, &out.summary)?;
    let traces = PyDict::new(py);
    for table in out.traces {
        match &table.spilled {
            None => {
                let cols = PyDict::new(py);
                for (name, col) in table.columns {
                    cols.set_item(name, trace_column(py, col)?)?;
                }
                traces.set_item(table.name, cols)?;
            }
            Some(parts) => {
                let cols: Vec<(&str, &str)> = table
                    .columns
                    .iter()
                    .map(|(name, col)| (*name, dtype(col)))
                    .collect();
                traces.set_item(table.name, (cols, parts.clone()))?;
            }
        }
    }
    Ok((sc.to_json(), summary, traces))
}

/// Parse, resolve and plan a scenario (JSON text), outside the GIL.
fn plan_of(py: Python<'_>, scenario_json: &str) -> PyResult<Plan> {
    let text = scenario_json.to_owned();
    py.detach(move || {
        let sc = Scenario::from_json(&text)?.resolve()?;
        // refused before it is built: a plan is built before anything runs
        tcplab_engine::budget::check_plan(&sc)?;
        Plan::from_scenario(&sc)
    })
    .map_err(scenario_error)
}

/// The Plan of a scenario (JSON text) as JSON: every link (rate_bps,
/// delay_ns, buffer_pkts, the queue with all its parameters, outage
/// intervals), every flow (start_ns/stop_ns, route as link ids, TCP
/// parameters, packet sizes, UDP source), the measurement window and the
/// reference rate — what a run will do. Raises ValueError("key.path: ...").
#[pyfunction]
fn plan(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    Ok(plan_of(py, scenario_json)?.to_json())
}

/// The packet engine's estimate of a run's cost before it starts:
/// {"events", "memory_bytes", "max_events", "max_memory_bytes"}
/// (`tcplab_engine::budget`).
#[pyfunction]
fn estimate_budget(py: Python<'_>, scenario_json: &str) -> PyResult<Vec<(&'static str, f64)>> {
    let text = scenario_json.to_owned();
    let b = py
        .detach(move || {
            Scenario::from_json(&text)
                .and_then(|s| s.resolve())
                .map(|s| tcplab_engine::budget::estimate(&s))
        })
        .map_err(scenario_error)?;
    use tcplab_engine::budget::{MAX_EVENTS, MAX_MEMORY_BYTES};
    Ok(vec![
        ("events", b.events),
        ("memory_bytes", b.memory_bytes),
        ("max_events", MAX_EVENTS),
        ("max_memory_bytes", MAX_MEMORY_BYTES),
    ])
}

/// Departure times (ns, little-endian int64 bytes) of UDP flow `flow` of a
/// scenario: the schedule the packet engine sends, for the ns-2 export.
#[pyfunction]
fn udp_departures<'py>(
    py: Python<'py>,
    scenario_json: &str,
    flow: u32,
) -> PyResult<Bound<'py, PyBytes>> {
    let plan = plan_of(py, scenario_json)?;
    let times = py
        .detach(move || tcplab_engine::sim::udp_departures(&plan, flow))
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
    tcplab_engine::sim::link_outages(&plan_of(py, scenario_json)?, link)
        .ok_or_else(|| PyValueError::new_err(format!("no link {link}")))
}

/// (goodput, throughput) in bit/s of each flow from its delivered payload
/// bytes and data packets, the bytes on the wire of one of its packets and the
/// window's length: the packet engine's report's definition
/// (`tcplab_engine::sim::rates_bps`), for engines that report only counts.
#[pyfunction]
fn rates_bps(
    delivered_bytes: Vec<u64>,
    delivered_packets: Vec<u64>,
    wire_bytes: Vec<u32>,
    measured_s: f64,
) -> PyResult<(Vec<f64>, Vec<f64>)> {
    if delivered_packets.len() != delivered_bytes.len() || wire_bytes.len() != delivered_bytes.len()
    {
        return Err(PyValueError::new_err(
            "rates_bps: columns of different lengths",
        ));
    }
    Ok(delivered_bytes
        .iter()
        .zip(&delivered_packets)
        .zip(&wire_bytes)
        .map(|((&b, &p), &w)| tcplab_engine::sim::rates_bps(b, p, w, measured_s))
        .unzip())
}

/// The engine's unit suffixes and their scales, the one table of them:
/// {"duration": [(suffix, ns)], "rate": [(suffix, bit/s)], "frequency":
/// [(suffix, Hz)], "bytes": [(suffix, bytes)]} ("" is the plain number).
#[pyfunction]
fn unit_tables() -> Vec<(&'static str, Vec<(&'static str, f64)>)> {
    use tcplab_engine::time::{BYTES_UNITS, DURATION_UNITS, FREQ_UNITS, RATE_UNITS};
    vec![
        ("duration", DURATION_UNITS.to_vec()),
        ("rate", RATE_UNITS.to_vec()),
        ("frequency", FREQ_UNITS.to_vec()),
        ("bytes", BYTES_UNITS.to_vec()),
    ]
}

/// The engine's grammar of a quantity: "1.5Mbps" → ("1.5", "Mbps"), or None
/// when the text is not a number followed by a suffix (the suffix is not
/// checked against a table here; `unit_tables` has them).
#[pyfunction]
fn split_quantity(text: &str) -> Option<(String, String)> {
    tcplab_engine::time::split_quantity(text).map(|(n, u)| (n.to_string(), u.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resolve_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_runs, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_budget, m)?)?;
    m.add_function(wrap_pyfunction!(udp_departures, m)?)?;
    m.add_function(wrap_pyfunction!(link_outages, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(rates_bps, m)?)?;
    m.add_function(wrap_pyfunction!(unit_tables, m)?)?;
    m.add_function(wrap_pyfunction!(split_quantity, m)?)?;
    Ok(())
}
