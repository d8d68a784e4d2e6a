#!/bin/sh
# The main job of `make demo`. Until the tuner lands (`mapopt tune
# circuit`), it checks the shipped mappers, shows where one of them places a
# point, and simulates the circuit benchmark under its expert mapper and
# under the mapper that keeps shared data in framebuffer memory.
set -e
M=${1:-build/mapopt}
echo "== mapopt check mappers/examples/*.map"
"$M" check mappers/examples/*.map
echo "all example mappers are valid"
echo
echo "== mapopt show mappers/examples/decomp2d.map (point (3, 1) of a 4x4 launch)"
"$M" show mappers/examples/decomp2d.map --machine 'nodes=2 gpu=4 cpu=8 omp=2' \
  --task task_1 --point 3,1 --space 4,4 --region task_1 a --dims 2
echo
echo "== mapopt sim circuit (expert mapper, p100x4)"
"$M" sim circuit
if [ -f mappers/circuit/alt-fb.map ]; then
  echo
  echo "== mapopt sim circuit --mapper mappers/circuit/alt-fb.map"
  "$M" sim circuit --mapper mappers/circuit/alt-fb.map
fi
