#!/usr/bin/env bash
# Profile-guided optimisation of the packet engine: build it once instrumented
# (the `run_scenario` example), run it over bench/check_identical.py's scenario
# set (every scenario file, the bench scenarios, today's TCP, traces on; ~10 s),
# merge what it counted into target/pgo/engine.profdata and print that path.
# scripts/setup.sh and scripts/build-wheel.sh then build the engine with
# `-Cprofile-use`: the compiler lays out and inlines the hot paths (the event
# loop, a link's crossing, TCP's ack) by what the runs did. Results are
# bit-identical (only code layout changes, no arithmetic).
#
# Opt-in for now (TCPLAB_PGO=1): the profile is taken from the example binary,
# and in the Python module the engine crate's symbols carry another hash (cargo's
# crate metadata differs between the two builds), so the module's hot functions
# (`Sim::run` among them) find no profile data and gain nothing; the example
# gains 5–11 % (bench/NOTES.md, "Profile-guided builds"). Training through the
# module itself is the fix, not done yet.
#
# Prints nothing and exits 1 when it is not asked for (TCPLAB_PGO unset or not 1)
# or cannot be done — no llvm-profdata of the compiler's own LLVM (rustup's
# llvm-tools component) — and the caller builds without it, as before.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${TCPLAB_PGO:-0}" = 1 ] || exit 1

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
  # the merge tool must be the compiler's own LLVM version, which rustup ships
  rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
  echo "== profile-guided build skipped: no llvm-profdata for rustc's LLVM (rustup component add llvm-tools)" >&2
  exit 1
fi

out=target/pgo
# A profile newer than every source it was trained on is still this engine's
# (the wheel's build reuses the one setup.sh made)
if [ -f "$out/engine.profdata" ] && [ -z "$(find crates Cargo.lock Cargo.toml scenarios bench/scenarios \
      bench/check_identical.py -newer "$out/engine.profdata" -type f -print -quit)" ]; then
  echo "$PWD/$out/engine.profdata"
  exit 0
fi
raw="$out/raw"
rm -rf "$raw"
mkdir -p "$raw"
echo "== profile-guided build: the engine instrumented, then run over the identity scenarios" >&2
RUSTFLAGS="-Cprofile-generate=$PWD/$raw" \
  cargo build --release -q -p tcplab-engine --example run_scenario --target-dir "$out/gen" >&2
python3 bench/check_identical.py train "$out/gen/release/examples/run_scenario" >&2
"$profdata" merge -o "$out/engine.profdata" "$raw"
rm -rf "$raw"
echo "$PWD/$out/engine.profdata"
