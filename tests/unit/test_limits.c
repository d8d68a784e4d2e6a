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
static bool diag_has(const char *needle) {
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

/* ---- application expressions: depth bounded, flat chains included ------ */

/* An app whose task "w" costs flops (an expression text). */
static char *app_with_flops(const char *flops) {
  text t = {0};
  put(&t,
      APP_HEAD " \"tasks\": [{\"name\": \"w\", \"variants\": [{\"kind\": "
               "\"CPU\", \"flops\": \"%s\"}]}],\n"
               " \"program\": [{\"op\": \"loop\", \"var\": \"t\", \"count\": "
               "\"steps\", \"timed\": true, \"body\": [{\"op\": \"single\", "
               "\"task\": \"w\"}]}]}",
      flops);
  return t.s;
}

/* n copies of item joined by sep, inside prefix ... suffix. */
static char *chain(const char *prefix, const char *item, const char *sep, int n,
                   const char *suffix) {
  text t = {0};
  put(&t, "%s", prefix);
  for (int i = 0; i < n; i++)
    put(&t, "%s%s", i ? sep : "", item);
  put(&t, "%s", suffix);
  return t.s;
}

/*
 * "1+1+...+1" with 200000 terms (and min(1, ..., 1) with as many
 * arguments) used to overflow the stack when evaluated: the nesting limit
 * counted parentheses, not the depth of the tree a flat chain builds. Now
 * the tree's depth is bounded and the error quotes the start of the text.
 */
static void test_app_expr_flat_chains(void **state) {
  (void)state;
  char *exprs[] = {chain("", "1", "+", 200000, ""),
                   chain("min(", "1", ",", 200000, ")"),
                   chain("", "2", "*", 200000, "")};
  for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
    char *json = app_with_flops(exprs[i]);
    mapopt_app *app = NULL;
    assert_int_equal(load_app(json, &app), MAPOPT_EINVAL);
    assert_true(diag_has("expression nested too deeply (more than 200"));
    const mapopt_diag *d = mapopt_diags_get(diags, 0);
    assert_true(d->line > 0 && d->col > 0);
    assert_true(strlen(d->message) < 400); /* an excerpt, not 400 KB */
    free(json);
    free(exprs[i]);
  }
  /* Within the limit a chain loads and evaluates. */
  char *ok = chain("", "1", "+", MAPOPT_APP_MAX_EXPR_DEPTH, "");
  char *json = app_with_flops(ok);
  mapopt_app *app = NULL;
  assert_int_equal(load_app(json, &app), MAPOPT_OK);
  mapopt_app_options ao = {.iterations = -1, .warmup = -1};
  mapopt_app_machine mach = {1, 1, 1};
  mapopt_app_run *run = NULL;
  assert_int_equal(mapopt_app_instantiate(app, &ao, &mach, diags, &run),
                   MAPOPT_OK);
  assert_int_equal(run->ops[0].flops[0], MAPOPT_APP_MAX_EXPR_DEPTH);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  free(json);
  free(ok);
  char *over = chain("", "1", "+", MAPOPT_APP_MAX_EXPR_DEPTH + 2, "");
  json = app_with_flops(over);
  assert_int_equal(load_app(json, &app), MAPOPT_EINVAL);
  free(json);
  free(over);
}

/* ---- integer overflow: saturate or refuse ------------------------------- */

/* Simulates app (JSON text) under mapper on the p100x4 preset; returns
 * the result, which the caller frees. */
static mapopt_sim_result *simulate(const char *json, const char *mapper,
                                   const mapopt_sim_options *so) {
  mapopt_app *app = NULL;
  assert_int_equal(load_app(json, &app), MAPOPT_OK);
  mapopt_machine *m = NULL;
  assert_int_equal(mapopt_machine_resolve(ctx, "p100x4", diags, &m), MAPOPT_OK);
  mapopt_app_options ao = {.iterations = -1, .warmup = -1};
  mapopt_app_run *run = NULL;
  assert_int_equal(mapopt_sim_instantiate(m, app, &ao, diags, &run), MAPOPT_OK);
  mapopt_machine_shape shape;
  mapopt_sim_shape(m, run, &shape);
  mapopt_dsl_options dopts = {.file = "t.map", .shape = &shape};
  mapopt_program *prog = NULL;
  assert_int_equal(
      mapopt_dsl_compile(ctx, mapper, strlen(mapper), &dopts, diags, &prog),
      MAPOPT_OK);
  mapopt_sim_result *res = NULL;
  assert_int_equal(mapopt_sim_run(ctx, m, run, prog, so, &res), MAPOPT_OK);
  mapopt_dsl_free(prog);
  mapopt_app_run_free(run);
  mapopt_machine_free(m);
  mapopt_app_free(app);
  return res;
}

/*
 * A task of 10^16 flops on a CPU takes longer than int64 nanoseconds can
 * hold: the engine's `now + duration` overflowed (UBSan), and the run then
 * reported a lower bound of 9.2e9 s at an efficiency of 1.4e13. Times now
 * saturate, so the run ends in a TIMEOUT, whatever the time limit.
 */
static void test_sim_time_saturates(void **state) {
  (void)state;
  char *json = app_with_flops("10000000000000000");
  int64_t limits[] = {0, INT64_MAX};
  for (size_t i = 0; i < 2; i++) {
    mapopt_sim_options so = {.time_limit_ns = limits[i]};
    mapopt_sim_result *res = simulate(json, "Task * CPU;\n", &so);
    assert_int_equal(res->error, MAPOPT_SIM_TIMEOUT);
    assert_true(res->efficiency <= 1.0);
    mapopt_sim_result_free(res);
  }
  free(json);
}

/* A field of INT64_MAX bytes overflowed the sum of a requirement's field
 * bytes (UBSan in the loader); field sizes are now bounded. */
static void test_app_field_bytes_bounded(void **state) {
  (void)state;
  char json[1024];
  snprintf(
      json, sizeof json,
      "{\"format\": \"mapopt-app/1\", \"name\": \"t\", \"params\": {},\n"
      " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},\n"
      " \"regions\": [{\"name\": \"r\", \"fields\": [[\"a\", "
      "9223372036854775807], [\"b\", 8]],\n"
      "  \"atoms\": {\"groups\": [{\"group\": \"g\", \"count\": 1, "
      "\"elements\": 1}]}}],\n"
      " \"partitions\": [], \"tasks\": [{\"name\": \"w\", \"variants\": "
      "[{\"kind\": \"CPU\"}]}],\n"
      " \"program\": [{\"op\": \"fill\", \"region\": \"r\"},\n"
      "  {\"op\": \"loop\", \"var\": \"t\", \"count\": 1, \"timed\": true, "
      "\"body\": []}]}");
  mapopt_app *app = NULL;
  assert_int_equal(load_app(json, &app), MAPOPT_EINVAL);
  assert_true(diag_has("with bytes from 1 to 1073741824"));
  assert_int_equal(mapopt_diags_get(diags, 0)->line, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dag_future_waits_linear),
      cmocka_unit_test(test_app_expr_flat_chains),
      cmocka_unit_test(test_sim_time_saturates),
      cmocka_unit_test(test_app_field_bytes_bounded),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
