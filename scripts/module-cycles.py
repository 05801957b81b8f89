#!/usr/bin/env python3
"""Lists the import cycles between hive's source files.

Each file under src/ is a node; an edge a -> b means a names a module path
that resolves to b (`use crate::x::y`, `crate::x::y::Z` inline, `super::`, and
a module's bare path to its own child: `session::open` in client/mod.rs).
Test code (`#[cfg(test)]` to the end of a file, `*tests.rs`) is left out:
tests may import anything. A cycle is a strongly connected component of
more than one file; the script prints each one and whether it crosses
top-level modules, and exits 1 when asked for a bound that the tree exceeds
(`--max N` cycles in all, `--across N` across top-level modules, 0 unless
given).

    scripts/module-cycles.py                     # list cycles
    scripts/module-cycles.py --max 2             # fail above two cycles or on
                                                 # any across top-level modules
    scripts/module-cycles.py --max 5 --across 4  # fail above five, or four across
"""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def module_of(path):
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def strip_tests(text):
    m = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod \w+\s*\{", text, re.M)
    if m:
        text = text[: m.start()]
    text = re.sub(r"#\[cfg\(test\)\]\s*\n\s*mod \w+;", "", text)
    # comments name paths too (docs): drop them
    text = re.sub(r"//[^\n]*", "", text)
    return text


def expand(tree):
    """`a::{b, c::{d}}` -> [a::b, a::c::d] (paths as lists)."""
    tree = tree.strip()
    i = tree.find("{")
    if i < 0:
        return [tree]
    prefix = tree[:i]
    body = tree[i + 1 : tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.strip():
            out += [prefix + e for e in expand(p)]
    return out


def main():
    files = {}
    for root, _, names in os.walk(SRC):
        for n in names:
            if n.endswith(".rs") and not n.endswith("tests.rs"):
                p = os.path.join(root, n)
                files[module_of(p)] = p
    edges = {m: set() for m in files}

    def resolve(mod, path):
        segs = [s.strip() for s in path.split("::") if s.strip()]
        if not segs:
            return None
        base = list(mod)
        # a non-mod.rs file's `super` is its directory's module
        if segs[0] == "crate":
            base, segs = [], segs[1:]
        elif segs[0] in ("super", "self"):
            while segs and segs[0] in ("super", "self"):
                if segs[0] == "super":
                    base = base[:-1]
                segs = segs[1:]
        else:
            return None
        full = base + segs
        for k in range(len(full), 0, -1):
            if tuple(full[:k]) in files:
                return tuple(full[:k])
        return None

    for mod, path in files.items():
        text = strip_tests(open(path, encoding="utf-8").read())
        paths = []
        for m in re.finditer(r"\buse\s+((?:crate|super|self)::[^;]+);", text):
            paths += expand(re.sub(r"\s+", "", m.group(1)).replace(" as ", ""))
        paths += re.findall(r"(?<![\w:])((?:crate|super)(?:::\w+)+)", text)
        # a module's bare path to its own child (`session::open` in client/mod.rs)
        kids = re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text, re.M)
        for k in kids:
            for m in re.finditer(r"\buse\s+(" + k + r"::[^;]+);", text):
                paths += ["self::" + q for q in expand(re.sub(r"\s+", "", m.group(1)))]
            paths += ["self::" + q for q in re.findall(r"(?<![\w:])(" + k + r"(?:::\w+)+)", text)]
        for p in paths:
            p = re.sub(r"\bas\w+$", "", p)
            t = resolve(mod, p)
            if t and t != mod and not (len(t) < len(mod) and mod[: len(t)] == t):
                edges[mod].add(t)

    # Tarjan's strongly connected components
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)

    across = 0
    for comp in sorted(sccs, key=len, reverse=True):
        tops = sorted({c[0] if c else "lib" for c in comp})
        cross = len(tops) > 1
        across += cross
        name = lambda c: "::".join(c) or "lib"
        print(f"{len(comp)} files{' (across ' + ', '.join(tops) + ')' if cross else ''}:")
        print("   " + " ".join(name(c) for c in comp))
    print(f"{len(sccs)} cycles, {across} across top-level modules")
    def bound(flag, default):
        if flag in sys.argv:
            return int(sys.argv[sys.argv.index(flag) + 1])
        return default

    if "--max" in sys.argv or "--across" in sys.argv:
        if len(sccs) > bound("--max", len(sccs)) or across > bound("--across", 0):
            sys.exit(1)


if __name__ == "__main__":
    main()
