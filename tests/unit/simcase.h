/*
 * What the simulator's unit tests (test_sim, test_siminst) share: the
 * machine "tiny" (its rates are in test_sim.c's header), loading an app
 * and a mapper and simulating them, the checks on a result, and the JSON
 * pieces the tests' apps are written with.
 */
#ifndef MAPOPT_TESTS_UNIT_SIMCASE_H
#define MAPOPT_TESTS_UNIT_SIMCASE_H

#include "mapopt/app.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

/* The runtime object of a machine with no launch, map, fence or future
 * cost. */
extern const char zero_runtime[];

/* The tiny machine with fb_mib MiB of FB per GPU and the runtime object
 * runtime; with 1 MiB and zero_runtime (tiny); a preset or shape. */
mapopt_machine *machine_json(const char *fb_mib, const char *runtime);
mapopt_machine *tiny(void);
mapopt_machine *resolve(const char *arg);

typedef struct simcase {
  mapopt_machine *m;
  mapopt_app *app;
  mapopt_app_run *run;
  mapopt_program *prog;
  mapopt_sim_result *res;
  mapopt_sim_options opts;
} simcase;

/* Loads app (JSON text) with the size spec (or NULL), compiles mapper
 * (named "t.map" in diagnostics) for m's shape, and simulates with opts
 * (or the defaults). Takes ownership of m. */
void sim_opts(simcase *c, mapopt_machine *m, const char *app, const char *spec,
              const char *mapper, const mapopt_sim_options *opts);
void sim(simcase *c, mapopt_machine *m, const char *app, const char *spec,
         const char *mapper);
void sim_free(simcase *c);

/* The run succeeded (else its log is printed); or it failed with class e
 * and exactly the message text. */
void expect_ok(const simcase *c);
void expect_error(const simcase *c, mapopt_sim_error e, const char *text);
/* A processor's and a memory's statistics (the test fails without). */
const mapopt_sim_proc_stats *proc(const simcase *c, const char *kind,
                                  int64_t node, int64_t index);
const mapopt_sim_mem_stats *mem(const simcase *c, mapopt_mem_kind k,
                                int64_t index);
/* One copy kind's (a channel, FILL or FOLD) bytes, count, busy time. */
void expect_copies(const simcase *c, int kind, int64_t bytes, int64_t count,
                   int64_t busy);

enum { FILL = MAPOPT_CHAN_COUNT, FOLD = MAPOPT_CHAN_COUNT + 1 };

/* ---- apps ---------------------------------------------------------------- */

/* App JSON: one region of n elements of an 8-byte field, the given tasks
 * and the body of a one-iteration time-step loop (no warm-up). */
#define APP_HEAD(params)                                                       \
  "{\"format\": \"mapopt-app/1\", \"name\": \"t\", \"params\": " params ","    \
  " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},"
#define LOOP1(body)                                                            \
  "\"program\": [{\"op\": \"loop\", \"var\": \"t\", \"count\": \"1\","         \
  " \"warmup\": \"0\", \"timed\": true, \"body\": [" body "]}]}"
#define REGION(name, fbytes, elems)                                            \
  "{\"name\": \"" name "\", \"fields\": [[\"x\", " fbytes "]], \"atoms\":"     \
  " {\"groups\": [{\"group\": \"g\", \"count\": \"1\", \"elements\": \"" elems \
  "\"}]}}"

#endif
