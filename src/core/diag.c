/*
 * Diagnostics: the list that collects them and the one place that formats
 * them as GCC does ("FILE:LINE:COL: error: MESSAGE"), so editors, CI and
 * the optimizers all read the same text.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

struct mapopt_diags {
  mapopt_ctx *ctx;
  mapopt__vec items; /* of mapopt_diag; file and message are owned */
};

const char *mapopt_severity_name(mapopt_severity sev) {
  switch (sev) {
  case MAPOPT_SEV_NOTE:
    return "note";
  case MAPOPT_SEV_WARNING:
    return "warning";
  case MAPOPT_SEV_ERROR:
    return "error";
  case MAPOPT_SEV_MAPPING_ERROR:
    return "mapping error";
  }
  return "error";
}

mapopt_status mapopt_diags_new(mapopt_ctx *ctx, mapopt_diags **out) {
  mapopt_diags *d = mapopt__malloc(ctx, sizeof *d);
  if (!d)
    return MAPOPT_ENOMEM;
  d->ctx = ctx;
  mapopt__vec_init(&d->items, sizeof(mapopt_diag));
  *out = d;
  return MAPOPT_OK;
}

void mapopt_diags_clear(mapopt_diags *diags) {
  for (size_t i = 0; i < diags->items.len; i++) {
    mapopt_diag *d = &MAPOPT__VEC_AT(&diags->items, mapopt_diag, i);
    mapopt__free(diags->ctx, (char *)d->file, strlen(d->file) + 1);
    mapopt__free(diags->ctx, (char *)d->message, strlen(d->message) + 1);
  }
  diags->items.len = 0;
}

void mapopt_diags_free(mapopt_diags *diags) {
  if (!diags)
    return;
  mapopt_diags_clear(diags);
  mapopt__vec_destroy(&diags->items, diags->ctx);
  mapopt__free(diags->ctx, diags, sizeof *diags);
}

size_t mapopt_diags_count(const mapopt_diags *diags) {
  return diags->items.len;
}

const mapopt_diag *mapopt_diags_get(const mapopt_diags *diags, size_t i) {
  return i < diags->items.len ? &MAPOPT__VEC_AT(&diags->items, mapopt_diag, i)
                              : NULL;
}

size_t mapopt_diags_errors(const mapopt_diags *diags) {
  size_t n = 0;
  for (size_t i = 0; i < diags->items.len; i++) {
    mapopt_severity s = MAPOPT__VEC_AT(&diags->items, mapopt_diag, i).severity;
    n += s == MAPOPT_SEV_ERROR || s == MAPOPT_SEV_MAPPING_ERROR;
  }
  return n;
}

mapopt_status mapopt_diags_addv(mapopt_diags *diags, mapopt_severity sev,
                                const char *code, const char *file, int line,
                                int col, const char *fmt, va_list ap) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, diags->ctx);
  mapopt__sb_vprintf(&sb, fmt, ap);
  size_t mlen;
  char *msg = mapopt__sb_take(&sb, &mlen);
  if (!file)
    file = "";
  char *fcopy = mapopt__strndup(diags->ctx, file, strlen(file));
  mapopt_diag *d =
      msg && fcopy ? mapopt__vec_push(&diags->items, diags->ctx) : NULL;
  if (!d) {
    if (msg)
      mapopt__free(diags->ctx, msg, mlen + 1);
    if (fcopy)
      mapopt__free(diags->ctx, fcopy, strlen(fcopy) + 1);
    return MAPOPT_ENOMEM;
  }
  d->severity = sev;
  snprintf(d->code, sizeof d->code, "%s", code ? code : "");
  d->file = fcopy;
  d->line = line;
  d->col = col;
  d->message = msg;
  return MAPOPT_OK;
}

mapopt_status mapopt_diags_add(mapopt_diags *diags, mapopt_severity sev,
                               const char *code, const char *file, int line,
                               int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mapopt_status st =
      mapopt_diags_addv(diags, sev, code, file, line, col, fmt, ap);
  va_end(ap);
  return st;
}

/* The GCC layout, with and without a position. */
#define DIAG_AT "%s:%d:%d: %s: %s"
#define DIAG_FILE "%s: %s: %s"

int mapopt_diag_format(const mapopt_diag *d, char *buf, size_t size) {
  const char *sev = mapopt_severity_name(d->severity);
  if (d->line > 0)
    return snprintf(buf, size, DIAG_AT, d->file, d->line, d->col, sev,
                    d->message);
  return snprintf(buf, size, DIAG_FILE, d->file, sev, d->message);
}

void mapopt__sb_diag(mapopt__strbuf *sb, const mapopt_diag *d) {
  const char *sev = mapopt_severity_name(d->severity);
  if (d->line > 0)
    mapopt__sb_printf(sb, DIAG_AT, d->file, d->line, d->col, sev, d->message);
  else
    mapopt__sb_printf(sb, DIAG_FILE, d->file, sev, d->message);
}
