/*
 * AutoGuide's findings as the guided optimizer's edits. (AutoGuide is not
 * part of this tree yet: until it is, evaluations carry no edits and the
 * guided optimizer walks the profile-ranked neighbours only.)
 */
#include "tune/tune.h"

size_t mapopt__guide_edits(const mapopt_evaluation *e, tune_edit *out,
                           size_t cap) {
  (void)e;
  (void)out;
  (void)cap;
  return 0;
}
