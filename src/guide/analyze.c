/*
 * mapopt_guide_analyze: AutoGuide's entry point. It runs the rules on the
 * output text (errors and metric lines), then, for a successful simulated
 * run, the rules on its profile, and puts the findings in order. The
 * metric finding is made from the result when the text has none (a report
 * analysed without its log), and says where to start when the profile
 * found nothing.
 */
#include <stdio.h>
#include <string.h>

#include "guide/guide.h"

/* Profile findings of one code beyond the third are dropped: they are in
 * order of impact, and more of the same only lengthen the feedback. */
#define MAX_PER_CODE 3

static void cap_per_code(mapopt_findings *f) {
  int count[MAPOPT_GUIDE_CODE_COUNT] = {0};
  size_t kept = 0;
  mapopt_guide_finding *a = f->items.data;
  for (size_t i = 0; i < f->items.len; i++)
    if (a[i].category != MAPOPT_GUIDE_PERFORMANCE ||
        ++count[a[i].code] <= MAX_PER_CODE)
      a[kept++] = a[i];
  f->items.len = kept;
}

/* A run at four fifths of the lower bound is as good as it gets: the bound
 * ignores data movement, so little more can be had. */
#define NEAR_BOUND 0.8

/* A percentage with two significant digits below 10%. */
static const char *percent(mapopt_findings *f, double x) {
  return x >= 0.1 ? mapopt__guide_printf(f, "%.0f%%", 100 * x)
                  : mapopt__guide_printf(f, "%.2g%%", 100 * x);
}

/* The first metric finding, when the output (or the result) gave one. */
static mapopt_guide_finding *first_metric(mapopt_findings *f) {
  for (size_t i = 0; i < f->items.len; i++) {
    mapopt_guide_finding *g =
        &MAPOPT__VEC_AT(&f->items, mapopt_guide_finding, i);
    if (g->code == MAPOPT_GUIDE_CODE_EXEC_TIME ||
        g->code == MAPOPT_GUIDE_CODE_THROUGHPUT)
      return g;
  }
  return NULL;
}

/* The metric of a successful result whose output had no metric line. */
static void metric_from_result(const mapopt_sim_result *res,
                               mapopt_findings *f) {
  if (first_metric(f))
    return;
  mapopt_guide_finding *g = mapopt__guide_add(f, MAPOPT_GUIDE_PERFORMANCE,
                                              MAPOPT_GUIDE_CODE_EXEC_TIME);
  if (!g)
    return;
  double secs = (double)res->elapsed_ns / 1e9;
  g->message = mapopt__guide_printf(f, "Execution time is %.4g s", secs);
  g->explain = mapopt__guide_printf(
      f, "The timed iterations took %.4g s (lower is better).", secs);
}

/* The metric finding of a successful result: the lower bound it is
 * measured against, and, when the profile found nothing, where to look. */
static void metric_against_bound(const mapopt_sim_result *res,
                                 mapopt_findings *f) {
  mapopt_guide_finding *m = first_metric(f);
  if (!m)
    return;
  double eff = (double)res->lower_bound_ns / (double)res->elapsed_ns;
  m->explain = mapopt__guide_printf(
      f,
      "%s No mapping can run the timed iterations in less than %.4g s on "
      "this machine (the lower bound): this run reaches %s of that limit.",
      m->explain, (double)res->lower_bound_ns / 1e9, percent(f, eff));
  for (size_t i = 0; i < f->items.len; i++) {
    const mapopt_guide_finding *g =
        &MAPOPT__VEC_AT(&f->items, mapopt_guide_finding, i);
    if (g->category == MAPOPT_GUIDE_PERFORMANCE &&
        g->code != MAPOPT_GUIDE_CODE_THROUGHPUT &&
        g->code != MAPOPT_GUIDE_CODE_EXEC_TIME)
      return; /* the profile's findings say what to change */
  }
  if (eff >= NEAR_BOUND)
    m->suggest = mapopt__guide_printf(
        f,
        "Nothing in the profile stands out and the run is within %s of "
        "the lower bound: keep this mapping.",
        percent(f, 1 - eff));
  else if (mapopt_sim_result_ntop(res))
    m->suggest = mapopt__guide_printf(
        f,
        "Nothing in the profile stands out; try other placements and "
        "memories for the busiest task, %s.",
        mapopt_sim_result_top_task(res, 0)->task);
}

mapopt_status mapopt_guide_analyze(mapopt_ctx *ctx,
                                   const mapopt_guide_input *in,
                                   mapopt_findings **out) {
  if (!ctx || !in || !out || (!in->output && in->output_len))
    return MAPOPT_EINVAL;
  mapopt_findings *f = mapopt__calloc(ctx, 1, sizeof *f);
  if (!f)
    return MAPOPT_ENOMEM;
  f->ctx = ctx;
  mapopt__arena_init(&f->arena, ctx);
  mapopt__vec_init(&f->items, sizeof(mapopt_guide_finding));
  mapopt__guide_text_rules(in, f);
  const mapopt_sim_result *res = in->result;
  bool ran = res && res->error == MAPOPT_SIM_NONE && res->elapsed_ns > 0;
  if (ran) {
    mapopt__guide_profile_rules(in, f);
    metric_from_result(res, f);
  }
  mapopt__guide_sort(f);
  cap_per_code(f);
  if (ran)
    metric_against_bound(res, f);
  if (f->failed) {
    mapopt_findings_free(f);
    return MAPOPT_ENOMEM;
  }
  *out = f;
  return MAPOPT_OK;
}
