/*
 * The fully parenthesised dump of a DSL expression tree that the parser's
 * tests compare (test_parse: the precedence rules; test_refgrammar: the
 * canonical form read with the DSL mapper of Legion's grammar).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ast_dump.h"

static void dump_list(const mapopt__ast *ast, const mapopt__expr_list *l,
                      mapopt__strbuf *sb) {
  for (int i = 0; i < l->n; i++) {
    mapopt__sb_putc(sb, ' ');
    test_dump_expr(ast, l->items[i], sb);
  }
}

void test_dump_expr(const mapopt__ast *ast, const mapopt__expr *e,
                    mapopt__strbuf *sb) {
  if (!e) {
    mapopt__sb_putc(sb, '_');
    return;
  }
  switch (e->kind) {
  case EX_INT:
    mapopt__sb_printf(sb, "%lld", (long long)e->u.ival);
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
    assert_int_equal(e->u.name.slot, -1);
    mapopt__sb_puts(sb, mapopt__sym_name(ast, e->u.name.sym));
    break;
  case EX_CALL:
    assert_int_equal(e->u.call.fn.slot, -1);
    mapopt__sb_printf(sb, "(call %s", mapopt__sym_name(ast, e->u.call.fn.sym));
    dump_list(ast, &e->u.call.args, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_MACHINE:
    mapopt__sb_puts(sb, "(Machine ");
    test_dump_expr(ast, e->u.machine, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_TUPLE:
    mapopt__sb_puts(sb, "(tuple");
    dump_list(ast, &e->u.list, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_COMP:
    mapopt__sb_puts(sb, "(comp ");
    test_dump_expr(ast, e->u.comp.elem, sb);
    mapopt__sb_printf(sb, " %s ", mapopt__sym_name(ast, e->u.comp.var.sym));
    test_dump_expr(ast, e->u.comp.range, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_UNARY:
    mapopt__sb_printf(sb, "(%s ", mapopt__op_text(e->u.unary.op));
    test_dump_expr(ast, e->u.unary.operand, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_BINARY:
    mapopt__sb_printf(sb, "(%s ", mapopt__op_text(e->u.binary.op));
    test_dump_expr(ast, e->u.binary.lhs, sb);
    mapopt__sb_putc(sb, ' ');
    test_dump_expr(ast, e->u.binary.rhs, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_COND:
    mapopt__sb_puts(sb, "(? ");
    test_dump_expr(ast, e->u.cond.cond, sb);
    mapopt__sb_putc(sb, ' ');
    test_dump_expr(ast, e->u.cond.then, sb);
    mapopt__sb_putc(sb, ' ');
    test_dump_expr(ast, e->u.cond.els, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_INDEX:
    mapopt__sb_puts(sb, "([] ");
    test_dump_expr(ast, e->u.index.base, sb);
    dump_list(ast, &e->u.index.subs, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_SLICE:
    mapopt__sb_puts(sb, "([:] ");
    test_dump_expr(ast, e->u.slice.base, sb);
    mapopt__sb_putc(sb, ' ');
    test_dump_expr(ast, e->u.slice.lo, sb);
    mapopt__sb_putc(sb, ' ');
    test_dump_expr(ast, e->u.slice.hi, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_MEMBER:
    mapopt__sb_puts(sb, "(. ");
    test_dump_expr(ast, e->u.member.base, sb);
    mapopt__sb_printf(sb, " %s", mapopt__member_text(e->u.member.member));
    if (e->u.member.call) {
      mapopt__sb_puts(sb, " (");
      dump_list(ast, &e->u.member.args, sb);
      mapopt__sb_putc(sb, ')');
    }
    mapopt__sb_putc(sb, ')');
    break;
  case EX_UNPACK:
    mapopt__sb_puts(sb, "(* ");
    test_dump_expr(ast, e->u.unpack, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case EX_WILDCARD:
    mapopt__sb_puts(sb, "*");
    break;
  }
}
