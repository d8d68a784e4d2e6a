/*
 * What a mapper decides for the run, and what the space knows must fail
 * (docs/tuning.md, "Feasibility" and "Duplicates").
 *
 * Feasibility is a filter of the space that every optimizer's proposals
 * pass through (mapopt__propose): a value the app model and the machine
 * alone say must fail -- an InstanceLimit below the points one launch puts
 * on one processor, which the runtime refuses (docs/dsl.md, InstanceLimit),
 * a memory smaller than the instances it would have to hold at once, an
 * order a kernel's layout requirement forbids (AOS included, which is
 * written C_order) -- is replaced before the candidate is rendered. So are
 * memories that cannot hold the distinct pieces the arguments put there
 * (a mark more than a certainty: see too_small). In the simulator an
 * alignment only pads, so it is left out there too; under real runs it
 * stays in. Kinds without a variant or without processors are never
 * offered (space.c).
 *
 * The decisions of a compiled mapper are what the simulator asks the
 * mapper: every task's kind, InstanceLimit and replication, the processor
 * of every point of each distinct index launch (space.c's scan), and each
 * leaf argument's memory, layout and collection. Their hash is the
 * driver's semantic key.
 */
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

/* The index of the parameter of kind `kind` of task t, or the number of
 * parameters when it has none. */
static size_t param_of(const mapopt_space *sp, mapopt_param_kind kind, int t) {
  size_t n = mapopt_space_nparams(sp);
  for (size_t i = 0; i < n; i++)
    if (mapopt_space_param_at(sp, i)->kind == kind &&
        mapopt__space_task_of(sp, i) == t)
      return i;
  return n;
}

/* The processor of each point of launch l under prog, its task mapped to
 * kind, as node * procs + local, into where (l->count entries). */
static mapopt_status place_launch(const mapopt_space *sp,
                                  const mapopt_program *prog,
                                  const space_launch *l, mapopt_proc_kind kind,
                                  int64_t *where) {
  for (int64_t k = 0; k < l->count; k++) {
    int64_t node, local;
    mapopt_status st = mapopt__space_place_point(
        sp, prog, mapopt_app_run_op(sp->run, l->first + k), kind, &node,
        &local);
    if (st != MAPOPT_OK)
      return st;
    where[k] = node * sp->shape.procs[kind] + local;
  }
  return MAPOPT_OK;
}

/* The most points one launch of task t puts on one processor when its
 * kind, map and dims parameters are as in choice (the others do not
 * place it, unless it is placed by an affinity value: then the whole
 * choice counts, and the answer is not kept); -1 when the mapper cannot
 * place them, or out of memory. */
static int64_t most_per_proc(const mapopt_space *sp, const uint16_t *choice,
                             int t) {
  size_t n = mapopt_space_nparams(sp);
  size_t pk = param_of(sp, MAPOPT_PARAM_PROC_KIND, t),
         pm = param_of(sp, MAPOPT_PARAM_INDEX_MAP, t),
         pd = param_of(sp, MAPOPT_PARAM_INDEX_DIMS, t);
  space_spread key = {t, pk < n ? choice[pk] : 0, pm < n ? choice[pm] : 0,
                      pd < n ? choice[pd] : 0, -1};
  bool whole = mapopt__space_map_by_affinity(sp, choice, t);
  for (size_t i = 0; !whole && i < sp->spreads.len; i++) {
    const space_spread *s = &MAPOPT__VEC_AT(&sp->spreads, space_spread, i);
    if (s->task == t && s->kind == key.kind && s->map == key.map &&
        s->dims == key.dims)
      return s->most;
  }
  uint16_t *sub = mapopt__calloc(sp->ctx, n ? n : 1, sizeof *sub);
  if (!sub)
    return -1;
  if (whole)
    memcpy(sub, choice, n * sizeof *sub);
  if (pk < n)
    sub[pk] = key.kind;
  if (pm < n)
    sub[pm] = key.map;
  if (pd < n)
    sub[pd] = key.dims;
  int kind = mapopt__space_kind_of(sp, sub, t);
  char *text = NULL;
  size_t len;
  mapopt_program *prog = NULL;
  mapopt_diags *diags = NULL;
  mapopt_dsl_options o = {.file = "space.map", .shape = &sp->shape};
  bool ok =
      kind >= 0 && mapopt_space_render(sp, sub, &text, &len) == MAPOPT_OK &&
      mapopt_diags_new(sp->ctx, &diags) == MAPOPT_OK &&
      mapopt_dsl_compile(sp->ctx, text, len, &o, diags, &prog) == MAPOPT_OK;
  size_t procs = ok ? (size_t)(sp->shape.procs[kind] * sp->shape.nodes) : 0;
  int64_t *count =
      ok ? mapopt__calloc(sp->ctx, procs + 1, sizeof *count) : NULL;
  for (size_t li = 0; count && li < sp->launches.len; li++) {
    const space_launch *l = &MAPOPT__VEC_AT(&sp->launches, space_launch, li);
    if (l->task != t)
      continue;
    int64_t *where = mapopt__calloc(sp->ctx, (size_t)l->count, sizeof *where);
    bool placed = where && place_launch(sp, prog, l, (mapopt_proc_kind)kind,
                                        where) == MAPOPT_OK;
    memset(count, 0, (procs + 1) * sizeof *count);
    for (int64_t k = 0; placed && k < l->count; k++)
      if (++count[where[k]] > key.most)
        key.most = count[where[k]];
    if (where)
      mapopt__free(sp->ctx, where, (size_t)l->count * sizeof *where);
    if (!placed) {
      key.most = -1;
      break;
    }
  }
  if (count)
    mapopt__free(sp->ctx, count, (procs + 1) * sizeof *count);
  mapopt_dsl_free(prog);
  mapopt_diags_free(diags);
  mapopt_text_free(text);
  mapopt__free(sp->ctx, sub, (n ? n : 1) * sizeof *sub);
  /* The answers are kept, failures too (they fail the same next time);
   * one the cache cannot hold is computed again when asked. */
  space_spread *slot =
      ok && !whole ? mapopt__vec_push((mapopt__vec *)&sp->spreads, sp->ctx)
                   : NULL;
  if (slot)
    *slot = key;
  return key.most;
}

/* Whether an order (C_order when c_order) of region rn is one a variant
 * of a task that reads the region forbids by its layout requirement. */
static bool order_forbidden(const mapopt_space *sp, const char *rn,
                            bool c_order) {
  const mapopt_app_run *run = sp->run;
  for (int64_t o = 0; o < run->nops; o++) {
    const mapopt_app_op *op = mapopt_app_run_op(run, o);
    if (op->kind != MAPOPT_OP_TASK)
      continue;
    const mapopt_app_task *task = mapopt_app_run_task(run, op->task);
    for (int vi = 0; vi < task->nvariants; vi++)
      for (size_t k = 0; k < mapopt_app_task_variant(task, vi)->nrequires;
           k++) {
        const mapopt_app_layout_rule *rule =
            mapopt_app_variant_require(mapopt_app_task_variant(task, vi), k);
        if (rule->c_order == MAPOPT_LAYOUT_UNSET ||
            (rule->c_order == MAPOPT_LAYOUT_YES) == c_order)
          continue;
        for (size_t r = 0; r < op->nreqs && r < 64; r++)
          if ((rule->args >> r & 1) &&
              !strcmp(mapopt_app_run_region(
                          run, mapopt_app_op_req(op, r)->piece->region)
                          ->name,
                      rn))
            return true;
      }
  }
  return false;
}

/* What memory parameter i's argument holds at least (space.c,
 * key_size); zeros when unknown. */
static key_size arg_size(const mapopt_space *sp, size_t i) {
  const mapopt_space_param *p = mapopt_space_param_at(sp, i);
  const space_task *tk = &sp->tasks[mapopt__space_task_of(sp, i)];
  for (size_t k = 0; k < tk->keys.len; k++)
    if (!strcmp(MAPOPT__VEC_AT(&tk->keys, const char *, k), p->region))
      return MAPOPT__VEC_AT(&tk->key_sizes, key_size, k);
  return (key_size){0};
}

/* The capacity of all memories of kind mk together (saturating). */
static int64_t all_capacity(const mapopt_space *sp, mapopt_mem_kind mk) {
  const mapopt_machine *m = sp->machine;
  int64_t cap = m->mems[mk].capacity, count = m->nodes;
  if (mk == MAPOPT_MEM_SYSMEM)
    cap /= sp->ranks, count *= sp->ranks;
  if (mk == MAPOPT_MEM_FBMEM)
    count *= m->procs[MAPOPT_PROC_GPU].count;
  if (mk == MAPOPT_MEM_SOCKMEM)
    count *= m->sockets;
  return count > 0 && cap <= INT64_MAX / count ? cap * count : INT64_MAX;
}

/* Whether the instances of memory parameter i's argument cannot fit in
 * memories of kind mk: one instance larger than one memory, or a launch
 * whose points ask more than all of them hold (its points hold their
 * instances at once, and none can go elsewhere) -- MAPOPT__RULE_MEMORY;
 * or its distinct pieces over the run more than all of them hold --
 * MAPOPT__RULE_FOOTPRINT: an instance that holds the newest data is never
 * collected (docs/sim.md), so that fails unless some of the data is
 * rewritten elsewhere first. */
static mapopt__ruling too_small(const mapopt_space *sp, size_t i,
                                mapopt_mem_kind mk) {
  /* One SYSMEM per node, shared by its ranks (docs/sim.md). */
  int64_t cap = sp->machine->mems[mk].capacity;
  if (mk == MAPOPT_MEM_SYSMEM)
    cap /= sp->ranks;
  int64_t all = all_capacity(sp, mk);
  key_size ks = arg_size(sp, i);
  if (ks.one > cap || ks.launch > all)
    return MAPOPT__RULE_MEMORY;
  return ks.footprint > all ? MAPOPT__RULE_FOOTPRINT : MAPOPT__RULE_NONE;
}

/* Whether order C (c_order) or F of region rn is one a kernel forbids,
 * through the space's cache. */
static bool forbidden(const mapopt_space *sp, const char *rn, bool c_order) {
  int r = mapopt__space_region_of(sp, rn);
  signed char *known = r >= 0 ? &sp->order_rule[2 * r + c_order] : NULL;
  if (!known)
    return order_forbidden(sp, rn, c_order);
  if (!*known)
    *known = order_forbidden(sp, rn, c_order) ? 2 : 1;
  return *known == 2;
}

mapopt__ruling mapopt__space_ruling(const mapopt_space *sp,
                                    const uint16_t *choice, size_t i,
                                    uint16_t v) {
  const mapopt_space_param *p = mapopt_space_param_at(sp, i);
  if (!p || v == 0 || v >= p->nvalues)
    return MAPOPT__RULE_NONE;
  switch (p->kind) {
  case MAPOPT_PARAM_LAYOUT_ALIGN:
    return sp->real_runs ? MAPOPT__RULE_NONE : MAPOPT__RULE_PADDING;
  case MAPOPT_PARAM_LAYOUT_ORDER:
    return forbidden(sp, p->region, !strcmp(p->values[v], "C_order"))
               ? MAPOPT__RULE_ORDER
               : MAPOPT__RULE_NONE;
  case MAPOPT_PARAM_LAYOUT_SOA:
    /* AOS is written AOS C_order, the only AOS the DSL mapper of Legion
     * lays out (space.c). */
    return !strcmp(p->values[v], "AOS") && forbidden(sp, p->region, true)
               ? MAPOPT__RULE_ORDER
               : MAPOPT__RULE_NONE;
  case MAPOPT_PARAM_INSTANCE_LIMIT: {
    int64_t most = most_per_proc(sp, choice, mapopt__space_task_of(sp, i));
    return most > atoll(p->values[v]) ? MAPOPT__RULE_LIMIT : MAPOPT__RULE_NONE;
  }
  case MAPOPT_PARAM_MEMORY: {
    mapopt_mem_kind mk;
    if (mapopt_shape_mem_parse(p->values[v], &mk) != MAPOPT_OK)
      return MAPOPT__RULE_NONE;
    return too_small(sp, i, mk);
  }
  default:
    return MAPOPT__RULE_NONE;
  }
}

static int by_piece(const void *a, const void *b) {
  const piece_bytes *x = a, *y = b;
  return (x->piece > y->piece) - (x->piece < y->piece);
}

/* The memory kind value v of memory parameter i names, or -1 (default). */
static int mem_of(const mapopt_space *sp, size_t i, uint16_t v) {
  const mapopt_space_param *p = mapopt_space_param_at(sp, i);
  mapopt_mem_kind mk;
  if (p->kind != MAPOPT_PARAM_MEMORY || v == 0 ||
      mapopt_shape_mem_parse(p->values[v], &mk) != MAPOPT_OK)
    return -1;
  return (int)mk;
}

/* The bytes of the distinct pieces the arguments that choice puts in
 * memories of kind mk hold together (each piece once, at the most any of
 * them asks), and the parameter of the largest footprint among them (n:
 * none); -1 out of memory. */
static int64_t held_in(const mapopt_space *sp, const uint16_t *choice, int mk,
                       size_t *largest) {
  size_t n = mapopt_space_nparams(sp), count = 0;
  int64_t most = -1;
  *largest = n;
  for (size_t i = 0; i < n; i++)
    if (mapopt_space_active(sp, choice, i) && mem_of(sp, i, choice[i]) == mk) {
      key_size ks = arg_size(sp, i);
      count += ks.pieces.len;
      if (ks.footprint > most) {
        most = ks.footprint;
        *largest = i;
      }
    }
  if (!count)
    return 0;
  piece_bytes *all = mapopt__malloc(sp->ctx, count * sizeof *all);
  if (!all)
    return -1;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (mapopt_space_active(sp, choice, i) && mem_of(sp, i, choice[i]) == mk) {
      key_size ks = arg_size(sp, i);
      memcpy(all + k, ks.pieces.data, ks.pieces.len * sizeof *all);
      k += ks.pieces.len;
    }
  qsort(all, count, sizeof *all, by_piece);
  int64_t sum = 0;
  for (size_t a = 0; a < count;) {
    int64_t bytes = all[a].bytes;
    size_t b = a + 1;
    for (; b < count && all[b].piece == all[a].piece; b++)
      bytes = all[b].bytes > bytes ? all[b].bytes : bytes;
    sum = mapopt__sat_add(sum, bytes);
    a = b;
  }
  mapopt__free(sp->ctx, all, count * sizeof *all);
  return sum;
}

size_t mapopt__space_make_feasible(const mapopt_space *sp, uint16_t *choice) {
  size_t changed = 0, n = mapopt_space_nparams(sp);
  /* What the arguments put in one kind of memory must fit there together
   * (the footprint rule of too_small, over every argument choice puts
   * there): the largest goes back to its default memory until it does. */
  for (int mk = 0; mk < MAPOPT_MEM_KIND_COUNT; mk++) {
    size_t largest;
    int64_t held;
    while ((held = held_in(sp, choice, mk, &largest)) >
               all_capacity(sp, (mapopt_mem_kind)mk) &&
           largest < n) {
      choice[largest] = 0;
      changed++;
    }
  }
  /* One pass: a ruling depends on kinds, maps and dims only, which are
   * never ruled out. */
  for (size_t i = 0; i < n; i++) {
    if (!mapopt_space_active(sp, choice, i) ||
        mapopt__space_ruling(sp, choice, i, choice[i]) == MAPOPT__RULE_NONE)
      continue;
    uint16_t w = (uint16_t)(choice[i] + 1);
    while (w < mapopt_space_param_at(sp, i)->nvalues &&
           mapopt__space_ruling(sp, choice, i, w) != MAPOPT__RULE_NONE)
      w++;
    choice[i] = w < mapopt_space_param_at(sp, i)->nvalues ? w : 0;
    changed++;
  }
  return changed;
}

size_t mapopt__space_ruled_out(const mapopt_space *sp, const uint16_t *choice) {
  size_t n = mapopt_space_nparams(sp);
  for (size_t i = 0; i < n; i++)
    if (mapopt_space_active(sp, choice, i) &&
        mapopt__space_ruling(sp, choice, i, choice[i]) != MAPOPT__RULE_NONE)
      return i;
  return n;
}

/* ---- decisions ----------------------------------------------------------- */

static uint64_t mix_layout(uint64_t h, const mapopt_layout *l) {
  h = mapopt__hash_mix(h, (uint64_t)l->soa);
  h = mapopt__hash_mix(h, (uint64_t)l->c_order);
  h = mapopt__hash_mix(h, (uint64_t)l->align_op);
  h = mapopt__hash_mix(h, (uint64_t)l->align);
  h = mapopt__hash_mix(h, (uint64_t)l->compact);
  return mapopt__hash_mix(h, (uint64_t)l->exact);
}

/* What the mapper says of an argument in memory mk: the layout it
 * resolves to, and the Layout answer as given (the simulator checks that
 * Legion can build it). */
static uint64_t mix_arg_layout(uint64_t h, const mapopt_program *prog,
                               const char *tn, const mapopt_region_keys *keys,
                               mapopt_mem_kind mk, mapopt_proc_kind kind,
                               bool c_order) {
  mapopt_layout l;
  mapopt_policy_resolve_layout(prog, tn, keys, mk, kind, c_order, &l);
  h = mix_layout(h, &l);
  bool given = mapopt_policy_layout(prog, tn, keys, mk, kind, &l);
  h = mapopt__hash_mix(h, given);
  return given ? mix_layout(h, &l) : h;
}

mapopt_status mapopt__space_decisions(const mapopt_space *sp,
                                      const mapopt_program *prog,
                                      uint64_t *key) {
  const mapopt_app_run *run = sp->run;
  int64_t nodes = sp->shape.nodes;
  uint64_t h = mapopt__hash_mix(
      0xdec1de, mapopt_policy_replicated(prog, "main", true, nodes));
  int *kinds = mapopt__calloc(sp->ctx, (size_t)run->ntasks + 1, sizeof *kinds);
  if (!kinds)
    return MAPOPT_ENOMEM;
  mapopt_status st = MAPOPT_OK;
  for (int t = 0; t < run->ntasks && st == MAPOPT_OK; t++) {
    const space_task *tk = &sp->tasks[t];
    const char *tn = mapopt_app_task_name(run, t);
    if (!tk->used)
      continue;
    mapopt_proc_kind k;
    if (mapopt_policy_select_kind(prog, tn,
                                  mapopt_app_run_task(run, t)->variant_kinds,
                                  false, &k, NULL) != MAPOPT_OK ||
        (tk->single && mapopt_policy_map_function(prog, tn, k, true))) {
      st = MAPOPT_ENOTFOUND;
      break;
    }
    kinds[t] = (int)k;
    h = mapopt__hash_mix(h, (uint64_t)t);
    h = mapopt__hash_mix(h, (uint64_t)k);
    h = mapopt__hash_mix(h, (uint64_t)mapopt_policy_instance_limit(prog, tn));
    if (!tk->leaf)
      h = mapopt__hash_mix(h, mapopt_policy_replicated(prog, tn, false, nodes));
  }
  for (size_t li = 0; li < sp->launches.len && st == MAPOPT_OK; li++) {
    const space_launch *l = &MAPOPT__VEC_AT(&sp->launches, space_launch, li);
    int64_t *where = mapopt__calloc(sp->ctx, (size_t)l->count, sizeof *where);
    if (!where) {
      st = MAPOPT_ENOMEM;
      break;
    }
    st = place_launch(sp, prog, l, (mapopt_proc_kind)kinds[l->task], where);
    for (int64_t k = 0; k < l->count && st == MAPOPT_OK; k++)
      h = mapopt__hash_mix(h, (uint64_t)where[k]);
    mapopt__free(sp->ctx, where, (size_t)l->count * sizeof *where);
    if (st == MAPOPT_EMAP)
      st = MAPOPT_ENOTFOUND;
  }
  for (size_t ai = 0; ai < sp->args.len && st == MAPOPT_OK; ai++) {
    const space_arg *a = &MAPOPT__VEC_AT(&sp->args, space_arg, ai);
    const char *tn = mapopt_app_task_name(run, a->task);
    mapopt_proc_kind kind = (mapopt_proc_kind)kinds[a->task];
    mapopt_region_keys keys = {a->names, a->nnames, a->position};
    mapopt_mem_kind mk = mapopt_policy_select_memory(prog, tn, &keys, kind);
    /* The memory the simulator falls back to when mk is not reachable. */
    mapopt_mem_kind fallback =
        kind == MAPOPT_PROC_GPU ? MAPOPT_MEM_FBMEM : MAPOPT_MEM_SYSMEM;
    h = mapopt__hash_mix(h, (uint64_t)mk);
    h = mix_arg_layout(h, prog, tn, &keys, mk, kind, run->default_c_order);
    h = mix_arg_layout(h, prog, tn, &keys, fallback, kind,
                       run->default_c_order);
    h = mapopt__hash_mix(h, mapopt_policy_collect(prog, tn, &keys));
  }
  mapopt__free(sp->ctx, kinds, ((size_t)run->ntasks + 1) * sizeof *kinds);
  if (st == MAPOPT_OK)
    *key = h;
  return st;
}
