#!/usr/bin/env bash
# Runs the memcheck subset (grad_tests/memcheck.rs, tests under `subset::`) under valgrind
# memcheck; exits non-zero on any invalid read/write, use of uninitialised memory or definite
# leak. CI runs the same through the `under_valgrind` test of that target.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
bin=$(cargo test --release --test memcheck --no-run --message-format=json 2>/dev/null \
  | grep -o '"executable":"[^"]*memcheck[^"]*"' | tail -1 | cut -d'"' -f4)
TAPEGRAD_UNDER_VALGRIND=1 RAYON_NUM_THREADS=1 valgrind --tool=memcheck --error-exitcode=1 \
  --leak-check=full --errors-for-leak-kinds=definite "$bin" subset:: --test-threads=1 "$@"
