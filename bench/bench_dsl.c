/*
 * DSL benchmarks (numbers go in issue notes, not in tests):
 *   1. parse + check + load rate, in MB/s, on a generated 10 MB mapper;
 *   2. index-map evaluations per second (per core: CPU time), one thread,
 * memoization off, for a block/cyclic function and for the 6-D auto_split
 * decomposition of a 3-D launch (the factorizations themselves are memoized).
 * Usage: bench_dsl [MEGABYTES] [EVALS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapopt/dsl.h"

/* CPU time of this thread: rates are per core, and the shared machines
 * these run on make wall-clock time noisy. */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A mapper of realistic statements, repeated with fresh names. */
static char *generate(size_t target, size_t *len) {
  char *s = malloc(target + 4096);
  size_t n = 0;
  n += (size_t)sprintf(s, "Task * GPU, OMP, CPU;\ng = Machine(GPU);\n");
  for (int i = 0; n < target; i++)
    n += (size_t)sprintf(s + n,
                         "Region task%d arg%d GPU FBMEM, ZCMEM;\n"
                         "Layout task%d * FBMEM SOA C_order Align==128;\n"
                         "InstanceLimit task%d 4;\n"
                         "def place%d(Task t) {\n"
                         "    i = t.ipoint[0] * %d + t.ipoint.len;\n"
                         "    n = i / g.size[1] %% g.size[0];\n"
                         "    return g[n, i %% g.size[1]];\n"
                         "}\n"
                         "IndexTaskMap task%d place%d;\n",
                         i, i, i, i, i, i % 7 + 1, i, i);
  *len = n;
  return s;
}

static mapopt_program *compile(mapopt_ctx *ctx, const char *text, size_t len,
                               const mapopt_machine_shape *shape) {
  mapopt_diags *diags;
  mapopt_diags_new(ctx, &diags);
  mapopt_dsl_options opts = {
      .file = "bench.map", .shape = shape, .no_memo = true};
  mapopt_program *prog = NULL;
  if (mapopt_dsl_compile(ctx, text, len, &opts, diags, &prog) != MAPOPT_OK) {
    char line[512];
    mapopt_diag_format(mapopt_diags_get(diags, 0), line, sizeof line);
    fprintf(stderr, "bench: %s\n", line);
    exit(1);
  }
  mapopt_diags_free(diags);
  return prog;
}

static const char block_cyclic[] =
    "g = Machine(GPU);\n"
    "def bc(Task t) {\n"
    "    i = t.ipoint[0];\n"
    "    return g[i / g.size[1] % g.size[0], i % g.size[1]];\n"
    "}\n"
    "IndexTaskMap step bc;\n";

static const char tile3d[] =
    "g = Machine(GPU);\n"
    "def owner(IPoint p, ISpace s, MSpace m, int i) {\n"
    "    return p[i] * m.size[i] / s[i];\n}\n"
    "def wrap(IPoint p, MSpace m, int i) { return p[i] % m.size[i + 3]; }\n"
    "def tile3d(Task t) {\n"
    "    a = g.auto_split(0, t.ispace);\n"
    "    b = a.auto_split(3, t.ispace / a[:-1]);\n"
    "    hi = tuple(owner(t.ipoint, t.ispace, b, k) for k in (0, 1, 2));\n"
    "    lo = tuple(wrap(t.ipoint, b, k) for k in (0, 1, 2));\n"
    "    return b[*hi, *lo];\n}\n"
    "IndexTaskMap cube tile3d;\n";

static double eval_rate(mapopt_program *prog, const char *task, int dims,
                        const int64_t *space, long evals) {
  int64_t volume = 1;
  for (int d = 0; d < dims; d++)
    volume *= space[d];
  mapopt_map_answer ans;
  int64_t pt[3];
  long failures = 0;
  double t0 = now();
  for (long k = 0; k < evals; k++) {
    int64_t rem = k % volume;
    for (int d = 0; d < dims; d++) {
      pt[d] = rem % space[d];
      rem /= space[d];
    }
    if (mapopt_policy_index_map(prog, task, dims, pt, space, MAPOPT_PROC_GPU,
                                &ans, NULL) != MAPOPT_OK)
      failures++;
  }
  double dt = now() - t0;
  if (failures)
    fprintf(stderr, "bench: %ld failed evaluations\n", failures);
  return (double)evals / dt;
}

int main(int argc, char **argv) {
  double mb = argc > 1 ? atof(argv[1]) : 10.0;
  long evals = argc > 2 ? atol(argv[2]) : 2000000;
  mapopt_ctx *ctx;
  mapopt_ctx_new(NULL, NULL, &ctx);
  mapopt_machine_shape shape;
  char err[128];
  mapopt_shape_parse("nodes=16 gpu=4 cpu=8 omp=2", &shape, err, sizeof err);

  size_t len;
  char *text = generate((size_t)(mb * 1e6), &len);
  double t0 = now();
  mapopt_program *prog = compile(ctx, text, len, &shape);
  double dt = now() - t0;
  printf("compile (parse+check+load): %.1f MB in %.3f s = %.1f MB/s\n",
         (double)len / 1e6, dt, (double)len / 1e6 / dt);
  mapopt_dsl_free(prog);
  free(text);

  prog = compile(ctx, block_cyclic, strlen(block_cyclic), &shape);
  int64_t space1[1] = {1024};
  printf("index_map block/cyclic: %.3g evaluations/s\n",
         eval_rate(prog, "step", 1, space1, evals));
  mapopt_dsl_free(prog);

  prog = compile(ctx, tile3d, strlen(tile3d), &shape);
  int64_t space3[3] = {16, 8, 8};
  printf("index_map 6-D auto_split: %.3g evaluations/s\n",
         eval_rate(prog, "cube", 3, space3, evals / 4));
  mapopt_dsl_free(prog);
  mapopt_ctx_free(ctx);
  return 0;
}
