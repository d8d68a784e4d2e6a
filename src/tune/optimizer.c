/*
 * The optimizers' common interface (include/mapopt/tune.h): batching,
 * candidates, a hash set of seen choices, and the `random` optimizer --
 * uniform samples of the space, the seed paper's random baseline. The
 * optimizers are looked up by name in registry.c, above every optimizer.
 *
 * Batching is done here once for every optimizer: when the previous batch
 * has been told, the optimizer plans the next one from what it knows; asks
 * hand out the planned candidates, and a tell is passed on at once. Since
 * a batch is fixed before any of it is evaluated, the proposals do not
 * depend on how many candidates the caller evaluates at a time.
 */
#include <string.h>

#include "tune/tune.h"

const char *mapopt_tune_status_name(mapopt_tune_status s) {
  static const char *const n[] = {"ok",      "invalid", "failed",
                                  "timeout", "crash",   "screened"};
  return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : NULL;
}

void mapopt_candidate_clear(mapopt_ctx *ctx, mapopt_candidate *c) {
  if (!c)
    return;
  mapopt_text_free(c->text);
  mapopt_text_free(c->failure);
  if (c->note)
    mapopt__free(ctx, c->note, strlen(c->note) + 1);
  if (c->choice)
    mapopt__free(ctx, c->choice,
                 (c->nchoice ? c->nchoice : 1) * sizeof *c->choice);
  *c = (mapopt_candidate){0};
}

/* A deep copy of c into *out (cleared on failure). */
static mapopt_status candidate_copy(mapopt_ctx *ctx, const mapopt_candidate *c,
                                    mapopt_candidate *out) {
  *out = (mapopt_candidate){.tag = c->tag, .nchoice = c->nchoice};
  out->text = mapopt__text_new(ctx, c->text, strlen(c->text));
  out->note = mapopt__strndup(ctx, c->note, strlen(c->note));
  if (c->failure)
    out->failure = mapopt__text_new(ctx, c->failure, strlen(c->failure));
  if (c->choice) {
    size_t n = c->nchoice ? c->nchoice : 1;
    out->choice = mapopt__malloc(ctx, n * sizeof *c->choice);
    if (out->choice)
      memcpy(out->choice, c->choice, n * sizeof *c->choice);
  }
  if (!out->text || !out->note || (c->choice && !out->choice) ||
      (c->failure && !out->failure)) {
    mapopt_candidate_clear(ctx, out);
    return MAPOPT_ENOMEM;
  }
  return MAPOPT_OK;
}

/* A new planned candidate with its note and the next tag, its mapper
 * still to be given; NULL when out of memory. */
static mapopt_candidate *planned_new(mapopt_optimizer *opt, const char *note) {
  mapopt_candidate *c = mapopt__vec_push(&opt->planned, opt->ctx);
  if (!c)
    return NULL;
  *c = (mapopt_candidate){.tag = opt->next_tag};
  c->note = mapopt__strndup(opt->ctx, note, strlen(note));
  if (!c->note) {
    opt->planned.len--;
    return NULL;
  }
  return c;
}

/* Keeps the last planned candidate c if ok (its tag in *tag, when given),
 * else drops it: MAPOPT_ENOMEM. */
static mapopt_status planned_done(mapopt_optimizer *opt, mapopt_candidate *c,
                                  bool ok, int64_t *tag) {
  if (!ok) {
    mapopt_candidate_clear(opt->ctx, c);
    opt->planned.len--;
    return MAPOPT_ENOMEM;
  }
  if (tag)
    *tag = opt->next_tag;
  opt->next_tag++;
  return MAPOPT_OK;
}

mapopt_status mapopt__propose(mapopt_optimizer *opt, const uint16_t *choice,
                              const char *note, int64_t *tag) {
  mapopt_candidate *c = planned_new(opt, note);
  if (!c)
    return MAPOPT_ENOMEM;
  size_t n = mapopt_space_nparams(opt->space);
  c->nchoice = n;
  c->choice = mapopt__malloc(opt->ctx, (n ? n : 1) * sizeof *choice);
  bool ok = c->choice != NULL;
  if (ok) {
    /* The space's feasibility filter, for every optimizer (decide.c). */
    memcpy(c->choice, choice, n * sizeof *choice);
    mapopt__space_make_feasible(opt->space, c->choice);
    size_t len;
    ok =
        mapopt_space_render(opt->space, c->choice, &c->text, &len) == MAPOPT_OK;
  }
  return planned_done(opt, c, ok, tag);
}

mapopt_status mapopt__propose_text(mapopt_optimizer *opt, const char *text,
                                   const char *failure, const char *note,
                                   int64_t *tag) {
  mapopt_candidate *c = planned_new(opt, note);
  if (!c)
    return MAPOPT_ENOMEM;
  c->text = mapopt__text_new(opt->ctx, text, strlen(text));
  if (failure)
    c->failure = mapopt__text_new(opt->ctx, failure, strlen(failure));
  return planned_done(opt, c, c->text != NULL && (!failure || c->failure), tag);
}

/* Frees the candidates of the finished batch. */
static void clear_batch(mapopt_optimizer *opt) {
  for (size_t i = 0; i < opt->planned.len; i++)
    mapopt_candidate_clear(opt->ctx,
                           &MAPOPT__VEC_AT(&opt->planned, mapopt_candidate, i));
  opt->planned.len = 0;
  opt->given = opt->told = 0;
}

static size_t param_count(const mapopt_optimizer *opt) {
  size_t n = mapopt_space_nparams(opt->space);
  return n ? n : 1;
}

void *mapopt__param_array(const mapopt_optimizer *opt, size_t elem) {
  return mapopt__calloc(opt->ctx, param_count(opt), elem);
}

void mapopt__param_array_free(const mapopt_optimizer *opt, void *a,
                              size_t elem) {
  if (a)
    mapopt__free(opt->ctx, a, param_count(opt) * elem);
}

mapopt_status mapopt__optimizer_create(mapopt_ctx *ctx,
                                       const mapopt__optimizer_vt *vt,
                                       const mapopt_space *space,
                                       const mapopt_optimizer_options *o,
                                       mapopt_optimizer **out) {
  mapopt_optimizer *opt = mapopt__calloc(ctx, 1, sizeof *opt);
  if (!opt)
    return MAPOPT_ENOMEM;
  opt->ctx = ctx;
  opt->space = space;
  opt->vt = vt;
  if (o)
    opt->opts = *o;
  opt->batch = opt->opts.batch > 0 ? opt->opts.batch : vt->default_batch;
  mapopt__rng_seed(&opt->rng, opt->opts.seed);
  mapopt__vec_init(&opt->planned, sizeof(mapopt_candidate));
  mapopt__vec_init(&opt->call_recs, sizeof(mapopt__llm_call_rec));
  mapopt__vec_init(&opt->reply_recs, sizeof(mapopt__llm_reply_rec));
  opt->state = vt->size ? mapopt__calloc(ctx, 1, vt->size) : NULL;
  mapopt_status st = vt->size && !opt->state ? MAPOPT_ENOMEM : MAPOPT_OK;
  if (st == MAPOPT_OK && vt->init)
    st = vt->init(opt);
  if (st != MAPOPT_OK) {
    mapopt_optimizer_free(opt);
    return st;
  }
  *out = opt;
  return MAPOPT_OK;
}

void mapopt__llm_reply_rec_clear(mapopt__llm_reply_rec *r) {
  mapopt_text_free(r->reply);
  r->reply = NULL;
}

mapopt_status mapopt__optimizer_baseline(mapopt_optimizer *opt,
                                         const char *text,
                                         const mapopt_evaluation *e) {
  return opt->baseline ? opt->baseline(opt, text, e) : MAPOPT_OK;
}

void mapopt__optimizer_drop_records(mapopt_optimizer *opt) {
  for (size_t i = 0; i < opt->call_recs.len; i++)
    mapopt_text_free(MAPOPT__VEC_AT(&opt->call_recs, mapopt__llm_call_rec, i)
                         .call.error_text);
  for (size_t i = 0; i < opt->reply_recs.len; i++)
    mapopt__llm_reply_rec_clear(
        &MAPOPT__VEC_AT(&opt->reply_recs, mapopt__llm_reply_rec, i));
  opt->call_recs.len = opt->reply_recs.len = 0;
}

void mapopt_optimizer_free(mapopt_optimizer *opt) {
  if (!opt)
    return;
  if (opt->vt->destroy && opt->state)
    opt->vt->destroy(opt);
  if (opt->state)
    mapopt__free(opt->ctx, opt->state, opt->vt->size);
  clear_batch(opt);
  mapopt__vec_destroy(&opt->planned, opt->ctx);
  mapopt__optimizer_drop_records(opt);
  mapopt__vec_destroy(&opt->call_recs, opt->ctx);
  mapopt__vec_destroy(&opt->reply_recs, opt->ctx);
  mapopt__free(opt->ctx, opt, sizeof *opt);
}

mapopt_status mapopt_optimizer_ask(mapopt_optimizer *opt,
                                   mapopt_candidate *out) {
  if (!opt || !out)
    return MAPOPT_EINVAL;
  *out = (mapopt_candidate){0};
  opt->error[0] = 0;
  if (opt->given == opt->planned.len) {
    if (opt->told < opt->given)
      return MAPOPT_ENOTFOUND; /* tell the batch first */
    clear_batch(opt);
    mapopt_status st = opt->vt->plan(opt, opt->batch);
    if (st != MAPOPT_OK)
      return st;
    if (opt->planned.len == 0)
      return MAPOPT_ENOTFOUND; /* done */
  }
  mapopt_status st = candidate_copy(
      opt->ctx, &MAPOPT__VEC_AT(&opt->planned, mapopt_candidate, opt->given),
      out);
  if (st == MAPOPT_OK)
    opt->given++;
  return st;
}

const char *mapopt_optimizer_last_error(const mapopt_optimizer *opt) {
  return opt ? opt->error : "";
}

mapopt_status mapopt_optimizer_tell(mapopt_optimizer *opt,
                                    const mapopt_candidate *c,
                                    const mapopt_evaluation *e) {
  if (!opt || !c || !e || opt->told >= opt->given ||
      MAPOPT__VEC_AT(&opt->planned, mapopt_candidate, opt->told).tag != c->tag)
    return MAPOPT_EINVAL;
  opt->told++;
  return opt->vt->tell ? opt->vt->tell(opt, c, e) : MAPOPT_OK;
}

/* ---- a set of hashes ----------------------------------------------------- */

uint64_t mapopt__choice_hash(const uint16_t *c, size_t n) {
  return mapopt__hash_bytes(c, n * sizeof *c);
}

static bool hset_grow(mapopt__hset *h, mapopt_ctx *ctx) {
  size_t cap = h->cap ? h->cap * 2 : 64;
  uint64_t *s = mapopt__calloc(ctx, cap, sizeof *s);
  if (!s)
    return false;
  for (size_t i = 0; i < h->cap; i++)
    if (h->slots[i]) {
      size_t k = h->slots[i] & (cap - 1);
      while (s[k])
        k = (k + 1) & (cap - 1);
      s[k] = h->slots[i];
    }
  if (h->slots)
    mapopt__free(ctx, h->slots, h->cap * sizeof *h->slots);
  h->slots = s;
  h->cap = cap;
  return true;
}

bool mapopt__hset_has(const mapopt__hset *h, uint64_t v) {
  v = v ? v : 1;
  for (size_t k = v & (h->cap - 1); h->cap && h->slots[k];
       k = (k + 1) & (h->cap - 1))
    if (h->slots[k] == v)
      return true;
  return false;
}

int mapopt__hset_add(mapopt__hset *h, mapopt_ctx *ctx, uint64_t v) {
  v = v ? v : 1;
  if (mapopt__hset_has(h, v))
    return 0;
  if ((h->n + 1) * 2 > h->cap && !hset_grow(h, ctx))
    return -1;
  size_t k = v & (h->cap - 1);
  while (h->slots[k])
    k = (k + 1) & (h->cap - 1);
  h->slots[k] = v;
  h->n++;
  return 1;
}

void mapopt__hset_destroy(mapopt__hset *h, mapopt_ctx *ctx) {
  if (h->slots)
    mapopt__free(ctx, h->slots, h->cap * sizeof *h->slots);
  *h = (mapopt__hset){0};
}

/* ---- random -------------------------------------------------------------- */

/* Fills c with a uniform sample of the space. */
void mapopt__random_choice(mapopt_optimizer *opt, uint16_t *c) {
  size_t n = mapopt_space_nparams(opt->space);
  for (size_t i = 0; i < n; i++)
    c[i] = (uint16_t)mapopt__rng_below(
        &opt->rng, mapopt_space_param_at(opt->space, i)->nvalues);
}

/* n independent uniform samples. */
static mapopt_status random_plan(mapopt_optimizer *opt, int n) {
  size_t np = mapopt_space_nparams(opt->space);
  uint16_t *c = mapopt__malloc(opt->ctx, (np ? np : 1) * sizeof *c);
  if (!c)
    return MAPOPT_ENOMEM;
  mapopt_status st = MAPOPT_OK;
  for (int i = 0; i < n && st == MAPOPT_OK; i++) {
    mapopt__random_choice(opt, c);
    st = mapopt__propose(opt, c, "random", NULL);
  }
  mapopt__free(opt->ctx, c, (np ? np : 1) * sizeof *c);
  return st;
}

const mapopt__optimizer_vt mapopt__opt_random = {"random",    0,    4,   NULL,
                                                 random_plan, NULL, NULL};
