/*
 * The `llm` optimizer (docs/llm.md): a chat model writes whole mappers.
 * Each batch is one step of mapopt_llm_step -- one prompt, the batch's
 * samples -- from what the optimizer was told: the application and the
 * machine (the space's run, never named: the prompt is anonymous), the
 * best mapper so far with its feedback, and the last k attempts with
 * their scores and feedback. The feedback is what the driver told: for a
 * mapper, AutoGuide's text at the run's level (a mapper that does not
 * compile: its diagnostics); for a reply without a mapper, the reply
 * parser's words, proposed as a candidate with a failure so that it costs
 * its iteration like an invalid mapper.
 *
 * A step whose calls all failed (a server down, a timeout, a malformed or
 * oversized reply) costs no iteration: the optimizer prompts again, and
 * after three failed steps in a row, or at once when the server refuses
 * the request (an HTTP 4xx other than 408 and 429, which no retry
 * mends) or a stop ends a call, the ask fails with MAPOPT_EIO and the
 * reason. A model that only
 * repeats mappers already evaluated (the driver tells them as duplicates,
 * which cost no iteration) is done after three such steps in a row.
 *
 * Every call and every reply is kept for the driver, which records them
 * (tokens, latency, cost; the reply texts): each call as it ends (the
 * client's on_call hook and the driver's flush), the replies of a prompt
 * when it is over, before any is evaluated; when a run is resumed the
 * driver hands the recorded replies back, and the optimizer replays them
 * instead of asking the model again, so a resumed run continues exactly
 * where it stopped. Replies are redacted of the API key before anything
 * else reads them: a server that echoes the key into a reply cannot get
 * it into the database.
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <string.h>

#include "mapopt/guide.h"
#include "mapopt/sim.h"
#include "tune/tune.h"

enum { MAX_FAILED_STEPS = 3, MAX_REPEAT_STEPS = 3 };

static const char repeat_note[] =
    "This mapper repeats one evaluated before: write a different one.\n";
static const char cut_note[] =
    "The reply was cut off at the token limit: write a shorter reply.\n";

/* An attempt as the prompt shows it; the texts are the state's. */
typedef struct attempt {
  int64_t iteration; /* from 0, as the driver numbers them; -1: a repeat */
  char *mapper;      /* NULL: the reply held no mapper */
  double score;
  char *feedback; /* may be NULL */
  double elapsed_s;
  char *timing;     /* the critical path by cause, or NULL */
  uint64_t profile; /* 0: unknown */
} attempt;

/* The entries of the critical path's attribution shown per attempt. */
enum { TIMING_ENTRIES = 4 };

typedef struct llm_state {
  mapopt_llm_transport *own_transport; /* made here, or NULL */
  mapopt_llm_client *client;
  const char *key; /* the API key to redact from replies, or NULL */
  size_t max_mapper_bytes;
  size_t history;
  mapopt_machine_shape shape;
  mapopt_dsl_options dsl;
  const char *objective;
  mapopt__vec attempts; /* attempt: all of them, oldest first */
  attempt baseline;     /* the default mapper's evaluation */
  bool has_baseline;
  char *best_mapper, *best_feedback;
  double best_score;
  int64_t evaluated; /* new evaluations told */
  int64_t next_step;
  size_t replayed; /* replies of opt->replay proposed */
  bool replay_done;
  mapopt__vec cut; /* bool per candidate of the batch: an invalid mapper
                      from a reply cut at the token limit */
  bool batch_new;  /* the batch had a candidate that was no repeat */
  int repeat_steps;
  size_t step_calls;        /* calls of the step under way */
  mapopt_status call_error; /* of on_call, for the ask to return */
  bool stopped;             /* the last prompt ended by a stop */
} llm_state;

/* ---- proposing ----------------------------------------------------------- */

/* A copy of reply with every occurrence of key replaced, as a text; NULL
 * on ENOMEM. */
static char *redact(mapopt_ctx *ctx, const char *reply, size_t len,
                    const char *key, size_t *out_len) {
  size_t kl = strlen(key);
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  const char *p = reply, *end = reply + len, *hit;
  while ((hit = memmem(p, (size_t)(end - p), key, kl))) {
    mapopt__sb_putn(&sb, p, (size_t)(hit - p));
    mapopt__sb_puts(&sb, "[redacted]");
    p = hit + kl;
  }
  mapopt__sb_putn(&sb, p, (size_t)(end - p));
  return mapopt__text_take(&sb, out_len);
}

/* Whether a reply quotes the API key. */
static bool quotes_key(const llm_state *st, const char *reply, size_t len) {
  return st->key && *st->key && memmem(reply, len, st->key, strlen(st->key));
}

/* Parses a reply into *cand, the key redacted first. MAPOPT_ENOMEM. */
static mapopt_status parse_reply(mapopt_optimizer *opt, const char *reply,
                                 size_t len, bool truncated,
                                 mapopt_llm_candidate *cand) {
  llm_state *st = opt->state;
  char *clean = NULL;
  if (quotes_key(st, reply, len)) {
    if (!(clean = redact(opt->ctx, reply, len, st->key, &len)))
      return MAPOPT_ENOMEM;
    reply = clean;
  }
  mapopt_status s = mapopt_llm_reply_parse(
      opt->ctx, reply, len, truncated, st->max_mapper_bytes, &st->dsl, cand);
  mapopt_text_free(clean);
  return s;
}

/* Proposes sample `sample` of step `step`: a mapper (valid or not) as
 * itself, a reply without one as the reply with the parser's words. */
static mapopt_status propose(mapopt_optimizer *opt, int64_t step, size_t sample,
                             const mapopt_llm_candidate *c) {
  llm_state *st = opt->state;
  char note[96];
  snprintf(note, sizeof note, "llm step %lld sample %zu: %s",
           (long long)step + 1, sample + 1,
           mapopt_llm_verdict_name(c->verdict));
  bool mapper =
      c->verdict == MAPOPT_LLM_VALID || c->verdict == MAPOPT_LLM_INVALID;
  bool *cut = mapopt__vec_push(&st->cut, opt->ctx);
  if (!cut)
    return MAPOPT_ENOMEM;
  *cut = mapper && c->truncated && c->verdict == MAPOPT_LLM_INVALID;
  return mapper ? mapopt__propose_text(opt, c->mapper, NULL, note, NULL)
                : mapopt__propose_text(opt, c->reply, c->feedback, note, NULL);
}

/* Proposes the next recorded step of a resumed run; *done when none is
 * left. */
static mapopt_status replay_step(mapopt_optimizer *opt, bool *done) {
  llm_state *st = opt->state;
  const mapopt__llm_replay *r = opt->replay;
  *done = !r || st->replayed >= r->nreplies;
  if (*done)
    return MAPOPT_OK;
  int64_t step = r->replies[st->replayed].step;
  mapopt_status s = MAPOPT_OK;
  for (; s == MAPOPT_OK && st->replayed < r->nreplies &&
         r->replies[st->replayed].step == step;
       st->replayed++) {
    const mapopt__llm_reply_rec *rec = &r->replies[st->replayed];
    mapopt_llm_candidate c;
    s = parse_reply(opt, rec->reply, rec->reply_len, rec->truncated, &c);
    if (s == MAPOPT_OK) {
      s = propose(opt, step, rec->sample, &c);
      mapopt_llm_candidate_destroy(&c);
    }
  }
  return s;
}

/* The client's hook as each chat call ends: the call becomes a record (its
 * step, its place in the step), which the driver writes at once (the
 * flush), so that a kill while the optimizer prompts again loses no call.
 * A hook cannot fail: an error waits in call_error for the ask. */
static void on_call(void *ud, const mapopt_llm_call *call) {
  mapopt_optimizer *opt = ud;
  llm_state *st = opt->state;
  if (st->call_error != MAPOPT_OK)
    return;
  char *text = call->error_text ? mapopt__text_new(opt->ctx, call->error_text,
                                                   strlen(call->error_text))
                                : NULL;
  mapopt__llm_call_rec *rec = !call->error_text || text
                                  ? mapopt__vec_push(&opt->call_recs, opt->ctx)
                                  : NULL;
  if (!rec) {
    mapopt_text_free(text);
    st->call_error = MAPOPT_ENOMEM;
    return;
  }
  *rec = (mapopt__llm_call_rec){st->next_step, st->step_calls++, *call};
  rec->call.error_text = text;
  if (opt->flush)
    st->call_error = opt->flush(opt->flush_ud);
}

/* Proposes the step's candidates and keeps their replies for the driver. */
static mapopt_status take_candidates(mapopt_optimizer *opt, int64_t step,
                                     mapopt_llm_step_result *res) {
  llm_state *st = opt->state;
  for (size_t i = 0; i < res->ncandidates; i++) {
    /* The step's own parse, unless the reply must be redacted first. */
    mapopt_llm_candidate *c = &res->candidates[i], clean;
    if (quotes_key(st, c->reply, c->reply_len)) {
      mapopt_status s =
          parse_reply(opt, c->reply, c->reply_len, c->truncated, &clean);
      if (s != MAPOPT_OK)
        return s;
      clean.call = c->call;
      mapopt_llm_candidate_destroy(c);
      *c = clean;
    }
    mapopt_status s = propose(opt, step, i, c);
    mapopt__llm_reply_rec *rec =
        s == MAPOPT_OK ? mapopt__vec_push(&opt->reply_recs, opt->ctx) : NULL;
    if (!rec)
      return s == MAPOPT_OK ? MAPOPT_ENOMEM : s;
    *rec = (mapopt__llm_reply_rec){
        step, i, c->call, c->truncated, c->verdict, c->reply, c->reply_len};
    c->reply = NULL; /* now the record's */
  }
  return MAPOPT_OK;
}

/* Whether a failed call's error is one no new prompt mends: the server
 * refused the request itself (bad key, unknown model, bad request). */
static bool refused(const mapopt_llm_call *c) {
  return c->error == MAPOPT_LLM_ERR_HTTP && c->http_status >= 400 &&
         c->http_status < 500 && c->http_status != 408 && c->http_status != 429;
}

static mapopt_llm_attempt as_shown(const attempt *a) {
  return (mapopt_llm_attempt){a->iteration, a->mapper, a->score,  a->feedback,
                              a->elapsed_s, a->timing, a->profile};
}

/* One prompt to the model: its candidates, or the reason it got none in
 * *failed (then *stop when prompting again is useless: the server refused
 * it, or a stop was requested). */
static mapopt_status ask_model(mapopt_optimizer *opt, bool *failed,
                               bool *stop) {
  llm_state *st = opt->state;
  size_t n = st->attempts.len;
  mapopt_llm_attempt *shown =
      mapopt__malloc(opt->ctx, (n ? n : 1) * sizeof *shown);
  if (!shown)
    return MAPOPT_ENOMEM;
  for (size_t i = 0; i < n; i++)
    shown[i] = as_shown(&MAPOPT__VEC_AT(&st->attempts, attempt, i));
  mapopt_llm_attempt baseline = as_shown(&st->baseline);
  mapopt_llm_prompt_input in = {.run = mapopt__space_run(opt->space),
                                .machine = opt->space->machine,
                                .objective = st->objective,
                                .best_mapper = st->best_mapper,
                                .best_score = st->best_score,
                                .best_feedback = st->best_feedback,
                                .baseline = st->has_baseline ? &baseline : NULL,
                                .attempts = shown,
                                .nattempts = n,
                                .history = st->history,
                                .anonymous = true};
  mapopt_llm_step_result *res;
  st->step_calls = 0;
  st->call_error = MAPOPT_OK;
  mapopt_status s = mapopt_llm_step(st->client, &in, &st->dsl, &res);
  mapopt__free(opt->ctx, shown, (n ? n : 1) * sizeof *shown);
  if (s == MAPOPT_OK && st->call_error != MAPOPT_OK) {
    mapopt_llm_step_free(res);
    s = st->call_error;
  }
  if (s != MAPOPT_OK)
    return s;
  int64_t step = st->next_step++;
  *failed = res->ncandidates == 0;
  *stop = false;
  if (*failed && res->ncalls > 0) {
    const mapopt_llm_call *last = &res->calls[res->ncalls - 1];
    *stop = refused(last) || last->error == MAPOPT_LLM_ERR_INTERRUPTED;
    st->stopped = last->error == MAPOPT_LLM_ERR_INTERRUPTED;
    snprintf(opt->error, sizeof opt->error, "%s",
             last->error_text ? last->error_text : "no reply");
  }
  s = take_candidates(opt, step, res);
  mapopt_llm_step_free(res);
  return s;
}

static mapopt_status llm_plan(mapopt_optimizer *opt, int n) {
  (void)n; /* the client asks for the batch's samples */
  llm_state *st = opt->state;
  st->cut.len = 0;
  st->batch_new = false;
  if (st->repeat_steps >= MAX_REPEAT_STEPS)
    return MAPOPT_OK; /* done: the model only repeats itself */
  bool done;
  mapopt_status s = replay_step(opt, &done);
  if (s != MAPOPT_OK || !done)
    return s;
  if (!st->replay_done) {
    st->replay_done = true;
    if (opt->replay && opt->replay->next_step > st->next_step)
      st->next_step = opt->replay->next_step;
  }
  for (int tries = 1;; tries++) {
    bool failed, stop;
    s = ask_model(opt, &failed, &stop);
    if (s != MAPOPT_OK || !failed) {
      opt->error[0] = 0; /* an earlier prompt's failure was mended */
      return s;
    }
    if (stop || tries == MAX_FAILED_STEPS) {
      char last[sizeof opt->error];
      snprintf(last, sizeof last, "%s", opt->error);
      snprintf(opt->error, sizeof opt->error, "%s: %.440s",
               st->stopped ? "stopped"
               : stop      ? "the LLM server refused the prompt"
                           : "the LLM server failed 3 prompts in a row; the "
                             "last",
               last);
      return MAPOPT_EIO;
    }
  }
}

/* ---- telling ------------------------------------------------------------- */

static void attempt_clear(attempt *a) {
  mapopt_text_free(a->mapper);
  mapopt_text_free(a->feedback);
  mapopt_text_free(a->timing);
}

/* What the prompt shows of an evaluation besides its texts: the elapsed
 * time, and for a simulated run (the full feedback level) where its time
 * went and its profile's signature. MAPOPT_ENOMEM. */
static mapopt_status take_run(mapopt_ctx *ctx, const mapopt_evaluation *e,
                              attempt *a) {
  if (e->status != MAPOPT_TUNE_OK)
    return MAPOPT_OK;
  a->elapsed_s = e->elapsed_s;
  if (!e->result || e->duplicate)
    return MAPOPT_OK;
  a->profile = mapopt_guide_profile_signature(e->result);
  return mapopt_guide_critical_path_line(ctx, e->result, TIMING_ENTRIES,
                                         &a->timing);
}

/* The feedback the model reads for c: the parser's words for a reply
 * without a mapper, else the driver's, with the notes that apply. A text,
 * or NULL when there is none; *ok false on ENOMEM. */
static char *feedback_of(mapopt_ctx *ctx, const mapopt_candidate *c,
                         const mapopt_evaluation *e, bool cut, bool *ok) {
  const char *fb = c->failure ? c->failure : e->feedback;
  if (!fb && !cut && !e->duplicate)
    return NULL;
  char *t = mapopt__text_printf(ctx, "%s%s%s", e->duplicate ? repeat_note : "",
                                fb ? fb : "", cut ? cut_note : "");
  *ok = t != NULL;
  return t;
}

static mapopt_status llm_tell(mapopt_optimizer *opt, const mapopt_candidate *c,
                              const mapopt_evaluation *e) {
  llm_state *st = opt->state;
  size_t index = opt->told - 1; /* in the batch */
  bool cut = index < st->cut.len && MAPOPT__VEC_AT(&st->cut, bool, index);
  double score = e->status == MAPOPT_TUNE_OK ? e->score : 0;
  bool ok = true;
  attempt a = {.iteration = e->duplicate ? -1 : st->evaluated,
               .mapper = c->failure ? NULL
                                    : mapopt__text_new(opt->ctx, c->text,
                                                       strlen(c->text)),
               .score = score,
               .feedback = feedback_of(opt->ctx, c, e, cut, &ok)};
  if (!ok || (!c->failure && !a.mapper) ||
      take_run(opt->ctx, e, &a) != MAPOPT_OK) {
    attempt_clear(&a);
    return MAPOPT_ENOMEM;
  }
  if (!e->duplicate) {
    st->evaluated++;
    st->batch_new = true;
  }
  /* The best: a new evaluation that ran and beat every earlier one. */
  if (!e->duplicate && e->status == MAPOPT_TUNE_OK &&
      (!st->best_mapper || score > st->best_score)) {
    char *m = mapopt__text_new(opt->ctx, c->text, strlen(c->text));
    char *f = e->feedback
                  ? mapopt__text_new(opt->ctx, e->feedback, strlen(e->feedback))
                  : NULL;
    if (!m || (e->feedback && !f)) {
      mapopt_text_free(m);
      mapopt_text_free(f);
      attempt_clear(&a);
      return MAPOPT_ENOMEM;
    }
    mapopt_text_free(st->best_mapper);
    mapopt_text_free(st->best_feedback);
    st->best_mapper = m;
    st->best_feedback = f;
    st->best_score = score;
  }
  attempt *slot = mapopt__vec_push(&st->attempts, opt->ctx);
  if (!slot) {
    attempt_clear(&a);
    return MAPOPT_ENOMEM;
  }
  *slot = a;
  if (opt->told == opt->planned.len)
    st->repeat_steps = st->batch_new ? 0 : st->repeat_steps + 1;
  return MAPOPT_OK;
}

/* The default mapper's evaluation, told once before the first ask: shown
 * in every prompt as the baseline. */
static mapopt_status llm_baseline(mapopt_optimizer *opt, const char *text,
                                  const mapopt_evaluation *e) {
  llm_state *st = opt->state;
  attempt a = {.iteration = -1,
               .mapper = mapopt__text_new(opt->ctx, text, strlen(text)),
               .score = e->status == MAPOPT_TUNE_OK ? e->score : 0,
               .feedback = e->feedback ? mapopt__text_new(opt->ctx, e->feedback,
                                                          strlen(e->feedback))
                                       : NULL};
  if (!a.mapper || (e->feedback && !a.feedback) ||
      take_run(opt->ctx, e, &a) != MAPOPT_OK) {
    attempt_clear(&a);
    return MAPOPT_ENOMEM;
  }
  attempt_clear(&st->baseline);
  st->baseline = a;
  st->has_baseline = true;
  return MAPOPT_OK;
}

/* ---- life ---------------------------------------------------------------- */

static void llm_destroy(mapopt_optimizer *opt) {
  llm_state *st = opt->state;
  mapopt_llm_client_free(st->client);
  mapopt_llm_transport_free(st->own_transport);
  for (size_t i = 0; i < st->attempts.len; i++)
    attempt_clear(&MAPOPT__VEC_AT(&st->attempts, attempt, i));
  mapopt__vec_destroy(&st->attempts, opt->ctx);
  mapopt__vec_destroy(&st->cut, opt->ctx);
  attempt_clear(&st->baseline);
  mapopt_text_free(st->best_mapper);
  mapopt_text_free(st->best_feedback);
}

static mapopt_status llm_init(mapopt_optimizer *opt) {
  llm_state *st = opt->state;
  mapopt__vec_init(&st->attempts, sizeof(attempt));
  mapopt__vec_init(&st->cut, sizeof(bool));
  opt->baseline = llm_baseline;
  const mapopt_tune_llm *set = opt->opts.llm;
  if (!set)
    return MAPOPT_EINVAL;
  const mapopt_app_run *run = mapopt__space_run(opt->space);
  mapopt_llm_config cfg = set->client;
  cfg.samples = opt->batch;
  cfg.seed = opt->opts.seed;
  cfg.on_call = on_call;
  cfg.on_call_ud = opt;
  if (!cfg.stop)
    cfg.stop = opt->opts.stop;
  char err[256];
  if (mapopt_llm_config_check(&cfg, err, sizeof err) != MAPOPT_OK)
    return MAPOPT_EINVAL;
  st->key = set->client.api_key;
  st->max_mapper_bytes = cfg.max_mapper_bytes;
  st->history = set->history ? set->history : MAPOPT_LLM_DEFAULT_HISTORY;
  st->objective = !run->metric_gflops ? "throughput (1 / execution time in "
                                        "seconds)"
                  : run->per_node     ? "throughput in GFLOP/s per node"
                                      : "throughput in GFLOP/s";
  mapopt_sim_shape(opt->space->machine, run, &st->shape);
  st->dsl = (mapopt_dsl_options){.file = "mapper",
                                 .shape = &st->shape,
                                 .portable = !set->allow_unportable};
  mapopt_llm_transport *t = set->transport;
  if (!t) {
    mapopt_status s = mapopt_llm_curl_new(opt->ctx, &st->own_transport);
    if (s != MAPOPT_OK)
      return s;
    t = st->own_transport;
  }
  return mapopt_llm_client_new(opt->ctx, &cfg, t, &st->client, err, sizeof err);
}

const mapopt__optimizer_vt mapopt__opt_llm = {
    "llm", sizeof(llm_state), 1, llm_init, llm_plan, llm_tell, llm_destroy};
