#!/bin/sh
# The main job of `make demo`. Until the tuner lands (`mapopt tune
# circuit`), it checks the shipped example mappers and shows the decisions
# one of them makes on a 2-node, 4-GPU machine, with its evaluation trace.
set -e
M=${1:-build/mapopt}
echo "== mapopt check mappers/examples/*.map"
"$M" check mappers/examples/*.map
echo "all example mappers are valid"
echo
echo "== mapopt show mappers/examples/decomp2d.map (point (3, 1) of a 4x4 launch)"
"$M" show mappers/examples/decomp2d.map --machine 'nodes=2 gpu=4 cpu=8 omp=2' \
  --task task_1 --point 3,1 --space 4,4 --region a --dims 2
