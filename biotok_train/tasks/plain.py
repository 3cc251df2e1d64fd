"""A user's own data for ``--task-type``: documented plain formats, every row validated.

``ner``: CoNLL columns: one ``token ... tag`` line per word (the tag last, strict IOB2:
O, B-TYPE, I-TYPE), a blank line between sentences, ``-DOCSTART-`` lines ignored.

Every other type: a TSV file whose first line names the columns (any order; an optional ``id``
column; other columns are ignored but every row needs as many tab-separated fields as the
header), or a JSONL file (``.jsonl``/``.json``: one JSON object a line, same keys). ``.gz`` and
``.xz`` are read transparently. The columns:

=================  ==========================================================================
task type          columns
=================  ==========================================================================
classify           ``text``, ``label``
multilabel         ``text``, ``labels`` (``|``-separated in TSV, a list in JSONL; may be empty)
pair-regression    ``text_a``, ``text_b``, ``score`` (a number)
relation           ``text``, ``label``; the text holds both entities as masks (``@GENE$`` ...
                   ``@DISEASE$``, or one ``@A-B$`` when they overlap) or as markers
                   (``[E1] ... [/E1]`` and ``[E2] ... [/E2]``)
yesno-qa           ``question``, ``context``, ``label``
mcq                ``question``, ``options`` (``|``-separated / a list), ``answers`` (the right
                   options as letters, a for the first option: ``a|c`` / ``["a", "c"]``)
=================  ==========================================================================

The label set is ``labels`` when given, else the labels of the train file; a dev or test label
outside it is an error (a model cannot predict a class it never saw). A wrong column count, a
missing field, a bad score, a relation without both entities or an empty split raises a
:class:`~biotok.errors.CorpusError` naming the file and line. No torch, no transformers.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from typing import Any, Iterator, Sequence

from biotok.errors import CorpusError
from biotok.datasets.bio import read_bio
from biotok.io import open_text
from biotok_train.tasks.examples import (
    MASK, TASK_TYPES, ClassifyExample, MCQExample, MultiLabelExample, PairExample, RelationExample,
    TaskData, YesNoExample,
)

PathLike = str | os.PathLike[str]

COLUMNS: dict[str, tuple[str, ...]] = {
    "ner": ("token", "tag"),
    "classify": ("text", "label"),
    "multilabel": ("text", "labels"),
    "pair-regression": ("text_a", "text_b", "score"),
    "relation": ("text", "label"),
    "yesno-qa": ("question", "context", "label"),
    "mcq": ("question", "options", "answers"),
}
"""The required columns of each task type (``ner``: CoNLL token and tag columns)."""

_MARKERS = (re.compile(r"\[E1\].*?\[/E1\]", re.S), re.compile(r"\[E2\].*?\[/E2\]", re.S))


def _is_jsonl(path: PathLike) -> bool:
    name = str(path).lower()
    for ext in (".gz", ".xz"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name.endswith((".jsonl", ".json"))


def _rows(path: PathLike, required: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """('file:line', row) of a TSV-with-header or JSONL file, required keys checked."""
    name = str(path)
    with open_text(path) as f:
        if _is_jsonl(path):
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                where = f"{name}:{lineno}"
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise CorpusError(f"{where}: invalid JSON ({e.msg})") from None
                if not isinstance(obj, dict):
                    raise CorpusError(f"{where}: expected a JSON object with keys {', '.join(required)}")
                missing = [k for k in required if k not in obj]
                if missing:
                    raise CorpusError(f"{where}: missing key(s) {', '.join(missing)} (needs {', '.join(required)})")
                yield where, obj
            return
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            return
        header = [h.strip() for h in header]
        if header and header[0].startswith("\ufeff"):  # a byte-order mark (Excel's "UTF-8 with BOM"): not a name
            header[0] = header[0][1:].strip()
        twice = sorted({h for h in header if header.count(h) > 1})
        if twice:
            raise CorpusError(f"{name}:1: the header names column(s) {', '.join(twice)[:100]} twice")
        missing = [k for k in required if k not in header]
        if missing:
            raise CorpusError(
                f"{name}:1: the header lacks column(s) {', '.join(missing)} (needs {', '.join(required)}; "
                f"got {', '.join(header)[:100]})"
            )
        for row in reader:
            where = f"{name}:{reader.line_num}"
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(header):
                raise CorpusError(f"{where}: expected {len(header)} tab-separated columns (as the header), got {len(row)}")
            yield where, dict(zip(header, row))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode(v: str, key: str, where: str) -> str:
    """``v``, unless a JSON escape left a lone surrogate in it (no character: refused, as invalid
    UTF-8 is, naming the line)."""
    bad = None if v.isascii() else _SURROGATE.search(v)
    if bad:
        raise CorpusError(f"{where}: {key} holds a lone surrogate \\u{ord(bad.group()):04x} (a broken UTF-16 "
                          "escape, not a character); fix the JSON")
    return v


def _text(row: dict[str, Any], key: str, where: str) -> str:
    v = row[key]
    if not isinstance(v, str) or not v.strip():
        raise CorpusError(f"{where}: {key} must be a non-empty string")
    return _unicode(v, key, where)


def _list(row: dict[str, Any], key: str, where: str) -> list[str]:
    v = row[key]
    if isinstance(v, str):
        return [x.strip() for x in _unicode(v, key, where).split("|") if x.strip()]
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return [_unicode(x, key, where).strip() for x in v if x.strip()]
    raise CorpusError(f"{where}: {key} must be a '|'-separated string or a list of strings")


def check_entities(text: str, where: str) -> None:
    """A relation text must hold both entities: two masks, one combined mask, or both markers."""
    masks = MASK.findall(text)
    if len(masks) == 2 or (len(masks) == 1 and "-" in masks[0]):
        return
    if all(m.search(text) for m in _MARKERS):
        return
    raise CorpusError(
        f"{where}: a relation text needs both entities, as masks (@GENE$ ... @DISEASE$) or markers "
        f"([E1] ... [/E1] and [E2] ... [/E2]); found {len(masks)} mask(s)"
    )


def read_plain(task_type: str, path: PathLike) -> Iterator[Any]:
    """Stream the examples of one file of ``task_type`` (see the module doc for the formats)."""
    if task_type not in TASK_TYPES:
        raise CorpusError(f"unknown task type {task_type!r} (one of {', '.join(TASK_TYPES)})")
    if task_type == "ner":
        yield from read_bio(path)
        return
    for i, (where, row) in enumerate(_rows(path, COLUMNS[task_type])):
        rid = str(row.get("id", "")).strip() or str(i)
        if task_type in ("classify", "relation"):
            text, label = _text(row, "text", where), _text(row, "label", where).strip()
            if task_type == "classify":
                yield ClassifyExample(rid, text, label, where)
            else:
                check_entities(text, where)
                yield RelationExample(rid, text, label, where)
        elif task_type == "multilabel":
            group = str(row.get("group", "")).strip()
            yield MultiLabelExample(rid, _text(row, "text", where), tuple(_list(row, "labels", where)), where, group)
        elif task_type == "pair-regression":
            try:
                score = float(row["score"])
            except (TypeError, ValueError):
                raise CorpusError(f"{where}: score {row['score']!r} is not a number") from None
            if not math.isfinite(score):
                raise CorpusError(f"{where}: score {score} is not finite")
            yield PairExample(rid, _text(row, "text_a", where), _text(row, "text_b", where), score, where)
        elif task_type == "yesno-qa":
            yield YesNoExample(
                rid, _text(row, "question", where), _text(row, "context", where), _text(row, "label", where).strip(), where
            )
        else:  # mcq
            options = _list(row, "options", where)
            if len(options) < 2:
                raise CorpusError(f"{where}: a multiple-choice question needs at least 2 options, got {len(options)}")
            letters = [a.lower() for a in _list(row, "answers", where)]
            if not letters:
                raise CorpusError(f"{where}: no right answer given")
            idx = []
            for a in letters:
                if len(a) != 1 or not "a" <= a <= "z" or ord(a) - ord("a") >= len(options):
                    raise CorpusError(
                        f"{where}: answer {a!r} is not one of the option letters a..{chr(ord('a') + len(options) - 1)}"
                    )
                idx.append(ord(a) - ord("a"))
            yield MCQExample(rid, _text(row, "question", where), tuple(options), tuple(sorted(set(idx))), where)


def _labels_of(task_type: str, ex: Any) -> list[tuple[str, str]]:
    """(label, where) pairs an example uses."""
    if task_type == "ner":
        return [(t, ex.source) for t, _, _ in ex.entities]
    if task_type == "multilabel":
        return [(lab, ex.source) for lab in ex.labels]
    if task_type in ("classify", "relation", "yesno-qa"):
        return [(ex.label, ex.source)]
    return []


def load_plain(
    task_type: str,
    train: PathLike,
    dev: PathLike,
    test: PathLike,
    labels: Sequence[str] | None = None,
    name: str = "custom",
) -> TaskData:
    """A user's task from three files of one ``task_type``; ``labels`` fixes the label set
    (entity types for ner), else it is the train file's."""
    splits = []
    for path in (train, dev, test):
        examples = tuple(read_plain(task_type, path))
        if not examples:
            raise CorpusError(f"{path}: no examples (an empty split)")
        splits.append(examples)
    tr, dv, te = splits
    if labels is not None:
        label_set = tuple(labels)
        twice = sorted({lab for lab in label_set if label_set.count(lab) > 1})
        if twice:
            raise CorpusError(f"--labels lists {', '.join(twice)[:100]} twice")
        to_check = (tr, dv, te)
    else:
        label_set = tuple(sorted({lab for ex in tr for lab, _ in _labels_of(task_type, ex)}))
        to_check = (dv, te)
    allowed = set(label_set)
    if task_type in ("ner", "classify", "relation", "yesno-qa", "multilabel"):
        for split in to_check:
            for ex in split:
                for lab, where in _labels_of(task_type, ex):
                    if lab not in allowed:
                        what = "entity type" if task_type == "ner" else "label"
                        raise CorpusError(f"{where}: {what} {lab!r} not in the label set ({', '.join(label_set)[:200]})")
    if task_type in ("classify", "relation", "yesno-qa") and len(label_set) < 2:
        raise CorpusError(f"{train}: a {task_type} task needs at least 2 labels, found {len(label_set)}")
    return TaskData(name, task_type, label_set, tr, dv, te)


__all__ = ["COLUMNS", "check_entities", "load_plain", "read_plain"]
