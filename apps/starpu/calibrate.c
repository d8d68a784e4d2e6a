/*
 * starpu-calibrate: measures the rates that the machine model of this host
 * (machines-local/starpu-vm.json) and the StarPU programs' application
 * models (apps/starpu-*.json) take, so that `mapopt sim` can predict the
 * programs' runs (docs/starpu.md, "Calibration").
 *
 * On one rank it measures, on one core:
 *  - OpenBLAS DGEMM (one thread) on b x b tiles, in GFLOP/s, alone and
 *    with a second DGEMM running at the same time in another thread (what
 *    each of two busy workers gets);
 *  - memory bandwidth, STREAM triad a = b + s c over arrays far larger than
 *    the caches, counting bytes read and written;
 *  - the stencil's kernels (stencil_kernel.c) on a tile, in ns per point,
 *    for SOA F_order (alone and two at once) and the other layouts;
 *  - StarPU-MPI's cost per task: empty tasks through starpu_mpi_task_insert
 *    on one worker, and one RW datum chaining them.
 * On two ranks it measures the bandwidth and latency between them: MPI's
 * (ping-pong, MPI_Send/MPI_Recv), then StarPU-MPI's, as the programs move
 * data: a chain of empty RW tasks on one vector owned by rank 0, run
 * alternately on rank 0 and rank 1, so that every task waits for the
 * vector to arrive.
 * Each figure is the median of 5 rounds; every line is `name value unit`.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <mpi.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "stencil_kernel.h"

enum { ROUNDS = 5 };

static double now(void) {
  return MPI_Wtime();
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* Seconds per call of f(arg), the median of ROUNDS rounds of repetitions
 * that each last at least min_s. */
static double time_per_call(void (*f)(void *), void *arg, double min_s) {
  double r[ROUNDS];
  f(arg); /* warm the caches and the pages */
  for (int k = 0; k < ROUNDS; k++) {
    long reps = 0;
    double t0 = now(), t;
    do {
      f(arg);
      reps++;
      t = now() - t0;
    } while (t < min_s);
    r[k] = t / (double)reps;
  }
  return median(r, ROUNDS);
}

typedef struct gemm_arg {
  int b;
  double *a, *x, *y;
} gemm_arg;

static void gemm_call(void *p) {
  gemm_arg *g = p;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->b, g->b, g->b, 1.0,
              g->x, g->b, g->y, g->b, 1.0, g->a, g->b);
}

static gemm_arg gemm_new(int b) {
  size_t n = (size_t)b * (size_t)b;
  gemm_arg g = {b, calloc(n, 8), malloc(n * 8), malloc(n * 8)};
  for (size_t i = 0; i < n; i++) {
    g.x[i] = (double)(i % 7) / 8.0;
    g.y[i] = (double)(i % 5) / 8.0;
  }
  return g;
}

static void gemm_free(gemm_arg *g) {
  free(g->a);
  free(g->x);
  free(g->y);
}

/* One of two calls timed at the same time, in two threads. */
typedef struct timed {
  void (*f)(void *);
  void *arg;
  double seconds;
} timed;

static void *timed_thread(void *p) {
  timed *t = p;
  t->seconds = time_per_call(t->f, t->arg, 0.2);
  return NULL;
}

/* Seconds per call of f(a0) while f(a1) runs in another thread: what each
 * of two busy workers gets (the slower of the two). */
static double time_two_at_once(void (*f)(void *), void *a0, void *a1) {
  timed t[2] = {{f, a0, 0}, {f, a1, 0}};
  pthread_t th;
  pthread_create(&th, NULL, timed_thread, &t[1]);
  timed_thread(&t[0]);
  pthread_join(th, NULL);
  return t[0].seconds > t[1].seconds ? t[0].seconds : t[1].seconds;
}

static void measure_dgemm(int b) {
  gemm_arg g[2] = {gemm_new(b), gemm_new(b)};
  double flops = 2.0 * b * b * (double)b;
  printf("dgemm_gflops_b%d %.2f GFLOP/s\n", b,
         flops / time_per_call(gemm_call, &g[0], 0.2) / 1e9);
  printf("dgemm_gflops_b%d_two_at_once %.2f GFLOP/s each\n", b,
         flops / time_two_at_once(gemm_call, &g[0], &g[1]) / 1e9);
  gemm_free(&g[0]);
  gemm_free(&g[1]);
}

typedef struct triad_arg {
  size_t n;
  double *a, *b, *c;
} triad_arg;

static void triad_call(void *p) {
  triad_arg *t = p;
  for (size_t i = 0; i < t->n; i++)
    t->a[i] = t->b[i] + 3.0 * t->c[i];
}

static void measure_bandwidth(void) {
  triad_arg t = {(size_t)1 << 23, NULL, NULL, NULL};
  t.a = malloc(t.n * 8);
  t.b = malloc(t.n * 8);
  t.c = malloc(t.n * 8);
  for (size_t i = 0; i < t.n; i++) {
    t.a[i] = 0;
    t.b[i] = (double)i;
    t.c[i] = 1;
  }
  double s = time_per_call(triad_call, &t, 0.3);
  printf("triad_gbs %.3f GB/s (3 x %zu MB per call, one core)\n",
         3.0 * 8.0 * (double)t.n / s / 1e9, t.n * 8 >> 20);
  free(t.a);
  free(t.b);
  free(t.c);
}

typedef struct tile_arg {
  kargs k;
  double *tile;
  strides s;
} tile_arg;

static void stencil_call(void *p) {
  tile_arg *t = p;
  stencil_tile(&t->k, t->tile, t->s);
}

static void increment_call(void *p) {
  tile_arg *t = p;
  increment_tile(&t->k, t->tile, t->s);
}

/* The kernels on a t x t tile (R = 2) under one layout. */
static tile_arg tile_new(int t, int soa, int c_order) {
  int R = 2, e = t + 2 * R;
  size_t pts = (size_t)e * (size_t)e;
  tile_arg a = {{R, t, t, 0, {0}, {{0}}}, malloc(pts * 2 * 8), {0, 0, 0}};
  size_t fast = soa ? 1 : 2, slow = fast * (size_t)e;
  a.s.x = c_order ? slow : fast;
  a.s.y = c_order ? fast : slow;
  a.s.f = soa ? pts : 1;
  for (size_t i = 0; i < pts * 2; i++)
    a.tile[i] = (double)(i % 13);
  return a;
}

/* The kernels on a t x t tile (R = 2) under one layout; with two, also
 * two tiles at once. */
static void measure_kernels(int t, const char *name, int soa, int c_order,
                            bool two) {
  tile_arg a[2] = {tile_new(t, soa, c_order), tile_new(t, soa, c_order)};
  double ns = 1e9 / ((double)t * (double)t);
  printf("stencil_ns_per_point_%s_t%d %.3f ns\n", name, t,
         time_per_call(stencil_call, &a[0], 0.2) * ns);
  printf("increment_ns_per_point_%s_t%d %.3f ns\n", name, t,
         time_per_call(increment_call, &a[0], 0.2) * ns);
  if (two) {
    printf("stencil_ns_per_point_%s_t%d_two_at_once %.3f ns\n", name, t,
           time_two_at_once(stencil_call, &a[0], &a[1]) * ns);
    printf("increment_ns_per_point_%s_t%d_two_at_once %.3f ns\n", name, t,
           time_two_at_once(increment_call, &a[0], &a[1]) * ns);
  }
  free(a[0].tile);
  free(a[1].tile);
}

static void empty_cpu(void *buffers[], void *arg) {
  (void)buffers;
  (void)arg;
}

static struct starpu_codelet empty_cl = {
    .cpu_funcs = {empty_cpu}, .nbuffers = 1, .modes = {STARPU_RW}};

/* Seconds per task of a chain of n empty tasks on one RW datum, submitted
 * with starpu_mpi_task_insert: submission, scheduling and execution. */
static double chain(int n) {
  double v = 0;
  starpu_data_handle_t h;
  starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&v, sizeof v);
  starpu_mpi_data_register(h, 1, 0);
  starpu_task_wait_for_all();
  double t0 = now();
  for (int i = 0; i < n; i++)
    starpu_mpi_task_insert(MPI_COMM_WORLD, &empty_cl, STARPU_RW, h, 0);
  starpu_task_wait_for_all();
  double t = (now() - t0) / n;
  starpu_data_unregister(h);
  return t;
}

static void measure_tasks(void) {
  double r[ROUNDS];
  chain(1000);
  for (int k = 0; k < ROUNDS; k++)
    r[k] = chain(20000);
  printf("starpu_task_us %.3f us (per empty task, starpu_mpi_task_insert, "
         "one RW datum, %u CPU worker(s))\n",
         median(r, ROUNDS) * 1e6, starpu_cpu_worker_get_count());
}

static void pingpong(int rank) {
  static const int sizes[] = {8, 65536, 1 << 20, 8 << 20};
  char *buf = malloc(8 << 20);
  memset(buf, 1, 8 << 20);
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    int n = sizes[i], reps = n < 65536 ? 2000 : n < (1 << 20) ? 200 : 20;
    double r[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      for (int j = 0; j < reps; j++) {
        if (rank == 0) {
          MPI_Send(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
          MPI_Recv(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
      }
      r[k] = (now() - t0) / (2.0 * reps); /* one way */
    }
    double t = median(r, ROUNDS);
    if (rank == 0)
      printf("mpi_one_way_%d_bytes %.3f us %.3f GB/s\n", n, t * 1e6,
             (double)n / t / 1e9);
  }
  free(buf);
}

static void empty_vector(void *buffers[], void *arg) {
  (void)buffers;
  (void)arg;
}

static struct starpu_codelet touch_cl = {
    .cpu_funcs = {empty_vector}, .nbuffers = 1, .modes = {STARPU_RW}};

/* Seconds per hop of a vector of n doubles between the two ranks. */
static double hops(int rank, int n, int count) {
  double *v = rank == 0 ? calloc((size_t)n, sizeof *v) : NULL;
  starpu_data_handle_t h;
  starpu_vector_data_register(&h, rank == 0 ? STARPU_MAIN_RAM : -1,
                              (uintptr_t)v, (uint32_t)n, sizeof *v);
  starpu_mpi_data_register(h, 7, 0);
  starpu_task_wait_for_all();
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now();
  for (int i = 0; i < count; i++)
    starpu_mpi_task_insert(MPI_COMM_WORLD, &touch_cl, STARPU_RW, h,
                           STARPU_EXECUTE_ON_NODE, i % 2, 0);
  starpu_task_wait_for_all();
  if (rank == 0) { /* the last hop back to the owner */
    starpu_data_acquire(h, STARPU_R);
    starpu_data_release(h);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t = (now() - t0) / count;
  starpu_data_unregister(h);
  free(v);
  return t;
}

static void starpu_hops(int rank) {
  static const int sizes[] = {1, 8192, 131072, 1048576};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    int n = sizes[i], count = n < 131072 ? 400 : 40;
    double r[ROUNDS];
    for (int k = 0; k < ROUNDS; k++)
      r[k] = hops(rank, n, count);
    double t = median(r, ROUNDS);
    if (rank == 0)
      printf("starpu_mpi_hop_%d_bytes %.3f us %.3f GB/s\n", n * 8, t * 1e6,
             8.0 * n / t / 1e9);
  }
}

int main(int argc, char **argv) {
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct starpu_conf conf;
  starpu_conf_init(&conf);
  if (size >= 2) {
    pingpong(rank);
    if (starpu_mpi_init_conf(NULL, NULL, 0, MPI_COMM_WORLD, &conf) != 0) {
      fprintf(stderr, "starpu-calibrate: StarPU-MPI could not start\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    starpu_hops(rank);
    starpu_mpi_shutdown();
    MPI_Finalize();
    return 0;
  }
  openblas_set_num_threads(1);
  for (int b = 256; b <= 1024; b *= 2)
    measure_dgemm(b);
  measure_bandwidth();
  measure_kernels(512, "soa_f", 1, 0, true);
  measure_kernels(512, "soa_c", 1, 1, false);
  measure_kernels(512, "aos_f", 0, 0, false);
  measure_kernels(1024, "soa_f", 1, 0, true);
  if (starpu_mpi_init_conf(NULL, NULL, 0, MPI_COMM_WORLD, &conf) != 0) {
    fprintf(stderr, "starpu-calibrate: StarPU-MPI could not start\n");
    MPI_Finalize();
    return 1;
  }
  measure_tasks();
  starpu_mpi_shutdown();
  MPI_Finalize();
  return 0;
}
