#!/usr/bin/env python3
"""Counts a crate's public surface from its source: the modules reachable
from lib.rs through `pub mod`, and in them the `pub` items (functions and
methods, types, traits, constants, statics, re-exports, macros) and `pub`
fields, leaving out test-only modules (`#[cfg(test)]`, or test support behind
`#[cfg(any(test, feature = "test-support"))]`) and `#[doc(hidden)]` items.

Usage: scripts/public-surface.py crates/world/src
"""
import os
import re
import sys

ITEM = re.compile(r'^\s*pub (unsafe )?(fn|struct|enum|trait|const|static|type|use|macro|mod) ')
FIELD = re.compile(r'^\s+pub [a-z_][a-z0-9_]*: ')
TEST_ONLY = re.compile(r'^#\[cfg\((test|any\(test, feature = "test-support"\))\)\]$')
MOD = re.compile(r'^\s*(pub )?mod ([a-z_0-9]+);')


def module_file(directory, name):
    for path in (os.path.join(directory, name + '.rs'), os.path.join(directory, name, 'mod.rs')):
        if os.path.exists(path):
            return path
    return None


def walk(path, counts):
    """Counts the public lines of the public module in `path`, then its public children."""
    counts['mods'] += 1
    directory = os.path.dirname(path)
    if not path.endswith(('mod.rs', 'lib.rs')):
        directory = os.path.join(directory, os.path.basename(path)[:-3])
    lines = open(path).read().split('\n')
    hidden = False
    for at, line in enumerate(lines):
        if TEST_ONLY.match(line.strip()) and at + 1 < len(lines):
            following = lines[at + 1]
            if re.match(r'^\s*(pub )?mod [a-z_0-9]+ \{', following):
                break  # the inline test module closes the file
            if re.match(r'^\s*(pub )?mod ', following):
                hidden = True  # a test-only module declared in another file
                continue
        if line.strip() == '#[doc(hidden)]':
            hidden = True
            continue
        child = MOD.match(line)
        if child and child.group(1) and not hidden:
            found = module_file(directory, child.group(2))
            if found:
                walk(found, counts)
            continue
        if not hidden:
            if ITEM.match(line):
                counts['items'] += 1
            elif FIELD.match(line):
                counts['fields'] += 1
        if not line.strip().startswith('#['):
            hidden = False


counts = {'mods': 0, 'items': 0, 'fields': 0}
walk(os.path.join(sys.argv[1], 'lib.rs'), counts)
print(f"public modules {counts['mods']}, public items {counts['items']}, public fields {counts['fields']}")
