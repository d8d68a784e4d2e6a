/*
 * Regression tests of the limits (docs/limits.md): hostile inputs that once
 * crashed, hung or took memory out of proportion to their size, each now
 * bounded and answered with a located error, or handled in time and memory
 * in proportion to the input. The large inputs are generated here, never
 * committed; each test stays well under a second or two in the sanitized
 * build, where the old behaviour took minutes, gigabytes or the stack.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "mapopt/mapopt.h"

#include "fixture.h"

/* ---- helpers --------------------------------------------------------------
 */

/* A growing text for generated inputs. */
typedef struct text {
  char *s;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  assert_true(n >= 0);
  if (t->len + (size_t)n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 1024;
    while (cap < t->len + (size_t)n + 1)
      cap *= 2;
    t->s = realloc(t->s, cap);
    assert_non_null(t->s);
    t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

static double seconds_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) +
         (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* Whether some diagnostic's message contains needle. */
static __attribute__((unused)) bool diag_has(const char *needle) {
  for (size_t i = 0; i < mapopt_diags_count(diags); i++)
    if (strstr(mapopt_diags_get(diags, i)->message, needle))
      return true;
  return false;
}

/* Loads app JSON text; returns the status, the app in *out on success. */
static mapopt_status load_app(const char *json, mapopt_app **out) {
  mapopt_diags_clear(diags);
  return mapopt_app_load_json(ctx, "app.json", json, strlen(json), diags, out);
}

/* The head of a small app: parameters, no data. */
#define APP_HEAD                                                               \
  "{\"format\": \"mapopt-app/1\", \"name\": \"t\", \"params\": {\"steps\": "   \
  "1},\n \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},\n"          \
  " \"regions\": [], \"partitions\": [],\n"

/* ---- the dependence analysis is linear in the ops ------------------------ */

/*
 * One op produces a future and n later ops wait on it: the analysis used
 * to search back from each waiter to the producer (n^2 / 2 steps: minutes
 * at n = 100000 in the sanitized build). Now a table per future answers.
 */
static void test_dag_future_waits_linear(void **state) {
  (void)state;
  text t = {0};
  put(&t, APP_HEAD " \"tasks\": [{\"name\": \"make\", \"variants\": "
                   "[{\"kind\": \"CPU\", \"fixed_ns\": \"1\"}]},\n"
                   " {\"name\": \"use\", \"variants\": [{\"kind\": \"CPU\", "
                   "\"fixed_ns\": \"1\"}]}],\n"
                   " \"program\": [{\"op\": \"single\", \"task\": \"make\", "
                   "\"future\": {\"name\": \"f\"}},\n"
                   " {\"op\": \"loop\", \"var\": \"t\", \"count\": \"steps\", "
                   "\"timed\": true, \"body\": [{\"op\": \"index\", \"task\": "
                   "\"use\", \"domain\": [\"100000\"], \"wait\": [\"f\"]}]}]}");
  mapopt_app *app = NULL;
  assert_int_equal(load_app(t.s, &app), MAPOPT_OK);
  mapopt_machine *m = NULL;
  assert_int_equal(mapopt_machine_resolve(ctx, "p100x4", diags, &m), MAPOPT_OK);
  mapopt_app_options ao = {.iterations = -1, .warmup = -1};
  mapopt_app_run *run = NULL;
  assert_int_equal(mapopt_sim_instantiate(m, app, &ao, diags, &run), MAPOPT_OK);
  assert_true(run->nops > 100000);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  mapopt_sim_plan *plan = NULL;
  assert_int_equal(mapopt_sim_plan_new(ctx, run, &plan), MAPOPT_OK);
  double s = seconds_since(&t0);
  print_message("  plan of %lld ops: %.3f s\n", (long long)run->nops, s);
  assert_true(s < 5.0);
  mapopt_sim_plan_free(plan);
  mapopt_app_run_free(run);
  mapopt_machine_free(m);
  mapopt_app_free(app);
  free(t.s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dag_future_waits_linear),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
