//! Controlled and uncontrolled sources of non-determinism: thread-locals
//! per virtual thread, and a clear error for a thread the checker does not control.

use cmc_thread::sync::atomic::{AtomicUsize, Ordering};
use cmc_thread::sync::Mutex;
use cmc_thread::{thread, Checker, Mode, Stop};
use std::cell::Cell;
use std::sync::Arc;

cmc_thread::thread_local! {
    static COUNT: Cell<u32> = Cell::new(0);
}

#[test]
fn each_virtual_thread_has_its_own_thread_local_reset_every_execution() {
    let stats = Checker::new()
        .mode(Mode::Dpor)
        .check(|| {
            let bump = || {
                COUNT.with(|c| c.set(c.get() + 1));
                COUNT.with(|c| c.get())
            };
            let h = thread::spawn(bump);
            // With one value shared by the threads (std's thread_local! on the explorer's
            // OS thread) one of them would see 2, and a later execution more.
            assert_eq!(bump(), 1);
            assert_eq!(h.join().unwrap(), 1);
        })
        .unwrap();
    assert!(stats.executions >= 1);
    // Outside an execution it is the std thread-local.
    assert_eq!(COUNT.with(|c| c.get()), 0);
}

#[test]
fn a_std_thread_touching_the_executions_objects_is_reported() {
    let f = Checker::new()
        .check(|| {
            let m = Arc::new(Mutex::new(0));
            *m.lock().unwrap() += 1; // registered in this execution
            let m2 = m.clone();
            let h = std::thread::spawn(move || *m2.lock().unwrap() += 1);
            let _ = h.join();
        })
        .unwrap_err();
    match &f.stop {
        Stop::Uncontrolled(message) => {
            assert!(message.starts_with("Mutex used at "), "{f}");
            assert!(
                message.contains("std::thread::spawn inside a checked execution?"),
                "{f}"
            );
        }
        other => panic!("expected an uncontrolled-thread report, got {other:?}\n{f}"),
    }
}

#[test]
fn a_std_thread_touching_an_atomic_is_reported() {
    let f = Checker::new()
        .check(|| {
            let n = Arc::new(AtomicUsize::new(0));
            n.fetch_add(1, Ordering::SeqCst);
            let n2 = n.clone();
            let _ = std::thread::spawn(move || n2.fetch_add(1, Ordering::SeqCst)).join();
        })
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::Uncontrolled(m) if m.starts_with("AtomicUsize used at")),
        "{f}"
    );
}

#[test]
fn randomness_is_seeded_by_the_checker_and_replays() {
    let draws = |seed| {
        let seen = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
        let s = seen.clone();
        let stats = Checker::new()
            .random_seed(seed)
            .recheck_every(1) // every execution is re-run and compared: no divergence
            .check(move || {
                let a = cmc_thread::random::u64();
                let h = thread::spawn(cmc_thread::random::u64);
                let b = h.join().unwrap();
                s.lock().unwrap().insert((a, b));
            })
            .unwrap();
        assert_eq!(stats.reruns, stats.executions);
        let v: Vec<_> = seen.lock().unwrap().iter().copied().collect();
        v
    };
    // The same two draws in every execution; another seed, other draws.
    let (zero, seven) = (draws(0), draws(7));
    assert_eq!(zero.len(), 1, "{zero:?}");
    assert_ne!(zero, seven);
    assert_eq!(zero, draws(0));
}

#[test]
#[cfg(target_os = "linux")]
fn a_std_thread_still_running_after_an_execution_is_reported_even_if_it_touches_nothing() {
    let f = Checker::new()
        .check(|| {
            // Touches no object of the execution: only the OS-thread watch can see it.
            std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(300)));
        })
        .unwrap_err();
    match &f.stop {
        Stop::Uncontrolled(message) => assert!(
            message.contains("was started inside a checked execution and still runs"),
            "{f}"
        ),
        other => panic!("expected an uncontrolled-thread report, got {other:?}\n{f}"),
    }
    // A model that starts no OS thread is not reported, though other tests of this binary
    // start threads concurrently.
    assert!(Checker::new()
        .check(|| thread::spawn(|| ()).join().unwrap())
        .is_ok());
}

#[test]
fn io_inside_an_execution_is_refused_naming_the_call_site() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    // Outside an execution the guarded functions are std's.
    assert!(cmc_thread::fs::read_to_string(manifest)
        .unwrap()
        .contains("cmc-thread"));
    let line = line!() + 3;
    let f = Checker::new()
        .check(move || {
            let _ = cmc_thread::fs::read_to_string(manifest);
        })
        .unwrap_err();
    let expected = format!(
        "I/O is not supported inside a checked execution: fs::read_to_string at {}:{line}:",
        file!()
    );
    match &f.stop {
        Stop::Uncontrolled(message) => assert!(message.starts_with(&expected), "{f}"),
        other => panic!("expected an I/O report, got {other:?}\n{f}"),
    }
    let f = Checker::new()
        .check(|| {
            let _ = cmc_thread::net::TcpListener::bind("127.0.0.1:0");
        })
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::Uncontrolled(m) if m.contains("TcpListener::bind at ")),
        "{f}"
    );
    // A file opened outside and read inside is refused at the read.
    // (The refusal unwinds while the std mutex is held, which poisons it.)
    let file = std::sync::Mutex::new(cmc_thread::fs::File::open(manifest).unwrap());
    let f = Checker::new()
        .check(move || {
            use std::io::Read;
            let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
            let _ = file.read_to_string(&mut String::new());
        })
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::Uncontrolled(m) if m.contains("File::read at ")),
        "{f}"
    );
}

#[test]
fn system_time_is_virtual_inside_an_execution() {
    use cmc_thread::time::{Duration, SystemTime, UNIX_EPOCH, VIRTUAL_START_SECS};
    Checker::new()
        .check(|| {
            let start = SystemTime::now();
            let secs = start.duration_since(UNIX_EPOCH).unwrap().as_secs();
            assert_eq!(secs, VIRTUAL_START_SECS);
            let h = thread::spawn(move || {
                thread::sleep(Duration::from_secs(5));
                SystemTime::now().duration_since(start).unwrap()
            });
            assert_eq!(h.join().unwrap(), Duration::from_secs(5));
        })
        .unwrap();
    // Outside an execution it is the real clock (later than the virtual start).
    let real = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    assert!(real.as_secs() > VIRTUAL_START_SECS + 600_000_000);
}
