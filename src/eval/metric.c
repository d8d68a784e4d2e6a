/*
 * The metric of a run's output (docs/real.md, "The metric"): the default
 * forms the built-in benchmarks and the simulator print, and the scan for
 * the last match of a metric's regex in the captured text.
 *
 * The scan walks the text match by match. A match may be empty (a regex
 * such as '^([0-9.]*)' matches every line); after an empty match the scan
 * moves one byte on, and an empty match at the very end of the text, just
 * after its last line break, is no line at all: it is not counted, and
 * nothing past the text's end is read. The number is the match's whole
 * first group, however long (a number printed with 300 digits is read
 * whole); a group that is not a finite number is quoted, cut to a few
 * dozen characters, in the summary.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"

/* A number as programs print it: 12, -3.5, .5, 1e-3, 2.5E+04. */
#define NUM "([-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?)"

/* Most preferred first (AutoGuide's objective is throughput: GFLOP/s where
 * the program reports it, else 1/time). */
const mapopt__metric_form mapopt__eval_default_forms[MAPOPT__EVAL_NDEFAULTS] = {
    {"gflops-per-node", "GFLOP/s per node", "achieved GFLOPS per node: *" NUM,
     "achieved GFLOPS per node: x", MAPOPT_EVAL_HIGHER},
    {"gflops", "GFLOP/s", "GFLOPS *= *" NUM, "GFLOPS = x", MAPOPT_EVAL_HIGHER},
    {"time", "s", "ELAPSED TIME *= *" NUM " *s", "ELAPSED TIME = x s",
     MAPOPT_EVAL_LOWER},
};

/* ---- the size of a regex ------------------------------------------------- */

enum { MAX_NESTING = 256 };

/* The walk over a regex: where it is, and the first repetition that
 * follows another one (NULL: none). */
typedef struct walk {
  const char *p;
  const char *twice;
} walk;

/* a + b and k * a, saturated at SIZE_MAX. */
static size_t add(size_t a, size_t b) {
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}
static size_t mul(size_t k, size_t a) {
  return k && a > SIZE_MAX / k ? SIZE_MAX : k * a;
}

/* Past a bracket expression (w->p after its '['). */
static void skip_bracket(walk *w) {
  const char *q = w->p;
  if (*q == '^')
    q++;
  if (*q == ']')
    q++; /* a ']' first is a member */
  while (*q && *q != ']') {
    if (q[0] == '[' && (q[1] == ':' || q[1] == '=' || q[1] == '.')) {
      char end = q[1];
      for (q += 2; *q && !(q[0] == end && q[1] == ']'); q++)
        ;
      if (*q)
        q += 2;
    } else {
      q++;
    }
  }
  w->p = *q ? q + 1 : q;
}

/* The decimal number at *p (moved past it), or -1 when there is none. */
static long number_at(const char **p) {
  if (**p < '0' || **p > '9')
    return -1;
  long n = 0;
  for (; **p >= '0' && **p <= '9'; (*p)++)
    n = n < 100000 ? n * 10 + (**p - '0') : n;
  return n;
}

/* After a repetition of an atom of size *size at w->p (a '*', '?', '+'
 * or an interval): its size copied out, w->p past it. False when w->p is
 * no repetition. */
static bool repetition(walk *w, size_t *size) {
  char r = *w->p;
  if (r == '*' || r == '?') {
    *size = add(*size, 1);
  } else if (r == '+') {
    *size = add(mul(2, *size), 1);
  } else if (r == '{') {
    const char *q = w->p + 1;
    long lo = number_at(&q), hi = lo;
    if (*q == ',') {
      q++;
      hi = number_at(&q);
      if (hi < 0)
        hi = lo + 1; /* {n,}: n copies and a star */
    }
    if (lo < 0 || *q != '}')
      return false; /* not an interval: the compiler says so */
    w->p = q;
    *size = add(mul((size_t)(hi > 1 ? hi : 1), *size), 1);
  } else {
    return false;
  }
  w->p++;
  return true;
}

static size_t alternation(walk *w, int depth);

/* One piece: an atom and the repetitions after it. */
static size_t piece(walk *w, int depth) {
  size_t size = 1;
  char c = *w->p++;
  if (c == '(') {
    size = add(1, alternation(w, depth + 1));
    if (*w->p == ')')
      w->p++;
  } else if (c == '[') {
    skip_bracket(w);
  } else if (c == '\\' && *w->p) {
    w->p++;
  }
  for (int n = 0;; n++) {
    const char *at = w->p;
    if (!repetition(w, &size))
      return size;
    if (n > 0 && !w->twice)
      w->twice = at;
  }
}

/* Branches separated by '|', up to a ')' or the end. */
static size_t alternation(walk *w, int depth) {
  if (depth > MAX_NESTING)
    return SIZE_MAX;
  size_t size = 0;
  while (*w->p && *w->p != ')') {
    if (*w->p == '|')
      w->p++;
    else
      size = add(size, piece(w, depth));
  }
  return size;
}

size_t mapopt__eval_regex_size(const char *src, size_t *twice) {
  walk w = {src, NULL};
  size_t size = 0;
  while (*w.p) {
    size = add(size, alternation(&w, 0));
    if (*w.p == ')')
      w.p++; /* unbalanced: the compiler says so */
  }
  *twice = w.twice ? (size_t)(w.twice - src) : SIZE_MAX;
  return size;
}

/* ---- the scan ------------------------------------------------------------ */

/* Shown of a group that is not a number, before "...". */
enum { SHOWN = 60 };

/* Parses the n bytes at s as a finite number, blanks after it allowed. */
static mapopt_status parse_number(mapopt_ctx *ctx, const char *s, size_t n,
                                  bool *ok, double *value) {
  char small[64], *num = n < sizeof small ? small : mapopt__malloc(ctx, n + 1);
  if (!num)
    return MAPOPT_ENOMEM;
  memcpy(num, s, n);
  num[n] = '\0';
  char *end;
  double v = strtod(num, &end);
  while (*end == ' ' || *end == '\t')
    end++;
  *ok = end != num && !*end && isfinite(v);
  *value = v;
  if (num != small)
    mapopt__free(ctx, num, n + 1);
  return MAPOPT_OK;
}

mapopt_status mapopt__eval_metric_last(mapopt_ctx *ctx, const regex_t *re,
                                       const char *text,
                                       mapopt__metric_found *found,
                                       double *value, char *bad,
                                       size_t badlen) {
  *found = MAPOPT__METRIC_NONE;
  const char *end = text + strlen(text);
  const char *gs = NULL, *ge = NULL; /* the last match's group */
  regmatch_t m[2];
  for (const char *p = text; p < end;) {
    int flags = p > text && p[-1] != '\n' ? REG_NOTBOL : 0;
    if (regexec(re, p, 2, m, flags) != 0)
      break;
    const char *ms = p + m[0].rm_so, *me = p + m[0].rm_eo;
    if (ms == me && ms == end && ms[-1] == '\n')
      break; /* the empty "line" after the last one */
    *found = MAPOPT__METRIC_FOUND;
    gs = m[1].rm_so < 0 ? NULL : p + m[1].rm_so;
    ge = m[1].rm_so < 0 ? NULL : p + m[1].rm_eo;
    p = me > ms ? me : ms + 1;
  }
  if (*found == MAPOPT__METRIC_NONE)
    return MAPOPT_OK;
  size_t n = gs ? (size_t)(ge - gs) : 0;
  bool ok;
  mapopt_status st = parse_number(ctx, gs ? gs : "", n, &ok, value);
  if (st == MAPOPT_OK && !ok) {
    *found = MAPOPT__METRIC_BAD;
    snprintf(bad, badlen, "%.*s%s", (int)(n > SHOWN ? SHOWN : n), gs ? gs : "",
             n > SHOWN ? "..." : "");
  }
  return st;
}
