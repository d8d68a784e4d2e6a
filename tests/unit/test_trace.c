/*
 * The simulator's Chrome trace (docs/sim.md, "The trace") tells the run's
 * story: every process is named by node (and rank), every thread by its
 * processor or copy port, and no thread is empty; the runtime's work on
 * the UTIL processors is there; every copy names the task and region
 * argument it feeds, and flow events lead from the task that produced a
 * copy's data to the copy and from the copy to the task it feeds.
 * Checked on built-in benchmarks: one rank per node (circuit, stencil)
 * and one rank per GPU (johnson, with reduction folds).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "fixture.h"
#include "mapopt/mapopt.h"

/* Simulates app under its expert mapper with a trace; returns the parsed
 * trace's events (the root, to json_decref). */
static json_t *traced(const char *app, const char *machine, json_t **root) {
  mapopt_sim_options so = {.trace = true};
  mapopt_sim_result *res = fixture_simulate(app, machine, "expert", &so);
  assert_int_equal(res->error, MAPOPT_SIM_NONE);
  json_error_t err;
  *root = json_loads(res->trace, 0, &err);
  if (!*root)
    print_error("trace: %s at %d:%d\n", err.text, err.line, err.column);
  assert_non_null(*root);
  mapopt_sim_result_free(res);
  json_t *evs = json_object_get(*root, "traceEvents");
  assert_true(json_is_array(evs));
  return evs;
}

static const char *str(const json_t *e, const char *key) {
  return json_string_value(json_object_get(e, key));
}
static json_int_t num(const json_t *e, const char *key) {
  return json_integer_value(json_object_get(e, key));
}
static double ts(const json_t *e) {
  return json_number_value(json_object_get(e, "ts"));
}
static bool is(const json_t *e, const char *ph) {
  return strcmp(str(e, "ph"), ph) == 0;
}
static bool same_thread(const json_t *a, const json_t *b) {
  return num(a, "pid") == num(b, "pid") && num(a, "tid") == num(b, "tid");
}
/* Whether flow event f lies in slice x (its thread, within its time). */
static bool inside(const json_t *f, const json_t *x) {
  double t = ts(f), t0 = ts(x);
  double t1 = t0 + json_number_value(json_object_get(x, "dur"));
  return same_thread(f, x) && t >= t0 - 1e-9 && t <= t1 + 1e-9;
}

/* The flow event of phase ph with id, or NULL. */
static const json_t *flow(const json_t *evs, const char *ph, json_int_t id) {
  size_t i;
  json_t *e;
  json_array_foreach(evs, i, e) {
    if (is(e, ph) && num(e, "id") == id)
      return e;
  }
  return NULL;
}

/* Whether flow event f lies in the slice of the task op uid. */
static bool on_task(const json_t *evs, const json_t *f, json_int_t uid) {
  size_t i;
  json_t *t;
  json_array_foreach(evs, i, t) {
    if (is(t, "X") && strcmp(str(t, "cat"), "task") == 0 && inside(f, t) &&
        num(json_object_get(t, "args"), "uid") == uid)
      return true;
  }
  return false;
}

/* The thread or process name of (pid, tid), or NULL. */
static const char *name_of(const json_t *evs, const char *what, json_int_t pid,
                           json_int_t tid) {
  size_t i;
  json_t *e;
  json_array_foreach(evs, i, e) {
    if (is(e, "M") && strcmp(str(e, "name"), what) == 0 &&
        num(e, "pid") == pid &&
        (strcmp(what, "process_name") == 0 || num(e, "tid") == tid))
      return str(json_object_get(e, "args"), "name");
  }
  return NULL;
}

static void check_trace(const char *app, const char *machine, int ranks) {
  json_t *root;
  json_t *evs = traced(app, machine, &root);
  size_t i, j, ncopies = 0, nutil = 0, nflows = 0;
  json_t *e, *x;
  json_array_foreach(evs, i, e) {
    if (is(e, "s") || is(e, "f")) {
      /* Every flow event has its other end. */
      assert_non_null(flow(evs, is(e, "s") ? "f" : "s", num(e, "id")));
      nflows++;
    }
    if (!is(e, "X"))
      continue;
    /* Every slice's thread and process are named. */
    const char *thread =
        name_of(evs, "thread_name", num(e, "pid"), num(e, "tid"));
    const char *proc = name_of(evs, "process_name", num(e, "pid"), 0);
    assert_non_null(thread);
    assert_non_null(proc);
    assert_int_equal(strncmp(proc, "node ", 5), 0);
    if (ranks > 1)
      assert_true(strstr(proc, " rank ") || strstr(proc, " copies"));
    const char *cat = str(e, "cat");
    const json_t *args = json_object_get(e, "args");
    if (strcmp(cat, "runtime") == 0) {
      assert_int_equal(strncmp(thread, "UTIL ", 5), 0);
      nutil++;
    }
    if (strcmp(cat, "copy") != 0)
      continue;
    /* A copy: the task and argument it feeds, and a flow to that task. */
    ncopies++;
    assert_non_null(str(args, "task"));
    assert_true(json_is_integer(json_object_get(args, "argument")));
    assert_non_null(str(args, "region"));
    bool fed = false, produced = !str(args, "producer");
    json_array_foreach(evs, j, x) {
      /* A flow that starts on the copy ends on the task it feeds; one that
       * ends on the copy starts on the task that produced its data. */
      if (is(x, "s") && inside(x, e))
        fed |= on_task(evs, flow(evs, "f", num(x, "id")), num(args, "uid"));
      if (is(x, "f") && inside(x, e))
        produced |= on_task(evs, flow(evs, "s", num(x, "id")),
                            num(args, "producer_uid"));
    }
    if (!fed || !produced)
      print_error("%s: copy %s at %.3f has no flow %s\n", app, str(e, "name"),
                  ts(e), fed ? "from its producer" : "to its task");
    assert_true(fed && produced);
  }
  /* No empty thread: every named thread has a slice. */
  json_array_foreach(evs, i, e) {
    if (!is(e, "M") || strcmp(str(e, "name"), "thread_name") != 0)
      continue;
    bool used = false;
    json_array_foreach(evs, j, x) {
      used |= is(x, "X") && same_thread(x, e);
    }
    if (!used)
      print_error("%s: empty thread %s\n", app,
                  str(json_object_get(e, "args"), "name"));
    assert_true(used);
  }
  print_message("%s: %zu copies, %zu runtime slices, %zu flow events\n", app,
                ncopies, nutil, nflows);
  assert_true(ncopies > 0);
  assert_true(nutil > 0);
  json_decref(root);
}

static void test_circuit(void **state) {
  (void)state;
  check_trace("circuit:small", "p100x4", 1);
}

static void test_stencil_two_nodes(void **state) {
  (void)state;
  check_trace("stencil:small", "p100x4:nodes=2", 1);
}

static void test_johnson_ranks(void **state) {
  (void)state;
  check_trace("johnson:small", "p100x4", 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_circuit),
      cmocka_unit_test(test_stencil_two_nodes),
      cmocka_unit_test(test_johnson_ranks),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
