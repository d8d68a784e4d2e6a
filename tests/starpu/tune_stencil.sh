#!/bin/sh
# `mapopt tune stencil --run 'mpirun -np 2 ... stencil-starpu -mapping
# {mapper}'` end to end (docs/real.md, "Tuning real runs"), at a small size
# with a budget of 3: the built-in stencil model gives the search space on
# the machine the program runs on (2 ranks of 1 CPU worker), and every
# candidate, and the default and expert yardsticks, is a real StarPU-MPI run
# that checks its grid against a serial computation. Usage:
#   tune_stencil.sh MAPOPT STENCIL_STARPU REPO_ROOT
#
# Each evaluation has its own time limit (--timeout 40: mapopt kills its
# process group). A run with an evaluation that reached it -- the rare hang
# of MPI at shutdown -- or that ran past this script's own limit is made
# again once, in a fresh database; any other failure is final.
set -u
M=$1
PROG=$2
ROOT=$3
LIMIT=240 # seconds for one attempt; then SIGINT, and SIGKILL 60 s later
EVAL_LIMIT=40
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
RUN="mpirun --allow-run-as-root -np 2 -x STARPU_NCPU=1 \
-x STARPU_WORKERS_NOBIND=1 -x STARPU_SILENT=1 \
-x STARPU_WATCHDOG_TIMEOUT=30000000 -x STARPU_WATCHDOG_CRASH=1 \
-x ASAN_OPTIONS=detect_leaks=0 sh $ROOT/apps/starpu/rank.sh $PROG \
-nx 68 -ny 68 -tsteps 3 -tprune 1 -mapping {mapper}"

q() { sqlite3 t.db "$1" 2>/dev/null; }

# One attempt: RC, and TIMED_OUT when something reached a time limit.
attempt() {
  rm -f t.db t.db-wal t.db-shm best.map
  start=$(date +%s)
  timeout -s INT -k 60 $LIMIT "$M" tune stencil:small,nx=68,ny=68,tsteps=3 \
    --machine 'nodes=2 cpu=1 rdmem=0' --budget 3 --db t.db --out best.map \
    --timeout $EVAL_LIMIT --run "$RUN" >out 2>err
  RC=$?
  took=$(($(date +%s) - start))
  TIMED_OUT=0
  [ "$RC" = 124 ] || [ "$RC" = 137 ] && TIMED_OUT=1
  [ "$(q "SELECT COUNT(*) FROM evaluations WHERE status = 'timeout'")" != 0 ] &&
    TIMED_OUT=1
  # A yardstick that failed leaves no score; only one that ran for the
  # whole limit can have timed out.
  [ -z "$(q 'SELECT default_score FROM runs')" ] && [ "$took" -ge $EVAL_LIMIT ] &&
    TIMED_OUT=1
}

for try in 1 2; do
  attempt
  [ "$TIMED_OUT" = 0 ] && break
  echo "tune_stencil.sh: attempt $try reached a time limit (status $RC):"
  cat out err
  q "SELECT iteration, status FROM evaluations"
done
cat out err
fail=0
check() { # WHAT CONDITION...
  what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
check "the run ended without reaching a time limit" [ "$TIMED_OUT" = 0 ]
check "mapopt tune exited 0" [ "$RC" = 0 ]
check "3 evaluations recorded" [ "$(q 'SELECT COUNT(*) FROM evaluations')" = 3 ]
check "each with the run's output" \
  [ "$(q 'SELECT COUNT(*) FROM outputs WHERE length(output) > 0')" = 3 ]
# Every successful run verified its grid to the last bit.
n_ok=$(q "SELECT COUNT(*) FROM evaluations WHERE status = 'ok'")
check "some candidate ran" [ "${n_ok:-0}" -ge 1 ]
check "every successful run checked its result" [ "$(q "SELECT COUNT(*) FROM \
outputs JOIN evaluations USING (run, iteration) WHERE status = 'ok' AND \
output LIKE '%check: 68 x 68 grid after 4 steps equals the serial%'")" = "$n_ok" ]
check "scored by the program's ELAPSED TIME" [ "$(q 'SELECT unit FROM runs')" = 1/s ]
check "the default mapper ran as a yardstick" \
  [ -n "$(q 'SELECT default_score FROM runs')" ]
# The expert mapper of the built-in stencil divides by the GPUs per node:
# on this CPU-only machine it fails, in the real program as in the model.
check "the expert yardstick failed, as on this machine it must" \
  [ -z "$(q 'SELECT expert_score FROM runs')" ]
check "the note says so" grep -q "the expert mapper failed on this machine" out
check "the best mapper was written" grep -q "^# The best mapper of" best.map
check "the command is recorded" sh -c "sqlite3 t.db 'SELECT evaluator FROM runs' | grep -q stencil-starpu"
exit $fail
