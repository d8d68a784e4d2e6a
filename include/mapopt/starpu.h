/*
 * mapopt starpu: a mapper applied to a real StarPU / StarPU-MPI program
 * (docs/starpu.md). Library libmapopt-starpu, built when StarPU is found.
 *
 * A program loads a mapper file for the machine of its run and asks, for
 * each task it submits, the questions a Legion mapper answers: which MPI
 * rank and which StarPU worker run a task point, on which StarPU memory
 * node a region argument's data lives, and with which layout (order,
 * fields interleaved or not, alignment) the data is registered. Answers
 * follow the DSL's semantics and the defaults of docs/dsl.md exactly as
 * `mapopt sim` applies them, so one mapper file means the same thing to the
 * simulator and to the real run, and a mapping error reads the same.
 *
 * The machine, as the DSL sees it:
 *  - nodes (address spaces) are the MPI ranks; every rank must have the
 *    same workers, as every DSL node is identical;
 *  - CPU processors are the rank's StarPU CPU workers, local index i being
 *    the i-th CPU worker (starpu_worker_get_by_type); GPU processors are its
 *    CUDA workers; OMP, IO, PY and PROC have no StarPU counterpart and have
 *    no processors, so a `Task` list falls through them (docs/dsl.md);
 *  - SYSMEM is StarPU's main RAM (memory node STARPU_MAIN_RAM); SOCKMEM is
 *    the NUMA memory node of the worker (one socket per StarPU NUMA node;
 *    with a single NUMA node it is main RAM too); FBMEM is a CUDA worker's
 *    own memory node; ZCMEM exists only with GPUs and is main RAM accessed
 *    in place (STARPU_SPECIFIC_NODE_CPU); RDMEM does not exist.
 *
 * Every query is deterministic, so each rank of an MPI program computes the
 * same placement for every task on its own. Queries may run concurrently
 * from any number of threads, each with its own diagnostics list.
 */
#ifndef MAPOPT_STARPU_H
#define MAPOPT_STARPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <starpu.h>

#include "mapopt/core.h"
#include "mapopt/dsl.h"
#include "mapopt/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Processors of one kind per rank that the machine description holds. */
#define MAPOPT_STARPU_MAX_WORKERS STARPU_NMAXWORKERS
/* Words of a worker bit set (the layout of STARPU_TASK_WORKERIDS). */
#define MAPOPT_STARPU_MASK_WORDS ((STARPU_NMAXWORKERS + 31) / 32)

/*
 * The machine of one run. Filled by mapopt_starpu_machine_detect from the
 * running StarPU, or by hand (tests, what-ifs). cpu_worker[i] is the StarPU
 * worker id of CPU processor i, cpu_node[i] its memory node (its NUMA node);
 * likewise for the CUDA workers.
 */
typedef struct mapopt_starpu_machine {
  int ranks; /* MPI ranks: the DSL's nodes */
  int ncpus; /* CPU workers per rank */
  int ngpus; /* CUDA workers per rank */
  int nnuma; /* NUMA memory nodes per rank (the DSL's sockets), >= 1 */
  int cpu_worker[MAPOPT_STARPU_MAX_WORKERS];
  int cpu_node[MAPOPT_STARPU_MAX_WORKERS];
  int gpu_worker[MAPOPT_STARPU_MAX_WORKERS];
  int gpu_node[MAPOPT_STARPU_MAX_WORKERS];
} mapopt_starpu_machine;

/*
 * Describes this process's StarPU workers, for a run of ranks MPI ranks
 * (starpu_mpi_world_size(), or 1 without MPI). StarPU must be initialized.
 * MPI programs should check that every rank found the same counts, since
 * the DSL assumes identical nodes. MAPOPT_EINVAL when ranks < 1.
 */
MAPOPT_API mapopt_status
mapopt_starpu_machine_detect(int ranks, mapopt_starpu_machine *out);

/*
 * The DSL's view of m (what Machine(K) and point.has(M) see). MAPOPT_EINVAL
 * when a count is out of range (ranks < 1, nnuma < 1, a count above
 * MAPOPT_STARPU_MAX_WORKERS or no worker at all).
 */
MAPOPT_API mapopt_status mapopt_starpu_machine_shape(
    const mapopt_starpu_machine *m, mapopt_machine_shape *shape);

/* ---- loading a mapper ---------------------------------------------------- */

typedef struct mapopt_starpu mapopt_starpu;

typedef struct mapopt_starpu_options {
  /* The application's declared default order (docs/apps.md
   * `default_order`): true for C_order. */
  bool c_order_default;
  /* Fall back to the default kind order when a Task list names no usable
   * kind, as the reference mapper does; false (the simulator's default)
   * makes that a mapping error. */
  bool lenient_kinds;
  /* Receives the mapper's print output; NULL discards it. */
  mapopt_print_fn print;
  void *print_ud;
  /* The program's tasks and their region arguments, optional: with them
   * the mapper's unknown task and region names are warned about (W11,
   * W12). Only read while compiling. */
  const mapopt_task_info *tasks;
  size_t ntasks;
} mapopt_starpu_options;

/*
 * Reads and compiles the mapper file path for machine m (opts may be NULL
 * for the defaults). Diagnostics -- warnings, then the first error -- are
 * appended to diags, located in path. Returns MAPOPT_OK and the mapper in
 * *out (free it with mapopt_starpu_free); MAPOPT_EIO when the file cannot
 * be read, MAPOPT_ESYNTAX or MAPOPT_ELOAD as mapopt_dsl_compile does,
 * MAPOPT_EINVAL for a bad machine, MAPOPT_ENOMEM. m and opts are copied.
 */
MAPOPT_API mapopt_status mapopt_starpu_load(mapopt_ctx *ctx, const char *path,
                                            const mapopt_starpu_machine *m,
                                            const mapopt_starpu_options *opts,
                                            mapopt_diags *diags,
                                            mapopt_starpu **out);

/* The same from mapper text of len bytes, named file in diagnostics. */
MAPOPT_API mapopt_status mapopt_starpu_compile(
    mapopt_ctx *ctx, const char *file, const char *text, size_t len,
    const mapopt_starpu_machine *m, const mapopt_starpu_options *opts,
    mapopt_diags *diags, mapopt_starpu **out);

/* Frees s and the codelets mapopt_starpu_codelet made (none may still be
 * in use by a task). NULL is ignored. */
MAPOPT_API void mapopt_starpu_free(mapopt_starpu *s);

/* The compiled program, for the policy queries of mapopt/dsl.h that need
 * no StarPU translation (mapopt_policy_collect, _instance_limit). Owned by
 * s. */
MAPOPT_API const mapopt_program *mapopt_starpu_program(const mapopt_starpu *s);

/* The processor kinds a codelet has implementations for, as the variants
 * bit set of the queries below: CPU for cpu_funcs, GPU for cuda_funcs. */
MAPOPT_API unsigned
mapopt_starpu_codelet_variants(const struct starpu_codelet *cl);

/* ---- where a task runs --------------------------------------------------- */

/*
 * A placement: the processor kind, the rank, the processor's local index
 * among that rank's workers of the kind, and its StarPU worker id there
 * (for STARPU_EXECUTE_ON_NODE rank, STARPU_EXECUTE_ON_WORKER worker).
 * workers is the set of allowed workers, as the bit set
 * STARPU_TASK_WORKERIDS takes: one bit for a single processor, several
 * when a SingleTaskMap function returns a point set (the scheduler then
 * runs the task on whichever member is free first).
 */
typedef struct mapopt_starpu_place {
  mapopt_proc_kind kind;
  int rank;
  int proc;
  int worker;
  uint32_t workers[MAPOPT_STARPU_MASK_WORDS];
} mapopt_starpu_place;

/*
 * Places point (dims coordinates, 0 <= point[d] < extents[d]) of an index
 * launch of task, whose codelet has variants (bit 1u << mapopt_proc_kind):
 * the kind from the Task list (first usable kind, else the default order
 * GPU, OMP, CPU), then the IndexTaskMap function for the task, its kind or
 * `*`, else the default placement (blocked over ranks, then over workers).
 * A mapping error -- the DSL's (index out of bound, kind mismatch, type
 * errors...) or "Invalid policy: task T requested K, but has no valid task
 * variant for the kind" -- is appended to diags as the simulator prints it
 * and MAPOPT_EMAP returned; MAPOPT_EINVAL for bad arguments (dims outside
 * 1..3, a point outside extents); MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_starpu_place_index(
    mapopt_starpu *s, const char *task, unsigned variants, int dims,
    const int64_t *point, const int64_t *extents, mapopt_diags *diags,
    mapopt_starpu_place *out);

/*
 * Places a single task. parent is the task that launches it (its ref's
 * proc gives the parent's rank), or NULL when the program's top level
 * launches it, which the DSL treats as a task on rank 0. The SingleTaskMap
 * function decides the processor on the parent's rank; without one, a
 * task of the top level gets processor 0 and a deeper one the next
 * processor round-robin (one counter per rank and kind, advanced in call
 * order, so every rank must make the same calls in the same order). An
 * answer on another rank fails with "Assertion failed: single task must
 * stay on its parent's node". Errors as mapopt_starpu_place_index.
 */
MAPOPT_API mapopt_status
mapopt_starpu_place_single(mapopt_starpu *s, const char *task,
                           unsigned variants, const mapopt_task_ref *parent,
                           mapopt_diags *diags, mapopt_starpu_place *out);

/* ---- where data lives and how it is laid out ----------------------------- */

/*
 * The memory of one region argument (keys: its names and position, as in
 * the application model) of task run at where: its DSL kind, the StarPU
 * memory node on where->rank that holds it, and the node to put in
 * starpu_codelet.nodes[] for it (STARPU_SPECIFIC_NODE_LOCAL when it is the
 * worker's own memory node, which is StarPU's behaviour without
 * specific_nodes). VIRTUAL has no StarPU meaning -- every StarPU task is a
 * leaf -- and fails with "Invalid mapper output: virtual mapping requested
 * for region requirement R of leaf task T" (MAPOPT_EMAP, in diags).
 */
typedef struct mapopt_starpu_memory {
  mapopt_mem_kind kind;
  int node;
  int codelet_node;
} mapopt_starpu_memory;

MAPOPT_API mapopt_status mapopt_starpu_memory_of(
    const mapopt_starpu *s, const char *task, const mapopt_region_keys *keys,
    const mapopt_starpu_place *where, mapopt_diags *diags,
    mapopt_starpu_memory *out);

/* The resolved layout of that argument in memory mem (Layout statements,
 * then the defaults: SOA, the application's order, no alignment). */
MAPOPT_API void mapopt_starpu_layout_of(
    const mapopt_starpu *s, const char *task, const mapopt_region_keys *keys,
    const mapopt_starpu_place *where, mapopt_mem_kind mem, mapopt_layout *out);

/*
 * The storage of a dense region piece of dims index dimensions (extents
 * per dimension, dimension 0 being the DSL's X) with nfields fields of
 * elem_bytes each, under layout: the element strides to use in a kernel
 * and the StarPU interface to register it with. Storage dimensions, from
 * fastest to slowest, follow docs/dsl.md's table: SOA F_order X, Y, ..., F;
 * SOA C_order ..., Y, X, F; AOS puts F first. A single field has no F
 * dimension (AOS is SOA). align is the allocation alignment in bytes that
 * meets the layout's Align constraint: the smallest power of two from 16
 * up that satisfies it, else the largest below 16 that does (0: no
 * constraint, or none can be met). Compact and Exact change nothing for a
 * dense piece. MAPOPT_EINVAL when dims is outside 1..3, a count is not
 * positive, or the storage would need more than 3 dimensions (StarPU's block
 * interface), MAPOPT_ERANGE when the size overflows.
 */
typedef struct mapopt_starpu_geometry {
  int nstorage;        /* storage dimensions: 1 vector, 2 matrix, 3 block */
  int storage[3];      /* what storage dimension k holds: index dimension
                          0..dims-1, or -1 for the field dimension */
  uint32_t n[3];       /* extents of the storage dimensions, fastest first */
  uint32_t ld[3];      /* ld[0] = 1; ld[k]: elements between steps of dim k */
  size_t stride[3];    /* element stride of each index dimension */
  size_t field_stride; /* elements between field f and f + 1 (0: 1 field) */
  size_t elements;     /* total elements (all fields) */
  size_t elem_bytes;   /* bytes of one element of one field */
  size_t align;        /* allocation alignment in bytes; 0: any */
} mapopt_starpu_geometry;

MAPOPT_API mapopt_status mapopt_starpu_geometry_of(
    const mapopt_layout *layout, int dims, const int64_t *extents, int nfields,
    size_t elem_bytes, mapopt_starpu_geometry *out);

/*
 * Registers the piece stored at ptr (NULL with home_node -1 on a rank that
 * holds no copy) with the StarPU interface g calls for: vector, matrix (nx =
 * n[0], ny = n[1], ld = ld[1]) or block (ldy = ld[1], ldz = ld[2]). StarPU
 * must be initialized.
 */
MAPOPT_API void mapopt_starpu_register(starpu_data_handle_t *handle,
                                       int home_node, void *ptr,
                                       const mapopt_starpu_geometry *g);

/*
 * The codelet to submit a task with when its buffers must live on nodes[i]
 * (codelet_node values of mapopt_starpu_memory_of, one per buffer of the
 * task, nbuffers of them): base itself when all are
 * STARPU_SPECIFIC_NODE_LOCAL, otherwise a copy of base with specific_nodes
 * set, made once per distinct node list and owned by s. MAPOPT_EINVAL when
 * nbuffers exceeds STARPU_NMAXBUFS, MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_starpu_codelet(mapopt_starpu *s,
                                               struct starpu_codelet *base,
                                               int nbuffers, const int *nodes,
                                               struct starpu_codelet **out);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_STARPU_H */
