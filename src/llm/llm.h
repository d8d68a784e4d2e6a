/*
 * Internal interface of the llm module (mapopt/llm.h): the client's state,
 * shared by the chat call (client.c) and the step (step.c), and the
 * texts compiled into the library (the .md files of src/llm/prompt, by
 * cmake/embed.cmake).
 */
#ifndef MAPOPT_SRC_LLM_H
#define MAPOPT_SRC_LLM_H

#include "core/core.h"
#include "mapopt/llm.h"

struct mapopt_llm_client {
  mapopt_ctx *ctx;
  mapopt_llm_config cfg; /* strings point to the copies below */
  char *base_url, *model, *api_key;
  char *url; /* {base}/chat/completions */
  char *auth_header;
  mapopt_llm_transport *transport;
  mapopt__rng rng; /* backoff jitter */
};

/* The embedded texts: "dsl_reference" (the system message's reference). */
extern const mapopt__embedded mapopt__llm_texts[];
extern const size_t mapopt__llm_texts_count;
extern const char *const mapopt__llm_texts_names[];

#endif /* MAPOPT_SRC_LLM_H */
