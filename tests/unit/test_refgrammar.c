/*
 * The canonical form against the grammar of the DSL mapper of Legion
 * (docs/legion.md): mapopt fmt's output must be read by that grammar as
 * the same tree mapopt reads.
 *
 * The DSL mapper's grammar is a yacc grammar with one ambiguous rule for
 * all expressions, disambiguated by precedence and associativity
 * declarations, from loosest to tightest: `?` `:` (left), `||`, `&&`,
 * `==` `!=`, `<` `>` `<=` `>=`, `+` `-`, `*` `/` `%` (all left), then the
 * prefix minus, then `[` `(` `.`. Its prefix `*` (unpacking) is a rule
 * of `*`'s precedence. ref_expr() below is a precedence-climbing parser
 * that resolves every shift/reduce choice as those declarations do:
 *   - a binary operator of level p reduces what is on its left at level
 *     p or tighter, and its right operand takes only tighter operators;
 *   - `c ? a : b` is the loosest: the middle runs to its `:`, the else
 *     branch takes the operators tighter than `?` only (so a chain of
 *     conditionals groups from the left);
 *   - prefix minus takes only postfix operators, and so does prefix `*`
 *     (no binary operator is tighter than `*`'s level);
 *   - in a slice `t[a:b]`, the lower bound runs to the `:`, the upper one
 *     takes the operators tighter than `:` only.
 * Its trees are written in test_dump_expr's notation, and compared with
 * the dump of mapopt's tree of the same text. The corpus: every expression
 * of every mapper under mappers/, in canonical form, and random
 * expressions (of a fixed seed) written with random parentheses, which
 * mapopt parses and prints before both read the printed text.
 */
#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dsl/ast.h"

#include "ast_dump.h"

/* ---- the DSL mapper's grammar, for expressions ---------------------------
 */

typedef struct ref {
  const char *p;   /* the next character */
  char tok[64];    /* the current token's text */
  bool ident, num; /* its kind: identifier or keyword, number, else punct */
  mapopt_ctx *ctx;
  bool failed;
} ref;

static void ref_next(ref *r) {
  while (isspace((unsigned char)*r->p))
    r->p++;
  const char *s = r->p;
  size_t n = 0;
  r->ident = r->num = false;
  if (isalpha((unsigned char)*s) || *s == '_') {
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
      n++;
    r->ident = true;
  } else if (isdigit((unsigned char)*s)) {
    while (isdigit((unsigned char)s[n]))
      n++;
    r->num = true;
  } else if (*s && strchr("=!<>", *s) && s[1] == '=') {
    n = 2;
  } else if ((*s == '&' && s[1] == '&') || (*s == '|' && s[1] == '|')) {
    n = 2;
  } else if (*s) {
    n = 1;
  }
  assert_true(n < sizeof r->tok);
  memcpy(r->tok, s, n);
  r->tok[n] = '\0';
  r->p += n;
}

static bool is(const ref *r, const char *t) {
  return strcmp(r->tok, t) == 0;
}

static void expect(ref *r, const char *t) {
  if (!is(r, t)) {
    r->failed = true;
    return;
  }
  ref_next(r);
}

/* Binary operators and their levels (3: ||, the loosest). */
static int binary_level(const char *t) {
  static const struct {
    const char *op;
    int level;
  } ops[] = {{"||", 3}, {"&&", 4}, {"==", 5}, {"!=", 5}, {"<", 6},
             {">", 6},  {"<=", 6}, {">=", 6}, {"+", 7},  {"-", 7},
             {"*", 8},  {"/", 8},  {"%", 8}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(t, ops[i].op) == 0)
      return ops[i].level;
  return 0;
}

enum { COND = 2, PREFIX = 9, POSTFIX = 10 };

static char *ref_expr(ref *r, int min);

/* The dump of the items up to close, each in front of a space. */
static void ref_items(ref *r, const char *close, mapopt__strbuf *sb) {
  if (is(r, close)) {
    ref_next(r);
    return;
  }
  for (;;) {
    char *e = ref_expr(r, 0);
    mapopt__sb_printf(sb, " %s", e);
    free(e);
    if (!is(r, ","))
      break;
    ref_next(r);
  }
  expect(r, close);
}

static char *take(mapopt__strbuf *sb) {
  mapopt__sb_putc(sb, '\0');
  assert_false(sb->failed);
  char *s = strdup(sb->data);
  mapopt__sb_destroy(sb);
  return s;
}

/* Whether the dump s is "(* X)", one unpacked expression (not the
 * product "(* X Y)"). */
static bool unpack_only(const char *s) {
  if (strncmp(s, "(* ", 3) != 0)
    return false;
  int depth = 0;
  const char *p = s + 3;
  do {
    depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
    p++;
  } while (*p && (depth > 0 || (*p != ' ' && *p != ')')));
  return *p == ')' && p[1] == '\0';
}

/* A primary expression or a prefix operator's. */
static char *ref_prefix(ref *r) {
  mapopt_ctx *ctx = r->ctx;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  if (is(r, "-") || is(r, "*")) {
    bool unpack = is(r, "*");
    ref_next(r);
    if (unpack && (is(r, ",") || is(r, "]") || is(r, ")"))) {
      mapopt__sb_putc(&sb, '*'); /* the wildcard */
      return take(&sb);
    }
    char *e = ref_expr(r, unpack ? PREFIX : POSTFIX);
    mapopt__sb_printf(&sb, "(%s %s)", unpack ? "*" : "-", e);
    free(e);
  } else if (is(r, "(")) {
    ref_next(r);
    bool star = is(r, "*");
    char *first = ref_expr(r, 0);
    if (is(r, ",") || (star && unpack_only(first))) {
      /* A tuple; (*t) alone is one in mapopt's tree too. */
      mapopt__sb_printf(&sb, "(tuple %s", first);
      if (is(r, ",")) {
        ref_next(r);
        ref_items(r, ")", &sb);
      } else {
        expect(r, ")");
      }
      mapopt__sb_putc(&sb, ')');
    } else {
      expect(r, ")");
      mapopt__sb_puts(&sb, first);
    }
    free(first);
  } else if (is(r, "tuple")) {
    ref_next(r);
    expect(r, "(");
    char *elem = ref_expr(r, 0);
    expect(r, "for");
    char var[64];
    snprintf(var, sizeof var, "%s", r->tok);
    ref_next(r);
    expect(r, "in");
    char *range = ref_expr(r, 0);
    expect(r, ")");
    mapopt__sb_printf(&sb, "(comp %s %s %s)", elem, var, range);
    free(elem);
    free(range);
  } else if (is(r, "Machine")) {
    ref_next(r);
    expect(r, "(");
    char *k = ref_expr(r, 0);
    expect(r, ")");
    mapopt__sb_printf(&sb, "(Machine %s)", k);
    free(k);
  } else if (r->ident || r->num) {
    char name[64];
    snprintf(name, sizeof name, "%s", r->tok);
    bool ident = r->ident;
    ref_next(r);
    if (ident && is(r, "(")) {
      ref_next(r);
      mapopt__sb_printf(&sb, "(call %s", name);
      ref_items(r, ")", &sb);
      mapopt__sb_putc(&sb, ')');
    } else {
      mapopt__sb_puts(&sb, name);
    }
  } else {
    r->failed = true;
    mapopt__sb_puts(&sb, "?");
  }
  return take(&sb);
}

/* A subscript after base: a slice or an index list. */
static char *ref_subscript(ref *r, char *base) {
  mapopt_ctx *ctx = r->ctx;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  char *lo = NULL;
  if (!is(r, ":"))
    lo = ref_expr(r, 0);
  if (is(r, ":")) {
    ref_next(r);
    char *hi = is(r, "]") ? NULL : ref_expr(r, COND + 1);
    mapopt__sb_printf(&sb, "([:] %s %s %s)", base, lo ? lo : "_",
                      hi ? hi : "_");
    free(hi);
    expect(r, "]");
  } else {
    mapopt__sb_printf(&sb, "([] %s %s", base, lo);
    if (is(r, ",")) {
      ref_next(r);
      ref_items(r, "]", &sb);
    } else {
      expect(r, "]");
    }
    mapopt__sb_putc(&sb, ')');
  }
  free(lo);
  free(base);
  return take(&sb);
}

static char *ref_expr(ref *r, int min) {
  mapopt_ctx *ctx = r->ctx;
  char *left = ref_prefix(r);
  while (!r->failed) {
    mapopt__strbuf sb;
    int level = binary_level(r->tok);
    if (level && level >= min) {
      char op[sizeof r->tok];
      snprintf(op, sizeof op, "%s", r->tok);
      ref_next(r);
      char *right = ref_expr(r, level + 1);
      mapopt__sb_init(&sb, ctx);
      mapopt__sb_printf(&sb, "(%s %s %s)", op, left, right);
      free(right);
    } else if (is(r, "?") && COND >= min) {
      ref_next(r);
      char *then = ref_expr(r, 0);
      expect(r, ":");
      char *els = ref_expr(r, COND + 1);
      mapopt__sb_init(&sb, ctx);
      mapopt__sb_printf(&sb, "(? %s %s %s)", left, then, els);
      free(then);
      free(els);
    } else if (is(r, "[")) {
      ref_next(r);
      left = ref_subscript(r, left);
      continue;
    } else if (is(r, ".")) {
      ref_next(r);
      mapopt__sb_init(&sb, ctx);
      mapopt__sb_printf(&sb, "(. %s %s", left, r->tok);
      ref_next(r);
      if (is(r, "(")) {
        ref_next(r);
        mapopt__sb_puts(&sb, " (");
        ref_items(r, ")", &sb);
        mapopt__sb_putc(&sb, ')');
      }
      mapopt__sb_putc(&sb, ')');
    } else {
      break;
    }
    free(left);
    left = take(&sb);
  }
  return left;
}

/* The dump of text as the DSL mapper's grammar reads it (NULL when it
 * does not read the whole text as one expression). */
static char *ref_parse(mapopt_ctx *ctx, const char *text) {
  ref r = {.p = text, .ctx = ctx};
  ref_next(&r);
  char *e = ref_expr(&r, 0);
  if (r.failed || r.tok[0]) {
    free(e);
    return NULL;
  }
  return e;
}

/* ---- the comparison ------------------------------------------------------
 */

static mapopt_ctx *ctx;
static int compared;

/* Prints e in canonical form, reads the text with both grammars and
 * compares the trees. */
static void compare(const mapopt__ast *ast, const mapopt__expr *e) {
  mapopt__strbuf text, mine;
  mapopt__sb_init(&text, ctx);
  mapopt__sb_init(&mine, ctx);
  mapopt__dsl_print_expr(ast, e, &text);
  test_dump_expr(ast, e, &mine);
  char *t = take(&text), *m = take(&mine);
  char *theirs = ref_parse(ctx, t);
  if (!theirs || strcmp(theirs, m) != 0)
    fail_msg("the DSL mapper reads %s\n  as %s\n  mapopt's tree is %s", t,
             theirs ? theirs : "(a syntax error)", m);
  compared++;
  free(t);
  free(m);
  free(theirs);
}

static void compare_stmts(const mapopt__ast *ast, const mapopt__stmt_list *l) {
  for (int i = 0; i < l->n; i++) {
    const mapopt__stmt *s = l->items[i];
    if (s->kind == ST_DEF)
      compare_stmts(ast, &s->u.def.body);
    else if (s->kind == ST_ASSIGN)
      compare(ast, s->u.assign.value);
    else if (s->kind == ST_RETURN)
      compare(ast, s->u.ret.value);
    else if (s->kind == ST_PRINT)
      for (int k = 0; k < s->u.print.args.n; k++)
        compare(ast, s->u.print.args.items[k]);
  }
}

/* Parses text with mapopt, prints it, parses the canonical text again and
 * compares each of its expressions; false when text does not parse. */
static bool compare_text(const char *text) {
  mapopt_diags *diags;
  assert_int_equal(mapopt_diags_new(ctx, &diags), MAPOPT_OK);
  mapopt__ast a, b;
  mapopt__ast_init(&a, ctx);
  mapopt__ast_init(&b, ctx);
  a.file = b.file = "m.map";
  bool ok = mapopt__dsl_parse(&a, text, strlen(text), diags) == MAPOPT_OK;
  if (ok) {
    mapopt__strbuf sb;
    mapopt__sb_init(&sb, ctx);
    mapopt__dsl_print(&a, &sb);
    char *canonical = take(&sb);
    assert_int_equal(mapopt__dsl_parse(&b, canonical, strlen(canonical), diags),
                     MAPOPT_OK);
    compare_stmts(&b, &b.stmts);
    free(canonical);
  }
  mapopt__ast_destroy(&a);
  mapopt__ast_destroy(&b);
  mapopt_diags_free(diags);
  return ok;
}

static void compare_dir(const char *dir, int *files) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.')
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    size_t n = strlen(de->d_name);
    if (n > 4 && strcmp(de->d_name + n - 4, ".map") == 0) {
      FILE *f = fopen(path, "rb");
      assert_non_null(f);
      static char buf[1 << 20];
      size_t len = fread(buf, 1, sizeof buf - 1, f);
      fclose(f);
      buf[len] = '\0';
      assert_true(compare_text(buf));
      (*files)++;
    } else if (!strchr(de->d_name, '.')) {
      compare_dir(path, files);
    }
  }
  closedir(d);
}

static void test_mappers(void **state) {
  (void)state;
  int files = 0;
  compared = 0;
  compare_dir(MAPOPT_SOURCE_DIR "/mappers", &files);
  print_message("%d mappers, %d expressions read alike\n", files, compared);
  assert_true(files >= 30 && compared >= 200);
}

/* The reader itself on the forms where the two grammars differ, so that
 * a reader that agreed with mapopt everywhere could not pass. */
static void test_reader(void **state) {
  (void)state;
  static const struct {
    const char *text, *tree;
  } cases[] = {
      {"a ? b : c ? d : e", "(? (? a b c) d e)"},
      {"a ? b : (c ? d : e)", "(? a b (? c d e))"},
      {"a ? b ? c : d : e", "(? a (? b c d) e)"},
      {"a || b ? c : d && e", "(? (|| a b) c (&& d e))"},
      {"f(*t.ipoint % m.size)", "(call f (% (* (. t ipoint)) (. m size)))"},
      {"f(*(t.ipoint % m.size))", "(call f (* (% (. t ipoint) (. m size))))"},
      {"-a.b[0] * 2", "(* (- ([] (. a b) 0)) 2)"},
      {"a - b - c", "(- (- a b) c)"},
      {"t[c ? 1 : 2:3]", "([:] t (? c 1 2) 3)"},
      {"m[*, 0]", "([] m * 0)"},
      {"(1, *t)", "(tuple 1 (* t))"},
      {"tuple(x * 2 for x in (1, 2))", "(comp (* x 2) x (tuple 1 2))"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *t = ref_parse(ctx, cases[i].text);
    assert_non_null(t);
    assert_string_equal(t, cases[i].tree);
    free(t);
  }
  /* The upper bound of a slice ends at a '?'. */
  assert_null(ref_parse(ctx, "t[1:c ? 1 : 2]"));
}

/* ---- random expressions -------------------------------------------------
 */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static int below(int n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (int)(rng % (uint64_t)n);
}

/* A random expression of mapopt's grammar, depth at most d, sometimes in
 * parentheses that it does not need. */
static void gen(mapopt__strbuf *sb, int d) {
  static const char *const ops[] = {"||", "&&", "==", "!=", "<", "<=", ">",
                                    ">=", "+",  "-",  "*",  "/", "%"};
  static const char *const members[] = {"size", "len", "volume", "ipoint"};
  bool paren = below(4) == 0;
  if (paren)
    mapopt__sb_putc(sb, '(');
  int k = d <= 0 ? below(2) : below(12);
  switch (k) {
  case 0:
    mapopt__sb_printf(sb, "%d", below(10));
    break;
  case 1:
    mapopt__sb_printf(sb, "%c", "abcxyz"[below(6)]);
    break;
  case 2:
  case 3:
  case 4:
    gen(sb, d - 1);
    mapopt__sb_printf(sb, " %s ", ops[below(13)]);
    gen(sb, d - 1);
    break;
  case 5:
  case 6:
    gen(sb, d - 1);
    mapopt__sb_puts(sb, " ? ");
    gen(sb, d - 1);
    mapopt__sb_puts(sb, " : ");
    gen(sb, d - 1);
    break;
  case 7:
    mapopt__sb_puts(sb, "-");
    gen(sb, d - 1);
    break;
  case 8:
    mapopt__sb_puts(sb, "f(*");
    gen(sb, d - 1);
    mapopt__sb_puts(sb, ", ");
    gen(sb, d - 1);
    mapopt__sb_putc(sb, ')');
    break;
  case 9:
    mapopt__sb_puts(sb, "t[");
    if (below(2))
      gen(sb, d - 1);
    mapopt__sb_putc(sb, ':');
    if (below(2))
      gen(sb, d - 1);
    mapopt__sb_putc(sb, ']');
    break;
  case 10:
    mapopt__sb_puts(sb, "m[*, ");
    gen(sb, d - 1);
    mapopt__sb_puts(sb, "].");
    mapopt__sb_puts(sb, members[below(4)]);
    break;
  default:
    mapopt__sb_puts(sb, "tuple(");
    gen(sb, d - 1);
    mapopt__sb_puts(sb, " for v in (");
    gen(sb, d - 1);
    mapopt__sb_puts(sb, ", *");
    gen(sb, d - 1);
    mapopt__sb_puts(sb, "))");
    break;
  }
  if (paren)
    mapopt__sb_putc(sb, ')');
}

static void test_random(void **state) {
  (void)state;
  int parsed = 0;
  compared = 0;
  for (int i = 0; i < 20000; i++) {
    mapopt__strbuf sb;
    mapopt__sb_init(&sb, ctx);
    mapopt__sb_puts(&sb, "x = ");
    gen(&sb, 1 + below(5));
    mapopt__sb_puts(&sb, ";\n");
    char *text = take(&sb);
    parsed += compare_text(text);
    free(text);
  }
  print_message("%d random expressions parsed, %d read alike\n", parsed,
                compared);
  assert_true(parsed > 19000 && compared == parsed);
}

static int setup(void **state) {
  (void)state;
  return mapopt_ctx_new(NULL, NULL, &ctx) == MAPOPT_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  mapopt_ctx_free(ctx);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader),
      cmocka_unit_test(test_mappers),
      cmocka_unit_test(test_random),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
