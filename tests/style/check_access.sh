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
# The pattern of a violation in file $f: the shared fields on the usual
# receivers and on the names $f declares with the type (one grep, one awk
# per file: the check runs within its minute on a loaded machine).
types='mapopt_(app_run|app_op|app_req|sim_result|sim_decision|sim_task_stats)'
export own ix
pattern() {
  grep -oE "\<$types[[:space:]]*[*]+[[:space:]]*(const[[:space:]]+)?[A-Za-z_][A-Za-z0-9_]*" "$f" |
    awk '
      { name = $0; sub(/.*[*[:space:]]/, "", name)
        type = $0; sub(/[[:space:]*].*/, "", type)
        group = type ~ /_(sim_decision|sim_task_stats)$/ ? "withreqs" : type
        names[group] = names[group] "\\<" name "|" }
      END {
        own = ENVIRON["own"]; ix = ENVIRON["ix"]
        printf "(->|\\.)%s%s", own, ix
        printf "|(%srun)(->|\\.)(tasks|pieces|regions)%s", names["mapopt_app_run"], ix
        printf "|(%s\\<(op|o|p|w))(->|\\.)reqs%s", names["mapopt_app_op"], ix
        printf "|(%s\\<(req|first))->names%s", names["mapopt_app_req"], ix
        printf "|(->|\\.)(waits|copies|decisions|segments)%s", ix
        printf "|(%s\\<(r|res|result))(->|\\.)(procs|mems)%s", names["mapopt_sim_result"], ix
        printf "|(%s\\<(d|t|ts))->reqs%s\n", names["withreqs"], ix
      }'
}
# Files that name none of the types get the pattern of an empty file.
f=/dev/null
usual=$(pattern)
pending=tests/style/access_pending.txt
status=0
for f in $(find src -name '*.c' -o -name '*.h' | sort); do
  case $f in
    src/app/* | src/sim/*) continue ;;
  esac
  if [ -f "$pending" ] && grep -qx "$f" "$pending"; then
    continue
  fi
  pat=$usual
  if grep -qE "\<$types\>" "$f"; then
    pat=$(pattern)
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
