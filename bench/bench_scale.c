/*
 * Weak-scaling benchmark of the simulator (docs/sim.md, "How long a
 * simulation takes"): circuit, stencil and pennant at their `lassen` sizes
 * (weak-scaled: the problem grows with the machine) under their expert
 * mappers, on the lassen preset from 1 to 1024 nodes, in powers of two.
 *
 * Each (application, nodes) is simulated in a child process, so that its
 * peak resident memory (wait4's ru_maxrss) is its own; the child reports
 * the run's size and the CPU time of each step (instantiate, plan, run)
 * through a pipe. Times are CPU seconds of the child, which are less
 * disturbed than wall-clock times by other work on the machine; the wall
 * time is printed too. A run that the library refuses (the memory or ops
 * limit) is reported with its message instead of numbers.
 *
 * Usage: bench_scale [-n MAXNODES] [-m MAXBYTES] [APP...]
 *   defaults: 1024 nodes, all three apps, the library's memory limit
 *   (MAPOPT_APP_DEFAULT_MAX_BYTES; pennant at 1024 nodes needs -m 8e9)
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "measure.h"
#include "mapopt/app.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

/* What a child reports: the run's size, its steps' CPU seconds and the
 * bytes the library holds after each (the run, the plan, the peak of the
 * simulation), and the first error line when the run was refused or
 * failed. */
typedef struct report {
  int64_t ops, events, elapsed_ns;
  double inst_s, plan_s, run_s;
  int64_t run_bytes, plan_bytes, peak_bytes;
  char error[512];
} report;

/* The first diagnostic of d, or what as the error. */
static void fail(report *r, mapopt_diags *d, const char *what) {
  if (d && mapopt_diags_count(d) > 0)
    mapopt_diag_format(mapopt_diags_get(d, 0), r->error, sizeof r->error);
  else
    snprintf(r->error, sizeof r->error, "%s failed", what);
}

static int64_t max_bytes; /* -m; 0: the library's default */

/* Simulates app at its lassen size on lassen:nodes=nodes into *r. */
static void simulate(const char *app_name, int nodes, report *r) {
  mapopt_ctx *ctx;
  mapopt_diags *d;
  counter cnt = {0, 0, 0};
  if (mapopt_ctx_new(count_alloc, &cnt, &ctx) != MAPOPT_OK ||
      mapopt_diags_new(ctx, &d) != MAPOPT_OK) {
    fail(r, NULL, "context");
    return;
  }
  char marg[64], aarg[64];
  snprintf(marg, sizeof marg, "lassen:nodes=%d", nodes);
  snprintf(aarg, sizeof aarg, "%s:lassen", app_name);
  mapopt_machine *m = NULL;
  mapopt_app *app = NULL;
  mapopt_app_run *run = NULL;
  mapopt_program *prog = NULL;
  mapopt_sim_plan *plan = NULL;
  mapopt_sim_result *res = NULL;
  const char *spec = NULL;
  if (mapopt_machine_resolve(ctx, marg, d, &m) != MAPOPT_OK ||
      mapopt_app_resolve(ctx, aarg, d, &app, &spec) != MAPOPT_OK) {
    fail(r, d, "resolve");
    goto out;
  }
  mapopt_app_options ao = {
      .spec = spec, .iterations = -1, .warmup = -1, .max_bytes = max_bytes};
  double t0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  if (mapopt_sim_instantiate(m, app, &ao, d, &run) != MAPOPT_OK) {
    fail(r, d, "instantiate");
    goto out;
  }
  r->inst_s = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - t0;
  r->run_bytes = cnt.live;
  r->ops = run->nops;
  const char *text = mapopt_app_builtin_mapper(app_name, "expert");
  mapopt_machine_shape shape;
  mapopt_sim_shape(m, run, &shape);
  mapopt_dsl_options dopts = {.file = "expert.map", .shape = &shape};
  mapopt_app_task_info(app, &dopts.tasks, &dopts.ntasks);
  if (!text || mapopt_dsl_compile(ctx, text, strlen(text), &dopts, d, &prog) !=
                   MAPOPT_OK) {
    fail(r, d, "mapper");
    goto out;
  }
  t0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  if (mapopt_sim_plan_new(ctx, run, &plan) != MAPOPT_OK) {
    fail(r, NULL, "plan");
    goto out;
  }
  r->plan_s = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - t0;
  r->plan_bytes = cnt.live - r->run_bytes;
  mapopt_sim_options so = {0};
  t0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  if (mapopt_sim_run_plan(ctx, m, plan, prog, &so, &res) != MAPOPT_OK) {
    fail(r, NULL, "run");
    goto out;
  }
  r->run_s = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - t0;
  r->peak_bytes = cnt.peak;
  r->events = res->events;
  r->elapsed_ns = res->elapsed_ns;
  if (res->error != MAPOPT_SIM_NONE)
    snprintf(r->error, sizeof r->error, "simulated %s",
             mapopt_sim_error_name(res->error));
out:
  mapopt_sim_result_free(res);
  mapopt_sim_plan_free(plan);
  mapopt_dsl_free(prog);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  mapopt_machine_free(m);
  mapopt_diags_free(d);
  mapopt_ctx_free(ctx);
}

/* Runs simulate in a child; prints one row. */
static void row(const char *app, int nodes) {
  int fd[2];
  if (pipe(fd) != 0) {
    perror("bench_scale: pipe");
    exit(1);
  }
  fflush(stdout);
  double w0 = clock_seconds(CLOCK_MONOTONIC);
  pid_t pid = fork();
  if (pid < 0) {
    perror("bench_scale: fork");
    exit(1);
  }
  if (pid == 0) {
    close(fd[0]);
    report r;
    memset(&r, 0, sizeof r);
    simulate(app, nodes, &r);
    ssize_t w = write(fd[1], &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fd[1]);
  report r;
  memset(&r, 0, sizeof r);
  ssize_t got = read(fd[0], &r, sizeof r);
  close(fd[0]);
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("bench_scale: wait4");
    exit(1);
  }
  double wall = clock_seconds(CLOCK_MONOTONIC) - w0;
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
  double rss_mib = (double)ru.ru_maxrss / 1024.0;
  if (got != (ssize_t)sizeof r || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    printf("%-8s %5d  child failed (status %d)\n", app, nodes, status);
  } else if (r.error[0]) {
    printf("%-8s %5d  %s (%.1f s, %.0f MiB)\n", app, nodes, r.error, cpu,
           rss_mib);
  } else {
    printf("%-8s %5d %9" PRId64 " %10" PRId64 " %8.3f %7.2f %7.2f %7.2f %7.2f "
           "%7.2f %8.0f %6.0f %6.0f %6.0f\n",
           app, nodes, r.ops, r.events, (double)r.elapsed_ns * 1e-9, r.inst_s,
           r.plan_s, r.run_s, cpu, wall, rss_mib,
           (double)r.run_bytes / (double)r.ops,
           (double)r.plan_bytes / (double)r.ops,
           (double)r.peak_bytes / (double)r.ops);
  }
}

static int usage(FILE *f) {
  fputs("usage: bench_scale [-n MAXNODES] [-m MAXBYTES] [APP...]\n"
        "  -n  the most nodes (powers of two from 1; default 1024)\n"
        "  -m  the memory limit in bytes (default 4 GiB; pennant at 1024\n"
        "      nodes needs -m 8e9)\n"
        "  APP built-in applications (default: circuit stencil pennant)\n",
        f);
  return f == stdout ? 0 : 2;
}

int main(int argc, char **argv) {
  int max_nodes = MAPOPT_MACHINE_MAX_NODES;
  int first = 1;
  while (first < argc && argv[first][0] == '-') {
    const char *o = argv[first];
    if (!strcmp(o, "-h") || !strcmp(o, "--help"))
      return usage(stdout);
    char *end = NULL;
    const char *v = first + 1 < argc ? argv[first + 1] : "";
    if (!strcmp(o, "-n")) {
      long n = strtol(v, &end, 10);
      if (end == v || *end || n < 1 || n > MAPOPT_MACHINE_MAX_NODES) {
        fprintf(stderr, "bench_scale: -n takes 1 to %d nodes\n",
                MAPOPT_MACHINE_MAX_NODES);
        return 2;
      }
      max_nodes = (int)n;
    } else if (!strcmp(o, "-m")) {
      double b = strtod(v, &end);
      if (end == v || *end || !(b >= 1 && b < 9e18)) {
        fprintf(stderr, "bench_scale: -m takes a number of bytes\n");
        return 2;
      }
      max_bytes = (int64_t)b;
    } else {
      fprintf(stderr, "bench_scale: unknown option '%s'\n", o);
      return usage(stderr);
    }
    first += 2;
  }
  static const char *const all[] = {"circuit", "stencil", "pennant"};
  const char *const *apps =
      first < argc ? (const char *const *)argv + first : all;
  int napps = first < argc ? argc - first : 3;
  printf("lassen preset, APP:lassen (weak-scaled), expert mappers\n");
  printf("columns: ops, events, simulated s, CPU s of instantiate, plan and "
         "run,\n  CPU s and wall s of the whole child, peak RSS MiB, bytes "
         "per op: the run, the plan, the peak of everything\n");
  printf("%-8s %5s %9s %10s %8s %7s %7s %7s %7s %7s %8s %6s %6s %6s\n", "app",
         "nodes", "ops", "events", "sim_s", "inst", "plan", "run", "cpu",
         "wall", "rss_MiB", "B/op_r", "B/op_p", "B/op");
  for (int a = 0; a < napps; a++)
    for (int n = 1; n <= max_nodes; n *= 2)
      row(apps[a], n);
  return 0;
}
