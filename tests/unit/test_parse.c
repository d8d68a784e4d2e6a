/*
 * Unit tests for the DSL front end (src/dsl/lex.c, parse.c, print.c,
 * ast.c): the parsing cases 3-14 of the golden suite (tests/dsl/parse.test)
 * with their exact diagnostics and locations, lexical edge cases, the
 * expected-token lists of syntax errors, the precedence and disambiguation
 * rules (checked on a fully parenthesised dump of the tree), the canonical
 * form and round trip, the nesting limit, a 1 MB single-line input, and
 * out-of-memory handling at every allocation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "dsl/ast.h"

#include "ast_dump.h"
#include "failing_alloc.h"

/* ---- helpers ----------------------------------------------------------- */

/* One parse of a text, with everything it owns. */
typedef struct parsed {
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  mapopt__ast ast;
  mapopt_status st;
} parsed;

static void parse_n(parsed *p, mapopt_ctx *ctx, const char *text, size_t len) {
  p->ctx = ctx;
  assert_int_equal(mapopt_diags_new(ctx, &p->diags), MAPOPT_OK);
  mapopt__ast_init(&p->ast, ctx);
  p->ast.file = "m.map";
  p->st = mapopt__dsl_parse(&p->ast, text, len, p->diags);
}

static void parse_s(parsed *p, mapopt_ctx *ctx, const char *text) {
  parse_n(p, ctx, text, strlen(text));
}

static void parsed_free(parsed *p) {
  mapopt__ast_destroy(&p->ast);
  mapopt_diags_free(p->diags);
}

static mapopt_ctx *new_ctx(void) {
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  return ctx;
}

/* The canonical form of a parsed program (caller frees). */
static char *print_prog(const parsed *p) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, p->ctx);
  mapopt__dsl_print(&p->ast, &sb);
  mapopt__sb_putc(&sb, '\0');
  assert_false(sb.failed);
  char *s = strdup(sb.data);
  mapopt__sb_destroy(&sb);
  return s;
}

/* Parses text, expecting success; fails the test with the diagnostic. */
static void parse_ok(parsed *p, mapopt_ctx *ctx, const char *text) {
  parse_s(p, ctx, text);
  if (p->st != MAPOPT_OK) {
    char buf[512] = "";
    if (mapopt_diags_count(p->diags) > 0)
      mapopt_diag_format(mapopt_diags_get(p->diags, 0), buf, sizeof buf);
    fail_msg("parse of \"%.200s\" failed: %s", text, buf);
  }
  assert_int_equal(mapopt_diags_count(p->diags), 0);
}

/* ---- golden cases 3-11 and 13, other syntax and lexical errors ----------- */

typedef struct error_case {
  const char *src;
  size_t len; /* 0: strlen(src) */
  const char *code;
  const char *diag; /* the formatted diagnostic */
} error_case;

static const error_case error_cases[] = {
    /* golden cases (tests/dsl/parse.test) */
    {"Task main CPU", 0, "E04",
     "m.map:1:14: error: syntax error, unexpected end of file, expecting ',' "
     "or ';'"},
    {"def f(Task t): return 0;", 0, "E04",
     "m.map:1:14: error: syntax error, unexpected ':', expecting '{'"},
    {"x = 3 & 4;", 0, "E01", "m.map:1:7: error: Unrecognized character: &"},
    {"print(\"abc);", 0, "E02",
     "m.map:1:7: error: unterminated string constant"},
    {"Task size GPU;", 0, "E04",
     "m.map:1:6: error: syntax error, unexpected 'size', expecting '*' or "
     "identifier"},
    {"Layout * * * Align=128;", 0, "E04",
     "m.map:1:19: error: syntax error, unexpected '='"},
    {"Region * * FBMEM;", 0, "E04",
     "m.map:1:12: error: syntax error, unexpected 'FBMEM'"},
    {"g = Machine(GPU)\nTask * GPU;", 0, "E04",
     "m.map:2:1: error: syntax error, unexpected 'Task'"},
    {"x = 99999999999999999999;", 0, "E03",
     "m.map:1:5: error: integer literal out of range: 99999999999999999999"},
    {"x = *(1, 2);", 0, "E04",
     "m.map:1:5: error: syntax error, unexpected '*'"},
    /* lexical */
    {"x = 1;\0", 7, "E01", "m.map:1:7: error: Unrecognized character: \\x00"},
    {"x = \xC3\xA9;", 0, "E01",
     "m.map:1:5: error: Unrecognized character: \\xC3"},
    {"x = 1;\r\ny = @;\r\n", 0, "E01",
     "m.map:2:5: error: Unrecognized character: @"},
    {"x = a | b;", 0, "E01", "m.map:1:7: error: Unrecognized character: |"},
    {"x = 'a';", 0, "E01", "m.map:1:5: error: Unrecognized character: '"},
    {"x = \x7f;", 0, "E01", "m.map:1:5: error: Unrecognized character: \\x7F"},
    {"x = 1;\n\tx = \\;", 0, "E01",
     "m.map:2:6: error: Unrecognized character: \\"},
    {"print(\"ab\n\");", 0, "E02",
     "m.map:1:7: error: unterminated string constant"},
    {"x = 9223372036854775808;", 0, "E03",
     "m.map:1:5: error: integer literal out of range: 9223372036854775808"},
    {"x = 3x;", 0, "E04",
     "m.map:1:6: error: syntax error, unexpected identifier 'x'"},
    /* expected lists */
    {"Task main CPU\n", 0, "E04",
     "m.map:2:1: error: syntax error, unexpected end of file, expecting ',' "
     "or ';'"},
    {"Task main, CPU;", 0, "E04",
     "m.map:1:12: error: syntax error, unexpected 'CPU', expecting "
     "identifier"},
    {"Task *", 0, "E04",
     "m.map:1:7: error: syntax error, unexpected end of "
     "file"},
    {"Region a", 0, "E04",
     "m.map:1:9: error: syntax error, unexpected end of file, expecting '*' "
     "or identifier or integer"},
    {"Region a b GPU;", 0, "E04",
     "m.map:1:15: error: syntax error, unexpected ';'"},
    {"IndexTaskMap a 3;", 0, "E04",
     "m.map:1:16: error: syntax error, unexpected integer 3, expecting ',' or "
     "identifier"},
    {"IndexTaskMap IO f;", 0, "E04",
     "m.map:1:14: error: syntax error, unexpected 'IO'"},
    {"SingleTaskMap GPU f", 0, "E04",
     "m.map:1:20: error: syntax error, unexpected end of file, expecting "
     "';'"},
    {"InstanceLimit t GPU;", 0, "E04",
     "m.map:1:20: error: syntax error, unexpected ';', expecting integer"},
    {"Layout * * * Align==x;", 0, "E04",
     "m.map:1:21: error: syntax error, unexpected identifier 'x', expecting "
     "integer"},
    {"Layout * * * SOA Task", 0, "E04",
     "m.map:1:18: error: syntax error, unexpected 'Task'"},
    {"CollectMemory * 0 1;", 0, "E04",
     "m.map:1:19: error: syntax error, unexpected integer 1, expecting ';'"},
    {"ControlReplicate a b;", 0, "E04",
     "m.map:1:20: error: syntax error, unexpected identifier 'b', expecting "
     "',' or ';'"},
    {"foo bar", 0, "E04",
     "m.map:1:5: error: syntax error, unexpected identifier 'bar', expecting "
     "'='"},
    {"return 1;", 0, "E04",
     "m.map:1:1: error: syntax error, unexpected 'return'"},
    {"def f() {}", 0, "E04",
     "m.map:1:10: error: syntax error, unexpected '}', expecting 'print' or "
     "'return' or identifier"},
    {"def f(int a) { return a; ", 0, "E04",
     "m.map:1:26: error: syntax error, unexpected end of file, expecting "
     "'print' or 'return' or '}' or identifier"},
    {"def f(Task t) { Task * GPU; }", 0, "E04",
     "m.map:1:17: error: syntax error, unexpected 'Task', expecting 'print' "
     "or 'return' or identifier"},
    {"def f(int a b) { return a; }", 0, "E04",
     "m.map:1:13: error: syntax error, unexpected identifier 'b', expecting "
     "')' or ','"},
    {"def f(x) { return 1; }", 0, "E04",
     "m.map:1:7: error: syntax error, unexpected identifier 'x'"},
    {"def (", 0, "E04",
     "m.map:1:5: error: syntax error, unexpected '(', expecting identifier"},
    {"print(\"a\" 1);", 0, "E04",
     "m.map:1:11: error: syntax error, unexpected integer 1, expecting ')' or "
     "','"},
    {"print(1);", 0, "E04",
     "m.map:1:7: error: syntax error, unexpected integer 1, expecting "
     "string"},
    {"x = \"s\";", 0, "E04",
     "m.map:1:5: error: syntax error, unexpected string \"s\""},
    {"x = t.foo;", 0, "E04",
     "m.map:1:7: error: syntax error, unexpected identifier 'foo'"},
    {"x = tuple(v in t);", 0, "E04",
     "m.map:1:13: error: syntax error, unexpected 'in'"},
    {"x = tuple(v for 1 in t);", 0, "E04",
     "m.map:1:17: error: syntax error, unexpected integer 1, expecting "
     "identifier"},
    {"x = tuple(v for v t);", 0, "E04",
     "m.map:1:19: error: syntax error, unexpected identifier 't', expecting "
     "'in'"},
    {"x = Machine GPU;", 0, "E04",
     "m.map:1:13: error: syntax error, unexpected 'GPU', expecting '('"},
    /* disambiguation */
    {"x = ();", 0, "E04", "m.map:1:6: error: syntax error, unexpected ')'"},
    {"x = *t;", 0, "E04", "m.map:1:5: error: syntax error, unexpected '*'"},
    {"x = (1,);", 0, "E04", "m.map:1:8: error: syntax error, unexpected ')'"},
    {"x = t[*:1];", 0, "E04", "m.map:1:8: error: syntax error, unexpected ':'"},
    {"x = t[1:2:3];", 0, "E04",
     "m.map:1:10: error: syntax error, unexpected ':'"},
    {"print(\"{}\", *t);", 0, "E04",
     "m.map:1:13: error: syntax error, unexpected '*'"},
    {"x = -*t;", 0, "E04", "m.map:1:6: error: syntax error, unexpected '*'"},
    {"x = t[1][*];", 0, "E04", NULL}, /* valid: see below; NULL = parses */
};

static void test_errors(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  for (size_t i = 0; i < sizeof error_cases / sizeof error_cases[0]; i++) {
    const error_case *c = &error_cases[i];
    parsed p;
    parse_n(&p, ctx, c->src, c->len ? c->len : strlen(c->src));
    if (!c->diag) {
      if (p.st != MAPOPT_OK)
        fail_msg("case %zu (%s): expected success", i, c->src);
      parsed_free(&p);
      continue;
    }
    /* One error, then only its hints. */
    bool notes_only = true;
    for (size_t k = 1; k < mapopt_diags_count(p.diags); k++)
      notes_only &= mapopt_diags_get(p.diags, k)->severity == MAPOPT_SEV_NOTE;
    if (p.st != MAPOPT_ESYNTAX || mapopt_diags_count(p.diags) < 1 ||
        !notes_only)
      fail_msg("case %zu (%s): status %d, %zu diagnostics", i, c->src, p.st,
               mapopt_diags_count(p.diags));
    const mapopt_diag *d = mapopt_diags_get(p.diags, 0);
    char buf[512];
    mapopt_diag_format(d, buf, sizeof buf);
    if (strcmp(buf, c->diag) != 0)
      fail_msg("case %zu:\n  got  %s\n  want %s", i, buf, c->diag);
    assert_string_equal(d->code, c->code);
    assert_int_equal(d->severity, MAPOPT_SEV_ERROR);
    parsed_free(&p);
  }
  mapopt_ctx_free(ctx);
}

/* An integer literal of any length is reported with all its digits. */
static void test_long_literal(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  size_t n = 5000;
  char *src = malloc(n + 16);
  memcpy(src, "x = ", 4);
  memset(src + 4, '7', n);
  memcpy(src + 4 + n, ";", 2);
  parsed p;
  parse_s(&p, ctx, src);
  assert_int_equal(p.st, MAPOPT_ESYNTAX);
  const mapopt_diag *d = mapopt_diags_get(p.diags, 0);
  assert_string_equal(d->code, "E03");
  assert_int_equal(strlen(d->message),
                   strlen("integer literal out of range: ") + n);
  assert_memory_equal(d->message + strlen(d->message) - n, src + 4, n);
  parsed_free(&p);
  free(src);
  mapopt_ctx_free(ctx);
}

/* ---- lexing: accepted inputs ------------------------------------------ */

static void test_lexing(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  parsed p;

  /* Golden case 1: comments of both kinds; bytes >= 0x80 inside comments. */
  parse_ok(&p, ctx, "Task * GPU; # one \xC3\xA9\n// two \xFF\n#");
  assert_int_equal(p.ast.stmts.n, 1);
  const mapopt__stmt *s = p.ast.stmts.items[0];
  assert_int_equal(s->kind, ST_TASK);
  assert_int_equal(s->u.task.tasks.n, 1);
  assert_int_equal(s->u.task.tasks.items[0].kind, SEL_STAR);
  assert_int_equal(s->u.task.nkinds, 1);
  assert_int_equal(s->u.task.kinds[0], MAPOPT_PROC_GPU);
  parsed_free(&p);

  /* Golden case 2: an empty file, and one of only blanks and comments. */
  parse_ok(&p, ctx, "");
  assert_int_equal(p.ast.stmts.n, 0);
  parsed_free(&p);
  parse_ok(&p, ctx, " \t\r\n\f\v# x\n// y");
  assert_int_equal(p.ast.stmts.n, 0);
  parsed_free(&p);

  /* Golden case 12: 010 is ten; 3x is two tokens; the largest literal. */
  parse_ok(&p, ctx, "x = 010; y = 9223372036854775807; z = a/b//c\n;");
  assert_int_equal(p.ast.stmts.items[0]->u.assign.value->u.ival, 10);
  assert_int_equal(p.ast.stmts.items[1]->u.assign.value->u.ival, INT64_MAX);
  assert_int_equal(p.ast.stmts.items[2]->u.assign.value->kind, EX_BINARY);
  parsed_free(&p);

  /* Strings: any bytes but '"' and LF, including '#', NUL and >= 0x80. */
  static const char str[] = "print(\"a#b\xC3\xA9\0c // d\", 1);";
  parse_n(&p, ctx, str, sizeof str - 1);
  assert_int_equal(p.st, MAPOPT_OK);
  s = p.ast.stmts.items[0];
  assert_int_equal(s->kind, ST_PRINT);
  assert_int_equal(s->u.print.fmtlen, 12);
  assert_memory_equal(s->u.print.fmt, "a#b\xC3\xA9\0c // d", 12);
  assert_int_equal(s->u.print.args.n, 1);
  parsed_free(&p);

  /* Locations: CRLF line ends, tabs count one column, bytes in comments. */
  parse_ok(&p, ctx, "# \xC3\xA9\r\n\tTask\t*  GPU;\r\n  x = a + -b[1];");
  s = p.ast.stmts.items[0];
  assert_int_equal(s->loc.line, 2);
  assert_int_equal(s->loc.col, 2);
  assert_int_equal(s->u.task.tasks.items[0].loc.col, 7);
  s = p.ast.stmts.items[1];
  assert_int_equal(s->loc.line, 3);
  assert_int_equal(s->loc.col, 3);
  const mapopt__expr *e = s->u.assign.value;
  assert_int_equal(e->kind, EX_BINARY);
  assert_int_equal(e->loc.col, 9); /* the operator */
  assert_int_equal(e->u.binary.rhs->loc.col, 11);
  assert_int_equal(e->u.binary.rhs->u.unary.operand->loc.col, 13); /* '[' */
  parsed_free(&p);

  /* Two-character operators win over one-character ones. */
  parse_ok(&p, ctx, "x = a<=b==!c!=d>=e&&f||g<h>i;");
  parsed_free(&p);

  mapopt_ctx_free(ctx);
}

/* The locations the later stages rely on (docs/dsl.md, "How diagnostics
 * look"). */
static void test_locations(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  parsed p;
  parse_ok(&p, ctx,
           "def f(Task t, int n) {\n"
           "  return t.ipoint[n] ? g(1) : Machine(GPU);\n"
           "}\n"
           "IndexTaskMap a, b f;\n"
           "InstanceLimit t 4;\n"
           "Layout t 1 FBMEM Align>=8;\n");
  const mapopt__stmt *d = p.ast.stmts.items[0];
  assert_int_equal(d->kind, ST_DEF);
  assert_int_equal(d->u.def.name_loc.col, 5);
  assert_int_equal(d->u.def.nparams, 2);
  assert_int_equal(d->u.def.params[0].type, TYPE_TASK);
  assert_int_equal(d->u.def.params[1].type, TYPE_INT);
  assert_int_equal(d->u.def.params[1].loc.col, 19);
  assert_int_equal(d->u.def.nslots, 0);
  const mapopt__stmt *r = d->u.def.body.items[0];
  assert_int_equal(r->kind, ST_RETURN);
  assert_int_equal(r->loc.line, 2);
  assert_int_equal(r->loc.col, 3);
  const mapopt__expr *c = r->u.ret.value;
  assert_int_equal(c->kind, EX_COND);
  assert_int_equal(c->loc.col, 22); /* '?' */
  const mapopt__expr *ix = c->u.cond.cond;
  assert_int_equal(ix->kind, EX_INDEX);
  assert_int_equal(ix->loc.col, 18); /* '[' */
  assert_int_equal(ix->u.index.base->kind, EX_MEMBER);
  assert_int_equal(ix->u.index.base->loc.col, 12); /* member name */
  assert_int_equal(c->u.cond.then->kind, EX_CALL);
  assert_int_equal(c->u.cond.then->loc.col, 24);
  assert_int_equal(c->u.cond.els->kind, EX_MACHINE);
  assert_int_equal(c->u.cond.els->loc.col, 31);
  const mapopt__stmt *m = p.ast.stmts.items[1];
  assert_int_equal(m->kind, ST_INDEX_MAP);
  assert_int_equal(m->u.map.targets.n, 2);
  assert_string_equal(m->u.map.targets.items[1].name, "b");
  assert_int_equal(m->u.map.targets.items[1].loc.col, 17);
  assert_string_equal(mapopt__sym_name(&p.ast, m->u.map.fn), "f");
  assert_int_equal(m->u.map.fn_loc.col, 19);
  const mapopt__stmt *l = p.ast.stmts.items[2];
  assert_int_equal(l->u.limit.legacy.kind, FIELD_NONE);
  assert_int_equal(l->u.limit.limit, 4);
  assert_int_equal(l->u.limit.limit_loc.col, 17);
  const mapopt__stmt *y = p.ast.stmts.items[3];
  assert_int_equal(y->u.layout.region.kind, SEL_INT);
  assert_int_equal(y->u.layout.region.pos, 1);
  assert_int_equal(y->u.layout.field.kind, FIELD_MEM);
  assert_int_equal(y->u.layout.field.value, MAPOPT_MEM_FBMEM);
  assert_int_equal(y->u.layout.ncons, 1);
  assert_int_equal(y->u.layout.cons[0].kind, CONS_ALIGN);
  assert_int_equal(y->u.layout.cons[0].align_op, OP_GE);
  assert_int_equal(y->u.layout.cons[0].align, 8);
  assert_int_equal(y->u.layout.cons[0].loc.col, 18);
  /* The same identifier is one symbol. */
  assert_int_equal(d->u.def.params[0].sym,
                   c->u.cond.cond->u.index.base->u.member.base->u.name.sym);
  parsed_free(&p);
  mapopt_ctx_free(ctx);
}

/* ---- precedence and disambiguation --------------------------------------- */

typedef struct shape_case {
  const char *expr;
  const char *dump;
} shape_case;

static const shape_case shape_cases[] = {
    /* precedence */
    {"-a.size[0] * 2", "(* (- ([] (. a size) 0)) 2)"},
    {"a < b < c", "(< (< a b) c)"},
    {"1 == 2 ? 10 : 2 == 2 ? 20 : 30", "(? (== 1 2) 10 (? (== 2 2) 20 30))"},
    {"a ? b ? c : d : e", "(? a (? b c d) e)"},
    {"a || b && c == d < e + f * g",
     "(|| a (&& b (== c (< d (+ e (* f g))))))"},
    {"a * b + c < d == e && f || g",
     "(|| (&& (== (< (+ (* a b) c) d) e) f) g)"},
    {"a - b - c", "(- (- a b) c)"},
    {"a - (b - c)", "(- a (- b c))"},
    {"a / b % c * d", "(* (% (/ a b) c) d)"},
    {"!a == b", "(== (! a) b)"},
    {"- -a", "(- (- a))"},
    {"-!a[1]", "(- (! ([] a 1)))"},
    {"(a ? b : c) ? d : e", "(? (? a b c) d e)"},
    {"a != b >= c", "(!= a (>= b c))"},
    {"f(*a + b)", "(call f (* (+ a b)))"},
    {"f(*c ? a : b, x)", "(call f (* (? c a b)) x)"},
    /* primaries and postfix */
    {"(x)", "x"},
    {"((x))", "x"},
    {"(*t)", "(tuple (* t))"},
    {"(1, *t, (2))", "(tuple 1 (* t) 2)"},
    {"True || False", "(|| True False)"},
    {"GPU == FBMEM", "(== GPU FBMEM)"},
    {"f()", "(call f)"},
    {"f(1, *t)", "(call f 1 (* t))"},
    {"Machine(GPU).size", "(. (Machine GPU) size)"},
    {"m.merge(0, 1).split(1, 2)[0, *]",
     "([] (. (. m merge ( 0 1)) split ( 1 2)) 0 *)"},
    {"t.processor(g).has(SOCKMEM)", "(. (. t processor ( g)) has ( SOCKMEM))"},
    {"g.size()", "(. g size ())"},
    {"tuple(v * 2 for v in (3, 4) + (1, 1))",
     "(comp (* v 2) v (+ (tuple 3 4) (tuple 1 1)))"},
    /* subscripts: wildcard vs unpack, slices */
    {"g[*, 0]", "([] g * 0)"},
    {"g[0, *]", "([] g 0 *)"},
    {"g[*]", "([] g *)"},
    {"g[*t]", "([] g (* t))"},
    {"g[*t, *]", "([] g (* t) *)"},
    {"g[* t + 1]", "([] g (* (+ t 1)))"},
    {"g[*t.parent.processor(g)]", "([] g (* (. (. t parent) processor ( g))))"},
    {"g[2 * 3]", "([] g (* 2 3))"},
    {"t[c ? 1 : 2 : 3]", "([:] t (? c 1 2) 3)"},
    {"t[1 : c ? 2 : 3]", "([:] t 1 (? c 2 3))"},
    {"t[1:]", "([:] t 1 _)"},
    {"t[:-1]", "([:] t _ (- 1))"},
    {"t[:]", "([:] t _ _)"},
    {"t[a:b][0]", "([] ([:] t a b) 0)"},
    {"(5, 6, 7)[-1]", "([] (tuple 5 6 7) (- 1))"},
};

static void test_shapes(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  for (size_t i = 0; i < sizeof shape_cases / sizeof shape_cases[0]; i++) {
    char src[256];
    snprintf(src, sizeof src, "x = %s;", shape_cases[i].expr);
    parsed p;
    parse_ok(&p, ctx, src);
    assert_int_equal(p.ast.stmts.n, 1);
    mapopt__strbuf sb;
    mapopt__sb_init(&sb, ctx);
    test_dump_expr(&p.ast, p.ast.stmts.items[0]->u.assign.value, &sb);
    if (strcmp(sb.data, shape_cases[i].dump) != 0)
      fail_msg("%s:\n  got  %s\n  want %s", shape_cases[i].expr, sb.data,
               shape_cases[i].dump);
    mapopt__sb_destroy(&sb);
    parsed_free(&p);
  }
  mapopt_ctx_free(ctx);
}

/* ---- canonical form and round trip (golden case 14) ---------------------- */

typedef struct print_case {
  const char *src;
  const char *canon; /* NULL: src is already canonical */
} print_case;

static const print_case print_cases[] = {
    {"x=(1+2)*3-(4-5);", "x = (1 + 2) * 3 - (4 - 5);\n"},
    {"Task * GPU; # one\n// two\n", "Task * GPU;\n"},
    {"Task  *  GPU,OMP ,CPU;", "Task * GPU, OMP, CPU;\n"},
    {"Task step,leaf CPU;", "Task step, leaf CPU;\n"},
    {"Region * * GPU FBMEM,ZCMEM;", "Region * * GPU FBMEM, ZCMEM;\n"},
    {"Region relax halo GPU ZCMEM;\nRegion step 01 * VIRTUAL;\n",
     "Region relax halo GPU ZCMEM;\nRegion step 1 * VIRTUAL;\n"},
    {"Layout * * * SOA C_order;\n", NULL},
    {"Layout * * *;\n", NULL},
    {"Layout step 0 FBMEM AOS F_order Compact Exact No_Align Align == 64 "
     "Align<=128 Align!=2 Align<1 Align>2 Align>=4;",
     "Layout step 0 FBMEM AOS F_order Compact Exact No_Align Align==64 "
     "Align<=128 Align!=2 Align<1 Align>2 Align>=4;\n"},
    {"Layout t r GPU Exact;\n", NULL},
    {"InstanceLimit relax 4;\nInstanceLimit leaf GPU 2;\n"
     "InstanceLimit leaf * 0;\n",
     NULL},
    {"CollectMemory relax halo;\nCollectMemory * *;\nCollectMemory step 1;\n",
     NULL},
    {"IndexTaskMap relax spread;\nIndexTaskMap * f;\nIndexTaskMap GPU f;\n"
     "SingleTaskMap CPU g;\nSingleTaskMap OMP g;\nSingleTaskMap a, b h;\n",
     NULL},
    {"ControlReplicate main;\nControlReplicate log,sum;",
     "ControlReplicate main;\nControlReplicate log, sum;\n"},
    {"gpus = Machine(GPU);\n"
     "def spread(Task t) {\n"
     "    k = t.ipoint[0];\n"
     "    return gpus[k / gpus.size[1] % gpus.size[0], k % gpus.size[1]];\n"
     "}\n",
     NULL},
    {"def f(){return 1;}def g(int a,bool b,IPoint c,ISpace d,MSpace e,Task t)"
     "{print(\"{} {}\",a,b);x=a;return x;}",
     "def f() {\n    return 1;\n}\n"
     "def g(int a, bool b, IPoint c, ISpace d, MSpace e, Task t) {\n"
     "    print(\"{} {}\", a, b);\n    x = a;\n    return x;\n}\n"},
    {"print(\"p={} q={} r={}\", (1, 2), True, g[1, 3]);\nprint(\"\");\n", NULL},
    {"print(\"# not a comment // either\");\n", NULL},
    {"x = a - (b - c) - d;\n", NULL},
    {"x = (a - b) - c;", "x = a - b - c;\n"},
    {"x = a * (b + c) / (d % e);\n", NULL},
    {"x = (a || b) && c || d && (e || f);\n", NULL},
    {"x = (a == b) == (c != d);", "x = a == b == (c != d);\n"},
    {"x = (a < b) + c;\n", NULL},
    {"x = -(a + b) + -a.size[0] + !(a && b) + -(-a) + -(!a);\n", NULL},
    {"x = - 7 / 2;", "x = -7 / 2;\n"},
    {"x = (a ? b : c) ? d : e;\n", NULL},
    /* An else branch's conditional keeps its parentheses (the DSL mapper
     * of Legion groups ?: from the left, docs/legion.md). */
    {"x = a ? b : (c ? d : e);\n", NULL},
    {"x = a ? b : c ? d : e;", "x = a ? b : (c ? d : e);\n"},
    {"x = a ? (b ? c : d) : e;", "x = a ? b ? c : d : e;\n"},
    {"x = (a ? b : c) + 1;\n", NULL},
    {"x = a + (b ? c : d);\n", NULL},
    {"x = a || (b ? c : d);\n", NULL},
    {"x = (a + b)[0] + (-a).size + (a ? b : c).len;\n", NULL},
    {"x = (1, 2)[0] + (*t)[1] + (3, *u, 4)[:2];\n", NULL},
    {"x = f(*(a + b), *t, *g(1), *(-a), *(a ? b : c));\n", NULL},
    {"x = f(*-a, *!b[0]);", "x = f(*(-a), *(!b[0]));\n"},
    {"x = f(*a+b);", "x = f(*(a + b));\n"},
    {"x = g[*, *t, *(t + 1), 0];\n", NULL},
    /* A conditional slice bound too (the DSL mapper's upper bound ends at
     * a '?'). */
    {"x = t[(c ? 1 : 2):3];\n", NULL},
    {"x = t[c ? 1 : 2 : 3];", "x = t[(c ? 1 : 2):3];\n"},
    {"x = t[1:c ? 1 : 2];", "x = t[1:(c ? 1 : 2)];\n"},
    {"x = t[1:] + t[:2] + t[:] + t[a + 1:b * 2] + t[:-1];\n", NULL},
    {"x = tuple(v * 2 for v in (3, 4) + (1, 1));\n", NULL},
    {"x = tuple((a ? b : c) for v in t ? u : w);",
     "x = tuple(a ? b : c for v in t ? u : w);\n"},
    {"x = Machine(GPU).merge(0, 1).split(1, 2).swap(0, 1).slice(1, 0, 2)"
     ".reverse(0).balance_split(1, 2).auto_split(0, (3, 5))"
     ".greedy_split(0, (2, 2));\n",
     NULL},
    {"x = t.size + t.len + t.volume + t.ipoint + t.ispace + t.parent + "
     "t.processor(g)[0] + t.has(FBMEM);\n",
     NULL},
    {"x = CPU + GPU + OMP + IO + PY + PROC;\n", NULL},
    {"x = SYSMEM + FBMEM + ZCMEM + RDMEM + SOCKMEM + VIRTUAL;\n", NULL},
    {"x = True && !False;\n", NULL},
    {"x = 9223372036854775807;\n", NULL},
    {"x = ((((1))));", "x = 1;\n"},
    {"x = f() + g.size();\n", NULL},
};

/* print(parse(src)) is canon, reparsing it gives an equal tree, and
 * printing is idempotent. */
static void test_print(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  for (size_t i = 0; i < sizeof print_cases / sizeof print_cases[0]; i++) {
    const print_case *c = &print_cases[i];
    parsed a, b;
    parse_ok(&a, ctx, c->src);
    char *pa = print_prog(&a);
    const char *want = c->canon ? c->canon : c->src;
    if (strcmp(pa, want) != 0)
      fail_msg("case %zu:\n--- got\n%s--- want\n%s", i, pa, want);
    parse_ok(&b, ctx, pa);
    assert_true(mapopt__ast_equal(&a.ast, &b.ast));
    assert_true(mapopt__ast_equal(&b.ast, &a.ast));
    char *pb = print_prog(&b);
    assert_string_equal(pa, pb);
    free(pa);
    free(pb);
    parsed_free(&a);
    parsed_free(&b);
  }
  mapopt_ctx_free(ctx);
}

/* Golden case 14: every snippet of the parsing cases that parses round-trips
 * (the canonical text itself is pinned by print_cases above). */
static const char *const corpus[] = {
    "Task * GPU; # one\n// two\n",
    "x = 010; def z() { return 7; } y = z();",
    "def f(int a, int a) { return a; }",
    "Task * GPU, OMP, CPU; Task log CPU;",
    "Task sum GPU, CPU;",
    "Task step, leaf CPU;",
    "Region * * GPU FBMEM; Region step halo GPU ZCMEM;",
    "Region step 1 GPU ZCMEM; Region * all_cells GPU ZCMEM;",
    "Task step CPU; Region * * CPU FBMEM, SOCKMEM, SYSMEM;",
    "Region main * CPU VIRTUAL;",
    "Layout * * * SOA AOS C_order;",
    "Layout * * * AOS; Layout * * FBMEM C_order;",
    "Layout * * GPU C_order; Layout * * FBMEM AOS;",
    "Layout * * * Align==64 No_Align; Layout * * * Align==48; "
    "Layout * * * Exact;",
    "Layout step 0 * C_order; CollectMemory step 1;",
    "InstanceLimit leaf 2; InstanceLimit leaf GPU 2; InstanceLimit leaf 0;",
    "CollectMemory step *;",
    "ControlReplicate main; ControlReplicate log, sum;",
    "g = Machine(GPU);\n"
    "def bc(Task t) { i = t.ipoint[0]; return g[i / g.size[1], i % "
    "g.size[1]]; } IndexTaskMap step bc;",
    "def bad(Task t) { i = t.ipoint[0]; return g[i % g.size[0], i / "
    "g.size[0] % g.size[1]]; }",
    "def bad(Task t) { i = t.ipoint[0]; n = i * g.size[0] / t.ispace[0]; "
    "b = t.ispace[0] / g.size[0]; return g[n, i % b * g.size[1] / b]; }",
    "f = g.merge(0, 1); def bad(Task t) { i = t.ipoint[0]; return f[i]; }",
    "c = Machine(CPU); def k(Task t) { return c[0, 0]; } IndexTaskMap step k;",
    "def bad(Task t) { return (0, t.ipoint[0] % 4); }",
    "IndexTaskMap * fa; IndexTaskMap GPU fb; IndexTaskMap step fc;",
    "IndexTaskMap step f;\ndef f(Task t) { return g[0, 0]; }",
    "def bad(Task t) { return g[0, *]; }",
    "def same(Task t) { return g[*t.parent.processor(g)]; } "
    "SingleTaskMap leaf same;",
    "def h(Task t) { return g[t.parent.processor(g)[0], *]; }",
    "SingleTaskMap GPU f; SingleTaskMap * h;",
    "x = g.size; y = g.len; z = g.volume; w = g[:-1];",
    "x = Machine(OMP).size; y = Machine(OMP)[0, 0];",
    "x = g.slice(1, 3, 3); y = Machine(GPU).balance_split(1, 2).size;",
    "x = m.auto_split(0, (3, 5)).size; y = m.greedy_split(0, (3, 5)).size;",
    "x = g.split(1, 3); y = g.merge(1, 1); z = g.slice(1, 2, 4); "
    "w = g.swap(0, 2); v = g.auto_split(0, (4, 0));",
    "x = g[0, 0].has(FBMEM); y = Machine(CPU)[1, 1].has(SOCKMEM); "
    "z = g[0, *].has(FBMEM);",
    "x = -7 / 2; y = -7 % 2; z = 7 % -2; w = 7 / 0; "
    "v = 9223372036854775807 + 1;",
    "x = 3; y = -x; z = -(1, 2); b = !(1 < 2); c = !3;",
    "x = False && 1 / 0 == 0; y = True || 1 / 0 == 0;",
    "x = 1 == 2 ? 10 : 2 == 2 ? 20 : 30; y = 3 ? 1 : 2;",
    "x = (4, 6) / (2, 3); y = (1, 2) + (1, 2, 3); z = (1, 2) + 1;",
    "x = (5, 6, 7)[-1]; y = (5, 6, 7)[3];",
    "a = t[1:]; b = t[:-1]; c = t[0:3]; d = t[1:0]; e = t[5:]; f = t[0:4];",
    "x = (*(1, 2), 3); def add(int a, int b) { return a + b; } "
    "s = add(*(2, 5));",
    "x = tuple(v * 2 for v in (3, 4) + (1, 1)); "
    "y = tuple(k for k in g.size);",
    "def f(int a) { x = a; } y = f(1);",
    "def inc(int a) { a = a + 1; return a; } y = inc(1);",
    "def r(int n) { return r(n + 1); } x = r(0);",
    "def b(int n) { return n == 0 ? 0 : b(n - 1) + b(n - 1); } x = b(40);",
    "m = mgpu.merge(0, 1);",
    "g = Machine(GPU); g = Machine(CPU);",
    "print(\"p={} q={} r={}\", (1, 2), True, g[1, 3]); print(\"{} {}\", 1);",
    "x = g[1]; y = (1, 2)[*]; z = g.slice(1, 1, 2)[0, 2];",
    "def f(int a) { return a; x = 1; } def f(Task t) { return g.size(); }",
    "Task nosuch GPU; Region step ghost GPU ZCMEM; print(\"{}\", 1, 2);",
    "x = g.split(1, 2)[0, 2, 0];",
    "Task * GPU, OMP, CPU;                  # prefer GPUs\n"
    "Region * * GPU FBMEM, ZCMEM;           # on a GPU\n"
    "Region * * * SOCKMEM, SYSMEM;\n"
    "Region relax halo GPU ZCMEM;\n"
    "Layout * * * SOA C_order;\n"
    "InstanceLimit relax 4;\n"
    "CollectMemory relax halo;\n"
    "gpus = Machine(GPU);                   # (nodes, GPUs per node)\n"
    "def spread(Task t) {\n"
    "    k = t.ipoint[0];\n"
    "    return gpus[k / gpus.size[1] % gpus.size[0], k % gpus.size[1]];\n"
    "}\n"
    "IndexTaskMap relax spread;\n",
};

static void test_corpus(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
    parsed a, b;
    parse_ok(&a, ctx, corpus[i]);
    assert_true(a.ast.stmts.n > 0);
    char *pa = print_prog(&a);
    parse_ok(&b, ctx, pa);
    if (!mapopt__ast_equal(&a.ast, &b.ast))
      fail_msg("round trip of corpus %zu changed the tree:\n%s", i, pa);
    char *pb = print_prog(&b);
    assert_string_equal(pa, pb);
    free(pa);
    free(pb);
    parsed_free(&a);
    parsed_free(&b);
  }
  mapopt_ctx_free(ctx);
}

/* print_expr, and the spellings. */
static void test_print_expr(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  parsed p;
  parse_ok(&p, ctx, "x = f(*(a+b), g[*, 1]);");
  const mapopt__expr *call = p.ast.stmts.items[0]->u.assign.value;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  mapopt__dsl_print_expr(&p.ast, call, &sb);
  assert_string_equal(sb.data, "f(*(a + b), g[*, 1])");
  mapopt__sb_destroy(&sb);
  mapopt__sb_init(&sb, ctx);
  mapopt__dsl_print_expr(&p.ast, call->u.call.args.items[0], &sb);
  assert_string_equal(sb.data, "*(a + b)");
  mapopt__sb_destroy(&sb);
  parsed_free(&p);

  assert_string_equal(mapopt__op_text(OP_NE), "!=");
  assert_string_equal(mapopt__op_text(OP_NOT), "!");
  assert_string_equal(mapopt__member_text(MEM_GREEDY_SPLIT), "greedy_split");
  assert_string_equal(mapopt__member_text(MEM_PROCESSOR), "processor");
  assert_string_equal(mapopt__param_type_text(TYPE_TASK), "Task");
  assert_string_equal(mapopt__param_type_text(TYPE_MSPACE), "MSpace");
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++) {
    mapopt_proc_kind out;
    const char *name = mapopt_shape_proc_name((mapopt_proc_kind)k);
    assert_int_equal(mapopt_shape_proc_parse(name, &out), MAPOPT_OK);
    assert_int_equal(out, k);
  }
  for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++) {
    mapopt_mem_kind out;
    const char *name = mapopt_shape_mem_name((mapopt_mem_kind)k);
    assert_int_equal(mapopt_shape_mem_parse(name, &out), MAPOPT_OK);
    assert_int_equal(out, k);
  }
  mapopt_proc_kind pk;
  mapopt_mem_kind mk;
  assert_int_equal(mapopt_shape_proc_parse("gpu", &pk), MAPOPT_OK);
  assert_int_equal(pk, MAPOPT_PROC_GPU);
  assert_int_equal(mapopt_shape_proc_parse("Gpu", &pk), MAPOPT_ENOTFOUND);
  assert_int_equal(mapopt_shape_mem_parse("fbmem", &mk), MAPOPT_ENOTFOUND);
  assert_null(mapopt_shape_proc_name(MAPOPT_PROC_KIND_COUNT));
  assert_null(mapopt_shape_mem_name(MAPOPT_MEM_KIND_COUNT));
  mapopt_ctx_free(ctx);
}

/* ast_equal tells different trees apart, and ignores locations. */
static void test_equal(void **state) {
  (void)state;
  static const char *const distinct[] = {
      "x = a - b - c;",
      "x = a - (b - c);",
      "x = t[1:];",
      "x = t[:1];",
      "x = t[1];",
      "x = (1, 2);",
      "x = (*t);",
      "x = t;",
      "x = g[*];",
      "x = g[*t];",
      "x = g.size;",
      "x = g.size();",
      "x = f(1);",
      "y = f(1);",
      "print(\"a\");",
      "print(\"b\");",
      "Task * GPU;",
      "Task * CPU;",
      "Task a GPU;",
      "Task b GPU;",
      "Region * 0 * SYSMEM;",
      "Region * a * SYSMEM;",
      "Layout * * * Align==8;",
      "Layout * * * Align<=8;",
      "InstanceLimit t 2;",
      "InstanceLimit t * 2;",
      "IndexTaskMap GPU f;",
      "IndexTaskMap * f;",
      "def f(int a) { return a; }",
      "def f(bool a) { return a; }",
      "x = True;",
      "x = 1;",
  };
  mapopt_ctx *ctx = new_ctx();
  size_t n = sizeof distinct / sizeof distinct[0];
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      parsed a, b;
      parse_ok(&a, ctx, distinct[i]);
      parse_ok(&b, ctx, distinct[j]);
      if (mapopt__ast_equal(&a.ast, &b.ast) != (i == j))
        fail_msg("equal(%s, %s) != %d", distinct[i], distinct[j], i == j);
      parsed_free(&a);
      parsed_free(&b);
    }
  /* Symbols compare by text, not by id; locations are ignored. */
  parsed a, b;
  parse_ok(&a, ctx, "y = 1; x = y;");
  parse_ok(&b, ctx, "\n\n  x =\n y ;");
  assert_false(mapopt__ast_equal(&a.ast, &b.ast));
  parsed_free(&b);
  parse_ok(&b, ctx, "\n  y=1;\n  x =\n y ;");
  assert_true(mapopt__ast_equal(&a.ast, &b.ast));
  parsed_free(&a);
  parsed_free(&b);
  parse_ok(&a, ctx, "x = z;");
  parse_ok(&b, ctx, "z = 0; x = z;");
  assert_int_equal(a.ast.stmts.items[0]->u.assign.value->u.name.sym, 1);
  assert_int_equal(b.ast.stmts.items[1]->u.assign.value->u.name.sym, 0);
  parsed_free(&a);
  parsed_free(&b);
  mapopt_ctx_free(ctx);
}

/* ---- limits ------------------------------------------------------------ */

static char *repeat(const char *head, const char *unit, size_t n,
                    const char *tail, size_t *len) {
  size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
  char *s = malloc(hl + ul * n + tl + 1);
  assert_non_null(s);
  memcpy(s, head, hl);
  for (size_t i = 0; i < n; i++)
    memcpy(s + hl + i * ul, unit, ul);
  memcpy(s + hl + ul * n, tail, tl + 1);
  *len = hl + ul * n + tl;
  return s;
}

static void expect_nesting(mapopt_ctx *ctx, const char *head, const char *unit,
                           size_t n, const char *tail) {
  size_t len;
  char *src = repeat(head, unit, n, tail, &len);
  parsed p;
  parse_n(&p, ctx, src, len);
  if (p.st != MAPOPT_ESYNTAX)
    fail_msg("%s%s x %zu: status %d", head, unit, n, p.st);
  assert_int_equal(mapopt_diags_count(p.diags), 1);
  const mapopt_diag *d = mapopt_diags_get(p.diags, 0);
  assert_string_equal(d->message,
                      "expression nested too deeply (more than 200 levels)");
  assert_string_equal(d->code, "E04");
  assert_int_equal(d->line, 1);
  assert_true(d->col > 0 && (size_t)d->col <= len);
  parsed_free(&p);
  free(src);
}

static void expect_parses(mapopt_ctx *ctx, const char *head, const char *unit,
                          size_t n, const char *tail) {
  size_t len;
  char *src = repeat(head, unit, n, tail, &len);
  parsed a, b;
  parse_ok(&a, ctx, src);
  char *pa = print_prog(&a);
  parse_ok(&b, ctx, pa);
  assert_true(mapopt__ast_equal(&a.ast, &b.ast));
  char *pb = print_prog(&b);
  assert_string_equal(pa, pb);
  free(pa);
  free(pb);
  parsed_free(&a);
  parsed_free(&b);
  free(src);
}

static void test_nesting(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  /* Recursion: a million levels of each recursive construct. */
  expect_nesting(ctx, "x = ", "(", 1000000, "");
  expect_nesting(ctx, "x = ", "-", 1000000, "1;");
  expect_nesting(ctx, "x = ", "f(", 1000000, "");
  expect_nesting(ctx, "x = ", "t[", 1000000, "");
  expect_nesting(ctx, "x = ", "a ? ", 1000000, "");
  expect_nesting(ctx, "x = ", "(*", 1000000, "");
  expect_nesting(ctx, "def f() { return ", "((", 1000000, "");
  /* Tall trees built by loops: left-associative chains and postfixes. */
  expect_nesting(ctx, "x = 1", " + 1", 1000000, ";");
  expect_nesting(ctx, "x = a", "[0]", 1000000, ";");
  expect_nesting(ctx, "x = a", ".size", 1000000, ";");
  expect_nesting(ctx, "x = 1", " || 1 && 1", 1000000, ";");
  /* Exactly at the limit: accepted, printed, reparsed and compared (the
   * canonical form of - - 1 is -(-1), which must fit too); one more level
   * fails. */
  static const char *const wraps[][2] = {
      {"(", ")"}, {"f(", ")"}, {"t[", "]"}, {"-(", ")"}, {"Machine(", ")"}};
  for (int extra = 0; extra <= 1; extra++) {
    size_t k = 199 + (size_t)extra;
    void (*check)(mapopt_ctx *, const char *, const char *, size_t,
                  const char *) = extra ? expect_nesting : expect_parses;
    for (size_t w = 0; w < sizeof wraps / sizeof wraps[0]; w++) {
      size_t len;
      char *open = repeat("x = ", wraps[w][0], k, "1", &len);
      char *closed = repeat(open, wraps[w][1], k, ";", &len);
      check(ctx, closed, "", 0, "");
      free(open);
      free(closed);
    }
    check(ctx, "x = 1", " + 1", k, ";");
    check(ctx, "x = 1", " - 1", k, ";");
    check(ctx, "x = a", "[0]", k, ";");
    check(ctx, "x = a", ".size", k, ";");
    check(ctx, "x = ", "-", k, "1;");
    check(ctx, "x = ", "!-", k / 2, extra ? "-1;" : "1;");
    check(ctx, "x = ", "a ? b : ", k, "c;");
  }
  mapopt_ctx_free(ctx);
}

/* A 1 MB program on one line parses whole, and not in quadratic time. The
 * CPU-time bound is a hang detector, not a speed target: the parse takes
 * 0.35 s in the sanitized debug build on a loaded machine, a step
 * quadratic in the line's length (5 * 10^11 steps here) takes minutes, so
 * 10 s separates the two with a wide margin either way. The parser's
 * rate is measured by bench/bench_dsl. */
static void test_big_line(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  static const char unit[] =
      "x = f(a, *b)[1:2] * 3 + g.size[0] - (1, 2)[c ? 0 : 1]; "
      "Region * r GPU FBMEM, ZCMEM; ";
  size_t n = (1 << 20) / (sizeof unit - 1) + 1;
  size_t len;
  char *src = repeat("", unit, n, "", &len);
  assert_true(len >= (1 << 20));
  clock_t t0 = clock();
  parsed p;
  parse_ok(&p, ctx, src);
  assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 10.0);
  assert_int_equal(p.ast.stmts.n, 2 * (int)n);
  parsed_free(&p);
  free(src);

  /* One flat 1 MB expression: a tuple and an argument list. */
  src = repeat("x = (0", ", 1", 1 << 18, ");", &len);
  parse_ok(&p, ctx, src);
  assert_int_equal(p.ast.stmts.items[0]->u.assign.value->u.list.n,
                   (1 << 18) + 1);
  parsed_free(&p);
  free(src);
  src = repeat("x = g[0", ", *", 1 << 18, "];", &len);
  parse_ok(&p, ctx, src);
  parsed_free(&p);
  free(src);
  /* A 1 MB identifier and a 1 MB string. */
  src = repeat("x = ", "a", 1 << 20, ";", &len);
  parse_ok(&p, ctx, src);
  parsed_free(&p);
  free(src);
  src = repeat("print(\"", "{}", 1 << 19, "\");", &len);
  parse_ok(&p, ctx, src);
  assert_int_equal(p.ast.stmts.items[0]->u.print.fmtlen, 1 << 20);
  parsed_free(&p);
  free(src);
  mapopt_ctx_free(ctx);
}

/* ---- out of memory ----------------------------------------------------- */

/* Fails each allocation in turn until the parse completes: every failure
 * is a clean MAPOPT_ENOMEM (or the expected error) and frees everything. */
static void oom_loop(const char *src, mapopt_status final, int ndiags) {
  failing_alloc f = {.left = -1, .sticky = true};
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(failing_realloc, &f, &ctx), MAPOPT_OK);
  long base = f.live;
  for (long n = 1;; n++) {
    mapopt_diags *diags;
    f.left = -1;
    assert_int_equal(mapopt_diags_new(ctx, &diags), MAPOPT_OK);
    mapopt__ast ast;
    mapopt__ast_init(&ast, ctx);
    ast.file = "m.map";
    f.left = n - 1;
    mapopt_status st = mapopt__dsl_parse(&ast, src, strlen(src), diags);
    f.left = -1;
    if (st == MAPOPT_ENOMEM) {
      assert_int_equal(mapopt_diags_count(diags), 0);
    } else {
      assert_int_equal(st, final);
      assert_int_equal((int)mapopt_diags_count(diags), ndiags);
    }
    if (st == MAPOPT_OK) {
      /* The printer reports failure through the buffer, never crashes. */
      for (long m = 1;; m++) {
        mapopt__strbuf sb;
        mapopt__sb_init(&sb, ctx);
        f.left = m - 1;
        mapopt__dsl_print(&ast, &sb);
        f.left = -1;
        bool failed = sb.failed;
        mapopt__sb_destroy(&sb);
        if (!failed)
          break;
      }
    }
    mapopt__ast_destroy(&ast);
    mapopt_diags_free(diags);
    assert_int_equal(f.live, base);
    if (st != MAPOPT_ENOMEM)
      break;
    assert_true(n < 100000);
  }
  mapopt_ctx_free(ctx);
}

static void test_oom(void **state) {
  (void)state;
  mapopt_ctx *ctx = new_ctx();
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  for (int i = 0; i < 10; i++)
    mapopt__sb_printf(
        &sb,
        "Task t%d, u%d GPU, CPU;\n"
        "Region * r%d GPU FBMEM, ZCMEM;\n"
        "Layout t%d %d * SOA C_order Align==64;\n"
        "InstanceLimit t%d %d;\n"
        "CollectMemory t%d *;\n"
        "g%d = Machine(GPU);\n"
        "def f%d(Task t, int n) {\n"
        "    k = t.ipoint[0] + n;\n"
        "    print(\"{}\", k);\n"
        "    return g%d[k / g%d.size[1] %% g%d.size[0], *];\n"
        "}\n"
        "IndexTaskMap t%d, u%d f%d;\n"
        "SingleTaskMap * f%d;\n"
        "ControlReplicate m%d;\n"
        "x%d = tuple(v * 2 for v in (1, *(2, 3))[1:]) + (c ? 1 : -2);\n",
        i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i);
  assert_false(sb.failed);
  oom_loop(sb.data, MAPOPT_OK, 0);
  mapopt__sb_destroy(&sb);
  mapopt_ctx_free(ctx);
  /* The error paths allocate too (the message, the diagnostic). */
  oom_loop("Task main CPU", MAPOPT_ESYNTAX, 1);
  oom_loop("x = 1;\ny = (a, b) + 99999999999999999999;", MAPOPT_ESYNTAX, 1);
  oom_loop("x = 3 & 4;", MAPOPT_ESYNTAX, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),   cmocka_unit_test(test_long_literal),
      cmocka_unit_test(test_lexing),   cmocka_unit_test(test_locations),
      cmocka_unit_test(test_shapes),   cmocka_unit_test(test_print),
      cmocka_unit_test(test_corpus),   cmocka_unit_test(test_print_expr),
      cmocka_unit_test(test_equal),    cmocka_unit_test(test_nesting),
      cmocka_unit_test(test_big_line), cmocka_unit_test(test_oom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
