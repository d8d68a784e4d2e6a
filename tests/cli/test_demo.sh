#!/bin/sh
# `make demo` (tools/demo.sh) shows a real win: the tuned mapper beats both
# the expert and the default mapper by at least 5% in the model, and the
# report's best box shows the mapper; where the default mapper is already
# best (circuit), the summary and the report say so and why; an
# application without an expert mapper (every user's own) is measured
# against its default mapper in the summary, bench and report.
# Usage: test_demo.sh MAPOPT_BINARY SOURCE_DIR
set -u
M=$1
ROOT=$2
. "$(dirname "$0")/lib.sh"

expect_rc 0 sh "$ROOT/tools/demo.sh" "$M" "$T/demo"
for base in expert default; do
  x=$(sed -n "s/^  \([0-9.]*\)x the $base mapper.*/\1/p" out)
  if [ -n "$x" ] && awk -v x="$x" 'BEGIN { exit !(x >= 1.05) }'; then ok
  else bad "the demo's best is ${x:-no}x the $base mapper, want at least 1.05x"; cat out; fi
done
expect_in demo/summa.best.map "# The best mapper of \`mapopt tune summa\`"
# the best box holds the mapper found
grep -q '<figcaption>best</figcaption><pre class="mapper">[^<]' demo/report.html &&
  ok || bad "the demo report's best box is empty"
grep -q "The default mapper is already" demo/report.html &&
  bad "the demo's report says the default mapper is best" || ok

expect_rc 0 "$M" tune circuit --db c.db --out c.map --quiet
expect_in out "the default mapper is already the best found: its time is within 0.1% of the lower bound"
expect_rc 0 "$M" report c.db --html c.html
expect_in c.html "The default mapper is already the best found: its time is within 0.1% of the lower bound"

H="$ROOT/apps/heat1d.json"
expect_rc 0 "$M" tune "$H" --optimizer random --budget 3 --db h.db --out h.map --quiet
expect_in out "x the default mapper ("
expect_rc 0 "$M" bench --apps "$H" --optimizers random --budget 3 --runs 1 --db h.db --quiet
expect_in out "$H (vs default): x the default mapper (it ships no expert mapper)"
expect_rc 0 "$M" report h.db --html h.html
expect_in h.html "x the default mapper"
expect_in h.html "No expert mapper: normalized to the default mapper."
finish
