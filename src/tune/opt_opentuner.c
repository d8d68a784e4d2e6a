/*
 * The `opentuner` optimizer: a C re-implementation of OpenTuner's default
 * search (AUCBanditMetaTechniqueA) on mapopt's search space, whose
 * parameters are all enumerations -- the scalar-feedback baseline of the
 * seed paper.
 *
 * An AUC bandit (window 500, exploration constant 0.05; credit: the result
 * was a new global best) picks, for each candidate, the technique to ask:
 *  - differential evolution (population 30, crossover rate 0.2, at least
 *    one parameter crossed, the global best shared with the population,
 *    5 retries on a candidate seen before);
 *  - uniform greedy mutation (mutation rate 0.1) of the global best;
 *  - normal greedy mutation (rate 0.3) of the global best, which on an
 *    enumeration is a uniform re-draw, as in OpenTuner;
 *  - Nelder-Mead from a random simplex. OpenTuner builds its simplex from
 *    the primitive (numeric) parameters only; an all-enumeration space
 *    gives a one-point simplex, so it never proposes anything, and the
 *    bandit records each such turn as no credit, as OpenTuner does.
 * An enumeration crosses over the way OpenTuner fakes arithmetic on
 * complex parameters: x1 + F (x2 - x3) keeps x1's value when x2 and x3
 * agree and draws a random value otherwise. A technique that proposes
 * nothing passes its turn to the next in bandit order; if none proposes,
 * a uniform sample is taken. Failed evaluations count as the worst
 * result (infinite time). Every random choice comes from the optimizer's
 * seeded generator.
 */
#include <math.h>
#include <string.h>

#include "tune/tune.h"

enum { ARM_DE, ARM_UNIFORM, ARM_NORMAL, ARM_NELDER_MEAD, NARMS };
static const char *const arm_names[NARMS] = {
    "opentuner: differential evolution", "opentuner: uniform greedy mutation",
    "opentuner: normal greedy mutation", "opentuner: Nelder-Mead"};

enum { WINDOW = 500, POPULATION = 30, DE_RETRIES = 5, MUTATION_RETRIES = 10 };
#define EXPLORATION_C 0.05
#define DE_CROSSOVER 0.2
#define UNIFORM_RATE 0.1
#define NORMAL_RATE 0.3

typedef struct member {
  uint16_t *cfg;
  bool submitted; /* its initial configuration was proposed */
  bool known, ok; /* its configuration's result */
  double score;
  int64_t stamp;   /* last time it was picked for replacement */
  int64_t pending; /* tag of its candidate replacement, -1 none */
  uint16_t *cand;  /* that candidate */
} member;

typedef struct pending {
  int64_t tag;
  int arm;    /* -1: the fallback sample */
  int member; /* DE: the member it initializes or replaces, else -1 */
  bool init;  /* DE: the member's initial configuration */
} pending;

typedef struct ot_state {
  mapopt__bandit bandit;
  /* The global best. */
  bool have_best;
  double best_score;
  uint16_t *best;
  /* Differential evolution. */
  member pop[POPULATION];
  bool pop_ready;
  int64_t clock;
  mapopt__vec pend; /* pending */
  mapopt__hset seen;
  uint16_t *work, *parent_cfg;
} ot_state;

static size_t nparams(const mapopt_optimizer *opt) {
  return mapopt_space_nparams(opt->space);
}

static uint16_t *new_cfg(mapopt_optimizer *opt) {
  size_t n = nparams(opt);
  return mapopt__calloc(opt->ctx, n ? n : 1, sizeof(uint16_t));
}

static void free_cfg(mapopt_optimizer *opt, uint16_t *c) {
  if (c)
    mapopt__free(opt->ctx, c, (nparams(opt) ? nparams(opt) : 1) * 2);
}

/* ---- techniques ---------------------------------------------------------- */

static uint16_t random_value(mapopt_optimizer *opt, size_t i) {
  return (uint16_t)mapopt__rng_below(
      &opt->rng, mapopt_space_param_at(opt->space, i)->nvalues);
}

/* A random permutation of the parameter indexes into idx. */
static void shuffled(mapopt_optimizer *opt, size_t *idx, size_t n) {
  for (size_t i = 0; i < n; i++)
    idx[i] = i;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)mapopt__rng_below(&opt->rng, i);
    size_t t = idx[i - 1];
    idx[i - 1] = idx[j];
    idx[j] = t;
  }
}

static bool seen(const ot_state *s, const uint16_t *c, size_t n) {
  return mapopt__hset_has(&s->seen, mapopt__choice_hash(c, n));
}

/* The member whose replacement to create: the least recently picked of
 * those without one pending; -1 when every member has one. */
static int oldest_member(const ot_state *s) {
  int best = -1;
  for (int i = 0; i < POPULATION; i++)
    if (s->pop[i].pending < 0 &&
        (best < 0 || s->pop[i].stamp < s->pop[best].stamp))
      best = i;
  return best;
}

/* x1 + F (x2 - x3) with crossover into a copy of parent's configuration. */
static void de_trial(mapopt_optimizer *opt, int parent, uint16_t *out,
                     size_t *idx) {
  ot_state *s = opt->state;
  size_t n = nparams(opt);
  const uint16_t *donors[POPULATION + 1];
  int nd = 0;
  for (int i = 0; i < POPULATION; i++)
    if (i != parent)
      donors[nd++] = s->pop[i].cfg;
  if (s->have_best)
    donors[nd++] = s->best;
  for (int i = nd - 1; i > 0; i--) {
    int j = (int)mapopt__rng_below(&opt->rng, (uint64_t)i + 1);
    const uint16_t *t = donors[i];
    donors[i] = donors[j];
    donors[j] = t;
  }
  const uint16_t *x1 = donors[0], *x2 = donors[1], *x3 = donors[2];
  (void)mapopt__rng_double(&opt->rng); /* F: irrelevant to enumerations */
  memcpy(out, s->pop[parent].cfg, n * sizeof *out);
  shuffled(opt, idx, n);
  for (size_t i = 0; i < n; i++) {
    size_t k = idx[i];
    if (i < 1 || mapopt__rng_double(&opt->rng) < DE_CROSSOVER)
      out[k] = x2[k] == x3[k] ? x1[k] : random_value(opt, k);
  }
}

/* Differential evolution's next configuration into out; its member and
 * whether it is the member's initial configuration. false: none. */
static bool de_propose(mapopt_optimizer *opt, uint16_t *out, int *mem,
                       bool *init, size_t *idx) {
  ot_state *s = opt->state;
  size_t n = nparams(opt);
  if (!s->pop_ready) {
    for (int i = 0; i < POPULATION; i++)
      mapopt__random_choice(opt, s->pop[i].cfg);
    s->pop_ready = true;
  }
  for (int i = 0; i < POPULATION; i++)
    if (!s->pop[i].submitted) {
      s->pop[i].submitted = true;
      memcpy(out, s->pop[i].cfg, n * sizeof *out);
      *mem = i;
      *init = true;
      return true;
    }
  int p = oldest_member(s);
  if (p < 0)
    return false;
  for (int r = 0; r < DE_RETRIES; r++) {
    de_trial(opt, p, out, idx);
    if (!seen(s, out, n))
      break;
  }
  s->pop[p].stamp = ++s->clock;
  *mem = p;
  *init = false;
  return true;
}

/* Greedy mutation of the global best (a random configuration before there
 * is one): one parameter re-drawn, each other with probability rate,
 * repeated on the same configuration until it differs from the parent. */
static bool mutate_propose(mapopt_optimizer *opt, double rate, uint16_t *out,
                           size_t *idx) {
  ot_state *s = opt->state;
  size_t n = nparams(opt);
  if (s->have_best)
    memcpy(s->parent_cfg, s->best, n * sizeof *out);
  else
    mapopt__random_choice(opt, s->parent_cfg);
  memcpy(out, s->parent_cfg, n * sizeof *out);
  for (int r = 0; r < MUTATION_RETRIES; r++) {
    shuffled(opt, idx, n);
    for (size_t i = 0; i < n; i++)
      if (i < 1 || mapopt__rng_double(&opt->rng) < rate)
        out[idx[i]] = random_value(opt, idx[i]);
    if (memcmp(out, s->parent_cfg, n * sizeof *out) != 0)
      return true;
  }
  return false;
}

/* ---- plan and tell ------------------------------------------------------- */

static mapopt_status ot_plan_one(mapopt_optimizer *opt, size_t *idx) {
  ot_state *s = opt->state;
  int order[NARMS];
  mapopt__bandit_order(&s->bandit, &opt->rng, order);
  pending pd = {.arm = -1, .member = -1};
  bool got = false;
  for (int k = 0; k < NARMS && !got; k++) {
    int arm = order[k];
    switch (arm) {
    case ARM_DE:
      got = de_propose(opt, s->work, &pd.member, &pd.init, idx);
      break;
    case ARM_UNIFORM:
      got = mutate_propose(opt, UNIFORM_RATE, s->work, idx);
      break;
    case ARM_NORMAL:
      got = mutate_propose(opt, NORMAL_RATE, s->work, idx);
      break;
    default: /* ARM_NELDER_MEAD: a one-point simplex proposes nothing */
      break;
    }
    if (got)
      pd.arm = arm;
    else
      mapopt__bandit_push(&s->bandit, arm, false);
  }
  if (!got)
    mapopt__random_choice(opt, s->work);
  mapopt_status st = mapopt__propose(
      opt, s->work, pd.arm >= 0 ? arm_names[pd.arm] : "opentuner: random",
      &pd.tag);
  pending *slot = st == MAPOPT_OK ? mapopt__vec_push(&s->pend, opt->ctx) : NULL;
  if (!slot)
    return MAPOPT_ENOMEM;
  *slot = pd;
  if (pd.member >= 0 && !pd.init) {
    member *m = &s->pop[pd.member];
    m->pending = pd.tag;
    memcpy(m->cand, s->work, nparams(opt) * sizeof *m->cand);
  }
  return mapopt__hset_add(&s->seen, opt->ctx,
                          mapopt__choice_hash(s->work, nparams(opt))) < 0
             ? MAPOPT_ENOMEM
             : MAPOPT_OK;
}

static mapopt_status ot_plan(mapopt_optimizer *opt, int n) {
  size_t np = nparams(opt);
  size_t *idx = mapopt__malloc(opt->ctx, (np ? np : 1) * sizeof *idx);
  if (!idx)
    return MAPOPT_ENOMEM;
  mapopt_status st = MAPOPT_OK;
  for (int i = 0; i < n && st == MAPOPT_OK; i++)
    st = ot_plan_one(opt, idx);
  mapopt__free(opt->ctx, idx, (np ? np : 1) * sizeof *idx);
  return st;
}

/* a is better than b (failures are the worst). */
static bool better(bool a_ok, double a, bool b_known, bool b_ok, double b) {
  return a_ok && (!b_known || !b_ok || a > b);
}

static mapopt_status ot_tell(mapopt_optimizer *opt, const mapopt_candidate *c,
                             const mapopt_evaluation *e) {
  ot_state *s = opt->state;
  size_t n = nparams(opt);
  bool ok = e->status == MAPOPT_TUNE_OK;
  bool new_best = ok && (!s->have_best || e->score > s->best_score);
  if (new_best) {
    s->have_best = true;
    s->best_score = e->score;
    memcpy(s->best, c->choice, n * sizeof *s->best);
  }
  for (size_t i = 0; i < s->pend.len; i++) {
    pending pd = MAPOPT__VEC_AT(&s->pend, pending, i);
    if (pd.tag != c->tag)
      continue;
    if (pd.arm >= 0)
      mapopt__bandit_push(&s->bandit, pd.arm, new_best);
    if (pd.member >= 0) {
      member *m = &s->pop[pd.member];
      if (pd.init) {
        m->known = true;
        m->ok = ok;
        m->score = e->score;
      } else {
        if (better(ok, e->score, m->known, m->ok, m->score)) {
          memcpy(m->cfg, m->cand, n * sizeof *m->cfg);
          m->known = true;
          m->ok = ok;
          m->score = e->score;
        }
        m->pending = -1;
      }
    }
    MAPOPT__VEC_AT(&s->pend, pending, i) =
        MAPOPT__VEC_AT(&s->pend, pending, s->pend.len - 1);
    s->pend.len--;
    break;
  }
  return MAPOPT_OK;
}

static void ot_destroy(mapopt_optimizer *opt) {
  ot_state *s = opt->state;
  for (int i = 0; i < POPULATION; i++) {
    free_cfg(opt, s->pop[i].cfg);
    free_cfg(opt, s->pop[i].cand);
  }
  free_cfg(opt, s->best);
  free_cfg(opt, s->work);
  free_cfg(opt, s->parent_cfg);
  mapopt__vec_destroy(&s->pend, opt->ctx);
  mapopt__hset_destroy(&s->seen, opt->ctx);
}

static mapopt_status ot_init(mapopt_optimizer *opt) {
  ot_state *s = opt->state;
  mapopt__bandit_init(&s->bandit, NARMS, WINDOW, EXPLORATION_C);
  mapopt__vec_init(&s->pend, sizeof(pending));
  s->best = new_cfg(opt);
  s->work = new_cfg(opt);
  s->parent_cfg = new_cfg(opt);
  bool ok = s->best && s->work && s->parent_cfg;
  for (int i = 0; i < POPULATION; i++) {
    s->pop[i].cfg = new_cfg(opt);
    s->pop[i].cand = new_cfg(opt);
    s->pop[i].pending = -1;
    ok = ok && s->pop[i].cfg && s->pop[i].cand;
  }
  return ok ? MAPOPT_OK : MAPOPT_ENOMEM;
}

const mapopt__optimizer_vt mapopt__opt_opentuner = {
    "opentuner", sizeof(ot_state), 4, ot_init, ot_plan, ot_tell, ot_destroy};
