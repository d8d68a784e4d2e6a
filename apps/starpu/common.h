/*
 * What the StarPU-MPI programs of apps/starpu share (docs/starpu.md):
 * their command line, starting StarPU-MPI, loading the mapper (or, without
 * -mapping, the empty mapper with StarPU's scheduler choosing workers),
 * reporting diagnostics once, fences, and their exit statuses.
 *
 * Exit statuses of the programs: 0 success; 1 bad usage or an environment
 * problem; 2 the mapper failed (compile or mapping error, printed as
 * `mapopt sim` prints it); 3 the result was wrong.
 */
#ifndef MAPOPT_APPS_STARPU_COMMON_H
#define MAPOPT_APPS_STARPU_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <starpu.h>
#include <starpu_mpi.h>

#include "mapopt/starpu.h"

enum { EXIT_USAGE = 1, EXIT_MAPPER = 2, EXIT_WRONG = 3 };

/* An integer command-line option "-name value" with its default in *value
 * and its allowed range. */
typedef struct app_option {
  const char *name;
  int64_t *value;
  int64_t min, max;
  const char *help;
} app_option;

/* A program being run. */
typedef struct app {
  const char *prog;    /* program name, for messages */
  int rank, ranks;     /* this MPI rank, MPI ranks */
  int nodes;           /* hosts the ranks run on */
  const char *mapping; /* -mapping FILE, or NULL */
  bool pin;            /* place tasks on the mapper's workers */
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  mapopt_starpu_machine machine;
  mapopt_starpu *mapper;
  int tag;                     /* next MPI tag for a data handle */
  starpu_data_handle_t *owned; /* handles this rank owns, for app_fence */
  size_t nowned, cap_owned;
} app;

/*
 * Parses the command line (-mapping FILE and opts; -h prints the usage),
 * starts MPI and StarPU-MPI, checks that every rank has the same workers
 * and loads the mapper: the file of -mapping, or else the empty mapper
 * with pin false (ranks by the default placement, workers by StarPU's
 * scheduler). tasks declares the program's tasks and arguments, for the
 * mapper's unknown-name warnings. Returns 0, or the exit status after
 * printing why (StarPU-MPI is then stopped).
 */
int app_start(app *a, int argc, char **argv, const char *usage,
              const app_option *opts, size_t nopts,
              const mapopt_task_info *tasks, size_t ntasks,
              bool c_order_default);

/* Prints the diagnostics collected so far to stderr (rank 0 only: every
 * rank computes the same placements) and clears them. */
void app_report(app *a);

/* Stops StarPU-MPI and MPI, frees a; returns status for main. */
int app_finish(app *a, int status);

/*
 * Waits for every task and communication of every rank: each rank waits
 * for its tasks and for the last write of every datum it owns (a task run
 * elsewhere sends it back), then all meet at an MPI barrier. This fence
 * never blocks StarPU's MPI thread, unlike starpu_mpi_wait_for_all, whose
 * barrier runs in that thread and can stop it from sending what another
 * rank still waits for (a hang seen with StarPU 1.3.10 when tasks write
 * data owned by another rank).
 */
void app_fence(app *a);

/* Microseconds, from StarPU's clock. */
double app_now(void);

/* Registers handle with StarPU-MPI: owned by owner, with a fresh tag.
 * false when out of memory. */
bool app_mpi_register(app *a, starpu_data_handle_t handle, int owner);

/* Memory for a piece of geometry g with its alignment (at least 64
 * bytes), or NULL. */
void *app_alloc(const mapopt_starpu_geometry *g);

/*
 * Submits a task of codelet cl with the cl_arg value arg (size bytes) on
 * buffers d[0..nb-1], to run at p: on rank p->rank, and when the mapper
 * pins workers, on worker p->worker with buffer i in memory node nodes[i]
 * (codelet_node values). Without -mapping StarPU's scheduler picks the
 * worker and StarPU the memory.
 */
void app_submit(app *a, struct starpu_codelet *cl, const void *arg, size_t size,
                struct starpu_data_descr *d, int nb, const int *nodes,
                const mapopt_starpu_place *p);

/* pos[d]: the storage position (0 fastest) of index dimension d of g, for
 * d < dims, and pos[dims] that of the field dimension when g has one. */
void app_storage_pos(const mapopt_starpu_geometry *g, int dims, int *pos);

/* Whether a placement result is usable; on a mapping error reports it. */
bool app_placed(app *a, mapopt_status st);

/*
 * The verdict of a result check, over all ranks: bad is the number of
 * wrong values this rank found (< 0: it could not check, for the reason
 * unchecked), err the largest difference. Rank 0 prints "check: OK_TEXT"
 * or the error "wrong result: N WRONG_TEXT"; returns 0, EXIT_WRONG or
 * EXIT_USAGE.
 */
int app_verdict(app *a, int64_t bad, double err, const char *unchecked,
                const char *wrong_text, const char *ok_text);

#endif
