#!/bin/sh
# Golden raw-log test of the simulator (docs/sim.md, "The raw log"). Usage:
#   run_golden.sh MAPOPT_BINARY CASE.args
# CASE.args is one line: the expected exit status, then the arguments of
# `mapopt sim` (paths relative to this directory, where the command runs,
# so file names in diagnostics are stable). The log on stdout must equal
# CASE.log byte for byte. With UPDATE=1 the log is written to CASE.log
# instead -- only after checking its numbers by hand (see each .args
# file's comment lines, which start with '#').
set -u
M=$1
ARGS=$2
DIR=$(cd "$(dirname "$ARGS")" && pwd)
NAME=$(basename "$ARGS" .args)
cd "$DIR" || exit 1
LINE=$(grep -v '^#' "$NAME.args" | head -n 1)
set -- $LINE
want=$1
shift
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
"$M" sim "$@" >"$OUT"
rc=$?
if [ "${UPDATE:-0}" = 1 ]; then
  # A log is recorded only from the run the case expects: a binary that is
  # missing (127) or a command that now fails differently would otherwise
  # become the golden.
  if [ "$rc" != "$want" ]; then
    echo "FAIL: $NAME: exit status $rc, want $want: $NAME.log left as it is"
    exit 1
  fi
  cp "$OUT" "$NAME.log"
  echo "wrote $NAME.log (exit $rc)"
  exit 0
fi
status=0
if [ "$rc" != "$want" ]; then
  echo "FAIL: $NAME: exit status $rc, want $want"
  status=1
fi
if ! cmp -s "$OUT" "$NAME.log"; then
  echo "FAIL: $NAME: log differs from $NAME.log:"
  diff "$NAME.log" "$OUT"
  status=1
fi
exit $status
