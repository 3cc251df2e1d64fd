"""NER corpus readers: BRAT standoff (.txt + .ann, in a folder or a tar archive) and BIO columns.

Every reader streams and validates: a malformed line, an unknown tag, an ``I-`` tag that does
not continue an entity of the same type, or entity offsets that do not match the text raise a
:class:`~biotok.errors.CorpusError` naming the file (or archive member) and the line.

BRAT documents become word-level IOB2 sentences by :func:`brat_to_sentences`; the flattening
policy for nested and discontinuous entities is documented in docs/evaluation.md:
a discontinuous entity keeps its first fragment; of overlapping entities the outermost
(earliest start, then longest, then first in the file) is kept, the others are dropped.

This module imports neither torch nor transformers.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import lzma
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from biotok.errors import CorpusError

_TAG = re.compile(r"^(O|[BI]-\S+)$")
_T_LINE = re.compile(r"^(T\d+)\t(\S+) (\d+ \d+(?:;\d+ \d+)*)\t(.*)$")
_WORD = re.compile(r"\w+|[^\w\s]")
_CUI_TYPE = re.compile(r"^C\d{7}$")
_GROUP = re.compile(r"^[A-Z]{4}(\|[A-Z]{4})*$")


# --- plain data ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sentence:
    """Words with one IOB2 tag each; ``source`` is 'file:line' (or 'file#doc') for messages."""

    words: tuple[str, ...]
    tags: tuple[str, ...]
    source: str = ""

    @property
    def entities(self) -> list[tuple[str, int, int]]:
        """(type, first word, last word + 1) of each entity."""
        return bio_spans(self.tags)


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


@dataclass(frozen=True)
class NerDataset:
    """train / dev / test sentences and the sorted entity types."""

    name: str
    train: tuple[Sentence, ...]
    dev: tuple[Sentence, ...]
    test: tuple[Sentence, ...]

    @property
    def types(self) -> list[str]:
        return sorted({t for split in (self.train, self.dev, self.test) for s in split for t, _, _ in s.entities})

    @property
    def labels(self) -> list[str]:
        """'O' then B-/I- of every type: the classifier's label set."""
        return ["O"] + [f"{p}-{t}" for t in self.types for p in ("B", "I")]


# --- BIO / IOB column files -----------------------------------------------------------------
def bio_spans(tags: Iterable[str]) -> list[tuple[str, int, int]]:
    """Entities of a valid IOB2 sequence as (type, start, end) word spans."""
    out: list[tuple[str, int, int]] = []
    cur: list | None = None
    for i, tag in enumerate(tags):
        if tag.startswith("I-") and cur is not None and cur[0] == tag[2:]:
            cur[2] = i + 1
            continue
        if cur is not None:
            out.append(tuple(cur))  # type: ignore[arg-type]
            cur = None
        if tag.startswith(("B-", "I-")):
            cur = [tag[2:], i, i + 1]
    if cur is not None:
        out.append(tuple(cur))  # type: ignore[arg-type]
    return out


def _open_text(path: str | os.PathLike[str]) -> io.TextIOBase:
    p = str(path)
    if not os.path.isfile(p):
        raise CorpusError(f"file not found: {p}")
    opener: Callable = gzip.open if p.endswith(".gz") else lzma.open if p.endswith(".xz") else open
    return opener(p, "rt", encoding="utf-8")  # type: ignore[no-any-return]


def read_bio(path: str | os.PathLike[str], sep: str | None = None) -> Iterator[Sentence]:
    """Stream sentences from a column file: 'token<sep>...<sep>tag' lines, blank line between
    sentences (``sep`` None: any whitespace). Tags must be strict IOB2 (O, B-X, I-X after B-X/I-X)."""
    name = str(path)
    words: list[str] = []
    tags: list[str] = []
    first = 0
    with _open_text(path) as f:
        lineno = 0
        try:
            for lineno, line in enumerate(f, 1):
                line = line.rstrip("\r\n")
                if not line.strip() or line.startswith("-DOCSTART-"):
                    if words:
                        yield Sentence(tuple(words), tuple(tags), f"{name}:{first}")
                        words, tags = [], []
                    continue
                parts = line.split(sep) if sep is not None else line.split()
                if len(parts) < 2 or not parts[0]:
                    raise CorpusError(f"{name}:{lineno}: expected 'token tag', got {line[:60]!r}")
                tag = parts[-1].strip()
                if not _TAG.match(tag):
                    raise CorpusError(f"{name}:{lineno}: unknown tag {tag!r} (expected O, B-TYPE or I-TYPE)")
                if tag.startswith("I-") and (not tags or tags[-1] == "O" or tags[-1][2:] != tag[2:]):
                    prev = tags[-1] if tags else "sentence start"
                    raise CorpusError(
                        f"{name}:{lineno}: tag {tag} follows {prev}; I-{tag[2:]} must continue B-/I-{tag[2:]} (IOB2)"
                    )
                if not words:
                    first = lineno
                words.append(parts[0])
                tags.append(tag)
        except UnicodeDecodeError:
            raise CorpusError(f"{name}:{lineno + 1}: invalid UTF-8") from None
        except (OSError, EOFError, lzma.LZMAError) as e:
            raise CorpusError(f"{name}: broken compressed file after line {lineno} ({e})") from None
    if words:
        yield Sentence(tuple(words), tuple(tags), f"{name}:{first}")


# --- BRAT standoff --------------------------------------------------------------------------
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
        raise CorpusError(f"{src} is not a readable tar archive ({e})") from None
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
            raise CorpusError(f"{where}: not UTF-8 ({e.reason} at byte {e.start})") from None
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


# --- named datasets ---------------------------------------------------------------------------
QUAERO_TAR = "quaero-frenchmed/QUAERO_FrenchMed_CLEF2017_brat.tar.xz"
MANTRA_TAR = "mantra-gsc/Mantra-GSC_brat_French_English.tar.xz"
DATASETS = ("quaero", "quaero-medline", "quaero-emea", "mantra-fr", "e3c", "ncbi", "bc5cdr", "bc2gm")


def default_data_dir() -> Path | None:
    """--data-dir default: $BIOTOK_DATA_DIR, else ../shared/data/corpora beside the repository."""
    env = os.environ.get("BIOTOK_DATA_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "corpora"
    return here if here.is_dir() else None


def _holdout(sentences: list[Sentence], fraction: float, key: str) -> tuple[list[Sentence], list[Sentence]]:
    """Split deterministically by a hash of each sentence's source, not by the random state."""
    keep, held = [], []
    for s in sentences:
        h = int(hashlib.sha256(f"{key}:{s.source}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
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
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    if name_or_path in DATASETS:
        if base is None or not base.is_dir():
            raise CorpusError(
                f"dataset {name_or_path!r} needs --data-dir or BIOTOK_DATA_DIR (the shared corpora folder)"
            )
        return _named(name_or_path, base, max_words)
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
        splits = [_brat_split(tar, [f"corpus/{sp}/{part}/" for part in parts], max_words) for sp in ("train", "dev", "test")]
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


# --- sentence-level classification: FrenchMedMCQA, number of correct answers ---------------------
@dataclass(frozen=True)
class TextExample:
    """A text and its class label; ``source`` is 'file#item' for messages."""

    text: str
    label: str
    source: str = ""


@dataclass(frozen=True)
class ClsDataset:
    """train / dev / test examples of a sentence-level classification task."""

    name: str
    train: tuple[TextExample, ...]
    dev: tuple[TextExample, ...]
    test: tuple[TextExample, ...]

    @property
    def labels(self) -> list[str]:
        return sorted({e.label for split in (self.train, self.dev, self.test) for e in split})


CLS_DATASETS = ("frenchmedmcqa-nbr",)


def read_frenchmedmcqa(path: str | os.PathLike[str]) -> Iterator[TextExample]:
    """FrenchMedMCQA questions as 'question (a) ... (e) ...' texts labelled with the number of
    correct answers (1-5): DrBenchmark's sentence-level task on this corpus."""
    import json

    name = str(path)
    with _open_text(path) as f:
        try:
            items = json.load(f)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{name}:{e.lineno}: invalid JSON ({e.msg})") from None
        except (OSError, EOFError, UnicodeDecodeError) as e:
            raise CorpusError(f"{name}: cannot read ({e})") from None
    if not isinstance(items, list):
        raise CorpusError(f"{name}: expected a JSON array of questions")
    for i, q in enumerate(items):
        try:
            answers = q["answers"]
            text = q["question"].strip() + " " + " ".join(f"({k}) {answers[k].strip()}" for k in sorted(answers))
            n = len(q["correct_answers"])
        except (KeyError, TypeError, AttributeError):
            raise CorpusError(f"{name}#{i}: question item needs 'question', 'answers' and 'correct_answers'") from None
        if not 1 <= n <= len(answers):
            raise CorpusError(f"{name}#{i}: {n} correct answers for {len(answers)} options")
        yield TextExample(text, str(n), f"{name}#{i}")


def load_cls_dataset(name: str, data_dir: str | os.PathLike[str] | None = None) -> ClsDataset:
    """A named classification dataset (see :data:`CLS_DATASETS`) under ``data_dir``."""
    if name not in CLS_DATASETS:
        raise CorpusError(f"unknown classification dataset {name!r} (one of {', '.join(CLS_DATASETS)})")
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    if base is None or not (base / "frenchmedmcqa").is_dir():
        raise CorpusError(f"dataset {name!r}: frenchmedmcqa/ not found (check --data-dir or BIOTOK_DATA_DIR)")
    splits = [tuple(read_frenchmedmcqa(base / "frenchmedmcqa" / f"{s}.json.gz")) for s in ("train", "dev", "test")]
    return ClsDataset(name, *splits)


def sentence_texts(sentences: Iterable[Sentence]) -> Iterator[str]:
    """Sentences as space-joined text lines (e.g. to add the task text to a pretraining corpus)."""
    for s in sentences:
        yield " ".join(s.words)
