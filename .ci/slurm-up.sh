#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the class grader's test: Debian's slurmctld,
# slurmd and munge (installed when missing), a private slurm.conf in DIR, both daemons started.
#   .ci/slurm-up.sh DIR     then: export SLURM_CONF=DIR/slurm.conf;  .ci/slurm-down.sh DIR
set -euo pipefail
dir=$1
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  echo "installing Slurm and munge from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
fi
mkdir -p "$dir"/{state,spool,log,run}
cpus=$(nproc); mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
host=$(hostname -s)
cat > "$dir/slurm.conf" <<CONF
ClusterName=ladder-ci
SlurmctldHost=$host
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
chown munge:munge /etc/munge/munge.key 2>/dev/null || true
chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
pgrep -x munged >/dev/null || su -s /bin/sh munge -c munged 2>/dev/null || munged --force
slurmctld -f "$dir/slurm.conf"
slurmd -f "$dir/slurm.conf"
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 60); do
  if [ "$(sinfo -h -o %t 2>/dev/null || true)" = idle ]; then echo "slurm up: $(sinfo -h)"; exit 0; fi
  sleep 1
done
echo "Slurm did not come up:"; tail -20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log"; exit 1
