/* The shared unit-test fixture; see fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixture.h"
#include "mapopt/mapopt.h"

mapopt_ctx *ctx;
mapopt_diags *diags;

int fixture_setup(void **state) {
  (void)state;
  if (mapopt_ctx_new(NULL, NULL, &ctx) != MAPOPT_OK)
    return -1;
  if (mapopt_diags_new(ctx, &diags) != MAPOPT_OK) {
    mapopt_ctx_free(ctx);
    return -1;
  }
  return 0;
}

int fixture_teardown(void **state) {
  (void)state;
  mapopt_diags_free(diags);
  mapopt_ctx_free(ctx);
  return 0;
}

void fixture_print_diags(void) {
  char line[1024];
  for (size_t i = 0; i < mapopt_diags_count(diags); i++) {
    mapopt_diag_format(mapopt_diags_get(diags, i), line, sizeof line);
    print_message("  %s\n", line);
  }
}

void fixture_expect_report_error(const char *text, const char *want) {
  mapopt_sim_result *r = NULL;
  mapopt_diags_clear(diags);
  assert_int_equal(
      mapopt_sim_report_read(ctx, "r.json", text, strlen(text), diags, &r),
      MAPOPT_EINVAL);
  assert_null(r);
  assert_true(mapopt_diags_count(diags) > 0);
  char line[512];
  mapopt_diag_format(mapopt_diags_get(diags, 0), line, sizeof line);
  if (!strstr(line, want)) {
    print_message("got: %s\nwant: %s\n", line, want);
    fail();
  }
  mapopt_diags_clear(diags);
}

mapopt_tune_db *fixture_db_new(char path[64]) {
  snprintf(path, 64, "/tmp/mapopt-test-tune-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  unlink(path);
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open(ctx, path, diags, &db), MAPOPT_OK);
  return db;
}

void fixture_db_remove(const char *path) {
  static const char *const sides[] = {"", "-wal", "-shm"};
  char side[80];
  for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
    snprintf(side, sizeof side, "%s%s", path, sides[i]);
    unlink(side);
  }
}

void fixture_db_drop(mapopt_tune_db *db, const char *path) {
  mapopt_tune_db_close(db);
  fixture_db_remove(path);
}

void fixture_sql(const char *path, const char *stmt) {
  sqlite3 *db;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  char *err = NULL;
  int rc = sqlite3_exec(db, stmt, NULL, NULL, &err);
  if (rc != SQLITE_OK)
    print_error("%s: %s\n", stmt, err);
  sqlite3_free(err);
  assert_int_equal(rc, SQLITE_OK);
  sqlite3_close(db);
}

/* Simulates a under mapper on m; with out_findings, AutoGuide analyses the
 * run with every input (run, mapper and its text, machine). Takes m and
 * a. */
static mapopt_sim_result *simulate_and_analyze(mapopt_machine *m, mapopt_app *a,
                                               const char *spec,
                                               const char *mapper,
                                               const mapopt_sim_options *opts,
                                               mapopt_findings **out_findings) {
  mapopt_app_run *run;
  mapopt_program *prog;
  mapopt_app_options ao = {.spec = spec, .iterations = -1, .warmup = -1};
  if (mapopt_sim_instantiate(m, a, &ao, diags, &run) != MAPOPT_OK) {
    fixture_print_diags();
    fail();
  }
  mapopt_machine_shape shape;
  mapopt_sim_shape(m, run, &shape);
  mapopt_dsl_options o = {.file = "fixture.map", .shape = &shape};
  mapopt_app_task_info(a, &o.tasks, &o.ntasks);
  if (mapopt_dsl_compile(ctx, mapper, strlen(mapper), &o, diags, &prog) !=
      MAPOPT_OK) {
    fixture_print_diags();
    fail();
  }
  mapopt_sim_result *res;
  assert_int_equal(mapopt_sim_run(ctx, m, run, prog, opts, &res), MAPOPT_OK);
  if (out_findings) {
    mapopt_guide_input in = {.output = res->log,
                             .output_len = strlen(res->log),
                             .exit_status = res->error ? 1 : 0,
                             .result = res,
                             .mapper = prog,
                             .mapper_text = mapper,
                             .mapper_len = strlen(mapper),
                             .run = run,
                             .machine = m};
    assert_int_equal(mapopt_guide_analyze(ctx, &in, out_findings), MAPOPT_OK);
  }
  mapopt_dsl_free(prog);
  mapopt_app_run_free(run);
  mapopt_app_free(a);
  mapopt_machine_free(m);
  return res;
}

void fixture_target_open(mapopt_ctx *c, mapopt_diags *d, const char *app,
                         fixture_target *t) {
  *t = (fixture_target){0};
  const char *spec = NULL;
  assert_int_equal(mapopt_machine_resolve(c, "p100x4", d, &t->m), MAPOPT_OK);
  assert_int_equal(mapopt_app_resolve(c, app, d, &t->app, &spec), MAPOPT_OK);
  mapopt_app_options ao = {.spec = spec, .iterations = -1, .warmup = -1};
  assert_int_equal(mapopt_sim_instantiate(t->m, t->app, &ao, d, &t->run),
                   MAPOPT_OK);
}

void fixture_target_close(fixture_target *t) {
  mapopt_app_run_free(t->run);
  mapopt_app_free(t->app);
  mapopt_machine_free(t->m);
}

mapopt_sim_result *fixture_simulate_text(mapopt_machine *m, mapopt_app *a,
                                         const char *spec, const char *mapper,
                                         const mapopt_sim_options *opts) {
  return simulate_and_analyze(m, a, spec, mapper, opts, NULL);
}

mapopt_findings *fixture_analyze_text(mapopt_machine *m, mapopt_app *a,
                                      const char *spec, const char *mapper,
                                      mapopt_sim_result **res) {
  mapopt_findings *f = NULL;
  *res = simulate_and_analyze(m, a, spec, mapper, NULL, &f);
  return f;
}

char *fixture_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = 0;
  fclose(f);
  return buf;
}

const char fixture_duo[] =
    "{\"format\": \"mapopt-machine/1\", \"name\": \"duo\", \"nodes\": 1,"
    " \"processors\": {"
    "  \"CPU\": {\"count\": 1, \"gflops_f64\": 10, \"gflops_f32\": 20,"
    "   \"overhead_ns\": 4000},"
    "  \"GPU\": {\"count\": 2, \"gflops_f64\": 1000, \"gflops_f32\": 2000,"
    "   \"overhead_ns\": 10000},"
    "  \"UTIL\": {\"count\": 1}},"
    " \"memories\": {\"SYSMEM\": {\"per\": \"node\", \"capacity_mib\": 64},"
    "  \"FBMEM\": {\"per\": \"gpu\", \"capacity_mib\": 1}},"
    " \"affinity\": ["
    "  {\"proc\": \"GPU\", \"mem\": \"FBMEM\", \"bw_gbs\": 500, \"lat_ns\": "
    "500,"
    "   \"gather_mps\": 20000, \"atomic_mps\": 8000},"
    "  {\"proc\": \"CPU\", \"mem\": \"SYSMEM\", \"bw_gbs\": 10, \"lat_ns\": "
    "100,"
    "   \"gather_mps\": 100, \"atomic_mps\": 50}],"
    " \"channels\": {\"FB_LOCAL\": {\"bw_gbs\": 100, \"lat_ns\": 1000},"
    "  \"FB_FB_PEER\": {\"bw_gbs\": 2, \"lat_ns\": 2000},"
    "  \"FB_HOST\": {\"bw_gbs\": 4, \"lat_ns\": 2000},"
    "  \"HOST_HOST\": {\"bw_gbs\": 20, \"lat_ns\": 500}},"
    " \"runtime\": {\"launch_ns\": 0, \"launch_traced_ns\": 0, \"map_ns\": 0,"
    "  \"map_traced_ns\": 0, \"fence_ns\": 0, \"future_ns\": 0,"
    "  \"ipc_lat_ns\": 0}}";

mapopt_sim_result *fixture_simulate_json(const char *machine, const char *app,
                                         const char *mapper) {
  mapopt_machine *m = NULL;
  mapopt_app *a = NULL;
  mapopt_diags_clear(diags);
  bool ok = mapopt_machine_load_json(ctx, "machine.json", machine,
                                     strlen(machine), diags, &m) == MAPOPT_OK &&
            mapopt_app_load_json(ctx, "app.json", app, strlen(app), diags,
                                 &a) == MAPOPT_OK;
  if (!ok)
    fixture_print_diags();
  assert_true(ok);
  mapopt_sim_result *r = fixture_simulate_text(m, a, NULL, mapper, NULL);
  if (r->error != MAPOPT_SIM_NONE)
    print_message("%s", r->log);
  assert_int_equal(r->error, MAPOPT_SIM_NONE);
  return r;
}

mapopt_sim_result *fixture_simulate(const char *app, const char *machine,
                                    const char *mapper,
                                    const mapopt_sim_options *opts) {
  mapopt_machine *m;
  mapopt_app *a;
  const char *spec;
  mapopt_diags_clear(diags);
  bool ok = mapopt_machine_resolve(ctx, machine, diags, &m) == MAPOPT_OK;
  ok = ok && mapopt_app_resolve(ctx, app, diags, &a, &spec) == MAPOPT_OK;
  if (!ok)
    fixture_print_diags();
  assert_true(ok);
  const char *text = mapopt_app_builtin_mapper(mapopt_app_name(a), mapper);
  assert_non_null(text);
  return fixture_simulate_text(m, a, spec, text, opts);
}
