"""Keep evaluation text out of pretraining text: :func:`exclude_sentences`.

A model pretrained on the sentences it is later tested on has seen the test set: its scores
measure memory, not the vocabulary. Before pretraining on text gathered from several corpora,
drop every line that is, or contains, a sentence of the evaluated tasks' dev and test sets.

Sentences are compared *normalised* (:func:`normalize_sentence`): Unicode NFKC, lowercased,
every run of characters that are not letters or digits made one space. So the tokenized
``IL - 2 ( n = 5 ) .`` of a CoNLL file and the raw ``IL-2 (n=5).`` of an abstract are one
sentence. A line is dropped when its normalised form equals an evaluated sentence's, or
contains it as a run of whole words (for sentences of at least ``min_chars`` normalised
characters and ``min_words`` words, so that a short line such as "Results", or a term given as
an answer option such as "douleurs abdominales", does not remove every line it occurs in).

:func:`eval_sentences` gathers those sentences for any registered task by name (read through
:func:`biotok_train.tasks.load`), so a recipe in any language keeps out exactly what it evaluates.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

_NOT_ALNUM = re.compile(r"[\W_]+", re.UNICODE)
# a sentence ends at . ! ? ; followed by white space, or at a line break: cutting too often only
# makes more, shorter sentences, each still found inside a longer line of the pretraining text
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\s*\n\s*")
_TEXT_FIELDS = ("text", "text_a", "text_b", "question", "context")  # the text fields of every example type
ANCHOR_WORDS = 3  # words indexed per evaluated sentence (its first ones)


def normalize_sentence(text: str) -> str:
    """NFKC, lowercase, runs of non-alphanumerics -> one space, stripped."""
    return _NOT_ALNUM.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


@dataclass(frozen=True)
class Exclusion:
    """What :func:`exclude_sentences` kept and dropped."""

    kept: tuple[str, ...]  # the lines kept, in order
    excluded: int  # lines dropped
    matched: int  # distinct evaluated sentences found in the text

    def to_dict(self) -> dict:
        return {"kept": len(self.kept), "excluded": self.excluded, "matched": self.matched}


class _Index:
    """The evaluated sentences as word tuples, indexed by their first words."""

    def __init__(self, sentences: Iterable[str], min_chars: int, min_words: int = 1) -> None:
        self.whole: set[str] = set()
        self.by_anchor: dict[tuple[str, ...], list[tuple[str, ...]]] = defaultdict(list)
        for s in sentences:
            key = normalize_sentence(s)
            if not key:
                continue
            self.whole.add(key)
            words = tuple(key.split(" "))
            if len(key) >= min_chars and len(words) >= min_words:
                self.by_anchor[words[:ANCHOR_WORDS]].append(words)
        self.anchor_lengths = sorted({len(a) for a in self.by_anchor}, reverse=True)

    def found(self, line: str) -> Iterator[str]:
        """The evaluated sentences ``line`` is or contains (normalised)."""
        key = normalize_sentence(line)
        if key in self.whole:
            yield key
        words = key.split(" ")
        for i in range(len(words)):
            for n in self.anchor_lengths:
                for cand in self.by_anchor.get(tuple(words[i:i + n]), ()):
                    if tuple(words[i:i + len(cand)]) == cand:
                        yield " ".join(cand)


def exclude_sentences(lines: Iterable[str], sentences: Iterable[str], *, min_chars: int = 20,
                      min_words: int = 1) -> Exclusion:
    """``lines`` without those that are or contain one of ``sentences`` (normalised; see the module)."""
    index = _Index(sentences, min_chars, min_words)
    kept: list[str] = []
    excluded = 0
    matched: set[str] = set()
    for line in lines:
        hits = set(index.found(line))
        if hits:
            excluded += 1
            matched |= hits
        else:
            kept.append(line)
    return Exclusion(tuple(kept), excluded, len(matched))


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences (see ``_SENTENCE_END``), blank ones dropped."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s]


def example_texts(example) -> list[str]:
    """Every piece of text of one task example, whatever its type: a NER sentence's words, a
    document, both sentences of a pair, a question with its context and options, a relation's
    unmasked sentence (its masked form, ``@GENE$``, is not text of any corpus)."""
    if hasattr(example, "words"):  # biotok.datasets.bio.Sentence
        return [" ".join(example.words)]
    if getattr(example, "sentence", ""):  # RelationExample rebuilt with its entities
        return [example.sentence]
    texts = [getattr(example, f) for f in _TEXT_FIELDS if isinstance(getattr(example, f, None), str)]
    return texts + list(getattr(example, "options", ()))


def eval_sentences(task_names: Sequence[str], data_dir: str | None = None,
                   splits: Sequence[str] = ("dev", "test")) -> set[str]:
    """The sentences of the ``splits`` of the registered tasks ``task_names`` (read from the
    corpora folder ``data_dir``, None: ``$BIOTOK_SHARED_DATA/corpora``): what
    :func:`exclude_sentences` must keep out of a pretraining text. An unknown name is a
    :class:`~biotok.errors.DataError` naming the known ones."""
    from biotok_train.tasks import get_task, load  # lazy: the task readers, only for a recipe that names tasks

    specs = [get_task(name) for name in task_names]  # every name checked before any data is read
    out: set[str] = set()
    for spec in specs:
        data = load(spec, data_dir)
        for split in splits:
            for example in data.split(split):
                for text in example_texts(example):
                    out.update(split_sentences(text))
    return out


__all__ = ["Exclusion", "eval_sentences", "example_texts", "exclude_sentences", "normalize_sentence",
           "split_sentences"]
