/*
 * The client's configuration: defaults, the environment variables, and
 * validation. The environment only fills the server, model and key, so
 * that explicit settings (command-line flags) applied afterwards win.
 * Messages name what to set, never the key's value.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/chat.h"

void mapopt_llm_config_init(mapopt_llm_config *cfg) {
  *cfg = (mapopt_llm_config){
      .temperature = 0.7,
      .samples = 1,
      .use_n = true,
      .max_tokens = 4096,
      .timeout_ms = 120000,
      .max_retries = 4,
      .backoff_ms = 1000,
      .backoff_max_ms = 30000,
      .retry_after_max_ms = 60000,
      .max_reply_bytes = (size_t)1 << 20,
      .max_mapper_bytes = (size_t)64 << 10,
  };
}

static const char *process_getenv(void *ud, const char *name) {
  (void)ud;
  return getenv(name);
}

/* The first of the variables that is set and not empty, or NULL. */
static const char *first_set(mapopt_llm_getenv_fn get, void *ud, const char *a,
                             const char *b) {
  const char *v = get(ud, a);
  if ((!v || !*v) && b)
    v = get(ud, b);
  return v && *v ? v : NULL;
}

void mapopt_llm_config_from_env(mapopt_llm_config *cfg,
                                mapopt_llm_getenv_fn getenv_fn, void *ud) {
  if (!getenv_fn)
    getenv_fn = process_getenv;
  const char *v;
  if ((v = first_set(getenv_fn, ud, "MAPOPT_LLM_BASE_URL", "OPENAI_BASE_URL")))
    cfg->base_url = v;
  if ((v = first_set(getenv_fn, ud, "MAPOPT_LLM_MODEL", NULL)))
    cfg->model = v;
  if ((v = first_set(getenv_fn, ud, "MAPOPT_LLM_API_KEY", "OPENAI_API_KEY")))
    cfg->api_key = v;
}

/* Whether s has a space (' ' when spaces count) or a control character. */
static bool has_control(const char *s, bool spaces) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch < 0x20 || ch == 0x7f || (spaces && ch == ' '))
      return true;
  }
  return false;
}

static mapopt_status bad(char *err, size_t errlen, const char *msg) {
  if (errlen)
    snprintf(err, errlen, "%s", msg);
  return MAPOPT_EINVAL;
}

mapopt_status mapopt_llm_config_check(const mapopt_llm_config *cfg, char *err,
                                      size_t errlen) {
  if (!cfg->base_url || !*cfg->base_url)
    return bad(err, errlen,
               "no LLM server: set MAPOPT_LLM_BASE_URL (or OPENAI_BASE_URL), "
               "e.g. http://127.0.0.1:8080/v1");
  if (strncmp(cfg->base_url, "http://", 7) &&
      strncmp(cfg->base_url, "https://", 8))
    return bad(err, errlen,
               "the LLM server URL (MAPOPT_LLM_BASE_URL) must start with "
               "http:// or https://");
  if (has_control(cfg->base_url, true))
    return bad(err, errlen,
               "the LLM server URL (MAPOPT_LLM_BASE_URL) has a space or a "
               "control character");
  /* A line break would end the Authorization header and start another. */
  if (cfg->api_key && has_control(cfg->api_key, false))
    return bad(err, errlen,
               "the API key (MAPOPT_LLM_API_KEY) has a control character (a "
               "line break, a tab): give the key alone");
  if (!cfg->model || !*cfg->model)
    return bad(err, errlen, "no model: set MAPOPT_LLM_MODEL");
  if (!(cfg->temperature >= 0 && cfg->temperature <= 2))
    return bad(err, errlen, "temperature must be in [0, 2]");
  if (cfg->samples < 1 || cfg->samples > 64)
    return bad(err, errlen, "samples must be in [1, 64]");
  if (cfg->max_tokens < 0)
    return bad(err, errlen, "max_tokens must be at least 0");
  if (cfg->timeout_ms < 1)
    return bad(err, errlen, "the timeout must be at least 1 ms");
  if (cfg->max_retries < 0 || cfg->max_retries > 20)
    return bad(err, errlen, "retries must be in [0, 20]");
  if (cfg->backoff_ms < 0 || cfg->backoff_max_ms < cfg->backoff_ms ||
      cfg->retry_after_max_ms < 0)
    return bad(err, errlen,
               "backoff delays must be at least 0, the cap at least the "
               "first delay");
  if (cfg->max_reply_bytes < 1024 || cfg->max_mapper_bytes < 1)
    return bad(err, errlen,
               "the reply cap must be at least 1024 bytes and the mapper "
               "cap at least 1");
  if (!(cfg->price_in >= 0) || !(cfg->price_out >= 0))
    return bad(err, errlen, "prices must be at least 0");
  return MAPOPT_OK;
}
