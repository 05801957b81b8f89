#!/usr/bin/env bash
# Install the real agent CLIs used by hive's opt-in end-to-end tests (tests/e2e_real.rs).
#
# Exact versions are pinned; the install goes into a cache directory outside the repo
# (default ~/.cache/hive-agents, override with HIVE_AGENTS_DIR or the first argument).
# Idempotent: npm runs only when a pinned package is missing or at another version.
# Prints the installed versions. Afterwards the binaries are in $DIR/node_modules/.bin.
#
#   scripts/install-agents.sh                 # -> ~/.cache/hive-agents
#   HIVE_AGENTS_DIR=/opt/agents scripts/install-agents.sh
set -euo pipefail

DIR="${1:-${HIVE_AGENTS_DIR:-$HOME/.cache/hive-agents}}"

# "<directory under node_modules> <version it must report> <npm install spec>"
# The native packages are optional dependencies of their launchers; naming them keeps npm
# from silently skipping them and pins them to the launcher's version.
PINNED=(
  "@anthropic-ai/claude-code 2.1.330 @anthropic-ai/claude-code@2.1.330"
  "@anthropic-ai/claude-code-linux-x64 2.1.330 @anthropic-ai/claude-code-linux-x64@2.1.330"
  "@openai/codex 0.169.0 @openai/codex@0.169.0"
  "@openai/codex-linux-x64 0.169.0-linux-x64 @openai/codex-linux-x64@npm:@openai/codex@0.169.0-linux-x64"
  "@google/gemini-cli 0.61.0 @google/gemini-cli@0.61.0"
  "@mariozechner/pi-coding-agent 0.73.1 @mariozechner/pi-coding-agent@0.73.1"
  "@zed-industries/claude-code-acp 0.16.2 @zed-industries/claude-code-acp@0.16.2"
  "@zed-industries/codex-acp 0.16.0 @zed-industries/codex-acp@0.16.0"
  "@zed-industries/codex-acp-linux-x64 0.16.0 @zed-industries/codex-acp-linux-x64@0.16.0"
)

need() { command -v "$1" >/dev/null 2>&1 || { echo "install-agents: '$1' not found (node >= 20 and npm are required)" >&2; exit 1; }; }
need node
need npm

version_of() {  # version_of <package dir>: the version in its package.json, or nothing
  node -p "require(process.argv[1]).version" "$DIR/node_modules/$1/package.json" 2>/dev/null || true
}

missing() {  # prints the install specs whose package is absent or at another version
  local line dir want spec
  for line in "${PINNED[@]}"; do
    read -r dir want spec <<<"$line"
    [ "$(version_of "$dir")" = "$want" ] || echo "$spec"
  done
}

mapfile -t TODO < <(missing)
if [ "${#TODO[@]}" -eq 0 ]; then
  echo "install-agents: all pinned CLIs present in $DIR"
else
  echo "install-agents: installing ${#TODO[@]} package(s) into $DIR"
  mkdir -p "$DIR"
  [ -f "$DIR/package.json" ] || echo '{"name": "hive-agents", "private": true}' >"$DIR/package.json"
  # Install the whole pinned set at once so npm resolves one consistent tree.
  # (claude-code declares engines.node >= 22; its native binary does not use node, so the
  # EBADENGINE warning under node 20 is harmless.)
  specs=()
  for line in "${PINNED[@]}"; do read -r _ _ spec <<<"$line"; specs+=("$spec"); done
  npm install --prefix "$DIR" --save-exact --no-fund --no-audit --loglevel=error "${specs[@]}"
  mapfile -t LEFT < <(missing)
  if [ "${#LEFT[@]}" -ne 0 ]; then
    echo "install-agents: still missing after npm install: ${LEFT[*]}" >&2
    exit 1
  fi
fi

BIN="$DIR/node_modules/.bin"
for b in claude codex gemini pi claude-code-acp codex-acp; do
  [ -x "$BIN/$b" ] || { echo "install-agents: $BIN/$b missing" >&2; exit 1; }
done
[ -x "$DIR/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp" ] ||
  { echo "install-agents: codex-acp native binary missing" >&2; exit 1; }

first_line() { "$@" 2>&1 | grep -m1 . || true; }
echo "installed in $DIR (binaries: $BIN):"
echo "  claude           $(first_line "$BIN/claude" --version)"
echo "  codex            $(first_line "$BIN/codex" --version)"
echo "  gemini           $(first_line "$BIN/gemini" --version)"
echo "  pi               $("$BIN/pi" --version 2>&1 | tail -n1)"
echo "  claude-code-acp  $(version_of @zed-industries/claude-code-acp)"
echo "  codex-acp        $(version_of @zed-industries/codex-acp)"
