"""Engine speed: the same fine-tuning-heavy ablation run by ``--engine ray --workers N``, by
``--engine processes --workers N`` (the standard library's pool, for machines without Ray) and by
``--engine local`` at its best (one process, torch on all N cores), side by side; the wall-time ratios.

    python -m benchmarks.speed.engine_speed                # writes benchmarks/results/engine_speed.json
    python -m benchmarks.speed.engine_speed --quick        # a smaller plan (a smoke run, not a measurement)

The plan: one tokenizer pretrained a few steps on the sample corpus, then E3C NER fine-tuned from
it and from its random-init floor for every seed: the fine-tunings are independent jobs, which Ray
runs one per core while the local engine runs them one after the other. The local engine is run
with torch on all N cores and with one thread (on small models and a shared machine one thread
can be faster), and the faster of the two is the baseline. Ray's start (a local instance) counts
in its time. Each run starts from an empty OUT; the engines alternate, min and median reported,
and whether each local run's ablation.json is the same bytes as Ray's (one thread per job in both:
it should be; with N threads the last bits of a loss may differ).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpora as C
from benchmarks._common import RESULTS, git_commit, machine, require_data, summary

SAMPLE = C.SAMPLE


def plan(work: Path, seeds: int, fraction: float, epochs: int):
    """The ablation config: a 2,000-piece WordPiece, 2 pretraining steps, E3C x seeds x (arm, floor), each
    fine-tuning ``epochs`` epochs on ``fraction`` of the training sentences."""
    from biotok.config import TrainConfig
    from biotok.train import train_tokenizer
    from biotok_train.config import FinetuneConfig
    from biotok_train.ablate.config import AblationConfig, Finetuning, Pretraining, Statistics

    tok = work / "wordpiece"
    if not (tok / "tokenizer.json").is_file():
        train_tokenizer([SAMPLE], TrainConfig(algo="wordpiece", vocab_size=2000), tok, force=True)
    return AblationConfig(tokenizers=(str(tok),), corpus=(str(SAMPLE),), tasks=("e3c",), data_dir=str(C.CORPORA),
                          pretraining=Pretraining(budget=2, batch_size=4, seq_len=64),
                          finetuning=Finetuning(FinetuneConfig(epochs=epochs, batch_size=16, train_fraction=fraction),
                                                seeds=tuple(range(seeds))),
                          statistics=Statistics(n_words=20, n_resamples=200))


def one_run(cfg, out: Path, engine) -> float:
    """Wall seconds of one ablation from an empty OUT (a Ray instance started and stopped inside)."""
    from biotok_train.ablate import run_ablation

    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    run_ablation(cfg, out, progress=False, engine=engine)
    if engine.engine == "ray":
        import ray

        ray.shutdown()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    from biotok_train.ablate.config import EngineConfig

    p = argparse.ArgumentParser(prog="python -m benchmarks.speed.engine_speed", description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    p.add_argument("--seeds", type=int, default=8, help="fine-tuning seeds: 2 x seeds fine-tuning jobs")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--train-fraction", type=float, default=1.0)
    p.add_argument("--local-threads", default="", help="torch threads of the local runs (default: N, then 1)")
    p.add_argument("--runs", type=int, default=1, help="runs of each engine, alternating")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=str(RESULTS / "engine_speed.json"))
    a = p.parse_args(argv)
    require_data()
    seeds, fraction, epochs = (2, 0.05, 1) if a.quick else (a.seeds, a.train_fraction, a.epochs)
    threads = [int(t) for t in a.local_threads.split(",") if t] or [a.workers, 1]
    engines = {f"local, {t} thread(s)": EngineConfig("local", workers=t) for t in threads}
    engines[f"processes, {a.workers} workers"] = EngineConfig("processes", workers=a.workers)
    engines[f"ray, {a.workers} workers"] = EngineConfig("ray", workers=a.workers)
    with tempfile.TemporaryDirectory(prefix="engine-speed-") as tmp:
        work = Path(tmp)
        cfg = plan(work, seeds, fraction, epochs)
        times: dict[str, list[float]] = {name: [] for name in engines}
        outputs: dict[str, bytes] = {}
        job_s: dict[str, dict] = {}
        for _ in range(a.runs):
            for name, engine in engines.items():  # the same OUT each time: the same command in ablation.json
                times[name].append(one_run(cfg, work / "out", engine))
                outputs[name] = (work / "out" / "ablation.json").read_bytes()
                c = json.loads((work / "out" / "costs.json").read_text(encoding="utf-8"))
                job_s[name] = {"cpu_s": c["total_cpu_s"], "wall_s": c["total_wall_s"]}  # summed over the jobs
                print(f"{name}: {times[name][-1]:.1f} s", file=sys.stderr)
        jobs = len(json.loads((work / "out" / "costs.json").read_text(encoding="utf-8"))["jobs"])
    runs = {name: summary(t) for name, t in times.items()}
    ray_name, pool_name, local_names = list(engines)[-1], list(engines)[-2], list(engines)[:-2]
    best = min(local_names, key=lambda n: runs[n]["median"])  # the local engine at its best
    result = {"benchmark": "engine_speed", "plan": f"{jobs} jobs: prepare, 2-step pretraining, evaluation, a floor model, "
              f"{2 * seeds} E3C fine-tunings (train fraction {fraction}, {epochs} epochs)", "workers": a.workers,
              "seconds": runs, "jobs_summed_last_run": job_s, "baseline": best, "ratio_median": round(runs[best]["median"] / runs[ray_name]["median"], 2),
              "ratio_vs_local_all_threads": round(runs[local_names[0]]["median"] / runs[ray_name]["median"], 2),
              "ratio_processes_median": round(runs[best]["median"] / runs[pool_name]["median"], 2),
              "ablation_json_identical_to_ray": {n: outputs[n] == outputs[ray_name] for n in [*local_names, pool_name]},
              "load_average": os.getloadavg(), "quick": a.quick, "commit": git_commit(), "machine": machine()}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"{best} {runs[best]['median']:.1f} s (the faster local), {ray_name} {runs[ray_name]['median']:.1f} s: "
          f"{result['ratio_median']:.2f}x, {pool_name} {runs[pool_name]['median']:.1f} s: "
          f"{result['ratio_processes_median']:.2f}x", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
