/*
 * The optimizers' common interface (include/mapopt/tune.h): the registry of
 * optimizers by name, the ask/tell entry points that dispatch to each
 * optimizer's functions, candidates, and the `random` optimizer -- uniform
 * samples of the space, the seed paper's random baseline.
 */
#include <string.h>

#include "tune/tune.h"

static const mapopt__optimizer_vt *const registry[] = {&mapopt__opt_random};
static const char *const names[] = {"random", NULL};

const char *const *mapopt_optimizer_names(void) {
  return names;
}

const char *mapopt_eval_status_name(mapopt_eval_status s) {
  static const char *const n[] = {"ok", "invalid", "failed", "timeout",
                                  "crash"};
  return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : NULL;
}

void mapopt_candidate_clear(mapopt_ctx *ctx, mapopt_candidate *c) {
  if (!c)
    return;
  if (c->text)
    mapopt__free(ctx, c->text, strlen(c->text) + 1);
  if (c->note)
    mapopt__free(ctx, c->note, strlen(c->note) + 1);
  mapopt__free(ctx, c->choice,
               (c->nchoice ? c->nchoice : 1) * sizeof *c->choice);
  *c = (mapopt_candidate){0};
}

mapopt_status mapopt__candidate_make(mapopt_optimizer *opt,
                                     const uint16_t *choice, const char *note,
                                     mapopt_candidate *out) {
  size_t n = mapopt_space_nparams(opt->space);
  *out = (mapopt_candidate){0};
  out->tag = opt->next_tag++;
  out->choice = mapopt__malloc(opt->ctx, (n ? n : 1) * sizeof *choice);
  out->nchoice = n;
  out->note = mapopt__strndup(opt->ctx, note, strlen(note));
  size_t len;
  if (!out->choice || !out->note ||
      mapopt_space_render(opt->space, choice, &out->text, &len) != MAPOPT_OK) {
    mapopt_candidate_clear(opt->ctx, out);
    return MAPOPT_ENOMEM;
  }
  memcpy(out->choice, choice, n * sizeof *choice);
  out->nchoice = n;
  return MAPOPT_OK;
}

mapopt_status mapopt_optimizer_new(mapopt_ctx *ctx, const char *name,
                                   const mapopt_space *space,
                                   const mapopt_optimizer_options *o,
                                   mapopt_optimizer **out) {
  if (!ctx || !name || !space || !out)
    return MAPOPT_EINVAL;
  const mapopt__optimizer_vt *vt = NULL;
  for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
    if (!strcmp(registry[i]->name, name))
      vt = registry[i];
  if (!vt)
    return MAPOPT_ENOTFOUND;
  mapopt_optimizer *opt = mapopt__calloc(ctx, 1, sizeof *opt);
  if (!opt)
    return MAPOPT_ENOMEM;
  opt->ctx = ctx;
  opt->space = space;
  opt->vt = vt;
  if (o)
    opt->opts = *o;
  mapopt__rng_seed(&opt->rng, opt->opts.seed);
  opt->state = vt->size ? mapopt__calloc(ctx, 1, vt->size) : NULL;
  if ((vt->size && !opt->state) || (vt->init && vt->init(opt) != MAPOPT_OK)) {
    mapopt_optimizer_free(opt);
    return MAPOPT_ENOMEM;
  }
  *out = opt;
  return MAPOPT_OK;
}

void mapopt_optimizer_free(mapopt_optimizer *opt) {
  if (!opt)
    return;
  if (opt->vt->destroy && opt->state)
    opt->vt->destroy(opt);
  if (opt->state)
    mapopt__free(opt->ctx, opt->state, opt->vt->size);
  mapopt__free(opt->ctx, opt, sizeof *opt);
}

mapopt_status mapopt_optimizer_ask(mapopt_optimizer *opt,
                                   mapopt_candidate *out) {
  if (!opt || !out)
    return MAPOPT_EINVAL;
  *out = (mapopt_candidate){0};
  return opt->vt->ask(opt, out);
}

mapopt_status mapopt_optimizer_tell(mapopt_optimizer *opt,
                                    const mapopt_candidate *c,
                                    const mapopt_evaluation *e) {
  if (!opt || !c || !e)
    return MAPOPT_EINVAL;
  return opt->vt->tell ? opt->vt->tell(opt, c, e) : MAPOPT_OK;
}

/* ---- random
 * ------------------------------------------------------------------
 */

/* Every value of every parameter equally likely, independently. */
static mapopt_status random_ask(mapopt_optimizer *opt, mapopt_candidate *out) {
  size_t n = mapopt_space_nparams(opt->space);
  uint16_t *c = mapopt__malloc(opt->ctx, (n ? n : 1) * sizeof *c);
  if (!c)
    return MAPOPT_ENOMEM;
  for (size_t i = 0; i < n; i++)
    c[i] = (uint16_t)mapopt__rng_below(
        &opt->rng, mapopt_space_param_at(opt->space, i)->nvalues);
  mapopt_status st = mapopt__candidate_make(opt, c, "random", out);
  mapopt__free(opt->ctx, c, (n ? n : 1) * sizeof *c);
  return st;
}

const mapopt__optimizer_vt mapopt__opt_random = {"random",   0,    NULL,
                                                 random_ask, NULL, NULL};
