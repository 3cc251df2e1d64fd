"""The overhang proof (biotok.extension.wordpiece): a WordPiece piece it accepts, alone or with its
shadows, never makes any word take more pieces nor decode differently, checked exhaustively on
every word of a small alphabet up to the model's longest word, on random vocabularies."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models

from biotok.extension.wordpiece import Overhang

ALPHABET, LONGEST = "abc", 7  # words longer than LONGEST characters are [UNK] for both models
WORDS = ["".join(p) for n in range(1, LONGEST + 1) for p in itertools.product(ALPHABET, repeat=n)]


def _model(vocab: list[str]) -> Tokenizer:
    v = {t: i for i, t in enumerate(["[UNK]", *vocab])}
    return Tokenizer(models.WordPiece(v, unk_token="[UNK]", max_input_chars_per_word=LONGEST))


def _pieces(vocab: list[str]) -> list[list[str]]:
    return [e.tokens for e in _model(vocab).encode_batch(WORDS, add_special_tokens=False)]


def _never_longer(base: list[str], extended: list[str]) -> bool:
    return all(len(q) <= len(p) and (q == ["[UNK]"]) == (p == ["[UNK]"])
               for p, q in zip(_pieces(base), _pieces(extended)))


_STRINGS = st.text(alphabet=ALPHABET, min_size=1, max_size=4)
_VOCAB = st.tuples(st.lists(_STRINGS, max_size=8, unique=True), st.lists(_STRINGS, max_size=10, unique=True))
_PIECE = st.tuples(st.booleans(), st.text(alphabet=ALPHABET, min_size=2, max_size=6))


@settings(max_examples=150, deadline=None)
@given(vocab=_VOCAB, pieces=st.lists(_PIECE, min_size=1, max_size=4))
def test_accepted_pieces_never_lengthen_a_word(vocab, pieces):
    starts, conts = vocab
    base = sorted(set(ALPHABET) | set(starts)) + sorted({"##" + c for c in ALPHABET[:2]} | {"##" + c for c in conts})
    proof = Overhang(base, "##", LONGEST)
    kept: list[str] = []
    for inner, s in pieces:
        p = "##" + s if inner else s
        needs = proof.needs(p)
        if needs is None or p in base or p in kept:
            continue
        kept.append(p)
        kept.extend(g[0] for g in needs if not any(q in base or q in kept for q in g))  # one shadow of each
    kept = [p for p in kept if p not in base]
    # every shadow added must itself be accepted, so keep only pieces whose needs are met in the end
    while True:
        ok = [p for p in kept if (n := proof.needs(p)) is not None
              and all(any(q in base or q in kept for q in g) for g in n)]
        if ok == kept:
            break
        kept = ok
    assert _never_longer(base, base + kept), kept


def test_a_rejected_piece_has_a_word_it_lengthens():
    """Not vacuous: "ab" over a base that splits "abcc" as a ##bcc with no ##c is rejected (the
    word "abcc" would become [UNK]); "abcc" itself is safe and is the shadow "ab" needs."""
    base = ["a", "b", "##b", "##bcc"]
    proof = Overhang(base, "##", LONGEST)
    assert proof.needs("ab") == [("abc", "abcc")] and proof.needs("abcc") == []
    assert not _never_longer(base, base + ["ab"])
    assert _never_longer(base, base + ["abcc"]) and _never_longer(base, base + ["abcc", "ab"])


def test_the_longest_word_bounds_the_check():
    """A base whose later start costs more only on words longer than the model takes: the piece
    is safe at that length and rejected once longer words are allowed."""
    base = ["a", "##b", "##c", "##bc", "##bcccc"]
    assert Overhang(base, "##", 5).safe("ab")
    assert not Overhang(base, "##", 7).safe("ab")
    assert not _never_longer(base, base + ["ab"])  # "abcccc": a ##bcccc, but ab ##c ##c ##c ##c
