/*
 * Cost formulas of the simulator (docs/sim.md, "How it models a run"): the
 * duration of a copy, the execution time of a leaf task on a processor, the
 * layout factor of a requirement, and the best-case cost c(p, k) that the lower
 * bound (bound.c) is built from.
 *
 * Everything is integer: rates are MB/s, MFLOP/s and accesses per ms,
 * factors are parts per million, and each term is rounded up separately
 * before the terms are summed, so the engine and the bound agree to the
 * nanosecond on every platform. A product that would overflow int64
 * saturates at INT64_MAX, and INT64_MAX is sticky: a saturated operand
 * stays saturated through later steps, so a saturated duration always
 * exceeds any time limit.
 *
 * This file chooses nothing: which memory, layout and processor an op gets
 * is the engine's business; these functions only price the choice.
 */
#include "sim/engine.h"

#include "mapopt/app.h"
#include "mapopt/machine.h"

#define PPM INT64_C(1000000)

int64_t mapopt__muldiv_ceil(int64_t a, int64_t b, int64_t c) {
  if (a <= 0 || b <= 0)
    return 0;
  if (a == INT64_MAX || b == INT64_MAX || c <= 0)
    return INT64_MAX;
  int64_t p;
  if (mapopt__mul_ovf(a, b, &p))
    return INT64_MAX;
  return p / c + (p % c != 0);
}

/* The nearest integer to a * b / c (halves up) for non-negative operands,
 * saturating at INT64_MAX. */
static int64_t muldiv_round(int64_t a, int64_t b, int64_t c) {
  if (a <= 0 || b <= 0)
    return 0;
  if (c <= 0)
    return INT64_MAX;
  int64_t p;
  if (mapopt__mul_ovf(a, b, &p))
    return INT64_MAX;
  return p / c + (p % c >= c - p % c);
}

int64_t mapopt__sim_copy_ns(int64_t bytes, int64_t bw_mbps, int64_t lat_ns) {
  return mapopt__sat_add(lat_ns, mapopt__muldiv_ceil(bytes, 1000, bw_mbps));
}

/* The peak a variant computes at on processors of kind pk. */
static int64_t peak_mflops(const mapopt_machine_procs *pk,
                           const mapopt_app_variant *v) {
  if (v->f32)
    return pk->mflops_f32;
  if (v->matrix && pk->mflops_f64_matrix > 0)
    return pk->mflops_f64_matrix;
  return pk->mflops_f64;
}

/* The flop term C of the roofline. */
static int64_t flop_ns(int64_t flops, int64_t peak, int64_t eff_ppm) {
  return mapopt__muldiv_ceil(mapopt__muldiv_ceil(flops, 1000, peak), PPM,
                             eff_ppm);
}

/* The bandwidth term M_r of the roofline. */
static int64_t mem_term_ns(int64_t bytes, int64_t bw_mbps, int64_t l_ppm,
                           int64_t eff_ppm) {
  int64_t t = mapopt__muldiv_ceil(bytes, 1000, bw_mbps);
  t = mapopt__muldiv_ceil(t, l_ppm, PPM);
  return mapopt__muldiv_ceil(t, PPM, eff_ppm);
}

/* The access term G_r: gathers and atomics rounded separately. */
static int64_t access_term_ns(const mapopt_app_req *req,
                              const mapopt_affinity *e) {
  return mapopt__sat_add(
      mapopt__muldiv_ceil(req->gathers, PPM, e->gather_per_ms),
      mapopt__muldiv_ceil(req->atomics, PPM, e->atomic_per_ms));
}

/* The bits of mask that name fields of region reg. */
static uint64_t region_fields(const mapopt_app_region *reg, uint64_t mask) {
  return reg->nfields >= 64 ? mask : mask & ((UINT64_C(1) << reg->nfields) - 1);
}

/* Bytes per element of the fields of region reg set in mask. */
static int64_t field_bytes(const mapopt_app_region *reg, uint64_t mask) {
  int64_t s = 0;
  for (uint64_t m = region_fields(reg, mask); m; m &= m - 1)
    s = mapopt__sat_add(s, reg->field_bytes[__builtin_ctzll(m)]);
  return s;
}

/* The integer square root of x >= 0. */
static int64_t isqrt(int64_t x) {
  int64_t r = 0;
  for (int64_t b = INT64_C(1) << 31; b; b >>= 1)
    if ((r + b) <= x / (r + b))
      r += b;
  return r;
}

/*
 * How many times a kernel streams a read-only operand that lives outside
 * its processor's own memory (a GPU reading ZCMEM): a kernel that uses
 * each element reuse times (a square matrix multiply's dimension) blocks
 * its operands in the processor's cache -- three square b x b blocks, b =
 * sqrt(cache / (3 x element bytes)) -- and so reads each input element
 * ceil(reuse / b) times from memory, while its output block stays in the
 * cache (it is read and written once). In its own memory that traffic is
 * part of the kernel's measured efficiency; over PCIe it is what the
 * kernel waits for. A streaming kernel (reuse 1) reads once.
 */
static int64_t remote_passes(const mapopt_machine_procs *pk,
                             const mapopt_app_region *reg, uint64_t fields,
                             int64_t reuse) {
  if (reuse <= 1)
    return 1;
  int64_t elem = field_bytes(reg, fields);
  int64_t b = isqrt(pk->cache_bytes / (3 * (elem > 0 ? elem : 1)));
  if (b < 1)
    b = 1;
  return reuse / b + (reuse % b != 0);
}

/* T = overhead + fixed + max(C, sum M) + sum G. */
static int64_t combine(int64_t overhead, int64_t fixed, int64_t c, int64_t msum,
                       int64_t gsum) {
  return mapopt__sat_add(
      mapopt__sat_add(mapopt__sat_add(overhead, fixed), c > msum ? c : msum),
      gsum);
}

/* The noise multiplier (`--noise`) applied to t. */
static int64_t apply_noise(int64_t t, int64_t noise_ppm, uint64_t seed,
                           int64_t op) {
  if (noise_ppm <= 0)
    return t;
  uint64_t state = seed ^ (uint64_t)op;
  uint64_t z = mapopt__splitmix64(&state);
  int64_t u = (int64_t)(z % (2 * (uint64_t)noise_ppm + 1)) - noise_ppm;
  int64_t factor = PPM + u;
  if (factor <= 0)
    return 0;
  return mapopt__muldiv_ceil(t, factor, PPM);
}

/* T without noise for a leaf variant v of in's op, with M_r and
 * G_r per requirement; parts when no memory is missing. *missing: some
 * requirement is in a memory the kind cannot reach (T is then INT64_MAX,
 * which the engine never lets happen: it rejects the mapping first). */
static int64_t leaf_ns(const mapopt__task_cost_in *in,
                       const mapopt_app_variant *v, int64_t *mem_ns,
                       int64_t *access_ns, mapopt__task_cost_parts *parts,
                       bool *missing) {
  const mapopt_app_op *op = &in->run->ops[in->op];
  const mapopt_machine_procs *pk = &in->machine->procs[v->kind];
  int64_t flops = op->flops ? op->flops[in->variant] : 0;
  int64_t fixed = op->fixed_ns ? op->fixed_ns[in->variant] : 0;
  int64_t reuse = op->reuse ? op->reuse[in->variant] : 1;
  int64_t c = flop_ns(flops, peak_mflops(pk, v), v->flops_eff_ppm);
  int64_t msum = 0, gsum = 0;
  *missing = false;
  for (size_t r = 0; r < op->nreqs; r++) {
    const mapopt_app_req *req = &op->reqs[r];
    mapopt_mem_kind mk = in->mems[r];
    int64_t m = INT64_MAX, g = INT64_MAX;
    if ((unsigned)mk < MAPOPT_MEM_KIND_COUNT &&
        in->machine->affinity[v->kind][mk].present) {
      const mapopt_affinity *e = &in->machine->affinity[v->kind][mk];
      int64_t l = in->layout_ppm ? in->layout_ppm[r] : PPM;
      int64_t bytes = req->bytes;
      if (v->kind == MAPOPT_PROC_GPU && mk != MAPOPT_MEM_FBMEM &&
          req->priv == MAPOPT_PRIV_RO) {
        int64_t passes = remote_passes(
            pk, &in->run->regions[req->piece->region], req->fields, reuse);
        if (mapopt__mul_ovf(bytes, passes, &bytes))
          bytes = INT64_MAX;
      }
      m = mem_term_ns(bytes, e->bw_mbps, l, v->mem_eff_ppm);
      g = access_term_ns(req, e);
    } else {
      *missing = true; /* the engine rejects this before pricing it */
    }
    if (mem_ns)
      mem_ns[r] = m;
    if (access_ns)
      access_ns[r] = g;
    msum = mapopt__sat_add(msum, m);
    gsum = mapopt__sat_add(gsum, g);
  }
  if (*missing)
    return INT64_MAX;
  if (parts)
    *parts = (mapopt__task_cost_parts){
        mapopt__sat_add(pk->overhead_ns, fixed), c >= msum ? c : 0,
        mapopt__sat_add(c >= msum ? 0 : msum, gsum)};
  return combine(pk->overhead_ns, fixed, c, msum, gsum);
}

/* The inner variant's price: the kind's inner overhead, nothing per
 * requirement. */
static int64_t inner_ns(const mapopt__task_cost_in *in,
                        const mapopt_machine_procs *pk, int64_t *mem_ns,
                        int64_t *access_ns, mapopt__task_cost_parts *parts) {
  const mapopt_app_op *op = &in->run->ops[in->op];
  for (size_t r = 0; r < op->nreqs; r++) {
    if (mem_ns)
      mem_ns[r] = 0;
    if (access_ns)
      access_ns[r] = 0;
  }
  if (parts)
    *parts = (mapopt__task_cost_parts){pk->inner_overhead_ns, 0, 0};
  return pk->inner_overhead_ns;
}

/*
 * T (docs/sim.md, "How it models a run") for one op on one processor kind, with
 * the memories and layout factors the engine chose. Inner variants take the
 * kind's inner overhead (their requirements are virtual: M_r = G_r = 0) and no
 * noise: the noise jitters the leaf formula's T, and the engine prices inner
 * tasks the same way.
 */
int64_t mapopt__sim_task_ns(const mapopt__task_cost_in *in, int64_t *mem_ns,
                            int64_t *access_ns,
                            mapopt__task_cost_parts *parts) {
  const mapopt_app_op *op = &in->run->ops[in->op];
  const mapopt_app_variant *v = &in->run->tasks[op->task].variants[in->variant];
  if (v->inner)
    return inner_ns(in, &in->machine->procs[v->kind], mem_ns, access_ns, parts);
  bool missing;
  int64_t t = leaf_ns(in, v, mem_ns, access_ns, parts, &missing);
  return missing ? INT64_MAX : apply_noise(t, in->noise_ppm, in->seed, in->op);
}

/* The inputs of in's leaf formula, as a memo keeps them. */
static mapopt__task_cost_req req_key(const mapopt__task_cost_in *in,
                                     const mapopt_app_req *req, size_t r) {
  return (mapopt__task_cost_req){
      in->mems[r],  in->layout_ppm ? in->layout_ppm[r] : PPM,
      req->bytes,   req->gathers,
      req->atomics, req->fields,
      req->priv,    req->piece->region};
}

static void memo_key(const mapopt__task_cost_in *in,
                     mapopt__task_cost_memo *key) {
  const mapopt_app_op *op = &in->run->ops[in->op];
  key->variant = in->variant;
  key->flops = op->flops ? op->flops[in->variant] : 0;
  key->fixed = op->fixed_ns ? op->fixed_ns[in->variant] : 0;
  key->reuse = op->reuse ? op->reuse[in->variant] : 1;
  key->nreqs = op->nreqs;
  for (size_t r = 0; r < op->nreqs; r++)
    key->reqs[r] = req_key(in, &op->reqs[r], r);
}

/* Whether in prices the same leaf formula as memo's last inputs. */
static bool memo_matches(const mapopt__task_cost_memo *memo,
                         const mapopt__task_cost_in *in) {
  const mapopt_app_op *op = &in->run->ops[in->op];
  if (!memo->valid || memo->variant != in->variant ||
      memo->nreqs != op->nreqs ||
      memo->flops != (op->flops ? op->flops[in->variant] : 0) ||
      memo->fixed != (op->fixed_ns ? op->fixed_ns[in->variant] : 0) ||
      memo->reuse != (op->reuse ? op->reuse[in->variant] : 1))
    return false;
  for (size_t r = 0; r < op->nreqs; r++) {
    const mapopt__task_cost_req *m = &memo->reqs[r];
    const mapopt_app_req *req = &op->reqs[r];
    if (m->mem != in->mems[r] ||
        m->ppm != (in->layout_ppm ? in->layout_ppm[r] : PPM) ||
        m->bytes != req->bytes || m->gathers != req->gathers ||
        m->atomics != req->atomics || m->fields != req->fields ||
        m->priv != req->priv || m->region != req->piece->region)
      return false;
  }
  return true;
}

int64_t mapopt__sim_task_ns_memo(mapopt__task_cost_memo *memo,
                                 const mapopt__task_cost_in *in,
                                 int64_t *mem_ns, int64_t *access_ns,
                                 mapopt__task_cost_parts *parts,
                                 int64_t *state) {
  const mapopt_app_op *op = &in->run->ops[in->op];
  const mapopt_app_variant *v = &in->run->tasks[op->task].variants[in->variant];
  if (state)
    *state = -1;
  if (v->inner || op->nreqs > MAPOPT__TASK_COST_MEMO_REQS)
    return mapopt__sim_task_ns(in, mem_ns, access_ns, parts);
  if (!memo_matches(memo, in)) {
    mapopt__task_cost_memo key;
    memo_key(in, &key);
    bool missing;
    key.t = leaf_ns(in, v, key.mem_ns, key.access_ns, &key.parts, &missing);
    if (missing) /* not kept: parts are undefined */
      return mapopt__sim_task_ns(in, mem_ns, access_ns, parts);
    key.valid = true;
    key.fills = memo->fills + 1;
    *memo = key;
  }
  if (state)
    *state = memo->fills;
  for (size_t r = 0; r < op->nreqs; r++) {
    if (mem_ns)
      mem_ns[r] = memo->mem_ns[r];
    if (access_ns)
      access_ns[r] = memo->access_ns[r];
  }
  if (parts)
    *parts = memo->parts;
  return apply_noise(memo->t, in->noise_ppm, in->seed, in->op);
}

/* The bytes per element a GPU moves reading the fields in mask of an AOS
 * instance whose elements span sectors: whole 32-byte sectors per field. */
static int64_t sector_bytes(const mapopt_app_region *reg, uint64_t mask) {
  enum { SECTOR = 32 };
  int64_t s = 0;
  for (uint64_t m = region_fields(reg, mask); m; m &= m - 1) {
    int64_t b = reg->field_bytes[__builtin_ctzll(m)];
    s = mapopt__sat_add(s, (b + SECTOR - 1) / SECTOR * SECTOR);
  }
  return s;
}

/*
 * L_r, the layout factor (docs/sim.md, "A GPU reads in 32-byte sectors"). Unset
 * layout components take their defaults (SOA, the app's default order),
 * although the engine passes resolved layouts.
 */
int64_t mapopt__sim_layout_ppm(const mapopt_app_run *run, int64_t op,
                               int variant, int r, const mapopt_layout *layout,
                               uint64_t fields_in_instance) {
  const mapopt_app_op *o = &run->ops[op];
  const mapopt_app_req *req = &o->reqs[r];
  const mapopt_app_region *reg = &run->regions[req->piece->region];
  const mapopt_app_variant *v = &run->tasks[o->task].variants[variant];
  int64_t l = PPM;
  /* One field: AOS is SOA. A > S (the instance lacks a field) cannot
   * happen for a mapped instance; it is priced as if it could not. The
   * sums are formed only for AOS, the rare case. */
  bool aos = layout->soa == MAPOPT_LAYOUT_NO && reg->nfields > 1;
  int64_t s = aos ? field_bytes(reg, fields_in_instance) : 0;
  int64_t a = aos ? field_bytes(reg, req->fields) : 0;
  if (aos && a > 0 && a < s) {
    if (v->kind == MAPOPT_PROC_GPU) {
      /* A GPU reads memory in 32-byte sectors. With the fields of an
       * element interleaved, the threads of a warp reading one field of
       * consecutive elements touch one sector per element once an element
       * spans a sector: each field read moves 32 B per element (whole
       * sectors of larger fields), never more than the element itself. */
      int64_t moved = sector_bytes(reg, req->fields);
      l = muldiv_round(moved < s ? moved : s, PPM, a);
    } else {
      /* min(1.5, 1 + 0.1 (S/A - 1)) = 1 + 0.1 (S - A) / A */
      l = PPM + muldiv_round(s - a, PPM / 10, a);
      if (l > PPM + PPM / 2)
        l = PPM + PPM / 2;
    }
  }
  bool c_order = layout->c_order == MAPOPT_LAYOUT_UNSET
                     ? run->default_c_order
                     : layout->c_order == MAPOPT_LAYOUT_YES;
  for (size_t i = 0; i < v->nprefers; i++) {
    const mapopt_app_layout_rule *p = &v->prefers[i];
    if (r >= MAPOPT_APP_MAX_ARGS || !(p->args >> r & 1) ||
        p->c_order == MAPOPT_LAYOUT_UNSET)
      continue;
    if ((p->c_order == MAPOPT_LAYOUT_YES) != c_order)
      l = muldiv_round(l, p->penalty_ppm, PPM);
  }
  return l;
}

/* Processors of kind k per address space (docs/machines.md, "Naming a machine":
 * ranks_per_node). */
static int64_t procs_per_rank(const mapopt_machine *m, int64_t ranks,
                              mapopt_proc_kind k) {
  int64_t n = m->procs[k].count;
  if (n <= 0 || ranks <= 1)
    return n > 0 ? n : 0;
  switch (k) {
  case MAPOPT_PROC_CPU:
    return n / ranks > 1 ? n / ranks : 1;
  case MAPOPT_PROC_OMP:
    return n >= ranks ? n / ranks : 0;
  default:
    return n / ranks;
  }
}

int64_t mapopt__sim_proc_total(const mapopt_machine *machine,
                               const mapopt_app_run *run, mapopt_proc_kind k) {
  if ((unsigned)k >= MAPOPT_PROC_KIND_COUNT || machine->nodes <= 0)
    return 0;
  int64_t ranks = mapopt__sim_ranks(machine, run);
  int64_t per = procs_per_rank(machine, ranks, k);
  int64_t n;
  if (mapopt__mul_ovf(per, ranks, &n) || mapopt__mul_ovf(n, machine->nodes, &n))
    return INT64_MAX;
  return n;
}

/*
 * The smallest layout factor any layout can give requirement r: 1, or less
 * if the variant declares a preference whose "penalty" is below 1. Floors
 * instead of rounding so the result never exceeds what the cost of a task
 * computes.
 */
static int64_t best_layout_ppm(const mapopt_app_variant *v, size_t r) {
  int64_t l = PPM;
  for (size_t i = 0; i < v->nprefers; i++) {
    const mapopt_app_layout_rule *p = &v->prefers[i];
    if (r < MAPOPT_APP_MAX_ARGS && (p->args >> r & 1) && p->penalty_ppm < PPM)
      l = p->penalty_ppm <= 0 ? 0 : l * p->penalty_ppm / PPM;
  }
  return l;
}

/*
 * c(p, k), the best-case cost of docs/sim.md, "The lower bound". Each
 * requirement gets, independently, the least M_r and the least G_r over the
 * memories kind k has affinity to -- the fastest memory (FB for a GPU, SOCKMEM
 * or SYSMEM for a CPU) when one memory is best at both, and never more than any
 * single memory would cost, so c is a lower bound on T whatever the mapping.
 */
/* c(p, k), or with requirement force (>= 0) in memory kind fmem: its M_r
 * and G_r are that memory's, -1 when k cannot reach it. */
static int64_t best_cost_in(const mapopt_machine *machine,
                            const mapopt_app_run *run, int64_t op,
                            mapopt_proc_kind k, int64_t force,
                            mapopt_mem_kind fmem) {
  const mapopt_app_op *o = &run->ops[op];
  if (o->kind != MAPOPT_OP_TASK || o->task < 0 ||
      mapopt__sim_proc_total(machine, run, k) <= 0)
    return -1;
  const mapopt_app_task *task = &run->tasks[o->task];
  int vi = -1;
  for (int i = 0; i < task->nvariants; i++)
    if (task->variants[i].kind == k) {
      vi = i;
      break;
    }
  if (vi < 0)
    return -1;
  const mapopt_app_variant *v = &task->variants[vi];
  const mapopt_machine_procs *pk = &machine->procs[k];
  if (v->inner)
    return pk->inner_overhead_ns;
  int64_t flops = o->flops ? o->flops[vi] : 0;
  int64_t fixed = o->fixed_ns ? o->fixed_ns[vi] : 0;
  int64_t c = flop_ns(flops, peak_mflops(pk, v), v->flops_eff_ppm);
  /* The memories kind k reaches, and the best bandwidth among them: M_r
   * only decreases as the bandwidth grows, so its least value is at the
   * best bandwidth; G_r mixes two rates and is taken memory by memory. */
  const mapopt_affinity *reach[MAPOPT_MEM_KIND_COUNT];
  int nreach = 0;
  int64_t best_bw = 0;
  for (int mk = 0; mk < MAPOPT_MEM_KIND_COUNT; mk++) {
    const mapopt_affinity *e = &machine->affinity[k][mk];
    if (mk == MAPOPT_MEM_VIRTUAL || !e->present || !machine->mems[mk].present)
      continue;
    if (nreach == 0 || e->bw_mbps > best_bw)
      best_bw = e->bw_mbps;
    reach[nreach++] = e;
  }
  const mapopt_affinity *forced = NULL;
  if (force >= 0) {
    forced = &machine->affinity[k][fmem];
    if (fmem == MAPOPT_MEM_VIRTUAL || !forced->present ||
        !machine->mems[fmem].present || forced->bw_mbps <= 0)
      return -1;
  }
  /* No memory at all: the op cannot run on k; 0 keeps c a bound. */
  int64_t msum = 0, gsum = 0;
  for (size_t r = 0; r < o->nreqs && nreach > 0; r++) {
    const mapopt_app_req *req = &o->reqs[r];
    int64_t l = best_layout_ppm(v, r);
    bool here = (int64_t)r == force;
    int64_t mbest = mem_term_ns(req->bytes, here ? forced->bw_mbps : best_bw, l,
                                v->mem_eff_ppm);
    int64_t gbest = 0; /* no gathers nor atomics: 0 on every memory */
    if (here && (req->gathers > 0 || req->atomics > 0))
      gbest = access_term_ns(req, forced);
    for (int i = 0;
         !here && i < nreach && (req->gathers > 0 || req->atomics > 0); i++) {
      int64_t g = access_term_ns(req, reach[i]);
      if (i == 0 || g < gbest)
        gbest = g;
    }
    msum = mapopt__sat_add(msum, mbest > 0 ? mbest : 0);
    gsum = mapopt__sat_add(gsum, gbest > 0 ? gbest : 0);
  }
  return combine(pk->overhead_ns, fixed, c, msum, gsum);
}

int64_t mapopt__sim_best_cost(const mapopt_machine *machine,
                              const mapopt_app_run *run, int64_t op,
                              mapopt_proc_kind k) {
  return best_cost_in(machine, run, op, k, -1, MAPOPT_MEM_SYSMEM);
}

int64_t mapopt__sim_best_cost_in(const mapopt_machine *machine,
                                 const mapopt_app_run *run, int64_t op,
                                 mapopt_proc_kind k, size_t r,
                                 mapopt_mem_kind mem) {
  return best_cost_in(machine, run, op, k, (int64_t)r, mem);
}

/* The memory kind and layout factor of each requirement of a mapped op,
 * as the cost formula wants them. A requirement without fields has no
 * instance; it moves no bytes, so its processor's default memory stands
 * in. */
void mapopt__sim_cost_inputs(sim_t *s, int64_t op, mapopt_mem_kind *mems,
                             int64_t *ppm, size_t n) {
  const sim_op *o = &s->ops[op];
  for (size_t r = 0; r < n; r++) {
    if (o->inst[r] < 0) {
      mems[r] =
          o->kind == MAPOPT_PROC_GPU ? MAPOPT_MEM_FBMEM : MAPOPT_MEM_SYSMEM;
      ppm[r] = 1000000;
      continue;
    }
    const sim_inst *in = inst_at(s, o->inst[r]);
    mems[r] = s->mems[in->mem].kind;
    ppm[r] = mapopt__sim_layout_ppm(s->run, op, o->variant, (int)r, &in->layout,
                                    in->fields);
  }
}
