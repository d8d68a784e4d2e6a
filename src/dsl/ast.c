/*
 * The syntax tree's owner (docs/dsl.md): initialisation and destruction of a
 * program's arena and symbol table, symbol interning, the spellings of
 * operators, members and parameter types (those of the kinds are
 * mapopt/shape.h's), and structural equality of two trees (used by the
 * printer's round-trip tests and by optimizers to detect duplicate candidates).
 *
 * Equality ignores locations, name slots and frame sizes, compares symbols
 * by text and strings by bytes. It recurses on expressions, whose height the
 * parser bounds (MAPOPT__DSL_MAX_NESTING).
 */
#include <string.h>

#include "dsl/ast.h"

void mapopt__ast_init(mapopt__ast *ast, mapopt_ctx *ctx) {
  ast->ctx = ctx;
  mapopt__arena_init(&ast->arena, ctx);
  mapopt__map_init(&ast->syms.index);
  mapopt__vec_init(&ast->syms.names, sizeof(const char *));
  ast->stmts.items = NULL;
  ast->stmts.n = 0;
  ast->file = NULL;
}

void mapopt__ast_destroy(mapopt__ast *ast) {
  mapopt__map_destroy(&ast->syms.index, ast->ctx);
  mapopt__vec_destroy(&ast->syms.names, ast->ctx);
  mapopt__arena_destroy(&ast->arena);
  ast->stmts.items = NULL;
  ast->stmts.n = 0;
  ast->file = NULL;
}

int mapopt__sym_intern(mapopt__ast *ast, const char *text, size_t len) {
  mapopt__symtab *st = &ast->syms;
  mapopt__map_entry *e = mapopt__map_find(&st->index, text, len);
  if (e)
    return (int)((uintptr_t)e->value - 1);
  if (st->names.len >= (size_t)INT32_MAX - 1)
    return -1;
  char *copy = mapopt__arena_strndup(&ast->arena, text, len);
  if (!copy)
    return -1;
  /* Push the name first: the map cannot take an entry back. */
  const char **slot = mapopt__vec_push(&st->names, ast->ctx);
  if (!slot)
    return -1;
  *slot = copy;
  bool inserted;
  e = mapopt__map_upsert(&st->index, ast->ctx, copy, len, &inserted);
  if (!e) {
    st->names.len--;
    return -1;
  }
  int id = (int)st->names.len - 1;
  e->value = (void *)(uintptr_t)(id + 1);
  return id;
}

const char *mapopt__sym_name(const mapopt__ast *ast, int sym) {
  if (sym < 0 || (size_t)sym >= ast->syms.names.len)
    return NULL;
  return MAPOPT__VEC_AT(&ast->syms.names, const char *, sym);
}

/* ---- spellings --------------------------------------------------------- */

const char *mapopt__op_text(mapopt__op op) {
  static const char *const text[] = {
      [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/",
      [OP_MOD] = "%", [OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<",
      [OP_LE] = "<=", [OP_GT] = ">",  [OP_GE] = ">=", [OP_AND] = "&&",
      [OP_OR] = "||", [OP_NEG] = "-", [OP_NOT] = "!"};
  return (unsigned)op < sizeof text / sizeof text[0] ? text[op] : "?";
}

const char *mapopt__member_text(mapopt__member m) {
  static const char *const text[MEM__COUNT] = {
      "size",    "len",           "volume",     "ipoint",
      "ispace",  "parent",        "processor",  "has",
      "split",   "merge",         "swap",       "slice",
      "reverse", "balance_split", "auto_split", "greedy_split"};
  return (unsigned)m < MEM__COUNT ? text[m] : "?";
}

const char *mapopt__param_type_text(mapopt__param_type t) {
  static const char *const text[] = {
      [TYPE_INT] = "int",       [TYPE_BOOL] = "bool",
      [TYPE_IPOINT] = "IPoint", [TYPE_ISPACE] = "ISpace",
      [TYPE_MSPACE] = "MSpace", [TYPE_TASK] = "Task"};
  return (unsigned)t < sizeof text / sizeof text[0] ? text[t] : "?";
}

/* ---- equality ---------------------------------------------------------- */

typedef struct pair {
  const mapopt__ast *a;
  const mapopt__ast *b;
} pair;

static bool str_eq(const char *x, const char *y) {
  if (!x || !y)
    return x == y;
  return strcmp(x, y) == 0;
}

static bool sym_eq(pair p, int x, int y) {
  return str_eq(mapopt__sym_name(p.a, x), mapopt__sym_name(p.b, y));
}

static bool expr_eq(pair p, const mapopt__expr *x, const mapopt__expr *y);

static bool list_eq(pair p, const mapopt__expr_list *x,
                    const mapopt__expr_list *y) {
  if (x->n != y->n)
    return false;
  for (int i = 0; i < x->n; i++)
    if (!expr_eq(p, x->items[i], y->items[i]))
      return false;
  return true;
}

/* Both NULL, or both present and equal. */
static bool opt_eq(pair p, const mapopt__expr *x, const mapopt__expr *y) {
  if (!x || !y)
    return x == y;
  return expr_eq(p, x, y);
}

static bool expr_eq(pair p, const mapopt__expr *x, const mapopt__expr *y) {
  if (x->kind != y->kind)
    return false;
  switch (x->kind) {
  case EX_INT:
    return x->u.ival == y->u.ival;
  case EX_BOOL:
    return x->u.bval == y->u.bval;
  case EX_PROC_KIND:
  case EX_MEM_KIND:
    return x->u.kind == y->u.kind;
  case EX_NAME:
    return sym_eq(p, x->u.name.sym, y->u.name.sym);
  case EX_CALL:
    return sym_eq(p, x->u.call.fn.sym, y->u.call.fn.sym) &&
           list_eq(p, &x->u.call.args, &y->u.call.args);
  case EX_MACHINE:
    return expr_eq(p, x->u.machine, y->u.machine);
  case EX_TUPLE:
    return list_eq(p, &x->u.list, &y->u.list);
  case EX_COMP:
    return sym_eq(p, x->u.comp.var.sym, y->u.comp.var.sym) &&
           expr_eq(p, x->u.comp.elem, y->u.comp.elem) &&
           expr_eq(p, x->u.comp.range, y->u.comp.range);
  case EX_UNARY:
    return x->u.unary.op == y->u.unary.op &&
           expr_eq(p, x->u.unary.operand, y->u.unary.operand);
  case EX_BINARY:
    return x->u.binary.op == y->u.binary.op &&
           expr_eq(p, x->u.binary.lhs, y->u.binary.lhs) &&
           expr_eq(p, x->u.binary.rhs, y->u.binary.rhs);
  case EX_COND:
    return expr_eq(p, x->u.cond.cond, y->u.cond.cond) &&
           expr_eq(p, x->u.cond.then, y->u.cond.then) &&
           expr_eq(p, x->u.cond.els, y->u.cond.els);
  case EX_INDEX:
    return expr_eq(p, x->u.index.base, y->u.index.base) &&
           list_eq(p, &x->u.index.subs, &y->u.index.subs);
  case EX_SLICE:
    return expr_eq(p, x->u.slice.base, y->u.slice.base) &&
           opt_eq(p, x->u.slice.lo, y->u.slice.lo) &&
           opt_eq(p, x->u.slice.hi, y->u.slice.hi);
  case EX_MEMBER:
    return x->u.member.member == y->u.member.member &&
           x->u.member.call == y->u.member.call &&
           expr_eq(p, x->u.member.base, y->u.member.base) &&
           (!x->u.member.call ||
            list_eq(p, &x->u.member.args, &y->u.member.args));
  case EX_UNPACK:
    return expr_eq(p, x->u.unpack, y->u.unpack);
  case EX_WILDCARD:
    return true;
  }
  return false;
}

static bool sel_eq(const mapopt__sel *x, const mapopt__sel *y) {
  if (x->kind != y->kind)
    return false;
  switch (x->kind) {
  case SEL_STAR:
    return true;
  case SEL_NAME:
    return str_eq(x->name, y->name);
  case SEL_INT:
    return x->pos == y->pos;
  case SEL_KIND:
    return x->proc_kind == y->proc_kind;
  }
  return false;
}

static bool sels_eq(const mapopt__sel_list *x, const mapopt__sel_list *y) {
  if (x->n != y->n)
    return false;
  for (int i = 0; i < x->n; i++)
    if (!sel_eq(&x->items[i], &y->items[i]))
      return false;
  return true;
}

static bool field_eq(const mapopt__field *x, const mapopt__field *y) {
  return x->kind == y->kind && (x->kind == FIELD_NONE ||
                                x->kind == FIELD_STAR || x->value == y->value);
}

static bool bytes_eq(const uint8_t *x, int nx, const uint8_t *y, int ny) {
  return nx == ny && (nx == 0 || memcmp(x, y, (size_t)nx) == 0);
}

static bool cons_eq(const mapopt__constraint *x, const mapopt__constraint *y) {
  return x->kind == y->kind &&
         (x->kind != CONS_ALIGN ||
          (x->align_op == y->align_op && x->align == y->align));
}

static bool stmts_eq(pair p, const mapopt__stmt_list *x,
                     const mapopt__stmt_list *y);

static bool stmt_eq(pair p, const mapopt__stmt *x, const mapopt__stmt *y) {
  if (x->kind != y->kind)
    return false;
  switch (x->kind) {
  case ST_TASK:
    return sels_eq(&x->u.task.tasks, &y->u.task.tasks) &&
           bytes_eq(x->u.task.kinds, x->u.task.nkinds, y->u.task.kinds,
                    y->u.task.nkinds);
  case ST_REGION:
    return sel_eq(&x->u.region.task, &y->u.region.task) &&
           sel_eq(&x->u.region.region, &y->u.region.region) &&
           field_eq(&x->u.region.proc, &y->u.region.proc) &&
           bytes_eq(x->u.region.mems, x->u.region.nmems, y->u.region.mems,
                    y->u.region.nmems);
  case ST_LAYOUT:
    if (!sel_eq(&x->u.layout.task, &y->u.layout.task) ||
        !sel_eq(&x->u.layout.region, &y->u.layout.region) ||
        !field_eq(&x->u.layout.field, &y->u.layout.field) ||
        x->u.layout.ncons != y->u.layout.ncons)
      return false;
    for (int i = 0; i < x->u.layout.ncons; i++)
      if (!cons_eq(&x->u.layout.cons[i], &y->u.layout.cons[i]))
        return false;
    return true;
  case ST_LIMIT:
    return sel_eq(&x->u.limit.task, &y->u.limit.task) &&
           field_eq(&x->u.limit.legacy, &y->u.limit.legacy) &&
           x->u.limit.limit == y->u.limit.limit;
  case ST_COLLECT:
    return sel_eq(&x->u.collect.task, &y->u.collect.task) &&
           sel_eq(&x->u.collect.region, &y->u.collect.region);
  case ST_INDEX_MAP:
  case ST_SINGLE_MAP:
    return sels_eq(&x->u.map.targets, &y->u.map.targets) &&
           sym_eq(p, x->u.map.fn, y->u.map.fn);
  case ST_REPLICATE:
    return sels_eq(&x->u.replicate.names, &y->u.replicate.names);
  case ST_DEF:
    if (!sym_eq(p, x->u.def.sym, y->u.def.sym) ||
        x->u.def.nparams != y->u.def.nparams)
      return false;
    for (int i = 0; i < x->u.def.nparams; i++)
      if (x->u.def.params[i].type != y->u.def.params[i].type ||
          !sym_eq(p, x->u.def.params[i].sym, y->u.def.params[i].sym))
        return false;
    return stmts_eq(p, &x->u.def.body, &y->u.def.body);
  case ST_ASSIGN:
    return sym_eq(p, x->u.assign.target.sym, y->u.assign.target.sym) &&
           expr_eq(p, x->u.assign.value, y->u.assign.value);
  case ST_PRINT:
    return x->u.print.fmtlen == y->u.print.fmtlen &&
           (x->u.print.fmtlen == 0 || memcmp(x->u.print.fmt, y->u.print.fmt,
                                             (size_t)x->u.print.fmtlen) == 0) &&
           list_eq(p, &x->u.print.args, &y->u.print.args);
  case ST_RETURN:
    return expr_eq(p, x->u.ret.value, y->u.ret.value);
  }
  return false;
}

static bool stmts_eq(pair p, const mapopt__stmt_list *x,
                     const mapopt__stmt_list *y) {
  if (x->n != y->n)
    return false;
  for (int i = 0; i < x->n; i++)
    if (!stmt_eq(p, x->items[i], y->items[i]))
      return false;
  return true;
}

bool mapopt__ast_equal(const mapopt__ast *a, const mapopt__ast *b) {
  pair p = {a, b};
  return stmts_eq(p, &a->stmts, &b->stmts);
}

const mapopt__sel *mapopt__stmt_region(const mapopt__stmt *s) {
  switch (s->kind) {
  case ST_REGION:
    return &s->u.region.region;
  case ST_LAYOUT:
    return &s->u.layout.region;
  case ST_COLLECT:
    return &s->u.collect.region;
  default:
    return NULL;
  }
}
