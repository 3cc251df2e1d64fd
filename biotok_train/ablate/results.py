"""The results of an ablation and the schema of ``ablation.json``: every number the page shows,
computed once (:func:`biotok_train.ablate.analysis.analyze`), written as JSON and read back, so
that the page (:mod:`~biotok_train.ablate.render`) is rendered from the file alone. Its keys are
:data:`KEYS`, in that order (a key a run written before it existed lacks is left out, never
written empty); a comparison whose verdict says nothing has ``"signal": false`` and
``"why_no_signal"`` (:func:`~biotok_train.ablate.analysis.signal`). ``costs.json`` beside it
holds what the jobs cost (how they ran, not what they found)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

BASE_SIZE = "as-base"  # biotok_train.config.BASE_SIZE (the arms of a --base ablation), read without the config


MLM = "mlm"  # the key of masked-word accuracy among the task keys of the results


@dataclass(frozen=True)
class ArmResult:
    """One tokenizer at one size: its budget, its numbers (each a seed summary dict), its floors."""

    size: str
    name: str
    tokenizer: str
    vocab_size: int
    fertility: float  # pieces per word on the held-out lines (words as `biotok compare` defines them)
    pieces_per_line: float  # on the held-out lines, no special tokens
    chars_per_token: float  # characters of pretraining text per token with this tokenizer
    corpus_tokens: int  # tokens of the pretraining text with this tokenizer
    steps: int
    tokens_seen: int  # real (non-padding) tokens of one pretraining run
    chars_seen: int  # characters of text those tokens cover
    epochs: float  # passes over the pretraining text
    mlm: dict  # {"top1"|"top3"|"top5": SeedSummary dict} over pretraining seeds
    mlm_words: int
    metrics: dict  # {task: SeedSummary dict of its metric over every (pretraining, fine-tuning) seed pair}
    floors: dict = field(default_factory=dict)  # {task: SeedSummary dict}, random init
    init: str = "scratch"  # scratch | continual | transfer | general (see AblationConfig.arms)
    vocabulary: str = ""  # the name of its vocabulary (the tokenizer's leg name)
    # held-out [MASK] loss and top-1 beside the unigram floor and the most-frequent-piece top-1, pooled over
    # pretraining seeds, with the gap's interval (biotok_train.pretrain.heldout.pooled_summary)
    heldout_mlm: dict = field(default_factory=dict)
    probe: dict = field(default_factory=dict)  # causal-LM probe of its vocabulary (with --probe)
    pretrain_loss: dict | None = None  # older runs only: a single step's training loss, no longer measured
    loss_curve: list = field(default_factory=list)  # [[step, training MLM loss]] of pretraining seed 0

    def summary(self, task: str) -> dict | None:
        """Its seed summary dict on ``task`` (MLM: masked-word top-1; None for an arm not pretrained)."""
        return (self.mlm.get("top1") if task == MLM else self.metrics[task]) or None


class Recipe(SimpleNamespace):
    """What the page says about the recipe: the recipe saved in ``ablation.json`` by field (``finetune``
    a dict), with the probe's steps, the pairs compared, ``transfer_methods`` (``one_method``: saved
    before several could run at once, as its page says) and ``tokens_per_arm``."""

    @classmethod
    def from_dict(cls, recipe: dict, probe: int = 0, pairs: str = "reference") -> Recipe:
        methods = recipe.get("transfer_methods") or [recipe.get("transfer_method", "fvt")]
        return cls(**{"curve_tasks": None, **recipe, "transfer_methods": methods}, probe=probe, pairs=pairs,
                   one_method="transfer_method" in recipe,
                   tokens_per_arm=recipe["budget"] * recipe["batch_size"] * recipe["seq_len"])


# The keys of ablation.json in file order
KEYS = ("recipe", "tokenizers", "reference", "command", "versions", "tasks", "arms", "comparisons", "floors",
        "mlm_floors", "rankings", "probe_rankings", "curve", "curve_gaps", "heldout_curve", "heldout_curve_gaps",
        "verdicts", "pairs", "baselines", "baseline_checks", "no_signal", "per_pretrain_seed")


@dataclass
class Results:
    """An ablation's numbers and verdicts: what ``ablation.json`` holds (None: a key an older run lacks)."""

    recipe: dict
    tokenizers: list
    reference: str
    command: str
    versions: str
    tasks: dict  # task key -> {"name", "type", "metric", "n_test"}
    arms: list[ArmResult]
    comparisons: list[dict]  # candidate vs reference, per size and metric
    floors: list[dict]  # arm vs its random-init floor, per size and task
    mlm_floors: list[dict]  # arm vs always answering the most frequent word
    rankings: list[dict]  # Kendall τ between sizes
    verdicts: list[str]  # the sentences, written from the numbers
    probe_rankings: list | None = None
    curve: list | None = None
    curve_gaps: list | None = None
    heldout_curve: list | None = None
    heldout_curve_gaps: list | None = None
    pairs: str | None = None
    baselines: dict | None = None  # task -> TrivialBaseline.to_dict()
    baseline_checks: list | None = None  # arm vs its task's trivial baseline
    no_signal: list | None = None  # {size, task, ...} where no arm beats the trivial baseline
    per_pretrain_seed: list | None = None
    costs: dict = field(default_factory=dict)  # costs.json (not part of ablation.json)

    @property
    def sentences(self) -> list[str]:
        return self.verdicts

    @property
    def setup(self) -> Recipe:
        """The recipe as the page reads it."""
        return Recipe.from_dict(self.recipe, _probe_steps(self.command), self.pairs or "reference")

    @property
    def names(self) -> list[str]:
        """The arms in report order (the reference first)."""
        return list(dict.fromkeys(a.name for a in self.arms))

    def arm(self, size: str, name: str) -> ArmResult:
        return next(a for a in self.arms if a.size == size and a.name == name)

    def to_json(self) -> dict:
        """ablation.json's object (every key in :data:`KEYS` order, those an older run lacks left out)."""
        d = {k: getattr(self, k) for k in KEYS if getattr(self, k) is not None}
        d["arms"] = [asdict(a) for a in self.arms]
        return d

    @classmethod
    def from_json(cls, d: dict, costs: dict | None = None) -> Results:
        known = {f.name for f in fields(cls)} - {"costs"}
        return cls(**{k: v for k, v in d.items() if k in known and k != "arms"},
                   arms=[ArmResult(**a) for a in d["arms"]], costs=costs or {})

    def write(self, out: Path) -> None:
        """ablation.json and costs.json in ``out``, atomically."""
        from biotok_train.ablate.store import write_json  # lazy: the store's writer

        write_json(out / "ablation.json", self.to_json(), indent=2)
        write_json(out / "costs.json", self.costs, indent=2)


def load(out: Path) -> Results:
    """The results in ``out``: ablation.json, with costs.json where it is there."""
    costs = out / "costs.json"
    return Results.from_json(_read(out / "ablation.json"), _read(costs) if costs.is_file() else None)


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _probe_steps(command: str) -> int:
    """The probe's steps (not part of the recipe: one more metric, no arm changes): the command's ``--probe N``."""
    m = re.search(r"--probe (\d+)", command)
    return int(m.group(1)) if m else 0


def at_size(size: str) -> str:
    """'At size tiny', or 'With the base's architecture' for the arms of a --base ablation."""
    return "With the base's architecture" if size == BASE_SIZE else f"At size {size}"


def metric_label(tasks: dict, task: str) -> str:
    return "MLM top-1" if task == MLM else f"{tasks[task]['name']} {tasks[task]['metric']}"


@dataclass
class AblationReport:
    """What :func:`~biotok_train.ablate.run.run_ablation` returns: the results, the config they
    come from, the page and where each file was written; a result's field reads through."""

    config: Any  # the AblationConfig
    results: Results
    markdown: str
    out: Path
    curve_png: Path | None = None

    markdown_path = property(lambda self: self.out / "ablation.md")
    json_path = property(lambda self: self.out / "ablation.json")
    png_path = property(lambda self: self.out / "ablation.png")

    def __getattr__(self, name: str):
        if name == "results":  # not yet set (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.results, name)
