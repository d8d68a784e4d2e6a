#!/bin/sh
# One test of a StarPU-MPI program (tests/CMakeLists.txt, docs/starpu.md):
#   run_mpi.sh LIMIT STATUS TEXT NP PROGRAM [ARGS...]
# runs PROGRAM on NP ranks under mpirun and passes when it exits with
# STATUS and its output (stdout and stderr) has a line containing TEXT, a
# fixed string.
#
# Each attempt gets its own STARPU_HOME (a folder per rank: rank.sh), one
# CPU worker per rank, StarPU's watchdog (a run where no task ends for 30 s
# aborts) and LIMIT seconds, after which its whole process group is killed. An attempt that ran out of
# time -- the rare hang of MPI at shutdown -- is retried once. Every other
# outcome is final: a wrong result is never retried.
set -u
LIMIT=$1
WANT=$2
TEXT=$3
NP=$4
shift 4

RANK=$(dirname "$0")/../../apps/starpu/rank.sh # a STARPU_HOME per rank
OVERSUB=""
[ "$NP" -gt "$(nproc 2>/dev/null || echo 1)" ] && OVERSUB=--oversubscribe

# Runs one attempt: sets RC (the exit status) and TIMED_OUT, output in $OUT.
attempt() {
  home=$(mktemp -d)
  pidf=$(mktemp)
  start=$(date +%s)
  STARPU_HOME=$home STARPU_NCPU=1 STARPU_WORKERS_NOBIND=1 STARPU_SILENT=1 \
  STARPU_WATCHDOG_TIMEOUT=30000000 STARPU_WATCHDOG_CRASH=1 \
  ASAN_OPTIONS=detect_leaks=0 \
    setsid -w sh -c 'echo $$ >"$0"; exec "$@"' "$pidf" \
    mpirun --allow-run-as-root $OVERSUB -np "$NP" \
      -x STARPU_HOME -x STARPU_NCPU -x STARPU_WORKERS_NOBIND -x STARPU_SILENT \
      -x STARPU_WATCHDOG_TIMEOUT -x STARPU_WATCHDOG_CRASH -x ASAN_OPTIONS \
      sh "$RANK" "$@" >"$OUT" 2>&1 &
  job=$!
  TIMED_OUT=0
  while kill -0 "$job" 2>/dev/null; do
    if [ $(($(date +%s) - start)) -ge "$LIMIT" ]; then
      TIMED_OUT=1
      pg=$(cat "$pidf")
      [ -n "$pg" ] && kill -TERM "-$pg" 2>/dev/null
      # mpirun passes TERM on to the ranks; KILL what is left after 5 s.
      n=0
      while kill -0 "$job" 2>/dev/null && [ $n -lt 25 ]; do
        sleep 0.2
        n=$((n + 1))
      done
      [ -n "$pg" ] && kill -KILL "-$pg" 2>/dev/null
      break
    fi
    sleep 0.2
  done
  wait "$job"
  RC=$?
  rm -rf "$home" "$pidf"
}

OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
for try in 1 2; do
  attempt "$@"
  [ "$TIMED_OUT" = 0 ] && break
  echo "run_mpi.sh: attempt $try ran out of its ${LIMIT} s; output so far:"
  cat "$OUT"
done
cat "$OUT"
if [ "$TIMED_OUT" = 1 ]; then
  echo "run_mpi.sh: FAIL: both attempts ran out of time"
  exit 1
fi
if [ "$RC" != "$WANT" ]; then
  echo "run_mpi.sh: FAIL: exit status $RC, expected $WANT"
  exit 1
fi
if ! grep -qF -- "$TEXT" "$OUT"; then
  echo "run_mpi.sh: FAIL: no line contains: $TEXT"
  exit 1
fi
echo "run_mpi.sh: ok (status $RC)"
