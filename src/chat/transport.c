/*
 * What every transport shares -- the response buffers with their caps --
 * and the replay transport, which serves a scripted list of responses or
 * network failures and records each request it gets. Recorded headers are
 * redacted: a test can print or compare them without ever holding the
 * key.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "chat/chat.h"

#define MAX_HEADER_BYTES ((size_t)64 << 10)

/* Grows buf to hold need + 1 bytes (the NUL); false on ENOMEM. */
static bool reserve(mapopt_ctx *ctx, char **buf, size_t *cap, size_t need) {
  if (need + 1 <= *cap)
    return true;
  size_t c = *cap ? *cap : 256;
  while (c < need + 1)
    c *= 2;
  char *p = mapopt__realloc(ctx, *buf, *cap, c);
  if (!p)
    return false;
  *buf = p;
  *cap = c;
  return true;
}

void mapopt_llm_response_init(mapopt_llm_response *r, mapopt_ctx *ctx,
                              size_t max_bytes) {
  *r = (mapopt_llm_response){.ctx = ctx, .max_bytes = max_bytes};
}

void mapopt_llm_response_destroy(mapopt_llm_response *r) {
  mapopt__free(r->ctx, r->headers, r->headers_cap);
  mapopt__free(r->ctx, r->body, r->body_cap);
  r->headers = r->body = NULL;
  r->headers_len = r->headers_cap = r->body_len = r->body_cap = 0;
}

mapopt_status mapopt_llm_response_header(mapopt_llm_response *r,
                                         const char *line, size_t n) {
  if (n >= 5 && !memcmp(line, "HTTP/", 5))
    r->headers_len = 0;
  if (r->headers_len + n + 1 > MAX_HEADER_BYTES)
    return MAPOPT_OK;
  if (!reserve(r->ctx, &r->headers, &r->headers_cap, r->headers_len + n + 1))
    return MAPOPT_ENOMEM;
  memcpy(r->headers + r->headers_len, line, n);
  r->headers_len += n;
  r->headers[r->headers_len++] = '\n';
  r->headers[r->headers_len] = '\0';
  return MAPOPT_OK;
}

mapopt_status mapopt_llm_response_body(mapopt_llm_response *r, const void *data,
                                       size_t n) {
  if (n > r->max_bytes - r->body_len) {
    r->net = MAPOPT_LLM_NET_TOO_LARGE;
    return MAPOPT_ERANGE;
  }
  if (!reserve(r->ctx, &r->body, &r->body_cap, r->body_len + n))
    return MAPOPT_ENOMEM;
  memcpy(r->body + r->body_len, data, n);
  r->body_len += n;
  r->body[r->body_len] = '\0';
  return MAPOPT_OK;
}

void mapopt_llm_transport_free(mapopt_llm_transport *t) {
  if (t)
    t->type->free(t);
}

/* ---- replay -------------------------------------------------------------- */

typedef struct scripted {
  mapopt_llm_net net;
  int status;
  char *headers; /* '\n'-separated lines, or NULL */
  char *body;
  size_t body_len;
  char *reason; /* failures */
} scripted;

typedef struct replay {
  mapopt_llm_transport base;
  mapopt__vec script; /* scripted */
  size_t next;
  mapopt__vec got; /* mapopt_llm_recorded, strings owned */
} replay;

static const mapopt_llm_transport_type replay_type;

static void free_str(mapopt_ctx *ctx, char *s, size_t len) {
  mapopt__free(ctx, s, len + 1);
}

/* Copies a C string as a text, or NULL for NULL. *ok is cleared on
 * ENOMEM. */
static char *dup_opt(mapopt_ctx *ctx, const char *s, bool *ok) {
  if (!s)
    return NULL;
  char *d = mapopt__text_new(ctx, s, strlen(s));
  if (!d)
    *ok = false;
  return d;
}

static void replay_free(mapopt_llm_transport *t) {
  replay *r = (replay *)t;
  mapopt_ctx *ctx = t->ctx;
  for (size_t i = 0; i < r->script.len; i++) {
    scripted *s = &MAPOPT__VEC_AT(&r->script, scripted, i);
    mapopt_text_free(s->headers);
    free_str(ctx, s->body, s->body_len);
    mapopt_text_free(s->reason);
  }
  for (size_t i = 0; i < r->got.len; i++) {
    mapopt_llm_recorded *g = &MAPOPT__VEC_AT(&r->got, mapopt_llm_recorded, i);
    mapopt_text_free((char *)g->url);
    mapopt_text_free((char *)g->headers);
    free_str(ctx, (char *)g->body, g->body_len);
  }
  mapopt__vec_destroy(&r->script, ctx);
  mapopt__vec_destroy(&r->got, ctx);
  mapopt__free(ctx, r, sizeof *r);
}

mapopt_status mapopt_llm_replay_new(mapopt_ctx *ctx,
                                    mapopt_llm_transport **out) {
  replay *r = mapopt__calloc(ctx, 1, sizeof *r);
  if (!r)
    return MAPOPT_ENOMEM;
  r->base.type = &replay_type;
  r->base.ctx = ctx;
  mapopt__vec_init(&r->script, sizeof(scripted));
  mapopt__vec_init(&r->got, sizeof(mapopt_llm_recorded));
  *out = &r->base;
  return MAPOPT_OK;
}

/* Pushes a scripted entry, freeing its strings when that fails. */
static mapopt_status push(replay *r, scripted s, bool ok) {
  scripted *slot = ok ? mapopt__vec_push(&r->script, r->base.ctx) : NULL;
  if (!slot) {
    mapopt_text_free(s.headers);
    if (s.body)
      free_str(r->base.ctx, s.body, s.body_len);
    mapopt_text_free(s.reason);
    return MAPOPT_ENOMEM;
  }
  *slot = s;
  return MAPOPT_OK;
}

mapopt_status mapopt_llm_replay_add(mapopt_llm_transport *t, int status,
                                    const char *headers, const char *body,
                                    size_t body_len) {
  if (!t || t->type != &replay_type || (!body && body_len))
    return MAPOPT_EINVAL;
  bool ok = true;
  scripted s = {.net = MAPOPT_LLM_NET_OK, .status = status};
  s.headers = dup_opt(t->ctx, headers, &ok);
  s.body = mapopt__strndup(t->ctx, body ? body : "", body_len);
  s.body_len = body_len;
  return push((replay *)t, s, ok && s.body);
}

mapopt_status mapopt_llm_replay_fail(mapopt_llm_transport *t,
                                     mapopt_llm_net net, const char *reason) {
  if (!t || t->type != &replay_type || net == MAPOPT_LLM_NET_OK)
    return MAPOPT_EINVAL;
  bool ok = true;
  scripted s = {.net = net};
  s.reason = dup_opt(t->ctx, reason ? reason : "", &ok);
  return push((replay *)t, s, ok);
}

size_t mapopt_llm_replay_count(const mapopt_llm_transport *t) {
  return t && t->type == &replay_type ? ((const replay *)t)->got.len : 0;
}

const mapopt_llm_recorded *
mapopt_llm_replay_request(const mapopt_llm_transport *t, size_t i) {
  if (!t || t->type != &replay_type || i >= ((const replay *)t)->got.len)
    return NULL;
  return &MAPOPT__VEC_AT(&((const replay *)t)->got, mapopt_llm_recorded, i);
}

/* Whether a header carries a credential: its value is never recorded. */
static bool is_credential(const char *line) {
  static const char *const names[] = {
      "authorization:", "api-key:", "x-api-key:", "proxy-authorization:"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strncasecmp(line, names[i], strlen(names[i])))
      return true;
  return false;
}

/* Records req, with credentials replaced by "[redacted]". */
static mapopt_status record(replay *r, const mapopt_llm_request *req) {
  mapopt_ctx *ctx = r->base.ctx;
  mapopt__strbuf hs;
  mapopt__sb_init(&hs, ctx);
  for (size_t i = 0; i < req->nheaders; i++) {
    const char *h = req->headers[i];
    if (is_credential(h)) {
      const char *colon = strchr(h, ':');
      mapopt__sb_putn(&hs, h, (size_t)(colon - h));
      /* Keep the scheme ("Bearer"), so tests see what was sent. */
      const char *v = colon + 1;
      while (*v == ' ')
        v++;
      const char *sp = strchr(v, ' ');
      if (sp)
        mapopt__sb_printf(&hs, ": %.*s [redacted]\n", (int)(sp - v), v);
      else
        mapopt__sb_puts(&hs, ": [redacted]\n");
    } else {
      mapopt__sb_printf(&hs, "%s\n", h);
    }
  }
  char *headers = mapopt__text_take(&hs, NULL);
  char *url = mapopt__text_new(ctx, req->url, strlen(req->url));
  char *body = mapopt__strndup(ctx, req->body, req->body_len);
  mapopt_llm_recorded *g =
      headers && url && body ? mapopt__vec_push(&r->got, ctx) : NULL;
  if (!g) {
    mapopt_text_free(headers);
    mapopt_text_free(url);
    if (body)
      free_str(ctx, body, req->body_len);
    return MAPOPT_ENOMEM;
  }
  *g =
      (mapopt_llm_recorded){url, headers, body, req->body_len, req->timeout_ms};
  return MAPOPT_OK;
}

static mapopt_status replay_send(mapopt_llm_transport *t,
                                 const mapopt_llm_request *req,
                                 mapopt_llm_response *resp) {
  replay *r = (replay *)t;
  mapopt_status st = record(r, req);
  if (st != MAPOPT_OK)
    return st;
  if (req->stop && *req->stop) {
    resp->net = MAPOPT_LLM_NET_STOPPED;
    snprintf(resp->error, sizeof resp->error, "stopped");
    return MAPOPT_OK;
  }
  if (r->next >= r->script.len) {
    resp->net = MAPOPT_LLM_NET_FAILED;
    snprintf(resp->error, sizeof resp->error, "replay script exhausted");
    return MAPOPT_OK;
  }
  const scripted *s = &MAPOPT__VEC_AT(&r->script, scripted, r->next++);
  if (s->net != MAPOPT_LLM_NET_OK) {
    resp->net = s->net;
    snprintf(resp->error, sizeof resp->error, "%s", s->reason);
    return MAPOPT_OK;
  }
  resp->net = MAPOPT_LLM_NET_OK;
  resp->status = s->status;
  char line[32];
  int n = snprintf(line, sizeof line, "HTTP/1.1 %d", s->status);
  if ((st = mapopt_llm_response_header(resp, line, (size_t)n)) != MAPOPT_OK)
    return st;
  for (const char *h = s->headers; h && *h;) {
    const char *nl = strchr(h, '\n');
    size_t len = nl ? (size_t)(nl - h) : strlen(h);
    if ((st = mapopt_llm_response_header(resp, h, len)) != MAPOPT_OK)
      return st;
    h += len + (nl != NULL);
  }
  /* Delivered in 16 KiB pieces, as a network would, so the cap stops the
   * transfer part-way exactly as it does for curl. */
  for (size_t off = 0; off < s->body_len;) {
    size_t n16 = s->body_len - off < 16384 ? s->body_len - off : 16384;
    st = mapopt_llm_response_body(resp, s->body + off, n16);
    if (st == MAPOPT_ERANGE) {
      snprintf(resp->error, sizeof resp->error, "reply larger than %zu bytes",
               resp->max_bytes);
      return MAPOPT_OK;
    }
    if (st != MAPOPT_OK)
      return st;
    off += n16;
  }
  return MAPOPT_OK;
}

static const mapopt_llm_transport_type replay_type = {"replay", replay_send,
                                                      replay_free};
