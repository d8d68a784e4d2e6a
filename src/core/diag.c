/*
 * Diagnostics: the list that collects them and the one place that formats
 * them as GCC does ("FILE:LINE:COL: error: MESSAGE"), so editors, CI and
 * the optimizers all read the same text.
 *
 * The list is bounded, as compilers bound their output: past its limit of
 * errors, or of warnings, one note says so and the rest of that kind are
 * counted but not kept (a file of 80000 unknown keys gives 100 errors, not
 * 80000). A note goes where the diagnostic it follows went. Control
 * characters in a message or a file name -- from a name in a user's file,
 * perhaps a terminal escape sequence -- are kept as "\xNN", so that
 * printing a diagnostic can never drive the terminal.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

/* The two kinds a limit applies to: errors, and warnings with notes. */
enum { KIND_ERRORS, KIND_OTHERS, NKINDS };

struct mapopt_diags {
  mapopt_ctx *ctx;
  mapopt__vec items; /* of mapopt_diag; file and message are owned */
  size_t limit;      /* per kind; 0: none */
  size_t kept[NKINDS];
  size_t dropped[NKINDS];
  bool last_dropped; /* the latest diagnostic was not kept */
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
  memset(d, 0, sizeof *d);
  d->ctx = ctx;
  d->limit = MAPOPT_DIAGS_LIMIT;
  mapopt__vec_init(&d->items, sizeof(mapopt_diag));
  *out = d;
  return MAPOPT_OK;
}

void mapopt_diags_set_limit(mapopt_diags *diags, size_t limit) {
  diags->limit = limit;
}

void mapopt_diags_clear(mapopt_diags *diags) {
  for (size_t i = 0; i < diags->items.len; i++) {
    mapopt_diag *d = &MAPOPT__VEC_AT(&diags->items, mapopt_diag, i);
    mapopt__free(diags->ctx, (char *)d->file, strlen(d->file) + 1);
    mapopt__free(diags->ctx, (char *)d->message, strlen(d->message) + 1);
  }
  diags->items.len = 0;
  memset(diags->kept, 0, sizeof diags->kept);
  memset(diags->dropped, 0, sizeof diags->dropped);
  diags->last_dropped = false;
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

static bool is_error(mapopt_severity sev) {
  return sev == MAPOPT_SEV_ERROR || sev == MAPOPT_SEV_MAPPING_ERROR;
}

size_t mapopt_diags_errors(const mapopt_diags *diags) {
  return diags->kept[KIND_ERRORS] + diags->dropped[KIND_ERRORS];
}

size_t mapopt_diags_dropped(const mapopt_diags *diags) {
  return diags->dropped[KIND_ERRORS] + diags->dropped[KIND_OTHERS];
}

/* Copies s with every control character written as \xNN. NULL on
 * ENOMEM. */
static char *escaped(mapopt_ctx *ctx, const char *s, size_t *len) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p == 0x7f)
      mapopt__sb_printf(&sb, "\\x%02X", *p);
    else
      mapopt__sb_putc(&sb, (char)*p);
  }
  return mapopt__sb_take(&sb, len);
}

/* Appends a diagnostic whose message is already formatted. */
static mapopt_status push(mapopt_diags *diags, mapopt_severity sev,
                          const char *code, const char *file, int line, int col,
                          const char *text) {
  size_t mlen, flen;
  char *msg = escaped(diags->ctx, text, &mlen);
  char *fcopy = escaped(diags->ctx, file ? file : "", &flen);
  mapopt_diag *d =
      msg && fcopy ? mapopt__vec_push(&diags->items, diags->ctx) : NULL;
  if (!d) {
    if (msg)
      mapopt__free(diags->ctx, msg, mlen + 1);
    if (fcopy)
      mapopt__free(diags->ctx, fcopy, flen + 1);
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

/* Whether a diagnostic of severity sev is past the limit; the first one
 * past it of its kind leaves the note that says so. */
static bool over_limit(mapopt_diags *diags, mapopt_severity sev,
                       const char *file, mapopt_status *st) {
  int kind = is_error(sev) ? KIND_ERRORS : KIND_OTHERS;
  bool follows = sev == MAPOPT_SEV_NOTE && diags->items.len > 0;
  if (follows ? !diags->last_dropped
              : diags->limit == 0 || diags->kept[kind] < diags->limit)
    return false;
  if (!follows && diags->dropped[kind] == 0) {
    char note[80];
    snprintf(note, sizeof note, "too many %s: only the first %zu are shown",
             kind == KIND_ERRORS ? "errors" : "warnings", diags->limit);
    *st = push(diags, MAPOPT_SEV_NOTE, "", file, 0, 0, note);
  }
  diags->dropped[kind]++;
  diags->last_dropped = true;
  return true;
}

mapopt_status mapopt_diags_addv(mapopt_diags *diags, mapopt_severity sev,
                                const char *code, const char *file, int line,
                                int col, const char *fmt, va_list ap) {
  mapopt_status st = MAPOPT_OK;
  if (over_limit(diags, sev, file, &st))
    return st;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, diags->ctx);
  mapopt__sb_vprintf(&sb, fmt, ap);
  size_t mlen;
  char *msg = mapopt__sb_take(&sb, &mlen);
  if (!msg)
    return MAPOPT_ENOMEM;
  bool follows = sev == MAPOPT_SEV_NOTE && diags->items.len > 0;
  st = push(diags, sev, code, file, line, col, msg);
  mapopt__free(diags->ctx, msg, mlen + 1);
  if (st == MAPOPT_OK) { /* counted once kept: a failed copy changes nothing */
    if (!follows)
      diags->kept[is_error(sev) ? KIND_ERRORS : KIND_OTHERS]++;
    diags->last_dropped = false;
  }
  return st;
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
