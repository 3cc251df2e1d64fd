"""The pretraining loop (MLM/WWM, ALBERT SOP, ELECTRA RTD): one process per device, DDP-ready.

Deterministic and resumable: data order is a function of (seed, position), masking of
(seed, step, micro-batch, rank), and the global RNG (dropout) is saved in every checkpoint, so
N steps + ``resume`` + N steps give the same losses as 2N steps straight.

Read :func:`pretrain` first: setup, step, log and save are the named functions below it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import math
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from biotok.errors import ConfigError, OutputExistsError, Terminated
from biotok.progress import Progress
from biotok_train.config import PretrainConfig
from biotok_train.errors import OutOfMemoryAtStartError, TokenizerMismatchError
from biotok_train.hf_models import save_hf_tokenizer
from biotok_train.optim import build, clip_and_step
from biotok_train.pretrain import checkpoint as ckpt
from biotok_train.pretrain import distributed as D
from biotok_train.pretrain.compiled import (
    compile_enabled, compile_error, compile_module, graphs_compiled, is_compile_error, release_compile_workers,
    with_resolved_mode,
)
from biotok_train.pretrain.feed import Feed, mask_generator, masked_batch
from biotok_train.pretrain.masking import mask_tokens
from biotok_train.precision import autocast
from biotok_train.pretrain.models import Vocab, build as build_model, count_params
from biotok_train.pretrain.packed import PackedData
from biotok_train.pretrain.flops import mfu, module_flops_per_token, peak_tflops
from biotok_train.pretrain.prepare import load_data_tokenizer
from biotok_train.tracking import Tracker
from biotok_train.cards import write_pretrain_card

log = logging.getLogger(__name__)


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
    heldout: dict | None = None  # held-out [MASK] loss / top-1 beside their floors (with --heldout)


def pretrain(
    data: str | Path,
    config: PretrainConfig,
    out: str | Path,
    *,
    resume: bool = False,
    progress: bool = True,
    stop_after: int | None = None,
    force: bool = False,
) -> PretrainResult:
    """Pretrain a model on prepared ``data``; save it (HF format) and its state under ``out``.

    ``stop_after`` ends this call after that many steps of the run (a checkpoint is saved), for
    time-sliced jobs: call again with ``resume=True`` to continue the same schedule. ``out`` is
    never one of the run's inputs (data, held-out data, ``init_from``), and a non-empty ``out`` is
    only continued (``resume``) or, with ``force``, replaced when it is a previous pretraining run.
    """
    # setup: data, model, optimizer, and the checkpoint to resume from
    run = _setup(data, config, Path(out), resume, force)
    end = config.steps if stop_after is None else max(run.start, min(config.steps, stop_after))
    try:
        with _Log(run, progress) as log, _Stop() as stop:
            for step in range(run.start, end):
                # one optimizer step over grad_accum micro-batches
                log.add(step + 1, *_train_step(run, step))
                done = step + 1 == end
                # log: one device sync per interval
                if (step + 1) % config.log_every == 0 or done:
                    log.flush()
                # Ctrl-C or SIGTERM on any rank: checkpoint, then stop; the steps not yet logged are kept
                # in the checkpoint (a row here would split the next one: a resumed run logs as a straight one)
                if D.any_flag(stop.flag, run.dist):
                    _save(run, step + 1, pending=log.hold())
                    stop.raise_()
                # periodic checkpoint
                if config.save_every and (step + 1) % config.save_every == 0 and not done:
                    log.flush()
                    _save(run, step + 1)
            # final save, with every rank's weights digest (DDP replicas must agree)
            _save(run, end, D.rank_digests(run.module, run.dist))
        heldout = _evaluate_heldout(run, end, progress) if config.heldout and run.dist.main else None
    finally:
        run.feed.close()
        D.teardown(run.dist)
    if run.compiled and end == config.steps:  # the run is over: stop compile workers now, not at exit
        release_compile_workers()
    tps = log.run_tokens / log.elapsed if log.elapsed > 0 and log.run_tokens else 0.0
    return PretrainResult(out=run.out, steps=end, final_loss=run.losses[-1] if run.losses else math.nan,
                          losses=run.losses, tokens_per_second=tps, mfu=_mfu(run, tps), num_params=run.n_params,
                          metrics=log.last, heldout=heldout)


def _evaluate_heldout(run: "_Run", step: int, progress: bool = False) -> dict:
    """Held-out [MASK] loss and top-1 beside the unigram and most-frequent-piece floors
    (:mod:`biotok_train.pretrain.heldout`); also written to ``heldout.json`` in the run folder."""
    from biotok.output import atomic_file
    from biotok_train.pretrain.heldout import evaluate_heldout, unigram_counts

    cfg = run.config
    h = evaluate_heldout(run.module, PackedData(cfg.heldout), unigram_counts(run.packed), mask_prob=cfg.mask_prob,
                         wwm=cfg.wwm, batch_size=cfg.batch_size, device=run.dist.device, bf16=cfg.bf16,
                         progress=progress)
    result = {"step": step, "heldout": str(cfg.heldout), "objective": cfg.objective,
              "model": "generator" if run.electra else cfg.arch, **h.summary()}
    with atomic_file(run.out / "heldout.json", force=True) as tmp:
        tmp.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    with Tracker(run.out, cfg.report_to, announce=False) as tracker:  # beside the training curves
        tracker.heldout(step, result)
    write_pretrain_card(run.out)  # the card shows the held-out numbers
    return result


# --- setup -----------------------------------------------------------------------------------
@dataclass
class _Run:
    """Everything a running pretraining job holds (mutable: the step counters move)."""

    config: PretrainConfig
    out: Path
    packed: PackedData
    dist: D.Dist
    module: nn.Module  # the training module (saved, digested)
    train_module: nn.Module  # what forward runs on: DDP and/or compiled wrapper of ``module``
    ddp_module: nn.Module  # no_sync() lives on the DDP wrapper, not on the compiled one
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    start: int = 0
    losses: list[float] = field(default_factory=list)
    tokens_seen: int = 0
    base_position: int = 0  # samples consumed before ``start`` (kept across resumes)
    held: list = field(default_factory=list)  # [step, metrics] not yet logged when the checkpoint was saved
    n_params: int = 0
    peak: float | None = None  # TFLOP/s (None: no MFU)
    flops_per_token: float = 0.0  # training FLOPs per token (biotok_train.pretrain.flops)
    feed: Feed | None = None  # the micro-batches, built one ahead (biotok_train.pretrain.feed)
    compiled: bool = False  # train_module is torch.compile'd

    @property
    def per_step(self) -> int:
        return self.config.batch_size * self.config.grad_accum * self.dist.world

    @property
    def electra(self) -> bool:
        return self.config.objective == "electra"


def _setup(data: str | Path, config: PretrainConfig, out: Path, resume: bool, force: bool = False) -> _Run:
    """Open the data, join the process group, and build the run (torn down again if that fails)."""
    D.check_device(config.device)  # --device against what torch sees, before any work
    packed = PackedData(data)  # raises DataError for a missing, broken or truncated directory
    if config.batch_tokens:  # the batch in tokens: sequences of this data's length
        config = dataclasses.replace(config, batch_size=max(1, config.batch_tokens // packed.seq_len))
    load_data_tokenizer(data)  # the stored tokenizer must match meta.json
    if config.heldout is not None:  # checked now, not after the training
        held = PackedData(config.heldout)
        if held.fingerprint != packed.fingerprint:
            raise TokenizerMismatchError(f"--heldout {config.heldout} was prepared with another tokenizer than "
                                         f"{data} (sha256 {held.fingerprint[:12]} vs {packed.fingerprint[:12]})")
    inputs = [p for p in (data, config.heldout, config.init_from) if p is not None]
    replace = _check_out(out, resume, force, inputs)
    d = D.setup(config.device)
    try:
        return _build(packed, d, config, out, resume, replace)
    except BaseException:
        D.teardown(d)
        raise


def _check_out(out: Path, resume: bool, force: bool = False, inputs: list = ()) -> bool:
    """The run folder can be written (never an input), and ``--resume`` has a checkpoint to
    continue; True when a previous run there is to be replaced (``force``)."""
    from biotok.output import check_can_create, check_inputs

    check_inputs(out, inputs)
    if resume and not (out / ckpt.STATE).is_file() and _stopped_before_first_save(out):
        log.info("%s: the run stopped before its first checkpoint; --resume starts it again from step 0", out)
        check_can_create(out / ckpt.RUN_META)
        return True  # its log alone is replaced, once every check has passed
    if resume and not (out / ckpt.STATE).is_file():
        raise ConfigError(f"--resume: {out} holds no checkpoint ({out / ckpt.STATE} is missing); "
                          "run without --resume to start a new run")
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} exists and is not a folder; choose another --out")
    check_can_create(out / ckpt.RUN_META)
    if resume or not out.is_dir() or not any(out.iterdir()):
        return False
    # metrics.jsonl alone: a run that stopped before its first save (e.g. a compile error at step 1)
    if not ((out / ckpt.RUN_META).is_file() or (out / ckpt.STATE).is_file() or (out / "metrics.jsonl").is_file()):
        raise OutputExistsError(f"{out} is not empty and is not a biotok pretraining run (no {ckpt.RUN_META} "
                                "inside); choose another --out")
    if not force:
        raise OutputExistsError(f"{out} holds a previous run: pass --resume to continue it, --force to replace "
                                "it, or another --out")
    return True


def _stopped_before_first_save(out: Path) -> bool:
    """``out`` holds only what a pretraining writes before its first checkpoint (metrics.jsonl,
    tensorboard/): a run killed early (a closed pipe, a signal), which ``--resume`` starts again."""
    try:
        names = {p.name for p in out.iterdir()} if out.is_dir() else set()
    except OSError:
        return False
    return "metrics.jsonl" in names and names <= {"metrics.jsonl", "tensorboard"}


def _build(packed: PackedData, d: D.Dist, config: PretrainConfig, out: Path, resume: bool,
           replace: bool = False) -> _Run:
    """Check the checkpoint, build the model and optimizer, restore the state, wrap for DDP."""
    config = with_resolved_mode(config, d.device, d.world)  # compile_mode "auto": CUDA graphs or not
    state = ckpt.load_state(out) if resume else None
    if state is None and not resume and not replace and (out / ckpt.STATE).exists():
        raise OutputExistsError(f"{out} holds a checkpoint: pass --resume to continue it, or another --out")
    if state is not None:
        _check_resume(state, config, packed.fingerprint, out)
    if config.init_from is not None:  # before anything is written: the model must fit the data
        from biotok_train.pretrain.init import check_init_from

        check_init_from(config.init_from, load_data_tokenizer(packed.path), config.objective)

    torch.manual_seed(config.seed)
    random.seed(config.seed)  # unused by the loop, but saved in state.pt: seeded so the file is byte-stable
    np.random.seed(config.seed % 2**32)
    if config.init_from is not None:  # continual pretraining from a HF checkpoint
        from biotok_train.pretrain.init import build_from

        module = build_from(config.init_from, config.objective, packed.seq_len,
                            rtd_weight=config.rtd_weight).to(d.device)
    else:
        vocab = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
        module = build_model(config.objective, config.arch, config.size, vocab, packed.seq_len,
                             generator_ratio=config.generator_ratio, rtd_weight=config.rtd_weight).to(d.device)
    optimizer, scheduler = build(module, config.optim, config.steps)
    if d.main:  # the model is built (an --init-from that does not load fails before this): write now
        if replace:  # every check passed: the previous run (--force) goes now, not before
            import shutil

            shutil.rmtree(out)
        out.mkdir(parents=True, exist_ok=True)
    run = _Run(config, out, packed, d, module, module, module, optimizer, scheduler,
               n_params=count_params(module), peak=peak_of(d.device, config.peak_tflops),
               flops_per_token=module_flops_per_token(module, packed.seq_len, config.mask_prob))
    if state is not None:
        module.load_state_dict(state["module"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        ckpt.set_rng_state(state["rng"])
        run.start, run.losses, run.tokens_seen = int(state["step"]), list(state["losses"]), int(state.get("tokens", 0))
        run.base_position = int(state["data_position"])
        run.held = [(int(s), dict(m)) for s, m in state.get("pending", [])]
    if d.enabled:
        from torch.nn.parallel import DistributedDataParallel as DDP

        device_ids = [d.device.index] if d.device.type == "cuda" else None
        run.train_module = run.ddp_module = DDP(module, device_ids=device_ids)
    if compile_enabled(config, d.device):
        run.train_module, run.compiled = compile_module(run.train_module, config), True
    run.feed = Feed(functools.partial(_make_micro_batch, run), d.device, ahead=d.device.type == "cuda")
    module.train()
    return run


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


def peak_of(device: torch.device, override: float | None) -> float | None:
    """Peak TFLOP/s for MFU: ``override``, else the GPU's from :mod:`biotok_train.pretrain.flops`; None on CPU."""
    if override:
        return override
    return peak_tflops(torch.cuda.get_device_name(device)) if device.type == "cuda" else None


def _mfu(run: _Run, tokens_per_second: float) -> float | None:
    return mfu(tokens_per_second, run.flops_per_token, run.peak)


# --- step ------------------------------------------------------------------------------------
_mask_generator = mask_generator  # the name tests and older callers use


def _make_micro_batch(run: _Run, key: tuple[int, int]) -> tuple[dict[str, torch.Tensor], int]:
    """The masked inputs (CPU) of micro-batch ``key`` = (step, micro), and its number of real tokens."""
    step, micro = key
    cfg, d = run.config, run.dist
    # samples consumed so far (kept across resumes, even with another world size)
    pos = run.base_position + (step - run.start) * run.per_step + (micro * d.world + d.rank) * cfg.batch_size
    return masked_batch(run.packed, pos, cfg.batch_size, seed=cfg.seed, step=step, micro=micro, rank=d.rank,
                        objective=cfg.objective, arch=cfg.arch, mask_prob=cfg.mask_prob, wwm=cfg.wwm,
                        mask=mask_tokens)  # looked up here: tests wrap loop.mask_tokens


def _micro_batch(run: _Run, step: int, micro: int) -> tuple[dict[str, torch.Tensor], int]:
    """The masked inputs of one micro-batch on the device, and its number of real tokens; the next
    micro-batch is built meanwhile (on CUDA)."""
    last = micro + 1 == run.config.grad_accum
    nxt = None if last and step + 1 >= run.config.steps else ((step + 1, 0) if last else (step, micro + 1))
    return run.feed.get((step, micro), nxt)


def _train_step(run: _Run, step: int) -> tuple[dict[str, torch.Tensor], int]:
    """Forward/backward over the micro-batches, then one optimizer step; returns the step's
    metrics (device tensors, averaged over micro-batches) and its tokens over all ranks."""
    cfg, d = run.config, run.dist
    metrics: dict[str, torch.Tensor] = {}
    tokens = 0
    for micro in range(cfg.grad_accum):
        inputs, n = _micro_batch(run, step, micro)
        tokens += n
        sync = micro == cfg.grad_accum - 1 or not d.enabled
        ctx = contextlib.nullcontext() if sync else run.ddp_module.no_sync()
        try:
            if run.compiled and cfg.compile_mode in ("reduce-overhead", "max-autotune"):
                torch.compiler.cudagraph_mark_step_begin()  # a new iteration for the CUDA graph trees
            with ctx, autocast(d.device, cfg.bf16):
                outputs = run.train_module(**inputs)
                loss = outputs["loss"] / cfg.grad_accum
            loss.backward()
        except torch.cuda.OutOfMemoryError as e:
            if step == run.start:
                raise OutOfMemoryAtStartError(
                    f"out of GPU memory at the first step (size {cfg.size}, --batch-size {cfg.batch_size}, "
                    f"seq {run.packed.seq_len}): lower --batch-size (raise --grad-accum to keep the batch), "
                    "or use --size small or data prepared with --seq-len 128"
                ) from e
            raise
        except Exception as e:
            if run.compiled and is_compile_error(e):
                raise compile_error(e, cfg) from e
            raise
        for k, v in outputs.items():
            metrics[k] = metrics.get(k, 0) + v.detach().float() / cfg.grad_accum
    grad_norm = clip_and_step(run.module, run.optimizer, run.scheduler, cfg.optim.max_grad_norm)
    if grad_norm is not None:
        metrics["grad_norm"] = grad_norm
    return metrics, tokens * d.world


# --- log -------------------------------------------------------------------------------------
class _Log:
    """Pending step metrics, the metrics.jsonl file (rank 0), the progress bar and the speed window."""

    def __init__(self, run: _Run, progress: bool) -> None:
        self.run = run
        main = run.dist.main
        self.file = _open_metrics(run.out / "metrics.jsonl", run.start) if main else None
        self.tracker = Tracker(run.out, run.config.report_to, main)  # its "TensorBoard:" line before the bar
        name = "electra" if run.electra else run.config.arch
        # a bar on a terminal, a line every 30 s off it (biotok.progress)
        self.bar = Progress(run.config.steps, f"{run.config.objective}/{name}", initial=run.start,
                            enabled=progress and main, with_fields=True)
        self.pending: list[tuple[int, dict]] = list(run.held)  # a resumed run logs them with its next row
        self.window_tokens, self.window_start = 0, time.perf_counter()
        self.run_tokens, self.run_start, self.elapsed = 0, time.perf_counter(), 0.0
        self.last: dict = {}

    def add(self, step: int, metrics: dict, tokens: int) -> None:
        self.run.tokens_seen += tokens
        self.window_tokens += tokens
        self.run_tokens += tokens
        self.elapsed = time.perf_counter() - self.run_start
        self.pending.append((step, metrics))
        self.bar.update(1)

    def flush(self) -> None:
        """Sync the pending steps' metrics (one device sync), append them to ``losses``, write one
        row (their mean, like HF logs) and reset the speed window. Nothing pending: no-op."""
        if not self.pending:
            return
        run = self.run
        sums: dict[str, float] = {}
        for _, metrics in self.pending:
            values = {k: float(D.mean(v, run.dist)) if torch.is_tensor(v) else float(v) for k, v in metrics.items()}
            run.losses.append(values["loss"])
            for k, v in values.items():
                sums[k] = sums.get(k, 0.0) + v
        seconds = time.perf_counter() - self.window_start
        tps = self.window_tokens / seconds if seconds > 0 else 0.0
        row: dict = {"step": self.pending[-1][0], "steps_averaged": len(self.pending),
                     **{k: v / len(self.pending) for k, v in sums.items()}}
        row.update(lr=run.scheduler.get_last_lr()[0], tokens_per_s=tps, tokens=run.tokens_seen, time=time.time(),
                   mfu=_mfu(run, tps))
        if run.compiled:
            row["graphs"] = graphs_compiled()
        if self.file is not None:
            self.file.write(json.dumps(row) + "\n")
            self.file.flush()
        self.tracker.train_row(row)  # counters (tokens, steps averaged) stay in the JSONL
        post = {"loss": f"{row['loss']:.3f}", "acc": f"{row.get('mlm_acc', 0):.3f}", "tokens/s": f"{tps:,.0f}"}
        if run.electra:  # its loss is generator MLM + weighted discriminator RTD: each named
            post = {"loss (weighted total)": post["loss"], "generator MLM loss": f"{row['mlm_loss']:.3f}",
                    "discriminator RTD loss": f"{row['rtd_loss']:.3f}", "tokens/s": post["tokens/s"]}
        if row["mfu"] is not None:
            post["mfu"] = f"{100 * row['mfu']:.1f}%"
        self.bar.set(**post)
        self.last = row
        self.pending, self.window_tokens, self.window_start = [], 0, time.perf_counter()

    def hold(self) -> list:
        """The pending steps' metrics as plain numbers (one device sync, every rank), without logging
        them: what a checkpoint taken between two rows keeps for the resumed run's next row."""
        run = self.run
        return [[step, {k: float(D.mean(v, run.dist)) if torch.is_tensor(v) else float(v) for k, v in metrics.items()}]
                for step, metrics in self.pending]

    def __enter__(self) -> "_Log":
        return self

    def __exit__(self, *exc) -> None:
        self.bar.close()
        if self.file is not None:
            self.file.close()
        self.tracker.close()


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
    f = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed when the _Log exits
    f.writelines(kept)
    return f


# --- save ------------------------------------------------------------------------------------
def _type_vocab_size(module) -> int:
    """Token types the trained model knows: 1 for RoBERTa/CamemBERT continued with --init-from."""
    hf = getattr(module, "model", None) or getattr(module, "discriminator", None)
    return int(getattr(getattr(hf, "config", None), "type_vocab_size", 2) or 2)


def _save(run: _Run, step: int, digests: list[str] | None = None, pending: list | None = None) -> None:
    """Rank 0 writes the HF model + tokenizer, the training state and biotok_pretrain.json (whose
    ``step`` marks the last checkpoint); every rank waits for it. ``pending``: the steps since the
    last metrics row (a stop between two rows), restored by the resumed run."""
    cfg, d, packed = run.config, run.dist, run.packed
    if d.main:
        ckpt.save_model(run.module, run.out)
        save_hf_tokenizer(packed.path / "tokenizer", run.out, seq_len=packed.seq_len,
                          type_vocab_size=_type_vocab_size(run.module))
        ckpt.save_state(run.out, {
            "module": run.module.state_dict(), "optimizer": run.optimizer.state_dict(),
            "scheduler": run.scheduler.state_dict(), "rng": ckpt.rng_state(), "step": step,
            "data_position": run.base_position + (step - run.start) * run.per_step, "losses": run.losses,
            "tokens": run.tokens_seen, "config": cfg.to_dict(), "fingerprint": packed.fingerprint,
            "pending": pending or [],
        })
        ckpt.write_run_meta(run.out, {
            "config": cfg.to_dict(), "step": step, "tokenizer_fingerprint": packed.fingerprint,
            "data": str(packed.path), "seq_len": packed.seq_len, "num_params": run.n_params,
            "model": "discriminator" if run.electra else cfg.arch,
            "world_size": d.world, "rank_weight_sha256": digests,
        })
        write_pretrain_card(run.out)  # README.md: how it was made, from the files just written
    D.barrier(d)


class _Stop:
    """SIGINT (Ctrl-C) or SIGTERM (what a job scheduler sends) sets a flag; the loop saves a
    checkpoint at the end of the step, then raises KeyboardInterrupt (exit 130) or
    :class:`~biotok.errors.Terminated` (exit 143). A second signal stops at once."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.flag = False
        self.signum: int | None = None
        self._old: dict = {}

    def __enter__(self) -> "_Stop":
        if threading.current_thread() is threading.main_thread():
            self._old = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        return self

    def _handle(self, signum, frame) -> None:
        if self.flag:  # a second signal stops at once
            self.raise_()
        self.flag, self.signum = True, signum

    def raise_(self) -> None:
        """The exception of the signal that stopped the run (KeyboardInterrupt when another rank's)."""
        raise Terminated() if self.signum == signal.SIGTERM else KeyboardInterrupt

    def __exit__(self, *exc) -> None:
        for s, old in self._old.items():
            signal.signal(s, old)


__all__ = ["PretrainConfig", "PretrainResult", "peak_of", "pretrain"]
