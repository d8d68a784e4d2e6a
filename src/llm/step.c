/*
 * One step of the `llm` optimizer, everything the optimizer needs from a
 * model in one call: the prompt, as many chat calls as it takes to get the
 * configured number of samples, and a candidate per choice (extracted and
 * compiled, or the feedback that says why not), with the accounting of
 * every call. A failed call ends the step (except a refused "n", see
 * below); whatever was received before it is kept.
 */
#include <string.h>

#include "llm/llm.h"

/* A step result as the library allocates it: the public struct first, then
 * what mapopt_llm_step_free needs. */
typedef struct step_impl {
  mapopt_llm_step_result pub;
  mapopt_ctx *ctx;
  size_t cap; /* candidates allocated (the samples); calls: cap + 1 */
} step_impl;

void mapopt_llm_step_free(mapopt_llm_step_result *r) {
  if (!r)
    return;
  step_impl *impl = (step_impl *)r;
  mapopt_ctx *ctx = impl->ctx;
  size_t cap = impl->cap;
  for (size_t i = 0; i < r->ncandidates; i++)
    mapopt_llm_candidate_destroy(&r->candidates[i]);
  for (size_t i = 0; i < r->ncalls; i++)
    mapopt_text_free(r->calls[i].error_text);
  mapopt__free(ctx, r->candidates, cap * sizeof *r->candidates);
  mapopt__free(ctx, r->calls, (cap + 1) * sizeof *r->calls);
  mapopt__free(ctx, impl, sizeof *impl);
}

/* Moves a chat result's call record and candidates into the step. */
static mapopt_status take(mapopt_llm_client *c, mapopt_llm_chat_result *chat,
                          const mapopt_dsl_options *opts,
                          mapopt_llm_step_result *r) {
  size_t index = r->ncalls++;
  r->calls[index] = chat->call;
  chat->call.error_text = NULL; /* now owned by the step */
  r->prompt_tokens += chat->call.prompt_tokens;
  r->completion_tokens += chat->call.completion_tokens;
  r->latency_ms += chat->call.latency_ms;
  r->cost += chat->call.cost;
  for (size_t i = 0; i < chat->call.nchoices; i++) {
    const mapopt_llm_choice *ch = &chat->choices[i];
    mapopt_llm_candidate *cand = &r->candidates[r->ncandidates];
    mapopt_status st = mapopt_llm_reply_parse(
        mapopt_llm_client_ctx(c), ch->content, ch->len, ch->truncated,
        mapopt_llm_client_config(c)->max_mapper_bytes, opts, cand);
    if (st != MAPOPT_OK)
      return st;
    cand->call = index;
    r->ncandidates++;
  }
  return MAPOPT_OK;
}

mapopt_status mapopt_llm_step(mapopt_llm_client *c,
                              const mapopt_llm_prompt_input *in,
                              const mapopt_dsl_options *opts,
                              mapopt_llm_step_result **out) {
  if (!c || !in)
    return MAPOPT_EINVAL;
  mapopt_ctx *ctx = mapopt_llm_client_ctx(c);
  const mapopt_llm_config *cfg = mapopt_llm_client_config(c);
  mapopt_llm_prompt prompt;
  mapopt_status st = mapopt_llm_prompt_build(ctx, in, &prompt);
  if (st != MAPOPT_OK)
    return st;
  size_t cap = (size_t)cfg->samples;
  step_impl *impl = mapopt__calloc(ctx, 1, sizeof *impl);
  mapopt_llm_step_result *r = impl ? &impl->pub : NULL;
  if (r) {
    impl->ctx = ctx;
    impl->cap = cap;
    r->calls = mapopt__calloc(ctx, cap + 1, sizeof *r->calls);
    r->candidates = mapopt__calloc(ctx, cap, sizeof *r->candidates);
  }
  if (!r || !r->calls || !r->candidates) {
    mapopt_llm_step_free(r);
    mapopt_llm_prompt_destroy(&prompt);
    return MAPOPT_ENOMEM;
  }
  const mapopt_llm_message msgs[2] = {{"system", prompt.system},
                                      {"user", prompt.user}};
  /* At most one call per sample (and one refused "n"): a server that
   * answers n with fewer choices is asked again for the rest; one that
   * refuses n (400, as some local servers do) is asked one sample at a
   * time. */
  bool use_n = cfg->use_n;
  while (st == MAPOPT_OK && r->ncandidates < cap && r->ncalls < cap + 1) {
    int n = use_n ? (int)(cap - r->ncandidates) : 1;
    mapopt_llm_chat_result *chat;
    st = mapopt_llm_chat(c, msgs, 2, n, &chat);
    if (st != MAPOPT_OK)
      break;
    st = take(c, chat, opts, r);
    bool failed = chat->call.error != MAPOPT_LLM_ERR_NONE;
    bool refused_n = n > 1 && chat->call.error == MAPOPT_LLM_ERR_HTTP &&
                     chat->call.http_status == 400;
    mapopt_llm_chat_free(chat);
    if (refused_n)
      use_n = false;
    else if (failed)
      break;
  }
  mapopt_llm_prompt_destroy(&prompt);
  if (st != MAPOPT_OK) {
    mapopt_llm_step_free(r);
    return st;
  }
  *out = r;
  return MAPOPT_OK;
}
