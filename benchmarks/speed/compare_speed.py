"""How much slower is ``biotok compare --corpus`` than the raw ``encode_batch`` it relies on?

Runs, in one process and on the same in-memory lines, (a) the raw tokenizers' ``encode_batch``
for every tokenizer, batch by batch, and (b) biotok's full fragmentation measurement
(:func:`biotok.metrics.compare`: biotok word spans + encode_batch + piece/word counting).
Each side runs ``--runs`` times, interleaved; the ratio of minimum (and median) times is printed
and written with the setup to a JSON file. Goal: ratio <= 1.2.

    python -m benchmarks.speed.compare_speed --tokenizers-dir ../shared/data/tokenizers
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from benchmarks import corpora as C
from benchmarks._common import RESULTS, machine

DEFAULT_CORPUS = C.PAMJ
SAMPLE = C.SAMPLE


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS if DEFAULT_CORPUS.exists() else SAMPLE))
    ap.add_argument("--field", default=None)
    ap.add_argument("--tokenizers", nargs="+", default=["camemberta", "camembertv2", "barthez"])
    ap.add_argument("--tokenizers-dir", default=None,
                    help="local tokenizer copies [default: $BIOTOK_SHARED_DATA/tokenizers, else DATA/tokenizers]")
    ap.add_argument("--runs", type=int, default=3, help="alternating runs per side (1: a smoke run, no median)")
    ap.add_argument("--max-lines", type=int, default=None)
    ap.add_argument("--batch-size", type=int, default=2000)
    ap.add_argument("--out", default=str(RESULTS / "compare_speed.json"))
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be >= 1")

    from biotok.corpus import iter_lines
    from biotok.datadir import tokenizers_dir
    from biotok.formats import load
    from biotok.metrics import compare

    tdir = tokenizers_dir(args.tokenizers_dir) or C.TOKENIZERS
    toks = [load(t, tokenizers_dir=tdir) for t in args.tokenizers]
    lines = list(iter_lines([args.corpus], args.field))
    if args.max_lines:
        lines = lines[: args.max_lines]
    batches = [lines[i : i + args.batch_size] for i in range(0, len(lines), args.batch_size)]

    def raw() -> None:
        for batch in batches:
            for t in toks:
                t.backend.encode_batch(batch, add_special_tokens=False)

    def biotok_metrics() -> None:
        compare(toks, lines, batch_size=args.batch_size)

    raw()  # warm-up: thread pool, caches
    times: dict[str, list[float]] = {"raw_encode_batch": [], "biotok_metrics": []}
    cpu: dict[str, list[float]] = {"raw_encode_batch": [], "biotok_metrics": []}
    for _ in range(args.runs):
        for name, fn in (("raw_encode_batch", raw), ("biotok_metrics", biotok_metrics)):
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)  # all threads of this process
    r_min = min(times["biotok_metrics"]) / min(times["raw_encode_batch"])
    r_med = statistics.median(times["biotok_metrics"]) / statistics.median(times["raw_encode_batch"])
    r_cpu = statistics.median(cpu["biotok_metrics"]) / statistics.median(cpu["raw_encode_batch"])
    try:
        loadavg = os.getloadavg()[0]
    except OSError:  # not on every OS: recorded as unknown
        loadavg = None
    result = {
        "corpus": args.corpus,
        "lines": len(lines),
        "characters": sum(map(len, lines)),
        "tokenizers": [t.name for t in toks],
        "batch_size": args.batch_size,
        "runs": args.runs,
        "times_s": times,
        "cpu_times_s": cpu,
        "ratio_min": r_min,
        "ratio_median": r_med,
        "cpu_ratio_median": r_cpu,
        "load_average_1min": loadavg,
        "goal": 1.2,
        "machine": machine(),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"{len(lines):,} lines, {result['characters']:,} chars, tokenizers: {', '.join(result['tokenizers'])}")
    for name, ts in times.items():
        print(f"  {name:17s} wall min {min(ts):.3f}s  median {statistics.median(ts):.3f}s"
              f"  | CPU median {statistics.median(cpu[name]):.3f}s")
    print(f"biotok metrics / raw encode_batch: {r_min:.3f} (min wall), {r_med:.3f} (median wall), "
          f"{r_cpu:.3f} (median CPU); goal <= 1.2; {os.cpu_count()} CPUs, load {loadavg}")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
