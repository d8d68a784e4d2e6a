/* The shared unit-test fixture; see fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"

mapopt_ctx *ctx;
mapopt_diags *diags;

int fixture_setup(void **state) {
  (void)state;
  if (mapopt_ctx_new(NULL, NULL, &ctx) != MAPOPT_OK)
    return -1;
  if (mapopt_diags_new(ctx, &diags) != MAPOPT_OK) {
    mapopt_ctx_free(ctx);
    return -1;
  }
  return 0;
}

int fixture_teardown(void **state) {
  (void)state;
  mapopt_diags_free(diags);
  mapopt_ctx_free(ctx);
  return 0;
}

void fixture_print_diags(void) {
  char line[1024];
  for (size_t i = 0; i < mapopt_diags_count(diags); i++) {
    mapopt_diag_format(mapopt_diags_get(diags, i), line, sizeof line);
    print_message("  %s\n", line);
  }
}

mapopt_tune_db *fixture_db_new(char path[64]) {
  snprintf(path, 64, "/tmp/mapopt-test-tune-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  unlink(path);
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open(ctx, path, diags, &db), MAPOPT_OK);
  return db;
}

void fixture_db_drop(mapopt_tune_db *db, const char *path) {
  mapopt_tune_db_close(db);
  char side[80];
  unlink(path);
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
}
