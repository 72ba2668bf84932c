"""The torchrun pattern: a launcher starts WORLD_SIZE ranks of a program with RANK,
LOCAL_RANK and WORLD_SIZE set, waits for all, and fails if any rank fails.
Usage: torchrun_launcher.py WORLD_SIZE PROGRAM [ARGS...]"""
import os
import subprocess
import sys


def main():
    world = int(sys.argv[1])
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
        procs.append(subprocess.Popen(sys.argv[2:], env=env))
    codes = [p.wait() for p in procs]
    print(f"ranks exited with {codes}")
    return 0 if all(c == 0 for c in codes) else 1


if __name__ == "__main__":
    sys.exit(main())
