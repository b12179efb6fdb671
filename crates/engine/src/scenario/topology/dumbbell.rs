//! The dumbbell: every flow has its own access link (source → R1) and its
//! own sink link (R2 → receiver); all flows share the bottleneck R1 → R2.
//!
//! Link ids: the bottleneck (0 forward, 1 reverse), then per flow in id
//! order its access link (forward, reverse) and its sink link (forward,
//! reverse). Ids are also the links' random streams (queue, errors,
//! outages), so this order is part of every result.

use super::{Layout, Role};
use crate::scenario::{FlowGroup, LinkSpec, Scenario};

pub fn build(sc: &Scenario) -> Layout {
    let topo = &sc.topology;
    let mut lay = Layout::default();
    let bottleneck = lay.duplex(Role::Bottleneck, topo.bottleneck());
    let mut id = 0u32;
    for (group, g) in &sc.flows {
        let access = topo.access().with(&g.access);
        let sink_access = topo.sink_access().with(&g.sink_access);
        for _ in 0..g.count {
            let (a, s) = own_links(&mut lay, id, group, g, &access, &sink_access);
            // forward: access → bottleneck → sink link; reverse: the same back
            lay.routes
                .push([vec![a, bottleneck, s], vec![s + 1, bottleneck + 1, a + 1]]);
            id += 1;
        }
    }
    lay
}

/// Flow `id`'s own access and sink links (of group `group`, `g`), added to
/// `lay`: their forward ids.
pub(super) fn own_links(
    lay: &mut Layout,
    id: u32,
    group: &str,
    g: &FlowGroup,
    access: &LinkSpec,
    sink_access: &LinkSpec,
) -> (u32, u32) {
    let a = lay.duplex(
        Role::Access {
            flow: id,
            group,
            overridden: g.access.is_some(),
        },
        access,
    );
    let s = lay.duplex(
        Role::SinkAccess {
            flow: id,
            group,
            overridden: g.sink_access.is_some(),
        },
        sink_access,
    );
    (a, s)
}
