/*
 * The tune module's internal header: the search space's state, shared by
 * the space (space.c) and the optimizers; the evaluators and the database
 * the driver (driver.c) uses.
 */
#ifndef MAPOPT_SRC_TUNE_TUNE_H
#define MAPOPT_SRC_TUNE_TUNE_H

#include "core/core.h"
#include "mapopt/guide.h"
#include "mapopt/sim.h"
#include "mapopt/tune.h"

/* The argument a key of a task stands for: its names and position. */
typedef struct key_arg {
  const char *const *names;
  size_t nnames;
  size_t position;
} key_arg;

/* What the instances of one argument key of a task hold at least, in
 * bytes of every field of its region (decide.c's memory rules): the largest
 * of one op, the most the points of one index launch ask together (they
 * hold their instances at once), and all its distinct pieces over the
 * run (its footprint). */
typedef struct key_size {
  int64_t one, launch;
  int64_t last_launch, sum; /* the launch being summed while scanning */
  int64_t footprint;
  mapopt__vec pieces; /* piece_bytes: its distinct pieces */
} key_size;

/* A piece an argument key holds, and the bytes of its instance. */
typedef struct piece_bytes {
  int64_t piece, bytes;
} piece_bytes;

/* What the space knows of one task of the run. */
typedef struct space_task {
  bool used;          /* some op runs it */
  bool leaf;          /* not inner */
  bool reads;         /* it has a read-only argument with fields */
  unsigned usable;    /* bit k: it has a kind-k variant and the machine has
                         kind-k processors */
  int default_kind;   /* first usable kind of the default order, or -1 */
  int base_kind;      /* its kind when the kind parameter is default */
  int index_dims;     /* dimensions of its index launches; -1 none, -2 mixed */
  int parent_task;    /* the task of its single launches' parent; -1 none,
                         -2 several */
  int64_t kind_param; /* 1 + its kind parameter, 0 none */
  int64_t map_param;  /* 1 + its index-map parameter, 0 none */
  bool single;        /* some op launches it alone (not an index point) */
  mapopt__vec keys;   /* const char *: its region-argument keys */
  mapopt__vec key_args;  /* key_arg: the argument each key stands for */
  mapopt__vec key_sizes; /* key_size: per key, what its instances hold */
  struct space_affinity *affinity; /* its data-flow neighbours, or NULL */
} space_task;

/* The data-flow neighbours of the points of one task's index launches
 * (affinity.c): all its launches have one set of extents, so a point is
 * named by its linearization over them (dimension 0 fastest). */
typedef struct space_affinity {
  int dims;
  int64_t extents[MAPOPT_APP_MAX_DIMS];
  int64_t npoints;
  /* Per point: the op of the first leaf of another task that reads a
   * piece the point writes, before anything rewrites it; or -1. */
  int64_t *consumer;
  /* Per point: the op of the last leaf of another task that wrote the
   * first piece the point reads; or -1. */
  int64_t *producer;
  /* Only where no launch of the task writes: per point, the ops of the
   * first SPACE_AFFINITY_READERS leaves of other tasks that read the
   * first piece the point reads after it, before anything rewrites the
   * piece (readers[point * SPACE_AFFINITY_READERS + k], k < nreaders
   * [point]); NULL otherwise. The first of them that runs away from the
   * piece's producer is where a copy made ahead of time helps
   * ("affinity/prefetch"). */
  int64_t *readers;
  uint8_t *nreaders;
  /* Per point: the readers of the piece it writes that belong to the
   * consumer's index launch, in program order, at most
   * SPACE_AFFINITY_READERS (cohort[point * SPACE_AFFINITY_READERS + k],
   * k < ncohort[point]; cohort[.. + 0] is the consumer). Any of them reads
   * at the same step; "affinity/skewed" picks one by the point's
   * coordinates. */
  int64_t *cohort;
  uint8_t *ncohort;
  /* Per point of the task's first index launch: the leaves that last
   * wrote the pieces it reads there, and the bytes of each piece
   * (inputs[point * SPACE_AFFINITY_INPUTS + k], k < ninputs[point]); what
   * the point must receive from elsewhere under a placement, which ranks
   * the contributions of a reduction by when they can end. */
  int64_t *input_writer, *input_bytes;
  uint8_t *ninputs;
  int64_t first_launch; /* that launch's id, or -1 */
  bool any_consumer, any_producer, any_prefetch, any_skewed;
} space_affinity;

enum { SPACE_AFFINITY_READERS = 8, SPACE_AFFINITY_INPUTS = 4 };

/* One distinct index launch of the run: its task, and its points, ops
 * first .. first + count - 1. Launches of the same task, nesting and
 * points are placed alike by every mapper (placement is a function of the
 * point and the extents), so one stands for all of them. */
typedef struct space_launch {
  int task;
  int64_t first, count;
} space_launch;

/* One distinct region argument of a leaf task, as the mapper matches it:
 * the task, the position and the names. */
typedef struct space_arg {
  int task;
  size_t position;
  const char *const *names;
  size_t nnames;
} space_arg;

/* A known answer of decide.c's placement rule: the most points one launch
 * of task puts on one processor when its kind, map and dims parameters
 * take these values (-1: the mapper fails to place them). */
typedef struct space_spread {
  int task;
  uint16_t kind, map, dims;
  int64_t most;
} space_spread;

struct mapopt_space {
  mapopt_ctx *ctx;
  mapopt__arena arena;
  const mapopt_app_run *run;
  const mapopt_machine *machine;
  mapopt_machine_shape shape;
  char *base; /* the base mapper's text, or NULL */
  size_t base_len;
  space_task *tasks;      /* per run task */
  bool named;             /* some argument of a leaf has a name: keys are
                             names (else positions) */
  char *region_used;      /* per run region: a leaf uses it */
  mapopt__vec names;      /* name_region: argument names, their region */
  mapopt__vec params;     /* mapopt_space_param */
  mapopt__vec param_task; /* int: each parameter's task, -1 none */
  bool real_runs;         /* candidates are run, not simulated */
  int64_t ranks;          /* address spaces per node */
  mapopt__vec launches;   /* space_launch: the distinct index launches */
  mapopt__vec args;       /* space_arg: the distinct leaf arguments */
  /* space_spread: decide.c's answers so far. A cache the const space
   * fills (each answer is a function of the space and its key); the
   * optimizers that ask run in one thread. */
  mapopt__vec spreads;
  /* Per region and order (2 r + 1: C_order): 0 not known yet, 1 allowed,
   * 2 forbidden by a kernel (decide.c's cache, as spreads). */
  signed char *order_rule;
};

/* h with v mixed in: the hashes of the space's signatures and of a
 * mapper's decisions (decide.c), built a value at a time. */
static inline uint64_t mapopt__hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* An argument name (partition, alias or root) and its root region. */
typedef struct name_region {
  const char *name;
  int region;
} name_region;

/* The region index of the argument name, or -1 when no argument has it. */
int mapopt__space_region_of(const mapopt_space *sp, const char *name);
/* The run the space was derived from. */
const mapopt_app_run *mapopt__space_run(const mapopt_space *sp);

/* The task of parameter i (-1 for layout parameters). */
int mapopt__space_task_of(const mapopt_space *sp, size_t i);
/* The processor kind task t gets under choice (-1 when it has none). */
int mapopt__space_kind_of(const mapopt_space *sp, const uint16_t *choice,
                          int task);

/* ---- the AUC bandit (bandit.c) ------------------------------------------- */

enum { MAPOPT__BANDIT_MAX_ARMS = 8, MAPOPT__BANDIT_MAX_WINDOW = 500 };

typedef struct mapopt__bandit {
  int narms, window;
  double c; /* the exploration constant */
  /* The window of uses, oldest first from head: arm and credit. */
  uint8_t arm[MAPOPT__BANDIT_MAX_WINDOW];
  bool credit[MAPOPT__BANDIT_MAX_WINDOW];
  size_t head, len;
  /* Per arm: uses in the window, the sum of the credited positions, and
   * the credited uses (what each position falls by when the oldest use
   * leaves). */
  int64_t use[MAPOPT__BANDIT_MAX_ARMS], auc_sum[MAPOPT__BANDIT_MAX_ARMS],
      auc_decay[MAPOPT__BANDIT_MAX_ARMS];
} mapopt__bandit;

void mapopt__bandit_init(mapopt__bandit *b, int narms, int window, double c);
/* Records a use of arm; credit: it produced a new global best. */
void mapopt__bandit_push(mapopt__bandit *b, int arm, bool credit);
/* Exploitation plus c times exploration; infinite for an unused arm. */
double mapopt__bandit_score(const mapopt__bandit *b, int arm);
/* The arms into order (narms entries), best first, ties in an order drawn
 * from rng. */
void mapopt__bandit_order(const mapopt__bandit *b, mapopt__rng *rng,
                          int *order);

/* ---- optimizers ---------------------------------------------------------- */

/*
 * One optimizer's functions. state is the optimizer's own (size bytes,
 * zeroed, owned by the mapopt_optimizer). plan proposes the next batch: up
 * to n candidates appended with mapopt__propose, from what was told before
 * (proposing none means the optimizer is done); tell records one
 * evaluation, in ask order, and must not change a batch already planned.
 * Both return MAPOPT_OK or MAPOPT_ENOMEM; plan may also return MAPOPT_EIO
 * with the reason in opt->error (llm: the server keeps failing).
 */
typedef struct mapopt__optimizer_vt {
  const char *name;
  size_t size;
  int default_batch;
  /* MAPOPT_OK, MAPOPT_ENOMEM, or (llm) MAPOPT_EINVAL / MAPOPT_EIO for
   * settings it cannot work with. */
  mapopt_status (*init)(mapopt_optimizer *opt);
  mapopt_status (*plan)(mapopt_optimizer *opt, int n);
  mapopt_status (*tell)(mapopt_optimizer *opt, const mapopt_candidate *c,
                        const mapopt_evaluation *e);
  void (*destroy)(mapopt_optimizer *opt);
} mapopt__optimizer_vt;

/* A chat call of the llm optimizer, kept for the database until the
 * driver takes it (error_text is a text the record owns). */
typedef struct mapopt__llm_call_rec {
  int64_t step; /* the prompt it answered, 0-based in the run */
  size_t index; /* the call within the step */
  mapopt_llm_call call;
} mapopt__llm_call_rec;

/* One reply (choice) of the llm optimizer, kept for the database, or read
 * back from it to replay a resumed run. reply is a text. */
typedef struct mapopt__llm_reply_rec {
  int64_t step;
  size_t sample; /* its candidate's index in the step */
  size_t call;   /* the call it came in */
  bool truncated;
  mapopt_llm_verdict verdict;
  char *reply;
  size_t reply_len;
} mapopt__llm_reply_rec;

/* What the database holds of a resumed run's llm steps: its replies by
 * step and sample, and the number of the next step. */
typedef struct mapopt__llm_replay {
  const mapopt__llm_reply_rec *replies;
  size_t nreplies;
  int64_t next_step;
} mapopt__llm_replay;

struct mapopt_optimizer {
  mapopt_ctx *ctx;
  const mapopt_space *space;
  const mapopt__optimizer_vt *vt;
  mapopt_optimizer_options opts;
  int batch;
  mapopt__rng rng;
  int64_t next_tag;
  mapopt__vec planned; /* mapopt_candidate: the current batch */
  size_t given, told;  /* of the current batch */
  void *state;
  char error[512]; /* why plan failed with MAPOPT_EIO */
  /* The llm optimizer's calls and replies since the driver last took them
   * (mapopt__optimizer_drop_records frees them), and the recorded steps to
   * replay before asking the model (set by the driver before the first
   * ask of a resumed run; borrowed). */
  mapopt__vec call_recs;  /* mapopt__llm_call_rec */
  mapopt__vec reply_recs; /* mapopt__llm_reply_rec */
  const mapopt__llm_replay *replay;
  /* Set by the driver: records (and drops) the records held now. The llm
   * optimizer calls it as each chat call ends, so that a call is in the
   * database the moment it is made. NULL: the records wait for the ask's
   * end. */
  mapopt_status (*flush)(void *ud);
  void *flush_ud;
  /* Set by an optimizer's init when it wants to be told the default
   * mapper's text and evaluation (the llm optimizer shows them in every
   * prompt); the driver tells them once per run, before the first ask
   * (mapopt__optimizer_baseline). NULL: not told. MAPOPT_ENOMEM. */
  mapopt_status (*baseline)(mapopt_optimizer *opt, const char *text,
                            const mapopt_evaluation *e);
};

/* A zeroed array of one elem-byte element per parameter of the space (at
 * least one), for an optimizer's state; NULL when out of memory. Free it
 * with mapopt__param_array_free (which ignores NULL). */
void *mapopt__param_array(const mapopt_optimizer *opt, size_t elem);
void mapopt__param_array_free(const mapopt_optimizer *opt, void *a,
                              size_t elem);
/* Tells an optimizer that wants it the default mapper's evaluation (the
 * tuning driver, once per run, before the first ask; docs/llm.md,
 * "Baseline"); MAPOPT_OK without doing anything for the others. */
mapopt_status mapopt__optimizer_baseline(mapopt_optimizer *opt,
                                         const char *text,
                                         const mapopt_evaluation *e);
/* Frees the call and reply records the optimizer holds. */
void mapopt__optimizer_drop_records(mapopt_optimizer *opt);
/* Frees one reply record's text. */
void mapopt__llm_reply_rec_clear(mapopt__llm_reply_rec *r);

/* Appends a candidate for choice (copied) to the batch being planned,
 * rendering its text; note says why. Returns its tag through *tag when tag
 * is not NULL. MAPOPT_ENOMEM. */
mapopt_status mapopt__propose(mapopt_optimizer *opt, const uint16_t *choice,
                              const char *note, int64_t *tag);
/* Appends a candidate given as text alone (optimizers that write whole
 * mappers); failure NULL for a mapper, else the reason the text (a reply)
 * holds none (mapopt_candidate). MAPOPT_ENOMEM. */
mapopt_status mapopt__propose_text(mapopt_optimizer *opt, const char *text,
                                   const char *failure, const char *note,
                                   int64_t *tag);

/* A set of 64-bit hashes (of choice vectors), for "seen before". */
typedef struct mapopt__hset {
  uint64_t *slots; /* 0: empty (a hash of 0 is stored as 1) */
  size_t cap, n;
} mapopt__hset;
void mapopt__hset_destroy(mapopt__hset *h, mapopt_ctx *ctx);
/* Adds h; returns 1 if added, 0 if present, -1 out of memory. */
int mapopt__hset_add(mapopt__hset *h, mapopt_ctx *ctx, uint64_t v);
bool mapopt__hset_has(const mapopt__hset *h, uint64_t v);
/* The hash of a choice vector of n entries. */
uint64_t mapopt__choice_hash(const uint16_t *c, size_t n);

/* ---- edits: AutoGuide's suggestions over the space ----------------------- */

/* A structured edit, as AutoGuide's findings carry them (guide.h): every
 * operand a string; impact is the finding's share of the time at stake. */
typedef enum tune_edit_kind {
  TUNE_EDIT_PROC_KINDS,
  TUNE_EDIT_MEMORY,
  TUNE_EDIT_LAYOUT,
  TUNE_EDIT_INDEX_MAP,
  TUNE_EDIT_INSTANCE_LIMIT,
  TUNE_EDIT_COLLECT,
  TUNE_EDIT_SINGLE_FOLLOW
} tune_edit_kind;

typedef struct tune_edit {
  tune_edit_kind kind;
  char task[64], region[64], proc[8], component[8], value[72];
  double impact;
  char text[160]; /* the edit in words */
} tune_edit;

/* Parameter changes: param[i] takes value[i], or, when from[i] >= 0, the
 * value named like parameter from[i]'s value in the base (0 if the name
 * is not one of param[i]'s). */
enum { TUNE_MAX_DELTA = 8 };
typedef struct tune_delta {
  size_t param[TUNE_MAX_DELTA];
  uint16_t value[TUNE_MAX_DELTA];
  int32_t from[TUNE_MAX_DELTA];
  int n;
} tune_delta;

/* Appends the changes that carry out edit to *d; false when the space has
 * no parameter for it, or d is full (d is then unchanged). */
bool mapopt__edit_to_delta(const mapopt_space *sp, const tune_edit *edit,
                           tune_delta *d);
/* base with d applied, into out; false when a change is out of range. */
bool mapopt__delta_apply(const mapopt_space *sp, const uint16_t *base,
                         const tune_delta *d, uint16_t *out);
/* The edits of an evaluation's findings, most promising first, at most
 * cap; 0 when it has none or may not use them (e->edits false; see
 * guide_edits.c). */
size_t mapopt__guide_edits(const mapopt_evaluation *e, tune_edit *out,
                           size_t cap);
/* The share of the elapsed time at stake (summed impact) in the findings
 * of e about the parameter of task and region (either may be NULL): the
 * findings about both, or about the task without naming a region, count
 * whole; those about the task and another region count half for a
 * parameter of the task alone. 0 when e has no findings. */
double mapopt__guide_stake(const mapopt_evaluation *e, const char *task,
                           const char *region);
/* The time parameter i decides about in a profile, in ns: the waits of
 * the critical path's attribution it can change, its task's busy time,
 * or for a layout parameter the memory time of the tasks reading its
 * region (edits.c). */
int64_t mapopt__param_weight(const mapopt_space *sp, size_t i,
                             const struct mapopt_sim_result *r);
/* What a change of the processor kind of a task moves besides its own
 * kernel, in a profile, in ns (mapopt__kind_stakes, edits.c). */
typedef struct tune_kind_stakes {
  int64_t held_ns;    /* the waits for its data and behind its processors */
  int64_t compute_ns; /* its compute on the critical path */
  int64_t busy_ns;    /* its compute in all, summed over its points */
} tune_kind_stakes;
/* The stakes of kind parameter i's task in profile r; all 0 for any other
 * parameter. */
tune_kind_stakes mapopt__kind_stakes(const mapopt_space *sp, size_t i,
                                     const struct mapopt_sim_result *r);

/* ---- what a mapper decides, and what must fail (decide.c) ---------------- */

/* Why the space rules a value out (docs/tuning.md, "Feasibility"). */
typedef enum mapopt__ruling {
  MAPOPT__RULE_NONE,     /* worth an evaluation */
  MAPOPT__RULE_ORDER,    /* an order a kernel's layout requirement forbids
                            (AOS is written C_order) */
  MAPOPT__RULE_PADDING,  /* an alignment: padding only, in the simulator */
  MAPOPT__RULE_LIMIT,    /* an InstanceLimit below the points a launch puts
                            on one processor */
  MAPOPT__RULE_MEMORY,   /* a memory smaller than the instances it must
                            hold at once */
  MAPOPT__RULE_FOOTPRINT /* memories that cannot hold the argument's data
                            unless some is rewritten elsewhere first */
} mapopt__ruling;

/* Whether value v of parameter i, the other parameters as in choice, is
 * known from the app model and the machine to fail or to change nothing,
 * and why. Out of memory reads as MAPOPT__RULE_NONE (nothing ruled out). */
mapopt__ruling mapopt__space_ruling(const mapopt_space *sp,
                                    const uint16_t *choice, size_t i,
                                    uint16_t v);
/* Replaces, in place, each value of choice the space rules out by the
 * first later value it does not (a larger InstanceLimit), else by the
 * default; returns how many changed. Every optimizer's proposals pass
 * through it (mapopt__propose). */
size_t mapopt__space_make_feasible(const mapopt_space *sp, uint16_t *choice);
/* The first parameter of choice whose value the space rules out, or
 * mapopt_space_nparams when none. */
size_t mapopt__space_ruled_out(const mapopt_space *sp, const uint16_t *choice);

/* The processor of index point o under prog, mapped to kind (affinity.c:
 * decide.c counts placements with it, space.c writes lookups): a nested
 * launch's point that no function places stays on its parent's node,
 * counted as node 0, as the simulator does (docs/sim.md). MAPOPT_EMAP
 * when the mapper fails to place it (a mapping error, or a processor out
 * of range). */
mapopt_status mapopt__space_place_point(const mapopt_space *sp,
                                        const mapopt_program *prog,
                                        const mapopt_app_op *o,
                                        mapopt_proc_kind kind, int64_t *node,
                                        int64_t *local);

/* Derives every task's data-flow neighbours (space_affinity) from the
 * run's ops (affinity.c, below space.c and decide.c, which call it). */
mapopt_status mapopt__space_derive_affinity(mapopt_space *sp);
/* The bytes of the instance requirement q asks for over its piece. */
int64_t mapopt__space_request_bytes(const mapopt_app_run *run,
                                    const mapopt_app_req *q);
/* Writes, into sb, mapping function fn on the machine model mv placing
 * linearized point k of a's launches on processor (node[k], local[k]). */
void mapopt__affinity_write_lookup(mapopt__strbuf *sb, const char *fn,
                                   const char *mv, const space_affinity *a,
                                   const int64_t *node, const int64_t *local);
/* Whether choice places task t by an affinity value, which depends on
 * the placement of other tasks. */
bool mapopt__space_map_by_affinity(const mapopt_space *sp,
                                   const uint16_t *choice, int t);

/* A hash of what prog decides for the run, in *key: every task's kind,
 * InstanceLimit and replication, the processor of every point of every
 * index launch, and each leaf argument's memory, layout and collection.
 * Two mappers with equal keys run alike, whatever their text (the
 * driver's semantic dedupe). MAPOPT_ENOTFOUND when only a simulation can
 * tell (a mapping error, or a SingleTaskMap, whose answer depends on the
 * processor its parent ran on); MAPOPT_ENOMEM. */
mapopt_status mapopt__space_decisions(const mapopt_space *sp,
                                      const mapopt_program *prog,
                                      uint64_t *key);

/* Fills c (mapopt_space_nparams entries) with a uniform sample. */
void mapopt__random_choice(mapopt_optimizer *opt, uint16_t *c);

extern const mapopt__optimizer_vt mapopt__opt_random;
extern const mapopt__optimizer_vt mapopt__opt_opentuner;
extern const mapopt__optimizer_vt mapopt__opt_ccd;
extern const mapopt__optimizer_vt mapopt__opt_guided;
extern const mapopt__optimizer_vt mapopt__opt_llm;

/* The optimizer called name, or NULL. */
const mapopt__optimizer_vt *mapopt__optimizer_find(const char *name);
/* Creates an optimizer from its functions (mapopt_optimizer_new looks vt up
 * by name; tests pass their own). MAPOPT_ENOMEM. */
mapopt_status mapopt__optimizer_create(mapopt_ctx *ctx,
                                       const mapopt__optimizer_vt *vt,
                                       const mapopt_space *space,
                                       const mapopt_optimizer_options *o,
                                       mapopt_optimizer **out);

/* ---- evaluators (evaluate.c) -----------------------------------------------
 *
 * An evaluator turns a compiled candidate into an evaluation. The driver
 * compiles every candidate itself (to deduplicate it by canonical text) and
 * hands the evaluator the program and its text; evaluate is called from
 * several threads at once. Two evaluators: the simulator, and a command
 * that runs the real program (problem.command).
 */

/* An evaluation with the parts it points to, which it owns: ev.feedback is
 * feedback, ev.findings findings, ev.result result. */
typedef struct mapopt__tune_eval {
  mapopt_evaluation ev;
  char *feedback;            /* mapopt_text_free */
  mapopt_findings *findings; /* AutoGuide's, or NULL */
  mapopt_sim_result *result; /* simulated runs, else NULL */
  const char *unit;          /* the metric's, once OK (static or in result) */
  /* A real run's: its output (mapopt_text_free; recorded so that a resume
   * can analyse it again), exit status (-1 none), signal and timeout. */
  char *output;
  int exit_status, signal;
  bool timed_out;
  /* Set with MAPOPT_EIO when the command cannot be run at all: why, as a
   * text (mapopt_text_free), for the driver to report. */
  char *error;
  /* A stop (options.stop) ended the run before it finished: there is no
   * evaluation, and none is recorded or told. */
  bool interrupted;
  /* A real run's score of each of its runs, as recorded
   * (mapopt__noise_scores_text; mapopt_text_free), or NULL. */
  char *scores;
} mapopt__tune_eval;

void mapopt__tune_eval_clear(mapopt__tune_eval *e);

typedef struct mapopt__tune_evaluator mapopt__tune_evaluator;

typedef struct mapopt__tune_evaluator_vt {
  const char *name;
  /* Evaluates prog (text is its source) into *out. MAPOPT_OK (a failed
   * run is an evaluation, not an error), MAPOPT_ENOMEM, or MAPOPT_EIO with
   * out->error when the evaluator cannot run anything. Thread-safe. */
  mapopt_status (*evaluate)(const mapopt__tune_evaluator *ev,
                            const mapopt_program *prog, const char *text,
                            mapopt__tune_eval *out);
  /* The evaluation of a resumed run's candidate, whose first evaluation is
   * rec: findings and result as the optimizer saw them the first time. The
   * simulator simulates again (the driver checks the result against rec);
   * a command is not run again: its recorded output is analysed again.
   * Errors as evaluate. Thread-safe. */
  mapopt_status (*replay)(const mapopt__tune_evaluator *ev,
                          const mapopt_program *prog, const char *text,
                          const mapopt_tune_eval_info *rec,
                          mapopt__tune_eval *out);
  void (*free)(mapopt__tune_evaluator *ev);
} mapopt__tune_evaluator_vt;

struct mapopt__tune_evaluator {
  const mapopt__tune_evaluator_vt *vt;
  mapopt_ctx *ctx;
  const mapopt_machine *machine;
  const mapopt_app_run *run;
  mapopt_guide_level level; /* of the feedback text */
  void *state;
};

/*
 * The evaluator of problem: the simulator on problem->machine (one plan
 * shared by every evaluation), or problem->command, whose runs in flight
 * stop sets ends (unless the command's options have a stop of their own;
 * NULL: none). Errors: MAPOPT_EINVAL (mapopt_sim_plan_new; or a malformed
 * command, regex or option, located in diags), MAPOPT_ENOMEM.
 */
mapopt_status mapopt__tune_evaluator_new(mapopt_ctx *ctx,
                                         const mapopt_tune_problem *problem,
                                         mapopt_guide_level level,
                                         const volatile sig_atomic_t *stop,
                                         mapopt_diags *diags,
                                         mapopt__tune_evaluator **out);
void mapopt__tune_evaluator_free(mapopt__tune_evaluator *ev);

/* Racing (noise.c): the lower end of the best interval so far, against
 * which a real run's candidate stops early once its interval lies wholly
 * below (0: none yet, every candidate gets the most runs). The simulator
 * ignores it. Thread-safe. */
void mapopt__tune_evaluator_race(mapopt__tune_evaluator *ev, double bar);

/*
 * The final check of a real-run tuning (docs/real.md, "Noise"): rounds
 * rounds, each one run of every text in turn, so that a drift of the
 * machine falls on all alike; round r runs texts[r % n] first and goes on
 * in order, wrapping, so that no text always has the same place in the
 * round. scores[round * n + i] is run
 * round's score of texts[i], 0 when it failed. *ran is false for the
 * simulator (nothing to check: it is deterministic) and when a stop ended
 * the check. Errors: MAPOPT_ENOMEM, MAPOPT_EIO (the command cannot run:
 * why, in diags).
 */
mapopt_status mapopt__tune_evaluator_check(const mapopt__tune_evaluator *ev,
                                           const char *const *texts, int n,
                                           int rounds, double *scores,
                                           mapopt_diags *diags, bool *ran);

/* The default mapper as the space renders it: every decision the
 * runtime's, in one statement that restates the default kind order. */
const char *mapopt__space_default_mapper(void);

/* ---- noise (noise.c, docs/real.md, "Noise") ------------------------------ */

/* A score with its interval and the runs it came from (0: simulated). */
typedef struct mapopt__noise_est {
  double score, low, high;
  int runs;
} mapopt__noise_est;

/* The order-statistics rank k of the 95% interval of the median of n
 * values, [x(k), x(n + 1 - k)] (1 up to n = 8: [min, max]). */
int mapopt__noise_rank(int n);
/* The median of v's n values and its interval (all 0 when n < 1). */
void mapopt__noise_summary(const double *v, int n, double *median, double *low,
                           double *high);
/* Whether scores v (n of them) can still beat a best whose interval
 * starts at bar: their interval reaches it (always when bar is 0). */
bool mapopt__noise_contender(const double *v, int n, double bar);
/* Whether a score of interval [low, high] is better than the incumbent's
 * [inc_low, inc_high]: the two do not overlap. With intervals of one
 * point (the simulator), a higher score. */
bool mapopt__noise_better(double low, double high, double inc_low,
                          double inc_high);
/* The best against a baseline (mapopt_tune_speedup): from their
 * estimates and, when rounds > 0, the final check's scores of the best
 * and of the baseline, one per round. */
void mapopt__noise_speedup(const mapopt__noise_est *best,
                           const mapopt__noise_est *base, const double *check,
                           const double *check_base, int rounds,
                           mapopt_tune_speedup *out);
/* Scores as recorded: "%.17g" separated by spaces, as a text
 * (mapopt_text_free); NULL on ENOMEM. */
char *mapopt__noise_scores_text(mapopt_ctx *ctx, const double *v, int n);

/* What identifies a command evaluator in the database (runs.evaluator): a
 * JSON object of the command's settings, as a text (mapopt_text_free) in
 * *out; NULL for the simulator. MAPOPT_ENOMEM. */
mapopt_status mapopt__tune_evaluator_id(mapopt_ctx *ctx,
                                        const mapopt_tune_problem *problem,
                                        char **out);

/* The evaluation of a candidate that does not compile: INVALID, analysed
 * by AutoGuide from its diagnostics as the compiler prints them
 * (diag_text) and its text. MAPOPT_ENOMEM. */
mapopt_status mapopt__tune_eval_invalid(const mapopt__tune_evaluator *ev,
                                        const char *text, const char *diag_text,
                                        mapopt__tune_eval *out);

/* mapopt_tune_run with the optimizer's functions given rather than looked
 * up by config->optimizer (which is only recorded): tests drive the loop
 * with scripted optimizers. vt NULL: an unknown optimizer (EINVAL). */
mapopt_status mapopt__tune_run_with(mapopt_ctx *ctx, mapopt_tune_db *db,
                                    const mapopt_tune_problem *problem,
                                    const mapopt_tune_config *config,
                                    const mapopt_tune_options *opts,
                                    const mapopt__optimizer_vt *vt,
                                    mapopt_diags *diags,
                                    mapopt_tune_outcome *out);

/* ---- the database (db.c) ------------------------------------------------- */

struct mapopt_tune_db {
  mapopt_ctx *ctx;
  struct sqlite3 *sq;
  char *path;
  int version;   /* N of its format mapopt-tune/N (read-only: 1 to 3) */
  bool readonly; /* opened by mapopt_tune_db_open_read */
  int failed_rc; /* SQLite's code of the last failure */
};

/* ---- who writes a run (owner.c) ------------------------------------------ */

/* A process, as the database records the owner of a run. */
typedef struct mapopt__owner {
  char host[256]; /* gethostname */
  long pid;
  char boot[40];   /* the kernel's boot id; "" when unknown */
  long long start; /* start time in clock ticks since boot; -1 unknown */
} mapopt__owner;

/* This process. */
void mapopt__owner_self(mapopt__owner *o);
/* Whether the recorded owner o is a live process: on this host, in this
 * boot, with its start time (see owner.c). */
bool mapopt__owner_alive(const mapopt__owner *o);

/* What identifies a run besides its config: the start mapper's hash and
 * the evaluator's (mapopt__tune_evaluator_id); NULL for none. */
typedef struct mapopt__run_key {
  const mapopt_tune_config *config;
  const char *start_hash;
  const char *evaluator;
} mapopt__run_key;

/* The latest run matching key: its id and recorded status (a look only:
 * mapopt__db_open_run decides). MAPOPT_ENOTFOUND, MAPOPT_EIO. */
mapopt_status mapopt__db_find_run(mapopt_tune_db *db, const mapopt__run_key *k,
                                  mapopt_diags *diags, int64_t *run,
                                  char status[16]);
/*
 * Opens a run for this process to write, in one write transaction. With
 * resume, the latest run matching key: one that has ended (done,
 * exhausted) is returned as it is, unclaimed (*claimed false); any other
 * is claimed -- unless a live process holds it: MAPOPT_EBUSY with a
 * diagnostic naming that process; a dead owner's claim is taken over.
 * Without resume, or when none matches, a new run is created, claimed,
 * with status "starting" (its references not yet recorded; *created).
 * *status is the run's recorded status. MAPOPT_EIO.
 */
mapopt_status mapopt__db_open_run(mapopt_tune_db *db, const mapopt__run_key *k,
                                  bool resume, mapopt_diags *diags,
                                  int64_t *run, char status[16], bool *created,
                                  bool *claimed);
/* Records the references of the claimed run (the expert's and default's
 * scores, 0 for none; the unit or NULL) and sets it "running". */
mapopt_status mapopt__db_start_run(mapopt_tune_db *db, int64_t run,
                                   const mapopt__noise_est *expert,
                                   const mapopt__noise_est *deflt,
                                   const char *unit, mapopt_diags *diags);
/* Records the final check of the best against baseline ("default",
 * "expert") with the scores of its rounds (texts, or NULL). */
mapopt_status
mapopt__db_record_check(mapopt_tune_db *db, int64_t run, const char *baseline,
                        const mapopt_tune_speedup *sp, const char *best_scores,
                        const char *base_scores, mapopt_diags *diags);
/* Sets the claimed run "running" again (a resume). */
mapopt_status mapopt__db_continue_run(mapopt_tune_db *db, int64_t run,
                                      mapopt_diags *diags);
/* Ends this process's claim on run: its status, duplicates and, when
 * finished, the time it ended, and the claim dropped, in one transaction;
 * nothing when another process holds the run now. */
mapopt_status mapopt__db_release_run(mapopt_tune_db *db, int64_t run,
                                     const char *status, int64_t duplicates,
                                     bool finished, mapopt_diags *diags);
/* Records one evaluation (its own transaction: once this returns, a kill
 * loses nothing) with, for a real run (e->output not NULL), its output,
 * and the run's metric unit when it had none. */
mapopt_status mapopt__db_record(mapopt_tune_db *db, int64_t run,
                                const mapopt_tune_eval_info *e,
                                const char *unit, mapopt_diags *diags);
/* The recorded evaluations of run, by iteration: a vector of
 * mapopt_tune_eval_info * (each freed with mapopt_tune_eval_info_free). */
mapopt_status mapopt__db_evaluations(mapopt_tune_db *db, int64_t run,
                                     mapopt_diags *diags, mapopt__vec *out);
/* Fills the outcome's recorded parts: counts, references, unit and best. */
mapopt_status mapopt__db_outcome(mapopt_tune_db *db, int64_t run,
                                 mapopt_diags *diags, mapopt_tune_outcome *out);
/* Records chat calls and replies of the llm optimizer (one transaction). */
mapopt_status mapopt__db_record_llm(mapopt_tune_db *db, int64_t run,
                                    const mapopt__llm_call_rec *calls,
                                    size_t ncalls,
                                    const mapopt__llm_reply_rec *replies,
                                    size_t nreplies, mapopt_diags *diags);
/* Appends the recorded replies of run to replies (mapopt__llm_reply_rec,
 * by step and sample; free each with mapopt__llm_reply_rec_clear) and
 * gives the number of the step after the last recorded call. */
mapopt_status mapopt__db_llm_replay(mapopt_tune_db *db, int64_t run,
                                    mapopt_diags *diags, mapopt__vec *replies,
                                    int64_t *next_step);
/* What db.c's writing and db_read.c's reading share. */
struct sqlite3_stmt;
/* Appends "PATH: error: database: WHAT: SQLite's message" and returns
 * MAPOPT_EIO (MAPOPT_ENOMEM when SQLite ran out of memory). */
mapopt_status mapopt__db_error(mapopt_tune_db *db, mapopt_diags *diags,
                               const char *what);
/* Prepares sql; on failure the error is in diags. */
mapopt_status mapopt__db_prepare(mapopt_tune_db *db, mapopt_diags *diags,
                                 const char *sql, struct sqlite3_stmt **st);
/* Binds text (NULL binds SQL NULL); x, or NULL when x is 0 (unknown). */
void mapopt__db_bind_text(struct sqlite3_stmt *st, int i, const char *s);
void mapopt__db_bind_known(struct sqlite3_stmt *st, int i, double x);
/* Steps a statement that returns no row, then finalizes it. */
mapopt_status mapopt__db_exec(mapopt_tune_db *db, mapopt_diags *diags,
                              struct sqlite3_stmt *st, const char *what);
/* Column i of the current row as a string in arena (with ctx when arena
 * is NULL); NULL stays NULL, and *ok turns false when out of memory. */
char *mapopt__db_column_dup(mapopt_ctx *ctx, mapopt__arena *arena,
                            struct sqlite3_stmt *st, int i, bool *ok);
/* Frees a string of mapopt__db_column_dup's (NULL is ignored). */
void mapopt__db_free_str(mapopt_ctx *ctx, char *s);

/* The hash recorded for a text: 16 hex digits of its 64-bit FNV-1a. */
void mapopt__tune_hash(const char *text, size_t len, char out[17]);

#endif /* MAPOPT_SRC_TUNE_TUNE_H */
