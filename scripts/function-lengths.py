#!/usr/bin/env python3
"""Lists the Rust functions of a directory by length, longest first: each
function's lines from its `fn` to its closing brace, comments and blank
lines included, test modules included. Exits with status 1 when a function
is longer than the limit given.

Usage: scripts/function-lengths.py DIR [--top N] [--limit LINES]
"""
import argparse
import os
import re
import sys

FN = re.compile(r'\bfn\s+([A-Za-z_][A-Za-z0-9_]*)')


def code_mask(text):
    """`text` with comments and string and char literals blanked out
    (newlines kept), so braces counted in it are the code's."""
    out = []
    at, end = 0, len(text)
    while at < end:
        two = text[at:at + 2]
        if two == '//':
            stop = text.find('\n', at)
            stop = end if stop < 0 else stop
            out.append(' ' * (stop - at))
            at = stop
        elif two == '/*':
            depth, stop = 1, at + 2
            while stop < end and depth:
                if text.startswith('/*', stop):
                    depth, stop = depth + 1, stop + 2
                elif text.startswith('*/', stop):
                    depth, stop = depth - 1, stop + 2
                else:
                    stop += 1
            out.append(re.sub(r'[^\n]', ' ', text[at:stop]))
            at = stop
        else:
            raw = re.match(r'b?r(#*)"', text[at:at + 260])
            if raw and (at == 0 or not (text[at - 1].isalnum() or text[at - 1] == '_')):
                closing = '"' + raw.group(1)
                stop = text.find(closing, at + raw.end())
                stop = end if stop < 0 else stop + len(closing)
                out.append(re.sub(r'[^\n]', ' ', text[at:stop]))
                at = stop
            elif text[at] == '"':
                stop = at + 1
                while stop < end and text[stop] != '"':
                    stop += 2 if text[stop] == '\\' else 1
                out.append(re.sub(r'[^\n]', ' ', text[at:stop + 1]))
                at = stop + 1
            elif text[at] == "'":
                char = re.match(r"'(\\.[^']*|[^\\'])'", text[at:at + 12])
                if char:
                    out.append(' ' * char.end())
                    at += char.end()
                else:  # a lifetime
                    out.append("'")
                    at += 1
            else:
                out.append(text[at])
                at += 1
    return ''.join(out)


def functions(path):
    """(lines, name, first line) of every function with a body in `path`."""
    code = code_mask(open(path, encoding='utf-8').read())
    found = []
    for match in FN.finditer(code):
        at = match.end()
        # The body starts at the first `{` outside parentheses and angle
        # brackets; a `;` first means a declaration without a body.
        depth = 0
        while at < len(code):
            c = code[at]
            if c in '(<[':
                depth += 1
            elif c in ')]' or (c == '>' and code[at - 1] != '-'):
                depth -= 1
            elif c == ';' and depth <= 0:
                at = -1
                break
            elif c == '{' and depth <= 0:
                break
            at += 1
        if at < 0 or at >= len(code):
            continue
        braces, stop = 0, at
        while stop < len(code):
            if code[stop] == '{':
                braces += 1
            elif code[stop] == '}':
                braces -= 1
                if braces == 0:
                    break
            stop += 1
        first = code.count('\n', 0, match.start()) + 1
        last = code.count('\n', 0, stop) + 1
        found.append((last - first + 1, match.group(1), first))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('dir')
    parser.add_argument('--top', type=int, default=10)
    parser.add_argument('--limit', type=int)
    args = parser.parse_args()
    rows = []
    for root, dirs, files in os.walk(args.dir):
        dirs.sort()
        for name in sorted(files):
            if name.endswith('.rs'):
                path = os.path.join(root, name)
                rows += [(lines, f'{path}:{line}', fn) for lines, fn, line in functions(path)]
    rows.sort(key=lambda row: (-row[0], row[1]))
    for lines, where, fn in rows[:args.top]:
        print(f'{lines:5} {fn} {where}')
    if args.limit is not None:
        over = [row for row in rows if row[0] > args.limit]
        print(f'{len(over)} of {len(rows)} functions over {args.limit} lines')
        sys.exit(1 if over else 0)


if __name__ == '__main__':
    main()
