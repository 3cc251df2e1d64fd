"""The biomedical evidence of a comparison, gathered in one call: entities, terminology, morphemes, numbers.

``biotok compare --json`` and ``biotok report`` both call :func:`collect_evidence`, so every
number of the page is also in the JSON. Each kind is computed and rendered by its own module
(:mod:`biotok.evidence.entities`, :mod:`biotok.evidence.terminology` over :mod:`biotok.terminology`,
:mod:`biotok.evidence.morphemes`, :mod:`biotok.evidence.numbers`); :class:`Evidence` puts their
report.md sections, page sections, summary cards and provenance lines in page order.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from typing import Sequence

from biotok.errors import CorpusError
from biotok.evidence.entities import (EntityReport, entities_cards, entities_markdown, entities_provenance,
                                      entities_section, entity_fragmentation, load_entity_docs,
                                      text_unit)
from biotok.evidence.morphemes import (MorphemeReport, morpheme_alignment, morphemes_cards, morphemes_markdown,
                                       morphemes_provenance, morphemes_section, terminology_words)
from biotok.evidence.numbers import (NumbersReport, number_segmentation, numbers_cards, numbers_markdown,
                                     numbers_provenance, numbers_section)
from biotok.evidence.terminology import (terminology_cards, terminology_markdown, terminology_provenance,
                                         terminology_section)
from biotok.page import Card, Section
from biotok.terminology import TerminologyReport, load_terminology, terminology_coverage
from biotok.tokenizer import BiotokTokenizer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Evidence:
    """Optional results of the evidence modules (None: not asked for)."""

    entities: EntityReport | None = None
    terminology: TerminologyReport | None = None
    morphemes: MorphemeReport | None = None
    numbers: NumbersReport | None = None

    def as_dict(self) -> dict:
        return {k: v.as_dict() for k, v in (("entities", self.entities), ("terminology", self.terminology),
                                           ("morphemes", self.morphemes), ("numbers", self.numbers)) if v is not None}

    def markdown(self) -> list[str]:
        """report.md sections (the HTML page shows the same numbers, with examples)."""
        out: list[str] = []
        if self.entities is not None:
            out += entities_markdown(self.entities)
        if self.terminology is not None:
            out += terminology_markdown(self.terminology)
        if self.morphemes is not None:
            out += morphemes_markdown(self.morphemes)
        if self.numbers is not None:
            out += numbers_markdown(self.numbers)
        return out

    def cards(self) -> list[Card]:
        """Summary-card lines, (tokenizer name, (label, value)), in card order."""
        out: list[Card] = []
        if self.terminology is not None:
            out += terminology_cards(self.terminology)
        if self.entities is not None:
            out += entities_cards(self.entities)
        if self.morphemes is not None:
            out += morphemes_cards(self.morphemes)
        if self.numbers is not None:
            out += numbers_cards(self.numbers)
        return out

    def sections(self, names: Sequence[str]) -> list[Section]:
        """The page's sections; ``names``: the tokenizers in page order (their colours)."""
        out: list[Section] = []
        if self.entities is not None:
            out.append(entities_section(self.entities, names))
        if self.terminology is not None:
            out.append(terminology_section(self.terminology, names))
        if self.morphemes is not None:
            out.append(morphemes_section(self.morphemes, names))
        if self.numbers is not None:
            out.append(numbers_section(self.numbers, names))
        return out

    def provenance(self) -> list[tuple[str, str]]:
        """(input, what of it was used) lines for the page's provenance table."""
        out: list[tuple[str, str]] = []
        if self.entities is not None:
            out.append(entities_provenance(self.entities))
        if self.terminology is not None:
            out.append(terminology_provenance(self.terminology))
        if self.morphemes is not None:
            out.append(morphemes_provenance(self.morphemes))
        if self.numbers is not None:
            out.append(numbers_provenance(self.numbers))
        return out


def collect_evidence(
    tokenizers: Sequence[BiotokTokenizer],
    *,
    entities: str | os.PathLike[str] | None = None,
    terminology: str | os.PathLike[str] | None = None,
    terms: Sequence[tuple[str, str]] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    numbers: bool = True,
    phases=None,
) -> Evidence:
    """Entities (a dataset name or path), terminology coverage (cim10, atc or a file), morpheme
    alignment (on the terminology's words, else on the term list's), and numbers and units;
    ``phases``: a :class:`biotok.progress.Phases` that shows each part as it runs."""
    ent = ter = mor = num = None
    part = phases.run if phases is not None else lambda name: contextlib.nullcontext()
    if entities is not None:
        name, docs = load_entity_docs(entities, data_dir)
        mentions = sum(len(d.mentions) for d in docs)
        if not mentions:  # refused before any line is logged: the error is the only line
            raise CorpusError(f"no entity mention in {entities} (a BRAT folder of .txt + .ann files, or a BIO file)")
        with_mentions = [d for d in docs if d.mentions]
        left = len(docs) - len(with_mentions)
        log.info("entities: %s mentions in %s %s of %s%s", f"{mentions:,}", f"{len(with_mentions):,}",
                 text_unit(with_mentions), name, f" ({left:,} without a mention left out)" if left else "")
        with part("entities"):
            ent = entity_fragmentation(tokenizers, docs, dataset=name)
    words_source, texts = None, None
    if terminology is not None:
        term = load_terminology(terminology, data_dir)
        log.info("terminology: %s terms of %s", f"{len(term.terms):,}", term.name)
        with part("terminology"):
            ter = terminology_coverage(tokenizers, term)
        words_source, texts = term.name, [t.text for t in term.terms]
    elif terms:
        words_source, texts = "the term list", [t for t, _ in terms]
    if texts:
        with part("morphemes"):
            analyses = terminology_words(texts)
            if analyses:
                mor = morpheme_alignment(tokenizers, analyses, source=words_source or "")
    if numbers:
        with part("numbers"):
            num = number_segmentation(tokenizers)
    return Evidence(ent, ter, mor, num)


def evidence_phases(entities=None, terminology=None, terms=None, numbers: bool = True) -> list[str]:
    """The parts :func:`collect_evidence` runs for these arguments, in order (for a progress display)."""
    return [name for name, on in (("entities", entities is not None), ("terminology", terminology is not None),
                                  ("morphemes", terminology is not None or bool(terms)), ("numbers", numbers)) if on]


__all__ = ["Evidence", "collect_evidence", "evidence_phases"]
