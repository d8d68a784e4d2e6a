/*
 * The fixture most unit tests share: one context and one diagnostics list,
 * made fresh before each group of tests and freed after it, and a way to
 * show what the diagnostics say when a check fails.
 */
#ifndef MAPOPT_TESTS_UNIT_FIXTURE_H
#define MAPOPT_TESTS_UNIT_FIXTURE_H

#include "mapopt/core.h"
#include "mapopt/guide.h"
#include "mapopt/sim.h"
#include "mapopt/tune.h"

extern mapopt_ctx *ctx;
extern mapopt_diags *diags;

/* cmocka group setup and teardown for ctx and diags. */
int fixture_setup(void **state);
int fixture_teardown(void **state);

/* Prints every diagnostic in diags through cmocka's message stream. */
void fixture_print_diags(void);
/* Reading the report text fails with MAPOPT_EINVAL, no result, and a first
 * diagnostic that contains want. */
void fixture_expect_report_error(const char *text, const char *want);

/* A fresh tuning database in a new file, whose name is written to path;
 * and the database closed with its file and WAL companions removed. */
mapopt_tune_db *fixture_db_new(char path[64]);
void fixture_db_drop(mapopt_tune_db *db, const char *path);
/* Removes the database file at path and its WAL companions. */
void fixture_db_remove(const char *path);
/* Runs SQL on the database file at path behind the library's back (to
 * tamper with it); fails the test when SQLite refuses it. */
void fixture_sql(const char *path, const char *stmt);
/* Simulates the built-in application app ("circuit:small") on machine (a
 * preset or shape) under its built-in mapper mapper ("expert", "default",
 * ...) with opts, in the fixture's context; fails the test on any error
 * but a simulated one. The result is the caller's. */
mapopt_sim_result *fixture_simulate(const char *app, const char *machine,
                                    const char *mapper,
                                    const mapopt_sim_options *opts);
/* Simulates the loaded application a (with its size spec, NULL for its
 * default) on machine m under the mapper text mapper, as above; takes m
 * and a, and frees them. */
mapopt_sim_result *fixture_simulate_text(mapopt_machine *m, mapopt_app *a,
                                         const char *spec, const char *mapper,
                                         const mapopt_sim_options *opts);

/* An application instantiated on p100x4, what tuning tests tune. */
typedef struct fixture_target {
  mapopt_machine *m;
  mapopt_app *app;
  mapopt_app_run *run;
} fixture_target;
/* app ("circuit:small", a file) at its size spec on p100x4, in context c
 * with diagnostics d; fails the test on an error. */
void fixture_target_open(mapopt_ctx *c, mapopt_diags *d, const char *app,
                         fixture_target *t);
void fixture_target_close(fixture_target *t);
/* A file's whole text, NUL-terminated (the caller frees it); fails the
 * test when it cannot be read. */
char *fixture_read_file(const char *path);

/*
 * The machine "duo" of the hand-built runs whose times are worked out by
 * hand (test_attrib, test_bound): one node, two GPUs (10 us of fixed cost
 * per task, so a task without flops takes exactly 10000 ns) that reach
 * only their framebuffers, FB_LOCAL 100 GB/s with 1000 ns latency (fills
 * pay none), FB_FB_PEER 2 GB/s and FB_HOST 4 GB/s with 2000 ns latency,
 * no runtime costs.
 */
extern const char fixture_duo[];

/* Simulates the app of JSON text app under mapper on the machine of JSON
 * text machine, as fixture_simulate_text; fails the test when either does
 * not load or the run ends in an error. The result is the caller's. */
mapopt_sim_result *fixture_simulate_json(const char *machine, const char *app,
                                         const char *mapper);

/* As fixture_simulate_text without options, and AutoGuide's findings on
 * the run given every input (the run, the mapper and its text, the
 * machine), the caller's to free; the result goes to *res. */
mapopt_findings *fixture_analyze_text(mapopt_machine *m, mapopt_app *a,
                                      const char *spec, const char *mapper,
                                      mapopt_sim_result **res);

#endif
