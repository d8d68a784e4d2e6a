/*
 * The chat-completions client: builds the request with jansson, sends it
 * through the transport, retries what may succeed later, parses the reply
 * strictly, and accounts for the call.
 *
 * Retried (up to max_retries times): connection failures, timeouts, HTTP
 * 408, 429 and 5xx. The wait before retry r (0-based) is backoff_ms x 2^r,
 * capped at backoff_max_ms, of which the upper half is jitter drawn from
 * the client's seeded RNG (so runs repeat); a Retry-After header in
 * seconds replaces it, capped at retry_after_max_ms. Not retried: other
 * HTTP errors, a reply over the size cap, a malformed reply (the same
 * request would most likely get the same answer), transport failures.
 *
 * Every error text goes through sanitize(): server text is untrusted and
 * could echo the key, so the key is replaced wherever it appears, control
 * characters are flattened and the length is capped.
 *
 * A stop (cfg.stop) is looked at before every attempt and through every
 * wait: the real sleep waits in slices of 50 ms, since a signal that only
 * interrupts nanosleep would be waited through; the transport abandons a
 * request in flight. Token counts above MAX_TOKENS per call are a
 * malformed reply: no call spends that many, and sums of such counts
 * would overflow.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/json.h"
#include "chat/chat.h"

#define MAX_CHOICES 64
#define MAX_SERVER_TEXT 300
#define MAX_ERROR_TEXT 2048
#define MAX_TOKENS 1000000000 /* per call and kind: prompt, completion */
#define SLEEP_SLICE_MS 50

static const char *const error_names[] = {
#define MAPOPT_LLM_ERROR_NAME(name, text) #name,
    MAPOPT_LLM_ERROR_LIST(MAPOPT_LLM_ERROR_NAME)
#undef MAPOPT_LLM_ERROR_NAME
};

const char *mapopt_llm_error_name(mapopt_llm_error e) {
  if ((unsigned)e >= sizeof error_names / sizeof *error_names)
    return "UNKNOWN";
  return error_names[e];
}

/* ---- time ---------------------------------------------------------------- */

static bool stopped(const mapopt_llm_client *c) {
  return c->cfg.stop && *c->cfg.stop;
}

/* Sleeps ms, in slices, until a stop (ud is the client). */
static void real_sleep(void *ud, int64_t ms) {
  const mapopt_llm_client *c = ud;
  while (ms > 0 && !stopped(c)) {
    int64_t slice = ms < SLEEP_SLICE_MS ? ms : SLEEP_SLICE_MS;
    struct timespec ts = {0, (long)slice * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR && !stopped(c))
      ;
    ms -= slice;
  }
}

static int64_t real_clock(void *ud) {
  (void)ud;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the client ---------------------------------------------------------- */

void mapopt_llm_client_free(mapopt_llm_client *c) {
  if (!c)
    return;
  mapopt_text_free(c->base_url);
  mapopt_text_free(c->model);
  mapopt_text_free(c->api_key);
  mapopt_text_free(c->url);
  mapopt_text_free(c->auth_header);
  mapopt__free(c->ctx, c, sizeof *c);
}

mapopt_status mapopt_llm_client_new(mapopt_ctx *ctx,
                                    const mapopt_llm_config *cfg,
                                    mapopt_llm_transport *transport,
                                    mapopt_llm_client **out, char *err,
                                    size_t errlen) {
  mapopt_status st = mapopt_llm_config_check(cfg, err, errlen);
  if (st != MAPOPT_OK)
    return st;
  if (!transport) {
    if (errlen)
      snprintf(err, errlen, "no transport");
    return MAPOPT_EINVAL;
  }
  mapopt_llm_client *c = mapopt__calloc(ctx, 1, sizeof *c);
  if (!c)
    return MAPOPT_ENOMEM;
  c->ctx = ctx;
  c->cfg = *cfg;
  c->transport = transport;
  /* The base without trailing slashes; the endpoint appended unless the
   * user already gave it. */
  size_t blen = strlen(cfg->base_url);
  while (blen > 0 && cfg->base_url[blen - 1] == '/')
    blen--;
  static const char endpoint[] = "/chat/completions";
  size_t elen = sizeof endpoint - 1;
  bool has_endpoint =
      blen >= elen && !memcmp(cfg->base_url + blen - elen, endpoint, elen);
  c->base_url = mapopt__text_new(ctx, cfg->base_url, blen);
  c->model = mapopt__text_new(ctx, cfg->model, strlen(cfg->model));
  c->url = c->base_url ? mapopt__text_printf(ctx, "%s%s", c->base_url,
                                             has_endpoint ? "" : endpoint)
                       : NULL;
  bool ok = c->base_url && c->model && c->url;
  if (ok && cfg->api_key && *cfg->api_key) {
    c->api_key = mapopt__text_new(ctx, cfg->api_key, strlen(cfg->api_key));
    c->auth_header =
        c->api_key
            ? mapopt__text_printf(ctx, "Authorization: Bearer %s", c->api_key)
            : NULL;
    ok = c->api_key && c->auth_header;
  }
  if (!ok) {
    mapopt_llm_client_free(c);
    return MAPOPT_ENOMEM;
  }
  c->cfg.base_url = c->base_url;
  c->cfg.model = c->model;
  c->cfg.api_key = c->api_key;
  if (!c->cfg.sleep) {
    c->cfg.sleep = real_sleep;
    c->cfg.sleep_ud = c;
  }
  if (!c->cfg.clock)
    c->cfg.clock = real_clock;
  mapopt__rng_seed(&c->rng, cfg->seed);
  *out = c;
  return MAPOPT_OK;
}

const char *mapopt_llm_client_url(const mapopt_llm_client *c) {
  return c->url;
}

mapopt_ctx *mapopt_llm_client_ctx(const mapopt_llm_client *c) {
  return c->ctx;
}

const mapopt_llm_config *mapopt_llm_client_config(const mapopt_llm_client *c) {
  return &c->cfg;
}

/* ---- safe text ----------------------------------------------------------- */

/*
 * Appends text (len bytes) to sb as one safe line: control characters and
 * NUL become spaces, every occurrence of key (when set) becomes
 * "[redacted]", and at most max bytes of text are kept ("..." marks the
 * cut).
 */
static void sanitize(mapopt__strbuf *sb, const char *text, size_t len,
                     size_t max, const char *key) {
  size_t klen = key ? strlen(key) : 0;
  size_t kept = 0;
  for (size_t i = 0; i < len;) {
    if (kept >= max) {
      mapopt__sb_puts(sb, "...");
      return;
    }
    if (klen && len - i >= klen && !memcmp(text + i, key, klen)) {
      mapopt__sb_puts(sb, "[redacted]");
      i += klen;
      kept += klen;
      continue;
    }
    unsigned char ch = (unsigned char)text[i++];
    mapopt__sb_putc(sb, ch < 0x20 || ch == 0x7f ? ' ' : (char)ch);
    kept++;
  }
}

/* Sets the call's error: the formatted text, sanitized. */
static mapopt_status fail(mapopt_llm_client *c, mapopt_llm_call *call,
                          mapopt_llm_error e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static mapopt_status fail(mapopt_llm_client *c, mapopt_llm_call *call,
                          mapopt_llm_error e, const char *fmt, ...) {
  /* Formatted in full first: a cut made before redaction could leave part
   * of the key in the text. */
  mapopt__strbuf raw, sb;
  mapopt__sb_init(&raw, c->ctx);
  mapopt__sb_init(&sb, c->ctx);
  va_list ap;
  va_start(ap, fmt);
  mapopt__sb_vprintf(&raw, fmt, ap);
  va_end(ap);
  if (!raw.failed)
    sanitize(&sb, raw.data, raw.len, MAX_ERROR_TEXT, c->api_key);
  char *text = raw.failed ? NULL : mapopt__text_take(&sb, NULL);
  mapopt__sb_destroy(&raw);
  mapopt__sb_destroy(&sb);
  if (!text)
    return MAPOPT_ENOMEM;
  call->error = e;
  call->error_text = text;
  return MAPOPT_OK;
}

/* ---- the request --------------------------------------------------------- */

/* The request body (malloc'ed by jansson), or NULL on ENOMEM. */
static char *request_body(const mapopt_llm_client *c,
                          const mapopt_llm_message *msgs, size_t nmsgs, int n) {
  json_t *root = json_object();
  json_t *arr = json_array();
  bool ok = root && arr &&
            !json_object_set_new(root, "model", mapopt__json_text(c->model)) &&
            !json_object_set(root, "messages", arr);
  for (size_t i = 0; ok && i < nmsgs; i++) {
    json_t *m = json_object();
    ok = m &&
         !json_object_set_new(m, "role", mapopt__json_text(msgs[i].role)) &&
         !json_object_set_new(m, "content",
                              mapopt__json_text(msgs[i].content)) &&
         !json_array_append(arr, m);
    json_decref(m);
  }
  ok = ok &&
       !json_object_set_new(root, "temperature", json_real(c->cfg.temperature));
  if (ok && c->cfg.max_tokens > 0)
    ok = !json_object_set_new(root, "max_tokens",
                              json_integer(c->cfg.max_tokens));
  if (ok && n > 1)
    ok = !json_object_set_new(root, "n", json_integer(n));
  char *body =
      ok ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
  json_decref(arr);
  json_decref(root);
  return body;
}

/* ---- the response -------------------------------------------------------- */

/* Retry-After in milliseconds (seconds form only), or -1. */
static int64_t retry_after_ms(const mapopt_llm_response *r) {
  static const char name[] = "retry-after:";
  for (const char *h = r->headers; h && *h;) {
    const char *nl = strchr(h, '\n');
    if (!strncasecmp(h, name, sizeof name - 1)) {
      const char *v = h + sizeof name - 1;
      while (*v == ' ' || *v == '\t')
        v++;
      int64_t s = 0;
      const char *d = v;
      for (; *d >= '0' && *d <= '9'; d++)
        s = s < 100000000 ? s * 10 + (*d - '0') : s; /* saturates */
      while (*d == ' ' || *d == '\t' || *d == '\r')
        d++;
      if (d > v && (*d == '\n' || *d == '\0'))
        return s * 1000;
      return -1; /* the HTTP-date form: fall back to our backoff */
    }
    h = nl ? nl + 1 : NULL;
  }
  return -1;
}

static bool retryable_status(int status) {
  return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

/* What a server said in an error body: error.message, error (a string) or
 * message, else the body itself; sanitized into sb. ENOMEM or OK. */
static mapopt_status server_says(mapopt_llm_client *c,
                                 const mapopt_llm_response *r,
                                 mapopt__strbuf *sb) {
  mapopt__arena arena;
  mapopt__arena_init(&arena, c->ctx);
  mapopt_diags *scratch = NULL;
  mapopt__json *root = NULL;
  const char *text = r->body ? r->body : "";
  size_t len = r->body_len;
  mapopt_status st = mapopt_diags_new(c->ctx, &scratch);
  if (st == MAPOPT_OK)
    st = mapopt__json_parse(&arena, "reply", text, len, scratch, &root);
  if (st == MAPOPT_OK) {
    const mapopt__json *e = mapopt__json_get(root, "error");
    const mapopt__json *m = e && e->type == MAPOPT_JSON_OBJECT
                                ? mapopt__json_get(e, "message")
                            : e ? e
                                : mapopt__json_get(root, "message");
    if (m && m->type == MAPOPT_JSON_STRING) {
      text = m->u.str.s;
      len = m->u.str.len;
    }
  }
  if (st != MAPOPT_ENOMEM) {
    st = MAPOPT_OK; /* a body that is not JSON is shown as it is */
    sanitize(sb, text, len, MAX_SERVER_TEXT, c->api_key);
  }
  mapopt_diags_free(scratch);
  mapopt__arena_destroy(&arena);
  return st;
}

/* The error text for an HTTP error status. */
static mapopt_status http_fail(mapopt_llm_client *c, mapopt_llm_call *call,
                               const mapopt_llm_response *r, const char *tail) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, c->ctx);
  mapopt_status st = server_says(c, r, &sb);
  st = st != MAPOPT_OK || sb.failed
           ? MAPOPT_ENOMEM
           : fail(c, call, MAPOPT_LLM_ERR_HTTP, "HTTP %d from %s%s: %s",
                  r->status, c->url, tail, sb.len ? sb.data : "(empty body)");
  mapopt__sb_destroy(&sb);
  return st;
}

/*
 * Parses a 2xx body into choices and usage. A malformed reply sets the
 * call's REPLY error, naming the first problem with its position in the
 * body ("reply:1:57: ...").
 */
static mapopt_status parse_reply(mapopt_llm_client *c,
                                 const mapopt_llm_response *r, int n,
                                 mapopt_llm_chat_result *res) {
  mapopt__arena arena;
  mapopt__arena_init(&arena, c->ctx);
  mapopt_diags *d;
  mapopt_status st = mapopt_diags_new(c->ctx, &d);
  if (st != MAPOPT_OK) {
    mapopt__arena_destroy(&arena);
    return st;
  }
  mapopt__json *root = NULL;
  mapopt__jr jr;
  mapopt__jr_init(&jr, "reply", d);
  st = mapopt__json_parse(&arena, "reply", r->body ? r->body : "", r->body_len,
                          d, &root);
  if (st == MAPOPT_EINVAL)
    jr.status = MAPOPT_EINVAL;
  else if (st != MAPOPT_OK)
    goto done;
  const mapopt__json *choices = NULL, *usage = NULL;
  if (jr.status == MAPOPT_OK && root->type != MAPOPT_JSON_OBJECT)
    mapopt__jr_error(&jr, root, "the reply must be an object");
  if (jr.status == MAPOPT_OK) {
    const mapopt__json *e = mapopt__json_get(root, "error");
    if (e && !mapopt__json_get(root, "choices")) {
      mapopt__strbuf sb;
      mapopt__sb_init(&sb, c->ctx);
      if (server_says(c, r, &sb) != MAPOPT_OK || sb.failed)
        jr.status = MAPOPT_ENOMEM;
      else
        mapopt__jr_error(&jr, e, "the server reported an error: %s",
                         sb.data ? sb.data : "");
      mapopt__sb_destroy(&sb);
    }
  }
  if (jr.status == MAPOPT_OK)
    choices = mapopt__jr_array(&jr, root, "choices", "the reply", true);
  if (jr.status == MAPOPT_OK && choices->u.arr.n == 0)
    mapopt__jr_error(&jr, choices, "\"choices\" is empty");
  if (jr.status == MAPOPT_OK)
    usage = mapopt__jr_child(&jr, root, "usage", "the reply", true);
  if (jr.status == MAPOPT_OK)
    mapopt__jr_int(&jr, usage, "prompt_tokens", "\"usage\"", true, 0,
                   MAX_TOKENS, &res->call.prompt_tokens);
  if (jr.status == MAPOPT_OK)
    mapopt__jr_int(&jr, usage, "completion_tokens", "\"usage\"", true, 0,
                   MAX_TOKENS, &res->call.completion_tokens);
  size_t keep = 0;
  if (jr.status == MAPOPT_OK)
    keep = choices->u.arr.n < (size_t)n ? choices->u.arr.n : (size_t)n;
  for (size_t i = 0; jr.status == MAPOPT_OK && i < keep; i++) {
    char what[48];
    snprintf(what, sizeof what, "choices[%zu]", i);
    const mapopt__json *ch = choices->u.arr.items[i];
    if (ch->type != MAPOPT_JSON_OBJECT) {
      mapopt__jr_error(&jr, ch, "%s must be an object", what);
      break;
    }
    const mapopt__json *msg = mapopt__jr_child(&jr, ch, "message", what, true);
    if (!msg)
      break;
    snprintf(what, sizeof what, "choices[%zu].message", i);
    const mapopt__json *content = mapopt__json_get(msg, "content");
    if (!content || content->type != MAPOPT_JSON_STRING) {
      mapopt__jr_error(&jr, content ? content : msg,
                       "%s.content is %s: the model gave no text", what,
                       content ? mapopt__json_type_name(content->type)
                               : "missing");
      break;
    }
    /* finish_reason is informative: whatever it holds, never fatal. */
    const mapopt__json *finish = mapopt__json_get(ch, "finish_reason");
    mapopt_llm_choice *out = &res->choices[i];
    out->content =
        mapopt__text_new(c->ctx, content->u.str.s, content->u.str.len);
    if (!out->content) {
      st = MAPOPT_ENOMEM;
      goto done;
    }
    out->len = content->u.str.len;
    out->truncated = finish && finish->type == MAPOPT_JSON_STRING &&
                     !strcmp(finish->u.str.s, "length");
    res->call.nchoices = i + 1;
  }
  st = MAPOPT_OK;
  if (jr.status == MAPOPT_ENOMEM) {
    st = MAPOPT_ENOMEM;
  } else if (jr.status != MAPOPT_OK) {
    /* The first error whole: fail() redacts, then cuts. */
    mapopt__strbuf first;
    mapopt__sb_init(&first, c->ctx);
    for (size_t i = 0; i < mapopt_diags_count(d); i++)
      if (mapopt_diags_get(d, i)->severity >= MAPOPT_SEV_ERROR) {
        mapopt__sb_diag(&first, mapopt_diags_get(d, i));
        break;
      }
    st = first.failed ? MAPOPT_ENOMEM
                      : fail(c, &res->call, MAPOPT_LLM_ERR_REPLY,
                             "the reply from %s is not a chat completion: %s",
                             c->url, first.data ? first.data : "");
    mapopt__sb_destroy(&first);
  }
done:
  if (res->call.error != MAPOPT_LLM_ERR_NONE || st != MAPOPT_OK) {
    /* All or nothing: a call with an error has no choices. */
    for (size_t i = 0; i < res->call.nchoices; i++)
      mapopt_text_free(res->choices[i].content);
    res->call.nchoices = 0;
    res->call.prompt_tokens = res->call.completion_tokens = 0;
  }
  mapopt_diags_free(d);
  mapopt__arena_destroy(&arena);
  return st;
}

/* ---- the call ------------------------------------------------------------ */

/* The wait before retry number `retry` (0-based) when the server gave no
 * Retry-After: exponential, capped, its upper half jittered. */
static int64_t backoff(mapopt_llm_client *c, int retry) {
  int64_t d = c->cfg.backoff_ms;
  for (int i = 0; i < retry && d < c->cfg.backoff_max_ms; i++)
    d *= 2;
  if (d > c->cfg.backoff_max_ms)
    d = c->cfg.backoff_max_ms;
  int64_t half = d / 2;
  return d - half + (int64_t)mapopt__rng_below(&c->rng, (uint64_t)half + 1);
}

/* The call's end by a stop: after how many attempts. */
static mapopt_status fail_stopped(mapopt_llm_client *c, mapopt_llm_call *call) {
  if (call->attempts == 0)
    return fail(c, call, MAPOPT_LLM_ERR_INTERRUPTED,
                "the call to %s was stopped before it was sent", c->url);
  return fail(c, call, MAPOPT_LLM_ERR_INTERRUPTED,
              "the call to %s was stopped after %d attempt%s", c->url,
              call->attempts, call->attempts > 1 ? "s" : "");
}

/* A chat result as the library allocates it: the public struct first, then
 * what mapopt_llm_chat_free needs. */
typedef struct chat_impl {
  mapopt_llm_chat_result pub;
  mapopt_ctx *ctx;
} chat_impl;

void mapopt_llm_chat_free(mapopt_llm_chat_result *r) {
  if (!r)
    return;
  chat_impl *impl = (chat_impl *)r;
  for (size_t i = 0; i < r->call.nchoices; i++)
    mapopt_text_free(r->choices[i].content);
  mapopt__free(impl->ctx, r->choices, MAX_CHOICES * sizeof *r->choices);
  mapopt_text_free(r->call.error_text);
  mapopt__free(impl->ctx, impl, sizeof *impl);
}

/*
 * Sends until a final outcome: a parsed reply, or an error that is not
 * retried, or the last retry spent. Returns ENOMEM or OK.
 */
static mapopt_status exchange(mapopt_llm_client *c, const char *body, int n,
                              mapopt_llm_chat_result *res) {
  mapopt_llm_call *call = &res->call;
  const char *headers[2] = {"Content-Type: application/json", c->auth_header};
  mapopt_llm_request req = {c->url,     headers,      c->auth_header ? 2 : 1,
                            body,       strlen(body), c->cfg.timeout_ms,
                            c->cfg.stop};
  for (int retry = 0;; retry++) {
    if (stopped(c))
      return fail_stopped(c, call);
    mapopt_llm_response r;
    mapopt_llm_response_init(&r, c->ctx, c->cfg.max_reply_bytes);
    mapopt_status st = c->transport->type->send(c->transport, &req, &r);
    if (st != MAPOPT_OK) {
      mapopt_llm_response_destroy(&r);
      return st;
    }
    call->attempts++;
    call->http_status = r.net == MAPOPT_LLM_NET_OK ? r.status : 0;
    char tail[40] = ""; /* how often it was tried, for final errors */
    if (call->attempts > 1)
      snprintf(tail, sizeof tail, " after %d attempts", call->attempts);
    bool again = false;
    int64_t wait = -1;
    switch (r.net) {
    case MAPOPT_LLM_NET_OK:
      if (r.status >= 200 && r.status <= 299)
        st = parse_reply(c, &r, n, res);
      else if (retryable_status(r.status) && retry < c->cfg.max_retries)
        again = true, wait = retry_after_ms(&r);
      else
        st = http_fail(c, call, &r, tail);
      break;
    case MAPOPT_LLM_NET_CONNECT:
    case MAPOPT_LLM_NET_TIMEOUT:
      if (retry < c->cfg.max_retries)
        again = true;
      else if (r.net == MAPOPT_LLM_NET_CONNECT)
        st = fail(c, call, MAPOPT_LLM_ERR_CONNECT, "cannot reach %s%s: %s",
                  c->url, tail, r.error);
      else
        st = fail(c, call, MAPOPT_LLM_ERR_TIMEOUT,
                  "no reply from %s within %" PRId64 " ms%s", c->url,
                  c->cfg.timeout_ms, tail);
      break;
    case MAPOPT_LLM_NET_TOO_LARGE:
      st = fail(c, call, MAPOPT_LLM_ERR_TOO_LARGE,
                "the reply from %s is larger than %zu bytes", c->url,
                c->cfg.max_reply_bytes);
      break;
    case MAPOPT_LLM_NET_STOPPED:
      st = fail_stopped(c, call);
      break;
    default:
      st = fail(c, call, MAPOPT_LLM_ERR_TRANSPORT, "request to %s failed: %s",
                c->url, r.error);
      break;
    }
    mapopt_llm_response_destroy(&r);
    if (st != MAPOPT_OK || !again)
      return st;
    if (wait < 0)
      wait = backoff(c, retry);
    else if (wait > c->cfg.retry_after_max_ms)
      wait = c->cfg.retry_after_max_ms;
    c->cfg.sleep(c->cfg.sleep_ud, wait);
    call->waited_ms += wait;
  }
}

mapopt_status mapopt_llm_chat(mapopt_llm_client *c,
                              const mapopt_llm_message *msgs, size_t nmsgs,
                              int n, mapopt_llm_chat_result **out) {
  if (!c || !msgs || nmsgs == 0 || n < 1 || n > MAX_CHOICES)
    return MAPOPT_EINVAL;
  for (size_t i = 0; i < nmsgs; i++)
    if (!msgs[i].role || !msgs[i].content)
      return MAPOPT_EINVAL;
  chat_impl *impl = mapopt__calloc(c->ctx, 1, sizeof *impl);
  mapopt_llm_choice *choices =
      impl ? mapopt__calloc(c->ctx, MAX_CHOICES, sizeof *choices) : NULL;
  char *body = choices ? request_body(c, msgs, nmsgs, n) : NULL;
  if (!body) {
    mapopt__free(c->ctx, choices, MAX_CHOICES * sizeof *choices);
    mapopt__free(c->ctx, impl, sizeof *impl);
    return MAPOPT_ENOMEM;
  }
  impl->ctx = c->ctx;
  mapopt_llm_chat_result *res = &impl->pub;
  res->choices = choices;
  int64_t start = c->cfg.clock(c->cfg.clock_ud);
  mapopt_status st = exchange(c, body, n, res);
  free(body);
  res->call.latency_ms = c->cfg.clock(c->cfg.clock_ud) - start;
  res->call.cost = ((double)res->call.prompt_tokens * c->cfg.price_in +
                    (double)res->call.completion_tokens * c->cfg.price_out) /
                   1e6;
  if (st != MAPOPT_OK) {
    mapopt_llm_chat_free(res);
    return st;
  }
  if (c->cfg.on_call)
    c->cfg.on_call(c->cfg.on_call_ud, &res->call);
  *out = res;
  return MAPOPT_OK;
}
