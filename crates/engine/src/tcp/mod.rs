//! TCP as three small parts (DESIGN.md §4):
//!
//! * the *window policy* ([`window`]): slow start, additive increase α,
//!   multiplicative decrease β — TCP(α, β), plain TCP being (1, ½);
//! * the *loss recovery* ([`recovery`]): Tahoe, Reno, NewReno, SACK — what
//!   an ack, a duplicate ack or a timeout does to the sequence space;
//! * the *connection* ([`sender`], [`rtt`]): sequence numbers, the RTT
//!   estimator and retransmission timer, output.
//!
//! The receiver ([`sink`]) acks every packet (or every other, with delayed
//! acks), buffers out-of-order data and reports SACK blocks.
//!
//! Semantics follow ns-2 2.35's one-way TCP agents (`tcp/tcp.cc`,
//! `tcp-reno.cc`, `tcp-newreno.cc`, `tcp-sack1.cc`, `tcp-sink.cc`), which the
//! papers used: windows and sequence numbers count packets, there is no
//! handshake (the optional SYN is just a 40-byte packet 0).

pub mod profiles;
pub mod recovery;
pub mod rtt;
pub mod sender;
pub mod sink;
pub mod window;
