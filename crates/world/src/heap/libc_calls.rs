//! The checked library's libc calls for time and randomness, answered by cmc.
//!
//! A C library draws randomness from `rand`/`random`/`getrandom` and time
//! from `time`/`clock_gettime`/`gettimeofday`. Under cmc those answers must
//! come from the World (the node's clock, a value the adapter fixes), or a
//! replay would not reproduce the node. [`redirect`] rewrites the checked
//! library's global offset table entries for these functions (found in its
//! dynamic relocations; RELRO pages are made writable for the write and
//! read-only again) so that its calls, and only its calls, reach the
//! functions of this module. The checker and the adapter keep the real libc.
//!
//! The answers hold for the thread's current adapter call ([`answering`]):
//! a call the adapter declared is answered from [`Answers`] and the node's
//! clock; an undeclared one, or one made outside an adapter call, is
//! answered with zero and reported as a fault naming the function.

use std::cell::Cell;
use std::ffi::{c_int, c_long, c_uint, c_void, CStr};
use std::sync::Mutex;

use object::{Object, ObjectSymbol, ObjectSymbolTable, RelocationTarget};

/// `CMC_LIBC_RAND`.
pub const RAND: u32 = 1 << 0;
/// `CMC_LIBC_RANDOM`.
pub const RANDOM: u32 = 1 << 1;
/// `CMC_LIBC_TIME`.
pub const TIME: u32 = 1 << 2;
/// `CMC_LIBC_CLOCK_GETTIME`.
pub const CLOCK_GETTIME: u32 = 1 << 3;
/// `CMC_LIBC_GETTIMEOFDAY`.
pub const GETTIMEOFDAY: u32 = 1 << 4;
/// `CMC_LIBC_GETRANDOM`.
pub const GETRANDOM: u32 = 1 << 5;
/// `CMC_LIBC_SRAND`.
pub const SRAND: u32 = 1 << 6;
/// Every call cmc answers.
pub const ALL: u32 = RAND | RANDOM | TIME | CLOCK_GETTIME | GETTIMEOFDAY | GETRANDOM | SRAND;

/// Each call cmc answers: its libc name and its bit.
pub const CALLS: [(&str, u32); 7] = [
    ("rand", RAND),
    ("random", RANDOM),
    ("srand", SRAND),
    ("time", TIME),
    ("clock_gettime", CLOCK_GETTIME),
    ("gettimeofday", GETTIMEOFDAY),
    ("getrandom", GETRANDOM),
];

/// The names of the calls among `bits`, in [`CALLS`]' order.
pub fn names(bits: u32) -> Vec<&'static str> {
    CALLS
        .iter()
        .filter(|(_, bit)| bits & bit != 0)
        .map(|(name, _)| *name)
        .collect()
}

/// What cmc answers for one adapter's library.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Answers {
    /// The calls the adapter declares (bits above).
    pub declared: u32,
    /// The value of `rand`, `random` (masked to `RAND_MAX`) and every byte
    /// of `getrandom` (its low byte).
    pub random: u64,
    /// Nanoseconds of the node's clock per tick.
    pub tick_ns: u64,
}

thread_local! {
    /// The answers and the node's clock of the adapter call this thread is in.
    static CURRENT: Cell<Option<(Answers, u64)>> = const { Cell::new(None) };
    /// The first undeclared call made during it.
    static FAULT: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Runs `call` (a call into an adapter) with the library's libc calls
/// answered from `answers` and the node's `clock`; `Err` names the first
/// call the adapter did not declare.
pub fn answering<T>(answers: &Answers, clock: u64, call: impl FnOnce() -> T) -> Result<T, String> {
    let outer = CURRENT.replace(Some((*answers, clock)));
    let outer_fault = FAULT.take();
    let result = call();
    CURRENT.set(outer);
    match FAULT.replace(outer_fault) {
        None => Ok(result),
        Some(name) => Err(format!(
            "the checked library called `{name}`, which its adapter does not declare \
             (cmc_heap_core.libc_calls): declare it for cmc to answer it from the node's \
             clock or the adapter's fixed value, or keep the library from calling it"
        )),
    }
}

/// The answers for `name` (bit `bit`), or `None` after recording a fault.
fn answers_for(name: &'static str, bit: u32) -> Option<(Answers, u64)> {
    match CURRENT.get() {
        Some((answers, clock)) if answers.declared & bit != 0 => Some((answers, clock)),
        _ => {
            if FAULT.get().is_none() {
                FAULT.set(Some(name));
            }
            None
        }
    }
}

/// The node's clock in nanoseconds.
fn nanos(answers: &Answers, clock: u64) -> u64 {
    clock.saturating_mul(answers.tick_ns)
}

extern "C" fn cmc_rand() -> c_int {
    answers_for("rand", RAND).map_or(0, |(a, _)| (a.random & libc::RAND_MAX as u64) as c_int)
}

extern "C" fn cmc_random() -> c_long {
    answers_for("random", RANDOM).map_or(0, |(a, _)| (a.random & libc::RAND_MAX as u64) as c_long)
}

extern "C" fn cmc_srand(_seed: c_uint) {
    let _ = answers_for("srand", SRAND);
}

extern "C" fn cmc_time(out: *mut libc::time_t) -> libc::time_t {
    let seconds =
        answers_for("time", TIME).map_or(0, |(a, clock)| nanos(&a, clock) / 1_000_000_000);
    let seconds = seconds as libc::time_t;
    if !out.is_null() {
        // SAFETY: time(2)'s contract: a non-null argument is writable.
        unsafe { out.write(seconds) };
    }
    seconds
}

extern "C" fn cmc_clock_gettime(_clock: libc::clockid_t, out: *mut libc::timespec) -> c_int {
    let ns = answers_for("clock_gettime", CLOCK_GETTIME).map_or(0, |(a, clock)| nanos(&a, clock));
    if !out.is_null() {
        let value = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as c_long,
        };
        // SAFETY: clock_gettime(2)'s contract: the argument is writable.
        unsafe { out.write(value) };
    }
    0
}

extern "C" fn cmc_gettimeofday(out: *mut libc::timeval, _zone: *mut c_void) -> c_int {
    let ns = answers_for("gettimeofday", GETTIMEOFDAY).map_or(0, |(a, clock)| nanos(&a, clock));
    if !out.is_null() {
        let value = libc::timeval {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_usec: ((ns % 1_000_000_000) / 1000) as libc::suseconds_t,
        };
        // SAFETY: gettimeofday(2)'s contract: a non-null argument is writable.
        unsafe { out.write(value) };
    }
    0
}

extern "C" fn cmc_getrandom(buf: *mut c_void, len: libc::size_t, _flags: c_uint) -> libc::ssize_t {
    let byte = answers_for("getrandom", GETRANDOM).map_or(0, |(a, _)| a.random as u8);
    if !buf.is_null() {
        // SAFETY: getrandom(2)'s contract: `buf` is writable for `len` bytes.
        unsafe { std::ptr::write_bytes(buf.cast::<u8>(), byte, len) };
    }
    len as libc::ssize_t
}

/// The functions redirected, with cmc's answer for each.
fn replacement(name: &str) -> Option<usize> {
    Some(match name {
        "rand" => cmc_rand as *const () as usize,
        "random" => cmc_random as *const () as usize,
        "srand" => cmc_srand as *const () as usize,
        "time" => cmc_time as *const () as usize,
        "clock_gettime" => cmc_clock_gettime as *const () as usize,
        "gettimeofday" => cmc_gettimeofday as *const () as usize,
        "getrandom" => cmc_getrandom as *const () as usize,
        _ => return None,
    })
}

/// Serialises the rewriting of GOT entries.
static REDIRECTING: Mutex<()> = Mutex::new(());

/// Where a loaded library is: its file, load address and RELRO range.
struct Loaded {
    path: String,
    base: usize,
    relro: Option<(usize, usize)>,
}

/// What [`redirect`] did to a checked library.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redirected {
    /// The library's file, as the dynamic loader loaded it.
    pub path: String,
    /// The calls it imports that now reach cmc (bits of [`CALLS`]).
    pub calls: u32,
}

/// Redirects the libc calls of the loaded library `soname` (e.g.
/// `libraft.so.2`, matched against the end of the loaded objects' paths) to
/// this module; `Err` says why it cannot be done. Done at every load of an
/// adapter: a library unloaded with its last adapter and loaded again has a
/// fresh GOT.
pub fn redirect(soname: &str) -> Result<Redirected, String> {
    let _serialised = REDIRECTING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let loaded = find_loaded(soname).ok_or_else(|| {
        format!(
            "the checked library {soname} is not loaded in this process: link the adapter \
             against it (cc ... -l...)"
        )
    })?;
    let bytes = std::fs::read(&loaded.path)
        .map_err(|error| format!("cannot read the checked library {}: {error}", loaded.path))?;
    let file = object::File::parse(&*bytes)
        .map_err(|error| format!("cannot parse the checked library {}: {error}", loaded.path))?;
    let symbols = file
        .dynamic_symbol_table()
        .ok_or_else(|| format!("the checked library {} has no dynamic symbols", loaded.path))?;
    let relocations = file.dynamic_relocations().into_iter().flatten();
    let mut calls = 0;
    for (offset, relocation) in relocations {
        let RelocationTarget::Symbol(index) = relocation.target() else {
            continue;
        };
        let Ok(symbol) = symbols.symbol_by_index(index) else {
            continue;
        };
        let Some(target) = symbol.name().ok().and_then(replacement) else {
            continue;
        };
        if !symbol.is_undefined() {
            continue;
        }
        let slot = loaded.base + offset as usize;
        // SAFETY: `slot` is a GOT entry of the loaded library (its dynamic
        // relocation's offset from its load address), a pointer-sized,
        // aligned word the dynamic loader writes the same way.
        unsafe { write_slot(slot, target, loaded.relro) }?;
        calls |= CALLS
            .iter()
            .find(|(name, _)| symbol.name() == Ok(*name))
            .map_or(0, |(_, bit)| *bit);
    }
    Ok(Redirected {
        path: loaded.path,
        calls,
    })
}

/// Writes `value` at `slot`, making a RELRO page writable for the write.
///
/// # Safety
/// `slot` is a mapped, pointer-aligned GOT entry of a loaded library.
unsafe fn write_slot(
    slot: usize,
    value: usize,
    relro: Option<(usize, usize)>,
) -> Result<(), String> {
    let page = 4096usize;
    let start = slot & !(page - 1);
    let protected = relro.is_some_and(|(from, to)| slot >= from && slot < to);
    let protect = |flags| {
        // SAFETY: the page holds `slot`, mapped by the library's loading.
        let code = unsafe { libc::mprotect(start as *mut c_void, page, flags) };
        if code == 0 {
            Ok(())
        } else {
            Err(format!(
                "cannot change the protection of the checked library's GOT page at {start:#x}: {}",
                std::io::Error::last_os_error()
            ))
        }
    };
    if protected {
        protect(libc::PROT_READ | libc::PROT_WRITE)?;
    }
    // SAFETY: the caller's contract; the page is writable now.
    unsafe { (slot as *mut usize).write_volatile(value) };
    if protected {
        protect(libc::PROT_READ)?;
    }
    Ok(())
}

/// The loaded object whose path ends with `soname`.
fn find_loaded(soname: &str) -> Option<Loaded> {
    struct Search<'a> {
        soname: &'a str,
        found: Option<Loaded>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our `data`.
        let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: a non-null dlpi_name is a NUL-terminated path.
        let path = unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy();
        let name = path.rsplit('/').next().unwrap_or(&path);
        if name != search.soname {
            return 0;
        }
        let base = info.dlpi_addr as usize;
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let relro = headers
            .iter()
            .find(|header| header.p_type == libc::PT_GNU_RELRO)
            .map(|header| {
                let from = base + header.p_vaddr as usize;
                (from, from + header.p_memsz as usize)
            });
        search.found = Some(Loaded {
            path: path.into_owned(),
            base,
            relro,
        });
        1
    }
    let mut search = Search {
        soname,
        found: None,
    };
    // SAFETY: `visit` only reads what dl_iterate_phdr passes and writes `search`.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut search as *mut Search).cast()) };
    search.found
}
