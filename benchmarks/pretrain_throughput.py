"""Tokens/s of ``biotok-train mlm`` (our loop) vs transformers' ``Trainer`` at its best, side by side.

Both sides train the same BERT (``BertForMaskedLM`` from the same config and seed, SDPA
attention) on the SAME batches: the packed rows and masks the loop draws at each step
(:func:`biotok_train.pretrain.feed.masked_batch`), handed to the Trainer pre-masked in the same
order (sequential sampler, ``default_data_collator``, loader workers on CUDA), so both sides count
the same real tokens per step. Both use bf16 autocast where the hardware has it (the Trainer its
own ``bf16=True``; on CPU too) and the same optimizer settings; the Trainer runs eager and, with
``--compile``, compiled too, and the faster is the baseline. Every step is timed (a device sync
at its end, on both sides); the timed window starts after ``--skip`` steps AND after the last step
that compiled a graph (``torch._dynamo`` counters), so warm-up and recompilation are never timed.
Prints both and the ratio, with each side's per-step time distribution, and writes a JSON.

Why: the first H200 run of this benchmark (benchmarks/results/gpu/h200-2026-11-27/) measured
the Trainer at 1 % MFU (1.2 s a step). Its Trainer side built every row with a per-item
``PackedData.batch`` in the training process and masked it with ``DataCollatorForLanguageModeling``
(a Python pass over every token), without loader workers, on other rows in another (shuffled)
order than our side, and timed only the whole window, so a compiling or otherwise slow step could
not be told apart (benchmarks/README.md, GPU suite, says what part of the 1.2 s each explains).

    python benchmarks/pretrain_throughput.py --size tiny --steps 30 --batch-size 16          # CPU
    python benchmarks/pretrain_throughput.py --size base --steps 60 --batch-size 128 --compile  # GPU
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
if __name__ == "__main__" and not __package__:  # run as a file: the checkout first, as with -m
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from biotok_train.config import SIZES, OptimConfig, PrepareConfig, PretrainConfig  # noqa: E402
from biotok_train.precision import use_bf16  # noqa: E402
from biotok_train.pretrain.compiled import graphs_compiled  # noqa: E402
from biotok_train.pretrain.feed import masked_batch  # noqa: E402
from biotok_train.pretrain.flops import flops_per_token, mfu, peak_tflops  # noqa: E402
from biotok_train.pretrain.loop import pretrain  # noqa: E402
from biotok_train.pretrain.models import Vocab, build  # noqa: E402
from biotok_train.pretrain.packed import PackedData  # noqa: E402
from biotok_train.pretrain.prepare import prepare  # noqa: E402

LR = 1e-4
KEYS = ("input_ids", "attention_mask", "token_type_ids", "labels")  # what BertForMaskedLM takes


def _config(args, compile_: bool) -> PretrainConfig:
    return PretrainConfig(size=args.size, steps=args.steps, batch_size=args.batch_size,
                          optim=OptimConfig(lr=LR, warmup=0.0), seed=0, bf16=True,
                          compile="on" if compile_ else "off", compile_mode=getattr(args, "compile_mode", "default"),
                          log_every=1, device=args.device)


def step_batches(data: Path, args) -> list[dict]:
    """The masked inputs of each of our loop's steps (one micro-batch, one rank): what both sides train on."""
    packed, cfg = PackedData(data), _config(args, False)
    return [masked_batch(packed, step * cfg.batch_size, cfg.batch_size, seed=cfg.seed, step=step, micro=0, rank=0,
                         objective="mlm", arch="bert", mask_prob=cfg.mask_prob, wwm=cfg.wwm)[0]
            for step in range(args.steps)]


def summary(times: list[float], tokens: list[int], graphs: list[int], skip: int) -> dict:
    """Tokens/s over the timed steps (after ``skip`` and after the last step that compiled) and their
    per-step time distribution."""
    last_compile = max((i for i in range(1, len(graphs)) if graphs[i] != graphs[i - 1]), default=-1)
    first = max(skip, last_compile + 1)
    if first >= len(times):
        raise RuntimeError(f"no step left to time: a graph was compiled at step {last_compile + 1} of {len(times)} "
                           "(raise --steps)")
    t, n = times[first:], tokens[first:]
    q = statistics.quantiles(t, n=10) if len(t) > 1 else [t[0]] * 9
    return {"tokens_per_s": sum(n) / sum(t), "timed_steps": len(t), "first_timed_step": first + 1,
            "last_compiling_step": last_compile + 1 if last_compile >= 0 else None, "tokens_timed": sum(n),
            "step_s": {"median": statistics.median(t), "p10": q[0], "p90": q[-1], "min": min(t), "max": max(t)}}


def ours(data: Path, args, out: Path) -> dict:
    """``pretrain`` (what ``biotok-train mlm`` runs), every step logged: its times, tokens, graphs."""
    cfg = _config(args, args.compile)
    r = pretrain(data, cfg, out, progress=False, force=True)  # a kept --work folder is measured again
    rows = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()]
    times = [b["time"] - a["time"] for a, b in zip(rows, rows[1:])]
    tokens = [b["tokens"] - a["tokens"] for a, b in zip(rows, rows[1:])]
    graphs = [row.get("graphs", 0) for row in rows[1:]]
    return {**summary(times, tokens, graphs, max(0, args.skip - 1)), "final_loss": r.final_loss, "params": r.num_params,
            "losses": r.losses, "tokens_per_step": [rows[0]["tokens"], *tokens]}


class _Rows(torch.utils.data.Dataset):
    """The pre-masked rows of :func:`step_batches`, in order (no per-item work)."""

    def __init__(self, batches: list[dict]) -> None:
        self.cols = {k: torch.cat([b[k] for b in batches]) for k in KEYS}

    def __len__(self) -> int:
        return len(self.cols["input_ids"])

    def __getitem__(self, i: int) -> dict:
        return {k: v[i] for k, v in self.cols.items()}


def hf_trainer(data: Path, args, work: Path, compile_: bool = False, batches: list[dict] | None = None) -> dict:
    """transformers' Trainer on the same model, batches and order; its per-step times and tokens."""
    from transformers import Trainer, TrainerCallback, TrainingArguments, default_data_collator

    packed = PackedData(data)
    batches = batches if batches is not None else step_batches(data, args)
    torch.manual_seed(0)  # the seed our loop builds its model under: the same initial weights
    vocab = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
    model = build("mlm", "bert", args.size, vocab, packed.seq_len).model
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    cuda = device.type == "cuda"
    stamps, graphs, losses = [], [], []

    class Timer(TrainerCallback):
        def on_step_end(self, a, state, control, **kw):
            if cuda:
                torch.cuda.synchronize()
            stamps.append(time.perf_counter())
            graphs.append(graphs_compiled())

    class InOrder(Trainer):
        def _get_train_sampler(self, *a, **k):  # the rows in our loop's order, not shuffled
            return torch.utils.data.SequentialSampler(self.train_dataset)

        def compute_loss(self, model, inputs, *a, **k):
            loss = super().compute_loss(model, inputs, *a, **k)
            losses.append(loss if isinstance(loss, torch.Tensor) else loss[0])
            return loss

    workers = args.workers if cuda else 0
    targs = TrainingArguments(
        output_dir=str(work / "hf"), per_device_train_batch_size=args.batch_size, max_steps=args.steps,
        learning_rate=LR, warmup_steps=0, weight_decay=0.01, max_grad_norm=1.0, adam_epsilon=1e-6,
        bf16=use_bf16(device), logging_steps=10**6, save_strategy="no", report_to=[], seed=0,
        dataloader_num_workers=workers, dataloader_pin_memory=cuda, dataloader_persistent_workers=workers > 0,
        torch_compile=compile_, optim="adamw_torch_fused" if cuda else "adamw_torch", use_cpu=not cuda,
        disable_tqdm=True, lr_scheduler_type="linear",
    )
    trainer = InOrder(model=model, args=targs, train_dataset=_Rows(batches), data_collator=default_data_collator,
                      callbacks=[Timer()])
    start = time.perf_counter()
    trainer.train()
    times = [b - a for a, b in zip([start, *stamps], stamps)]
    tokens = [int(b["attention_mask"].sum()) for b in batches[: len(times)]]
    return {**summary(times[1:], tokens[1:], graphs[1:], max(0, args.skip - 1)), "compile": compile_,
            "losses": [float(x.detach().float()) for x in losses], "tokens_per_step": tokens,
            "bf16": targs.bf16, "workers": workers}


def trainer_best(data: Path, args, work: Path) -> dict:
    """The Trainer eager and (with ``args.compile``) compiled; the faster is the baseline, both reported."""
    from biotok_train.pretrain.compiled import root_cause

    batches = step_batches(data, args)
    runs = [hf_trainer(data, args, work / "eager", False, batches)]
    failed = {}
    if args.compile:
        try:
            runs.append(hf_trainer(data, args, work / "compiled", True, batches))
        except Exception as e:  # noqa: BLE001 - the eager Trainer is then the baseline, and the JSON says why
            failed["compiled"] = {"error": root_cause(e)}
    best = max(runs, key=lambda r: r["tokens_per_s"])
    modes = {("compiled" if r["compile"] else "eager"): {k: v for k, v in r.items() if k != "losses"} for r in runs}
    return {**best, "modes": {**modes, **failed}}


def flops_of(data: Path, size: str) -> float:
    """Training FLOPs per token of BERT ``size`` on ``data`` (:func:`flops_per_token`)."""
    packed = PackedData(data)
    layers, hidden, _, inter, _ = SIZES["bert"][size]
    return flops_per_token(layers, hidden, inter, packed.seq_len, packed.vocab_size, predicted_fraction=0.15)


def measure(data: Path, args, work: Path) -> dict:
    """Both sides on ``data``: the result row (JSON-ready)."""
    a = ours(data, args, work / "ours")
    b = trainer_best(data, args, work)
    packed = PackedData(data)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else \
        f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    peak = peak_tflops(name) if device.type == "cuda" else None
    per_token = flops_of(data, args.size)
    return {
        "device": name, "size": args.size, "seq_len": packed.seq_len, "batch_size": args.batch_size,
        "steps": args.steps, "timed_steps": a["timed_steps"], "compile": args.compile, "params": a["params"],
        "bf16": use_bf16(device), "biotok_tokens_per_s": a["tokens_per_s"], "hf_trainer_tokens_per_s": b["tokens_per_s"],
        "ratio": a["tokens_per_s"] / b["tokens_per_s"], "hf_trainer_mode": "compiled" if b["compile"] else "eager",
        "biotok_mfu": mfu(a["tokens_per_s"], per_token, peak), "hf_mfu": mfu(b["tokens_per_s"], per_token, peak),
        "biotok_step_s": a["step_s"], "hf_step_s": b["step_s"], "hf_modes": b["modes"],
        "same_tokens": a["tokens_per_step"] == b["tokens_per_step"], "tokens_per_step": a["tokens_per_step"],
        "biotok_losses": a["losses"], "hf_losses": b["losses"], "torch": torch.__version__,
        "note": "same model, init, batches, masks and order on both sides; the Trainer's BertForMaskedLM computes the "
                "vocabulary projection at every position, biotok's module only at the masked ones",
    }


def _print(r: dict, path: Path) -> None:
    pct = lambda x: f"{100 * x:.1f} %" if x is not None else "n/a"  # noqa: E731
    ms = lambda s: f"step {1000 * s['median']:.1f} ms [p10 {1000 * s['p10']:.1f}, p90 {1000 * s['p90']:.1f}]"  # noqa: E731
    print(f"device            {r['device']}  (bf16 {r['bf16']})")
    print(f"model             bert-{r['size']}, {r['params'] / 1e6:.1f} M params, batch {r['batch_size']} x {r['seq_len']}")
    print(f"biotok-train mlm  {r['biotok_tokens_per_s']:>12,.0f} tokens/s   MFU {pct(r['biotok_mfu'])}   {ms(r['biotok_step_s'])}")
    print(f"HF Trainer ({r['hf_trainer_mode']}) {r['hf_trainer_tokens_per_s']:>9,.0f} tokens/s   MFU {pct(r['hf_mfu'])}   "
          f"{ms(r['hf_step_s'])}")
    print(f"ratio             {r['ratio']:.2f}x (same tokens per step: {r['same_tokens']})  -> {path}")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, help="prepared data dir (default: prepare the sample corpus)")
    ap.add_argument("--tokenizer", default=str(REPO.parent / "shared/data/tokenizers/camemberta-base"))
    ap.add_argument("--corpus", default=str(REPO / "corpora/sample/e3c_pamj_fr.txt"))
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--skip", type=int, default=5, help="untimed first steps (and every step that compiles)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--compile", action="store_true", help="compile ours; time the Trainer eager and compiled")
    ap.add_argument("--compile-mode", default="default", help="our side's torch.compile mode (reduce-overhead: CUDA graphs)")
    ap.add_argument("--workers", type=int, default=2, help="the Trainer's data-loader workers on CUDA")
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=None, help="CPU threads (torch.set_num_threads)")
    ap.add_argument("--json", type=Path, default=Path("pretrain_throughput.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = args.data or prepare([args.corpus], args.tokenizer, PrepareConfig(seq_len=args.seq_len), work / "data",
                                      progress=False).path
        result = measure(data, args, work)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    _print(result, args.json)


if __name__ == "__main__":
    main()
