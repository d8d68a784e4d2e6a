/*
 * A mapper applied to a StarPU program (include/mapopt/starpu.h): loading
 * the mapper for the run's machine, and answering where each task point
 * runs, where each of its data lives and with which layout.
 *
 * The answers compose the DSL's policy queries (mapopt/dsl.h) with the
 * substrate rules the simulator applies (docs/dsl.md, "Defaults, all in one
 * place"): the kind selection, the default index and single placements, the
 * single-task node check, VIRTUAL on a leaf, and the memory and layout
 * defaults. Mapping errors are reported with the simulator's wording, so
 * AutoGuide reads a real run's failure as it reads a simulated one. What
 * this file adds is only the translation of DSL processors and memories
 * into StarPU worker ids and memory nodes.
 *
 * The one piece of mutable state is the round-robin counters of the
 * default single placement and the list of codelet copies; both are
 * guarded by the handle's mutex, so queries may run from any thread.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "mapopt/starpu.h"

/* A codelet copy with specific memory nodes (mapopt_starpu_codelet). */
typedef struct clone {
  struct clone *next;
  const struct starpu_codelet *base;
  int nbuffers;
  int nodes[STARPU_NMAXBUFS];
  struct starpu_codelet cl;
} clone;

struct mapopt_starpu {
  mapopt_ctx *ctx;
  mapopt_program *prog;
  mapopt_starpu_machine m;
  mapopt_starpu_options opts;
  char *file; /* the mapper's name in diagnostics */
  size_t file_len;
  pthread_mutex_t lock;
  int64_t *rr; /* default single placement: [rank][CPU, GPU] counters */
  clone *clones;
};

/* ---- loading ------------------------------------------------------------ */

mapopt_status mapopt_starpu_compile(mapopt_ctx *ctx, const char *file,
                                    const char *text, size_t len,
                                    const mapopt_starpu_machine *m,
                                    const mapopt_starpu_options *opts,
                                    mapopt_diags *diags, mapopt_starpu **out) {
  if (!ctx || !text || !m || !out)
    return MAPOPT_EINVAL;
  mapopt_machine_shape shape;
  mapopt_status st = mapopt_starpu_machine_shape(m, &shape);
  if (st != MAPOPT_OK)
    return st;
  mapopt_starpu_options o = {0};
  if (opts)
    o = *opts;
  if (!file)
    file = "<input>";
  mapopt_starpu *s = mapopt__calloc(ctx, 1, sizeof *s);
  if (!s)
    return MAPOPT_ENOMEM;
  s->ctx = ctx;
  s->m = *m;
  s->opts = o;
  s->opts.tasks = NULL; /* only needed while compiling */
  s->opts.ntasks = 0;
  s->file_len = strlen(file);
  s->file = mapopt__strndup(ctx, file, s->file_len);
  s->rr = mapopt__calloc(ctx, (size_t)m->ranks * 2, sizeof *s->rr);
  pthread_mutex_init(&s->lock, NULL);
  if (!s->file || !s->rr) {
    mapopt_starpu_free(s);
    return MAPOPT_ENOMEM;
  }
  mapopt_dsl_options dopts = {0};
  dopts.file = file;
  dopts.shape = &shape;
  dopts.tasks = o.tasks;
  dopts.ntasks = o.ntasks;
  dopts.print = o.print;
  dopts.print_ud = o.print_ud;
  /* Here mapopt is the runtime that reads the mapper: a region argument matches
   * by its names and by its position, as docs/dsl.md, "Rules shared by all
   * statements" says (the one-way rule is the DSL mapper of Legion's,
   * docs/legion.md). */
  dopts.region_keys = MAPOPT_KEYS_BOTH;
  st = mapopt_dsl_compile(ctx, text, len, &dopts, diags, &s->prog);
  if (st != MAPOPT_OK) {
    mapopt_starpu_free(s);
    return st;
  }
  *out = s;
  return MAPOPT_OK;
}

mapopt_status mapopt_starpu_load(mapopt_ctx *ctx, const char *path,
                                 const mapopt_starpu_machine *m,
                                 const mapopt_starpu_options *opts,
                                 mapopt_diags *diags, mapopt_starpu **out) {
  if (!ctx || !path)
    return MAPOPT_EINVAL;
  char *text;
  size_t len;
  mapopt_status st = mapopt_file_read(ctx, path, diags, &text, &len);
  if (st != MAPOPT_OK)
    return st;
  st = mapopt_starpu_compile(ctx, path, text, len, m, opts, diags, out);
  mapopt_text_free(text);
  return st;
}

void mapopt_starpu_free(mapopt_starpu *s) {
  if (!s)
    return;
  mapopt_ctx *ctx = s->ctx;
  if (s->prog)
    mapopt_dsl_free(s->prog);
  pthread_mutex_destroy(&s->lock);
  for (clone *c = s->clones, *next; c; c = next) {
    next = c->next;
    mapopt__free(ctx, c, sizeof *c);
  }
  if (s->rr)
    mapopt__free(ctx, s->rr, (size_t)s->m.ranks * 2 * sizeof *s->rr);
  if (s->file)
    mapopt__free(ctx, s->file, s->file_len + 1);
  mapopt__free(ctx, s, sizeof *s);
}

const mapopt_program *mapopt_starpu_program(const mapopt_starpu *s) {
  return s->prog;
}

unsigned mapopt_starpu_codelet_variants(const struct starpu_codelet *cl) {
  unsigned v = 0;
  if (cl->cpu_funcs[0])
    v |= 1u << MAPOPT_PROC_CPU;
  if (cl->cuda_funcs[0])
    v |= 1u << MAPOPT_PROC_GPU;
  return v;
}

/* ---- placement ----------------------------------------------------------- */

/* A mapping error with no source position: "FILE: mapping error: MSG",
 * its message formatted from fmt (a catalogue template where there is one,
 * so the wording is the simulator's). */
static mapopt_status map_error(const mapopt_starpu *s, mapopt_diags *diags,
                               const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static mapopt_status map_error(const mapopt_starpu *s, mapopt_diags *diags,
                               const char *code, const char *fmt, ...) {
  if (!diags)
    return MAPOPT_EMAP;
  va_list ap;
  va_start(ap, fmt);
  mapopt_status st = mapopt_diags_addv(diags, MAPOPT_SEV_MAPPING_ERROR, code,
                                       s->file, 0, 0, fmt, ap);
  va_end(ap);
  return st == MAPOPT_OK ? MAPOPT_EMAP : MAPOPT_ENOMEM;
}

static int procs_of(const mapopt_starpu_machine *m, mapopt_proc_kind k) {
  return k == MAPOPT_PROC_CPU ? m->ncpus : k == MAPOPT_PROC_GPU ? m->ngpus : 0;
}

static int worker_of(const mapopt_starpu_machine *m, mapopt_proc_kind k,
                     int proc) {
  return k == MAPOPT_PROC_GPU ? m->gpu_worker[proc] : m->cpu_worker[proc];
}

/* The kind from the Task list; R26 goes to diags as the DSL words it. */
static mapopt_status select_kind(const mapopt_starpu *s, const char *task,
                                 unsigned variants, mapopt_diags *diags,
                                 mapopt_proc_kind *out) {
  return mapopt_policy_select_kind(s->prog, task, variants,
                                   s->opts.lenient_kinds, out, diags);
}

/* Fills out for processor proc of kind on rank, after the bound check that
 * the simulator makes on every answer (the DSL's own indexing checks make
 * it unreachable from a mapping function). */
static mapopt_status set_place(const mapopt_starpu *s, mapopt_proc_kind kind,
                               int64_t rank, int64_t proc, mapopt_diags *diags,
                               mapopt_starpu_place *out) {
  int procs = procs_of(&s->m, kind);
  if (rank < 0 || rank >= s->m.ranks)
    return map_error(s, diags, "R10", MAPOPT_DSL_TEMPLATE(R10_NODE), rank,
                     (int64_t)s->m.ranks);
  if (proc < 0 || proc >= procs)
    return map_error(s, diags, "R11", MAPOPT_DSL_TEMPLATE(R11_PROCESSOR), proc,
                     (int64_t)procs);
  memset(out, 0, sizeof *out);
  out->kind = kind;
  out->rank = (int)rank;
  out->proc = (int)proc;
  out->worker = worker_of(&s->m, kind, (int)proc);
  out->workers[out->worker / 32] |= 1u << (out->worker % 32);
  return MAPOPT_OK;
}

mapopt_status mapopt_starpu_place_index(mapopt_starpu *s, const char *task,
                                        unsigned variants, int dims,
                                        const int64_t *point,
                                        const int64_t *extents,
                                        mapopt_diags *diags,
                                        mapopt_starpu_place *out) {
  if (!s || !task || !point || !extents || !out || dims < 1 || dims > 3)
    return MAPOPT_EINVAL;
  for (int d = 0; d < dims; d++)
    if (point[d] < 0 || point[d] >= extents[d])
      return MAPOPT_EINVAL;
  mapopt_proc_kind kind;
  mapopt_status st = select_kind(s, task, variants, diags, &kind);
  if (st != MAPOPT_OK)
    return st;
  mapopt_map_answer ans;
  st = mapopt_policy_index_map(s->prog, task, dims, point, extents, kind, &ans,
                               diags);
  if (st != MAPOPT_OK)
    return st;
  int64_t rank, proc;
  if (ans.kind == MAPOPT_MAP_UNSPECIFIED)
    mapopt_policy_default_index_place(dims, point, extents, s->m.ranks,
                                      procs_of(&s->m, kind), &rank, &proc);
  else {
    rank = ans.points[0].node;
    proc = ans.points[0].proc;
  }
  return set_place(s, kind, rank, proc, diags, out);
}

/* R18: every member of a SingleTaskMap answer must be on the parent's
 * rank. */
static mapopt_status check_rank(const mapopt_starpu *s, const char *task,
                                const mapopt_map_answer *ans,
                                const mapopt_proc_point *set, size_t n,
                                int64_t rank, mapopt_diags *diags) {
  for (size_t i = 0; i < n; i++)
    if (set[i].node != rank) {
      mapopt_status st =
          map_error(s, diags, "R18", MAPOPT_DSL_TEMPLATE(R18_NODE));
      if (diags && st == MAPOPT_EMAP &&
          mapopt_diags_add(diags, MAPOPT_SEV_NOTE, "N03", s->file, 0, 0,
                           MAPOPT_DSL_TEMPLATE(N03_MAPPING), task,
                           ans->function ? ans->function : "?") != MAPOPT_OK)
        st = MAPOPT_ENOMEM;
      return st;
    }
  return MAPOPT_OK;
}

mapopt_status mapopt_starpu_place_single(mapopt_starpu *s, const char *task,
                                         unsigned variants,
                                         const mapopt_task_ref *parent,
                                         mapopt_diags *diags,
                                         mapopt_starpu_place *out) {
  if (!s || !task || !out)
    return MAPOPT_EINVAL;
  mapopt_proc_kind kind;
  mapopt_status st = select_kind(s, task, variants, diags, &kind);
  if (st != MAPOPT_OK)
    return st;
  int64_t rank = parent ? parent->proc.node : 0;
  if (rank < 0 || rank >= s->m.ranks)
    return MAPOPT_EINVAL;
  mapopt_task_ref self = {task, false, 0, NULL, NULL, {kind, rank, 0}, parent};
  mapopt_map_answer ans;
  mapopt_proc_point set[256];
  st = mapopt_policy_single_map(s->prog, &self, kind, &ans, set,
                                sizeof set / sizeof *set, diags);
  if (st != MAPOPT_OK)
    return st;
  if (ans.kind == MAPOPT_MAP_UNSPECIFIED) {
    int64_t proc = 0;
    if (parent && procs_of(&s->m, kind) > 0) {
      pthread_mutex_lock(&s->lock);
      int64_t *rr = &s->rr[rank * 2 + (kind == MAPOPT_PROC_GPU)];
      proc = (*rr)++ % procs_of(&s->m, kind);
      pthread_mutex_unlock(&s->lock);
    }
    return set_place(s, kind, rank, proc, diags, out);
  }
  if (ans.kind == MAPOPT_MAP_POINT)
    set[0] = ans.points[0];
  size_t n = ans.kind == MAPOPT_MAP_POINT ? 1 : ans.npoints;
  if (n > sizeof set / sizeof *set)
    n = sizeof set / sizeof *set;
  st = check_rank(s, task, &ans, set, n, rank, diags);
  if (st == MAPOPT_OK)
    st = set_place(s, kind, rank, set[0].proc, diags, out);
  /* The other members of a point set join the allowed workers. */
  for (size_t i = 1; st == MAPOPT_OK && i < n; i++)
    if (set[i].proc >= 0 && set[i].proc < procs_of(&s->m, kind)) {
      int w = worker_of(&s->m, kind, (int)set[i].proc);
      out->workers[w / 32] |= 1u << (w % 32);
    }
  return st;
}

/* ---- memory and layout --------------------------------------------------- */

/* The memory node of kind mem for the processor of where (the kind is
 * available to it: the DSL only selects such kinds). */
static void node_of(const mapopt_starpu_machine *m,
                    const mapopt_starpu_place *where, mapopt_mem_kind mem,
                    mapopt_starpu_memory *out) {
  bool gpu = where->kind == MAPOPT_PROC_GPU;
  int own = gpu ? m->gpu_node[where->proc] : m->cpu_node[where->proc];
  out->kind = mem;
  switch (mem) {
  case MAPOPT_MEM_FBMEM:
  case MAPOPT_MEM_SOCKMEM:
    out->node = own;
    break;
  default: /* SYSMEM, ZCMEM: main RAM */
    out->node = STARPU_MAIN_RAM;
    break;
  }
  if (gpu && mem == MAPOPT_MEM_ZCMEM)
    out->codelet_node = STARPU_SPECIFIC_NODE_CPU;
  else
    out->codelet_node =
        out->node == own ? STARPU_SPECIFIC_NODE_LOCAL : out->node;
}

mapopt_status mapopt_starpu_memory_of(const mapopt_starpu *s, const char *task,
                                      const mapopt_region_keys *keys,
                                      const mapopt_starpu_place *where,
                                      mapopt_diags *diags,
                                      mapopt_starpu_memory *out) {
  if (!s || !task || !keys || !where || !out ||
      where->proc >= procs_of(&s->m, where->kind) || where->proc < 0)
    return MAPOPT_EINVAL;
  mapopt_mem_kind mem =
      mapopt_policy_select_memory(s->prog, task, keys, where->kind);
  if (mem == MAPOPT_MEM_VIRTUAL)
    return map_error(s, diags, "",
                     "Invalid mapper output: virtual mapping requested for "
                     "region requirement %zu of leaf task %s",
                     keys->position, task);
  node_of(&s->m, where, mem, out);
  return MAPOPT_OK;
}

void mapopt_starpu_layout_of(const mapopt_starpu *s, const char *task,
                             const mapopt_region_keys *keys,
                             const mapopt_starpu_place *where,
                             mapopt_mem_kind mem, mapopt_layout *out) {
  mapopt_policy_resolve_layout(s->prog, task, keys, mem, where->kind,
                               s->opts.c_order_default, out);
}

/* ---- codelets with specific memory nodes --------------------------------- */

mapopt_status mapopt_starpu_codelet(mapopt_starpu *s,
                                    struct starpu_codelet *base, int nbuffers,
                                    const int *nodes,
                                    struct starpu_codelet **out) {
  if (!s || !base || !out || nbuffers < 0 || nbuffers > STARPU_NMAXBUFS ||
      (nbuffers > 0 && !nodes))
    return MAPOPT_EINVAL;
  bool local = true;
  for (int i = 0; i < nbuffers; i++)
    local = local && nodes[i] == STARPU_SPECIFIC_NODE_LOCAL;
  if (local) {
    *out = base;
    return MAPOPT_OK;
  }
  mapopt_status st = MAPOPT_OK;
  pthread_mutex_lock(&s->lock);
  clone *c = s->clones;
  for (; c; c = c->next)
    if (c->base == base && c->nbuffers == nbuffers &&
        !memcmp(c->nodes, nodes, (size_t)nbuffers * sizeof *nodes))
      break;
  if (!c) {
    c = mapopt__calloc(s->ctx, 1, sizeof *c);
    if (c) {
      c->base = base;
      c->nbuffers = nbuffers;
      memcpy(c->nodes, nodes, (size_t)nbuffers * sizeof *nodes);
      c->cl = *base;
      c->cl.specific_nodes = 1;
      c->cl.dyn_nodes = NULL;
      for (int i = 0; i < STARPU_NMAXBUFS; i++)
        c->cl.nodes[i] = i < nbuffers ? nodes[i] : STARPU_SPECIFIC_NODE_LOCAL;
      c->next = s->clones;
      s->clones = c;
    } else
      st = MAPOPT_ENOMEM;
  }
  pthread_mutex_unlock(&s->lock);
  if (st == MAPOPT_OK)
    *out = &c->cl;
  return st;
}
