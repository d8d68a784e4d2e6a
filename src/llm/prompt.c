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
      sum += r->field_bytes[f];
  return sum;
}

static void put_regions(mapopt__strbuf *sb, const mapopt_app_run *run) {
  mapopt__sb_puts(sb, "Regions (fields with their bytes per element):\n");
  for (int i = 0; i < run->nregions; i++) {
    const mapopt_app_region *r = &run->regions[i];
    int64_t elements = 0;
    for (int64_t a = r->first_atom; a < r->first_atom + r->natoms; a++)
      elements += run->atom_elements[a];
    uint64_t all = r->nfields >= 64 ? ~0ull : (1ull << r->nfields) - 1;
    int64_t per = field_bytes(r, all);
    mapopt__sb_printf(sb,
                      "- %s: %" PRId64 " elements x %" PRId64 " B = ", r->name,
                      elements, per);
    put_bytes(sb, elements * per);
    mapopt__sb_puts(sb, "; fields");
    for (int f = 0; f < r->nfields; f++)
      mapopt__sb_printf(sb, "%s %s %" PRId64, f ? "," : "", r->field_names[f],
                        r->field_bytes[f]);
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
  return op->parent < 0 ? -1 : run->ops[op->parent].task;
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
    const mapopt_app_op *o = &run->ops[i];
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
                      sh->issuer < 0 ? "main" : run->tasks[sh->issuer].name);
  }
  mapopt__sb_puts(sb, ".\n");
}

/* The arguments of task t, position by position, over all its ops. */
static void put_arguments(mapopt__strbuf *sb, const mapopt_app_run *run,
                          int t) {
  size_t nargs = 0;
  for (int64_t i = 0; i < run->nops; i++)
    if (run->ops[i].kind == MAPOPT_OP_TASK && run->ops[i].task == t &&
        run->ops[i].nreqs > nargs)
      nargs = run->ops[i].nreqs;
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
      const mapopt_app_op *o = &run->ops[i];
      if (o->kind != MAPOPT_OP_TASK || o->task != t || o->nreqs <= a)
        continue;
      const mapopt_app_req *r = &o->reqs[a];
      if (!first)
        first = r;
      if (r->piece->region != first->piece->region)
        continue; /* not in the models; kept out of the sums */
      privs |= 1u << r->priv;
      if (r->priv == MAPOPT_PRIV_REDUCE)
        redops |= 1u << r->redop;
      fields |= r->fields;
      const mapopt_app_region *reg = &run->regions[r->piece->region];
      int64_t e = r->piece->elements, b = e * field_bytes(reg, r->fields);
      elo = e < elo ? e : elo;
      ehi = e > ehi ? e : ehi;
      blo = b < blo ? b : blo;
      bhi = b > bhi ? b : bhi;
    }
    const mapopt_app_region *reg = &run->regions[first->piece->region];
    mapopt__sb_printf(sb, "- %zu: ", a);
    for (size_t n = 0; n < first->nnames; n++)
      mapopt__sb_printf(sb, n ? ", %s" : "%s", first->names[n]);
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
      sep = false;
      for (int f = 0; f < reg->nfields; f++)
        if (fields >> f & 1) {
          mapopt__sb_printf(sb, "%s%s", sep ? ", " : "", reg->field_names[f]);
          sep = true;
        }
      mapopt__sb_printf(sb, " of %s", reg->name);
    }
    mapopt__sb_printf(sb, "; %" PRId64, elo);
    if (ehi != elo)
      mapopt__sb_printf(sb, " to %" PRId64, ehi);
    mapopt__sb_puts(sb, ehi == 1 ? " element, " : " elements, ");
    put_range_bytes(sb, blo, bhi);
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
  const mapopt_app_task *task = &run->tasks[t];
  mapopt__sb_printf(sb, "\n## Task %s\nVariants:", task->name);
  for (int v = 0; v < task->nvariants; v++) {
    const mapopt_app_variant *var = &task->variants[v];
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
  put_arguments(sb, run, t);
}

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
    for (size_t i = 0; i < run->nparams; i++)
      mapopt__sb_printf(sb, " %s=%" PRId64, run->param_names[i],
                        run->param_values[i]);
    mapopt__sb_putc(sb, '.');
  }
  mapopt__sb_printf(sb,
                    "%sThe top-level task is main; the tasks below are "
                    "launched by it or by each other. Default layout "
                    "order: %s.\n\n",
                    run->size || run->nparams ? "\n" : "",
                    run->default_c_order ? "C_order" : "F_order");
  put_regions(sb, run);
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

static const char *mem_count(mapopt_mem_kind k) {
  switch (k) {
  case MAPOPT_MEM_FBMEM:
    return "one per GPU";
  case MAPOPT_MEM_SOCKMEM:
    return "one per socket";
  default:
    return "one per node";
  }
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
  mapopt__sb_puts(sb, "Memories per node:\n");
  static const mapopt_mem_kind mems[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_ZCMEM,
                                         MAPOPT_MEM_SOCKMEM, MAPOPT_MEM_SYSMEM,
                                         MAPOPT_MEM_RDMEM};
  for (size_t i = 0; i < 5; i++) {
    if (!m->mems[mems[i]].present)
      continue;
    mapopt__sb_printf(sb, "- %s: %s, ", mapopt_shape_mem_name(mems[i]),
                      mem_count(mems[i]));
    put_bytes(sb, m->mems[mems[i]].capacity);
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
      mapopt__sb_puts(sb, " (");
      put_fixed(sb, p->cross_socket_bw_mbps, 3);
      mapopt__sb_puts(sb, " GB/s across sockets)");
    }
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

typedef struct ranked {
  double score; /* NaN sorted as -infinity */
  size_t index; /* position in the input: the tie-break */
} ranked;

static int by_score(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->score != y->score)
    return x->score < y->score ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static mapopt_status put_attempts(mapopt__strbuf *sb,
                                  const mapopt_llm_prompt_input *in) {
  size_t k = in->history ? in->history : MAPOPT_LLM_DEFAULT_HISTORY;
  if (!in->attempts || in->nattempts == 0)
    return MAPOPT_OK;
  size_t n = in->nattempts < k ? in->nattempts : k;
  size_t from = in->nattempts - n;
  ranked *order = mapopt__malloc(sb->ctx, n * sizeof *order);
  if (!order)
    return MAPOPT_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    double s = in->attempts[from + i].score;
    order[i] = (ranked){isnan(s) ? -INFINITY : s, from + i};
  }
  qsort(order, n, sizeof *order, by_score);
  mapopt__sb_printf(sb,
                    "\n# Recent attempts\nThe last %zu, in ascending order "
                    "of score (the best is last).\n",
                    n);
  for (size_t i = 0; i < n; i++) {
    const mapopt_llm_attempt *a = &in->attempts[order[i].index];
    mapopt__sb_puts(sb, "\n## Attempt");
    if (a->iteration > 0)
      mapopt__sb_printf(sb, " at iteration %" PRId64, a->iteration);
    mapopt__sb_puts(sb, ": score ");
    put_score(sb, a->score);
    mapopt__sb_putc(sb, '\n');
    if (a->mapper)
      put_mapper(sb, a->mapper);
    else
      mapopt__sb_puts(sb, "(the reply contained no mapper)\n");
    put_feedback(sb, a->feedback);
  }
  mapopt__free(sb->ctx, order, n * sizeof *order);
  return MAPOPT_OK;
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
  mapopt__sb_puts(&user, "\n# Current best mapper\n");
  if (in->best_mapper) {
    mapopt__sb_puts(&user, "Score ");
    put_score(&user, in->best_score);
    mapopt__sb_puts(&user, ":\n");
    put_mapper(&user, in->best_mapper);
    put_feedback(&user, in->best_feedback);
  } else {
    mapopt__sb_puts(&user, "None yet: no mapper has been evaluated. An "
                           "empty mapper means all defaults.\n");
  }
  if (st == MAPOPT_OK)
    st = put_attempts(&user, in);
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
