/*
 * mapopt app: the application model (docs/apps.md): regions with fields
 * and atoms, partitions into pieces, tasks with variants and cost
 * formulas, and a program of launches, loops, fills and fences.
 *
 * Two levels:
 *  - mapopt_app: a loaded model (`mapopt-app/1` JSON, or a built-in), with
 *    parameters still symbolic;
 *  - mapopt_app_run: the model instantiated for one run -- parameters and
 *    size fixed, every expression evaluated, every loop unrolled and every
 *    inner task's body expanded -- as the flat list of ops in canonical
 *    order (program order, a child launch inside its parent's position,
 * depth first). It is mapping-independent, so one
 *    instance is shared read-only by any number of simulations.
 * The structs of a run are public for reading; they are owned by the run.
 * Other modules walk its arrays through the getters of "the narrow view".
 */
#ifndef MAPOPT_APP_H
#define MAPOPT_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/core.h"
#include "mapopt/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MAPOPT_APP_MAX_DIMS 3
#define MAPOPT_APP_MAX_FIELDS 64
/* Arguments (requirements) of one launch, so of one op: the simulator keeps
 * a bit per requirement position in 64-bit masks and packs a position into
 * 6 bits beside an op's index (src/sim/engine.h, SIM_REQ_BITS). */
#define MAPOPT_APP_MAX_ARGS 64
/* The depth of an expression's tree: operators, calls, conditionals and
 * parentheses together, a flat chain `1+1+...+1` counting one level per
 * operator. Deeper expressions are refused with a located error. */
#define MAPOPT_APP_MAX_EXPR_DEPTH 200
/* The size of one field of one element, in bytes (2^30): the sum over a
 * region's 64 fields then stays far from overflowing. */
#define MAPOPT_APP_MAX_FIELD_BYTES (INT64_C(1) << 30)
/* How deeply statements nest: loops, timed blocks and the bodies of inner
 * tasks launched from them, together. */
#define MAPOPT_APP_MAX_NESTING 64
/* The size of a program with the body of each inner task counted at every
 * launch that reaches it (the static tree the checks and the estimate of a
 * run's size walk; loops count once, not per iteration). */
#define MAPOPT_APP_MAX_STATEMENTS 1000000

typedef struct mapopt_app mapopt_app;

/* ---- the instantiated run ------------------------------------------------ */

typedef struct mapopt_app_region {
  const char *name;
  int nfields;
  const char *const *field_names;
  const int64_t *field_bytes; /* bytes per element of each field */
  int64_t first_atom;         /* its atoms are first_atom .. +natoms-1 */
  int64_t natoms;
} mapopt_app_region;

typedef enum mapopt_priv {
  MAPOPT_PRIV_RO,
  MAPOPT_PRIV_RW,
  MAPOPT_PRIV_WD,
  MAPOPT_PRIV_REDUCE
} mapopt_priv;

/* "RO", "RW", "WD", "REDUCE" (as in `mapopt-app/1`); "RO" when out of
 * range. */
MAPOPT_API const char *mapopt_app_priv_name(mapopt_priv p);

typedef enum mapopt_redop {
  MAPOPT_REDOP_SUM,
  MAPOPT_REDOP_MIN,
  MAPOPT_REDOP_MAX,
  MAPOPT_REDOP_PROD
} mapopt_redop;

/* One atom of a piece, with the number of its elements the piece covers
 * (== the atom's size: the whole atom; less: a partial, aliased overlap). */
typedef struct mapopt_app_piece_atom {
  int64_t atom;
  int64_t count;
} mapopt_app_piece_atom;

/* A partition's colour space: dims extents (1 for a group partition). */
typedef struct mapopt_app_colors {
  int dims;
  int64_t extents[MAPOPT_APP_MAX_DIMS];
} mapopt_app_colors;

/* A piece: what one requirement touches. Pieces are shared between the ops
 * that use the same (partition, colour); id is unique in the run. */
typedef struct mapopt_app_piece {
  int64_t id;
  int region;
  int partition; /* index into run->partition_names; -1: the whole region */
  int64_t color; /* linearized colour, dimension 0 fastest */
  size_t natoms;
  const mapopt_app_piece_atom *atoms; /* sorted by atom id, no duplicates */
  int64_t elements;                   /* sum of the counts */
} mapopt_app_piece;

/* A region requirement of an op. */
typedef struct mapopt_app_req {
  const mapopt_app_piece *piece;
  uint64_t fields; /* bit f: field f of the piece's region */
  mapopt_priv priv;
  mapopt_redop redop; /* REDUCE only */
  bool simultaneous;  /* coherence */
  /* Mapper-visible names in key order (partition, aliases, root region);
   * the position (the requirement's index in the op) follows them. */
  const char *const *names;
  size_t nnames;
  int64_t bytes;   /* bytes the task moves through it */
  int64_t gathers; /* random element reads */
  int64_t atomics; /* random atomic updates */
} mapopt_app_req;

typedef enum mapopt_layout_error {
  MAPOPT_LAYOUT_ERROR_STRIDE, /* "stride does not match expected value" */
  MAPOPT_LAYOUT_ERROR_DGEMM   /* "DGEMM parameter number 8 ..." */
} mapopt_layout_error;

/* A layout requirement or preference of a variant on some arguments. */
typedef struct mapopt_app_layout_rule {
  uint64_t args;         /* bit i: requirement position i */
  mapopt_layout_tri soa; /* UNSET: any */
  mapopt_layout_tri c_order;
  mapopt_layout_error error; /* requirements */
  int64_t penalty_ppm;       /* preferences: factor when violated */
} mapopt_app_layout_rule;

typedef struct mapopt_app_variant {
  mapopt_proc_kind kind;
  bool inner;
  bool f32;    /* precision f32 (else f64) */
  bool matrix; /* use the f64-matrix peak */
  int64_t flops_eff_ppm;
  int64_t mem_eff_ppm;
  size_t nrequires, nprefers;
  const mapopt_app_layout_rule *requires;
  const mapopt_app_layout_rule *prefers;
} mapopt_app_variant;

typedef struct mapopt_app_task {
  const char *name;
  int nvariants;
  const mapopt_app_variant *variants;
  unsigned variant_kinds; /* bit k: a variant of kind k exists */
  bool inner;             /* all variants are inner (it has a body) */
} mapopt_app_task;

typedef enum mapopt_op_kind {
  MAPOPT_OP_TASK, /* a point of an index launch, or a single task */
  MAPOPT_OP_FILL,
  MAPOPT_OP_FENCE,
  MAPOPT_OP_FUTURE_REDUCE /* reduces an index launch's point futures */
} mapopt_op_kind;

/* Where an op stands in the run's timing structure (docs/apps.md, "timing").
 */
typedef struct mapopt_op_timing {
  int64_t iteration;  /* time-step loop iteration (warm-up ones first), -1
                         outside the time-step loop */
  bool timed;         /* in a timed iteration (window mode) or inside a
                         timed block of a timed repetition (fenced mode) */
  bool traced;        /* from the second iteration of a traced loop */
  int fence_role;     /* 1 an execution fence not waited for: the opening
                         fence of a timed block (fenced mode) or the one
                         that opens the window (window mode); 2 the
                         closing fence of a timed block; 0 otherwise */
  int64_t repetition; /* fenced mode: repetition index, else -1 */
} mapopt_op_timing;

typedef struct mapopt_app_op {
  mapopt_op_kind kind;
  int task;       /* TASK: index into run->tasks; else -1 */
  int64_t parent; /* op index of the enclosing inner task, or -1
                     (issued by the top-level task `main`) */
  int64_t launch; /* launch-statement instance: the points of one
                     index launch share it; issue cost is paid once
                     per launch */
  bool is_index;  /* a point of an index launch */
  int dims;       /* index points: launch dimensions */
  int64_t point[MAPOPT_APP_MAX_DIMS];
  int64_t extents[MAPOPT_APP_MAX_DIMS];
  /* Per variant of the task (same order as task->variants). */
  const int64_t *flops;
  const int64_t *fixed_ns;
  /* How many times the kernel uses each element of its operands (the
   * inner dimension of a matrix multiply; 1 for a streaming kernel): what
   * its traffic to memory outside the processor is multiplied by, less
   * the reuse its cache captures (docs/sim.md). */
  const int64_t *reuse;
  size_t nreqs;
  const mapopt_app_req *reqs;
  /* Futures: the one this op produces (-1: none) and those it waits on. */
  int64_t future;
  size_t nwaits;
  const int64_t *waits;
  mapopt_op_timing timing;
} mapopt_app_op;

typedef enum mapopt_timing_mode {
  MAPOPT_TIMING_WINDOW,
  MAPOPT_TIMING_FENCED
} mapopt_timing_mode;

typedef struct mapopt_app_run {
  const char *name;       /* "circuit" */
  const char *size;       /* "paper", or NULL for a file's defaults */
  bool default_c_order;   /* default_order: C_order */
  int64_t ranks_per_node; /* run configuration; 0: the machine's */
  /* Timing and metric. */
  mapopt_timing_mode timing;
  bool metric_gflops;
  bool per_node;
  int64_t flops_per_iteration; /* gflops metric */
  const char *log_style;       /* "regent-time", "circuit", "distal", or NULL */
  /* The settings line the application's log prints first ("log_settings" of
   * "timing", its expressions evaluated; no newline), or NULL. */
  const char *log_settings;
  int64_t iterations_warmup, iterations_timed;
  /* The model. */
  int nregions;
  const mapopt_app_region *regions;
  int64_t natoms;
  const int *atom_region;       /* per atom */
  const int64_t *atom_elements; /* per atom */
  int npartitions;
  const char *const *partition_names;
  /* Each partition's colour space (a piece's colour is linearized over
   * it, dimension 0 fastest). */
  const mapopt_app_colors *partition_colors;
  int64_t npieces;
  const mapopt_app_piece *pieces;
  int ntasks;
  const mapopt_app_task *tasks;
  int64_t nfutures;
  /* The ops, in canonical order. */
  int64_t nops;
  const mapopt_app_op *ops;
  /* Parameters after overrides, for the log's settings line. */
  size_t nparams;
  const char *const *param_names;
  const int64_t *param_values;
} mapopt_app_run;

/* ---- the narrow view of a run -------------------------------------------- */

/*
 * Modules other than app and sim read a run's arrays only through these
 * getters (docs/architecture.md, "The narrow view of a run"; style/access
 * checks it). Each returns a pointer into the run, valid while it lives.
 *
 * The convention, the same as the simulation result's getters
 * (mapopt/sim.h): a NULL object or an index outside [0, count) is the
 * caller's bug. It asserts in a debug build and yields NULL (0 for a size)
 * in a release one. Why: the callers are this project's modules and tests,
 * which loop to a count they read from the same object, so an index past
 * the end is never data, always a bug; a silent NULL would move the
 * failure to a later dereference or hide it, where the assertion names the
 * call; in a release build the NULL still keeps a bug from reading outside
 * the run. The one iteration by position, mapopt_app_run_param, ends with
 * false past the last parameter (not a bug: its callers have no count).
 */
MAPOPT_API int64_t mapopt_app_run_nops(const mapopt_app_run *run);
MAPOPT_API const mapopt_app_op *mapopt_app_run_op(const mapopt_app_run *run,
                                                  int64_t i);
/* The op's enclosing inner task's op; NULL when `main` issued it. */
MAPOPT_API const mapopt_app_op *mapopt_app_op_parent(const mapopt_app_run *run,
                                                     const mapopt_app_op *op);
MAPOPT_API const mapopt_app_req *mapopt_app_op_req(const mapopt_app_op *op,
                                                   size_t j);
MAPOPT_API const mapopt_app_task *mapopt_app_run_task(const mapopt_app_run *run,
                                                      int t);
/* The task an op launches; NULL for a fill, fence or future reduction. */
MAPOPT_API const mapopt_app_task *mapopt_app_op_task(const mapopt_app_run *run,
                                                     const mapopt_app_op *op);
/* The name of task t. */
MAPOPT_API const char *mapopt_app_task_name(const mapopt_app_run *run, int t);
MAPOPT_API const mapopt_app_variant *
mapopt_app_task_variant(const mapopt_app_task *task, int v);
MAPOPT_API const mapopt_app_layout_rule *
mapopt_app_variant_require(const mapopt_app_variant *var, size_t k);
MAPOPT_API const mapopt_app_region *
mapopt_app_run_region(const mapopt_app_run *run, int r);
/* The region of the piece a requirement touches. */
MAPOPT_API const mapopt_app_region *
mapopt_app_req_region(const mapopt_app_run *run, const mapopt_app_req *req);
MAPOPT_API const char *mapopt_app_region_field_name(const mapopt_app_region *r,
                                                    int f);
MAPOPT_API int64_t mapopt_app_region_field_bytes(const mapopt_app_region *r,
                                                 int f);
MAPOPT_API int64_t mapopt_app_run_atom_elements(const mapopt_app_run *run,
                                                int64_t a);
MAPOPT_API const mapopt_app_piece_atom *
mapopt_app_piece_atom_at(const mapopt_app_piece *piece, size_t k);
/* Mapper-visible name k of a requirement (key order). */
MAPOPT_API const char *mapopt_app_req_name(const mapopt_app_req *req, size_t k);
MAPOPT_API const char *mapopt_app_run_partition_name(const mapopt_app_run *run,
                                                     int p);
MAPOPT_API const mapopt_app_colors *
mapopt_app_run_partition_colors(const mapopt_app_run *run, int p);
/* Parameter i after overrides; false past the last. */
MAPOPT_API bool mapopt_app_run_param(const mapopt_app_run *run, size_t i,
                                     const char **name, int64_t *value);

/* ---- loading and instantiating ------------------------------------------- */

/*
 * Loads a `mapopt-app/1` model from JSON text, validating its structure
 * (docs/apps.md, "The format, key by key"). On success *out is owned by the
 * caller (mapopt_app_free). Errors: MAPOPT_EINVAL for a NULL argument, or with
 * every problem as a located error diagnostic (FILE:LINE:COL);
 * MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_app_load_json(mapopt_ctx *ctx, const char *file,
                                              const char *text, size_t len,
                                              mapopt_diags *diags,
                                              mapopt_app **out);
MAPOPT_API void mapopt_app_free(mapopt_app *app);

/* The machine facts that run-configuration formulas may use. */
typedef struct mapopt_app_machine {
  int64_t nodes;
  int64_t gpus;  /* per node */
  int64_t ranks; /* per node */
} mapopt_app_machine;

typedef struct mapopt_app_options {
  /* A size name, then comma-separated param=value overrides
   * ("paper", "small,check=0", "n=4096,gx=2"); NULL: the model's params. */
  const char *spec;
  int64_t iterations; /* timed iterations; < 0: the model's nominal count */
  int64_t warmup;     /* < 0: the model's, at most 2 in window timing */
  /* Refuse a run whose estimated op count or memory exceeds these (0: the
   * defaults below), before allocating it. mapopt_sim_instantiate counts
   * against max_bytes what simulating the run takes too (its plan and the
   * engine's state), not only the run. */
  int64_t max_ops;
  int64_t max_bytes;
} mapopt_app_options;
#define MAPOPT_APP_DEFAULT_MAX_OPS INT64_C(10000000)
#define MAPOPT_APP_DEFAULT_MAX_BYTES (INT64_C(4) << 30)

/*
 * Instantiates a run: applies size and overrides, evaluates every expression
 * (int64; overflow and division by zero are MODEL errors), validates the model
 * (projections inside colour spaces, writes through whole atoms only, ...) and
 * expands the program. On success *out is owned by the caller
 * (mapopt_app_run_free); it does not point into app. Errors: MAPOPT_EINVAL for
 * a NULL argument, or with a located error diagnostic for any of the problems
 * above or a run larger than opts->max_ops or max_bytes; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_app_instantiate(const mapopt_app *app,
                                                const mapopt_app_options *opts,
                                                const mapopt_app_machine *mach,
                                                mapopt_diags *diags,
                                                mapopt_app_run **out);
MAPOPT_API void mapopt_app_run_free(mapopt_app_run *run);

/* The task names and argument names of a model, for the DSL's W11/W12
 * checks: n entries at *out, owned by app and valid while it lives.
 * Error: MAPOPT_EINVAL when an argument is NULL. */
MAPOPT_API mapopt_status mapopt_app_task_info(const mapopt_app *app,
                                              const mapopt_task_info **out,
                                              size_t *n);

/* Serializes the model as `mapopt-app/1` JSON (loads back to an equal
 * model) into *text, freed with mapopt_text_free. Errors: MAPOPT_EINVAL
 * when an argument is NULL; MAPOPT_ENOMEM. */
MAPOPT_API mapopt_status mapopt_app_to_json(mapopt_ctx *ctx,
                                            const mapopt_app *app, char **text);

/* ---- describing a model -------------------------------------------------- */

MAPOPT_API const char *mapopt_app_name(const mapopt_app *app);
/* Parameter i (name and default value); false past the last. */
MAPOPT_API bool mapopt_app_param(const mapopt_app *app, size_t i,
                                 const char **name, int64_t *value);
/* The name of size preset i; NULL past the last. */
MAPOPT_API const char *mapopt_app_size_name(const mapopt_app *app, size_t i);

/* ---- built-in applications ----------------------------------------------- */

/* The names of the built-in applications, NULL-terminated. */
MAPOPT_API const char *const *mapopt_app_builtins(void);
/* The `mapopt-app/1` JSON of a built-in application, or NULL. */
MAPOPT_API const char *mapopt_app_builtin_json(const char *name);
/* The text of a shipped mapper of a built-in application ("expert",
 * "default", "alt-reverse-gpu"), or NULL. */
MAPOPT_API const char *mapopt_app_builtin_mapper(const char *app,
                                                 const char *mapper);

/*
 * Resolves an application argument as the CLI accepts it: a built-in name
 * with an optional size and overrides after ':' ("circuit",
 * "cannon:n=4096,gx=2,gy=2"), or the path of a JSON file (also with an
 * optional ":spec" suffix when the path itself has no ':'). Loads the
 * model into *out and points *spec at the part after ':' inside arg (NULL
 * when there is none); *out is owned by the caller (mapopt_app_free).
 * Errors, each with a diagnostic: MAPOPT_ENOTFOUND for an unknown name,
 * MAPOPT_EIO for an unreadable file, MAPOPT_EINVAL for a bad model;
 * MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_app_resolve(mapopt_ctx *ctx, const char *arg,
                                            mapopt_diags *diags,
                                            mapopt_app **out,
                                            const char **spec);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_APP_H */
