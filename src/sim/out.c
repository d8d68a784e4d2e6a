/*
 * Outputs of a simulation (docs/sim.md, "What comes out"): the raw log that
 * imitates a real run's output, the JSON report, and the Chrome trace-event
 * file that Perfetto opens. Floating point appears only here, printed with
 * fixed precision, so outputs stay byte-identical across runs and platforms.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "sim/engine.h"

/* ---- raw log ------------------------------------------------------------- */

mapopt_status mapopt__sim_write_log(sim_t *s, mapopt_sim_result *res) {
  const mapopt_machine *m = s->m;
  const mapopt_app_run *run = s->run;
  mapopt__strbuf *b = &s->log;
  mapopt__sb_printf(
      b,
      "[mapopt-sim] machine %s: %" PRId64 " node(s), %" PRId64 " GPU, %" PRId64
      " CPU, %" PRId64 " OMP, %" PRId64 " UTIL per node\n",
      m->name ? m->name : "machine", m->nodes, m->procs[MAPOPT_PROC_GPU].count,
      m->procs[MAPOPT_PROC_CPU].count, m->procs[MAPOPT_PROC_OMP].count,
      m->util_count);
  mapopt__sb_printf(b,
                    "[mapopt-sim] app %s(%s): %" PRId64
                    " launches/iteration, warm-up %" PRId64 ", timed %" PRId64
                    "\n",
                    run->name, run->size ? run->size : "custom",
                    s->plan->launches_per_iteration, run->iterations_warmup,
                    run->iterations_timed);
  mapopt__sb_printf(b, "[mapopt-sim] seed %" PRIu64 "\n", s->opts->seed);
  if (run->nparams) {
    mapopt__sb_puts(b, "[mapopt-sim] params");
    for (size_t i = 0; i < run->nparams; i++)
      mapopt__sb_printf(b, " %s=%" PRId64, run->param_names[i],
                        run->param_values[i]);
    mapopt__sb_putc(b, '\n');
  }
  const char *style = run->log_style ? run->log_style : "";
  if (run->log_settings)
    /* The settings line the application prints first (docs/sim.md, "The raw
     * log"), which the model's "log_settings" spells out. */
    mapopt__sb_printf(b, "%s\n", run->log_settings);
  if (res->error != MAPOPT_SIM_NONE) {
    mapopt__sb_printf(b, "%s\n", res->error_text ? res->error_text : "error");
    mapopt__sb_printf(b, "[mapopt-sim] error class %s at t=%.6f s\n",
                      mapopt_sim_error_name(res->error),
                      (double)res->error_time_ns / 1e9);
  } else {
    double secs = (double)res->elapsed_ns / 1e9;
    if (strcmp(style, "distal") == 0) {
      mapopt__sb_printf(b,
                        "On %" PRId64 " nodes achieved GFLOPS per node: %f.\n",
                        m->nodes, res->metric_value);
    } else {
      mapopt__sb_printf(b, "ELAPSED TIME = %7.3f s\n", secs);
      if (strcmp(style, "circuit") == 0 || res->metric_name[0] == 'g')
        mapopt__sb_printf(b, "GFLOPS = %7.3f GFLOPS\n",
                          secs > 0
                              ? (double)run->flops_per_iteration *
                                    (double)run->iterations_timed / secs / 1e9
                              : 0.0);
    }
    /* The report's metric, so that the log says it too (the elapsed time
     * above is what the application prints). */
    if (res->metric_name[0] == 'g')
      mapopt__sb_printf(b,
                        "[mapopt-sim] metric gflops = %.3f %s (higher is "
                        "better)\n",
                        res->metric_value, res->metric_unit);
    else
      mapopt__sb_printf(b,
                        "[mapopt-sim] metric throughput = %.3f %s (1 / "
                        "elapsed time; higher is better)\n",
                        res->metric_value, res->metric_unit);
    int64_t peak = 0, cap = 0;
    for (size_t i = 0; i < res->nmems; i++)
      if (res->mems[i].kind == MAPOPT_MEM_FBMEM &&
          res->mems[i].peak_bytes >= peak) {
        peak = res->mems[i].peak_bytes;
        cap = res->mems[i].capacity;
      }
    mapopt__sb_printf(b, "[mapopt-sim] lower bound %.4f s (efficiency %.2f)",
                      (double)res->lower_bound_ns / 1e9, res->efficiency);
    if (cap > 0)
      mapopt__sb_printf(b, "; peak FBMEM %.2f GB of %.1f GB",
                        (double)peak / 1e9, (double)cap / 1e9);
    mapopt__sb_putc(b, '\n');
  }
  if (b->failed)
    return MAPOPT_ENOMEM;
  res->log = mapopt__strndup(s->ctx, b->data ? b->data : "", b->len);
  return res->log ? MAPOPT_OK : MAPOPT_ENOMEM;
}

/* ---- report -------------------------------------------------------------- */

static json_t *layout_json(const mapopt_layout *l) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s %s", l->soa == MAPOPT_LAYOUT_NO ? "AOS" : "SOA",
           l->c_order == MAPOPT_LAYOUT_YES ? "C_order" : "F_order");
  return json_string(buf);
}

static json_t *end_json(const mapopt_sim_end *e) {
  if (!e->kind)
    return json_null();
  json_t *o = json_object();
  json_object_set_new(o, "kind", json_string(e->kind));
  json_object_set_new(o, "node", json_integer(e->node));
  json_object_set_new(o, "rank", json_integer(e->rank));
  json_object_set_new(o, "index", json_integer(e->index));
  return o;
}

static json_t *waits_json(const mapopt_sim_result *r) {
  json_t *a = json_array();
  for (size_t i = 0; i < r->nwaits; i++) {
    const mapopt_sim_wait *w = &r->waits[i];
    json_t *e = json_object();
    json_object_set_new(e, "task", mapopt__json_text_or_null(w->task));
    json_object_set_new(e, "argument",
                        w->arg >= 0 ? json_integer(w->arg) : json_null());
    json_object_set_new(e, "names", mapopt__json_text_or_null(w->arg_name));
    json_object_set_new(e, "cause",
                        json_string(mapopt_sim_cause_name(w->cause)));
    json_object_set_new(
        e, "channel",
        mapopt__json_text_or_null(mapopt_sim_copy_kind_name(w->channel)));
    json_object_set_new(e, "other", mapopt__json_text_or_null(w->other));
    json_object_set_new(e, "pred", mapopt__json_text_or_null(w->pred));
    json_object_set_new(e, "from", end_json(&w->from));
    json_object_set_new(e, "to", end_json(&w->to));
    json_object_set_new(e, "exposed_ns", json_integer(w->exposed_ns));
    json_object_set_new(e, "waited_ns", json_integer(w->waited_ns));
    json_object_set_new(e, "count", json_integer(w->count));
    json_object_set_new(e, "copies", json_integer(w->copies));
    json_object_set_new(e, "bytes", json_integer(w->bytes));
    json_object_set_new(e, "pieces", json_integer(w->pieces));
    json_object_set_new(e, "spread", json_integer(w->spread));
    json_object_set_new(e, "last_contribution",
                        json_boolean(w->last_contribution));
    json_object_set_new(e, "first_reader", end_json(&w->first_reader));
    json_array_append_new(a, e);
  }
  return a;
}

mapopt_status mapopt_sim_report_json(mapopt_ctx *ctx,
                                     const mapopt_sim_result *r, bool stats,
                                     char **text) {
  json_t *o = json_object();
  json_object_set_new(o, "format", json_string(MAPOPT_SIM_REPORT_FORMAT));
  json_object_set_new(o, "status", json_string(r->error ? "error" : "ok"));
  json_object_set_new(o, "error_class",
                      json_string(mapopt_sim_error_name(r->error)));
  json_object_set_new(o, "error_text",
                      r->error_text ? json_string(r->error_text) : json_null());
  json_object_set_new(o, "error_time_ns", json_integer(r->error_time_ns));
  json_object_set_new(o, "elapsed_ns", json_integer(r->elapsed_ns));
  json_object_set_new(o, "iterations_timed", json_integer(r->iterations_timed));
  json_object_set_new(o, "iterations_warmup",
                      json_integer(r->iterations_warmup));
  json_t *metric = json_object();
  char num[64];
  snprintf(num, sizeof num, "%.6f", r->metric_value);
  json_object_set_new(metric, "name", json_string(r->metric_name));
  json_object_set_new(metric, "value", json_real(strtod(num, NULL)));
  json_object_set_new(metric, "unit", json_string(r->metric_unit));
  json_object_set_new(o, "metric", metric);
  json_t *procs = json_array();
  for (size_t i = 0; i < r->nprocs; i++) {
    const mapopt_sim_proc_stats *p = &r->procs[i];
    json_t *e = json_object();
    json_object_set_new(e, "node", json_integer(p->node));
    json_object_set_new(e, "rank", json_integer(p->rank));
    json_object_set_new(e, "kind", json_string(p->kind));
    json_object_set_new(e, "index", json_integer(p->index));
    json_object_set_new(e, "busy_ns", json_integer(p->busy_ns));
    json_object_set_new(e, "tasks", json_integer(p->tasks));
    snprintf(num, sizeof num, "%.6f",
             r->elapsed_ns ? (double)p->busy_ns / (double)r->elapsed_ns : 0.0);
    json_object_set_new(e, "utilization", json_real(strtod(num, NULL)));
    json_array_append_new(procs, e);
  }
  json_object_set_new(o, "processors", procs);
  json_t *copies = json_object();
  for (int k = 0; k < MAPOPT_SIM_COPY_KINDS; k++) {
    json_t *e = json_object();
    json_object_set_new(e, "bytes", json_integer(r->copies[k].bytes));
    json_object_set_new(e, "count", json_integer(r->copies[k].count));
    json_object_set_new(e, "busy_ns", json_integer(r->copies[k].busy_ns));
    json_object_set_new(copies, mapopt_sim_copy_kind_name(k), e);
  }
  json_object_set_new(o, "copies", copies);
  json_t *mems = json_array();
  for (size_t i = 0; i < r->nmems; i++) {
    const mapopt_sim_mem_stats *m = &r->mems[i];
    json_t *e = json_object();
    json_object_set_new(e, "node", json_integer(m->node));
    json_object_set_new(e, "rank", json_integer(m->rank));
    json_object_set_new(e, "kind", json_string(mapopt_shape_mem_name(m->kind)));
    json_object_set_new(e, "index", json_integer(m->index));
    json_object_set_new(e, "capacity", json_integer(m->capacity));
    json_object_set_new(e, "peak_bytes", json_integer(m->peak_bytes));
    json_object_set_new(e, "peak_instances", json_integer(m->peak_instances));
    json_array_append_new(mems, e);
  }
  json_object_set_new(o, "memories", mems);
  json_t *cp = json_object();
  json_object_set_new(cp, "length_ns",
                      json_integer(r->critical_path.length_ns));
  json_object_set_new(cp, "compute_ns",
                      json_integer(r->critical_path.compute_ns));
  json_object_set_new(cp, "copy_ns", json_integer(r->critical_path.copy_ns));
  json_object_set_new(cp, "runtime_ns",
                      json_integer(r->critical_path.runtime_ns));
  json_object_set_new(cp, "queue_ns", json_integer(r->critical_path.queue_ns));
  json_object_set_new(cp, "backpressure_ns",
                      json_integer(r->critical_path.backpressure_ns));
  json_t *segs = json_array();
  for (size_t i = 0; i < r->critical_path.nsegments; i++) {
    const mapopt_sim_segment *g = &r->critical_path.segments[i];
    json_t *e = json_object();
    json_object_set_new(e, "kind", json_string(g->kind));
    json_object_set_new(e, "name", json_string(g->name));
    json_object_set_new(e, "start_ns", json_integer(g->start_ns));
    json_object_set_new(e, "duration_ns", json_integer(g->duration_ns));
    json_array_append_new(segs, e);
  }
  json_object_set_new(cp, "segments", segs);
  json_object_set_new(o, "critical_path", cp);
  json_object_set_new(o, "waits", waits_json(r));
  json_t *top = json_array();
  for (size_t i = 0; i < r->ntop; i++) {
    const mapopt_sim_task_stats *t = &r->top_tasks[i];
    json_t *e = json_object();
    json_object_set_new(e, "task", json_string(t->task));
    json_object_set_new(e, "kind",
                        json_string(mapopt_shape_proc_name(t->kind)));
    json_object_set_new(e, "points", json_integer(t->points));
    json_object_set_new(e, "busy_ns", json_integer(t->busy_ns));
    json_object_set_new(e, "mean_ns",
                        json_integer(t->points ? t->busy_ns / t->points : 0));
    json_object_set_new(e, "max_ns", json_integer(t->max_ns));
    json_t *variants = json_array();
    for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
      if (t->variant_kinds >> k & 1u)
        json_array_append_new(
            variants, json_string(mapopt_shape_proc_name((mapopt_proc_kind)k)));
    json_object_set_new(e, "variants", variants);
    json_object_set_new(e, "index_launch", json_boolean(t->is_index));
    json_object_set_new(e, "processors_used", json_integer(t->procs_used));
    json_object_set_new(e, "busiest_processor_ns",
                        json_integer(t->proc_max_ns));
    json_object_set_new(e, "overhead_ns", json_integer(t->overhead_ns));
    json_object_set_new(e, "compute_ns", json_integer(t->compute_ns));
    json_object_set_new(e, "memory_ns", json_integer(t->memory_ns));
    json_object_set_new(e, "wait_data_ns", json_integer(t->wait_data_ns));
    json_object_set_new(e, "wait_processor_ns", json_integer(t->wait_proc_ns));
    json_t *reqs = json_array();
    for (int q = 0; q < t->nreqs; q++) {
      const mapopt_sim_req_stats *rq = &t->reqs[q];
      json_t *x = json_object();
      json_object_set_new(x, "index", json_integer(rq->index));
      json_object_set_new(x, "names", json_string(rq->name ? rq->name : ""));
      json_object_set_new(x, "memory",
                          json_string(mapopt_shape_mem_name(rq->memory)));
      json_object_set_new(x, "layout", layout_json(&rq->layout));
      json_object_set_new(x, "mem_ns", json_integer(rq->mem_ns));
      json_object_set_new(x, "access_ns", json_integer(rq->access_ns));
      json_t *cin = json_object();
      for (int mk = 0; mk < MAPOPT_MEM_KIND_COUNT; mk++)
        if (rq->copy_in_bytes[mk])
          json_object_set_new(cin, mapopt_shape_mem_name((mapopt_mem_kind)mk),
                              json_integer(rq->copy_in_bytes[mk]));
      json_object_set_new(x, "copy_in_bytes", cin);
      json_object_set_new(x, "privilege",
                          json_string(mapopt_app_priv_name(rq->priv)));
      json_object_set_new(x, "fields", json_integer(rq->fields));
      json_object_set_new(x, "region_fields", json_integer(rq->region_fields));
      json_object_set_new(x, "layout_ppm", json_integer(rq->layout_ppm));
      json_t *chan = json_object();
      for (int ck = 0; ck < MAPOPT_SIM_COPY_KINDS; ck++)
        if (rq->copy_in_channel_bytes[ck])
          json_object_set_new(chan, mapopt_sim_copy_kind_name(ck),
                              json_integer(rq->copy_in_channel_bytes[ck]));
      json_object_set_new(x, "copy_in_channels", chan);
      json_t *prod = json_null();
      if (rq->producer) {
        prod = json_object();
        json_object_set_new(prod, "task", json_string(rq->producer));
        json_object_set_new(
            prod, "kind",
            json_string(mapopt_shape_proc_name(rq->producer_kind)));
        json_object_set_new(prod, "bytes", json_integer(rq->producer_bytes));
      }
      json_object_set_new(x, "producer", prod);
      json_object_set_new(x, "instance_bytes",
                          json_integer(rq->instance_bytes));
      json_array_append_new(reqs, x);
    }
    json_object_set_new(e, "requirements", reqs);
    json_array_append_new(top, e);
  }
  json_object_set_new(o, "top_tasks", top);
  json_object_set_new(o, "lower_bound_ns", json_integer(r->lower_bound_ns));
  snprintf(num, sizeof num, "%.6f", r->efficiency);
  json_object_set_new(o, "efficiency", json_real(strtod(num, NULL)));
  json_object_set_new(o, "events", json_integer(r->events));
  if (stats)
    json_object_set_new(o, "sim_wall_us", json_integer(r->sim_wall_us));
  return mapopt__json_write(ctx, o, text);
}

/* ---- trace --------------------------------------------------------------- */

/*
 * The trace (docs/sim.md, "The trace"): one process per address space
 * ("node N", or "node N rank R" when a node has several ranks), one thread
 * per processor ("GPU 0", "UTIL 1") and per copy port ("GPU 0 peer link
 * out", "network in"; a node's ports are in its process, or in a process
 * "node N copies" of their own when the node has several ranks). Only
 * processors and ports that did something get a thread. Tasks, the
 * runtime's launch and mapping work (on the UTIL processors) and copies
 * are slices; every copy names the task and region argument it feeds.
 * Flow events draw the dependence chain: from the task that produced a
 * copy's data to the copy, from the copy to the task it feeds, and from
 * the predecessor a task waited for last to the task.
 */
typedef struct trace_w {
  sim_t *s;
  mapopt__strbuf b;
  bool first;
  int64_t events, flows;
  uint8_t *proc_used, *port_used, *pid_used;
} trace_w;

enum { TRACE_CAP = 2000000 };

static void us(mapopt__strbuf *b, int64_t ns) {
  mapopt__sb_printf(b, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

/* Starts the next event of the array: a separator, then its first bytes. */
static void ev_open(trace_w *w, const char *ph) {
  mapopt__sb_puts(&w->b, w->first ? "" : ",\n");
  w->first = false;
  mapopt__sb_printf(&w->b, "{\"ph\": \"%s\"", ph);
  w->events++;
}

/* Where a processor's and a port's events go. */
static int64_t proc_pid(const trace_w *w, int64_t p) {
  return w->s->procs[p].as;
}
static int64_t port_pid(const trace_w *w, int64_t k) {
  const sim_t *s = w->s;
  return s->ranks == 1 ? s->ports[k].node : s->nas + s->ports[k].node;
}
static int64_t port_tid(const trace_w *w, int64_t k) {
  return w->s->nprocs + k;
}

static void at(trace_w *w, int64_t pid, int64_t tid, int64_t ts) {
  mapopt__sb_printf(
      &w->b, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", pid,
      tid);
  us(&w->b, ts);
  w->pid_used[pid] = 1;
}

/* A task op's slice is on its processor, from start to end. */
static bool has_slice(const sim_t *s, int64_t op) {
  return op >= 0 && s->run->ops[op].kind == MAPOPT_OP_TASK &&
         s->ops[op].state >= OS_EXECUTED && s->ops[op].proc >= 0;
}

/* The flow event of phase ph ("s" or "f") id at ts of thread (pid, tid):
 * an "s" binds to the slice around it, an "f" (binding point "e") too.
 * A link of the critical path is named so, the others "dependence". */
static void flow(trace_w *w, const char *ph, int64_t id, bool critical,
                 int64_t pid, int64_t tid, int64_t ts) {
  ev_open(w, ph);
  mapopt__sb_printf(&w->b,
                    ", \"name\": \"%s\", \"cat\": \"flow\", "
                    "\"id\": %" PRId64 "%s",
                    critical ? "critical path" : "dependence", id,
                    ph[0] == 'f' ? ", \"bp\": \"e\"" : "");
  at(w, pid, tid, ts);
  mapopt__sb_putc(&w->b, '}');
}

/* ... at op's slice, and at copy c's. */
static void flow_at_task(trace_w *w, const char *ph, int64_t id, bool critical,
                         int64_t op) {
  const sim_op *o = &w->s->ops[op];
  flow(w, ph, id, critical, proc_pid(w, o->proc), o->proc, o->start_at);
}
static void flow_at_copy(trace_w *w, const char *ph, int64_t id, bool critical,
                         const sim_copy *c) {
  flow(w, ph, id, critical, port_pid(w, c->ports[0]), port_tid(w, c->ports[0]),
       c->start_at);
}

static bool op_on_path(const sim_t *s, int64_t op) {
  return s->on_path_op && op >= 0 && s->on_path_op[op];
}
static bool copy_on_path(const sim_t *s, const sim_copy *c) {
  return s->on_path_copy && s->on_path_copy[c - copy_at((sim_t *)s, 0)];
}

/* "FBMEM 3 of node 0" for memory m. */
static void mem_words(trace_w *w, int64_t m) {
  const sim_mem *mm = &w->s->mems[m];
  mapopt__sb_printf(&w->b, "%s %" PRId64 " of node %" PRId64,
                    mapopt_shape_mem_name(mm->kind), mm->index, mm->node);
}

/* The "wait" argument of a task's slice: how long it waited after its
 * last predecessor completed, and on what most (mapopt__sim_op_wait). */
static void wait_arg(trace_w *w, int64_t op) {
  sim_op_wait ow;
  mapopt__sim_op_wait(w->s, op, &ow);
  if (ow.total_ns <= 0)
    return;
  mapopt__sb_puts(&w->b, ", \"wait\": {\"us\": ");
  us(&w->b, ow.total_ns); /* microseconds, as the trace's other times */
  if (ow.cause >= 0) {
    mapopt__sb_printf(&w->b, ", \"most_on\": \"%s\", \"most_us\": ",
                      mapopt_sim_cause_name((mapopt_sim_cause)ow.cause));
    us(&w->b, ow.ns);
    const mapopt_app_req *rq =
        ow.arg >= 0 ? &w->s->run->ops[op].reqs[ow.arg] : NULL;
    if (rq)
      mapopt__sb_printf(&w->b, ", \"argument\": %d, \"region\": \"%s\"", ow.arg,
                        rq->nnames ? rq->names[0] : "");
    if (ow.cause == MAPOPT_SIM_CAUSE_PROCESSOR && ow.to >= 0) {
      const sim_op *o = &w->s->ops[op];
      if (o->behind >= 0)
        mapopt__sb_printf(&w->b, ", \"behind_uid\": %" PRId64,
                          (int64_t)o->behind);
    } else if (ow.from >= 0) {
      mapopt__sb_puts(&w->b, ", \"from\": \"");
      mem_words(w, ow.from);
      mapopt__sb_puts(&w->b, "\", \"to\": \"");
      mem_words(w, ow.to);
      mapopt__sb_putc(&w->b, '"');
    }
  }
  mapopt__sb_putc(&w->b, '}');
}

/* ", \"point\": [i, j]" for an index point. */
static void point_arg(trace_w *w, const mapopt_app_op *ao) {
  if (!ao->is_index)
    return;
  mapopt__sb_puts(&w->b, ", \"point\": [");
  for (int d = 0; d < ao->dims; d++)
    mapopt__sb_printf(&w->b, d ? ", %" PRId64 : "%" PRId64, ao->point[d]);
  mapopt__sb_putc(&w->b, ']');
}

static void task_slice(trace_w *w, int64_t i) {
  const sim_t *s = w->s;
  const sim_op *o = &s->ops[i];
  const mapopt_app_op *ao = &s->run->ops[i];
  ev_open(w, "X");
  mapopt__sb_printf(&w->b, ", \"name\": \"%s\", \"cat\": \"task\"",
                    s->run->tasks[ao->task].name);
  at(w, proc_pid(w, o->proc), o->proc, o->start_at);
  w->proc_used[o->proc] = 1;
  mapopt__sb_puts(&w->b, ", \"dur\": ");
  us(&w->b, o->end_at - o->start_at);
  mapopt__sb_printf(
      &w->b, ", \"args\": {\"uid\": %" PRId64 ", \"iteration\": %" PRId64, i,
      ao->timing.iteration);
  point_arg(w, ao);
  mapopt__sb_printf(&w->b, ", \"variant\": \"%s\", \"memories\": [",
                    mapopt_shape_proc_name((mapopt_proc_kind)o->kind));
  for (size_t r = 0; o->inst && r < ao->nreqs; r++) {
    const char *mk = "VIRTUAL";
    if (o->inst[r] >= 0) {
      const sim_inst *in = &MAPOPT__VEC_AT(&s->insts, sim_inst, o->inst[r]);
      mk = mapopt_shape_mem_name(s->mems[in->mem].kind);
    }
    mapopt__sb_printf(&w->b, "%s\"%s\"", r ? ", " : "", mk);
  }
  mapopt__sb_putc(&w->b, ']');
  wait_arg(w, i);
  if (op_on_path(s, i))
    mapopt__sb_puts(&w->b, ", \"critical_path\": true");
  mapopt__sb_puts(&w->b, "}}");
}

static void util_slice(trace_w *w, const util_job *j) {
  const sim_t *s = w->s;
  ev_open(w, "X");
  mapopt__sb_printf(&w->b, ", \"name\": \"%s %s\", \"cat\": \"runtime\"",
                    j->what == UTIL_LAUNCH ? "launch" : "map",
                    task_name(s, j->op));
  at(w, proc_pid(w, j->proc), j->proc, j->start);
  w->proc_used[j->proc] = 1;
  mapopt__sb_puts(&w->b, ", \"dur\": ");
  us(&w->b, j->end - j->start);
  mapopt__sb_printf(&w->b, ", \"args\": {\"uid\": %" PRId64, j->op);
  if (j->what == UTIL_MAP) /* a launch's work is for all its points */
    point_arg(w, &s->run->ops[j->op]);
  mapopt__sb_puts(&w->b, "}}");
}

/* A copy's slice on its first port, tagged with the task and argument it
 * feeds and the task that produced its data; then its flows. */
static void copy_slice(trace_w *w, const sim_copy *c) {
  const sim_t *s = w->s;
  const mapopt_app_op *ao = &s->run->ops[c->op];
  const mapopt_app_req *rq = &ao->reqs[c->req];
  int64_t prod = c->kind == COPY_FOLD && c->reducer >= 0
                     ? c->reducer
                     : mapopt__sim_copy_producer(s, c);
  ev_open(w, "X");
  mapopt__sb_printf(&w->b, ", \"name\": \"%s\", \"cat\": \"copy\"",
                    mapopt_sim_copy_kind_name(c->kind));
  at(w, port_pid(w, c->ports[0]), port_tid(w, c->ports[0]), c->start_at);
  w->port_used[c->ports[0]] = 1;
  mapopt__sb_puts(&w->b, ", \"dur\": ");
  us(&w->b, c->end_at - c->start_at);
  mapopt__sb_printf(
      &w->b,
      ", \"args\": {\"bytes\": %" PRId64 ", \"src\": \"%s\", \"dst\": \"%s\", "
      "\"channel\": \"%s\", \"task\": \"%s\", \"uid\": %" PRId64,
      c->bytes,
      c->src_mem >= 0 ? mapopt_shape_mem_name(s->mems[c->src_mem].kind)
                      : "fill",
      mapopt_shape_mem_name(s->mems[c->dst_mem].kind),
      mapopt_sim_copy_kind_name(c->kind), task_name(s, c->op), c->op);
  point_arg(w, ao);
  mapopt__sb_printf(&w->b, ", \"argument\": %" PRId64 ", \"region\": \"%s\"",
                    c->req, rq->nnames ? rq->names[0] : "");
  if (prod >= 0)
    mapopt__sb_printf(&w->b,
                      ", \"producer\": \"%s\", \"producer_uid\": %" PRId64,
                      task_name(s, prod), prod);
  bool critical = copy_on_path(s, c);
  if (critical)
    mapopt__sb_puts(&w->b, ", \"critical_path\": true");
  mapopt__sb_puts(&w->b, "}}");
  if (has_slice(s, prod)) {
    bool both = critical && op_on_path(s, prod);
    flow_at_task(w, "s", ++w->flows, both, prod);
    flow_at_copy(w, "f", w->flows, both, c);
  }
  if (has_slice(s, c->op)) {
    bool both = critical && op_on_path(s, c->op);
    flow_at_copy(w, "s", ++w->flows, both, c);
    flow_at_task(w, "f", w->flows, both, c->op);
  }
}

/* The process and thread names, for what was used only. */
static void names(trace_w *w) {
  const sim_t *s = w->s;
  for (int64_t pid = 0; pid < s->nas + s->m->nodes; pid++) {
    if (!w->pid_used[pid])
      continue;
    char name[96];
    if (pid >= s->nas)
      snprintf(name, sizeof name, "node %" PRId64 " copies", pid - s->nas);
    else if (s->ranks > 1)
      snprintf(name, sizeof name, "node %" PRId64 " rank %" PRId64,
               pid / s->ranks, pid % s->ranks);
    else
      snprintf(name, sizeof name, "node %" PRId64, pid);
    ev_open(w, "M");
    mapopt__sb_printf(&w->b,
                      ", \"name\": \"process_name\", \"pid\": %" PRId64
                      ", \"args\": {\"name\": \"%s\"}}",
                      pid, name);
    ev_open(w, "M");
    mapopt__sb_printf(&w->b,
                      ", \"name\": \"process_sort_index\", \"pid\": %" PRId64
                      ", \"args\": {\"sort_index\": %" PRId64 "}}",
                      pid, pid);
  }
  static const char *const cls[] = {"CPU", "GPU", "OMP", "UTIL"};
  /* Threads sort GPUs, CPUs, OMPs, UTILs, then ports. */
  static const int order[] = {1, 0, 2, 3};
  for (int64_t p = 0; p < s->nprocs; p++) {
    const sim_proc *sp = &s->procs[p];
    if (!w->proc_used[p])
      continue;
    ev_open(w, "M");
    mapopt__sb_printf(&w->b,
                      ", \"name\": \"thread_name\", \"pid\": %" PRId64
                      ", \"tid\": %" PRId64
                      ", \"args\": {\"name\": \"%s %" PRId64 "\"}}",
                      sp->as, p, cls[sp->cls], sp->local);
    ev_open(w, "M");
    mapopt__sb_printf(&w->b,
                      ", \"name\": \"thread_sort_index\", \"pid\": %" PRId64
                      ", \"tid\": %" PRId64
                      ", \"args\": {\"sort_index\": %" PRId64 "}}",
                      sp->as, p, order[sp->cls] * s->nprocs + p);
  }
  for (int64_t k = 0; k < s->nports; k++) {
    if (!w->port_used[k])
      continue;
    ev_open(w, "M");
    mapopt__sb_printf(&w->b,
                      ", \"name\": \"thread_name\", \"pid\": %" PRId64
                      ", \"tid\": %" PRId64 ", \"args\": {\"name\": \"%s\"}}",
                      port_pid(w, k), port_tid(w, k), s->ports[k].name);
    ev_open(w, "M");
    mapopt__sb_printf(&w->b,
                      ", \"name\": \"thread_sort_index\", \"pid\": %" PRId64
                      ", \"tid\": %" PRId64
                      ", \"args\": {\"sort_index\": %" PRId64 "}}",
                      port_pid(w, k), port_tid(w, k), 4 * s->nprocs + k);
  }
}

mapopt_status mapopt__sim_write_trace(sim_t *s, mapopt_sim_result *res) {
  trace_w w = {.s = s, .first = true};
  mapopt__sb_init(&w.b, s->ctx);
  w.proc_used = mapopt__arena_zalloc(&s->arena, (size_t)s->nprocs + 1);
  w.port_used = mapopt__arena_zalloc(&s->arena, (size_t)s->nports + 1);
  w.pid_used =
      mapopt__arena_zalloc(&s->arena, (size_t)(s->nas + s->m->nodes) + 1);
  if (!w.proc_used || !w.port_used || !w.pid_used)
    return MAPOPT_ENOMEM;
  mapopt__sb_puts(&w.b, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
  const mapopt_app_run *run = s->run;
  bool cut = false;
  for (int64_t i = 0; i < run->nops && !cut; i++) {
    if (!has_slice(s, i))
      continue;
    task_slice(&w, i);
    /* The predecessor it waited for last, when that is a task. */
    if (has_slice(s, s->ops[i].last_pred)) {
      bool both = op_on_path(s, i) && op_on_path(s, s->ops[i].last_pred);
      flow_at_task(&w, "s", ++w.flows, both, s->ops[i].last_pred);
      flow_at_task(&w, "f", w.flows, both, i);
    }
    cut = w.events >= TRACE_CAP;
  }
  for (size_t k = 0; k < s->util_jobs.len && !cut; k++) {
    util_slice(&w, &MAPOPT__VEC_AT(&s->util_jobs, util_job, k));
    cut = w.events >= TRACE_CAP;
  }
  for (size_t k = 0; k < s->copies.len && !cut; k++) {
    const sim_copy *c = copy_at(s, (int64_t)k);
    if (c->nports == 0 || c->end_at <= 0)
      continue;
    copy_slice(&w, c);
    cut = w.events >= TRACE_CAP;
  }
  /* Memory use over time: one counter row per memory. */
  for (size_t k = 0; k < s->mem_log.len && !cut; k++) {
    const int64_t *e = (const int64_t *)s->mem_log.data + 3 * k;
    const sim_mem *m = &s->mems[e[1]];
    int64_t pid = m->node * s->ranks + (m->rank > 0 ? m->rank : 0);
    ev_open(&w, "C");
    mapopt__sb_printf(
        &w.b, ", \"name\": \"%s %" PRId64 "\", \"pid\": %" PRId64 ", \"ts\": ",
        mapopt_shape_mem_name(m->kind), m->index, pid);
    w.pid_used[pid] = 1;
    us(&w.b, e[0]);
    mapopt__sb_printf(&w.b, ", \"args\": {\"bytes\": %" PRId64 "}}", e[2]);
    cut = w.events >= TRACE_CAP;
  }
  /* Global instant markers: the timed window(s), and a cut trace. */
  if (cut) {
    ev_open(&w, "i");
    mapopt__sb_puts(&w.b, ", \"s\": \"g\", \"name\": \"trace truncated at "
                          "2000000 events\", \"pid\": 0, \"tid\": 0, "
                          "\"ts\": 0}");
  }
  for (int64_t k = 0; k < s->nwin; k++) {
    static const char *const what[] = {"timed window starts",
                                       "timed window ends"};
    int64_t t[2] = {s->win_lo[k], s->win_hi[k]};
    for (int e = 0; e < 2; e++) {
      ev_open(&w, "i");
      mapopt__sb_printf(&w.b,
                        ", \"s\": \"g\", \"name\": \"%s\", \"pid\": 0, "
                        "\"tid\": 0, \"ts\": ",
                        what[e]);
      us(&w.b, t[e]);
      mapopt__sb_putc(&w.b, '}');
    }
  }
  w.pid_used[0] = 1;
  names(&w);
  mapopt__sb_puts(&w.b, "\n]}\n");
  res->trace = mapopt__sb_take(&w.b, NULL);
  return res->trace ? MAPOPT_OK : MAPOPT_ENOMEM;
}
