"""Start-up against work in one ablation fine-tune (issue 38, item 5): where a fine-tune's seconds go.

    python -m benchmarks.speed.finetune_startup                 # CPU, ~6 min; writes results/finetune_startup.json
    python -m benchmarks.speed.finetune_startup --quick --no-write   # tiny model, 8 sentences a split (the test)

The ablation runs each fine-tune (``biotok_train.ablate.jobs.finetune``) in a pool worker that keeps
its imports and ``shared(env)`` (every task's data, loaded once per worker) between jobs, then, per
fine-tune: :func:`biotok_train.finetune.engine.fit` loads the model and tokenizer, encodes the
train/dev/test splits, trains (3 epochs, batch 16, dev scored after each), scores test and writes.
This times each of those phases, the way a worker meets them: a fresh process's imports (timed in a
subprocess), the tasks' loading, then the same fine-tune (BERT-small, CamemBERTa's vocabulary,
pretrained one step by the loop so it is the ablation's kind of model) for two seeds in one
process, the second one as the ablation's second and third seeds run. Inside ``fit``, the model's
own time (forward, backward, optimizer) is timed apart from the rest of each training step.

The CPU's training steps are slower than a GPU's; what transfers to the GPU machine are the
phases that are CPU work there too (imports, loading, encoding, decoding and scoring) and the
count of steps. Against the H200 records of 2026-11-28 (``ARCHIVE_WALL_S``, the piece archives'
``*.cost.json``), it says which share of a 7-30 s fine-tune start-up can be.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from benchmarks import corpora as C
from benchmarks._common import CACHE, RESULTS, machine

# wall seconds per fine-tune on one H200, 4 side by side (2026-11-28 piece archives, 3 seeds x 2 arms each,
# in order f0 f1 f2 per arm: camemberta-base then Unigram_L-32k)
ARCHIVE_WALL_S = {
    "e3c": [27.64, 27.53, 26.96, 24.8, 22.67, 24.06],
    "quaero-emea-drb": [25.0, 13.5, 6.76, 29.83, 12.96, 9.37],
    "quaero-medline-drb": [9.51, 9.42, 8.45, 8.48, 9.16, 9.58],
    "morfitt": [20.64, 21.47, 22.13, 22.58, 23.25, 21.44],
    "frenchmedmcqa": [24.52, 25.93, 25.28, 24.8, 24.0, 22.94],
}
TIMED_STEPS = 10  # training steps timed per fine-tune (the per-step costs, times the recipe's steps)
IMPORTS = "import torch, transformers; import biotok_train.finetune, biotok_train.finetune.engine"


class Timer:
    """Seconds accumulated per phase name."""

    def __init__(self) -> None:
        self.s: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.s[name] = self.s.get(name, 0.0) + time.perf_counter() - t

    def wrap(self, name: str, fn):
        def timed(*a, **k):
            with self(name):
                return fn(*a, **k)

        return timed


def import_seconds() -> float:
    """Wall seconds of a fresh interpreter importing torch, transformers and the fine-tuning engine
    (less an empty interpreter's start)."""
    def run(code: str) -> float:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(C.REPO)})
        return time.perf_counter() - t

    return max(0.0, run(IMPORTS) - run("pass"))


def small_model(work: Path, size: str, tokenizer: Path) -> Path:
    """A BERT of ``size`` with ``tokenizer``, saved by the pretraining loop after one step (cached)."""
    out = work / f"bert-{size}-{tokenizer.name}"
    if (out / "config.json").is_file():
        return out
    from biotok_train.config import OptimConfig, PrepareConfig, PretrainConfig
    from biotok_train.pretrain.loop import pretrain
    from biotok_train.pretrain.prepare import prepare

    text = work / "text.txt"
    text.write_text(C.SAMPLE.read_text(encoding="utf-8")[:200_000], encoding="utf-8")
    data = prepare([str(text)], str(tokenizer), PrepareConfig(seq_len=128), work / f"data-{tokenizer.name}",
                   force=True, progress=False).path
    pretrain(data, PretrainConfig(size=size, steps=1, batch_size=2, device="cpu", optim=OptimConfig(lr=1e-4)), out,
             progress=False, force=True)
    return out


def fine_tune_phases(model: Path, task: str, seeds: list[int], quick: bool, work: Path,
                     steps: int | None = None) -> dict:
    """Load ``task`` (as shared(env) does), then fine-tune ``model`` on it once per seed in this
    process, each phase of :func:`~biotok_train.finetune.engine.fit` timed."""
    import torch

    from biotok_train.config import FinetuneConfig
    import biotok_train.optim as optim
    from biotok_train.finetune import engine, make_head, resolve

    torch.set_num_threads(1)
    t = Timer()
    with t("load task"):
        spec, data, kind = resolve(task, None, str(C.CORPORA))
    if quick:
        data = dataclasses.replace(data, train=data.train[:8], dev=data.dev[:8], test=data.test[:8])
    # the ablation's recipe (3 epochs of batch 16 at 256, dev after each), its training cut at TIMED_STEPS
    # steps: their per-step cost times the recipe's steps stands for the whole training
    # (``steps`` 0: the whole recipe, as on a GPU)
    cfg = FinetuneConfig(max_length=256, threads=1, report_to="none",
                         max_steps=steps if steps is not None else 2 if quick else TIMED_STEPS)
    recipe = FinetuneConfig()
    sizes = {"train": len(data.train), "dev": len(data.dev), "test": len(data.test)}
    seeds_out = []
    real = {"_setup": engine._setup, "_evaluate": engine._Run.evaluate, "_forward": engine._forward,
            "clip_and_step": optim.clip_and_step, "_epoch": engine._Run._epoch, "backward": torch.Tensor.backward,
            "encode": engine._Encoded.__call__}
    for seed in seeds:
        s = Timer()
        head = make_head(kind, cfg, spec)
        encoded: list[int] = []
        encode = s.wrap("encode", real["encode"])  # the engine's (train, dev, test; reused across seeds)
        engine._Encoded.__call__ = lambda *a, **k: encoded.append(len(out := encode(*a, **k))) or out
        head.decode = s.wrap("decode", head.decode)
        head.score = s.wrap("score", head.score)
        fwd_train, fwd_eval = s.wrap("train forward", real["_forward"]), s.wrap("eval forward", real["_forward"])
        engine._setup = s.wrap("load model+tokenizer", real["_setup"])
        engine._Run.evaluate = s.wrap("evaluate (dev, test)", real["_evaluate"])
        engine._forward = lambda *a, **k: (fwd_eval if torch.is_inference_mode_enabled() else fwd_train)(*a, **k)
        engine._Run._epoch = s.wrap("train epochs", real["_epoch"])
        torch.Tensor.backward = s.wrap("backward", real["backward"])
        optim.clip_and_step = s.wrap("optimizer step", real["clip_and_step"])
        steps = {}
        try:
            with s("fit total"):
                r = engine.fit(model, head, data, dataclasses.replace(cfg, seed=seed), progress=False)
            with s("write results"):
                engine.write_results(r, head, data.test, r.predictions, work / f"ft-{task}-{seed}", force=True)
            steps = {"steps": r.steps, "features": dict(zip(("train", "dev", "test"), encoded)),
                     "recipe_steps": math.ceil(encoded[0] / recipe.batch_size) * recipe.epochs, "recipe_epochs": recipe.epochs,
                     "evaluations": len(r.history) + 1, "device": str(next(r.trained.model.parameters()).device)}
        finally:
            engine._setup, engine._Run.evaluate, engine._forward = real["_setup"], real["_evaluate"], real["_forward"]
            engine._Run._epoch, torch.Tensor.backward = real["_epoch"], real["backward"]
            engine._Encoded.__call__ = real["encode"]
            optim.clip_and_step = real["clip_and_step"]
        sec = s.s
        sec["train steps, not model (collate, copies, loss read, logging)"] = (
            sec.get("train epochs", 0) - sec.get("train forward", 0) - sec.get("backward", 0) - sec.get("optimizer step", 0))
        seeds_out.append({"seed": seed, **steps, "seconds": {k: round(v, 3) for k, v in s.s.items()}})
    return {"task": task, "type": kind, "examples": sizes, "load_task_s": round(t.s["load task"], 3), "seeds": seeds_out}


def summarize(task_row: dict) -> dict:
    """Per seed: start-up (model + tokenizer loaded, splits encoded), and the CPU work of the whole
    recipe that stays CPU work on a GPU machine: the training steps' non-model part (per step, times
    the recipe's steps) and decoding + scoring (per evaluation, times the recipe's epochs + test)."""
    out = {}
    for row in task_row["seeds"]:
        s, timed = row["seconds"], max(1, row["steps"])
        evals = row["evaluations"]  # dev after each epoch run, test once
        out[f"seed {row['seed']}"] = {
            "load_model_s": round(s.get("load model+tokenizer", 0.0), 3), "encode_s": round(s.get("encode", 0.0), 3),
            "recipe_steps": row["recipe_steps"],
            "train_not_model_s": round(s["train steps, not model (collate, copies, loss read, logging)"] / timed
                                       * row["recipe_steps"], 2),
            "decode_score_s": round((s.get("decode", 0.0) + s.get("score", 0.0)) / evals * (row["recipe_epochs"] + 1), 2),
            "model_s_timed": round(s.get("train forward", 0.0) + s.get("backward", 0.0) + s.get("optimizer step", 0.0), 3),
            "fit_s_timed": round(s["fit total"], 3), "steps_timed": row["steps"],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.speed.finetune_startup", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny model, 8 examples a split, 1 epoch (the test)")
    p.add_argument("--tasks", default=",".join(C.FRENCH_TASKS))
    p.add_argument("--write", action=argparse.BooleanOptionalAction, default=True,
                   help="write benchmarks/results/finetune_startup.json (not with --quick, --model or --out)")
    p.add_argument("--model", default=None, help="fine-tune this saved model (default: a BERT-small built here)")
    p.add_argument("--steps", type=int, default=None, help=f"training steps timed (0: the whole recipe; default "
                   f"{TIMED_STEPS}, 2 with --quick)")
    p.add_argument("--seeds", default="0,1", help="fine-tuning seeds, one after the other in this process")
    p.add_argument("--out", default=None, help="write the JSON here instead (the GPU slot's)")
    args = p.parse_args(argv)
    if not C.CORPORA.is_dir():
        raise SystemExit(f"finetune_startup: error: {C.CORPORA} not found (set BIOTOK_SHARED_DATA)")
    work = CACHE / "finetune_startup"
    work.mkdir(parents=True, exist_ok=True)
    result: dict = {"machine": machine(), "quick": args.quick, "imports_s": round(import_seconds(), 2),
                    "command": "python -m benchmarks.speed.finetune_startup" + "".join(" " + a for a in (sys.argv[1:] if argv is None else argv))}
    model = Path(args.model) if args.model else small_model(work, "tiny" if args.quick else "small", C.CAMEMBERTA)
    seeds = [int(x) for x in args.seeds.split(",") if x]
    result["tasks"] = []
    for task in [x for x in args.tasks.split(",") if x]:
        row = fine_tune_phases(model, task, seeds, args.quick, work, args.steps)
        row["summary"] = summarize(row)
        row["h200_wall_s"] = ARCHIVE_WALL_S.get(task)
        result["tasks"].append(row)
        print(json.dumps({"task": task, "load_task_s": row["load_task_s"], **row["summary"]}), flush=True)
        # rewritten after each task: a run cut short keeps the tasks it measured
        dest = Path(args.out) if args.out else RESULTS / "finetune_startup.json"
        if args.out or (args.write and not args.quick and not args.model):
            tmp = dest.with_name(f".{dest.name}.tmp")
            tmp.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
            tmp.replace(dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
