"""MORFITT (DrBenchmark): French PubMed abstracts, multi-label classification into 12 medical
specialties. TSV with header ``identifier abstract specialities``; specialities ``|``-separated.

The MORFITT paper scores it with the weighted-average F1 over the 12 specialties
(:func:`biotok_train.scores.weighted_f1_multilabel`). No torch, no transformers.
"""

from __future__ import annotations

import os
from typing import Iterator

from biotok.errors import CorpusError
from biotok_train.tasks.common import corpus_file, read_tsv
from biotok_train.tasks.examples import MultiLabelExample, TaskData

PathLike = str | os.PathLike[str]

LABELS = (
    "veterinary", "etiology", "psychology", "surgery", "genetics", "physiology",
    "pharmacology", "microbiology", "immunology", "chemistry", "virology", "parasitology",
)
"""The 12 specialties, most frequent first (README table order)."""


def read_morfitt(path: PathLike) -> Iterator[MultiLabelExample]:
    """Stream MORFITT abstracts; every specialty must be one of :data:`LABELS`, at least one."""
    for line, row in read_tsv(path, ("identifier", "abstract", "specialities"), header=True):
        where = f"{path}:{line}"
        labels = tuple(x.strip() for x in row["specialities"].split("|") if x.strip())
        if not labels:
            raise CorpusError(f"{where}: no speciality")
        for lab in labels:
            if lab not in LABELS:
                raise CorpusError(f"{where}: speciality {lab!r} not in the label set ({', '.join(LABELS)})")
        text = row["abstract"].strip()
        if not text:
            raise CorpusError(f"{where}: empty abstract")
        yield MultiLabelExample(row["identifier"], text, labels, where)


def load_morfitt(corpora: PathLike | None) -> TaskData:
    """MORFITT train / dev / test (1,514 / 1,022 / 1,088 abstracts)."""
    tr, dv, te = (
        tuple(read_morfitt(corpus_file(corpora, f"morfitt-fr/{s}.tsv.gz", "morfitt")))
        for s in ("train", "dev", "test")
    )
    return TaskData("morfitt", "multilabel", LABELS, tr, dv, te)


__all__ = ["LABELS", "load_morfitt", "read_morfitt"]
