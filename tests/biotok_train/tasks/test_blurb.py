"""BLURB readers: MANIFEST / BLURB counts on the shared data, and bad rows named by file:line."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from biotok.errors import CorpusError, DataError
from biotok_train.tasks import blurb
from biotok.datasets.bio import Sentence


def mentions(split) -> int:
    return sum(len(s.entities) for s in split)


@pytest.fixture(scope="module")
def corpora(shared_data: Path) -> Path:
    return shared_data / "corpora"


# --- counts (MANIFEST section 4 and BLURB's table) ------------------------------------------

def test_biosses_counts(corpora):
    t = blurb.load_biosses(corpora)
    assert t.sizes() == {"train": 64, "dev": 16, "test": 20}
    assert sum(e.score for e in t.train) / 64 == pytest.approx(2.40, abs=0.005)
    assert t.task_type == "pair-regression"


def test_gad_counts(corpora):
    t = blurb.load_gad(corpora)
    assert t.sizes() == {"train": 4261, "dev": 535, "test": 534}
    assert Counter(e.label for e in t.train) == {"1": 2227, "0": 2034}
    assert Counter(e.label for e in t.test) == {"1": 281, "0": 253}


def test_hoc_counts_and_groups(corpora):
    t = blurb.load_hoc(corpora)
    assert t.sizes() == {"train": 12119, "dev": 1798, "test": 3547}
    assert [len({e.group for e in s}) for s in (t.train, t.dev, t.test)] == [1295, 186, 371]
    per_label = Counter(lab for e in t.train for lab in e.labels)
    assert [per_label[lab] for lab in blurb.HOC_LABELS] == [448, 185, 136, 219, 268, 523, 238, 602, 674, 375]
    assert t.train[0].group == "22239943" and t.train[0].id == "22239943_s0"


def test_staged_chemprot_and_ddi_tsv_counts(corpora):
    cp = list(blurb.read_relation_tsv(corpora / "blurb-en/chemprot/dev.tsv.gz", blurb.CHEMPROT_LABELS))
    assert len(cp) == 11268
    assert Counter(e.label for e in cp) == {
        "false": 8860, "CPR:4": 1091, "CPR:3": 546, "CPR:9": 457, "CPR:6": 199, "CPR:5": 115,
    }
    dev = list(blurb.read_relation_tsv(corpora / "blurb-en/DDI/dev.tsv.gz", blurb.DDI_LABELS))
    test = list(blurb.read_relation_tsv(corpora / "blurb-en/DDI/test.tsv.gz", blurb.DDI_LABELS))
    assert (len(dev), len(test)) == (2496, 5716)
    assert Counter(e.label for e in test) == {
        "DDI-false": 4737, "DDI-effect": 360, "DDI-mechanism": 302, "DDI-advise": 221, "DDI-int": 96,
    }


def test_jnlpba_counts(corpora):
    t = blurb.load_jnlpba(corpora)
    assert [mentions(s) for s in (t.train, t.dev, t.test)] == [46750, 4551, 8662]
    assert t.sizes() == {"train": 16807, "dev": 1739, "test": 3856}
    assert t.labels == ("entity",)


def test_bc5_chem_and_disease_counts(corpora):
    chem = blurb.load_bc5(corpora, "Chemical")
    dis = blurb.load_bc5(corpora, "Disease")
    assert [mentions(s) for s in (chem.train, chem.dev, chem.test)] == [5203, 5347, 5385]  # = BLURB
    # BLURB's BC5-disease dev has 4,244 mentions: its MTL file differs from the joint BC5CDR file by 2
    assert [mentions(s) for s in (dis.train, dis.dev, dis.test)] == [4182, 4246, 4424]
    assert chem.labels == ("Chemical",) and dis.labels == ("Disease",)


def test_ncbi_blurb_drops_the_duplicated_abstract(corpora):
    t = blurb.load_ncbi_blurb(corpora)
    assert [mentions(s) for s in (t.train, t.dev, t.test)] == [5134, 787, 960]  # = BLURB
    assert len(t.train) == 5432 - 8


def test_bc2gm_counts(corpora):
    t = blurb.load_bc2gm(corpora)
    assert [mentions(s) for s in (t.train, t.dev, t.test)] == [15197, 3061, 6325]


# --- helpers -----------------------------------------------------------------------------

def S(*words_tags: str) -> Sentence:
    words = tuple(w.split("/")[0] for w in words_tags)
    tags = tuple(w.split("/")[1] for w in words_tags)
    return Sentence(words, tags)


def test_drop_repeated_blocks_keeps_single_repeats():
    a, b, c, d = S("a/O"), S("b/B-X"), S("c/O"), S("d/O")
    assert blurb.drop_repeated_blocks([a, b, c, a, b, c, d]) == [a, b, c, d]
    assert blurb.drop_repeated_blocks([a, a, b]) == [a, a, b]  # a one-sentence repeat is kept
    assert blurb.drop_repeated_blocks([a, b, d, a, b]) == [a, b, d, a, b]  # not adjacent


def test_keep_types():
    s = S("x/B-Chemical", "y/B-Disease", "z/I-Disease")
    assert blurb.keep_types([s], {"Disease"})[0].tags == ("O", "B-Disease", "I-Disease")


# --- bad rows ----------------------------------------------------------------------------

def write(path: Path, text: str) -> Path:
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_gad_bad_label_and_missing_mask(tmp_path):
    f = write(tmp_path / "gad.tsv", "index\tsentence\tlabel\n0\t@GENE$ causes @DISEASE$.\t1\n1\t@GENE$ x\t2\n")
    with pytest.raises(CorpusError, match=r"gad.tsv:3: label '2' not in the label set"):
        list(blurb.read_gad(f))
    f = write(tmp_path / "gad2.tsv.gz", "index\tsentence\tlabel\n0\t@GENE$ alone\t1\n")
    with pytest.raises(CorpusError, match=r"gad2.tsv.gz:2: a relation sentence needs both entity masks"):
        list(blurb.read_gad(f))


def test_relation_tsv_wrong_column_count(tmp_path):
    f = write(tmp_path / "dev.tsv", 'p.T1.T2\t@CHEMICAL$ "binds" @GENE$\tfalse\np.T3.T4\tno label\n')
    with pytest.raises(CorpusError, match=r"dev.tsv:2: expected 3 tab-separated columns"):
        list(blurb.read_relation_tsv(f, blurb.CHEMPROT_LABELS))


def test_relation_tsv_keeps_literal_quotes(tmp_path):
    f = write(tmp_path / "dev.tsv", 'p.T1.T2\t"@CHEMICAL$" binds @GENE$ "x\tCPR:3\n')
    (ex,) = blurb.read_relation_tsv(f, blurb.CHEMPROT_LABELS)
    assert ex.text == '"@CHEMICAL$" binds @GENE$ "x' and ex.label == "CPR:3"
    f = write(tmp_path / "over.tsv", "p.T1.T2\tthe @CHEM-GENE$ complex\tfalse\n")
    assert [e.text for e in blurb.read_relation_tsv(f, blurb.CHEMPROT_LABELS)] == ["the @CHEM-GENE$ complex"]


def test_biosses_bad_score_and_header(tmp_path):
    f = write(tmp_path / "b.tsv", "pair_id\tsent1\tsent2\tscore\n1\ta\tb\t5.5\n")
    with pytest.raises(CorpusError, match=r"b.tsv:2: score 5.5 outside 0..4"):
        list(blurb.read_biosses(f))
    f = write(tmp_path / "h.tsv", "id\ta\tb\tscore\n1\ta\tb\t1\n")
    with pytest.raises(CorpusError, match=r"h.tsv:1: expected the header pair_id"):
        list(blurb.read_biosses(f))


def test_hoc_bad_labels_and_index(tmp_path):
    ok = ",".join(f"{i}_0" for i in range(10))
    f = write(tmp_path / "hoc.tsv", f"labels\tsentence\tindex\n{ok}\tA sentence .\t123_s0\n{ok}\tB .\t123-s1\n")
    with pytest.raises(CorpusError, match=r"hoc.tsv:3: index '123-s1' is not <PMID>_s<n>"):
        list(blurb.read_hoc(f))
    bad = ",".join(f"{i}_0" for i in range(9))
    f = write(tmp_path / "hoc2.tsv", f"labels\tsentence\tindex\n{bad}\tA .\t1_s0\n")
    with pytest.raises(CorpusError, match=r"hoc2.tsv:2: labels"):
        list(blurb.read_hoc(f))


def test_jnlpba_bad_tags(tmp_path):
    f = write(tmp_path / "j.tsv", "-DOCSTART- 1\n\nIL-2\tB\ngene\tI\n\nthe\tO\nx\tI\n")
    with pytest.raises(CorpusError, match=r"j.tsv:7: I follows O"):
        list(blurb.read_jnlpba(f))
    f = write(tmp_path / "k.tsv", "IL-2\tB-protein\n")
    with pytest.raises(CorpusError, match=r"k.tsv:1: tag 'B-protein' is not B, I or O"):
        list(blurb.read_jnlpba(f))
    f = write(tmp_path / "ok.tsv", "-DOCSTART- 1\n\nIL-2\tB\ngene\tI\n")
    (s,) = blurb.read_jnlpba(f)
    assert s.tags == ("B-entity", "I-entity") and s.source.endswith("ok.tsv:3")


def test_missing_corpora_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("BIOTOK_SHARED_DATA", raising=False)
    with pytest.raises(DataError, match="needs the corpora folder"):
        blurb.load_gad(None)
    with pytest.raises(DataError, match=r"GAD/train.tsv.gz not found"):
        blurb.load_gad(tmp_path)


def test_broken_gzip_is_one_error(tmp_path):
    f = tmp_path / "gad.tsv.gz"
    f.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(CorpusError, match="gad.tsv.gz"):
        list(blurb.read_gad(f))
