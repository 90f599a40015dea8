#!/usr/bin/env bash
# PyTorch's Gloo backend in the lab, started by the files `provisioner
# submit` writes (issue #32, item 8; docs/lab.md, "PyTorch and Gloo"). Not
# in CI: PyTorch from PyPI is the CUDA build, about 5 GB.
#
#   python3 -m venv /var/tmp/torch-venv && /var/tmp/torch-venv/bin/pip install torch
#   cargo build --release -p provisioner
#   sudo TORCH_PYTHON=/var/tmp/torch-venv/bin/python examples/lab/gloo-check.sh [RANKS] [BYTES]
#
# It brings up a lab of the 2x8 BiGraph with one sub-node per server
# (provisioner/tests/data/bigraph-2x8-1sn.plan.json, so a Node is one
# namespace), submits an Indexed Job with `engine = "gloo"` offline,
# writes its ConfigMap's files unmodified, and starts each Node's
# `launch.sh` in that Node's namespace (`lab exec`) with the Job's
# environment (NODE_NAME, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), all under
# `lab measure --engine gloo`, which sets every link's bytes beside the
# prediction for Gloo's ring on the submitted table. Exits non-zero when a
# rank computed a wrong element, a link differs from the prediction by more
# than 5 %, or the prediction puts two flows on one link in a step.
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks=${1:-16}
bytes=${2:-4194304}
python=${TORCH_PYTHON:-python3}
bin=${PROVISIONER:-target/release/provisioner}
plan=provisioner/tests/data/bigraph-2x8-1sn.plan.json
name=gloo

if [ "$(id -u)" -ne 0 ]; then
    echo "gloo-check.sh: run as root (a lab makes network namespaces)" >&2
    exit 2
fi
if ! "$python" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
    echo "gloo-check.sh: $python has no PyTorch with Gloo; install it (see the top of this script) or set TORCH_PYTHON" >&2
    exit 2
fi
if [ ! -x "$bin" ]; then
    echo "gloo-check.sh: no $bin; run \`cargo build --release -p provisioner\` or set PROVISIONER" >&2
    exit 2
fi
bin=$(realpath "$bin")

work=$(mktemp -d)
state="$work/state"
mkdir -p "$state"
trap '"$bin" lab down --name $name --state-dir "$state" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

"$bin" lab up "$plan" --name $name --state-dir "$state" --rate 100mbit >&2

cat > "$work/gloo.job.toml" <<EOF
name = "gloo-check"
namespace = "lab"
image = "registry.example.com/torch:cpu"
command = ["$python", "$PWD/examples/lab/gloo_allreduce.py"]
args = ["$bytes"]
ranks = $ranks
algorithm = "ring"
engine = "gloo"

[resources]
gpu = "nvidia.com/gpu"
EOF
"$bin" submit "$work/gloo.job.toml" --plan "$plan" --offline --format json \
    --secret-out "$work/secret.yaml" > "$work/submit.json"

# The ConfigMap's files, unmodified, and the Job container's environment
# (values only: the probe's secret is not used by Gloo) and command.
files="$work/files"
mkdir -p "$files"
python3 - "$work/submit.json" "$files" > "$work/job.env" <<'EOF'
import json, os, shlex, sys
items = json.load(open(sys.argv[1]))["items"]
cm = next(o for o in items if o["kind"] == "ConfigMap")
for name, text in cm["data"].items():
    with open(os.path.join(sys.argv[2], name), "w") as f:
        f.write(text)
job = next(o for o in items if o["kind"] == "Job")
c = job["spec"]["template"]["spec"]["containers"][0]
for e in c["env"]:
    if "value" in e:
        print(f"export {e['name']}={shlex.quote(e['value'])}")
words = c["command"][c["command"].index("--") + 1:] + c.get("args", [])
print("set -- " + " ".join(shlex.quote(w) for w in words))
EOF

# Every Node of the job, each running its launch.sh in its namespace.
nodes=$(awk -F, 'NR > 1 { print $2 }' "$files/rank-env.csv" | sort -u)
cat > "$work/start.sh" <<EOF
#!/bin/sh
set -eu
. "$work/job.env"
pids=""
for node in $(echo $nodes); do
    "$bin" lab exec --name $name --state-dir "$state" "\$node" -- \\
        env NODE_NAME="\$node" EFLOPS_DIR="$files" sh "$files/launch.sh" -- "\$@" &
    pids="\$pids \$!"
done
status=0
for pid in \$pids; do wait "\$pid" || status=1; done
exit \$status
EOF

"$bin" lab measure --name $name --state-dir "$state" \
    --table "$files/ranks.csv" --algorithm ring --engine gloo --bytes "$bytes" \
    --tolerance 0.05 --format json -- sh "$work/start.sh" > "$work/measure.json"

python3 - "$work/measure.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
used = sum(1 for l in r["links"] if l["bytes"] > 0)
print(f"gloo-check: exit {r['exit_code']}, {used} links used, "
      f"{r['mismatches']} differ from the prediction by more than 5 %, "
      f"predicted at most {r['predicted_max_flows']} flow(s) per link per step")
ok = r["exit_code"] == 0 and r["mismatches"] == 0 and r["predicted_max_flows"] == 1
sys.exit(0 if ok else 1)
EOF
