/*
 * The command evaluator (include/mapopt/eval.h): an evaluator holds the
 * parsed command template, the compiled metric regexes and the options;
 * an evaluation makes a private directory, writes the mapper file, runs
 * the command the requested number of times (spawn.c), extracts the metric
 * of each run, and builds the result: status, median, the last run's
 * output and a one-line summary. Also the timeout policy the tuner calls.
 *
 * The evaluator is never written after mapopt_eval_new, and each
 * evaluation owns its directory, process group and result, so evaluations
 * from several threads do not interact. regexec on a shared compiled regex
 * is thread-safe in POSIX.
 */
#define _GNU_SOURCE /* mkdtemp, openat/fdopendir/unlinkat, strerror_r (GNU) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/eval.h"

extern char **environ;

enum {
  NDEFAULTS = MAPOPT__EVAL_NDEFAULTS,
  DEFAULT_CAP = 1 << 20,
  MIN_CAP = 1024,
  MAX_REPEAT = 1000
};

struct mapopt_evaluator {
  mapopt_ctx *ctx;
  mapopt__eval_cmd cmd;
  /* The metric forms tried, in order: the defaults, or one custom. */
  size_t nforms;
  mapopt__metric_form forms[NDEFAULTS];
  regex_t res[NDEFAULTS];
  char *custom; /* the custom regex's text, for the summary */
  char **env;   /* extra NAME=VALUE entries, nenv of them */
  size_t nenv;
  char *workdir, *tmpdir; /* absolute */
  const volatile sig_atomic_t *stop;
  int repeat;
  bool keep;
  size_t cap;
  double grace_s, linger_s;
};

const char *mapopt_eval_status_name(mapopt_eval_status s) {
  static const char *const names[] = {
#define MAPOPT_EVAL_STATUS_STR(name, str) str,
      MAPOPT_EVAL_STATUS_LIST(MAPOPT_EVAL_STATUS_STR)
#undef MAPOPT_EVAL_STATUS_STR
  };
  return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : NULL;
}

const char *mapopt_eval_direction_name(mapopt_eval_direction d) {
  return d == MAPOPT_EVAL_LOWER    ? "lower"
         : d == MAPOPT_EVAL_HIGHER ? "higher"
                                   : NULL;
}

double mapopt_eval_timeout(const mapopt_eval_timeout_policy *policy,
                           double best_s) {
  double factor = policy && policy->factor > 0 ? policy->factor : 10;
  double floor_s = policy && policy->floor_s > 0 ? policy->floor_s : 5;
  double first_s = policy && policy->first_s > 0 ? policy->first_s : 600;
  if (!(best_s > 0) || !isfinite(best_s))
    return first_s;
  double t = factor * best_s;
  return t > floor_s ? t : floor_s;
}

/* ---- building an evaluator ----------------------------------------------- */

static char *dup_str(mapopt_ctx *ctx, const char *s) {
  return s ? mapopt__strndup(ctx, s, strlen(s)) : NULL;
}

static void free_str(mapopt_ctx *ctx, char *s) {
  if (s)
    mapopt__free(ctx, s, strlen(s) + 1);
}

static mapopt_status option_error(mapopt_diags *diags, const char *what,
                                  const char *msg) {
  if (diags)
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", what, 0, 0, "%s", msg);
  return MAPOPT_EINVAL;
}

/* Compiles the custom regex, which needs a group for the number. */
static mapopt_status compile_custom(mapopt_evaluator *ev, const char *src,
                                    mapopt_diags *diags) {
  size_t twice, size = mapopt__eval_regex_size(src, &twice);
  if (twice != SIZE_MAX || size > MAPOPT__EVAL_MAX_REGEX) {
    if (diags && twice != SIZE_MAX)
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "--metric", 1,
                       (int)(twice < 100000 ? twice + 1 : 100000),
                       "'%c' repeats a repetition: two in a row are "
                       "undefined in POSIX regular expressions (and there is "
                       "no lazy '+?' or '*?'): write one, or group the first",
                       src[twice]);
    else if (diags)
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "--metric", 1, 1,
                       "the regular expression is too large once its "
                       "repetitions are written out (more than %d parts): "
                       "nest fewer repetitions",
                       MAPOPT__EVAL_MAX_REGEX);
    return MAPOPT_EINVAL;
  }
  int rc = regcomp(&ev->res[0], src, REG_EXTENDED | REG_NEWLINE);
  if (rc != 0) {
    char msg[256];
    regerror(rc, NULL, msg, sizeof msg);
    if (diags)
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "--metric", 1, 1,
                       "invalid regular expression: %s", msg);
    return rc == REG_ESPACE ? MAPOPT_ENOMEM : MAPOPT_EINVAL;
  }
  ev->nforms = 1;
  if (ev->res[0].re_nsub < 1) {
    if (diags)
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "--metric", 1, 1,
                       "the regular expression has no group: put the "
                       "number in parentheses, e.g. 'time: ([0-9.]+)'");
    return MAPOPT_EINVAL;
  }
  ev->custom = dup_str(ev->ctx, src);
  ev->forms[0] = (mapopt__metric_form){"metric", "", ev->custom, ev->custom,
                                       MAPOPT_EVAL_LOWER};
  return ev->custom ? MAPOPT_OK : MAPOPT_ENOMEM;
}

/* A valid variable: NAME=VALUE with NAME a C identifier. */
static bool valid_env(const char *e) {
  const char *eq = strchr(e, '=');
  if (!eq || eq == e || (e[0] >= '0' && e[0] <= '9'))
    return false;
  for (const char *p = e; p < eq; p++)
    if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9')))
      return false;
  return true;
}

static mapopt_status copy_env(mapopt_evaluator *ev, const char *const *env,
                              mapopt_diags *diags) {
  size_t n = 0;
  while (env && env[n])
    n++;
  for (size_t i = 0; i < n; i++)
    if (!valid_env(env[i])) {
      if (diags)
        mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "--env", 1, 1,
                         "'%s' is not NAME=VALUE", env[i]);
      return MAPOPT_EINVAL;
    }
  ev->env = mapopt__calloc(ev->ctx, n + 1, sizeof *ev->env);
  if (!ev->env)
    return MAPOPT_ENOMEM;
  for (; ev->nenv < n; ev->nenv++)
    if (!(ev->env[ev->nenv] = dup_str(ev->ctx, env[ev->nenv])))
      return MAPOPT_ENOMEM;
  return MAPOPT_OK;
}

/* dir made absolute against the current directory (the command runs
 * elsewhere: a relative path would name another place for it). */
static mapopt_status absolute_dir(mapopt_ctx *ctx, const char *dir,
                                  mapopt_diags *diags, const char *what,
                                  char **out) {
  *out = NULL;
  if (!dir)
    return MAPOPT_OK;
  if (dir[0] == '/') {
    *out = dup_str(ctx, dir);
    return *out ? MAPOPT_OK : MAPOPT_ENOMEM;
  }
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd))
    return option_error(diags, what,
                        "a relative directory, and the current "
                        "directory cannot be read");
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  mapopt__sb_printf(&sb, "%s/%s", cwd, dir);
  size_t len;
  *out = mapopt__sb_take(&sb, &len);
  return *out ? MAPOPT_OK : MAPOPT_ENOMEM;
}

mapopt_status mapopt_eval_new(mapopt_ctx *ctx, const mapopt_eval_options *opts,
                              mapopt_diags *diags, mapopt_evaluator **out) {
  if (!opts || !opts->run)
    return option_error(diags, "--run", "no command given");
  if (opts->repeat < 0 || opts->repeat > MAX_REPEAT)
    return option_error(diags, "--repeat",
                        "the repeat count must be 1 to "
                        "1000");
  if (opts->output_cap && opts->output_cap < MIN_CAP)
    return option_error(diags, "output cap",
                        "the output cap must be at "
                        "least 1024 bytes");
  if (!(opts->grace_s >= 0 && opts->grace_s <= 600) ||
      !(opts->linger_s >= 0 && opts->linger_s <= 60))
    return option_error(diags, "grace",
                        "the grace period must be 0 to 600 s "
                        "and the linger 0 to 60 s");
  if (opts->direction != MAPOPT_EVAL_LOWER &&
      opts->direction != MAPOPT_EVAL_HIGHER)
    return option_error(diags, "--direction", "unknown direction");
  mapopt_evaluator *ev = mapopt__calloc(ctx, 1, sizeof *ev);
  if (!ev)
    return MAPOPT_ENOMEM;
  ev->ctx = ctx;
  ev->repeat = opts->repeat ? opts->repeat : 1;
  ev->keep = opts->keep;
  ev->stop = opts->stop;
  ev->cap = opts->output_cap ? opts->output_cap : DEFAULT_CAP;
  ev->grace_s =
      opts->grace_s > 0 ? (opts->grace_s < 0.01 ? 0.01 : opts->grace_s) : 2.0;
  ev->linger_s = opts->linger_s > 0
                     ? (opts->linger_s < 0.01 ? 0.01 : opts->linger_s)
                     : 0.2;
  const char *tmp = opts->tmpdir ? opts->tmpdir : getenv("TMPDIR");
  mapopt_status st =
      mapopt__eval_cmd_parse(ctx, opts->run, opts->shell, diags, &ev->cmd);
  if (st == MAPOPT_OK)
    st = copy_env(ev, opts->env, diags);
  if (st == MAPOPT_OK && opts->metric) {
    st = compile_custom(ev, opts->metric, diags);
    ev->forms[0].direction = opts->direction;
  } else if (st == MAPOPT_OK) {
    for (; ev->nforms < NDEFAULTS && st == MAPOPT_OK; ev->nforms++) {
      ev->forms[ev->nforms] = mapopt__eval_default_forms[ev->nforms];
      if (regcomp(&ev->res[ev->nforms], ev->forms[ev->nforms].regex,
                  REG_EXTENDED | REG_NEWLINE) != 0)
        st = MAPOPT_ENOMEM; /* the defaults are valid: only ESPACE fails */
    }
    if (st != MAPOPT_OK)
      ev->nforms--;
  }
  if (st == MAPOPT_OK)
    st = absolute_dir(ctx, tmp && tmp[0] ? tmp : "/tmp", diags, "--tmpdir",
                      &ev->tmpdir);
  if (st == MAPOPT_OK)
    st = absolute_dir(ctx, opts->workdir, diags, "--workdir", &ev->workdir);
  if (st != MAPOPT_OK) {
    mapopt_eval_free(ev);
    return st;
  }
  *out = ev;
  return MAPOPT_OK;
}

void mapopt_eval_free(mapopt_evaluator *ev) {
  if (!ev)
    return;
  mapopt_ctx *ctx = ev->ctx;
  mapopt__eval_cmd_destroy(ctx, &ev->cmd);
  for (size_t i = 0; i < ev->nforms; i++)
    regfree(&ev->res[i]);
  free_str(ctx, ev->custom);
  for (size_t i = 0; i < ev->nenv; i++)
    free_str(ctx, ev->env[i]);
  if (ev->env)
    mapopt__free(ctx, ev->env, (ev->nenv + 1) * sizeof *ev->env);
  free_str(ctx, ev->workdir);
  free_str(ctx, ev->tmpdir);
  mapopt__free(ctx, ev, sizeof *ev);
}

/* ---- the private directory ----------------------------------------------- */

/* Removes dir and everything in it, without following symbolic links.
 * Best effort: what cannot be removed stays. */
static void remove_tree_at(int parent, const char *name, int depth) {
  if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
    return;
  int fd =
      openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  struct dirent *e;
  while (depth < 64 && (e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      remove_tree_at(dirfd(d), e->d_name, depth + 1);
  closedir(d);
  unlinkat(parent, name, AT_REMOVEDIR);
}

/* Appends "WHAT: error: MESSAGE: REASON" and returns MAPOPT_EIO. */
static mapopt_status io_error(mapopt_diags *diags, const char *what,
                              const char *msg, int err) {
  char eb[128];
  if (diags)
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", what, 0, 0, "%s: %s", msg,
                     strerror_r(err, eb, sizeof eb));
  return MAPOPT_EIO;
}

/* Makes TMPDIR/mapopt-eval-XXXXXX and writes the mapper into it as
 * mapper.map; *dir and *path are allocated. */
static mapopt_status make_dir(const mapopt_evaluator *ev, const char *text,
                              size_t len, mapopt_diags *diags, char **dir,
                              char **path) {
  mapopt_ctx *ctx = ev->ctx;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  mapopt__sb_printf(&sb, "%s/mapopt-eval-XXXXXX", ev->tmpdir);
  size_t dlen;
  char *d = mapopt__sb_take(&sb, &dlen);
  if (!d)
    return MAPOPT_ENOMEM;
  if (!mkdtemp(d)) {
    mapopt_status st =
        io_error(diags, ev->tmpdir, "cannot make a private directory", errno);
    free_str(ctx, d);
    return st;
  }
  mapopt__sb_init(&sb, ctx);
  mapopt__sb_printf(&sb, "%s/mapper.map", d);
  size_t plen;
  char *p = mapopt__sb_take(&sb, &plen);
  mapopt_status st = p ? MAPOPT_OK : MAPOPT_ENOMEM;
  int fd = p ? open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
  if (p && fd < 0)
    st = io_error(diags, p, "cannot write the mapper", errno);
  for (size_t off = 0; st == MAPOPT_OK && off < len;) {
    ssize_t w = write(fd, text + off, len - off);
    if (w > 0)
      off += (size_t)w;
    else if (w < 0 && errno != EINTR)
      st = io_error(diags, p, "cannot write the mapper", errno);
  }
  if (fd >= 0 && close(fd) != 0 && st == MAPOPT_OK)
    st = io_error(diags, p, "cannot write the mapper", errno);
  if (st != MAPOPT_OK) {
    remove_tree_at(AT_FDCWD, d, 0);
    free_str(ctx, d);
    free_str(ctx, p);
    return st;
  }
  *dir = d;
  *path = p;
  return MAPOPT_OK;
}

/* The child's environment: the caller's, less the names set here, then
 * the configured variables, then MAPOPT_MAPPER. The array is allocated;
 * the strings are borrowed except the last, *own. */
static mapopt_status make_env(const mapopt_evaluator *ev, const char *path,
                              char ***envp, size_t *n, char **own) {
  mapopt_ctx *ctx = ev->ctx;
  size_t nenv = 0;
  while (environ && environ[nenv])
    nenv++;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  mapopt__sb_printf(&sb, "%s=%s", MAPOPT__EVAL_VAR, path);
  size_t len;
  char *mine = mapopt__sb_take(&sb, &len);
  char **arr =
      mine ? mapopt__calloc(ctx, nenv + ev->nenv + 2, sizeof *arr) : NULL;
  if (!arr) {
    free_str(ctx, mine);
    return MAPOPT_ENOMEM;
  }
  size_t k = 0;
  for (size_t i = 0; i < nenv; i++) {
    size_t nl = strcspn(environ[i], "=");
    bool replaced = nl == strlen(MAPOPT__EVAL_VAR) &&
                    strncmp(environ[i], MAPOPT__EVAL_VAR, nl) == 0;
    for (size_t j = 0; j < ev->nenv && !replaced; j++)
      replaced = strncmp(environ[i], ev->env[j], nl + 1) == 0;
    if (!replaced)
      arr[k++] = environ[i];
  }
  for (size_t j = 0; j < ev->nenv; j++)
    arr[k++] = ev->env[j];
  arr[k++] = mine;
  *envp = arr;
  *n = nenv + ev->nenv + 2;
  *own = mine;
  return MAPOPT_OK;
}

/* ---- results ------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of n values (the mean of the middle two when n is even);
 * sorts scratch, a copy. */
static double median(double *scratch, const double *v, int n) {
  memcpy(scratch, v, (size_t)n * sizeof *v);
  qsort(scratch, (size_t)n, sizeof *scratch, cmp_double);
  return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

static const char *signal_name(int sig) {
  static const struct {
    int sig;
    const char *name;
  } names[] = {{1, "SIGHUP"},   {2, "SIGINT"},   {3, "SIGQUIT"},
               {4, "SIGILL"},   {5, "SIGTRAP"},  {6, "SIGABRT"},
               {7, "SIGBUS"},   {8, "SIGFPE"},   {9, "SIGKILL"},
               {10, "SIGUSR1"}, {11, "SIGSEGV"}, {12, "SIGUSR2"},
               {13, "SIGPIPE"}, {14, "SIGALRM"}, {15, "SIGTERM"},
               {24, "SIGXCPU"}, {25, "SIGXFSZ"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].sig == sig)
      return names[i].name;
  return "a signal";
}

/* Appends the last non-empty line of text (at most 160 bytes of it,
 * control characters as '?') after ": ", if there is one. */
static void put_last_line(mapopt__strbuf *sb, const char *text, size_t len) {
  size_t end = len;
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' ||
                     text[end - 1] == ' ' || text[end - 1] == '\t'))
    end--;
  size_t start = end;
  while (start > 0 && text[start - 1] != '\n')
    start--;
  if (start == end)
    return;
  if (end - start > 160)
    end = start + 160;
  mapopt__sb_puts(sb, ": ");
  for (size_t i = start; i < end; i++) {
    unsigned char c = (unsigned char)text[i];
    mapopt__sb_putc(sb, c < 0x20 || c == 0x7f ? '?' : (char)c);
  }
}

/* The state of one evaluation while it runs. */
typedef struct evaluation {
  const mapopt_evaluator *ev;
  mapopt_eval_result *r;
  int form; /* index of the metric form found in the first run, or -1 */
  int stopped_before; /* 1 + the run a stop kept from starting, or 0 */
  int min, max;       /* runs planned: min, and up to max as more says */
  char bad[80];       /* a metric that is not a number */
  double *scratch;
} evaluation;

static void put_metric(mapopt__strbuf *sb, const mapopt__metric_form *f,
                       double v) {
  mapopt__sb_printf(sb, "%s %.6g%s%s", f->name, v, f->unit[0] ? " " : "",
                    f->unit);
}

/* The one-line summary of r. */
static char *summarize(const evaluation *e, size_t *len) {
  const mapopt_eval_result *r = e->r;
  const mapopt_evaluator *ev = e->ev;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ev->ctx);
  const char *name = mapopt_eval_status_name(r->status);
  if (r->status == MAPOPT_EVAL_OK) {
    mapopt__sb_puts(&sb, "ok: ");
    put_metric(&sb, &ev->forms[e->form], r->metric);
    if (r->runs > 1)
      mapopt__sb_printf(&sb, " (median of %d runs)", r->runs);
    return mapopt__sb_take(&sb, len);
  }
  mapopt__sb_puts(&sb, name);
  /* Of the runs planned: min, or up to max once past it. */
  int k = e->stopped_before ? e->stopped_before : r->runs;
  int planned = k > e->min ? e->max : e->min;
  const char *upto = k > e->min ? "up to " : "";
  if (e->stopped_before) {
    if (planned > 1)
      mapopt__sb_printf(&sb, ": stopped before run %d of %s%d", k, upto,
                        planned);
    else
      mapopt__sb_puts(&sb, ": stopped before the run started");
    return mapopt__sb_take(&sb, len);
  }
  if (planned > 1 && r->status != MAPOPT_EVAL_START_FAILED)
    mapopt__sb_printf(&sb, " in run %d of %s%d", k, upto, planned);
  switch (r->status) {
  case MAPOPT_EVAL_FAILED:
    if (r->exit_code >= 0)
      mapopt__sb_printf(&sb, ": exit status %d", r->exit_code);
    else
      mapopt__sb_puts(&sb, ": exit status lost (its supervisor was killed)");
    put_last_line(&sb, r->output, r->output_len);
    break;
  case MAPOPT_EVAL_SIGNALED:
    mapopt__sb_printf(&sb, ": killed by %s (signal %d)", signal_name(r->signal),
                      r->signal);
    put_last_line(&sb, r->output, r->output_len);
    break;
  case MAPOPT_EVAL_TIMEOUT:
  case MAPOPT_EVAL_INTERRUPTED:
    if (r->status == MAPOPT_EVAL_TIMEOUT)
      mapopt__sb_printf(&sb, ": still running after %g s", r->timeout_s);
    else
      mapopt__sb_puts(&sb, ": stopped");
    mapopt__sb_printf(&sb, "; process group killed with SIGTERM%s",
                      r->signal == SIGKILL ? ", then SIGKILL" : "");
    break;
  case MAPOPT_EVAL_NO_METRIC: {
    if (e->bad[0]) {
      mapopt__sb_printf(&sb, ": the metric '%s' is not a number", e->bad);
      break;
    }
    /* After the first run, only the form it printed is looked for. */
    size_t from = e->form >= 0 ? (size_t)e->form : 0;
    size_t to = e->form >= 0 ? from + 1 : ev->nforms;
    mapopt__sb_puts(&sb, ": exit status 0 but no output line matched ");
    if (ev->custom)
      mapopt__sb_puts(&sb, "--metric ");
    for (size_t i = from; i < to; i++)
      mapopt__sb_printf(&sb, "%s'%s'",
                        i == from    ? ""
                        : i + 1 < to ? ", "
                                     : " or ",
                        ev->forms[i].shown);
    break;
  }
  default:
    mapopt__sb_printf(&sb, ": %s", r->output);
    break;
  }
  return mapopt__sb_take(&sb, len);
}

/* Records outcome o of run k (0-based) in e->r; *more says whether it was
 * ok and the next may start. MAPOPT_ENOMEM. */
static mapopt_status record_run(evaluation *e, int k, mapopt__spawn_outcome *o,
                                bool *more) {
  mapopt_eval_result *r = e->r;
  *more = false;
  r->runs = k + 1;
  r->wall_s[k] = o->wall_s;
  r->values[k] = NAN;
  r->exit_code = o->exit_code;
  r->signal = o->signal;
  if (!o->started) {
    r->status = MAPOPT_EVAL_START_FAILED;
    return MAPOPT_OK;
  }
  if (o->interrupted || o->timed_out) {
    r->status = o->interrupted ? MAPOPT_EVAL_INTERRUPTED : MAPOPT_EVAL_TIMEOUT;
    r->signal = o->signal ? o->signal : o->kill_signal;
    return MAPOPT_OK;
  }
  if (o->signal) {
    r->status = MAPOPT_EVAL_SIGNALED;
    return MAPOPT_OK;
  }
  if (o->exit_code != 0) {
    r->status = MAPOPT_EVAL_FAILED;
    return MAPOPT_OK;
  }
  /* The first run decides which form the metric has; the others must
   * print it the same way. */
  size_t from = e->form >= 0 ? (size_t)e->form : 0;
  size_t to = e->form >= 0 ? from + 1 : e->ev->nforms;
  r->status = MAPOPT_EVAL_NO_METRIC;
  for (size_t f = from; f < to; f++) {
    mapopt__metric_found got;
    mapopt_status st =
        mapopt__eval_metric_last(e->ev->ctx, &e->ev->res[f], r->output, &got,
                                 &r->values[k], e->bad, sizeof e->bad);
    if (st != MAPOPT_OK)
      return st;
    if (got == MAPOPT__METRIC_FOUND) {
      e->form = (int)f;
      r->status = MAPOPT_EVAL_OK;
      *more = true;
      return MAPOPT_OK;
    }
    if (got == MAPOPT__METRIC_BAD) {
      r->values[k] = NAN;
      break;
    }
  }
  return MAPOPT_OK;
}

/* Moves the outcome's text into r->output (the previous run's is freed). */
static mapopt_status take_output(mapopt_ctx *ctx, mapopt_eval_result *r,
                                 mapopt__spawn_outcome *o) {
  free_str(ctx, r->output);
  r->output = NULL;
  if (!o->started) {
    r->output = dup_str(ctx, o->start_error);
    r->output_len = r->output ? strlen(r->output) : 0;
    r->output_bytes = r->output_dropped = 0;
    return r->output ? MAPOPT_OK : MAPOPT_ENOMEM;
  }
  r->output_bytes = o->out.total;
  return mapopt__capture_text(&o->out, &r->output, &r->output_len,
                              &r->output_dropped);
}

static void free_doubles(mapopt_ctx *ctx, double *v, int n) {
  mapopt__free(ctx, v, (size_t)(n > 0 ? n : 1) * sizeof *v);
}

/* A result as the library allocates it: the public struct first, then
 * what mapopt_eval_result_free needs. */
typedef struct result_impl {
  mapopt_eval_result pub;
  mapopt_ctx *ctx;
} result_impl;

void mapopt_eval_result_free(mapopt_eval_result *r) {
  if (!r)
    return;
  result_impl *impl = (result_impl *)r;
  mapopt_ctx *ctx = impl->ctx;
  free_doubles(ctx, r->values, r->runs);
  free_doubles(ctx, r->wall_s, r->runs);
  free_str(ctx, r->output);
  free_str(ctx, r->summary);
  free_str(ctx, r->dir);
  mapopt__eval_argv_free(ctx, r->argv);
  mapopt__free(ctx, impl, sizeof *impl);
}

/* A copy of the first n entries of v, exactly n long (at least 1). */
static double *copy_doubles(mapopt_ctx *ctx, const double *v, int n) {
  double *d = mapopt__malloc(ctx, (size_t)(n > 0 ? n : 1) * sizeof *d);
  if (d && n > 0)
    memcpy(d, v, (size_t)n * sizeof *d);
  return d;
}

/* Runs the command once with the mapper at path in dir: run k of e. On
 * return *more says whether the next run may start. */
static mapopt_status run_once(evaluation *e, int k, const char *dir,
                              const char *path, double timeout_s, bool *more) {
  const mapopt_evaluator *ev = e->ev;
  mapopt_ctx *ctx = ev->ctx;
  mapopt_eval_result *r = e->r;
  *more = false;
  char **argv, **envp, *own;
  size_t argc, nenvp;
  mapopt_status st = mapopt__eval_cmd_argv(ctx, &ev->cmd, path, &argv, &argc);
  if (st != MAPOPT_OK)
    return st;
  mapopt__eval_argv_free(ctx, r->argv);
  r->argv = argv;
  st = make_env(ev, path, &envp, &nenvp, &own);
  if (st != MAPOPT_OK)
    return st;
  mapopt__spawn_spec spec = {.argv = argv,
                             .envp = envp,
                             .cwd = ev->workdir ? ev->workdir : dir,
                             .timeout_s = timeout_s,
                             .grace_s = ev->grace_s,
                             .linger_s = ev->linger_s,
                             .stop = ev->stop,
                             .output_cap = ev->cap};
  mapopt__spawn_outcome o;
  st = mapopt__eval_spawn(ctx, &spec, &o);
  mapopt__free(ctx, envp, nenvp * sizeof *envp);
  free_str(ctx, own);
  if (st == MAPOPT_OK)
    st = take_output(ctx, r, &o);
  if (st == MAPOPT_OK)
    st = record_run(e, k, &o, more);
  mapopt__spawn_outcome_destroy(&o);
  return st;
}

/* Turns the per-run arrays of the evaluation into the result's own, sets
 * the metric and the summary. */
static mapopt_status finish(evaluation *e, const double *values,
                            const double *walls) {
  mapopt_ctx *ctx = e->ev->ctx;
  mapopt_eval_result *r = e->r;
  const mapopt__metric_form *f = e->form >= 0    ? &e->ev->forms[e->form]
                                 : e->ev->custom ? &e->ev->forms[0]
                                                 : NULL;
  r->metric_name = f ? f->name : NULL;
  r->metric_unit = f ? f->unit : NULL;
  r->direction = f ? f->direction : MAPOPT_EVAL_LOWER;
  if (r->status == MAPOPT_EVAL_OK)
    r->metric = median(e->scratch, values, r->runs);
  if (r->runs > 0)
    r->wall_median_s = median(e->scratch, walls, r->runs);
  r->values = copy_doubles(ctx, values, r->runs);
  r->wall_s = copy_doubles(ctx, walls, r->runs);
  size_t len;
  r->summary = r->values && r->wall_s ? summarize(e, &len) : NULL;
  return r->summary ? MAPOPT_OK : MAPOPT_ENOMEM;
}

mapopt_status mapopt_eval_run(const mapopt_evaluator *ev, const char *mapper,
                              size_t len, double timeout_s, mapopt_diags *diags,
                              mapopt_eval_result **out) {
  return mapopt_eval_run_repeats(ev, mapper, len, timeout_s, NULL, diags, out);
}

mapopt_status mapopt_eval_run_repeats(const mapopt_evaluator *ev,
                                      const char *mapper, size_t len,
                                      double timeout_s,
                                      const mapopt_eval_repeats *rep,
                                      mapopt_diags *diags,
                                      mapopt_eval_result **out) {
  if (!(timeout_s >= 0) || !isfinite(timeout_s))
    return option_error(diags, "--timeout",
                        "the timeout must be a finite "
                        "number of seconds, 0 or more");
  int min = rep && rep->min ? rep->min : ev->repeat;
  int max = rep && rep->more && rep->max > min ? rep->max : min;
  if (min < 1 || max > MAX_REPEAT)
    return option_error(diags, "--repeat",
                        "the repeat count must be 1 to "
                        "1000");
  mapopt_ctx *ctx = ev->ctx;
  int n = max;
  result_impl *impl = mapopt__calloc(ctx, 1, sizeof *impl);
  double *work = mapopt__calloc(ctx, 3 * (size_t)n, sizeof *work);
  if (!impl || !work) {
    mapopt__free(ctx, impl, sizeof *impl);
    mapopt__free(ctx, work, 3 * (size_t)n * sizeof *work);
    return MAPOPT_ENOMEM;
  }
  impl->ctx = ctx;
  mapopt_eval_result *r = &impl->pub;
  /* The result's values and wall_s point into work while the runs go on;
   * finish gives it arrays of its own. */
  r->values = work;
  r->wall_s = work + n;
  r->metric = NAN;
  r->exit_code = -1;
  r->timeout_s = timeout_s;
  evaluation e = {.ev = ev,
                  .r = r,
                  .form = -1,
                  .scratch = work + 2 * n,
                  .min = min,
                  .max = max};
  char *dir = NULL, *path = NULL;
  mapopt_status st = make_dir(ev, mapper, len, diags, &dir, &path);
  bool more = st == MAPOPT_OK;
  for (int k = 0; k < n && more && st == MAPOPT_OK; k++) {
    /* Past the minimum, another run only when the caller wants one. */
    if (k >= min && !rep->more(rep->ud, r->values, k,
                               e.form >= 0 ? ev->forms[e.form].direction
                                           : ev->forms[0].direction))
      break;
    if (ev->stop && *ev->stop) {
      r->status = MAPOPT_EVAL_INTERRUPTED;
      e.stopped_before = k + 1;
      break;
    }
    st = run_once(&e, k, dir, path, timeout_s, &more);
  }
  if (dir && !ev->keep)
    remove_tree_at(AT_FDCWD, dir, 0);
  if (dir && ev->keep)
    r->dir = dir;
  else
    free_str(ctx, dir);
  free_str(ctx, path);
  double *values = r->values, *walls = r->wall_s;
  r->values = r->wall_s = NULL;
  if (st == MAPOPT_OK)
    st = finish(&e, values, walls);
  mapopt__free(ctx, work, 3 * (size_t)n * sizeof *work);
  if (st != MAPOPT_OK) {
    mapopt_eval_result_free(r);
    return st;
  }
  *out = r;
  return MAPOPT_OK;
}
