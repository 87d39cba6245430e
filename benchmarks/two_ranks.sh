#!/usr/bin/env bash
# A stand-in for `mpirun -np 2 APP ARGS...` without MPI: starts APP twice at once, with
# OMPI_COMM_WORLD_RANK=0 and 1 (and OMPI_COMM_WORLD_SIZE=2) in the environment, and fails
# if either rank fails. Used to check that `drgpu profile` writes one report per rank.
set -u
pids=()
for r in 0 1; do
  OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 "$@" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
