/*
 * stencil-starpu: a 2-D star stencil of radius R (the Parallel Research
 * Kernels' stencil, as Regent's stencil_fast) on StarPU-MPI, placed by a
 * mapper (docs/starpu.md).
 *
 * The nx x ny grid (with its border of width R) is split into ntx x nty
 * tiles; tile i = iy * ntx + ix carries its own R-wide halo. Each time step
 * is two index launches over the tiles, named as in the built-in `stencil`
 * model (apps/builtin/stencil.json) and apps/starpu-stencil.json:
 *  - stencil: copies the neighbours' boundary strips into the tile's halo,
 *    then out += the weighted star of in over the tile's interior; its
 *    arguments are private (the tile: fields input and output), interior
 *    (no data), pxm_in, pxp_in, pym_in, pyp_in (the neighbours' strips, at
 *    the global border absent) and p_times (the tile's time stamp);
 *  - increment: in += 1 over the tile, then writes the tile's own boundary
 *    strips pxm_out ... pyp_out for its neighbours.
 * The strips are the halo exchange: between ranks StarPU-MPI sends them.
 *
 * Placement: the mapper places every point of both launches (rank and
 * worker). A tile (and its time stamp) is registered on the rank that runs
 * its stencil point, in the memory and with the layout the mapper gives
 * stencil's argument; a tile's strips on the rank of its increment point,
 * with increment's answers. The kernels read the layout (order, SOA or
 * AOS) from the registered data, so every layout runs. Without -mapping,
 * tiles are blocked over the ranks (the DSL's default) and StarPU's
 * scheduler (STARPU_SCHED) picks the workers.
 *
 * After tprune warm-up steps and a fence, tsteps steps are timed and
 * `ELAPSED TIME = x s` printed. With -check 1 each rank then compares its
 * tiles with a serial computation of the whole grid; any difference is
 * reported and the exit status is 3.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "stencil_kernel.h"

static strides block_strides(void *buf, const int pos[3]) {
  size_t ld[3] = {1, STARPU_BLOCK_GET_LDY(buf), STARPU_BLOCK_GET_LDZ(buf)};
  return (strides){ld[pos[0]], ld[pos[1]], ld[pos[2]]};
}

static strides matrix_strides(void *buf, const int pos[2]) {
  size_t ld[2] = {1, STARPU_MATRIX_GET_LD(buf)};
  return (strides){ld[pos[0]], ld[pos[1]], 0};
}

static void stencil_cpu(void *buffers[], void *cl_arg) {
  kargs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  double *tile = (double *)STARPU_BLOCK_GET_PTR(buffers[0]);
  strides ts = block_strides(buffers[0], a.tile_pos);
  int b = 1;
  for (int s = 0; s < NSTRIPS; s++)
    if (a.present >> s & 1) {
      double *strip = (double *)STARPU_MATRIX_GET_PTR(buffers[b]);
      copy_strip(&a, s, tile, ts, strip,
                 matrix_strides(buffers[b], a.strip_pos[s]), 1);
      b++;
    }
  stencil_tile(&a, tile, ts);
  double *t = (double *)STARPU_VECTOR_GET_PTR(buffers[b]);
  t[0] += 1; /* steps this tile has taken */
}

static void increment_cpu(void *buffers[], void *cl_arg) {
  kargs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  double *tile = (double *)STARPU_BLOCK_GET_PTR(buffers[0]);
  strides ts = block_strides(buffers[0], a.tile_pos);
  increment_tile(&a, tile, ts);
  for (int s = 0; s < NSTRIPS; s++) {
    double *strip = (double *)STARPU_MATRIX_GET_PTR(buffers[1 + s]);
    copy_strip(&a, s, tile, ts, strip,
               matrix_strides(buffers[1 + s], a.strip_pos[s]), 0);
  }
  double *t = (double *)STARPU_VECTOR_GET_PTR(buffers[1 + NSTRIPS]);
  t[0] += 1;
}

static struct starpu_codelet stencil_cl = {
    .cpu_funcs = {stencil_cpu},
    .cpu_funcs_name = {"stencil_cpu"},
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .name = "stencil",
};

static struct starpu_codelet increment_cl = {
    .cpu_funcs = {increment_cpu},
    .cpu_funcs_name = {"increment_cpu"},
    .nbuffers = 2 + NSTRIPS,
    .modes = {STARPU_RW, STARPU_W, STARPU_W, STARPU_W, STARPU_W, STARPU_RW},
    .name = "increment",
};

/* ---- the application's names, as in the model ---------------------------- */

static const char *const n_private[] = {"private", "points", NULL};
static const char *const n_interior[] = {"interior", "points", NULL};
static const char *const n_exterior[] = {"exterior", "points", NULL};
static const char *const n_in[NSTRIPS][3] = {{"pxm_in", "xm", NULL},
                                             {"pxp_in", "xp", NULL},
                                             {"pym_in", "ym", NULL},
                                             {"pyp_in", "yp", NULL}};
static const char *const n_out[NSTRIPS][3] = {{"pxm_out", "xm", NULL},
                                              {"pxp_out", "xp", NULL},
                                              {"pym_out", "ym", NULL},
                                              {"pyp_out", "yp", NULL}};
static const char *const n_times[] = {"p_times", "times", NULL};
static const char *const *const stencil_args[] = {
    n_private, n_interior, n_in[0], n_in[1], n_in[2], n_in[3], n_times};
static const char *const *const increment_args[] = {
    n_private, n_exterior, n_out[0], n_out[1], n_out[2], n_out[3], n_times};
static const mapopt_task_info task_info[] = {{"stencil", 7, stencil_args},
                                             {"increment", 7, increment_args}};

static mapopt_region_keys keys_of(const char *const *names, size_t pos) {
  size_t n = 0;
  while (names[n])
    n++;
  return (mapopt_region_keys){names, n, pos};
}

/* ---- the run ------------------------------------------------------------- */

typedef struct tile {
  mapopt_starpu_place sp, ip; /* stencil and increment points */
  int sp_nodes[2 + NSTRIPS];  /* codelet nodes of the stencil buffers */
  int ip_nodes[2 + NSTRIPS];
  int present;
  int tile_home, time_home, strip_home[NSTRIPS]; /* home memory nodes */
  mapopt_starpu_geometry g;                      /* the tile */
  mapopt_starpu_geometry sg[NSTRIPS];            /* its own strips */
  double *data, *strip[NSTRIPS], time;
  starpu_data_handle_t h, hs[NSTRIPS], ht;
  int tile_pos[3], strip_pos[NSTRIPS][2];
} tile;

typedef struct grid {
  int R, ntx, nty, tx, ty, T;
  int64_t nx, ny;
  tile *tiles;
} grid;

/* The initial value of the input at global point (x, y): smooth enough to
 * be a stencil's input, irregular enough that a misplaced value shows. */
static double init_value(int64_t x, int64_t y) {
  return (double)((x * 31 + y * 17) % 101) / 101.0;
}

/* Places both launches, then decides each datum's owner, memory and
 * layout. false after reporting a mapping error. */
static bool plan(app *a, grid *gr) {
  unsigned sv = mapopt_starpu_codelet_variants(&stencil_cl);
  unsigned iv = mapopt_starpu_codelet_variants(&increment_cl);
  int64_t ext = gr->T;
  for (int i = 0; i < gr->T; i++) {
    tile *t = &gr->tiles[i];
    int64_t pt = i;
    if (!app_placed(a,
                    mapopt_starpu_place_index(a->mapper, "stencil", sv, 1, &pt,
                                              &ext, a->diags, &t->sp)) ||
        !app_placed(a, mapopt_starpu_place_index(a->mapper, "increment", iv, 1,
                                                 &pt, &ext, a->diags, &t->ip)))
      return false;
  }
  for (int i = 0; i < gr->T; i++) {
    tile *t = &gr->tiles[i];
    int ix = i % gr->ntx, iy = i / gr->ntx;
    t->present = (ix > 0) << XM | (ix < gr->ntx - 1) << XP | (iy > 0) << YM |
                 (iy < gr->nty - 1) << YP;
    /* stencil's arguments: 0 the tile, 2..5 strips, 6 the time stamp. */
    mapopt_starpu_memory mem;
    int nb = 0;
    static const int spos[] = {0, 2, 3, 4, 5, 6};
    for (int k = 0; k < 6; k++) {
      int pos = spos[k];
      if (pos >= 2 && pos <= 5 && !(t->present >> (pos - 2) & 1))
        continue;
      mapopt_region_keys keys = keys_of(stencil_args[pos], (size_t)pos);
      if (!app_placed(a, mapopt_starpu_memory_of(a->mapper, "stencil", &keys,
                                                 &t->sp, a->diags, &mem)))
        return false;
      t->sp_nodes[nb++] = mem.codelet_node;
      if (pos == 6)
        t->time_home = mem.node;
      if (pos == 0) {
        t->tile_home = mem.node;
        mapopt_layout l;
        mapopt_starpu_layout_of(a->mapper, "stencil", &keys, &t->sp, mem.kind,
                                &l);
        int64_t e[2] = {gr->tx + 2 * gr->R, gr->ty + 2 * gr->R};
        if (mapopt_starpu_geometry_of(&l, 2, e, 2, sizeof(double), &t->g) !=
            MAPOPT_OK) {
          fprintf(stderr, "%s: error: tile too large\n", a->prog);
          return false;
        }
        app_storage_pos(&t->g, 2, t->tile_pos);
      }
    }
    static const int ipos[] = {0, 2, 3, 4, 5, 6};
    for (int k = 0; k < 6; k++) {
      int pos = ipos[k];
      mapopt_region_keys keys = keys_of(increment_args[pos], (size_t)pos);
      if (!app_placed(a, mapopt_starpu_memory_of(a->mapper, "increment", &keys,
                                                 &t->ip, a->diags, &mem)))
        return false;
      t->ip_nodes[k] = mem.codelet_node;
      if (pos >= 2 && pos <= 5) {
        int s = pos - 2;
        t->strip_home[s] = mem.node;
        mapopt_layout l;
        mapopt_starpu_layout_of(a->mapper, "increment", &keys, &t->ip, mem.kind,
                                &l);
        bool xs = s == XM || s == XP;
        int64_t e[2] = {xs ? gr->R : gr->tx, xs ? gr->ty : gr->R};
        mapopt_starpu_geometry_of(&l, 2, e, 1, sizeof(double), &t->sg[s]);
        app_storage_pos(&t->sg[s], 2, t->strip_pos[s]);
      }
    }
  }
  return true;
}

/* Registers every tile, strip and time stamp on its owner, with the initial
 * values there (the fills of the model). false when out of memory. */
static bool setup(app *a, grid *gr) {
  for (int i = 0; i < gr->T; i++) {
    tile *t = &gr->tiles[i];
    int ix = i % gr->ntx, iy = i / gr->ntx;
    int64_t gx0 = (int64_t)ix * gr->tx, gy0 = (int64_t)iy * gr->ty;
    bool mine = t->sp.rank == a->rank;
    if (mine) {
      t->data = app_alloc(&t->g);
      if (!t->data)
        return false;
      strides s = {t->g.stride[0], t->g.stride[1], t->g.field_stride};
      for (int y = 0; y < gr->ty + 2 * gr->R; y++)
        for (int x = 0; x < gr->tx + 2 * gr->R; x++) {
          size_t o = (size_t)x * s.x + (size_t)y * s.y;
          t->data[o] = init_value(gx0 + x, gy0 + y);
          t->data[o + s.f] = 0;
        }
    }
    mapopt_starpu_register(&t->h, mine ? t->tile_home : -1, t->data, &t->g);
    if (!app_mpi_register(a, t->h, t->sp.rank))
      return false;
    t->time = 0;
    starpu_vector_data_register(&t->ht, mine ? t->time_home : -1,
                                mine ? (uintptr_t)&t->time : 0, 1,
                                sizeof(double));
    if (!app_mpi_register(a, t->ht, t->sp.rank))
      return false;
    bool own_strips = t->ip.rank == a->rank;
    kargs ka = {gr->R, gr->tx, gr->ty, 0, {0}, {{0}}};
    for (int s = 0; s < NSTRIPS; s++) {
      const mapopt_starpu_geometry *g = &t->sg[s];
      if (own_strips) {
        t->strip[s] = app_alloc(g);
        if (!t->strip[s])
          return false;
        int x0, y0, nx, ny;
        strip_rect(&ka, s, 1, &x0, &y0, &nx, &ny);
        for (int y = 0; y < ny; y++)
          for (int x = 0; x < nx; x++)
            t->strip[s][(size_t)x * g->stride[0] + (size_t)y * g->stride[1]] =
                init_value(gx0 + x0 + x, gy0 + y0 + y);
      }
      mapopt_starpu_register(&t->hs[s], own_strips ? t->strip_home[s] : -1,
                             t->strip[s], g);
      if (!app_mpi_register(a, t->hs[s], t->ip.rank))
        return false;
    }
  }
  return true;
}

/* The neighbour whose strip s tile i reads (pxm_in: the tile on its
 * left, ...). */
static int neighbour(const grid *gr, int i, int s) {
  return s == XM   ? i - 1
         : s == XP ? i + 1
         : s == YM ? i - gr->ntx
                   : i + gr->ntx;
}

static void step(app *a, grid *gr) {
  for (int i = 0; i < gr->T; i++) {
    tile *t = &gr->tiles[i];
    kargs ka = {gr->R, gr->tx, gr->ty, t->present, {0}, {{0}}};
    memcpy(ka.tile_pos, t->tile_pos, sizeof ka.tile_pos);
    struct starpu_data_descr d[2 + NSTRIPS];
    int nb = 0;
    d[nb++] = (struct starpu_data_descr){t->h, STARPU_RW};
    for (int s = 0; s < NSTRIPS; s++)
      if (t->present >> s & 1) {
        const tile *n = &gr->tiles[neighbour(gr, i, s)];
        memcpy(ka.strip_pos[s], n->strip_pos[s], sizeof ka.strip_pos[s]);
        d[nb++] = (struct starpu_data_descr){n->hs[s], STARPU_R};
      }
    d[nb++] = (struct starpu_data_descr){t->ht, STARPU_RW};
    app_submit(a, &stencil_cl, &ka, sizeof ka, d, nb, t->sp_nodes, &t->sp);
  }
  for (int i = 0; i < gr->T; i++) {
    tile *t = &gr->tiles[i];
    kargs ka = {gr->R, gr->tx, gr->ty, 0, {0}, {{0}}};
    memcpy(ka.tile_pos, t->tile_pos, sizeof ka.tile_pos);
    memcpy(ka.strip_pos, t->strip_pos, sizeof ka.strip_pos);
    struct starpu_data_descr d[2 + NSTRIPS];
    d[0] = (struct starpu_data_descr){t->h, STARPU_RW};
    for (int s = 0; s < NSTRIPS; s++)
      d[1 + s] = (struct starpu_data_descr){t->hs[s], STARPU_W};
    d[1 + NSTRIPS] = (struct starpu_data_descr){t->ht, STARPU_RW};
    app_submit(a, &increment_cl, &ka, sizeof ka, d, 2 + NSTRIPS, t->ip_nodes,
               &t->ip);
  }
}

/* The serial reference: the whole grid, steps steps, with the kernel's own
 * arithmetic (so the results agree to the last bit). NULL when too big. */
static double *serial(const grid *gr, int steps) {
  int64_t nx = gr->ntx * (int64_t)gr->tx + 2 * gr->R;
  int64_t ny = gr->nty * (int64_t)gr->ty + 2 * gr->R;
  if (nx * ny > (int64_t)1 << 27)
    return NULL;
  double *g = malloc((size_t)(nx * ny) * 2 * sizeof *g);
  if (!g)
    return NULL;
  double *in = g, *out = g + nx * ny;
  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++) {
      in[y * nx + x] = init_value(x, y);
      out[y * nx + x] = 0;
    }
  strides s = {1, (size_t)nx, (size_t)(nx * ny)};
  for (int t = 0; t < steps; t++) {
    for (int64_t y = gr->R; y < ny - gr->R; y++)
      for (int64_t x = gr->R; x < nx - gr->R; x++)
        stencil_star(in + y * nx + x, out + y * nx + x, s, gr->R);
    for (int64_t k = 0; k < nx * ny; k++)
      in[k] += 1;
  }
  return g;
}

/* Compares this rank's tiles with the reference; returns the number of
 * points that differ and the largest difference in *err. */
static int64_t compare(app *a, grid *gr, const double *ref, double *err) {
  int64_t nx = gr->ntx * (int64_t)gr->tx + 2 * gr->R;
  int64_t ny = gr->nty * (int64_t)gr->ty + 2 * gr->R;
  int64_t bad = 0;
  *err = 0;
  for (int i = 0; i < gr->T; i++) {
    tile *t = &gr->tiles[i];
    if (t->sp.rank != a->rank)
      continue;
    starpu_data_acquire(t->h, STARPU_R);
    const double *p = (const double *)starpu_data_get_local_ptr(t->h);
    strides s = {t->g.stride[0], t->g.stride[1], t->g.field_stride};
    int64_t gx0 = (int64_t)(i % gr->ntx) * gr->tx;
    int64_t gy0 = (int64_t)(i / gr->ntx) * gr->ty;
    for (int y = gr->R; y < gr->R + gr->ty; y++)
      for (int x = gr->R; x < gr->R + gr->tx; x++)
        for (int f = 0; f < 2; f++) {
          double v = p[(size_t)x * s.x + (size_t)y * s.y + (size_t)f * s.f];
          double r = ref[f * nx * ny + (gy0 + y) * nx + gx0 + x];
          double d = fabs(v - r);
          if (d > *err)
            *err = d;
          if (!(d <= 1e-12 * (1 + fabs(r))))
            bad++;
        }
    starpu_data_release(t->h);
  }
  return bad;
}

static const char usage[] =
    "A 2-D star stencil with halo exchange on StarPU-MPI (docs/starpu.md).\n"
    "Prints ELAPSED TIME = x s for the tsteps timed steps.";

int main(int argc, char **argv) {
  int64_t nx = 1028, ny = 1028, ntx = 2, nty = 2, tsteps = 10, tprune = 2;
  int64_t R = 2, check = 1, corrupt = 0;
  app_option opts[] = {
      {"nx", &nx, 3, 1 << 20, "grid points along x, with the border"},
      {"ny", &ny, 3, 1 << 20, "grid points along y, with the border"},
      {"ntx", &ntx, 1, 1024, "tiles along x"},
      {"nty", &nty, 1, 1024, "tiles along y"},
      {"tsteps", &tsteps, 1, 1000000, "timed steps"},
      {"tprune", &tprune, 0, 1000000, "warm-up steps before the timing"},
      {"R", &R, 1, MAX_R, "stencil radius"},
      {"check", &check, 0, 1, "1: compare with a serial reference"},
      {"corrupt", &corrupt, 0, 1,
       "1: change one result value before the check (tests the check)"}};
  app a;
  int st = app_start(&a, argc, argv, usage, opts, sizeof opts / sizeof *opts,
                     task_info, 2, false);
  if (st)
    return st < 0 ? 0 : st;
  grid gr = {(int)R, (int)ntx, (int)nty, 0, 0, (int)(ntx * nty), nx, ny, NULL};
  if ((nx - 2 * R) % ntx || (ny - 2 * R) % nty || nx - 2 * R < ntx * R ||
      ny - 2 * R < nty * R) {
    if (a.rank == 0)
      fprintf(stderr,
              "%s: error: the interior (nx - 2R) x (ny - 2R) = %" PRId64
              " x %" PRId64 " must split into %" PRId64 " x %" PRId64
              " equal tiles of at least R points\n",
              a.prog, nx - 2 * R, ny - 2 * R, ntx, nty);
    return app_finish(&a, EXIT_USAGE);
  }
  gr.tx = (int)((nx - 2 * R) / ntx);
  gr.ty = (int)((ny - 2 * R) / nty);
  gr.tiles = calloc((size_t)gr.T, sizeof *gr.tiles);
  if (!gr.tiles) {
    fprintf(stderr, "%s: error: out of memory\n", a.prog);
    return app_finish(&a, EXIT_USAGE);
  }
  if (!plan(&a, &gr)) {
    free(gr.tiles);
    return app_finish(&a, EXIT_MAPPER);
  }
  app_report(&a); /* warnings raised while placing */
  if (!setup(&a, &gr)) {
    fprintf(stderr, "%s: error: out of memory\n", a.prog);
    return app_finish(&a, EXIT_USAGE);
  }
  for (int s = 0; s < tprune; s++)
    step(&a, &gr);
  app_fence(&a);
  double t0 = app_now();
  for (int s = 0; s < tsteps; s++)
    step(&a, &gr);
  app_fence(&a);
  double t1 = app_now();
  int status = 0;
  if (a.rank == 0)
    printf("ELAPSED TIME = %.6f s\n", (t1 - t0) / 1e6);
  if (corrupt && gr.tiles[0].sp.rank == a.rank) {
    tile *t = &gr.tiles[0];
    starpu_data_acquire(t->h, STARPU_RW);
    double *p = (double *)starpu_data_get_local_ptr(t->h);
    p[(size_t)gr.R * (t->g.stride[0] + t->g.stride[1]) + t->g.field_stride] +=
        1;
    starpu_data_release(t->h);
  }
  if (check) {
    double *ref = serial(&gr, (int)(tprune + tsteps));
    double err = 0;
    int64_t bad = ref ? compare(&a, &gr, ref, &err) : -1;
    free(ref);
    char ok[128];
    snprintf(ok, sizeof ok,
             "%" PRId64 " x %" PRId64 " grid after %" PRId64
             " steps equals the serial reference",
             nx, ny, tprune + tsteps);
    status = app_verdict(&a, bad, err,
                         "the grid is too large for the serial reference "
                         "(run with -check 0)",
                         "values differ from the serial reference", ok);
  }
  for (int i = 0; i < gr.T; i++) {
    tile *t = &gr.tiles[i];
    starpu_data_unregister(t->h);
    starpu_data_unregister(t->ht);
    for (int s = 0; s < NSTRIPS; s++) {
      starpu_data_unregister(t->hs[s]);
      free(t->strip[s]);
    }
    free(t->data);
  }
  free(gr.tiles);
  return app_finish(&a, status);
}
