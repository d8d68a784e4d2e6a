/*
 * Loading and validating `mapopt-machine/1` JSON (docs/machines.md, "The
 * JSON format, key by key").
 *
 * The text is parsed by the located JSON reader into a scratch arena, then
 * walked section by section into a mapopt_machine. Every problem is an
 * error at FILE:LINE:COL of the key or value concerned: unknown keys, wrong
 * types, impossible numbers, mandatory affinity edges that are
 * missing and forbidden ones that are present, channels the machine needs.
 * Rates become integers here, once: GB/s -> MB/s, GFLOP/s ->
 * MFLOP/s, M accesses/s -> accesses per ms, MiB -> bytes. Omitted runtime
 * parameters take the defaults of docs/machines.md, "runtime".
 *
 * This file does not know about presets or the CLI's argument forms; see
 * resolve.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "machine/machine.h"

/* Bounds on counts and values: generous, but small enough that every
 * product the simulator forms from them stays far from int64 overflow. */
#define MAX_NODES MAPOPT_MACHINE_MAX_NODES
#define MAX_RANKS 1024
#define MAX_SOCKETS 64
#define MAX_PROCS 4096
#define MAX_THREADS 4096
#define MAX_MIB (INT64_C(1) << 30)    /* 1 PiB per memory */
#define MAX_NS INT64_C(3600000000000) /* one hour */
#define MAX_GBS 1e6                   /* 1 PB/s */
#define MAX_GFLOPS 1e7
#define MAX_MPS 1e9
#define MAX_WINDOW (INT64_C(1) << 20)

/* The defaults of docs/machines.md, "runtime". */
#define DEF_OVERHEAD_GPU 10000
#define DEF_OVERHEAD_CPU 4000
#define DEF_OVERHEAD_OMP 8000
/* Last-level cache per processor when a file does not say: a P100's L2
 * for a GPU, a server core's L2 for a CPU (an OMP processor has one per
 * thread). */
#define DEF_CACHE_KIB_GPU 4096
#define DEF_CACHE_KIB_CPU 1024
#define MAX_CACHE_KIB (INT64_C(1) << 30)
#define DEF_INNER 20000

const char *const mapopt__machine_param_names[MAPOPT__MPARAM_COUNT] = {
    "nodes", "ranks_per_node"};

static const char *const chan_names[MAPOPT_CHAN_COUNT] = {
    "FB_LOCAL", "FB_FB_PEER", "FB_HOST", "HOST_HOST", "NETWORK"};

const char *mapopt_channel_name(mapopt_channel c) {
  return (unsigned)c < MAPOPT_CHAN_COUNT ? chan_names[c] : NULL;
}

mapopt__machine_impl *mapopt__machine_new(mapopt_ctx *ctx) {
  mapopt__machine_impl *mi = mapopt__calloc(ctx, 1, sizeof *mi);
  if (!mi)
    return NULL;
  mi->ctx = ctx;
  mapopt__arena_init(&mi->arena, ctx);
  return mi;
}

void mapopt_machine_free(mapopt_machine *m) {
  if (!m)
    return;
  mapopt__machine_impl *mi = mapopt__machine_impl_of(m);
  mapopt_ctx *ctx = mi->ctx;
  mapopt__arena_destroy(&mi->arena);
  mapopt__free(ctx, mi, sizeof *mi);
}

/* ---- the walk ----------------------------------------------------------- */

typedef struct loader {
  mapopt__jr jr;
  mapopt__machine_impl *mi;
  const mapopt__machine_params *params;
  mapopt_diags *diags;
  bool nomem;
} loader;

static bool is_object(const mapopt__json *v) {
  return v && v->type == MAPOPT_JSON_OBJECT;
}

/* An error about a preset parameter: it is located in the argument the
 * user typed, not in the preset's file. */
static void param_error(loader *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void param_error(loader *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mapopt_status st = mapopt_diags_addv(L->diags, MAPOPT_SEV_ERROR, "",
                                       L->params->arg, 0, 0, fmt, ap);
  va_end(ap);
  if (st != MAPOPT_OK)
    L->jr.status = MAPOPT_ENOMEM;
  else if (L->jr.status == MAPOPT_OK)
    L->jr.status = MAPOPT_EINVAL;
}

/*
 * obj[key] as a positive rate, converted to an integer by scale (1000 for
 * GB/s -> MB/s). Absent and not required: *out is unchanged. The JSON
 * helpers check closed ranges only, and a rate must be strictly positive,
 * hence this reader.
 */
static bool rate(loader *L, const mapopt__json *obj, const char *key,
                 const char *what, bool required, double max, int64_t *out) {
  const mapopt__json_member *mb = mapopt__json_member_of(obj, key);
  if (!mb) {
    if (required)
      mapopt__jr_error(&L->jr, obj, "missing key \"%s\" in %s", key, what);
    return !required;
  }
  const mapopt__json *v = mb->value;
  if (v->type != MAPOPT_JSON_INT && v->type != MAPOPT_JSON_REAL) {
    mapopt__jr_error(&L->jr, v, "\"%s\" in %s must be a number, not %s", key,
                     what, mapopt__json_type_name(v->type));
    return false;
  }
  double d = v->u.num.d;
  if (!(d > 0)) {
    mapopt__jr_error(&L->jr, v, "\"%s\" in %s must be positive, got %g", key,
                     what, d);
    return false;
  }
  if (d > max) {
    mapopt__jr_error(&L->jr, v, "\"%s\" in %s must be at most %g, got %g", key,
                     what, max, d);
    return false;
  }
  int64_t r = mapopt__round_i64(d * 1000.0);
  if (r < 1) {
    mapopt__jr_error(&L->jr, v, "\"%s\" in %s must be at least 0.001, got %g",
                     key, what, d);
    return false;
  }
  *out = r;
  return true;
}

static char *arena_str(loader *L, const char *s) {
  char *p = mapopt__arena_strndup(&L->mi->arena, s, strlen(s));
  if (!p)
    L->nomem = true;
  return p;
}

/* ---- top-level scalars and parameters ------------------------------------ */

static const char *const top_keys[] = {
    "format",     "name",     "nodes",    "ranks_per_node", "sockets",
    "processors", "memories", "affinity", "channels",       "runtime",
    "params",     "sources",  NULL};

/* "params": {"nodes": {"max": 256}, "ranks_per_node": {"max": 4}} */
static void read_params(loader *L, const mapopt__json *root) {
  const mapopt__json *p =
      mapopt__jr_child(&L->jr, root, "params", "the machine", false);
  if (!p)
    return;
  static const char *const keys[] = {"nodes", "ranks_per_node", NULL};
  static const char *const max_keys[] = {"max", NULL};
  if (!mapopt__jr_object(&L->jr, p, "params", keys))
    return;
  for (int k = 0; k < MAPOPT__MPARAM_COUNT; k++) {
    const char *name = mapopt__machine_param_names[k];
    const mapopt__json *d = mapopt__json_get(p, name);
    if (!d)
      continue;
    char what[64];
    snprintf(what, sizeof what, "params.%s", name);
    if (!mapopt__jr_object(&L->jr, d, what, max_keys))
      continue;
    int64_t max = 0;
    if (mapopt__jr_int(&L->jr, d, "max", what, true, 1,
                       k == MAPOPT__MPARAM_NODES ? MAX_NODES : MAX_RANKS, &max))
      L->mi->param_max[k] = max;
  }
}

/* Applies the requested parameter values over the file's. */
static void apply_params(loader *L) {
  if (!L->params)
    return;
  mapopt_machine *m = &L->mi->pub;
  for (int k = 0; k < MAPOPT__MPARAM_COUNT; k++) {
    int64_t v = L->params->value[k];
    if (!v)
      continue;
    const char *name = mapopt__machine_param_names[k];
    int64_t max = L->mi->param_max[k];
    if (!max) {
      char list[64] = "";
      for (int j = 0; j < MAPOPT__MPARAM_COUNT; j++)
        if (L->mi->param_max[j]) {
          if (list[0])
            strcat(list, ", ");
          strcat(list, mapopt__machine_param_names[j]);
        }
      if (list[0])
        param_error(L, "machine \"%s\" has no parameter \"%s\" (it takes %s)",
                    m->name, name, list);
      else
        param_error(L, "machine \"%s\" takes no parameters (got \"%s\")",
                    m->name, name);
      continue;
    }
    if (v < 1 || v > max) {
      param_error(L,
                  "parameter %s=%" PRId64 " of machine \"%s\" is out of range "
                  "[1, %" PRId64 "]",
                  name, v, m->name, max);
      continue;
    }
    if (k == MAPOPT__MPARAM_NODES)
      m->nodes = v;
    else
      m->ranks_per_node = v;
  }
}

static void read_top(loader *L, const mapopt__json *root, const char *file) {
  mapopt_machine *m = &L->mi->pub;
  const char *format = NULL;
  if (mapopt__jr_str(&L->jr, root, "format", "the machine", true, &format) &&
      format && strcmp(format, "mapopt-machine/1") != 0)
    mapopt__jr_error(&L->jr, mapopt__json_get(root, "format"),
                     "unsupported format \"%s\" (expected "
                     "\"mapopt-machine/1\")",
                     format);
  const char *name = NULL;
  mapopt__jr_str(&L->jr, root, "name", "the machine", false, &name);
  if (name && !name[0]) {
    mapopt__jr_error(&L->jr, mapopt__json_get(root, "name"),
                     "\"name\" must not be empty");
    name = NULL;
  }
  if (name) {
    m->name = arena_str(L, name);
  } else {
    /* The file's base name without ".json". */
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0)
      n -= 5;
    m->name = mapopt__arena_strndup(&L->mi->arena, base, n);
    if (!m->name)
      L->nomem = true;
  }
  m->nodes = 1;
  m->ranks_per_node = 1;
  m->sockets = 1;
  mapopt__jr_int(&L->jr, root, "nodes", "the machine", false, 1, MAX_NODES,
                 &m->nodes);
  mapopt__jr_int(&L->jr, root, "ranks_per_node", "the machine", false, 1,
                 MAX_RANKS, &m->ranks_per_node);
  mapopt__jr_int(&L->jr, root, "sockets", "the machine", false, 1, MAX_SOCKETS,
                 &m->sockets);
  read_params(L, root);
  if (m->name)
    apply_params(L);
}

/* ---- runtime ------------------------------------------------------------ */

/* Returns the default inner-task overhead for the processors section. */
static int64_t read_runtime(loader *L, const mapopt__json *root) {
  mapopt_machine_runtime *r = &L->mi->pub.runtime;
  r->launch_ns = 60000;
  r->launch_traced_ns = 15000;
  r->map_ns = 40000;
  r->map_traced_ns = 8000;
  r->fence_ns = 20000;
  r->future_ns = 5000;
  r->ipc_lat_ns = 3000;
  r->window_ops = 1024;
  int64_t inner = DEF_INNER;
  const mapopt__json *o =
      mapopt__jr_child(&L->jr, root, "runtime", "the machine", false);
  static const char *const keys[] = {"launch_ns",
                                     "launch_traced_ns",
                                     "map_ns",
                                     "map_traced_ns",
                                     "fence_ns",
                                     "future_ns",
                                     "ipc_lat_ns",
                                     "window_ops",
                                     "inner_overhead_ns",
                                     NULL};
  if (!o || !mapopt__jr_object(&L->jr, o, "runtime", keys))
    return inner;
  struct {
    const char *key;
    int64_t *slot;
  } f[] = {{"launch_ns", &r->launch_ns},
           {"launch_traced_ns", &r->launch_traced_ns},
           {"map_ns", &r->map_ns},
           {"map_traced_ns", &r->map_traced_ns},
           {"fence_ns", &r->fence_ns},
           {"future_ns", &r->future_ns},
           {"ipc_lat_ns", &r->ipc_lat_ns},
           {"inner_overhead_ns", &inner}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    mapopt__jr_int(&L->jr, o, f[i].key, "runtime", false, 0, MAX_NS, f[i].slot);
  mapopt__jr_int(&L->jr, o, "window_ops", "runtime", false, 1, MAX_WINDOW,
                 &r->window_ops);
  return inner;
}

/* The rank split rule (docs/machines.md, "Naming a machine"): ranks per node
 * must divide the GPUs of a node, so that every rank has as many. Here and in
 * mapopt_machine_check_ranks only. */
static bool ranks_divide(const mapopt_machine *m, int64_t ranks) {
  return ranks >= 1 && m->procs[MAPOPT_PROC_GPU].count % ranks == 0;
}

mapopt_status mapopt_machine_check_ranks(const mapopt_machine *m, int64_t ranks,
                                         const char *who, mapopt_diags *diags) {
  if (ranks_divide(m, ranks))
    return MAPOPT_OK;
  return mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", who, 0, 0,
                          MAPOPT__MACHINE_RANKS_ERROR, ranks,
                          m->procs[MAPOPT_PROC_GPU].count) == MAPOPT_OK
             ? MAPOPT_EINVAL
             : MAPOPT_ENOMEM;
}

/* ---- processors --------------------------------------------------------- */

int64_t mapopt__machine_default_cache_kib(int kind, int64_t threads) {
  return kind == MAPOPT_PROC_GPU
             ? DEF_CACHE_KIB_GPU
             : DEF_CACHE_KIB_CPU * (threads > 0 ? threads : 1);
}

static const char *const cpu_keys[] = {
    "count",     "gflops_f64", "gflops_f32", "overhead_ns", "inner_overhead_ns",
    "cache_kib", NULL};
static const char *const omp_keys[] = {
    "count",       "threads",           "gflops_f64", "gflops_f32",
    "overhead_ns", "inner_overhead_ns", "cache_kib",  NULL};
static const char *const gpu_keys[] = {
    "count",       "gflops_f64",        "gflops_f32", "gflops_f64_matrix",
    "overhead_ns", "inner_overhead_ns", "cache_kib",  "socket",
    NULL};
static const char *const util_keys[] = {"count", NULL};

static void read_gpu_sockets(loader *L, const mapopt__json *e) {
  mapopt_machine *m = &L->mi->pub;
  mapopt_machine_procs *p = &m->procs[MAPOPT_PROC_GPU];
  int64_t *s =
      mapopt__arena_zalloc(&L->mi->arena, (size_t)p->count * sizeof *s);
  if (!s) {
    L->nomem = true;
    return;
  }
  p->socket = s;
  const mapopt__json *a =
      mapopt__jr_array(&L->jr, e, "socket", "processors.GPU", false);
  if (!a) {
    /* Unspecified: in blocks, GPU i on socket i * sockets / count, the
     * usual wiring of a multi-socket GPU node. */
    for (int64_t i = 0; i < p->count; i++)
      s[i] = i * m->sockets / p->count;
    return;
  }
  if ((int64_t)a->u.arr.n != p->count) {
    mapopt__jr_error(&L->jr, a,
                     "\"socket\" in processors.GPU has %zu entries for %" PRId64
                     " GPUs",
                     a->u.arr.n, p->count);
    return;
  }
  for (size_t i = 0; i < a->u.arr.n; i++) {
    const mapopt__json *v = a->u.arr.items[i];
    if (v->type != MAPOPT_JSON_INT) {
      mapopt__jr_error(&L->jr, v, "GPU %zu's socket must be an integer, not %s",
                       i, mapopt__json_type_name(v->type));
      continue;
    }
    if (v->u.num.i < 0 || v->u.num.i >= m->sockets) {
      mapopt__jr_error(&L->jr, v,
                       "GPU %zu's socket %" PRId64 " is out of range: the "
                       "machine has %" PRId64 " socket%s",
                       i, v->u.num.i, m->sockets, m->sockets == 1 ? "" : "s");
      continue;
    }
    s[i] = v->u.num.i;
  }
}

static void read_proc(loader *L, const mapopt__json *procs, int kind,
                      int64_t inner) {
  mapopt_machine *m = &L->mi->pub;
  mapopt_machine_procs *p = &m->procs[kind];
  const char *name = mapopt_shape_proc_name((mapopt_proc_kind)kind);
  char what[32];
  snprintf(what, sizeof what, "processors.%s", name);
  p->threads = 1;
  p->inner_overhead_ns = inner;
  p->cache_bytes = mapopt__machine_default_cache_kib(kind, 1) * 1024;
  p->overhead_ns = kind == MAPOPT_PROC_GPU   ? DEF_OVERHEAD_GPU
                   : kind == MAPOPT_PROC_OMP ? DEF_OVERHEAD_OMP
                                             : DEF_OVERHEAD_CPU;
  const mapopt__json *e = mapopt__json_get(procs, name);
  if (!e)
    return;
  const char *const *keys = kind == MAPOPT_PROC_GPU   ? gpu_keys
                            : kind == MAPOPT_PROC_OMP ? omp_keys
                                                      : cpu_keys;
  if (!mapopt__jr_object(&L->jr, e, what, keys) && !is_object(e))
    return;
  int64_t count = 0;
  if (!mapopt__jr_int(&L->jr, e, "count", what, true, 0,
                      kind == MAPOPT_PROC_OMP || kind == MAPOPT_PROC_GPU
                          ? MAX_PROCS / 4
                          : MAX_PROCS,
                      &count))
    return;
  p->count = count;
  bool need = count > 0;
  if (kind == MAPOPT_PROC_OMP)
    mapopt__jr_int(&L->jr, e, "threads", what, need, 1, MAX_THREADS,
                   &p->threads);
  int64_t f64 = 0, f32 = 0, mat = 0;
  rate(L, e, "gflops_f64", what, need, MAX_GFLOPS, &f64);
  rate(L, e, "gflops_f32", what, need, MAX_GFLOPS, &f32);
  if (kind == MAPOPT_PROC_GPU)
    rate(L, e, "gflops_f64_matrix", what, false, MAX_GFLOPS, &mat);
  /* OMP peaks are per core in the file. Rounding the per-core value first
   * keeps the product a multiple of threads, so the writer can divide it
   * back exactly. */
  p->mflops_f64 = f64 * p->threads;
  p->mflops_f32 = f32 * p->threads;
  p->mflops_f64_matrix = mat;
  mapopt__jr_int(&L->jr, e, "overhead_ns", what, false, 0, MAX_NS,
                 &p->overhead_ns);
  mapopt__jr_int(&L->jr, e, "inner_overhead_ns", what, false, 0, MAX_NS,
                 &p->inner_overhead_ns);
  int64_t cache_kib = mapopt__machine_default_cache_kib(kind, p->threads);
  mapopt__jr_int(&L->jr, e, "cache_kib", what, false, 1, MAX_CACHE_KIB,
                 &cache_kib);
  p->cache_bytes = cache_kib * 1024;
  if (kind == MAPOPT_PROC_GPU && count > 0)
    read_gpu_sockets(L, e);
}

static void read_processors(loader *L, const mapopt__json *root,
                            int64_t inner) {
  mapopt_machine *m = &L->mi->pub;
  m->util_count = 1;
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++) {
    m->procs[k].threads = 1;
    m->procs[k].inner_overhead_ns = inner;
  }
  const mapopt__json *o =
      mapopt__jr_child(&L->jr, root, "processors", "the machine", true);
  static const char *const keys[] = {"CPU", "OMP", "GPU", "UTIL", NULL};
  if (!o ||
      (!mapopt__jr_object(&L->jr, o, "processors", keys) && !is_object(o)))
    return;
  read_proc(L, o, MAPOPT_PROC_CPU, inner);
  read_proc(L, o, MAPOPT_PROC_OMP, inner);
  read_proc(L, o, MAPOPT_PROC_GPU, inner);
  const mapopt__json *u = mapopt__json_get(o, "UTIL");
  if (u && (mapopt__jr_object(&L->jr, u, "processors.UTIL", util_keys) ||
            is_object(u)))
    mapopt__jr_int(&L->jr, u, "count", "processors.UTIL", true, 1, MAX_PROCS,
                   &m->util_count);
  /* CPU i and OMP j sit on socket i mod sockets. */
  static const int host_kinds[] = {MAPOPT_PROC_CPU, MAPOPT_PROC_OMP};
  for (size_t h = 0; h < 2; h++) {
    mapopt_machine_procs *p = &m->procs[host_kinds[h]];
    if (!p->count)
      continue;
    int64_t *s =
        mapopt__arena_alloc(&L->mi->arena, (size_t)p->count * sizeof *s);
    if (!s) {
      L->nomem = true;
      return;
    }
    for (int64_t i = 0; i < p->count; i++)
      s[i] = i % m->sockets;
    p->socket = s;
  }
  if (L->jr.status == MAPOPT_OK && m->procs[MAPOPT_PROC_CPU].count == 0 &&
      m->procs[MAPOPT_PROC_GPU].count == 0 &&
      m->procs[MAPOPT_PROC_OMP].count == 0)
    mapopt__jr_error(&L->jr, o,
                     "the machine has no CPU, GPU or OMP processors");
  int64_t gpus = m->procs[MAPOPT_PROC_GPU].count;
  if (L->jr.status == MAPOPT_OK && !ranks_divide(m, m->ranks_per_node)) {
    if (L->params && L->params->value[MAPOPT__MPARAM_RANKS])
      param_error(L, MAPOPT__MACHINE_RANKS_ERROR, m->ranks_per_node, gpus);
    else
      mapopt__jr_error(&L->jr, mapopt__json_get(root, "ranks_per_node"),
                       MAPOPT__MACHINE_RANKS_ERROR, m->ranks_per_node, gpus);
  }
}

/* ---- memories ----------------------------------------------------------- */

static const char *const mem_keys[] = {"SYSMEM", "SOCKMEM", "ZCMEM",
                                       "RDMEM",  "FBMEM",   NULL};

/* How many of each memory kind, as the "per" key says it. */
static const char *mem_per(int kind) {
  switch (kind) {
  case MAPOPT_MEM_SOCKMEM:
    return "socket";
  case MAPOPT_MEM_FBMEM:
    return "gpu";
  default:
    return "node";
  }
}

static void read_memories(loader *L, const mapopt__json *root) {
  mapopt_machine *m = &L->mi->pub;
  const mapopt__json *o =
      mapopt__jr_child(&L->jr, root, "memories", "the machine", true);
  if (!o ||
      (!mapopt__jr_object(&L->jr, o, "memories", mem_keys) && !is_object(o)))
    return;
  static const char *const keys[] = {"per", "capacity_mib", NULL};
  for (int k = 0; k < MAPOPT_MEM_VIRTUAL; k++) {
    const char *name = mapopt_shape_mem_name((mapopt_mem_kind)k);
    const mapopt__json *e = mapopt__json_get(o, name);
    if (!e)
      continue;
    char what[32];
    snprintf(what, sizeof what, "memories.%s", name);
    if (!mapopt__jr_object(&L->jr, e, what, keys) && !is_object(e))
      continue;
    const char *per = NULL;
    if (mapopt__jr_str(&L->jr, e, "per", what, false, &per) && per &&
        strcmp(per, mem_per(k)) != 0)
      mapopt__jr_error(&L->jr, mapopt__json_get(e, "per"),
                       "\"per\" of %s must be \"%s\", not \"%s\"", name,
                       mem_per(k), per);
    int64_t mib = 0;
    if (mapopt__jr_int(&L->jr, e, "capacity_mib", what, true, 1, MAX_MIB,
                       &mib)) {
      m->mems[k].present = true;
      m->mems[k].capacity = mib << 20;
    }
  }
  int64_t gpus = m->procs[MAPOPT_PROC_GPU].count;
  const mapopt__json *fb = mapopt__json_get(o, "FBMEM");
  if (gpus > 0 && !fb)
    mapopt__jr_error(&L->jr, o,
                     "missing FBMEM in memories: the machine has GPUs");
  else if (gpus == 0 && fb)
    mapopt__jr_error(&L->jr, fb, "FBMEM needs GPUs, and the machine has none");
}

/* ---- affinity ----------------------------------------------------------- */

/* The mandatory edges (docs/machines.md, "affinity"), for the kinds that
 * exist. */
static const struct {
  int proc, mem;
} mandatory[] = {
    {MAPOPT_PROC_GPU, MAPOPT_MEM_FBMEM},
    {MAPOPT_PROC_GPU, MAPOPT_MEM_ZCMEM},
    {MAPOPT_PROC_CPU, MAPOPT_MEM_SYSMEM},
    {MAPOPT_PROC_CPU, MAPOPT_MEM_ZCMEM},
    {MAPOPT_PROC_CPU, MAPOPT_MEM_RDMEM},
    {MAPOPT_PROC_CPU, MAPOPT_MEM_SOCKMEM},
    {MAPOPT_PROC_OMP, MAPOPT_MEM_SOCKMEM},
    {MAPOPT_PROC_OMP, MAPOPT_MEM_SYSMEM},
    {MAPOPT_PROC_OMP, MAPOPT_MEM_ZCMEM},
};

/* Why an edge may not exist, or NULL when it may. */
static const char *forbidden(int proc, int mem) {
  if (proc == MAPOPT_PROC_GPU && mem != MAPOPT_MEM_FBMEM &&
      mem != MAPOPT_MEM_ZCMEM)
    return "a GPU accesses only its FBMEM and ZCMEM";
  if (proc != MAPOPT_PROC_GPU && mem == MAPOPT_MEM_FBMEM)
    return "CPU and OMP processors cannot access FBMEM";
  return NULL;
}

static int kind_index(const char *s, bool proc) {
  if (proc) {
    static const int kinds[] = {MAPOPT_PROC_CPU, MAPOPT_PROC_GPU,
                                MAPOPT_PROC_OMP};
    for (size_t i = 0; i < 3; i++)
      if (strcmp(s, mapopt_shape_proc_name((mapopt_proc_kind)kinds[i])) == 0)
        return kinds[i];
    return -1;
  }
  for (int k = 0; k < MAPOPT_MEM_VIRTUAL; k++)
    if (strcmp(s, mapopt_shape_mem_name((mapopt_mem_kind)k)) == 0)
      return k;
  return -1;
}

static void read_affinity(loader *L, const mapopt__json *root) {
  mapopt_machine *m = &L->mi->pub;
  const mapopt__json *a =
      mapopt__jr_array(&L->jr, root, "affinity", "the machine", true);
  if (!a)
    return;
  static const char *const keys[] = {
      "proc", "mem", "bw_gbs", "lat_ns", "gather_mps", "atomic_mps", NULL};
  /* Where each edge was first given, for duplicates. */
  const mapopt__json *seen[MAPOPT_PROC_KIND_COUNT][MAPOPT_MEM_KIND_COUNT];
  memset(seen, 0, sizeof seen);
  for (size_t i = 0; i < a->u.arr.n; i++) {
    const mapopt__json *e = a->u.arr.items[i];
    /* Name the entry by its edge when it has one, so that a misspelt key
     * reads `unknown key "bandwith" in affinity GPU -> FBMEM`. */
    char what[64];
    const mapopt__json *pv = mapopt__json_get(e, "proc");
    const mapopt__json *mv = mapopt__json_get(e, "mem");
    if (pv && mv && pv->type == MAPOPT_JSON_STRING &&
        mv->type == MAPOPT_JSON_STRING)
      snprintf(what, sizeof what, "affinity %.16s -> %.16s", pv->u.str.s,
               mv->u.str.s);
    else
      snprintf(what, sizeof what, "affinity[%zu]", i);
    if (!mapopt__jr_object(&L->jr, e, what, keys) && !is_object(e))
      continue;
    const char *ps = NULL, *ms = NULL;
    if (!mapopt__jr_str(&L->jr, e, "proc", what, true, &ps) ||
        !mapopt__jr_str(&L->jr, e, "mem", what, true, &ms) || !ps || !ms)
      continue;
    int p = kind_index(ps, true), k = kind_index(ms, false);
    if (p < 0) {
      mapopt__jr_error(&L->jr, pv,
                       "unknown processor kind \"%s\" in affinity[%zu] "
                       "(expected CPU, GPU or OMP)",
                       ps, i);
      continue;
    }
    if (k < 0) {
      mapopt__jr_error(&L->jr, mv,
                       "unknown memory kind \"%s\" in affinity[%zu] "
                       "(expected SYSMEM, FBMEM, ZCMEM, RDMEM or SOCKMEM)",
                       ms, i);
      continue;
    }
    snprintf(what, sizeof what, "affinity %s -> %s", ps, ms);
    const char *why = forbidden(p, k);
    if (why) {
      mapopt__jr_error(&L->jr, e, "forbidden %s: %s", what, why);
      continue;
    }
    if (seen[p][k]) {
      mapopt__jr_error(&L->jr, e, "duplicate %s (first given at %d:%d)", what,
                       seen[p][k]->line, seen[p][k]->col);
      continue;
    }
    seen[p][k] = e;
    if (m->procs[p].count == 0) {
      mapopt__jr_error(&L->jr, e, "%s: the machine has no %s processors", what,
                       ps);
      continue;
    }
    if (!m->mems[k].present) {
      mapopt__jr_error(&L->jr, e, "%s: the machine has no %s", what, ms);
      continue;
    }
    mapopt_affinity af = {.present = true};
    bool ok = rate(L, e, "bw_gbs", what, true, MAX_GBS, &af.bw_mbps);
    ok &=
        mapopt__jr_int(&L->jr, e, "lat_ns", what, true, 0, MAX_NS, &af.lat_ns);
    ok &= rate(L, e, "gather_mps", what, true, MAX_MPS, &af.gather_per_ms);
    ok &= rate(L, e, "atomic_mps", what, true, MAX_MPS, &af.atomic_per_ms);
    if (ok)
      m->affinity[p][k] = af;
  }
  for (size_t i = 0; i < sizeof mandatory / sizeof mandatory[0]; i++) {
    int p = mandatory[i].proc, k = mandatory[i].mem;
    if (m->procs[p].count > 0 && m->mems[k].present && !seen[p][k])
      mapopt__jr_error(&L->jr, a, "missing mandatory affinity %s -> %s",
                       mapopt_shape_proc_name((mapopt_proc_kind)p),
                       mapopt_shape_mem_name((mapopt_mem_kind)k));
  }
}

/* ---- channels ----------------------------------------------------------- */

static void read_channels(loader *L, const mapopt__json *root) {
  mapopt_machine *m = &L->mi->pub;
  const mapopt__json *o =
      mapopt__jr_child(&L->jr, root, "channels", "the machine", true);
  static const char *const keys[] = {"FB_LOCAL",  "FB_FB_PEER", "FB_HOST",
                                     "HOST_HOST", "NETWORK",    NULL};
  if (!o || (!mapopt__jr_object(&L->jr, o, "channels", keys) && !is_object(o)))
    return;
  static const char *const plain_keys[] = {"bw_gbs", "lat_ns", NULL};
  static const char *const peer_keys[] = {"bw_gbs", "cross_socket_bw_gbs",
                                          "lat_ns", "peer_ports", NULL};
  static const char *const net_keys[] = {"bw_gbs", "lat_ns", "gpudirect", NULL};
  for (int c = 0; c < MAPOPT_CHAN_COUNT; c++) {
    const mapopt__json *e = mapopt__json_get(o, chan_names[c]);
    if (!e)
      continue;
    char what[32];
    snprintf(what, sizeof what, "channels.%s", chan_names[c]);
    const char *const *k = c == MAPOPT_CHAN_FB_FB_PEER ? peer_keys
                           : c == MAPOPT_CHAN_NETWORK  ? net_keys
                                                       : plain_keys;
    if (!mapopt__jr_object(&L->jr, e, what, k) && !is_object(e))
      continue;
    mapopt_channel_params ch = {.present = true, .gpudirect = true};
    bool ok = rate(L, e, "bw_gbs", what, true, MAX_GBS, &ch.bw_mbps);
    ok &=
        mapopt__jr_int(&L->jr, e, "lat_ns", what, true, 0, MAX_NS, &ch.lat_ns);
    if (c == MAPOPT_CHAN_FB_FB_PEER) {
      ok &= rate(L, e, "cross_socket_bw_gbs", what, false, MAX_GBS,
                 &ch.cross_socket_bw_mbps);
      const char *ports = NULL;
      ok &= mapopt__jr_str(&L->jr, e, "peer_ports", what, false, &ports);
      if (ports && strcmp(ports, "peer_link") == 0) {
        ch.peer_link = true;
      } else if (ports && strcmp(ports, "host_link") != 0) {
        mapopt__jr_error(&L->jr, mapopt__json_get(e, "peer_ports"),
                         "\"peer_ports\" in %s must be \"host_link\" or "
                         "\"peer_link\", not \"%s\"",
                         what, ports);
        ok = false;
      }
    }
    if (c == MAPOPT_CHAN_NETWORK)
      ok &= mapopt__jr_bool(&L->jr, e, "gpudirect", what, false, &ch.gpudirect);
    else
      ch.gpudirect = false;
    if (ok)
      m->channels[c] = ch;
  }
  /* The channels the machine's copies can need. */
  int64_t gpus = m->procs[MAPOPT_PROC_GPU].count;
  struct {
    int chan;
    bool need;
    const char *why;
  } need[] = {
      {MAPOPT_CHAN_FB_LOCAL, gpus > 0, "the machine has GPUs"},
      {MAPOPT_CHAN_FB_FB_PEER, gpus > 1, "the machine has several GPUs"},
      {MAPOPT_CHAN_FB_HOST, gpus > 0, "the machine has GPUs"},
      {MAPOPT_CHAN_HOST_HOST, true,
       "every machine copies between host "
       "memories"},
      {MAPOPT_CHAN_NETWORK, m->nodes > 1, "the machine has several nodes"},
  };
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    if (need[i].need && !mapopt__json_get(o, chan_names[need[i].chan])) {
      if (need[i].chan == MAPOPT_CHAN_NETWORK && L->params &&
          L->params->value[MAPOPT__MPARAM_NODES] > 1)
        param_error(L,
                    "machine \"%s\" has no NETWORK channel, so it cannot "
                    "have more than one node",
                    m->name);
      else
        mapopt__jr_error(&L->jr, o, "missing channel %s: %s",
                         chan_names[need[i].chan], need[i].why);
    }
}

/* ---- sources ------------------------------------------------------------ */

static void read_sources(loader *L, const mapopt__json *root) {
  const mapopt__json *o =
      mapopt__jr_child(&L->jr, root, "sources", "the machine", false);
  if (!o || !o->u.obj.n)
    return;
  mapopt__machine_impl *mi = L->mi;
  mi->sources =
      mapopt__arena_zalloc(&mi->arena, o->u.obj.n * sizeof *mi->sources);
  if (!mi->sources) {
    L->nomem = true;
    return;
  }
  for (size_t i = 0; i < o->u.obj.n; i++) {
    const mapopt__json_member *mb = &o->u.obj.members[i];
    if (mb->value->type != MAPOPT_JSON_STRING) {
      mapopt__jr_error(&L->jr, mb->value,
                       "\"%s\" in sources must be a string, not %s", mb->key,
                       mapopt__json_type_name(mb->value->type));
      continue;
    }
    mapopt__machine_source *s = &mi->sources[mi->nsources];
    s->key = arena_str(L, mb->key);
    s->value = arena_str(L, mb->value->u.str.s);
    if (s->key && s->value)
      mi->nsources++;
  }
}

/* ---- entry points ------------------------------------------------------- */

mapopt_status mapopt__machine_load(mapopt_ctx *ctx, const char *file,
                                   const char *text, size_t len,
                                   const mapopt__machine_params *params,
                                   mapopt_diags *diags, mapopt_machine **out) {
  mapopt__arena scratch;
  mapopt__arena_init(&scratch, ctx);
  mapopt__json *root = NULL;
  mapopt_status st =
      mapopt__json_parse(&scratch, file, text, len, diags, &root);
  if (st != MAPOPT_OK) {
    mapopt__arena_destroy(&scratch);
    return st;
  }
  loader L = {.params = params, .diags = diags};
  L.mi = mapopt__machine_new(ctx);
  if (!L.mi) {
    mapopt__arena_destroy(&scratch);
    return MAPOPT_ENOMEM;
  }
  mapopt__jr_init(&L.jr, file, diags);
  if (mapopt__jr_object(&L.jr, root, "the machine", top_keys) ||
      is_object(root)) {
    read_top(&L, root, file);
    int64_t inner = read_runtime(&L, root);
    read_processors(&L, root, inner);
    read_memories(&L, root);
    read_affinity(&L, root);
    read_channels(&L, root);
    read_sources(&L, root);
  }
  mapopt__arena_destroy(&scratch);
  st = L.nomem ? MAPOPT_ENOMEM : L.jr.status;
  if (st != MAPOPT_OK) {
    mapopt_machine_free(&L.mi->pub);
    return st;
  }
  *out = &L.mi->pub;
  return MAPOPT_OK;
}

mapopt_status mapopt_machine_load_json(mapopt_ctx *ctx, const char *file,
                                       const char *text, size_t len,
                                       mapopt_diags *diags,
                                       mapopt_machine **out) {
  return mapopt__machine_load(ctx, file, text, len, NULL, diags, out);
}

/* ---- equality ----------------------------------------------------------- */

bool mapopt__machine_equal(const mapopt_machine *a, const mapopt_machine *b) {
  if (strcmp(a->name ? a->name : "", b->name ? b->name : "") != 0 ||
      a->nodes != b->nodes || a->ranks_per_node != b->ranks_per_node ||
      a->sockets != b->sockets || a->util_count != b->util_count ||
      memcmp(&a->runtime, &b->runtime, sizeof a->runtime) != 0)
    return false;
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++) {
    const mapopt_machine_procs *p = &a->procs[k], *q = &b->procs[k];
    if (p->count != q->count || p->threads != q->threads ||
        p->mflops_f64 != q->mflops_f64 || p->mflops_f32 != q->mflops_f32 ||
        p->mflops_f64_matrix != q->mflops_f64_matrix ||
        p->overhead_ns != q->overhead_ns ||
        p->inner_overhead_ns != q->inner_overhead_ns)
      return false;
    for (int64_t i = 0; i < p->count; i++)
      if (!p->socket != !q->socket ||
          (p->socket && p->socket[i] != q->socket[i]))
        return false;
  }
  for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++)
    if (a->mems[k].present != b->mems[k].present ||
        a->mems[k].capacity != b->mems[k].capacity)
      return false;
  for (int p = 0; p < MAPOPT_PROC_KIND_COUNT; p++)
    for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++) {
      const mapopt_affinity *x = &a->affinity[p][k], *y = &b->affinity[p][k];
      if (x->present != y->present || x->bw_mbps != y->bw_mbps ||
          x->lat_ns != y->lat_ns || x->gather_per_ms != y->gather_per_ms ||
          x->atomic_per_ms != y->atomic_per_ms)
        return false;
    }
  for (int c = 0; c < MAPOPT_CHAN_COUNT; c++) {
    const mapopt_channel_params *x = &a->channels[c], *y = &b->channels[c];
    if (x->present != y->present || x->bw_mbps != y->bw_mbps ||
        x->cross_socket_bw_mbps != y->cross_socket_bw_mbps ||
        x->lat_ns != y->lat_ns || x->peer_link != y->peer_link ||
        x->gpudirect != y->gpudirect)
      return false;
  }
  return true;
}
