#!/bin/sh
# The main job of `make demo`: tune a mapper for the circuit benchmark on the
# paper's machine (4 P100 GPUs, simulated), write the HTML report of the
# run, and show the simulated run of the mapper found. Everything goes to a
# fresh folder (default build/demo): the best mapper, the tuning database
# and the report.
set -e
M=$(cd "$(dirname "${1:-build/mapopt}")" && pwd)/$(basename "${1:-build/mapopt}")
OUT=${2:-build/demo}
rm -rf "$OUT"
mkdir -p "$OUT"
cd "$OUT"
OUT=$(pwd)
echo "== mapopt tune circuit        (in $OUT)"
"$M" tune circuit
echo
echo "== mapopt report mapopt-tune.db --html report.html"
"$M" report mapopt-tune.db --html report.html
echo
echo "== mapopt sim circuit --mapper circuit.best.map   (the last lines)"
"$M" sim circuit --mapper circuit.best.map | tail -n 3
echo
echo "best mapper: $OUT/circuit.best.map"
echo "report:      $OUT/report.html (open it in a browser)"
echo "database:    $OUT/mapopt-tune.db (every evaluation; docs/tuning.md)"
