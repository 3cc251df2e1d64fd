"""The NER and FrenchMedMCQA readers behind the named tasks, and BIO paths as NER datasets.

The registry of named tasks is :data:`biotok_train.datasets.tasks.TASKS` (one
:class:`~biotok_train.datasets.tasks.TaskSpec` per name: task type, benchmark metric, reader);
:func:`biotok_train.datasets.tasks.load` reads any of them, or a BIO path through
:func:`load_dataset` here. Held-out splits are chosen by hash of each example's source, so
they do not depend on any random state. This module imports neither torch nor transformers.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from biotok.datadir import corpora_dir
from biotok.errors import CorpusError
from biotok_train.datasets.bio import NerDataset, Sentence, read_bio
from biotok_train.datasets.brat import brat_to_sentences, read_brat
from biotok_train.datasets.mcqa import ClsDataset, read_frenchmedmcqa

QUAERO_TAR = "quaero-frenchmed/QUAERO_FrenchMed_CLEF2017_brat.tar.xz"
MANTRA_TAR = "mantra-gsc/Mantra-GSC_brat_French_English.tar.xz"
DATASETS = ("quaero", "quaero-medline", "quaero-emea", "mantra-fr", "e3c", "ncbi", "bc5cdr", "bc2gm")


def _base(name: str, data_dir: str | os.PathLike[str] | None) -> Path:
    """The corpora folder for a named dataset: ``data_dir``, else $BIOTOK_SHARED_DATA/corpora."""
    base = corpora_dir(data_dir)
    if base is None or not base.is_dir():
        raise CorpusError(
            f"dataset {name!r} needs --data-dir or BIOTOK_SHARED_DATA (the shared data folder holding corpora/)"
        )
    return base


def _holdout(sentences: list[Sentence], fraction: float, key: str) -> tuple[list[Sentence], list[Sentence]]:
    """Split deterministically by a hash of each sentence's words and tags: not by the random
    state, nor by its file path, so the same file gives the same split wherever it lies."""
    keep, held = [], []
    for s in sentences:
        text = f"{key}:{' '.join(s.words)}\t{' '.join(s.tags)}"
        h = int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
        (held if h < fraction else keep).append(s)
    return keep, held


def _brat_split(tar: Path, prefixes: list[str], max_words: int) -> list[Sentence]:
    out: list[Sentence] = []
    for doc in read_brat(tar, tuple(prefixes), label_from="auto"):
        out.extend(brat_to_sentences(doc, max_words))
    return out


def load_dataset(name_or_path: str, data_dir: str | os.PathLike[str] | None = None, max_words: int = 128) -> NerDataset:
    """A named dataset (see :data:`DATASETS`, resolved under ``data_dir``) or a path.

    A path is a folder holding BIO files named train*/dev*|devel*|valid*/test*, or one BIO file
    (then 10% of it, chosen by hash, becomes dev and another 10% test).
    Datasets without a dev split (E3C) hold out 10% of train, chosen by hash of the sentence.
    """
    if name_or_path in DATASETS:
        return _named(name_or_path, _base(name_or_path, data_dir), max_words)
    p = Path(name_or_path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file())

        def pick(*stems: str) -> Path | None:
            for f in files:
                if f.name.lower().startswith(stems):
                    return f
            return None

        tr, dv, te = pick("train"), pick("dev", "valid"), pick("test")
        if tr is None or te is None:
            raise CorpusError(f"{p}: expected train* and test* BIO files (and optionally dev*/valid*)")
        train = list(read_bio(tr))
        dev = list(read_bio(dv)) if dv else None
        if dev is None:
            train, dev = _holdout(train, 0.1, "dev")
        return NerDataset(p.name, tuple(train), tuple(dev), tuple(read_bio(te)))
    if p.is_file():
        rest, test = _holdout(list(read_bio(p)), 0.1, "test")
        train, dev = _holdout(rest, 0.1 / 0.9, "dev")
        return NerDataset(p.stem, tuple(train), tuple(dev), tuple(test))
    raise CorpusError(f"unknown dataset {name_or_path!r}: not a file or folder, nor one of {', '.join(DATASETS)}")


def _named(name: str, base: Path, max_words: int) -> NerDataset:
    def need(rel: str) -> Path:
        f = base / rel
        if not f.is_file():
            raise CorpusError(f"dataset {name!r}: {f} not found (check --data-dir)")
        return f

    if name.startswith("quaero"):
        tar = need(QUAERO_TAR)
        parts = {"quaero": ["MEDLINE", "EMEA"], "quaero-medline": ["MEDLINE"], "quaero-emea": ["EMEA"]}[name]
        splits = [_brat_split(tar, [f"corpus/{sp}/{part}/" for part in parts], max_words)
                  for sp in ("train", "dev", "test")]
        return NerDataset(name, *(tuple(s) for s in splits))
    if name == "mantra-fr":
        sents = _brat_split(need(MANTRA_TAR), ["Mantra-GSC/French/"], max_words)
        rest, test = _holdout(sents, 0.2, "test")
        train, dev = _holdout(rest, 0.125, "dev")
        return NerDataset(name, tuple(train), tuple(dev), tuple(test))
    if name == "e3c":
        train = list(read_bio(need("e3c-fr/layer1_clinical_entities_iob_train.txt.gz")))
        train, dev = _holdout(train, 0.1, "dev")
        test = list(read_bio(need("e3c-fr/layer1_clinical_entities_iob_test.txt.gz")))
        return NerDataset(name, tuple(train), tuple(dev), tuple(test))
    files = {
        "ncbi": ("ncbi-disease/train.tsv.gz", "ncbi-disease/devel.tsv.gz", "ncbi-disease/test.tsv.gz"),
        "bc5cdr": tuple(f"bionlp-ner-en/BC5CDR-IOB_{s}.tsv.gz" for s in ("train", "devel", "test")),
        "bc2gm": tuple(f"bionlp-ner-en/BC2GM-IOB_{s}.tsv.gz" for s in ("train", "devel", "test")),
    }[name]
    tr, dv, te = (tuple(read_bio(need(f), sep="\t")) for f in files)
    return NerDataset(name, tr, dv, te)


CLS_DATASETS = ("frenchmedmcqa-nbr",)


def load_cls_dataset(name: str, data_dir: str | os.PathLike[str] | None = None) -> ClsDataset:
    """A named classification dataset (see :data:`CLS_DATASETS`) under ``data_dir``."""
    if name not in CLS_DATASETS:
        raise CorpusError(f"unknown classification dataset {name!r} (one of {', '.join(CLS_DATASETS)})")
    base = _base(name, data_dir)
    if not (base / "frenchmedmcqa").is_dir():
        raise CorpusError(f"dataset {name!r}: frenchmedmcqa/ not found in {base} (check --data-dir)")
    splits = [tuple(read_frenchmedmcqa(base / "frenchmedmcqa" / f"{s}.json.gz")) for s in ("train", "dev", "test")]
    return ClsDataset(name, *splits)
