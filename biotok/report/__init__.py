"""What ``biotok compare`` shows and ``biotok report`` writes.

- :mod:`biotok.report.compare`: :func:`compare_tokenizers` (vocabulary diff, fragmentation, terms, evidence)
- :mod:`biotok.report.figures`: the PNG figures, drawn with matplotlib's Agg backend
- :mod:`biotok.report.markdown`: report.md
- :mod:`biotok.report.samples`: the sample sentences, picked from the corpus by a hash of their text
- :mod:`biotok.report.assemble`: results -> the page's plain data (:class:`biotok.page.Page`)
- :mod:`biotok.report.html`: the page -> report.html (CSS and JavaScript in ``static/``, package data)
- :mod:`biotok.report.build`: :func:`build_report`, all of the above written atomically into one folder
- :mod:`biotok.report.study`: the French tokenizer study's measurements, verdicts and docs/study.md

The evidence sections themselves (entities, terminology, morphemes, numbers, the term list) come from
:mod:`biotok.evidence`; the page's plain data types from :mod:`biotok.page`.
"""

from biotok.report.build import MARKER, Report, build_report
from biotok.report.compare import CompareResult, compare_tokenizers, json_safe
from biotok.report.figures import plot_comparison

__all__ = ["MARKER", "CompareResult", "Report", "build_report", "compare_tokenizers", "json_safe", "plot_comparison"]
