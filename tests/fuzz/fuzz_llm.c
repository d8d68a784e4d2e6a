/*
 * libFuzzer target: arbitrary bytes as the body of a server's 200 reply to
 * a chat call asking for two choices, each choice then taken through the
 * mapper extraction and the DSL compiler. Every input must end in choices
 * or in an error text; a valid candidate has a canonical form; and no
 * error text or feedback may contain the API key, even when the body is
 * full of it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapopt/llm.h"

#include "harness.h"

#define KEY "sk-fuzz-KEY"

const size_t fuzz_max_input = 1 << 16;

static void no_sleep(void *ud, int64_t ms) {
  (void)ud;
  (void)ms;
}

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *diags, const uint8_t *data,
                 size_t size) {
  (void)diags;
  mapopt_llm_transport *t;
  if (mapopt_llm_replay_new(ctx, &t) != MAPOPT_OK)
    return;
  mapopt_llm_config cfg;
  mapopt_llm_config_init(&cfg);
  cfg.base_url = "http://fuzz.test/v1";
  cfg.model = "m";
  cfg.api_key = KEY;
  cfg.sleep = no_sleep;
  cfg.max_reply_bytes = 1 << 16;
  mapopt_llm_client *c = NULL;
  char err[128];
  mapopt_llm_chat_result *r = NULL;
  const mapopt_llm_message msg = {"user", "u"};
  if (mapopt_llm_replay_add(t, 200, NULL, (const char *)data, size) !=
          MAPOPT_OK ||
      mapopt_llm_client_new(ctx, &cfg, t, &c, err, sizeof err) != MAPOPT_OK ||
      mapopt_llm_chat(c, &msg, 1, 2, &r) != MAPOPT_OK)
    goto done;
  if (r->call.error == MAPOPT_LLM_ERR_NONE) {
    if (r->call.nchoices < 1 || r->call.nchoices > 2 || r->call.error_text)
      abort();
  } else if (!r->call.error_text || strstr(r->call.error_text, KEY) ||
             r->call.nchoices) {
    abort();
  }
  for (size_t i = 0; i < r->call.nchoices; i++) {
    mapopt_llm_candidate cand;
    if (mapopt_llm_reply_parse(ctx, r->choices[i].content, r->choices[i].len,
                               r->choices[i].truncated, 4096, NULL,
                               &cand) != MAPOPT_OK)
      continue;
    if (!cand.feedback ||
        (cand.verdict == MAPOPT_LLM_VALID) != (cand.canonical != NULL) ||
        (cand.verdict == MAPOPT_LLM_NO_MAPPER) != (cand.mapper == NULL))
      abort();
    mapopt_llm_candidate_destroy(&cand);
  }
done:
  mapopt_llm_chat_free(r);
  mapopt_llm_client_free(c);
  mapopt_llm_transport_free(t);
}
