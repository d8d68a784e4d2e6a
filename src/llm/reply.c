/*
 * From a model's reply to a candidate mapper: find the mapper in the
 * fenced code blocks (rules in mapopt/llm.h, mapopt_llm_reply_parse), cap
 * its size, compile it with the DSL compiler, and write the feedback the
 * next prompt shows: the diagnostics of an invalid mapper, what is missing
 * from a reply without one, the warnings of a valid one.
 *
 * The reply is untrusted: it is only ever scanned as bytes and handed to
 * the compiler, which bounds its own work.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "llm/llm.h"

const char *mapopt_llm_verdict_name(mapopt_llm_verdict v) {
  static const char *const names[] = {"valid", "invalid", "no-mapper",
                                      "too-large"};
  return (unsigned)v < sizeof names / sizeof *names ? names[v] : "unknown";
}

/* How much a block's tag makes it the mapper: 0 never, 3 best. */
static int tag_rank(const char *tag, size_t n) {
  if (n == 0)
    return 1;
  if (n == 3 && !strncasecmp(tag, "dsl", 3))
    return 2;
  if (n == 6 && !strncasecmp(tag, "mapper", 6))
    return 3;
  return 0;
}

/* Leading blanks (at most 3) then a run of backquotes: its length, or 0.
 * *after is set past the run. */
static size_t fence_at(const char *line, const char *end, const char **after) {
  const char *p = line;
  while (p < end && *p == ' ' && p - line < 3)
    p++;
  const char *q = p;
  while (q < end && *q == '`')
    q++;
  *after = q;
  return q - p >= 3 ? (size_t)(q - p) : 0;
}

static bool blank(const char *p, const char *end) {
  for (; p < end; p++)
    if (!strchr(" \t\r\n\f\v", *p) || !*p)
      return false;
  return true;
}

typedef struct found {
  bool any_fence;
  int rank; /* of the block kept */
  const char *text;
  size_t len;
} found;

/* Scans the reply's fenced blocks and keeps the best (last among equals). */
static found scan(const char *s, size_t len) {
  found f = {0};
  const char *end = s + len;
  const char *line = s;
  while (line < end) {
    const char *eol = memchr(line, '\n', (size_t)(end - line));
    if (!eol)
      eol = end;
    const char *after;
    size_t ticks = fence_at(line, eol, &after);
    if (!ticks) {
      line = eol + (eol < end);
      continue;
    }
    f.any_fence = true;
    /* The tag: the first word of the info string. */
    const char *t = after;
    while (t < eol && (*t == ' ' || *t == '\t'))
      t++;
    const char *te = t;
    while (te < eol && *te != ' ' && *te != '\t' && *te != '\r')
      te++;
    int rank = tag_rank(t, (size_t)(te - t));
    const char *body = eol + (eol < end);
    const char *close = body, *next = end, *body_end = end;
    while (close < end) {
      const char *ceol = memchr(close, '\n', (size_t)(end - close));
      if (!ceol)
        ceol = end;
      const char *cafter;
      if (fence_at(close, ceol, &cafter) >= ticks && blank(cafter, ceol)) {
        body_end = close;
        next = ceol + (ceol < end);
        break;
      }
      close = ceol + (ceol < end);
    }
    if (rank > 0 && rank >= f.rank) {
      f.rank = rank;
      f.text = body;
      f.len = (size_t)(body_end - body);
    }
    line = next;
  }
  return f;
}

void mapopt_llm_candidate_destroy(mapopt_llm_candidate *c) {
  if (!c)
    return;
  mapopt_text_free(c->reply);
  mapopt_text_free(c->mapper);
  mapopt_text_free(c->canonical);
  mapopt_text_free(c->feedback);
  *c = (mapopt_llm_candidate){0};
}

/* Appends every diagnostic, whole, one per line. */
static void put_diags(mapopt__strbuf *sb, const mapopt_diags *d) {
  for (size_t i = 0; i < mapopt_diags_count(d); i++) {
    mapopt__sb_diag(sb, mapopt_diags_get(d, i));
    mapopt__sb_putc(sb, '\n');
  }
}

/*
 * Compiles text: VALID with the canonical form, or INVALID; the
 * diagnostics go to fb either way.
 */
static mapopt_status compile(mapopt_ctx *ctx, const char *text, size_t len,
                             const mapopt_dsl_options *opts, mapopt__strbuf *fb,
                             mapopt_llm_candidate *out) {
  mapopt_dsl_options o = opts ? *opts : (mapopt_dsl_options){0};
  if (!o.file)
    o.file = "mapper";
  mapopt_diags *d;
  mapopt_status st = mapopt_diags_new(ctx, &d);
  if (st != MAPOPT_OK)
    return st;
  mapopt_program *prog = NULL;
  st = mapopt_dsl_compile(ctx, text, len, &o, d, &prog);
  bool portable = true;
  for (size_t i = 0; o.portable && i < mapopt_diags_count(d); i++)
    portable &= mapopt_diags_get(d, i)->code[0] != 'P';
  if (st == MAPOPT_OK && !portable) {
    mapopt_dsl_free(prog);
    out->verdict = MAPOPT_LLM_INVALID;
  } else if (st == MAPOPT_OK) {
    size_t clen;
    st = mapopt_dsl_format(prog, &out->canonical, &clen);
    mapopt_dsl_free(prog);
    out->verdict = MAPOPT_LLM_VALID;
  } else if (st == MAPOPT_ESYNTAX || st == MAPOPT_ELOAD) {
    out->verdict = MAPOPT_LLM_INVALID;
    st = MAPOPT_OK;
  }
  put_diags(fb, d);
  mapopt_diags_free(d);
  return st;
}

mapopt_status mapopt_llm_reply_parse(mapopt_ctx *ctx, const char *reply,
                                     size_t len, bool truncated,
                                     size_t max_bytes,
                                     const mapopt_dsl_options *opts,
                                     mapopt_llm_candidate *out) {
  mapopt_llm_candidate c = {.truncated = truncated};
  mapopt__strbuf fb;
  mapopt__sb_init(&fb, ctx);
  mapopt_status st = MAPOPT_ENOMEM;
  c.reply = mapopt__text_new(ctx, reply ? reply : "", reply ? len : 0);
  c.reply_len = reply ? len : 0;
  if (!c.reply)
    goto done;
  found f = scan(c.reply, c.reply_len);
  bool whole = !f.any_fence && !blank(c.reply, c.reply + c.reply_len) &&
               c.reply_len <= max_bytes;
  if (whole) {
    /* No fence: the reply itself, if it is a mapper. */
    mapopt_llm_candidate trial = {0};
    mapopt__strbuf scratch;
    mapopt__sb_init(&scratch, ctx);
    st = compile(ctx, c.reply, c.reply_len, opts, &scratch, &trial);
    /* Only a program with statements: a reply of comments alone (a
     * markdown heading starts with '#') is no deliberate empty mapper. */
    whole = st == MAPOPT_OK && trial.verdict == MAPOPT_LLM_VALID &&
            trial.canonical && *trial.canonical;
    if (whole) {
      c.canonical = trial.canonical;
      c.verdict = MAPOPT_LLM_VALID;
      if (scratch.len)
        mapopt__sb_putn(&fb, scratch.data, scratch.len);
      f.text = c.reply;
      f.len = c.reply_len;
    } else {
      mapopt_text_free(trial.canonical);
    }
    mapopt__sb_destroy(&scratch);
    if (st != MAPOPT_OK)
      goto done;
  }
  if (!f.text) {
    c.verdict = MAPOPT_LLM_NO_MAPPER;
    if (blank(c.reply, c.reply + c.reply_len))
      mapopt__sb_puts(&fb, "The reply was empty.");
    else if (f.any_fence)
      mapopt__sb_puts(&fb, "The reply's code blocks were not tagged mapper "
                           "(or dsl, or untagged), so none was taken as "
                           "the mapper.");
    else
      mapopt__sb_puts(&fb, "The reply had no fenced code block, and the "
                           "reply as a whole is not a valid mapper.");
    mapopt__sb_puts(&fb, " Put the complete mapper in one fenced code "
                         "block tagged mapper (```mapper ... ```).\n");
  } else {
    c.mapper = mapopt__text_new(ctx, f.text, f.len);
    c.mapper_len = f.len;
    if (!c.mapper)
      goto done;
    if (f.len > max_bytes) {
      c.verdict = MAPOPT_LLM_TOO_LARGE;
      mapopt__sb_printf(&fb,
                        "The mapper is %zu bytes long; the limit is %zu "
                        "bytes. Write a shorter mapper.\n",
                        f.len, max_bytes);
    } else if (!whole && (st = compile(ctx, c.mapper, c.mapper_len, opts, &fb,
                                       &c)) != MAPOPT_OK) {
      goto done;
    }
  }
  if (truncated && c.verdict != MAPOPT_LLM_VALID)
    mapopt__sb_puts(&fb, "The reply was cut off at the token limit: write a "
                         "shorter reply.\n");
  c.feedback = mapopt__text_take(&fb, NULL);
  st = c.feedback ? MAPOPT_OK : MAPOPT_ENOMEM;
done:
  mapopt__sb_destroy(&fb);
  if (st != MAPOPT_OK) {
    mapopt_llm_candidate_destroy(&c);
    return st;
  }
  *out = c;
  return MAPOPT_OK;
}
