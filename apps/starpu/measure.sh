#!/bin/sh
# Real runs of the StarPU programs against the simulator's predictions
# (docs/starpu.md, "Measuring"; the tables of docs/validation.md, "Real
# runs"). Usage, from the repository root:
#   sh apps/starpu/measure.sh BUILD MACHINE.json [sim|sched] [REPEAT]
# BUILD is a build folder with the programs and mapopt (RelWithDebInfo for
# real numbers). `sim` (the default) runs each program at two sizes on 1
# and 2 ranks under three mappers, REPEAT times (default 5), and prints the
# median next to `mapopt sim`'s prediction on MACHINE.json for the same
# configuration. `sched` runs the same sizes without a mapper under StarPU's
# dmda and lws schedulers, next to the block mapper. In `sim` mode each row
# also shows the best of the runs (the one least slowed by other jobs on
# the host) and the simulator's error against it.
#
# One rank gets 2 CPU workers (STARPU_NCPU=2), two ranks 1 each: the runs
# use the host's 2 cores either way. Every run has its own STARPU_HOME (a
# folder per rank: rank.sh), except that dmda, which needs performance
# models, runs once untimed to calibrate them in a STARPU_HOME shared by
# that configuration's runs.
# Every run checks its result (-check 1); a run that fails stops the script.
set -eu
BUILD=$1
MACHINE=$2
MODE=${3:-sim}
REPEAT=${4:-5}
BIN=$BUILD/apps/starpu
MAPOPT=$BUILD/mapopt
MAPS=apps/starpu/mappers

# run NP HOME PROGRAM ARGS...: one run; prints the metric's value.
run() {
  np=$1
  home=$2
  shift 2
  ncpu=$((2 / np))
  out=$(STARPU_HOME=$home STARPU_NCPU=$ncpu STARPU_WORKERS_NOBIND=1 \
    STARPU_SILENT=1 STARPU_WATCHDOG_TIMEOUT=60000000 STARPU_WATCHDOG_CRASH=1 \
    timeout 300 mpirun --allow-run-as-root -np "$np" -x STARPU_HOME \
      -x STARPU_NCPU -x STARPU_WORKERS_NOBIND -x STARPU_SILENT \
      -x STARPU_WATCHDOG_TIMEOUT -x STARPU_WATCHDOG_CRASH -x STARPU_SCHED \
      sh apps/starpu/rank.sh "$@" 2>&1) || {
    echo "measure.sh: failed: mpirun -np $np $*" >&2
    echo "$out" >&2
    exit 1
  }
  echo "$out" | sed -n -e 's/^ELAPSED TIME = \([0-9.]*\) s$/\1/p' \
    -e 's/^On [0-9]* nodes achieved GFLOPS per node: \([0-9.]*\)\.$/\1/p'
}

# median of the numbers on stdin
median() {
  sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

# measure NP PROGRAM ARGS...: REPEAT runs (under $STARPU_SCHED when set);
# prints "median (all values)".
measure() {
  np=$1
  shift
  vals=""
  shared=""
  if [ "${STARPU_SCHED:-}" = dmda ]; then
    shared=$(mktemp -d)
    run "$np" "$shared" "$@" >/dev/null # calibrates the performance models
  fi
  i=0
  while [ $i -lt "$REPEAT" ]; do
    home=${shared:-$(mktemp -d)}
    vals="$vals $(run "$np" "$home" "$@")"
    [ -n "$shared" ] || rm -rf "$home"
    i=$((i + 1))
  done
  [ -n "$shared" ] && rm -rf "$shared"
  med=$(echo "$vals" | tr ' ' '\n' | grep . | median)
  echo "$med ($(echo "$vals" | sed 's/^ //'))"
}

# predict APP:SPEC MAPPER: the simulated elapsed seconds or GFLOP/s.
predict() {
  "$MAPOPT" sim "$1" --mapper "$2" --machine "$MACHINE" | sed -n \
    -e 's/^On [0-9]* nodes achieved GFLOPS per node: \([0-9.]*\)\.$/\1/p' \
    -e 's/^ELAPSED TIME = *\([0-9.]*\) s$/\1/p'
}

# The simulator prints the elapsed time with 3 decimals; the report has ns.
predict_time() {
  "$MAPOPT" sim "$1" --mapper "$2" --machine "$MACHINE" --json |
    sed -n 's/.*"elapsed_ns": *\([0-9]*\).*/\1/p' | head -n 1 |
    awk '{printf "%.6f\n", $1 / 1e9}'
}

# best KIND "MEDIAN (RUNS)": the best run, the shortest time (KIND time) or
# the highest rate (KIND rate).
best() {
  echo "$2" | sed 's/.*(\(.*\))/\1/' | tr ' ' '\n' | grep . | sort -g |
    if [ "$1" = time ]; then head -n 1; else tail -n 1; fi
}

# error SIMULATED MEASURED: the simulator's relative error, in percent.
error() {
  awk -v s="$1" -v m="$2" 'BEGIN {printf "%+.0f%%", (s - m) / m * 100}'
}

# row KIND PROGRAM SIZE NP MAPPER "MEDIAN (RUNS)" SIMULATED: a table row,
# with the simulator's error against the median and against the best run.
row() {
  med=${6%% *}
  b=$(best "$1" "$6")
  echo "| $2 | $3 | $4 | $5 | $med | ${6#* } | $7 | $(error "$7" "$med") | $b | $(error "$7" "$b") |"
}

STENCIL_SIZES="1028 2052"
GEMM_SIZES="1024 2048"

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -n), load $(cut -d' ' -f1-3 /proc/loadavg), nice $(nice)"
# The host's rates at the time, for the record (docs/starpu.md, Calibration).
home=$(mktemp -d)
STARPU_HOME=$home STARPU_NCPU=1 STARPU_SILENT=1 "$BIN/starpu-calibrate" |
  sed 's/^/#   /'
STARPU_HOME=$home STARPU_NCPU=1 STARPU_SILENT=1 STARPU_WORKERS_NOBIND=1 \
  timeout 300 mpirun --allow-run-as-root -np 2 -x STARPU_HOME -x STARPU_NCPU \
  -x STARPU_SILENT -x STARPU_WORKERS_NOBIND sh apps/starpu/rank.sh \
  "$BIN/starpu-calibrate" |
  sed 's/^/#   /'
rm -rf "$home"
if [ "$MODE" = sim ]; then
  echo "| program | size | ranks | mapper | measured (median of $REPEAT) | runs | simulated | error | best run | error vs best |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for nx in $STENCIL_SIZES; do
    for np in 1 2; do
      for m in block serial split; do
        r=$(measure "$np" "$BIN/stencil-starpu" -nx "$nx" -ny "$nx" \
          -tsteps 10 -tprune 2 -mapping "$MAPS/stencil-$m.map")
        row time "stencil (s)" "$nx²" "$np" "$m" "$r" "$(predict_time \
          "apps/starpu-stencil.json:nx=$nx,ny=$nx,np=$np" \
          "$MAPS/stencil-$m.map")"
      done
    done
  done
  for n in $GEMM_SIZES; do
    for np in 1 2; do
      for m in block serial transpose; do
        r=$(measure "$np" "$BIN/gemm-starpu" -n "$n" -g 2 -reps 3 \
          -mapping "$MAPS/gemm-$m.map")
        row rate "gemm (GFLOP/s)" "$n" "$np" "$m" "$r" \
          "$(predict "apps/starpu-gemm.json:n=$n,g=2,np=$np" \
            "$MAPS/gemm-$m.map")"
      done
    done
  done
else
  echo "| program | size | ranks | placement | measured (median of $REPEAT) | runs |"
  echo "|---|---|---|---|---|---|"
  for nx in $STENCIL_SIZES; do
    for np in 1 2; do
      r=$(measure "$np" "$BIN/stencil-starpu" -nx "$nx" -ny "$nx" -tsteps 10 \
        -tprune 2 -mapping "$MAPS/stencil-block.map")
      echo "| stencil (s) | $nx² | $np | mapper stencil-block | ${r%% *} | ${r#* } |"
      for s in dmda lws; do
        export STARPU_SCHED=$s
        r=$(measure "$np" "$BIN/stencil-starpu" -nx "$nx" -ny "$nx" \
          -tsteps 10 -tprune 2)
        unset STARPU_SCHED
        echo "| stencil (s) | $nx² | $np | StarPU $s | ${r%% *} | ${r#* } |"
      done
    done
  done
  for n in $GEMM_SIZES; do
    for np in 1 2; do
      r=$(measure "$np" "$BIN/gemm-starpu" -n "$n" -g 2 -reps 3 \
        -mapping "$MAPS/gemm-block.map")
      echo "| gemm (GFLOP/s) | $n | $np | mapper gemm-block | ${r%% *} | ${r#* } |"
      for s in dmda lws; do
        export STARPU_SCHED=$s
        r=$(measure "$np" "$BIN/gemm-starpu" -n "$n" -g 2 -reps 3)
        unset STARPU_SCHED
        echo "| gemm (GFLOP/s) | $n | $np | StarPU $s | ${r%% *} | ${r#* } |"
      done
    done
  done
fi
echo "# end $(date -u +%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
