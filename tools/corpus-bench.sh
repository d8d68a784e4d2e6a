#!/bin/sh
# The corpus table of docs/results.md ("The corpus"): every model of
# apps/corpus tuned by guided and ccd at 10 evaluations and by ccd, random
# and opentuner at 100, on p100x4 at each model's default size and on
# lassen:nodes=2 at its `cluster` size (and the 3-D stencil's `cluster`
# size on cpu-cluster), normalized to the default mapper.
#
# The models ship no expert or default mapper, so `mapopt bench` reports
# their raw metric; this script simulates the default mapper (an empty
# mapper: the DSL's defaults, where guided and ccd start) on the same
# machine and size and divides by its metric. Every run goes to DB, so a
# second call reuses them (runs are deterministic). A cell is the mean over
# the runs of the best mapper's metric over the default mapper's, with the
# worst run when it differs, or how many runs found a valid mapper when
# some did not (a run that found none counts 0 in the mean).
#
# Usage: tools/corpus-bench.sh [MAPOPT [RUNS [DB]]]   (needs jq)
# MAPOPT defaults to build-rel/mapopt, RUNS (seeds 0..RUNS-1) to 1, DB to
# corpus-bench.db. Run from the repository root.
set -eu
M=${1:-build-rel/mapopt}
RUNS=${2:-1}
DB=${3:-corpus-bench.db}
command -v jq >/dev/null || { echo "corpus-bench.sh: needs jq (apt-get install jq)" >&2; exit 2; }
[ -x "$M" ] || { echo "corpus-bench.sh: no program $M (build it first)" >&2; exit 2; }
[ -d apps/corpus ] || { echo "corpus-bench.sh: run it from the repository root" >&2; exit 2; }

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
: > "$W/default.map"
all=$(ls apps/corpus/*.json | tr '\n' ',' | sed 's/,$//')

# table MACHINE SIZE APPS: the rows of one machine, in markdown.
table() {
  machine=$1 size=$2 apps=$3
  sizeopt=
  [ "$size" = - ] || sizeopt="--size $size"
  # shellcheck disable=SC2086
  "$M" bench --apps "$apps" --machine "$machine" $sizeopt --optimizers guided,ccd \
    --budget 10 --runs "$RUNS" --db "$DB" --quiet --json > "$W/b10.json"
  # shellcheck disable=SC2086
  "$M" bench --apps "$apps" --machine "$machine" $sizeopt --optimizers ccd,random,opentuner \
    --budget 100 --runs "$RUNS" --db "$DB" --quiet --json > "$W/b100.json"
  for app in $(echo "$apps" | tr ',' ' '); do
    spec=$app
    [ "$size" = - ] || spec=$app:$size
    "$M" sim "$spec" --mapper "$W/default.map" --machine "$machine" --json > "$W/d.json" ||
      { echo "corpus-bench.sh: the default mapper fails on $spec, $machine" >&2; exit 1; }
    jq -r -s --arg app "$app" --arg machine "$machine" --arg size "$size" '
      def fixed3: (. * 1000 | round) / 1000 | tostring
        | if test("\\.") then . + "000" | .[0:index(".") + 4] else . + ".000" end;
      # bench normalizes a model without an expert to its default mapper
      # itself (normalized_to "default"); raw metrics are divided here.
      def cell($rows; $d; $want):
        ($rows | map(select(.row == $want)) | .[0]) as $r
        | if $r == null then "-"
          else (if $r.normalized_to == "default" then 1 else $d.value end) as $div
          | if $r.valid == 0 then "0 (none valid)"
            else ($r.mean / $div | fixed3)
                 + (if $r.valid < $r.runs then " (\($r.valid)/\($r.runs) valid)"
                    elif ($r.worst / $div | fixed3) != ($r.mean / $div | fixed3)
                    then " (worst \($r.worst / $div | fixed3))"
                    else "" end)
            end
          end;
      (.[0].metric) as $d
      | ([.[1].rows[], .[2].rows[]] | map(select(.app == $app))) as $rows
      | "| \($app | sub("^apps/corpus/"; "") | sub("\\.json$"; "")) | \($machine) | \($size) | "
        + "\(cell($rows; $d; "guided(full)@10")) | \(cell($rows; $d; "ccd@10")) | "
        + "\(cell($rows; $d; "ccd@100")) | \(cell($rows; $d; "random@100")) | "
        + "\(cell($rows; $d; "opentuner@100")) | \($d.value | tostring) \($d.unit) |"
' "$W/d.json" "$W/b10.json" "$W/b100.json"
  done
}

echo "| model | machine | size | guided@10 | ccd@10 | ccd@100 | random@100 | opentuner@100 | default mapper |"
echo "|---|---|---|---|---|---|---|---|---|"
table p100x4 - "$all"
table lassen:nodes=2 cluster "$all"
table cpu-cluster cluster apps/corpus/stencil3d.json
