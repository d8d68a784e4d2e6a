/*
 * The attribution of the critical path (docs/sim.md, "The critical path
 * adds up"; include/mapopt/sim.h, mapopt_sim_wait) on small hand-built
 * runs whose critical path is known exactly: two tasks and one copy, two
 * tasks on one processor, a reduction with two contributors, and a fold
 * chain (a reader that must wait for the folds into another reader's
 * instance before it can copy from it). Every expected number is worked
 * out by hand below from the machine's rates; the exposed times of all
 * entries add up to the elapsed time, and a saved report gives the same
 * entries back.
 *
 * The machine is the fixture's "duo" (fixture.h): two GPUs, every task
 * 10000 ns, FB_LOCAL 100 GB/s with 1000 ns latency (fills pay none),
 * FB_FB_PEER 2 GB/s with 2000 ns latency, no runtime costs. A copy takes
 * latency + ceil(bytes * 1000 / MB/s) ns.
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

/* An app of one region S of n 8-byte elements, GPU-only tasks, and a
 * one-iteration timed loop over body (optionally after a fill of S). */
#define APP(tasks, pre, body)                                                  \
  "{\"format\": \"mapopt-app/1\", \"name\": \"t\", \"params\": {\"n\": 1000}," \
  " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},"                 \
  " \"regions\": [{\"name\": \"S\", \"fields\": [[\"x\", 8]], \"atoms\":"      \
  " {\"groups\": [{\"group\": \"g\", \"count\": \"1\", \"elements\":"          \
  " \"n\"}]}}], \"partitions\": [], \"tasks\": [" tasks "],"                   \
  " \"program\": [" pre "{\"op\": \"loop\", \"var\": \"t\", \"count\": \"1\"," \
  " \"warmup\": \"0\", \"timed\": true, \"body\": [" body "]}]}"
#define TASK(name)                                                             \
  "{\"name\": \"" name "\", \"variants\": [{\"kind\": \"GPU\"}]}"
#define SINGLE(task, priv)                                                     \
  "{\"op\": \"single\", \"task\": \"" task "\", \"args\": [{\"region\":"       \
  " \"S\", \"priv\": \"" priv "\", \"fields\": [\"x\"], \"bytes\": \"0\"}]}"
#define FILL_S "{\"op\": \"fill\", \"region\": \"S\", \"fields\": [\"x\"]},"

/* Single tasks placed by name: on0 on GPU 0, on1 on GPU 1. */
static const char place[] = "g = Machine(GPU);\n"
                            "def gpu0(Task t) { return g[0, 0]; }\n"
                            "def gpu1(Task t) { return g[0, 1]; }\n";

static mapopt_sim_result *run(const char *app, const char *mapper) {
  mapopt_sim_result *r = fixture_simulate_json(fixture_duo, app, mapper);
  /* The contract: every nanosecond of the window is in one entry. */
  int64_t sum = 0;
  for (size_t i = 0; i < r->nwaits; i++)
    sum += r->waits[i].exposed_ns;
  assert_int_equal(sum, r->elapsed_ns);
  assert_int_equal(r->critical_path.length_ns, r->elapsed_ns);
  return r;
}

/* The entry of (task, cause, channel) -- channel -1: any -- or NULL. */
static const mapopt_sim_wait *entry(const mapopt_sim_result *r,
                                    const char *task, mapopt_sim_cause cause,
                                    int channel) {
  for (size_t i = 0; i < r->nwaits; i++) {
    const mapopt_sim_wait *w = &r->waits[i];
    if (w->task && !strcmp(w->task, task) && w->cause == cause &&
        (channel < 0 || w->channel == channel))
      return w;
  }
  return NULL;
}

static void expect_end(const mapopt_sim_end *e, const char *kind,
                       int64_t index) {
  assert_non_null(e->kind);
  assert_string_equal(e->kind, kind);
  assert_int_equal(e->node, 0);
  assert_int_equal(e->index, index);
}

/* What the report says is what the result said. */
static void expect_round_trip(const mapopt_sim_result *r) {
  char *json;
  assert_int_equal(mapopt_sim_report_json(ctx, r, false, &json), MAPOPT_OK);
  mapopt_sim_result *back;
  mapopt_diags_clear(diags);
  assert_int_equal(
      mapopt_sim_report_read(ctx, "r.json", json, strlen(json), diags, &back),
      MAPOPT_OK);
  assert_int_equal(back->nwaits, r->nwaits);
  for (size_t i = 0; i < r->nwaits; i++) {
    const mapopt_sim_wait *a = &r->waits[i], *b = &back->waits[i];
    assert_int_equal(a->cause, b->cause);
    assert_int_equal(a->arg, b->arg);
    assert_int_equal(a->channel, b->channel);
    assert_int_equal(a->exposed_ns, b->exposed_ns);
    assert_int_equal(a->waited_ns, b->waited_ns);
    assert_int_equal(a->bytes, b->bytes);
    assert_int_equal(a->spread, b->spread);
    assert_true((a->task == NULL) == (b->task == NULL));
    assert_true((a->other == NULL) == (b->other == NULL));
    assert_true((a->from.kind == NULL) == (b->from.kind == NULL));
  }
  char *again;
  assert_int_equal(mapopt_sim_report_json(ctx, back, false, &again), MAPOPT_OK);
  assert_string_equal(json, again);
  mapopt_text_free(again);
  mapopt_text_free(json);
  mapopt_sim_result_free(back);
}

/* prod on GPU 0 writes S (8000 B), cons on GPU 1 reads it: prod 0 ..
 * 10000; the copy FB 0 -> FB 1, 2000 + ceil(8000000 / 2000) = 6000, 10000
 * .. 16000; cons 16000 .. 26000. The path: cons's compute, the copy, prod's
 * compute: 10000 + 6000 + 10000 = 26000. */
static void test_two_tasks_one_copy(void **state) {
  (void)state;
  char mapper[512];
  snprintf(mapper, sizeof mapper,
           "%sSingleTaskMap prod gpu0;\nSingleTaskMap cons gpu1;\n", place);
  mapopt_sim_result *r = run(APP(TASK("prod") "," TASK("cons"), "",
                                 SINGLE("prod", "WD") "," SINGLE("cons", "RO")),
                             mapper);
  assert_int_equal(r->elapsed_ns, 26000);
  const mapopt_sim_wait *c = entry(r, "cons", MAPOPT_SIM_CAUSE_COPY, -1);
  assert_non_null(c);
  assert_int_equal(c->exposed_ns, 6000);
  assert_int_equal(c->waited_ns, 6000);
  assert_int_equal(c->count, 1);
  assert_int_equal(c->arg, 0);
  assert_string_equal(c->arg_name, "S");
  assert_int_equal(c->channel, MAPOPT_CHAN_FB_FB_PEER);
  assert_string_equal(c->other, "prod");
  expect_end(&c->from, "FBMEM", 0);
  expect_end(&c->to, "FBMEM", 1);
  assert_int_equal(c->copies, 1);
  assert_int_equal(c->bytes, 8000);
  assert_int_equal(c->spread, 1);
  assert_int_equal(entry(r, "cons", MAPOPT_SIM_CAUSE_COMPUTE, -1)->exposed_ns,
                   10000);
  assert_int_equal(entry(r, "prod", MAPOPT_SIM_CAUSE_COMPUTE, -1)->exposed_ns,
                   10000);
  /* The largest first; three entries in all. */
  assert_int_equal(r->nwaits, 3);
  assert_true(r->waits[0].exposed_ns >= r->waits[1].exposed_ns &&
              r->waits[1].exposed_ns >= r->waits[2].exposed_ns);
  assert_int_equal(r->critical_path.copy_ns, 6000);
  assert_int_equal(r->critical_path.compute_ns, 20000);
  expect_round_trip(r);
  mapopt_sim_result_free(r);
}

/* a and b, independent, both on GPU 0: a 0 .. 10000, b 10000 .. 20000.
 * The path ends with b: its compute, then 10000 ns waiting behind a. */
static void test_processor_busy(void **state) {
  (void)state;
  char mapper[512];
  snprintf(mapper, sizeof mapper, "%sSingleTaskMap a, b gpu0;\n", place);
  mapopt_sim_result *r = run(
      APP(TASK("a") "," TASK("b"), "", SINGLE("a", "RO") "," SINGLE("b", "RO")),
      mapper);
  assert_int_equal(r->elapsed_ns, 20000);
  const mapopt_sim_wait *q = entry(r, "b", MAPOPT_SIM_CAUSE_PROCESSOR, -1);
  assert_non_null(q);
  assert_int_equal(q->exposed_ns, 10000);
  assert_string_equal(q->other, "a");
  expect_end(&q->to, "GPU", 0);
  assert_null(q->from.kind);
  assert_int_equal(r->critical_path.queue_ns, 10000);
  /* a is not on the path: its compute is hidden behind its own. */
  assert_int_equal(entry(r, "a", MAPOPT_SIM_CAUSE_COMPUTE, -1)->exposed_ns, 0);
  assert_int_equal(entry(r, "a", MAPOPT_SIM_CAUSE_COMPUTE, -1)->waited_ns,
                   10000);
  expect_round_trip(r);
  mapopt_sim_result_free(r);
}

/* red over [2] reduces into S (8000 B after a fill) on GPUs 0 and 1, 0 ..
 * 10000; use on GPU 0 reads S and is the fold target. The base fill of
 * 8000 B at FB_LOCAL: ceil(8000000 / 100000) = 80 ns, 0 .. 80. The folds,
 * each when its reducer completes: FB 0 -> FB 0, 1000 + 80 = 1080, 10000
 * .. 11080, and FB 1 -> FB 0, 2000 + 4000 = 6000, 10000 .. 16000. use
 * 16000 .. 26000. The path: use's compute (10000), the remote fold
 * (6000), a reducer's compute (10000). The local fold is hidden. */
static const char app_reduce[] =
    APP(TASK("red") "," TASK("use"), FILL_S,
        "{\"op\": \"index\", \"task\": \"red\", \"domain\": [\"2\"], \"args\":"
        " [{\"region\": \"S\", \"priv\": \"REDUCE\", \"redop\": \"sum\","
        " \"fields\": [\"x\"], \"bytes\": \"0\"}]}," SINGLE("use", "RO"));

static void test_reduction_two_contributors(void **state) {
  (void)state;
  char mapper[512];
  snprintf(mapper, sizeof mapper, "%sSingleTaskMap use gpu0;\n", place);
  mapopt_sim_result *r = run(app_reduce, mapper);
  assert_int_equal(r->elapsed_ns, 26000);
  const mapopt_sim_wait *f =
      entry(r, "use", MAPOPT_SIM_CAUSE_FOLD, MAPOPT_CHAN_FB_FB_PEER);
  assert_non_null(f);
  assert_int_equal(f->exposed_ns, 6000);
  assert_int_equal(f->waited_ns, 6000);
  assert_string_equal(f->other, "red");
  expect_end(&f->from, "FBMEM", 1);
  expect_end(&f->to, "FBMEM", 0);
  assert_int_equal(f->copies, 1);
  assert_int_equal(f->bytes, 8000);
  /* The two contributors ran on two processors. */
  assert_int_equal(f->spread, 2);
  const mapopt_sim_wait *local =
      entry(r, "use", MAPOPT_SIM_CAUSE_FOLD, MAPOPT_CHAN_FB_LOCAL);
  assert_non_null(local);
  assert_int_equal(local->exposed_ns, 0);
  assert_int_equal(local->waited_ns, 0);
  assert_int_equal(local->bytes, 8000);
  const mapopt_sim_wait *fill = entry(r, "use", MAPOPT_SIM_CAUSE_FILL, -1);
  assert_non_null(fill);
  assert_int_equal(fill->exposed_ns, 0);
  assert_int_equal(fill->bytes, 8000);
  assert_int_equal(entry(r, "red", MAPOPT_SIM_CAUSE_COMPUTE, -1)->exposed_ns,
                   10000);
  assert_int_equal(entry(r, "red", MAPOPT_SIM_CAUSE_COMPUTE, -1)->waited_ns,
                   20000);
  assert_int_equal(entry(r, "use", MAPOPT_SIM_CAUSE_COMPUTE, -1)->exposed_ns,
                   10000);
  expect_round_trip(r);
  mapopt_sim_result_free(r);
}

/* As above, and use2 on GPU 1 reads S too. use maps first and is the fold
 * target; use2 waits for the folds into use's instance (16000) and then
 * copies S from FB 0: 2000 + 4000 = 6000, 16000 .. 22000; use2 22000 ..
 * 32000. The path: use2's compute (10000), its copy (6000), the remote
 * fold into use's instance, which use2 waited for (6000: the reduction),
 * a reducer's compute (10000). */
static void test_fold_chain(void **state) {
  (void)state;
  char mapper[512];
  snprintf(mapper, sizeof mapper,
           "%sSingleTaskMap use gpu0;\nSingleTaskMap use2 gpu1;\n", place);
  mapopt_sim_result *r = run(
      APP(TASK("red") "," TASK("use") "," TASK("use2"), FILL_S,
          "{\"op\": \"index\", \"task\": \"red\","
          " \"domain\": [\"2\"], \"args\":"
          " [{\"region\": \"S\", \"priv\": \"REDUCE\","
          " \"redop\": \"sum\", \"fields\": [\"x\"],"
          " \"bytes\": \"0\"}]}," SINGLE("use", "RO") "," SINGLE("use2", "RO")),
      mapper);
  assert_int_equal(r->elapsed_ns, 32000);
  const mapopt_sim_wait *c = entry(r, "use2", MAPOPT_SIM_CAUSE_COPY, -1);
  assert_non_null(c);
  assert_int_equal(c->exposed_ns, 6000);
  expect_end(&c->from, "FBMEM", 0);
  expect_end(&c->to, "FBMEM", 1);
  const mapopt_sim_wait *red = entry(r, "use2", MAPOPT_SIM_CAUSE_REDUCTION, -1);
  assert_non_null(red);
  assert_int_equal(red->exposed_ns, 6000);
  assert_int_equal(red->waited_ns, 6000);
  assert_int_equal(red->channel, MAPOPT_CHAN_FB_FB_PEER);
  assert_string_equal(red->other, "red");
  expect_end(&red->from, "FBMEM", 1);
  expect_end(&red->to, "FBMEM", 0);
  assert_int_equal(red->spread, 2);
  assert_int_equal(entry(r, "use2", MAPOPT_SIM_CAUSE_COMPUTE, -1)->exposed_ns,
                   10000);
  assert_int_equal(entry(r, "red", MAPOPT_SIM_CAUSE_COMPUTE, -1)->exposed_ns,
                   10000);
  /* use, off the path, waited for its own fold all the same. */
  const mapopt_sim_wait *uf =
      entry(r, "use", MAPOPT_SIM_CAUSE_FOLD, MAPOPT_CHAN_FB_FB_PEER);
  assert_int_equal(uf->exposed_ns, 0);
  assert_int_equal(uf->waited_ns, 6000);
  expect_round_trip(r);
  mapopt_sim_result_free(r);
}

/* The first diagnostic contains want. */
static void expect_diag(const char *want) {
  char line[512];
  assert_true(mapopt_diags_count(diags) > 0);
  mapopt_diag_format(mapopt_diags_get(diags, 0), line, sizeof line);
  if (!strstr(line, want))
    fail_msg("got: %s\nwant: %s", line, want);
}

/* A report of the first format (no "format" key) is refused with a note
 * to write it again; one of an unknown format too. */
static void test_old_report_refused(void **state) {
  (void)state;
  static const char old[] = "{\"status\": \"ok\"}";
  mapopt_sim_result *back = NULL;
  mapopt_diags_clear(diags);
  assert_int_equal(
      mapopt_sim_report_read(ctx, "old.json", old, strlen(old), diags, &back),
      MAPOPT_EINVAL);
  expect_diag("old.json:1:1: error: the report has no \"format\"");
  expect_diag("write it again with `mapopt sim --report`");
  static const char other[] = "{\"format\": \"mapopt-report/9\"}";
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_sim_report_read(ctx, "new.json", other, strlen(other),
                                          diags, &back),
                   MAPOPT_EINVAL);
  expect_diag("new.json:1:12: error: the report's format is "
              "\"mapopt-report/9\"");
  assert_null(back);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_tasks_one_copy),
      cmocka_unit_test(test_processor_busy),
      cmocka_unit_test(test_reduction_two_contributors),
      cmocka_unit_test(test_fold_chain),
      cmocka_unit_test(test_old_report_refused),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
