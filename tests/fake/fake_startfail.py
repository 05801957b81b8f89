#!/usr/bin/env python3
"""An agent that refuses to start, as codex does with an option it no longer
supports: its own error on stderr, then the frames of a stripped Rust
backtrace (`RUST_BACKTRACE=1` in the user's environment), and exit 1.

Issue 34 item 4: the pane must show the error line, not the frames.
"""
import sys

sys.stderr.write('Error: approval_policy = "untrusted" is no longer supported\n')
sys.stderr.write("\n")
sys.stderr.write("Stack backtrace:\n")
for i in range(24):
    sys.stderr.write(f"  {i:>2}: <unknown>\n")
sys.stderr.flush()
sys.exit(1)
