#!/usr/bin/env bash
# Set up tcplab on a fresh machine: a virtualenv in .venv with the Python
# dependencies and the Rust engine built by maturin (release mode).
#   bash scripts/setup.sh          # for using tcplab
#   bash scripts/setup.sh test     # also the test dependencies and ns-2 (the oracle)
set -euo pipefail
cd "$(dirname "$0")/.."
want_tests=${1:-}

if [ "$want_tests" = "test" ] && { ! command -v ns >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
                                  || ! command -v valgrind >/dev/null 2>&1; }; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  if ! command -v ns >/dev/null 2>&1; then
    echo "== installing ns-2 2.35 (Debian package ns2), the correctness oracle"
    apt-get install -y -qq ns2 >/dev/null
  fi
  if ! command -v valgrind >/dev/null 2>&1; then
    # the cost guard counts instructions per packet (bench/cost_guard.py)
    echo "== installing valgrind for the cost guard"
    apt-get install -y -qq valgrind >/dev/null
  fi
  if ! command -v chromedriver >/dev/null 2>&1; then
    # the HTML report's test opens it in a real browser (tests/test_report_browser.py)
    echo "== installing headless Chromium (Debian chromium, chromium-driver) for the report's browser test"
    apt-get install -y -qq chromium chromium-driver >/dev/null \
      || echo "== Chromium could not be installed; the browser test will be skipped"
  fi
fi

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "tcplab needs Python 3.11 or newer (it reads TOML with tomllib); python3 here is $(python3 --version 2>&1)." >&2
  echo "Install python3.11 (or newer) and run this again." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  python3 -m venv .venv
fi
echo "== installing Python dependencies"
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q maturin
extras=""
[ "$want_tests" = "test" ] && extras="--extras test"
# The linux engine's emulator and bulk sender/receiver (a separate binary:
# it runs in network namespaces at real-time priority); found by
# tcplab.backends.linux at target/release/tcplab-emu. Built first, so that the
# bindings' build script bundles it instead of building it again (crates/py/build.rs).
echo "== building tcplab-emu (the linux engine's user-space bottleneck)"
cargo build --release -q -p tcplab-linuxemu
# With TCPLAB_PGO=1, profile-guided: the engine is built instrumented, run over
# the identity scenarios, and built again laid out by what they did
# (scripts/pgo.sh, which says why it is not the default yet; results identical).
# Its own target directory keeps target/release a plain build (cargo test, the
# cost guard and the identity check use that one).
pgo=()
if profile=$(bash scripts/pgo.sh); then
  pgo=(env RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$profile" CARGO_TARGET_DIR=target/pgo/use)
fi
echo "== building the Rust engine (maturin, release${pgo[*]:+, profile-guided})"
TCPLAB_EMU_PREBUILT="$PWD/target/release/tcplab-emu" \
  "${pgo[@]}" .venv/bin/maturin develop --release $extras -q 2>&1 | grep -v "^📦\|^✏️\|^🛠" || true
if [ "$want_tests" = "test" ]; then
  # Ray is optional (tcplab[ray]); the tests run a small sweep through a local
  # Ray instance when it is there and skip, visibly, when it is not.
  .venv/bin/pip install -q "ray>=2.9" || echo "== Ray could not be installed; its test will be skipped"
fi
.venv/bin/python -c "import tcplab._core as c; print('tcplab engine', c.ENGINE_VERSION, 'build', c.BUILD_ID, c.BUILD_GIT, 'ready;', c.RUSTC_VERSION)"
