/*
 * The llm optimizer (src/tune/opt_llm.c) over the replay transport, with
 * fake time: what each prompt holds (the application unnamed, the best
 * mapper and its feedback, the attempts in ascending order of score, a
 * repeat marked), the candidates it proposes (a mapper as itself, a reply
 * without one as a failure), several samples per prompt, failed prompts
 * (no iteration spent; three in a row, or one refused, fail the ask), a
 * model that only repeats itself, the records of calls and replies, the
 * API key redacted from replies; and the optimizer in the tuning driver:
 * the database rows of a run (calls, replies, evaluations), the same rows
 * from a second run, the outcome's sums, a resumed run that replays the
 * recorded replies instead of asking again, and a server that keeps
 * failing (the run is interrupted with the reason).
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "../llm/llm_fixture.h"
#include "fixture.h"
#include "mapopt/sim.h"
#include "mapopt/tune.h"
#include "tune/tune.h"

#define KEY "sk-unit-SECRET-5150"

static const char mapper_a[] = "Task * GPU, CPU;\nRegion * * GPU FBMEM;\n";
static const char mapper_b[] =
    "Task * GPU, CPU;\nRegion calculate_new_currents rp_ghost GPU ZCMEM;\n";
static const char mapper_c[] = "Task * CPU;\n";

/* What the optimizer works on: circuit:small on p100x4, its space, a
 * replay transport with fake time. */
typedef struct world {
  mapopt_machine *m;
  mapopt_app *app;
  mapopt_app_run *run;
  mapopt_space *space;
  mapopt_llm_transport *t;
  fake_time ft;
  mapopt_tune_llm llm;
} world;

/* The world of app (a built-in with its size). */
static void world_open_app(world *w, const char *app) {
  *w = (world){0};
  fixture_target t;
  fixture_target_open(ctx, diags, app, &t);
  w->m = t.m;
  w->app = t.app;
  w->run = t.run;
  assert_int_equal(mapopt_space_new(ctx, w->run, w->m, NULL, diags, &w->space),
                   MAPOPT_OK);
  assert_int_equal(mapopt_llm_replay_new(ctx, &w->t), MAPOPT_OK);
  mapopt_llm_config *c = &w->llm.client;
  mapopt_llm_config_init(c);
  c->base_url = "http://llm.test/v1";
  c->model = "unit-model";
  c->api_key = KEY;
  c->max_retries = 1;
  fake_time_use(&w->ft, c);
  w->llm.history = 2;
  w->llm.transport = w->t;
}

static void world_open(world *w) {
  world_open_app(w, "circuit:small");
}

static void world_close(world *w) {
  mapopt_llm_transport_free(w->t);
  mapopt_space_free(w->space);
  fixture_target_close(&(fixture_target){w->m, w->app, w->run});
}

/* Scripts one completion of n choices (usage 1000 + 100). */
static void add_choices(mapopt_llm_transport *t, int n,
                        const char *const *contents) {
  char *body = llm_completion(n, contents, "stop", 1000, 100);
  assert_int_equal(mapopt_llm_replay_add(t, 200, NULL, body, strlen(body)),
                   MAPOPT_OK);
  free(body);
}

/* Scripts a completion whose one choice is text in a mapper block. */
static void add_mapper(mapopt_llm_transport *t, const char *text) {
  char reply[512];
  snprintf(reply, sizeof reply, "Here it is.\n```mapper\n%s```\n", text);
  const char *c = reply;
  add_choices(t, 1, &c);
}

/* The user message of recorded request i (a copy to free). */
static char *user_message(const mapopt_llm_transport *t, size_t i) {
  const mapopt_llm_recorded *r = mapopt_llm_replay_request(t, i);
  assert_non_null(r);
  json_t *j = json_loadb(r->body, r->body_len, 0, NULL);
  assert_non_null(j);
  json_t *m = json_array_get(json_object_get(j, "messages"), 1);
  char *s = strdup(json_string_value(json_object_get(m, "content")));
  json_decref(j);
  return s;
}

/* The position of needle in hay (which must contain it). */
static size_t at(const char *hay, const char *needle) {
  const char *p = strstr(hay, needle);
  if (!p)
    print_error("missing \"%s\" in:\n%s\n", needle, hay);
  assert_non_null(p);
  return (size_t)(p - hay);
}

static mapopt_optimizer *new_llm(world *w, int batch) {
  mapopt_optimizer_options oo = {
      .seed = 1, .budget = 10, .batch = batch, .llm = &w->llm};
  mapopt_optimizer *opt;
  assert_int_equal(mapopt_optimizer_new(ctx, "llm", w->space, &oo, &opt),
                   MAPOPT_OK);
  return opt;
}

/* Asks one candidate and tells it ev; returns the candidate (cleared by
 * the caller). */
static void ask_tell(mapopt_optimizer *opt, mapopt_candidate *c,
                     const mapopt_evaluation *ev) {
  assert_int_equal(mapopt_optimizer_ask(opt, c), MAPOPT_OK);
  assert_int_equal(mapopt_optimizer_tell(opt, c, ev), MAPOPT_OK);
}

/* Prompts, candidates and records over four steps. */
static void test_prompts_and_candidates(void **state) {
  (void)state;
  world w;
  world_open(&w);
  add_mapper(w.t, mapper_a);
  add_mapper(w.t, "Task * GPU CPU;\n"); /* a syntax error */
  const char *prose = "I would put the ghost nodes in zero-copy memory.";
  add_choices(w.t, 1, &prose);
  add_mapper(w.t, mapper_a); /* a repeat */
  add_mapper(w.t, mapper_b);
  mapopt_optimizer *opt = new_llm(&w, 0);
  mapopt_candidate c;

  /* Step 1: nothing known yet; the application is not named. */
  assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_OK);
  assert_string_equal(c.text, mapper_a);
  assert_null(c.failure);
  assert_null(c.choice);
  assert_string_equal(c.note, "llm step 1 sample 1: valid");
  char *u = user_message(w.t, 0);
  at(u, "None yet: no mapper has been evaluated");
  at(u, "# Application\n");
  at(u, "Write a mapper for this application on p100x4");
  assert_null(strstr(u, "circuit"));
  free(u);
  /* The call and its reply wait for the driver. */
  assert_int_equal(opt->call_recs.len, 1);
  const mapopt__llm_call_rec *cr =
      &MAPOPT__VEC_AT(&opt->call_recs, mapopt__llm_call_rec, 0);
  assert_int_equal(cr->step, 0);
  assert_int_equal(cr->call.prompt_tokens, 1000);
  assert_int_equal(cr->call.completion_tokens, 100);
  assert_int_equal(opt->reply_recs.len, 1);
  assert_int_equal(
      MAPOPT__VEC_AT(&opt->reply_recs, mapopt__llm_reply_rec, 0).verdict,
      MAPOPT_LLM_VALID);
  mapopt__optimizer_drop_records(opt);
  mapopt_evaluation ok = {
      .status = MAPOPT_TUNE_OK, .score = 2.5, .feedback = "FEEDBACK-A"};
  assert_int_equal(mapopt_optimizer_tell(opt, &c, &ok), MAPOPT_OK);
  mapopt_candidate_clear(ctx, &c);

  /* Step 2: the best mapper with its feedback. */
  mapopt_evaluation bad = {.status = MAPOPT_TUNE_INVALID,
                           .feedback = "candidate.map:1:12: error: X"};
  ask_tell(opt, &c, &bad);
  assert_string_equal(c.text, "Task * GPU CPU;\n");
  assert_null(c.failure);
  assert_string_equal(c.note, "llm step 2 sample 1: invalid");
  mapopt_candidate_clear(ctx, &c);
  u = user_message(w.t, 1);
  at(u, "# Current best mapper\nAttempt 0, score 2.5:\n```mapper\nTask * "
        "GPU, CPU;");
  at(u, "FEEDBACK-A");
  free(u);

  /* Step 3: prose is proposed as a failure, its reply as the text. */
  assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_OK);
  assert_string_equal(c.text, prose);
  assert_non_null(c.failure);
  at(c.failure, "no fenced code block");
  assert_string_equal(c.note, "llm step 3 sample 1: no-mapper");
  mapopt_evaluation fail = {.status = MAPOPT_TUNE_INVALID,
                            .feedback = c.failure};
  assert_int_equal(mapopt_optimizer_tell(opt, &c, &fail), MAPOPT_OK);
  mapopt_candidate_clear(ctx, &c);
  /* The attempts of the third prompt (history 2): the invalid one; the
   * valid one is the best, shown above only. */
  u = user_message(w.t, 2);
  at(u, "at most 2: the latest");
  at(u, "## Attempt 1: score 0");
  assert_null(strstr(u, "## Attempt 0:"));
  at(u, "candidate.map:1:12: error: X");
  free(u);

  /* Step 4: a repeat of the first mapper, told as a duplicate. */
  mapopt_evaluation dup = ok;
  dup.duplicate = true;
  ask_tell(opt, &c, &dup);
  assert_string_equal(c.text, mapper_a);
  mapopt_candidate_clear(ctx, &c);
  u = user_message(w.t, 3);
  at(u, "(the reply contained no mapper)");
  at(u, "no fenced code block");
  free(u);

  /* Step 5: the repeat is shown as one. */
  assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_OK);
  assert_string_equal(c.text, mapper_b);
  mapopt_candidate_clear(ctx, &c);
  u = user_message(w.t, 4);
  at(u, "## A repeat (not run again): score 2.5");
  at(u, "This mapper repeats one evaluated before");
  /* Out of the history of 2: the latest (the repeat) and the failure
   * since (the prose) are shown, the older failure is listed. */
  assert_null(strstr(u, "## Attempt 1:"));
  at(u, "## Attempt 2: score 0");
  at(u, "Not shown: 1 (score 0).");
  free(u);
  /* Every request carries the key in its header only. */
  for (size_t i = 0; i < mapopt_llm_replay_count(w.t); i++) {
    const mapopt_llm_recorded *r = mapopt_llm_replay_request(w.t, i);
    assert_null(strstr(r->headers, KEY));
    assert_null(memmem(r->body, r->body_len, KEY, strlen(KEY)));
  }
  mapopt_optimizer_free(opt);
  world_close(&w);
}

/* Several samples per prompt: one request with n, one candidate each. */
static void test_samples(void **state) {
  (void)state;
  world w;
  world_open(&w);
  const char *two[] = {"```mapper\nTask * GPU, CPU;\n```",
                       "```mapper\nTask * CPU;\n```"};
  add_choices(w.t, 2, two);
  mapopt_optimizer *opt = new_llm(&w, 2);
  mapopt_candidate c1, c2;
  assert_int_equal(mapopt_optimizer_ask(opt, &c1), MAPOPT_OK);
  assert_int_equal(mapopt_optimizer_ask(opt, &c2), MAPOPT_OK);
  /* The batch is asked before it is told. */
  mapopt_candidate c3;
  assert_int_equal(mapopt_optimizer_ask(opt, &c3), MAPOPT_ENOTFOUND);
  assert_string_equal(c1.note, "llm step 1 sample 1: valid");
  assert_string_equal(c2.note, "llm step 1 sample 2: valid");
  assert_string_equal(c2.text, "Task * CPU;\n");
  assert_int_equal(mapopt_llm_replay_count(w.t), 1);
  const mapopt_llm_recorded *r = mapopt_llm_replay_request(w.t, 0);
  assert_non_null(strstr(r->body, "\"n\":2"));
  assert_int_equal(opt->reply_recs.len, 2);
  mapopt_candidate_clear(ctx, &c1);
  mapopt_candidate_clear(ctx, &c2);
  mapopt_optimizer_free(opt);
  world_close(&w);
}

/* Failed prompts cost no iteration; three in a row fail the ask, a
 * refused one at once; the next ask tries again. */
static void test_failures(void **state) {
  (void)state;
  world w;
  world_open(&w);
  for (int i = 0; i < 6; i++) /* 3 prompts of 2 attempts (1 retry) */
    assert_int_equal(
        mapopt_llm_replay_fail(w.t, MAPOPT_LLM_NET_TIMEOUT, "too slow"),
        MAPOPT_OK);
  const char *e401 = "{\"error\":{\"message\":\"bad key\"}}";
  assert_int_equal(mapopt_llm_replay_add(w.t, 401, NULL, e401, strlen(e401)),
                   MAPOPT_OK);
  const char *trunc = "{\"choices\":[{\"mess";
  assert_int_equal(mapopt_llm_replay_add(w.t, 200, NULL, trunc, strlen(trunc)),
                   MAPOPT_OK);
  add_mapper(w.t, mapper_c);
  mapopt_optimizer *opt = new_llm(&w, 0);
  mapopt_candidate c;
  assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_EIO);
  at(mapopt_optimizer_last_error(opt),
     "the LLM server failed 3 prompts in a row; the last: no reply from "
     "http://llm.test/v1/chat/completions");
  assert_int_equal(opt->call_recs.len, 3);
  for (size_t i = 0; i < 3; i++) {
    const mapopt__llm_call_rec *r =
        &MAPOPT__VEC_AT(&opt->call_recs, mapopt__llm_call_rec, i);
    assert_int_equal(r->step, (int64_t)i);
    assert_int_equal(r->call.error, MAPOPT_LLM_ERR_TIMEOUT);
    assert_int_equal(r->call.attempts, 2);
  }
  assert_int_equal(opt->reply_recs.len, 0);
  mapopt__optimizer_drop_records(opt);
  /* A 401 is not asked again. */
  assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_EIO);
  at(mapopt_optimizer_last_error(opt),
     "the LLM server refused the prompt: HTTP 401");
  assert_int_equal(opt->call_recs.len, 1);
  mapopt__optimizer_drop_records(opt);
  /* Truncated JSON, then a mapper: the ask succeeds, no error left. */
  assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_OK);
  assert_string_equal(mapopt_optimizer_last_error(opt), "");
  assert_string_equal(c.text, mapper_c);
  assert_string_equal(c.note, "llm step 6 sample 1: valid");
  assert_int_equal(opt->call_recs.len, 2);
  assert_int_equal(
      MAPOPT__VEC_AT(&opt->call_recs, mapopt__llm_call_rec, 0).call.error,
      MAPOPT_LLM_ERR_REPLY);
  mapopt_candidate_clear(ctx, &c);
  mapopt_optimizer_free(opt);
  world_close(&w);
}

/* A model that only repeats mappers already evaluated is done after three
 * such prompts. */
static void test_repeats(void **state) {
  (void)state;
  world w;
  world_open(&w);
  for (int i = 0; i < 5; i++)
    add_mapper(w.t, mapper_a);
  mapopt_optimizer *opt = new_llm(&w, 0);
  mapopt_candidate c;
  mapopt_evaluation ok = {.status = MAPOPT_TUNE_OK, .score = 1};
  ask_tell(opt, &c, &ok);
  mapopt_candidate_clear(ctx, &c);
  ok.duplicate = true;
  for (int i = 0; i < 3; i++) {
    ask_tell(opt, &c, &ok);
    mapopt_candidate_clear(ctx, &c);
  }
  assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_ENOTFOUND);
  assert_int_equal(mapopt_llm_replay_count(w.t), 4);
  mapopt_optimizer_free(opt);
  world_close(&w);
}

/* Five attempts with the same long feedback: the sixth prompt shows it
 * once (with the best), the others say "same as"; the rule is stated
 * before the first attempt; the default mapper told before the first ask
 * is in every prompt, and an attempt that ran as it did says so. */
static void test_history_dedupe(void **state) {
  (void)state;
  world w;
  world_open(&w);
  w.llm.history = 5;
  static const char *const mappers[6] = {
      "Task * GPU, CPU;\n",
      "Task * GPU, CPU;\nLayout * * * SOA;\n",
      "Task * GPU, CPU;\nCollectMemory * *;\n",
      "Task * GPU, CPU;\nRegion * * CPU SYSMEM;\n",
      "Task * GPU, CPU;\nRegion * * GPU FBMEM;\n",
      "Task * CPU;\n"};
  for (int i = 0; i < 6; i++)
    add_mapper(w.t, mappers[i]);
  mapopt_optimizer *opt = new_llm(&w, 0);
  static const char same[] =
      "Performance Metric: Execution time is 0.0195 s.\nExplanation: THE "
      "SAME LONG PARAGRAPH.\n";
  mapopt_evaluation base = {.status = MAPOPT_TUNE_OK,
                            .score = 0.5,
                            .elapsed_s = 2,
                            .feedback = "BASELINE-FEEDBACK"};
  assert_int_equal(mapopt__optimizer_baseline(opt, "Task * GPU;\n", &base),
                   MAPOPT_OK);
  mapopt_evaluation ev = {.status = MAPOPT_TUNE_OK,
                          .score = 51.25,
                          .elapsed_s = 0.0195,
                          .feedback = same};
  mapopt_candidate c;
  for (int i = 0; i < 5; i++) {
    ask_tell(opt, &c, &ev);
    assert_string_equal(c.text, mappers[i]);
    mapopt_candidate_clear(ctx, &c);
  }
  assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_OK);
  mapopt_candidate_clear(ctx, &c);
  for (size_t i = 0; i < 6; i++) {
    char *u = user_message(w.t, i);
    at(u, "# Baseline: the default mapper\nEvaluated before the first "
          "attempt, not counted against the budget: score 0.5, elapsed 2 "
          "s.\n```mapper\nTask * GPU;\n```\nFeedback:\nBASELINE-FEEDBACK\n");
    free(u);
  }
  char *u = user_message(w.t, 5);
  const char *first = strstr(u, "THE SAME LONG PARAGRAPH");
  assert_non_null(first);
  assert_null(strstr(first + 1, "THE SAME LONG PARAGRAPH"));
  assert_true(first - u < (long)at(u, "# Attempts"));
  size_t rule = at(u, "\"Same as N\": that feedback was shown already");
  size_t one = at(u, "## Attempt 1: score 51.25, elapsed 0.0195 s\n");
  assert_true(rule < one);
  for (int i = 1; i < 5; i++) {
    char head[64];
    snprintf(head, sizeof head, "## Attempt %d: score 51.25", i);
    const char *h = strstr(u, head);
    assert_non_null(h);
    const char *f = strstr(h, "Feedback: same as attempt 0.\n");
    assert_non_null(f);
    const char *next = strstr(h + 1, "## ");
    assert_true(!next || f < next);
  }
  free(u);
  mapopt_optimizer_free(opt);
  world_close(&w);
}

/* A reply that quotes the key: it is redacted before anything reads it. */
static void test_key_redacted(void **state) {
  (void)state;
  world w;
  world_open(&w);
  add_mapper(w.t, "# the key is " KEY "\nTask * GPU, CPU;\n");
  mapopt_optimizer *opt = new_llm(&w, 0);
  mapopt_candidate c;
  assert_int_equal(mapopt_optimizer_ask(opt, &c), MAPOPT_OK);
  assert_null(strstr(c.text, KEY));
  at(c.text, "# the key is [redacted]");
  const mapopt__llm_reply_rec *r =
      &MAPOPT__VEC_AT(&opt->reply_recs, mapopt__llm_reply_rec, 0);
  assert_null(strstr(r->reply, KEY));
  mapopt_candidate_clear(ctx, &c);
  mapopt_optimizer_free(opt);
  world_close(&w);
}

/* Settings the optimizer refuses. */
static void test_settings(void **state) {
  (void)state;
  world w;
  world_open(&w);
  mapopt_optimizer_options oo = {.seed = 1, .budget = 10};
  mapopt_optimizer *opt = NULL;
  assert_int_equal(mapopt_optimizer_new(ctx, "llm", w.space, &oo, &opt),
                   MAPOPT_EINVAL);
  assert_null(opt);
  oo.llm = &w.llm;
  oo.batch = 65; /* more samples than a request may ask */
  assert_int_equal(mapopt_optimizer_new(ctx, "llm", w.space, &oo, &opt),
                   MAPOPT_EINVAL);
  w.llm.client.model = NULL;
  oo.batch = 0;
  assert_int_equal(mapopt_optimizer_new(ctx, "llm", w.space, &oo, &opt),
                   MAPOPT_EINVAL);
  world_close(&w);
}

/* ---- in the driver ----------------------------------------------------- */

/* The rows of a run (llm_tune_rows), which must be readable. */
static char *rows_of(const char *path, int64_t run) {
  char *rows = llm_tune_rows(path, run);
  assert_non_null(rows);
  return rows;
}

/* The replies of a driven run, in order: a mapper (m: in a block), prose
 * (p), a 503 with Retry-After (R) or without (E). It has mappers, a
 * syntax error, prose, a failed prompt and a reply quoting the key. */
static const struct {
  char kind;
  const char *text;
} run_script[] = {{'m', mapper_a},
                  {'m', "Task * GPU CPU;\n"},
                  {'p', "No mapper today."},
                  {'R', NULL},
                  {'E', NULL},
                  {'m', "# " KEY "\nTask * GPU, CPU;\nRegion * * GPU ZCMEM;\n"},
                  {'m', mapper_b},
                  {'m', mapper_c}};

/* Scripts run_script from its entry `from` on. */
static void script_run(mapopt_llm_transport *t, size_t from) {
  for (size_t i = from; i < sizeof run_script / sizeof run_script[0]; i++) {
    const char *text = run_script[i].text;
    switch (run_script[i].kind) {
    case 'm':
      add_mapper(t, text);
      break;
    case 'p':
      add_choices(t, 1, &text);
      break;
    default:
      assert_int_equal(mapopt_llm_replay_add(
                           t, 503,
                           run_script[i].kind == 'R' ? "Retry-After: 3" : NULL,
                           "{}", 2),
                       MAPOPT_OK);
    }
  }
}

typedef struct stopper {
  volatile sig_atomic_t flag;
  int64_t after; /* stop once this many evaluations were told */
} stopper;

static void on_progress(void *ud, const mapopt_tune_progress *p) {
  stopper *s = ud;
  if (p->iteration + 1 >= s->after)
    s->flag = 1;
}

/* A run of the llm optimizer on app at size (the world's). */
static mapopt_status drive_app(world *w, const char *app, const char *size,
                               mapopt_tune_db *db, int64_t budget, bool resume,
                               stopper *stop, mapopt_tune_outcome *out) {
  mapopt_tune_problem p = {.machine = w->m,
                           .run = w->run,
                           .expert = mapopt_app_builtin_mapper(app, "expert"),
                           .default_mapper =
                               mapopt_app_builtin_mapper(app, "default")};
  mapopt_tune_config c = {.app = app,
                          .size = size,
                          .machine = "p100x4",
                          .optimizer = "llm",
                          .seed = 7,
                          .budget = budget,
                          .feedback = "full",
                          .llm = &w->llm};
  mapopt_tune_options o = {.jobs = 2,
                           .resume = resume,
                           .stop = stop ? &stop->flag : NULL,
                           .progress = stop ? on_progress : NULL,
                           .progress_ud = stop};
  mapopt_diags_clear(diags);
  return mapopt_tune_run(ctx, db, &p, &c, &o, diags, out);
}

static mapopt_status drive(world *w, mapopt_tune_db *db, int64_t budget,
                           bool resume, stopper *stop,
                           mapopt_tune_outcome *out) {
  return drive_app(w, "circuit", "small", db, budget, resume, stop, out);
}

/* The model is told what the critical path waited for, in time: after a
 * cosma mapper whose A_blk folds hold the run back, the next prompt's
 * feedback for the best mapper names them with the time they cost. */
static void test_prompt_tells_times(void **state) {
  (void)state;
  char path[64];
  mapopt_tune_db *db = fixture_db_new(path);
  world w;
  world_open_app(&w, "cosma");
  /* mappers/cosma/alt-a-together.map without its comments. */
  add_mapper(w.t,
             "Task * GPU;\nRegion * * GPU FBMEM;\n"
             "Layout * * * SOA C_order;\nCollectMemory task_4 *;\n"
             "m = Machine(GPU);\n"
             "def jk(Task t) { return m[t.ipoint[1] + 2 * t.ipoint[2], 0]; }\n"
             "def b(Task t) { return m[3 * t.ipoint[2], 0]; }\n"
             "def a(Task t) { return m[3 * t.ipoint[1], 0]; }\n"
             "def each(Task t) { return m[t.ipoint[0], 0]; }\n"
             "IndexTaskMap task_4, task_3 jk;\nIndexTaskMap task_2 b;\n"
             "IndexTaskMap task_1 a;\nIndexTaskMap init_cublas each;\n");
  add_mapper(w.t, mapper_a);
  mapopt_tune_outcome o;
  assert_int_equal(drive_app(&w, "cosma", NULL, db, 2, false, NULL, &o),
                   MAPOPT_OK);
  char *u = user_message(w.t, 1);
  size_t best = at(u, "# Current best mapper");
  size_t folds = at(u, "Performance: task_1 waits 571.6 ms (26% of the run) "
                       "on the folds of task_4's contributions to A_blk");
  assert_true(best < folds);
  at(u, "would recover up to 571.6 ms (estimate)");
  /* The default mapper's evaluation, in every prompt, its text canonical
   * (the shipped file's comments name the benchmark); the elapsed time
   * beside GFLOP/s; where the time went. */
  at(u, "# Baseline: the default mapper\nEvaluated before the first "
        "attempt, not counted against the budget: score 8732.27, elapsed "
        "2.29 s.\n```mapper\nTask * GPU, OMP, CPU, IO, PY, PROC;\n```\n");
  assert_null(strstr(u, "cosma"));
  at(u, "Attempt 0, score 9111.16, elapsed 2.195 s:\n");
  at(u, "Run: critical path 2.20 s by cause: task_4: compute 1.22 s (56%); "
        "task_1 A_blk@0: fold");
  /* Nothing but the best evaluated: no attempts section. */
  assert_null(strstr(u, "# Attempts"));
  free(u);
  u = user_message(w.t, 0);
  at(u, "# Baseline: the default mapper\n");
  at(u, "# Current best mapper\nNone yet");
  free(u);
  mapopt_tune_outcome_clear(&o);
  world_close(&w);
  fixture_db_drop(db, path);
}

/* A run's rows, the same from a second run, the sums, the key nowhere. */
static void test_driven_run(void **state) {
  (void)state;
  char path[64];
  mapopt_tune_db *db = fixture_db_new(path);
  char *rows[2];
  for (int k = 0; k < 2; k++) {
    world w;
    world_open(&w);
    w.llm.client.price_in = 2;
    w.llm.client.price_out = 10;
    script_run(w.t, 0);
    mapopt_tune_outcome o;
    assert_int_equal(drive(&w, db, 5, false, NULL, &o), MAPOPT_OK);
    assert_int_equal(o.end, MAPOPT_TUNE_END_DONE);
    assert_int_equal(o.evaluations, 5);
    /* 6 calls: 5 answered, 1 failed (a 503, and again on its retry); the
     * failed prompt cost no iteration. */
    assert_int_equal(o.llm.calls, 6);
    assert_int_equal(o.llm.failed_calls, 1);
    assert_int_equal(o.llm.replies, 5);
    assert_int_equal(o.llm.prompt_tokens, 5000);
    assert_int_equal(o.llm.completion_tokens, 500);
    assert_true(o.llm.cost > 0.01499 && o.llm.cost < 0.01501);
    /* The Retry-After wait, on the fake clock. */
    assert_true(o.llm.latency_s == 3);
    rows[k] = rows_of(path, o.run);
    mapopt_tune_outcome_clear(&o);
    world_close(&w);
  }
  assert_string_equal(rows[0], rows[1]);
  /* The first reply was evaluated; the syntax error is invalid with the
   * compiler's diagnostics; the prose invalid with the parser's words. */
  at(rows[0], "|invalid|0.0|llm step 2 sample 1: invalid|Compile Error");
  at(rows[0], "|invalid|0.0|llm step 3 sample 1: no-mapper|The reply had no "
              "fenced code block");
  at(rows[0], "3|0|http|503|2|0|0|0|3.0|0.0|HTTP 503 from");
  at(rows[0], "|no-mapper|0|No mapper today.|");
  assert_null(strstr(rows[0], KEY));
  at(rows[0], "# [redacted]");
  /* The key is in no byte of the database. */
  mapopt_tune_db_close(db);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char buf[1 << 22];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  assert_null(memmem(buf, n, KEY, strlen(KEY)));
  assert_int_equal(mapopt_tune_db_open(ctx, path, diags, &db), MAPOPT_OK);
  free(rows[0]);
  free(rows[1]);
  fixture_db_drop(db, path);
}

/* A resumed run replays the recorded replies: the model is asked only for
 * what is missing, and the rows are those of an uninterrupted run. */
static void test_resume_replays(void **state) {
  (void)state;
  char path[64];
  mapopt_tune_db *db = fixture_db_new(path);
  world w;
  world_open(&w);
  script_run(w.t, 0);
  mapopt_tune_outcome o;
  assert_int_equal(drive(&w, db, 5, false, NULL, &o), MAPOPT_OK);
  char *whole = rows_of(path, o.run);
  mapopt_tune_outcome_clear(&o);
  world_close(&w);
  fixture_db_drop(db, path);

  db = fixture_db_new(path);
  world_open(&w);
  script_run(w.t, 0);
  stopper stop = {0, 2};
  assert_int_equal(drive(&w, db, 5, false, &stop, &o), MAPOPT_OK);
  assert_int_equal(o.end, MAPOPT_TUNE_END_INTERRUPTED);
  assert_int_equal(o.evaluations, 2);
  size_t asked = mapopt_llm_replay_count(w.t);
  assert_int_equal(asked, 2);
  mapopt_tune_outcome_clear(&o);
  world_close(&w);
  /* The resumed process is scripted with only what was not asked: a
   * request for a recorded step would get the wrong reply. */
  world_open(&w);
  script_run(w.t, asked);
  assert_int_equal(drive(&w, db, 5, true, NULL, &o), MAPOPT_OK);
  assert_true(o.resumed);
  assert_int_equal(o.end, MAPOPT_TUNE_END_DONE);
  assert_int_equal(o.replayed, 2);
  char *resumed = rows_of(path, o.run);
  assert_string_equal(whole, resumed);
  mapopt_tune_outcome_clear(&o);
  world_close(&w);
  free(whole);
  free(resumed);
  fixture_db_drop(db, path);
}

/* A server that answers once, then refuses connections: six failed
 * attempts, three prompts of two attempts each (max_retries 1). */
static void script_server_down(world *w) {
  add_mapper(w->t, mapper_a);
  for (int i = 0; i < 6; i++)
    assert_int_equal(
        mapopt_llm_replay_fail(w->t, MAPOPT_LLM_NET_CONNECT, "refused"),
        MAPOPT_OK);
}

/* A server that keeps failing interrupts the run with the reason. */
static void test_server_down(void **state) {
  (void)state;
  char path[64];
  mapopt_tune_db *db = fixture_db_new(path);
  world w;
  world_open(&w);
  script_server_down(&w);
  mapopt_tune_outcome o;
  assert_int_equal(drive(&w, db, 5, false, NULL, &o), MAPOPT_OK);
  assert_int_equal(o.end, MAPOPT_TUNE_END_INTERRUPTED);
  assert_int_equal(o.evaluations, 1);
  assert_int_equal(o.llm.calls, 4);
  assert_int_equal(o.llm.failed_calls, 3);
  assert_int_equal(mapopt_diags_count(diags), 1);
  at(mapopt_diags_get(diags, 0)->message,
     "the LLM server failed 3 prompts in a row; the last: cannot reach "
     "http://llm.test/v1/chat/completions after 2 attempts: refused");
  char *rows = rows_of(path, o.run);
  at(rows, "3|0|connect|NULL|2|0|0|0|");
  free(rows);
  mapopt_tune_outcome_clear(&o);
  world_close(&w);
  fixture_db_drop(db, path);
}

/* The sleep of the tests below: fake time, and at each wait (a retry's
 * back-off) what the database already holds of the run's calls, read
 * through a connection of its own as another process would; with
 * stop_at, the stop flag raised at that wait (Ctrl-C in a back-off). */
typedef struct watch {
  fake_time ft;
  const char *path;
  int waits;
  long failed[8]; /* failed calls recorded, at each wait */
  int stop_at;    /* 1-based wait that raises stop; 0: none */
  stopper stop;   /* raised by the wait, not by a count of evaluations */
} watch;

static long count_of(const char *path, const char *stmt) {
  sqlite3 *db;
  assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                   SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, stmt, -1, &st, NULL), SQLITE_OK);
  long n =
      sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

static void watching_sleep(void *ud, int64_t ms) {
  watch *w = ud;
  fake_sleep(&w->ft, ms);
  if (w->waits < 8)
    w->failed[w->waits] = count_of(
        w->path, "SELECT COUNT(*) FROM llm_calls WHERE status != 'ok'");
  if (++w->waits == w->stop_at)
    w->stop.flag = 1;
}

/*
 * Each chat call is recorded the moment it ends, failed ones included: a
 * kill -9 while the optimizer prompts again loses none of the calls before.
 * And a stop in a back-off ends the run at once, interrupted, its last
 * call recorded as stopped, without blaming the server.
 */
static void test_calls_recorded_at_once(void **state) {
  (void)state;
  char path[64];
  mapopt_tune_db *db = fixture_db_new(path);
  for (int stop_at = 0; stop_at <= 2; stop_at += 2) {
    world w;
    world_open(&w);
    watch wt = {.path = path, .stop_at = stop_at, .stop = {.after = 1000}};
    w.llm.client.sleep = watching_sleep;
    w.llm.client.sleep_ud = &wt;
    script_server_down(&w);
    mapopt_tune_outcome o;
    assert_int_equal(drive(&w, db, 5, false, &wt.stop, &o), MAPOPT_OK);
    assert_int_equal(o.end, MAPOPT_TUNE_END_INTERRUPTED);
    if (stop_at == 0) {
      /* Waits in the 2nd, 3rd and 4th calls: the failed ones before each
       * are in the database already. */
      assert_int_equal(wt.waits, 3);
      for (int i = 0; i < 3; i++)
        assert_int_equal(wt.failed[i], i);
      assert_int_equal(o.llm.failed_calls, 3);
    } else {
      /* Stopped in the 2nd wait (the 3rd call): no request after it, the
       * call recorded as stopped, no blame on the server. */
      assert_int_equal(wt.waits, 2);
      assert_int_equal(mapopt_llm_replay_count(w.t), 4);
      assert_int_equal(o.llm.calls, 3);
      char stmt[160];
      snprintf(stmt, sizeof stmt,
               "SELECT COUNT(*) FROM llm_calls WHERE run = %lld AND status ="
               " 'interrupted'",
               (long long)o.run);
      assert_int_equal(count_of(path, stmt), 1);
      for (size_t i = 0; i < mapopt_diags_count(diags); i++)
        assert_null(strstr(mapopt_diags_get(diags, i)->message, "LLM server"));
    }
    mapopt_tune_outcome_clear(&o);
    world_close(&w);
  }
  fixture_db_drop(db, path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prompts_and_candidates),
      cmocka_unit_test(test_samples),
      cmocka_unit_test(test_failures),
      cmocka_unit_test(test_repeats),
      cmocka_unit_test(test_history_dedupe),
      cmocka_unit_test(test_key_redacted),
      cmocka_unit_test(test_settings),
      cmocka_unit_test(test_driven_run),
      cmocka_unit_test(test_prompt_tells_times),
      cmocka_unit_test(test_resume_replays),
      cmocka_unit_test(test_server_down),
      cmocka_unit_test(test_calls_recorded_at_once),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
