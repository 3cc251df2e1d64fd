"""report.html: the rendering from plain data, and what a person sees in a real (headless) browser."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from biotok.evidence import Evidence
from biotok.page import Column, Page, PieceView, Section, SegmentedText, Table, TokenizerInfo, piece_views
from biotok.report.assemble import report_page, vocab_data
from biotok.report.html import render_html
from biotok.report.samples import pick_sentences
from biotok.segment import Segmentation
from tests.browser import Browser, find_chromium

SENTENCES = [
    "Une hépatosplénomégalie chez l'enfant, traitée par 2,5 mg/kg de méthotrexate.",
    "Le patient présente une cholécystite aiguë <b>lithiasique</b> & fébrile.",
]


class Pieces(HTMLParser):
    """Counts span.piece elements per segmentation row (data-tok of the row)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, int]] = []  # (data-count, pieces seen)
        self._row = None
        self._depth = 0  # open <div>s
        self._row_depth = -1

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div":
            self._depth += 1
            if "seg-row" in (a.get("class") or "").split():
                self._row, self._row_depth = [a["data-count"], 0], self._depth
                self.rows.append(self._row)
        elif tag == "span" and "piece" in (a.get("class") or "").split() and self._row is not None:
            self._row[1] += 1

    def handle_endtag(self, tag):
        if tag == "div":
            if self._depth == self._row_depth:
                self._row, self._row_depth = None, -1
            self._depth -= 1


@pytest.fixture(scope="module")
def toks(tiny_unigram, tiny_wordpiece):
    import biotok

    return [biotok.load(str(tiny_unigram)), biotok.load(str(tiny_wordpiece))]


@pytest.fixture(scope="module")
def page(toks, sample_lines):
    from biotok.metrics import compare
    from biotok.evidence.numbers import number_segmentation
    from biotok.vocab import as_vocab, duplicates

    cmp = compare(toks, sample_lines[:300])
    vocabs = [as_vocab(t) for t in toks]
    return report_page(
        toks, subtitle="test", comparison=cmp, vocabs=vocabs, duplicates=[duplicates(v) for v in vocabs],
        sentences=[(s, "given") for s in SENTENCES], terms=[("cholécystectomie", "procédure"), ("paracétamol", "")],
        evidence=Evidence(numbers=number_segmentation(toks)), command="biotok report a b --corpus c --out r/",
        inputs=[("corpus", "c")],
    )


@pytest.fixture(scope="module")
def html_file(page, tmp_path_factory):
    p = tmp_path_factory.mktemp("page") / "report.html"
    p.write_text(render_html(page), encoding="utf-8")
    return p


def test_every_piece_is_one_span(page, toks):
    parser = Pieces()
    parser.feed(render_html(page))
    # sentence rows: one per (sentence, tokenizer), in order
    expected = [len(t.encode(s).ids) for s in SENTENCES for t in toks]
    assert [n for _, n in parser.rows] == expected
    assert [int(c) for c, _ in parser.rows] == expected


def test_the_page_is_self_contained_escaped_and_deterministic(page):
    html = render_html(page)
    assert render_html(page) == html
    assert not re.search(r'(src|href)="(https?:)?//', html) and "@import" not in html and "url(http" not in html
    assert "<b>lithiasique</b>" not in html and "&lt;b&gt;lithiasique" in html
    assert 'data:image/png;base64' not in html or html.count('<img') >= 1
    assert 'id="vocab-data"' in html and "biotok report a b --corpus c --out r/" in html


def test_json_in_a_script_cannot_close_it():
    page = Page("t", "", (TokenizerInfo("a"),), vocab=vocab_data([_V("a", {"</script><script>alert(1)"})]))
    html = render_html(page)
    assert "</script><script>alert" not in html and "<\\/script>" in html


class _V:
    def __init__(self, name, forms):
        self.name, self.forms = name, forms


def test_table_marks_the_best_cell_and_keeps_sort_values():
    t = Table("T", (Column("tok", "text"), Column("fertility", "num", "low"), Column("share", "pct", "high")),
              (("a", 1.5, 0.2), ("b", 1.2, float("nan"))))
    html = render_html(Page("t", "", (TokenizerInfo("a"),), sections=(Section("s", "S", tables=(t,)),)))
    assert '<td data-v="1.2" class="best">1.200</td>' in html
    assert ">n/a<" in html and '<td data-v="0.2">20.0%</td>' in html


def test_piece_views_keep_gaps_and_markers():
    s = Segmentation.from_offsets("le foie", ["▁le", "▁foi", "e"], [(0, 2), (2, 6), (6, 7)])
    views = piece_views(s, "▁")
    assert [(v.text, v.word_start, v.gap) for v in views] == [("le", True, ""), ("foi", True, " "), ("e", False, "")]
    wp = piece_views(Segmentation.from_offsets("foie", ["fo", "##ie"], [(0, 2), (2, 4)]), "##")
    assert [v.word_start for v in wp] == [True, False]


def test_pick_sentences_is_deterministic():
    lines = [f"Phrase numéro {i} du corpus, assez longue pour être choisie comme exemple de segmentation." for i in range(50)]
    a = pick_sentences(lines, 5)
    assert a == pick_sentences(list(reversed(lines)), 5) and len(a) == 5 and set(a) <= set(lines)
    assert pick_sentences(["court"], 5) == []


def test_segmented_rows_render_unknown_and_zero_width_pieces():
    item = SegmentedText("x", "", ((PieceView("▁", "▁"), PieceView("[UNK]", "[UNK]", unknown=True)),))
    html = render_html(Page("t", "", (TokenizerInfo("a"),), sections=(Section("s", "S", segmented=(item,)),)))
    assert 'class="piece a0 zw"' in html and 'class="piece a1 unk"' in html


# --- in a real browser ----------------------------------------------------------------------------
CHROMIUM = find_chromium()
needs_browser = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium found (apt-get install -y chromium, or set BIOTOK_CHROMIUM)"
)


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no Chromium found (apt-get install -y chromium, or set BIOTOK_CHROMIUM)")
    with Browser(CHROMIUM) as b:
        yield b


@needs_browser
def test_browser_shows_one_span_per_piece(browser, html_file, toks):
    browser.open(html_file.as_uri())
    counts = browser.js(
        "Array.from(document.querySelectorAll('#segmentation .seg-row')).map(r => r.querySelectorAll('span.piece').length)"
    )
    assert counts == [len(t.encode(s).ids) for s in SENTENCES for t in toks]
    # each piece is drawn: visible boxes with a width, in the sentence's order
    widths = browser.js("Array.from(document.querySelectorAll('#segmentation .seg-row')[0]"
                        ".querySelectorAll('span.piece')).map(e => e.getBoundingClientRect().width)")
    assert all(w > 0 for w in widths)
    text = browser.js("Array.from(document.querySelectorAll('#segmentation .seg-row')[0].querySelectorAll('.seg > span:not(.zw)'))"
                      ".map(e => e.textContent).join('')")
    assert text.replace(" ", "") == SENTENCES[0].replace(" ", "")  # bare markers (.zw) aside, the text itself


@needs_browser
def test_browser_sorts_a_table_on_click(browser, html_file):
    browser.open(html_file.as_uri())
    names = "Array.from(document.querySelectorAll('#metrics-t0 tbody tr')).map(r => r.cells[0].textContent)"
    values = "Array.from(document.querySelectorAll('#metrics-t0 tbody tr')).map(r => parseFloat(r.cells[2].dataset.v))"
    before = browser.js(names)
    browser.click("#metrics-t0 thead tr.cols th:nth-child(3)")  # fertility, ascending
    up = browser.js(values)
    assert up == sorted(up)
    browser.click("#metrics-t0 thead tr.cols th:nth-child(3)")  # again: descending
    down = browser.js(values)
    assert down == sorted(down, reverse=True)
    assert sorted(browser.js(names)) == sorted(before)
    assert browser.js("document.querySelector('#metrics-t0 thead tr.cols th:nth-child(3)').getAttribute('aria-sort')") == "descending"


@needs_browser
def test_browser_search_filters_the_vocabulary_diff(browser, html_file, toks):
    from biotok.vocab import as_vocab

    browser.open(html_file.as_uri())
    va, vb = (as_vocab(t) for t in toks)
    total = browser.js("document.getElementById('n-shared').textContent")
    assert total == f"({len(va.forms & vb.forms):,})"
    browser.type("#diff-search", "ique")
    items = browser.js("Array.from(document.querySelectorAll('#vocab li:not(.more)')).map(e => e.textContent)")
    assert items and all("ique" in f.lower() for f in items)
    shown = browser.js("document.getElementById('n-a').textContent")
    assert shown == f"({sum('ique' in f.lower() for f in va.forms - vb.forms):,})"


@needs_browser
def test_browser_screenshot(browser, html_file, tmp_path):
    browser.open(html_file.as_uri())
    shot = browser.screenshot(tmp_path / "report.png")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
