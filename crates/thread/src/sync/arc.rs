//! Instrumented `Arc` and `Weak`: `clone`, `drop`, `strong_count`, `get_mut`, `try_unwrap`,
//! `into_inner`, `downgrade` and `Weak::upgrade` are switch points on the allocation's reference count, so races on the count
//! (a `strong_count` check, a `try_unwrap` that fails because a clone is still alive) are
//! explored. For partial-order reduction clone and drop commute with each other (a thread
//! that clones or drops holds a reference, so neither can reach zero by reordering); only
//! the drop that reaches zero conflicts with them. Unsized coercions (`Arc<dyn Trait>`) are not supported (they need the unstable
//! `CoerceUnsized`).

use crate::rt::{self, AtomicKind, ObjCell, ObjId, ObjState, Op, Value};
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::panic::Location;
use std::sync::atomic::Ordering;

struct Inner<T: ?Sized> {
    id: ObjCell,
    data: T,
}

/// A thread-safe reference-counted pointer with the API of `std::sync::Arc`.
pub struct Arc<T: ?Sized> {
    inner: std::sync::Arc<Inner<T>>,
}

fn counted() -> ObjState {
    ObjState::RefCount(0)
}

/// Completes the count operation `kind` announced on `id`: its happens-before effect
/// (acquire-release, as std's count updates with the acquire fence of the last drop), the
/// count it left (`Update(_, new)`, `Int(n)` or `Failed(n)`) for the dependency relation
/// and the leak check, then the access.
fn complete_count(id: Option<ObjId>, kind: AtomicKind, value: Value, wrote: bool) {
    rt::sync_access(id, kind, Ordering::AcqRel, wrote);
    if let (Some(id), Value::Update(_, n) | Value::Int(n) | Value::Failed(n)) = (id, value) {
        rt::with(|st| *st.state_mut(id) = ObjState::RefCount(n as usize));
    }
    rt::complete(id, value, wrote);
}

impl<T> Arc<T> {
    /// Allocates `data` with a count of one (not a switch point: nobody else can see it).
    /// Inside an execution the allocation is registered for the leak check at its end.
    #[track_caller]
    pub fn new(data: T) -> Self {
        let arc = Arc {
            inner: std::sync::Arc::new(Inner {
                id: ObjCell::new(),
                data,
            }),
        };
        let location = Location::caller();
        rt::with(|st| {
            let id = arc
                .inner
                .id
                .get(st, "Arc", || ObjState::RefCount(1), location);
            st.allocations.push(id);
        });
        arc
    }

    /// The pointer to the value, keeping this reference alive until [`Arc::from_raw`] takes
    /// it back (not a switch point: the count does not change).
    pub fn into_raw(this: Self) -> *const T {
        let this = std::mem::ManuallyDrop::new(this);
        // SAFETY: `this` is never dropped, so its `inner` is moved out exactly once.
        let inner = unsafe { std::ptr::read(&this.inner) };
        let raw = std::sync::Arc::into_raw(inner);
        // SAFETY: `raw` points to a live `Inner<T>`.
        unsafe { std::ptr::addr_of!((*raw).data) }
    }

    /// Takes back a reference given away by [`Arc::into_raw`].
    ///
    /// # Safety
    /// `ptr` must come from `Arc::<T>::into_raw` and be taken back once.
    pub unsafe fn from_raw(ptr: *const T) -> Self {
        let offset = std::mem::offset_of!(Inner<T>, data);
        // SAFETY: `ptr` points `offset` bytes into the `Inner<T>` that `into_raw` released.
        let inner = unsafe { ptr.byte_sub(offset) }.cast::<Inner<T>>();
        Arc {
            // SAFETY: as above; the reference `into_raw` kept alive is handed back.
            inner: unsafe { std::sync::Arc::from_raw(inner) },
        }
    }

    /// Returns the value if this is the only reference, otherwise `Err(this)` (a switch point).
    #[track_caller]
    pub fn try_unwrap(this: Self) -> Result<T, Self> {
        let location = Location::caller();
        let try_unwrap = |o| Op::Atomic(o, AtomicKind::Rmw("try_unwrap"));
        // Announced before the allocation may be freed: completing only needs the id.
        let id = rt::announce(&this.inner.id, "Arc", counted, try_unwrap, location);
        let n = std::sync::Arc::strong_count(&this.inner) as i128;
        let this = ManuallyDrop::new(this);
        // SAFETY: `this` is never used or dropped again; ownership moves to `inner`.
        let inner = unsafe { std::ptr::read(&this.inner) };
        let (result, value, wrote) = match std::sync::Arc::try_unwrap(inner) {
            Ok(i) => (Ok(i.data), Value::Update(n, 0), true),
            Err(inner) => (Err(Arc { inner }), Value::Failed(n), false),
        };
        complete_count(id, AtomicKind::Rmw("try_unwrap"), value, wrote);
        result
    }

    /// Returns the value if this is the last reference (a switch point).
    #[track_caller]
    pub fn into_inner(this: Self) -> Option<T> {
        Arc::try_unwrap(this).ok()
    }
}

impl<T: ?Sized> Arc<T> {
    fn count_op<R>(
        &self,
        kind: AtomicKind,
        location: &'static Location<'static>,
        body: impl FnOnce() -> (R, Value, bool),
    ) -> R {
        let id = rt::announce(
            &self.inner.id,
            "Arc",
            counted,
            |o| Op::Atomic(o, kind),
            location,
        );
        let (result, value, wrote) = body();
        complete_count(id, kind, value, wrote);
        result
    }

    /// The number of strong references (a switch point).
    #[track_caller]
    pub fn strong_count(this: &Self) -> usize {
        this.count_op(
            AtomicKind::Observe("strong_count"),
            Location::caller(),
            || {
                let n = std::sync::Arc::strong_count(&this.inner);
                (n, Value::Int(n as i128), false)
            },
        )
    }

    /// Mutable access if this is the only reference (a switch point).
    #[track_caller]
    pub fn get_mut(this: &mut Self) -> Option<&mut T> {
        let n = Arc::strong_count(this);
        if n == 1 {
            std::sync::Arc::get_mut(&mut this.inner).map(|i| &mut i.data)
        } else {
            None
        }
    }

    /// Whether both point to the same allocation (not a switch point).
    pub fn ptr_eq(this: &Self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&this.inner, &other.inner)
    }

    /// The pointer to the value, as [`Arc::into_raw`] gives it (not a switch point: the
    /// count does not change).
    pub fn as_ptr(this: &Self) -> *const T {
        std::ptr::addr_of!(this.inner.data)
    }

    fn clone_at(&self, location: &'static Location<'static>) -> Self {
        self.count_op(AtomicKind::Count("clone"), location, || {
            let inner = self.inner.clone();
            let n = std::sync::Arc::strong_count(&inner) as i128;
            (Arc { inner }, Value::Update(n - 1, n), true)
        })
    }
}

impl<T> Arc<T> {
    /// Adds a reference to the allocation of `ptr`, as a clone does (a switch point).
    ///
    /// # Safety
    /// `ptr` must come from [`Arc::into_raw`] or [`Arc::as_ptr`] of a live `Arc<T>`.
    #[track_caller]
    pub unsafe fn increment_strong_count(ptr: *const T) {
        // SAFETY: per the contract; the borrowed reference is not dropped.
        let this = ManuallyDrop::new(unsafe { Arc::from_raw(ptr) });
        std::mem::forget(this.clone_at(Location::caller()));
    }

    /// Removes a reference from the allocation of `ptr`, as a drop does (a switch point).
    ///
    /// # Safety
    /// `ptr` must come from [`Arc::into_raw`] or [`Arc::as_ptr`], and the reference it
    /// removes must be one the caller owns.
    pub unsafe fn decrement_strong_count(ptr: *const T) {
        // SAFETY: per the contract.
        drop(unsafe { Arc::from_raw(ptr) });
    }
}

impl<T: ?Sized> Clone for Arc<T> {
    /// Adds a reference (a switch point).
    #[track_caller]
    fn clone(&self) -> Self {
        self.clone_at(Location::caller())
    }
}

impl<T: ?Sized> Drop for Arc<T> {
    /// Removes a reference (a switch point); the last one drops the value.
    fn drop(&mut self) {
        self.count_op(AtomicKind::Count("drop"), Location::caller(), || {
            let n = std::sync::Arc::strong_count(&self.inner) as i128;
            ((), Value::Update(n, n - 1), true)
        })
    }
}

impl<T: ?Sized> Arc<T> {
    /// A weak reference to the allocation (a switch point that observes the count).
    #[track_caller]
    pub fn downgrade(this: &Self) -> Weak<T> {
        this.count_op(AtomicKind::Observe("downgrade"), Location::caller(), || {
            let n = std::sync::Arc::strong_count(&this.inner);
            let weak = Weak {
                id: this.inner.id.snapshot(),
                inner: std::sync::Arc::downgrade(&this.inner),
            };
            (weak, Value::Int(n as i128), false)
        })
    }

    /// The number of weak references (not a switch point).
    pub fn weak_count(this: &Self) -> usize {
        std::sync::Arc::weak_count(&this.inner)
    }
}

/// A weak reference with the API of `std::sync::Weak`: `upgrade` is a switch point on the
/// allocation's count (it races with the drop that frees it); clone and drop are not.
pub struct Weak<T: ?Sized> {
    /// The allocation's identity, copied at `downgrade` (the allocation's own copy is
    /// dropped with the value).
    id: ObjCell,
    inner: std::sync::Weak<Inner<T>>,
}

impl<T> Weak<T> {
    /// A weak reference to nothing: `upgrade` always returns `None`.
    pub fn new() -> Self {
        Weak {
            id: ObjCell::new(),
            inner: std::sync::Weak::new(),
        }
    }
}

impl<T> Default for Weak<T> {
    fn default() -> Self {
        Weak::new()
    }
}

impl<T: ?Sized> Weak<T> {
    /// A strong reference if the value is still alive (a switch point).
    #[track_caller]
    pub fn upgrade(&self) -> Option<Arc<T>> {
        let location = Location::caller();
        let kind = AtomicKind::Rmw("upgrade");
        let id = rt::announce(&self.id, "Arc", counted, |o| Op::Atomic(o, kind), location);
        let (result, value, wrote) = match self.inner.upgrade() {
            Some(inner) => {
                let n = std::sync::Arc::strong_count(&inner) as i128;
                (Some(Arc { inner }), Value::Update(n - 1, n), true)
            }
            None => (None, Value::Failed(0), false),
        };
        complete_count(id, kind, value, wrote);
        result
    }

    /// The number of strong references (not a switch point).
    pub fn strong_count(&self) -> usize {
        self.inner.strong_count()
    }

    /// The number of weak references (not a switch point).
    pub fn weak_count(&self) -> usize {
        self.inner.weak_count()
    }
}

impl<T: ?Sized> Clone for Weak<T> {
    fn clone(&self) -> Self {
        Weak {
            id: self.id.snapshot(),
            inner: self.inner.clone(),
        }
    }
}

impl<T: ?Sized> std::fmt::Debug for Weak<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(Weak)")
    }
}

impl<T: ?Sized> Deref for Arc<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner.data
    }
}

impl<T: Default> Default for Arc<T> {
    fn default() -> Self {
        Arc::new(T::default())
    }
}

impl<T> From<T> for Arc<T> {
    fn from(t: T) -> Self {
        Arc::new(t)
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for Arc<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.data.fmt(f)
    }
}
