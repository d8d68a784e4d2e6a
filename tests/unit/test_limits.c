/*
 * Regression tests of the limits (docs/limits.md): hostile inputs that once
 * crashed, hung or took memory out of proportion to their size, each now
 * bounded and answered with a located error, or handled in time and memory
 * in proportion to the input. The large inputs are generated here, never
 * committed; each test stays well under a second or two in the sanitized
 * build, where the old behaviour took minutes, gigabytes or the stack.
 */
#define _DEFAULT_SOURCE /* syscall */
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * The CPU-time bounds below are hang detectors, not speed targets (those
 * live in bench/): each case guards a fix of work that grew quadratically
 * or exponentially (minutes, or 2^40 steps, before the fix), and takes
 * well under a second now (0.06 to 0.55 s measured in the sanitized debug
 * build at load 9): HANG_CPU_S is 18 times the slowest of them and a
 * fraction of the broken ones' minutes. CPU time, not the wall clock, so
 * that the machine's load does not inflate it.
 */
#define HANG_CPU_S 10.0

/* CPU seconds of this process since t0 (taken with
 * CLOCK_PROCESS_CPUTIME_ID). */
static double seconds_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) +
         (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* An allocator hook that counts the bytes in use and their peak. */
typedef struct counting {
  size_t now, peak;
} counting;

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  counting *c = ud;
  if (nsize == 0) {
    free(ptr);
    c->now -= osize;
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (!p)
    return NULL;
  c->now = c->now - (ptr ? osize : 0) + nsize;
  if (c->now > c->peak)
    c->peak = c->now;
  return p;
}

/* Compiles mapper text with a counting context; the status, the peak
 * bytes in *peak, the diagnostics in diags (copied). */
static mapopt_status compile_counted(const char *src, size_t len,
                                     mapopt_print_fn print, void *ud,
                                     size_t *peak) {
  counting c = {0, 0};
  mapopt_ctx *cctx;
  assert_int_equal(mapopt_ctx_new(count_alloc, &c, &cctx), MAPOPT_OK);
  mapopt_diags *d;
  assert_int_equal(mapopt_diags_new(cctx, &d), MAPOPT_OK);
  mapopt_dsl_options opts = {.file = "t.map", .print = print, .print_ud = ud};
  mapopt_program *prog = NULL;
  mapopt_status st = mapopt_dsl_compile(cctx, src, len, &opts, d, &prog);
  mapopt_dsl_free(prog);
  mapopt_diags_clear(diags);
  for (size_t i = 0; i < mapopt_diags_count(d); i++) {
    const mapopt_diag *x = mapopt_diags_get(d, i);
    mapopt_diags_add(diags, x->severity, x->code, x->file, x->line, x->col,
                     "%s", x->message);
  }
  mapopt_diags_free(d);
  mapopt_ctx_free(cctx);
  *peak = c.peak;
  return st;
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
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  mapopt_sim_plan *plan = NULL;
  assert_int_equal(mapopt_sim_plan_new(ctx, run, &plan), MAPOPT_OK);
  double s = seconds_since(&t0);
  print_message("  plan of %lld ops: %.3f s\n", (long long)run->nops, s);
  assert_true(s < HANG_CPU_S);
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

/* ---- application structure: nesting and fan-out bounded ------------------ */

/* An app whose inner task t<k> launches t<k+1> `fan` times, levels deep;
 * the last task is a leaf. */
static char *nested_tasks(int levels, int fan) {
  text t = {0};
  put(&t, APP_HEAD " \"tasks\": [");
  for (int k = 0; k < levels; k++) {
    put(&t,
        "{\"name\": \"t%d\", \"variants\": [{\"kind\": \"CPU\", "
        "\"inner\": true}], \"body\": [",
        k);
    for (int f = 0; f < fan; f++)
      put(&t, "%s{\"op\": \"single\", \"task\": \"t%d\"}", f ? ", " : "",
          k + 1);
    put(&t, "]},\n");
  }
  put(&t,
      "{\"name\": \"t%d\", \"variants\": [{\"kind\": \"CPU\", "
      "\"fixed_ns\": \"1\"}]}],\n"
      " \"program\": [{\"op\": \"loop\", \"var\": \"t\", \"count\": "
      "\"steps\", \"timed\": true, \"body\": [{\"op\": \"single\", "
      "\"task\": \"t0\"}]}]}",
      levels);
  return t.s;
}

/*
 * Forty levels of inner tasks that each launch the next twice: the checks
 * and the estimate of the run's size walked 2^40 launches (a hang). A
 * chain of 100000 inner tasks recursed 100000 deep. The walk is now
 * bounded in size and depth, with located errors.
 */
static void test_app_fan_out_and_nesting(void **state) {
  (void)state;
  char *fan = nested_tasks(40, 2);
  struct timespec t0;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  mapopt_app *app = NULL;
  assert_int_equal(load_app(fan, &app), MAPOPT_EINVAL);
  assert_true(seconds_since(&t0) < HANG_CPU_S);
  assert_true(diag_has("more than 1000000 statements with the body of each "
                       "inner task counted at every launch"));
  assert_true(mapopt_diags_get(diags, 0)->line > 0);
  free(fan);

  char *deep = nested_tasks(100000, 1);
  assert_int_equal(load_app(deep, &app), MAPOPT_EINVAL);
  assert_true(diag_has("statements nested more than 64 deep"));
  free(deep);

  /* Within both limits, the run is what the nesting says: 2^10 leaves. */
  char *ok = nested_tasks(10, 2);
  assert_int_equal(load_app(ok, &app), MAPOPT_OK);
  mapopt_app_options ao = {.iterations = -1, .warmup = -1};
  mapopt_app_machine mach = {1, 1, 1};
  mapopt_app_run *run = NULL;
  assert_int_equal(mapopt_app_instantiate(app, &ao, &mach, diags, &run),
                   MAPOPT_OK);
  assert_int_equal(run->nops, 2047);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  free(ok);
}

/*
 * Pennant at 1024 nodes took 5.85 GB although the memory limit was 4 GiB:
 * the limit counted the run, not what simulating it takes (its plan, the
 * engine's state). mapopt_sim_instantiate now estimates that too and
 * refuses before allocating it; a raised limit lets the run through.
 */
static void test_sim_memory_limit(void **state) {
  (void)state;
  mapopt_machine *m = NULL;
  assert_int_equal(mapopt_machine_resolve(ctx, "p100x4", diags, &m), MAPOPT_OK);
  mapopt_app *app = NULL;
  const char *spec = NULL;
  assert_int_equal(
      mapopt_app_resolve(ctx, "pennant:lassen", diags, &app, &spec), MAPOPT_OK);
  mapopt_app_options ao = {
      .spec = spec, .iterations = -1, .warmup = -1, .max_bytes = 4 << 20};
  mapopt_app_run *run = NULL;
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_sim_instantiate(m, app, &ao, diags, &run),
                   MAPOPT_EINVAL);
  assert_null(run);
  assert_true(diag_has("refusing to simulate: the run has "));
  assert_true(diag_has("more than the limit of 0.0 GiB (raise options "
                       "max_bytes)"));
  ao.max_bytes = 64 << 20;
  assert_int_equal(mapopt_sim_instantiate(m, app, &ao, diags, &run), MAPOPT_OK);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  mapopt_machine_free(m);
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
  return fixture_simulate_text(m, app, NULL, mapper, so);
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

/* A piece of 2^61 elements of 2^30 + 8 bytes overflowed the size of its
 * instance (UBSan in the engine). Sizes saturate: the instance fits in no
 * memory, an OOM of the run. */
static void test_sim_instance_bytes_saturate(void **state) {
  (void)state;
  const char *json =
      "{\"format\": \"mapopt-app/1\", \"name\": \"t\", \"params\": {},\n"
      " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},\n"
      " \"regions\": [{\"name\": \"r\", \"fields\": [[\"u\", 1073741824], "
      "[\"v\", 8]],\n  \"atoms\": {\"groups\": [{\"group\": \"g\", "
      "\"count\": 2, \"elements\": \"2305843009213693952\"}]}}],\n"
      " \"partitions\": [{\"name\": \"p\", \"region\": \"r\", \"kind\": "
      "\"group\", \"group\": \"g\"}],\n"
      " \"tasks\": [{\"name\": \"w\", \"variants\": [{\"kind\": \"CPU\", "
      "\"fixed_ns\": 1}]}],\n"
      " \"program\": [{\"op\": \"loop\", \"var\": \"t\", \"count\": 1, "
      "\"timed\": true, \"body\": [{\"op\": \"index\", \"task\": \"w\", "
      "\"domain\": [2], \"args\": [{\"part\": \"p\", \"priv\": \"RW\", "
      "\"bytes\": 1}]}]}]}";
  mapopt_sim_options so = {0};
  mapopt_sim_result *res = simulate(json, "Task * CPU;\n", &so);
  assert_int_equal(res->error, MAPOPT_SIM_OOM);
  assert_non_null(strstr(res->log, "allocation of size 9223372036854775807"));
  mapopt_sim_result_free(res);
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

/* ---- mapper values: a budget, a depth, a bounded print ------------------- */

/*
 * Tuples that double with each statement: t14 has 2^17 items, and each of
 * the 40 statements after it builds 2^18 (6 MB each, twice that while the
 * list grows). Each statement stays under the step limit, so
 * nothing stopped the total: a 4 KB mapper took gigabytes. The value
 * budget (R27) now stops it, early and located.
 */
static void test_dsl_value_budget(void **state) {
  (void)state;
  text t = {0};
  put(&t, "t0 = (1, 2, 3, 4, 5, 6, 7, 8);\n");
  for (int i = 1; i <= 14; i++)
    put(&t, "t%d = (*t%d, *t%d);\n", i, i - 1, i - 1);
  for (int i = 0; i < 40; i++)
    put(&t, "u%d = (*t14, *t14);\n", i);
  size_t peak;
  mapopt_status st = compile_counted(t.s, t.len, NULL, NULL, &peak);
  print_message("  peak %zu bytes\n", peak);
  assert_int_equal(st, MAPOPT_ELOAD);
  assert_true(diag_has("value budget exceeded: more than 4000000"));
  assert_string_equal(mapopt_diags_get(diags, 0)->code, "R27");
  assert_true(mapopt_diags_get(diags, 0)->line > 16);
  assert_true(mapopt_diags_get(diags, 0)->line < 40);
  assert_true(peak < (size_t)400 << 20);
  free(t.s);
}

static void count_lines(void *ud, const char *line) {
  size_t *longest = ud;
  if (strlen(line) > *longest)
    *longest = strlen(line);
}

/*
 * 100000 chained bindings `a1 = (a0, 1);` nest a tuple 100000 deep, and
 * printing it overflowed the stack; `t = (t, t)` 40 times shares
 * subtrees, and printing it would write 2^40 items. Tuples now nest at
 * most 100 levels (R27), and a printed value stops after 64 KiB.
 */
static void test_dsl_tuple_depth_and_print(void **state) {
  (void)state;
  text t = {0};
  put(&t, "a0 = 1;\n");
  for (int i = 1; i <= 100000; i++)
    put(&t, "a%d = (a%d, 1);\n", i, i - 1);
  put(&t, "print(\"{}\", a100000);\n");
  size_t peak, longest = 0;
  assert_int_equal(compile_counted(t.s, t.len, count_lines, &longest, &peak),
                   MAPOPT_ELOAD);
  assert_true(diag_has("tuples nested more than 100 levels deep"));
  assert_int_equal(mapopt_diags_get(diags, 0)->line, 102);
  free(t.s);

  text u = {0};
  put(&u, "t0 = (1, 2);\n");
  for (int i = 1; i <= 40; i++)
    put(&u, "t%d = (t%d, t%d);\n", i, i - 1, i - 1);
  put(&u, "print(\"{}\", t40);\n");
  assert_int_equal(compile_counted(u.s, u.len, count_lines, &longest, &peak),
                   MAPOPT_OK);
  assert_true(longest > 60000 && longest < 70000);
  free(u.s);
}

typedef struct trace_lines {
  size_t n;
  char last[128];
} trace_lines;

static void count_trace(void *ud, const char *line) {
  trace_lines *t = ud;
  t->n++;
  snprintf(t->last, sizeof t->last, "%s", line);
}

/* The evaluation trace of `mapopt show` wrote one line per statement
 * executed: 40000 lines (of up to 64 KiB each) for a comprehension over a
 * 20000-tuple. It stops after 10000 lines, saying so. */
static void test_dsl_trace_bounded(void **state) {
  (void)state;
  text t = {0};
  put(&t, "def g(int x) { y = x; return x; }\ntt = (0");
  for (int i = 1; i < 20000; i++)
    put(&t, ", %d", i);
  put(&t, ");\ndef m(Task t) { a = tuple(g(i) for i in tt); "
          "return Machine(GPU)[0, 0]; }\nIndexTaskMap step m;\n");
  trace_lines lines = {0, ""};
  mapopt_dsl_options opts = {
      .file = "t.map", .trace = count_trace, .trace_ud = &lines};
  mapopt_program *prog = NULL;
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_dsl_compile(ctx, t.s, t.len, &opts, diags, &prog),
                   MAPOPT_OK);
  int64_t pt[1] = {0}, sp[1] = {4};
  mapopt_map_answer ans;
  assert_int_equal(mapopt_policy_index_map(prog, "step", 1, pt, sp,
                                           MAPOPT_PROC_GPU, &ans, diags),
                   MAPOPT_OK);
  assert_int_equal(lines.n, 10001);
  assert_string_equal(lines.last, "... trace truncated after 10000 lines");
  mapopt_dsl_free(prog);
  free(t.s);
}

/* A mapper larger than MAPOPT_DSL_MAX_INPUT is refused before it is
 * parsed (a 50 MB list of names took 5 GB to compile). */
static void test_dsl_input_size(void **state) {
  (void)state;
  size_t n = (size_t)MAPOPT_DSL_MAX_INPUT + 1;
  char *big = malloc(n);
  assert_non_null(big);
  memset(big, ' ', n);
  size_t peak;
  assert_int_equal(compile_counted(big, n, NULL, NULL, &peak), MAPOPT_ESYNTAX);
  assert_true(diag_has("mapper too large (more than 16777216 bytes)"));
  assert_int_equal(mapopt_diags_get(diags, 0)->line, 1);
  assert_true(peak < (size_t)1 << 20);
  free(big);
}

/*
 * A `Task` list of a million repeated names: each repeat is a W01 warning
 * (100 kept, the rest counted), and the memory stays in proportion to the
 * text (it took 75 bytes per input byte: the list's copies as it doubled,
 * a key and a binding per repeated name, a stored warning per repeat).
 */
static void test_dsl_long_task_list(void **state) {
  (void)state;
  text t = {0};
  put(&t, "Task a");
  for (int i = 0; i < 1000000; i++)
    put(&t, ",a");
  put(&t, " GPU;\n");
  size_t peak;
  assert_int_equal(compile_counted(t.s, t.len, NULL, NULL, &peak), MAPOPT_OK);
  print_message("  %zu bytes of text, peak %zu bytes\n", t.len, peak);
  assert_int_equal(mapopt_diags_count(diags), MAPOPT_DIAGS_LIMIT + 1);
  assert_true(diag_has("too many warnings: only the first 100 are shown"));
  assert_true(peak < 40 * t.len);
  free(t.s);
}

/* ---- diagnostics: bounded, escaped; JSON objects linear ------------------ */

/*
 * An application object with 80000 unknown keys printed 80000 errors and
 * took minutes: the duplicate-key check compared each key with every
 * earlier one. Now the check is hashed and the list keeps 100 errors, one
 * note, and the count. A duplicate at the very end is still found.
 */
static void test_json_many_keys(void **state) {
  (void)state;
  text t = {0};
  put(&t, "{\"format\": \"mapopt-app/1\"");
  for (int i = 0; i < 80000; i++)
    put(&t, ", \"k%d\": 1", i);
  put(&t, "}");
  struct timespec t0;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  mapopt_app *app = NULL;
  assert_int_equal(load_app(t.s, &app), MAPOPT_EINVAL);
  assert_true(seconds_since(&t0) < HANG_CPU_S);
  assert_int_equal(mapopt_diags_count(diags), MAPOPT_DIAGS_LIMIT + 1);
  assert_true(mapopt_diags_errors(diags) >= 80000);
  assert_true(mapopt_diags_dropped(diags) >= 80000 - MAPOPT_DIAGS_LIMIT);
  const mapopt_diag *last =
      mapopt_diags_get(diags, mapopt_diags_count(diags) - 1);
  assert_int_equal(last->severity, MAPOPT_SEV_NOTE);
  assert_string_equal(last->message,
                      "too many errors: only the first 100 are shown");
  t.len -= 1;
  put(&t, ", \"k5\": 2}");
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  assert_int_equal(load_app(t.s, &app), MAPOPT_EINVAL);
  assert_true(seconds_since(&t0) < HANG_CPU_S);
  assert_int_equal(mapopt_diags_count(diags), 1);
  assert_true(diag_has("duplicate key \"k5\" (first at 1:"));
  free(t.s);
}

/* A JSON document larger than MAPOPT_JSON_MAX_INPUT is refused before it
 * is parsed (its tree would take several times its size). */
static void test_json_input_size(void **state) {
  (void)state;
  size_t n = (size_t)MAPOPT_JSON_MAX_INPUT + 1;
  char *big = malloc(n);
  assert_non_null(big);
  memset(big, ' ', n);
  big[0] = '{';
  mapopt_diags_clear(diags);
  mapopt_app *app = NULL;
  assert_int_equal(mapopt_app_load_json(ctx, "big.json", big, n, diags, &app),
                   MAPOPT_EINVAL);
  assert_true(diag_has("file too large (more than 268435456 bytes)"));
  assert_int_equal(mapopt_diags_get(diags, 0)->line, 1);
  free(big);
}

/* The limit is per kind: warnings past it do not hide the first error, a
 * note goes with the diagnostic it follows, and 0 keeps everything. */
static void test_diags_limit_kinds(void **state) {
  (void)state;
  mapopt_diags *d;
  assert_int_equal(mapopt_diags_new(ctx, &d), MAPOPT_OK);
  mapopt_diags_set_limit(d, 3);
  for (int i = 0; i < 10; i++) {
    mapopt_diags_add(d, MAPOPT_SEV_WARNING, "", "f", 1, i + 1, "w%d", i);
    mapopt_diags_add(d, MAPOPT_SEV_NOTE, "", "f", 1, i + 1, "n%d", i);
  }
  mapopt_diags_add(d, MAPOPT_SEV_ERROR, "", "f", 2, 1, "the error");
  /* 3 warnings with their notes, the note on warnings, the error. */
  assert_int_equal(mapopt_diags_count(d), 8);
  assert_string_equal(mapopt_diags_get(d, 5)->message, "n2");
  assert_string_equal(mapopt_diags_get(d, 6)->message,
                      "too many warnings: only the first 3 are shown");
  assert_string_equal(mapopt_diags_get(d, 7)->message, "the error");
  assert_int_equal(mapopt_diags_errors(d), 1);
  assert_int_equal(mapopt_diags_dropped(d), 14);
  mapopt_diags_clear(d);
  mapopt_diags_set_limit(d, 0);
  for (int i = 0; i < 500; i++)
    mapopt_diags_add(d, MAPOPT_SEV_ERROR, "", "f", 1, 1, "e");
  assert_int_equal(mapopt_diags_count(d), 500);
  mapopt_diags_free(d);
}

/* A name with a terminal escape sequence, in a message or a file name, is
 * stored with its control characters as \xNN: printing a diagnostic
 * cannot drive the terminal. */
static void test_diags_escape_controls(void **state) {
  (void)state;
  mapopt_diags_clear(diags);
  mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "a\nb.map", 1, 1,
                   "unknown task \"%s\"", "\x1b[31mred\x1b[0m\ttab\x7f");
  const mapopt_diag *d = mapopt_diags_get(diags, 0);
  assert_string_equal(d->message,
                      "unknown task \"\\x1B[31mred\\x1B[0m\\x09tab\\x7F\"");
  assert_string_equal(d->file, "a\\x0Ab.map");
  /* The same through a loader: an app named with an escape sequence. */
  const char *json =
      "{\"format\": \"mapopt-app/1\", \"name\": \"x\\u001b]0;pwn\\u0007\","
      " \"bogus\\u001b[2J\": 1}";
  mapopt_app *app = NULL;
  assert_int_equal(load_app(json, &app), MAPOPT_EINVAL);
  for (size_t i = 0; i < mapopt_diags_count(diags); i++)
    for (const char *c = mapopt_diags_get(diags, i)->message; *c; c++)
      assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
  assert_true(diag_has("bogus\\x1B[2J"));
}

/* ---- rewriting files: links, long names, folders, devices --------------- */

/* The names in folder dir, other than "." and "..", one per line. */
static void list_dir(const char *dir, char *out, size_t size) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  out[0] = '\0';
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      snprintf(out + strlen(out), size - strlen(out), "%s\n", e->d_name);
  closedir(d);
}

/*
 * mapopt_file_replace used to name its temporary file PATH.tmpXXXXXX: a
 * 245-byte name then overflowed the 255-byte limit of a name. It replaced
 * a symbolic link by a regular file. And reading a folder failed with
 * "Input/output error". Now the temporary file has a short name of its
 * own, links are written through, and a folder says it is one.
 */
static void test_file_replace_paths(void **state) {
  (void)state;
  char dir[] = "/tmp/mapopt-limits-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[512], link_path[512], listing[4096];
  /* A 245-byte name. */
  snprintf(path, sizeof path, "%s/", dir);
  size_t base = strlen(path);
  memset(path + base, 'a', 241);
  strcpy(path + base + 241, ".map");
  assert_int_equal(strlen(path + base), 245);
  assert_int_equal(mapopt_file_replace(path, "x", 1), MAPOPT_OK);
  assert_int_equal(mapopt_file_replace(path, "yz", 2), MAPOPT_OK);
  char *buf;
  size_t len;
  assert_int_equal(mapopt_file_read(ctx, path, NULL, &buf, &len), MAPOPT_OK);
  assert_int_equal(len, 2);
  mapopt_text_free(buf);
  /* A link is written through: the link stays, its target changes. */
  snprintf(link_path, sizeof link_path, "%s/link.map", dir);
  assert_int_equal(symlink(path + base, link_path), 0);
  assert_int_equal(mapopt_file_replace(link_path, "new", 3), MAPOPT_OK);
  struct stat st;
  assert_int_equal(lstat(link_path, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  assert_int_equal(mapopt_file_read(ctx, path, NULL, &buf, &len), MAPOPT_OK);
  assert_int_equal(len, 3);
  assert_memory_equal(buf, "new", 3);
  mapopt_text_free(buf);
  /* No temporary file is left behind. */
  list_dir(dir, listing, sizeof listing);
  assert_int_equal(strlen(listing), 245 + 1 + strlen("link.map") + 1);
  /* A folder: its own error, not EIO's message. */
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_file_read(ctx, dir, diags, &buf, &len), MAPOPT_EIO);
  assert_true(diag_has("cannot read file: Is a directory"));
  /* A dangling link is an error, and stays a link. */
  unlink(path);
  assert_int_equal(mapopt_file_replace(link_path, "x", 1), MAPOPT_EIO);
  assert_int_equal(lstat(link_path, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  unlink(link_path);
  assert_int_equal(rmdir(dir), 0);
}

/* A full device: the write error is reported, not swallowed. */
static void test_file_replace_full_device(void **state) {
  (void)state;
  if (access("/dev/full", W_OK) != 0)
    skip();
  errno = 0;
  assert_int_equal(mapopt_file_replace("/dev/full", "data", 4), MAPOPT_EIO);
  assert_int_equal(errno, ENOSPC);
}

/*
 * This test program's fsync: the library's calls resolve to it. When
 * raise_in_fsync is set it raises SIGTERM first, as a Ctrl-C or a kill
 * that lands while mapopt_file_replace writes its temporary file.
 */
static volatile sig_atomic_t raise_in_fsync;

int fsync(int fd) {
  if (raise_in_fsync)
    raise(SIGTERM);
  return (int)syscall(SYS_fsync, fd);
}

/*
 * A rewrite killed while it wrote left PATH.tmpXXXXXX behind. The signal
 * is now held back until the temporary file is renamed: the process still
 * dies of it, and the folder holds only the new file.
 */
static void test_file_replace_signal(void **state) {
  (void)state;
  char dir[] = "/tmp/mapopt-limits-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[512], listing[4096];
  snprintf(path, sizeof path, "%s/m.map", dir);
  assert_int_equal(mapopt_file_replace(path, "old", 3), MAPOPT_OK);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    raise_in_fsync = 1;
    mapopt_file_replace(path, "new", 3);
    _exit(0); /* not reached: SIGTERM is delivered once the file is in */
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  list_dir(dir, listing, sizeof listing);
  assert_string_equal(listing, "m.map\n");
  char *buf;
  size_t len;
  assert_int_equal(mapopt_file_read(ctx, path, NULL, &buf, &len), MAPOPT_OK);
  assert_memory_equal(buf, "new", 3);
  mapopt_text_free(buf);
  unlink(path);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dag_future_waits_linear),
      cmocka_unit_test(test_app_expr_flat_chains),
      cmocka_unit_test(test_app_fan_out_and_nesting),
      cmocka_unit_test(test_sim_memory_limit),
      cmocka_unit_test(test_sim_time_saturates),
      cmocka_unit_test(test_sim_instance_bytes_saturate),
      cmocka_unit_test(test_app_field_bytes_bounded),
      cmocka_unit_test(test_dsl_value_budget),
      cmocka_unit_test(test_dsl_tuple_depth_and_print),
      cmocka_unit_test(test_dsl_trace_bounded),
      cmocka_unit_test(test_dsl_input_size),
      cmocka_unit_test(test_dsl_long_task_list),
      cmocka_unit_test(test_json_many_keys),
      cmocka_unit_test(test_json_input_size),
      cmocka_unit_test(test_diags_limit_kinds),
      cmocka_unit_test(test_diags_escape_controls),
      cmocka_unit_test(test_file_replace_paths),
      cmocka_unit_test(test_file_replace_full_device),
      cmocka_unit_test(test_file_replace_signal),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
