/*
 * Noise in real runs (docs/real.md, "Noise"): what one evaluation's
 * runs say about its score, when a candidate is worth running again, and
 * what a speedup is once noise is counted.
 *
 * The estimate of a mapper's score is the median of its runs' scores (a
 * run's score is its throughput, docs/real.md, "Tuning real runs"), and its
 * interval the distribution-free confidence interval of the median from
 * order statistics: with n runs sorted, [x(k), x(n+1-k)] for the largest k
 * for which the chance that the true median lies outside is at most 5%
 * (twice the binomial tail P(Bin(n, 1/2) <= k - 1)). It assumes only that
 * the runs are independent draws of one distribution -- no normality, no
 * equal spread between mappers -- and a fixed rule, so the same runs give
 * the same interval (a bootstrap would need a seed and more runs). With 5
 * runs or fewer no k reaches 95%, and the interval is [min, max]
 * (coverage 1 - 2^(1-n): 94% for 5 runs, 75% for 3). One run has no
 * interval: [x, x].
 *
 * Racing: a candidate runs at least --repeat times; after each run it goes
 * on (up to --repeat-max) unless its interval lies wholly below the
 * incumbent's -- a clearly worse candidate stops after a run or two, a
 * contender gets every run. One candidate is better than another only
 * when its interval lies wholly above the other's.
 *
 * The final check runs the best and the baselines interleaved, one run of
 * each per round, so that a drift of the machine (another job starting, a
 * clock changing) falls on all of them alike; the speedup is the median
 * of the per-round ratios with the order-statistics interval of that
 * median. A gain is reported only when both the racing intervals and the
 * check's interval say so.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int mapopt__noise_rank(int n) {
  /* P(Bin(n, 1/2) <= j) summed in doubles: exact enough for n <= 1000,
   * where 2^-n underflows only past the point where it matters. */
  int best = 1;
  double term = pow(0.5, n), tail = 0;
  for (int k = 1; 2 * k <= n; k++) {
    /* tail = P(Bin(n, 1/2) <= k - 1), term = P(Bin = k - 1) */
    tail += term;
    term = term * (double)(n - (k - 1)) / (double)k;
    if (1 - 2 * tail >= 0.95)
      best = k;
    else
      break;
  }
  return best;
}

void mapopt__noise_summary(const double *v, int n, double *median, double *low,
                           double *high) {
  *median = *low = *high = 0;
  if (n < 1)
    return;
  double stack[64];
  double *s = n <= 64 ? stack : malloc((size_t)n * sizeof *s);
  if (!s) { /* no room to sort: the plain bounds */
    *low = *high = *median = v[0];
    for (int i = 1; i < n; i++) {
      *low = fmin(*low, v[i]);
      *high = fmax(*high, v[i]);
    }
    return;
  }
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  *median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  int k = mapopt__noise_rank(n);
  *low = s[k - 1];
  *high = s[n - k];
  if (s != stack)
    free(s);
}

bool mapopt__noise_contender(const double *v, int n, double bar) {
  if (!(bar > 0) || n < 1)
    return true;
  double m, lo, hi;
  mapopt__noise_summary(v, n, &m, &lo, &hi);
  return hi >= bar;
}

bool mapopt__noise_better(double low, double high, double inc_low,
                          double inc_high) {
  /* One-point intervals: low > inc_high is high > inc_high, a higher
   * score, the simulator's rule. */
  (void)high;
  (void)inc_low;
  return low > inc_high;
}

/* The verdict of an interval against 1. */
static mapopt_tune_verdict verdict_of(double low, double high) {
  return low > 1    ? MAPOPT_TUNE_FASTER
         : high < 1 ? MAPOPT_TUNE_SLOWER
                    : MAPOPT_TUNE_SAME;
}

void mapopt__noise_speedup(const mapopt__noise_est *best,
                           const mapopt__noise_est *base, const double *check,
                           const double *check_base, int rounds,
                           mapopt_tune_speedup *out) {
  *out = (mapopt_tune_speedup){0};
  if (!(best->score > 0) || !(base->score > 0))
    return;
  out->ratio = best->score / base->score;
  if (best->runs == 0 && base->runs == 0) {
    /* Simulated: the ratio is exact (to rounding). */
    out->low = out->high = out->ratio;
    out->verdict = out->ratio > 1 + 1e-12   ? MAPOPT_TUNE_FASTER
                   : out->ratio < 1 - 1e-12 ? MAPOPT_TUNE_SLOWER
                                            : MAPOPT_TUNE_SAME;
    return;
  }
  /* The racing intervals: the best's over the baseline's, at their most
   * pessimistic and their most optimistic. */
  out->low = best->low / base->high;
  out->high = best->high / base->low;
  out->verdict = verdict_of(out->low, out->high);
  if (rounds < 1 || !check || !check_base)
    return;
  double stack[64];
  double *r = rounds <= 64 ? stack : malloc((size_t)rounds * sizeof *r);
  if (!r)
    return;
  int n = 0;
  for (int i = 0; i < rounds; i++)
    if (check[i] > 0 && check_base[i] > 0)
      r[n++] = check[i] / check_base[i];
  if (n > 0) {
    double ratio, lo, hi;
    mapopt__noise_summary(r, n, &ratio, &lo, &hi);
    mapopt_tune_verdict v = verdict_of(lo, hi);
    /* A gain (or a loss) only when racing and the check agree. */
    out->verdict = v == out->verdict ? v : MAPOPT_TUNE_SAME;
    out->ratio = ratio;
    out->low = lo;
    out->high = hi;
    out->rounds = n;
  }
  if (r != stack)
    free(r);
}

const char *mapopt_tune_verdict_name(mapopt_tune_verdict v) {
  static const char *const n[] = {"unknown", "faster", "slower", "same"};
  return (unsigned)v < sizeof n / sizeof n[0] ? n[v] : NULL;
}

char *mapopt__noise_scores_text(mapopt_ctx *ctx, const double *v, int n) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  for (int i = 0; i < n; i++)
    mapopt__sb_printf(&sb, "%s%.17g", i ? " " : "", v[i]);
  return mapopt__text_take(&sb, NULL);
}
