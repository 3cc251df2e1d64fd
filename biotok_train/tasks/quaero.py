"""QUAERO French Medical (CLEF eHealth BRAT release) with DrBenchmark's conversion of its nested
entities, next to biotok's own (:func:`biotok.datasets.brat.brat_to_sentences`, "outermost").

QUAERO annotates nested, overlapping and discontinuous entities; word-level IOB2 keeps one
layer. The two policies, both available as named tasks:

``outermost`` (tasks ``quaero-emea``, ``quaero-medline``): biotok's words (``\\w+`` runs and single
punctuation marks, cut at entity boundaries), the first fragment of a discontinuous entity, the
outermost of overlapping entities, sentences cut at line breaks and sentence-final punctuation.

``drbenchmark`` (tasks ``quaero-emea-drb``, ``quaero-medline-drb``), re-implemented from
DrBenchmark's QUAERO loader (``convert_to_prodigy`` / ``convert_to_hf_format`` /
``split_sentences``) so that scores can be set beside DrBenchmark's published ones:

1. words are the document's whitespace-separated tokens (``text.split()``);
2. every fragment of an entity is a span of its own (same entity id); its first word is the
   number of whitespace tokens before its start offset, it covers as many words as its text has;
3. a span is dropped when a span *listed after it* in the .ann file overlaps it (shares a
   character) and is strictly longer (DrBenchmark compares each span with the later ones only);
4. the kept spans tag their words in .ann order, a word keeping the first tag it gets;
5. IOB2: a tagged word is I- when the word before carries the same entity (type and id), else B-;
6. EMEA documents are cut after every ``.`` word; a MEDLINE document (a title) is one sentence.

Two departures, neither changing a score: empty pieces after a final ``.`` are dropped, and an
entity cut by a ``.`` starts the next sentence with B- instead of DrBenchmark's I- (a sentence
starting with I- is not valid IOB2). No torch, no transformers.
"""

from __future__ import annotations

import os
from typing import Sequence

from biotok.datasets.bio import Sentence
from biotok.datasets.brat import BratDocument, read_brat
from biotok.datasets.named import QUAERO_TAR
from biotok_train.tasks.common import corpus_file
from biotok_train.tasks.examples import TaskData, ner_data

PathLike = str | os.PathLike[str]
TYPES = ("DISO", "DEVI", "CHEM", "GEOG", "OBJC", "PHEN", "PHYS", "LIVB", "PROC", "ANAT")
"""The ten UMLS semantic groups DrBenchmark keeps (``_LABELS_BASE``)."""
NESTED_POLICIES = ("outermost", "drbenchmark")


def drbenchmark_tags(doc: BratDocument) -> tuple[list[str], list[str]]:
    """(words, IOB2 tags) of one document by DrBenchmark's rules 1-5 (see the module doc)."""
    text = doc.text
    words = text.split()
    spans = []  # (start, end, first word, last word, type, id), one per fragment, in .ann order
    for e in sorted(doc.entities, key=lambda e: e.line):
        for s, t in e.fragments:
            first = len(text[:s].split())
            spans.append((s, t, first, first + len(text[s:t].split()) - 1, e.label, e.id))
    kept = [a for j, a in enumerate(spans)
            if not any(a[0] < b[1] and b[0] < a[1] and a[1] - a[0] < b[1] - b[0] for b in spans[j + 1 :])]
    owner: list[tuple[str, str] | None] = [None] * len(words)
    for _, _, first, last, label, eid in kept:
        if label not in TYPES:
            continue
        for x in range(first, min(last, len(words) - 1) + 1):
            if owner[x] is None:
                owner[x] = (label, eid)
    tags = []
    for i, o in enumerate(owner):
        if o is None:
            tags.append("O")
        else:
            tags.append(("I-" if i > 0 and owner[i - 1] == o else "B-") + o[0])
    return words, tags


def _sentence(words: Sequence[str], tags: Sequence[str], source: str) -> Sentence:
    tags = list(tags)
    if tags and tags[0].startswith("I-"):
        tags[0] = "B-" + tags[0][2:]
    return Sentence(tuple(words), tuple(tags), source)


def drbenchmark_sentences(doc: BratDocument, split_at_periods: bool) -> list[Sentence]:
    """A document's sentences by DrBenchmark's rules: cut after every '.' word (EMEA) or not at all
    (MEDLINE titles)."""
    words, tags = drbenchmark_tags(doc)
    if not split_at_periods:
        return [_sentence(words, tags, f"{doc.name}#0")] if words else []
    cuts = [i for i, w in enumerate(words) if w == "."] + [len(words)]
    out, start = [], 0
    for k, c in enumerate(cuts):
        if words[start : c + 1]:
            out.append(_sentence(words[start : c + 1], tags[start : c + 1], f"{doc.name}#{k}"))
        start = c + 1
    return out


def load_quaero_drb(corpora: PathLike | None, part: str) -> TaskData:
    """QUAERO ``part`` ('EMEA' or 'MEDLINE'), official train / dev / test, DrBenchmark's conversion."""
    name = f"quaero-{part.lower()}-drb"
    tar = corpus_file(corpora, QUAERO_TAR, name)
    splits = []
    for split in ("train", "dev", "test"):
        docs = read_brat(tar, f"corpus/{split}/{part}/", label_from="type")
        splits.append(tuple(s for d in docs for s in drbenchmark_sentences(d, part == "EMEA")))
    return ner_data(name, *splits)


__all__ = ["NESTED_POLICIES", "TYPES", "drbenchmark_sentences", "drbenchmark_tags", "load_quaero_drb"]
