"""Run every benchmark and print every ratio (each script also writes benchmarks/results/*.json).

    python -m benchmarks.run_all            # full sizes (about an hour on 2 cores)
    python -m benchmarks.run_all --quick    # small inputs, one run: checks that all still work

--quick writes its JSON under benchmarks/.data/quick-results/, never over benchmarks/results/.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from benchmarks._common import CACHE, DATA, REPO

QUICK_RESULTS = CACHE / "quick-results"  # a smoke run never replaces benchmarks/results/
FULL = [
    ["normalize_speed", "--mb", "20", "--runs", "3"],
    ["compare_speed", "--runs", "3"],
    ["train_speed", "--sizes", "100,1000", "--runs", "3"],
    ["train_scale"],
    ["pretrain_throughput", "--json", str(REPO / "biotok" / "data" / "pretrain_throughput.json")],  # ships: biotok cost reads it
    ["finetune_speed"],
]
QUICK = [
    ["normalize_speed", "--mb", "2", "--runs", "1"],
    ["compare_speed", "--runs", "1", "--max-lines", "300"],
    ["train_speed", "--sizes", "3,6", "--runs", "1", "--vocab-size", "4000"],
    ["train_scale", "--quick"],
    ["pretrain_throughput", "--steps", "6", "--skip", "2", "--json", str(QUICK_RESULTS / "pretrain_throughput.json")],
    ["finetune_speed", "--quick"],
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small inputs, one run each")
    args = ap.parse_args()
    os.environ.setdefault("BIOTOK_SHARED_DATA", str(DATA))
    if args.quick:
        QUICK_RESULTS.mkdir(parents=True, exist_ok=True)
        os.environ["BIOTOK_BENCH_RESULTS"] = str(QUICK_RESULTS)
    failed = []
    for cmd in QUICK if args.quick else FULL:
        print(f"== {' '.join(cmd)}", flush=True)
        proc = subprocess.run([sys.executable, "-m", f"benchmarks.speed.{cmd[0]}", *cmd[1:]], cwd=REPO)
        if proc.returncode != 0:
            failed.append(cmd[0])
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
