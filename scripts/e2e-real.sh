#!/usr/bin/env bash
# The one command for hive's opt-in end-to-end tests against the REAL agent CLIs, offline:
# installs the pinned CLIs (scripts/install-agents.sh), then runs tests/e2e_real.rs, whose
# tests start the scripted mock model (tests/mockllm/) on 127.0.0.1 and drive each CLI
# directly and through `hive run` (and the console in a private tmux server).
#
#   scripts/e2e-real.sh                     # everything
#   scripts/e2e-real.sh hive_claude         # a cargo test name filter
#   HIVE_AGENTS_DIR=/opt/agents scripts/e2e-real.sh
#
# Needs node + npm (first install ~1 min, ~1.2 GB), python3, git; tmux for console_*.
set -euo pipefail
cd "$(dirname "$0")/.."

export HIVE_AGENTS_DIR="${HIVE_AGENTS_DIR:-$HOME/.cache/hive-agents}"
scripts/install-agents.sh "$HIVE_AGENTS_DIR"

# One test at a time: each starts a node-based CLI; in parallel they starve a small machine.
exec cargo test --test e2e_real -- --ignored --test-threads=1 "$@"
