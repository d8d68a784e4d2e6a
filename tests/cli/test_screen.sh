#!/bin/sh
# tune --run --screen K (docs/real.md section 15): the "real program" is
# mapopt's own simulator on a machine whose GPUs compute at half the rate
# of p100x4, the model. It copies every mapper it is given into a log
# folder, so the test sees which candidates really ran: only the K best
# predicted of each round, the budget counting real runs, the others
# recorded as screened (a prediction, no metric), never the best; an
# interrupted screened run resumes to the same records; bad --screen
# values are refused.
# Usage: test_screen.sh MAPOPT_BINARY
set -u
M=$1
. "$(dirname "$0")/lib.sh"
require_sqlite3

"$M" machine show p100x4 |
  sed -e 's/"gflops_f64": 4700/"gflops_f64": 2350/' > slow.json
grep -q '"gflops_f64": 2350' slow.json && ok || bad "slow.json was not made"
# run.sh LOG MAPPER [KILL_AT PIDFILE]: logs the mapper as LOG/N.map (N
# counts the runs) and runs it; run KILL_AT stops the tuner (SIGINT) and
# hangs until the stop ends it, so that it is never recorded (should the
# stop be missed, --timeout cuts it: a failure, not a hang).
cat > run.sh <<SH
#!/bin/sh
n=\$(ls "\$1" | wc -l)
cp "\$2" "\$1/\$n.map"
if [ "\${3:-}" = "\$n" ]; then
  i=0
  while [ ! -s "\$4" ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
  kill -INT "\$(cat "\$4")"
  exec sleep 600
fi
exec "$M" sim summa:small --machine "$T/slow.json" --mapper "\$2"
SH
tune() { # DB LOG [KILL_AT]: a screened tuning run of 3 real runs, K = 2,
  # its process id in pid
  sh -c 'echo $$ > "$0"; exec "$@"' "$T/pid" "$M" tune summa:small --optimizer random --seed 1 --budget 3 --screen 2 \
    --db "$1" --out "$1.map" --quiet --repeat-max 1 --check 0 --timeout 60 \
    --run "sh $T/run.sh $T/$2 {mapper} ${3:-} $T/pid"
}
mkdir log
expect_rc 0 tune s.db log
real=$(sqlite3 s.db "SELECT COUNT(*) FROM evaluations WHERE status IN
  ('ok', 'failed', 'timeout', 'crash')")
screened=$(sqlite3 s.db "SELECT COUNT(*) FROM evaluations WHERE status = 'screened'")
[ "$real" = 3 ] && ok || bad "$real real runs recorded, want the budget's 3"
[ "$screened" -ge 6 ] && ok || bad "$screened screened out, want >= 6 (two rounds of 4K = 8)"
expect_in out "summa on p100x4: 3 real runs by random, $screened screened out by the model"
# A screened row is a prediction: no metric, no interval; its own column.
[ "$(sqlite3 s.db "SELECT COUNT(*) FROM evaluations WHERE status = 'screened'
  AND (metric != 0 OR predicted IS NULL OR score_high != 0)")" = 0 ] &&
  ok || bad "a screened row carries a metric or lacks its prediction"
# Its feedback, what the optimizer was told, says it is a prediction.
[ "$(sqlite3 s.db "SELECT COUNT(*) FROM evaluations WHERE status = 'screened'
  AND feedback NOT LIKE 'Screened out: the machine model predicted%'")" = 0 ] &&
  ok || bad "a screened row's feedback does not say it is a prediction"
# Only the best K predicted of each round ran: no screened candidate of a
# round (iterations 8r to 8r + 7) was predicted above one that ran.
[ "$(sqlite3 s.db "SELECT COUNT(*) FROM evaluations AS s JOIN evaluations AS r
  ON s.run = r.run AND s.iteration / 8 = r.iteration / 8
  WHERE s.status = 'screened' AND r.status != 'screened'
  AND s.predicted > r.predicted")" = 0 ] &&
  ok || bad "a screened-out candidate was predicted above one that ran"
# The program ran the expert, the default and the 3 chosen, nothing else.
[ "$(ls log | wc -l)" = 5 ] && ok || bad "the program ran $(ls log | wc -l) times, want 5"
mkdir rows
sqlite3 s.db "SELECT writefile('rows/' || iteration || '.' || status || '.map',
  text) FROM evaluations" > /dev/null
for f in rows/*.map; do
  ran=no
  for l in log/*.map; do cmp -s "$f" "$l" && ran=yes; done
  case $f in
  *.screened.map) [ $ran = no ] && ok || bad "screened $f was run" ;;
  *) [ $ran = yes ] && ok || bad "$f is recorded as run and was not" ;;
  esac
done
# Never the best: the best is a real run.
best=$(sed -n 's/^best: evaluation \([0-9]*\),.*/\1/p' out)
[ "$(sqlite3 s.db "SELECT status FROM evaluations WHERE iteration = $best - 1")" = ok ] &&
  ok || bad "the best, evaluation $best, is not a real run"
# The report and the best's file count them apart too.
expect_rc 0 "$M" report s.db --html r.html
expect_in r.html "3 real runs, $screened screened out by the model"
expect_in s.db.map "($screened of them screened out by the model, not run)"
# Interrupted at its second real run (the program's fourth), the run
# resumes to the records of the uninterrupted one.
mkdir klog
rm -f pid
tune k.db klog 3 > k.out 2> k.err
[ $? = 1 ] && ok || bad "the interrupted run did not exit 1: $(cat k.err)"
[ "$(sqlite3 k.db "SELECT status FROM runs")" = interrupted ] &&
  ok || bad "not interrupted: $(sqlite3 k.db 'SELECT status FROM runs')"
line=$(sed -n 's/^  mapopt//p' k.err)
expect_rc 0 sh -c "'$M'$line --quiet"
q="SELECT iteration, hash, status, metric, predicted FROM evaluations ORDER BY iteration"
if [ "$(sqlite3 k.db "$q")" = "$(sqlite3 s.db "$q")" ]; then ok
else bad "the resumed run's records differ from the uninterrupted run's"
  sqlite3 k.db "$q"; fi
# Resumed once more, the finished run is as it was.
expect_rc 0 sh -c "'$M'$line --quiet --force"
expect_in out "3 real runs by random, $screened screened out by the model"
# What it refuses: --screen is 1 to 64, and needs --run.
for v in 0 -1 x 65 2.5; do
  expect_rc 2 "$M" tune summa:small --budget 2 --db b.db --screen "$v" \
    --run "sh $T/run.sh $T/log {mapper}"
  expect_in err "--screen must be 1 to 64"
done
expect_rc 2 "$M" tune summa:small --budget 2 --db b.db --screen 2
expect_in err "--screen needs --run"
finish
