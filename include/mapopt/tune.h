/*
 * mapopt tune: the search space of mappers of an application on a machine,
 * the optimizers that search it, and the driver that runs a search and
 * records it in the tuning database.
 *
 * The search space is derived from the application run and the machine,
 * never listed by hand: per task its processor kind, per (task, region
 * argument, processor kind) its memory, per region its layout, per
 * index-launched task its index mapping (a template from a small library,
 * over a chosen ordering of the launch dimensions), per leaf task its
 * InstanceLimit and CollectMemory, and per single task launched by an inner
 * task whether it follows its parent's processor. A point of the space is a
 * choice vector: one value index per parameter. Value 0 of every parameter
 * is "default": no statement, so the decision is the runtime's default (or,
 * when the space was built over a base mapper, that mapper's). The renderer
 * turns a choice vector into DSL text that the real parser checks like any
 * other mapper; the statements it writes are keyed exactly, so when a base
 * mapper is given they are put in front of it and take precedence (the
 * first binding wins, docs/dsl.md).
 *
 * Optimizers share one ask/tell interface: ask for a candidate (a choice
 * vector and its text, or text alone for optimizers that write whole
 * mappers), evaluate it, tell the optimizer what happened. Every optimizer
 * is deterministic for a given seed and sequence of tells. None is ever
 * given an expert mapper or a benchmark's name: only the space (the app
 * model and the machine) and the evaluations.
 */
#ifndef MAPOPT_TUNE_H
#define MAPOPT_TUNE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/app.h"
#include "mapopt/core.h"
#include "mapopt/dsl.h"
#include "mapopt/eval.h"
#include "mapopt/llm.h"
#include "mapopt/machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the search space ---------------------------------------------------- */

/* What a parameter decides. */
typedef enum mapopt_param_kind {
  MAPOPT_PARAM_PROC_KIND,      /* kind.TASK: Task TASK K; */
  MAPOPT_PARAM_MEMORY,         /* memory.TASK.ARG.K: Region TASK ARG K M; */
  MAPOPT_PARAM_LAYOUT_SOA,     /* soa.REGION: SOA or AOS */
  MAPOPT_PARAM_LAYOUT_ORDER,   /* order.REGION: C_order or F_order */
  MAPOPT_PARAM_LAYOUT_ALIGN,   /* align.REGION: Align == 64, 128 */
  MAPOPT_PARAM_INDEX_MAP,      /* map.TASK: the index-mapping template */
  MAPOPT_PARAM_INDEX_DIMS,     /* dims.TASK: launch dimensions it orders */
  MAPOPT_PARAM_INSTANCE_LIMIT, /* limit.TASK: InstanceLimit TASK n; */
  MAPOPT_PARAM_COLLECT,        /* collect.TASK: CollectMemory TASK *; */
  MAPOPT_PARAM_FOLLOW_PARENT   /* follow.TASK: on its parent's processor */
} mapopt_param_kind;

/* "kind", "memory", "soa", "order", "align", "map", "dims", "limit",
 * "collect", "follow"; NULL out of range. */
MAPOPT_API const char *mapopt_param_kind_name(mapopt_param_kind k);

/*
 * The index-mapping templates of MAPOPT_PARAM_INDEX_MAP, by value name. A
 * point is first linearized over the dimensions its dims parameter selects,
 * in that order (the first fastest): l in [0, n). Over the machine model of
 * the task's kind, N nodes of P processors:
 *   block         l * N * P / n over the processors listed node by node
 *   cyclic        l % (N * P) over the same list
 *   block-cyclic  node l * N / n, processor l % P
 *   cyclic-block  node l % N, processor (l / N) % P
 *   decompose     the nodes split into a grid shaped like the selected
 *                 extents (auto_split), each node's processors likewise
 *                 over its block; block over nodes, cyclic over processors
 */

typedef struct mapopt_space_param {
  const char *name; /* unique: "memory.calculate_new_currents.rp_ghost.GPU" */
  mapopt_param_kind kind;
  const char *task;          /* the task, or NULL (layout parameters) */
  const char *region;        /* the argument key or region, or NULL */
  mapopt_proc_kind proc;     /* MEMORY: the processor kind it applies to */
  size_t nvalues;            /* >= 2 */
  const char *const *values; /* value names; values[0] is "default" */
} mapopt_space_param;

typedef struct mapopt_space mapopt_space;

typedef struct mapopt_space_options {
  /* A base mapper (its text): the space's statements are rendered in front
   * of it and "default" means "as the base says". NULL: none. */
  const char *base;
  size_t base_len;
  const char *base_file; /* its name in diagnostics */
  /* The candidates are run, not simulated: values the simulator alone
   * finds useless (an alignment, which it models as padding) stay in
   * (docs/tuning.md, "Feasibility"). */
  bool real_runs;
} mapopt_space_options;

/*
 * Derives the space of run on machine (the machine's shape with run's rank
 * split). opts may be NULL. The run and machine must outlive the space.
 * MAPOPT_ENOMEM; MAPOPT_ESYNTAX or MAPOPT_ELOAD when the base mapper does
 * not compile (its diagnostics are appended to diags).
 */
MAPOPT_API mapopt_status mapopt_space_new(
    mapopt_ctx *ctx, const mapopt_app_run *run, const mapopt_machine *machine,
    const mapopt_space_options *opts, mapopt_diags *diags, mapopt_space **out);
MAPOPT_API void mapopt_space_free(mapopt_space *space);

/* The number of parameters, and parameter i (valid while space lives). */
MAPOPT_API size_t mapopt_space_nparams(const mapopt_space *space);
MAPOPT_API const mapopt_space_param *
mapopt_space_param_at(const mapopt_space *space, size_t i);
/* The index of the parameter named name; MAPOPT_ENOTFOUND if none. */
MAPOPT_API mapopt_status mapopt_space_find(const mapopt_space *space,
                                           const char *name, size_t *index);

/*
 * Whether parameter i takes effect under choice: a memory parameter only
 * for the processor kind its task is mapped to, a dims parameter only when
 * its task has a template other than default, a follow parameter only for a
 * task on the same kind as its parent. Inactive parameters do not change
 * the rendered text.
 */
MAPOPT_API bool mapopt_space_active(const mapopt_space *space,
                                    const uint16_t *choice, size_t i);

/*
 * Renders choice (mapopt_space_nparams values, each < nvalues) as DSL text:
 * the space's statements, then the base mapper if any. *text is
 * NUL-terminated and freed with mapopt_text_free. MAPOPT_EINVAL for a value
 * out of range, MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_space_render(const mapopt_space *space,
                                             const uint16_t *choice,
                                             char **text, size_t *len);

/*
 * The space as JSON for other autotuners:
 * {"format": "mapopt-space/1", "app": ..., "machine": ...,
 *  "parameters": [{"name", "kind", "task", "region", "processor",
 *                  "values": [...]}, ...]}.
 * Free with mapopt_text_free.
 */
MAPOPT_API mapopt_status mapopt_space_to_json(const mapopt_space *space,
                                              char **text);

/*
 * Reads a choice vector from a JSON object {"NAME": VALUE, ...}: VALUE is a
 * value name (or its index); parameters not named take value 0. Errors
 * (malformed JSON, an unknown parameter, an unknown value) are located
 * diagnostics naming file, and MAPOPT_EINVAL. choice has
 * mapopt_space_nparams entries.
 */
MAPOPT_API mapopt_status mapopt_space_choice_from_json(
    const mapopt_space *space, const char *file, const char *text, size_t len,
    mapopt_diags *diags, uint16_t *choice);
/* The non-default entries of choice as such a JSON object. */
MAPOPT_API mapopt_status mapopt_space_choice_to_json(const mapopt_space *space,
                                                     const uint16_t *choice,
                                                     char **text);

/* ---- optimizers ---------------------------------------------------------- */

/*
 * A candidate mapper an optimizer proposes. choice is a point of the space
 * (mapopt_space_nparams values), or NULL for an optimizer that writes whole
 * mappers; text is its DSL text; note says in a few words why it was
 * proposed ("random", "edit memory.T.R.GPU=FBMEM (zc-hot)"), for logs and
 * reports. failure is NULL, except for a proposal that is no mapper at all
 * (a model's reply without one, or with one over the size cap): then text
 * is the reply and failure says what was wrong, in words for the model;
 * such a candidate is not compiled or run but evaluated as invalid, with
 * failure as its feedback. The optimizer allocates all of them; free them
 * with mapopt_candidate_clear. tag is the optimizer's own; tell gives it
 * back.
 */
typedef struct mapopt_candidate {
  uint16_t *choice;
  size_t nchoice; /* entries of choice (0 when NULL) */
  char *text;
  char *note;
  char *failure;
  int64_t tag;
} mapopt_candidate;

MAPOPT_API void mapopt_candidate_clear(mapopt_ctx *ctx, mapopt_candidate *c);

/* What happened to a candidate. */
typedef enum mapopt_tune_status {
  MAPOPT_TUNE_OK,      /* ran to completion: score is meaningful */
  MAPOPT_TUNE_INVALID, /* the text does not compile */
  MAPOPT_TUNE_FAILED,  /* the run failed (OOM, mapping error, ...) */
  MAPOPT_TUNE_TIMEOUT, /* the run exceeded its time limit */
  MAPOPT_TUNE_CRASH,   /* the program died (real runs) */
  /* Real runs with screening (mapopt_tune_command.screen): simulated on
   * the machine model and not run, its predicted score below the round's
   * best K. Recorded, never told: the optimizer is told the prediction
   * (mapopt_evaluation.predicted). It never becomes the best. */
  MAPOPT_TUNE_SCREENED
} mapopt_tune_status;

/* "ok", "invalid", "failed", "timeout", "crash", "screened". */
MAPOPT_API const char *mapopt_tune_status_name(mapopt_tune_status s);

struct mapopt_findings; /* AutoGuide's findings (include/mapopt/guide.h) */
struct mapopt_sim_result;

/* An evaluation, as the driver tells it to the optimizer. */
typedef struct mapopt_evaluation {
  mapopt_tune_status status;
  double score;         /* throughput (higher is better); 0 unless OK */
  double elapsed_s;     /* 0 unless OK */
  double lower_bound_s; /* 0 when unknown */
  const char *feedback; /* AutoGuide's text at the run's level, or NULL */
  /* What the run's feedback level lets an optimizer see (mapopt_tune_run
   * filters it): the findings (NULL at raw, or when not analysed), their
   * structured edits (suggest and full only), and the simulator's result
   * with its profile (full only; simulated runs only). */
  const struct mapopt_findings *findings;
  bool edits;
  const struct mapopt_sim_result *result;
  bool duplicate; /* the text had been evaluated: this is the record */
  /* Real runs: the runs made (racing, docs/real.md, "Noise") and the
   * confidence interval of score, their median. Simulated: runs 0 and the
   * interval [score, score]. */
  int runs;
  double score_low, score_high;
  /* Screened out (mapopt_tune_command.screen): status and score are the
   * machine model's prediction, not a measurement (docs/real.md section
   * 15). */
  bool predicted;
} mapopt_evaluation;

typedef struct mapopt_optimizer mapopt_optimizer;

/*
 * The settings of the `llm` optimizer (docs/llm.md), which asks a chat
 * model for whole mappers. Everything is borrowed and must outlive the
 * optimizer.
 */
typedef struct mapopt_tune_llm {
  /* The client: server, model, key, temperature, limits and prices
   * (mapopt_llm_config_init, _from_env, then your settings). Its samples
   * and seed are not read: each step asks for the optimizer's batch of
   * samples (mapopt_optimizer_options.batch), and the retry jitter is
   * seeded with the optimizer's seed. */
  mapopt_llm_config client;
  /* Earlier attempts shown in each prompt; 0: MAPOPT_LLM_DEFAULT_HISTORY. */
  size_t history;
  /* The transport; NULL: a libcurl one, made and freed by the optimizer. */
  mapopt_llm_transport *transport;
  /* Accept a reply whose mapper has a portability warning (P01-P28: the
   * DSL mapper of Legion would not load it or would read it differently,
   * docs/legion.md). By default such a reply is an invalid mapper. Not
   * part of what identifies a run. */
  bool allow_unportable;
} mapopt_tune_llm;

typedef struct mapopt_optimizer_options {
  uint64_t seed;
  int64_t budget; /* evaluations the run will make (some plan by it) */
  /* Candidates proposed per batch (0: the optimizer's default). A batch is
   * planned from what was told before it began, so how many candidates a
   * caller evaluates at once never changes what is proposed. For llm, the
   * samples of one prompt. */
  int batch;
  /* The llm optimizer's settings (required by it, ignored by the others). */
  const mapopt_tune_llm *llm;
  /* Set (by a signal handler) to stop: the llm optimizer abandons its
   * chat call and its ask fails (MAPOPT_EIO). NULL: never (unless the llm
   * client's configuration has a stop of its own). */
  const volatile sig_atomic_t *stop;
} mapopt_optimizer_options;

/* The optimizers' names, NULL-terminated: guided, random, opentuner, ccd,
 * llm. */
MAPOPT_API const char *const *mapopt_optimizer_names(void);

/*
 * Creates the optimizer called name over space (which must outlive it).
 * MAPOPT_ENOTFOUND for an unknown name; MAPOPT_EINVAL for settings the
 * optimizer refuses (llm: none given, or a client configuration that
 * mapopt_llm_config_check refuses: call it first for the reason);
 * MAPOPT_EIO when llm cannot make its libcurl transport; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_optimizer_new(mapopt_ctx *ctx, const char *name,
                                              const mapopt_space *space,
                                              const mapopt_optimizer_options *o,
                                              mapopt_optimizer **out);
MAPOPT_API void mapopt_optimizer_free(mapopt_optimizer *opt);

/*
 * Proposes the next candidate into *out (cleared first). Candidates come in
 * batches: within a batch, asks may run ahead of tells (evaluate them in
 * parallel, then tell each). MAPOPT_ENOTFOUND means "nothing now": with
 * candidates of the batch still untold, tell them and ask again; with none
 * pending, the optimizer is done (a small space exhausted, a converged
 * descent, a model that only repeats itself). MAPOPT_EIO: the optimizer
 * cannot propose (llm: its server failed three prompts in a row, or
 * refused one); mapopt_optimizer_last_error says why, and a later ask may
 * succeed. MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_optimizer_ask(mapopt_optimizer *opt,
                                              mapopt_candidate *out);
/*
 * Reports the evaluation of the oldest candidate asked and not yet told
 * (tell in the order of the asks). The candidate and evaluation are read
 * during the call only. MAPOPT_EINVAL when c is not that candidate,
 * MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_optimizer_tell(mapopt_optimizer *opt,
                                               const mapopt_candidate *c,
                                               const mapopt_evaluation *e);
/* Why the last ask failed with MAPOPT_EIO ("" when it did not); valid
 * until the next ask. Never contains an API key. */
MAPOPT_API const char *mapopt_optimizer_last_error(const mapopt_optimizer *opt);

/* ---- the tuning driver -----------------------------------------------------
 *
 * mapopt_tune_run is the tuning loop: it derives the space, creates the
 * optimizer, and asks, evaluates (in parallel), records and tells until the
 * budget is spent. Every evaluation is recorded in the tuning database the
 * moment it finishes, so a killed process loses none, and an interrupted
 * run can be resumed: a fresh optimizer of the same seed is replayed the
 * recorded evaluations and the run continues where it stopped.
 *
 * Every candidate is simulated -- or, for real runs (problem.command),
 * run by a command (mapopt/eval.h) -- and AutoGuide (mapopt/guide.h)
 * analyses the run's raw log or output (or, for a candidate that does not
 * compile, its compiler diagnostics) with the result when simulated, the
 * exit status, signal and timeout when run, the mapper, the run and the
 * machine. The optimizer is told the findings and the result; the feedback
 * text at the run's level is recorded and told with them. A real run's
 * output is recorded too, so that resuming one replays its findings from
 * the record instead of running the program again.
 *
 * Candidates are deduplicated by their canonical text (mapopt_dsl_format of
 * the compiled candidate; a candidate that does not compile by its raw
 * text): a duplicate is not run again and does not consume budget; the
 * recorded evaluation is told with duplicate = true (without findings or
 * result). An optimizer that proposes MAPOPT_TUNE_MAX_DUPLICATES duplicates
 * in a row has exhausted what it can find, and the run ends.
 *
 * Determinism: the driver asks until the optimizer answers
 * MAPOPT_ENOTFOUND or until it holds `jobs` new candidates (fewer when the
 * budget runs out), evaluates them on `jobs` threads, tells the results in
 * the order asked, and repeats; MAPOPT_ENOTFOUND with nothing pending ends
 * the run. The optimizers plan fixed batches (mapopt_optimizer_options),
 * so what they propose never depends on jobs or on timing: the same
 * settings give the same evaluations whatever jobs is.
 *
 * The llm optimizer: its chat calls (tokens, latency, cost) and the
 * replies they brought are recorded as soon as they are made; a resumed
 * llm run replays the recorded replies instead of asking the model again.
 * A reply without a mapper costs its iteration (invalid); a prompt that
 * got no reply costs none, and a server that keeps failing interrupts the
 * run (end interrupted, the reason as a diagnostic).
 */

/* Duplicates proposed in a row that end a run. */
#define MAPOPT_TUNE_MAX_DUPLICATES 1000

/* The tuning database: SQLite in WAL mode; its schema is in docs/tuning.md.
 */
typedef struct mapopt_tune_db mapopt_tune_db;

/*
 * Opens the database at path for writing, creating the file and its tables
 * when it is missing or empty, and bringing a database of an older format
 * (mapopt-tune/1 or /2) up to date. Nothing is written before the file is
 * known to be empty or a mapopt tuning database: a foreign SQLite database
 * or one of a newer format is refused unchanged. MAPOPT_EINVAL for a NULL
 * argument; MAPOPT_EIO with a diagnostic naming path when it cannot be
 * opened or created, or is not a mapopt tuning database; MAPOPT_ENOMEM.
 * The context must outlive the database; close it with
 * mapopt_tune_db_close.
 */
MAPOPT_API mapopt_status mapopt_tune_db_open(mapopt_ctx *ctx, const char *path,
                                             mapopt_diags *diags,
                                             mapopt_tune_db **out);
/*
 * Opens an existing database only to read it (mapopt report): it never
 * writes the file, reads every format from mapopt-tune/1 on as it is, and
 * works on a file or folder the caller may not write. An empty file is
 * refused. Errors as mapopt_tune_db_open; the writing functions fail on
 * it (MAPOPT_EIO).
 */
MAPOPT_API mapopt_status mapopt_tune_db_open_read(mapopt_ctx *ctx,
                                                  const char *path,
                                                  mapopt_diags *diags,
                                                  mapopt_tune_db **out);
MAPOPT_API void mapopt_tune_db_close(mapopt_tune_db *db);

/*
 * Real runs (docs/real.md): each candidate, and each yardstick, is run by a
 * command instead of simulated. Every run gets timeout_s seconds when it is
 * positive; otherwise the limit follows policy (mapopt_eval_timeout; zero
 * fields take its defaults: 10 times the wall time of one run of the
 * fastest successful evaluation so far, at least 5 s, and 600 s before any
 * evaluation has succeeded).
 */
typedef struct mapopt_tune_command {
  const mapopt_eval_options *eval; /* the command and its options */
  double timeout_s;
  mapopt_eval_timeout_policy policy;
  /* Racing (docs/real.md, "Noise"): every candidate runs eval->repeat
   * times at least and up to repeat_max (0: MAPOPT_TUNE_REPEAT_MAX, at
   * least eval->repeat) while its interval does not lie wholly below the
   * best's; the baselines always get repeat_max. Then the best and the
   * baselines run interleaved check_rounds times (0: MAPOPT_TUNE_CHECK;
   * -1: no final check). */
  int repeat_max;
  int check_rounds;
  /* Screening (docs/real.md section 15), 0: none. Each round the optimizer
   * proposes 4 * screen candidates, each is simulated on the problem's
   * machine (the model), and only the screen best by predicted score run;
   * the others are recorded as MAPOPT_TUNE_SCREENED. The budget then
   * counts the real runs. */
  int screen;
} mapopt_tune_command;

#define MAPOPT_TUNE_REPEAT_MAX 10
/* The final check's rounds: the fewest whose interval of the median
 * ratio, [min, max], reaches the 95% of every other interval (1 - 2^(1-n):
 * 96.9% for 6 rounds, 93.8% for 5). */
#define MAPOPT_TUNE_CHECK 6

/* What the intervals say of a speedup. */
typedef enum mapopt_tune_verdict {
  MAPOPT_TUNE_UNKNOWN, /* nothing to compare */
  MAPOPT_TUNE_FASTER,  /* the interval lies wholly above 1 */
  MAPOPT_TUNE_SLOWER,  /* wholly below 1 */
  MAPOPT_TUNE_SAME     /* it holds 1: within noise */
} mapopt_tune_verdict;

/* "unknown", "faster", "slower", "same"; NULL out of range. */
MAPOPT_API const char *mapopt_tune_verdict_name(mapopt_tune_verdict v);

/* The best mapper against a baseline: ratio = best's score over the
 * baseline's, with its interval. Simulated, the ratio of the two scores
 * (low = high = ratio). Real runs: the median of the final check's
 * per-round ratios and its interval when the check was made (rounds > 0),
 * else from the two evaluations' intervals; the verdict says "faster"
 * only when both the evaluations' and the check's intervals do. */
typedef struct mapopt_tune_speedup {
  double ratio, low, high; /* 0: unknown */
  int rounds;              /* of the final check; 0: none */
  mapopt_tune_verdict verdict;
} mapopt_tune_speedup;

/* What is tuned. Everything is borrowed and must outlive the call. */
typedef struct mapopt_tune_problem {
  /* The machine and the run instantiated on it (mapopt_sim_instantiate);
   * candidates are compiled against mapopt_sim_shape(machine, run). */
  const mapopt_machine *machine;
  const mapopt_app_run *run;
  /* The texts of the expert and default mappers: the yardsticks every
   * result is compared with, evaluated before the first candidate (not
   * counted in the budget) and never shown to the optimizer. expert NULL:
   * none. default_mapper NULL: the runtime's defaults, as the space
   * renders them, so that every run has the default mapper as its
   * baseline (docs/tuning.md). */
  const char *expert;
  const char *default_mapper;
  /* NULL: candidates are simulated on machine. Otherwise they are run by
   * this command; machine and run still give the search space and the
   * shape candidates are compiled for, so they must describe what the
   * command runs (its processors per rank and its launch sizes). The
   * command's settings (not where it keeps its files) are part of the
   * run's identity (runs.evaluator). */
  const mapopt_tune_command *command;
} mapopt_tune_problem;

/* What identifies a run. All of it is recorded with the run; a resumed run
 * is the latest recorded one that matches every field. */
typedef struct mapopt_tune_config {
  const char *app;       /* as named, without its size: "circuit", a path */
  const char *size;      /* the size spec after ':', or NULL */
  const char *machine;   /* as named: "p100x4", "lassen:nodes=2", a path */
  const char *optimizer; /* one of mapopt_optimizer_names() */
  uint64_t seed;
  int64_t budget; /* evaluations, >= 1 */
  /* The optimizer's batch (mapopt_optimizer_options.batch; 0: its
   * default). It changes what is proposed, so it is recorded. */
  int batch;
  const char *feedback; /* "raw", "explain", "suggest", "full"; NULL: full */
  /* A mapper to start from (mapopt_space_options.base), or NULL. */
  const char *start_file;
  const char *start_text;
  size_t start_len;
  /* The llm optimizer's settings (NULL for the others): its model,
   * temperature and history identify the run with the fields above (the
   * server, key, limits and prices do not). */
  const mapopt_tune_llm *llm;
} mapopt_tune_config;

/* One evaluation told to the optimizer, for progress displays. Valid
 * during the callback only. */
typedef struct mapopt_tune_progress {
  int64_t run;
  int64_t iteration; /* 0-based, in the order asked */
  int64_t budget;
  bool replayed; /* recorded before the run was interrupted */
  const mapopt_candidate *candidate;
  const mapopt_evaluation *evaluation;
  int64_t best; /* iteration of the best evaluation so far, -1 none */
  double best_score;
  double expert_score;  /* 0 when there is none */
  double default_score; /* 0 when it failed */
  /* What the budget counts so far: with screening the real runs (a
   * screened-out evaluation's is predicted), else iteration + 1. */
  int64_t spent;
  bool screening;
} mapopt_tune_progress;

typedef void (*mapopt_tune_progress_fn)(void *ud,
                                        const mapopt_tune_progress *p);

/* The most evaluations one tuning run makes at once (its worker threads). */
#define MAPOPT_TUNE_MAX_JOBS 64

typedef struct mapopt_tune_options {
  int jobs;    /* evaluations at once, 1 to MAPOPT_TUNE_MAX_JOBS; 0: 1 */
  bool resume; /* continue the latest matching run, if any (a finished one
                  is returned as it is) */
  /* Set (by a signal handler) to stop: the evaluations in flight finish
   * and are recorded, none is started. NULL: never. */
  const volatile sig_atomic_t *stop;
  mapopt_tune_progress_fn progress; /* called in the calling thread */
  void *progress_ud;
} mapopt_tune_options;

/* What the chat calls of a run (the llm optimizer's) came to; all zero
 * for the other optimizers. */
typedef struct mapopt_tune_llm_usage {
  int64_t calls;        /* chat calls, retries inside a call not counted */
  int64_t failed_calls; /* calls that got no reply (error, timeout, ...) */
  int64_t replies;      /* choices received: one candidate each */
  int64_t prompt_tokens, completion_tokens;
  double latency_s; /* summed over the calls, retry waits included */
  double cost;      /* by the prices given (0 without) */
} mapopt_tune_llm_usage;

typedef enum mapopt_tune_end {
  MAPOPT_TUNE_END_DONE,        /* the budget is spent */
  MAPOPT_TUNE_END_EXHAUSTED,   /* the optimizer had nothing new to propose */
  MAPOPT_TUNE_END_INTERRUPTED, /* stopped; resume it with options.resume */
} mapopt_tune_end;

/* "done", "exhausted", "interrupted" (as recorded in the database); NULL
 * out of range. */
MAPOPT_API const char *mapopt_tune_end_name(mapopt_tune_end e);

/* What a run came to. The strings are owned by the outcome: free them with
 * mapopt_tune_outcome_clear. */
typedef struct mapopt_tune_outcome {
  int64_t run; /* its id in the database */
  mapopt_tune_end end;
  bool resumed;        /* a recorded run was continued (or found complete) */
  int64_t evaluations; /* recorded for the run */
  int64_t replayed;    /* of which were recorded before this call */
  int64_t duplicates;  /* proposals not run: their text had been */
  int64_t screened;    /* of the evaluations: screened out, not run */
  int64_t best;        /* iteration of the best successful one, -1 none */
  double best_score;   /* its metric (throughput: higher is better) */
  double best_elapsed_s;
  double lower_bound_s; /* no mapper can beat it; 0 when unknown */
  char *best_text;      /* NULL when none */
  char *best_note;
  char *unit;           /* the metric's unit, NULL when unknown */
  double expert_score;  /* 0: no expert mapper, or it failed */
  double default_score; /* likewise */
  /* The intervals of the best's and the baselines' scores (equal to the
   * score when simulated) and the best against each baseline. */
  double best_low, best_high;
  double expert_low, expert_high, default_low, default_high;
  mapopt_tune_speedup vs_expert, vs_default;
  mapopt_tune_llm_usage llm;
} mapopt_tune_outcome;

/*
 * Runs (or resumes) a tuning run of problem under config, recording it in
 * db. *out is written in every case where the run was created (check
 * out->end). Errors: MAPOPT_EINVAL for a NULL argument, jobs outside 0 to
 * MAPOPT_TUNE_MAX_JOBS, a bad config (unknown optimizer or feedback level,
 * budget < 1, batch < 0; for llm no
 * settings, or a client configuration mapopt_llm_config_check refuses) or a
 * resumed run whose replay differs from its record (the model or mapopt
 * changed), with a diagnostic; MAPOPT_ESYNTAX / MAPOPT_ELOAD when the
 * start mapper does not compile (its diagnostics); MAPOPT_EIO for a
 * database error (a diagnostic naming the file), or a command that cannot
 * be run at all (it could not be started, or its private directory made:
 * a diagnostic with the reason); MAPOPT_ENOMEM. A run that fails after it
 * was recorded is marked interrupted, so it can be resumed.
 */
MAPOPT_API mapopt_status mapopt_tune_run(mapopt_ctx *ctx, mapopt_tune_db *db,
                                         const mapopt_tune_problem *problem,
                                         const mapopt_tune_config *config,
                                         const mapopt_tune_options *opts,
                                         mapopt_diags *diags,
                                         mapopt_tune_outcome *out);
/* Frees the outcome's strings and resets it (NULL is ignored). */
MAPOPT_API void mapopt_tune_outcome_clear(mapopt_tune_outcome *o);

/* ---- reading the database ------------------------------------------------ */

/* A recorded run, for reports. Strings and scores are owned by the history
 * that holds it. */
typedef struct mapopt_tune_run_info {
  int64_t id;
  const char *app, *size, *machine, *optimizer, *feedback;
  const char *start_file; /* NULL when none */
  const char *version;    /* of mapopt that recorded it */
  const char *status;     /* running, interrupted, done, exhausted */
  const char *evaluator;  /* NULL: simulated; else the command's settings
                             as JSON (real runs) */
  const char *unit;       /* NULL when unknown */
  uint64_t seed;
  int64_t budget;
  int batch;                          /* 0: the optimizer's default */
  double expert_score, default_score; /* 0: none */
  double started, finished; /* Unix time; finished is 0 while unfinished */
  int64_t duplicates;
  int64_t evaluations; /* recorded */
  /* scores[i]: the metric of iteration i, 0 unless it succeeded (or was
   * never recorded: an interrupted run's missing ones); niterations is one
   * past the last recorded iteration. */
  int64_t niterations;
  const double *scores;
  int64_t best; /* iteration of the best successful one, -1 none */
  double best_score, best_elapsed_s, lower_bound_s;
  /* Of the evaluations: those whose mapper compiled (not invalid) and
   * those that ran to completion (ok). */
  int64_t compiled, succeeded;
  int64_t screened; /* screened out by the model: not run */
  /* The llm optimizer's settings (NULL and 0 for the others) and its
   * calls. */
  const char *llm_model;
  double temperature;
  int64_t history;
  mapopt_tune_llm_usage llm;
} mapopt_tune_run_info;

typedef struct mapopt_tune_history mapopt_tune_history;

/* Loads every run (oldest first) with its scores into *out (free it with
 * mapopt_tune_history_free). MAPOPT_EINVAL for a NULL argument,
 * MAPOPT_EIO (a diagnostic naming the file), MAPOPT_ENOMEM. */
MAPOPT_API mapopt_status mapopt_tune_db_history(mapopt_tune_db *db,
                                                mapopt_diags *diags,
                                                mapopt_tune_history **out);
MAPOPT_API size_t mapopt_tune_history_count(const mapopt_tune_history *h);
/* Run i, oldest first; NULL past the end. Valid while h lives. */
MAPOPT_API const mapopt_tune_run_info *
mapopt_tune_history_run(const mapopt_tune_history *h, size_t i);
MAPOPT_API void mapopt_tune_history_free(mapopt_tune_history *h);

/* A recorded evaluation with its texts; every string is owned by it. */
typedef struct mapopt_tune_eval_info {
  int64_t run, iteration;
  mapopt_tune_status status;
  double metric, elapsed_s, lower_bound_s; /* 0 when unknown */
  double wall_s;                           /* what evaluating it took */
  double finished;                         /* Unix time */
  char *text, *hash, *feedback, *note;     /* feedback, note: NULL if none */
  /* A real run's: what its last run printed (as captured, NULL for a
   * simulated evaluation), its exit status (-1: none), the signal that
   * ended it (0: none) and whether it reached its time limit. */
  char *output;
  int exit_status, signal;
  bool timed_out;
  /* A real run's runs (0: simulated, or recorded before mapopt-tune/4),
   * the interval of metric (equal to it then) and every run's score
   * ("%.17g" each, separated by spaces; NULL when none). */
  int runs;
  double score_low, score_high;
  char *scores;
  /* With screening: the model's predicted score, in the run's unit (the
   * default mapper's measured over predicted score scales it; 0: predicted
   * to fail); -1 without screening. A prediction, never a metric. */
  double predicted;
} mapopt_tune_eval_info;

/* Iteration `iteration` of run `run` into *out, freed with
 * mapopt_tune_eval_info_free. MAPOPT_EINVAL for a NULL argument,
 * MAPOPT_ENOTFOUND when not recorded, MAPOPT_EIO, MAPOPT_ENOMEM. */
MAPOPT_API mapopt_status mapopt_tune_db_evaluation(mapopt_tune_db *db,
                                                   int64_t run,
                                                   int64_t iteration,
                                                   mapopt_diags *diags,
                                                   mapopt_tune_eval_info **out);
MAPOPT_API void mapopt_tune_eval_info_free(mapopt_ctx *ctx,
                                           mapopt_tune_eval_info *e);

/* ---- calibrating the model to real runs (calibrate.c) --------------------
 *
 * docs/real.md, "Calibrating the model": the real runs of one application
 * on one machine, each a mapper and its measured time, fitted by scaling
 * the machine's figures in four groups, one factor a group, and the
 * efficiencies of each (task, processor kind) kernel that the fitted
 * mappers run, one factor a kernel. Every third run, in the order given,
 * is held out of the fit and judges it.
 */

/* The groups of the machine's figures, each scaled by one factor. */
typedef enum mapopt_calib_group {
  MAPOPT_CALIB_RATES,     /* the processors' gflops_* */
  MAPOPT_CALIB_MEMORY,    /* the affinities' bw_gbs */
  MAPOPT_CALIB_CHANNELS,  /* the channels' bandwidths (latencies inverse) */
  MAPOPT_CALIB_OVERHEADS, /* the processors' and the runtime's per task */
  MAPOPT_CALIB_NGROUPS
} mapopt_calib_group;

/* "processor rates", ..., "per-task overheads"; NULL out of range. */
MAPOPT_API const char *mapopt_calib_group_name(mapopt_calib_group g);

/* One real run: the mapper it ran (compiled for the run's shape) and its
 * measured time, the inverse of its score (> 0). */
typedef struct mapopt_calib_sample {
  const mapopt_program *mapper;
  double measured;
} mapopt_calib_sample;

/* What is fitted: the starting model and the runs, in the order recorded
 * (which decides the held-out ones). */
typedef struct mapopt_calib_problem {
  const mapopt_machine *machine;
  const mapopt_app *app;
  const mapopt_app_options *app_options; /* the runs' size */
  const char *unit;                      /* the runs' metric unit */
  const char *name; /* the runs in messages: "summa:small on p100x4" */
  const mapopt_calib_sample *samples;
  size_t nsamples;
} mapopt_calib_problem;

/* The held-out runs' median relative error of the predicted time and
 * Kendall's tau-b of predicted against measured times. */
typedef struct mapopt_calib_figures {
  double median_error, tau;
} mapopt_calib_figures;

/* The fitted factor of one kernel, the variant of task for kind: it
 * scales the variant's flops_eff and mem_eff, each to at most 1. */
typedef struct mapopt_calib_kernel {
  const char *task;
  mapopt_proc_kind kind;
  double factor;
  double flops_eff_before, flops_eff_after;
  double mem_eff_before, mem_eff_after;
} mapopt_calib_kernel;

typedef struct mapopt_calib_result {
  size_t nfitted, nheld_out;
  /* The starting model; the machine's groups fitted alone (with their
   * factors); the groups and the kernels fitted together (the joint fit);
   * and the model chosen: the joint fit when it lowers the held-out median
   * error by more than 0.1 point (joint_chosen), else the groups alone. */
  mapopt_calib_figures before, machine_alone, joint, after;
  double machine_alone_factor[MAPOPT_CALIB_NGROUPS];
  double factor[MAPOPT_CALIB_NGROUPS]; /* the chosen model's */
  bool joint_chosen;
  bool app_changed; /* the joint fit is chosen and scales some kernel */
  /* Every kernel a fitted mapper runs, in the app's task and variant
   * order, with its factor in the joint fit (chosen or not). */
  size_t nkernels;
  mapopt_calib_kernel *kernels;
  /* The chosen model: `mapopt-machine/1` and `mapopt-app/1` JSON (the
   * application unchanged unless app_changed), freed with the result. */
  char *machine_json, *app_json;
} mapopt_calib_result;

/*
 * Fits p's model to its samples into *out (mapopt_calib_result_free).
 * Errors: MAPOPT_EINVAL for a NULL argument, fewer than 2 held-out
 * samples, or a sample that does not simulate on the starting model or is
 * scored in another unit than p->unit (each with an error in diags; a
 * candidate model on which one does not simulate is passed over, its
 * reason left in diags); MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_calibrate(mapopt_ctx *ctx,
                                          const mapopt_calib_problem *p,
                                          mapopt_diags *diags,
                                          mapopt_calib_result **out);
MAPOPT_API void mapopt_calib_result_free(mapopt_calib_result *r);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_TUNE_H */
