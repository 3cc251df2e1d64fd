"""``run_probe``: load the tokenizers and texts, train and score one GPT-2 per arm and seed
(each finished run cached under ``OUT/runs``, so a rerun skips it), then write the report.

probe.json, probe.md and probe.png depend only on the inputs and the seeds (byte-identical
reruns); the CPU and wall time of each run go to timings.json.

A cached run is reused only when its content key matches (recipe, tokenizer fingerprint, the
digest of the documents it was trained and scored on, the seed); a damaged or stale one is
recomputed. One run at a time holds ``OUT`` (:func:`biotok.output.run_lock`). ``--force`` builds
the new probe aside, in the hidden sibling ``.OUT.probe-next``, and swaps it onto ``OUT`` only
once it is complete; stopped, it removes that sibling unless it holds finished runs, which the
same command with ``--force`` continues from (:func:`biotok.output.settle_staging` says so).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from biotok.errors import ConfigError, DamagedFileError, OutputExistsError, TokenizerLoadError
from biotok.io import read_json
from biotok.output import (
    LOCK_NAME, atomic_file, check_can_create, check_inputs, replace_directory, run_lock, settle_staging,
)
from biotok.tokenizer import BiotokTokenizer
from biotok_train.config import ProbeConfig
from biotok_train.probe import data as D
from biotok_train.threads import Threads

MARKER = "probe-config.json"  # what makes a folder a probe output (and holds its recipe)
FORMAT = 2  # version of the cached run files (2: content key)
NEXT = "probe-next"  # the hidden sibling .OUT.probe-next where --force builds the new probe


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


def _contents(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name != LOCK_NAME] if folder.is_dir() else []


def _check_out(out: Path, inputs: list) -> None:
    """``out`` may hold a probe: never an input, a folder or nothing, a probe output when not empty."""
    check_inputs(out, inputs)
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} exists and is not a folder; choose another --out")
    check_can_create(out / MARKER)
    if _contents(out) and not (out / MARKER).is_file():
        raise OutputExistsError(f"{out} is not a probe output (no {MARKER} inside); choose another --out")


def _old_recipe(folder: Path) -> dict | None:
    """The recipe of the probe in ``folder`` (None: no probe there); a damaged marker is refused."""
    marker = folder / MARKER
    if not marker.is_file():
        return None
    return read_json(marker, fields={"recipe": dict},
                     advice="pass --force to replace this probe, or choose another --out")["recipe"]


def _work_folder(out: Path, recipe: dict, force: bool) -> Path:
    """Where this run writes: ``out`` itself (new, or resumed with the same recipe), or with
    ``force`` over an existing probe the sibling ``.OUT.probe-next`` (resumed when it holds this
    recipe, else started again)."""
    if force and _contents(out):
        work = out.parent / f".{out.name}.{NEXT}"
        try:
            same = _old_recipe(work) == recipe
        except DamagedFileError:
            same = False
        if work.exists() and not same:
            shutil.rmtree(work)
    else:
        work = out
        old = _old_recipe(out)
        if old is not None and old != recipe and (out / "runs").exists():
            raise ConfigError(f"{out} holds a probe with another recipe (see {out / MARKER}); pass --force to "
                              "replace it, or choose another --out")
    work.mkdir(parents=True, exist_ok=True)
    _write_json(work / MARKER, {"recipe": recipe})
    return work


def _arms(cfg: ProbeConfig, train: list[str], held: list[str], toks: list[BiotokTokenizer],
          norms: list[D.Normalization], progress: bool = False) -> list[Arm]:
    arms: list[Arm] = []
    seen: dict[str, int] = {}
    for k, (spec, tok, norm) in enumerate(zip(cfg.tokenizers, toks, norms)):
        if progress:  # a line per tokenizer: encoding a large text takes a while, off a terminal too
            print(f"probe: encoding {len(train):,} training and {len(held):,} held-out documents with {tok.name} "
                  f"({k + 1}/{len(toks)})", file=sys.stderr, flush=True)
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


def _run_key(arm: Arm, seed: int, data_sha256: str) -> str:
    """What decides one run's result besides the recipe: the tokenizer, the seed and the texts."""
    return hashlib.sha256(f"{arm.tok.fingerprint} {seed} {data_sha256}".encode()).hexdigest()


_RUN_FIELDS = {"format": int, "key": str, "recipe_sha256": str, "tokenizer": str, "seed": int, "params": int,
               "tokens": int, "epochs": (int, float), "curve": list, "doc_bits": list, "time": dict}
_TIMES = ("train_wall_s", "train_cpu_s", "eval_wall_s", "eval_cpu_s")


def _cached(path: Path, key: str, recipe_sha256: str, n_held: int) -> dict | None:
    """The cached run at ``path`` when it is whole and of this content key, else None (recomputed)."""
    if not path.is_file():
        return None
    try:
        r = read_json(path, fields=_RUN_FIELDS)
    except DamagedFileError:
        return None
    ok = (r["format"] == FORMAT and r["key"] == key and r["recipe_sha256"] == recipe_sha256
          and len(r["doc_bits"]) == n_held and all(isinstance(b, (int, float)) for b in r["doc_bits"])
          and all(isinstance(c, list) and len(c) == 2 and all(isinstance(x, (int, float)) for x in c)
                  for c in r["curve"])
          and all(isinstance(r["time"].get(t), (int, float)) for t in _TIMES))
    return r if ok else None


def _run_one(cfg: ProbeConfig, arm: Arm, seed: int, path: Path, progress: bool, keys: tuple[str, str]) -> dict:
    """Train and score one model, or read the cached result (``keys``: the run's content key and
    the recipe's digest). ``progress``: a bar on a terminal, else a line every 30 s (training
    steps, then scoring batches; :class:`biotok.progress.Progress`)."""
    cached = _cached(path, keys[0], keys[1], len(arm.held_docs))
    if cached is not None:
        return cached
    from biotok.progress import Progress  # lazy: with the model side, only when a run is trained
    from biotok_train.probe.model import build_model, doc_bits, train

    if progress:
        print(f"probe: {arm.name}, seed {seed}: training {cfg.tokens_per_arm:,} tokens", file=sys.stderr)
    from biotok_train.hf_models import quiet_transformers

    boundary = arm.vocab - 1
    scoring: list[Progress] = []

    def scored(done: int, total: int) -> None:
        if not scoring:
            scoring.append(Progress(total, f"probe/{arm.name}/seed{seed} scoring", unit="batch", enabled=progress))
        scoring[0].update(done - scoring[0].n)

    with quiet_transformers():
        model = build_model(cfg, arm.vocab, seed)
        try:
            with Progress(cfg.steps, f"probe/{arm.name}/seed{seed}", enabled=progress) as bar:
                stats = train(model, D.stream(arm.train_docs, boundary), cfg, seed, progress=bar)
        except ValueError as e:
            raise ConfigError(f"{arm.name}: {e}; give more training text or lower --batch-size / --seq-len") from None
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            bits = doc_bits(model, arm.held_docs, boundary, cfg.seq_len, progress=scored)
        finally:
            for bar in scoring:
                bar.close()
    result = {
        "format": FORMAT, "key": keys[0], "recipe_sha256": keys[1], "tokenizer": arm.name,
        "fingerprint": arm.tok.fingerprint, "seed": seed,
        "params": stats.params, "tokens": stats.tokens, "epochs": stats.epochs,
        "curve": [[t, loss] for t, loss in stats.curve], "doc_bits": [float(b) for b in bits],
        "time": {"train_wall_s": stats.wall_seconds, "train_cpu_s": stats.cpu_seconds,
                 "eval_wall_s": time.perf_counter() - wall, "eval_cpu_s": time.process_time() - cpu},
    }
    _write_json(path, result)
    return result


def _write_events(cfg: ProbeConfig, folder: Path, result: dict, chars: np.ndarray) -> None:
    """A run's curves as TensorBoard events in ``folder/tensorboard`` (once per content key, kept in
    ``folder/key``; ``cfg.report_to``): training loss per logged step, then held-out bits per
    character and training throughput. Events of another key (a recomputed run) are replaced."""
    from biotok_train.tracking import EVENTS_DIR, Tracker

    stamp = folder / "key"
    if (folder / EVENTS_DIR).exists():
        if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == result["key"]:
            return
        shutil.rmtree(folder / EVENTS_DIR)
    per_step = cfg.batch_size * cfg.seq_len
    with Tracker(folder, cfg.report_to) as tracker:
        for tokens, loss in result["curve"]:
            tracker.scalars(tokens // per_step, {"loss": loss}, "train/")
        wall = result["time"]["train_wall_s"]
        tracker.scalars(cfg.steps, {"bits_per_char": float(np.sum(result["doc_bits"]) / max(1.0, chars.sum())),
                                    "tokens_per_s": result["tokens"] / wall if wall > 0 else 0.0}, "eval/")
    if (folder / EVENTS_DIR).exists():
        with atomic_file(stamp, force=True) as tmp:
            tmp.write_text(result["key"] + "\n", encoding="utf-8")


def _data_sha256(train: list[str], held: list[str]) -> str:
    """Digest of the documents every arm trains and is scored on (after the fair transform)."""
    h = hashlib.sha256()
    for part in (train, held):
        h.update(json.dumps(part, ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def _read_timings(path: Path) -> dict:
    """timings.json of a previous run (a damaged one starts again: every run's times are in its own file)."""
    try:
        return read_json(path) if path.is_file() else {}
    except DamagedFileError:
        return {}


def _train_all(cfg: ProbeConfig, arms: list[Arm], work: Path, chars: np.ndarray, keys: tuple[str, str],
               progress: bool) -> tuple[dict, dict]:
    """Every arm and seed, run or read from its cache; timings.json written even when interrupted."""
    runs: dict[str, dict[int, dict]] = {}
    timings_file = work / "timings.json"
    timings = _read_timings(timings_file)
    todo = [(arm, seed) for arm in arms for seed in cfg.seeds
            if _cached(work / "runs" / arm.key / f"seed{seed}.json", _run_key(arm, seed, keys[0]), keys[1],
                       len(arm.held_docs)) is None]
    eta = Eta(cfg, len(todo), len(arms) * len(cfg.seeds), [t for t in timings.values() if isinstance(t, dict)])
    if todo:  # torch loaded before the plan is said: a SIGTERM inside its C++ import aborts (rc -6), not one line
        import torch  # noqa: F401

    if progress and todo:
        print(eta.plan(), file=sys.stderr, flush=True)
    try:
        for arm in arms:
            for seed in cfg.seeds:
                fresh = (arm, seed) in todo
                r = _run_one(cfg, arm, seed, work / "runs" / arm.key / f"seed{seed}.json", progress,
                             (_run_key(arm, seed, keys[0]), keys[1]))
                _write_events(cfg, work / "runs" / arm.key / f"seed{seed}", r, chars)
                runs.setdefault(arm.name, {})[seed] = r
                timings[f"{arm.name}/seed{seed}"] = r["time"]
                if fresh:
                    eta.done(r["time"])
                    if progress:
                        print(eta.line(), file=sys.stderr, flush=True)
    finally:
        _write_json(timings_file, dict(sorted(timings.items())))
    return runs, timings


class Eta:
    """The probe's cost up front and its ETA: ``todo`` runs of ``cfg.tokens_per_arm`` training
    tokens each, at the training rate measured by the runs done (this probe's, then earlier ones'
    in ``timings``), else biotok's measured CPU table (``biotok/data/pretrain_throughput.json``:
    BERT-tiny MLM, a model of about the probe's size); scoring time from measured runs only."""

    def __init__(self, cfg: ProbeConfig, todo: int, runs: int, timings: Sequence[dict]) -> None:
        self.cfg, self.todo, self.runs, self.finished = cfg, todo, runs, 0
        self.measured = [t for t in timings if all(isinstance(t.get(k), (int, float)) for k in _TIMES)]
        self.start = time.perf_counter()

    def _rates(self) -> tuple[float | None, float | None, str]:
        """(training tokens per second, scoring seconds per run, where they come from)."""
        if self.measured:
            wall = sum(t["train_wall_s"] for t in self.measured)
            rate = self.cfg.tokens_per_arm * len(self.measured) / wall if wall > 0 else None
            score = sum(t["eval_wall_s"] for t in self.measured) / len(self.measured)
            return rate, score, f"measured on {len(self.measured)} run{'s' if len(self.measured) != 1 else ''} here"
        from biotok.cost import default_throughput  # lazy: only before any run is measured

        t = default_throughput()
        if t is None:
            return None, None, "no measured rate"
        return t.tokens_per_second, None, f"biotok's CPU rate {t.source}"

    def remaining_s(self) -> float | None:
        rate, score, _ = self._rates()
        if rate is None:
            return None
        return (self.todo - self.finished) * (self.cfg.tokens_per_arm / rate + (score or 0.0))

    def plan(self) -> str:
        """The estimate before the long part."""
        from biotok.progress import duration  # lazy: as the other progress imports

        rate, score, source = self._rates()
        head = (f"probe: {self.todo} of {self.runs} runs to train ({self.runs - self.todo} cached), "
                f"{self.cfg.tokens_per_arm:,} tokens each")
        if rate is None:
            return head + "; no measured rate to estimate the time from"
        what = "training and scoring" if score is not None else "training only (scoring not yet measured)"
        return (f"{head}: estimated {duration(self.remaining_s())} on this machine, {what}, at {rate:,.0f} tokens/s "
                f"({source})")

    def done(self, t: dict) -> None:
        self.finished += 1
        self.measured.append(t)

    def line(self) -> str:
        """After each run: runs done, elapsed, the ETA from the measured rates."""
        from biotok.progress import duration  # lazy: as the other progress imports

        rate, score, _ = self._rates()
        left = self.remaining_s()
        return (f"probe: {self.finished} of {self.todo} runs done, elapsed {duration(time.perf_counter() - self.start)}"
                + (f", ETA {duration(left)} (training {rate:,.0f} tokens/s, scoring {score:.0f} s a run, measured)"
                   if left is not None and self.finished < self.todo else ""))


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
    inputs = [*cfg.corpus, *cfg.heldout, *cfg.tokenizers]
    _check_out(out, inputs)
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
    keys = (_data_sha256(train, held), hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest())
    created, work = not out.exists(), None
    try:
        with run_lock(out, "probe"):  # changes no byte of OUT: with --force it stays whole until the swap
            _check_out(out, inputs)  # again, now that no other probe writes there
            work = _work_folder(out, recipe, force)
            with run_lock(work, "probe") if work != out else contextlib.nullcontext():  # OUT's lock after the swap
                arms = _arms(cfg, train, held, toks, norms, progress)
                chars = np.array([len(d) for d in held], dtype=np.float64)
                with Threads(cfg.threads):
                    runs, timings = _train_all(cfg, arms, work, chars, keys, progress)
                report = build_report(cfg, arms, runs, chars, sum(len(d) for d in train), len(train), how)
                report.timings = {k: timings[k] for k in (f"{a}/seed{s}" for a in runs for s in runs[a])}
                write_report(report, work, out)
                if work != out:
                    replace_directory(work, out, inputs, MARKER)
    except BaseException:
        if work not in (None, out):  # this run's staging folder: nothing hidden left for nothing
            settle_staging(work, "runs/*/seed*.json")
        if created and out.is_dir() and not _contents(out):
            shutil.rmtree(out, ignore_errors=True)  # nothing but the lock: leave no empty folder behind
        raise
    return report


__all__ = ["Arm", "MARKER", "load_tokenizer", "run_probe"]
