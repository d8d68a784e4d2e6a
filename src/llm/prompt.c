/*
 * The prompt of the `llm` optimizer. The system message is fixed text --
 * the DSL reference (src/llm/prompt/dsl_reference.md, compiled in) and the
 * reply rules -- so servers with prefix caching reuse it from call to
 * call. The user message puts what is fixed for a run first (application,
 * machine, objective) and what changes last (best mapper, recent
 * attempts, request), for the same reason.
 *
 * Everything shown is computed from the inputs: the application from the
 * instantiated run (tasks in the order they first run, their variants,
 * launches and region arguments with names, privileges, fields and sizes),
 * the machine from its model. Only integers and fixed formats are
 * printed, so the same inputs give the same bytes.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm.h"
#include "mapopt/sim.h"

#define MAX_MAPPER_SHOWN ((size_t)16 << 10)
#define MAX_FEEDBACK_SHOWN ((size_t)4 << 10)

const char *mapopt_llm_dsl_reference(void) {
  const char *t = mapopt__embedded_find(mapopt__llm_texts, "dsl_reference");
  return t ? t : "";
}

/* ---- number formats ------------------------------------------------------ */

/* v / 10^digits with the fraction's trailing zeros dropped: 38400 with 3
 * digits is "38.4", 1020000 with 6 is "1.02". v >= 0. */
static void put_fixed(mapopt__strbuf *sb, int64_t v, int digits) {
  int64_t scale = 1;
  for (int i = 0; i < digits; i++)
    scale *= 10;
  int64_t frac = v % scale;
  mapopt__sb_printf(sb, "%" PRId64, v / scale);
  if (!frac)
    return;
  char buf[24];
  int n = digits;
  while (frac % 10 == 0)
    frac /= 10, n--;
  snprintf(buf, sizeof buf, ".%0*" PRId64, n, frac);
  mapopt__sb_puts(sb, buf);
}

/* Bytes in the largest binary unit that keeps the number >= 1. */
static void put_bytes(mapopt__strbuf *sb, int64_t b) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (b < 1024) {
    mapopt__sb_printf(sb, "%" PRId64 " B", b);
    return;
  }
  double v = (double)b;
  int u = -1;
  while (v >= 1024 && u < 3)
    v /= 1024, u++;
  mapopt__sb_printf(sb, "%.1f %s", v, units[u]);
}

static void put_range_bytes(mapopt__strbuf *sb, int64_t lo, int64_t hi) {
  put_bytes(sb, lo);
  if (hi != lo) {
    mapopt__sb_puts(sb, " to ");
    put_bytes(sb, hi);
  }
}

static void put_tuple(mapopt__strbuf *sb, int dims, const int64_t *v) {
  mapopt__sb_putc(sb, '(');
  for (int d = 0; d < dims; d++)
    mapopt__sb_printf(sb, d ? ", %" PRId64 : "%" PRId64, v[d]);
  mapopt__sb_puts(sb, dims == 1 ? ",)" : ")");
}

/* ---- the application ----------------------------------------------------- */

/* Bytes per element of the fields in mask of region r. */
static int64_t field_bytes(const mapopt_app_region *r, uint64_t mask) {
  int64_t sum = 0;
  for (int f = 0; f < r->nfields; f++)
    if (mask >> f & 1)
      sum += mapopt_app_region_field_bytes(r, f);
  return sum;
}

/* The length of name's stem: all of it but a trailing number. */
static size_t stem_len(const char *name) {
  size_t n = strlen(name);
  while (n > 0 && name[n - 1] >= '0' && name[n - 1] <= '9')
    n--;
  return n;
}

/* Whether field g continues a numbered run after field f: the same stem,
 * the next number, the same bytes when they are shown. */
static bool continues(const mapopt_app_region *r, int f, int g, bool bytes) {
  const char *a = mapopt_app_region_field_name(r, f),
             *b = mapopt_app_region_field_name(r, g);
  size_t sa = stem_len(a), sb = stem_len(b);
  if (sa != sb || sa == strlen(a) || sb == strlen(b) || strncmp(a, b, sa) ||
      (bytes && mapopt_app_region_field_bytes(r, f) !=
                    mapopt_app_region_field_bytes(r, g)))
    return false;
  return strtoll(b + sb, NULL, 10) == strtoll(a + sa, NULL, 10) + 1;
}

/* The fields of mask, "in_ptr, current_0 to current_9" (with bytes:
 * "in_ptr 16, current_0 to current_9 4 each"): a run of three or more
 * numbered fields in a row is written as its ends. */
static void put_fields(mapopt__strbuf *sb, const mapopt_app_region *r,
                       uint64_t mask, bool bytes) {
  bool sep = false;
  for (int f = 0; f < r->nfields; f++) {
    if (!(mask >> f & 1))
      continue;
    int last = f;
    while (last + 1 < r->nfields && (mask >> (last + 1) & 1) &&
           continues(r, last, last + 1, bytes))
      last++;
    mapopt__sb_printf(sb, "%s%s", sep ? ", " : "",
                      mapopt_app_region_field_name(r, f));
    sep = true;
    if (last - f >= 2) {
      mapopt__sb_printf(sb, " to %s", mapopt_app_region_field_name(r, last));
      if (bytes)
        mapopt__sb_printf(sb, " %" PRId64 " each",
                          mapopt_app_region_field_bytes(r, f));
      f = last;
    } else if (bytes) {
      mapopt__sb_printf(sb, " %" PRId64, mapopt_app_region_field_bytes(r, f));
    }
  }
}

static void put_regions(mapopt__strbuf *sb, const mapopt_app_run *run) {
  mapopt__sb_puts(sb, "Regions (fields with their bytes per element):\n");
  for (int i = 0; i < run->nregions; i++) {
    const mapopt_app_region *r = mapopt_app_run_region(run, i);
    int64_t elements = 0;
    for (int64_t a = r->first_atom; a < r->first_atom + r->natoms; a++)
      elements += mapopt_app_run_atom_elements(run, a);
    uint64_t all = r->nfields >= 64 ? ~0ull : (1ull << r->nfields) - 1;
    int64_t per = field_bytes(r, all);
    mapopt__sb_printf(sb,
                      "- %s: %" PRId64 " elements x %" PRId64 " B = ", r->name,
                      elements, per);
    put_bytes(sb, elements * per);
    mapopt__sb_puts(sb, "; fields ");
    put_fields(sb, r, all, true);
    mapopt__sb_putc(sb, '\n');
  }
}

static const char *priv_name(mapopt_priv p) {
  switch (p) {
  case MAPOPT_PRIV_RO:
    return "read-only";
  case MAPOPT_PRIV_RW:
    return "read-write";
  case MAPOPT_PRIV_WD:
    return "write-only (discards old contents)";
  default:
    return "reduction";
  }
}

static const char *redop_name(mapopt_redop r) {
  static const char *const names[] = {"sum", "min", "max", "product"};
  return (unsigned)r < 4 ? names[r] : "?";
}

/* The task that issued op: its index in run->tasks, or -1 for main. */
static int issuer(const mapopt_app_run *run, const mapopt_app_op *op) {
  return op->parent < 0 ? -1 : mapopt_app_run_op(run, op->parent)->task;
}

/* One way a task is launched: index or single, extents, issuing task. */
typedef struct launch_shape {
  int task;
  bool is_index;
  int dims;
  int64_t extents[MAPOPT_APP_MAX_DIMS];
  int issuer;
  int64_t launches;
  int64_t last_launch; /* the points of one launch count once */
} launch_shape;

/*
 * One pass over the ops: the tasks in the order they first run (order,
 * *ntasks entries) and every launch shape with its number of launches
 * (shapes), in order of first appearance.
 */
static mapopt_status collect(mapopt_ctx *ctx, const mapopt_app_run *run,
                             int *order, int *ntasks, mapopt__vec *shapes) {
  *ntasks = 0;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK)
      continue;
    launch_shape *sh = NULL;
    bool seen_task = false;
    for (size_t j = 0; j < shapes->len && !sh; j++) {
      launch_shape *c = &MAPOPT__VEC_AT(shapes, launch_shape, j);
      if (c->task != o->task)
        continue;
      seen_task = true;
      if (c->is_index == o->is_index && c->dims == o->dims &&
          !memcmp(c->extents, o->extents, sizeof o->extents) &&
          c->issuer == issuer(run, o))
        sh = c;
    }
    if (!seen_task)
      order[(*ntasks)++] = o->task;
    if (!sh) {
      if (!(sh = mapopt__vec_push(shapes, ctx)))
        return MAPOPT_ENOMEM;
      *sh = (launch_shape){o->task,        o->is_index, o->dims, {0},
                           issuer(run, o), 0,           -1};
      memcpy(sh->extents, o->extents, sizeof o->extents);
    }
    if (sh->last_launch != o->launch) {
      sh->launches++;
      sh->last_launch = o->launch;
    }
  }
  return MAPOPT_OK;
}

static void put_launches(mapopt__strbuf *sb, const mapopt_app_run *run,
                         const mapopt__vec *shapes, int t) {
  mapopt__sb_puts(sb, "Launches:");
  bool first = true;
  for (size_t j = 0; j < shapes->len; j++) {
    const launch_shape *sh = &MAPOPT__VEC_AT(shapes, launch_shape, j);
    if (sh->task != t)
      continue;
    mapopt__sb_puts(sb, first ? " " : "; ");
    first = false;
    const char *plural = sh->launches == 1 ? "" : "es";
    if (sh->is_index) {
      mapopt__sb_printf(sb, "%" PRId64 " index launch%s over ", sh->launches,
                        plural);
      put_tuple(sb, sh->dims, sh->extents);
    } else {
      mapopt__sb_printf(sb, "%" PRId64 " single launch%s", sh->launches,
                        plural);
    }
    mapopt__sb_printf(sb, " from %s",
                      sh->issuer < 0 ? "main"
                                     : mapopt_app_task_name(run, sh->issuer));
  }
  mapopt__sb_puts(sb, ".\n");
}

/* The arguments of task t, position by position, over all its ops. */
static void put_arguments(mapopt__strbuf *sb, const mapopt_app_run *run,
                          int t) {
  size_t nargs = 0;
  for (int64_t i = 0; i < run->nops; i++)
    if (mapopt_app_run_op(run, i)->kind == MAPOPT_OP_TASK &&
        mapopt_app_run_op(run, i)->task == t &&
        mapopt_app_run_op(run, i)->nreqs > nargs)
      nargs = mapopt_app_run_op(run, i)->nreqs;
  if (nargs == 0) {
    mapopt__sb_puts(sb, "Arguments: none.\n");
    return;
  }
  mapopt__sb_puts(sb, "Arguments (position: names; privilege; fields; "
                      "instance size per point):\n");
  for (size_t a = 0; a < nargs; a++) {
    const mapopt_app_req *first = NULL;
    unsigned privs = 0, redops = 0;
    uint64_t fields = 0;
    int64_t elo = INT64_MAX, ehi = 0, blo = INT64_MAX, bhi = 0;
    for (int64_t i = 0; i < run->nops; i++) {
      const mapopt_app_op *o = mapopt_app_run_op(run, i);
      if (o->kind != MAPOPT_OP_TASK || o->task != t || o->nreqs <= a)
        continue;
      const mapopt_app_req *r = mapopt_app_op_req(o, a);
      if (!first)
        first = r;
      if (r->piece->region != first->piece->region)
        continue; /* not in the models; kept out of the sums */
      privs |= 1u << r->priv;
      if (r->priv == MAPOPT_PRIV_REDUCE)
        redops |= 1u << r->redop;
      fields |= r->fields;
      const mapopt_app_region *reg =
          mapopt_app_run_region(run, r->piece->region);
      int64_t e = r->piece->elements, b = e * field_bytes(reg, r->fields);
      elo = e < elo ? e : elo;
      ehi = e > ehi ? e : ehi;
      blo = b < blo ? b : blo;
      bhi = b > bhi ? b : bhi;
    }
    const mapopt_app_region *reg =
        mapopt_app_run_region(run, first->piece->region);
    mapopt__sb_printf(sb, "- %zu: ", a);
    for (size_t n = 0; n < first->nnames; n++) {
      mapopt__sb_printf(sb, n ? ", %s" : "%s", mapopt_app_req_name(first, n));
      if (n == 0)
        mapopt__llm_put_piece(sb, run, t, a, mapopt_app_req_name(first, 0),
                              true);
    }
    mapopt__sb_puts(sb, "; ");
    bool sep = false;
    for (int p = 0; p < 4; p++) {
      if (!(privs >> p & 1))
        continue;
      mapopt__sb_printf(sb, "%s%s", sep ? " or " : "", priv_name(p));
      sep = true;
      if (p == MAPOPT_PRIV_REDUCE)
        for (int r = 0; r < 4; r++)
          if (redops >> r & 1)
            mapopt__sb_printf(sb, " (%s)", redop_name(r));
    }
    int nf = 0;
    for (int f = 0; f < reg->nfields; f++)
      nf += (int)(fields >> f & 1);
    if (nf == reg->nfields && nf > 1) {
      mapopt__sb_printf(sb, "; all %d fields of %s", nf, reg->name);
    } else {
      mapopt__sb_puts(sb, "; ");
      put_fields(sb, reg, fields, false);
      mapopt__sb_printf(sb, " of %s", reg->name);
    }
    mapopt__sb_printf(sb, "; %" PRId64, elo);
    if (ehi != elo)
      mapopt__sb_printf(sb, " to %" PRId64, ehi);
    mapopt__sb_puts(sb, ehi == 1 ? " element, " : " elements, ");
    put_range_bytes(sb, blo, bhi);
    mapopt__llm_put_piece(sb, run, t, a, mapopt_app_req_name(first, 0), false);
    mapopt__sb_putc(sb, '\n');
  }
}

/* A variant's layout rules: "requires C_order on arguments 0, 1, 2". */
static void put_rules(mapopt__strbuf *sb, const mapopt_app_layout_rule *rules,
                      size_t n, bool required) {
  for (size_t i = 0; i < n; i++) {
    const mapopt_app_layout_rule *r = &rules[i];
    mapopt__sb_puts(sb, required ? "; requires" : "; prefers");
    if (r->soa != MAPOPT_LAYOUT_UNSET)
      mapopt__sb_puts(sb, r->soa == MAPOPT_LAYOUT_YES ? " SOA" : " AOS");
    if (r->c_order != MAPOPT_LAYOUT_UNSET)
      mapopt__sb_puts(sb, r->c_order == MAPOPT_LAYOUT_YES ? " C_order"
                                                          : " F_order");
    mapopt__sb_puts(sb, " on argument");
    int count = 0;
    for (int a = 0; a < 64; a++)
      count += (int)(r->args >> a & 1);
    mapopt__sb_puts(sb, count > 1 ? "s" : "");
    bool sep = false;
    for (int a = 0; a < 64; a++)
      if (r->args >> a & 1) {
        mapopt__sb_printf(sb, "%s %d", sep ? "," : "", a);
        sep = true;
      }
    if (required) {
      mapopt__sb_puts(sb, " (the run fails otherwise)");
    } else {
      mapopt__sb_puts(sb, " (else its time is multiplied by ");
      put_fixed(sb, r->penalty_ppm, 6);
      mapopt__sb_putc(sb, ')');
    }
  }
}

static void put_task(mapopt__strbuf *sb, const mapopt_app_run *run,
                     const mapopt__vec *shapes, int t) {
  const mapopt_app_task *task = mapopt_app_run_task(run, t);
  mapopt__sb_printf(sb, "\n## Task %s\nVariants:", task->name);
  for (int v = 0; v < task->nvariants; v++) {
    const mapopt_app_variant *var = mapopt_app_task_variant(task, v);
    mapopt__sb_printf(sb, "%s %s", v ? "," : "",
                      mapopt_shape_proc_name(var->kind));
    if (var->inner) {
      mapopt__sb_puts(sb, " (inner: only launches other tasks)");
      continue;
    }
    mapopt__sb_puts(sb, var->f32 ? " (f32" : " (f64");
    put_rules(sb, var->requires, var->nrequires, true);
    put_rules(sb, var->prefers, var->nprefers, false);
    mapopt__sb_putc(sb, ')');
  }
  mapopt__sb_puts(sb, ".\n");
  put_launches(sb, run, shapes, t);
  if (task->inner)
    mapopt__llm_put_body(sb, run, t);
  put_arguments(sb, run, t);
}

static const char pieces_note[] =
    "\nP[2*i, j + 1] after an argument's partition P (or \"piece "
    "P[...]\") is the piece (by colour) that the point (i, j, k) of an "
    "index launch uses; the name stays P. For a single launch, n counts from "
    "0 the launching task's launches of it, and i, j, k are that task's "
    "point.\n";

static mapopt_status put_app(mapopt__strbuf *sb, const mapopt_app_run *run,
                             bool anonymous) {
  if (anonymous)
    mapopt__sb_puts(sb, "# Application\n");
  else
    mapopt__sb_printf(sb, "# Application: %s\n", run->name);
  if (run->size)
    mapopt__sb_printf(sb, "Size: %s.", run->size);
  if (run->nparams) {
    mapopt__sb_puts(sb, run->size ? " Parameters:" : "Parameters:");
    const char *name;
    int64_t value;
    for (size_t i = 0; mapopt_app_run_param(run, i, &name, &value); i++)
      mapopt__sb_printf(sb, " %s=%" PRId64, name, value);
    mapopt__sb_putc(sb, '.');
  }
  mapopt__sb_printf(sb,
                    "%sThe top-level task is main; the tasks below are "
                    "launched by it or by each other. Default layout "
                    "order: %s.\n\n",
                    run->size || run->nparams ? "\n" : "",
                    run->default_c_order ? "C_order" : "F_order");
  put_regions(sb, run);
  mapopt__sb_puts(sb, pieces_note);
  mapopt__sb_puts(sb, "\nTasks, in the order they first run:\n");
  size_t osize = (size_t)(run->ntasks > 0 ? run->ntasks : 1) * sizeof(int);
  int *order = mapopt__malloc(sb->ctx, osize);
  if (!order)
    return MAPOPT_ENOMEM;
  mapopt__vec shapes;
  mapopt__vec_init(&shapes, sizeof(launch_shape));
  int n = 0;
  mapopt_status st = collect(sb->ctx, run, order, &n, &shapes);
  for (int i = 0; st == MAPOPT_OK && i < n; i++)
    put_task(sb, run, &shapes, order[i]);
  mapopt__vec_destroy(&shapes, sb->ctx);
  mapopt__free(sb->ctx, order, osize);
  return st;
}

/* ---- the machine --------------------------------------------------------- */

static const char *mem_count(mapopt_mem_kind k, int64_t ranks) {
  switch (k) {
  case MAPOPT_MEM_FBMEM:
    return "one per GPU";
  case MAPOPT_MEM_SOCKMEM:
    return "one per socket";
  default:
    return ranks > 1 ? "one per address space" : "one per node";
  }
}

/*
 * Which processors and memories sit on which socket, in the coordinates
 * of Machine(K) for the address spaces of node 0 (the nodes are alike):
 * GPU q of rank r is the node's GPU r * (GPUs per rank) + q, on the
 * socket the machine lists for it; CPU and OMP q of any rank are on
 * socket q mod sockets (docs/machines.md).
 */
static void put_sockets(mapopt__strbuf *sb, const mapopt_machine *m,
                        const mapopt_machine_shape *shape, int64_t ranks) {
  if (m->sockets < 2)
    return;
  int64_t sockets = m->sockets;
  mapopt__sb_puts(sb, "Sockets (Machine(K)[a, q] is processor q of address "
                      "space a; shown for node 0");
  if (ranks > 1)
    mapopt__sb_printf(sb, ", address spaces 0 to %" PRId64, ranks - 1);
  mapopt__sb_puts(sb, "; every node is alike):\n");
  static const mapopt_proc_kind kinds[] = {MAPOPT_PROC_GPU, MAPOPT_PROC_OMP,
                                           MAPOPT_PROC_CPU};
  for (int64_t so = 0; so < sockets; so++) {
    mapopt__sb_printf(sb, "- socket %" PRId64 ":", so);
    bool sep = false;
    for (size_t i = 0; i < 3; i++) {
      mapopt_proc_kind k = kinds[i];
      for (int64_t r = 0; r < ranks; r++)
        for (int64_t q = 0; q < shape->procs[k]; q++) {
          const int64_t *sock = m->procs[k].socket;
          int64_t at = k == MAPOPT_PROC_GPU && sock
                           ? sock[r * shape->procs[k] + q] % sockets
                           : q % sockets;
          if (at != so)
            continue;
          mapopt__sb_printf(sb, "%s %s[%" PRId64 ", %" PRId64 "]",
                            sep ? "," : "", mapopt_shape_proc_name(k), r, q);
          sep = true;
        }
    }
    if (m->mems[MAPOPT_MEM_SOCKMEM].present)
      mapopt__sb_printf(sb, "%s its SOCKMEM", sep ? "," : "");
    mapopt__sb_putc(sb, '\n');
  }
  static const mapopt_mem_kind shared[] = {MAPOPT_MEM_SYSMEM, MAPOPT_MEM_ZCMEM,
                                           MAPOPT_MEM_RDMEM};
  mapopt__sb_puts(sb, "Each GPU's FBMEM is on its socket; shared by the "
                      "sockets:");
  bool sep = false;
  for (size_t i = 0; i < 3; i++)
    if (m->mems[shared[i]].present) {
      mapopt__sb_printf(sb, "%s %s", sep ? "," : "",
                        mapopt_shape_mem_name(shared[i]));
      sep = true;
    }
  mapopt__sb_puts(sb, sep ? ".\n" : " nothing.\n");
}

static void put_machine(mapopt__strbuf *sb, const mapopt_machine *m,
                        const mapopt_app_run *run) {
  /* The shape the run's mappers see: its rank split applied. */
  mapopt_machine_shape shape;
  mapopt_sim_shape(m, run, &shape);
  int64_t ranks = m->nodes > 0 ? shape.nodes / m->nodes : 1;
  mapopt__sb_printf(sb,
                    "\n# Machine: %s\n%" PRId64 " node%s, %" PRId64
                    " address space%s per node (the first dimension of "
                    "Machine(K) counts address spaces: %" PRId64 "), %" PRId64
                    " socket%s per node.\n",
                    m->name ? m->name : "machine", m->nodes,
                    m->nodes == 1 ? "" : "s", ranks, ranks == 1 ? "" : "s",
                    shape.nodes, m->sockets, m->sockets == 1 ? "" : "s");
  mapopt__sb_puts(sb, "Processors per address space:\n");
  static const mapopt_proc_kind order[] = {MAPOPT_PROC_GPU, MAPOPT_PROC_OMP,
                                           MAPOPT_PROC_CPU};
  for (size_t i = 0; i < 3; i++) {
    mapopt_proc_kind k = order[i];
    const mapopt_machine_procs *p = &m->procs[k];
    if (shape.procs[k] == 0)
      continue;
    const char *kn = mapopt_shape_proc_name(k);
    mapopt__sb_printf(sb,
                      "- %s: %" PRId64 " (Machine(%s) has size (%" PRId64
                      ", %" PRId64 ")); ",
                      kn, shape.procs[k], kn, shape.nodes, shape.procs[k]);
    if (p->threads > 1)
      mapopt__sb_printf(sb, "%" PRId64 " cores each; ", p->threads);
    put_fixed(sb, p->mflops_f64, 3);
    mapopt__sb_puts(sb, " GFLOP/s f64, ");
    put_fixed(sb, p->mflops_f32, 3);
    mapopt__sb_printf(sb, " GFLOP/s f32 each; task overhead %" PRId64 " us\n",
                      p->overhead_ns / 1000);
  }
  put_sockets(sb, m, &shape, ranks);
  mapopt__sb_puts(sb, "Memories per node:\n");
  static const mapopt_mem_kind mems[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_ZCMEM,
                                         MAPOPT_MEM_SOCKMEM, MAPOPT_MEM_SYSMEM,
                                         MAPOPT_MEM_RDMEM};
  for (size_t i = 0; i < 5; i++) {
    if (!m->mems[mems[i]].present)
      continue;
    mapopt__sb_printf(sb, "- %s: %s, ", mapopt_shape_mem_name(mems[i]),
                      mem_count(mems[i], ranks));
    /* SYSMEM is split between the address spaces of a node. */
    put_bytes(sb, m->mems[mems[i]].capacity /
                      (mems[i] == MAPOPT_MEM_SYSMEM && ranks > 1 ? ranks : 1));
    mapopt__sb_puts(sb, " each\n");
  }
  mapopt__sb_puts(sb, "Bandwidth of a processor reading a memory directly:\n");
  for (size_t i = 0; i < 3; i++) {
    mapopt_proc_kind k = order[i];
    if (shape.procs[k] == 0)
      continue;
    mapopt__sb_printf(sb, "- %s:", mapopt_shape_proc_name(k));
    bool sep = false;
    for (size_t j = 0; j < 5; j++) {
      const mapopt_affinity *a = &m->affinity[k][mems[j]];
      if (!a->present || !m->mems[mems[j]].present)
        continue;
      mapopt__sb_printf(sb, "%s %s ", sep ? "," : "",
                        mapopt_shape_mem_name(mems[j]));
      put_fixed(sb, a->bw_mbps, 3);
      mapopt__sb_puts(sb, " GB/s");
      sep = true;
    }
    mapopt__sb_putc(sb, '\n');
  }
  static const char *const chan[] = {"within one GPU's framebuffer",
                                     "between GPUs of a node",
                                     "between a GPU and host memory",
                                     "between host memories", "between nodes"};
  mapopt__sb_puts(sb, "Copy bandwidth:\n");
  for (int c = 0; c < MAPOPT_CHAN_COUNT; c++) {
    const mapopt_channel_params *p = &m->channels[c];
    if (!p->present)
      continue;
    mapopt__sb_printf(sb, "- %s: ", chan[c]);
    put_fixed(sb, p->bw_mbps, 3);
    mapopt__sb_puts(sb, " GB/s");
    if (c == MAPOPT_CHAN_FB_FB_PEER && p->cross_socket_bw_mbps &&
        p->cross_socket_bw_mbps != p->bw_mbps) {
      mapopt__sb_puts(sb, " on one socket, ");
      put_fixed(sb, p->cross_socket_bw_mbps, 3);
      mapopt__sb_puts(sb, " GB/s across sockets");
    }
    if (c == MAPOPT_CHAN_FB_FB_PEER)
      mapopt__sb_puts(sb, p->peer_link ? " (dedicated peer links)"
                                       : " (over the GPUs' host links)");
    mapopt__sb_putc(sb, '\n');
  }
}

/* ---- mappers and attempts ------------------------------------------------ */

/* Scores as "%.6g"; NaN and infinities spelt out, never printf's
 * platform-dependent forms. */
static void put_score(mapopt__strbuf *sb, double s) {
  if (isnan(s))
    mapopt__sb_puts(sb, "unknown");
  else if (isinf(s))
    mapopt__sb_puts(sb, s > 0 ? "infinite" : "-infinite");
  else
    mapopt__sb_printf(sb, "%.6g", s == 0 ? 0.0 : s);
}

/* Text cut at max bytes (at a line end when there is one near), with a
 * note of what was left out. */
static void put_capped(mapopt__strbuf *sb, const char *text, size_t max) {
  size_t len = strlen(text);
  size_t keep = len;
  if (len > max) {
    keep = max;
    while (keep > max / 2 && text[keep - 1] != '\n')
      keep--;
    if (text[keep - 1] != '\n')
      keep = max;
  }
  mapopt__sb_putn(sb, text, keep);
  if (keep && text[keep - 1] != '\n')
    mapopt__sb_putc(sb, '\n');
  if (keep < len)
    mapopt__sb_printf(sb, "[... %zu more bytes not shown]\n", len - keep);
}

/* A mapper in a fence longer than any run of backquotes inside it, so
 * that nothing in the text can close the block early. */
static void put_mapper(mapopt__strbuf *sb, const char *text) {
  size_t run = 0, longest = 0;
  for (const char *p = text; *p; p++) {
    run = *p == '`' ? run + 1 : 0;
    longest = run > longest ? run : longest;
  }
  size_t ticks = longest >= 3 ? longest + 1 : 3;
  for (size_t i = 0; i < ticks; i++)
    mapopt__sb_putc(sb, '`');
  mapopt__sb_puts(sb, "mapper\n");
  put_capped(sb, text, MAX_MAPPER_SHOWN);
  for (size_t i = 0; i < ticks; i++)
    mapopt__sb_putc(sb, '`');
  mapopt__sb_putc(sb, '\n');
}

static void put_feedback(mapopt__strbuf *sb, const char *fb) {
  if (!fb || !*fb)
    return;
  mapopt__sb_puts(sb, "Feedback:\n");
  put_capped(sb, fb, MAX_FEEDBACK_SHOWN);
}

/* "score 51.25, elapsed 0.0195 s" (the elapsed time when known). */
static void put_result(mapopt__strbuf *sb, double score, double elapsed_s) {
  mapopt__sb_puts(sb, "score ");
  put_score(sb, score);
  if (elapsed_s > 0 && isfinite(elapsed_s))
    mapopt__sb_printf(sb, ", elapsed %.4g s", elapsed_s);
}

/* ---- which attempts are shown -------------------------------------------- */

/* A mapper's statements as a sorted set of line hashes (blank lines and
 * comments left out): what the distance between two mappers counts. */
typedef struct line_set {
  uint64_t *hash;
  size_t n, cap;
} line_set;

static void line_set_free(mapopt_ctx *ctx, line_set *l) {
  if (l->hash)
    mapopt__free(ctx, l->hash, l->cap * sizeof *l->hash);
  *l = (line_set){0};
}

static int by_hash(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static mapopt_status line_set_of(mapopt_ctx *ctx, const char *text,
                                 line_set *out) {
  *out = (line_set){0};
  if (!text)
    return MAPOPT_OK;
  size_t cap = 1;
  for (const char *p = text; *p; p++)
    cap += *p == '\n';
  if (!(out->hash = mapopt__malloc(ctx, cap * sizeof *out->hash)))
    return MAPOPT_ENOMEM;
  out->cap = cap;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    const char *next = e ? e + 1 : p + strlen(p);
    if (!e)
      e = next;
    while (p < e && (*p == ' ' || *p == '\t'))
      p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
      e--;
    if (e > p && *p != '#' && !(e - p >= 2 && p[0] == '/' && p[1] == '/'))
      out->hash[out->n++] = mapopt__hash_bytes(p, (size_t)(e - p));
    p = next;
  }
  qsort(out->hash, out->n, sizeof *out->hash, by_hash);
  size_t u = 0;
  for (size_t i = 0; i < out->n; i++)
    if (!u || out->hash[u - 1] != out->hash[i])
      out->hash[u++] = out->hash[i];
  out->n = u;
  return MAPOPT_OK;
}

/* The statements in one set and not the other. */
static size_t distance(const line_set *a, const line_set *b) {
  size_t i = 0, j = 0, d = 0;
  while (i < a->n || j < b->n) {
    if (j == b->n || (i < a->n && a->hash[i] < b->hash[j]))
      i++, d++;
    else if (i == a->n || b->hash[j] < a->hash[i])
      j++, d++;
    else
      i++, j++;
  }
  return d;
}

/* What the selection knows of one attempt. */
typedef struct entry {
  line_set lines;
  /* The earliest earlier attempt that ran the same way (the same nonzero
   * profile) or is the same mapper, plus 1; 0: none. */
  size_t twin;
  bool like_baseline; /* its profile is the default mapper's */
  bool failed;        /* no mapper, or it scored 0 */
  bool mended;        /* a later attempt ran (a repeat does not count) */
  bool shown;
  size_t nearest; /* statements from the nearest mapper shown */
} entry;

static bool is_failure(const mapopt_llm_attempt *a) {
  return !a->mapper || !(a->score > 0);
}

/* The attempt that is the current best: the earliest whose mapper and
 * score are the best's; n when none is. */
static size_t best_index(const mapopt_llm_prompt_input *in) {
  for (size_t i = 0; in->best_mapper && in->attempts && i < in->nattempts;
       i++) {
    const mapopt_llm_attempt *a = &in->attempts[i];
    if (a->iteration >= 0 && a->mapper && !strcmp(a->mapper, in->best_mapper) &&
        a->score == in->best_score)
      return i;
  }
  return in->nattempts;
}

/* The group of attempt i: its earliest twin, else itself. */
static size_t group_of(const entry *e, size_t i) {
  return e[i].twin ? e[i].twin - 1 : i;
}

/* Whether a failure with attempt i's feedback is shown already. */
static bool same_failure_shown(const mapopt_llm_prompt_input *in,
                               const entry *e, size_t i) {
  const char *fb = in->attempts[i].feedback;
  for (size_t j = 0; j < in->nattempts; j++)
    if (e[j].shown && e[j].failed && fb && in->attempts[j].feedback &&
        !strcmp(fb, in->attempts[j].feedback))
      return true;
  return false;
}

/*
 * Marks the attempts to show (docs/llm.md, "Which attempts are shown"):
 * the latest; the failures no later attempt mended, latest first; then,
 * one per group of attempts that ran the same way, those whose
 * statements differ most from every mapper already shown (the best and
 * the default mapper included), the higher score and then the later
 * attempt breaking ties; then, room left, the mended failures, latest
 * first, one per feedback; at most k in all, the best never among them.
 */
/* Lowers every attempt's distance to the nearest mapper shown by those
 * of lines, a mapper now shown. */
static void now_shown(entry *e, size_t n, const line_set *lines) {
  for (size_t j = 0; j < n; j++) {
    size_t d = distance(&e[j].lines, lines);
    e[j].nearest = d < e[j].nearest ? d : e[j].nearest;
  }
}

static void show(entry *e, bool *covered, size_t n, size_t i) {
  e[i].shown = true;
  covered[group_of(e, i)] = true;
  now_shown(e, n, &e[i].lines);
}

static void select_shown(const mapopt_llm_prompt_input *in, entry *e,
                         bool *covered, size_t best, const line_set *best_l,
                         const line_set *base_l, size_t k) {
  size_t n = in->nattempts, count = 0;
  for (size_t i = 0; i < n; i++)
    e[i].nearest = SIZE_MAX;
  if (in->best_mapper)
    now_shown(e, n, best_l);
  if (in->baseline && in->baseline->mapper)
    now_shown(e, n, base_l);
  if (best < n)
    covered[group_of(e, best)] = true;
  for (size_t i = 0; i < n; i++)
    if (e[i].like_baseline)
      covered[group_of(e, i)] = true;
  if (n - 1 != best && k > 0) {
    show(e, covered, n, n - 1);
    count++;
  }
  for (size_t i = n; i-- > 0 && count < k;)
    if (e[i].failed && !e[i].mended && !e[i].shown && i != best) {
      show(e, covered, n, i);
      count++;
    }
  for (; count < k; count++) {
    size_t pick = n;
    for (size_t i = 0; i < n; i++) {
      if (e[i].shown || i == best || e[i].twin || e[i].failed || covered[i])
        continue;
      if (pick == n || e[i].nearest > e[pick].nearest ||
          (e[i].nearest == e[pick].nearest &&
           in->attempts[i].score >= in->attempts[pick].score))
        pick = i;
    }
    if (pick == n)
      break;
    show(e, covered, n, pick);
  }
  /* Room left: the mended failures too, latest first, one per cause. */
  for (size_t i = n; i-- > 0 && count < k;)
    if (e[i].failed && !e[i].shown && i != best &&
        !same_failure_shown(in, e, i)) {
      e[i].shown = true;
      count++;
    }
}

/* One of the texts shown so far, for "same as": whose it was. */
typedef struct said {
  const char *feedback;
  int64_t iteration; /* -1: the default mapper, -2: the current best */
} said;

static void put_who(mapopt__strbuf *sb, int64_t iteration) {
  if (iteration == -1)
    mapopt__sb_puts(sb, "the default mapper");
  else if (iteration == -2)
    mapopt__sb_puts(sb, "the current best");
  else
    mapopt__sb_printf(sb, "attempt %" PRId64, iteration);
}

static void put_unchanged(mapopt__strbuf *sb, int64_t who) {
  mapopt__sb_puts(sb, "Profile unchanged from ");
  put_who(sb, who);
  mapopt__sb_puts(sb, ": the statements that differ had no effect.\n");
}

/* Whether text has the line p[0..len) (without its line end). */
static bool has_line(const char *text, const char *p, size_t len) {
  for (const char *t = text; *t;) {
    const char *e = strchr(t, '\n');
    size_t l = e ? (size_t)(e - t) : strlen(t);
    if (l == len && !memcmp(t, p, len))
      return true;
    if (!e)
      break;
    t = e + 1;
  }
  return false;
}

static bool shown_line(const said *saids, size_t nsaid, const char *p,
                       size_t len) {
  for (size_t i = 0; i < nsaid; i++)
    if (has_line(saids[i].feedback, p, len))
      return true;
  return false;
}

/* The feedback, or "same as X" when a text shown before was the same;
 * the text joins said[*nsaid] (room for it was made by the caller). */
static void put_feedback_once(mapopt__strbuf *sb, const char *fb, said *saids,
                              size_t *nsaid, int64_t who) {
  if (!fb || !*fb)
    return;
  for (size_t i = 0; i < *nsaid; i++)
    if (!strcmp(saids[i].feedback, fb)) {
      mapopt__sb_puts(sb, "Feedback: same as ");
      put_who(sb, saids[i].iteration);
      mapopt__sb_puts(sb, ".\n");
      return;
    }
  /* AutoGuide's explanations and suggestions repeat word for word from
   * attempt to attempt: one already shown is left out, its finding's
   * first line kept. */
  mapopt__strbuf kept;
  mapopt__sb_init(&kept, sb->ctx);
  size_t dropped = 0;
  for (const char *p = fb; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    bool repeat =
        !strncmp(p, "Explanation: ", 13) || !strncmp(p, "Suggestion: ", 12);
    if (repeat && shown_line(saids, *nsaid, p, len))
      dropped++;
    else
      mapopt__sb_putn(&kept, p, e ? len + 1 : len);
    p += e ? len + 1 : len;
  }
  saids[(*nsaid)++] = (said){fb, who};
  if (dropped)
    mapopt__sb_printf(&kept,
                      "%s(%zu explanation or suggestion line%s shown above "
                      "left out)\n",
                      kept.len && kept.data[kept.len - 1] != '\n' ? "\n" : "",
                      dropped, dropped == 1 ? "" : "s");
  char *t = mapopt__text_take(&kept, NULL);
  put_feedback(sb, t ? t : fb);
  mapopt_text_free(t);
}

/* The timing of an attempt, or that its run was an earlier one's. */
static void put_timing(mapopt__strbuf *sb, const mapopt_llm_prompt_input *in,
                       const entry *e, size_t i) {
  const mapopt_llm_attempt *a = &in->attempts[i];
  const mapopt_llm_attempt *twin =
      e[i].twin ? &in->attempts[e[i].twin - 1] : NULL;
  if (e[i].like_baseline ||
      (twin && a->profile && twin->profile == a->profile &&
       twin->iteration >= 0)) {
    put_unchanged(sb, e[i].like_baseline ? -1 : twin->iteration);
  } else if (a->timing && *a->timing) {
    mapopt__sb_puts(sb, "Run: ");
    put_capped(sb, a->timing, MAX_FEEDBACK_SHOWN);
  }
}

static void put_attempt(mapopt__strbuf *sb, const mapopt_llm_prompt_input *in,
                        const entry *e, size_t i, said *saids, size_t *nsaid) {
  const mapopt_llm_attempt *a = &in->attempts[i];
  if (a->iteration >= 0)
    mapopt__sb_printf(sb, "\n## Attempt %" PRId64 ": ", a->iteration);
  else
    mapopt__sb_puts(sb, "\n## A repeat (not run again): ");
  put_result(sb, a->score, a->elapsed_s);
  mapopt__sb_putc(sb, '\n');
  if (a->mapper)
    put_mapper(sb, a->mapper);
  else
    mapopt__sb_puts(sb, "(the reply contained no mapper)\n");
  put_timing(sb, in, e, i);
  put_feedback_once(sb, a->feedback, saids, nsaid, a->iteration);
}

/* The attempts not shown, by number: "3, 5 (ran as attempt 2)". */
static void put_not_shown(mapopt__strbuf *sb, const mapopt_llm_prompt_input *in,
                          const entry *e, size_t best) {
  enum { MAX_LISTED = 40 };
  size_t listed = 0, more = 0;
  for (size_t i = 0; i < in->nattempts; i++) {
    if (e[i].shown || i == best)
      continue;
    if (listed == MAX_LISTED) {
      more++;
      continue;
    }
    mapopt__sb_puts(sb, listed ? ", " : "\nNot shown: ");
    const mapopt_llm_attempt *a = &in->attempts[i];
    if (a->iteration >= 0)
      mapopt__sb_printf(sb, "%" PRId64, a->iteration);
    else
      mapopt__sb_puts(sb, "a repeat");
    if (e[i].like_baseline) {
      mapopt__sb_puts(sb, " (= the default mapper)");
    } else if (e[i].twin && in->attempts[e[i].twin - 1].iteration >= 0) {
      mapopt__sb_printf(sb, " (= %" PRId64 ")",
                        in->attempts[e[i].twin - 1].iteration);
    } else {
      mapopt__sb_puts(sb, " (score ");
      put_score(sb, a->score);
      mapopt__sb_putc(sb, ')');
    }
    listed++;
  }
  if (more)
    mapopt__sb_printf(sb, " and %zu more", more);
  if (listed)
    mapopt__sb_puts(sb, ".\n");
}

/* The default mapper's evaluation: what every attempt is measured
 * against. */
static void put_baseline(mapopt__strbuf *sb, const mapopt_llm_attempt *b,
                         said *saids, size_t *nsaid) {
  if (!b)
    return;
  mapopt__sb_puts(sb, "\n# Baseline: the default mapper\nEvaluated before "
                      "the first attempt, not counted against the budget: ");
  put_result(sb, b->score, b->elapsed_s);
  mapopt__sb_puts(sb, ".\n");
  if (b->mapper)
    put_mapper(sb, b->mapper);
  if (b->timing && *b->timing) {
    mapopt__sb_puts(sb, "Run: ");
    put_capped(sb, b->timing, MAX_FEEDBACK_SHOWN);
  }
  put_feedback_once(sb, b->feedback, saids, nsaid, -1);
}

/* The best mapper so far, with its attempt's number, time and timing. */
static void put_best(mapopt__strbuf *sb, const mapopt_llm_prompt_input *in,
                     said *saids, size_t *nsaid) {
  mapopt__sb_puts(sb, "\n# Current best mapper\n");
  if (!in->best_mapper) {
    mapopt__sb_puts(sb, "None yet: no mapper has been evaluated. An "
                        "empty mapper means all defaults.\n");
    return;
  }
  size_t best = best_index(in);
  const mapopt_llm_attempt *a =
      best < in->nattempts ? &in->attempts[best] : NULL;
  if (a)
    mapopt__sb_printf(sb, "Attempt %" PRId64 ", ", a->iteration);
  put_result(sb, in->best_score, a ? a->elapsed_s : 0);
  mapopt__sb_puts(sb, ":\n");
  put_mapper(sb, in->best_mapper);
  if (a && in->baseline && a->profile && a->profile == in->baseline->profile)
    put_unchanged(sb, -1);
  else if (a && a->timing && *a->timing) {
    mapopt__sb_puts(sb, "Run: ");
    put_capped(sb, a->timing, MAX_FEEDBACK_SHOWN);
  }
  put_feedback_once(sb, in->best_feedback, saids, nsaid, a ? a->iteration : -2);
}

static const char attempts_rule[] =
    "Numbered in the order evaluated, from 0; shown oldest first, at most "
    "%zu: the latest, the failures no mapper mended since, the runs most "
    "different from those above (by statements), then older failures. The "
    "best is shown above only. \"Same as N\": that feedback was shown "
    "already; \"profile unchanged from N\": the run was N's; \"(= N)\" "
    "below: not shown, it ran as N did. A mapper evaluated before (the same "
    "statements) is not run again and earns nothing.\n";

static mapopt_status put_attempts(mapopt__strbuf *sb,
                                  const mapopt_llm_prompt_input *in,
                                  said *saids, size_t *nsaid) {
  size_t k = in->history ? in->history : MAPOPT_LLM_DEFAULT_HISTORY;
  size_t n = in->attempts ? in->nattempts : 0;
  if (n == 0)
    return MAPOPT_OK;
  mapopt_ctx *ctx = sb->ctx;
  entry *e = mapopt__calloc(ctx, n, sizeof *e);
  bool *covered = mapopt__calloc(ctx, n, sizeof *covered);
  line_set best_l = {0}, base_l = {0};
  mapopt_status st = e && covered ? MAPOPT_OK : MAPOPT_ENOMEM;
  if (st == MAPOPT_OK)
    st = line_set_of(ctx, in->best_mapper, &best_l);
  if (st == MAPOPT_OK && in->baseline)
    st = line_set_of(ctx, in->baseline->mapper, &base_l);
  bool ran_later = false;
  for (size_t i = n; st == MAPOPT_OK && i-- > 0;) {
    const mapopt_llm_attempt *a = &in->attempts[i];
    st = line_set_of(ctx, a->mapper, &e[i].lines);
    e[i].failed = is_failure(a);
    e[i].mended = ran_later;
    ran_later = ran_later || (!e[i].failed && a->iteration >= 0);
    e[i].like_baseline =
        in->baseline && a->profile && a->profile == in->baseline->profile;
    for (size_t j = 0; j < i && !e[i].twin; j++) {
      const mapopt_llm_attempt *b = &in->attempts[j];
      if ((a->profile && a->profile == b->profile) ||
          (a->mapper && b->mapper && !strcmp(a->mapper, b->mapper)))
        e[i].twin = j + 1;
    }
  }
  size_t best = best_index(in);
  if (st == MAPOPT_OK && (n > 1 || best == n)) {
    select_shown(in, e, covered, best, &best_l, &base_l, k);
    mapopt__sb_puts(sb, "\n# Attempts\n");
    mapopt__sb_printf(sb, attempts_rule, k);
    for (size_t i = 0; i < n; i++)
      if (e[i].shown)
        put_attempt(sb, in, e, i, saids, nsaid);
    put_not_shown(sb, in, e, best);
  }
  for (size_t i = 0; e && i < n; i++)
    line_set_free(ctx, &e[i].lines);
  line_set_free(ctx, &best_l);
  line_set_free(ctx, &base_l);
  if (e)
    mapopt__free(ctx, e, n * sizeof *e);
  if (covered)
    mapopt__free(ctx, covered, n * sizeof *covered);
  return st;
}

/* ---- the messages -------------------------------------------------------- */

static const char reply_rules[] =
    "\n## Your reply\n\n"
    "Reply with one complete mapper in one fenced code block tagged mapper:\n"
    "\n```mapper\n(the whole mapper)\n```\n\n"
    "The block replaces the current mapper entirely, so it must contain "
    "every statement you want, not a diff. Text outside the block is "
    "ignored. Use only the application's task and argument names. Keep the "
    "mapper short; it is compiled and run on the machine described, and "
    "the fastest valid mapper wins.\n";

void mapopt_llm_prompt_destroy(mapopt_llm_prompt *p) {
  if (!p)
    return;
  mapopt_text_free(p->system);
  mapopt_text_free(p->user);
  *p = (mapopt_llm_prompt){0};
}

mapopt_status mapopt_llm_prompt_build(mapopt_ctx *ctx,
                                      const mapopt_llm_prompt_input *in,
                                      mapopt_llm_prompt *out) {
  if (!in || !in->run || !in->machine)
    return MAPOPT_EINVAL;
  mapopt_llm_prompt p = {0};
  mapopt__strbuf sys, user;
  mapopt__sb_init(&sys, ctx);
  mapopt__sb_init(&user, ctx);
  mapopt__sb_puts(&sys, mapopt_llm_dsl_reference());
  mapopt__sb_puts(&sys, reply_rules);

  mapopt_status st = put_app(&user, in->run, in->anonymous);
  put_machine(&user, in->machine, in->run);
  mapopt__sb_printf(&user,
                    "\n# Objective\nMaximize %s. Higher scores are better; "
                    "a mapper that fails to compile or to run scores 0.\n",
                    in->objective ? in->objective
                                  : "throughput (1 / execution time)");
  /* Room for every feedback shown: the default mapper's, the best's,
   * the attempts'. */
  size_t nsaid = 0;
  said *saids = mapopt__malloc(ctx, (in->nattempts + 2) * sizeof *saids);
  if (!saids && st == MAPOPT_OK)
    st = MAPOPT_ENOMEM;
  if (st == MAPOPT_OK)
    put_baseline(&user, in->baseline, saids, &nsaid);
  if (st == MAPOPT_OK)
    put_best(&user, in, saids, &nsaid);
  if (st == MAPOPT_OK)
    st = put_attempts(&user, in, saids, &nsaid);
  if (saids)
    mapopt__free(ctx, saids, (in->nattempts + 2) * sizeof *saids);
  mapopt__sb_printf(&user,
                    "\n# Request\nWrite a mapper for %s on %s that scores "
                    "higher than the current best. Reply with the complete "
                    "mapper in one ```mapper block.\n",
                    in->anonymous ? "this application" : in->run->name,
                    in->machine->name ? in->machine->name : "this machine");
  if (st == MAPOPT_OK) {
    p.system = mapopt__text_take(&sys, &p.system_len);
    p.user = mapopt__text_take(&user, &p.user_len);
    if (!p.system || !p.user)
      st = MAPOPT_ENOMEM;
  }
  mapopt__sb_destroy(&sys);
  mapopt__sb_destroy(&user);
  if (st != MAPOPT_OK) {
    mapopt_llm_prompt_destroy(&p);
    return st;
  }
  *out = p;
  return MAPOPT_OK;
}
