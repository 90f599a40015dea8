//! The scripts of the ConfigMap: `launch.sh` (indexed), and for the MPI
//! launcher `rank-env.sh`, `mpirun.sh` and `mpi-launch.sh`.

use std::fmt::Write as _;

use super::{MOUNT, RUN_DIR, engine_env};
use crate::jobs::job::JobSpec;
use crate::jobs::placement::Placement;

/// `launch.sh` before and after the rank's environment.
const LAUNCH_HEAD: &str = r#"#!/bin/sh
# Written by `provisioner submit`: starts one process per rank that this
# Node carries, with the rank's GPU, NIC and traffic class from
# rank-env.csv. Ranks follow the Node (NODE_NAME), not the completion index.
set -eu
table="${EFLOPS_DIR:-/etc/eflops}/rank-env.csv"
if [ "${1:-}" = "--" ]; then shift; fi
: "${NODE_NAME:?NODE_NAME must come from the Downward API (spec.nodeName)}"
count=$(awk -F, -v n="$NODE_NAME" 'NR > 1 && $2 == n { c++ } END { print c + 0 }' "$table")
if [ "$count" -eq 0 ]; then
  echo "launch.sh: Node $NODE_NAME carries no rank of this job (see ranks.csv); the pod landed outside the placement" >&2
  exit 2
fi
EFLOPS_RANKS=$(awk -F, -v n="$NODE_NAME" 'NR > 1 && $2 == n { printf "%s%s", sep, $1; sep = "," }' "$table")
export EFLOPS_RANKS
# A rank that fails stops the others (their peers would wait forever):
# it leaves a mark, signals the process group, and this script exits 1.
# The mark covers a rank whose subshell is forked but has not yet reset
# its TERM trap when the signal comes (the shell may drop that signal), so
# it stays after a failure: such a subshell may first run after this
# script has exited (one empty file per failed run, gone with the pod).
failed="${TMPDIR:-/tmp}/eflops-launch.$$.failed"
rm -f "$failed"
trap 'echo "launch.sh: a rank failed; stopped the other ranks of $NODE_NAME" >&2; exit 1' TERM
pids=""
while IFS=, read -r rank node local slot cvd hca tc gid ifname lrank lsize; do
  [ "$rank" = rank ] && continue
  [ "$node" = "$NODE_NAME" ] || continue
  (
    trap - TERM
    if [ -e "$failed" ]; then exit 143; fi
"#;
const LAUNCH_TAIL: &str = r#"    echo "launch.sh: rank $rank (local $local, slot $slot) on $NODE_NAME: GPU $cvd, NIC $hca" >&2
    status=0
    "$@" < /dev/null || status=$?
    if [ "$status" -ne 0 ]; then
      echo "launch.sh: rank $rank exited with status $status" >&2
      : > "$failed"
      kill -TERM 0
    fi
    exit "$status"
  ) &
  pids="$pids $!"
done < "$table"
for pid in $pids; do
  wait "$pid"
done
rm -f "$failed"
"#;

/// The lines both scripts run to give a rank its environment from its row
/// of rank-env.csv (the shell variables `rank`, `local`, `slot`, `cvd`,
/// `hca`, `tc`, `gid`, `ifname`, `lrank`, `lsize`).
const RANK_ENVIRONMENT: &str = r#"# The GPUs the process sees (its own, or every GPU of the Node when the
# job's unit is the server) and its device among them
# (torch.cuda.set_device(LOCAL_RANK)).
cvd=$(printf '%s' "$cvd" | tr : ,)
export RANK="$rank" LOCAL_RANK="$lrank" LOCAL_WORLD_SIZE="$lsize" EFLOPS_LOCAL_RANK="$local" CUDA_VISIBLE_DEVICES="$cvd"
# NCCL's CTS messages leave with the rank's own traffic class
# (NCCL_IB_FIFO_TC, NCCL 2.22.3 and later), as the QoS proof assumes.
export NCCL_IB_HCA="$hca" NCCL_IB_TC="$tc" NCCL_IB_GID_INDEX="$gid"
if [ -n "$tc" ]; then export NCCL_IB_FIFO_TC="$tc"; fi
# Gloo (PyTorch's CPU backend) binds to GLOO_SOCKET_IFNAME, a plain
# interface name (NCCL's leading `=` means "exactly this one").
if [ -n "$ifname" ]; then export NCCL_SOCKET_IFNAME="$ifname" GLOO_SOCKET_IFNAME="${ifname#=}"; fi
"#;

/// The lines that export `NCCL_TOPO_FILE` as the ConfigMap's
/// `<node>.nccl-topo.xml` of the rank's Node (`node`, a shell expression),
/// where the job ships one (docs/provisioner.md, "NCCL topology file").
fn topology_lines(node: &str) -> String {
    format!(
        "# NCCL's PCIe tree of this Node's server (NCCL_TOPO_FILE), shipped in\n\
         # the ConfigMap where the plan gives its PCI bus ids.\n\
         topo=\"${{EFLOPS_DIR:-/etc/eflops}}/{node}.nccl-topo.xml\"\n\
         if [ -f \"$topo\" ]; then export NCCL_TOPO_FILE=\"$topo\"; fi\n"
    )
}

/// [`RANK_ENVIRONMENT`], plus [`topology_lines`] with `topology`, each line
/// indented by `indent`.
fn rank_environment(indent: &str, node: &str, topology: bool) -> String {
    let mut lines = RANK_ENVIRONMENT.to_string();
    if topology {
        lines.push_str(&topology_lines(node));
    }
    lines.lines().map(|l| format!("{indent}{l}\n")).collect()
}

/// `launch.sh`: starts one process per rank of this Node (indexed
/// launcher, and a DRA job whose unit is the server). With `topology`,
/// each rank exports its Node's NCCL topology file.
pub(super) fn launch_sh(topology: bool) -> String {
    format!(
        "{LAUNCH_HEAD}{}{LAUNCH_TAIL}",
        rank_environment("    ", "$NODE_NAME", topology)
    )
}

/// `rank-env.sh`: run by mpirun for every rank (mpi launcher). With
/// `topology`, the rank exports its Node's NCCL topology file.
pub(super) fn rank_env_sh(topology: bool) -> String {
    format!(
        "{RANK_ENV_HEAD}{}{RANK_ENV_TAIL}",
        rank_environment("", "$node", topology)
    )
}

/// `rank-env.sh` before and after the rank's environment.
const RANK_ENV_HEAD: &str = r#"#!/bin/sh
# Written by `provisioner submit`: run by mpirun for every rank. Checks that
# the rank runs on the Node the rank table names, exports the rank's GPU,
# NIC and traffic class from rank-env.csv, and starts the program.
set -eu
rank="${OMPI_COMM_WORLD_RANK:?rank-env.sh runs under mpirun}"
actual=$(cat "${EFLOPS_RUN:-/var/run/eflops}/node")
line=$(awk -F, -v r="$rank" 'NR > 1 && $1 == r' "${EFLOPS_DIR:-/etc/eflops}/rank-env.csv")
if [ -z "$line" ]; then
  echo "rank check failed: rank $rank is not in the rank table (rank-env.csv)" >&2
  exit 2
fi
IFS=, read -r _ node local slot cvd hca tc gid ifname lrank lsize <<EOF
$line
EOF
if [ "$node" != "$actual" ]; then
  echo "rank check failed: rank $rank belongs on Node $node but runs on Node $actual: the placement drifted; delete the job and submit it again" >&2
  exit 2
fi
"#;
const RANK_ENV_TAIL: &str = r#"# Open MPI's own traffic on this rank's NIC only, read by every rank at
# MPI_Init (OMPI_MCA_* in its environment, Open MPI 4.1 and 5.0): TCP on
# its netdev, verbs (btl/openib) and UCX on its RDMA device, port 1.
dev=${hca#=}
if [ -n "$dev" ]; then
  export OMPI_MCA_btl_openib_if_include="$dev" UCX_NET_DEVICES="$dev:1"
fi
# UCX (pml/ucx) marks everything this rank's queue pairs send (data,
# RDMA-read responses, ACKs) with its own interface's class, never the
# peer's (UCX 1.22.0, src/uct/ib/base/ib_iface.c TRAFFIC_CLASS): the
# rank's class keeps the per-direction QoS proof (planner check-qos).
if [ -n "$tc" ]; then export UCX_IB_TRAFFIC_CLASS="$tc"; fi
if [ -n "$ifname" ]; then export OMPI_MCA_btl_tcp_if_include="${ifname#=}"; fi
exec "$@"
"#;

/// The launcher's mpirun: the rankfile it is given, Open MPI's
/// Rabenseifner allreduce forced in coll/tuned, the job's variables
/// passed on, and every rank started by `rank-env.sh`.
///
/// - `coll_tuned_use_dynamic_rules 1` with `coll_tuned_allreduce_algorithm
///   6` forces Rabenseifner (reduce-scatter by recursive halving,
///   all-gather by recursive doubling; `ompi/mca/coll/base/
///   coll_base_allreduce.c`, `ompi_coll_base_allreduce_intra_redscat_allgather`,
///   v4.1.x and v5.0.x) whatever the message size; a ring job forces
///   algorithm 4 (`ompi_coll_base_allreduce_intra_ring`, rank r sends to
///   r + 1), the schedule its table is made for.
/// - `coll ^han,hcoll,ucc,acoll,xhc,adapt`: the components that could take
///   MPI_Allreduce from tuned are left out (han is hierarchical and comes
///   first in Open MPI 5: priority 35 against tuned's 30 at v5.0.10,
///   `coll_han_component.c` and `coll_tuned_component.c`; hcoll (90), ucc,
///   acoll and xhc bring their own algorithms; "the priorities may be
///   adjusted ... to override component selection", docs.open-mpi.org
///   v5.0.x, Tuning Collectives). Naming a component a build lacks (acoll
///   and xhc are not in v5.0.x) is no error: only an include list is
///   checked for unknown names (`opal/mca/base/mca_base_component_find.c`,
///   v5.0.10; Open MPI 4.1.4 here). The cuda component (78) stays: it
///   stages device buffers and calls tuned underneath. A test holds these
///   flags to the parameters as v5.0.10 declares them.
/// - `--allow-run-as-root` when the launcher runs as root, as in most
///   launcher images (mpirun refuses root without it, 4.1 and 5.0).
pub(super) fn mpirun_sh(job: &JobSpec, placement: &Placement) -> String {
    let ranks = placement.ranks.len();
    let (number, name) = match job.algorithm.info().rank_schedule {
        Some(planner::algorithm::RankSchedule::Ring) => (4, "ring"),
        _ => (6, "Rabenseifner (halving-doubling)"),
    };
    let mut exports = format!(
        " -x CUDA_DEVICE_ORDER -x {} -x {}",
        crate::probe::auth::ENV,
        crate::probe::auth::AUTH_ENV
    );
    for k in engine_env(job)
        .iter()
        .map(|(k, _)| *k)
        .chain(job.env.keys().map(String::as_str))
    {
        let _ = write!(exports, " -x {k}");
    }
    format!(
        r#"#!/bin/sh
# Written by `provisioner submit`: runs mpirun with the rankfile given
# (mpi-launch.sh writes it from where the workers landed), Open MPI's
# {name} allreduce forced in coll/tuned
# (coll_tuned_allreduce_algorithm {number}) with the components that would take
# allreduce from tuned left out, and every rank started by rank-env.sh.
set -eu
rankfile="${{1:?mpirun.sh RANKFILE COMMAND...}}"
shift
if [ "${{1:-}}" = "--" ]; then shift; fi
dir="${{EFLOPS_DIR:-{mount}}}"
ranks={ranks}
port={port}
root=""
if [ "$(id -u)" -eq 0 ]; then root="--allow-run-as-root"; fi
exec mpirun $root -np "$ranks" --rankfile "$rankfile" \
  --mca plm_rsh_args "-p $port -o ConnectionAttempts=10" \
  --mca coll ^han,hcoll,ucc,acoll,xhc,adapt \
  --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm {number} \
 {exports} \
  sh "$dir/rank-env.sh" "$@"
"#,
        port = job.ssh_port,
        mount = MOUNT,
    )
}

/// The launcher's script: rankfile from where the workers landed, then
/// `mpirun.sh` with it.
pub(super) fn mpi_launch_sh(job: &JobSpec, placement: &Placement) -> String {
    let workers = placement.nodes.len();
    let ranks = placement.ranks.len();
    format!(
        r#"#!/bin/sh
# Written by `provisioner submit`: builds the Open MPI rankfile from the
# Nodes the workers actually landed on, checks it against the rank table,
# and runs mpirun through mpirun.sh (the rank table's allreduce forced).
set -eu
if [ "${{1:-}}" = "--" ]; then shift; fi
job={job}
namespace={namespace}
workers={workers}
ranks={ranks}
port={port}
dir="${{EFLOPS_DIR:-{mount}}}"
rankfile="${{TMPDIR:-/tmp}}/eflops-rankfile"
: > "$rankfile"
seen=" "
i=0
while [ "$i" -lt "$workers" ]; do
  host="$job-worker-$i.$job.$namespace.svc"
  tries=0
  node=""
  while [ -z "$node" ]; do
    node=$(ssh -p "$port" -o BatchMode=yes -o StrictHostKeyChecking=no "$host" cat {run}/node 2>/dev/null || true)
    if [ -z "$node" ]; then
      tries=$((tries + 1))
      if [ "$tries" -ge 60 ]; then
        echo "mpi-launch.sh: cannot read the Node of worker $host over ssh (port $port) after 5 minutes" >&2
        exit 2
      fi
      sleep 5
    fi
  done
  case "$seen" in
    *" $node="*)
      other=${{seen#*" $node="}}
      echo "rank check failed: workers ${{other%% *}} and $host both run on Node $node; each Node of the placement takes one worker" >&2
      exit 2
      ;;
  esac
  seen="$seen $node=$host "
  lines=$(awk -F, -v n="$node" -v h="$host" 'NR > 1 && $2 == n {{ print "rank " $1 "=" h " slot=" $4 }}' "$dir/rank-env.csv")
  if [ -z "$lines" ]; then
    echo "rank check failed: worker $host runs on Node $node, which carries no rank of this job (see ranks.csv)" >&2
    exit 2
  fi
  printf '%s\n' "$lines" >> "$rankfile"
  echo "mpi-launch.sh: worker $host is on Node $node" >&2
  i=$((i + 1))
done
found=$(awk 'END {{ print NR }}' "$rankfile")
if [ "$found" -ne "$ranks" ]; then
  echo "rank check failed: the workers' Nodes carry $found ranks, not $ranks (see ranks.csv)" >&2
  exit 2
fi
exec sh "$dir/mpirun.sh" "$rankfile" "$@"
"#,
        job = job.name,
        namespace = job.namespace,
        port = job.ssh_port,
        run = RUN_DIR,
        mount = MOUNT,
    )
}
