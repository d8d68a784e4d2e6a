#!/bin/sh
# Interrupting `mapopt tune` for real: the process is killed with SIGKILL in
# the middle of a run, then another is stopped with SIGINT (Ctrl-C); each
# is resumed. Every evaluation recorded before the interruption is still
# there afterwards, unchanged (not lost, not made again), each iteration is
# recorded once, and the final evaluations and best mapper are those of an
# uninterrupted run. Exit 77 (skipped) without the sqlite3 program.
# Usage: test_tune_resume.sh MAPOPT_BINARY
set -u
M=$1
. "$(dirname "$0")/lib.sh"
require_sqlite3

# Long enough to be interrupted after a few progress lines, even in a
# sanitizer build on a fast machine; --jobs 2 so that two evaluations are
# in flight when the signal comes (in batches of 4 planned ahead).
BUDGET=150
ARGS="circuit --optimizer random --budget $BUDGET --seed 3 --jobs 2 --batch 4"
rows() {
  sqlite3 "$1" "SELECT iteration, hash, status, metric FROM evaluations ORDER BY iteration"
}
# With the time each was recorded: a row made again would change it.
stamped() {
  sqlite3 "$1" "SELECT iteration, hash, status, metric, finished FROM evaluations ORDER BY iteration"
}

"$M" tune $ARGS --db ref.db --out ref.map --quiet > ref.out 2>&1 ||
  bad "the uninterrupted run failed: $(cat ref.out)"
rows ref.db > ref.rows
[ "$(wc -l < ref.rows)" = "$BUDGET" ] && ok || bad "the reference has $(wc -l < ref.rows) rows"

# interrupt SIGNAL DB: starts a run, sends SIGNAL as soon as it has told
# 15 evaluations, and waits for it; rc is its exit status. Its progress
# comes through a FIFO read line by line, so the signal follows the 15th
# line at once (polling a file every 20 ms raced a run that evaluates
# hundreds a second on a fast machine, or a poll delayed on a loaded one).
told() {
  c=$(grep -c '^evaluation ' "$1" 2> /dev/null)
  echo "${c:-0}"
}
interrupt() {
  rm -f progress.fifo
  mkfifo progress.fifo || bad "mkfifo failed"
  "$M" tune $ARGS --db "$2" --out "$2.map" > "$2.out" 2> progress.fifo &
  pid=$!
  sent=no
  n=0
  while IFS= read -r line; do
    printf '%s\n' "$line"
    case $line in "evaluation "*) n=$((n + 1)) ;; esac
    if [ $sent = no ] && [ $n -ge 15 ]; then
      kill -s "$1" $pid 2> /dev/null && sent=yes
    fi
  done < progress.fifo > "$2.err"
  if [ $sent = yes ]; then ok; else
    bad "the run ended before SIG$1 could interrupt it"
  fi
  wait $pid
  rc=$?
  rm -f progress.fifo
}

# resumed DB: resumes and checks the database against the reference and
# against what was recorded before (before.rows).
resumed() {
  stamped "$1" > before.rows
  k=$(wc -l < before.rows)
  if [ "$k" -ge 1 ] && [ "$k" -lt "$BUDGET" ]; then ok; else
    bad "$k evaluations recorded at the interruption (want 1..$((BUDGET - 1)))"
  fi
  "$M" tune $ARGS --db "$1" --out "$1.map" --resume > res.out 2> res.err ||
    bad "the resumed run failed: $(cat res.err)"
  grep -q "run 1 resumed: $k evaluations were recorded" res.err && ok ||
    bad "resume did not replay $k evaluations: $(tail -n 2 res.err)"
  rows "$1" > after.rows
  cmp -s after.rows ref.rows && ok || bad "the resumed run differs from the uninterrupted one"
  stamped "$1" > after.stamped
  # every row recorded before is there, unchanged
  if grep -Fvxf after.stamped before.rows > lost.rows; then
    bad "evaluations lost or made again: $(head -n 3 lost.rows)"
  else ok; fi
  [ "$(sqlite3 "$1" 'SELECT COUNT(DISTINCT iteration) FROM evaluations')" = "$BUDGET" ] &&
    ok || bad "iterations recorded twice or missing"
  [ "$(sqlite3 "$1" 'SELECT status FROM runs')" = "done" ] && ok || bad "the run is not done"
  tail -n +2 "$1.map" > got.body
  tail -n +2 ref.map > want.body
  cmp -s got.body want.body && ok || bad "the best mapper differs"
}

# kill -9 in the middle of a run
interrupt KILL k.db
[ $rc = 137 ] && ok || bad "SIGKILL: exit $rc"
[ "$(sqlite3 k.db 'SELECT status FROM runs')" = "running" ] && ok ||
  bad "a killed run is not left running"
[ ! -e k.db.map ] && ok || bad "a killed run wrote its best mapper"
resumed k.db

# Ctrl-C: stops after the evaluations in flight, keeps every one told
interrupt INT i.db
[ $rc = 1 ] && ok || bad "SIGINT: exit $rc"
grep -q "mapopt tune: interrupted after" i.db.err && ok || bad "no interruption message"
grep -q -- "--resume" i.db.err && ok || bad "no resume command"
[ "$(sqlite3 i.db 'SELECT status FROM runs')" = "interrupted" ] && ok ||
  bad "the run is not marked interrupted"
ntold=$(told i.db.err)
[ "$(sqlite3 i.db 'SELECT COUNT(*) FROM evaluations')" -ge "$ntold" ] && ok ||
  bad "fewer evaluations recorded than the $ntold told"
resumed i.db

finish
