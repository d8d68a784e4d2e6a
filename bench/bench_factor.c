/*
 * Throughput of the machine-model hot paths (src/dsl/mspace.c, factor.c):
 * the inverse mapping on the base model and on the 2-D tile model of
 * docs/dsl.md, "Transformations reshape the grid" (what an IndexTaskMap
 * function does per point), the forward mapping, and the factorization
 * algorithms on small and on 63-bit inputs. Run by hand: ./bench_factor
 * [iterations].
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dsl/mspace.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Applies one transformation that must succeed. */
static void apply(mapopt__mspace *m, mapopt__ms_step *steps, mapopt__ms_op op,
                  int a, int b, int64_t f, const int64_t *fac, int nf) {
  char err[128];
  if (mapopt__ms_transform(m, op, "bench", a, b, f, 0, 0, fac, nf,
                           &steps[m->nsteps], m, err, sizeof err) != MS_OK) {
    fprintf(stderr, "bench: %s\n", err);
    exit(1);
  }
}

/* Times n inverse mappings of points cycling through the model. */
static void bench_inverse(const char *label, const mapopt__mspace *m, long n) {
  int64_t q[MAPOPT__MS_MAX_DIMS] = {0}, node, proc, sum = 0;
  double t0 = now();
  for (long i = 0; i < n; i++) {
    for (int d = m->ndims - 1; d >= 0; d--) {
      if (++q[d] < m->size[d])
        break;
      q[d] = 0;
    }
    if (mapopt__ms_inverse(m, q, &node, &proc, NULL, 0) == MS_OK)
      sum += node + proc;
  }
  double dt = now() - t0;
  printf("%-28s %8.1f ns/call (checksum %lld)\n", label, dt * 1e9 / (double)n,
         (long long)sum);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000000;
  mapopt__ms_step steps[8];
  mapopt__mspace g, t, mg;

  mapopt__ms_base(&g, 1, 16, 8);
  bench_inverse("inverse Machine(GPU)", &g, n);

  mg = g;
  apply(&mg, steps, MS_MERGE, 0, 1, 0, NULL, 0);
  bench_inverse("inverse merge(0, 1)", &mg, n);

  /* tile2d on 16 x 8 with ispace (64, 64). */
  int64_t ispace[2] = {64, 64}, fac[2], steps_used = 0;
  t = g;
  mapopt__factor_decompose(16, ispace, 2, fac, &steps_used, INT64_MAX);
  apply(&t, steps, MS_FACTORS, 0, 0, 0, fac, 2);
  int64_t blk[2] = {64 / t.size[0], 64 / t.size[1]};
  mapopt__factor_decompose(8, blk, 2, fac, &steps_used, INT64_MAX);
  apply(&t, steps, MS_FACTORS, 2, 0, 0, fac, 2);
  bench_inverse("inverse tile2d (4 dims)", &t, n);

  int64_t out[MAPOPT__MS_MAX_DIMS], sum = 0;
  double t0 = now();
  for (long i = 0; i < n; i++) {
    mapopt__ms_forward(&t, i % 16, i % 8, out, NULL, 0);
    sum += out[0] + out[3];
  }
  printf("%-28s %8.1f ns/call (checksum %lld)\n", "forward tile2d",
         (now() - t0) * 1e9 / (double)n, (long long)sum);

  const int64_t l3[3] = {64, 32, 16};
  long nf = n / 100;
  t0 = now();
  for (long i = 0; i < nf; i++) {
    steps_used = 0;
    mapopt__factor_decompose(64 + i % 64, l3, 3, out, &steps_used, INT64_MAX);
    sum += out[0];
  }
  printf("%-28s %8.1f ns/call (checksum %lld)\n", "decompose(64..127, L3)",
         (now() - t0) * 1e9 / (double)nf, (long long)sum);

  t0 = now();
  for (long i = 0; i < 100; i++) {
    /* (2^31 - 1) * (2^32 - 5) and 2^63 - 25 (prime). */
    mapopt__factor_balance(INT64_C(9223372021822390277), 2, out);
    mapopt__factor_balance(INT64_C(9223372036854775783), 2, out);
    sum += out[1];
  }
  printf("%-28s %8.1f us/call (checksum %lld)\n", "balance 63-bit",
         (now() - t0) * 1e6 / 200, (long long)sum);
  return 0;
}
