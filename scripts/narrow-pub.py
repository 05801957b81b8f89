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

`--repair` then runs `cargo check --all-targets` in a loop: every item the
compiler says is private where it is used (a test, a bench, a public
signature) is widened back to `pub` with the modules that hold it, and once
everything compiles, every `pub` item `unreachable_pub` reports is narrowed.
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


def narrow_reexport(line, r, used):
    """`pub use a::{X, Y}` with only X used outside -> a public and a crate line."""
    path = r.group("path")
    brace = re.fullmatch(r"([\w:]+::)\{([^{}]*)\}", path.strip())
    if not brace:
        names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.split("::")[-1])
        if names and not any(n in used for n in names if n not in ("self", "as")):
            return line.replace("pub use", "pub(crate) use", 1), 1
        return line, 0
    prefix, body = brace.groups()
    names = [n.strip() for n in body.split(",") if n.strip()]
    keep = [n for n in names if n.split(" as ")[-1].strip() in used or n == "self"]
    drop = [n for n in names if n not in keep]
    if not drop:
        return line, 0
    indent = r.group(1)
    lines = []
    if keep:
        lines.append(f"{indent}pub use {prefix}{{{', '.join(keep)}}};")
    lines.append(f"{indent}pub(crate) use {prefix}{{{', '.join(drop)}}};")
    return "\n".join(lines), len(drop)


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
                line, n = narrow_reexport(line, r, used)
                changed += n
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


def check():
    import json
    import subprocess

    out = subprocess.run(
        ["cargo", "check", "--all-targets", "--keep-going", "--message-format=json"]
        + sys.argv[sys.argv.index("--repair") + 1 :],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    for line in out.splitlines():
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("reason") == "compiler-message":
            yield m["message"]


def read(path):
    return open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")


def write(path, lines):
    open(os.path.join(ROOT, path), "w", encoding="utf-8").write("\n".join(lines))


def widen_line(path, line_no):
    """`pub(crate)` -> `pub` at a line, and on the modules holding it."""
    if not path.startswith("src/"):
        return False
    lines = read(path)
    i = line_no - 1
    if "pub(crate) " not in lines[i]:
        return False
    lines[i] = lines[i].replace("pub(crate) ", "pub ", 1)
    write(path, lines)
    widen_modules(path)
    return True


def widen_modules(path):
    segs = module_path(path).split("::") if module_path(path) else []
    for k in range(len(segs), 0, -1):
        parent = "::".join(segs[: k - 1])
        cands = [f"src/{parent.replace('::', '/')}/mod.rs"] if parent else ["src/lib.rs"]
        if parent:
            cands.append(f"src/{parent.replace('::', '/')}.rs")
        for c in cands:
            if os.path.exists(os.path.join(ROOT, c)):
                lines = read(c)
                for i, l in enumerate(lines):
                    if re.match(rf"\s*pub\(crate\) mod {segs[k - 1]}\b", l):
                        lines[i] = l.replace("pub(crate) ", "pub ", 1)
                        write(c, lines)


def widen_by_name(kind, name, owner=None):
    """Finds `pub(crate) <kind> name` under src/ (within `owner`'s body for a field)."""
    done = False
    for f in rust_files("src"):
        rel = os.path.relpath(f, ROOT)
        lines = read(rel)
        if owner:
            starts = [i for i, l in enumerate(lines) if re.search(rf"\b(struct|enum) {owner}\b", l)]
            for s in starts:
                for i in range(s, min(s + 200, len(lines))):
                    if re.match(rf"\s*pub\(crate\) {name}\s*:", lines[i]):
                        done |= widen_line(rel, i + 1)
                    if lines[i].startswith("}"):
                        break
        else:
            pat = rf"\s*pub\(crate\) (?:async |const |unsafe )*(?:{kind}) {name}\b"
            for i, l in enumerate(lines):
                if re.match(pat, l):
                    done |= widen_line(rel, i + 1)
    return done


def repair_one(d):
    msg = d["message"]
    for c in d.get("children", []):
        if "only usable at visibility" in c["message"] or "defined here" in c["message"]:
            if any(widen_line(s["file_name"], s["line_start"]) for s in c["spans"]):
                return True
    for s in d["spans"]:
        if s.get("label") and "defined here" in s["label"]:
            if widen_line(s["file_name"], s["line_start"]):
                return True
    m = re.search(r"field `(\w+)` of (?:struct|enum variant) `(?:[\w:]*::)?(\w+)`", msg)
    if m:
        return widen_by_name("", m.group(1), owner=m.group(2))
    m = re.search(r"(method|associated function|function|struct|enum|type|trait|constant|static|module|unit struct|tuple struct|type alias) `(?:[\w:]*::)?(\w+)` is private", msg)
    if m:
        kind = {
            "method": "fn",
            "associated function": "fn",
            "function": "fn",
            "module": "mod",
            "constant": "const",
            "type": "struct|enum|type|trait",
            "type alias": "type",
        }.get(m.group(1), m.group(1).split()[-1])
        return widen_by_name(kind, m.group(2))
    m = re.search(r"`(\w+)` is only public within the crate", msg)
    if m:
        return widen_by_name("struct|enum|type|trait|fn|const|static|mod", m.group(1))
    return False


def repair():
    for round_ in range(40):
        diags = list(check())
        errors = [d for d in diags if d["level"] == "error" or (d.get("code") or {}).get("code") in ("private_interfaces", "private_bounds")]
        widened = sum(repair_one(d) for d in errors)
        if errors and not widened:
            for d in errors[:10]:
                print(d["rendered"], file=sys.stderr)
            sys.exit(1)
        if widened:
            print(f"round {round_}: widened {widened}", file=sys.stderr)
            continue
        narrowed = 0
        for d in diags:
            if (d.get("code") or {}).get("code") == "unreachable_pub":
                for s in d["spans"]:
                    if s["is_primary"] and s["file_name"].startswith("src/"):
                        lines = read(s["file_name"])
                        i = s["line_start"] - 1
                        col = s["column_start"] - 1
                        if lines[i][col : col + 4] == "pub ":
                            lines[i] = lines[i][:col] + "pub(crate) " + lines[i][col + 4 :]
                            write(s["file_name"], lines)
                            narrowed += 1
        print(f"round {round_}: narrowed {narrowed} unreachable", file=sys.stderr)
        if not narrowed:
            return


if __name__ == "__main__":
    if "--repair" in sys.argv:
        repair()
    else:
        main()
