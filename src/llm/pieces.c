/*
 * Which piece of which partition each point of a task uses, for the
 * application section of the prompt (docs/llm.md, "What the prompt contains"),
 * computed from the instantiated run rather than read from the model, so that
 * it says what the simulator runs: every op of the task is one observation, its
 * context -- the launch point (i, j, k) of an index launch; for a single
 * launch, the launching task's point and n, the launch's order among that
 * task's launches of it -- against the colour of the piece an argument uses.
 * Each colour coordinate is fitted as an integer affine function of the context
 * and the fit is checked against every op; where none fits (a modulo, a table),
 * one example is given instead.
 */
#include <inttypes.h>
#include <string.h>

#include "llm/llm.h"

enum { MAX_VARS = MAPOPT_APP_MAX_DIMS + 1 };

/* How the ops of a task are described: their variables. */
typedef struct context {
  int nvars;
  bool has_n; /* the last variable is n */
  int64_t last_parent;
  int64_t n;
} context;

/* The context of op o: its variables in x. */
static void context_of(const mapopt_app_run *run, const mapopt_app_op *o,
                       context *c, int64_t *x) {
  if (o->is_index) {
    c->nvars = o->dims;
    c->has_n = false;
    memcpy(x, o->point, sizeof(int64_t) * (size_t)o->dims);
    return;
  }
  /* A single launch: counted among the task's launches by the same
   * parent, which follow each other in the run's order. */
  c->n = o->parent == c->last_parent ? c->n + 1 : 0;
  c->last_parent = o->parent;
  const mapopt_app_op *p =
      o->parent >= 0 ? mapopt_app_run_op(run, o->parent) : NULL;
  int dims = p && p->is_index ? p->dims : 0;
  memcpy(x, p ? p->point : o->point, sizeof(int64_t) * (size_t)dims);
  x[dims] = c->n;
  c->nvars = dims + 1;
  c->has_n = true;
}

/* The colour of a piece as a point of its partition's colour space. */
static int colour_of(const mapopt_app_run *run, const mapopt_app_piece *pc,
                     int64_t *y) {
  const mapopt_app_colors *cs =
      mapopt_app_run_partition_colors(run, pc->partition);
  int64_t rest = pc->color;
  for (int d = 0; d < cs->dims; d++) {
    y[d] = cs->extents[d] > 0 ? rest % cs->extents[d] : 0;
    rest = cs->extents[d] > 0 ? rest / cs->extents[d] : 0;
  }
  return cs->dims;
}

/*
 * A fit of each colour coordinate d to the context x: plain, y[d] = b +
 * sum a[v] x[v]; or, where that fails, modulo the coordinate's extent E,
 * y[d] = (b + sum a[v] x[v]) mod E (a piece chosen round-robin). The
 * slopes come from ops that differ from the first in one variable alone.
 */
typedef struct coord_fit {
  int64_t a[MAX_VARS], b, am[MAX_VARS], bm, extent;
  bool plain, mod;
  bool found[MAX_VARS], found_mod[MAX_VARS];
} coord_fit;

typedef struct fit {
  int nvars, dims;
  bool has_n;
  int partition; /* -1: the whole region; -2: partitions differ */
  int64_t x0[MAX_VARS], y0[MAPOPT_APP_MAX_DIMS];
  coord_fit c[MAPOPT_APP_MAX_DIMS];
  bool missed; /* an op neither fit of some coordinate gives */
  int64_t bad_x[MAX_VARS], bad_y[MAPOPT_APP_MAX_DIMS];
} fit;

/* Whether op o is one of task t's with argument arg. */
static const mapopt_app_req *req_of(const mapopt_app_op *o, int t, size_t arg) {
  return o->kind == MAPOPT_OP_TASK && o->task == t && o->nreqs > arg
             ? mapopt_app_op_req(o, arg)
             : NULL;
}

static int64_t modulo(int64_t v, int64_t e) {
  return e > 0 ? ((v % e) + e) % e : 0;
}

/* The slopes of coordinate d from an op that differs from the first in
 * variable v alone, by dx. */
static void learn_slopes(coord_fit *c, int v, int64_t dx, int64_t dy) {
  if (!c->found[v]) {
    c->found[v] = true;
    c->plain = c->plain && dy % dx == 0;
    c->a[v] = dy / dx;
  }
  if (!c->found_mod[v] && (dx == 1 || dx == -1)) {
    c->found_mod[v] = true;
    c->am[v] = modulo(dy * dx, c->extent);
  }
}

static void check_op(fit *f, const int64_t *x, const int64_t *y) {
  for (int d = 0; d < f->dims; d++) {
    coord_fit *c = &f->c[d];
    int64_t want = c->b, want_mod = c->bm;
    for (int v = 0; v < f->nvars; v++) {
      want += c->a[v] * x[v];
      want_mod += c->am[v] * x[v];
    }
    c->plain = c->plain && want == y[d];
    c->mod = c->mod && modulo(want_mod, c->extent) == y[d];
    if (!c->plain && !c->mod && !f->missed) {
      f->missed = true;
      memcpy(f->bad_x, x, sizeof f->bad_x);
      memcpy(f->bad_y, y, sizeof f->bad_y);
    }
  }
}

static void fit_ops(const mapopt_app_run *run, int t, size_t arg, fit *f) {
  *f = (fit){.partition = -3};
  context c = {.last_parent = -2};
  int64_t x[MAX_VARS] = {0}, y[MAPOPT_APP_MAX_DIMS] = {0};
  /* Pass 1: the first op and the slopes. */
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_req *r = req_of(mapopt_app_run_op(run, i), t, arg);
    if (!r)
      continue;
    context_of(run, mapopt_app_run_op(run, i), &c, x);
    int part = r->piece->partition;
    if (f->partition == -3) {
      f->partition = part;
      f->nvars = c.nvars;
      f->has_n = c.has_n;
      memcpy(f->x0, x, sizeof x);
      if (part >= 0)
        f->dims = colour_of(run, r->piece, f->y0);
      for (int d = 0; d < f->dims; d++)
        f->c[d] = (coord_fit){
            .plain = true,
            .mod = true,
            .extent = mapopt_app_run_partition_colors(run, part)->extents[d]};
      continue;
    }
    if (part != f->partition || c.nvars != f->nvars || c.has_n != f->has_n) {
      f->partition = -2;
      return;
    }
    int differ = -1, count = 0;
    for (int v = 0; v < c.nvars; v++)
      if (x[v] != f->x0[v])
        differ = v, count++;
    if (part < 0 || count != 1)
      continue;
    colour_of(run, r->piece, y);
    for (int d = 0; d < f->dims; d++)
      learn_slopes(&f->c[d], differ, x[differ] - f->x0[differ],
                   y[d] - f->y0[d]);
  }
  if (f->partition < 0)
    return;
  for (int d = 0; d < f->dims; d++) {
    coord_fit *cf = &f->c[d];
    cf->b = cf->bm = f->y0[d];
    for (int v = 0; v < f->nvars; v++) {
      cf->b -= cf->a[v] * f->x0[v];
      cf->bm -= cf->am[v] * f->x0[v];
    }
    cf->bm = modulo(cf->bm, cf->extent);
  }
  /* Pass 2: every op. */
  c = (context){.last_parent = -2};
  for (int64_t i = 0; i < run->nops && !f->missed; i++) {
    const mapopt_app_req *r = req_of(mapopt_app_run_op(run, i), t, arg);
    if (!r)
      continue;
    context_of(run, mapopt_app_run_op(run, i), &c, x);
    colour_of(run, r->piece, y);
    check_op(f, x, y);
  }
}

static const char *const var_names[MAPOPT_APP_MAX_DIMS] = {"i", "j", "k"};

static const char *var_name(const fit *f, int v) {
  return f->has_n && v == f->nvars - 1 ? "n" : var_names[v];
}

/* b + sum a[v] x[v] as "2*i + 1", "n", "0". */
static void put_affine(mapopt__strbuf *sb, const fit *f, const int64_t *a,
                       int64_t b) {
  bool any = false;
  for (int v = 0; v < f->nvars; v++) {
    if (!a[v])
      continue;
    int64_t mag = a[v] < 0 ? -a[v] : a[v];
    mapopt__sb_puts(sb,
                    any ? (a[v] < 0 ? " - " : " + ") : (a[v] < 0 ? "-" : ""));
    if (mag != 1)
      mapopt__sb_printf(sb, "%" PRId64 "*", mag);
    mapopt__sb_puts(sb, var_name(f, v));
    any = true;
  }
  if (!any)
    mapopt__sb_printf(sb, "%" PRId64, b);
  else if (b)
    mapopt__sb_printf(sb, " %c %" PRId64, b < 0 ? '-' : '+', b < 0 ? -b : b);
}

/* One coordinate: its plain fit, else "(i + j + n) mod 2". */
static void put_coord(mapopt__strbuf *sb, const fit *f, int d) {
  const coord_fit *c = &f->c[d];
  if (c->plain) {
    put_affine(sb, f, c->a, c->b);
    return;
  }
  mapopt__sb_putc(sb, '(');
  put_affine(sb, f, c->am, c->bm);
  mapopt__sb_printf(sb, ") mod %" PRId64, c->extent);
}

static void put_values(mapopt__strbuf *sb, const int64_t *v, int n) {
  for (int d = 0; d < n; d++)
    mapopt__sb_printf(sb, d ? ", %" PRId64 : "%" PRId64, v[d]);
}

/* The partitions of an argument whose ops use several: "; pieces of
 * A_tile, B_tile or C_tile, by launch" (at most four named). */
static void put_partitions(mapopt__strbuf *sb, const mapopt_app_run *run, int t,
                           size_t arg) {
  enum { MAX_NAMED = 4 };
  int seen[MAX_NAMED];
  size_t n = 0, more = 0;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_req *r = req_of(mapopt_app_run_op(run, i), t, arg);
    if (!r)
      continue;
    int p = r->piece->partition;
    bool known = false;
    for (size_t k = 0; k < n && !known; k++)
      known = seen[k] == p;
    if (known)
      continue;
    if (n == MAX_NAMED)
      more++;
    else
      seen[n++] = p;
  }
  mapopt__sb_puts(sb, "; pieces of");
  for (size_t k = 0; k < n; k++)
    mapopt__sb_printf(sb, "%s %s",
                      !k                    ? ""
                      : k + 1 == n && !more ? " or"
                                            : ",",
                      seen[k] < 0
                          ? "the whole region"
                          : mapopt_app_run_partition_name(run, seen[k]));
  if (more)
    mapopt__sb_printf(sb, " and %zu more", more);
  mapopt__sb_puts(sb, ", by launch");
}

bool mapopt__llm_put_piece(mapopt__strbuf *sb, const mapopt_app_run *run, int t,
                           size_t arg, const char *first_name, bool at_name) {
  fit f;
  fit_ops(run, t, arg, &f);
  const char *name =
      f.partition >= 0 ? mapopt_app_run_partition_name(run, f.partition) : "";
  bool named = first_name && !strcmp(first_name, name);
  if (f.partition == -3 || at_name != named)
    return false; /* no op has the argument, or the other call's part */
  if (f.partition == -1) {
    mapopt__sb_puts(sb, "; the whole region");
    return true;
  }
  if (f.partition < 0) {
    put_partitions(sb, run, t, arg);
    return true;
  }
  if (!named)
    mapopt__sb_printf(sb, "; piece %s", name);
  mapopt__sb_putc(sb, '[');
  if (!f.missed) {
    for (int d = 0; d < f.dims; d++) {
      if (d)
        mapopt__sb_puts(sb, ", ");
      put_coord(sb, &f, d);
    }
    mapopt__sb_putc(sb, ']');
    return true;
  }
  /* No fit: the first op and one that the fits miss, as examples. */
  put_values(sb, f.y0, f.dims);
  mapopt__sb_puts(sb, "] at (");
  put_values(sb, f.x0, f.nvars);
  mapopt__sb_puts(sb, "), [");
  put_values(sb, f.bad_y, f.dims);
  mapopt__sb_puts(sb, "] at (");
  put_values(sb, f.bad_x, f.nvars);
  mapopt__sb_puts(sb, "), ...");
  return true;
}

typedef struct body_item {
  int task;
  bool is_index;
  int64_t count, launch;
} body_item;

/* An inner task's body: what its first point launches, in order; a run
 * of single launches of one task is one item, an index launch (all its
 * points) another. */
void mapopt__llm_put_body(mapopt__strbuf *sb, const mapopt_app_run *run,
                          int t) {
  int64_t first = -1;
  for (int64_t i = 0; i < run->nops && first < 0; i++)
    if (mapopt_app_run_op(run, i)->kind == MAPOPT_OP_TASK &&
        mapopt_app_run_op(run, i)->task == t)
      first = i;
  enum { MAX_ITEMS = 12 };
  body_item items[MAX_ITEMS];
  size_t n = 0, more = 0;
  for (int64_t i = first + 1; first >= 0 && i < run->nops; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->parent != first || o->kind != MAPOPT_OP_TASK)
      continue;
    if (n && items[n - 1].task == o->task &&
        items[n - 1].is_index == o->is_index &&
        (!o->is_index || items[n - 1].launch == o->launch)) {
      items[n - 1].count += !o->is_index;
      continue;
    }
    if (n == MAX_ITEMS) {
      more++;
      continue;
    }
    items[n++] = (body_item){o->task, o->is_index, 1, o->launch};
  }
  if (!n)
    return;
  mapopt__sb_puts(sb, "Each point launches, in order:");
  for (size_t k = 0; k < n; k++) {
    mapopt__sb_printf(sb, "%s %s", k ? "," : "",
                      mapopt_app_task_name(run, items[k].task));
    if (items[k].is_index)
      mapopt__sb_puts(sb, " (an index launch)");
    else if (items[k].count > 1)
      mapopt__sb_printf(sb, " x%" PRId64 " (n = 0 to %" PRId64 ")",
                        items[k].count, items[k].count - 1);
  }
  if (more)
    mapopt__sb_printf(sb, " and %zu more", more);
  mapopt__sb_puts(sb, ".\n");
}
