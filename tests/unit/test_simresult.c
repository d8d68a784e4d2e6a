/*
 * Unit tests of a simulation result's lists, end to end through the public
 * API on the tiny machine of test_sim.c (simcase.h): a task's requirements
 * are all kept (a result once kept 8 and dropped the rest unsaid), in the
 * result, its decisions and its report read back; the two lists capped by
 * design, the busiest tasks and the critical path's longest segments, count
 * what they leave out.
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
#include "rejects.h"
#include "simcase.h"

enum {
  WIDE_ARGS = 12,  /* region arguments of the task "wide" */
  CHAIN_TASKS = 12 /* small tasks t0 .. t11, one after the other */
};

/* Regions R0 .. R11, Ri of (i + 1) * 100 elements of 8 B. The small tasks
 * t0 .. t11 write R0 in turn (a chain on the critical path), then "wide"
 * writes all twelve regions: 13 (task, GPU) entries, 13 segments. */
static char *wide_app(void) {
  size_t cap = 16384, n = 0;
  char *s = malloc(cap);
  assert_non_null(s);
#define PUT(...) n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__)
  PUT("%s", APP_HEAD("{}") "\"regions\": [");
  for (int i = 0; i < WIDE_ARGS; i++)
    PUT("%s{\"name\": \"R%d\", \"fields\": [[\"x\", 8]], \"atoms\": "
        "{\"groups\": [{\"group\": \"g\", \"count\": \"1\", \"elements\": "
        "\"%d\"}]}}",
        i ? ", " : "", i, (i + 1) * 100);
  PUT("], \"partitions\": [], \"tasks\": [{\"name\": \"wide\", \"variants\": "
      "[{\"kind\": \"GPU\", \"flops\": \"100000000\"}]}");
  for (int i = 0; i < CHAIN_TASKS; i++)
    PUT(", {\"name\": \"t%d\", \"variants\": [{\"kind\": \"GPU\", "
        "\"flops\": \"1000\"}]}",
        i);
  PUT("], \"program\": [{\"op\": \"loop\", \"var\": \"t\", \"count\": \"1\", "
      "\"warmup\": \"0\", \"timed\": true, \"body\": [");
  for (int i = 0; i < CHAIN_TASKS; i++)
    PUT("{\"op\": \"single\", \"task\": \"t%d\", \"args\": [{\"region\": "
        "\"R0\", \"priv\": \"RW\", \"fields\": [\"x\"]}]}, ",
        i);
  PUT("{\"op\": \"single\", \"task\": \"wide\", \"args\": [");
  for (int i = 0; i < WIDE_ARGS; i++)
    PUT("%s{\"region\": \"R%d\", \"priv\": \"RW\", \"fields\": [\"x\"]}",
        i ? ", " : "", i);
  PUT("]}]}]}");
#undef PUT
  assert_true(n < cap);
  return s;
}

/* Simulates the app of wide_app under the default mapper, with opts (or
 * the defaults); the run succeeds. */
static void sim_wide(simcase *c, const mapopt_sim_options *opts) {
  char *app = wide_app();
  sim_opts(c, tiny(), app, NULL, "", opts);
  free(app);
  expect_ok(c);
}

/* Every argument of "wide" is in t, in order, with its own statistics:
 * the instance of Ri holds its (i + 1) * 100 elements of 8 B. */
static void expect_wide_reqs(const mapopt_sim_task_stats *t) {
  assert_non_null(t);
  assert_string_equal(t->task, "wide");
  assert_int_equal(mapopt_sim_task_nreqs(t), WIDE_ARGS);
  for (size_t i = 0; i < WIDE_ARGS; i++) {
    const mapopt_sim_req_stats *q = mapopt_sim_task_req(t, i);
    assert_non_null(q);
    char name[8];
    snprintf(name, sizeof name, "R%zu", i);
    assert_int_equal(q->index, (int)i);
    assert_string_equal(q->name, name);
    assert_int_equal(q->memory, MAPOPT_MEM_FBMEM);
    assert_int_equal(q->priv, MAPOPT_PRIV_RW);
    assert_int_equal(q->instance_bytes, (int64_t)(i + 1) * 100 * 8);
    assert_true(q->mem_ns > 0);
  }
  assert_rejected(mapopt_sim_task_req(t, WIDE_ARGS));
}

static void test_all_requirements_kept(void **state) {
  (void)state;
  simcase c;
  mapopt_sim_options o = {.record_decisions = true};
  sim_wide(&c, &o);
  expect_wide_reqs(mapopt_sim_result_task_named(c.res, "wide"));
  /* The decisions too: the last argument's instance is R11's. */
  const mapopt_sim_decision *d = &c.res->decisions[c.res->ndecisions - 1];
  assert_string_equal(d->task, "wide");
  assert_int_equal(d->nreqs, WIDE_ARGS);
  assert_string_equal(d->reqs[WIDE_ARGS - 1].name, "R11");
  assert_int_equal(d->reqs[WIDE_ARGS - 1].instance_bytes, 1200 * 8);
  /* And the report: written, read back, written again, the same. */
  char *json = NULL, *again = NULL;
  assert_int_equal(mapopt_sim_report_json(ctx, c.res, false, &json), MAPOPT_OK);
  mapopt_sim_result *back = NULL;
  assert_int_equal(
      mapopt_sim_report_read(ctx, "r.json", json, strlen(json), diags, &back),
      MAPOPT_OK);
  expect_wide_reqs(mapopt_sim_result_task_named(back, "wide"));
  assert_int_equal(mapopt_sim_report_json(ctx, back, false, &again), MAPOPT_OK);
  assert_string_equal(json, again);
  mapopt_text_free(again);
  mapopt_sim_result_free(back);
  mapopt_text_free(json);
  sim_free(&c);
}

/* One task k writing one region once. */
static const char app_single[] = APP_HEAD("{}") "\"regions\": [" REGION(
    "A", "8", "100") "], \"partitions\": [],"
                     "\"tasks\": [{\"name\": \"k\", \"variants\": ["
                     " {\"kind\": \"GPU\", \"flops\": \"1000\"}]}]," LOOP1(
                         "{\"op\": \"single\", \"task\": \"k\", "
                         "\"args\": [{\"region\": \"A\", \"priv\": "
                         "\"RW\", \"fields\": [\"x\"]}]}");

static void test_capped_lists_count_the_rest(void **state) {
  (void)state;
  simcase c;
  sim_wide(&c, NULL);
  /* 13 timed (task, GPU) entries: the 10 busiest are kept, "wide" first
   * (its 1e8 flops), then the small ones by name: t0, t1, t10, t11, t2,
   * ..., t6; t7, t8 and t9 are counted. */
  assert_int_equal(mapopt_sim_result_ntop(c.res), MAPOPT_SIM_MAX_TOP_TASKS);
  assert_int_equal(c.res->top_tasks_left_out, 3);
  assert_string_equal(mapopt_sim_result_top_task(c.res, 0)->task, "wide");
  assert_string_equal(mapopt_sim_result_top_task(c.res, 9)->task, "t6");
  assert_rejected(mapopt_sim_result_top_task(c.res, MAPOPT_SIM_MAX_TOP_TASKS));
  assert_null(mapopt_sim_result_task_named(c.res, "t7"));
  assert_non_null(mapopt_sim_result_task_named(c.res, "t11"));
  /* The path is the chain t0 .. t11 then wide: 13 segments, the 10
   * longest kept. */
  const mapopt_sim_critical_path *cp = &c.res->critical_path;
  assert_int_equal(cp->nsegments, MAPOPT_SIM_MAX_SEGMENTS);
  assert_int_equal(cp->nsegments + cp->segments_left_out, CHAIN_TASKS + 1);
  assert_string_equal(cp->segments[0].name, "wide");
  sim_free(&c);
  /* Nothing to leave out: 0 and 0. */
  sim(&c, tiny(), app_single, NULL, "");
  expect_ok(&c);
  assert_int_equal(c.res->top_tasks_left_out, 0);
  assert_int_equal(c.res->critical_path.segments_left_out, 0);
  assert_int_equal(mapopt_sim_result_ntop(c.res), 1);
  sim_free(&c);
}

/* A report whose task lists more requirements than an op may have is
 * malformed. */
static void test_report_too_many_requirements(void **state) {
  (void)state;
  simcase c;
  sim_wide(&c, NULL);
  char *json = NULL;
  assert_int_equal(mapopt_sim_report_json(ctx, c.res, false, &json), MAPOPT_OK);
  /* Repeat the first requirement of wide (the busiest task, listed first)
   * until it has 65: the object from its "{" to the matching "}" (the
   * report's names hold no braces), each copy after a comma. */
  const char *first = strstr(json, "\"requirements\": [");
  assert_non_null(first);
  first = strchr(first, '{');
  const char *close = first;
  for (int depth = 0; close && *close; close++) {
    depth += (*close == '{') - (*close == '}');
    if (depth == 0)
      break;
  }
  assert_true(close && *close == '}');
  size_t one = (size_t)(close - first) + 1, len = strlen(json);
  size_t at = (size_t)(close + 1 - json),
         copies = MAPOPT_APP_MAX_ARGS + 1 - WIDE_ARGS;
  char *big = malloc(len + copies * (one + 1) + 1);
  assert_non_null(big);
  memcpy(big, json, at);
  size_t n = at;
  for (size_t i = 0; i < copies; i++) {
    big[n++] = ',';
    memcpy(big + n, first, one);
    n += one;
  }
  memcpy(big + n, json + at, len - at + 1);
  fixture_expect_report_error(
      big, "\"requirements\" in a task has more than 64 entries");
  free(big);
  mapopt_text_free(json);
  sim_free(&c);
}

/* The result's other lists read through their accessors: the same
 * entries as the result's own arrays; past their ends, at a negative
 * channel and for a NULL object the caller's bug, rejected under the
 * narrow view's convention (asserted in a debug build, NULL or 0 in a
 * release one). */
static void test_list_accessors(void **state) {
  (void)state;
  mapopt_sim_options o = {.record_decisions = true};
  mapopt_sim_result *r =
      fixture_simulate("circuit:small", "p100x4", "expert", &o);
  assert_true(r->nwaits > 0 && r->nprocs > 0 && r->nmems > 0);
  assert_true(r->ndecisions > 0 && r->critical_path.nsegments > 0);
  assert_int_equal(mapopt_sim_result_nwaits(r), r->nwaits);
  assert_ptr_equal(mapopt_sim_result_wait(r, r->nwaits - 1),
                   &r->waits[r->nwaits - 1]);
  assert_int_equal(mapopt_sim_result_nprocs(r), r->nprocs);
  assert_ptr_equal(mapopt_sim_result_proc(r, 0), &r->procs[0]);
  assert_int_equal(mapopt_sim_result_nmems(r), r->nmems);
  assert_ptr_equal(mapopt_sim_result_mem(r, r->nmems - 1),
                   &r->mems[r->nmems - 1]);
  assert_ptr_equal(mapopt_sim_result_copy(r, MAPOPT_SIM_COPY_KINDS - 1),
                   &r->copies[MAPOPT_SIM_COPY_KINDS - 1]);
  size_t ns = r->critical_path.nsegments;
  assert_int_equal(mapopt_sim_result_nsegments(r), ns);
  assert_ptr_equal(mapopt_sim_result_segment(r, ns - 1),
                   &r->critical_path.segments[ns - 1]);
  assert_int_equal(mapopt_sim_result_ndecisions(r), r->ndecisions);
  const mapopt_sim_decision *d = mapopt_sim_result_decision(r, 0);
  assert_ptr_equal(d, &r->decisions[0]);
  assert_true(d->nreqs > 0);
  assert_int_equal(mapopt_sim_decision_nreqs(d), (size_t)d->nreqs);
  assert_ptr_equal(mapopt_sim_decision_req_at(d, 0), &d->reqs[0]);
  assert_int_equal(mapopt_sim_result_ntop(r), r->ntop);
  const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(r, 0);
  assert_ptr_equal(t, &r->top_tasks[0]);
  assert_ptr_equal(mapopt_sim_result_task_named(r, t->task), t);
  assert_null(mapopt_sim_result_task_named(r, "no such task"));
  assert_null(mapopt_sim_result_task_named(r, NULL)); /* a lookup: no bug */
  assert_int_equal(mapopt_sim_task_nreqs(t), (size_t)t->nreqs);
  assert_ptr_equal(mapopt_sim_task_req(t, 0), &t->reqs[0]);

  assert_rejected(mapopt_sim_result_wait(r, r->nwaits));
  assert_rejected(mapopt_sim_result_proc(r, r->nprocs));
  assert_rejected(mapopt_sim_result_mem(r, r->nmems));
  assert_rejected(mapopt_sim_result_copy(r, MAPOPT_SIM_COPY_KINDS));
  assert_rejected(mapopt_sim_result_copy(r, -1));
  assert_rejected(mapopt_sim_result_segment(r, ns));
  assert_rejected(mapopt_sim_result_decision(r, r->ndecisions));
  assert_rejected(mapopt_sim_decision_req_at(d, (size_t)d->nreqs));
  assert_rejected(mapopt_sim_result_top_task(r, r->ntop));
  assert_rejected(mapopt_sim_task_req(t, (size_t)t->nreqs));
  assert_rejected(mapopt_sim_result_nwaits(NULL));
  assert_rejected(mapopt_sim_result_nprocs(NULL));
  assert_rejected(mapopt_sim_result_ndecisions(NULL));
  assert_rejected(mapopt_sim_result_ntop(NULL));
  assert_rejected(mapopt_sim_decision_nreqs(NULL));
  assert_rejected(mapopt_sim_task_nreqs(NULL));
  assert_rejected(mapopt_sim_result_wait(NULL, 0));
  assert_rejected(mapopt_sim_result_copy(NULL, 0));
  assert_rejected(mapopt_sim_result_task_named(NULL, t->task));
  assert_rejected(mapopt_sim_decision_req_at(NULL, 0));
  mapopt_sim_result_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_requirements_kept),
      cmocka_unit_test(test_capped_lists_count_the_rest),
      cmocka_unit_test(test_report_too_many_requirements),
      cmocka_unit_test(test_list_accessors),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
