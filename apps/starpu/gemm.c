/*
 * gemm-starpu: a tiled matrix product A = B C (DISTAL's naming: A is the
 * output) by SUMMA on StarPU-MPI, with OpenBLAS DGEMM, placed by a mapper
 * (docs/starpu.md).
 *
 * The n x n matrices are g x g grids of b x b tiles (b = n / g). Task and
 * region names follow the built-in 2-D GEMM models (apps/builtin/summa.json)
 * and apps/starpu-gemm.json:
 *  - task_1, task_2, task_3: index launches over (g, g) that fill the tiles
 *    of A (zeros), B and C (write-discard): one repetition's set-up. The
 *    point of tile (i, j) decides that tile's home: the tile is registered
 *    on that rank, in the memory and with the layout the mapper gives the
 *    task's argument (region names A_tile/A, B_tile/B, C_tile/C);
 *  - task_4: the DGEMM leaf, SUMMA step k as an index launch over (g, g):
 *    A(i, j) += B(i, k) C(k, j) (arguments A RW, B RO, C RO). Where the
 *    mapper runs it decides the traffic: StarPU-MPI sends B and C to it,
 *    and A there and back when it is not A's home. CollectMemory task_4 on
 *    B or C drops the received copies after each step (starpu_mpi_cache_
 *    flush), so a later step has to receive them again.
 * C_order tiles are row-major and F_order tiles column-major; the kernel
 * passes each tile's order to DGEMM, so every layout runs. Without
 * -mapping, tiles are blocked over the ranks and StarPU's scheduler
 * (STARPU_SCHED) picks the workers.
 *
 * Each of reps repetitions fills the tiles, fences, and times the g SUMMA
 * steps up to the next fence; the program prints DISTAL's line
 * `On N nodes achieved GFLOPS per node: X.` (N: hosts) for n^2 (2n - 1)
 * flops per repetition. With -check 1 every rank compares its A tiles with
 * a reference DGEMM of the same rows and columns; the entries are exact
 * binary fractions, so any difference is an error (exit status 3).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "common.h"

/* Kernel arguments: whether A, B, C are row-major (C_order). */
typedef struct gargs {
  int row[3];
  double value;   /* fills: 0 for A; 1 B, 2 C pick the generator */
  int64_t i0, j0; /* fills: the tile's first global row and column */
} gargs;

/* The entries of B and C: multiples of 1/8 in [-5/8, 5/8], so every sum of
 * products in A is exact in double precision. */
static double b_value(int64_t r, int64_t c) {
  return (double)((r * 7 + c * 3) % 11 - 5) / 8.0;
}

static double c_value(int64_t r, int64_t c) {
  return (double)((r * 5 + c * 9) % 13 - 6) / 8.0;
}

static double fill_value(int which, int64_t r, int64_t c) {
  return which == 1 ? b_value(r, c) : which == 2 ? c_value(r, c) : 0.0;
}

/* Element (r, c) of a tile of leading dimension ld. */
static size_t at(int row_major, size_t ld, size_t r, size_t c) {
  return row_major ? r * ld + c : c * ld + r;
}

static void fill_cpu(void *buffers[], void *cl_arg) {
  gargs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  double *t = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
  size_t ld = STARPU_MATRIX_GET_LD(buffers[0]);
  size_t b = STARPU_MATRIX_GET_NX(buffers[0]);
  for (size_t r = 0; r < b; r++)
    for (size_t c = 0; c < b; c++)
      t[at(a.row[0], ld, r, c)] =
          fill_value((int)a.value, a.i0 + (int64_t)r, a.j0 + (int64_t)c);
}

/* A += B C for tiles of any order: in A's order, a tile of the other order
 * is its transpose. */
static void dgemm_cpu(void *buffers[], void *cl_arg) {
  gargs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  double *A = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
  const double *B = (const double *)STARPU_MATRIX_GET_PTR(buffers[1]);
  const double *C = (const double *)STARPU_MATRIX_GET_PTR(buffers[2]);
  int b = (int)STARPU_MATRIX_GET_NX(buffers[0]);
  int lda = (int)STARPU_MATRIX_GET_LD(buffers[0]);
  int ldb = (int)STARPU_MATRIX_GET_LD(buffers[1]);
  int ldc = (int)STARPU_MATRIX_GET_LD(buffers[2]);
  enum CBLAS_ORDER order = a.row[0] ? CblasRowMajor : CblasColMajor;
  enum CBLAS_TRANSPOSE tb = a.row[1] == a.row[0] ? CblasNoTrans : CblasTrans;
  enum CBLAS_TRANSPOSE tc = a.row[2] == a.row[0] ? CblasNoTrans : CblasTrans;
  cblas_dgemm(order, tb, tc, b, b, b, 1.0, B, ldb, C, ldc, 1.0, A, lda);
}

static struct starpu_codelet fill_cl = {
    .cpu_funcs = {fill_cpu},
    .cpu_funcs_name = {"fill_cpu"},
    .nbuffers = 1,
    .modes = {STARPU_W},
    .name = "fill",
};

static struct starpu_codelet dgemm_cl = {
    .cpu_funcs = {dgemm_cpu},
    .cpu_funcs_name = {"dgemm_cpu"},
    .nbuffers = 3,
    .modes = {STARPU_RW, STARPU_R, STARPU_R},
    .name = "task_4",
};

/* ---- the application's names, as in the model ---------------------------- */

static const char *const n_a[] = {"A_tile", "A", NULL};
static const char *const n_b[] = {"B_tile", "B", NULL};
static const char *const n_c[] = {"C_tile", "C", NULL};
static const char *const *const args_1[] = {n_a};
static const char *const *const args_2[] = {n_b};
static const char *const *const args_3[] = {n_c};
static const char *const *const args_4[] = {n_a, n_b, n_c};
static const mapopt_task_info task_info[] = {{"task_1", 1, args_1},
                                             {"task_2", 1, args_2},
                                             {"task_3", 1, args_3},
                                             {"task_4", 3, args_4}};
static const char *const fill_task[3] = {"task_1", "task_2", "task_3"};
static const char *const *const names[3] = {n_a, n_b, n_c};

static mapopt_region_keys keys_of(int m, size_t pos) {
  return (mapopt_region_keys){names[m], 2, pos};
}

/* ---- the run ------------------------------------------------------------- */

/* A tile of one matrix: its home (the fill's placement) and data. */
typedef struct gtile {
  mapopt_starpu_place home;
  int home_node, fill_node;
  mapopt_starpu_geometry geo;
  int row; /* row-major */
  double *data;
  starpu_data_handle_t h;
} gtile;

typedef struct gemm {
  int g, b;
  int64_t n;
  gtile *t[3]; /* A, B, C: g * g tiles each, tile (i, j) at i * g + j */
  mapopt_starpu_place *p4; /* task_4's point (i, j) */
  int (*nodes4)[3];
  bool collect[3];
} gemm;

static bool plan(app *a, gemm *m) {
  int64_t ext[2] = {m->g, m->g};
  unsigned fv = mapopt_starpu_codelet_variants(&fill_cl);
  unsigned dv = mapopt_starpu_codelet_variants(&dgemm_cl);
  for (int i = 0; i < m->g; i++)
    for (int j = 0; j < m->g; j++) {
      int64_t pt[2] = {i, j};
      for (int k = 0; k < 3; k++)
        if (!app_placed(a, mapopt_starpu_place_index(
                               a->mapper, fill_task[k], fv, 2, pt, ext,
                               a->diags, &m->t[k][i * m->g + j].home)))
          return false;
      if (!app_placed(a, mapopt_starpu_place_index(a->mapper, "task_4", dv, 2,
                                                   pt, ext, a->diags,
                                                   &m->p4[i * m->g + j])))
        return false;
    }
  int64_t e[2] = {m->b, m->b};
  for (int k = 0; k < 3; k++)
    for (int x = 0; x < m->g * m->g; x++) {
      gtile *t = &m->t[k][x];
      mapopt_region_keys keys = keys_of(k, 0);
      mapopt_starpu_memory mem;
      if (!app_placed(a, mapopt_starpu_memory_of(a->mapper, fill_task[k], &keys,
                                                 &t->home, a->diags, &mem)))
        return false;
      t->home_node = mem.node;
      t->fill_node = mem.codelet_node;
      mapopt_layout l;
      mapopt_starpu_layout_of(a->mapper, fill_task[k], &keys, &t->home,
                              mem.kind, &l);
      if (mapopt_starpu_geometry_of(&l, 2, e, 1, sizeof(double), &t->geo) !=
          MAPOPT_OK)
        return false;
      /* Index dimension 1 (the column) fastest: row-major. */
      t->row = t->geo.storage[0] == 1;
    }
  for (int x = 0; x < m->g * m->g; x++)
    for (int k = 0; k < 3; k++) {
      mapopt_region_keys keys = keys_of(k, (size_t)k);
      mapopt_starpu_memory mem;
      if (!app_placed(a, mapopt_starpu_memory_of(a->mapper, "task_4", &keys,
                                                 &m->p4[x], a->diags, &mem)))
        return false;
      m->nodes4[x][k] = mem.codelet_node;
    }
  for (int k = 1; k < 3; k++) {
    mapopt_region_keys keys = keys_of(k, (size_t)k);
    m->collect[k] = mapopt_policy_collect(mapopt_starpu_program(a->mapper),
                                          "task_4", &keys);
  }
  return true;
}

static bool setup(app *a, gemm *m) {
  for (int k = 0; k < 3; k++)
    for (int x = 0; x < m->g * m->g; x++) {
      gtile *t = &m->t[k][x];
      bool mine = t->home.rank == a->rank;
      if (mine && !(t->data = app_alloc(&t->geo)))
        return false;
      mapopt_starpu_register(&t->h, mine ? t->home_node : -1, t->data, &t->geo);
      if (!app_mpi_register(a, t->h, t->home.rank))
        return false;
    }
  return true;
}

/* One repetition's fills: task_1, task_2, task_3 over every tile. */
static void fills(app *a, gemm *m) {
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < m->g; i++)
      for (int j = 0; j < m->g; j++) {
        gtile *t = &m->t[k][i * m->g + j];
        gargs ga = {{t->row, 0, 0}, k, (int64_t)i * m->b, (int64_t)j * m->b};
        struct starpu_data_descr d = {t->h, STARPU_W};
        app_submit(a, &fill_cl, &ga, sizeof ga, &d, 1, &t->fill_node, &t->home);
      }
}

/* The g SUMMA steps. */
static void summa(app *a, gemm *m) {
  int g = m->g;
  for (int k = 0; k < g; k++) {
    for (int i = 0; i < g; i++)
      for (int j = 0; j < g; j++) {
        gtile *A = &m->t[0][i * g + j], *B = &m->t[1][i * g + k],
              *C = &m->t[2][k * g + j];
        gargs ga = {{A->row, B->row, C->row}, 0, 0, 0};
        struct starpu_data_descr d[3] = {
            {A->h, STARPU_RW}, {B->h, STARPU_R}, {C->h, STARPU_R}};
        app_submit(a, &dgemm_cl, &ga, sizeof ga, d, 3, m->nodes4[i * g + j],
                   &m->p4[i * g + j]);
      }
    for (int x = 0; x < g; x++) {
      if (m->collect[1])
        starpu_mpi_cache_flush(MPI_COMM_WORLD, m->t[1][x * g + k].h);
      if (m->collect[2])
        starpu_mpi_cache_flush(MPI_COMM_WORLD, m->t[2][k * g + x].h);
    }
  }
}

/* Compares this rank's A tiles with a reference DGEMM of the same rows of
 * B and columns of C; returns the number of entries that differ. */
static int64_t compare(app *a, gemm *m, double *err) {
  int64_t n = m->n, b = m->b, bad = 0;
  double *rows = malloc((size_t)(b * n) * sizeof *rows);
  double *cols = malloc((size_t)(n * b) * sizeof *cols);
  double *ref = malloc((size_t)(b * b) * sizeof *ref);
  *err = 0;
  if (!rows || !cols || !ref) {
    free(rows);
    free(cols);
    free(ref);
    return -1;
  }
  for (int i = 0; i < m->g; i++)
    for (int j = 0; j < m->g; j++) {
      gtile *t = &m->t[0][i * m->g + j];
      if (t->home.rank != a->rank)
        continue;
      for (int64_t r = 0; r < b; r++)
        for (int64_t c = 0; c < n; c++)
          rows[r * n + c] = b_value(i * b + r, c);
      for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < b; c++)
          cols[r * b + c] = c_value(r, j * b + c);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)b, (int)b,
                  (int)n, 1.0, rows, (int)n, cols, (int)b, 0.0, ref, (int)b);
      starpu_data_acquire(t->h, STARPU_R);
      const double *p = (const double *)starpu_data_get_local_ptr(t->h);
      size_t ld = t->geo.ld[1];
      for (int64_t r = 0; r < b; r++)
        for (int64_t c = 0; c < b; c++) {
          double d =
              fabs(p[at(t->row, ld, (size_t)r, (size_t)c)] - ref[r * b + c]);
          if (d > *err)
            *err = d;
          bad += d != 0;
        }
      starpu_data_release(t->h);
    }
  free(rows);
  free(cols);
  free(ref);
  return bad;
}

static const char usage[] =
    "SUMMA matrix product with OpenBLAS DGEMM on StarPU-MPI "
    "(docs/starpu.md).\n"
    "Prints On N nodes achieved GFLOPS per node: X. over the reps timed "
    "repetitions.";

int main(int argc, char **argv) {
  int64_t n = 1024, g = 2, reps = 3, check = 1, corrupt = 0;
  app_option opts[] = {
      {"n", &n, 1, 1 << 16, "matrix size"},
      {"g", &g, 1, 64, "tiles per dimension"},
      {"reps", &reps, 1, 10000, "timed repetitions"},
      {"check", &check, 0, 1, "1: compare with a reference DGEMM"},
      {"corrupt", &corrupt, 0, 1,
       "1: change one entry of A before the check (tests "
       "the check)"}};
  app a;
  int st = app_start(&a, argc, argv, usage, opts, sizeof opts / sizeof *opts,
                     task_info, 4, true);
  if (st)
    return st < 0 ? 0 : st;
  if (n % g) {
    if (a.rank == 0)
      fprintf(stderr,
              "%s: error: n (%" PRId64 ") must be a multiple of g (%" PRId64
              ")\n",
              a.prog, n, g);
    return app_finish(&a, EXIT_USAGE);
  }
  /* StarPU's workers are the parallelism: one BLAS thread each. */
  openblas_set_num_threads(1);
  gemm m = {(int)g, (int)(n / g), n, {NULL}, NULL, NULL, {false}};
  size_t tiles = (size_t)(g * g);
  for (int k = 0; k < 3; k++)
    m.t[k] = calloc(tiles, sizeof *m.t[k]);
  m.p4 = calloc(tiles, sizeof *m.p4);
  m.nodes4 = calloc(tiles, sizeof *m.nodes4);
  int status = 0;
  if (!m.t[0] || !m.t[1] || !m.t[2] || !m.p4 || !m.nodes4)
    status = EXIT_USAGE;
  else if (!plan(&a, &m))
    status = EXIT_MAPPER;
  else if (!setup(&a, &m))
    status = EXIT_USAGE;
  if (status) {
    if (status == EXIT_USAGE && a.rank == 0)
      fprintf(stderr, "%s: error: out of memory\n", a.prog);
  } else {
    app_report(&a);
    double total = 0;
    for (int64_t r = 0; r < reps; r++) {
      fills(&a, &m);
      app_fence(&a);
      double t0 = app_now();
      summa(&a, &m);
      app_fence(&a);
      total += app_now() - t0;
    }
    double flops = (double)n * (double)n * (double)(2 * n - 1) * (double)reps;
    if (a.rank == 0)
      printf("On %d nodes achieved GFLOPS per node: %f.\n", a.nodes,
             flops / (total / 1e6) / 1e9 / a.nodes);
    gtile *a00 = &m.t[0][0];
    if (corrupt && a00->home.rank == a.rank) {
      starpu_data_acquire(a00->h, STARPU_RW);
      ((double *)starpu_data_get_local_ptr(a00->h))[0] += 0.5;
      starpu_data_release(a00->h);
    }
    if (check) {
      double err;
      int64_t bad = compare(&a, &m, &err);
      char ok[128];
      snprintf(ok, sizeof ok,
               "A (%" PRId64 " x %" PRId64 ") equals the reference DGEMM", n,
               n);
      status = app_verdict(&a, bad, err, "out of memory",
                           "entries of A differ from the reference DGEMM", ok);
    }
    for (int k = 0; k < 3; k++)
      for (size_t x = 0; x < tiles; x++)
        starpu_data_unregister(m.t[k][x].h);
  }
  for (int k = 0; k < 3; k++) {
    for (size_t x = 0; m.t[k] && x < tiles; x++)
      free(m.t[k][x].data);
    free(m.t[k]);
  }
  free(m.p4);
  free(m.nodes4);
  return app_finish(&a, status);
}
