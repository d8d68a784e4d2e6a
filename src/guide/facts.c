/*
 * What AutoGuide's rules ask of the optional inputs: a task's ops,
 * variants and argument names (the application run), the function a
 * mapper binds to a task (the compiled mapper), processor counts (the
 * machine, or the result's processor list), and the number formats every
 * message uses. Each answers "unknown" (NULL, 0) when the input it needs
 * was not given, so a rule works on text alone and says more with more.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "guide/guide.h"

const mapopt_app_op *mapopt__guide_first_op(const mapopt_app_run *run,
                                            const char *task) {
  if (!run || !task)
    return NULL;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind == MAPOPT_OP_TASK &&
        strcmp(mapopt_app_task_name(run, o->task), task) == 0)
      return o;
  }
  return NULL;
}

const mapopt_app_task *mapopt__guide_task(const mapopt_app_run *run,
                                          const char *task) {
  for (int t = 0; run && task && t < run->ntasks; t++)
    if (strcmp(mapopt_app_task_name(run, t), task) == 0)
      return mapopt_app_run_task(run, t);
  return NULL;
}

const char *mapopt__guide_arg_name(const mapopt_app_run *run, const char *task,
                                   int64_t index) {
  const mapopt_app_op *o = mapopt__guide_first_op(run, task);
  if (!o || index < 0 || (size_t)index >= o->nreqs ||
      mapopt_app_op_req(o, index)->nnames == 0)
    return NULL;
  return mapopt_app_req_name(mapopt_app_op_req(o, index), 0);
}

const char *mapopt__guide_index_fn(const mapopt_guide_input *in,
                                   const char *task, mapopt_proc_kind kind) {
  if (!in->mapper || !task)
    return NULL;
  return mapopt_policy_map_function(in->mapper, task, kind, false);
}

const char *mapopt__guide_kind_list(mapopt_findings *f, unsigned kinds) {
  static const mapopt_proc_kind order[] = {MAPOPT_PROC_GPU, MAPOPT_PROC_OMP,
                                           MAPOPT_PROC_CPU};
  char buf[32] = "";
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    if (kinds >> order[i] & 1u) {
      if (buf[0])
        strcat(buf, ",");
      strcat(buf, mapopt_shape_proc_name(order[i]));
    }
  return mapopt__guide_strndup(f, buf, strlen(buf));
}

int64_t mapopt__guide_procs_of(const mapopt_guide_input *in,
                               mapopt_proc_kind kind) {
  if (in->machine)
    return in->machine->nodes * in->machine->procs[kind].count;
  int64_t n = 0;
  const char *name = mapopt_shape_proc_name(kind);
  for (size_t i = 0; in->result && i < mapopt_sim_result_nprocs(in->result);
       i++)
    n += strcmp(mapopt_sim_result_proc(in->result, i)->kind, name) == 0;
  return n;
}

void mapopt__guide_fmt_ns(char *buf, size_t size, int64_t ns) {
  double x = (double)ns;
  if (ns >= 1000000000)
    snprintf(buf, size, "%.2f s", x / 1e9);
  else if (ns >= 1000000)
    snprintf(buf, size, "%.1f ms", x / 1e6);
  else if (ns >= 1000)
    snprintf(buf, size, "%.1f us", x / 1e3);
  else
    snprintf(buf, size, "%" PRId64 " ns", ns);
}

void mapopt__guide_fmt_bytes(char *buf, size_t size, int64_t bytes) {
  double x = (double)bytes;
  if (bytes >= 1000000000)
    snprintf(buf, size, "%.2f GB", x / 1e9);
  else if (bytes >= 1000000)
    snprintf(buf, size, "%.1f MB", x / 1e6);
  else if (bytes >= 1000)
    snprintf(buf, size, "%.1f kB", x / 1e3);
  else
    snprintf(buf, size, "%" PRId64 " B", bytes);
}

void mapopt__guide_fmt_end(char *buf, size_t size, const mapopt_sim_end *e) {
  mapopt_mem_kind mk;
  if (!e->kind)
    snprintf(buf, size, "?");
  else if (e->rank > 0 && mapopt_shape_mem_parse(e->kind, &mk) != MAPOPT_OK &&
           strcmp(e->kind, "GPU") != 0)
    /* A CPU's, OMP's or UTIL's index counts within its rank; a GPU's and
     * a memory's within the node. */
    snprintf(buf, size, "%s %" PRId64 " of node %" PRId64 " rank %" PRId64,
             e->kind, e->index, e->node, e->rank);
  else
    snprintf(buf, size, "%s %" PRId64 " of node %" PRId64, e->kind, e->index,
             e->node);
}

void mapopt__guide_wait_label(char *buf, size_t size,
                              const mapopt_sim_wait *w) {
  char arg[160] = "", how[240] = "", a[64], b[64];
  if (w->arg >= 0)
    snprintf(arg, sizeof arg, " %s@%d",
             w->arg_name && w->arg_name[0] ? w->arg_name : "", w->arg);
  if (w->cause == MAPOPT_SIM_CAUSE_PROCESSOR && w->to.kind) {
    mapopt__guide_fmt_end(b, sizeof b, &w->to);
    snprintf(how, sizeof how, " on %s%s%s", b, w->other ? ", behind " : "",
             w->other ? w->other : "");
  } else if (w->channel >= 0) {
    mapopt__guide_fmt_end(b, sizeof b, &w->to);
    if (w->from.kind && w->from.node == w->to.node)
      snprintf(a, sizeof a, "%s %" PRId64 " -> ", w->from.kind, w->from.index);
    else if (w->from.kind)
      mapopt__guide_fmt_end(a, sizeof a, &w->from), strcat(a, " -> ");
    else
      a[0] = 0;
    snprintf(how, sizeof how, " %s %s%s%s%s",
             mapopt_sim_copy_kind_name(w->channel), a, b,
             w->other ? ", of " : "", w->other ? w->other : "");
  }
  snprintf(buf, size, "%s%s: %s%s", w->task ? w->task : "(no task)", arg,
           mapopt_sim_cause_name(w->cause), how);
}
