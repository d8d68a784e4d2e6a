/*
 * AutoGuide's structured edits over the search space: which parameters an
 * edit such as "set the memory of (T, R, GPU) to FBMEM" changes and to
 * which values, and how a profile weighs each parameter. This is what lets
 * the guided optimizer act on a diagnosis: the edit vocabulary is
 * AutoGuide's (include/mapopt/guide.h), the parameters are the space's.
 *
 * An edit names what it is about the way a mapper does (a task, an
 * argument's name or position or `*`, a processor kind); the space keys
 * its parameters by task and argument key, so matching goes through the
 * argument's names. Values map by name; a value that equals the runtime's
 * default is the parameter's "default" when the space has no base mapper.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapopt/sim.h"
#include "tune/tune.h"

static bool wild(const char *s) {
  return !s[0] || !strcmp(s, "*");
}

/* The index of value name v in parameter p, or -1. */
static int value_index(const mapopt_space_param *p, const char *v) {
  for (size_t k = 0; k < p->nvalues; k++)
    if (!strcmp(p->values[k], v))
      return (int)k;
  return -1;
}

static bool push(tune_delta *d, size_t param, int value, int32_t from) {
  for (int i = 0; i < d->n; i++)
    if (d->param[i] == param) { /* a later change of the same parameter */
      d->value[i] = (uint16_t)(value < 0 ? 0 : value);
      d->from[i] = from;
      return true;
    }
  if (d->n >= TUNE_MAX_DELTA)
    return false;
  d->param[d->n] = param;
  d->value[d->n] = (uint16_t)(value < 0 ? 0 : value);
  d->from[d->n] = from;
  d->n++;
  return true;
}

/* Whether key k of task t stands for an argument the edit's region names
 * (a name of the argument, its position, or a wildcard). */
static bool arg_matches(const space_task *t, size_t k, const char *region) {
  if (wild(region))
    return true;
  const key_arg *ka = &MAPOPT__VEC_AT(&t->key_args, key_arg, k);
  for (size_t i = 0; i < ka->nnames; i++)
    if (!strcmp(ka->names[i], region))
      return true;
  char pos[24];
  snprintf(pos, sizeof pos, "%zu", ka->position);
  return !strcmp(pos, region) ||
         !strcmp(MAPOPT__VEC_AT(&t->keys, const char *, k), region);
}

/* The value of a memory, kind or layout parameter for a value name that
 * may be the runtime's default (which the space offers as "default"). */
static int value_or_default(const mapopt_space *sp, const mapopt_space_param *p,
                            const char *v, const char *default_name) {
  int k = value_index(p, v);
  if (k >= 0)
    return k;
  return !sp->base && default_name && !strcmp(v, default_name) ? 0 : -1;
}

static const char *default_memory_name(const mapopt_space *sp,
                                       mapopt_proc_kind k) {
  return mapopt_shape_mem_name(mapopt_shape_default_memory(&sp->shape, k));
}

/* The space's value name for an AutoGuide index-mapping template. */
static const char *template_name(const char *v) {
  static const char *const alias[][2] = {
      {"block-nodes-cyclic-procs", "block-cyclic"},
      {"cyclic-nodes", "cyclic-block"},
      {"hierarchical-block", "decompose"}};
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (!strcmp(v, alias[i][0]))
      return alias[i][1];
  return v;
}

bool mapopt__edit_to_delta(const mapopt_space *sp, const tune_edit *e,
                           tune_delta *d) {
  tune_delta out = *d;
  bool any = false;
  for (size_t i = 0; i < sp->params.len; i++) {
    const mapopt_space_param *p =
        &MAPOPT__VEC_AT(&sp->params, mapopt_space_param, i);
    int t = mapopt__space_task_of(sp, i);
    bool task_ok = p->task && (wild(e->task) || !strcmp(p->task, e->task));
    int v = -1;
    int32_t from = -1;
    switch (e->kind) {
    case TUNE_EDIT_PROC_KINDS:
      if (p->kind != MAPOPT_PARAM_PROC_KIND || !task_ok)
        continue;
      /* The first kind of the list the task can use. */
      for (const char *c = e->value; *c && v < 0;) {
        char kind[8] = {0};
        size_t n = strcspn(c, ", ");
        memcpy(kind, c, n < 7 ? n : 7);
        mapopt_proc_kind k;
        if (mapopt_shape_proc_parse(kind, &k) == MAPOPT_OK &&
            (sp->tasks[t].usable & (1u << k)))
          v = value_or_default(
              sp, p, mapopt_shape_proc_name(k),
              sp->tasks[t].default_kind >= 0
                  ? mapopt_shape_proc_name(
                        (mapopt_proc_kind)sp->tasks[t].default_kind)
                  : NULL);
        c += n;
        c += strspn(c, ", ");
      }
      break;
    case TUNE_EDIT_MEMORY: {
      if (p->kind != MAPOPT_PARAM_MEMORY || !task_ok ||
          (!wild(e->proc) && strcmp(e->proc, mapopt_shape_proc_name(p->proc))))
        continue;
      const space_task *st = &sp->tasks[t];
      size_t k = 0;
      while (k < st->keys.len &&
             strcmp(MAPOPT__VEC_AT(&st->keys, const char *, k), p->region))
        k++;
      if (k == st->keys.len || !arg_matches(st, k, e->region))
        continue;
      v = value_or_default(sp, p, e->value, default_memory_name(sp, p->proc));
      break;
    }
    case TUNE_EDIT_LAYOUT: {
      mapopt_param_kind want =
          !strcmp(e->component, "soa")     ? MAPOPT_PARAM_LAYOUT_SOA
          : !strcmp(e->component, "order") ? MAPOPT_PARAM_LAYOUT_ORDER
                                           : MAPOPT_PARAM_LAYOUT_ALIGN;
      if (p->kind != want)
        continue;
      int reg = mapopt__space_region_of(sp, e->region);
      if (!wild(e->region) &&
          (reg < 0 ||
           strcmp(mapopt_app_run_region(sp->run, reg)->name, p->region)))
        continue;
      const char *def = want == MAPOPT_PARAM_LAYOUT_SOA     ? "SOA"
                        : want == MAPOPT_PARAM_LAYOUT_ALIGN ? "none"
                        : sp->run->default_c_order          ? "C_order"
                                                            : "F_order";
      v = value_or_default(sp, p, e->value, def);
      break;
    }
    case TUNE_EDIT_INDEX_MAP:
      if (p->kind != MAPOPT_PARAM_INDEX_MAP &&
          p->kind != MAPOPT_PARAM_INDEX_DIMS)
        continue;
      if (!task_ok)
        continue;
      if (!strncmp(e->value, "like:", 5)) {
        /* Copy the other task's template and dimension order. */
        char name[300];
        snprintf(name, sizeof name, "%s.%s", mapopt_param_kind_name(p->kind),
                 e->value + 5);
        size_t src;
        if (mapopt_space_find(sp, name, &src) != MAPOPT_OK)
          continue;
        from = (int32_t)src;
        v = 0;
      } else if (p->kind == MAPOPT_PARAM_INDEX_MAP) {
        v = value_index(p, template_name(e->value));
      } else {
        continue; /* a template alone keeps the dimension order */
      }
      break;
    case TUNE_EDIT_INSTANCE_LIMIT: {
      if (p->kind != MAPOPT_PARAM_INSTANCE_LIMIT || !task_ok)
        continue;
      if (!strcmp(e->value, "none")) {
        v = 0;
        break;
      }
      long want = strtol(e->value, NULL, 10);
      for (size_t k = 1; k < p->nvalues; k++) /* the largest value <= want */
        if (strtol(p->values[k], NULL, 10) <= want)
          v = (int)k;
      break;
    }
    case TUNE_EDIT_COLLECT:
      if (p->kind != MAPOPT_PARAM_COLLECT || !task_ok)
        continue;
      v = !strcmp(e->value, "on") ? 1 : 0;
      break;
    case TUNE_EDIT_SINGLE_FOLLOW:
      if (p->kind != MAPOPT_PARAM_FOLLOW_PARENT || !task_ok)
        continue;
      v = !strcmp(e->value, "parent") ? 1 : 0;
      break;
    }
    if (v < 0)
      continue;
    if (!push(&out, i, v, from))
      return false;
    any = true;
  }
  if (any)
    *d = out;
  return any;
}

bool mapopt__delta_apply(const mapopt_space *sp, const uint16_t *base,
                         const tune_delta *d, uint16_t *out) {
  size_t n = sp->params.len;
  memcpy(out, base, n * sizeof *out);
  for (int i = 0; i < d->n; i++) {
    if (d->param[i] >= n)
      return false;
    const mapopt_space_param *p = mapopt_space_param_at(sp, d->param[i]);
    uint16_t v = d->value[i];
    if (d->from[i] >= 0) {
      const mapopt_space_param *src =
          mapopt_space_param_at(sp, (size_t)d->from[i]);
      int k = src ? value_index(p, src->values[base[d->from[i]]]) : -1;
      v = (uint16_t)(k < 0 ? 0 : k);
    }
    if (v >= p->nvalues)
      return false;
    out[d->param[i]] = v;
  }
  return true;
}

/* The key of a space argument key (task t's key k) matches profile
 * argument q of that task: by name, or by position. */
static bool arg_is(const space_task *t, const char *key,
                   const mapopt_sim_req_stats *q) {
  for (size_t k = 0; k < t->keys.len; k++) {
    if (strcmp(MAPOPT__VEC_AT(&t->keys, const char *, k), key))
      continue;
    const key_arg *ka = &MAPOPT__VEC_AT(&t->key_args, key_arg, k);
    if ((size_t)q->index == ka->position)
      return true;
    for (size_t n = 0; n < ka->nnames; n++)
      if (q->name && !strcmp(q->name, ka->names[n]))
        return true;
  }
  return false;
}

/* Whether the space argument key of task t is the argument of wait w
 * (by position, or by its first name). */
static bool wait_arg_is(const space_task *t, const char *key,
                        const mapopt_sim_wait *w) {
  mapopt_sim_req_stats q = {.index = w->arg, .name = w->arg_name};
  return w->arg >= 0 && arg_is(t, key, &q);
}

static bool data_wait(mapopt_sim_cause c) {
  return c == MAPOPT_SIM_CAUSE_COPY || c == MAPOPT_SIM_CAUSE_FILL ||
         c == MAPOPT_SIM_CAUSE_FOLD || c == MAPOPT_SIM_CAUSE_REDUCTION;
}

/* A wait's weight: its time on the critical path, and a tenth of what the
 * points waited on it off the path (which a change may expose). */
static int64_t wait_ns(const mapopt_sim_wait *w) {
  return w->exposed_ns + w->waited_ns / 10;
}

/*
 * What a parameter decides about, measured in a profile's time (the
 * attribution of the critical path, docs/sim.md): a memory choice, the
 * waits for copies and folds into its argument and the time spent
 * reaching it; a task's placement (index map, dimension order, following
 * its parent), the waits for data and processors of the task, those of
 * other tasks for its data (it produced it, or held their processor), and
 * the time its processors idle for want of balance; its kind, its busy
 * time and its compute on the path; InstanceLimit, the task's waits for
 * it; CollectMemory, a tenth of the waits for its copies; a layout, the
 * memory time of the tasks that read the region (more when AOS already
 * costs). Alignment only pads: it weighs nothing.
 */
int64_t mapopt__param_weight(const mapopt_space *sp, size_t i,
                             const mapopt_sim_result *r) {
  const mapopt_space_param *p = mapopt_space_param_at(sp, i);
  int t = mapopt__space_task_of(sp, i);
  int64_t w = 0;
  for (size_t k = 0; k < mapopt_sim_result_nwaits(r); k++) {
    const mapopt_sim_wait *x = mapopt_sim_result_wait(r, k);
    bool mine = p->task && x->task && !strcmp(x->task, p->task);
    bool theirs = p->task && x->other && !strcmp(x->other, p->task);
    switch (p->kind) {
    case MAPOPT_PARAM_MEMORY:
      if (mine && data_wait(x->cause) &&
          wait_arg_is(&sp->tasks[t], p->region, x))
        w += wait_ns(x);
      break;
    case MAPOPT_PARAM_INDEX_MAP:
    case MAPOPT_PARAM_INDEX_DIMS:
    case MAPOPT_PARAM_FOLLOW_PARENT:
      if ((mine || theirs) &&
          (data_wait(x->cause) || x->cause == MAPOPT_SIM_CAUSE_PROCESSOR))
        w += wait_ns(x);
      break;
    case MAPOPT_PARAM_COLLECT:
      if (mine && data_wait(x->cause))
        w += wait_ns(x) / 10;
      break;
    case MAPOPT_PARAM_INSTANCE_LIMIT:
      if (mine && x->cause == MAPOPT_SIM_CAUSE_INSTANCE_LIMIT)
        w += wait_ns(x);
      break;
    case MAPOPT_PARAM_PROC_KIND:
      if (mine && x->cause == MAPOPT_SIM_CAUSE_COMPUTE)
        w += x->exposed_ns;
      break;
    default:
      break;
    }
  }
  for (size_t k = 0; k < mapopt_sim_result_ntop(r); k++) {
    const mapopt_sim_task_stats *ts = mapopt_sim_result_top_task(r, k);
    bool mine = p->task && !strcmp(ts->task, p->task);
    for (size_t q = 0; q < mapopt_sim_task_nreqs(ts); q++) {
      const mapopt_sim_req_stats *rq = mapopt_sim_task_req(ts, q);
      switch (p->kind) {
      case MAPOPT_PARAM_MEMORY:
        if (mine && arg_is(&sp->tasks[t], p->region, rq))
          w += rq->mem_ns + rq->access_ns;
        break;
      case MAPOPT_PARAM_LAYOUT_SOA:
      case MAPOPT_PARAM_LAYOUT_ORDER: {
        int reg = rq->name ? mapopt__space_region_of(sp, rq->name) : -1;
        if (reg >= 0 && p->region &&
            !strcmp(p->region, mapopt_app_run_region(sp->run, reg)->name))
          w += rq->layout_ppm > 1000000 ? rq->mem_ns : rq->mem_ns / 100;
        break;
      }
      default:
        break;
      }
    }
    if (!mine)
      continue;
    if (p->kind == MAPOPT_PARAM_PROC_KIND)
      w += ts->busy_ns;
    if ((p->kind == MAPOPT_PARAM_INDEX_MAP ||
         p->kind == MAPOPT_PARAM_INDEX_DIMS) &&
        ts->procs_used > 0) /* idle time for want of balance */
      w += ts->proc_max_ns * ts->procs_used - ts->busy_ns;
  }
  return w;
}

/*
 * A task's processor kind decides more than the speed of its kernel: the
 * task's data goes to the default memory of the new kind and its
 * processors are freed for the tasks queued behind it. held_ns is what the
 * task's placement holds back -- its own waits for copies and folds into
 * its arguments, the other tasks' waits for data it wrote and for a
 * processor it held -- weighed as wait_ns does (the waits a placement
 * parameter weighs, but the task's own waits for a processor, which
 * mapopt__param_weight counts for a placement). compute_ns and busy_ns
 * are what a slower kind lengthens: its compute on the critical path, and
 * in all.
 */
tune_kind_stakes mapopt__kind_stakes(const mapopt_space *sp, size_t i,
                                     const mapopt_sim_result *r) {
  const mapopt_space_param *p = mapopt_space_param_at(sp, i);
  tune_kind_stakes k = {0};
  if (p->kind != MAPOPT_PARAM_PROC_KIND || !p->task)
    return k;
  for (size_t j = 0; j < mapopt_sim_result_nwaits(r); j++) {
    const mapopt_sim_wait *x = mapopt_sim_result_wait(r, j);
    bool mine = x->task && !strcmp(x->task, p->task);
    bool theirs = !mine && x->other && !strcmp(x->other, p->task);
    if (mine && x->cause == MAPOPT_SIM_CAUSE_COMPUTE) {
      k.compute_ns += x->exposed_ns;
      k.busy_ns += x->waited_ns;
    } else if (((mine || theirs) && data_wait(x->cause)) ||
               (theirs && x->cause == MAPOPT_SIM_CAUSE_PROCESSOR)) {
      k.held_ns += wait_ns(x);
    }
  }
  return k;
}
