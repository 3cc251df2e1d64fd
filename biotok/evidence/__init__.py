"""Biomedical evidence for choosing a vocabulary: one module per kind, each computing typed results
and rendering its report.md section, its page section and its summary cards.

- :mod:`biotok.evidence.entities`: entity-aware fragmentation on gold NER mentions
- :mod:`biotok.evidence.terminology`: terminology coverage (measured by :mod:`biotok.terminology`)
- :mod:`biotok.evidence.morphemes`: alignment of cuts with Greek and Latin morpheme boundaries
- :mod:`biotok.evidence.numbers`: doses, lab values and units
- :mod:`biotok.evidence.terms`: a term list (``--terms``) segmented by every tokenizer
- :mod:`biotok.evidence.collect`: :func:`collect_evidence` gathers them into one :class:`Evidence`
"""

from biotok.evidence.collect import Evidence, collect_evidence

__all__ = ["Evidence", "collect_evidence"]
