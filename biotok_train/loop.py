"""The pretraining loop (MLM/WWM, ALBERT SOP, ELECTRA RTD): one process per device, DDP-ready.

Deterministic and resumable: data order is a function of (seed, position), masking of
(seed, step, micro-batch, rank), and the global RNG (dropout) is saved in every checkpoint, so
N steps + ``resume`` + N steps give the same losses as 2N steps straight.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from biotok.errors import ConfigError, OutputExistsError
from biotok_train import checkpoint as ckpt
from biotok_train import distributed as D
from biotok_train.data import PackedData
from biotok_train.errors import OutOfMemoryAtStartError, TokenizerMismatchError
from biotok_train.masking import mask_tokens
from biotok_train.models import SIZES, Vocab, build, count_params
from biotok_train.optim import build_optimizer, build_scheduler
from biotok_train.prepare import load_data_tokenizer

# Dense bf16 peak TFLOP/s by device-name substring (first match wins), for MFU.
PEAK_TFLOPS: tuple[tuple[str, float], ...] = (
    ("H200", 989.0), ("H100", 989.0), ("GH200", 989.0), ("B200", 2250.0), ("A100", 312.0),
    ("A800", 312.0), ("L40S", 362.0), ("L40", 181.0), ("A6000", 155.0), ("A10", 125.0),
    ("L4", 121.0), ("4090", 165.0), ("3090", 71.0), ("V100", 125.0), ("T4", 65.0),
)


@dataclass(frozen=True)
class PretrainConfig:
    """Everything that defines a pretraining run (saved with the checkpoint)."""

    objective: str = "mlm"  # "mlm" | "electra"
    arch: str = "bert"  # "bert" | "albert" (ignored for electra)
    size: str = "tiny"  # "tiny" | "small" | "base"
    wwm: bool = False
    optim: str = "adamw"  # "adamw" | "lamb"
    steps: int = 1000
    batch_size: int = 32  # sequences per device per micro-batch
    grad_accum: int = 1
    lr: float = 5e-4
    warmup: float = 0.06  # < 1: fraction of steps, else steps
    schedule: str = "linear"  # "linear" | "cosine"
    seed: int = 0
    bf16: bool = True  # autocast on CUDA only
    compile: bool = False
    mask_prob: float = 0.15
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    adam_eps: float = 1e-6
    betas: tuple[float, float] = (0.9, 0.999)
    rtd_weight: float = 50.0
    generator_ratio: float = 1 / 3
    log_every: int = 10
    save_every: int = 0  # 0: only at the end (and on SIGINT)
    peak_tflops: float | None = None
    device: str | None = None  # None: cuda when available, else cpu

    def validate(self) -> None:
        if self.objective not in ("mlm", "electra"):
            raise ConfigError(f"unknown objective {self.objective!r} (mlm or electra)")
        arch = "electra" if self.objective == "electra" else self.arch
        if arch not in SIZES:
            raise ConfigError(f"unknown architecture {self.arch!r} (bert or albert)")
        if self.size not in SIZES[arch]:
            raise ConfigError(f"unknown size {self.size!r} (choose {', '.join(SIZES[arch])})")
        if self.optim not in ("adamw", "lamb"):
            raise ConfigError(f"unknown optimizer {self.optim!r} (adamw or lamb)")
        if self.schedule not in ("linear", "cosine"):
            raise ConfigError(f"unknown schedule {self.schedule!r} (linear or cosine)")
        for name in ("steps", "batch_size", "grad_accum"):
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
        if not 0 < self.mask_prob < 1:
            raise ConfigError("mask probability must be in (0, 1)")
        if self.lr <= 0:
            raise ConfigError("--lr must be positive")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class PretrainResult:
    """What a run produced: where, how far, the per-step losses and the speed."""

    out: Path
    steps: int
    final_loss: float
    losses: list[float]
    tokens_per_second: float
    mfu: float | None = None
    num_params: int = 0
    metrics: dict = field(default_factory=dict)


class _Stop:
    """SIGINT sets a flag; the loop saves a checkpoint and then raises KeyboardInterrupt."""

    def __init__(self) -> None:
        self.flag = False
        self._old = None

    def __enter__(self) -> "_Stop":
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.flag:  # a second Ctrl-C stops at once
            raise KeyboardInterrupt
        self.flag = True

    def __exit__(self, *exc) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


def peak_flops(device: torch.device, override: float | None) -> float | None:
    """Peak FLOP/s for MFU: ``override`` TFLOP/s, else the table by GPU name; None on CPU."""
    if override:
        return override * 1e12
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    for key, tflops in PEAK_TFLOPS:
        if key in name:
            return tflops * 1e12
    return None


def _mask_generator(seed: int, step: int, micro: int, rank: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed((seed * 1_000_003 + step * 7_919 + micro * 104_729 + rank * 15_485_863) % (2**63))
    return g


def _check_resume(state: dict, config: PretrainConfig, fingerprint: str, out: Path) -> None:
    if state.get("fingerprint") != fingerprint:
        raise TokenizerMismatchError(
            f"the checkpoint in {out} was trained on data of another tokenizer "
            f"(sha256 {str(state.get('fingerprint'))[:12]} vs {fingerprint[:12]}): use another --out"
        )
    old = state.get("config", {})
    for key in ("objective", "arch", "size", "batch_size", "grad_accum", "seed"):
        if key in old and old[key] != getattr(config, key):
            raise ConfigError(f"--resume with a different {key} ({old[key]!r} -> {getattr(config, key)!r})")


def pretrain(
    data: str | Path,
    config: PretrainConfig,
    out: str | Path,
    *,
    resume: bool = False,
    progress: bool = True,
    stop_after: int | None = None,
) -> PretrainResult:
    """Pretrain a model on prepared ``data``; save it (HF format) and its state under ``out``.

    ``stop_after`` ends this call after that many steps of the run (a checkpoint is saved), for
    time-sliced jobs: call again with ``resume=True`` to continue the same schedule.
    """
    config.validate()
    out = Path(out)
    packed = PackedData(data)  # raises DataError for a missing or broken directory
    load_data_tokenizer(data)  # the stored tokenizer must match meta.json
    fingerprint = packed.fingerprint
    d = D.setup(config.device)
    state = ckpt.load_state(out) if resume else None
    if state is None and not resume and (out / ckpt.STATE).exists():
        raise OutputExistsError(f"{out} holds a checkpoint: pass --resume to continue it, or another --out")
    if state is not None:
        _check_resume(state, config, fingerprint, out)
    if d.main:
        out.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(config.seed)
    vocab = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
    module = build(config.objective, config.arch, config.size, vocab, packed.seq_len,
                   generator_ratio=config.generator_ratio, rtd_weight=config.rtd_weight).to(d.device)
    optimizer = build_optimizer(module, config.optim, config.lr, weight_decay=config.weight_decay,
                                betas=config.betas, eps=config.adam_eps)
    scheduler = build_scheduler(optimizer, total=config.steps, warmup=config.warmup, schedule=config.schedule)
    start, losses, tokens_seen, base_position = 0, [], 0, 0
    if state is not None:
        module.load_state_dict(state["module"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        ckpt.set_rng_state(state["rng"])
        start, losses, tokens_seen = int(state["step"]), list(state["losses"]), int(state.get("tokens", 0))
        base_position = int(state["data_position"])
    train_module: nn.Module = module
    if d.enabled:
        from torch.nn.parallel import DistributedDataParallel as DDP

        train_module = DDP(module, device_ids=[d.device.index] if d.device.type == "cuda" else None)
    ddp_module = train_module  # no_sync() lives on the DDP wrapper, not on the compiled one
    if config.compile:
        train_module = torch.compile(train_module)

    n_params = count_params(module)
    peak = peak_flops(d.device, config.peak_tflops)
    use_bf16 = config.bf16 and d.device.type == "cuda"
    sop = config.objective == "mlm" and config.arch == "albert"
    electra = config.objective == "electra"
    per_step = config.batch_size * config.grad_accum * d.world

    def save(step: int, digests: list[str] | None = None) -> None:
        if d.main:
            ckpt.save_model(module, out)
            ckpt.save_hf_tokenizer(packed.path / "tokenizer", out, seq_len=packed.seq_len)
            ckpt.save_state(out, {
                "module": module.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "rng": ckpt.rng_state(), "step": step,
                "data_position": base_position + (step - start) * per_step, "losses": losses, "tokens": tokens_seen,
                "config": config.to_dict(), "fingerprint": fingerprint,
            })
            ckpt.write_run_meta(out, {
                "config": config.to_dict(), "step": step, "tokenizer_fingerprint": fingerprint,
                "data": str(packed.path), "seq_len": packed.seq_len, "num_params": n_params,
                "model": "discriminator" if electra else config.arch,
                "world_size": d.world, "rank_weight_sha256": digests,
            })
        D.barrier(d)

    bar = None
    if progress and d.main:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.steps, initial=start, desc=f"{config.objective}/{config.arch if not electra else 'electra'}",
                   unit="step", dynamic_ncols=True)
    metrics_file = _open_metrics(out / "metrics.jsonl", start) if d.main else None
    pending: list[tuple[int, dict]] = []
    window_tokens, window_start = 0, time.perf_counter()
    run_tokens, run_start = 0, time.perf_counter()
    last: dict = {}
    module.train()
    try:
        with _Stop() as stop:
            end = config.steps if stop_after is None else max(start, min(config.steps, stop_after))
            for step in range(start, end):
                step_metrics: dict[str, torch.Tensor] = {}
                step_tokens = 0
                for micro in range(config.grad_accum):
                    # samples consumed so far (kept across resumes, even with another world size)
                    pos = base_position + (step - start) * per_step + (micro * d.world + d.rank) * config.batch_size
                    batch = packed.batch(packed.indices(pos, config.batch_size, config.seed), sop=sop,
                                         seed=config.seed)
                    m = mask_tokens(batch.input_ids, batch.word_starts, batch.special,
                                    mask_id=packed.mask_id, vocab_size=packed.vocab_size,
                                    prob=config.mask_prob, wwm=config.wwm,
                                    mask_frac=0.85 if electra else 0.8, random_frac=0.0 if electra else 0.1,
                                    generator=_mask_generator(config.seed, step, micro, d.rank))
                    step_tokens += batch.num_tokens
                    nb = d.device.type == "cuda"
                    inputs = dict(
                        input_ids=m.input_ids.to(d.device, non_blocking=nb),
                        attention_mask=batch.attention_mask.to(d.device, non_blocking=nb),
                        token_type_ids=batch.token_type_ids.to(d.device, non_blocking=nb),
                        labels=m.labels.to(d.device, non_blocking=nb),
                        sop_labels=batch.sop_labels.to(d.device, non_blocking=nb),
                        original_ids=batch.input_ids.to(d.device, non_blocking=nb),
                    )
                    sync = micro == config.grad_accum - 1 or not d.enabled
                    ctx = contextlib.nullcontext() if sync else ddp_module.no_sync()
                    try:
                        with ctx, torch.autocast(d.device.type, dtype=torch.bfloat16, enabled=use_bf16):
                            outputs = train_module(**inputs)
                            loss = outputs["loss"] / config.grad_accum
                        loss.backward()
                    except torch.cuda.OutOfMemoryError:
                        if step == start:
                            raise OutOfMemoryAtStartError(
                                f"out of GPU memory at the first step (size {config.size}, "
                                f"--batch-size {config.batch_size}, seq {packed.seq_len}): lower "
                                "--batch-size (raise --grad-accum to keep the batch), or use "
                                "--size small or data prepared with --seq-len 128"
                            ) from None
                        raise
                    for k, v in outputs.items():
                        v = v.detach().float()
                        step_metrics[k] = step_metrics.get(k, 0) + v / config.grad_accum
                if config.max_grad_norm > 0:
                    step_metrics["grad_norm"] = torch.nn.utils.clip_grad_norm_(
                        module.parameters(), config.max_grad_norm).detach().float()
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                tokens = step_tokens * d.world
                tokens_seen += tokens
                window_tokens += tokens
                run_tokens += tokens
                pending.append((step + 1, step_metrics))
                if bar is not None:
                    bar.update(1)
                done = step + 1 == end
                if (step + 1) % config.log_every == 0 or done:
                    last = _flush(pending, losses, d, metrics_file, bar, scheduler, window_tokens,
                                  time.perf_counter() - window_start, n_params, peak, tokens_seen)
                    pending, window_tokens, window_start = [], 0, time.perf_counter()
                if D.any_flag(stop.flag, d):
                    if pending:
                        _flush(pending, losses, d, metrics_file, bar, scheduler, window_tokens,
                               time.perf_counter() - window_start, n_params, peak, tokens_seen)
                        pending = []
                    save(step + 1)
                    raise KeyboardInterrupt
                if config.save_every and (step + 1) % config.save_every == 0 and not done:
                    if pending:
                        last = _flush(pending, losses, d, metrics_file, bar, scheduler, window_tokens,
                                      time.perf_counter() - window_start, n_params, peak, tokens_seen)
                        pending, window_tokens, window_start = [], 0, time.perf_counter()
                    save(step + 1)
        elapsed = time.perf_counter() - run_start
        save(end, D.rank_digests(module, d))
    finally:
        if bar is not None:
            bar.close()
        if metrics_file is not None:
            metrics_file.close()
    tps = run_tokens / elapsed if elapsed > 0 and run_tokens else 0.0
    mfu = 6 * n_params * tps / peak if peak else None
    D.teardown(d)
    return PretrainResult(out=out, steps=end, final_loss=losses[-1] if losses else math.nan,
                          losses=losses, tokens_per_second=tps, mfu=mfu, num_params=n_params, metrics=last)


def _open_metrics(path: Path, start: int):
    """metrics.jsonl for appending, without rows logged after the checkpoint we resume from."""
    kept = []
    if start and path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                if json.loads(line).get("step", 0) <= start:
                    kept.append(line + "\n")
            except json.JSONDecodeError:
                continue
    f = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by pretrain
    f.writelines(kept)
    return f


def _flush(pending, losses, d, metrics_file, bar, scheduler, tokens, seconds, n_params, peak, tokens_seen) -> dict:
    """Sync the metrics of the pending steps (one device sync per log interval) and log them."""
    sums: dict[str, float] = {}
    for step, metrics in pending:
        values = {k: float(D.mean(v, d)) if torch.is_tensor(v) else float(v) for k, v in metrics.items()}
        losses.append(values["loss"])
        for k, v in values.items():
            sums[k] = sums.get(k, 0.0) + v
    # the row is the mean over the interval (like HF logs); ``losses`` keeps every step
    row: dict = {"step": pending[-1][0], "steps_averaged": len(pending),
                 **{k: v / len(pending) for k, v in sums.items()}}
    tps = tokens / seconds if seconds > 0 else 0.0
    row.update(lr=scheduler.get_last_lr()[0], tokens_per_s=tps, tokens=tokens_seen, time=time.time(),
               mfu=(6 * n_params * tps / peak) if peak else None)
    if metrics_file is not None:
        metrics_file.write(json.dumps(row) + "\n")
        metrics_file.flush()
    if bar is not None:
        post = {"loss": f"{row['loss']:.3f}", "acc": f"{row.get('mlm_acc', 0):.3f}", "tok/s": f"{tps:,.0f}"}
        if row["mfu"] is not None:
            post["mfu"] = f"{100 * row['mfu']:.1f}%"
        bar.set_postfix(post, refresh=False)
    return row
