#!/bin/sh
# Noise in real runs (docs/real.md section 13), with a test program that
# sleeps 10 ms give or take 20% (tests/eval/evalprog.c): tuned with --run
# whatever the mapper, no gain is reported -- "within noise of the default
# mapper" -- for each of 10 seeds; when an AOS Layout makes it 2.8 times
# as fast, the gain is found and reported with its interval, and the
# database holds every evaluation's runs and interval and the final check.
# Usage: test_noise.sh MAPOPT_BINARY EVALPROG_BINARY SOURCE_DIR
set -u
M=$1
E=$2
ROOT=$3
. "$(dirname "$0")/lib.sh"
require_sqlite3
APP="$ROOT/apps/heat1d.json"

for seed in 0 1 2 3 4 5 6 7 8 9; do
  expect_rc 0 "$M" tune "$APP" --optimizer random --budget 8 --seed "$seed" \
    --run "$E noisy 10 {mapper}" --db noisy.db --out "noisy$seed.map" --quiet
  if grep -q "within noise of the default mapper: .* no gain" out &&
     grep -q "keep the default mapper" out; then ok
  else bad "seed $seed: noise reported as a gain"; cat out; fi
done

expect_rc 0 "$M" tune "$APP" --optimizer random --budget 8 --seed 1 \
  --run "$E layout 10 {mapper}" --db layout.db --out layout.map --quiet
# "2.7x the default mapper (...), interval [2.2, 3.3] from 5 ...: faster"
line=$(grep "x the default mapper" out)
if echo "$line" | awk '{ x = $1 + 0; lo = $0; sub(/.*interval \[/, "", lo);
     exit !(x >= 2 && lo + 0 > 1.5 && /from 5 interleaved runs of each: faster$/) }'
then ok; else bad "the 2.8x of AOS was not reported: $line"; cat out; fi
expect_in layout.map "AOS"
# Racing: the candidates slower than the best stop early, the best has the
# most runs; every success has its interval around its median.
runs=$(sqlite3 layout.db "SELECT MIN(runs) || ' ' || MAX(runs) FROM evaluations WHERE status = 'ok'")
case $runs in
"1 10") ok ;;
*) bad "racing: runs per evaluation $runs, want 1 (clearly slower) to 10" ;;
esac
n=$(sqlite3 layout.db "SELECT COUNT(*) FROM evaluations WHERE status = 'ok' AND NOT (score_low <= metric AND metric <= score_high AND scores IS NOT NULL)")
[ "$n" = 0 ] && ok || bad "$n evaluations without their interval"
n=$(sqlite3 layout.db "SELECT rounds || ' ' || verdict FROM checks WHERE baseline = 'default'")
[ "$n" = "5 faster" ] && ok || bad "the final check recorded '$n'"
# --check 0: no final check, the evaluations' intervals alone.
expect_rc 0 "$M" tune "$APP" --optimizer random --budget 4 --seed 2 --check 0 \
  --run "$E layout 10 {mapper}" --db layout.db --out nocheck.map --quiet
expect_in out "from the evaluations' runs (no final check)"
expect_rc 2 "$M" eval layout.map --check 3 --run "$E noisy 10 {mapper}"
expect_in err "--check is an option of mapopt tune --run"
finish
