//! Human-readable views of states, and the per-step diff between two views.

use std::fmt::Debug;

/// A state shown as an ordered list of named fields.
///
/// Counterexamples print the full view of the first state and, for each later
/// step, only the fields whose text changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateView {
    /// `(field name, field value)` in display order; names are unique.
    pub fields: Vec<(String, String)>,
}

/// One field that differs between two views.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    /// The field's name, followed by the path of the part of its value that
    /// changed, if only a part did (`rms[2].state`).
    pub name: String,
    /// The field's name alone (`rms`).
    pub field: String,
    /// The value before the step (`None`: the field did not exist).
    pub before: Option<String>,
    /// The value after the step (`None`: the field no longer exists).
    pub after: Option<String>,
}

impl StateView {
    /// An empty view, to be filled with [`field`](Self::field).
    pub fn new() -> StateView {
        StateView::default()
    }

    /// Adds a field (builder style).
    pub fn field(mut self, name: impl Into<String>, value: impl Debug) -> StateView {
        self.fields.push((name.into(), format!("{value:?}")));
        self
    }

    /// Adds a field whose value is already text (builder style).
    pub fn text(mut self, name: impl Into<String>, value: impl Into<String>) -> StateView {
        self.fields.push((name.into(), value.into()));
        self
    }

    /// A one-field view holding the `Debug` text of `state`.
    pub fn from_debug(state: &impl Debug) -> StateView {
        StateView::new().field("state", state)
    }

    /// The fields of `self` that differ from `before`, in `self`'s order,
    /// followed by fields that `before` had and `self` lacks. A field whose
    /// value is `Debug` text of a struct, tuple, list or map is compared
    /// part by part: each part that changed is one change, named by its
    /// path below the field (`rms[2].state`), so that a nested change does
    /// not print the whole value.
    pub fn changes_since(&self, before: &StateView) -> Vec<FieldChange> {
        let lookup = |view: &StateView, name: &str| {
            view.fields
                .iter()
                .find(|(field, _)| field == name)
                .map(|(_, value)| value.clone())
        };
        let mut changes: Vec<FieldChange> = Vec::new();
        for (name, value) in &self.fields {
            match lookup(before, name) {
                Some(old) => {
                    changes.extend(crate::debug_tree::differences(&old, value).into_iter().map(
                        |(path, before, after)| FieldChange {
                            name: format!("{name}{path}"),
                            field: name.clone(),
                            before,
                            after,
                        },
                    ))
                }
                None => changes.push(FieldChange {
                    name: name.clone(),
                    field: name.clone(),
                    before: None,
                    after: Some(value.clone()),
                }),
            }
        }
        changes.extend(
            before
                .fields
                .iter()
                .filter(|(name, _)| lookup(self, name).is_none())
                .map(|(name, value)| FieldChange {
                    name: name.clone(),
                    field: name.clone(),
                    before: Some(value.clone()),
                    after: None,
                }),
        );
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_names_only_changed_fields() {
        let before = StateView::new().field("small", 3).field("big", 0);
        let after = StateView::new().field("small", 0).field("big", 0);
        let changes = after.changes_since(&before);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].name, "small");
        assert_eq!(changes[0].before.as_deref(), Some("3"));
        assert_eq!(changes[0].after.as_deref(), Some("0"));
    }

    #[test]
    fn diff_names_the_nested_part_that_changed() {
        let before = StateView::new().field("rms", vec![("a", 1), ("b", 2)]);
        let after = StateView::new().field("rms", vec![("a", 1), ("b", 3)]);
        let changes = after.changes_since(&before);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].name, "rms[1].1");
        assert_eq!(changes[0].before.as_deref(), Some("2"));
        assert_eq!(changes[0].after.as_deref(), Some("3"));
    }

    #[test]
    fn diff_reports_removed_fields() {
        let before = StateView::new().field("a", 1).field("b", 2);
        let after = StateView::new().field("a", 1);
        let changes = after.changes_since(&before);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].after, None);
    }
}
