/*
 * Noise in real runs (src/tune/noise.c, docs/real.md, "Noise"): the
 * order-statistics interval of the median, racing's rule, "better", and
 * the speedup's verdict from the evaluations and the final check.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "tune/tune.h"

/* The rank k of [x(k), x(n+1-k)]: the largest with a coverage of at least
 * 95%, checked against the binomial sums computed here exactly in
 * integers. */
static void test_rank(void **state) {
  (void)state;
  for (int n = 1; n <= 60; n++) {
    /* P(Bin(n, 1/2) <= j) * 2^n, j < n / 2 */
    uint64_t c = 1, tail = 0;
    int want = 1;
    for (int k = 1; 2 * k <= n; k++) {
      tail += c; /* now 2^n P(Bin <= k - 1) */
      c = c * (uint64_t)(n - (k - 1)) / (uint64_t)k;
      if (1.0 - 2.0 * ldexp((double)tail, -n) >= 0.95)
        want = k;
      else
        break;
    }
    assert_int_equal(mapopt__noise_rank(n), want);
  }
  /* The figures docs/real.md gives. */
  assert_int_equal(mapopt__noise_rank(5), 1);
  assert_int_equal(mapopt__noise_rank(8), 1);
  assert_int_equal(mapopt__noise_rank(9), 2);
  assert_int_equal(mapopt__noise_rank(10), 2);
}

static void test_summary(void **state) {
  (void)state;
  double m, lo, hi;
  const double five[] = {3, 1, 5, 2, 4};
  mapopt__noise_summary(five, 5, &m, &lo, &hi);
  assert_true(m == 3 && lo == 1 && hi == 5);
  const double ten[] = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  mapopt__noise_summary(ten, 10, &m, &lo, &hi);
  assert_true(m == 5.5 && lo == 2 && hi == 9);
  const double one[] = {7};
  mapopt__noise_summary(one, 1, &m, &lo, &hi);
  assert_true(m == 7 && lo == 7 && hi == 7);
  mapopt__noise_summary(one, 0, &m, &lo, &hi);
  assert_true(m == 0 && lo == 0 && hi == 0);
}

/* Racing goes on while the interval reaches the bar; better is
 * "wholly above". */
static void test_racing_and_better(void **state) {
  (void)state;
  const double slow[] = {1, 1.1, 0.9};
  assert_true(mapopt__noise_contender(slow, 3, 0));   /* no best yet */
  assert_true(mapopt__noise_contender(slow, 3, 1.1)); /* reaches it */
  assert_false(mapopt__noise_contender(slow, 3, 1.2));
  assert_true(mapopt__noise_better(2.1, 2.5, 1.5, 2.0));
  assert_false(mapopt__noise_better(1.9, 2.5, 1.5, 2.0)); /* overlap */
  /* one-point intervals: a higher score */
  assert_true(mapopt__noise_better(3, 3, 2, 2));
  assert_false(mapopt__noise_better(2, 2, 2, 2));
}

static void test_speedup(void **state) {
  (void)state;
  mapopt_tune_speedup sp;
  /* simulated: the exact ratio */
  mapopt__noise_est b = {2, 2, 2, 0}, d = {1, 1, 1, 0};
  mapopt__noise_speedup(&b, &d, NULL, NULL, 0, &sp);
  assert_true(sp.ratio == 2 && sp.low == 2 && sp.high == 2);
  assert_int_equal(sp.verdict, MAPOPT_TUNE_FASTER);
  mapopt__noise_speedup(&d, &d, NULL, NULL, 0, &sp);
  assert_int_equal(sp.verdict, MAPOPT_TUNE_SAME);
  /* real: the racing intervals alone, then with a check */
  mapopt__noise_est rb = {3, 2.8, 3.2, 10}, rd = {1, 0.9, 1.1, 10};
  mapopt__noise_speedup(&rb, &rd, NULL, NULL, 0, &sp);
  assert_int_equal(sp.verdict, MAPOPT_TUNE_FASTER);
  assert_true(fabs(sp.low - 2.8 / 1.1) < 1e-12);
  const double best[] = {3, 3.1, 2.9, 3.0, 3.2}, base[] = {1, 1, 1, 1, 1};
  mapopt__noise_speedup(&rb, &rd, best, base, 5, &sp);
  assert_int_equal(sp.verdict, MAPOPT_TUNE_FASTER);
  assert_int_equal(sp.rounds, 5);
  assert_true(sp.ratio == 3 && sp.low == 2.9 && sp.high == 3.2);
  /* the check holds 1: within noise, whatever racing said */
  const double mixed[] = {1.2, 0.9, 1.1, 1.0, 1.3};
  mapopt__noise_speedup(&rb, &rd, mixed, base, 5, &sp);
  assert_int_equal(sp.verdict, MAPOPT_TUNE_SAME);
  /* racing's intervals overlap: within noise, whatever the check said */
  mapopt__noise_est ob = {1.1, 0.8, 1.4, 10};
  mapopt__noise_speedup(&ob, &rd, best, base, 5, &sp);
  assert_int_equal(sp.verdict, MAPOPT_TUNE_SAME);
  /* a round whose run failed (0) does not count */
  const double failed[] = {3, 0, 3, 3, 3};
  mapopt__noise_speedup(&rb, &rd, failed, base, 5, &sp);
  assert_int_equal(sp.rounds, 4);
  assert_string_equal(mapopt_tune_verdict_name(MAPOPT_TUNE_SAME), "same");
  assert_null(mapopt_tune_verdict_name((mapopt_tune_verdict)9));
}

static void test_scores_text(void **state) {
  (void)state;
  const double v[] = {1.5, 0.1, 3};
  char *t = mapopt__noise_scores_text(ctx, v, 3);
  assert_string_equal(t, "1.5 0.10000000000000001 3");
  mapopt_text_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rank),
      cmocka_unit_test(test_summary),
      cmocka_unit_test(test_racing_and_better),
      cmocka_unit_test(test_speedup),
      cmocka_unit_test(test_scores_text),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
