/*
 * mapopt: the whole public API in one include, for programs that embed the
 * library. Each module has its own header, included here bottom up
 * (docs/architecture.md):
 *   core.h     status codes, the context, diagnostics, files, texts
 *   shape.h    processor and memory kinds, a machine's shape, layouts
 *   machine.h  machine models: presets, JSON, the one-line shape, probe
 *   app.h      application models and their instantiated runs
 *   dsl.h      the mapping language: compile, format, policy queries,
 *              the diagnostic catalogue
 *   sim.h      the simulator: runs, plans, results, reports
 *   guide.h    AutoGuide: findings, explanations and suggestions from a
 *              run's output and profile
 *   llm.h      asking a chat model for mappers: client, transports,
 *              prompt, reply extraction, one optimizer step
 *   eval.h     evaluating a mapper by running a command with it
 * The library's own files include only the headers of the modules they
 * may use, never this one.
 */
#ifndef MAPOPT_MAPOPT_H
#define MAPOPT_MAPOPT_H

#include "mapopt/core.h"
#include "mapopt/shape.h"
#include "mapopt/machine.h"
#include "mapopt/app.h"
#include "mapopt/dsl.h"
#include "mapopt/sim.h"
#include "mapopt/guide.h"
#include "mapopt/chat.h"
#include "mapopt/llm.h"
#include "mapopt/eval.h"
#include "mapopt/tune.h"

#endif /* MAPOPT_MAPOPT_H */
