/*
 * mapopt core: status codes, the context object, diagnostics.
 *
 * Every fallible public function of libmapopt returns a mapopt_status.
 * Results are written through out-parameters only on success. Anything a
 * user or an optimizer must read (a syntax error, a mapping error) is a
 * mapopt_diag carrying FILE:LINE:COL and a message, collected in a
 * mapopt_diags list owned by the caller.
 *
 * A mapopt_ctx holds the allocator hook and the limits. There is no mutable
 * global state: two contexts never interfere, and a context may be shared by
 * threads as long as its allocator is thread-safe (the default is).
 *
 * Whatever the library allocates for a caller is freed by the one function
 * of its kind, mapopt_<kind>_free(object), which takes only the object and
 * ignores NULL: mapopt_ctx_free, mapopt_diags_free, mapopt_text_free,
 * mapopt_machine_free, mapopt_app_free, mapopt_app_run_free,
 * mapopt_dsl_free, mapopt_sim_plan_free, mapopt_sim_result_free.
 */
#ifndef MAPOPT_CORE_H
#define MAPOPT_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MAPOPT_API __attribute__((visibility("default")))

/* The status codes, with their names and messages, from one list. */
#define MAPOPT_STATUS_LIST(X)                                                  \
  X(OK, 0, "success")                                                          \
  X(ENOMEM, -1, "out of memory")                                               \
  X(EINVAL, -2, "invalid argument")                                            \
  X(EIO, -3, "input/output error")                                             \
  X(ESYNTAX, -4, "syntax error")                                               \
  X(ELOAD, -5, "error while loading the mapper")                               \
  X(EMAP, -6, "mapping error")                                                 \
  X(ENOTFOUND, -7, "not found")                                                \
  X(ERANGE, -8, "value out of range")                                          \
  X(EBUSY, -9, "in use by another process")

typedef enum mapopt_status {
#define MAPOPT_STATUS_ENUM(name, code, msg) MAPOPT_##name = code,
  MAPOPT_STATUS_LIST(MAPOPT_STATUS_ENUM)
#undef MAPOPT_STATUS_ENUM
} mapopt_status;

/* "ENOMEM" for MAPOPT_ENOMEM; "EUNKNOWN" for a value not in the list. */
MAPOPT_API const char *mapopt_status_name(mapopt_status status);
/* "out of memory" for MAPOPT_ENOMEM; "unknown status" otherwise. */
MAPOPT_API const char *mapopt_strerror(mapopt_status status);

/*
 * The allocator hook, in the style of lua_Alloc: with nsize == 0 it frees
 * ptr and returns NULL; otherwise it (re)allocates ptr (NULL for a fresh
 * block) to nsize bytes and returns the block, or NULL on failure, leaving
 * ptr untouched. osize is the old size (0 for a fresh block).
 */
typedef void *(*mapopt_alloc_fn)(void *ud, void *ptr, size_t osize,
                                 size_t nsize);

typedef struct mapopt_ctx mapopt_ctx;

/*
 * Creates a context; *out is owned by the caller (mapopt_ctx_free). alloc
 * may be NULL for the C library's allocator. Errors: MAPOPT_EINVAL when
 * out is NULL; MAPOPT_ENOMEM when the context cannot be allocated.
 */
MAPOPT_API mapopt_status mapopt_ctx_new(mapopt_alloc_fn alloc, void *ud,
                                        mapopt_ctx **out);
/* Frees the context. Every object created with it must be freed before. */
MAPOPT_API void mapopt_ctx_free(mapopt_ctx *ctx);

typedef enum mapopt_severity {
  MAPOPT_SEV_NOTE,
  MAPOPT_SEV_WARNING,
  MAPOPT_SEV_ERROR,
  MAPOPT_SEV_MAPPING_ERROR
} mapopt_severity;

/* "note", "warning", "error", "mapping error". */
MAPOPT_API const char *mapopt_severity_name(mapopt_severity sev);

/*
 * One diagnostic. line and col are 1-based; line == 0 means the diagnostic
 * has no position (a context note naming only the file). code is the id of
 * the DSL's diagnostic catalogue ("E04", "W01", "R11", "N02"; see
 * MAPOPT_DSL_DIAG_LIST in mapopt/dsl.h), or "" for a diagnostic outside the
 * mapping language (an unreadable file, a malformed JSON model).
 */
typedef struct mapopt_diag {
  mapopt_severity severity;
  char code[4];
  const char *file;
  int line;
  int col;
  const char *message;
} mapopt_diag;

/*
 * A growable list of diagnostics; it owns the strings of its entries. It
 * keeps at most a limit of errors (error and mapping error) and the same
 * limit of warnings and notes (MAPOPT_DIAGS_LIMIT unless changed): the
 * first diagnostic past the limit of its kind is replaced by one note,
 * "too many errors: only the first 100 are shown" (or "warnings"), and
 * the later ones of that kind are counted, not kept. A note shares the
 * fate of the diagnostic before it. Control characters of messages and
 * file names are kept as the four characters "\xNN".
 */
typedef struct mapopt_diags mapopt_diags;
#define MAPOPT_DIAGS_LIMIT 100

/* An empty list in *out, owned by the caller (mapopt_diags_free). Error:
 * MAPOPT_ENOMEM (*out untouched). */
MAPOPT_API mapopt_status mapopt_diags_new(mapopt_ctx *ctx, mapopt_diags **out);
MAPOPT_API void mapopt_diags_free(mapopt_diags *diags);
/* Sets the limit of errors, and of warnings, that the list keeps; 0 keeps
 * them all. */
MAPOPT_API void mapopt_diags_set_limit(mapopt_diags *diags, size_t limit);
/* Number of diagnostics kept. */
MAPOPT_API size_t mapopt_diags_count(const mapopt_diags *diags);
/* The i-th diagnostic; valid until the list is cleared or freed. */
MAPOPT_API const mapopt_diag *mapopt_diags_get(const mapopt_diags *diags,
                                               size_t i);
/* Number of diagnostics of severity error or mapping error added, those
 * past the limit included. */
MAPOPT_API size_t mapopt_diags_errors(const mapopt_diags *diags);
/* Number of diagnostics added past the limit and not kept. */
MAPOPT_API size_t mapopt_diags_dropped(const mapopt_diags *diags);
/* Empties the list (the limit stays). */
MAPOPT_API void mapopt_diags_clear(mapopt_diags *diags);
/*
 * Appends a diagnostic; file and the formatted message are copied whole,
 * whatever their length. Returns MAPOPT_ENOMEM when the copy fails (the
 * list is then unchanged). Past the limit, the diagnostic is counted and
 * MAPOPT_OK returned.
 */
MAPOPT_API mapopt_status mapopt_diags_add(mapopt_diags *diags,
                                          mapopt_severity sev, const char *code,
                                          const char *file, int line, int col,
                                          const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* mapopt_diags_add with the arguments of the message in ap (for wrappers
 * that format their own diagnostics). ap is consumed. */
MAPOPT_API mapopt_status mapopt_diags_addv(mapopt_diags *diags,
                                           mapopt_severity sev,
                                           const char *code, const char *file,
                                           int line, int col, const char *fmt,
                                           va_list ap)
    __attribute__((format(printf, 7, 0)));
/*
 * Formats diagnostic i the GCC way: "FILE:LINE:COL: error: MESSAGE", or
 * "FILE: note: MESSAGE" without a position. Writes at most size bytes
 * (always NUL-terminated when size > 0) and returns the full length, as
 * snprintf does.
 */
MAPOPT_API int mapopt_diag_format(const mapopt_diag *d, char *buf, size_t size);

/* The largest JSON document the library reads (a machine, an application
 * model, a report): 256 MiB. A larger one is refused with an error at 1:1
 * before it is parsed. */
#define MAPOPT_JSON_MAX_INPUT (256 << 20)

/*
 * Reads a whole file. *buf is NUL-terminated (the file itself may contain
 * NUL bytes: *len is the true length); free it with mapopt_text_free.
 * *buf and *len are written only on success. Errors: MAPOPT_EIO with errno
 * set when the file cannot be read (then, when diags is not NULL, the
 * error "PATH: error: cannot read file: REASON" is appended to it);
 * MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_file_read(mapopt_ctx *ctx, const char *path,
                                          mapopt_diags *diags, char **buf,
                                          size_t *len);
/* Frees a text the library handed out (mapopt_file_read, the *_to_json
 * and *_format functions, mapopt_sim_report_json): it remembers its
 * context. NULL is ignored. */
MAPOPT_API void mapopt_text_free(char *text);
/*
 * Replaces path with data atomically: a temporary file in the same folder
 * (".mapopt-XXXXXX", whatever path's length) is written, synced and
 * renamed over path, keeping path's permissions (a new file gets 0666 less
 * the umask). Either the old or the new content is there, whatever
 * happens. A symbolic link is written through: its target is replaced and
 * the link stays. A path that exists and is not a regular file (a device
 * such as /dev/stdout, a FIFO) is written to in place instead. While the
 * temporary file exists, the calling thread holds back SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT and SIGPIPE, so that they cannot leave it behind; a
 * SIGKILL, a crash, or a signal taken by another thread can. Errors:
 * MAPOPT_EIO with errno set (the temporary file cannot be created,
 * written, synced or renamed, a link is dangling, or the device cannot be
 * written; a regular path is then unchanged); MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_file_replace(const char *path, const char *data,
                                             size_t len);

/*
 * The name a user probably meant: of the n names, the one closest to the
 * len bytes at name by edit distance (insertions, deletions, substitutions
 * and swaps of two adjacent characters each count one edit; case is
 * ignored), provided it is close: at most one edit per four characters
 * (at least one edit), and fewer edits than name has characters. The first
 * of equally close names wins; NULL entries are skipped. Returns NULL when
 * none is close, or when name is one of the names. The result points into
 * names.
 */
MAPOPT_API const char *mapopt_suggest(const char *name, size_t len,
                                      const char *const *names, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_CORE_H */
