#!/bin/sh
# End-to-end tests of the mapopt program: exit statuses, diagnostics on
# stderr, --json, fmt -i (atomic, never on invalid input), show, and bad
# input of every kind (never a crash). Usage: test_cli.sh MAPOPT_BINARY
set -u
M=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"

# ---- usage -----------------------------------------------------------------
expect_rc 0 "$M" --help;            expect_in out "usage: mapopt COMMAND"
expect_in out "  --version          print mapopt's version"
expect_rc 0 "$M" --version;         expect_in out "mapopt 0.1.0"
expect_rc 0 "$M" --commands;        expect_in out "sim"
expect_rc 0 "$M" --man sim;         expect_in out '.TH MAPOPT-SIM 1 "" "mapopt 0.1.0"'
expect_in out '.B \-\-compare FILE'
expect_rc 0 "$M" --man;             expect_in out '.BR mapopt\-sim (1),'
expect_rc 2 "$M" --man nosuch;      expect_in err "--man: unknown command 'nosuch'"
expect_rc 0 "$M" --completion bash; expect_in out "complete -o filenames -F _mapopt mapopt"
expect_rc 2 "$M" --completion zsh
expect_rc 2 "$M"
expect_rc 2 "$M" nosuch;            expect_in err "unknown command 'nosuch'"
for c in check fmt show; do
  expect_rc 0 "$M" $c --help;       expect_in out "usage: mapopt $c"
done
expect_rc 2 "$M" check;             expect_in err "no input file"
expect_rc 2 "$M" check --bogus x;   expect_in err "unknown option '--bogus'"
# Commands with one operand name it when given two, and reject unknown options.
expect_rc 2 "$M" fmt a.map b.map;    expect_in err "mapopt fmt: only one file at a time"
expect_rc 2 "$M" show a.map b.map;   expect_in err "only one mapper file at a time"
expect_rc 2 "$M" show --bogus;       expect_in err "mapopt show: unknown option '--bogus'"
expect_rc 2 "$M" sim circuit stencil; expect_in err "only one application at a time"
expect_rc 2 "$M" sim -x circuit;     expect_in err "mapopt sim: unknown option '-x'"
# One rule for a machine that cannot be loaded: invalid input (1), with
# the located diagnostic, in every command that takes --machine.
printf 'Task * GPU;\n' > one.map
for args in "check one.map" "fmt one.map" "show one.map" "eval one.map --run true" \
            "sim circuit:small" "explain one.map --app circuit"; do
  expect_rc 1 "$M" $args --machine 'nodes=2 tpu=1'
  expect_in err "nodes=2 tpu=1: error: invalid machine description: column 9: unknown key 'tpu'"
  expect_rc 1 "$M" $args --machine nosuch
  expect_in err 'nosuch: error: unknown machine "nosuch"'
done
expect_rc 2 "$M" show x.map --point 1,2
expect_rc 2 "$M" show x.map --task t --point 9 --space 8
expect_in err "outside --space"

# ---- check -----------------------------------------------------------------
printf 'Task * GPU;\nRegion * * GPU FBMEM;\n' > good.map
expect_rc 0 "$M" check good.map
printf 'Task main CPU' > eof.map
expect_rc 1 "$M" check eof.map
expect_in err "eof.map:1:14: error: syntax error, unexpected end of file, expecting ',' or ';'"
printf 'Task step GPU;\nTask step CPU;\n' > dup.map
expect_rc 0 "$M" check dup.map
expect_in err "dup.map:2:6: warning: duplicate Task binding for step ignored; the binding at 1:6 is used"
expect_rc 1 "$M" check good.map eof.map
expect_rc 1 "$M" check missing.map; expect_in err "missing.map: error: cannot read file"
expect_rc 1 "$M" check --json good.map eof.map
expect_in out '"file": "eof.map"'
expect_in out '"valid": false'
expect_in out '"code": "E04"'
expect_in out '"line": 1'
expect_in out '"col": 14'
# check --app: names checked against the application, with the name meant
# (a misspelled task passed check and only warned in sim).
printf 'Task calculate_new_curents GPU;\nRegion distribute_charge rp_shard GPU ZCMEM;\n' > typo.map
expect_rc 0 "$M" check typo.map
if [ -s err ]; then bad "check without --app warned about task names"; else ok; fi
expect_rc 0 "$M" check typo.map --app circuit
expect_in err "typo.map:1:6: warning: no task named 'calculate_new_curents' in the application; this statement has no effect"
expect_in err "typo.map:1:6: note: did you mean 'calculate_new_currents'?"
expect_in err "typo.map:2:26: note: did you mean 'rp_shared'?"
expect_rc 0 "$M" check --json --app circuit typo.map
expect_in out '"code": "N04"'
expect_rc 1 "$M" check typo.map --app circuitt
expect_in err 'circuitt: error: unknown application "circuitt" (did you mean "circuit"?'
expect_rc 2 "$M" check typo.map --size small
expect_in err "mapopt check: --size needs --app"
# johnson runs one rank per GPU: --app loads the mapper for that shape.
expect_rc 0 "$M" check --app johnson:small "$ROOT/mappers/johnson/expert.map"
# Did you mean, for commands, options, applications and machines too.
expect_rc 2 "$M" smi;                expect_in err "mapopt: unknown command 'smi'; did you mean 'sim'?"
expect_rc 2 "$M" sim circuit --mapepr x.map
expect_in err "mapopt sim: unknown option '--mapepr'; did you mean '--mapper'?"
expect_rc 2 "$M" check --jsno x.map; expect_in err "did you mean '--json'?"
expect_rc 1 "$M" sim stencl;         expect_in err '(did you mean "stencil"?'
expect_rc 1 "$M" sim circuit --machine lasen:nodes=2
expect_in err 'unknown machine "lasen" (did you mean "lassen"?'
# A syntax error says what was meant or expected; R26 is located.
printf 'Region * * GPU FBMEMM;\n' > kind.map
expect_rc 1 "$M" check kind.map;     expect_in err "kind.map:1:16: note: did you mean 'FBMEM'?"
printf 'g = Machine(GPU);\ndef f(Task t) {\n  if (t.ipoint[0] > 2) { return g[0, 0]; }\n  return g[0, 1];\n}\n' > if.map
expect_rc 1 "$M" check if.map
expect_in err "if.map:3:3: note: the language has no if statement: use \`c ? a : b\`"
printf 'Task init_piece GPU;\n' > r26.map
expect_rc 1 "$M" sim circuit:small --mapper r26.map
expect_in out "r26.map:1:6: mapping error: Invalid policy: task init_piece requested GPU, but has no valid task variant for the kind"
printf 'g = Machine(GPU).merge(0, 1);\ndef f(Task t) { return g[8]; }\nIndexTaskMap calculate_new_currents f;\n' > oob.map
expect_rc 1 "$M" sim circuit:small --mapper oob.map --machine p100x4:nodes=2
expect_in out "oob.map:2:25: mapping error: Sharding node index out of bound! 2 >= 2"
expect_in out "oob.map:2:25: note: index [8] is outside the machine model's size (8,) (Machine(GPU): (2, 4); merge(0, 1): (8,))"
# check --portable: what the DSL mapper of Legion does not read the same
# warns (P codes, docs/legion.md), and never makes the mapper invalid
printf '# nothing but a comment\n' > empty.map
expect_rc 0 "$M" check empty.map
if [ -s err ]; then bad "check warned without --portable"; else ok; fi
expect_rc 0 "$M" check --portable empty.map
expect_in err "empty.map:1:1: warning: the mapper has no statement: the DSL mapper needs one and stops the program at start-up"
printf 'g = Machine(GPU);\ndef f(Task t) { i = t.ipoint[0]; return g[0, i < 2 ? 0 : i < 5 ? 1 : 2]; }\nIndexTaskMap * f;\n' > ternary.map
expect_rc 0 "$M" check --portable --json ternary.map
expect_in out '"code": "P04"'
expect_in out '"code": "P21"'
expect_rc 0 "$M" fmt ternary.map; expect_in out "return g[0, i < 2 ? 0 : (i < 5 ? 1 : 2)];"
for f in "$ROOT"/mappers/*/*.map; do
  "$M" check --portable "$f" > out 2> err || bad "check --portable $f failed"
  if [ -s err ]; then bad "$f is not portable: $(head -1 err)"; else ok; fi
done
printf 'x = Machine(GPU).size;\nprint("{}", x);\n' > shape.map
expect_rc 0 "$M" check --machine 'nodes=3 gpu=2' shape.map
expect_in out "(3, 2)"

# ---- fmt -------------------------------------------------------------------
printf 'x=(1+2)*3-(4-5);\n' > f.map
expect_rc 0 "$M" fmt f.map;         expect_in out "x = (1 + 2) * 3 - (4 - 5);"
cp f.map f.orig
expect_rc 0 "$M" fmt -i f.map;      expect_in f.map "x = (1 + 2) * 3 - (4 - 5);"
cp eof.map eof.orig
expect_rc 1 "$M" fmt -i eof.map
if cmp -s eof.map eof.orig; then ok; else bad "fmt -i modified an invalid file"; fi
expect_rc 0 "$M" fmt -i f.map
if [ "$(ls | grep -c tmp)" = 0 ]; then ok; else bad "fmt -i left a temporary file"; fi

# ---- show ------------------------------------------------------------------
cat > s.map <<'MAP'
g = Machine(GPU);
def bc(Task t) { i = t.ipoint[0]; return g[i / g.size[1], i % g.size[1]]; }
IndexTaskMap step bc;
def bad(Task t) { return g[0, t.ipoint[0]]; }
IndexTaskMap tile bad;
Region step halo GPU ZCMEM;
Layout * * * AOS C_order;
MAP
expect_rc 0 "$M" show s.map --machine 'nodes=2 gpu=4 cpu=2' --task step --point 5 --space 8 --region step halo@1 --dims 2
expect_in out "runs on GPU(1, 1) (IndexTaskMap bc)"
expect_in out "return GPU(1, 1)"
expect_in out "memory ZCMEM, layout AOS C_order: F, Y, X"
# --region TASK ARG alone names the task; a different --task is refused.
expect_rc 0 "$M" show s.map --machine 'nodes=2 gpu=4 cpu=2' --region step halo@1

expect_in out "task step: kind GPU"
expect_in out "region halo@1: memory ZCMEM"
# The machine line keeps the socket count (it printed sockets=1).
expect_rc 0 "$M" show s.map --machine 'nodes=2 gpu=4 cpu=8 sockets=2'
expect_in out "machine: nodes=2 cpu=8 gpu=4 sockets=2 sysmem=1 zcmem=1 rdmem=1"
expect_rc 0 "$M" show s.map --machine p100x4;  expect_in out " sockets=2 "
expect_rc 2 "$M" show s.map --task tile --region step halo@1
expect_in err "--region names task 'step', but the query is for task 'tile'"
expect_rc 2 "$M" show s.map --region step
expect_rc 1 "$M" show s.map --machine 'nodes=2 gpu=4 cpu=2' --task tile --point 4 --space 8
expect_in err "s.map:4:27: mapping error: Slice processor index out of bound! 4 >= 4"
expect_in err "s.map: note: while placing point (4,) of task 'tile' with 'bad'"
expect_rc 0 "$M" show s.map --machine 'nodes=2 gpu=4' --task step --point 6 --space 8 --variants CPU,GPU
expect_rc 0 "$M" show s.map --machine 'nodes=2 gpu=4 cpu=2' --task log --variants CPU --parent 'main@CPU(0,0)'
expect_in out "runs on CPU(0, 0) (default placement"

# ---- bad input never crashes ----------------------------------------------
printf 'x = 3 \000 4;\n' > nul.map
expect_rc 1 "$M" check nul.map;     expect_in err "nul.map:1:7: error: Unrecognized character: \\x00"
printf 'Task * GPU; # caf\303\251\nx = \377;\n' > utf.map
expect_rc 1 "$M" check utf.map;     expect_in err "utf.map:2:5: error: Unrecognized character: \\xFF"
printf 'def f(Task t): return 0;\n' > py.map
expect_rc 1 "$M" check py.map;      expect_in err "py.map:1:14: error: syntax error, unexpected ':', expecting '{'"
awk 'BEGIN { printf "x = "; for (i = 0; i < 100000; i++) printf "(1 + "; printf "1"; for (i = 0; i < 100000; i++) printf ")"; print ";" }' > deep.map
expect_rc 1 "$M" check deep.map;    expect_in err "nested too deeply"
# A 1 MB program on one line (a minified mapper): 60000 statements.
awk 'BEGIN { for (i = 0; i < 60000; i++) printf "v%d = (%d, 2) * (3, 3); ", i, i; print "print(\"{}\", v59999);" }' > long.map
expect_rc 0 "$M" check long.map;    expect_in out "(179997, 6)"
# A left-nested chain deeper than the bound is refused with a location.
awk 'BEGIN { printf "x = 0"; for (i = 0; i < 200000; i++) printf " + 1"; print ";" }' > chain.map
expect_rc 1 "$M" check chain.map;   expect_in err "chain.map:1:"
printf 'def r(int n) { return r(n + 1); }\nx = r(0);\n' > rec.map
expect_rc 1 "$M" check rec.map
expect_in err "recursion depth limit (64) exceeded in call to 'r'"
expect_in err "rec.map:2:5: note: called from here"
printf 'x = 99999999999999999999;\n' > big.map
expect_rc 1 "$M" check big.map
expect_in err "big.map:1:5: error: integer literal out of range: 99999999999999999999"
mkdir dir.map
expect_rc 1 "$M" check dir.map

# ---- machines and machine ---------------------------------------------------
for c in machines machine; do
  expect_rc 0 "$M" $c --help;       expect_in out "usage: mapopt $c"
done
expect_rc 0 "$M" machines
expect_in out "p100x4         1 (N<=1024)     4    4 2x6       2  15000 MiB"
expect_in out "lassen         1 (N<=1024)"
expect_in out "cpu-cluster    4 (N<=1024)     0    8 2x26      2  -"
expect_rc 0 "$M" machines --json
expect_in out '"name": "h100x8"'
expect_in out '"nodes_max": 1024'
expect_in out '"fb_mib": 79000'
expect_rc 2 "$M" machines --bogus;  expect_in err "unexpected argument '--bogus'"
expect_rc 2 "$M" machine;           expect_in err "expected 'show MACHINE' or 'probe'"
expect_rc 2 "$M" machine list;      expect_in err "unknown subcommand 'list'"
expect_rc 2 "$M" machine show;      expect_in err "show needs a machine"
expect_rc 2 "$M" machine show a b;  expect_in err "show takes one machine"
expect_rc 2 "$M" machine probe --output
expect_rc 0 "$M" machine show lassen:nodes=4
expect_in out '"format": "mapopt-machine/1"'
expect_in out '"nodes": 4, "ranks_per_node": 1, "sockets": 2'
expect_in out '"FB_FB_PEER": {"bw_gbs": 75, "cross_socket_bw_gbs": 30, "lat_ns": 7000, "peer_ports": "peer_link"}'
expect_rc 1 "$M" machine show lassen:nodes=2000
expect_in err 'lassen:nodes=2000: error: parameter nodes=2000 of machine "lassen" is out of range [1, 1024]'
expect_rc 1 "$M" machine show p200
expect_in err 'p200: error: unknown machine "p200" (presets: a100x4, cpu-cluster,'
expect_rc 0 "$M" machine show 'nodes=2 gpu=4 cpu=8 omp=2'
expect_in out '"name": "nodes=2 gpu=4 cpu=8 omp=2"'
expect_in out '{"proc": "GPU", "mem": "FBMEM", "bw_gbs": 550,'
expect_rc 1 "$M" machine show 'nodes=2 tpu=1'
expect_in err "unknown key 'tpu'"
# Describing one's own machine: start from a preset, edit, load.
"$M" machine show p100x4 > mine.json
expect_rc 0 "$M" machine show mine.json
if "$M" machine show p100x4 | cmp -s - out; then ok; else bad "show of show differs"; fi
sed 's/"FB_HOST": {"bw_gbs"/"FB_HOST": {"bandwith"/' mine.json > typo.json
expect_rc 1 "$M" machine show typo.json
expect_in err 'typo.json:32:17: error: unknown key "bandwith" in channels.FB_HOST'
sed '/"proc": "GPU", "mem": "FBMEM"/d' mine.json > noedge.json
expect_rc 1 "$M" machine show ./noedge.json
expect_in err "noedge.json:18:15: error: missing mandatory affinity GPU -> FBMEM"
expect_rc 1 "$M" machine show nosuch.json
expect_in err "nosuch.json: error: cannot read file"
# The worked example of docs/machines.md loads.
awk '/^```json/ { f = 1; next } /^```/ { if (f) exit } f' \
  "$ROOT/docs/machines.md" > doc.json
expect_rc 0 "$M" machine show doc.json
expect_in out '"name": "mine"'
# The probe writes ~/.cache/mapopt/local.json, which `local` then names.
mkdir home
expect_rc 1 env HOME="$T/home" "$M" machine show local
expect_in err "machine \"local\" has not been probed: run 'mapopt machine probe'"
expect_rc 0 env HOME="$T/home" "$M" machine probe
expect_in out "wrote $T/home/.cache/mapopt/local.json"
expect_in home/.cache/mapopt/local.json '"name": "local"'
expect_in home/.cache/mapopt/local.json '"sources": {'
expect_rc 0 env HOME="$T/home" "$M" machine show local:nodes=2
expect_in out '"nodes": 2,'
expect_rc 0 env HOME="$T/home" "$M" machines
expect_in out "local          1 (N<=1024)"
expect_rc 0 "$M" machine probe --output probed.json
expect_rc 0 "$M" machine show probed.json
expect_rc 0 "$M" machine probe --output -
expect_in out '"format": "mapopt-machine/1"'
expect_rc 2 "$M" machine probe --fast; expect_in err "unexpected argument '--fast'"

# ---- apps, sim, show --app -------------------------------------------------
# The DSL mapper of Legion's behaviours, modelled by default: AOS F_order
# fails (--aos-order mapopt lays it out F, X, Y), and a mapper that names
# arguments is matched by name only (--region-keys both: names, then
# positions), so its positional Region line has no effect by default.
printf 'Layout * * * AOS F_order;\n' > aosf.map
expect_rc 1 "$M" sim stencil:small --mapper aosf.map
expect_in out "the DSL mapper orders the dimensions F, Y, Z, ... without X, which Legion cannot lay out"
expect_in out "error class LAYOUT"
expect_rc 0 "$M" sim stencil:small --mapper aosf.map --aos-order mapopt
expect_rc 2 "$M" sim stencil:small --aos-order fast; expect_in err "--aos-order takes legion or mapopt"
printf 'Region * * GPU FBMEM;\nRegion stencil private GPU FBMEM;\nRegion * 0 GPU ZCMEM;\n' > keys.map
expect_rc 0 "$M" sim stencil:small --mapper keys.map
cp out keys-auto.log
expect_rc 0 "$M" sim stencil:small --mapper keys.map --region-keys names
if cmp -s out keys-auto.log; then ok; else bad "--region-keys names differs from auto on a mapper that names arguments"; fi
expect_rc 0 "$M" sim stencil:small --mapper keys.map --region-keys both
if cmp -s out keys-auto.log; then bad "--region-keys both did not use the position"; else ok; fi
expect_rc 2 "$M" sim stencil:small --region-keys all; expect_in err "--region-keys takes auto, names, positions or both"
expect_rc 0 "$M" apps;              expect_in out "circuit    sizes: paper small lassen"
for a in circuit stencil pennant cannon summa pumma johnson solomonik cosma; do
  expect_in out "$a"
done
expect_rc 0 "$M" apps --json;       expect_in out '"name": "cosma"'
expect_rc 1 "$M" apps --export nosuch
expect_rc 0 "$M" sim circuit
expect_in out "ELAPSED TIME ="
expect_in out "GFLOPS ="
expect_in out "[mapopt-sim] lower bound"
# The log says the report's metric too, and what it is.
expect_in out "[mapopt-sim] metric throughput = "
expect_in out " 1/s (1 / elapsed time; higher is better)"
expect_rc 0 "$M" sim cannon:small;  expect_in out "achieved GFLOPS per node:"
expect_in out "[mapopt-sim] metric gflops = "
# The export simulates identically to the built-in.
"$M" apps --export stencil > stencil.json
"$M" sim stencil --size small --report r1.json > l1.txt
"$M" sim stencil.json --size small --mapper "$ROOT/mappers/stencil/expert.map" --report r2.json > l2.txt
if cmp -s l1.txt l2.txt && cmp -s r1.json r2.json; then ok; else bad "export simulates differently"; fi
expect_rc 1 "$M" sim nosuch;        expect_in err 'unknown application "nosuch"'
expect_rc 1 "$M" sim circuit:nosize; expect_in err "nosize"
expect_rc 2 "$M" sim circuit:small --size small
expect_in err "mapopt sim: give the size either after ':' or with --size"
expect_rc 2 "$M" sim circuit --noise 2
expect_rc 1 "$M" sim circuit --machine nosuch
printf 'Task calculate_new_currents GPU;\nLayout * * * SOA C_order;\nTask * CPU;\n' > cpu.map
expect_rc 1 "$M" sim stencil --mapper cpu.map
printf 'Task * CPU;\nLayout * * * SOA C_order;\n' > cpuc.map
expect_rc 1 "$M" sim stencil --mapper cpuc.map
expect_in out "Assertion failed: stride does not match expected value."
expect_in out "[mapopt-sim] error class LAYOUT"
printf 'Region * * GPU ZCMEM;\n' > zc.map
expect_rc 1 "$M" sim stencil:lassen --machine lassen:nodes=1 --mapper zc.map
expect_in out "Default mapper failed allocation"
expect_rc 0 "$M" sim circuit:small --trace t.json --report r.json --json
expect_in out '"status": "ok"'
expect_in t.json '"traceEvents"'
expect_in r.json '"lower_bound_ns"'
# Report and trace files get the mode the umask gives (not 0600).
rm -f t.json r.json
(umask 022 && "$M" sim circuit:small --trace t.json --report r.json >/dev/null)
for f in t.json r.json; do
  mode=$(stat -c %a "$f")
  if [ "$mode" = 644 ]; then ok; else bad "$f has mode $mode under umask 022"; fi
done
# A trace or report that cannot be written: the run's log is still printed,
# the error names the file and says why, and the exit status is 1.
expect_rc 1 "$M" sim circuit:small --trace nodir/t.json --report nodir/r.json
expect_in out "ELAPSED TIME ="
expect_in err "nodir/t.json: error: cannot write the trace: No such file or directory"
expect_in err "nodir/r.json: error: cannot write the report: No such file or directory"
expect_rc 0 "$M" show "$ROOT/mappers/cannon/expert.map" --app cannon:small
expect_in out "task_4: GPU(0, 0)"
# show --app runs the same pipeline as sim: one size, and the rank split of
# the app (johnson: one rank per GPU, so four address spaces on p100x4).
expect_rc 2 "$M" show "$ROOT/mappers/cannon/expert.map" --app cannon:small --size small
expect_in err "mapopt show: give the size either after ':' or with --size"
expect_rc 0 "$M" show "$ROOT/mappers/johnson/expert.map" --app johnson:small
expect_in out "GPU(3, 0)"
expect_rc 0 "$M" sim circuit:small --bench
expect_in out "events/s per core"
# --explain and --compare (their goldens are tests/sim/explain-*, compare-*).
expect_rc 0 "$M" sim circuit:small --explain
expect_in out "What AutoGuide finds (mapopt explain):"
expect_in out "Where the time went (5 timed iterations: "
expect_in out "  busiest tasks "
expect_rc 0 "$M" sim circuit:small --compare "$ROOT/mappers/circuit/default.map"
expect_in out "B is 1.70x as fast as A"
expect_in out "      rp_ghost@2 in ZCMEM -> FBMEM"
expect_rc 1 "$M" sim circuit:small --compare r26.map
expect_in out "B: r26.map: failed (NO_VARIANT)"
expect_in out "  r26.map:1:6: mapping error: Invalid policy: task init_piece"
expect_rc 1 "$M" sim circuit:small --compare nosuch.map
expect_in err "nosuch.map: error: cannot read file"
expect_rc 2 "$M" sim circuit:small --compare x.map --report r.json
expect_in err "--compare prints the two runs' differences: no --report"
expect_rc 2 "$M" sim circuit:small --bench --explain
# The limits: each refusal names the flag that raises it.
expect_rc 1 "$M" sim circuit --max-ops 100
expect_in err 'about 155 ops (more than the limit of 100; options max_ops)'
expect_in err "mapopt: note: the limit is 100 operations: raise it with --max-ops N"
# A model estimated too large is refused before it is built ...
expect_rc 1 "$M" sim circuit:small --iterations 1000000 --max-ops 100000000 --max-bytes 64M
expect_in err "would need more than 67108864 bytes (the limit; options max_bytes)"
expect_in err "mapopt: note: the limit is 67108864 bytes: raise it with --max-bytes B"
# ... and a simulation that outgrows the limit stops (the default is 4G).
expect_rc 1 "$M" sim circuit --max-bytes 512K
expect_in err "mapopt sim: note: the run needs more memory than its limit of 524288 bytes: raise it with --max-bytes B"
expect_rc 0 "$M" sim circuit --max-bytes 8M
expect_rc 2 "$M" sim circuit --max-bytes 1X
expect_in err "--max-bytes must be a positive number of bytes"
expect_rc 0 "$M" sim circuit:small --max-ops 1000 --max-bytes 64M
expect_rc 1 "$M" sim circuit --time-limit 1 --iterations 100
expect_in out "simulated time limit exceeded (1 s)"
expect_in err "mapopt sim: note: the simulated time limit is 1 s; raise it with --time-limit S"
# The progress line: only on a terminal (or MAPOPT_PROGRESS=1), never in a
# pipe or a file, and erased before the results.
expect_rc 0 "$M" sim circuit:small
if [ -s err ]; then bad "progress written to a file"; cat err; else ok; fi
expect_rc 0 env MAPOPT_PROGRESS=1 "$M" sim circuit:small
expect_in err "mapopt sim: instantiating the application (0 s)"
expect_in err "mapopt sim: simulating (0 s)"
expect_rc 0 env MAPOPT_PROGRESS=1 "$M" sim circuit --iterations 1000
expect_in err "mapopt sim: simulating: "
expect_in err " of 12035 operations, "
if command -v script >/dev/null 2>&1; then
  # A run of a few seconds on a pseudo-terminal: the line appears after a
  # second, redrawn in place, and is erased at the end.
  script -qc "'$M' sim circuit --iterations 10000 >/dev/null" /dev/null > tty.txt
  expect_in tty.txt "mapopt sim: simulating: "
  if tail -c 4 tty.txt | od -c | grep -q 'K'; then ok; else bad "progress line not erased"; od -c tty.txt | tail -3; fi
fi

# ---- explain ---------------------------------------------------------------
expect_rc 0 "$M" explain --help;    expect_in out "usage: mapopt explain LOG"
expect_rc 2 "$M" explain;           expect_in err "no log file given"
expect_rc 2 "$M" explain a.log b.log; expect_in err "only one log file at a time"
expect_rc 2 "$M" explain a.log --level loud
expect_in err "--level takes raw, explain, suggest or full, not 'loud'"
expect_rc 2 "$M" explain a.log --exit-status x
expect_rc 2 "$M" explain a.log --report
expect_rc 1 "$M" explain nosuch.log; expect_in err "nosuch.log: error: cannot read file"
# A real log from any program: the seed paper's wording.
printf 'starting\nSlice processor index out of bound! 4 >= 4\n' > oob.log
expect_rc 0 "$M" explain oob.log
expect_in out "Execution Error: Slice processor index out of bound! 4 >= 4"
expect_in out "Explanation: The placement function sent a point of a task to processor 4"
expect_in out "Suggestion: Keep the processor coordinate below"
expect_rc 0 "$M" explain oob.log --level raw
if grep -q "Explanation\|Suggestion" out; then bad "raw has more than the output"; else ok; fi
expect_rc 0 "$M" explain oob.log --level explain
expect_in out "Explanation:"
if grep -q "Suggestion" out; then bad "explain has suggestions"; else ok; fi
expect_rc 0 "$M" explain oob.log --level suggest
expect_in out "Suggestion:"
if grep -q "Explanation" out; then bad "suggest has explanations"; else ok; fi
expect_rc 0 "$M" explain - < oob.log; expect_in out "Slice processor index"
printf 'hello\n' > quiet.log
expect_rc 0 "$M" explain quiet.log
if [ -s out ]; then bad "findings in a quiet log"; cat out; else ok; fi
expect_rc 0 "$M" explain quiet.log --exit-status 3; expect_in out "Execution Error: hello"
expect_rc 0 "$M" explain quiet.log --signal 11;   expect_in out "Crash: killed by signal 11 (SIGSEGV)"
expect_rc 0 "$M" explain quiet.log --timed-out;   expect_in out "Timeout: the run was stopped"
# A simulated run with its report, mapper and app: profile findings with
# the statement to add, and the same findings from the JSON report.
"$M" sim circuit --report rc.json > rc.log
expect_rc 0 "$M" explain rc.log --report rc.json --app circuit \
  --mapper "$ROOT/mappers/circuit/expert.map"
expect_in out "Performance Metric: ELAPSED TIME ="
expect_in out "Performance: 91% of GPU time in distribute_charge"
expect_in out "Suggestion: Put rp_ghost in the framebuffer: \`Region distribute_charge rp_ghost GPU FBMEM;\`"
expect_rc 0 "$M" explain rc.log --report rc.json --json
expect_in out '"code": "zc-hot"'
expect_in out '"kind": "set-memory"'
expect_in out '"text": "set memory of (distribute_charge, rp_ghost, GPU) to FBMEM"'
# A mapper that does not compile: its line is quoted.
printf 'def f(Task t):\n  return 0;\n' > syn.map
"$M" sim circuit --mapper syn.map > syn.log 2>&1
expect_rc 0 "$M" explain syn.log --mapper syn.map --exit-status 1
expect_in out "Compile Error: syntax error, unexpected ':', expecting '{'"
expect_in out "The line reads \`def f(Task t):\`"
# Bad inputs: located errors, exit 1.
printf '{"format": "mapopt-report/2", "status": "ok",\n "bogus": 1}\n' > bad.json
expect_rc 1 "$M" explain rc.log --report bad.json
expect_in err 'bad.json:2:2: error: unknown key "bogus" in the report'
# A report of the first format (no "format"): refused, with what to do.
printf '{"status": "ok"}\n' > old.json
expect_rc 1 "$M" explain rc.log --report old.json
expect_in err 'old.json:1:1: error: the report has no "format"'
expect_in err 'write it again with `mapopt sim --report`'
printf '{"status": \n' > trunc.json
expect_rc 1 "$M" explain rc.log --report trunc.json; expect_in err "trunc.json:2:1: error:"
expect_rc 1 "$M" explain rc.log --app nosuch; expect_in err 'unknown application "nosuch"'
expect_rc 1 "$M" explain rc.log --mapper nosuch.map; expect_in err "nosuch.map: error: cannot read file"

# ---- eval ------------------------------------------------------------------
expect_rc 0 "$M" eval --help;       expect_in out "usage: mapopt eval MAPPER.map --run"
printf 'Task * CPU;\n' > e.map
# The simulator as the program: eval reads the metric line it prints.
SM="$ROOT/mappers/stencil/expert.map"
expect_rc 0 "$M" eval "$SM" --run "'$M' sim stencil:small --mapper {mapper}"
"$M" sim stencil:small --mapper "$SM" |
  awk '/^ELAPSED TIME/ { printf "ok: time %.6g s\n", $4 }' > want
if [ -s want ] && grep -qxF -f want out; then ok; else bad "eval of sim: $(cat out) vs $(cat want)"; fi
expect_rc 0 "$M" eval "$ROOT/mappers/cannon/expert.map" \
  --run "'$M' sim cannon:small --mapper {mapper}" --json
expect_in out '"name": "gflops-per-node"'
expect_in out '"direction": "higher"'
# Each outcome: its status, summary, exit code, and the output's end.
expect_rc 1 "$M" eval e.map --run "sh -c 'echo working; echo bad mapper >&2; exit 3' {mapper}"
expect_in out "failed: exit status 3: bad mapper"
expect_in out "--- all of the output (19 bytes in all) ---"
expect_in out "working"
expect_rc 1 "$M" eval e.map --run "sh -c 'kill -SEGV \$\$' {mapper}"
expect_in out "signal: killed by SIGSEGV (signal 11)"
t0=$(date +%s)
expect_rc 1 "$M" eval e.map --run "sh -c 'echo started; sleep 60' {mapper}" --timeout 0.5
expect_in out "timeout: still running after 0.5 s; process group killed with SIGTERM"
expect_in out "started"
if [ $(( $(date +%s) - t0 )) -lt 10 ]; then ok; else bad "eval --timeout 0.5 took too long"; fi
expect_rc 1 "$M" eval e.map --run "sh -c 'echo hi' {mapper}"
expect_in out "no-metric: exit status 0 but no output line matched"
expect_rc 1 "$M" eval e.map --run "/nonexistent/prog {mapper}"
expect_in out "start-failed: /nonexistent/prog: No such file or directory"
expect_rc 0 "$M" eval e.map --run "sh -c 'echo score 7 of 9' {mapper}" \
  --metric 'score ([0-9]+)' --direction higher --json
expect_in out '"summary": "ok: metric 7"'
expect_in out '"value": 7.0'
expect_in out '"direction": "higher"'
# --repeat: runs 1, 2, 3 print 5, 1, 3 (counted in the private directory).
expect_rc 0 "$M" eval e.map --repeat 3 --run \
  "sh -c 'n=\$(cat count 2>/dev/null || echo 0); echo \$((n + 1)) > count; set -- 5 1 3; shift \$n; echo ELAPSED TIME = \$1 s' {mapper}"
expect_in out "ok: time 3 s (median of 3 runs)"
# --keep: the private directory holds the mapper as given.
expect_rc 0 "$M" eval e.map --keep --run "sh -c 'echo ELAPSED TIME = 1 s' {mapper}"
kept=$(sed -n 's/^mapopt eval: kept //p' err)
if [ -n "$kept" ] && cmp -s "$kept/mapper.map" e.map; then ok; else bad "--keep: '$kept'"; fi
[ -n "$kept" ] && rm -rf "$kept"
expect_rc 0 "$M" eval e.map --workdir "$T" --json \
  --run "sh -c 'pwd; echo ELAPSED TIME = 1 s' {mapper}"
expect_in out "\"output\": \"$T\\n"
expect_rc 1 "$M" eval e.map --env 'GREETING=hello there' \
  --run "sh -c 'echo \$GREETING; exit 1' {mapper}"
expect_in out "hello there"
# A path with spaces and quotes reaches the program whole, with or without
# the shell.
mkdir "it's a \"dir\""
expect_rc 0 env TMPDIR="$T/it's a \"dir\"" "$M" eval e.map --shell \
  --run 'cmp {mapper} e.map && echo ELAPSED TIME = 2 s' --workdir "$T"
expect_in out "ok: time 2 s"
expect_rc 0 env TMPDIR="$T/it's a \"dir\"" "$M" eval e.map --workdir "$T" \
  --run "sh -c 'cmp \"\$0\" e.map && echo ELAPSED TIME = 2 s' {mapper}"
expect_in out "ok: time 2 s"
# --tmpdir: where private directories are made.
mkdir scratch
expect_rc 0 "$M" eval e.map --tmpdir "$T/scratch" --json \
  --run "sh -c 'echo \$0; echo ELAPSED TIME = 1 s' {mapper}"
expect_in out "\"output\": \"$T/scratch/mapopt-eval-"
if [ -z "$(ls scratch)" ]; then ok; else bad "--tmpdir: directory left behind"; fi
expect_rc 1 "$M" eval e.map --tmpdir "$T/nosuch" --run "true {mapper}"
expect_in err "$T/nosuch: error: cannot make a private directory: No such file or directory"
# --grace: a command that ignores SIGTERM is killed after it.
expect_rc 1 "$M" eval e.map --timeout 0.3 --grace 0.2 \
  --run "sh -c 'trap \"\" TERM; echo waiting; while :; do sleep 0.05; done' {mapper}"
expect_in out "process group killed with SIGTERM, then SIGKILL"
# 5 MB of output: captured within the cap, the rest counted.
expect_rc 1 "$M" eval e.map --json --run "sh -c 'yes | head -c 5000000; exit 1' {mapper}"
expect_in out '"output_bytes": 5000000'
if grep -q '"output_dropped": [1-9][0-9]*' out; then ok; else bad "no output dropped"; fi
expect_in out 'bytes of output dropped]'
# An invalid mapper is reported and not run.
printf 'Task * CPU' > bad.map
expect_rc 1 "$M" eval bad.map --run "touch '$T/ran' {mapper}"
expect_in err "bad.map:1:11: error: syntax error"
expect_in err "mapopt eval: bad.map was not run"
if [ ! -e ran ]; then ok; else bad "eval ran an invalid mapper"; fi
expect_rc 1 "$M" eval nosuch.map --run "true {mapper}"
expect_in err "nosuch.map: error: cannot read file"
# Usage errors, located in the command where they are in it.
expect_rc 2 "$M" eval e.map;        expect_in err "no command given"
expect_rc 2 "$M" eval --run "true {mapper}"; expect_in err "no mapper file given"
expect_rc 2 "$M" eval e.map f.map --run "true {mapper}"; expect_in err "only one mapper file at a time"
expect_rc 2 "$M" eval e.map --run "prog 'x {mapper}"
expect_in err "--run:1:6: error: unterminated single quote"
expect_rc 2 "$M" eval e.map --run "prog {mapper} > log"
expect_in err "--run:1:15: error: '>' is shell syntax"
expect_rc 2 "$M" eval e.map --run "prog x";  expect_in err "the command has no {mapper}"
expect_rc 2 "$M" eval e.map --run "p {mapper}" --metric 'time [0-9]+'
expect_in err "--metric:1:1: error: the regular expression has no group"
expect_rc 2 "$M" eval e.map --run "p {mapper}" --timeout 0
expect_rc 2 "$M" eval e.map --run "p {mapper}" --repeat 0
expect_rc 2 "$M" eval e.map --run "p {mapper}" --grace 0
expect_rc 2 "$M" eval e.map --run "p {mapper}" --direction higher
expect_rc 2 "$M" eval e.map --run "p {mapper}" --env 1X=2; expect_in err "--env:1:1: error: '1X=2' is not NAME=VALUE"
expect_rc 2 "$M" eval e.map --run;  expect_in err "--run needs a value"
expect_rc 2 "$M" eval e.map --run "p {mapper}" --bogus; expect_in err "unknown option '--bogus'"

# ---- space, tune, bench, report ---------------------------------------------
for c in space tune bench report; do
  expect_rc 0 "$M" $c --help;       expect_in out "usage: mapopt $c"
done
expect_rc 2 "$M" space;             expect_in err "no application given"
expect_rc 2 "$M" space circuit --bogus; expect_in err "unknown option '--bogus'"
expect_rc 0 "$M" space circuit:small
expect_in out "circuit on p100x4: 53 parameters"
expect_in out "kind.calculate_new_currents                   default CPU"
expect_rc 0 "$M" space circuit:small --json
expect_in out '"parameters": ['
expect_in out '"name": "memory.calculate_new_currents.rp_ghost.GPU",'
expect_rc 1 "$M" space nosuch;      expect_in err 'unknown application "nosuch"'
# --render: a point of the space as a mapper, from a file or stdin
printf '{"kind.calculate_new_currents": "CPU",\n "memory.calculate_new_currents.rp_ghost.CPU": "ZCMEM", "map.distribute_charge": 1}\n' > ch.json
expect_rc 0 "$M" space circuit:small --render ch.json
expect_in out "Task calculate_new_currents CPU;"
expect_in out "Region calculate_new_currents rp_ghost CPU ZCMEM;"
expect_in out "IndexTaskMap distribute_charge mo_cyclic_"
cp out rendered.map
expect_rc 0 "$M" check rendered.map
expect_rc 0 sh -c "\"$M\" space circuit:small --render - < ch.json"
expect_in out "Task calculate_new_currents CPU;"
printf '{"kind.calculate_new_currents": "CPU",\n "kind.nosuch": "GPU"}\n' > badch.json
expect_rc 1 "$M" space circuit:small --render badch.json
expect_in err "badch.json:2:2: error:"
printf '{"kind.calculate_new_currents": "TPU"}\n' > badv.json
expect_rc 1 "$M" space circuit:small --render badv.json
expect_in err "badv.json:1:"
expect_rc 1 "$M" space circuit:small --render nosuch.json
expect_in err "nosuch.json: error: cannot read file"
expect_rc 2 "$M" space circuit --json --render ch.json
# space over a start mapper: its text follows the space's statements
printf 'Task * CPU;\n' > start.map
expect_rc 0 sh -c "echo '{}' | \"$M\" space circuit:small --start start.map --render -"
expect_in out "Task * CPU;"
# the default point is one statement restating a default, not an empty file
expect_rc 0 sh -c "echo '{}' | \"$M\" space circuit:small --render -"
expect_in out "Task * GPU, OMP, CPU, IO, PY, PROC;"
# a start mapper with a portability warning is refused, unless --no-portable
printf 'g = Machine(GPU);\ndef f(Task t) { return g[0, 0]; }\nIndexTaskMap * f;\n' > star.map
expect_rc 1 "$M" space circuit:small --start star.map
expect_in err "star.map:3:14: warning: the DSL mapper ignores IndexTaskMap bindings to '*'"
expect_in err "star.map: error: the start mapper has 1 portability warning"
expect_rc 1 "$M" tune circuit:small --start star.map --budget 2 --db t0.db --out t0.map
expect_in err "give --no-portable to start from it anyway"
expect_rc 0 "$M" space circuit:small --start star.map --no-portable

# tune: progress (one line per evaluation off a terminal), the summary, the
# best mapper, the database
expect_rc 0 "$M" tune circuit:small --optimizer random --budget 6 --db t.db
expect_in err "evaluation 1/6 [random]: ok"
expect_in err "evaluation 6/6 [random]: "
expect_in out "circuit on p100x4: 6 evaluations by random"
expect_in out "written to circuit.best.map"
expect_in out "the expert mapper ("
expect_in out "the default mapper ("
expect_in out "the lower bound:"
expect_in out "run 1 in t.db; rerun: mapopt tune circuit:small --machine p100x4 --optimizer random --seed 0 --budget 6 --db t.db"
expect_in circuit.best.map "# The best mapper of \`mapopt tune circuit:small\` on p100x4 (run 1 in t.db)"
expect_rc 0 "$M" check circuit.best.map
expect_rc 0 "$M" check --portable circuit.best.map
if [ -s err ]; then bad "tune wrote a mapper that is not portable: $(cat err)"; else ok; fi
# the defaults: guided, 10 evaluations; circuit's default mapper is within
# 1% of the lower bound, and the best found is at least as fast
mkdir g && (cd g && "$M" tune circuit > out 2> err) && ok || bad "tune circuit failed: $(cat g/err)"
expect_in g/out "circuit on p100x4: 10 evaluations by guided"
expect_in g/err "evaluation 1/10 [guided: start (default mapper)]: ok"
if awk '/x the default mapper/ { found = 1; if ($1 + 0 < 1) exit 1 } END { exit !found }' g/out
then ok; else bad "guided's best is slower than the default mapper"; cat g/out; fi
expect_rc 0 "$M" check g/circuit.best.map
# the default mapper wins on circuit: it is written as a statement
expect_in g/circuit.best.map "Task * GPU, OMP, CPU, IO, PY, PROC;"
expect_rc 0 "$M" check --portable g/circuit.best.map
if [ -s err ]; then bad "the default mapper written is not portable"; else ok; fi
# never over an existing file without --force; refused before any work
cp circuit.best.map keep.map
expect_rc 1 "$M" tune circuit:small --optimizer random --budget 6 --seed 1 --db t.db
expect_in err "mapopt tune: circuit.best.map exists; give --force to overwrite it or --out FILE to write elsewhere"
if cmp -s circuit.best.map keep.map; then ok; else bad "tune overwrote without --force"; fi
if [ ! -s err ] || ! grep -q evaluation err; then ok; else bad "tune worked before refusing"; fi
expect_rc 0 "$M" tune circuit:small --optimizer random --budget 6 --seed 1 --db t.db --force --quiet
expect_in circuit.best.map "seed 1."
if [ -s err ]; then bad "--quiet printed progress"; cat err; else ok; fi
expect_rc 0 "$M" tune circuit:small --optimizer random --budget 6 --db t.db --out mine.map --json
expect_in out '"end": "done"'
expect_in out '"file": "mine.map"'
expect_in out '"speedup_expert": '
expect_in mine.map "Task"
# the same settings give the same bytes, whatever --jobs is
mkdir j1 j2
(cd j1 && "$M" tune circuit:small --optimizer random --budget 12 --jobs 1 --batch 4 > out 2> err)
(cd j2 && "$M" tune circuit:small --optimizer random --budget 12 --jobs 2 --batch 4 > out 2> err)
if cmp -s j1/out j2/out && cmp -s j1/err j2/err && cmp -s j1/circuit.best.map j2/circuit.best.map
then ok; else bad "--jobs 2 differs from --jobs 1"; fi
# --resume of a finished run reports it without evaluating
expect_rc 0 "$M" tune circuit:small --optimizer random --budget 6 --db t.db --resume --force
expect_in err "run 3 resumed: 6 evaluations were recorded"
if grep -q "^evaluation" err; then bad "a finished run was evaluated again"; else ok; fi
# an application without shipped mappers
expect_rc 0 "$M" tune "$ROOT/apps/heat1d.json" --optimizer random --budget 3 --db t.db
# its baseline is the default mapper (issue 21: it had none)
expect_in out "x the default mapper ("
if grep -q "no expert or default mapper ships" out; then bad "no baseline"; else ok; fi
expect_in heat1d.best.map "Task"
# a device is written to, never replaced (a FIFO stands for /dev/stdout)
mkfifo fifo
cat fifo > fromfifo &
expect_rc 0 "$M" tune circuit:small --optimizer random --budget 2 --db t.db --out fifo --force --quiet
wait
if [ -p fifo ]; then ok; else bad "tune replaced a FIFO"; fi
expect_in fromfifo "Task"
# bad input
expect_rc 2 "$M" tune;              expect_in err "no application given"
expect_rc 2 "$M" tune circuit --optimizer nosuch
expect_in err "unknown optimizer 'nosuch' (this build has: guided, random, opentuner, ccd, llm)"
expect_rc 2 "$M" tune circuit --budget 0; expect_in err "--budget must be an integer from 1"
expect_rc 2 "$M" tune circuit --jobs x; expect_in err "--jobs must be an integer"
expect_rc 2 "$M" tune circuit --feedback loud; expect_in err "--feedback takes raw"
expect_rc 2 "$M" tune circuit --budget; expect_in err "--budget needs a value"
expect_rc 1 "$M" tune nosuch --out x.map; expect_in err 'unknown application "nosuch"'
expect_rc 1 "$M" tune circuit:small --out x.map --machine nosuch
expect_rc 1 "$M" tune circuit:small --out x.map --db /nonexistent/t.db
expect_in err "/nonexistent/t.db: error: database: cannot open"
printf 'not a database at all, just some text\n' > text.db
expect_rc 1 "$M" tune circuit:small --out x.map --db text.db
expect_in err "text.db: error: database:"
expect_rc 1 "$M" tune circuit:small --out x.map --start nosuch.map
expect_in err "nosuch.map: error: cannot read file"
printf 'Task * GPU' > badstart.map
expect_rc 1 "$M" tune circuit:small --out x.map --start badstart.map --db t.db
expect_in err "badstart.map:1:11: error:"
expect_rc 0 "$M" tune circuit:small --out x.map --start start.map --optimizer random --budget 3 --db t.db
expect_in out "--start start.map"
if [ -e x.map ]; then ok; else bad "--start run wrote nothing"; fi
# tune --run: real runs, of mapopt's own simulator here (it prints the
# metric line a real program does). The expert and default yardsticks are
# run by the command too; each evaluation's output is recorded; the rerun
# line gives the command back; a resumed finished run runs nothing.
RUN="$M sim circuit:small --mapper {mapper}"
# (--repeat-max 3 --check 1: the simulator needs no more runs than that)
expect_rc 0 "$M" tune circuit:small --optimizer random --budget 3 --db r.db --out r.map --run "$RUN" --timeout 60 --repeat 2 --repeat-max 3 --check 1
expect_in out "circuit on p100x4: 3 evaluations by random"
expect_in out "x the expert mapper ("
expect_in out "x the default mapper ("
expect_in out "--db r.db --run '$RUN' --timeout 60 --repeat 2"
expect_in err "evaluation 3/3 [random"
expect_in r.map "# The best mapper of \`mapopt tune circuit:small\`"
# (random's third candidate asks for AOS F_order, which fails as it does on
# Legion under the DSL mapper: its output is recorded too)
if [ "$(sqlite3 r.db "SELECT COUNT(*) FROM outputs JOIN evaluations USING (run, iteration) WHERE (exit_status = 0 AND output LIKE '%GFLOPS = %') OR (exit_status = 1 AND output LIKE '%Invalid layout: %')")" = 3 ]; then ok; else bad "tune --run did not record 3 outputs"; fi
if sqlite3 r.db "SELECT evaluator FROM runs" | grep -qF '"repeat":2'; then ok; else bad "tune --run did not record its command"; fi
expect_rc 0 "$M" tune circuit:small --optimizer random --budget 3 --db r.db --out r.map --force --run "$RUN" --timeout 60 --repeat 2 --repeat-max 3 --check 1 --resume
expect_in err "run 1 resumed: 3 evaluations were recorded"
if [ ! -s err ] || ! grep -q '^evaluation' err; then ok; else bad "a finished real run was run again"; fi
# a failing command: every evaluation fails with its output's reason
expect_rc 1 "$M" tune circuit:small --optimizer random --budget 2 --db r.db --out r2.map --run "$M sim circuit:small --mapper {mapper} --machine nosuch"
expect_in out "no valid mapper found"
expect_in err "evaluation 2/2 [random]: failed"
# bad real-run options
expect_rc 2 "$M" tune circuit --timeout 5; expect_in err "--timeout needs --run"
expect_rc 2 "$M" tune circuit --run "x {mapper}" --workdir . --jobs 2
expect_in err "--workdir would share one directory between --jobs evaluations"
expect_rc 2 "$M" tune circuit --run "x {mapper}" --direction higher
expect_in err "--direction applies to a --metric"
expect_rc 1 "$M" tune circuit:small --out x2.map --db r.db --run './app {mapper} > log'
expect_in err "--run:1:16: error: '>' is shell syntax"
expect_rc 1 "$M" tune circuit:small --out x2.map --db r.db --run '/nonexistent/app {mapper}'
expect_in err "the command cannot be run: /nonexistent/app"

# bench: the table, every run in the database, reused when rerun
expect_rc 0 "$M" bench --apps circuit,stencil --size small --optimizers random --budget 4 --runs 2 --db b.db
expect_in out "mapopt bench: machine p100x4, budget 4, seeds 0..1 (2 runs each), batch each optimizer's own, size small"
expect_in out "benchmark      optimizer     mean      std    worst   median     best  valid"
expect_in out "circuit:small  random@4 "
expect_in out "stencil:small  random@4 "
expect_in out "  2/2"
expect_in err "circuit random seed 1: "
cp out bench1.txt
expect_rc 0 "$M" bench --apps circuit,stencil --size small --optimizers random --budget 4 --runs 2 --db b.db --json
expect_in out '"seeds": ['
expect_in out '"row": "random@4"'
expect_in out '"valid": 2'
expect_in err "(run 4, from the database)"
expect_rc 0 "$M" bench --apps circuit,stencil --size small --optimizers random --budget 4 --runs 2 --db b.db --quiet
if cmp -s out bench1.txt; then ok; else bad "a rerun bench printed another table"; fi
expect_rc 2 "$M" bench --optimizers nosuch; expect_in err "unknown optimizer 'nosuch'"
expect_rc 2 "$M" bench --feedback raw,loud; expect_in err "unknown feedback level 'loud'"
expect_rc 2 "$M" bench --runs 0;    expect_in err "--runs must be an integer from 1"
expect_rc 2 "$M" bench --bogus;     expect_in err "unknown argument '--bogus'"
expect_rc 1 "$M" bench --apps nosuch --db b.db; expect_in err 'unknown application "nosuch"'

# report: one self-contained page, the same bytes for the same database
expect_rc 0 "$M" report b.db --html r.html
expect_in r.html '<polyline class="curve" data-optimizer="random@4"'
expect_in r.html '<table class="summary">'
expect_in r.html "The best mapper found"
if grep -Eq 'src=|href=|url\(|@import' r.html; then bad "the report loads resources"; else ok; fi
expect_rc 0 "$M" report b.db --html r2.html
if cmp -s r.html r2.html; then ok; else bad "report is not deterministic"; fi
expect_rc 2 "$M" report b.db;       expect_in err "give --html OUT.html"
expect_rc 2 "$M" report;            expect_in err "no database given"
expect_rc 1 "$M" report missing.db --html r.html
expect_in err "missing.db: error: cannot read file"
if [ -e missing.db ]; then bad "report created a database"; else ok; fi
expect_rc 1 "$M" report text.db --html r.html
expect_rc 1 "$M" report b.db --html /nonexistent/r.html
expect_in err "/nonexistent/r.html: error: cannot write the report"

# ---- hardening (docs/limits.md) ----------------------------------------------
# `--` ends the options: the files before it are checked too.
printf 'Task * GPU;\n' > good2.map
printf 'Task * GPU\n' > bad2.map
expect_rc 1 "$M" check bad2.map -- good2.map
expect_in err "bad2.map:2:1: error: syntax error"
printf 'Task * GPU;\n' > ./-dash.map
expect_rc 0 "$M" check good2.map -- -dash.map
# Output that cannot be written fails the command, with a message.
if [ -w /dev/full ]; then
  for cmd in "fmt good2.map" "check --json good2.map" "machine show p100x4" \
             "sim circuit:small" "apps --export circuit"; do
    # shellcheck disable=SC2086
    "$M" $cmd >/dev/full 2>err; rc=$?
    if [ "$rc" = 1 ]; then ok; else bad "'$cmd > /dev/full' exited $rc"; fi
    expect_in err "mapopt: error: cannot write the output"
  done
  expect_rc 1 "$M" sim circuit:small --report /dev/full
  expect_in err "/dev/full: error: cannot write the report: No space left on device"
  expect_rc 1 "$M" sim circuit:small --trace /dev/full
  expect_in err "/dev/full: error: cannot write the trace: No space left on device"
  expect_rc 1 "$M" machine probe --output /dev/full
  expect_in err "cannot write /dev/full: No space left on device"
  if grep -q wrote out; then bad "machine probe said it wrote /dev/full"; else ok; fi
fi
# fmt -i: a link is rewritten through, a FIFO or a folder is refused (and a
# FIFO must not hang), a 245-byte name works, no temporary file is left.
printf 'x   =  1 ;\n' > target.map
ln -s target.map link.map
expect_rc 0 "$M" fmt -i link.map
if [ -L link.map ]; then ok; else bad "fmt -i replaced the link"; fi
expect_in target.map "x = 1;"
mkfifo fifo.map
expect_rc 1 timeout 10 "$M" fmt -i fifo.map
expect_in err "fifo.map: error: not a regular file (fmt -i rewrites regular files only)"
mkdir folder.map
expect_rc 1 "$M" fmt -i folder.map;  expect_in err "folder.map: error: is a directory"
expect_rc 1 "$M" check folder.map;   expect_in err "folder.map: error: cannot read file: Is a directory"
long=$(printf '%0241d' 0 | tr 0 a).map
printf 'y  = 2 ;\n' > "$long"
expect_rc 0 "$M" fmt -i "$long";     expect_in "$long" "y = 2;"
if [ "$(ls -a | grep -c -e tmp -e '^\.mapopt-')" = 0 ]; then ok; else bad "fmt -i left a temporary file"; fi
# A parameter given twice is an error, for apps as for machines.
expect_rc 1 "$M" sim circuit:small,P=4,P=8
expect_in err 'parameter "P" is given twice in "small,P=4,P=8"'
expect_rc 1 "$M" machine show 'lassen:nodes=2,nodes=4'
expect_in err "given twice"
# Names with control characters are shown escaped, never sent raw.
esc=$(printf 'x\033[31mred.map')
expect_rc 1 "$M" check "$esc"
expect_in err 'x\x1B[31mred.map: error: cannot read file'
if grep -q "$(printf '\033')" err; then bad "an escape character reached stderr"; else ok; fi
expect_rc 1 "$M" report "$esc" --html r.html
expect_in err 'x\x1B[31mred.map: error: cannot read file'
if grep -q "$(printf '\033')" err; then bad "report sent an escape character"; else ok; fi
expect_rc 2 "$M" "$esc"
expect_in err "unknown command 'x\x1B[31mred.map'"
# The one-line machine form is bounded like the presets.
expect_rc 1 "$M" machine show 'nodes=1048576 gpu=4 cpu=4'
expect_in err "too large: at most nodes=1024"

finish
