"""QUAERO with DrBenchmark's conversion of nested entities, rule by rule on hand-made documents,
then the counts on the shared corpus."""

from __future__ import annotations

from pathlib import Path

from biotok.datasets.brat import BratDocument, parse_ann
from biotok_train.tasks.quaero import drbenchmark_sentences, drbenchmark_tags, load_quaero_drb


def _doc(text: str, ann: str) -> BratDocument:
    return BratDocument("doc", text, parse_ann(ann, text, "doc"))


def test_longest_overlapping_span_wins_and_first_tag_sticks():
    text = "infarctus du myocarde aigu"
    ann = "T1\tANAT 13 21\tmyocarde\nT2\tDISO 0 21\tinfarctus du myocarde\nT3\tPHEN 0 9\tinfarctus\n"
    words, tags = drbenchmark_tags(_doc(text, ann))
    # T1 (nested, shorter, listed before T2) is dropped; T3 is shorter than T2 but listed after it:
    # DrBenchmark only compares a span with the later ones, so T3 stays, yet T2 tagged its word first
    assert words == ["infarctus", "du", "myocarde", "aigu"]
    assert tags == ["B-DISO", "I-DISO", "I-DISO", "O"]


def test_same_length_spans_both_kept_first_in_file_tags():
    text = "prévention des récidives"
    ann = "T1\tDISO 15 24\trécidives\nT2\tPHEN 15 24\trécidives\n"
    assert drbenchmark_tags(_doc(text, ann))[1] == ["O", "O", "B-DISO"]


def test_discontinuous_fragments_are_spans_of_one_entity():
    text = "douleurs très intenses chroniques"
    ann = "T1\tDISO 0 8;23 33\tdouleurs chroniques\n"
    assert drbenchmark_tags(_doc(text, ann))[1] == ["B-DISO", "O", "O", "B-DISO"]
    ann = "T1\tDISO 0 8;9 13\tdouleurs très\n"  # adjacent fragments read as one entity
    assert drbenchmark_tags(_doc(text, ann))[1] == ["B-DISO", "I-DISO", "O", "O"]


def test_whitespace_words_and_an_entity_inside_a_word():
    text = "l'administration d'insuline."
    ann = "T1\tCHEM 19 27\tinsuline\n"
    # 'd'insuline.' is one word; the entity starts inside it, so DrBenchmark counts the words
    # before its start ('l'administration', "d'") and tags the following word: here none is left
    assert drbenchmark_tags(_doc(text, ann)) == (["l'administration", "d'insuline."], ["O", "O"])


def test_emea_is_cut_after_each_period_word():
    text = "Prendre Aspirine . Pas de fièvre .\n"
    ann = "T1\tCHEM 8 16\tAspirine\nT2\tDISO 26 32\tfièvre\n"
    sents = drbenchmark_sentences(_doc(text, ann), split_at_periods=True)
    assert [s.words for s in sents] == [("Prendre", "Aspirine", "."), ("Pas", "de", "fièvre", ".")]
    assert [s.tags for s in sents] == [("O", "B-CHEM", "O"), ("O", "O", "B-DISO", "O")]
    assert len(drbenchmark_sentences(_doc(text, ann), split_at_periods=False)) == 1


def test_entity_cut_by_a_period_restarts_with_b():
    text = "voir Dr . Martin"
    ann = "T1\tLIVB 5 16\tDr . Martin\n"
    sents = drbenchmark_sentences(_doc(text, ann), split_at_periods=True)
    assert [s.tags for s in sents] == [("O", "B-LIVB", "I-LIVB"), ("B-LIVB",)]


def test_shared_quaero_counts(shared_data: Path):
    emea = load_quaero_drb(shared_data / "corpora", "EMEA")
    medline = load_quaero_drb(shared_data / "corpora", "MEDLINE")
    assert emea.sizes() == {"train": 475, "dev": 431, "test": 422}
    assert medline.sizes() == {"train": 833, "dev": 832, "test": 833}  # one title per document
    assert len(emea.labels) == len(medline.labels) == 10
    assert [sum(len(s.entities) for s in split) for split in (emea.train, medline.train)] == [2356, 2204]
