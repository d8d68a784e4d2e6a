/*
 * The lower bound's soundness sweep (docs/sim.md, "The lower bound"),
 * shared by the unit test (test_bound, a few mappers) and the validation
 * check (test_validation's `bound`, the full sweep): an application
 * simulated on a machine under every mapper the repository ships for it
 * and under random valid mappers drawn from the tuner's search space, the
 * bound checked against each run's elapsed time.
 */
#ifndef MAPOPT_TESTS_UNIT_SWEEP_H
#define MAPOPT_TESTS_UNIT_SWEEP_H

#include <stdint.h>

#include "mapopt/core.h"

typedef struct sweep_stats {
  int shipped;        /* shipped mappers simulated without error */
  int random_valid;   /* random mappers simulated without error */
  int random_draws;   /* random mappers drawn */
  int64_t bound_ns;   /* the run's lower bound */
  int64_t best_ns;    /* the fastest run's elapsed time */
  double highest_eff; /* the largest lower bound / elapsed */
} sweep_stats;

/* Another source of random mapper texts (malloc'd, the sweep frees
 * them), for applications whose search space holds few valid mappers. */
typedef char *(*sweep_more_fn)(void *ud);

/*
 * Simulates app (a built-in name or a model file, with an optional ":size") on
 * machine under every mapper in dir (the .map files of the repository's
 * mappers/APP, skipping those that do not compile for the machine; with
 * dir NULL, the default mapper alone: an application of apps/) and
 * under random mappers of the tuner's space (its random optimizer, seed)
 * until nrandom of them ran without error or 20 * nrandom were drawn --
 * then, with more, under its mappers until nrandom ran or as many again
 * were drawn; one plan serves all. Fails the test when a run that ends
 * without error has a lower bound above its elapsed time. The statistics
 * into *out.
 */
void sweep_bound(mapopt_ctx *cx, const char *app, const char *machine,
                 const char *dir, int nrandom, uint64_t seed,
                 sweep_more_fn more, void *more_ud, sweep_stats *out);

#endif
