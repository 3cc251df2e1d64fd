"""BIO / IOB2 column files: the word-level NER sentence type and its streaming, validating reader.

A malformed line, an unknown tag or an ``I-`` tag that does not continue an entity of the same
type raises a :class:`~biotok.errors.CorpusError` naming the file and the line.
This module imports neither torch nor transformers.
"""

from __future__ import annotations

import lzma
import os
import re
from dataclasses import dataclass
from typing import Iterable, Iterator

from biotok.errors import CorpusError
from biotok.io import open_text

_TAG = re.compile(r"^(O|[BI]-\S+)$")


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


def read_bio(path: str | os.PathLike[str], sep: str | None = None) -> Iterator[Sentence]:
    """Stream sentences from a column file: 'token<sep>...<sep>tag' lines, blank line between
    sentences (``sep`` None: any whitespace). Tags must be strict IOB2 (O, B-X, I-X after B-X/I-X)."""
    name = str(path)
    words: list[str] = []
    tags: list[str] = []
    first = 0
    with open_text(path) as f:
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
        except UnicodeDecodeError as e:
            raise CorpusError(f"{name}:{lineno + 1}: invalid UTF-8") from e
        except (OSError, EOFError, lzma.LZMAError) as e:
            raise CorpusError(f"{name}: broken compressed file after line {lineno} ({e})") from e
    if words:
        yield Sentence(tuple(words), tuple(tags), f"{name}:{first}")
