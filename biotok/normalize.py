"""French biomedical normalization: one spec, two executions.

:func:`normalize` is the readable pure-Python reference; :func:`build_normalizer` builds the
equivalent ``tokenizers.normalizers.Sequence`` that is saved inside tokenizer.json, so a model
loaded with ``transformers.AutoTokenizer`` normalizes exactly like biotok without importing it.
Both are generated from the same rule table below; a property test holds them equal.
The rules, with examples, are in docs/normalization.md.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import regex

from biotok.config import NormalizeConfig

def _alternation(codepoints: list[int]) -> str:
    # An alternation of literals, not a [class]: Oniguruma scans it about twice as fast.
    return "|".join(f"\\u{cp:04x}" for cp in codepoints)


def _span(first: int, last: int) -> list[int]:
    return list(range(first, last + 1))


# --- 0. whitespace: every Unicode whitespace character (str.isspace) separates words ----------
WHITESPACE_CHARS = [
    *_span(0x09, 0x0D), *_span(0x1C, 0x20), 0x85, 0xA0, 0x1680, *_span(0x2000, 0x200A),
    0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
]
_WS = f"(?:{_alternation(WHITESPACE_CHARS)})"
# a run of two or more, or one that is not a plain space, becomes one space (SentencePiece's
# own normalization does the same); leading and trailing whitespace is then stripped
WHITESPACE = f"{_WS}{{2,}}|{_alternation([c for c in WHITESPACE_CHARS if c != 0x20])}"

# --- 1. characters removed: C0/C1 controls (but whitespace), zero-width, bidi, BOM, soft hyphen
CONTROL_CHARS = [
    *_span(0x00, 0x08), *_span(0x0E, 0x1B), 0x7F, *_span(0x80, 0x84), *_span(0x86, 0x9F), 0xAD,
    *_span(0x200B, 0x200F), *_span(0x202A, 0x202E), *_span(0x2060, 0x2064), *_span(0x2066, 0x2069),
    0xFEFF,
]
CONTROL = _alternation(CONTROL_CHARS)

# --- 1b. before NFKC: mark digit exponents, so "10⁹/L" becomes "10^9/L" and not "109/L" ----
SUPERSCRIPTS = [0x2070, 0xB9, 0xB2, 0xB3, *_span(0x2074, 0x207B)]  # ⁰¹²³⁴-⁹ ⁺ ⁻
EXPONENT = f"(?={_alternation(SUPERSCRIPTS)})(?<=[0-9])"

# --- 2. typographic folds: (characters, replacement), applied in this order ---------------
FOLD_TABLE: tuple[tuple[list[int], str], ...] = (
    # no-break, thin, narrow no-break (French "; : ! ?"), ideographic and other spaces; line/para sep
    ([0xA0, 0x1680, *_span(0x2000, 0x200A), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000], " "),
    # apostrophes: right/left single quote, low-9, reversed, modifier letter apostrophe, prime, acute
    ([0x2018, 0x2019, 0x201A, 0x201B, 0x02BC, 0x2032, 0xB4, 0xFF07], "'"),
    # double quotes: guillemets, curly quotes, low-9, double prime, full-width
    ([0xAB, 0xBB, 0x201C, 0x201D, 0x201E, 0x201F, 0x2033, 0xFF02], '"'),
    # hyphens and dashes, minus sign
    ([*_span(0x2010, 0x2015), 0x2212, 0xFE58, 0xFE63, 0xFF0D], "-"),
)
FOLDS: tuple[tuple[str, str], ...] = tuple((_alternation(cps), rep) for cps, rep in FOLD_TABLE)

# --- 3. punctuation spacing: zero-width positions where one space is inserted --------------
_NS = "[^ \\t\\n\\r]"  # a non-space character (other spaces were folded to ' ' before)
_PUNCT = "[\\p{P}\\p{Sm}\\p{Sc}]"  # punctuation, math symbols (+ = < > ± ×), currency
_PROTECTABLE = "[.,'/\\-]"  # punctuation that may stay glued inside a token
_ALNUM = "[\\p{L}\\p{N}]"
_ELIDED_1 = "[cdjlmnstCDJLMNST]"  # l' d' j' m' n' s' t' c'
_ELIDED_QU = "[qQ][uU]"  # qu'
_ELIDED_LONG = (  # jusqu' lorsqu' puisqu' quoiqu' presqu'
    "[jJ][uU][sS][qQ][uU]|[lL][oO][rR][sS][qQ][uU]|[pP][uU][iI][sS][qQ][uU]"
    "|[qQ][uU][oO][iI][qQ][uU]|[pP][rR][eE][sS][qQ][uU]"
)
# lookbehinds take top-level alternatives of different lengths, not groups: repeat the "'"
_ELIDED_LONG_APOS = "|".join(f"{w}'" for w in _ELIDED_LONG.split("|"))

SPACING_RULES: tuple[tuple[str, str], ...] = (
    # (name, zero-width pattern): a space goes at every position that one of them matches
    ("after punctuation", f"(?<={_PUNCT})(?<!{_PROTECTABLE})(?={_NS})"),
    ("before punctuation", f"(?<={_NS})(?={_PUNCT})(?!{_PROTECTABLE})"),
    ("after . , unless a decimal", f"(?<=[.,])(?<![0-9][.,])(?={_NS})"),
    ("after . , of a digit, before a non-digit", "(?<=[0-9][.,])(?=[^ \\t\\n\\r0-9])"),
    ("before . , after a non-digit", "(?<=[^ \\t\\n\\r0-9])(?=[.,])"),
    ("before . , after a digit unless a digit follows", "(?<=[0-9])(?=[.,](?![0-9]))"),
    ("after - / unless inside a term", f"(?<=[\\-/])(?<!{_ALNUM}[\\-/])(?={_NS})"),
    ("after - / of a term, before a non-alnum", f"(?<={_ALNUM}[\\-/])(?=[^ \\t\\n\\r\\p{{L}}\\p{{N}}])"),
    ("before - / after a non-alnum", "(?<=[^ \\t\\n\\r\\p{L}\\p{N}])(?=[\\-/])"),
    ("before - / unless inside a term", f"(?<={_ALNUM})(?=[\\-/](?!{_ALNUM}))"),
    ("after a quote-like apostrophe", f"(?<=')(?<!\\p{{L}}')(?={_NS})"),
    ("after a letter's apostrophe, before a non-letter", "(?<=\\p{L}')(?=[^ \\t\\n\\r\\p{L}])"),
    ("after an elided article/pronoun", f"(?<={_ELIDED_1}')(?<!\\p{{L}}{_ELIDED_1}')(?={_NS})"),
    ("after elided qu'", f"(?<={_ELIDED_QU}')(?<!\\p{{L}}{_ELIDED_QU}')(?={_NS})"),
    ("after jusqu' lorsqu' puisqu' quoiqu' presqu'", f"(?<={_ELIDED_LONG_APOS})(?={_NS})"),
    ("before an apostrophe after a non-letter", "(?<=[^ \\t\\n\\r\\p{L}])(?=')"),
    (
        "before an apostrophe not followed by a letter, unless elided",
        f"(?<=\\p{{L}})(?:(?<!{_ELIDED_1})|(?<=\\p{{L}}{_ELIDED_1}))"
        f"(?:(?<!{_ELIDED_QU})|(?<=\\p{{L}}{_ELIDED_QU}))(?<!{_ELIDED_LONG})(?='(?!\\p{{L}}))",
    ),
)
# Every rule fires right after or right before a punctuation-like character; gating the two
# groups on that character lets the regex engine skip ordinary letters cheaply (5x faster).
_AFTER = [p for name, p in SPACING_RULES if name.startswith("after")]
_BEFORE = [p for name, p in SPACING_RULES if name.startswith("before")]
SPACING_PATTERN = f"(?<={_PUNCT})(?:{'|'.join(_AFTER)})|(?={_PUNCT})(?:{'|'.join(_BEFORE)})"


@dataclass(frozen=True)
class _Compiled:
    control: regex.Pattern[str]
    exponent: regex.Pattern[str]
    folds: tuple[tuple[regex.Pattern[str], str], ...]
    whitespace: regex.Pattern[str]
    spacing: regex.Pattern[str]


@lru_cache(maxsize=1)
def _compiled() -> _Compiled:
    return _Compiled(
        control=regex.compile(CONTROL),
        exponent=regex.compile(EXPONENT),
        folds=tuple((regex.compile(p), r) for p, r in FOLDS),
        whitespace=regex.compile(WHITESPACE),
        spacing=regex.compile(SPACING_PATTERN),
    )


def _lower(text: str) -> str:
    # Per character, like tokenizers' Lowercase: str.lower() would apply the Greek final-sigma
    # context rule, which the Rust normalizer does not.
    if "\u03a3" in text:
        return "".join(c.lower() for c in text)
    return text.lower()


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    kept = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    return unicodedata.normalize("NFC", kept)


def normalize(text: str, config: NormalizeConfig | None = None) -> str:
    """Normalize ``text`` by the biotok spec (the reference the saved normalizer must match).

    >>> normalize("L’hôpital, 2,5 mg/kg (IL-6).")
    "L' hôpital , 2,5 mg/kg ( IL-6 ) ."
    """
    cfg = config or NormalizeConfig()
    c = _compiled()
    if cfg.strip_control:
        text = c.control.sub("", text)
    if cfg.unicode == "NFKC":
        text = c.exponent.sub("^", text)
    if cfg.unicode != "none":
        text = unicodedata.normalize(cfg.unicode, text)
    if cfg.fold_typography:
        for pat, rep in c.folds:
            text = pat.sub(rep, text)
    if cfg.lowercase:
        text = _lower(text)
    if cfg.strip_accents:
        text = _strip_accents(text)
    if cfg.whitespace:
        text = c.whitespace.sub(" ", text).strip(" ")
    if cfg.space_punctuation:
        text = c.spacing.sub(" ", text)
    return text


def normalizer_steps(config: NormalizeConfig | None = None) -> list:
    """The ``tokenizers`` normalizers that implement :func:`normalize`, in order."""
    # lazy: `import biotok` imports this module (normalize) but not tokenizers
    from tokenizers import Regex, normalizers

    cfg = config or NormalizeConfig()
    steps: list = []
    if cfg.strip_control:
        steps.append(normalizers.Replace(Regex(CONTROL), ""))
    if cfg.unicode == "NFKC":
        steps.append(normalizers.Replace(Regex(EXPONENT), "^"))
        steps.append(normalizers.NFKC())
    elif cfg.unicode == "NFC":
        steps.append(normalizers.NFC())
    if cfg.fold_typography:
        steps.extend(normalizers.Replace(Regex(p), r) for p, r in FOLDS)
    if cfg.lowercase:
        steps.append(normalizers.Lowercase())
    if cfg.strip_accents:
        steps.extend([normalizers.NFD(), normalizers.StripAccents(), normalizers.NFC()])
    if cfg.whitespace:
        steps.extend([normalizers.Replace(Regex(WHITESPACE), " "), normalizers.Strip()])
    if cfg.space_punctuation:
        steps.append(normalizers.Replace(Regex(SPACING_PATTERN), " "))
    return steps


def build_normalizer(config: NormalizeConfig | None = None):
    """The ``tokenizers`` normalizer equivalent to :func:`normalize` (None when it is identity)."""
    # lazy: `import biotok` imports this module (normalize) but not tokenizers
    from tokenizers import normalizers

    steps = normalizer_steps(config)
    return normalizers.Sequence(steps) if steps else None


def is_spaced_punctuation(piece: str) -> bool:
    """True for a single character that the spacing rules surround with spaces."""
    return len(piece) == 1 and regex.fullmatch(_PUNCT, piece) is not None


def words(text: str, config: NormalizeConfig | None = None) -> list[str]:
    """biotok's word segmentation: normalize (punctuation spaced) then split on whitespace.

    The one definition of "word" for every metric, identical whatever tokenizer is measured.
    """
    return normalize(text, config).split()
