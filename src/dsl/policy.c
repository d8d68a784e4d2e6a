/*
 * The policy: answers to the substrate's questions (which kind, memory,
 * layout, placement, limit) from a loaded program's binding tables, with the
 * wildcard precedence of docs/dsl.md, "Rules shared by all statements", plus
 * the defaults that the simulator and `mapopt show` share (docs/dsl.md,
 * "Defaults, all in one place").
 *
 * Queries may run concurrently. The tables are read-only after loading; the
 * caches (index-map memo, scratch arenas, print counter, W14 flags) are
 * guarded by the program's mutex, which is never held while a mapping
 * function runs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dsl/dsl.h"

/* ---- helpers ------------------------------------------------------------ */

static const mapopt__binding *find(const mapopt__map *m, const char *key) {
  const mapopt__map_entry *e = mapopt__map_find(m, key, strlen(key));
  return e ? e->value : NULL;
}

/* The (task, region) pairs of the key sequence, most specific first
 * (docs/dsl.md, "Rules shared by all statements"). */
typedef struct keyseq {
  const char *task[2];
  const char *region[40];
  int nregion;
  char pos[24];
} keyseq;

/* The argument's keys are its names, then its position, as the program's
 * region-key mode allows (mapopt_region_keys_mode), then '*'. */
static void keyseq_init(keyseq *ks, const mapopt_program *prog,
                        const char *task, const mapopt_region_keys *keys) {
  ks->task[0] = task;
  ks->task[1] = "*";
  ks->nregion = 0;
  size_t cap = sizeof ks->region / sizeof ks->region[0] - 2;
  for (size_t i = 0; prog->keys != MAPOPT_KEYS_POSITIONS && keys &&
                     i < keys->nnames && i < cap;
       i++)
    ks->region[ks->nregion++] = keys->names[i];
  snprintf(ks->pos, sizeof ks->pos, "%zu", keys ? keys->position : 0);
  if (prog->keys != MAPOPT_KEYS_NAMES)
    ks->region[ks->nregion++] = ks->pos;
  ks->region[ks->nregion++] = "*";
}

/* ---- simple queries ----------------------------------------------------- */

size_t mapopt_policy_proc_kinds(const mapopt_program *prog, const char *task,
                                mapopt_proc_kind *out, size_t cap) {
  const mapopt__binding *b = find(&prog->task_kinds, task);
  if (!b)
    b = find(&prog->task_kinds, "*");
  if (!b)
    return 0;
  const mapopt__stmt *s = b->value;
  for (int i = 0; i < s->u.task.nkinds && (size_t)i < cap; i++)
    out[i] = (mapopt_proc_kind)s->u.task.kinds[i];
  return (size_t)s->u.task.nkinds;
}

/* Visits the concatenated Region candidate list of (task, keys, kind) in
 * order until visit returns true; returns the entries visited. The list
 * has no length limit: a mapper may repeat Region statements at will. */
static size_t memory_walk(const mapopt_program *prog, const char *task,
                          const mapopt_region_keys *keys, mapopt_proc_kind kind,
                          bool (*visit)(void *ud, size_t i, mapopt_mem_kind m),
                          void *ud) {
  keyseq ks;
  keyseq_init(&ks, prog, task, keys);
  size_t n = 0;
  char key[1024];
  for (int t = 0; t < 2; t++)
    for (int r = 0; r < ks.nregion; r++) {
      const mapopt__binding *b = NULL;
      if (mapopt__dsl_key(key, sizeof key, ks.task[t], ks.region[r],
                          mapopt_shape_proc_name(kind)))
        b = find(&prog->regions, key);
      if (!b && mapopt__dsl_key(key, sizeof key, ks.task[t], ks.region[r], "*"))
        b = find(&prog->regions, key);
      if (!b)
        continue;
      const mapopt__stmt *s = b->value;
      for (int i = 0; i < s->u.region.nmems; i++)
        if (visit(ud, n++, (mapopt_mem_kind)s->u.region.mems[i]))
          return n;
    }
  return n;
}

typedef struct memory_out {
  mapopt_mem_kind *out;
  size_t cap;
} memory_out;

static bool memory_store(void *ud, size_t i, mapopt_mem_kind m) {
  memory_out *o = ud;
  if (i < o->cap)
    o->out[i] = m;
  return false;
}

size_t mapopt_policy_memory_list(const mapopt_program *prog, const char *task,
                                 const mapopt_region_keys *keys,
                                 mapopt_proc_kind kind, mapopt_mem_kind *out,
                                 size_t cap) {
  memory_out o = {out, cap};
  return memory_walk(prog, task, keys, kind, memory_store, &o);
}

static mapopt_align_op align_op(mapopt__op op) {
  switch (op) {
  case OP_EQ:
    return MAPOPT_ALIGN_EQ;
  case OP_NE:
    return MAPOPT_ALIGN_NE;
  case OP_LT:
    return MAPOPT_ALIGN_LT;
  case OP_LE:
    return MAPOPT_ALIGN_LE;
  case OP_GT:
    return MAPOPT_ALIGN_GT;
  default:
    return MAPOPT_ALIGN_GE;
  }
}

bool mapopt_policy_layout(const mapopt_program *prog, const char *task,
                          const mapopt_region_keys *keys, mapopt_mem_kind mem,
                          mapopt_proc_kind kind, mapopt_layout *out) {
  keyseq ks;
  keyseq_init(&ks, prog, task, keys);
  const char *fields[3] = {mapopt_shape_mem_name(mem),
                           mapopt_shape_proc_name(kind), "*"};
  char key[1024];
  const mapopt__binding *b = NULL;
  for (int t = 0; t < 2 && !b; t++)
    for (int r = 0; r < ks.nregion && !b; r++)
      for (int f = 0; f < 3 && !b; f++)
        if (mapopt__dsl_key(key, sizeof key, ks.task[t], ks.region[r],
                            fields[f]))
          b = find(&prog->layouts, key);
  if (!b)
    return false;
  const mapopt__stmt *s = b->value;
  mapopt_layout l = {MAPOPT_LAYOUT_UNSET,
                     MAPOPT_LAYOUT_UNSET,
                     MAPOPT_ALIGN_NONE,
                     0,
                     false,
                     false};
  for (int i = 0; i < s->u.layout.ncons; i++) {
    const mapopt__constraint *c = &s->u.layout.cons[i];
    switch (c->kind) {
    case CONS_SOA:
      l.soa = MAPOPT_LAYOUT_YES;
      break;
    case CONS_AOS:
      l.soa = MAPOPT_LAYOUT_NO;
      break;
    case CONS_C_ORDER:
      l.c_order = MAPOPT_LAYOUT_YES;
      break;
    case CONS_F_ORDER:
      l.c_order = MAPOPT_LAYOUT_NO;
      break;
    case CONS_COMPACT:
      l.compact = true;
      break;
    case CONS_EXACT:
      l.exact = true;
      break;
    case CONS_NO_ALIGN:
      l.align_op = MAPOPT_ALIGN_NONE;
      l.align = 0;
      break;
    case CONS_ALIGN:
      l.align_op = align_op(c->align_op);
      l.align = c->align;
      break;
    }
  }
  *out = l;
  return true;
}

int64_t mapopt_policy_instance_limit(const mapopt_program *prog,
                                     const char *task) {
  const mapopt__binding *b = find(&prog->limits, task);
  return b ? ((const mapopt__stmt *)b->value)->u.limit.limit : 0;
}

bool mapopt_policy_collect(const mapopt_program *prog, const char *task,
                           const mapopt_region_keys *keys) {
  keyseq ks;
  keyseq_init(&ks, prog, task, keys);
  char key[1024];
  for (int t = 0; t < 2; t++)
    for (int r = 0; r < ks.nregion; r++)
      if (mapopt__dsl_key(key, sizeof key, ks.task[t], ks.region[r], NULL) &&
          mapopt__map_find(&prog->collects, key, strlen(key)))
        return true;
  return false;
}

bool mapopt_policy_replicated(const mapopt_program *prog, const char *task,
                              bool top_level, int64_t nodes) {
  if (prog->has_replicate)
    return mapopt__map_find(&prog->replicate, task, strlen(task)) != NULL;
  return top_level && nodes > 1;
}

/* ---- mapping functions --------------------------------------------------- */

/* The function bound for task: exact name, kind key, then '*'. */
static const mapopt__stmt *map_function(const mapopt__map *table,
                                        const char *task,
                                        mapopt_proc_kind kind) {
  const mapopt__binding *b = find(table, task);
  if (!b && (kind == MAPOPT_PROC_CPU || kind == MAPOPT_PROC_GPU ||
             kind == MAPOPT_PROC_OMP))
    b = find(table, mapopt_shape_proc_name(kind));
  if (!b)
    b = find(table, "*");
  return b ? b->value : NULL;
}

const char *mapopt_policy_map_function(const mapopt_program *prog,
                                       const char *task, mapopt_proc_kind kind,
                                       bool single) {
  const mapopt__stmt *fn =
      map_function(single ? &prog->single_maps : &prog->index_maps, task, kind);
  return fn ? mapopt__sym_name(&prog->ast, fn->u.def.sym) : NULL;
}

/* "(3, 1)", "(5,)": the point as the N02 note shows it. */
static void format_point(mapopt__strbuf *sb, int dims, const int64_t *p) {
  mapopt__sb_putc(sb, '(');
  for (int i = 0; i < dims; i++)
    mapopt__sb_printf(sb, i ? ", %" PRId64 : "%" PRId64, p[i]);
  mapopt__sb_puts(sb, dims == 1 ? ",)" : ")");
}

/* A memoized index-map result: the answer, or the error to re-report. */
typedef struct memo_entry {
  mapopt_map_answer answer;
  const mapopt__eval_error *err; /* NULL on success */
} memo_entry;

/* What was being mapped when a mapping error occurred: an index point (N02)
 * or a single task (N03). */
typedef struct map_context {
  const char *task, *function;
  int dims; /* -1: a single task */
  const int64_t *point;
} map_context;

/* Reports a mapping error with its context note. */
static mapopt_status report_mapping_error(const mapopt_program *prog,
                                          const mapopt__eval_error *err,
                                          const map_context *c,
                                          mapopt_diags *diags) {
  if (err->nomem)
    return MAPOPT_ENOMEM;
  if (!diags)
    return MAPOPT_EMAP;
  const char *file = prog->ast.file;
  mapopt__loc none = {0, 0};
  mapopt_status st =
      mapopt_diags_add(diags, MAPOPT_SEV_MAPPING_ERROR, err->code, file,
                       err->loc.line, err->loc.col, "%s", err->msg);
  if (st == MAPOPT_OK && err->note)
    st = mapopt_diags_add(diags, MAPOPT_SEV_NOTE, err->note_code, file,
                          err->loc.line, err->loc.col, "%s", err->note);
  if (st == MAPOPT_OK && c->dims < 0) {
    st = mapopt__dsl_diag(diags, MAPOPT__DIAG(N03_MAPPING), file, none, c->task,
                          c->function);
  } else if (st == MAPOPT_OK) {
    mapopt__strbuf point;
    mapopt__sb_init(&point, prog->ctx);
    format_point(&point, c->dims, c->point);
    st = point.failed
             ? MAPOPT_ENOMEM
             : mapopt__dsl_diag(diags, MAPOPT__DIAG(N02_PLACING), file, none,
                                point.data, c->task, c->function);
    mapopt__sb_destroy(&point);
  }
  return st == MAPOPT_OK ? MAPOPT_EMAP : MAPOPT_ENOMEM;
}

/* Runs an entry function in a pooled scratch arena. */
static bool run_entry(const mapopt_program *cprog, const mapopt__stmt *fn,
                      const mapopt__taskobj *task, mapopt_proc_kind kind,
                      mapopt_map_answer *out, mapopt_proc_point *set,
                      size_t cap, mapopt__eval_error *err,
                      mapopt_diags *diags) {
  mapopt_program *prog = (mapopt_program *)cprog; /* caches only */
  mapopt__scratch *s = mapopt__scratch_get(prog);
  if (!s) {
    memset(err, 0, sizeof *err);
    err->failed = err->nomem = true;
    return false;
  }
  mapopt__eval_env env = {prog, &s->arena, diags, false, NULL};
  bool ok = mapopt__eval_entry(&env, fn, task, kind, out, set, cap, err);
  mapopt__scratch_put(prog, s);
  return ok;
}

/*
 * The launch memo, ahead of index_memo: every point of an index launch asks
 * with the same task, kind and extents, and every launch of a statement
 * asks the same questions again. Each (task, kind, extents) asked keeps
 * its function and its successful answers by linearized point, so a point
 * already answered costs a comparison and an index instead of a hash of
 * its key and the function's lookup. Errors are left to index_memo, which
 * reports them again. Memos are kept for good, up to LAUNCH_MEMOS of them
 * and LAUNCH_MEMO_POINTS points together (a few MiB); past that, launches
 * go to index_memo alone.
 */
enum { LAUNCH_MEMOS = 64, LAUNCH_MEMO_POINTS = 1 << 18 };

typedef struct mapopt__launch_memo {
  char *task; /* a copy */
  mapopt_proc_kind kind;
  int dims;
  int64_t extents[MAPOPT__MS_MAX_DIMS];
  const mapopt__stmt *fn; /* NULL: no function, every answer unspecified */
  mapopt_map_answer *answers;
  unsigned char *have; /* per point: answers[point] is set */
} launch_memo;

/* The points of extents, or -1 when there are more than the memo keeps. */
static int64_t launch_points(int dims, const int64_t *extents) {
  int64_t n = 1;
  for (int d = 0; d < dims; d++)
    if (extents[d] < 1 || mapopt__mul_ovf(n, extents[d], &n) ||
        n > LAUNCH_MEMO_POINTS)
      return -1;
  return n;
}

/* The linear index of point (dimension 0 fastest), -1 outside extents. */
static int64_t launch_index(int dims, const int64_t *point,
                            const int64_t *extents) {
  int64_t lin = 0, mul = 1;
  for (int d = 0; d < dims; d++) {
    if (point[d] < 0 || point[d] >= extents[d])
      return -1;
    lin += point[d] * mul;
    mul *= extents[d];
  }
  return lin;
}

static bool launch_memo_is(const launch_memo *m, const char *task, int dims,
                           const int64_t *extents, mapopt_proc_kind kind) {
  if (m->kind != kind || m->dims != dims)
    return false;
  for (int d = 0; d < dims; d++) /* a launch has a few: no memcmp call */
    if (m->extents[d] != extents[d])
      return false;
  return strcmp(m->task, task) == 0;
}

/* A new memo of (task, kind, extents) when there is room; NULL when there
 * is none or no memory. Under lock. Out of line: once per launch shape,
 * while the search below runs for every point. */
__attribute__((cold, noinline)) static launch_memo *
launch_memo_make(mapopt_program *prog, const char *task, int dims,
                 const int64_t *extents, mapopt_proc_kind kind) {
  int64_t n = launch_points(dims, extents);
  if (n < 0 || prog->nlaunch_memos == LAUNCH_MEMOS ||
      prog->launch_memo_points > LAUNCH_MEMO_POINTS - n)
    return NULL;
  if (!prog->launch_memos) {
    prog->launch_memos = mapopt__arena_alloc(
        &prog->cache_arena, LAUNCH_MEMOS * sizeof *prog->launch_memos);
    if (!prog->launch_memos)
      return NULL;
  }
  char *name = mapopt__arena_strndup(&prog->cache_arena, task, strlen(task));
  mapopt_map_answer *answers =
      mapopt__arena_alloc(&prog->cache_arena, (size_t)n * sizeof *answers);
  unsigned char *have = mapopt__arena_zalloc(&prog->cache_arena, (size_t)n);
  if (!name || !answers || !have)
    return NULL;
  launch_memo *m = &prog->launch_memos[prog->nlaunch_memos];
  *m = (launch_memo){name, kind, dims, {0}, NULL, answers, have};
  memcpy(m->extents, extents, (size_t)dims * sizeof *extents);
  m->fn = map_function(&prog->index_maps, task, kind);
  prog->launch_memo_last = prog->nlaunch_memos++;
  prog->launch_memo_points += n;
  return m;
}

/* The memo of (task, kind, extents), made when make and there is room;
 * NULL when there is none or no memory. Under lock. */
static launch_memo *launch_memo_of(mapopt_program *prog, const char *task,
                                   int dims, const int64_t *extents,
                                   mapopt_proc_kind kind, bool make) {
  int last = prog->launch_memo_last;
  if (last < prog->nlaunch_memos &&
      launch_memo_is(&prog->launch_memos[last], task, dims, extents, kind))
    return &prog->launch_memos[last];
  for (int i = 0; i < prog->nlaunch_memos; i++)
    if (launch_memo_is(&prog->launch_memos[i], task, dims, extents, kind)) {
      prog->launch_memo_last = i;
      return &prog->launch_memos[i];
    }
  return make ? launch_memo_make(prog, task, dims, extents, kind) : NULL;
}

/* The remembered answer for point into out, or false. */
static bool launch_memo_get(mapopt_program *prog, const char *task, int dims,
                            const int64_t *point, const int64_t *extents,
                            mapopt_proc_kind kind, mapopt_map_answer *out) {
  pthread_mutex_lock(&prog->lock);
  launch_memo *m = launch_memo_of(prog, task, dims, extents, kind, false);
  int64_t i = m ? launch_index(dims, point, extents) : -1;
  bool hit = i >= 0 && (!m->fn || m->have[i]);
  if (hit && !m->fn) {
    memset(out, 0, sizeof *out);
    out->kind = MAPOPT_MAP_UNSPECIFIED;
  } else if (hit) {
    *out = m->answers[i];
  }
  pthread_mutex_unlock(&prog->lock);
  return hit;
}

/* Remembers a successful answer for point (nothing when out of memory). */
static void launch_memo_put(mapopt_program *prog, const char *task, int dims,
                            const int64_t *point, const int64_t *extents,
                            mapopt_proc_kind kind,
                            const mapopt_map_answer *answer) {
  pthread_mutex_lock(&prog->lock);
  launch_memo *m = launch_memo_of(prog, task, dims, extents, kind, true);
  int64_t i = m && m->fn ? launch_index(dims, point, extents) : -1;
  if (i >= 0) {
    m->answers[i] = *answer;
    m->have[i] = 1;
  }
  pthread_mutex_unlock(&prog->lock);
}

mapopt_status
mapopt_policy_index_map(const mapopt_program *cprog, const char *task, int dims,
                        const int64_t *point, const int64_t *extents,
                        mapopt_proc_kind kind, mapopt_map_answer *out,
                        mapopt_diags *diags) {
  mapopt_program *prog = (mapopt_program *)cprog; /* caches only */
  if (dims < 0 || dims > MAPOPT__MS_MAX_DIMS || !task || !out)
    return MAPOPT_EINVAL;
  if (!prog->no_memo &&
      launch_memo_get(prog, task, dims, point, extents, kind, out))
    return MAPOPT_OK;
  const mapopt__stmt *fn = map_function(&prog->index_maps, task, kind);
  if (!fn) {
    memset(out, 0, sizeof *out);
    out->kind = MAPOPT_MAP_UNSPECIFIED;
    if (!prog->no_memo)
      launch_memo_put(prog, task, dims, point, extents, kind, out);
    return MAPOPT_OK;
  }
  /* Memo key: kind, dims, point, extents, then the task name. */
  size_t tlen = strlen(task);
  size_t klen = (size_t)(2 + 2 * dims) * sizeof(int64_t) + tlen;
  char kbuf[1024];
  bool memo = !prog->no_memo && klen <= sizeof kbuf;
  map_context context = {task, mapopt__sym_name(&prog->ast, fn->u.def.sym),
                         dims, point};
  if (memo) {
    int64_t hdr[2] = {kind, dims};
    memcpy(kbuf, hdr, sizeof hdr);
    memcpy(kbuf + sizeof hdr, point, (size_t)dims * sizeof *point);
    memcpy(kbuf + sizeof hdr + (size_t)dims * sizeof *point, extents,
           (size_t)dims * sizeof *extents);
    memcpy(kbuf + sizeof hdr + 2 * (size_t)dims * sizeof *point, task, tlen);
    pthread_mutex_lock(&prog->lock);
    const mapopt__map_entry *e =
        mapopt__map_find(&prog->index_memo, kbuf, klen);
    memo_entry hit;
    if (e)
      hit = *(const memo_entry *)e->value;
    pthread_mutex_unlock(&prog->lock);
    if (e) {
      /* Entries and their errors are immutable once inserted. */
      if (hit.err)
        return report_mapping_error(prog, hit.err, &context, diags);
      *out = hit.answer;
      launch_memo_put(prog, task, dims, point, extents, kind, out);
      return MAPOPT_OK;
    }
  }
  mapopt_task_ref ref = {task, true, dims, point, extents, {kind, 0, 0}, NULL};
  mapopt__taskobj obj = {&ref, false, true};
  mapopt__eval_error err;
  bool ok = run_entry(prog, fn, &obj, kind, out, NULL, 0, &err, diags);
  if (!ok && err.nomem)
    return MAPOPT_ENOMEM;
  if (memo) {
    pthread_mutex_lock(&prog->lock);
    char *k = mapopt__arena_alloc(&prog->cache_arena, klen);
    memo_entry *v = mapopt__arena_alloc(&prog->cache_arena, sizeof *v);
    mapopt__eval_error *ecopy =
        ok ? NULL : mapopt__arena_alloc(&prog->cache_arena, sizeof *ecopy);
    /* The memo's copy of the message lives in the cache arena. */
    char *mcopy = ok || !ecopy
                      ? NULL
                      : mapopt__arena_strndup(&prog->cache_arena, err.msg,
                                              strlen(err.msg));
    char *ncopy = ok || !ecopy || !err.note
                      ? NULL
                      : mapopt__arena_strndup(&prog->cache_arena, err.note,
                                              strlen(err.note));
    bool ins = false;
    mapopt__map_entry *e =
        k && v && (ok || (mcopy && (ncopy || !err.note)))
            ? (memcpy(k, kbuf, klen),
               mapopt__map_upsert(&prog->index_memo, prog->ctx, k, klen, &ins))
            : NULL;
    if (e && ins) {
      if (ok) {
        v->answer = *out;
        v->err = NULL;
      } else {
        *ecopy = err;
        ecopy->msg = mcopy;
        ecopy->note = ncopy;
        v->err = ecopy;
      }
      e->value = v;
    }
    pthread_mutex_unlock(&prog->lock);
    if (ok)
      launch_memo_put(prog, task, dims, point, extents, kind, out);
  }
  if (ok)
    return MAPOPT_OK;
  mapopt_status st = report_mapping_error(prog, &err, &context, diags);
  mapopt__eval_error_clear(prog->ctx, &err);
  return st;
}

mapopt_status mapopt_policy_single_map(const mapopt_program *prog,
                                       const mapopt_task_ref *self,
                                       mapopt_proc_kind kind,
                                       mapopt_map_answer *out,
                                       mapopt_proc_point *set, size_t cap,
                                       mapopt_diags *diags) {
  if (!self || !out)
    return MAPOPT_EINVAL;
  const mapopt__stmt *fn = map_function(&prog->single_maps, self->name, kind);
  if (!fn) {
    memset(out, 0, sizeof *out);
    out->kind = MAPOPT_MAP_UNSPECIFIED;
    return MAPOPT_OK;
  }
  mapopt__taskobj obj = {self, false, false};
  mapopt__eval_error err;
  if (run_entry(prog, fn, &obj, kind, out, set, cap, &err, diags))
    return MAPOPT_OK;
  map_context context = {self->name,
                         mapopt__sym_name(&prog->ast, fn->u.def.sym), -1, NULL};
  mapopt_status st = report_mapping_error(prog, &err, &context, diags);
  mapopt__eval_error_clear(prog->ctx, &err);
  return st;
}

/* ---- resolution with defaults ------------------------------------------ */

static const mapopt_proc_kind default_order[] = {
    MAPOPT_PROC_GPU, MAPOPT_PROC_OMP, MAPOPT_PROC_CPU,
    MAPOPT_PROC_IO,  MAPOPT_PROC_PY,  MAPOPT_PROC_PROC};

mapopt_status mapopt_policy_select_kind(const mapopt_program *prog,
                                        const char *task, unsigned variants,
                                        bool lenient, mapopt_proc_kind *out,
                                        mapopt_diags *diags) {
  mapopt_proc_kind list[64];
  size_t n = mapopt_policy_proc_kinds(prog, task, list, 64);
  if (n > 64)
    n = 64;
  const mapopt_machine_shape *sh = &prog->shape;
  for (size_t i = 0; i < n; i++)
    if ((variants >> list[i]) & 1u && sh->procs[list[i]] > 0) {
      *out = list[i];
      return MAPOPT_OK;
    }
  if (n == 0 || lenient)
    for (size_t i = 0; i < sizeof default_order / sizeof *default_order; i++) {
      mapopt_proc_kind k = default_order[i];
      if ((variants >> k) & 1u && sh->procs[k] > 0) {
        *out = k;
        return MAPOPT_OK;
      }
    }
  /* At the Task statement whose list had no usable kind (its key: the
   * task's name, or '*'); without one, the default order failed. */
  const mapopt__binding *b = find(&prog->task_kinds, task);
  if (!b)
    b = find(&prog->task_kinds, "*");
  mapopt__loc at = b && n ? b->loc : (mapopt__loc){0, 0};
  if (diags &&
      mapopt__dsl_diag(
          diags, MAPOPT__DIAG(R26_NO_KIND), prog->ast.file, at, task,
          mapopt_shape_proc_name(n ? list[0] : MAPOPT_PROC_GPU)) != MAPOPT_OK)
    return MAPOPT_ENOMEM;
  return MAPOPT_EMAP;
}

static bool mem_available(const mapopt_program *prog, mapopt_proc_kind kind,
                          mapopt_mem_kind mem) {
  return mem == MAPOPT_MEM_VIRTUAL || (prog->shape.affinity[kind] >> mem) & 1u;
}

typedef struct memory_pick {
  const mapopt_program *prog;
  mapopt_proc_kind kind;
  mapopt_mem_kind found; /* MAPOPT_MEM_KIND_COUNT: none yet */
} memory_pick;

static bool memory_first_available(void *ud, size_t i, mapopt_mem_kind m) {
  (void)i;
  memory_pick *p = ud;
  if (!mem_available(p->prog, p->kind, m))
    return false;
  p->found = m;
  return true;
}

mapopt_mem_kind mapopt_policy_select_memory(const mapopt_program *prog,
                                            const char *task,
                                            const mapopt_region_keys *keys,
                                            mapopt_proc_kind kind) {
  memory_pick p = {prog, kind, MAPOPT_MEM_KIND_COUNT};
  memory_walk(prog, task, keys, kind, memory_first_available, &p);
  if (p.found != MAPOPT_MEM_KIND_COUNT)
    return p.found;
  return mapopt_shape_default_memory(&prog->shape, kind);
}

void mapopt_policy_resolve_layout(const mapopt_program *prog, const char *task,
                                  const mapopt_region_keys *keys,
                                  mapopt_mem_kind mem, mapopt_proc_kind kind,
                                  bool c_order_default, mapopt_layout *out) {
  mapopt_layout l = {MAPOPT_LAYOUT_UNSET,
                     MAPOPT_LAYOUT_UNSET,
                     MAPOPT_ALIGN_NONE,
                     0,
                     false,
                     false};
  mapopt_policy_layout(prog, task, keys, mem, kind, &l);
  if (l.soa == MAPOPT_LAYOUT_UNSET)
    l.soa = MAPOPT_LAYOUT_YES;
  if (l.c_order == MAPOPT_LAYOUT_UNSET)
    l.c_order = c_order_default ? MAPOPT_LAYOUT_YES : MAPOPT_LAYOUT_NO;
  *out = l;
}

/* ceil(a * b / c) for non-negative operands, in 128-bit to avoid overflow. */
static int64_t ceil_muldiv(int64_t a, int64_t b, int64_t c) {
  __int128 p = (__int128)a * b;
  return (int64_t)((p + c - 1) / c);
}

void mapopt_policy_default_index_place(int dims, const int64_t *point,
                                       const int64_t *extents, int64_t nodes,
                                       int64_t procs, int64_t *node,
                                       int64_t *proc) {
  int64_t o[MAPOPT__MS_MAX_DIMS], e[MAPOPT__MS_MAX_DIMS];
  for (int d = 0; d < dims; d++)
    e[d] = extents[d] > 0 ? extents[d] : 1;
  if (dims > 0)
    mapopt__factor_greedy(nodes > 0 ? nodes : 1, e, dims, o);
  int64_t as = 0, stride = 1, volume = 1, lambda = 0, lstride = 1;
  for (int d = 0; d < dims; d++) {
    int64_t b = (int64_t)((__int128)point[d] * o[d] / e[d]);
    as += b * stride;
    stride *= o[d];
    int64_t lo = ceil_muldiv(b, e[d], o[d]);
    int64_t hi = ceil_muldiv(b + 1, e[d], o[d]) - 1;
    int64_t s = hi - lo + 1;
    lambda += (point[d] - lo) * lstride;
    lstride *= s;
    volume *= s;
  }
  *node = as;
  *proc = volume > 0 ? (int64_t)((__int128)lambda * procs / volume) : 0;
}

mapopt_status mapopt_policy_place_point(
    const mapopt_program *prog, const char *task, int dims,
    const int64_t *point, const int64_t *extents, mapopt_proc_kind kind,
    int64_t nodes, int64_t procs, int64_t *node, int64_t *proc) {
  mapopt_map_answer ans;
  mapopt_status st = mapopt_policy_index_map(prog, task, dims, point, extents,
                                             kind, &ans, NULL);
  if (st != MAPOPT_OK)
    return st;
  if (ans.kind == MAPOPT_MAP_UNSPECIFIED) {
    mapopt_policy_default_index_place(dims, point, extents, nodes, procs, node,
                                      proc);
  } else {
    *node = ans.points[0].node;
    *proc = ans.points[0].proc;
  }
  return *node < 0 || *node >= nodes || *proc < 0 || *proc >= procs
             ? MAPOPT_EMAP
             : MAPOPT_OK;
}
