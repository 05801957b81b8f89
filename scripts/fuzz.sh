#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 60), at the lowest
# CPU priority, with the corpus seeded from tests/fixtures.
#
#   scripts/fuzz.sh SECONDS [TARGET...]
#
# Installs what it needs: cargo-fuzz from crates.io (`cargo install cargo-fuzz
# --locked`) when it is missing. A nightly toolchain is used when there is
# one; without it (a fresh machine, or one that cannot download toolchains)
# the stable one runs with RUSTC_BOOTSTRAP=1, with no sanitizer (`-s none`,
# which needs no nightly std). Crashes land in
# fuzz/artifacts/<target>/: copy each into tests/fixtures/fuzz/<target>/ (and fix
# it) so tests/services/fuzz_regressions.rs keeps it fixed. A summary (executions and
# findings per target) is printed and kept in fuzz/last-run.txt (rewritten
# when all targets run, appended to when some are named). FUZZ_TARGET_DIR
# builds elsewhere than fuzz/target (a machine whose checkouts share one
# target directory per worktree).
set -euo pipefail

secs=${1:-60}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz (crates.io)"
    nice -n 19 cargo install cargo-fuzz --locked
fi

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=(+nightly)
else
    toolchain=()
    export RUSTC_BOOTSTRAP=1
fi

targets=("$@")
summary="$root/fuzz/last-run.txt"
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo "${toolchain[@]}" fuzz list)
    : > "$summary"
fi

python3 "$root/scripts/fuzz_seed.py" "$root/tests/fixtures" "$root/fuzz/seeds"
# No sanitizer (safe Rust: panics are what we look for, and it runs ~2x
# faster); debug assertions on, so overflows panic.
flags=(-s none -a)
tdir=${FUZZ_TARGET_DIR:-$root/fuzz/target}
flags+=(--target-dir "$tdir")
# FUZZ_NO_BUILD=1 reuses the binaries of the last build.
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
    nice -n 19 cargo "${toolchain[@]}" fuzz build "${flags[@]}"
fi
bin="$tdir/$(rustc -vV | sed -n 's/^host: //p')/release"

mkdir -p logs
status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "seeds/$t"
    echo "== $t (${secs}s)"
    set +e
    mkdir -p "artifacts/$t"
    nice -n 19 "$bin/$t" "corpus/$t" "seeds/$t" \
        -artifact_prefix="artifacts/$t/" -max_total_time="$secs" -timeout=10 \
        -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 >"logs/$t.log" 2>&1
    rc=$?
    set -e
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$' | tail -1)
    crashes=$(find "artifacts/$t" -type f 2>/dev/null | wc -l)
    line="$t: ${execs:-?} executions, exit $rc, $crashes artifact(s) in fuzz/artifacts/$t"
    echo "$line" | tee -a "$summary"
    [ "$rc" -eq 0 ] || status=1
done
exit $status
