/*
 * The simulation state shared by the engine (engine.c), the plans
 * (plan.c), the results (result.c) and the output writers (out.c): the
 * concrete machine (processors, memories, ports), the per-op runtime
 * record, instances and copies. One mapopt__sim lives for one
 * mapopt_sim_run_plan call.
 */
#ifndef MAPOPT_SRC_SIM_ENGINE_H
#define MAPOPT_SRC_SIM_ENGINE_H

#include <pthread.h>

#include "sim/sim.h"

/* Processor classes of the concrete machine: the DSL kinds that can run
 * tasks, plus the runtime's UTIL processors. */
enum { PK_CPU, PK_GPU, PK_OMP, PK_UTIL, PK_COUNT };

typedef struct sim_proc {
  int cls;    /* PK_* */
  int64_t as; /* address space: node * ranks + rank */
  int64_t node, rank;
  int64_t local; /* index among its class in the address space */
  int64_t gpu;   /* GPU: node-local GPU index (for FB and ports) */
  int64_t socket;
  int64_t free_at;
  bool running;
  mapopt__heap ready; /* ops ready on it, by (ready time, order) */
  int64_t assigned;   /* ops mapped here and not yet executed */
  int64_t busy_timed, tasks_timed;
} sim_proc;

typedef struct sim_mem {
  mapopt_mem_kind kind;
  int64_t node, rank; /* rank -1: per node (SOCKMEM) */
  int64_t as;         /* -1 for SOCKMEM */
  int64_t index;      /* index among memories of its kind on the node */
  int64_t gpu;        /* FBMEM: node-local GPU */
  int64_t socket;
  int64_t capacity, live, peak, ninst, peak_inst;
  mapopt__vec insts; /* of int64_t instance ids */
} sim_mem;

typedef struct sim_port {
  int64_t free_at;
  int64_t node;
  char name[32];
} sim_port;

typedef struct sim_inst {
  int64_t mem;
  const mapopt_app_piece *piece;
  int region;
  uint64_t fields;
  mapopt_layout layout;
  int64_t bytes;
  int64_t users; /* mapped-not-executed ops, and active copies */
  int64_t last_use;
  bool freed, reduction, collect_pending;
  bool copied;       /* its data arrived by a copy (not written or filled
                        here): only such instances are collected */
  int64_t fold_left; /* reduction instances: (atom, field)s to fold */
  int64_t *held;     /* per (piece atom, region field): version, -1 */
  int64_t *incoming; /* version being copied in, -1 */
} sim_inst;

enum {
  OS_ISSUED,
  OS_MAPPABLE,
  OS_ADMITTED,
  OS_MAPPED,
  OS_READY,
  OS_RUNNING,
  OS_EXECUTED,
  OS_COMPLETE
};

/* What held an op back, when it was not its predecessors, copies or
 * mapping (the critical-path walk of §5.1 tells those apart by time). */
enum { CAUSE_NONE, CAUSE_QUEUE, CAUSE_BACKPRESSURE };

typedef struct sim_op {
  int state;
  bool issued;  /* its launch has been issued (state is valid) */
  int64_t proc; /* target processor, -1: none */
  int kind;     /* mapopt_proc_kind of TASK ops */
  int variant;
  int64_t preds_unmapped, preds_incomplete;
  int64_t pending;       /* copies and waits before READY */
  int64_t children_left; /* inner: children not complete, +1 while running */
  int64_t issued_at, mappable_at, mapped_at, ready_at, start_at, end_at,
      complete_at;
  int64_t last_pred; /* the predecessor that completed last */
  int64_t last_copy; /* the copy that arrived last */
  int cause;
  int64_t *inst;       /* per requirement: instance id, -1 virtual */
  int64_t *raw_left;   /* per requirement: RAW producers not complete */
  mapopt_task_ref ref; /* for mapping functions (parent chains) */
  int64_t as;          /* address space it maps/runs in */
} sim_op;

typedef struct sim_copy {
  int kind;                   /* mapopt_channel, or 5 = FILL, 6 = FOLD */
  int64_t src_inst, dst_inst; /* src -1 for fills */
  int64_t src_mem, dst_mem;
  int64_t bytes;
  int64_t op, req; /* the op and requirement it serves */
  int64_t ready_at, start_at, end_at;
  int64_t after;    /* copies that must finish first */
  int64_t dep_head; /* copies waiting on this one (dependency list) */
  int64_t ports[6];
  int nports;
  int64_t first_af, naf; /* head of its entry list in copy_afs, count */
} sim_copy;

/* ---- issue contexts: the top level (-1) and each inner op -----------------
 */

/* A per-evaluation arena kept between evaluations: reset, never freed, so
 * repeated evaluations reuse warm memory (§7). */
typedef struct pooled_arena {
  mapopt__arena arena;
  /* The growable state of an evaluation, emptied but kept for the next. */
  mapopt__vec insts, hpool, waiters, copies, copy_afs, deps, util_jobs;
  mapopt__heap events;
  struct pooled_arena *next;
} pooled_arena;

struct mapopt_sim_plan {
  mapopt_ctx *ctx;
  mapopt__arena arena;
  pthread_mutex_t lock;
  pooled_arena *pool;
  const mapopt_app_run *run;
  mapopt__sim_dag dag;
  int64_t *succ_off, *succ, *rawsucc_off, *rawsucc, *req_op;
  int64_t *vprod_off, *vprod;
  int64_t *next_sib, *first_child; /* first_child[parent + 1] */
  int64_t *ctx_of_op;              /* op -> its context index (> 0), or -1 */
  int64_t nctx;       /* contexts: the top level (0) and inner ops */
  int64_t *ctx_first; /* context -> its first op */
  int64_t *af_off;
  int64_t naf;
  /* The lower bound depends on the machine only: it is kept for the last
   * machine (compared by value, pointers cleared) under lock. */
  bool lb_valid;
  mapopt_machine lb_machine;
  int64_t lb_ns;
};

/* An issue context: the top level, or an inner op (the only ops that
 * have children). It also holds that op's task object for mapping
 * functions of its children (task.parent). */
typedef struct sim_ctx {
  int64_t next;        /* the next op to issue, -1: all issued */
  int64_t outstanding; /* issued and not complete */
  int64_t as;          /* address space that issues */
  bool replicated;
  mapopt_task_ref ref; /* the parent op as mapping functions see it */
} sim_ctx;

struct mapopt__sim {
  mapopt_ctx *ctx;
  mapopt__arena arena;
  const mapopt_machine *m;
  const mapopt_app_run *run;
  const mapopt_sim_plan *plan;
  const mapopt_program *prog;
  const mapopt_sim_options *opts;
  mapopt__sim_dag dag;
  mapopt_machine_shape shape;
  mapopt_diags *diags;
  mapopt__heap events;
  int64_t now;
  int64_t nevents;
  int64_t time_limit;
  /* Concrete machine. */
  int64_t nas, ranks;
  int64_t nprocs;
  sim_proc *procs;
  int64_t *proc_base; /* [as * PK_COUNT + cls] */
  int64_t nmems;
  sim_mem *mems;
  int64_t *proc_mem; /* [proc * MAPOPT_MEM_KIND_COUNT + kind] -> memory */
  int64_t nports;
  sim_port *ports;
  int64_t ports_per_node, gpus_per_node;
  /* Ops. */
  sim_op *ops;
  int64_t *next_sib;
  sim_ctx *ctxs; /* [op + 1] for inner ops; [0] top level */
  int64_t *succ_off, *succ;
  int64_t *rawsucc_off, *rawsucc; /* producer -> consumer requirement ids */
  int64_t *req_op;                /* requirement id -> op */
  int64_t *vprod_off, *vprod;     /* op -> versions it produces (write, fill) */
  int *task_kind;      /* per task: selected kind, -1 unknown, -2 error */
  int64_t *task_limit; /* per task: InstanceLimit, 0 none */
  struct req_policy *policy_cache; /* [((task * 64 + req) * kinds + kind)
                                    * ways + way] */
  uint64_t policy_evict;
  int64_t *rr;              /* round-robin counters [as * 3 + kind] */
  int64_t *limit_count;     /* [task * nprocs + proc] */
  mapopt__heap *limit_wait; /* per (task, proc): ops waiting admission */
  int64_t ops_done;
  /* Data. */
  int64_t *af_off;      /* atom -> first af */
  int64_t *newest;      /* af -> newest valid version id */
  mapopt__vec insts;    /* sim_inst */
  int64_t *holder_head; /* version -> holder list head in hpool */
  mapopt__vec hpool;    /* holder nodes: {inst, next} */
  int64_t *fold_target; /* version -> instance its folds go to, -1 none */
  int64_t *fold_left;   /* version -> folds still in flight */
  mapopt__vec deps;     /* copy dependency nodes {copy, next} */
  mapopt__vec waiters;  /* {req, next} nodes; heads in wait_head */
  int64_t *wait_head;   /* version -> waiter list */
  mapopt__vec copies;   /* sim_copy */
  mapopt__vec copy_afs; /* {inst idx, version} pairs */
  /* Outcome. */
  mapopt_sim_error error;
  mapopt__strbuf errtext;
  int64_t error_time;
  mapopt__strbuf log;
  mapopt__vec util_jobs; /* {proc, start, end} of UTIL work */
  mapopt__vec mem_log;   /* with a trace: {time, memory, live bytes} */
  int64_t win_lo[4096], win_hi[4096], nwin; /* the timed window(s) */
};

/* One (atom, field, version) a copy moves; a copy's entries form a list. */
typedef struct caf {
  int64_t atom;
  int field;
  int64_t version;
  int64_t next;
} caf;

typedef struct dnode {
  int64_t copy;
  int64_t next;
} dnode;

/* A holder (or waiter) list node. */
typedef struct hnode {
  int64_t inst;
  int64_t next;
} hnode;

typedef struct req_policy req_policy;
typedef struct mapopt__sim sim_t;

enum { COPY_FILL = MAPOPT_CHAN_COUNT, COPY_FOLD = MAPOPT_CHAN_COUNT + 1 };

static inline bool failed(const sim_t *s) {
  return s->error != MAPOPT_SIM_NONE;
}

static inline sim_inst *inst_at(sim_t *s, int64_t i) {
  return &MAPOPT__VEC_AT(&s->insts, sim_inst, i);
}

static inline sim_copy *copy_at(sim_t *s, int64_t i) {
  return &MAPOPT__VEC_AT(&s->copies, sim_copy, i);
}

/* The memory kind and layout factor of each of the first n requirements
 * of a mapped op, as the cost formula wants them (engine.c). */
void mapopt__sim_cost_inputs(sim_t *s, int64_t op, mapopt_mem_kind *mems,
                             int64_t *ppm, size_t n);

/* Fills the result from a finished simulation (result.c). */
mapopt_status mapopt__sim_fill_result(sim_t *s, mapopt_sim_result *res);

/* Plans (plan.c): the lower bound for a machine, computed once per plan
 * and machine; a fresh workspace's containers. */
mapopt_status mapopt__sim_plan_lower_bound(const mapopt_sim_plan *plan,
                                           mapopt_ctx *ctx,
                                           const mapopt_machine *m,
                                           int64_t *lb);
void mapopt__sim_workspace_init(pooled_arena *pa);

/* Output writers (out.c): the raw log into res->log, and the trace. */
mapopt_status mapopt__sim_write_log(sim_t *s, mapopt_sim_result *res);
mapopt_status mapopt__sim_write_trace(sim_t *s, const mapopt_sim_result *res,
                                      const char *path);

#endif /* MAPOPT_SRC_SIM_ENGINE_H */
