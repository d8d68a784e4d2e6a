/*
 * The LLM client over real HTTP: the curl transport against llm_server,
 * the scripted chat-completions server (llm_server.c), for every failure a
 * real server can produce -- valid mappers, syntax errors, prose, a block
 * in another language, a reply cut at the token limit, truncated JSON,
 * missing usage, null content, 500 then 200, 429 with Retry-After (and one
 * past the cap), a dropped connection, a hang past the timeout, a
 * persistent 503, a 400, 10 MB replies with and without Content-Length, a
 * wrong or missing key, an unknown model, and no server at all. And the
 * llm optimizer in a tuning run against the server, every failure mixed
 * into its replies: the run completes its budget, records each call's
 * status, and records the same rows when run again.
 *
 *   test_llm_http LLM_SERVER SCRIPT
 *
 * The test starts the server on an ephemeral port (it writes the port to
 * a file) and stops it at the end. Sleeps are faked, so Retry-After and
 * backoff cost no time; only the two hang cases wait for the client's
 * 300 ms timeout. Every case runs twice and must give byte-identical
 * outcomes; the key must appear in none of them.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../unit/fixture.h"
#include "llm_fixture.h"
#include "mapopt/tune.h"

#define KEY "sk-test-SECRET-0042"

static const char *server_path, *script_path;
static char dir[] = "/tmp/mapopt-llm-XXXXXX";
static char base[160];  /* http://127.0.0.1:PORT/v1 */
static char origin[64]; /* http://127.0.0.1:PORT */
static pid_t server_pid;
static llm_world world;

static char *path_in(const char *name) {
  static char buf[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static int start_server(void **state) {
  if (fixture_setup(state) || !mkdtemp(dir))
    return -1;
  if (llm_world_open(ctx, "circuit", "p100x4", &world))
    return -1;
  server_pid = fork();
  if (server_pid == 0) {
    execl(server_path, server_path, "--script", script_path, "--port-file",
          path_in("port"), "--log", path_in("log"), "--key", KEY, (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 1000; i++) {
    FILE *f = fopen(path_in("port"), "r");
    int port = 0;
    if (f && fscanf(f, "%d", &port) == 1 && port > 0) {
      fclose(f);
      snprintf(origin, sizeof origin, "http://127.0.0.1:%d", port);
      snprintf(base, sizeof base, "%s/v1", origin);
      return 0;
    }
    if (f)
      fclose(f);
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "llm_server did not start\n");
  return -1;
}

static int stop_server(void **state) {
  if (server_pid > 0) {
    kill(server_pid, SIGTERM);
    waitpid(server_pid, NULL, 0);
  }
  unlink(path_in("port"));
  unlink(path_in("log"));
  rmdir(dir);
  llm_world_close(&world);
  return fixture_teardown(state);
}

/* Starts every scripted model over (POST /reset). */
static void reset_server(void) {
  mapopt_llm_transport *t;
  assert_int_equal(mapopt_llm_curl_new(ctx, &t), MAPOPT_OK);
  char url[sizeof base + 8];
  snprintf(url, sizeof url, "%s/reset", base);
  mapopt_llm_request req = {url, NULL, 0, "", 0, 10000, NULL};
  mapopt_llm_response r;
  mapopt_llm_response_init(&r, ctx, 4096);
  assert_int_equal(t->type->send(t, &req, &r), MAPOPT_OK);
  assert_int_equal(r.net, MAPOPT_LLM_NET_OK);
  assert_int_equal(r.status, 200);
  mapopt_llm_response_destroy(&r);
  mapopt_llm_transport_free(t);
}

/* Replaces every occurrence of origin in s by "SERVER" (in place). */
static void normalize(char *s) {
  size_t n = strlen(origin);
  for (char *p; (p = strstr(s, origin));) {
    memcpy(p, "SERVER", 6);
    memmove(p + 6, p + n, strlen(p + n) + 1);
  }
}

typedef struct hcase {
  const char *model;
  int samples;
  int retries;
  int64_t timeout_ms;
  const char *key;
  /* What must come out. */
  size_t ncalls;
  const char *verdicts;   /* per candidate: V valid, I invalid, N no mapper */
  mapopt_llm_error error; /* of the last call */
  int attempts;           /* of the last call */
  int64_t waited_lo, waited_hi;
  const char *text; /* in the last call's error, or the first feedback */
} hcase;

#define CHAT "SERVER/v1/chat/completions"

static const hcase cases[] = {
    {"valid", 1, 4, 10000, KEY, 1, "V", MAPOPT_LLM_ERR_NONE, 1, 0, 0, ""},
    {"syntax", 1, 4, 10000, KEY, 1, "I", MAPOPT_LLM_ERR_NONE, 1, 0, 0,
     "mapper:2:1: error: syntax error, unexpected 'Region', expecting ',' "
     "or ';'\n"},
    {"prose", 1, 4, 10000, KEY, 1, "N", MAPOPT_LLM_ERR_NONE, 1, 0, 0,
     "The reply had no fenced code block"},
    {"python", 1, 4, 10000, KEY, 1, "N", MAPOPT_LLM_ERR_NONE, 1, 0, 0,
     "code blocks were not tagged mapper"},
    {"cut", 1, 4, 10000, KEY, 1, "I", MAPOPT_LLM_ERR_NONE, 1, 0, 0,
     "cut off at the token limit"},
    {"three", 3, 4, 10000, KEY, 1, "VVI", MAPOPT_LLM_ERR_NONE, 1, 0, 0, ""},
    {"one-per-call", 2, 4, 10000, KEY, 2, "VV", MAPOPT_LLM_ERR_NONE, 1, 0, 0,
     ""},
    {"truncated", 1, 4, 10000, KEY, 1, "", MAPOPT_LLM_ERR_REPLY, 1, 0, 0,
     "the reply from " CHAT " is not a chat completion: reply:1:"},
    {"no-usage", 1, 4, 10000, KEY, 1, "", MAPOPT_LLM_ERR_REPLY, 1, 0, 0,
     "missing key \"usage\" in the reply"},
    {"null-content", 1, 4, 10000, KEY, 1, "", MAPOPT_LLM_ERR_REPLY, 1, 0, 0,
     "choices[0].message.content is null: the model gave no text"},
    {"retry500", 1, 4, 10000, KEY, 1, "V", MAPOPT_LLM_ERR_NONE, 2, 500, 1000,
     ""},
    {"retry429", 1, 4, 10000, KEY, 1, "V", MAPOPT_LLM_ERR_NONE, 2, 2000, 2000,
     ""},
    {"retry429-long", 1, 4, 10000, KEY, 1, "V", MAPOPT_LLM_ERR_NONE, 2, 3000,
     3000, ""},
    {"down", 1, 4, 10000, KEY, 1, "V", MAPOPT_LLM_ERR_NONE, 2, 500, 1000, ""},
    {"hang", 1, 4, 300, KEY, 1, "V", MAPOPT_LLM_ERR_NONE, 2, 500, 1000, ""},
    {"always503", 1, 2, 10000, KEY, 1, "", MAPOPT_LLM_ERR_HTTP, 3, 1500, 3000,
     "HTTP 503 from " CHAT " after 3 attempts: the model is overloaded"},
    {"hang-always", 1, 1, 300, KEY, 1, "", MAPOPT_LLM_ERR_TIMEOUT, 2, 500, 1000,
     "no reply from " CHAT " within 300 ms after 2 attempts"},
    {"bad-request", 1, 4, 10000, KEY, 1, "", MAPOPT_LLM_ERR_HTTP, 1, 0, 0,
     "HTTP 400 from " CHAT ": max_tokens is too large: 4096 > 2048"},
    {"big-length", 1, 4, 10000, KEY, 1, "", MAPOPT_LLM_ERR_TOO_LARGE, 1, 0, 0,
     "the reply from " CHAT " is larger than 1048576 bytes"},
    {"big-stream", 1, 4, 10000, KEY, 1, "", MAPOPT_LLM_ERR_TOO_LARGE, 1, 0, 0,
     "the reply from " CHAT " is larger than 1048576 bytes"},
    {"valid", 1, 4, 10000, "sk-WRONG-key-777", 1, "", MAPOPT_LLM_ERR_HTTP, 1, 0,
     0, "HTTP 401 from " CHAT ": Incorrect API key provided: [redacted]"},
    {"valid", 1, 4, 10000, NULL, 1, "", MAPOPT_LLM_ERR_HTTP, 1, 0, 0,
     "HTTP 401 from " CHAT ": Incorrect API key provided: (none)"},
    {"no-such-model", 1, 4, 10000, KEY, 1, "", MAPOPT_LLM_ERR_HTTP, 1, 0, 0,
     "HTTP 404 from " CHAT ": no such model in the script"},
};

/* Runs one case on a fresh server script; returns its normalized dump. */
static char *run_case(size_t index, const char *url) {
  const hcase *h = &cases[index];
  reset_server();
  mapopt_llm_config cfg;
  mapopt_llm_config_init(&cfg);
  fake_time ft;
  fake_time_use(&ft, &cfg);
  cfg.base_url = url;
  cfg.model = h->model;
  cfg.api_key = h->key;
  cfg.samples = h->samples;
  cfg.max_retries = h->retries;
  cfg.timeout_ms = h->timeout_ms;
  cfg.retry_after_max_ms = 3000;
  cfg.seed = 11;
  cfg.price_in = 0.5;
  cfg.price_out = 1.5;
  mapopt_llm_transport *t;
  mapopt_llm_client *c;
  char err[256];
  assert_int_equal(mapopt_llm_curl_new(ctx, &t), MAPOPT_OK);
  assert_int_equal(mapopt_llm_client_new(ctx, &cfg, t, &c, err, sizeof err),
                   MAPOPT_OK);
  mapopt_llm_prompt_input in = {.run = world.run, .machine = world.machine};
  mapopt_llm_step_result *r = NULL;
  assert_int_equal(mapopt_llm_step(c, &in, &world.opts, &r), MAPOPT_OK);
  char *dump = llm_step_dump(r);
  normalize(dump);
  if (getenv("SHOW"))
    fprintf(stderr, "=== %s\n%s", h->model, dump);

  char what[64];
  snprintf(what, sizeof what, "case %zu (%s)", index, h->model);
  if (r->ncalls != h->ncalls || r->ncandidates != strlen(h->verdicts))
    fail_msg("%s: %zu calls, %zu candidates:\n%s", what, r->ncalls,
             r->ncandidates, dump);
  for (size_t i = 0; i < r->ncandidates; i++) {
    char v = "VINT"[r->candidates[i].verdict];
    if (v != h->verdicts[i])
      fail_msg("%s: candidate %zu is %c:\n%s", what, i, v, dump);
  }
  const mapopt_llm_call *last = &r->calls[r->ncalls - 1];
  if (last->error != h->error || last->attempts != h->attempts ||
      last->waited_ms < h->waited_lo || last->waited_ms > h->waited_hi)
    fail_msg("%s: unexpected call outcome:\n%s", what, dump);
  char *text = last->error_text ? strdup(last->error_text)
                                : strdup(r->candidates[0].feedback);
  normalize(text);
  if (!strstr(text, h->text))
    fail_msg("%s: no \"%s\" in \"%s\"", what, h->text, text);
  free(text);
  if (last->error == MAPOPT_LLM_ERR_NONE) {
    /* The server counts a token per 4 bytes of the messages: tokens and
     * cost are the server's figures, added up over the calls. */
    mapopt_llm_prompt p;
    assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
    int64_t per_call = (int64_t)(p.system_len + p.user_len + 3) / 4;
    mapopt_llm_prompt_destroy(&p);
    assert_int_equal(r->prompt_tokens, per_call * (int64_t)r->ncalls);
    assert_true(r->completion_tokens > 0);
    double cost = (r->prompt_tokens * 0.5 + r->completion_tokens * 1.5) / 1e6;
    assert_true(r->cost > cost * 0.999999 && r->cost < cost * 1.000001);
  }
  if (h->verdicts[0] == 'V' && !strcmp(h->model, "valid"))
    assert_non_null(
        strstr(r->candidates[0].canonical, "IndexTaskMap GPU block;"));
  if (strstr(dump, KEY) || strstr(dump, "sk-WRONG-key-777"))
    fail_msg("%s: the key leaked:\n%s", what, dump);
  mapopt_llm_step_free(r);
  mapopt_llm_client_free(c);
  mapopt_llm_transport_free(t);
  return dump;
}

static void test_scripted_server(void **state) {
  (void)state;
  size_t n = sizeof cases / sizeof *cases;
  char **first = calloc(n, sizeof *first);
  for (int run = 0; run < 2; run++)
    for (size_t i = 0; i < n; i++) {
      char *dump = run_case(i, base);
      if (run == 0) {
        first[i] = dump;
        continue;
      }
      if (strcmp(first[i], dump))
        fail_msg("%s: the second run differs:\n%s\n---\n%s", cases[i].model,
                 first[i], dump);
      free(dump);
      free(first[i]);
    }
  free(first);

  /* The server saw the key as a Bearer token on every request but the
   * two key cases, and n as the step asked it. */
  FILE *f = fopen(path_in("log"), "r");
  assert_non_null(f);
  char line[512];
  int ok = 0, bad = 0, none = 0, n2 = 0;
  while (fgets(line, sizeof line, f)) {
    ok += strstr(line, "auth=ok") != NULL;
    bad += strstr(line, "auth=bad") != NULL;
    none += strstr(line, "auth=none") != NULL;
    if (strstr(line, "model=one-per-call n=2"))
      n2++;
  }
  fclose(f);
  assert_int_equal(bad, 2);  /* the wrong key, in each run */
  assert_int_equal(none, 2); /* no key */
  assert_true(ok > 30);
  assert_int_equal(n2, 2);
}

/* A tuning run of the llm optimizer against the server (model "mixed" of
 * the script): truncated JSON, a 500 then a 200, a 429 with Retry-After, a
 * hang past the timeout, a 10 MB reply and a dropped connection between
 * replies with mappers, a syntax error, prose and a reply cut at the token
 * limit. Failed prompts cost no iteration; the run spends its budget. */
static void test_tune_mixed(void **state) {
  (void)state;
  char *rows[2];
  for (int k = 0; k < 2; k++) {
    reset_server();
    const char *path = path_in("tune.db");
    mapopt_tune_db *db;
    assert_int_equal(mapopt_tune_db_open(ctx, path, diags, &db), MAPOPT_OK);
    mapopt_tune_llm llm = {.history = 3};
    mapopt_llm_config_init(&llm.client);
    fake_time ft;
    fake_time_use(&ft, &llm.client);
    llm.client.base_url = base;
    llm.client.model = "mixed";
    llm.client.api_key = KEY;
    llm.client.max_retries = 1;
    llm.client.timeout_ms = 300;
    mapopt_tune_problem p = {.machine = world.machine, .run = world.run};
    mapopt_tune_config c = {.app = "circuit",
                            .machine = "p100x4",
                            .optimizer = "llm",
                            .budget = 6,
                            .feedback = "raw",
                            .llm = &llm};
    mapopt_tune_options o = {.jobs = 2};
    mapopt_tune_outcome out;
    assert_int_equal(mapopt_tune_run(ctx, db, &p, &c, &o, diags, &out),
                     MAPOPT_OK);
    assert_int_equal(out.end, MAPOPT_TUNE_END_DONE);
    assert_int_equal(out.evaluations, 6);
    assert_int_equal(out.llm.calls, 8);
    assert_int_equal(out.llm.failed_calls, 2);
    assert_int_equal(out.llm.replies, 6);
    assert_true(out.llm.prompt_tokens > 6000);
    rows[k] = llm_tune_rows(path, out.run);
    assert_non_null(rows[k]);
    normalize(rows[k]);
    mapopt_tune_outcome_clear(&out);
    mapopt_tune_db_close(db);
    unlink(path);
    unlink(path_in("tune.db-wal"));
    unlink(path_in("tune.db-shm"));
  }
  assert_string_equal(rows[0], rows[1]);
  /* Each evaluation, in order, and each call's status and attempts. */
  static const char *const want[] = {
      "0|",
      "|ok|",
      "|llm step 1 sample 1: valid|",
      "1|",
      "|ok|",
      "|llm step 3 sample 1: valid|",
      "2|",
      "|invalid|0.0|llm step 4 sample 1: invalid|Compile Error",
      "3|",
      "|invalid|0.0|llm step 5 sample 1: no-mapper|The reply had no",
      "4|",
      "|ok|",
      "|llm step 7 sample 1: valid|",
      "5|",
      "|invalid|0.0|llm step 8 sample 1: invalid|",
      "0|0|ok|200|1|1|",
      "1|0|reply|200|1|0|0|0|0.0|0.0|the reply from SERVER/v1/chat/"
      "completions is not a chat completion",
      "2|0|ok|200|2|1|",
      "3|0|ok|200|2|1|",
      "|2.0|0.0|NULL|", /* the Retry-After wait */
      "4|0|ok|200|2|1|",
      "5|0|too-large|NULL|1|0|0|0|0.0|0.0|the reply from SERVER/v1/chat/"
      "completions is larger than 1048576 bytes",
      "6|0|ok|200|1|1|",
      "7|0|ok|200|2|1|",
      "7|0|0|invalid|1|```mapper"};
  const char *p = rows[0];
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const char *q = strstr(p, want[i]);
    if (!q)
      fail_msg("'%s' missing, in order, from:\n%s", want[i], rows[0]);
    p = q + strlen(want[i]);
  }
  assert_null(strstr(rows[0], KEY));
  free(rows[0]);
  free(rows[1]);
}

/* A configuration for the server at url asking for model, with fake
 * time. */
static void curl_config(mapopt_llm_config *cfg, fake_time *ft, const char *url,
                        const char *model) {
  mapopt_llm_config_init(cfg);
  fake_time_use(ft, cfg);
  cfg->base_url = url;
  cfg->model = model;
  cfg->api_key = KEY;
}

/* A client of cfg over a new libcurl transport (*t, freed after it). */
static mapopt_llm_client *curl_client(const mapopt_llm_config *cfg,
                                      mapopt_llm_transport **t) {
  mapopt_llm_client *c;
  char err[256];
  assert_int_equal(mapopt_llm_curl_new(ctx, t), MAPOPT_OK);
  assert_int_equal(mapopt_llm_client_new(ctx, cfg, *t, &c, err, sizeof err),
                   MAPOPT_OK);
  return c;
}

/* A port where nothing listens: connection refused, retried, reported.
 * The port stays bound to a socket that never listens for the whole test,
 * so that no other process can take it meanwhile (closing it first, the
 * test assumed it would stay free); a connection to it is refused as to a
 * closed port. */
static void test_no_server(void **state) {
  (void)state;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof a;
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", ntohs(a.sin_port));
  mapopt_llm_config cfg;
  fake_time ft;
  curl_config(&cfg, &ft, url, "m");
  cfg.max_retries = 2;
  mapopt_llm_transport *t;
  mapopt_llm_client *c = curl_client(&cfg, &t);
  const mapopt_llm_message msg = {"user", "hello"};
  mapopt_llm_chat_result *r;
  assert_int_equal(mapopt_llm_chat(c, &msg, 1, 1, &r), MAPOPT_OK);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_CONNECT);
  assert_int_equal(r->call.attempts, 3);
  assert_int_equal(ft.nwaits, 2);
  char want[256];
  snprintf(want, sizeof want,
           "cannot reach %s/chat/completions after 3 attempts: Couldn't "
           "connect to server",
           url);
  assert_string_equal(r->call.error_text, want);
  mapopt_llm_chat_free(r);
  mapopt_llm_client_free(c);
  mapopt_llm_transport_free(t);
  close(fd);
}

/* Lines of the server's log that name model (requests it received). */
static int logged(const char *model) {
  FILE *f = fopen(path_in("log"), "r");
  char line[512], want[160];
  snprintf(want, sizeof want, "model=%s ", model);
  int n = 0;
  while (f && fgets(line, sizeof line, f))
    n += !strncmp(line, want, strlen(want));
  if (f)
    fclose(f);
  return n;
}

static volatile sig_atomic_t http_stop;
static int hang_seen;

/* Raises the stop once the server has the request (it logs it before it
 * hangs), as Ctrl-C would in the middle of a call. */
static void *stop_when_received(void *arg) {
  (void)arg;
  for (int i = 0; i < 6000 && logged("hang-always") <= hang_seen; i++) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  http_stop = 1;
  return NULL;
}

/* A stop while a request hangs abandons it (libcurl's progress callback),
 * long before its 120 s timeout: the call ends interrupted, not retried. */
static void test_stop_in_flight(void **state) {
  (void)state;
  reset_server();
  mapopt_llm_config cfg;
  fake_time ft;
  curl_config(&cfg, &ft, base, "hang-always");
  cfg.stop = &http_stop;
  http_stop = 0;
  hang_seen = logged("hang-always");
  mapopt_llm_transport *t;
  mapopt_llm_client *c = curl_client(&cfg, &t);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, stop_when_received, NULL), 0);
  const mapopt_llm_message msg = {"user", "hello"};
  mapopt_llm_chat_result *r;
  assert_int_equal(mapopt_llm_chat(c, &msg, 1, 1, &r), MAPOPT_OK);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(r->call.error, MAPOPT_LLM_ERR_INTERRUPTED);
  assert_int_equal(r->call.attempts, 1);
  assert_int_equal(ft.nwaits, 0);
  mapopt_llm_chat_free(r);
  mapopt_llm_client_free(c);
  mapopt_llm_transport_free(t);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_llm_http LLM_SERVER SCRIPT\n");
    return 2;
  }
  server_path = argv[1];
  script_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scripted_server),
      cmocka_unit_test(test_no_server),
      cmocka_unit_test(test_stop_in_flight),
      cmocka_unit_test(test_tune_mixed),
  };
  return cmocka_run_group_tests(tests, start_server, stop_server);
}
