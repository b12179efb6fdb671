//! A parking lot: K bottlenecks in a row, R0 → R1 → … → RK
//! (`topology.links[i]` joins Ri to Ri+1). Every flow has its own access
//! link into the router before its first bottleneck and its own sink link
//! out of the router after its last; a group's `hops = [first, last]`
//! names the bottlenecks its flows cross (all of them by default). Long
//! flows crossing every bottleneck against one-hop cross flows show the
//! multi-bottleneck penalty of AIMD (a flow crossing k congested links
//! sees k links' losses).
//!
//! Link ids: the bottlenecks first (`links[i]` is 2i forward, 2i + 1
//! reverse), then per flow in id order its access link and its sink link
//! (forward, reverse each), as in the dumbbell.

use super::dumbbell::own_links;
use super::{back, Layout, Role};
use crate::scenario::Scenario;

pub fn build(sc: &Scenario) -> Layout {
    let topo = &sc.topology;
    let mut lay = Layout::default();
    let chain: Vec<u32> = (topo.links.iter().enumerate())
        .map(|(i, l)| lay.duplex(Role::Chain(i as u32), l))
        .collect();
    let last_hop = chain.len() as u32 - 1;
    let mut id = 0u32;
    for (group, g) in &sc.flows {
        let access = topo.access().with(&g.access);
        let sink_access = topo.sink_access().with(&g.sink_access);
        for j in 0..g.count {
            let [first, last] = g.hops.as_ref().map_or([0, last_hop], |h| h.of(j));
            let (a, s) = own_links(&mut lay, id, group, g, &access, &sink_access);
            let mut forward = vec![a];
            forward.extend(&chain[first as usize..=last as usize]);
            forward.push(s);
            let reverse = back(&forward);
            lay.routes.push([forward, reverse]);
            id += 1;
        }
    }
    lay
}
