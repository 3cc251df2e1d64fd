"""The named NER corpora under the shared corpora folder: where each file lies (each path written
once, here) and how its train / dev / test splits are read.

biotok's entity evidence reads all the splits of a named corpus; biotok_train's NER tasks read
them as its task data. Held-out splits are chosen by a hash of each
sentence, so they depend on no random state and on no file path. No torch, no transformers.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from biotok.datasets.bio import Sentence, read_bio
from biotok.datasets.brat import brat_to_sentences, read_brat
from biotok.errors import CorpusError

# paths relative to the corpora folder ($BIOTOK_SHARED_DATA/corpora or --data-dir)
QUAERO_TAR = "quaero-frenchmed/QUAERO_FrenchMed_CLEF2017_brat.tar.xz"
MANTRA_TAR = "mantra-gsc/Mantra-GSC_brat_French_English.tar.xz"
E3C_TRAIN = "e3c-fr/layer1_clinical_entities_iob_train.txt.gz"
E3C_TEST = "e3c-fr/layer1_clinical_entities_iob_test.txt.gz"
#: tab-separated BIO files (train, dev, test) of the English BLURB NER corpora
BLURB_NER = {
    "ncbi": ("ncbi-disease/train.tsv.gz", "ncbi-disease/devel.tsv.gz", "ncbi-disease/test.tsv.gz"),
    "bc5cdr": tuple(f"bionlp-ner-en/BC5CDR-IOB_{s}.tsv.gz" for s in ("train", "devel", "test")),
    "bc2gm": tuple(f"bionlp-ner-en/BC2GM-IOB_{s}.tsv.gz" for s in ("train", "devel", "test")),
}
#: the BRAT archive and the member prefixes of each corpus read from BRAT (its original text kept)
BRAT_NAMED = {
    "quaero": (QUAERO_TAR, ("corpus/train/", "corpus/dev/", "corpus/test/")),
    "quaero-medline": (QUAERO_TAR, tuple(f"corpus/{s}/MEDLINE/" for s in ("train", "dev", "test"))),
    "quaero-emea": (QUAERO_TAR, tuple(f"corpus/{s}/EMEA/" for s in ("train", "dev", "test"))),
    "mantra-fr": (MANTRA_TAR, ("Mantra-GSC/French/",)),
}
DATASETS = ("quaero", "quaero-medline", "quaero-emea", "mantra-fr", "e3c", "ncbi", "bc5cdr", "bc2gm")


def holdout(sentences: list[Sentence], fraction: float, key: str) -> tuple[list[Sentence], list[Sentence]]:
    """Split deterministically by a hash of each sentence's words and tags: not by the random
    state, nor by its file path, so the same file gives the same split wherever it lies."""
    keep, held = [], []
    for s in sentences:
        text = f"{key}:{' '.join(s.words)}\t{' '.join(s.tags)}"
        h = int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
        (held if h < fraction else keep).append(s)
    return keep, held


def brat_sentences(tar: Path, prefixes: Sequence[str], max_words: int) -> list[Sentence]:
    """The IOB2 sentences of the BRAT documents under ``prefixes`` of an archive."""
    out: list[Sentence] = []
    for doc in read_brat(tar, tuple(prefixes), label_from="auto"):
        out.extend(brat_to_sentences(doc, max_words))
    return out


Splits = tuple[list[Sentence], list[Sentence], list[Sentence]]


def named_splits(name: str, base: Path, max_words: int = 128) -> Splits:
    """(train, dev, test) sentences of the named NER corpus ``name`` (one of :data:`DATASETS`)
    under the corpora folder ``base``; BRAT documents are cut into sentences of <= ``max_words``.

    Corpora without a dev split (E3C) hold out 10% of train; MANTRA (one split) holds out 20% for
    test and 10% for dev; both chosen by hash of the sentence (:func:`holdout`).
    """
    def need(rel: str) -> Path:
        f = base / rel
        if not f.is_file():
            raise CorpusError(f"dataset {name!r}: {f} not found (check --data-dir)")
        return f

    if name.startswith("quaero"):
        tar = need(QUAERO_TAR)
        parts = {"quaero": ["MEDLINE", "EMEA"], "quaero-medline": ["MEDLINE"], "quaero-emea": ["EMEA"]}[name]
        train, dev, test = (brat_sentences(tar, [f"corpus/{sp}/{part}/" for part in parts], max_words)
                            for sp in ("train", "dev", "test"))
        return train, dev, test
    if name == "mantra-fr":
        sents = brat_sentences(need(MANTRA_TAR), ["Mantra-GSC/French/"], max_words)
        rest, test = holdout(sents, 0.2, "test")
        train, dev = holdout(rest, 0.125, "dev")
        return train, dev, test
    if name == "e3c":
        train = list(read_bio(need(E3C_TRAIN)))
        train, dev = holdout(train, 0.1, "dev")
        return train, dev, list(read_bio(need(E3C_TEST)))
    if name not in BLURB_NER:
        raise CorpusError(f"unknown NER dataset {name!r} (one of {', '.join(DATASETS)})")
    train, dev, test = (list(read_bio(need(f), sep="\t")) for f in BLURB_NER[name])
    return train, dev, test


__all__ = [
    "BLURB_NER", "BRAT_NAMED", "DATASETS", "E3C_TEST", "E3C_TRAIN", "MANTRA_TAR", "QUAERO_TAR", "brat_sentences",
    "holdout", "named_splits",
]
