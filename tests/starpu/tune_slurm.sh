#!/bin/sh
# `mapopt tune stencil --run 'srun -N1 -n2 ... stencil-starpu -mapping
# {mapper}' --jobs 2` through a real Slurm (docs/real.md, "On a cluster"):
# the test starts a one-node cluster of its own on this machine -- munged
# with its own key, socket and files, slurmctld and slurmd in the
# foreground (-D) with a slurm.conf in a temporary folder, on free ports --
# tunes through it, and stops the daemons at the end. Every candidate and
# yardstick is a Slurm job of two tasks (PMIx) that checks its grid
# against a serial computation.
#
# Exit 77 (skipped) only when Slurm cannot start here, with the reason:
# its programs are missing (apt-get install slurm-wlm munge), this is not
# root (slurmd launches the tasks as their user), or the daemons do not
# come up (their logs are printed).
# Usage: tune_slurm.sh MAPOPT STENCIL_STARPU REPO_ROOT
set -u
M=$1
PROG=$2
ROOT=$3

skip() {
  echo "SKIP: Slurm cannot start here: $*"
  exit 77
}
for p in munged slurmctld slurmd srun sinfo scontrol; do
  command -v $p > /dev/null ||
    skip "no $p program (apt-get install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "not root: slurmd must run as root to start tasks as their user"
command -v sqlite3 > /dev/null || skip "no sqlite3 program, which reads the database"

D=$(mktemp -d)
PIDS=""
# Whether process $1 runs (a zombie, ended but not yet waited for, does
# not).
alive() {
  [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2> /dev/null
}
# Stops the daemons this script started (SIGTERM, SIGKILL after 10 s).
stop() {
  for p in $PIDS; do kill "$p" 2> /dev/null; done
  for p in $PIDS; do
    n=0
    while alive "$p" && [ $n -lt 100 ]; do
      sleep 0.1
      n=$((n + 1))
    done
    kill -9 "$p" 2> /dev/null
  done
  wait 2> /dev/null
  PIDS=""
}
trap 'stop; rm -rf "$D"' EXIT
cd "$D" || exit 1

# munge, with its own key and socket: nothing of the machine's is used.
if command -v mungekey > /dev/null; then
  mungekey -c -k munge.key -b 1024 || skip "mungekey failed"
else
  dd if=/dev/urandom of=munge.key bs=1024 count=1 2> /dev/null
fi
chmod 600 munge.key
munged --key-file="$D/munge.key" --socket="$D/munge.sock" \
  --pid-file="$D/munged.pid" --log-file="$D/munged.log" \
  --seed-file="$D/munge.seed" --force ||
  skip "munged did not start: $(tail -n 5 munged.log 2> /dev/null)"
PIDS=$(cat munged.pid)

# A free TCP port above 20000 (none in `ss -ltn`, where ss exists); a port
# taken between the look and slurmctld's bind is caught below and retried.
free_port() {
  while :; do
    p=$(($(od -An -N2 -tu2 /dev/urandom) % 40000 + 20000))
    if ! command -v ss > /dev/null || ! ss -ltnH | awk '{ print $4 }' | grep -q ":$p\$"; then
      echo $p
      return
    fi
  done
}

H=$(hostname)
export SLURM_CONF="$D/slurm.conf"
# Waits up to 30 s for the node to be idle; false if it is not.
wait_idle() {
  n=0
  while [ $n -lt 150 ]; do
    [ "$(sinfo -h -o %t 2> /dev/null)" = idle ] && return 0
    for p in $PIDS; do alive "$p" || return 1; done
    sleep 0.2
    n=$((n + 1))
  done
  return 1
}
started=0
for try in 1 2 3; do
  rm -rf state spool
  mkdir state spool
  cat > slurm.conf << EOF
ClusterName=mapopt
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$H NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$H Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  slurmctld -D -f "$D/slurm.conf" > slurmctld.out 2>&1 &
  C=$!
  slurmd -D -f "$D/slurm.conf" > slurmd.out 2>&1 &
  S=$!
  PIDS="$C $S $(cat munged.pid)"
  if wait_idle; then
    started=1
    break
  fi
  echo "tune_slurm.sh: attempt $try: the node did not come up"
  tail -n 5 slurmctld.log slurmd.log slurmctld.out slurmd.out 2> /dev/null
  kill $C $S 2> /dev/null
  wait $C $S 2> /dev/null
  PIDS=$(cat munged.pid)
done
[ $started = 1 ] || skip "slurmctld and slurmd did not bring the node up in 3 tries (logs above)"
echo "ok: a one-node Slurm is up: $(sinfo -h -o '%P %a %D %t %N')"

fail=0
check() { # WHAT CONDITION...
  what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
q() { sqlite3 t.db "$1" 2> /dev/null; }

check "srun runs a job of two tasks" \
  [ "$(timeout 60 srun -N1 -n2 --mpi=pmix sh -c 'echo $SLURM_PROCID' | sort | tr '\n' ' ')" = "0 1 " ]

RUN="srun -N1 -n2 --mpi=pmix --kill-on-bad-exit=1 \
--export=ALL,STARPU_NCPU=1,STARPU_WORKERS_NOBIND=1,STARPU_SILENT=1,\
STARPU_WATCHDOG_TIMEOUT=30000000,STARPU_WATCHDOG_CRASH=1,ASAN_OPTIONS=detect_leaks=0 \
sh $ROOT/apps/starpu/rank.sh $PROG -nx 68 -ny 68 -tsteps 3 -tprune 1 -mapping {mapper}"
timeout -s INT -k 30 240 "$M" tune stencil:small,nx=68,ny=68,tsteps=3 \
  --machine 'nodes=2 cpu=1 rdmem=0' --budget 3 --jobs 2 --db t.db \
  --out best.map --timeout 60 --repeat-max 2 --check 2 --run "$RUN" > out 2> err
RC=$?
cat out err
check "mapopt tune exited 0" [ "$RC" = 0 ]
check "3 evaluations recorded" [ "$(q 'SELECT COUNT(*) FROM evaluations')" = 3 ]
n_ok=$(q "SELECT COUNT(*) FROM evaluations WHERE status = 'ok'")
check "some candidate ran" [ "${n_ok:-0}" -ge 1 ]
check "every successful run checked its result" [ "$(q "SELECT COUNT(*) FROM \
outputs JOIN evaluations USING (run, iteration) WHERE status = 'ok' AND \
output LIKE '%check: 68 x 68 grid after 4 steps equals the serial%'")" = "$n_ok" ]
check "the default mapper ran as a yardstick" [ -n "$(q 'SELECT default_score FROM runs')" ]
check "the final check was made" [ "$(q "SELECT rounds FROM checks WHERE baseline = 'default'")" = 2 ]
check "the best mapper was written" grep -q "^# The best mapper of" best.map
# Every run went through Slurm: as many jobs ended as runs were made (the
# evaluations' and the baselines' runs, the final check's, and the srun
# above).
runs=$(q "SELECT COALESCE(SUM(runs), 0) FROM evaluations")
jobs=$(grep -c "_job_complete: JobId=[0-9]* done" slurmctld.log)
check "every run was a Slurm job ($jobs jobs for $runs evaluation runs)" [ "$jobs" -gt "$runs" ]
stop
check "the daemons are stopped" sh -c "! [ -d /proc/$C ] && ! [ -d /proc/$S ]"
exit $fail
