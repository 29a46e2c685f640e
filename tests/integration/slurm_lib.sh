# Shared by the tests that bring up a private Slurm cluster (boot/boot_slurm.sh
# on localhost, fleet/fleet_bed.sh on network namespaces); sourced after
# lib.sh (PIDS: what finish stops).

# slurm_munge D: a munge key of its own and munged on D/munge/munge.sock,
# waited for until its socket is there.
slurm_munge() {
    local d=$1/munge
    mkdir -p "$d"
    mungekey --create --keyfile "$d/munge.key" >/dev/null 2>&1 && chmod 600 "$d/munge.key"
    munged -F -f --key-file="$d/munge.key" --socket="$d/munge.sock" --pid-file="$d/munged.pid" \
        --log-file="$d/munged.log" --seed-file="$d/seed" >"$1/munged.out" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 50); do [ -S "$d/munge.sock" ] && break; sleep 0.1; done
}

# slurm_conf D CLUSTER CTLD_HOST CTLD_PORT SLURMD_PORT: the slurm.conf lines
# both clusters share (munge from slurm_munge, root daemons, state, logs and
# spool under D, one per slurmd by %n; no cgroups, no accounting), to stdout;
# the caller adds its NodeName and PartitionName lines.
slurm_conf() {
    cat <<CONF
ClusterName=$2
SlurmctldHost=$3
SlurmctldPort=$4
SlurmdPort=$5
AuthType=auth/munge
AuthInfo=socket=$1/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$1/state
SlurmdSpoolDir=$1/spool/%n
SlurmctldPidFile=$1/slurmctld.pid
SlurmdPidFile=$1/slurmd.%n.pid
SlurmctldLogFile=$1/slurmctld.log
SlurmdLogFile=$1/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
CONF
}
