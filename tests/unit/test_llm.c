/*
 * Unit tests of the LLM layer (mapopt/llm.h) through the replay
 * transport, with a fake clock: configuration and environment, the exact
 * request bytes, retries and backoff, Retry-After, the size cap, every
 * kind of malformed reply, accounting, key redaction, reply extraction,
 * the step, and allocation failure at every point of a step. The prompt
 * itself: test_llm_prompt.c.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "../llm/llm_fixture.h"
#include "failing_alloc.h"
#include "fixture.h"
#include "mapopt/llm.h"

#define KEY "sk-test-SECRET-4242"
#define URL "http://llm.test/v1/chat/completions"

/* A configuration for the replay transport, with fake time. */
static void config(mapopt_llm_config *cfg, fake_time *ft) {
  mapopt_llm_config_init(cfg);
  cfg->base_url = "http://llm.test/v1/";
  cfg->model = "test-model";
  cfg->api_key = KEY;
  fake_time_use(ft, cfg);
}

static void add_completion(mapopt_llm_transport *t, const char *content) {
  char *body = llm_completion(1, &content, "stop", 100, 20);
  assert_int_equal(mapopt_llm_replay_add(t, 200, NULL, body, strlen(body)),
                   MAPOPT_OK);
  free(body);
}

static void add_status(mapopt_llm_transport *t, int status, const char *headers,
                       const char *body) {
  assert_int_equal(
      mapopt_llm_replay_add(t, status, headers, body, strlen(body)), MAPOPT_OK);
}

/* One chat call with the user message "u" after a system message "s". */
static mapopt_llm_chat_result *chat(mapopt_llm_client *c, int n) {
  const mapopt_llm_message msgs[2] = {{"system", "s"}, {"user", "u"}};
  mapopt_llm_chat_result *r = NULL;
  assert_int_equal(mapopt_llm_chat(c, msgs, 2, n, &r), MAPOPT_OK);
  return r;
}

typedef struct rig {
  mapopt_llm_config cfg;
  fake_time ft;
  mapopt_llm_transport *t;
  mapopt_llm_client *c;
} rig;

static void rig_open(rig *g) {
  config(&g->cfg, &g->ft);
  assert_int_equal(mapopt_llm_replay_new(ctx, &g->t), MAPOPT_OK);
}

/* The client is made when the configuration is final. */
static mapopt_llm_client *rig_client(rig *g) {
  char err[256];
  assert_int_equal(
      mapopt_llm_client_new(ctx, &g->cfg, g->t, &g->c, err, sizeof err),
      MAPOPT_OK);
  return g->c;
}

static void rig_close(rig *g) {
  mapopt_llm_client_free(g->c);
  mapopt_llm_transport_free(g->t);
}

/* ---- configuration ------------------------------------------------------- */

static const char *table_getenv(void *ud, const char *name) {
  for (const char *const *kv = ud; *kv; kv += 2)
    if (!strcmp(kv[0], name))
      return kv[1];
  return NULL;
}

static void test_config_env(void **state) {
  (void)state;
  mapopt_llm_config cfg;
  mapopt_llm_config_init(&cfg);
  assert_null(cfg.base_url);
  assert_int_equal(cfg.samples, 1);
  assert_int_equal(cfg.max_retries, 4);
  assert_int_equal(cfg.max_reply_bytes, 1 << 20);
  /* MAPOPT_* first; an empty one falls back to OPENAI_*. */
  const char *env[] = {"MAPOPT_LLM_BASE_URL",
                       "",
                       "OPENAI_BASE_URL",
                       "http://a.test/v1",
                       "MAPOPT_LLM_MODEL",
                       "m1",
                       "OPENAI_API_KEY",
                       "k-openai",
                       "MAPOPT_LLM_API_KEY",
                       "k-mapopt",
                       NULL};
  mapopt_llm_config_from_env(&cfg, table_getenv, (void *)env);
  assert_string_equal(cfg.base_url, "http://a.test/v1");
  assert_string_equal(cfg.model, "m1");
  assert_string_equal(cfg.api_key, "k-mapopt");
  /* Unset variables leave fields alone; settings made after win. */
  const char *none[] = {NULL};
  cfg.model = "from-flag";
  mapopt_llm_config_from_env(&cfg, table_getenv, (void *)none);
  assert_string_equal(cfg.model, "from-flag");
  assert_string_equal(cfg.api_key, "k-mapopt");
  const char *fallback[] = {"OPENAI_API_KEY", "k-openai", NULL};
  cfg.api_key = NULL;
  mapopt_llm_config_from_env(&cfg, table_getenv, (void *)fallback);
  assert_string_equal(cfg.api_key, "k-openai");
}

static void test_config_check(void **state) {
  (void)state;
  static const struct {
    const char *what;
    const char *message;
  } cases[] = {
      {"no url", "no LLM server: set MAPOPT_LLM_BASE_URL"},
      {"ftp url", "must start with http:// or https://"},
      {"no model", "no model: set MAPOPT_LLM_MODEL"},
      {"temperature", "temperature must be in [0, 2]"},
      {"samples", "samples must be in [1, 64]"},
      {"retries", "retries must be in [0, 20]"},
      {"timeout", "the timeout must be at least 1 ms"},
      {"backoff", "backoff delays must be at least 0"},
      {"cap", "the reply cap must be at least 1024 bytes"},
      {"price", "prices must be at least 0"},
      {"key line break",
       "the API key (MAPOPT_LLM_API_KEY) has a control character"},
      {"key tab", "the API key (MAPOPT_LLM_API_KEY) has a control character"},
      {"url line break", "the LLM server URL (MAPOPT_LLM_BASE_URL) has a "
                         "space or a control character"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    mapopt_llm_config cfg;
    fake_time ft;
    config(&cfg, &ft);
    const char *w = cases[i].what;
    if (!strcmp(w, "no url"))
      cfg.base_url = NULL;
    else if (!strcmp(w, "ftp url"))
      cfg.base_url = "ftp://x";
    else if (!strcmp(w, "no model"))
      cfg.model = "";
    else if (!strcmp(w, "temperature"))
      cfg.temperature = 2.5;
    else if (!strcmp(w, "samples"))
      cfg.samples = 0;
    else if (!strcmp(w, "retries"))
      cfg.max_retries = 21;
    else if (!strcmp(w, "timeout"))
      cfg.timeout_ms = 0;
    else if (!strcmp(w, "backoff"))
      cfg.backoff_max_ms = cfg.backoff_ms - 1;
    else if (!strcmp(w, "cap"))
      cfg.max_reply_bytes = 10;
    else if (!strcmp(w, "key line break")) /* would inject a header */
      cfg.api_key = KEY "\r\nX-Injected: 1";
    else if (!strcmp(w, "key tab"))
      cfg.api_key = "sk-\tx";
    else if (!strcmp(w, "url line break"))
      cfg.base_url = "http://llm.test/v1\r\nX-Injected: 1";
    else
      cfg.price_out = -1;
    char err[256] = "";
    mapopt_llm_client *c = NULL;
    mapopt_llm_transport *t;
    assert_int_equal(mapopt_llm_replay_new(ctx, &t), MAPOPT_OK);
    assert_int_equal(mapopt_llm_client_new(ctx, &cfg, t, &c, err, sizeof err),
                     MAPOPT_EINVAL);
    assert_null(c);
    if (!strstr(err, cases[i].message))
      fail_msg("%s: got \"%s\"", w, err);
    assert_null(strstr(err, KEY));
    mapopt_llm_transport_free(t);
  }
}

static void test_client_url(void **state) {
  (void)state;
  static const char *const bases[][2] = {
      {"http://h:8080/v1", "http://h:8080/v1/chat/completions"},
      {"http://h:8080/v1///", "http://h:8080/v1/chat/completions"},
      {"https://h/v1/chat/completions", "https://h/v1/chat/completions"},
      {"https://h/v1/chat/completions/", "https://h/v1/chat/completions"},
  };
  for (size_t i = 0; i < 4; i++) {
    rig g;
    rig_open(&g);
    g.cfg.base_url = bases[i][0];
    assert_string_equal(mapopt_llm_client_url(rig_client(&g)), bases[i][1]);
    rig_close(&g);
  }
}

/* ---- the request --------------------------------------------------------- */

static void test_request_bytes(void **state) {
  (void)state;
  rig g;
  rig_open(&g);
  g.cfg.timeout_ms = 5000;
  mapopt_llm_client *c = rig_client(&g);
  add_completion(g.t, "x");
  add_completion(g.t, "y");
  mapopt_llm_chat_free(chat(c, 1));
  mapopt_llm_chat_free(chat(c, 3));
  assert_int_equal(mapopt_llm_replay_count(g.t), 2);
  const mapopt_llm_recorded *r = mapopt_llm_replay_request(g.t, 0);
  assert_string_equal(r->url, URL);
  assert_int_equal(r->timeout_ms, 5000);
  assert_string_equal(r->headers, "Content-Type: application/json\n"
                                  "Authorization: Bearer [redacted]\n");
  assert_string_equal(r->body,
                      "{\"model\":\"test-model\",\"messages\":[{\"role\":"
                      "\"system\",\"content\":\"s\"},{\"role\":\"user\","
                      "\"content\":\"u\"}],\"temperature\":0.7,"
                      "\"max_tokens\":4096}");
  r = mapopt_llm_replay_request(g.t, 1);
  assert_non_null(strstr(r->body, "\"max_tokens\":4096,\"n\":3}"));
  assert_null(mapopt_llm_replay_request(g.t, 2));
  rig_close(&g);

  /* No key: no Authorization header; no max_tokens when 0. */
  rig_open(&g);
  g.cfg.api_key = "";
  g.cfg.max_tokens = 0;
  g.cfg.temperature = 0.2;
  c = rig_client(&g);
  add_completion(g.t, "x");
  mapopt_llm_chat_free(chat(c, 1));
  r = mapopt_llm_replay_request(g.t, 0);
  assert_string_equal(r->headers, "Content-Type: application/json\n");
  assert_non_null(strstr(r->body, "\"temperature\":0.2}"));
  rig_close(&g);
}

static void test_request_utf8(void **state) {
  (void)state;
  rig g;
  rig_open(&g);
  mapopt_llm_client *c = rig_client(&g);
  add_completion(g.t, "x");
  /* Invalid bytes (a lone continuation, an overlong form, a surrogate)
   * become '?'; valid UTF-8 (é) is kept. */
  const mapopt_llm_message msg = {"user", "a\xff\xc0\xaf\xed\xa0\x80 \xc3\xa9"};
  mapopt_llm_chat_result *res = NULL;
  assert_int_equal(mapopt_llm_chat(c, &msg, 1, 1, &res), MAPOPT_OK);
  mapopt_llm_chat_free(res);
  const mapopt_llm_recorded *r = mapopt_llm_replay_request(g.t, 0);
  json_error_t err;
  json_t *j = json_loadb(r->body, r->body_len, 0, &err);
  assert_non_null(j);
  const char *content = json_string_value(json_object_get(
      json_array_get(json_object_get(j, "messages"), 0), "content"));
  assert_string_equal(content, "a?????? \xc3\xa9");
  json_decref(j);
  assert_int_equal(mapopt_llm_chat(c, &msg, 1, 0, &res), MAPOPT_EINVAL);
  assert_int_equal(mapopt_llm_chat(c, &msg, 0, 1, &res), MAPOPT_EINVAL);
  rig_close(&g);
}

/* ---- retries ------------------------------------------------------------- */

static void test_retry_backoff(void **state) {
  (void)state;
  int64_t first[2][3];
  for (int run = 0; run < 2; run++) {
    rig g;
    rig_open(&g);
    g.cfg.seed = 7;
    mapopt_llm_client *c = rig_client(&g);
    add_status(g.t, 503, NULL, "{\"error\":{\"message\":\"busy\"}}");
    add_status(g.t, 502, NULL, "bad gateway");
    assert_int_equal(
        mapopt_llm_replay_fail(g.t, MAPOPT_LLM_NET_CONNECT, "refused"),
        MAPOPT_OK);
    add_completion(g.t, "ok");
    mapopt_llm_chat_result *r = chat(c, 1);
    assert_int_equal(r->call.error, MAPOPT_LLM_ERR_NONE);
    assert_int_equal(r->call.attempts, 4);
    assert_int_equal(r->call.http_status, 200);
    assert_int_equal(g.ft.nwaits, 3);
    /* Retry i waits 1000 x 2^i ms, its upper half jittered. */
    for (int i = 0; i < 3; i++) {
      int64_t full = 1000 << i;
      assert_in_range(g.ft.waits[i], full / 2, full);
      first[run][i] = g.ft.waits[i];
    }
    assert_int_equal(r->call.waited_ms,
                     g.ft.waits[0] + g.ft.waits[1] + g.ft.waits[2]);
    assert_int_equal(r->call.latency_ms, r->call.waited_ms);
    mapopt_llm_chat_free(r);
    rig_close(&g);
  }
  /* The same seed, the same waits. */
  assert_memory_equal(first[0], first[1], sizeof first[0]);

  /* Another seed, other waits; the cap holds. */
  rig g;
  rig_open(&g);
  g.cfg.seed = 8;
  g.cfg.backoff_max_ms = 1500;
  g.cfg.max_retries = 3;
  mapopt_llm_client *c = rig_client(&g);
  for (int i = 0; i < 4; i++)
    add_status(g.t, 500, NULL, "{\"error\":\"down\"}");
  mapopt_llm_chat_result *r = chat(c, 1);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_HTTP);
  assert_int_equal(r->call.attempts, 4);
  assert_int_equal(g.ft.nwaits, 3);
  assert_true(g.ft.waits[0] != first[0][0] || g.ft.waits[1] != first[0][1]);
  assert_in_range(g.ft.waits[2], 750, 1500);
  assert_string_equal(r->call.error_text,
                      "HTTP 500 from " URL " after 4 attempts: down");
  mapopt_llm_chat_free(r);
  rig_close(&g);
}

/* A usage beyond what any call can spend (10^9 tokens) is a malformed
 * reply, not a count: sums of such counts overflowed the database. */
static void test_usage_bounded(void **state) {
  (void)state;
  static const long counts[][2] = {
      {1000000000, 5}, {5, 1000000001L}, {4000000000000000000L, 1}};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    rig g;
    rig_open(&g);
    mapopt_llm_client *c = rig_client(&g);
    const char *content = "ok";
    char *body =
        llm_completion(1, &content, "stop", counts[i][0], counts[i][1]);
    assert_int_equal(mapopt_llm_replay_add(g.t, 200, NULL, body, strlen(body)),
                     MAPOPT_OK);
    free(body);
    mapopt_llm_chat_result *r = chat(c, 1);
    if (i == 0) {
      assert_int_equal(r->call.error, MAPOPT_LLM_ERR_NONE);
      assert_int_equal(r->call.prompt_tokens, 1000000000);
    } else {
      assert_int_equal(r->call.error, MAPOPT_LLM_ERR_REPLY);
      assert_non_null(strstr(r->call.error_text, "_tokens"));
      assert_int_equal(r->call.prompt_tokens + r->call.completion_tokens, 0);
      assert_int_equal(r->call.nchoices, 0);
    }
    mapopt_llm_chat_free(r);
    rig_close(&g);
  }
}

/* A stop that comes during the wait before a retry (Ctrl-C, SIGTERM) ends
 * the call there: no further request is sent. */
static volatile sig_atomic_t llm_stop;

static void sleep_then_stop(void *ud, int64_t ms) {
  fake_sleep(ud, ms);
  llm_stop = 1;
}

static void on_alarm(int sig) {
  (void)sig;
  llm_stop = 1;
}

static void test_stop_in_backoff(void **state) {
  (void)state;
  rig g;
  rig_open(&g);
  g.cfg.sleep = sleep_then_stop;
  g.cfg.stop = &llm_stop;
  llm_stop = 0;
  mapopt_llm_client *c = rig_client(&g);
  add_status(g.t, 503, NULL, "{\"error\":{\"message\":\"busy\"}}");
  add_completion(g.t, "never asked for");
  mapopt_llm_chat_result *r = chat(c, 1);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_INTERRUPTED);
  assert_int_equal(r->call.attempts, 1);
  assert_int_equal(mapopt_llm_replay_count(g.t), 1);
  assert_string_equal(r->call.error_text,
                      "the call to " URL " was stopped after 1 attempt");
  mapopt_llm_chat_free(r);
  /* A stop before the call: nothing is sent. */
  r = chat(c, 1);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_INTERRUPTED);
  assert_int_equal(r->call.attempts, 0);
  assert_int_equal(mapopt_llm_replay_count(g.t), 1);
  mapopt_llm_chat_free(r);
  rig_close(&g);
  /* The real sleep of a 60 s back-off, and a signal during it: the wait
   * ends (a signal that only interrupted nanosleep made it wait on). */
  rig_open(&g);
  g.cfg.sleep = NULL;
  g.cfg.clock = NULL;
  g.cfg.backoff_ms = g.cfg.backoff_max_ms = 60000;
  g.cfg.stop = &llm_stop;
  llm_stop = 0;
  c = rig_client(&g);
  add_status(g.t, 503, NULL, "{\"error\":{\"message\":\"busy\"}}");
  add_completion(g.t, "never asked for");
  struct sigaction sa = {.sa_handler = on_alarm}, old;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, &old);
  alarm(1);
  r = chat(c, 1);
  alarm(0);
  sigaction(SIGALRM, &old, NULL);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_INTERRUPTED);
  assert_int_equal(r->call.attempts, 1);
  assert_int_equal(mapopt_llm_replay_count(g.t), 1);
  mapopt_llm_chat_free(r);
  rig_close(&g);
}

static void test_retry_after(void **state) {
  (void)state;
  static const struct {
    const char *header;
    int64_t lo, hi;
  } cases[] = {
      {"Retry-After: 7", 7000, 7000},
      {"retry-after:0", 0, 0},
      {"Retry-After: 3600", 60000, 60000}, /* capped */
      {"Retry-After: 99999999999999999999999", 60000, 60000},
      /* The date form is not honoured: our own backoff. */
      {"Retry-After: Wed, 21 Oct 2015 07:28:00 GMT", 500, 1000},
      {"X-Other: 1\nRetry-After:  2 ", 2000, 2000},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    rig g;
    rig_open(&g);
    mapopt_llm_client *c = rig_client(&g);
    add_status(g.t, 429, cases[i].header, "{}");
    add_completion(g.t, "ok");
    mapopt_llm_chat_result *r = chat(c, 1);
    assert_int_equal(r->call.error, MAPOPT_LLM_ERR_NONE);
    assert_int_equal(g.ft.nwaits, 1);
    assert_in_range(g.ft.waits[0], cases[i].lo, cases[i].hi);
    mapopt_llm_chat_free(r);
    rig_close(&g);
  }
}

/* Final outcomes that are not retried, or retried until spent. */
static void test_final_errors(void **state) {
  (void)state;
  static const struct {
    int retries;
    const char *script; /* s: 404, t: timeout, c: connect, x: exhausted */
    mapopt_llm_error error;
    int attempts;
    const char *text;
  } cases[] = {
      {4, "s", MAPOPT_LLM_ERR_HTTP, 1,
       "HTTP 404 from " URL ": model 'test-model' not found"},
      {2, "ttt", MAPOPT_LLM_ERR_TIMEOUT, 3,
       "no reply from " URL " within 120000 ms after 3 attempts"},
      {1, "cc", MAPOPT_LLM_ERR_CONNECT, 2,
       "cannot reach " URL " after 2 attempts: Couldn't connect to server"},
      {0, "c", MAPOPT_LLM_ERR_CONNECT, 1,
       "cannot reach " URL ": Couldn't connect to server"},
      {3, "x", MAPOPT_LLM_ERR_TRANSPORT, 1,
       "request to " URL " failed: replay script exhausted"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    rig g;
    rig_open(&g);
    g.cfg.max_retries = cases[i].retries;
    mapopt_llm_client *c = rig_client(&g);
    for (const char *s = cases[i].script; *s; s++) {
      if (*s == 's')
        add_status(g.t, 404, NULL,
                   "{\"error\":{\"message\":\"model 'test-model' not "
                   "found\"}}");
      else if (*s != 'x')
        assert_int_equal(
            mapopt_llm_replay_fail(g.t,
                                   *s == 't' ? MAPOPT_LLM_NET_TIMEOUT
                                             : MAPOPT_LLM_NET_CONNECT,
                                   *s == 't' ? "Timeout was reached"
                                             : "Couldn't connect to server"),
            MAPOPT_OK);
    }
    mapopt_llm_chat_result *r = chat(c, 1);
    assert_int_equal(r->call.error, cases[i].error);
    assert_int_equal(r->call.attempts, cases[i].attempts);
    assert_int_equal(r->call.nchoices, 0);
    assert_string_equal(r->call.error_text, cases[i].text);
    mapopt_llm_chat_free(r);
    rig_close(&g);
  }
}

static void test_size_cap(void **state) {
  (void)state;
  rig g;
  rig_open(&g);
  g.cfg.max_reply_bytes = 4096;
  mapopt_llm_client *c = rig_client(&g);
  char *big = malloc(100000);
  memset(big, 'x', 100000);
  assert_int_equal(mapopt_llm_replay_add(g.t, 200, NULL, big, 100000),
                   MAPOPT_OK);
  free(big);
  mapopt_llm_chat_result *r = chat(c, 1);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_TOO_LARGE);
  assert_int_equal(r->call.attempts, 1); /* never retried */
  assert_string_equal(r->call.error_text,
                      "the reply from " URL " is larger than 4096 bytes");
  mapopt_llm_chat_free(r);
  rig_close(&g);
}

/* ---- replies ------------------------------------------------------------- */

static void test_malformed_replies(void **state) {
  (void)state;
#define USAGE "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}"
  static const struct {
    const char *body;
    const char *why;
  } cases[] = {
      {"", "reply:1:1: error: "},
      {"{\"choices\":[{\"message\":{\"content\":\"x", "reply:1:"},
      {"[1]", "reply:1:1: error: the reply must be an object"},
      {"{}", "missing key \"choices\" in the reply"},
      {"{\"choices\":{}}", "\"choices\" in the reply must be an array"},
      {"{\"choices\":[]}", "reply:1:12: error: \"choices\" is empty"},
      {"{\"choices\":[1]," USAGE "}", "choices[0] must be an object"},
      {"{\"choices\":[{}]," USAGE "}", "missing key \"message\" in choices[0]"},
      {"{\"choices\":[{\"message\":{\"content\":42}}]," USAGE "}",
       "choices[0].message.content is integer: the model gave no text"},
      {"{\"choices\":[{\"message\":{\"content\":null}}]," USAGE "}",
       "choices[0].message.content is null: the model gave no text"},
      {"{\"choices\":[{\"message\":{}}]," USAGE "}",
       "choices[0].message.content is missing: the model gave no text"},
      {"{\"choices\":[{\"message\":{\"content\":\"x\"}}]}",
       "missing key \"usage\" in the reply"},
      {"{\"choices\":[{\"message\":{\"content\":\"x\"}}],\"usage\":{"
       "\"prompt_tokens\":-1,\"completion_tokens\":1}}",
       "\"prompt_tokens\" in \"usage\" must be an integer in [0, "},
      {"{\"choices\":[{\"message\":{\"content\":\"x\"}}],\"usage\":{"
       "\"prompt_tokens\":1,\"completion_tokens\":\"7\"}}",
       "\"completion_tokens\" in \"usage\" must be an integer"},
      {"{\"error\":{\"message\":\"quota exceeded\"}}",
       "the server reported an error: quota exceeded"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    rig g;
    rig_open(&g);
    mapopt_llm_client *c = rig_client(&g);
    add_status(g.t, 200, NULL, cases[i].body);
    mapopt_llm_chat_result *r = chat(c, 1);
    assert_int_equal(r->call.error, MAPOPT_LLM_ERR_REPLY);
    assert_int_equal(r->call.attempts, 1);
    assert_int_equal(r->call.nchoices, 0);
    assert_int_equal(r->call.prompt_tokens, 0);
    const char *prefix = "the reply from " URL " is not a chat completion: ";
    assert_memory_equal(r->call.error_text, prefix, strlen(prefix));
    if (!strstr(r->call.error_text, cases[i].why))
      fail_msg("case %zu: got \"%s\"", i, r->call.error_text);
    mapopt_llm_chat_free(r);
    rig_close(&g);
  }
#undef USAGE
  /* Nesting far past the reader's depth limit is an error, not a crash. */
  rig g;
  rig_open(&g);
  mapopt_llm_client *c = rig_client(&g);
  char deep[20001];
  memset(deep, '[', 20000);
  deep[20000] = '\0';
  add_status(g.t, 200, NULL, deep);
  mapopt_llm_chat_result *r = chat(c, 1);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_REPLY);
  mapopt_llm_chat_free(r);
  rig_close(&g);
}

static void test_choices_and_accounting(void **state) {
  (void)state;
  rig g;
  rig_open(&g);
  g.cfg.price_in = 2.5;
  g.cfg.price_out = 10;
  mapopt_llm_client *c = rig_client(&g);
  const char *texts[3] = {"one", "two", "three"};
  char *body = llm_completion(3, texts, "length", 1000, 2000);
  add_status(g.t, 200, NULL, body);
  free(body);
  /* Unknown fields and an odd finish_reason are ignored; a NUL in a
   * string is refused by the reader (no reply text ever holds one). */
  add_status(g.t, 200, NULL,
             "{\"choices\":[{\"message\":{\"content\":\"ab\"},"
             "\"finish_reason\":7}],\"usage\":{\"prompt_tokens\":5,"
             "\"completion_tokens\":6,\"extra\":true},\"unknown\":[1]}");
  add_status(g.t, 200, NULL,
             "{\"choices\":[{\"message\":{\"content\":\"a\\u0000b\"}}],"
             "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6}}");
  mapopt_llm_chat_result *r = chat(c, 2);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_NONE);
  assert_null(r->call.error_text);
  assert_int_equal(r->call.nchoices, 2); /* never more than asked */
  assert_string_equal(r->choices[1].content, "two");
  assert_true(r->choices[0].truncated);
  assert_int_equal(r->call.prompt_tokens, 1000);
  assert_int_equal(r->call.completion_tokens, 2000);
  /* (1000 x 2.5 + 2000 x 10) / 10^6 */
  assert_true(r->call.cost > 0.0224999 && r->call.cost < 0.0225001);
  mapopt_llm_chat_free(r);
  r = chat(c, 1);
  assert_null(r->call.error_text);
  assert_int_equal(r->choices[0].len, 2);
  assert_false(r->choices[0].truncated);
  assert_int_equal(r->call.prompt_tokens, 5);
  mapopt_llm_chat_free(r);
  r = chat(c, 1);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_REPLY);
  assert_non_null(strstr(r->call.error_text, "\\u0000 is not allowed"));
  mapopt_llm_chat_free(r);
  rig_close(&g);
}

/* The key appears nowhere: not in errors built from what a server or a
 * transport said, not in recorded requests. */
static void test_key_redacted(void **state) {
  (void)state;
  rig g;
  rig_open(&g);
  g.cfg.max_retries = 1;
  mapopt_llm_client *c = rig_client(&g);
  add_status(g.t, 401, NULL,
             "{\"error\":{\"message\":\"Incorrect API key provided: " KEY
             "\"}}");
  add_status(g.t, 200, NULL, "{\"error\":\"bad key " KEY "\"}");
  add_status(g.t, 403, NULL, "forbidden for " KEY "\n\x01" KEY KEY);
  assert_int_equal(
      mapopt_llm_replay_fail(g.t, MAPOPT_LLM_NET_FAILED, "proxy refused " KEY),
      MAPOPT_OK);
  static const char *const want[] = {
      "HTTP 401 from " URL ": Incorrect API key provided: [redacted]",
      "the reply from " URL " is not a chat completion: reply:1:10: error: "
      "the server reported an error: bad key [redacted]",
      "HTTP 403 from " URL ": forbidden for [redacted]  [redacted][redacted]",
      "request to " URL " failed: proxy refused [redacted]",
  };
  for (int i = 0; i < 4; i++) {
    mapopt_llm_chat_result *r = chat(c, 1);
    assert_string_equal(r->call.error_text, want[i]);
    mapopt_llm_chat_free(r);
  }
  for (size_t i = 0; i < mapopt_llm_replay_count(g.t); i++) {
    const mapopt_llm_recorded *q = mapopt_llm_replay_request(g.t, i);
    assert_null(strstr(q->headers, KEY));
    assert_null(strstr(q->url, KEY));
    assert_null(strstr(q->body, KEY));
  }
  /* A long server message is cut. */
  char msg[2000];
  memset(msg, 'm', sizeof msg - 1);
  msg[sizeof msg - 1] = '\0';
  add_status(g.t, 400, NULL, msg);
  mapopt_llm_chat_result *r = chat(c, 1);
  assert_int_equal(strlen(r->call.error_text),
                   strlen("HTTP 400 from " URL ": ") + 300 + 3);
  mapopt_llm_chat_free(r);
  rig_close(&g);
}

/* ---- extracting the mapper ----------------------------------------------- */

static void test_reply_parse(void **state) {
  (void)state;
  static const struct {
    const char *reply;
    mapopt_llm_verdict verdict;
    const char *mapper;   /* NULL: none */
    const char *feedback; /* a part of it */
  } cases[] = {
      {"```mapper\nTask * GPU;\n```\n", MAPOPT_LLM_VALID, "Task * GPU;\n", ""},
      {"Here:\n```dsl\nTask * CPU;\n```\nDone.", MAPOPT_LLM_VALID,
       "Task * CPU;\n", ""},
      {"```\nTask * CPU;\n```", MAPOPT_LLM_VALID, "Task * CPU;\n", ""},
      /* The last block of the best tag. */
      {"```mapper\nTask * GPU;\n```\n```mapper\nTask * CPU;\n```",
       MAPOPT_LLM_VALID, "Task * CPU;\n", ""},
      {"```mapper\nTask * GPU;\n```\n```\nnot a mapper\n```", MAPOPT_LLM_VALID,
       "Task * GPU;\n", ""},
      {"```dsl\nTask * OMP;\n```\n```\nTask * GPU;\n```", MAPOPT_LLM_VALID,
       "Task * OMP;\n", ""},
      {"```python\nprint(\"Task * GPU;\")\n```", MAPOPT_LLM_NO_MAPPER, NULL,
       "code blocks were not tagged mapper"},
      /* No fence: the reply itself when it is a mapper. */
      {"Task * GPU;\n", MAPOPT_LLM_VALID, "Task * GPU;\n", ""},
      {"Use the GPUs for everything.", MAPOPT_LLM_NO_MAPPER, NULL,
       "The reply had no fenced code block"},
      {"```mapper\n```\n", MAPOPT_LLM_VALID, "", ""}, /* all defaults */
      {"# Plan\n# use the GPUs\n", MAPOPT_LLM_NO_MAPPER, NULL,
       "The reply had no fenced code block"},
      {" \n\t\n", MAPOPT_LLM_NO_MAPPER, NULL, "The reply was empty."},
      {"", MAPOPT_LLM_NO_MAPPER, NULL, "The reply was empty."},
      /* A block left open runs to the end. */
      {"```mapper\nTask * GPU;\n", MAPOPT_LLM_VALID, "Task * GPU;\n", ""},
      /* A longer fence is closed only by as many backquotes. */
      {"````mapper\nTask * GPU;\n```\n````\n", MAPOPT_LLM_INVALID,
       "Task * GPU;\n```\n", "mapper:2:1: error: Unrecognized character: `"},
      /* Up to three blanks before a fence; tags in any case; blanks after
       * the closing fence. */
      {"   ```Mapper extra words\nTask * GPU;\n   ```  \n", MAPOPT_LLM_VALID,
       "Task * GPU;\n", ""},
      {"    ```mapper\nTask * GPU;\n    ```\n", MAPOPT_LLM_NO_MAPPER, NULL,
       "no fenced code block"},
      {"```mapper\r\nTask * GPU;\r\n```\r\n", MAPOPT_LLM_VALID,
       "Task * GPU;\r\n", ""},
      {"```mapper\nTask * GPU, CPU\nRegion * * GPU FBMEM;\n```",
       MAPOPT_LLM_INVALID, "Task * GPU, CPU\nRegion * * GPU FBMEM;\n",
       "mapper:2:1: error: syntax error, unexpected 'Region', expecting ',' "
       "or ';'\n"},
      {"```mapper\nTask * GPU;\nTask * CPU;\n```", MAPOPT_LLM_VALID,
       "Task * GPU;\nTask * CPU;\n",
       "mapper:2:6: warning: duplicate Task binding for * ignored"},
      {"```mapper\nIndexTaskMap * f;\n```", MAPOPT_LLM_INVALID,
       "IndexTaskMap * f;\n", "error: IndexTaskMap's function undefined"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    mapopt_llm_candidate cand;
    assert_int_equal(mapopt_llm_reply_parse(ctx, cases[i].reply,
                                            strlen(cases[i].reply), false,
                                            65536, NULL, &cand),
                     MAPOPT_OK);
    if (cand.verdict != cases[i].verdict ||
        !strstr(cand.feedback, cases[i].feedback))
      fail_msg("case %zu: %s, feedback \"%s\"", i,
               mapopt_llm_verdict_name(cand.verdict), cand.feedback);
    assert_string_equal(cand.reply, cases[i].reply);
    if (cases[i].mapper)
      assert_string_equal(cand.mapper, cases[i].mapper);
    else
      assert_null(cand.mapper);
    if (cand.verdict == MAPOPT_LLM_VALID)
      assert_non_null(cand.canonical);
    else
      assert_null(cand.canonical);
    mapopt_llm_candidate_destroy(&cand);
  }
}

static void test_reply_limits(void **state) {
  (void)state;
  mapopt_llm_candidate cand;
  const char *r = "```mapper\nTask * GPU, CPU;\n```";
  assert_int_equal(
      mapopt_llm_reply_parse(ctx, r, strlen(r), false, 10, NULL, &cand),
      MAPOPT_OK);
  assert_int_equal(cand.verdict, MAPOPT_LLM_TOO_LARGE);
  assert_string_equal(cand.feedback, "The mapper is 17 bytes long; the limit "
                                     "is 10 bytes. Write a shorter mapper.\n");
  mapopt_llm_candidate_destroy(&cand);

  /* A NUL byte is a character the language does not have. */
  static const char nul[] = "```mapper\nTask * GPU;\0\n```";
  assert_int_equal(mapopt_llm_reply_parse(ctx, nul, sizeof nul - 1, false, 1000,
                                          NULL, &cand),
                   MAPOPT_OK);
  assert_int_equal(cand.verdict, MAPOPT_LLM_INVALID);
  assert_int_equal(cand.mapper_len, 13);
  assert_non_null(strstr(cand.feedback, "Unrecognized character: \\x00"));
  mapopt_llm_candidate_destroy(&cand);

  /* A reply cut at the token limit says so, unless it still compiled. */
  r = "```mapper\nTask * GPU, CPU;\nRegion * * GPU FB";
  assert_int_equal(
      mapopt_llm_reply_parse(ctx, r, strlen(r), true, 1000, NULL, &cand),
      MAPOPT_OK);
  assert_int_equal(cand.verdict, MAPOPT_LLM_INVALID);
  assert_true(cand.truncated);
  assert_non_null(strstr(cand.feedback, "cut off at the token limit"));
  mapopt_llm_candidate_destroy(&cand);
  r = "```mapper\nTask * GPU;\n";
  assert_int_equal(
      mapopt_llm_reply_parse(ctx, r, strlen(r), true, 1000, NULL, &cand),
      MAPOPT_OK);
  assert_int_equal(cand.verdict, MAPOPT_LLM_VALID);
  assert_string_equal(cand.feedback, "");
  mapopt_llm_candidate_destroy(&cand);

  /* The application's names are checked when opts has them (W11). */
  r = "```mapper\nTask calculate_new_curents CPU;\n```";
  mapopt_dsl_options o = llm_circuit.opts;
  o.file = "cand.map";
  assert_int_equal(
      mapopt_llm_reply_parse(ctx, r, strlen(r), false, 1000, &o, &cand),
      MAPOPT_OK);
  assert_int_equal(cand.verdict, MAPOPT_LLM_VALID);
  assert_non_null(strstr(cand.feedback, "cand.map:1:6: warning: no task "
                                        "named 'calculate_new_curents'"));
  mapopt_llm_candidate_destroy(&cand);

  /* With opts->portable, a mapper the DSL mapper of Legion would not read
   * the same (P21 here) is invalid, its warning the feedback; without, it
   * is valid and the warning is not given. */
  r = "```mapper\ng = Machine(GPU);\ndef f(Task t) { return g[0, 0]; }\n"
      "IndexTaskMap * f;\n```";
  for (int portable = 0; portable < 2; portable++) {
    o.portable = portable;
    assert_int_equal(
        mapopt_llm_reply_parse(ctx, r, strlen(r), false, 1000, &o, &cand),
        MAPOPT_OK);
    assert_int_equal(cand.verdict,
                     portable ? MAPOPT_LLM_INVALID : MAPOPT_LLM_VALID);
    assert_true((strstr(cand.feedback, "cand.map:3:14: warning: the DSL "
                                       "mapper ignores IndexTaskMap bindings "
                                       "to '*'") != NULL) == portable);
    assert_true(portable || cand.canonical);
    mapopt_llm_candidate_destroy(&cand);
  }
}

/* The reference's example is a real mapper: it compiles without a single
 * diagnostic, portability warnings included (the reference describes the
 * portable subset, docs/legion.md), on one node and on several. */
static void test_reference_example(void **state) {
  (void)state;
  const char *ref = mapopt_llm_dsl_reference();
  assert_true(strlen(ref) > 5000);
  const char *shapes[] = {"nodes=1 gpu=4 cpu=4 omp=2", "nodes=2 gpu=4 cpu=8",
                          "nodes=3 gpu=6 cpu=2"};
  for (int i = 0; i < 3; i++) {
    mapopt_machine_shape shape;
    char err[128];
    assert_int_equal(mapopt_shape_parse(shapes[i], &shape, err, sizeof err),
                     MAPOPT_OK);
    mapopt_dsl_options o = {.shape = &shape, .portable = true};
    mapopt_llm_candidate cand;
    assert_int_equal(
        mapopt_llm_reply_parse(ctx, ref, strlen(ref), false, 65536, &o, &cand),
        MAPOPT_OK);
    if (cand.verdict != MAPOPT_LLM_VALID || *cand.feedback)
      fail_msg("%s: %s", shapes[i], cand.feedback);
    assert_non_null(strstr(cand.mapper, "IndexTaskMap CPU cyclic_cpu;"));
    mapopt_llm_candidate_destroy(&cand);
  }
}

/* ---- the step
 * ------------------------------------------------------------------ */

static mapopt_llm_step_result *step(mapopt_llm_client *c) {
  mapopt_llm_prompt_input in = {.run = llm_circuit.run,
                                .machine = llm_circuit.machine};
  mapopt_llm_step_result *r = NULL;
  assert_int_equal(mapopt_llm_step(c, &in, &llm_circuit.opts, &r), MAPOPT_OK);
  return r;
}

static void test_step_samples(void **state) {
  (void)state;
  rig g;
  rig_open(&g);
  g.cfg.samples = 3;
  mapopt_llm_client *c = rig_client(&g);
  /* The server gives one choice where three were asked, then two. */
  add_completion(g.t, "```mapper\nTask * GPU, CPU;\n```");
  const char *two[2] = {"```mapper\nTask * CPU;\n```", "I cannot help."};
  char *body = llm_completion(2, two, "stop", 300, 40);
  add_status(g.t, 200, NULL, body);
  free(body);
  mapopt_llm_step_result *r = step(c);
  assert_int_equal(r->ncalls, 2);
  assert_int_equal(r->ncandidates, 3);
  assert_int_equal(r->candidates[0].call, 0);
  assert_int_equal(r->candidates[1].call, 1);
  assert_int_equal(r->candidates[2].call, 1);
  assert_int_equal(r->candidates[0].verdict, MAPOPT_LLM_VALID);
  assert_string_equal(r->candidates[0].canonical, "Task * GPU, CPU;\n");
  assert_int_equal(r->candidates[2].verdict, MAPOPT_LLM_NO_MAPPER);
  assert_int_equal(r->prompt_tokens, 400);
  assert_int_equal(r->completion_tokens, 60);
  assert_non_null(strstr(mapopt_llm_replay_request(g.t, 0)->body, ",\"n\":3}"));
  assert_non_null(strstr(mapopt_llm_replay_request(g.t, 1)->body, ",\"n\":2}"));
  /* The messages are the prompt, byte for byte. */
  mapopt_llm_prompt_input in = {.run = llm_circuit.run,
                                .machine = llm_circuit.machine};
  mapopt_llm_prompt p;
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  const mapopt_llm_recorded *q = mapopt_llm_replay_request(g.t, 0);
  json_error_t err;
  json_t *j = json_loadb(q->body, q->body_len, 0, &err);
  json_t *msgs = json_object_get(j, "messages");
  assert_string_equal(
      json_string_value(json_object_get(json_array_get(msgs, 0), "role")),
      "system");
  assert_string_equal(
      json_string_value(json_object_get(json_array_get(msgs, 0), "content")),
      p.system);
  assert_string_equal(
      json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
      p.user);
  json_decref(j);
  mapopt_llm_prompt_destroy(&p);
  mapopt_llm_step_free(r);
  rig_close(&g);

  /* One request per sample without n; a failure ends the step and keeps
   * what came before. */
  rig_open(&g);
  g.cfg.samples = 3;
  g.cfg.use_n = false;
  c = rig_client(&g);
  add_completion(g.t, "```mapper\nTask * GPU, CPU;\n```");
  add_status(g.t, 401, NULL, "{\"error\":{\"message\":\"no\"}}");
  add_completion(g.t, "```mapper\nTask * CPU;\n```");
  r = step(c);
  assert_int_equal(r->ncalls, 2);
  assert_int_equal(r->ncandidates, 1);
  assert_int_equal(r->calls[1].error, MAPOPT_LLM_ERR_HTTP);
  assert_int_equal(mapopt_llm_replay_count(g.t), 2);
  assert_null(strstr(mapopt_llm_replay_request(g.t, 0)->body, "\"n\""));
  mapopt_llm_step_free(r);
  rig_close(&g);
}

/* A server that refuses "n" with 400 is asked one sample at a time. */
static void test_step_refused_n(void **state) {
  (void)state;
  rig g;
  rig_open(&g);
  g.cfg.samples = 2;
  mapopt_llm_client *c = rig_client(&g);
  add_status(g.t, 400, NULL,
             "{\"error\":{\"message\":\"Only one completion choice is "
             "allowed\"}}");
  add_completion(g.t, "```mapper\nTask * GPU, CPU;\n```");
  add_completion(g.t, "```mapper\nTask * CPU;\n```");
  mapopt_llm_step_result *r = step(c);
  assert_int_equal(r->ncalls, 3);
  assert_int_equal(r->ncandidates, 2);
  assert_int_equal(r->calls[0].error, MAPOPT_LLM_ERR_HTTP);
  assert_int_equal(r->candidates[0].call, 1);
  assert_int_equal(r->candidates[1].call, 2);
  assert_non_null(strstr(mapopt_llm_replay_request(g.t, 0)->body, "\"n\":2"));
  assert_null(strstr(mapopt_llm_replay_request(g.t, 1)->body, "\"n\""));
  assert_null(strstr(mapopt_llm_replay_request(g.t, 2)->body, "\"n\""));
  mapopt_llm_step_free(r);
  rig_close(&g);
}

/* The same script and seed, the same outcome, byte for byte. */
static void test_step_deterministic(void **state) {
  (void)state;
  char *dumps[2];
  for (int run = 0; run < 2; run++) {
    rig g;
    rig_open(&g);
    g.cfg.samples = 2;
    g.cfg.seed = 99;
    mapopt_llm_client *c = rig_client(&g);
    add_status(g.t, 503, NULL, "{}");
    assert_int_equal(
        mapopt_llm_replay_fail(g.t, MAPOPT_LLM_NET_TIMEOUT, "Timeout"),
        MAPOPT_OK);
    const char *two[2] = {"```mapper\nTask * GPU, CPU\n```",
                          "```mapper\nTask * GPU, CPU;\n```"};
    char *body = llm_completion(2, two, "stop", 300, 40);
    add_status(g.t, 200, NULL, body);
    free(body);
    mapopt_llm_step_result *r = step(c);
    dumps[run] = llm_step_dump(r);
    mapopt_llm_step_free(r);
    rig_close(&g);
  }
  assert_string_equal(dumps[0], dumps[1]);
  assert_non_null(strstr(dumps[0], "call 0: NONE http 200 attempts 3"));
  assert_non_null(strstr(dumps[0], "candidate 0 (call 0): invalid"));
  free(dumps[0]);
  free(dumps[1]);
}

/* Every allocation of a whole step may fail: the step says ENOMEM and
 * leaks nothing. */
static void test_step_enomem(void **state) {
  (void)state;
  long n;
  for (n = 1;; n++) {
    failing_alloc fa = {.left = n - 1};
    mapopt_ctx *fctx;
    if (mapopt_ctx_new(failing_realloc, &fa, &fctx) != MAPOPT_OK)
      continue;
    mapopt_llm_config cfg;
    fake_time ft;
    config(&cfg, &ft);
    cfg.samples = 2;
    mapopt_llm_transport *t = NULL;
    mapopt_llm_client *c = NULL;
    mapopt_status st = mapopt_llm_replay_new(fctx, &t);
    const char *two[2] = {"```mapper\nTask * GPU, CPU;\n```", "no"};
    char *body = llm_completion(2, two, "stop", 300, 40);
    if (st == MAPOPT_OK)
      st = mapopt_llm_replay_add(t, 500, "Retry-After: 1", "{}", 2);
    if (st == MAPOPT_OK)
      st = mapopt_llm_replay_add(t, 200, NULL, body, strlen(body));
    free(body);
    char err[128];
    if (st == MAPOPT_OK)
      st = mapopt_llm_client_new(fctx, &cfg, t, &c, err, sizeof err);
    bool setup = st == MAPOPT_OK;
    mapopt_llm_step_result *r = NULL;
    if (setup) {
      mapopt_llm_prompt_input in = {.run = llm_circuit.run,
                                    .machine = llm_circuit.machine};
      st = mapopt_llm_step(c, &in, &llm_circuit.opts, &r);
      if (st == MAPOPT_OK)
        assert_int_equal(r->ncandidates, 2);
      else if (st != MAPOPT_ENOMEM)
        fail_msg("allocation %ld: %s", n, mapopt_status_name(st));
      mapopt_llm_step_free(r);
    }
    bool done = setup && !fa.failed;
    mapopt_llm_client_free(c);
    mapopt_llm_transport_free(t);
    mapopt_ctx_free(fctx);
    assert_int_equal(fa.live, 0);
    if (done)
      break;
  }
  print_message("the step succeeded from allocation %ld on\n", n);
  assert_true(n > 30);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_config_env),
      cmocka_unit_test(test_config_check),
      cmocka_unit_test(test_client_url),
      cmocka_unit_test(test_request_bytes),
      cmocka_unit_test(test_request_utf8),
      cmocka_unit_test(test_retry_backoff),
      cmocka_unit_test(test_retry_after),
      cmocka_unit_test(test_usage_bounded),
      cmocka_unit_test(test_stop_in_backoff),
      cmocka_unit_test(test_final_errors),
      cmocka_unit_test(test_size_cap),
      cmocka_unit_test(test_malformed_replies),
      cmocka_unit_test(test_choices_and_accounting),
      cmocka_unit_test(test_key_redacted),
      cmocka_unit_test(test_reply_parse),
      cmocka_unit_test(test_reply_limits),
      cmocka_unit_test(test_reference_example),
      cmocka_unit_test(test_step_samples),
      cmocka_unit_test(test_step_refused_n),
      cmocka_unit_test(test_step_deterministic),
      cmocka_unit_test(test_step_enomem),
  };
  return cmocka_run_group_tests(tests, llm_circuit_setup, llm_circuit_teardown);
}
