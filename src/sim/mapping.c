/*
 * Placement and mapping (docs/dsl.md, "Statements"): the
 * processor kind of each task, the processor of each index point and
 * single task through the mapping functions (with the substrate's
 * defaults), the InstanceLimit back-pressure, the runtime's mapping work,
 * and the memory, layout and instance of every region argument. A mapping
 * error of the DSL becomes the simulated error its R-code classifies.
 *
 * It calls the data (data.c) and the concrete machine (machine.c), never
 * the run.
 */
#include <inttypes.h>
#include <string.h>

#include "sim/engine.h"

/* ---- placement ----------------------------------------------------------- */

/* A mapping error reported by the DSL: its diagnostics are the message. */
static void dsl_error(sim_t *s, mapopt_sim_error e, size_t from) {
  if (failed(s))
    return;
  mapopt__strbuf *t = &s->errtext;
  for (size_t i = from; i < mapopt_diags_count(s->diags); i++) {
    const mapopt_diag *d = mapopt_diags_get(s->diags, i);
    if (d->severity == MAPOPT_SEV_WARNING)
      continue;
    if (t->len)
      mapopt__sb_putc(t, '\n');
    mapopt__sb_diag(t, d);
  }
  s->error = e;
  s->error_time = s->now;
}

/* The class of a DSL mapping error by its R-code (docs/dsl.md, "Errors raised
 * while running mapper code"). */
static mapopt_sim_error class_of(const mapopt_diags *d, size_t from) {
  for (size_t i = from; i < mapopt_diags_count(d); i++) {
    const char *c = mapopt_diags_get(d, i)->code;
    if (!strcmp(c, "R10") || !strcmp(c, "R11") || !strcmp(c, "R12") ||
        !strcmp(c, "R16") || !strcmp(c, "R18") || !strcmp(c, "R25"))
      return MAPOPT_SIM_INDEX;
    if (c[0] == 'R')
      return MAPOPT_SIM_POLICY;
  }
  return MAPOPT_SIM_POLICY;
}

/* The processor kind of a task, selected once. */
static int task_kind(sim_t *s, int task) {
  if (s->task_kind[task] != -1)
    return s->task_kind[task];
  mapopt_proc_kind k;
  const mapopt_app_task *t = &s->run->tasks[task];
  size_t from = mapopt_diags_count(s->diags);
  mapopt_status st = mapopt_policy_select_kind(
      s->prog, t->name, t->variant_kinds, s->opts->lenient_kinds, &k, s->diags);
  if (st != MAPOPT_OK) {
    /* R26: its message is the runtime's error, located at the Task
     * statement when there is one. */
    const mapopt_diag *d = mapopt_diags_get(s->diags, from);
    if (st == MAPOPT_EMAP && d && d->line > 0)
      dsl_error(s, MAPOPT_SIM_NO_VARIANT, from);
    else if (st == MAPOPT_EMAP && d)
      mapopt__sim_error(s, MAPOPT_SIM_NO_VARIANT, "%s", d->message);
    else
      mapopt__sim_out_of_memory(s);
    s->task_kind[task] = -2;
    return -2;
  }
  s->task_kind[task] = (int)k;
  return (int)k;
}

static int variant_of(const sim_t *s, int task, int kind) {
  const mapopt_app_task *t = &s->run->tasks[task];
  for (int v = 0; v < t->nvariants; v++)
    if ((int)t->variants[v].kind == kind)
      return v;
  return 0;
}

static void set_ref(sim_t *s, int64_t op, int kind, int64_t proc,
                    const mapopt_task_ref *parent) {
  const mapopt_app_op *o = &s->run->ops[op];
  sim_op *so = &s->ops[op];
  so->kind = kind;
  so->proc = proc;
  so->as = s->procs[proc].as;
  so->variant = variant_of(s, o->task, kind);
  if (s->plan->ctx_of_op && s->plan->ctx_of_op[op] > 0) /* a parent-to-be */
    ctx_of(s, op)->ref = (mapopt_task_ref){
        task_name(s, op),
        o->is_index,
        o->dims,
        o->point,
        o->extents,
        {(mapopt_proc_kind)kind, s->procs[proc].as, s->procs[proc].local},
        parent};
}

static const mapopt_task_ref *parent_ref(sim_t *s, int64_t op,
                                         const mapopt_task_ref *main_ref) {
  int64_t p = s->run->ops[op].parent;
  return p >= 0 ? &ctx_of(s, p)->ref : main_ref;
}

/* Places every point of an index launch (index placement depends only on
 * the policy), then applies the back-pressure rule of InstanceLimit
 * (docs/dsl.md, "InstanceLimit"). */
void mapopt__sim_place_index_launch(sim_t *s, int64_t first) {
  const mapopt_app_op *f = &s->run->ops[first];
  int kind = task_kind(s, f->task);
  if (kind < 0)
    return;
  int cls = proc_cls((mapopt_proc_kind)kind);
  static const mapopt_task_ref main_ref = {
      "main", false, 0, NULL, NULL, {MAPOPT_PROC_CPU, 0, 0}, NULL};
  int64_t limit = s->task_limit[f->task];
  int64_t *count = NULL;
  if (limit > 0 && !s->opts->no_backpressure_errors)
    count = mapopt__arena_zalloc(&s->arena, (size_t)s->nprocs * 8);
  for (int64_t op = first; op >= 0 && s->run->ops[op].launch == f->launch &&
                           s->run->ops[op].kind == MAPOPT_OP_TASK;
       op = mapopt__sim_next_sib(s, op)) {
    const mapopt_app_op *o = &s->run->ops[op];
    mapopt_map_answer ans;
    size_t from = mapopt_diags_count(s->diags);
    mapopt_status st = mapopt_policy_index_map(
        s->prog, task_name(s, op), o->dims, o->point, o->extents,
        (mapopt_proc_kind)kind, &ans, s->diags);
    if (st == MAPOPT_EMAP) {
      dsl_error(s, class_of(s->diags, from), from);
      return;
    }
    if (st != MAPOPT_OK) {
      mapopt__sim_out_of_memory(s);
      return;
    }
    int64_t node, local;
    if (ans.kind == MAPOPT_MAP_UNSPECIFIED && o->parent >= 0) {
      /* A launch from inside a task stays on that task's address space:
       * the mappers of replicated runs slice nested launches over local
       * processors (Legion's DefaultMapper for launches under a
       * replicated parent, DISTAL's mapper whenever replication is on);
       * only the top-level task's launches are spread over the nodes. */
      mapopt_policy_default_index_place(o->dims, o->point, o->extents, 1,
                                        procs_per_as(s, cls), &node, &local);
      node = s->ops[o->parent].as;
    } else if (ans.kind == MAPOPT_MAP_UNSPECIFIED) {
      mapopt_policy_default_index_place(o->dims, o->point, o->extents, s->nas,
                                        procs_per_as(s, cls), &node, &local);
    } else {
      node = ans.points[0].node;
      local = ans.points[0].proc;
    }
    int64_t proc = node < s->nas ? proc_id(s, node, cls, local) : -1;
    if (proc < 0) {
      mapopt__sim_error(s, MAPOPT_SIM_INDEX,
                        "Slice processor index out of bound! %" PRId64
                        " >= %" PRId64,
                        local, procs_per_as(s, cls));
      return;
    }
    set_ref(s, op, kind, proc, parent_ref(s, op, &main_ref));
    if (count && ++count[proc] > limit) {
      mapopt__sim_error(s, MAPOPT_SIM_BACKPRESSURE,
                        "Assertion 'event.exists()' failed");
      return;
    }
  }
}

/* Places a single task (docs/dsl.md, "SingleTaskMap"). */
bool mapopt__sim_place_single(sim_t *s, int64_t op) {
  const mapopt_app_op *o = &s->run->ops[op];
  int kind = task_kind(s, o->task);
  if (kind < 0)
    return false;
  int cls = proc_cls((mapopt_proc_kind)kind);
  static const mapopt_task_ref main_ref = {
      "main", false, 0, NULL, NULL, {MAPOPT_PROC_CPU, 0, 0}, NULL};
  const mapopt_task_ref *parent = parent_ref(s, op, &main_ref);
  int64_t as = o->parent >= 0 ? s->ops[o->parent].as : 0;
  if (procs_per_as(s, cls) == 0) {
    mapopt__sim_error(
        s, MAPOPT_SIM_NO_VARIANT,
        "Invalid policy: task %s requested %s, but has no valid task "
        "variant for the kind",
        task_name(s, op), mapopt_shape_proc_name(kind));
    return false;
  }
  mapopt_task_ref self = {task_name(s, op),
                          false,
                          0,
                          NULL,
                          NULL,
                          {(mapopt_proc_kind)kind, as, 0},
                          parent};
  mapopt_map_answer ans;
  mapopt_proc_point set[64];
  size_t from = mapopt_diags_count(s->diags);
  mapopt_status st = mapopt_policy_single_map(
      s->prog, &self, (mapopt_proc_kind)kind, &ans, set, 64, s->diags);
  if (st == MAPOPT_EMAP) {
    dsl_error(s, class_of(s->diags, from), from);
    return false;
  }
  if (st != MAPOPT_OK) {
    mapopt__sim_out_of_memory(s);
    return false;
  }
  int64_t local = 0;
  if (ans.kind == MAPOPT_MAP_UNSPECIFIED) {
    if (o->parent >= 0) {
      int64_t *rr = &s->rr[as * 3 + (cls == PK_GPU   ? 1
                                     : cls == PK_OMP ? 2
                                                     : 0)];
      local = (*rr)++ % procs_per_as(s, cls);
    }
  } else {
    size_t n = ans.npoints < 64 ? ans.npoints : 64;
    if (ans.kind == MAPOPT_MAP_POINT)
      set[0] = ans.points[0];
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
      if (set[i].node != as) {
        /* R18 is the substrate's check (docs/dsl.md, "SingleTaskMap"), with
         * N03. */
        mapopt__sim_error(
            s, MAPOPT_SIM_INDEX,
            MAPOPT_DSL_TEMPLATE(
                R18_NODE) "\nmapper: note: " MAPOPT_DSL_TEMPLATE(N03_MAPPING),
            task_name(s, op), ans.function ? ans.function : "?");
        return false;
      }
      int64_t pi = proc_id(s, as, cls, set[i].proc);
      int64_t pb = proc_id(s, as, cls, set[best].proc);
      if (pi >= 0 && pb >= 0 && s->procs[pi].assigned < s->procs[pb].assigned)
        best = i;
    }
    local = set[best].proc;
  }
  int64_t proc = proc_id(s, as, cls, local);
  if (proc < 0) {
    mapopt__sim_error(s, MAPOPT_SIM_INDEX,
                      "Slice processor index out of bound! %" PRId64
                      " >= %" PRId64,
                      local, procs_per_as(s, cls));
    return false;
  }
  set_ref(s, op, kind, proc, parent);
  return true;
}

/* ---- admission and mapping work ------------------------------------------ */

void mapopt__sim_try_mappable(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  if (failed(s) || !o->issued || o->state != OS_ISSUED || o->preds_unmapped > 0)
    return;
  const mapopt_app_op *ao = &s->run->ops[op];
  o->state = OS_MAPPABLE;
  o->mappable_at = s->now;
  if (ao->kind != MAPOPT_OP_TASK) {
    o->state = OS_ADMITTED;
    mapopt__sim_schedule(s, s->now, EV_MAPPED, op);
    return;
  }
  if (o->proc < 0)
    return;
  int64_t limit = s->task_limit[ao->task];
  if (limit > 0) {
    int64_t key = ao->task * s->nprocs + o->proc;
    if (s->limit_count[key] >= limit) {
      o->cause = CAUSE_BACKPRESSURE;
      if (mapopt__heap_push(&s->limit_wait[key], s->ctx, op, EV(0, op)) !=
          MAPOPT_OK)
        mapopt__sim_out_of_memory(s);
      return;
    }
    s->limit_count[key]++;
  }
  mapopt__sim_admit(s, op);
}

/* Charges the mapping work on a UTIL processor of the mapping address
 * space. */
void mapopt__sim_admit(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  sim_ctx *c = ctx_of(s, ao->parent);
  o->state = OS_ADMITTED;
  const mapopt_machine_runtime *rt = &s->m->runtime;
  int64_t cost = ao->timing.traced ? rt->map_traced_ns : rt->map_ns;
  int64_t map_as = c->replicated ? o->as : c->as;
  if (!c->replicated && o->as != c->as)
    cost += o->as / s->ranks == c->as / s->ranks
                ? rt->ipc_lat_ns
                : s->m->channels[MAPOPT_CHAN_NETWORK].lat_ns;
  mapopt__sim_util_work(s, map_as, cost, op, UTIL_MAP, EV_MAPPED);
}

/* ---- instances of a mapped task ------------------------------------------ */

static uint64_t region_mask(const mapopt_app_region *rg) {
  return rg->nfields >= 64 ? ~0ull : (1ull << rg->nfields) - 1;
}

static uint64_t instance_fields(const sim_t *s, const mapopt_app_req *r) {
  if (s->opts->instance_fields_requested)
    return r->fields;
  return region_mask(&s->run->regions[r->piece->region]);
}

/* Whether the cached answer was for these names (the run may give each op
 * its own copy of the same names). */
static bool same_names(const req_policy *v, const mapopt_app_req *req) {
  if (v->names == req->names)
    return true;
  for (size_t i = 0; i < req->nnames; i++)
    if (v->names[i] != req->names[i] && strcmp(v->names[i], req->names[i]))
      return false;
  return true;
}

/*
 * Whether Legion can build the instance that the DSL mapper asks for with
 * the Layout answer for an argument in memory mem (docs/legion.md): for an
 * AOS instance whose order is F -- given, or the DSL mapper's default when
 * the statement gives none -- it asks for the dimension order F, Y, Z, ...
 * without X, which Legion cannot lay out. With mapopt_aos_order, the order
 * is the mapping language's F, X, Y, ... and every layout can be built.
 */
static bool legion_can_lay_out(const sim_t *s, const char *task,
                               const mapopt_region_keys *keys,
                               mapopt_mem_kind mem, int kind) {
  mapopt_layout l;
  if (s->opts->mapopt_aos_order ||
      !mapopt_policy_layout(s->prog, task, keys, mem, (mapopt_proc_kind)kind,
                            &l))
    return true;
  return l.soa != MAPOPT_LAYOUT_NO || l.c_order == MAPOPT_LAYOUT_YES;
}

/* A miss of the cache's ways for (task, r, kind): the program's answers,
 * in an empty way, else in one replaced in turn. Out of line (cold), so
 * that the hits -- all but a few per task -- run a short function. */
__attribute__((cold, noinline)) static const req_policy *
req_decision_miss(sim_t *s, req_policy *ways, int task, size_t r,
                  const mapopt_app_req *req, int kind) {
  int w = 0;
  while (w < POLICY_WAYS && ways[w].names)
    w++;
  if (w == POLICY_WAYS)
    w = (int)(s->policy_evict++ % POLICY_WAYS);
  req_policy *v = &ways[w];
  const char *tn = s->run->tasks[task].name;
  mapopt_region_keys keys = {req->names, req->nnames, r};
  v->names = req->names;
  v->nnames = req->nnames;
  v->mem =
      mapopt_policy_select_memory(s->prog, tn, &keys, (mapopt_proc_kind)kind);
  mapopt_policy_resolve_layout(s->prog, tn, &keys, v->mem,
                               (mapopt_proc_kind)kind, s->run->default_c_order,
                               &v->layout);
  v->collect = mapopt_policy_collect(s->prog, tn, &keys);
  v->can_lay_out = legion_can_lay_out(s, tn, &keys, v->mem, kind);
  return v;
}

const req_policy *mapopt__sim_req_decision(sim_t *s, int task, size_t r,
                                           const mapopt_app_req *req,
                                           int kind) {
  size_t slot =
      (((size_t)task * (size_t)s->plan->max_reqs + r) * MAPOPT_PROC_KIND_COUNT +
       (size_t)kind) *
      POLICY_WAYS;
  req_policy *ways = &s->policy_cache[slot];
  for (int w = 0; w < POLICY_WAYS; w++)
    if (ways[w].names && ways[w].nnames == req->nnames &&
        same_names(&ways[w], req))
      return &ways[w];
  return req_decision_miss(s, ways, task, r, req, kind);
}

/* Allocates the instances of a mapped task. */
bool mapopt__sim_map_instances(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  const mapopt_app_task *t = &s->run->tasks[ao->task];
  o->inst = &s->inst_slots[s->dag.req_off[op]];
  const sim_proc *p = &s->procs[o->proc];
  for (size_t r = 0; r < ao->nreqs; r++) {
    o->inst[r] = -1;
    const mapopt_app_req *req = &ao->reqs[r];
    if (t->inner || req->fields == 0) /* no data: no instance */
      continue;
    const req_policy *pol =
        mapopt__sim_req_decision(s, ao->task, r, req, o->kind);
    if (!pol) {
      mapopt__sim_out_of_memory(s);
      return false;
    }
    mapopt_mem_kind mk = pol->mem;
    if (mk == MAPOPT_MEM_VIRTUAL) {
      mapopt__sim_error(
          s, MAPOPT_SIM_POLICY,
          "Invalid mapper output: virtual mapping requested for region "
          "requirement %zu of leaf task %s",
          r, t->name);
      return false;
    }
    int64_t mem = mem_for(s, p, mk);
    if (mem < 0 || !s->m->affinity[o->kind][mk].present) {
      mk = mapopt_shape_default_memory(&s->shape, (mapopt_proc_kind)o->kind);
      mem = mem_for(s, p, mk);
    }
    if (mem < 0) {
      mapopt__sim_error(
          s, MAPOPT_SIM_MODEL,
          "no %s memory for processor %s %" PRId64 " of node %" PRId64,
          mapopt_shape_mem_name(mk),
          mapopt_shape_proc_name((mapopt_proc_kind)o->kind), p->local, p->node);
      return false;
    }
    mapopt_layout l = pol->layout;
    mapopt_region_keys keys = {req->names, req->nnames, r};
    if (mk != pol->mem) /* the fallback memory: its own layout answer */
      mapopt_policy_resolve_layout(s->prog, t->name, &keys, mk,
                                   (mapopt_proc_kind)o->kind,
                                   s->run->default_c_order, &l);
    /* The policy's memory has its answer cached with the others; asking
     * the program per op was most of a simulation's instructions. */
    if (mk == pol->mem ? !pol->can_lay_out
                       : !legion_can_lay_out(s, t->name, &keys, mk, o->kind)) {
      mapopt__sim_error(
          s, MAPOPT_SIM_LAYOUT,
          "Invalid layout: task %s, region requirement %zu (%s), AOS "
          "F_order in %s: the DSL mapper orders the dimensions F, Y, Z, ... "
          "without X, which Legion cannot lay out; use SOA, or AOS C_order "
          "(mapopt sim --aos-order mapopt simulates F, X, Y, ...)",
          t->name, r, req->nnames ? req->names[0] : "?",
          mapopt_shape_mem_name(mk));
      return false;
    }
    /* A reduction reuses a live reduction instance with its operator, as
     * Legion's default mapper does (its contributions fold with the
     * others'), and holds only the fields it reduces. */
    bool reduce = req->priv == MAPOPT_PRIV_REDUCE;
    int64_t id = mapopt__sim_find_instance(s, mem, req, &l);
    if (id < 0)
      id = mapopt__sim_create_instance(
          s, op, (int64_t)r, mem, req->piece, req->piece->region,
          reduce ? req->fields : instance_fields(s, req), &l, reduce);
    if (id < 0)
      return false;
    if (reduce)
      inst_at(s, id)->fold_left +=
          (int64_t)req->piece->natoms * __builtin_popcountll(req->fields);
    sim_inst *in = inst_at(s, id);
    in->users++;
    in->last_use = s->now;
    o->inst[r] = id;
  }
  return true;
}
