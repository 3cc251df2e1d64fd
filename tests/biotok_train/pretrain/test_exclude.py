"""Evaluation sentences kept out of pretraining text (normalised comparison, counts returned)."""

from __future__ import annotations

from biotok_train.pretrain.exclude import exclude_sentences, normalize_sentence

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
