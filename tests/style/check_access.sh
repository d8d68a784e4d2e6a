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
# arguments on d, a busiest task's arguments on t and ts.
#
# Beyond those usual names, every name a file declares with one of these
# types (`const mapopt_app_run *model`, a parameter, a local or a struct
# member; the first declarator of a declaration) is a receiver of that
# type's shared fields in that file, so a renamed local is matched too.
# What still slips past: a receiver whose type this file does not spell
# (a member of a struct declared in a header, under a name other than the
# usual ones), a second declarator (`*a, *b`), a typedef of its own, an
# expression as the receiver (`(x ? a : b)->reqs[i]`), and a pointer to an
# element taken first (`q = r->procs; q[i]`): the check reads text, not
# types. Each violation is printed as FILE:LINE:text.
# Usage: check_access.sh SOURCE_DIR
set -u
ROOT=$1
cd "$ROOT" || exit 2
ix='[[:space:]]*(\[|\+[^+=])'
own='(ops|partition_names|partition_colors|atom_region|atom_elements|param_names|param_values|variants|atoms|field_names|field_bytes|requires|prefers|fixed_ns|reuse)'
# The names file $f declares with type $1 (a pattern), each followed by
# "|".
declared() {
  grep -oE "\<$1[[:space:]]*[*]+[[:space:]]*(const[[:space:]]+)?[A-Za-z_][A-Za-z0-9_]*" \
    "$f" | sed -E 's/.*[*[:space:]]//' | sort -u | tr '\n' '|'
}
# The receivers of a type's shared fields in file: the names it declares
# with type $1 and the usual ones, $2 (a pattern).
receivers() {
  names=$(declared "$1")
  if [ -n "$names" ]; then
    printf '(\\<(%s)|%s)' "${names%|}" "$2"
  else
    printf '(%s)' "$2"
  fi
}
pending=tests/style/access_pending.txt
status=0
for f in $(find src -name '*.c' -o -name '*.h' | sort); do
  case $f in
    src/app/* | src/sim/*) continue ;;
  esac
  if [ -f "$pending" ] && grep -qx "$f" "$pending"; then
    continue
  fi
  run=$(receivers mapopt_app_run 'run')
  op=$(receivers mapopt_app_op '\<(op|o|p|w)')
  req=$(receivers mapopt_app_req '\<(req|first)')
  res=$(receivers mapopt_sim_result '\<(r|res|result)')
  with_reqs=$(receivers '(mapopt_sim_decision|mapopt_sim_task_stats)' \
    '\<(d|t|ts)')
  pat="(->|\.)$own$ix|$run(->|\.)(tasks|pieces|regions)$ix|$op(->|\.)reqs$ix|$req->names$ix|(->|\.)(waits|copies|decisions|segments)$ix|$res(->|\.)(procs|mems)$ix|$with_reqs->reqs$ix"
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
