"""Readers: BRAT (QUAERO, Mantra) and BIO files against the MANIFEST counts, flattening, bad input."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from biotok.errors import CorpusError, DataError
from biotok.datasets.bio import bio_spans, read_bio
from biotok.datasets.brat import BratDocument, Entity, brat_to_sentences, flatten, parse_ann, read_brat, split_words
from biotok.datasets.named import MANTRA_TAR, QUAERO_TAR
from biotok_train.tasks import load


def _ent(tid: str, label: str, frags, line: int = 1) -> Entity:
    return Entity(tid, label, tuple(frags), "", line)


# --- flattening policy (docs/evaluation.md) ---------------------------------------------------
def test_flatten_keeps_outermost_and_first_fragment():
    ents = [
        _ent("T1", "DISO", [(15, 36)], 1),  # métastases hépatiques
        _ent("T2", "ANAT", [(26, 36)], 2),  # hépatiques (nested: dropped)
        _ent("T3", "DISO", [(41, 48), (60, 70)], 3),  # discontinuous: first fragment kept
        _ent("T4", "CHEM", [(50, 58)], 4),  # outside the first fragment: kept
        _ent("T5", "PROC", [(55, 65)], 5),  # crosses T4: the earlier one wins
    ]
    kept = flatten(ents)
    assert [(e.id, e.start, e.end) for e in kept] == [("T1", 15, 36), ("T3", 41, 48), ("T4", 50, 58)]


def test_flatten_same_span_keeps_first_in_file():
    kept = flatten([_ent("T2", "CHEM", [(0, 5)], 2), _ent("T1", "DISO", [(0, 5)], 1)])
    assert [e.id for e in kept] == ["T1"]


def test_brat_to_sentences_tags_words_and_splits_sentences():
    text = "Traitement des métastases hépatiques. Le cancer colorectal\nrechute"
    ann = "\n".join([
        "T1\tPROC 0 10\tTraitement",
        "T2\tDISO 15 36\tmétastases hépatiques",
        "T3\tANAT 26 36\thépatiques",
        "T4\tDISO 41 47;48 58\tcancer colorectal",
    ])
    doc = BratDocument("doc", text, parse_ann(ann, text, "doc"))
    sents = brat_to_sentences(doc)
    assert [s.words for s in sents] == [
        ("Traitement", "des", "métastases", "hépatiques", "."),
        ("Le", "cancer", "colorectal"),
        ("rechute",),
    ]
    assert sents[0].tags == ("B-PROC", "O", "B-DISO", "I-DISO", "O")
    assert sents[1].tags == ("O", "B-DISO", "O")  # discontinuous: first fragment only


def test_split_words_cuts_at_entity_boundaries():
    assert split_words("hépatiques", cuts=[5]) == [(0, 5), (5, 10)]
    assert split_words("l'administration,") == [(0, 1), (1, 2), (2, 16), (16, 17)]


def test_misaligned_offsets_name_file_and_line():
    with pytest.raises(CorpusError, match=r"doc\.ann:2: entity T2 .*misaligned"):
        parse_ann("T1\tDISO 0 4\tToux\nT2\tDISO 5 9\tfiev", "Toux fièvre", "doc")
    with pytest.raises(CorpusError, match=r"doc\.ann:1: .*outside the text"):
        parse_ann("T1\tDISO 0 40\tToux", "Toux", "doc")
    with pytest.raises(CorpusError, match=r"doc\.ann:1: malformed"):
        parse_ann("T1\tDISO zero 4\tToux", "Toux", "doc")


def test_brat_tar_missing_txt(tmp_path):
    tar_path = tmp_path / "c.tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        data = b"T1\tDISO 0 4\tToux\n"
        info = tarfile.TarInfo("c/a.ann")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(CorpusError, match=r"c/a\.txt is missing"):
        list(read_brat(tar_path))


def test_brat_folder(tmp_path):
    (tmp_path / "a.txt").write_text("Toux et fièvre.", encoding="utf-8")
    (tmp_path / "a.ann").write_text("T1\tDISO 0 4\tToux\nT2\tDISO 8 14\tfièvre\n", encoding="utf-8")
    [doc] = list(read_brat(tmp_path))
    [s] = brat_to_sentences(doc)
    assert s.tags == ("B-DISO", "O", "B-DISO", "O")


# --- BIO ---------------------------------------------------------------------------------------
def test_bio_bad_sequences(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("Le O\ndiabète I-ety\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"x\.txt:2: tag I-ety follows O"):
        list(read_bio(f))
    f.write_text("Le O\ndiabète X-ety\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"x\.txt:2: unknown tag 'X-ety'"):
        list(read_bio(f))
    f.write_text("Le\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"x\.txt:1: expected 'token tag'"):
        list(read_bio(f))
    with pytest.raises(CorpusError, match="file not found"):
        list(read_bio(tmp_path / "missing.txt"))


def test_bio_spans():
    assert bio_spans(["B-A", "I-A", "O", "B-B", "B-B", "I-B"]) == [("A", 0, 2), ("B", 3, 4), ("B", 4, 6)]


def test_bio_gz_roundtrip(tmp_path):
    f = tmp_path / "x.tsv.gz"
    with gzip.open(f, "wt", encoding="utf-8") as g:
        g.write("-DOCSTART-\tO\n\nA\tB-Disease\nB\tI-Disease\n\nC\tO\n")
    sents = list(read_bio(f, sep="\t"))
    assert [s.words for s in sents] == [("A", "B"), ("C",)]
    assert sents[0].entities == [("Disease", 0, 2)]


# --- shared corpora: MANIFEST counts -----------------------------------------------------------
def _count(path: Path, sep=None) -> tuple[int, int, int]:
    sents = list(read_bio(path, sep))
    return len(sents), sum(len(s.words) for s in sents), sum(len(s.entities) for s in sents)


def test_e3c_manifest_counts(shared_data):
    e3c = shared_data / "corpora" / "e3c-fr"
    assert _count(e3c / "layer1_clinical_entities_iob_train.txt.gz") == (504, 13238, 569)
    assert _count(e3c / "layer1_clinical_entities_iob_test.txt.gz") == (605, 16018, 695)


def test_ncbi_manifest_counts(shared_data):
    ncbi = shared_data / "corpora" / "ncbi-disease"
    assert _count(ncbi / "train.tsv.gz", "\t") == (5432, 136086, 5145)
    assert _count(ncbi / "devel.tsv.gz", "\t") == (923, 23969, 787)
    assert _count(ncbi / "test.tsv.gz", "\t") == (940, 24497, 960)


@pytest.mark.slow
def test_bc5cdr_manifest_counts(shared_data):
    sents = list(read_bio(shared_data / "corpora" / "bionlp-ner-en" / "BC5CDR-IOB_train.tsv.gz", "\t"))
    types = [t for s in sents for t, _, _ in s.entities]
    assert (len(sents), types.count("Chemical"), types.count("Disease")) == (4560, 5203, 4182)


def test_quaero_manifest_counts(shared_data):
    tar = shared_data / "corpora" / QUAERO_TAR
    want = {("train", "MEDLINE"): (833, 2994), ("train", "EMEA"): (11, 2695), ("dev", "MEDLINE"): (832, 2977),
            ("dev", "EMEA"): (12, 2260), ("test", "MEDLINE"): (833, 3103), ("test", "EMEA"): (15, 2204)}
    docs = list(read_brat(tar, "corpus/"))
    for (split, part), (n_docs, n_ents) in want.items():
        sel = [d for d in docs if d.name.startswith(f"corpus/{split}/{part}/")]
        assert (len(sel), sum(len(d.entities) for d in sel)) == (n_docs, n_ents)
    groups = {e.label for d in docs for e in d.entities}
    assert groups == {"ANAT", "CHEM", "DEVI", "DISO", "GEOG", "LIVB", "OBJC", "PHEN", "PHYS", "PROC"}
    assert any(e.discontinuous for d in docs for e in d.entities)
    # every sentence is valid IOB2 and every kept entity covers whole words
    for d in docs[:200]:
        for s in brat_to_sentences(d):
            assert len(s.words) == len(s.tags)
            for i, t in enumerate(s.tags):
                assert not (t.startswith("I-") and (i == 0 or s.tags[i - 1][2:] != t[2:]))


def test_mantra_french_counts(shared_data):
    docs = list(read_brat(shared_data / "corpora" / MANTRA_TAR, "Mantra-GSC/French/"))
    by_part: dict[str, tuple[int, int]] = {}
    for d in docs:
        part = d.name.split("/")[2].split("_")[0]
        n, e = by_part.get(part, (0, 0))
        by_part[part] = (n + 1, e + len(d.entities))
    assert by_part == {"EMEA": (100, 431), "Medline": (100, 279), "Patents": (50, 342)}
    assert {e.label for d in docs for e in d.entities} <= {
        "ANAT", "CHEM", "DEVI", "DISO", "GEOG", "LIVB", "OBJC", "PHEN", "PHYS", "PROC"}


def test_load_dataset_names(shared_data):
    ds = load("e3c", shared_data / "corpora")
    assert len(ds.train) + len(ds.dev) == 504 and len(ds.test) == 605
    assert ds.labels == ("ety",) and ds.spec is not None and ds.spec.name == "e3c"
    with pytest.raises(DataError, match="unknown task 'nope'"):
        load("nope", shared_data / "corpora")
    with pytest.raises(CorpusError, match="unknown dataset"):
        load("no/such/folder", shared_data / "corpora")


# --- FrenchMedMCQA (sentence-level classification) ---------------------------------------------
def test_frenchmedmcqa_counts(shared_data):
    from collections import Counter

    ds = load("frenchmedmcqa-nbr", shared_data / "corpora")
    assert (len(ds.train), len(ds.dev), len(ds.test)) == (2171, 312, 622)  # MANIFEST: 3,105 questions
    assert ds.labels == ("1", "2", "3", "4", "5")
    assert Counter(e.label for e in ds.train) == {"3": 718, "1": 595, "2": 528, "4": 296, "5": 34}
    assert "(a) " in ds.train[0].text and "(e) " in ds.train[0].text


def test_frenchmedmcqa_bad_items(tmp_path):
    from biotok_train.tasks.frenchmedmcqa import read_frenchmedmcqa

    five = '"answers": {"a": "v", "b": "w", "c": "x", "d": "y", "e": "z"}'
    f = tmp_path / "q.json"
    f.write_text(f'[{{"question": "Q", {five}, "correct_answers": ["a"]}}, {{"question": "R"}}]', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"q\.json#1: item needs"):
        list(read_frenchmedmcqa(f))
    f.write_text(f'[{{"question": "Q", {five}, "correct_answers": []}}]', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"q\.json#0: correct_answers \[\] must be 1 to 5"):
        list(read_frenchmedmcqa(f))
    f.write_text('[{"question": "Q", "answers": {"a": "x"}, "correct_answers": ["a"]}]', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"q\.json#0: 'answers' must map the letters a to e"):
        list(read_frenchmedmcqa(f))
    f.write_text("[{", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"q\.json:1: invalid JSON"):
        list(read_frenchmedmcqa(f))


def test_one_bio_file_splits_the_same_wherever_it_lies(tmp_path):
    """The dev/test hold-out hashes sentence content, not the file path: a copy elsewhere (another
    machine, another checkout) gives the same train/dev/test."""
    text = "".join(f"Le O\npatient{i} O\na O\nune B-ety\nfièvre{i} I-ety\n. O\n\n" for i in range(200))
    a, b = tmp_path / "a" / "task.bio", tmp_path / "elsewhere" / "deeper" / "task.bio"
    for f in (a, b):
        f.parent.mkdir(parents=True)
        f.write_text(text, encoding="utf-8")
    da, db = load(str(a)), load(str(b))
    for split in ("train", "dev", "test"):
        assert [s.words for s in getattr(da, split)] == [s.words for s in getattr(db, split)]
    assert len(da.test) > 0 and len(da.dev) > 0 and len(da.train) > len(da.test)
