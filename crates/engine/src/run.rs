//! The whole way from a scenario's JSON to a run's output: parse, resolve,
//! check the budget, plan, simulate. Above `scenario`, `budget` and `sim`,
//! which it joins.

use crate::budget;
use crate::plan::Plan;
use crate::scenario::{Scenario, ScenarioError};
use crate::sim::{RunOutput, Sim};

/// Parse, resolve, plan and run a scenario given as JSON; refused if beyond
/// [`crate::budget`]'s limits.
pub fn run_json(text: &str) -> Result<(Scenario, RunOutput), ScenarioError> {
    let sc = Scenario::from_json(text)?.resolve()?;
    budget::check(&sc, false)?;
    let plan = Plan::from_scenario(&sc)?;
    let sim = Sim::new(&plan);
    // The simulator holds what it needs; the Plan (a few hundred bytes per
    // link and flow: 15 MB at 10^4 flows) is not kept through the run.
    drop(plan);
    Ok((sc, sim.run()))
}
