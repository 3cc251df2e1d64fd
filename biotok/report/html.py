"""``report.html``: the vocabulary decision page rendered from plain data, one self-contained file.

No network and no CDN: the CSS and JavaScript (``biotok/report/static/``, package data) are
inlined, figures are inline PNG (base64), so the file opens offline and can be attached to an
e-mail. Each piece of a segmentation is a ``<span class="piece">`` with ``data-tok``/``data-i``
attributes, word-start markers shown. :func:`render_html` turns a :class:`biotok.page.Page` into
the HTML string (same data, same bytes).
"""

from __future__ import annotations

import base64
import html
import json
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from biotok.page import Column, Examples, Figure, Page, PieceView, Section, SegmentedText, Table

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")  # matplotlib's C0..C9: the same colour per tokenizer as the figures


@lru_cache(maxsize=None)
def static_text(name: str) -> str:
    """A file of ``biotok/report/static/`` (package data), e.g. ``report.css``."""
    return resources.files("biotok.report").joinpath("static", name).read_text(encoding="utf-8")


# --- rendering ----------------------------------------------------------------------------------------
def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _fmt(v: Any, kind: str) -> str:
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "n/a"
    if kind == "text":
        return str(v)
    if kind == "int":
        return f"{int(v):,}"
    if kind == "pct":
        return f"{100 * v:.1f}%"
    if kind == "pct2":
        return f"{100 * v:.2f}%"
    if kind == "num2":
        return f"{v:,.2f}"
    if kind == "num1":
        return f"{v:,.1f}"
    return f"{v:,.3f}"


def _sort_key(v: Any, kind: str) -> str:
    if kind == "text":
        return _e(v)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return repr(float(v))


def _best(rows: Sequence[Sequence[Any]], j: int, better: str | None) -> set[int]:
    if better not in ("low", "high") or len(rows) < 2:
        return set()
    vals = [(i, r[j]) for i, r in enumerate(rows)
            if isinstance(r[j], (int, float)) and not (isinstance(r[j], float) and math.isnan(r[j]))]
    if len(vals) < 2:
        return set()
    target = min(v for _, v in vals) if better == "low" else max(v for _, v in vals)
    if all(v == target for _, v in vals):
        return set()
    return {i for i, v in vals if v == target}


def _group_row(columns: Sequence[Column]) -> str:
    if not any(c.group for c in columns):
        return ""
    cells, j = [], 0
    while j < len(columns):
        g = columns[j].group
        k = j
        while k < len(columns) and columns[k].group == g:
            k += 1
        cells.append(f'<th class="grp" colspan="{k - j}">{_e(g)}</th>' if g else f'<th class="grp" colspan="{k - j}"></th>')
        j = k
    return "<tr>" + "".join(cells) + "</tr>"


def render_table(t: Table, idx: str) -> str:
    best = {j: _best(t.rows, j, c.better) for j, c in enumerate(t.columns)}
    head = "".join(
        f'<th data-kind="{_e(c.kind)}"{" class=txt" if c.kind == "text" else ""} tabindex="0" '
        f'title="{_e(c.help or "click to sort")}">'
        f'{_e(c.label)}{"" if not c.better else ("<span class=dir>↓ better</span>" if c.better == "low" else "<span class=dir>↑ better</span>")}'
        f'</th>'
        for c in t.columns
    )
    body = []
    for i, row in enumerate(t.rows):
        cells = []
        for j, (c, v) in enumerate(zip(t.columns, row)):
            cls = ' class="best"' if i in best[j] else (' class="txt"' if c.kind == "text" else "")
            dot = ""
            if j == 0 and t.row_colours and i < len(t.row_colours) and t.row_colours[i] is not None:
                dot = f'<span class="dot" style="--c:{PALETTE[t.row_colours[i] % len(PALETTE)]}"></span>'
            cells.append(f'<td data-v="{_sort_key(v, c.kind)}"{cls}>{dot}{_e(_fmt(v, c.kind))}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f'<p class="caption">{_e(t.caption)}</p>' if t.caption else ""
    return (f'<div class="table-card"><h3>{_e(t.title)}</h3><div class="scroll"><table class="sortable" id="{_e(idx)}">'
            f"<thead>{_group_row(t.columns)}<tr class=\"cols\">{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>{cap}</div>")


def render_pieces(pieces: Sequence[PieceView], tok: int) -> str:
    out = []
    for i, p in enumerate(pieces):
        if p.gap:
            out.append(f'<span class="gap">{_e(p.gap)}</span>')
        cls = ["piece", f"a{i % 2}"]
        if p.word_start:
            cls.append("ws")
        if p.word_end:
            cls.append("we")
        if p.unknown:
            cls.append("unk")
        if p.text == p.piece and p.piece.strip("▁Ġ") == "" and p.piece:
            cls.append("zw")
        out.append(f'<span class="{" ".join(cls)}" data-tok="{tok}" data-i="{i}" title="{_e(p.piece)}">{_e(p.text)}</span>')
    return "".join(out)


def render_segmented(items: Sequence[SegmentedText], names: Sequence[str], layout: str, sid: str,
                     grid_label: str = "term") -> str:
    if layout == "grid":
        head = "".join(f'<th><span class="dot" style="--c:{PALETTE[k % len(PALETTE)]}"></span>{_e(n)}</th>'
                       for k, n in enumerate(names))
        rows = []
        for it in items:
            cells = "".join(
                f'<td class="segcell" style="--c:{PALETTE[k % len(PALETTE)]}" data-tok="{k}" data-count="{len(ps)}">'
                f'<span class="seg">{render_pieces(ps, k)}</span><span class="count">{len(ps)}</span></td>'
                for k, ps in enumerate(it.pieces)
            )
            lab = f'<div class="cat">{_e(it.label)}</div>' if it.label else ""
            rows.append(f'<tr><td class="term">{_e(it.text)}{lab}</td>{cells}</tr>')
        return (f'<div class="scroll"><table class="grid" id="{_e(sid)}-grid"><thead><tr><th>{_e(grid_label)}</th>{head}</tr></thead>'
                f'<tbody>{"".join(rows)}</tbody></table></div>')
    blocks = []
    for n, it in enumerate(items):
        rows = []
        for k, ps in enumerate(it.pieces):
            rows.append(
                f'<div class="seg-row" style="--c:{PALETTE[k % len(PALETTE)]}" data-tok="{k}" data-name="{_e(names[k])}" '
                f'data-count="{len(ps)}"><div class="seg-label"><span class="dot"></span>{_e(names[k])}'
                f'<span class="count">{len(ps)} pieces</span></div><div class="seg">{render_pieces(ps, k)}</div></div>'
            )
        tag = f'<span class="tag">{_e(it.label)}</span>' if it.label else ""
        blocks.append(f'<div class="sentence" data-idx="{n}"><div class="src">{tag}<span class="src-text">{_e(it.text)}</span></div>'
                      f'{"".join(rows)}</div>')
    return "".join(blocks)


def render_examples(ex: Examples, compact: bool = False) -> str:
    rows = []
    for label, per in ex.rows:
        cells = "".join(
            f'<div class="ex-cell" style="--c:{PALETTE[k % len(PALETTE)] if k is not None else "#98a2b3"}">'
            + ("" if compact else f'<span class="dot"></span><span class="ex-name">{_e(name)}</span> ')
            + "".join(f'<span class="piece a{i % 2}{" unk" if p in ("[UNK]", "<unk>") else ""}">{_e(p)}</span>'
                      for i, p in enumerate(pieces))
            + "</div>"
            for k, name, pieces in per
        )
        rows.append(f'<div class="ex-row"><div class="ex-label">{_e(label)}</div><div class="ex-cells">{cells}</div></div>')
    cap = f'<p class="caption">{_e(ex.caption)}</p>' if ex.caption else ""
    cls = "examples compact" if compact else "examples"
    if ex.columns > 1:
        cls += " multi"
    first = ex.rows[0][1][0][0] if ex.rows and ex.rows[0][1] else None
    style = f' style="--c:{PALETTE[first % len(PALETTE)]}"' if compact and first is not None else ""
    return (f'<div class="table-card"{style}><h3>{_e(ex.title)}</h3>{cap}<div class="{cls}">{"".join(rows)}</div></div>')


def render_figure(f: Figure) -> str:
    data = base64.b64encode(f.png).decode("ascii")
    cap = f"<figcaption>{_e(f.caption)}</figcaption>" if f.caption else ""
    return (f'<figure class="fig"><h3>{_e(f.title)}</h3><img alt="{_e(f.title)}" src="data:image/png;base64,{data}">'
            f"{cap}</figure>")


def _json_script(obj: Any, sid: str) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="{sid}">{text}</script>'



def _colour(k: int) -> str:
    return PALETTE[k % len(PALETTE)]


def render_header(page: Page) -> str:
    """The title band (title, subtitle, one chip per tokenizer) and the table of contents."""
    chips = "".join(
        f'<span class="chip" style="--c:{_colour(k)}"><span class="dot"></span><b>{_e(t.name)}</b>'
        f'<span class="muted">{t.vocab_size:,} · {_e(t.marker or "no marker")}'
        f'{" · lower" if t.lowercase else ""}</span></span>'
        for k, t in enumerate(page.tokenizers)
    )
    toc = ['<a href="#summary">Summary</a>'] + [f'<a href="#{_e(s.id)}">{_e(s.title)}</a>' for s in page.sections]
    if page.vocab is not None:
        toc.append('<a href="#vocab">Vocabulary diff</a>')
    toc.append('<a href="#provenance">Provenance</a>')
    return (f'<header class="top"><div class="wrap"><div class="brand">biotok</div><h1>{_e(page.title)}</h1>'
            f'<p class="sub">{_e(page.subtitle)}</p><div class="chips">{chips}</div></div></header>'
            f'<nav class="toc"><div class="wrap">{"".join(toc)}</div></nav>')


def render_cards(page: Page) -> str:
    """The summary: one card of (label, value) lines per tokenizer."""
    cards = "".join(
        f'<div class="card" style="--c:{_colour(k)}"><div class="card-head"><span class="dot"></span>{_e(name)}</div>'
        + "".join(f'<div class="kv"><span>{_e(l)}</span><b>{_e(v)}</b></div>' for l, v in items) + "</div>"
        for k, (name, items) in enumerate(page.cards)
    )
    return f'<section id="summary"><h2>Summary</h2><div class="cards">{cards}</div></section>'


def render_section(s: Section, names: Sequence[str]) -> str:
    """One section: lead, segmentations (before the tables, or after them for a grid), tables,
    examples, figures, note."""
    body = [f'<p class="lead">{_e(s.lead)}</p>' if s.lead else ""]
    seg = render_segmented(s.segmented, names, s.segmented_layout, s.id, s.grid_label) if s.segmented else ""
    if s.segmented_layout != "grid":
        body.append(seg)
    body += [render_table(t, f"{s.id}-t{j}") for j, t in enumerate(s.tables)]
    if s.segmented_layout == "grid":
        body.append(seg)
    if s.examples_layout == "columns":
        body.append('<div class="ex-grid">' + "".join(render_examples(e, compact=True) for e in s.examples) + "</div>")
    else:
        body += [render_examples(e) for e in s.examples]
    if s.figures:
        body.append('<div class="figs">' + "".join(render_figure(f) for f in s.figures) + "</div>")
    if s.note:
        body.append(f'<p class="note">{_e(s.note)}</p>')
    return f'<section id="{_e(s.id)}"><h2>{_e(s.title)}</h2>{"".join(body)}</section>'


def render_vocab_diff(page: Page) -> str:
    """The searchable vocabulary diff (filled in by report.js from the embedded JSON), or ''."""
    if page.vocab is None:
        return ""
    v = page.vocab
    opts = "".join(f'<option value="{k}">{_e(n)}</option>' for k, n in enumerate(v.names))
    return (
        '<section id="vocab"><h2>Vocabulary diff</h2>'
        '<p class="lead">Marker-free forms (▁mot, ##mot, Ġmot and mot&lt;/w&gt; are all <i>mot</i>). '
        'Pick two vocabularies; type to filter. Lists show the first 400 matches, alphabetically.</p>'
        f'<div class="diff-controls"><label>A <select id="diff-a">{opts}</select></label>'
        f'<label>B <select id="diff-b">{opts}</select></label>'
        '<input id="diff-search" type="search" placeholder="search pieces, e.g. hépat" autocomplete="off">'
        '<span id="diff-summary" class="muted"></span></div>'
        '<div class="diff-cols">'
        '<div class="diff-col"><h3>shared <span class="n" id="n-shared"></span></h3><ul id="list-shared"></ul></div>'
        '<div class="diff-col"><h3>only in <span id="name-a"></span> <span class="n" id="n-a"></span></h3><ul id="list-a"></ul></div>'
        '<div class="diff-col"><h3>only in <span id="name-b"></span> <span class="n" id="n-b"></span></h3><ul id="list-b"></ul></div>'
        "</div>"
        + _json_script({"names": list(v.names), "forms": list(v.forms), "masks": list(v.masks)}, "vocab-data")
        + "</section>"
    )


def render_provenance(page: Page) -> str:
    """The command line, the inputs, the tokenizers' sources and the library versions."""
    prov_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(val)}</td></tr>" for k, val in page.inputs)
    ver_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(val)}</td></tr>" for k, val in page.versions)
    tok_rows = "".join(
        f'<tr><th><span class="dot" style="--c:{_colour(k)}"></span>{_e(t.name)}</th><td>{_e(t.source)}</td></tr>'
        for k, t in enumerate(page.tokenizers)
    )
    return (
        '<section id="provenance"><h2>Provenance</h2>'
        f'<div class="cmd"><code>{_e(page.command)}</code></div>'
        '<div class="prov-grid">'
        f'<div class="table-card"><h3>Inputs</h3><table class="kvt">{prov_rows}</table></div>'
        f'<div class="table-card"><h3>Tokenizers</h3><table class="kvt">{tok_rows}</table></div>'
        f'<div class="table-card"><h3>Versions</h3><table class="kvt">{ver_rows}</table></div>'
        "</div></section>"
    )


def render_html(page: Page) -> str:
    """The whole page as one HTML string (deterministic: same data, same bytes)."""
    names = [t.name for t in page.tokenizers]
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(page.title)}</title><style>{static_text('report.css')}</style></head><body>"
        + render_header(page)
        + '<main class="wrap">'
        + render_cards(page)
        + "".join(render_section(s, names) for s in page.sections) + render_vocab_diff(page) + render_provenance(page)
        + "</main>"
        '<footer class="wrap muted">Self-contained page written by biotok: no network access, no external files.</footer>'
        f"<script>{static_text('report.js')}</script></body></html>\n"
    )


def write_html(page: Page, path: str | Path) -> Path:
    """Render ``page`` to ``path`` (the caller decides where: report folders are written atomically)."""
    p = Path(path)
    p.write_text(render_html(page), encoding="utf-8")
    return p


__all__ = ["PALETTE", "render_examples", "render_figure", "render_html", "render_pieces", "render_section",
           "render_segmented", "render_table", "static_text", "write_html"]
