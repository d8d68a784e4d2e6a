/*
 * Compiling a mapper: parse (parse.c), then the static checks (the E errors
 * and W warnings of docs/dsl.md, "Diagnostics catalogue") with name
 * resolution, then loading -- executing the top-level statements in file
 * order to fill the binding tables and the globals.
 *
 * The checker also resolves every name inside a function to a frame slot:
 * parameters first, then each assigned local, then one slot per comprehension
 * variable. A slot that is still unset at run time falls back to the global of
 * the same name, which gives the rule (docs/dsl.md, "Names, scopes and
 * functions") that a local shadows a global only from its assignment onwards.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dsl/dsl.h"

/* ---- checker state ----------------------------------------------------- */

typedef struct checker {
  mapopt_program *prog;
  mapopt_diags *diags;
  const mapopt_dsl_options *opts;
  mapopt_status status;           /* first error or ENOMEM */
  bool *global_anywhere;          /* per symbol: bound by some top-level stmt */
  const mapopt__stmt **first_def; /* per symbol: the first def */
  /* The function being checked (NULL at top level). */
  const mapopt__stmt *fn;
  int *slot_of;    /* per symbol: local slot in fn, or -1 */
  bool *bound_now; /* per symbol: local bound at this point */
  int nslots;
  int comp_sym[MAPOPT__DSL_MAX_NESTING + 8];
  int comp_slot[MAPOPT__DSL_MAX_NESTING + 8];
  int ncomp;
} checker;

static const char *file_of(const mapopt_program *p) {
  return p->ast.file;
}

/* Appends diagnostic id of the catalogue (give it as MAPOPT__DIAG(NAME))
 * at loc. The first error stops the checks (MAPOPT_ELOAD); a diagnostic
 * that cannot be stored makes the check fail with MAPOPT_ENOMEM. */
static void check_diag(checker *c, mapopt_dsl_diag id, const char *fmt,
                       mapopt__loc loc, ...)
    __attribute__((format(printf, 3, 5)));

static void check_diag(checker *c, mapopt_dsl_diag id, const char *fmt,
                       mapopt__loc loc, ...) {
  bool error = mapopt_dsl_diag_severity(id) == MAPOPT_SEV_ERROR;
  if (error && c->status != MAPOPT_OK)
    return;
  va_list ap;
  va_start(ap, loc);
  mapopt_status st =
      mapopt__dsl_diagv(c->diags, id, fmt, file_of(c->prog), loc, ap);
  va_end(ap);
  if (st != MAPOPT_OK)
    c->status = MAPOPT_ENOMEM;
  else if (error)
    c->status = MAPOPT_ELOAD;
}

static const char *sym(const checker *c, int s) {
  return mapopt__sym_name(&c->prog->ast, s);
}

/* The hint after the warning just reported about name at loc: the name
 * meant among names[0..n), or the list of them as "the WHAT are: ...". */
static void hint(checker *c, mapopt__loc loc, const char *name,
                 const char *const *names, size_t n, const char *what) {
  if (c->status == MAPOPT_ENOMEM)
    return;
  if (mapopt__dsl_suggest(c->prog->ctx, c->diags, file_of(c->prog), loc, name,
                          strlen(name), names, n, what) != MAPOPT_OK)
    c->status = MAPOPT_ENOMEM;
}

/* An array of n names in the program's arena (NULL entries are skipped by
 * the hints); NULL, with the check failed, when out of memory. */
static const char **names_new(checker *c, size_t n) {
  const char **v =
      mapopt__arena_zalloc(&c->prog->ast.arena, (n ? n : 1) * sizeof *v);
  if (!v)
    c->status = MAPOPT_ENOMEM;
  return v;
}

/* W06's hint: the names that can be read at this point of the function. */
static void hint_name(checker *c, const mapopt__name_ref *ref,
                      mapopt__loc loc) {
  size_t nsyms = c->prog->ast.syms.names.len;
  const char **v = names_new(c, nsyms);
  if (!v)
    return;
  for (size_t i = 0; i < nsyms; i++)
    if (c->global_anywhere[i] || (c->slot_of[i] >= 0 && c->bound_now[i]))
      v[i] = sym(c, (int)i);
  for (int i = 0; i < c->ncomp; i++)
    v[c->comp_sym[i]] = sym(c, c->comp_sym[i]);
  hint(c, loc, sym(c, ref->sym), v, nsyms, NULL);
}

/* ---- expressions: resolution and warnings ----------------------------- */

static void check_expr(checker *c, mapopt__expr *e);

static void check_list(checker *c, mapopt__expr_list *l) {
  for (int i = 0; i < l->n; i++)
    check_expr(c, l->items[i]);
}

/* Resolves a name reference in the current scope; warns (W06) inside a
 * function when nothing can bind it at this point. */
static void resolve(checker *c, mapopt__name_ref *ref, mapopt__loc loc) {
  for (int i = c->ncomp - 1; i >= 0; i--)
    if (c->comp_sym[i] == ref->sym) {
      ref->slot = c->comp_slot[i];
      return;
    }
  ref->slot = c->fn ? c->slot_of[ref->sym] : -1;
  if (!c->fn)
    return;
  bool local_now = ref->slot >= 0 && c->bound_now[ref->sym];
  if (!local_now && !c->global_anywhere[ref->sym]) {
    check_diag(c, MAPOPT__DIAG(W06_NOT_FOUND), loc, sym(c, ref->sym),
               sym(c, c->fn->u.def.sym));
    hint_name(c, ref, loc);
  }
}

static bool has_unpack(const mapopt__expr_list *l) {
  for (int i = 0; i < l->n; i++)
    if (l->items[i]->kind == EX_UNPACK)
      return true;
  return false;
}

static bool is_property(mapopt__member m) {
  return m <= MEM_PARENT;
}

static void check_expr(checker *c, mapopt__expr *e) {
  switch (e->kind) {
  case EX_NAME:
    resolve(c, &e->u.name, e->loc);
    break;
  case EX_CALL: {
    resolve(c, &e->u.call.fn, e->loc);
    const mapopt__stmt *def = c->first_def[e->u.call.fn.sym];
    bool shadowed = e->u.call.fn.slot >= 0;
    if (def && !shadowed && !has_unpack(&e->u.call.args) &&
        def->u.def.nparams != e->u.call.args.n)
      check_diag(c, MAPOPT__DIAG(W07_ARGUMENTS), e->loc,
                 sym(c, e->u.call.fn.sym), def->u.def.nparams,
                 e->u.call.args.n);
    check_list(c, &e->u.call.args);
    break;
  }
  case EX_MACHINE:
    check_expr(c, e->u.machine);
    break;
  case EX_TUPLE:
    check_list(c, &e->u.list);
    break;
  case EX_COMP: {
    check_expr(c, e->u.comp.range);
    if (c->ncomp >= (int)(sizeof c->comp_sym / sizeof c->comp_sym[0])) {
      check_diag(c, MAPOPT__DIAG(E04_DEPTH), e->loc);
      break;
    }
    int slot = c->nslots++;
    e->u.comp.var.slot = slot;
    c->comp_sym[c->ncomp] = e->u.comp.var.sym;
    c->comp_slot[c->ncomp] = slot;
    c->ncomp++;
    check_expr(c, e->u.comp.elem);
    c->ncomp--;
    break;
  }
  case EX_UNARY:
    check_expr(c, e->u.unary.operand);
    break;
  case EX_BINARY:
    check_expr(c, e->u.binary.lhs);
    check_expr(c, e->u.binary.rhs);
    break;
  case EX_COND:
    check_expr(c, e->u.cond.cond);
    check_expr(c, e->u.cond.then);
    check_expr(c, e->u.cond.els);
    break;
  case EX_INDEX:
    check_expr(c, e->u.index.base);
    check_list(c, &e->u.index.subs);
    break;
  case EX_SLICE:
    check_expr(c, e->u.slice.base);
    if (e->u.slice.lo)
      check_expr(c, e->u.slice.lo);
    if (e->u.slice.hi)
      check_expr(c, e->u.slice.hi);
    break;
  case EX_MEMBER: {
    check_expr(c, e->u.member.base);
    mapopt__member m = e->u.member.member;
    if (is_property(m) && e->u.member.call)
      check_diag(c, MAPOPT__DIAG(W10_PROPERTY), e->loc, mapopt__member_text(m));
    else if (!is_property(m) && !e->u.member.call)
      check_diag(c, MAPOPT__DIAG(W10_METHOD), e->loc, mapopt__member_text(m));
    if (e->u.member.call)
      check_list(c, &e->u.member.args);
    break;
  }
  case EX_UNPACK:
    check_expr(c, e->u.unpack);
    break;
  default:
    break;
  }
}

static void check_print(checker *c, mapopt__stmt *s) {
  int ph = mapopt__print_placeholders(s->u.print.fmt, s->u.print.fmtlen);
  if (s->u.print.args.n > ph && !has_unpack(&s->u.print.args))
    check_diag(c, MAPOPT__DIAG(W13_PLACEHOLDERS), s->loc, ph,
               s->u.print.args.n);
  check_list(c, &s->u.print.args);
}

/* ---- application names (W11, W12) -------------------------------------- */

static const mapopt_task_info *app_task(const checker *c, const char *name) {
  for (size_t i = 0; i < c->opts->ntasks; i++)
    if (strcmp(c->opts->tasks[i].name, name) == 0)
      return &c->opts->tasks[i];
  return NULL;
}

/* W11 for an unknown task; returns the task when known. */
static const mapopt_task_info *check_task_name(checker *c,
                                               const mapopt__sel *t) {
  if (!c->opts->tasks || t->kind != SEL_NAME)
    return NULL;
  const mapopt_task_info *info = app_task(c, t->name);
  if (info)
    return info;
  check_diag(c, MAPOPT__DIAG(W11_TASK), t->loc, t->name);
  const char **v = names_new(c, c->opts->ntasks);
  if (!v)
    return NULL;
  for (size_t i = 0; i < c->opts->ntasks; i++)
    v[i] = c->opts->tasks[i].name;
  hint(c, t->loc, t->name, v, c->opts->ntasks, "tasks of the application");
  return NULL;
}

static void check_region_name(checker *c, const mapopt__sel *t,
                              const mapopt__sel *r) {
  const mapopt_task_info *info = check_task_name(c, t);
  if (!info || r->kind == SEL_STAR)
    return;
  for (size_t a = 0; a < info->nargs; a++) {
    if (r->kind == SEL_INT && r->pos == (int64_t)a)
      return;
    for (const char *const *n = info->arg_names[a]; r->kind == SEL_NAME && *n;
         n++)
      if (strcmp(*n, r->name) == 0)
        return;
  }
  if (r->kind == SEL_INT) {
    check_diag(c, MAPOPT__DIAG(W12_POSITION), r->loc, info->name, r->pos);
    return;
  }
  check_diag(c, MAPOPT__DIAG(W12_NAME), r->loc, info->name, r->name);
  size_t n = 0;
  for (size_t a = 0; a < info->nargs; a++)
    for (const char *const *m = info->arg_names[a]; *m; m++)
      n++;
  const char **v = names_new(c, n);
  if (!v)
    return;
  n = 0;
  for (size_t a = 0; a < info->nargs; a++)
    for (const char *const *m = info->arg_names[a]; *m; m++) {
      bool seen = false; /* an argument name may repeat a region's */
      for (size_t k = 0; k < n && !seen; k++)
        seen = v[k] && strcmp(v[k], *m) == 0;
      v[n++] = seen ? NULL : *m;
    }
  mapopt__strbuf what;
  mapopt__sb_init(&what, c->prog->ctx);
  mapopt__sb_printf(&what, "region arguments of task '%s'", info->name);
  if (what.failed)
    c->status = MAPOPT_ENOMEM;
  else
    hint(c, r->loc, r->name, v, n, what.data);
  mapopt__sb_destroy(&what);
}

/* ---- statements -------------------------------------------------------- */

static void check_def(checker *c, mapopt__stmt *s) {
  int np = s->u.def.nparams;
  for (int i = 0; i < np; i++)
    for (int j = 0; j < i; j++)
      if (s->u.def.params[i].sym == s->u.def.params[j].sym) {
        check_diag(c, MAPOPT__DIAG(E05_PARAMETER), s->u.def.params[i].loc,
                   sym(c, s->u.def.params[i].sym), sym(c, s->u.def.sym));
        return;
      }
  /* Slots: parameters, then every assigned name. */
  c->fn = s;
  c->nslots = 0;
  for (int i = 0; i < np; i++) {
    c->slot_of[s->u.def.params[i].sym] = c->nslots++;
    c->bound_now[s->u.def.params[i].sym] = true;
  }
  mapopt__stmt_list *body = &s->u.def.body;
  for (int i = 0; i < body->n; i++) {
    mapopt__stmt *b = body->items[i];
    if (b->kind == ST_ASSIGN && c->slot_of[b->u.assign.target.sym] < 0)
      c->slot_of[b->u.assign.target.sym] = c->nslots++;
  }
  bool returned = false, warned_dead = false;
  for (int i = 0; i < body->n && c->status == MAPOPT_OK; i++) {
    mapopt__stmt *b = body->items[i];
    if (returned && !warned_dead) {
      check_diag(c, MAPOPT__DIAG(W09_DEAD_CODE), b->loc);
      warned_dead = true;
    }
    switch (b->kind) {
    case ST_ASSIGN:
      check_expr(c, b->u.assign.value);
      b->u.assign.target.slot = c->slot_of[b->u.assign.target.sym];
      c->bound_now[b->u.assign.target.sym] = true;
      break;
    case ST_RETURN:
      check_expr(c, b->u.ret.value);
      returned = true;
      break;
    case ST_PRINT:
      check_print(c, b);
      break;
    default:
      break;
    }
  }
  bool any_return = false;
  for (int i = 0; i < body->n; i++)
    any_return |= body->items[i]->kind == ST_RETURN;
  if (!any_return)
    check_diag(c, MAPOPT__DIAG(W08_NO_RETURN), s->u.def.name_loc,
               sym(c, s->u.def.sym));
  s->u.def.nslots = c->nslots;
  /* Reset the per-symbol scratch for the next function. */
  for (int i = 0; i < np; i++) {
    c->slot_of[s->u.def.params[i].sym] = -1;
    c->bound_now[s->u.def.params[i].sym] = false;
  }
  for (int i = 0; i < body->n; i++)
    if (body->items[i]->kind == ST_ASSIGN) {
      c->slot_of[body->items[i]->u.assign.target.sym] = -1;
      c->bound_now[body->items[i]->u.assign.target.sym] = false;
    }
  c->fn = NULL;
}

static void check_layout(checker *c, mapopt__stmt *s) {
  check_region_name(c, &s->u.layout.task, &s->u.layout.region);
  bool compact = false;
  const mapopt__constraint *exact = NULL;
  for (int i = 0; i < s->u.layout.ncons; i++) {
    const mapopt__constraint *k = &s->u.layout.cons[i];
    if (k->kind == CONS_ALIGN && k->align_op == OP_EQ &&
        (k->align <= 0 || (k->align & (k->align - 1)) != 0)) {
      check_diag(c, MAPOPT__DIAG(E10_ALIGN), k->loc, k->align);
      return;
    }
    compact |= k->kind == CONS_COMPACT;
    if (k->kind == CONS_EXACT && !exact)
      exact = k;
  }
  if (exact && !compact)
    check_diag(c, MAPOPT__DIAG(W05_EXACT), exact->loc);
}

static void check_stmt(checker *c, mapopt__stmt *s) {
  switch (s->kind) {
  case ST_TASK:
    for (int i = 0; i < s->u.task.tasks.n; i++)
      check_task_name(c, &s->u.task.tasks.items[i]);
    break;
  case ST_REGION:
    check_region_name(c, &s->u.region.task, &s->u.region.region);
    break;
  case ST_LAYOUT:
    check_layout(c, s);
    break;
  case ST_LIMIT:
    check_task_name(c, &s->u.limit.task);
    if (s->u.limit.legacy.kind != FIELD_NONE)
      check_diag(c, MAPOPT__DIAG(W03_LEGACY), s->u.limit.legacy.loc);
    if (s->u.limit.limit == 0)
      check_diag(c, MAPOPT__DIAG(W04_LIMIT_ZERO), s->u.limit.limit_loc);
    break;
  case ST_COLLECT:
    check_region_name(c, &s->u.collect.task, &s->u.collect.region);
    break;
  case ST_INDEX_MAP:
  case ST_SINGLE_MAP:
    for (int i = 0; i < s->u.map.targets.n; i++)
      check_task_name(c, &s->u.map.targets.items[i]);
    break;
  case ST_REPLICATE:
    for (int i = 0; i < s->u.replicate.names.n; i++)
      check_task_name(c, &s->u.replicate.names.items[i]);
    break;
  case ST_DEF:
    check_def(c, s);
    break;
  case ST_ASSIGN:
    check_expr(c, s->u.assign.value);
    break;
  case ST_PRINT:
    check_print(c, s);
    break;
  case ST_RETURN:
    break;
  }
}

/* Top-level statements need frame slots only for comprehension variables. */
static mapopt_status check_program(mapopt_program *p, mapopt_diags *diags,
                                   const mapopt_dsl_options *opts) {
  int nsyms = (int)p->ast.syms.names.len;
  size_t n = (size_t)(nsyms ? nsyms : 1);
  checker c = {.prog = p, .diags = diags, .opts = opts};
  mapopt__arena *a = &p->ast.arena;
  c.global_anywhere = mapopt__arena_zalloc(a, n * sizeof(bool));
  c.bound_now = mapopt__arena_zalloc(a, n * sizeof(bool));
  c.first_def = mapopt__arena_zalloc(a, n * sizeof(*c.first_def));
  c.slot_of = mapopt__arena_alloc(a, n * sizeof(int));
  if (!c.global_anywhere || !c.bound_now || !c.first_def || !c.slot_of)
    return MAPOPT_ENOMEM;
  for (size_t i = 0; i < n; i++)
    c.slot_of[i] = -1;
  for (int i = 0; i < p->ast.stmts.n; i++) {
    const mapopt__stmt *s = p->ast.stmts.items[i];
    if (s->kind == ST_ASSIGN)
      c.global_anywhere[s->u.assign.target.sym] = true;
    if (s->kind == ST_DEF) {
      c.global_anywhere[s->u.def.sym] = true;
      if (!c.first_def[s->u.def.sym])
        c.first_def[s->u.def.sym] = s;
    }
  }
  int top = 0;
  for (int i = 0; i < p->ast.stmts.n && c.status == MAPOPT_OK; i++) {
    mapopt__stmt *s = p->ast.stmts.items[i];
    c.nslots = 0;
    check_stmt(&c, s);
    if (s->kind != ST_DEF && c.nslots > top)
      top = c.nslots;
  }
  p->top_frame = top;
  return c.status;
}

/* ---- loading ------------------------------------------------------------- */

typedef struct loader {
  mapopt_program *prog;
  mapopt_diags *diags;
  mapopt_status status;
  int64_t values; /* built by the top-level statements (R27) */
} loader;

static const char *lfile(const loader *l) {
  return l->prog->ast.file;
}

/* Records diagnostic id of the catalogue (give it as MAPOPT__DIAG(NAME)).
 * An error marks the load as failed; a diagnostic that cannot be recorded
 * marks it as out of memory. */
static void load_diag(loader *l, mapopt_dsl_diag id, const char *fmt,
                      mapopt__loc loc, ...)
    __attribute__((format(printf, 3, 5)));

static void load_diag(loader *l, mapopt_dsl_diag id, const char *fmt,
                      mapopt__loc loc, ...) {
  va_list ap;
  va_start(ap, loc);
  mapopt_status st = mapopt__dsl_diagv(l->diags, id, fmt, lfile(l), loc, ap);
  va_end(ap);
  if (st != MAPOPT_OK)
    l->status = MAPOPT_ENOMEM;
  else if (mapopt_dsl_diag_severity(id) == MAPOPT_SEV_ERROR)
    l->status = MAPOPT_ELOAD;
}

/* Reports a runtime error raised at load time as an error (its R-code
 * kept), with its call note, and frees its message. */
static void load_eval_error(loader *l, mapopt__eval_error *err) {
  if (err->nomem) {
    l->status = MAPOPT_ENOMEM;
    return;
  }
  if (mapopt_diags_add(l->diags, MAPOPT_SEV_ERROR, err->code, lfile(l),
                       err->loc.line, err->loc.col, "%s",
                       err->msg) != MAPOPT_OK ||
      (err->note && mapopt_diags_add(l->diags, MAPOPT_SEV_NOTE, err->note_code,
                                     lfile(l), err->loc.line, err->loc.col,
                                     "%s", err->note) != MAPOPT_OK))
    l->status = MAPOPT_ENOMEM;
  else
    l->status = MAPOPT_ELOAD;
  if (l->status == MAPOPT_ELOAD && err->in_call)
    load_diag(l, MAPOPT__DIAG(N01_CALLED), err->call_loc);
  mapopt__eval_error_clear(l->prog->ctx, err);
}

/* The text of a selector as a table key component. */
static const char *sel_text(const mapopt__sel *s, char *buf, size_t size) {
  switch (s->kind) {
  case SEL_STAR:
    return "*";
  case SEL_NAME:
    return s->name;
  case SEL_INT:
    snprintf(buf, size, "%" PRId64, s->pos);
    return buf;
  case SEL_KIND:
    return mapopt_shape_proc_name((mapopt_proc_kind)s->proc_kind);
  }
  return "?";
}

static const char *field_text(const mapopt__field *f) {
  switch (f->kind) {
  case FIELD_PROC:
    return mapopt_shape_proc_name((mapopt_proc_kind)f->value);
  case FIELD_MEM:
    return mapopt_shape_mem_name((mapopt_mem_kind)f->value);
  default:
    return "*";
  }
}

/*
 * Binds key to value in table unless already bound (first binding wins,
 * W01 otherwise). display is the key as the warning shows it.
 */
static void bind(loader *l, mapopt__map *table, const char *stmt_name,
                 const char *key, const char *display, mapopt__loc loc,
                 const void *value) {
  const mapopt__map_entry *seen = mapopt__map_find(table, key, strlen(key));
  if (seen) {
    const mapopt__binding *first = seen->value;
    load_diag(l, MAPOPT__DIAG(W01_BINDING), loc, stmt_name, display,
              first->loc.line, first->loc.col);
    return;
  }
  /* The key and the binding are stored only for a first binding: a list
   * of a million repeated names costs no more than its syntax tree. */
  mapopt__arena *a = &l->prog->ast.arena;
  char *k = mapopt__arena_strndup(a, key, strlen(key));
  mapopt__binding *b = mapopt__arena_alloc(a, sizeof *b);
  bool inserted = false;
  mapopt__map_entry *e =
      k && b ? mapopt__map_upsert(table, l->prog->ctx, k, strlen(k), &inserted)
             : NULL;
  if (!e) {
    l->status = MAPOPT_ENOMEM;
    return;
  }
  b->loc = loc;
  b->value = value;
  e->value = b;
}

/* Adds key to a set (CollectMemory, ControlReplicate): no warning. */
static void set_add(loader *l, mapopt__map *set, const char *key,
                    const void *value) {
  if (mapopt__map_find(set, key, strlen(key)))
    return; /* the first one stays */
  mapopt__arena *a = &l->prog->ast.arena;
  char *k = mapopt__arena_strndup(a, key, strlen(key));
  bool inserted = false;
  mapopt__map_entry *e =
      k ? mapopt__map_upsert(set, l->prog->ctx, k, strlen(k), &inserted) : NULL;
  if (!e)
    l->status = MAPOPT_ENOMEM;
  else if (inserted)
    e->value = (void *)value;
}

/* E06's hint: the functions defined above the statement. */
static void hint_function(loader *l, mapopt__loc loc, const char *name) {
  mapopt_program *p = l->prog;
  const char **v = mapopt__arena_zalloc(
      &p->ast.arena, (size_t)(p->nglobals ? p->nglobals : 1) * sizeof *v);
  if (!v) {
    l->status = MAPOPT_ENOMEM;
    return;
  }
  for (int i = 0; i < p->nglobals; i++)
    if (p->globals[i].kind == V_FUNC)
      v[i] = mapopt__sym_name(&p->ast, i);
  if (mapopt__dsl_suggest(p->ctx, l->diags, lfile(l), loc, name, strlen(name),
                          v, (size_t)p->nglobals,
                          "functions defined above") != MAPOPT_OK)
    l->status = MAPOPT_ENOMEM;
}

static void load_map_stmt(loader *l, const mapopt__stmt *s) {
  mapopt_program *p = l->prog;
  const char *stmt = s->kind == ST_INDEX_MAP ? "IndexTaskMap" : "SingleTaskMap";
  int fn = s->u.map.fn;
  const char *fname = mapopt__sym_name(&p->ast, fn);
  const mapopt__value *g = &p->globals[fn];
  if (g->kind == V_UNSET) {
    load_diag(l, MAPOPT__DIAG(E06_UNDEFINED), s->u.map.fn_loc, stmt, fname);
    hint_function(l, s->u.map.fn_loc, fname);
    return;
  }
  if (g->kind != V_FUNC) {
    load_diag(l, MAPOPT__DIAG(E07_NOT_FUNCTION), s->u.map.fn_loc, stmt, fname,
              mapopt__value_type_name(g));
    return;
  }
  const mapopt__stmt *def = g->u.fn;
  if (def->u.def.nparams != 1 || def->u.def.params[0].type != TYPE_TASK) {
    mapopt__strbuf sb;
    mapopt__sb_init(&sb, p->ctx);
    for (int i = 0; i < def->u.def.nparams; i++)
      mapopt__sb_printf(&sb, "%s%s %s", i ? ", " : "",
                        mapopt__param_type_text(def->u.def.params[i].type),
                        mapopt__sym_name(&p->ast, def->u.def.params[i].sym));
    load_diag(l, MAPOPT__DIAG(E08_SIGNATURE), s->u.map.fn_loc, fname, fname,
              sb.data ? sb.data : "");
    mapopt__sb_destroy(&sb);
    return;
  }
  mapopt__map *table =
      s->kind == ST_INDEX_MAP ? &p->index_maps : &p->single_maps;
  for (int i = 0; i < s->u.map.targets.n && l->status == MAPOPT_OK; i++) {
    const mapopt__sel *t = &s->u.map.targets.items[i];
    char nb[32];
    const char *key = sel_text(t, nb, sizeof nb);
    bind(l, table, stmt, key, key, t->loc, def);
  }
}

/* Region and Layout bind (task, region, field) keys, displayed as a
 * triple in W01. */
static void bind_triple(loader *l, mapopt__map *table, const char *stmt_name,
                        const mapopt__stmt *s, const mapopt__sel *task,
                        const mapopt__sel *region, const mapopt__field *field) {
  /* disp has the key's parts and 6 more bytes where the key has 2
   * separators: it always fits once the key does. */
  char key[1024], disp[sizeof key + 4], b1[32], b2[32];
  const char *t = sel_text(task, b1, sizeof b1);
  const char *r = sel_text(region, b2, sizeof b2);
  const char *f = field_text(field);
  if (!mapopt__dsl_key(key, sizeof key, t, r, f)) {
    load_diag(l, MAPOPT__DIAG(E04_SELECTOR), s->loc);
    return;
  }
  snprintf(disp, sizeof disp, "(%s, %s, %s)", t, r, f);
  bind(l, table, stmt_name, key, disp, task->loc, s);
}

static void load_stmt(loader *l, const mapopt__stmt *s) {
  mapopt_program *p = l->prog;
  char key[1024], b1[32], b2[32];
  switch (s->kind) {
  case ST_TASK:
    for (int i = 0; i < s->u.task.tasks.n && l->status == MAPOPT_OK; i++) {
      const mapopt__sel *t = &s->u.task.tasks.items[i];
      const char *name = sel_text(t, b1, sizeof b1);
      bind(l, &p->task_kinds, "Task", name, name, t->loc, s);
    }
    break;
  case ST_REGION:
    bind_triple(l, &p->regions, "Region", s, &s->u.region.task,
                &s->u.region.region, &s->u.region.proc);
    break;
  case ST_LAYOUT:
    bind_triple(l, &p->layouts, "Layout", s, &s->u.layout.task,
                &s->u.layout.region, &s->u.layout.field);
    break;
  case ST_LIMIT: {
    const char *t = sel_text(&s->u.limit.task, b1, sizeof b1);
    bind(l, &p->limits, "InstanceLimit", t, t, s->u.limit.task.loc, s);
    break;
  }
  case ST_COLLECT: {
    const char *t = sel_text(&s->u.collect.task, b1, sizeof b1);
    const char *r = sel_text(&s->u.collect.region, b2, sizeof b2);
    if (!mapopt__dsl_key(key, sizeof key, t, r, NULL)) {
      load_diag(l, MAPOPT__DIAG(E04_SELECTOR), s->loc);
      break;
    }
    set_add(l, &p->collects, key, s);
    break;
  }
  case ST_INDEX_MAP:
  case ST_SINGLE_MAP:
    load_map_stmt(l, s);
    break;
  case ST_REPLICATE:
    p->has_replicate = true;
    for (int i = 0; i < s->u.replicate.names.n; i++)
      set_add(l, &p->replicate, s->u.replicate.names.items[i].name, s);
    break;
  case ST_DEF: {
    int fs = s->u.def.sym;
    if (p->globals[fs].kind != V_UNSET) {
      load_diag(l, MAPOPT__DIAG(W02_DEFINITION), s->u.def.name_loc,
                mapopt__sym_name(&p->ast, fs), p->global_loc[fs].line,
                p->global_loc[fs].col);
      break;
    }
    p->globals[fs].kind = V_FUNC;
    p->globals[fs].u.fn = s;
    p->global_loc[fs] = s->u.def.name_loc;
    break;
  }
  case ST_ASSIGN: {
    int gs = s->u.assign.target.sym;
    if (p->globals[gs].kind != V_UNSET) {
      load_diag(l, MAPOPT__DIAG(E09_GLOBAL), s->loc,
                mapopt__sym_name(&p->ast, gs), p->global_loc[gs].line,
                p->global_loc[gs].col);
      break;
    }
    mapopt__eval_env env = {p, &p->ast.arena, l->diags, true, &l->values};
    mapopt__eval_error err;
    mapopt__value v;
    if (!mapopt__eval_top_expr(&env, s->u.assign.value, &v, &err)) {
      load_eval_error(l, &err);
      break;
    }
    p->globals[gs] = v;
    p->global_loc[gs] = s->loc;
    break;
  }
  case ST_PRINT: {
    mapopt__eval_env env = {p, &p->ast.arena, l->diags, true, &l->values};
    mapopt__eval_error err;
    if (!mapopt__eval_top_print(&env, s, &err))
      load_eval_error(l, &err);
    break;
  }
  case ST_RETURN:
    break;
  }
}

static mapopt_status load_program(mapopt_program *p, mapopt_diags *diags) {
  int n = (int)p->ast.syms.names.len;
  p->nglobals = n;
  size_t cnt = (size_t)(n ? n : 1);
  p->globals = mapopt__arena_zalloc(&p->ast.arena, cnt * sizeof *p->globals);
  p->global_loc =
      mapopt__arena_zalloc(&p->ast.arena, cnt * sizeof *p->global_loc);
  p->w14_done = mapopt__arena_zalloc(&p->ast.arena, cnt);
  if (!p->globals || !p->global_loc || !p->w14_done)
    return MAPOPT_ENOMEM;
  loader l = {p, diags, MAPOPT_OK, 0};
  for (int i = 0; i < p->ast.stmts.n && l.status == MAPOPT_OK; i++)
    load_stmt(&l, p->ast.stmts.items[i]);
  return l.status;
}

/* The region-key mode (docs/dsl.md, "Rules shared by all statements") the
 * program runs with: its option's, AUTO resolved by the arguments its keyed
 * statements name. */
static mapopt_region_keys_mode region_keys(const mapopt_program *p,
                                           mapopt_region_keys_mode opt) {
  if (opt != MAPOPT_KEYS_AUTO)
    return opt;
  bool named = false, positional = false;
  for (int i = 0; i < p->ast.stmts.n; i++) {
    const mapopt__sel *r = mapopt__stmt_region(p->ast.stmts.items[i]);
    named |= r && r->kind == SEL_NAME;
    positional |= r && r->kind == SEL_INT;
  }
  return named        ? MAPOPT_KEYS_NAMES
         : positional ? MAPOPT_KEYS_POSITIONS
                      : MAPOPT_KEYS_AUTO;
}

/* ---- the program object ------------------------------------------------- */

static void program_free(mapopt_program *p) {
  mapopt_ctx *ctx = p->ctx;
  mapopt__map *maps[] = {&p->task_kinds,    &p->regions,   &p->layouts,
                         &p->limits,        &p->collects,  &p->index_maps,
                         &p->single_maps,   &p->replicate, &p->index_memo,
                         &p->decompose_memo};
  for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
    mapopt__map_destroy(maps[i], ctx);
  while (p->scratch_pool) {
    mapopt__scratch *s = p->scratch_pool;
    p->scratch_pool = s->next;
    mapopt__arena_destroy(&s->arena);
    mapopt__free(ctx, s, sizeof *s);
  }
  mapopt__arena_destroy(&p->cache_arena);
  mapopt__ast_destroy(&p->ast);
  pthread_mutex_destroy(&p->lock);
  mapopt__free(ctx, p, sizeof *p);
}

void mapopt_dsl_free(mapopt_program *prog) {
  if (prog)
    program_free(prog);
}

mapopt_status mapopt_dsl_compile(mapopt_ctx *ctx, const char *text, size_t len,
                                 const mapopt_dsl_options *opts,
                                 mapopt_diags *diags, mapopt_program **out) {
  static const mapopt_dsl_options no_opts;
  if (!ctx || (!text && len) || !diags || !out)
    return MAPOPT_EINVAL;
  if (!opts)
    opts = &no_opts;
  mapopt_program *p = mapopt__calloc(ctx, 1, sizeof *p);
  if (!p)
    return MAPOPT_ENOMEM;
  p->ctx = ctx;
  if (pthread_mutex_init(&p->lock, NULL) != 0) {
    mapopt__free(ctx, p, sizeof *p);
    return MAPOPT_ENOMEM;
  }
  mapopt__ast_init(&p->ast, ctx);
  mapopt__arena_init(&p->cache_arena, ctx);
  if (opts->shape)
    p->shape = *opts->shape;
  else
    mapopt_shape_default(&p->shape);
  p->print = opts->print;
  p->print_ud = opts->print_ud;
  p->no_memo = opts->no_memo || opts->trace;
  p->trace = opts->trace;
  p->trace_ud = opts->trace_ud;
  const char *file = opts->file ? opts->file : "<input>";
  p->ast.file = mapopt__arena_strndup(&p->ast.arena, file, strlen(file));
  mapopt_status st = p->ast.file ? MAPOPT_OK : MAPOPT_ENOMEM;
  if (st == MAPOPT_OK && len > MAPOPT_DSL_MAX_INPUT)
    st =
        mapopt__dsl_diag(diags, MAPOPT__DIAG(E04_TOO_LARGE), p->ast.file,
                         (mapopt__loc){1, 1}, MAPOPT_DSL_MAX_INPUT) == MAPOPT_OK
            ? MAPOPT_ESYNTAX
            : MAPOPT_ENOMEM;
  if (st == MAPOPT_OK)
    st = mapopt__dsl_parse(&p->ast, text ? text : "", len, diags);
  if (st == MAPOPT_OK)
    st = check_program(p, diags, opts);
  if (st == MAPOPT_OK && opts->portable)
    st = mapopt__dsl_portable(p, diags);
  if (st == MAPOPT_OK) {
    p->keys = region_keys(p, opts->region_keys);
    st = load_program(p, diags);
  }
  if (st != MAPOPT_OK) {
    program_free(p);
    return st;
  }
  *out = p;
  return MAPOPT_OK;
}

mapopt_status mapopt_dsl_format(const mapopt_program *prog, char **text,
                                size_t *len) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, prog->ctx);
  mapopt__dsl_print(&prog->ast, &sb);
  size_t n;
  char *t = mapopt__text_take(&sb, &n);
  if (!t)
    return MAPOPT_ENOMEM;
  *text = t;
  if (len)
    *len = n;
  return MAPOPT_OK;
}

bool mapopt_dsl_equal(const mapopt_program *a, const mapopt_program *b) {
  return mapopt__ast_equal(&a->ast, &b->ast);
}

mapopt_region_keys_mode mapopt_dsl_region_keys(const mapopt_program *prog) {
  return prog->keys;
}

const mapopt_machine_shape *mapopt_dsl_shape(const mapopt_program *prog) {
  return &prog->shape;
}
