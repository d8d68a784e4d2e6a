/*
 * AutoGuide's findings on the critical path's attribution (src/guide/
 * waits.c, docs/guide.md): findings are ranked by the time they cost, a
 * copy hidden behind work is no finding, reductions and folds are
 * findings of their own, every finding with a cost states it in time, and
 * suggestions are checked against the data flow and the machine.
 *
 * The cosma pair (mappers/cosma/alt-a-apart.map and alt-a-together.map)
 * differs only in where A_blk's home is: with it on the GPU whose
 * contribution to A_blk starts late, the run is 1.223x the expert; on
 * B_blk's GPUs, 1.000x. The slower one's first profile finding names
 * A_blk's folds and what they cost.
 *
 * Copies the path waits for side by side with the charged ones are a
 * finding of their own, and a copy that a read-only task in between
 * could make ahead of time offers that task's affinity/prefetch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "mapopt/mapopt.h"

#define C(x) MAPOPT_GUIDE_CODE_##x

/* The application app names (a built-in or a file, with its size); the
 * size in *spec. */
static mapopt_app *resolve(const char *app, const char **spec) {
  mapopt_app *a = NULL;
  *spec = NULL;
  mapopt_diags_clear(diags);
  if (mapopt_app_resolve(ctx, app, diags, &a, spec) != MAPOPT_OK)
    fixture_print_diags();
  assert_non_null(a);
  return a;
}

/* The findings on app (a built-in, with its size) under one of its
 * built-in mappers, on machine m (taken); the result in *res. */
static mapopt_findings *analyze(const char *app, mapopt_machine *m,
                                const char *mapper, mapopt_sim_result **res) {
  const char *spec;
  mapopt_app *a = resolve(app, &spec);
  const char *text = mapopt_app_builtin_mapper(mapopt_app_name(a), mapper);
  assert_non_null(text);
  return fixture_analyze_text(m, a, spec, text, res);
}

static mapopt_machine *machine(const char *name) {
  mapopt_machine *m = NULL;
  mapopt_diags_clear(diags);
  if (mapopt_machine_resolve(ctx, name, diags, &m) != MAPOPT_OK)
    fixture_print_diags();
  assert_non_null(m);
  return m;
}

/* The first profile finding (after the metric lines). */
static const mapopt_guide_finding *first_profile(const mapopt_findings *f) {
  for (size_t i = 0; i < mapopt_findings_count(f); i++) {
    const mapopt_guide_finding *g = mapopt_findings_get(f, i);
    if (g->category == MAPOPT_GUIDE_PERFORMANCE && g->code != C(EXEC_TIME) &&
        g->code != C(THROUGHPUT))
      return g;
  }
  return NULL;
}

static const mapopt_guide_finding *
find(const mapopt_findings *f, mapopt_guide_code code, const char *region) {
  for (size_t i = 0; i < mapopt_findings_count(f); i++) {
    const mapopt_guide_finding *g = mapopt_findings_get(f, i);
    if (g->code == code &&
        (!region || (g->region && !strcmp(g->region, region))))
      return g;
  }
  return NULL;
}

static bool has_kind(const mapopt_guide_finding *g, mapopt_guide_edit_kind k) {
  for (size_t i = 0; i < g->nedits; i++)
    if (g->edits[i].kind == k)
      return true;
  return false;
}

static void print_all(const mapopt_findings *f) {
  char *t;
  assert_int_equal(mapopt_guide_feedback(ctx, f, MAPOPT_GUIDE_FULL, &t),
                   MAPOPT_OK);
  print_message("%s", t);
  mapopt_text_free(t);
}

/* Every profile finding with a cost says it in time, with its share. */
static void expect_costs_in_time(const mapopt_findings *f) {
  for (size_t i = 0; i < mapopt_findings_count(f); i++) {
    const mapopt_guide_finding *g = mapopt_findings_get(f, i);
    if (g->code != C(COPY_BOUND) && g->code != C(REDUCTION_BOUND) &&
        g->code != C(PROCESSOR_WAIT))
      continue;
    if (!strstr(g->message, " ms (") || !strstr(g->message, "% of the run)")) {
      print_all(f);
      fail_msg("no time in: %s", g->message);
    }
  }
}

static void test_cosma_pair(void **state) {
  (void)state;
  mapopt_sim_result *slow_res, *fast_res;
  mapopt_findings *slow =
      analyze("cosma", machine("p100x4"), "alt-a-together", &slow_res);
  mapopt_findings *fast =
      analyze("cosma", machine("p100x4"), "alt-a-apart", &fast_res);
  /* The two runs differ by 1.223x. */
  assert_true(slow_res->elapsed_ns * 1000 > fast_res->elapsed_ns * 1220);
  /* The slower one's first finding: A_blk's folds, with their time. */
  const mapopt_guide_finding *g = first_profile(slow);
  if (!g || g->code != C(REDUCTION_BOUND)) {
    print_all(slow);
    fail();
  }
  assert_string_equal(g->task, "task_1");
  assert_string_equal(g->region, "A_blk");
  assert_non_null(strstr(g->message, "task_1 waits 571.6 ms (26% of the run) "
                                     "on the folds of task_4's contributions "
                                     "to A_blk"));
  /* Its first fix moves the home to where the last contribution is made,
   * with the time it would recover. */
  assert_non_null(strstr(g->suggest, "on GPU 2 of node 0 instead of GPU 0"));
  assert_non_null(strstr(g->suggest, "would recover up to 571.6 ms "
                                     "(estimate)"));
  /* The faster one's first finding is B_blk's copies: its folds wait less
   * than the copies do. */
  const mapopt_guide_finding *h = first_profile(fast);
  assert_non_null(h);
  assert_int_equal(h->code, C(COPY_BOUND));
  assert_string_equal(h->region, "B_blk");
  const mapopt_guide_finding *hf = find(fast, C(REDUCTION_BOUND), "A_blk");
  assert_non_null(hf);
  assert_non_null(strstr(hf->message, "171.4 ms"));
  /* Its fold is not of the last contribution: moving the home is not
   * offered. */
  assert_null(strstr(hf->suggest, "instead of"));
  /* Each piece of B_blk is read on two GPUs and written on one of them:
   * no placement is offered that claims to remove the copy. */
  assert_non_null(strstr(h->explain, "must cross whatever the placement"));
  assert_false(has_kind(h, MAPOPT_GUIDE_EDIT_INDEX_MAP));
  expect_costs_in_time(slow);
  expect_costs_in_time(fast);
  mapopt_findings_free(slow);
  mapopt_findings_free(fast);
  mapopt_sim_result_free(slow_res);
  mapopt_sim_result_free(fast_res);
}

/* The local fold of the cosma pair moves 8 GB without costing the path
 * anything: it is in the attribution as hidden, and no finding. Circuit
 * with reversed GPUs copies 17 MB between GPUs a run, which costs the
 * critical path under 1 ms: no copy finding. */
static void test_hidden_copies(void **state) {
  (void)state;
  mapopt_sim_result *res;
  mapopt_findings *f = analyze("cosma", machine("p100x4"), "alt-a-apart", &res);
  bool hidden = false;
  for (size_t i = 0; i < res->nwaits; i++) {
    const mapopt_sim_wait *w = &res->waits[i];
    if (w->cause == MAPOPT_SIM_CAUSE_FOLD &&
        w->channel == MAPOPT_CHAN_FB_LOCAL) {
      hidden = true;
      assert_int_equal(w->exposed_ns, 0);
      assert_int_equal(w->bytes, 8000000000);
    }
  }
  assert_true(hidden);
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
  f = analyze("circuit", machine("p100x4"), "alt-reverse-gpu", &res);
  assert_true(res->copies[MAPOPT_CHAN_FB_FB_PEER].bytes > 10000000);
  assert_null(find(f, C(COPY_BOUND), NULL));
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

/* A ZCMEM fix is offered only when ZCMEM can hold the data: on a p100x4
 * whose host memory for the GPUs holds 64 MiB, the 400 MB blocks do not
 * fit. */
static void test_memory_that_fits(void **state) {
  (void)state;
  mapopt_sim_result *res;
  mapopt_findings *f =
      analyze("cosma", machine("p100x4"), "alt-a-together", &res);
  const mapopt_guide_finding *g = find(f, C(REDUCTION_BOUND), "A_blk");
  assert_non_null(g);
  assert_non_null(strstr(g->suggest, "ZCMEM"));
  assert_true(has_kind(g, MAPOPT_GUIDE_EDIT_MEMORY));
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
  mapopt_machine *small = machine("p100x4");
  small->mems[MAPOPT_MEM_ZCMEM].capacity = 64 << 20;
  f = analyze("cosma", small, "alt-a-together", &res);
  g = find(f, C(REDUCTION_BOUND), "A_blk");
  assert_non_null(g);
  assert_null(strstr(g->suggest, "ZCMEM"));
  assert_false(has_kind(g, MAPOPT_GUIDE_EDIT_MEMORY));
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

/* ring2's relax streams its cells, which its copies move between GPUs:
 * host memory for them would cost relax's kernels more than the copies'
 * faster links would save, so it is not offered (cosma's task_2 writes
 * its B_blk blocks without reading them, and is offered it). */
static void test_memory_that_pays(void **state) {
  (void)state;
  mapopt_machine *m = machine("p100x4");
  mapopt_app *a = NULL;
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_app_resolve(ctx, MAPOPT_SOURCE_DIR "/apps/ring2.json",
                                      diags, &a, NULL),
                   MAPOPT_OK);
  mapopt_sim_result *res;
  mapopt_findings *f = fixture_analyze_text(m, a, NULL, "", &res);
  const mapopt_guide_finding *g = find(f, C(COPY_BOUND), "p_cells");
  if (!g)
    print_all(f);
  assert_non_null(g);
  assert_null(strstr(g->suggest, "ZCMEM"));
  assert_false(has_kind(g, MAPOPT_GUIDE_EDIT_MEMORY));
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
  f = analyze("cosma", machine("p100x4"), "alt-a-together", &res);
  g = find(f, C(COPY_BOUND), "B_blk");
  assert_non_null(g);
  assert_non_null(strstr(g->suggest, "`Region task_2 B GPU ZCMEM;`"));
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

/* On a machine without CPUs, a task that runs only on CPUs cannot be
 * placed by any Task line: AutoGuide says so and asks for CPUs in the
 * machine, with no edit of the mapper. */
static void test_machine_without_cpus(void **state) {
  (void)state;
  mapopt_sim_result *res;
  mapopt_findings *f =
      analyze("circuit", machine("nodes=2 gpu=4"), "expert", &res);
  assert_int_equal(res->error, MAPOPT_SIM_NO_VARIANT);
  const mapopt_guide_finding *g = find(f, C(NO_VARIANT), NULL);
  assert_non_null(g);
  assert_non_null(strstr(g->explain, "has no CPU processors"));
  assert_non_null(strstr(g->suggest, "`--machine 'nodes=2 gpu=4 cpu=8'`"));
  assert_int_equal(g->nedits, 0);
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

/* On the corpus's Cholesky with generate's tiles placed cyclically, trsm
 * waits on copies of tiles written on one GPU and first read on the
 * copy's destination: the fix "write each piece where it is first read"
 * carries the search's point-by-point form of it, affinity/consumer for
 * generate (whose reader, trsm, is no index launch like its own). */
static void test_first_read_affinity(void **state) {
  (void)state;
  static const char cyclic[] =
      "mo_gpu = Machine(GPU);\n"
      "def f(Task t) {\n"
      "    p = t.ipoint;\n    s = t.ispace;\n"
      "    q = (p[0] + s[0] * p[1]) % (mo_gpu.size[0] * mo_gpu.size[1]);\n"
      "    return mo_gpu[q / mo_gpu.size[1], q % mo_gpu.size[1]];\n}\n"
      "IndexTaskMap generate f;\n";
  const char *spec;
  mapopt_app *a =
      resolve(MAPOPT_SOURCE_DIR "/apps/corpus/cholesky.json", &spec);
  mapopt_sim_result *res;
  mapopt_findings *f =
      fixture_analyze_text(machine("p100x4"), a, spec, cyclic, &res);
  const mapopt_guide_finding *g = NULL;
  for (size_t i = 0; i < mapopt_findings_count(f) && !g; i++) {
    const mapopt_guide_finding *h = mapopt_findings_get(f, i);
    if (h->code == C(COPY_BOUND) && h->suggest &&
        strstr(h->suggest, "where it is first read"))
      g = h;
  }
  if (!g) {
    print_all(f);
    fail_msg("no finding says to write tiles where they are first read");
  }
  bool affinity = false;
  for (size_t i = 0; i < g->nedits; i++)
    affinity |= g->edits[i].kind == MAPOPT_GUIDE_EDIT_INDEX_MAP &&
                !strcmp(g->edits[i].task, "generate") &&
                !strcmp(g->edits[i].value, "affinity/consumer");
  assert_true(affinity);
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

/* The first finding of code on region (any when NULL) with an edit of the
 * index mapping of task to value, or NULL. */
static const mapopt_guide_finding *
with_map_edit(const mapopt_findings *f, mapopt_guide_code code,
              const char *region, const char *task, const char *value) {
  for (size_t i = 0; i < mapopt_findings_count(f); i++) {
    const mapopt_guide_finding *g = mapopt_findings_get(f, i);
    if (g->code != code ||
        (region && (!g->region || strcmp(g->region, region))))
      continue;
    for (size_t k = 0; k < g->nedits; k++)
      if (g->edits[k].kind == MAPOPT_GUIDE_EDIT_INDEX_MAP &&
          !strcmp(g->edits[k].task, task) && !strcmp(g->edits[k].value, value))
        return g;
  }
  return NULL;
}

/* The mapper that runs every nested task_4 where its parent runs: what
 * guided starts from on the GEMM models. */
static const char follow_parent[] =
    "mo_gpu = Machine(GPU);\n"
    "def mo_parent_gpu(Task t) {\n"
    "    return mo_gpu[*t.parent.processor(mo_gpu)];\n}\n"
    "SingleTaskMap task_4 mo_parent_gpu;\n";

static mapopt_findings *analyze_text(const char *app, const char *text,
                                     mapopt_sim_result **res) {
  const char *spec;
  mapopt_app *a = resolve(app, &spec);
  return fixture_analyze_text(machine("p100x4"), a, spec, text, res);
}

/* On pumma, task_4 waits on copies of B_half that taco_fill wrote on
 * another GPU; task_2 reads B in between and writes nothing, so the
 * finding offers to make the copy ahead of time through it: the edit
 * affinity/prefetch of task_2. */
static void test_prefetch_fix(void **state) {
  (void)state;
  mapopt_sim_result *res;
  mapopt_findings *f = analyze_text("pumma", follow_parent, &res);
  const mapopt_guide_finding *g =
      with_map_edit(f, C(COPY_BOUND), NULL, "task_2", "affinity/prefetch");
  if (!g || !strstr(g->suggest, "ahead of time")) {
    print_all(f);
    fail_msg("no copy finding offers task_2's prefetch");
  }
  expect_costs_in_time(f);
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

/* On solomonik, task_4 waits for B_chunk and C_chunk side by side; the
 * attribution charges one of them. The other is a finding too, ranked
 * after the charged one, and each offers its writer's affinity/consumer
 * (the reader of the earliest step takes the local read). */
static void test_copies_beside(void **state) {
  (void)state;
  mapopt_sim_result *res;
  mapopt_findings *f = analyze_text("solomonik", follow_parent, &res);
  const mapopt_guide_finding *b = with_map_edit(f, C(COPY_BOUND), NULL,
                                                "task_2", "affinity/consumer"),
                             *c = with_map_edit(f, C(COPY_BOUND), NULL,
                                                "task_3", "affinity/consumer");
  if (!b || !c) {
    print_all(f);
    fail_msg("not both writers' affinity/consumer offered");
  }
  const mapopt_guide_finding *charged = b->impact >= c->impact ? b : c,
                             *beside = charged == b ? c : b;
  assert_true(beside->impact < charged->impact);
  assert_non_null(strstr(beside->message, "also waits"));
  assert_non_null(strstr(beside->explain, "beside"));
  assert_null(strstr(charged->message, "also waits"));
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

/* cosma's default mapper on h100x8: the fold that holds task_1 back is
 * not of the last contribution (it is slow itself), so moving the home to
 * the last one is not claimed; a home where one contribution is made is
 * offered point by point (affinity/producer of task_1, which guided takes
 * to the expert's 187858 GFLOP/s per node from 171727). */
static void test_fold_home_producer(void **state) {
  (void)state;
  mapopt_sim_result *res;
  mapopt_findings *f = analyze("cosma", machine("h100x8"), "default", &res);
  const mapopt_guide_finding *g = with_map_edit(f, C(REDUCTION_BOUND), "A_blk",
                                                "task_1", "affinity/producer");
  if (!g || strstr(g->suggest, "instead of")) {
    print_all(f);
    fail_msg("no fold finding offers task_1's affinity/producer");
  }
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

/* The share of the run that the edit of g of kind on task (to value, any
 * when NULL) would recover by g's estimate; fails when g has no such edit. */
static double edit_share(const mapopt_guide_finding *g,
                         mapopt_guide_edit_kind kind, const char *task,
                         const char *value) {
  for (size_t k = 0; g && k < g->nedits; k++)
    if (g->edits[k].kind == kind && !strcmp(g->edits[k].task, task) &&
        (!value || !strcmp(g->edits[k].value, value)))
      return g->edits[k].share;
  fail_msg("no edit of %s to %s", task, value ? value : "any value");
  return -1;
}

/* cosma on p100x4 with A_blk's homes where the last contributions in
 * program order are made (GPUs 2 and 3) and B_blk's where its first
 * readers run: both contributions to A_blk[0, 1] wait for copies of B_blk.
 * The copy finding offers to write each piece of B_blk for another of its
 * readers (affinity/skewed of task_2), with an estimate no larger than the
 * finding's share. */
static void test_skewed_fix(void **state) {
  (void)state;
  static const char homes_late[] =
      "m = Machine(GPU);\n"
      "def home(Task t) { p = t.ipoint; a = (2, 3); return m[a[p[1]], 0]; }\n"
      "IndexTaskMap task_1 home;\n";
  mapopt_sim_result *res;
  mapopt_findings *f = analyze_text("cosma", homes_late, &res);
  const mapopt_guide_finding *g =
      with_map_edit(f, C(COPY_BOUND), "B_blk", "task_2", "affinity/skewed");
  if (!g || !strstr(g->suggest, "another of its readers")) {
    print_all(f);
    fail_msg("no copy finding offers task_2's affinity/skewed");
  }
  double share =
      edit_share(g, MAPOPT_GUIDE_EDIT_INDEX_MAP, "task_2", "affinity/skewed");
  assert_true(share > 0 && share <= g->impact);
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

/* cosma on p100x4 with B_blk skewed (homes on GPUs 0 and 3), A_blk's homes
 * where the contributions that wait for B_blk are made, but in host
 * memory: every fold crosses to ZCMEM, the last one too. The fold finding
 * offers A_blk's home back in the framebuffer (FBMEM, with task_1's
 * affinity/producer), and that fix's estimate ranks above the host-memory
 * fix of the larger copy finding: guided tries it first (1.223x the
 * expert, guided@10 on p100x4; trying B in ZCMEM first ends at 1.161x). */
static void test_fold_into_framebuffer(void **state) {
  (void)state;
  static const char in_host[] =
      "m = Machine(GPU);\n"
      "def home(Task t) { p = t.ipoint; a = (2, 1); return m[a[p[1]], 0]; }\n"
      "def skew(Task t) { p = t.ipoint; b = (0, 3); return m[b[p[2]], 0]; }\n"
      "IndexTaskMap task_1 home;\n"
      "IndexTaskMap task_2 skew;\n"
      "Region task_1 A_blk GPU ZCMEM;\n";
  mapopt_sim_result *res;
  mapopt_findings *f = analyze_text("cosma", in_host, &res);
  const mapopt_guide_finding *fold = NULL, *copy = NULL;
  for (size_t i = 0; i < mapopt_findings_count(f); i++) {
    const mapopt_guide_finding *g = mapopt_findings_get(f, i);
    if (g->code == C(REDUCTION_BOUND) && !fold &&
        has_kind(g, MAPOPT_GUIDE_EDIT_MEMORY))
      fold = g;
    if (g->code == C(COPY_BOUND) && !copy &&
        has_kind(g, MAPOPT_GUIDE_EDIT_MEMORY))
      copy = g;
  }
  if (!fold || !copy || !strstr(fold->suggest, "FBMEM")) {
    print_all(f);
    fail_msg("no fold finding offers A_blk's home in FBMEM");
  }
  double back = edit_share(fold, MAPOPT_GUIDE_EDIT_MEMORY, "task_1", "FBMEM");
  double host = edit_share(copy, MAPOPT_GUIDE_EDIT_MEMORY, "task_2", "ZCMEM");
  assert_true(copy->impact > fold->impact);
  assert_true(back > host);
  mapopt_findings_free(f);
  mapopt_sim_result_free(res);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cosma_pair),
      cmocka_unit_test(test_hidden_copies),
      cmocka_unit_test(test_memory_that_fits),
      cmocka_unit_test(test_memory_that_pays),
      cmocka_unit_test(test_machine_without_cpus),
      cmocka_unit_test(test_first_read_affinity),
      cmocka_unit_test(test_prefetch_fix),
      cmocka_unit_test(test_copies_beside),
      cmocka_unit_test(test_fold_home_producer),
      cmocka_unit_test(test_skewed_fix),
      cmocka_unit_test(test_fold_into_framebuffer),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
