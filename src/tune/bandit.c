/*
 * The AUC bandit of OpenTuner's meta-technique (include/mapopt/tune.h's
 * `opentuner` optimizer): which technique to ask next.
 *
 * It keeps a sliding window of the last `window` uses as (arm, credit)
 * pairs, where the credit is whether that use produced a new global best.
 * An arm's exploitation term is the area under its credit curve: over its
 * k uses in the window, in order, the sum of the positions (1..k) of the
 * credited ones, normalised by k (k + 1) / 2 -- recent successes count
 * more. Its exploration term is sqrt(2 log2(window length) / k), infinite
 * for an arm not used in the window. Arms are ranked by exploitation plus
 * C times exploration. The sums are kept incrementally, so a push or a
 * score costs O(1).
 */
#include <math.h>
#include <string.h>

#include "tune/tune.h"

void mapopt__bandit_init(mapopt__bandit *b, int narms, int window, double c) {
  memset(b, 0, sizeof *b);
  b->narms = narms < MAPOPT__BANDIT_MAX_ARMS ? narms : MAPOPT__BANDIT_MAX_ARMS;
  b->window =
      window < MAPOPT__BANDIT_MAX_WINDOW ? window : MAPOPT__BANDIT_MAX_WINDOW;
  b->c = c;
}

void mapopt__bandit_push(mapopt__bandit *b, int arm, bool credit) {
  if (arm < 0 || arm >= b->narms || b->window <= 0)
    return;
  if (b->len == (size_t)b->window) { /* the oldest use leaves the window */
    int a = b->arm[b->head];
    b->use[a]--;
    b->auc_sum[a] -= b->auc_decay[a];
    if (b->credit[b->head])
      b->auc_decay[a]--;
    b->head = (b->head + 1) % (size_t)b->window;
    b->len--;
  }
  size_t slot = (b->head + b->len) % (size_t)b->window;
  b->arm[slot] = (uint8_t)arm;
  b->credit[slot] = credit;
  b->len++;
  b->use[arm]++;
  if (credit) {
    b->auc_sum[arm] += b->use[arm];
    b->auc_decay[arm]++;
  }
}

double mapopt__bandit_score(const mapopt__bandit *b, int arm) {
  if (arm < 0 || arm >= b->narms || b->use[arm] == 0)
    return INFINITY;
  double k = (double)b->use[arm];
  double exploit = (double)b->auc_sum[arm] * 2.0 / (k * (k + 1.0));
  double explore = sqrt(2.0 * log2((double)b->len) / k);
  return exploit + b->c * explore;
}

void mapopt__bandit_order(const mapopt__bandit *b, mapopt__rng *rng,
                          int *order) {
  int n = b->narms;
  for (int i = 0; i < n; i++)
    order[i] = i;
  for (int i = n - 1; i > 0; i--) { /* ties in a random order */
    int j = (int)mapopt__rng_below(rng, (uint64_t)i + 1);
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  /* OpenTuner sorts ascending (stably) and takes the list backwards, so
   * among equals the last shuffled comes first: reverse, then sort
   * descending, stably. */
  for (int i = 0; i < n / 2; i++) {
    int t = order[i];
    order[i] = order[n - 1 - i];
    order[n - 1 - i] = t;
  }
  for (int i = 1; i < n; i++) {
    int a = order[i], j = i;
    while (j > 0 &&
           mapopt__bandit_score(b, order[j - 1]) < mapopt__bandit_score(b, a)) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = a;
  }
}
