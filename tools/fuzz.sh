#!/bin/sh
# Runs every libFuzzer target of build-fuzz/ (make fuzz) for SECONDS each,
# one after another, and prints one line per target: its executions and
# whether it found anything. New inputs go to a scratch folder, never into
# the checked-in corpora (tests/fuzz/corpus*); a finding is kept under
# OUTDIR/TARGET/ as libFuzzer's crash-*, leak-*, timeout-* or oom-* file,
# and its log beside it.
#
# Usage: tools/fuzz.sh [SECONDS [OUTDIR]]   (defaults: 60, build-fuzz/runs)
# FUZZ_SEED=N fixes libFuzzer's seed (CI does, so that a rerun repeats the
# same inputs); by default each run draws its own.
# Exit status: 0 when no target found anything, 1 otherwise, 2 on misuse.
set -u
secs=${1:-60}
out=${2:-build-fuzz/runs}
bin=build-fuzz/tests/fuzz
case $secs in '' | *[!0-9]*) echo "usage: tools/fuzz.sh [SECONDS [OUTDIR]]" >&2; exit 2 ;; esac
[ -d "$bin" ] || { echo "tools/fuzz.sh: no $bin; run 'make fuzz' first" >&2; exit 2; }
seed=${FUZZ_SEED:-0}
case $seed in '' | *[!0-9]*) echo "tools/fuzz.sh: FUZZ_SEED must be a number" >&2; exit 2 ;; esac
status=0
ran=0
for f in "$bin"/fuzz_*; do
  [ -f "$f" ] && [ -x "$f" ] || continue
  t=${f##*/fuzz_}
  ran=$((ran + 1))
  corpus=tests/fuzz/corpus_$t
  [ "$t" = dsl ] && corpus=tests/fuzz/corpus
  # Inputs grow to 64 KiB for the DSL and JSON loaders (their targets take
  # up to 256 KiB-1 MiB: long chains and lists need room); the generator
  # and the other targets build large structures from small inputs.
  case $t in dsl | machine | app | appmap) len=65536 ;; *) len=4096 ;; esac
  dir=$out/$t
  rm -rf "$dir"
  mkdir -p "$dir/new" || exit 2
  "$f" -max_total_time="$secs" -timeout=60 -rss_limit_mb=4096 \
    -max_len=$len -print_final_stats=1 -seed="$seed" -artifact_prefix="$dir/" \
    "$dir/new" "$corpus" >"$dir/log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
  found=$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
    -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  if [ "$rc" = 0 ] && [ "$found" = 0 ]; then
    echo "fuzz_$t: ${runs:-?} runs in ${secs} s, nothing found"
  else
    echo "fuzz_$t: FOUND (exit $rc, $found input(s) in $dir; log $dir/log)"
    status=1
  fi
done
[ "$ran" -gt 0 ] || { echo "tools/fuzz.sh: no fuzz_* targets in $bin" >&2; exit 2; }
exit $status
