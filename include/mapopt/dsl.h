/*
 * mapopt dsl: the mapping language (docs/dsl.md).
 *
 * A mapper file is compiled in three steps -- parse, check, load -- into a
 * mapopt_program: the resolved policy. A substrate (the simulator, the `mapopt
 * show` command) then asks the program its questions (processor kinds,
 * memories, layouts, placements, limits) through the mapopt_policy_* functions.
 * A loaded program is immutable except for internal caches, which are locked:
 * any number of threads may query one program at once.
 */
#ifndef MAPOPT_DSL_H
#define MAPOPT_DSL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/core.h"
#include "mapopt/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- programs ------------------------------------------------------------ */

typedef struct mapopt_program mapopt_program;

/* Receives each line written by `print` (without the newline). */
typedef void (*mapopt_print_fn)(void *ud, const char *line);

/* The longest mapper text mapopt_dsl_compile accepts (16 MiB); a longer
 * one is refused with error E04 before it is parsed. Mappers are a few
 * kilobytes; the bound keeps the memory of a compile in proportion. */
#define MAPOPT_DSL_MAX_INPUT (16 << 20)

/*
 * How Region, Layout and CollectMemory statements match a region argument
 * (docs/dsl.md, "Rules shared by all statements"). The DSL mapper of Legion
 * matches in one run either argument names (with -tm:use_semantic_name) or
 * positions, never both (docs/legion.md); mapopt can do both, names first.
 */
typedef enum mapopt_region_keys_mode {
  /* As the DSL mapper would in one run: by position when the mapper keys
   * arguments by position only, else by name (a mapper that uses both is
   * run with names, and check --portable warns, P22). A mapper that keys
   * no argument (only '*') matches the same either way. */
  MAPOPT_KEYS_AUTO = 0,
  MAPOPT_KEYS_NAMES,     /* names only */
  MAPOPT_KEYS_POSITIONS, /* positions only */
  MAPOPT_KEYS_BOTH       /* mapopt's extension: names, then the position */
} mapopt_region_keys_mode;

typedef struct mapopt_dsl_options {
  const char *file; /* name in diagnostics; "<input>" if NULL */
  const mapopt_machine_shape *shape; /* NULL: the default shape */
  const mapopt_task_info *tasks;     /* optional application, for W11/W12 */
  size_t ntasks;
  mapopt_print_fn print; /* NULL: print output is discarded */
  void *print_ud;
  bool no_memo; /* disable memoization (benchmarks) */
  /* Evaluation trace for tools (`mapopt show`): when set, each statement a
   * mapping function executes is reported as one line ("f 3:5: i = 5"), and
   * memoization is off. */
  mapopt_print_fn trace;
  void *trace_ud;
  /* Also warn about what the DSL mapper of Legion rejects, aborts on or
   * reads differently (P01-P28, docs/legion.md). */
  bool portable;
  mapopt_region_keys_mode region_keys;
} mapopt_dsl_options;

/*
 * Parses, checks and loads a mapper. text has len bytes (it need not be
 * NUL-terminated). Diagnostics -- warnings, then the first error -- are
 * appended to diags in the order of docs/dsl.md, "How diagnostics look".
 * Returns MAPOPT_OK and the program in *out (owned by the caller:
 * mapopt_dsl_free). Errors, with *out untouched: MAPOPT_EINVAL for a NULL ctx,
 * diags or out (or NULL text with len > 0); MAPOPT_ESYNTAX (lexical or syntax
 * error, E01-E04, or a text longer than MAPOPT_DSL_MAX_INPUT); MAPOPT_ELOAD
 * (check or load error: E05-E10 and R-errors at load time); MAPOPT_ENOMEM. The
 * options and the shape are copied.
 */
MAPOPT_API mapopt_status mapopt_dsl_compile(mapopt_ctx *ctx, const char *text,
                                            size_t len,
                                            const mapopt_dsl_options *opts,
                                            mapopt_diags *diags,
                                            mapopt_program **out);
MAPOPT_API void mapopt_dsl_free(mapopt_program *prog);

/*
 * The canonical text of the program (docs/dsl.md, "Step 7: format it") in
 * *text, freed with mapopt_text_free, and its length in *len (len may be NULL).
 * Error: MAPOPT_ENOMEM (*text untouched).
 */
MAPOPT_API mapopt_status mapopt_dsl_format(const mapopt_program *prog,
                                           char **text, size_t *len);
/* Structural equality of the two programs' syntax trees. */
MAPOPT_API bool mapopt_dsl_equal(const mapopt_program *a,
                                 const mapopt_program *b);

/* ---- the diagnostic catalogue (docs/dsl.md, "Diagnostics catalogue") ----- */

/*
 * Every diagnostic the DSL emits, one entry per message form:
 * X(NAME, CODE, SEVERITY, TEMPLATE), with CODE the id users and tools
 * match on (E01-E10 found before the mapper runs, W01-W15 warnings,
 * R01-R27 raised by mapper code or the substrate, N01-N09 notes: the
 * context of an error, or a hint on how to fix it, P01-P28 portability
 * warnings: what the DSL mapper of Legion rejects, aborts on or reads
 * differently, docs/legion.md),
 * SEVERITY a mapopt_severity without its MAPOPT_SEV_ prefix (an R error
 * raised while a mapper loads is reported as an ERROR), and TEMPLATE the
 * printf format of the message. MAPOPT_DSL_DIAG_<NAME>(X) expands one
 * entry, so that a template can be given to a printf-checked function as
 * a literal (MAPOPT_DSL_TEMPLATE(R18_NODE)); MAPOPT_DSL_DIAG_LIST(X)
 * expands them all, in code order. docs/dsl.md documents each code; a test
 * checks the two against each other.
 */
/* clang-format off */
#define MAPOPT_DSL_DIAG_E01_CHAR(X) \
  X(E01_CHAR, E01, ERROR, "Unrecognized character: %c")
#define MAPOPT_DSL_DIAG_E01_BYTE(X) \
  X(E01_BYTE, E01, ERROR, "Unrecognized character: \\x%02X")
#define MAPOPT_DSL_DIAG_E02_STRING(X) \
  X(E02_STRING, E02, ERROR, "unterminated string constant")
#define MAPOPT_DSL_DIAG_E03_INTEGER(X) \
  X(E03_INTEGER, E03, ERROR, "integer literal out of range: %.*s")
#define MAPOPT_DSL_DIAG_E04_UNEXPECTED(X) \
  X(E04_UNEXPECTED, E04, ERROR, "syntax error, unexpected %s")
#define MAPOPT_DSL_DIAG_E04_EXPECTING(X) \
  X(E04_EXPECTING, E04, ERROR, "syntax error, unexpected %s, expecting %s")
#define MAPOPT_DSL_DIAG_E04_NESTING(X) \
  X(E04_NESTING, E04, ERROR, \
    "expression nested too deeply (more than %d levels)")
#define MAPOPT_DSL_DIAG_E04_DEPTH(X) \
  X(E04_DEPTH, E04, ERROR, "expression nested too deeply")
#define MAPOPT_DSL_DIAG_E04_SELECTOR(X) \
  X(E04_SELECTOR, E04, ERROR, "selector too long")
#define MAPOPT_DSL_DIAG_E04_TOO_LARGE(X) \
  X(E04_TOO_LARGE, E04, ERROR, "mapper too large (more than %d bytes)")
#define MAPOPT_DSL_DIAG_E05_PARAMETER(X) \
  X(E05_PARAMETER, E05, ERROR, "duplicate parameter '%s' in function '%s'")
#define MAPOPT_DSL_DIAG_E06_UNDEFINED(X) \
  X(E06_UNDEFINED, E06, ERROR, \
    "%s's function undefined: '%s' is not defined before this statement")
#define MAPOPT_DSL_DIAG_E07_NOT_FUNCTION(X) \
  X(E07_NOT_FUNCTION, E07, ERROR, \
    "%s's mapping function is undefined: '%s' is a %s, not a function")
#define MAPOPT_DSL_DIAG_E08_SIGNATURE(X) \
  X(E08_SIGNATURE, E08, ERROR, \
    "Entry mapping function's definition must be like func(Task t): " \
    "'%s' is declared as %s(%s)")
#define MAPOPT_DSL_DIAG_E09_GLOBAL(X) \
  X(E09_GLOBAL, E09, ERROR, \
    "redefinition of global '%s' (first bound at %d:%d)")
#define MAPOPT_DSL_DIAG_E10_ALIGN(X) \
  X(E10_ALIGN, E10, ERROR, \
    "Align==%" PRId64 ": alignment must be a positive power of two")
#define MAPOPT_DSL_DIAG_W01_BINDING(X) \
  X(W01_BINDING, W01, WARNING, \
    "duplicate %s binding for %s ignored; the binding at %d:%d is used")
#define MAPOPT_DSL_DIAG_W02_DEFINITION(X) \
  X(W02_DEFINITION, W02, WARNING, \
    "duplicate definition of '%s' ignored; the binding at %d:%d is used")
#define MAPOPT_DSL_DIAG_W03_LEGACY(X) \
  X(W03_LEGACY, W03, WARNING, \
    "legacy InstanceLimit form: the processor kind is ignored")
#define MAPOPT_DSL_DIAG_W04_LIMIT_ZERO(X) \
  X(W04_LIMIT_ZERO, W04, WARNING, "InstanceLimit 0 has no effect")
#define MAPOPT_DSL_DIAG_W05_EXACT(X) \
  X(W05_EXACT, W05, WARNING, "Exact has no effect without Compact")
#define MAPOPT_DSL_DIAG_W06_NOT_FOUND(X) \
  X(W06_NOT_FOUND, W06, WARNING, \
    "%s not found (in function '%s'); evaluating it will fail")
#define MAPOPT_DSL_DIAG_W07_ARGUMENTS(X) \
  X(W07_ARGUMENTS, W07, WARNING, \
    "argument number mismatch: '%s' expects %d arguments, got %d")
#define MAPOPT_DSL_DIAG_W08_NO_RETURN(X) \
  X(W08_NO_RETURN, W08, WARNING, \
    "function '%s' has no return statement; calling it fails with " \
    "'function without return'")
#define MAPOPT_DSL_DIAG_W09_DEAD_CODE(X) \
  X(W09_DEAD_CODE, W09, WARNING, "statement after return is never executed")
#define MAPOPT_DSL_DIAG_W10_PROPERTY(X) \
  X(W10_PROPERTY, W10, WARNING, "'%s' is a property, not a method")
#define MAPOPT_DSL_DIAG_W10_METHOD(X) \
  X(W10_METHOD, W10, WARNING, "method '%s' must be called")
#define MAPOPT_DSL_DIAG_W11_TASK(X) \
  X(W11_TASK, W11, WARNING, \
    "no task named '%s' in the application; this statement has no effect")
#define MAPOPT_DSL_DIAG_W12_POSITION(X) \
  X(W12_POSITION, W12, WARNING, \
    "task '%s' has no region argument '%" PRId64 "'")
#define MAPOPT_DSL_DIAG_W12_NAME(X) \
  X(W12_NAME, W12, WARNING, "task '%s' has no region argument '%s'")
#define MAPOPT_DSL_DIAG_W13_PLACEHOLDERS(X) \
  X(W13_PLACEHOLDERS, W13, WARNING, \
    "print() has %d placeholders but %d arguments")
#define MAPOPT_DSL_DIAG_W14_PROCESSOR(X) \
  X(W14_PROCESSOR, W14, WARNING, \
    "task.processor(m) is undefined while placing an index point; using " \
    "node 0, processor 0")
#define MAPOPT_DSL_DIAG_W15_PRINT_LIMIT(X) \
  X(W15_PRINT_LIMIT, W15, WARNING, "print output truncated after %d lines")
#define MAPOPT_DSL_DIAG_R01_NOT_FOUND(X) \
  X(R01_NOT_FOUND, R01, MAPPING_ERROR, "%s not found")
#define MAPOPT_DSL_DIAG_R02_UNPACK(X) \
  X(R02_UNPACK, R02, MAPPING_ERROR, "type mismatch: cannot unpack %s")
#define MAPOPT_DSL_DIAG_R02_ARGUMENT(X) \
  X(R02_ARGUMENT, R02, MAPPING_ERROR, \
    "type mismatch: argument %d of '%s' must be %s, got %s")
#define MAPOPT_DSL_DIAG_R02_NOT_FUNCTION(X) \
  X(R02_NOT_FUNCTION, R02, MAPPING_ERROR, \
    "type mismatch: '%s' is not a function")
#define MAPOPT_DSL_DIAG_R02_INT_OPERANDS(X) \
  X(R02_INT_OPERANDS, R02, MAPPING_ERROR, "type mismatch: int %s int")
#define MAPOPT_DSL_DIAG_R02_BINARY(X) \
  X(R02_BINARY, R02, MAPPING_ERROR, "type mismatch: %s %s %s")
#define MAPOPT_DSL_DIAG_R02_UNARY(X) \
  X(R02_UNARY, R02, MAPPING_ERROR, "type mismatch: %s %s")
#define MAPOPT_DSL_DIAG_R02_COORDINATE(X) \
  X(R02_COORDINATE, R02, MAPPING_ERROR, \
    "type mismatch: machine coordinate must be int, got %s")
#define MAPOPT_DSL_DIAG_R02_ARGUMENT_COUNT(X) \
  X(R02_ARGUMENT_COUNT, R02, MAPPING_ERROR, \
    "type mismatch: '%s' takes %d arguments, got %d")
#define MAPOPT_DSL_DIAG_R02_MEMBER(X) \
  X(R02_MEMBER, R02, MAPPING_ERROR, \
    "type mismatch: '%s' is not defined for %s")
#define MAPOPT_DSL_DIAG_R02_PROCESSOR_ARGUMENT(X) \
  X(R02_PROCESSOR_ARGUMENT, R02, MAPPING_ERROR, \
    "type mismatch: 'processor' takes one machine argument")
#define MAPOPT_DSL_DIAG_R02_PROPERTY(X) \
  X(R02_PROPERTY, R02, MAPPING_ERROR, \
    "type mismatch: '%s' is a property, not a method")
#define MAPOPT_DSL_DIAG_R02_METHOD(X) \
  X(R02_METHOD, R02, MAPPING_ERROR, \
    "type mismatch: method '%s' must be called")
#define MAPOPT_DSL_DIAG_R02_HAS_ARGUMENT(X) \
  X(R02_HAS_ARGUMENT, R02, MAPPING_ERROR, \
    "type mismatch: 'has' takes one memory kind argument")
#define MAPOPT_DSL_DIAG_R02_VOLUME(X) \
  X(R02_VOLUME, R02, MAPPING_ERROR, \
    "type mismatch: 'volume' needs an int tuple")
#define MAPOPT_DSL_DIAG_R02_NOT_INDEXABLE(X) \
  X(R02_NOT_INDEXABLE, R02, MAPPING_ERROR, \
    "type mismatch: %s cannot be indexed")
#define MAPOPT_DSL_DIAG_R02_TUPLE_INDEX(X) \
  X(R02_TUPLE_INDEX, R02, MAPPING_ERROR, \
    "type mismatch: a tuple index must be a single int")
#define MAPOPT_DSL_DIAG_R02_SLICE_BOUND(X) \
  X(R02_SLICE_BOUND, R02, MAPPING_ERROR, \
    "type mismatch: slice bound must be int, got %s")
#define MAPOPT_DSL_DIAG_R02_NOT_SLICEABLE(X) \
  X(R02_NOT_SLICEABLE, R02, MAPPING_ERROR, \
    "type mismatch: %s cannot be sliced")
#define MAPOPT_DSL_DIAG_R02_RANGE(X) \
  X(R02_RANGE, R02, MAPPING_ERROR, \
    "type mismatch: comprehension range must be a tuple, got %s")
#define MAPOPT_DSL_DIAG_R02_FUNCTION_VALUE(X) \
  X(R02_FUNCTION_VALUE, R02, MAPPING_ERROR, \
    "type mismatch: function '%s' used as a value")
#define MAPOPT_DSL_DIAG_R02_MACHINE_KIND(X) \
  X(R02_MACHINE_KIND, R02, MAPPING_ERROR, \
    "type mismatch: Machine() takes a processor kind, got %s")
#define MAPOPT_DSL_DIAG_R02_CONDITION(X) \
  X(R02_CONDITION, R02, MAPPING_ERROR, \
    "type mismatch: condition must be bool, got %s")
#define MAPOPT_DSL_DIAG_R02_STAR(X) \
  X(R02_STAR, R02, MAPPING_ERROR, "type mismatch: unexpected '*'")
#define MAPOPT_DSL_DIAG_R03_ARGUMENTS(X) \
  X(R03_ARGUMENTS, R03, MAPPING_ERROR, \
    "argument number mismatch: '%s' expects %d arguments, got %d")
#define MAPOPT_DSL_DIAG_R04_NO_RETURN(X) \
  X(R04_NO_RETURN, R04, MAPPING_ERROR, "function without return: '%s'")
#define MAPOPT_DSL_DIAG_R05_DIVISION(X) \
  X(R05_DIVISION, R05, MAPPING_ERROR, "division by zero")
#define MAPOPT_DSL_DIAG_R06_OVERFLOW(X) \
  X(R06_OVERFLOW, R06, MAPPING_ERROR, "integer overflow")
#define MAPOPT_DSL_DIAG_R07_INDEX(X) \
  X(R07_INDEX, R07, MAPPING_ERROR, \
    "index %" PRId64 " out of bound for tuple of length %d (Index out of " \
    "bound for TupleIntNode)")
#define MAPOPT_DSL_DIAG_R08_LEFT(X) \
  X(R08_LEFT, R08, MAPPING_ERROR, \
    "slice's left index is out of bound: %" PRId64)
#define MAPOPT_DSL_DIAG_R08_RIGHT_LENGTH(X) \
  X(R08_RIGHT_LENGTH, R08, MAPPING_ERROR, \
    "slice's right index is out of bound: %" PRId64 " > %d")
#define MAPOPT_DSL_DIAG_R08_RIGHT(X) \
  X(R08_RIGHT, R08, MAPPING_ERROR, \
    "slice's right index is out of bound: %" PRId64)
#define MAPOPT_DSL_DIAG_R09_LENGTHS(X) \
  X(R09_LENGTHS, R09, MAPPING_ERROR, "tuple length mismatch: %d vs %d")
#define MAPOPT_DSL_DIAG_R10_NODE(X) \
  X(R10_NODE, R10, MAPPING_ERROR, \
    "Sharding node index out of bound! %" PRId64 " >= %" PRId64)
#define MAPOPT_DSL_DIAG_R11_PROCESSOR(X) \
  X(R11_PROCESSOR, R11, MAPPING_ERROR, \
    "Slice processor index out of bound! %" PRId64 " >= %" PRId64)
#define MAPOPT_DSL_DIAG_R12_NEGATIVE(X) \
  X(R12_NEGATIVE, R12, MAPPING_ERROR, \
    "negative machine coordinate %" PRId64 " in dimension %d")
#define MAPOPT_DSL_DIAG_R13_COORDINATES(X) \
  X(R13_COORDINATES, R13, MAPPING_ERROR, \
    "machine index has %d coordinates but the machine model has %d " \
    "dimensions")
#define MAPOPT_DSL_DIAG_R14_WILDCARD(X) \
  X(R14_WILDCARD, R14, MAPPING_ERROR, \
    "'*' wildcard is only allowed when indexing a machine model")
#define MAPOPT_DSL_DIAG_R15_DIMENSION(X) \
  X(R15_DIMENSION, R15, MAPPING_ERROR, \
    "%s: dimension %" PRId64 " out of range for a %d-dimensional machine " \
    "model")
#define MAPOPT_DSL_DIAG_R15_FACTOR(X) \
  X(R15_FACTOR, R15, MAPPING_ERROR, \
    "split: factor must be positive, got %" PRId64)
#define MAPOPT_DSL_DIAG_R15_DIVISIBLE(X) \
  X(R15_DIVISIBLE, R15, MAPPING_ERROR, \
    "split: size %" PRId64 " of dimension %d is not divisible by %" \
    PRId64)
#define MAPOPT_DSL_DIAG_R15_SAME_DIMENSIONS(X) \
  X(R15_SAME_DIMENSIONS, R15, MAPPING_ERROR, \
    "%s's arguments must be different dimensions")
#define MAPOPT_DSL_DIAG_R15_SLICE(X) \
  X(R15_SLICE, R15, MAPPING_ERROR, \
    "slice out of bound: [%" PRId64 ", %" PRId64 "] is not a non-empty " \
    "range within [0, %" PRId64 ")")
#define MAPOPT_DSL_DIAG_R15_PARTS(X) \
  X(R15_PARTS, R15, MAPPING_ERROR, \
    "balance_split: number of parts must be positive, got %" PRId64)
#define MAPOPT_DSL_DIAG_R15_DOMAIN(X) \
  X(R15_DOMAIN, R15, MAPPING_ERROR, \
    "%s's second argument must be a tuple of non-negative integers")
#define MAPOPT_DSL_DIAG_R15_ZERO_EXTENT(X) \
  X(R15_ZERO_EXTENT, R15, MAPPING_ERROR, \
    "auto_split: cannot split %" PRId64 " processors for a domain with an " \
    "extent of 0")
#define MAPOPT_DSL_DIAG_R15_TOO_MANY(X) \
  X(R15_TOO_MANY, R15, MAPPING_ERROR, \
    "machine model would have more than 16 dimensions")
#define MAPOPT_DSL_DIAG_R15_ZERO_SIZE(X) \
  X(R15_ZERO_SIZE, R15, MAPPING_ERROR, "cannot factor dimension %d of size 0")
#define MAPOPT_DSL_DIAG_R15_UNKNOWN(X) \
  X(R15_UNKNOWN, R15, MAPPING_ERROR, "%s: unknown transformation")
#define MAPOPT_DSL_DIAG_R15_CORRUPT(X) \
  X(R15_CORRUPT, R15, MAPPING_ERROR, "corrupt machine model")
#define MAPOPT_DSL_DIAG_R16_KIND(X) \
  X(R16_KIND, R16, MAPPING_ERROR, \
    "%s is actually mapped to %s, but machine model is for %s")
#define MAPOPT_DSL_DIAG_R17_RESULT(X) \
  X(R17_RESULT, R17, MAPPING_ERROR, \
    "mapping function '%s' must return a machine point or a set of " \
    "machine points, got %s")
#define MAPOPT_DSL_DIAG_R18_NODE(X) \
  X(R18_NODE, R18, MAPPING_ERROR, \
    "Assertion failed: single task must stay on its parent's node")
#define MAPOPT_DSL_DIAG_R19_INDEX_ONLY(X) \
  X(R19_INDEX_ONLY, R19, MAPPING_ERROR, \
    "task.%s is only defined for index-launched tasks")
#define MAPOPT_DSL_DIAG_R20_SINGLE_ONLY(X) \
  X(R20_SINGLE_ONLY, R20, MAPPING_ERROR, \
    "task.parent is only defined for single tasks")
#define MAPOPT_DSL_DIAG_R20_NO_PARENT(X) \
  X(R20_NO_PARENT, R20, MAPPING_ERROR, "task '%s' has no parent")
#define MAPOPT_DSL_DIAG_R21_OUTSIDE(X) \
  X(R21_OUTSIDE, R21, MAPPING_ERROR, \
    "processor(m): processor (%" PRId64 ", %" PRId64 ") is outside the " \
    "machine model (coordinate %" PRId64 " not in [0, %" PRId64 ") in " \
    "dimension %d)")
#define MAPOPT_DSL_DIAG_R22_RECURSION(X) \
  X(R22_RECURSION, R22, MAPPING_ERROR, \
    "recursion depth limit (%d) exceeded in call to '%s'")
#define MAPOPT_DSL_DIAG_R22_NESTING(X) \
  X(R22_NESTING, R22, MAPPING_ERROR, "evaluation nested too deeply")
#define MAPOPT_DSL_DIAG_R23_STEPS(X) \
  X(R23_STEPS, R23, MAPPING_ERROR, "evaluation step limit (%d) exceeded")
#define MAPOPT_DSL_DIAG_R24_PRINT_ARGUMENTS(X) \
  X(R24_PRINT_ARGUMENTS, R24, MAPPING_ERROR, \
    "Not enough arguments for print()")
#define MAPOPT_DSL_DIAG_R25_SLICED(X) \
  X(R25_SLICED, R25, MAPPING_ERROR, \
    "machine index out of bound for sliced dimension %d: %" PRId64 " > %" \
    PRId64)
#define MAPOPT_DSL_DIAG_R26_NO_KIND(X) \
  X(R26_NO_KIND, R26, MAPPING_ERROR, \
    "Invalid policy: task %s requested %s, but has no valid task " \
    "variant for the kind")
#define MAPOPT_DSL_DIAG_R27_VALUES(X) \
  X(R27_VALUES, R27, MAPPING_ERROR, \
    "value budget exceeded: more than %d tuple items and points built")
#define MAPOPT_DSL_DIAG_R27_DEPTH(X) \
  X(R27_DEPTH, R27, MAPPING_ERROR, "tuples nested more than %d levels deep")
#define MAPOPT_DSL_DIAG_N01_CALLED(X) \
  X(N01_CALLED, N01, NOTE, "called from here")
#define MAPOPT_DSL_DIAG_N02_PLACING(X) \
  X(N02_PLACING, N02, NOTE, "while placing point %s of task '%s' with '%s'")
#define MAPOPT_DSL_DIAG_N03_MAPPING(X) \
  X(N03_MAPPING, N03, NOTE, "while mapping task '%s' with '%s'")
#define MAPOPT_DSL_DIAG_N04_DID_YOU_MEAN(X) \
  X(N04_DID_YOU_MEAN, N04, NOTE, "did you mean '%s'?")
#define MAPOPT_DSL_DIAG_N05_NAMES(X) \
  X(N05_NAMES, N05, NOTE, "the %s are: %s")
#define MAPOPT_DSL_DIAG_N06_EXPECTING(X) \
  X(N06_EXPECTING, N06, NOTE, "expecting one of: %s")
#define MAPOPT_DSL_DIAG_N07_NO_IF(X) \
  X(N07_NO_IF, N07, NOTE, \
    "the language has no if statement: use `c ? a : b`")
#define MAPOPT_DSL_DIAG_N08_INDEX(X) \
  X(N08_INDEX, N08, NOTE, \
    "index %s is outside the machine model's size %s (%s)")
#define MAPOPT_DSL_DIAG_N09_SEMICOLON(X) \
  X(N09_SEMICOLON, N09, NOTE, "is a ';' missing at the end of line %d?")
#define MAPOPT_DSL_DIAG_P01_EMPTY(X) \
  X(P01_EMPTY, P01, WARNING, \
    "the mapper has no statement: the DSL mapper needs one and stops the " \
    "program at start-up")
#define MAPOPT_DSL_DIAG_P02_RANGE(X) \
  X(P02_RANGE, P02, WARNING, \
    "the DSL mapper's comprehensions loop only over a tuple written out, " \
    "such as (0, 1, 2): it aborts loading this one")
#define MAPOPT_DSL_DIAG_P03_TOP_COMPREHENSION(X) \
  X(P03_TOP_COMPREHENSION, P03, WARNING, \
    "the DSL mapper runs comprehensions only inside functions: it aborts " \
    "on this one")
#define MAPOPT_DSL_DIAG_P04_CONDITIONAL(X) \
  X(P04_CONDITIONAL, P04, WARNING, \
    "the DSL mapper groups '?:' from the left and reads this as (a ? b : " \
    "c) ? d : e: put the inner conditional in parentheses")
#define MAPOPT_DSL_DIAG_P05_UNPACK(X) \
  X(P05_UNPACK, P05, WARNING, \
    "the DSL mapper applies this '*' to the first operand of '%s' only: " \
    "put what is unpacked in parentheses")
#define MAPOPT_DSL_DIAG_P06_NEGATE(X) \
  X(P06_NEGATE, P06, WARNING, \
    "the DSL mapper negates only a number or a tuple of numbers written " \
    "out: write 0 - x")
#define MAPOPT_DSL_DIAG_P07_NOT(X) \
  X(P07_NOT, P07, WARNING, \
    "the DSL mapper has no '!' (a syntax error there): compare with False")
#define MAPOPT_DSL_DIAG_P08_REASSIGN(X) \
  X(P08_REASSIGN, P08, WARNING, \
    "'%s' is assigned again: the DSL mapper keeps the first value of a " \
    "parameter or local; use a new name")
#define MAPOPT_DSL_DIAG_P09_NEGATIVE(X) \
  X(P09_NEGATIVE, P09, WARNING, \
    "the DSL mapper reads the machine coordinate -1 as '*' and aborts on " \
    "other negative ones")
#define MAPOPT_DSL_DIAG_P10_NO_ARGUMENTS(X) \
  X(P10_NO_ARGUMENTS, P10, WARNING, \
    "the DSL mapper cannot call '%s' without arguments (a syntax error there)")
#define MAPOPT_DSL_DIAG_P11_LAYOUT_KIND(X) \
  X(P11_LAYOUT_KIND, P11, WARNING, \
    "the DSL mapper's Layout takes a memory kind or '*' here, not a " \
    "processor kind (a syntax error there)")
#define MAPOPT_DSL_DIAG_P12_NO_ALIGN(X) \
  X(P12_NO_ALIGN, P12, WARNING, \
    "the DSL mapper has no No_Align (a syntax error there): leave the " \
    "alignment out")
#define MAPOPT_DSL_DIAG_P13_POSITION(X) \
  X(P13_POSITION, P13, WARNING, \
    "the DSL mapper's %s takes an argument name or '*', not a position (a " \
    "syntax error there)")
#define MAPOPT_DSL_DIAG_P14_LIMIT_KIND(X) \
  X(P14_LIMIT_KIND, P14, WARNING, \
    "the DSL mapper's InstanceLimit takes no processor kind (a syntax " \
    "error there): write InstanceLimit %s %" PRId64 ";")
#define MAPOPT_DSL_DIAG_P15_RETURN(X) \
  X(P15_RETURN, P15, WARNING, \
    "'%s' returns a %s: the DSL mapper's functions return only ints, " \
    "bools, tuples and points, and it aborts on this return")
#define MAPOPT_DSL_DIAG_P16_TUPLE_ARGUMENT(X) \
  X(P16_TUPLE_ARGUMENT, P16, WARNING, \
    "argument %d of '%s' is a tuple of expressions: the DSL mapper passes " \
    "to a parameter of type %s only the tuples it computes itself " \
    "(t.ipoint, m.size, arithmetic) and aborts on this call")
#define MAPOPT_DSL_DIAG_P17_HAS(X) \
  X(P17_HAS, P17, WARNING, \
    "the DSL mapper's has() always fails (it aborts)")
#define MAPOPT_DSL_DIAG_P18_WILDCARDS(X) \
  X(P18_WILDCARDS, P18, WARNING, \
    "the DSL mapper cannot enumerate a machine subscript with more than " \
    "one '*' (it aborts or returns wrong points)")
#define MAPOPT_DSL_DIAG_P19_TASK_ARGUMENT(X) \
  X(P19_TASK_ARGUMENT, P19, WARNING, \
    "'%s' takes a Task: the DSL mapper passes a task only to the mapping " \
    "functions it calls itself, and aborts on this call")
#define MAPOPT_DSL_DIAG_P20_SLICE_END(X) \
  X(P20_SLICE_END, P20, WARNING, \
    "the DSL mapper aborts on a slice whose right bound is not below the " \
    "tuple's length (mapopt accepts one equal to it): leave the bound out " \
    "to slice to the end")
#define MAPOPT_DSL_DIAG_P21_STAR_BINDING(X) \
  X(P21_STAR_BINDING, P21, WARNING, \
    "the DSL mapper ignores %s bindings to '*': these tasks get Legion's " \
    "default mapping there; bind task names or a kind (CPU, GPU, OMP)")
#define MAPOPT_DSL_DIAG_P22_KEYS_MIXED(X) \
  X(P22_KEYS_MIXED, P22, WARNING, \
    "this mapper also names region arguments: the DSL mapper matches them " \
    "either by name (with -tm:use_semantic_name) or by position in one " \
    "run, so with names this statement is ignored")
#define MAPOPT_DSL_DIAG_P23_ASSIGN(X) \
  X(P23_ASSIGN, P23, WARNING, \
    "the DSL mapper cannot store a %s in a variable (it aborts)")
#define MAPOPT_DSL_DIAG_P24_BALANCE_PARTS(X) \
  X(P24_BALANCE_PARTS, P24, WARNING, \
    "the DSL mapper's balance_split splits into 2 or 3 parts only, not " \
    "%" PRId64)
#define MAPOPT_DSL_DIAG_P25_AOS_F_ORDER(X) \
  X(P25_AOS_F_ORDER, P25, WARNING, \
    "AOS with F_order%s: the DSL mapper orders the dimensions F, Y, Z, ... " \
    "without X, which Legion cannot lay out; use SOA, or AOS C_order")
#define MAPOPT_DSL_DIAG_P26_ORDER(X) \
  X(P26_ORDER, P26, WARNING, \
    "the DSL mapper uses F_order when a Layout gives no order (mapopt uses " \
    "the application's default order): write C_order or F_order")
#define MAPOPT_DSL_DIAG_P27_LEGACY(X) \
  X(P27_LEGACY, P27, WARNING, \
    "the form with a machine model is not the DSL mapper's (a syntax error " \
    "there): mapopt fmt writes the current one")
#define MAPOPT_DSL_DIAG_P28_INTEGER(X) \
  X(P28_INTEGER, P28, WARNING, \
    "%" PRId64 " does not fit the DSL mapper's 32-bit integers")

#define MAPOPT_DSL_DIAG_LIST(X) \
  MAPOPT_DSL_DIAG_E01_CHAR(X) \
  MAPOPT_DSL_DIAG_E01_BYTE(X) \
  MAPOPT_DSL_DIAG_E02_STRING(X) \
  MAPOPT_DSL_DIAG_E03_INTEGER(X) \
  MAPOPT_DSL_DIAG_E04_UNEXPECTED(X) \
  MAPOPT_DSL_DIAG_E04_EXPECTING(X) \
  MAPOPT_DSL_DIAG_E04_NESTING(X) \
  MAPOPT_DSL_DIAG_E04_DEPTH(X) \
  MAPOPT_DSL_DIAG_E04_SELECTOR(X) \
  MAPOPT_DSL_DIAG_E04_TOO_LARGE(X) \
  MAPOPT_DSL_DIAG_E05_PARAMETER(X) \
  MAPOPT_DSL_DIAG_E06_UNDEFINED(X) \
  MAPOPT_DSL_DIAG_E07_NOT_FUNCTION(X) \
  MAPOPT_DSL_DIAG_E08_SIGNATURE(X) \
  MAPOPT_DSL_DIAG_E09_GLOBAL(X) \
  MAPOPT_DSL_DIAG_E10_ALIGN(X) \
  MAPOPT_DSL_DIAG_W01_BINDING(X) \
  MAPOPT_DSL_DIAG_W02_DEFINITION(X) \
  MAPOPT_DSL_DIAG_W03_LEGACY(X) \
  MAPOPT_DSL_DIAG_W04_LIMIT_ZERO(X) \
  MAPOPT_DSL_DIAG_W05_EXACT(X) \
  MAPOPT_DSL_DIAG_W06_NOT_FOUND(X) \
  MAPOPT_DSL_DIAG_W07_ARGUMENTS(X) \
  MAPOPT_DSL_DIAG_W08_NO_RETURN(X) \
  MAPOPT_DSL_DIAG_W09_DEAD_CODE(X) \
  MAPOPT_DSL_DIAG_W10_PROPERTY(X) \
  MAPOPT_DSL_DIAG_W10_METHOD(X) \
  MAPOPT_DSL_DIAG_W11_TASK(X) \
  MAPOPT_DSL_DIAG_W12_POSITION(X) \
  MAPOPT_DSL_DIAG_W12_NAME(X) \
  MAPOPT_DSL_DIAG_W13_PLACEHOLDERS(X) \
  MAPOPT_DSL_DIAG_W14_PROCESSOR(X) \
  MAPOPT_DSL_DIAG_W15_PRINT_LIMIT(X) \
  MAPOPT_DSL_DIAG_R01_NOT_FOUND(X) \
  MAPOPT_DSL_DIAG_R02_UNPACK(X) \
  MAPOPT_DSL_DIAG_R02_ARGUMENT(X) \
  MAPOPT_DSL_DIAG_R02_NOT_FUNCTION(X) \
  MAPOPT_DSL_DIAG_R02_INT_OPERANDS(X) \
  MAPOPT_DSL_DIAG_R02_BINARY(X) \
  MAPOPT_DSL_DIAG_R02_UNARY(X) \
  MAPOPT_DSL_DIAG_R02_COORDINATE(X) \
  MAPOPT_DSL_DIAG_R02_ARGUMENT_COUNT(X) \
  MAPOPT_DSL_DIAG_R02_MEMBER(X) \
  MAPOPT_DSL_DIAG_R02_PROCESSOR_ARGUMENT(X) \
  MAPOPT_DSL_DIAG_R02_PROPERTY(X) \
  MAPOPT_DSL_DIAG_R02_METHOD(X) \
  MAPOPT_DSL_DIAG_R02_HAS_ARGUMENT(X) \
  MAPOPT_DSL_DIAG_R02_VOLUME(X) \
  MAPOPT_DSL_DIAG_R02_NOT_INDEXABLE(X) \
  MAPOPT_DSL_DIAG_R02_TUPLE_INDEX(X) \
  MAPOPT_DSL_DIAG_R02_SLICE_BOUND(X) \
  MAPOPT_DSL_DIAG_R02_NOT_SLICEABLE(X) \
  MAPOPT_DSL_DIAG_R02_RANGE(X) \
  MAPOPT_DSL_DIAG_R02_FUNCTION_VALUE(X) \
  MAPOPT_DSL_DIAG_R02_MACHINE_KIND(X) \
  MAPOPT_DSL_DIAG_R02_CONDITION(X) \
  MAPOPT_DSL_DIAG_R02_STAR(X) \
  MAPOPT_DSL_DIAG_R03_ARGUMENTS(X) \
  MAPOPT_DSL_DIAG_R04_NO_RETURN(X) \
  MAPOPT_DSL_DIAG_R05_DIVISION(X) \
  MAPOPT_DSL_DIAG_R06_OVERFLOW(X) \
  MAPOPT_DSL_DIAG_R07_INDEX(X) \
  MAPOPT_DSL_DIAG_R08_LEFT(X) \
  MAPOPT_DSL_DIAG_R08_RIGHT_LENGTH(X) \
  MAPOPT_DSL_DIAG_R08_RIGHT(X) \
  MAPOPT_DSL_DIAG_R09_LENGTHS(X) \
  MAPOPT_DSL_DIAG_R10_NODE(X) \
  MAPOPT_DSL_DIAG_R11_PROCESSOR(X) \
  MAPOPT_DSL_DIAG_R12_NEGATIVE(X) \
  MAPOPT_DSL_DIAG_R13_COORDINATES(X) \
  MAPOPT_DSL_DIAG_R14_WILDCARD(X) \
  MAPOPT_DSL_DIAG_R15_DIMENSION(X) \
  MAPOPT_DSL_DIAG_R15_FACTOR(X) \
  MAPOPT_DSL_DIAG_R15_DIVISIBLE(X) \
  MAPOPT_DSL_DIAG_R15_SAME_DIMENSIONS(X) \
  MAPOPT_DSL_DIAG_R15_SLICE(X) \
  MAPOPT_DSL_DIAG_R15_PARTS(X) \
  MAPOPT_DSL_DIAG_R15_DOMAIN(X) \
  MAPOPT_DSL_DIAG_R15_ZERO_EXTENT(X) \
  MAPOPT_DSL_DIAG_R15_TOO_MANY(X) \
  MAPOPT_DSL_DIAG_R15_ZERO_SIZE(X) \
  MAPOPT_DSL_DIAG_R15_UNKNOWN(X) \
  MAPOPT_DSL_DIAG_R15_CORRUPT(X) \
  MAPOPT_DSL_DIAG_R16_KIND(X) \
  MAPOPT_DSL_DIAG_R17_RESULT(X) \
  MAPOPT_DSL_DIAG_R18_NODE(X) \
  MAPOPT_DSL_DIAG_R19_INDEX_ONLY(X) \
  MAPOPT_DSL_DIAG_R20_SINGLE_ONLY(X) \
  MAPOPT_DSL_DIAG_R20_NO_PARENT(X) \
  MAPOPT_DSL_DIAG_R21_OUTSIDE(X) \
  MAPOPT_DSL_DIAG_R22_RECURSION(X) \
  MAPOPT_DSL_DIAG_R22_NESTING(X) \
  MAPOPT_DSL_DIAG_R23_STEPS(X) \
  MAPOPT_DSL_DIAG_R24_PRINT_ARGUMENTS(X) \
  MAPOPT_DSL_DIAG_R25_SLICED(X) \
  MAPOPT_DSL_DIAG_R26_NO_KIND(X) \
  MAPOPT_DSL_DIAG_R27_VALUES(X) \
  MAPOPT_DSL_DIAG_R27_DEPTH(X) \
  MAPOPT_DSL_DIAG_N01_CALLED(X) \
  MAPOPT_DSL_DIAG_N02_PLACING(X) \
  MAPOPT_DSL_DIAG_N03_MAPPING(X) \
  MAPOPT_DSL_DIAG_N04_DID_YOU_MEAN(X) \
  MAPOPT_DSL_DIAG_N05_NAMES(X) \
  MAPOPT_DSL_DIAG_N06_EXPECTING(X) \
  MAPOPT_DSL_DIAG_N07_NO_IF(X) \
  MAPOPT_DSL_DIAG_N08_INDEX(X) \
  MAPOPT_DSL_DIAG_N09_SEMICOLON(X) \
  MAPOPT_DSL_DIAG_P01_EMPTY(X) \
  MAPOPT_DSL_DIAG_P02_RANGE(X) \
  MAPOPT_DSL_DIAG_P03_TOP_COMPREHENSION(X) \
  MAPOPT_DSL_DIAG_P04_CONDITIONAL(X) \
  MAPOPT_DSL_DIAG_P05_UNPACK(X) \
  MAPOPT_DSL_DIAG_P06_NEGATE(X) \
  MAPOPT_DSL_DIAG_P07_NOT(X) \
  MAPOPT_DSL_DIAG_P08_REASSIGN(X) \
  MAPOPT_DSL_DIAG_P09_NEGATIVE(X) \
  MAPOPT_DSL_DIAG_P10_NO_ARGUMENTS(X) \
  MAPOPT_DSL_DIAG_P11_LAYOUT_KIND(X) \
  MAPOPT_DSL_DIAG_P12_NO_ALIGN(X) \
  MAPOPT_DSL_DIAG_P13_POSITION(X) \
  MAPOPT_DSL_DIAG_P14_LIMIT_KIND(X) \
  MAPOPT_DSL_DIAG_P15_RETURN(X) \
  MAPOPT_DSL_DIAG_P16_TUPLE_ARGUMENT(X) \
  MAPOPT_DSL_DIAG_P17_HAS(X) \
  MAPOPT_DSL_DIAG_P18_WILDCARDS(X) \
  MAPOPT_DSL_DIAG_P19_TASK_ARGUMENT(X) \
  MAPOPT_DSL_DIAG_P20_SLICE_END(X) \
  MAPOPT_DSL_DIAG_P21_STAR_BINDING(X) \
  MAPOPT_DSL_DIAG_P22_KEYS_MIXED(X) \
  MAPOPT_DSL_DIAG_P23_ASSIGN(X) \
  MAPOPT_DSL_DIAG_P24_BALANCE_PARTS(X) \
  MAPOPT_DSL_DIAG_P25_AOS_F_ORDER(X) \
  MAPOPT_DSL_DIAG_P26_ORDER(X) \
  MAPOPT_DSL_DIAG_P27_LEGACY(X) \
  MAPOPT_DSL_DIAG_P28_INTEGER(X)


typedef enum mapopt_dsl_diag {
#define MAPOPT_DSL_DIAG_ENUM(name, code, sev, tpl) MAPOPT_DSL_##name,
  MAPOPT_DSL_DIAG_LIST(MAPOPT_DSL_DIAG_ENUM)
#undef MAPOPT_DSL_DIAG_ENUM
  MAPOPT_DSL_DIAG_COUNT
} mapopt_dsl_diag;
/* clang-format on */

/* The template of entry NAME as a string literal. */
#define MAPOPT_DSL_TEMPLATE_OF(name, code, sev, tpl) tpl
#define MAPOPT_DSL_TEMPLATE(name) MAPOPT_DSL_DIAG_##name(MAPOPT_DSL_TEMPLATE_OF)

/* The code ("R11"), severity and template of a catalogue entry; "", NOTE
 * and "" for an id out of range. */
MAPOPT_API const char *mapopt_dsl_diag_code(mapopt_dsl_diag id);
MAPOPT_API mapopt_severity mapopt_dsl_diag_severity(mapopt_dsl_diag id);
MAPOPT_API const char *mapopt_dsl_diag_template(mapopt_dsl_diag id);

/* ---- policy queries: what a substrate asks a mapper ---------------------- */

/*
 * A region argument's keys: its names in order, then its position. The
 * position is given as an int; the DSL matches it as its decimal text.
 */
typedef struct mapopt_region_keys {
  const char *const *names;
  size_t nnames;
  size_t position;
} mapopt_region_keys;

/*
 * The Task list for task (exact name first, then '*'): writes up to cap
 * kinds to out and returns the list's length; 0 means "unspecified".
 */
MAPOPT_API size_t mapopt_policy_proc_kinds(const mapopt_program *prog,
                                           const char *task,
                                           mapopt_proc_kind *out, size_t cap);

/* The concatenated Region candidate list (docs/dsl.md, "How the memory is
 * chosen"); 0 entries means "unspecified". Writes up to cap entries, returns
 * the full length. */
MAPOPT_API size_t mapopt_policy_memory_list(const mapopt_program *prog,
                                            const char *task,
                                            const mapopt_region_keys *keys,
                                            mapopt_proc_kind kind,
                                            mapopt_mem_kind *out, size_t cap);

/* The first matching Layout entry; false ("unspecified") when none. */
MAPOPT_API bool mapopt_policy_layout(const mapopt_program *prog,
                                     const char *task,
                                     const mapopt_region_keys *keys,
                                     mapopt_mem_kind mem, mapopt_proc_kind kind,
                                     mapopt_layout *out);

/* InstanceLimit for task; 0 means no limit. */
MAPOPT_API int64_t mapopt_policy_instance_limit(const mapopt_program *prog,
                                                const char *task);
/* Whether the argument is collected (read-only-ness is the caller's). */
MAPOPT_API bool mapopt_policy_collect(const mapopt_program *prog,
                                      const char *task,
                                      const mapopt_region_keys *keys);
/* ControlReplicate (docs/dsl.md, "ControlReplicate"): exactly the set if any
 * statement exists, else the top-level task when nodes > 1. */
MAPOPT_API bool mapopt_policy_replicated(const mapopt_program *prog,
                                         const char *task, bool top_level,
                                         int64_t nodes);

/* A processor: kind, node (address space) and local index. */
typedef struct mapopt_proc_point {
  mapopt_proc_kind kind;
  int64_t node;
  int64_t proc;
} mapopt_proc_point;

/*
 * A running or being-mapped task as mapping functions see it: for
 * task.parent and task.processor(m). parent is NULL for the top-level task.
 * For an index point, is_index is true and point/extents hold its launch
 * coordinates.
 */
typedef struct mapopt_task_ref {
  const char *name;
  bool is_index;
  int dims;
  const int64_t *point;
  const int64_t *extents;
  mapopt_proc_point proc;
  const struct mapopt_task_ref *parent;
} mapopt_task_ref;

typedef enum mapopt_map_kind {
  MAPOPT_MAP_UNSPECIFIED, /* no function applies: use the default */
  MAPOPT_MAP_POINT,       /* one processor, in points[0] */
  MAPOPT_MAP_SET          /* a point set: npoints processors */
} mapopt_map_kind;

typedef struct mapopt_map_answer {
  mapopt_map_kind kind;
  const char *function;        /* name of the function used, or NULL */
  size_t npoints;              /* full size of the answer */
  mapopt_proc_point points[1]; /* the first point (index_map uses only it) */
} mapopt_map_answer;

/*
 * IndexTaskMap (docs/dsl.md, "IndexTaskMap: placing the points of an index
 * launch") for one point of an index launch of task, mapped to kind: point and
 * extents have dims coordinates. Warnings raised while mapping (W14, W15) are
 * appended to diags (which may be NULL). Results (including errors) are
 * memoized by (task, kind, point, extents). Errors: MAPOPT_EINVAL for a NULL
 * task or out, or dims outside [0, 16]; MAPOPT_EMAP for a mapping error (an R
 * error of the function), with the "mapping error:" diagnostic and its N02
 * context note appended to diags; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_policy_index_map(
    const mapopt_program *prog, const char *task, int dims,
    const int64_t *point, const int64_t *extents, mapopt_proc_kind kind,
    mapopt_map_answer *out, mapopt_diags *diags);

/*
 * The name of the function that IndexTaskMap (single: SingleTaskMap) binds
 * for task placed on kind -- the exact task name first, then the kind, then
 * '*' -- or NULL when no statement applies. Nothing is evaluated. The name
 * lives as long as the program.
 */
MAPOPT_API const char *mapopt_policy_map_function(const mapopt_program *prog,
                                                  const char *task,
                                                  mapopt_proc_kind kind,
                                                  bool single);

/*
 * SingleTaskMap (docs/dsl.md, "SingleTaskMap: placing single tasks") for the
 * single task self (self->proc is its initial processor: local index 0 of its
 * kind on the parent's node). Up to cap points of a point set are written to
 * set (which may be NULL); out->npoints gives the full count. R18 (another
 * node) is the caller's check: it is the substrate's error. Errors:
 * MAPOPT_EINVAL for a NULL self or out; MAPOPT_EMAP for a mapping error, with
 * the "mapping error:" diagnostic and its N03 context note appended to diags
 * (which may be NULL); MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_policy_single_map(
    const mapopt_program *prog, const mapopt_task_ref *self,
    mapopt_proc_kind kind, mapopt_map_answer *out, mapopt_proc_point *set,
    size_t cap, mapopt_diags *diags);

/* ---- resolution with defaults (docs/dsl.md, "Defaults, all in one place") */

/*
 * The processor kind of task given the kinds it has variants for (bit
 * 1u << kind): the first usable kind of its Task list, else of the default
 * order GPU, OMP, CPU, IO, PY, PROC. A kind is usable when it has a variant
 * and the shape has processors of it. *out is written only on success.
 * Errors: MAPOPT_EMAP when nothing is usable -- with lenient false, a Task
 * list without a usable kind; either way, no usable kind at all -- with
 * the mapping error R26 appended to diags (when not NULL; it has no
 * position); MAPOPT_ENOMEM when that diagnostic cannot be stored.
 */
MAPOPT_API mapopt_status mapopt_policy_select_kind(
    const mapopt_program *prog, const char *task, unsigned variants,
    bool lenient, mapopt_proc_kind *out, mapopt_diags *diags);

/*
 * The memory kind for an argument of task run on kind (docs/dsl.md, "How the
 * memory is chosen"): the first available entry of the memory list, VIRTUAL, or
 * the default memory of the kind.
 */
MAPOPT_API mapopt_mem_kind mapopt_policy_select_memory(
    const mapopt_program *prog, const char *task,
    const mapopt_region_keys *keys, mapopt_proc_kind kind);

/* The layout with every unset component defaulted (c_order_default: the
 * application's declared default order). */
MAPOPT_API void
mapopt_policy_resolve_layout(const mapopt_program *prog, const char *task,
                             const mapopt_region_keys *keys,
                             mapopt_mem_kind mem, mapopt_proc_kind kind,
                             bool c_order_default, mapopt_layout *out);

/*
 * The default index placement (docs/dsl.md, "Defaults, all in one place") for
 * point of a launch with extents (dims dimensions) over nodes address spaces of
 * procs processors each: what a substrate does when mapopt_policy_index_map
 * answers MAPOPT_MAP_UNSPECIFIED.
 */
MAPOPT_API void mapopt_policy_default_index_place(int dims,
                                                  const int64_t *point,
                                                  const int64_t *extents,
                                                  int64_t nodes, int64_t procs,
                                                  int64_t *node, int64_t *proc);

/*
 * Where prog places point of task's index launch with extents on processors
 * of kind: its index mapping's first answer, or the default placement over
 * nodes address spaces of procs processors each where it answers
 * MAPOPT_MAP_UNSPECIFIED. MAPOPT_EMAP when the place lies outside them; the
 * mapping function's own errors as mapopt_policy_index_map returns them.
 */
MAPOPT_API mapopt_status mapopt_policy_place_point(
    const mapopt_program *prog, const char *task, int dims,
    const int64_t *point, const int64_t *extents, mapopt_proc_kind kind,
    int64_t nodes, int64_t procs, int64_t *node, int64_t *proc);

/* How the program matches region arguments: the mode of its options,
 * with MAPOPT_KEYS_AUTO resolved to NAMES or POSITIONS when the mapper
 * keys an argument by name or position (it stays AUTO when it keys none,
 * which matches the same in every mode). */
MAPOPT_API mapopt_region_keys_mode
mapopt_dsl_region_keys(const mapopt_program *prog);

/* The machine shape the program was loaded with. */
MAPOPT_API const mapopt_machine_shape *
mapopt_dsl_shape(const mapopt_program *prog);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_DSL_H */
