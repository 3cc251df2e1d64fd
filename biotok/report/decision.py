"""decision.md or decision.html: a :class:`biotok.decide.Decision` written as a file, the HTML
page in the report's style (self-contained, no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from biotok.decide import Decision
from biotok.output import atomic_file, check_writable_file
from biotok.report.html import static_text


def write_decision(decision: Decision, out: str | Path, *, force: bool = False, inputs: Iterable = ()) -> Path:
    """decision.md, or decision.html (a self-contained page) when ``out`` ends in .html; never over
    one of ``inputs`` (the evidence), nor over an existing file without ``force``."""
    out = Path(out)
    check_writable_file(out, force, [*inputs, *decision.sources])
    if out.suffix.lower() in (".html", ".htm"):
        text = decision_page(decision)
    else:
        text = decision.markdown()
    with atomic_file(out, force=force) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return out


def decision_page(decision: Decision) -> str:
    """The decision as one self-contained HTML page, in the report's style."""
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Decision</title>'
            f"<style>{static_text('report.css')}</style></head><body><main class=\"wrap\">"
            + decision.html_section() + "</main>"
            '<footer class="wrap muted">Self-contained page written by biotok decide: no network access.</footer>'
            "</body></html>\n")


__all__ = ["decision_page", "write_decision"]
