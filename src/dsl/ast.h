/*
 * The abstract syntax tree of the mapping DSL (docs/dsl.md), shared by the
 * lexer/parser (lex.c, parse.c), the canonical printer (print.c), the static
 * checker and loader (load.c) and the interpreter (eval.c).
 *
 * Every node lives in the program's arena and is freed with it. Identifiers
 * are interned into the program's symbol table: a name is an int id, and
 * sym_name() gives its text back. Locations are 1-based line and byte column
 * of the construct's first character (docs/dsl.md, "How diagnostics
 * look").
 */
#ifndef MAPOPT_SRC_DSL_AST_H
#define MAPOPT_SRC_DSL_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "mapopt/dsl.h"

/* Deepest allowed nesting of expressions (and of anything the parser
 * recurses on). Deeper input is a located error, never a stack overflow. */
#define MAPOPT__DSL_MAX_NESTING 200

typedef struct mapopt__loc {
  int line;
  int col;
} mapopt__loc;

/* ---- diagnostics (diag.c) ------------------------------------------------ */

/*
 * A catalogue entry as the two arguments (id, template literal) that the
 * emitters take, so that the compiler checks the arguments of the message
 * against its template: mapopt__dsl_diag(d, MAPOPT__DIAG(W05_EXACT), ...).
 */
#define MAPOPT__DIAG(name) MAPOPT_DSL_##name, MAPOPT_DSL_TEMPLATE(name)

/* Appends the diagnostic id at loc of file: the entry's code and severity,
 * the message fmt (its template) formatted. MAPOPT_ENOMEM on failure. */
mapopt_status mapopt__dsl_diag(mapopt_diags *diags, mapopt_dsl_diag id,
                               const char *fmt, const char *file,
                               mapopt__loc loc, ...)
    __attribute__((format(printf, 3, 6)));
mapopt_status mapopt__dsl_diagv(mapopt_diags *diags, mapopt_dsl_diag id,
                                const char *fmt, const char *file,
                                mapopt__loc loc, va_list ap)
    __attribute__((format(printf, 3, 0)));

/*
 * The hint after a diagnostic about a misspelled name (name, len bytes) at
 * loc: N04 "did you mean 'X'?" when one of names[0..n) is close to it
 * (mapopt_suggest); otherwise, when what is not NULL and there are names,
 * N05 "the WHAT are: A, B, ..." listing them (the first 20, then how many
 * more). MAPOPT_ENOMEM when the note cannot be stored.
 */
mapopt_status mapopt__dsl_suggest(mapopt_ctx *ctx, mapopt_diags *diags,
                                  const char *file, mapopt__loc loc,
                                  const char *name, size_t len,
                                  const char *const *names, size_t n,
                                  const char *what);

/* Operators, by token; the printer and the diagnostics spell them. */
typedef enum mapopt__op {
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_DIV,
  OP_MOD, /* + - * / % */
  OP_EQ,
  OP_NE,
  OP_LT,
  OP_LE,
  OP_GT,
  OP_GE, /* == != < <= > >= */
  OP_AND,
  OP_OR, /* && || */
  OP_NEG,
  OP_NOT /* prefix - ! */
} mapopt__op;

/* Members after '.', in the order lex.h's reserved words list them. */
typedef enum mapopt__member {
  MEM_SIZE,
  MEM_LEN,
  MEM_VOLUME,
  MEM_IPOINT,
  MEM_ISPACE,
  MEM_PARENT,
  MEM_PROCESSOR,
  MEM_HAS,
  MEM_SPLIT,
  MEM_MERGE,
  MEM_SWAP,
  MEM_SLICE,
  MEM_REVERSE,
  MEM_BALANCE_SPLIT,
  MEM_AUTO_SPLIT,
  MEM_GREEDY_SPLIT,
  MEM__COUNT
} mapopt__member;

typedef enum mapopt__expr_kind {
  EX_INT,       /* u.ival */
  EX_BOOL,      /* u.bval */
  EX_PROC_KIND, /* u.kind: mapopt_proc_kind */
  EX_MEM_KIND,  /* u.kind: mapopt_mem_kind */
  EX_NAME,      /* u.name */
  EX_CALL,      /* u.call: IDENT "(" [args] ")" */
  EX_MACHINE,   /* u.machine: "Machine" "(" expr ")" */
  EX_TUPLE,     /* u.list: "(" item { "," item } ")" with 2+ items, or (*t) */
  EX_COMP,      /* u.comp: "tuple" "(" expr "for" IDENT "in" expr ")" */
  EX_UNARY,     /* u.unary: OP_NEG or OP_NOT */
  EX_BINARY,    /* u.binary */
  EX_COND,      /* u.cond: c ? a : b */
  EX_INDEX,     /* u.index: base "[" index { "," index } "]" */
  EX_SLICE,     /* u.slice: base "[" [lo] ":" [hi] "]" */
  EX_MEMBER,    /* u.member: base "." member [ "(" [args] ")" ] */
  EX_UNPACK,    /* u.unpack: "*" expr, only as an item of a list */
  EX_WILDCARD   /* a lone "*" in a machine subscript */
} mapopt__expr_kind;

typedef struct mapopt__expr mapopt__expr;

/* A name reference. slot >= 0: a parameter, local or comprehension variable
 * of the enclosing function or top-level statement (its frame slot); the
 * global of the same symbol is used while the slot is unset. slot == -1:
 * always the global. The loader fills slot; the parser leaves -1. */
typedef struct mapopt__name_ref {
  int sym;
  int slot;
} mapopt__name_ref;

typedef struct mapopt__expr_list {
  mapopt__expr **items;
  int n;
} mapopt__expr_list;

struct mapopt__expr {
  mapopt__expr_kind kind;
  mapopt__loc loc; /* of the operator token, '[', member name... */
  /* Written in parentheses. Not part of the tree's meaning (equality and
   * the printer ignore it); the portability checks need it, because the
   * DSL mapper groups some unparenthesized forms differently. */
  bool paren;
  union {
    int64_t ival;
    bool bval;
    int kind;
    mapopt__name_ref name;
    struct {
      mapopt__name_ref fn;
      mapopt__expr_list args;
    } call;
    mapopt__expr *machine;
    mapopt__expr_list list; /* EX_TUPLE */
    struct {
      mapopt__expr *elem;
      mapopt__name_ref var;
      mapopt__loc var_loc;
      mapopt__expr *range;
    } comp;
    struct {
      mapopt__op op;
      mapopt__expr *operand;
    } unary;
    struct {
      mapopt__op op;
      mapopt__expr *lhs;
      mapopt__expr *rhs;
    } binary;
    struct {
      mapopt__expr *cond;
      mapopt__expr *then;
      mapopt__expr *els;
    } cond;
    struct {
      mapopt__expr *base;
      mapopt__expr_list subs; /* items may be EX_WILDCARD or EX_UNPACK */
    } index;
    struct {
      mapopt__expr *base;
      mapopt__expr *lo; /* NULL when omitted */
      mapopt__expr *hi; /* NULL when omitted */
    } slice;
    struct {
      mapopt__expr *base;
      mapopt__member member;
      bool call;              /* written with parentheses */
      mapopt__expr_list args; /* only when call */
    } member;
    mapopt__expr *unpack;
  } u;
};

/* A selector: task_sel, region_sel, or an entry of a name list. */
typedef enum mapopt__sel_kind {
  SEL_STAR, /* "*" */
  SEL_NAME, /* IDENT: u.name */
  SEL_INT,  /* INT (region position): pos */
  SEL_KIND  /* map_target "CPU" | "GPU" | "OMP": kind */
} mapopt__sel_kind;

typedef struct mapopt__sel {
  mapopt__sel_kind kind;
  mapopt__loc loc;
  const char *name; /* SEL_NAME: the identifier (arena string) */
  int64_t pos;      /* SEL_INT */
  int proc_kind;    /* SEL_KIND */
} mapopt__sel;

typedef struct mapopt__sel_list {
  mapopt__sel *items;
  int n;
} mapopt__sel_list;

/* A Layout constraint token. */
typedef enum mapopt__cons_kind {
  CONS_SOA,
  CONS_AOS,
  CONS_C_ORDER,
  CONS_F_ORDER,
  CONS_COMPACT,
  CONS_EXACT,
  CONS_NO_ALIGN,
  CONS_ALIGN
} mapopt__cons_kind;

typedef struct mapopt__constraint {
  mapopt__cons_kind kind;
  mapopt__loc loc;
  mapopt__op
      align_op;  /* CONS_ALIGN: OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE */
  int64_t align; /* CONS_ALIGN */
} mapopt__constraint;

/* The third field of Region and Layout, and the legacy InstanceLimit kind. */
typedef enum mapopt__field_kind {
  FIELD_NONE, /* absent (InstanceLimit's 2-field form) */
  FIELD_STAR, /* "*" */
  FIELD_PROC, /* a processor kind: value is mapopt_proc_kind */
  FIELD_MEM   /* a memory kind: value is mapopt_mem_kind */
} mapopt__field_kind;

typedef struct mapopt__field {
  mapopt__field_kind kind;
  int value;
  mapopt__loc loc;
} mapopt__field;

typedef enum mapopt__param_type {
  TYPE_INT,
  TYPE_BOOL,
  TYPE_IPOINT,
  TYPE_ISPACE,
  TYPE_MSPACE,
  TYPE_TASK
} mapopt__param_type;

typedef struct mapopt__param {
  mapopt__param_type type;
  int sym;
  mapopt__loc loc; /* of the parameter name */
} mapopt__param;

typedef enum mapopt__stmt_kind {
  ST_TASK,
  ST_REGION,
  ST_LAYOUT,
  ST_LIMIT,
  ST_COLLECT,
  ST_INDEX_MAP,
  ST_SINGLE_MAP,
  ST_REPLICATE,
  ST_DEF,
  ST_ASSIGN,
  ST_PRINT,
  ST_RETURN
} mapopt__stmt_kind;

typedef struct mapopt__stmt mapopt__stmt;

typedef struct mapopt__stmt_list {
  mapopt__stmt **items;
  int n;
} mapopt__stmt_list;

struct mapopt__stmt {
  mapopt__stmt_kind kind;
  mapopt__loc loc; /* the first token (the keyword, or the assigned name) */
  /* Read from the older `IndexTaskMap TASKS MODEL f;` form: the map
   * statement and the def the parser wrote for it (for the portability
   * checks; equality and the printer ignore it). */
  bool legacy;
  union {
    struct {
      mapopt__sel_list tasks; /* one SEL_STAR, or SEL_NAMEs */
      uint8_t *kinds;         /* mapopt_proc_kind values */
      int nkinds;
    } task;
    struct {
      mapopt__sel task;   /* SEL_STAR or SEL_NAME */
      mapopt__sel region; /* SEL_STAR, SEL_NAME or SEL_INT */
      mapopt__field proc; /* FIELD_STAR or FIELD_PROC */
      uint8_t *mems;      /* mapopt_mem_kind values */
      int nmems;
    } region;
    struct {
      mapopt__sel task;
      mapopt__sel region;
      mapopt__field field; /* FIELD_STAR, FIELD_PROC or FIELD_MEM */
      mapopt__constraint *cons;
      int ncons;
    } layout;
    struct {
      mapopt__sel task;     /* SEL_NAME */
      mapopt__field legacy; /* FIELD_NONE, or the ignored kind / "*" */
      int64_t limit;
      mapopt__loc limit_loc;
    } limit;
    struct {
      mapopt__sel task;
      mapopt__sel region;
    } collect;
    struct {
      mapopt__sel_list targets; /* one SEL_STAR or SEL_KIND, or SEL_NAMEs */
      int fn;                   /* symbol of the function */
      mapopt__loc fn_loc;
    } map; /* ST_INDEX_MAP and ST_SINGLE_MAP */
    struct {
      mapopt__sel_list names;
    } replicate;
    struct {
      int sym;
      mapopt__loc name_loc;
      mapopt__param *params;
      int nparams;
      mapopt__stmt_list body; /* ST_ASSIGN, ST_RETURN, ST_PRINT */
      int nslots;             /* frame size, set by the loader */
    } def;
    struct {
      mapopt__name_ref target; /* slot set by the loader inside a def */
      mapopt__expr *value;
    } assign;
    struct {
      const char *fmt; /* the string's bytes between the quotes */
      int fmtlen;
      mapopt__expr_list args;
    } print;
    struct {
      mapopt__expr *value;
    } ret;
  } u;
};

/* The symbol table: interned identifier texts. */
typedef struct mapopt__symtab {
  mapopt__map index; /* text -> (id + 1) stored in value as uintptr_t */
  mapopt__vec names; /* of const char * (arena strings) */
} mapopt__symtab;

/* What the parser produces: a tree in an arena, with its symbols. */
typedef struct mapopt__ast {
  mapopt_ctx *ctx;
  mapopt__arena arena;
  mapopt__symtab syms;
  mapopt__stmt_list stmts;
  const char *file; /* for diagnostics (arena copy) */
} mapopt__ast;

void mapopt__ast_init(mapopt__ast *ast, mapopt_ctx *ctx);
void mapopt__ast_destroy(mapopt__ast *ast);
/* Interns text; returns its id, or -1 on ENOMEM. */
int mapopt__sym_intern(mapopt__ast *ast, const char *text, size_t len);
const char *mapopt__sym_name(const mapopt__ast *ast, int sym);

/*
 * Parses text (len bytes; it may contain NUL bytes, which are errors) into
 * ast, which must be freshly initialised; ast->file names the file in
 * diagnostics. On a lexical or syntax error, appends exactly one diagnostic
 * (E01-E04, or the nesting limit) to diags and returns MAPOPT_ESYNTAX.
 * Returns MAPOPT_ENOMEM when an allocation fails. On any failure the ast may
 * hold a partial tree; mapopt__ast_destroy frees it.
 */
mapopt_status mapopt__dsl_parse(mapopt__ast *ast, const char *text, size_t len,
                                mapopt_diags *diags);

/*
 * Appends the canonical form of the program (docs/dsl.md, "Step 7: format it")
 * to sb: one statement per line, each ending in '\n'.
 */
void mapopt__dsl_print(const mapopt__ast *ast, mapopt__strbuf *sb);
/* Appends one expression in canonical form (used by diagnostics/tests). */
void mapopt__dsl_print_expr(const mapopt__ast *ast, const mapopt__expr *e,
                            mapopt__strbuf *sb);

/*
 * Structural equality of two trees, ignoring locations, name slots and
 * frame sizes; symbols are compared by their text.
 */
bool mapopt__ast_equal(const mapopt__ast *a, const mapopt__ast *b);

/* The region argument a Region, Layout or CollectMemory statement keys;
 * NULL for any other statement. */
const mapopt__sel *mapopt__stmt_region(const mapopt__stmt *s);

/* Spellings used by the printer and by diagnostics. */
const char *mapopt__op_text(mapopt__op op);
const char *mapopt__member_text(mapopt__member m);
const char *mapopt__param_type_text(mapopt__param_type t);

#endif /* MAPOPT_SRC_DSL_AST_H */
