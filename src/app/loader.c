/*
 * The helpers of the `mapopt-app/1` loader that load.c and params.c share
 * (loader.h): allocation in the model's arena, symbols, and expressions
 * parsed from JSON values with their syntax errors located in the file.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "app/loader.h"

void mapopt__ld_nomem(loader *L) {
  L->nomem = true;
  if (L->jr.status == MAPOPT_OK)
    L->jr.status = MAPOPT_ENOMEM;
}

const char *mapopt__ld_dup(loader *L, const char *s) {
  char *d = mapopt__arena_strndup(L->a, s, strlen(s));
  if (!d)
    mapopt__ld_nomem(L);
  return d;
}

void *mapopt__ld_zalloc(loader *L, size_t n, size_t size) {
  if (n == 0)
    n = 1;
  if (size && n > SIZE_MAX / size) {
    mapopt__ld_nomem(L);
    return NULL;
  }
  void *p = mapopt__arena_zalloc(L->a, n * size);
  if (!p)
    mapopt__ld_nomem(L);
  return p;
}

const char *mapopt__ld_fmt(loader *L, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  const char *s = mapopt__arena_vprintf(L->a, f, ap);
  va_end(ap);
  if (!s)
    mapopt__ld_nomem(L);
  return s;
}

/* ---- symbols ------------------------------------------------------------- */

static int32_t intern(void *ud, const char *s, size_t n) {
  mapopt_app *app = ud;
  mapopt__map_entry *e = mapopt__map_find(&app->symtab, s, n);
  if (e)
    return (int32_t)(intptr_t)e->value - 1;
  if (app->nsyms >= INT32_MAX - 1)
    return -1;
  char *key = mapopt__arena_strndup(&app->arena, s, n);
  const char **slot = mapopt__vec_push(&app->symnames, app->ctx);
  if (!key || !slot)
    return -1;
  *slot = key;
  bool ins;
  e = mapopt__map_upsert(&app->symtab, app->ctx, key, n, &ins);
  if (!e) {
    app->symnames.len--;
    return -1;
  }
  e->value = (void *)(intptr_t)(app->nsyms + 1);
  return app->nsyms++;
}

int32_t mapopt__ld_intern(loader *L, const char *s) {
  int32_t sym = intern(L->app, s, strlen(s));
  if (sym < 0)
    mapopt__ld_nomem(L);
  return sym;
}

bool mapopt__ld_is_ident(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    return false;
  for (s++; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

/* An expression from a JSON value (a string, or an integer constant). */
mapopt__app_expr *mapopt__ld_expr(loader *L, const mapopt__json *v,
                                  const char *key, const char *what) {
  mapopt__app_expr *e = mapopt__ld_zalloc(L, 1, sizeof *e);
  if (!e)
    return NULL;
  e->line = v->line;
  e->col = v->col;
  e->what = key ? mapopt__ld_fmt(L, "\"%s\" of %s", key, what) : what;
  if (v->type == MAPOPT_JSON_INT) {
    e->text = mapopt__ld_fmt(L, "%" PRId64, v->u.num.i);
    mapopt__app_ex_node *n = mapopt__ld_zalloc(L, 1, sizeof *n);
    if (!n || !e->text)
      return NULL;
    n->op = EX_INT;
    n->v = v->u.num.i;
    e->root = n;
    return e;
  }
  if (v->type != MAPOPT_JSON_STRING) {
    if (key)
      mapopt__jr_error(&L->jr, v,
                       "\"%s\" in %s must be an expression (a string or an "
                       "integer)",
                       key, what);
    else
      mapopt__jr_error(
          &L->jr, v, "%s must be an expression (a string or an integer)", what);
    return NULL;
  }
  e->quoted = true;
  e->text = mapopt__arena_strndup(L->a, v->u.str.s, v->u.str.len);
  if (!e->text) {
    mapopt__ld_nomem(L);
    return NULL;
  }
  const char *msg;
  uint32_t off;
  bool nm;
  char ex[MAPOPT__APP_EXCERPT];
  if (!mapopt__app_expr_parse(L->a, intern, L->app, e->text, v->u.str.len,
                              &e->root, &off, &msg, &nm)) {
    if (nm)
      mapopt__ld_nomem(L);
    else
      mapopt__jr_error_at(&L->jr, e->line, mapopt__app_expr_col(e, off),
                          "syntax error in expression \"%s\": %s",
                          mapopt__app_expr_excerpt(e, ex), msg);
    return NULL;
  }
  return e;
}
