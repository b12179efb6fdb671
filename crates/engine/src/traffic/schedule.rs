//! Departure schedules of sine-shaped sources, remembered across the runs of
//! one process.
//!
//! A sine-shaped UDP source's departures are a function of its shape, its
//! packet size and its start alone when it sends without jitter: the shape is
//! deterministic, each departure is solved from the one before, and the
//! source sends on a microsecond grid from its start. A sweep runs one
//! background under many TCP settings and seeds — paper A's sweeps in
//! `reproduce --full` hold about 300 distinct schedules for 3,800 runs — and
//! solving the departures is about a fifth of such a run's instructions. So a
//! run records the schedule it solves, and later runs in the same process
//! replay it. The process's first schedule is the exception: its first run
//! only notes that it was asked for (a process that runs a scenario once pays
//! nothing for recording), and its second records it. A run that needs more
//! departures than were recorded goes on from a copy of the shape as it was
//! after the last one, so every departure is the one the shape would have
//! given (its state, the phases it rotates on, depends on the calls made
//! before). A jittered source's departures depend on its random stream, so
//! they are solved in every run.
//!
//! A schedule keeps each departure as its gap after the one before, in
//! seconds, as the sender's `Order::after` gives it (`(t − now) / 1e9`, a
//! division on each send's path otherwise): the time follows from it exactly
//! ([`ns_of`]), which recording checks.
//!
//! Bounded: at most `BUDGET` departures are kept in all (128 MB), the least
//! recently used schedule going first.

use std::sync::{Arc, Mutex};

use super::shape::Shape;
use crate::sched::prefetch;
use crate::time::SimTime;

/// Departures kept in all, over every schedule (8 bytes each).
const BUDGET: usize = 16 << 20;

/// Schedules shorter than this are not worth keeping.
const SHORTEST: usize = 256;

/// How far ahead of the departure it takes a replay asks for the
/// schedule's memory (`prefetch`): four cache lines of departures.
const PREFETCH_AHEAD: usize = 32;

/// The longest gap kept, in seconds: its ns (`ns_of`) are below 2^52.
const LONGEST_S: f64 = (1u64 << 52) as f64 / 1e9;

pub struct Schedule {
    key: Vec<u64>,
    /// The departures after the start, in order, each as its gap in
    /// seconds after the one before (the first: after the start), as
    /// `ns_f64(t − before) / 1e9` gives it; each in `0..LONGEST_S`.
    gaps: Vec<f64>,
    /// The shape's time (before the grid) of the last departure.
    pub nominal: SimTime,
    /// The shape as it was after computing the last departure; None when
    /// the shape had no departure after it.
    pub after: Option<Shape>,
}

/// The nanoseconds `d` of a gap `g = ns_f64(d) / 1e9`: exact for any `d`
/// below ~2^50 ns, and a recording keeps no gap it does not give back.
#[inline(always)]
pub fn ns_of(g: f64) -> SimTime {
    (g * 1e9 + 0.5) as SimTime
}

impl Schedule {
    pub fn key(&self) -> &[u64] {
        &self.key
    }

    pub fn len(&self) -> usize {
        self.gaps.len()
    }

    /// The gaps, to go on recording after them.
    pub fn gaps(&self) -> &[f64] {
        &self.gaps
    }

    /// Departure `i`'s gap after the one before, in ns (`ns_of`) and in
    /// seconds; None past the last.
    #[inline(always)]
    pub fn departure(&self, i: usize) -> Option<(SimTime, f64)> {
        let &g = self.gaps.get(i)?;
        // the departures a few lines on (a hint: no effect on results); a
        // schedule is read once per run, one packet's work apart, and at
        // 10 Mb/s is ~9 MB at 1800 s
        prefetch(self.gaps.as_ptr().wrapping_add(i + PREFETCH_AHEAD));
        // SAFETY: `keep` keeps gaps in 0..LONGEST_S only, so g·1e9 + 0.5 is
        // finite and below 2^53: `ns_of` without its saturating conversion
        let ns = unsafe { (g * 1e9 + 0.5).to_int_unchecked::<i64>() };
        Some((ns as SimTime, g))
    }
}

/// Most recently used last.
static KEPT: Mutex<Vec<Arc<Schedule>>> = Mutex::new(Vec::new());

/// What identifies a schedule: the shape's parameters (bit for bit), the
/// packet's size in bits and the start. None for shapes that are not
/// remembered: constant (one division per packet), piecewise (cheap), on/off
/// (random).
pub fn key_of(shape: &Shape, bits: f64, start: SimTime) -> Option<Vec<u64>> {
    let Shape::Sines {
        offset_bps,
        terms,
        bracket_s,
        ..
    } = shape
    else {
        return None;
    };
    Some(
        [*offset_bps, *bracket_s, bits]
            .into_iter()
            .chain(terms.iter().flat_map(|s| [s.amp_bps, s.omega, s.phase]))
            .map(f64::to_bits)
            .chain([start])
            .collect(),
    )
}

/// What a run does with the departures of the schedule under a key.
pub enum Found {
    /// Replay them: an earlier run recorded them.
    Replay(Arc<Schedule>),
    /// Solve and record them: an earlier run asked for the same schedule, or
    /// for another one (the process runs many).
    Record,
    /// Solve them: the process's first schedule, asked for the first time (a
    /// process that runs a scenario once pays nothing for recording).
    Solve,
}

/// Keys asked for once, most recent last (at most `ASKED`).
static ASKED: Mutex<Vec<Vec<u64>>> = Mutex::new(Vec::new());
const ASKED_KEYS: usize = 4096;

/// What to do with the schedule under `key`.
pub fn find(key: &[u64]) -> Found {
    {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = kept.iter().position(|s| s.key == key) {
            let s = kept.remove(i);
            kept.push(s.clone());
            return Found::Replay(s);
        }
    }
    ask(&mut ASKED.lock().unwrap_or_else(|e| e.into_inner()), key)
}

/// Whether to record a schedule not kept: `asked` holds the keys asked for
/// before (the process's `ASKED`).
fn ask(asked: &mut Vec<Vec<u64>>, key: &[u64]) -> Found {
    if asked.iter().any(|k| k == key) {
        return Found::Record;
    }
    // the process's first schedule is solved only; once a process has asked
    // for one, it runs many (a sweep, `reproduce`), and a new schedule is
    // recorded at once, so its second run already replays
    let first = asked.is_empty();
    if asked.len() >= ASKED_KEYS {
        asked.remove(0);
    }
    asked.push(key.to_vec());
    if first {
        Found::Solve
    } else {
        Found::Record
    }
}

/// Remember the departures `gaps` under `key` (unless as much is already
/// kept), the last one's nominal time and the shape after it.
pub fn keep(key: Vec<u64>, gaps: Vec<f64>, nominal: SimTime, after: Option<Shape>) {
    if gaps.len() < SHORTEST || gaps.len() > BUDGET {
        return;
    }
    // (`Schedule::departure` relies on it; the sources record nothing else)
    if !gaps.iter().all(|g| (0.0..LONGEST_S).contains(g)) {
        return;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = kept.iter().position(|s| s.key == key) {
        if kept[i].gaps.len() >= gaps.len() {
            return;
        }
        kept.remove(i);
    }
    let mut total: usize = kept.iter().map(|s| s.gaps.len()).sum::<usize>() + gaps.len();
    while total > BUDGET {
        total -= kept.remove(0).gaps.len();
    }
    kept.push(Arc::new(Schedule {
        key,
        gaps,
        nominal,
        after,
    }));
}

/// Forget every schedule and every key asked for (tests: a run that solves
/// its departures again).
#[cfg(test)]
pub(crate) fn forget_all() {
    KEPT.lock().unwrap_or_else(|e| e.into_inner()).clear();
    ASKED.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The schedule kept under `key`, if any.
#[cfg(test)]
pub(crate) fn kept_under(key: &[u64]) -> Option<Arc<Schedule>> {
    let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    kept.iter().find(|s| s.key == key).cloned()
}

/// The departures kept in all.
#[cfg(test)]
pub(crate) fn kept() -> usize {
    let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    kept.iter().map(|s| s.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ns_f64;
    use crate::traffic::shape::Sine;
    use crate::traffic::udp::{departures, UdpSource};

    /// A sine no other test uses (its phase), so no other test's schedule is
    /// found under its key; clipped (its amplitude above its mean: solved in
    /// humps) or not (the never-clipped solve, whose phases rotate on).
    fn sine(amp_bps: f64) -> Shape {
        Shape::sines(
            0.5e6,
            vec![Sine {
                amp_bps,
                omega: 2.0 * std::f64::consts::PI * 0.7,
                phase: 0.123_456_789,
            }],
        )
    }

    /// The departures solved by the shape itself, as a source without a
    /// schedule sends them (on its microsecond grid from the start).
    fn solved(shape: fn() -> Shape, start: SimTime, stop: SimTime) -> Vec<SimTime> {
        let (mut s, mut t, mut out) = (shape(), start, vec![start]);
        while let Some(n) = s.next_departure(t, 8000.0) {
            let sent = start + (n - start).div_ceil(1_000) * 1_000;
            if sent >= stop {
                break;
            }
            out.push(sent);
            t = n;
        }
        out
    }

    fn same(a: &[SimTime], b: &[SimTime]) {
        let first = a.iter().zip(b).position(|(x, y)| x != y);
        assert!(
            a.len() == b.len() && first.is_none(),
            "{} against {} departures, first difference at {first:?}",
            a.len(),
            b.len()
        );
    }

    #[test]
    fn a_process_records_every_schedule_but_its_first_at_the_first_ask() {
        let mut asked = Vec::new();
        let (k1, k2) = (vec![1, 2, 3], vec![1, 2, 4]);
        assert!(matches!(ask(&mut asked, &k1), Found::Solve));
        assert!(matches!(ask(&mut asked, &k1), Found::Record));
        assert!(matches!(ask(&mut asked, &k2), Found::Record));
        assert!(matches!(ask(&mut asked, &k2), Found::Record));
        assert_eq!(asked, [k1, k2]);
    }

    #[test]
    fn a_replayed_schedule_is_the_solved_one_and_goes_on_past_its_end() {
        replayed(|| sine(0.6e6));
        replayed(|| sine(0.4e6));
    }

    fn replayed(shape: fn() -> Shape) {
        let source = || UdpSource::new(7, shape(), 1000, 0, 1);
        let solved = |start, stop| solved(shape, start, stop);
        let s = 1_000_000_000;
        let key = key_of(&shape(), 8000.0, s).unwrap();
        assert!(kept_under(&key).is_none());
        let short = solved(s, 30 * s);
        let long = solved(s, 70 * s);
        assert!(short.len() > SHORTEST && long.len() > short.len() + SHORTEST);

        // the first run solves (and records, unless no schedule was asked
        // for before in this process: `ask`), the second records if the first
        // did not
        same(&departures(source(), s, 30 * s), &short);
        same(&departures(source(), s, 30 * s), &short);
        let kept = kept_under(&key).expect("recorded").len();
        assert!(kept >= short.len() - 1, "{kept}");
        // the next replays: the same; then a longer run replays and goes on
        // from the shape as it was after the last recorded departure
        same(&departures(source(), s, 30 * s), &short);
        same(&departures(source(), s, 20 * s), &solved(s, 20 * s));
        same(&departures(source(), s, 70 * s), &long);
        // and the longer schedule is kept, and replayed
        assert!(kept_under(&key).unwrap().len() >= long.len() - 1);
        same(&departures(source(), s, 70 * s), &long);
        // each replayed gap is the division the sender's order would do
        let mut src = source();
        let mut now = src.first_departure(s);
        while let (_, Some((t, gap_s))) = src.emit_spaced(now) {
            assert_eq!(gap_s.to_bits(), (ns_f64(t - now) / 1e9).to_bits(), "at {t}");
            if t >= 70 * s {
                break;
            }
            now = t;
        }
        // another start is another schedule
        same(&departures(source(), 2 * s, 30 * s), &solved(2 * s, 30 * s));
    }

    #[test]
    fn only_sines_are_remembered_and_their_keys_tell_them_apart() {
        assert!(key_of(&Shape::Constant { bps: 1e6 }, 8000.0, 0).is_none());
        let k = key_of(&sine(0.6e6), 8000.0, 0).unwrap();
        assert_ne!(k, key_of(&sine(0.6e6), 8008.0, 0).unwrap());
        assert_ne!(k, key_of(&sine(0.6e6), 8000.0, 1).unwrap());
        assert_ne!(k, key_of(&sine(0.4e6), 8000.0, 0).unwrap());
        let other = Shape::sines(
            0.5e6,
            vec![Sine {
                amp_bps: 0.6e6,
                omega: 2.0 * std::f64::consts::PI * 0.7,
                phase: 0.123_456_788,
            }],
        );
        assert_ne!(k, key_of(&other, 8000.0, 0).unwrap());
    }
}
