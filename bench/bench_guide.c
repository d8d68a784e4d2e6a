/*
 * AutoGuide benchmark (numbers go in issue notes, not in tests): the CPU
 * time of one mapopt_guide_analyze call -- what the tuner pays per
 * evaluation -- on each built-in benchmark simulated with its expert
 * mapper on p100x4, with every optional input given (result, mapper, app
 * run, machine), and the time of the feedback text at level full. The
 * simulation itself is not timed.
 * Usage: bench_guide [CALLS]   (default 2000 per benchmark)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapopt/app.h"
#include "mapopt/guide.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

/* CPU time of this thread (the shared machines make wall time noisy). */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, mapopt_diags *d) {
  char line[512] = "";
  if (d && mapopt_diags_count(d))
    mapopt_diag_format(mapopt_diags_get(d, 0), line, sizeof line);
  fprintf(stderr, "bench_guide: %s %s\n", what, line);
  exit(1);
}

int main(int argc, char **argv) {
  long calls = argc > 1 ? atol(argv[1]) : 2000;
  if (calls <= 0)
    calls = 1;
  mapopt_ctx *ctx;
  mapopt_diags *d;
  if (mapopt_ctx_new(NULL, NULL, &ctx) != MAPOPT_OK ||
      mapopt_diags_new(ctx, &d) != MAPOPT_OK)
    die("out of memory", NULL);
  printf("%-10s %8s %10s %12s %12s\n", "app", "findings", "events",
         "analyze us", "feedback us");
  for (const char *const *app = mapopt_app_builtins(); *app; app++) {
    mapopt_machine *m;
    mapopt_app *a;
    mapopt_app_run *run;
    mapopt_program *prog;
    mapopt_sim_result *res;
    if (mapopt_machine_resolve(ctx, "p100x4", d, &m) != MAPOPT_OK ||
        mapopt_app_resolve(ctx, *app, d, &a, NULL) != MAPOPT_OK)
      die(*app, d);
    mapopt_app_options ao = {.iterations = -1, .warmup = -1};
    if (mapopt_sim_instantiate(m, a, &ao, d, &run) != MAPOPT_OK)
      die(*app, d);
    mapopt_machine_shape shape;
    mapopt_sim_shape(m, run, &shape);
    const char *text = mapopt_app_builtin_mapper(*app, "expert");
    mapopt_dsl_options o = {.file = "expert.map", .shape = &shape};
    mapopt_sim_options so = {0};
    if (!text ||
        mapopt_dsl_compile(ctx, text, strlen(text), &o, d, &prog) !=
            MAPOPT_OK ||
        mapopt_sim_run(ctx, m, run, prog, &so, &res) != MAPOPT_OK)
      die(*app, d);
    mapopt_guide_input in = {.output = res->log,
                             .output_len = strlen(res->log),
                             .exit_status = res->error ? 1 : 0,
                             .result = res,
                             .mapper = prog,
                             .mapper_text = text,
                             .mapper_len = strlen(text),
                             .run = run,
                             .machine = m};
    size_t n = 0;
    double t0 = now();
    for (long i = 0; i < calls; i++) {
      mapopt_findings *f;
      if (mapopt_guide_analyze(ctx, &in, &f) != MAPOPT_OK)
        die("analyze failed", NULL);
      n = mapopt_findings_count(f);
      mapopt_findings_free(f);
    }
    double t1 = now();
    mapopt_findings *f;
    if (mapopt_guide_analyze(ctx, &in, &f) != MAPOPT_OK)
      die("analyze failed", NULL);
    for (long i = 0; i < calls; i++) {
      char *t;
      if (mapopt_guide_feedback(ctx, f, MAPOPT_GUIDE_FULL, &t) != MAPOPT_OK)
        die("feedback failed", NULL);
      mapopt_text_free(t);
    }
    double t2 = now();
    printf("%-10s %8zu %10lld %12.1f %12.1f\n", *app, n, (long long)res->events,
           (t1 - t0) / (double)calls * 1e6, (t2 - t1) / (double)calls * 1e6);
    mapopt_findings_free(f);
    mapopt_sim_result_free(res);
    mapopt_dsl_free(prog);
    mapopt_app_run_free(run);
    mapopt_app_free(a);
    mapopt_machine_free(m);
  }
  mapopt_diags_free(d);
  mapopt_ctx_free(ctx);
  return 0;
}
