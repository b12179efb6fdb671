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
    let out = Sim::new(&plan).run();
    Ok((sc, out))
}
