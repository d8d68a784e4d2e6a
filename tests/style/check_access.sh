#!/bin/sh
# The narrow view of a run (docs/architecture.md, "The narrow view of a
# run"): no C file outside src/app and src/sim indexes an instantiated
# run's arrays, or does pointer arithmetic on them; they go through the
# getters of include/mapopt/app.h. A field name only an app run has is
# matched on any receiver; the names other structs share (tasks, pieces,
# regions, reqs, names) only on the receivers the code base gives an app
# run, op or requirement (run, op, o, p, w, req, first). Files listed in
# tests/style/access_pending.txt are not converted yet and are skipped.
# The same holds for a simulation result's arrays (the accessors of
# include/mapopt/sim.h): waits, copies, decisions and critical-path
# segments on any receiver, procs and mems on the receivers a result has
# (r, res, result: a machine's have the same names), a decision's
# arguments on d. Each violation is printed as FILE:LINE:text.
# Usage: check_access.sh SOURCE_DIR
set -u
ROOT=$1
cd "$ROOT" || exit 2
ix='[[:space:]]*(\[|\+[^+=])'
own='(ops|partition_names|partition_colors|atom_region|atom_elements|param_names|param_values|variants|atoms|field_names|field_bytes|requires|prefers|fixed_ns|reuse)'
pat="(->|\.)$own$ix|run(->|\.)(tasks|pieces|regions)$ix|\<(op|o|p|w)(->|\.)reqs$ix|\<(req|first)->names$ix|(->|\.)(waits|copies|decisions|segments)$ix|\<(r|res|result)(->|\.)(procs|mems)$ix|\<d->reqs$ix"
pending=tests/style/access_pending.txt
status=0
for f in $(find src -name '*.c' -o -name '*.h' | sort); do
  case $f in
    src/app/* | src/sim/*) continue ;;
  esac
  if [ -f "$pending" ] && grep -qx "$f" "$pending"; then
    continue
  fi
  if grep -nE "$pat" "$f" | sed "s|^|$f:|" | grep .; then
    status=1
  fi
done
if [ $status -ne 0 ]; then
  echo "FAIL: the lines above index an app run's or a simulation result's" \
    "arrays outside app/ and sim/; use the getters of include/mapopt/app.h" \
    "and include/mapopt/sim.h"
fi
exit $status
