/*
 * The libcurl transport: one easy handle per transport, reused so that
 * consecutive requests share a connection. Only http and https, no
 * redirects (a redirect would carry the key elsewhere), no signals (safe
 * in threads), and the body cap enforced twice: up front from
 * Content-Length, and while receiving, where the write callback refuses
 * the byte that passes the cap. A request's stop is looked at by the
 * progress callback, which libcurl calls at least once a second, even
 * while nothing arrives.
 *
 * The error text is libcurl's fixed description of the error code, not
 * its detail buffer: the detail holds timings ("after 301 ms"), which
 * would make otherwise identical runs differ.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "chat/chat.h"

typedef struct curl_transport {
  mapopt_llm_transport base;
  CURL *easy;
} curl_transport;

static const mapopt_llm_transport_type curl_type;

static size_t on_body(char *data, size_t size, size_t n, void *ud) {
  mapopt_status st = mapopt_llm_response_body(ud, data, size * n);
  return st == MAPOPT_OK ? size * n : 0; /* 0 aborts the transfer */
}

static size_t on_header(char *data, size_t size, size_t n, void *ud) {
  mapopt_llm_response *r = ud;
  size_t len = size * n;
  while (len && (data[len - 1] == '\n' || data[len - 1] == '\r'))
    len--;
  if (len && mapopt_llm_response_header(r, data, len) != MAPOPT_OK)
    return 0;
  return size * n;
}

/* Abandons the transfer (non-zero) once the request's stop is set. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow) {
  (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
  const volatile sig_atomic_t *stop = ud;
  return stop && *stop;
}

/* Maps a libcurl result to what the client needs to know. */
static mapopt_llm_net classify(CURLcode rc, const mapopt_llm_response *r) {
  switch (rc) {
  case CURLE_OK:
    return MAPOPT_LLM_NET_OK;
  case CURLE_OPERATION_TIMEDOUT:
    return MAPOPT_LLM_NET_TIMEOUT;
  case CURLE_ABORTED_BY_CALLBACK:
    return MAPOPT_LLM_NET_STOPPED;
  case CURLE_FILESIZE_EXCEEDED:
    return MAPOPT_LLM_NET_TOO_LARGE;
  case CURLE_WRITE_ERROR:
    return r->net == MAPOPT_LLM_NET_TOO_LARGE ? MAPOPT_LLM_NET_TOO_LARGE
                                              : MAPOPT_LLM_NET_FAILED;
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
  case CURLE_COULDNT_CONNECT:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
    return MAPOPT_LLM_NET_CONNECT;
  default:
    return MAPOPT_LLM_NET_FAILED;
  }
}

static mapopt_status curl_send(mapopt_llm_transport *base,
                               const mapopt_llm_request *req,
                               mapopt_llm_response *resp) {
  curl_transport *t = (curl_transport *)base;
  CURL *e = t->easy;
  struct curl_slist *hl = NULL;
  for (size_t i = 0; i < req->nheaders; i++) {
    struct curl_slist *n = curl_slist_append(hl, req->headers[i]);
    if (!n) {
      curl_slist_free_all(hl);
      return MAPOPT_ENOMEM;
    }
    hl = n;
  }
  /* No "Expect: 100-continue" round trip for large prompts. */
  struct curl_slist *n = curl_slist_append(hl, "Expect:");
  if (!n) {
    curl_slist_free_all(hl);
    return MAPOPT_ENOMEM;
  }
  hl = n;
  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, req->url);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
  curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)resp->max_bytes);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, resp);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, resp);
  if (req->stop) {
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, (void *)req->stop);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  }
  CURLcode rc = curl_easy_perform(e);
  curl_slist_free_all(hl);
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  resp->net = classify(rc, resp);
  if (rc == CURLE_WRITE_ERROR && resp->net == MAPOPT_LLM_NET_FAILED)
    return MAPOPT_ENOMEM; /* the callbacks refuse only for the cap or ENOMEM */
  if (resp->net == MAPOPT_LLM_NET_OK) {
    resp->status = (int)status;
  } else if (resp->net == MAPOPT_LLM_NET_TOO_LARGE) {
    resp->status = (int)status;
    snprintf(resp->error, sizeof resp->error, "reply larger than %zu bytes",
             resp->max_bytes);
  } else {
    snprintf(resp->error, sizeof resp->error, "%s", curl_easy_strerror(rc));
  }
  return MAPOPT_OK;
}

static void close_curl(mapopt_llm_transport *base) {
  curl_transport *t = (curl_transport *)base;
  curl_easy_cleanup(t->easy);
  curl_global_cleanup();
  mapopt__free(base->ctx, t, sizeof *t);
}

mapopt_status mapopt_llm_curl_new(mapopt_ctx *ctx, mapopt_llm_transport **out) {
  curl_transport *t = mapopt__calloc(ctx, 1, sizeof *t);
  if (!t)
    return MAPOPT_ENOMEM;
  /* Reference-counted by libcurl; balanced in close_curl. */
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    mapopt__free(ctx, t, sizeof *t);
    return MAPOPT_EIO;
  }
  t->easy = curl_easy_init();
  if (!t->easy) {
    curl_global_cleanup();
    mapopt__free(ctx, t, sizeof *t);
    return MAPOPT_EIO;
  }
  t->base.type = &curl_type;
  t->base.ctx = ctx;
  *out = &t->base;
  return MAPOPT_OK;
}

static const mapopt_llm_transport_type curl_type = {"curl", curl_send,
                                                    close_curl};
