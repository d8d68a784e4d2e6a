/*
 * starpu-example: the smallest complete use of libmapopt-starpu, shown in
 * docs/starpu.md. A vector of n doubles is cut into k chunks; an index
 * launch `scale` over (k) doubles every chunk. The mapper file given as
 * the first argument decides, for each point, the MPI rank and the worker
 * that run it; the chunk is registered on that rank, in the memory node
 * and with the layout the mapper gives the task's argument `chunks` (a
 * partition of the region `x`). Usage:
 *   mpirun -np 2 starpu-example MAPPER [n [k]]
 * It prints each point's placement from rank 0, then checks the sum.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "mapopt/starpu.h"

static void scale_cpu(void *buffers[], void *arg) {
  (void)arg;
  double *v = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
  unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
  for (unsigned i = 0; i < n; i++)
    v[i] *= 2;
}

static struct starpu_codelet scale_cl = {
    .cpu_funcs = {scale_cpu}, .nbuffers = 1, .modes = {STARPU_RW}};

/* Prints the diagnostics (rank 0 only: every rank computes the same). */
static void report(mapopt_diags *d, int rank) {
  char line[1024];
  for (size_t i = 0; rank == 0 && i < mapopt_diags_count(d); i++) {
    mapopt_diag_format(mapopt_diags_get(d, i), line, sizeof line);
    fprintf(stderr, "%s\n", line);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: starpu-example MAPPER [n [k]]\n");
    return 1;
  }
  int64_t n = argc > 2 ? atoll(argv[2]) : 1000,
          k = argc > 3 ? atoll(argv[3]) : 4;
  if (n < 1 || k < 1 || n % k) {
    fprintf(stderr, "starpu-example: n must be a positive multiple of k\n");
    return 1;
  }
  int provided, rank, ranks;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  starpu_mpi_init_conf(NULL, NULL, 0, MPI_COMM_WORLD, NULL);
  rank = starpu_mpi_world_rank();
  ranks = starpu_mpi_world_size();

  /* The machine of this run, and the mapper compiled for it. */
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  mapopt_ctx_new(NULL, NULL, &ctx);
  mapopt_diags_new(ctx, &diags);
  mapopt_starpu_machine machine;
  mapopt_starpu_machine_detect(ranks, &machine);
  mapopt_starpu *mapper = NULL;
  mapopt_status st =
      mapopt_starpu_load(ctx, argv[1], &machine, NULL, diags, &mapper);

  /* Place every point: rank, worker, memory node, layout. */
  unsigned variants = mapopt_starpu_codelet_variants(&scale_cl);
  const char *names[] = {"chunks", "x"};
  mapopt_region_keys keys = {names, 2, 0};
  int64_t len = n / k;
  mapopt_starpu_place *where = calloc((size_t)k, sizeof *where);
  mapopt_starpu_memory *mem = calloc((size_t)k, sizeof *mem);
  mapopt_starpu_geometry *geo = calloc((size_t)k, sizeof *geo);
  for (int64_t i = 0; st == MAPOPT_OK && i < k; i++) {
    st = mapopt_starpu_place_index(mapper, "scale", variants, 1, &i, &k, diags,
                                   &where[i]);
    if (st == MAPOPT_OK)
      st = mapopt_starpu_memory_of(mapper, "scale", &keys, &where[i], diags,
                                   &mem[i]);
    if (st == MAPOPT_OK) {
      mapopt_layout layout;
      mapopt_starpu_layout_of(mapper, "scale", &keys, &where[i], mem[i].kind,
                              &layout);
      st = mapopt_starpu_geometry_of(&layout, 1, &len, 1, sizeof(double),
                                     &geo[i]);
    }
    if (st == MAPOPT_OK && rank == 0)
      printf("scale point %lld: rank %d, CPU %d (worker %d), %s\n",
             (long long)i, where[i].rank, where[i].proc, where[i].worker,
             mapopt_shape_mem_name(mem[i].kind));
  }
  report(diags, rank); /* a mapping error, as mapopt sim prints it */

  /* Register each chunk on its point's rank, then submit: each point on
   * its rank and worker. */
  double **chunk = calloc((size_t)k, sizeof *chunk);
  starpu_data_handle_t *h = calloc((size_t)k, sizeof *h);
  for (int64_t i = 0; st == MAPOPT_OK && i < k; i++) {
    bool mine = where[i].rank == rank;
    if (mine) {
      chunk[i] = malloc((size_t)len * sizeof(double));
      for (int64_t j = 0; j < len; j++)
        chunk[i][j] = (double)(i * len + j);
    }
    mapopt_starpu_register(&h[i], mine ? mem[i].node : -1, chunk[i], &geo[i]);
    starpu_mpi_data_register(h[i], (int)i, where[i].rank);
  }
  for (int64_t i = 0; st == MAPOPT_OK && i < k; i++)
    starpu_mpi_task_insert(MPI_COMM_WORLD, &scale_cl, STARPU_RW, h[i],
                           STARPU_EXECUTE_ON_NODE, where[i].rank,
                           STARPU_EXECUTE_ON_WORKER, where[i].worker, 0);
  starpu_task_wait_for_all();

  /* Check: the sum of 2 * (0 + 1 + ... + n - 1). */
  double sum = 0, total = 0;
  for (int64_t i = 0; st == MAPOPT_OK && i < k; i++) {
    if (where[i].rank == rank) {
      starpu_data_acquire(h[i], STARPU_R);
      for (int64_t j = 0; j < len; j++)
        sum += chunk[i][j];
      starpu_data_release(h[i]);
    }
    starpu_data_unregister(h[i]);
    free(chunk[i]);
  }
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int status = st != MAPOPT_OK                        ? 2
               : total == (double)n * (double)(n - 1) ? 0
                                                      : 3;
  if (rank == 0 && status != 2)
    printf("sum %.0f: %s\n", total, status ? "wrong" : "right");
  free(chunk);
  free(h);
  free(where);
  free(mem);
  free(geo);
  mapopt_starpu_free(mapper);
  mapopt_diags_free(diags);
  mapopt_ctx_free(ctx);
  starpu_mpi_shutdown();
  MPI_Finalize();
  return status;
}
