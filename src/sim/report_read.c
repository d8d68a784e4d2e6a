/*
 * Reading a simulation report (docs/sim.md, "The report", the JSON that
 * mapopt_sim_report_json writes) back into a mapopt_sim_result, so that a
 * saved run can be analysed later (`mapopt explain --report`) exactly as
 * the run itself would have been. Every field the writer emits is read
 * back -- writing the result again gives the same text -- except the
 * derived ones (utilization, mean_ns), which are checked for type only.
 * The raw log and the decisions are not part of a report.
 *
 * The reader is strict, like the machine and application loaders: a
 * malformed document, an unknown key, a missing key or a value of the
 * wrong type is a located error (FILE:LINE:COL) and MAPOPT_EINVAL.
 */
#include <string.h>

#include "core/json.h"
#include "sim/sim.h"

/* The largest real a report holds: the writer prints reals with "%.6f"
 * into 64 bytes, which 1e18 (and its six decimals) fits. */
#define MAX_REAL 1e18

typedef struct reader {
  mapopt__jr jr;
  mapopt_ctx *ctx;
  mapopt_sim_result *res;
} reader;

/* A copy of s owned by the result; NULL (and ENOMEM recorded) on failure. */
static const char *keep(reader *R, const char *s) {
  const char *c = mapopt__sim_result_string(R->res, s);
  if (!c)
    R->jr.status = MAPOPT_ENOMEM;
  return c;
}

/* A string member in valid UTF-8 (what the writer can write again); false
 * after reporting the error. */
static bool text(reader *R, const mapopt__json *obj, const char *key,
                 const char *what, const char **out) {
  if (!mapopt__jr_str(&R->jr, obj, key, what, true, out))
    return false;
  const mapopt__json *v = mapopt__json_get(obj, key);
  for (size_t i = 0, k; i < v->u.str.len; i += k)
    if (!(k = mapopt__utf8_char(v->u.str.s + i, v->u.str.len - i))) {
      mapopt__jr_error(&R->jr, v, "\"%s\" in %s is not valid UTF-8", key, what);
      return false;
    }
  return true;
}

/* A string member that must be one of the names name(0 .. n-1); its index,
 * or -1 after reporting the error. */
static int one_of(reader *R, const mapopt__json *obj, const char *key,
                  const char *what, const char *(*name)(int), int n) {
  const char *s = NULL;
  if (!mapopt__jr_str(&R->jr, obj, key, what, true, &s))
    return -1;
  for (int i = 0; i < n; i++)
    if (name(i) && strcmp(name(i), s) == 0)
      return i;
  mapopt__jr_error(&R->jr, mapopt__json_get(obj, key),
                   "\"%s\" in %s has an unknown value \"%s\"", key, what, s);
  return -1;
}

enum {
#define PLUS_ONE(name) +1
  NERRORS = 0 MAPOPT_SIM_ERROR_LIST(PLUS_ONE)
#undef PLUS_ONE
};

static const char *error_name(int i) {
  return mapopt_sim_error_name((mapopt_sim_error)i);
}
static const char *proc_name(int i) {
  return mapopt_shape_proc_name((mapopt_proc_kind)i);
}
static const char *mem_name(int i) {
  return mapopt_shape_mem_name((mapopt_mem_kind)i);
}
static const char *priv_name(int i) {
  return i < 4 ? mapopt_app_priv_name((mapopt_priv)i) : NULL;
}
static const char *util_name(int i) {
  static const char *const n[] = {"CPU", "GPU", "OMP", "UTIL"};
  return n[i];
}

static bool i64(reader *R, const mapopt__json *obj, const char *key,
                const char *what, int64_t *out) {
  return mapopt__jr_int(&R->jr, obj, key, what, true, INT64_MIN, INT64_MAX,
                        out);
}

/* The elements of an array member, at most max of them; NULL after an
 * error. */
static const mapopt__json *array(reader *R, const mapopt__json *obj,
                                 const char *key, const char *what,
                                 size_t max) {
  const mapopt__json *a = mapopt__jr_array(&R->jr, obj, key, what, true);
  if (a && a->u.arr.n > max) {
    mapopt__jr_error(&R->jr, a, "\"%s\" in %s has more than %zu entries", key,
                     what, max);
    return NULL;
  }
  return a;
}

static void read_procs(reader *R, const mapopt__json *root) {
  const mapopt__json *a = array(R, root, "processors", "the report", 1 << 24);
  if (!a)
    return;
  mapopt_sim_result *res = R->res;
  res->procs =
      mapopt__calloc(R->ctx, a->u.arr.n ? a->u.arr.n : 1, sizeof *res->procs);
  if (!res->procs) {
    R->jr.status = MAPOPT_ENOMEM;
    return;
  }
  res->nprocs = a->u.arr.n;
  static const char *const keys[] = {"node",    "rank",  "kind",        "index",
                                     "busy_ns", "tasks", "utilization", NULL};
  for (size_t i = 0; i < a->u.arr.n && R->jr.status == MAPOPT_OK; i++) {
    const mapopt__json *e = a->u.arr.items[i];
    mapopt_sim_proc_stats *p = &res->procs[i];
    const char *w = "a processor";
    double util;
    if (!mapopt__jr_object(&R->jr, e, w, keys) ||
        !i64(R, e, "node", w, &p->node) || !i64(R, e, "rank", w, &p->rank) ||
        !i64(R, e, "index", w, &p->index) ||
        !i64(R, e, "busy_ns", w, &p->busy_ns) ||
        !i64(R, e, "tasks", w, &p->tasks) ||
        !mapopt__jr_num(&R->jr, e, "utilization", w, true, 0, MAX_REAL, &util))
      return;
    int k = one_of(R, e, "kind", w, util_name, 4);
    if (k >= 0)
      p->kind = util_name(k); /* a literal, like the simulator's */
  }
}

static void read_copies(reader *R, const mapopt__json *root) {
  const mapopt__json *c =
      mapopt__jr_child(&R->jr, root, "copies", "the report", true);
  if (!c)
    return;
  const char *names[MAPOPT_SIM_COPY_KINDS + 1];
  for (int k = 0; k < MAPOPT_SIM_COPY_KINDS; k++)
    names[k] = mapopt_sim_copy_kind_name(k);
  names[MAPOPT_SIM_COPY_KINDS] = NULL;
  if (!mapopt__jr_object(&R->jr, c, "\"copies\"", names))
    return;
  static const char *const keys[] = {"bytes", "count", "busy_ns", NULL};
  for (int k = 0; k < MAPOPT_SIM_COPY_KINDS; k++) {
    const mapopt__json *e =
        mapopt__jr_child(&R->jr, c, names[k], "\"copies\"", true);
    mapopt_sim_copy_stats *s = &R->res->copies[k];
    if (!e || !mapopt__jr_object(&R->jr, e, names[k], keys) ||
        !i64(R, e, "bytes", names[k], &s->bytes) ||
        !i64(R, e, "count", names[k], &s->count) ||
        !i64(R, e, "busy_ns", names[k], &s->busy_ns))
      return;
  }
}

static void read_mems(reader *R, const mapopt__json *root) {
  const mapopt__json *a = array(R, root, "memories", "the report", 1 << 24);
  if (!a)
    return;
  mapopt_sim_result *res = R->res;
  res->mems =
      mapopt__calloc(R->ctx, a->u.arr.n ? a->u.arr.n : 1, sizeof *res->mems);
  if (!res->mems) {
    R->jr.status = MAPOPT_ENOMEM;
    return;
  }
  res->nmems = a->u.arr.n;
  static const char *const keys[] = {"node",           "rank",     "kind",
                                     "index",          "capacity", "peak_bytes",
                                     "peak_instances", NULL};
  for (size_t i = 0; i < a->u.arr.n && R->jr.status == MAPOPT_OK; i++) {
    const mapopt__json *e = a->u.arr.items[i];
    mapopt_sim_mem_stats *m = &res->mems[i];
    const char *w = "a memory";
    if (!mapopt__jr_object(&R->jr, e, w, keys) ||
        !i64(R, e, "node", w, &m->node) || !i64(R, e, "rank", w, &m->rank) ||
        !i64(R, e, "index", w, &m->index) ||
        !i64(R, e, "capacity", w, &m->capacity) ||
        !i64(R, e, "peak_bytes", w, &m->peak_bytes) ||
        !i64(R, e, "peak_instances", w, &m->peak_instances))
      return;
    int k = one_of(R, e, "kind", w, mem_name, MAPOPT_MEM_KIND_COUNT);
    m->kind = k >= 0 ? (mapopt_mem_kind)k : MAPOPT_MEM_SYSMEM;
  }
}

static void read_path(reader *R, const mapopt__json *root) {
  const mapopt__json *c =
      mapopt__jr_child(&R->jr, root, "critical_path", "the report", true);
  static const char *const keys[] = {
      "length_ns", "compute_ns",      "copy_ns",  "runtime_ns",
      "queue_ns",  "backpressure_ns", "segments", NULL};
  const char *w = "\"critical_path\"";
  mapopt_sim_critical_path *cp = &R->res->critical_path;
  if (!c || !mapopt__jr_object(&R->jr, c, w, keys) ||
      !i64(R, c, "length_ns", w, &cp->length_ns) ||
      !i64(R, c, "compute_ns", w, &cp->compute_ns) ||
      !i64(R, c, "copy_ns", w, &cp->copy_ns) ||
      !i64(R, c, "runtime_ns", w, &cp->runtime_ns) ||
      !i64(R, c, "queue_ns", w, &cp->queue_ns) ||
      !i64(R, c, "backpressure_ns", w, &cp->backpressure_ns))
    return;
  const mapopt__json *a = array(R, c, "segments", w, MAPOPT_SIM_MAX_SEGMENTS);
  if (!a)
    return;
  static const char *const skeys[] = {"kind", "name", "start_ns", "duration_ns",
                                      NULL};
  for (size_t i = 0; i < a->u.arr.n && R->jr.status == MAPOPT_OK; i++) {
    const mapopt__json *e = a->u.arr.items[i];
    mapopt_sim_segment *g = &cp->segments[i];
    const char *kind, *name;
    if (!mapopt__jr_object(&R->jr, e, "a segment", skeys) ||
        !text(R, e, "kind", "a segment", &kind) ||
        !text(R, e, "name", "a segment", &name) ||
        !i64(R, e, "start_ns", "a segment", &g->start_ns) ||
        !i64(R, e, "duration_ns", "a segment", &g->duration_ns))
      return;
    g->kind = keep(R, kind);
    g->name = keep(R, name);
    cp->nsegments = i + 1;
  }
}

static const char *copy_kind_name_of(int k) {
  return mapopt_sim_copy_kind_name(k);
}

static const char *cause_name(int i) {
  return mapopt_sim_cause_name((mapopt_sim_cause)i);
}

/* An end of a wait: null, or a memory or processor with its place. */
static void read_end(reader *R, const mapopt__json *e, const char *key,
                     mapopt_sim_end *out) {
  const mapopt__json *v = mapopt__json_get(e, key);
  if (!v) {
    mapopt__jr_error(&R->jr, e, "missing key \"%s\" in a wait", key);
    return;
  }
  if (v->type == MAPOPT_JSON_NULL)
    return;
  static const char *const keys[] = {"kind", "node", "rank", "index", NULL};
  const char *w = "an end of a wait", *kind;
  if (!mapopt__jr_object(&R->jr, v, w, keys) ||
      !mapopt__jr_str(&R->jr, v, "kind", w, true, &kind) ||
      !i64(R, v, "node", w, &out->node) || !i64(R, v, "rank", w, &out->rank) ||
      !i64(R, v, "index", w, &out->index))
    return;
  /* The names are the simulator's literals, kept as they are. */
  for (int k = 0; k < MAPOPT_MEM_KIND_COUNT && !out->kind; k++)
    if (strcmp(mem_name(k), kind) == 0)
      out->kind = mem_name(k);
  for (int k = 0; k < 4 && !out->kind; k++)
    if (strcmp(util_name(k), kind) == 0)
      out->kind = util_name(k);
  if (!out->kind)
    mapopt__jr_error(&R->jr, mapopt__json_get(v, "kind"),
                     "\"kind\" in %s must be a memory or processor kind, not "
                     "\"%s\"",
                     w, kind);
}

/* A string member that may be null: NULL then. */
static bool text_or_null(reader *R, const mapopt__json *obj, const char *key,
                         const char *what, const char **out) {
  const mapopt__json *v = mapopt__json_get(obj, key);
  *out = NULL;
  if (v && v->type == MAPOPT_JSON_NULL)
    return true;
  const char *s;
  if (!text(R, obj, key, what, &s))
    return false;
  *out = keep(R, s);
  return true;
}

static void read_wait(reader *R, const mapopt__json *e, mapopt_sim_wait *x) {
  static const char *const keys[] = {
      "task",         "argument",  "names",  "cause",
      "channel",      "other",     "from",   "to",
      "exposed_ns",   "waited_ns", "count",  "copies",
      "bytes",        "pieces",    "spread", "last_contribution",
      "first_reader", "pred",      NULL};
  const char *w = "a wait";
  if (!mapopt__jr_object(&R->jr, e, w, keys) ||
      !text_or_null(R, e, "task", w, &x->task) ||
      !text_or_null(R, e, "names", w, &x->arg_name) ||
      !text_or_null(R, e, "other", w, &x->other) ||
      !text_or_null(R, e, "pred", w, &x->pred) ||
      !mapopt__jr_int(&R->jr, e, "exposed_ns", w, true, 0, INT64_MAX,
                      &x->exposed_ns) ||
      !mapopt__jr_int(&R->jr, e, "waited_ns", w, true, 0, INT64_MAX,
                      &x->waited_ns) ||
      !mapopt__jr_int(&R->jr, e, "count", w, true, 0, INT64_MAX, &x->count) ||
      !mapopt__jr_int(&R->jr, e, "copies", w, true, 0, INT64_MAX, &x->copies) ||
      !mapopt__jr_int(&R->jr, e, "bytes", w, true, 0, INT64_MAX, &x->bytes) ||
      !mapopt__jr_int(&R->jr, e, "pieces", w, true, 0, INT64_MAX, &x->pieces) ||
      !mapopt__jr_int(&R->jr, e, "spread", w, true, 0, INT64_MAX, &x->spread) ||
      !mapopt__jr_bool(&R->jr, e, "last_contribution", w, true,
                       &x->last_contribution))
    return;
  const mapopt__json *arg = mapopt__json_get(e, "argument");
  x->arg = -1;
  if (!arg) {
    mapopt__jr_error(&R->jr, e, "missing key \"argument\" in %s", w);
    return;
  }
  if (arg->type != MAPOPT_JSON_NULL) {
    int64_t a;
    if (!mapopt__jr_int(&R->jr, e, "argument", w, true, 0, 63, &a))
      return;
    x->arg = (int)a;
  }
  int k = one_of(R, e, "cause", w, cause_name, MAPOPT_SIM_CAUSE_COUNT);
  x->cause = k >= 0 ? (mapopt_sim_cause)k : MAPOPT_SIM_CAUSE_RUNTIME;
  x->channel = -1;
  const mapopt__json *ch = mapopt__json_get(e, "channel");
  if (ch && ch->type != MAPOPT_JSON_NULL)
    x->channel =
        one_of(R, e, "channel", w, copy_kind_name_of, MAPOPT_SIM_COPY_KINDS);
  else if (!ch)
    mapopt__jr_error(&R->jr, e, "missing key \"channel\" in %s", w);
  read_end(R, e, "from", &x->from);
  read_end(R, e, "to", &x->to);
  read_end(R, e, "first_reader", &x->first_reader);
}

static void read_waits(reader *R, const mapopt__json *root) {
  const mapopt__json *a = array(R, root, "waits", "the report", 1 << 20);
  if (!a)
    return;
  mapopt_sim_result *res = R->res;
  res->waits =
      mapopt__calloc(R->ctx, a->u.arr.n ? a->u.arr.n : 1, sizeof *res->waits);
  if (!res->waits) {
    R->jr.status = MAPOPT_ENOMEM;
    return;
  }
  for (size_t i = 0; i < a->u.arr.n && R->jr.status == MAPOPT_OK; i++) {
    read_wait(R, a->u.arr.items[i], &res->waits[i]);
    res->nwaits = i + 1;
  }
}

/* "SOA C_order" and the other three combinations. */
static void read_layout(reader *R, const mapopt__json *e, mapopt_layout *l) {
  const char *s;
  if (!text(R, e, "layout", "a requirement", &s))
    return;
  static const char *const forms[] = {"AOS F_order", "AOS C_order",
                                      "SOA F_order", "SOA C_order"};
  for (int i = 0; i < 4; i++)
    if (strcmp(s, forms[i]) == 0) {
      l->soa = i >= 2 ? MAPOPT_LAYOUT_YES : MAPOPT_LAYOUT_NO;
      l->c_order = i % 2 ? MAPOPT_LAYOUT_YES : MAPOPT_LAYOUT_NO;
      return;
    }
  mapopt__jr_error(&R->jr, mapopt__json_get(e, "layout"),
                   "\"layout\" in a requirement must be SOA or AOS, then "
                   "C_order or F_order, not \"%s\"",
                   s);
}

/* An object member whose keys are names(0 .. n-1) and values integers. */
static void read_by_name(reader *R, const mapopt__json *e, const char *key,
                         const char *(*name)(int), int n, int64_t *out) {
  const mapopt__json *o =
      mapopt__jr_child(&R->jr, e, key, "a requirement", true);
  if (!o)
    return;
  for (size_t i = 0; i < o->u.obj.n; i++) {
    const mapopt__json_member *m = &o->u.obj.members[i];
    int k = 0;
    while (k < n && !(name(k) && strcmp(name(k), m->key) == 0))
      k++;
    if (k == n) {
      mapopt__jr_error_at(&R->jr, m->line, m->col,
                          "unknown key \"%s\" in \"%s\"", m->key, key);
      return;
    }
    if (!mapopt__jr_int(&R->jr, o, m->key, key, true, 0, INT64_MAX, &out[k]))
      return;
  }
}

static void read_req(reader *R, const mapopt__json *e,
                     mapopt_sim_req_stats *q) {
  static const char *const keys[] = {
      "index",         "names",          "memory",
      "layout",        "mem_ns",         "access_ns",
      "copy_in_bytes", "privilege",      "fields",
      "region_fields", "layout_ppm",     "copy_in_channels",
      "producer",      "instance_bytes", NULL};
  const char *w = "a requirement", *name;
  int64_t index, fields, rfields;
  if (!mapopt__jr_object(&R->jr, e, w, keys) ||
      !mapopt__jr_int(&R->jr, e, "index", w, true, 0, 1 << 20, &index) ||
      !text(R, e, "names", w, &name) || !i64(R, e, "mem_ns", w, &q->mem_ns) ||
      !i64(R, e, "access_ns", w, &q->access_ns) ||
      !mapopt__jr_int(&R->jr, e, "fields", w, true, 0, 1 << 20, &fields) ||
      !mapopt__jr_int(&R->jr, e, "region_fields", w, true, 0, 1 << 20,
                      &rfields) ||
      !i64(R, e, "layout_ppm", w, &q->layout_ppm) ||
      !mapopt__jr_int(&R->jr, e, "instance_bytes", w, true, 0, INT64_MAX,
                      &q->instance_bytes))
    return;
  q->index = (int)index;
  q->fields = (int)fields;
  q->region_fields = (int)rfields;
  q->name = keep(R, name);
  int k = one_of(R, e, "memory", w, mem_name, MAPOPT_MEM_KIND_COUNT);
  q->memory = k >= 0 ? (mapopt_mem_kind)k : MAPOPT_MEM_SYSMEM;
  k = one_of(R, e, "privilege", w, priv_name, 4);
  q->priv = k >= 0 ? (mapopt_priv)k : MAPOPT_PRIV_RO;
  read_layout(R, e, &q->layout);
  read_by_name(R, e, "copy_in_bytes", mem_name, MAPOPT_MEM_KIND_COUNT,
               q->copy_in_bytes);
  read_by_name(R, e, "copy_in_channels", copy_kind_name_of,
               MAPOPT_SIM_COPY_KINDS, q->copy_in_channel_bytes);
  const mapopt__json *p = mapopt__json_get(e, "producer");
  if (!p) {
    mapopt__jr_error(&R->jr, e, "missing key \"producer\" in %s", w);
    return;
  }
  if (p->type == MAPOPT_JSON_NULL)
    return;
  static const char *const pkeys[] = {"task", "kind", "bytes", NULL};
  const char *task;
  if (!mapopt__jr_object(&R->jr, p, "\"producer\"", pkeys) ||
      !text(R, p, "task", "\"producer\"", &task) ||
      !i64(R, p, "bytes", "\"producer\"", &q->producer_bytes))
    return;
  q->producer = keep(R, task);
  k = one_of(R, p, "kind", "\"producer\"", proc_name, MAPOPT_PROC_KIND_COUNT);
  q->producer_kind = k >= 0 ? (mapopt_proc_kind)k : MAPOPT_PROC_CPU;
}

static void read_task(reader *R, const mapopt__json *e,
                      mapopt_sim_task_stats *t) {
  static const char *const keys[] = {"task",
                                     "kind",
                                     "points",
                                     "busy_ns",
                                     "mean_ns",
                                     "max_ns",
                                     "variants",
                                     "index_launch",
                                     "processors_used",
                                     "busiest_processor_ns",
                                     "overhead_ns",
                                     "compute_ns",
                                     "memory_ns",
                                     "wait_data_ns",
                                     "wait_processor_ns",
                                     "requirements",
                                     NULL};
  const char *w = "a task", *name;
  int64_t mean;
  if (!mapopt__jr_object(&R->jr, e, w, keys) || !text(R, e, "task", w, &name) ||
      !i64(R, e, "points", w, &t->points) ||
      !i64(R, e, "busy_ns", w, &t->busy_ns) ||
      !i64(R, e, "mean_ns", w, &mean) || !i64(R, e, "max_ns", w, &t->max_ns) ||
      !mapopt__jr_bool(&R->jr, e, "index_launch", w, true, &t->is_index) ||
      !i64(R, e, "processors_used", w, &t->procs_used) ||
      !i64(R, e, "busiest_processor_ns", w, &t->proc_max_ns))
    return;
  /* Not in the reports of older versions: read as 0. */
  static const char *const split[] = {"overhead_ns", "compute_ns", "memory_ns",
                                      "wait_data_ns", "wait_processor_ns"};
  int64_t *to[] = {&t->overhead_ns, &t->compute_ns, &t->memory_ns,
                   &t->wait_data_ns, &t->wait_proc_ns};
  for (size_t i = 0; i < sizeof split / sizeof split[0]; i++)
    if (!mapopt__jr_int(&R->jr, e, split[i], w, false, 0, INT64_MAX, to[i]))
      return;
  t->task = keep(R, name);
  int k = one_of(R, e, "kind", w, proc_name, MAPOPT_PROC_KIND_COUNT);
  t->kind = k >= 0 ? (mapopt_proc_kind)k : MAPOPT_PROC_CPU;
  const mapopt__json *v = array(R, e, "variants", w, MAPOPT_PROC_KIND_COUNT);
  for (size_t i = 0; v && i < v->u.arr.n; i++) {
    const mapopt__json *x = v->u.arr.items[i];
    mapopt_proc_kind pk;
    if (x->type != MAPOPT_JSON_STRING ||
        mapopt_shape_proc_parse(x->u.str.s, &pk) != MAPOPT_OK) {
      mapopt__jr_error(&R->jr, x, "\"variants\" must list processor kinds");
      return;
    }
    t->variant_kinds |= 1u << pk;
  }
  const mapopt__json *a = array(R, e, "requirements", w, MAPOPT_APP_MAX_ARGS);
  if (!a || a->u.arr.n == 0)
    return;
  t->reqs = mapopt__sim_result_alloc(R->res, a->u.arr.n, sizeof *t->reqs);
  if (!t->reqs) {
    R->jr.status = MAPOPT_ENOMEM;
    return;
  }
  for (size_t i = 0; i < a->u.arr.n && R->jr.status == MAPOPT_OK; i++) {
    read_req(R, a->u.arr.items[i], &t->reqs[i]);
    t->nreqs = (int)i + 1;
  }
}

static void read_root(reader *R, const mapopt__json *root) {
  static const char *const keys[] = {
      "format",        "status",     "error_class",      "error_text",
      "error_time_ns", "elapsed_ns", "iterations_timed", "iterations_warmup",
      "metric",        "processors", "copies",           "memories",
      "critical_path", "waits",      "top_tasks",        "lower_bound_ns",
      "efficiency",    "events",     "sim_wall_us",      NULL};
  mapopt_sim_result *res = R->res;
  const char *w = "the report", *status, *format;
  if (root->type == MAPOPT_JSON_OBJECT && !mapopt__json_get(root, "format")) {
    mapopt__jr_error(&R->jr, root,
                     "the report has no \"format\": it was written by a "
                     "mapopt older than format %s, whose reports lack the "
                     "critical path's attribution; write it again with "
                     "`mapopt sim --report`",
                     MAPOPT_SIM_REPORT_FORMAT);
    return;
  }
  if (!mapopt__jr_object(&R->jr, root, w, keys) ||
      !text(R, root, "format", w, &format))
    return;
  if (strcmp(format, MAPOPT_SIM_REPORT_FORMAT) != 0) {
    mapopt__jr_error(&R->jr, mapopt__json_get(root, "format"),
                     "the report's format is \"%s\"; this mapopt reads \"%s\" "
                     "(write the report again with `mapopt sim --report`)",
                     format, MAPOPT_SIM_REPORT_FORMAT);
    return;
  }
  if (!text(R, root, "status", w, &status))
    return;
  int k = one_of(R, root, "error_class", w, error_name, NERRORS);
  if (k < 0)
    return;
  res->error = (mapopt_sim_error)k;
  if (strcmp(status, res->error ? "error" : "ok") != 0) {
    mapopt__jr_error(&R->jr, mapopt__json_get(root, "status"),
                     "\"status\" must be \"%s\" for error class %s",
                     res->error ? "error" : "ok", mapopt_sim_error_name(k));
    return;
  }
  const mapopt__json *et = mapopt__json_get(root, "error_text");
  const char *etext;
  if (!et || et->type != MAPOPT_JSON_NULL) {
    if (!text(R, root, "error_text", w, &etext))
      return;
    /* The parser rejects \u0000: strlen is the string's length. */
    res->error_text = mapopt__strndup(R->ctx, etext, strlen(etext));
    if (!res->error_text) {
      R->jr.status = MAPOPT_ENOMEM;
      return;
    }
  }
  if (!i64(R, root, "error_time_ns", w, &res->error_time_ns) ||
      !i64(R, root, "elapsed_ns", w, &res->elapsed_ns) ||
      !i64(R, root, "iterations_timed", w, &res->iterations_timed) ||
      !i64(R, root, "iterations_warmup", w, &res->iterations_warmup) ||
      !i64(R, root, "lower_bound_ns", w, &res->lower_bound_ns) ||
      !mapopt__jr_num(&R->jr, root, "efficiency", w, true, 0, MAX_REAL,
                      &res->efficiency) ||
      !i64(R, root, "events", w, &res->events) ||
      !mapopt__jr_int(&R->jr, root, "sim_wall_us", w, false, 0, INT64_MAX,
                      &res->sim_wall_us))
    return;
  const mapopt__json *m = mapopt__jr_child(&R->jr, root, "metric", w, true);
  static const char *const mkeys[] = {"name", "value", "unit", NULL};
  const char *mname, *unit;
  if (!m || !mapopt__jr_object(&R->jr, m, "\"metric\"", mkeys) ||
      !text(R, m, "name", "\"metric\"", &mname) ||
      !text(R, m, "unit", "\"metric\"", &unit) ||
      !mapopt__jr_num(&R->jr, m, "value", "\"metric\"", true, 0, MAX_REAL,
                      &res->metric_value))
    return;
  res->metric_name = keep(R, mname);
  res->metric_unit = keep(R, unit);
  read_procs(R, root);
  read_copies(R, root);
  read_mems(R, root);
  read_path(R, root);
  read_waits(R, root);
  const mapopt__json *a =
      array(R, root, "top_tasks", w, MAPOPT_SIM_MAX_TOP_TASKS);
  for (size_t i = 0; a && i < a->u.arr.n && R->jr.status == MAPOPT_OK; i++) {
    read_task(R, a->u.arr.items[i], &res->top_tasks[i]);
    res->ntop = i + 1;
  }
}

mapopt_status mapopt_sim_report_read(mapopt_ctx *ctx, const char *file,
                                     const char *text, size_t len,
                                     mapopt_diags *diags,
                                     mapopt_sim_result **out) {
  if (!ctx || !text || !diags || !out)
    return MAPOPT_EINVAL;
  if (!file)
    file = "<report>";
  mapopt__arena tree;
  mapopt__arena_init(&tree, ctx);
  mapopt__json *root;
  mapopt_status st = mapopt__json_parse(&tree, file, text, len, diags, &root);
  if (st != MAPOPT_OK) {
    mapopt__arena_destroy(&tree);
    return st;
  }
  reader R = {.ctx = ctx};
  mapopt__jr_init(&R.jr, file, diags);
  R.res = mapopt__sim_result_new(ctx);
  if (!R.res) {
    mapopt__arena_destroy(&tree);
    return MAPOPT_ENOMEM;
  }
  read_root(&R, root);
  mapopt__arena_destroy(&tree);
  if (R.jr.status != MAPOPT_OK) {
    mapopt_sim_result_free(R.res);
    return R.jr.status;
  }
  *out = R.res;
  return MAPOPT_OK;
}
