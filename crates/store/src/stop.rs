//! Long reads that their caller can end early: loading a large checkpoint
//! takes time, and a signal during it must end it at once rather than at
//! the end of the load.
//!
//! A read ended this way fails with [`stopped`]'s error, which
//! [`is_stopped`] tells apart from a failure of the input.

use std::io::{self, Read};

/// Asked between chunks of a long read: `true` ends the read.
pub type Stop<'a> = &'a dyn Fn() -> bool;

fn never() -> bool {
    false
}

/// A stop that is never asked for.
pub const NEVER: Stop<'static> = &never;

/// The payload of the error of a read ended by its stop.
#[derive(Debug)]
struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped on request")
    }
}

impl std::error::Error for Stopped {}

/// The error of a read ended by its stop.
pub fn stopped() -> io::Error {
    io::Error::other(Stopped)
}

/// Whether `error` is [`stopped`]'s (not a failure of the input).
pub fn is_stopped(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<Stopped>())
}

/// `Ok` unless `stop` asks to stop now.
pub fn check(stop: Stop<'_>) -> io::Result<()> {
    if stop() {
        Err(stopped())
    } else {
        Ok(())
    }
}

/// A reader that fails with [`stopped`]'s error once its stop asks, before
/// any further read (a buffered reader over it stops within a buffer).
pub struct Stoppable<'a, R> {
    inner: R,
    stop: Stop<'a>,
}

impl<'a, R> Stoppable<'a, R> {
    /// `inner`, read until `stop` asks to stop.
    pub fn new(inner: R, stop: Stop<'a>) -> Stoppable<'a, R> {
        Stoppable { inner, stop }
    }
}

impl<R: Read> Read for Stoppable<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        check(self.stop)?;
        self.inner.read(buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_stoppable_read_ends_at_the_first_read_after_the_stop() {
        let reads = Cell::new(0);
        let stop = || {
            reads.set(reads.get() + 1);
            reads.get() > 2
        };
        let mut input = Stoppable::new(io::repeat(7), &stop);
        let mut buffer = [0u8; 16];
        assert_eq!(input.read(&mut buffer).unwrap(), 16);
        assert_eq!(input.read(&mut buffer).unwrap(), 16);
        let error = input.read(&mut buffer).unwrap_err();
        assert!(is_stopped(&error), "{error}");
        // Neither a copy (which retries on `Interrupted`) nor anything else
        // mistakes it for a failure of the input.
        let mut copied = Stoppable::new(io::repeat(7), &stop);
        assert!(is_stopped(
            &io::copy(&mut copied, &mut io::sink()).unwrap_err()
        ));
        assert!(!is_stopped(&io::Error::other("disk full")));
        assert!(!NEVER());
    }
}
