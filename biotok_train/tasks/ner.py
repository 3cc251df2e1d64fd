"""The named NER corpora (QUAERO outermost, Mantra GSC, E3C, NCBI, BC5CDR, BC2GM: their files
and splits are in :mod:`biotok.datasets.named`) and a user's BIO file or folder, as
:class:`~biotok_train.tasks.examples.TaskData`.

They are registered as named tasks in :mod:`biotok_train.tasks.registry`; read them with
:func:`biotok_train.tasks.load`. Held-out splits are chosen by hash of each sentence, so they do
not depend on any random state. This module imports neither torch nor transformers.
"""

from __future__ import annotations

import os
from pathlib import Path
from biotok.datadir import corpora_dir
from biotok.datasets.bio import read_bio
from biotok.datasets.named import DATASETS as NAMES
from biotok.datasets.named import holdout, named_splits
from biotok.errors import CorpusError
from biotok_train.tasks.examples import TaskData, ner_data

PathLike = str | os.PathLike[str]


def load_path(path: PathLike) -> TaskData:
    """A user's BIO data: a folder holding BIO files named train*, dev*|devel*|valid* (optional)
    and test*, or one BIO file (then 10% of it, chosen by hash, becomes dev and another 10% test).
    Without a dev file, 10% of train, chosen by hash of the sentence, is held out as dev."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file())

        def pick(*stems: str) -> Path | None:
            return next((f for f in files if f.name.lower().startswith(stems)), None)

        tr, dv, te = pick("train"), pick("dev", "valid"), pick("test")
        if tr is None or te is None:
            raise CorpusError(f"{p}: expected train* and test* BIO files (and optionally dev*/valid*)")
        train = list(read_bio(tr))
        dev = list(read_bio(dv)) if dv else None
        if dev is None:
            train, dev = holdout(train, 0.1, "dev")
        return ner_data(p.name, train, dev, list(read_bio(te)))
    if p.is_file():
        rest, test = holdout(list(read_bio(p)), 0.1, "test")
        train, dev = holdout(rest, 0.1 / 0.9, "dev")
        return ner_data(p.stem, train, dev, test)
    raise CorpusError(f"unknown dataset {str(path)!r}: not a file or folder, nor a task name "
                      "(biotok-train finetune --list)")


def load_named(name: str, data_dir: PathLike | None = None, max_words: int = 128) -> TaskData:
    """A named NER corpus (:data:`NAMES`) under the corpora folder ``data_dir`` (default
    ``$BIOTOK_SHARED_DATA/corpora``); BRAT documents cut into sentences of <= ``max_words``."""
    if name not in NAMES:
        raise CorpusError(f"unknown NER dataset {name!r} (one of {', '.join(NAMES)})")
    base = corpora_dir(data_dir)
    if base is None or not base.is_dir():
        raise CorpusError(
            f"dataset {name!r} needs --data-dir or BIOTOK_SHARED_DATA (the shared data folder holding corpora/)"
        )
    return ner_data(name, *named_splits(name, base, max_words))


__all__ = ["NAMES", "load_named", "load_path"]
