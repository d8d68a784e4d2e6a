/*
 * Internal header of the `mapopt-app/1` loader: its state and the helpers
 * (loader.c) that load.c (the structure of a model) and params.c (its
 * parameters, derived parameters, sizes and the log's settings line) share;
 * load.c calls params.c, and both call loader.c. Every
 * helper reports running out of memory through the loader (its status
 * becomes MAPOPT_ENOMEM) and returns NULL or -1 then.
 */
#ifndef MAPOPT_SRC_APP_LOADER_H
#define MAPOPT_SRC_APP_LOADER_H

#include "app/app.h"

typedef struct loader {
  mapopt_app *app;
  mapopt__arena *a;
  mapopt__jr jr;
  bool nomem;
  mapopt__map regions, parts, tasks, futures;
  mapopt__vec futvec;   /* const char * */
  mapopt__vec produced; /* bool per future */
  mapopt__vec waits;    /* wait_ref */
  bool saw_timed;       /* a timed block in the time-step loop */
  int tsline, tscol;
} loader;

void mapopt__ld_nomem(loader *L);
/* Copies of s and zeroed arrays of n elements, in the model's arena. */
const char *mapopt__ld_dup(loader *L, const char *s);
void *mapopt__ld_zalloc(loader *L, size_t n, size_t size);
const char *mapopt__ld_fmt(loader *L, const char *f, ...)
    __attribute__((format(printf, 2, 3)));
/* The symbol of name s (interned on first use). */
int32_t mapopt__ld_intern(loader *L, const char *s);
/* Whether s is a name of the expression language. */
bool mapopt__ld_is_ident(const char *s);
/* The expression of JSON value v (a string or an integer), "key" of what in
 * diagnostics; NULL after a located error. */
mapopt__app_expr *mapopt__ld_expr(loader *L, const mapopt__json *v,
                                  const char *key, const char *what);

/* The "params", "derived" and "sizes" keys of root (params.c). */
void mapopt__ld_params(loader *L, const mapopt__json *root);
/* The template of "timing"'s "log_settings" (params.c). */
void mapopt__ld_log_settings(loader *L, const mapopt__json *v);
/* After the scope check: the parameter slots of every symbol, and the order
 * in which derived parameters are evaluated, with a located error for a
 * derived parameter that depends on itself (params.c). */
void mapopt__ld_slots(loader *L);
void mapopt__ld_derived_order(loader *L);

#endif /* MAPOPT_SRC_APP_LOADER_H */
