"""The runs of an ablation: the corpus split, each arm's pretraining, masked-word score and
fine-tunings (every finished part cached on disk and reused), and :func:`run_ablation`."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from biotok.errors import ConfigError
from biotok.output import atomic_directory
from biotok_train import stats as S
from biotok_train.ablate.analysis import compute_statistics, verdict_sentences
from biotok_train.ablate.command import command_line
from biotok_train.ablate.plateau import heldout_numbers, plateau_sentences, prepare_heldout, probe_arms
from biotok_train.ablate.plan import (
    ArmResult, Context, Leg, arm_model_dir, cached, data_dir, encode, floor_dir, leg_names, plan_legs, prepared, read_json,
    task_dir, write_json,
)
from biotok_train.ablate.report import AblationReport, write_report
from biotok_train.config import MAX_SEQ_LEN, AblationConfig

log = logging.getLogger(__name__)


def split_corpus(cfg: AblationConfig, out: Path) -> tuple[Path, Path, int]:
    """corpus/pretrain.txt and corpus/heldout.txt, written once (each Nth non-blank line held
    out); returns them and the characters of pretraining text (newlines excluded)."""
    from biotok.corpus import corpus_names, iter_lines

    d = out / "corpus"
    train, held = d / "pretrain.txt", d / "heldout.txt"
    if not (d / "done").is_file():
        with atomic_directory(d, force=True) as tmp:  # an unfinished split (no 'done') is replaced
            n = chars = 0
            with open(tmp / train.name, "w", encoding="utf-8") as ft, open(tmp / held.name, "w", encoding="utf-8") as fh:
                for i, line in enumerate(iter_lines(list(cfg.corpus), cfg.field_name), 1):
                    if i % cfg.heldout_every == 0:
                        fh.write(line + "\n")
                    else:
                        ft.write(line + "\n")
                        chars += len(line)
                    n = i
            if n < cfg.heldout_every:
                raise ConfigError(f"the corpus {corpus_names(cfg.corpus)} has {n} lines: too few to hold out every "
                                  f"{cfg.heldout_every}th")
            (tmp / "done").write_text(f"{n}\n{chars}\n", encoding="utf-8")
    parts = (d / "done").read_text(encoding="utf-8").split()
    chars = int(parts[1]) if len(parts) > 1 else sum(len(l) for l in train.read_text(encoding="utf-8").splitlines())
    return train, held, chars


def segmentation_stats(tokenizer, lines: Sequence[str]) -> tuple[float, float]:
    """(fertility, mean pieces per line) without special tokens: pieces per biotok word, the
    definition of ``biotok compare``."""
    from biotok.metrics import fragmentation

    f = fragmentation(tokenizer, lines)
    return f.fertility, f.mean_sequence_length


def word_floor(train: Path, samples: Sequence) -> tuple[str, tuple[float, ...]]:
    """The masked-word floor: always answer the pretraining text's most frequent word (as the
    masked-word evaluation delimits words). Returns it and its hit (1.0 / 0.0) per sample."""
    from collections import Counter

    from biotok_train.evaluate.masked_words import WORD

    counts: Counter = Counter()
    with open(train, encoding="utf-8") as f:
        for line in f:
            counts.update(m.group(0) for m in WORD.finditer(line))
    if not counts:
        return "", tuple(0.0 for _ in samples)
    word = min(counts, key=lambda w: (-counts[w], w))
    return word, tuple(float(s.text[s.start:s.end] == word) for s in samples)


def _transferred(ctx: Context, leg: Leg) -> Path:
    """The base model moved to ``leg``'s vocabulary (``transfer/VOCAB``, written once)."""
    from biotok_train.config import TransferConfig
    from biotok_train.transfer import MARKER, transfer_to

    d = ctx.out / "transfer" / leg.vocab
    if not (d / MARKER).is_file():
        log.info("[%s] transfer the base to %s (%s)", leg.name, leg.vocab, ctx.cfg.transfer_method)
        transfer_to(ctx.cfg.base, leg.tokenizer, d, TransferConfig(ctx.cfg.transfer_method, seed=0), force=True)
    return d


def _template(ctx: Context, leg: Leg) -> Path:
    """The model whose architecture and tokenizer ``leg`` has (with a base only)."""
    return Path(ctx.cfg.base) if leg.init == "continual" else _transferred(ctx, leg)


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.txt", "vocab.json", "merges.txt", "spm.model", "sentencepiece.bpe.model")


def _random_like(template: Path, seed: int, out: Path) -> Path:
    """``template``'s architecture with random weights (its own initializer, ``seed``) and its
    tokenizer files: the start of a scratch arm and the floor of its vocabulary."""
    if (out / "config.json").is_file():
        return out
    import torch
    import transformers

    from biotok_train.hf_models import encoder_dir, quiet_transformers
    from biotok_train.pretrain.init import MLM_TYPES

    template = encoder_dir(template)  # a sentence-transformers base: its transformer folder
    with quiet_transformers():
        config = transformers.AutoConfig.from_pretrained(str(template))
        torch.manual_seed(seed)
        if MLM_TYPES.get(config.model_type) == "albert":
            model = transformers.AlbertForPreTraining(config)
        else:
            model = transformers.AutoModelForMaskedLM.from_config(config)
    with atomic_directory(out, force=True) as tmp:
        with quiet_transformers():
            model.save_pretrained(str(tmp))
        for name in TOKENIZER_FILES:
            if (template / name).is_file():
                shutil.copyfile(template / name, tmp / name)
    return out


def _random_init(ctx: Context, leg: Leg, seed: int) -> Path:
    """The random-init model of ``leg``'s vocabulary and seed (with a base), shared by its arms."""
    return _random_like(_template(ctx, leg), seed, ctx.out / "init" / f"random.{leg.vocab}" / f"p{seed}")


def _init_from(ctx: Context, leg: Leg, seed: int) -> Path | None:
    """Where ``leg``'s pretraining starts: None (a fresh BERT of the size), the base, the
    transferred base, or the random model of the base's architecture."""
    if ctx.cfg.base is None:
        return None
    if leg.init == "scratch":
        return _random_init(ctx, leg, seed)
    return _template(ctx, leg)


def _prepare_data(ctx: Context, tokenizer: str, name: str):
    d = data_dir(ctx.out, name)
    if not (d / "meta.json").is_file():
        log.info("[%s] prepare", name)
    return prepared(d, ctx.train, tokenizer, ctx.cfg.seq_len, ctx.progress)


def _pretrain(ctx: Context, size: str, name: str, data: Path, seed: int, run_dir: Path,
              init_from: Path | None = None) -> dict:
    from biotok_train.pretrain import checkpoint as ckpt
    from biotok_train.pretrain.loop import pretrain

    model = run_dir / "model"
    log.info("[%s/%s] pretrain seed %d, %d steps", size, name, seed, ctx.cfg.budget)
    t0 = time.perf_counter()
    res = pretrain(data, ctx.cfg.pretrain_config(size, seed, init_from), model,
                   resume=(model / ckpt.STATE).exists(), progress=ctx.progress)
    ctx.timings[f"{size}/{name}/p{seed}/pretrain"] = round(time.perf_counter() - t0, 1)
    rows = [json.loads(l) for l in (model / "metrics.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    tokens = int(rows[-1]["tokens"]) if rows else 0
    return {"steps": res.steps, "final_loss": res.final_loss, "tokens_seen": tokens}


def _mlm(ctx: Context, size: str, name: str, model_dir: Path) -> dict:
    from biotok_train.evaluate.masked_words import masked_word_accuracy
    from biotok_train.hf_models import load_mlm

    log.info("[%s/%s] eval-mlm on %d held-out words", size, name, len(ctx.samples))
    t0 = time.perf_counter()
    model, tok = load_mlm(model_dir)
    res = masked_word_accuracy(model, tok, ctx.samples, name=name)
    ctx.timings[f"{size}/{name}/{model_dir.parent.name}/mlm"] = round(time.perf_counter() - t0, 1)
    return {**res.to_dict(), "ranks": list(res.ranks)}


def _random_model(data: Path, size: str, seed: int, out: Path) -> Path:
    """A randomly initialised BERT MLM of ``size`` for the floor, saved like a pretrained one."""
    if (out / "config.json").is_file():
        return out
    import torch

    from biotok_train.hf_models import save_hf_tokenizer
    from biotok_train.pretrain import checkpoint as ckpt
    from biotok_train.pretrain.models import Vocab, build
    from biotok_train.pretrain.packed import PackedData

    packed = PackedData(data)
    torch.manual_seed(seed)
    vocab = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
    module = build("mlm", "bert", size, vocab, packed.seq_len)
    with atomic_directory(out, force=True) as tmp:
        ckpt.save_model(module, tmp)
        save_hf_tokenizer(packed.path / "tokenizer", tmp, seq_len=packed.seq_len)
    return out


def _finetune(ctx: Context, task: str, model_dir: Path, seed: int, run_dir: Path, label: str) -> dict:
    """results + test predictions of one fine-tuning run (reused when predictions.json exists)."""
    from biotok_train.finetune import run

    pred_file = run_dir / "predictions.json"
    if pred_file.is_file():
        return read_json(pred_file)
    log.info("[%s] %s seed %d", label, task, seed)
    t0 = time.perf_counter()
    spec, kind, _ = ctx.task_objs[task]
    res = run(model_dir, spec, ctx.datasets[task], kind, ctx.cfg.finetune_config(seed), run_dir, force=True,
              progress=ctx.progress, save_model=False)  # scores and predictions only: many runs
    ctx.timings[f"{label}/{task_dir(task)}/f{seed}"] = round(time.perf_counter() - t0, 1)
    value = {"metric": res.dev_metric, "score": float(res.metrics[res.dev_metric]), "metrics": res.metrics,
             "labels": res.labels, "predictions": encode(res.predictions)}
    write_json(pred_file, value)
    return value


def _runs(ctx: Context, task: str, base: Path, model_dirs: dict[int, Path], label: str) -> dict[str, dict]:
    """Every (pretraining seed, fine-tuning seed) run of ``task`` under ``base``: {"pP-fF": run}."""
    return {f"p{p}-f{f}": _finetune(ctx, task, model_dirs[p], f, base / f"p{p}" / task_dir(task) / f"f{f}", label)
            for p in ctx.cfg.pretrain_seeds for f in ctx.cfg.seeds}


def run_arm(ctx: Context, size: str, leg: Leg) -> ArmResult:
    """One arm at one size, reusing every finished part under ``arms/SIZE/NAME``."""
    from biotok.formats import load
    from biotok_train.pretrain.heldout import pooled_summary

    cfg = ctx.cfg
    name, tokenizer = leg.name, leg.tokenizer
    arm_dir = ctx.out / "arms" / size / name
    done = arm_dir / "done.json"
    if done.is_file():
        return ArmResult(**read_json(done))
    arm_dir.mkdir(parents=True, exist_ok=True)

    def seg():
        lines = [l for l in ctx.held.read_text(encoding="utf-8").splitlines() if l.strip()]
        f, pl = segmentation_stats(load(tokenizer), lines)
        return {"fertility": f, "pieces_per_line": pl}

    segs = cached(ctx.out / "data" / f"{leg.vocab}.segmentation.json", seg)
    data = _prepare_data(ctx, tokenizer, leg.vocab)
    held = prepare_heldout(ctx, tokenizer, leg.vocab)
    pre, mlm, models, floors, heldout = {}, {}, {}, {}, {}
    for p in cfg.pretrain_seeds:
        models[p] = arm_model_dir(ctx.out, size, name, p)
        run_dir = models[p].parent
        pre[p] = cached(run_dir / "pretrain.json",
                         lambda: _pretrain(ctx, size, name, data.path, p, run_dir, _init_from(ctx, leg, p)))
        mlm[p] = cached(run_dir / "mlm.json", lambda: _mlm(ctx, size, name, models[p]))
        heldout[p] = cached(run_dir / "heldout_mlm.json",
                            lambda: heldout_numbers(ctx, size, name, data.path, held.path, models[p]))
    metrics = {}
    for task in cfg.tasks:
        runs = _runs(ctx, task, arm_dir, models, f"{size}/{name}")
        metrics[task] = S.summarize_seeds([r["score"] for r in runs.values()]).to_dict()
    if cfg.floor:
        based = cfg.base is not None
        fdir = floor_dir(ctx.out, size, leg, based)
        floor_models = {p: _random_init(ctx, leg, p) if based else _random_model(data.path, size, p, fdir / f"p{p}" / "model")
                        for p in cfg.pretrain_seeds}
        for task in cfg.tasks:
            runs = _runs(ctx, task, fdir, floor_models, str(fdir.relative_to(ctx.out / "arms")))
            floors[task] = S.summarize_seeds([r["score"] for r in runs.values()]).to_dict()
    tokens = int(round(sum(v["tokens_seen"] for v in pre.values()) / len(pre)))
    cpt = ctx.train_chars / max(1, data.num_tokens)
    result = ArmResult(
        size=size, name=name, tokenizer=str(tokenizer), vocab_size=data.vocab_size,
        fertility=round(segs["fertility"], 4), pieces_per_line=round(segs["pieces_per_line"], 2),
        chars_per_token=round(cpt, 4), corpus_tokens=int(data.num_tokens), steps=int(next(iter(pre.values()))["steps"]),
        tokens_seen=tokens, chars_seen=int(round(tokens * cpt)), epochs=round(tokens / max(1, data.num_tokens), 3),
        heldout_mlm=pooled_summary({p: h["rows"] for p, h in heldout.items()}, cfg.n_resamples, cfg.confidence),
        mlm={k: S.summarize_seeds([m["accuracy"][k] for m in mlm.values()]).to_dict() for k in ("top1", "top3", "top5")},
        mlm_words=int(next(iter(mlm.values()))["n_words"]), metrics=metrics, floors=floors,
        init=leg.init, vocabulary=leg.vocab,
    )
    write_json(done, asdict(result))
    return result


def same_recipe(old: dict, new: dict) -> bool:
    """Whether a saved recipe is ``new``: an option added to biotok since it was saved counts as
    equal when ``new`` keeps its default (an upgrade does not orphan a finished ablation)."""
    defaults = AblationConfig(tokenizers=("x",), corpus=()).recipe()
    old = AblationConfig.saved_recipe(old)
    return all(old[k] == v if k in old else k in defaults and defaults[k] == v for k, v in new.items()) and \
        set(old) <= set(new)


def _is_ablation(out: Path) -> bool:
    """Whether ``out`` holds an ablation this command started: its arms/, its corpus split
    (:func:`split_corpus`, run first by the published ablation scripts), or a config.json with the
    recipe (a model folder's config.json, or a user's, has none)."""
    if (out / "arms").is_dir() or (out / "corpus" / "done").is_file():
        return True
    try:
        return isinstance(read_json(out / "config.json").get("recipe"), dict)
    except (OSError, ValueError, AttributeError):
        return False


def _check_inputs(cfg: AblationConfig, out: Path) -> None:
    """The corpus, the tokenizers, the sequence length and the output folder, checked at the door."""
    from biotok.corpus import resolve
    from biotok.errors import OutputExistsError
    from biotok.formats import load
    from biotok.output import check_can_create, check_inputs

    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} exists and is not a folder; choose another --out")
    # never into what it reads; a folder with files is continued only when it is an ablation
    check_inputs(out, [p for p in (*cfg.tokenizers, *cfg.corpus, *cfg.tasks, cfg.base)
                       if p is not None and Path(p).exists()])
    if out.is_dir() and any(out.iterdir()) and not _is_ablation(out):
        raise OutputExistsError(f"{out} is not empty and is not an ablation (no arms/, corpus split or config.json "
                                "holding its recipe); choose another --out")
    check_can_create(out / "config.json")
    command_line(cfg, out)  # the report's command line (spelled by the CLI's options): any problem shows before the runs
    if not 8 <= cfg.seq_len <= MAX_SEQ_LEN:
        raise ConfigError(f"--seq-len {cfg.seq_len}: the models take 8 to {MAX_SEQ_LEN} tokens")
    resolve(list(cfg.corpus))
    toks = [load(t) for t in cfg.tokenizers]
    if cfg.base is not None:  # a masked LM with its tokenizer, and candidates it can move to
        from biotok_train.hf_models import load_model_tokenizer
        from biotok_train.pretrain.init import check_init_from
        from biotok_train.transfer import check_specials

        check_init_from(cfg.base, load_model_tokenizer(cfg.base), "mlm")
        for t, tok in zip(cfg.tokenizers, toks):
            check_specials(tok, f"--tokenizers {t}")


def run_ablation(cfg: AblationConfig, out: str | os.PathLike[str], progress: bool = True) -> AblationReport:
    """Run (or resume) every arm, then write ablation.md, ablation.json and ablation.png."""
    from biotok_train.finetune import make_head, resolve

    out = Path(out)
    _check_inputs(cfg, out)  # a wrong input fails here, before anything is written
    resolved = {t: resolve(t, None, cfg.data_dir) for t in cfg.tasks}
    loaded = {t: data for t, (_, data, _) in resolved.items()}
    tokenizers, train, held, chars, samples = _open(cfg, out)
    objs = {t: (spec, kind, make_head(kind, cfg.finetune_config(cfg.seeds[0]), spec))
            for t, (spec, _, kind) in resolved.items()}
    tasks = {t: {"name": spec.name if spec is not None else getattr(loaded[t], "name", t), "type": kind,
                 "metric": head.metric, "n_test": len(loaded[t].test)} for t, (spec, kind, head) in objs.items()}
    timings_file = out / "timings.json"
    timings = read_json(timings_file) if timings_file.is_file() else {}
    ctx = Context(cfg, out, train, held, chars, samples, loaded, objs, progress, timings, word_floor(train, samples))
    legs = plan_legs(cfg, dict(zip(tokenizers, leg_names(tokenizers))))
    try:
        arms = [run_arm(ctx, size, leg) for size in cfg.sizes for leg in legs]
        probed = probe_arms(ctx, legs, arms, tasks) if cfg.probe else ({}, [])
    finally:
        write_json(timings_file, timings)
    if cfg.probe:
        arms = [dataclasses.replace(a, probe=probed[0][a.vocabulary or a.name]) for a in arms]
    comparisons, floors, rankings, mlm_floors = compute_statistics(ctx, arms, legs)
    sentences = verdict_sentences(cfg, tasks, comparisons, floors, rankings, arms, mlm_floors)
    sentences += plateau_sentences(arms, len(cfg.sizes) > 1)
    sentences += [r["sentence"] for r in probed[1]]
    return write_report(cfg, out, tasks, arms, [leg.name for leg in legs], comparisons, floors, rankings, sentences,
                        mlm_floors, probed[1])


def _open(cfg: AblationConfig, out: Path) -> tuple[list[str], Path, Path, int, list]:
    """Start or resume OUT: config.json (a resumed run must have the same recipe; its tokenizers
    come first), the corpus split and the held-out words. Returns the tokenizers, the split, the
    pretraining text's characters and the words. A new OUT that fails here is removed."""
    from biotok_train.evaluate.masked_words import sample_words

    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        cfg_file = out / "config.json"
        tokenizers = list(cfg.tokenizers)
        if cfg_file.is_file():
            old = read_json(cfg_file)
            if not same_recipe(old.get("recipe") or {}, cfg.recipe()):
                if (out / "arms").exists():
                    raise ConfigError(f"{out} holds an ablation with another recipe (see {cfg_file}); "
                                      "use another --out")
                log.info("%s: no arm was run with its old recipe; starting with this one", out)
            else:
                tokenizers = list(dict.fromkeys([*old.get("tokenizers", []), *cfg.tokenizers]))
        write_json(cfg_file, {"recipe": cfg.recipe(), "tokenizers": tokenizers})
        train, held, chars = split_corpus(cfg, out)
        samples = sample_words(held.read_text(encoding="utf-8").splitlines(), cfg.n_words, seed=0)
    except BaseException:
        if created:  # nothing worth resuming yet: leave no partial folder
            shutil.rmtree(out, ignore_errors=True)
        raise
    return tokenizers, train, held, chars, samples
