/*
 * Unit tests of the core utilities: status names, arenas, vectors, string
 * buffers, the hash map, the heap's (time, sequence) order, the RNG's
 * determinism, diagnostics formatting, and file replacement.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core.h"
#include "core/json.h"

static void test_status_names(void **state) {
  (void)state;
  assert_string_equal(mapopt_status_name(MAPOPT_OK), "OK");
  assert_string_equal(mapopt_status_name(MAPOPT_ENOMEM), "ENOMEM");
  assert_string_equal(mapopt_strerror(MAPOPT_ESYNTAX), "syntax error");
  assert_string_equal(mapopt_status_name((mapopt_status)-99), "EUNKNOWN");
}

static void test_arena(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt__arena a;
  mapopt__arena_init(&a, ctx);
  char *prev = NULL;
  for (int i = 0; i < 5000; i++) {
    char *p = mapopt__arena_alloc(&a, (size_t)(i % 97) + 1);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    memset(p, 'x', (size_t)(i % 97) + 1);
    assert_ptr_not_equal(p, prev);
    prev = p;
  }
  char *big = mapopt__arena_alloc(&a, 1 << 20); /* oversized block */
  assert_non_null(big);
  memset(big, 0, 1 << 20);
  char *s = mapopt__arena_printf(&a, "%s-%d", "ab", 42);
  assert_string_equal(s, "ab-42");
  mapopt__arena_reset(&a);
  assert_non_null(mapopt__arena_zalloc(&a, 100));
  mapopt__arena_destroy(&a);
  mapopt_ctx_free(ctx);
}

/* A context hook that counts what the library asks of it. */
typedef struct hook_counts {
  int64_t live, peak, allocs, reallocs;
} hook_counts;

static void *count_hook(void *ud, void *ptr, size_t osize, size_t nsize) {
  hook_counts *c = ud;
  if (nsize == 0) {
    c->live -= (int64_t)osize;
    free(ptr);
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (!p)
    return NULL;
  *(ptr ? &c->reallocs : &c->allocs) += 1;
  c->live += (int64_t)nsize - (int64_t)(ptr ? osize : 0);
  if (c->live > c->peak)
    c->peak = c->live;
  return p;
}

/* Large arenas: chunks grow with the arena (a million small allocations
 * take a few dozen blocks, not one per 16 KiB), huge blocks start on a
 * 2 MiB boundary, and a list grown past a chunk costs about its final
 * size; arrays grown past 2 MiB move to a fresh block, contents kept. */
static void test_arena_large(void **state) {
  (void)state;
  hook_counts hc = {0};
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(count_hook, &hc, &ctx), MAPOPT_OK);
  int64_t base_allocs = hc.allocs, base_live = hc.live;
  mapopt__arena a;
  mapopt__arena_init(&a, ctx);
  for (int i = 0; i < 1000000; i++) /* 64 MB in 64-byte pieces */
    assert_non_null(mapopt__arena_alloc(&a, 64));
  int64_t blocks = hc.allocs - base_allocs;
  assert_true(blocks < 64);
  /* An eighth unused at most, and a huge block's alignment (untouched). */
  assert_true(hc.live - base_live <
              64 * 1000000 * 9 / 8 + (8 << 20) + blocks * (2 << 20));
  mapopt__arena_destroy(&a);
  assert_int_equal(hc.live, base_live);

  char *big = mapopt__arena_alloc(&a, 8 << 20);
  assert_non_null(big);
  assert_int_equal((uintptr_t)big % (2 << 20), 0);
  memset(big, 1, 8 << 20);
  mapopt__arena_destroy(&a);
  /* One huge page's worth is enough (a 3 MiB array of a plan). */
  char *mid = mapopt__arena_alloc(&a, 3 << 20);
  assert_non_null(mid);
  assert_int_equal((uintptr_t)mid % (2 << 20), 0);
  mapopt__arena_destroy(&a);

  /* A list doubling from 1 KiB to 16 MiB, filled as it grows. */
  size_t cap = 1024;
  unsigned char *list = mapopt__arena_alloc(&a, cap);
  for (size_t i = 0; i < cap; i++)
    list[i] = (unsigned char)i;
  while (cap < (16u << 20)) {
    list = mapopt__arena_grow(&a, list, cap, 2 * cap);
    assert_non_null(list);
    for (size_t i = cap; i < 2 * cap; i++)
      list[i] = (unsigned char)i;
    cap *= 2;
  }
  for (size_t i = 0; i < cap; i += 4093)
    assert_int_equal(list[i], (unsigned char)i);
  assert_true(hc.live - base_live < (int64_t)cap + (4 << 20));
  mapopt__arena_destroy(&a);

  /* mapopt__grow_block: past 2 MiB, a fresh block and a free, no realloc. */
  size_t n = 1 << 20;
  unsigned char *arr = mapopt__grow_block(ctx, NULL, 0, n);
  assert_non_null(arr);
  memset(arr, 7, n);
  int64_t reallocs = hc.reallocs;
  arr = mapopt__grow_block(ctx, arr, n, 8 * n);
  assert_non_null(arr);
  assert_int_equal(hc.reallocs, reallocs);
  assert_int_equal(arr[0], 7);
  assert_int_equal(arr[n - 1], 7);
  mapopt__free(ctx, arr, 8 * n);
  assert_int_equal(hc.live, base_live);
  mapopt_ctx_free(ctx);
}

static void test_vec_strbuf(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt__vec v;
  mapopt__vec_init(&v, sizeof(int));
  for (int i = 0; i < 1000; i++)
    *(int *)mapopt__vec_push(&v, ctx) = i * 3;
  assert_int_equal(v.len, 1000);
  assert_int_equal(MAPOPT__VEC_AT(&v, int, 999), 2997);
  mapopt__vec_destroy(&v, ctx);

  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  mapopt__sb_puts(&sb, "a");
  mapopt__sb_printf(&sb, "%d%c", 12, 'z');
  mapopt__sb_putn(&sb, "\0q", 2);
  assert_int_equal(sb.len, 6);
  assert_memory_equal(sb.data, "a12z\0q", 6);
  size_t len;
  char *t = mapopt__sb_take(&sb, &len);
  assert_int_equal(len, 6);
  mapopt__free(ctx, t, len + 1);
  mapopt_ctx_free(ctx);
}

static void test_map(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt__map m;
  mapopt__map_init(&m);
  static char keys[2000][16];
  for (int i = 0; i < 2000; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    bool ins;
    mapopt__map_entry *e =
        mapopt__map_upsert(&m, ctx, keys[i], strlen(keys[i]), &ins);
    assert_non_null(e);
    assert_true(ins);
    e->value = (void *)(intptr_t)(i + 1);
  }
  for (int i = 0; i < 2000; i++) {
    mapopt__map_entry *e = mapopt__map_find(&m, keys[i], strlen(keys[i]));
    assert_non_null(e);
    assert_int_equal((intptr_t)e->value, i + 1);
  }
  bool ins = true;
  mapopt__map_upsert(&m, ctx, "k7", 2, &ins);
  assert_false(ins);
  assert_null(mapopt__map_find(&m, "k2000", 5));
  assert_int_equal(m.len, 2000);
  mapopt__map_destroy(&m, ctx);
  mapopt_ctx_free(ctx);
}

/* Equal times pop in insertion order: the simulator's determinism rests on
 * it. */
static void test_heap_ties(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt__heap h;
  mapopt__heap_init(&h);
  int64_t times[] = {5, 1, 5, 3, 1, 5, 0, 3};
  for (int i = 0; i < 8; i++)
    assert_int_equal(mapopt__heap_push(&h, ctx, times[i], (void *)(intptr_t)i),
                     MAPOPT_OK);
  int expect[] = {6, 1, 4, 3, 7, 0, 2, 5};
  mapopt__heap_item it;
  for (int i = 0; i < 8; i++) {
    assert_true(mapopt__heap_pop(&h, &it));
    assert_int_equal((intptr_t)it.data, expect[i]);
  }
  assert_false(mapopt__heap_pop(&h, &it));
  /* Pushes and pops interleaved at random: every pop is the least (time,
   * insertion) of the items present, found by a plain scan. */
  enum { N = 3000 };
  static int64_t t_of[N];
  static bool present[N];
  mapopt__rng r;
  mapopt__rng_seed(&r, 5);
  int pushed = 0;
  while (pushed < N || h.len) {
    if (pushed < N && (h.len == 0 || mapopt__rng_below(&r, 3) > 0)) {
      t_of[pushed] = (int64_t)mapopt__rng_below(&r, 50);
      present[pushed] = true;
      assert_int_equal(
          mapopt__heap_push(&h, ctx, t_of[pushed], (void *)(intptr_t)pushed),
          MAPOPT_OK);
      pushed++;
      continue;
    }
    int best = -1;
    for (int k = 0; k < pushed; k++)
      if (present[k] && (best < 0 || t_of[k] < t_of[best]))
        best = k;
    assert_true(mapopt__heap_pop(&h, &it));
    assert_int_equal((intptr_t)it.data, best);
    assert_int_equal(it.time, t_of[best]);
    present[best] = false;
  }
  mapopt__heap_destroy(&h, ctx);
  mapopt_ctx_free(ctx);
}

/* The whole range of times, negative ones included, and of sequence
 * numbers: the order is (time, seq) as signed and unsigned numbers, which
 * the heap compares as one 128-bit key. */
static void test_heap_extremes(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt__heap h;
  mapopt__heap_init(&h);
  const int64_t times[] = {INT64_MAX, -5, INT64_MIN, 0, -5, 7, INT64_MIN, -1};
  const uint64_t seqs[] = {3, UINT64_MAX, 9, 0, 1, 2, 8, UINT64_MAX - 1};
  for (int i = 0; i < 8; i++)
    assert_int_equal(mapopt__heap_push_keyed(&h, ctx, times[i], seqs[i],
                                             (void *)(intptr_t)i),
                     MAPOPT_OK);
  const int expect[] = {6, 2, 4, 1, 7, 3, 5, 0};
  mapopt__heap_item it;
  for (int i = 0; i < 8; i++) {
    assert_true(mapopt__heap_pop(&h, &it));
    assert_int_equal((intptr_t)it.data, expect[i]);
    assert_int_equal(it.time, times[expect[i]]);
    assert_true(it.seq == seqs[expect[i]]);
  }
  assert_false(mapopt__heap_pop(&h, &it));
  mapopt__heap_destroy(&h, ctx);
  mapopt_ctx_free(ctx);
}

/* Queues outside the heap with only their heads in it (the simulator's
 * UTIL processors): items queued in (time, seq) order, each keeping the
 * sequence number it took when queued, pop in the order a heap of all of
 * them gives -- the least (time, creation) of the items present, found by
 * a plain scan -- while the heap holds at most the queues' heads and the
 * items pushed directly. */
static void test_heap_queues(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt__heap h;
  mapopt__heap_init(&h);
  enum { N = 3000, Q = 4 };
  static int64_t t_of[N];
  static uint64_t seq_of[N];
  static int next_in_queue[N];
  static bool present[N];
  int head[Q], tail[Q];
  int64_t queue_end[Q];
  for (int q = 0; q < Q; q++) {
    head[q] = tail[q] = -1;
    queue_end[q] = 0;
  }
  mapopt__rng r;
  mapopt__rng_seed(&r, 11);
  int created = 0, direct = 0;
  int64_t now = 0;
  mapopt__heap_item it;
  while (created < N || h.len) {
    if (created < N && (h.len == 0 || mapopt__rng_below(&r, 3) > 0)) {
      int id = created++;
      int q = (int)mapopt__rng_below(&r, Q + 1) - 1; /* -1: direct */
      present[id] = true;
      next_in_queue[id] = -1;
      if (q < 0) {
        t_of[id] = now + (int64_t)mapopt__rng_below(&r, 20);
        seq_of[id] = mapopt__heap_take_seq(&h);
        assert_int_equal(mapopt__heap_push_keyed(&h, ctx, t_of[id], seq_of[id],
                                                 (void *)(intptr_t)(id << 3)),
                         MAPOPT_OK);
        direct++;
        continue;
      }
      /* A queue's work ends in order: after its last item and now. */
      int64_t start = queue_end[q] > now ? queue_end[q] : now;
      t_of[id] = queue_end[q] = start + (int64_t)mapopt__rng_below(&r, 4);
      seq_of[id] = mapopt__heap_take_seq(&h);
      if (tail[q] >= 0) {
        next_in_queue[tail[q]] = id;
        tail[q] = id;
        continue;
      }
      head[q] = tail[q] = id;
      assert_int_equal(mapopt__heap_push_keyed(&h, ctx, t_of[id], seq_of[id],
                                               (void *)(intptr_t)(q << 3 | 4)),
                       MAPOPT_OK);
      continue;
    }
    int best = -1;
    for (int k = 0; k < created; k++)
      if (present[k] && (best < 0 || t_of[k] < t_of[best]))
        best = k;
    assert_true(h.len <= (size_t)(direct + Q));
    assert_true(mapopt__heap_pop(&h, &it));
    intptr_t d = (intptr_t)it.data;
    int id = (int)(d >> 3);
    if (d & 4) { /* a queue's head: its first item, and the next one in */
      int q = id;
      id = head[q];
      head[q] = next_in_queue[id];
      if (head[q] < 0)
        tail[q] = -1;
      else
        assert_int_equal(
            mapopt__heap_push_keyed(&h, ctx, t_of[head[q]], seq_of[head[q]],
                                    (void *)(intptr_t)(q << 3 | 4)),
            MAPOPT_OK);
    } else {
      direct--;
    }
    assert_int_equal(id, best);
    assert_int_equal(it.time, t_of[best]);
    assert_true(it.seq == seq_of[best]);
    present[best] = false;
    now = it.time;
  }
  mapopt__heap_destroy(&h, ctx);
  mapopt_ctx_free(ctx);
}

/* The queue gives items back in the order they came, across growth and the
 * compaction of popped room, and is empty when everything is popped. */
static void test_fifo(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  mapopt__fifo q;
  mapopt__fifo_init(&q);
  int64_t v, next_in = 0, next_out = 0;
  assert_false(mapopt__fifo_pop(&q, &v));
  for (int round = 0; round < 200; round++) {
    for (int k = 0; k < round % 7 + 3; k++)
      assert_int_equal(mapopt__fifo_push(&q, ctx, next_in++), MAPOPT_OK);
    for (int k = 0; k < round % 5 + 1 && mapopt__fifo_pop(&q, &v); k++)
      assert_int_equal(v, next_out++);
  }
  while (mapopt__fifo_pop(&q, &v))
    assert_int_equal(v, next_out++);
  assert_int_equal(next_out, next_in);
  assert_true(q.cap < (size_t)next_in); /* popped room was reused */
  mapopt__fifo_destroy(&q, ctx);
  mapopt_ctx_free(ctx);
}

static void test_rng(void **state) {
  (void)state;
  mapopt__rng a, b;
  mapopt__rng_seed(&a, 42);
  mapopt__rng_seed(&b, 42);
  for (int i = 0; i < 100; i++)
    assert_int_equal(mapopt__rng_next(&a), mapopt__rng_next(&b));
  mapopt__rng_seed(&b, 43);
  assert_int_not_equal(mapopt__rng_next(&a), mapopt__rng_next(&b));
  int counts[6] = {0};
  for (int i = 0; i < 6000; i++)
    counts[mapopt__rng_below(&a, 6)]++;
  for (int i = 0; i < 6; i++)
    assert_in_range(counts[i], 800, 1200);
  double d = mapopt__rng_double(&a);
  assert_true(d >= 0.0 && d < 1.0);
  /* splitmix64's first output for state 0 (a published test vector). */
  uint64_t s = 0;
  assert_int_equal(mapopt__splitmix64(&s), 0xe220a8397b1dcdafull);
}

static void test_diags(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  mapopt_diags *d;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  assert_int_equal(mapopt_diags_new(ctx, &d), MAPOPT_OK);
  mapopt_diags_add(d, MAPOPT_SEV_ERROR, "E04", "m.map", 1, 14, "bad %s", "x");
  mapopt_diags_add(d, MAPOPT_SEV_NOTE, "", "m.map", 0, 0, "while %d", 3);
  mapopt_diags_add(d, MAPOPT_SEV_MAPPING_ERROR, "R11", "m.map", 2, 3, "oob");
  assert_int_equal(mapopt_diags_count(d), 3);
  assert_int_equal(mapopt_diags_errors(d), 2);
  char buf[128];
  mapopt_diag_format(mapopt_diags_get(d, 0), buf, sizeof buf);
  assert_string_equal(buf, "m.map:1:14: error: bad x");
  mapopt_diag_format(mapopt_diags_get(d, 1), buf, sizeof buf);
  assert_string_equal(buf, "m.map: note: while 3");
  mapopt_diag_format(mapopt_diags_get(d, 2), buf, sizeof buf);
  assert_string_equal(buf, "m.map:2:3: mapping error: oob");
  assert_string_equal(mapopt_diags_get(d, 2)->code, "R11");
  mapopt_diags_clear(d);
  assert_int_equal(mapopt_diags_count(d), 0);
  mapopt_diags_free(d);
  mapopt_ctx_free(ctx);
}

static void test_file_replace(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  char path[] = "/tmp/mapopt-test-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "old", 3), 3);
  close(fd);
  assert_int_equal(mapopt_file_replace(path, "new\0x", 5), MAPOPT_OK);
  char *buf;
  size_t len;
  assert_int_equal(mapopt_file_read(ctx, path, NULL, &buf, &len), MAPOPT_OK);
  assert_int_equal(len, 5);
  assert_memory_equal(buf, "new\0x", 5);
  mapopt_text_free(buf);
  unlink(path);
  assert_int_equal(mapopt_file_read(ctx, path, NULL, &buf, &len), MAPOPT_EIO);
  assert_int_equal(mapopt_file_replace("/nonexistent-dir/x", "a", 1),
                   MAPOPT_EIO);
  mapopt_ctx_free(ctx);
}

static void diag_text(mapopt_diags *d, size_t i, char *buf, size_t size) {
  mapopt_diag_format(mapopt_diags_get(d, i), buf, size);
}

static void test_json(void **state) {
  (void)state;
  mapopt_ctx *ctx;
  mapopt_diags *d;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  assert_int_equal(mapopt_diags_new(ctx, &d), MAPOPT_OK);
  mapopt__arena a;
  mapopt__arena_init(&a, ctx);
  const char *text =
      "{\n  \"nodes\": 2,\n  \"bw\": 12.5, \"s\": \"a\\u00e9\\n\",\n"
      "  \"l\": [1, -9223372036854775808, 1e3, true, null],\n"
      "  \"big\": 99999999999999999999\n}";
  mapopt__json *v;
  assert_int_equal(mapopt__json_parse(&a, "m.json", text, strlen(text), d, &v),
                   MAPOPT_OK);
  assert_int_equal(v->type, MAPOPT_JSON_OBJECT);
  const mapopt__json *nodes = mapopt__json_get(v, "nodes");
  assert_int_equal(nodes->type, MAPOPT_JSON_INT);
  assert_int_equal(nodes->u.num.i, 2);
  assert_int_equal(nodes->line, 2);
  assert_int_equal(nodes->col, 12);
  assert_int_equal(mapopt__json_get(v, "bw")->type, MAPOPT_JSON_REAL);
  assert_string_equal(mapopt__json_get(v, "s")->u.str.s, "a\xc3\xa9\n");
  const mapopt__json *l = mapopt__json_get(v, "l");
  assert_int_equal(l->u.arr.n, 5);
  assert_int_equal(l->u.arr.items[1]->u.num.i, INT64_MIN);
  assert_int_equal(l->u.arr.items[2]->type, MAPOPT_JSON_REAL);
  assert_int_equal(mapopt__json_get(v, "big")->type, MAPOPT_JSON_REAL);

  /* The validating reader: unknown keys and bad values are located. */
  mapopt__jr jr;
  mapopt__jr_init(&jr, "m.json", d);
  static const char *const allowed[] = {"nodes", "bw", "s", "l", NULL};
  assert_false(mapopt__jr_object(&jr, v, "machine", allowed));
  int64_t n = 0;
  assert_false(mapopt__jr_int(&jr, v, "bw", "machine", true, 0, 10, &n));
  assert_false(mapopt__jr_int(&jr, v, "gpus", "machine", true, 0, 10, &n));
  assert_true(mapopt__jr_int(&jr, v, "nodes", "machine", true, 1, 10, &n));
  assert_int_equal(n, 2);
  assert_int_equal(jr.status, MAPOPT_EINVAL);
  char buf[256];
  diag_text(d, 0, buf, sizeof buf);
  assert_string_equal(buf, "m.json:5:3: error: unknown key \"big\" in machine");
  diag_text(d, 1, buf, sizeof buf);
  assert_string_equal(buf, "m.json:3:9: error: \"bw\" in machine must be an "
                           "integer in [0, 10]");
  diag_text(d, 2, buf, sizeof buf);
  assert_string_equal(buf,
                      "m.json:1:1: error: missing key \"gpus\" in machine");

  /* Syntax errors. */
  static const struct {
    const char *text;
    const char *msg;
  } bad[] = {
      {"{\"a\": 1,}", "m.json:1:9: error: expected a key string in object, "
                      "got '}'"},
      {"{\"a\": 1, \"a\": 2}", "m.json:1:10: error: duplicate key \"a\" "
                               "(first at 1:2)"},
      {"[1 2]", "m.json:1:4: error: expected ',' or ']' in array, got '2'"},
      {"\n  \"abc", "m.json:2:3: error: unterminated string"},
      {"01", "m.json:1:1: error: leading zeros are not allowed in numbers"},
      {"", "m.json:1:1: error: unexpected end of file, expected a value"},
      {"{} x", "m.json:1:4: error: unexpected 'x' after the JSON value"},
      {"\"\\u0000\"", "m.json:1:2: error: \\u0000 is not allowed in strings"},
      {"tru", "m.json:1:1: error: invalid literal (expected true)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    mapopt_diags_clear(d);
    assert_int_equal(mapopt__json_parse(&a, "m.json", bad[i].text,
                                        strlen(bad[i].text), d, &v),
                     MAPOPT_EINVAL);
    diag_text(d, 0, buf, sizeof buf);
    assert_string_equal(buf, bad[i].msg);
  }
  /* Deep nesting is bounded. */
  char deep[2000];
  memset(deep, '[', sizeof deep - 1);
  deep[sizeof deep - 1] = '\0';
  mapopt_diags_clear(d);
  assert_int_equal(mapopt__json_parse(&a, "m.json", deep, strlen(deep), d, &v),
                   MAPOPT_EINVAL);
  mapopt__arena_destroy(&a);
  mapopt_diags_free(d);
  mapopt_ctx_free(ctx);
}

/* mapopt_suggest: close names by edit distance, case ignored, swaps one
 * edit; nothing for a valid name, a far one, or a name too short to tell. */
static void test_suggest(void **state) {
  (void)state;
  static const char *const names[] = {"stencil", "circuit", NULL,
                                      "merge",   "GPU",     "x"};
  const size_t n = sizeof names / sizeof names[0];
#define SUGGEST(s) mapopt_suggest(s, strlen(s), names, n)
  assert_string_equal(SUGGEST("stencl"), "stencil");   /* a letter dropped */
  assert_string_equal(SUGGEST("stencill"), "stencil"); /* one added */
  assert_string_equal(SUGGEST("circiut"), "circuit");  /* two swapped */
  assert_string_equal(SUGGEST("mrege"), "merge");
  assert_string_equal(SUGGEST("gpu"), "GPU"); /* case */
  assert_string_equal(SUGGEST("GPUU"), "GPU");
  assert_null(SUGGEST("stencil")); /* valid */
  assert_null(SUGGEST("pennant")); /* far */
  assert_null(SUGGEST("y"));       /* as many edits as letters */
  assert_null(SUGGEST("GPUUUU"));  /* 3 edits for 6 letters: too many */
  assert_null(mapopt_suggest("x", 0, names, n));
  assert_null(mapopt_suggest("x", 1, NULL, 0));
#undef SUGGEST
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_names),  cmocka_unit_test(test_arena),
      cmocka_unit_test(test_arena_large),   cmocka_unit_test(test_vec_strbuf),
      cmocka_unit_test(test_map),           cmocka_unit_test(test_heap_ties),
      cmocka_unit_test(test_heap_extremes), cmocka_unit_test(test_heap_queues),
      cmocka_unit_test(test_fifo),          cmocka_unit_test(test_rng),
      cmocka_unit_test(test_diags),         cmocka_unit_test(test_file_replace),
      cmocka_unit_test(test_json),          cmocka_unit_test(test_suggest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
