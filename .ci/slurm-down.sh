#!/usr/bin/env bash
# Stops the daemons .ci/slurm-up.sh DIR started.
dir=$1
for d in slurmd slurmctld; do
  [ -f "$dir/run/$d.pid" ] && kill "$(cat "$dir/run/$d.pid")" 2>/dev/null
done
exit 0
