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

mapopt_sim_result *fixture_simulate_text(mapopt_machine *m, mapopt_app *a,
                                         const char *spec, const char *mapper,
                                         const mapopt_sim_options *opts) {
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
