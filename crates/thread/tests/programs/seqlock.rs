// A sequence lock, written once against whatever `Arc`, `AtomicUsize`, `fence`, `thread`
// and the orderings `Acquire`, `Relaxed`, `Release` are in scope: included by
// `tests/progress.rs` (cmc-thread) and by `benches/compare.rs` (cmc-thread, loom, shuttle).

/// A sequence lock: the writer makes the sequence odd, writes both data words, makes it
/// even; a reader retries until it saw the same even sequence before and after reading the
/// words. The reader needs `fence(Acquire)` between its data loads and its second sequence
/// load; `fenced: false` is the published bug (Boehm, "Can seqlocks get along with
/// programming language memory models?", 2012): the data loads may see the new words while
/// the second load still sees the old sequence, a torn read.
pub fn seqlock(fenced: bool) {
    let seq = Arc::new(AtomicUsize::new(0));
    let data = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let writer = {
        let (seq, data) = (seq.clone(), data.clone());
        thread::spawn(move || {
            seq.store(1, Relaxed);
            fence(Release);
            data[0].store(1, Relaxed);
            data[1].store(1, Relaxed);
            seq.store(2, Release);
        })
    };
    loop {
        let s1 = seq.load(Acquire);
        let words = (data[0].load(Relaxed), data[1].load(Relaxed));
        if fenced {
            fence(Acquire);
        }
        let s2 = seq.load(Relaxed);
        if s1 == s2 && s1.is_multiple_of(2) {
            assert_eq!(words.0, words.1, "torn read");
            break;
        }
        thread::yield_now();
    }
    writer.join().unwrap();
}
