/*
 * run_golden: the golden conformance tests of the mapping DSL (docs/dsl.md;
 * where the cases come from: tests/dsl/README.md).
 *
 * It reads jq-style golden files (tests/dsl/NAME.test), compiles each case's
 * program through the public API only (mapopt/dsl.h, mapopt/core.h), asks
 * the case's policy queries against the built-in Application A (below),
 * and compares everything it prints with the case's expected output, byte
 * for byte. It does not simulate: where a checklist item is about the
 * simulator (R26 in strict mode aside, which select_kind answers), the case
 * tests the policy's answer and says so in a %note.
 *
 * File format
 * -----------
 * Lines before the first case are free comments. A case starts with a
 * header line "### ID TITLE" (ID is the checklist number, plus a letter for
 * each variant of one item). Then, in this order:
 *
 *   directives   lines starting with '%', before the program:
 *                  %machine T24|T14|TC|<shape>   (default T24; <shape> is a
 *                      mapopt_shape_parse one-liner such as "nodes=1 gpu=12")
 *                  %app          pass Application A's tasks to the checker
 *                                (W11, W12); queries always use A
 *                  %lenient      ?kind & co. use lenient_kinds
 *                  %nonewline    the program has no final newline
 *                  %countprints  print lines are replaced by one line
 *                                "<N print lines>" (for the 1000-line cap)
 *                  %portable     compile with the portability checks
 *                                (P01-P28, docs/legion.md)
 *                  %keys names|positions|both
 *                                the region-key mode (default: auto,
 *                                mapopt_region_keys_mode)
 *                  %note TEXT    a comment, ignored
 *   program      the text of m.map: every line up to the first query or
 *                %expect, trailing blank lines removed, each line ended by
 *                a newline (unless %nonewline). It may be empty. A program
 *                line must not start with '?', '%' or "### ".
 *   queries      lines starting with '?' (below)
 *   %expect      then the exact expected output, up to the next "### " or
 *                the end of the file (trailing blank lines removed).
 *
 * Output of a case, in this order:
 *   1. compile: the lines written by `print` while loading, as emitted;
 *      then every diagnostic of mapopt_dsl_compile, formatted with
 *      mapopt_diag_format, one per line. Queries run only when the program
 *      compiled.
 *   2. each query, in file order: the print lines it caused, then the line
 *      "QUERY => RESULT" (QUERY as written), then the diagnostics the
 *      library appended while answering it (mapping errors with their
 *      context note, W14, W15).
 *   3. "!! ..." lines when the runner's own consistency checks fail (status
 *      vs. diagnostics, diagnostic codes, the round-trip property); none are
 *      ever expected, so they always fail the case.
 *
 * An expected line starting with "m.map:?:?: " matches any line and column
 * (used where the documentation fixes the message but not the position).
 *
 * Queries (TASK and ARG name Application A's tasks and region arguments;
 * ARG is any key of the argument: a name or its position):
 *   ?kind TASK             select_kind with TASK's variants: the kind, or
 *                          the R26 message
 *   ?kinds TASK            the raw Task list: "[GPU, CPU]" or "unspecified"
 *                          (?kinds, ?limit and ?replicated also take task
 *                          names that are not in A)
 *   ?memory TASK ARG [K]   select_memory on the selected kind (or kind K)
 *   ?memlist TASK ARG [K]  the raw Region candidate list, or "unspecified"
 *   ?layout TASK ARG D [M] resolve_layout for a D-dimensional instance in
 *                          memory M (default: the selected memory) on the
 *                          selected kind: "SOA F_order (X, Y, F)", then
 *                          " Align==64", " Compact", " Exact" when set
 *   ?limit TASK            InstanceLimit: the number, or "none"
 *   ?collect TASK ARG      "yes" when the policy collects ARG and ARG is
 *                          read-only in A, else "no"
 *   ?replicated TASK       "yes" or "no" (top-level: main; nodes: machine's)
 *   ?place TASK P [over E] index placement of point P ("5", "3,1") of TASK
 *                          launched over A's domain or E: the IndexTaskMap
 *                          answer "GPU(1, 1)" (a set: its first point, then
 *                          " (first of N)"), or, when unspecified,
 *                          mapopt_policy_default_index_place then " [default]";
 *                          "EMAP" on a mapping error
 *   ?single TASK [parent=step:P]
 *                          single-task placement. Parents follow A: main is
 *                          on CPU(0, 0); a step point runs where ?place puts
 *                          it; leaf's parent is step point P (default 0).
 *                          Prints the point or "{GPU(1, 0), ...}";
 *                          "unspecified [default: round-robin]" for a deeper
 *                          task without a function, "CPU(0, 0) [default]"
 *                          for one launched by main; R18 (a point on another
 *                          node than the parent's) prints
 *                          "Assertion failed: single task must stay on its
 *                          parent's node" and the context note
 *   ?format                "?format =>" then the canonical text's lines
 *
 * Round trip (docs/dsl.md, "Step 7: format it"): for every case whose program
 * compiles, the runner formats it, compiles the formatted text, and checks
 * mapopt_dsl_equal and that formatting again gives the same bytes (and, so
 * that equality is not vacuous, that the text plus one more statement does
 * not compare equal).
 * `run_golden --roundtrip DIR` does the same for every *.map file under DIR
 * (recursively) with the default machine, and fails a file, or its
 * canonical form, with a portability warning (P01-P28: what the DSL mapper
 * of Legion does not load or reads differently, docs/legion.md); it passes
 * with zero files.
 *
 * Usage: run_golden [-v] [-k ID] FILE.test...   (-v: print every output)
 *        run_golden --roundtrip DIR
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mapopt/core.h"
#include "mapopt/dsl.h"

#define FILE_NAME "m.map"

/* ---- small utilities ------------------------------------------------------
 */

typedef struct strlist {
  char **v;
  size_t n, cap;
} strlist;

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fprintf(stderr, "run_golden: out of memory\n");
    exit(2);
  }
  return q;
}

static char *xstrndup(const char *s, size_t n) {
  char *d = xrealloc(NULL, n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static void sl_push(strlist *l, char *s) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->v = xrealloc(l->v, l->cap * sizeof *l->v);
  }
  l->v[l->n++] = s;
}

/* The formatted text, in memory the caller frees. */
static char *xvformat(const char *fmt, va_list ap)
    __attribute__((format(printf, 1, 0)));
static char *xvformat(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *s = xrealloc(NULL, (size_t)n + 1);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

static void sl_pushf(strlist *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sl_pushf(strlist *l, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sl_push(l, xvformat(fmt, ap));
  va_end(ap);
}

static void sl_free(strlist *l) {
  for (size_t i = 0; i < l->n; i++)
    free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

static bool starts_with(const char *s, const char *p) {
  return strncmp(s, p, strlen(p)) == 0;
}

/* Splits s at whitespace into at most cap words (s is modified). */
static int split_words(char *s, char **w, int cap) {
  int n = 0;
  for (char *tok = strtok(s, " \t"); tok && n < cap; tok = strtok(NULL, " \t"))
    w[n++] = tok;
  return n;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = cap ? 2 * cap : 8192;
      buf = xrealloc(buf, cap);
    }
    size_t r = fread(buf + n, 1, 4096, f);
    n += r;
    if (r == 0)
      break;
  }
  fclose(f);
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* ---- Application A ----------------------------------------------------------
 */

typedef struct app_arg {
  const char *const *names; /* NULL-terminated */
  bool read_only;
} app_arg;

typedef struct app_task {
  const char *name;
  unsigned variants; /* 1u << mapopt_proc_kind */
  bool top_level;
  bool index;
  int dims;
  int64_t extents[3];
  const char *parent; /* launching task; NULL for the top-level task */
  size_t nargs;
  const app_arg *args;
} app_task;

#define V(k) (1u << MAPOPT_PROC_##k)

static const char *const n_all_cells[] = {"all_cells", NULL};
static const char *const n_cells[] = {"cells", "all_cells", NULL};
static const char *const n_halo[] = {"halo", NULL};
static const char *const n_mat[] = {"mat", NULL};

static const app_arg a_main[] = {{n_all_cells, false}};
static const app_arg a_step[] = {{n_cells, false}, {n_halo, true}};
static const app_arg a_tile[] = {{n_mat, true}};
static const app_arg a_sum[] = {{n_all_cells, true}};
static const app_arg a_log[] = {{n_all_cells, true}};

static const app_task app_a[] = {
    {"main", V(CPU), true, false, 0, {0}, NULL, 1, a_main},
    {"step", V(CPU) | V(GPU), false, true, 1, {8}, "main", 2, a_step},
    {"tile", V(GPU) | V(CPU), false, true, 2, {4, 4}, "main", 1, a_tile},
    {"cube", V(GPU), false, true, 3, {2, 2, 2}, "main", 0, NULL},
    {"leaf", V(GPU) | V(CPU), false, false, 0, {0}, "step", 0, NULL},
    {"sum", V(OMP), false, false, 0, {0}, "main", 1, a_sum},
    {"log", V(CPU), false, false, 0, {0}, "main", 1, a_log},
};
#define APP_NTASKS (sizeof app_a / sizeof app_a[0])

static const char *const *const names_main[] = {n_all_cells};
static const char *const *const names_step[] = {n_cells, n_halo};
static const char *const *const names_tile[] = {n_mat};
static const char *const *const names_sum[] = {n_all_cells};
static const char *const *const names_log[] = {n_all_cells};

static const mapopt_task_info app_info[] = {
    {"main", 1, names_main}, {"step", 2, names_step}, {"tile", 1, names_tile},
    {"cube", 0, NULL},       {"leaf", 0, NULL},       {"sum", 1, names_sum},
    {"log", 1, names_log},
};

static const app_task *app_find(const char *name) {
  for (size_t i = 0; i < APP_NTASKS; i++)
    if (strcmp(app_a[i].name, name) == 0)
      return &app_a[i];
  return NULL;
}

/* The argument of t that has key (a name or the decimal position). */
static int app_arg_index(const app_task *t, const char *key) {
  for (size_t i = 0; i < t->nargs; i++) {
    char pos[24];
    snprintf(pos, sizeof pos, "%zu", i);
    if (strcmp(pos, key) == 0)
      return (int)i;
    for (const char *const *n = t->args[i].names; *n; n++)
      if (strcmp(*n, key) == 0)
        return (int)i;
  }
  return -1;
}

static mapopt_region_keys app_keys(const app_task *t, int arg) {
  mapopt_region_keys k;
  k.names = t->args[arg].names;
  k.nnames = 0;
  while (k.names[k.nnames])
    k.nnames++;
  k.position = (size_t)arg;
  return k;
}

/* ---- cases -----------------------------------------------------------------
 */

typedef struct gcase {
  char *id;
  char *title;
  int line; /* of the header, for messages */
  char *machine;
  bool app, lenient, nonewline, countprints, portable;
  mapopt_region_keys_mode keys;
  strlist program, queries, expect;
} gcase;

static void case_free(gcase *c) {
  free(c->id);
  free(c->title);
  free(c->machine);
  sl_free(&c->program);
  sl_free(&c->queries);
  sl_free(&c->expect);
}

static void trim_trailing_blank(strlist *l) {
  while (l->n > 0 && l->v[l->n - 1][0] == '\0') {
    free(l->v[--l->n]);
  }
}

/* Parses a .test file into cases; returns -1 (with a message) on error. */
static int parse_test_file(const char *path, const char *text, gcase **out,
                           size_t *ncases) {
  gcase *cases = NULL;
  size_t n = 0;
  enum { NONE, DIRECTIVES, PROGRAM, QUERIES, EXPECT } state = NONE;
  int lineno = 0;
  const char *p = text;
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char *line = xstrndup(p, len);
    p = e ? e + 1 : p + len;
    lineno++;
    if (starts_with(line, "### ")) {
      cases = xrealloc(cases, (n + 1) * sizeof *cases);
      gcase *c = &cases[n++];
      memset(c, 0, sizeof *c);
      char *rest = line + 4;
      size_t idlen = strcspn(rest, " \t");
      c->id = xstrndup(rest, idlen);
      rest += idlen;
      rest += strspn(rest, " \t");
      c->title = xstrndup(rest, strlen(rest));
      c->line = lineno;
      state = DIRECTIVES;
      free(line);
      continue;
    }
    if (state == NONE) {
      free(line);
      continue;
    }
    gcase *c = &cases[n - 1];
    if (state != EXPECT && strcmp(line, "%expect") == 0) {
      state = EXPECT;
      free(line);
      continue;
    }
    if (state == DIRECTIVES && line[0] == '%') {
      if (starts_with(line, "%machine ")) {
        free(c->machine);
        c->machine = xstrndup(line + 9, strlen(line + 9));
      } else if (strcmp(line, "%app") == 0) {
        c->app = true;
      } else if (strcmp(line, "%lenient") == 0) {
        c->lenient = true;
      } else if (strcmp(line, "%nonewline") == 0) {
        c->nonewline = true;
      } else if (strcmp(line, "%countprints") == 0) {
        c->countprints = true;
      } else if (strcmp(line, "%portable") == 0) {
        c->portable = true;
      } else if (strcmp(line, "%keys names") == 0) {
        c->keys = MAPOPT_KEYS_NAMES;
      } else if (strcmp(line, "%keys positions") == 0) {
        c->keys = MAPOPT_KEYS_POSITIONS;
      } else if (strcmp(line, "%keys both") == 0) {
        c->keys = MAPOPT_KEYS_BOTH;
      } else if (!starts_with(line, "%note")) {
        fprintf(stderr, "%s:%d: unknown directive: %s\n", path, lineno, line);
        free(line);
        return -1;
      }
      free(line);
      continue;
    }
    if (state == DIRECTIVES)
      state = PROGRAM;
    if (state == PROGRAM && line[0] == '?') {
      trim_trailing_blank(&c->program);
      state = QUERIES;
    }
    switch (state) {
    case PROGRAM:
      if (line[0] == '%') {
        fprintf(stderr, "%s:%d: directive inside a program: %s\n", path, lineno,
                line);
        free(line);
        return -1;
      }
      sl_push(&c->program, line);
      break;
    case QUERIES:
      if (line[0] == '\0') {
        free(line);
        break;
      }
      if (line[0] != '?') {
        fprintf(stderr, "%s:%d: expected a query or %%expect: %s\n", path,
                lineno, line);
        free(line);
        return -1;
      }
      sl_push(&c->queries, line);
      break;
    case EXPECT:
      sl_push(&c->expect, line);
      break;
    default:
      free(line);
      break;
    }
  }
  for (size_t i = 0; i < n; i++) {
    trim_trailing_blank(&cases[i].program);
    trim_trailing_blank(&cases[i].expect);
  }
  *out = cases;
  *ncases = n;
  return 0;
}

/* ---- running a case -------------------------------------------------------
 */

typedef struct runner {
  mapopt_ctx *ctx;
  strlist *out;   /* where print lines go now (NULL: discard) */
  size_t nprints; /* print lines seen in the current section */
  bool countprints;
} runner;

static void on_print(void *ud, const char *line) {
  runner *r = ud;
  r->nprints++;
  if (r->out && !r->countprints)
    sl_pushf(r->out, "%s", line);
}

/* Ends a print section: with %countprints, one line with the count. */
static void flush_prints(runner *r) {
  if (r->countprints && r->nprints > 0 && r->out)
    sl_pushf(r->out, "<%zu print lines>", r->nprints);
  r->nprints = 0;
}

static void push_diag(strlist *out, const mapopt_diag *d) {
  char small[512];
  int n = mapopt_diag_format(d, small, sizeof small);
  if (n < 0) {
    sl_pushf(out, "!! mapopt_diag_format failed");
    return;
  }
  if ((size_t)n < sizeof small) {
    sl_pushf(out, "%s", small);
    return;
  }
  char *big = xrealloc(NULL, (size_t)n + 1);
  mapopt_diag_format(d, big, (size_t)n + 1);
  sl_push(out, big);
}

/* Appends diagnostics from index `from` on, with sanity checks of codes. */
static void push_diags(strlist *out, const mapopt_diags *diags, size_t from) {
  size_t n = mapopt_diags_count(diags);
  for (size_t i = from; i < n; i++) {
    const mapopt_diag *d = mapopt_diags_get(diags, i);
    push_diag(out, d);
    const char *c = d->code;
    bool ok;
    switch (d->severity) {
    case MAPOPT_SEV_NOTE:
      ok = c[0] == 'N';
      break;
    case MAPOPT_SEV_WARNING:
      ok = c[0] == 'W' || c[0] == 'P';
      break;
    case MAPOPT_SEV_ERROR:
      ok = c[0] == 'E' || c[0] == 'R';
      break;
    default:
      ok = c[0] == 'R';
      break;
    }
    if (ok)
      ok = c[1] >= '0' && c[1] <= '9' && c[2] >= '0' && c[2] <= '9' &&
           c[3] == '\0';
    if (!ok)
      sl_pushf(out,
               "!! diagnostic %zu has code '%s', which does not fit its "
               "severity %s",
               i, c, mapopt_severity_name(d->severity));
  }
}

static bool load_shape(const char *spec, mapopt_machine_shape *shape, char *err,
                       size_t errlen) {
  const char *text = spec;
  if (!spec || strcmp(spec, "T24") == 0)
    text = "nodes=2 cpu=2 gpu=4 omp=1 rdmem=0";
  else if (strcmp(spec, "T14") == 0)
    text = "nodes=1 cpu=2 gpu=4 omp=1 rdmem=0";
  else if (strcmp(spec, "TC") == 0)
    text = "nodes=2 cpu=4 sockets=0 zcmem=0 rdmem=0";
  return mapopt_shape_parse(text, shape, err, errlen) == MAPOPT_OK;
}

static void fmt_point(char *buf, size_t size, const mapopt_proc_point *p) {
  const char *k = mapopt_shape_proc_name(p->kind);
  snprintf(buf, size, "%s(%" PRId64 ", %" PRId64 ")", k ? k : "?", p->node,
           p->proc);
}

/* Parses "5" or "3,1" or "(3, 1)" into up to 3 coordinates. */
static int parse_coords(const char *s, int64_t *v, int cap) {
  int n = 0;
  while (*s) {
    if (*s == '(' || *s == ')' || *s == ',' || *s == ' ') {
      s++;
      continue;
    }
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || errno || n == cap)
      return -1;
    v[n++] = x;
    s = end;
  }
  return n;
}

/* Selected kind of t, or false with the R26 message in err. */
static bool select_kind(mapopt_ctx *ctx, const mapopt_program *prog,
                        const app_task *t, bool lenient, mapopt_proc_kind *k,
                        char *err, size_t errlen) {
  mapopt_diags *d = NULL;
  mapopt_status st = mapopt_diags_new(ctx, &d);
  if (st == MAPOPT_OK)
    st = mapopt_policy_select_kind(prog, t->name, t->variants, lenient, k, d);
  if (st != MAPOPT_OK) {
    const mapopt_diag *r26 = d ? mapopt_diags_get(d, 0) : NULL;
    if (r26)
      snprintf(err, errlen, "%s", r26->message);
    else
      snprintf(err, errlen, "select_kind failed with %s (no message)",
               mapopt_status_name(st));
  }
  mapopt_diags_free(d);
  return st == MAPOPT_OK;
}

typedef struct qctx {
  runner *r;
  const gcase *c;
  const mapopt_program *prog;
  mapopt_diags *diags; /* per query */
  strlist *out;
  const char *q; /* the query as written */
} qctx;

/* Pushes the line "QUERY => RESULT". */
static void result(qctx *qc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void result(qctx *qc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = xvformat(fmt, ap);
  va_end(ap);
  sl_pushf(qc->out, "%s => %s", qc->q, s);
  free(s);
}
#define RESULT(...) result(qc, __VA_ARGS__)

/* Places point of index task t: the answer in *p, or false after pushing
 * the result line (EMAP or a kind error). */
static bool place_point(qctx *qc, const app_task *t, int dims,
                        const int64_t *point, const int64_t *ext,
                        mapopt_proc_point *p, size_t *setn, bool *deflt) {
  char err[512];
  mapopt_proc_kind k;
  if (!select_kind(qc->r->ctx, qc->prog, t, qc->c->lenient, &k, err,
                   sizeof err)) {
    RESULT("%s", err);
    return false;
  }
  mapopt_map_answer a;
  memset(&a, 0, sizeof a);
  mapopt_status st = mapopt_policy_index_map(qc->prog, t->name, dims, point,
                                             ext, k, &a, qc->diags);
  if (st != MAPOPT_OK) {
    RESULT("%s", mapopt_status_name(st));
    if (st == MAPOPT_EMAP && mapopt_diags_errors(qc->diags) == 0)
      sl_pushf(qc->out, "!! EMAP without a mapping error diagnostic");
    return false;
  }
  *deflt = false;
  *setn = 0;
  switch (a.kind) {
  case MAPOPT_MAP_UNSPECIFIED: {
    const mapopt_machine_shape *sh = mapopt_dsl_shape(qc->prog);
    p->kind = k;
    mapopt_policy_default_index_place(dims, point, ext, sh->nodes, sh->procs[k],
                                      &p->node, &p->proc);
    *deflt = true;
    break;
  }
  case MAPOPT_MAP_POINT:
    *p = a.points[0];
    break;
  case MAPOPT_MAP_SET:
    *p = a.points[0];
    *setn = a.npoints;
    break;
  }
  return true;
}

static void q_place(qctx *qc, const app_task *t, char **w, int nw) {
  int64_t point[3], ext[3];
  int dims = nw >= 3 ? parse_coords(w[2], point, 3) : -1;
  if (!t->index || dims != t->dims) {
    RESULT("!! bad query (not an index task, or wrong point)");
    return;
  }
  memcpy(ext, t->extents, sizeof ext);
  if (nw == 5 && strcmp(w[3], "over") == 0) {
    if (parse_coords(w[4], ext, 3) != dims) {
      RESULT("!! bad extents");
      return;
    }
  } else if (nw != 3) {
    RESULT("!! bad query");
    return;
  }
  mapopt_proc_point p;
  size_t setn;
  bool deflt;
  if (!place_point(qc, t, dims, point, ext, &p, &setn, &deflt))
    return;
  char buf[128];
  fmt_point(buf, sizeof buf, &p);
  if (deflt)
    RESULT("%s [default]", buf);
  else if (setn)
    RESULT("%s (first of %zu)", buf, setn);
  else
    RESULT("%s", buf);
}

static void q_single(qctx *qc, const app_task *t, char **w, int nw) {
  if (t->index) {
    RESULT("!! not a single task");
    return;
  }
  char err[512];
  const app_task *mainp = app_find("main");
  mapopt_proc_kind kmain, k;
  if (!select_kind(qc->r->ctx, qc->prog, mainp, qc->c->lenient, &kmain, err,
                   sizeof err)) {
    RESULT("%s", err);
    return;
  }
  mapopt_task_ref mref = {"main", false, 0, NULL, NULL, {kmain, 0, 0}, NULL};
  int64_t spoint[1] = {0};
  const app_task *stepp = app_find("step");
  mapopt_task_ref sref = {
      "step", true, 1, spoint, stepp->extents, {MAPOPT_PROC_CPU, 0, 0}, &mref};
  for (int i = 2; i < nw; i++) {
    if (starts_with(w[i], "parent=step:")) {
      if (parse_coords(w[i] + 12, spoint, 1) != 1) {
        RESULT("!! bad parent");
        return;
      }
    } else {
      RESULT("!! bad query");
      return;
    }
  }
  const mapopt_task_ref *parent = NULL;
  if (t->parent && strcmp(t->parent, "step") == 0) {
    size_t setn;
    bool deflt;
    if (!place_point(qc, stepp, 1, spoint, stepp->extents, &sref.proc, &setn,
                     &deflt))
      return;
    parent = &sref;
  } else if (t->parent) {
    parent = &mref;
  }
  if (!select_kind(qc->r->ctx, qc->prog, t, qc->c->lenient, &k, err,
                   sizeof err)) {
    RESULT("%s", err);
    return;
  }
  int64_t node = parent ? parent->proc.node : 0;
  mapopt_task_ref self = {t->name, false, 0, NULL, NULL, {k, node, 0}, parent};
  if (!parent)
    self = mref;
  mapopt_map_answer a;
  memset(&a, 0, sizeof a);
  mapopt_proc_point set[64];
  mapopt_status st =
      mapopt_policy_single_map(qc->prog, &self, k, &a, set, 64, qc->diags);
  if (st != MAPOPT_OK) {
    RESULT("%s", mapopt_status_name(st));
    if (st == MAPOPT_EMAP && mapopt_diags_errors(qc->diags) == 0)
      sl_pushf(qc->out, "!! EMAP without a mapping error diagnostic");
    return;
  }
  char buf[2048], pb[128];
  bool other_node = false;
  switch (a.kind) {
  case MAPOPT_MAP_UNSPECIFIED:
    if (parent && parent != &mref) {
      RESULT("unspecified [default: round-robin]");
    } else {
      fmt_point(pb, sizeof pb, &self.proc);
      RESULT("%s [default]", pb);
    }
    return;
  case MAPOPT_MAP_POINT:
    fmt_point(buf, sizeof buf, &a.points[0]);
    other_node = a.points[0].node != node;
    break;
  case MAPOPT_MAP_SET: {
    size_t len = (size_t)snprintf(buf, sizeof buf, "{");
    for (size_t i = 0; i < a.npoints && i < 64; i++) {
      fmt_point(pb, sizeof pb, &set[i]);
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
                              i ? ", " : "", pb);
      if (set[i].node != node)
        other_node = true;
    }
    snprintf(buf + len, sizeof buf - len, "%s}", a.npoints > 64 ? ", ..." : "");
    if (a.npoints > 0 &&
        (set[0].kind != a.points[0].kind || set[0].node != a.points[0].node ||
         set[0].proc != a.points[0].proc))
      sl_pushf(qc->out, "!! points[0] differs from set[0]");
    break;
  }
  }
  if (other_node) {
    /* R18 is the substrate's check; this is its wording. */
    RESULT("Assertion failed: single task must stay on its parent's node");
    mapopt_diags *tmp;
    if (mapopt_diags_new(qc->r->ctx, &tmp) == MAPOPT_OK) {
      mapopt_diags_add(tmp, MAPOPT_SEV_NOTE, "", FILE_NAME, 0, 0,
                       "while mapping task '%s' with '%s'", t->name,
                       a.function ? a.function : "(null)");
      push_diag(qc->out, mapopt_diags_get(tmp, 0));
      mapopt_diags_free(tmp);
    }
    return;
  }
  RESULT("%s", buf);
}

static const char *dim_names[] = {"X", "Y", "Z", "W", "V", "U"};

static void q_layout(qctx *qc, const app_task *t, int arg, char **w, int nw) {
  char err[512];
  mapopt_proc_kind k;
  if (nw < 4 || nw > 5) {
    RESULT("!! bad query");
    return;
  }
  int dims = atoi(w[3]);
  if (dims < 1 || dims > 6) {
    RESULT("!! bad dimension count");
    return;
  }
  if (!select_kind(qc->r->ctx, qc->prog, t, qc->c->lenient, &k, err,
                   sizeof err)) {
    RESULT("%s", err);
    return;
  }
  mapopt_region_keys keys = app_keys(t, arg);
  mapopt_mem_kind m;
  if (nw == 5) {
    if (mapopt_shape_mem_parse(w[4], &m) != MAPOPT_OK) {
      RESULT("!! bad memory kind");
      return;
    }
  } else {
    m = mapopt_policy_select_memory(qc->prog, t->name, &keys, k);
  }
  mapopt_layout l;
  memset(&l, 0x5a, sizeof l);
  mapopt_policy_resolve_layout(qc->prog, t->name, &keys, m, k, false, &l);
  if (l.soa == MAPOPT_LAYOUT_UNSET || l.c_order == MAPOPT_LAYOUT_UNSET) {
    RESULT("!! resolve_layout left a component unset");
    return;
  }
  bool soa = l.soa == MAPOPT_LAYOUT_YES, c = l.c_order == MAPOPT_LAYOUT_YES;
  /* docs/dsl.md, "Resulting order of dimensions" (fastest first). */
  char order[128] = "";
  size_t len = 0;
  if (!soa)
    len += (size_t)snprintf(order + len, sizeof order - len, "F, ");
  for (int i = 0; i < dims; i++) {
    int d = c ? dims - 1 - i : i;
    len += (size_t)snprintf(order + len, sizeof order - len, "%s%s",
                            dim_names[d], i + 1 < dims || soa ? ", " : "");
  }
  if (soa)
    snprintf(order + len, sizeof order - len, "F");
  char extra[128] = "";
  len = 0;
  static const char *ops[] = {"", "==", "!=", "<", "<=", ">", ">="};
  if (l.align_op != MAPOPT_ALIGN_NONE)
    len += (size_t)snprintf(extra + len, sizeof extra - len, " Align%s%" PRId64,
                            (unsigned)l.align_op < 7 ? ops[l.align_op] : "??",
                            l.align);
  if (l.compact)
    len += (size_t)snprintf(extra + len, sizeof extra - len, " Compact");
  if (l.exact)
    snprintf(extra + len, sizeof extra - len, " Exact");
  RESULT("%s %s (%s)%s", soa ? "SOA" : "AOS", c ? "C_order" : "F_order", order,
         extra);
}

static void q_memory(qctx *qc, const app_task *t, int arg, char **w, int nw,
                     bool raw) {
  char err[512];
  mapopt_proc_kind k;
  if (nw == 4) {
    if (mapopt_shape_proc_parse(w[3], &k) != MAPOPT_OK) {
      RESULT("!! bad processor kind");
      return;
    }
  } else if (nw != 3) {
    RESULT("!! bad query");
    return;
  } else if (!select_kind(qc->r->ctx, qc->prog, t, qc->c->lenient, &k, err,
                          sizeof err)) {
    RESULT("%s", err);
    return;
  }
  mapopt_region_keys keys = app_keys(t, arg);
  if (!raw) {
    mapopt_mem_kind m =
        mapopt_policy_select_memory(qc->prog, t->name, &keys, k);
    const char *name = mapopt_shape_mem_name(m);
    RESULT("%s", name ? name : "!! invalid memory kind");
    return;
  }
  mapopt_mem_kind list[64];
  size_t n = mapopt_policy_memory_list(qc->prog, t->name, &keys, k, list, 64);
  if (n == 0) {
    RESULT("unspecified");
    return;
  }
  char buf[1024];
  size_t len = (size_t)snprintf(buf, sizeof buf, "[");
  for (size_t i = 0; i < n && i < 64; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? ", " : "",
                            mapopt_shape_mem_name(list[i]));
  snprintf(buf + len, sizeof buf - len, "]");
  RESULT("%s", buf);
}

static void q_format(qctx *qc) {
  char *text = NULL;
  size_t len = 0;
  mapopt_status st = mapopt_dsl_format(qc->prog, &text, &len);
  if (st != MAPOPT_OK) {
    RESULT("%s", mapopt_status_name(st));
    return;
  }
  sl_pushf(qc->out, "%s =>", qc->q);
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *e = memchr(p, '\n', (size_t)(end - p));
    size_t n = e ? (size_t)(e - p) : (size_t)(end - p);
    sl_push(qc->out, xstrndup(p, n));
    p += n + (e ? 1 : 0);
  }
  if (len > 0 && text[len - 1] != '\n')
    sl_pushf(qc->out, "!! canonical text does not end with a newline");
  mapopt_text_free(text);
}

static void run_query(runner *r, const gcase *c, const mapopt_program *prog,
                      const char *query, strlist *out) {
  mapopt_diags *diags;
  if (mapopt_diags_new(r->ctx, &diags) != MAPOPT_OK) {
    sl_pushf(out, "!! out of memory");
    return;
  }
  strlist qout = {0};
  r->out = &qout; /* print lines of the query come first */
  r->nprints = 0;
  strlist results = {0};
  qctx qstate = {r, c, prog, diags, &results, query};
  qctx *qcp = &qstate;
  char *copy = xstrndup(query, strlen(query));
  char *w[8];
  int nw = split_words(copy, w, 8);
  const app_task *t = nw >= 2 ? app_find(w[1]) : NULL;
  const char *verb = nw ? w[0] : "";
  /* The raw table queries also take names that are not in A. */
  app_task other = {
      nw >= 2 ? w[1] : "", 0, false, false, 0, {0}, NULL, 0, NULL};
  if (!t && nw == 2 &&
      (strcmp(verb, "?kinds") == 0 || strcmp(verb, "?limit") == 0 ||
       strcmp(verb, "?replicated") == 0))
    t = &other;
  int arg = -1;
  bool needs_arg =
      strcmp(verb, "?memory") == 0 || strcmp(verb, "?memlist") == 0 ||
      strcmp(verb, "?layout") == 0 || strcmp(verb, "?collect") == 0;
  if (needs_arg && t)
    arg = nw >= 3 ? app_arg_index(t, w[2]) : -1;
  {
    qctx *qc = qcp; /* for RESULT */
    if (strcmp(verb, "?format") == 0 && nw == 1) {
      q_format(qc);
    } else if (!t) {
      RESULT("!! unknown query or task");
    } else if (needs_arg && arg < 0) {
      RESULT("!! task %s has no argument with that key", t->name);
    } else if (strcmp(verb, "?kind") == 0 && nw == 2) {
      char err[512];
      mapopt_proc_kind k;
      if (select_kind(r->ctx, prog, t, c->lenient, &k, err, sizeof err))
        RESULT("%s", mapopt_shape_proc_name(k));
      else
        RESULT("%s", err);
    } else if (strcmp(verb, "?kinds") == 0 && nw == 2) {
      mapopt_proc_kind list[64];
      size_t n = mapopt_policy_proc_kinds(prog, t->name, list, 64);
      if (n == 0) {
        RESULT("unspecified");
      } else {
        char buf[512];
        size_t len = (size_t)snprintf(buf, sizeof buf, "[");
        for (size_t i = 0; i < n && i < 64; i++)
          len +=
              (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
                               i ? ", " : "", mapopt_shape_proc_name(list[i]));
        snprintf(buf + len, sizeof buf - len, "]");
        RESULT("%s", buf);
      }
    } else if (strcmp(verb, "?memory") == 0) {
      q_memory(qc, t, arg, w, nw, false);
    } else if (strcmp(verb, "?memlist") == 0) {
      q_memory(qc, t, arg, w, nw, true);
    } else if (strcmp(verb, "?layout") == 0) {
      q_layout(qc, t, arg, w, nw);
    } else if (strcmp(verb, "?limit") == 0 && nw == 2) {
      int64_t n = mapopt_policy_instance_limit(prog, t->name);
      if (n == 0)
        RESULT("none");
      else
        RESULT("%" PRId64, n);
    } else if (strcmp(verb, "?collect") == 0 && nw == 3) {
      mapopt_region_keys keys = app_keys(t, arg);
      bool col =
          mapopt_policy_collect(prog, t->name, &keys) && t->args[arg].read_only;
      RESULT("%s", col ? "yes" : "no");
    } else if (strcmp(verb, "?replicated") == 0 && nw == 2) {
      bool rep = mapopt_policy_replicated(prog, t->name, t->top_level,
                                          mapopt_dsl_shape(prog)->nodes);
      RESULT("%s", rep ? "yes" : "no");
    } else if (strcmp(verb, "?place") == 0) {
      q_place(qc, t, w, nw);
    } else if (strcmp(verb, "?single") == 0) {
      q_single(qc, t, w, nw);
    } else {
      RESULT("!! unknown query");
    }
  }
  flush_prints(r);
  r->out = NULL;
  for (size_t i = 0; i < qout.n; i++)
    sl_push(out, qout.v[i]);
  for (size_t i = 0; i < results.n; i++)
    sl_push(out, results.v[i]);
  free(qout.v);
  free(results.v);
  push_diags(out, diags, 0);
  mapopt_diags_free(diags);
  free(copy);
}

/*
 * The round-trip property of the canonical form on a compiled program: format,
 * compile the text again, compare trees, format again. Problems are pushed
 * to out as "!! roundtrip: ..." lines; returns whether it held.
 */
/* The portability warnings (P codes) among diags, pushed to out with
 * prefix; returns how many there were. */
static size_t push_portable(strlist *out, const mapopt_diags *diags,
                            const char *prefix) {
  size_t n = 0;
  for (size_t i = 0; i < mapopt_diags_count(diags); i++) {
    const mapopt_diag *d = mapopt_diags_get(diags, i);
    if (d->code[0] != 'P')
      continue;
    sl_pushf(out, "%s%d:%d: %s: %s", prefix, d->line, d->col, d->code,
             d->message);
    n++;
  }
  return n;
}

static bool roundtrip(mapopt_ctx *ctx, const mapopt_program *prog,
                      const mapopt_dsl_options *opts, bool portable_clean,
                      strlist *out) {
  char *t1 = NULL, *t2 = NULL;
  size_t n1 = 0, n2 = 0;
  bool ok = false;
  mapopt_diags *diags = NULL;
  mapopt_program *p2 = NULL;
  mapopt_dsl_options o = *opts;
  o.print = NULL; /* loading again prints again: discard it */
  o.print_ud = NULL;
  if (mapopt_dsl_format(prog, &t1, &n1) != MAPOPT_OK) {
    sl_pushf(out, "!! roundtrip: mapopt_dsl_format failed");
    goto done;
  }
  if (mapopt_diags_new(ctx, &diags) != MAPOPT_OK)
    goto done;
  mapopt_status st = mapopt_dsl_compile(ctx, t1, n1, &o, diags, &p2);
  if (st != MAPOPT_OK) {
    sl_pushf(out, "!! roundtrip: the canonical text does not compile (%s):",
             mapopt_status_name(st));
    push_diags(out, diags, 0);
    sl_pushf(out, "!! roundtrip: canonical text was:");
    const char *p = t1, *end = t1 + n1;
    while (p < end) {
      const char *e = memchr(p, '\n', (size_t)(end - p));
      size_t n = e ? (size_t)(e - p) : (size_t)(end - p);
      char *l = xstrndup(p, n);
      sl_pushf(out, "!!   %s", l);
      free(l);
      p += n + 1;
    }
    goto done;
  }
  if (!mapopt_dsl_equal(prog, p2))
    sl_pushf(out, "!! roundtrip: parse(print(A)) is not equal to A");
  if (portable_clean &&
      push_portable(out, diags, "!! roundtrip: the canonical text: ") > 0)
    goto done;
  if (mapopt_dsl_format(p2, &t2, &n2) != MAPOPT_OK) {
    sl_pushf(out, "!! roundtrip: second mapopt_dsl_format failed");
    goto done;
  }
  if (n1 != n2 || memcmp(t1, t2, n1) != 0) {
    sl_pushf(out, "!! roundtrip: print(parse(print(A))) != print(A)");
    goto done;
  }
  ok = mapopt_dsl_equal(prog, p2);
  /* A program with one more statement must not compare equal, or the
   * equality above would prove nothing. */
  {
    static const char probe[] = "Task run_golden_probe GPU;\n";
    char *t3 = xrealloc(NULL, n1 + sizeof probe);
    memcpy(t3, t1, n1);
    memcpy(t3 + n1, probe, sizeof probe);
    mapopt_program *p3 = NULL;
    mapopt_diags_clear(diags);
    if (mapopt_dsl_compile(ctx, t3, n1 + sizeof probe - 1, &o, diags, &p3) ==
        MAPOPT_OK) {
      if (mapopt_dsl_equal(prog, p3)) {
        sl_pushf(out, "!! roundtrip: a program with an extra statement "
                      "compares equal");
        ok = false;
      }
      mapopt_dsl_free(p3);
    }
    free(t3);
  }
done:
  if (t1)
    mapopt_text_free(t1);
  if (t2)
    mapopt_text_free(t2);
  if (p2)
    mapopt_dsl_free(p2);
  if (diags)
    mapopt_diags_free(diags);
  return ok;
}

/* Runs one case and fills out with its output lines. */
static void run_case(runner *r, const gcase *c, strlist *out) {
  mapopt_machine_shape shape;
  char err[256];
  if (!load_shape(c->machine, &shape, err, sizeof err)) {
    sl_pushf(out, "!! bad machine '%s': %s", c->machine ? c->machine : "", err);
    return;
  }
  /* The program text. */
  size_t len = 0;
  for (size_t i = 0; i < c->program.n; i++)
    len += strlen(c->program.v[i]) + 1;
  char *text = xrealloc(NULL, len + 1);
  size_t off = 0;
  for (size_t i = 0; i < c->program.n; i++) {
    size_t n = strlen(c->program.v[i]);
    memcpy(text + off, c->program.v[i], n);
    off += n;
    text[off++] = '\n';
  }
  if (c->nonewline && off > 0)
    off--;
  text[off] = '\0';

  mapopt_dsl_options opts;
  memset(&opts, 0, sizeof opts);
  opts.file = FILE_NAME;
  opts.shape = &shape;
  if (c->app) {
    opts.tasks = app_info;
    opts.ntasks = APP_NTASKS;
  }
  opts.print = on_print;
  opts.print_ud = r;
  opts.portable = c->portable;
  opts.region_keys = c->keys;

  mapopt_diags *diags;
  if (mapopt_diags_new(r->ctx, &diags) != MAPOPT_OK) {
    sl_pushf(out, "!! out of memory");
    free(text);
    return;
  }
  mapopt_program *prog = NULL;
  r->out = out;
  r->nprints = 0;
  r->countprints = c->countprints;
  mapopt_status st = mapopt_dsl_compile(r->ctx, text, off, &opts, diags, &prog);
  flush_prints(r);
  r->out = NULL;
  push_diags(out, diags, 0);

  /* Status and diagnostics must agree (dsl.h). */
  size_t nerr = mapopt_diags_errors(diags);
  size_t nd = mapopt_diags_count(diags);
  if (st == MAPOPT_OK && nerr != 0)
    sl_pushf(out, "!! compile returned OK with %zu error(s)", nerr);
  if (st != MAPOPT_OK && nerr == 0)
    sl_pushf(out, "!! compile returned %s without an error diagnostic",
             mapopt_status_name(st));
  if (st == MAPOPT_ESYNTAX || st == MAPOPT_ELOAD) {
    const mapopt_diag *first = NULL;
    for (size_t i = 0; i < nd && !first; i++) {
      const mapopt_diag *d = mapopt_diags_get(diags, i);
      if (d->severity == MAPOPT_SEV_ERROR)
        first = d;
    }
    bool syntax = first && first->code[0] == 'E' && first->code[1] == '0' &&
                  first->code[2] >= '1' && first->code[2] <= '4';
    if (first && syntax != (st == MAPOPT_ESYNTAX))
      sl_pushf(out, "!! compile returned %s for an error with code %s",
               mapopt_status_name(st), first->code);
  } else if (st != MAPOPT_OK) {
    sl_pushf(out, "!! compile returned %s", mapopt_status_name(st));
  }
  if (st != MAPOPT_OK && prog)
    sl_pushf(out, "!! compile failed but wrote a program");

  if (st == MAPOPT_OK && prog) {
    for (size_t i = 0; i < c->queries.n; i++)
      run_query(r, c, prog, c->queries.v[i], out);
    roundtrip(r->ctx, prog, &opts, false, out);
    mapopt_dsl_free(prog);
  }
  mapopt_diags_free(diags);
  free(text);
}

/* An expected line matches an actual one exactly, or via "m.map:?:?: ". */
static bool line_matches(const char *exp, const char *act) {
  static const char wild[] = FILE_NAME ":?:?: ";
  if (!starts_with(exp, wild))
    return strcmp(exp, act) == 0;
  const char *p = act;
  if (!starts_with(p, FILE_NAME ":"))
    return false;
  p += strlen(FILE_NAME ":");
  for (int k = 0; k < 2; k++) {
    if (*p < '0' || *p > '9')
      return false;
    while (*p >= '0' && *p <= '9')
      p++;
    if (*p++ != ':')
      return false;
  }
  if (*p++ != ' ')
    return false;
  return strcmp(exp + strlen(wild), p) == 0;
}

static int run_file(const char *path, const char *only, bool verbose) {
  size_t len;
  char *text = read_file(path, &len);
  if (!text) {
    fprintf(stderr, "run_golden: cannot read %s: %s\n", path, strerror(errno));
    return 2;
  }
  gcase *cases = NULL;
  size_t n = 0;
  if (parse_test_file(path, text, &cases, &n) != 0) {
    free(text);
    return 2;
  }
  free(text);
  if (n == 0) {
    fprintf(stderr, "run_golden: %s has no cases\n", path);
    return 2;
  }
  runner r = {0};
  if (mapopt_ctx_new(NULL, NULL, &r.ctx) != MAPOPT_OK) {
    fprintf(stderr, "run_golden: cannot create a context\n");
    return 2;
  }
  size_t failed = 0, ran = 0;
  for (size_t i = 0; i < n; i++) {
    gcase *c = &cases[i];
    if (only && strcmp(only, c->id) != 0)
      continue;
    ran++;
    strlist out = {0};
    run_case(&r, c, &out);
    bool ok = out.n == c->expect.n;
    for (size_t j = 0; ok && j < out.n; j++)
      ok = line_matches(c->expect.v[j], out.v[j]);
    if (!ok) {
      failed++;
      printf("FAIL %s:%d: case %s %s\n", path, c->line, c->id, c->title);
      size_t m = out.n > c->expect.n ? out.n : c->expect.n;
      for (size_t j = 0; j < m; j++) {
        const char *e = j < c->expect.n ? c->expect.v[j] : NULL;
        const char *a = j < out.n ? out.v[j] : NULL;
        if (e && a && line_matches(e, a)) {
          printf("    %s\n", a);
        } else {
          if (e)
            printf("  - %s\n", e);
          if (a)
            printf("  + %s\n", a);
        }
      }
    } else if (verbose) {
      printf("ok   case %s %s\n", c->id, c->title);
    }
    if (verbose && ok)
      for (size_t j = 0; j < out.n; j++)
        printf("    %s\n", out.v[j]);
    sl_free(&out);
  }
  for (size_t i = 0; i < n; i++)
    case_free(&cases[i]);
  free(cases);
  mapopt_ctx_free(r.ctx);
  printf("%s: %zu case(s), %zu failed\n", path, ran, failed);
  if (only && ran == 0) {
    fprintf(stderr, "run_golden: no case %s in %s\n", only, path);
    return 2;
  }
  return failed ? 1 : 0;
}

/* ---- round trip over the mapper collection --------------------------------
 */

typedef struct rt_stats {
  size_t files, failed;
} rt_stats;

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

static void rt_file(mapopt_ctx *ctx, const char *path, rt_stats *st) {
  size_t len;
  char *text = read_file(path, &len);
  st->files++;
  if (!text) {
    printf("FAIL %s: cannot read: %s\n", path, strerror(errno));
    st->failed++;
    return;
  }
  mapopt_dsl_options opts;
  memset(&opts, 0, sizeof opts);
  opts.file = path;
  opts.portable = true;
  mapopt_diags *diags;
  mapopt_program *prog = NULL;
  strlist out = {0};
  if (mapopt_diags_new(ctx, &diags) != MAPOPT_OK) {
    free(text);
    st->failed++;
    return;
  }
  mapopt_status s = mapopt_dsl_compile(ctx, text, len, &opts, diags, &prog);
  bool ok;
  if (s != MAPOPT_OK) {
    sl_pushf(&out, "does not compile (%s):", mapopt_status_name(s));
    push_diags(&out, diags, 0);
    ok = false;
  } else {
    ok = push_portable(&out, diags, "portability warning at ") == 0;
    ok = roundtrip(ctx, prog, &opts, true, &out) && ok;
    mapopt_dsl_free(prog);
  }
  if (!ok) {
    st->failed++;
    printf("FAIL %s\n", path);
    for (size_t i = 0; i < out.n; i++)
      printf("    %s\n", out.v[i]);
  }
  sl_free(&out);
  mapopt_diags_free(diags);
  free(text);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void rt_dir(mapopt_ctx *ctx, const char *dir, rt_stats *st) {
  DIR *d = opendir(dir);
  if (!d) {
    if (errno != ENOENT) {
      printf("FAIL %s: cannot open: %s\n", dir, strerror(errno));
      st->failed++;
    }
    return;
  }
  strlist names = {0};
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.')
      sl_pushf(&names, "%s/%s", dir, e->d_name);
  closedir(d);
  qsort(names.v, names.n, sizeof *names.v, cmp_str);
  for (size_t i = 0; i < names.n; i++) {
    struct stat sb;
    if (stat(names.v[i], &sb) != 0)
      continue;
    if (S_ISDIR(sb.st_mode))
      rt_dir(ctx, names.v[i], st);
    else if (S_ISREG(sb.st_mode) && ends_with(names.v[i], ".map"))
      rt_file(ctx, names.v[i], st);
  }
  sl_free(&names);
}

static int run_roundtrip(const char *dir) {
  mapopt_ctx *ctx;
  if (mapopt_ctx_new(NULL, NULL, &ctx) != MAPOPT_OK)
    return 2;
  rt_stats st = {0, 0};
  rt_dir(ctx, dir, &st);
  mapopt_ctx_free(ctx);
  if (st.files == 0)
    printf("%s: no .map files (nothing to check)\n", dir);
  else
    printf("%s: %zu mapper(s), %zu failed the round trip\n", dir, st.files,
           st.failed);
  return st.failed ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--roundtrip") == 0)
    return run_roundtrip(argv[2]);
  bool verbose = false;
  const char *only = NULL;
  int rc = 0, files = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-v") == 0) {
      verbose = true;
    } else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      int r = run_file(argv[i], only, verbose);
      if (r > rc)
        rc = r;
      files++;
    }
  }
  if (files == 0) {
    fprintf(stderr, "usage: run_golden [-v] [-k ID] FILE.test...\n"
                    "       run_golden --roundtrip DIR\n");
    return 2;
  }
  return rc;
}
