/*
 * mapopt chat: the chat-completions client of mapopt llm (docs/llm.md),
 * which needs only core: the HTTP and chat-protocol half of asking a
 * model, usable without the simulator and the DSL.
 *
 * Two layers, each usable on its own:
 *  - a chat-completions client: `POST {base}/chat/completions` to any
 *    OpenAI-compatible server (llama.cpp, vLLM, Ollama, a hosted API), with
 *    a request timeout, retries with exponential backoff and seeded jitter
 *    on 429, 5xx, timeouts and connection errors (honouring Retry-After), a
 *    cap on the reply size, strict parsing of the reply, and per-call
 *    accounting (tokens, latency, cost);
 *  - transports behind a small vtable, Redis connection.h style: libcurl
 *    for real servers, and a replay transport that serves scripted replies
 *    and records the requests it got, for tests.
 * The prompt, the reply's mapper and the optimizer step are mapopt/llm.h's.
 *
 * Safety. The API key is sent only in the Authorization header of the
 * request handed to the transport. It never appears in an error text, a
 * diagnostic, a result, or a recorded request (the replay transport keeps
 * "Authorization: Bearer [redacted]"); server-supplied text that echoes it
 * is redacted too. Replies are untrusted text: size-capped, parsed, never
 * executed.
 *
 * Threads: a client and its transport are used by one thread at a time;
 * separate clients are independent.
 */
#ifndef MAPOPT_CHAT_H
#define MAPOPT_CHAT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/core.h"

#ifdef __cplusplus
extern "C" {
#endif
/* ---- configuration ------------------------------------------------------- */

/* Milliseconds to wait; the default sleeps (nanosleep). */
typedef void (*mapopt_llm_sleep_fn)(void *ud, int64_t ms);
/* A monotonic clock in milliseconds; the default is CLOCK_MONOTONIC. */
typedef int64_t (*mapopt_llm_clock_fn)(void *ud);
/* Looks up an environment variable (NULL when unset), like getenv. */
typedef const char *(*mapopt_llm_getenv_fn)(void *ud, const char *name);

struct mapopt_llm_call;
/* Called when a chat call has ended, with its accounting. */
typedef void (*mapopt_llm_call_fn)(void *ud, const struct mapopt_llm_call *c);

/*
 * What a client needs. Strings are borrowed: mapopt_llm_client_new copies
 * them. Defaults (mapopt_llm_config_init) are given in brackets.
 */
typedef struct mapopt_llm_config {
  /* The server's OpenAI-compatible root, e.g. "http://127.0.0.1:8080/v1";
   * "/chat/completions" is appended unless it is already there. [NULL:
   * required] */
  const char *base_url;
  const char *model;   /* [NULL: required] */
  const char *api_key; /* NULL or "": no Authorization header [NULL] */
  double temperature;  /* in [0, 2] [0.7] */
  int samples;         /* candidates per step, in [1, 64] [1] */
  /* Ask for the samples with the "n" field of one request; a server that
   * returns fewer choices gets further requests for the rest. false: one
   * request per sample. [true] */
  bool use_n;
  int64_t max_tokens;     /* completion tokens per choice; 0: not sent [4096] */
  int64_t timeout_ms;     /* per HTTP request, connection included [120000] */
  int max_retries;        /* retries after the first attempt, in [0, 20] [4] */
  int64_t backoff_ms;     /* delay before the first retry [1000] */
  int64_t backoff_max_ms; /* cap of the doubling delay [30000] */
  int64_t retry_after_max_ms; /* cap on a server's Retry-After [60000] */
  size_t max_reply_bytes;     /* HTTP reply body cap [1 MiB] */
  size_t max_mapper_bytes;    /* extracted mapper cap [64 KiB] */
  uint64_t seed;              /* seeds the backoff jitter [0] */
  /* Prices in currency units per million tokens, for the cost of a call;
   * 0: cost not computed (reported as 0). [0, 0] */
  double price_in, price_out;
  /* Injectable time, so tests neither wait nor depend on the wall clock.
   * NULL: the real ones. [NULL] */
  mapopt_llm_sleep_fn sleep;
  void *sleep_ud;
  mapopt_llm_clock_fn clock;
  void *clock_ud;
  /* Set (by a signal handler) to stop: a call in flight is abandoned
   * (within about a second, libcurl's progress interval), a wait before a
   * retry ends (within 50 ms with the real sleep), no request is sent
   * after it, and the call ends with MAPOPT_LLM_ERR_INTERRUPTED. NULL:
   * never. [NULL] */
  const volatile sig_atomic_t *stop;
  /* Called as each chat call ends (mapopt_llm_chat, and each call of
   * mapopt_llm_step), before the call returns: for a caller that records
   * every call the moment it is made. NULL: none. [NULL] */
  mapopt_llm_call_fn on_call;
  void *on_call_ud;
} mapopt_llm_config;

/* Fills cfg with the defaults above. */
MAPOPT_API void mapopt_llm_config_init(mapopt_llm_config *cfg);

/*
 * Sets base_url, model and api_key from the environment, where a variable
 * is set and not empty: MAPOPT_LLM_BASE_URL (else OPENAI_BASE_URL),
 * MAPOPT_LLM_MODEL, MAPOPT_LLM_API_KEY (else OPENAI_API_KEY). Other fields
 * are untouched, so the order init, from_env, then explicit settings (the
 * command-line flags) gives flags precedence over the environment. getenv_fn
 * may be NULL for the process environment; the strings are borrowed from
 * it.
 */
MAPOPT_API void mapopt_llm_config_from_env(mapopt_llm_config *cfg,
                                           mapopt_llm_getenv_fn getenv_fn,
                                           void *ud);

/*
 * Validates cfg. MAPOPT_EINVAL with a message in err (naming the variable
 * or field to set, never the key's value) for: no base_url, one not
 * starting with http:// or https://, or one with a space or a control
 * character; no model; an API key with a control character (a line break
 * would end the Authorization header and start another); a value out of
 * its range.
 */
MAPOPT_API mapopt_status mapopt_llm_config_check(const mapopt_llm_config *cfg,
                                                 char *err, size_t errlen);

/* ---- transports ---------------------------------------------------------- */

/* What one HTTP exchange came to, as far as the network is concerned. */
typedef enum mapopt_llm_net {
  MAPOPT_LLM_NET_OK,        /* an HTTP response arrived, whatever its status */
  MAPOPT_LLM_NET_CONNECT,   /* no connection, or it broke mid-reply */
  MAPOPT_LLM_NET_TIMEOUT,   /* no complete reply within timeout_ms */
  MAPOPT_LLM_NET_TOO_LARGE, /* the body passed max_bytes; reading stopped */
  MAPOPT_LLM_NET_FAILED,    /* anything else (bad URL, TLS, no script) */
  MAPOPT_LLM_NET_STOPPED    /* abandoned: the request's stop was set */
} mapopt_llm_net;

/* One request; everything is borrowed for the duration of the call. */
typedef struct mapopt_llm_request {
  const char *url;
  const char *const *headers; /* "Name: value" lines, without CR LF */
  size_t nheaders;
  const char *body;
  size_t body_len;
  int64_t timeout_ms;
  /* Set: abandon the request (MAPOPT_LLM_NET_STOPPED); NULL: never. */
  const volatile sig_atomic_t *stop;
} mapopt_llm_request;

/*
 * One response, owned by whoever sends the request (the client). A
 * transport fills it with
 * mapopt_llm_response_header and mapopt_llm_response_body, and sets net,
 * status and (for a failure) error.
 */
typedef struct mapopt_llm_response {
  mapopt_ctx *ctx;
  size_t max_bytes; /* body cap */
  mapopt_llm_net net;
  int status;    /* HTTP status; 0 when none arrived */
  char *headers; /* the final response's header lines, "Name: value\n" */
  size_t headers_len, headers_cap;
  char *body; /* NUL-terminated; may contain NUL bytes */
  size_t body_len, body_cap;
  char error[256]; /* the transport's reason when net is not OK */
} mapopt_llm_response;

/* Prepares an empty response whose body may hold max_bytes. */
MAPOPT_API void mapopt_llm_response_init(mapopt_llm_response *r,
                                         mapopt_ctx *ctx, size_t max_bytes);
/* Frees the response's buffers (the struct itself is the caller's). */
MAPOPT_API void mapopt_llm_response_destroy(mapopt_llm_response *r);

/*
 * Appends one header line (without CR LF; at most 64 KiB of headers are
 * kept, the rest dropped). A line starting with "HTTP/" begins a new
 * response (after "100 Continue" or a redirect) and clears the lines kept
 * so far. MAPOPT_ENOMEM when the copy fails.
 */
MAPOPT_API mapopt_status mapopt_llm_response_header(mapopt_llm_response *r,
                                                    const char *line, size_t n);
/*
 * Appends body bytes. Past max_bytes nothing more is kept, net becomes
 * MAPOPT_LLM_NET_TOO_LARGE and MAPOPT_ERANGE is returned: the transport
 * must stop reading. MAPOPT_ENOMEM when the buffer cannot grow.
 */
MAPOPT_API mapopt_status mapopt_llm_response_body(mapopt_llm_response *r,
                                                  const void *data, size_t n);

typedef struct mapopt_llm_transport mapopt_llm_transport;

/* The vtable of a transport. */
typedef struct mapopt_llm_transport_type {
  const char *name; /* "curl", "replay" */
  /*
   * Performs one HTTP POST. Returns MAPOPT_OK when resp->net tells what
   * happened (a response of any status, or a network failure with a
   * message in resp->error), MAPOPT_ENOMEM otherwise. Must stop reading
   * when mapopt_llm_response_body refuses more bytes.
   */
  mapopt_status (*send)(mapopt_llm_transport *t, const mapopt_llm_request *req,
                        mapopt_llm_response *resp);
  void (*free)(mapopt_llm_transport *t);
} mapopt_llm_transport_type;

/* The base of every transport: implementations embed it first. */
struct mapopt_llm_transport {
  const mapopt_llm_transport_type *type;
  mapopt_ctx *ctx;
};

/* Frees any transport (NULL is ignored). */
MAPOPT_API void mapopt_llm_transport_free(mapopt_llm_transport *t);

/*
 * The libcurl transport: HTTP and HTTPS only, no redirects, connection
 * reuse between requests, reading stopped at the body cap. MAPOPT_EIO when
 * libcurl cannot be initialized, MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_llm_curl_new(mapopt_ctx *ctx,
                                             mapopt_llm_transport **out);

/*
 * The replay transport: answers each request with the next scripted reply
 * and records the request. After the last reply every request fails with
 * MAPOPT_LLM_NET_FAILED "replay script exhausted".
 */
MAPOPT_API mapopt_status mapopt_llm_replay_new(mapopt_ctx *ctx,
                                               mapopt_llm_transport **out);
/*
 * Scripts a response: status, header lines (separated by '\n'; NULL for
 * none) and a body of body_len bytes, all copied. MAPOPT_EINVAL when t is
 * not a replay transport.
 */
MAPOPT_API mapopt_status mapopt_llm_replay_add(mapopt_llm_transport *t,
                                               int status, const char *headers,
                                               const char *body,
                                               size_t body_len);
/* Scripts a network failure (net is not MAPOPT_LLM_NET_OK) with a reason. */
MAPOPT_API mapopt_status mapopt_llm_replay_fail(mapopt_llm_transport *t,
                                                mapopt_llm_net net,
                                                const char *reason);

/* A request as the replay transport recorded it. */
typedef struct mapopt_llm_recorded {
  const char *url;
  const char *headers; /* "Name: value\n" lines; credentials redacted */
  const char *body;
  size_t body_len;
  int64_t timeout_ms;
} mapopt_llm_recorded;

/* The number of requests received, and request i (NULL past the end);
 * valid until the transport is freed. */
MAPOPT_API size_t mapopt_llm_replay_count(const mapopt_llm_transport *t);
MAPOPT_API const mapopt_llm_recorded *
mapopt_llm_replay_request(const mapopt_llm_transport *t, size_t i);

/* ---- the client ---------------------------------------------------------- */

typedef struct mapopt_llm_client mapopt_llm_client;

/*
 * Creates a client over transport, which is borrowed (free it after the
 * client). The configuration is copied. MAPOPT_EINVAL with the message of
 * mapopt_llm_config_check in err; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_llm_client_new(mapopt_ctx *ctx,
                                               const mapopt_llm_config *cfg,
                                               mapopt_llm_transport *transport,
                                               mapopt_llm_client **out,
                                               char *err, size_t errlen);
MAPOPT_API void mapopt_llm_client_free(mapopt_llm_client *c);
/* The endpoint the client posts to ("{base}/chat/completions"). */
MAPOPT_API const char *mapopt_llm_client_url(const mapopt_llm_client *c);

/* Why a call produced no choices. */
/* clang-format off */
#define MAPOPT_LLM_ERROR_LIST(X)                                               \
  X(NONE, "none")                                                              \
  X(CONNECT, "connection failed")                                              \
  X(TIMEOUT, "timed out")                                                      \
  X(TOO_LARGE, "reply too large")                                              \
  X(HTTP, "HTTP error")                                                        \
  X(REPLY, "malformed reply")                                                  \
  X(TRANSPORT, "transport failure")                                            \
  X(INTERRUPTED, "interrupted")
/* clang-format on */

typedef enum mapopt_llm_error {
#define MAPOPT_LLM_ERROR_ENUM(name, text) MAPOPT_LLM_ERR_##name,
  MAPOPT_LLM_ERROR_LIST(MAPOPT_LLM_ERROR_ENUM)
#undef MAPOPT_LLM_ERROR_ENUM
} mapopt_llm_error;

/* "TIMEOUT" for MAPOPT_LLM_ERR_TIMEOUT; "UNKNOWN" out of range. */
MAPOPT_API const char *mapopt_llm_error_name(mapopt_llm_error e);

/*
 * The accounting of one call: one chat request, retries included. Tokens
 * are the server's usage figures; latency runs from the first attempt to
 * the end of the last one, backoff waits included; cost is
 * (prompt x price_in + completion x price_out) / 10^6.
 */
typedef struct mapopt_llm_call {
  mapopt_llm_error error; /* INTERRUPTED: the config's stop was set */
  char *error_text;       /* NULL when error is NONE; never contains the key */
  int http_status;        /* of the last attempt; 0 when none answered */
  int attempts;           /* HTTP requests sent */
  int64_t waited_ms;
  int64_t latency_ms;
  int64_t prompt_tokens, completion_tokens;
  double cost;
  size_t nchoices;
} mapopt_llm_call;

/* One message of the conversation; borrowed. */
typedef struct mapopt_llm_message {
  const char *role; /* "system", "user", "assistant" */
  const char *content;
} mapopt_llm_message;

/* One choice of a reply: the model's text (untrusted; may contain NUL). */
typedef struct mapopt_llm_choice {
  char *content;
  size_t len;
  bool truncated; /* finish_reason "length": cut at max_tokens */
} mapopt_llm_choice;

typedef struct mapopt_llm_chat_result {
  mapopt_llm_call call;
  mapopt_llm_choice *choices; /* call.nchoices entries */
} mapopt_llm_chat_result;

/*
 * One chat call asking for n choices (the "n" field is sent when n > 1;
 * the server may return fewer, never more are kept). Network failures,
 * HTTP errors and malformed replies are not failures of this function:
 * they are described by (*out)->call.error and error_text, and the call
 * has no choices. Returns MAPOPT_OK with *out (free with
 * mapopt_llm_chat_free), MAPOPT_EINVAL for n outside [1, 64] or no
 * messages, MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_llm_chat(mapopt_llm_client *c,
                                         const mapopt_llm_message *msgs,
                                         size_t nmsgs, int n,
                                         mapopt_llm_chat_result **out);
/* Frees a chat result (NULL is ignored); it does not need its client. */
MAPOPT_API void mapopt_llm_chat_free(mapopt_llm_chat_result *r);

/* The client's context and its configuration (the copy it made; its
 * strings are the client's), for a layer built on the client. */
MAPOPT_API mapopt_ctx *mapopt_llm_client_ctx(const mapopt_llm_client *c);
MAPOPT_API const mapopt_llm_config *
mapopt_llm_client_config(const mapopt_llm_client *c);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_CHAT_H */
