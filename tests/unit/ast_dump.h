/*
 * The fully parenthesised dump of a DSL expression tree (ast_dump.c).
 */
#ifndef MAPOPT_TESTS_AST_DUMP_H
#define MAPOPT_TESTS_AST_DUMP_H

#include "dsl/ast.h"

/*
 * Appends to sb a fully parenthesised dump of an expression: (op a b), (? c a
 * b), (call f args...), ([] base subs...), ([:] base lo hi), (. base m
 * args...), (tuple ...), (comp elem var range), (Machine e), (* e) for unpack,
 * and _ for an omitted slice bound.
 */
void test_dump_expr(const mapopt__ast *ast, const mapopt__expr *e,
                    mapopt__strbuf *sb);

#endif
