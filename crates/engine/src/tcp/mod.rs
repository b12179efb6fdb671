//! TCP as three small parts (docs/ARCHITECTURE.md, "The packet engine"):
//!
//! * the *congestion control* ([`cc`]): how big the window is — TCP(α, β)
//!   with slow start, plain TCP being (1, ½). It sees events (an ack's newly
//!   acked packets and RTT sample, a congestion event, a timeout, an ECN
//!   echo), never packets;
//! * the *loss recovery* ([`recovery`]): Tahoe, Reno, NewReno, SACK — what
//!   an ack, a duplicate ack or a timeout does to the sequence space. It
//!   returns actions (retransmit this packet, send new data, enter or leave
//!   recovery) and never touches the window or the timer;
//! * the *connection* ([`sender`], [`rtt`]): applies those actions — output,
//!   the RTT estimator and retransmission timer.
//!
//! The three share a small state ([`state`]): the sequence space.
//!
//! The receiver ([`sink`]) acks every packet (or every other, with delayed
//! acks), buffers out-of-order data and reports SACK blocks.
//!
//! Semantics follow ns-2 2.35's one-way TCP agents (`tcp/tcp.cc`,
//! `tcp-reno.cc`, `tcp-newreno.cc`, `tcp-sack1.cc`, `tcp-sink.cc`), which the
//! papers used: windows and sequence numbers count packets, there is no
//! handshake (the optional SYN is just a 40-byte packet 0).

pub mod cc;
pub mod defaults;
#[cfg(test)]
pub(crate) mod dialogue;
pub mod profiles;
pub mod rate;
pub mod recovery;
pub mod rtt;
pub mod sender;
pub mod sink;
pub mod state;
