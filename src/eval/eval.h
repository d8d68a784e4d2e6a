/*
 * Internal interface of the command evaluator (include/mapopt/eval.h):
 * the command template (command.c), the bounded output capture
 * (capture.c) and one run of a command under a time limit (spawn.c).
 * eval.c builds evaluators and results on top of them.
 */
#ifndef MAPOPT_SRC_EVAL_H
#define MAPOPT_SRC_EVAL_H

#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "mapopt/eval.h"

/* The environment variable that holds the mapper file's path. */
#define MAPOPT__EVAL_VAR "MAPOPT_MAPPER"

/* ---- command.c: the template --------------------------------------------- */

/*
 * A parsed template: in argv mode the words after quote removal, each of
 * which may contain {mapper}; in shell mode the single shell line, with
 * {mapper} already replaced by a reference to MAPOPT__EVAL_VAR.
 */
typedef struct mapopt__eval_cmd {
  bool shell;
  char **words; /* argv mode: nwords words; shell mode: NULL */
  size_t nwords;
  char *line; /* shell mode: the line for /bin/sh -c */
} mapopt__eval_cmd;

/*
 * Parses tmpl by the rules of include/mapopt/eval.h. MAPOPT_EINVAL with a
 * diagnostic located in tmpl (file "--run") appended to diags (may be
 * NULL); MAPOPT_ENOMEM. On success *cmd owns its strings.
 */
mapopt_status mapopt__eval_cmd_parse(mapopt_ctx *ctx, const char *tmpl,
                                     bool shell, mapopt_diags *diags,
                                     mapopt__eval_cmd *cmd);
void mapopt__eval_cmd_destroy(mapopt_ctx *ctx, mapopt__eval_cmd *cmd);

/*
 * The argv of one run: the words with every {mapper} replaced by path, or
 * {"/bin/sh", "-c", line}. NULL-terminated, *argc entries; free with
 * mapopt__eval_argv_free. MAPOPT_ENOMEM.
 */
mapopt_status mapopt__eval_cmd_argv(mapopt_ctx *ctx,
                                    const mapopt__eval_cmd *cmd,
                                    const char *path, char ***argv,
                                    size_t *argc);
void mapopt__eval_argv_free(mapopt_ctx *ctx, char **argv);

/* ---- metric.c: the metric in the output ---------------------------------- */

/* A form of metric: its name, unit, regex (group 1 the number), the form as
 * the summary shows it, and whether larger is better. */
typedef struct mapopt__metric_form {
  const char *name, *unit, *regex, *shown;
  mapopt_eval_direction direction;
} mapopt__metric_form;

/* The default forms, most preferred first: achieved GFLOPS per node,
 * GFLOPS, ELAPSED TIME (include/mapopt/eval.h). */
enum { MAPOPT__EVAL_NDEFAULTS = 3 };
extern const mapopt__metric_form
    mapopt__eval_default_forms[MAPOPT__EVAL_NDEFAULTS];

typedef enum mapopt__metric_found {
  MAPOPT__METRIC_NONE,  /* no match */
  MAPOPT__METRIC_FOUND, /* *value is the last match's number */
  MAPOPT__METRIC_BAD    /* the last match's group is not a finite number */
} mapopt__metric_found;

/* The parts a POSIX extended regex compiles to once its repetitions are
 * copied out as the C library copies them (x+ as x x*, x{3} as x x x),
 * saturated at SIZE_MAX. A regex of more than MAPOPT__EVAL_MAX_REGEX parts
 * is refused before it is compiled: glibc's compiler takes seconds at
 * about 1,000 parts of nested repetitions of what may be empty
 * (((a*)+)+...), a minute at 5,000, and gigabytes beyond; ordinary metrics
 * have tens of parts. */
enum { MAPOPT__EVAL_MAX_REGEX = 1000 };
/* ... and *twice: the offset of the first repetition operator that follows
 * another (a??, .+?: undefined in POSIX, and glibc's slowest case), or
 * SIZE_MAX when there is none. */
size_t mapopt__eval_regex_size(const char *src, size_t *twice);

/*
 * The last match of re (compiled with REG_EXTENDED | REG_NEWLINE) in the
 * NUL-terminated text, its first group read as a number into *value; for
 * MAPOPT__METRIC_BAD the group's text (cut, with "...", past 60 bytes) in
 * bad. An empty match at the end of the text, after its final line break,
 * is no match. MAPOPT_ENOMEM (a group too long for the stack).
 */
mapopt_status mapopt__eval_metric_last(mapopt_ctx *ctx, const regex_t *re,
                                       const char *text,
                                       mapopt__metric_found *found,
                                       double *value, char *bad, size_t badlen);

/* ---- capture.c: head and tail of a stream -------------------------------- */

/*
 * Keeps the first head_cap and the last tail_cap bytes of a stream of any
 * length, in at most head_cap + tail_cap + 1 bytes of memory, and counts
 * the rest.
 */
typedef struct mapopt__capture {
  mapopt_ctx *ctx;
  size_t head_cap, tail_cap;
  char *head; /* head_len bytes, head_alloc allocated */
  size_t head_len, head_alloc;
  char *tail; /* ring of tail_cap + 1 bytes (the extra one: the byte before
                 the tail), allocated when the head is full */
  size_t tail_pos, tail_len; /* next write position, bytes held */
  uint64_t total;            /* bytes seen */
} mapopt__capture;

/* Splits cap bytes between head (a quarter) and tail. */
void mapopt__capture_init(mapopt__capture *c, mapopt_ctx *ctx, size_t cap);
void mapopt__capture_destroy(mapopt__capture *c);
/* Adds n bytes. MAPOPT_ENOMEM (the capture is then unchanged). */
mapopt_status mapopt__capture_add(mapopt__capture *c, const char *data,
                                  size_t n);
/*
 * The captured text: head, then when bytes were dropped the line
 * "[mapopt: N bytes of output dropped]", then tail, the two cut at line
 * boundaries where they have one (the cut bytes count as dropped); NUL
 * bytes replaced by spaces; NUL-terminated, *len bytes, freed with
 * mapopt__free(ctx, text, *len + 1). *dropped is N. MAPOPT_ENOMEM.
 */
mapopt_status mapopt__capture_text(const mapopt__capture *c, char **text,
                                   size_t *len, uint64_t *dropped);

/* ---- spawn.c: one run ---------------------------------------------------- */

typedef struct mapopt__spawn_spec {
  char *const *argv; /* argv[0] is the program as the user wrote it */
  char *const *envp; /* the child's whole environment */
  const char *cwd;   /* the child's working directory */
  double timeout_s;  /* 0: none */
  double grace_s;    /* SIGTERM to SIGKILL */
  double linger_s;   /* leftovers after the command's exit */
  size_t output_cap; /* see mapopt__capture_init */
  const volatile sig_atomic_t *stop; /* set: end the run; NULL: never */
} mapopt__spawn_spec;

typedef struct mapopt__spawn_outcome {
  bool started;      /* false: start_error says why */
  char *start_error; /* "./prog: No such file or directory" (a text), or NULL */
  bool timed_out;    /* the limit passed; the processes were killed */
  bool interrupted;  /* spec->stop ended it; the processes were killed */
  int kill_signal;   /* then, the last signal sent (TERM or KILL) */
  int exit_code;     /* -1 when the command did not exit */
  int signal;        /* the signal that ended the command, or 0 */
  double wall_s;     /* start to exit */
  mapopt__capture out; /* the merged output */
} mapopt__spawn_outcome;

/*
 * Runs spec->argv once as described in include/mapopt/eval.h, under a
 * supervisor process that outlives none of the command's processes (see
 * spawn.c). It returns only when every process the command started, in its
 * process group or not, has been killed and reaped. A command that cannot
 * be started (not found, fork failing) is an outcome with started false,
 * not an error. MAPOPT_ENOMEM; then nothing is left running. Free the
 * outcome with mapopt__spawn_outcome_destroy.
 */
mapopt_status mapopt__eval_spawn(mapopt_ctx *ctx,
                                 const mapopt__spawn_spec *spec,
                                 mapopt__spawn_outcome *out);
void mapopt__spawn_outcome_destroy(mapopt__spawn_outcome *o);

#endif /* MAPOPT_SRC_EVAL_H */
