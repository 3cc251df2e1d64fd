"""The one task registry and the one door to task data.

Every named downstream task is a :class:`TaskSpec` (task type, benchmark metric, reader, label
set, suite and family) in :data:`TASKS`; the task type picks the fine-tuning head
(:data:`biotok_train.finetune.HEADS`), and ``bench`` runs a suite's tasks. Add one with
:func:`register`. :func:`load` reads any task -- a registered name, a :class:`TaskSpec`, a BIO
file or folder, or a user's train / dev / test files with a task type -- into one
:class:`~biotok_train.tasks.examples.TaskData` that carries the spec it is scored by (a user's
own data: :func:`plain_spec`, the task type's default metric).

``blurb``: the BLURB tasks that can be built from the shared data: BC5-chem, BC5-disease,
NCBI-disease, BC2GM, JNLPBA (NER); ChemProt, DDI, GAD (relation extraction); BIOSSES (sentence
similarity); HoC (document classification); PubMedQA (question answering). Not available:
EBM PICO (only its dev/test exist in the staged source) and BioASQ (its data need the
organisers' registration) -- see :data:`UNAVAILABLE`. The BLURB score over this suite therefore
averages five families, not six.

``fr``: a DrBenchmark-style subset runnable from the shared data: QUAERO EMEA and MEDLINE with
DrBenchmark's conversion of nested entities (``-drb``; biotok's own "outermost" conversion is
the task without the suffix, outside the suite), E3C and Mantra GSC (NER); MORFITT and
FrenchMedMCQA's number of answers (classification); FrenchMedMCQA multiple choice (question
answering). Its score is folded the BLURB way. No torch, no transformers.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from biotok.datadir import corpora_dir
from biotok.errors import DataError
from biotok_train.config import SUITES
from biotok_train.tasks import blurb, chemprot, ddi, frenchmedmcqa, morfitt, named, ner, pubmedqa, quaero
from biotok_train.tasks.examples import (
    DEFAULT_METRICS, FAMILIES, TASK_TYPES, TYPE_FAMILIES, Reader, TaskData, TaskSpec, targets,
)
from biotok_train.tasks.common import cache_root
from biotok_train.tasks.plain import load_plain
from biotok_train.tasks.sources import recording

PathLike = str | os.PathLike[str]
Files = tuple[PathLike, PathLike, PathLike] | list[PathLike]


def _named_ner(name: str) -> Reader:
    """A NER set of :mod:`biotok_train.tasks.ner` (BIO or BRAT files under the corpora folder)."""

    def read(corpora: Path | None, cache: Path | None) -> TaskData:
        if corpora is None:
            raise DataError(f"task {name!r} needs the corpora folder: pass --data-dir or set BIOTOK_SHARED_DATA")
        return ner.load_named(name, corpora)

    return read


def _no_cache(fn: Callable[[Path | None], TaskData]) -> Reader:
    return lambda corpora, cache: fn(corpora)


_BLURB_NER = "strict entity F1 (seqeval)"

TASKS: dict[str, TaskSpec] = {t.name: t for t in (
    # --- BLURB ---
    TaskSpec("bc5-chem", "blurb", "ner", "entity_f1", _no_cache(lambda c: blurb.load_bc5(c, "Chemical")),
             family="ner", description=f"BC5CDR chemicals; {_BLURB_NER}"),
    TaskSpec("bc5-disease", "blurb", "ner", "entity_f1", _no_cache(lambda c: blurb.load_bc5(c, "Disease")),
             family="ner", description=f"BC5CDR diseases; {_BLURB_NER}"),
    TaskSpec("ncbi-disease", "blurb", "ner", "entity_f1", _no_cache(blurb.load_ncbi_blurb),
             family="ner", description=f"NCBI-disease (duplicated train abstract once); {_BLURB_NER}"),
    TaskSpec("bc2gm", "blurb", "ner", "entity_f1", _no_cache(blurb.load_bc2gm),
             family="ner", description=f"BioCreative II gene mentions; {_BLURB_NER}"),
    TaskSpec("jnlpba", "blurb", "ner", "entity_f1", _no_cache(blurb.load_jnlpba),
             family="ner", description=f"JNLPBA, untyped as in BLURB; {_BLURB_NER}"),
    TaskSpec("chemprot", "blurb", "relation", "positive_micro_f1", chemprot.load_chemprot, blurb.CHEMPROT_LABELS,
             "relation", (("negative", ("false",)),),
             "chemical-protein relations, rebuilt from BioCreative VI; micro F1 without 'false'"),
    TaskSpec("ddi", "blurb", "relation", "positive_micro_f1", ddi.load_ddi, blurb.DDI_LABELS,
             "relation", (("negative", ("DDI-false",)),),
             "drug-drug interactions, rebuilt from DDI-2013; micro F1 without 'DDI-false'"),
    TaskSpec("gad", "blurb", "relation", "positive_f1", _no_cache(blurb.load_gad), blurb.GAD_LABELS,
             "relation", (("positive", "1"),), "gene-disease associations; F1 of the positive class"),
    TaskSpec("biosses", "blurb", "pair-regression", "pearson", _no_cache(blurb.load_biosses), (),
             "similarity", (), "sentence-pair similarity (0-4); Pearson"),
    TaskSpec("hoc", "blurb", "multilabel", "hoc_f1", _no_cache(blurb.load_hoc), blurb.HOC_LABELS,
             "classification", (("labels", blurb.HOC_LABELS),),
             "Hallmarks of Cancer, sentence rows scored per abstract; F1 averaged over the 10 hallmarks"),
    TaskSpec("pubmedqa", "blurb", "yesno-qa", "accuracy", _no_cache(pubmedqa.load_pubmedqa), pubmedqa.LABELS,
             "qa", (), "PubMedQA PQA-L, reasoning-required; accuracy"),
    # --- DrBenchmark-style French subset ---
    TaskSpec("quaero-emea-drb", "fr", "ner", "entity_f1", _no_cache(lambda c: quaero.load_quaero_drb(c, "EMEA")),
             family="ner", description="QUAERO EMEA, nested entities as DrBenchmark converts them "
             "(whitespace words, longest overlapping span kept, cut at '.'); strict entity F1", nested="drbenchmark"),
    TaskSpec("quaero-medline-drb", "fr", "ner", "entity_f1",
             _no_cache(lambda c: quaero.load_quaero_drb(c, "MEDLINE")),
             family="ner", description="QUAERO MEDLINE titles, nested entities as DrBenchmark converts them "
             "(whitespace words, longest overlapping span kept); strict entity F1", nested="drbenchmark"),
    TaskSpec("e3c", "fr", "ner", "entity_f1", _named_ner("e3c"),
             family="ner", description="E3C French layer 1 clinical entities; strict entity F1"),
    TaskSpec("mantra-fr", "fr", "ner", "entity_f1", _named_ner("mantra-fr"),
             family="ner", description="Mantra GSC French (split by hash), outermost of nested entities; "
             "strict entity F1", nested="outermost"),
    TaskSpec("morfitt", "fr", "multilabel", "weighted_f1_multilabel", _no_cache(morfitt.load_morfitt),
             morfitt.LABELS, "classification", (("labels", morfitt.LABELS),),
             "MORFITT medical specialties; weighted F1 (MORFITT paper), sigmoid threshold chosen on dev "
             "(the paper's fixed 0.70 predicts almost nothing from a small model)", threshold="dev"),
    TaskSpec("frenchmedmcqa-nbr", "fr", "classify", "weighted_f1", _no_cache(frenchmedmcqa.load_frenchmedmcqa_nbr),
             ("1", "2", "3", "4", "5"), "classification", (),
             "FrenchMedMCQA number of right answers; weighted F1 (DrBenchmark)"),
    TaskSpec("frenchmedmcqa", "fr", "mcq", "hamming_score", _no_cache(frenchmedmcqa.load_frenchmedmcqa), (),
             "qa", (), "FrenchMedMCQA multiple choice; Hamming score (EMR in the details)"),
    # --- the existing NER sets, outside the suites ---
    TaskSpec("quaero-emea", None, "ner", "entity_f1", _named_ner("quaero-emea"),
             family="ner", description="QUAERO EMEA, outermost of nested entities (biotok's words and sentences); "
             "strict entity F1", nested="outermost"),
    TaskSpec("quaero-medline", None, "ner", "entity_f1", _named_ner("quaero-medline"),
             family="ner", description="QUAERO MEDLINE, outermost of nested entities (biotok's words); "
             "strict entity F1", nested="outermost"),
    TaskSpec("quaero", None, "ner", "entity_f1", _named_ner("quaero"),
             family="ner", description="QUAERO EMEA + MEDLINE together, outermost of nested entities; "
             "strict entity F1", nested="outermost"),
    TaskSpec("bc5cdr", None, "ner", "entity_f1", _named_ner("bc5cdr"),
             family="ner", description="BC5CDR chemicals and diseases together; strict entity F1"),
    TaskSpec("ncbi", None, "ner", "entity_f1", _named_ner("ncbi"),
             family="ner", description="NCBI-disease CoNLL files as staged; strict entity F1"),
)}
"""Every named task, by name."""

UNAVAILABLE: dict[str, str] = {
    "ebm-pico": "BLURB PICO: only dev/test are in the staged source (train is over the snapshot size limit)",
    "bioasq": "BLURB BioASQ yes/no QA: its data need registration with the BioASQ organisers; not staged",
}
"""BLURB tasks that cannot be built from the shared data, with the reason."""


def register(spec: TaskSpec) -> TaskSpec:
    """Add (or replace) a named task in :data:`TASKS`; ``finetune`` and ``bench`` then know it."""
    TASKS[spec.name] = spec
    return spec


def plain_spec(data: TaskData) -> TaskSpec:
    """The spec of a user's own task (:func:`biotok_train.tasks.plain.load_plain`): the task
    type's default metric (:data:`DEFAULT_METRICS`) over the data's labels."""
    metric = DEFAULT_METRICS[data.task_type]
    options: tuple[tuple[str, Any], ...] = ()
    if metric == "weighted_f1_multilabel":
        options = (("labels", tuple(data.labels)),)
    return TaskSpec(data.name, None, data.task_type, metric, lambda corpora, cache: data, tuple(data.labels),
                    TYPE_FAMILIES[data.task_type], options, f"user files ({data.task_type})")


def get_task(name: str) -> TaskSpec:
    """The spec of a named task; an unknown name is one clear error listing the known ones."""
    if name in TASKS:
        return TASKS[name]
    if name in UNAVAILABLE:
        raise DataError(f"task {name!r} is not available: {UNAVAILABLE[name]}")
    raise DataError(f"unknown task {name!r} (one of {', '.join(TASKS)})")


def task_type(name_or_path: str) -> str:
    """The task type of a named task (which head it needs), or 'ner' for a BIO file or folder."""
    spec = TASKS.get(name_or_path)
    return spec.task_type if spec is not None else "ner"


def load(source: str | os.PathLike[str] | TaskSpec | Files, corpora: PathLike | None = None,
         cache: PathLike | None = None, *, task_type: str | None = None, labels: Sequence[str] | None = None,
         name: str | None = None) -> TaskData:
    """The one way to read task data: train / dev / test examples with the spec they are scored by.

    ``source``: a registered task name (:data:`TASKS`) or a :class:`TaskSpec`, read from the
    ``corpora`` folder (None: ``$BIOTOK_SHARED_DATA/corpora``), derived data rebuilt into ``cache``
    (None: ``$BIOTOK_CACHE`` or ~/.cache/biotok); a BIO file or folder (NER, see
    :func:`biotok_train.tasks.ner.load_path`); or (train, dev, test) files of ``task_type`` in the
    plain formats of :mod:`biotok_train.tasks.plain`, with ``labels`` (default: the train file's)
    and ``name`` (default: the train file's folder name).

    The data's ``sources`` are the files the reading opened (under the corpora folder, the cache
    or the given paths), in order, and ``digests`` the sha256 of the bytes read from each (a file
    written or replaced while it was read: one DataError): what
    :func:`biotok_train.ablate.keys.task_key` hashes, so a key is never of other bytes than those used.
    """
    try:
        return _load(source, corpora, cache, task_type, labels, name)
    except OSError as e:  # an unreadable task file or folder: an input, named as the user gave it
        from biotok.output import os_error_message  # lazy: one use

        root = _cache_or_none(cache)
        if e.filename is not None and root is not None and Path(os.fsdecode(e.filename)).absolute().is_relative_to(
                Path(root).absolute()):
            raise  # writing the cache of rebuilt data: an output's error, said as such

        shown = e.filename if e.filename is not None else source
        raise DataError(f"task {_shown(source)}: {os_error_message(e, shown, action='read')}") from None


def _shown(source) -> str:
    if isinstance(source, TaskSpec):
        return source.name
    if isinstance(source, (tuple, list)):
        return " ".join(str(s) for s in source)
    return str(source)


def _load(source, corpora, cache, task_type, labels, name) -> TaskData:
    """:func:`load` itself (its OSErrors said by it as an input's)."""
    if isinstance(source, (tuple, list)):
        with recording(list(source)) as reads:
            data = _load_files(list(source), task_type, labels, name)
        return dataclasses.replace(data, sources=reads.files, roots=tuple(str(f) for f in source),
                                   digests=reads.digests())
    spec = source if isinstance(source, TaskSpec) else TASKS.get(str(source))
    if spec is not None:
        if task_type is not None and task_type != spec.task_type:
            raise DataError(f"task {spec.name!r} is a {spec.task_type} task, not {task_type}")
        base = corpora_dir(corpora)
        with recording([base, _cache_or_none(cache) if base is not None else None]) as reads:
            data = spec.reader(base, Path(cache) if cache is not None else None)
        return dataclasses.replace(data, spec=spec, sources=reads.files, roots=(str(base),) if base is not None else (),
                                   digests=reads.digests())
    key = str(source)
    given, rest = named.split_name(key)  # NAME=PATH: the user's name for their files
    if given is not None:
        if rest in TASKS:
            raise DataError(f"task {key}: NAME=PATH names a user's files; a registered task keeps its name ({rest})")
        return _load(rest, corpora, cache, task_type, labels, given)
    files = named.parse_files(key)  # TYPE:["train","dev","test"]: what --task-type/--train/--dev/--test give
    if files is not None:
        if task_type not in (None, files[0]):
            raise DataError(f"task {key}: its files are a {files[0]} task, not {task_type}")
        return _load(files[1], corpora, cache, files[0], labels, name)
    if key in UNAVAILABLE or (not os.path.exists(key) and "/" not in key and "." not in key):
        get_task(key)  # an unknown or unavailable task name: one clear error
    if task_type not in (None, "ner"):
        raise DataError(f"{key}: one file or folder is read as BIO (ner); give train, dev and test files for "
                        f"a {task_type} task")
    with recording([key]) as reads:
        data = ner.load_path(key)
    return dataclasses.replace(data, sources=reads.files, roots=(key,), digests=reads.digests(),
                               **({"name": name} if name else {}))


def _cache_or_none(cache: PathLike | None) -> Path | None:
    """The cache of rebuilt data, a root of what a reader reads (None where it cannot be: the reader says why)."""
    try:
        return cache_root(cache)
    except (DataError, OSError, ValueError, Exception):  # noqa: BLE001  (a bad cache is the reader's error to give)
        return None


def _load_files(files: list[PathLike], task_type: str | None, labels: Sequence[str] | None,
                name: str | None) -> TaskData:
    """A user's train / dev / test files of ``task_type`` (:func:`biotok_train.tasks.plain.load_plain`)."""
    if len(files) != 3:
        raise DataError(f"expected train, dev and test files, got {len(files)} file(s)")
    if task_type is None:
        raise DataError("train / dev / test files need a task type (one of " + ", ".join(TASK_TYPES) + ")")
    if name is None:
        name = Path(os.path.realpath(files[0])).parent.name or task_type
    data = load_plain(task_type, *files, labels=labels, name=name)
    return dataclasses.replace(data, spec=plain_spec(data))


def suite_tasks(suite: str) -> list[TaskSpec]:
    """The tasks of a suite (``blurb`` or ``fr``), in registry order."""
    if suite not in SUITES:
        raise DataError(f"unknown suite {suite!r} (one of {', '.join(SUITES)})")
    return [t for t in TASKS.values() if t.suite == suite]


__all__ = [
    "DEFAULT_METRICS", "FAMILIES", "SUITES", "TASKS", "TYPE_FAMILIES", "TaskSpec", "UNAVAILABLE", "get_task",
    "load", "plain_spec", "register", "suite_tasks", "targets", "task_type",
]
