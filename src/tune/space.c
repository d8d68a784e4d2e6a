/*
 * The search space (include/mapopt/tune.h): derived from an application run
 * and a machine, and rendered from choice vectors to DSL text.
 *
 * Derivation walks the run's ops once and collects, per task, the
 * processor kinds it can use, whether it is a leaf, the shape of its index
 * launches, the parent of its single launches and the keys of its region
 * arguments; per region, whether any leaf uses it. Every parameter comes
 * from those facts: nothing here knows an application by name.
 *
 * Rendering writes keyed statements only (no wildcards), so that over a
 * base mapper they take precedence (the first binding wins), and the
 * mapping functions it needs, named by what they do ("mo_cyclic_gpu_d01")
 * so that two tasks with the same choice share one function. Without a
 * base mapper, a value that equals the runtime's default is not offered,
 * so two choice vectors that behave alike rarely render differently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/json.h"
#include "mapopt/sim.h"
#include "tune/tune.h"

/* Templates of MAPOPT_PARAM_INDEX_MAP, in value order after "default". */
static const char *const map_templates[] = {
    "default", "cyclic", "block", "block-cyclic", "cyclic-block", "decompose"};
enum { NTEMPLATES = sizeof map_templates / sizeof map_templates[0] };
/* Cyclic comes first: the default placement is already block-like, so a
 * search that tries one alternative first should try the most different
 * one. */
enum { T_DEFAULT, T_CYCLIC, T_BLOCK, T_BLOCK_CYCLIC, T_CYCLIC_BLOCK, T_DECOMP };
/* The values after the templates, offered where the launch can use them:
 * near the data (affinity.c), and block over a skewed point, dimension a
 * shifted by dimension b ("skew/a+b": point p on the block processor of
 * the point whose dimension a is (p[a] + p[b]) mod s[a]), so that the
 * first step of an algorithm that shifts its blocks along a, by b (a
 * Cannon-style alignment), reads where the blocks already are. */
static const char affinity_consumer[] = "affinity/consumer";
static const char affinity_producer[] = "affinity/producer";
static const char affinity_prefetch[] = "affinity/prefetch";
static const char affinity_skewed[] = "affinity/skewed";
static const char *const skew_values[] = {"skew/0+1", "skew/1+0"};

static const char *const limit_values[] = {"default", "1", "2", "4"};

/* The rendering of the point where every choice is the default. */
static const char default_mapper_text[] =
    "# The default mapper: every decision is the runtime's default\n"
    "# (docs/dsl.md section 5.11). Its one statement restates the default\n"
    "# order of processor kinds: the DSL mapper of Legion refuses a file\n"
    "# without a statement (docs/legion.md).\n"
    "Task * GPU, OMP, CPU, IO, PY, PROC;\n";

const char *mapopt__space_default_mapper(void) {
  return default_mapper_text;
}

static const char *const onoff_values[] = {"default", "on"};
static const char *const follow_values[] = {"default", "parent"};

const char *mapopt_param_kind_name(mapopt_param_kind k) {
  static const char *const names[] = {"kind",    "memory", "soa",  "order",
                                      "align",   "map",    "dims", "limit",
                                      "collect", "follow"};
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : NULL;
}

/* The default processor-kind order of docs/dsl.md. */
static const mapopt_proc_kind kind_order[] = {
    MAPOPT_PROC_GPU, MAPOPT_PROC_OMP, MAPOPT_PROC_CPU,
    MAPOPT_PROC_IO,  MAPOPT_PROC_PY,  MAPOPT_PROC_PROC};

/* The first kind of the default order in mask, or -1. */
static int first_kind(unsigned mask) {
  for (size_t i = 0; i < sizeof kind_order / sizeof kind_order[0]; i++)
    if (mask & (1u << kind_order[i]))
      return (int)kind_order[i];
  return -1;
}

/* ---- derivation ---------------------------------------------------------- */

/* Adds a parameter; its values array is copied into the arena. */
static mapopt_status add_param(mapopt_space *sp, mapopt_param_kind kind,
                               int task, const char *region,
                               mapopt_proc_kind proc, const char *const *values,
                               size_t nvalues, const char *name) {
  mapopt_space_param *p = mapopt__vec_push(&sp->params, sp->ctx);
  int *tk = mapopt__vec_push(&sp->param_task, sp->ctx);
  const char **vals = mapopt__arena_alloc(&sp->arena, nvalues * sizeof *vals);
  char *nm = mapopt__arena_strndup(&sp->arena, name, strlen(name));
  if (!p || !tk || !vals || !nm)
    return MAPOPT_ENOMEM;
  memcpy(vals, values, nvalues * sizeof *vals);
  *p = (mapopt_space_param){
      nm,     kind, task >= 0 ? mapopt_app_task_name(sp->run, task) : NULL,
      region, proc, nvalues,
      vals};
  *tk = task;
  return MAPOPT_OK;
}

/* The index of name in the vector of names v, or v->len. */
static size_t key_index(const mapopt__vec *v, const char *name) {
  size_t k = 0;
  while (k < v->len && strcmp(MAPOPT__VEC_AT(v, const char *, k), name))
    k++;
  return k;
}

/* Adds signature h to seen (its bytes copied into the space's arena);
 * 1 when new, 0 when seen before, -1 out of memory. */
static int seen_add(mapopt_space *sp, mapopt__map *seen, uint64_t h) {
  if (mapopt__map_find(seen, (const char *)&h, sizeof h))
    return 0;
  char *k = mapopt__arena_alloc(&sp->arena, sizeof h);
  bool inserted;
  if (!k)
    return -1;
  memcpy(k, &h, sizeof h);
  return mapopt__map_upsert(seen, sp->ctx, k, sizeof h, &inserted) ? 1 : -1;
}

/* Counts an instance of bytes that op o asks of a key, of a piece not seen
 * before for it when fresh (sums saturate). */
static void add_size(key_size *ks, const mapopt_app_op *o, int64_t bytes,
                     bool fresh) {
  ks->one = bytes > ks->one ? bytes : ks->one;
  if (fresh)
    ks->footprint = mapopt__sat_add(ks->footprint, bytes);
  if (!o->is_index)
    return;
  if (o->launch != ks->last_launch) {
    ks->last_launch = o->launch;
    ks->sum = 0;
  }
  ks->sum = mapopt__sat_add(ks->sum, bytes);
  ks->launch = ks->sum > ks->launch ? ks->sum : ks->launch;
}

/* The distinct index launches and leaf arguments of the run (tune.h,
 * space_launch and space_arg): what decide.c resolves a mapper's
 * decisions over. A launch is a run of consecutive points of one launch
 * statement; two are alike when their task, nesting and points are. */
static mapopt_status scan_decided(mapopt_space *sp) {
  const mapopt_app_run *run = sp->run;
  mapopt__map seen;
  mapopt__map_init(&seen);
  mapopt_status st = MAPOPT_OK;
  for (int64_t i = 0; i < run->nops && st == MAPOPT_OK;) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK || !o->is_index) {
      i++;
      continue;
    }
    uint64_t h = mapopt__hash_mix(0x1a0c4, (uint64_t)o->task);
    h = mapopt__hash_mix(h, (uint64_t)o->dims);
    h = mapopt__hash_mix(h, o->parent >= 0);
    int64_t j = i;
    for (; j < run->nops && mapopt_app_run_op(run, j)->kind == MAPOPT_OP_TASK &&
           mapopt_app_run_op(run, j)->is_index &&
           mapopt_app_run_op(run, j)->launch == o->launch;
         j++)
      for (int d = 0; d < o->dims; d++) {
        h = mapopt__hash_mix(h, (uint64_t)mapopt_app_run_op(run, j)->point[d]);
        h = mapopt__hash_mix(h,
                             (uint64_t)mapopt_app_run_op(run, j)->extents[d]);
      }
    int added = seen_add(sp, &seen, h);
    space_launch *l =
        added > 0 ? mapopt__vec_push(&sp->launches, sp->ctx) : NULL;
    if (added < 0 || (added > 0 && !l))
      st = MAPOPT_ENOMEM;
    else if (l)
      *l = (space_launch){o->task, i, j - i};
    i = j;
  }
  mapopt__map_destroy(&seen, sp->ctx);
  mapopt__map_init(&seen);
  for (int64_t i = 0; i < run->nops && st == MAPOPT_OK; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK || !sp->tasks[o->task].leaf)
      continue;
    for (size_t r = 0; r < o->nreqs && st == MAPOPT_OK; r++) {
      const mapopt_app_req *q = mapopt_app_op_req(o, r);
      if (!q->fields)
        continue;
      uint64_t h = mapopt__hash_mix(0x5a6e, (uint64_t)o->task);
      h = mapopt__hash_mix(h, r);
      for (size_t k = 0; k < q->nnames; k++)
        h = mapopt__hash_mix(
            h, mapopt__hash_bytes(mapopt_app_req_name(q, k),
                                  strlen(mapopt_app_req_name(q, k))));
      int added = seen_add(sp, &seen, h);
      space_arg *a = added > 0 ? mapopt__vec_push(&sp->args, sp->ctx) : NULL;
      if (added < 0 || (added > 0 && !a))
        st = MAPOPT_ENOMEM;
      else if (a)
        *a = (space_arg){o->task, r, q->names, q->nnames};
    }
  }
  mapopt__map_destroy(&seen, sp->ctx);
  return st;
}

int mapopt__space_region_of(const mapopt_space *sp, const char *name) {
  for (size_t i = 0; i < sp->names.len; i++) {
    const name_region *nr = &MAPOPT__VEC_AT(&sp->names, name_region, i);
    if (!strcmp(nr->name, name))
      return nr->region;
  }
  return -1;
}

const mapopt_app_run *mapopt__space_run(const mapopt_space *sp) {
  return sp->run;
}

/* Collects the facts of every task and region from the run's ops. */
static mapopt_status scan_run(mapopt_space *sp) {
  const mapopt_app_run *run = sp->run;
  sp->tasks = mapopt__arena_zalloc(&sp->arena, (size_t)(run->ntasks + 1) *
                                                   sizeof *sp->tasks);
  sp->region_used =
      mapopt__arena_zalloc(&sp->arena, (size_t)(run->nregions + 1));
  sp->order_rule =
      mapopt__arena_zalloc(&sp->arena, 2 * (size_t)(run->nregions + 1));
  if (!sp->tasks || !sp->region_used || !sp->order_rule)
    return MAPOPT_ENOMEM;
  for (int t = 0; t < run->ntasks; t++) {
    space_task *st = &sp->tasks[t];
    st->index_dims = -1;
    st->parent_task = -1;
    unsigned usable = 0;
    for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
      if ((mapopt_app_run_task(run, t)->variant_kinds & (1u << k)) &&
          sp->shape.procs[k] > 0)
        usable |= 1u << k;
    st->usable = usable;
    st->default_kind = first_kind(usable);
    st->leaf = !mapopt_app_run_task(run, t)->inner;
    mapopt__vec_init(&st->keys, sizeof(const char *));
    mapopt__vec_init(&st->key_args, sizeof(key_arg));
    mapopt__vec_init(&st->key_sizes, sizeof(key_size));
  }
  /* Pass 1: launch shapes, parents, read-only arguments. */
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK)
      continue;
    space_task *st = &sp->tasks[o->task];
    st->used = true;
    if (o->is_index) {
      if (st->index_dims == -1)
        st->index_dims = o->dims;
      else if (st->index_dims != o->dims)
        st->index_dims = -2; /* launches of several shapes */
    } else {
      st->single = true;
    }
    if (!o->is_index && o->parent >= 0) {
      int pt = mapopt_app_run_op(run, o->parent)->task;
      if (st->parent_task == -1)
        st->parent_task = pt;
      else if (st->parent_task != pt)
        st->parent_task = -2;
    }
    for (size_t r = 0; r < o->nreqs; r++) {
      const mapopt_app_req *q = mapopt_app_op_req(o, r);
      for (size_t k = 0; k < q->nnames; k++)
        if (mapopt__space_region_of(sp, mapopt_app_req_name(q, k)) < 0) {
          name_region *nr = mapopt__vec_push(&sp->names, sp->ctx);
          if (!nr)
            return MAPOPT_ENOMEM;
          *nr = (name_region){mapopt_app_req_name(q, k), q->piece->region};
        }
      if (q->priv == MAPOPT_PRIV_RO && q->fields)
        st->reads = true;
      if (st->leaf && q->fields)
        sp->region_used[q->piece->region] = 1;
      sp->named |= st->leaf && q->fields && q->nnames;
    }
  }
  /* Pass 2: argument keys of leaf tasks, in first-seen order. The DSL mapper
   * of Legion matches arguments by name or by position in one run, and
   * Layout and CollectMemory only by name (docs/legion.md): every key is
   * the argument's first name, so two arguments of one op that share it
   * share its statements; only an application that names no argument is
   * keyed by position. Each key's pieces are counted once for its
   * footprint (seen: task, key and piece). */
  mapopt__map seen;
  mapopt__map_init(&seen);
  mapopt_status status = MAPOPT_OK;
  for (int64_t i = 0; i < run->nops && status == MAPOPT_OK; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK || !sp->tasks[o->task].leaf)
      continue;
    space_task *st = &sp->tasks[o->task];
    for (size_t r = 0; r < o->nreqs && status == MAPOPT_OK; r++) {
      const mapopt_app_req *q = mapopt_app_op_req(o, r);
      if (!q->fields)
        continue;
      const char *key;
      if (q->nnames) {
        key = mapopt_app_req_name(q, 0);
      } else if (sp->named) {
        continue; /* a position would make the mapper mix the two */
      } else {
        key = mapopt__arena_printf(&sp->arena, "%zu", r);
        if (!key) {
          status = MAPOPT_ENOMEM;
          break;
        }
      }
      size_t at = key_index(&st->keys, key);
      if (at == st->keys.len) {
        const char **slot = mapopt__vec_push(&st->keys, sp->ctx);
        key_arg *ka = slot ? mapopt__vec_push(&st->key_args, sp->ctx) : NULL;
        key_size *ks = ka ? mapopt__vec_push(&st->key_sizes, sp->ctx) : NULL;
        if (!ks) {
          status = MAPOPT_ENOMEM;
          break;
        }
        *slot = key;
        *ka = (key_arg){q->names, q->nnames, r};
        *ks = (key_size){0, 0, -1, 0, 0, {0}};
        mapopt__vec_init(&ks->pieces, sizeof(piece_bytes));
      }
      uint64_t h = mapopt__hash_mix(0xf007, (uint64_t)o->task);
      h = mapopt__hash_mix(mapopt__hash_mix(h, at), (uint64_t)q->piece->id);
      int fresh = seen_add(sp, &seen, h);
      key_size *ks = &MAPOPT__VEC_AT(&st->key_sizes, key_size, at);
      int64_t bytes = mapopt__space_request_bytes(run, q);
      piece_bytes *pb =
          fresh > 0 ? mapopt__vec_push(&ks->pieces, sp->ctx) : NULL;
      if (fresh < 0 || (fresh > 0 && !pb))
        status = MAPOPT_ENOMEM;
      else if (pb)
        *pb = (piece_bytes){q->piece->id, bytes};
      add_size(ks, o, bytes, fresh > 0);
    }
  }
  mapopt__map_destroy(&seen, sp->ctx);
  return status == MAPOPT_OK ? scan_decided(sp) : status;
}

/* The orderings of the dimensions of a dims-D launch: every non-empty
 * sequence of distinct dimensions, all of them in natural order first.
 * The fastest (first) dimension decides most of where neighbouring points
 * go, so the full orderings come by fastest dimension first: a search
 * that tries a parameter's next values meets every fastest dimension
 * before it meets the same one twice. */
static mapopt_status dims_values(mapopt_space *sp, int dims, const char ***out,
                                 size_t *n) {
  static const char *const d1[] = {"0"};
  static const char *const d2[] = {"01", "10", "0", "1"};
  static const char *const d3[] = {"012", "102", "201", "021", "120",
                                   "210", "01",  "10",  "02",  "20",
                                   "12",  "21",  "0",   "1",   "2"};
  const char *const *src = dims == 1 ? d1 : dims == 2 ? d2 : d3;
  size_t k = dims == 1 ? 1 : dims == 2 ? 4 : 15;
  const char **v = mapopt__arena_alloc(&sp->arena, k * sizeof *v);
  if (!v)
    return MAPOPT_ENOMEM;
  memcpy(v, src, k * sizeof *v);
  *out = v;
  *n = k;
  return MAPOPT_OK;
}

static mapopt_status derive(mapopt_space *sp) {
  const mapopt_app_run *run = sp->run;
  const mapopt_machine *m = sp->machine;
  bool base = sp->base != NULL;
  char name[512];
  const char *vals[MAPOPT_MEM_KIND_COUNT + MAPOPT_PROC_KIND_COUNT + 2];
  mapopt_status st = MAPOPT_OK;
  /* Processor kinds. */
  for (int t = 0; t < run->ntasks && st == MAPOPT_OK; t++) {
    const space_task *tk = &sp->tasks[t];
    if (!tk->used)
      continue;
    size_t n = 0;
    vals[n++] = "default";
    for (size_t i = 0; i < sizeof kind_order / sizeof kind_order[0]; i++) {
      mapopt_proc_kind k = kind_order[i];
      if ((tk->usable & (1u << k)) && (base || (int)k != tk->default_kind))
        vals[n++] = mapopt_shape_proc_name(k);
    }
    snprintf(name, sizeof name, "kind.%s", mapopt_app_task_name(run, t));
    if (n >= 2)
      st = add_param(sp, MAPOPT_PARAM_PROC_KIND, t, NULL, MAPOPT_PROC_CPU, vals,
                     n, name);
  }
  /* Memories, per leaf task, argument and usable kind. */
  for (int t = 0; t < run->ntasks && st == MAPOPT_OK; t++) {
    const space_task *tk = &sp->tasks[t];
    if (!tk->used || !tk->leaf)
      continue;
    for (size_t a = 0; a < tk->keys.len && st == MAPOPT_OK; a++) {
      const char *key = MAPOPT__VEC_AT(&tk->keys, const char *, a);
      for (size_t i = 0;
           i < sizeof kind_order / sizeof kind_order[0] && st == MAPOPT_OK;
           i++) {
        mapopt_proc_kind k = kind_order[i];
        if (!(tk->usable & (1u << k)))
          continue;
        size_t n = 0;
        vals[n++] = "default";
        mapopt_mem_kind def = mapopt_shape_default_memory(&sp->shape, k);
        for (int mk = 0; mk < MAPOPT_MEM_KIND_COUNT; mk++)
          if (mk != MAPOPT_MEM_VIRTUAL && m->mems[mk].present &&
              m->affinity[k][mk].present && (base || mk != (int)def))
            vals[n++] = mapopt_shape_mem_name((mapopt_mem_kind)mk);
        snprintf(name, sizeof name, "memory.%s.%s.%s",
                 mapopt_app_task_name(run, t), key, mapopt_shape_proc_name(k));
        if (n >= 2)
          st = add_param(sp, MAPOPT_PARAM_MEMORY, t, key, k, vals, n, name);
      }
    }
  }
  /* Layouts, per region some leaf uses. */
  for (int r = 0; r < run->nregions && st == MAPOPT_OK; r++) {
    if (!sp->region_used[r])
      continue;
    const char *rn = mapopt_app_run_region(run, r)->name;
    if (mapopt_app_run_region(run, r)->nfields > 1) {
      const char *soa[] = {"default", "AOS", "SOA"};
      snprintf(name, sizeof name, "soa.%s", rn);
      st = add_param(sp, MAPOPT_PARAM_LAYOUT_SOA, -1, rn, MAPOPT_PROC_CPU, soa,
                     base ? 3 : 2, name);
    }
    const char *other = run->default_c_order ? "F_order" : "C_order";
    const char *same = run->default_c_order ? "C_order" : "F_order";
    const char *order[] = {"default", other, same};
    snprintf(name, sizeof name, "order.%s", rn);
    if (st == MAPOPT_OK)
      st = add_param(sp, MAPOPT_PARAM_LAYOUT_ORDER, -1, rn, MAPOPT_PROC_CPU,
                     order, base ? 3 : 2, name);
    const char *align[] = {"default", "64", "128"};
    snprintf(name, sizeof name, "align.%s", rn);
    if (st == MAPOPT_OK)
      st = add_param(sp, MAPOPT_PARAM_LAYOUT_ALIGN, -1, rn, MAPOPT_PROC_CPU,
                     align, 3, name);
  }
  /* Index mappings, InstanceLimit, CollectMemory, parent-following. */
  for (int t = 0; t < run->ntasks && st == MAPOPT_OK; t++) {
    const space_task *tk = &sp->tasks[t];
    const char *tn = mapopt_app_task_name(run, t);
    if (!tk->used)
      continue;
    if (tk->index_dims >= 1 && tk->index_dims <= MAPOPT_APP_MAX_DIMS) {
      const char *mv[NTEMPLATES + 6];
      size_t n = 0;
      for (; n < NTEMPLATES; n++)
        mv[n] = map_templates[n];
      if (tk->affinity && tk->affinity->any_consumer)
        mv[n++] = affinity_consumer;
      if (tk->affinity && tk->affinity->any_producer)
        mv[n++] = affinity_producer;
      if (tk->affinity && tk->affinity->any_prefetch)
        mv[n++] = affinity_prefetch;
      for (size_t k = 0; tk->index_dims >= 2 && k < 2; k++)
        mv[n++] = skew_values[k];
      if (tk->affinity && tk->affinity->any_skewed)
        mv[n++] = affinity_skewed;
      snprintf(name, sizeof name, "map.%s", tn);
      st = add_param(sp, MAPOPT_PARAM_INDEX_MAP, t, NULL, MAPOPT_PROC_CPU, mv,
                     n, name);
      const char **dv;
      size_t nd;
      if (st == MAPOPT_OK && tk->index_dims > 1 &&
          (st = dims_values(sp, tk->index_dims, &dv, &nd)) == MAPOPT_OK) {
        snprintf(name, sizeof name, "dims.%s", tn);
        st = add_param(sp, MAPOPT_PARAM_INDEX_DIMS, t, NULL, MAPOPT_PROC_CPU,
                       dv, nd, name);
      }
    }
    if (st == MAPOPT_OK && tk->leaf) {
      snprintf(name, sizeof name, "limit.%s", tn);
      st = add_param(sp, MAPOPT_PARAM_INSTANCE_LIMIT, t, NULL, MAPOPT_PROC_CPU,
                     limit_values, 4, name);
    }
    if (st == MAPOPT_OK && tk->leaf && tk->reads) {
      snprintf(name, sizeof name, "collect.%s", tn);
      st = add_param(sp, MAPOPT_PARAM_COLLECT, t, NULL, MAPOPT_PROC_CPU,
                     onoff_values, 2, name);
    }
    if (st == MAPOPT_OK && tk->parent_task >= 0) {
      snprintf(name, sizeof name, "follow.%s", tn);
      st = add_param(sp, MAPOPT_PARAM_FOLLOW_PARENT, t, NULL, MAPOPT_PROC_CPU,
                     follow_values, 2, name);
    }
  }
  return st;
}

/* The kind each task gets when its kind parameter is default: the base
 * mapper's choice, else the runtime's default order. */
static mapopt_status base_kinds(mapopt_space *sp, mapopt_diags *diags,
                                const mapopt_space_options *opts) {
  for (int t = 0; t < sp->run->ntasks; t++)
    sp->tasks[t].base_kind = sp->tasks[t].default_kind;
  if (!opts || !opts->base)
    return MAPOPT_OK;
  sp->base = mapopt__arena_strndup(&sp->arena, opts->base, opts->base_len);
  if (!sp->base)
    return MAPOPT_ENOMEM;
  sp->base_len = opts->base_len;
  mapopt_dsl_options dopts = {.file = opts->base_file, .shape = &sp->shape};
  mapopt_program *prog;
  mapopt_status st = mapopt_dsl_compile(sp->ctx, opts->base, opts->base_len,
                                        &dopts, diags, &prog);
  if (st != MAPOPT_OK)
    return st;
  for (int t = 0; t < sp->run->ntasks; t++) {
    mapopt_proc_kind k;
    if (mapopt_policy_select_kind(prog, mapopt_app_task_name(sp->run, t),
                                  sp->tasks[t].usable, true, &k,
                                  NULL) == MAPOPT_OK)
      sp->tasks[t].base_kind = (int)k;
  }
  mapopt_dsl_free(prog);
  return MAPOPT_OK;
}

mapopt_status mapopt_space_new(mapopt_ctx *ctx, const mapopt_app_run *run,
                               const mapopt_machine *machine,
                               const mapopt_space_options *opts,
                               mapopt_diags *diags, mapopt_space **out) {
  if (!ctx || !run || !machine || !out)
    return MAPOPT_EINVAL;
  mapopt_space *sp = mapopt__calloc(ctx, 1, sizeof *sp);
  if (!sp)
    return MAPOPT_ENOMEM;
  sp->ctx = ctx;
  sp->run = run;
  sp->machine = machine;
  mapopt__arena_init(&sp->arena, ctx);
  mapopt__vec_init(&sp->params, sizeof(mapopt_space_param));
  mapopt__vec_init(&sp->names, sizeof(name_region));
  mapopt__vec_init(&sp->param_task, sizeof(int));
  mapopt__vec_init(&sp->launches, sizeof(space_launch));
  mapopt__vec_init(&sp->args, sizeof(space_arg));
  mapopt__vec_init(&sp->spreads, sizeof(space_spread));
  sp->real_runs = opts && opts->real_runs;
  mapopt_sim_shape(machine, run, &sp->shape);
  sp->ranks = machine->nodes > 0 && sp->shape.nodes >= machine->nodes
                  ? sp->shape.nodes / machine->nodes
                  : 1;
  mapopt_status st = scan_run(sp);
  if (st == MAPOPT_OK)
    st = mapopt__space_derive_affinity(sp);
  if (st == MAPOPT_OK)
    st = base_kinds(sp, diags, opts);
  if (st == MAPOPT_OK)
    st = derive(sp);
  if (st == MAPOPT_OK)
    for (size_t i = 0; i < sp->params.len; i++) {
      const mapopt_space_param *p =
          &MAPOPT__VEC_AT(&sp->params, mapopt_space_param, i);
      if (p->kind == MAPOPT_PARAM_PROC_KIND)
        sp->tasks[MAPOPT__VEC_AT(&sp->param_task, int, i)].kind_param =
            (int64_t)i + 1;
      if (p->kind == MAPOPT_PARAM_INDEX_MAP)
        sp->tasks[MAPOPT__VEC_AT(&sp->param_task, int, i)].map_param =
            (int64_t)i + 1;
    }
  if (st != MAPOPT_OK) {
    mapopt_space_free(sp);
    return st;
  }
  *out = sp;
  return MAPOPT_OK;
}

void mapopt_space_free(mapopt_space *sp) {
  if (!sp)
    return;
  for (int t = 0; sp->tasks && t < sp->run->ntasks; t++) {
    mapopt__vec_destroy(&sp->tasks[t].keys, sp->ctx);
    mapopt__vec_destroy(&sp->tasks[t].key_args, sp->ctx);
    for (size_t k = 0; k < sp->tasks[t].key_sizes.len; k++)
      mapopt__vec_destroy(
          &MAPOPT__VEC_AT(&sp->tasks[t].key_sizes, key_size, k).pieces,
          sp->ctx);
    mapopt__vec_destroy(&sp->tasks[t].key_sizes, sp->ctx);
  }
  mapopt__vec_destroy(&sp->launches, sp->ctx);
  mapopt__vec_destroy(&sp->args, sp->ctx);
  mapopt__vec_destroy(&sp->spreads, sp->ctx);
  mapopt__vec_destroy(&sp->params, sp->ctx);
  mapopt__vec_destroy(&sp->names, sp->ctx);
  mapopt__vec_destroy(&sp->param_task, sp->ctx);
  mapopt__arena_destroy(&sp->arena);
  mapopt__free(sp->ctx, sp, sizeof *sp);
}

size_t mapopt_space_nparams(const mapopt_space *sp) {
  return sp->params.len;
}

const mapopt_space_param *mapopt_space_param_at(const mapopt_space *sp,
                                                size_t i) {
  return i < sp->params.len
             ? &MAPOPT__VEC_AT(&sp->params, mapopt_space_param, i)
             : NULL;
}

mapopt_status mapopt_space_find(const mapopt_space *sp, const char *name,
                                size_t *index) {
  for (size_t i = 0; i < sp->params.len; i++)
    if (!strcmp(MAPOPT__VEC_AT(&sp->params, mapopt_space_param, i).name,
                name)) {
      *index = i;
      return MAPOPT_OK;
    }
  return MAPOPT_ENOTFOUND;
}

/* ---- choices ------------------------------------------------------------- */

int mapopt__space_task_of(const mapopt_space *sp, size_t i) {
  return MAPOPT__VEC_AT(&sp->param_task, int, i);
}

int mapopt__space_kind_of(const mapopt_space *sp, const uint16_t *choice,
                          int task) {
  const space_task *tk = &sp->tasks[task];
  if (tk->kind_param > 0) {
    uint16_t v = choice[tk->kind_param - 1];
    if (v > 0) {
      const mapopt_space_param *p =
          mapopt_space_param_at(sp, (size_t)(tk->kind_param - 1));
      mapopt_proc_kind k;
      if (mapopt_shape_proc_parse(p->values[v], &k) == MAPOPT_OK)
        return (int)k;
    }
  }
  return tk->base_kind;
}

bool mapopt_space_active(const mapopt_space *sp, const uint16_t *choice,
                         size_t i) {
  const mapopt_space_param *p = mapopt_space_param_at(sp, i);
  if (!p)
    return false;
  int t = mapopt__space_task_of(sp, i);
  switch (p->kind) {
  case MAPOPT_PARAM_MEMORY:
    return mapopt__space_kind_of(sp, choice, t) == (int)p->proc;
  case MAPOPT_PARAM_INDEX_DIMS: /* the templates linearize over it */
    return sp->tasks[t].map_param > 0 &&
           choice[sp->tasks[t].map_param - 1] != T_DEFAULT &&
           choice[sp->tasks[t].map_param - 1] < NTEMPLATES;
  default:
    return true;
  }
}

bool mapopt__space_map_by_affinity(const mapopt_space *sp,
                                   const uint16_t *choice, int t) {
  int64_t pm = sp->tasks[t].map_param;
  if (pm <= 0)
    return false;
  const mapopt_space_param *p = mapopt_space_param_at(sp, (size_t)pm - 1);
  return !strncmp(p->values[choice[pm - 1]], "affinity/", 9);
}

/* ---- rendering ----------------------------------------------------------- */

static const char *const kind_lower[MAPOPT_PROC_KIND_COUNT] = {
    "cpu", "gpu", "omp", "io", "py", "proc"};

/* The function names already written, so each is written once. */
typedef struct fn_set {
  /* Every name: 5 templates x 3 kinds x 15 orders, the parent followers
   * and 2 skews x 2 shapes x 3 kinds; a name is at most 28 characters.
   * The affinity lookups are named by their parameter, one each, and
   * need no entry. */
  char names[256][64];
  int n;
} fn_set;

static bool fn_add(fn_set *fs, const char *name) {
  for (int i = 0; i < fs->n; i++)
    if (!strcmp(fs->names[i], name))
      return false;
  if (fs->n < 256)
    snprintf(fs->names[fs->n++], sizeof fs->names[0], "%s", name);
  return true;
}

/* Coordinate c of the point, dimension skew[0] shifted by dimension
 * skew[2] when skew ("a+b") is given. */
static void write_coordinate(mapopt__strbuf *sb, char c, const char *skew) {
  if (skew && c == skew[0])
    mapopt__sb_printf(sb, "(p[%c] + p[%c]) %% s[%c]", c, skew[2], c);
  else
    mapopt__sb_printf(sb, "p[%c]", c);
}

/* The linearization of a point over dims (e.g. "021", the first fastest)
 * into l, and the product of those extents into n. */
static void write_linear(mapopt__strbuf *sb, const char *dims,
                         const char *skew) {
  size_t k = strlen(dims);
  mapopt__sb_puts(sb, "    l = ");
  for (size_t i = 0; i + 1 < k; i++) {
    write_coordinate(sb, dims[i], skew);
    mapopt__sb_printf(sb, " + s[%c] * (", dims[i]);
  }
  write_coordinate(sb, dims[k - 1], skew);
  for (size_t i = 1; i < k; i++)
    mapopt__sb_putc(sb, ')');
  mapopt__sb_puts(sb, ";\n    n = ");
  for (size_t i = 0; i < k; i++)
    mapopt__sb_printf(sb, "%ss[%c]", i ? " * " : "", dims[i]);
  mapopt__sb_puts(sb, ";\n");
}

/* Writes function fn: template tpl over dims on the machine model mv, the
 * point skewed as skew says (write_coordinate) when given. */
static void write_template(mapopt__strbuf *sb, const char *fn, int tpl,
                           const char *dims, const char *mv, const char *skew) {
  size_t k = strlen(dims);
  mapopt__sb_printf(sb,
                    "def %s(Task t) {\n    p = t.ipoint;\n"
                    "    s = t.ispace;\n",
                    fn);
  switch (tpl) {
  case T_BLOCK:
    write_linear(sb, dims, skew);
    mapopt__sb_printf(sb,
                      "    q = l * %s.size[0] * %s.size[1] / n;\n"
                      "    return %s[q / %s.size[1], q %% %s.size[1]];\n",
                      mv, mv, mv, mv, mv);
    break;
  case T_CYCLIC:
    write_linear(sb, dims, skew);
    mapopt__sb_printf(sb,
                      "    q = l %% (%s.size[0] * %s.size[1]);\n"
                      "    return %s[q / %s.size[1], q %% %s.size[1]];\n",
                      mv, mv, mv, mv, mv);
    break;
  case T_BLOCK_CYCLIC:
    write_linear(sb, dims, skew);
    mapopt__sb_printf(sb,
                      "    return %s[l * %s.size[0] / n, l %% %s.size[1]];\n",
                      mv, mv, mv);
    break;
  case T_CYCLIC_BLOCK:
    write_linear(sb, dims, skew);
    mapopt__sb_printf(sb,
                      "    return %s[l %% %s.size[0], "
                      "l / %s.size[0] %% %s.size[1]];\n",
                      mv, mv, mv, mv);
    break;
  default: /* T_DECOMP over k >= 2 dimensions */
    mapopt__sb_puts(sb, "    e = (");
    for (size_t i = 0; i < k; i++)
      mapopt__sb_printf(sb, "%ss[%c]", i ? ", " : "", dims[i]);
    /* Blocks of at least one point per node, each written out: the DSL
     * mapper of Legion loops only over a tuple written out. */
    mapopt__sb_printf(sb,
                      ");\n    a = %s.auto_split(0, e);\n"
                      "    q = e / a[:-1];\n    b = a.auto_split(%zu, (",
                      mv, k);
    for (size_t i = 0; i < k; i++)
      mapopt__sb_printf(sb, "%sq[%zu] < 1 ? 1 : q[%zu]", i ? ", " : "", i, i);
    mapopt__sb_puts(sb, "));\n    return b[");
    for (size_t i = 0; i < k; i++)
      mapopt__sb_printf(sb, "%sp[%c] * b.size[%zu] / e[%zu]", i ? ", " : "",
                        dims[i], i, i);
    for (size_t i = 0; i < k; i++)
      mapopt__sb_printf(sb, ", p[%c] %% b.size[%zu]", dims[i], k + i);
    mapopt__sb_puts(sb, "];\n");
    break;
  }
  mapopt__sb_puts(sb, "}\n");
}

/* The value name of the parameter of kind `kind` of task t or region rn,
 * or NULL when the space has none. */
static const char *value_of(const mapopt_space *sp, const uint16_t *choice,
                            mapopt_param_kind kind, int t, const char *rn) {
  for (size_t i = 0; i < sp->params.len; i++) {
    const mapopt_space_param *p = mapopt_space_param_at(sp, i);
    if (p->kind != kind)
      continue;
    if (rn ? (p->region && !strcmp(p->region, rn))
           : mapopt__space_task_of(sp, i) == t)
      return p->values[choice[i]];
  }
  return NULL;
}

/* Whether task t follows its parent's processor under choice. */
static bool follows_parent(const mapopt_space *sp, const uint16_t *choice,
                           int t) {
  const char *v = value_of(sp, choice, MAPOPT_PARAM_FOLLOW_PARENT, t, NULL);
  return v && !strcmp(v, "parent");
}

/* The dims value of task t under choice: its parameter's value, or all of
 * its launch dimensions in natural order when it has none. */
static const char *dims_of(const mapopt_space *sp, const uint16_t *choice,
                           int t) {
  static const char *const all[] = {"0", "0", "01", "012"};
  const char *v = value_of(sp, choice, MAPOPT_PARAM_INDEX_DIMS, t, NULL);
  int d = sp->tasks[t].index_dims;
  return v ? v : all[d >= 1 && d <= 3 ? d : 0];
}

/* The Layout statement of region rn, if any component is not default. */
static void write_layout(const mapopt_space *sp, const uint16_t *choice,
                         const char *rn, mapopt__strbuf *sb) {
  const char *soa = value_of(sp, choice, MAPOPT_PARAM_LAYOUT_SOA, -1, rn);
  const char *ord = value_of(sp, choice, MAPOPT_PARAM_LAYOUT_ORDER, -1, rn);
  const char *aln = value_of(sp, choice, MAPOPT_PARAM_LAYOUT_ALIGN, -1, rn);
  bool s = soa && strcmp(soa, "default"), o = ord && strcmp(ord, "default"),
       a = aln && strcmp(aln, "default");
  if (!s && !o && !a)
    return;
  /* The order is always written: a Layout without one is F_order in the
   * DSL mapper of Legion, whatever the application's default; and AOS is
   * AOS C_order, the only AOS order it can build (docs/legion.md). */
  if (!o)
    ord = sp->run->default_c_order ? "C_order" : "F_order";
  if (s && !strcmp(soa, "AOS"))
    ord = "C_order";
  mapopt__sb_printf(sb, "Layout * %s *", rn);
  if (s)
    mapopt__sb_printf(sb, " %s", soa);
  mapopt__sb_printf(sb, " %s", ord);
  if (a)
    mapopt__sb_printf(sb, " Align == %s", aln);
  mapopt__sb_puts(sb, ";\n");
}

/* The processor ref places op o on, o's task mapped to its kind under
 * ref_choice: an index point by the index mapping, a task launched alone
 * that follows its parent where the parent runs (the index of the
 * parent's processor among its kind's: SingleTaskMap's `t.parent.
 * processor(m)`); false when neither places it. */
static bool neighbour_of(const mapopt_space *sp, const mapopt_program *ref,
                         const uint16_t *ref_choice, const mapopt_app_op *o,
                         int64_t *node, int64_t *local) {
  for (int depth = 0; depth < 64; depth++) {
    int kind = mapopt__space_kind_of(sp, ref_choice, o->task);
    if (kind < 0)
      return false;
    if (o->is_index)
      return mapopt__space_place_point(sp, ref, o, (mapopt_proc_kind)kind, node,
                                       local) == MAPOPT_OK;
    if (o->parent < 0 || !follows_parent(sp, ref_choice, o->task))
      return false;
    o = mapopt_app_run_op(sp->run, o->parent);
  }
  return false;
}

/* Where op o runs under ref: its kind, node and local index; false when
 * ref does not place it (neighbour_of). */
static bool runs_on(const mapopt_space *sp, const mapopt_program *ref,
                    const uint16_t *ref_choice, int64_t op, int64_t where[3]) {
  if (op < 0)
    return false;
  const mapopt_app_op *o = mapopt_app_run_op(sp->run, op);
  where[0] = mapopt__space_kind_of(sp, ref_choice, o->task);
  return neighbour_of(sp, ref, ref_choice, o, &where[1], &where[2]);
}

/* The bytes op c must receive from elsewhere under ref: its inputs
 * (affinity.c: the pieces its point of its task's first launch reads, and
 * their writers) whose writer runs on another processor; 0 when c's launch
 * is not that first one. */
static int64_t bytes_in(const mapopt_space *sp, const mapopt_program *ref,
                        const uint16_t *ref_choice, int64_t c) {
  const mapopt_app_op *o = mapopt_app_run_op(sp->run, c);
  const space_affinity *a = sp->tasks[o->task].affinity;
  int64_t here[3], there[3], sum = 0;
  if (!a || o->launch != a->first_launch ||
      !runs_on(sp, ref, ref_choice, c, here))
    return 0;
  int64_t l = 0;
  for (int d = o->dims - 1; d >= 0; d--)
    l = l * o->extents[d] + o->point[d];
  for (int n = 0; n < a->ninputs[l]; n++) {
    int64_t w = a->input_writer[l * SPACE_AFFINITY_INPUTS + n];
    if (!runs_on(sp, ref, ref_choice, w, there) ||
        memcmp(here, there, sizeof here))
      sum += a->input_bytes[l * SPACE_AFFINITY_INPUTS + n];
  }
  return sum;
}

/* Of the contributions to the reduction that producer p ends (the points
 * of p's launch that reduce into p's first reduced piece; just p when p
 * does not reduce), the one expected to end last under ref: the one with
 * the most bytes to receive first, the last in program order among equals.
 * The contributions of one launch run in any order, so program order says
 * nothing of which ends last; the one that waits for its inputs does, and
 * where it runs its fold is local while the others' overlap its wait. */
static int64_t last_to_end(const mapopt_space *sp, const mapopt_program *ref,
                           const uint16_t *ref_choice, int64_t p) {
  if (p < 0)
    return p;
  const mapopt_app_run *run = sp->run;
  const mapopt_app_op *o = mapopt_app_run_op(run, p);
  const mapopt_app_piece *piece = NULL;
  for (size_t r = 0; r < o->nreqs && !piece; r++)
    if (mapopt_app_op_req(o, r)->priv == MAPOPT_PRIV_REDUCE)
      piece = mapopt_app_op_req(o, r)->piece;
  if (!piece || !o->is_index)
    return p;
  int64_t first = p, last = p;
  while (first > 0 && mapopt_app_run_op(run, first - 1)->launch == o->launch)
    first--;
  while (last + 1 < run->nops &&
         mapopt_app_run_op(run, last + 1)->launch == o->launch)
    last++;
  int64_t best = p, most = -1;
  for (int64_t c = first; c <= last; c++) {
    const mapopt_app_op *oc = mapopt_app_run_op(run, c);
    bool contributes = false;
    for (size_t r = 0; r < oc->nreqs && !contributes; r++)
      contributes = mapopt_app_op_req(oc, r)->priv == MAPOPT_PRIV_REDUCE &&
                    mapopt_app_op_req(oc, r)->piece == piece;
    int64_t in = contributes ? bytes_in(sp, ref, ref_choice, c) : -1;
    if (contributes && in >= most) {
      most = in;
      best = c;
    }
  }
  return best;
}

/* The op whose processor point k of a goes to under value val: the
 * consumer or producer of its table, or for a prefetch the first of its
 * later readers that ref places elsewhere than the piece's producer
 * (affinity.c); -1 when there is none. */
static int64_t affinity_partner(const mapopt_space *sp,
                                const mapopt_program *ref,
                                const uint16_t *ref_choice,
                                const space_affinity *a, const char *val,
                                int64_t k) {
  if (!strcmp(val, affinity_consumer))
    return a->consumer[k];
  if (!strcmp(val, affinity_producer))
    return last_to_end(sp, ref, ref_choice, a->producer[k]);
  if (!strcmp(val, affinity_skewed)) {
    /* The cohort's readers in turn along the coordinates' sum: points
     * that differ by one in any dimension go to neighbouring readers, the
     * diagonal of a 2-D launch to one reader. */
    int64_t sum = 0, rest = k;
    for (int d = 0; d < a->dims; d++) {
      sum += rest % a->extents[d];
      rest /= a->extents[d];
    }
    return a->ncohort[k]
               ? a->cohort[k * SPACE_AFFINITY_READERS + sum % a->ncohort[k]]
               : -1;
  }
  int64_t home[3] = {-1, -1, -1}, there[3];
  if (!runs_on(sp, ref, ref_choice, a->producer[k], home))
    home[0] = -1;
  for (int r = 0; r < a->nreaders[k]; r++) {
    int64_t op = a->readers[k * SPACE_AFFINITY_READERS + r];
    if (runs_on(sp, ref, ref_choice, op, there) &&
        memcmp(there, home, sizeof home))
      return op;
  }
  return -1;
}

/* Writes, into sb, mapping function fn of task t on the machine model mv
 * of kind: each point on the processor ref places its partner under val
 * (affinity_partner) on (the same node, the local index modulo kind's
 * count), else where the default placement puts it (affinity.c). */
static void write_affinity(const mapopt_space *sp, const mapopt_program *ref,
                           const uint16_t *ref_choice, int t, int kind,
                           const char *val, const char *fn, const char *mv,
                           mapopt__strbuf *sb) {
  const space_affinity *a = sp->tasks[t].affinity;
  int64_t procs = sp->shape.procs[kind];
  int64_t *node = mapopt__calloc(sp->ctx, (size_t)a->npoints, sizeof *node);
  int64_t *local = mapopt__calloc(sp->ctx, (size_t)a->npoints, sizeof *local);
  if (!node || !local) {
    sb->failed = true;
  } else {
    for (int64_t k = 0; k < a->npoints; k++) {
      int64_t point[MAPOPT_APP_MAX_DIMS] = {0}, rest = k;
      for (int d = 0; d < a->dims; d++) {
        point[d] = rest % a->extents[d];
        rest /= a->extents[d];
      }
      mapopt_policy_default_index_place(a->dims, point, a->extents,
                                        sp->shape.nodes, procs, &node[k],
                                        &local[k]);
      int64_t n, l, partner = affinity_partner(sp, ref, ref_choice, a, val, k);
      if (partner >= 0 &&
          neighbour_of(sp, ref, ref_choice, mapopt_app_run_op(sp->run, partner),
                       &n, &l)) {
        node[k] = n;
        local[k] = l % procs;
      }
    }
    mapopt__affinity_write_lookup(sb, fn, mv, a, node, local);
  }
  mapopt__free(sp->ctx, node, (size_t)a->npoints * sizeof *node);
  mapopt__free(sp->ctx, local, (size_t)a->npoints * sizeof *local);
}

/* Whether task t's index mapping under choice is affinity/producer. */
static bool map_by_producer(const mapopt_space *sp, const uint16_t *choice,
                            int t) {
  int pm = sp->tasks[t].map_param;
  return mapopt__space_map_by_affinity(sp, choice, t) &&
         !strcmp(
             mapopt_space_param_at(sp, (size_t)pm - 1)->values[choice[pm - 1]],
             affinity_producer);
}

/* What affinity values follow under choice (affinity.c): choice with
 * every affinity value taken as the default (with producers_only, only
 * every affinity/producer: the others then place as they resolve), in
 * *ref_choice, rendered and compiled into *ref. */
static mapopt_status reference(const mapopt_space *sp, const uint16_t *choice,
                               bool producers_only, uint16_t **ref_choice,
                               mapopt_program **ref) {
  size_t np = sp->params.len;
  uint16_t *c = mapopt__calloc(sp->ctx, np, sizeof *c);
  if (!c)
    return MAPOPT_ENOMEM;
  memcpy(c, choice, np * sizeof *c);
  for (int t = 0; t < sp->run->ntasks; t++)
    if (producers_only ? map_by_producer(sp, choice, t)
                       : mapopt__space_map_by_affinity(sp, choice, t))
      c[sp->tasks[t].map_param - 1] = T_DEFAULT;
  *ref_choice = c;
  char *text = NULL;
  size_t len;
  mapopt_diags *diags = NULL;
  mapopt_dsl_options o = {.file = "space.map", .shape = &sp->shape};
  mapopt_status st = mapopt_space_render(sp, c, &text, &len);
  if (st == MAPOPT_OK)
    st = mapopt_diags_new(sp->ctx, &diags);
  if (st == MAPOPT_OK)
    st = mapopt_dsl_compile(sp->ctx, text, len, &o, diags, ref);
  mapopt_diags_free(diags);
  mapopt_text_free(text);
  return st;
}

mapopt_status mapopt_space_render(const mapopt_space *sp,
                                  const uint16_t *choice, char **text,
                                  size_t *len) {
  size_t np = sp->params.len;
  for (size_t i = 0; i < np; i++)
    if (choice[i] >= mapopt_space_param_at(sp, i)->nvalues)
      return MAPOPT_EINVAL;
  fn_set *fs = mapopt__calloc(sp->ctx, 1, sizeof *fs);
  if (!fs)
    return MAPOPT_ENOMEM;
  mapopt__strbuf head, models, fns, maps;
  mapopt__sb_init(&head, sp->ctx);
  mapopt__sb_init(&models, sp->ctx);
  mapopt__sb_init(&fns, sp->ctx);
  mapopt__sb_init(&maps, sp->ctx);
  bool model[MAPOPT_PROC_KIND_COUNT] = {false};
  char fn[64];
  mapopt_status st = MAPOPT_OK;
  uint16_t *ref_choice = NULL, *ref_producer_choice = NULL;
  mapopt_program *ref = NULL, *ref_producer = NULL;
  /* One pass per statement kind, in parameter order within each, so that
   * equal choices give equal text. */
  static const mapopt_param_kind passes[] = {
      MAPOPT_PARAM_PROC_KIND,    MAPOPT_PARAM_MEMORY,
      MAPOPT_PARAM_LAYOUT_ORDER, MAPOPT_PARAM_INSTANCE_LIMIT,
      MAPOPT_PARAM_COLLECT,      MAPOPT_PARAM_INDEX_MAP,
      MAPOPT_PARAM_FOLLOW_PARENT};
  for (size_t ps = 0; ps < sizeof passes / sizeof passes[0]; ps++)
    for (size_t i = 0; i < np && st == MAPOPT_OK; i++) {
      const mapopt_space_param *p = mapopt_space_param_at(sp, i);
      if (p->kind != passes[ps])
        continue;
      if (p->kind == MAPOPT_PARAM_LAYOUT_ORDER) {
        write_layout(sp, choice, p->region, &head); /* one per region */
        continue;
      }
      uint16_t v = choice[i];
      if (v == 0 || !mapopt_space_active(sp, choice, i))
        continue;
      int t = mapopt__space_task_of(sp, i);
      int k = t >= 0 ? mapopt__space_kind_of(sp, choice, t) : -1;
      switch (p->kind) {
      case MAPOPT_PARAM_PROC_KIND:
        mapopt__sb_printf(&head, "Task %s %s;\n", p->task, p->values[v]);
        break;
      case MAPOPT_PARAM_MEMORY:
        mapopt__sb_printf(&head, "Region %s %s %s %s;\n", p->task, p->region,
                          mapopt_shape_proc_name(p->proc), p->values[v]);
        break;
      case MAPOPT_PARAM_INSTANCE_LIMIT:
        mapopt__sb_printf(&head, "InstanceLimit %s %s;\n", p->task,
                          p->values[v]);
        break;
      case MAPOPT_PARAM_COLLECT:
        mapopt__sb_printf(&head, "CollectMemory %s *;\n", p->task);
        break;
      case MAPOPT_PARAM_INDEX_MAP: {
        if (k < 0)
          break;
        const char *val = p->values[v];
        model[k] = true;
        char mv[16];
        snprintf(mv, sizeof mv, "mo_%s", kind_lower[k]);
        if (v < NTEMPLATES) {
          const char *dims = dims_of(sp, choice, t);
          snprintf(fn, sizeof fn, "mo_%s_%s_d%s", val, kind_lower[k], dims);
          for (char *c = fn; *c; c++)
            if (*c == '-')
              *c = '_';
          if (fn_add(fs, fn))
            write_template(&fns, fn,
                           v == T_DECOMP && strlen(dims) == 1 ? T_BLOCK_CYCLIC
                                                              : (int)v,
                           dims, mv, NULL);
        } else if (!strncmp(val, "skew/", 5)) {
          /* Natural order: the dims parameter is not active here. */
          const char *dims = sp->tasks[t].index_dims == 2 ? "01" : "012";
          snprintf(fn, sizeof fn, "mo_skew%c%c_%s_d%s", val[5], val[7],
                   kind_lower[k], dims);
          if (fn_add(fs, fn))
            write_template(&fns, fn, T_BLOCK, dims, mv, val + 5);
        } else {
          /* A producer places by the other affinity values as they
           * resolve (the inputs of a reduction's contributions decide
           * which ends last: last_to_end); the others, and every value
           * in the producers' reference, by the default placements. */
          bool producer = !strcmp(val, affinity_producer);
          mapopt_program **r = producer ? &ref_producer : &ref;
          uint16_t **rc = producer ? &ref_producer_choice : &ref_choice;
          if (!*r && (st = reference(sp, choice, producer, rc, r)) != MAPOPT_OK)
            break;
          snprintf(fn, sizeof fn, "mo_near_%s_%zu", val + 9, i);
          write_affinity(sp, *r, *rc, t, k, val, fn, mv, &fns);
        }
        mapopt__sb_printf(&maps, "IndexTaskMap %s %s;\n", p->task, fn);
        break;
      }
      case MAPOPT_PARAM_FOLLOW_PARENT:
        if (k < 0)
          break;
        snprintf(fn, sizeof fn, "mo_parent_%s", kind_lower[k]);
        model[k] = true;
        if (fn_add(fs, fn))
          mapopt__sb_printf(
              &fns,
              "def %s(Task t) {\n"
              "    return mo_%s[*t.parent.processor(mo_%s)];\n}\n",
              fn, kind_lower[k], kind_lower[k]);
        mapopt__sb_printf(&maps, "SingleTaskMap %s %s;\n", p->task, fn);
        break;
      default:
        break;
      }
    }
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
    if (model[k])
      mapopt__sb_printf(&models, "mo_%s = Machine(%s);\n", kind_lower[k],
                        mapopt_shape_proc_name((mapopt_proc_kind)k));
  mapopt__sb_putn(&head, models.data ? models.data : "", models.len);
  mapopt__sb_putn(&head, fns.data ? fns.data : "", fns.len);
  mapopt__sb_putn(&head, maps.data ? maps.data : "", maps.len);
  if (sp->base) {
    if (head.len)
      mapopt__sb_putc(&head, '\n');
    mapopt__sb_putn(&head, sp->base, sp->base_len);
  } else if (!head.len) {
    /* Every choice is the default: the default mapper, which is written
     * as one statement that restates a default, because the DSL mapper
     * of Legion refuses a file without any (docs/legion.md). */
    mapopt__sb_puts(&head, default_mapper_text);
  }
  mapopt__sb_destroy(&models);
  mapopt__sb_destroy(&fns);
  mapopt__sb_destroy(&maps);
  mapopt__free(sp->ctx, fs, sizeof *fs);
  mapopt_dsl_free(ref);
  mapopt_dsl_free(ref_producer);
  mapopt__free(sp->ctx, ref_choice, np * sizeof *ref_choice);
  mapopt__free(sp->ctx, ref_producer_choice, np * sizeof *ref_producer_choice);
  if (st == MAPOPT_OK && head.failed)
    st = MAPOPT_ENOMEM;
  if (st != MAPOPT_OK) {
    mapopt__sb_destroy(&head);
    return st;
  }
  *text = mapopt__text_take(&head, len);
  return *text ? MAPOPT_OK : MAPOPT_ENOMEM;
}

/* ---- JSON ---------------------------------------------------------------- */

mapopt_status mapopt_space_to_json(const mapopt_space *sp, char **text) {
  json_t *root = json_object(), *params = json_array();
  if (!root || !params) {
    json_decref(root);
    json_decref(params);
    return MAPOPT_ENOMEM;
  }
  json_object_set_new(root, "format", json_string("mapopt-space/1"));
  json_object_set_new(root, "app", json_string(sp->run->name));
  json_object_set_new(root, "machine", json_string(sp->machine->name));
  json_object_set_new(root, "parameters", params);
  for (size_t i = 0; i < sp->params.len; i++) {
    const mapopt_space_param *p = mapopt_space_param_at(sp, i);
    json_t *o = json_object(), *vals = json_array();
    if (!o || !vals || json_array_append_new(params, o)) {
      json_decref(vals);
      json_decref(root);
      return MAPOPT_ENOMEM;
    }
    json_object_set_new(o, "name", json_string(p->name));
    json_object_set_new(o, "kind",
                        json_string(mapopt_param_kind_name(p->kind)));
    json_object_set_new(o, "task",
                        p->task ? json_string(p->task) : json_null());
    json_object_set_new(o, "region",
                        p->region ? json_string(p->region) : json_null());
    json_object_set_new(o, "processor",
                        p->kind == MAPOPT_PARAM_MEMORY
                            ? json_string(mapopt_shape_proc_name(p->proc))
                            : json_null());
    for (size_t v = 0; v < p->nvalues; v++)
      json_array_append_new(vals, json_string(p->values[v]));
    json_object_set_new(o, "values", vals);
  }
  char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (!s)
    return MAPOPT_ENOMEM;
  *text = mapopt__text_new(sp->ctx, s, strlen(s));
  free(s);
  return *text ? MAPOPT_OK : MAPOPT_ENOMEM;
}

mapopt_status mapopt_space_choice_from_json(const mapopt_space *sp,
                                            const char *file, const char *text,
                                            size_t len, mapopt_diags *diags,
                                            uint16_t *choice) {
  mapopt__arena a;
  mapopt__arena_init(&a, sp->ctx);
  mapopt__json *root;
  mapopt_status st = mapopt__json_parse(&a, file, text, len, diags, &root);
  mapopt__jr jr;
  mapopt__jr_init(&jr, file, diags);
  if (st == MAPOPT_OK && root->type != MAPOPT_JSON_OBJECT)
    mapopt__jr_error(&jr, root,
                     "a choice must be a JSON object of parameter names");
  for (size_t i = 0; i < sp->params.len; i++)
    choice[i] = 0;
  for (size_t m = 0;
       st == MAPOPT_OK && jr.status == MAPOPT_OK && m < root->u.obj.n; m++) {
    const mapopt__json_member *mb = &root->u.obj.members[m];
    size_t pi;
    if (mapopt_space_find(sp, mb->key, &pi) != MAPOPT_OK) {
      mapopt__jr_error_at(&jr, mb->line, mb->col,
                          "unknown parameter \"%s\" (mapopt space lists them)",
                          mb->key);
      break;
    }
    const mapopt_space_param *p = mapopt_space_param_at(sp, pi);
    const mapopt__json *v = mb->value;
    int64_t idx = -1;
    if (v->type == MAPOPT_JSON_INT && v->u.num.i >= 0 &&
        (size_t)v->u.num.i < p->nvalues)
      idx = v->u.num.i;
    for (size_t k = 0; v->type == MAPOPT_JSON_STRING && k < p->nvalues; k++)
      if (!strcmp(p->values[k], v->u.str.s))
        idx = (int64_t)k;
    if (idx < 0) {
      mapopt__strbuf sb;
      mapopt__sb_init(&sb, sp->ctx);
      for (size_t k = 0; k < p->nvalues; k++)
        mapopt__sb_printf(&sb, "%s\"%s\"", k ? ", " : "", p->values[k]);
      mapopt__jr_error(&jr, v, "bad value for \"%s\": expected one of %s",
                       p->name, sb.data ? sb.data : "");
      mapopt__sb_destroy(&sb);
      break;
    }
    choice[pi] = (uint16_t)idx;
  }
  mapopt__arena_destroy(&a);
  return st != MAPOPT_OK ? st : jr.status;
}

mapopt_status mapopt_space_choice_to_json(const mapopt_space *sp,
                                          const uint16_t *choice, char **text) {
  json_t *o = json_object();
  if (!o)
    return MAPOPT_ENOMEM;
  for (size_t i = 0; i < sp->params.len; i++) {
    const mapopt_space_param *p = mapopt_space_param_at(sp, i);
    if (choice[i] && choice[i] < p->nvalues)
      json_object_set_new(o, p->name, json_string(p->values[choice[i]]));
  }
  char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (!s)
    return MAPOPT_ENOMEM;
  *text = mapopt__text_new(sp->ctx, s, strlen(s));
  free(s);
  return *text ? MAPOPT_OK : MAPOPT_ENOMEM;
}
