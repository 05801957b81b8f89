#!/usr/bin/env python3
"""Narrows `pub` to `pub(crate)` where nothing outside the library names it.

The library's public API is what the binary, the benches, the examples, the
fuzz targets and the integration tests use. This script collects every
identifier those files contain and rewrites each `pub` item, field, module
and re-export in src/ whose name is not among them to `pub(crate)`. It errs
on the side of keeping things public (a common name used anywhere outside
keeps every item of that name public); `unreachable_pub` and the compiler
then finish the job:

    scripts/narrow-pub.py          # rewrite src/ in place
    cargo check --all-targets      # fix what a heuristic got wrong

Run it again after a change of API; it only ever narrows.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUTSIDE = ["tests", "benches", "examples", "fuzz", "src/main.rs"]
KEEP_FILES = {"src/main.rs"}


def rust_files(path):
    full = os.path.join(ROOT, path)
    if os.path.isfile(full):
        yield full
        return
    for root, dirs, names in os.walk(full):
        dirs[:] = [d for d in dirs if d not in ("target", "corpus", "artifacts")]
        for n in names:
            if n.endswith(".rs"):
                yield os.path.join(root, n)


def used_outside():
    words = set()
    for part in OUTSIDE:
        for f in rust_files(part):
            words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", open(f, encoding="utf-8").read()))
    return words


ITEM = re.compile(
    r"^(\s*)pub (?P<kw>(?:async |const |unsafe |extern \"C\" )*(?:fn|struct|enum|trait|type|const|static|mod|union)) (?P<name>[A-Za-z_][A-Za-z0-9_]*)"
)
FIELD = re.compile(r"^(\s*)pub (?P<name>[a-z_][a-z0-9_]*)\s*:")
REEXPORT = re.compile(r"^(\s*)pub use (?P<path>[^;]+);")


def expand(tree):
    """`a::{b, c::{d}}` -> [a::b, a::c::d]."""
    i = tree.find("{")
    if i < 0:
        return [tree]
    prefix, body = tree[:i], tree[i + 1 : tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [prefix + e for p in parts if p.strip() for e in expand(p.strip())]


def modules_outside():
    """Every module path (`app::state`) a path outside the library goes through."""
    mods = set()
    for part in OUTSIDE:
        for f in rust_files(part):
            text = re.sub(r"\s+", "", open(f, encoding="utf-8").read())
            paths = []
            for m in re.finditer(r"usehive::([^;]+);", text):
                paths += expand(m.group(1))
            paths += re.findall(r"hive::((?:\w+::)*\w+)", text)
            for path in paths:
                segs = path.split("::")
                for k in range(1, len(segs) + 1):
                    mods.add("::".join(segs[:k]))
    return mods


def module_path(rel):
    segs = rel[len("src/") : -len(".rs")].split("/")
    if segs[-1] in ("mod", "lib"):
        segs = segs[:-1]
    return "::".join(segs)


def narrow(text, used, mods, here):
    out = []
    changed = 0
    for line in text.split("\n"):
        m = ITEM.match(line) or FIELD.match(line)
        if m and m.groupdict().get("kw") == "mod":
            full = (here + "::" if here else "") + m.group("name")
            if full not in mods:
                line = line.replace("pub ", "pub(crate) ", 1)
                changed += 1
        elif m and m.group("name") not in used:
            line = line.replace("pub ", "pub(crate) ", 1)
            changed += 1
        else:
            r = REEXPORT.match(line)
            if r:
                names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", r.group("path").split("::")[-1])
                if names and not any(n in used for n in names if n not in ("self", "as")):
                    line = line.replace("pub use", "pub(crate) use", 1)
                    changed += 1
        out.append(line)
    return "\n".join(out), changed


def main():
    used = used_outside()
    mods = modules_outside()
    total = 0
    for f in rust_files("src"):
        rel = os.path.relpath(f, ROOT)
        if rel in KEEP_FILES:
            continue
        text = open(f, encoding="utf-8").read()
        new, n = narrow(text, used, mods, module_path(rel))
        if n:
            open(f, "w", encoding="utf-8").write(new)
            total += n
    print(f"narrowed {total} items", file=sys.stderr)


if __name__ == "__main__":
    main()
