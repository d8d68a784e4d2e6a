/* The failure-injecting allocator; see failing_alloc.h. */
#include <stdlib.h>

#include "failing_alloc.h"

void *failing_realloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  failing_alloc *a = ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr)
      a->live--;
    free(ptr);
    return NULL;
  }
  if (a->left == 0) {
    a->failed = true;
    if (!a->sticky)
      a->left = -1;
    return NULL;
  }
  if (a->left > 0)
    a->left--;
  void *p = realloc(ptr, nsize);
  if (p && !ptr)
    a->live++;
  return p;
}
