#!/bin/sh
# The tuning commands under hostile conditions (docs/tuning.md, "Several
# processes on one database"; docs/real.md, sections 4 and 12): a --resume
# while another live process writes the run; SIGTERM and SIGHUP to `tune
# --run` (a scheduler's time limit, a closed terminal) with a command whose
# descendant left its session; a relative TMPDIR and --tmpdir; a best
# mapper that cannot be written; `report` on a metric of 1e-30 or
# infinity, on a budget of 10^8 or 2^61 with a few evaluations, on a
# foreign SQLite file, an empty file, and a database it may not write.
# Every wait is for a file a command writes, bounded. Exit 77 (skipped)
# without the sqlite3 program.
# Usage: test_reliability.sh MAPOPT_BINARY SOURCE_DIR
set -u
M=$1
SRC=$2
. "$(dirname "$0")/lib.sh"
require_sqlite3
APP=$SRC/apps/heat1d.json
# Processes the commands below started, killed at exit if a check failed
# and left them (a passing run leaves none).
trap 'for p in $(cat "$T"/*.pids 2> /dev/null); do kill -9 "$p" 2> /dev/null; done; rm -rf "$T"' EXIT

# wait_for FILE: until FILE exists (at most 60 s); 1 if it never does.
wait_for() {
  i=0
  while [ ! -e "$1" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
  [ -e "$1" ]
}
# gone PID...: every process is gone.
gone() {
  for p in "$@"; do kill -0 "$p" 2> /dev/null && return 1; done
  return 0
}
q() { sqlite3 "$1" "$2"; }
lines() { if [ -f "$1" ]; then wc -l < "$1"; else echo 0; fi; }

# ---- a run another live process writes is not taken over -------------------
# The first run's command waits for the file go; meanwhile a --resume of the
# same settings is refused, naming the owner, and changes nothing. (The
# commands run in their private folders: the files are named by absolute
# path.)
# The default mapper, every run's baseline (evaluated first), answers at
# once: the commands below wait or hang for the candidates.
DEFAULT="if grep -q '^# The default mapper' {mapper}; then echo 'ELAPSED TIME = 1 s'; exit 0; fi"
WAIT="$DEFAULT; touch $T/started; while [ ! -e $T/go ]; do sleep 0.05; done; echo 'ELAPSED TIME = 1 s'; : {mapper}"
"$M" tune "$APP" --budget 2 --db c.db --out a.map --quiet --shell --timeout 120 \
  --run "$WAIT" > a.out 2> a.err &
A=$!
if wait_for started; then ok; else bad "the first run's command never started"; fi
timeout 120 "$M" tune "$APP" --budget 2 --db c.db --out b.map --quiet --shell \
  --timeout 120 --run "$WAIT" --resume > b.out 2> b.err
rc=$?
[ $rc = 1 ] && ok || bad "the second process exited $rc, want 1: $(cat b.err)"
expect_in b.err "run 1 is being written by process $A on "
expect_in b.err "wait for it to end, or use another database"
[ "$(q c.db 'SELECT status FROM runs')" = running ] && ok ||
  bad "the second process changed the run"
touch go
wait $A
rc=$?
[ $rc = 0 ] && ok || bad "the first run exited $rc: $(cat a.err)"
[ "$(q c.db 'SELECT COUNT(*), MIN(status) FROM runs')" = "1|done" ] && ok ||
  bad "the run is not done once: $(q c.db 'SELECT id, status FROM runs')"
[ "$(q c.db 'SELECT COUNT(*) FROM evaluations')" = 2 ] && ok ||
  bad "not two evaluations"
[ "$(q c.db 'SELECT COUNT(*) FROM owners')" = 0 ] && ok || bad "a claim is left"

# ---- SIGTERM and SIGHUP end the commands in flight ---------------------------
# Each candidate's command records its shell and a descendant that left its
# session (setsid), then waits forever; the signal must end both, and leave
# the run interrupted and resumable.
HANG="$DEFAULT; echo \$\$ >> $T/run.pids; setsid sleep 1000 & echo \$! >> $T/run.pids; exec sleep 1000; : {mapper}"
for sig in TERM HUP; do
  [ -f run.pids ] && cat run.pids >> seen.pids
  rm -f run.pids
  resume=
  [ $sig = HUP ] && resume=--resume
  "$M" tune "$APP" --budget 3 --db s.db --out s.map --shell --timeout 600 \
    --run "$HANG" $resume > s.out 2> s.err &
  P=$!
  n=0
  while [ "$(lines run.pids)" -lt 2 ] && [ $n -lt 1200 ]; do
    sleep 0.05
    n=$((n + 1))
  done
  kill -s $sig $P
  wait $P
  rc=$?
  [ $rc = 1 ] && ok || bad "SIG$sig: exit $rc, want 1: $(tail -n 3 s.err)"
  # shellcheck disable=SC2046
  if gone $(cat run.pids); then ok; else
    bad "SIG$sig: the command's processes outlived mapopt: $(cat run.pids)"
  fi
  # (guided's first candidate is the default mapper, which answered)
  n=$(q s.db 'SELECT COUNT(*) FROM evaluations')
  expect_in s.err "mapopt tune: interrupted after $n of 3 evaluations"
  [ "$(q s.db 'SELECT status FROM runs')" = interrupted ] && ok ||
    bad "SIG$sig: the run is $(q s.db 'SELECT status FROM runs'), not interrupted"
  [ "$(q s.db "SELECT COUNT(*) FROM evaluations WHERE text NOT LIKE '# The default mapper%'")" = 0 ] && ok ||
    bad "SIG$sig: an evaluation the signal cut short was recorded"
done

# ---- a relative TMPDIR or --tmpdir -------------------------------------------
mkdir rel
READ='cat {mapper} > /dev/null && echo "ELAPSED TIME = 1 s"'
expect_rc 0 env TMPDIR=rel "$M" tune "$APP" --budget 2 --db t.db --out t1.map \
  --quiet --shell --run "$READ"
expect_rc 0 "$M" tune "$APP" --budget 2 --db t.db --out t2.map --quiet \
  --shell --tmpdir ./rel --run "$READ"
[ "$(q t.db "SELECT COUNT(*) FROM evaluations WHERE status = 'ok'")" = 4 ] &&
  ok || bad "the runs with a relative temporary folder failed"
[ -z "$(ls rel)" ] && ok || bad "private folders left in rel: $(ls rel)"

# ---- a best mapper that cannot be written is not said to be ------------------
expect_rc 1 "$M" tune "$APP" --budget 2 --db w.db --out no/such/dir/best.map
expect_in err "cannot write the best mapper"
if grep -q "written to" out; then bad "'written to' printed: $(cat out)"; else ok; fi
expect_in out "not written (see the error above)"
expect_rc 1 "$M" tune "$APP" --budget 2 --db w.db --out no/such/dir/best.map --json
expect_in out '"file": null'

# ---- report on what a database may hold --------------------------------------
"$M" tune "$APP" --budget 3 --db r.db --out r.map --quiet > /dev/null 2>&1 ||
  bad "the run for the report failed"
cp r.db base.db
# report_ok DB: report finishes (at most 60 s) with a page under 1 MB.
report_ok() {
  timeout 60 "$M" report "$1" --html "$1.html" > out 2> err
  rc=$?
  if [ $rc = 0 ] && [ "$(wc -c < "$1.html")" -lt 1000000 ]; then ok; else
    bad "report on $1 ($2): exit $rc, $(wc -c < "$1.html" 2> /dev/null) bytes: $(cat err)"
  fi
}
for v in 1e-30 9e999; do
  cp base.db m$v.db
  q m$v.db "UPDATE evaluations SET metric = $v WHERE status = 'ok'"
  report_ok m$v.db "a best of $v"
done
expect_in m9e999.db.html '<polyline class="curve"'
for b in 100000000 2305843009213693952; do
  cp base.db b$b.db
  q b$b.db "UPDATE runs SET budget = $b"
  report_ok b$b.db "a budget of $b"
done
# Another program's SQLite database, and an empty file: refused, unchanged.
q f.db "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')"
cp f.db f.copy
expect_rc 1 "$M" report f.db --html f.html
expect_in err "not a mapopt tuning database: it has no meta table"
expect_rc 1 "$M" tune "$APP" --budget 1 --db f.db --out f.map
expect_in err "not a mapopt tuning database: it has no meta table"
cmp -s f.db f.copy && [ ! -e f.db-wal ] && ok || bad "f.db was changed"
: > e.db
expect_rc 1 "$M" report e.db --html e.html
expect_in err "an empty file, not a mapopt tuning database"
[ ! -s e.db ] && ok || bad "the empty file became a database"
# A database in a folder the reader may not write, itself read-only: as
# another user when this runs as root (root may write anything).
mkdir ro html
cp base.db ro/r.db
chmod 755 "$T" ro
chmod 777 html
chmod 444 ro/r.db
as_reader=
if [ "$(id -u)" = 0 ]; then
  command -v setpriv > /dev/null &&
    as_reader="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
  chmod 555 ro
  as_reader=env
fi
if [ -n "$as_reader" ]; then
  before=$(ls -a ro)
  $as_reader "$M" report ro/r.db --html html/ro.html > out 2> err
  rc=$?
  [ $rc = 0 ] && ok || bad "report on a read-only database exited $rc: $(cat err)"
  expect_in html/ro.html '<polyline class="curve"'
  [ "$(ls -a ro)" = "$before" ] && ok || bad "report wrote in ro: $(ls -a ro)"
else
  echo "note: not root-free and no setpriv: the read-only report is not checked"
fi
chmod 755 ro

finish
