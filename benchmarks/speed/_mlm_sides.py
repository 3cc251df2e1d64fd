"""The two sides of the pretraining throughput benchmark, shared by ``benchmarks.speed.pretrain_throughput``
and the GPU suite's throughput step: our loop and transformers' ``Trainer`` at its best on the same
batches (see pretrain_throughput's docstring for how the comparison is made fair)."""

from __future__ import annotations

import json
import platform
import statistics
import time
from pathlib import Path

import torch

from biotok_train.config import SIZES, OptimConfig, PretrainConfig
from biotok_train.precision import use_bf16
from biotok_train.pretrain.compiled import graphs_compiled
from biotok_train.pretrain.feed import masked_batch
from biotok_train.pretrain.flops import flops_per_token, mfu, peak_tflops
from biotok_train.pretrain.loop import pretrain
from biotok_train.pretrain.models import Vocab, build
from biotok_train.pretrain.packed import PackedData

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
