/*
 * Layouts made physical (include/mapopt/starpu.h): from a resolved DSL
 * layout and a dense piece's extents to the strides a kernel uses and the
 * StarPU interface (vector, matrix or block) the piece is registered with.
 *
 * The storage order is docs/dsl.md's table of dimension orders: index
 * dimensions X, Y, Z fastest first under F_order and reversed under
 * C_order, with the field dimension F last under SOA and first under AOS.
 * A single field has no F dimension. StarPU 1.3's densest interface, the
 * block, has three dimensions, which bounds index dimensions plus fields.
 */
#include <string.h>

#include "mapopt/starpu.h"

static bool satisfies(mapopt_align_op op, int64_t a, int64_t n) {
  switch (op) {
  case MAPOPT_ALIGN_EQ:
    return a == n;
  case MAPOPT_ALIGN_NE:
    return a != n;
  case MAPOPT_ALIGN_LT:
    return a < n;
  case MAPOPT_ALIGN_LE:
    return a <= n;
  case MAPOPT_ALIGN_GT:
    return a > n;
  case MAPOPT_ALIGN_GE:
    return a >= n;
  default:
    return true;
  }
}

/* The allocation alignment that satisfies "alignment op n": the smallest
 * power of two from 16 up (the C library's usual alignment) that does, else
 * the largest below 16 that does, else 0 (none does). */
static size_t alignment_for(mapopt_align_op op, int64_t n) {
  if (op == MAPOPT_ALIGN_NONE)
    return 0;
  for (int64_t a = 16; a <= (1 << 20); a *= 2)
    if (satisfies(op, a, n))
      return (size_t)a;
  for (int64_t a = 8; a >= 1; a /= 2)
    if (satisfies(op, a, n))
      return (size_t)a;
  return 0;
}

mapopt_status mapopt_starpu_geometry_of(const mapopt_layout *layout, int dims,
                                        const int64_t *extents, int nfields,
                                        size_t elem_bytes,
                                        mapopt_starpu_geometry *out) {
  if (!layout || !extents || !out || dims < 1 || dims > 3 || nfields < 1 ||
      elem_bytes == 0)
    return MAPOPT_EINVAL;
  for (int d = 0; d < dims; d++)
    if (extents[d] < 1)
      return MAPOPT_EINVAL;
  bool fields = nfields > 1;
  int nstorage = dims + (fields ? 1 : 0);
  if (nstorage > 3)
    return MAPOPT_EINVAL;
  /* order[k]: the dimension stored k-th fastest; -1 is the field dim. */
  int order[4], k = 0;
  bool soa = layout->soa != MAPOPT_LAYOUT_NO;
  bool c_order = layout->c_order == MAPOPT_LAYOUT_YES;
  if (fields && !soa)
    order[k++] = -1;
  for (int i = 0; i < dims; i++)
    order[k++] = c_order ? dims - 1 - i : i;
  if (fields && soa)
    order[k++] = -1;
  mapopt_starpu_geometry g;
  memset(&g, 0, sizeof g);
  g.nstorage = nstorage;
  g.elem_bytes = elem_bytes;
  g.align = alignment_for(layout->align_op, layout->align);
  uint64_t ld = 1;
  for (k = 0; k < nstorage; k++) {
    int64_t n = order[k] < 0 ? nfields : extents[order[k]];
    if (n > UINT32_MAX || ld > UINT32_MAX)
      return MAPOPT_ERANGE;
    g.storage[k] = order[k];
    g.n[k] = (uint32_t)n;
    g.ld[k] = (uint32_t)ld;
    if (order[k] < 0)
      g.field_stride = (size_t)ld;
    else
      g.stride[order[k]] = (size_t)ld;
    if (__builtin_mul_overflow(ld, (uint64_t)n, &ld))
      return MAPOPT_ERANGE;
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(ld, (uint64_t)elem_bytes, &bytes) ||
      bytes > SIZE_MAX)
    return MAPOPT_ERANGE;
  g.elements = (size_t)ld;
  *out = g;
  return MAPOPT_OK;
}

void mapopt_starpu_register(starpu_data_handle_t *handle, int home_node,
                            void *ptr, const mapopt_starpu_geometry *g) {
  uintptr_t p = home_node >= 0 ? (uintptr_t)ptr : 0;
  switch (g->nstorage) {
  case 1:
    starpu_vector_data_register(handle, home_node, p, g->n[0], g->elem_bytes);
    break;
  case 2:
    starpu_matrix_data_register(handle, home_node, p, g->ld[1], g->n[0],
                                g->n[1], g->elem_bytes);
    break;
  default:
    starpu_block_data_register(handle, home_node, p, g->ld[1], g->ld[2],
                               g->n[0], g->n[1], g->n[2], g->elem_bytes);
    break;
  }
}
