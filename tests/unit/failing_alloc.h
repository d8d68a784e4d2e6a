#ifndef MAPOPT_TESTS_UNIT_FAILING_ALLOC_H
#define MAPOPT_TESTS_UNIT_FAILING_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * An allocator for mapopt_ctx_new that injects failure, so tests can check
 * that every allocation failure is reported as MAPOPT_ENOMEM and leaks
 * nothing. After `left` more allocations succeed, the next one fails; with
 * `sticky` every later one fails too, else allocation works again.
 */
typedef struct failing_alloc {
  long left;   /* allocations that still succeed; < 0: no failure planned */
  bool sticky; /* once one fails, every later one fails */
  bool failed; /* an allocation has failed */
  long live;   /* blocks allocated and not yet freed */
} failing_alloc;

void *failing_realloc(void *ud, void *ptr, size_t osize, size_t nsize);

#endif
