//! PyO3 bindings only: convert in, call the Rust crates with the GIL released,
//! convert out. No simulation logic lives here.

use pyo3::prelude::*;

mod aimd;
mod engine;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ENGINE_VERSION", tcplab_engine::VERSION)?;
    engine::register(m)?;
    aimd::register(m)?;
    Ok(())
}
