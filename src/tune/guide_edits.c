/*
 * AutoGuide's findings as the guided optimizer's edits: the one place an
 * optimizer reads guide.h's types (the findings are made by the evaluator,
 * evaluate.c). Findings come most important first; their edits keep that
 * order, each carrying the share of the time its fix would recover (the
 * finding's whole share where it gives no estimate per fix). At the
 * explain level an evaluation carries findings without edits: the optimizer
 * then learns only what they are about and what is at stake
 * (mapopt__guide_stake).
 */
#include <stdio.h>
#include <string.h>

#include "mapopt/guide.h"
#include "tune/tune.h"

static void copy(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

size_t mapopt__guide_edits(const mapopt_evaluation *e, tune_edit *out,
                           size_t cap) {
  static const tune_edit_kind kinds[] = {
      [MAPOPT_GUIDE_EDIT_PROC_KINDS] = TUNE_EDIT_PROC_KINDS,
      [MAPOPT_GUIDE_EDIT_MEMORY] = TUNE_EDIT_MEMORY,
      [MAPOPT_GUIDE_EDIT_LAYOUT] = TUNE_EDIT_LAYOUT,
      [MAPOPT_GUIDE_EDIT_INDEX_MAP] = TUNE_EDIT_INDEX_MAP,
      [MAPOPT_GUIDE_EDIT_INSTANCE_LIMIT] = TUNE_EDIT_INSTANCE_LIMIT,
      [MAPOPT_GUIDE_EDIT_COLLECT] = TUNE_EDIT_COLLECT,
      [MAPOPT_GUIDE_EDIT_SINGLE_FOLLOW] = TUNE_EDIT_SINGLE_FOLLOW};
  size_t n = 0;
  const mapopt_findings *f = e && e->edits ? e->findings : NULL;
  for (size_t i = 0; f && i < mapopt_findings_count(f); i++) {
    const mapopt_guide_finding *fd = mapopt_findings_get(f, i);
    for (size_t k = 0; k < fd->nedits && n < cap; k++) {
      const mapopt_guide_edit *ge = &fd->edits[k];
      if ((size_t)ge->kind >= sizeof kinds / sizeof kinds[0])
        continue;
      tune_edit *te = &out[n++];
      memset(te, 0, sizeof *te);
      te->kind = kinds[ge->kind];
      copy(te->task, sizeof te->task, ge->task);
      copy(te->region, sizeof te->region, ge->region);
      copy(te->proc, sizeof te->proc, ge->proc);
      copy(te->component, sizeof te->component, ge->component);
      copy(te->value, sizeof te->value, ge->value);
      /* A fix's own estimate where the finding gives one: of two
       * findings, the fix that recovers more goes first, not every fix of
       * the larger finding (a slow fold whose own fix recovers most ranks
       * above a cheap host-memory fix of a larger copy wait). */
      te->impact = ge->share >= 0 ? ge->share : fd->impact;
      mapopt_guide_edit_format(ge, te->text, sizeof te->text);
    }
  }
  return n;
}

double mapopt__guide_stake(const mapopt_evaluation *e, const char *task,
                           const char *region) {
  double stake = 0;
  const mapopt_findings *f = e ? e->findings : NULL;
  for (size_t i = 0; f && i < mapopt_findings_count(f); i++) {
    const mapopt_guide_finding *fd = mapopt_findings_get(f, i);
    /* A finding about a task concerns that task's parameters; one that
     * also names a region concerns most those of that region (and the
     * region's layout, which has no task), the task's others half as
     * much (where it runs decides where the region can be). */
    bool about_task = fd->task && task && !strcmp(fd->task, task);
    bool about_region = fd->region && region && !strcmp(fd->region, region);
    if (task ? about_task && (!fd->region || about_region) : about_region)
      stake += fd->impact;
    else if (about_task && !region)
      stake += fd->impact / 2;
  }
  return stake;
}
