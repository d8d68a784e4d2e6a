#!/bin/sh
# The HTML report in a real browser: headless Chromium loads the page
# written by `mapopt report`, the test reads the DOM back (the page's own
# script ran and counted one convergence curve per optimizer row, the
# tables are there) and checks that nothing was logged to the console (no
# script error); a screenshot is saved as OUT_DIR/report.png. Exit 77
# (skipped, with a message) when chromium or sqlite3 is not installed.
# Usage: test_report.sh MAPOPT_BINARY OUT_DIR
set -u
M=$1
OUT=$2
for p in chromium sqlite3; do
  if ! command -v $p > /dev/null; then
    echo "SKIP: $p is not installed (make check installs it: apt-get install $p)"
    exit 77
  fi
done
. "$(dirname "$0")/lib.sh"

# Two benchmarks; on circuit two rows (budgets 6 and 3), so three curves.
"$M" bench --apps circuit,stencil --size small --optimizers random --budget 6 \
  --runs 2 --db r.db --quiet > /dev/null || bad "bench failed"
"$M" bench --apps circuit --size small --optimizers random --budget 3 \
  --runs 2 --db r.db --quiet > /dev/null || bad "bench failed"
"$M" report r.db --html report.html || bad "report failed"
want=$(sqlite3 r.db "SELECT COUNT(*) FROM (SELECT DISTINCT app, size, machine, optimizer, budget FROM runs)")
[ "$want" = 3 ] && ok || bad "the database has $want rows of runs"

# Chromium as root, offline, in a fresh profile.
chrome() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d "$T/profile.XXXXXX")" "$@"
}
chrome --enable-logging=stderr --v=0 --dump-dom "file://$T/report.html" \
  > dom.html 2> console.log || bad "chromium failed: $(tail -n 3 console.log)"
n=$(grep -o '<polyline class="curve"' dom.html | wc -l)
[ "$n" = "$want" ] && ok || bad "$n curves in the DOM, want $want"
grep -q "id=\"report-ok\" data-curves=\"$want\"" dom.html && ok ||
  bad "the page's script did not run to the end"
[ "$(grep -o '<table class="summary">' dom.html | wc -l)" = 2 ] && ok ||
  bad "not one summary table per benchmark"
grep -q '<table class="runs">' dom.html && ok || bad "no table of runs"
grep -q 'data-error=' dom.html && bad "script error: $(grep -o 'data-error="[^"]*"' dom.html)" || ok
if grep ':CONSOLE' console.log; then bad "the page logged to the console"; else ok; fi

chrome --window-size=1200,1800 --screenshot="$OUT/report.png" \
  "file://$T/report.html" > shot.log 2>&1
[ -s "$OUT/report.png" ] && ok || bad "no screenshot: $(tail -n 3 shot.log)"
echo "screenshot: $OUT/report.png"

finish
