/*
 * The diagnostic catalogue of mapopt/dsl.h (MAPOPT_DSL_DIAG_LIST) as data --
 * each entry's code, severity and template, for tools that enumerate it --
 * and the one function through which the DSL's files append a diagnostic
 * of the catalogue to a list: the code and the severity always come from
 * the entry, the message from its template. Also the one way a misspelled
 * name gets its hint (N04 or N05).
 */
#include "dsl/ast.h"

typedef struct entry {
  const char *code;
  mapopt_severity severity;
  const char *template;
} entry;

static const entry catalogue[MAPOPT_DSL_DIAG_COUNT] = {
#define ENTRY(name, code, sev, tpl) {#code, MAPOPT_SEV_##sev, tpl},
    MAPOPT_DSL_DIAG_LIST(ENTRY)
#undef ENTRY
};

const char *mapopt_dsl_diag_code(mapopt_dsl_diag id) {
  return (unsigned)id < MAPOPT_DSL_DIAG_COUNT ? catalogue[id].code : "";
}

mapopt_severity mapopt_dsl_diag_severity(mapopt_dsl_diag id) {
  return (unsigned)id < MAPOPT_DSL_DIAG_COUNT ? catalogue[id].severity
                                              : MAPOPT_SEV_NOTE;
}

const char *mapopt_dsl_diag_template(mapopt_dsl_diag id) {
  return (unsigned)id < MAPOPT_DSL_DIAG_COUNT ? catalogue[id].template : "";
}

mapopt_status mapopt__dsl_diag(mapopt_diags *diags, mapopt_dsl_diag id,
                               const char *fmt, const char *file,
                               mapopt__loc loc, ...) {
  va_list ap;
  va_start(ap, loc);
  mapopt_status st = mapopt__dsl_diagv(diags, id, fmt, file, loc, ap);
  va_end(ap);
  return st;
}

mapopt_status mapopt__dsl_diagv(mapopt_diags *diags, mapopt_dsl_diag id,
                                const char *fmt, const char *file,
                                mapopt__loc loc, va_list ap) {
  return mapopt_diags_addv(diags, mapopt_dsl_diag_severity(id),
                           mapopt_dsl_diag_code(id), file, loc.line, loc.col,
                           fmt, ap);
}

mapopt_status mapopt__dsl_suggest(mapopt_ctx *ctx, mapopt_diags *diags,
                                  const char *file, mapopt__loc loc,
                                  const char *name, size_t len,
                                  const char *const *names, size_t n,
                                  const char *what) {
  const char *best = mapopt_suggest(name, len, names, n);
  if (best)
    return mapopt__dsl_diag(diags, MAPOPT__DIAG(N04_DID_YOU_MEAN), file, loc,
                            best);
  if (!what || n == 0)
    return MAPOPT_OK;
  enum { MAX_LISTED = 20 };
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  size_t listed = 0;
  for (size_t i = 0; i < n; i++) {
    if (!names[i])
      continue;
    if (listed == MAX_LISTED) {
      size_t rest = 0;
      for (size_t j = i; j < n; j++)
        rest += names[j] != NULL;
      mapopt__sb_printf(&sb, " and %zu more", rest);
      break;
    }
    mapopt__sb_printf(&sb, "%s%s", listed ? ", " : "", names[i]);
    listed++;
  }
  mapopt_status st = sb.failed || !listed
                         ? (sb.failed ? MAPOPT_ENOMEM : MAPOPT_OK)
                         : mapopt__dsl_diag(diags, MAPOPT__DIAG(N05_NAMES),
                                            file, loc, what, sb.data);
  mapopt__sb_destroy(&sb);
  return st;
}
