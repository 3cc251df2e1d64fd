"""Evaluation sentences kept out of pretraining text (normalised comparison, counts returned)."""

from __future__ import annotations

import pytest

from biotok.errors import DataError
from biotok_train.pretrain.exclude import (
    eval_sentences, example_texts, exclude_sentences, normalize_sentence, split_sentences,
)

TEST_SENTENCES = [
    "Germline mutations in BRCA1 are associated with breast cancer .",  # CoNLL tokens
    "IL - 2 ( n = 5 ) was measured in all patients .",
    "Results",  # short: only an exact line is dropped
]


def test_normalize_makes_tokenized_and_raw_text_equal():
    assert normalize_sentence("IL - 2 ( n = 5 ) .") == normalize_sentence("IL-2 (n=5).") == "il 2 n 5"
    assert normalize_sentence("Ｃａｆé_x") == "café x"


def test_lines_that_are_or_contain_an_evaluated_sentence_are_dropped():
    lines = [
        "Germline mutations in BRCA1 are associated with breast cancer.",  # the same sentence, raw
        "Background. IL-2 (n=5) was measured in all patients. Nothing else.",  # contains one
        "Results",  # a short sentence, exactly
        "Results were negative in 12 of the patients.",  # contains only the short one: kept
        "Germline mutations in BRCA2 are associated with ovarian cancer.",  # similar, not equal: kept
        "IL-2 (n=5) was measured in all",  # a part of an evaluated sentence: kept
        "in BRCA1 germline mutations are associated with breast cancer",  # other word order: kept
    ]
    r = exclude_sentences(lines, TEST_SENTENCES)
    assert r.kept == tuple(lines[3:])
    assert r.excluded == 3 and r.matched == 3
    assert r.to_dict() == {"kept": 4, "excluded": 3, "matched": 3}


def test_whole_words_only_and_nothing_to_exclude():
    sentence = "the patient has fever and cough today"
    assert exclude_sentences(["xthe patient has fever and cough today"], [sentence]).excluded == 0
    assert exclude_sentences(["Yes: the patient has fever and cough today!"], [sentence]).excluded == 1
    r = exclude_sentences(["a", "b"], [])
    assert r.kept == ("a", "b") and r.excluded == 0 and r.matched == 0


def test_split_sentences_cuts_at_ends_and_line_breaks():
    text = "Le patient a de la fièvre. Est-ce grave ? Non; rien.\nSuite du texte"
    assert split_sentences(text) == ["Le patient a de la fièvre.", "Est-ce grave ?", "Non;", "rien.", "Suite du texte"]
    assert split_sentences("  \n ") == []


def test_example_texts_of_every_example_type():
    from biotok.datasets.bio import Sentence
    from biotok_train.tasks.examples import (
        ClassifyExample, MCQExample, PairExample, RelationExample, YesNoExample,
    )

    assert example_texts(Sentence(("IL", "-", "2"), ("O", "O", "O"))) == ["IL - 2"]
    assert example_texts(ClassifyExample("1", "Un résumé.", "x")) == ["Un résumé."]
    assert example_texts(PairExample("1", "a", "b", 1.0)) == ["a", "b"]
    assert example_texts(YesNoExample("1", "q?", "ctx", "yes")) == ["q?", "ctx"]
    assert example_texts(MCQExample("1", "Quelle dose ?", ("10 mg", "20 mg"), (0,))) == ["Quelle dose ?", "10 mg", "20 mg"]
    masked = RelationExample("1", "@DRUG$ inhibits @DRUG$.", "DDI-false")
    assert example_texts(masked) == ["@DRUG$ inhibits @DRUG$."]
    rebuilt = RelationExample("1", "@DRUG$ inhibits @DRUG$.", "DDI-false", sentence="Aspirin inhibits warfarin.",
                              spans=((0, 7, "DRUG"), (17, 25, "DRUG")))
    assert example_texts(rebuilt) == ["Aspirin inhibits warfarin."]


def test_eval_sentences_of_registered_tasks_keep_their_dev_and_test_out(monkeypatch):
    from biotok.datasets.bio import Sentence
    from biotok_train.tasks import TaskData, TaskSpec, TASKS

    def read(corpora, cache):
        s = lambda text: Sentence(tuple(text.split()), ("O",) * len(text.split()))  # noqa: E731
        return TaskData("toy", "ner", (), (s("une phrase d' entraînement assez longue"),),
                        (s("la phrase de validation du jeu"),), (s("la phrase de test du jeu , assez longue"),))

    monkeypatch.setitem(TASKS, "toy-ner", TaskSpec("toy-ner", None, "ner", "entity_f1", read))
    sentences = eval_sentences(["toy-ner"])
    assert sentences == {"la phrase de validation du jeu", "la phrase de test du jeu , assez longue"}
    assert eval_sentences(["toy-ner"], splits=("train",)) == {"une phrase d' entraînement assez longue"}
    lines = ["Voici la phrase de test du jeu, assez longue.", "Une phrase d'entraînement assez longue."]
    assert exclude_sentences(lines, sentences).kept == (lines[1],)


def test_eval_sentences_refuses_an_unknown_task_before_reading_any():
    with pytest.raises(DataError, match="unknown task 'nope'"):
        eval_sentences(["e3c", "nope"], data_dir="/nonexistent")


def test_eval_sentences_of_the_french_tasks(shared_data):
    sentences = eval_sentences(["e3c", "morfitt"], data_dir=str(shared_data / "corpora"))
    only_e3c = eval_sentences(["e3c"], data_dir=str(shared_data / "corpora"))
    assert only_e3c < sentences and len(only_e3c) > 500  # E3C's test split alone has 605 sentences


def test_min_words_keeps_lines_that_only_contain_a_short_term():
    terms = ["douleurs abdominales", "Les suites opératoires ont été simples ."]
    lines = ["Elle consulte pour des douleurs abdominales depuis deux jours.",
             "Douleurs abdominales",  # the term alone, exactly: dropped whatever min_words
             "Les suites opératoires ont été simples et la patiente est sortie."]
    assert exclude_sentences(lines, terms).excluded == 3  # default: any sentence of 20+ characters
    r = exclude_sentences(lines, terms, min_words=6)
    assert r.kept == (lines[0],) and r.excluded == 2 and r.matched == 2
    assert exclude_sentences(lines, terms, min_words=7).kept == (lines[0], lines[2])
