#!/usr/bin/env bash
# Build a wheel of tcplab that installs anywhere its manylinux tag allows:
# the engine module, the example scenarios and sweeps (package data) and the
# linux engine's tcplab-emu binary (tcplab/bin/tcplab-emu in the wheel).
#   bash scripts/build-wheel.sh                   # manylinux tag of this machine's glibc
#   bash scripts/build-wheel.sh manylinux_2_28    # a lower tag, linked by zig (pip install ziglang)
# Writes dist/tcplab-<version>-cp311-abi3-<tag>.whl. maturin checks the module
# against the tag (its built-in auditwheel); this script checks tcplab-emu.
set -euo pipefail
cd "$(dirname "$0")/.."
compat=${1:-}
maturin=${MATURIN:-.venv/bin/maturin}
[ -x "$maturin" ] || maturin=maturin
python=${PYTHON:-.venv/bin/python}
[ -x "$python" ] || python=$(command -v python3)
python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")"  # absolute, venv kept

glibc_needed() {  # the newest GLIBC_2.N symbol version a binary needs: N
  objdump -T "$1" | grep -o 'GLIBC_2\.[0-9]*' | sed 's/GLIBC_2\.//' | sort -n | tail -1
}

zig=()
emu=target/release/tcplab-emu
if [ -n "$compat" ] && "$python" -m ziglang version >/dev/null 2>&1; then
  # link against glibc 2.<N> whatever this machine's is: zig ships the old symbol versions
  allowed=${compat##*_}
  tools=$(mktemp -d)
  trap 'rm -rf "$tools"' EXIT
  printf '#!/bin/sh\nexec %q -m ziglang "$@"\n' "$python" > "$tools/zig"
  printf '#!/bin/sh\nexec %q -m ziglang cc -target x86_64-linux-gnu.2.%s "$@"\n' \
    "$python" "$allowed" > "$tools/zigcc"
  chmod +x "$tools/zig" "$tools/zigcc"
  export PATH="$tools:$PATH"
  echo "== building tcplab-emu (zig, glibc 2.$allowed)"
  CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$tools/zigcc" \
    cargo build --release -q -p tcplab-linuxemu --target x86_64-unknown-linux-gnu
  emu=target/x86_64-unknown-linux-gnu/release/tcplab-emu
  zig=(--zig)
else
  echo "== building tcplab-emu"
  cargo build --release -q -p tcplab-linuxemu
fi
mkdir -p python/tcplab/bin
# stripped: the release profile keeps line tables for profiling (6 MB -> ~1 MB)
strip -o python/tcplab/bin/tcplab-emu "$emu"

# the newest glibc symbol version the binary needs must fit the wheel's tag
need=$(glibc_needed python/tcplab/bin/tcplab-emu)
if [ -n "$compat" ]; then
  allowed=${compat##*_}
  if [ "$need" -gt "$allowed" ]; then
    echo "tcplab-emu needs glibc 2.$need, more than $compat allows: pip install ziglang, or build on an older system (docs/install.md)" >&2
    exit 1
  fi
  tag=(--compatibility "$compat")
else
  tag=(--compatibility "manylinux_2_$need")
fi

# profile-guided, as scripts/setup.sh builds it (scripts/pgo.sh; its profile reused when current)
pgo=()
if profile=$(bash scripts/pgo.sh); then
  pgo=(env RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$profile" CARGO_TARGET_DIR=target/pgo/use)
fi
echo "== building the wheel (${tag[*]} ${zig[*]}${pgo[*]:+ profile-guided})"
# the bindings' build script bundles this tcplab-emu instead of building its own (crates/py/build.rs)
TCPLAB_EMU_PREBUILT="$PWD/python/tcplab/bin/tcplab-emu" "${pgo[@]}" \
  "$maturin" build --release --strip "${zig[@]}" "${tag[@]}" --out dist
ls -la dist/*.whl
