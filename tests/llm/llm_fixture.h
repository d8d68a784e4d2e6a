/*
 * What the tests of the LLM layer share: a fake clock whose sleeps only
 * advance it (so retries never wait and latencies are exact), the circuit
 * application on the p100x4 machine as prompt input, and a printed form
 * of a step's outcome, for pinning and for comparing two runs byte for
 * byte.
 */
#ifndef MAPOPT_TESTS_LLM_FIXTURE_H
#define MAPOPT_TESTS_LLM_FIXTURE_H

#include "mapopt/llm.h"

typedef struct fake_time {
  int64_t now;
  int64_t waits[64]; /* every sleep, in order */
  int nwaits;
} fake_time;

void fake_sleep(void *ud, int64_t ms);
int64_t fake_clock(void *ud);

/* Points cfg's time hooks at ft (which starts at 0). */
void fake_time_use(fake_time *ft, mapopt_llm_config *cfg);

/* A chat completion whose n choices are contents, with finish_reason
 * finish and the given usage (malloc'ed JSON). */
char *llm_completion(int n, const char *const *contents, const char *finish,
                     long prompt, long completion_tokens);

/* An application instantiated on a machine, for prompts. */
typedef struct llm_world {
  mapopt_machine *machine;
  mapopt_app *app;
  mapopt_app_run *run;
  mapopt_machine_shape shape;
  mapopt_dsl_options opts; /* the machine's shape, the app's tasks */
} llm_world;

/* Loads app ("circuit") on machine ("p100x4"), one timed iteration and no
 * warm-up; 0 on success. */
int llm_world_open(mapopt_ctx *ctx, const char *app, const char *machine,
                   llm_world *w);
void llm_world_close(llm_world *w);

/* circuit on p100x4, opened by llm_circuit_setup (the cmocka group setup
 * of the tests that share it: the context fixture, then the world) and
 * closed by llm_circuit_teardown. */
extern llm_world llm_circuit;
int llm_circuit_setup(void **state);
int llm_circuit_teardown(void **state);

/* The whole outcome of a step as text (malloc'ed): every call's
 * accounting and error, every candidate's verdict, mapper and feedback. */
char *llm_step_dump(const mapopt_llm_step_result *r);

/* Every row of tuning run `run` in the database at path -- evaluations,
 * llm_calls, llm_replies; the wall times left out -- as text (malloc'ed),
 * for comparing runs. NULL when the database cannot be read. */
char *llm_tune_rows(const char *path, int64_t run);

#endif
