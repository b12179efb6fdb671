//! A path: every flow crosses one chain of links, `topology.links[0]`
//! first, with no access links of its own (paper D's path is two links:
//! a fast access link, then the slow, long bottleneck).
//!
//! Link ids: `links[i]` is 2i (forward) and 2i + 1 (reverse), so ids are the
//! links' random streams in the order the scenario lists them.

use super::{back, Layout, Role};
use crate::scenario::Scenario;

pub fn build(sc: &Scenario) -> Layout {
    let mut lay = Layout::default();
    let chain: Vec<u32> = (sc.topology.links.iter().enumerate())
        .map(|(i, l)| lay.duplex(Role::Chain(i as u32), l))
        .collect();
    let flows: u32 = sc.flows.values().map(|g| g.count).sum();
    for _ in 0..flows {
        lay.routes.push([chain.clone(), back(&chain)]);
    }
    lay
}
