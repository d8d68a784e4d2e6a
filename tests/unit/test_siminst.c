/*
 * Unit tests of the simulator's instances and reductions, end to end through
 * the public API on the tiny machine of test_sim.c (simcase.h): a ghost piece
 * copied in parts, the instance a requirement reuses, folds planned when the
 * reader maps and started by their own reducers, reduction instances reused
 * from step to step and shared by the reducers of one reduction, and an op
 * reducing an atom through two arguments. Expected values are computed by hand
 * in the comments, as in test_sim.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fixture.h"
#include "simcase.h"

/* ---- ghost partial copies ---------------------------------------------------
 */

/* Owners: index launch over [4] writes atom i (100 elements of 8 B) on
 * GPU i. Ghost: a list partition whose one piece overlaps atom 1 by 30
 * elements and atom 2 by 20 elements; a single task on GPU 0 reads it. */
/* E: P atoms of 100 elements of u (8 B); own: atom i as colour i; ghost
 * (one colour): 30 elements of atom 1 and 20 of atom 2. */
#define GHOST_REGION                                                           \
  "\"regions\": [{\"name\": \"E\", \"fields\": [[\"u\", 8]], \"atoms\":"       \
  " {\"groups\": [{\"group\": \"e\", \"count\": \"P\", \"elements\": "         \
  "\"100\"}]}}],"                                                              \
  "\"partitions\": ["                                                          \
  " {\"name\": \"own\", \"region\": \"E\", \"kind\": \"group\","               \
  "  \"group\": \"e\"},"                                                       \
  " {\"name\": \"ghost\", \"region\": \"E\", \"kind\": \"list\","              \
  "  \"colors\": [\"1\"], \"entries\": ["                                      \
  "   {\"group\": \"e\", \"atom\": \"1\", \"count\": \"30\"},"                 \
  "   {\"group\": \"e\", \"atom\": \"2\", \"count\": \"20\"}]}],"

static const char app_ghost[] = APP_HEAD("{\"P\": 4}") GHOST_REGION
    "\"tasks\": ["
    " {\"name\": \"w\", \"variants\": [{\"kind\": \"GPU\"}]},"
    " {\"name\": \"r\", \"variants\": [{\"kind\": "
    "\"GPU\"}]}]," LOOP1("{\"op\": \"index\", \"task\": \"w\", "
                         "\"domain\": [\"P\"],"
                         " \"args\": [{\"part\": \"own\", "
                         "\"priv\": \"WD\", \"fields\":"
                         " [\"u\"], \"bytes\": \"0\"}]},"
                         "{\"op\": \"single\", \"task\": \"r\", "
                         "\"args\": [{\"part\":"
                         " \"ghost\", \"proj\": [\"0\"], "
                         "\"priv\": \"RO\", \"fields\":"
                         " [\"u\"], \"bytes\": \"0\"}]}");

static void test_ghost_partial_copies(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_ghost, NULL, "");
  expect_ok(&c);
  /* Writers 0 .. 10000, point i on GPU i (4 points on 1 x 4 GPUs).
   * r on GPU 0 needs 30 x 8 = 240 B from FB1 (same socket, capped at
   * 3000 MB/s) and 20 x 8 = 160 B from FB2 (cross-socket, 2000). Both move
   * from 13000 (after the 3000 ns latency), sharing in[0] (4000 MB/s):
   * 2000 each. FB2's ends at 13000 + 160000 / 2000 = 13080; FB1's has
   * 240000 - 80 x 2000 = 80000 left, now at its cap of 3000:
   * ceil(80000 / 3000) = 27, ending at 13107. r 13107 .. 23107. */
  expect_copies(&c, MAPOPT_CHAN_FB_FB_PEER, 400, 2, 3107 + 3080);
  assert_int_equal(c.res->elapsed_ns, 23107);
  /* The ghost instance holds 50 elements x 8 B; the owner 100 x 8 B. */
  assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, 0)->peak_bytes, 800 + 400);
  sim_free(&c);
}

/* Instance reuse takes the first serving instance in
 * creation order, whichever piece it is of: a (both atoms of E, 2 x 50 x
 * 8 B) is made first; b asks for atom 0 alone aligned to 64 bytes, which
 * a is not, so it gets an instance of its own piece (50 x 8 + 63 B); c
 * asks for atom 0 without alignment: both serve it, and a, the older, is
 * the one it gets. */
static const char app_served_first[] = APP_HEAD(
    "{\"n\": 50}") "\"regions\": [{\"name\": \"E\", \"fields\": [[\"x\", 8]],"
                   " \"atoms\": {\"groups\": [{\"group\": \"g\", \"count\":"
                   " \"2\", \"elements\": \"n\"}]}}],"
                   "\"partitions\": ["
                   " {\"name\": \"both\", \"region\": \"E\", \"kind\": "
                   "\"list\","
                   "  \"colors\": [\"1\"], \"entries\": [{\"group\": \"g\","
                   "  \"atom\": \"0\"}, {\"group\": \"g\", \"atom\": \"1\"}]},"
                   " {\"name\": \"one\", \"region\": \"E\", \"kind\": \"list\","
                   "  \"colors\": [\"1\"], \"entries\": [{\"group\": \"g\","
                   "  \"atom\": \"0\"}]}],"
                   "\"tasks\": ["
                   " {\"name\": \"a\", \"variants\": [{\"kind\": \"GPU\"}]},"
                   " {\"name\": \"b\", \"variants\": [{\"kind\": \"GPU\"}]},"
                   " {\"name\": \"c\", \"variants\": [{\"kind\": \"GPU\"}]}],"
                   "\"program\": [{\"op\": \"fill\", \"region\": \"E\"},"
                   " {\"op\": \"loop\", \"var\": \"t\", \"count\": \"1\", "
                   "\"warmup\": \"0\","
                   "  \"timed\": true, \"body\": ["
                   "{\"op\": \"single\", \"task\": \"a\", \"args\": "
                   "[{\"part\":"
                   "  \"both\", \"proj\": [\"0\"], \"priv\": \"RO\", "
                   "\"fields\":"
                   "  [\"x\"]}]},"
                   " {\"op\": \"single\", \"task\": \"b\", \"args\": "
                   "[{\"part\":"
                   "  \"one\", \"proj\": [\"0\"], \"priv\": \"RO\", \"fields\":"
                   "  [\"x\"]}]},"
                   " {\"op\": \"single\", \"task\": \"c\", \"args\": "
                   "[{\"part\":"
                   "  \"one\", \"proj\": [\"0\"], \"priv\": \"RO\", \"fields\":"
                   "  [\"x\"]}]}]}]}";

static void test_instance_served_first(void **state) {
  (void)state;
  simcase c;
  mapopt_sim_options o = {.record_decisions = true};
  sim_opts(&c, tiny(), app_served_first, NULL, "Layout b * * SOA Align==64;",
           &o);
  expect_ok(&c);
  assert_int_equal(c.res->ndecisions, 3);
  assert_string_equal(c.res->decisions[1].task, "b");
  assert_int_equal(c.res->decisions[1].reqs[0].instance_bytes, 50 * 8 + 63);
  assert_string_equal(c.res->decisions[2].task, "c");
  assert_int_equal(c.res->decisions[2].reqs[0].instance_bytes, 2 * 50 * 8);
  sim_free(&c);
}

/* ---- reductions and folds ---------------------------------------------------
 */

/* red over [2] reduces into S (100 elements of 8 B): points on GPUs 0 and
 * 2 (default placement of 2 points on 4 GPUs: floor(i * 4 / 2)). Then a
 * single task on GPU 0 reads S. */
static const char app_fold[] = APP_HEAD("{\"n\": 100}") "\"regions\": [" REGION(
    "S", "8",
    "n") "], \"partitions\": [],"
         "\"tasks\": ["
         " {\"name\": \"red\", \"variants\": [{\"kind\": \"GPU\"}]},"
         " {\"name\": \"use\", \"variants\": [{\"kind\": \"GPU\"}]}],"
         "\"program\": [{\"op\": \"fill\", \"region\": \"S\", \"fields\":"
         " [\"x\"]}, {\"op\": \"loop\", \"var\": \"t\", \"count\": \"1\","
         " \"warmup\": \"0\", \"timed\": true, \"body\": ["
         "{\"op\": \"index\", \"task\": \"red\", \"domain\": [\"2\"],"
         " \"args\": [{\"region\": \"S\", \"priv\": \"REDUCE\", \"redop\":"
         " \"sum\", \"fields\": [\"x\"], \"bytes\": \"0\"}]},"
         "{\"op\": \"single\", \"task\": \"use\", \"args\": [{\"region\":"
         " \"S\", \"priv\": \"RO\", \"fields\": [\"x\"], \"bytes\": "
         "\"0\"}]}]}]}";

static void test_fold_reductions(void **state) {
  (void)state;
  simcase c;
  mapopt_sim_options o = {.record_decisions = true};
  sim_opts(&c, tiny(), app_fold, NULL, "", &o);
  expect_ok(&c);
  /* Reducers on GPU 0 and GPU 2, 0 .. 10000, each into a fresh 800 B
   * reduction instance. use on GPU 0 is the fold target; its copies are
   * planned when it maps (0), as Legion issues reduction copies:
   *   base first: the fill, 800 B on FB0's ce[0] at FB_LOCAL 100 GB/s:
   *   ceil(800 * 1000 / 100000) = 8 ns (fills pay no latency), 0 .. 8;
   *   then each fold when its own reducer completes (both at 10000),
   *   overlapping each other:
   *   FB0 -> FB0 (FB_LOCAL, ce[0]): 1000 + 8 = 1008, 10000 .. 11008;
   *   FB2 -> FB0 (cross-socket peer): 3000 + ceil(800000 / 2000) = 3400,
   *   on out[2] + in[0], 10000 .. 13400.
   * use: 13400 .. 23400. The two folds count in copies[FOLD]. */
  expect_copies(&c, FOLD, 1600, 2, 1008 + 3400);
  expect_copies(&c, FILL, 800, 1, 8);
  expect_copies(&c, MAPOPT_CHAN_FB_FB_PEER, 0, 0, 0);
  expect_copies(&c, MAPOPT_CHAN_FB_LOCAL, 0, 0, 0);
  assert_int_equal(c.res->elapsed_ns, 23400);
  /* Placement of the reducers. */
  assert_int_equal(c.res->ndecisions, 3);
  assert_int_equal(c.res->decisions[0].proc.proc, 0);
  assert_int_equal(c.res->decisions[1].proc.proc, 2);
  assert_int_equal(c.res->decisions[2].proc.proc, 0);
  sim_free(&c);
}

/* A reduction every step (the model of issue 23): scatter, over 4 points,
 * reduces into the next point's tile of acc (n elements of 8 B: 2 MiB),
 * then apply reads and writes its own tile, `steps` times. With the
 * default mapper point i runs on GPU i, so each FB holds its own tile and
 * a reduction instance of the next one; the engine maps ahead of
 * execution, and every step's scatter reuses the reduction instance of
 * the step before (folded by then, or about to be), so the memory does
 * not grow with the steps. */
static const char app_reduce_steps[] = APP_HEAD(
    "{\"n\": 262144, \"steps\": 1}") "\"regions\": [{\"name\": "
                                     "\"acc\", \"fields\": [[\"x\", 8]], "
                                     "\"atoms\": {\"groups\": [{\"group\":"
                                     " \"tile\", \"count\": \"4\", "
                                     "\"elements\": \"n\"}]}}],"
                                     "\"partitions\": ["
                                     " {\"name\": \"own\", \"region\": "
                                     "\"acc\", \"kind\": \"group\","
                                     "  \"group\": \"tile\"},"
                                     " {\"name\": \"next\", \"region\": "
                                     "\"acc\", \"kind\": \"list\","
                                     "  \"colors\": [\"4\"], \"entries\": "
                                     "[{\"group\": \"tile\","
                                     "  \"atom\": \"(c0 + 1) % 4\"}]}],"
                                     "\"tasks\": ["
                                     " {\"name\": \"scatter\", \"variants\": "
                                     "[{\"kind\": \"GPU\","
                                     "  \"flops\": \"elems(0)\", "
                                     "\"flops_eff\": 0.5}]},"
                                     " {\"name\": \"apply\", \"variants\": "
                                     "[{\"kind\": \"GPU\","
                                     "  \"flops\": \"elems(0)\", "
                                     "\"flops_eff\": 0.5}]}],"
                                     "\"program\": [{\"op\": \"fill\", "
                                     "\"region\": \"acc\"},"
                                     " {\"op\": \"loop\", \"var\": \"t\", "
                                     "\"count\": \"steps\", \"warmup\":"
                                     "  \"0\", \"timed\": true, \"body\": ["
                                     "  {\"op\": \"index\", \"task\": "
                                     "\"scatter\", \"domain\": [\"4\"],"
                                     "   \"args\": [{\"part\": \"next\", "
                                     "\"priv\": \"REDUCE\", \"redop\":"
                                     "   \"sum\", \"fields\": [\"x\"]}]},"
                                     "  {\"op\": \"index\", \"task\": "
                                     "\"apply\", \"domain\": [\"4\"],"
                                     "   \"args\": [{\"part\": \"own\", "
                                     "\"priv\": \"RW\", \"fields\":"
                                     "   [\"x\"]}]}]}]}";

static void test_reduce_every_step(void **state) {
  (void)state;
  int64_t peak[2], folds[2];
  static const char *const specs[] = {"steps=1", "steps=16"};
  for (int k = 0; k < 2; k++) {
    simcase c;
    sim(&c, machine_json("64", zero_runtime), app_reduce_steps, specs[k], "");
    expect_ok(&c);
    peak[k] = mem(&c, MAPOPT_MEM_FBMEM, 0)->peak_bytes;
    folds[k] = c.res->copies[FOLD].count;
    /* The tile and one reduction instance, at most, on every GPU. */
    for (int64_t g = 0; g < 4; g++)
      assert_true(mem(&c, MAPOPT_MEM_FBMEM, g)->peak_instances <= 2);
    sim_free(&c);
  }
  assert_int_equal(peak[0], 2 * 262144 * 8);
  assert_int_equal(peak[1], peak[0]); /* the issue asks for <= 1.5x */
  /* Every step's contributions are folded, one fold per point. */
  assert_int_equal(folds[0], 4);
  assert_int_equal(folds[1], 4 * 16);
}

/* Reducers that share a reduction instance fold through one copy. red over
 * [8] reduces into S (100 x 8 B): default placement puts points 2g and
 * 2g + 1 on GPU g, and the second of each pair reuses the first's
 * reduction instance. Point i takes 10000 + 1000 + 1000 i ns, so GPU g
 * runs its pair 2000 g .. 23000 + 4000 g. use on GPU 0 is the fold
 * target: 4 folds of 800 B (not 8), each when both reducers of its
 * instance are done; the last, from GPU 3 (cross-socket peer, 3000 +
 * ceil(800000 / 2000) = 3400 ns), 35000 .. 38400; use 38400 .. 48400. */
static const char app_fold_shared[] =
    APP_HEAD("{\"n\": 100}") "\"regions\": [" REGION(
        "S", "8",
        "n") "], \"partitions\": [],"
             "\"tasks\": ["
             " {\"name\": \"red\", \"variants\": [{\"kind\": \"GPU\","
             "  \"fixed_ns\": \"1000 + 1000 * i0\"}]},"
             " {\"name\": \"use\", \"variants\": [{\"kind\": \"GPU\"}]}],"
             "\"program\": [{\"op\": \"fill\", \"region\": \"S\", \"fields\":"
             " [\"x\"]}, {\"op\": \"loop\", \"var\": \"t\", \"count\": \"1\","
             " \"warmup\": \"0\", \"timed\": true, \"body\": ["
             "{\"op\": \"index\", \"task\": \"red\", \"domain\": [\"8\"],"
             " \"args\": [{\"region\": \"S\", \"priv\": \"REDUCE\", \"redop\":"
             " \"sum\", \"fields\": [\"x\"], \"bytes\": \"0\"}]},"
             "{\"op\": \"single\", \"task\": \"use\", \"args\": [{\"region\":"
             " \"S\", \"priv\": \"RO\", \"fields\": [\"x\"], \"bytes\": "
             "\"0\"}]}]}]}";

static void test_fold_shared_instance(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_fold_shared, NULL, "");
  expect_ok(&c);
  assert_int_equal(c.res->copies[FOLD].count, 4);
  assert_int_equal(c.res->copies[FOLD].bytes, 4 * 800);
  for (int64_t g = 0; g < 4; g++)
    assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, g)->peak_instances, g ? 1 : 2);
  assert_int_equal(c.res->elapsed_ns, 48400);
  sim_free(&c);
}

/* An op that reduces one atom through two requirements contributes through
 * both instances: red reduces E's atom 1 whole (own, 100 x 8 B) and 30
 * elements of atom 1 and 20 of atom 2 (ghost); use, which reads E, folds
 * 800 B from the first instance and 240 + 160 B from the second. */
static const char app_fold_two_reqs[] = APP_HEAD("{\"P\": 4}") GHOST_REGION
    "\"tasks\": ["
    " {\"name\": \"red\", \"variants\": [{\"kind\": \"GPU\"}]},"
    " {\"name\": \"use\", \"variants\": [{\"kind\": \"GPU\"}]}],"
    "\"program\": [{\"op\": \"fill\", \"region\": \"E\"},"
    " {\"op\": \"loop\", \"var\": \"t\", \"count\": \"1\","
    "  \"warmup\": \"0\", \"timed\": true, \"body\": ["
    "{\"op\": \"single\", \"task\": \"red\", \"args\": ["
    " {\"part\": \"own\", \"proj\": [\"1\"], \"priv\": \"REDUCE\","
    "  \"redop\": \"sum\", \"fields\": [\"u\"], \"bytes\": \"0\"},"
    " {\"part\": \"ghost\", \"proj\": [\"0\"], \"priv\": \"REDUCE\","
    "  \"redop\": \"sum\", \"fields\": [\"u\"], \"bytes\": \"0\"}]},"
    "{\"op\": \"single\", \"task\": \"use\", \"args\": [{\"region\":"
    " \"E\", \"priv\": \"RO\", \"fields\": [\"u\"], \"bytes\":"
    " \"0\"}]}]}]}";

static void test_fold_two_requirements(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_fold_two_reqs, NULL, "");
  expect_ok(&c);
  assert_int_equal(c.res->copies[FOLD].count, 2);
  assert_int_equal(c.res->copies[FOLD].bytes, 800 + 240 + 160);
  sim_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ghost_partial_copies),
      cmocka_unit_test(test_instance_served_first),
      cmocka_unit_test(test_fold_reductions),
      cmocka_unit_test(test_reduce_every_step),
      cmocka_unit_test(test_fold_shared_instance),
      cmocka_unit_test(test_fold_two_requirements),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
