#!/usr/bin/env bash
# The fuzz campaign (issue 26): every target of fuzz/fuzz_targets under libFuzzer, built in
# release with debug assertions and overflow checks (`cargo fuzz build -O -a`), each in its own
# directory, then corpus minimisation and a markdown table of the round.
#
#   tools/fuzz_campaign.sh [target ...]            # default: every target
#
# Environment (defaults in brackets):
#   RUNS      executions per target (libFuzzer -runs) [1000000]
#   MAX_TIME  time cap per target in seconds (-max_total_time) [900]
#   JOBS      targets fuzzed at once, one process each [2]
#   OUT       campaign directory [fuzz/campaign-<UTC time>]
#   KEEP      minimised corpus files copied back to fuzz/corpus/<target>/ [40]
#   SANITIZER cargo fuzz -s [leak]: LeakSanitizer alone reports leaks (interp ~1/3 slower);
#             `address` adds AddressSanitizer (~3x slower); `none` drops leak detection
#   RSS_MB    libFuzzer -rss_limit_mb (an out-of-memory report above it) [2048]
#   NICE      nice level of the fuzzers [10]
#   CARGO_TARGET_DIR is honoured (the build is shared by every target).
#
# Each target runs as `<bin> -runs=RUNS -max_total_time=MAX_TIME OUT/<t>/corpus
# fuzz/corpus/<t>` (the checked-in corpus seeds it, read-only) with its artifacts (crash-*,
# leak-*, oom-*, timeout-*, slow-unit-*) in OUT/<t>/artifacts/ and its log in OUT/<t>/log. A
# target stops at its first finding (the table says which). Afterwards each corpus is
# minimised with `-merge=1` (what `cargo fuzz cmin` runs) into OUT/<t>/min and up to KEEP of its
# files, spread evenly over its size order, are copied to fuzz/corpus/<t>/ (existing files are
# kept: they are regression inputs). Exit status 1 when any target reported a finding.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
RUNS=${RUNS:-1000000}
MAX_TIME=${MAX_TIME:-900}
JOBS=${JOBS:-2}
KEEP=${KEEP:-40}
SANITIZER=${SANITIZER:-leak}
RSS_MB=${RSS_MB:-2048}
NICE=${NICE:-10}
OUT=${OUT:-$PWD/campaign-$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    targets=()
    for f in fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi
echo "==> building ${targets[*]} (-O -a -s $SANITIZER)"
RUSTC_BOOTSTRAP=1 nice -n "$NICE" cargo fuzz build -O -a -s "$SANITIZER" >"$OUT/build.log" 2>&1 \
    || { tail -30 "$OUT/build.log"; exit 2; }
tdir=${CARGO_TARGET_DIR:-$PWD/target}
bindir="$tdir/x86_64-unknown-linux-gnu/release"
commit=$(git -C .. rev-parse --short HEAD)$(git -C .. diff --quiet HEAD -- src fuzz || echo "+dirty")

run_one() {
    local t=$1 d="$OUT/$1"
    mkdir -p "$d/corpus" "$d/artifacts"
    local start=$SECONDS rc=0
    nice -n "$NICE" "$bindir/$t" -runs="$RUNS" -max_total_time="$MAX_TIME" \
        -rss_limit_mb="$RSS_MB" -timeout=60 -print_final_stats=1 \
        -artifact_prefix="$d/artifacts/" "$d/corpus" "corpus/$t" >"$d/log" 2>&1 || rc=$?
    echo "$((SECONDS - start)) $rc" >"$d/result"
    echo "<== $t: exit $rc after $((SECONDS - start)) s"
}
export -f run_one
export OUT RUNS MAX_TIME RSS_MB NICE bindir
# A sanitizer's allocator aborts on a request above its maximum (1 TiB for LeakSanitizer)
# where the system allocator returns null, which tapegrad reports as an error value
# ("out of memory allocating ..."): let it return null, as the library runs outside the fuzzer.
export LSAN_OPTIONS=allocator_may_return_null=1${LSAN_OPTIONS:+:$LSAN_OPTIONS}
export ASAN_OPTIONS=allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}
echo "==> fuzzing ${#targets[@]} targets, $JOBS at once, RUNS=$RUNS MAX_TIME=$MAX_TIME s, in $OUT"
printf '%s\n' "${targets[@]}" | xargs -P "$JOBS" -I{} bash -c 'run_one {}'

echo "==> minimising"
for t in "${targets[@]}"; do
    d="$OUT/$t"
    rm -rf "$d/min" && mkdir -p "$d/min"
    nice -n "$NICE" "$bindir/$t" -merge=1 -rss_limit_mb="$RSS_MB" -timeout=60 \
        "$d/min" "$d/corpus" "corpus/$t" >"$d/merge.log" 2>&1 || echo "merge of $t failed (see $d/merge.log)"
    mapfile -t files < <(cd "$d/min" && ls -S -r)
    n=${#files[@]}
    k=$((n < KEEP ? n : KEEP))
    for ((i = 0; i < k; i++)); do
        cp -n "$d/min/${files[$((i * n / k))]}" "corpus/$t/"
    done
done

bad=0
echo
echo "Fuzz campaign on $commit ($(date -u +%F), -O -a -s $SANITIZER, RUNS=$RUNS, MAX_TIME=$MAX_TIME s, $JOBS at once, $(nproc) cores)"
echo
echo "| target | executions | seconds | exec/s | crashes / leaks / OOMs / timeouts | corpus (run / minimised / checked in) |"
echo "|---|---:|---:|---:|---|---|"
total=0
for t in "${targets[@]}"; do
    d="$OUT/$t"
    read -r secs rc <"$d/result"
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$d/log" | tail -1 | grep -o '[0-9]*$' || true)
    execs=${execs:-0}
    total=$((total + execs))
    c=$(find "$d/artifacts" -name 'crash-*' | wc -l)
    l=$(find "$d/artifacts" -name 'leak-*' | wc -l)
    o=$(find "$d/artifacts" -name 'oom-*' | wc -l)
    to=$(find "$d/artifacts" -name 'timeout-*' | wc -l)
    finding=$((c + l + o + to))
    if [ "$finding" -gt 0 ] || [ "$rc" != 0 ]; then bad=1; fi
    status="$c / $l / $o / $to"
    [ "$rc" = 0 ] || status="$status (exit $rc, see $d/log)"
    rate=$((secs > 0 ? execs / secs : 0))
    printf '| %s | %s | %s | %s | %s | %s / %s / %s |\n' "$t" "$execs" "$secs" "$rate" "$status" \
        "$(ls "$d/corpus" | wc -l)" "$(ls "$d/min" | wc -l)" "$(ls "corpus/$t" | wc -l)"
done
echo "| **total** | $total | | | | |"
exit "$bad"
