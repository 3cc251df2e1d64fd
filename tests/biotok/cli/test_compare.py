"""`biotok compare` / `biotok report` on the command line: output, JSON, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._contract import assert_contract
from click.testing import CliRunner

from biotok.cli import main
from tests.conftest import REPO

TABLE1 = REPO / "corpora" / "terms" / "pubmedbert_table1.txt"
FRENCH = REPO / "corpora" / "terms" / "fr_biomedical.txt"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def tdir(shared_data: Path) -> str:
    return str(shared_data / "tokenizers")


def test_help_teaches() -> None:
    r = run("compare", "--help")
    assert r.exit_code == 0 and "Examples:" in r.output and "--terms" in r.output and "--field" in r.output
    r = run("report", "--help")
    assert r.exit_code == 0 and "Examples:" in r.output and "--force" in r.output


def test_terms_table_equals_raw_tokenizers(tdir: str) -> None:
    """The BERT and SciBERT columns are exactly the raw `tokenizers` segmentation of the vocab files."""
    from tokenizers import BertWordPieceTokenizer

    r = run("compare", "bert", "scibert", "--terms", str(TABLE1), "--tokenizers-dir", tdir, "--json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.output)
    rows = res["terms"]["terms"]
    assert len(rows) == 17 and rows[0]["term"] == "diabetes" and rows[-1]["category"] == "drug"
    for alias, folder in (("bert", "bert-base-uncased"), ("scibert", "scibert-scivocab-uncased")):
        raw = BertWordPieceTokenizer(str(Path(tdir) / folder / "vocab.txt"), lowercase=True)
        for row in rows:
            expected = raw.encode(row["term"], add_special_tokens=False).tokens
            assert row["segmentations"][alias]["pieces"] == expected, (alias, row["term"])
    cells = {row["term"]: row["segmentations"] for row in rows}
    assert cells["naloxone"]["bert"]["cell"] == "na-lo-xon-e"
    assert cells["naloxone"]["scibert"]["cell"] == "nal-oxo-ne"
    assert cells["diabetes"]["bert"]["cell"] == "✓"
    assert cells["RecA"]["bert"]["cell"] == "Rec-A"  # surface spelling kept, though BERT lowercases


def test_terms_table_on_terminal(tdir: str) -> None:
    r = run("compare", "bert", "scibert", "--terms", str(TABLE1), "--tokenizers-dir", tdir)
    assert r.exit_code == 0
    assert "hyper-tension" in r.output and "acetyl-transferase" in r.output and "Jaccard" in r.output


def test_french_terms_file_is_usable(tdir: str) -> None:
    r = run("compare", "camemberta", "camembertv2", "--terms", str(FRENCH), "--tokenizers-dir", tdir, "--json")
    assert r.exit_code == 0
    rows = json.loads(r.output)["terms"]["terms"]
    assert len(rows) >= 60
    assert {row["category"] for row in rows} >= {"médicament", "maladie", "anatomie"}


def test_corpus_compare_json_and_plot(tdir: str, sample_corpus: Path, tmp_path: Path) -> None:
    from biotok.formats import load as load_any
    from biotok.metrics import compare

    png = tmp_path / "frag.png"
    r = run("compare", "camembertv2", "bert", "--corpus", str(sample_corpus),
            "--max-lines", "15", "--tokenizers-dir", tdir, "--json", "--plot", str(png))
    assert r.exit_code == 0, r.output
    res = json.loads(r.output)
    got = res["corpus"]["tokenizers"]
    assert [t["name"] for t in got] == ["camembertv2", "bert"]
    lines = [l for l in sample_corpus.read_text(encoding="utf-8").splitlines() if l.strip()][:15]
    direct = compare([load_any(n, tokenizers_dir=tdir) for n in ("camembertv2", "bert")], lines)
    for t, d in zip(got, direct.results):
        assert t["fertility"] == pytest.approx(d.fertility) and t["pieces"] == d.pieces
    assert got[0]["relative_length"] == 1.0
    assert png.read_bytes().startswith(b"\x89PNG")
    pairs = res["vocab"]["pairs"]
    assert len(pairs) == 1 and 0 < pairs[0]["jaccard"] < 1


def test_corpus_compare_table(tdir: str, sample_corpus: Path) -> None:
    r = run("compare", "camemberta", "bert", "--corpus", str(sample_corpus), "--max-lines", "20",
            "--tokenizers-dir", tdir)
    assert r.exit_code == 0
    for label in ("fertility", "rel.len", "Renyi2.5", "vocab used", "duplicates"):
        assert label in r.output


def test_report_command(tdir: str, sample_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    args = ["report", "camemberta", "bert", "--corpus", str(sample_corpus), "--max-lines", "15",
            "--tokenizers-dir", tdir, "--out", str(out)]
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and "--force" in r.output and (out / "keep.txt").is_file()
    r = CliRunner().invoke(main, [*args, "--force"])  # --force replaces only a report folder
    assert r.exit_code == 2 and "not a biotok output" in r.output and (out / "keep.txt").is_file()
    (out / "report.md").write_text("an older report")
    r = run(*args, "--force")
    assert r.exit_code == 0 and (out / "report.md").is_file() and "5 figures" in r.output
    assert not (out / "keep.txt").exists()  # replaced as a whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]  # no temporary folder left


@pytest.mark.parametrize("make_args,needle", [
    (lambda t, d: ["compare", "no-such-alias", "bert"], "known alias"),
    (lambda t, d: ["compare", str(d / "missing" / "vocab.txt")], "not found"),
    (lambda t, d: ["compare", str(d / "bad.json")], "not valid JSON"),
    (lambda t, d: ["compare", str(d / "bad_vocab.txt")], "duplicate token"),
    (lambda t, d: ["compare", str(d / "mixed")], "mixes tokenizer formats"),
    (lambda t, d: ["compare", "bert", "--tokenizers-dir", t, "--corpus", str(d / "nope.txt")], "not found"),
    (lambda t, d: ["compare", "bert", "--tokenizers-dir", t, "--terms", str(d / "nope.txt")], "not found"),
    (lambda t, d: ["report", "bert", "--tokenizers-dir", t, "--corpus", str(d / "bad_vocab.txt"), "--out", str(d)], "the input"),
])
def test_bad_input_is_one_line_exit_2(tdir: str, tmp_path: Path, shared_data: Path, make_args, needle: str) -> None:
    (tmp_path / "bad.json").write_text('{"model": [', encoding="utf-8")
    (tmp_path / "bad_vocab.txt").write_text("[UNK]\na\na\n", encoding="utf-8")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "vocab.txt").write_bytes((shared_data / "tokenizers" / "bert-base-uncased" / "vocab.txt").read_bytes())
    (mixed / "vocab.json").write_text('{"a</w>": 0}', encoding="utf-8")
    (mixed / "merges.txt").write_text("a b\n", encoding="utf-8")
    r = CliRunner().invoke(main, make_args(tdir, tmp_path))
    assert_contract(r, "biotok", needle)


def test_plot_is_not_replaced_without_force(tdir: str, tmp_path: Path) -> None:
    """--plot replaced an existing file silently; like every other output it now needs --force."""
    png = tmp_path / "overlap.png"
    png.write_bytes(b"mine")
    r = CliRunner().invoke(main, ["compare", "camembertv2", "bert", "--tokenizers-dir", tdir, "--plot", str(png)])
    assert_contract(r, "biotok", "--force")
    assert png.read_bytes() == b"mine"
    r = run("compare", "camembertv2", "bert", "--tokenizers-dir", tdir, "--plot", str(png), "--force")
    assert r.exit_code == 0, r.output
    assert png.read_bytes().startswith(b"\x89PNG")


def test_plot_into_a_missing_folder_fails_fast(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["compare", "bert", "--plot", str(tmp_path / "no" / "x.png")])
    assert r.exit_code == 2 and "does not exist" in r.output


def test_empty_terms_file(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("# only a comment\n\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["compare", "bert", "--terms", str(tmp_path / "t.txt")])
    assert r.exit_code == 2 and "has no term" in r.output


# --- the decision page and the evidence options ----------------------------------------------------
def _evidence_inputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    bio = tmp_path / "ner.txt"
    bio.write_text("Une O\nhépatite B-DISO\nvirale I-DISO\n\nLe O\nparacétamol B-CHEM\n", encoding="utf-8")
    term = tmp_path / "terms.tsv"
    term.write_text("Cholécystectomie\tprocédure\nHépatosplénomégalie\tsigne\n", encoding="utf-8")
    sent = tmp_path / "sentences.txt"
    sent.write_text("Une cholécystectomie a été réalisée sous 2,5 mg/kg de kétamine.\n", encoding="utf-8")
    return bio, term, sent


def test_report_writes_the_page_and_the_evidence(tiny_unigram, tiny_wordpiece, sample_corpus: Path,
                                                 tmp_path: Path) -> None:
    import biotok

    bio, term, sent = _evidence_inputs(tmp_path)
    out = tmp_path / "rep"
    r = run("report", str(tiny_unigram), str(tiny_wordpiece), "--corpus", str(sample_corpus), "--max-lines", "200",
            "--terms", str(FRENCH), "--sentences", str(sent), "--entities", str(bio), "--terminology", str(term),
            "--out", str(out), "--no-progress")
    assert r.exit_code == 0, r.output
    assert "report.html" in r.output
    md = (out / "report.md").read_text(encoding="utf-8")
    for section in ("## Terms", "## Entities: ner.txt", "## Terminology: terms", "## Morpheme alignment",
                    "## Numbers and units", "[report.html](report.html)"):
        assert section in md
    page = (out / "report.html").read_text(encoding="utf-8")
    for sid in ('id="segmentation"', 'id="terms"', 'id="metrics"', 'id="figures"', 'id="entities"',
                'id="terminology"', 'id="morphemes"', 'id="numbers"', 'id="vocab"', 'id="provenance"'):
        assert sid in page
    assert "src=\"http" not in page and page.count("data:image/png;base64,") == 5
    # the given sentence is drawn with one span per piece of each tokenizer
    given = sent.read_text(encoding="utf-8").strip()
    block = page[page.index(given.replace("'", "&#x27;")):]
    block = block[: block.index('<div class="sentence"') if '<div class="sentence"' in block else block.index("</section>")]
    for k, path in enumerate((tiny_unigram, tiny_wordpiece)):
        row = block[block.index(f'data-tok="{k}" data-name='):]
        row = row[: row.index("</div></div>")]
        assert row.count('class="piece') == len(biotok.load(str(path)).encode(given).ids)
    # the command line is on the page, rebuilt from the options given
    assert "biotok report" in page and "--entities" in page and "--no-progress" in page


def test_report_page_command_leaves_out_resolved_defaults(tiny_unigram, sample_corpus: Path, tmp_path: Path) -> None:
    """--progress left out is resolved (bar when stderr is a terminal), yet not echoed: the page stays the same
    whether or not the report ran in a terminal."""
    out = tmp_path / "rep"
    r = run("report", str(tiny_unigram), "--corpus", str(sample_corpus), "--max-lines", "50", "--out", str(out))
    assert r.exit_code == 0, r.output
    page = (out / "report.html").read_text(encoding="utf-8")
    command = page[page.index('<div class="cmd"><code>'):]
    command = command[: command.index("</code>")]
    assert "--max-lines 50" in command and "progress" not in command


def test_report_no_html_and_bad_sentences(tiny_unigram, sample_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    r = run("report", str(tiny_unigram), "--corpus", str(sample_corpus), "--max-lines", "50", "--out", str(out),
            "--no-html")
    assert r.exit_code == 0 and (out / "report.md").is_file() and not (out / "report.html").exists()
    empty = tmp_path / "none.txt"
    empty.write_text("\n\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["report", str(tiny_unigram), "--corpus", str(sample_corpus), "--out",
                                  str(tmp_path / "x"), "--sentences", str(empty)])
    assert r.exit_code == 2 and "biotok: error: sentences file" in r.output and "has no sentence" in r.output
    r = CliRunner().invoke(main, ["report", str(tiny_unigram), "--corpus", str(sample_corpus), "--out",
                                  str(tmp_path / "y"), "--entities", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "unknown entity dataset" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "y").exists()


def test_compare_json_holds_the_evidence(tiny_unigram, tmp_path: Path) -> None:
    bio, term, _ = _evidence_inputs(tmp_path)
    r = run("compare", str(tiny_unigram), "--entities", str(bio), "--terminology", str(term), "--numbers", "--json")
    assert r.exit_code == 0, r.output
    ev = json.loads(r.stdout)["evidence"]  # the log lines ("entities: 2 mentions ...") go to stderr
    assert set(ev) == {"entities", "terminology", "morphemes", "numbers"}
    assert ev["entities"]["tokenizers"][0]["overall"]["entities"] == 2
    assert ev["terminology"]["terms"] == 2 and len(ev["numbers"]["cases"]) >= 50
    text = run("compare", str(tiny_unigram), "--numbers").output
    assert "## Numbers and units" in text and "numbers whole" in text
    assert "evidence" not in json.loads(run("compare", str(tiny_unigram), "--json").stdout)


@pytest.mark.shared
def test_compare_named_evidence(tdir: str, shared_data: Path) -> None:
    r = run("compare", "camemberta", "--tokenizers-dir", tdir, "--entities", "quaero", "--terminology", "atc",
            "--data-dir", str(shared_data / "corpora"), "--json")
    assert r.exit_code == 0, r.output
    ev = json.loads(r.stdout)["evidence"]
    assert sum(ev["entities"]["type_counts"]) == 16233 and ev["terminology"]["terms"] == 5680
