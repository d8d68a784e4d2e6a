/*
 * Unit tests of the dsl module's program-level behaviour: allocation
 * failure during a whole compile (parse, check, load), concurrent queries,
 * memoization, evaluation traces, machine shapes and the default index
 * placement. Language conformance is covered by the golden files in
 * tests/dsl/.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mapopt/dsl.h"

#include "failing_alloc.h"

/* ---- allocation-failure injection ------------------------------------ */

static char *big_program(size_t *len) {
  /* Every construct that allocates: tables, globals, defs, comprehensions,
   * machine transformations, prints. */
  size_t cap = 1 << 16, n = 0;
  char *s = malloc(cap);
  n += (size_t)snprintf(s + n, cap - n,
                        "Task * GPU, OMP, CPU;\ng = Machine(GPU);\n"
                        "m = g.merge(0, 1).split(0, 2);\n"
                        "a = g.auto_split(0, (4, 4));\n");
  for (int i = 0; i < 40; i++)
    n += (size_t)snprintf(
        s + n, cap - n,
        "Region t%d r%d GPU FBMEM, ZCMEM;\nLayout t%d * * SOA C_order "
        "Align==64;\ndef f%d(Task t) {\n    i = t.ipoint[0] + %d;\n"
        "    v = tuple(x * 2 for x in (i, %d));\n"
        "    return g[i %% g.size[0], v[0] %% g.size[1]];\n}\n"
        "IndexTaskMap t%d f%d;\nx%d = (%d, %d) + (1, 2);\n",
        i, i, i, i, i, i, i, i, i, i, i);
  n += (size_t)snprintf(s + n, cap - n, "print(\"{} {}\", a, x3);\n");
  *len = n;
  return s;
}

static void quiet(void *ud, const char *line) {
  (void)ud;
  (void)line;
}

static void test_alloc_failure_every_n(void **state) {
  (void)state;
  size_t len;
  char *text = big_program(&len);
  mapopt_dsl_options opts = {.file = "big.map", .print = quiet};
  long n;
  for (n = 1;; n++) {
    failing_alloc fa = {.left = n - 1};
    mapopt_ctx *ctx;
    if (mapopt_ctx_new(failing_realloc, &fa, &ctx) != MAPOPT_OK) {
      assert_int_equal(fa.live, 0);
      continue;
    }
    mapopt_diags *diags;
    if (mapopt_diags_new(ctx, &diags) != MAPOPT_OK) {
      mapopt_ctx_free(ctx);
      assert_int_equal(fa.live, 0);
      continue;
    }
    mapopt_program *prog = NULL;
    mapopt_status st = mapopt_dsl_compile(ctx, text, len, &opts, diags, &prog);
    bool done = !fa.failed; /* the failure point was never reached */
    if (st == MAPOPT_OK) {
      assert_non_null(prog);
      mapopt_dsl_free(prog);
    } else {
      /* A failed allocation is reported as such, never as a bogus error. */
      assert_int_equal(st, MAPOPT_ENOMEM);
    }
    mapopt_diags_free(diags);
    mapopt_ctx_free(ctx);
    assert_int_equal(fa.live, 0);
    if (done) {
      assert_int_equal(st, MAPOPT_OK);
      break;
    }
  }
  print_message("compile succeeded from allocation %ld on\n", n);
  assert_true(n > 20); /* the program really allocates */
  free(text);
}

/* ---- queries ---------------------------------------------------------- */

static mapopt_program *compile(mapopt_ctx *ctx, const char *text,
                               const char *shape_text, bool no_memo) {
  mapopt_machine_shape shape;
  char err[128];
  assert_int_equal(mapopt_shape_parse(shape_text, &shape, err, sizeof err),
                   MAPOPT_OK);
  mapopt_diags *diags;
  assert_int_equal(mapopt_diags_new(ctx, &diags), MAPOPT_OK);
  mapopt_dsl_options opts = {
      .file = "m.map", .shape = &shape, .no_memo = no_memo};
  mapopt_program *prog = NULL;
  mapopt_status st =
      mapopt_dsl_compile(ctx, text, strlen(text), &opts, diags, &prog);
  if (st != MAPOPT_OK) {
    char line[512];
    for (size_t i = 0; i < mapopt_diags_count(diags); i++) {
      mapopt_diag_format(mapopt_diags_get(diags, i), line, sizeof line);
      print_error("%s\n", line);
    }
  }
  assert_int_equal(st, MAPOPT_OK);
  mapopt_diags_free(diags);
  return prog;
}

static const char tile2d[] =
    "g = Machine(GPU);\n"
    "def owner(IPoint p, ISpace s, MSpace m, int i, int j) {\n"
    "    return p[i] * m.size[j] / s[i];\n}\n"
    "def wrap(IPoint p, MSpace m, int i, int j) { return p[i] % m.size[j]; }\n"
    "def tile2d(Task t) {\n"
    "    a = g.auto_split(0, t.ispace);\n"
    "    b = a.auto_split(2, t.ispace / a[:-1]);\n"
    "    hi = tuple(owner(t.ipoint, t.ispace, b, k, k) for k in (0, 1));\n"
    "    lo = tuple(wrap(t.ipoint, b, k, k + 2) for k in (0, 1));\n"
    "    return b[*hi, *lo];\n}\n"
    "IndexTaskMap tile tile2d;\n";

typedef struct worker {
  const mapopt_program *prog;
  int64_t nodes[64];
  int64_t procs[64];
  int failures;
} worker;

static void *query_all(void *arg) {
  worker *w = arg;
  for (int rep = 0; rep < 50; rep++)
    for (int64_t i = 0; i < 8; i++)
      for (int64_t j = 0; j < 8; j++) {
        int64_t pt[2] = {i, j}, sp[2] = {8, 8};
        mapopt_map_answer ans;
        if (mapopt_policy_index_map(w->prog, "tile", 2, pt, sp, MAPOPT_PROC_GPU,
                                    &ans, NULL) != MAPOPT_OK) {
          w->failures++;
          continue;
        }
        w->nodes[i * 8 + j] = ans.points[0].node;
        w->procs[i * 8 + j] = ans.points[0].proc;
      }
  return NULL;
}

/* Several threads query one program at once and agree with one thread,
 * with and without memoization. */
static void test_concurrent_queries(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  for (int memo = 0; memo < 2; memo++) {
    mapopt_program *prog = compile(ctx, tile2d, "nodes=4 gpu=4", memo == 0);
    worker ref = {prog, {0}, {0}, 0};
    query_all(&ref);
    assert_int_equal(ref.failures, 0);
    pthread_t th[4];
    worker w[4];
    for (int t = 0; t < 4; t++) {
      w[t] = (worker){prog, {0}, {0}, 0};
      assert_int_equal(pthread_create(&th[t], NULL, query_all, &w[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
      pthread_join(th[t], NULL);
      assert_int_equal(w[t].failures, 0);
      assert_memory_equal(w[t].nodes, ref.nodes, sizeof ref.nodes);
      assert_memory_equal(w[t].procs, ref.procs, sizeof ref.procs);
    }
    /* 16 GPUs over an 8x8 domain: every GPU gets 4 points. */
    int per[16] = {0};
    for (int k = 0; k < 64; k++)
      per[ref.nodes[k] * 4 + ref.procs[k]]++;
    for (int k = 0; k < 16; k++)
      assert_int_equal(per[k], 4);
    mapopt_dsl_free(prog);
  }
  mapopt_ctx_free(ctx);
}

/* A memoized mapping error is reported again, identically, on a hit. */
/* Memoized answers are those of an unmemoized program, whatever the order
 * of the launches asked: two tasks with their own functions, one without,
 * launches of 25 widths (75 launches: more than the launch memo keeps, so
 * the last ones go to the point memo alone), asked three times over. */
static void test_launch_memo(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  static const char text[] =
      "g = Machine(GPU);\n"
      "def blk(Task t) { return g[t.ipoint[0] * 2 / t.ispace[0],"
      " t.ipoint[0] % 4]; }\n"
      "def nxt(Task t) { return g[(t.ipoint[0] + 1) % 2,"
      " (t.ipoint[0] + t.ispace[0]) % 4]; }\n"
      "IndexTaskMap a blk;\nIndexTaskMap b nxt;\n";
  mapopt_program *memo = compile(ctx, text, "nodes=2 gpu=4", false);
  mapopt_program *plain = compile(ctx, text, "nodes=2 gpu=4", true);
  static const char *const tasks[] = {"a", "b", "c"};
  int checked = 0;
  for (int round = 0; round < 3; round++)
    for (int64_t w = 1; w <= 25; w++)
      for (int t = 0; t < 3; t++)
        for (int64_t p = 0; p < w; p++) {
          int64_t pt[1] = {p}, sp[1] = {w};
          mapopt_map_answer x, y;
          assert_int_equal(mapopt_policy_index_map(memo, tasks[t], 1, pt, sp,
                                                   MAPOPT_PROC_GPU, &x, NULL),
                           MAPOPT_OK);
          assert_int_equal(mapopt_policy_index_map(plain, tasks[t], 1, pt, sp,
                                                   MAPOPT_PROC_GPU, &y, NULL),
                           MAPOPT_OK);
          assert_int_equal(x.kind, y.kind);
          if (x.kind == MAPOPT_MAP_UNSPECIFIED)
            continue;
          assert_int_equal(x.points[0].node, y.points[0].node);
          assert_int_equal(x.points[0].proc, y.points[0].proc);
          checked++;
        }
  assert_int_equal(checked, 3 * 2 * (25 * 26 / 2));
  mapopt_dsl_free(memo);
  mapopt_dsl_free(plain);
  mapopt_ctx_free(ctx);
}

static void test_memoized_error(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt_program *prog = compile(
      ctx,
      "g = Machine(GPU);\ndef bad(Task t) { return g[0, t.ipoint[0]]; }\n"
      "IndexTaskMap step bad;\n",
      "nodes=2 gpu=4", false);
  mapopt_diags *diags;
  assert_int_equal(mapopt_diags_new(ctx, &diags), MAPOPT_OK);
  int64_t pt[1] = {4}, sp[1] = {8};
  mapopt_map_answer ans;
  char first[3][256], line[256];
  for (int round = 0; round < 2; round++) {
    mapopt_diags_clear(diags);
    assert_int_equal(mapopt_policy_index_map(prog, "step", 1, pt, sp,
                                             MAPOPT_PROC_GPU, &ans, diags),
                     MAPOPT_EMAP);
    /* The error, its hint (N08) and its context note (N02). */
    assert_int_equal(mapopt_diags_count(diags), 3);
    for (int i = 0; i < 3; i++) {
      mapopt_diag_format(mapopt_diags_get(diags, (size_t)i), line, sizeof line);
      if (round == 0)
        strcpy(first[i], line);
      else
        assert_string_equal(first[i], line);
    }
  }
  assert_string_equal(first[0], "m.map:2:27: mapping error: Slice processor "
                                "index out of bound! 4 >= 4");
  assert_string_equal(first[1], "m.map:2:27: note: index [0, 4] is outside "
                                "the machine model's size (2, 4) "
                                "(Machine(GPU): (2, 4))");
  assert_string_equal(first[2], "m.map: note: while placing point (4,) of "
                                "task 'step' with 'bad'");
  mapopt_diags_free(diags);
  mapopt_dsl_free(prog);
  mapopt_ctx_free(ctx);
}

typedef struct lines {
  char text[16][128];
  int n;
} lines;

static void collect(void *ud, const char *line) {
  lines *l = ud;
  if (l->n < 16)
    snprintf(l->text[l->n++], sizeof l->text[0], "%s", line);
}

static void test_trace(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  assert_int_equal(mapopt_diags_new(ctx, &diags), MAPOPT_OK);
  const char *text = "g = Machine(GPU);\n"
                     "def two(int i) { return i * 2; }\n"
                     "def f(Task t) {\n    i = two(t.ipoint[0]);\n"
                     "    return g[0, i % 4];\n}\nIndexTaskMap step f;\n";
  lines tr = {.n = 0};
  mapopt_dsl_options opts = {
      .file = "m.map", .trace = collect, .trace_ud = &tr};
  mapopt_program *prog;
  assert_int_equal(
      mapopt_dsl_compile(ctx, text, strlen(text), &opts, diags, &prog),
      MAPOPT_OK);
  int64_t pt[1] = {3}, sp[1] = {8};
  mapopt_map_answer ans;
  assert_int_equal(mapopt_policy_index_map(prog, "step", 1, pt, sp,
                                           MAPOPT_PROC_GPU, &ans, diags),
                   MAPOPT_OK);
  assert_int_equal(tr.n, 3);
  assert_string_equal(tr.text[0], "  two 2:18: return 6");
  assert_string_equal(tr.text[1], "f 4:5: i = 6");
  assert_string_equal(tr.text[2], "f 5:5: return GPU(0, 2)");
  mapopt_dsl_free(prog);
  mapopt_diags_free(diags);
  mapopt_ctx_free(ctx);
}

static void test_shape_parse(void **state) {
  (void)state;
  mapopt_machine_shape s;
  char err[256];
  assert_int_equal(
      mapopt_shape_parse("nodes=2 gpu=4 cpu=8 omp=2", &s, err, sizeof err),
      MAPOPT_OK);
  assert_int_equal(s.nodes, 2);
  assert_int_equal(s.procs[MAPOPT_PROC_GPU], 4);
  assert_true(s.affinity[MAPOPT_PROC_GPU] & (1u << MAPOPT_MEM_ZCMEM));
  assert_false(s.affinity[MAPOPT_PROC_GPU] & (1u << MAPOPT_MEM_SYSMEM));
  char buf[256];
  mapopt_shape_format(&s, buf, sizeof buf);
  mapopt_machine_shape back;
  assert_int_equal(mapopt_shape_parse(buf, &back, err, sizeof err), MAPOPT_OK);
  assert_memory_equal(&s, &back, sizeof s);
  /* Errors name the key or value and its column. */
  assert_int_equal(mapopt_shape_parse("nodes=2 tpu=4", &s, err, sizeof err),
                   MAPOPT_EINVAL);
  assert_non_null(strstr(err, "column 9: unknown key 'tpu'"));
  assert_int_equal(mapopt_shape_parse("gpu=-1", &s, err, sizeof err),
                   MAPOPT_EINVAL);
  assert_int_equal(mapopt_shape_parse("gpu", &s, err, sizeof err),
                   MAPOPT_EINVAL);
  assert_int_equal(mapopt_shape_parse("nodes=0", &s, err, sizeof err),
                   MAPOPT_EINVAL);
  assert_int_equal(
      mapopt_shape_parse("gpu=99999999999999999999", &s, err, sizeof err),
      MAPOPT_EINVAL);
  /* TC: SYSMEM only. */
  assert_int_equal(mapopt_shape_parse("nodes=2 cpu=4 sockets=0 zcmem=0 "
                                      "rdmem=0",
                                      &s, err, sizeof err),
                   MAPOPT_OK);
  assert_int_equal(s.affinity[MAPOPT_PROC_CPU], 1u << MAPOPT_MEM_SYSMEM);
}

/* Examples of the default index placement (docs/dsl.md, "Defaults, all in
 * one place"). */
static void test_default_placement(void **state) {
  (void)state;
  for (int64_t l = 0; l < 8; l++) {
    int64_t node, proc, e = 8;
    mapopt_policy_default_index_place(1, &l, &e, 2, 4, &node, &proc);
    assert_int_equal(node, l / 4);
    assert_int_equal(proc, l % 4);
  }
  for (int64_t i0 = 0; i0 < 2; i0++)
    for (int64_t i1 = 0; i1 < 2; i1++) {
      int64_t p[2] = {i0, i1}, e[2] = {2, 2}, node, proc;
      mapopt_policy_default_index_place(2, p, e, 1, 4, &node, &proc);
      assert_int_equal(node, 0);
      assert_int_equal(proc, i0 + 2 * i1);
    }
  /* Uneven blocks: 10 points on 3 nodes x 2 GPUs stay within range. */
  for (int64_t l = 0; l < 10; l++) {
    int64_t node, proc, e = 10;
    mapopt_policy_default_index_place(1, &l, &e, 3, 2, &node, &proc);
    assert_in_range(node, 0, 2);
    assert_in_range(proc, 0, 1);
  }
}

/* A Region candidate list has no length limit: 300 memories a GPU cannot
 * address, then ZCMEM, select ZCMEM (a fixed buffer of 256 entries fell
 * back to FBMEM), and the list's full length is reported. */
static void test_long_memory_list(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  char text[4096] = "Region * r GPU ";
  for (int i = 0; i < 300; i++)
    strcat(text, "SOCKMEM, ");
  strcat(text, "ZCMEM;\n");
  mapopt_program *prog = compile(ctx, text, "nodes=1 gpu=4", false);
  const char *names[] = {"r"};
  mapopt_region_keys keys = {names, 1, 0};
  assert_int_equal(
      mapopt_policy_select_memory(prog, "t", &keys, MAPOPT_PROC_GPU),
      MAPOPT_MEM_ZCMEM);
  mapopt_mem_kind first[4];
  assert_int_equal(
      mapopt_policy_memory_list(prog, "t", &keys, MAPOPT_PROC_GPU, first, 4),
      301);
  assert_int_equal(first[3], MAPOPT_MEM_SOCKMEM);
  mapopt_dsl_free(prog);
  mapopt_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_alloc_failure_every_n),
      cmocka_unit_test(test_concurrent_queries),
      cmocka_unit_test(test_launch_memo),
      cmocka_unit_test(test_memoized_error),
      cmocka_unit_test(test_trace),
      cmocka_unit_test(test_shape_parse),
      cmocka_unit_test(test_default_placement),
      cmocka_unit_test(test_long_memory_list),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
