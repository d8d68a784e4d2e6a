/*
 * Internal header of the simulator: the rank-split rule (setup.c), the
 * mapping-independent dependence graph (dag.c), the cost formulas shared
 * by the engine and the lower bound (cost.c) and the lower bound
 * (bound.c). The engine's own state is in engine.h.
 */
#ifndef MAPOPT_SRC_SIM_SIM_H
#define MAPOPT_SRC_SIM_SIM_H

#include "core/core.h"
#include "mapopt/sim.h"

/* ---- setup (setup.c) ----------------------------------------------------- */

/* Ranks per node of run on machine: the app's split, else the machine's
 * (docs/machines.md, "Naming a machine"); at least 1. The only place this rule
 * is made. */
int64_t mapopt__sim_ranks(const mapopt_machine *machine,
                          const mapopt_app_run *run);

/* ---- results (resmem.c) -------------------------------------------------- */

/* A new, empty result that mapopt_sim_result_free frees; NULL on ENOMEM. */
mapopt_sim_result *mapopt__sim_result_new(mapopt_ctx *ctx);
/* A copy of str owned by res (freed with it), so names outlive the run or
 * the report they came from; NULL on ENOMEM. */
const char *mapopt__sim_result_string(mapopt_sim_result *res, const char *str);
/* n zeroed entries of size bytes owned by res (freed with it): the lists
 * of a task's or a decision's arguments; NULL on ENOMEM (or n == 0). */
void *mapopt__sim_result_alloc(mapopt_sim_result *res, size_t n, size_t size);

/* ---- dependence analysis ------------------------------------------------- */

/* How a version of an (atom, field) was produced. */
typedef enum mapopt__vkind_sim {
  VER_NONE,     /* never written: nothing to copy */
  VER_WRITE,    /* by a RW or WD task: producer is that op */
  VER_FILL,     /* by a fill op: materialized on demand at the reader */
  VER_REDUCTION /* base version plus the folds of a closed reduction set */
} mapopt__ver_kind;

/* The DAG's and the plan's indices (ops, requirements, versions, atoms and
 * positions in their lists) are 32-bit: that halves the plan, whose memory
 * is mostly fresh when it is built, and on the machines of docs/sim.md,
 * "Benchmarks", first-touched memory is most of a plan's build. A run
 * whose lists would not fit is refused (MAPOPT_EINVAL). */
enum { MAPOPT__SIM_INDEX_MAX = INT32_MAX };

/* An (atom, field) index, the atoms' fields in order (the DAG's af_off),
 * fits a version in 30 bits: a run with more is refused (MAPOPT_EINVAL). */
enum { MAPOPT__SIM_AF_MAX = (1 << 30) - 1 };

/* One version of one (atom, field): 8 bytes, two or so per op. What only
 * a reduction version has is in a set of its own (mapopt__red_set): few
 * versions are reductions, and every version is in the plan's memory and
 * read as the simulation publishes and copies data. */
typedef struct mapopt__version {
  uint32_t af : 30;  /* its (atom, field) */
  uint32_t kind : 2; /* mapopt__ver_kind */
  union {
    int32_t producer; /* VER_WRITE, VER_FILL: the op */
    int32_t red_set;  /* VER_REDUCTION: its set in the DAG's red_sets */
  };
} mapopt__version;
_Static_assert(sizeof(mapopt__version) == 8 && VER_REDUCTION < 4,
               "a version is 8 bytes, its kind 2 bits");

/* A closed reduction set: the version it reduces into and its reducers. */
typedef struct mapopt__red_set {
  int32_t base;    /* version id of the base */
  int32_t red_off; /* reducers[red_off .. red_off + nred) */
  int32_t nred;
} mapopt__red_set;

/*
 * The logical DAG and the versions each requirement needs. Requirement j of
 * op i is flattened as req_off[i] + j. For requirement q, need[need_off[q]
 * + a * nf + k] is the version id needed for atom a of its piece and the
 * k-th field set in its mask (nf fields), or -1 (WD, REDUCE, inner, never
 * written). raw[raw_off[q] .. raw_off[q+1]) are the ops whose completion
 * makes those versions available (writers, fills, reducers), deduplicated.
 */
typedef struct mapopt__sim_dag {
  int64_t nops;
  /* The (atom, field) pairs, each atom's fields in order: atom -> its
   * first (natoms + 1), and back (naf). */
  int64_t *af_off;
  int32_t *af_atom;
  int64_t naf;
  int32_t *pred_off; /* nops + 1 */
  int32_t *preds;
  int32_t *req_off; /* nops + 1 */
  int64_t nreqs;
  /* Per requirement: its piece's id and its privilege (mapopt_priv). The
   * result's passes over every requirement of the timed work read these
   * instead of the app run's op, requirement and piece (three cache lines
   * apart); the analysis reads those anyway, so it fills them. */
  int32_t *req_piece;
  uint8_t *req_priv;
  /* Per requirement: 1 when a version it needs is a reduction's (its folds
   * are planned as its reducers complete, engine.c). */
  uint8_t *reads_reduction;
  int32_t *need_off; /* nreqs + 1 */
  int32_t *need;
  /* Per requirement: the ops that produced the versions it needs (RAW),
   * raw[raw_off[q] .. raw_off[q + 1]). The lists are in the builder's
   * arena and gone once the plan is built: the simulation counts them
   * down from their lengths, and the plan keeps their inverse (rawsucc). */
  int32_t *raw_off; /* nreqs + 1 */
  int32_t *raw;
  int64_t nversions;
  mapopt__version *versions;
  /* nops + 1: the versions made while op i was analysed are ver_off[i] ..
   * ver_off[i + 1] -- its writes and fills (producer i) and the reduction
   * versions its reads closed, which it does not produce. */
  int32_t *ver_off;
  mapopt__red_set *red_sets;
  int32_t *reducers; /* ops */
} mapopt__sim_dag;

/* The reduction set of version v, which is VER_REDUCTION. */
static inline const mapopt__red_set *
mapopt__sim_red_set(const mapopt__sim_dag *dag, int64_t v) {
  return &dag->red_sets[dag->versions[v].red_set];
}

/* Builds the DAG of run in arena, the RAW lists in build (which must
 * outlive their use). MAPOPT_ENOMEM on failure, MAPOPT_EINVAL when a list
 * would outgrow MAPOPT__SIM_INDEX_MAX. */
mapopt_status mapopt__sim_dag_build(mapopt__arena *arena, mapopt__arena *build,
                                    const mapopt_app_run *run,
                                    mapopt__sim_dag *dag);

/* ---- costs ------------------------------------------------------------- */

/* ceil(a * b / c) for non-negative operands, saturating at INT64_MAX. */
int64_t mapopt__muldiv_ceil(int64_t a, int64_t b, int64_t c);

/* Duration of a copy of bytes on a path whose slowest bandwidth is bw_mbps:
 * lat + ceil(bytes * 1000 / bw). */
int64_t mapopt__sim_copy_ns(int64_t bytes, int64_t bw_mbps, int64_t lat_ns);

/* Inputs of the task-time formula for one leaf op on one processor. */
typedef struct mapopt__task_cost_in {
  const mapopt_machine *machine;
  const mapopt_app_run *run;
  int64_t op;
  int variant;                 /* index into the task's variants */
  const mapopt_mem_kind *mems; /* per requirement: its instance's memory */
  const int64_t *layout_ppm;   /* per requirement: L_r in ppm (NULL: 1) */
  int64_t noise_ppm;           /* 0: no noise */
  uint64_t seed;
} mapopt__task_cost_in;

/* T's parts, noise left out: the fixed cost (the kind's overhead and the
 * variant's fixed time), the compute that bounds the kernel (C when it is
 * at least sum M, else 0), and its memory access (sum M when that bounds
 * it, plus sum G). They add up to T without noise. */
typedef struct mapopt__task_cost_parts {
  int64_t overhead, compute, memory;
} mapopt__task_cost_parts;

/* Outputs: total T and, per requirement, M_r and G_r, and T's parts (each
 * may be NULL). */
int64_t mapopt__sim_task_ns(const mapopt__task_cost_in *in, int64_t *mem_ns,
                            int64_t *access_ns, mapopt__task_cost_parts *parts);

/* The last inputs of a leaf formula and its noise-free results. The points
 * of a launch, and the launches of one statement, mostly price the same
 * inputs: a caller keeps one memo per task, and the formula runs again
 * only when an input differs (ops of more than MAPOPT__TASK_COST_MEMO_REQS
 * requirements always run it). */
enum { MAPOPT__TASK_COST_MEMO_REQS = 8 };
typedef struct mapopt__task_cost_req {
  mapopt_mem_kind mem;
  int64_t ppm, bytes, gathers, atomics;
  uint64_t fields;
  mapopt_priv priv;
  int region;
} mapopt__task_cost_req;
typedef struct mapopt__task_cost_memo {
  bool valid;
  int variant;
  int64_t fills; /* times the formula ran into it: its inputs' number */
  int64_t flops, fixed, reuse;
  size_t nreqs;
  mapopt__task_cost_req reqs[MAPOPT__TASK_COST_MEMO_REQS];
  int64_t t; /* without noise */
  mapopt__task_cost_parts parts;
  int64_t mem_ns[MAPOPT__TASK_COST_MEMO_REQS];
  int64_t access_ns[MAPOPT__TASK_COST_MEMO_REQS];
} mapopt__task_cost_memo;

/* mapopt__sim_task_ns through memo (zeroed before first use): the same
 * results, noise applied to this op. *state (if not NULL): the memo's
 * fills when its inputs priced the op, -1 when the formula ran outside it.
 * Two ops of one task priced with one memo's equal state had equal
 * inputs, so equal noise-free results. */
int64_t mapopt__sim_task_ns_memo(mapopt__task_cost_memo *memo,
                                 const mapopt__task_cost_in *in,
                                 int64_t *mem_ns, int64_t *access_ns,
                                 mapopt__task_cost_parts *parts,
                                 int64_t *state);

/*
 * L_r in ppm for requirement r of op under a layout (the layout factor of
 * docs/sim.md, "How it models a run", preferences included; requirements are
 * checked elsewhere). fields_in_instance: the mask of fields the instance
 * holds.
 */
int64_t mapopt__sim_layout_ppm(const mapopt_app_run *run, int64_t op,
                               int variant, int r, const mapopt_layout *layout,
                               uint64_t fields_in_instance);

/*
 * Best-case cost c(p, k) of docs/sim.md, "The lower bound": op on kind k with
 * every requirement in the fastest memory k has affinity to, the best layout,
 * no noise. -1 when the op's task has no variant of kind k (or k has no
 * processors).
 */
int64_t mapopt__sim_best_cost(const mapopt_machine *machine,
                              const mapopt_app_run *run, int64_t op,
                              mapopt_proc_kind k);

/*
 * c(p, k) with requirement r of op in memory kind mem and the others in
 * their best memories: a lower bound on T whenever r's instance is in mem.
 * -1 when c(p, k) is, or when k cannot reach mem.
 */
int64_t mapopt__sim_best_cost_in(const mapopt_machine *machine,
                                 const mapopt_app_run *run, int64_t op,
                                 mapopt_proc_kind k, size_t r,
                                 mapopt_mem_kind mem);

/*
 * Processors of kind k in the whole machine as the engine models them:
 * nodes x ranks x the per-rank count of ranks_per_node (ranks: the run's
 * ranks_per_node, else the machine's). 0 when k has none.
 */
int64_t mapopt__sim_proc_total(const mapopt_machine *machine,
                               const mapopt_app_run *run, mapopt_proc_kind k);

/*
 * The lower bound (docs/sim.md, "The lower bound") over the ops of the timed
 * window (window mode) or summed over the timed repetitions (fenced mode), into
 * *out. Scratch memory comes from ctx and is freed before returning.
 * MAPOPT_ENOMEM on allocation failure (*out untouched).
 */
mapopt_status mapopt__sim_lower_bound(mapopt_ctx *ctx,
                                      const mapopt_machine *machine,
                                      const mapopt_app_run *run,
                                      const mapopt__sim_dag *dag, int64_t *out);

#endif /* MAPOPT_SRC_SIM_SIM_H */
