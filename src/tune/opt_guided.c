/*
 * The `guided` optimizer, mapopt's default: a search that acts on
 * AutoGuide's diagnosis instead of on a bare score.
 *
 * It starts from the default mapper. Each evaluation's findings carry
 * structured edits ("set the memory of (T, R, GPU) to FBMEM", "place T's
 * points like U's"); each edit becomes a move -- a few parameter changes
 * -- ranked by the share of the elapsed time its finding puts at stake.
 * The optimizer applies the most promising untried move to the best mapper
 * so far, keeps the result if it is better, and otherwise goes on with the
 * next move (the best stays: a worse move is reverted). A move that fails
 * is repaired once with the edits its own failure suggests, keeping the
 * change it tried. A placement change of one task is carried to the tasks
 * placed alike (carry_placement): ahead of the repairs when it ran out of
 * memory, with the analogies when it paid. When the findings run dry, it
 * tries the neighbours of the best mapper, one parameter at a time, in
 * order of importance: what each parameter decides about in the best's
 * profile, or, below the full feedback level, the share of time the
 * findings about its task or region put at stake; with the output alone
 * (raw), in an order the seed draws.
 *
 * When the findings' moves are spent and the walk has gone PATIENCE
 * proposals without a new best, a portfolio takes over: an AUC bandit
 * (bandit.c, seeded like everything else) picks, proposal by proposal,
 * among the walk, a sweep of every value of one parameter at a time in
 * order of importance (as ccd does), and a walk around the second-best
 * mapper seen (another basin); an arm is credited when it finds a new
 * best. A run ends only when all three are spent.
 *
 * A single change that failed is remembered with its cause (the
 * simulator's error class, or the status of a real run) and the values of
 * the parameters that cause depends on; it is not proposed again from a
 * new best that leaves those values as they were (a move whose change was
 * ruled out by the space is never proposed: decide.c).
 *
 * Only the space (the app model and the machine) and the evaluations
 * inform it; parameters of equal importance are walked in an order drawn
 * from the seed once, so a run is reproducible.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mapopt/sim.h"
#include "tune/tune.h"

/* A move: parameter changes applied on top of a base choice. */
typedef struct move {
  tune_delta delta;
  double priority;
  int64_t order; /* insertion order: earlier first among equals */
  bool repair;   /* it repairs a failed move: not repaired again */
  bool followup; /* it follows a move that changed nothing */
  bool finding;  /* one of the findings' edits (moves_from) */
  /* Non-NULL: its placement change is carried to the tasks that the base
   * places by these index-map and dims values (carry_placement). */
  const char *carry_map, *carry_dims;
  char note[200];
} move;

/* A single change that failed (see the top of this file). */
typedef struct failure {
  size_t param;
  uint16_t value;
  int cause;        /* mapopt_sim_error, or 100 + mapopt_tune_status */
  uint64_t context; /* the values of the parameters the cause depends on */
} failure;

/* A walk's place: the round (the value rank) and the position in the
 * order within it (next_neighbour). */
typedef struct walk {
  size_t npos, nvalue;
} walk;

/* The portfolio's arms (see the top of this file). */
enum { ARM_WALK, ARM_SWEEP, ARM_RESTART, NARMS };
/* Proposals of the walk without a new best before the portfolio starts;
 * its bandit's window and exploration constant (OpenTuner's). */
enum { PATIENCE = 8, BANDIT_WINDOW = 500 };
#define BANDIT_C 0.05
/* A score within this share of the best is level with it (guided_tell). */
#define LEVEL_SHARE 0.01
/* A mapper under this share of the best is no second basin to walk. */
#define SECOND_SHARE 0.5
/* A kind this many times slower than the current one waits (next_neighbour). */
#define KIND_SLOWER 4.0
/* A placement change that ran out of memory, carried to the tasks placed
 * alike, goes ahead of the repairs of the change alone (at most
 * 4 (1 + impact) < 8); one that paid, carried, goes with the analogies
 * (after the new best's own findings): see carry_placement. */
#define CARRY_FAILED_PRIORITY 8.0
#define CARRY_PAID_PRIORITY 0.95

typedef struct guided_state {
  uint16_t *best, *work;
  bool have_best, started, done;
  double best_score;
  mapopt__vec moves; /* move, unordered; the best is taken each time */
  int64_t next_order;
  mapopt__hset tried;
  /* The single changes (parameter, value) that ran but scored under the
   * best they were made from (lost_key): analogies do not repeat them. */
  mapopt__hset lost;
  /* The repair base of each pending candidate: its move, to add repairs to
   * (tag, move). */
  mapopt__vec pending;
  /* Neighbour walk of the best when the moves run dry. */
  size_t *order;
  int64_t *weight;
  int32_t *neutral; /* per parameter: moves of it that changed nothing */
  uint64_t *tie;    /* per parameter: its rank among equals (seeded) */
  /* Per kind parameter: its task's stakes in the best's profile, and that
   * profile's elapsed time (to_slower_kind). */
  tune_kind_stakes *stakes;
  int64_t elapsed_ns;
  walk walk;
  bool walking;
  mapopt__vec failures; /* failure */
  /* The portfolio: its bandit, the proposals since the last new best, the
   * sweep's place (a position in the order and the next value), and the
   * second-best mapper with its own walk. */
  mapopt__bandit bandit;
  bool portfolio;
  int64_t idle;
  size_t sweep_pos;
  uint16_t sweep_value;
  uint16_t *second;
  bool have_second;
  double second_score;
  walk second_walk;
} guided_state;

typedef struct pending_move {
  int64_t tag;
  move mv;
  bool repaired; /* already a repair: not repaired again */
  size_t single; /* the one parameter it changed from its base, or SIZE_MAX */
  int arm;       /* the portfolio's arm that proposed it, or -1 */
} pending_move;

/* Whether parameter j's value can change why a change of parameter i
 * failed with cause: a placement, limit or kind error is the task's own;
 * memory runs out where any task's data goes; a layout error is about
 * the layouts and where the task's data goes; anything else (a timeout,
 * a deadlock, a failed real run) may depend on every parameter. */
static bool bears_on(const mapopt_space *sp, size_t i, size_t j, int cause) {
  const mapopt_space_param *p = mapopt_space_param_at(sp, j);
  bool same_task = mapopt__space_task_of(sp, i) >= 0 &&
                   mapopt__space_task_of(sp, j) == mapopt__space_task_of(sp, i);
  bool layout = p->kind == MAPOPT_PARAM_LAYOUT_SOA ||
                p->kind == MAPOPT_PARAM_LAYOUT_ORDER ||
                p->kind == MAPOPT_PARAM_LAYOUT_ALIGN;
  switch (cause) {
  case MAPOPT_SIM_BACKPRESSURE:
  case MAPOPT_SIM_INDEX:
  case MAPOPT_SIM_POLICY:
  case MAPOPT_SIM_NO_VARIANT:
    return same_task;
  case MAPOPT_SIM_OOM: /* where the tasks run is where their data goes */
    return same_task || p->kind == MAPOPT_PARAM_MEMORY ||
           p->kind == MAPOPT_PARAM_PROC_KIND ||
           p->kind == MAPOPT_PARAM_INDEX_MAP ||
           p->kind == MAPOPT_PARAM_INDEX_DIMS;
  case MAPOPT_SIM_LAYOUT:
    return layout || (same_task && (p->kind == MAPOPT_PARAM_MEMORY ||
                                    p->kind == MAPOPT_PARAM_PROC_KIND));
  default:
    return true;
  }
}

/* The values in choice of the parameters cause depends on for i. */
static uint64_t context_of(const mapopt_optimizer *opt, const uint16_t *choice,
                           size_t i, int cause) {
  uint64_t h = mapopt__hash_mix(0xfa11, (uint64_t)cause);
  for (size_t j = 0; j < mapopt_space_nparams(opt->space); j++)
    if (j != i && bears_on(opt->space, i, j, cause))
      h = mapopt__hash_mix(mapopt__hash_mix(h, j), choice[j]);
  return h;
}

/* Whether choice makes a change that failed before for a cause it leaves
 * as it was. */
static bool failed_before(const mapopt_optimizer *opt, const uint16_t *choice) {
  const guided_state *s = opt->state;
  for (size_t k = 0; k < s->failures.len; k++) {
    const failure *f = &MAPOPT__VEC_AT(&s->failures, failure, k);
    if (choice[f->param] == f->value && s->best[f->param] != f->value &&
        context_of(opt, choice, f->param, f->cause) == f->context)
      return true;
  }
  return false;
}

/* The one parameter on which a differs from b, or SIZE_MAX. */
static size_t single_change(const mapopt_optimizer *opt, const uint16_t *a,
                            const uint16_t *b) {
  size_t at = SIZE_MAX;
  for (size_t i = 0; i < mapopt_space_nparams(opt->space); i++)
    if (a[i] != b[i]) {
      if (at != SIZE_MAX)
        return SIZE_MAX;
      at = i;
    }
  return at;
}

static size_t np_of(const mapopt_optimizer *opt) {
  return mapopt_space_nparams(opt->space);
}

static mapopt_status add_move(mapopt_optimizer *opt, const move *mv) {
  guided_state *s = opt->state;
  if (mv->delta.n == 0)
    return MAPOPT_OK;
  move *slot = mapopt__vec_push(&s->moves, opt->ctx);
  if (!slot)
    return MAPOPT_ENOMEM;
  *slot = *mv;
  slot->order = s->next_order++;
  return MAPOPT_OK;
}

/* Turns the findings of an evaluation into moves (over the space's
 * parameters, relative to any base) with their promise; with prefix (a
 * failed move, or one that left the score level), each keeps the
 * prefix's changes, is not extended again (a repair), goes weight times
 * ahead of a plain finding's move and has label in its note. */
static mapopt_status moves_from(mapopt_optimizer *opt,
                                const mapopt_evaluation *e, const move *prefix,
                                double weight, const char *label) {
  tune_edit edits[64];
  size_t n = mapopt__guide_edits(e, edits, 64);
  for (size_t i = 0; i < n; i++) {
    move mv = {0};
    if (prefix)
      mv.delta = prefix->delta;
    if (!mapopt__edit_to_delta(opt->space, &edits[i], &mv.delta))
      continue;
    /* Earlier findings and larger stakes first; repairs of a failed move
     * ahead of everything else. */
    mv.priority =
        (prefix ? weight : 1.0) * (1.0 + edits[i].impact) - 1e-3 * (double)i;
    mv.repair = prefix != NULL;
    mv.finding = true;
    snprintf(mv.note, sizeof mv.note, "guided: %s%s", prefix ? label : "",
             edits[i].text);
    mapopt_status st = add_move(opt, &mv);
    if (st != MAPOPT_OK)
      return st;
  }
  return MAPOPT_OK;
}

/* The index-map parameter of task t, or SIZE_MAX if it has none. */
static size_t map_param_of(const mapopt_space *sp, int t) {
  return sp->tasks[t].map_param > 0 ? (size_t)sp->tasks[t].map_param - 1
                                    : SIZE_MAX;
}

/* The dims parameter of task t, or SIZE_MAX if it has none. */
static size_t dims_param_of(const mapopt_space *sp, int t) {
  for (size_t i = 0; i < mapopt_space_nparams(sp); i++)
    if (mapopt_space_param_at(sp, i)->kind == MAPOPT_PARAM_INDEX_DIMS &&
        mapopt__space_task_of(sp, i) == t)
      return i;
  return SIZE_MAX;
}

/* The name of parameter i's value in choice, or "" when there is no such
 * parameter. */
static const char *value_name(const mapopt_space *sp, const uint16_t *choice,
                              size_t i) {
  return i == SIZE_MAX ? "" : mapopt_space_param_at(sp, i)->values[choice[i]];
}

/* Sets parameter i of choice to the value named name; false when it has
 * none of that name (or i is SIZE_MAX). */
static bool set_by_name(const mapopt_space *sp, uint16_t *choice, size_t i,
                        const char *name) {
  if (i == SIZE_MAX)
    return false;
  const mapopt_space_param *p = mapopt_space_param_at(sp, i);
  for (uint16_t v = 0; v < p->nvalues; v++)
    if (!strcmp(p->values[v], name)) {
      choice[i] = v;
      return true;
    }
  return false;
}

/* Whether task u is index-launched like t (the same launch dimensions,
 * the same parent, both leaves or both inner) and placed in base by the
 * index-map and dims values named map and dims. */
static bool placed_alike(const mapopt_space *sp, const uint16_t *base, int t,
                         int u, const char *map, const char *dims) {
  const space_task *a = &sp->tasks[t], *b = &sp->tasks[u];
  return map_param_of(sp, u) != SIZE_MAX && a->index_dims == b->index_dims &&
         a->parent_task == b->parent_task && a->leaf == b->leaf &&
         !strcmp(value_name(sp, base, map_param_of(sp, u)), map) &&
         !strcmp(value_name(sp, base, dims_param_of(sp, u)), dims);
}

/*
 * Carries task t's placement in choice (its index-map and dims values) to
 * every other task that base places as t was placed before the change (by
 * the values named from_map and from_dims); returns how many it changed.
 * Tasks placed alike keep each point's data together: the same point of
 * each runs on one processor, so what one point writes the same point of
 * the next reads in place. Moving one of them alone breaks that -- its
 * data now crosses to the others' processors, and the instances on both
 * sides may not fit (a run whose memory is full under the default
 * placement fails on any single placement change) -- so a placement that
 * changes the distribution of the whole launch over the nodes and
 * processors pays only when the tasks move together. An affinity value is
 * relative to the other tasks' placements: it is never carried.
 */
static size_t carry_placement(const mapopt_optimizer *opt, const uint16_t *base,
                              int t, const char *from_map,
                              const char *from_dims, uint16_t *choice) {
  const mapopt_space *sp = opt->space;
  size_t carried = 0;
  if (map_param_of(sp, t) == SIZE_MAX ||
      mapopt__space_map_by_affinity(sp, choice, t))
    return 0;
  const char *map = value_name(sp, choice, map_param_of(sp, t));
  const char *dims = value_name(sp, choice, dims_param_of(sp, t));
  for (int u = 0; u < sp->run->ntasks; u++) {
    if (u == t || !placed_alike(sp, base, t, u, from_map, from_dims))
      continue;
    uint16_t map_was = choice[map_param_of(sp, u)];
    if (!set_by_name(sp, choice, map_param_of(sp, u), map))
      continue;
    size_t du = dims_param_of(sp, u);
    uint16_t dims_was = du == SIZE_MAX ? 0 : choice[du];
    if (du != SIZE_MAX && !set_by_name(sp, choice, du, dims)) {
      choice[map_param_of(sp, u)] = map_was;
      continue;
    }
    carried += map_was != choice[map_param_of(sp, u)] ||
               (du != SIZE_MAX && dims_was != choice[du]);
  }
  return carried;
}

/* The next untried move applied to the best, into work; false if none. */
static bool next_move(mapopt_optimizer *opt, move *out) {
  guided_state *s = opt->state;
  size_t n = np_of(opt);
  while (s->moves.len) {
    size_t bi = 0;
    for (size_t i = 1; i < s->moves.len; i++) {
      const move *a = &MAPOPT__VEC_AT(&s->moves, move, i);
      const move *b = &MAPOPT__VEC_AT(&s->moves, move, bi);
      if (a->priority > b->priority ||
          (a->priority == b->priority && a->order < b->order))
        bi = i;
    }
    *out = MAPOPT__VEC_AT(&s->moves, move, bi);
    MAPOPT__VEC_AT(&s->moves, move, bi) =
        MAPOPT__VEC_AT(&s->moves, move, s->moves.len - 1);
    s->moves.len--;
    /* What the space rules out is dropped from the move (decide.c); a
     * move left with nothing new is not tried. */
    if (!mapopt__delta_apply(opt->space, s->best, &out->delta, s->work))
      continue;
    if (out->carry_map)
      carry_placement(opt, s->best,
                      mapopt__space_task_of(opt->space, out->delta.param[0]),
                      out->carry_map, out->carry_dims, s->work);
    mapopt__space_make_feasible(opt->space, s->work);
    if (memcmp(s->work, s->best, n * sizeof *s->work) &&
        !mapopt__hset_has(&s->tried, mapopt__choice_hash(s->work, n)) &&
        !failed_before(opt, s->work))
      return true;
  }
  return false;
}

/* What parameter i decides about in e: in its profile when told one
 * (mapopt__param_weight, in ns; for a kind, what its task's placement
 * holds back too: mapopt__kind_stakes), else the time its findings put at
 * stake on the parameter's task or region (in millionths); 0 when
 * neither. */
static int64_t importance(const mapopt_optimizer *opt, size_t i,
                          const mapopt_evaluation *e) {
  const guided_state *s = opt->state;
  if (e->result)
    return mapopt__param_weight(opt->space, i, e->result) +
           s->stakes[i].held_ns;
  const mapopt_space_param *p = mapopt_space_param_at(opt->space, i);
  return (int64_t)(1e6 * mapopt__guide_stake(e, p->task, p->region));
}

/* The parameters in order of importance in the best's evaluation,
 * heaviest first; those that weigh nothing last. */
static void weigh(mapopt_optimizer *opt, const mapopt_evaluation *e) {
  guided_state *s = opt->state;
  size_t n = np_of(opt);
  s->elapsed_ns = e->result ? e->result->elapsed_ns : 0;
  for (size_t i = 0; i < n; i++)
    s->stakes[i] = e->result ? mapopt__kind_stakes(opt->space, i, e->result)
                             : (tune_kind_stakes){0};
  /* A parameter whose moves changed nothing before probably still does
   * not matter: it goes behind the others of similar weight. */
  for (size_t i = 0; i < n; i++)
    s->weight[i] = importance(opt, i, e) / (1 + 10 * (int64_t)s->neutral[i]);
  for (size_t i = 0; i < n; i++)
    s->order[i] = i;
  for (size_t i = 1; i < n; i++) {
    size_t a = s->order[i], j = i;
    while (j > 0 && (s->weight[s->order[j - 1]] < s->weight[a] ||
                     (s->weight[s->order[j - 1]] == s->weight[a] &&
                      s->tie[s->order[j - 1]] > s->tie[a]))) {
      s->order[j] = s->order[j - 1];
      j--;
    }
    s->order[j] = a;
  }
  s->walk = (walk){0, 0};
  s->walking = true;
  s->sweep_pos = 0;
  s->sweep_value = 0;
  s->second_walk = (walk){0, 0};
}

/* A node's peak f64 rate of processor kind k (matrix rate where given). */
static double kind_rate(const mapopt_machine *m, int k) {
  if (k < 0)
    return 0;
  const mapopt_machine_procs *p = &m->procs[k];
  return (double)p->count *
         (double)(p->mflops_f64_matrix ? p->mflops_f64_matrix : p->mflops_f64);
}

/*
 * Whether a task with stakes k (mapopt__kind_stakes) in a run of
 * elapsed_ns may pay on a kind slowdown times slower, the processors'
 * rates taken together; one_now_ns is its compute spread over the
 * processors of its current kind. Two conditions: what its placement
 * holds back exceeds its compute on the critical path slowed down (what
 * the move may free against what it may add to the path), and its compute
 * slowed down, spread over the new kind's processors, still ends within
 * the run (else the run could not end sooner). A small task that others
 * wait behind, or whose data others wait for, passes (a residual on the
 * GPU that the next step needs); a GPU kernel whose compute is off the
 * critical path while copies of its data are on it does not.
 */
static bool slower_kind_may_pay(const tune_kind_stakes *k, double slowdown,
                                double one_now_ns, int64_t elapsed_ns) {
  return (double)k->held_ns > (double)k->compute_ns * slowdown &&
         one_now_ns * slowdown < (double)elapsed_ns;
}

/* Whether choice, one change from base at parameter i, moves a task to a
 * kind whose processors together compute KIND_SLOWER times slower than
 * its kind under base (a GPU task to the OMP processors), and the best's
 * profile does not say the move may pay (slower_kind_may_pay): the walks
 * and the sweep skip such a change; a finding's move may still make it (a
 * task whose fixed cost per launch outweighs its work). */
static bool to_slower_kind(const mapopt_optimizer *opt, const uint16_t *base,
                           const uint16_t *choice, size_t i) {
  const guided_state *s = opt->state;
  const mapopt_space_param *p = mapopt_space_param_at(opt->space, i);
  int t = mapopt__space_task_of(opt->space, i);
  if (p->kind != MAPOPT_PARAM_PROC_KIND || t < 0)
    return false;
  const mapopt_machine *m = opt->space->machine;
  int kind_now = mapopt__space_kind_of(opt->space, base, t);
  double now = kind_rate(m, kind_now);
  double then = kind_rate(m, mapopt__space_kind_of(opt->space, choice, t));
  if (then * KIND_SLOWER >= now)
    return false;
  const tune_kind_stakes *k = &s->stakes[i];
  double one_now_ns = (double)k->busy_ns / (double)m->procs[kind_now].count;
  return then <= 0 ||
         !slower_kind_may_pay(k, now / then, one_now_ns, s->elapsed_ns);
}

/*
 * The next untried neighbour of the best (one parameter changed), breadth
 * first: each round offers every weighing parameter its next value, in
 * order of weight, so that a small budget reaches many parameters; the
 * parameters that weigh nothing come after all values of the others.
 * Values known from the app model to fail or to do nothing are skipped.
 */
static bool next_neighbour(mapopt_optimizer *opt, const uint16_t *base, walk *w,
                           move *out) {
  guided_state *s = opt->state;
  size_t n = np_of(opt), maxv = 0;
  for (size_t i = 0; i < n; i++)
    if (mapopt_space_param_at(opt->space, i)->nvalues > maxv)
      maxv = mapopt_space_param_at(opt->space, i)->nvalues;
  /* nvalue is the round; npos the position in the order within it. Round
   * r >= maxv walks the parameters that weigh nothing, one value each. */
  while (s->walking && w->nvalue < 2 * maxv) {
    if (w->npos >= n) {
      w->npos = 0;
      w->nvalue++;
      continue;
    }
    size_t i = s->order[w->npos++];
    bool light = s->weight[i] <= 0;
    size_t round = w->nvalue < maxv ? w->nvalue : w->nvalue - maxv;
    if (light != (w->nvalue >= maxv))
      continue;
    const mapopt_space_param *p = mapopt_space_param_at(opt->space, i);
    if (!mapopt_space_active(opt->space, base, i))
      continue;
    /* The round-th value other than the current one. */
    size_t seen = 0;
    for (uint16_t v = 0; v < p->nvalues; v++) {
      if (v == base[i] || mapopt__space_ruling(opt->space, base, i, v))
        continue;
      if (seen++ != round)
        continue;
      *out =
          (move){.delta = {.param = {i}, .value = {v}, .from = {-1}, .n = 1}};
      snprintf(out->note, sizeof out->note, "guided: %s %s = %s",
               base == s->best ? "neighbour" : "second-best's neighbour",
               p->name, p->values[v]);
      mapopt__delta_apply(opt->space, base, &out->delta, s->work);
      if (!to_slower_kind(opt, base, s->work, i) &&
          !mapopt__hset_has(&s->tried, mapopt__choice_hash(s->work, n)) &&
          !failed_before(opt, s->work))
        return true;
      break;
    }
  }
  return false;
}

/* The next untried value of the sweep: every value of one parameter of
 * the best, then of the next, in order of importance. */
static bool next_sweep(mapopt_optimizer *opt, move *out) {
  guided_state *s = opt->state;
  size_t n = np_of(opt);
  for (; s->walking && s->sweep_pos < n; s->sweep_pos++, s->sweep_value = 0) {
    size_t i = s->order[s->sweep_pos];
    const mapopt_space_param *p = mapopt_space_param_at(opt->space, i);
    if (!mapopt_space_active(opt->space, s->best, i))
      continue;
    while (s->sweep_value < p->nvalues) {
      uint16_t v = s->sweep_value++;
      if (v == s->best[i] || mapopt__space_ruling(opt->space, s->best, i, v))
        continue;
      *out =
          (move){.delta = {.param = {i}, .value = {v}, .from = {-1}, .n = 1}};
      snprintf(out->note, sizeof out->note, "guided: sweep %s = %s", p->name,
               p->values[v]);
      mapopt__delta_apply(opt->space, s->best, &out->delta, s->work);
      if (!to_slower_kind(opt, s->best, s->work, i) &&
          !mapopt__hset_has(&s->tried, mapopt__choice_hash(s->work, n)) &&
          !failed_before(opt, s->work))
        return true;
    }
  }
  return false;
}

/* A proposal of arm into s->work; false when the arm is spent. */
static bool from_arm(mapopt_optimizer *opt, int arm, move *out) {
  guided_state *s = opt->state;
  switch (arm) {
  case ARM_WALK:
    return next_neighbour(opt, s->best, &s->walk, out);
  case ARM_SWEEP:
    return next_sweep(opt, out);
  default:
    return s->have_second &&
           next_neighbour(opt, s->second, &s->second_walk, out);
  }
}

/* The next proposal once the findings' moves are spent: the walk, until
 * it has gone PATIENCE proposals without a new best or is spent; then the
 * arm the bandit ranks first that has one. *arm: the arm, -1 for the walk
 * before the portfolio. */
static bool next_portfolio(mapopt_optimizer *opt, move *out, int *arm) {
  guided_state *s = opt->state;
  *arm = -1;
  if (!s->portfolio && s->idle < PATIENCE && from_arm(opt, ARM_WALK, out))
    return true;
  s->portfolio = true;
  int order[NARMS];
  mapopt__bandit_order(&s->bandit, &opt->rng, order);
  for (int k = 0; k < NARMS; k++)
    if (from_arm(opt, order[k], out)) {
      *arm = order[k];
      return true;
    }
  return false;
}

static mapopt_status guided_plan(mapopt_optimizer *opt, int batch) {
  guided_state *s = opt->state;
  size_t n = np_of(opt);
  if (s->done)
    return MAPOPT_OK;
  if (!s->started) {
    s->started = true;
    move start = {0};
    snprintf(start.note, sizeof start.note, "guided: start (default mapper)");
    memcpy(s->work, s->best, n * sizeof *s->work);
    int64_t tag;
    mapopt_status st = mapopt__propose(opt, s->work, start.note, &tag);
    pending_move *pm =
        st == MAPOPT_OK ? mapopt__vec_push(&s->pending, opt->ctx) : NULL;
    if (!pm)
      return MAPOPT_ENOMEM;
    *pm = (pending_move){tag, start, false, SIZE_MAX, -1};
    return mapopt__hset_add(&s->tried, opt->ctx,
                            mapopt__choice_hash(s->work, n)) < 0
               ? MAPOPT_ENOMEM
               : MAPOPT_OK;
  }
  int k = 0;
  for (; k < batch; k++) {
    move mv;
    int arm = -1;
    if (!next_move(opt, &mv) && !next_portfolio(opt, &mv, &arm))
      break;
    int64_t tag;
    mapopt_status st = mapopt__propose(opt, s->work, mv.note, &tag);
    pending_move *pm =
        st == MAPOPT_OK ? mapopt__vec_push(&s->pending, opt->ctx) : NULL;
    if (!pm || mapopt__hset_add(&s->tried, opt->ctx,
                                mapopt__choice_hash(s->work, n)) < 0)
      return MAPOPT_ENOMEM;
    *pm = (pending_move){tag, mv, mv.repair,
                         single_change(opt, s->work, s->best), arm};
  }
  if (k == 0)
    s->done = true;
  return MAPOPT_OK;
}

/* Whether parameters i and j are alike: of one kind that decides where
 * or how data lives (a memory or a layout: placements interact with the
 * data's distribution, so they are carried only to all the tasks placed
 * alike at once, carry_placement), for tasks launched
 * alike (the same launch dimensions, the same parent, as many region
 * arguments), or both for no task (layouts). */
static bool alike(const mapopt_space *sp, size_t i, size_t j) {
  mapopt_param_kind k = mapopt_space_param_at(sp, i)->kind;
  if (k != mapopt_space_param_at(sp, j)->kind ||
      (k != MAPOPT_PARAM_MEMORY && k != MAPOPT_PARAM_LAYOUT_SOA &&
       k != MAPOPT_PARAM_LAYOUT_ORDER))
    return false;
  int ti = mapopt__space_task_of(sp, i), tj = mapopt__space_task_of(sp, j);
  if (ti < 0 || tj < 0)
    return ti == tj;
  const space_task *a = &sp->tasks[ti], *b = &sp->tasks[tj];
  return a->index_dims == b->index_dims && a->parent_task == b->parent_task &&
         a->leaf == b->leaf && a->keys.len == b->keys.len;
}

/* The key of the single change of parameter i to value v in s->lost. */
static uint64_t lost_key(size_t i, uint16_t v) {
  return mapopt__hash_mix(mapopt__hash_mix(0x1057, i), v);
}

/* A single change that paid (parameter i to value v) probably pays for
 * the parameters alike too (the same memory for another task that
 * initializes its matrix the same way): each of them at the same value,
 * right after the moves of the new best's own findings. */
static mapopt_status analogies(mapopt_optimizer *opt, size_t i, uint16_t v) {
  guided_state *s = opt->state;
  const char *value = mapopt_space_param_at(opt->space, i)->values[v];
  for (size_t j = 0; j < np_of(opt); j++) {
    const mapopt_space_param *p = mapopt_space_param_at(opt->space, j);
    if (j == i || !alike(opt->space, i, j))
      continue;
    for (uint16_t w = 0; w < p->nvalues; w++) {
      /* A change that already lost alone from an earlier best is no
       * analogy to try again (the walks may still come back to it). */
      if (w == s->best[j] || strcmp(p->values[w], value) ||
          mapopt__space_ruling(opt->space, s->best, j, w) ||
          mapopt__hset_has(&s->lost, lost_key(j, w)))
        continue;
      move mv = {.delta = {.param = {j}, .value = {w}, .from = {-1}, .n = 1},
                 .priority = 0.95};
      snprintf(mv.note, sizeof mv.note,
               "guided: %s = %s (as for %s, which paid)", p->name, value,
               mapopt_space_param_at(opt->space, i)->name);
      mapopt_status st = add_move(opt, &mv);
      if (st != MAPOPT_OK)
        return st;
    }
  }
  return MAPOPT_OK;
}

/* After a change of one task's placement alone (parameter i, from base to
 * choice; SIZE_MAX: not one change): the same change with the tasks that
 * base places alike carried along (carry_placement), at priority, when
 * that moves any of them. */
static mapopt_status carry_after(mapopt_optimizer *opt, const uint16_t *base,
                                 const uint16_t *choice, size_t i,
                                 double priority) {
  guided_state *s = opt->state;
  if (i == SIZE_MAX)
    return MAPOPT_OK;
  const mapopt_space_param *p = mapopt_space_param_at(opt->space, i);
  int t = mapopt__space_task_of(opt->space, i);
  if (p->kind != MAPOPT_PARAM_INDEX_MAP && p->kind != MAPOPT_PARAM_INDEX_DIMS)
    return MAPOPT_OK;
  move mv = {
      .delta = {.param = {i}, .value = {choice[i]}, .from = {-1}, .n = 1},
      .priority = priority,
      .repair = true,
      .carry_map = value_name(opt->space, base, map_param_of(opt->space, t)),
      .carry_dims = value_name(opt->space, base, dims_param_of(opt->space, t))};
  memcpy(s->work, choice, np_of(opt) * sizeof *s->work);
  if (!carry_placement(opt, base, t, mv.carry_map, mv.carry_dims, s->work))
    return MAPOPT_OK;
  snprintf(mv.note, sizeof mv.note,
           "guided: %s = %s with the tasks placed alike", p->name,
           p->values[choice[i]]);
  return add_move(opt, &mv);
}

static mapopt_status guided_tell(mapopt_optimizer *opt,
                                 const mapopt_candidate *c,
                                 const mapopt_evaluation *e) {
  guided_state *s = opt->state;
  size_t n = np_of(opt);
  pending_move pm = {.tag = -1};
  for (size_t i = 0; i < s->pending.len; i++)
    if (MAPOPT__VEC_AT(&s->pending, pending_move, i).tag == c->tag) {
      pm = MAPOPT__VEC_AT(&s->pending, pending_move, i);
      MAPOPT__VEC_AT(&s->pending, pending_move, i) =
          MAPOPT__VEC_AT(&s->pending, pending_move, s->pending.len - 1);
      s->pending.len--;
      break;
    }
  bool ok = e->status == MAPOPT_TUNE_OK;
  bool new_best = ok && (!s->have_best || e->score > s->best_score);
  if (ok && s->have_best && e->score < s->best_score && pm.tag >= 0 &&
      pm.single != SIZE_MAX &&
      mapopt__hset_add(&s->lost, opt->ctx,
                       lost_key(pm.single, c->choice[pm.single])) < 0)
    return MAPOPT_ENOMEM;
  if (pm.arm >= 0)
    mapopt__bandit_push(&s->bandit, pm.arm, new_best);
  s->idle = new_best ? 0 : s->idle + 1;
  /* The second-best mapper: the old best when a new one comes, else any
   * better than the second and short of the best. */
  const uint16_t *second =
      new_best ? (s->have_best ? s->best : NULL)
      : ok && !e->duplicate && e->score < s->best_score &&
              e->score >= SECOND_SHARE * s->best_score &&
              (!s->have_second || e->score > s->second_score)
          ? c->choice
          : NULL;
  if (second) {
    memcpy(s->second, second, n * sizeof *s->second);
    s->second_score = new_best ? s->best_score : e->score;
    s->have_second = true;
    s->second_walk = (walk){0, 0};
  }
  if (new_best) {
    /* A new best: its findings give the next moves; the old moves stay
     * (they apply to the new best too), behind the new ones. */
    for (size_t i = 0; i < s->moves.len; i++)
      MAPOPT__VEC_AT(&s->moves, move, i).priority *= 0.5;
    /* A placement that paid for one task, carried to the tasks the old
     * best placed alike. */
    mapopt_status carried = s->have_best && pm.tag >= 0 && !pm.mv.carry_map
                                ? carry_after(opt, s->best, c->choice,
                                              pm.single, CARRY_PAID_PRIORITY)
                                : MAPOPT_OK;
    if (carried != MAPOPT_OK)
      return carried;
    s->have_best = true;
    s->best_score = e->score;
    memcpy(s->best, c->choice, n * sizeof *s->best);
    weigh(opt, e);
    bool single = pm.tag >= 0 && pm.mv.delta.n == 1 && pm.mv.delta.from[0] < 0;
    mapopt_status st =
        single ? analogies(opt, pm.mv.delta.param[0], pm.mv.delta.value[0])
               : MAPOPT_OK;
    return st == MAPOPT_OK ? moves_from(opt, e, NULL, 1.0, "") : st;
  }
  if (!ok && pm.tag >= 0 && pm.single != SIZE_MAX) {
    int cause = e->result ? (int)e->result->error : 100 + (int)e->status;
    failure *f = mapopt__vec_push(&s->failures, opt->ctx);
    if (!f)
      return MAPOPT_ENOMEM;
    *f = (failure){pm.single, c->choice[pm.single], cause,
                   context_of(opt, c->choice, pm.single, cause)};
  }
  if (!ok && e->result && e->result->error == MAPOPT_SIM_OOM && pm.tag >= 0 &&
      !pm.mv.carry_map) {
    mapopt_status st =
        carry_after(opt, s->best, c->choice, pm.single, CARRY_FAILED_PRIORITY);
    if (st != MAPOPT_OK)
      return st;
  }
  if (!ok && pm.tag >= 0 && !pm.repaired) {
    /* Keep the change that was tried, add what its failure asks for. */
    mapopt_status st = moves_from(opt, e, &pm.mv, 4.0, "repair: ");
    if (st != MAPOPT_OK)
      return st;
  }
  bool single = pm.tag >= 0 && pm.mv.delta.n == 1 && pm.mv.delta.from[0] < 0;
  if (ok && s->have_best && single && pm.mv.finding && !pm.mv.repair &&
      e->score >= s->best_score * (1 - LEVEL_SHARE)) {
    /* A finding's fix that left the score level (within LEVEL_SHARE) may
     * have removed its wait only for another path as long to take over
     * (two arguments copied side by side): the new path's own findings
     * are tried with the fix kept, ahead of older moves. */
    mapopt_status st = moves_from(opt, e, &pm.mv, 2.0, "with the last fix: ");
    if (st != MAPOPT_OK)
      return st;
  }
  if (ok && s->have_best && e->score == s->best_score && single)
    s->neutral[pm.mv.delta.param[0]]++;
  if (ok && s->have_best && e->score == s->best_score && single &&
      !pm.mv.followup) {
    /* A change that did exactly nothing (another placement function that
     * places every point where the current one does) says little of the
     * parameter: its next value goes ahead of other neighbours, once (two
     * in a row that change nothing are a parameter that does not matter,
     * or a symmetric one). */
    size_t i = pm.mv.delta.param[0];
    const mapopt_space_param *p = mapopt_space_param_at(opt->space, i);
    for (uint16_t v = (uint16_t)(pm.mv.delta.value[0] + 1); v < p->nvalues;
         v++) {
      if (v == s->best[i] || mapopt__space_ruling(opt->space, s->best, i, v))
        continue;
      move mv = {.delta = {.param = {i}, .value = {v}, .from = {-1}, .n = 1},
                 .priority = 0.9,
                 .followup = true};
      snprintf(mv.note, sizeof mv.note,
               "guided: neighbour %s = %s (the last "
               "value changed nothing)",
               p->name, p->values[v]);
      return add_move(opt, &mv);
    }
  }
  if (!s->have_best && !s->walking)
    weigh(opt, e);
  return MAPOPT_OK;
}

static mapopt_status guided_init(mapopt_optimizer *opt) {
  guided_state *s = opt->state;
  mapopt__vec_init(&s->moves, sizeof(move));
  mapopt__vec_init(&s->pending, sizeof(pending_move));
  mapopt__vec_init(&s->failures, sizeof(failure));
  mapopt__bandit_init(&s->bandit, NARMS, BANDIT_WINDOW, BANDIT_C);
  s->second = mapopt__param_array(opt, sizeof *s->second);
  s->best = mapopt__param_array(opt, sizeof *s->best);
  s->work = mapopt__param_array(opt, sizeof *s->work);
  s->order = mapopt__param_array(opt, sizeof *s->order);
  s->weight = mapopt__param_array(opt, sizeof *s->weight);
  s->neutral = mapopt__param_array(opt, sizeof *s->neutral);
  s->tie = mapopt__param_array(opt, sizeof *s->tie);
  s->stakes = mapopt__param_array(opt, sizeof *s->stakes);
  if (!s->second || !s->best || !s->work || !s->order || !s->weight ||
      !s->neutral || !s->tie || !s->stakes)
    return MAPOPT_ENOMEM;
  for (size_t i = 0; i < np_of(opt); i++)
    s->tie[i] = mapopt__rng_next(&opt->rng);
  return MAPOPT_OK;
}

static void guided_destroy(mapopt_optimizer *opt) {
  guided_state *s = opt->state;
  mapopt__vec_destroy(&s->moves, opt->ctx);
  mapopt__vec_destroy(&s->pending, opt->ctx);
  mapopt__vec_destroy(&s->failures, opt->ctx);
  mapopt__hset_destroy(&s->tried, opt->ctx);
  mapopt__hset_destroy(&s->lost, opt->ctx);
  mapopt__param_array_free(opt, s->second, sizeof *s->second);
  mapopt__param_array_free(opt, s->best, sizeof *s->best);
  mapopt__param_array_free(opt, s->work, sizeof *s->work);
  mapopt__param_array_free(opt, s->order, sizeof *s->order);
  mapopt__param_array_free(opt, s->weight, sizeof *s->weight);
  mapopt__param_array_free(opt, s->neutral, sizeof *s->neutral);
  mapopt__param_array_free(opt, s->tie, sizeof *s->tie);
  mapopt__param_array_free(opt, s->stakes, sizeof *s->stakes);
}

/* One candidate at a time: each move is chosen knowing the last result. */
const mapopt__optimizer_vt mapopt__opt_guided = {
    "guided",    sizeof(guided_state), 1, guided_init, guided_plan,
    guided_tell, guided_destroy};
