/*
 * libFuzzer target: the metric scan of a run's output (src/eval/metric.c).
 * The first byte picks the case:
 *   - even: a custom regex (the input up to the first line break) over the
 *     rest as the output, when the evaluator would compile it (not too
 *     large once its repetitions are copied out, no two repetitions in a
 *     row: mapopt__eval_regex_size). No
 * read past the output (ASan), the same answer twice, a value found is finite,
 * a non-number is quoted in at most 63 bytes;
 *   - odd: one of the default forms over the rest as the output, with a
 *     last line that prints a number made from 8 bytes of the input in
 *     that form -- shortest round trip, 17 digits, or an integer written
 *     out whole (up to 309 digits) -- which must be the metric found,
 *     exactly.
 */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"

#include "harness.h"

const size_t fuzz_max_input = 1 << 14;

/* The input as a C string, NUL bytes as spaces (as the capture makes
 * them). */
static char *text_of(const uint8_t *data, size_t size) {
  char *t = malloc(size + 1);
  for (size_t i = 0; i < size; i++)
    t[i] = data[i] ? (char)data[i] : ' ';
  t[size] = '\0';
  return t;
}

/* Scans text for re twice: the same answer both times, and a sane one. */
static mapopt__metric_found scan(mapopt_ctx *ctx, const regex_t *re,
                                 const char *text, double *value) {
  mapopt__metric_found f[2];
  double v[2];
  char bad[2][80];
  for (int k = 0; k < 2; k++) {
    bad[k][0] = '\0';
    if (mapopt__eval_metric_last(ctx, re, text, &f[k], &v[k], bad[k],
                                 sizeof bad[k]) != MAPOPT_OK)
      return MAPOPT__METRIC_NONE; /* out of memory: nothing to check */
  }
  if (f[0] != f[1] || strcmp(bad[0], bad[1]) ||
      (f[0] == MAPOPT__METRIC_FOUND &&
       (memcmp(&v[0], &v[1], sizeof v[0]) || !isfinite(v[0]))) ||
      strlen(bad[0]) > 63)
    abort();
  *value = v[0];
  return f[0];
}

static void custom(mapopt_ctx *ctx, const uint8_t *data, size_t size) {
  const uint8_t *nl = memchr(data, '\n', size);
  size_t rlen = nl ? (size_t)(nl - data) : size;
  if (rlen > 256)
    return;
  char *src = text_of(data, rlen);
  regex_t re;
  /* Only what the evaluator compiles (mapopt_eval_new refuses the rest). */
  size_t twice;
  bool compiled =
      mapopt__eval_regex_size(src, &twice) <= MAPOPT__EVAL_MAX_REGEX &&
      twice == SIZE_MAX && regcomp(&re, src, REG_EXTENDED | REG_NEWLINE) == 0;
  free(src);
  if (!compiled)
    return;
  if (re.re_nsub >= 1) {
    size_t off = nl ? rlen + 1 : size;
    char *text = text_of(data + off, size - off);
    double v;
    scan(ctx, &re, text, &v);
    free(text);
  }
  regfree(&re);
}

static void default_form(mapopt_ctx *ctx, unsigned pick, const uint8_t *data,
                         size_t size) {
  if (size < 8)
    return;
  const mapopt__metric_form *f =
      &mapopt__eval_default_forms[pick % MAPOPT__EVAL_NDEFAULTS];
  double x;
  memcpy(&x, data, sizeof x);
  if (!isfinite(x))
    return;
  char num[400];
  switch ((pick / MAPOPT__EVAL_NDEFAULTS) % 3) {
  case 0:
    snprintf(num, sizeof num, "%.17g", x);
    break;
  case 1:
    snprintf(num, sizeof num, "%.16e", x);
    break;
  default: /* an integer, every digit of it */
    x = trunc(x);
    snprintf(num, sizeof num, "%.0f", x);
    break;
  }
  char line[512];
  if (!strcmp(f->name, "time"))
    snprintf(line, sizeof line, "\nELAPSED TIME = %s s\n", num);
  else if (!strcmp(f->name, "gflops"))
    snprintf(line, sizeof line, "\nGFLOPS = %s GFLOPS\n", num);
  else
    snprintf(line, sizeof line, "\nOn 2 nodes achieved GFLOPS per node: %s\n",
             num);
  char *junk = text_of(data + 8, size - 8);
  size_t jl = strlen(junk), ll = strlen(line);
  char *text = malloc(jl + ll + 1);
  memcpy(text, junk, jl);
  memcpy(text + jl, line, ll + 1);
  free(junk);
  regex_t re;
  if (regcomp(&re, f->regex, REG_EXTENDED | REG_NEWLINE) != 0)
    abort();
  double v = NAN;
  mapopt__metric_found found = scan(ctx, &re, text, &v);
  if (found != MAPOPT__METRIC_FOUND || v != x)
    abort(); /* the last line's number, read whole */
  regfree(&re);
  free(text);
}

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *diags, const uint8_t *data,
                 size_t size) {
  (void)diags;
  if (size < 1)
    return;
  if (data[0] % 2 == 0)
    custom(ctx, data + 1, size - 1);
  else
    default_form(ctx, data[0] / 2, data + 1, size - 1);
}
