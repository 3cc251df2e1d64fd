"""Training: every algorithm gives an exact-size artifact that transformers loads unchanged."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from biotok.config import BACKENDS_OF, NormalizeConfig, TrainConfig
from biotok.errors import ConfigError, CorpusError, OutputExistsError
from biotok.normalize import normalize
from biotok.formats import load
from biotok.train import default_out, train_tokenizer


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory, sample_lines):
    p = tmp_path_factory.mktemp("corpus") / "small.txt"
    p.write_text("\n".join(sample_lines[:400]) + "\n", encoding="utf-8")
    return p


ALGO_BACKENDS = [(a, b) for a, bs in BACKENDS_OF.items() for b in bs]


@pytest.mark.parametrize("algo,backend", ALGO_BACKENDS)
def test_every_algorithm_and_backend_gives_exact_size_and_provenance(tmp_path, small_corpus, algo, backend):
    cfg = TrainConfig(algo=algo, backend=backend, vocab_size=1500, normalize=NormalizeConfig(lowercase=True))
    res = train_tokenizer([small_corpus], cfg, tmp_path / "tok")
    tok = load(res.path)
    assert res.vocab_size == tok.vocab_size == 1500
    meta = json.loads((res.path / "biotok.json").read_text(encoding="utf-8"))
    assert meta["config"]["algo"] == algo and meta["config"]["backend"] == backend
    assert meta["config"]["normalize"]["lowercase"] is True
    assert meta["versions"]["tokenizers"] and meta["versions"]["sentencepiece"]
    (f,) = meta["corpus"]["files"]
    assert f["path"] == str(small_corpus) and len(f["sha256"]) == 64 and f["lines"] == 400
    assert meta["corpus"]["lines"] == 400 and meta["corpus"]["words"] > 10_000
    assert isinstance(meta["training_seconds"], float)
    assert (res.path / "spm.model").is_file() == (backend == "sentencepiece")
    # the saved normalizer is biotok's
    text = "L’Hôpital, 2,5\u202fmg/kg (IL-6)."
    assert tok.backend.normalizer.normalize_str(text) == normalize(text, cfg.normalize)


def test_special_tokens_follow_the_model_family(tmp_path, small_corpus):
    wp = load(train_tokenizer([small_corpus], TrainConfig(algo="wordpiece", vocab_size=800), tmp_path / "wp").path)
    assert [wp.id_to_token(i) for i in range(5)] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert wp.encode("la dose", add_special_tokens=True).pieces[0] == "[CLS]"
    uni = load(train_tokenizer([small_corpus], TrainConfig(vocab_size=800), tmp_path / "uni").path)
    assert [uni.id_to_token(i) for i in range(5)] == ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    pieces = uni.encode("la dose", add_special_tokens=True).pieces
    assert pieces[0] == "<s>" and pieces[-1] == "</s>"


def test_autotokenizer_matches_biotok_on_1000_sample_lines(tiny_unigram, sample_lines):
    transformers = pytest.importorskip("transformers")
    hf = transformers.AutoTokenizer.from_pretrained(str(tiny_unigram))
    ours = load(tiny_unigram)
    lines = sample_lines[:1000]
    assert len(lines) == 1000
    hf_ids = hf(lines, add_special_tokens=False)["input_ids"]
    assert hf_ids == [e.ids for e in ours.encode_batch(lines)]
    assert hf.mask_token == "<mask>" and hf.pad_token_id == 1
    assert hf.backend_tokenizer.normalizer.normalize_str("L’Hôpital,") == "l' hôpital ,"


def test_spm_model_agrees_with_tokenizer_json_on_normalized_text(tmp_path, small_corpus, sample_lines):
    import sentencepiece as spm

    cfg = TrainConfig(algo="unigram", vocab_size=1200, normalize=NormalizeConfig(lowercase=True))
    res = train_tokenizer([small_corpus], cfg, tmp_path / "spm")
    sp = spm.SentencePieceProcessor(model_file=str(res.path / "spm.model"))
    tok = load(res.path)
    for line in sample_lines[400:500]:
        assert sp.encode(normalize(line, cfg.normalize)) == tok.encode(line).ids


def _train_in_process(corpus, out, *args):
    subprocess.run(
        [sys.executable, "-m", "biotok.cli", "train", str(corpus), "--vocab-size", "1200", "--seed", "3",
         "--out", str(out), "-q", *args],
        check=True, capture_output=True,
    )
    return (out / "tokenizer.json").read_bytes()


@pytest.mark.parametrize("algo,backend", [ab for ab in ALGO_BACKENDS if ab != ("unigram", "tokenizers")])
def test_same_input_same_bytes_across_processes_and_workers(tmp_path, small_corpus, algo, backend):
    """Every reproducible pair: two processes, one and two counting workers, same bytes."""
    one = _train_in_process(small_corpus, tmp_path / "w1", "--algo", algo, "--backend", backend, "--workers", "1")
    two = _train_in_process(small_corpus, tmp_path / "w2", "--algo", algo, "--backend", backend, "--workers", "2")
    assert one == two


def test_default_unigram_twice_gives_the_same_bytes(tmp_path, sample_corpus):
    """The issue's own check: `biotok train SAMPLE --algo unigram --lower`, twice."""
    a = _train_in_process(sample_corpus, tmp_path / "a", "--algo", "unigram", "--lower")
    b = _train_in_process(sample_corpus, tmp_path / "b", "--algo", "unigram", "--lower", "--workers", "2")
    assert a == b


def test_old_spm_names_are_aliases(tmp_path, small_corpus):
    assert TrainConfig(algo="spm-unigram") == TrainConfig(algo="unigram", backend="sentencepiece")
    assert TrainConfig(algo="spm-bpe") == TrainConfig(algo="bpe", backend="sentencepiece")
    assert TrainConfig().backend == "sentencepiece" and TrainConfig(algo="bpe").backend == "tokenizers"
    with pytest.raises(ConfigError, match="only by tokenizers"):
        TrainConfig(algo="wordpiece", backend="sentencepiece")
    with pytest.raises(ConfigError, match="means --backend sentencepiece"):
        TrainConfig(algo="spm-unigram", backend="tokenizers")
    # a biotok.json saved before backends existed: unigram/bpe/wordpiece were the tokenizers trainers
    assert TrainConfig.from_dict({"algo": "unigram"}).backend == "tokenizers"


def test_the_non_reproducible_backend_says_so_once(tmp_path, small_corpus, caplog):
    import logging

    with caplog.at_level(logging.WARNING, logger="biotok"):
        train_tokenizer([small_corpus], TrainConfig(algo="unigram", backend="tokenizers", vocab_size=900),
                        tmp_path / "hf")
        train_tokenizer([small_corpus], TrainConfig(vocab_size=900), tmp_path / "spm")
    said = [r for r in caplog.records if "not reproducible" in r.getMessage()]
    assert len(said) == 1 and "sentencepiece" in said[0].getMessage()


def test_from_counts_of_shards_equals_training_on_the_whole(tmp_path, sample_lines):
    from biotok.config import NormalizeConfig as N
    from biotok.counting import count_corpus, save_counts

    whole = tmp_path / "whole.txt"
    whole.write_text("\n".join(sample_lines[:900]) + "\n", encoding="utf-8")
    norm = N(lowercase=True)
    shards = []
    for i in range(3):
        p = tmp_path / f"s{i}.txt"
        p.write_text("\n".join(sample_lines[i * 300:(i + 1) * 300]) + "\n", encoding="utf-8")
        out = tmp_path / f"s{i}.tsv"
        save_counts(count_corpus([p], norm, workers=1), out, norm)
        shards.append(out)
    for algo in ("unigram", "bpe", "wordpiece"):
        cfg = TrainConfig(algo=algo, vocab_size=1000, normalize=norm)
        a = train_tokenizer([whole], cfg, tmp_path / f"{algo}-text")
        b = train_tokenizer([], cfg, tmp_path / f"{algo}-counts", from_counts=shards)
        assert (a.path / "tokenizer.json").read_bytes() == (b.path / "tokenizer.json").read_bytes(), algo
        meta = json.loads((b.path / "biotok.json").read_text(encoding="utf-8"))
        assert [f["path"] for f in meta["from_counts"]] == [str(s) for s in shards]
        assert meta["corpus"]["lines"] == 900
    with pytest.raises(ConfigError, match="was counted with normalization lowercase=True"):
        train_tokenizer([], TrainConfig(vocab_size=1000), tmp_path / "x", from_counts=shards)
    with pytest.raises(ConfigError, match="not both"):
        train_tokenizer([whole], TrainConfig(vocab_size=1000), tmp_path / "y", from_counts=shards)


def test_count_scaling_bounds_the_seed_text_and_is_recorded(tmp_path, sample_corpus):
    """The sample's seed text is 2.9 MB: a 1 MB budget scales its counts, the default does not."""
    def notes(cfg, name):
        res = train_tokenizer([sample_corpus], cfg, tmp_path / name)
        return json.loads((res.path / "biotok.json").read_text(encoding="utf-8"))["backend_notes"]["count_scaling"]

    small = notes(TrainConfig(vocab_size=2000, seed_text_mb=1), "small")
    assert small["budget_bytes"] == 1 << 20 and 0 < small["factor"] < 1
    assert small["seed_text_bytes"] > 1 << 20 >= small["scaled_seed_text_bytes"]
    assert small["scaled_sum_counts"] < small["sum_counts"]
    default = notes(TrainConfig(vocab_size=2000), "default")
    assert default["factor"] == 1.0 and default["scaled_sum_counts"] == default["sum_counts"]


def test_byte_fallback_never_gives_unk_and_decodes_back(tmp_path, small_corpus):
    transformers = pytest.importorskip("transformers")
    res = train_tokenizer([small_corpus], TrainConfig(vocab_size=1200, byte_fallback=True), tmp_path / "bf")
    hf = transformers.AutoTokenizer.from_pretrained(str(res.path))
    text = "Aiguë, È 😀 ŒDÈME"
    ids = hf(text)["input_ids"]
    assert hf.unk_token_id not in ids
    assert "<0xF0>" in hf.convert_ids_to_tokens(ids)  # the emoji as UTF-8 bytes
    assert hf.decode(ids, skip_special_tokens=True) == normalize(text)
    plain = transformers.AutoTokenizer.from_pretrained(str(
        train_tokenizer([small_corpus], TrainConfig(vocab_size=1200), tmp_path / "plain").path))
    assert plain.unk_token_id in plain(text)["input_ids"]
    with pytest.raises(ConfigError, match="needs --backend sentencepiece"):
        TrainConfig(algo="bpe", byte_fallback=True)


def test_an_empty_corpus_is_refused(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(CorpusError, match="the corpus is empty: no non-blank line"):
        train_tokenizer([p], TrainConfig(vocab_size=100), tmp_path / "o")


def test_no_normalize_saves_only_the_whitespace_rule(tmp_path, small_corpus):
    cfg = TrainConfig(vocab_size=1000, normalize=NormalizeConfig.raw())
    tok = load(train_tokenizer([small_corpus], cfg, tmp_path / "raw").path)
    steps = json.loads(tok.backend.normalizer.__getstate__())["normalizers"]
    assert [s["type"] for s in steps] == ["Replace", "Strip"]  # whitespace runs -> one space, ends stripped
    # without punctuation spacing a comma stays glued to its word's pieces
    assert "," not in [p.strip("▁") for p in tok.encode("patient,").pieces[:1]]


def test_stdin_and_jsonl_inputs(tmp_path, sample_lines, monkeypatch):
    import io

    p = tmp_path / "docs.jsonl"
    p.write_text("\n".join(json.dumps({"body": l}) for l in sample_lines[:300]) + "\n", encoding="utf-8")
    cfg = TrainConfig(vocab_size=900, field_name="body")
    a = train_tokenizer([p], cfg, tmp_path / "a")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(p.read_bytes())))
    b = train_tokenizer(["-"], cfg, tmp_path / "b")
    assert a.corpus["lines"] == b.corpus["lines"] == 300
    assert load(a.path).get_vocab().keys() == load(b.path).get_vocab().keys()


def test_refuses_to_overwrite_and_keeps_existing_on_failure(tmp_path, small_corpus):
    out = tmp_path / "tok"
    train_tokenizer([small_corpus], TrainConfig(algo="bpe", vocab_size=700), out)
    before = (out / "tokenizer.json").read_bytes()
    with pytest.raises(OutputExistsError):
        train_tokenizer([small_corpus], TrainConfig(algo="bpe", vocab_size=700), out)
    with pytest.raises(ConfigError, match="supports only"):
        train_tokenizer([small_corpus], TrainConfig(algo="bpe", vocab_size=10**6), out, force=True)
    assert (out / "tokenizer.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok"]  # no temp dir left behind


def test_default_out_names_the_variant():
    assert str(default_out(TrainConfig())) == "biotok-unigram-cased-32000"
    assert str(default_out(TrainConfig(backend="tokenizers"))) == "biotok-unigram-tokenizers-cased-32000"
    cfg = TrainConfig(algo="bpe", vocab_size=8000, normalize=NormalizeConfig.raw(lowercase=True))
    assert str(default_out(cfg)) == "biotok-bpe-raw-lower-8000"


@pytest.mark.parametrize("backend", ["tokenizers", "sentencepiece"])
def test_unigram_learns_a_piece_per_spaced_punctuation_mark(tmp_path, small_corpus, backend):
    text = "Le patient (54 ans), fébrile."
    cfg = TrainConfig(algo="unigram", backend=backend, vocab_size=1500)
    with_pp = load(train_tokenizer([small_corpus], cfg, tmp_path / "a").path)
    plain = load(train_tokenizer(
        [small_corpus], TrainConfig(algo="unigram", backend=backend, vocab_size=1500, punct_pieces=False),
        tmp_path / "b"
    ).path)
    assert with_pp.vocab_size == plain.vocab_size == 1500
    assert {"▁(", "▁)", "▁,", "▁."} <= set(with_pp.encode(text).pieces)
    if backend == "tokenizers":
        assert plain.encode(text).pieces.count("▁") == 4  # each mark costs "▁" + mark
        assert len(with_pp.encode(text)) == len(plain.encode(text)) - 4
    else:  # its TSV input seeds whole words, marks included (biotok.backends.spm.write_spm_tsv)
        assert {"▁(", "▁)", "▁,", "▁."} <= set(plain.encode(text).pieces)
