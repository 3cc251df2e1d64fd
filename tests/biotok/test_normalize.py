"""The normalization spec: documented examples, and the saved normalizer equal to the reference."""

from __future__ import annotations

import unicodedata
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers

from biotok.config import NormalizeConfig
from biotok.normalize import build_normalizer, normalize, words

LOWER = NormalizeConfig(lowercase=True)

# (input, expected with the default config) -- the same table is in docs/normalization.md
EXAMPLES = [
    ("Le patient, âgé de 54 ans.", "Le patient , âgé de 54 ans ."),
    ("2,5 mg", "2,5 mg"),
    ("NaCl 0.9%", "NaCl 0.9 %"),
    ("à 10,5.", "à 10,5 ."),
    ("1,2,3", "1,2,3"),
    ("anti-inflammatoire", "anti-inflammatoire"),
    ("IL-6 et TNF-α", "IL-6 et TNF-α"),
    ("(IL-6)", "( IL-6 )"),
    ("mg/kg/j", "mg/kg/j"),
    ("et/ou", "et/ou"),
    ("10 - 20", "10 - 20"),
    ("-5 °C", "- 5 °C"),
    ("l'hôpital", "l' hôpital"),
    ("L’hôpital", "L' hôpital"),
    ("d'une", "d' une"),
    ("qu'il", "qu' il"),
    ("jusqu'à lorsqu'il", "jusqu' à lorsqu' il"),
    ("aujourd'hui", "aujourd'hui"),
    ("'bon'", "' bon '"),
    ("«\u00a0Oui\u00a0»", '" Oui "'),
    ("Pourquoi\u202f?", "Pourquoi ?"),
    ("“dose”", '" dose "'),
    ("anti‑TNF – efficace", "anti-TNF - efficace"),
    ("10⁹/L", "10^9/L"),
    ("5 µg", "5 μg"),
    ("ﬁbrose", "fibrose"),
    ("hypo\u00adtension\u200b", "hypotension"),
    ("Hôpital", "Hôpital"),
    ("Fin...", "Fin . . ."),
    ("a+b=c", "a + b = c"),
]


@pytest.mark.parametrize("text,expected", EXAMPLES)
def test_documented_examples(text, expected):
    assert normalize(text) == expected
    assert build_normalizer().normalize_str(text) == expected


def test_lowercase_keeps_accents():
    assert normalize("Hôpital ÉLEVÉ", LOWER) == "hôpital élevé"


def test_strip_accents_is_separate_and_off_by_default():
    assert normalize("Hôpital") == "Hôpital"
    assert normalize("Hôpital", NormalizeConfig(lowercase=True, strip_accents=True)) == "hopital"


def test_raw_config_changes_only_whitespace():
    text = "L’hôpital,\u00a02,5 mg"
    assert normalize(text, NormalizeConfig.raw()) == "L’hôpital, 2,5 mg"
    assert normalize(text, NormalizeConfig.raw(lowercase=True)) == "l’hôpital, 2,5 mg"
    assert build_normalizer(replace(NormalizeConfig.raw(), whitespace=False)) is None
    assert normalize(text, replace(NormalizeConfig.raw(), whitespace=False)) == text


WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]


@given(st.lists(st.sampled_from(["dose", "L’hôpital", "mg/kg", "(IL-6)", "2,5", "é"]), min_size=1, max_size=6),
       st.lists(st.text(alphabet=WHITESPACE, min_size=1, max_size=3), min_size=6, max_size=6),
       st.sampled_from([NormalizeConfig(), NormalizeConfig(lowercase=True), NormalizeConfig.raw()]))
def test_every_unicode_whitespace_separates_words(words, gaps, cfg):
    """Any run of Unicode whitespace (tab, line breaks, no-break spaces...) is one word boundary,
    leading and trailing ones vanish, and the saved normalizer agrees."""
    text = gaps[0] + "".join(w + g for w, g in zip(words, gaps[1:] + gaps[:1]))
    spaced = " ".join(words)
    assert normalize(text, cfg) == normalize(spaced, cfg)
    assert build_normalizer(cfg).normalize_str(text) == normalize(text, cfg)


def test_bidirectional_controls_are_removed():
    # U+202A-202E embeddings/overrides and U+2066-2069 isolates reorder text invisibly
    for cp in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]:
        assert normalize(f"do{chr(cp)}se") == "dose"
        assert build_normalizer().normalize_str(f"do{chr(cp)}se") == "dose"


def test_old_configs_without_the_whitespace_switch_load_as_recorded():
    assert NormalizeConfig.from_dict({"lowercase": True}).whitespace is False
    assert NormalizeConfig.from_dict(NormalizeConfig().to_dict()).whitespace is True


def test_nfc_keeps_superscripts():
    assert normalize("10⁹/L", NormalizeConfig(unicode="NFC")) == "10⁹/L"


def test_words_split_punctuation():
    assert words("L'IL-6, à 2,5 mg/kg.") == ["L'", "IL-6", ",", "à", "2,5", "mg/kg", "."]


# --- property tests ------------------------------------------------------------------------
FRAGMENTS = [
    "l'", "L'", "d'", "qu'", "jusqu'", "aujourd'hui", "’", "‘", "«", "»", "“", "”", "–", "—",
    "‑", "−", "\u00a0", "\u202f", "\u2009", "\u200b", "\u00ad", "\ufeff", "µ", "ﬁ", "²", "⁹",
    "⁻", "½", "…", "e\u0301", "\u0300", "Σ", "ς", "İ", "ß", "Ａ", "！", "IL-6", "mg/kg", "2,5",
    "0.9", "%", "°C", "anti-", "/", "-", ".", ",", ";", ":", "!", "?", "(", ")", "[", "]", "'",
    '"', "+", "=", "<", ">", "€", "$", "*", "&", "#", "@", "\\", "_", "\t", "\n", " ", "  ",
    "\x00", "\x07", "\x85", "\u2028", "Hôpital", "ŒDÈME", "œdème", "naïve", "Ça", "été",
]
ALPHABET = st.sampled_from(
    list("abcdeéèêëfghiîïjklmnoôpqrstuùûüvwxyzÿçàâABCÉÈÀÇÔXYZ0123456789 .,;:!?'\"()-/%")
)
TEXT = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(ALPHABET, min_size=1, max_size=4)),
    max_size=24,
).map("".join)
CONFIGS = [
    NormalizeConfig(),
    LOWER,
    NormalizeConfig(lowercase=True, strip_accents=True),
    NormalizeConfig(unicode="NFC"),
    NormalizeConfig(space_punctuation=False),
    NormalizeConfig.raw(lowercase=True),
]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: repr(c))
@SETTINGS
@given(text=TEXT)
def test_saved_normalizer_equals_reference(cfg, text):
    saved = build_normalizer(cfg)
    expected = normalize(text, cfg)
    assert (saved.normalize_str(text) if saved else text) == expected


@pytest.mark.parametrize("cfg", [NormalizeConfig(), LOWER], ids=["cased", "lower"])
@SETTINGS
@given(text=TEXT)
def test_idempotent(cfg, text):
    once = normalize(text, cfg)
    assert normalize(once, cfg) == once


def _word_tokenizer(cfg: NormalizeConfig) -> Tokenizer:
    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = build_normalizer(cfg)
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tok


@pytest.mark.parametrize("cfg", [NormalizeConfig(), LOWER], ids=["cased", "lower"])
@SETTINGS
@given(text=TEXT)
def test_offsets_map_back_into_the_original(cfg, text):
    enc = _word_tokenizer(cfg).encode(text)
    normalized_words = normalize(text, cfg).split()
    assert len(enc.offsets) == len(normalized_words)
    # tokenizers aligns a character composed by NFKC (e + U+0301 -> é) with its base only
    composed = any(unicodedata.combining(c) for c in text)
    prev_start = 0
    for (start, end), word in zip(enc.offsets, normalized_words):
        assert 0 <= prev_start <= start <= end <= len(text)
        if not composed:
            # the original span, normalized on its own, gives back the word (one character
            # such as "½" can expand to several words under NFKC, each mapping to it)
            # (the exponent marker "^" is inserted between two characters, so it belongs to
            # neither span)
            spans = [w.replace("^", "") for w in normalize(text[start:end], cfg).split()]
            assert word.replace("^", "") in spans
        prev_start = start


@pytest.mark.parametrize("fixture", ["tiny_unigram", "tiny_wordpiece"])
def test_a_trained_tokenizer_splits_on_line_breaks_and_tabs(fixture, request):
    """Clinical documents are full of line breaks and tabs: the word after one keeps its
    word-start piece, exactly as after a space (biotok and transformers alike)."""
    from transformers import AutoTokenizer

    from biotok.formats import load

    folder = request.getfixturevalue(fixture)
    spaced, broken = "ligne un ligne deux puis", "ligne un\nligne deux\tpuis\r\n"
    assert load(folder).encode(broken).pieces == load(folder).encode(spaced).pieces
    hf = AutoTokenizer.from_pretrained(str(folder))
    assert hf.tokenize(broken) == hf.tokenize(spaced)
    assert hf.unk_token not in hf.tokenize(broken)
