/*
 * A simulated run's time, told to a person: where it went (the summary
 * that `mapopt sim --explain` prints after AutoGuide's findings) and, for
 * two runs of one application under two mappers, what differs between
 * them, largest first (`mapopt sim --compare`). Everything is computed
 * from the results -- the busiest tasks' time split, the copy channels,
 * the processors, the memories of the busiest tasks' arguments, the
 * critical path -- and printed with fixed precision, so the same results
 * give the same text. Unlike the findings, these texts judge nothing: they
 * are the numbers a finding is made from, laid out to be read at once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guide/guide.h"

typedef mapopt__strbuf sb_t;

/* "476.0 us" for ns >= 0, with a sign for a difference. */
static void put_ns(sb_t *b, int64_t ns) {
  char buf[32];
  mapopt__guide_fmt_ns(buf, sizeof buf, ns < 0 ? -ns : ns);
  mapopt__sb_printf(b, "%s%s", ns < 0 ? "-" : "", buf);
}
static void put_delta_ns(sb_t *b, int64_t ns) {
  mapopt__sb_putc(b, ns < 0 ? '-' : '+');
  put_ns(b, ns < 0 ? -ns : ns);
}
static void put_bytes(sb_t *b, int64_t bytes) {
  char buf[32];
  mapopt__guide_fmt_bytes(buf, sizeof buf, bytes);
  mapopt__sb_puts(b, buf);
}
/* part of whole as a whole percentage, rounded; 0 for an empty whole. */
static int64_t pct(int64_t part, int64_t whole) {
  return whole > 0 ? (part * 100 + whole / 2) / whole : 0;
}
/* s padded with spaces to width (never cut). */
static void put_pad(sb_t *b, const char *s, int width) {
  mapopt__sb_printf(b, "%-*s", width, s);
}

/* ---- one run ----------------------------------------------------------- */

/* Processors of one kind: how many, their busy time in the timed window. */
typedef struct kind_load {
  const char *kind;
  int64_t count, busy, max;
} kind_load;

static size_t kind_loads(const mapopt_sim_result *r, kind_load *out,
                         size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < mapopt_sim_result_nprocs(r); i++) {
    const mapopt_sim_proc_stats *p = mapopt_sim_result_proc(r, i);
    size_t k = 0;
    while (k < n && strcmp(out[k].kind, p->kind) != 0)
      k++;
    if (k == n) {
      if (n == cap)
        continue;
      out[n++] = (kind_load){p->kind, 0, 0, 0};
    }
    out[k].count++;
    out[k].busy += p->busy_ns;
    if (p->busy_ns > out[k].max)
      out[k].max = p->busy_ns;
  }
  return n;
}

/* The width of the name column: the longest task name, within bounds. */
static int name_width(const mapopt_sim_result *r, int least) {
  int w = least;
  for (size_t i = 0; i < mapopt_sim_result_ntop(r); i++) {
    int n = (int)strlen(mapopt_sim_result_top_task(r, i)->task);
    if (n > w)
      w = n;
  }
  return w < 40 ? w : 40;
}

static void critical_path_line(sb_t *b, const mapopt_sim_critical_path *cp) {
  static const char *const what[] = {"compute", "copies", "runtime",
                                     "waiting for a processor",
                                     "back-pressure"};
  const int64_t part[] = {cp->compute_ns, cp->copy_ns, cp->runtime_ns,
                          cp->queue_ns, cp->backpressure_ns};
  mapopt__sb_puts(b, "  critical path: ");
  for (int i = 0; i < 5; i++)
    mapopt__sb_printf(b, "%s%s %" PRId64 "%%", i ? ", " : "", what[i],
                      pct(part[i], cp->length_ns));
  mapopt__sb_putc(b, '\n');
}

/* The attribution: the entries with exposed time, the largest first (at
 * most MAX_SHOWN), then the copies that moved data without any. */
static void causes_table(sb_t *b, const mapopt_sim_result *r) {
  enum { MAX_SHOWN = 10, MAX_HIDDEN = 4 };
  char label[MAX_SHOWN + MAX_HIDDEN][400];
  const mapopt_sim_wait *shown[MAX_SHOWN + MAX_HIDDEN];
  size_t n = 0, nexposed = 0, more = 0;
  for (size_t i = 0; i < mapopt_sim_result_nwaits(r); i++) {
    const mapopt_sim_wait *w = mapopt_sim_result_wait(r, i);
    bool exposed = w->exposed_ns > 0;
    if (!exposed && w->bytes <= 0)
      continue;
    if (exposed ? nexposed >= MAX_SHOWN : n - nexposed >= MAX_HIDDEN) {
      more += exposed;
      continue;
    }
    mapopt__guide_wait_label(label[n], sizeof label[n], w);
    shown[n++] = w;
    nexposed += exposed;
  }
  if (!n)
    return;
  int width = 20;
  for (size_t i = 0; i < n; i++) {
    int len = (int)strlen(label[i]);
    width = len > width ? (len < 72 ? len : 72) : width;
  }
  mapopt__sb_puts(b, "  ");
  put_pad(b, "the critical path by cause", width + 2);
  mapopt__sb_puts(b, "   exposed  waited in all\n");
  for (size_t i = 0; i < n; i++) {
    const mapopt_sim_wait *w = shown[i];
    char e[32], t[32];
    mapopt__guide_fmt_ns(e, sizeof e, w->exposed_ns);
    mapopt__guide_fmt_ns(t, sizeof t, w->waited_ns);
    mapopt__sb_puts(b, "    ");
    put_pad(b, label[i], width);
    mapopt__sb_printf(b, " %9s  %s", e, t);
    if (w->count)
      mapopt__sb_printf(b, " (%" PRId64 " point%s)", w->count,
                        w->count == 1 ? "" : "s");
    if (w->copies) {
      mapopt__sb_puts(b, "; ");
      put_bytes(b, w->bytes);
      mapopt__sb_printf(b, " in %" PRId64 " cop%s", w->copies,
                        w->copies == 1 ? "y" : "ies");
    }
    if (w->exposed_ns == 0)
      mapopt__sb_puts(b, ", hidden");
    mapopt__sb_putc(b, '\n');
  }
  if (more)
    mapopt__sb_printf(b, "    (%zu more with exposed time)\n", more);
}

static void tasks_table(sb_t *b, const mapopt_sim_result *r) {
  int w = name_width(r, 19);
  mapopt__sb_puts(b, "  ");
  put_pad(b, "busiest tasks", w + 2);
  mapopt__sb_puts(b, " kind points       busy overhead compute memory"
                     "   waited for data, a processor\n");
  for (size_t i = 0; i < mapopt_sim_result_ntop(r); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(r, i);
    char busy[32];
    mapopt__guide_fmt_ns(busy, sizeof busy, t->busy_ns);
    mapopt__sb_puts(b, "    ");
    put_pad(b, t->task, w);
    mapopt__sb_printf(b,
                      " %-4s %6" PRId64 " %10s %7" PRId64 "%% %6" PRId64
                      "%% %5" PRId64 "%%   ",
                      mapopt_shape_proc_name(t->kind), t->points, busy,
                      pct(t->overhead_ns, t->busy_ns),
                      pct(t->compute_ns, t->busy_ns),
                      pct(t->memory_ns, t->busy_ns));
    put_ns(b, t->wait_data_ns);
    mapopt__sb_puts(b, ", ");
    put_ns(b, t->wait_proc_ns);
    mapopt__sb_putc(b, '\n');
  }
}

static void processors_table(sb_t *b, const mapopt_sim_result *r) {
  kind_load k[8];
  size_t n = kind_loads(r, k, 8);
  mapopt__sb_puts(b, "  processors             busy in the timed window: "
                     "mean, busiest\n");
  for (size_t i = 0; i < n; i++) {
    char name[48];
    snprintf(name, sizeof name, "%s x%" PRId64, k[i].kind, k[i].count);
    mapopt__sb_puts(b, "    ");
    put_pad(b, name, 20);
    mapopt__sb_printf(b, " %3" PRId64 "%%, %3" PRId64 "%%\n",
                      pct(k[i].busy, r->elapsed_ns * k[i].count),
                      pct(k[i].max, r->elapsed_ns));
  }
}

static void copies_table(sb_t *b, const mapopt_sim_result *r) {
  bool any = false;
  for (int c = 0; c < MAPOPT_SIM_COPY_KINDS; c++)
    any |= mapopt_sim_result_copy(r, c)->count > 0;
  if (!any) {
    mapopt__sb_puts(b, "  copies: none in the timed window\n");
    return;
  }
  mapopt__sb_puts(b, "  copies per channel         bytes  copies  "
                     "copy time (summed)\n");
  for (int c = 0; c < MAPOPT_SIM_COPY_KINDS; c++) {
    const mapopt_sim_copy_stats *s = mapopt_sim_result_copy(r, c);
    if (!s->count)
      continue;
    char bytes[32], busy[32];
    mapopt__guide_fmt_bytes(bytes, sizeof bytes, s->bytes);
    mapopt__guide_fmt_ns(busy, sizeof busy, s->busy_ns);
    mapopt__sb_printf(b, "    %-20s %9s %7" PRId64 "  %s\n",
                      mapopt_sim_copy_kind_name(c), bytes, s->count, busy);
  }
}

/* An argument of a busy task, ranked by the time spent reaching its data
 * and the bytes copied into it. */
typedef struct hot_req {
  const mapopt_sim_task_stats *task;
  const mapopt_sim_req_stats *req;
  int64_t access, copied;
} hot_req;

static int cmp_hot(const void *x, const void *y) {
  const hot_req *a = x, *b = y;
  if (a->access != b->access)
    return a->access < b->access ? 1 : -1;
  if (a->copied != b->copied)
    return a->copied < b->copied ? 1 : -1;
  return 0;
}

static int64_t copied_in(const mapopt_sim_req_stats *q) {
  int64_t n = 0;
  for (int c = 0; c < MAPOPT_SIM_COPY_KINDS; c++)
    n += q->copy_in_channel_bytes[c];
  return n;
}

static void data_table(sb_t *b, const mapopt_sim_result *r) {
  enum { MAX_SHOWN = 8 };
  hot_req hot[MAPOPT_SIM_MAX_TOP_TASKS * MAPOPT_APP_MAX_ARGS];
  size_t n = 0;
  for (size_t i = 0; i < mapopt_sim_result_ntop(r); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(r, i);
    for (size_t q = 0; q < mapopt_sim_task_nreqs(t); q++) {
      const mapopt_sim_req_stats *rq = mapopt_sim_task_req(t, q);
      int64_t access = rq->mem_ns + rq->access_ns, copied = copied_in(rq);
      if (rq->memory != MAPOPT_MEM_VIRTUAL && (access > 0 || copied > 0) &&
          n < sizeof hot / sizeof hot[0])
        hot[n++] = (hot_req){t, rq, access, copied};
    }
  }
  if (!n)
    return;
  /* Rank by time, ties by task then argument order (stable by index). */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && cmp_hot(&hot[j - 1], &hot[j]) > 0; j--) {
      hot_req t = hot[j];
      hot[j] = hot[j - 1];
      hot[j - 1] = t;
    }
  char names[MAX_SHOWN][128];
  int w = 23; /* the header's width */
  for (size_t i = 0; i < n && i < MAX_SHOWN; i++) {
    const mapopt_sim_req_stats *q = hot[i].req;
    snprintf(names[i], sizeof names[i], "%s %s@%d", hot[i].task->task,
             q->name && q->name[0] ? q->name : "", q->index);
    int len = (int)strlen(names[i]);
    w = len > w ? (len < 60 ? len : 60) : w;
  }
  mapopt__sb_puts(b, "  ");
  put_pad(b, "data of the busiest tasks", w + 2);
  mapopt__sb_puts(b, " memory  layout       time to reach it, bytes copied "
                     "in\n");
  for (size_t i = 0; i < n && i < MAX_SHOWN; i++) {
    const mapopt_sim_req_stats *q = hot[i].req;
    mapopt__sb_puts(b, "    ");
    put_pad(b, names[i], w);
    mapopt__sb_printf(b, " %-7s %s %-7s  ", mapopt_shape_mem_name(q->memory),
                      q->layout.soa == MAPOPT_LAYOUT_NO ? "AOS" : "SOA",
                      q->layout.c_order == MAPOPT_LAYOUT_YES ? "C_order"
                                                             : "F_order");
    put_ns(b, hot[i].access);
    mapopt__sb_puts(b, ", ");
    put_bytes(b, hot[i].copied);
    mapopt__sb_putc(b, '\n');
  }
  if (n > MAX_SHOWN)
    mapopt__sb_printf(b, "    (%zu more arguments)\n", n - MAX_SHOWN);
}

static void summary(sb_t *b, const mapopt_sim_result *r) {
  if (r->error != MAPOPT_SIM_NONE) {
    mapopt__sb_printf(b,
                      "The run failed (%s): there is no profile of where its "
                      "time went.\n",
                      mapopt_sim_error_name(r->error));
    return;
  }
  mapopt__sb_printf(b, "Where the time went (%" PRId64 " timed iteration%s: ",
                    r->iterations_timed, r->iterations_timed == 1 ? "" : "s");
  put_ns(b, r->elapsed_ns);
  mapopt__sb_puts(b, "; no mapping beats ");
  put_ns(b, r->lower_bound_ns);
  mapopt__sb_puts(b, "):\n");
  critical_path_line(b, &r->critical_path);
  causes_table(b, r);
  tasks_table(b, r);
  processors_table(b, r);
  copies_table(b, r);
  data_table(b, r);
}

mapopt_status mapopt_guide_summary(mapopt_ctx *ctx, const mapopt_sim_result *r,
                                   char **text) {
  if (!ctx || !r || !text)
    return MAPOPT_EINVAL;
  sb_t b;
  mapopt__sb_init(&b, ctx);
  summary(&b, r);
  char *t = mapopt__text_take(&b, NULL);
  if (!t)
    return MAPOPT_ENOMEM;
  *text = t;
  return MAPOPT_OK;
}

/* ---- the critical path in one line ------------------------------------ */

mapopt_status mapopt_guide_critical_path_line(mapopt_ctx *ctx,
                                              const mapopt_sim_result *r,
                                              size_t max, char **text) {
  if (!ctx || !r || !text)
    return MAPOPT_EINVAL;
  *text = NULL;
  int64_t length = r->critical_path.length_ns;
  if (r->error != MAPOPT_SIM_NONE || length <= 0 ||
      mapopt_sim_result_nwaits(r) == 0)
    return MAPOPT_OK;
  sb_t b;
  mapopt__sb_init(&b, ctx);
  mapopt__sb_puts(&b, "critical path ");
  put_ns(&b, length);
  mapopt__sb_puts(&b, " by cause:");
  size_t shown = 0, rest = 0;
  int64_t rest_ns = 0;
  char label[400];
  for (size_t i = 0; i < mapopt_sim_result_nwaits(r); i++) {
    const mapopt_sim_wait *w = mapopt_sim_result_wait(r, i);
    if (w->exposed_ns <= 0)
      continue;
    /* Entries under 1% of the path are summed, not named. */
    if (shown == max || pct(w->exposed_ns, length) < 1) {
      rest++;
      rest_ns += w->exposed_ns;
      continue;
    }
    mapopt__guide_wait_label(label, sizeof label, w);
    mapopt__sb_printf(&b, "%s %s ", shown ? ";" : "", label);
    put_ns(&b, w->exposed_ns);
    mapopt__sb_printf(&b, " (%" PRId64 "%%)", pct(w->exposed_ns, length));
    shown++;
  }
  if (rest) {
    mapopt__sb_printf(&b, "; %zu more ", rest);
    put_ns(&b, rest_ns);
    mapopt__sb_printf(&b, " (%" PRId64 "%%)", pct(rest_ns, length));
  }
  mapopt__sb_puts(&b, ".\n");
  char *t = mapopt__text_take(&b, NULL);
  if (!t)
    return MAPOPT_ENOMEM;
  *text = t;
  return MAPOPT_OK;
}

/* ---- two runs ---------------------------------------------------------- */

/* One difference: the time it changed by, and its words. */
typedef struct diff {
  int64_t delta; /* b - a, in ns */
  int order;     /* the order it was found in, for ties */
  bool changed;  /* something differs (a time, or a decision) */
  char *text;    /* owned */
} diff;

typedef struct diffs {
  mapopt_ctx *ctx;
  diff *v;
  size_t n, cap;
  bool failed;
} diffs;

/* Adds a difference whose words are in line (taken). */
static void add_diff(diffs *d, int64_t delta, bool changed, sb_t *line) {
  if (d->n == d->cap) {
    size_t cap = d->cap ? 2 * d->cap : 32;
    diff *v =
        mapopt__realloc(d->ctx, d->v, d->cap * sizeof *v, cap * sizeof *v);
    if (!v) {
      d->failed = true;
      mapopt__sb_destroy(line);
      return;
    }
    d->v = v;
    d->cap = cap;
  }
  size_t len;
  char *t = mapopt__sb_take(line, &len);
  if (!t) {
    d->failed = true;
    return;
  }
  d->v[d->n] = (diff){delta, (int)d->n, changed, t};
  d->n++;
}

static int cmp_diff(const void *x, const void *y) {
  const diff *a = x, *b = y;
  int64_t da = a->delta < 0 ? -a->delta : a->delta;
  int64_t db = b->delta < 0 ? -b->delta : b->delta;
  if (da != db)
    return da < db ? 1 : -1;
  return a->order - b->order;
}

/* "A -> B (+D)" for two times. */
static void put_change(sb_t *b, int64_t x, int64_t y) {
  put_ns(b, x);
  mapopt__sb_puts(b, " -> ");
  put_ns(b, y);
  mapopt__sb_puts(b, " (");
  put_delta_ns(b, y - x);
  mapopt__sb_putc(b, ')');
}

/* A task of either run: its time on its busiest processor, and what the
 * mappers decided differently for it. */
static void task_diff(diffs *d, const mapopt_sim_task_stats *ta,
                      const mapopt_sim_task_stats *tb) {
  const mapopt_sim_task_stats *t = ta ? ta : tb;
  sb_t line;
  mapopt__sb_init(&line, d->ctx);
  int64_t xa = ta ? ta->proc_max_ns : 0, xb = tb ? tb->proc_max_ns : 0;
  mapopt__sb_printf(&line, "task %s", t->task);
  if (ta && tb && ta->kind != tb->kind)
    mapopt__sb_printf(&line, " (%s -> %s)", mapopt_shape_proc_name(ta->kind),
                      mapopt_shape_proc_name(tb->kind));
  else
    mapopt__sb_printf(&line, " (%s)", mapopt_shape_proc_name(t->kind));
  mapopt__sb_puts(&line, ": on its busiest processor ");
  put_change(&line, xa, xb);
  size_t plain = line.len; /* what follows are the decisions that differ */
  if (ta && tb) {
    /* The split of its busy time, where it moved. */
    static const char *const part[] = {"overhead", "compute", "memory"};
    const int64_t pa[] = {ta->overhead_ns, ta->compute_ns, ta->memory_ns};
    const int64_t pb[] = {tb->overhead_ns, tb->compute_ns, tb->memory_ns};
    for (int k = 0; k < 3; k++)
      if (pa[k] != pb[k]) {
        mapopt__sb_printf(&line, "\n      %s ", part[k]);
        put_ns(&line, pa[k]);
        mapopt__sb_puts(&line, " -> ");
        put_ns(&line, pb[k]);
      }
    if (ta->wait_data_ns != tb->wait_data_ns) {
      mapopt__sb_puts(&line, "\n      waited for data ");
      put_ns(&line, ta->wait_data_ns);
      mapopt__sb_puts(&line, " -> ");
      put_ns(&line, tb->wait_data_ns);
    }
    /* The memories chosen for its arguments, and layouts that cost
     * differently (a 1-D region's order, say, does not). */
    for (size_t q = 0;
         q < mapopt_sim_task_nreqs(ta) && q < mapopt_sim_task_nreqs(tb); q++) {
      const mapopt_sim_req_stats *qa = mapopt_sim_task_req(ta, q),
                                 *qb = mapopt_sim_task_req(tb, q);
      bool mem = qa->memory != qb->memory;
      bool lay =
          qa->layout.soa != qb->layout.soa || qa->layout_ppm != qb->layout_ppm;
      if (!mem && !lay)
        continue;
      mapopt__sb_printf(&line, "\n      %s@%d",
                        qa->name && qa->name[0] ? qa->name : "", qa->index);
      if (mem)
        mapopt__sb_printf(&line, " in %s -> %s",
                          mapopt_shape_mem_name(qa->memory),
                          mapopt_shape_mem_name(qb->memory));
      if (lay)
        mapopt__sb_printf(
            &line, "%s %s %s -> %s %s", mem ? "," : "",
            qa->layout.soa == MAPOPT_LAYOUT_NO ? "AOS" : "SOA",
            qa->layout.c_order == MAPOPT_LAYOUT_YES ? "C_order" : "F_order",
            qb->layout.soa == MAPOPT_LAYOUT_NO ? "AOS" : "SOA",
            qb->layout.c_order == MAPOPT_LAYOUT_YES ? "C_order" : "F_order");
    }
  } else {
    mapopt__sb_printf(&line, "; among the busiest tasks only in %s",
                      ta ? "A" : "B");
  }
  add_diff(d, xb - xa, xa != xb || line.len > plain, &line);
}

static void channel_diffs(diffs *d, const mapopt_sim_result *a,
                          const mapopt_sim_result *b) {
  for (int c = 0; c < MAPOPT_SIM_COPY_KINDS; c++) {
    const mapopt_sim_copy_stats *x = mapopt_sim_result_copy(a, c),
                                *y = mapopt_sim_result_copy(b, c);
    if (x->busy_ns == y->busy_ns && x->bytes == y->bytes)
      continue;
    sb_t line;
    mapopt__sb_init(&line, d->ctx);
    mapopt__sb_printf(&line, "copies over %s: copy time ",
                      mapopt_sim_copy_kind_name(c));
    put_change(&line, x->busy_ns, y->busy_ns);
    mapopt__sb_puts(&line, "; ");
    put_bytes(&line, x->bytes);
    mapopt__sb_printf(&line, " in %" PRId64 " -> ", x->count);
    put_bytes(&line, y->bytes);
    mapopt__sb_printf(&line, " in %" PRId64, y->count);
    add_diff(d, y->busy_ns - x->busy_ns, true, &line);
  }
}

/* Per memory kind: the time the busiest tasks spent reaching data there,
 * and the peak bytes held in one memory of the kind. */
static void memory_use(const mapopt_sim_result *r, int64_t *access,
                       int64_t *peak) {
  for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++)
    access[k] = peak[k] = 0;
  for (size_t i = 0; i < mapopt_sim_result_ntop(r); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(r, i);
    for (size_t q = 0; q < mapopt_sim_task_nreqs(t); q++) {
      const mapopt_sim_req_stats *rq = mapopt_sim_task_req(t, q);
      if ((unsigned)rq->memory < MAPOPT_MEM_KIND_COUNT)
        access[rq->memory] += rq->mem_ns + rq->access_ns;
    }
  }
  for (size_t i = 0; i < mapopt_sim_result_nmems(r); i++)
    if ((unsigned)mapopt_sim_result_mem(r, i)->kind < MAPOPT_MEM_KIND_COUNT &&
        mapopt_sim_result_mem(r, i)->peak_bytes >
            peak[mapopt_sim_result_mem(r, i)->kind])
      peak[mapopt_sim_result_mem(r, i)->kind] =
          mapopt_sim_result_mem(r, i)->peak_bytes;
}

static void memory_diffs(diffs *d, const mapopt_sim_result *a,
                         const mapopt_sim_result *b) {
  int64_t xa[MAPOPT_MEM_KIND_COUNT], pa[MAPOPT_MEM_KIND_COUNT];
  int64_t xb[MAPOPT_MEM_KIND_COUNT], pb[MAPOPT_MEM_KIND_COUNT];
  memory_use(a, xa, pa);
  memory_use(b, xb, pb);
  for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++) {
    if (xa[k] == xb[k] && pa[k] == pb[k])
      continue;
    sb_t line;
    mapopt__sb_init(&line, d->ctx);
    mapopt__sb_printf(&line,
                      "memory %s: the busiest tasks' time reaching data there ",
                      mapopt_shape_mem_name((mapopt_mem_kind)k));
    put_change(&line, xa[k], xb[k]);
    mapopt__sb_puts(&line, "; peak ");
    put_bytes(&line, pa[k]);
    mapopt__sb_puts(&line, " -> ");
    put_bytes(&line, pb[k]);
    add_diff(d, xb[k] - xa[k], true, &line);
  }
}

static void path_diffs(diffs *d, const mapopt_sim_critical_path *a,
                       const mapopt_sim_critical_path *b) {
  static const char *const what[] = {"compute", "copies", "runtime",
                                     "waiting for a processor",
                                     "back-pressure"};
  const int64_t x[] = {a->compute_ns, a->copy_ns, a->runtime_ns, a->queue_ns,
                       a->backpressure_ns};
  const int64_t y[] = {b->compute_ns, b->copy_ns, b->runtime_ns, b->queue_ns,
                       b->backpressure_ns};
  for (int i = 0; i < 5; i++) {
    if (x[i] == y[i])
      continue;
    sb_t line;
    mapopt__sb_init(&line, d->ctx);
    mapopt__sb_printf(&line, "critical path, %s: ", what[i]);
    put_change(&line, x[i], y[i]);
    add_diff(d, y[i] - x[i], true, &line);
  }
}

static void run_line(sb_t *b, const char *tag, const char *label,
                     const mapopt_sim_result *r) {
  mapopt__sb_printf(b, "%s: %s: ", tag, label);
  if (r->error != MAPOPT_SIM_NONE) {
    mapopt__sb_printf(b, "failed (%s)\n", mapopt_sim_error_name(r->error));
    return;
  }
  mapopt__sb_puts(b, "elapsed ");
  put_ns(b, r->elapsed_ns);
  mapopt__sb_printf(b, ", %s %.3f %s\n", r->metric_name, r->metric_value,
                    r->metric_unit);
}

static void compare(sb_t *b, diffs *d, const mapopt_sim_result *a,
                    const char *la, const mapopt_sim_result *r,
                    const char *lb) {
  run_line(b, "A", la, a);
  run_line(b, "B", lb, r);
  if (a->error != MAPOPT_SIM_NONE || r->error != MAPOPT_SIM_NONE) {
    mapopt__sb_puts(b, "No comparison: a failed run has no profile.\n");
    return;
  }
  int64_t gap = r->elapsed_ns - a->elapsed_ns;
  if (gap == 0) {
    mapopt__sb_puts(b, "A and B take the same time.\n");
  } else {
    const char *faster = gap < 0 ? "B" : "A", *slower = gap < 0 ? "A" : "B";
    int64_t fast = gap < 0 ? r->elapsed_ns : a->elapsed_ns;
    int64_t slow = gap < 0 ? a->elapsed_ns : r->elapsed_ns;
    mapopt__sb_printf(b, "%s is %.2fx as fast as %s (", faster,
                      fast > 0 ? (double)slow / (double)fast : 0.0, slower);
    put_delta_ns(b, gap);
    mapopt__sb_puts(b, " from A to B).\n");
  }
  for (size_t i = 0; i < mapopt_sim_result_ntop(a); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(a, i);
    task_diff(d, t, mapopt_sim_result_task_named(r, t->task));
  }
  for (size_t i = 0; i < mapopt_sim_result_ntop(r); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(r, i);
    if (!mapopt_sim_result_task_named(a, t->task))
      task_diff(d, NULL, t);
  }
  channel_diffs(d, a, r);
  memory_diffs(d, a, r);
  path_diffs(d, &a->critical_path, &r->critical_path);
  if (d->failed)
    return;
  qsort(d->v, d->n, sizeof *d->v, cmp_diff);
  enum { MAX_SHOWN = 16 };
  size_t shown = 0, more = 0;
  for (size_t i = 0; i < d->n; i++) {
    if (!d->v[i].changed)
      continue;
    if (shown == MAX_SHOWN) {
      more++;
      continue;
    }
    if (!shown)
      mapopt__sb_puts(b, "\nWhat differs, the largest change first "
                         "(A -> B):\n");
    mapopt__sb_printf(b, "  %s\n", d->v[i].text);
    shown++;
  }
  if (!shown)
    mapopt__sb_puts(b, "Nothing in the profiles differs.\n");
  if (more)
    mapopt__sb_printf(b, "  (%zu smaller differences not shown)\n", more);
}

mapopt_status mapopt_guide_compare(mapopt_ctx *ctx, const mapopt_sim_result *a,
                                   const char *label_a,
                                   const mapopt_sim_result *b,
                                   const char *label_b, char **text) {
  if (!ctx || !a || !b || !text)
    return MAPOPT_EINVAL;
  sb_t out;
  mapopt__sb_init(&out, ctx);
  diffs d = {.ctx = ctx};
  compare(&out, &d, a, label_a ? label_a : "A", b, label_b ? label_b : "B");
  for (size_t i = 0; i < d.n; i++)
    mapopt__free(ctx, d.v[i].text, strlen(d.v[i].text) + 1);
  mapopt__free(ctx, d.v, d.cap * sizeof *d.v);
  if (d.failed) {
    mapopt__sb_destroy(&out);
    return MAPOPT_ENOMEM;
  }
  char *t = mapopt__text_take(&out, NULL);
  if (!t)
    return MAPOPT_ENOMEM;
  *text = t;
  return MAPOPT_OK;
}
