//! Topology builders: from a scenario's `[topology]` to the links and each
//! flow's routes. A builder only lays out the network — which links exist,
//! with which (resolved) link spec, and which links each flow's packets
//! cross in each direction; `Plan::from_scenario` then resolves every
//! link's numbers (queue parameters, loss model, outage intervals).
//!
//! A new topology is a new file here, a `TopologyKind` and the schema keys
//! it needs, and one arm in [`build`].

pub mod dumbbell;
pub mod parking_lot;
pub mod path;

use crate::scenario::{LinkRole, LinkSpec, Scenario, TopologyKind};

/// One direction of a duplex link, as a builder lays it out.
#[derive(Debug, Clone)]
pub struct LinkLayout {
    /// Name shared by both directions, e.g. "bottleneck" or "access[3]".
    pub name: String,
    /// What the link is (see `LinkPlan::role`, `flow`, `hop`).
    pub role: LinkRole,
    pub flow: Option<u32>,
    pub hop: Option<u32>,
    /// The scenario key of its spec (see `LinkPlan::key`).
    pub key: String,
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
    /// Add a duplex link (forward, then reverse direction) of role `role`;
    /// returns the forward direction's id (the reverse is id + 1).
    pub fn duplex(&mut self, role: Role, spec: &LinkSpec) -> u32 {
        let id = self.links.len() as u32;
        let (name, key) = role.name_and_key();
        let (role, flow, hop) = match role {
            Role::Bottleneck => (LinkRole::Bottleneck, None, None),
            Role::Access { flow, .. } => (LinkRole::Access, Some(flow), None),
            Role::SinkAccess { flow, .. } => (LinkRole::SinkAccess, Some(flow), None),
            Role::Chain(hop) => (LinkRole::Chain, None, Some(hop)),
        };
        for forward in [true, false] {
            self.links.push(LinkLayout {
                name: name.clone(),
                role,
                flow,
                hop,
                key: key.clone(),
                forward,
                duplex: id,
                spec: if forward {
                    spec.clone()
                } else {
                    spec.reversed()
                },
            });
        }
        id
    }
}

/// A link as a builder adds it: its role, with the flow and group whose own
/// link it is (and whether the group overrides the topology's spec), or its
/// place in the chain.
pub enum Role<'a> {
    Bottleneck,
    Access {
        flow: u32,
        group: &'a str,
        overridden: bool,
    },
    SinkAccess {
        flow: u32,
        group: &'a str,
        overridden: bool,
    },
    Chain(u32),
}

impl Role<'_> {
    /// The link's name (`LinkPlan::name`) and its spec's key (`LinkPlan::key`).
    fn name_and_key(&self) -> (String, String) {
        let own = |side: &str, flow: u32, group: &str, overridden: bool| {
            let key = if overridden {
                format!("flows.{group}.{side}")
            } else {
                format!("topology.{side}")
            };
            (format!("{side}[{flow}]"), key)
        };
        match *self {
            Role::Bottleneck => ("bottleneck".into(), "topology.bottleneck".into()),
            Role::Access {
                flow,
                group,
                overridden,
            } => own("access", flow, group, overridden),
            Role::SinkAccess {
                flow,
                group,
                overridden,
            } => own("sink_access", flow, group, overridden),
            Role::Chain(i) => (format!("link[{i}]"), format!("topology.links[{i}]")),
        }
    }
}

/// Lay out the scenario's topology. A flow of a `reverse` group sends its
/// data along the builder's reverse route and its acks along the forward
/// one, on any topology.
pub fn build(sc: &Scenario) -> Layout {
    let mut lay = match sc.topology.kind {
        TopologyKind::Dumbbell => dumbbell::build(sc),
        TopologyKind::Path => path::build(sc),
        TopologyKind::ParkingLot => parking_lot::build(sc),
    };
    let mut routes = lay.routes.iter_mut();
    for g in sc.flows.values() {
        for route in routes.by_ref().take(g.count as usize) {
            if g.reverse {
                route.swap(0, 1);
            }
        }
    }
    lay
}

/// The reverse direction of a route of forward link ids: the same duplex
/// links walked back (a duplex link's reverse direction is id + 1).
fn back(forward: &[u32]) -> Vec<u32> {
    forward.iter().rev().map(|l| l + 1).collect()
}
