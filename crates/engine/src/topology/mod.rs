//! Topology builders: from a scenario's `[topology]` to the links and each
//! flow's routes. A builder only lays out the network — which links exist,
//! with which (resolved) link spec, and which links each flow's packets
//! cross in each direction; [`crate::scenario::Plan`] then resolves every
//! link's numbers (queue parameters, loss model, outage intervals).
//!
//! A new topology is a new file here, a `TopologyKind` and the schema keys
//! it needs, and one arm in [`build`].

pub mod dumbbell;

use crate::scenario::{LinkSpec, Scenario, TopologyKind};

/// One direction of a duplex link, as a builder lays it out.
#[derive(Debug, Clone)]
pub struct LinkLayout {
    /// Name shared by both directions, e.g. "bottleneck" or "access[3]".
    pub name: String,
    /// True for the direction away from the sources (data), false for the
    /// reverse (acks). Packet errors apply to the forward direction only.
    pub forward: bool,
    /// Id of the duplex link's forward direction: the random stream of its
    /// outage schedule, so that both directions go down together.
    pub duplex: u32,
    /// The link's spec, per-group overrides applied.
    pub spec: LinkSpec,
}

/// A built topology: links (id = index) and, per flow in flow-id order,
/// its route as link ids, [forward (data), reverse (acks)].
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub links: Vec<LinkLayout>,
    pub routes: Vec<[Vec<u32>; 2]>,
}

impl Layout {
    /// Add a duplex link (forward, then reverse direction); returns the
    /// forward direction's id (the reverse is id + 1).
    pub fn duplex(&mut self, name: String, spec: &LinkSpec) -> u32 {
        let id = self.links.len() as u32;
        for forward in [true, false] {
            self.links.push(LinkLayout {
                name: name.clone(),
                forward,
                duplex: id,
                spec: spec.clone(),
            });
        }
        id
    }
}

/// Lay out the scenario's topology.
pub fn build(sc: &Scenario) -> Layout {
    match sc.topology.kind {
        TopologyKind::Dumbbell => dumbbell::build(sc),
    }
}
