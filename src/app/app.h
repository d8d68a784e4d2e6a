/*
 * Internal header of the app module: the loaded (still symbolic) model of
 * a `mapopt-app/1` application, the integer expression language of
 * docs/apps.md, "Expressions", and the helpers the loader, the instantiator and
 * the JSON writer share. Nothing here is installed.
 *
 * A model lives in one arena owned by the mapopt_app. Every expression is
 * parsed once at load into a small tree whose names are interned symbols;
 * evaluation looks a symbol up in an environment (a short stack of local
 * bindings over the parameter values), so one tree serves every point of
 * every launch.
 */
#ifndef MAPOPT_SRC_APP_H
#define MAPOPT_SRC_APP_H

#include "core/core.h"
#include "core/json.h"
#include "mapopt/app.h"

/* ---- expressions (expr.c) ----------------------------------------------- */

typedef enum mapopt__app_ex_op {
  EX_INT,  /* v: the value */
  EX_NAME, /* v: the symbol */
  EX_NEG,
  EX_NOT,
  EX_ADD,
  EX_SUB,
  EX_MUL,
  EX_DIV,
  EX_MOD,
  EX_LT,
  EX_LE,
  EX_GT,
  EX_GE,
  EX_EQ,
  EX_NE,
  EX_AND,
  EX_OR,
  EX_COND,
  EX_MIN,
  EX_MAX,
  EX_CDIV,
  EX_GCD,
  EX_LCM,
  EX_ELEMS, /* v: the requirement index k */
  EX_FBYTES
} mapopt__app_ex_op;

typedef struct mapopt__app_ex_node mapopt__app_ex_node;
struct mapopt__app_ex_node {
  mapopt__app_ex_op op;
  uint32_t off; /* byte offset of the node's token in the text */
  int64_t v;
  const mapopt__app_ex_node *a, *b, *c;
  int height; /* levels below and including this node, at most
                 MAPOPT_APP_MAX_EXPR_DEPTH: what bounds every walk */
};

/* A parsed expression with where it came from (for diagnostics). */
typedef struct mapopt__app_expr {
  const char *text;
  int line, col;    /* of the JSON value (the string's opening quote) */
  bool quoted;      /* a JSON string (offsets start one column later) */
  const char *what; /* e.g. `"count" of loop "t"` */
  const mapopt__app_ex_node *root;
} mapopt__app_expr;

/* Interns a name, returning its symbol (>= 0), or -1 on ENOMEM. */
typedef int32_t (*mapopt__app_intern_fn)(void *ud, const char *s, size_t n);

/*
 * Parses text into a tree allocated in arena. On a syntax error returns
 * false with *err_off the offending byte offset and *msg a description
 * ("expected ')'") allocated in arena; on ENOMEM returns false with *nomem
 * set.
 */
bool mapopt__app_expr_parse(mapopt__arena *arena, mapopt__app_intern_fn intern,
                            void *ud, const char *text, size_t len,
                            const mapopt__app_ex_node **root, uint32_t *err_off,
                            const char **msg, bool *nomem);

enum { MAPOPT__ENV_MAX = 256 };

typedef enum mapopt__app_eval_err {
  EVAL_OK,
  EVAL_OVERFLOW,
  EVAL_DIVZERO,
  EVAL_UNDEFINED, /* a name with no binding (prevented by the load check) */
  EVAL_NOREQ      /* elems(k) / fbytes(k) with no requirement k */
} mapopt__app_eval_err;

/* The names visible to an evaluation. */
typedef struct mapopt__app_env {
  const int64_t *params;  /* values by parameter slot */
  const int32_t *slot_of; /* symbol -> parameter slot, or -1 */
  int32_t nsyms;          /* size of slot_of */
  int n;                  /* local bindings, innermost last */
  int32_t sym[MAPOPT__ENV_MAX];
  int64_t val[MAPOPT__ENV_MAX];
  const int64_t *elems; /* per requirement of the op being built */
  const int64_t *fbytes;
  int nreqs;
  mapopt__app_eval_err err; /* the first error */
  uint32_t err_off;
} mapopt__app_env;

/* Evaluates e; false with env->err set on overflow or division by zero. */
bool mapopt__app_expr_eval(const mapopt__app_expr *e, mapopt__app_env *env,
                           int64_t *out);
/* Calls fn on every node of the tree (names and elems checks). */
void mapopt__app_expr_walk(const mapopt__app_ex_node *n,
                           void (*fn)(void *ud, const mapopt__app_ex_node *n),
                           void *ud);
/* 1-based column of byte offset off of e's text in the JSON file. */
int mapopt__app_expr_col(const mapopt__app_expr *e, uint32_t off);
/* e's text as diagnostics quote it: at most MAPOPT__APP_EXCERPT - 4 bytes,
 * then "..." (an expression may be megabytes long). Returns buf. */
enum { MAPOPT__APP_EXCERPT = 84 };
const char *mapopt__app_expr_excerpt(const mapopt__app_expr *e,
                                     char buf[MAPOPT__APP_EXCERPT]);

/* ---- the model (load.c) -------------------------------------------------- */

typedef struct mapopt__app_group {
  const char *name;
  mapopt__app_expr *count, *elements;
} mapopt__app_group;

typedef struct mapopt__app_region {
  const char *name;
  int line, col;
  int nfields;
  const char **field_names;
  int64_t *field_bytes;
  bool grid;
  int ngroups; /* groups */
  mapopt__app_group *groups;
  int gdims; /* grid */
  mapopt__app_expr *gsize[MAPOPT_APP_MAX_DIMS];
  mapopt__app_expr *gextent[MAPOPT_APP_MAX_DIMS]; /* optional element extents */
  mapopt__app_expr *gelements;                    /* or elements per atom */
  size_t nnames;
  const char **names;
} mapopt__app_region;

typedef enum { PART_GROUP, PART_RECT, PART_LIST } mapopt__app_part_kind;

typedef struct mapopt__app_entry {
  int group; /* group regions: the group; grid regions: -1 */
  int natom; /* 1: a linear atom index; grid dims: coordinates */
  mapopt__app_expr *atom[MAPOPT_APP_MAX_DIMS];
  mapopt__app_expr *count; /* NULL: the whole atom */
} mapopt__app_entry;

typedef struct mapopt__app_part {
  const char *name;
  int line, col;
  int region;
  mapopt__app_part_kind kind;
  size_t nnames;
  const char **names;
  int group; /* PART_GROUP */
  int ncolors;
  mapopt__app_expr *colors[MAPOPT_APP_MAX_DIMS]; /* RECT, LIST */
  mapopt__app_expr *lo[MAPOPT_APP_MAX_DIMS], *hi[MAPOPT_APP_MAX_DIMS];
  int nentries;
  mapopt__app_entry *entries;
} mapopt__app_part;

typedef struct mapopt__app_rule {
  uint64_t args;
  size_t nargs_listed;
  int64_t *args_listed; /* as written, for the writer */
  mapopt_layout_tri soa, c_order;
  mapopt_layout_error error;
  double penalty;
} mapopt__app_rule;

typedef struct mapopt__app_variant {
  mapopt_proc_kind kind;
  bool inner, f32, matrix;
  double flops_eff, mem_eff;
  mapopt__app_expr *flops, *fixed_ns; /* NULL: 0 */
  mapopt__app_expr *reuse;            /* NULL: 1 */
  size_t nrequires, nprefers;
  mapopt__app_rule *requires, *prefers;
  int line, col;
} mapopt__app_variant;

typedef struct mapopt__app_stmt mapopt__app_stmt;

typedef struct mapopt__app_task {
  const char *name;
  int line, col;
  int nvariants;
  mapopt__app_variant *variants;
  unsigned kinds;
  bool inner;
  bool has_body;
  int nbody;
  mapopt__app_stmt *body;
  int npoint;
  const char *point[MAPOPT_APP_MAX_DIMS];
  int32_t point_sym[MAPOPT_APP_MAX_DIMS];
  bool body_error; /* its body failed the scope check once */
  bool on_stack;   /* scope check: being expanded (recursion) */
} mapopt__app_task;

typedef struct mapopt__app_req {
  int part;   /* >= 0: a partition */
  int region; /* the root region (also set for partitions) */
  bool identity;
  int nproj;
  mapopt__app_expr *proj[MAPOPT_APP_MAX_DIMS];
  mapopt_priv priv;
  mapopt_redop redop;
  bool simultaneous;
  bool fields_given;
  uint64_t fields;
  int64_t fbytes; /* bytes per element of the fields */
  size_t nnames;  /* the requirement's own `names` */
  const char **names;
  size_t nall; /* every mapper-visible name, key order */
  const char **all;
  mapopt__app_expr *bytes, *gathers, *atomics; /* NULL: defaults */
  int line, col;
  int64_t gid; /* index among every requirement of the model */
} mapopt__app_req;

typedef enum {
  ST_INDEX,
  ST_SINGLE,
  ST_FILL,
  ST_FENCE,
  ST_LOOP,
  ST_TIMED
} mapopt__app_stmt_kind;

struct mapopt__app_stmt {
  mapopt__app_stmt_kind kind;
  int line, col;
  /* INDEX, SINGLE */
  int task;
  int ndims;
  mapopt__app_expr *domain[MAPOPT_APP_MAX_DIMS];
  bool point_given;
  const char *point[MAPOPT_APP_MAX_DIMS];
  int32_t point_sym[MAPOPT_APP_MAX_DIMS];
  int nargs; /* FILL: 1 */
  mapopt__app_req *args;
  int future; /* future name index, or -1 */
  mapopt_redop fredop;
  int nwaits;
  int *waits;
  /* LOOP */
  const char *var;
  int32_t var_sym;
  mapopt__app_expr *count, *warmup;
  bool timed, traced;
  /* LOOP, TIMED */
  int nbody;
  mapopt__app_stmt *body;
};

typedef struct mapopt__app_param {
  const char *name;
  int64_t value;
  int32_t sym;
} mapopt__app_param;

typedef struct mapopt__app_size {
  const char *name;
  size_t n;
  int *param;
  int64_t *value;
} mapopt__app_size;

/* A derived parameter (docs/apps.md, "Derived parameters"): a name for the
 * value of an expression over the parameters, the machine facts and other
 * derived parameters, evaluated once per run. */
typedef struct mapopt__app_derived {
  const char *name;
  int32_t sym;
  int line, col; /* of its key */
  mapopt__app_expr *expr;
} mapopt__app_derived;

/* The settings line of the raw log ("log_settings" of "timing"): literal
 * text and expressions in turn, text[0] expr[0] text[1] ... text[n]. */
typedef struct mapopt__app_template {
  const char *source; /* as written, for the writer */
  int nexprs;
  const char **text; /* nexprs + 1 pieces */
  mapopt__app_expr **expr;
} mapopt__app_template;

/* Parameter slots after the model's own: the machine facts, then the
 * derived parameters (slot SLOT_DERIVED(app, j) holds derived[j]). */
enum { SLOT_NODES, SLOT_GPUS, SLOT_RANKS, SLOT__MACHINE };
#define SLOT_DERIVED(app, j) ((app)->nparams + SLOT__MACHINE + (j))

struct mapopt_app {
  mapopt_ctx *ctx;
  mapopt__arena arena;
  const char *file;
  const char *name;
  int nparams;
  mapopt__app_param *params;
  int nderived;
  mapopt__app_derived *derived; /* in the file's order */
  int *derived_order;           /* indices into derived, each after those it
                                   uses: the order of evaluation */
  int nsizes;
  mapopt__app_size *sizes;
  bool default_c_order;
  mapopt_timing_mode timing;
  bool metric_gflops, per_node;
  mapopt__app_expr *timing_flops;
  const char *log_style;
  mapopt__app_template *log_settings; /* NULL: none */
  mapopt__app_expr *ranks_per_node;
  int nregions;
  mapopt__app_region *regions;
  int npartitions;
  mapopt__app_part *parts;
  int ntasks;
  mapopt__app_task *tasks;
  int nprogram;
  mapopt__app_stmt *program;
  int nfutures; /* future names */
  const char **futures;
  int64_t nreqs; /* requirements of every statement (gid range) */
  const mapopt__app_stmt *tsloop; /* the time-step loop */
  /* Symbols. */
  mapopt__map symtab;
  mapopt__vec symnames; /* const char * per symbol */
  int32_t *slot_of;     /* per symbol: parameter slot or -1 */
  int32_t nsyms;
  int32_t csym[MAPOPT_APP_MAX_DIMS]; /* c0 c1 c2 */
  /* mapopt_app_task_info. */
  mapopt_task_info *info;
};

/* ---- checks of a loaded model (check.c) ---------------------------------- */

/* The scope check of every expression of app (docs/apps.md, "Names and scope");
 * each problem is a located error reported through jr (its status becomes
 * MAPOPT_EINVAL, or MAPOPT_ENOMEM). */
void mapopt__app_check_scopes(mapopt_app *app, mapopt__jr *jr);
/* Builds app->info, the task and argument names of mapopt_app_task_info.
 * MAPOPT_ENOMEM on failure. */
mapopt_status mapopt__app_build_task_info(mapopt_app *app);

/* Writes a JSON string literal (quotes and escapes) to sb. */
void mapopt__app_json_string(mapopt__strbuf *sb, const char *s);
const char *mapopt__app_redop_name(mapopt_redop r);

/* Built-in data compiled into the library (cmake/embed.cmake): the
 * application models of apps/builtin/ by name ("circuit"), and the mappers
 * of mappers/ by path ("circuit/expert"). */

extern const mapopt__embedded mapopt__builtin_apps[];
extern const size_t mapopt__builtin_apps_count;
extern const char *const mapopt__builtin_apps_names[];
extern const mapopt__embedded mapopt__builtin_mappers[];
extern const size_t mapopt__builtin_mappers_count;
extern const char *const mapopt__builtin_mappers_names[];

#endif /* MAPOPT_SRC_APP_H */
