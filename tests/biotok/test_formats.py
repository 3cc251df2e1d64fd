"""biotok.formats (load): every tokenizer format loads and segments like its reference library."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from biotok.errors import TokenizerLoadError
from biotok.formats import load as load_any
from biotok.formats.wordpiece import read_vocab_txt, vocab_is_lowercase

ENGLISH = [
    "naloxone", "Naloxone reverses the antihypertensive effect of clonidine.",
    "acetaminophen", "lymphoma", "The RecA protein (38 kDa) binds ssDNA; IL-6 rose 2.5-fold.",
    "Café, naïve résumé — “quoted” text…", "hydrochlorothiazide 12,5 mg/j",
]


@pytest.fixture(scope="module")
def toks(shared_data: Path) -> Path:
    return shared_data / "tokenizers"


@pytest.fixture(scope="module")
def french(sample_lines: list[str]) -> list[str]:
    # short and long lines, accents, apostrophes, figures
    return sample_lines[:60] + ["L’hôpital a prescrit 2,5 mg/kg d’hydrochlorothiazide (HCTZ).", "aiguë È ó ë"]


# --- tokenizer.json --------------------------------------------------------------------------
def test_tokenizer_json_gz_and_dir(toks: Path) -> None:
    a = load_any(toks / "camembertv2-base" / "tokenizer.json.gz")
    b = load_any(toks / "camembertv2-base")  # dir: tokenizer.json wins over the malformed vocab.txt
    assert a.vocab_size == b.vocab_size == 32768
    assert a.marker == "##"
    # MANIFEST: max_input_chars_per_word = 16, so this word is [UNK]
    assert a.tokenize("hydrochlorothiazide") == ["[UNK]"]
    assert a.fingerprint == b.fingerprint


def test_bare_tokenizer_json(tmp_path: Path, toks: Path) -> None:
    text = gzip.decompress((toks / "camemberta-base" / "tokenizer.json.gz").read_bytes())
    (tmp_path / "tokenizer.json").write_bytes(text)
    tok = load_any(tmp_path / "tokenizer.json")
    assert tok.tokenize("cholécystectomie") == ["▁c", "hol", "éc", "yst", "ectomie"]


# --- SentencePiece .model --------------------------------------------------------------------
@pytest.mark.parametrize("path,kind", [("camemberta-base/spm.model", "unigram"), ("barthez/sentencepiece.bpe.model", "bpe")])
def test_spm_model_equals_sentencepiece(toks: Path, french: list[str], path: str, kind: str) -> None:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(toks / path))
    tok = load_any(toks / path)
    assert tok.marker == "▁"
    assert tok.vocab_size == sp.get_piece_size()
    # ids, not strings: sentencepiece prints an unknown character as itself, tokenizers as <unk>.
    # Chunks of <= 12 words: on whole long lines, sentencepiece's float32 Viterbi sum loses the
    # 1e-4 score gap of a few near-ties (3 of 1,926 sample lines for CamemBERTa) where
    # tokenizers (float64) keeps the better path.
    chunks = [" ".join(w[i:i + 12]) for line in french for w in [line.split()] for i in range(0, len(w), 12)]
    for chunk in chunks:
        assert tok.encode(chunk).ids == sp.encode(chunk), chunk


def test_spm_manifest_facts(toks: Path) -> None:
    assert load_any(toks / "camemberta-base" / "spm.model").tokenize("cholécystectomie") == ["▁c", "hol", "éc", "yst", "ectomie"]
    assert load_any(toks / "barthez" / "sentencepiece.bpe.model").tokenize("naloxone") == ["▁n", "al", "ox", "one"]


# --- WordPiece vocab.txt -------------------------------------------------------------------------
@pytest.mark.parametrize("folder,lower", [("bert-base-uncased", True), ("bert-base-cased", False), ("scibert-scivocab-uncased", True)])
def test_vocab_txt_equals_bert_tokenizer_fast(toks: Path, french: list[str], folder: str, lower: bool) -> None:
    from transformers import BertTokenizerFast

    vocab = toks / folder / "vocab.txt"
    tok = load_any(vocab)
    assert tok.lowercase is lower  # decided from the vocab
    assert tok.marker == "##"
    ref = BertTokenizerFast(vocab=str(vocab), do_lower_case=lower)  # transformers 5: vocab=path
    assert len(ref) == tok.vocab_size
    for line in ENGLISH + french[:20]:
        assert tok.tokenize(line) == ref.tokenize(line), line
        assert tok.encode(line, add_special_tokens=True).ids == ref(line)["input_ids"], line


def test_vocab_txt_manifest_facts(toks: Path) -> None:
    assert load_any(toks / "bert-base-uncased" / "vocab.txt").tokenize("naloxone") == ["na", "##lo", "##xon", "##e"]
    assert load_any(toks / "bert-base-cased" / "vocab.txt").tokenize("Naloxone") == ["Na", "##lo", "##xon", "##e"]
    assert load_any(toks / "scibert-scivocab-uncased" / "vocab.txt").tokenize("lymphoma") == ["lymphoma"]


def test_vocab_txt_lowercase_override(toks: Path) -> None:
    cased = load_any(toks / "bert-base-cased" / "vocab.txt", lowercase=True)
    assert cased.lowercase is True
    assert cased.tokenize("Naloxone")[0].islower()
    assert load_any(toks / "bert-base-uncased" / "vocab.txt", lowercase=False).tokenize("DNA") == ["[UNK]"]


def test_vocab_is_lowercase_rule() -> None:
    assert vocab_is_lowercase(["[UNK]", "[CLS]", "a", "##b", "ℝ"] + [f"w{i}" for i in range(200)])
    assert not vocab_is_lowercase(["[UNK]", "A", "b", "Paris", "c"])


# --- BPE vocab.json + merges.txt -------------------------------------------------------------------
def test_flaubert_end_of_word_bpe(toks: Path) -> None:
    tok = load_any(toks / "flaubert-base-uncased")
    assert tok.marker == "</w>"
    assert tok.lowercase is True  # tokenizer_config.json: do_lower_case
    pieces = tok.tokenize("La Cholécystectomie, l'hôpital.")
    assert pieces[0] == "la</w>" and pieces[-1] == ".</w>"
    assert "".join(pieces).replace("</w>", " ").split() == ["la", "cholécystectomie", ",", "l", "'", "hôpital", "."]
    assert tok.token_to_id("<unk>") == 3
    assert load_any(toks / "flaubert-base-uncased" / "merges.txt").fingerprint == tok.fingerprint


def test_bytelevel_bpe_pair_equals_original(tmp_path: Path, sample_lines: list[str]) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    orig = Tokenizer(models.BPE())
    orig.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    orig.decoder = decoders.ByteLevel()
    orig.train_from_iterator(sample_lines[:200], trainers.BpeTrainer(
        vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    orig.model.save(str(tmp_path))  # vocab.json + merges.txt, GPT-2 style
    tok = load_any(tmp_path / "vocab.json")
    assert tok.marker == "Ġ"
    for line in sample_lines[200:230] + ["Café à l’hôpital"]:
        assert tok.tokenize(line) == orig.encode(line).tokens


# --- aliases ---------------------------------------------------------------------------------
@pytest.mark.parametrize("alias,vocab_size,marker", [
    ("camemberta", 32003, "▁"), ("camembertv2", 32768, "##"), ("barthez", 50002, "▁"),
    ("bert", 30522, "##"), ("bert-cased", 28996, "##"), ("scibert", 31090, "##"), ("flaubert", 67542, "</w>"),
])
def test_alias_from_tokenizers_dir(toks: Path, alias: str, vocab_size: int, marker: str) -> None:
    tok = load_any(alias, tokenizers_dir=toks)
    assert (tok.name, tok.vocab_size, tok.marker) == (alias, vocab_size, marker)


def test_alias_from_env(toks: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIOTOK_TOKENIZERS_DIR", str(toks))
    assert load_any("CamemBERTa").vocab_size == 32003


# --- bad input -------------------------------------------------------------------------------
def test_missing_file() -> None:
    with pytest.raises(TokenizerLoadError, match="not found"):
        load_any("no/such/vocab.txt")


def test_malformed_tokenizer_json(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text('{"model": ', encoding="utf-8")
    with pytest.raises(TokenizerLoadError, match="not valid JSON"):
        load_any(tmp_path / "tokenizer.json")
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "Nope"}}', encoding="utf-8")
    with pytest.raises(TokenizerLoadError, match="not a tokenizers tokenizer.json"):
        load_any(tmp_path)


def test_malformed_vocab_txt(tmp_path: Path, toks: Path) -> None:
    with pytest.raises(TokenizerLoadError, match="duplicate token"):
        load_any(toks / "camembertv2-base" / "vocab.txt")  # "\n" tokens break the line ids
    (tmp_path / "vocab.txt").write_bytes(b"[PAD]\x00\n[UNK]\n")
    with pytest.raises(TokenizerLoadError, match="binary"):
        read_vocab_txt(tmp_path / "vocab.txt")
    (tmp_path / "vocab.txt").write_text("a\nb\n##c\n", encoding="utf-8")
    with pytest.raises(TokenizerLoadError, match="no unknown token"):
        load_any(tmp_path / "vocab.txt")


def test_malformed_bpe_files(tmp_path: Path) -> None:
    (tmp_path / "vocab.json").write_text(json.dumps({"a</w>": 0}), encoding="utf-8")
    with pytest.raises(TokenizerLoadError, match="merges.txt is missing"):
        load_any(tmp_path / "vocab.json")
    (tmp_path / "merges.txt").write_text("a b c d\n", encoding="utf-8")
    with pytest.raises(TokenizerLoadError, match="expected 'left right'"):
        load_any(tmp_path)
    (tmp_path / "vocab.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(TokenizerLoadError, match="not a BPE vocabulary"):
        load_any(tmp_path / "merges.txt")


def test_mixed_formats_in_a_dir(tmp_path: Path, toks: Path) -> None:
    (tmp_path / "vocab.txt").write_bytes((toks / "bert-base-uncased" / "vocab.txt").read_bytes())
    (tmp_path / "spm.model").write_bytes((toks / "camemberta-base" / "spm.model").read_bytes())
    with pytest.raises(TokenizerLoadError, match="mixes tokenizer formats"):
        load_any(tmp_path)
    assert load_any(tmp_path / "vocab.txt").vocab_size == 30522  # naming the file resolves it


def test_unknown_extension_and_alias(tmp_path: Path) -> None:
    (tmp_path / "tok.bin").write_bytes(b"\x00\x01")
    with pytest.raises(TokenizerLoadError, match="unknown tokenizer format"):
        load_any(tmp_path / "tok.bin")
    with pytest.raises(TokenizerLoadError, match="not a file, a directory nor a known alias"):
        load_any("camembert-large-xyz")
    with pytest.raises(TokenizerLoadError, match="holds no tokenizer"):
        load_any(tmp_path)


def test_biotok_artifact_dir(tmp_path: Path, toks: Path) -> None:
    """An artifact folder (tokenizer.json + biotok.json) loads through the public biotok.load."""
    import biotok

    art = tmp_path / "my-tok"
    art.mkdir()
    (art / "tokenizer.json").write_bytes(gzip.decompress((toks / "camemberta-base" / "tokenizer.json.gz").read_bytes()))
    (art / "biotok.json").write_text(json.dumps({"config": {"normalize": {"lowercase": True}}}), encoding="utf-8")
    tok = biotok.load(art)
    assert (tok.name, tok.lowercase, tok.vocab_size) == ("my-tok", True, 32003)
    # --lower/--cased rebuilds vocab files only; a saved pipeline is used as saved
    assert biotok.load(str(art), lowercase=False).lowercase is True


def test_lowercase_read_from_the_normalizer(tmp_path: Path, toks: Path) -> None:
    from biotok.formats.wordpiece import wordpiece_from_vocab

    assert load_any(toks / "camembertv2-base").lowercase is False
    assert load_any(toks / "camemberta-base" / "spm.model").lowercase is False
    (tmp_path / "tokenizer.json").write_text(
        wordpiece_from_vocab({"[UNK]": 0, "a": 1}, lowercase=True).to_str(), encoding="utf-8")
    assert load_any(tmp_path / "tokenizer.json").lowercase is True


def test_saved_padding_and_truncation_are_switched_off(tmp_path: Path, tiny_wordpiece: Path) -> None:
    """sentence-transformers models save padding to 128 and truncation in tokenizer.json: loading
    must measure the tokenizer, not pad every term with [PAD] pieces or cut long texts."""
    from tokenizers import Tokenizer

    backend = Tokenizer.from_file(str(tiny_wordpiece / "tokenizer.json"))
    backend.enable_padding(length=128, pad_token="[PAD]", pad_id=backend.token_to_id("[PAD]"))
    backend.enable_truncation(max_length=4)
    backend.save(str(tmp_path / "tokenizer.json"))
    saved = json.loads((tmp_path / "tokenizer.json").read_text())
    assert saved["padding"] and saved["truncation"]
    text = "Le patient présente une hypertension artérielle sévère depuis dix ans ."
    tok, ref = load_any(tmp_path / "tokenizer.json"), load_any(tiny_wordpiece)
    assert tok.tokenize(text) == ref.tokenize(text)
    assert "[PAD]" not in tok.tokenize("dose") and len(tok.tokenize(text)) > 4
