/*
 * The simulation state shared by the engine's files, the plans (plan.c),
 * the results (result.c), the output writers (out.c) and the costs
 * (cost.c): the concrete machine (processors, memories, ports), the per-op
 * runtime record, instances and copies. One mapopt__sim lives for one
 * mapopt_sim_run_plan call.
 *
 * The engine is four files, each using only those below it:
 *   engine.c   the run: issuing, copy planning, readiness, execution and
 *              completion of ops, the event loop, mapopt_sim_run_plan
 *   mapping.c  placement of ops and their mapping through the policy
 *   data.c     instances, versions and their holders, copy records
 *   machine.c  the concrete machine, ports and copy paths; errors and the
 *              event queue
 */
#ifndef MAPOPT_SRC_SIM_ENGINE_H
#define MAPOPT_SRC_SIM_ENGINE_H

#include <pthread.h>

#include "sim/sim.h"

/* A requirement position of an op, packed beside the op's index into one
 * integer (the waiters of a version, the consumers of an op's writes): an
 * op has at most MAPOPT_APP_MAX_ARGS requirements, and the simulator's
 * masks of positions (layout rules) are 64-bit words.
 * mapopt_sim_plan_new refuses a run with an op over the limit. */
#define SIM_REQ_BITS 6
_Static_assert((1 << SIM_REQ_BITS) == MAPOPT_APP_MAX_ARGS &&
                   MAPOPT_APP_MAX_ARGS <= 64,
               "requirement positions fill SIM_REQ_BITS and fit a mask");
#define SIM_REQ_CODE(op, r) ((op) << SIM_REQ_BITS | (r))
#define SIM_REQ_CODE_OP(c) ((c) >> SIM_REQ_BITS)
#define SIM_REQ_CODE_POS(c) ((c) & (MAPOPT_APP_MAX_ARGS - 1))

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
  mapopt__fifo ready; /* ops ready on it, in the order they became ready
                         (by ready time: it is the time of the push) */
  int64_t assigned;   /* ops mapped here and not yet executed */
  int64_t busy_timed, tasks_timed;
  int64_t last_op; /* the op that started on it last, -1 */
  /* UTIL: the events of its work, in the order they end (util_events;
   * -1: none); the first of them is in the event heap as EV_UTIL_NEXT. */
  int64_t evq_head, evq_tail;
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

/* A port: a link copies share (flow.c). */
typedef struct sim_port {
  int64_t node;
  char name[32];
  int64_t cap;    /* MB/s */
  int64_t head;   /* first flow on it (linked through port_next), -1 */
  int64_t nflows; /* flows on it */
  /* Progressive filling's scratch, valid when fill_stamp is current. */
  int64_t left, unfrozen, fill_stamp;
  int64_t gather_stamp;       /* walked by the current gather (flow.c) */
  int64_t share, share_stamp; /* left / unfrozen in filling round share_stamp */
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
  int64_t fold_left; /* reduction instances: contributions to fold, one
                        per (reducer, atom, field) */
  int redop;         /* reduction instances: their operator */
  int64_t fold_mark; /* the fold being planned that met it last */
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
 * mapping (the critical-path walk, docs/sim.md, "The critical path adds up",
 * tells those apart by time). */
enum { CAUSE_NONE, CAUSE_QUEUE, CAUSE_BACKPRESSURE };

/* 128 bytes, two cache lines (the array starts on a line, engine.c): the
 * successor loops and the result's passes touch every op; op, processor,
 * address-space and count fields are 32-bit as the plan's lists are
 * (sim.h), copy indices 64-bit as the copies' vector is. */
typedef struct sim_op {
  int64_t issued_at, mappable_at, mapped_at, ready_at, start_at, end_at,
      complete_at;
  int64_t *inst;     /* per requirement: instance id, -1 virtual */
  int32_t *raw_left; /* per requirement: RAW producers not complete */
  int64_t last_copy; /* the copy that arrived last */
  /* What the critical-path attribution (attrib.c) needs besides: the op
   * that ran on its processor before it started, the fold whose end let a
   * requirement waiting for reduced data plan its copy (-1: none), and
   * whether its issue waited for the window of outstanding ops. */
  int64_t woken_by;
  int32_t behind;
  int32_t proc; /* target processor, -1: none */
  int32_t as;   /* address space it maps/runs in */
  int32_t preds_unmapped, preds_incomplete;
  int32_t pending;       /* copies and waits before READY */
  int32_t children_left; /* inner: children not complete, +1 while running */
  int32_t last_pred;     /* the predecessor that completed last */
  int16_t variant;
  int8_t state;
  int8_t kind; /* mapopt_proc_kind of TASK ops */
  int8_t cause;
  bool issued; /* its launch has been issued (state is valid) */
  bool window_held;
} sim_op;
_Static_assert(sizeof(sim_op) == 128, "sim_op is two cache lines");

typedef struct sim_copy {
  int kind;                   /* mapopt_channel, or 5 = FILL, 6 = FOLD */
  int64_t src_inst, dst_inst; /* src -1 for fills */
  int64_t src_mem, dst_mem;
  int64_t bytes;
  int64_t op, req; /* the op and requirement it serves */
  int64_t reducer; /* FOLD: the reducer whose instance it folds, else -1 */
  int64_t ready_at, start_at, end_at;
  int64_t after;    /* copies that must finish first */
  int64_t last_dep; /* of those, the one that finished last, -1 */
  int64_t dep_head; /* copies waiting on this one (dependency list) */
  int64_t ports[6];
  int nports;
  int64_t first_af, naf; /* head of its entry list in copy_afs, count */
  /* As a flow (flow.c): its own cap (the path's bandwidth) and current
   * rate in MB/s, what is left in MB/s x ns, since when, the generation of
   * its scheduled end, and its link on each of its ports. */
  int64_t cap, rate, left, since;
  uint32_t gen;
  int64_t mark;
  int64_t port_next[6];
  bool flowing, done, frozen, charged;
} sim_copy;

/* The instance found for a requirement of one piece in memory mem with
 * these fields, layout and alignment (data.c); inst -1: none. */
typedef struct inst_answer {
  int64_t inst, mem;
  uint64_t fields;
  int32_t redop;       /* a reduction's operator, -1: not a reduction */
  int8_t soa, c_order; /* mapopt_layout_tri */
  int8_t align_log2;   /* the alignment asked for (a power of two), log2 */
} inst_answer;

/* A piece's answers fill one cache line (s->piece_answers is aligned to
 * it): every requirement a task maps looks at its piece's. */
enum { PIECE_ANSWERS = 2, PIECE_ANSWERS_ALIGN = 64 };
_Static_assert(PIECE_ANSWERS * sizeof(inst_answer) == PIECE_ANSWERS_ALIGN,
               "a piece's answers are one cache line");

/* A list of the instance index (data.c): the instances of one memory with
 * one piece, or holding one atom whole, in creation order. key 0: free. */
typedef struct inst_list {
  uint64_t key;
  int64_t head, tail; /* nodes in inst_nodes, -1: none */
} inst_list;

/* ---- issue contexts: the top level (-1) and each inner op ---------------- */

/* A per-evaluation arena kept between evaluations: reset, never freed, so
 * repeated evaluations reuse warm memory (docs/sim.md, "From C"). */
typedef struct pooled_arena {
  mapopt__arena arena;
  /* The growable state of an evaluation, emptied but kept for the next. */
  mapopt__vec insts, hpool, waiters, copies, copy_afs, deps, util_jobs,
      flow_set, util_events;
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
  /* 32-bit, as the DAG's lists (sim.h): the successors, and the RAW
   * consumers of each producer, each an op and the position of its
   * requirement (< MAPOPT_APP_MAX_ARGS) at the same place in rawsucc_pos. */
  int32_t *succ_off, *succ, *rawsucc_off, *rawsucc;
  uint8_t *rawsucc_pos;
  /* Issue contexts: the next op of an op's context, the first child of an
   * op (first_child[parent + 1]) and the op's context index (> 0) or -1;
   * all NULL in a flat run (no inner task), whose top level is every op in
   * order (mapopt__sim_next_sib). */
  int32_t *next_sib, *first_child;
  int32_t *ctx_of_op;
  int64_t nctx;       /* contexts: the top level (0) and inner ops */
  int64_t max_reqs;   /* the most requirements an op has (at most
                         MAPOPT_APP_MAX_ARGS) */
  uint8_t *task_reqs; /* per task: the most requirements of its ops */
  int32_t *ctx_first; /* context -> its first op */
  int64_t launches_per_iteration; /* in the first timed iteration, for the
                                     log */
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
  int64_t blocked_on;  /* a fence the body waits for before issuing on,
                          -1: none */
  bool window_full;    /* issuing stopped at the window of outstanding ops */
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
  const int32_t *next_sib;
  sim_ctx *ctxs; /* [op + 1] for inner ops; [0] top level */
  const int32_t *succ_off, *succ;
  const int32_t *rawsucc_off;
  const int32_t *rawsucc;     /* producer -> its RAW consumers (ops) */
  const uint8_t *rawsucc_pos; /* and their requirements' positions */
  int *task_kind;      /* per task: selected kind, -1 unknown, -2 error */
  int64_t *task_limit; /* per task: InstanceLimit, 0 none */
  struct req_policy *policy_cache; /* [((task * max_reqs + req) * kinds
                                    + kind) * ways + way] */
  uint64_t policy_evict;
  int64_t *rr;              /* round-robin counters [as * 3 + kind] */
  int64_t *limit_count;     /* [task * nprocs + proc] */
  mapopt__heap *limit_wait; /* per (task, proc): ops waiting admission */
  int64_t ops_done;
  /* When the last op completed, and the last of the last warm-up iteration
   * and of the last timed one (window mode; 0: none yet): the simulated
   * time only grows, so the latest completion is the latest time. */
  int64_t last_complete_at, warmup_end_at, timed_end_at;
  /* Data. */
  int64_t *af_off;        /* atom -> first af */
  const int32_t *af_atom; /* af -> atom */
  int64_t *newest;        /* af -> newest valid version id */
  mapopt__vec insts;      /* sim_inst */
  int64_t *holder_head;   /* version -> holder list head in hpool */
  mapopt__vec hpool;      /* holder nodes: {inst, next} */
  int64_t *fold_target;   /* version -> instance its folds go to, -1 none */
  int64_t *fold_left;     /* version -> folds still in flight */
  int64_t *fold_wait;     /* op -> head of the deps list of fold copies
                             waiting for that reducer to complete, -1 */
  mapopt__vec deps;       /* copy dependency nodes {copy, next} */
  mapopt__vec waiters;    /* {req, next} nodes; heads in wait_head */
  int64_t *wait_head;     /* version -> waiter list */
  mapopt__vec copies;     /* sim_copy */
  mapopt__vec copy_afs;   /* {inst idx, version} pairs */
  /* Outcome. */
  mapopt_sim_error error;
  mapopt__strbuf errtext;
  int64_t error_time;
  bool out_of_memory; /* the host ran out: the run returns MAPOPT_ENOMEM */
  mapopt__strbuf log;
  mapopt__vec util_jobs;   /* util_job: the runtime's work on UTIL */
  mapopt__vec util_events; /* util_event: the UTIL processors' queues */
  int64_t util_free;       /* the free list of util_events, -1 */
  mapopt__vec flow_set;    /* int64_t: flows being rebalanced (flow.c) */
  int64_t flow_stamp;
  int64_t fold_stamp;  /* the folds being planned (need_version) */
  int64_t share_stamp; /* the current round of progressive filling */
  mapopt__vec mem_log; /* with a trace: {time, memory, live bytes} */

  /* The instance index (data.c): open addressing, and its list nodes
   * {inst, next}. */
  inst_list *inst_lists;
  int64_t inst_lists_cap, inst_lists_len;
  struct hnode *inst_nodes;
  int64_t inst_nodes_len, inst_nodes_cap;
  /* Per piece: the last PIECE_ANSWERS answers of the index (the tasks
   * that use a piece often ask for different fields of it). */
  inst_answer *piece_answers;
  /* Per requirement: its instance, set when its op is mapped (the op's
   * inst points to its first requirement's). */
  int64_t *inst_slots;
  /* Per task: the inputs and result of its last task time (cost.c). */
  mapopt__task_cost_memo *cost_memo;
  /* Per leaf task op that started: the state of its task's cost_memo that
   * priced it, -1 none. The busiest tasks' statistics (result.c) split
   * each op's time into the formula's parts; ops priced by one state share
   * them, so the split is computed once per state, not once per op.
   * 32-bit: a state counts started ops, fewer than the DAG's 32-bit ids. */
  int32_t *price_state;
  int64_t *win_lo, *win_hi, nwin; /* the timed window(s), in s->arena */
  /* Per op, once the windows are known (result.c): TIMED_RAN
   * and TIMED_TASK. The result's passes over the ops ask for each op; one
   * pass over the run's large ops answers all. */
  uint8_t *timed_task;
  /* With a trace: the ops and copies on the critical path (attrib.c). */
  uint8_t *on_path_op, *on_path_copy;
};

/* Runtime work on a UTIL processor: launching op's launch, or mapping op. */
enum { UTIL_LAUNCH, UTIL_MAP };
typedef struct util_job {
  int64_t proc, start, end, op;
  int what; /* UTIL_LAUNCH or UTIL_MAP */
} util_job;

/* An event queued behind a UTIL processor's first (sim_proc.evq_head):
 * its key in the event heap, its event, the next in the queue or in the
 * free list. */
typedef struct util_event {
  int64_t time;
  uint64_t seq;
  void *data;
  int64_t next;
} util_event;

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

/* The policy's answers for one requirement of one task on one kind. Every
 * point of a launch asks the same questions, so they are asked once: one
 * slot per (task, requirement position, kind), remembering which names
 * it answered for. */
typedef struct req_policy {
  const char *const *names; /* the requirement's names array answered */
  size_t nnames;
  mapopt_mem_kind mem;
  mapopt_layout layout;
  bool collect;
  bool can_lay_out; /* Legion can lay out mem's Layout answer (mapping.c) */
} req_policy;

enum { POLICY_WAYS = 4 }; /* launches of one task with different names */

typedef struct mapopt__sim sim_t;

enum { COPY_FILL = MAPOPT_CHAN_COUNT, COPY_FOLD = MAPOPT_CHAN_COUNT + 1 };

/* Events: a type in the top byte, an id below. */
enum {
  EV_ISSUE,      /* a context issues its next statements: id = ctx + 1 */
  EV_LAUNCHED,   /* a launch's UTIL work ended: id = first op */
  EV_MAPPED,     /* an op's mapping work ended */
  EV_COPY_READY, /* a copy's prerequisites are done: its latency starts */
  EV_FLOW_START, /* its latency is over: it starts moving bytes */
  EV_COPY_DONE,  /* id = MAPOPT__SIM_COPY_EVENT(copy, generation) */
  EV_TASK_END,
  EV_COMPLETE, /* fences and future reductions: their delay ended */
  EV_UTIL_NEXT /* id = a UTIL processor: the first event of its queue */
};

#define EV(type, id)                                                           \
  ((void *)(uintptr_t)(((uint64_t)(type) << 56) | (uint64_t)(id)))
#define EV_TYPE(p) ((int)((uint64_t)(uintptr_t)(p) >> 56))
#define EV_ID(p) ((int64_t)((uint64_t)(uintptr_t)(p) & ((1ull << 56) - 1)))

/* A copy's end event names the copy (36 bits) and the generation of its
 * schedule (20 bits): a rescheduled end makes the earlier one stale. */
#define MAPOPT__SIM_GEN_MASK 0xFFFFFu
#define MAPOPT__SIM_COPY_EVENT(c, gen)                                         \
  ((int64_t)(c) | ((int64_t)((gen)&MAPOPT__SIM_GEN_MASK) << 36))
#define MAPOPT__SIM_COPY_EVENT_COPY(id) ((id) & ((INT64_C(1) << 36) - 1))
#define MAPOPT__SIM_COPY_EVENT_GEN(id) ((uint32_t)((id) >> 36))

static inline bool failed(const sim_t *s) {
  return s->error != MAPOPT_SIM_NONE;
}

static inline sim_inst *inst_at(sim_t *s, int64_t i) {
  return &MAPOPT__VEC_AT(&s->insts, sim_inst, i);
}

static inline sim_copy *copy_at(sim_t *s, int64_t i) {
  return &MAPOPT__VEC_AT(&s->copies, sim_copy, i);
}

/* ---- accessors every file of the engine uses ----------------------------- */

/* The processor class of a DSL kind (IO, PY, PROC: CPU), and back. */
static inline int proc_cls(mapopt_proc_kind k) {
  return k == MAPOPT_PROC_GPU ? PK_GPU : k == MAPOPT_PROC_OMP ? PK_OMP : PK_CPU;
}

static inline mapopt_proc_kind dsl_kind(int cls) {
  return cls == PK_GPU   ? MAPOPT_PROC_GPU
         : cls == PK_OMP ? MAPOPT_PROC_OMP
                         : MAPOPT_PROC_CPU;
}

/* The memory of kind k that processor p uses, or -1 (docs/dsl.md, "How the
 * memory is chosen"); from the table built once per run. */
static inline int64_t mem_for(const sim_t *s, const sim_proc *p,
                              mapopt_mem_kind k) {
  return s->proc_mem[(p - s->procs) * MAPOPT_MEM_KIND_COUNT + k];
}

/* Processor local of class cls in address space as, or -1 past the last. */
static inline int64_t proc_id(const sim_t *s, int64_t as, int cls,
                              int64_t local) {
  int64_t base = s->proc_base[as * PK_COUNT + cls];
  int64_t count = s->proc_base[as * PK_COUNT + cls + 1] - base;
  return local < count ? base + local : -1;
}

/* Processors of class cls per address space (all have the same). */
static inline int64_t procs_per_as(const sim_t *s, int cls) {
  return s->proc_base[cls + 1] - s->proc_base[cls];
}

/* Index of (atom a of the piece, field f) in an instance's arrays. */
static inline int64_t slot_of(const sim_t *s, const sim_inst *in, size_t a,
                              int f) {
  return (int64_t)a * s->run->regions[in->region].nfields + f;
}

/* The piece-atom index of atom in the instance's piece, or -1. */
static inline int64_t atom_index(const mapopt_app_piece *pc, int64_t atom) {
  size_t lo = 0, hi = pc->natoms;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (pc->atoms[mid].atom < atom)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < pc->natoms && pc->atoms[lo].atom == atom ? (int64_t)lo : -1;
}

static inline int64_t af_index(const sim_t *s, int64_t atom, int f) {
  return s->af_off[atom] + f;
}

static inline const char *task_name(const sim_t *s, int64_t op) {
  return s->run->tasks[s->run->ops[op].task].name;
}

/* The op issued after op in its context, -1: none. */
static inline int64_t mapopt__sim_next_sib(const sim_t *s, int64_t op) {
  if (s->next_sib)
    return s->next_sib[op];
  return op + 1 < s->run->nops ? op + 1 : -1;
}

static inline sim_ctx *ctx_of(sim_t *s, int64_t parent) {
  return &s->ctxs[parent < 0 ? 0 : s->plan->ctx_of_op[parent]];
}

/* ---- machine.c: the concrete machine; errors and events ------------------ */

/* Records the first simulated error; message lines go to errtext. */
void mapopt__sim_error(sim_t *s, mapopt_sim_error e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Stops the run because the host is out of memory: mapopt_sim_run_plan
 * then returns MAPOPT_ENOMEM instead of a result, so that a failed
 * allocation is never taken for a property of the mapper. */
void mapopt__sim_out_of_memory(sim_t *s);
/* Queues an event (type, id) at time t; mapopt__sim_out_of_memory when it
 * cannot. */
void mapopt__sim_schedule(sim_t *s, int64_t t, int type, int64_t id);
/* Builds the processors, memories and ports of the run's address spaces
 * into the simulation's arena. MAPOPT_ENOMEM on failure. */
mapopt_status mapopt__sim_build_machine(sim_t *s);
/* Classifies a copy between two memories (its kind) and fills its ports,
 * bandwidth and latency (docs/sim.md, "Copies share the links they use"). */
void mapopt__sim_copy_path(const sim_t *s, sim_copy *c, int64_t *bw,
                           int64_t *lat);
/* A fill of the copy's destination: its port and bandwidth. */
void mapopt__sim_fill_path(const sim_t *s, sim_copy *c, int64_t *bw);
/* Estimated end of a copy of bytes from src_mem to dst_mem started now. */
int64_t mapopt__sim_copy_estimate(sim_t *s, int64_t src_mem, int64_t dst_mem,
                                  int64_t bytes);
/* Charges cost of runtime work (what: UTIL_LAUNCH or UTIL_MAP, for op) on
 * the least busy UTIL processor of address space as, and schedules the
 * event (type, op) when it ends. */
void mapopt__sim_util_work(sim_t *s, int64_t as, int64_t cost, int64_t op,
                           int what, int type);
/* The event an EV_UTIL_NEXT item of UTIL processor proc stands for, taken
 * from the processor's queue, whose next event goes into the heap. */
mapopt__heap_item mapopt__sim_util_next(sim_t *s, int64_t proc);

/* ---- data.c: instances, versions and holders, copy records --------------- */

/* Frees an instance's bytes in its memory (once). */
void mapopt__sim_mem_release(sim_t *s, int64_t i);
/* A reusable instance for requirement r in memory mem, or
 * -1: for a REDUCE requirement, a reduction instance with its operator
 * (docs/sim.md, "Reduction instances are reused"). */
int64_t mapopt__sim_find_instance(sim_t *s, int64_t mem,
                                  const mapopt_app_req *r,
                                  const mapopt_layout *l);
/* Creates an instance of the piece's fields in mem for requirement r of op,
 * collecting stale ones first; -1 with an OOM error when it cannot
 * fit. */
int64_t mapopt__sim_create_instance(sim_t *s, int64_t op, int64_t r,
                                    int64_t mem, const mapopt_app_piece *pc,
                                    int region, uint64_t fields,
                                    const mapopt_layout *l, bool reduction);
/* Marks (atom, field) of inst as holding version v, now complete. */
void mapopt__sim_hold(sim_t *s, int64_t inst, int64_t atom, int f, int64_t v);
/* Whether instance i is the only holder of the newest version of some
 * (atom, field): such an instance is never collected (its data is nowhere
 * else). */
bool mapopt__sim_only_newest_holder(sim_t *s, int64_t i);
/* One user (an op or a copy) of instance i is done with it. */
void mapopt__sim_release_user(sim_t *s, int64_t i);
/* A new copy of kind (a channel, COPY_FILL or COPY_FOLD) into dst_inst for
 * requirement r of op; -1 on ENOMEM (a MODEL error). */
int64_t mapopt__sim_new_copy(sim_t *s, int kind, int64_t src_inst,
                             int64_t dst_inst, int64_t op, int64_t r);
/* Adds version v of (atom, f), bytes long, to copy c. */
void mapopt__sim_copy_add_af(sim_t *s, int64_t c, int64_t atom, int f,
                             int64_t v, int64_t bytes);
/* The op that produced the data copy c moves: the writer (or the first
 * reducer) of the version of its latest (atom, field) entry; -1 for a
 * fill. */
int64_t mapopt__sim_copy_producer(const sim_t *s, const sim_copy *c);
/* Copy c starts only after copy on is done. */
void mapopt__sim_copy_depends(sim_t *s, int64_t c, int64_t on);
/* The complete holder of v that serves piece want best, or -1. */
int64_t mapopt__sim_best_source(sim_t *s, int64_t v,
                                const mapopt_app_piece *want, int64_t atom,
                                int f, int64_t dst_mem, int64_t bytes);
/* The reduction instance through which requirement r of reducer op
 * contributed (atom, f), with its element count in *count; -1 when r does
 * not reduce it. */
int64_t mapopt__sim_reducer_instance(sim_t *s, int64_t op, size_t r,
                                     int64_t atom, int f, int64_t *count);
/* Starts copy c, whose prerequisites are done: its path, cap and bytes;
 * after its latency it becomes a flow (EV_FLOW_START). */
void mapopt__sim_copy_ready(sim_t *s, int64_t c);

/* ---- flow.c: ports as shared links --------------------------------------- */

/* Each port's bandwidth, from the channel it serves; no flows. */
void mapopt__sim_ports_init(sim_t *s);
/* Copy c starts moving bytes: the flows it shares ports with are
 * rebalanced and their ends scheduled again. */
void mapopt__sim_flow_start(sim_t *s, int64_t c);
/* An end event id (MAPOPT__SIM_COPY_EVENT) fired: false when it is stale;
 * otherwise the copy is done and the flows it leaves are rebalanced. */
bool mapopt__sim_flow_end(sim_t *s, int64_t id);

/* ---- mapping.c: placement and mapping ------------------------------------ */

/* Places every point of the index launch starting at op first. */
void mapopt__sim_place_index_launch(sim_t *s, int64_t first);
/* Places a single task (docs/dsl.md, "SingleTaskMap"); false on an error. */
bool mapopt__sim_place_single(sim_t *s, int64_t op);
/* Starts mapping op once its predecessors are mapped (and InstanceLimit
 * admits it). */
void mapopt__sim_try_mappable(sim_t *s, int64_t op);
/* Charges op's mapping work on a UTIL processor (docs/sim.md, "How it models a
 * run"). */
void mapopt__sim_admit(sim_t *s, int64_t op);
/* The policy's answers for requirement r of task on kind, asked once. */
const req_policy *mapopt__sim_req_decision(sim_t *s, int task, size_t r,
                                           const mapopt_app_req *req, int kind);
/* Allocates the instances of a mapped task op;
 * false on an error. */
bool mapopt__sim_map_instances(sim_t *s, int64_t op);

/* The memory kind and layout factor of each of the first n requirements
 * of a mapped op, as the cost formula wants them (cost.c). */
void mapopt__sim_cost_inputs(sim_t *s, int64_t op, mapopt_mem_kind *mems,
                             int64_t *ppm, size_t n);

/* ---- attrib.c: where the time went, by cause ----------------------------- */

/* Whether time t is in a timed window (s->win_lo, s->win_hi). Inline: the
 * result asks it of every timed op and every runtime job. */
static inline bool mapopt__sim_in_windows(const sim_t *s, int64_t t) {
  for (int64_t i = 0; i < s->nwin; i++)
    if (t >= s->win_lo[i] && t < s->win_hi[i])
      return true;
  return false;
}
/* s->timed_task's marks (result.c): a task op of the timed work (its
 * iteration or block is timed) that executed on a processor (TIMED_RAN),
 * and that started in the timed window(s) (TIMED_TASK as well). */
enum { TIMED_RAN = 1, TIMED_TASK = 2 };
/* Whether op is TIMED_TASK (once the result has marked the timed work). */
static inline bool mapopt__sim_timed_task(const sim_t *s, int64_t op) {
  return s->timed_task[op] & TIMED_TASK;
}
/* A copy that serves timed work and started in the timed window(s): the
 * report's statistics count nothing else. */
bool mapopt__sim_timed_copy(const sim_t *s, const sim_copy *c);
/* The critical path of the timed windows (res->critical_path) and the
 * (task, argument, cause) attribution of its time and of every timed
 * task's wait (res->waits); with on_path_op and on_path_copy allocated,
 * marks what the path runs through. MAPOPT_ENOMEM. */
mapopt_status mapopt__sim_attribute(sim_t *s, mapopt_sim_result *res);
/* What one op waited for before it started, from its last predecessor's
 * completion: in all, and its largest single cause but the runtime's
 * (cause -1: none) with that piece's argument (-1) and ends (memories, or
 * the processor as to for MAPOPT_SIM_CAUSE_PROCESSOR). */
typedef struct sim_op_wait {
  int64_t total_ns, ns;
  int cause, arg;
  int64_t from, to;
} sim_op_wait;
void mapopt__sim_op_wait(sim_t *s, int64_t op, sim_op_wait *out);

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
mapopt_status mapopt__sim_write_trace(sim_t *s, mapopt_sim_result *res);

#endif /* MAPOPT_SRC_SIM_ENGINE_H */
