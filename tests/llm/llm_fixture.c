/* The shared fixture of the LLM tests; see llm_fixture.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "llm_fixture.h"
#include "mapopt/sim.h"

void fake_sleep(void *ud, int64_t ms) {
  fake_time *t = ud;
  t->now += ms;
  if (t->nwaits < 64)
    t->waits[t->nwaits++] = ms;
}

int64_t fake_clock(void *ud) {
  return ((fake_time *)ud)->now;
}

void fake_time_use(fake_time *ft, mapopt_llm_config *cfg) {
  *ft = (fake_time){0};
  cfg->sleep = fake_sleep;
  cfg->sleep_ud = ft;
  cfg->clock = fake_clock;
  cfg->clock_ud = ft;
}

char *llm_completion(int n, const char *const *contents, const char *finish,
                     long prompt, long completion_tokens) {
  json_t *choices = json_array();
  for (int i = 0; i < n; i++)
    json_array_append_new(choices,
                          json_pack("{s:i,s:{s:s,s:s},s:s}", "index", i,
                                    "message", "role", "assistant", "content",
                                    contents[i], "finish_reason", finish));
  json_t *j = json_pack("{s:s,s:o,s:{s:i,s:i}}", "object", "chat.completion",
                        "choices", choices, "usage", "prompt_tokens", prompt,
                        "completion_tokens", completion_tokens);
  char *s = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return s;
}

int llm_world_open(mapopt_ctx *ctx, const char *app, const char *machine,
                   llm_world *w) {
  *w = (llm_world){0};
  mapopt_diags *d;
  if (mapopt_diags_new(ctx, &d) != MAPOPT_OK)
    return -1;
  const char *spec = NULL;
  mapopt_app_options ao = {.iterations = 1, .warmup = 0};
  int rc = -1;
  if (mapopt_machine_resolve(ctx, machine, d, &w->machine) == MAPOPT_OK &&
      mapopt_app_resolve(ctx, app, d, &w->app, &spec) == MAPOPT_OK &&
      (ao.spec = spec, 1) &&
      mapopt_sim_instantiate(w->machine, w->app, &ao, d, &w->run) ==
          MAPOPT_OK) {
    mapopt_sim_shape(w->machine, w->run, &w->shape);
    w->opts.shape = &w->shape;
    mapopt_app_task_info(w->app, &w->opts.tasks, &w->opts.ntasks);
    rc = 0;
  }
  mapopt_diags_free(d);
  if (rc)
    llm_world_close(w);
  return rc;
}

void llm_world_close(llm_world *w) {
  mapopt_app_run_free(w->run);
  mapopt_app_free(w->app);
  mapopt_machine_free(w->machine);
  *w = (llm_world){0};
}

/* Appends to a malloc'ed string. */
static void cat(char **s, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void cat(char **s, size_t *len, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  *s = realloc(*s, *len + (size_t)n + 1);
  vsnprintf(*s + *len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  *len += (size_t)n;
}

char *llm_step_dump(const mapopt_llm_step_result *r) {
  char *s = NULL;
  size_t len = 0;
  cat(&s, &len,
      "tokens %" PRId64 "+%" PRId64 " latency %" PRId64 " cost %.6f\n",
      r->prompt_tokens, r->completion_tokens, r->latency_ms, r->cost);
  for (size_t i = 0; i < r->ncalls; i++) {
    const mapopt_llm_call *c = &r->calls[i];
    cat(&s, &len,
        "call %zu: %s http %d attempts %d waited %" PRId64 " latency %" PRId64
        " tokens %" PRId64 "+%" PRId64 " choices %zu\n",
        i, mapopt_llm_error_name(c->error), c->http_status, c->attempts,
        c->waited_ms, c->latency_ms, c->prompt_tokens, c->completion_tokens,
        c->nchoices);
    if (c->error_text)
      cat(&s, &len, "  error: %s\n", c->error_text);
  }
  for (size_t i = 0; i < r->ncandidates; i++) {
    const mapopt_llm_candidate *c = &r->candidates[i];
    cat(&s, &len, "candidate %zu (call %zu): %s%s\n", i, c->call,
        mapopt_llm_verdict_name(c->verdict), c->truncated ? " truncated" : "");
    if (c->mapper)
      cat(&s, &len, "--- mapper\n%s\n", c->mapper);
    if (c->canonical)
      cat(&s, &len, "--- canonical\n%s\n", c->canonical);
    cat(&s, &len, "--- feedback\n%s\n", c->feedback);
  }
  return s;
}

char *llm_tune_rows(const char *path, int64_t run) {
  static const char *const queries[] = {
      "SELECT iteration, hash, status, metric, note, feedback, text FROM "
      "evaluations WHERE run = ?1 ORDER BY iteration",
      "SELECT step, call, status, http_status, attempts, samples, "
      "prompt_tokens, completion_tokens, latency, cost, error FROM llm_calls "
      "WHERE run = ?1 ORDER BY step, call",
      "SELECT step, sample, call, verdict, truncated, reply FROM llm_replies "
      "WHERE run = ?1 ORDER BY step, sample"};
  sqlite3 *db;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    sqlite3_close(db);
    return NULL;
  }
  char *s = NULL;
  size_t len = 0;
  cat(&s, &len, "%s", "");
  for (size_t q = 0; q < 3 && s; q++) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, queries[q], -1, &st, NULL) != SQLITE_OK) {
      free(s);
      s = NULL;
      break;
    }
    sqlite3_bind_int64(st, 1, run);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(st); i++) {
        const char *v = (const char *)sqlite3_column_text(st, i);
        cat(&s, &len, "%s|", v ? v : "NULL");
      }
      cat(&s, &len, "\n");
    }
    sqlite3_finalize(st);
    cat(&s, &len, "--\n");
  }
  sqlite3_close(db);
  return s;
}
