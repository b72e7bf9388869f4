//! The planted-bug variants of a Rust reference core: picking one by number,
//! and the World configuration that runs it.

use std::sync::Arc;

use cmc_model::ModelParam;
use cmc_world::{Core, WorldSpec};

/// The variant `bug` of a core generic over its planted bug (`$core::<0>` is
/// the control) as an `Option<Arc<dyn Core>>`: `None` for a number not listed.
macro_rules! bug_variant {
    ($core:ident, $bug:expr, [$($number:literal),*]) => {
        match $bug {
            $( $number => Some(std::sync::Arc::new($core::<$number>) as std::sync::Arc<dyn cmc_world::Core>), )*
            _ => None,
        }
    };
}
pub(crate) use bug_variant;

/// A World configuration of `nodes` nodes running `variant`, variant `bug`
/// of the Rust core `name` (`None`: it has no such planted bug), recorded as
/// [`crate::rust_core_name`] spells it.
pub(crate) fn variant_spec(
    name: &str,
    bug: u32,
    variant: Option<Arc<dyn Core>>,
    nodes: usize,
) -> Result<WorldSpec, String> {
    let core = variant.ok_or_else(|| format!("{name} has no planted bug {bug}"))?;
    let mut spec = WorldSpec::new(core, nodes)?;
    spec.applied
        .push(ModelParam::new("core", crate::rust_core_name(name, bug)));
    Ok(spec)
}
