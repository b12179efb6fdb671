//! The dumbbell: every flow has its own access link (source → R1) and its
//! own sink link (R2 → receiver); all flows share the bottleneck R1 → R2.
//!
//! Link ids: the bottleneck (0 forward, 1 reverse), then per flow in id
//! order its access link (forward, reverse) and its sink link (forward,
//! reverse). Ids are also the links' random streams (queue, errors,
//! outages), so this order is part of every result.

use super::Layout;
use crate::scenario::Scenario;

pub fn build(sc: &Scenario) -> Layout {
    let topo = &sc.topology;
    let mut lay = Layout::default();
    let bottleneck = lay.duplex("bottleneck".into(), topo.bottleneck());
    let mut id = 0u32;
    for g in sc.flows.values() {
        let access = topo.access().with(&g.access);
        let sink_access = topo.sink_access().with(&g.sink_access);
        for _ in 0..g.count {
            let a = lay.duplex(format!("access[{id}]"), &access);
            let s = lay.duplex(format!("sink_access[{id}]"), &sink_access);
            // forward: access → bottleneck → sink link; reverse: the same back
            lay.routes
                .push([vec![a, bottleneck, s], vec![s + 1, bottleneck + 1, a + 1]]);
            id += 1;
        }
    }
    lay
}
