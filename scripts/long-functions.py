#!/usr/bin/env python3
"""Lists Rust functions longer than N lines (default 80) under src/:
`scripts/long-functions.py [N] [dir]` (run from the repository root).
Counts from the `fn` line to its closing brace (doc comments and attributes excluded),
skipping braces inside strings, chars and comments."""
import os, re, sys
limit = int(sys.argv[1]) if len(sys.argv) > 1 else 80
root = sys.argv[2] if len(sys.argv) > 2 else "src"
fn_re = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"[^"]*"\s+)?fn\s+(\w+)')

def strip(line, state):
    """Returns the line with strings/comments blanked; state carries block comments and raw strings."""
    out = []; i = 0; n = len(line)
    while i < n:
        if state['block']:
            j = line.find('*/', i)
            if j < 0: return ''.join(out), state
            state['block'] = False; i = j + 2; continue
        if state['raw'] is not None:
            j = line.find('"' + '#' * state['raw'], i)
            if j < 0: return ''.join(out), state
            i = j + 1 + state['raw']; state['raw'] = None; continue
        if state['str']:
            if line[i] == '\\': i += 2; continue
            if line[i] == '"': state['str'] = False
            i += 1; continue
        c = line[i]
        if line.startswith('//', i): break
        if line.startswith('/*', i): state['block'] = True; i += 2; continue
        m = re.match(r'b?r(#*)"', line[i:])
        if m and (i == 0 or not (line[i-1].isalnum() or line[i-1] == '_')):
            state['raw'] = len(m.group(1)); i += m.end(); continue
        if c == '"': state['str'] = True; i += 1; continue
        if c == "'":
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", line[i:])
            if m: i += m.end(); continue
        out.append(c); i += 1
    return ''.join(out), state

rows = []
for dp, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith('.rs'): continue
        p = os.path.join(dp, f)
        lines = open(p, encoding='utf-8').read().split('\n')
        state = {'block': False, 'raw': None, 'str': False}
        code = []
        for l in lines:
            s, state = strip(l, state); code.append(s)
        stack = []  # (name, start, depth_at_open)
        depth = 0
        pending = None
        for no, s in enumerate(code, 1):
            m = fn_re.match(s)
            if m and pending is None: pending = (m.group(7), no)
            for ch in s:
                if ch == '{':
                    depth += 1
                    if pending: stack.append((pending[0], pending[1], depth)); pending = None
                elif ch == '}':
                    if stack and stack[-1][2] == depth:
                        name, start, _ = stack.pop()
                        length = no - start + 1
                        if length > limit: rows.append((length, p, start, name))
                    depth -= 1
                elif ch == ';' and pending: pending = None  # trait method without body
for length, p, start, name in sorted(rows, reverse=True):
    print(f"{length:4} {p}:{start} {name}")
