/*
 * Spelling suggestions ("did you mean 'stencil'?"): the name closest to a
 * misspelled one among the names valid at that point, by the restricted
 * Damerau-Levenshtein distance (optimal string alignment: each insertion,
 * deletion, substitution, or swap of two adjacent characters is one
 * edit), case ignored. Names are short, so the distance is computed with
 * three rows on the stack and no allocation; names longer than MAX_NAME
 * are never suggested (nobody misspells a 200-character name by a letter).
 */
#include <ctype.h>
#include <string.h>

#include "core/core.h"

enum { MAX_NAME = 128 };

static int low(char c) {
  return tolower((unsigned char)c);
}

/* The distance between a[0..na) and b[0..nb), both at most MAX_NAME. */
static size_t distance(const char *a, size_t na, const char *b, size_t nb) {
  size_t rows[3][MAX_NAME + 1];
  size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
  for (size_t j = 0; j <= nb; j++)
    prev[j] = j;
  for (size_t i = 1; i <= na; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= nb; j++) {
      size_t cost = low(a[i - 1]) != low(b[j - 1]);
      size_t d = prev[j - 1] + cost;
      if (prev[j] + 1 < d)
        d = prev[j] + 1;
      if (cur[j - 1] + 1 < d)
        d = cur[j - 1] + 1;
      if (i > 1 && j > 1 && low(a[i - 1]) == low(b[j - 2]) &&
          low(a[i - 2]) == low(b[j - 1]) && prev2[j - 2] + 1 < d)
        d = prev2[j - 2] + 1;
      cur[j] = d;
    }
    size_t *t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  return prev[nb];
}

const char *mapopt_suggest(const char *name, size_t len,
                           const char *const *names, size_t n) {
  if (!name || !names || len == 0 || len > MAX_NAME)
    return NULL;
  const char *best = NULL;
  size_t best_d = 0;
  for (size_t i = 0; i < n; i++) {
    const char *c = names[i];
    size_t nc = c ? strlen(c) : 0;
    if (!c || nc > MAX_NAME)
      continue;
    if (nc == len && memcmp(c, name, len) == 0)
      return NULL; /* it is valid: nothing to suggest */
    size_t longer = nc > len ? nc : len;
    size_t limit = (longer + 2) / 4 > 1 ? (longer + 2) / 4 : 1;
    size_t d = distance(name, len, c, nc);
    if (d <= limit && d < len && (!best || d < best_d)) {
      best = c;
      best_d = d;
    }
  }
  return best;
}
