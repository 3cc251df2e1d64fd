"""BLURB task sets as the PubMedBERT paper ships them (``corpora/blurb-en``), and BLURB's NER sets
from the MTL-Bioinformatics-2016 copies (``bionlp-ner-en``, ``ncbi-disease``).

Readers stream and validate: a row with the wrong number of columns, a label outside the set or
a relation sentence without both entity masks raises a :class:`~biotok.errors.CorpusError`
naming the file and line. TSVs are read with quoting off (see :mod:`.common`).

Not staged, so not here: EBM PICO (only dev/test exist in the source snapshot) and BioASQ
(its data need registration). ChemProt train/test and DDI train are rebuilt from the original
corpora by :mod:`.chemprot` and :mod:`.ddi`. No torch, no transformers.
"""

from __future__ import annotations

import math
import os
import re
from typing import Iterable, Iterator, Sequence

from biotok.errors import CorpusError
from biotok.datasets.bio import Sentence, read_bio
from biotok.datasets.named import BLURB_NER
from biotok.io import open_text
from biotok_train.tasks.common import corpus_file, read_tsv
from biotok_train.tasks.examples import (
    MASK, MultiLabelExample, PairExample, RelationExample, TaskData, ner_data,
)

PathLike = str | os.PathLike[str]

HOC_LABELS = (
    "activating invasion and metastasis",
    "avoiding immune destruction",
    "cellular energetics",
    "enabling replicative immortality",
    "evading growth suppressors",
    "genomic instability and mutation",
    "inducing angiogenesis",
    "resisting cell death",
    "sustaining proliferative signaling",
    "tumor promoting inflammation",
)
"""HoC label ids 0..9 in BLURB's preprocessor order (MANIFEST section 4)."""

GAD_LABELS = ("0", "1")
DDI_LABELS = ("DDI-false", "DDI-mechanism", "DDI-effect", "DDI-advise", "DDI-int")
CHEMPROT_LABELS = ("false", "CPR:3", "CPR:4", "CPR:5", "CPR:6", "CPR:9")
JNLPBA_TYPE = "entity"
"""BLURB strips JNLPBA's five types; its B/I tags are read as B-entity / I-entity."""

_HOC_INDEX = re.compile(r"^(\d+)_s(\d+)$")
_HOC_CELL = re.compile(r"^(\d)_([01])$")


def check_masks(text: str, where: str) -> None:
    """A relation sentence must hold both entity masks (or one combined mask when the two
    entities overlap, as BLURB writes ``@CHEM-GENE$``)."""
    masks = MASK.findall(text)
    if len(masks) == 2 or (len(masks) == 1 and "-" in masks[0]):
        return
    raise CorpusError(f"{where}: a relation sentence needs both entity masks (e.g. @GENE$ ... @DISEASE$), found {len(masks)}")


def read_biosses(path: PathLike) -> Iterator[PairExample]:
    """BIOSSES pairs: header ``pair_id sent1 sent2 score``; score a float from 0 to 4."""
    for line, row in read_tsv(path, ("pair_id", "sent1", "sent2", "score"), header=True):
        where = f"{path}:{line}"
        try:
            score = float(row["score"])
        except ValueError:
            raise CorpusError(f"{where}: score {row['score']!r} is not a number") from None
        if not (0.0 <= score <= 4.0) or math.isnan(score):
            raise CorpusError(f"{where}: score {score} outside 0..4")
        if not row["sent1"].strip() or not row["sent2"].strip():
            raise CorpusError(f"{where}: empty sentence")
        yield PairExample(row["pair_id"], row["sent1"], row["sent2"], score, where)


def read_gad(path: PathLike) -> Iterator[RelationExample]:
    """GAD rows: header ``index sentence label``; label 0/1; @GENE$ and @DISEASE$ masked."""
    for line, row in read_tsv(path, ("index", "sentence", "label"), header=True):
        where = f"{path}:{line}"
        if row["label"] not in GAD_LABELS:
            raise CorpusError(f"{where}: label {row['label']!r} not in the label set (0, 1)")
        check_masks(row["sentence"], where)
        yield RelationExample(row["index"], row["sentence"], row["label"], where)


def read_relation_tsv(path: PathLike, labels: Sequence[str]) -> Iterator[RelationExample]:
    """A BLURB relation TSV without header (ChemProt, DDI): ``id sentence label``."""
    for line, row in read_tsv(path, ("id", "sentence", "label"), header=False):
        where = f"{path}:{line}"
        if row["label"] not in labels:
            raise CorpusError(f"{where}: label {row['label']!r} not in the label set ({', '.join(labels)})")
        check_masks(row["sentence"], where)
        yield RelationExample(row["id"], row["sentence"], row["label"], where)


def read_hoc(path: PathLike) -> Iterator[MultiLabelExample]:
    """HoC sentence rows: header ``labels sentence index``; labels ``0_v,...,9_v``; index
    ``<PMID>_s<n>``. The PMID becomes ``group`` so scores can be computed per abstract."""
    for line, row in read_tsv(path, ("labels", "sentence", "index"), header=True):
        where = f"{path}:{line}"
        m = _HOC_INDEX.match(row["index"])
        if not m:
            raise CorpusError(f"{where}: index {row['index']!r} is not <PMID>_s<n>")
        cells = row["labels"].split(",")
        parsed = [_HOC_CELL.match(c) for c in cells]
        if len(cells) != len(HOC_LABELS) or not all(parsed) or [int(p.group(1)) for p in parsed] != list(range(10)):  # type: ignore[union-attr]
            raise CorpusError(f"{where}: labels {row['labels'][:60]!r} are not 0_v,1_v,...,9_v with v 0 or 1")
        on = tuple(HOC_LABELS[i] for i, p in enumerate(parsed) if p.group(2) == "1")  # type: ignore[union-attr]
        yield MultiLabelExample(row["index"], row["sentence"], on, where, group=m.group(1))


def read_jnlpba(path: PathLike) -> Iterator[Sentence]:
    """BLURB's JNLPBA: ``token TAB tag`` with untyped B/I/O, ``-DOCSTART- id`` lines, blank lines
    between sentences. Tags become B-entity / I-entity (strict IOB2 is checked)."""
    name = str(path)
    words: list[str] = []
    tags: list[str] = []
    first = 0
    with open_text(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\r\n")
            if not line.strip() or line.startswith("-DOCSTART-"):
                if words:
                    yield Sentence(tuple(words), tuple(tags), f"{name}:{first}")
                    words, tags = [], []
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0]:
                raise CorpusError(f"{name}:{lineno}: expected 'token<TAB>tag', got {line[:60]!r}")
            tag = parts[1].strip()
            if tag not in ("B", "I", "O"):
                raise CorpusError(f"{name}:{lineno}: tag {tag!r} is not B, I or O")
            if tag == "I" and (not tags or tags[-1] == "O"):
                raise CorpusError(f"{name}:{lineno}: I follows {'O' if tags else 'sentence start'} (IOB2)")
            if not words:
                first = lineno
            words.append(parts[0])
            tags.append("O" if tag == "O" else f"{tag}-{JNLPBA_TYPE}")
    if words:
        yield Sentence(tuple(words), tuple(tags), f"{name}:{first}")


def keep_types(sentences: Iterable[Sentence], types: set[str]) -> list[Sentence]:
    """Sentences with every entity not of ``types`` turned into O (BC5-chem / BC5-disease from
    the joint BC5CDR file)."""
    out = []
    for s in sentences:
        tags = tuple(t if t == "O" or t[2:] in types else "O" for t in s.tags)
        out.append(Sentence(s.words, tags, s.source))
    return out


def drop_repeated_blocks(sentences: Sequence[Sentence], min_len: int = 2) -> list[Sentence]:
    """Remove any run of ``min_len``+ sentences that repeats the run just before it.

    NCBI-disease's CoNLL train file holds abstract 8528200 twice in a row; BLURB's copy holds it
    once (5,134 mentions, not 5,145).
    """
    keys = [(s.words, s.tags) for s in sentences]
    kept: list[int] = []  # indices into sentences
    where: dict[tuple, list[int]] = {}  # key -> positions in kept
    i, n = 0, len(sentences)
    while i < n:
        k_found = 0
        for j in reversed(where.get(keys[i], [])):
            k = len(kept) - j  # the block kept[j:] would repeat at sentences[i:i+k]
            if k >= min_len and i + k <= n and all(keys[kept[j + t]] == keys[i + t] for t in range(k)):
                k_found = k
                break
        if k_found:
            i += k_found
            continue
        where.setdefault(keys[i], []).append(len(kept))
        kept.append(i)
        i += 1
    return [sentences[i] for i in kept]


# --- task loaders: corpora folder -> TaskData -------------------------------------------------

def load_bc5(corpora: PathLike | None, entity: str) -> TaskData:
    """BC5-chem (``entity='Chemical'``) or BC5-disease (``'Disease'``) from the joint BC5CDR file."""
    name = {"Chemical": "bc5-chem", "Disease": "bc5-disease"}[entity]
    files = [corpus_file(corpora, f, name) for f in BLURB_NER["bc5cdr"]]
    return ner_data(name, *(keep_types(read_bio(f, sep="\t"), {entity}) for f in files))


def load_ncbi_blurb(corpora: PathLike | None) -> TaskData:
    """NCBI-disease as BLURB counts it (the duplicated train abstract kept once)."""
    files = [corpus_file(corpora, f, "ncbi-disease") for f in BLURB_NER["ncbi"]]
    train, dev, test = (list(read_bio(f, sep="\t")) for f in files)
    return ner_data("ncbi-disease", drop_repeated_blocks(train), dev, test)


def load_bc2gm(corpora: PathLike | None) -> TaskData:
    files = [corpus_file(corpora, f, "bc2gm") for f in BLURB_NER["bc2gm"]]
    return ner_data("bc2gm", *(read_bio(f, sep="\t") for f in files))


def load_jnlpba(corpora: PathLike | None) -> TaskData:
    files = [corpus_file(corpora, f"blurb-en/JNLPBA/{s}.tsv.gz", "jnlpba") for s in ("train", "dev", "test")]
    return ner_data("jnlpba", *(read_jnlpba(f) for f in files))


def _splits(corpora: PathLike | None, folder: str, task: str) -> list:
    return [corpus_file(corpora, f"blurb-en/{folder}/{s}.tsv.gz", task) for s in ("train", "dev", "test")]


def load_biosses(corpora: PathLike | None) -> TaskData:
    tr, dv, te = (tuple(read_biosses(f)) for f in _splits(corpora, "BIOSSES", "biosses"))
    return TaskData("biosses", "pair-regression", (), tr, dv, te)


def load_gad(corpora: PathLike | None) -> TaskData:
    tr, dv, te = (tuple(read_gad(f)) for f in _splits(corpora, "GAD", "gad"))
    return TaskData("gad", "relation", GAD_LABELS, tr, dv, te)


def load_hoc(corpora: PathLike | None) -> TaskData:
    tr, dv, te = (tuple(read_hoc(f)) for f in _splits(corpora, "HoC", "hoc"))
    return TaskData("hoc", "multilabel", HOC_LABELS, tr, dv, te)


__all__ = [
    "CHEMPROT_LABELS", "DDI_LABELS", "GAD_LABELS", "HOC_LABELS", "JNLPBA_TYPE", "check_masks",
    "drop_repeated_blocks", "keep_types", "load_bc2gm", "load_bc5", "load_biosses", "load_gad",
    "load_hoc", "load_jnlpba", "load_ncbi_blurb", "read_biosses", "read_gad", "read_hoc",
    "read_jnlpba", "read_relation_tsv",
]
