//! An execution that stops while threads are in the middle of their code abandons them: the
//! values they own are not dropped. Real code never sees its destructors run at a switch
//! point (a lock another suspended thread holds, a structure half updated), and a panic out
//! of one of them while the thread unwinds would abort the whole process. (tokio's timer
//! test `reset_future` did so under cmc: a `TimerEntry` dropped during the unwinding
//! panicked in the timer wheel that the main thread was updating.) A failure found while
//! a thread unwinds from its own panic is recorded, not raised. Its own file: without these
//! rules, this test binary aborts.

use cmc_thread::cell::UnsafeCell;
use cmc_thread::sync::atomic::{AtomicBool, Ordering::Relaxed};
use cmc_thread::sync::{Arc, Mutex};
use cmc_thread::{thread, Checker, Mode, Stop};

/// A table whose `updating` flag is set only inside a critical section.
struct Shared {
    table: Mutex<Table>,
    cell: UnsafeCell<u32>,
    written: AtomicBool,
}

struct Table {
    updating: bool,
}

/// Held by thread 1; its destructor checks the table's invariant under the lock, as
/// tokio's `TimerEntry` removes itself from the timer wheel.
struct Entry(Arc<Shared>);

impl Drop for Entry {
    fn drop(&mut self) {
        let table = self.0.table.lock().unwrap();
        assert!(!table.updating, "a destructor saw a half-done update");
    }
}

/// Thread 1 writes the cell while it holds an `Entry`, then raises a flag; thread 0 waits
/// for the flag and writes the cell inside the critical section. The flag is relaxed, so
/// nothing orders the writes: a data race, found while thread 0 is in the middle of its
/// update and thread 1 still holds its entry.
fn race_inside_a_critical_section() {
    let shared = Arc::new(Shared {
        table: Mutex::new(Table { updating: false }),
        cell: UnsafeCell::new(0),
        written: AtomicBool::new(false),
    });
    let s = shared.clone();
    let t = thread::spawn(move || {
        let _entry = Entry(s.clone());
        s.cell.with_mut(|p| unsafe { *p = 1 });
        s.written.store(true, Relaxed);
        thread::yield_now();
    });
    while !shared.written.load(Relaxed) {
        thread::yield_now();
    }
    {
        let mut table = shared.table.lock().unwrap();
        table.updating = true;
        shared.cell.with_mut(|p| unsafe { *p = 2 });
        table.updating = false;
    }
    t.join().unwrap();
}

#[test]
fn a_failure_inside_a_critical_section_is_reported_without_running_the_destructors_of_suspended_threads(
) {
    for mode in [Mode::Dpor, Mode::Bounded { max_preemptions: 2 }] {
        let f = Checker::new()
            .mode(mode)
            .check(race_inside_a_critical_section)
            .unwrap_err();
        assert!(
            matches!(&f.stop, Stop::DataRace { object, .. } if object.starts_with("UnsafeCell#")),
            "{f}"
        );
    }
}

/// Writes the cell when dropped.
struct WritesOnDrop(Arc<UnsafeCell<u32>>);

impl Drop for WritesOnDrop {
    fn drop(&mut self) {
        self.0.with_mut(|p| unsafe { *p = 1 });
    }
}

/// Thread 1 panics; the destructor run by its unwinding writes the cell that thread 0
/// wrote without synchronisation.
fn race_in_a_destructor_of_a_panicking_thread() {
    let cell = Arc::new(UnsafeCell::new(0));
    let c = cell.clone();
    let t = thread::spawn(move || {
        let _w = WritesOnDrop(c);
        panic!("boom");
    });
    cell.with_mut(|p| unsafe { *p = 2 });
    let _ = t.join();
}

#[test]
fn a_race_found_by_a_destructor_of_a_panicking_thread_is_reported() {
    // The first execution runs thread 0 to its `join`, then thread 1, whose unwinding
    // finds the race: the failure is recorded there (raising it would be a panic out of a
    // destructor during unwinding) and stops the execution at the next switch point.
    let f = Checker::new()
        .check(race_in_a_destructor_of_a_panicking_thread)
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::DataRace { object, .. } if object.starts_with("UnsafeCell#")),
        "{f}"
    );
}
