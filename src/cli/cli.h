/*
 * The mapopt command-line program: shared helpers of the subcommands.
 * The CLI uses only the public API, through the umbrella header.
 */
#ifndef MAPOPT_SRC_CLI_CLI_H
#define MAPOPT_SRC_CLI_CLI_H

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

/* Prints "mapopt NAME: MESSAGE" and a hint to stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

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
struct json_t;

/* Opens a context and a diagnostics list for one command; false when out
 * of memory (nothing to free then). */
bool cli_open(mapopt_ctx **ctx, mapopt_diags **diags);
void cli_close(mapopt_ctx *ctx, mapopt_diags *diags);
/* Prints {"key": value} as indented JSON on stdout; takes value. */
void cli_print_json(const char *key, struct json_t *value);
/* Reads and compiles the mapper at path with base's options (its file
 * name replaced by path); every failure, I/O included, is in diags. */
mapopt_status cli_compile_file(mapopt_ctx *ctx, const char *path,
                               const mapopt_dsl_options *base,
                               mapopt_diags *diags, mapopt_program **prog);
/* --machine ARG of command cmd: a preset, a machine JSON file or a one-line
 * shape, of which the DSL needs only the shape. On failure prints a usage
 * error and returns false. */
bool cli_machine_shape(const char *cmd, const char *arg,
                       mapopt_machine_shape *shape);
/* Prints every diagnostic of diags, GCC style, to f. */
void cli_print_diags(FILE *f, const mapopt_diags *diags, size_t from);

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
} cli_pipeline_args;

/* Everything a simulation holds, freed by cli_pipeline_close. */
typedef struct cli_pipeline {
  mapopt_machine *machine;
  mapopt_app *app;
  mapopt_app_run *run;
  mapopt_machine_shape shape; /* the run's, that the mapper sees */
  mapopt_program *prog;
  mapopt_sim_result *res; /* after cli_pipeline_run */
} cli_pipeline;

/*
 * Resolves the machine and the app, instantiates the run and compiles the
 * mapper for it; prints the mapper's warnings to stderr and clears diags.
 * EXIT_VALID; EXIT_INVALID with the reason in diags; EXIT_USAGE (a size
 * both after ':' and in --size, reported as command cmd). p must be closed
 * in every case.
 */
int cli_pipeline_open(mapopt_ctx *ctx, const char *cmd,
                      const cli_pipeline_args *a, mapopt_diags *diags,
                      cli_pipeline *p);
/* Simulates the opened pipeline into p->res (mapopt_sim_run's errors). */
mapopt_status cli_pipeline_run(mapopt_ctx *ctx, cli_pipeline *p,
                               const mapopt_sim_options *opts);
void cli_pipeline_close(cli_pipeline *p);

int cli_check(int argc, char **argv);
int cli_fmt(int argc, char **argv);
int cli_show(int argc, char **argv);
int cli_machines(int argc, char **argv);
int cli_machine(int argc, char **argv);
int cli_sim(int argc, char **argv);
int cli_apps(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_eval(int argc, char **argv);

extern const char cli_check_usage[];
extern const char cli_fmt_usage[];
extern const char cli_show_usage[];
extern const char cli_machines_usage[];
extern const char cli_machine_usage[];
extern const char cli_sim_usage[];
extern const char cli_apps_usage[];
extern const char cli_explain_usage[];
extern const char cli_eval_usage[];

#endif /* MAPOPT_SRC_CLI_CLI_H */
