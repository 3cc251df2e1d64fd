"""``biotok report``: measure, draw and write report.md, the figures and report.html (:func:`build_report`).

The report is written to a temporary sibling directory and renamed into place, so an
interrupted run never leaves a half-written report; an existing output needs ``force``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from biotok.decide import decide_with, read_evidence
from biotok.errors import CorpusError
from biotok.evidence import Evidence, collect_evidence
from biotok.evidence.collect import evidence_phases
from biotok.metrics import Comparison, compare
from biotok.terminology import segment_terms
from biotok.output import atomic_directory, check_writable
from biotok.page import png_figure
from biotok.pathology import Pathologies, WordTally
from biotok.progress import Phases
from biotok.report.assemble import report_page
from biotok.report.compare import corpus_pathologies
from biotok.report.figures import CAPTIONS, TITLES, report_figures
from biotok.report.html import write_html
from biotok.report.markdown import write_markdown
from biotok.report.samples import SentencePicker
from biotok.tokenizer import BiotokTokenizer
from biotok.vocab import Vocab, as_vocab, duplicates

MARKER = "report.md"  # the file that makes a folder a biotok report (--force replaces only those)


@dataclass(frozen=True)
class Report:
    """Where the report went and what it holds."""

    out: Path
    markdown: Path
    figures: tuple[Path, ...]
    comparison: Comparison
    html: Path | None = None
    evidence: Evidence | None = None
    pathologies: Pathologies | None = None


def build_report(
    tokenizers: Sequence[BiotokTokenizer],
    lines: Iterable[str],
    out: str | Path,
    *,
    force: bool = False,
    corpus_label: str = "",
    inputs: Iterable[str | os.PathLike[str]] = (),
    terms: Sequence[tuple[str, str]] | None = None,
    sentences: Sequence[str] = (),
    entities: str | os.PathLike[str] | None = None,
    terminology: str | os.PathLike[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    html: bool = True,
    command: str = "",
    sample_sentences: int = 6,
    decide_from: Sequence[str | os.PathLike[str]] = (),
    **compare_kwargs,
) -> Report:
    """Measure, draw and write report.md + figures (+ report.html) into ``out`` (atomically renamed
    into place).

    ``inputs``: the files ``lines`` come from, which ``out`` may never replace. ``terms``: (term,
    category) pairs to segment; ``sentences``: shown on the page after ``sample_sentences`` lines
    picked from the corpus; ``entities``/``terminology``: see :func:`biotok.evidence.collect_evidence`
    (numbers and units are always measured); ``command``: the command line, for the page;
    ``decide_from``: evidence folders (:func:`biotok.decide.decide`), decided with this corpus'
    fertility: a "Decision" section at the top of report.md and report.html.
    """
    out = Path(out)
    inputs = list(inputs)
    check_writable(out, force, inputs, marker=MARKER)  # fail before the measurement, not after
    evidence = read_evidence(decide_from) if decide_from else None  # a bad folder fails before the measurement too
    # each part shows as it runs (a bar on a terminal, a line per part off it) with --progress
    names = [*evidence_phases(entities, terminology, terms), "corpus", "figures", "report.md",
             *(["report.html"] if html else [])]
    with Phases(names, "report", enabled=bool(compare_kwargs.get("progress"))) as phases:
        # the evidence first: a wrong dataset or terminology name fails before the corpus is read
        ev = collect_evidence(tokenizers, entities=entities, terminology=terminology, terms=terms, data_dir=data_dir,
                              phases=phases)
        picker = SentencePicker(sample_sentences)
        cmp, found = _measure(tokenizers, picker.watch(lines), corpus_label, phases, compare_kwargs)
        vocabs = [as_vocab(t) for t in tokenizers]
        table = segment_terms(tokenizers, terms) if terms else None
        decision = decide_with(evidence, cmp.as_dict(), corpus_label) if evidence is not None else None
        with atomic_directory(out, force, inputs, marker=MARKER) as tmp:
            with phases.run("figures"):
                figs = report_figures(cmp, vocabs, tmp)
            with phases.run("report.md"):
                write_markdown(tmp / "report.md", cmp, vocabs, figs, corpus_label, table, ev, html, found)
                _put_decision(tmp / "report.md", decision, "\n\n", lambda d: d.markdown(level=2))
            if html:
                with phases.run("report.html"):
                    _write_html(tmp / "report.html", tokenizers, cmp, vocabs, figs, corpus_label, terms, ev,
                                [(s, "corpus") for s in picker.picked] + [(s, "given") for s in sentences], command,
                                inputs, found)
                    _put_decision(tmp / "report.html", decision, '<main class="wrap">', lambda d: d.html_section())
    return Report(out, out / "report.md", tuple(out / f.name for f in figs), cmp,
                  out / "report.html" if html else None, ev, found)


def _measure(tokenizers: Sequence[BiotokTokenizer], lines: Iterable[str], corpus_label: str, phases: Phases,
             compare_kwargs: dict) -> tuple[Comparison, Pathologies]:
    """The corpus measured (:func:`compare`, its words tallied on the way) and its pathologies."""
    tally = WordTally(compare_kwargs.get("normalize_config"))
    with phases.run("corpus"):
        cmp = compare(tokenizers, tally.wrap(lines), **compare_kwargs)
    if cmp.results[0].words == 0:
        raise CorpusError(f"no words in corpus {corpus_label}")
    return cmp, corpus_pathologies(tokenizers, cmp, tally.counts)


def _write_html(path: Path, tokenizers: Sequence[BiotokTokenizer], cmp: Comparison, vocabs: Sequence[Vocab],
                figs: Sequence[Path], corpus_label: str, terms: Sequence[tuple[str, str]] | None, ev: Evidence,
                sentences: Sequence[tuple[str, str]], command: str, inputs: Sequence,
                pathologies: Pathologies | None = None) -> None:
    r0 = cmp.results[0]
    page = report_page(
        tokenizers,
        subtitle=f"{corpus_label}: {r0.lines:,} lines, {r0.words:,} biotok words; reference for relative "
                 f"length: {r0.name}",
        comparison=cmp, vocabs=vocabs, duplicates=[duplicates(v) for v in vocabs], sentences=sentences,
        terms=terms or (), figures=[png_figure(f, TITLES.get(f.stem, f.stem), CAPTIONS.get(f.stem, "")) for f in figs],
        evidence=ev,
        command=command, inputs=_provenance(corpus_label, inputs, terms, sentences, ev), pathologies=pathologies,
    )
    write_html(page, path)


def _put_decision(path: Path, decision, after: str, render) -> None:
    """The decision section right after the first ``after`` of the file (the title, the page's start)."""
    if decision is None:
        return
    text = path.read_text(encoding="utf-8")
    at = text.index(after) + len(after)
    path.write_text(text[:at] + render(decision) + ("\n" if after == "\n\n" else "") + text[at:], encoding="utf-8")


def _provenance(corpus_label: str, inputs: Sequence, terms: Sequence[tuple[str, str]] | None,
                sentences: Sequence[tuple[str, str]], ev: Evidence) -> list[tuple[str, str]]:
    out = [("corpus", corpus_label)] + [("input", str(i)) for i in inputs if str(i) != corpus_label]
    if terms:
        out.append(("terms", f"{len(terms):,} terms"))
    given = sum(1 for _, how in sentences if how == "given")
    out.append(("sentences", f"{len(sentences) - given} picked from the corpus by hash, {given} given"))
    return out + ev.provenance()


__all__ = ["MARKER", "Report", "build_report"]
