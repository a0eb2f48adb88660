#!/usr/bin/env python3
"""The longest functions of the engine and the surfaces, in lines (signature to closing brace).

    python3 scripts/fn_sizes.py [--over N] [--top K] [PATH ...]

Counts every `fn` with a body in the `.rs` files under PATH (default: analysis/src and
server/src), test modules included, and prints those longer than N lines (default 100), the
longest first, then how many there are. Strings, characters and comments are skipped when
braces are matched; a function is measured from the line of `fn` to the line of its closing
brace.
"""

import argparse
import pathlib
import re
import sys

FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def code_only(text):
    """`text` with strings, characters and comments blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i : j + 1]))
            i = j + 1
        elif c == "'":
            # A character literal ('a', '\n', '{'), not a lifetime ('db).
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    text = code_only(path.read_text(encoding="utf-8", errors="replace"))
    line_of = lambda k: text.count("\n", 0, k) + 1
    for m in FN.finditer(text):
        # The body's opening brace, unless a `;` ends the declaration first.
        j, depth = m.end(), 0
        while j < len(text):
            ch = text[j]
            if ch in "(<[":
                depth += 1
            elif ch in ")>]":
                depth -= 1
            elif ch == ";" and depth <= 0:
                j = -1
                break
            elif ch == "{" and depth <= 0:
                break
            j += 1
        if j < 0 or j >= len(text):
            continue
        k, braces = j, 0
        while k < len(text):
            if text[k] == "{":
                braces += 1
            elif text[k] == "}":
                braces -= 1
                if braces == 0:
                    break
            k += 1
        yield m.group(1), line_of(m.start()), line_of(k) - line_of(m.start()) + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--over", type=int, default=100)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("paths", nargs="*", default=["analysis/src", "server/src"])
    args = ap.parse_args()
    found = []
    for root in args.paths:
        root = pathlib.Path(root)
        files = [root] if root.is_file() else sorted(root.rglob("*.rs"))
        for f in files:
            for name, line, size in functions(f):
                found.append((size, f"{f}:{line}", name))
    long = sorted((x for x in found if x[0] > args.over), reverse=True)
    for size, at, name in long[: args.top]:
        print(f"{size:5}  {name:32} {at}")
    print(f"{len(long)} functions longer than {args.over} lines (of {len(found)})")


if __name__ == "__main__":
    sys.exit(main())
