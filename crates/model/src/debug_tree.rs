//! The structure of a value's `Debug` text (structs, tuples, lists, maps,
//! sets), so that a diff of two values can name the nested part that
//! changed (`rms[2].state`) instead of printing the whole value twice.
//!
//! Text that does not parse as `Debug` output (a core's own description,
//! say) is one leaf: it is compared whole.

/// A parsed value: its text, and its parts if it has any.
#[derive(Debug, PartialEq, Eq)]
struct Node<'t> {
    /// The value's text, as printed.
    text: &'t str,
    /// `None` for a leaf (a number, a string, a unit variant).
    parts: Option<Composite<'t>>,
}

/// A value with parts: `Head { a: 1 }`, `Head(1, 2)`, `[1, 2]`, `{k: v}`.
#[derive(Debug, PartialEq, Eq)]
struct Composite<'t> {
    /// The name before the bracket (`Some`, `Node`), if any.
    head: &'t str,
    /// The opening bracket: `{`, `(` or `[`.
    open: u8,
    /// The parts in order, each with its key (a field's name or a map's key)
    /// if it has one.
    entries: Vec<(Option<&'t str>, Node<'t>)>,
}

/// One part of a value that differs: its path below the value (empty for
/// the value itself), and its text before and after (`None`: absent).
pub(crate) type Difference = (String, Option<String>, Option<String>);

/// The parts of `after` that differ from `before`, both `Debug` texts, each
/// with its path (`.field`, `[index]`, `[key]`). Where the two do not have
/// the same shape (another variant, text that does not parse), the whole
/// value differs (path `""`).
pub(crate) fn differences(before: &str, after: &str) -> Vec<Difference> {
    let mut found = Vec::new();
    match (parse(before), parse(after)) {
        (Some(before), Some(after)) => diff(&before, &after, String::new(), &mut found),
        _ if before != after => {
            found.push((String::new(), Some(before.into()), Some(after.into())))
        }
        _ => {}
    }
    found
}

fn diff(before: &Node<'_>, after: &Node<'_>, path: String, found: &mut Vec<Difference>) {
    if before.text == after.text {
        return;
    }
    let whole = |found: &mut Vec<Difference>| {
        found.push((
            path.clone(),
            Some(before.text.into()),
            Some(after.text.into()),
        ));
    };
    let (Some(old), Some(new)) = (&before.parts, &after.parts) else {
        return whole(found);
    };
    // A wrapper of one part (`Some(3)`) reads best whole.
    let single = old.entries.len() <= 1 && new.entries.len() <= 1;
    if old.head != new.head || old.open != new.open || single {
        return whole(found);
    }
    let keyed = old
        .entries
        .iter()
        .chain(&new.entries)
        .all(|(key, _)| key.is_some());
    if keyed {
        let lookup = |entries: &[(Option<&str>, Node<'_>)], wanted: &str| {
            entries.iter().position(|(key, _)| *key == Some(wanted))
        };
        let step = |key: &str| match old.head {
            // A struct's fields by name; a map's entries by key.
            "" => format!("{path}[{key}]"),
            _ => format!("{path}.{key}"),
        };
        for (key, value) in &new.entries {
            let key = key.expect("keyed");
            match lookup(&old.entries, key) {
                Some(at) => diff(&old.entries[at].1, value, step(key), found),
                None => found.push((step(key), None, Some(value.text.into()))),
            }
        }
        for (key, value) in &old.entries {
            let key = key.expect("keyed");
            if lookup(&new.entries, key).is_none() {
                found.push((step(key), Some(value.text.into()), None));
            }
        }
        return;
    }
    if old
        .entries
        .iter()
        .chain(&new.entries)
        .any(|(key, _)| key.is_some())
    {
        return whole(found);
    }
    let index = |i: usize| match old.open {
        b'(' => format!("{path}.{i}"),
        _ => format!("{path}[{i}]"),
    };
    for i in 0..old.entries.len().max(new.entries.len()) {
        match (old.entries.get(i), new.entries.get(i)) {
            (Some((_, was)), Some((_, is))) => diff(was, is, index(i), found),
            (None, Some((_, is))) => found.push((index(i), None, Some(is.text.into()))),
            (Some((_, was)), None) => found.push((index(i), Some(was.text.into()), None)),
            (None, None) => {}
        }
    }
}

/// `text` parsed whole, or `None` if it is not `Debug` output.
fn parse(text: &str) -> Option<Node<'_>> {
    let mut parser = Parser { text, at: 0 };
    let node = parser.value()?;
    parser.skip_space();
    (parser.at == text.len()).then_some(node)
}

/// Deepest nesting parsed (deeper text is compared whole).
const DEPTH_MAX: usize = 64;

struct Parser<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Parser<'t> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Option<Node<'t>> {
        self.value_at(0)
    }

    fn value_at(&mut self, depth: usize) -> Option<Node<'t>> {
        if depth > DEPTH_MAX {
            return None;
        }
        self.skip_space();
        let start = self.at;
        match self.peek()? {
            b'"' | b'\'' => {
                self.quoted()?;
                return Some(self.leaf(start));
            }
            b'{' | b'(' | b'[' => {}
            _ => {
                self.word();
                if self.at == start {
                    return None;
                }
            }
        }
        let head = &self.text[start..self.at];
        // `Name {` has a space before the brace; `Name(` and `Name[` none.
        let before_bracket = self.at;
        self.skip_space();
        match self.peek() {
            Some(open @ (b'{' | b'(' | b'[')) if open == b'{' || self.at == before_bracket => {
                let entries = self.entries(open, depth)?;
                Some(Node {
                    text: &self.text[start..self.at],
                    parts: Some(Composite {
                        head: head.trim(),
                        open,
                        entries,
                    }),
                })
            }
            _ => {
                self.at = before_bracket;
                Some(self.leaf(start))
            }
        }
    }

    fn leaf(&self, start: usize) -> Node<'t> {
        Node {
            text: &self.text[start..self.at],
            parts: None,
        }
    }

    /// A word: anything up to a space, a bracket, a comma or a colon that
    /// is not part of a path (`a::B`).
    fn word(&mut self) {
        while let Some(b) = self.peek() {
            let path = b == b':' && self.text.as_bytes().get(self.at + 1) == Some(&b':');
            if path {
                self.at += 2;
                continue;
            }
            if b.is_ascii_whitespace() || b"{}()[],:\"'".contains(&b) {
                break;
            }
            self.at += 1;
        }
    }

    /// A string or character literal, with its escapes.
    fn quoted(&mut self) -> Option<()> {
        let quote = self.peek()?;
        self.at += 1;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b if b == quote => {
                    self.at += 1;
                    return Some(());
                }
                _ => self.at += 1,
            }
        }
    }

    /// The entries between `open` and its closing bracket (which it
    /// consumes), each `key: value` or `value`.
    fn entries(&mut self, open: u8, depth: usize) -> Option<Vec<(Option<&'t str>, Node<'t>)>> {
        let close = match open {
            b'{' => b'}',
            b'(' => b')',
            _ => b']',
        };
        self.at += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.peek()? == close {
                self.at += 1;
                return Some(entries);
            }
            let first = self.value_at(depth + 1)?;
            self.skip_space();
            let entry = if self.peek()? == b':' {
                self.at += 1;
                (Some(first.text), self.value_at(depth + 1)?)
            } else {
                (None, first)
            };
            entries.push(entry);
            self.skip_space();
            match self.peek()? {
                b',' => self.at += 1,
                b if b == close => {}
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diffs(before: &str, after: &str) -> Vec<(String, String, String)> {
        differences(before, after)
            .into_iter()
            .map(|(path, was, is)| {
                let show = |text: Option<String>| text.unwrap_or_else(|| "-".into());
                (path, show(was), show(is))
            })
            .collect()
    }

    fn one(path: &str, was: &str, is: &str) -> (String, String, String) {
        (path.into(), was.into(), is.into())
    }

    #[derive(Debug)]
    #[allow(dead_code)] // read through Debug
    struct Rm {
        state: Phase,
        votes: Vec<u8>,
        leader: Option<u8>,
        name: String,
    }

    #[derive(Debug)]
    enum Phase {
        Working,
        Prepared,
    }

    #[test]
    fn a_nested_change_is_named_by_its_path() {
        let rm = |state, votes: &[u8], name: &str| Rm {
            state,
            votes: votes.to_vec(),
            leader: Some(1),
            name: name.into(),
        };
        let before = format!(
            "{:?}",
            [
                rm(Phase::Working, &[1, 2], "a, b"),
                rm(Phase::Working, &[], "c")
            ]
        );
        let after = format!(
            "{:?}",
            [
                rm(Phase::Working, &[1, 3], "a, b"),
                rm(Phase::Prepared, &[4], "c")
            ]
        );
        assert_eq!(
            diffs(&before, &after),
            [
                one("[0].votes[1]", "2", "3"),
                one("[1].state", "Working", "Prepared"),
                one("[1].votes", "[]", "[4]"),
            ]
        );
        // The same through the pretty form.
        let pretty = |value: &dyn std::fmt::Debug| format!("{value:#?}");
        let before = pretty(&rm(Phase::Working, &[1, 5], "x"));
        let after = pretty(&rm(Phase::Working, &[2, 5], "x"));
        assert_eq!(diffs(&before, &after), [one(".votes[0]", "1", "2")]);
    }

    #[test]
    fn maps_tuples_and_wrappers() {
        let map = |v: u8| format!("{:?}", std::collections::BTreeMap::from([(1, v), (2, 0)]));
        assert_eq!(diffs(&map(5), &map(6)), [one("[1]", "5", "6")]);
        assert_eq!(diffs("(1, 2)", "(1, 3)"), [one(".1", "2", "3")]);
        assert_eq!(diffs("Some(1)", "Some(2)"), [one("", "Some(1)", "Some(2)")]);
        assert_eq!(diffs("Some(1)", "None"), [one("", "Some(1)", "None")]);
        assert_eq!(
            diffs("{\"a\": 1, \"c\": 2}", "{\"b\": 1, \"c\": 2}"),
            [one("[\"b\"]", "-", "1"), one("[\"a\"]", "1", "-")]
        );
    }

    #[test]
    fn text_that_is_not_debug_output_is_one_value() {
        assert_eq!(
            diffs("role=leader term=3", "role=follower term=3"),
            [one("", "role=leader term=3", "role=follower term=3")]
        );
        assert_eq!(diffs("[1, 2", "[1, 3"), [one("", "[1, 2", "[1, 3")]);
        assert!(diffs("Same { a: 1 }", "Same { a: 1 }").is_empty());
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert_eq!(diffs(&deep, "[]").len(), 1);
    }
}
