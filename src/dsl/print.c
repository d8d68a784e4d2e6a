/*
 * The canonical printer of the mapping DSL (docs/dsl.md, "Step 7: format it"):
 * one statement per line, ", " between list items, single spaces around binary
 * operators and "? :", "Align==64" without spaces, def bodies indented by four
 * spaces, and parentheses only where precedence or associativity require them
 * -- in mapopt's grammar or in the DSL mapper's (docs/legion.md), which groups
 * `?:` from the left -- so that parse(print(A)) equals A in both and printing
 * is idempotent. Comments are gone with the parse.
 *
 * The printer recurses on the tree; trees from the parser are at most
 * MAPOPT__DSL_MAX_NESTING tall, so the depth is bounded. An allocation
 * failure is recorded in the string buffer (sb->failed), not here.
 */
#include <inttypes.h>

#include "dsl/ast.h"

/* Precedence levels of docs/dsl.md, "Operators". */
enum {
  PREC_ITEM = 0, /* an unpack item: "*" binds more loosely than anything */
  PREC_COND = 1,
  PREC_OR,
  PREC_AND,
  PREC_EQ,
  PREC_REL,
  PREC_ADD,
  PREC_MUL,
  PREC_PREFIX,
  PREC_POSTFIX /* postfix and primary expressions */
};

static int binop_prec(mapopt__op op) {
  switch (op) {
  case OP_OR:
    return PREC_OR;
  case OP_AND:
    return PREC_AND;
  case OP_EQ:
  case OP_NE:
    return PREC_EQ;
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
    return PREC_REL;
  case OP_ADD:
  case OP_SUB:
    return PREC_ADD;
  default:
    return PREC_MUL;
  }
}

static int prec(const mapopt__expr *e) {
  switch (e->kind) {
  case EX_COND:
    return PREC_COND;
  case EX_BINARY:
    return binop_prec(e->u.binary.op);
  case EX_UNARY:
    return PREC_PREFIX;
  case EX_UNPACK:
  case EX_WILDCARD:
    return PREC_ITEM;
  default:
    return PREC_POSTFIX;
  }
}

static void expr(const mapopt__ast *ast, const mapopt__expr *e, int min,
                 mapopt__strbuf *sb);

/* Items of a tuple, call or subscript, each a full expression or item. */
static void items(const mapopt__ast *ast, const mapopt__expr_list *l,
                  mapopt__strbuf *sb) {
  for (int i = 0; i < l->n; i++) {
    if (i > 0)
      mapopt__sb_puts(sb, ", ");
    expr(ast, l->items[i], PREC_ITEM, sb);
  }
}

/*
 * Prints e, in parentheses when its precedence is below min: the context's
 * lowest level that may appear there without them.
 */
static void expr(const mapopt__ast *ast, const mapopt__expr *e, int min,
                 mapopt__strbuf *sb) {
  bool paren = prec(e) < min;
  if (paren)
    mapopt__sb_putc(sb, '(');
  switch (e->kind) {
  case EX_INT:
    mapopt__sb_printf(sb, "%" PRId64, e->u.ival);
    break;
  case EX_BOOL:
    mapopt__sb_puts(sb, e->u.bval ? "True" : "False");
    break;
  case EX_PROC_KIND:
    mapopt__sb_puts(sb, mapopt_shape_proc_name((mapopt_proc_kind)e->u.kind));
    break;
  case EX_MEM_KIND:
    mapopt__sb_puts(sb, mapopt_shape_mem_name((mapopt_mem_kind)e->u.kind));
    break;
  case EX_NAME:
    mapopt__sb_puts(sb, mapopt__sym_name(ast, e->u.name.sym));
    break;
  case EX_CALL:
    mapopt__sb_puts(sb, mapopt__sym_name(ast, e->u.call.fn.sym));
    mapopt__sb_putc(sb, '(');
    items(ast, &e->u.call.args, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_MACHINE:
    mapopt__sb_puts(sb, "Machine(");
    expr(ast, e->u.machine, PREC_COND, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_TUPLE:
    mapopt__sb_putc(sb, '(');
    items(ast, &e->u.list, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_COMP:
    mapopt__sb_puts(sb, "tuple(");
    expr(ast, e->u.comp.elem, PREC_COND, sb);
    mapopt__sb_puts(sb, " for ");
    mapopt__sb_puts(sb, mapopt__sym_name(ast, e->u.comp.var.sym));
    mapopt__sb_puts(sb, " in ");
    expr(ast, e->u.comp.range, PREC_COND, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_UNARY:
    mapopt__sb_puts(sb, mapopt__op_text(e->u.unary.op));
    expr(ast, e->u.unary.operand, PREC_POSTFIX, sb);
    break;
  case EX_BINARY: {
    int p = binop_prec(e->u.binary.op);
    expr(ast, e->u.binary.lhs, p, sb);
    mapopt__sb_putc(sb, ' ');
    mapopt__sb_puts(sb, mapopt__op_text(e->u.binary.op));
    mapopt__sb_putc(sb, ' ');
    expr(ast, e->u.binary.rhs, p + 1, sb);
    break;
  }
  case EX_COND:
    /* A conditional in the else branch keeps its parentheses: mapopt
     * groups `?:` from the right, but the DSL mapper's grammar groups it
     * from the left, and the canonical form must read the same in both. */
    expr(ast, e->u.cond.cond, PREC_OR, sb);
    mapopt__sb_puts(sb, " ? ");
    expr(ast, e->u.cond.then, PREC_COND, sb);
    mapopt__sb_puts(sb, " : ");
    expr(ast, e->u.cond.els, PREC_OR, sb);
    break;
  case EX_INDEX:
    expr(ast, e->u.index.base, PREC_POSTFIX, sb);
    mapopt__sb_putc(sb, '[');
    items(ast, &e->u.index.subs, sb);
    mapopt__sb_putc(sb, ']');
    break;
  case EX_SLICE:
    expr(ast, e->u.slice.base, PREC_POSTFIX, sb);
    mapopt__sb_putc(sb, '[');
    /* A conditional bound in parentheses: the DSL mapper's grammar ends
     * the upper bound at a '?'. */
    if (e->u.slice.lo)
      expr(ast, e->u.slice.lo, PREC_OR, sb);
    mapopt__sb_putc(sb, ':');
    if (e->u.slice.hi)
      expr(ast, e->u.slice.hi, PREC_OR, sb);
    mapopt__sb_putc(sb, ']');
    break;
  case EX_MEMBER:
    expr(ast, e->u.member.base, PREC_POSTFIX, sb);
    mapopt__sb_putc(sb, '.');
    mapopt__sb_puts(sb, mapopt__member_text(e->u.member.member));
    if (e->u.member.call) {
      mapopt__sb_putc(sb, '(');
      items(ast, &e->u.member.args, sb);
      mapopt__sb_putc(sb, ')');
    }
    break;
  case EX_UNPACK:
    mapopt__sb_putc(sb, '*');
    expr(ast, e->u.unpack, PREC_POSTFIX, sb);
    break;
  case EX_WILDCARD:
    mapopt__sb_putc(sb, '*');
    break;
  }
  if (paren)
    mapopt__sb_putc(sb, ')');
}

void mapopt__dsl_print_expr(const mapopt__ast *ast, const mapopt__expr *e,
                            mapopt__strbuf *sb) {
  expr(ast, e, PREC_ITEM, sb);
}

static void sel(const mapopt__sel *s, mapopt__strbuf *sb) {
  switch (s->kind) {
  case SEL_STAR:
    mapopt__sb_putc(sb, '*');
    break;
  case SEL_NAME:
    mapopt__sb_puts(sb, s->name);
    break;
  case SEL_INT:
    mapopt__sb_printf(sb, "%" PRId64, s->pos);
    break;
  case SEL_KIND:
    mapopt__sb_puts(sb, mapopt_shape_proc_name((mapopt_proc_kind)s->proc_kind));
    break;
  }
}

static void sel_list(const mapopt__sel_list *l, mapopt__strbuf *sb) {
  for (int i = 0; i < l->n; i++) {
    if (i > 0)
      mapopt__sb_puts(sb, ", ");
    sel(&l->items[i], sb);
  }
}

static void field(const mapopt__field *f, mapopt__strbuf *sb) {
  switch (f->kind) {
  case FIELD_NONE:
    break;
  case FIELD_STAR:
    mapopt__sb_puts(sb, " *");
    break;
  case FIELD_PROC:
    mapopt__sb_putc(sb, ' ');
    mapopt__sb_puts(sb, mapopt_shape_proc_name((mapopt_proc_kind)f->value));
    break;
  case FIELD_MEM:
    mapopt__sb_putc(sb, ' ');
    mapopt__sb_puts(sb, mapopt_shape_mem_name((mapopt_mem_kind)f->value));
    break;
  }
}

/* " K1, K2" for a list of processor (mem false) or memory kinds. */
static void kinds(const uint8_t *k, int n, bool mem, mapopt__strbuf *sb) {
  for (int i = 0; i < n; i++) {
    mapopt__sb_puts(sb, i > 0 ? ", " : " ");
    mapopt__sb_puts(sb, mem ? mapopt_shape_mem_name((mapopt_mem_kind)k[i])
                            : mapopt_shape_proc_name((mapopt_proc_kind)k[i]));
  }
}

static void constraint(const mapopt__constraint *c, mapopt__strbuf *sb) {
  static const char *const names[] = {
      [CONS_SOA] = "SOA",           [CONS_AOS] = "AOS",
      [CONS_C_ORDER] = "C_order",   [CONS_F_ORDER] = "F_order",
      [CONS_COMPACT] = "Compact",   [CONS_EXACT] = "Exact",
      [CONS_NO_ALIGN] = "No_Align", [CONS_ALIGN] = "Align"};
  mapopt__sb_putc(sb, ' ');
  mapopt__sb_puts(sb, names[c->kind]);
  if (c->kind == CONS_ALIGN)
    mapopt__sb_printf(sb, "%s%" PRId64, mapopt__op_text(c->align_op), c->align);
}

static void stmt(const mapopt__ast *ast, const mapopt__stmt *s,
                 mapopt__strbuf *sb);

static void def(const mapopt__ast *ast, const mapopt__stmt *s,
                mapopt__strbuf *sb) {
  mapopt__sb_puts(sb, "def ");
  mapopt__sb_puts(sb, mapopt__sym_name(ast, s->u.def.sym));
  mapopt__sb_putc(sb, '(');
  for (int i = 0; i < s->u.def.nparams; i++) {
    const mapopt__param *pm = &s->u.def.params[i];
    if (i > 0)
      mapopt__sb_puts(sb, ", ");
    mapopt__sb_puts(sb, mapopt__param_type_text(pm->type));
    mapopt__sb_putc(sb, ' ');
    mapopt__sb_puts(sb, mapopt__sym_name(ast, pm->sym));
  }
  mapopt__sb_puts(sb, ") {\n");
  for (int i = 0; i < s->u.def.body.n; i++) {
    mapopt__sb_puts(sb, "    ");
    stmt(ast, s->u.def.body.items[i], sb);
  }
  mapopt__sb_puts(sb, "}\n");
}

/* One statement and its newline (a def: its lines). */
static void stmt(const mapopt__ast *ast, const mapopt__stmt *s,
                 mapopt__strbuf *sb) {
  switch (s->kind) {
  case ST_TASK:
    mapopt__sb_puts(sb, "Task ");
    sel_list(&s->u.task.tasks, sb);
    kinds(s->u.task.kinds, s->u.task.nkinds, false, sb);
    break;
  case ST_REGION:
    mapopt__sb_puts(sb, "Region ");
    sel(&s->u.region.task, sb);
    mapopt__sb_putc(sb, ' ');
    sel(&s->u.region.region, sb);
    field(&s->u.region.proc, sb);
    kinds(s->u.region.mems, s->u.region.nmems, true, sb);
    break;
  case ST_LAYOUT:
    mapopt__sb_puts(sb, "Layout ");
    sel(&s->u.layout.task, sb);
    mapopt__sb_putc(sb, ' ');
    sel(&s->u.layout.region, sb);
    field(&s->u.layout.field, sb);
    for (int i = 0; i < s->u.layout.ncons; i++)
      constraint(&s->u.layout.cons[i], sb);
    break;
  case ST_LIMIT:
    mapopt__sb_puts(sb, "InstanceLimit ");
    sel(&s->u.limit.task, sb);
    field(&s->u.limit.legacy, sb);
    mapopt__sb_printf(sb, " %" PRId64, s->u.limit.limit);
    break;
  case ST_COLLECT:
    mapopt__sb_puts(sb, "CollectMemory ");
    sel(&s->u.collect.task, sb);
    mapopt__sb_putc(sb, ' ');
    sel(&s->u.collect.region, sb);
    break;
  case ST_INDEX_MAP:
  case ST_SINGLE_MAP:
    mapopt__sb_puts(sb, s->kind == ST_INDEX_MAP ? "IndexTaskMap "
                                                : "SingleTaskMap ");
    sel_list(&s->u.map.targets, sb);
    mapopt__sb_putc(sb, ' ');
    mapopt__sb_puts(sb, mapopt__sym_name(ast, s->u.map.fn));
    break;
  case ST_REPLICATE:
    mapopt__sb_puts(sb, "ControlReplicate ");
    sel_list(&s->u.replicate.names, sb);
    break;
  case ST_DEF:
    def(ast, s, sb);
    return;
  case ST_ASSIGN:
    mapopt__sb_puts(sb, mapopt__sym_name(ast, s->u.assign.target.sym));
    mapopt__sb_puts(sb, " = ");
    expr(ast, s->u.assign.value, PREC_COND, sb);
    break;
  case ST_PRINT:
    mapopt__sb_puts(sb, "print(\"");
    mapopt__sb_putn(sb, s->u.print.fmt, (size_t)s->u.print.fmtlen);
    mapopt__sb_putc(sb, '"');
    for (int i = 0; i < s->u.print.args.n; i++) {
      mapopt__sb_puts(sb, ", ");
      expr(ast, s->u.print.args.items[i], PREC_COND, sb);
    }
    mapopt__sb_putc(sb, ')');
    break;
  case ST_RETURN:
    mapopt__sb_puts(sb, "return ");
    expr(ast, s->u.ret.value, PREC_COND, sb);
    break;
  }
  mapopt__sb_puts(sb, ";\n");
}

void mapopt__dsl_print(const mapopt__ast *ast, mapopt__strbuf *sb) {
  for (int i = 0; i < ast->stmts.n; i++)
    stmt(ast, ast->stmts.items[i], sb);
}
