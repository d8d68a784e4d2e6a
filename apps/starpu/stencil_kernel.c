/* The stencil's kernels on one tile (stencil_kernel.h). */
#include <stdbool.h>

#include "stencil_kernel.h"

void strip_rect(const kargs *a, int s, int own, int *x0, int *y0, int *nx,
                int *ny) {
  int R = a->R;
  bool xs = s == XM || s == XP;
  *nx = xs ? R : a->tx;
  *ny = xs ? a->ty : R;
  *x0 = xs ? 0 : R;
  *y0 = xs ? R : 0;
  /* xm: a tile's right columns, the right neighbour's left halo. */
  if (s == XM)
    *x0 = own ? a->tx : 0;
  if (s == XP)
    *x0 = own ? R : R + a->tx;
  if (s == YM)
    *y0 = own ? a->ty : 0;
  if (s == YP)
    *y0 = own ? R : R + a->ty;
}

/* Copies between the input field of the tile and a strip (to_tile: into
 * the tile's halo; otherwise out of the tile's interior). */
void copy_strip(const kargs *a, int s, double *tile, strides ts, double *strip,
                strides ss, int to_tile) {
  int x0, y0, nx, ny;
  strip_rect(a, s, !to_tile, &x0, &y0, &nx, &ny);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++) {
      double *t = &tile[(size_t)(x0 + x) * ts.x + (size_t)(y0 + y) * ts.y];
      double *p = &strip[(size_t)x * ss.x + (size_t)y * ss.y];
      if (to_tile)
        *t = *p;
      else
        *p = *t;
    }
}

/* The interior update, innermost loop along the faster dimension. */
void stencil_tile(const kargs *a, double *tile, strides s) {
  int R = a->R;
  double *in = tile, *out = tile + s.f;
  if (s.x <= s.y) {
    for (int y = R; y < R + a->ty; y++)
      for (int x = R; x < R + a->tx; x++) {
        size_t o = (size_t)x * s.x + (size_t)y * s.y;
        stencil_star(in + o, out + o, s, R);
      }
  } else {
    for (int x = R; x < R + a->tx; x++)
      for (int y = R; y < R + a->ty; y++) {
        size_t o = (size_t)x * s.x + (size_t)y * s.y;
        stencil_star(in + o, out + o, s, R);
      }
  }
}

void increment_tile(const kargs *a, double *tile, strides ts) {
  int ex = a->tx + 2 * a->R, ey = a->ty + 2 * a->R;
  if (ts.x <= ts.y) {
    for (int y = 0; y < ey; y++)
      for (int x = 0; x < ex; x++)
        tile[(size_t)x * ts.x + (size_t)y * ts.y] += 1;
  } else {
    for (int x = 0; x < ex; x++)
      for (int y = 0; y < ey; y++)
        tile[(size_t)x * ts.x + (size_t)y * ts.y] += 1;
  }
}
