/*
 * The shared part of the StarPU-MPI programs (common.h): command line,
 * start-up, mapper loading and reporting, fences and shutdown.
 *
 * MPI is initialized here with MPI_THREAD_MULTIPLE before StarPU-MPI
 * starts, because the programs make a few collective calls of their own
 * (the worker check, the result check) while StarPU's MPI thread runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "common.h"

static void print_usage(const char *prog, const char *usage,
                        const app_option *opts, size_t nopts, FILE *out) {
  fprintf(out, "usage: %s [-mapping FILE] [options]\n%s\n", prog, usage);
  fprintf(out, "  -mapping FILE   place tasks and data with this mapper "
               "(default: StarPU's scheduler)\n");
  for (size_t i = 0; i < nopts; i++) {
    char flag[32];
    snprintf(flag, sizeof flag, "-%s N", opts[i].name);
    fprintf(out, "  %-15s %s (default %" PRId64 ")\n", flag, opts[i].help,
            *opts[i].value);
  }
}

/* -1: usage printed on request; 0: parsed; EXIT_USAGE: bad command line. */
static int parse(app *a, int argc, char **argv, const char *usage,
                 const app_option *opts, size_t nopts) {
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      print_usage(a->prog, usage, opts, nopts, stdout);
      return -1;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "%s: error: option %s needs a value\n", a->prog, arg);
      return EXIT_USAGE;
    }
    const char *val = argv[++i];
    if (!strcmp(arg, "-mapping")) {
      a->mapping = val;
      continue;
    }
    size_t k = 0;
    while (k < nopts && (arg[0] != '-' || strcmp(arg + 1, opts[k].name)))
      k++;
    if (k == nopts) {
      fprintf(stderr, "%s: error: unknown option %s\n", a->prog, arg);
      print_usage(a->prog, usage, opts, nopts, stderr);
      return EXIT_USAGE;
    }
    char *end;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    if (end == val || *end || errno || v < opts[k].min || v > opts[k].max) {
      fprintf(stderr,
              "%s: error: %s must be an integer in [%" PRId64 ", %" PRId64
              "], got '%s'\n",
              a->prog, arg, opts[k].min, opts[k].max, val);
      return EXIT_USAGE;
    }
    *opts[k].value = v;
  }
  return 0;
}

static int count_nodes(void) {
  MPI_Comm local;
  int lrank = 0, one, nodes = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                          MPI_INFO_NULL, &local) != MPI_SUCCESS)
    return 1;
  MPI_Comm_rank(local, &lrank);
  MPI_Comm_free(&local);
  one = lrank == 0;
  MPI_Allreduce(&one, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return nodes;
}

/* Every rank must see the same workers: the DSL's nodes are identical. */
static bool same_workers(const mapopt_starpu_machine *m) {
  int mine[3] = {m->ncpus, m->ngpus, m->nnuma}, lo[3], hi[3];
  MPI_Allreduce(mine, lo, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return !memcmp(lo, hi, sizeof lo);
}

int app_start(app *a, int argc, char **argv, const char *usage,
              const app_option *opts, size_t nopts,
              const mapopt_task_info *tasks, size_t ntasks,
              bool c_order_default) {
  const char *slash = strrchr(argv[0], '/');
  memset(a, 0, sizeof *a);
  a->prog = slash ? slash + 1 : argv[0];
  int st = parse(a, argc, argv, usage, opts, nopts);
  if (st)
    return st;
  a->pin = a->mapping != NULL;
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &a->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &a->ranks);
  if (provided < MPI_THREAD_MULTIPLE) {
    fprintf(stderr,
            "%s: error: this MPI does not provide "
            "MPI_THREAD_MULTIPLE\n",
            a->prog);
    MPI_Finalize();
    return EXIT_USAGE;
  }
  a->nodes = count_nodes();
  struct starpu_conf conf;
  starpu_conf_init(&conf);
  if (starpu_mpi_init_conf(NULL, NULL, 0, MPI_COMM_WORLD, &conf) != 0) {
    fprintf(stderr, "%s: error: StarPU-MPI could not start\n", a->prog);
    MPI_Finalize();
    return EXIT_USAGE;
  }
  if (mapopt_ctx_new(NULL, NULL, &a->ctx) != MAPOPT_OK ||
      mapopt_diags_new(a->ctx, &a->diags) != MAPOPT_OK) {
    fprintf(stderr, "%s: error: out of memory\n", a->prog);
    return app_finish(a, EXIT_USAGE);
  }
  mapopt_starpu_machine_detect(a->ranks, &a->machine);
  if (!same_workers(&a->machine)) {
    if (a->rank == 0)
      fprintf(stderr,
              "%s: error: the ranks have different numbers of "
              "StarPU workers; set STARPU_NCPU the same on all\n",
              a->prog);
    return app_finish(a, EXIT_USAGE);
  }
  mapopt_starpu_options mo = {0};
  mo.c_order_default = c_order_default;
  mo.tasks = tasks;
  mo.ntasks = ntasks;
  mapopt_status ms;
  if (a->mapping)
    ms = mapopt_starpu_load(a->ctx, a->mapping, &a->machine, &mo, a->diags,
                            &a->mapper);
  else
    ms = mapopt_starpu_compile(a->ctx, "<default>", "", 0, &a->machine, &mo,
                               a->diags, &a->mapper);
  app_report(a);
  if (ms != MAPOPT_OK) {
    if (a->rank == 0 && ms != MAPOPT_ESYNTAX && ms != MAPOPT_ELOAD &&
        ms != MAPOPT_EIO)
      fprintf(stderr, "%s: error: %s\n", a->prog, mapopt_strerror(ms));
    return app_finish(a, EXIT_MAPPER);
  }
  if (a->rank == 0)
    printf("[%s] %d rank(s) on %d node(s), %d CPU worker(s) per rank, "
           "mapper %s, scheduler %s\n",
           a->prog, a->ranks, a->nodes, a->machine.ncpus,
           a->mapping ? a->mapping : "none",
           a->pin ? "pinned by the mapper"
                  : (getenv("STARPU_SCHED") ? getenv("STARPU_SCHED")
                                            : "StarPU's default"));
  return 0;
}

void app_report(app *a) {
  if (a->rank == 0) {
    char line[2048];
    for (size_t i = 0; i < mapopt_diags_count(a->diags); i++) {
      mapopt_diag_format(mapopt_diags_get(a->diags, i), line, sizeof line);
      fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
  }
  mapopt_diags_clear(a->diags);
}

int app_finish(app *a, int status) {
  free(a->owned);
  a->owned = NULL;
  mapopt_starpu_free(a->mapper);
  a->mapper = NULL;
  mapopt_diags_free(a->diags);
  a->diags = NULL;
  mapopt_ctx_free(a->ctx);
  a->ctx = NULL;
  fflush(stdout);
  starpu_mpi_shutdown();
  MPI_Finalize();
  return status;
}

void app_fence(app *a) {
  starpu_task_wait_for_all();
  for (size_t i = 0; i < a->nowned; i++) {
    starpu_data_acquire(a->owned[i], STARPU_R);
    starpu_data_release(a->owned[i]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

double app_now(void) {
  return starpu_timing_now();
}

bool app_mpi_register(app *a, starpu_data_handle_t handle, int owner) {
  starpu_mpi_data_register(handle, a->tag++, owner);
  if (owner != a->rank)
    return true;
  if (a->nowned == a->cap_owned) {
    size_t cap = a->cap_owned ? 2 * a->cap_owned : 64;
    starpu_data_handle_t *o = realloc(a->owned, cap * sizeof *o);
    if (!o)
      return false;
    a->owned = o;
    a->cap_owned = cap;
  }
  a->owned[a->nowned++] = handle;
  return true;
}

void *app_alloc(const mapopt_starpu_geometry *g) {
  size_t align = g->align > 64 ? g->align : 64;
  size_t bytes = g->elements * g->elem_bytes;
  void *p = NULL;
  if (posix_memalign(&p, align, bytes ? bytes : align))
    return NULL;
  return p;
}

void app_submit(app *a, struct starpu_codelet *cl, const void *arg, size_t size,
                struct starpu_data_descr *d, int nb, const int *nodes,
                const mapopt_starpu_place *p) {
  if (!a->pin) {
    starpu_mpi_task_insert(MPI_COMM_WORLD, cl, STARPU_VALUE, arg, size,
                           STARPU_DATA_MODE_ARRAY, d, nb,
                           STARPU_EXECUTE_ON_NODE, p->rank, 0);
    return;
  }
  struct starpu_codelet *use = cl;
  if (mapopt_starpu_codelet(a->mapper, cl, nb, nodes, &use) != MAPOPT_OK)
    use = cl; /* out of memory: StarPU's memory choice still runs it */
  starpu_mpi_task_insert(MPI_COMM_WORLD, use, STARPU_VALUE, arg, size,
                         STARPU_DATA_MODE_ARRAY, d, nb, STARPU_EXECUTE_ON_NODE,
                         p->rank, STARPU_EXECUTE_ON_WORKER, p->worker, 0);
}

void app_storage_pos(const mapopt_starpu_geometry *g, int dims, int *pos) {
  for (int k = 0; k < g->nstorage; k++)
    pos[g->storage[k] < 0 ? dims : g->storage[k]] = k;
}

bool app_placed(app *a, mapopt_status st) {
  if (st == MAPOPT_OK)
    return true;
  app_report(a);
  if (st != MAPOPT_EMAP && a->rank == 0)
    fprintf(stderr, "%s: error: %s\n", a->prog, mapopt_strerror(st));
  return false;
}

/* The sum over ranks of v, and the maximum. */
static int64_t sum_ranks(int64_t v) {
  int64_t r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return r;
}

static double max_ranks(double v) {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return r;
}

int app_verdict(app *a, int64_t bad, double err, const char *unchecked,
                const char *wrong_text, const char *ok_text) {
  int64_t failed = sum_ranks(bad < 0);
  int64_t wrong = sum_ranks(bad < 0 ? 0 : bad);
  err = max_ranks(err);
  if (failed) {
    if (a->rank == 0)
      fprintf(stderr, "%s: error: cannot check the result: %s\n", a->prog,
              unchecked);
    return EXIT_USAGE;
  }
  if (wrong) {
    if (a->rank == 0)
      fprintf(stderr,
              "%s: error: wrong result: %" PRId64
              " %s (largest difference %g)\n",
              a->prog, wrong, wrong_text, err);
    return EXIT_WRONG;
  }
  if (a->rank == 0)
    printf("check: %s (largest difference %g)\n", ok_text, err);
  return 0;
}
