"""Subword regularization: seeded samples, exact word starts, and the best segmentation at zero."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tokenizers import Tokenizer

from biotok.config import NormalizeConfig, TrainConfig
from biotok.errors import ConfigError
from biotok.sampling import Sampler
from biotok.train import train_tokenizer


@pytest.fixture(scope="module")
def toks(tmp_path_factory, sample_corpus) -> dict[str, Tokenizer]:
    """A SentencePiece Unigram (the default), a tokenizers BPE and a WordPiece, lowercased."""
    d = tmp_path_factory.mktemp("samp")
    out = {}
    for algo in ("unigram", "bpe", "wordpiece"):
        cfg = TrainConfig(algo=algo, vocab_size=3000, normalize=NormalizeConfig(lowercase=True))
        res = train_tokenizer([sample_corpus], cfg, d / algo)
        out[algo] = Tokenizer.from_file(str(res.path / "tokenizer.json"))
    return out


def _starts(word_ids):
    out, prev = [], None
    for w in word_ids:
        out.append(1 if w is not None and w != prev else 0)
        prev = w
    return out


@pytest.mark.parametrize("algo", ["unigram", "bpe"])
def test_alpha_zero_is_the_tokenizers_own_segmentation(toks, sample_lines, algo):
    tok = toks[algo]
    s = Sampler(tok, 0.0)
    for i, line in enumerate(sample_lines[:300]):
        enc = tok.encode(line, add_special_tokens=False)
        got = s.sample(line, i)
        assert got.ids == list(enc.ids) and got.word_starts == _starts(enc.word_ids)


@pytest.mark.parametrize("algo,alpha", [("unigram", 0.1), ("bpe", 0.1)])
def test_samples_differ_keep_the_text_and_mark_every_word(toks, sample_lines, algo, alpha):
    tok = toks[algo]
    s = Sampler(tok, alpha, seed=1)
    unk = tok.token_to_id("<unk>")
    differ = 0
    for i, line in enumerate(sample_lines[:150]):
        best = tok.encode(line, add_special_tokens=False)
        x = s.sample(line, i)
        differ += x.ids != list(best.ids)
        assert tok.decode(x.ids) == tok.decode(best.ids)  # another segmentation of the same text
        assert x.ids.count(unk) <= list(best.ids).count(unk)  # sampling never adds <unk>
        pieces = [tok.id_to_token(t) for t in x.ids]
        assert x.word_starts == [int(p.startswith("▁")) for p in pieces]  # exact word starts
        assert sum(x.word_starts) == sum(_starts(best.word_ids))  # one start per word
    assert differ > 100
    # longer on average: sampling splits more than the best segmentation
    sampled = sum(len(s.sample(l, i).ids) for i, l in enumerate(sample_lines[:100]))
    assert sampled > sum(len(tok.encode(l).ids) for l in sample_lines[:100])


@pytest.mark.parametrize("algo", ["unigram", "bpe"])
def test_a_sample_is_a_function_of_seed_and_line_index(toks, sample_lines, algo):
    tok = toks[algo]
    line = sample_lines[3]
    a, b = Sampler(tok, 0.2, seed=5), Sampler(tok, 0.2, seed=5)
    first = [a.sample(line, i).ids for i in range(6)]
    assert [b.sample(line, i).ids for i in reversed(range(6))][::-1] == first  # order does not matter
    assert len({tuple(x) for x in first}) > 1  # other lines' draws differ
    assert Sampler(tok, 0.2, seed=6).sample(line, 0).ids != first[0] or \
        Sampler(tok, 0.2, seed=6).sample(line, 1).ids != first[1]


def test_same_samples_in_another_process(toks, tmp_path, sample_lines):
    path = tmp_path / "tok.json"
    toks["unigram"].save(str(path))
    code = (
        "import sys, json\nfrom tokenizers import Tokenizer\nfrom biotok.sampling import Sampler\n"
        f"s = Sampler(Tokenizer.from_file({str(path)!r}), 0.1, seed=2)\n"
        f"print(json.dumps([s.sample(l, i).ids for i, l in enumerate({sample_lines[:20]!r})]))"
    )
    here = Sampler(Tokenizer.from_file(str(path)), 0.1, seed=2)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    import json

    assert json.loads(out) == [here.sample(l, i).ids for i, l in enumerate(sample_lines[:20])]


def test_lines_with_special_tokens_keep_the_tokenizers_encoding(toks):
    tok = toks["unigram"]
    line = "le patient <mask> une dose"
    x = Sampler(tok, 0.1).sample(line, 0)
    assert x.ids == list(tok.encode(line, add_special_tokens=False).ids)


def test_wordpiece_and_bad_alphas_are_refused(toks):
    with pytest.raises(ConfigError, match="Unigram or BPE"):
        Sampler(toks["wordpiece"], 0.1)
    with pytest.raises(ConfigError, match="dropout must be in"):
        Sampler(toks["bpe"], 1.0)
    with pytest.raises(ConfigError, match="alpha must be in"):
        Sampler(toks["unigram"], 2.0)
    with pytest.raises(ConfigError, match=">= 0"):
        Sampler(toks["unigram"], -0.1)
