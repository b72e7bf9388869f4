// Litmus tests of the C++20 / Rust memory model, written once against whatever `Arc`,
// `AtomicUsize`, `Ordering`, `fence` and `thread` are in scope: included by
// `tests/litmus.rs` (cmc-thread) and by `benches/litmus.rs` (cmc-thread and loom).
//
// Each test runs one execution and returns its outcome (the values its loads returned).
// `allowed` lists every outcome the model allows, `unexplored` the allowed ones cmc-thread's
// weak-memory mode does not reach (its documented under-approximation); every outcome not
// in `allowed` is forbidden.

/// The orderings a litmus test is run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orders {
    /// Every access `Relaxed`.
    Relaxed,
    /// Stores `Release`, loads `Acquire`.
    ReleaseAcquire,
    /// Every access `SeqCst`.
    SeqCst,
    /// `Relaxed` accesses separated by fences (`fence(SeqCst)` for SB, release/acquire
    /// fences for MP).
    Fenced,
    /// The orderings written in the test itself.
    Mixed,
}

impl Orders {
    fn store(self) -> Ordering {
        match self {
            Orders::Relaxed | Orders::Fenced | Orders::Mixed => Ordering::Relaxed,
            Orders::ReleaseAcquire => Ordering::Release,
            Orders::SeqCst => Ordering::SeqCst,
        }
    }

    fn load(self) -> Ordering {
        match self {
            Orders::Relaxed | Orders::Fenced | Orders::Mixed => Ordering::Relaxed,
            Orders::ReleaseAcquire => Ordering::Acquire,
            Orders::SeqCst => Ordering::SeqCst,
        }
    }

    /// Short name for tables.
    pub fn label(self) -> &'static str {
        match self {
            Orders::Relaxed => "Relaxed",
            Orders::ReleaseAcquire => "Release/Acquire",
            Orders::SeqCst => "SeqCst",
            Orders::Fenced => "Relaxed + fences",
            Orders::Mixed => "Release store, Relaxed RMW, Acquire load",
        }
    }
}

fn atomics(n: usize) -> Arc<Vec<AtomicUsize>> {
    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect())
}

fn sb(o: Orders) -> Vec<usize> {
    let v = atomics(2);
    let side = |mine: usize, theirs: usize| {
        let v = v.clone();
        thread::spawn(move || {
            v[mine].store(1, o.store());
            if o == Orders::Fenced {
                fence(Ordering::SeqCst);
            }
            v[theirs].load(o.load())
        })
    };
    let (a, b) = (side(0, 1), side(1, 0));
    vec![a.join().unwrap(), b.join().unwrap()]
}

fn mp(o: Orders) -> Vec<usize> {
    let v = atomics(2);
    let w = v.clone();
    let writer = thread::spawn(move || {
        w[0].store(1, o.store());
        if o == Orders::Fenced {
            fence(Ordering::Release);
        }
        w[1].store(1, o.store());
    });
    let r = v.clone();
    let reader = thread::spawn(move || {
        let flag = r[1].load(o.load());
        if o == Orders::Fenced {
            fence(Ordering::Acquire);
        }
        vec![flag, r[0].load(o.load())]
    });
    writer.join().unwrap();
    reader.join().unwrap()
}

fn lb(o: Orders) -> Vec<usize> {
    let v = atomics(2);
    let side = |mine: usize, theirs: usize| {
        let v = v.clone();
        thread::spawn(move || {
            let r = v[theirs].load(o.load());
            v[mine].store(1, o.store());
            r
        })
    };
    let (a, b) = (side(0, 1), side(1, 0));
    vec![a.join().unwrap(), b.join().unwrap()]
}

fn iriw(o: Orders) -> Vec<usize> {
    let v = atomics(2);
    let writer = |i: usize| {
        let v = v.clone();
        thread::spawn(move || v[i].store(1, o.store()))
    };
    let reader = |first: usize, second: usize| {
        let v = v.clone();
        thread::spawn(move || vec![v[first].load(o.load()), v[second].load(o.load())])
    };
    let (w0, w1) = (writer(0), writer(1));
    let (r0, r1) = (reader(0, 1), reader(1, 0));
    w0.join().unwrap();
    w1.join().unwrap();
    let mut out = r0.join().unwrap();
    out.extend(r1.join().unwrap());
    out
}

fn two_plus_two_w(o: Orders) -> Vec<usize> {
    let v = atomics(2);
    let side = |first: usize, second: usize| {
        let v = v.clone();
        thread::spawn(move || {
            v[first].store(1, o.store());
            v[second].store(2, o.store());
        })
    };
    let (a, b) = (side(0, 1), side(1, 0));
    a.join().unwrap();
    b.join().unwrap();
    vec![v[0].load(o.load()), v[1].load(o.load())]
}

fn wrc(o: Orders) -> Vec<usize> {
    let v = atomics(2);
    let w = v.clone();
    let writer = thread::spawn(move || w[0].store(1, o.store()));
    let m = v.clone();
    let middle = thread::spawn(move || {
        let r = m[0].load(o.load());
        if r == 1 {
            m[1].store(1, o.store());
        }
        r
    });
    let r = v.clone();
    let reader = thread::spawn(move || vec![r[1].load(o.load()), r[0].load(o.load())]);
    writer.join().unwrap();
    let mut out = vec![middle.join().unwrap()];
    out.extend(reader.join().unwrap());
    out
}

fn corr(o: Orders) -> Vec<usize> {
    let v = atomics(1);
    let w = v.clone();
    let writer = thread::spawn(move || {
        w[0].store(1, o.store());
        w[0].store(2, o.store());
    });
    let r = v.clone();
    let reader = thread::spawn(move || vec![r[0].load(o.load()), r[0].load(o.load())]);
    writer.join().unwrap();
    reader.join().unwrap()
}

/// S: a store hb-before another store of the same location (through the flag) must come
/// first in modification order, so `1, 2` (the flag seen, yet the first store last) is
/// forbidden once the flag synchronises.
fn s_shape(o: Orders) -> Vec<usize> {
    let v = atomics(2);
    let w = v.clone();
    let writer = thread::spawn(move || {
        w[0].store(2, o.store());
        w[1].store(1, o.store());
    });
    let r = v.clone();
    let reader = thread::spawn(move || {
        let flag = r[1].load(o.load());
        if flag == 1 {
            r[0].store(1, o.store());
        }
        flag
    });
    writer.join().unwrap();
    let flag = reader.join().unwrap();
    vec![flag, v[0].load(o.load())]
}

/// RMW atomicity: a store may not come between a read-modify-write and the store it read,
/// so `0, 1` (the increment read 0, yet the other store lies between) is forbidden.
fn rmw_atomicity(o: Orders) -> Vec<usize> {
    let v = atomics(1);
    let a = v.clone();
    let rmw = thread::spawn(move || a[0].fetch_add(1, Ordering::Relaxed));
    let b = v.clone();
    let store = thread::spawn(move || b[0].store(5, o.store()));
    store.join().unwrap();
    let read = rmw.join().unwrap();
    vec![read, v[0].load(o.load())]
}

/// A release store, a relaxed RMW of the same location in another thread, and an acquire
/// load that reads the RMW's value: the RMW continues the release sequence, so the
/// acquire load synchronises with the release store and sees its data.
fn release_sequence(_: Orders) -> Vec<usize> {
    let v = atomics(2);
    let w = v.clone();
    let writer = thread::spawn(move || {
        w[0].store(1, Ordering::Relaxed);
        w[1].store(1, Ordering::Release);
    });
    let m = v.clone();
    let rmw = thread::spawn(move || {
        m[1].fetch_add(1, Ordering::Relaxed);
    });
    let r = v.clone();
    let reader = thread::spawn(move || {
        let flag = r[1].load(Ordering::Acquire);
        vec![flag, r[0].load(Ordering::Relaxed)]
    });
    writer.join().unwrap();
    rmw.join().unwrap();
    reader.join().unwrap()
}

/// One row of the litmus table: a test under one choice of orderings.
pub struct Case {
    /// The test's name.
    pub name: &'static str,
    /// What the outcome vector holds.
    pub outcome: &'static str,
    /// The orderings.
    pub orders: Orders,
    /// Runs one execution.
    pub run: fn(Orders) -> Vec<usize>,
    /// Every outcome the C++20 / Rust model allows.
    pub allowed: &'static [&'static [usize]],
    /// Allowed outcomes cmc-thread's weak-memory mode does not reach.
    pub unexplored: &'static [&'static [usize]],
}

const SB_ALL: &[&[usize]] = &[&[0, 0], &[0, 1], &[1, 0], &[1, 1]];
const SB_SC: &[&[usize]] = &[&[0, 1], &[1, 0], &[1, 1]];
const MP_ALL: &[&[usize]] = &[&[0, 0], &[0, 1], &[1, 0], &[1, 1]];
const MP_SYNC: &[&[usize]] = &[&[0, 0], &[0, 1], &[1, 1]];
const LB_ALL: &[&[usize]] = &[&[0, 0], &[0, 1], &[1, 0], &[1, 1]];
const LB_NO_CYCLE: &[&[usize]] = &[&[0, 0], &[0, 1], &[1, 0]];
const W22_ALL: &[&[usize]] = &[&[1, 1], &[1, 2], &[2, 1], &[2, 2]];
const W22_SC: &[&[usize]] = &[&[1, 2], &[2, 1], &[2, 2]];
const WRC_ALL: &[&[usize]] = &[&[0, 0, 0], &[0, 0, 1], &[1, 0, 0], &[1, 0, 1], &[1, 1, 0], &[1, 1, 1]];
const WRC_SYNC: &[&[usize]] = &[&[0, 0, 0], &[0, 0, 1], &[1, 0, 0], &[1, 0, 1], &[1, 1, 1]];
const CORR: &[&[usize]] = &[&[0, 0], &[0, 1], &[0, 2], &[1, 1], &[1, 2], &[2, 2]];
const S_ALL: &[&[usize]] = &[&[0, 2], &[1, 1], &[1, 2]];
const S_SYNC: &[&[usize]] = &[&[0, 2], &[1, 1]];
const RMW: &[&[usize]] = &[&[0, 5], &[5, 6]];
const RS: &[&[usize]] = &[&[0, 0], &[0, 1], &[1, 0], &[1, 1], &[2, 1]];
/// IRIW: (reader 1: x, y; reader 2: y, x); every combination of 0/1 is allowed except,
/// under SeqCst, 1,0,1,0 (the readers disagree on the order of the two writes).
const IRIW_ALL: &[&[usize]] = &[
    &[0, 0, 0, 0], &[0, 0, 0, 1], &[0, 0, 1, 0], &[0, 0, 1, 1],
    &[0, 1, 0, 0], &[0, 1, 0, 1], &[0, 1, 1, 0], &[0, 1, 1, 1],
    &[1, 0, 0, 0], &[1, 0, 0, 1], &[1, 0, 1, 0], &[1, 0, 1, 1],
    &[1, 1, 0, 0], &[1, 1, 0, 1], &[1, 1, 1, 0], &[1, 1, 1, 1],
];
const IRIW_SC: &[&[usize]] = &[
    &[0, 0, 0, 0], &[0, 0, 0, 1], &[0, 0, 1, 0], &[0, 0, 1, 1],
    &[0, 1, 0, 0], &[0, 1, 0, 1], &[0, 1, 1, 0], &[0, 1, 1, 1],
    &[1, 0, 0, 0], &[1, 0, 0, 1], &[1, 0, 1, 1],
    &[1, 1, 0, 0], &[1, 1, 0, 1], &[1, 1, 1, 0], &[1, 1, 1, 1],
];

const fn case(
    name: &'static str,
    outcome: &'static str,
    orders: Orders,
    run: fn(Orders) -> Vec<usize>,
    allowed: &'static [&'static [usize]],
    unexplored: &'static [&'static [usize]],
) -> Case {
    Case { name, outcome, orders, run, allowed, unexplored }
}

/// Every litmus case, in table order.
pub const CASES: &[Case] = &[
    case("SB", "r1, r2", Orders::Relaxed, sb, SB_ALL, &[]),
    case("SB", "r1, r2", Orders::ReleaseAcquire, sb, SB_ALL, &[]),
    case("SB", "r1, r2", Orders::SeqCst, sb, SB_SC, &[]),
    case("SB", "r1, r2", Orders::Fenced, sb, SB_SC, &[]),
    case("MP", "flag, data", Orders::Relaxed, mp, MP_ALL, &[]),
    case("MP", "flag, data", Orders::ReleaseAcquire, mp, MP_SYNC, &[]),
    case("MP", "flag, data", Orders::SeqCst, mp, MP_SYNC, &[]),
    case("MP", "flag, data", Orders::Fenced, mp, MP_SYNC, &[]),
    case("LB", "r1, r2", Orders::Relaxed, lb, LB_ALL, &[&[1, 1]]),
    case("LB", "r1, r2", Orders::ReleaseAcquire, lb, LB_NO_CYCLE, &[]),
    case("LB", "r1, r2", Orders::SeqCst, lb, LB_NO_CYCLE, &[]),
    case("IRIW", "x, y | y, x", Orders::Relaxed, iriw, IRIW_ALL, &[]),
    case("IRIW", "x, y | y, x", Orders::ReleaseAcquire, iriw, IRIW_ALL, &[]),
    case("IRIW", "x, y | y, x", Orders::SeqCst, iriw, IRIW_SC, &[]),
    case("2+2W", "final x, y", Orders::Relaxed, two_plus_two_w, W22_ALL, &[]),
    case("2+2W", "final x, y", Orders::ReleaseAcquire, two_plus_two_w, W22_ALL, &[]),
    case("2+2W", "final x, y", Orders::SeqCst, two_plus_two_w, W22_SC, &[]),
    case("WRC", "r1 | r2, r3", Orders::Relaxed, wrc, WRC_ALL, &[]),
    case("WRC", "r1 | r2, r3", Orders::ReleaseAcquire, wrc, WRC_SYNC, &[]),
    case("WRC", "r1 | r2, r3", Orders::SeqCst, wrc, WRC_SYNC, &[]),
    case("CoRR", "r1, r2", Orders::Relaxed, corr, CORR, &[]),
    case("CoRR", "r1, r2", Orders::SeqCst, corr, CORR, &[]),
    case("S", "flag, final x", Orders::Relaxed, s_shape, S_ALL, &[]),
    case("S", "flag, final x", Orders::ReleaseAcquire, s_shape, S_SYNC, &[]),
    case("S", "flag, final x", Orders::SeqCst, s_shape, S_SYNC, &[]),
    case("RMW atomicity", "RMW read, final x", Orders::Relaxed, rmw_atomicity, RMW, &[]),
    case("RMW atomicity", "RMW read, final x", Orders::SeqCst, rmw_atomicity, RMW, &[]),
    case("release sequence", "flag, data", Orders::Mixed, release_sequence, RS, &[]),
];
