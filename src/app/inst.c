/*
 * Instantiation: a loaded model plus a size, parameter overrides, iteration
 * counts and the machine's shape become a mapopt_app_run -- every expression
 * evaluated, atoms and pieces laid out, every loop unrolled and every inner
 * task's body expanded into the flat list of ops in canonical order (program
 * order, children right after their parent, depth first).
 *
 * The value-dependent validation of the model happens here:
 * colours inside colour spaces, writes through whole atoms only, atom grids
 * that divide evenly, and totality (overflow or division by zero anywhere is
 * a MODEL error naming the expression, its place in the file, and the point
 * or colour being evaluated).
 *
 * Absurd sizes are refused before anything big is allocated: a counting
 * pass estimates the ops and loop iterations first, and every allocation of
 * the run goes through a byte budget (options max_ops and max_bytes).
 *
 * What it does not do: dependence analysis and anything mapping-dependent
 * (the simulator's job). The run owns copies of every string it exposes,
 * so it may outlive the app.
 */
#include "app/app.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct run_impl {
  mapopt_app_run pub;
  mapopt_ctx *ctx;
  mapopt__arena arena;
  mapopt_app_op *ops;
  size_t ops_cap;
} run_impl;

typedef struct tctx {
  int64_t iteration; /* -1 outside the time-step loop */
  bool iter_timed;
  bool traced;
  bool in_block; /* inside a timed block */
  int64_t parent;
} tctx;

typedef struct inst {
  const mapopt_app *app;
  run_impl *ri;
  mapopt_app_run *run;
  mapopt_diags *diags;
  mapopt_status status;
  int64_t max_ops, max_bytes;
  int64_t *params;
  mapopt__app_env env;
  /* Atoms and pieces. */
  int64_t **group_base;                 /* [region][group]: first atom */
  int64_t **group_count;                /* [region][group] */
  int64_t (*grid)[MAPOPT_APP_MAX_DIMS]; /* [region]: atoms per dim */
  int64_t *part_base;                   /* first piece id */
  int64_t (*part_ext)[MAPOPT_APP_MAX_DIMS];
  bool *piece_whole; /* every atom of the piece whole */
  mapopt_app_piece *pieces;
  /* Expansion. */
  int64_t nwarm, ntimed;
  int64_t nlaunch;
  int64_t *latest; /* per future name: the last produced future, or -1 */
  const char *const **req_names; /* per requirement gid, copied lazily */
  mapopt_app_task *tasks;
  int64_t est_iters;
  /* Where an evaluation happens, for messages. */
  const char *site_task;
  int site_dims;
  int64_t site_point[MAPOPT_APP_MAX_DIMS];
  const char *site_part;
} inst;

/* ---- errors -------------------------------------------------------------- */

static bool ierr(inst *I, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool ierr(inst *I, int line, int col, const char *fmt, ...) {
  if (I->status == MAPOPT_OK) {
    va_list ap;
    va_start(ap, fmt);
    mapopt_status st = mapopt_diags_addv(I->diags, MAPOPT_SEV_ERROR, "",
                                         I->app->file, line, col, fmt, ap);
    va_end(ap);
    I->status = st == MAPOPT_OK ? MAPOPT_EINVAL : MAPOPT_ENOMEM;
  }
  return false;
}

static bool nomem(inst *I) {
  if (I->status == MAPOPT_OK)
    I->status = MAPOPT_ENOMEM;
  return false;
}

/* " at point (1, 2) of the index launch of "t"" and the like. */
/* Where the evaluation in progress happens, for messages: "" or " at point
 * (1, 2) of the index launch of "t"" (in the run's arena). */
static const char *site(inst *I) {
  if (!I->site_part && !I->site_task)
    return "";
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, I->ri->ctx);
  if (!I->site_part && !I->site_dims) {
    mapopt__sb_printf(&sb, " in the single launch of \"%s\"", I->site_task);
  } else {
    mapopt__sb_printf(&sb, " at %s (", I->site_part ? "colour" : "point");
    for (int d = 0; d < I->site_dims; d++)
      mapopt__sb_printf(&sb, "%s%" PRId64, d ? ", " : "", I->site_point[d]);
    if (I->site_part)
      mapopt__sb_printf(&sb, ") of partition \"%s\"", I->site_part);
    else
      mapopt__sb_printf(&sb, ") of the index launch of \"%s\"", I->site_task);
  }
  const char *where =
      sb.failed || !sb.data
          ? NULL
          : mapopt__arena_strndup(&I->ri->arena, sb.data, sb.len);
  mapopt__sb_destroy(&sb);
  if (!where)
    nomem(I);
  return where ? where : "";
}

static bool eval(inst *I, const mapopt__app_expr *e, int64_t *out) {
  if (mapopt__app_expr_eval(e, &I->env, out))
    return true;
  static const char *const kinds[] = {"", "integer overflow",
                                      "division by zero", "undefined name",
                                      "no such argument"};
  char ex[MAPOPT__APP_EXCERPT];
  ierr(I, e->line, mapopt__app_expr_col(e, I->env.err_off),
       "%s in expression \"%s\" (%s)%s", kinds[I->env.err],
       mapopt__app_expr_excerpt(e, ex), e->what, site(I));
  I->env.err = EVAL_OK;
  return false;
}

/* An expression that must be >= 0 (counts, extents, sizes, costs). */
static bool eval_nn(inst *I, const mapopt__app_expr *e, int64_t *out) {
  if (!eval(I, e, out))
    return false;
  if (*out < 0) {
    char ex[MAPOPT__APP_EXCERPT];
    return ierr(I, e->line, e->col,
                "expression \"%s\" (%s) is %" PRId64 ", and must not be "
                "negative%s",
                mapopt__app_expr_excerpt(e, ex), e->what, *out, site(I));
  }
  return true;
}

static bool bind(inst *I, int32_t sym, int64_t v) {
  if (I->env.n >= MAPOPT__ENV_MAX)
    return ierr(I, 0, 0, "names nested too deeply");
  I->env.sym[I->env.n] = sym;
  I->env.val[I->env.n++] = v;
  return true;
}

/* ---- memory with a budget ------------------------------------------------ */

static int64_t used_bytes(const inst *I) {
  return (int64_t)I->ri->arena.total +
         (int64_t)(I->ri->ops_cap * sizeof(mapopt_app_op));
}

static bool over_budget(inst *I, int64_t more) {
  if (more < 0 || used_bytes(I) > I->max_bytes - more) {
    ierr(I, 0, 0,
         "refusing to instantiate \"%s\": the run would need more "
         "than %" PRId64 " bytes (the limit; options max_bytes)",
         I->app->name, I->max_bytes);
    return true;
  }
  return false;
}

static void *balloc(inst *I, int64_t n, size_t size) {
  if (n < 0 || (size && n > INT64_MAX / (int64_t)size)) {
    over_budget(I, -1);
    return NULL;
  }
  int64_t bytes = n * (int64_t)size;
  if (over_budget(I, bytes))
    return NULL;
  void *p = mapopt__arena_alloc(&I->ri->arena, bytes ? (size_t)bytes : 1);
  if (!p)
    nomem(I);
  return p;
}

static const char *rdup(inst *I, const char *s) {
  if (!s)
    return NULL;
  char *d = mapopt__arena_strndup(&I->ri->arena, s, strlen(s));
  if (!d)
    nomem(I);
  return d;
}

/* ---- parameters and the spec --------------------------------------------- */

static bool parse_value(const char *s, size_t n, int64_t *out) {
  size_t i = 0;
  bool neg = false;
  if (i < n && (s[i] == '-' || s[i] == '+'))
    neg = s[i++] == '-';
  if (i >= n || s[i] < '0' || s[i] > '9')
    return false;
  int64_t v = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
    if (mapopt__mul_ovf(v, 10, &v) || mapopt__add_ovf(v, s[i] - '0', &v))
      return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && s[i] == '+')
      i++;
    if (i >= n)
      return false;
    int64_t ex = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
      ex = ex * 10 + (s[i] - '0');
      if (ex > 100)
        return false;
    }
    for (int64_t k = 0; k < ex; k++)
      if (mapopt__mul_ovf(v, 10, &v))
        return false;
  }
  if (i != n)
    return false;
  *out = neg ? -v : v;
  return true;
}

static bool apply_size(inst *I, const mapopt__app_size *sz) {
  for (size_t i = 0; i < sz->n; i++)
    I->params[sz->param[i]] = sz->value[i];
  I->run->size = rdup(I, sz->name);
  return I->status == MAPOPT_OK;
}

static bool apply_spec(inst *I, const char *spec) {
  const mapopt_app *app = I->app;
  const mapopt__app_size *size = NULL;
  bool *given = balloc(I, app->nparams, sizeof *given);
  if (!given)
    return false;
  memset(given, 0, (size_t)(app->nparams ? app->nparams : 1) * sizeof *given);
  for (int pass = 0; pass < 2; pass++) {
    const char *p = spec ? spec : "";
    bool first = true;
    while (*p) {
      const char *e = strchr(p, ',');
      size_t n = e ? (size_t)(e - p) : strlen(p);
      const char *eq = memchr(p, '=', n);
      if (n == 0) {
        /* empty item: ignored */
      } else if (!eq && pass == 0) {
        if (!first)
          return ierr(I, 0, 0, "size \"%.*s\" must come first in \"%s\"",
                      (int)n, p, spec);
        for (int s = 0; s < app->nsizes; s++)
          if (strlen(app->sizes[s].name) == n &&
              memcmp(app->sizes[s].name, p, n) == 0)
            size = &app->sizes[s];
        if (!size) {
          mapopt__strbuf list;
          mapopt__sb_init(&list, I->ri->ctx);
          for (int s = 0; s < app->nsizes; s++)
            mapopt__sb_printf(&list, "%s%s", s ? ", " : "", app->sizes[s].name);
          if (list.failed)
            nomem(I);
          ierr(I, 0, 0, "unknown size \"%.*s\" of \"%s\" (sizes: %s)", (int)n,
               p, app->name, list.data ? list.data : "");
          mapopt__sb_destroy(&list);
          return false;
        }
      } else if (eq && pass == 1) {
        size_t kn = (size_t)(eq - p);
        int k = -1;
        for (int q = 0; q < app->nparams; q++)
          if (strlen(app->params[q].name) == kn &&
              memcmp(app->params[q].name, p, kn) == 0)
            k = q;
        for (int j = 0; k < 0 && j < app->nderived; j++)
          if (strlen(app->derived[j].name) == kn &&
              memcmp(app->derived[j].name, p, kn) == 0)
            return ierr(I, 0, 0,
                        "parameter \"%.*s\" of \"%s\" is derived: it is "
                        "computed from its expression, not set",
                        (int)kn, p, app->name);
        if (k < 0) {
          mapopt__strbuf list;
          mapopt__sb_init(&list, I->ri->ctx);
          for (int q = 0; q < app->nparams; q++)
            mapopt__sb_printf(&list, "%s%s", q ? ", " : "",
                              app->params[q].name);
          if (list.failed)
            nomem(I);
          ierr(I, 0, 0, "unknown parameter \"%.*s\" of \"%s\" (parameters: %s)",
               (int)kn, p, app->name, list.data ? list.data : "");
          mapopt__sb_destroy(&list);
          return false;
        }
        if (given[k])
          return ierr(I, 0, 0, "parameter \"%.*s\" is given twice in \"%s\"",
                      (int)kn, p, spec);
        given[k] = true;
        int64_t v;
        if (!parse_value(eq + 1, n - kn - 1, &v))
          return ierr(I, 0, 0,
                      "malformed value \"%.*s\" for parameter \"%.*s\" (an "
                      "integer such as 4096 or 1e6, within 64 bits)",
                      (int)(n - kn - 1), eq + 1, (int)kn, p);
        I->params[k] = v;
      }
      if (n)
        first = false;
      p += n;
      if (*p == ',')
        p++;
    }
    if (pass == 0) {
      if (!size)
        for (int s = 0; s < app->nsizes; s++)
          if (strcmp(app->sizes[s].name, "paper") == 0)
            size = &app->sizes[s];
      if (size && !apply_size(I, size))
        return false;
    }
  }
  return true;
}

/* ---- atoms and pieces ---------------------------------------------------- */

static bool layout_atoms(inst *I) {
  const mapopt_app *app = I->app;
  mapopt_app_run *run = I->run;
  int nr = app->nregions;
  mapopt_app_region *regs = balloc(I, nr, sizeof *regs);
  I->group_base = balloc(I, nr, sizeof *I->group_base);
  I->group_count = balloc(I, nr, sizeof *I->group_count);
  I->grid = balloc(I, nr, sizeof *I->grid);
  if (!regs || !I->group_base || !I->group_count || !I->grid)
    return false;
  int64_t total = 0;
  for (int r = 0; r < nr; r++) {
    const mapopt__app_region *ar = &app->regions[r];
    mapopt_app_region *rr = &regs[r];
    rr->name = rdup(I, ar->name);
    rr->nfields = ar->nfields;
    const char **fn = balloc(I, ar->nfields, sizeof *fn);
    int64_t *fb = balloc(I, ar->nfields, sizeof *fb);
    if (!fn || !fb)
      return false;
    for (int f = 0; f < ar->nfields; f++) {
      fn[f] = rdup(I, ar->field_names[f]);
      fb[f] = ar->field_bytes[f];
    }
    rr->field_names = fn;
    rr->field_bytes = fb;
    rr->first_atom = total;
    int64_t n = 0;
    I->group_base[r] = balloc(I, ar->ngroups, sizeof(int64_t));
    I->group_count[r] = balloc(I, ar->ngroups, sizeof(int64_t));
    if (!I->group_base[r] || !I->group_count[r])
      return false;
    for (int g = 0; g < ar->ngroups; g++) {
      int64_t c;
      if (!eval_nn(I, ar->groups[g].count, &c))
        return false;
      I->group_base[r][g] = total + n;
      I->group_count[r][g] = c;
      if (mapopt__add_ovf(n, c, &n))
        return ierr(I, ar->line, ar->col,
                    "region \"%s\" has more than 2^63 "
                    "atoms",
                    ar->name);
    }
    if (ar->grid) {
      n = 1;
      for (int d = 0; d < MAPOPT_APP_MAX_DIMS; d++)
        I->grid[r][d] = 1;
      for (int d = 0; d < ar->gdims; d++) {
        if (!eval_nn(I, ar->gsize[d], &I->grid[r][d]))
          return false;
        if (mapopt__mul_ovf(n, I->grid[r][d], &n))
          return ierr(I, ar->line, ar->col,
                      "region \"%s\" has more than "
                      "2^63 atoms",
                      ar->name);
      }
    }
    rr->natoms = n;
    if (mapopt__add_ovf(total, n, &total))
      return ierr(I, ar->line, ar->col, "the model has more than 2^63 atoms");
  }
  /* Refuse before allocating the per-atom arrays. */
  if (total > (I->max_bytes - used_bytes(I)) / 24)
    return ierr(I, 0, 0,
                "refusing to instantiate \"%s\": %" PRId64 " atoms "
                "would need more than %" PRId64 " bytes (the limit; options "
                "max_bytes)",
                app->name, total, I->max_bytes);
  int *areg = balloc(I, total, sizeof *areg);
  int64_t *ael = balloc(I, total, sizeof *ael);
  if (!areg || !ael)
    return false;
  for (int r = 0; r < nr; r++) {
    const mapopt__app_region *ar = &app->regions[r];
    int64_t first = regs[r].first_atom;
    for (int64_t i = 0; i < regs[r].natoms; i++)
      areg[first + i] = r;
    for (int g = 0; g < ar->ngroups; g++) {
      int64_t el;
      if (!eval_nn(I, ar->groups[g].elements, &el))
        return false;
      for (int64_t i = 0; i < I->group_count[r][g]; i++)
        ael[I->group_base[r][g] + i] = el;
    }
    if (ar->grid) {
      int64_t el = 1;
      if (ar->gelements) {
        if (!eval_nn(I, ar->gelements, &el))
          return false;
      } else {
        for (int d = 0; d < ar->gdims; d++) {
          int64_t ext;
          if (!eval_nn(I, ar->gextent[d], &ext))
            return false;
          int64_t g = I->grid[r][d];
          if (g == 0 || ext % g != 0)
            return ierr(I, ar->gextent[d]->line, ar->gextent[d]->col,
                        "the atom grid of region \"%s\" does not divide "
                        "evenly: extent %" PRId64 " of dimension %d is not a "
                        "multiple of %" PRId64 " atoms",
                        ar->name, ext, d, g);
          if (mapopt__mul_ovf(el, ext / g, &el))
            return ierr(I, ar->line, ar->col,
                        "the atoms of region \"%s\" "
                        "have more than 2^63 elements",
                        ar->name);
        }
      }
      for (int64_t i = 0; i < regs[r].natoms; i++)
        ael[first + i] = el;
    }
  }
  run->nregions = nr;
  run->regions = regs;
  run->natoms = total;
  run->atom_region = areg;
  run->atom_elements = ael;
  return I->status == MAPOPT_OK;
}

static int cmp_atom(const void *a, const void *b) {
  const mapopt_app_piece_atom *x = a, *y = b;
  return x->atom < y->atom ? -1 : x->atom > y->atom;
}

/* Fills piece from n (atom, count) pairs: sorted, duplicates merged (the
 * larger count wins: entries describe a union). */
static bool finish_piece(inst *I, mapopt_app_piece *pc,
                         mapopt_app_piece_atom *at, size_t n, bool sorted) {
  if (!sorted && n > 1)
    qsort(at, n, sizeof *at, cmp_atom);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (m && at[m - 1].atom == at[i].atom) {
      if (at[i].count > at[m - 1].count)
        at[m - 1].count = at[i].count;
    } else {
      at[m++] = at[i];
    }
  }
  int64_t el = 0;
  bool whole = true;
  for (size_t i = 0; i < m; i++) {
    if (mapopt__add_ovf(el, at[i].count, &el))
      return ierr(I, 0, 0, "a piece has more than 2^63 elements");
    whole = whole && at[i].count == I->run->atom_elements[at[i].atom];
  }
  pc->natoms = m;
  pc->atoms = at;
  pc->elements = el;
  I->piece_whole[pc->id] = whole;
  return true;
}

static bool piece_of_colour(inst *I, int pi, mapopt_app_piece *pc) {
  const mapopt__app_part *p = &I->app->parts[pi];
  int r = p->region;
  const mapopt__app_region *ar = &I->app->regions[r];
  const mapopt_app_region *rr = &I->run->regions[r];
  if (p->kind == PART_GROUP) {
    mapopt_app_piece_atom *at = balloc(I, 1, sizeof *at);
    if (!at)
      return false;
    at->atom = I->group_base[r][p->group] + pc->color;
    at->count = I->run->atom_elements[at->atom];
    return finish_piece(I, pc, at, 1, true);
  }
  if (p->kind == PART_RECT) {
    int64_t lo[MAPOPT_APP_MAX_DIMS] = {0}, hi[MAPOPT_APP_MAX_DIMS] = {0};
    int64_t vol = 1;
    for (int d = 0; d < ar->gdims; d++) {
      if (!eval(I, p->lo[d], &lo[d]) || !eval(I, p->hi[d], &hi[d]))
        return false;
      /* Clipped to the grid: a halo rectangle may stick out of it. */
      if (lo[d] < 0)
        lo[d] = 0;
      if (hi[d] > I->grid[r][d] - 1)
        hi[d] = I->grid[r][d] - 1;
      int64_t ext = hi[d] >= lo[d] ? hi[d] - lo[d] + 1 : 0;
      vol *= ext; /* each ext <= grid extent, whose product fits */
    }
    mapopt_app_piece_atom *at = balloc(I, vol, sizeof *at);
    if (!at)
      return false;
    int64_t X = I->grid[r][0], Y = ar->gdims > 1 ? I->grid[r][1] : 1;
    size_t k = 0;
    if (vol > 0)
      for (int64_t z = lo[2]; z <= (ar->gdims > 2 ? hi[2] : 0); z++)
        for (int64_t y = lo[1]; y <= (ar->gdims > 1 ? hi[1] : 0); y++)
          for (int64_t x = lo[0]; x <= hi[0]; x++) {
            int64_t a = rr->first_atom + x + X * (y + Y * z);
            at[k++] = (mapopt_app_piece_atom){a, I->run->atom_elements[a]};
          }
    return finish_piece(I, pc, at, k, true);
  }
  mapopt_app_piece_atom *at = balloc(I, p->nentries, sizeof *at);
  if (!at)
    return false;
  size_t k = 0;
  for (int e = 0; e < p->nentries; e++) {
    const mapopt__app_entry *en = &p->entries[e];
    int64_t c[MAPOPT_APP_MAX_DIMS] = {0};
    for (int d = 0; d < en->natom; d++)
      if (!eval(I, en->atom[d], &c[d]))
        return false;
    int64_t a;
    if (en->group >= 0) {
      if (c[0] < 0 || c[0] >= I->group_count[r][en->group])
        continue;
      a = I->group_base[r][en->group] + c[0];
    } else if (en->natom == 1 && ar->gdims != 1) {
      if (c[0] < 0 || c[0] >= rr->natoms)
        continue;
      a = rr->first_atom + c[0];
    } else {
      bool in = true;
      int64_t lin = 0, mul = 1;
      for (int d = 0; d < ar->gdims; d++) {
        in = in && c[d] >= 0 && c[d] < I->grid[r][d];
        lin += c[d] * mul;
        mul *= I->grid[r][d];
      }
      if (!in)
        continue;
      a = rr->first_atom + lin;
    }
    int64_t size = I->run->atom_elements[a], cnt = size;
    if (en->count) {
      if (!eval(I, en->count, &cnt))
        return false;
      if (cnt > size) {
        return ierr(I, en->count->line, en->count->col,
                    "count %" PRId64 " of entry %d of partition \"%s\" exceeds "
                    "the %" PRId64 " elements of its atom%s",
                    cnt, e, p->name, size, site(I));
      }
      if (cnt <= 0)
        continue;
    }
    at[k++] = (mapopt_app_piece_atom){a, cnt};
  }
  return finish_piece(I, pc, at, k, false);
}

static bool layout_pieces(inst *I) {
  const mapopt_app *app = I->app;
  mapopt_app_run *run = I->run;
  int np = app->npartitions;
  I->part_base = balloc(I, np, sizeof *I->part_base);
  I->part_ext = balloc(I, np, sizeof *I->part_ext);
  const char **pnames = balloc(I, np, sizeof *pnames);
  mapopt_app_colors *colors = balloc(I, np, sizeof *colors);
  if (!I->part_base || !I->part_ext || !pnames || !colors)
    return false;
  int64_t total = app->nregions;
  for (int p = 0; p < np; p++) {
    const mapopt__app_part *ap = &app->parts[p];
    pnames[p] = rdup(I, ap->name);
    int64_t n = 1;
    for (int d = 0; d < MAPOPT_APP_MAX_DIMS; d++)
      I->part_ext[p][d] = 1;
    if (ap->kind == PART_GROUP) {
      n = I->group_count[ap->region][ap->group];
      I->part_ext[p][0] = n;
    } else {
      for (int d = 0; d < ap->ncolors; d++) {
        if (!eval_nn(I, ap->colors[d], &I->part_ext[p][d]))
          return false;
        if (mapopt__mul_ovf(n, I->part_ext[p][d], &n))
          return ierr(I, ap->line, ap->col,
                      "partition \"%s\" has more than "
                      "2^63 colours",
                      ap->name);
      }
    }
    colors[p].dims = ap->kind == PART_GROUP ? 1 : ap->ncolors;
    memcpy(colors[p].extents, I->part_ext[p], sizeof colors[p].extents);
    I->part_base[p] = total;
    if (mapopt__add_ovf(total, n, &total))
      return ierr(I, ap->line, ap->col,
                  "the model has more than 2^63 "
                  "pieces");
  }
  if (total >
      (I->max_bytes - used_bytes(I)) / (int64_t)(sizeof(mapopt_app_piece) + 1))
    return ierr(I, 0, 0,
                "refusing to instantiate \"%s\": %" PRId64 " pieces "
                "would need more than %" PRId64 " bytes (the limit; options "
                "max_bytes)",
                app->name, total, I->max_bytes);
  mapopt_app_piece *pieces = balloc(I, total, sizeof *pieces);
  I->piece_whole = balloc(I, total, sizeof *I->piece_whole);
  if (!pieces || !I->piece_whole)
    return false;
  I->pieces = pieces;
  for (int r = 0; r < app->nregions; r++) {
    mapopt_app_piece *pc = &pieces[r];
    *pc = (mapopt_app_piece){.id = r, .region = r, .partition = -1};
    const mapopt_app_region *rr = &run->regions[r];
    mapopt_app_piece_atom *at = balloc(I, rr->natoms, sizeof *at);
    if (!at)
      return false;
    for (int64_t i = 0; i < rr->natoms; i++)
      at[i] = (mapopt_app_piece_atom){rr->first_atom + i,
                                      run->atom_elements[rr->first_atom + i]};
    if (!finish_piece(I, pc, at, (size_t)rr->natoms, true))
      return false;
  }
  for (int p = 0; p < np; p++) {
    const mapopt__app_part *ap = &app->parts[p];
    int64_t n = (p + 1 < np ? I->part_base[p + 1] : total) - I->part_base[p];
    int base = I->env.n;
    I->site_part = ap->name;
    I->site_dims = ap->ncolors;
    for (int d = 0; d < ap->ncolors; d++)
      bind(I, app->csym[d], 0);
    for (int64_t c = 0; c < n; c++) {
      int64_t rest = c;
      for (int d = 0; d < ap->ncolors; d++) {
        I->site_point[d] = rest % I->part_ext[p][d];
        I->env.val[base + d] = I->site_point[d];
        rest /= I->part_ext[p][d];
      }
      mapopt_app_piece *pc = &pieces[I->part_base[p] + c];
      *pc = (mapopt_app_piece){.id = I->part_base[p] + c,
                               .region = ap->region,
                               .partition = p,
                               .color = c};
      if (!piece_of_colour(I, p, pc))
        return false;
    }
    I->env.n = base;
    I->site_part = NULL;
    I->site_dims = 0;
  }
  run->npartitions = np;
  run->partition_names = pnames;
  run->partition_colors = colors;
  run->npieces = total;
  run->pieces = pieces;
  return I->status == MAPOPT_OK;
}

/* ---- tasks --------------------------------------------------------------- */

static int64_t ppm(double x) {
  return mapopt__round_i64(x * 1e6);
}

static bool copy_rules(inst *I, const mapopt__app_rule *in, size_t n,
                       const mapopt_app_layout_rule **out) {
  mapopt_app_layout_rule *r = balloc(I, (int64_t)n, sizeof *r);
  if (!r)
    return false;
  for (size_t i = 0; i < n; i++)
    r[i] = (mapopt_app_layout_rule){in[i].args, in[i].soa, in[i].c_order,
                                    in[i].error, ppm(in[i].penalty)};
  *out = r;
  return true;
}

static bool copy_tasks(inst *I) {
  const mapopt_app *app = I->app;
  mapopt_app_task *tasks = balloc(I, app->ntasks, sizeof *tasks);
  if (!tasks)
    return false;
  for (int t = 0; t < app->ntasks; t++) {
    const mapopt__app_task *at = &app->tasks[t];
    mapopt_app_variant *vs = balloc(I, at->nvariants, sizeof *vs);
    if (!vs)
      return false;
    for (int v = 0; v < at->nvariants; v++) {
      const mapopt__app_variant *av = &at->variants[v];
      vs[v] = (mapopt_app_variant){.kind = av->kind,
                                   .inner = av->inner,
                                   .f32 = av->f32,
                                   .matrix = av->matrix,
                                   .flops_eff_ppm = ppm(av->flops_eff),
                                   .mem_eff_ppm = ppm(av->mem_eff),
                                   .nrequires = av->nrequires,
                                   .nprefers = av->nprefers};
      if (!copy_rules(I, av->requires, av->nrequires, &vs[v].requires) ||
          !copy_rules(I, av->prefers, av->nprefers, &vs[v].prefers))
        return false;
    }
    tasks[t] = (mapopt_app_task){rdup(I, at->name), at->nvariants, vs,
                                 at->kinds, at->inner};
  }
  I->tasks = tasks;
  I->run->ntasks = app->ntasks;
  I->run->tasks = tasks;
  return I->status == MAPOPT_OK;
}

/* ---- estimate ---------------------------------------------------------- */

/* Counts are >= 0; a non-positive factor counts nothing. */
static int64_t sat_mul(int64_t a, int64_t b) {
  return a <= 0 || b <= 0 ? 0 : mapopt__sat_mul(a, b);
}

/* A quiet evaluation for the estimate: failures count as 0 (the real pass
 * reports them). */
static int64_t qeval(inst *I, const mapopt__app_expr *e) {
  int64_t v;
  if (!e || !mapopt__app_expr_eval(e, &I->env, &v)) {
    I->env.err = EVAL_OK;
    return 0;
  }
  return v < 0 ? 0 : v;
}

/* Ops of statements, with loop variables and points bound to 0 and bodies
 * counted once per repetition: exact unless counts depend on them. */
static int64_t est_stmts(inst *I, const mapopt__app_stmt *sts, int n,
                         int64_t mult) {
  int64_t ops = 0;
  for (int i = 0; i < n; i++) {
    const mapopt__app_stmt *st = &sts[i];
    int base = I->env.n;
    switch (st->kind) {
    case ST_INDEX:
    case ST_SINGLE: {
      int64_t vol = 1;
      for (int d = 0; d < st->ndims; d++)
        vol = sat_mul(vol, qeval(I, st->domain[d]));
      const mapopt__app_task *t = &I->app->tasks[st->task];
      int64_t per = 1;
      if (t->has_body && vol > 0) {
        for (int d = 0; d < st->ndims && I->env.n < MAPOPT__ENV_MAX - 8; d++)
          bind(I, st->point_sym[d], 0);
        for (int d = 0; d < t->npoint; d++)
          bind(I, t->point_sym[d], 0);
        per = mapopt__sat_add(
            1, est_stmts(I, t->body, t->nbody, sat_mul(mult, vol)));
      }
      ops = mapopt__sat_add(
          ops, mapopt__sat_add(sat_mul(vol, per), st->future >= 0));
      break;
    }
    case ST_FILL:
    case ST_FENCE:
      ops = mapopt__sat_add(ops, 1);
      break;
    case ST_TIMED:
      ops = mapopt__sat_add(
          ops, mapopt__sat_add(2, est_stmts(I, st->body, st->nbody, mult)));
      break;
    case ST_LOOP: {
      int64_t count = st == I->app->tsloop
                          ? mapopt__sat_add(I->nwarm, I->ntimed)
                          : qeval(I, st->count);
      I->est_iters = mapopt__sat_add(I->est_iters, sat_mul(mult, count));
      if (count > 0) {
        bind(I, st->var_sym, 0);
        ops = mapopt__sat_add(ops,
                              sat_mul(count, est_stmts(I, st->body, st->nbody,
                                                       sat_mul(mult, count))));
      }
      if (st == I->app->tsloop && I->app->timing == MAPOPT_TIMING_WINDOW &&
          I->nwarm > 0 && I->ntimed > 0) /* the fence opening the window */
        ops = mapopt__sat_add(ops, 1);
      break;
    }
    }
    I->env.n = base;
  }
  return ops;
}

/* ---- expansion ----------------------------------------------------------- */

static int64_t push_op(inst *I, mapopt_op_kind kind, const tctx *c,
                       int64_t launch) {
  run_impl *ri = I->ri;
  mapopt_app_run *run = I->run;
  if (run->nops >= I->max_ops) {
    ierr(I, 0, 0,
         "refusing to instantiate \"%s\": more than %" PRId64
         " ops (the limit; options max_ops)",
         I->app->name, I->max_ops);
    return -1;
  }
  if ((size_t)run->nops == ri->ops_cap) {
    size_t ncap = ri->ops_cap ? ri->ops_cap * 2 : 256;
    if ((int64_t)ncap > I->max_ops)
      ncap = (size_t)I->max_ops;
    if (over_budget(I, (int64_t)((ncap - ri->ops_cap) * sizeof(mapopt_app_op))))
      return -1;
    mapopt_app_op *nops = mapopt__grow_block(
        ri->ctx, ri->ops, ri->ops_cap * sizeof *nops, ncap * sizeof *nops);
    if (!nops) {
      nomem(I);
      return -1;
    }
    ri->ops = nops;
    ri->ops_cap = ncap;
    run->ops = nops;
  }
  int64_t idx = run->nops++;
  mapopt_app_op *op = &ri->ops[idx];
  memset(op, 0, sizeof *op);
  op->kind = kind;
  op->task = -1;
  op->parent = c->parent;
  op->launch = launch;
  op->future = -1;
  op->timing.iteration = c->iteration;
  op->timing.timed = I->app->timing == MAPOPT_TIMING_WINDOW
                         ? c->iter_timed
                         : c->iter_timed && c->in_block;
  op->timing.traced = c->traced;
  op->timing.repetition =
      I->app->timing == MAPOPT_TIMING_FENCED ? c->iteration : -1;
  return idx;
}

static const char *const *req_names(inst *I, const mapopt__app_req *rq) {
  if (I->req_names[rq->gid])
    return I->req_names[rq->gid];
  const char **names = balloc(I, (int64_t)rq->nall, sizeof *names);
  if (!names)
    return NULL;
  for (size_t i = 0; i < rq->nall; i++)
    if (!(names[i] = rdup(I, rq->all[i])))
      return NULL;
  I->req_names[rq->gid] = names;
  return names;
}

/* The piece requirement k of statement st reaches at the current point. */
static const mapopt_app_piece *resolve(inst *I, const mapopt__app_stmt *st,
                                       const mapopt__app_req *rq, int k,
                                       const int64_t *point) {
  if (rq->part < 0)
    return &I->pieces[rq->region];
  const mapopt__app_part *p = &I->app->parts[rq->part];
  int64_t c[MAPOPT_APP_MAX_DIMS] = {0};
  int nd = p->ncolors;
  for (int d = 0; d < nd; d++) {
    if (rq->identity)
      c[d] = point[d];
    else if (!eval(I, rq->proj[d], &c[d]))
      return NULL;
  }
  int64_t lin = 0, mul = 1;
  bool in = true;
  for (int d = 0; d < nd; d++) {
    in = in && c[d] >= 0 && c[d] < I->part_ext[rq->part][d];
    lin += c[d] * mul;
    mul *= I->part_ext[rq->part][d];
  }
  if (!in) {
    /* At most MAPOPT_APP_MAX_DIMS numbers each: the buffers always fit. */
    char col[96] = "", space[96] = "";
    for (int d = 0; d < nd; d++) {
      snprintf(col + strlen(col), sizeof col - strlen(col), "%s%" PRId64,
               d ? ", " : "", c[d]);
      snprintf(space + strlen(space), sizeof space - strlen(space),
               "%s%" PRId64, d ? ", " : "", I->part_ext[rq->part][d]);
    }
    ierr(I, rq->line, rq->col,
         "the projection of %s %d gives colour (%s), outside the colour space "
         "[%s] of partition \"%s\"%s",
         st->kind == ST_FILL ? "the fill's requirement" : "argument", k, col,
         space, p->name, site(I));
    return NULL;
  }
  return &I->pieces[I->part_base[rq->part] + lin];
}

/* Builds requirement k of an op; elems/fbytes are recorded for costs. */
static bool build_req(inst *I, const mapopt__app_stmt *st, int k,
                      const int64_t *point, mapopt_app_req *out, int64_t *elems,
                      int64_t *fbytes) {
  const mapopt__app_req *rq = &st->args[k];
  const mapopt_app_piece *pc = resolve(I, st, rq, k, point);
  if (!pc)
    return false;
  if ((rq->priv == MAPOPT_PRIV_RW || rq->priv == MAPOPT_PRIV_WD) &&
      !I->piece_whole[pc->id]) {
    size_t j = 0;
    while (j + 1 < pc->natoms &&
           pc->atoms[j].count == I->run->atom_elements[pc->atoms[j].atom])
      j++;
    return ierr(
        I, rq->line, rq->col,
        "%s %d writes (%s) through partition \"%s\" colour %" PRId64
        ", which covers only %" PRId64 " of the %" PRId64
        " elements of atom %" PRId64 " (writes need whole atoms)%s",
        st->kind == ST_FILL ? "the fill's requirement" : "argument", k,
        mapopt_app_priv_name(rq->priv), I->app->parts[rq->part].name, pc->color,
        pc->atoms[j].count, I->run->atom_elements[pc->atoms[j].atom],
        pc->atoms[j].atom - I->run->regions[pc->region].first_atom, site(I));
  }
  const char *const *names = req_names(I, rq);
  if (!names)
    return false;
  *out = (mapopt_app_req){.piece = pc,
                          .fields = rq->fields,
                          .priv = rq->priv,
                          .redop = rq->redop,
                          .simultaneous = rq->simultaneous,
                          .names = names,
                          .nnames = rq->nall};
  elems[k] = pc->elements;
  fbytes[k] = rq->fbytes;
  return true;
}

static bool annotate(inst *I, const mapopt__app_req *rq, mapopt_app_req *r,
                     int64_t el, int64_t fb) {
  if (rq->bytes) {
    if (!eval_nn(I, rq->bytes, &r->bytes))
      return false;
  } else {
    int64_t m =
        rq->priv == MAPOPT_PRIV_RW || rq->priv == MAPOPT_PRIV_REDUCE ? 2 : 1;
    if (mapopt__mul_ovf(el, fb, &r->bytes) ||
        mapopt__mul_ovf(r->bytes, m, &r->bytes))
      return ierr(I, rq->line, rq->col,
                  "the default bytes of a requirement "
                  "(%" PRId64 " elements x %" PRId64 " bytes x %" PRId64
                  ") overflow 64 bits",
                  el, fb, m);
  }
  if (rq->gathers && !eval_nn(I, rq->gathers, &r->gathers))
    return false;
  if (rq->atomics && !eval_nn(I, rq->atomics, &r->atomics))
    return false;
  return true;
}

static bool expand_stmts(inst *I, const mapopt__app_stmt *sts, int n,
                         const tctx *c);

static bool expand_launch(inst *I, const mapopt__app_stmt *st, const tctx *c) {
  const mapopt__app_task *t = &I->app->tasks[st->task];
  int64_t ext[MAPOPT_APP_MAX_DIMS] = {0};
  int64_t vol = 1;
  I->site_task = NULL;
  for (int d = 0; d < st->ndims; d++) {
    if (!eval_nn(I, st->domain[d], &ext[d]))
      return false;
    if (mapopt__mul_ovf(vol, ext[d], &vol))
      return ierr(I, st->line, st->col,
                  "the domain of the index launch of "
                  "\"%s\" has more than 2^63 points",
                  t->name);
  }
  if (vol > I->max_ops)
    return ierr(I, st->line, st->col,
                "refusing to instantiate \"%s\": the "
                "index launch of \"%s\" has %" PRId64 " points (more than the "
                "limit of %" PRId64 " ops; options max_ops)",
                I->app->name, t->name, vol, I->max_ops);
  int64_t launch = I->nlaunch++;
  /* Futures waited on: the latest instance of each name, when one exists. */
  int64_t *waits = balloc(I, st->nwaits, sizeof *waits);
  if (!waits)
    return false;
  size_t nwaits = 0;
  for (int w = 0; w < st->nwaits; w++)
    if (I->latest[st->waits[w]] >= 0)
      waits[nwaits++] = I->latest[st->waits[w]];
  bool reduce = st->kind == ST_INDEX && st->future >= 0;
  int64_t *pfut = reduce ? balloc(I, vol, sizeof *pfut) : NULL;
  if (reduce && !pfut)
    return false;
  int nargs = st->nargs;
  int64_t elems[64], fbytes[64];
  int base = I->env.n;
  for (int d = 0; d < st->ndims; d++)
    if (!bind(I, st->point_sym[d], 0))
      return false;
  int64_t p[MAPOPT_APP_MAX_DIMS] = {0};
  int64_t produced = -1;
  for (int64_t k = 0; k < vol; k++) {
    if (k) { /* next point, dimension 0 fastest */
      for (int d = 0; d < st->ndims; d++) {
        if (++p[d] < ext[d])
          break;
        p[d] = 0;
      }
    }
    for (int d = 0; d < st->ndims; d++)
      I->env.val[base + d] = p[d];
    I->site_task = t->name;
    I->site_dims = st->ndims;
    memcpy(I->site_point, p, sizeof p);
    mapopt_app_req *reqs = balloc(I, nargs, sizeof *reqs);
    int64_t *costs = balloc(I, 3 * (int64_t)t->nvariants, sizeof *costs);
    if (!reqs || !costs)
      return false;
    for (int a = 0; a < nargs; a++)
      if (!build_req(I, st, a, p, &reqs[a], elems, fbytes))
        return false;
    I->env.elems = elems;
    I->env.fbytes = fbytes;
    I->env.nreqs = nargs;
    bool ok = true;
    for (int a = 0; a < nargs && ok; a++)
      ok = annotate(I, &st->args[a], &reqs[a], elems[a], fbytes[a]);
    for (int v = 0; v < t->nvariants && ok; v++) {
      const mapopt__app_variant *av = &t->variants[v];
      costs[v] = costs[t->nvariants + v] = 0;
      costs[2 * t->nvariants + v] = 1;
      if (av->flops)
        ok = eval_nn(I, av->flops, &costs[v]);
      if (ok && av->fixed_ns)
        ok = eval_nn(I, av->fixed_ns, &costs[t->nvariants + v]);
      if (ok && av->reuse)
        ok = eval_nn(I, av->reuse, &costs[2 * t->nvariants + v]);
    }
    I->env.elems = I->env.fbytes = NULL;
    I->env.nreqs = 0;
    if (!ok)
      return false;
    int64_t idx = push_op(I, MAPOPT_OP_TASK, c, launch);
    if (idx < 0)
      return false;
    mapopt_app_op *op = &I->ri->ops[idx];
    op->task = st->task;
    op->is_index = st->kind == ST_INDEX;
    op->dims = st->ndims;
    memcpy(op->point, p, sizeof p);
    memcpy(op->extents, ext, sizeof ext);
    op->flops = costs;
    op->fixed_ns = costs + t->nvariants;
    op->reuse = costs + 2 * t->nvariants;
    op->nreqs = (size_t)nargs;
    op->reqs = reqs;
    op->nwaits = nwaits;
    op->waits = waits;
    if (reduce) {
      op->future = pfut[k] = I->run->nfutures++;
    } else if (st->future >= 0) {
      op->future = produced = I->run->nfutures++;
    }
    if (t->has_body) {
      int b2 = I->env.n;
      for (int d = 0; d < t->npoint; d++)
        if (!bind(I, t->point_sym[d], p[d]))
          return false;
      tctx cc = *c;
      cc.parent = idx;
      if (!expand_stmts(I, t->body, t->nbody, &cc))
        return false;
      I->env.n = b2;
    }
  }
  I->env.n = base;
  I->site_task = NULL;
  I->site_dims = 0;
  if (reduce) {
    int64_t idx = push_op(I, MAPOPT_OP_FUTURE_REDUCE, c, launch);
    if (idx < 0)
      return false;
    mapopt_app_op *op = &I->ri->ops[idx];
    op->nwaits = (size_t)vol;
    op->waits = pfut;
    op->future = produced = I->run->nfutures++;
  }
  if (produced >= 0)
    I->latest[st->future] = produced;
  return true;
}

static bool expand_fill(inst *I, const mapopt__app_stmt *st, const tctx *c) {
  int64_t elems[1], fbytes[1];
  mapopt_app_req *req = balloc(I, 1, sizeof *req);
  if (!req || !build_req(I, st, 0, NULL, req, elems, fbytes))
    return false;
  if (mapopt__mul_ovf(elems[0], fbytes[0], &req->bytes))
    return ierr(I, st->line, st->col, "the bytes of a fill overflow 64 bits");
  int64_t idx = push_op(I, MAPOPT_OP_FILL, c, I->nlaunch++);
  if (idx < 0)
    return false;
  I->ri->ops[idx].nreqs = 1;
  I->ri->ops[idx].reqs = req;
  return true;
}

/* In window mode the timer starts once the warm-up has completed: a real
 * program times behind an execution fence (Legion's, or a blocking Regent
 * fence), so no op of a timed iteration starts before every op before it
 * has completed. The fence is not waited for, as the one that opens a
 * timed block is not: the ops after it are issued and mapped ahead. It
 * belongs to the last warm-up iteration and is untimed, so the window
 * opens when it completes (docs/apps.md, "From model to run"). Without
 * it, a mapping that delays the warm-up's last op would let the first
 * timed iteration run before the window opens, outside the elapsed time
 * and the lower bound's assumptions. */
static bool window_fence(inst *I, const tctx *c, int64_t it) {
  if (I->app->timing != MAPOPT_TIMING_WINDOW || it == 0) /* no warm-up */
    return true;
  tctx fc = *c;
  fc.iteration = it - 1;
  fc.iter_timed = false;
  int64_t f = push_op(I, MAPOPT_OP_FENCE, &fc, I->nlaunch++);
  if (f < 0)
    return false;
  I->ri->ops[f].timing.fence_role = 1;
  return true;
}

static bool expand_stmts(inst *I, const mapopt__app_stmt *sts, int n,
                         const tctx *c) {
  for (int i = 0; i < n; i++) {
    const mapopt__app_stmt *st = &sts[i];
    switch (st->kind) {
    case ST_INDEX:
    case ST_SINGLE:
      if (!expand_launch(I, st, c))
        return false;
      break;
    case ST_FILL:
      if (!expand_fill(I, st, c))
        return false;
      break;
    case ST_FENCE:
      if (push_op(I, MAPOPT_OP_FENCE, c, I->nlaunch++) < 0)
        return false;
      break;
    case ST_TIMED: {
      int64_t f = push_op(I, MAPOPT_OP_FENCE, c, I->nlaunch++);
      if (f < 0)
        return false;
      tctx cc = *c;
      cc.in_block = true;
      I->ri->ops[f].timing.fence_role = 1;
      I->ri->ops[f].timing.timed = c->iter_timed;
      if (!expand_stmts(I, st->body, st->nbody, &cc))
        return false;
      f = push_op(I, MAPOPT_OP_FENCE, &cc, I->nlaunch++);
      if (f < 0)
        return false;
      I->ri->ops[f].timing.fence_role = 2;
      break;
    }
    case ST_LOOP: {
      bool ts = st == I->app->tsloop;
      int64_t count;
      if (ts)
        count = I->nwarm + I->ntimed;
      else if (!eval_nn(I, st->count, &count))
        return false;
      int base = I->env.n;
      if (!bind(I, st->var_sym, 0))
        return false;
      for (int64_t it = 0; it < count; it++) {
        I->env.val[base] = it;
        tctx cc = *c;
        if (ts) {
          cc.iteration = it;
          cc.iter_timed = it >= I->nwarm;
        }
        cc.traced = c->traced || (st->traced && it >= 1);
        if (ts && it == I->nwarm && !window_fence(I, c, it))
          return false;
        if (!expand_stmts(I, st->body, st->nbody, &cc))
          return false;
      }
      I->env.n = base;
      break;
    }
    }
  }
  return true;
}

/* ---- the entry point ----------------------------------------------------- */

/* The settings line of the log: the template's text with each expression
 * replaced by its value. */
static bool settings_line(inst *I, const mapopt__app_template *t) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, I->ri->ctx);
  bool ok = true;
  for (int i = 0; ok && i <= t->nexprs; i++) {
    mapopt__sb_puts(&sb, t->text[i]);
    int64_t v;
    if (i < t->nexprs && (ok = eval(I, t->expr[i], &v)))
      mapopt__sb_printf(&sb, "%" PRId64, v);
  }
  if (ok && sb.failed)
    ok = nomem(I);
  if (ok)
    I->run->log_settings = rdup(I, sb.data ? sb.data : "");
  mapopt__sb_destroy(&sb);
  return ok && I->status == MAPOPT_OK;
}

static bool setup(inst *I, const mapopt_app_options *opts,
                  const mapopt_app_machine *mach) {
  const mapopt_app *app = I->app;
  mapopt_app_run *run = I->run;
  int np = app->nparams;
  I->params = balloc(I, SLOT_DERIVED(app, app->nderived), sizeof *I->params);
  if (!I->params)
    return false;
  for (int i = 0; i < np; i++)
    I->params[i] = app->params[i].value;
  mapopt_app_machine m = mach ? *mach : (mapopt_app_machine){1, 4, 1};
  I->params[np + SLOT_NODES] = m.nodes;
  I->params[np + SLOT_GPUS] = m.gpus;
  I->params[np + SLOT_RANKS] = m.ranks;
  I->env.params = I->params;
  I->env.slot_of = app->slot_of;
  I->env.nsyms = app->nsyms;
  if (!apply_spec(I, opts ? opts->spec : NULL))
    return false;
  for (int k = 0; k < app->nderived; k++) {
    int j = app->derived_order[k]; /* each after the ones it uses */
    if (!eval(I, app->derived[j].expr, &I->params[SLOT_DERIVED(app, j)]))
      return false;
  }
  if (app->log_settings && !settings_line(I, app->log_settings))
    return false;
  run->name = rdup(I, app->name);
  run->default_c_order = app->default_c_order;
  run->timing = app->timing;
  run->metric_gflops = app->metric_gflops;
  run->per_node = app->per_node;
  run->log_style = app->log_style; /* a static string */
  if (app->timing_flops &&
      !eval_nn(I, app->timing_flops, &run->flops_per_iteration))
    return false;
  if (app->ranks_per_node &&
      !eval_nn(I, app->ranks_per_node, &run->ranks_per_node))
    return false;
  const char **pn = balloc(I, np, sizeof *pn);
  int64_t *pv = balloc(I, np, sizeof *pv);
  if (!pn || !pv)
    return false;
  for (int i = 0; i < np; i++) {
    pn[i] = rdup(I, app->params[i].name);
    pv[i] = I->params[i];
  }
  run->nparams = (size_t)np;
  run->param_names = pn;
  run->param_values = pv;
  /* Iteration counts of the time-step loop: window timing keeps at most 2 of
   * the model's warm-up iterations unless the options say otherwise. */
  const mapopt__app_stmt *ts = app->tsloop;
  int64_t nominal = 0, warm = 0;
  if (!eval_nn(I, ts->count, &nominal))
    return false;
  if (ts->warmup && !eval_nn(I, ts->warmup, &warm))
    return false;
  I->ntimed = opts && opts->iterations >= 0 ? opts->iterations : nominal;
  if (opts && opts->warmup >= 0)
    I->nwarm = opts->warmup;
  else
    I->nwarm = app->timing == MAPOPT_TIMING_WINDOW && warm > 2 ? 2 : warm;
  run->iterations_warmup = I->nwarm;
  run->iterations_timed = I->ntimed;
  return I->status == MAPOPT_OK;
}

static bool instantiate(inst *I, const mapopt_app_options *opts,
                        const mapopt_app_machine *mach) {
  const mapopt_app *app = I->app;
  if (!setup(I, opts, mach))
    return false;
  /* Refuse absurd programs before laying anything out. */
  int64_t est = est_stmts(I, app->program, app->nprogram, 1);
  if (est > I->max_ops || I->est_iters > I->max_ops)
    return ierr(I, 0, 0,
                "refusing to instantiate \"%s\": about %" PRId64
                " %s (more than the limit of %" PRId64 "; options max_ops)",
                app->name, est > I->max_ops ? est : I->est_iters,
                est > I->max_ops ? "ops" : "loop iterations", I->max_ops);
  if (sat_mul(est, (int64_t)sizeof(mapopt_app_op)) > I->max_bytes)
    return ierr(I, 0, 0,
                "refusing to instantiate \"%s\": about %" PRId64
                " ops would need more than %" PRId64 " bytes (the limit; "
                "options max_bytes)",
                app->name, est, I->max_bytes);
  if (!layout_atoms(I) || !layout_pieces(I) || !copy_tasks(I))
    return false;
  I->latest = balloc(I, app->nfutures, sizeof *I->latest);
  I->req_names = balloc(I, app->nreqs, sizeof *I->req_names);
  if (!I->latest || !I->req_names)
    return false;
  for (int i = 0; i < app->nfutures; i++)
    I->latest[i] = -1;
  memset(I->req_names, 0, (size_t)app->nreqs * sizeof *I->req_names);
  /* Reserve the estimate up front (it is usually exact). */
  run_impl *ri = I->ri;
  size_t cap = (size_t)(est > 0 ? est : 1);
  if (over_budget(I, (int64_t)(cap * sizeof(mapopt_app_op))))
    return false;
  ri->ops = mapopt__malloc(ri->ctx, cap * sizeof *ri->ops);
  if (!ri->ops)
    return nomem(I);
  ri->ops_cap = cap;
  I->run->ops = ri->ops;
  tctx c = {.iteration = -1, .parent = -1};
  return expand_stmts(I, app->program, app->nprogram, &c);
}

mapopt_status mapopt_app_instantiate(const mapopt_app *app,
                                     const mapopt_app_options *opts,
                                     const mapopt_app_machine *mach,
                                     mapopt_diags *diags,
                                     mapopt_app_run **out) {
  if (!app || !diags || !out || !app->tsloop)
    return MAPOPT_EINVAL;
  run_impl *ri = mapopt__calloc(app->ctx, 1, sizeof *ri);
  inst *I = mapopt__calloc(app->ctx, 1, sizeof *I);
  if (!ri || !I) {
    mapopt__free(app->ctx, ri, sizeof *ri);
    mapopt__free(app->ctx, I, sizeof *I);
    return MAPOPT_ENOMEM;
  }
  ri->ctx = app->ctx;
  mapopt__arena_init(&ri->arena, app->ctx);
  I->app = app;
  I->ri = ri;
  I->run = &ri->pub;
  I->diags = diags;
  I->max_ops =
      opts && opts->max_ops > 0 ? opts->max_ops : MAPOPT_APP_DEFAULT_MAX_OPS;
  I->max_bytes = opts && opts->max_bytes > 0 ? opts->max_bytes
                                             : MAPOPT_APP_DEFAULT_MAX_BYTES;
  bool ok = instantiate(I, opts, mach);
  mapopt_status st = ok && I->status == MAPOPT_OK ? MAPOPT_OK
                     : I->status != MAPOPT_OK     ? I->status
                                                  : MAPOPT_EINVAL;
  mapopt__free(app->ctx, I, sizeof *I);
  if (st != MAPOPT_OK) {
    mapopt_app_run_free(&ri->pub);
    return st;
  }
  *out = &ri->pub;
  return MAPOPT_OK;
}

void mapopt_app_run_free(mapopt_app_run *run) {
  if (!run)
    return;
  run_impl *ri = (run_impl *)run;
  mapopt_ctx *ctx = ri->ctx;
  mapopt__free(ctx, ri->ops, ri->ops_cap * sizeof *ri->ops);
  mapopt__arena_destroy(&ri->arena);
  mapopt__free(ctx, ri, sizeof *ri);
}
