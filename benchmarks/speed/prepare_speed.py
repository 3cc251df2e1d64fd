"""Prepare on every core: ``prepare`` on one thread (the baseline: the GPU run's prepare), on one
process letting the tokenizers library encode each batch on every core (its own parallelism: the
competitor at its best) and with ``workers=N`` (one single-thread worker per core), side by side on
the same French text, for CamemBERTa's vocabulary and a biotok-trained Unigram (lowercased; 12,000
pieces, what its 8 MB of training text support); the wall-time ratios (goal >= 1.8x over one thread
on 2 cores), whether all wrote the same bytes, and the time the GPU machine's prepare would take.

    python -m benchmarks.speed.prepare_speed               # 98 MB, 2 rounds (about 10 minutes): benchmarks/results/prepare_speed.json
    python -m benchmarks.speed.prepare_speed --mb 24 --runs 3   # benchmarks/results/prepare_speed_24mb.json's setting
    python -m benchmarks.speed.prepare_speed --quick       # 2 MB, one run (a smoke run, not a measurement)

The text: E3C's clinical cases then drug leaflets (``benchmarks._common.e3c_text``, 98 MB), the
ablation's pretraining text's two E3C sources. The Unigram is trained once on its first 8 MB and
cached. Each run prepares into an empty folder; the three settings alternate, medians compared.
The load average is recorded before every run: other processes on the cores slow the N-worker
side more than the one-process side, so a run on a busy machine understates the ratio.

Two ratios: the wall-time one, and one from CPU seconds (one process's CPU over the N-worker
side's CPU per worker: what N free cores would give). This machine schedules by session
(autogroup): while another session keeps a core busy, the N workers together get no more CPU
than one process, and the wall ratio shows only the pool's overhead; the load average and the
CPU seconds of every run are recorded.

The 16-core estimate (:func:`estimate`): the single-process rate per core times the number of
cores times the efficiency measured here (CPU ratio / N), for the GPU run's 98 M characters of
each of 4 vocabularies; once from this machine's rate, once from the GPU machine's own
single-thread prepare (98 M characters in 122-145 s, ``../shared/gpu/h200-2026-11-28``). Assumed:
that efficiency holds on 16 cores, and the 4 prepares share the 16 cores (4 workers each; one
reading process keeps about ``1 / reader_cpu_over_workers_cpu`` workers busy, measured ~25).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

from benchmarks import corpora as C
from benchmarks._common import CACHE, e3c_text, require_data, save

GPU_CHARS = 98_000_000  # the GPU run's pretraining text per vocabulary
GPU_VOCABS = 4  # camemberta-base, Unigram_L-32k, BPE-32k, Unigram-32k
GPU_CORES = 16
GPU_SINGLE_SECONDS = (122.0, 145.0)  # its two pieces' one-thread prepare (h200-2026-11-28 README)


def unigram(text: Path, chars: int = 8_000_000, size: int = 12000) -> Path:
    """A biotok Unigram_L of ``size`` pieces trained on the first ``chars`` characters of ``text`` (cached)."""
    from biotok.config import NormalizeConfig, TrainConfig
    from biotok.train import train_tokenizer

    out = CACHE / "prepare_speed" / f"unigram_l-{size // 1000}k"
    if not (out / "tokenizer.json").is_file():
        head = CACHE / "prepare_speed" / f"train_head_{chars}.txt"
        head.parent.mkdir(parents=True, exist_ok=True)
        with open(text, encoding="utf-8") as f:
            head.write_text(f.read(chars), encoding="utf-8")
        cfg = TrainConfig(algo="unigram", vocab_size=size, normalize=NormalizeConfig(lowercase=True))
        print(train_tokenizer([head], cfg, out, force=True).summary(), file=sys.stderr)
    return out


def one_prepare(text: Path, tok: Path, out: Path, workers: int, library_threads: bool) -> tuple[float, float, float]:
    """Wall seconds of one prepare into an empty ``out``, and the CPU seconds of this process and of
    its workers. ``library_threads``: the tokenizers library may encode each batch on its own threads
    (TOKENIZERS_PARALLELISM unset), else one thread (as the pool's workers, and the GPU run's prepare)."""
    from biotok_train.config import PrepareConfig
    from biotok_train.pretrain.prepare import prepare

    shutil.rmtree(out, ignore_errors=True)
    before = os.environ.pop("TOKENIZERS_PARALLELISM", None)
    if not library_threads:
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
    try:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0, c0 = time.perf_counter(), time.process_time()
        prepare([str(text)], str(tok), PrepareConfig(seq_len=128, workers=workers), out, progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        os.environ.pop("TOKENIZERS_PARALLELISM", None)
        if before is not None:
            os.environ["TOKENIZERS_PARALLELISM"] = before
    return wall, cpu, (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)


def same_bytes(a: Path, b: Path) -> bool:
    """Every file of prepared data ``a`` equals the one in ``b`` (and no file is missing)."""
    fa = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    fb = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return fa == fb and all((a / f).read_bytes() == (b / f).read_bytes() for f in fa)


ONE_THREAD, LIBRARY = "1 thread", "1 process, tokenizers' threads"


def measure(text: Path, tok: Path, work: Path, workers: int, runs: int) -> dict:
    """``runs`` rounds of three settings side by side: one process on one thread (the baseline: the
    GPU run's prepare), one process letting the tokenizers library encode each batch on every core
    (the library's own parallelism, the competitor at its best), and ``workers`` pool workers of one
    thread each; the times, load averages and byte check."""
    settings = {ONE_THREAD: (1, False), LIBRARY: (1, True), str(workers): (workers, False)}
    folders = {k: work / k.replace(" ", "_").replace(",", "").replace("'", "") for k in settings}
    times: dict[str, list[float]] = {k: [] for k in settings}
    cpu: dict[str, list[float]] = {k: [] for k in settings}  # CPU seconds, this process and its workers
    loads: list[float] = []
    shares: list[float] = []
    identical = True
    for _ in range(runs):
        for name, (w, threads) in settings.items():
            loads.append(os.getloadavg()[0])
            wall, own, worker_cpu = one_prepare(text, tok, folders[name], w, threads)
            times[name].append(wall)
            cpu[name].append(own + worker_cpu)
            if w > 1:
                shares.append(own / worker_cpu)
        identical &= all(same_bytes(folders[ONE_THREAD], f) for f in folders.values())
    med = {k: statistics.median(v) for k, v in times.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpu.items()}
    return {"tokenizer": str(tok), "seconds": times, "median_seconds": med,
            "ratio": med[ONE_THREAD] / med[str(workers)],
            "ratio_over_tokenizers_threads": med[LIBRARY] / med[str(workers)],
            "cpu_seconds": cpu,
            # the ratio on N free cores if the N-worker side's CPU spreads evenly over them (it is
            # N processes doing the same chunks), from CPU time, which other sessions' load barely moves
            "ratio_from_cpu": cpu_med[ONE_THREAD] / (cpu_med[str(workers)] / workers),
            "byte_identical": identical, "load_average_1min_before_runs": loads,
            "reader_cpu_over_workers_cpu": statistics.median(shares)}


def estimate(per_core_cps: float, efficiency: float, reader_share: float) -> dict:
    """The GPU machine's prepare of GPU_VOCABS x GPU_CHARS on GPU_CORES cores, in seconds.

    ``reader_share``: the CPU of the process that reads the text and writes the data over its
    workers' CPU; one reader keeps at most ``1 / reader_share`` workers busy.
    """
    work = GPU_VOCABS * GPU_CHARS
    alone = min(GPU_CORES * efficiency, 1 / reader_share)  # one vocabulary's prepare alone on the 16 cores
    return {
        "from_this_machine_seconds": work / (per_core_cps * GPU_CORES * efficiency),
        "from_the_gpu_run_seconds": [GPU_VOCABS * s / (GPU_CORES * efficiency) for s in GPU_SINGLE_SECONDS],
        "one_vocabulary_alone_on_16_cores_seconds": [s / alone for s in GPU_SINGLE_SECONDS],
        "assumption": (f"{GPU_VOCABS} prepares ({GPU_CHARS / 1e6:.0f} M characters each) side by side share "
                       f"{GPU_CORES} cores ({GPU_CORES // GPU_VOCABS} workers each, so no reader limits them); "
                       f"each core as efficient as measured here ({efficiency:.2f} of a lone process); "
                       "one-thread rate per core: this machine's, or the GPU machine's own (98 M characters in "
                       f"{GPU_SINGLE_SECONDS[0]:.0f}-{GPU_SINGLE_SECONDS[1]:.0f} s). One prepare alone on 16 workers: "
                       f"at most {1 / reader_share:.1f} workers' worth (its reader's CPU is {reader_share:.3f} of "
                       "its workers')"),
    }


def _scheduler() -> str:
    """Whether the wall ratio can show on this machine: with autogroup scheduling, all the processes of
    one session share one session's part of the cores, so N workers get no more CPU than one process
    while other sessions keep the cores busy (their ratio then only shows the pool's overhead)."""
    try:
        autogroup = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        autogroup = False
    return ("autogroup: this session's processes share one session's part of the cores; under other "
            "sessions' load the wall ratio stays near 1, and ratio_from_cpu is the figure") if autogroup else "no autogroup"


def main() -> None:
    from biotok_train.pretrain.encode_pool import available_cores

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=98.0,
                    help="Megabytes of text [98: the GPU run's text per vocabulary, where the workers' start is paid once].")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=0, help="N [every core this process may use].")
    ap.add_argument("--quick", action="store_true", help="2 MB, one run: a smoke run, not a measurement.")
    args = ap.parse_args()
    require_data()
    mb, runs = (2.0, 1) if args.quick else (args.mb, args.runs)
    workers = args.workers or available_cores()
    text = e3c_text(mb)
    chars = len(text.read_text(encoding="utf-8"))
    trained = unigram(text, 2_000_000, 8000) if args.quick else unigram(e3c_text(24.0))
    toks = {"camemberta-base": C.CAMEMBERTA, f"biotok {trained.name.replace('unigram_l', 'Unigram_L')}": trained}
    work = CACHE / "prepare_speed" / "runs"
    results = {}
    for name, tok in toks.items():
        r = measure(text, tok, work / name.replace(" ", "_"), workers, runs)
        r["one_process_chars_per_second"] = chars / r["median_seconds"][ONE_THREAD]
        results[name] = r
        print(f"prepare_speed: {name}: {r['median_seconds'][ONE_THREAD]:.1f} s on 1 thread, "
              f"{r['median_seconds'][LIBRARY]:.1f} s with tokenizers' threads, "
              f"{r['median_seconds'][str(workers)]:.1f} s on {workers} workers: {r['ratio']:.2f}x (goal >= 1.8x on "
              f"2 cores), {r['ratio_over_tokenizers_threads']:.2f}x over tokenizers' threads; from CPU time "
              f"{r['ratio_from_cpu']:.2f}x; byte-identical: {r['byte_identical']}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    ratio = statistics.median(r["ratio"] for r in results.values())
    library = statistics.median(r["ratio_over_tokenizers_threads"] for r in results.values())
    cpu_ratio = statistics.median(r["ratio_from_cpu"] for r in results.values())
    per_core = statistics.median(r["one_process_chars_per_second"] for r in results.values())
    share = statistics.median(r["reader_cpu_over_workers_cpu"] for r in results.values())
    out = {
        "command": " ".join(["python -m benchmarks.speed.prepare_speed", *sys.argv[1:]]),
        "text": {"path": text.name, "characters": chars, "megabytes": mb},
        "workers": workers, "cores_available": available_cores(), "runs": runs,
        "tokenizers": results,
        "ratio_median": ratio, "ratio_over_tokenizers_threads_median": library, "ratio_from_cpu_median": cpu_ratio, "ratio_goal": ">= 1.8 on 2 cores",
        "scheduler": _scheduler(),
        "byte_identical": all(r["byte_identical"] for r in results.values()),
        "one_process_chars_per_second_per_core": per_core,
        "efficiency_per_core": cpu_ratio / workers,
        "reader_cpu_over_workers_cpu": share,
        "estimate_16_cores": estimate(per_core, min(1.0, cpu_ratio / workers), share),
        "load_average_after": os.getloadavg(),
    }
    e = out["estimate_16_cores"]
    print(f"prepare_speed: {ratio:.2f}x on {workers} workers over one thread (wall), {library:.2f}x over tokenizers' "
          f"threads, {cpu_ratio:.2f}x from CPU time; 16 cores, {GPU_VOCABS} x {GPU_CHARS / 1e6:.0f} M chars: "
          f"{e['from_this_machine_seconds']:.0f} s at this machine's rate, "
          f"{e['from_the_gpu_run_seconds'][0]:.0f}-{e['from_the_gpu_run_seconds'][1]:.0f} s at the GPU machine's",
          file=sys.stderr)
    print(f"-> {save('prepare_speed', out)}")


if __name__ == "__main__":
    main()
