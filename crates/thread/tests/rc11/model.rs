//! An axiomatic enumerator of RC11's allowed outcomes (Lahav, Vafeiadis, Kang, Hur, Dreyer,
//! "Repairing sequential consistency in C/C++11", PLDI 2017), independent of the checker:
//! every reads-from and modification-order choice of a small straight-line program is
//! generated, and the candidate kept when it satisfies RC11's axioms (coherence, `SeqCst`
//! acyclicity with `psc_base` and `psc_F`, no thin air: `sb ∪ rf` acyclic). Programs have
//! stores, loads and `fence(SeqCst)`; no read-modify-writes, so no release sequences
//! beyond a store itself and no atomicity axiom.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

/// One instruction of a litmus thread.
#[derive(Clone, Copy, Debug)]
pub enum Instr {
    /// Store value to location.
    Store(usize, u64, Ordering),
    /// Load from location (its result is part of the outcome).
    Load(usize, Ordering),
    /// `fence(SeqCst)`.
    Fence,
}

/// A litmus test: threads of instructions over `locations` atomics, initially 0. An outcome
/// is every load's value in thread order, then (when `finals`) each location's final value.
pub struct Litmus {
    pub name: &'static str,
    pub threads: Vec<Vec<Instr>>,
    pub locations: usize,
    pub finals: bool,
}

impl Instr {
    /// The location the instruction accesses (none for a fence).
    fn location(self) -> Option<usize> {
        match self {
            Instr::Store(l, ..) | Instr::Load(l, _) => Some(l),
            Instr::Fence => None,
        }
    }
}

impl Litmus {
    /// The test `name` of `threads`, over the locations they access (`0` to the highest),
    /// whose outcome is its loads' values.
    pub fn new<const N: usize>(name: &'static str, threads: [Vec<Instr>; N]) -> Litmus {
        let threads = Vec::from(threads);
        let locations = threads.iter().flatten().filter_map(|i| i.location()).max();
        Litmus {
            name,
            threads,
            locations: locations.map_or(0, |l| l + 1),
            finals: false,
        }
    }

    /// This test, with each location's final value appended to its outcome.
    pub fn with_finals(self) -> Litmus {
        Litmus {
            finals: true,
            ..self
        }
    }
}

#[derive(Clone, Copy)]
struct Event {
    thread: Option<usize>,
    instr: Instr,
}

impl Event {
    fn location(&self) -> Option<usize> {
        self.instr.location()
    }
    fn is_write(&self) -> bool {
        matches!(self.instr, Instr::Store(..))
    }
    fn is_read(&self) -> bool {
        matches!(self.instr, Instr::Load(..))
    }
    fn is_fence(&self) -> bool {
        matches!(self.instr, Instr::Fence)
    }
    fn order(&self) -> Ordering {
        match self.instr {
            Instr::Store(_, _, o) | Instr::Load(_, o) => o,
            Instr::Fence => Ordering::SeqCst,
        }
    }
    fn sc(&self) -> bool {
        self.order() == Ordering::SeqCst
    }
    fn releases(&self) -> bool {
        matches!(
            self.order(),
            Ordering::Release | Ordering::AcqRel | Ordering::SeqCst
        )
    }
    fn acquires(&self) -> bool {
        matches!(
            self.order(),
            Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst
        )
    }
}

/// A relation over at most 64 events: row `a` has bit `b` when `a -> b`.
type Rel = Vec<u64>;

fn has(r: &Rel, a: usize, b: usize) -> bool {
    r[a] >> b & 1 == 1
}

fn union(a: &Rel, b: &Rel) -> Rel {
    a.iter().zip(b).map(|(x, y)| x | y).collect()
}

fn compose(a: &Rel, b: &Rel) -> Rel {
    a.iter()
        .map(|&row| {
            (0..b.len())
                .filter(|&k| row >> k & 1 == 1)
                .fold(0, |acc, k| acc | b[k])
        })
        .collect()
}

fn closure(r: &Rel) -> Rel {
    let mut c = r.clone();
    for k in 0..c.len() {
        for a in 0..c.len() {
            if has(&c, a, k) {
                c[a] |= c[k];
            }
        }
    }
    c
}

fn acyclic(r: &Rel) -> bool {
    let c = closure(r);
    (0..c.len()).all(|a| !has(&c, a, a))
}

fn relation(n: usize, f: impl Fn(usize, usize) -> bool) -> Rel {
    (0..n)
        .map(|a| (0..n).filter(|&b| f(a, b)).fold(0, |acc, b| acc | 1 << b))
        .collect()
}

/// Every outcome RC11 allows for `test`.
pub fn allowed(test: &Litmus) -> BTreeSet<Vec<u64>> {
    let mut events: Vec<Event> = (0..test.locations)
        .map(|l| Event {
            thread: None,
            instr: Instr::Store(l, 0, Ordering::Relaxed),
        })
        .collect();
    for (t, instrs) in test.threads.iter().enumerate() {
        events.extend(instrs.iter().map(|&instr| Event {
            thread: Some(t),
            instr,
        }));
    }
    let n = events.len();
    assert!(n <= 64, "at most 64 events");
    let reads: Vec<usize> = (0..n).filter(|&e| events[e].is_read()).collect();
    let writes_to = |l: usize| -> Vec<usize> {
        (0..n)
            .filter(|&e| events[e].is_write() && events[e].location() == Some(l))
            .collect()
    };
    let mut outcomes = BTreeSet::new();
    let rf_choices: Vec<Vec<usize>> = reads
        .iter()
        .map(|&r| writes_to(events[r].location().unwrap()))
        .collect();
    let mo_choices: Vec<Vec<Vec<usize>>> = (0..test.locations)
        .map(|l| {
            let ws = writes_to(l);
            // The initial store is first; every order of the others.
            permutations(&ws[1..])
                .into_iter()
                .map(|p| [vec![ws[0]], p].concat())
                .collect()
        })
        .collect();
    for rf in product(&rf_choices) {
        for mo in product(&mo_choices) {
            if let Some(outcome) = check(&events, &reads, &rf, &mo, test.finals) {
                outcomes.insert(outcome);
            }
        }
    }
    outcomes
}

/// The outcome of one candidate execution, if RC11 allows it.
fn check(
    events: &[Event],
    reads: &[usize],
    rf_of: &[usize],
    mo_lists: &[Vec<usize>],
    finals: bool,
) -> Option<Vec<u64>> {
    let n = events.len();
    let sb = relation(n, |a, b| match (events[a].thread, events[b].thread) {
        (None, Some(_)) => true,
        (Some(t), Some(u)) => t == u && a < b,
        _ => false,
    });
    let rf = relation(n, |w, r| {
        reads.iter().zip(rf_of).any(|(&x, &y)| x == r && y == w)
    });
    let mo = relation(n, |a, b| {
        mo_lists.iter().any(|l| {
            let (pa, pb) = (
                l.iter().position(|&e| e == a),
                l.iter().position(|&e| e == b),
            );
            matches!((pa, pb), (Some(i), Some(j)) if i < j)
        })
    });
    if !acyclic(&union(&sb, &rf)) {
        return None;
    }
    let rb = relation(n, |r, w| {
        events[r].is_read() && (0..n).any(|w0| has(&rf, w0, r) && has(&mo, w0, w))
    });
    let eco = closure(&union(&union(&rf, &mo), &rb));
    // Synchronises-with: a release write (or a SeqCst fence before a write) read by an
    // acquire read (or a read before a SeqCst fence).
    let sw = relation(n, |a, b| {
        (0..n).any(|w| {
            (0..n).any(|r| {
                has(&rf, w, r)
                    && events[w].thread.is_some()
                    && ((a == w && events[a].releases())
                        || (events[a].is_fence() && has(&sb, a, w)))
                    && ((b == r && events[b].acquires())
                        || (events[b].is_fence() && has(&sb, r, b)))
            })
        })
    });
    let hb = closure(&union(&sb, &sw));
    // Coherence: hb ; eco? irreflexive.
    let hb_eco = union(&hb, &compose(&hb, &eco));
    if (0..n).any(|a| has(&hb_eco, a, a)) {
        return None;
    }
    let same_loc = |a: usize, b: usize| {
        events[a].location().is_some() && events[a].location() == events[b].location()
    };
    let sb_other = relation(n, |a, b| has(&sb, a, b) && !same_loc(a, b));
    let hb_loc = relation(n, |a, b| has(&hb, a, b) && same_loc(a, b));
    let scb = union(
        &union(&sb, &compose(&compose(&sb_other, &hb), &sb_other)),
        &union(&hb_loc, &union(&mo, &rb)),
    );
    let sc = |e: usize| events[e].thread.is_some() && events[e].sc();
    let fsc = |e: usize| events[e].is_fence();
    let left = relation(n, |a, x| sc(a) && (a == x || (fsc(a) && has(&hb, a, x))));
    let right = relation(n, |y, b| sc(b) && (y == b || (fsc(b) && has(&hb, y, b))));
    let psc_base = compose(&compose(&left, &scb), &right);
    let hb_eco_hb = union(&hb, &compose(&compose(&hb, &eco), &hb));
    let psc_f = relation(n, |a, b| fsc(a) && fsc(b) && has(&hb_eco_hb, a, b));
    if !acyclic(&union(&psc_base, &psc_f)) {
        return None;
    }
    let value = |w: usize| match events[w].instr {
        Instr::Store(_, v, _) => v,
        _ => unreachable!(),
    };
    let mut outcome: Vec<u64> = rf_of.iter().map(|&w| value(w)).collect();
    if finals {
        outcome.extend(mo_lists.iter().map(|l| value(*l.last().unwrap())));
    }
    Some(outcome)
}

fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.is_empty() {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first);
            all.push(p);
        }
    }
    all
}

fn product<T: Clone>(choices: &[Vec<T>]) -> Vec<Vec<T>> {
    choices.iter().fold(vec![Vec::new()], |acc, options| {
        acc.iter()
            .flat_map(|prefix| {
                options.iter().map(move |o| {
                    let mut p = prefix.clone();
                    p.push(o.clone());
                    p
                })
            })
            .collect()
    })
}
