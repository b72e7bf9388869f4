//! Ghost variables written in C (`CMC_GHOSTS` in `include/cmc.h`, read by
//! [`crate::core::ghost_table`]) as ghost variables of the [`World`]
//! ([`crate::system::ghosts`]): the same bytes in every state, fingerprint,
//! trace and checkpoint as a Rust variable's.
//!
//! An update is called on every step with read-only views of the pre- and
//! post-World (those of [`crate::properties::c_properties`]), a read-only
//! view of the action, and the variable's bytes to edit. It runs within the
//! World's step it follows: a crash, hang or exit in it is a core fault of
//! that step, placed in the update and naming the variable (the flight
//! recorder notes the update nested in the step); a write to its views or
//! to the action, or a nonzero return, is a fault naming the variable.
//! Never a verdict.

use std::cell::RefCell;
use std::ffi::c_char;

use crate::core::fault::{Fault, FaultKind};
use crate::core::ghost_table::{ActionView, CGhost, NO_NODE};
use crate::properties::c_properties::with_step_views;
use crate::run::guard_pages::GuardedRegion;
use crate::system::action::Action;
use crate::system::ghosts::{GhostVar, GHOST_VARS_MAX};
use crate::system::state::WorldState;
use crate::World;

/// Bytes an action's view (header, kind and text) may take.
const ACTION_MAX: usize = 4096;

/// The memory an update is handed, in a mapping of its own: the action's
/// view at the start, the variable's bytes at the very end (a write past
/// them faults).
struct UpdateScratch {
    region: GuardedRegion,
}

impl UpdateScratch {
    fn new() -> UpdateScratch {
        UpdateScratch {
            region: GuardedRegion::new(ACTION_MAX + GHOST_VARS_MAX, 0),
        }
    }

    /// Lays out the view of `action` (a step of `world`) at the start of the
    /// region and `bytes` at its end; returns where each is.
    fn fill(
        &mut self,
        world: &World,
        action: &Action,
        bytes: &[u8],
    ) -> (*const ActionView, *mut u8) {
        let base = self.region.as_ptr();
        let (kind, fault) = action.kind();
        let mut text = action.text(world.env());
        let header = std::mem::size_of::<ActionView>();
        text.truncate(ACTION_MAX - header - kind.len() - 2);
        let kind_at = base.wrapping_add(header);
        let text_at = kind_at.wrapping_add(kind.len() + 1);
        let view = ActionView {
            kind: kind_at.cast::<c_char>(),
            text: text_at.cast::<c_char>(),
            node: action.changed_node().map_or(NO_NODE, u32::from),
            fault: fault as u32,
        };
        let bytes_at = base.wrapping_add(self.region.len() - bytes.len());
        // SAFETY: the header, both strings with their NULs (at most
        // ACTION_MAX bytes, as truncated) and the bytes (at most
        // GHOST_VARS_MAX, at the end) fit in the region without overlapping;
        // the region is mapped read-write and referred to by nothing else.
        unsafe {
            base.cast::<ActionView>().write_unaligned(view);
            std::ptr::copy_nonoverlapping(kind.as_ptr(), kind_at, kind.len());
            kind_at.add(kind.len()).write(0);
            std::ptr::copy_nonoverlapping(text.as_ptr(), text_at, text.len());
            text_at.add(text.len()).write(0);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), bytes_at, bytes.len());
        }
        (base.cast_const().cast(), bytes_at)
    }

    /// The action's part of the region.
    fn action_part(&self) -> &[u8] {
        &self.region.bytes()[..ACTION_MAX]
    }
}

thread_local! {
    /// This thread's [`UpdateScratch`] (made at its first update).
    static SCRATCH: RefCell<Option<UpdateScratch>> = const { RefCell::new(None) };
}

impl CGhost {
    /// This variable as a ghost variable of a World.
    fn to_var(&self) -> Result<GhostVar, String> {
        let this = self.clone();
        let mut var = GhostVar::new(
            self.name.clone(),
            self.init.clone(),
            move |world, pre, action, post, bytes| this.update(world, pre, action, post, bytes),
        )?;
        if let Some(readers) = &self.read_by {
            var = var.read_by(readers.clone());
        }
        if let Some(rename) = self.rename {
            let this = self.clone();
            var = var.renamed_by(move |bytes, perm| {
                let _library = &this._library;
                // SAFETY: `rename` is the library's (kept loaded by `this`),
                // given the variable's bytes and one entry per node.
                unsafe {
                    rename(
                        bytes.as_mut_ptr(),
                        bytes.len() as u32,
                        perm.as_ptr(),
                        perm.len() as u32,
                    )
                }
            });
        }
        Ok(var)
    }

    /// Calls the library's update on the step `pre` -> `post` by `action`;
    /// a nonzero return or a write outside `bytes` is a fault of `world`
    /// (and `bytes` then stays as it was).
    fn update(
        &self,
        world: &World,
        pre: &WorldState,
        action: &Action,
        post: &WorldState,
        bytes: &mut [u8],
    ) {
        let what = format!("the update of ghost variable {}", self.name);
        let doing = format!("while updating ghost variable {}", self.name);
        SCRATCH.with_borrow_mut(|scratch| {
            let scratch = scratch.get_or_insert_with(UpdateScratch::new);
            let (action_view, at) = scratch.fill(world, action, bytes);
            let action_before = scratch.action_part().to_vec();
            let update = self.update;
            let code = with_step_views(world, pre, post, &what, &doing, |pre, post| {
                // SAFETY: the views and the action's view are live, laid out
                // as cmc.h's; `at` points to the variable's `bytes.len()`
                // writable bytes; the function is the library's, kept loaded.
                unsafe { update(pre, action_view, post, at) }
            });
            let fault = match code {
                None => return,
                Some(_) if scratch.action_part() != action_before.as_slice() => {
                    FaultKind::Memory("it wrote to its read-only view of the action".into())
                }
                Some(0) => {
                    // SAFETY: `at` holds `bytes.len()` bytes, written by the update.
                    let updated = unsafe { std::slice::from_raw_parts(at, bytes.len()) };
                    bytes.copy_from_slice(updated);
                    return;
                }
                Some(code) => FaultKind::CoreError(format!(
                    "the update of ghost variable {} returned error code {code}",
                    self.name
                )),
            };
            world.report_outside_step(Fault::outside_step(fault, doing));
        });
    }
}

/// `world` with the C ghost variables `ghosts`, in order, after its
/// properties are attached (see [`World::with_ghost`] for what is refused;
/// so is a variable read by a property `world` does not have).
pub fn attach_ghosts(world: World, ghosts: &[CGhost]) -> Result<World, String> {
    let world = ghosts
        .iter()
        .try_fold(world, |world, ghost| world.with_ghost(ghost.to_var()?))?;
    world.check_ghost_readers()?;
    Ok(world)
}
