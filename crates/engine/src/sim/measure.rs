//! Measurement: the counters at the warm-up snapshot and at the end, and the
//! report over the window (warmup, end].

use super::{Agent, Sim};
use crate::net::link::LinkSnapshot;
use crate::plan::{FlowKind, Variant};
use crate::record::Table;
use crate::time::{secs, SimTime};
use serde::Serialize;

#[derive(Clone, Copy, Default)]
pub(super) struct FlowCount {
    delivered_packets: u64,
    delivered_bytes: u64,
    sent: u64,
    retransmissions: u64,
    timeouts: u64,
    fast_retransmits: u64,
    drops: u64,
}

/// Per-flow results over the measurement window.
#[derive(Serialize, Debug, Clone)]
pub struct FlowResult {
    pub id: u32,
    pub group: String,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    pub start_s: f64,
    pub stop_s: f64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Payload bits delivered in order per second of the window.
    pub goodput_bps: f64,
    /// The same in bits on the wire (headers included).
    pub throughput_bps: f64,
    pub sent_packets: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub drops: u64,
}

#[derive(Serialize, Debug, Clone)]
pub struct LinkResult {
    pub id: u32,
    pub name: String,
    pub direction: &'static str,
    pub rate_bps: f64,
    pub arrivals: u64,
    /// Every loss on the link (queue drops and impairment losses).
    pub drops: u64,
    /// Losses to the link's impairment (errors, outages), included in `drops`.
    pub errors: u64,
    pub departures: u64,
    pub utilization: f64,
}

#[derive(Serialize, Debug, Clone)]
pub struct RunSummary {
    pub engine: &'static str,
    pub engine_version: &'static str,
    pub measured_s: f64,
    pub reference_bps: f64,
    pub events: u64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
}

pub struct RunOutput {
    pub summary: RunSummary,
    pub traces: Vec<Table>,
    /// Why streaming the traces to files failed (the run ended early), if
    /// they were streamed ([`Sim::spill_traces`]) and it did.
    pub trace_error: Option<std::io::Error>,
}

/// (goodput, throughput) in bit/s over a window of `measured_s` seconds:
/// goodput counts the payload bytes delivered in order, throughput the
/// delivered data packets' bytes on the wire (`wire_bytes` each). The one
/// definition: every engine's result gets its rates from here (Python through
/// `tcplab.plan.rates_bps`).
#[inline]
pub fn rates_bps(
    delivered_bytes: u64,
    delivered_packets: u64,
    wire_bytes: u32,
    measured_s: f64,
) -> (f64, f64) {
    (
        delivered_bytes as f64 * 8.0 / measured_s,
        (delivered_packets * wire_bytes as u64) as f64 * 8.0 / measured_s,
    )
}

impl Sim {
    pub(super) fn flow_counts(&self) -> Vec<FlowCount> {
        self.agents
            .iter()
            .zip(&self.flow_drops)
            .map(|(a, &drops)| match a {
                Agent::Tcp { snd, sink } => FlowCount {
                    delivered_packets: sink.delivered_packets(),
                    delivered_bytes: sink.delivered_bytes(),
                    sent: snd.counters().sent,
                    retransmissions: snd.counters().retransmissions,
                    timeouts: snd.counters().timeouts,
                    fast_retransmits: snd.counters().fast_retransmits,
                    drops,
                },
                Agent::Udp {
                    src,
                    received_packets,
                    received_bytes,
                } => FlowCount {
                    delivered_packets: *received_packets,
                    delivered_bytes: *received_bytes,
                    sent: src.sent,
                    drops,
                    ..Default::default()
                },
            })
            .collect()
    }

    /// The flows' counts at the warm-up mark: drops decided before it for
    /// instants after it are the window's (see `Sim::dropped`).
    pub(super) fn warm_flow_counts(&self) -> Vec<FlowCount> {
        let mut counts = self.flow_counts();
        for (c, late) in counts.iter_mut().zip(&self.late_drops) {
            c.drops -= late;
        }
        counts
    }

    pub(super) fn link_counts(&mut self, now: SimTime) -> Vec<LinkSnapshot> {
        self.links.iter_mut().map(|l| l.snapshot(now)).collect()
    }

    pub(super) fn report(mut self) -> RunOutput {
        let end = self.end;
        let warm = self.warmup;
        let measured_s = secs(end - warm);
        let now_f = self.flow_counts();
        let now_l = self.link_counts(end);
        let zero_f = vec![FlowCount::default(); now_f.len()];
        let zero_l = vec![LinkSnapshot::default(); now_l.len()];
        let wf = self.warm_flows.take().unwrap_or(zero_f);
        let wl = self.warm_links.take().unwrap_or(zero_l);
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, info)| {
                let (a, b) = (now_f[i], wf[i]);
                let pk = a.delivered_packets - b.delivered_packets;
                let by = a.delivered_bytes - b.delivered_bytes;
                FlowResult {
                    id: i as u32,
                    group: info.group.clone(),
                    kind: match info.kind {
                        FlowKind::Tcp => "tcp",
                        FlowKind::Udp => "udp",
                    },
                    variant: info.variant,
                    start_s: secs(info.start),
                    stop_s: secs(info.stop),
                    delivered_packets: pk,
                    delivered_bytes: by,
                    goodput_bps: rates_bps(by, pk, info.packet_size, measured_s).0,
                    throughput_bps: rates_bps(by, pk, info.packet_size, measured_s).1,
                    sent_packets: a.sent - b.sent,
                    retransmissions: a.retransmissions - b.retransmissions,
                    timeouts: a.timeouts - b.timeouts,
                    fast_retransmits: a.fast_retransmits - b.fast_retransmits,
                    drops: a.drops - b.drops,
                }
            })
            .collect();
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (a, b) = (now_l[i], wl[i]);
                LinkResult {
                    id: i as u32,
                    name: self.link_info[i].name.clone(),
                    direction: self.link_info[i].direction,
                    rate_bps: l.rate_bps,
                    arrivals: a.arrivals - b.arrivals,
                    drops: a.drops - b.drops,
                    errors: a.errors - b.errors,
                    departures: a.sent_packets - b.sent_packets,
                    utilization: (a.busy_ns - b.busy_ns) as f64 / (end - warm) as f64,
                }
            })
            .collect();
        let summary = RunSummary {
            engine: "packet",
            engine_version: crate::VERSION,
            measured_s,
            reference_bps: self.reference_bps,
            // (the events that wrote streamed traces out are not the run's)
            events: self.sched.popped() - self.spills,
            flows,
            links,
        };
        let (traces, trace_error) = self.rec.finish(end);
        RunOutput {
            summary,
            traces,
            trace_error,
        }
    }
}
