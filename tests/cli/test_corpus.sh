#!/bin/sh
# The held-out corpus (apps/corpus/README.md): every model loads and
# simulates under the default mapper (an empty mapper: the DSL's defaults)
# on every machine preset `mapopt machines` lists -- at its `small` size on
# the one-node presets, at its `cluster` size on the multi-node ones and on
# lassen:nodes=2 -- and `mapopt bench --apps` runs over all of them.
# Usage: test_corpus.sh MAPOPT_BINARY
set -u
M=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"

: > default.map
models=$(ls "$ROOT"/apps/corpus/*.json)
count=$(echo "$models" | wc -l)
# The corpus is at least eight models: a lost folder or a bad glob fails here.
if [ "$count" -ge 8 ]; then ok; else bad "apps/corpus has $count models, want 8 or more"; fi

# The presets and their default node counts, from the program itself, so
# that a new preset is covered without editing this test.
expect_rc 0 "$M" machines
presets=$(awk 'NR > 1 && $1 != "local" { print $1 ":" $2 }' out)
if [ -n "$presets" ]; then ok; else bad "mapopt machines listed no preset"; fi

# simulate APP MACHINE: one run under the default mapper, which must end
# with status ok and a positive metric. One warm-up and two timed
# iterations keep the test short under ASan and still carry one step's
# instances into the next (the transformer's peak); runs of every
# iteration, at the default and cluster sizes, are tools/corpus-bench.sh's,
# which stops when the default mapper fails.
simulate() {
  "$M" sim "$1" --mapper default.map --machine "$2" --warmup 1 --iterations 2 \
    --json >out 2>err
  rc=$?
  if [ "$rc" = 0 ] && grep -q '"status": "ok"' out &&
     awk '$1 == "\"value\":" && $2 + 0 > 0 { v = 1 } END { exit !v }' out; then
    ok
  else
    bad "mapopt sim $1 --machine $2 exited $rc"
    grep -E '"(status|error_class|error_text)"' out
    cat err
  fi
}

for app in $models; do
  for p in $presets; do
    name=${p%%:*}
    nodes=${p#*:}
    if [ "$nodes" -gt 1 ]; then simulate "$app:cluster" "$name"
    else simulate "$app:small" "$name"; fi
  done
  simulate "$app:cluster" lassen:nodes=2
done

# A reader of reduced data and, mapped ahead of it, the next step's reader
# of the same piece on the same processor: the next step's early folds must
# not fill their base into the instance before the fill op (which waits for
# the first reader) completes. PIC with 4 particles per cell on cpu-cluster
# ended in "simulation deadlock" when they did (ppc=5 too).
simulate "$ROOT/apps/corpus/pic.json:small,ppc=4" cpu-cluster
simulate "$ROOT/apps/corpus/pic.json:small,ppc=5" cpu-cluster

# mapopt bench over the whole corpus: one row per model, each with a valid
# mapper (guided starts from the default mapper, which runs).
list=$(echo "$models" | tr '\n' ',' | sed 's/,$//')
expect_rc 0 "$M" bench --apps "$list" --size small --optimizers guided \
  --budget 2 --runs 1 --db bench.db --quiet
rows=$(grep -c 'guided(full)@2 .* 1/1$' out)
if [ "$rows" = "$count" ]; then ok; else bad "bench printed $rows valid rows for $count models"; cat out; fi

finish
