"""The torchrun pattern: a launcher starts NPROC ranks of a program on this node with RANK,
LOCAL_RANK and WORLD_SIZE set, waits for all, and fails if any rank fails. As torchrun's
--nnodes/--node_rank, NNODES and NODE_RANK in the environment (default 1 and 0) make it one of
several nodes: WORLD_SIZE = NNODES * NPROC and RANK = NODE_RANK * NPROC + LOCAL_RANK.
Usage: torchrun_launcher.py NPROC PROGRAM [ARGS...]"""
import os
import subprocess
import sys


def main():
    nproc = int(sys.argv[1])
    nnodes = int(os.environ.get("NNODES", "1"))
    node = int(os.environ.get("NODE_RANK", "0"))
    procs = []
    for local in range(nproc):
        rank = node * nproc + local
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(nnodes * nproc))
        procs.append(subprocess.Popen(sys.argv[2:], env=env))
    codes = [p.wait() for p in procs]
    print(f"ranks exited with {codes}")
    return 0 if all(c == 0 for c in codes) else 1


if __name__ == "__main__":
    sys.exit(main())
