/*
 * Internal interface of the chat module (mapopt/chat.h): the client's
 * state, which the chat call (client.c) keeps; the configuration's check
 * (config.c) and the transports (transport.c, curl.c) need only the
 * public types.
 */
#ifndef MAPOPT_SRC_CHAT_H
#define MAPOPT_SRC_CHAT_H

#include "core/core.h"
#include "mapopt/chat.h"

struct mapopt_llm_client {
  mapopt_ctx *ctx;
  mapopt_llm_config cfg; /* strings point to the copies below */
  char *base_url, *model, *api_key;
  char *url; /* {base}/chat/completions */
  char *auth_header;
  mapopt_llm_transport *transport;
  mapopt__rng rng; /* backoff jitter */
};

#endif /* MAPOPT_SRC_CHAT_H */
