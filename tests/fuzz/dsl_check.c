/*
 * What the two DSL fuzz targets check of a mapper text (fuzz_dsl: the
 * bytes as they come; fuzz_dslgen: a program generated from them): it
 * compiles or fails with diagnostics; a compiled program prints to a text
 * that compiles to an equal program and prints the same again; and the
 * mapping queries of a small machine answer without crashing. The
 * portability checks (P01-P28) run on every text.
 */
#include <stdlib.h>
#include <string.h>

#include "mapopt/dsl.h"

#include "dsl_check.h"

static void discard(void *ud, const char *line) {
  (void)ud;
  (void)line;
}

static void query(const mapopt_program *prog, mapopt_diags *diags) {
  static const char *const tasks[] = {"step", "tile", "leaf", "main"};
  for (int t = 0; t < 4; t++) {
    mapopt_proc_kind kind;
    if (mapopt_policy_select_kind(prog, tasks[t], 0x7u, false, &kind, diags) !=
        MAPOPT_OK)
      continue;
    for (int64_t i = 0; i < 3; i++) {
      int64_t pt[2] = {i, 2 - i}, sp[2] = {4, 3};
      mapopt_map_answer ans;
      mapopt_policy_index_map(prog, tasks[t], 2, pt, sp, kind, &ans, diags);
    }
    mapopt_task_ref parent = {
        .name = "step", .is_index = false, .proc = {kind, 1, 1}};
    mapopt_task_ref self = {
        .name = tasks[t], .proc = {kind, 1, 0}, .parent = &parent};
    mapopt_map_answer ans;
    mapopt_proc_point set[8];
    mapopt_policy_single_map(prog, &self, kind, &ans, set, 8, diags);
    const char *names[] = {"cells", "all_cells"};
    mapopt_region_keys keys = {names, 2, 0};
    mapopt_mem_kind mem =
        mapopt_policy_select_memory(prog, tasks[t], &keys, kind);
    mapopt_layout l;
    mapopt_policy_resolve_layout(prog, tasks[t], &keys, mem, kind, false, &l);
  }
}

void fuzz_dsl_check(mapopt_ctx *ctx, mapopt_diags *diags, const char *text,
                    size_t size) {
  mapopt_machine_shape shape;
  char err[64];
  mapopt_shape_parse("nodes=2 cpu=2 gpu=4 omp=1", &shape, err, sizeof err);
  mapopt_dsl_options opts = {
      .file = "fuzz.map", .shape = &shape, .print = discard, .portable = true};
  mapopt_program *prog = NULL;
  if (mapopt_dsl_compile(ctx, text, size, &opts, diags, &prog) == MAPOPT_OK) {
    char *canon;
    size_t len;
    if (mapopt_dsl_format(prog, &canon, &len) == MAPOPT_OK) {
      mapopt_program *again = NULL;
      mapopt_diags_clear(diags);
      if (mapopt_dsl_compile(ctx, canon, len, &opts, diags, &again) !=
              MAPOPT_OK ||
          !mapopt_dsl_equal(prog, again))
        abort(); /* the canonical form must load to the same program */
      char *text2;
      size_t len2;
      if (mapopt_dsl_format(again, &text2, &len2) == MAPOPT_OK) {
        if (len2 != len || memcmp(canon, text2, len) != 0)
          abort(); /* printing must be idempotent */
        mapopt_text_free(text2);
      }
      mapopt_dsl_free(again);
      mapopt_text_free(canon);
    }
    query(prog, diags);
    mapopt_dsl_free(prog);
  }
}
