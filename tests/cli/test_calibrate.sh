#!/bin/sh
# mapopt calibrate against a known truth: the "real program" is mapopt's
# own simulator on a machine whose GPUs compute at half the rate and whose
# memories have 0.7 of the bandwidth of p100x4 (docs/real.md, "Calibrating
# the model"). Tuned with --run on the p100x4 model, the database's runs are
# fitted back to those factors, the held-out error falls, and the machine
# written is one sim takes; the kernels' factors add nothing there, so the
# application written is the one tuned. Then what it refuses. Then a truth
# that differs in one kernel, which the kernels' factors find.
# Usage: test_calibrate.sh MAPOPT_BINARY
set -u
M=$1
. "$(dirname "$0")/lib.sh"
require_sqlite3

"$M" machine show p100x4 |
  sed -e 's/"gflops_f64": 4700/"gflops_f64": 2350/' \
      -e 's/"gflops_f32": 9300/"gflops_f32": 4650/' \
      -e 's/"gflops_f64_matrix": 4700/"gflops_f64_matrix": 2350/' \
      -e 's/"gflops_f64": 38.4/"gflops_f64": 19.2/g' \
      -e 's/"gflops_f32": 76.8/"gflops_f32": 38.4/g' \
      -e 's/"bw_gbs": 550,/"bw_gbs": 385,/' > slow.json
grep -q '"gflops_f64": 2350' slow.json && ok || bad "slow.json was not made"
expect_rc 0 "$M" tune summa:small --optimizer ccd --budget 15 --db c.db \
  --out c.map --quiet --repeat-max 1 --check 0 \
  --run "$M sim summa:small --machine $T/slow.json --mapper {mapper}"
expect_rc 0 "$M" calibrate c.db -o fit.json --app-out capp.json
cp out c.note
# Every successful real run is a sample; every third is held out.
n=$(sqlite3 c.db "SELECT COUNT(*) FROM evaluations WHERE status = 'ok'")
[ "$n" -ge 9 ] && ok || bad "the tuning run recorded $n successful runs, want >= 9"
expect_in out "calibrate: $n real runs of summa:small on p100x4 (1 tuning runs): $((n - n / 3)) fitted, $((n / 3)) held out"
expect_in out "processor rates x0.5,"
before=$(sed -n 's/.*before: median error \([0-9.]*\)%.*/\1/p' out)
after=$(sed -n 's/.*after:  median error \([0-9.]*\)%.*/\1/p' out)
if awk -v b="$before" -v a="$after" 'BEGIN { exit !(b > 5 && a < 2) }'; then ok
else bad "held-out error $before% -> $after%, want above 5% -> below 2%"; cat out; fi
expect_in out "Kendall tau"
expect_rc 0 "$M" sim summa:small --machine fit.json --mapper c.map
expect_in fit.json '"gflops_f64": 2350'
# The difference is the machine's: the kernels' factors are fitted and not
# kept, and the application written simulates as summa does.
expect_in c.note "(held out): not 0.1 point below the groups alone, not kept (the application unchanged)"
expect_in c.note "  wrote capp.json (unchanged; use it as the application capp.json:small)"
"$M" sim summa:small --machine fit.json --mapper c.map > tuned.out 2>&1
"$M" sim capp.json:small --machine fit.json --mapper c.map > written.out 2>&1
grep -q "metric gflops" tuned.out && cmp -s tuned.out written.out && ok ||
  bad "capp.json:small does not simulate as summa:small"
# what it refuses
expect_rc 1 "$M" calibrate c.db -o fit.json
expect_in err "fit.json exists; give --force"
expect_rc 1 "$M" calibrate c.db -o fit4.json --app-out capp.json
expect_in err "capp.json exists; give --force"
[ ! -e fit4.json ] && ok || bad "calibrate wrote fit4.json though capp.json exists"
expect_rc 0 "$M" tune summa:small --budget 2 --db sim.db --out s.map --quiet
expect_rc 1 "$M" calibrate sim.db -o f2.json
expect_in err "the database has no real runs (mapopt tune --run records them)"
expect_rc 0 "$M" tune summa:small --optimizer ccd --budget 3 --db few.db \
  --out f.map --quiet --repeat-max 1 --check 0 \
  --run "$M sim summa:small --machine $T/slow.json --mapper {mapper}"
expect_rc 1 "$M" calibrate few.db -o f3.json
expect_in err "at least 6 are needed"
expect_rc 2 "$M" calibrate c.db
expect_in err "no -o FILE"
# A difference the four groups cannot express: in the "real program" one
# task's GPU kernel runs at half its model's efficiency (heat1d with relax
# made compute-bound). The groups alone absorb it into absurd factors that
# predict the held-out runs worse than the model they started from (2.7%
# against 0.0%: most held-out runs have relax on the CPU); the kernels'
# factors, fitted with the groups from the starting model, find it: relax
# on GPU x0.5, the groups at 1.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
sed 's/"flops": "5 \* elems(0)"/"flops": "20000 * elems(0)"/' \
  "$ROOT/apps/heat1d.json" > base.json
sed 's/"kind": "GPU", "flops": "20000 \* elems(0)", "precision": "f64", "flops_eff": 0.5/"kind": "GPU", "flops": "20000 * elems(0)", "precision": "f64", "flops_eff": 0.25/' \
  base.json > truth.json
grep -q '"flops_eff": 0.25,' truth.json && ! cmp -s base.json truth.json && ok ||
  bad "truth.json was not made"
expect_rc 0 "$M" tune "$T/base.json" --optimizer random --budget 18 --db h.db \
  --out h.map --quiet --repeat-max 1 --check 0 \
  --run "$M sim $T/truth.json --mapper {mapper}"
expect_rc 0 "$M" calibrate h.db -o h.json --app-out happ.json
cp out h.note
expect_in h.note "  the groups alone: median error 2.7%"
expect_in h.note "(held out): kept"
expect_in h.note "  fitted: processor rates x1, memory bandwidths x1, channel bandwidths x1, per-task overheads x1"
expect_in h.note "    the other 3 kernels as the model has them"
alone=$(sed -n 's/.*the groups alone: median error \([0-9.]*\)%.*/\1/p' h.note)
after=$(sed -n 's/.*after:  median error \([0-9.]*\)%.*/\1/p' h.note)
if awk -v b="$alone" -v a="$after" 'BEGIN { exit !(a < b) }'; then ok
else bad "held-out error $after% with the kernels, $alone% without"; fi
# relax's GPU kernel fitted within 10% of the truth's efficiency (0.25)
eff=$(sed -n 's/^    relax on GPU x[0-9.]*: flops_eff 0.5 -> \([0-9.]*\),.*/\1/p' h.note)
if awk -v e="$eff" 'BEGIN { exit !(e != "" && e > 0.225 && e < 0.275) }'; then ok
else bad "relax on GPU fitted to flops_eff '$eff', want 0.25 +- 10%"; cat h.note; fi
expect_in h.note "  wrote happ.json (use it as the application happ.json)"
# The application written loads, and sim on it and the machine written
# predicts every held-out run (every third successful one) within 0.2%
# (the starting model misses two of them by 45%, docs/real.md).
sqlite3 h.db "SELECT iteration, metric FROM evaluations WHERE status = 'ok'
              ORDER BY iteration" > h.ok
elapsed() {
  "$M" sim "$1" --machine "$2" --mapper held.map 2>/dev/null |
    sed -n 's/^ELAPSED TIME = *\([0-9.]*\) s$/\1/p'
}
i=0
while IFS='|' read -r it metric; do
  i=$((i + 1))
  [ $((i % 3)) = 0 ] || continue
  sqlite3 h.db "SELECT text FROM evaluations WHERE iteration = $it" > held.map
  fitted=$(elapsed happ.json h.json)
  if awk -v t="$fitted" -v m="$metric" \
       'BEGIN { e = t * m - 1; exit !(t != "" && e < 0.002 && e > -0.002) }'
  then ok; else bad "held-out run $it: measured $metric 1/s, fitted model $fitted s"; fi
done < h.ok
[ "$i" = 18 ] && ok || bad "$i successful runs, want 18"
# A fit that predicts the held-out runs worse than the model it started
# from is reported and not written: here the "real program" is the model
# itself but for its first three runs, slowed by a cold start (they run on
# the machine at half p100x4's rates), and the fit learns the cold runs.
cat > cold.sh <<EOF
#!/bin/sh
n=\$(cat "$T/count" 2>/dev/null || echo 0)
echo \$((n + 1)) > "$T/count"
[ "\$n" -lt 3 ] && exec "$M" sim summa:small --machine "$T/slow.json" --mapper "\$1"
exec "$M" sim summa:small --mapper "\$1"
EOF
expect_rc 0 "$M" tune summa:small --optimizer ccd --budget 6 --db cold.db \
  --out cold.map --quiet --repeat-max 1 --check 0 --jobs 1 \
  --run "sh $T/cold.sh {mapper}"
expect_rc 1 "$M" calibrate cold.db -o cold.json --app-out cold-app.json
expect_in out "  after:  median error "
expect_in err "the fit predicts the held-out runs worse than p100x4 does"
expect_in err "cold.json and cold-app.json not written"
[ ! -e cold.json ] && [ ! -e cold-app.json ] && ok ||
  bad "calibrate wrote a fit that predicts worse"
finish
