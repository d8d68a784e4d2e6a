/*
 * The stencil's kernels on one tile, apart from StarPU (stencil.c wraps
 * them in codelets; starpu-calibrate times them): the halo strips, the star
 * update of the interior and the increment. A tile is (tx + 2R) x (ty + 2R)
 * points with two fields, input and output, at any layout: every access
 * goes through element strides.
 */
#ifndef MAPOPT_APPS_STARPU_STENCIL_KERNEL_H
#define MAPOPT_APPS_STARPU_STENCIL_KERNEL_H

#include <stddef.h>

enum { MAX_R = 8 };

/* The strips, in argument order 2..5 of both tasks. */
enum { XM, XP, YM, YP, NSTRIPS };

/* Kernel arguments: the radius, the tile's interior extents, which strips
 * a stencil point receives, and for each datum where its logical
 * dimensions are stored (storage position of x, y and the field). */
typedef struct kargs {
  int R, tx, ty;
  int present; /* bit s: strip s is a buffer (stencil) */
  int tile_pos[3];
  int strip_pos[NSTRIPS][2];
} kargs;

/* Element strides of the tile (x, y, field) and of a strip (x, y). */
typedef struct strides {
  size_t x, y, f;
} strides;

/* The tile-local rectangle of strip s: where the tile's own values for a
 * neighbour are (own = 1), or where the neighbour's values go in its halo
 * (own = 0). x0, y0 and the extents nx, ny are tile-local. */
void strip_rect(const kargs *a, int s, int own, int *x0, int *y0, int *nx,
                int *ny);

/* Copies between the input field of the tile and a strip (to_tile: into
 * the tile's halo; otherwise out of the tile's interior). */
void copy_strip(const kargs *a, int s, double *tile, strides ts, double *strip,
                strides ss, int to_tile);

/* out += the weighted star of radius R of in, at the element in and out
 * point to (the Parallel Research Kernels' weights 1 / (2 j R)). Inline:
 * it is the kernel's innermost operation, and the serial reference must do
 * exactly the same arithmetic. */
static inline void stencil_star(const double *in, double *out, strides s,
                                int R) {
  double acc = 0;
  for (int j = 1; j <= R; j++) {
    double w = 1.0 / (2.0 * j * R);
    acc += w * (in[(ptrdiff_t)j * (ptrdiff_t)s.x] -
                in[-(ptrdiff_t)j * (ptrdiff_t)s.x]);
    acc += w * (in[(ptrdiff_t)j * (ptrdiff_t)s.y] -
                in[-(ptrdiff_t)j * (ptrdiff_t)s.y]);
  }
  *out += acc;
}

/* stencil_star over the tile's interior, innermost along the faster
 * dimension of the layout. */
void stencil_tile(const kargs *a, double *tile, strides s);

/* input += 1 over the whole tile, halo included. */
void increment_tile(const kargs *a, double *tile, strides ts);

#endif
