"""The probe's training speed: biotok's probe loop (:func:`biotok_train.probe.model.train`) against
transformers' ``Trainer`` on the same GPT-2, blocks, order, steps and schedule, fp32 and bf16 (the
Trainer with its own ``bf16=True``, its best on a CPU with bf16 units), CPU-seconds side by side.

The model is the published probe's (docs/results/probe-fr: 2 layers x 128, batch 8 x 128) over a
``--vocab`` of 32,000 ids; the token stream is random ids (seeded): the speed of a step does not
depend on which ids it sees. One torch thread, one process, the sides one after the other.

    python -m benchmarks.speed.probe_speed                # writes results/probe_speed.json
    python -m benchmarks.speed.probe_speed --steps 20     # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from benchmarks._common import RESULTS, machine


def _cfg(args, bf16: bool):
    from biotok_train.config import ProbeConfig

    return ProbeConfig(steps=args.steps, batch_size=8, seq_len=128, layers=2, hidden=128, heads=2, bf16=bf16)


def biotok_side(stream, args, bf16: bool) -> dict:
    """The probe's own training loop; its CPU and wall seconds and final loss."""
    from biotok_train.probe.model import build_model, train

    cfg = _cfg(args, bf16)
    model = build_model(cfg, args.vocab, seed=0)
    stats = train(model, stream, cfg, seed=0)
    losses = [loss for _, loss in stats.curve]  # window means, equal windows: their mean is the run's
    return {"cpu_s": stats.cpu_seconds, "wall_s": stats.wall_seconds, "mean_loss": sum(losses) / len(losses)}


def trainer_side(stream, args, bf16: bool, work: Path) -> dict:
    """transformers' Trainer on the same model, blocks in the same order, steps and schedule."""
    import numpy as np
    import torch
    from transformers import Trainer, TrainingArguments, default_data_collator

    from biotok_train.precision import use_bf16
    from biotok_train.probe.model import _blocks, build_model

    cfg = _cfg(args, bf16)
    model = build_model(cfg, args.vocab, seed=0)
    blocks = _blocks(stream, cfg.seq_len)
    rng = np.random.default_rng(0)  # the probe's order (train(): one permutation per pass)
    order = np.concatenate([rng.permutation(len(blocks)) for _ in range(-(-cfg.steps * cfg.batch_size // len(blocks)))])
    rows = torch.from_numpy(blocks[order[: cfg.steps * cfg.batch_size]])

    class Rows(torch.utils.data.Dataset):
        def __len__(self):
            return len(rows)

        def __getitem__(self, i):
            return {"input_ids": rows[i], "labels": rows[i]}

    class InOrder(Trainer):
        def _get_train_sampler(self, *a, **k):
            return torch.utils.data.SequentialSampler(self.train_dataset)

    o = cfg.optim_config()
    targs = TrainingArguments(
        output_dir=str(work / "hf"), per_device_train_batch_size=cfg.batch_size, max_steps=cfg.steps,
        learning_rate=o.lr, warmup_steps=o.warmup,  # < 1: a fraction of the steps, as ours lr_scheduler_type="linear", weight_decay=o.weight_decay,
        adam_epsilon=o.eps, max_grad_norm=1.0, bf16=use_bf16("cpu", bf16), use_cpu=True, seed=0,
        logging_strategy="no", save_strategy="no", report_to=[], disable_tqdm=True, dataloader_pin_memory=False,
    )
    trainer = InOrder(model=model, args=targs, train_dataset=Rows(), data_collator=default_data_collator)
    wall, cpu = time.perf_counter(), time.process_time()
    out = trainer.train()
    return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall,
            "mean_loss": float(out.training_loss)}


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch

    from biotok_train.precision import describe

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--out", default=str(RESULTS / "probe_speed.json"))
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    stream = np.random.default_rng(0).integers(0, args.vocab - 1, size=args.steps * 8 * 128 + 128).astype(np.int64)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        biotok_side(stream, argparse.Namespace(**{**vars(args), "steps": 3}), False)  # warm-up: imports, first calls
        for bf16 in (False, True):
            b = biotok_side(stream, args, bf16)
            t = trainer_side(stream, args, bf16, Path(tmp))
            rows.append({"precision": describe("cpu", bf16), "biotok": b, "trainer": t,
                         "cpu_ratio": t["cpu_s"] / b["cpu_s"]})
            print(f"{rows[-1]['precision']}: biotok {b['cpu_s']:.1f} CPU-s, Trainer {t['cpu_s']:.1f} CPU-s "
                  f"({rows[-1]['cpu_ratio']:.2f}x); mean training loss {b['mean_loss']:.3f} vs {t['mean_loss']:.3f}")
    fp32, bf16 = rows
    result = {"benchmark": "probe_speed", "machine": machine(), "load_average": os.getloadavg(), "steps": args.steps,
              "model": "GPT-2 2 x 128, batch 8 x 128", "vocab": args.vocab, "runs": rows,
              "biotok_bf16_speedup_cpu": fp32["biotok"]["cpu_s"] / bf16["biotok"]["cpu_s"],
              "trainer_bf16_speedup_cpu": fp32["trainer"]["cpu_s"] / bf16["trainer"]["cpu_s"]}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"bf16 speed-up (CPU-s): biotok {result['biotok_bf16_speedup_cpu']:.2f}x, Trainer "
          f"{result['trainer_bf16_speedup_cpu']:.2f}x -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
