#!/bin/sh
# check_access.sh on a small tree made here: getters pass, and each kind of
# direct indexing outside src/app and src/sim fails with its FILE:LINE,
# on the usual receivers and on names the file declares with the type.
# Usage: test_check_access.sh SOURCE_DIR
set -u
CHECK=$1/tests/style/check_access.sh
T=${TMPDIR:-/tmp}/test_check_access.$$
trap 'rm -rf "$T"' EXIT
fails=0
make_tree() {
  rm -rf "$T"
  mkdir -p "$T/src/app" "$T/src/sim" "$T/src/tune" "$T/tests/style"
  cat >"$T/src/tune/a.c" <<'X'
const mapopt_app_op *o = mapopt_app_run_op(run, i);
const space_task *st = &sp->tasks[t];
int n = w->pieces[0] + e->reqs[1].x;
int c = m->procs[k].count + machine->mems[0].capacity; /* a machine's */
X
  echo 'const mapopt_app_op *o = &run->ops[i];' >"$T/src/app/a.c"
  echo 'const mapopt_app_req *q = &op->reqs[j];' >"$T/src/sim/a.c"
}
# expect NAME STATUS OUTPUT_LINE
expect() {
  out=$(sh "$CHECK" "$T" 2>&1)
  st=$?
  if [ "$st" != "$2" ]; then
    echo "FAIL $1: exit $st, expected $2"; echo "$out"; fails=$((fails + 1))
  elif [ -n "$3" ] && ! printf '%s\n' "$out" | grep -qF -- "$3"; then
    echo "FAIL $1: no line '$3' in"; echo "$out"; fails=$((fails + 1))
  else
    echo "ok $1"
  fi
}
make_tree
expect clean 0 ""
for bad in 'x = run->ops[i].task;' 'x = sp->run->tasks[t].name;' \
  'x = o->reqs[r].priv;' 'x = first->names[0];' 'x = va->requires[k].args;' \
  'x = r->field_bytes[f];' 'x = run->pieces + 2;' 'x = piece->atoms[a].atom;' \
  'x = in->res->waits[i].cause;' 'x = a->copies[k].bytes;' \
  'x = res->procs[p].busy_ns;' 'x = r->mems[m].peak_bytes;' \
  'x = p.res->decisions[i].task;' 'x = d->reqs[j].memory;' \
  'x = r->critical_path.segments[0].op;'; do
  make_tree
  printf '%s\n' "$bad" >>"$T/src/tune/a.c"
  expect "planted: $bad" 1 "src/tune/a.c:5:$bad"
done
# A receiver under a name of the file's own, declared with the type: a
# renamed local, a parameter, a member.
for pair in 'const mapopt_app_run *model = t->run;|x = model->tasks[0].name;' \
  'void f(const mapopt_app_op *launch) {|x = launch->reqs[0].priv;' \
  'const mapopt_app_req *arg = q;|x = arg->names[1];' \
  'const mapopt_sim_result *after = y;|x = after->procs[0].busy_ns;' \
  'mapopt_sim_result *const before;|x = before->mems + 1;' \
  'const mapopt_sim_task_stats *busiest = y;|x = busiest->reqs[0].memory;' \
  '  const mapopt_sim_decision *chosen;|x = chosen->reqs[0].name;'; do
  make_tree
  printf '%s\n%s\n' "${pair%%|*}" "${pair#*|}" >>"$T/src/tune/a.c"
  expect "declared: ${pair#*|}" 1 "src/tune/a.c:6:${pair#*|}"
done
# The same field names on a receiver declared with another type pass.
make_tree
printf '%s\n' 'const mapopt_machine *after = m;' \
  'x = after->procs[0].count;' >>"$T/src/tune/a.c"
expect "another type's procs" 0 ""
make_tree
printf '%s\n' 'x = run->ops[i].task;' >>"$T/src/tune/a.c"
echo src/tune/a.c >"$T/tests/style/access_pending.txt"
expect pending 0 ""
[ $fails -eq 0 ]
