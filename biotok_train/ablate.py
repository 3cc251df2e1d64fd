"""``biotok-train ablate``: the same recipe on several vocabularies, one table and one figure.

For each tokenizer (a *leg*): prepare the pretraining text, pretrain with the same config and
step budget, measure fertility and sequence length on held-out lines, masked-word accuracy on
the same held-out words, and NER micro-F1 for each seed. A leg writes ``done.json`` when it is
finished and is never redone; inside an unfinished leg, every finished part (data, model, MLM
score, each NER seed) is reused too, so an interrupted ablation resumes where it stopped.

Layout of OUT::

    config.json              the recipe (a resumed run must use the same one)
    corpus/pretrain.txt      corpus lines used for pretraining (every line but each Nth)
    corpus/heldout.txt       each Nth line: fertility, sequence length and eval-mlm words
    legs/NAME/{data,model,mlm.json,ner-seedS/,done.json}
    ablation.md, ablation.json, ablation.png
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from biotok.errors import ConfigError


@dataclass(frozen=True)
class AblationConfig:
    """Everything that must be equal across legs for the comparison to be fair."""

    tokenizers: tuple[str, ...]
    corpus: tuple[str, ...]
    field_name: str | None = None
    task: str = "e3c"
    data_dir: str | None = None
    size: str = "tiny"
    budget: int = 200
    batch_size: int = 32
    seq_len: int = 128
    lr: float = 5e-4
    seeds: tuple[int, ...] = (0,)
    ner_epochs: int = 3
    ner_lr: float = 5e-5
    ner_max_steps: int = 0
    ner_batch_size: int = 16
    n_words: int = 1000
    heldout_every: int = 20
    pretrain_seed: int = 0

    def __post_init__(self) -> None:
        if not self.tokenizers:
            raise ConfigError("ablate needs at least one tokenizer")
        if not self.seeds:
            raise ConfigError("ablate needs at least one seed")
        if self.heldout_every < 2:
            raise ConfigError("heldout_every must be >= 2")

    def recipe(self) -> dict:
        """The config without the tokenizer list: what a resumed run must match."""
        d = asdict(self)
        d.pop("tokenizers")
        d["seeds"] = list(d["seeds"])
        d["corpus"] = list(d["corpus"])
        return d


@dataclass(frozen=True)
class LegResult:
    """One tokenizer's numbers."""

    name: str
    tokenizer: str
    vocab_size: int
    fertility: float  # pieces per word on the held-out lines (see segmentation_stats)
    seq_len: float  # mean pieces per held-out line (no special tokens)
    pretrain_loss: float
    pretrain_steps: int
    mlm: dict  # {"top1": .., "top3": .., "top5": ..}
    mlm_words: int
    ner_f1: dict  # {seed: micro-F1}
    ner_macro_f1: dict = field(default_factory=dict)

    @property
    def ner_mean(self) -> float:
        return statistics.fmean(self.ner_f1.values())

    @property
    def ner_std(self) -> float:
        vals = list(self.ner_f1.values())
        return statistics.stdev(vals) if len(vals) > 1 else 0.0


@dataclass(frozen=True)
class AblationTable:
    legs: list[LegResult]
    markdown: str
    markdown_path: Path
    png_path: Path


def leg_names(tokenizers: Sequence[str]) -> list[str]:
    """Short unique names from tokenizer paths/aliases: directory or file stem, deduplicated."""
    names: list[str] = []
    for t in tokenizers:
        p = Path(str(t).rstrip("/"))
        base = p.name.split(".")[0] if p.name not in ("tokenizer.json", "tokenizer.json.gz") else p.parent.name
        base = re.sub(r"[^\w.-]+", "_", base) or "tok"
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.append(name)
    return names


def split_corpus(cfg: AblationConfig, out: Path) -> tuple[Path, Path]:
    """Write pretrain.txt / heldout.txt once (each Nth non-blank line held out)."""
    from biotok.corpus import iter_lines

    d = out / "corpus"
    train, held, done = d / "pretrain.txt", d / "heldout.txt", d / "done"
    if done.is_file():
        return train, held
    d.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(train, "w", encoding="utf-8") as ft, open(held, "w", encoding="utf-8") as fh:
        for i, line in enumerate(iter_lines(list(cfg.corpus), cfg.field_name), 1):
            (fh if i % cfg.heldout_every == 0 else ft).write(line + "\n")
            n = i
    if n < cfg.heldout_every:
        raise ConfigError(f"the corpus has {n} lines: too few to hold out every {cfg.heldout_every}th")
    done.write_text(f"{n}\n", encoding="utf-8")
    return train, held


def segmentation_stats(tokenizer, lines: Sequence[str]) -> tuple[float, float]:
    """(fertility, mean pieces per line) without special tokens.

    With :mod:`biotok.metrics`: pieces per biotok word (the definition of ``biotok compare``);
    without it: pieces per whitespace word.
    """
    try:
        from biotok.metrics import fragmentation
    except ImportError:
        fragmentation = None
    if fragmentation is not None:
        f = fragmentation(tokenizer, lines)
        return f.fertility, f.mean_sequence_length
    pieces = words = 0
    for b in range(0, len(lines), 512):
        batch = list(lines[b : b + 512])
        pieces += sum(len(ids) for ids in tokenizer.encode_batch_ids(batch))
        words += sum(len(l.split()) for l in batch)
    return pieces / max(1, words), pieces / max(1, len(lines))


def _write_json(path: Path, obj) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def run_leg(cfg: AblationConfig, tokenizer: str, name: str, out: Path, train: Path, held: Path,
            samples, dataset, progress: bool = True) -> LegResult:
    """One leg, reusing each part already finished under ``out/legs/NAME``."""
    from biotok.tokenizer import load
    from biotok_train import checkpoint as ckpt
    from biotok_train.evaluate import load_mlm, masked_word_accuracy
    from biotok_train.finetune import NerConfig, finetune_ner
    from biotok_train.loop import PretrainConfig, pretrain
    from biotok_train.prepare import open_prepared, prepare

    leg = out / "legs" / name
    done = leg / "done.json"
    if done.is_file():
        return LegResult(**json.loads(done.read_text(encoding="utf-8")))
    leg.mkdir(parents=True, exist_ok=True)
    say = print if progress else (lambda *a, **k: None)
    tok = load(tokenizer)
    lines = [l for l in held.read_text(encoding="utf-8").splitlines() if l.strip()]
    fertility, seq_len = segmentation_stats(tok, lines)

    data_dir = leg / "data"
    if (data_dir / "meta.json").is_file():
        data = open_prepared(data_dir)
    else:
        say(f"[{name}] prepare", flush=True)
        data = prepare([str(train)], tokenizer, cfg.seq_len, data_dir, force=True, progress=progress)
    model_dir = leg / "model"
    pre_done = leg / "pretrain.json"
    if pre_done.is_file():
        pre = json.loads(pre_done.read_text(encoding="utf-8"))
    else:
        say(f"[{name}] pretrain {cfg.size}, {cfg.budget} steps", flush=True)
        pcfg = PretrainConfig(objective="mlm", arch="bert", size=cfg.size, steps=cfg.budget,
                              batch_size=cfg.batch_size, lr=cfg.lr, seed=cfg.pretrain_seed)
        res = pretrain(data.path, pcfg, model_dir, resume=(model_dir / ckpt.STATE).exists(), progress=progress)
        pre = {"steps": res.steps, "final_loss": res.final_loss, "tokens_per_second": res.tokens_per_second}
        _write_json(pre_done, pre)

    mlm_file = leg / "mlm.json"
    if mlm_file.is_file():
        mlm = json.loads(mlm_file.read_text(encoding="utf-8"))
    else:
        say(f"[{name}] eval-mlm on {len(samples)} held-out words", flush=True)
        model, mtok = load_mlm(model_dir)
        mlm = masked_word_accuracy(model, mtok, samples, name=name).to_dict()
        _write_json(mlm_file, mlm)
        del model

    f1, macro = {}, {}
    for seed in cfg.seeds:
        res_file = leg / f"ner-seed{seed}" / "results.json"
        if not res_file.is_file():
            say(f"[{name}] NER {dataset.name} seed {seed}", flush=True)
            ncfg = NerConfig(epochs=cfg.ner_epochs, lr=cfg.ner_lr, seed=seed, batch_size=cfg.ner_batch_size,
                             max_steps=cfg.ner_max_steps, max_length=min(256, cfg.seq_len * 2))
            finetune_ner(model_dir, dataset, ncfg, leg / f"ner-seed{seed}", progress=progress)
        r = json.loads(res_file.read_text(encoding="utf-8"))
        f1[str(seed)], macro[str(seed)] = r["micro_f1"], r["macro_f1"]

    result = LegResult(
        name=name, tokenizer=str(tokenizer), vocab_size=data.vocab_size, fertility=round(fertility, 4),
        seq_len=round(seq_len, 2), pretrain_loss=float(pre["final_loss"]), pretrain_steps=int(pre["steps"]),
        mlm={k: mlm["accuracy"][k] for k in ("top1", "top3", "top5")}, mlm_words=int(mlm["n_words"]),
        ner_f1=f1, ner_macro_f1=macro,
    )
    _write_json(done, asdict(result))
    return result


def run_ablation(cfg: AblationConfig, out: str | os.PathLike[str], progress: bool = True) -> AblationTable:
    """Run (or resume) every leg, then write ablation.md, ablation.json and ablation.png."""
    from biotok_train.evaluate import sample_words
    from biotok_train.readers import load_dataset

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg_file = out / "config.json"
    if cfg_file.is_file():
        old = json.loads(cfg_file.read_text(encoding="utf-8"))
        if old.get("recipe") != json.loads(json.dumps(cfg.recipe())):
            raise ConfigError(f"{out} holds an ablation with another recipe (see {cfg_file}); use another --out")
        tokenizers = list(dict.fromkeys([*old.get("tokenizers", []), *cfg.tokenizers]))
    else:
        tokenizers = list(cfg.tokenizers)
    _write_json(cfg_file, {"recipe": cfg.recipe(), "tokenizers": tokenizers})
    train, held = split_corpus(cfg, out)
    samples = sample_words(held.read_text(encoding="utf-8").splitlines(), cfg.n_words, seed=0)
    dataset = load_dataset(cfg.task, cfg.data_dir)
    names = dict(zip(tokenizers, leg_names(tokenizers)))
    legs = [run_leg(cfg, t, names[t], out, train, held, samples, dataset, progress) for t in cfg.tokenizers]
    md = format_table(cfg, legs)
    (out / "ablation.md").write_text(md, encoding="utf-8")
    _write_json(out / "ablation.json", {"recipe": cfg.recipe(), "legs": [asdict(l) for l in legs]})
    png = plot(legs, out / "ablation.png", f"{cfg.task} · {cfg.size} · {cfg.budget} steps")
    return AblationTable(legs, md, out / "ablation.md", png)


def _pm(mean: float, std: float, n: int) -> str:
    return f"{mean:.4f} ± {std:.4f}" if n > 1 else f"{mean:.4f}"


def format_table(cfg: AblationConfig, legs: Sequence[LegResult]) -> str:
    """The ablation as a Markdown table (one row per tokenizer)."""
    seeds = [str(s) for s in cfg.seeds]
    head = ["tokenizer", "vocab", "fertility", "seq len", "pretrain loss", "MLM top-1", "top-3", "top-5",
            *[f"NER F1 s{s}" for s in seeds], "NER F1 mean ± std"]
    rows = [f"| {' | '.join(head)} |", "|" + "---|" * len(head)]
    for l in legs:
        cells = [l.name, f"{l.vocab_size:,}", f"{l.fertility:.3f}", f"{l.seq_len:.1f}", f"{l.pretrain_loss:.3f}",
                 f"{l.mlm['top1']:.3f}", f"{l.mlm['top3']:.3f}", f"{l.mlm['top5']:.3f}",
                 *[f"{l.ner_f1[s]:.4f}" for s in seeds], _pm(l.ner_mean, l.ner_std, len(seeds))]
        rows.append(f"| {' | '.join(cells)} |")
    note = (f"\nRecipe: BERT-{cfg.size} MLM, {cfg.budget} steps × {cfg.batch_size} sequences of {cfg.seq_len} pieces, "
            f"lr {cfg.lr}, pretraining seed {cfg.pretrain_seed}; NER task {cfg.task}, {cfg.ner_epochs} epochs, "
            f"lr {cfg.ner_lr}, seeds {', '.join(seeds)} (seqeval strict IOB2 micro-F1 on test). "
            f"MLM: whole-word top-k on {legs[0].mlm_words if legs else 0} held-out words, the same for every "
            f"tokenizer. Fertility: pieces per word (biotok words, as in `biotok compare`), seq len: pieces per "
            f"line, both on the held-out lines.\n")
    return "\n".join(rows) + "\n" + note


def plot(legs: Sequence[LegResult], path: Path, title: str) -> Path:
    """Two panels: MLM top-1/3/5 per tokenizer, NER micro-F1 mean ± std with each seed's point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    x = list(range(len(legs)))
    w = 0.25
    for j, k in enumerate(("top1", "top3", "top5")):
        a.bar([i + (j - 1) * w for i in x], [l.mlm[k] for l in legs], w, label=k.replace("top", "top-"))
    a.set_xticks(x, [l.name for l in legs], rotation=15)
    a.set_ylabel("masked-word accuracy")
    a.set_ylim(0, min(1.0, max([0.05] + [l.mlm["top5"] * 1.2 for l in legs])))
    a.set_title("MLM (held-out words)")
    a.legend()
    b.bar(x, [l.ner_mean for l in legs], 0.5, yerr=[l.ner_std for l in legs], capsize=4, color="tab:green")
    for i, l in enumerate(legs):
        vals = list(l.ner_f1.values())
        b.plot([i] * len(vals), vals, "k.", ms=6)
    b.set_xticks(x, [l.name for l in legs], rotation=15)
    b.set_ylabel("NER micro-F1 (test)")
    b.set_title("NER (mean ± std over seeds)")
    top = max([1e-3] + [v for l in legs for v in l.ner_f1.values()])
    b.set_ylim(0, min(1.0, math.ceil(top * 12) / 10))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
