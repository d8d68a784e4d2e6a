/*
 * Internal header of the dsl module: the loaded program (binding tables,
 * globals, caches), run-time values, the interpreter's interface used by
 * the loader (load.c) and the policy queries (policy.c), and the program
 * state all three share (state.c).
 */
#ifndef MAPOPT_SRC_DSL_DSL_H
#define MAPOPT_SRC_DSL_DSL_H

#include <pthread.h>

#include "dsl/ast.h"
#include "dsl/mspace.h"

/* The limits of docs/dsl.md, "Limits". */
#define MAPOPT__DSL_MAX_CALL_DEPTH 64
#define MAPOPT__DSL_STEP_LIMIT 1000000
#define MAPOPT__DSL_PRINT_LIMIT 1000
/* Bound on the interpreter's own C recursion (expression depth times call
 * depth), so that no mapper can exhaust the native stack. */
#define MAPOPT__DSL_MAX_EVAL_DEPTH 3000
/* The value budget (R27): tuple items and points that the top-level
 * statements build together (their values live as long as the program),
 * or that one mapping query builds; and how deeply tuples may nest. */
#define MAPOPT__DSL_VALUE_LIMIT 4000000
#define MAPOPT__DSL_MAX_TUPLE_DEPTH 100
/* A printed value (print, traces) stops after this many bytes with
 * "...": a tuple that holds itself twice at each of 30 levels would
 * otherwise print 2^30 items. */
#define MAPOPT__DSL_PRINT_VALUE_MAX 65536
/* Lines of evaluation trace per program (`mapopt show`): a recursion of a
 * million steps would otherwise trace a million lines. */
#define MAPOPT__DSL_TRACE_LIMIT 10000

typedef enum mapopt__vkind {
  V_UNSET = 0, /* an unbound slot; never the result of an expression */
  V_INT,
  V_BOOL,
  V_TUPLE,
  V_POINT,
  V_SET,
  V_MACHINE,
  V_TASK,
  V_PROC_KIND,
  V_MEM_KIND,
  V_FUNC /* only as a global: the def statement */
} mapopt__vkind;

typedef struct mapopt__value mapopt__value;

/* A task as seen by a mapping function (docs/dsl.md, "The task object"). */
typedef struct mapopt__taskobj {
  const mapopt_task_ref *ref;
  bool is_parent; /* obtained through .parent: only .parent, .processor */
  bool placing;   /* the index point being placed (processor(m) is W14) */
} mapopt__taskobj;

struct mapopt__value {
  mapopt__vkind kind;
  union {
    int64_t i;
    bool b;
    int k; /* V_PROC_KIND, V_MEM_KIND */
    struct {
      int n;
      int depth; /* 1 for a tuple of no tuples */
      const mapopt__value *items;
    } tuple;
    mapopt_proc_point pt;
    struct {
      int64_t n;
      const mapopt_proc_point *pts;
    } set;
    const mapopt__mspace *ms;
    const mapopt__taskobj *task;
    const mapopt__stmt *fn;
  } u;
};

/* One scratch state for one evaluation at a time; pooled in the program. */
typedef struct mapopt__scratch {
  mapopt__arena arena;
  struct mapopt__scratch *next;
} mapopt__scratch;

/* A binding with the location of the key's first token (for W01). */
typedef struct mapopt__binding {
  mapopt__loc loc;
  const void *value;
} mapopt__binding;

struct mapopt_program {
  mapopt_ctx *ctx;
  mapopt__ast ast;
  mapopt_machine_shape shape;
  mapopt_print_fn print;
  void *print_ud;
  bool no_memo;
  mapopt_print_fn trace;
  void *trace_ud;
  mapopt_region_keys_mode keys; /* resolved at load (AUTO: keys none) */

  /* Globals, indexed by symbol id: value and where it was bound. */
  mapopt__value *globals;
  mapopt__loc *global_loc;
  int nglobals;
  int top_frame; /* frame slots a top-level statement needs */

  /* Binding tables. Keys are arena strings; values mapopt__binding *. */
  mapopt__map task_kinds;  /* task | "*" -> stmt (ST_TASK) */
  mapopt__map regions;     /* "t\x1fr\x1fproc" -> stmt (ST_REGION) */
  mapopt__map layouts;     /* "t\x1fr\x1ffield" -> stmt (ST_LAYOUT) */
  mapopt__map limits;      /* task -> stmt (ST_LIMIT) */
  mapopt__map collects;    /* "t\x1fr" -> stmt (ST_COLLECT) */
  mapopt__map index_maps;  /* task | kind name | "*" -> def stmt */
  mapopt__map single_maps; /* same */
  mapopt__map replicate;   /* task -> stmt */
  bool has_replicate;

  /* Mutable caches, under lock (DSL queries may run in parallel). */
  pthread_mutex_t lock;
  mapopt__scratch *scratch_pool;
  mapopt__arena cache_arena;
  mapopt__map index_memo;                   /* key bytes -> memo entry */
  struct mapopt__launch_memo *launch_memos; /* policy.c; NULL: none yet */
  int nlaunch_memos, launch_memo_last;      /* how many; the last one found */
  int64_t launch_memo_points;               /* their points together */
  mapopt__map decompose_memo;               /* (N, L) bytes -> int64_t[k] */
  int64_t printed;                          /* print lines written so far */
  bool print_truncated;
  int64_t traced;          /* trace lines written so far */
  unsigned char *w14_done; /* per symbol: W14 issued for this function */
};

/* What an evaluation reports besides its value. */
typedef struct mapopt__eval_error {
  bool failed;
  bool nomem;   /* out of memory: no diagnostic, MAPOPT_ENOMEM */
  char code[4]; /* the R-code of the catalogue entry raised */
  mapopt__loc loc;
  char *msg; /* the message, owned (mapopt__eval_error_clear); NULL if nomem */
  /* A hint to print after it (an N-entry of the catalogue, at loc), owned
   * like msg; NULL when there is none. */
  char note_code[4];
  char *note;
  bool in_call;         /* raised inside a function called at top level */
  mapopt__loc call_loc; /* the outermost call at top level */
} mapopt__eval_error;

/* Frees the message of an error an evaluation filled (NULL-safe). */
void mapopt__eval_error_clear(mapopt_ctx *ctx, mapopt__eval_error *err);

typedef struct mapopt__eval mapopt__eval;

/* How an evaluation is being run: at load time or for a mapping query. */
typedef struct mapopt__eval_env {
  mapopt_program *prog;
  mapopt__arena *arena; /* for values built during the evaluation */
  mapopt_diags *diags;  /* for W14/W15; may be NULL */
  bool at_load;         /* globals bound only so far; errors are 'error:' */
  int64_t *values;      /* values built so far against the budget, shared
                           by the evaluations of one load; NULL: this
                           evaluation's own count */
} mapopt__eval_env;

/*
 * Evaluates a top-level statement's expression (assignment value) at load
 * time, or a top-level print. Returns false with *err filled on a runtime
 * error. The value lives in env->arena.
 */
bool mapopt__eval_top_expr(const mapopt__eval_env *env, const mapopt__expr *e,
                           mapopt__value *out, mapopt__eval_error *err);
bool mapopt__eval_top_print(const mapopt__eval_env *env,
                            const mapopt__stmt *print, mapopt__eval_error *err);

/*
 * Calls the entry function fn (a def with one Task parameter) on task and
 * checks its result (R16/R17) against kind. On success writes the points
 * (all of a set when set/cap allow) and the count.
 */
bool mapopt__eval_entry(const mapopt__eval_env *env, const mapopt__stmt *fn,
                        const mapopt__taskobj *task, mapopt_proc_kind kind,
                        mapopt_map_answer *out, mapopt_proc_point *set,
                        size_t cap, mapopt__eval_error *err);

/* Number of "{}" placeholders in a print format of len bytes. */
int mapopt__print_placeholders(const char *fmt, int len);

/* Writes the printed form of a value (docs/dsl.md, "Values"). */
void mapopt__value_print(const mapopt_program *prog, const mapopt__value *v,
                         mapopt__strbuf *sb);
/* "int", "tuple", "point set", "machine", ... (docs/dsl.md, "Values"). */
const char *mapopt__value_type_name(const mapopt__value *v);

/* Emits one print line through the program's callback, applying the
 * 1000-line cap: W15, once, at the first suppressed print (loc).
 * Thread-safe. */
void mapopt__dsl_emit_print(mapopt_program *prog, const char *line,
                            mapopt_diags *diags, mapopt__loc loc);

/* Whether one more trace line may be written (MAPOPT__DSL_TRACE_LIMIT
 * per program); the first one refused writes instead "... trace truncated
 * after N lines". Thread-safe. */
bool mapopt__dsl_trace_admit(mapopt_program *prog);

/* Scratch states for queries. NULL on ENOMEM. */
mapopt__scratch *mapopt__scratch_get(mapopt_program *prog);
void mapopt__scratch_put(mapopt_program *prog, mapopt__scratch *s);

/*
 * The portability checks (portable.c, docs/legion.md): appends a warning
 * P01-P28 for each construct of the checked program that the DSL mapper of
 * Legion rejects, aborts on or reads differently. MAPOPT_ENOMEM when one
 * cannot be stored.
 */
mapopt_status mapopt__dsl_portable(const mapopt_program *prog,
                                   mapopt_diags *diags);

/* Composes a binding-table key "a\x1fb\x1fc" in buf; returns its length, or
 * 0 when it does not fit. */
size_t mapopt__dsl_key(char *buf, size_t size, const char *a, const char *b,
                       const char *c);

#endif /* MAPOPT_SRC_DSL_DSL_H */
