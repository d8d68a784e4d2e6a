/*
 * The mapopt command-line program: shared helpers of the subcommands.
 * The CLI uses only the public API, through the umbrella header.
 */
#ifndef MAPOPT_SRC_CLI_CLI_H
#define MAPOPT_SRC_CLI_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mapopt/mapopt.h"

/* Exit statuses of every command. */
enum { EXIT_VALID = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

typedef struct cli_command {
  const char *name;
  const char *summary;
  const char *usage; /* full --help text */
  int (*run)(int argc, char **argv);
} cli_command;

/*
 * The files of the CLI call one another without a circle (style/calls
 * checks it); from the top: main.c (mapopt's own options and the
 * dispatch), help.c (manual pages and completion), commands.c (the table),
 * the commands (cmd_*.c) and what they share (pipeline.c, tune_common.c,
 * eval_common.c, progress.c), then compile.c, context.c, json.c,
 * options.c and, at the bottom, errors.c.
 */

/* ---- the commands (commands.c) ------------------------------------------- */

/* The commands, and the one called name (NULL when there is none). */
const cli_command *cli_commands(size_t *n);
const cli_command *cli_find_command(const char *name);
/* The command's name that name was probably meant to be; NULL: none is
 * close. */
const char *cli_suggest_command(const char *name);

/* ---- manual pages and completion from --help (help.c) -------------------- */

/* The manual page (roff) of command c, or of mapopt itself when c is NULL
 * (main_help: the text of `mapopt --help`). */
void cli_write_man(FILE *f, const cli_command *c, const char *main_help);
/* The bash completion script: commands, options, presets, applications. */
void cli_write_completion(FILE *f, const char *main_help);

/* ---- messages on stderr (errors.c) --------------------------------------- */

/* Prints the formatted message and a newline on stderr, its control
 * characters written as \xNN (names from the command line or a file may
 * hold terminal escape sequences). Every message of the CLI that quotes
 * such a name goes through it. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "mapopt NAME: MESSAGE" and a hint to stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints every diagnostic of diags, GCC style, to f. */
void cli_print_diags(FILE *f, const mapopt_diags *diags, size_t from);

/* ---- arguments (options.c) ----------------------------------------------- */

enum { CLI_MAX_OPTIONS = 64, CLI_OPTION_LEN = 32 };
/* The options a --help text names ("--machine", "-i"), each once, in the
 * order they first appear, into names (at most CLI_MAX_OPTIONS). */
size_t cli_usage_options(const char *usage, char (*names)[CLI_OPTION_LEN]);
/* The --help text of the command being run, whose options an unknown
 * option is compared with; main() sets it before it runs the command (the
 * commands do not look themselves up in the table, which refers to
 * them). */
void cli_set_command_usage(const char *usage);
/* "unknown option 'OPT'" as command cmd's usage error, with the option of
 * its --help that was probably meant. Returns EXIT_USAGE. */
int cli_unknown_option(const char *cmd, const char *opt);
/* Takes an argument that matched none of the command's options: an unknown
 * option is an error, else it becomes the command's one operand *slot
 * (`what` names the operand in the error for a second one). Returns
 * EXIT_VALID or EXIT_USAGE. */
int cli_operand(const char *cmd, const char *arg, const char **slot,
                const char *what);
/* The value of option argv[*i] when it is one of valued (a NULL-terminated
 * list): argv[*i + 1], *i then moving past it; NULL for any other
 * argument. EXIT_VALID, or EXIT_USAGE (reported as command cmd's) for a
 * valued option with nothing after it. */
int cli_option_value(const char *cmd, const char *const *valued, int argc,
                     char **argv, int *i, const char **val);
/* s as a whole integer in [lo, hi] into *out; false otherwise. */
bool cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* s as a whole number in [lo, hi] into *out; false otherwise (NaN too). */
bool cli_parse_double(const char *s, double lo, double hi, double *out);
/* True when argv[i] is -h or --help. */
bool cli_is_help(const char *arg);
/* --region-keys auto|names|positions|both (mapopt_region_keys_mode); false
 * for anything else. */
bool cli_region_keys(const char *arg, mapopt_region_keys_mode *mode);

/* ---- contexts (context.c) ------------------------------------------------ */

/* Opens a context and a diagnostics list for one command; false when out
 * of memory (nothing to free then). */
bool cli_open(mapopt_ctx **ctx, mapopt_diags **diags);

/* A memory budget for a context: allocations beyond limit bytes in use
 * fail (the library then returns MAPOPT_ENOMEM), and hit records that the
 * budget, not the system, said no. */
typedef struct cli_budget {
  int64_t limit;
  int64_t live;
  bool hit;
} cli_budget;
/* cli_open with every allocation of the context counted against b, which
 * must outlive the context. */
bool cli_open_budget(mapopt_ctx **ctx, mapopt_diags **diags, cli_budget *b);
void cli_close(mapopt_ctx *ctx, mapopt_diags *diags);

/* ---- JSON on stdout (json.c) --------------------------------------------- */

struct json_t;
/* Prints {"key": value} as indented JSON on stdout; takes value. */
void cli_print_json(const char *key, struct json_t *value);
/* Prints value as indented JSON on stdout; takes it. */
void cli_dump_json(struct json_t *value);

/* ---- mappers and machines (compile.c) ------------------------------------ */

/* Reads all of standard input (NUL-terminated; free it with free()) into
 * *text; NULL when out of memory. */
char *cli_read_stdin(size_t *len);
/* Reads and compiles the mapper at path with base's options (its file
 * name replaced by path); every failure, I/O included, is in diags. */
mapopt_status cli_compile_file(mapopt_ctx *ctx, const char *path,
                               const mapopt_dsl_options *base,
                               mapopt_diags *diags, mapopt_program **prog);
/* --machine ARG: a preset, a machine JSON file or a one-line shape, of
 * which the DSL needs only the shape. On failure prints the diagnostic and
 * returns false: the command then exits with EXIT_INVALID, as every command
 * does for a machine it cannot load. */
bool cli_machine_shape(const char *arg, mapopt_machine_shape *shape);

/* ---- the progress line (progress.c) -------------------------------------- */

typedef struct cli_progress cli_progress;
/* Starts the progress line of command cmd (a literal) when stderr is a
 * terminal (or MAPOPT_PROGRESS=1); NULL otherwise, and every function
 * below then does nothing. */
cli_progress *cli_progress_start(const char *cmd);
/* What the command does now ("simulating", a literal); NULL erases the
 * line, before the command prints its results. */
void cli_progress_phase(cli_progress *p, const char *phase);
/* The simulator's progress callback (mapopt_sim_options.progress), with
 * the progress line as ud. */
void cli_progress_sim(void *ud, int64_t ops_done, int64_t ops, int64_t now_ns);
/* Erases the line and ends its thread. */
void cli_progress_stop(cli_progress *p);

/* ---- the simulation pipeline (pipeline.c) -------------------------------- */

/* What to simulate: the command-line arguments of a simulating command. */
typedef struct cli_pipeline_args {
  const char *machine;    /* --machine; NULL: p100x4 */
  const char *app;        /* APP[:SIZE,PARAM=V...] */
  const char *size;       /* --size, or NULL */
  int64_t iterations;     /* < 0: the app's */
  int64_t warmup;         /* < 0: the default */
  const char *mapper;     /* a mapper file; NULL: the built-in app's expert */
  mapopt_dsl_options dsl; /* print and trace callbacks; the rest is set */
  int64_t max_ops, max_bytes; /* the run's size limits; 0: the defaults */
  bool limit_flags;           /* the command has --max-ops and --max-bytes */
  cli_progress *progress;     /* the command's progress line, or NULL */
} cli_pipeline_args;

/* A compiled mapper with its text (which AutoGuide quotes). */
typedef struct cli_mapper {
  char file[300]; /* its name in diagnostics */
  char *text;
  size_t len;
  bool owned; /* text was read from a file (else compiled in) */
  mapopt_program *prog;
} cli_mapper;

/* Everything a simulation holds, freed by cli_pipeline_close. */
typedef struct cli_pipeline {
  mapopt_machine *machine;
  mapopt_app *app;
  const char *spec; /* the size spec the run has (in the args), or NULL */
  mapopt_app_run *run;
  mapopt_machine_shape shape; /* the run's, that the mapper sees */
  cli_mapper mapper;
  mapopt_sim_result *res; /* after cli_pipeline_run */
  cli_progress *progress; /* not owned */
} cli_pipeline;

/*
 * Resolves the machine and the app and instantiates the run, without a
 * mapper (p->prog stays NULL). EXIT_VALID; EXIT_INVALID with the reason in
 * diags; EXIT_USAGE (a size both after ':' and in --size, reported as
 * command cmd). p must be closed in every case.
 */
int cli_pipeline_setup(mapopt_ctx *ctx, const char *cmd,
                       const cli_pipeline_args *a, mapopt_diags *diags,
                       cli_pipeline *p);
/*
 * cli_pipeline_setup, then compiles the mapper for the run; prints the
 * mapper's warnings to stderr and clears diags. Returns as
 * cli_pipeline_setup does (EXIT_INVALID too for a mapper with errors).
 */
int cli_pipeline_open(mapopt_ctx *ctx, const char *cmd,
                      const cli_pipeline_args *a, mapopt_diags *diags,
                      cli_pipeline *p);
/* Compiles the mapper at path (NULL: the built-in app's expert) for p's
 * run, its shape and task names, with base's callbacks. EXIT_VALID, or
 * EXIT_INVALID with the reason in diags. m must be closed in every case. */
int cli_mapper_open(mapopt_ctx *ctx, const cli_pipeline *p, const char *path,
                    const mapopt_dsl_options *base, mapopt_diags *diags,
                    cli_mapper *m);
void cli_mapper_close(cli_mapper *m);
/* Simulates the opened pipeline into p->res (mapopt_sim_run's errors),
 * showing its progress. */
mapopt_status cli_pipeline_run(mapopt_ctx *ctx, cli_pipeline *p,
                               const mapopt_sim_options *opts);
void cli_pipeline_close(cli_pipeline *p);

/* ---- tuning: what space, tune and bench work on (tune_common.c) ---------- */

/* An application run on a machine, set up for tuning. */
typedef struct cli_target {
  cli_pipeline sim;   /* machine, app, run and its size spec; no mapper */
  char *name;         /* the app argument without its size: "circuit" */
  const char *expert; /* the shipped expert and default mappers of a */
  const char *deflt;  /* built-in application, else NULL */
} cli_target;

/* cli_pipeline_setup of app_arg (size: its ":spec", else size) on the
 * machine machine_arg for command cmd, and the app's shipped mappers.
 * Returns as cli_pipeline_setup does; t must be closed in every case. */
int cli_target_open(mapopt_ctx *ctx, const char *cmd, const char *app_arg,
                    const char *size, const char *machine_arg,
                    mapopt_diags *diags, cli_target *t);
void cli_target_close(cli_target *t);

/* The options mapopt tune and mapopt bench share: --machine, --db,
 * --feedback (one level for tune, a list for bench), --budget, --seed,
 * --jobs and --batch; and the llm optimizer's --samples (its batch),
 * --history, --temperature, --llm-base-url, --llm-model, --price-in and
 * --price-out (llm_flag: the first of these given, NULL for none). */
typedef struct cli_tune_settings {
  const char *machine, *db, *feedback;
  int64_t budget, seed, jobs, batch;
  int64_t samples, history;
  double temperature, price_in, price_out;
  const char *llm_url, *llm_model, *llm_flag;
  bool no_portable; /* --no-portable (docs/legion.md) */
} cli_tune_settings;

/* p100x4, mapopt-tune.db, full, budget 10, seed 0, jobs: the CPUs (at
 * most 64), batch 0 (the optimizer's own); llm: 1 sample, the default
 * history and temperature, no prices, server and model from the
 * environment. */
void cli_tune_defaults(cli_tune_settings *s);
/* When option o (its value v, NULL if it takes none) is one of the shared
 * options, stores it and sets *taken. EXIT_VALID, or EXIT_USAGE for a bad
 * number (reported as command cmd's). */
int cli_tune_option(const char *cmd, const char *o, const char *v,
                    cli_tune_settings *s, bool *taken);

/* ---- the command evaluator's options (eval_common.c) --------------------- */

enum { CLI_MAX_ENV = 64 };

/* What mapopt eval and mapopt tune --run share: --run, --shell, --timeout,
 * --grace, --metric, --direction, --repeat, --keep, --tmpdir, --workdir
 * and --env (docs/real.md). opts.env points into the settings: do not copy
 * them after cli_eval_finish. */
typedef struct cli_eval_settings {
  mapopt_eval_options opts;
  double timeout_s; /* 0: not given */
  /* tune only (docs/real.md, "Noise"): racing's most runs per candidate
   * and the final check's rounds (0: the defaults; check -1: none). */
  int repeat_max, check_rounds;
  int screen; /* tune only: --screen K (docs/real.md section 15); 0: none */
  const char *env[CLI_MAX_ENV + 1];
  size_t nenv;
  /* The options as given (argv words), for a command line giving them
   * back. */
  const char *words[2 * CLI_MAX_ENV + 24];
  size_t nwords;
} cli_eval_settings;

/* Nothing given: no command, the evaluator's defaults. */
void cli_eval_defaults(cli_eval_settings *s);
/* When argv[*i] is one of the evaluator's options, takes it and its value
 * (*i then past it) and sets *taken. EXIT_VALID, or EXIT_USAGE for a
 * missing or bad value (reported as command cmd's). */
int cli_eval_option(const char *cmd, int argc, char **argv, int *i,
                    cli_eval_settings *s, bool *taken);
/* The checks between options (--direction needs --metric), and opts.env
 * set. EXIT_VALID or EXIT_USAGE. */
int cli_eval_finish(const char *cmd, cli_eval_settings *s);
/* The options given, as words in *words (owned by s and argv); returns how
 * many. */
size_t cli_eval_words(const cli_eval_settings *s, const char *const **words);

/* Installs the handler of long commands for SIGINT, SIGQUIT, SIGHUP and
 * SIGTERM: the first sets the returned flag (to the signal's number; end
 * the commands in flight, record what finished, then stop), a second of
 * the same kind kills. */
const volatile sig_atomic_t *cli_catch_signals(void);

/* Whether name is an optimizer of this build. */
bool cli_known_optimizer(const char *name);
/* The usage error for an optimizer this build does not have, listing
 * those it has; returns EXIT_USAGE. */
int cli_unknown_optimizer(const char *cmd, const char *name);

/* Whether an optimizer reads AutoGuide's feedback, so that its results
 * depend on the feedback level (its rows are split by level). */
bool cli_uses_feedback(const char *optimizer);

/* Whether optimizer is llm, which needs a model (docs/llm.md). */
bool cli_is_llm(const char *optimizer);
/* The batch a run of optimizer gets: --samples for llm, else --batch. */
int cli_batch_of(const cli_tune_settings *s, const char *optimizer);
/* The usage error for llm flags given without the llm optimizer, or for
 * --batch given with it (uses_llm: the command runs llm). EXIT_VALID when
 * neither. */
int cli_check_llm_flags(const char *cmd, const cli_tune_settings *s,
                        bool uses_llm);
/* The llm optimizer's settings: the environment, then the flags. Prints
 * the reason (which variable or flag to set; never the key) and returns
 * EXIT_INVALID when the configuration is refused. */
int cli_llm_setup(const char *cmd, const cli_tune_settings *s,
                  mapopt_tune_llm *out);
/* "llm: 10 calls (1 failed), 10 replies, 41230 prompt + 2210 completion
 * tokens, 12.3 s[, cost 0.0021 USD]" with a newline; nothing without
 * calls. */
void cli_print_llm_usage(FILE *f, const mapopt_tune_llm_usage *u);
/* The usage as a JSON object (null without calls). */
struct json_t *cli_llm_usage_json(const mapopt_tune_llm_usage *u);

/* A run's score normalized to its expert mapper, else its default mapper,
 * else raw; *base names which ("expert", "default", NULL for raw). */
double cli_normalized(const mapopt_tune_run_info *r, double score,
                      const char **base);

/*
 * Whether the best of a simulated run scores no more than its default
 * mapper (which it then is, or equals), and if so why, into why (a
 * sentence without a period): the best's time against the lower bound
 * when it is within 1% of it, else the mappers that were evaluated.
 */
bool cli_default_is_best(double best_score, double default_score,
                         double elapsed_s, double lower_bound_s,
                         int64_t evaluations, char *why, size_t n);

/* The paper's statistics of the final best (normalized) of some runs; a
 * run with no successful evaluation counts as 0 and is not valid. */
typedef struct cli_stats {
  size_t runs, valid;
  double mean, std, worst, median, best;
} cli_stats;

/* The runs of one row of the table: an app on a machine, one optimizer
 * (and feedback level, for optimizers that read it) at one budget. */
typedef struct cli_row {
  char label[96]; /* "random@10", "guided(raw)@10" */
  const mapopt_tune_run_info **runs;
  size_t nruns;
  cli_stats stats;
  /* Summed over the runs: evaluations, those that compiled and ran, and
   * the LLM calls (llm rows). */
  int64_t evaluations, compiled, succeeded;
  mapopt_tune_llm_usage llm;
} cli_row;

/* The LLM figures of a row (docs/tuning.md): the shares of its
 * evaluations whose mapper compiled (parse) and ran (run), its tokens per
 * run, and its tokens per 1.0x: all its tokens over the sum of its runs'
 * normalized bests (< 0 when no run found a valid mapper). */
typedef struct cli_llm_figures {
  double parse, run, tokens_per_run, tokens_per_x, cost_per_run;
} cli_llm_figures;
void cli_llm_figures_of(const cli_row *row, cli_llm_figures *f);

typedef struct cli_group {
  const char *app, *size, *machine; /* size may be NULL */
  const char *base;                 /* normalization: expert, default */
  cli_row *rows;
  size_t nrows;
  const char *evaluator; /* real runs: their command's settings; NULL */
} cli_group;

typedef struct cli_table {
  cli_group *groups;
  size_t ngroups;
} cli_table;

/* Groups the runs of h (only those whose id is in ids, when ids is not
 * NULL) in order of first appearance. False when out of memory. */
bool cli_table_build(const mapopt_tune_history *h, const int64_t *ids,
                     size_t nids, cli_table *t);
void cli_table_free(cli_table *t);

int cli_check(int argc, char **argv);
int cli_fmt(int argc, char **argv);
int cli_show(int argc, char **argv);
int cli_machines(int argc, char **argv);
int cli_machine(int argc, char **argv);
int cli_sim(int argc, char **argv);
int cli_apps(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_eval(int argc, char **argv);
int cli_space(int argc, char **argv);
int cli_tune(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_calibrate(int argc, char **argv);

extern const char cli_check_usage[];
extern const char cli_fmt_usage[];
extern const char cli_show_usage[];
extern const char cli_machines_usage[];
extern const char cli_machine_usage[];
extern const char cli_sim_usage[];
extern const char cli_apps_usage[];
extern const char cli_explain_usage[];
extern const char cli_eval_usage[];
extern const char cli_space_usage[];
extern const char cli_tune_usage[];
extern const char cli_bench_usage[];
extern const char cli_report_usage[];
extern const char cli_calibrate_usage[];

#endif /* MAPOPT_SRC_CLI_CLI_H */
