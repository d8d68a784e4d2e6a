/*
 * mapopt sim: the discrete-event simulator (docs/sim.md, "How it models a
 * run"). It runs an instantiated application (mapopt_app_run) on a machine
 * model under a mapper (a loaded mapopt_program) and reports what a real run
 * reports: the elapsed time and metric, or the error that a real runtime would
 * print, plus a profile, a raw log, an optional Chrome trace, and a lower bound
 * on the elapsed time.
 *
 * Simulated time is integer nanoseconds and every tie is broken by a
 * sequence number, so the same inputs give byte-identical outputs.
 * mapopt_sim_run only reads the machine, the run and the program: any
 * number of simulations may run at once on shared inputs.
 */
#ifndef MAPOPT_SIM_H
#define MAPOPT_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/app.h"
#include "mapopt/core.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Progress of a simulation, for a progress display: the operations
 * completed and in all, and the simulated time. */
typedef void (*mapopt_sim_progress_fn)(void *ud, int64_t ops_done, int64_t ops,
                                       int64_t now_ns);

/* The longest simulated time a run may reach, 10^18 ns (about 32 years):
 * a larger time_limit_ns is taken as this. Simulated times saturate at
 * INT64_MAX, beyond it, so a task or copy too long to represent ends the
 * run with a TIMEOUT instead of wrapping the clock. */
#define MAPOPT_SIM_MAX_TIME_NS INT64_C(1000000000000000000)
/* The simulated time a run may reach when time_limit_ns is 0: an hour. */
#define MAPOPT_SIM_DEFAULT_TIME_LIMIT_NS INT64_C(3600000000000)

typedef struct mapopt_sim_options {
  uint64_t seed;
  int64_t time_limit_ns; /* 0: MAPOPT_SIM_DEFAULT_TIME_LIMIT_NS; at most
                          MAPOPT_SIM_MAX_TIME_NS */
  double noise;          /* relative jitter amplitude, 0..0.5 */
  bool lenient_kinds;
  bool no_backpressure_errors;    /* backpressure_errors = false */
  bool instance_fields_requested; /* instance_fields = requested */
  bool trace;                     /* fill result->trace */
  int64_t max_events;             /* event budget; 0: 10^9 */
  bool record_decisions;          /* fill result->decisions (mapopt show) */
  /* An AOS instance with F order is laid out F, X, Y, ... as the mapping
   * language defines it (docs/dsl.md, "Layout: how instances are laid out"). By
   * default (false) the run fails there, as on Legion under the DSL mapper,
   * which orders it F, Y, Z, ... without X (docs/legion.md). */
  bool mapopt_aos_order;
  /* Called from the simulating thread every 65536 events (NULL: never);
   * it must not call back into the simulation. */
  mapopt_sim_progress_fn progress;
  void *progress_ud;
} mapopt_sim_options;

/* Error classes (docs/sim.md, "The raw log"); NONE on success. */
/* clang-format off */
#define MAPOPT_SIM_ERROR_LIST(X)                                               \
  X(NONE)                                                                      \
  X(MODEL)                                                                     \
  X(POLICY)                                                                    \
  X(NO_VARIANT)                                                                \
  X(LAYOUT)                                                                    \
  X(INDEX)                                                                     \
  X(BACKPRESSURE)                                                              \
  X(OOM)                                                                       \
  X(TIMEOUT)                                                                   \
  X(DEADLOCK)
/* clang-format on */

typedef enum mapopt_sim_error {
#define MAPOPT_SIM_ERROR_ENUM(name) MAPOPT_SIM_##name,
  MAPOPT_SIM_ERROR_LIST(MAPOPT_SIM_ERROR_ENUM)
#undef MAPOPT_SIM_ERROR_ENUM
} mapopt_sim_error;

/* "OOM" for MAPOPT_SIM_OOM. */
MAPOPT_API const char *mapopt_sim_error_name(mapopt_sim_error e);

typedef struct mapopt_sim_proc_stats {
  int64_t node, rank;
  const char *kind; /* "GPU", "CPU", "OMP", "UTIL" */
  int64_t index;
  int64_t busy_ns;
  int64_t tasks;
} mapopt_sim_proc_stats;

typedef struct mapopt_sim_copy_stats {
  int64_t bytes, count, busy_ns;
} mapopt_sim_copy_stats;

/* Channels of the copy statistics: the five of mapopt_channel, then FILL
 * and FOLD. */
#define MAPOPT_SIM_COPY_KINDS (MAPOPT_CHAN_COUNT + 2)

/* "FB_LOCAL" ... "NETWORK", "FILL", "FOLD" for 0 .. MAPOPT_SIM_COPY_KINDS - 1;
 * NULL out of range. */
MAPOPT_API const char *mapopt_sim_copy_kind_name(int k);

typedef struct mapopt_sim_mem_stats {
  int64_t node, rank;
  mapopt_mem_kind kind;
  int64_t index;
  int64_t capacity, peak_bytes, peak_instances;
} mapopt_sim_mem_stats;

/* The two lists of a result that are capped by design, each a "top N":
 * the longest segments of the critical path and the busiest tasks. What
 * does not fit is counted (segments_left_out, top_tasks_left_out), never
 * dropped unsaid. Every other list holds all its entries: a task's
 * requirements (statistics and decisions) are all of its region
 * arguments. */
#define MAPOPT_SIM_MAX_SEGMENTS 10
#define MAPOPT_SIM_MAX_TOP_TASKS 10

typedef struct mapopt_sim_req_stats {
  int index;
  const char *name; /* first mapper-visible name */
  mapopt_mem_kind memory;
  mapopt_layout layout;
  int64_t mem_ns, access_ns;
  int64_t copy_in_bytes[MAPOPT_MEM_KIND_COUNT]; /* per source memory kind */
  /* What AutoGuide needs to explain the numbers above. */
  mapopt_priv priv;
  int fields;         /* fields the argument requests */
  int region_fields;  /* fields of its region */
  int64_t layout_ppm; /* the largest layout factor L_r applied, ppm */
  /* The bytes copied in per channel, indexed like mapopt_sim_result's
   * copies (FOLD: reduction folds into this argument). */
  int64_t copy_in_channel_bytes[MAPOPT_SIM_COPY_KINDS];
  /* The task whose output is the most of the bytes copied in (the writer,
   * or a reducer, of the data each copy moves), with its processor kind
   * and those bytes; NULL when nothing but fills was copied in. */
  const char *producer;
  mapopt_proc_kind producer_kind;
  int64_t producer_bytes;
  /* The largest instance the argument was given, in bytes (0: none). */
  int64_t instance_bytes;
} mapopt_sim_req_stats;

typedef struct mapopt_sim_task_stats {
  const char *task;
  mapopt_proc_kind kind;
  int64_t points, busy_ns, max_ns;
  unsigned variant_kinds; /* bit k: the task has a variant of kind k */
  bool is_index;          /* its points come from index launches */
  int64_t procs_used;     /* processors its timed points ran on */
  int64_t proc_max_ns;    /* the busiest of those: its time in this task */
  /* Where its busy time went, summed over its timed points: the fixed cost
   * of each task (overhead_ns: the processor's per-task overhead and the
   * variant's fixed time), the kernel's compute (compute_ns, when compute
   * bounds it), and its memory access (memory_ns: streaming its data when
   * that bounds it, plus random accesses); the three add up to busy_ns.
   * And how long its points waited after they were mapped: for their input
   * data once their predecessors were done (wait_data_ns: copies, folds),
   * then, ready, for their processor (wait_proc_ns). */
  int64_t overhead_ns, compute_ns, memory_ns;
  int64_t wait_data_ns, wait_proc_ns;
  /* One per region argument, in argument order, owned by the result; read
   * them with mapopt_sim_task_nreqs and mapopt_sim_task_req. */
  int nreqs;
  mapopt_sim_req_stats *reqs;
} mapopt_sim_task_stats;

/* One op or copy on the critical path. */
typedef struct mapopt_sim_segment {
  const char *kind; /* "task", "fill", "fence", "future", or a channel */
  const char *name; /* task name, or the copy's destination memory kind */
  int64_t start_ns, duration_ns;
} mapopt_sim_segment;

typedef struct mapopt_sim_critical_path {
  int64_t length_ns, compute_ns, copy_ns, runtime_ns, queue_ns, backpressure_ns;
  size_t nsegments;
  mapopt_sim_segment segments[MAPOPT_SIM_MAX_SEGMENTS]; /* the longest */
  /* The path's other segments, shorter than those kept. A report does not
   * record it: 0 in a result read back from one. */
  size_t segments_left_out;
} mapopt_sim_critical_path;

/*
 * Where the time of the timed window(s) went, by cause (docs/sim.md, "The
 * critical path adds up"): every nanosecond of the critical path is put in
 * one (task, argument, cause) entry, so the entries' exposed times add up
 * to the elapsed time. The causes:
 *   compute         the task ran (no argument)
 *   copy            a copy of the argument's data into the task's instance
 *   fill            a fill of the argument's instance
 *   fold            a fold of a reducer's contribution into the task's own
 *                   instance of the argument
 *   reduction       the folds of reduced data into another task's instance,
 *                   which the task's copy of the argument had to wait for
 *   processor       its processor was busy with another task
 *   instance-limit  InstanceLimit held its mapping back
 *   window          its issue waited for the runtime's window of
 *                   outstanding operations
 *   runtime         launch and mapping work, fences, completion delays and
 *                   what nothing else explains
 */
/* clang-format off */
#define MAPOPT_SIM_CAUSE_LIST(X)                                               \
  X(COMPUTE, "compute")                                                        \
  X(COPY, "copy")                                                              \
  X(FILL, "fill")                                                              \
  X(FOLD, "fold")                                                              \
  X(REDUCTION, "reduction")                                                    \
  X(PROCESSOR, "processor")                                                    \
  X(INSTANCE_LIMIT, "instance-limit")                                          \
  X(WINDOW, "window")                                                          \
  X(RUNTIME, "runtime")
/* clang-format on */

typedef enum mapopt_sim_cause {
#define MAPOPT_SIM_CAUSE_ENUM(id, name) MAPOPT_SIM_CAUSE_##id,
  MAPOPT_SIM_CAUSE_LIST(MAPOPT_SIM_CAUSE_ENUM)
#undef MAPOPT_SIM_CAUSE_ENUM
      MAPOPT_SIM_CAUSE_COUNT
} mapopt_sim_cause;

/* "fold" for MAPOPT_SIM_CAUSE_FOLD; NULL out of range. */
MAPOPT_API const char *mapopt_sim_cause_name(mapopt_sim_cause c);

/* One end of a wait: a memory ("FBMEM" 2 of node 0) or a processor ("GPU"
 * 2 of node 0); kind NULL when there is none. index is a GPU's, an
 * FBMEM's or a node's memory's index on the node (an FBMEM's is its
 * GPU's), another processor's among those of its kind in its address
 * space; rank is its address space's rank on the node. */
typedef struct mapopt_sim_end {
  const char *kind;
  int64_t node, rank, index;
} mapopt_sim_end;

/* The most entries a result keeps whose exposed time is 0 (the largest
 * waits hidden behind other work); every entry with exposed time is
 * kept. */
#define MAPOPT_SIM_MAX_HIDDEN_WAITS 16

/*
 * One (task, argument, cause) of the attribution. exposed_ns is its time
 * on the critical path; waited_ns, what the task's timed points waited on
 * it in all, exposed or not (compute: their busy time), over count points.
 * For copies, fills, folds and reductions: channel is the path's copy
 * kind (mapopt_sim_copy_kind_name's index: FB_FB_PEER, ..., FILL), other
 * the task that produced the data (copy) or the reducer (fold,
 * reduction), from and to the two memories of its largest piece (exposed,
 * else waited); copies and bytes, how many timed copies of this kind the
 * argument got and what they moved, whether anyone waited for them or not
 * (a reduction's are its fold's, counted there), and pieces, how many
 * distinct (piece, iteration) those copies served; spread, the most
 * processors that read one piece of the argument (copy) or reduce into it
 * (fold, reduction) in one iteration -- with 2 or more, some copy or fold
 * of it must cross between them whatever the placement, and with copies
 * <= pieces * (spread - 1) the piece's writer already runs where one of
 * them reads it. For processor: other is the task that held the
 * processor, to the processor, and pred the task the waiting one waited
 * for last (its last predecessor), which ran on from. Otherwise channel
 * is -1 and the rest empty.
 */
typedef struct mapopt_sim_wait {
  const char *task;     /* NULL: no task (a fence, a fill op, the start) */
  int arg;              /* the argument's position, -1: none */
  const char *arg_name; /* its first name, NULL when arg < 0 */
  mapopt_sim_cause cause;
  int channel;
  const char *other, *pred;
  mapopt_sim_end from, to;
  int64_t exposed_ns, waited_ns, count;
  int64_t copies, bytes, pieces, spread;
  /* A fold with exposed time: its largest exposed piece folds the
   * contribution that completed last of those its reader waited for (the
   * fold follows the last reducer), rather than one that ended earlier
   * and still arrived last. */
  bool last_contribution;
  /* A copy with exposed time: the processor that read the piece of its
   * largest exposed copy first in that iteration (kind NULL: unknown);
   * when it is not where the piece is written, writing it there would
   * make that first read local. */
  mapopt_sim_end first_reader;
} mapopt_sim_wait;

/* What the mapper decided for one region argument of a task op. */
typedef struct mapopt_sim_decision_req {
  const char *name;       /* first mapper-visible name */
  mapopt_mem_kind memory; /* VIRTUAL for inner tasks */
  mapopt_layout layout;
  int64_t instance_bytes;
} mapopt_sim_decision_req;

/* What the mapper decided for one task op, as the simulation applied it. */
typedef struct mapopt_sim_decision {
  int64_t op;
  const char *task;
  bool is_index;
  int dims;
  int64_t point[MAPOPT_APP_MAX_DIMS];
  mapopt_proc_point proc;
  bool inner;
  int nreqs; /* all its region arguments, owned by the result */
  mapopt_sim_decision_req *reqs;
} mapopt_sim_decision;

typedef struct mapopt_sim_result {
  mapopt_sim_error error;
  char *error_text; /* the error's message lines, or NULL */
  int64_t error_time_ns;
  int64_t elapsed_ns;
  int64_t iterations_timed, iterations_warmup;
  const char *metric_name; /* "throughput" or "gflops" */
  double metric_value;
  const char *metric_unit; /* "1/s", "GFLOP/s", "GFLOP/s per node" */
  size_t nprocs;
  mapopt_sim_proc_stats *procs;
  mapopt_sim_copy_stats copies[MAPOPT_SIM_COPY_KINDS];
  size_t nmems;
  mapopt_sim_mem_stats *mems;
  mapopt_sim_critical_path critical_path;
  /* The busiest (task, processor kind) entries, busiest first; read them
   * with mapopt_sim_result_ntop and mapopt_sim_result_top_task. The
   * timed entries beyond the first MAPOPT_SIM_MAX_TOP_TASKS are counted
   * in top_tasks_left_out (a report does not record it: 0 in a result
   * read back from one). */
  size_t ntop;
  mapopt_sim_task_stats top_tasks[MAPOPT_SIM_MAX_TOP_TASKS];
  size_t top_tasks_left_out;
  int64_t lower_bound_ns;
  double efficiency;
  int64_t events;
  int64_t sim_wall_us;
  char *log; /* the raw log, NUL-terminated */
  /* With the trace option: the Chrome trace-event JSON (docs/sim.md, "The
   * trace"), NUL-terminated; NULL otherwise. Write it where it is wanted
   * (mapopt_file_replace): a run never fails because a file cannot be
   * written. */
  char *trace;
  size_t ndecisions; /* with record_decisions: mapped task ops */
  mapopt_sim_decision *decisions;
  /* Where the critical path's time went, by (task, argument, cause), the
   * largest exposed time first (then waited time, then task, argument and
   * cause); their exposed times add up to critical_path.length_ns. */
  size_t nwaits;
  mapopt_sim_wait *waits;
} mapopt_sim_result;

/*
 * Instantiates app for machine: the run takes its node and GPU counts from
 * machine and its sizes from opts. Every caller that simulates an app on a
 * machine starts here. An app may ask for its own rank split (DISTAL's one
 * rank per GPU, run->ranks_per_node); the machine is not changed: the
 * simulation applies the split, and mapopt_sim_shape gives the shape that
 * the run's mappers must be compiled against. On success *out is owned by
 * the caller (mapopt_app_run_free). Errors: MAPOPT_EINVAL for a NULL
 * argument, or with an error diagnostic for an invalid model, size or
 * override, a rank split that does not divide the machine's GPUs per node
 * (mapopt_machine_check_ranks), or a run whose simulation would take more
 * memory than opts->max_bytes allows (estimated from the run's size before
 * anything more is allocated: "refusing to simulate ..."); MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_sim_instantiate(const mapopt_machine *machine,
                                                const mapopt_app *app,
                                                const mapopt_app_options *opts,
                                                mapopt_diags *diags,
                                                mapopt_app_run **out);

/*
 * The shape of machine as the mappers of run see it (docs/dsl.md, "The base
 * model"): that of mapopt_machine_shape_of with the run's rank split applied.
 */
MAPOPT_API void mapopt_sim_shape(const mapopt_machine *machine,
                                 const mapopt_app_run *run,
                                 mapopt_machine_shape *shape);

/*
 * The result owns all its memory, names included: it stays valid after the
 * machine, run and program are freed.
 *
 * Simulates run on machine under prog; *out is owned by the caller
 * (mapopt_sim_result_free). A simulated failure (OOM, a mapping error, ...)
 * is not a failure of this call: it returns MAPOPT_OK with result->error
 * set and the log ending in the error lines. Errors, *out untouched:
 * MAPOPT_EINVAL for a NULL ctx, machine, run, prog or out, or an op with
 * more than MAPOPT_APP_MAX_ARGS requirements; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_sim_run(mapopt_ctx *ctx,
                                        const mapopt_machine *machine,
                                        const mapopt_app_run *run,
                                        const mapopt_program *prog,
                                        const mapopt_sim_options *opts,
                                        mapopt_sim_result **out);
MAPOPT_API void mapopt_sim_result_free(mapopt_sim_result *r);

/*
 * Reading a result's busiest tasks and their arguments: what AutoGuide and
 * the tuner read of them, without indexing the result's arrays. The
 * entries kept, busiest first; the i-th of them; the busiest entry of the
 * task named task, NULL when it is not among them (or task is NULL).
 *
 * Every getter below follows the app run's convention (mapopt/app.h, "the
 * narrow view of a run", which says why): a NULL object or an index
 * outside [0, count) is the caller's bug, asserted in a debug build and
 * answered with NULL (0 for a count) in a release one.
 */
MAPOPT_API size_t mapopt_sim_result_ntop(const mapopt_sim_result *r);
MAPOPT_API const mapopt_sim_task_stats *
mapopt_sim_result_top_task(const mapopt_sim_result *r, size_t i);
MAPOPT_API const mapopt_sim_task_stats *
mapopt_sim_result_task_named(const mapopt_sim_result *r, const char *task);
/* A task entry's region arguments and the i-th of them, in argument
 * order. */
MAPOPT_API size_t mapopt_sim_task_nreqs(const mapopt_sim_task_stats *t);
MAPOPT_API const mapopt_sim_req_stats *
mapopt_sim_task_req(const mapopt_sim_task_stats *t, size_t i);

/*
 * The result's other lists, read the same way and under the same
 * convention: the attribution (waits), the processors and memories, the
 * copy statistics of channel k (0 .. MAPOPT_SIM_COPY_KINDS - 1), the
 * critical path's longest segments, the recorded decisions and a
 * decision's region arguments.
 */
MAPOPT_API size_t mapopt_sim_result_nwaits(const mapopt_sim_result *r);
MAPOPT_API const mapopt_sim_wait *
mapopt_sim_result_wait(const mapopt_sim_result *r, size_t i);
MAPOPT_API size_t mapopt_sim_result_nprocs(const mapopt_sim_result *r);
MAPOPT_API const mapopt_sim_proc_stats *
mapopt_sim_result_proc(const mapopt_sim_result *r, size_t i);
MAPOPT_API size_t mapopt_sim_result_nmems(const mapopt_sim_result *r);
MAPOPT_API const mapopt_sim_mem_stats *
mapopt_sim_result_mem(const mapopt_sim_result *r, size_t i);
MAPOPT_API const mapopt_sim_copy_stats *
mapopt_sim_result_copy(const mapopt_sim_result *r, int k);
MAPOPT_API size_t mapopt_sim_result_nsegments(const mapopt_sim_result *r);
MAPOPT_API const mapopt_sim_segment *
mapopt_sim_result_segment(const mapopt_sim_result *r, size_t i);
MAPOPT_API size_t mapopt_sim_result_ndecisions(const mapopt_sim_result *r);
MAPOPT_API const mapopt_sim_decision *
mapopt_sim_result_decision(const mapopt_sim_result *r, size_t i);
MAPOPT_API size_t mapopt_sim_decision_nreqs(const mapopt_sim_decision *d);
MAPOPT_API const mapopt_sim_decision_req *
mapopt_sim_decision_req_at(const mapopt_sim_decision *d, size_t i);

/*
 * A plan: the mapping-independent part of simulating a run (its dependence
 * graph and derived lists), built once and shared read-only by any number of
 * concurrent mapopt_sim_run_plan calls -- what a tuner evaluating thousands of
 * mappers uses. The run must outlive it; *out is owned by the caller
 * (mapopt_sim_plan_free). Errors: MAPOPT_EINVAL for a NULL argument or an op
 * with more than MAPOPT_APP_MAX_ARGS requirements; MAPOPT_ENOMEM.
 */
typedef struct mapopt_sim_plan mapopt_sim_plan;
MAPOPT_API mapopt_status mapopt_sim_plan_new(mapopt_ctx *ctx,
                                             const mapopt_app_run *run,
                                             mapopt_sim_plan **out);
MAPOPT_API void mapopt_sim_plan_free(mapopt_sim_plan *plan);
/*
 * mapopt_sim_run for the run of plan: the same result, the same errors
 * (MAPOPT_EINVAL for a NULL ctx, machine, plan, prog or out; MAPOPT_ENOMEM),
 * *out untouched on error. Plans
 * keep a pool of workspaces, so repeated runs reuse their memory.
 */
MAPOPT_API mapopt_status mapopt_sim_run_plan(mapopt_ctx *ctx,
                                             const mapopt_machine *machine,
                                             const mapopt_sim_plan *plan,
                                             const mapopt_program *prog,
                                             const mapopt_sim_options *opts,
                                             mapopt_sim_result **out);

/* The report's format, its "format" member: version 2 added the
 * attribution ("waits") and the arguments' instance sizes. */
#define MAPOPT_SIM_REPORT_FORMAT "mapopt-report/2"

/* The report (docs/sim.md, "The report") as JSON text in *text, freed with
 * mapopt_text_free; with stats, the wall-clock fields too. Error:
 * MAPOPT_ENOMEM. */
MAPOPT_API mapopt_status mapopt_sim_report_json(mapopt_ctx *ctx,
                                                const mapopt_sim_result *r,
                                                bool stats, char **text);

/*
 * Reads a report that mapopt_sim_report_json wrote (len bytes of text;
 * file names it in diagnostics, NULL: "<report>") back into a result, so a
 * saved run can be analysed like the run itself: writing the result again
 * gives the same report. The result has no log (log is NULL), no trace and
 * no decisions; free it with mapopt_sim_result_free. MAPOPT_EINVAL with a
 * located error "FILE:LINE:COL: error: ..." in diags for malformed JSON, an
 * unknown or missing key, a value of the wrong type, or a report of another
 * format than MAPOPT_SIM_REPORT_FORMAT (one without "format" is from a
 * version before 2, which had no attribution: the error says to write it
 * again); MAPOPT_ENOMEM. *out is written only on success.
 */
MAPOPT_API mapopt_status mapopt_sim_report_read(mapopt_ctx *ctx,
                                                const char *file,
                                                const char *text, size_t len,
                                                mapopt_diags *diags,
                                                mapopt_sim_result **out);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_SIM_H */
