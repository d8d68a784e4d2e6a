/*
 * mapopt eval: evaluating a mapper by running a program (docs/real.md).
 *
 * An evaluator is built once from a command template such as
 *
 *     mpirun -np 2 ./stencil -mapping {mapper}
 *
 * and then evaluates any number of mappers. Each evaluation makes a private
 * directory, writes the mapper text to a file in it, runs the command with
 * {mapper} replaced by the file's path, captures what the command prints,
 * extracts the metric, repeats, and returns a mapopt_eval_result: a status
 * (ok, failed, killed by a signal, timed out, no metric, could not start),
 * the exit code or signal, the median metric and its direction, the wall
 * time of every run, the captured output for AutoGuide and a one-line
 * summary. The private directory is removed afterwards unless kept.
 *
 * The command template. Without the shell option it is split into words
 * and run directly (execve), never through a shell; the rules are those of
 * /bin/sh restricted to quoting:
 *   - blanks (space, tab) separate words;
 *   - '...' is literal text (no escapes inside);
 *   - "..." is literal text except that \" and \\ stand for " and \, and a
 *     backslash-newline is removed;
 *   - outside quotes, a backslash takes the next character literally, and
 *     a backslash-newline is removed;
 *   - everything a shell would interpret otherwise is an error, not a
 *     silent difference: unquoted | & ; < > ( ) $ ` * ? [ and line breaks,
 *     # or ~ at the start of a word, and $ or ` inside double quotes (give
 *     the shell option, or quote them);
 *   - an unterminated quote, a final lone backslash and an empty command
 *     are errors located at FILE:LINE:COL, the file being "--run".
 * {mapper} is replaced by the path wherever it appears in a word after
 * quote removal (-mapping={mapper} works), as often as it appears; a
 * template without {mapper} is an error.
 *
 * With the shell option the command is `/bin/sh -c LINE`, where LINE is the
 * template with each {mapper} replaced by a reference to the environment
 * variable MAPOPT_MAPPER, quoted for the place where it stands
 * ("${MAPOPT_MAPPER}" outside quotes, ${MAPOPT_MAPPER} inside double quotes,
 * '"${MAPOPT_MAPPER}"' inside single quotes). The path itself is never
 * pasted into the shell line. Quotes must still be balanced; {mapper} after
 * a backslash is an error.
 *
 * The child. It runs in its own process group, in a session of its own
 * without a controlling terminal, with stdin from /dev/null, default
 * signal dispositions and an empty signal mask, the caller's environment
 * plus the configured variables plus MAPOPT_MAPPER (the path, absolute),
 * no other inherited file descriptors, and as working directory the
 * evaluation's private directory (or the configured one). Its stdout and
 * stderr are the same pipe, so the captured text is both streams merged in
 * the order the program wrote them. A supervisor process, a child
 * subreaper, starts it and so learns of every process it starts, in its
 * group or not (docs/real.md, "Where the command runs", says what it
 * cannot reach).
 *
 * Timeouts. On timeout the process group and every other process the
 * command started get SIGTERM, then SIGKILL after a grace period; so they
 * do when the caller's stop flag is set. When the command's own process
 * exits, anything it left running (in its group or out of it) is killed
 * after a short linger during which its output is still read. An
 * evaluation returns only when every process of the command is gone and
 * reaped, and never waits for anything but the command itself, bounded by
 * the timeout (and the grace and linger).
 *
 * Threads. An evaluator is immutable once built: any number of threads may
 * run evaluations with one evaluator at once (the tuner's --jobs N), each
 * with its own process group, private directory and result. There is no
 * global state; the library installs no signal handlers and changes no
 * process-wide setting.
 */
#ifndef MAPOPT_EVAL_H
#define MAPOPT_EVAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The outcome of an evaluation, with its name. */
#define MAPOPT_EVAL_STATUS_LIST(X)                                             \
  X(OK, "ok")                     /* exit status 0 and a metric */             \
  X(FAILED, "failed")             /* a non-zero exit status */                 \
  X(SIGNALED, "signal")           /* killed by a signal it did not get from    \
                                     us */                                     \
  X(TIMEOUT, "timeout")           /* the time limit passed; group killed */    \
  X(NO_METRIC, "no-metric")       /* exit status 0 but no metric found */      \
  X(START_FAILED, "start-failed") /* could not start (not found, ...) */       \
  X(INTERRUPTED, "interrupted")   /* stopped (options.stop) */

typedef enum mapopt_eval_status {
#define MAPOPT_EVAL_STATUS_ENUM(name, str) MAPOPT_EVAL_##name,
  MAPOPT_EVAL_STATUS_LIST(MAPOPT_EVAL_STATUS_ENUM)
#undef MAPOPT_EVAL_STATUS_ENUM
} mapopt_eval_status;

/* "ok", "failed", "signal", "timeout", "no-metric", "start-failed",
 * "interrupted"; NULL for a value out of range. */
MAPOPT_API const char *mapopt_eval_status_name(mapopt_eval_status s);

/* Whether a smaller or a larger metric is better. */
typedef enum mapopt_eval_direction {
  MAPOPT_EVAL_LOWER,
  MAPOPT_EVAL_HIGHER
} mapopt_eval_direction;

/* "lower", "higher"; NULL for a value out of range. */
MAPOPT_API const char *mapopt_eval_direction_name(mapopt_eval_direction d);

/*
 * How to evaluate. Zero-initialize and set run; every other zero field
 * means its default. The strings are copied by mapopt_eval_new.
 */
typedef struct mapopt_eval_options {
  /* The command template (required). */
  const char *run;
  /* Run /bin/sh -c LINE instead of splitting the template. */
  bool shell;
  /* A POSIX extended regular expression whose first capture group is the
   * metric; the last match in the output counts. NULL: the defaults, in
   * this order of preference: `achieved GFLOPS per node: x` (higher is
   * better), `GFLOPS = x` (higher), `ELAPSED TIME = x s` (lower). */
  const char *metric;
  /* Whether a smaller or larger custom metric is better; default lower. */
  mapopt_eval_direction direction;
  /* Runs per evaluation, 1 to 1000; 0: 1. */
  int repeat;
  /* Keep the private directory (its path is in the result). */
  bool keep;
  /* The child's working directory; NULL: the private directory. */
  const char *workdir;
  /* Extra "NAME=VALUE" variables, NULL-terminated; NULL: none. */
  const char *const *env;
  /* Where private directories are made; NULL: $TMPDIR, else /tmp. A
   * relative directory (here, in TMPDIR or in workdir) is taken from the
   * current directory when the evaluator is made. */
  const char *tmpdir;
  /* Bytes of output kept per run, at least 1024: the first quarter and the
   * last three quarters; 0: 1 MiB. */
  size_t output_cap;
  /* Seconds from SIGTERM to SIGKILL on timeout, 0.01 to 600; 0: 2 s. */
  double grace_s;
  /* Seconds the leftovers of an exited command may still write, 0.01 to
   * 60; 0: 0.2 s. */
  double linger_s;
  /* Set (by a signal handler) to stop: a run in flight is ended as on a
   * timeout (SIGTERM to its processes, SIGKILL after the grace), no further
   * run starts, and the evaluation is MAPOPT_EVAL_INTERRUPTED. Checked at
   * least every 50 ms. NULL: never. */
  const volatile sig_atomic_t *stop;
} mapopt_eval_options;

typedef struct mapopt_evaluator mapopt_evaluator;

/*
 * Builds an evaluator. Returns MAPOPT_EINVAL with a located error in diags
 * (may be NULL) for a malformed template ("--run:1:7: unterminated double
 * quote"), a template without {mapper}, a regex that does not compile or
 * has no capture group ("--metric:1:1: ..."), a malformed variable
 * ("--env:1:1: ...") or an option out of range; MAPOPT_ENOMEM. ctx must
 * outlive the evaluator; *out is freed with mapopt_eval_free.
 */
MAPOPT_API mapopt_status mapopt_eval_new(mapopt_ctx *ctx,
                                         const mapopt_eval_options *opts,
                                         mapopt_diags *diags,
                                         mapopt_evaluator **out);
MAPOPT_API void mapopt_eval_free(mapopt_evaluator *ev);

/*
 * The result of one evaluation. It owns all its memory and is freed with
 * mapopt_eval_result_free. Everything except wall_s, dir and argv (which
 * hold the private directory's random name) is the same for the same
 * command behaving the same way.
 */
typedef struct mapopt_eval_result {
  mapopt_eval_status status;
  int runs;         /* runs done: repeat when ok, else up to the one that
                       ended the evaluation */
  int exit_code;    /* the last run's exit status; -1 when it did not exit */
  int signal;       /* the signal that ended the last run, or 0 */
  double timeout_s; /* the limit each run had; 0: none */
  /* The metric: its name ("time", "gflops", "gflops-per-node", or "metric"
   * for a custom regex), unit ("s", "GFLOP/s", "GFLOP/s per node", "") and
   * direction -- with the default metrics, the form the first run printed;
   * NULL names (and direction lower) when no run printed one. metric is the
   * median of values (for an even count, the mean of the two middle ones),
   * NaN unless status is ok. The strings are static. */
  const char *metric_name;
  const char *metric_unit;
  mapopt_eval_direction direction;
  double metric;
  double *values;       /* metric of each run (runs entries; NaN where none) */
  double *wall_s;       /* wall time of each run, start to exit, in seconds */
  double wall_median_s; /* their median: one run's wall time (0: no run) */
  /* The last run's output: stdout and stderr merged in arrival order. When
   * it printed more than output_cap bytes, the text is its head, the line
   * "[mapopt: N bytes of output dropped]" and its tail, the two cut at line
   * boundaries where they have one. NUL bytes become spaces, so output is
   * one NUL-terminated string of output_len bytes. For a command that could
   * not start, the reason. */
  char *output;
  size_t output_len;
  uint64_t output_bytes;   /* bytes the last run printed */
  uint64_t output_dropped; /* of which were dropped */
  char *summary;           /* one line, no newline, e.g. "ok: time 1.5 s" */
  char **argv;             /* the last command run, NULL-terminated */
  char *dir;               /* the private directory when kept, else NULL */
} mapopt_eval_result;

/*
 * Evaluates the mapper text (len bytes) with ev: runs the command
 * opts->repeat times, stopping at the first run that is not ok. Each run
 * gets timeout_s seconds (0: no limit; see mapopt_eval_timeout). A failed
 * run is a result, not an error: the call returns MAPOPT_OK with
 * (*out)->status saying what happened. It returns MAPOPT_EINVAL for a
 * negative or non-finite timeout, MAPOPT_EIO when the private directory or
 * the mapper file cannot be made (the reason appended to diags, which may
 * be NULL), MAPOPT_ENOMEM. Safe to call from several threads at once, each
 * with its own diags (or NULL).
 */
MAPOPT_API mapopt_status mapopt_eval_run(const mapopt_evaluator *ev,
                                         const char *mapper, size_t len,
                                         double timeout_s, mapopt_diags *diags,
                                         mapopt_eval_result **out);
/* Frees a result (NULL is ignored). */
MAPOPT_API void mapopt_eval_result_free(mapopt_eval_result *r);

/*
 * Repeats decided as the runs go (a tuner's racing, docs/real.md section
 * 7): at least min runs and at most max (1 to 1000; min 0 takes the
 * evaluator's repeat, max below min takes min). After each successful run
 * from the min-th on, while fewer than max were made, more(ud, values, n)
 * is called with the metric of the n runs so far (as printed: smaller is
 * better for a time) and its direction, and says whether to run once
 * more. more NULL: min runs. The evaluation still stops at the first run that
 * is not ok.
 */
typedef bool (*mapopt_eval_more_fn)(void *ud, const double *values, int n,
                                    mapopt_eval_direction direction);
typedef struct mapopt_eval_repeats {
  int min, max;
  mapopt_eval_more_fn more;
  void *ud;
} mapopt_eval_repeats;

/* mapopt_eval_run with the repeats of rep instead of the evaluator's
 * (rep NULL: the evaluator's). Errors as mapopt_eval_run, and
 * MAPOPT_EINVAL for a count out of range. */
MAPOPT_API mapopt_status mapopt_eval_run_repeats(const mapopt_evaluator *ev,
                                                 const char *mapper, size_t len,
                                                 double timeout_s,
                                                 const mapopt_eval_repeats *rep,
                                                 mapopt_diags *diags,
                                                 mapopt_eval_result **out);

/*
 * The timeout policy: factor times the best time so far, but at least
 * floor_s; first_s when there is no best time yet. Zero fields take the
 * defaults: factor 10 (as OpenTuner), floor 5 s, first 600 s.
 */
typedef struct mapopt_eval_timeout_policy {
  double factor;
  double floor_s;
  double first_s;
} mapopt_eval_timeout_policy;

/*
 * The time limit for the next evaluation. best_s is the wall time of one
 * run of the fastest successful evaluation so far; zero, negative or not
 * finite means none yet. policy may be NULL for the defaults.
 */
MAPOPT_API double mapopt_eval_timeout(const mapopt_eval_timeout_policy *policy,
                                      double best_s);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_EVAL_H */
