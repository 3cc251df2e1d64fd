"""BRAT standoff corpora (.txt + .ann, in a folder or a tar archive) turned into IOB2 sentences.

Every reader streams and validates: entity offsets that do not match the text raise a
:class:`~biotok.errors.CorpusError` naming the file (or archive member) and the line.

Documents become word-level IOB2 sentences by :func:`brat_to_sentences`; the flattening
policy for nested and discontinuous entities is documented in docs/evaluation.md:
a discontinuous entity keeps its first fragment; of overlapping entities the outermost
(earliest start, then longest, then first in the file) is kept, the others are dropped.

This module imports neither torch nor transformers.
"""

from __future__ import annotations

import lzma
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from biotok.errors import CorpusError
from biotok.datasets.bio import Sentence

_T_LINE = re.compile(r"^(T\d+)\t(\S+) (\d+ \d+(?:;\d+ \d+)*)\t(.*)$")
_WORD = re.compile(r"\w+|[^\w\s]")
_CUI_TYPE = re.compile(r"^C\d{7}$")
_GROUP = re.compile(r"^[A-Z]{4}(\|[A-Z]{4})*$")


@dataclass(frozen=True)
class Entity:
    """A BRAT text-bound annotation: id, label and character fragments [(start, end), ...]."""

    id: str
    label: str
    fragments: tuple[tuple[int, int], ...]
    text: str
    line: int

    @property
    def start(self) -> int:
        return self.fragments[0][0]

    @property
    def end(self) -> int:
        return self.fragments[0][1]

    @property
    def discontinuous(self) -> bool:
        return len(self.fragments) > 1


@dataclass(frozen=True)
class BratDocument:
    """One .txt with its .ann entities; ``name`` is the path or archive member without suffix."""

    name: str
    text: str
    entities: tuple[Entity, ...]


def parse_ann(ann: str, text: str, name: str, label_from: str = "type") -> tuple[Entity, ...]:
    """Parse the T lines of a .ann (other lines kept only for notes) and check them against text.

    ``label_from``: 'type' (the T line's type) or 'note' (the last quoted field of the
    AnnotatorNotes line, as in Mantra GSC, whose T type is a CUI); 'auto' picks 'note' when the
    type looks like a CUI.
    """
    raw: list[tuple[str, str, tuple[tuple[int, int], ...], str, int]] = []
    notes: dict[str, str] = {}
    for lineno, line in enumerate(ann.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("T"):
            m = _T_LINE.match(line)
            if not m:
                raise CorpusError(f"{name}.ann:{lineno}: malformed entity line {line[:60]!r}")
            tid, label, offs, mention = m.groups()
            frags = tuple(tuple(int(x) for x in part.split()) for part in offs.split(";"))
            for s, e in frags:
                if not 0 <= s < e <= len(text):
                    raise CorpusError(
                        f"{name}.ann:{lineno}: entity {tid} offsets {s}-{e} are outside the text "
                        f"({len(text)} characters in {name}.txt)"
                    )
            got = " ".join(text[s:e] for s, e in frags)
            if got.split() != mention.split():
                raise CorpusError(
                    f"{name}.ann:{lineno}: entity {tid} offsets {offs} give {got[:40]!r} "
                    f"but the annotation says {mention[:40]!r} (misaligned offsets)"
                )
            raw.append((tid, label, frags, mention, lineno))  # type: ignore[arg-type]
        elif line.startswith("#"):
            parts = line.split("\t")
            if len(parts) >= 3 and parts[1].startswith("AnnotatorNotes "):
                notes[parts[1].split()[1]] = parts[2]
    out = []
    for tid, label, frags, mention, lineno in raw:
        mode = label_from
        if mode == "auto":
            mode = "note" if _CUI_TYPE.match(label) else "type"
        if mode == "note":
            note = notes.get(tid)
            fields = re.findall(r'"([^"]*)"', note or "")
            if not fields:
                raise CorpusError(f"{name}.ann:{lineno}: entity {tid} has no AnnotatorNotes label")
            groups = [f for f in fields if _GROUP.match(f)]  # 'DISO' or 'OBJC|CHEM': first group
            label = groups[-1].split("|")[0] if groups else fields[-1]
        out.append(Entity(tid, label, frags, mention, lineno))
    return tuple(out)


def read_brat(
    source: str | os.PathLike[str], prefix: str | tuple[str, ...] = "", label_from: str = "auto"
) -> Iterator[BratDocument]:
    """Stream BRAT documents from a folder or a .tar(.xz/.gz) archive, sorted by name.

    ``prefix`` (one or a tuple) keeps only members (or files, relative to the folder) whose path
    starts with it, e.g. 'corpus/train/MEDLINE/'. Every .ann needs its .txt, and the reverse.
    An archive is read in one sequential pass; the selected members are held in memory.
    """
    src = str(source)
    if os.path.isdir(src):
        root = Path(src)
        files = {str(p.relative_to(root)).replace(os.sep, "/"): p for p in root.rglob("*") if p.is_file()}
        read: Callable[[str], bytes] = lambda k: files[k].read_bytes()  # noqa: E731
        names = list(files)
        yield from _brat_docs(src, names, read, (prefix,) if isinstance(prefix, str) else tuple(prefix), label_from)
        return
    if not os.path.isfile(src):
        raise CorpusError(f"BRAT corpus not found: {src}")
    prefixes = (prefix,) if isinstance(prefix, str) else tuple(prefix)
    data: dict[str, bytes] = {}  # one sequential pass: compressed tars cannot seek cheaply
    try:
        with tarfile.open(src) as tar:
            for m in tar:
                if m.isfile() and m.name.startswith(prefixes) and m.name.endswith((".ann", ".txt")):
                    f = tar.extractfile(m)
                    assert f is not None
                    data[m.name] = f.read()
    except (tarfile.TarError, lzma.LZMAError, EOFError, OSError) as e:
        raise CorpusError(f"{src} is not a readable tar archive ({e})") from e
    yield from _brat_docs(src, list(data), data.__getitem__, prefixes, label_from)


def _brat_docs(
    src: str, names: list[str], read: Callable[[str], bytes], prefixes: tuple[str, ...], label_from: str
) -> Iterator[BratDocument]:
    chosen = sorted(n for n in names if n.startswith(prefixes) and n.endswith((".ann", ".txt")))
    stems = sorted({n[:-4] for n in chosen})
    if not stems:
        raise CorpusError(f"{src}: no .txt/.ann files under {' or '.join(prefixes) or 'the top level'}")
    have = set(chosen)
    for stem in stems:
        where = f"{src}:{stem}" if not os.path.isdir(src) else os.path.join(src, stem)
        for suf in (".txt", ".ann"):
            if stem + suf not in have:
                raise CorpusError(f"{where}{suf} is missing (every BRAT document needs .txt and .ann)")
        try:
            text = read(stem + ".txt").decode("utf-8")
            ann = read(stem + ".ann").decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorpusError(f"{where}: not UTF-8 ({e.reason} at byte {e.start})") from e
        yield BratDocument(stem, text, parse_ann(ann, text, where, label_from))


def flatten(entities: Iterable[Entity]) -> list[Entity]:
    """The flattening policy: first fragment of discontinuous entities, then keep the outermost
    of overlapping ones (earliest start, then longest, then first in the file)."""
    firsts = [Entity(e.id, e.label, e.fragments[:1], e.text, e.line) for e in entities]
    firsts.sort(key=lambda e: (e.start, -(e.end - e.start), e.line))
    kept: list[Entity] = []
    reach = -1
    for e in firsts:
        if e.start >= reach:
            kept.append(e)
            reach = e.end
    return kept


def split_words(text: str, cuts: Iterable[int] = ()) -> list[tuple[int, int]]:
    """Word character spans: runs of word characters and single punctuation marks, also cut at
    every offset in ``cuts`` (entity boundaries), so entities always cover whole words."""
    cutset = set(cuts)
    spans = []
    for m in _WORD.finditer(text):
        s, e = m.span()
        inner = sorted(c for c in cutset if s < c < e)
        for c in inner:
            spans.append((s, c))
            s = c
        spans.append((s, e))
    return spans


def brat_to_sentences(doc: BratDocument, max_words: int = 0) -> list[Sentence]:
    """Word-level IOB2 sentences of a document after :func:`flatten`.

    Sentences end at line breaks and after '.', '!' or '?' followed by an upper-case word,
    never inside an entity. ``max_words`` > 0 also cuts longer sentences (outside entities).
    """
    kept = flatten(doc.entities)
    cuts = [x for e in kept for x in (e.start, e.end)]
    spans = split_words(doc.text, cuts)
    tags = ["O"] * len(spans)
    starts = {s: i for i, (s, _) in enumerate(spans)}
    ends = {e: i for i, (_, e) in enumerate(spans)}
    inside = [False] * len(spans)  # True where the word continues an entity
    for ent in kept:
        i, j = starts.get(ent.start), ends.get(ent.end)
        if i is None or j is None:  # entity boundary on whitespace: shrink to the words inside
            idx = [k for k, (s, e) in enumerate(spans) if s >= ent.start and e <= ent.end]
            if not idx:
                continue
            i, j = idx[0], idx[-1]
        tags[i] = f"B-{ent.label}"
        for k in range(i + 1, j + 1):
            tags[k] = f"I-{ent.label}"
            inside[k] = True
    out: list[Sentence] = []
    cur: list[int] = []

    def flush() -> None:
        if cur:
            out.append(
                Sentence(
                    tuple(doc.text[spans[k][0] : spans[k][1]] for k in cur),
                    tuple(tags[k] for k in cur),
                    f"{doc.name}#{spans[cur[0]][0]}",
                )
            )
            cur.clear()

    for k, (s, e) in enumerate(spans):
        if cur and not inside[k]:
            prev_end = spans[cur[-1]][1]
            word = doc.text[s:e]
            prev = doc.text[spans[cur[-1]][0] : prev_end]
            if (
                "\n" in doc.text[prev_end:s]
                or (prev in {".", "!", "?"} and (word[:1].isupper() or word[:1].isdigit()))
                or (max_words and len(cur) >= max_words)
            ):
                flush()
        cur.append(k)
    flush()
    return out
