/*
 * The checks of a loaded `mapopt-app/1` model that need all of it, after
 * load.c has walked the JSON: the scope check of every expression
 * (docs/apps.md, "Names and scope": a name must be visible where the expression
 * is used; a task body sees the names in scope where its task is launched, so
 * it is checked once per launch site, and a task that launches itself is an
 * error), and the task names and argument names that mappers are checked
 * against (mapopt_app_task_info, W11 and W12).
 *
 * Errors go to the loader's located-JSON reporter, at the position of the
 * expression or statement at fault.
 */
#include <inttypes.h>
#include <string.h>

#include "app/app.h"

typedef struct checker {
  mapopt_app *app;
  mapopt__jr *jr; /* NULL for the task info, which reports nothing */
  bool nomem;
  /* The scope check walks each task body once per launch site: how deep
   * the walk is (loops, timed blocks and task bodies), how many statements
   * it has visited, and whether a limit has stopped it. */
  int depth;
  int64_t visits;
  bool stop;
} checker;

static void nomem(checker *ck) {
  ck->nomem = true;
  if (ck->jr && ck->jr->status == MAPOPT_OK)
    ck->jr->status = MAPOPT_ENOMEM;
}

static void *zalloc(checker *ck, size_t n, size_t size) {
  if (n == 0)
    n = 1;
  void *p = size && n > SIZE_MAX / size
                ? NULL
                : mapopt__arena_zalloc(&ck->app->arena, n * size);
  if (!p)
    nomem(ck);
  return p;
}

/* ---- scope check --------------------------------------------------------- */

typedef struct scope {
  int n;
  int32_t sym[MAPOPT__ENV_MAX];
} scope;

typedef struct check_ctx {
  checker *ck;
  const scope *s;
  const mapopt__app_expr *e;
  int nreqs;        /* -1: elems()/fbytes() not allowed */
  const char *site; /* "" or " (launched at L:C)" */
} check_ctx;

static bool visible(const mapopt_app *app, const scope *s, int32_t sym) {
  for (int i = 0; i < s->n; i++)
    if (s->sym[i] == sym)
      return true;
  return sym < app->nsyms && app->slot_of[sym] >= 0;
}

static void check_node(void *ud, const mapopt__app_ex_node *n) {
  check_ctx *c = ud;
  mapopt_app *app = c->ck->app;
  int col = mapopt__app_expr_col(c->e, n->off);
  char ex[MAPOPT__APP_EXCERPT];
  if (n->op == EX_NAME && !visible(app, c->s, (int32_t)n->v)) {
    mapopt__jr_error_at(c->ck->jr, c->e->line, col,
                        "undefined name \"%s\" in expression \"%s\"%s",
                        MAPOPT__VEC_AT(&app->symnames, const char *, n->v),
                        mapopt__app_expr_excerpt(c->e, ex), c->site);
  } else if ((n->op == EX_ELEMS || n->op == EX_FBYTES) && c->nreqs < 0) {
    mapopt__jr_error_at(c->ck->jr, c->e->line, col,
                        "%s() is only allowed in task costs and requirement "
                        "annotations (expression \"%s\")",
                        n->op == EX_ELEMS ? "elems" : "fbytes",
                        mapopt__app_expr_excerpt(c->e, ex));
  } else if ((n->op == EX_ELEMS || n->op == EX_FBYTES) && n->v >= c->nreqs) {
    mapopt__jr_error_at(c->ck->jr, c->e->line, col,
                        "%s(%" PRId64 ") in expression \"%s\" refers to "
                        "argument %" PRId64 ", but the launch has %d%s",
                        n->op == EX_ELEMS ? "elems" : "fbytes", n->v,
                        mapopt__app_expr_excerpt(c->e, ex), n->v, c->nreqs,
                        c->site);
  }
}

static void check_expr(checker *ck, const scope *s, const mapopt__app_expr *e,
                       int nreqs, const char *site) {
  if (!e)
    return;
  check_ctx c = {ck, s, e, nreqs, site ? site : ""};
  mapopt__app_expr_walk(e->root, check_node, &c);
}

static bool push(checker *ck, scope *s, int32_t sym, const mapopt__json *at,
                 int line, int col, const char *kind) {
  (void)at;
  if (visible(ck->app, s, sym)) {
    mapopt__jr_error_at(ck->jr, line, col,
                        "%s \"%s\" hides a name already "
                        "in scope",
                        kind,
                        MAPOPT__VEC_AT(&ck->app->symnames, const char *, sym));
    return false;
  }
  if (s->n >= MAPOPT__ENV_MAX) {
    mapopt__jr_error_at(ck->jr, line, col,
                        "too many nested names (at most "
                        "%d)",
                        MAPOPT__ENV_MAX);
    return false;
  }
  s->sym[s->n++] = sym;
  return true;
}

static void check_stmts(checker *ck, const mapopt__app_stmt *sts, int n,
                        scope *s);

static void check_launch(checker *ck, const mapopt__app_stmt *st, scope *s) {
  if (st->task < 0)
    return;
  mapopt__app_task *t = &ck->app->tasks[st->task];
  int base = s->n;
  for (int i = 0; i < st->ndims; i++)
    check_expr(ck, s, st->domain[i], -1, NULL);
  for (int i = 0; i < st->ndims; i++)
    if (st->point[i] &&
        !push(ck, s, st->point_sym[i], NULL, st->line, st->col, "point name"))
      goto out;
  for (int i = 0; i < st->nargs; i++) {
    const mapopt__app_req *rq = &st->args[i];
    for (int k = 0; k < rq->nproj; k++)
      check_expr(ck, s, rq->proj[k], -1, NULL);
    check_expr(ck, s, rq->bytes, st->nargs, NULL);
    check_expr(ck, s, rq->gathers, st->nargs, NULL);
    check_expr(ck, s, rq->atomics, st->nargs, NULL);
  }
  const char *site = mapopt__arena_printf(
      &ck->app->arena, " (launched at %d:%d)", st->line, st->col);
  if (!site)
    nomem(ck);
  for (int i = 0; i < t->nvariants; i++) {
    check_expr(ck, s, t->variants[i].flops, st->nargs, site);
    check_expr(ck, s, t->variants[i].fixed_ns, st->nargs, site);
    check_expr(ck, s, t->variants[i].reuse, st->nargs, site);
  }
  if (!t->has_body || t->body_error)
    goto out;
  if (t->on_stack) {
    mapopt__jr_error_at(ck->jr, st->line, st->col,
                        "task \"%s\" launches itself (recursive task bodies "
                        "are not supported)",
                        t->name);
    t->body_error = true;
    goto out;
  }
  if (t->npoint > st->ndims) {
    mapopt__jr_error_at(ck->jr, st->line, st->col,
                        "task \"%s\" names %d point coordinates but this "
                        "launch has %d",
                        t->name, t->npoint, st->ndims);
    t->body_error = true;
    goto out;
  }
  for (int i = 0; i < t->npoint; i++)
    if (!push(ck, s, t->point_sym[i], NULL, t->line, t->col, "point name"))
      goto out;
  size_t before = mapopt_diags_errors(ck->jr->diags);
  t->on_stack = true;
  check_stmts(ck, t->body, t->nbody, s);
  t->on_stack = false;
  if (mapopt_diags_errors(ck->jr->diags) != before)
    t->body_error = true;
out:
  s->n = base;
}

static void check_stmts(checker *ck, const mapopt__app_stmt *sts, int n,
                        scope *s) {
  if (n > 0 && ck->depth >= MAPOPT_APP_MAX_NESTING && !ck->stop) {
    mapopt__jr_error_at(ck->jr, sts[0].line, sts[0].col,
                        "statements nested more than %d deep (loops, timed "
                        "blocks and the bodies of inner tasks together)",
                        MAPOPT_APP_MAX_NESTING);
    ck->stop = true;
  }
  ck->depth++;
  for (int i = 0; i < n && !ck->stop; i++) {
    const mapopt__app_stmt *st = &sts[i];
    if (++ck->visits > MAPOPT_APP_MAX_STATEMENTS) {
      /* Bodies are checked at every launch: an inner task launched twice
       * by a task launched twice ... 40 levels down is 2^40 visits. */
      mapopt__jr_error_at(ck->jr, st->line, st->col,
                          "the program has more than %d statements with the "
                          "body of each inner task counted at every launch",
                          MAPOPT_APP_MAX_STATEMENTS);
      ck->stop = true;
      break;
    }
    switch (st->kind) {
    case ST_INDEX:
    case ST_SINGLE:
      check_launch(ck, st, s);
      break;
    case ST_FILL:
      if (st->args)
        for (int k = 0; k < st->args[0].nproj; k++)
          check_expr(ck, s, st->args[0].proj[k], -1, NULL);
      break;
    case ST_FENCE:
      break;
    case ST_LOOP: {
      check_expr(ck, s, st->count, -1, NULL);
      check_expr(ck, s, st->warmup, -1, NULL);
      int base = s->n;
      if (st->var &&
          push(ck, s, st->var_sym, NULL, st->line, st->col, "loop variable"))
        check_stmts(ck, st->body, st->nbody, s);
      s->n = base;
      break;
    }
    case ST_TIMED:
      check_stmts(ck, st->body, st->nbody, s);
      break;
    }
  }
  ck->depth--;
}

void mapopt__app_check_scopes(mapopt_app *app, mapopt__jr *jr) {
  checker K = {.app = app, .jr = jr}, *ck = &K;
  scope *s = mapopt__calloc(app->ctx, 1, sizeof *s);
  if (!s) {
    nomem(ck);
    return;
  }
  s->n = 0;
  for (int j = 0; j < app->nderived; j++)
    check_expr(ck, s, app->derived[j].expr, -1, NULL);
  for (int i = 0; app->log_settings && i < app->log_settings->nexprs; i++)
    check_expr(ck, s, app->log_settings->expr[i], -1, NULL);
  check_expr(ck, s, app->timing_flops, -1, NULL);
  check_expr(ck, s, app->ranks_per_node, -1, NULL);
  for (int i = 0; i < app->nregions; i++) {
    const mapopt__app_region *r = &app->regions[i];
    for (int g = 0; g < r->ngroups; g++) {
      check_expr(ck, s, r->groups[g].count, -1, NULL);
      check_expr(ck, s, r->groups[g].elements, -1, NULL);
    }
    for (int d = 0; d < r->gdims; d++) {
      check_expr(ck, s, r->gsize[d], -1, NULL);
      check_expr(ck, s, r->gextent[d], -1, NULL);
    }
    check_expr(ck, s, r->gelements, -1, NULL);
  }
  for (int i = 0; i < app->npartitions; i++) {
    const mapopt__app_part *p = &app->parts[i];
    for (int d = 0; d < p->ncolors; d++)
      check_expr(ck, s, p->colors[d], -1, NULL);
    s->n = 0;
    for (int d = 0; d < p->ncolors && p->kind != PART_GROUP; d++)
      s->sym[s->n++] = app->csym[d];
    for (int d = 0; d < MAPOPT_APP_MAX_DIMS; d++) {
      check_expr(ck, s, p->lo[d], -1, NULL);
      check_expr(ck, s, p->hi[d], -1, NULL);
    }
    for (int e = 0; e < p->nentries; e++) {
      for (int d = 0; d < p->entries[e].natom; d++)
        check_expr(ck, s, p->entries[e].atom[d], -1, NULL);
      check_expr(ck, s, p->entries[e].count, -1, NULL);
    }
    s->n = 0;
  }
  check_stmts(ck, app->program, app->nprogram, s);
  mapopt__free(app->ctx, s, sizeof *s);
}

/* ---- task info (W11, W12) ------------------------------------------------ */

typedef struct info_acc {
  mapopt__vec *pos; /* per task: vec of mapopt__vec (names per position) */
} info_acc;

static void info_stmts(checker *ck, mapopt__vec *per,
                       const mapopt__app_stmt *sts, int n) {
  mapopt_ctx *ctx = ck->app->ctx;
  for (int i = 0; i < n && !ck->nomem; i++) {
    const mapopt__app_stmt *st = &sts[i];
    if ((st->kind == ST_INDEX || st->kind == ST_SINGLE) && st->task >= 0) {
      mapopt__vec *pv = &per[st->task];
      while ((int)pv->len < st->nargs) {
        mapopt__vec *nv = mapopt__vec_push(pv, ctx);
        if (!nv) {
          nomem(ck);
          return;
        }
        mapopt__vec_init(nv, sizeof(const char *));
      }
      for (int a = 0; a < st->nargs; a++) {
        mapopt__vec *names = &MAPOPT__VEC_AT(pv, mapopt__vec, a);
        const mapopt__app_req *rq = &st->args[a];
        for (size_t k = 0; k < rq->nall; k++) {
          bool seen = false;
          for (size_t j = 0; j < names->len && !seen; j++)
            seen =
                strcmp(MAPOPT__VEC_AT(names, const char *, j), rq->all[k]) == 0;
          if (seen)
            continue;
          const char **slot = mapopt__vec_push(names, ctx);
          if (!slot) {
            nomem(ck);
            return;
          }
          *slot = rq->all[k];
        }
      }
    }
    if (st->kind == ST_LOOP || st->kind == ST_TIMED)
      info_stmts(ck, per, st->body, st->nbody);
  }
}

mapopt_status mapopt__app_build_task_info(mapopt_app *app) {
  checker K = {.app = app}, *ck = &K;
  int nt = app->ntasks;
  mapopt__vec *per =
      mapopt__calloc(app->ctx, (size_t)(nt ? nt : 1), sizeof *per);
  if (!per)
    return MAPOPT_ENOMEM;
  for (int t = 0; t < nt; t++)
    mapopt__vec_init(&per[t], sizeof(mapopt__vec));
  info_stmts(ck, per, app->program, app->nprogram);
  for (int t = 0; t < nt; t++)
    info_stmts(ck, per, app->tasks[t].body, app->tasks[t].nbody);
  app->info = zalloc(ck, (size_t)nt, sizeof *app->info);
  for (int t = 0; t < nt && app->info && !ck->nomem; t++) {
    mapopt__vec *pv = &per[t];
    app->info[t].name = app->tasks[t].name;
    app->info[t].nargs = pv->len;
    const char *const **args = zalloc(ck, pv->len, sizeof *args);
    if (!args)
      break;
    for (size_t a = 0; a < pv->len; a++) {
      mapopt__vec *names = &MAPOPT__VEC_AT(pv, mapopt__vec, a);
      const char **list = zalloc(ck, names->len + 1, sizeof *list);
      if (!list)
        break;
      for (size_t j = 0; j < names->len; j++)
        list[j] = MAPOPT__VEC_AT(names, const char *, j);
      args[a] = list;
    }
    app->info[t].arg_names = args;
  }
  for (int t = 0; t < nt; t++) {
    for (size_t a = 0; a < per[t].len; a++)
      mapopt__vec_destroy(&MAPOPT__VEC_AT(&per[t], mapopt__vec, a), app->ctx);
    mapopt__vec_destroy(&per[t], app->ctx);
  }
  mapopt__free(app->ctx, per, (size_t)(nt ? nt : 1) * sizeof *per);
  return ck->nomem ? MAPOPT_ENOMEM : MAPOPT_OK;
}
