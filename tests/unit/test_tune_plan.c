/*
 * One plan per tuning run. mapopt_sim_plan_new is wrapped at link time
 * (tests/CMakeLists.txt links this test with --wrap): every optimizer --
 * guided, random, opentuner, ccd and llm (over the replay transport) --
 * with one job and with two, and the command evaluator (whose plan gives
 * each real run its simulated profile) build exactly one plan of the run,
 * however many candidates they evaluate. A plan built per evaluation, or
 * per worker, fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../llm/llm_fixture.h"
#include "fixture.h"
#include "mapopt/sim.h"
#include "mapopt/tune.h"

/* ---- the counted plan builder -------------------------------------------- */

static int plan_builds;

mapopt_status __real_mapopt_sim_plan_new(mapopt_ctx *c,
                                         const mapopt_app_run *run,
                                         mapopt_sim_plan **out);
mapopt_status __wrap_mapopt_sim_plan_new(mapopt_ctx *c,
                                         const mapopt_app_run *run,
                                         mapopt_sim_plan **out);

mapopt_status __wrap_mapopt_sim_plan_new(mapopt_ctx *c,
                                         const mapopt_app_run *run,
                                         mapopt_sim_plan **out) {
  __atomic_fetch_add(&plan_builds, 1, __ATOMIC_RELAXED);
  return __real_mapopt_sim_plan_new(c, run, out);
}

/* ---- tuning circuit:small on p100x4 -------------------------------------- */

/* Tunes with opt (its llm settings, a command, or NULL) for budget
 * evaluations on jobs workers; returns how many plans were built and
 * checks that more than one candidate was evaluated. */
static int builds_of(const fixture_target *w, const char *opt, int jobs,
                     const mapopt_tune_llm *llm,
                     const mapopt_tune_command *cmd) {
  char path[64];
  mapopt_tune_db *db = fixture_db_new(path);
  mapopt_tune_problem p = {
      w->m, w->run, mapopt_app_builtin_mapper("circuit", "expert"),
      mapopt_app_builtin_mapper("circuit", "default"), cmd};
  mapopt_tune_config c = {.app = "circuit",
                          .size = "small",
                          .machine = "p100x4",
                          .optimizer = opt,
                          .seed = 3,
                          .budget = 6,
                          .llm = llm};
  mapopt_tune_options o = {.jobs = jobs};
  mapopt_tune_outcome out;
  plan_builds = 0;
  mapopt_diags_clear(diags);
  mapopt_status st = mapopt_tune_run(ctx, db, &p, &c, &o, diags, &out);
  fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  int builds = plan_builds;
  if (out.evaluations < 2)
    fail_msg("%s, %d jobs: %lld evaluations", opt, jobs,
             (long long)out.evaluations);
  mapopt_tune_outcome_clear(&out);
  fixture_db_drop(db, path);
  return builds;
}

static void test_one_plan_per_run(void **state) {
  (void)state;
  fixture_target w;
  fixture_target_open(ctx, diags, "circuit:small", &w);
  static const char *const opts[] = {"guided", "random", "opentuner", "ccd"};
  for (int jobs = 1; jobs <= 2; jobs++)
    for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
      int builds = builds_of(&w, opts[k], jobs, NULL, NULL);
      if (builds != 1)
        fail_msg("%s, %d jobs: %d plans", opts[k], jobs, builds);
    }
  fixture_target_close(&w);
}

/* The llm optimizer, replies replayed: a mapper per ask. */
static void test_one_plan_llm(void **state) {
  (void)state;
  static const char *const mappers[] = {
      "Task * GPU, CPU;\nRegion * * GPU FBMEM;\n",
      "Task * GPU, CPU;\nRegion calculate_new_currents rp_ghost GPU ZCMEM;\n",
      "Task * CPU;\n",
      "Task * GPU, CPU;\nRegion * * GPU ZCMEM;\n",
      "Task * GPU, CPU;\nLayout * * * AOS;\n",
      "Task * GPU, CPU;\nRegion distribute_charge rp_shared GPU ZCMEM;\n",
      "Task * GPU, CPU;\nLayout * * * C_order;\n",
      "Task * GPU, CPU;\nRegion distribute_charge rp_ghost GPU ZCMEM;\n"};
  fixture_target w;
  fixture_target_open(ctx, diags, "circuit:small", &w);
  for (int jobs = 1; jobs <= 2; jobs++) {
    mapopt_llm_transport *t;
    assert_int_equal(mapopt_llm_replay_new(ctx, &t), MAPOPT_OK);
    for (size_t i = 0; i < sizeof mappers / sizeof *mappers; i++) {
      char reply[512];
      snprintf(reply, sizeof reply, "```mapper\n%s```\n", mappers[i]);
      const char *c = reply;
      char *body = llm_completion(1, &c, "stop", 1000, 100);
      assert_int_equal(mapopt_llm_replay_add(t, 200, NULL, body, strlen(body)),
                       MAPOPT_OK);
      free(body);
    }
    fake_time ft;
    mapopt_tune_llm llm = {.history = 2, .transport = t};
    mapopt_llm_config_init(&llm.client);
    llm.client.base_url = "http://llm.test/v1";
    llm.client.model = "unit-model";
    llm.client.api_key = "sk-unit";
    fake_time_use(&ft, &llm.client);
    int builds = builds_of(&w, "llm", jobs, &llm, NULL);
    if (builds != 1)
      fail_msg("llm, %d jobs: %d plans", jobs, builds);
    mapopt_llm_transport_free(t);
  }
  fixture_target_close(&w);
}

/* Real runs by a command: each candidate's profile is simulated on the one
 * plan. */
static void test_one_plan_command(void **state) {
  (void)state;
  fixture_target w;
  fixture_target_open(ctx, diags, "circuit:small", &w);
  mapopt_eval_options eo = {.run = "echo ELAPSED TIME = 1.0 s {mapper}"};
  mapopt_tune_command cmd = {.eval = &eo, .timeout_s = 30};
  for (int jobs = 1; jobs <= 2; jobs++) {
    int builds = builds_of(&w, "random", jobs, NULL, &cmd);
    if (builds != 1)
      fail_msg("command, %d jobs: %d plans", jobs, builds);
  }
  fixture_target_close(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_plan_per_run),
      cmocka_unit_test(test_one_plan_llm),
      cmocka_unit_test(test_one_plan_command),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
