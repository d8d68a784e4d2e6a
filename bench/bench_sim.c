/*
 * Simulator benchmark (numbers go in issue notes, not in tests; the
 * goals are in docs/sim.md, "Benchmarks"): events per second per core on
 * generated graphs of about 1e4, 1e5 and 1e6 point tasks, and the memory a
 * simulation takes per op.
 *
 * The graph is the 1-D halo-exchange stencil of gen_graph.h, block-mapped
 * onto the GPUs of a multi-node machine (lassen:nodes=16 by default: 64
 * GPUs), so halo copies cross GPUs and nodes. Per size: the model is built
 * as JSON text, loaded and instantiated, a plan is built once, and
 * mapopt_sim_run_plan runs a few times (once for the largest graphs).
 *
 * Rates are CPU time of this thread (per core); memory is counted by a
 * counting allocator on the context (every byte the library allocates goes
 * through it), as the growth over the live bytes before the step, plus the
 * process's peak RSS for reference.
 *
 * Usage: bench_sim [-r REPS] [MACHINE [TASKS...]]
 *   e.g. bench_sim lassen:nodes=16 1e4 1e5;  -r: simulations per size (default
 *   10 below 5e4 tasks, 3 below 5e5, else 2)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "measure.h"
#include "gen_graph.h"
#include "mapopt/app.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

static long maxrss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static int reps_opt; /* -r; 0: by size */

static void bench_size(mapopt_ctx *ctx, counter *cnt, const char *machine_arg,
                       int64_t target) {
  mapopt_diags *diags;
  mapopt_diags_new(ctx, &diags);
  mapopt_machine *m;
  if (mapopt_machine_resolve(ctx, machine_arg, diags, &m) != MAPOPT_OK)
    gen_die("bench_sim", "machine", diags);
  gen_graph g =
      gen_graph_sized(target, m->nodes * m->procs[MAPOPT_PROC_GPU].count);

  char *json = gen_app_json(&g);
  mapopt_app *app;
  if (mapopt_app_load_json(ctx, "bench1d.json", json, strlen(json), diags,
                           &app) != MAPOPT_OK)
    gen_die("bench_sim", "app load", diags);
  free(json);
  mapopt_app_options ao = {.iterations = g.S, .warmup = 0};
  int64_t live0 = cnt->live;
  double t0 = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
  mapopt_app_run *run;
  if (mapopt_sim_instantiate(m, app, &ao, diags, &run) != MAPOPT_OK)
    gen_die("bench_sim", "instantiate", diags);
  double inst_s = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
  int64_t run_bytes = cnt->live - live0;

  mapopt_program *prog =
      gen_compile_mapper(ctx, m, app, run, diags, "bench_sim");

  live0 = cnt->live;
  t0 = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
  mapopt_sim_plan *plan;
  if (mapopt_sim_plan_new(ctx, run, &plan) != MAPOPT_OK) {
    fprintf(stderr, "bench_sim: plan failed\n");
    exit(1);
  }
  double plan_s = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
  int64_t plan_bytes = cnt->live - live0;

  /* A few simulations for small graphs, one for the largest. */
  int reps = reps_opt           ? reps_opt
             : target >= 500000 ? 2
             : target >= 50000  ? 3
                                : 10;
  mapopt_sim_options so = {0};
  double first = 0, best = 0;
  int64_t events = 0, sim_peak = 0, elapsed = 0, net_count = 0, copy_count = 0;
  long rss0 = maxrss_kib();
  for (int r = 0; r < reps; r++) {
    mapopt_sim_result *res;
    live0 = cnt->live;
    cnt->peak = live0;
    t0 = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
    if (mapopt_sim_run_plan(ctx, m, plan, prog, &so, &res) != MAPOPT_OK) {
      fprintf(stderr, "bench_sim: mapopt_sim_run_plan failed\n");
      exit(1);
    }
    double dt = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
    if (r == 0)
      first = dt;
    if (r == 0 || dt < best)
      best = dt;
    if (cnt->peak - live0 > sim_peak)
      sim_peak = cnt->peak - live0;
    if (res->error != MAPOPT_SIM_NONE) {
      fprintf(stderr, "bench_sim: simulated error %s:\n%s\n",
              mapopt_sim_error_name(res->error),
              res->error_text ? res->error_text : "");
      exit(1);
    }
    events = res->events;
    elapsed = res->elapsed_ns;
    copy_count = 0;
    for (int k = 0; k < MAPOPT_CHAN_COUNT; k++)
      copy_count += res->copies[k].count;
    net_count = res->copies[MAPOPT_CHAN_NETWORK].count;
    mapopt_sim_result_free(res);
  }
  long rss1 = maxrss_kib();
  /* The rate of the best repetition: the first one also pays for faulting
   * in fresh pages (see the first-run column). */
  int64_t nops = run->nops;
  printf("%9" PRId64 " %8" PRId64 " %9" PRId64 " %8" PRId64 " %7" PRId64
         " %9.4f %7.3f %7.3f %9.3g %7.3f %7.3f %6.0f %6.0f %8.0f %6.0f\n",
         gen_tasks(&g), nops, events, copy_count, net_count,
         (double)elapsed * 1e-9, first, best, (double)events / best, plan_s,
         inst_s, (double)run_bytes / (double)nops,
         (double)plan_bytes / (double)nops, (double)sim_peak / (double)nops,
         (double)(rss1 - rss0) * 1024.0 / (double)nops);
  fflush(stdout);

  mapopt_sim_plan_free(plan);
  mapopt_dsl_free(prog);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  mapopt_machine_free(m);
  mapopt_diags_free(diags);
}

int main(int argc, char **argv) {
  if (argc > 2 && !strcmp(argv[1], "-r")) {
    reps_opt = atoi(argv[2]);
    if (reps_opt < 1)
      reps_opt = 1;
    argc -= 2;
    argv += 2;
  }
  const char *machine = argc > 1 ? argv[1] : "lassen:nodes=16";
  static const double defaults[] = {1e4, 1e5, 1e6};
  counter cnt = {0};
  mapopt_ctx *ctx;
  if (mapopt_ctx_new(count_alloc, &cnt, &ctx) != MAPOPT_OK)
    return 1;
  printf("machine %s; 1-D halo stencil, block mapper (gen_graph.h)\n", machine);
  printf("columns: point tasks, ops, events (tasks+copies+fills+folds), "
         "copies, of which network,\n"
         "  simulated s, CPU s of the first and of the best simulation, "
         "events/s per core (best),\n"
         "  plan build CPU s, instantiate CPU s,\n"
         "  bytes per op: app run, plan, simulation peak (counting "
         "allocator), maxrss growth\n");
  printf("%9s %8s %9s %8s %7s %9s %7s %7s %9s %7s %7s %6s %6s %8s %6s\n",
         "tasks", "ops", "events", "copies", "net", "sim_s", "cpu_1st",
         "cpu_min", "ev/s", "plan_s", "inst_s", "B/op_r", "B/op_p", "B/op_sim",
         "rss");
  if (argc > 2) {
    for (int i = 2; i < argc; i++)
      bench_size(ctx, &cnt, machine, (int64_t)strtod(argv[i], NULL));
  } else {
    for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
      bench_size(ctx, &cnt, machine, (int64_t)defaults[i]);
  }
  mapopt_ctx_free(ctx);
  return 0;
}
