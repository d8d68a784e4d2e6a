/*
 * The located JSON reader (json.h): a recursive-descent parser over bytes
 * that records the line and column of every value and key, and the
 * validating helpers that loaders use to turn a tree into a model with
 * precise diagnostics. Nesting is bounded, so no input can exhaust the
 * stack; duplicate keys are errors, since a silently ignored setting in a
 * machine or application file is a wrong result.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/json.h"

#define MAX_DEPTH 256

typedef struct parser {
  mapopt__arena *arena;
  const char *file;
  const char *p, *end, *line_start;
  int line;
  mapopt_diags *diags;
  mapopt_status status;
  int depth;
} parser;

static int col_of(const parser *ps, const char *at) {
  return (int)(at - ps->line_start) + 1;
}

static bool perr(parser *ps, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool perr(parser *ps, const char *at, const char *fmt, ...) {
  if (ps->status != MAPOPT_OK)
    return false;
  va_list ap;
  va_start(ap, fmt);
  ps->status = mapopt_diags_addv(ps->diags, MAPOPT_SEV_ERROR, "", ps->file,
                                 ps->line, col_of(ps, at), fmt, ap) == MAPOPT_OK
                   ? MAPOPT_EINVAL
                   : MAPOPT_ENOMEM;
  va_end(ap);
  return false;
}

static bool oom(parser *ps) {
  ps->status = MAPOPT_ENOMEM;
  return false;
}

static void skip_ws(parser *ps) {
  while (ps->p < ps->end) {
    char c = *ps->p;
    if (c == '\n') {
      ps->line++;
      ps->line_start = ++ps->p;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ps->p++;
    } else {
      break;
    }
  }
}

/* A short description of the byte at p for "unexpected ..." messages. */
static void describe(const parser *ps, char *buf, size_t size) {
  if (ps->p >= ps->end)
    snprintf(buf, size, "end of file");
  else if ((unsigned char)*ps->p >= 0x20 && (unsigned char)*ps->p < 0x7f)
    snprintf(buf, size, "'%c'", *ps->p);
  else
    snprintf(buf, size, "byte \\x%02X", (unsigned char)*ps->p);
}

static mapopt__json *new_value(parser *ps, mapopt__json_type t,
                               const char *at) {
  mapopt__json *v = mapopt__arena_zalloc(ps->arena, sizeof *v);
  if (!v) {
    oom(ps);
    return NULL;
  }
  v->type = t;
  v->line = ps->line;
  v->col = col_of(ps, at);
  return v;
}

static void put_utf8(char *out, size_t *n, uint32_t cp) {
  if (cp < 0x80) {
    out[(*n)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*n)++] = (char)(0xC0 | (cp >> 6));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*n)++] = (char)(0xE0 | (cp >> 12));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*n)++] = (char)(0xF0 | (cp >> 18));
    out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  }
}

static bool hex4(parser *ps, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    if (ps->p >= ps->end)
      return perr(ps, ps->p, "unterminated \\u escape");
    char c = *ps->p;
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0)
      return perr(ps, ps->p, "invalid \\u escape");
    v = v * 16 + (uint32_t)d;
    ps->p++;
  }
  *out = v;
  return true;
}

/* string at ps->p (the opening quote). Decoded bytes go to the arena. */
static bool parse_string(parser *ps, const char **s, size_t *len) {
  const char *open = ps->p++;
  /* The decoded text is never longer than the source. */
  const char *q = ps->p;
  while (q < ps->end && *q != '"' && *q != '\n') {
    if (*q == '\\' && q + 1 < ps->end)
      q++;
    q++;
  }
  char *out = mapopt__arena_alloc(ps->arena, (size_t)(q - ps->p) + 1);
  if (!out)
    return oom(ps);
  size_t n = 0;
  for (;;) {
    if (ps->p >= ps->end || *ps->p == '\n')
      return perr(ps, open, "unterminated string");
    unsigned char c = (unsigned char)*ps->p;
    if (c == '"') {
      ps->p++;
      break;
    }
    if (c < 0x20)
      return perr(ps, ps->p, "control character in string");
    if (c != '\\') {
      out[n++] = (char)c;
      ps->p++;
      continue;
    }
    const char *esc = ps->p++;
    if (ps->p >= ps->end)
      return perr(ps, open, "unterminated string");
    char e = *ps->p++;
    switch (e) {
    case '"':
    case '\\':
    case '/':
      out[n++] = e;
      break;
    case 'b':
      out[n++] = '\b';
      break;
    case 'f':
      out[n++] = '\f';
      break;
    case 'n':
      out[n++] = '\n';
      break;
    case 'r':
      out[n++] = '\r';
      break;
    case 't':
      out[n++] = '\t';
      break;
    case 'u': {
      uint32_t cp;
      if (!hex4(ps, &cp))
        return false;
      if (cp >= 0xD800 && cp < 0xDC00) {
        uint32_t lo;
        if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
          return perr(ps, esc, "unpaired surrogate in \\u escape");
        ps->p += 2;
        if (!hex4(ps, &lo))
          return false;
        if (lo < 0xDC00 || lo > 0xDFFF)
          return perr(ps, esc, "unpaired surrogate in \\u escape");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        return perr(ps, esc, "unpaired surrogate in \\u escape");
      }
      if (cp == 0)
        return perr(ps, esc, "\\u0000 is not allowed in strings");
      put_utf8(out, &n, cp);
      break;
    }
    default:
      return perr(ps, esc, "invalid escape '\\%c'", e);
    }
  }
  out[n] = '\0';
  *s = out;
  *len = n;
  return true;
}

static bool parse_number(parser *ps, mapopt__json **out) {
  const char *start = ps->p;
  const char *q = ps->p;
  bool is_int = true;
  if (q < ps->end && *q == '-')
    q++;
  if (q >= ps->end || !(*q >= '0' && *q <= '9'))
    return perr(ps, start, "invalid number");
  if (*q == '0' && q + 1 < ps->end && q[1] >= '0' && q[1] <= '9')
    return perr(ps, start, "leading zeros are not allowed in numbers");
  while (q < ps->end && *q >= '0' && *q <= '9')
    q++;
  if (q < ps->end && *q == '.') {
    is_int = false;
    q++;
    if (q >= ps->end || !(*q >= '0' && *q <= '9'))
      return perr(ps, start, "invalid number");
    while (q < ps->end && *q >= '0' && *q <= '9')
      q++;
  }
  if (q < ps->end && (*q == 'e' || *q == 'E')) {
    is_int = false;
    q++;
    if (q < ps->end && (*q == '+' || *q == '-'))
      q++;
    if (q >= ps->end || !(*q >= '0' && *q <= '9'))
      return perr(ps, start, "invalid number");
    while (q < ps->end && *q >= '0' && *q <= '9')
      q++;
  }
  char buf[64];
  size_t n = (size_t)(q - start);
  mapopt__json *v = new_value(ps, MAPOPT_JSON_REAL, start);
  if (!v)
    return false;
  if (n >= sizeof buf) {
    /* Only digits can make a number this long: huge, not an int64. */
    v->u.num.d = start[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    is_int = false;
  } else {
    memcpy(buf, start, n);
    buf[n] = '\0';
    v->u.num.d = strtod(buf, NULL);
    if (is_int) {
      errno = 0;
      long long i = strtoll(buf, NULL, 10);
      if (errno == ERANGE)
        is_int = false;
      else
        v->u.num.i = i;
    }
  }
  if (is_int)
    v->type = MAPOPT_JSON_INT;
  ps->p = q;
  *out = v;
  return true;
}

static bool parse_value(parser *ps, mapopt__json **out);

static bool parse_array(parser *ps, mapopt__json **out) {
  mapopt__json *v = new_value(ps, MAPOPT_JSON_ARRAY, ps->p);
  if (!v)
    return false;
  ps->p++;
  size_t cap = 0;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
    *out = v;
    return true;
  }
  for (;;) {
    mapopt__json *item;
    if (!parse_value(ps, &item))
      return false;
    if (v->u.arr.n == cap) {
      size_t ncap = cap ? cap * 2 : 4;
      mapopt__json **items =
          mapopt__arena_alloc(ps->arena, ncap * sizeof *items);
      if (!items)
        return oom(ps);
      if (cap)
        memcpy(items, v->u.arr.items, cap * sizeof *items);
      v->u.arr.items = items;
      cap = ncap;
    }
    v->u.arr.items[v->u.arr.n++] = item;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == ']') {
      ps->p++;
      *out = v;
      return true;
    }
    char d[32];
    describe(ps, d, sizeof d);
    return perr(ps, ps->p, "expected ',' or ']' in array, got %s", d);
  }
}

/* Objects with more members than this look keys up in a hash map; smaller
 * ones (nearly all) scan their members. */
enum { SCAN_MEMBERS = 8 };

/* The index of the member of object v called key, or -1; seen indexes the
 * members once there are more than SCAN_MEMBERS. The check for duplicate
 * keys is thus linear in the object's size, not quadratic (an object of
 * 80000 keys took 11 s). False on ENOMEM. */
static bool find_member(parser *ps, const mapopt__json *v, mapopt__map *seen,
                        const char *key, int64_t *at) {
  *at = -1;
  size_t n = v->u.obj.n;
  if (n <= SCAN_MEMBERS) {
    for (size_t i = 0; i < n; i++)
      if (strcmp(v->u.obj.members[i].key, key) == 0)
        *at = (int64_t)i;
    return true;
  }
  for (size_t i = seen->len; i < n; i++) { /* index what is not yet */
    const char *k = v->u.obj.members[i].key;
    bool ins;
    mapopt__map_entry *e =
        mapopt__map_upsert(seen, ps->arena->ctx, k, strlen(k), &ins);
    if (!e)
      return oom(ps);
    e->value = (void *)(uintptr_t)i;
  }
  const mapopt__map_entry *e = mapopt__map_find(seen, key, strlen(key));
  if (e)
    *at = (int64_t)(uintptr_t)e->value;
  return true;
}

static bool parse_members(parser *ps, mapopt__json *v, mapopt__map *seen) {
  size_t cap = 0;
  for (;;) {
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != '"') {
      char d[32];
      describe(ps, d, sizeof d);
      return perr(ps, ps->p, "expected a key string in object, got %s", d);
    }
    int kline = ps->line, kcol = col_of(ps, ps->p);
    const char *key;
    size_t klen;
    if (!parse_string(ps, &key, &klen))
      return false;
    if (strlen(key) != klen)
      return perr(ps, ps->p, "key contains a NUL character");
    int64_t i;
    if (!find_member(ps, v, seen, key, &i))
      return false;
    if (i >= 0) {
      ps->status =
          mapopt_diags_add(ps->diags, MAPOPT_SEV_ERROR, "", ps->file, kline,
                           kcol, "duplicate key \"%.80s\" (first at %d:%d)",
                           key, v->u.obj.members[i].line,
                           v->u.obj.members[i].col) == MAPOPT_OK
              ? MAPOPT_EINVAL
              : MAPOPT_ENOMEM;
      return false;
    }
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':') {
      char d[32];
      describe(ps, d, sizeof d);
      return perr(ps, ps->p, "expected ':' after key, got %s", d);
    }
    ps->p++;
    mapopt__json *val;
    if (!parse_value(ps, &val))
      return false;
    if (v->u.obj.n == cap) {
      size_t ncap = cap ? cap * 2 : 8;
      mapopt__json_member *m = mapopt__arena_alloc(ps->arena, ncap * sizeof *m);
      if (!m)
        return oom(ps);
      if (cap)
        memcpy(m, v->u.obj.members, cap * sizeof *m);
      v->u.obj.members = m;
      cap = ncap;
    }
    v->u.obj.members[v->u.obj.n++] =
        (mapopt__json_member){key, kline, kcol, val};
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == '}') {
      ps->p++;
      return true;
    }
    char d[32];
    describe(ps, d, sizeof d);
    return perr(ps, ps->p, "expected ',' or '}' in object, got %s", d);
  }
}

static bool parse_object(parser *ps, mapopt__json **out) {
  mapopt__json *v = new_value(ps, MAPOPT_JSON_OBJECT, ps->p);
  if (!v)
    return false;
  ps->p++;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    *out = v;
    return true;
  }
  mapopt__map seen;
  mapopt__map_init(&seen);
  bool ok = parse_members(ps, v, &seen);
  mapopt__map_destroy(&seen, ps->arena->ctx);
  if (ok)
    *out = v;
  return ok;
}

static bool literal(parser *ps, const char *word, mapopt__json_type t, bool b,
                    mapopt__json **out) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
    return perr(ps, ps->p, "invalid literal (expected %s)", word);
  mapopt__json *v = new_value(ps, t, ps->p);
  if (!v)
    return false;
  v->u.b = b;
  ps->p += n;
  *out = v;
  return true;
}

static bool parse_value(parser *ps, mapopt__json **out) {
  skip_ws(ps);
  if (ps->p >= ps->end)
    return perr(ps, ps->p, "unexpected end of file, expected a value");
  if (++ps->depth > MAX_DEPTH)
    return perr(ps, ps->p, "nesting deeper than %d levels", MAX_DEPTH);
  bool ok;
  char c = *ps->p;
  if (c == '{') {
    ok = parse_object(ps, out);
  } else if (c == '[') {
    ok = parse_array(ps, out);
  } else if (c == '"') {
    mapopt__json *v = new_value(ps, MAPOPT_JSON_STRING, ps->p);
    ok = v && parse_string(ps, &v->u.str.s, &v->u.str.len);
    *out = v;
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    ok = parse_number(ps, out);
  } else if (c == 't') {
    ok = literal(ps, "true", MAPOPT_JSON_BOOL, true, out);
  } else if (c == 'f') {
    ok = literal(ps, "false", MAPOPT_JSON_BOOL, false, out);
  } else if (c == 'n') {
    ok = literal(ps, "null", MAPOPT_JSON_NULL, false, out);
  } else {
    char d[32];
    describe(ps, d, sizeof d);
    ok = perr(ps, ps->p, "unexpected %s, expected a value", d);
  }
  ps->depth--;
  return ok;
}

mapopt_status mapopt__json_parse(mapopt__arena *arena, const char *file,
                                 const char *text, size_t len,
                                 mapopt_diags *diags, mapopt__json **out) {
  parser ps = {arena, file, text, text + len, text, 1, diags, MAPOPT_OK, 0};
  mapopt__json *v = NULL;
  if (len > MAPOPT_JSON_MAX_INPUT) {
    /* Refused before the tree, which takes several times the text. */
    perr(&ps, text, "file too large (more than %d bytes)",
         MAPOPT_JSON_MAX_INPUT);
  } else if (parse_value(&ps, &v)) {
    skip_ws(&ps);
    if (ps.p < ps.end) {
      char d[32];
      describe(&ps, d, sizeof d);
      perr(&ps, ps.p, "unexpected %s after the JSON value", d);
    }
  }
  if (ps.status == MAPOPT_OK)
    *out = v;
  return ps.status;
}

const mapopt__json_member *mapopt__json_member_of(const mapopt__json *obj,
                                                  const char *key) {
  if (!obj || obj->type != MAPOPT_JSON_OBJECT)
    return NULL;
  for (size_t i = 0; i < obj->u.obj.n; i++)
    if (strcmp(obj->u.obj.members[i].key, key) == 0)
      return &obj->u.obj.members[i];
  return NULL;
}

const mapopt__json *mapopt__json_get(const mapopt__json *obj, const char *key) {
  const mapopt__json_member *m = mapopt__json_member_of(obj, key);
  return m ? m->value : NULL;
}

const char *mapopt__json_type_name(mapopt__json_type t) {
  switch (t) {
  case MAPOPT_JSON_NULL:
    return "null";
  case MAPOPT_JSON_BOOL:
    return "true/false";
  case MAPOPT_JSON_INT:
    return "integer";
  case MAPOPT_JSON_REAL:
    return "number";
  case MAPOPT_JSON_STRING:
    return "string";
  case MAPOPT_JSON_ARRAY:
    return "array";
  case MAPOPT_JSON_OBJECT:
    return "object";
  }
  return "value";
}

/* ---- validating reader ------------------------------------------------ */

void mapopt__jr_init(mapopt__jr *jr, const char *file, mapopt_diags *diags) {
  jr->file = file;
  jr->diags = diags;
  jr->status = MAPOPT_OK;
}

static void jr_vreport(mapopt__jr *jr, int line, int col, const char *fmt,
                       va_list ap) __attribute__((format(printf, 4, 0)));

static void jr_vreport(mapopt__jr *jr, int line, int col, const char *fmt,
                       va_list ap) {
  mapopt_status st = mapopt_diags_addv(jr->diags, MAPOPT_SEV_ERROR, "",
                                       jr->file, line, col, fmt, ap);
  if (jr->status == MAPOPT_OK)
    jr->status = st == MAPOPT_OK ? MAPOPT_EINVAL : MAPOPT_ENOMEM;
}

void mapopt__jr_error(mapopt__jr *jr, const mapopt__json *at, const char *fmt,
                      ...) {
  va_list ap;
  va_start(ap, fmt);
  jr_vreport(jr, at ? at->line : 0, at ? at->col : 0, fmt, ap);
  va_end(ap);
}

void mapopt__jr_error_at(mapopt__jr *jr, int line, int col, const char *fmt,
                         ...) {
  va_list ap;
  va_start(ap, fmt);
  jr_vreport(jr, line, col, fmt, ap);
  va_end(ap);
}

bool mapopt__jr_object(mapopt__jr *jr, const mapopt__json *v, const char *what,
                       const char *const *allowed) {
  if (!v || v->type != MAPOPT_JSON_OBJECT) {
    mapopt__jr_error(jr, v, "%s must be an object", what);
    return false;
  }
  bool ok = true;
  for (size_t i = 0; allowed && i < v->u.obj.n; i++) {
    const mapopt__json_member *m = &v->u.obj.members[i];
    bool known = false;
    for (const char *const *a = allowed; *a && !known; a++)
      known = strcmp(*a, m->key) == 0;
    if (!known) {
      mapopt__jr_error_at(jr, m->line, m->col, "unknown key \"%s\" in %s",
                          m->key, what);
      ok = false;
    }
  }
  return ok;
}

/* The member for key; reports a missing required key at the object. */
static const mapopt__json *member(mapopt__jr *jr, const mapopt__json *obj,
                                  const char *key, const char *what,
                                  bool required) {
  const mapopt__json *v = mapopt__json_get(obj, key);
  if (!v && required)
    mapopt__jr_error(jr, obj, "missing key \"%s\" in %s", key, what);
  return v;
}

bool mapopt__jr_int(mapopt__jr *jr, const mapopt__json *obj, const char *key,
                    const char *what, bool required, int64_t lo, int64_t hi,
                    int64_t *out) {
  const mapopt__json *v = member(jr, obj, key, what, required);
  if (!v)
    return !required;
  if (v->type != MAPOPT_JSON_INT || v->u.num.i < lo || v->u.num.i > hi) {
    mapopt__jr_error(
        jr, v, "\"%s\" in %s must be an integer in [%" PRId64 ", %" PRId64 "]",
        key, what, lo, hi);
    return false;
  }
  *out = v->u.num.i;
  return true;
}

bool mapopt__jr_num(mapopt__jr *jr, const mapopt__json *obj, const char *key,
                    const char *what, bool required, double lo, double hi,
                    double *out) {
  const mapopt__json *v = member(jr, obj, key, what, required);
  if (!v)
    return !required;
  if ((v->type != MAPOPT_JSON_INT && v->type != MAPOPT_JSON_REAL) ||
      !(v->u.num.d >= lo && v->u.num.d <= hi)) {
    mapopt__jr_error(jr, v, "\"%s\" in %s must be a number in [%g, %g]", key,
                     what, lo, hi);
    return false;
  }
  *out = v->u.num.d;
  return true;
}

bool mapopt__jr_bool(mapopt__jr *jr, const mapopt__json *obj, const char *key,
                     const char *what, bool required, bool *out) {
  const mapopt__json *v = member(jr, obj, key, what, required);
  if (!v)
    return !required;
  if (v->type != MAPOPT_JSON_BOOL) {
    mapopt__jr_error(jr, v, "\"%s\" in %s must be true or false", key, what);
    return false;
  }
  *out = v->u.b;
  return true;
}

bool mapopt__jr_str(mapopt__jr *jr, const mapopt__json *obj, const char *key,
                    const char *what, bool required, const char **out) {
  const mapopt__json *v = member(jr, obj, key, what, required);
  if (!v)
    return !required;
  if (v->type != MAPOPT_JSON_STRING) {
    mapopt__jr_error(jr, v, "\"%s\" in %s must be a string", key, what);
    return false;
  }
  *out = v->u.str.s;
  return true;
}

const mapopt__json *mapopt__jr_array(mapopt__jr *jr, const mapopt__json *obj,
                                     const char *key, const char *what,
                                     bool required) {
  const mapopt__json *v = member(jr, obj, key, what, required);
  if (v && v->type != MAPOPT_JSON_ARRAY) {
    mapopt__jr_error(jr, v, "\"%s\" in %s must be an array", key, what);
    return NULL;
  }
  return v;
}

const mapopt__json *mapopt__jr_child(mapopt__jr *jr, const mapopt__json *obj,
                                     const char *key, const char *what,
                                     bool required) {
  const mapopt__json *v = member(jr, obj, key, what, required);
  if (v && v->type != MAPOPT_JSON_OBJECT) {
    mapopt__jr_error(jr, v, "\"%s\" in %s must be an object", key, what);
    return NULL;
  }
  return v;
}

int64_t mapopt__round_i64(double x) {
  if (!(x >= 0))
    return 0;
  if (x >= 9.2e18)
    return INT64_MAX;
  return (int64_t)(x + 0.5);
}

json_t *mapopt__json_text(const char *s) {
  json_t *j = json_string(s);
  if (j)
    return j;
  size_t n = strlen(s);
  char *c = malloc(n + 1); /* jansson's side: freed right after */
  if (!c)
    return NULL;
  for (size_t i = 0, k; i < n; i += k) {
    k = mapopt__utf8_char(s + i, n - i);
    if (k)
      memcpy(c + i, s + i, k);
    else
      c[i] = '?', k = 1;
  }
  c[n] = '\0';
  j = json_string(c);
  free(c);
  return j;
}

json_t *mapopt__json_text_or_null(const char *s) {
  return s ? mapopt__json_text(s) : json_null();
}

mapopt_status mapopt__json_write(mapopt_ctx *ctx, json_t *root, char **text) {
  char *dump = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                           JSON_REAL_PRECISION(12))
                    : NULL;
  json_decref(root);
  if (!dump)
    return MAPOPT_ENOMEM;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  mapopt__sb_puts(&sb, dump);
  mapopt__sb_putc(&sb, '\n');
  free(dump);
  char *t = mapopt__text_take(&sb, NULL);
  if (!t)
    return MAPOPT_ENOMEM;
  *text = t;
  return MAPOPT_OK;
}

size_t mapopt__utf8_char(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  if (n == 0)
    return 0;
  if (u[0] < 0x80)
    return 1;
  /* Lead byte: length and the smallest and largest valid second byte
   * (which excludes overlong forms, surrogates and code points above
   * U+10FFFF). */
  size_t len;
  unsigned lo = 0x80, hi = 0xBF;
  if (u[0] >= 0xC2 && u[0] <= 0xDF)
    len = 2;
  else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
    len = 3;
    lo = u[0] == 0xE0 ? 0xA0 : 0x80;
    hi = u[0] == 0xED ? 0x9F : 0xBF;
  } else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
    len = 4;
    lo = u[0] == 0xF0 ? 0x90 : 0x80;
    hi = u[0] == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (n < len || u[1] < lo || u[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if (u[i] < 0x80 || u[i] > 0xBF)
      return 0;
  return len;
}
