/*
 * The parameters of a `mapopt-app/1` model (docs/apps.md, "The format, key by
 * key" and "Derived parameters"): the "params" a run sets, the "derived"
 * parameters computed from them, the "sizes" that set them, the slot of
 * every name an expression evaluates to, the order in which derived
 * parameters are evaluated, and the template of the raw log's settings line
 * ("log_settings" of "timing"), whose expressions see all of them.
 *
 * A derived parameter is an expression, not a value: it may use the
 * parameters, the machine facts (nodes gpus ranks) and other derived
 * parameters in any order of the file, so the loader sorts them by
 * dependence, and a cycle is a located error naming its path.
 */
#include <string.h>

#include "app/loader.h"

/* ---- loading ------------------------------------------------------------- */

static int param_index(const mapopt_app *app, const char *name) {
  for (int q = 0; q < app->nparams; q++)
    if (strcmp(app->params[q].name, name) == 0)
      return q;
  return -1;
}

static int derived_index(const mapopt_app *app, const char *name) {
  for (int j = 0; j < app->nderived; j++)
    if (strcmp(app->derived[j].name, name) == 0)
      return j;
  return -1;
}

static bool reserved(const mapopt_app *app, int32_t sym) {
  return sym >= 0 &&
         (sym < SLOT__MACHINE || (sym >= app->csym[0] && sym <= app->csym[2]));
}

static void load_plain_params(loader *L, const mapopt__json *root) {
  mapopt_app *app = L->app;
  const mapopt__json *params =
      mapopt__jr_child(&L->jr, root, "params", "the application", false);
  if (params) {
    app->params = mapopt__ld_zalloc(L, params->u.obj.n, sizeof *app->params);
    if (!app->params)
      return;
    for (size_t i = 0; i < params->u.obj.n; i++) {
      const mapopt__json_member *m = &params->u.obj.members[i];
      mapopt__app_param *p = &app->params[app->nparams];
      if (!mapopt__ld_is_ident(m->key)) {
        mapopt__jr_error_at(&L->jr, m->line, m->col,
                            "parameter name \"%s\" is not a name", m->key);
        continue;
      }
      int32_t sym = mapopt__ld_intern(L, m->key);
      if (reserved(app, sym)) {
        mapopt__jr_error_at(&L->jr, m->line, m->col,
                            "parameter name \"%s\" is reserved", m->key);
        continue;
      }
      if (m->value->type != MAPOPT_JSON_INT) {
        mapopt__jr_error(&L->jr, m->value,
                         "parameter \"%s\" must be an "
                         "integer",
                         m->key);
        continue;
      }
      p->name = mapopt__ld_dup(L, m->key);
      p->value = m->value->u.num.i;
      p->sym = sym;
      app->nparams++;
    }
  }
}

static void load_derived(loader *L, const mapopt__json *root) {
  mapopt_app *app = L->app;
  const mapopt__json *derived =
      mapopt__jr_child(&L->jr, root, "derived", "the application", false);
  if (!derived)
    return;
  app->derived = mapopt__ld_zalloc(L, derived->u.obj.n, sizeof *app->derived);
  if (!app->derived)
    return;
  for (size_t i = 0; i < derived->u.obj.n; i++) {
    const mapopt__json_member *m = &derived->u.obj.members[i];
    if (!mapopt__ld_is_ident(m->key)) {
      mapopt__jr_error_at(&L->jr, m->line, m->col,
                          "derived parameter name \"%s\" is not a name",
                          m->key);
      continue;
    }
    int32_t sym = mapopt__ld_intern(L, m->key);
    if (reserved(app, sym)) {
      mapopt__jr_error_at(&L->jr, m->line, m->col,
                          "derived parameter name \"%s\" is reserved", m->key);
      continue;
    }
    if (param_index(app, m->key) >= 0) {
      mapopt__jr_error_at(&L->jr, m->line, m->col,
                          "derived parameter \"%s\" has the name of a "
                          "parameter (a name is either set or derived)",
                          m->key);
      continue;
    }
    const char *what = mapopt__ld_fmt(L, "derived parameter \"%s\"", m->key);
    mapopt__app_expr *e =
        what ? mapopt__ld_expr(L, m->value, NULL, what) : NULL;
    if (!e)
      continue;
    mapopt__app_derived *d = &app->derived[app->nderived++];
    d->name = mapopt__ld_dup(L, m->key);
    d->sym = sym;
    d->line = m->line;
    d->col = m->col;
    d->expr = e;
  }
}

static void load_sizes(loader *L, const mapopt__json *root) {
  mapopt_app *app = L->app;
  const mapopt__json *sizes =
      mapopt__jr_child(&L->jr, root, "sizes", "the application", false);
  if (sizes) {
    app->sizes = mapopt__ld_zalloc(L, sizes->u.obj.n, sizeof *app->sizes);
    if (!app->sizes)
      return;
    for (size_t i = 0; i < sizes->u.obj.n; i++) {
      const mapopt__json_member *m = &sizes->u.obj.members[i];
      mapopt__app_size *sz = &app->sizes[app->nsizes++];
      sz->name = mapopt__ld_dup(L, m->key);
      const char *sw = mapopt__ld_fmt(L, "size \"%s\"", m->key);
      if (!sw || !mapopt__jr_object(&L->jr, m->value, sw, NULL))
        continue;
      size_t n = m->value->u.obj.n;
      sz->param = mapopt__ld_zalloc(L, n, sizeof *sz->param);
      sz->value = mapopt__ld_zalloc(L, n, sizeof *sz->value);
      if (!sz->param || !sz->value)
        return;
      for (size_t j = 0; j < n; j++) {
        const mapopt__json_member *pm = &m->value->u.obj.members[j];
        int k = -1;
        for (int q = 0; q < app->nparams; q++)
          if (strcmp(app->params[q].name, pm->key) == 0)
            k = q;
        if (k < 0 && derived_index(app, pm->key) >= 0) {
          mapopt__jr_error_at(&L->jr, pm->line, pm->col,
                              "\"%s\" in %s is a derived parameter: it is "
                              "computed from its expression, not set",
                              pm->key, sw);
          continue;
        }
        if (k < 0) {
          mapopt__jr_error_at(&L->jr, pm->line, pm->col,
                              "unknown parameter \"%s\" in %s", pm->key, sw);
          continue;
        }
        if (pm->value->type != MAPOPT_JSON_INT) {
          mapopt__jr_error(&L->jr, pm->value,
                           "\"%s\" in %s must be an "
                           "integer",
                           pm->key, sw);
          continue;
        }
        sz->param[sz->n] = k;
        sz->value[sz->n++] = pm->value->u.num.i;
      }
    }
  }
}

void mapopt__ld_params(loader *L, const mapopt__json *root) {
  load_plain_params(L, root);
  load_derived(L, root);
  load_sizes(L, root);
}

void mapopt__ld_log_settings(loader *L, const mapopt__json *v) {
  if (v->type != MAPOPT_JSON_STRING) {
    mapopt__jr_error(&L->jr, v,
                     "\"log_settings\" in \"timing\" must be a string");
    return;
  }
  const char *s = v->u.str.s;
  size_t len = v->u.str.len, nexprs = 0;
  for (size_t i = 0; i < len; i++)
    nexprs += s[i] == '{';
  mapopt__app_template *t = mapopt__ld_zalloc(L, 1, sizeof *t);
  const char **text = mapopt__ld_zalloc(L, nexprs + 1, sizeof *text);
  mapopt__app_expr **expr = mapopt__ld_zalloc(L, nexprs, sizeof *expr);
  const char *source = mapopt__arena_strndup(L->a, s, len);
  if (!t || !text || !expr || !source) {
    mapopt__ld_nomem(L);
    return;
  }
  t->source = source;
  t->text = text;
  t->expr = expr;
  /* The column of byte i of the string: one past the opening quote. */
  size_t lit = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && s[i] == '}') {
      mapopt__jr_error_at(&L->jr, v->line, v->col + 1 + (int)i,
                          "'}' without '{' in \"log_settings\" of "
                          "\"timing\"");
      return;
    }
    if (i < len && s[i] != '{')
      continue;
    text[t->nexprs] = mapopt__arena_strndup(L->a, s + lit, i - lit);
    if (!text[t->nexprs]) {
      mapopt__ld_nomem(L);
      return;
    }
    if (i == len)
      break;
    const char *close = memchr(s + i + 1, '}', len - i - 1);
    if (!close) {
      mapopt__jr_error_at(&L->jr, v->line, v->col + 1 + (int)i,
                          "'{' without '}' in \"log_settings\" of "
                          "\"timing\"");
      return;
    }
    /* The expression's text as a JSON string of its own, placed where it is
     * in the template, so that its diagnostics point into the template. */
    mapopt__json sub = {.type = MAPOPT_JSON_STRING,
                        .line = v->line,
                        .col = v->col + (int)(i + 1)};
    sub.u.str.s = s + i + 1;
    sub.u.str.len = (size_t)(close - s) - i - 1;
    expr[t->nexprs] = mapopt__ld_expr(L, &sub, "log_settings", "\"timing\"");
    if (!expr[t->nexprs])
      return;
    t->nexprs++;
    i = (size_t)(close - s);
    lit = i + 1;
  }
  L->app->log_settings = t;
}

/* ---- slots and the order of derived parameters --------------------------- */

void mapopt__ld_slots(loader *L) {
  mapopt_app *app = L->app;
  app->slot_of = mapopt__ld_zalloc(L, (size_t)app->nsyms, sizeof *app->slot_of);
  if (!app->slot_of)
    return;
  for (int32_t i = 0; i < app->nsyms; i++)
    app->slot_of[i] = -1;
  for (int i = 0; i < app->nparams; i++)
    app->slot_of[app->params[i].sym] = i;
  for (int i = 0; i < SLOT__MACHINE; i++)
    app->slot_of[i] = app->nparams + i; /* symbols 0..2: nodes gpus ranks */
  for (int j = 0; j < app->nderived; j++)
    app->slot_of[app->derived[j].sym] = SLOT_DERIVED(app, j);
}

/* The derived parameters an expression names, once per occurrence. */
typedef struct uses {
  const mapopt_app *app;
  mapopt__vec *out; /* int: derived index */
  bool nomem;
} uses;

static void collect_use(void *ud, const mapopt__app_ex_node *n) {
  uses *u = ud;
  if (n->op != EX_NAME)
    return;
  int32_t slot = u->app->slot_of[n->v];
  if (slot < SLOT_DERIVED(u->app, 0))
    return;
  int *p = mapopt__vec_push(u->out, u->app->ctx);
  if (!p)
    u->nomem = true;
  else
    *p = slot - SLOT_DERIVED(u->app, 0);
}

/* The first use of derived parameter j that Kahn's sort left unordered. */
static int next_pending(int j, const size_t *use_off, const int *use,
                        const int *pending) {
  for (size_t k = use_off[j]; k < use_off[j + 1]; k++)
    if (pending[use[k]] > 0)
      return use[k];
  return -1;
}

/* Reports the cycle through derived parameter `from`, which Kahn's sort left
 * unordered: each such parameter uses another one left unordered, so
 * following those uses from it comes back to a parameter already seen,
 * which starts the cycle. */
static void report_cycle(loader *L, int from, const size_t *use_off,
                         const int *use, const int *pending) {
  mapopt_app *app = L->app;
  bool *seen = mapopt__ld_zalloc(L, (size_t)app->nderived, sizeof *seen);
  if (!seen)
    return;
  int start = from;
  while (start >= 0 && !seen[start]) {
    seen[start] = true;
    start = next_pending(start, use_off, use, pending);
  }
  if (start < 0)
    return; /* unreachable: see above */
  mapopt__strbuf path;
  mapopt__sb_init(&path, app->ctx);
  int j = start;
  do {
    mapopt__sb_printf(&path, "%s -> ", app->derived[j].name);
    j = next_pending(j, use_off, use, pending);
  } while (j >= 0 && j != start);
  mapopt__sb_puts(&path, app->derived[start].name);
  if (path.failed)
    mapopt__ld_nomem(L);
  else
    mapopt__jr_error_at(&L->jr, app->derived[start].line,
                        app->derived[start].col,
                        "derived parameter \"%s\" depends on itself: %s",
                        app->derived[start].name, path.data);
  mapopt__sb_destroy(&path);
}

/* Kahn's sort of the derived parameters by their uses of each other: a
 * parameter is ready once every derived parameter it uses is; ready ones
 * are taken in the file's order. */
void mapopt__ld_derived_order(loader *L) {
  mapopt_app *app = L->app;
  size_t nd = (size_t)app->nderived;
  app->derived_order = mapopt__ld_zalloc(L, nd, sizeof *app->derived_order);
  size_t *use_off = mapopt__ld_zalloc(L, nd + 1, sizeof *use_off);
  int *pending = mapopt__ld_zalloc(L, nd, sizeof *pending);
  size_t *user_off = mapopt__ld_zalloc(L, nd + 2, sizeof *user_off);
  if (!app->derived_order || !use_off || !pending || !user_off)
    return;
  mapopt__vec all;
  mapopt__vec_init(&all, sizeof(int));
  uses u = {app, &all, false};
  for (size_t j = 0; j < nd; j++) {
    use_off[j] = all.len;
    mapopt__app_expr_walk(app->derived[j].expr->root, collect_use, &u);
  }
  use_off[nd] = all.len;
  const int *use = all.data;
  int *user = mapopt__ld_zalloc(L, all.len, sizeof *user);
  if (u.nomem || !user) {
    mapopt__ld_nomem(L);
    mapopt__vec_destroy(&all, app->ctx);
    return;
  }
  /* The users of each parameter, once per use: counts, offsets, entries. */
  for (size_t k = 0; k < all.len; k++)
    user_off[use[k] + 2]++;
  for (size_t j = 0; j < nd; j++)
    user_off[j + 2] += user_off[j + 1];
  for (size_t j = 0; j < nd; j++) {
    pending[j] = (int)(use_off[j + 1] - use_off[j]);
    for (size_t k = use_off[j]; k < use_off[j + 1]; k++)
      user[user_off[use[k] + 1]++] = (int)j;
  }
  size_t n = 0;
  for (size_t j = 0; j < nd; j++)
    if (pending[j] == 0)
      app->derived_order[n++] = (int)j;
  for (size_t head = 0; head < n; head++) {
    int k = app->derived_order[head];
    for (size_t x = user_off[k]; x < user_off[k + 1]; x++)
      if (--pending[user[x]] == 0)
        app->derived_order[n++] = user[x];
  }
  for (size_t j = 0; j < nd && n < nd; j++)
    if (pending[j] > 0) {
      report_cycle(L, (int)j, use_off, use, pending);
      break;
    }
  mapopt__vec_destroy(&all, app->ctx);
}
