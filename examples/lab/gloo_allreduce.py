"""A small PyTorch Gloo allreduce for the lab (examples/lab/gloo-check.sh).

    python3 gloo_allreduce.py BYTES

Started by the launch.sh that `provisioner submit` writes, which exports
RANK, LOCAL_RANK, GLOO_SOCKET_IFNAME (when the plan names the NIC's
netdev) from rank-env.csv; WORLD_SIZE, MASTER_ADDR and MASTER_PORT come
from the Job's environment. Every rank reduces BYTES of float32 with
torch.distributed's Gloo backend (env:// rendezvous). One allreduce first
sets up Gloo's connections; then rank 0 marks: it writes a line on the Unix
socket $EFLOPS_LAB_MARK and waits for the lab's "go" (the lab reads every
link's byte counters in between); all ranks run one allreduce between two
barriers, and rank 0 marks again. Every rank checks every element of both
results; rank 0 prints one JSON line.

Exit codes: 0 right, 1 a wrong element or a failed mark, 2 bad use.
"""

import json
import os
import socket
import sys
import time


def mark(sock, what):
    sock.sendall(what.encode() + b"\n")
    line = b""
    while not line.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            return False
        line += chunk
    return line == b"go\n"


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 4:
        print("usage: gloo_allreduce.py BYTES (at least 4)", file=sys.stderr)
        return 2
    import torch
    import torch.distributed as dist

    count = int(sys.argv[1]) // 4
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    # Whole numbers below 2^24 / world: every sum is exact in float32.
    base = torch.arange(count, dtype=torch.float32) % 1024
    expect = base * world + sum(range(world))

    wrong = 0
    warm = base + rank
    dist.all_reduce(warm)
    wrong += int((warm != expect).sum())

    sock = None
    path = os.environ.get("EFLOPS_LAB_MARK")
    if rank == 0 and path:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        if not mark(sock, "start"):
            print("gloo_allreduce: the lab did not answer the start mark", file=sys.stderr)
            return 1
    data = base + rank
    dist.barrier()
    t0 = time.monotonic()
    dist.all_reduce(data)
    dist.barrier()
    took = time.monotonic() - t0
    if sock is not None and not mark(sock, "end"):
        print("gloo_allreduce: the lab did not answer the end mark", file=sys.stderr)
        return 1
    wrong += int((data != expect).sum())
    total = torch.tensor([wrong], dtype=torch.int64)
    dist.all_reduce(total)
    if rank == 0:
        print(json.dumps({
            "ranks": world,
            "bytes": count * 4,
            "time_us": round(took * 1e6, 1),
            "wrong": int(total.item()),
            "torch": torch.__version__,
        }))
    dist.destroy_process_group()
    return 0 if int(total.item()) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
