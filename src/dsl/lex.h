/*
 * The lexer of the mapping DSL (docs/dsl.md, "Lexical rules"), internal to
 * src/dsl: it turns the source bytes into tokens for the parser (parse.c) and
 * is the one place where parse diagnostics are emitted (mapopt__lex_error),
 * lexical ones (E01-E03) directly and syntax errors (E04) on the parser's
 * behalf.
 *
 * Errors do not return: like Lua's luaD_throw, they record a status and
 * longjmp to the protected call in mapopt__dsl_parse. Everything the parse
 * allocates lives in the program's arena, which the caller owns, so a jump
 * can never leak.
 */
#ifndef MAPOPT_SRC_DSL_LEX_H
#define MAPOPT_SRC_DSL_LEX_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "dsl/ast.h"

/* Token classes, spelled as in diagnostics. */
// clang-format off
#define MAPOPT__TK_CLASSES(X)                                                  \
  X(EOF, "end of file")                                                        \
  X(IDENT, "identifier")                                                       \
  X(INT, "integer")                                                            \
  X(STRING, "string")

/* Operators and punctuation, by their text. */
#define MAPOPT__TK_PUNCT(X)                                                    \
  X(PLUS, "+") X(MINUS, "-") X(STAR, "*") X(SLASH, "/") X(PERCENT, "%")       \
  X(ASSIGN, "=") X(LT, "<") X(GT, ">") X(BANG, "!") X(QUESTION, "?")          \
  X(COLON, ":") X(COMMA, ",") X(SEMI, ";") X(DOT, ".") X(LPAREN, "(")         \
  X(RPAREN, ")") X(LBRACKET, "[") X(RBRACKET, "]") X(LBRACE, "{")             \
  X(RBRACE, "}") X(EQ, "==") X(NE, "!=") X(LE, "<=") X(GE, ">=")              \
  X(AND, "&&") X(OR, "||")

/*
 * Reserved words (docs/dsl.md, "Lexical rules"). The members, processor kinds,
 * memory kinds and the first five types are listed in the order of
 * mapopt__member, mapopt_proc_kind, mapopt_mem_kind and mapopt__param_type, so
 * that each group maps to its enum by subtraction.
 */
#define MAPOPT__TK_WORDS(X)                                                    \
  X(TASK, "Task") X(REGION, "Region") X(LAYOUT, "Layout")                     \
  X(INSTANCELIMIT, "InstanceLimit") X(COLLECTMEMORY, "CollectMemory")         \
  X(INDEXTASKMAP, "IndexTaskMap") X(SINGLETASKMAP, "SingleTaskMap")           \
  X(CONTROLREPLICATE, "ControlReplicate") X(DEF, "def") X(RETURN, "return")   \
  X(PRINT, "print")                                                           \
  X(SOA, "SOA") X(AOS, "AOS") X(C_ORDER, "C_order") X(F_ORDER, "F_order")     \
  X(COMPACT, "Compact") X(EXACT, "Exact") X(ALIGN, "Align")                   \
  X(NO_ALIGN, "No_Align")                                                     \
  X(SIZE, "size") X(LEN, "len") X(VOLUME, "volume") X(IPOINT, "ipoint")       \
  X(ISPACE, "ispace") X(PARENT, "parent") X(PROCESSOR, "processor")           \
  X(HAS, "has") X(SPLIT, "split") X(MERGE, "merge") X(SWAP, "swap")           \
  X(SLICE, "slice") X(REVERSE, "reverse") X(BALANCE_SPLIT, "balance_split")   \
  X(AUTO_SPLIT, "auto_split") X(GREEDY_SPLIT, "greedy_split")                 \
  X(CPU, "CPU") X(GPU, "GPU") X(OMP, "OMP") X(IO, "IO") X(PY, "PY")           \
  X(PROC, "PROC")                                                             \
  X(SYSMEM, "SYSMEM") X(FBMEM, "FBMEM") X(ZCMEM, "ZCMEM") X(RDMEM, "RDMEM")   \
  X(SOCKMEM, "SOCKMEM") X(VIRTUAL, "VIRTUAL")                                 \
  X(TY_INT, "int") X(TY_BOOL, "bool") X(TY_IPOINT, "IPoint")                  \
  X(TY_ISPACE, "ISpace") X(TY_MSPACE, "MSpace")                               \
  X(MACHINE, "Machine") X(TUPLE, "tuple") X(FOR, "for") X(IN, "in")           \
  X(TRUE, "True") X(FALSE, "False")
// clang-format on

typedef enum mapopt__tok {
#define MAPOPT__TK_ENUM(name, text) TK_##name,
  MAPOPT__TK_CLASSES(MAPOPT__TK_ENUM) MAPOPT__TK_PUNCT(MAPOPT__TK_ENUM)
      MAPOPT__TK_WORDS(MAPOPT__TK_ENUM)
#undef MAPOPT__TK_ENUM
          TK__COUNT
} mapopt__tok;

typedef struct mapopt__token {
  mapopt__tok type;
  mapopt__loc loc;
  const char *text; /* into the source; a string's text includes its quotes */
  size_t len;
  int64_t ival; /* TK_INT */
} mapopt__token;

typedef struct mapopt__lexer {
  const char *src;
  size_t len;
  size_t pos;        /* next byte to scan */
  int line;          /* line of src[pos] */
  size_t bol;        /* offset of the first byte of that line */
  mapopt__token tok; /* the current token */
  mapopt__token ahead;
  bool has_ahead;
  /* Where errors go. */
  mapopt_ctx *ctx;
  const char *file;
  mapopt_diags *diags;
  mapopt_status status; /* why the jump happened */
  jmp_buf jmp;
} mapopt__lexer;

/* Prepares lx to scan text (len bytes). Does not read a token yet. */
void mapopt__lex_init(mapopt__lexer *lx, mapopt_ctx *ctx, const char *file,
                      mapopt_diags *diags, const char *text, size_t len);
/* Makes the next token current (the lookahead, if one was peeked). */
void mapopt__lex_next(mapopt__lexer *lx);
/* The type of the token after the current one, without consuming it. */
mapopt__tok mapopt__lex_peek(mapopt__lexer *lx);

/* "';'", "'def'", "identifier", "end of file". */
const char *mapopt__tok_spelling(mapopt__tok t);
/* The text of a reserved word ("def", "FBMEM"); NULL for other tokens. */
const char *mapopt__tok_word(mapopt__tok t);

/*
 * Adds the error diagnostic id (E01-E04; give it as MAPOPT__DIAG(NAME)) at
 * loc and jumps out with MAPOPT_ESYNTAX, or with MAPOPT_ENOMEM if the
 * diagnostic cannot be stored.
 */
_Noreturn void mapopt__lex_error(mapopt__lexer *lx, mapopt_dsl_diag id,
                                 const char *fmt, mapopt__loc loc, ...)
    __attribute__((format(printf, 3, 5)));
/* The same with the message of id already formatted in msg, which this
 * destroys. */
_Noreturn void mapopt__lex_error_sb(mapopt__lexer *lx, mapopt_dsl_diag id,
                                    mapopt__loc loc, mapopt__strbuf *msg);
/* Adds the error without jumping (a syntax error followed by its hints):
 * MAPOPT_ESYNTAX, or MAPOPT_ENOMEM if it cannot be stored. msg is
 * destroyed. */
mapopt_status mapopt__lex_add_sb(mapopt__lexer *lx, mapopt_dsl_diag id,
                                 mapopt__loc loc, mapopt__strbuf *msg);
/* Adds the note id (N04-N07) after an error: MAPOPT_ESYNTAX, or
 * MAPOPT_ENOMEM if it cannot be stored. */
mapopt_status mapopt__lex_note(mapopt__lexer *lx, mapopt_dsl_diag id,
                               const char *fmt, mapopt__loc loc, ...)
    __attribute__((format(printf, 3, 5)));
/* Jumps out with status (MAPOPT_ENOMEM), adding no diagnostic. */
_Noreturn void mapopt__lex_throw(mapopt__lexer *lx, mapopt_status status);

#endif /* MAPOPT_SRC_DSL_LEX_H */
