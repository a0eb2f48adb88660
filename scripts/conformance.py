#!/usr/bin/env python3
"""Score visa-lint against the vendor's own example kernels.

Usage: scripts/conformance.py VENDOR_CHECKOUT [--visa-lint BIN] [--json]

VENDOR_CHECKOUT is a local checkout of furiosa-ai/furiosa-opt (the commit whose library crate
is still named `furiosa_visa_std`, dadf9ca); the script reads its `furiosa-visa-examples/`
crate. The vendor's tests are the ground truth:

- a kernel launched by a `#[should_panic(expected = "...")]` test breaks a rule the library
  asserts: visa-lint must report an error in it (in the kernel or a function it calls);
- a kernel launched by a passing test is one the library accepts: visa-lint must report no
  error in it;
- the other kernels (`#[device]` functions no test launches) are listed for review.

It prints the score and every disagreement, and exits 0 when both targets are met.
Only the Python standard library is needed. The kernels are found with a small lexer
(braces, strings, comments), which is enough for rustfmt-formatted code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


@dataclass
class Fn:
    name: str
    module: str  # crate-relative module path, `a::b`
    file: str
    start: int  # 1-based lines, inclusive
    end: int
    device: bool
    body: str = ""
    errors: list = field(default_factory=list)


def blank_strings_and_comments(text: str) -> str:
    """The text with comments and string/char literal contents replaced by spaces (newlines
    kept), so that braces and names inside them are not seen."""
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
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == '"' or (c == "r" and re.match(r'r#*"', text[i:i + 8]) and
                          (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            m = re.match(r'r(#*)"', text[i:i + 8])
            if m:
                close = '"' + m.group(1)
                j = text.find(close, i + len(m.group(0)))
                j = n if j < 0 else j + len(close)
            else:
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                j += 1
            out.append('"' + "".join(ch if ch == "\n" else " " for ch in text[i + 1:j - 1]) + '"')
            i = j
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:i + 12])
            j = i + (len(m.group(0)) if m else 1)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


ITEM = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?(mod|fn)\s+([A-Za-z_][A-Za-z0-9_]*)")


def scan_items(clean: str, raw: str, lo: int, hi: int, module: str, file: str, fns: list,
               uses: dict):
    """Functions and inline modules in clean[lo:hi], recursively; `uses` collects the
    `use furiosa_visa_examples::...` paths of each module (for the tests)."""
    i = lo
    while True:
        m = ITEM.search(clean, i, hi)
        if not m:
            break
        kind, name = m.group(1), m.group(2)
        # The item's body or `;`.
        j = m.end()
        depth = 0
        while j < hi and not (clean[j] in "{;" and depth == 0):
            if clean[j] in "([<":
                depth += 1
            elif clean[j] in ")]>" and depth > 0:
                depth -= 1
            j += 1
        if j >= hi or clean[j] == ";":
            i = j + 1
            continue
        close = matching_brace(clean, j)
        if kind == "mod":
            sub = f"{module}::{name}" if module else name
            for u in re.finditer(r"use\s+([^;]*);", clean[j:close]):
                uses.setdefault(sub, []).append(u.group(1))
            scan_items(clean, raw, j + 1, close, sub, file, fns, uses)
        else:
            attrs_from = clean.rfind("}", lo, m.start())
            attrs_from = max(attrs_from, clean.rfind(";", lo, m.start()), lo)
            attrs = raw[attrs_from:m.start()]
            fns.append(Fn(name=name, module=module, file=file, start=line_of(raw, m.start()),
                          end=line_of(raw, close), device="#[device" in attrs,
                          body=clean[j:close]))
        i = close + 1


def module_of(src: str, path: str) -> str:
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main", "mod"):
        rel = rel[:-1]
    return "::".join(rel)


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def rust_files(root: str):
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if f.endswith(".rs"):
                yield os.path.join(d, f)


@dataclass
class Test:
    file: str
    name: str
    line: int
    expected: str | None  # the should_panic message; None for a passing test
    ignored: bool  # `#[ignore]`d: not run by default, so not ground truth
    kernel: str  # the launched function's name
    imports: list  # `use furiosa_visa_examples::` paths in scope


TEST_ATTR = re.compile(r"#\[(?:tokio::)?test\b[^\]]*\]")


def scan_tests(tests_dir: str) -> list:
    out = []
    for path in rust_files(tests_dir):
        raw = read(path)
        clean = blank_strings_and_comments(raw)
        file_uses = re.findall(r"use\s+(furiosa_visa_examples::[^;]*);", clean)
        for m in TEST_ATTR.finditer(clean):
            fm = re.compile(r"\bfn\s+([A-Za-z_0-9]+)").search(clean, m.end())
            if not fm:
                continue
            attrs = raw[m.start():fm.start()]
            sp = re.search(r'should_panic\s*\(\s*expected\s*=\s*"((?:\\.|[^"\\])*)"', attrs)
            expected = sp.group(1) if sp else (None if "should_panic" not in attrs else "")
            open_at = clean.find("{", fm.end())
            close = matching_brace(clean, open_at)
            body = clean[open_at:close]
            # A test may expect the panic itself: `catch_unwind(..)` then `assert!(r.is_err())`.
            if expected is None and "catch_unwind" in body and re.search(r"\.is_err\(\)", body):
                msg = re.search(r'is_err\(\)\s*,\s*"((?:\\.|[^"\\])*)"', raw[open_at:close])
                expected = msg.group(1) if msg else "(caught with catch_unwind)"
            # Imports of enclosing inline modules: every `use` before the test in the file
            # (the vendor's tests keep one inline module per group).
            mod_start = clean.rfind("\nmod ", 0, m.start())
            mod_uses = re.findall(r"use\s+(furiosa_visa_examples::[^;]*);",
                                  clean[max(mod_start, 0):m.start()]) if mod_start >= 0 else []
            for lm in re.finditer(r"\blaunch\s*\(\s*([A-Za-z_][A-Za-z_0-9:]*)", body):
                ignored = bool(re.search(r"#\[ignore\b|cfg_attr\([^]]*\bignore\b", attrs))
                out.append(Test(os.path.relpath(path, os.path.dirname(tests_dir)),
                                fm.group(1), line_of(raw, fm.start()), expected, ignored,
                                lm.group(1), mod_uses + file_uses))
    return out


def resolve(test: Test, fns_by_name: dict):
    """The `#[device]` function a test launches: by name, narrowed by the test's imports."""
    name = test.kernel.split("::")[-1]
    cands = [f for f in fns_by_name.get(name, []) if f.device] or fns_by_name.get(name, [])
    if len(cands) <= 1:
        return cands[0] if cands else None
    mods = []
    for u in test.imports:
        path = u.replace("furiosa_visa_examples::", "", 1).replace(" ", "")
        mods.append(re.sub(r"::(\*|\{.*\}|[A-Za-z_0-9]+)$", "", path))
        mods.append(re.sub(r"::\*$", "", path))
    for m in mods:
        hit = [f for f in cands if f.module == m]
        if len(hit) == 1:
            return hit[0]
    return cands[0]


def run_visa_lint(binary: str, crate: str) -> list:
    proc = subprocess.run([binary, "--format", "json", os.path.join(crate, "src")],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"visa-lint failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)["diagnostics"]


def find_binary(arg: str | None) -> str:
    if arg:
        return arg
    for profile in ("release", "debug"):
        cand = os.path.join(REPO, "target", profile, "visa-lint")
        if os.path.exists(cand):
            return cand
    subprocess.run(["cargo", "build", "--release", "--bin", "visa-lint"], cwd=REPO, check=True)
    return os.path.join(REPO, "target", "release", "visa-lint")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vendor", help="a checkout of furiosa-ai/furiosa-opt")
    ap.add_argument("--visa-lint", help="the visa-lint binary (default: target/release)")
    ap.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = ap.parse_args()
    crate = os.path.join(args.vendor, "furiosa-visa-examples")
    if not os.path.isdir(os.path.join(crate, "src")):
        sys.exit(f"{crate}/src: not found (give the root of a furiosa-opt checkout)")
    src = os.path.join(crate, "src")

    fns, uses = [], {}
    for path in rust_files(src):
        raw = read(path)
        clean = blank_strings_and_comments(raw)
        scan_items(clean, raw, 0, len(clean), module_of(src, path), path, fns, uses)
    by_name = {}
    for f in fns:
        by_name.setdefault(f.name, []).append(f)

    for d in run_visa_lint(find_binary(args.visa_lint), crate):
        if d["severity"] != "error":
            continue
        path = os.path.abspath(d["file"])
        inner = [f for f in fns if os.path.abspath(f.file) == path
                 and f.start <= d["line"] <= f.end]
        if inner:
            min(inner, key=lambda f: f.end - f.start).errors.append(d)

    def errors_of(f: Fn, seen=None) -> list:
        """Errors in `f` and in the functions of the crate it calls (by name; a function of
        the same file wins over same-named ones elsewhere, e.g. two `reduce_over_cluster`)."""
        seen = seen if seen is not None else set()
        if id(f) in seen:
            return []
        seen.add(id(f))
        errs = list(f.errors)
        for callee in set(re.findall(r"\b([a-z_][a-z_0-9]*)\s*(?:::<[^(]*>)?\s*\(", f.body)):
            candidates = by_name.get(callee, [])
            local = [g for g in candidates if g.file == f.file]
            for g in local or candidates:
                if g is not f and not g.device:
                    errs += errors_of(g, seen)
        return errs

    tests = scan_tests(os.path.join(crate, "tests"))
    launched, panic_rows, pass_rows, ignored_rows = set(), [], [], []
    for t in tests:
        k = resolve(t, by_name)
        if k is None:
            print(f"note: {t.file}:{t.line} {t.name} launches unknown `{t.kernel}`",
                  file=sys.stderr)
            continue
        codes = sorted({d["code"] for d in errors_of(k)})
        if t.ignored:
            ignored_rows.append((t, k, codes))
            continue
        launched.add(id(k))
        (panic_rows if t.expected is not None else pass_rows).append((t, k, codes))

    untested = [(f, sorted({d["code"] for d in errors_of(f)}))
                for f in fns if f.device and id(f) not in launched]

    def where(k: Fn) -> str:
        return f"{os.path.relpath(k.file, crate)}:{k.start} {k.module}::{k.name}"

    caught = [r for r in panic_rows if r[2]]
    false = [r for r in pass_rows if r[2]]
    flagged = [u for u in untested if u[1]]
    if args.json:
        print(json.dumps({
            "should_panic": {"total": len(panic_rows), "caught": len(caught)},
            "passing": {"total": len(pass_rows), "with_error": len(false)},
            "untested": {"total": len(untested), "with_error": len(flagged)},
        }))
    else:
        print("Should-panic kernels without an error (missed):")
        for t, k, _ in panic_rows:
            if not _:
                print(f"  {where(k)}  ({t.file} {t.name}: \"{t.expected}\")")
        print("Should-panic kernels caught (panic message -> codes):")
        for t, k, codes in caught:
            print(f"  {k.name}: \"{t.expected}\" -> {', '.join(codes)}")
        print("Kernels of passing tests with an error (false errors):")
        for t, k, codes in false:
            print(f"  {where(k)}  {', '.join(codes)}  ({t.file} {t.name})")
        print("Untested kernels (no test, or only #[ignore]d ones) with an error (review each):")
        for f, codes in flagged:
            print(f"  {where(f)}  {', '.join(codes)}")
        print()
        print(f"should-panic kernels caught:       {len(caught)} / {len(panic_rows)}")
        print(f"passing-test kernels with an error: {len(false)} / {len(pass_rows)}")
        print(f"untested kernels with an error:     {len(flagged)} / {len(untested)}")
    return 0 if len(caught) == len(panic_rows) and not false else 1


if __name__ == "__main__":
    sys.exit(main())
