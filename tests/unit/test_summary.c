/*
 * The texts of `mapopt sim --explain` and `--compare`
 * (mapopt_guide_summary, mapopt_guide_compare) and the numbers they are
 * made of: every busiest task's busy time splits exactly into overhead,
 * compute and memory, and a report read back gives the same split; the
 * summary prints what the result says; a comparison of a run with itself
 * finds nothing, and of two mappers lists the differences largest first,
 * the decisions that differ with them.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "mapopt/mapopt.h"

/* The time split of each busiest task adds up, and survives the report. */
static void check_split(const mapopt_sim_result *r) {
  assert_true(r->ntop > 0);
  for (size_t i = 0; i < r->ntop; i++) {
    const mapopt_sim_task_stats *t = &r->top_tasks[i];
    assert_true(t->overhead_ns >= 0 && t->compute_ns >= 0 &&
                t->memory_ns >= 0 && t->wait_data_ns >= 0 &&
                t->wait_proc_ns >= 0);
    assert_int_equal(t->overhead_ns + t->compute_ns + t->memory_ns, t->busy_ns);
  }
  char *json;
  assert_int_equal(mapopt_sim_report_json(ctx, r, false, &json), MAPOPT_OK);
  mapopt_sim_result *back;
  assert_int_equal(
      mapopt_sim_report_read(ctx, "r.json", json, strlen(json), diags, &back),
      MAPOPT_OK);
  for (size_t i = 0; i < r->ntop; i++) {
    const mapopt_sim_task_stats *x = &r->top_tasks[i], *y = &back->top_tasks[i];
    assert_int_equal(x->overhead_ns, y->overhead_ns);
    assert_int_equal(x->compute_ns, y->compute_ns);
    assert_int_equal(x->memory_ns, y->memory_ns);
    assert_int_equal(x->wait_data_ns, y->wait_data_ns);
    assert_int_equal(x->wait_proc_ns, y->wait_proc_ns);
  }
  mapopt_sim_result_free(back);
  mapopt_text_free(json);
}

static void test_split(void **state) {
  (void)state;
  static const char *const apps[] = {"circuit:small", "stencil:small",
                                     "pennant:small", "cannon:small",
                                     "johnson:small"};
  for (size_t a = 0; a < sizeof apps / sizeof apps[0]; a++) {
    mapopt_sim_result *r = fixture_simulate(apps[a], "p100x4", "expert", NULL);
    assert_int_equal(r->error, MAPOPT_SIM_NONE);
    check_split(r);
    mapopt_sim_result_free(r);
  }
  /* circuit's distribute_charge reaches rp_ghost in ZCMEM by atomics: its
   * time is mostly memory; cannon's task_4 waits for its tiles. */
  mapopt_sim_result *r = fixture_simulate("circuit", "p100x4", "expert", NULL);
  assert_string_equal(r->top_tasks[1].task, "distribute_charge");
  assert_true(r->top_tasks[1].memory_ns > 9 * r->top_tasks[1].busy_ns / 10);
  mapopt_sim_result_free(r);
  r = fixture_simulate("cannon", "p100x4", "expert", NULL);
  assert_string_equal(r->top_tasks[0].task, "task_4");
  assert_true(r->top_tasks[0].wait_data_ns > 0);
  mapopt_sim_result_free(r);
}

/* The summary prints the result's numbers, in its order. */
static void test_summary_text(void **state) {
  (void)state;
  mapopt_sim_result *r = fixture_simulate("circuit", "p100x4", "expert", NULL);
  char *text;
  assert_int_equal(mapopt_guide_summary(ctx, r, &text), MAPOPT_OK);
  print_message("%s", text);
  /* The bound counts the folds of rp_shared (docs/sim.md): 103.9 ms. */
  assert_non_null(strstr(text, "Where the time went (10 timed iterations: "
                               "136.5 ms; no mapping beats 103.9 ms):\n"));
  /* The critical path by cause: the waits with exposed time, largest
   * first, with what the points waited in all. */
  const char *c0 = strstr(text, "  the critical path by cause");
  const char *c1 = strstr(text, "    calculate_new_currents: compute ");
  const char *c2 = strstr(text, "    distribute_charge: compute ");
  assert_non_null(c0);
  assert_true(c0 < c1 && c1 < c2);
  assert_non_null(strstr(c1, "108.8 ms  435.4 ms (40 points)\n"));
  assert_non_null(strstr(text, "rp_shared@3: fold HOST_HOST ZCMEM 0 -> ZCMEM "
                               "0 of node 0, of distribute_charge"));
  /* The busiest task first, with its busy time and split. */
  const char *t0 = strstr(text, "    calculate_new_currents GPU");
  const char *t1 = strstr(text, "    distribute_charge      GPU");
  assert_non_null(t0);
  assert_non_null(t1);
  assert_true(t0 < t1);
  char row[256];
  const mapopt_sim_task_stats *d = &r->top_tasks[1];
  snprintf(row, sizeof row,
           "%6" PRId64 "   110.1 ms       0%%      0%%   100%%", d->points);
  assert_non_null(strstr(t1, row));
  /* The argument that is the most expensive to reach comes first. */
  assert_non_null(strstr(text, "    distribute_charge rp_ghost@2        ZCMEM"
                               "   SOA C_order  100.0 ms, 0 B\n"));
  mapopt_text_free(text);
  assert_int_equal(mapopt_guide_summary(ctx, NULL, &text), MAPOPT_EINVAL);
  mapopt_sim_result_free(r);
}

static void test_compare(void **state) {
  (void)state;
  mapopt_sim_result *a = fixture_simulate("circuit", "p100x4", "expert", NULL);
  mapopt_sim_result *b = fixture_simulate("circuit", "p100x4", "default", NULL);
  char *text;
  /* A run against itself: nothing differs. */
  assert_int_equal(mapopt_guide_compare(ctx, a, "x.map", a, "y.map", &text),
                   MAPOPT_OK);
  assert_non_null(strstr(text, "A and B take the same time.\n"));
  assert_non_null(strstr(text, "Nothing in the profiles differs.\n"));
  mapopt_text_free(text);
  assert_int_equal(
      mapopt_guide_compare(ctx, a, "expert.map", b, "default.map", &text),
      MAPOPT_OK);
  print_message("%s", text);
  assert_non_null(strstr(text, "A: expert.map: elapsed 136.5 ms"));
  assert_non_null(strstr(text, "B is 1.31x as fast as A (-32.5 ms"));
  /* The decisions that differ, under the task they are about. */
  const char *dc = strstr(text, "  task distribute_charge (GPU)");
  assert_non_null(dc);
  assert_non_null(strstr(dc, "      rp_ghost@2 in ZCMEM -> FBMEM\n"));
  /* Largest change first: the (+/-) amounts of the listed lines never
   * grow. */
  const char *p = strstr(text, "What differs");
  assert_non_null(p);
  double last = 1e300;
  int lines = 0;
  for (const char *l = strstr(p, "\n  "); l; l = strstr(l + 1, "\n  ")) {
    if (l[3] == ' ')
      continue; /* a detail line */
    const char *open = strstr(l, " (");
    const char *nl = strchr(l + 1, '\n');
    while (open && (!nl || open < nl) && open[2] != '+' && open[2] != '-')
      open = strstr(open + 1, " (");
    if (!open || (nl && open > nl))
      continue;
    double v = strtod(open + 3, NULL);
    const char *unit = strpbrk(open + 3, " ");
    v *= !strncmp(unit, " ms", 3)   ? 1e6
         : !strncmp(unit, " us", 3) ? 1e3
         : !strncmp(unit, " s", 2)  ? 1e9
                                    : 1;
    assert_true(v <= last * 1.0001);
    last = v;
    lines++;
  }
  assert_true(lines >= 5);
  mapopt_text_free(text);
  mapopt_sim_result_free(a);
  mapopt_sim_result_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_summary_text),
      cmocka_unit_test(test_compare),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
