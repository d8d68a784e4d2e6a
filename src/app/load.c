/*
 * Loading a `mapopt-app/1` model (docs/apps.md, "The format, key by key") from
 * JSON: the located JSON reader gives a tree, which is checked key by key and
 * turned into the symbolic model of app.h. Every problem is a located error
 * (FILE:LINE:COL): unknown keys, wrong types, unknown or duplicate names,
 * expression syntax errors (located inside the string), and names an expression
 * cannot see at the place it is used. Loading goes on after an error where it
 * safely can, so that one pass reports most problems.
 *
 * params.c loads the parameters, the derived parameters and the sizes, and
 * orders the derived parameters once the scopes are checked; loader.c
 * holds the helpers both use. Once the model is walked, check.c checks the
 * scope of every expression and collects the task names mappers are checked
 * against. Value-dependent checks (colours inside colour spaces, whole atoms
 * under writes, totality of expressions) happen at instantiation (inst.c).
 *
 * The JSON tree lives in a scratch arena freed before returning; the model
 * copies what it keeps into its own arena.
 */
#include "app/loader.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum {
  IN_BODY = 1,   /* a task body */
  IN_LOOP = 2,   /* some loop */
  IN_TSLOOP = 4, /* the time-step loop */
  IN_TIMED = 8,  /* a timed block */
  TOP = 16       /* a top-level statement of the program */
};

typedef struct wait_ref {
  int future;
  int line, col;
} wait_ref;

/* Registers name -> index+1 in m; false (and an error) for a duplicate. */
static bool define(loader *L, mapopt__map *m, const char *name, int idx,
                   const mapopt__json *at, const char *kind) {
  bool ins;
  mapopt__map_entry *e =
      mapopt__map_upsert(m, L->app->ctx, name, strlen(name), &ins);
  if (!e) {
    mapopt__ld_nomem(L);
    return false;
  }
  if (!ins) {
    mapopt__jr_error(&L->jr, at, "duplicate %s name \"%s\"", kind, name);
    return false;
  }
  e->value = (void *)(intptr_t)(idx + 1);
  return true;
}

static int lookup(const mapopt__map *m, const char *name) {
  mapopt__map_entry *e = mapopt__map_find(m, name, strlen(name));
  return e ? (int)(intptr_t)e->value - 1 : -1;
}

/* ---- typed members ------------------------------------------------------- */

/* A string member that must name something; "" when absent or wrong. */
static const char *str(loader *L, const mapopt__json *obj, const char *key,
                       const char *what, bool required) {
  const char *s = NULL;
  if (!mapopt__jr_str(&L->jr, obj, key, what, required, &s) || !s)
    return NULL;
  return s;
}

static bool get_expr(loader *L, const mapopt__json *obj, const char *key,
                     const char *what, bool required, mapopt__app_expr **out) {
  const mapopt__json *v = mapopt__json_get(obj, key);
  if (!v) {
    if (required)
      mapopt__jr_error(&L->jr, obj, "missing key \"%s\" in %s", key, what);
    return !required;
  }
  *out = mapopt__ld_expr(L, v, key, what);
  return *out != NULL;
}

/* An array of 1..max expressions. */
static int get_exprs(loader *L, const mapopt__json *obj, const char *key,
                     const char *what, bool required, int max,
                     mapopt__app_expr **out) {
  const mapopt__json *v = mapopt__jr_array(&L->jr, obj, key, what, required);
  if (!v)
    return 0;
  if (v->u.arr.n < 1 || v->u.arr.n > (size_t)max) {
    mapopt__jr_error(&L->jr, v, "\"%s\" in %s must list 1 to %d expressions",
                     key, what, max);
    return 0;
  }
  for (size_t i = 0; i < v->u.arr.n; i++) {
    const char *w = mapopt__ld_fmt(L, "\"%s\"[%zu] of %s", key, i, what);
    out[i] = w ? mapopt__ld_expr(L, v->u.arr.items[i], NULL, w) : NULL;
    if (!out[i])
      return 0;
  }
  return (int)v->u.arr.n;
}

/* An array of strings (copied); *n = 0 when absent. */
static const char **get_strs(loader *L, const mapopt__json *obj,
                             const char *key, const char *what, size_t *n) {
  *n = 0;
  const mapopt__json *v = mapopt__jr_array(&L->jr, obj, key, what, false);
  if (!v)
    return NULL;
  const char **out = mapopt__ld_zalloc(L, v->u.arr.n, sizeof *out);
  if (!out)
    return NULL;
  for (size_t i = 0; i < v->u.arr.n; i++) {
    const mapopt__json *s = v->u.arr.items[i];
    if (s->type != MAPOPT_JSON_STRING) {
      mapopt__jr_error(&L->jr, s, "\"%s\" in %s must list strings", key, what);
      return NULL;
    }
    out[i] = mapopt__ld_dup(L, s->u.str.s);
  }
  *n = v->u.arr.n;
  return out;
}

/* One of the listed words; -1 when absent (or wrong: check jr.status). */
static int word(loader *L, const mapopt__json *obj, const char *key,
                const char *what, bool required, const char *const *words) {
  const char *s = str(L, obj, key, what, required);
  if (!s)
    return -1;
  for (int i = 0; words[i]; i++)
    if (strcmp(s, words[i]) == 0)
      return i;
  char list[200] = "";
  for (int i = 0; words[i]; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
             i ? ", " : "", words[i]);
  mapopt__jr_error(&L->jr, mapopt__json_get(obj, key),
                   "\"%s\" in %s must be one of %s, not \"%s\"", key, what,
                   list, s);
  return -1;
}

static const char *const PRIVS[] = {"RO", "RW", "WD", "REDUCE", NULL};
static const char *const REDOPS[] = {"sum", "min", "max", "prod", NULL};
static const char *const ORDERS[] = {"F_order", "C_order", NULL};

const char *mapopt__app_redop_name(mapopt_redop r) {
  return (unsigned)r < 4 ? REDOPS[r] : "sum";
}
const char *mapopt_app_priv_name(mapopt_priv p) {
  return (unsigned)p < 4 ? PRIVS[p] : "RO";
}

/* ---- regions ------------------------------------------------------------- */

static void load_region(loader *L, const mapopt__json *v, int idx) {
  mapopt__app_region *r = &L->app->regions[idx];
  static const char *const keys[] = {"name", "fields", "atoms", "names", NULL};
  const char *what = mapopt__ld_fmt(L, "region %d", idx);
  if (!what || !mapopt__jr_object(&L->jr, v, what, keys))
    return;
  r->line = v->line;
  r->col = v->col;
  const char *name = str(L, v, "name", what, true);
  if (!name)
    return;
  r->name = mapopt__ld_dup(L, name);
  what = mapopt__ld_fmt(L, "region \"%s\"", name);
  if (!r->name || !what)
    return;
  define(L, &L->regions, r->name, idx, mapopt__json_get(v, "name"), "region");
  r->names = get_strs(L, v, "names", what, &r->nnames);
  const mapopt__json *fields =
      mapopt__jr_array(&L->jr, v, "fields", what, true);
  if (fields) {
    size_t n = fields->u.arr.n;
    if (n > MAPOPT_APP_MAX_FIELDS) {
      mapopt__jr_error(&L->jr, fields,
                       "region \"%s\" has %zu fields (at most "
                       "%d)",
                       name, n, MAPOPT_APP_MAX_FIELDS);
      return;
    }
    r->field_names = mapopt__ld_zalloc(L, n, sizeof *r->field_names);
    r->field_bytes = mapopt__ld_zalloc(L, n, sizeof *r->field_bytes);
    if (!r->field_names || !r->field_bytes)
      return;
    for (size_t i = 0; i < n; i++) {
      const mapopt__json *f = fields->u.arr.items[i];
      if (f->type != MAPOPT_JSON_ARRAY || f->u.arr.n != 2 ||
          f->u.arr.items[0]->type != MAPOPT_JSON_STRING ||
          f->u.arr.items[1]->type != MAPOPT_JSON_INT ||
          f->u.arr.items[1]->u.num.i < 1 ||
          f->u.arr.items[1]->u.num.i > MAPOPT_APP_MAX_FIELD_BYTES) {
        mapopt__jr_error(&L->jr, f,
                         "a field of %s must be [name, bytes] with bytes "
                         "from 1 to %" PRId64,
                         what, (int64_t)MAPOPT_APP_MAX_FIELD_BYTES);
        continue;
      }
      const char *fname = f->u.arr.items[0]->u.str.s;
      for (size_t j = 0; j < i; j++)
        if (r->field_names[j] && strcmp(r->field_names[j], fname) == 0)
          mapopt__jr_error(&L->jr, f->u.arr.items[0],
                           "duplicate field name \"%s\" in %s", fname, what);
      r->field_names[i] = mapopt__ld_dup(L, fname);
      r->field_bytes[i] = f->u.arr.items[1]->u.num.i;
    }
    r->nfields = (int)n;
  }
  const mapopt__json *atoms = mapopt__jr_child(&L->jr, v, "atoms", what, true);
  if (!atoms)
    return;
  const char *awhat = mapopt__ld_fmt(L, "\"atoms\" of %s", what);
  const mapopt__json *groups = mapopt__json_get(atoms, "groups");
  if (groups) {
    static const char *const akeys[] = {"groups", NULL};
    if (!mapopt__jr_object(&L->jr, atoms, awhat, akeys))
      return;
    groups = mapopt__jr_array(&L->jr, atoms, "groups", awhat, true);
    if (!groups)
      return;
    r->groups = mapopt__ld_zalloc(L, groups->u.arr.n, sizeof *r->groups);
    if (!r->groups)
      return;
    r->ngroups = (int)groups->u.arr.n;
    for (size_t i = 0; i < groups->u.arr.n; i++) {
      const mapopt__json *g = groups->u.arr.items[i];
      static const char *const gkeys[] = {"group", "count", "elements", NULL};
      const char *gw = mapopt__ld_fmt(L, "group %zu of %s", i, what);
      if (!gw || !mapopt__jr_object(&L->jr, g, gw, gkeys))
        continue;
      const char *gname = str(L, g, "group", gw, true);
      if (!gname)
        continue;
      for (size_t j = 0; j < i; j++)
        if (r->groups[j].name && strcmp(r->groups[j].name, gname) == 0)
          mapopt__jr_error(&L->jr, mapopt__json_get(g, "group"),
                           "duplicate group name \"%s\" in %s", gname, what);
      r->groups[i].name = mapopt__ld_dup(L, gname);
      gw = mapopt__ld_fmt(L, "group \"%s\" of %s", gname, what);
      if (!gw)
        continue;
      get_expr(L, g, "count", gw, true, &r->groups[i].count);
      get_expr(L, g, "elements", gw, true, &r->groups[i].elements);
    }
    return;
  }
  static const char *const gkeys[] = {"grid", "elements", "extent", NULL};
  if (!mapopt__jr_object(&L->jr, atoms, awhat, gkeys))
    return;
  if (!mapopt__json_get(atoms, "grid")) {
    mapopt__jr_error(&L->jr, atoms, "%s needs \"groups\" or \"grid\"", awhat);
    return;
  }
  r->grid = true;
  r->gdims =
      get_exprs(L, atoms, "grid", awhat, true, MAPOPT_APP_MAX_DIMS, r->gsize);
  bool has_el = mapopt__json_get(atoms, "elements") != NULL;
  bool has_ext = mapopt__json_get(atoms, "extent") != NULL;
  if (has_el == has_ext) {
    mapopt__jr_error(&L->jr, atoms,
                     "%s needs exactly one of \"elements\" and "
                     "\"extent\"",
                     awhat);
    return;
  }
  if (has_el) {
    get_expr(L, atoms, "elements", awhat, true, &r->gelements);
  } else {
    int ne = get_exprs(L, atoms, "extent", awhat, true, MAPOPT_APP_MAX_DIMS,
                       r->gextent);
    if (ne && r->gdims && ne != r->gdims)
      mapopt__jr_error(&L->jr, mapopt__json_get(atoms, "extent"),
                       "\"extent\" of %s has %d entries but \"grid\" has %d",
                       awhat, ne, r->gdims);
  }
}

/* ---- partitions ---------------------------------------------------------- */

static int find_group(const mapopt__app_region *r, const char *name) {
  for (int i = 0; i < r->ngroups; i++)
    if (r->groups[i].name && strcmp(r->groups[i].name, name) == 0)
      return i;
  return -1;
}

static void load_part(loader *L, const mapopt__json *v, int idx) {
  mapopt__app_part *p = &L->app->parts[idx];
  static const char *const keys[] = {"name",    "region", "kind", "names",
                                     "group",   "colors", "lo",   "hi",
                                     "entries", NULL};
  const char *what = mapopt__ld_fmt(L, "partition %d", idx);
  p->region = -1;
  if (!what || !mapopt__jr_object(&L->jr, v, what, keys))
    return;
  p->line = v->line;
  p->col = v->col;
  const char *name = str(L, v, "name", what, true);
  if (!name)
    return;
  p->name = mapopt__ld_dup(L, name);
  what = mapopt__ld_fmt(L, "partition \"%s\"", name);
  if (!p->name || !what)
    return;
  define(L, &L->parts, p->name, idx, mapopt__json_get(v, "name"), "partition");
  p->names = get_strs(L, v, "names", what, &p->nnames);
  const char *rname = str(L, v, "region", what, true);
  if (!rname)
    return;
  p->region = lookup(&L->regions, rname);
  if (p->region < 0) {
    mapopt__jr_error(&L->jr, mapopt__json_get(v, "region"),
                     "unknown region \"%s\" in %s", rname, what);
    return;
  }
  const mapopt__app_region *r = &L->app->regions[p->region];
  static const char *const kinds[] = {"group", "rect", "list", NULL};
  int kind = word(L, v, "kind", what, true, kinds);
  if (kind < 0)
    return;
  p->kind = (mapopt__app_part_kind)kind;
  /* Keys that belong to other kinds are errors, not silently ignored. */
  static const char *const only[3][4] = {{"group", NULL},
                                         {"colors", "lo", "hi", NULL},
                                         {"colors", "entries", NULL}};
  static const char *const opt[] = {"group", "colors",  "lo",
                                    "hi",    "entries", NULL};
  for (int i = 0; opt[i]; i++) {
    const mapopt__json_member *m = mapopt__json_member_of(v, opt[i]);
    bool ok = false;
    for (int j = 0; only[kind][j]; j++)
      ok = ok || strcmp(only[kind][j], opt[i]) == 0;
    if (m && !ok)
      mapopt__jr_error_at(&L->jr, m->line, m->col,
                          "\"%s\" does not apply to a %s partition (%s)",
                          opt[i], kinds[kind], what);
  }
  if (kind == PART_GROUP) {
    p->ncolors = 1;
    const char *g = str(L, v, "group", what, true);
    if (!g)
      return;
    if (r->grid || (p->group = find_group(r, g)) < 0) {
      mapopt__jr_error(&L->jr, mapopt__json_get(v, "group"),
                       "unknown group \"%s\" of region \"%s\" in %s", g,
                       r->name, what);
      return;
    }
    return;
  }
  p->ncolors =
      get_exprs(L, v, "colors", what, true, MAPOPT_APP_MAX_DIMS, p->colors);
  if (kind == PART_RECT) {
    if (!r->grid) {
      mapopt__jr_error(&L->jr, mapopt__json_get(v, "kind"),
                       "a rect partition needs a grid region, and \"%s\" has "
                       "groups (%s)",
                       r->name, what);
      return;
    }
    int nlo = get_exprs(L, v, "lo", what, true, MAPOPT_APP_MAX_DIMS, p->lo);
    int nhi = get_exprs(L, v, "hi", what, true, MAPOPT_APP_MAX_DIMS, p->hi);
    if (nlo && r->gdims && nlo != r->gdims)
      mapopt__jr_error(&L->jr, mapopt__json_get(v, "lo"),
                       "\"lo\" of %s has %d entries but region \"%s\" has a "
                       "%d-D grid",
                       what, nlo, r->name, r->gdims);
    if (nhi && r->gdims && nhi != r->gdims)
      mapopt__jr_error(&L->jr, mapopt__json_get(v, "hi"),
                       "\"hi\" of %s has %d entries but region \"%s\" has a "
                       "%d-D grid",
                       what, nhi, r->name, r->gdims);
    return;
  }
  const mapopt__json *entries =
      mapopt__jr_array(&L->jr, v, "entries", what, true);
  if (!entries)
    return;
  p->entries = mapopt__ld_zalloc(L, entries->u.arr.n, sizeof *p->entries);
  if (!p->entries)
    return;
  p->nentries = (int)entries->u.arr.n;
  for (size_t i = 0; i < entries->u.arr.n; i++) {
    const mapopt__json *e = entries->u.arr.items[i];
    mapopt__app_entry *en = &p->entries[i];
    static const char *const ekeys[] = {"group", "atom", "count", NULL};
    const char *ew = mapopt__ld_fmt(L, "entry %zu of %s", i, what);
    if (!ew || !mapopt__jr_object(&L->jr, e, ew, ekeys))
      continue;
    en->group = -1;
    const char *g = str(L, e, "group", ew, !r->grid);
    if (g) {
      if (r->grid || (en->group = find_group(r, g)) < 0) {
        mapopt__jr_error(&L->jr, mapopt__json_get(e, "group"),
                         "unknown group \"%s\" of region \"%s\" in %s", g,
                         r->name, ew);
        continue;
      }
    }
    const mapopt__json *at = mapopt__json_get(e, "atom");
    if (!at) {
      mapopt__jr_error(&L->jr, e, "missing key \"atom\" in %s", ew);
      continue;
    }
    if (at->type == MAPOPT_JSON_ARRAY) {
      if (!r->grid) {
        mapopt__jr_error(&L->jr, at,
                         "\"atom\" in %s must be one expression "
                         "(an index in the group)",
                         ew);
        continue;
      }
      en->natom =
          get_exprs(L, e, "atom", ew, true, MAPOPT_APP_MAX_DIMS, en->atom);
      if (en->natom && r->gdims && en->natom != r->gdims)
        mapopt__jr_error(&L->jr, at,
                         "\"atom\" in %s has %d coordinates but "
                         "region \"%s\" has a %d-D grid",
                         ew, en->natom, r->name, r->gdims);
    } else {
      en->natom = get_expr(L, e, "atom", ew, true, &en->atom[0]) ? 1 : 0;
    }
    get_expr(L, e, "count", ew, false, &en->count);
  }
}

/* ---- tasks --------------------------------------------------------------- */

static void load_rules(loader *L, const mapopt__json *v, const char *key,
                       const char *what, bool req, size_t *n,
                       mapopt__app_rule **out) {
  const mapopt__json *arr = mapopt__jr_array(&L->jr, v, key, what, false);
  if (!arr)
    return;
  mapopt__app_rule *rules = mapopt__ld_zalloc(L, arr->u.arr.n, sizeof *rules);
  if (!rules)
    return;
  for (size_t i = 0; i < arr->u.arr.n; i++) {
    const mapopt__json *r = arr->u.arr.items[i];
    static const char *const rk[] = {"args", "soa", "order", "error", NULL};
    static const char *const pk[] = {"args", "soa", "order", "penalty", NULL};
    const char *rw = mapopt__ld_fmt(L, "\"%s\"[%zu] of %s", key, i, what);
    mapopt__app_rule *ru = &rules[i];
    ru->soa = ru->c_order = MAPOPT_LAYOUT_UNSET;
    ru->penalty = 1.0;
    if (!rw || !mapopt__jr_object(&L->jr, r, rw, req ? rk : pk))
      continue;
    const mapopt__json *args = mapopt__jr_array(&L->jr, r, "args", rw, true);
    if (args) {
      ru->args_listed = mapopt__ld_zalloc(L, args->u.arr.n, sizeof(int64_t));
      if (!ru->args_listed)
        return;
      for (size_t j = 0; j < args->u.arr.n; j++) {
        const mapopt__json *x = args->u.arr.items[j];
        if (x->type != MAPOPT_JSON_INT || x->u.num.i < 0 ||
            x->u.num.i >= MAPOPT_APP_MAX_ARGS) {
          mapopt__jr_error(&L->jr, x,
                           "\"args\" in %s must list argument "
                           "positions in [0, %d]",
                           rw, MAPOPT_APP_MAX_ARGS - 1);
          continue;
        }
        ru->args |= UINT64_C(1) << x->u.num.i;
        ru->args_listed[ru->nargs_listed++] = x->u.num.i;
      }
    }
    bool b;
    if (mapopt__json_get(r, "soa") &&
        mapopt__jr_bool(&L->jr, r, "soa", rw, false, &b))
      ru->soa = b ? MAPOPT_LAYOUT_YES : MAPOPT_LAYOUT_NO;
    int o = word(L, r, "order", rw, false, ORDERS);
    if (o >= 0)
      ru->c_order = o == 1 ? MAPOPT_LAYOUT_YES : MAPOPT_LAYOUT_NO;
    if (req) {
      static const char *const errs[] = {"stride", "dgemm", NULL};
      int e = word(L, r, "error", rw, false, errs);
      ru->error =
          e == 1 ? MAPOPT_LAYOUT_ERROR_DGEMM : MAPOPT_LAYOUT_ERROR_STRIDE;
    } else {
      mapopt__jr_num(&L->jr, r, "penalty", rw, true, 1e-6, 1e6, &ru->penalty);
    }
  }
  *n = arr->u.arr.n;
  *out = rules;
}

static void load_variant(loader *L, mapopt__app_task *t, const mapopt__json *v,
                         int idx) {
  mapopt__app_variant *va = &t->variants[idx];
  static const char *const keys[] = {
      "kind",    "inner",    "flops", "precision", "matrix",  "flops_eff",
      "mem_eff", "fixed_ns", "reuse", "requires",  "prefers", NULL};
  const char *what =
      mapopt__ld_fmt(L, "variant %d of task \"%s\"", idx, t->name);
  va->flops_eff = va->mem_eff = 1.0;
  va->line = v->line;
  va->col = v->col;
  if (!what || !mapopt__jr_object(&L->jr, v, what, keys))
    return;
  static const char *const kinds[] = {"CPU", "GPU", "OMP", NULL};
  static const mapopt_proc_kind kk[] = {MAPOPT_PROC_CPU, MAPOPT_PROC_GPU,
                                        MAPOPT_PROC_OMP};
  int k = word(L, v, "kind", what, true, kinds);
  if (k < 0)
    return;
  va->kind = kk[k];
  if (t->kinds & (1u << va->kind))
    mapopt__jr_error(&L->jr, mapopt__json_get(v, "kind"),
                     "task \"%s\" has two %s variants", t->name, kinds[k]);
  t->kinds |= 1u << va->kind;
  what = mapopt__ld_fmt(L, "the %s variant of task \"%s\"", kinds[k], t->name);
  if (!what)
    return;
  mapopt__jr_bool(&L->jr, v, "inner", what, false, &va->inner);
  mapopt__jr_bool(&L->jr, v, "matrix", what, false, &va->matrix);
  static const char *const precs[] = {"f64", "f32", NULL};
  va->f32 = word(L, v, "precision", what, false, precs) == 1;
  static const char *const effs[] = {"flops_eff", "mem_eff"};
  double *effv[] = {&va->flops_eff, &va->mem_eff};
  for (int i = 0; i < 2; i++) {
    const mapopt__json *e = mapopt__json_get(v, effs[i]);
    if (!e)
      continue;
    if ((e->type == MAPOPT_JSON_INT || e->type == MAPOPT_JSON_REAL) &&
        e->u.num.d > 0 && e->u.num.d <= 1)
      *effv[i] = e->u.num.d;
    else
      mapopt__jr_error(&L->jr, e, "\"%s\" in %s must be a number in (0, 1]",
                       effs[i], what);
  }
  get_expr(L, v, "flops", what, false, &va->flops);
  get_expr(L, v, "fixed_ns", what, false, &va->fixed_ns);
  get_expr(L, v, "reuse", what, false, &va->reuse);
  load_rules(L, v, "requires", what, true, &va->nrequires, &va->requires);
  load_rules(L, v, "prefers", what, false, &va->nprefers, &va->prefers);
}

static void load_stmts(loader *L, const mapopt__json *arr, const char *what,
                       int flags, int *n, mapopt__app_stmt **out);

/* First pass: names only, so that any statement may launch any task. */
static void declare_task(loader *L, const mapopt__json *v, int idx) {
  mapopt__app_task *t = &L->app->tasks[idx];
  if (!v || v->type != MAPOPT_JSON_OBJECT)
    return;
  const mapopt__json *n = mapopt__json_get(v, "name");
  if (!n || n->type != MAPOPT_JSON_STRING)
    return;
  t->name = mapopt__ld_dup(L, n->u.str.s);
  if (!t->name)
    return;
  if (strcmp(t->name, "main") == 0) {
    mapopt__jr_error(&L->jr, n,
                     "the task name \"main\" is reserved for the "
                     "top-level task");
    return;
  }
  define(L, &L->tasks, t->name, idx, n, "task");
}

static void load_task(loader *L, const mapopt__json *v, int idx) {
  mapopt__app_task *t = &L->app->tasks[idx];
  static const char *const keys[] = {"name", "variants", "body", "point", NULL};
  const char *what = mapopt__ld_fmt(L, "task %d", idx);
  if (!what || !mapopt__jr_object(&L->jr, v, what, keys))
    return;
  t->line = v->line;
  t->col = v->col;
  if (!str(L, v, "name", what, true) || !t->name)
    return;
  what = mapopt__ld_fmt(L, "task \"%s\"", t->name);
  if (!what)
    return;
  size_t np = 0;
  const char **pt = get_strs(L, v, "point", what, &np);
  if (np > MAPOPT_APP_MAX_DIMS) {
    mapopt__jr_error(&L->jr, mapopt__json_get(v, "point"),
                     "\"point\" in %s names at most %d coordinates", what,
                     MAPOPT_APP_MAX_DIMS);
    np = 0;
  }
  for (size_t i = 0; i < np; i++) {
    if (!pt[i])
      return;
    if (!mapopt__ld_is_ident(pt[i])) {
      mapopt__jr_error(&L->jr, mapopt__json_get(v, "point"),
                       "\"%s\" in \"point\" of %s is not a name", pt[i], what);
      return;
    }
    t->point[i] = pt[i];
    t->point_sym[i] = mapopt__ld_intern(L, pt[i]);
  }
  t->npoint = (int)np;
  const mapopt__json *vs = mapopt__jr_array(&L->jr, v, "variants", what, true);
  if (vs) {
    if (vs->u.arr.n == 0)
      mapopt__jr_error(&L->jr, vs, "%s has no variants", what);
    t->variants = mapopt__ld_zalloc(L, vs->u.arr.n, sizeof *t->variants);
    if (!t->variants)
      return;
    t->nvariants = (int)vs->u.arr.n;
    for (size_t i = 0; i < vs->u.arr.n; i++)
      load_variant(L, t, vs->u.arr.items[i], (int)i);
  }
  const mapopt__json *body = mapopt__json_get(v, "body");
  t->has_body = body != NULL;
  if (body)
    load_stmts(L, body, mapopt__ld_fmt(L, "\"body\" of %s", what), IN_BODY,
               &t->nbody, &t->body);
  t->inner = t->nvariants > 0;
  for (int i = 0; i < t->nvariants; i++) {
    const mapopt__app_variant *va = &t->variants[i];
    t->inner = t->inner && va->inner;
    if (va->inner && !t->has_body)
      mapopt__jr_error_at(&L->jr, va->line, va->col,
                          "the %s variant of %s is inner but the task has no "
                          "\"body\"",
                          mapopt_shape_proc_name(va->kind), what);
    if (!va->inner && t->has_body)
      mapopt__jr_error_at(&L->jr, va->line, va->col,
                          "%s has a \"body\", so its %s variant must be "
                          "\"inner\": true",
                          what, mapopt_shape_proc_name(va->kind));
  }
}

/* ---- statements ---------------------------------------------------------- */

static int future_index(loader *L, const char *name) {
  int i = lookup(&L->futures, name);
  if (i >= 0)
    return i;
  const char *d = mapopt__ld_dup(L, name);
  const char **slot = mapopt__vec_push(&L->futvec, L->app->ctx);
  bool *pr = mapopt__vec_push(&L->produced, L->app->ctx);
  if (!d || !slot || !pr) {
    mapopt__ld_nomem(L);
    return -1;
  }
  *slot = d;
  i = (int)L->futvec.len - 1;
  bool ins;
  mapopt__map_entry *e =
      mapopt__map_upsert(&L->futures, L->app->ctx, d, strlen(d), &ins);
  if (!e) {
    mapopt__ld_nomem(L);
    return -1;
  }
  e->value = (void *)(intptr_t)(i + 1);
  return i;
}

static void load_req(loader *L, mapopt__app_stmt *st, const mapopt__json *v,
                     mapopt__app_req *rq, const char *what, bool fill) {
  static const char *const keys[] = {"part",  "region",    "proj",    "priv",
                                     "redop", "coherence", "fields",  "names",
                                     "bytes", "gathers",   "atomics", NULL};
  rq->part = rq->region = -1;
  rq->line = v->line;
  rq->col = v->col;
  rq->gid = L->app->nreqs++;
  if (!fill && !mapopt__jr_object(&L->jr, v, what, keys))
    return;
  const char *pn = str(L, v, "part", what, false);
  const char *rn = str(L, v, "region", what, false);
  if (L->jr.status != MAPOPT_OK && !pn && !rn)
    return;
  if (!pn == !rn) {
    mapopt__jr_error(&L->jr, v,
                     pn ? "%s has both \"part\" and \"region\""
                        : "%s needs \"part\" or \"region\"",
                     what);
    return;
  }
  int ncolors = 0;
  if (pn) {
    rq->part = lookup(&L->parts, pn);
    if (rq->part < 0) {
      mapopt__jr_error(&L->jr, mapopt__json_get(v, "part"),
                       "unknown partition \"%s\" in %s", pn, what);
      return;
    }
    rq->region = L->app->parts[rq->part].region;
    ncolors = L->app->parts[rq->part].ncolors;
    if (rq->region < 0)
      return;
  } else {
    rq->region = lookup(&L->regions, rn);
    if (rq->region < 0) {
      mapopt__jr_error(&L->jr, mapopt__json_get(v, "region"),
                       "unknown region \"%s\" in %s", rn, what);
      return;
    }
  }
  const mapopt__app_region *r = &L->app->regions[rq->region];
  /* Projection. */
  const mapopt__json *proj = mapopt__json_get(v, "proj");
  if (proj && !pn) {
    mapopt__jr_error(&L->jr, proj, "\"proj\" in %s needs \"part\"", what);
  } else if (pn && !proj) {
    if (st->kind == ST_INDEX)
      rq->identity = true;
    else
      mapopt__jr_error(&L->jr, v,
                       "missing key \"proj\" in %s (only an index "
                       "launch has a point for the identity projection)",
                       what);
  } else if (proj && proj->type == MAPOPT_JSON_STRING) {
    if (strcmp(proj->u.str.s, "identity") != 0 || st->kind != ST_INDEX)
      mapopt__jr_error(&L->jr, proj,
                       "\"proj\" in %s must be %sa list of "
                       "expressions",
                       what, st->kind == ST_INDEX ? "\"identity\" or " : "");
    else
      rq->identity = true;
  } else if (proj) {
    rq->nproj =
        get_exprs(L, v, "proj", what, true, MAPOPT_APP_MAX_DIMS, rq->proj);
    if (rq->nproj && ncolors && rq->nproj != ncolors)
      mapopt__jr_error(&L->jr, proj,
                       "\"proj\" of %s has %d expressions but "
                       "partition \"%s\" has %d-D colours",
                       what, rq->nproj, pn, ncolors);
  }
  if (rq->identity && st->ndims && ncolors && st->ndims != ncolors)
    mapopt__jr_error(&L->jr, v,
                     "the identity projection of %s needs "
                     "partition \"%s\" to have %d-D colours, not %d-D",
                     what, pn, st->ndims, ncolors);
  /* Privilege. */
  if (fill) {
    rq->priv = MAPOPT_PRIV_WD;
  } else {
    int p = word(L, v, "priv", what, true, PRIVS);
    if (p >= 0)
      rq->priv = (mapopt_priv)p;
    int ro = word(L, v, "redop", what, false, REDOPS);
    if (ro >= 0) {
      if (rq->priv != MAPOPT_PRIV_REDUCE)
        mapopt__jr_error(&L->jr, mapopt__json_get(v, "redop"),
                         "\"redop\" in %s needs \"priv\": \"REDUCE\"", what);
      rq->redop = (mapopt_redop)ro;
    }
    static const char *const coh[] = {"exclusive", "simultaneous", NULL};
    rq->simultaneous = word(L, v, "coherence", what, false, coh) == 1;
  }
  /* Fields. */
  const mapopt__json *fl = mapopt__jr_array(&L->jr, v, "fields", what, false);
  if (fl) {
    rq->fields_given = true;
    for (size_t i = 0; i < fl->u.arr.n; i++) {
      const mapopt__json *f = fl->u.arr.items[i];
      int k = -1;
      if (f->type == MAPOPT_JSON_STRING)
        for (int j = 0; j < r->nfields; j++)
          if (r->field_names[j] && strcmp(r->field_names[j], f->u.str.s) == 0)
            k = j;
      if (k < 0) {
        if (f->type == MAPOPT_JSON_STRING)
          mapopt__jr_error(&L->jr, f,
                           "unknown field \"%s\" of region \"%s\" "
                           "in %s",
                           f->u.str.s, r->name, what);
        else
          mapopt__jr_error(&L->jr, f,
                           "\"fields\" in %s must list field "
                           "names",
                           what);
        continue;
      }
      if (rq->fields & (UINT64_C(1) << k))
        mapopt__jr_error(&L->jr, f, "field \"%s\" is listed twice in %s",
                         f->u.str.s, what);
      rq->fields |= UINT64_C(1) << k;
    }
  } else {
    rq->fields =
        r->nfields >= 64 ? UINT64_MAX : (UINT64_C(1) << r->nfields) - 1;
  }
  for (int j = 0; j < r->nfields; j++)
    if (rq->fields & (UINT64_C(1) << j))
      rq->fbytes += r->field_bytes[j];
  if (!fill) {
    rq->names = get_strs(L, v, "names", what, &rq->nnames);
    get_expr(L, v, "bytes", what, false, &rq->bytes);
    get_expr(L, v, "gathers", what, false, &rq->gathers);
    get_expr(L, v, "atomics", what, false, &rq->atomics);
  }
  /* Mapper-visible names, key order, without repeats. */
  const mapopt__app_part *p = rq->part >= 0 ? &L->app->parts[rq->part] : NULL;
  size_t cap = 2 + rq->nnames + r->nnames + (p ? p->nnames : 0);
  rq->all = mapopt__ld_zalloc(L, cap, sizeof *rq->all);
  if (!rq->all)
    return;
#define ADD(s)                                                                 \
  do {                                                                         \
    const char *s_ = (s);                                                      \
    bool seen_ = !s_;                                                          \
    for (size_t q_ = 0; q_ < rq->nall && !seen_; q_++)                         \
      seen_ = strcmp(rq->all[q_], s_) == 0;                                    \
    if (!seen_ && rq->nall < cap)                                              \
      rq->all[rq->nall++] = s_;                                                \
  } while (0)
  if (p) {
    ADD(p->name);
    for (size_t i = 0; i < p->nnames; i++)
      ADD(p->names[i]);
  }
  for (size_t i = 0; i < rq->nnames; i++)
    ADD(rq->names[i]);
  ADD(r->name);
  for (size_t i = 0; i < r->nnames; i++)
    ADD(r->names[i]);
#undef ADD
}

static void load_launch(loader *L, mapopt__app_stmt *st, const mapopt__json *v,
                        const char *opname) {
  const char *tn =
      str(L, v, "task", mapopt__ld_fmt(L, "%s launch", opname), true);
  if (!tn)
    return;
  st->task = lookup(&L->tasks, tn);
  const char *what = mapopt__ld_fmt(L, "%s launch of \"%s\"", opname, tn);
  if (!what)
    return;
  if (st->task < 0) {
    mapopt__jr_error(&L->jr, mapopt__json_get(v, "task"),
                     "unknown task \"%s\" in %s launch", tn, opname);
    return;
  }
  if (st->kind == ST_INDEX) {
    st->ndims =
        get_exprs(L, v, "domain", what, true, MAPOPT_APP_MAX_DIMS, st->domain);
    size_t np = 0;
    const char **pt = get_strs(L, v, "point", what, &np);
    if (pt) {
      st->point_given = true;
      if (st->ndims && np != (size_t)st->ndims) {
        mapopt__jr_error(&L->jr, mapopt__json_get(v, "point"),
                         "\"point\" in %s names %zu coordinates but the domain "
                         "has %d dimensions",
                         what, np, st->ndims);
        np = 0;
      }
      for (size_t i = 0; i < np && i < MAPOPT_APP_MAX_DIMS; i++) {
        if (!pt[i])
          return;
        if (!mapopt__ld_is_ident(pt[i])) {
          mapopt__jr_error(&L->jr, mapopt__json_get(v, "point"),
                           "\"%s\" in \"point\" of %s is not a name", pt[i],
                           what);
          return;
        }
        st->point[i] = pt[i];
      }
    } else {
      static const char *const defaults[] = {"i0", "i1", "i2"};
      for (int i = 0; i < st->ndims; i++)
        st->point[i] = defaults[i];
    }
    for (int i = 0; i < st->ndims; i++)
      if (st->point[i])
        st->point_sym[i] = mapopt__ld_intern(L, st->point[i]);
  }
  const mapopt__json *args = mapopt__jr_array(&L->jr, v, "args", what, false);
  if (args) {
    if (args->u.arr.n > MAPOPT_APP_MAX_ARGS) {
      mapopt__jr_error(&L->jr, args,
                       "%s has %zu arguments (at most %d, the requirements "
                       "the simulator tracks per task)",
                       what, args->u.arr.n, MAPOPT_APP_MAX_ARGS);
      return;
    }
    st->args = mapopt__ld_zalloc(L, args->u.arr.n, sizeof *st->args);
    if (!st->args)
      return;
    st->nargs = (int)args->u.arr.n;
    for (size_t i = 0; i < args->u.arr.n; i++) {
      const char *aw = mapopt__ld_fmt(L, "argument %zu of %s", i, what);
      if (!aw)
        return;
      load_req(L, st, args->u.arr.items[i], &st->args[i], aw, false);
    }
  }
  st->future = -1;
  const mapopt__json *fu = mapopt__jr_child(&L->jr, v, "future", what, false);
  if (fu) {
    static const char *const ik[] = {"name", "redop", NULL};
    static const char *const sk[] = {"name", NULL};
    const char *fw = mapopt__ld_fmt(L, "\"future\" of %s", what);
    if (fw &&
        mapopt__jr_object(&L->jr, fu, fw, st->kind == ST_INDEX ? ik : sk)) {
      const char *fname = str(L, fu, "name", fw, true);
      if (fname) {
        st->future = future_index(L, fname);
        if (st->future >= 0)
          MAPOPT__VEC_AT(&L->produced, bool, st->future) = true;
      }
      int ro = word(L, fu, "redop", fw, false, REDOPS);
      st->fredop = ro >= 0 ? (mapopt_redop)ro : MAPOPT_REDOP_SUM;
    }
  }
  const mapopt__json *wa = mapopt__jr_array(&L->jr, v, "wait", what, false);
  if (wa) {
    st->waits = mapopt__ld_zalloc(L, wa->u.arr.n, sizeof *st->waits);
    if (!st->waits)
      return;
    for (size_t i = 0; i < wa->u.arr.n; i++) {
      const mapopt__json *w = wa->u.arr.items[i];
      if (w->type != MAPOPT_JSON_STRING) {
        mapopt__jr_error(&L->jr, w, "\"wait\" in %s must list future names",
                         what);
        continue;
      }
      int f = future_index(L, w->u.str.s);
      wait_ref *ref = mapopt__vec_push(&L->waits, L->app->ctx);
      if (f < 0 || !ref) {
        mapopt__ld_nomem(L);
        return;
      }
      *ref = (wait_ref){f, w->line, w->col};
      st->waits[st->nwaits++] = f;
    }
  }
}

static void load_stmt(loader *L, const mapopt__json *v, mapopt__app_stmt *st,
                      int flags) {
  static const char *const ops[] = {"index", "single", "fill", "fence",
                                    "loop",  "timed",  NULL};
  static const char *const ikeys[] = {"op",   "task",   "domain", "point",
                                      "args", "future", "wait",   NULL};
  static const char *const skeys[] = {"op",     "task", "args",
                                      "future", "wait", NULL};
  static const char *const fkeys[] = {"op",   "region", "part",
                                      "proj", "fields", NULL};
  static const char *const ekeys[] = {"op", NULL};
  static const char *const lkeys[] = {"op",     "var",   "count",  "body",
                                      "warmup", "timed", "traced", NULL};
  static const char *const tkeys[] = {"op", "body", NULL};
  static const char *const *const keys[] = {ikeys, skeys, fkeys,
                                            ekeys, lkeys, tkeys};
  st->line = v->line;
  st->col = v->col;
  st->future = -1;
  if (!mapopt__jr_object(&L->jr, v, "a statement", NULL))
    return;
  int op = word(L, v, "op", "a statement", true, ops);
  if (op < 0)
    return;
  st->kind = (mapopt__app_stmt_kind)op;
  const char *what = mapopt__ld_fmt(L, "%s statement", ops[op]);
  if (!what || !mapopt__jr_object(&L->jr, v, what, keys[op]))
    return;
  switch (st->kind) {
  case ST_INDEX:
    load_launch(L, st, v, "index");
    break;
  case ST_SINGLE:
    load_launch(L, st, v, "single");
    break;
  case ST_FILL:
    st->args = mapopt__ld_zalloc(L, 1, sizeof *st->args);
    if (!st->args)
      return;
    st->nargs = 1;
    load_req(L, st, v, st->args, "fill", true);
    break;
  case ST_FENCE:
    break;
  case ST_LOOP: {
    const char *var = str(L, v, "var", "loop", true);
    if (!var)
      return;
    if (!mapopt__ld_is_ident(var)) {
      mapopt__jr_error(&L->jr, mapopt__json_get(v, "var"),
                       "loop variable \"%s\" is not a name", var);
      return;
    }
    st->var = mapopt__ld_dup(L, var);
    st->var_sym = mapopt__ld_intern(L, var);
    what = mapopt__ld_fmt(L, "loop \"%s\"", var);
    if (!what)
      return;
    get_expr(L, v, "count", what, true, &st->count);
    mapopt__jr_bool(&L->jr, v, "timed", what, false, &st->timed);
    mapopt__jr_bool(&L->jr, v, "traced", what, false, &st->traced);
    const mapopt__json *w = mapopt__json_get(v, "warmup");
    if (w && !st->timed)
      mapopt__jr_error(&L->jr, w,
                       "\"warmup\" in %s needs \"timed\": true "
                       "(only the time-step loop has warm-up iterations)",
                       what);
    else
      get_expr(L, v, "warmup", what, false, &st->warmup);
    if (st->timed) {
      if (L->app->tsloop) {
        mapopt__jr_error(&L->jr, v,
                         "a second time-step loop (\"timed\": "
                         "true); the first is at %d:%d",
                         L->tsline, L->tscol);
      } else if (!(flags & TOP)) {
        mapopt__jr_error(&L->jr, v,
                         "the time-step loop (\"timed\": true) "
                         "must be a top-level statement of \"program\"");
      } else {
        L->app->tsloop = st;
        L->tsline = st->line;
        L->tscol = st->col;
        flags |= IN_TSLOOP;
      }
    }
    const mapopt__json *body = mapopt__json_get(v, "body");
    if (!body)
      mapopt__jr_error(&L->jr, v, "missing key \"body\" in %s", what);
    else
      load_stmts(L, body, mapopt__ld_fmt(L, "\"body\" of %s", what),
                 (flags & ~TOP) | IN_LOOP, &st->nbody, &st->body);
    break;
  }
  case ST_TIMED: {
    if (L->app->timing != MAPOPT_TIMING_FENCED)
      mapopt__jr_error(&L->jr, v,
                       "a \"timed\" block needs \"timing\": "
                       "{\"mode\": \"fenced\"}");
    else if ((flags & IN_BODY) || !(flags & IN_TSLOOP))
      mapopt__jr_error(&L->jr, v,
                       "a \"timed\" block must be inside the "
                       "time-step loop, outside task bodies");
    else if (flags & IN_TIMED)
      mapopt__jr_error(&L->jr, v, "a \"timed\" block inside another");
    L->saw_timed = true;
    const mapopt__json *body = mapopt__json_get(v, "body");
    if (!body)
      mapopt__jr_error(&L->jr, v, "missing key \"body\" in timed statement");
    else
      load_stmts(L, body, "\"body\" of a timed block",
                 (flags & ~TOP) | IN_TIMED, &st->nbody, &st->body);
    break;
  }
  }
}

static void load_stmts(loader *L, const mapopt__json *arr, const char *what,
                       int flags, int *n, mapopt__app_stmt **out) {
  if (!what)
    return;
  if (arr->type != MAPOPT_JSON_ARRAY) {
    mapopt__jr_error(&L->jr, arr, "%s must be an array of statements", what);
    return;
  }
  mapopt__app_stmt *sts = mapopt__ld_zalloc(L, arr->u.arr.n, sizeof *sts);
  if (!sts)
    return;
  for (size_t i = 0; i < arr->u.arr.n; i++)
    load_stmt(L, arr->u.arr.items[i], &sts[i], flags);
  *n = (int)arr->u.arr.n;
  *out = sts;
}

/* ---- top level ----------------------------------------------------------- */

static void load_top(loader *L, const mapopt__json *root) {
  mapopt_app *app = L->app;
  static const char *const keys[] = {
      "format",        "name",   "params",  "derived",    "sizes",
      "default_order", "timing", "regions", "partitions", "tasks",
      "program",       "run",    NULL};
  if (!mapopt__jr_object(&L->jr, root, "the application", keys))
    return;
  const char *format = str(L, root, "format", "the application", true);
  if (format && strcmp(format, "mapopt-app/1") != 0) {
    mapopt__jr_error(&L->jr, mapopt__json_get(root, "format"),
                     "unsupported format \"%s\" (expected \"mapopt-app/1\")",
                     format);
    return;
  }
  const char *name = str(L, root, "name", "the application", true);
  app->name = name ? mapopt__ld_dup(L, name) : NULL;
  /* Reserved symbols first: the machine facts and c0 c1 c2. */
  static const char *const machine[] = {"nodes", "gpus", "ranks"};
  for (int i = 0; i < SLOT__MACHINE; i++)
    mapopt__ld_intern(L, machine[i]);
  for (int d = 0; d < MAPOPT_APP_MAX_DIMS; d++) {
    char c[3] = {'c', (char)('0' + d), 0};
    app->csym[d] = mapopt__ld_intern(L, c);
  }
  mapopt__ld_params(L, root);
  int o = word(L, root, "default_order", "the application", false, ORDERS);
  app->default_c_order = o == 1;
  /* Timing. */
  const mapopt__json *timing =
      mapopt__jr_child(&L->jr, root, "timing", "the application", false);
  if (timing) {
    static const char *const tkeys[] = {
        "mode", "metric", "flops", "per_node", "log", "log_settings", NULL};
    if (mapopt__jr_object(&L->jr, timing, "\"timing\"", tkeys)) {
      static const char *const modes[] = {"window", "fenced", NULL};
      static const char *const metrics[] = {"time", "gflops", NULL};
      static const char *const logs[] = {"regent-time", "circuit", "distal",
                                         NULL};
      app->timing = word(L, timing, "mode", "\"timing\"", false, modes) == 1
                        ? MAPOPT_TIMING_FENCED
                        : MAPOPT_TIMING_WINDOW;
      app->metric_gflops =
          word(L, timing, "metric", "\"timing\"", false, metrics) == 1;
      mapopt__jr_bool(&L->jr, timing, "per_node", "\"timing\"", false,
                      &app->per_node);
      int lg = word(L, timing, "log", "\"timing\"", false, logs);
      app->log_style = lg >= 0 ? logs[lg] : NULL;
      const mapopt__json *ls = mapopt__json_get(timing, "log_settings");
      if (ls)
        mapopt__ld_log_settings(L, ls);
      get_expr(L, timing, "flops", "\"timing\"", app->metric_gflops,
               &app->timing_flops);
    }
  }
  const mapopt__json *run =
      mapopt__jr_child(&L->jr, root, "run", "the application", false);
  if (run) {
    static const char *const rkeys[] = {"ranks_per_node", NULL};
    if (mapopt__jr_object(&L->jr, run, "\"run\"", rkeys))
      get_expr(L, run, "ranks_per_node", "\"run\"", false,
               &app->ranks_per_node);
  }
  /* Regions, partitions, tasks, program. */
  const mapopt__json *regions =
      mapopt__jr_array(&L->jr, root, "regions", "the application", true);
  if (regions) {
    app->regions = mapopt__ld_zalloc(L, regions->u.arr.n, sizeof *app->regions);
    if (!app->regions)
      return;
    app->nregions = (int)regions->u.arr.n;
    for (size_t i = 0; i < regions->u.arr.n; i++)
      load_region(L, regions->u.arr.items[i], (int)i);
  }
  const mapopt__json *parts =
      mapopt__jr_array(&L->jr, root, "partitions", "the application", false);
  if (parts) {
    app->parts = mapopt__ld_zalloc(L, parts->u.arr.n, sizeof *app->parts);
    if (!app->parts)
      return;
    app->npartitions = (int)parts->u.arr.n;
    for (size_t i = 0; i < parts->u.arr.n; i++)
      load_part(L, parts->u.arr.items[i], (int)i);
  }
  const mapopt__json *tasks =
      mapopt__jr_array(&L->jr, root, "tasks", "the application", true);
  if (tasks) {
    app->tasks = mapopt__ld_zalloc(L, tasks->u.arr.n, sizeof *app->tasks);
    if (!app->tasks)
      return;
    app->ntasks = (int)tasks->u.arr.n;
    for (size_t i = 0; i < tasks->u.arr.n; i++)
      declare_task(L, tasks->u.arr.items[i], (int)i);
    for (size_t i = 0; i < tasks->u.arr.n; i++)
      load_task(L, tasks->u.arr.items[i], (int)i);
  }
  const mapopt__json *program = mapopt__json_get(root, "program");
  if (!program)
    mapopt__jr_error(&L->jr, root,
                     "missing key \"program\" in the "
                     "application");
  else
    load_stmts(L, program, "\"program\"", TOP, &app->nprogram, &app->program);
  if (program && L->jr.status == MAPOPT_OK && !app->tsloop)
    mapopt__jr_error(&L->jr, program,
                     "the program has no time-step loop (a "
                     "loop with \"timed\": true)");
  if (app->tsloop && app->timing == MAPOPT_TIMING_FENCED && !L->saw_timed)
    mapopt__jr_error_at(&L->jr, L->tsline, L->tscol,
                        "in fenced mode the time-step loop needs a \"timed\" "
                        "block");
  /* Futures waited on must be produced somewhere. */
  for (size_t i = 0; i < L->waits.len; i++) {
    wait_ref *w = &MAPOPT__VEC_AT(&L->waits, wait_ref, i);
    if (!MAPOPT__VEC_AT(&L->produced, bool, w->future))
      mapopt__jr_error_at(&L->jr, w->line, w->col,
                          "unknown future \"%s\" (no launch produces it)",
                          MAPOPT__VEC_AT(&L->futvec, const char *, w->future));
  }
  app->nfutures = (int)L->futvec.len;
  app->futures = mapopt__ld_zalloc(L, L->futvec.len, sizeof *app->futures);
  if (app->futures)
    for (size_t i = 0; i < L->futvec.len; i++)
      app->futures[i] = MAPOPT__VEC_AT(&L->futvec, const char *, i);
}

mapopt_status mapopt_app_load_json(mapopt_ctx *ctx, const char *file,
                                   const char *text, size_t len,
                                   mapopt_diags *diags, mapopt_app **out) {
  if (!ctx || !text || !diags || !out)
    return MAPOPT_EINVAL;
  if (!file)
    file = "<app>";
  mapopt_app *app = mapopt__calloc(ctx, 1, sizeof *app);
  if (!app)
    return MAPOPT_ENOMEM;
  app->ctx = ctx;
  mapopt__arena_init(&app->arena, ctx);
  mapopt__map_init(&app->symtab);
  mapopt__vec_init(&app->symnames, sizeof(const char *));
  loader L = {0};
  L.app = app;
  L.a = &app->arena;
  mapopt__map_init(&L.regions);
  mapopt__map_init(&L.parts);
  mapopt__map_init(&L.tasks);
  mapopt__map_init(&L.futures);
  mapopt__vec_init(&L.futvec, sizeof(const char *));
  mapopt__vec_init(&L.produced, sizeof(bool));
  mapopt__vec_init(&L.waits, sizeof(wait_ref));
  app->file = mapopt__arena_strndup(&app->arena, file, strlen(file));
  mapopt__jr_init(&L.jr, app->file ? app->file : file, diags);
  mapopt__arena scratch;
  mapopt__arena_init(&scratch, ctx);
  mapopt__json *root = NULL;
  mapopt_status st = app->file ? mapopt__json_parse(&scratch, app->file, text,
                                                    len, diags, &root)
                               : MAPOPT_ENOMEM;
  if (st == MAPOPT_OK) {
    load_top(&L, root);
    if (L.jr.status == MAPOPT_OK)
      mapopt__ld_slots(&L);
    if (L.jr.status == MAPOPT_OK)
      mapopt__app_check_scopes(app, &L.jr);
    if (L.jr.status == MAPOPT_OK)
      mapopt__ld_derived_order(&L);
    if (L.jr.status == MAPOPT_OK)
      L.jr.status = mapopt__app_build_task_info(app);
    st = L.nomem ? MAPOPT_ENOMEM : L.jr.status;
  }
  mapopt__arena_destroy(&scratch);
  mapopt__map_destroy(&L.regions, ctx);
  mapopt__map_destroy(&L.parts, ctx);
  mapopt__map_destroy(&L.tasks, ctx);
  mapopt__map_destroy(&L.futures, ctx);
  mapopt__vec_destroy(&L.futvec, ctx);
  mapopt__vec_destroy(&L.produced, ctx);
  mapopt__vec_destroy(&L.waits, ctx);
  if (st != MAPOPT_OK) {
    mapopt_app_free(app);
    return st;
  }
  *out = app;
  return MAPOPT_OK;
}

void mapopt_app_free(mapopt_app *app) {
  if (!app)
    return;
  mapopt_ctx *ctx = app->ctx;
  mapopt__map_destroy(&app->symtab, ctx);
  mapopt__vec_destroy(&app->symnames, ctx);
  mapopt__arena_destroy(&app->arena);
  mapopt__free(ctx, app, sizeof *app);
}

mapopt_status mapopt_app_task_info(const mapopt_app *app,
                                   const mapopt_task_info **out, size_t *n) {
  if (!app || !out || !n)
    return MAPOPT_EINVAL;
  *out = app->info;
  *n = (size_t)app->ntasks;
  return MAPOPT_OK;
}
