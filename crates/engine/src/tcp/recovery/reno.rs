//! TCP Reno (ns-2 `Agent/TCP/Reno`). RFC 5681 §3.2:
//!
//! > 2. When the third duplicate ACK is received, a TCP MUST set ssthresh
//! > to no more than the value given in equation (4). [...]
//! > 3. The lost segment starting at SND.UNA MUST be retransmitted and
//! > cwnd set to ssthresh plus 3*SMSS. This artificially "inflates" the
//! > congestion window by the number of segments (three) that have left
//! > the network and which the receiver has buffered.
//! > 4. For each additional duplicate ACK received (after the third),
//! > cwnd MUST be incremented by SMSS.
//! > [...]
//! > 6. When the next ACK arrives that acknowledges previously
//! > unacknowledged data, a TCP MUST set cwnd to ssthresh [...]
//! > This is termed "deflating" the window.
//!
//! As ns-2 does, the inflation is kept apart from cwnd (`dupwnd`, added to
//! the usable window), so cwnd itself is β·W during recovery, and ns-2's
//! ssthresh is taken from the window in use rather than FlightSize. Several
//! losses in one window usually end in a timeout.

use super::{begin_recovery, fast_retransmit, new_ack, Action, Actions, FastRetransmit};
use crate::tcp::state::{CwndAction, TcpState};

#[inline]
pub fn on_ack(st: &mut TcpState, ack: i64, cwnd: f64, acts: &mut Actions) {
    let thresh = st.dupack_threshold();
    if ack > st.last_ack() {
        if st.last_cwnd_action() == CwndAction::Dupack {
            st.note_cwnd_action(CwndAction::Exited);
            acts.push(Action::ExitRecovery);
        }
        // RFC 5681 §3.2: "When the next ACK arrives that acknowledges previously unacknowledged
        // data, a TCP MUST set cwnd to ssthresh (the value set in step 2)."
        st.end_inflation();
        acts.push(new_ack(st, ack, true));
    } else if ack == st.last_ack() {
        st.count_dupack();
        // RFC 5681 §3.2: "The fast retransmit algorithm uses the arrival of 3 duplicate ACKs (as
        // defined in section 2, without any intervening ACKs which move SND.UNA) as an indication
        // that a segment has been lost."
        if st.dupacks() == thresh {
            let allow = st.last_cwnd_action() == CwndAction::Dupack;
            dupack_action(st, cwnd, acts, allow);
        } else if st.dupacks() > thresh && st.last_cwnd_action() == CwndAction::Dupack {
            // RFC 5681 §3.2: "For each additional duplicate ACK received (after the third), cwnd
            // MUST be incremented by SMSS."
            st.inflate(); // fast recovery: each dupack means a packet left the network
        } else if st.dupacks() < thresh && st.limited_transmit() {
            acts.push(Action::SendOne);
        }
    }
    if ack >= st.last_ack() && (st.dupacks() == 0 || st.dupacks() > thresh - 1) {
        acts.push(Action::SendMuch { maxburst: 0 });
    }
}

/// Enter fast retransmit / fast recovery unless this window already had one
/// (ns-2 `bugFix_`). `allow` lets Reno re-enter while still in recovery.
/// After an echoed congestion mark halved this window (ECN), a loss in it is
/// retransmitted with the window's inflation but no second reduction (ns-2's
/// `dupack_action()`, RFC 3168 §6.1.2: "the TCP source [...] should not
/// decrease the slow-start threshold [...] again" within the same window).
pub fn dupack_action(st: &mut TcpState, cwnd: f64, acts: &mut Actions, allow: bool) {
    match fast_retransmit(st, allow) {
        FastRetransmit::Reduce => begin_recovery(st, cwnd, acts, false),
        FastRetransmit::AfterEcn => {
            st.note_cwnd_action(CwndAction::Dupack);
            acts.push(Action::RepairAfterEcn { to_one: false });
        }
        FastRetransmit::No => return,
    }
    acts.push(Action::ResetTimer { mild: true });
    // RFC 5681 §3.2: "The lost segment starting at SND.UNA MUST be retransmitted and cwnd set to
    // ssthresh plus 3*SMSS."
    acts.push(Action::Retransmit(st.last_ack() + 1));
    st.begin_inflation();
}

/// Reno's and NewReno's part of a timeout (ns-2 `RenoTcpAgent::timeout()`).
pub fn timeout_prelude(st: &mut TcpState) {
    st.end_inflation();
    st.clear_dupacks();
    if st.bug_fix() {
        st.mark_recover();
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::Variant;
    use crate::tcp::dialogue::Dialogue;

    #[test]
    fn three_dupacks_fast_retransmit_then_inflate_then_deflate() {
        // 0..15 out, cwnd 13; packet 3 is lost.
        let mut d = Dialogue::opened(Variant::Reno);
        d.ack(130, 2).sent(&[16]); // limited transmit
        d.ack(131, 2).sent(&[17]);
        // third dupack: retransmit 3; ssthresh = cwnd = 13/2 (ns-2 keeps
        // the half packet in cwnd); usable window 6 + 3 inflation = 9
        d.ack(132, 2).sent(&[3]).window(6.5, 6);
        // each further dupack inflates by one; new data once 18 ≤ 2 + 6 + dupwnd
        for t in 133..139 {
            d.ack(t, 2).sent(&[]);
        }
        d.ack(139, 2).sent(&[18]); // the tenth dupack: dupwnd 10
                                   // the ack for the retransmission deflates (cwnd is ssthresh's 6.5)
                                   // and congestion avoidance adds 1/cwnd
        d.ack(300, 17)
            .sent(&[19, 20, 21, 22, 23])
            .window(6.5 + 1.0 / 6.5, 6);
    }
}
