//! Interleaving tables tell the truth: each test asserts the exact table
//! of a small failing program. The programs come first so that their line numbers, which
//! the tables show, stay put when tests are added below.

use cmc_thread::sync::atomic::{AtomicUsize, Ordering};
use cmc_thread::sync::{mpsc, Arc, Condvar, Mutex};
use cmc_thread::{thread, Checker, Failure, Mode};

/// Thread 1 panics while thread 0 waits to join it: the `Arc` thread 0 still holds is
/// dropped while the execution is torn down, after the last step.
fn panics_while_joined() {
    let a = Arc::new(Mutex::new(0));
    let a2 = a.clone();
    let h = thread::spawn(move || {
        let _g = a2.lock().unwrap();
        panic!("boom");
    });
    drop(a.lock().unwrap());
    h.join().unwrap();
}

/// Thread 1 stores 1 then 0; thread 2 asserts it reads 0. The bug needs thread 1 to be
/// preempted between its stores, and it never runs again.
fn preempted_for_good() {
    let x = std::sync::Arc::new(AtomicUsize::new(0));
    let (x1, x2) = (x.clone(), x.clone());
    let a = thread::spawn(move || {
        x1.store(1, Ordering::SeqCst);
        x1.store(0, Ordering::SeqCst);
    });
    let b = thread::spawn(move || assert_eq!(x2.load(Ordering::SeqCst), 0, "saw the 1"));
    a.join().unwrap();
    b.join().unwrap();
}

/// Thread 0 waits for a message while holding the lock thread 1 needs to send it.
fn recv_under_lock() {
    let m = std::sync::Arc::new(Mutex::new(7));
    let (tx, rx) = mpsc::channel();
    let m1 = m.clone();
    let h = thread::spawn(move || tx.send(*m1.lock().unwrap()).unwrap());
    let g = m.lock().unwrap();
    let v = rx.recv().unwrap();
    drop(g);
    assert_eq!(v, 7);
    h.join().unwrap();
}

/// Thread 0 waits on a condvar; thread 1 notifies it, then fails.
fn notify_then_fail() {
    let pair = std::sync::Arc::new((Mutex::new(false), Condvar::new()));
    let p1 = pair.clone();
    let h = thread::spawn(move || {
        *p1.0.lock().unwrap() = true;
        p1.1.notify_one();
        panic!("after notify");
    });
    let mut ready = pair.0.lock().unwrap();
    while !*ready {
        ready = pair.1.wait(ready).unwrap();
    }
    drop(ready);
    h.join().unwrap();
}

fn table(f: &Failure) -> String {
    let text = f.to_string();
    let start = text.find("= The following").expect("an interleaving");
    let end = text.find("schedule: ").expect("a schedule");
    text[start..end].to_string()
}

fn bounded(p: u32) -> Checker {
    Checker::new().mode(Mode::Bounded { max_preemptions: p })
}

fn assert_table(model: fn(), expected: &str) {
    let f = bounded(2).check(model).unwrap_err();
    assert_eq!(table(&f), expected, "{f}");
}

#[test]
fn the_last_row_shows_its_own_value_not_a_teardown_drop() {
    // Old code printed the last row as `drop(Arc#1): 1 -> 0`: the value of the drop of
    // thread 0's `Arc` while the execution was torn down.
    assert_table(
        panics_while_joined,
        "\
= The following interleaving leads to the error =
|--------------------------------------------------------------------------------------|
| Thread 0                                        | Thread 1                           |
|--------------------------------------------------------------------------------------|
|   clone(Arc#1): 1 -> 2 at reports.rs:13         |                                    |
|   spawn(thread 1) at reports.rs:14              |                                    |
|   lock(Mutex#3) at reports.rs:18                |                                    |
|   unlock(Mutex#3) at reports.rs:18              |                                    |
| switch (reason: waiting for thread 1 to finish) |                                    |
|                                                 |   lock(Mutex#3) at reports.rs:15   |
|                                                 |   unlock(Mutex#3) at reports.rs:15 |
|                                                 |   drop(Arc#1): 2 -> 1              |
|--------------------------------------------------------------------------------------|
",
    );
}

#[test]
fn a_thread_preempted_for_good_shows_its_switch() {
    // Old code printed no switch under thread 1, so the decisive preemption was invisible.
    assert_table(
        preempted_for_good,
        "\
= The following interleaving leads to the error =
|--------------------------------------------------------------------------------------------------------------------------------------------|
| Thread 0                                        | Thread 1                                     | Thread 2                                  |
|--------------------------------------------------------------------------------------------------------------------------------------------|
|   spawn(thread 1) at reports.rs:27              |                                              |                                           |
|   spawn(thread 2) at reports.rs:31              |                                              |                                           |
| switch (reason: waiting for thread 1 to finish) |                                              |                                           |
|                                                 |   store(AtomicUsize#3) <- 1 at reports.rs:28 |                                           |
|                                                 | switch (reason: preempted)                   |                                           |
|                                                 |                                              |   load(AtomicUsize#3): 1 at reports.rs:31 |
|--------------------------------------------------------------------------------------------------------------------------------------------|
",
    );
}

#[test]
fn a_switch_names_the_channel_a_thread_waits_on() {
    assert_table(
        recv_under_lock,
        "\
= The following interleaving leads to the error =
|----------------------------------------------------------------|
| Thread 0                                            | Thread 1 |
|----------------------------------------------------------------|
|   spawn(thread 1) at reports.rs:41                  |          |
|   lock(Mutex#2) at reports.rs:42                    |          |
| switch (reason: waiting for a message on Channel#3) |          |
|----------------------------------------------------------------|
",
    );
}

#[test]
fn a_switch_names_the_condvar_a_thread_waits_on() {
    assert_table(
        notify_then_fail,
        "\
= The following interleaving leads to the error =
|--------------------------------------------------------------------------------------------------|
| Thread 0                                           | Thread 1                                    |
|--------------------------------------------------------------------------------------------------|
|   spawn(thread 1) at reports.rs:53                 |                                             |
|   lock(Mutex#2) at reports.rs:58                   |                                             |
|   wait(Condvar#3) at reports.rs:60                 |                                             |
| switch (reason: waiting for a notify on Condvar#3) |                                             |
|                                                    |   lock(Mutex#2) at reports.rs:54            |
|                                                    |   unlock(Mutex#2) at reports.rs:54          |
|                                                    |   notify_one(Condvar#3): 1 at reports.rs:55 |
|--------------------------------------------------------------------------------------------------|
",
    );
}

/// Thread 1 takes the lock and yields; thread 0 blocks on the lock; thread 1 then fails.
fn lock_then_fail() {
    let m = std::sync::Arc::new(Mutex::new(0));
    let m1 = m.clone();
    let h = thread::spawn(move || {
        let _g = m1.lock().unwrap();
        thread::yield_now();
        panic!("while holding the lock");
    });
    thread::yield_now();
    drop(m.lock().unwrap());
    h.join().unwrap();
}

#[test]
fn a_switch_names_the_lock_holder_and_a_yield() {
    let f = Checker::new()
        .replay("0,0,1,1,0,1,1", lock_then_fail)
        .unwrap_err();
    let expected = "\
= The following interleaving leads to the error =
|---------------------------------------------------------------------------------------------|
| Thread 0                                              | Thread 1                            |
|---------------------------------------------------------------------------------------------|
|   spawn(thread 1) at reports.rs:169                   |                                     |
| switch (reason: yield_now)                            |                                     |
|                                                       |   lock(Mutex#2) at reports.rs:170   |
|                                                       | switch (reason: yield_now)          |
|   yield_now at reports.rs:174                         |                                     |
| switch (reason: waiting for Mutex#2 held by thread 1) |                                     |
|                                                       |   yield_now at reports.rs:171       |
|                                                       |   unlock(Mutex#2) at reports.rs:170 |
|---------------------------------------------------------------------------------------------|
";
    assert_eq!(table(&f), expected, "{f}");
}

#[test]
fn named_objects_are_shown_by_name() {
    let f = Checker::new()
        .check(|| {
            let head = std::sync::Arc::new(AtomicUsize::named("head", 0));
            let h2 = head.clone();
            let t = thread::spawn(move || h2.store(1, Ordering::SeqCst));
            let lock = Mutex::named("queue_lock", ());
            drop(lock.lock().unwrap());
            assert_eq!(head.load(Ordering::SeqCst), 0, "saw the store");
            t.join().unwrap();
        })
        .unwrap_err();
    let text = table(&f);
    assert!(text.contains("lock(queue_lock#"), "{f}");
    assert!(text.contains("store(head#"), "{f}");
    assert!(text.contains("load(head#"), "{f}");
}

/// Two threads increment a shown mutex in two critical sections (read, then write back):
/// the report shows the value after every lock and unlock.
fn lost_update_in_a_shown_mutex() {
    let m = std::sync::Arc::new(Mutex::shown("count", 0));
    let m1 = m.clone();
    let h = thread::spawn(move || {
        let v = *m1.lock().unwrap();
        *m1.lock().unwrap() = v + 1;
    });
    let v = *m.lock().unwrap();
    *m.lock().unwrap() = v + 1;
    h.join().unwrap();
    assert_eq!(*m.lock().unwrap(), 2, "lost update");
}

#[test]
fn a_shown_mutex_has_its_value_after_every_lock_and_unlock() {
    let f = Checker::new()
        .check(lost_update_in_a_shown_mutex)
        .unwrap_err();
    let text = f.to_string();
    let rows: Vec<&str> = f.rows.iter().map(|r| r.text.as_str()).collect();
    // Thread 0 reads 0 (lock, unlock), thread 1 reads 0 and writes 1 back, thread 0 writes
    // its 0 + 1 over it, and the final lock sees 1.
    let values: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.strip_prefix("count#"))
        .map(|r| r.split_once(" = ").map_or("", |(_, v)| v))
        .collect();
    assert_eq!(
        values,
        ["0", "0", "0", "0", "0", "1", "1", "1", "1", "1"],
        "{text}"
    );
    assert!(text.contains("| count#2 = 1 "), "{text}");
}
