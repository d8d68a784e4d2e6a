/*
 * A strict JSON reader that remembers where every value and key came from,
 * so that loaders of machine and application files can say
 * "machine.json:12:5: error: unknown key "bandwith"" instead of a bare
 * message. (jansson, used for writing, keeps no positions.)
 *
 * The tree lives in a caller's arena. Strict RFC 8259: no comments, no
 * trailing commas, no duplicate keys, depth at most 256, numbers that are
 * integers and fit int64 are ints (their double value is kept too).
 *
 * The mapopt__jr_* helpers validate a tree against what a loader expects,
 * reporting each problem as a located error in a diagnostics list.
 */
#ifndef MAPOPT_SRC_CORE_JSON_H
#define MAPOPT_SRC_CORE_JSON_H

#include "core/core.h"

typedef enum mapopt__json_type {
  MAPOPT_JSON_NULL,
  MAPOPT_JSON_BOOL,
  MAPOPT_JSON_INT,  /* an integer literal that fits int64 */
  MAPOPT_JSON_REAL, /* any other number */
  MAPOPT_JSON_STRING,
  MAPOPT_JSON_ARRAY,
  MAPOPT_JSON_OBJECT
} mapopt__json_type;

typedef struct mapopt__json mapopt__json;

typedef struct mapopt__json_member {
  const char *key; /* NUL-terminated (keys with NUL bytes are rejected) */
  int line, col;   /* of the key's opening quote */
  mapopt__json *value;
} mapopt__json_member;

struct mapopt__json {
  mapopt__json_type type;
  int line, col; /* of the value's first character */
  union {
    bool b;
    struct {
      int64_t i; /* MAPOPT_JSON_INT */
      double d;  /* both number types */
    } num;
    struct {
      const char *s; /* NUL-terminated; len excludes the NUL */
      size_t len;
    } str;
    struct {
      mapopt__json **items;
      size_t n;
    } arr;
    struct {
      mapopt__json_member *members; /* in file order */
      size_t n;
    } obj;
  } u;
};

/*
 * Parses len bytes of text into a tree in arena. On a syntax error appends
 * "FILE:LINE:COL: error: ..." to diags and returns MAPOPT_EINVAL; on
 * allocation failure MAPOPT_ENOMEM.
 */
mapopt_status mapopt__json_parse(mapopt__arena *arena, const char *file,
                                 const char *text, size_t len,
                                 mapopt_diags *diags, mapopt__json **out);

/* The member value for key in an object, or NULL (also for non-objects). */
const mapopt__json *mapopt__json_get(const mapopt__json *obj, const char *key);
/* The member itself (for the key's position), or NULL. */
const mapopt__json_member *mapopt__json_member_of(const mapopt__json *obj,
                                                  const char *key);
/* "object", "array", "string", "integer", "number", "true/false", "null". */
const char *mapopt__json_type_name(mapopt__json_type t);

/* ---- validating reader ------------------------------------------------ */

typedef struct mapopt__jr {
  const char *file;
  mapopt_diags *diags;
  mapopt_status status; /* MAPOPT_OK until the first error */
} mapopt__jr;

void mapopt__jr_init(mapopt__jr *jr, const char *file, mapopt_diags *diags);

/* Reports an error located at the value at (NULL: the file, no position).
 * Sets jr->status to MAPOPT_EINVAL (ENOMEM if the diagnostic fails). */
void mapopt__jr_error(mapopt__jr *jr, const mapopt__json *at, const char *fmt,
                      ...) __attribute__((format(printf, 3, 4)));
void mapopt__jr_error_at(mapopt__jr *jr, int line, int col, const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));

/* Requires v to be an object whose keys are all in allowed (NULL-ended);
 * errors: `WHAT must be an object`, `unknown key "K" in WHAT`. */
bool mapopt__jr_object(mapopt__jr *jr, const mapopt__json *v, const char *what,
                       const char *const *allowed);

/*
 * Typed members of an object. When the key is absent: with required, an
 * error `missing key "K" in WHAT` (located at the object); otherwise the
 * output is left unchanged and true is returned. A present value of the
 * wrong type or out of [lo, hi] is an error located at the value:
 * `"K" must be an integer in [lo, hi]`.
 */
bool mapopt__jr_int(mapopt__jr *jr, const mapopt__json *obj, const char *key,
                    const char *what, bool required, int64_t lo, int64_t hi,
                    int64_t *out);
bool mapopt__jr_num(mapopt__jr *jr, const mapopt__json *obj, const char *key,
                    const char *what, bool required, double lo, double hi,
                    double *out);
bool mapopt__jr_bool(mapopt__jr *jr, const mapopt__json *obj, const char *key,
                     const char *what, bool required, bool *out);
bool mapopt__jr_str(mapopt__jr *jr, const mapopt__json *obj, const char *key,
                    const char *what, bool required, const char **out);
/* An array or object member (NULL when absent and not required, or on
 * error: check jr->status). */
const mapopt__json *mapopt__jr_array(mapopt__jr *jr, const mapopt__json *obj,
                                     const char *key, const char *what,
                                     bool required);
const mapopt__json *mapopt__jr_child(mapopt__jr *jr, const mapopt__json *obj,
                                     const char *key, const char *what,
                                     bool required);

/* ---- writing ----------------------------------------------------------- */

/*
 * The length (1 to 4) of the well-formed UTF-8 character that starts the n
 * bytes at s, or 0 when they do not start with one (jansson writes only
 * valid UTF-8; the reader above passes bytes >= 0x80 through unchecked).
 */
size_t mapopt__utf8_char(const char *s, size_t n);

struct json_t;

/*
 * A jansson string of s (NUL-terminated), whose bytes may come from outside
 * (a run's output, a user's text): each byte that does not start a
 * well-formed UTF-8 character becomes '?', since JSON text must be UTF-8.
 * NULL when out of memory.
 */
struct json_t *mapopt__json_text(const char *s);
/* mapopt__json_text of s, or JSON null for a NULL s. */
struct json_t *mapopt__json_text_or_null(const char *s);

/*
 * Writes root (a jansson value; its reference is taken) as JSON text with
 * a 2-space indent, keys in insertion order, reals to 12 significant digits
 * and a final newline, allocated with ctx (free it with mapopt_text_free).
 * MAPOPT_ENOMEM when out of memory.
 */
mapopt_status mapopt__json_write(mapopt_ctx *ctx, struct json_t *root,
                                 char **text);

/* Rounds a non-negative double to the nearest int64 (saturating). */
int64_t mapopt__round_i64(double x);

#endif /* MAPOPT_SRC_CORE_JSON_H */
