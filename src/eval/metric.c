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
