#!/bin/sh
# Runs one MPI rank of a StarPU program with a StarPU home of its own:
#   mpirun -np 2 sh apps/starpu/rank.sh PROGRAM ARGS...
# Ranks that share a STARPU_HOME calibrate the bus at the same time, and one
# may read a file the other is still writing (StarPU 1.3.10 then aborts in
# check_bus_affinity_file). With STARPU_HOME set, the rank uses the folder
# rank<N> in it, which stays for the next run (dmda's performance models
# live there); without, a new temporary folder, removed when the rank ends.
if [ -n "${STARPU_HOME:-}" ]; then
  STARPU_HOME=$STARPU_HOME/rank${OMPI_COMM_WORLD_RANK:-0}
  mkdir -p "$STARPU_HOME" || exit 1
  export STARPU_HOME
  exec "$@"
fi
STARPU_HOME=$(mktemp -d) || exit 1
export STARPU_HOME
"$@"
rc=$?
rm -rf "$STARPU_HOME"
exit $rc
