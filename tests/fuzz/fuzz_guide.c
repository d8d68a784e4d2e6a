/*
 * libFuzzer target: arbitrary bytes as a run's output and as a simulation
 * report. AutoGuide must analyse any output (never crash, findings in
 * order, feedback at every level); a report must be read back or rejected
 * with a located diagnostic, and one that is read must write the same text
 * it was read from when written and read again, and analyse like the
 * output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapopt/guide.h"
#include "mapopt/sim.h"

#include "harness.h"

const size_t fuzz_max_input = 1 << 16;

static void analyse(mapopt_ctx *ctx, const mapopt_guide_input *in) {
  mapopt_findings *f = NULL;
  if (mapopt_guide_analyze(ctx, in, &f) != MAPOPT_OK)
    abort(); /* the default allocator does not fail here */
  for (size_t i = 0; i < mapopt_findings_count(f); i++) {
    const mapopt_guide_finding *g = mapopt_findings_get(f, i);
    if (!g->message || !g->subject || !g->explain || !g->suggest ||
        !mapopt_guide_code_name(g->code))
      abort();
    for (size_t k = 0; k < g->nedits; k++)
      if (!g->edits[k].task || !g->edits[k].value)
        abort();
  }
  for (int l = MAPOPT_GUIDE_RAW; l <= MAPOPT_GUIDE_FULL; l++) {
    char *text;
    if (mapopt_guide_feedback(ctx, f, (mapopt_guide_level)l, &text) !=
        MAPOPT_OK)
      abort();
    mapopt_text_free(text);
  }
  char *json;
  if (mapopt_guide_findings_json(ctx, f, &json) != MAPOPT_OK)
    abort();
  mapopt_text_free(json);
  mapopt_findings_free(f);
}

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *diags, const uint8_t *data,
                 size_t size) {
  mapopt_guide_input in = {.output = (const char *)data,
                           .output_len = size,
                           .exit_status = size % 3 == 0 ? 1 : -1,
                           .signal = size % 7 == 0 ? 11 : 0};
  analyse(ctx, &in);
  mapopt_sim_result *r = NULL;
  mapopt_status st = mapopt_sim_report_read(
      ctx, "fuzz.json", (const char *)data, size, diags, &r);
  if (st == MAPOPT_OK) {
    char *text, *again;
    mapopt_sim_result *back = NULL;
    if (mapopt_sim_report_json(ctx, r, r->sim_wall_us != 0, &text) !=
            MAPOPT_OK ||
        mapopt_sim_report_read(ctx, "again.json", text, strlen(text), diags,
                               &back) != MAPOPT_OK ||
        mapopt_sim_report_json(ctx, back, back->sim_wall_us != 0, &again) !=
            MAPOPT_OK ||
        strcmp(text, again) != 0)
      abort(); /* what we write must read back to the same text */
    in.result = r;
    analyse(ctx, &in);
    mapopt_text_free(text);
    mapopt_text_free(again);
    mapopt_sim_result_free(back);
  } else if (st == MAPOPT_EINVAL && mapopt_diags_errors(diags) == 0) {
    abort(); /* a rejection always says why */
  }
  mapopt_sim_result_free(r);
}
