"""What ``biotok compare`` shows: the vocabulary diff and, optionally, fragmentation on a corpus,
a term table and the biomedical evidence (:func:`compare_tokenizers`)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from itertools import combinations
from typing import Iterable, Sequence

from biotok.config import EXAMPLES
from biotok.errors import CorpusError
from biotok.evidence import Evidence, collect_evidence
from biotok.metrics import Comparison, compare
from biotok.pathology import Pathologies, WordTally, find_pathologies
from biotok.terminology import TermTable, segment_terms
from biotok.tokenizer import BiotokTokenizer
from biotok.vocab import Vocab, VocabDiff, as_vocab, diff_vocab, duplicate_pairs


@dataclass(frozen=True)
class CompareResult:
    """What ``biotok compare`` shows: vocabularies, their pairwise diffs and optional measurements."""

    tokenizers: tuple[BiotokTokenizer, ...]
    vocabs: tuple[Vocab, ...]
    duplicates: dict[str, list[tuple[str, str]]]  # per vocabulary: (with marker, without) pairs
    pairs: tuple[VocabDiff, ...]
    examples: int
    comparison: Comparison | None = None
    corpus: tuple[str, ...] = ()
    terms: TermTable | None = None
    terms_path: str | None = None
    evidence: Evidence | None = None  # entities, terminology, morphemes, numbers (biotok.evidence)
    pathologies: Pathologies | None = None  # with a corpus: suffix top pieces, common words split (biotok.pathology)

    def as_dict(self) -> dict:
        """Everything, JSON-safe (NaN -> null, tuples -> lists), for ``compare --json``."""
        k = self.examples
        out: dict = {
            "tokenizers": [
                {"name": t.name, "source": t.source, "marker": t.marker, "vocab_size": t.vocab_size,
                 "lowercase": t.lowercase, "fingerprint": t.fingerprint}
                for t in self.tokenizers
            ],
            "vocab": {
                "forms": {v.name: len(v.forms) for v in self.vocabs},
                "duplicates": {n: {"count": len(p), "examples": [list(x) for x in p[:k]]}
                               for n, p in self.duplicates.items()},
                "pairs": [d.as_dict() for d in self.pairs],
            },
        }
        if self.comparison is not None:
            out["corpus"] = {"paths": list(self.corpus), **self.comparison.as_dict()}
        if self.terms is not None:
            out["terms"] = {"path": self.terms_path, **self.terms.as_dict()}
        if self.evidence is not None:
            out["evidence"] = self.evidence.as_dict()
        if self.pathologies is not None:
            out["pathologies"] = self.pathologies.as_dict()
        return json_safe(out)


def json_safe(obj):
    """JSON-safe copy: NaN/inf -> null, tuples -> lists, int keys -> str."""
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def compare_tokenizers(
    tokenizers: Sequence[BiotokTokenizer],
    *,
    lines: Iterable[str] | None = None,
    corpus: Sequence[str] = (),
    terms: Sequence[tuple[str, str]] | None = None,
    terms_path: str | None = None,
    examples: int = EXAMPLES,
    entities: str | os.PathLike[str] | None = None,
    terminology: str | os.PathLike[str] | None = None,
    numbers: bool = False,
    data_dir: str | os.PathLike[str] | None = None,
    **compare_kwargs,
) -> CompareResult:
    """Diff the vocabularies pairwise; with ``lines``, measure fragmentation; with ``terms``, segment them;
    with ``entities``, ``terminology`` or ``numbers``, gather that evidence (:func:`biotok.evidence.collect_evidence`).

    ``corpus`` and ``terms_path`` only label where ``lines`` and ``terms`` came from.
    """
    vocabs = tuple(as_vocab(t) for t in tokenizers)
    cmp = pathologies = None
    if lines is not None:
        tally = WordTally(compare_kwargs.get("normalize_config"))
        cmp = compare(tokenizers, tally.wrap(lines), **compare_kwargs)
        if cmp.results[0].words == 0:
            raise CorpusError(f"no words in corpus {', '.join(corpus)}")
        pathologies = corpus_pathologies(tokenizers, cmp, tally.counts)
    return CompareResult(
        tokenizers=tuple(tokenizers),
        vocabs=vocabs,
        duplicates={v.name: duplicate_pairs(v) for v in vocabs},
        pairs=tuple(diff_vocab(a, b, examples=examples) for a, b in combinations(vocabs, 2)),
        examples=examples,
        comparison=cmp,
        pathologies=pathologies,
        corpus=tuple(corpus),
        terms=None if terms is None else segment_terms(tokenizers, terms),
        terms_path=terms_path,
        evidence=collect_evidence(tokenizers, entities=entities, terminology=terminology, terms=terms,
                                  data_dir=data_dir, numbers=numbers)
        if (entities is not None or terminology is not None or numbers) else None,
    )


def corpus_pathologies(tokenizers: Sequence[BiotokTokenizer], cmp: Comparison, word_counts) -> Pathologies:
    """:func:`biotok.pathology.find_pathologies` on a measured corpus: its piece counts, its words."""
    freqs = [{t.id_to_token(i) or str(i): n for i, n in c.piece_freqs.items()} for t, c in zip(tokenizers, cmp.counts)]
    return find_pathologies([t.name for t in tokenizers], [t.marker for t in tokenizers],
                            [t.backend for t in tokenizers], word_counts, piece_freqs=freqs)


__all__ = ["CompareResult", "compare_tokenizers", "corpus_pathologies", "json_safe"]
