#!/usr/bin/env bash
# Build a wheel of tcplab that installs anywhere its manylinux tag allows:
# the engine module, the example scenarios and sweeps (package data) and the
# linux engine's tcplab-emu binary (tcplab/bin/tcplab-emu in the wheel).
#   bash scripts/build-wheel.sh                   # manylinux tag of this machine's glibc
#   bash scripts/build-wheel.sh manylinux_2_28    # a lower tag: build where glibc <= 2.28 (docs/install.md)
# Writes dist/tcplab-<version>-cp311-abi3-<tag>.whl. maturin checks the module
# against the tag (its built-in auditwheel); this script checks tcplab-emu.
set -euo pipefail
cd "$(dirname "$0")/.."
compat=${1:-}
maturin=${MATURIN:-.venv/bin/maturin}
[ -x "$maturin" ] || maturin=maturin

echo "== building tcplab-emu"
cargo build --release -q -p tcplab-linuxemu
mkdir -p python/tcplab/bin
# stripped: the release profile keeps line tables for profiling (6 MB -> ~1 MB)
strip -o python/tcplab/bin/tcplab-emu target/release/tcplab-emu

# the newest glibc symbol version the binary needs must fit the wheel's tag
need=$(objdump -T python/tcplab/bin/tcplab-emu | grep -o 'GLIBC_2\.[0-9]*' | sed 's/GLIBC_2\.//' | sort -n | tail -1)
if [ -n "$compat" ]; then
  allowed=${compat##*_}
  if [ "$need" -gt "$allowed" ]; then
    echo "tcplab-emu needs glibc 2.$need, more than $compat allows: build on an older system (docs/install.md)" >&2
    exit 1
  fi
  tag=(--compatibility "$compat")
else
  tag=(--compatibility "manylinux_2_$need")
fi

echo "== building the wheel (${tag[*]})"
"$maturin" build --release --strip "${tag[@]}" --out dist
ls -la dist/*.whl
