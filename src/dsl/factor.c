/*
 * The factorization algorithms behind balance_split, greedy_split and
 * auto_split (docs/dsl.md, "Factorization algorithms"): balance(N, k),
 * greedy(N, L) and decompose(N, L). All three start from the complete prime
 * factorization of N, which is found by trial division by small primes followed
 * by Pollard's rho (Brent's variant, fixed seeds) with a deterministic
 * Miller-Rabin test, so any N up to 2^63 - 1 factors in milliseconds and the
 * results never depend on anything but the arguments.
 *
 * decompose enumerates every distribution of the prime exponents over the k
 * slots in one fixed order (which breaks ties), so its cost is the number of
 * candidates; the caller's step budget is charged with that number before any
 * enumeration starts, and an over-budget call fails with R23 without doing the
 * work. Nothing here allocates.
 */
#include <string.h>

#include "dsl/mspace.h"

#define MAXK MAPOPT__MS_MAX_DIMS
/* An int64 has at most 62 prime factors with multiplicity and at most 15
 * distinct ones (the product of the first 16 primes exceeds 2^63). */
#define MAXPF 64
#define MAXDISTINCT 16
/* Tie tolerance of decompose's cost comparison. */
#define COST_EPS 1e-9

__extension__ typedef unsigned __int128 u128;

/* ---- prime factorization ---------------------------------------------- */

static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m) {
  return (uint64_t)((u128)a * b % m);
}

static uint64_t powmod(uint64_t b, uint64_t e, uint64_t m) {
  uint64_t r = 1;
  b %= m;
  while (e) {
    if (e & 1)
      r = mulmod(r, b, m);
    b = mulmod(b, b, m);
    e >>= 1;
  }
  return r;
}

/* Miller-Rabin with the first twelve prime bases: exact for n < 3.3e24.
 * Called only for odd n > 37 left over after trial division. */
static bool is_prime(uint64_t n) {
  static const uint64_t bases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  uint64_t d = n - 1;
  int s = 0;
  while (!(d & 1)) {
    d >>= 1;
    s++;
  }
  for (size_t i = 0; i < sizeof bases / sizeof *bases; i++) {
    uint64_t x = powmod(bases[i], d, n);
    if (x == 1 || x == n - 1)
      continue;
    bool composite = true;
    for (int r = 1; r < s && composite; r++) {
      x = mulmod(x, x, n);
      if (x == n - 1)
        composite = false;
    }
    if (composite)
      return false;
  }
  return true;
}

static uint64_t gcd(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Returns a non-trivial factor of the odd composite n (Pollard-Brent with
 * f(x) = x^2 + c, c = 1, 2, ... until one succeeds). */
static uint64_t rho(uint64_t n) {
  for (uint64_t c = 1;; c++) {
    uint64_t x = 2, y = 2, ys = 2, q = 1, d = 1;
    const uint64_t m = 128;
    for (uint64_t r = 1; d == 1; r *= 2) {
      x = y;
      for (uint64_t i = 0; i < r; i++)
        y = (mulmod(y, y, n) + c) % n;
      for (uint64_t k = 0; k < r && d == 1; k += m) {
        ys = y;
        for (uint64_t i = 0; i < m && i < r - k; i++) {
          y = (mulmod(y, y, n) + c) % n;
          q = mulmod(q, x > y ? x - y : y - x, n);
        }
        d = gcd(q, n);
      }
    }
    if (d == n) {
      /* The batch overshot: redo it one step at a time. */
      do {
        ys = (mulmod(ys, ys, n) + c) % n;
        d = gcd(x > ys ? x - ys : ys - x, n);
      } while (d == 1);
    }
    if (d != n)
      return d;
  }
}

/*
 * The prime factors of n >= 1 with multiplicity, ascending, into pf;
 * returns their count. Trial division up to 1000 handles every realistic
 * machine size; larger cofactors go to Pollard's rho.
 */
static int prime_factors(uint64_t n, uint64_t pf[MAXPF]) {
  int cnt = 0;
  for (uint64_t p = 2; p < 1000 && p * p <= n; p += p < 3 ? 1 : 2)
    while (n % p == 0) {
      pf[cnt++] = p;
      n /= p;
    }
  if (n == 1)
    return cnt;
  /* Cofactors still composite, on a small stack (at most 62 entries). */
  uint64_t stack[MAXPF];
  int sp = 0;
  stack[sp++] = n;
  while (sp) {
    uint64_t v = stack[--sp];
    if (v < 1000 * 1000 || is_prime(v)) {
      pf[cnt++] = v; /* no factor below 1000, so v < 10^6 is prime */
      continue;
    }
    uint64_t d = rho(v);
    stack[sp++] = d;
    stack[sp++] = v / d;
  }
  /* Insertion sort: the rho factors arrive in no particular order. */
  for (int i = 1; i < cnt; i++) {
    uint64_t v = pf[i];
    int j = i;
    for (; j > 0 && pf[j - 1] > v; j--)
      pf[j] = pf[j - 1];
    pf[j] = v;
  }
  return cnt;
}

/* ---- balance and greedy ------------------------------------------------ */

/* balance(N, k): the ascending primes each go into the currently smallest
 * slot (lowest index on ties), then the slots are sorted descending. */
void mapopt__factor_balance(int64_t n, int k, int64_t *out) {
  uint64_t pf[MAXPF];
  int cnt = prime_factors((uint64_t)n, pf);
  for (int j = 0; j < k; j++)
    out[j] = 1;
  for (int i = 0; i < cnt; i++) {
    int best = 0;
    for (int j = 1; j < k; j++)
      if (out[j] < out[best])
        best = j;
    out[best] *= (int64_t)pf[i];
  }
  for (int i = 1; i < k; i++) {
    int64_t v = out[i];
    int j = i;
    for (; j > 0 && out[j - 1] < v; j--)
      out[j] = out[j - 1];
    out[j] = v;
  }
}

/* greedy(N, L): the descending primes each go to the lowest index of the
 * largest weight, whose weight (a double, starting at L) is divided by the
 * prime. */
void mapopt__factor_greedy(int64_t n, const int64_t *l, int k, int64_t *out) {
  uint64_t pf[MAXPF];
  double w[MAXK];
  int cnt = prime_factors((uint64_t)n, pf);
  for (int j = 0; j < k; j++) {
    out[j] = 1;
    w[j] = (double)l[j];
  }
  for (int i = cnt - 1; i >= 0; i--) {
    int best = 0;
    for (int j = 1; j < k; j++)
      if (w[j] > w[best])
        best = j;
    out[best] *= (int64_t)pf[i];
    w[best] /= (double)pf[i];
  }
}

/* ---- decompose ---------------------------------------------------------- */

/*
 * The candidate enumerator. Level 0 is the largest prime (outermost loop),
 * level r-1 the smallest (innermost). Each level holds an exponent vector
 * e[0..k) with the last slot taking the remainder, stepped in ascending lex
 * order of e[0..k-1). prod[lev][j] is the product over levels 0..lev of
 * p^e[j], so a candidate is prod[r-1] and advancing the inner levels costs
 * O(k) per level touched.
 */
typedef struct cands {
  int r, k;
  int a[MAXDISTINCT];              /* exponent of each level's prime */
  int e[MAXDISTINCT][MAXK];        /* current distribution per level */
  int64_t pw[MAXDISTINCT][MAXPF];  /* p^0 .. p^a per level */
  int64_t prod[MAXDISTINCT][MAXK]; /* running slot products */
} cands;

/* Recomputes prod for levels from..r-1. */
static void cands_refresh(cands *c, int from) {
  for (int lev = from; lev < c->r; lev++)
    for (int j = 0; j < c->k; j++) {
      int64_t base = lev ? c->prod[lev - 1][j] : 1;
      c->prod[lev][j] = base * c->pw[lev][c->e[lev][j]];
    }
}

/* Sets level lev to its first distribution (0, ..., 0, a). */
static void cands_first(cands *c, int lev) {
  memset(c->e[lev], 0, sizeof c->e[lev]);
  c->e[lev][c->k - 1] = c->a[lev];
}

/* Steps e[0..k) to the next distribution; false after the last one. */
static bool dist_next(int *e, int k) {
  if (k == 1)
    return false;
  if (e[k - 1] > 0) {
    e[k - 2]++;
    e[k - 1]--;
    return true;
  }
  int t = k - 2;
  while (t >= 0 && e[t] == 0)
    t--;
  if (t <= 0)
    return false;
  int v = e[t];
  e[t] = 0;
  e[t - 1]++;
  e[k - 1] = v - 1;
  return true;
}

/* Starts the enumeration at the first candidate. */
static void cands_init(cands *c) {
  for (int lev = 0; lev < c->r; lev++)
    cands_first(c, lev);
  cands_refresh(c, 0);
}

/* Advances to the next candidate (innermost level fastest); false when
 * the enumeration is over. */
static bool cands_next(cands *c) {
  int lev = c->r - 1;
  while (lev >= 0 && !dist_next(c->e[lev], c->k)) {
    cands_first(c, lev);
    lev--;
  }
  if (lev < 0)
    return false;
  cands_refresh(c, lev);
  return true;
}

/* Σj O[j] / L[j] in double, in slot order (every cost in decompose goes
 * through here so equal candidates get bit-equal costs). */
static double cost_of(const int64_t *o, const int64_t *l, int k) {
  double s = 0.0;
  for (int j = 0; j < k; j++)
    s += (double)o[j] / (double)l[j];
  return s;
}

/* C(n, r) saturated at INT64_MAX. */
static int64_t binom(int n, int r) {
  int64_t c = 1;
  for (int i = 0; i < r; i++) {
    /* c * (n - i) / (i + 1) is exact: c * (n-i) is C(n, i+1) * (i+1). */
    int64_t t;
    if (__builtin_mul_overflow(c, (int64_t)(n - i), &t))
      return INT64_MAX;
    c = t / (i + 1);
  }
  return c;
}

/*
 * decompose(N, L) (docs/dsl.md, "decompose(N, L)"): the candidate with the
 * least cost Σ O[j] / L[j], where candidates within 1e-9 of the least cost tie;
 * among the ties greedy's result wins, else the first in enumeration order. The
 * number of candidates is charged to *steps up front (on MS_R23, *steps and
 * out are left unchanged). With greedy tied for the minimum one pass
 * suffices; otherwise a second pass finds the first tied candidate.
 */
mapopt__ms_err mapopt__factor_decompose(int64_t n, const int64_t *l, int k,
                                        int64_t *out, int64_t *steps,
                                        int64_t step_limit) {
  if (n == 1) {
    if (*steps >= step_limit)
      return MS_R23;
    ++*steps;
    for (int j = 0; j < k; j++)
      out[j] = 1;
    return MS_OK;
  }

  cands c;
  uint64_t pf[MAXPF];
  int cnt = prime_factors((uint64_t)n, pf);
  c.k = k;
  c.r = 0;
  /* Distinct primes, largest first (level 0 is the outermost loop). */
  for (int i = cnt - 1; i >= 0; i--) {
    if (c.r && (uint64_t)c.pw[c.r - 1][1] == pf[i]) {
      c.a[c.r - 1]++;
    } else {
      c.pw[c.r][0] = 1;
      c.pw[c.r][1] = (int64_t)pf[i];
      c.a[c.r] = 1;
      c.r++;
    }
  }
  int64_t total = 1;
  for (int lev = 0; lev < c.r; lev++) {
    /* Powers up to p^a divide n, so they cannot overflow. */
    for (int e = 2; e <= c.a[lev]; e++)
      c.pw[lev][e] = c.pw[lev][e - 1] * c.pw[lev][1];
    if (__builtin_mul_overflow(total, binom(c.a[lev] + k - 1, k - 1), &total))
      total = INT64_MAX;
  }
  /* A saturated count cannot be enumerated under any budget. */
  if (total == INT64_MAX || *steps > step_limit || total > step_limit - *steps)
    return MS_R23;
  *steps += total;

  int64_t g[MAXK];
  mapopt__factor_greedy(n, l, k, g);
  const double gcost = cost_of(g, l, k);

  double best = 0.0;
  cands_init(&c);
  bool first = true;
  do {
    double cost = cost_of(c.prod[c.r - 1], l, k);
    if (first || cost < best)
      best = cost;
    first = false;
  } while (cands_next(&c));

  if (gcost <= best + COST_EPS) {
    memcpy(out, g, (size_t)k * sizeof *g);
    return MS_OK;
  }
  cands_init(&c);
  do {
    if (cost_of(c.prod[c.r - 1], l, k) <= best + COST_EPS)
      break;
  } while (cands_next(&c));
  memcpy(out, c.prod[c.r - 1], (size_t)k * sizeof *out);
  return MS_OK;
}
