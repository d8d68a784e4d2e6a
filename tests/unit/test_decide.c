/*
 * What the space rules out and what a mapper decides (src/tune/decide.c):
 * an InstanceLimit below the points one launch puts on a processor, a
 * memory too small for a launch's instances, an order a kernel forbids
 * and (simulated only) an alignment are ruled out and repaired for every
 * optimizer; two mappers that decide alike have one key, and the driver
 * evaluates no two proposals that decide alike.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "mapopt/tune.h"
#include "tune/tune.h"

#define HEAT MAPOPT_SOURCE_DIR "/apps/heat1d.json"

typedef struct target {
  fixture_target t;
  mapopt_space *sp;
  uint16_t choice[64];
} target;

static void target_open(target *g, const char *app, bool real_runs) {
  memset(g, 0, sizeof *g);
  fixture_target_open(ctx, diags, app, &g->t);
  mapopt_space_options so = {.real_runs = real_runs};
  assert_int_equal(mapopt_space_new(ctx, g->t.run, g->t.m, &so, diags, &g->sp),
                   MAPOPT_OK);
  assert_true(mapopt_space_nparams(g->sp) <= 64);
}

static void target_close(target *g) {
  mapopt_space_free(g->sp);
  fixture_target_close(&g->t);
}

/* Two regions of 1.5 GiB in four tiles, both read by every point of one
 * launch of four: either fits the 2 GiB of zero-copy memory, both do not
 * (the simulator runs out of memory with both there). */
static const char two_regions[] =
    "{\"format\": \"mapopt-app/1\", \"name\": \"two\",\n"
    " \"params\": {\"n\": 402653184, \"T\": 4, \"steps\": 2, \"warm\": 1},\n"
    " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},\n"
    " \"regions\": [\n"
    "  {\"name\": \"a\", \"fields\": [[\"x\", 4]], \"atoms\": {\"groups\": "
    "[{\"group\": \"tile\", \"count\": \"T\", \"elements\": \"n / T\"}]}},\n"
    "  {\"name\": \"b\", \"fields\": [[\"x\", 4]], \"atoms\": {\"groups\": "
    "[{\"group\": \"tile\", \"count\": \"T\", \"elements\": \"n / T\"}]}}],\n"
    " \"partitions\": [\n"
    "  {\"name\": \"pa\", \"region\": \"a\", \"kind\": \"group\", \"group\": "
    "\"tile\"},\n"
    "  {\"name\": \"pb\", \"region\": \"b\", \"kind\": \"group\", \"group\": "
    "\"tile\"}],\n"
    " \"tasks\": [{\"name\": \"work\", \"variants\": [{\"kind\": \"GPU\", "
    "\"flops\": \"elems(0)\", \"precision\": \"f32\"}]}],\n"
    " \"program\": [\n"
    "  {\"op\": \"fill\", \"region\": \"a\", \"fields\": [\"x\"]},\n"
    "  {\"op\": \"fill\", \"region\": \"b\", \"fields\": [\"x\"]},\n"
    "  {\"op\": \"loop\", \"var\": \"t\", \"count\": \"steps\", \"warmup\": "
    "\"warm\", \"timed\": true, \"body\": [\n"
    "   {\"op\": \"index\", \"task\": \"work\", \"domain\": [\"T\"], \"args\": "
    "[\n"
    "    {\"part\": \"pa\", \"priv\": \"RW\", \"fields\": [\"x\"]},\n"
    "    {\"part\": \"pb\", \"priv\": \"RO\", \"fields\": [\"x\"]}]}]}]}\n";

/* The app of JSON text json on p100x4, and its space. */
static void target_open_json(target *g, const char *json) {
  memset(g, 0, sizeof *g);
  assert_int_equal(mapopt_machine_resolve(ctx, "p100x4", diags, &g->t.m),
                   MAPOPT_OK);
  assert_int_equal(mapopt_app_load_json(ctx, "two.json", json, strlen(json),
                                        diags, &g->t.app),
                   MAPOPT_OK);
  mapopt_app_options ao = {.iterations = -1, .warmup = -1};
  assert_int_equal(
      mapopt_sim_instantiate(g->t.m, g->t.app, &ao, diags, &g->t.run),
      MAPOPT_OK);
  assert_int_equal(mapopt_space_new(ctx, g->t.run, g->t.m, NULL, diags, &g->sp),
                   MAPOPT_OK);
}

/* The index of parameter name, and of its value called value. */
static size_t param(const target *g, const char *name) {
  size_t i;
  assert_int_equal(mapopt_space_find(g->sp, name, &i), MAPOPT_OK);
  return i;
}

static uint16_t value(const target *g, size_t i, const char *v) {
  const mapopt_space_param *p = mapopt_space_param_at(g->sp, i);
  for (uint16_t k = 0; k < p->nvalues; k++)
    if (!strcmp(p->values[k], v))
      return k;
  fail_msg("%s has no value %s", p->name, v);
  return 0;
}

static mapopt__ruling ruling(const target *g, const char *name, const char *v) {
  size_t i = param(g, name);
  return mapopt__space_ruling(g->sp, g->choice, i, value(g, i, v));
}

/* Eight points of relax and of publish on four GPUs (or four CPUs): two
 * on each under the default placement and under cyclic; four points, one
 * on each. */
static void test_limit(void **state) {
  (void)state;
  target g;
  target_open(&g, HEAT ":T=8", false);
  assert_int_equal(ruling(&g, "limit.relax", "1"), MAPOPT__RULE_LIMIT);
  assert_int_equal(ruling(&g, "limit.relax", "2"), MAPOPT__RULE_NONE);
  assert_int_equal(ruling(&g, "limit.relax", "4"), MAPOPT__RULE_NONE);
  assert_int_equal(ruling(&g, "limit.relax", "default"), MAPOPT__RULE_NONE);
  size_t map = param(&g, "map.relax");
  g.choice[map] = value(&g, map, "cyclic");
  assert_int_equal(ruling(&g, "limit.relax", "1"), MAPOPT__RULE_LIMIT);
  /* As many CPUs as GPUs: two points on each too. */
  size_t kind = param(&g, "kind.relax");
  g.choice[kind] = value(&g, kind, "CPU");
  assert_int_equal(ruling(&g, "limit.relax", "1"), MAPOPT__RULE_LIMIT);
  assert_int_equal(ruling(&g, "limit.relax", "2"), MAPOPT__RULE_NONE);
  /* The repair: the first larger limit that holds; the rest untouched. */
  g.choice[kind] = 0;
  size_t lim = param(&g, "limit.relax"), plim = param(&g, "limit.publish");
  g.choice[lim] = value(&g, lim, "1");
  g.choice[plim] = value(&g, plim, "4");
  assert_int_equal(mapopt__space_ruled_out(g.sp, g.choice), lim);
  assert_int_equal(mapopt__space_make_feasible(g.sp, g.choice), 1);
  assert_string_equal(mapopt_space_param_at(g.sp, lim)->values[g.choice[lim]],
                      "2");
  assert_int_equal(g.choice[plim], value(&g, plim, "4"));
  assert_int_equal(g.choice[map], value(&g, map, "cyclic"));
  assert_int_equal(mapopt__space_ruled_out(g.sp, g.choice),
                   mapopt_space_nparams(g.sp));
  target_close(&g);
  target_open(&g, HEAT, false);
  assert_int_equal(ruling(&g, "limit.relax", "1"), MAPOPT__RULE_NONE);
  target_close(&g);
}

/* Four tiles of 1 GiB (2^28 cells of 16 bytes): together more than the
 * 2 GiB of zero-copy memory, each more than the 512 MiB of registered
 * memory; the edges fit anywhere. */
static void test_memory(void **state) {
  (void)state;
  target g;
  target_open(&g, HEAT ":n=268435456", false);
  assert_int_equal(ruling(&g, "memory.relax.p_cells.GPU", "ZCMEM"),
                   MAPOPT__RULE_MEMORY);
  assert_int_equal(ruling(&g, "memory.relax.p_cells.CPU", "RDMEM"),
                   MAPOPT__RULE_MEMORY);
  assert_int_equal(ruling(&g, "memory.relax.p_cells.CPU", "SOCKMEM"),
                   MAPOPT__RULE_NONE);
  assert_int_equal(ruling(&g, "memory.publish.p_out.GPU", "ZCMEM"),
                   MAPOPT__RULE_NONE);
  target_close(&g);
  /* The same tiles at the model's size (256 MiB) fit. */
  target_open(&g, HEAT, false);
  assert_int_equal(ruling(&g, "memory.relax.p_cells.GPU", "ZCMEM"),
                   MAPOPT__RULE_NONE);
  target_close(&g);
}

/* What the arguments put in one kind of memory must fit there together:
 * either region in zero-copy memory is kept, both are not (the one found
 * first goes back to the default); relax and publish read the same tiles
 * of heat1d, which count once. */
static void test_memory_together(void **state) {
  (void)state;
  target g;
  target_open_json(&g, two_regions);
  size_t a = param(&g, "memory.work.pa.GPU"),
         b = param(&g, "memory.work.pb.GPU");
  assert_int_equal(ruling(&g, "memory.work.pa.GPU", "ZCMEM"),
                   MAPOPT__RULE_NONE);
  assert_int_equal(ruling(&g, "memory.work.pb.GPU", "ZCMEM"),
                   MAPOPT__RULE_NONE);
  g.choice[b] = value(&g, b, "ZCMEM");
  assert_int_equal(mapopt__space_make_feasible(g.sp, g.choice), 0);
  g.choice[a] = value(&g, a, "ZCMEM");
  assert_int_equal(mapopt__space_make_feasible(g.sp, g.choice), 1);
  assert_int_equal(g.choice[a], 0);
  assert_int_equal(g.choice[b], value(&g, b, "ZCMEM"));
  target_close(&g);
  /* heat1d's cells at 2 GiB: a launch of relax or of publish fits, and the
   * two tasks share the pieces. */
  target_open(&g, HEAT ":n=134217728", false);
  assert_int_equal(ruling(&g, "memory.relax.p_cells.GPU", "ZCMEM"),
                   MAPOPT__RULE_NONE);
  size_t r = param(&g, "memory.relax.p_cells.GPU"),
         p = param(&g, "memory.publish.p_cells.GPU");
  g.choice[r] = value(&g, r, "ZCMEM");
  g.choice[p] = value(&g, p, "ZCMEM");
  assert_int_equal(mapopt__space_make_feasible(g.sp, g.choice), 0);
  target_close(&g);
}

/* relax's CPU variant requires its cells in F order (and AOS is written
 * C_order); an alignment only pads in the simulator, and stays in for
 * real runs. */
static void test_layout(void **state) {
  (void)state;
  target g;
  target_open(&g, HEAT, false);
  assert_int_equal(ruling(&g, "order.cells", "C_order"), MAPOPT__RULE_ORDER);
  assert_int_equal(ruling(&g, "soa.cells", "AOS"), MAPOPT__RULE_ORDER);
  assert_int_equal(ruling(&g, "order.edges", "C_order"), MAPOPT__RULE_NONE);
  assert_int_equal(ruling(&g, "align.cells", "64"), MAPOPT__RULE_PADDING);
  target_close(&g);
  target_open(&g, HEAT, true);
  assert_int_equal(ruling(&g, "align.cells", "64"), MAPOPT__RULE_NONE);
  assert_int_equal(ruling(&g, "order.cells", "C_order"), MAPOPT__RULE_ORDER);
  target_close(&g);
}

/* random proposes only what the space does not rule out. */
static void test_random_feasible(void **state) {
  (void)state;
  target g;
  target_open(&g, HEAT ":T=8", false);
  mapopt_optimizer_options oo = {.seed = 3, .budget = 40};
  mapopt_optimizer *opt;
  assert_int_equal(mapopt_optimizer_new(ctx, "random", g.sp, &oo, &opt),
                   MAPOPT_OK);
  size_t lim = param(&g, "limit.relax");
  for (int k = 0; k < 40; k++) {
    mapopt_candidate c;
    assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_OK);
    assert_int_equal(mapopt__space_ruled_out(g.sp, c.choice),
                     mapopt_space_nparams(g.sp));
    assert_string_not_equal(
        mapopt_space_param_at(g.sp, lim)->values[c.choice[lim]], "1");
    mapopt_evaluation e = {.status = MAPOPT_TUNE_OK, .score = 1};
    assert_int_equal(mapopt_optimizer_tell(opt, &c, &e), MAPOPT_OK);
    mapopt_candidate_clear(ctx, &c);
  }
  mapopt_optimizer_free(opt);
  target_close(&g);
}

/* The key of what text decides (MAPOPT_OK expected). */
static uint64_t key_of(const target *g, const char *text) {
  mapopt_machine_shape shape;
  mapopt_sim_shape(g->t.m, g->t.run, &shape);
  mapopt_dsl_options o = {.file = "t.map", .shape = &shape};
  mapopt_program *prog;
  assert_int_equal(
      mapopt_dsl_compile(ctx, text, strlen(text), &o, diags, &prog), MAPOPT_OK);
  uint64_t key;
  assert_int_equal(mapopt__space_decisions(g->sp, prog, &key), MAPOPT_OK);
  mapopt_dsl_free(prog);
  return key;
}

#define CYCLIC                                                                 \
  "m = Machine(GPU);\n"                                                        \
  "def f(Task t) {\n"                                                          \
  "    return m[0, t.ipoint[0] % m.size[1]];\n"                                \
  "}\n"

/* Four points on four GPUs: cyclic, block and the default place each on
 * its own GPU, so mappers that differ only in that decide alike. */
static void test_decisions(void **state) {
  (void)state;
  target g;
  target_open(&g, HEAT, false);
  uint64_t none = key_of(&g, "Task * GPU, OMP, CPU, IO, PY, PROC;\n");
  assert_true(key_of(&g, "Task relax GPU;\nTask publish GPU;\n") == none);
  assert_true(key_of(&g, CYCLIC "IndexTaskMap relax f;\n") == none);
  /* What differs: a kind, a memory, a placement, a limit, a layout. */
  assert_true(key_of(&g, "Task relax CPU;\n") != none);
  assert_true(key_of(&g, "Region relax p_cells GPU ZCMEM;\n") != none);
  assert_true(key_of(&g, "m = Machine(GPU);\n"
                         "def f(Task t) {\n    return m[0, 0];\n}\n"
                         "IndexTaskMap relax f;\n") != none);
  assert_true(key_of(&g, "InstanceLimit relax 2;\n") != none);
  assert_true(key_of(&g, "Layout * cells * SOA F_order;\n") !=
              key_of(&g, "Layout * cells * AOS C_order;\n"));
  target_close(&g);
}

/* No two evaluations of a run decide alike: on four points and four
 * GPUs, guided's neighbours of the default placement (cyclic, block, ...)
 * differ from it in text and not in effect, and the driver tells them as
 * duplicates instead of evaluating them. */
static void test_no_semantic_repeat(void **state) {
  (void)state;
  target g;
  target_open(&g, HEAT, false);
  char path[64];
  mapopt_tune_db *db = fixture_db_new(path);
  mapopt_tune_problem p = {g.t.m, g.t.run, NULL, NULL, NULL};
  mapopt_tune_config c = {.app = "heat1d",
                          .machine = "p100x4",
                          .optimizer = "guided",
                          .budget = 30};
  mapopt_tune_options o = {.jobs = 2};
  mapopt_tune_outcome out = {0};
  assert_int_equal(mapopt_tune_run(ctx, db, &p, &c, &o, diags, &out),
                   MAPOPT_OK);
  print_message("%lld evaluations, %lld duplicates\n",
                (long long)out.evaluations, (long long)out.duplicates);
  assert_true(out.evaluations >= 10 && out.evaluations <= 30);
  assert_true(out.duplicates > 0);
  uint64_t keys[30];
  size_t nkeys = 0;
  for (int64_t i = 0; i < out.evaluations; i++) {
    mapopt_tune_eval_info *e;
    assert_int_equal(mapopt_tune_db_evaluation(db, out.run, i, diags, &e),
                     MAPOPT_OK);
    if (e->status == MAPOPT_TUNE_OK) {
      uint64_t k = key_of(&g, e->text);
      for (size_t j = 0; j < nkeys; j++)
        assert_true(keys[j] != k);
      keys[nkeys++] = k;
    }
    mapopt_tune_eval_info_free(ctx, e);
  }
  assert_true(nkeys > 10);
  mapopt_tune_outcome_clear(&out);
  fixture_db_drop(db, path);
  target_close(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_limit),
      cmocka_unit_test(test_memory),
      cmocka_unit_test(test_memory_together),
      cmocka_unit_test(test_layout),
      cmocka_unit_test(test_random_feasible),
      cmocka_unit_test(test_decisions),
      cmocka_unit_test(test_no_semantic_repeat),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
