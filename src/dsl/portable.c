/*
 * The portability checks (docs/legion.md): warnings P01-P28 for what the
 * DSL mapper of Legion -- the interpreter that reads mapopt's mappers on a
 * cluster -- rejects, aborts on or reads differently. They run on the
 * checked tree when mapopt_dsl_options.portable is set, and only warn: in
 * mapopt the mapper still means what docs/dsl.md says.
 *
 * Several checks depend on what kind of value an expression has in the
 * DSL mapper, which keeps apart a tuple it computed (t.ipoint, m.size,
 * arithmetic, a tuple of number literals) from one written out of other
 * expressions or built by a comprehension: only the first fits an IPoint
 * or ISpace parameter there. ty() infers that from the tree, without
 * running anything: the types of globals from their assignments, of
 * functions from their first return, of locals from their first
 * assignment (the DSL mapper keeps a local's first value). A first pass
 * fills those tables, a second one reports, in file order.
 */
#include <inttypes.h>
#include <string.h>

#include "dsl/dsl.h"

/* What a value is in the DSL mapper. */
typedef enum ptype {
  PT_UNKNOWN,
  PT_INT,
  PT_BOOL,
  PT_TUPLE,      /* a tuple it computed (its TupleInt) */
  PT_TUPLE_EXPR, /* a tuple of expressions or a comprehension's result */
  PT_MACHINE,
  PT_POINT,
  PT_SET,
  PT_TASK,
  PT_PROC_KIND,
  PT_MEM_KIND,
  PT_FUNC
} ptype;

static const char *ptype_name(ptype t) {
  switch (t) {
  case PT_MACHINE:
    return "machine model";
  case PT_SET:
    return "point set";
  case PT_TASK:
    return "task";
  case PT_PROC_KIND:
    return "processor kind";
  case PT_MEM_KIND:
    return "memory kind";
  default:
    return "value";
  }
}

typedef struct pcheck {
  const mapopt_program *prog;
  mapopt_diags *diags;
  mapopt_status status;
  bool report;                 /* the second pass */
  uint8_t *global_ty;          /* per symbol */
  uint8_t *ret_ty;             /* per symbol: a def's first return */
  const mapopt__stmt **def_of; /* per symbol: the first def */
  /* The function being walked (NULL at top level): per symbol, 1 + the
   * type of a parameter or of a local's first assignment, 0 while
   * unbound. */
  const mapopt__stmt *fn;
  uint8_t *local_ty;
  int comp_sym[MAPOPT__DSL_MAX_NESTING + 8]; /* comprehension variables */
  int ncomp;
  bool named; /* some statement keys a region argument by name */
} pcheck;

static void warn(pcheck *c, mapopt_dsl_diag id, const char *fmt,
                 mapopt__loc loc, ...) __attribute__((format(printf, 3, 5)));

static void warn(pcheck *c, mapopt_dsl_diag id, const char *fmt,
                 mapopt__loc loc, ...) {
  if (!c->report || c->status != MAPOPT_OK)
    return;
  va_list ap;
  va_start(ap, loc);
  if (mapopt__dsl_diagv(c->diags, id, fmt, c->prog->ast.file, loc, ap) !=
      MAPOPT_OK)
    c->status = MAPOPT_ENOMEM;
  va_end(ap);
}

static const char *sym(const pcheck *c, int s) {
  return mapopt__sym_name(&c->prog->ast, s);
}

static ptype ty(pcheck *c, const mapopt__expr *e);

static bool is_tuple(ptype t) {
  return t == PT_TUPLE || t == PT_TUPLE_EXPR;
}

/* A number literal, as the DSL mapper's parser folds into a tuple of
 * numbers: no sign, no operator. */
static bool is_number(const mapopt__expr *e) {
  return e->kind == EX_INT;
}

/* A tuple written out of number literals only: the DSL mapper's parser
 * makes it a computed tuple. */
static bool is_number_tuple(const mapopt__expr *e) {
  if (e->kind != EX_TUPLE || e->u.list.n < 2)
    return false;
  for (int i = 0; i < e->u.list.n; i++)
    if (!is_number(e->u.list.items[i]))
      return false;
  return true;
}

static bool has_unpack(const mapopt__expr_list *l) {
  for (int i = 0; i < l->n; i++)
    if (l->items[i]->kind == EX_UNPACK)
      return true;
  return false;
}

static void ty_list(pcheck *c, const mapopt__expr_list *l) {
  for (int i = 0; i < l->n; i++)
    ty(c, l->items[i]);
}

static ptype name_ty(const pcheck *c, const mapopt__name_ref *r) {
  for (int i = c->ncomp - 1; i >= 0; i--)
    if (c->comp_sym[i] == r->sym)
      return PT_UNKNOWN;
  if (c->fn && r->slot >= 0 && c->local_ty[r->sym])
    return (ptype)(c->local_ty[r->sym] - 1);
  return (ptype)c->global_ty[r->sym];
}

static ptype param_ty(mapopt__param_type t) {
  switch (t) {
  case TYPE_INT:
    return PT_INT;
  case TYPE_BOOL:
    return PT_BOOL;
  case TYPE_IPOINT:
  case TYPE_ISPACE:
    return PT_TUPLE;
  case TYPE_MSPACE:
    return PT_MACHINE;
  default:
    return PT_TASK;
  }
}

/* A call of a function: P10, P16, P19. */
static ptype call_ty(pcheck *c, const mapopt__expr *e) {
  ty_list(c, &e->u.call.args);
  if (e->u.call.args.n == 0)
    warn(c, MAPOPT__DIAG(P10_NO_ARGUMENTS), e->loc, sym(c, e->u.call.fn.sym));
  const mapopt__stmt *def =
      e->u.call.fn.slot < 0 ? c->def_of[e->u.call.fn.sym] : NULL;
  if (!def)
    return PT_UNKNOWN;
  bool task = false;
  for (int i = 0; i < def->u.def.nparams; i++)
    task |= def->u.def.params[i].type == TYPE_TASK;
  if (task)
    warn(c, MAPOPT__DIAG(P19_TASK_ARGUMENT), e->loc, sym(c, def->u.def.sym));
  for (int i = 0; !has_unpack(&e->u.call.args) && i < e->u.call.args.n &&
                  i < def->u.def.nparams;
       i++) {
    mapopt__param_type pt = def->u.def.params[i].type;
    if ((pt == TYPE_IPOINT || pt == TYPE_ISPACE) &&
        ty(c, e->u.call.args.items[i]) == PT_TUPLE_EXPR)
      warn(c, MAPOPT__DIAG(P16_TUPLE_ARGUMENT), e->u.call.args.items[i]->loc,
           i + 1, sym(c, def->u.def.sym), mapopt__param_type_text(pt));
  }
  return (ptype)c->ret_ty[def->u.def.sym];
}

/* A member: P10, P17, P24. */
static ptype member_ty(pcheck *c, const mapopt__expr *e) {
  ty(c, e->u.member.base);
  const mapopt__expr_list *args = &e->u.member.args;
  if (e->u.member.call) {
    ty_list(c, args);
    if (args->n == 0)
      warn(c, MAPOPT__DIAG(P10_NO_ARGUMENTS), e->loc,
           mapopt__member_text(e->u.member.member));
  }
  switch (e->u.member.member) {
  case MEM_SIZE:
  case MEM_IPOINT:
  case MEM_ISPACE:
  case MEM_PROCESSOR:
    return PT_TUPLE;
  case MEM_LEN:
  case MEM_VOLUME:
    return PT_INT;
  case MEM_PARENT:
    return PT_TASK;
  case MEM_HAS:
    warn(c, MAPOPT__DIAG(P17_HAS), e->loc);
    return PT_BOOL;
  case MEM_BALANCE_SPLIT:
    if (args->n == 2 && args->items[1]->kind == EX_INT &&
        args->items[1]->u.ival != 2 && args->items[1]->u.ival != 3)
      warn(c, MAPOPT__DIAG(P24_BALANCE_PARTS), args->items[1]->loc,
           args->items[1]->u.ival);
    return PT_MACHINE;
  default: /* the transformations */
    return PT_MACHINE;
  }
}

/* A subscript: P09 and P18 on a machine model. */
static ptype index_ty(pcheck *c, const mapopt__expr *e) {
  ptype base = ty(c, e->u.index.base);
  const mapopt__expr_list *subs = &e->u.index.subs;
  ty_list(c, subs);
  /* mapopt indexes a tuple with one int only: more is a machine. */
  bool machine = base == PT_MACHINE || subs->n > 1;
  if (!machine)
    return base == PT_TUPLE ? PT_INT : PT_UNKNOWN;
  int wild = 0;
  for (int i = 0; i < subs->n; i++) {
    const mapopt__expr *s = subs->items[i];
    wild += s->kind == EX_WILDCARD;
    if (s->kind == EX_UNARY && s->u.unary.op == OP_NEG &&
        s->u.unary.operand->kind == EX_INT)
      warn(c, MAPOPT__DIAG(P09_NEGATIVE), s->loc);
  }
  if (wild > 1)
    warn(c, MAPOPT__DIAG(P18_WILDCARDS), e->loc);
  return wild ? PT_SET : PT_POINT;
}

/* A slice: P20 when the right bound is a number not provably below the
 * length (the DSL mapper refuses one equal to it; 0 means "to the end" in
 * both). */
static ptype slice_ty(pcheck *c, const mapopt__expr *e) {
  ptype base = ty(c, e->u.slice.base);
  const mapopt__expr *hi = e->u.slice.hi;
  if (e->u.slice.lo)
    ty(c, e->u.slice.lo);
  if (hi)
    ty(c, hi);
  const mapopt__expr *b = e->u.slice.base;
  if (hi && hi->kind == EX_INT && hi->u.ival > 0 &&
      (b->kind != EX_TUPLE || hi->u.ival >= b->u.list.n))
    warn(c, MAPOPT__DIAG(P20_SLICE_END), hi->loc);
  return base == PT_TUPLE_EXPR ? PT_TUPLE_EXPR
         : base == PT_UNKNOWN  ? PT_UNKNOWN
                               : PT_TUPLE;
}

static ptype comp_ty(pcheck *c, const mapopt__expr *e) {
  const mapopt__expr *r = e->u.comp.range;
  ty(c, r);
  if (!c->fn)
    warn(c, MAPOPT__DIAG(P03_TOP_COMPREHENSION), e->loc);
  else if (r->kind != EX_TUPLE || has_unpack(&r->u.list))
    warn(c, MAPOPT__DIAG(P02_RANGE), e->loc);
  if (c->ncomp < (int)(sizeof c->comp_sym / sizeof c->comp_sym[0])) {
    c->comp_sym[c->ncomp++] = e->u.comp.var.sym;
    ty(c, e->u.comp.elem);
    c->ncomp--;
  }
  return PT_TUPLE_EXPR;
}

static ptype binary_ty(pcheck *c, const mapopt__expr *e) {
  ptype l = ty(c, e->u.binary.lhs), r = ty(c, e->u.binary.rhs);
  switch (e->u.binary.op) {
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
  case OP_DIV:
  case OP_MOD:
    return is_tuple(l) || is_tuple(r)   ? PT_TUPLE
           : l == PT_INT && r == PT_INT ? PT_INT
                                        : PT_UNKNOWN;
  default:
    return PT_BOOL;
  }
}

static ptype unary_ty(pcheck *c, const mapopt__expr *e) {
  const mapopt__expr *x = e->u.unary.operand;
  ptype t = ty(c, x);
  if (e->u.unary.op == OP_NOT) {
    warn(c, MAPOPT__DIAG(P07_NOT), e->loc);
    return PT_BOOL;
  }
  if (!is_number(x) && !is_number_tuple(x))
    warn(c, MAPOPT__DIAG(P06_NEGATE), e->loc);
  return t == PT_INT || is_tuple(t) ? t : PT_UNKNOWN;
}

static ptype ty(pcheck *c, const mapopt__expr *e) {
  switch (e->kind) {
  case EX_INT:
    if (e->u.ival > INT32_MAX)
      warn(c, MAPOPT__DIAG(P28_INTEGER), e->loc, e->u.ival);
    return PT_INT;
  case EX_BOOL:
    return PT_BOOL;
  case EX_PROC_KIND:
    return PT_PROC_KIND;
  case EX_MEM_KIND:
    return PT_MEM_KIND;
  case EX_NAME:
    return name_ty(c, &e->u.name);
  case EX_CALL:
    return call_ty(c, e);
  case EX_MACHINE:
    ty(c, e->u.machine);
    return PT_MACHINE;
  case EX_TUPLE:
    ty_list(c, &e->u.list);
    return is_number_tuple(e) ? PT_TUPLE : PT_TUPLE_EXPR;
  case EX_COMP:
    return comp_ty(c, e);
  case EX_UNARY:
    return unary_ty(c, e);
  case EX_BINARY:
    return binary_ty(c, e);
  case EX_COND: {
    const mapopt__expr *els = e->u.cond.els;
    ty(c, e->u.cond.cond);
    ptype a = ty(c, e->u.cond.then), b = ty(c, els);
    if (els->kind == EX_COND && !els->paren)
      warn(c, MAPOPT__DIAG(P04_CONDITIONAL), els->loc);
    return a == b ? a : PT_UNKNOWN;
  }
  case EX_INDEX:
    return index_ty(c, e);
  case EX_SLICE:
    return slice_ty(c, e);
  case EX_MEMBER:
    return member_ty(c, e);
  case EX_UNPACK: {
    const mapopt__expr *x = e->u.unpack;
    if (!x->paren && (x->kind == EX_BINARY || x->kind == EX_COND))
      warn(c, MAPOPT__DIAG(P05_UNPACK), e->loc,
           x->kind == EX_COND ? "?:" : mapopt__op_text(x->u.binary.op));
    return ty(c, x);
  }
  case EX_WILDCARD:
    return PT_UNKNOWN;
  }
  return PT_UNKNOWN;
}

/* An assignment's value: P23 for what the DSL mapper cannot store. */
static ptype assigned_ty(pcheck *c, const mapopt__stmt *s) {
  const mapopt__expr *v = s->u.assign.value;
  ptype t = ty(c, v);
  if (t == PT_SET || t == PT_PROC_KIND || t == PT_MEM_KIND)
    warn(c, MAPOPT__DIAG(P23_ASSIGN), v->loc, ptype_name(t));
  else if (v->kind == EX_TUPLE && v->u.list.n == 1)
    warn(c, MAPOPT__DIAG(P23_ASSIGN), v->loc, "tuple unpacked alone");
  return t;
}

static void check_def(pcheck *c, const mapopt__stmt *s) {
  c->fn = s;
  for (int i = 0; i < s->u.def.nparams; i++)
    c->local_ty[s->u.def.params[i].sym] =
        (uint8_t)(1 + param_ty(s->u.def.params[i].type));
  bool returned = false;
  for (int i = 0; i < s->u.def.body.n; i++) {
    const mapopt__stmt *b = s->u.def.body.items[i];
    switch (b->kind) {
    case ST_ASSIGN: {
      int target = b->u.assign.target.sym;
      ptype t = assigned_ty(c, b);
      if (c->local_ty[target])
        warn(c, MAPOPT__DIAG(P08_REASSIGN), b->loc, sym(c, target));
      else
        c->local_ty[target] = (uint8_t)(1 + t);
      break;
    }
    case ST_RETURN: {
      ptype t = ty(c, b->u.ret.value);
      if (t == PT_MACHINE || t == PT_TASK || t == PT_PROC_KIND ||
          t == PT_MEM_KIND)
        warn(c, MAPOPT__DIAG(P15_RETURN), b->loc, sym(c, s->u.def.sym),
             ptype_name(t));
      if (!returned && !c->ret_ty[s->u.def.sym])
        c->ret_ty[s->u.def.sym] = (uint8_t)t;
      returned = true;
      break;
    }
    case ST_PRINT:
      ty_list(c, &b->u.print.args);
      break;
    default:
      break;
    }
  }
  /* Reset the function's scratch for the next one. */
  for (int i = 0; i < s->u.def.nparams; i++)
    c->local_ty[s->u.def.params[i].sym] = 0;
  for (int i = 0; i < s->u.def.body.n; i++)
    if (s->u.def.body.items[i]->kind == ST_ASSIGN)
      c->local_ty[s->u.def.body.items[i]->u.assign.target.sym] = 0;
  c->fn = NULL;
}

/* A Layout statement's constraints: P12, and the order the DSL mapper
 * gives the instance (P25, P26). */
static void check_layout(pcheck *c, const mapopt__stmt *s) {
  bool aos = false, ordered = false, c_order = false;
  for (int i = 0; i < s->u.layout.ncons; i++) {
    const mapopt__constraint *k = &s->u.layout.cons[i];
    switch (k->kind) {
    case CONS_SOA:
    case CONS_AOS:
      aos = k->kind == CONS_AOS;
      break;
    case CONS_C_ORDER:
    case CONS_F_ORDER:
      ordered = true;
      c_order = k->kind == CONS_C_ORDER;
      break;
    case CONS_NO_ALIGN:
      warn(c, MAPOPT__DIAG(P12_NO_ALIGN), k->loc);
      break;
    default:
      break;
    }
  }
  if (s->u.layout.field.kind == FIELD_PROC)
    warn(c, MAPOPT__DIAG(P11_LAYOUT_KIND), s->u.layout.field.loc);
  if (aos && !c_order)
    warn(c, MAPOPT__DIAG(P25_AOS_F_ORDER), s->loc,
         ordered ? "" : " (the order it takes when a Layout gives none)");
  else if (!ordered)
    warn(c, MAPOPT__DIAG(P26_ORDER), s->loc);
}

/* A keyed region argument: P13 where the DSL mapper takes no position,
 * P22 for a position in a mapper that also names arguments. */
static void check_region_key(pcheck *c, const char *stmt, const mapopt__sel *r,
                             bool positions) {
  if (r->kind != SEL_INT)
    return;
  if (!positions)
    warn(c, MAPOPT__DIAG(P13_POSITION), r->loc, stmt);
  else if (c->named)
    warn(c, MAPOPT__DIAG(P22_KEYS_MIXED), r->loc);
}

static void check_stmt(pcheck *c, const mapopt__stmt *s) {
  switch (s->kind) {
  case ST_REGION:
    check_region_key(c, "Region", &s->u.region.region, true);
    break;
  case ST_LAYOUT:
    check_region_key(c, "Layout", &s->u.layout.region, false);
    check_layout(c, s);
    break;
  case ST_COLLECT:
    check_region_key(c, "CollectMemory", &s->u.collect.region, false);
    break;
  case ST_LIMIT:
    if (s->u.limit.legacy.kind != FIELD_NONE)
      warn(c, MAPOPT__DIAG(P14_LIMIT_KIND), s->u.limit.legacy.loc,
           s->u.limit.task.name, s->u.limit.limit);
    break;
  case ST_INDEX_MAP:
  case ST_SINGLE_MAP:
    if (s->legacy)
      warn(c, MAPOPT__DIAG(P27_LEGACY), s->loc);
    for (int i = 0; i < s->u.map.targets.n; i++)
      if (s->u.map.targets.items[i].kind == SEL_STAR)
        warn(c, MAPOPT__DIAG(P21_STAR_BINDING), s->u.map.targets.items[i].loc,
             s->kind == ST_INDEX_MAP ? "IndexTaskMap" : "SingleTaskMap");
    break;
  case ST_DEF:
    /* The function written for an older map statement is mapopt's own
     * reading of it; P27 is the warning about that statement. */
    if (!s->legacy) {
      if (!c->def_of[s->u.def.sym])
        c->def_of[s->u.def.sym] = s;
      check_def(c, s);
    }
    break;
  case ST_ASSIGN: {
    ptype t = assigned_ty(c, s);
    if (!c->global_ty[s->u.assign.target.sym])
      c->global_ty[s->u.assign.target.sym] = (uint8_t)t;
    break;
  }
  case ST_PRINT:
    ty_list(c, &s->u.print.args);
    break;
  default:
    break;
  }
}

mapopt_status mapopt__dsl_portable(const mapopt_program *prog,
                                   mapopt_diags *diags) {
  const mapopt__ast *ast = &prog->ast;
  size_t n = ast->syms.names.len ? ast->syms.names.len : 1;
  mapopt_ctx *ctx = prog->ctx;
  pcheck c = {.prog = prog, .diags = diags, .status = MAPOPT_OK};
  c.global_ty = mapopt__calloc(ctx, n, 1);
  c.ret_ty = mapopt__calloc(ctx, n, 1);
  c.local_ty = mapopt__calloc(ctx, n, 1);
  c.def_of = mapopt__calloc(ctx, n, sizeof *c.def_of);
  if (!c.global_ty || !c.ret_ty || !c.local_ty || !c.def_of)
    c.status = MAPOPT_ENOMEM;
  for (int i = 0; i < ast->stmts.n; i++) {
    const mapopt__sel *r = mapopt__stmt_region(ast->stmts.items[i]);
    c.named |= r && r->kind == SEL_NAME;
  }
  if (c.status == MAPOPT_OK && ast->stmts.n == 0) {
    c.report = true;
    warn(&c, MAPOPT__DIAG(P01_EMPTY), (mapopt__loc){1, 1});
  }
  for (int pass = 0; pass < 2 && c.status == MAPOPT_OK; pass++) {
    c.report = pass == 1;
    for (int i = 0; i < ast->stmts.n && c.status == MAPOPT_OK; i++)
      check_stmt(&c, ast->stmts.items[i]);
  }
  mapopt__free(ctx, c.global_ty, n);
  mapopt__free(ctx, c.ret_ty, n);
  mapopt__free(ctx, c.local_ty, n);
  mapopt__free(ctx, c.def_of, n * sizeof *c.def_of);
  return c.status;
}
