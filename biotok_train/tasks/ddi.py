"""DDI-2013 as BLURB uses it, rebuilt from the official XML corpus and BLURB's split lists.

BLURB's staging lacks DDI train, so every split is rebuilt here from
``ddi-corpus-2013/DDICorpus-2013.zip`` with the file lists of ``blurb-en/indexing.tar.xz``
(``indexing/DDI/{train,dev,test}_files.tsv``; ``train_dataset/`` maps to ``DDICorpus/Train/``,
``test_dataset/`` to ``DDICorpus/Test/Test for DDI Extraction task/``), and cached (derived
data, never committed). Preprocessing, after the approach BLURB's data_generation describes:

- every ``<pair>`` of every sentence that has pairs is one example, id = the pair id;
- the label is ``DDI-false`` for ``ddi="false"``, else ``DDI-<type>``; the corpus has one pair
  (DDI-DrugBank.d236.s29.p0) with ``ddi="true"`` and no type: it is labelled ``DDI-int``, the
  label other DDI-2013 loaders give it (BLURB's own copy must have had a type there: its
  script reads the type of every true pair);
- both drugs become ``@DRUG$`` (one ``@DRUG-DRUG$`` when they overlap); an entity with several
  fragments spans from its first offset to its last; tabs and newlines become spaces.

Counts equal BLURB's 25,296 / 2,496 / 5,716. The rebuilt test equals the staged
``blurb-en/DDI/test.tsv`` row for row; the rebuilt dev equals the staged dev in ids and labels
and in the sentences of all but 21 rows: the pairs of MedLine documents d68 and d134, whose
titles BLURB's copy of the corpus ends with ``];`` and whose offsets it shifts (BLURB's rows
mask ``c@DRUG$in``), while the official release reads ``] ``. No torch, no transformers.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

from biotok.errors import CorpusError
from biotok_train.tasks.blurb import DDI_LABELS
from biotok_train.tasks.chemprot import read_split, write_split
from biotok_train.tasks.common import cached_build, corpus_file
from biotok_train.tasks.examples import RelationExample, TaskData

PathLike = str | os.PathLike[str]

ARCHIVE = "ddi-corpus-2013/DDICorpus-2013.zip"
INDEXING = "blurb-en/indexing.tar.xz"
VERSION = "ddi-rebuild-1"
UNTYPED_TRUE = "int"
_PREFIXES = {"train_dataset/": "DDICorpus/Train/", "test_dataset/": "DDICorpus/Test/Test for DDI Extraction task/"}


def split_files(indexing: PathLike, split: str) -> list[str]:
    """The corpus members of one BLURB split, in BLURB's order."""
    name = f"indexing/DDI/{split}_files.tsv"
    try:
        with tarfile.open(indexing, "r:xz") as tar:
            f = tar.extractfile(name)
            if f is None:
                raise KeyError(name)
            lines = io.TextIOWrapper(f, encoding="utf-8").read().splitlines()
    except KeyError:
        raise CorpusError(f"{indexing}: member {name} missing") from None
    except (OSError, tarfile.TarError) as e:
        raise CorpusError(f"{indexing}: cannot read the archive ({e})") from None
    out = []
    for i, line in enumerate(lines, 1):
        p = line.strip()
        if not p:
            continue
        for old, new in _PREFIXES.items():
            if p.startswith(old):
                out.append(new + p[len(old):])
                break
        else:
            raise CorpusError(f"{indexing}:{name}:{i}: path {p!r} starts with neither train_dataset/ nor test_dataset/")
    return out


def _span(offsets: str, where: str) -> tuple[int, int]:
    nums = re.findall(r"\d+", offsets or "")
    if not nums:
        raise CorpusError(f"{where}: charOffset {offsets!r} has no offsets")
    return int(nums[0]), int(nums[-1]) + 1


def _clean(s: str) -> str:
    return s.replace("\n", " ").replace("\t", " ").replace("\r", " ")


def build_examples(archive: PathLike, indexing: PathLike, split: str) -> list[RelationExample]:
    """The BLURB examples of one split, in BLURB's order (file, sentence, pair)."""
    out: list[RelationExample] = []
    try:
        zf = zipfile.ZipFile(archive)
    except (OSError, zipfile.BadZipFile) as e:
        raise CorpusError(f"{archive}: cannot read the zip ({e})") from None
    with zf:
        for member in split_files(indexing, split):
            where = f"{archive}:{member}"
            try:
                root = ET.fromstring(zf.read(member))
            except KeyError:
                raise CorpusError(f"{archive}: {member} (listed in {indexing}) is missing") from None
            except ET.ParseError as e:
                raise CorpusError(f"{where}:{e.position[0]}: invalid XML ({e})") from None
            for sent in root.iter("sentence"):
                pairs = sent.findall("pair")
                if not pairs:
                    continue
                text = sent.get("text", "")
                ents = {e.get("id"): e for e in sent.findall("entity")}
                for pair in pairs:
                    pid = pair.get("id", "")
                    ddi = pair.get("ddi")
                    if ddi == "false":
                        label = "DDI-false"
                    elif ddi == "true":
                        label = f"DDI-{pair.get('type') or UNTYPED_TRUE}"
                    else:
                        raise CorpusError(f"{where}#{pid}: ddi={ddi!r} is neither true nor false")
                    if label not in DDI_LABELS:
                        raise CorpusError(f"{where}#{pid}: label {label!r} not in the label set ({', '.join(DDI_LABELS)})")
                    try:
                        e1, e2 = ents[pair.get("e1")], ents[pair.get("e2")]
                    except KeyError:
                        raise CorpusError(f"{where}#{pid}: the pair names an entity the sentence lacks") from None
                    a, b = _span(e1.get("charOffset", ""), where), _span(e2.get("charOffset", ""), where)
                    if a[0] > b[0]:
                        a, b = b, a
                    if a[1] > b[0]:
                        masked = f"{text[:min(a[0], b[0])]}@DRUG-DRUG${text[max(a[1], b[1]):]}"
                    else:
                        masked = f"{text[:a[0]]}@DRUG${text[a[1]:b[0]]}@DRUG${text[b[1]:]}"
                    out.append(RelationExample(
                        pid, _clean(masked), label, f"{where}#{pid}", _clean(text),
                        ((a[0], a[1], "DRUG"), (b[0], b[1], "DRUG")),
                    ))
    return out


def rebuild(corpora: PathLike | None = None, cache: PathLike | None = None) -> Path:
    """The cache folder holding train/dev/test.tsv in BLURB's format, built on first use."""
    archive = corpus_file(corpora, ARCHIVE, "ddi")
    indexing = corpus_file(corpora, INDEXING, "ddi")

    def build(tmp: Path) -> None:
        for split in ("train", "dev", "test"):
            write_split(build_examples(archive, indexing, split), tmp, split)

    return cached_build("blurb-ddi", [archive, indexing], VERSION, build, cache)


def load_ddi(corpora: PathLike | None = None, cache: PathLike | None = None) -> TaskData:
    """BLURB's DDI (25,296 / 2,496 / 5,716), rebuilt and cached."""
    folder = rebuild(corpora, cache)
    tr, dv, te = (read_split(folder, s, DDI_LABELS) for s in ("train", "dev", "test"))
    return TaskData("ddi", "relation", DDI_LABELS, tr, dv, te)


__all__ = ["ARCHIVE", "INDEXING", "build_examples", "load_ddi", "rebuild", "split_files"]
