//! A heap value whose type only its owner knows: the execution keeps the values of the
//! `OnceLock`s initialised in it (see `sync::once`) without naming their types, and drops
//! each with its own destructor.

/// A boxed value of a type erased at construction. Dropping it drops the value.
pub struct ErasedBox {
    ptr: *mut (),
    drop_value: unsafe fn(*mut ()),
}

/// Drops the `Box<T>` that `ptr` came from.
///
/// # Safety
/// `ptr` comes from `Box::<T>::into_raw` and is not used afterwards.
unsafe fn drop_boxed<T>(ptr: *mut ()) {
    drop(Box::from_raw(ptr.cast::<T>()));
}

impl ErasedBox {
    /// Boxes `value`. `T` may borrow (it need not be `'static`): its owner must make sure
    /// the box is dropped or taken back before those borrows end.
    pub fn new<T>(value: T) -> Self {
        ErasedBox {
            ptr: Box::into_raw(Box::new(value)).cast(),
            drop_value: drop_boxed::<T>,
        }
    }

    /// The value's address, stable until the box is dropped or taken back.
    ///
    /// # Safety
    /// `T` is the type the box was made with.
    pub unsafe fn as_ptr<T>(&self) -> *mut T {
        self.ptr.cast()
    }

    /// Takes the value back out.
    ///
    /// # Safety
    /// `T` is the type the box was made with.
    pub unsafe fn into_inner<T>(self) -> T {
        let value = *Box::from_raw(self.ptr.cast::<T>());
        std::mem::forget(self);
        value
    }
}

impl Drop for ErasedBox {
    fn drop(&mut self) {
        // SAFETY: `drop_value` was made for the type `ptr` was boxed with, and the box
        // owns `ptr` (`into_inner` forgets the box after taking the value).
        unsafe { (self.drop_value)(self.ptr) }
    }
}

#[cfg(test)]
mod tests {
    use super::ErasedBox;
    use std::rc::Rc;

    #[test]
    fn dropping_the_box_drops_the_value_once() {
        let value = Rc::new(7);
        let erased = ErasedBox::new(value.clone());
        assert_eq!(Rc::strong_count(&value), 2);
        drop(erased);
        assert_eq!(Rc::strong_count(&value), 1);
    }

    #[test]
    fn a_value_taken_back_is_not_dropped_by_the_box() {
        let value = Rc::new(7);
        let erased = ErasedBox::new(value.clone());
        // SAFETY: boxed as an `Rc<i32>`.
        let back: Rc<i32> = unsafe { erased.into_inner() };
        assert_eq!(Rc::strong_count(&value), 2);
        drop(back);
        assert_eq!(Rc::strong_count(&value), 1);
    }
}
