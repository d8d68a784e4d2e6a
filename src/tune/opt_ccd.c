/*
 * The `ccd` optimizer: constrained coordinate descent in the manner of
 * AutoMap. It starts from the default mapper, visits the parameters in
 * order of profiled importance, tries every other value of one parameter
 * at a time (one batch), keeps the best, and sweeps again until a whole
 * sweep gains nothing.
 *
 * Importance comes from the simulator's profile of the current best
 * mapper (mapopt__param_weight): a parameter weighs the time on the
 * critical path it can change -- the waits for copies, folds, processors
 * and InstanceLimit of its task and argument, as the attribution of the
 * path gives them, its task's busy time -- and a layout parameter the
 * memory time of the tasks that read its region; parameters that weigh
 * nothing come last, in space order. Only
 * parameters that take effect under the current choice are visited (a
 * memory parameter of a kind the task is not mapped to changes nothing).
 * Without a profile (real runs), the order is the space's.
 */
#include <stdio.h>
#include <string.h>

#include "mapopt/sim.h"
#include "tune/tune.h"

typedef struct ccd_state {
  uint16_t *best, *work;
  bool have_best, started;
  double best_score;
  size_t *order;      /* the sweep's parameter order */
  size_t norder, pos; /* next coordinate to visit */
  size_t cur;         /* the coordinate being tried, when in_coord */
  size_t vnext;       /* its next value to try */
  bool in_coord;
  bool gained; /* this sweep improved the best */
  bool done;
  int64_t *weight; /* per parameter, from the last profile */
} ccd_state;

static size_t np_of(const mapopt_optimizer *opt) {
  return mapopt_space_nparams(opt->space);
}

/* Orders the parameters by descending weight, ties in space order. */
static void sort_order(ccd_state *s, size_t n) {
  for (size_t i = 1; i < n; i++) {
    size_t a = s->order[i], j = i;
    while (j > 0 && s->weight[s->order[j - 1]] < s->weight[a]) {
      s->order[j] = s->order[j - 1];
      j--;
    }
    s->order[j] = a;
  }
}

static void new_sweep(mapopt_optimizer *opt) {
  ccd_state *s = opt->state;
  size_t n = np_of(opt);
  for (size_t i = 0; i < n; i++)
    s->order[i] = i;
  sort_order(s, n);
  s->norder = n;
  s->pos = 0;
  s->gained = false;
}

/* Proposes up to batch untried values of the current coordinate into the
 * batch; false when it has none left. */
static mapopt_status try_values(mapopt_optimizer *opt, int batch, int *k) {
  ccd_state *s = opt->state;
  size_t n = np_of(opt);
  const mapopt_space_param *p = mapopt_space_param_at(opt->space, s->cur);
  char note[320];
  memcpy(s->work, s->best, n * sizeof *s->work);
  for (; s->vnext < p->nvalues && *k < batch; s->vnext++) {
    if (s->vnext == s->best[s->cur])
      continue;
    s->work[s->cur] = (uint16_t)s->vnext;
    snprintf(note, sizeof note, "ccd: %s = %s", p->name, p->values[s->vnext]);
    mapopt_status st = mapopt__propose(opt, s->work, note, NULL);
    if (st != MAPOPT_OK)
      return st;
    (*k)++;
  }
  if (s->vnext >= p->nvalues)
    s->in_coord = false;
  return MAPOPT_OK;
}

static mapopt_status ccd_plan(mapopt_optimizer *opt, int batch) {
  ccd_state *s = opt->state;
  if (s->done)
    return MAPOPT_OK;
  if (!s->started) {
    s->started = true;
    return mapopt__propose(opt, s->best, "ccd: start (default mapper)", NULL);
  }
  int k = 0;
  for (int sweeps = 0; k == 0 && sweeps < 2;) {
    if (s->in_coord) {
      mapopt_status st = try_values(opt, batch, &k);
      if (st != MAPOPT_OK || k > 0)
        return st;
      continue;
    }
    if (s->pos < s->norder) {
      size_t i = s->order[s->pos++];
      if (mapopt_space_active(opt->space, s->best, i)) {
        s->cur = i;
        s->vnext = 0;
        s->in_coord = true;
      }
      continue;
    }
    /* A sweep ended: another only if it gained. */
    if (!s->gained)
      break;
    new_sweep(opt);
    sweeps++;
  }
  if (k == 0)
    s->done = true;
  return MAPOPT_OK;
}

static mapopt_status ccd_tell(mapopt_optimizer *opt, const mapopt_candidate *c,
                              const mapopt_evaluation *e) {
  ccd_state *s = opt->state;
  size_t n = np_of(opt);
  bool first = !s->have_best && s->norder == 0;
  if (e->status == MAPOPT_TUNE_OK &&
      (!s->have_best || e->score > s->best_score)) {
    if (s->have_best)
      s->gained = true;
    s->have_best = true;
    s->best_score = e->score;
    memcpy(s->best, c->choice, n * sizeof *s->best);
    if (e->result)
      for (size_t i = 0; i < n; i++)
        s->weight[i] = mapopt__param_weight(opt->space, i, e->result);
  }
  if (first)
    new_sweep(opt); /* the start's profile orders the first sweep */
  return MAPOPT_OK;
}

static mapopt_status ccd_init(mapopt_optimizer *opt) {
  ccd_state *s = opt->state;
  s->best = mapopt__param_array(opt, sizeof *s->best);
  s->work = mapopt__param_array(opt, sizeof *s->work);
  s->order = mapopt__param_array(opt, sizeof *s->order);
  s->weight = mapopt__param_array(opt, sizeof *s->weight);
  return s->best && s->work && s->order && s->weight ? MAPOPT_OK
                                                     : MAPOPT_ENOMEM;
}

static void ccd_destroy(mapopt_optimizer *opt) {
  ccd_state *s = opt->state;
  mapopt__param_array_free(opt, s->best, sizeof *s->best);
  mapopt__param_array_free(opt, s->work, sizeof *s->work);
  mapopt__param_array_free(opt, s->order, sizeof *s->order);
  mapopt__param_array_free(opt, s->weight, sizeof *s->weight);
}

/* A batch is one coordinate's values (the widest parameter has 15). */
const mapopt__optimizer_vt mapopt__opt_ccd = {
    "ccd", sizeof(ccd_state), 16, ccd_init, ccd_plan, ccd_tell, ccd_destroy};
