/*
 * Internal interface of the llm module (mapopt/llm.h): the application
 * section's pieces, and the texts compiled into the library (the .md files
 * of src/llm/prompt, by cmake/embed.cmake). The client it asks is the chat
 * module's, through mapopt/chat.h.
 */
#ifndef MAPOPT_SRC_LLM_H
#define MAPOPT_SRC_LLM_H

#include "core/core.h"
#include "mapopt/llm.h"

/* The application section's pieces (pieces.c). For argument arg of task
 * t, the piece each op uses as a function of its context, fitted to every
 * op of the run (or examples where nothing fits): "[2*i + 1, n]" right
 * after the argument's first name when that is the partition (at_name),
 * else "; piece P[...]" (or "; the whole region", "; pieces of P or Q, by
 * launch") at the end of its line; each call writes only its own part
 * and says whether it wrote. And what an inner task's point launches, in
 * order. */
bool mapopt__llm_put_piece(mapopt__strbuf *sb, const mapopt_app_run *run, int t,
                           size_t arg, const char *first_name, bool at_name);
void mapopt__llm_put_body(mapopt__strbuf *sb, const mapopt_app_run *run, int t);

/* The embedded texts: "dsl_reference" (the system message's reference). */
extern const mapopt__embedded mapopt__llm_texts[];
extern const size_t mapopt__llm_texts_count;
extern const char *const mapopt__llm_texts_names[];

#endif /* MAPOPT_SRC_LLM_H */
