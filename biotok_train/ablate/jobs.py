"""The jobs of an ablation: :class:`Job` (key, needs, a module-level function and its plain,
picklable arguments: an engine may ship it to another process or machine) and the functions, each
returning a JSON value (what its done record keeps). :mod:`biotok_train.ablate.plan` puts them in
plan order; an engine runs them in this process or in others (Ray), so each reads what it needs
from OUT itself.

Every function takes ``env`` (:class:`Env`: the recipe and OUT), its arguments, and ``needs``
(the results of the jobs it needs, by key).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from biotok.output import atomic_directory
from biotok_train.ablate.store import Layout, data_dir, encode, snapshot_dir
from biotok_train.ablate.config import AblationConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Job:
    """One unit of work. ``run(env, *args, needs={key: result})`` returns a JSON value.

    ``inputs``: a digest of the job's own inputs (contents and settings, no paths); ``owns``:
    folders under OUT it writes (removed before it starts over); ``gpus``: GPUs it asks of an
    engine that schedules them; ``shares_gpu``: it asks for the engine's per-job share instead
    (``--gpus-per-job``: several small fine-tunings on one GPU)."""

    key: str
    run: Callable[..., Any]
    args: tuple = ()
    needs: tuple[str, ...] = ()
    inputs: str = ""
    owns: tuple[str, ...] = ()
    gpus: float = 0.0
    shares_gpu: bool = False


@dataclass(frozen=True)
class Env:
    """What every job of one ablation shares: its recipe and its folder (plain, picklable)."""

    cfg: AblationConfig
    out: str
    progress: bool = False
    compile: tuple[str, str] = ("auto", "auto")  # the pretrainings' torch.compile and its mode (EngineConfig's)


@dataclass(frozen=True)
class Shared:
    """What the jobs of one ablation read, loaded once per process: the corpus split, the held-out
    words, the tasks (data and heads)."""

    train: Path
    held: Path
    samples: list
    datasets: dict  # task key -> TaskData
    task_objs: dict  # task key -> (TaskSpec, task type, head)


@functools.lru_cache(maxsize=4)
def shared(env: Env) -> Shared:
    """The corpus split (written by the driver before any job), the held-out words and the tasks."""
    from biotok_train.evaluate.masked_words import sample_words  # lazy: torch-free, but heavy to import
    from biotok_train.ablate.tasks import resolve_tasks  # lazy: one use

    cfg, out = env.cfg, Path(env.out)
    train, held = Path(Layout(out).corpus("pretrain.txt")), Path(Layout(out).corpus("heldout.txt"))
    samples = sample_words(held.read_text(encoding="utf-8").splitlines(), cfg.statistics.n_words, seed=0)
    tasks = resolve_tasks(cfg)
    return Shared(train, held, samples, {t: r.data for t, r in tasks.items()},
                  {t: (r.spec, r.kind, r.head) for t, r in tasks.items()})


def prepare(env: Env, vocab: str, tokenizer: str, needs: dict) -> dict:
    """A vocabulary's pretraining text and held-out lines prepared, and its segmentation of them."""
    from biotok.formats import load  # lazy: tokenizers
    from biotok.metrics import fragmentation  # lazy: numpy

    s, out, n = shared(env), Path(env.out), prepare_workers(env.cfg)
    tokenizer = str(_model_path(env, tokenizer))
    data = _prepared(data_dir(out, vocab), s.train, tokenizer, env.cfg.pretraining.seq_len, env.progress, n)
    _prepared(data_dir(out, vocab, heldout=True), s.held, tokenizer, env.cfg.pretraining.seq_len, False, n)
    lines = [line for line in s.held.read_text(encoding="utf-8").splitlines() if line.strip()]
    f = fragmentation(load(tokenizer), lines)
    return {"vocab_size": int(data.vocab_size), "num_tokens": int(data.num_tokens),
            "fertility": round(f.fertility, 4), "pieces_per_line": round(f.mean_sequence_length, 2)}


def _prepared(d: Path, text: Path, tokenizer: str, seq_len: int, progress: bool, workers: int):
    """``text`` prepared with ``tokenizer`` into ``d`` on ``workers`` tokenizing processes (its output is
    byte-identical whatever their number), or the preparation already there."""
    from biotok_train.config import PrepareConfig  # lazy: keeps job pickles small
    from biotok_train.pretrain.prepare import open_prepared, prepare  # lazy: numpy, tokenizers

    if (d / "meta.json").is_file():
        return open_prepared(d)
    return prepare([str(text)], str(tokenizer), PrepareConfig(seq_len=seq_len), d, force=True, progress=progress,
                   workers=workers)


def prepare_workers(cfg: AblationConfig) -> int:
    """This machine's cores shared out among the vocabularies' preparations, which every engine but
    the local one runs side by side at a run's start (a GPU slot: 16 cores, 4 each)."""
    vocabs = len(dict.fromkeys(cfg.tokenizers)) + (cfg.base.model is not None)
    return max(1, (os.cpu_count() or 1) // vocabs)


def extend(env: Env, vocab: str, add: int, needs: dict) -> dict:
    """The base's tokenizer plus ``add`` pieces chosen on the pretraining split (OUT/extend/VOCAB, by
    :func:`biotok.extension.extend`: every base id kept, no text segmented into more pieces)."""
    from biotok.extension import ExtendConfig, extend as extend_vocabulary  # lazy: tokenizers

    out = Path(env.out)
    r = extend_vocabulary(env.cfg.base.model, [Layout(out).corpus("pretrain.txt")], Layout(out).extend(vocab),
                          ExtendConfig(add=add), force=True)
    return {"tokenizer": str(Layout().extend(vocab)), "added": len(r.added), "base_size": r.base_size,
            "size": r.vocab_size, "base_pieces": r.base_pieces, "pieces": r.pieces, "reduction": round(r.reduction, 6)}


def transfer(env: Env, method: str, vocab: str, tokenizer: str, needs: dict) -> dict:
    """The base moved to ``vocab`` (OUT/transfer/METHOD/VOCAB): the start of its transfer arm."""
    from biotok_train.config import TransferConfig  # lazy: keeps job pickles small
    from biotok_train.transfer import MARKER, transfer_to  # lazy: torch

    rel = f"transfer/{method}/{vocab}"
    transfer_to(env.cfg.base.model, _model_path(env, tokenizer), Path(env.out) / rel, TransferConfig(method, seed=0), force=True)
    saved = json.loads((Path(env.out) / rel / MARKER).read_text(encoding="utf-8"))
    return {"model": rel, "counts": saved.get("counts", {}) if isinstance(saved, dict) else {}}


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.txt", "vocab.json", "merges.txt", "spm.model", "sentencepiece.bpe.model")


def random_like(env: Env, template: str, seed: int, rel_out: str, needs: dict) -> dict:
    """``template``'s architecture with random weights (its own initializer, ``seed``) and its
    tokenizer files: the start of a scratch arm and the floor of its vocabulary (with a base)."""
    import torch  # lazy: torch
    import transformers  # lazy: torch

    from biotok_train.hf_models import encoder_dir, quiet_transformers  # lazy: torch
    from biotok_train.pretrain.init import MLM_TYPES  # lazy: torch

    out, src = Path(env.out) / rel_out, encoder_dir(_model_path(env, template))
    with quiet_transformers():
        config = transformers.AutoConfig.from_pretrained(str(src))
        torch.manual_seed(seed)
        if MLM_TYPES.get(config.model_type) == "albert":
            model = transformers.AlbertForPreTraining(config)
        else:
            model = transformers.AutoModelForMaskedLM.from_config(config)
    with atomic_directory(out, force=True) as tmp:
        with quiet_transformers():
            model.save_pretrained(str(tmp))
        for name in TOKENIZER_FILES:
            if (src / name).is_file():
                shutil.copyfile(src / name, tmp / name)
    return {"model": rel_out}


def random_bert(env: Env, vocab: str, size: str, seed: int, rel_out: str, needs: dict) -> dict:
    """A randomly initialised BERT MLM of ``size`` with ``vocab`` (the floor without a base)."""
    import torch  # lazy: torch

    from biotok_train.hf_models import save_hf_tokenizer  # lazy: torch
    from biotok_train.pretrain import checkpoint as ckpt  # lazy: torch
    from biotok_train.pretrain.models import Vocab, build  # lazy: torch
    from biotok_train.pretrain.packed import PackedData  # lazy: numpy

    packed = PackedData(data_dir(Path(env.out), vocab))
    torch.manual_seed(seed)
    v = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
    module = build("mlm", "bert", size, v, packed.seq_len)
    with atomic_directory(Path(env.out) / rel_out, force=True) as tmp:
        ckpt.save_model(module, tmp)
        save_hf_tokenizer(packed.path / "tokenizer", tmp, seq_len=packed.seq_len)
    return {"model": rel_out}


def _model_path(env: Env, model: str) -> Path:
    """A model named in a job: a path relative to OUT (made by a job), else as given (the base)."""
    p = Path(env.out) / model
    return p if not Path(model).is_absolute() and p.exists() else Path(model)


def pretrain(env: Env, size: str, vocab: str, seed: int, rel_dir: str, init: str | None, needs: dict) -> dict:
    """``budget`` MLM steps from ``init`` (None: a fresh BERT of ``size``), in chunks ending at the
    curve's steps, each saved as a model (OUT/REL_DIR/curve/step-K); resumes a run stopped at a
    checkpoint, and starts over one killed before its first (what it left is not a run to continue)."""
    from biotok_train.pretrain.checkpoint import STATE  # lazy: torch

    cfg, d = env.cfg, Path(env.out) / rel_dir
    model = d / "model"
    pcfg = dataclasses.replace(cfg.pretrain_config(size, seed, None if init is None else _model_path(env, init)),
                               compile=env.compile[0], compile_mode=env.compile[1])
    res = None
    while res is None:
        for stop in [*cfg.curve.steps, cfg.pretraining.budget]:
            if stop < cfg.pretraining.budget and (snapshot_dir(d, stop) / "config.json").is_file() and (model / STATE).is_file():
                continue  # that chunk is done, and the checkpoint goes on from there
            res = _pretrain_chunk(env, vocab, pcfg, model, stop)
            if res is None:  # its checkpoint could not be read: removed, every chunk again from the start
                break
            if stop < cfg.pretraining.budget:
                _snapshot(model, snapshot_dir(d, stop))
    rows = [json.loads(line) for line in (model / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return {"steps": int(res.steps), "final_loss": float(res.final_loss),
            "tokens_seen": int(rows[-1]["tokens"]) if rows else 0,
            "loss_curve": [[r["step"], round(r["loss"], 4)] for r in rows if "loss" in r]}


def _pretrain_chunk(env: Env, vocab: str, pcfg, model: Path, stop: int):
    """Pretrain ``model`` up to step ``stop``: from its checkpoint when it has one, else (a run killed
    before its first save) from the start, over what is there. A checkpoint that cannot be read is
    removed with its run: None (the caller starts every chunk again)."""
    from biotok.errors import DataError  # lazy: as the others
    from biotok_train.pretrain.checkpoint import STATE  # lazy: torch
    from biotok_train.pretrain.loop import pretrain as run_pretrain  # lazy: torch

    data = data_dir(Path(env.out), vocab)
    if (model / STATE).exists():
        try:
            return run_pretrain(data, pcfg, model, resume=True, stop_after=stop, progress=env.progress)
        except DataError as e:
            if str(model / STATE) not in str(e):  # the data, not the checkpoint
                raise
            log.warning("%s cannot be resumed (%s): its pretraining starts over", model, str(e).split(";")[0])
            shutil.rmtree(model)
            return None
    return run_pretrain(data, pcfg, model, force=True, stop_after=stop, progress=env.progress)


def _snapshot(model_dir: Path, out: Path) -> None:
    """The Hugging Face files of a run (weights, config, tokenizer), not its training state."""
    with atomic_directory(out, force=True) as tmp:
        for p in model_dir.iterdir():
            if p.is_file() and p.suffix in (".json", ".safetensors", ".txt", ".model") and p.name != "metrics.jsonl":
                shutil.copyfile(p, tmp / p.name)


def evaluate(env: Env, vocab: str, rel_model: str, needs: dict) -> dict:
    """Masked-word accuracy on the held-out words and the held-out [MASK] numbers of one model (an
    arm's final model, a checkpoint of its curve, or the model it starts from: the base included)."""
    from biotok_train.pretrain.heldout import evaluate_saved  # lazy: torch
    from biotok_train.evaluate.masked_words import masked_word_accuracy  # lazy: torch
    from biotok_train.hf_models import load_mlm  # lazy: torch

    out, model_dir = Path(env.out), _model_path(env, rel_model)
    model, tok = load_mlm(model_dir)
    res = masked_word_accuracy(model, tok, shared(env).samples, name=vocab)
    held = evaluate_saved(model_dir, data_dir(out, vocab), data_dir(out, vocab, heldout=True))
    return {"mlm": {**res.to_dict(), "ranks": list(res.ranks)}, "heldout": held.to_dict(rows=True)}


def finetune(env: Env, task: str, model: str, seed: int, rel_run: str, task_key: str | None = None, *,
             needs: dict) -> dict:
    """One fine-tuning run: its score and its test predictions (for the paired bootstrap), and the
    content key of the task data it used (``task_key``, the job's: the driver's snapshot where it
    kept one, else this process's read, refused when its bytes are no longer those keyed)."""
    from biotok_train.ablate.keys import task_key as key_of  # lazy: one use
    from biotok_train.finetune import resolve, run  # lazy: torch
    from biotok_train.tasks import snapshot

    s = shared(env)
    spec, kind, _ = s.task_objs[task]
    data = snapshot.kept(task_key) if task_key is not None else None
    if data is not None:  # the examples keyed by the driver, with the spec they were read as
        spec, data, _ = resolve(data, kind)
    else:
        data = s.datasets[task] if task_key is None else snapshot.checked(task, s.datasets[task], task_key, key_of)
    res = run(_model_path(env, model), spec, data, kind, env.cfg.finetune_config(seed),
              Path(env.out) / rel_run, force=True, progress=env.progress, save_model=False)
    return {"metric": res.dev_metric, "score": float(res.metrics[res.dev_metric]), "metrics": res.metrics,
            "labels": list(res.labels), "predictions": encode(res.predictions), "task": key_of(task, data)}


def _finetune_fits(task: str, model: str, seed: int, rel_run: str, task_key: str | None = None,
                   result=None) -> bool:
    """Whether a fine-tune's record was made of the task data its key names: its ``task`` key is
    the job's; a record from before it held one is kept for a registered task (staged data) and
    made again for a user's files (issue 46: one was written of bytes other than its key's)."""
    from biotok_train.tasks import TASKS  # lazy: the registry

    if not isinstance(result, dict):
        return False
    if "task" in result:
        return task_key is None or result["task"] == task_key
    return task in TASKS


finetune.fits = _finetune_fits  # type: ignore[attr-defined]  (engines.pending checks a record with it)


def probe(env: Env, vocabs: dict, needs: dict) -> dict:
    """The causal-LM probe of each vocabulary (OUT/probe/), in fair mode: every arm trained and
    scored on the same text, as lossy as the most lossy normalization among them."""
    from biotok_train.probe.arms import probe_vocabularies  # lazy: torch

    cfg, s = env.cfg, shared(env)
    vocabs = {v: str(_model_path(env, t)) for v, t in vocabs.items()}
    return probe_vocabularies(vocabs, s.train, s.held, Path(env.out) / "probe", steps=cfg.probe,
                              seeds=cfg.pretraining.seeds, batch_size=cfg.pretraining.batch_size, seq_len=cfg.pretraining.seq_len,
                              fair=True, progress=env.progress)


__all__ = ["Env", "Job", "Shared", "TOKENIZER_FILES", "evaluate", "extend", "finetune", "prepare", "pretrain", "probe", "random_bert", "random_like",
           "shared", "transfer"]
