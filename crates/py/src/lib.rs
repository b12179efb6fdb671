//! PyO3 bindings only: convert in, call the Rust crates with the GIL released,
//! convert out. No simulation logic lives here.

use pyo3::prelude::*;

mod aimd;
mod engine;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ENGINE_VERSION", tcplab_engine::VERSION)?;
    // baked by build.rs: a hash of the engine crates' sources, and the git commit
    m.add("BUILD_ID", env!("TCPLAB_BUILD_ID"))?;
    m.add("BUILD_GIT", env!("TCPLAB_BUILD_GIT"))?;
    m.add("RUSTC_VERSION", env!("TCPLAB_RUSTC"))?;
    engine::register(m)?;
    aimd::register(m)?;
    Ok(())
}
