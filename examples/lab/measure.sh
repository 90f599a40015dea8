#!/usr/bin/env bash
# Measures ring, hd and hdrm in the lab beside `planner simulate` with the
# lab's rate and its measured per-message latency (docs/lab.md, "Prediction
# against measurement"). Needs root and a release build:
#   cargo build --release -p planner -p provisioner
#   sudo examples/lab/measure.sh [RATE] > measured.tsv
# RATE (100mbit, ...) is the rate of every NIC cable; without it each lab
# takes its default (`provisioner lab up --help`). Prints one TSV row per
# plan, algorithm and size.
set -euo pipefail
cd "$(dirname "$0")/../.."
rate=${1:-}
bin=target/release
state=$(mktemp -d)
trap 'for n in m1 m2 m3; do "$bin/provisioner" lab down --name $n --state-dir "$state" >/dev/null 2>&1 || true; done; rm -rf "$state"' EXIT
sizes=8B,1MiB,4MiB
printf 'plan\trate_kbit\talgorithm\tranks\tbytes\tmeasured_us\tlatency_us\tpredicted_us\n'
i=0
for plan in bigraph-2x8 eflops-4x16 fat-tree-16; do
    i=$((i + 1))
    name=m$i
    file=examples/data/$plan.plan.json
    kbit=$("$bin/provisioner" lab up "$file" ${rate:+--rate "$rate"} --name $name --state-dir "$state" --format json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["rate_kbit"])')
    algs="ring hd hdrm"
    [ "$plan" = fat-tree-16 ] && algs="ring hd"
    for alg in $algs; do
        out=$("$bin/provisioner" lab run --name $name --state-dir "$state" --algorithm $alg \
            --size $sizes --no-count --warmup 1 --iters 3 --format json)
        # Per-message latency: the 8-byte allreduce over its steps.
        read -r ranks lat < <(python3 -c '
import json, sys
r = json.loads(sys.argv[1]); p = r["ranks"]
steps = 2 * (p - 1) if r["algorithm"] == "ring" else 2 * (p.bit_length() - 1)
t8 = [t for t in r["timed"] if t["bytes"] == 8][0]["time_us"]
print(p, round(t8 / steps, 1))' "$out")
        pred=$("$bin/planner" simulate "$file" --algorithm $alg --size 1MiB,4MiB \
            --param "link_gbps=$(python3 -c "print($kbit/1e6)"),nic_us=$lat" --format json)
        python3 -c '
import json, sys
r = json.loads(sys.argv[1]); p = json.loads(sys.argv[2])
rows = p if isinstance(p, list) else p.get("rows", p)
pred = {}
for row in rows:
    pred[int(row.get("bytes", row.get("size_bytes", 0)))] = row.get("time_us")
for t in r["timed"]:
    if t["bytes"] == 8: continue
    print("\t".join(map(str, [sys.argv[3], sys.argv[5], r["algorithm"], r["ranks"], t["bytes"],
        round(t["time_us"], 1), sys.argv[4], pred.get(t["bytes"], "")])))
' "$out" "$pred" "$plan" "$lat" "$kbit"
    done
    "$bin/provisioner" lab down --name $name --state-dir "$state" >/dev/null
done
