"""``run_probe``: load the tokenizers and texts, train and score one GPT-2 per arm and seed
(each finished run cached under ``OUT/runs``, so a rerun skips it), then write the report.

probe.json, probe.md and probe.png depend only on the inputs and the seeds (byte-identical
reruns); the CPU and wall time of each run go to timings.json.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from biotok.errors import ConfigError, OutputExistsError, TokenizerLoadError
from biotok.output import atomic_file, check_can_create, check_inputs
from biotok.tokenizer import BiotokTokenizer
from biotok_train.config import ProbeConfig
from biotok_train.probe import data as D

MARKER = "probe-config.json"  # what makes a folder a probe output (and holds its recipe)
FORMAT = 1  # version of the cached run files


@dataclass
class Arm:
    """One tokenizer with its encoded texts and unigram floor."""

    name: str
    source: str
    key: str  # folder of its cached runs
    tok: BiotokTokenizer
    norm: D.Normalization
    vocab: int  # model vocabulary: the tokenizer's ids + the boundary id
    train_docs: list
    held_docs: list
    stream_tokens: int
    floor_bits: np.ndarray  # per held-out document
    unk: int  # held-out pieces that are the unknown token
    round_trip: float  # share of held-out documents whose pieces decode back to the normalized text


def load_tokenizer(spec: str) -> BiotokTokenizer:
    """A tokenizer by path or alias (biotok's loader, else transformers'), without truncation."""
    from biotok_train.hf_models import load_model_tokenizer

    p = Path(spec).expanduser()
    if not p.exists() and (spec.startswith((".", "/", "~")) or spec.count("/") > 1):
        raise TokenizerLoadError(f"tokenizer not found: {spec}")
    return load_model_tokenizer(spec)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "tokenizer"


def _sha256_files(paths: Sequence[str]) -> list[str]:
    from biotok.corpus import resolve
    from biotok.io import sha256_file

    return [sha256_file(cf.path) if cf.path != "-" else "-" for cf in resolve(list(paths))]


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, force=True) as tmp:
        tmp.write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _prepare_out(out: Path, cfg: ProbeConfig, recipe: dict, force: bool) -> None:
    """Create ``out``, or resume the probe in it (same recipe), or replace it (``force``)."""
    check_inputs(out, [*cfg.corpus, *cfg.heldout, *cfg.tokenizers])
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} exists and is not a folder; choose another --out")
    check_can_create(out / MARKER)
    if out.is_dir() and any(out.iterdir()):
        marker = out / MARKER
        if not marker.is_file():
            raise OutputExistsError(f"{out} is not a probe output (no {MARKER} inside); choose another --out")
        if force:
            shutil.rmtree(out)
        else:
            old = json.loads(marker.read_text(encoding="utf-8"))
            if old.get("recipe") != recipe and (out / "runs").exists():
                raise ConfigError(f"{out} holds a probe with another recipe (see {marker}); pass --force to "
                                  "replace it, or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / MARKER, {"recipe": recipe})


def _arms(cfg: ProbeConfig, train: list[str], held: list[str], toks: list[BiotokTokenizer],
          norms: list[D.Normalization]) -> list[Arm]:
    arms: list[Arm] = []
    seen: dict[str, int] = {}
    for spec, tok, norm in zip(cfg.tokenizers, toks, norms):
        name = tok.name
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}#{seen[name]}"
        train_docs = D.encode_documents(tok, train)
        held_docs = D.encode_documents(tok, held)
        top = max([tok.vocab_size - 1, *(int(d.max()) for d in train_docs + held_docs if len(d))])
        boundary = top + 1
        floor = D.UnigramFloor.fit(train_docs, boundary)
        unk_id = tok.unk_id
        unk = sum(int((d == unk_id).sum()) for d in held_docs) if unk_id is not None else 0
        arms.append(Arm(name=name, source=spec, key=f"{_slug(name)}-{tok.fingerprint[:12]}", tok=tok, norm=norm,
                        vocab=boundary + 1, train_docs=train_docs, held_docs=held_docs,
                        stream_tokens=sum(len(d) + 1 for d in train_docs) + 1,
                        floor_bits=floor.doc_bits(held_docs), unk=unk,
                        round_trip=D.round_trip_share(tok, held, held_docs)))
    return arms


def _run_one(cfg: ProbeConfig, arm: Arm, seed: int, path: Path, progress: bool) -> dict:
    """Train and score one model, or read the cached result."""
    if path.is_file():
        cached = json.loads(path.read_text(encoding="utf-8"))
        if cached.get("format") == FORMAT and cached.get("fingerprint") == arm.tok.fingerprint:
            return cached
    from biotok_train.probe.model import build_model, doc_bits, train

    if progress:
        print(f"probe: {arm.name}, seed {seed}: training {cfg.tokens_per_arm:,} tokens", file=sys.stderr)
    from biotok_train.hf_models import quiet_transformers

    boundary = arm.vocab - 1
    with quiet_transformers():
        model = build_model(cfg, arm.vocab, seed)
        try:
            stats = train(model, D.stream(arm.train_docs, boundary), cfg, seed)
        except ValueError as e:
            raise ConfigError(f"{arm.name}: {e}; give more training text or lower --batch-size / --seq-len") from None
        wall, cpu = time.perf_counter(), time.process_time()
        bits = doc_bits(model, arm.held_docs, boundary, cfg.seq_len)
    result = {
        "format": FORMAT, "tokenizer": arm.name, "fingerprint": arm.tok.fingerprint, "seed": seed,
        "params": stats.params, "tokens": stats.tokens, "epochs": stats.epochs,
        "curve": [[t, loss] for t, loss in stats.curve], "doc_bits": [float(b) for b in bits],
        "time": {"train_wall_s": stats.wall_seconds, "train_cpu_s": stats.cpu_seconds,
                 "eval_wall_s": time.perf_counter() - wall, "eval_cpu_s": time.process_time() - cpu},
    }
    _write_json(path, result)
    return result


def _write_events(cfg: ProbeConfig, folder: Path, result: dict, chars: np.ndarray) -> None:
    """A run's curves as TensorBoard events in ``folder/tensorboard`` (once; ``cfg.report_to``):
    training loss per logged step, then held-out bits per character and training throughput."""
    from biotok_train.tracking import EVENTS_DIR, Tracker

    if (folder / EVENTS_DIR).exists():
        return
    per_step = cfg.batch_size * cfg.seq_len
    with Tracker(folder, cfg.report_to) as tracker:
        for tokens, loss in result["curve"]:
            tracker.scalars(tokens // per_step, {"loss": loss}, "train/")
        wall = result["time"]["train_wall_s"]
        tracker.scalars(cfg.steps, {"bits_per_char": float(np.sum(result["doc_bits"]) / max(1.0, chars.sum())),
                                    "tokens_per_s": result["tokens"] / wall if wall > 0 else 0.0}, "eval/")


def run_probe(cfg: ProbeConfig, out: str | Path, *, force: bool = False, progress: bool = True):
    """Run (or resume) every arm and seed of ``cfg``; write probe.md, probe.json, probe.png and
    timings.json under ``out``; return the :class:`~biotok_train.probe.report.ProbeReport`."""
    from biotok_train.probe.report import build_report, write_report

    if not cfg.tokenizers:
        raise ConfigError("give at least one tokenizer")
    if not cfg.corpus:
        raise ConfigError("--corpus: give the training text")
    if not cfg.heldout:
        raise ConfigError("--heldout: give the held-out text")
    out = Path(out)
    toks = [load_tokenizer(t) for t in cfg.tokenizers]
    train = D.read_documents(cfg.corpus, cfg.field_name, "--corpus")
    held = D.read_documents(cfg.heldout, cfg.field_name, "--heldout")
    norms = [D.normalization(t) for t in toks]
    how = D.fair_transform(norms) if cfg.fair else None
    if how is not None:
        train = [D.transform(t, how) for t in train]
        held = [D.transform(t, how) for t in held]
    recipe = {**cfg.recipe(), "corpus_sha256": _sha256_files(cfg.corpus),
              "heldout_sha256": _sha256_files(cfg.heldout)}
    _prepare_out(out, cfg, recipe, force)
    arms = _arms(cfg, train, held, toks, norms)
    chars = np.array([len(d) for d in held], dtype=np.float64)
    train_chars = sum(len(d) for d in train)
    runs: dict[str, dict[int, dict]] = {}
    timings_file = out / "timings.json"
    timings = json.loads(timings_file.read_text(encoding="utf-8")) if timings_file.is_file() else {}
    try:
        for arm in arms:
            for seed in cfg.seeds:
                r = _run_one(cfg, arm, seed, out / "runs" / arm.key / f"seed{seed}.json", progress)
                _write_events(cfg, out / "runs" / arm.key / f"seed{seed}", r, chars)
                runs.setdefault(arm.name, {})[seed] = r
                timings[f"{arm.name}/seed{seed}"] = r["time"]
    finally:
        _write_json(timings_file, dict(sorted(timings.items())))
    report = build_report(cfg, arms, runs, chars, train_chars, len(train), how)
    report.timings = {k: timings[k] for k in (f"{a}/seed{s}" for a in runs for s in runs[a])}
    return write_report(report, out)


__all__ = ["Arm", "MARKER", "load_tokenizer", "run_probe"]
