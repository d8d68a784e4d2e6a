/*
 * Checking that a getter rejects an argument outside its domain (a NULL
 * object, an index past the end): the caller's bug, which the narrow views
 * of a run and of a simulation result assert in a debug build and answer
 * with NULL or 0 in a release one (include/mapopt/app.h, "the narrow view
 * of a run").
 */
#ifndef MAPOPT_TESTS_UNIT_REJECTS_H
#define MAPOPT_TESTS_UNIT_REJECTS_H

#include <stdbool.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * In a debug build call runs in a child process (rejects_fork), which
 * must die of SIGABRT, the assertion; in a release build call must yield
 * NULL or 0. call is evaluated once, in the child in a debug build.
 */
#ifdef NDEBUG
#define assert_rejected(call) assert_true(!(call))
#else
#define assert_rejected(call)                                                  \
  do {                                                                         \
    pid_t rejects_child_ = rejects_fork();                                     \
    if (rejects_child_ == 0) {                                                 \
      (void)(call);                                                            \
      _exit(0);                                                                \
    }                                                                          \
    assert_true(rejects_died_of_abort(rejects_child_));                        \
  } while (0)
#endif

/* fork() for assert_rejected: the child writes no core file and nothing to
 * stderr (the assertion's message); fails the test when fork does. */
pid_t rejects_fork(void);
/* Waits for child; whether it died of SIGABRT. */
bool rejects_died_of_abort(pid_t child);

#endif
