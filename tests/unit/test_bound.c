/*
 * The lower bound (docs/sim.md, "The lower bound"; src/sim/bound.c): the
 * folds a reduction cannot avoid on hand-built runs whose bound is worked
 * out by hand, and the bound at or below the elapsed time of every shipped
 * mapper and of random ones (a few here; the validation check `bound` runs
 * the full sweep).
 *
 * The machine is the fixture's "duo" (fixture.h): two GPUs, every task
 * 10000 ns, FB_FB_PEER 2 GB/s and FB_HOST 4 GB/s with 2000 ns latency, no
 * runtime costs; the GPUs reach only their framebuffers.
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
#include "sweep.h"

/* red over [points] reduces into S (1000 elements of 8 B, after a fill),
 * then use reads it; one timed iteration. */
#define APP_REDUCE(points)                                                     \
  "{\"format\": \"mapopt-app/1\", \"name\": \"t\", \"params\": {},"            \
  " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},"                 \
  " \"regions\": [{\"name\": \"S\", \"fields\": [[\"x\", 8]], \"atoms\":"      \
  " {\"groups\": [{\"group\": \"g\", \"count\": \"1\", \"elements\":"          \
  " \"1000\"}]}}], \"partitions\": [], \"tasks\": ["                           \
  " {\"name\": \"red\", \"variants\": [{\"kind\": \"GPU\"}]},"                 \
  " {\"name\": \"use\", \"variants\": [{\"kind\": \"GPU\"}]}],"                \
  " \"program\": [{\"op\": \"fill\", \"region\": \"S\", \"fields\": [\"x\"]}," \
  " {\"op\": \"loop\", \"var\": \"t\", \"count\": \"1\", \"warmup\": \"0\","   \
  " \"timed\": true, \"body\": ["                                              \
  " {\"op\": \"index\", \"task\": \"red\", \"domain\": [\"" points "\"],"      \
  " \"args\": [{\"region\": \"S\", \"priv\": \"REDUCE\", \"redop\": \"sum\","  \
  " \"fields\": [\"x\"], \"bytes\": \"0\"}]},"                                 \
  " {\"op\": \"single\", \"task\": \"use\", \"args\": [{\"region\": \"S\","    \
  " \"priv\": \"RO\", \"fields\": [\"x\"], \"bytes\": \"0\"}]}]}]}"

static mapopt_sim_result *run(const char *app) {
  return fixture_simulate_json(fixture_duo, app, "");
}

/*
 * Two contributions (red's points on GPUs 0 and 1, 0 .. 10000 each) to
 * the S use reads. Without the folds the bound is the chain red, use:
 * 20000. With them: were both reducers on the fold target's processor,
 * they would run one after the other (20000); with one or none there, a
 * contribution made elsewhere is folded across, at best over FB_HOST
 * (2000 + 8000 B at 4 GB/s = 4000 ns; a GPU reaches only its
 * framebuffer): 10000 + 4000 = 14000. The least of these, 14000, then use:
 * 24000. The run: the fold over the peer link (2000 + 4000 = 6000) ends
 * at 16000, use at 26000.
 */
static void test_fold_join(void **state) {
  (void)state;
  mapopt_sim_result *r = run(APP_REDUCE("2"));
  assert_int_equal(r->lower_bound_ns, 24000);
  assert_int_equal(r->elapsed_ns, 26000);
  mapopt_sim_result_free(r);
}

/* One contribution can be made on the fold target's processor: no fold
 * need cross, and the bound is the chain alone (20000). */
static void test_one_contribution(void **state) {
  (void)state;
  mapopt_sim_result *r = run(APP_REDUCE("1"));
  assert_int_equal(r->lower_bound_ns, 20000);
  assert_true(r->lower_bound_ns <= r->elapsed_ns);
  mapopt_sim_result_free(r);
}

/* Three (on GPUs 0, 0 and 1): with at most one of them on the fold
 * target's processor, the others' folds cross and end at 14000 at the
 * earliest; with two or three there, those run one after another (20000,
 * 30000). The least, 14000, then use: 24000 again. */
static void test_three_contributions(void **state) {
  (void)state;
  mapopt_sim_result *r = run(APP_REDUCE("3"));
  assert_int_equal(r->lower_bound_ns, 24000);
  assert_true(r->lower_bound_ns <= r->elapsed_ns);
  mapopt_sim_result_free(r);
}

/* Every shipped mapper and a few random ones of cosma (reductions) and
 * circuit (reductions into shared data) at their small size, on p100x4
 * and on a two-node machine: the bound holds. */
static void test_sweep_small(void **state) {
  (void)state;
  static const char *const apps[][2] = {{"cosma:small", "cosma"},
                                        {"circuit:small", "circuit"},
                                        {"solomonik:small", "solomonik"}};
  static const char *const machines[] = {"p100x4", "lassen:nodes=2"};
  for (size_t a = 0; a < 3; a++)
    for (size_t m = 0; m < 2; m++) {
      char dir[1024];
      snprintf(dir, sizeof dir, "%s/mappers/%s", MAPOPT_SOURCE_DIR, apps[a][1]);
      sweep_stats st;
      sweep_bound(ctx, apps[a][0], machines[m], dir, 10, 3, NULL, NULL, &st);
      print_message("%s on %s: %d shipped, %d of %d random valid, highest "
                    "efficiency %.3f\n",
                    apps[a][0], machines[m], st.shipped, st.random_valid,
                    st.random_draws, st.highest_eff);
      assert_true(st.shipped >= 2);
      assert_int_equal(st.random_valid, 10);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fold_join),
      cmocka_unit_test(test_one_contribution),
      cmocka_unit_test(test_three_contributions),
      cmocka_unit_test(test_sweep_small),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
