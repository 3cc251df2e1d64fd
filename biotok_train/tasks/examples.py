"""What a task is: plain example types for every task type, :class:`TaskData` (the one container
of task data, what :func:`biotok_train.tasks.load` returns) and :class:`TaskSpec` (how a named
task is read and scored; the registry of named ones is :mod:`biotok_train.tasks.registry`).

Each example carries ``source`` ('file:line' or 'file#item') so that a message about it can name
where it came from. NER tasks use :class:`biotok.datasets.bio.Sentence` as their example type.
This module imports neither torch nor transformers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from biotok.errors import DataError
from biotok_train.config import SUITES
from biotok_train.scores import METRICS, Score, compute

TASK_TYPES = ("ner", "classify", "multilabel", "pair-regression", "relation", "yesno-qa", "mcq")
"""The task types a reader can produce (one example class each, see :data:`EXAMPLE_TYPES`)."""

MASK = re.compile(r"@[A-Za-z][\w-]*\$")
"""An entity mask as BLURB writes it: ``@GENE$``, ``@CHEMICAL$``, ``@DRUG$``, ``@CHEM-GENE$``."""


@dataclass(frozen=True)
class ClassifyExample:
    """One text with one class label (sentence or document classification)."""

    id: str
    text: str
    label: str
    source: str = ""


@dataclass(frozen=True)
class MultiLabelExample:
    """One text with zero or more labels; ``group`` ties rows scored together (HoC: the PMID)."""

    id: str
    text: str
    labels: tuple[str, ...]
    source: str = ""
    group: str = ""


@dataclass(frozen=True)
class PairExample:
    """Two texts and a similarity score (BIOSSES: mean of five annotators, 0 to 4)."""

    id: str
    text_a: str
    text_b: str
    score: float
    source: str = ""


@dataclass(frozen=True)
class RelationExample:
    """A sentence holding two entities and the relation label between them.

    ``text`` is the sentence with both entities replaced by masks (``@GENE$``), as BLURB ships it.
    When the unmasked ``sentence`` and the two entity ``spans`` (start, end, type, in text order)
    are known (rebuilt ChemProt and DDI), :meth:`marked` gives the entity-marker form instead.
    """

    id: str
    text: str
    label: str
    source: str = ""
    sentence: str = ""
    spans: tuple[tuple[int, int, str], ...] = ()

    def marked(self, open_tag: str = "[E{n}]", close_tag: str = "[/E{n}]") -> str:
        """The sentence with each entity wrapped in marker tokens (PubMedBERT Table 14's
        alternative to masks); entities that overlap are wrapped together as one span."""
        if not self.sentence or len(self.spans) != 2:
            raise DataError(f"{self.source or self.id}: entity markers need the unmasked sentence and both spans")
        (s1, e1, _), (s2, e2, _) = self.spans
        o1, c1 = open_tag.format(n=1), close_tag.format(n=1)
        o2, c2 = open_tag.format(n=2), close_tag.format(n=2)
        t = self.sentence
        if e1 > s2:  # overlapping entities: one span carrying both markers
            s, e = min(s1, s2), max(e1, e2)
            return f"{t[:s]}{o1} {o2} {t[s:e]} {c2} {c1}{t[e:]}"
        return f"{t[:s1]}{o1} {t[s1:e1]} {c1}{t[e1:s2]}{o2} {t[s2:e2]} {c2}{t[e2:]}"


@dataclass(frozen=True)
class YesNoExample:
    """A question, its context (PubMedQA: the abstract without its conclusion) and yes/no/maybe."""

    id: str
    question: str
    context: str
    label: str
    source: str = ""


@dataclass(frozen=True)
class MCQExample:
    """A multiple-choice question: the options in order and the 0-based indices of the right ones."""

    id: str
    question: str
    options: tuple[str, ...]
    answers: tuple[int, ...]
    source: str = ""

    @property
    def letters(self) -> str:
        """The right answers as letters ('a' for option 0), e.g. 'bd'."""
        return "".join(chr(ord("a") + i) for i in self.answers)


EXAMPLE_TYPES: dict[str, str] = {
    "ner": "Sentence",
    "classify": "ClassifyExample",
    "multilabel": "MultiLabelExample",
    "pair-regression": "PairExample",
    "relation": "RelationExample",
    "yesno-qa": "YesNoExample",
    "mcq": "MCQExample",
}


@dataclass(frozen=True)
class TaskData:
    """train / dev / test examples of one task, its task type and its label set.

    ``labels``: class names for classify / relation / yesno-qa / multilabel, entity types for ner,
    empty for pair-regression and mcq. ``spec``: the task it was loaded as (set by
    :func:`biotok_train.tasks.load`: the named task's spec, or a user's task's default metric);
    None for data built by hand or read from a BIO path, which fine-tuning scores with
    :func:`biotok_train.tasks.plain_spec` (the task type's default metric).
    """

    name: str
    task_type: str
    labels: tuple[str, ...]
    train: tuple
    dev: tuple
    test: tuple
    spec: TaskSpec | None = field(default=None, compare=False, repr=False)
    # the files or folders the examples were read from (set by biotok_train.tasks.load): inputs
    # that no output of a run on this data may replace or be written into
    sources: tuple[str, ...] = field(default=(), compare=False, repr=False)  # the files read, in order (keys)
    roots: tuple[str, ...] = field(default=(), compare=False, repr=False)  # where they were read from (never written)
    # the sha256 of each of ``sources``, of the bytes this data was read from (what its key hashes)
    digests: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.task_type not in TASK_TYPES:
            raise DataError(f"unknown task type {self.task_type!r} (one of {', '.join(TASK_TYPES)})")

    def split(self, name: str) -> tuple:
        if name not in ("train", "dev", "test"):
            raise DataError(f"unknown split {name!r} (train, dev or test)")
        return getattr(self, name)

    def sizes(self) -> dict[str, int]:
        return {"train": len(self.train), "dev": len(self.dev), "test": len(self.test)}

    def evaluated_on(self, n: int) -> "TaskData":
        """The task with dev and test cut to their first ``n`` examples (0: whole), for smoke tests
        and dry runs: the fine-tune, its scores and the ablation's comparisons see the same ones."""
        if n <= 0 or (len(self.dev) <= n and len(self.test) <= n):
            return self
        return replace(self, dev=self.dev[:n], test=self.test[:n])


def ner_data(name: str, train: Iterable, dev: Iterable, test: Iterable) -> TaskData:
    """NER sentences as :class:`TaskData`, labelled with the sorted entity types of all three splits."""
    splits = tuple(tuple(s) for s in (train, dev, test))
    types = sorted({t for split in splits for s in split for t, _, _ in s.entities})
    return TaskData(name, "ner", tuple(types), *splits)


# --- how a task is read and scored ------------------------------------------------------------

Reader = Callable[[Path | None, Path | None], TaskData]
FAMILIES = ("ner", "relation", "similarity", "classification", "qa", "pico")
DEFAULT_METRICS: dict[str, str] = {
    "ner": "entity_f1",
    "classify": "accuracy",
    "multilabel": "weighted_f1_multilabel",
    "pair-regression": "pearson",
    "relation": "accuracy",
    "yesno-qa": "accuracy",
    "mcq": "hamming_score",
}
"""The metric of a task type when no named task fixes one (a user's ``--task-type`` files)."""
TYPE_FAMILIES: dict[str, str] = {
    "ner": "ner", "classify": "classification", "multilabel": "classification", "pair-regression": "similarity",
    "relation": "relation", "yesno-qa": "qa", "mcq": "qa",
}
"""The suite family of each task type (BLURB's grouping)."""


@dataclass(frozen=True)
class TaskSpec:
    """A named task: how to read it and how its benchmark scores it.

    ``reader(corpora, cache)`` returns the task's :class:`TaskData` (called by
    :func:`biotok_train.tasks.load`; ``corpora``: the shared corpora folder or None for
    ``$BIOTOK_SHARED_DATA/corpora``; ``cache``: the folder for rebuilt data or None for
    ``$BIOTOK_CACHE`` / ~/.cache/biotok). ``labels``: the fixed label set, or
    () when it comes from the data (entity types). ``family``: the group the suite score
    averages within (BLURB's task types). ``metric_options``: fixed keyword arguments of the
    metric (the negative class of ChemProt, the label list of HoC, ...). ``threshold``: the
    sigmoid threshold of a multi-label task's decisions when it has its own, or ``"dev"``: chosen
    on dev from :attr:`~biotok_train.config.FinetuneConfig.threshold_grid` (MORFITT).
    ``nested``: how nested entities were made one layer, for sets that have them (QUAERO, Mantra).
    """

    name: str
    suite: str | None
    task_type: str
    metric: str
    reader: Reader
    labels: tuple[str, ...] = ()
    family: str = ""
    metric_options: tuple[tuple[str, Any], ...] = ()
    description: str = ""
    threshold: float | str | None = None  # a number, "dev" (chosen on dev) or None (the head's default)
    nested: str = ""  # nested entities flattened: "outermost" (biotok) or "drbenchmark"

    def __post_init__(self) -> None:
        if self.task_type not in TASK_TYPES:
            raise DataError(f"task {self.name!r}: unknown task type {self.task_type!r}")
        if self.metric not in METRICS:
            raise DataError(f"task {self.name!r}: unknown metric {self.metric!r}")
        if self.suite is not None and self.suite not in SUITES:
            raise DataError(f"task {self.name!r}: unknown suite {self.suite!r}")
        if isinstance(self.threshold, str) and self.threshold != "dev":
            raise DataError(f"task {self.name!r}: threshold {self.threshold!r} is a number or 'dev'")
        if self.family and self.family not in FAMILIES:
            raise DataError(f"task {self.name!r}: unknown family {self.family!r}")

    def score(self, gold: Sequence, pred: Sequence, **options: Any) -> Score:
        """The benchmark's metric on gold and predicted targets (see :func:`targets`)."""
        return compute(self.metric, gold, pred, **dict(self.metric_options), **options)

    def score_examples(self, examples: Sequence, pred: Sequence, **options: Any) -> Score:
        """The metric of predictions for ``examples`` (gold targets and, for HoC, the abstract
        of each row are taken from the examples)."""
        if self.metric == "hoc_f1":
            options.setdefault("groups", [e.group for e in examples])
        return self.score(targets(self.task_type, examples), pred, **options)


def targets(task_type: str, examples: Sequence) -> list:
    """The gold targets of examples, in the form the metrics take: tag sequences (ner), labels
    (classify, relation, yesno-qa), label tuples (multilabel), floats (pair-regression), answer
    index tuples (mcq)."""
    if task_type == "ner":
        return [list(e.tags) for e in examples]
    if task_type in ("classify", "relation", "yesno-qa"):
        return [e.label for e in examples]
    if task_type == "multilabel":
        return [tuple(e.labels) for e in examples]
    if task_type == "pair-regression":
        return [e.score for e in examples]
    if task_type == "mcq":
        return [tuple(e.answers) for e in examples]
    raise DataError(f"unknown task type {task_type!r}")


__all__ = [
    "ClassifyExample", "DEFAULT_METRICS", "EXAMPLE_TYPES", "FAMILIES", "MASK", "MCQExample", "MultiLabelExample",
    "PairExample", "Reader", "RelationExample", "TASK_TYPES", "TYPE_FAMILIES", "TaskData", "TaskSpec", "YesNoExample",
    "ner_data", "targets",
]
