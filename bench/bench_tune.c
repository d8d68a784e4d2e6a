/*
 * Tuning throughput (issue notes, not tests): N evaluations of a built-in
 * benchmark at its paper size on p100x4 through the tuning driver
 * (mapopt_tune_run: ask, compile, dedupe, simulate on J threads, record
 * each evaluation in a fresh SQLite database, tell), timed by the wall
 * clock. Prints per benchmark the evaluations made, duplicates skipped,
 * wall seconds and evaluations per second. The target of issue 9: 1000
 * opentuner evaluations in under 60 s with --jobs 2 on 2 cores.
 *
 * Usage: bench_tune [-o OPTIMIZER] [-n EVALUATIONS] [-j JOBS] [-b BATCH]
 *                   [-m MACHINE] [APP...]
 *   defaults: random, 1000, 2, 0 (the optimizer's own batch), p100x4,
 *   circuit
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gen_graph.h"
#include "mapopt/app.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"
#include "mapopt/tune.h"

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Tunes one benchmark and prints its line. */
static void bench(mapopt_ctx *ctx, mapopt_diags *diags, const char *app_name,
                  const char *machine, const char *optimizer, long n, int jobs,
                  int batch) {
  char dir[] = "/tmp/mapopt-bench-tune-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(1);
  }
  char path[64];
  snprintf(path, sizeof path, "%s/t.db", dir);
  double t0 = wall();
  mapopt_machine *m;
  mapopt_app *app;
  mapopt_app_run *run;
  if (mapopt_machine_resolve(ctx, machine, diags, &m) != MAPOPT_OK)
    gen_die("bench_tune", "machine", diags);
  if (mapopt_app_resolve(ctx, app_name, diags, &app, NULL) != MAPOPT_OK)
    gen_die("bench_tune", "app", diags);
  mapopt_app_options ao = {.iterations = -1, .warmup = -1};
  if (mapopt_sim_instantiate(m, app, &ao, diags, &run) != MAPOPT_OK)
    gen_die("bench_tune", "instantiate", diags);
  mapopt_tune_db *db;
  if (mapopt_tune_db_open(ctx, path, diags, &db) != MAPOPT_OK)
    gen_die("bench_tune", "database", diags);
  mapopt_tune_problem p = {
      m, run, mapopt_app_builtin_mapper(app_name, "expert"),
      mapopt_app_builtin_mapper(app_name, "default"), NULL};
  mapopt_tune_config c = {.app = app_name,
                          .machine = machine,
                          .optimizer = optimizer,
                          .budget = n,
                          .batch = batch};
  mapopt_tune_options o = {.jobs = jobs};
  mapopt_tune_outcome out;
  double t1 = wall();
  if (mapopt_tune_run(ctx, db, &p, &c, &o, diags, &out) != MAPOPT_OK)
    gen_die("bench_tune", "tune", diags);
  double t2 = wall();
  printf("%-10s %6lld evaluations %6lld duplicates  %7.2f s wall  %8.1f "
         "evaluations/s  (setup %.2f s; best %.3fx expert)\n",
         app_name, (long long)out.evaluations, (long long)out.duplicates,
         t2 - t1, (double)out.evaluations / (t2 - t1), t1 - t0,
         out.expert_score > 0 ? out.best_score / out.expert_score : 0);
  fflush(stdout);
  mapopt_tune_outcome_clear(&out);
  mapopt_tune_db_close(db);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  mapopt_machine_free(m);
  char side[80];
  const char *const suffix[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    snprintf(side, sizeof side, "%s%s", path, suffix[i]);
    unlink(side);
  }
  rmdir(dir);
}

int main(int argc, char **argv) {
  const char *optimizer = "random", *machine = "p100x4";
  long n = 1000;
  int jobs = 2, batch = 0, opt;
  while ((opt = getopt(argc, argv, "o:n:j:b:m:")) != -1) {
    switch (opt) {
    case 'o':
      optimizer = optarg;
      break;
    case 'n':
      n = atol(optarg);
      break;
    case 'j':
      jobs = atoi(optarg);
      break;
    case 'b':
      batch = atoi(optarg);
      break;
    case 'm':
      machine = optarg;
      break;
    default:
      fprintf(stderr, "usage: bench_tune [-o OPTIMIZER] [-n EVALUATIONS] "
                      "[-j JOBS] [-b BATCH] [-m MACHINE] [APP...]\n");
      return 2;
    }
  }
  if (n < 1 || jobs < 1 || batch < 0) {
    fprintf(stderr, "bench_tune: -n and -j must be positive, -b at least 0\n");
    return 2;
  }
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (mapopt_ctx_new(NULL, NULL, &ctx) != MAPOPT_OK ||
      mapopt_diags_new(ctx, &diags) != MAPOPT_OK)
    return 1;
  printf("%s, %ld evaluations, --jobs %d --batch %d, %s, paper sizes\n",
         optimizer, n, jobs, batch, machine);
  if (optind == argc)
    bench(ctx, diags, "circuit", machine, optimizer, n, jobs, batch);
  for (int i = optind; i < argc; i++)
    bench(ctx, diags, argv[i], machine, optimizer, n, jobs, batch);
  mapopt_diags_free(diags);
  mapopt_ctx_free(ctx);
  return 0;
}
