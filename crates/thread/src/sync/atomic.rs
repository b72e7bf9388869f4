//! Drop-in replacements for `std::sync::atomic` types. Every access is a switch point.
//!
//! Memory model: by default every access is sequentially consistent whatever `Ordering` is
//! passed, so a load always returns the latest store in the explored total order. With
//! `Checker::weak_memory(true)` a non-`SeqCst` load may also read older stores, as the
//! C++20 / Rust model allows (see the crate docs for what is and is not explored).
//! `compare_exchange_weak` never fails spuriously. The `Ordering` is still passed to the
//! real operation, so invalid orderings panic exactly as with std.

use crate::rt::{self, AtomicKind, ObjCell, Value};
use std::panic::Location;
pub use std::sync::atomic::Ordering;

/// A memory fence: an acquire fence acquires what the thread's earlier relaxed loads read,
/// and a release fence makes the thread's later relaxed stores carry what the thread knew
/// (happens-before for race detection, and the view in weak-memory mode). Not a switch
/// point, except `fence(SeqCst)` in weak-memory mode (a step of the `SeqCst` order).
#[track_caller]
pub fn fence(order: Ordering) {
    std::sync::atomic::fence(order);
    if order == Ordering::SeqCst {
        rt::sc_fence_step(Location::caller());
    }
    rt::with(|st| st.fence(order));
}

/// A compiler fence; no effect on exploration.
pub fn compiler_fence(order: Ordering) {
    std::sync::atomic::compiler_fence(order)
}

/// The methods every atomic has, for atomic `$name` (with its type parameters,
/// if any) wrapping `$std` of values `$t`: `$to` gives a value's [`Value`],
/// `$bits` and `$from` convert it to and from the checker's 64 bits.
macro_rules! common_methods {
    ($name:ident $(<$param:ident>)?, $std:ty, $t:ty, $to:expr, $bits:expr, $from:expr) => {
        impl $(<$param>)? $name $(<$param>)? {
            /// Creates a new atomic; it is registered with the checker on first use.
            pub const fn new(v: $t) -> Self {
                $name {
                    v: <$std>::new(v),
                    id: ObjCell::new(),
                }
            }

            /// Like `new`; reports show the atomic as `name#id`.
            pub const fn named(name: &'static str, v: $t) -> Self {
                $name {
                    v: <$std>::new(v),
                    id: ObjCell::named(name),
                }
            }

            fn run<R>(
                &self,
                kind: AtomicKind,
                orders: (Ordering, Ordering),
                location: &'static Location<'static>,
                body: impl FnOnce(&$std) -> (R, Value, Option<$t>),
            ) -> R {
                let peek = || $bits(self.v.load(Ordering::Relaxed));
                let poke = |bits| self.v.store($from(bits), Ordering::Relaxed);
                rt::atomic_access(
                    &self.id,
                    stringify!($name),
                    kind,
                    orders,
                    location,
                    (peek, poke),
                    |_| {
                        let (r, value, written) = body(&self.v);
                        (r, value, written.map($bits))
                    },
                )
            }

            /// Loads the value (a switch point). In weak-memory mode a non-`SeqCst` load may
            /// return an older store, as the memory model allows.
            #[track_caller]
            pub fn load(&self, order: Ordering) -> $t {
                self.load_at(order, Location::caller())
            }

            fn load_at(&self, order: Ordering, location: &'static Location<'static>) -> $t {
                let peek = || $bits(self.v.load(Ordering::Relaxed));
                let orders = (order, order);
                rt::atomic_access(
                    &self.id,
                    stringify!($name),
                    AtomicKind::Load,
                    orders,
                    location,
                    (peek, |_| {}),
                    |read| {
                        let v = match read {
                            Some(bits) => $from(bits),
                            None => self.v.load(order),
                        };
                        (v, $to(v), None)
                    },
                )
            }

            /// Stores `val` (a switch point).
            #[track_caller]
            pub fn store(&self, val: $t, order: Ordering) {
                self.run(AtomicKind::Store, (order, order), Location::caller(), |a| {
                    a.store(val, order);
                    ((), $to(val), Some(val))
                })
            }

            /// Swaps in `val`, returning the previous value (a switch point).
            #[track_caller]
            pub fn swap(&self, val: $t, order: Ordering) -> $t {
                self.run(
                    AtomicKind::Rmw("swap"),
                    (order, order),
                    Location::caller(),
                    |a| {
                        let old = a.swap(val, order);
                        (old, update($to(old), $to(val)), Some(val))
                    },
                )
            }

            /// Stores `new` if the value is `current`; returns the previous value (a switch point).
            #[track_caller]
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.cas(current, new, success, failure, Location::caller())
            }

            /// Like `compare_exchange`; never fails spuriously under the checker.
            #[track_caller]
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.compare_exchange(current, new, success, failure)
            }

            fn cas(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
                location: &'static Location<'static>,
            ) -> Result<$t, $t> {
                self.run(
                    AtomicKind::Rmw("compare_exchange"),
                    (success, failure),
                    location,
                    |a| match a.compare_exchange(current, new, success, failure) {
                        Ok(old) => (Ok(old), update($to(old), $to(new)), Some(new)),
                        Err(seen) => (Err(seen), failed($to(seen)), None),
                    },
                )
            }

            /// Applies `f` until it succeeds, as a load followed by `compare_exchange_weak` retries.
            #[track_caller]
            pub fn fetch_update<F: FnMut($t) -> Option<$t>>(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                f: F,
            ) -> Result<$t, $t> {
                self.try_update(set_order, fetch_order, f)
            }

            /// loom's (and unstable std's) name for [`Self::fetch_update`].
            #[track_caller]
            pub fn try_update(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                mut f: impl FnMut($t) -> Option<$t>,
            ) -> Result<$t, $t> {
                let location = Location::caller();
                let mut prev = self.load_at(fetch_order, location);
                while let Some(next) = f(prev) {
                    match self.cas(prev, next, set_order, fetch_order, location) {
                        Ok(v) => return Ok(v),
                        Err(seen) => prev = seen,
                    }
                }
                Err(prev)
            }

            /// loom's (and unstable std's) `update`: [`Self::try_update`] with a function that
            /// always gives a new value; returns the previous value.
            #[track_caller]
            pub fn update(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                mut f: impl FnMut($t) -> $t,
            ) -> $t {
                match self.try_update(set_order, fetch_order, |v| Some(f(v))) {
                    Ok(prev) | Err(prev) => prev,
                }
            }

            /// Mutable access without a switch point (exclusive borrow, no race possible).
            pub fn get_mut(&mut self) -> &mut $t {
                rt::exclusive_access(&self.id);
                self.v.get_mut()
            }

            /// loom's `with_mut`: runs `f` on the value through exclusive access (as
            /// [`Self::get_mut`], not a step).
            pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut $t) -> R) -> R {
                f(self.get_mut())
            }

            /// loom's `unsync_load`: a non-atomic read of the latest store, without a step.
            /// As in loom, it is race-checked like an `UnsafeCell` read: a store or
            /// read-modify-write by another thread that does not happen before it (or an
            /// `unsync_load` not ordered before a later store) is a data race.
            ///
            /// # Safety
            /// No store may run concurrently (the checker reports one that does).
            #[track_caller]
            pub unsafe fn unsync_load(&self) -> $t {
                rt::unsync_load(&self.id, stringify!($name), Location::caller());
                self.v.load(Ordering::Relaxed)
            }

            /// The deprecated `compare_and_swap`: `compare_exchange` with the failure
            /// ordering std derived from `order`; returns the value read.
            #[track_caller]
            pub fn compare_and_swap(&self, current: $t, new: $t, order: Ordering) -> $t {
                let failure = match order {
                    Ordering::AcqRel => Ordering::Acquire,
                    Ordering::Release => Ordering::Relaxed,
                    other => other,
                };
                match self.cas(current, new, order, failure, Location::caller()) {
                    Ok(v) | Err(v) => v,
                }
            }

            /// Consumes the atomic and returns the value.
            pub fn into_inner(self) -> $t {
                self.v.into_inner()
            }
        }
    };
}

fn update(old: Value, new: Value) -> Value {
    match (old, new) {
        (Value::Int(a), Value::Int(b)) => Value::Update(a, b),
        (Value::Bool(a), Value::Bool(b)) => Value::Update(a as i128, b as i128),
        (Value::Ptr(_), Value::Ptr(_)) => new,
        _ => new,
    }
}

/// What a failed `compare_exchange` that saw `seen` records: a pointer's is
/// [`Value::Busy`] (its address differs between runs).
fn failed(seen: Value) -> Value {
    match seen {
        Value::Int(v) => Value::Failed(v),
        Value::Bool(v) => Value::Failed(v as i128),
        Value::Ptr(_) => Value::Busy,
        other => other,
    }
}

macro_rules! rmw {
    ($name:ident, $t:ty, $to:expr, $($method:ident),*) => {
        impl $name {
            $(
                #[doc = concat!("`", stringify!($method), "` as in std; returns the previous value (a switch point).")]
                #[track_caller]
                pub fn $method(&self, val: $t, order: Ordering) -> $t {
                    self.run(AtomicKind::Rmw(stringify!($method)), (order, order), Location::caller(), |a| {
                        let old = a.$method(val, order);
                        let new = a.load(Ordering::Relaxed);
                        (old, update($to(old), $to(new)), Some(new))
                    })
                }
            )*
        }
    };
}

macro_rules! atomic_int {
    ($name:ident, $t:ty) => {
        #[doc = concat!("Instrumented `std::sync::atomic::", stringify!($name), "`.")]
        #[derive(Debug, Default)]
        pub struct $name {
            v: std::sync::atomic::$name,
            id: ObjCell,
        }
        common_methods!(
            $name,
            std::sync::atomic::$name,
            $t,
            |v: $t| Value::Int(v as i128),
            |v: $t| v as u64,
            |b: u64| b as $t
        );
        rmw!(
            $name,
            $t,
            |v: $t| Value::Int(v as i128),
            fetch_add,
            fetch_sub,
            fetch_and,
            fetch_nand,
            fetch_or,
            fetch_xor,
            fetch_max,
            fetch_min
        );
        impl From<$t> for $name {
            fn from(v: $t) -> Self {
                Self::new(v)
            }
        }
    };
}

atomic_int!(AtomicU8, u8);
atomic_int!(AtomicU16, u16);
atomic_int!(AtomicU32, u32);
atomic_int!(AtomicU64, u64);
atomic_int!(AtomicUsize, usize);
atomic_int!(AtomicI8, i8);
atomic_int!(AtomicI16, i16);
atomic_int!(AtomicI32, i32);
atomic_int!(AtomicI64, i64);
atomic_int!(AtomicIsize, isize);

/// Instrumented `std::sync::atomic::AtomicBool`.
#[derive(Debug, Default)]
pub struct AtomicBool {
    v: std::sync::atomic::AtomicBool,
    id: ObjCell,
}
common_methods!(
    AtomicBool,
    std::sync::atomic::AtomicBool,
    bool,
    Value::Bool,
    |v: bool| v as u64,
    |b: u64| b != 0
);
rmw!(
    AtomicBool,
    bool,
    Value::Bool,
    fetch_and,
    fetch_nand,
    fetch_or,
    fetch_xor
);

impl From<bool> for AtomicBool {
    fn from(v: bool) -> Self {
        Self::new(v)
    }
}

/// Instrumented `std::sync::atomic::AtomicPtr`. Pointer values are shown in traces but not
/// compared by non-determinism detection (addresses differ between runs).
#[derive(Debug)]
pub struct AtomicPtr<T> {
    v: std::sync::atomic::AtomicPtr<T>,
    id: ObjCell,
}

impl<T> Default for AtomicPtr<T> {
    fn default() -> Self {
        Self::new(std::ptr::null_mut())
    }
}

fn ptr_value<T>(p: *mut T) -> Value {
    Value::Ptr(p as usize)
}

common_methods!(
    AtomicPtr<T>,
    std::sync::atomic::AtomicPtr<T>,
    *mut T,
    ptr_value,
    |p: *mut T| p as usize as u64,
    |b: u64| b as usize as *mut T
);
