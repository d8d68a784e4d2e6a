#!/bin/sh
# Tests of run_mpi.sh itself, with stand-in programs under the real mpirun:
# a run that hangs once is retried and passes; a run that always hangs
# fails after two attempts; a wrong result (status 3) is reported at once,
# never retried. Usage: test_run_mpi.sh DIR_OF_RUN_MPI
set -u
RUN="$1/run_mpi.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION...
  name=$1
  shift
  if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fail=1; fi
}

# Hangs on the first attempt (every rank), succeeds on the second.
once="if [ -e $tmp/once.\$OMPI_COMM_WORLD_RANK ]; then echo second try; exit 0; fi
touch $tmp/once.\$OMPI_COMM_WORLD_RANK; sleep 120"
sh "$RUN" 3 0 "second try" 2 sh -c "$once" >"$tmp/out1" 2>&1
rc=$?
check "a hang is retried once" [ "$rc" = 0 ]
check "the retry is announced" grep -q "attempt 1 ran out of its 3 s" "$tmp/out1"

# Always hangs: two attempts, then failure.
sh "$RUN" 2 0 "never" 2 sh -c "echo started >>$tmp/tries; sleep 120" \
  >"$tmp/out2" 2>&1
rc=$?
check "a run that always hangs fails" [ "$rc" = 1 ]
check "after exactly two attempts" [ "$(grep -c started "$tmp/tries")" = 4 ]
check "with the reason" grep -q "both attempts ran out of time" "$tmp/out2"

# A wrong result: status 3 at once, one attempt only.
sh "$RUN" 30 0 "right" 2 sh -c "echo run >>$tmp/wrong; echo wrong result; exit 3" \
  >"$tmp/out3" 2>&1
rc=$?
check "a wrong result fails" [ "$rc" = 1 ]
check "and is not retried" [ "$(grep -c run "$tmp/wrong")" = 2 ]
check "with the status" grep -q "exit status 3, expected 0" "$tmp/out3"
exit $fail
