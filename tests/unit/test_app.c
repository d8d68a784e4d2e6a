/*
 * Unit tests of the application model (src/app): the expression language,
 * loading `mapopt-app/1` JSON with exact located diagnostics, instantiation
 * (op counts, pieces, byte defaults, timing flags, sizes and overrides,
 * fenced-mode fences, inner bodies in depth-first order, futures), refusal
 * of absurd sizes, the to_json round trip, task info, clean
 * out-of-memory failures at every allocation, derived parameters and the
 * log's settings line, and the limit on an op's requirements.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app/app.h"
#include "mapopt/app.h"
#include "mapopt/sim.h"

#include "failing_alloc.h"
#include "rejects.h"

/* ---- helpers ----------------------------------------------------------------
 */

static char *slurp(const char *name) {
  /* apps/ sits two folders above this file (tests/unit/). */
  char path[4096];
  const char *f = __FILE__;
  const char *end = strstr(f, "tests/unit/test_app.c");
  assert_non_null(end);
  snprintf(path, sizeof path, "%.*sapps/%s", (int)(end - f), f, name);
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
  buf[n] = '\0';
  fclose(fp);
  return buf;
}

typedef struct fixture {
  mapopt_ctx *ctx;
  mapopt_diags *diags;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &f->ctx), MAPOPT_OK);
  assert_int_equal(mapopt_diags_new(f->ctx, &f->diags), MAPOPT_OK);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  mapopt_diags_free(f->diags);
  mapopt_ctx_free(f->ctx);
  free(f);
  return 0;
}

/* The first diagnostic, formatted. */
static const char *first_diag(fixture *f) {
  static char buf[1024];
  buf[0] = '\0';
  if (mapopt_diags_count(f->diags))
    mapopt_diag_format(mapopt_diags_get(f->diags, 0), buf, sizeof buf);
  return buf;
}

static void dump_diags(fixture *f) {
  for (size_t i = 0; i < mapopt_diags_count(f->diags); i++) {
    char buf[1024];
    mapopt_diag_format(mapopt_diags_get(f->diags, i), buf, sizeof buf);
    fprintf(stderr, "  %s\n", buf);
  }
}

static mapopt_app *load(fixture *f, const char *file, const char *text) {
  mapopt_app *app = NULL;
  mapopt_diags_clear(f->diags);
  mapopt_status st =
      mapopt_app_load_json(f->ctx, file, text, strlen(text), f->diags, &app);
  if (st != MAPOPT_OK)
    dump_diags(f);
  assert_int_equal(st, MAPOPT_OK);
  return app;
}

static mapopt_app *load_file(fixture *f, const char *name) {
  char *text = slurp(name);
  mapopt_app *app = load(f, name, text);
  free(text);
  return app;
}

static mapopt_app_run *inst(fixture *f, const mapopt_app *app,
                            const char *spec) {
  mapopt_app_options o = {spec, -1, -1, 0, 0};
  mapopt_app_run *run = NULL;
  mapopt_diags_clear(f->diags);
  mapopt_status st = mapopt_app_instantiate(app, &o, NULL, f->diags, &run);
  if (st != MAPOPT_OK)
    dump_diags(f);
  assert_int_equal(st, MAPOPT_OK);
  return run;
}

/* Loads text expecting failure; returns the first diagnostic. */
static const char *load_err(fixture *f, const char *text) {
  mapopt_app *app = NULL;
  mapopt_diags_clear(f->diags);
  mapopt_status st = mapopt_app_load_json(f->ctx, "m.json", text, strlen(text),
                                          f->diags, &app);
  if (st == MAPOPT_OK)
    mapopt_app_free(app);
  assert_int_equal(st, MAPOPT_EINVAL);
  assert_null(app == NULL ? NULL : "loaded");
  return first_diag(f);
}

/* Instantiates expecting failure; returns the first diagnostic. */
static const char *inst_err(fixture *f, const mapopt_app *app,
                            const mapopt_app_options *o) {
  mapopt_app_run *run = NULL;
  mapopt_diags_clear(f->diags);
  mapopt_status st = mapopt_app_instantiate(app, o, NULL, f->diags, &run);
  if (st == MAPOPT_OK)
    mapopt_app_run_free(run);
  assert_int_equal(st, MAPOPT_EINVAL);
  assert_int_equal(mapopt_diags_errors(f->diags), 1);
  return first_diag(f);
}

/* text with the first occurrence of from replaced by to (static buffer). */
static const char *edit(const char *text, const char *from, const char *to) {
  static char buf[1 << 15];
  const char *p = strstr(text, from);
  assert_non_null(p);
  snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - text), text, to,
           p + strlen(from));
  return buf;
}

/* ---- expressions
 * --------------------------------------------------------------- */

typedef struct symtab {
  const char *names[16];
  int n;
} symtab;

static int32_t test_intern(void *ud, const char *s, size_t n) {
  symtab *t = ud;
  for (int i = 0; i < t->n; i++)
    if (strlen(t->names[i]) == n && memcmp(t->names[i], s, n) == 0)
      return i;
  assert_true(t->n < 16);
  t->names[t->n] = strndup(s, n);
  return t->n++;
}

typedef struct ex_case {
  const char *text;
  int64_t value;
  mapopt__app_eval_err err; /* expected error (EVAL_OK: value) */
} ex_case;

static void test_expr_eval(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt__arena a;
  mapopt__arena_init(&a, ctx);
  symtab t = {{"n", "T", "x"}, 3};
  int32_t slot_of[16];
  for (int i = 0; i < 16; i++)
    slot_of[i] = i < 3 ? i : -1;
  int64_t params[3] = {100, 4, -7};
  int64_t elems[2] = {25, 3}, fbytes[2] = {16, 8};
  static const ex_case cases[] = {
      {"1 + 2 * 3", 7, 0},
      {"(1 + 2) * 3", 9, 0},
      {"n / T", 25, 0},
      {"-7 / 2", -3, 0}, /* C truncation */
      {"x % 3", -1, 0},  /* C remainder */
      {"7 % -3", 1, 0},
      {"10 - 3 - 2", 5, 0}, /* left associative */
      {"100 / 10 / 5", 2, 0},
      {"1 < 2 == 1", 1, 0}, /* < binds tighter than == */
      {"1 + 1 == 2 && 3 > 2", 1, 0},
      {"0 || 0 && 1", 0, 0},
      {"!0 + !5", 1, 0},
      {"- -3", 3, 0},
      {"-x", 7, 0},
      {"n > 50 ? 1 : 2", 1, 0},
      {"0 ? 1 : 0 ? 2 : 3", 3, 0}, /* right associative */
      {"min(3, n, -2)", -2, 0},
      {"max(x, 2)", 2, 0},
      {"cdiv(7, 2)", 4, 0},
      {"cdiv(-7, 2)", -3, 0},
      {"cdiv(8, 2)", 4, 0},
      {"gcd(12, -18)", 6, 0},
      {"lcm(4, 6)", 12, 0},
      {"lcm(0, 6)", 0, 0},
      {"elems(0) * fbytes(0) + elems(1)", 403, 0},
      {"T > 4 && n / (T - 4)", 0, 0}, /* short circuit */
      {"T == 4 || 1 / 0", 1, 0},
      {"c0 ? 1 / 0 : 5", 5, 0}, /* the untaken branch is not evaluated */
      {"9223372036854775807 + 1", 0, EVAL_OVERFLOW},
      {"-9223372036854775807 - 2", 0, EVAL_OVERFLOW},
      {"3037000500 * 3037000500", 0, EVAL_OVERFLOW},
      {"n / (T - 4)", 0, EVAL_DIVZERO},
      {"n % 0", 0, EVAL_DIVZERO},
      {"cdiv(1, 0)", 0, EVAL_DIVZERO},
      {"lcm(9223372036854775807, 2)", 0, EVAL_OVERFLOW},
      {"elems(2)", 0, EVAL_NOREQ},
      {"zz", 0, EVAL_UNDEFINED},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const mapopt__app_ex_node *root;
    uint32_t off;
    const char *msg;
    bool nm;
    if (!mapopt__app_expr_parse(&a, test_intern, &t, cases[i].text,
                                strlen(cases[i].text), &root, &off, &msg, &nm))
      fail_msg("%s: %s", cases[i].text, msg);
    mapopt__app_expr e = {.text = cases[i].text, .root = root};
    mapopt__app_env env = {.params = params, .slot_of = slot_of, .nsyms = 16};
    env.elems = elems;
    env.fbytes = fbytes;
    env.nreqs = 2;
    /* c0 is a local binding here (symbol interned on first use). */
    env.sym[0] = test_intern(&t, "c0", 2);
    env.val[0] = 0;
    env.n = 1;
    int64_t v = -12345;
    bool ok = mapopt__app_expr_eval(&e, &env, &v);
    if (cases[i].err == EVAL_OK) {
      if (!ok || v != cases[i].value)
        fail_msg("%s: got %lld (ok=%d), want %lld", cases[i].text, (long long)v,
                 ok, (long long)cases[i].value);
    } else {
      if (ok || env.err != cases[i].err)
        fail_msg("%s: want error %d, got ok=%d err=%d", cases[i].text,
                 cases[i].err, ok, env.err);
    }
  }
  for (int i = 3; i < t.n; i++)
    free((void *)t.names[i]);
  mapopt__arena_destroy(&a);
  mapopt_ctx_free(ctx);
}

typedef struct syn_case {
  const char *text;
  uint32_t off;
  const char *msg;
} syn_case;

static void test_expr_syntax(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt__arena a;
  mapopt__arena_init(&a, ctx);
  symtab t = {{0}, 0};
  static const syn_case cases[] = {
      {"", 0, "empty expression"},
      {"1 +", 3, "expected an operand, got the end of the expression"},
      {"min(n, T", 8,
       "expected ',' or ')' in the call of min(), got the end of the "
       "expression"},
      {"(1 + 2", 6, "expected ')', got the end of the expression"},
      {"1 ? 2", 5, "expected ':' of '?', got the end of the expression"},
      {"n $ 2", 2, "unexpected character '$'"},
      {"a = b", 2, "unexpected character '='"},
      {"2 3", 2, "unexpected '3' after the expression"},
      {"99999999999999999999", 0,
       "integer literal 99999999999999999999 is out of range"},
      {"sqrt(4)", 0,
       "unknown function \"sqrt\" (functions: min, max, cdiv, gcd, lcm, "
       "elems, fbytes)"},
      {"min(1)", 0, "min() takes two or more arguments, not 1"},
      {"cdiv(1, 2, 3)", 0, "cdiv() takes two arguments, not 3"},
      {"elems(k)", 6,
       "elems() takes one integer literal (a requirement "
       "index)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const mapopt__app_ex_node *root;
    uint32_t off = 999;
    const char *msg;
    bool nm;
    bool ok =
        mapopt__app_expr_parse(&a, test_intern, &t, cases[i].text,
                               strlen(cases[i].text), &root, &off, &msg, &nm);
    if (ok)
      fail_msg("%s: parsed", cases[i].text);
    assert_false(nm);
    if (strcmp(msg, cases[i].msg) != 0 || off != cases[i].off)
      fail_msg("\"%s\": got %u \"%s\", want %u \"%s\"", cases[i].text, off, msg,
               cases[i].off, cases[i].msg);
  }
  for (int i = 0; i < t.n; i++)
    free((void *)t.names[i]);
  mapopt__arena_destroy(&a);
  mapopt_ctx_free(ctx);
}

/* ---- a compact model for located diagnostics
 * ----------------------------------- */

static const char *const M =
    "{\"format\": \"mapopt-app/1\", \"name\": \"m\",\n"
    "\"params\": {\"n\": 64, \"T\": 4, \"steps\": 3},\n"
    "\"sizes\": {\"small\": {\"n\": 16}},\n"
    "\"regions\": [{\"name\": \"r\", \"fields\": [[\"a\", 8], [\"b\", 4]],\n"
    " \"atoms\": {\"groups\": [{\"group\": \"g\", \"count\": \"T\", "
    "\"elements\": \"n / T\"}]}},\n"
    " {\"name\": \"m2\", \"fields\": [[\"x\", 8]], \"atoms\": {\"grid\": "
    "[\"2\", \"T\"], \"extent\": [\"n\", \"n\"]}}],\n"
    "\"partitions\": [{\"name\": \"p\", \"region\": \"r\", \"kind\": "
    "\"group\", \"group\": \"g\"},\n"
    " {\"name\": \"q\", \"region\": \"r\", \"kind\": \"list\", \"colors\": "
    "[\"T\"], \"entries\": [{\"group\": \"g\", \"atom\": \"c0\"}, {\"group\": "
    "\"g\", \"atom\": \"c0 + 1\", \"count\": \"2\"}]},\n"
    " {\"name\": \"b\", \"region\": \"m2\", \"kind\": \"rect\", \"colors\": "
    "[\"2\", \"2\"], \"lo\": [\"c0\", \"2 * c1\"], \"hi\": [\"c0\", \"2 * c1 "
    "+ 1\"]}],\n"
    "\"tasks\": [{\"name\": \"t\", \"variants\": [{\"kind\": \"GPU\", "
    "\"flops\": \"2 * elems(0)\"}]},\n"
    " {\"name\": \"u\", \"variants\": [{\"kind\": \"CPU\"}]}],\n"
    "\"program\": [{\"op\": \"fill\", \"region\": \"r\"},\n"
    " {\"op\": \"loop\", \"var\": \"s\", \"count\": \"steps\", \"timed\": "
    "true, \"body\": [\n"
    "  {\"op\": \"index\", \"task\": \"t\", \"domain\": [\"T\"], \"args\": "
    "[{\"part\": \"p\", \"priv\": \"RW\"}, {\"part\": \"q\", \"priv\": "
    "\"RO\", \"fields\": [\"a\"]}]},\n"
    "  {\"op\": \"single\", \"task\": \"u\", \"args\": [{\"part\": \"b\", "
    "\"proj\": [\"s % 2\", \"1\"], \"priv\": \"RO\"}]}]}]}\n";

typedef struct err_case {
  const char *from, *to; /* edit of M */
  const char *want;      /* the first diagnostic */
} err_case;

/* 1, after reporting case i of a table of kind, when got is not want. */
static int mismatch(const char *kind, size_t i, const char *got,
                    const char *want) {
  if (strcmp(got, want) == 0)
    return 0;
  fprintf(stderr, "%s case %zu:\n  got  %s\n  want %s\n", kind, i, got, want);
  return 1;
}

static void test_load_errors(void **state) {
  fixture *f = *state;
  static const err_case cases[] = {
      {"\"sizes\"", "\"sizez\"",
       "m.json:3:1: error: unknown key \"sizez\" in the application"},
      {"\"n\": 64", "\"n\": \"64\"",
       "m.json:2:17: error: parameter \"n\" must be an integer"},
      {"\"mapopt-app/1\"", "\"mapopt-app/2\"",
       "m.json:1:12: error: unsupported format \"mapopt-app/2\" (expected "
       "\"mapopt-app/1\")"},
      {"{\"part\": \"q\"", "{\"part\": \"qq\"",
       "m.json:14:96: error: unknown partition \"qq\" in argument 1 of index "
       "launch of \"t\""},
      {"\"fields\": [\"a\"]", "\"fields\": [\"z\"]",
       "m.json:14:126: error: unknown field \"z\" of region \"r\" in argument "
       "1 of index launch of \"t\""},
      {"\"task\": \"u\"", "\"task\": \"uu\"",
       "m.json:15:28: error: unknown task \"uu\" in single launch"},
      {"\"name\": \"m2\"", "\"name\": \"r\"",
       "m.json:6:11: error: duplicate region name \"r\""},
      {"{\"name\": \"u\"", "{\"name\": \"t\"",
       "m.json:11:11: error: duplicate task name \"t\""},
      {"\"n / T\"", "\"n / (T\"",
       "m.json:5:71: error: syntax error in expression \"n / (T\": expected "
       "')', got the end of the expression"},
      {"\"steps\", \"timed\"", "\"stepz\", \"timed\"",
       "m.json:13:39: error: undefined name \"stepz\" in expression "
       "\"stepz\""},
      {"\"n / T\"", "\"n / c0\"",
       "m.json:5:69: error: undefined name \"c0\" in expression \"n / c0\""},
      {"[{\"kind\": \"CPU\"}]", "[{\"kind\": \"CPU\"}, {\"kind\": \"CPU\"}]",
       "m.json:11:55: error: task \"u\" has two CPU variants"},
      {"{\"kind\": \"CPU\"}]", "{\"kind\": \"CPU\", \"inner\": true}]",
       "m.json:11:29: error: the CPU variant of task \"u\" is inner but the "
       "task has no \"body\""},
      {"{\"kind\": \"CPU\"}]}", "{\"kind\": \"CPU\"}], \"body\": []}",
       "m.json:11:29: error: task \"u\" has a \"body\", so its CPU variant "
       "must be \"inner\": true"},
      {"\"count\": \"2\"", "\"count\": \"elems(0)\"",
       "m.json:8:149: error: elems() is only allowed in task costs and "
       "requirement annotations (expression \"elems(0)\")"},
      {"\"2 * elems(0)\"", "\"2 * elems(2)\"",
       "m.json:10:68: error: elems(2) in expression \"2 * elems(2)\" refers "
       "to argument 2, but the launch has 2 (launched at 14:3)"},
      {"[\"s % 2\", \"1\"]", "[\"s % 2\"]",
       "m.json:15:64: error: \"proj\" of argument 0 of single launch of \"u\" "
       "has 1 expressions but partition \"b\" has 2-D colours"},
      {"\"proj\": [\"s % 2\", \"1\"], ", "",
       "m.json:15:42: error: missing key \"proj\" in argument 0 of single "
       "launch of \"u\" (only an index launch has a point for the identity "
       "projection)"},
      {"{\"op\": \"fill\", \"region\": \"r\"}",
       "{\"op\": \"timed\", "
       "\"body\": []}",
       "m.json:12:13: error: a \"timed\" block needs \"timing\": {\"mode\": "
       "\"fenced\"}"},
      {"\"timed\": true, ", "",
       "m.json:12:12: error: the program has no time-step loop (a loop with "
       "\"timed\": true)"},
      {"{\"op\": \"single\", \"task\": \"u\", ",
       "{\"op\": \"single\", \"task\": \"u\", \"wait\": [\"f\"], ",
       "m.json:15:42: error: unknown future \"f\" (no launch produces it)"},
      {"\"var\": \"s\"", "\"var\": \"n\"",
       "m.json:13:2: error: loop variable \"n\" hides a name already in "
       "scope"},
      {"\"priv\": \"RW\"}", "\"priv\": \"RW\", \"redop\": \"sum\"}",
       "m.json:14:95: error: \"redop\" in argument 0 of index launch of \"t\" "
       "needs \"priv\": \"REDUCE\""},
      {"\"priv\": \"RW\"}", "\"priv\": \"RX\"}",
       "m.json:14:80: error: \"priv\" in argument 0 of index launch of \"t\" "
       "must be one of RO, RW, WD, REDUCE, not \"RX\""},
      {"\"region\": \"m2\", \"kind\": \"rect\"",
       "\"region\": \"r\", \"kind\": \"rect\"",
       "m.json:9:39: error: a rect partition needs a grid region, and \"r\" "
       "has groups (partition \"b\")"},
      {" {\"name\": \"u\", \"variants\": [{\"kind\": \"CPU\"}]}",
       " {\"name\": \"u\", \"variants\": [{\"kind\": \"CPU\", \"inner\": "
       "true}], \"body\": [{\"op\": \"single\", \"task\": \"u\"}]}",
       "m.json:11:71: error: task \"u\" launches itself (recursive task "
       "bodies are not supported)"},
      {"\"group\": \"g\"},", "\"group\": \"h\"},",
       "m.json:7:71: error: unknown group \"h\" of region \"r\" in partition "
       "\"p\""},
      {"\"lo\": [\"c0\", \"2 * c1\"]", "\"lo\": [\"c0\"]",
       "m.json:9:76: error: \"lo\" of partition \"b\" has 1 entries but region "
       "\"m2\" has a 2-D grid"},
      {"\"elements\": \"n / T\"}", "\"elements\": \"n / T\", \"size\": 1}",
       "m.json:5:73: error: unknown key \"size\" in group 0 of region \"r\""},
      {"\"kind\": \"GPU\"", "\"kind\": \"TPU\"",
       "m.json:10:47: error: \"kind\" in variant 0 of task \"t\" must be one "
       "of CPU, GPU, OMP, not \"TPU\""},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *got = load_err(f, edit(M, cases[i].from, cases[i].to));
    bad += mismatch("load", i, got, cases[i].want);
  }
  assert_int_equal(bad, 0);
}

typedef struct ierr_case {
  const char *from, *to; /* edit of M, or NULL */
  const char *spec;
  const char *want;
} ierr_case;

static void test_inst_errors(void **state) {
  fixture *f = *state;
  static const ierr_case cases[] = {
      {"[\"s % 2\", \"1\"]", "[\"s % 2\", \"2\"]", NULL,
       "m.json:15:42: error: the projection of argument 0 gives colour (0, 2), "
       "outside the colour space [2, 2] of partition \"b\" in the single "
       "launch of \"u\""},
      {"\"priv\": \"RO\", \"fields\"", "\"priv\": \"RW\", \"fields\"", NULL,
       "m.json:14:87: error: argument 1 writes (RW) through partition \"q\" "
       "colour 0, which covers only 2 of the 16 elements of atom 1 (writes "
       "need whole atoms) at point (0) of the index launch of \"t\""},
      {"\"n / T\"", "\"n / (T - 4)\"", NULL,
       "m.json:5:67: error: division by zero in expression \"n / (T - 4)\" "
       "(\"elements\" of group \"g\" of region \"r\")"},
      {"\"count\": \"2\"", "\"count\": \"100\"", NULL,
       "m.json:8:148: error: count 100 of entry 1 of partition \"q\" exceeds "
       "the 16 elements of its atom at colour (0) of partition \"q\""},
      {"\"2 * elems(0)\"", "\"elems(0) * 4611686018427387904\"", NULL,
       "m.json:10:73: error: integer overflow in expression \"elems(0) * "
       "4611686018427387904\" (\"flops\" of the GPU variant of task \"t\") at "
       "point (0) of the index launch of \"t\""},
      {NULL, NULL, "n=63",
       "m.json:6:80: error: the atom grid of region \"m2\" does not divide "
       "evenly: extent 63 of dimension 0 is not a multiple of 2 atoms"},
      {NULL, NULL, "foo=1",
       "m.json: error: unknown parameter \"foo\" of \"m\" (parameters: n, T, "
       "steps)"},
      {NULL, NULL, "big",
       "m.json: error: unknown size \"big\" of \"m\" (sizes: small)"},
      {NULL, NULL, "n=4,small",
       "m.json: error: size \"small\" must come first in \"n=4,small\""},
      {NULL, NULL, "n=abc",
       "m.json: error: malformed value \"abc\" for parameter \"n\" (an "
       "integer such as 4096 or 1e6, within 64 bits)"},
      {NULL, NULL, "n=1e19",
       "m.json: error: malformed value \"1e19\" for parameter \"n\" (an "
       "integer such as 4096 or 1e6, within 64 bits)"},
      {NULL, NULL, "T=-1",
       "m.json:5:47: error: expression \"T\" (\"count\" of group \"g\" of "
       "region \"r\") is -1, and must not be negative"},
      {"\"extent\": [\"n\", \"n\"]", "\"elements\": \"1\"",
       "n=5e17,T=1", /* the fill fits; RW's factor 2 does not */
       "m.json:14:58: error: the default bytes of a requirement "
       "(500000000000000000 elements x 12 bytes x 2) overflow 64 bits"},
      {NULL, NULL, "steps=1000000000000",
       "m.json: error: refusing to instantiate \"m\": about 5000000000001 ops "
       "(more than the limit of 10000000; options max_ops)"},
      {NULL, NULL, "T=1e15",
       "m.json: error: refusing to instantiate \"m\": about 3000000000000004 "
       "ops (more than the limit of 10000000; options max_ops)"},
      {NULL, NULL, "n=1e18,T=1e15,steps=0",
       "m.json: error: refusing to instantiate \"m\": 3000000000000000 atoms "
       "would need more than 4294967296 bytes (the limit; options "
       "max_bytes)"},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *text = cases[i].from ? edit(M, cases[i].from, cases[i].to) : M;
    mapopt_app *app = load(f, "m.json", text);
    mapopt_app_options o = {cases[i].spec, -1, -1, 0, 0};
    const char *got = inst_err(f, app, &o);
    bad += mismatch("inst", i, got, cases[i].want);
    mapopt_app_free(app);
  }
  assert_int_equal(bad, 0);
}

/* ---- heat1d (docs/apps.md, "Tutorial: modelling a 1-D heat solver")
 * -------------------------------------------------- */

static void expect_atoms(const mapopt_app_piece *pc, size_t n,
                         const int64_t *atoms, const int64_t *counts) {
  assert_int_equal(pc->natoms, n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(pc->atoms[i].atom, atoms[i]);
    assert_int_equal(pc->atoms[i].count, counts[i]);
  }
}

static void expect_names(const mapopt_app_req *r, const char *const *want) {
  size_t n = 0;
  while (want[n])
    n++;
  assert_int_equal(r->nnames, n);
  for (size_t i = 0; i < n; i++)
    assert_string_equal(r->names[i], want[i]);
}

static void test_heat1d(void **state) {
  fixture *f = *state;
  mapopt_app *app = load_file(f, "heat1d.json");
  mapopt_app_run *run = inst(f, app, NULL);
  const int64_t T = 4, n = 16777216;
  /* 2 fills + (warm + steps) x 2 launches x T points + the fence that
   * opens the window. */
  assert_int_equal(run->nops, 2 + (2 + 10) * 2 * T + 1);
  assert_int_equal(run->iterations_warmup, 2);
  assert_int_equal(run->iterations_timed, 10);
  assert_null(run->size); /* heat1d has no `paper` size */
  assert_string_equal(run->name, "heat1d");
  assert_int_equal(run->timing, MAPOPT_TIMING_WINDOW);
  /* Atoms: 4 tiles of n/T, then 2T edges of 1. */
  assert_int_equal(run->natoms, T + 2 * T);
  assert_int_equal(run->regions[1].first_atom, T);
  assert_int_equal(run->atom_elements[0], n / T);
  assert_int_equal(run->atom_elements[T], 1);
  assert_int_equal(run->atom_region[T], 1);
  /* Pieces: 2 whole regions, then p_cells, p_out, p_in (T each). */
  assert_int_equal(run->npartitions, 3);
  assert_string_equal(run->partition_names[2], "p_in");
  /* Their colour spaces: T colours in one dimension. */
  assert_int_equal(run->partition_colors[2].dims, 1);
  assert_int_equal(run->partition_colors[2].extents[0], T);
  assert_int_equal(run->npieces, 2 + 3 * T);
  const mapopt_app_piece *p_in = &run->pieces[2 + 2 * T];
  assert_int_equal(p_in[0].partition, 2);
  assert_int_equal(p_in[0].region, 1);
  /* c0 = 0 has one neighbour edge (the right one); the middle ones two. */
  expect_atoms(&p_in[0], 1, (int64_t[]){T + 2}, (int64_t[]){1});
  expect_atoms(&p_in[1], 2, (int64_t[]){T + 1, T + 4}, (int64_t[]){1, 1});
  expect_atoms(&p_in[3], 1, (int64_t[]){T + 5}, (int64_t[]){1});
  assert_int_equal(p_in[1].elements, 2);
  assert_int_equal(p_in[1].color, 1);
  /* The fills. */
  const mapopt_app_op *op = run->ops;
  assert_int_equal(op[0].kind, MAPOPT_OP_FILL);
  assert_int_equal(op[0].task, -1);
  assert_int_equal(op[0].reqs[0].piece->partition, -1);
  assert_int_equal(op[0].reqs[0].priv, MAPOPT_PRIV_WD);
  assert_int_equal(op[0].reqs[0].fields, 3);
  assert_int_equal(op[0].reqs[0].bytes, n * 16);
  expect_names(&op[0].reqs[0], (const char *[]){"cells", NULL});
  assert_int_equal(op[1].reqs[0].bytes, 2 * T * 8);
  assert_int_equal(op[0].timing.iteration, -1);
  assert_false(op[0].timing.timed);
  /* relax, point 0: bytes default elems x fbytes x 2 for RW, x 1 for RO. */
  const mapopt_app_op *relax = &op[2];
  assert_int_equal(relax->kind, MAPOPT_OP_TASK);
  assert_string_equal(run->tasks[relax->task].name, "relax");
  assert_true(relax->is_index);
  assert_int_equal(relax->dims, 1);
  assert_int_equal(relax->extents[0], T);
  assert_int_equal(relax->nreqs, 2);
  assert_int_equal(relax->reqs[0].bytes, n / T * 16 * 2);
  assert_int_equal(relax->reqs[1].bytes, 1 * 8);
  assert_int_equal(relax->reqs[0].priv, MAPOPT_PRIV_RW);
  assert_int_equal(relax->reqs[1].fields, 1);
  assert_int_equal(relax->flops[0], 5 * (n / T));
  assert_int_equal(relax->flops[1], 5 * (n / T));
  assert_int_equal(relax->fixed_ns[0], 0);
  assert_int_equal(relax->reqs[0].gathers, 0);
  expect_names(&relax->reqs[0], (const char *[]){"p_cells", "cells", NULL});
  expect_names(&relax->reqs[1], (const char *[]){"p_in", "edges", NULL});
  assert_int_equal(relax[1].reqs[1].bytes, 2 * 8); /* point 1: 2 edges */
  assert_int_equal(relax[1].point[0], 1);
  assert_int_equal(relax[1].launch, relax[0].launch);
  /* publish: an explicit bytes, and WD's factor 1. */
  const mapopt_app_op *pub = &op[2 + T];
  assert_string_equal(run->tasks[pub->task].name, "publish");
  assert_int_equal(pub->reqs[0].bytes, 16);
  assert_int_equal(pub->reqs[1].bytes, 2 * 8);
  assert_int_not_equal(pub->launch, relax->launch);
  /* Timing flags: warm-up iterations 0 and 1 untimed, traced from 1; the
   * window opens with a fence at the end of iteration 1, untimed and not
   * waited for (role 1). */
  const int64_t fence = 2 + 2 * 2 * T;
  assert_int_equal(op[fence].kind, MAPOPT_OP_FENCE);
  assert_int_equal(op[fence].timing.iteration, 1);
  assert_false(op[fence].timing.timed);
  assert_int_equal(op[fence].timing.fence_role, 1);
  for (int64_t i = 2; i < run->nops; i++) {
    if (i == fence)
      continue;
    int64_t it = (i - 2 - (i > fence)) / (2 * T);
    assert_int_equal(op[i].kind, MAPOPT_OP_TASK);
    assert_int_equal(op[i].timing.iteration, it);
    assert_int_equal(op[i].timing.timed, it >= 2);
    assert_int_equal(op[i].timing.traced, it >= 1);
    assert_int_equal(op[i].timing.repetition, -1);
    assert_int_equal(op[i].timing.fence_role, 0);
    assert_int_equal(op[i].parent, -1);
    assert_int_equal(op[i].future, -1);
  }
  /* The CPU variant's layout requirement. */
  const mapopt_app_task *t = &run->tasks[relax->task];
  assert_int_equal(t->nvariants, 2);
  assert_int_equal(t->variant_kinds,
                   (1u << MAPOPT_PROC_GPU) | (1u << MAPOPT_PROC_CPU));
  assert_int_equal(t->variants[1].flops_eff_ppm, 250000);
  assert_int_equal(t->variants[1].nrequires, 1);
  assert_int_equal(t->variants[1].requires[0].args, 1);
  assert_int_equal(t->variants[1].requires[0].soa, MAPOPT_LAYOUT_YES);
  assert_int_equal(t->variants[1].requires[0].c_order, MAPOPT_LAYOUT_NO);
  assert_int_equal(t->variants[1].requires[0].error,
                   MAPOPT_LAYOUT_ERROR_STRIDE);
  assert_int_equal(t->variants[0].mem_eff_ppm, 1000000);
  mapopt_app_run_free(run);
  /* Iteration options. */
  mapopt_app_options o = {NULL, 3, 0, 0, 0};
  assert_int_equal(mapopt_app_instantiate(app, &o, NULL, f->diags, &run),
                   MAPOPT_OK);
  assert_int_equal(run->nops, 2 + 3 * 2 * T);
  assert_true(run->ops[2].timing.timed);
  assert_false(run->ops[2].timing.traced);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
}

static void test_sizes(void **state) {
  fixture *f = *state;
  mapopt_app *app = load_file(f, "heat1d.json");
  mapopt_app_run *run = inst(f, app, "small");
  assert_string_equal(run->size, "small");
  assert_int_equal(run->nparams, 4);
  assert_string_equal(run->param_names[0], "n");
  assert_int_equal(run->param_values[0], 65536);
  assert_int_equal(run->ops[2].reqs[0].piece->elements, 65536 / 4);
  mapopt_app_run_free(run);
  run = inst(f, app, "n=4096");
  assert_null(run->size);
  assert_int_equal(run->param_values[0], 4096);
  assert_int_equal(run->ops[2].flops[0], 5 * 1024);
  mapopt_app_run_free(run);
  run = inst(f, app, "small,T=8,steps=1e1");
  assert_int_equal(run->param_values[0], 65536);
  assert_int_equal(run->param_values[1], 8);
  assert_int_equal(run->nops, 2 + 12 * 2 * 8 + 1); /* + the window's fence */
  assert_int_equal(run->ops[2].reqs[0].piece->elements, 65536 / 8);
  mapopt_app_run_free(run);
  mapopt_app_options o = {"bogus=1", -1, -1, 0, 0};
  assert_string_equal(inst_err(f, app, &o),
                      "heat1d.json: error: unknown parameter \"bogus\" of "
                      "\"heat1d\" (parameters: n, T, steps, warm)");
  mapopt_app_free(app);
  /* A model with a `paper` size gets it by default, overrides on top. */
  app = load_file(f, "ring2.json");
  run = inst(f, app, "H=32");
  assert_string_equal(run->size, "paper");
  assert_int_equal(run->param_values[2], 32);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
}

/* ---- ring2: inner bodies, futures, reductions
 * ------------------------------------- */

static void test_ring2(void **state) {
  fixture *f = *state;
  mapopt_app *app = load_file(f, "ring2.json");
  mapopt_app_run *run = inst(f, app, NULL);
  const int P = 8, sub = 2, per_step = 1 + 2 * sub + 1;
  const int per_iter = P * per_step + P + 1 + 1;
  assert_int_equal(run->nops,
                   3 + P + 12 * per_iter + 1 + 1); /* + the window's fence */
  assert_int_equal(run->nfutures, 12 * (P + 2));
  const mapopt_app_op *op = run->ops;
  int64_t it0 = 3 + P; /* the first step point */
  /* Depth first: each step point is followed by its 5 children. */
  for (int p = 0; p < P; p++) {
    int64_t s = it0 + p * per_step;
    assert_string_equal(run->tasks[op[s].task].name, "step");
    assert_true(run->tasks[op[s].task].inner);
    assert_int_equal(op[s].parent, -1);
    assert_int_equal(op[s].point[0], p);
    assert_int_equal(op[s].nwaits, 0); /* no "go" before the first */
    static const char *const kids[] = {"relax", "publish", "relax", "publish",
                                       "exchange_flux"};
    for (int k = 0; k < 5; k++) {
      const mapopt_app_op *c = &op[s + 1 + k];
      assert_string_equal(run->tasks[c->task].name, kids[k]);
      assert_int_equal(c->parent, s);
      assert_false(c->is_index);
      assert_int_equal(c->dims, 0);
      assert_int_equal(c->timing.iteration, 0);
      assert_false(c->timing.timed);
    }
    /* The body's proj ["i"] sees the step's point under the task's name. */
    assert_int_equal(op[s + 1].reqs[0].piece->color, p);
    assert_int_equal(op[s + 1].reqs[1].piece->color, p);
    assert_int_not_equal(op[s + 1].launch, op[s + 3].launch);
    /* REDUCE through the aliased partial piece: own slot + half the next. */
    const mapopt_app_req *red = &op[s + 5].reqs[0];
    assert_int_equal(red->priv, MAPOPT_PRIV_REDUCE);
    assert_int_equal(red->redop, MAPOPT_REDOP_SUM);
    assert_int_equal(red->piece->natoms, 2);
    assert_int_equal(red->piece->elements, 64 + 32);
    assert_int_equal(red->bytes, 96 * 8 * 2);
    assert_int_equal(op[s + 5].fixed_ns[0], 1000);
  }
  const mapopt_app_req *nbr = &op[it0].reqs[1];
  expect_names(nbr,
               (const char *[]){"p_nbr", "halo_in", "halo", "ghosts", NULL});
  /* residual points produce per-point futures; the reduce op waits on them
   * and produces "res"; monitor waits on "res" and produces "go". */
  int64_t r0 = it0 + P * per_step;
  for (int p = 0; p < P; p++) {
    assert_string_equal(run->tasks[op[r0 + p].task].name, "residual");
    assert_int_equal(op[r0 + p].future, p);
    assert_int_equal(op[r0 + p].reqs[0].gathers, 16777216 / 2 / P / 100);
  }
  const mapopt_app_op *red = &op[r0 + P];
  assert_int_equal(red->kind, MAPOPT_OP_FUTURE_REDUCE);
  assert_int_equal(red->task, -1);
  assert_int_equal(red->launch, op[r0].launch);
  assert_int_equal(red->nwaits, P);
  for (int p = 0; p < P; p++)
    assert_int_equal(red->waits[p], p);
  assert_int_equal(red->future, P);
  const mapopt_app_op *mon = &op[r0 + P + 1];
  assert_string_equal(run->tasks[mon->task].name, "monitor");
  assert_int_equal(mon->nwaits, 1);
  assert_int_equal(mon->waits[0], P);
  assert_int_equal(mon->future, P + 1);
  /* The next iteration's step waits on the previous "go". */
  const mapopt_app_op *s1 = &op[it0 + per_iter];
  assert_string_equal(run->tasks[s1->task].name, "step");
  assert_int_equal(s1->timing.iteration, 1);
  assert_true(s1->timing.traced);
  assert_int_equal(s1->nwaits, 1);
  assert_int_equal(s1->waits[0], P + 1);
  /* The last op: report, untimed, reading the whole region. */
  const mapopt_app_op *last = &op[run->nops - 1];
  assert_string_equal(run->tasks[last->task].name, "report");
  assert_int_equal(last->timing.iteration, -1);
  assert_int_equal(last->reqs[0].piece->partition, -1);
  expect_names(&last->reqs[0], (const char *[]){"acc", NULL});
  /* prefers penalty in ppm. */
  const mapopt_app_task *res = &run->tasks[op[r0].task];
  assert_int_equal(res->variants[0].nprefers, 1);
  assert_int_equal(res->variants[0].prefers[0].penalty_ppm, 1020000);
  assert_string_equal(run->log_style, "regent-time");
  mapopt_app_run_free(run);
  mapopt_app_free(app);
}

/* ---- fenced mode
 * -------------------------------------------------------------------- */

static const char *const FENCED =
    "{\"format\": \"mapopt-app/1\", \"name\": \"f\", \"params\": {\"reps\": "
    "2, \"warm\": 3},\n"
    " \"timing\": {\"mode\": \"fenced\", \"metric\": \"gflops\", \"flops\": "
    "\"1000 * reps\", \"per_node\": true, \"log\": \"distal\"},\n"
    " \"run\": {\"ranks_per_node\": \"gpus\"}, \"default_order\": "
    "\"C_order\",\n"
    " \"regions\": [{\"name\": \"A\", \"fields\": [[\"val\", 8]], "
    "\"atoms\": {\"grid\": [\"2\", \"2\"], \"extent\": [\"8\", \"8\"]}}],\n"
    " \"partitions\": [{\"name\": \"tile\", \"region\": \"A\", \"kind\": "
    "\"rect\", \"colors\": [\"2\", \"2\"], \"lo\": [\"c0\", \"c1\"], \"hi\": "
    "[\"c0\", \"c1\"]},\n"
    "   {\"name\": \"row\", \"region\": \"A\", \"kind\": \"rect\", "
    "\"colors\": [\"2\"], \"lo\": [\"0\", \"c0\"], \"hi\": [\"5\", \"c0\"]}],\n"
    " \"tasks\": [{\"name\": \"fillt\", \"variants\": [{\"kind\": "
    "\"GPU\"}]},\n"
    "  {\"name\": \"gemm\", \"variants\": [{\"kind\": \"GPU\", \"flops\": \"2 "
    "* elems(0)\", \"matrix\": true, \"requires\": [{\"args\": [0], "
    "\"order\": \"C_order\", \"error\": \"dgemm\"}]}]}],\n"
    " \"program\": [{\"op\": \"loop\", \"var\": \"r\", \"count\": \"reps\", "
    "\"warmup\": \"warm\", \"timed\": true, \"body\": [\n"
    "  {\"op\": \"index\", \"task\": \"fillt\", \"domain\": [\"2\", \"2\"], "
    "\"args\": [{\"part\": \"tile\", \"priv\": \"WD\"}]},\n"
    "  {\"op\": \"timed\", \"body\": [{\"op\": \"index\", \"task\": \"gemm\", "
    "\"domain\": [\"2\", \"2\"], \"point\": [\"x\", \"y\"], \"args\": "
    "[{\"part\": \"tile\", \"proj\": [\"y\", \"x\"], \"priv\": \"RW\"}, "
    "{\"part\": \"row\", \"proj\": [\"(x + r) % 2\"], \"priv\": "
    "\"RO\"}]}]}]}]}\n";

static void test_fenced(void **state) {
  fixture *f = *state;
  mapopt_app *app = load(f, "f.json", FENCED);
  mapopt_app_machine mach = {2, 8, 1};
  mapopt_app_options o = {NULL, -1, -1, 0, 0};
  mapopt_app_run *run = NULL;
  assert_int_equal(mapopt_app_instantiate(app, &o, &mach, f->diags, &run),
                   MAPOPT_OK);
  /* Fenced: the loop's own warm-up (3), not capped at 2. */
  assert_int_equal(run->iterations_warmup, 3);
  assert_int_equal(run->iterations_timed, 2);
  assert_int_equal(run->timing, MAPOPT_TIMING_FENCED);
  assert_true(run->metric_gflops);
  assert_true(run->per_node);
  assert_int_equal(run->flops_per_iteration, 2000);
  assert_int_equal(run->ranks_per_node, 8);
  assert_true(run->default_c_order);
  assert_string_equal(run->log_style, "distal");
  /* Per repetition: 4 fills, opening fence, 4 gemm, closing fence. */
  assert_int_equal(run->nops, 5 * 10);
  for (int rep = 0; rep < 5; rep++) {
    const mapopt_app_op *op = &run->ops[rep * 10];
    bool timed = rep >= 3;
    for (int i = 0; i < 10; i++) {
      assert_int_equal(op[i].timing.repetition, rep);
      assert_int_equal(op[i].timing.iteration, rep);
    }
    for (int i = 0; i < 4; i++)
      assert_false(op[i].timing.timed);
    assert_int_equal(op[4].kind, MAPOPT_OP_FENCE);
    assert_int_equal(op[4].timing.fence_role, 1);
    assert_int_equal(op[4].timing.timed, timed);
    assert_int_equal(op[4].nreqs, 0);
    for (int i = 5; i < 9; i++) {
      assert_int_equal(op[i].kind, MAPOPT_OP_TASK);
      assert_int_equal(op[i].timing.timed, timed);
      assert_int_equal(op[i].timing.fence_role, 0);
    }
    assert_int_equal(op[9].kind, MAPOPT_OP_FENCE);
    assert_int_equal(op[9].timing.fence_role, 2);
    assert_int_equal(op[9].timing.timed, timed);
    /* gemm point (x=1, y=0) is the second (dimension 0 fastest); its tile
     * is proj (y, x) = (0, 1), colour 0 + 2 * 1; rect atoms are in atom
     * coordinates: atom (0, 1) = 2. The row piece is clipped to the grid. */
    const mapopt_app_op *g = &op[6];
    assert_int_equal(g->point[0], 1);
    assert_int_equal(g->point[1], 0);
    assert_int_equal(g->reqs[0].piece->color, 2);
    expect_atoms(g->reqs[0].piece, 1, (int64_t[]){2}, (int64_t[]){16});
    assert_int_equal(g->flops[0], 2 * 16);
    int64_t row = (1 + rep) % 2;
    assert_int_equal(g->reqs[1].piece->color, row);
    expect_atoms(g->reqs[1].piece, 2, (int64_t[]){2 * row, 2 * row + 1},
                 (int64_t[]){16, 16});
  }
  const mapopt_app_variant *v = &run->tasks[1].variants[0];
  assert_true(v->matrix);
  assert_int_equal(v->requires[0].error, MAPOPT_LAYOUT_ERROR_DGEMM);
  assert_int_equal(v->requires[0].c_order, MAPOPT_LAYOUT_YES);
  assert_int_equal(v->requires[0].soa, MAPOPT_LAYOUT_UNSET);
  mapopt_app_run_free(run);
  /* The warmup option overrides. */
  o.warmup = 0;
  assert_int_equal(mapopt_app_instantiate(app, &o, &mach, f->diags, &run),
                   MAPOPT_OK);
  assert_int_equal(run->nops, 2 * 10);
  assert_true(run->ops[4].timing.timed);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
}

/* ---- round trip
 * ------------------------------------------------------------------- */

static void assert_rule_equal(const mapopt_app_layout_rule *x,
                              const mapopt_app_layout_rule *y) {
  assert_int_equal(x->args, y->args);
  assert_int_equal(x->soa, y->soa);
  assert_int_equal(x->c_order, y->c_order);
  assert_int_equal(x->error, y->error);
  assert_int_equal(x->penalty_ppm, y->penalty_ppm);
}

static void same_run(const mapopt_app_run *a, const mapopt_app_run *b) {
  assert_int_equal(a->nops, b->nops);
  assert_int_equal(a->natoms, b->natoms);
  assert_int_equal(a->npieces, b->npieces);
  assert_int_equal(a->ntasks, b->ntasks);
  assert_int_equal(a->nfutures, b->nfutures);
  assert_int_equal(a->iterations_warmup, b->iterations_warmup);
  assert_int_equal(a->iterations_timed, b->iterations_timed);
  assert_int_equal(a->timing, b->timing);
  assert_int_equal(a->flops_per_iteration, b->flops_per_iteration);
  assert_int_equal(a->ranks_per_node, b->ranks_per_node);
  assert_int_equal(a->default_c_order, b->default_c_order);
  for (int64_t i = 0; i < a->natoms; i++)
    assert_int_equal(a->atom_elements[i], b->atom_elements[i]);
  for (int64_t i = 0; i < a->npieces; i++) {
    assert_int_equal(a->pieces[i].natoms, b->pieces[i].natoms);
    for (size_t k = 0; k < a->pieces[i].natoms; k++) {
      assert_int_equal(a->pieces[i].atoms[k].atom, b->pieces[i].atoms[k].atom);
      assert_int_equal(a->pieces[i].atoms[k].count,
                       b->pieces[i].atoms[k].count);
    }
  }
  for (int t = 0; t < a->ntasks; t++) {
    const mapopt_app_task *x = &a->tasks[t], *y = &b->tasks[t];
    assert_string_equal(x->name, y->name);
    assert_int_equal(x->nvariants, y->nvariants);
    assert_int_equal(x->inner, y->inner);
    for (int v = 0; v < x->nvariants; v++) {
      const mapopt_app_variant *p = &x->variants[v], *q = &y->variants[v];
      assert_int_equal(p->kind, q->kind);
      assert_int_equal(p->f32, q->f32);
      assert_int_equal(p->matrix, q->matrix);
      assert_int_equal(p->flops_eff_ppm, q->flops_eff_ppm);
      assert_int_equal(p->mem_eff_ppm, q->mem_eff_ppm);
      assert_int_equal(p->nrequires, q->nrequires);
      assert_int_equal(p->nprefers, q->nprefers);
      /* Field by field: the structs have padding, which is not data. */
      for (size_t k = 0; k < p->nrequires; k++)
        assert_rule_equal(&p->requires[k], &q -> requires[k]);
      for (size_t k = 0; k < p->nprefers; k++)
        assert_rule_equal(&p->prefers[k], &q->prefers[k]);
    }
  }
  for (int64_t i = 0; i < a->nops; i++) {
    const mapopt_app_op *x = &a->ops[i], *y = &b->ops[i];
    assert_int_equal(x->kind, y->kind);
    assert_int_equal(x->task, y->task);
    assert_int_equal(x->parent, y->parent);
    assert_int_equal(x->launch, y->launch);
    assert_int_equal(x->is_index, y->is_index);
    assert_int_equal(x->dims, y->dims);
    assert_memory_equal(x->point, y->point, sizeof x->point);
    assert_memory_equal(x->extents, y->extents, sizeof x->extents);
    assert_int_equal(x->timing.iteration, y->timing.iteration);
    assert_int_equal(x->timing.timed, y->timing.timed);
    assert_int_equal(x->timing.traced, y->timing.traced);
    assert_int_equal(x->timing.fence_role, y->timing.fence_role);
    assert_int_equal(x->timing.repetition, y->timing.repetition);
    assert_int_equal(x->future, y->future);
    assert_int_equal(x->nwaits, y->nwaits);
    for (size_t k = 0; k < x->nwaits; k++)
      assert_int_equal(x->waits[k], y->waits[k]);
    if (x->kind == MAPOPT_OP_TASK)
      for (int v = 0; v < a->tasks[x->task].nvariants; v++) {
        assert_int_equal(x->flops[v], y->flops[v]);
        assert_int_equal(x->fixed_ns[v], y->fixed_ns[v]);
      }
    assert_int_equal(x->nreqs, y->nreqs);
    for (size_t k = 0; k < x->nreqs; k++) {
      const mapopt_app_req *p = &x->reqs[k], *q = &y->reqs[k];
      assert_int_equal(p->piece->id, q->piece->id);
      assert_int_equal(p->fields, q->fields);
      assert_int_equal(p->priv, q->priv);
      assert_int_equal(p->redop, q->redop);
      assert_int_equal(p->simultaneous, q->simultaneous);
      assert_int_equal(p->bytes, q->bytes);
      assert_int_equal(p->gathers, q->gathers);
      assert_int_equal(p->atomics, q->atomics);
      assert_int_equal(p->nnames, q->nnames);
      for (size_t j = 0; j < p->nnames; j++)
        assert_string_equal(p->names[j], q->names[j]);
    }
  }
}

static void round_trip(fixture *f, const char *file, const char *text,
                       const char *spec) {
  mapopt_app *a = load(f, file, text);
  char *json = NULL;
  assert_int_equal(mapopt_app_to_json(f->ctx, a, &json), MAPOPT_OK);
  mapopt_app *b = load(f, "out.json", json);
  char *json2 = NULL;
  assert_int_equal(mapopt_app_to_json(f->ctx, b, &json2), MAPOPT_OK);
  assert_string_equal(json, json2); /* the writer is a fixed point */
  mapopt_app_machine mach = {2, 4, 1};
  mapopt_app_options o = {spec, -1, -1, 0, 0};
  mapopt_app_run *ra, *rb;
  assert_int_equal(mapopt_app_instantiate(a, &o, &mach, f->diags, &ra),
                   MAPOPT_OK);
  assert_int_equal(mapopt_app_instantiate(b, &o, &mach, f->diags, &rb),
                   MAPOPT_OK);
  same_run(ra, rb);
  mapopt_app_run_free(ra);
  mapopt_app_run_free(rb);
  mapopt_text_free(json);
  mapopt_text_free(json2);
  mapopt_app_free(a);
  mapopt_app_free(b);
}

static void test_round_trip(void **state) {
  fixture *f = *state;
  char *heat = slurp("heat1d.json"), *ring = slurp("ring2.json");
  round_trip(f, "heat1d.json", heat, NULL);
  round_trip(f, "heat1d.json", heat, "small");
  round_trip(f, "ring2.json", ring, NULL);
  round_trip(f, "ring2.json", ring, "small,sub=3");
  round_trip(f, "f.json", FENCED, NULL);
  round_trip(f, "m.json", M, NULL);
  free(heat);
  free(ring);
}

/* ---- task info
 * ------------------------------------------------------------------- */

static void test_task_info(void **state) {
  fixture *f = *state;
  mapopt_app *app = load_file(f, "heat1d.json");
  const mapopt_task_info *ti;
  size_t n;
  assert_int_equal(mapopt_app_task_info(app, &ti, &n), MAPOPT_OK);
  assert_int_equal(n, 2);
  assert_string_equal(ti[0].name, "relax");
  assert_int_equal(ti[0].nargs, 2);
  assert_string_equal(ti[0].arg_names[0][0], "p_cells");
  assert_string_equal(ti[0].arg_names[0][1], "cells");
  assert_null(ti[0].arg_names[0][2]);
  assert_string_equal(ti[0].arg_names[1][0], "p_in");
  assert_string_equal(ti[1].arg_names[1][0], "p_out");
  assert_string_equal(ti[1].arg_names[1][1], "edges");
  mapopt_app_free(app);
  /* ring2: relax is launched from the body of step; unions per position. */
  app = load_file(f, "ring2.json");
  assert_int_equal(mapopt_app_task_info(app, &ti, &n), MAPOPT_OK);
  assert_int_equal(n, 8);
  assert_string_equal(ti[2].name, "relax");
  assert_int_equal(ti[2].nargs, 2);
  assert_string_equal(ti[2].arg_names[1][1], "halo_in");
  assert_string_equal(ti[7].name, "report");
  assert_string_equal(ti[7].arg_names[0][0], "acc");
  assert_int_equal(ti[6].nargs, 0); /* monitor */
  mapopt_app_free(app);
}

/* ---- the narrow view of a run
 * ------------------------------------------------------- */

/* The getters (include/mapopt/app.h, "the narrow view of a run") return
 * the run's own entries; past the ends and for a NULL object the caller's
 * bug, rejected under the narrow view's convention (asserted in a debug
 * build, NULL or 0 in a release one). ring2 has an inner task, so an op
 * with a parent. */
static void test_run_getters(void **state) {
  fixture *f = *state;
  mapopt_app *app = load_file(f, "ring2.json");
  mapopt_app_run *run = inst(f, app, NULL);
  assert_int_equal(mapopt_app_run_nops(run), run->nops);
  const mapopt_app_op *last = mapopt_app_run_op(run, run->nops - 1);
  assert_ptr_equal(last, &run->ops[run->nops - 1]);
  const mapopt_app_op *child = NULL, *top = NULL;
  for (int64_t i = 0; i < run->nops && (!child || !top); i++) {
    const mapopt_app_op *op = &run->ops[i];
    if (op->parent >= 0 && op->nreqs > 0)
      child = op;
    else if (op->parent < 0 && op->task >= 0 && op->nreqs > 0)
      top = op;
  }
  assert_non_null(child);
  assert_non_null(top);
  assert_ptr_equal(mapopt_app_op_parent(run, child), &run->ops[child->parent]);
  assert_null(mapopt_app_op_parent(run, top)); /* issued by main */
  assert_ptr_equal(mapopt_app_op_task(run, top), &run->tasks[top->task]);
  const mapopt_app_req *req = mapopt_app_op_req(top, top->nreqs - 1);
  assert_ptr_equal(req, &top->reqs[top->nreqs - 1]);
  const mapopt_app_region *region = mapopt_app_req_region(run, req);
  assert_ptr_equal(region, &run->regions[req->piece->region]);
  assert_ptr_equal(mapopt_app_run_region(run, 0), &run->regions[0]);
  assert_ptr_equal(mapopt_app_region_field_name(region, 0),
                   region->field_names[0]);
  assert_int_equal(mapopt_app_region_field_bytes(region, 0),
                   region->field_bytes[0]);
  assert_ptr_equal(mapopt_app_req_name(req, req->nnames - 1),
                   req->names[req->nnames - 1]);
  assert_ptr_equal(mapopt_app_piece_atom_at(req->piece, 0),
                   &req->piece->atoms[0]);
  assert_int_equal(mapopt_app_run_atom_elements(run, run->natoms - 1),
                   run->atom_elements[run->natoms - 1]);
  const mapopt_app_task *task = mapopt_app_run_task(run, run->ntasks - 1);
  assert_ptr_equal(task, &run->tasks[run->ntasks - 1]);
  assert_string_equal(mapopt_app_task_name(run, 0), run->tasks[0].name);
  assert_ptr_equal(mapopt_app_task_variant(task, 0), &task->variants[0]);
  assert_true(run->npartitions > 0);
  assert_ptr_equal(mapopt_app_run_partition_name(run, 0),
                   run->partition_names[0]);
  assert_ptr_equal(mapopt_app_run_partition_colors(run, 0),
                   &run->partition_colors[0]);
  const char *name;
  int64_t value;
  assert_true(run->nparams > 0);
  assert_true(mapopt_app_run_param(run, run->nparams - 1, &name, &value));
  assert_string_equal(name, run->param_names[run->nparams - 1]);
  assert_int_equal(value, run->param_values[run->nparams - 1]);
  /* The one iteration by position: false past the last, not a bug. */
  assert_false(mapopt_app_run_param(run, run->nparams, &name, &value));

  assert_rejected(mapopt_app_run_op(run, run->nops));
  assert_rejected(mapopt_app_run_op(run, -1));
  assert_rejected(mapopt_app_op_req(top, top->nreqs));
  assert_rejected(mapopt_app_run_task(run, run->ntasks));
  assert_rejected(mapopt_app_task_name(run, -1));
  assert_rejected(mapopt_app_task_variant(task, task->nvariants));
  assert_rejected(mapopt_app_run_region(run, run->nregions));
  assert_rejected(mapopt_app_region_field_name(region, -1));
  assert_rejected(mapopt_app_region_field_bytes(region, region->nfields));
  assert_rejected(mapopt_app_req_name(req, req->nnames));
  assert_rejected(mapopt_app_piece_atom_at(req->piece, req->piece->natoms));
  assert_rejected(mapopt_app_run_atom_elements(run, run->natoms));
  assert_rejected(mapopt_app_run_partition_name(run, run->npartitions));
  assert_rejected(mapopt_app_run_partition_colors(run, run->npartitions));
  assert_rejected(mapopt_app_run_nops(NULL));
  assert_rejected(mapopt_app_run_op(NULL, 0));
  assert_rejected(mapopt_app_op_req(NULL, 0));
  assert_rejected(mapopt_app_op_task(run, NULL));
  assert_rejected(mapopt_app_op_parent(run, NULL));
  assert_rejected(mapopt_app_req_region(run, NULL));
  assert_rejected(mapopt_app_task_variant(NULL, 0));
  assert_rejected(mapopt_app_run_param(NULL, 0, &name, &value));
  mapopt_app_run_free(run);
  mapopt_app_free(app);
}

/* ---- a large run and the ops limit
 * ------------------------------------------------- */

/* A run of 100002 ops is instantiated whole, and a tighter max_ops is
 * honoured. How long instantiating takes is a performance target, not a
 * test: bench/bench_scale measures it, the instantiation's CPU time among
 * a run's steps (docs/sim.md, "How long a simulation takes"). */
static void test_large_run(void **state) {
  fixture *f = *state;
  mapopt_app *app = load_file(f, "heat1d.json");
  mapopt_app_run *run = inst(f, app, "T=1000,steps=48");
  assert_int_equal(run->nops, 2 + 50 * 2 * 1000 + 1);
  mapopt_app_run_free(run);
  mapopt_app_options o = {NULL, -1, -1, 50, 0};
  assert_string_equal(inst_err(f, app, &o),
                      "heat1d.json: error: refusing to instantiate "
                      "\"heat1d\": about 99 ops (more than the limit of 50; "
                      "options max_ops)");
  mapopt_app_free(app);
}

/* ---- out of memory at every allocation
 * ------------------------------------------------ */

/* Loading, instantiating and writing text fail cleanly at every allocation
 * (diagnostics use f's normal context). */
static void oom_model(fixture *f, const char *file, const char *ring) {
  failing_alloc b = {.left = -1, .sticky = true};
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(failing_realloc, &b, &ctx), MAPOPT_OK);
  int fails = 0;
  for (long limit = 0;; limit++) {
    b.left = limit;
    mapopt_app *app = NULL;
    mapopt_diags_clear(f->diags);
    mapopt_status st =
        mapopt_app_load_json(ctx, file, ring, strlen(ring), f->diags, &app);
    if (st == MAPOPT_OK) {
      mapopt_app_free(app);
      break;
    }
    assert_int_equal(st, MAPOPT_ENOMEM);
    fails++;
  }
  assert_true(fails > 10);
  b.left = -1;
  mapopt_app *app = NULL;
  assert_int_equal(
      mapopt_app_load_json(ctx, file, ring, strlen(ring), f->diags, &app),
      MAPOPT_OK);
  fails = 0;
  for (long limit = 0;; limit++) {
    b.left = limit;
    mapopt_app_run *run = NULL;
    mapopt_diags_clear(f->diags);
    mapopt_status st = mapopt_app_instantiate(app, NULL, NULL, f->diags, &run);
    if (st == MAPOPT_OK) {
      mapopt_app_run_free(run);
      break;
    }
    assert_int_equal(st, MAPOPT_ENOMEM);
    fails++;
  }
  assert_true(fails > 5);
  b.left = -1;
  for (long limit = 0;; limit++) {
    b.left = limit;
    char *json = NULL;
    mapopt_status st = mapopt_app_to_json(ctx, app, &json);
    if (st == MAPOPT_OK) {
      b.left = -1;
      mapopt_text_free(json);
      break;
    }
    assert_int_equal(st, MAPOPT_ENOMEM);
  }
  b.left = -1;
  mapopt_app_free(app);
  mapopt_ctx_free(ctx);
}

static void test_oom(void **state) {
  char *ring = slurp("ring2.json");
  oom_model(*state, "ring2.json", ring);
  free(ring);
}

/* ---- grid list entries, fills through partitions
 * ------------------------------- */

static const char *const G =
    "{\"format\": \"mapopt-app/1\", \"name\": \"g\",\n"
    " \"regions\": [{\"name\": \"g\", \"fields\": [[\"x\", 4]], \"atoms\": "
    "{\"grid\": [\"3\", \"2\"], \"elements\": \"5\"}}],\n"
    " \"partitions\": [{\"name\": \"d\", \"region\": \"g\", \"kind\": "
    "\"list\", \"colors\": [\"2\"], \"entries\": [{\"atom\": [\"c0\", "
    "\"1\"]}, {\"atom\": \"c0 + 4\", \"count\": \"2\"}, {\"atom\": [\"3\", "
    "\"0\"]}]}],\n"
    " \"tasks\": [{\"name\": \"k\", \"variants\": [{\"kind\": \"GPU\"}]}],\n"
    " \"program\": [{\"op\": \"loop\", \"var\": \"t\", \"count\": \"1\", "
    "\"timed\": true, \"body\": [\n"
    "  {\"op\": \"index\", \"task\": \"k\", \"domain\": [\"2\"], \"args\": "
    "[{\"part\": \"d\", \"proj\": \"identity\", \"priv\": \"RO\"}]},\n"
    "  {\"op\": \"fill\", \"part\": \"d\", \"proj\": [\"t + 1\"]}]}]}\n";

static void test_grid_lists(void **state) {
  fixture *f = *state;
  mapopt_app *app = load(f, "g.json", G);
  mapopt_app_options o = {NULL, -1, -1, 0, 0};
  /* The fill writes colour 1, which covers atom 5 only partly. */
  assert_string_equal(
      inst_err(f, app, &o),
      "g.json:7:3: error: the fill's requirement 0 writes (WD) through "
      "partition \"d\" colour 1, which covers only 2 of the 5 elements of "
      "atom 5 (writes need whole atoms)");
  mapopt_app_free(app);
  app = load(f, "g.json", edit(G, ", \"count\": \"2\"", ""));
  mapopt_app_run *run = inst(f, app, NULL);
  assert_int_equal(run->nops, 3);
  /* Colour 0: atom (0, 1) = 3, linear atom 4; (3, 0) is off the grid. */
  expect_atoms(run->ops[0].reqs[0].piece, 2, (int64_t[]){3, 4},
               (int64_t[]){5, 5});
  expect_atoms(run->ops[1].reqs[0].piece, 2, (int64_t[]){4, 5},
               (int64_t[]){5, 5});
  const mapopt_app_op *fill = &run->ops[2];
  assert_int_equal(fill->kind, MAPOPT_OP_FILL);
  assert_int_equal(fill->reqs[0].piece->color, 1);
  assert_int_equal(fill->reqs[0].priv, MAPOPT_PRIV_WD);
  assert_int_equal(fill->reqs[0].bytes, 10 * 4);
  expect_names(&fill->reqs[0], (const char *[]){"d", "g", NULL});
  assert_true(fill->timing.timed); /* no warm-up given */
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  round_trip(f, "g.json", edit(G, ", \"count\": \"2\"", ""), NULL);
}

/* ---- derived parameters and the settings line
 * (docs/apps.md, "Derived parameters") ---------------------------------- */

/* M with derived parameters given in an order that is not the order of
 * evaluation (c uses b, which uses a), used by the time-step loop's
 * flops and by the log's settings line. */
#define DERIVED_OF_M                                                           \
  "\"derived\": {\"c\": \"b * 2\", \"b\": \"a + T\", \"a\": \"n - 1\", "       \
  "\"d\": \"nodes * gpus + c\"},\n"

static const char *with_derived(const char *derived, const char *timing) {
  static char buf[1 << 15];
  const char *sizes = "\"sizes\":";
  const char *p = strstr(M, sizes);
  assert_non_null(p);
  snprintf(buf, sizeof buf, "%.*s%s%s%s", (int)(p - M), M, derived,
           timing ? timing : "", p);
  return buf;
}

static void test_derived(void **state) {
  fixture *f = *state;
  static const char *const timing =
      "\"timing\": {\"mode\": \"window\", \"metric\": \"time\", \"flops\": "
      "\"d\", \"log_settings\": \"c={c} per tile={n / T} d={d}\"},\n";
  char text[1 << 15];
  snprintf(text, sizeof text, "%s", with_derived(DERIVED_OF_M, timing));
  mapopt_app *app = load(f, "d.json", text);
  /* a = 63, b = 67, c = 134; d = 1 * 4 + 134 without a machine. */
  mapopt_app_run *run = inst(f, app, NULL);
  assert_int_equal(run->flops_per_iteration, 138);
  assert_string_equal(run->log_settings, "c=134 per tile=16 d=138");
  assert_int_equal(run->nparams, 3); /* derived ones are not set: not listed */
  mapopt_app_run_free(run);
  /* A size and an override change what they are derived from. */
  run = inst(f, app, "small,T=2");
  assert_int_equal(run->flops_per_iteration, 4 + 2 * (16 - 1 + 2));
  assert_string_equal(run->log_settings, "c=34 per tile=8 d=38");
  mapopt_app_run_free(run);
  mapopt_app_machine mach = {3, 2, 1};
  mapopt_app_options o = {NULL, -1, -1, 0, 0};
  assert_int_equal(mapopt_app_instantiate(app, &o, &mach, f->diags, &run),
                   MAPOPT_OK);
  assert_int_equal(run->flops_per_iteration, 3 * 2 + 134);
  mapopt_app_run_free(run);
  /* Setting one is an error, not an override. */
  mapopt_app_options set = {"c=5", -1, -1, 0, 0};
  assert_string_equal(inst_err(f, app, &set),
                      "d.json: error: parameter \"c\" of \"m\" is derived: it "
                      "is computed from its expression, not set");
  mapopt_app_free(app);
  round_trip(f, "d.json", text, "small");
  oom_model(f, "d.json", text);

  static const err_case load_cases[] = {
      {"\"a\": \"n - 1\"", "\"a\": \"n - zz\"",
       "m.json:3:51: error: undefined name \"zz\" in expression \"n - zz\""},
      {"\"a\": \"n - 1\"", "\"a\": \"c0\"",
       "m.json:3:47: error: undefined name \"c0\" in expression \"c0\""},
      {"\"a\": \"n - 1\"", "\"a\": \"elems(0)\"",
       "m.json:3:47: error: elems() is only allowed in task costs and "
       "requirement annotations (expression \"elems(0)\")"},
      {"\"a\": \"n - 1\"", "\"a\": \"c - 1\"",
       "m.json:3:13: error: derived parameter \"c\" depends on itself: c -> b "
       "-> a -> c"},
      {"\"a\": \"n - 1\"", "\"a\": \"a\"",
       "m.json:3:41: error: derived parameter \"a\" depends on itself: a -> a"},
      {"\"a\": \"n - 1\"", "\"n\": \"T\"",
       "m.json:3:41: error: derived parameter \"n\" has the name of a "
       "parameter (a name is either set or derived)"},
      {"\"a\": \"n - 1\"", "\"gpus\": \"2\"",
       "m.json:3:41: error: derived parameter name \"gpus\" is reserved"},
      {"\"a\": \"n - 1\"", "\"a\": \"n /\"",
       "m.json:3:50: error: syntax error in expression \"n /\": expected an "
       "operand, got the end of the expression"},
      {"{\"n\": 16}", "{\"c\": 16}",
       "m.json:4:21: error: \"c\" in size \"small\" is a derived parameter: it "
       "is computed from its expression, not set"},
  };
  static const err_case settings_cases[] = {
      {"{n / T}", "{n / T",
       "m.json:3:84: error: '{' without '}' in \"log_settings\" of \"timing\""},
      {"{n / T}", "n / T}",
       "m.json:3:89: error: '}' without '{' in \"log_settings\" of "
       "\"timing\""},
      {"{n / T}", "{n / TT}",
       "m.json:3:89: error: undefined name \"TT\" in expression \"n / TT\""},
      {"\"log_settings\": \"c={c} per tile={n / T}\"", "\"log_settings\": 7",
       "m.json:3:68: error: \"log_settings\" in \"timing\" must be a string"},
  };
  static const char *const settings_timing =
      "\"timing\": {\"mode\": \"window\", \"log_settings\": \"c={c} per "
      "tile={n / T}\"},\n";
  int bad = 0;
  for (size_t i = 0; i < sizeof load_cases / sizeof load_cases[0]; i++) {
    snprintf(text, sizeof text, "%s", with_derived(DERIVED_OF_M, NULL));
    const char *got =
        load_err(f, edit(text, load_cases[i].from, load_cases[i].to));
    bad += mismatch("load", i, got, load_cases[i].want);
  }
  for (size_t i = 0; i < sizeof settings_cases / sizeof settings_cases[0];
       i++) {
    snprintf(text, sizeof text, "%s",
             with_derived("\"derived\": {\"c\": \"1\"},", settings_timing));
    const char *got =
        load_err(f, edit(text, settings_cases[i].from, settings_cases[i].to));
    bad += mismatch("settings", i, got, settings_cases[i].want);
  }
  /* Errors of the values, located in the derived parameter's expression,
   * whether or not anything uses it. */
  static const err_case inst_cases[] = {
      {"\"a\": \"n - 1\"", "\"a\": \"n / (T - 4)\"",
       "m.json:3:49: error: division by zero in expression \"n / (T - 4)\" "
       "(derived parameter \"a\")"},
      {"\"a\": \"n - 1\"", "\"a\": \"n * 4611686018427387904\"",
       "m.json:3:49: error: integer overflow in expression \"n * "
       "4611686018427387904\" (derived parameter \"a\")"},
  };
  for (size_t i = 0; i < sizeof inst_cases / sizeof inst_cases[0]; i++) {
    snprintf(text, sizeof text, "%s", with_derived(DERIVED_OF_M, NULL));
    mapopt_app *bad_app =
        load(f, "m.json", edit(text, inst_cases[i].from, inst_cases[i].to));
    mapopt_app_options none = {NULL, -1, -1, 0, 0};
    const char *got = inst_err(f, bad_app, &none);
    bad += mismatch("inst", i, got, inst_cases[i].want);
    mapopt_app_free(bad_app);
  }
  assert_int_equal(bad, 0);
}

/* An op has at most MAPOPT_APP_MAX_ARGS requirements: the loader refuses a
 * launch with more, and the simulator refuses a run that has one. */
static void test_max_args(void **state) {
  fixture *f = *state;
  char args[8192] = "";
  size_t len = 0;
  for (int i = 0; i <= MAPOPT_APP_MAX_ARGS; i++)
    len += (size_t)snprintf(args + len, sizeof args - len,
                            "%s{\"part\": \"p\", \"priv\": \"RO\"}",
                            i ? ", " : "");
  char to[8300];
  snprintf(to, sizeof to, "\"args\": [%s]", args);
  const char *text = edit(M,
                          "\"args\": [{\"part\": \"p\", \"priv\": \"RW\"}, "
                          "{\"part\": \"q\", \"priv\": \"RO\", \"fields\": "
                          "[\"a\"]}]",
                          to);
  assert_string_equal(load_err(f, text),
                      "m.json:14:57: error: index launch of \"t\" has 65 "
                      "arguments (at most 64, the requirements the simulator "
                      "tracks per task)");
  /* A run made some other way with one op over the limit. */
  mapopt_app *app = load(f, "m.json", M);
  mapopt_app_run *run = inst(f, app, NULL);
  mapopt_app_req reqs[MAPOPT_APP_MAX_ARGS + 1];
  const mapopt_app_op *t = NULL;
  for (int64_t i = 0; i < run->nops && !t; i++)
    if (run->ops[i].kind == MAPOPT_OP_TASK && run->ops[i].nreqs > 0)
      t = &run->ops[i];
  assert_non_null(t);
  for (int i = 0; i <= MAPOPT_APP_MAX_ARGS; i++)
    reqs[i] = t->reqs[0];
  mapopt_app_op *ops = calloc((size_t)run->nops, sizeof *ops);
  assert_non_null(ops);
  memcpy(ops, run->ops, (size_t)run->nops * sizeof *ops);
  mapopt_app_run over = *run;
  over.ops = ops;
  ops[t - run->ops].reqs = reqs;
  ops[t - run->ops].nreqs = MAPOPT_APP_MAX_ARGS + 1;
  mapopt_sim_plan *plan = NULL;
  assert_int_equal(mapopt_sim_plan_new(f->ctx, &over, &plan), MAPOPT_EINVAL);
  assert_null(plan);
  ops[t - run->ops].nreqs = MAPOPT_APP_MAX_ARGS; /* at the limit: accepted */
  assert_int_equal(mapopt_sim_plan_new(f->ctx, &over, &plan), MAPOPT_OK);
  mapopt_sim_plan_free(plan);
  free(ops);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expr_eval),
      cmocka_unit_test(test_expr_syntax),
      cmocka_unit_test_setup_teardown(test_load_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inst_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_heat1d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sizes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ring2, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fenced, setup, teardown),
      cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_task_info, setup, teardown),
      cmocka_unit_test_setup_teardown(test_run_getters, setup, teardown),
      cmocka_unit_test_setup_teardown(test_large_run, setup, teardown),
      cmocka_unit_test_setup_teardown(test_grid_lists, setup, teardown),
      cmocka_unit_test_setup_teardown(test_oom, setup, teardown),
      cmocka_unit_test_setup_teardown(test_derived, setup, teardown),
      cmocka_unit_test_setup_teardown(test_max_args, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
