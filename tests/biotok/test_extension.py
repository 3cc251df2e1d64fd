"""``biotok extend``: every base id kept, pieces in the base's own model, and the guarantee (no
text gets more pieces than with the base, decoding unchanged), on every reference tokenizer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biotok.extension import ExtendConfig, extend
from biotok.formats import load

REFERENCE = ("barthez", "bert-base-cased", "bert-base-uncased", "camemberta-base", "camembertv2-base",
             "flaubert-base-uncased", "scibert-scivocab-uncased")


@pytest.fixture(scope="module")
def split(tmp_path_factory, sample_corpus) -> tuple[Path, list[str]]:
    """The sample with every 10th line held out: (the training file, the held-out lines)."""
    lines = sample_corpus.read_text(encoding="utf-8").splitlines()
    train = tmp_path_factory.mktemp("extend") / "train.txt"
    train.write_text("\n".join(l for i, l in enumerate(lines, 1) if i % 10) + "\n", encoding="utf-8")
    return train, [l for i, l in enumerate(lines, 1) if i % 10 == 0 and l.strip()]


@pytest.fixture(scope="module")
def bases(shared_data, tiny_unigram) -> dict[str, Path]:
    out = {name: shared_data / "tokenizers" / name for name in REFERENCE}
    out["biotok-unigram"] = tiny_unigram
    return out


_BUILT: dict[str, tuple] = {}
# SciBERT's English WordPiece offers 1,978 proven pieces that save anything on 90 % of the sample
# and 2,000 on all of it: it learns from the whole sample (its held-out lines are then seen by it;
# the proven guarantee covers any text, and the property test checks unseen strings).
_WHOLE = {"scibert-scivocab-uncased"}


@pytest.fixture(scope="module")
def extended(bases, split, sample_corpus, tmp_path_factory):
    """name -> (base tokenizer, extended folder, result), +2,000 pieces, built once each."""
    def get(name: str):
        if name not in _BUILT:
            out = tmp_path_factory.mktemp("ext") / name
            corpus = sample_corpus if name in _WHOLE else split[0]
            result = extend(bases[name], [corpus], out, ExtendConfig(add=2000), workers=1)
            _BUILT[name] = (load(bases[name]), out, result, load(out))
        return _BUILT[name]
    return get


@pytest.mark.parametrize("name", [*REFERENCE, "biotok-unigram"])
def test_extend_2000_keeps_ids_and_never_lengthens_a_held_out_line(name, extended, split):
    from transformers import AutoTokenizer

    base, out, result, new = extended(name)
    assert len(result.added) == 2000
    old_vocab, new_vocab = base.get_vocab(), new.get_vocab()
    assert all(new_vocab.get(t) == i for t, i in old_vocab.items())  # the base is a prefix
    assert sorted(new_vocab.values()) == list(range(len(old_vocab) + 2000))
    assert json.loads(new.backend.to_str())["added_tokens"] == json.loads(base.backend.to_str())["added_tokens"]
    hf = AutoTokenizer.from_pretrained(str(out))
    assert len(hf) == len(old_vocab) + 2000
    lines = split[1]
    eb, ex = base.encode_batch(lines), new.encode_batch(lines)
    assert all(len(q) <= len(p) for p, q in zip(eb, ex))
    assert [base.decode(e.ids) for e in eb] == [new.decode(e.ids) for e in ex]
    assert sum(map(len, ex)) < sum(map(len, eb))
    assert hf(lines[0])["input_ids"] == new.encode(lines[0], add_special_tokens=True).ids
    meta = json.loads((out / "biotok.json").read_text(encoding="utf-8"))
    assert meta["base"]["vocab_size"] == len(old_vocab) and meta["added"] == 2000
    assert meta["corpus"]["files"][0]["sha256"] and len(meta["added_pieces"]) == 2000
    assert all(a["savings"] > 0 for a in meta["added_pieces"])
    assert (out / "README.md").is_file()


def test_pieces_go_into_the_model_never_added_tokens(extended):
    for name, kind in (("camembertv2-base", "WordPiece"), ("camemberta-base", "Unigram"), ("barthez", "BPE"),
                       ("flaubert-base-uncased", "BPE")):
        base, out, result, _ = extended(name)
        j = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
        assert j["model"]["type"] == kind
        if kind == "BPE":  # the new merges come after the base's
            old = json.loads(base.backend.to_str())["model"]["merges"]
            assert j["model"]["merges"][:len(old)] == old and len(j["model"]["merges"]) == len(old) + 2000


@pytest.mark.parametrize("name", ["camemberta-base", "barthez", "camembertv2-base"])
def test_savings_are_measured_not_frequencies(name, extended):
    """Savings decrease along the selection (greedy on the recounted gains), and the
    recorded savings add up to the drop the extended tokenizer itself measures on the corpus
    (exactly for BPE; Unigram and WordPiece save a little more than the runs counted)."""
    _, _, r, _ = extended(name)
    savings = [a.savings for a in r.added]
    assert min(savings) > 0
    if name != "camembertv2-base":  # WordPiece: a piece waiting for its shadow enters after it, maybe saving more
        assert savings[0] == max(savings)
    # (lazy greedy: a choice can raise another's saving a little, so the order is nearly sorted)
    assert sum(a > b for a, b in zip(savings[1:], savings)) < len(savings) // 20
    drop = r.base_pieces - r.pieces
    if name == "barthez":
        assert sum(savings) == drop
    else:  # a few words: the real Viterbi / greedy match finds a shorter segmentation than the runs
        assert 0.98 * drop <= sum(savings) <= drop


def test_spm_model_extended_with_the_same_pieces(extended, split, bases):
    import sentencepiece as spm

    base, out, _, new = extended("camemberta-base")
    sp = spm.SentencePieceProcessor(model_file=str(out / "spm.model"))
    assert sp.get_piece_size() == new.vocab_size
    for i in range(new.vocab_size - 2000, new.vocab_size):
        assert sp.id_to_piece(i) == new.id_to_token(i)
    old = spm.SentencePieceProcessor(model_file=str(bases["camemberta-base"] / "spm.model"))
    lines = split[1][:50]
    assert all(len(sp.encode(l)) <= len(old.encode(l)) for l in lines)
    assert [sp.decode(sp.encode(l)) for l in lines] == [old.decode(old.encode(l)) for l in lines]


_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("abcdefghijklmnopqrstuvwxyzéèêàçôûïœ'’-.,;:()/%0123456789 ")),
        st.sampled_from(list("ÉÈÀÇαβμ°±×→😀🧬中文Жд\u0301\t")),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ), max_size=80)
_PARTS = st.lists(st.sampled_from(["thérapie", "chimio", "radio", "graphie", "ique", "ose", "ite", "hépat",
                                   "échographie", "tuméfaction", "s", "es", "ment", "anti", "bio", "logie"]),
                  min_size=1, max_size=12)


_WORDS = st.text(alphabet=st.sampled_from(list("abcdefghijklmnopqrstuvwxyzéèêàçôûïœ0123456789-")), min_size=1,
                 max_size=40)


@pytest.mark.parametrize("name", ["camembertv2-base", "bert-base-cased", "camemberta-base", "barthez",
                                  "flaubert-base-uncased", "biotok-unigram"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT, glued=_PARTS, words=st.lists(_WORDS, max_size=6))
def test_no_text_gets_more_pieces_than_with_the_base(name, extended, text, glued, words):
    """The default configuration, every model type (WordPiece, Unigram, BPE): the guarantee holds
    for any text (random strings, glued domain morphemes and fragments, very long words), not
    only for the corpus."""
    base, _, _, new = extended(name)
    g = "".join(glued)
    for t in (text, g, g * 8 + text, g[:15] + " " + text, "".join(words), " ".join(words) + text):
        p, q = base.encode(t), new.encode(t)
        assert len(q) <= len(p), (t, p.pieces, q.pieces)
        assert new.decode(q.ids) == base.decode(p.ids)


def test_wordpiece_default_holds_on_glued_fragments_of_corpus_words(extended, split):
    """CamemBERTv2 +2,000 by default: 3,000 strings glued from fragments of the corpus's own words
    (where the unproven mode lengthens a few) never take more pieces nor decode differently."""
    import random

    base, _, result, new = extended("camembertv2-base")
    words = sorted({w for l in split[1] for w in l.split()})
    rng = random.Random(0)
    texts = ["".join(w[rng.randrange(len(w)):][:rng.randrange(1, 9)] for w in rng.sample(words, 3))
             for _ in range(3000)]
    for t, p, q in zip(texts, base.encode_batch(texts), new.encode_batch(texts)):
        assert len(q) <= len(p), (t, p.pieces, q.pieces)
        assert new.decode(q.ids) == base.decode(p.ids)
    assert not result.rejected  # proven: the check on the corpus's words finds nothing to drop


@pytest.fixture(scope="module")
def loose_wordpiece(shared_data, split, tmp_path_factory):
    base = shared_data / "tokenizers" / "camembertv2-base"
    out = tmp_path_factory.mktemp("loose") / "cv2"
    result = extend(base, [split[0]], out, ExtendConfig(add=2000, strict=False), workers=1)
    return load(base), load(out), result


def test_no_strict_wordpiece_is_checked_on_held_out_lines_only(loose_wordpiece, extended, split):
    """--no-strict (WordPiece): checked on the corpus's words, so on the held-out lines (not on any
    text): no line longer, same decoding, and fewer pieces than the proven default."""
    base, new, _ = loose_wordpiece
    lines = split[1]
    eb, ex = base.encode_batch(lines), new.encode_batch(lines)
    assert all(len(q) <= len(p) for p, q in zip(eb, ex))
    assert [base.decode(e.ids) for e in eb] == [new.decode(e.ids) for e in ex]
    proven = extended("camembertv2-base")[3].encode_batch(lines)
    assert sum(map(len, ex)) < sum(map(len, proven)) < sum(map(len, eb))


def test_proven_wordpiece_keeps_a_piece_only_when_the_overhang_proof_accepts_it(extended):
    """Every added piece is safe by the overhang proof over the base (biotok.extension.wordpiece),
    or has one of each group of shadows it needs in the final vocabulary; some needed one."""
    from biotok.extension.wordpiece import Overhang

    base, _, result, new = extended("camembertv2-base")
    model = json.loads(base.backend.to_str())["model"]
    proof = Overhang(model["vocab"], "##", model["max_input_chars_per_word"])
    vocab, waited = set(new.get_vocab()), 0
    for a in result.added:
        needs = proof.needs(a.piece)
        assert needs is not None and all(any(q in vocab for q in g) for g in needs), (a.piece, needs)
        waited += bool(needs)
    assert 0 < waited < len(result.added)


def test_auto_and_target_stop_on_the_savings_curve(bases, split, tmp_path):
    auto = extend(bases["camembertv2-base"], [split[0]], tmp_path / "a", ExtendConfig(add="auto"), workers=1)
    floor = 1e-4 * auto.base_pieces
    assert auto.added and all(a.savings >= floor for a in auto.added)
    target = round(auto.reduction / 2, 3)  # half of what auto reaches before the curve flattens
    t = extend(bases["camembertv2-base"], [split[0]], tmp_path / "t", ExtendConfig(add=None, target=target),
               workers=1)
    assert sum(a.savings for a in t.added[:-1]) < target * t.base_pieces <= sum(a.savings for a in t.added)
    assert len(t.added) < len(auto.added) and t.reduction >= target


def test_same_inputs_same_bytes(bases, split, tmp_path):
    for d in ("a", "b"):
        extend(bases["camemberta-base"], [split[0]], tmp_path / d, ExtendConfig(add=300), workers=1)
    for f in ("tokenizer.json", "spm.model"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


@pytest.fixture()
def toy_wordpiece(tmp_path) -> Path:
    """A WordPiece whose base splits "abcd" as a ##bcd and has no ##c nor ##d: a new "ab" would
    leave a rest ("cd") it cannot finish."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(["[UNK]", "a", "b", "##b", "##bcd", "e", "##e"])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.WhitespaceSplit(), decoders.WordPiece()
    path = tmp_path / "toy.json"
    tok.save(str(path))
    return path


def test_wordpiece_piece_waits_for_its_shadow(toy_wordpiece, tmp_path):
    """Checked on the corpus only, "ab" (the most frequent run) is added and "abcd" becomes
    [UNK]; proven, "ab" waits for its shadow "abcd", which comes first."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("ab ab ab ab ab abcd abcd abcd\n", encoding="utf-8")
    base = load(toy_wordpiece)
    loose = extend(toy_wordpiece, [corpus], tmp_path / "loose", ExtendConfig(add=1, strict=False), workers=1)
    assert [a.piece for a in loose.added] == ["ab"]
    assert base.encode("abcd").pieces == ["a", "##bcd"] and load(loose.path).encode("abcd").pieces == ["[UNK]"]
    one = extend(toy_wordpiece, [corpus], tmp_path / "one", ExtendConfig(add=1), workers=1)
    assert [(a.piece, a.joins) for a in one.added] == [("abcd", ("a", "##bcd"))]
    two = extend(toy_wordpiece, [corpus], tmp_path / "two", ExtendConfig(add=2), workers=1)
    assert [a.piece for a in two.added] == ["abcd", "ab"]
    new = load(two.path)
    for t in ("abcd", "ab", "abcde", "abe", "abbcd", "ab abcd e"):
        p, q = base.encode(t), new.encode(t)
        assert len(q) <= len(p) and new.decode(q.ids) == base.decode(p.ids), (t, p.pieces, q.pieces)
