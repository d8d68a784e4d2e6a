/*
 * mapopt llm: asking a chat model for mappers (docs/llm.md).
 *
 * On top of the chat-completions client and its transports
 * (mapopt/chat.h, included here), three layers:
 *  - the prompt: a DSL reference compiled into the library, the
 *    application and machine summaries, the current best mapper, the last
 *    k attempts with their scores and feedback, and the objective; the same
 *    inputs always give the same bytes;
 *  - the reply: the mapper is taken from a fenced code block (or the whole
 *    reply when it is a program) and compiled by the real DSL compiler;
 *    the result is either the program or the diagnostics text that becomes
 *    the next feedback;
 *  - mapopt_llm_step does one whole round: prompt, calls, candidates.
 *
 * Replies are untrusted text: size-capped, parsed, never executed.
 */
#ifndef MAPOPT_LLM_H
#define MAPOPT_LLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/app.h"
#include "mapopt/chat.h"
#include "mapopt/core.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the prompt ---------------------------------------------------------- */

/* An earlier evaluation; everything borrowed. */
typedef struct mapopt_llm_attempt {
  int64_t iteration;    /* the caller's number, from 1; 0: a repeat */
  const char *mapper;   /* the text evaluated; NULL when there was none */
  double score;         /* the objective's value; 0 for a failure */
  const char *feedback; /* AutoGuide's or the compiler's text; may be NULL */
  double elapsed_s;     /* the run's elapsed time; 0: unknown or failed */
  /* Where the run's time went (mapopt_guide_critical_path_line); NULL:
   * not known (a failure, a real run, a feedback level below full). */
  const char *timing;
  /* A signature of the run's profile (mapopt_guide_profile_signature):
   * two attempts with the same nonzero signature ran the same way. 0:
   * unknown. */
  uint64_t profile;
} mapopt_llm_attempt;

#define MAPOPT_LLM_DEFAULT_HISTORY 5

typedef struct mapopt_llm_prompt_input {
  /* The application instantiated for the machine (mapopt_sim_instantiate);
   * launch counts are those of this run, so instantiate it with the
   * iterations the prompt should speak of (one timed, no warm-up, for
   * "per iteration" counts). */
  const mapopt_app_run *run;
  const mapopt_machine *machine;
  /* What the score measures, e.g. "throughput (1 / execution time in
   * seconds)"; NULL: "throughput (1 / execution time)". */
  const char *objective;
  const char *best_mapper; /* NULL: nothing evaluated yet */
  double best_score;
  const char *best_feedback; /* NULL: none */
  /* The attempt that is the best (its iteration): its elapsed time and
   * timing are shown with the best mapper, and it is not shown again
   * among the attempts. 0: none of them. */
  int64_t best_iteration;
  /* The default mapper's evaluation (iteration 0, not counted against the
   * budget), shown in every prompt; NULL: not evaluated. */
  const mapopt_llm_attempt *baseline;
  /* Earlier attempts, oldest first. At most `history` of them are shown
   * (docs/llm.md, "Which attempts are shown"): the latest, the failures
   * that no later attempt mended, and the most different of the others;
   * the rest are listed by number. */
  const mapopt_llm_attempt *attempts;
  size_t nattempts;
  size_t history; /* 0: MAPOPT_LLM_DEFAULT_HISTORY */
  /* Leave the application's name out ("this application"): an optimizer
   * is told the model of a benchmark, never which benchmark it is. */
  bool anonymous;
} mapopt_llm_prompt_input;

/* The two messages; the strings are owned by the caller after building
 * (mapopt_llm_prompt_destroy frees both; each is a text, which
 * mapopt_text_free also frees). */
typedef struct mapopt_llm_prompt {
  char *system; /* the role and the DSL reference */
  size_t system_len;
  char *user; /* the application, machine, history, objective, request */
  size_t user_len;
} mapopt_llm_prompt;

/*
 * Builds the prompt. The same inputs give the same bytes. Long texts are
 * cut with a note (a mapper at 16 KiB, a feedback at 4 KiB).
 * MAPOPT_EINVAL when run or machine is NULL; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_llm_prompt_build(
    mapopt_ctx *ctx, const mapopt_llm_prompt_input *in, mapopt_llm_prompt *out);
MAPOPT_API void mapopt_llm_prompt_destroy(mapopt_llm_prompt *p);

/* The DSL reference that opens the system message (static text). */
MAPOPT_API const char *mapopt_llm_dsl_reference(void);

/* ---- the reply ----------------------------------------------------------- */

typedef enum mapopt_llm_verdict {
  MAPOPT_LLM_VALID,     /* a mapper that compiles */
  MAPOPT_LLM_INVALID,   /* a mapper with errors, or compiled with
                           opts->portable and with a portability warning
                           (feedback: diagnostics) */
  MAPOPT_LLM_NO_MAPPER, /* no code block, and the reply is not a program */
  MAPOPT_LLM_TOO_LARGE  /* the mapper passed max_mapper_bytes */
} mapopt_llm_verdict;

/* "valid", "invalid", "no-mapper", "too-large". */
MAPOPT_API const char *mapopt_llm_verdict_name(mapopt_llm_verdict v);

/*
 * A candidate mapper made from one reply. Strings are NUL-terminated and
 * owned by the candidate (mapopt_llm_candidate_destroy).
 */
typedef struct mapopt_llm_candidate {
  mapopt_llm_verdict verdict;
  size_t call; /* index of the call it came from (mapopt_llm_step) */
  char *reply; /* the whole reply, as received */
  size_t reply_len;
  char *mapper; /* the extracted text; NULL for NO_MAPPER */
  size_t mapper_len;
  char *canonical; /* its canonical form (mapopt_dsl_format) when VALID */
  /* For the next prompt: the diagnostics (INVALID), or what was wrong
   * (NO_MAPPER, TOO_LARGE); for VALID the warnings, possibly "". Never
   * NULL. */
  char *feedback;
  bool truncated; /* the reply was cut at max_tokens */
} mapopt_llm_candidate;

/*
 * Extracts the mapper from a reply and compiles it. The rules:
 *  1. A fence is a line whose first non-blank characters (at most 3
 *     blanks) are three or more backquotes; the rest of the line is the
 *     tag. The block ends at the next line made only of at least as many
 *     backquotes (and blanks), or at the end of the reply (a reply cut
 *     short keeps what it has).
 *  2. Of the blocks tagged "mapper" (any case), the last is taken; with
 *     none, the last tagged "dsl"; with none, the last untagged block.
 *     Blocks tagged anything else (python, c, text, ...) are never taken.
 *  3. A reply with no fence at all is taken whole when it compiles without
 *     errors and has at least one statement; otherwise it is NO_MAPPER
 *     (its parse errors would only confuse the model: the feedback asks
 *     for a code block).
 *  4. A mapper longer than max_bytes is TOO_LARGE, not compiled.
 * The text is compiled with mapopt_dsl_compile under opts (its file name,
 * when NULL, becomes "mapper"); diagnostics are formatted one per line.
 * With opts->portable, a mapper with a portability warning (P01-P28: what
 * the DSL mapper of Legion does not load or reads differently,
 * docs/legion.md) is INVALID.
 * When truncated (the reply was cut at max_tokens) and the verdict is not
 * VALID, the feedback says so. The reply is copied into out->reply.
 * Only the DSL compiler reads the text (its top-level statements run in
 * the DSL's evaluator, under its step and depth limits); nothing else in a
 * reply is run or interpreted. Returns MAPOPT_OK and fills *out
 * (whatever the verdict), or MAPOPT_ENOMEM with *out untouched.
 */
MAPOPT_API mapopt_status mapopt_llm_reply_parse(mapopt_ctx *ctx,
                                                const char *reply, size_t len,
                                                bool truncated,
                                                size_t max_bytes,
                                                const mapopt_dsl_options *opts,
                                                mapopt_llm_candidate *out);
MAPOPT_API void mapopt_llm_candidate_destroy(mapopt_llm_candidate *cand);

/* ---- one step ------------------------------------------------------------ */

/* What one step produced. */
typedef struct mapopt_llm_step_result {
  size_t ncalls;          /* at most samples + 1 */
  mapopt_llm_call *calls; /* in the order they were made */
  size_t ncandidates;     /* up to the configured samples */
  mapopt_llm_candidate *candidates;
  /* Sums over the calls. */
  int64_t prompt_tokens, completion_tokens, latency_ms;
  double cost;
} mapopt_llm_step_result;

/*
 * One step of the `llm` optimizer: builds the prompt from in, asks for
 * the configured number of samples (one request with "n", topped up by
 * more requests when the server returns fewer choices, and one request
 * per sample after a server answers a request with "n" by HTTP 400; or
 * one request per sample from the start), and turns each choice into a
 * candidate with
 * mapopt_llm_reply_parse under opts. A failed call ends the step: the
 * calls made so far are all reported, and a step with no candidates tells
 * why in its last call's error. Returns MAPOPT_OK with *out (free with
 * mapopt_llm_step_free), MAPOPT_EINVAL or MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_llm_step(mapopt_llm_client *c,
                                         const mapopt_llm_prompt_input *in,
                                         const mapopt_dsl_options *opts,
                                         mapopt_llm_step_result **out);
/* Frees a step result (NULL is ignored); it does not need its client. */
MAPOPT_API void mapopt_llm_step_free(mapopt_llm_step_result *r);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_LLM_H */
