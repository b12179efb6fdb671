//! Departure schedules of sine-shaped sources, shared by the runs of one
//! process.
//!
//! A sine-shaped UDP source's departures are a function of its shape, its
//! packet size and its start alone when it sends without jitter: the shape is
//! deterministic, each departure is solved from the one before, and the
//! source sends on a microsecond grid from its start. A sweep runs one
//! background under many TCP settings and seeds — paper A's sweeps in
//! `reproduce --full` hold about 300 distinct schedules for 3,800 runs — and
//! solving the departures is a fifth to a half of such a run's instructions.
//! So the runs of a process that use the same schedule share it: a
//! [`Schedule`] grows by chunks of [`CHUNK`] departures, each solved once, by
//! the first run that needs it, from the shape as the chunk before left it
//! (its state, the phases it rotates on, depends on the calls made before);
//! other runs read it, and a run that started with the schedule still
//! growing (`reproduce` runs two workers, which start the seeds of a point
//! together) reads the chunks the other solved and solves the next ones
//! itself, so that a schedule is solved once, whichever thread solves it.
//! The process's first schedule is the exception: its first run solves on
//! its own (a process that runs a scenario once pays nothing for sharing). A
//! jittered source's departures depend on its random stream: solved in every
//! run.
//!
//! A schedule keeps each departure as its gap after the one before, in
//! seconds, as the sender's `Order::after` gives it (`ns_f64(t − now) /
//! 1e9`, a division on each send's path otherwise): the time follows from it
//! exactly ([`ns_of`]).
//!
//! Bounded: at most `BUDGET` departures are kept in all (128 MB), the least
//! recently used schedule going first (a run reading it goes on with its
//! chunks, and solves on alone past them).

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};

use super::shape::Shape;
use crate::sched::{prefetch, Order};
use crate::time::SimTime;

/// Departures kept in all, over every schedule (8 bytes each).
const BUDGET: usize = 16 << 20;

/// Departures solved at once (8 KB), and the unit a schedule grows by.
pub const CHUNK: usize = 1024;

/// How far ahead of the departure it takes a reader asks for the chunk's
/// memory (`prefetch`): four cache lines of departures.
const PREFETCH_AHEAD: usize = 32;

/// The longest gap kept, in ns: its seconds give it back exactly (`ns_of`).
const LONGEST_NS: SimTime = 1 << 50;

/// Departures: each one's gap after the one before, in seconds.
pub type Chunk = Arc<[f64]>;

/// A departure of a chunk: its gap after the one before, in ns (`ns_of`)
/// and in seconds; None past the chunk's end. Prefetches a few lines on
/// (a hint: no effect on results; a schedule is read once per run, one
/// packet's work apart).
#[inline(always)]
pub fn departure(chunk: &Chunk, i: usize) -> Option<(SimTime, f64)> {
    let &g = chunk.get(i)?;
    prefetch(chunk.as_ptr().wrapping_add(i + PREFETCH_AHEAD));
    // SAFETY: a chunk holds gaps of at most LONGEST_NS ns (`Solver::solve`),
    // so g·1e9 + 0.5 is finite and below 2^51: `ns_of` without its
    // saturating conversion
    let ns = unsafe { (g * 1e9 + 0.5).to_int_unchecked::<i64>() };
    Some((ns as SimTime, g))
}

/// The ns `d` of a gap `g = ns_f64(d) / 1e9` (`d` ≤ 2^50): g·1e9 is within
/// d·2^-52 ≤ 1/4 of `d`, and adding 1/2 rounds by at most 1/8, so the sum
/// truncates to `d`.
#[inline(always)]
pub fn ns_of(g: f64) -> SimTime {
    (g * 1e9 + 0.5) as SimTime
}

/// A source's microsecond grid from `origin` (`UdpSource::on_grid`).
#[inline(always)]
pub fn on_grid(origin: Option<SimTime>, t: SimTime) -> SimTime {
    match origin {
        // (`div_ceil` as a rounded-up quotient: one multiplication by the
        // reciprocal instead of the quotient, its remainder and a test;
        // exact while t - o + 999 fits, as a run's times do)
        Some(o) if t > o => o + (t - o + 999) / 1_000 * 1_000,
        _ => t,
    }
}

pub struct Schedule {
    key: Vec<u64>,
    /// Departures solved so far (read without the lock, for the budget).
    len: AtomicUsize,
    solver: Mutex<Solver>,
}

/// A schedule's chunks, and where its solve goes on.
struct Solver {
    chunks: Vec<Chunk>,
    /// The shape as the last chunk left it; None once it has no departure
    /// after the last, or gave one whose gap a chunk cannot keep (a reader
    /// then goes on alone: `alone`).
    shape: Option<Shape>,
    /// The shape after the departure that could not be kept, and that
    /// departure's nominal time.
    alone: Option<(Shape, SimTime)>,
    bits: f64,
    origin: SimTime,
    /// The shape's time (before the grid) of the last departure solved.
    nominal: SimTime,
    /// The last departure's time.
    last: SimTime,
}

/// What a reader of a schedule gets for chunk `i`.
pub enum Next {
    Chunk(Chunk),
    /// No more departures.
    End,
    /// The schedule cannot go on: the next departure's nominal time, and
    /// the shape after it, to solve on alone.
    Alone(Shape, SimTime),
}

impl Schedule {
    pub fn key(&self) -> &[u64] {
        &self.key
    }

    pub fn len(&self) -> usize {
        self.len.load(Relaxed)
    }

    /// The solve's state. A run that panicked while solving (a bug) may have
    /// left it part-way through a chunk, so the schedule is dropped from the
    /// kept ones (later runs solve a new one) and the runs reading it stop
    /// with the panic too, rather than read departures that may be wrong.
    fn solver(&self) -> MutexGuard<'_, Solver> {
        match self.solver.lock() {
            Ok(s) => s,
            Err(_) => {
                kept_list().retain(|k| k.key != self.key);
                panic!("a sine schedule's solve panicked in another run of this process");
            }
        }
    }

    /// Chunk `i`, solved now if no run has solved it yet (the lock held
    /// while solving: a run that needs the same chunk waits for it rather
    /// than solving it again).
    #[cold]
    #[inline(never)]
    pub fn chunk(self: &Arc<Self>, i: usize) -> Next {
        let mut s = self.solver();
        debug_assert!(i <= s.chunks.len());
        if let Some(c) = s.chunks.get(i) {
            return Next::Chunk(c.clone());
        }
        let Some(c) = s.solve() else {
            return match s.alone.clone() {
                Some((shape, n)) => Next::Alone(shape, n),
                None => Next::End,
            };
        };
        s.chunks.push(c.clone());
        let n = self.len.fetch_add(c.len(), Relaxed) + c.len();
        drop(s);
        if n > CHUNK {
            fit(self);
        }
        Next::Chunk(c)
    }
}

impl Solver {
    /// The next chunk (shorter only where the shape stops), or None when
    /// there is no departure to add.
    fn solve(&mut self) -> Option<Chunk> {
        let shape = self.shape.as_mut()?;
        let mut gaps = Vec::with_capacity(CHUNK);
        while gaps.len() < CHUNK {
            let Some(n) = shape.next_departure(self.nominal, self.bits) else {
                self.shape = None;
                break;
            };
            // as the source sends it: on its grid, never before the last
            let t = on_grid(Some(self.origin), n.max(self.last));
            let d = t - self.last;
            if d > LONGEST_NS {
                // not kept: a reader goes on alone from here
                self.alone = self.shape.take().map(|s| (s, n));
                break;
            }
            gaps.push(Order::delay_s(self.last, t));
            (self.nominal, self.last) = (n, t);
        }
        (!gaps.is_empty()).then(|| gaps.into())
    }
}

/// Most recently used last.
static KEPT: Mutex<Vec<Arc<Schedule>>> = Mutex::new(Vec::new());

fn kept_list() -> MutexGuard<'static, Vec<Arc<Schedule>>> {
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Drop the least recently used schedules but `s` until the rest fit the
/// budget.
fn fit(s: &Arc<Schedule>) {
    let mut kept = kept_list();
    let mut total: usize = kept.iter().map(|k| k.len()).sum();
    let mut i = 0;
    while total > BUDGET && i < kept.len() {
        if Arc::ptr_eq(&kept[i], s) {
            i += 1;
        } else {
            total -= kept.remove(i).len();
        }
    }
}

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

/// Keys asked for (a process that asked for one runs many), most recent
/// last (at most `ASKED_KEYS`).
static ASKED: Mutex<Vec<Vec<u64>>> = Mutex::new(Vec::new());
const ASKED_KEYS: usize = 4096;

/// The schedule of a source whose departures are keyed `key` (`key_of`),
/// sending `bits` per packet from `start` with a shape now `shape`: shared
/// with the other runs of the process; None for the process's first
/// schedule, asked for the first time (solved by the source alone).
pub fn find(key: Vec<u64>, shape: &Shape, bits: f64, start: SimTime) -> Option<Arc<Schedule>> {
    let mut kept = kept_list();
    if let Some(i) = kept.iter().position(|s| s.key == key) {
        let s = kept.remove(i);
        kept.push(s.clone());
        return Some(s);
    }
    if !ask(&mut ASKED.lock().unwrap_or_else(|e| e.into_inner()), &key) {
        return None;
    }
    let s = Arc::new(Schedule {
        key,
        len: AtomicUsize::new(0),
        solver: Mutex::new(Solver {
            chunks: Vec::new(),
            shape: Some(shape.clone()),
            alone: None,
            bits,
            origin: start,
            nominal: start,
            last: start,
        }),
    });
    kept.push(s.clone());
    Some(s)
}

/// Whether to share a schedule not kept: `asked` holds the keys asked for
/// before (the process's `ASKED`). The process's first schedule is solved
/// alone at its first ask; once a process has asked for one, it runs many
/// (a sweep, `reproduce`), and every schedule is shared from its first run.
fn ask(asked: &mut Vec<Vec<u64>>, key: &[u64]) -> bool {
    if asked.iter().any(|k| k == key) {
        return true;
    }
    let first = asked.is_empty();
    if asked.len() >= ASKED_KEYS {
        asked.remove(0);
    }
    asked.push(key.to_vec());
    !first
}

/// Forget every schedule and every key asked for (tests: a run that solves
/// its departures again).
#[cfg(test)]
pub(crate) fn forget_all() {
    kept_list().clear();
    ASKED.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The schedule kept under `key`, if any.
#[cfg(test)]
pub(crate) fn kept_under(key: &[u64]) -> Option<Arc<Schedule>> {
    kept_list().iter().find(|s| s.key == key).cloned()
}

/// The departures kept in all.
#[cfg(test)]
pub(crate) fn kept() -> usize {
    kept_list().iter().map(|s| s.len()).sum()
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
        one_sine(amp_bps, 0.7, 0.123_456_789)
    }

    /// 0.5 Mb/s + `amp_bps` sin(2π `hz` t + `phase`).
    fn one_sine(amp_bps: f64, hz: f64, phase: f64) -> Shape {
        Shape::sines(
            0.5e6,
            vec![Sine {
                amp_bps,
                omega: 2.0 * std::f64::consts::PI * hz,
                phase,
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
        assert!(!ask(&mut asked, &k1));
        assert!(ask(&mut asked, &k1));
        assert!(ask(&mut asked, &k2));
        assert!(ask(&mut asked, &k2));
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
        assert!(short.len() > CHUNK && long.len() > short.len() + CHUNK);

        // the first run solves (into the shared schedule, unless no schedule
        // was asked for before in this process: `ask`), the second reads it
        // or solves it if the first did not
        same(&departures(source(), s, 30 * s), &short);
        same(&departures(source(), s, 30 * s), &short);
        let kept = kept_under(&key).expect("shared").len();
        assert!(kept >= short.len() - 1, "{kept}");
        // the next reads it: the same; then a longer run reads it and solves
        // on from the shape as it was after the last departure kept
        same(&departures(source(), s, 30 * s), &short);
        same(&departures(source(), s, 20 * s), &solved(s, 20 * s));
        same(&departures(source(), s, 70 * s), &long);
        // and the longer schedule is kept, and read
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

    /// The process has asked for a schedule before, so that the next one
    /// is shared from its first run (`ask`).
    fn not_the_first() {
        ask(&mut ASKED.lock().unwrap(), &[u64::MAX]);
    }

    #[test]
    fn runs_started_together_share_one_solve() {
        not_the_first();
        let shape = || {
            Shape::sines(
                0.5e6,
                vec![Sine {
                    amp_bps: 0.3e6,
                    omega: 2.0 * std::f64::consts::PI * 1.3,
                    phase: 0.765_432_1,
                }],
            )
        };
        let s = 1_000_000_000;
        let want = solved(shape, s, 200 * s);
        let runs: Vec<_> = (0..2)
            .map(|_| {
                std::thread::spawn(move || {
                    departures(UdpSource::new(3, shape(), 1000, 0, 1), s, 200 * s)
                })
            })
            .collect();
        for r in runs {
            same(&r.join().unwrap(), &want);
        }
        // each chunk solved once, by one of them
        let kept = kept_under(&key_of(&shape(), 8000.0, s).unwrap()).unwrap();
        assert!(kept.len() < want.len() + CHUNK, "{}", kept.len());
    }

    #[test]
    fn a_gap_a_chunk_cannot_keep_is_solved_alone() {
        not_the_first();
        // ~1 bit per 1000 s: a packet every ~8e6 s, gaps above 2^50 ns
        let shape = || {
            Shape::sines(
                1e-3,
                vec![Sine {
                    amp_bps: 0.5e-3,
                    omega: 2.0 * std::f64::consts::PI * 1e-7,
                    phase: 0.3,
                }],
            )
        };
        let (s, stop) = (1_000_000_000, 40_000_000 * 1_000_000_000);
        let want = solved(shape, s, stop);
        assert!(want.len() >= 3 && want[1] - want[0] > LONGEST_NS);
        for _ in 0..2 {
            same(
                &departures(UdpSource::new(3, shape(), 1000, 0, 1), s, stop),
                &want,
            );
        }
    }

    #[test]
    fn a_schedule_whose_solve_panicked_is_dropped_and_its_readers_stop() {
        not_the_first();
        // a sine no other test uses (its phase)
        let shape = one_sine(0.2e6, 0.77, 0.246_813_579);
        let key = key_of(&shape, 8000.0, 7).unwrap();
        let s = find(key.clone(), &shape, 8000.0, 7).expect("shared");
        assert!(matches!(s.chunk(0), Next::Chunk(_)));
        let other = s.clone();
        let _ = std::thread::spawn(move || {
            let _solving = other.solver.lock().unwrap();
            panic!("a run panics while it holds the solve");
        })
        .join();
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.chunk(1);
        }));
        assert!(read.is_err(), "a reader of a poisoned schedule must stop");
        assert!(
            kept_under(&key).is_none(),
            "and the schedule is no longer kept"
        );
    }

    #[test]
    fn gaps_give_their_ns_back() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for k in 0..200_000u64 {
            // small gaps, microsecond multiples, and spread up to 2^50
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = match k % 3 {
                0 => k,
                1 => (x % (1 << 30)) * 1000,
                _ => x % (LONGEST_NS + 1),
            };
            let g = ns_f64(d) / 1e9;
            assert_eq!(ns_of(g), d);
            let c: Chunk = vec![g].into();
            assert_eq!(departure(&c, 0), Some((d, g)));
        }
        let g = ns_f64(LONGEST_NS) / 1e9;
        assert_eq!(ns_of(g), LONGEST_NS);
    }

    #[test]
    fn only_sines_are_remembered_and_their_keys_tell_them_apart() {
        assert!(key_of(&Shape::Constant { bps: 1e6 }, 8000.0, 0).is_none());
        let k = key_of(&sine(0.6e6), 8000.0, 0).unwrap();
        assert_ne!(k, key_of(&sine(0.6e6), 8008.0, 0).unwrap());
        assert_ne!(k, key_of(&sine(0.6e6), 8000.0, 1).unwrap());
        assert_ne!(k, key_of(&sine(0.4e6), 8000.0, 0).unwrap());
        let other = one_sine(0.6e6, 0.7, 0.123_456_788);
        assert_ne!(k, key_of(&other, 8000.0, 0).unwrap());
    }
}
