"""The normalization spec: documented examples, and the saved normalizer equal to the reference."""

from __future__ import annotations

import unicodedata

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


def test_raw_config_is_identity():
    text = "L’hôpital,\u00a02,5 mg"
    assert normalize(text, NormalizeConfig.raw()) == text
    assert build_normalizer(NormalizeConfig.raw()) is None
    assert normalize(text, NormalizeConfig.raw(lowercase=True)) == text.lower()


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
