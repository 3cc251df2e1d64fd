"""Vocabulary transfer on tiny models the tests build: copied, special, composed and random rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers  # noqa: E402

from biotok.errors import BiotokError, ConfigError, OutputExistsError, TokenizerLoadError  # noqa: E402
from biotok_train.config import TransferConfig  # noqa: E402
from biotok_train.transfer import (  # noqa: E402
    TransferError,
    plan_transfer,
    segment_as_old,
    transfer,
    transfer_to,
)

torch.set_num_threads(1)

WP_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WP_PIECES = ["le", "la", "patient", "pat", "##ient", "##s", "##t", "##e", "douleur", "dou", "##leur",
             "a", "p", "t", "##a", "##i", "##n", "##l", "##o", "##u", "##r", "d", ",", "."]
UG_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def _save_tok(backend: Tokenizer, specials: dict[str, str], d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    backend.save(str(d / "tokenizer.json"))
    (d / "special_tokens_map.json").write_text(json.dumps({f"{r}_token": t for r, t in specials.items()}))


def wordpiece(d: Path, pieces=WP_PIECES) -> Path:
    vocab = {p: i for i, p in enumerate(WP_SPECIALS + list(pieces))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in WP_SPECIALS])
    _save_tok(tok, {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}, d)
    return d


def unigram(d: Path, pieces: list[str]) -> Path:
    vocab = [(t, 0.0) for t in UG_SPECIALS] + [(p, -1.0 - 0.1 * len(p)) for p in pieces]
    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in UG_SPECIALS])
    _save_tok(tok, {"bos": "<s>", "cls": "<s>", "pad": "<pad>", "eos": "</s>", "sep": "</s>", "unk": "<unk>",
                    "mask": "<mask>"}, d)
    return d


UG_OLD = ["▁le", "▁la", "▁patient", "▁pat", "ient", "s", "t", "▁douleur", "▁dou", "leur", "▁", "e", "a",
          "i", "n", "l", "o", "u", "r", "d", "p", ",", "."]
UG_NEW = ["▁le", "▁patient", "ient", "s", "▁patients", "tient", "▁douleurs", "▁xyz", "▁", "▁d", "eur", "."]


def _tiny(kind: str, vocab_size: int, pad: int, **extra):
    T = transformers
    common = dict(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=40, pad_token_id=pad,
                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **extra)
    torch.manual_seed(0)
    if kind == "bert":
        m = T.BertForMaskedLM(T.BertConfig(**common))
    elif kind == "roberta":
        m = T.RobertaForMaskedLM(T.RobertaConfig(type_vocab_size=1, **common))
    elif kind == "camembert":
        m = T.CamembertForMaskedLM(T.CamembertConfig(type_vocab_size=1, **common))
    elif kind == "albert":
        m = T.AlbertForPreTraining(T.AlbertConfig(embedding_size=8, **common))
    else:
        raise AssertionError(kind)
    with torch.no_grad():  # a non-zero bias, so that copying it is tested
        m.get_output_embeddings().bias.copy_(torch.randn(vocab_size))
    return m


def _model_dir(d: Path, kind: str, tok_fn, *tok_args) -> Path:
    tok_fn(d, *tok_args)
    import biotok

    tok = biotok.load(d)
    m = _tiny(kind, tok.vocab_size, tok.pad_id)
    m.save_pretrained(str(d))
    return d


@pytest.fixture()
def bert_dir(tmp_path) -> Path:
    return _model_dir(tmp_path / "bert", "bert", wordpiece)


@pytest.fixture()
def new_unigram(tmp_path) -> Path:
    return unigram(tmp_path / "new-ug", UG_NEW)


def _emb(m):
    return m.get_input_embeddings().weight.detach()


def _bias(m):
    return m.get_output_embeddings().bias.detach()


def test_wordpiece_bert_to_unigram_copies_composes_and_maps_specials(bert_dir, new_unigram):
    import biotok

    old_tok, new_tok = biotok.load(bert_dir), biotok.load(new_unigram)
    old_model = transformers.BertForMaskedLM.from_pretrained(str(bert_dir))
    r = transfer(bert_dir, new_unigram, TransferConfig(method="fvt", seed=1))
    o, n = old_tok.token_to_id, new_tok.token_to_id
    E_old, b_old, E, b = _emb(old_model), _bias(old_model), _emb(r.model), _bias(r.model)
    assert E.shape == (new_tok.vocab_size, 16) and r.model.config.vocab_size == new_tok.vocab_size
    # copied: same form, same word-start status, exactly the old row and bias
    for new_piece, old_piece in [("▁le", "le"), ("▁patient", "patient"), ("ient", "##ient"), ("s", "##s"),
                                 ("▁d", "d")]:
        assert r.plan.kinds[n(new_piece)] == "copied"
        assert torch.equal(E[n(new_piece)], E_old[o(old_piece)])
        assert torch.equal(b[n(new_piece)], b_old[o(old_piece)])
    # '.' is a continuation in SentencePiece but a word start in WordPiece: not the same piece, yet
    # BERT's pre-tokenizer starts a new word at '.', so its segmentation is the word '.'
    assert r.plan.kinds[n(".")] == "composed" and r.plan.sources[n(".")] == (o("."),)
    # composed: the mean of the old rows of the old segmentation (worked out by hand)
    expected = {
        "▁patients": ["patient", "##s"],  # a word: WordPiece on 'patients'
        "tient": ["##t", "##ient"],  # a continuation: WordPiece on '##tient'
        "▁douleurs": ["douleur", "##s"],
        "eur": ["##e", "##u", "##r"],  # no '##eur' in the old vocab
    }
    for piece, old_pieces in expected.items():
        ids = [o(p) for p in old_pieces]
        assert r.plan.kinds[n(piece)] == "composed", piece
        assert r.plan.sources[n(piece)] == tuple(ids), piece
        assert torch.allclose(E[n(piece)], E_old[ids].mean(0), atol=1e-7, rtol=0), piece
        assert torch.allclose(b[n(piece)], b_old[ids].mean(0), atol=1e-7, rtol=0), piece
    # specials by role: <s>=cls, </s>=sep, <pad>, <unk>, <mask>
    for new_s, old_s in [("<s>", "[CLS]"), ("</s>", "[SEP]"), ("<pad>", "[PAD]"), ("<unk>", "[UNK]"),
                         ("<mask>", "[MASK]")]:
        assert r.plan.kinds[n(new_s)] == "special"
        assert torch.equal(E[n(new_s)], E_old[o(old_s)]) and torch.equal(b[n(new_s)], b_old[o(old_s)])
    # [UNK]-only segmentation and the bare marker: random, from the initializer (bias 0)
    for piece in ("▁xyz", "▁"):
        assert r.plan.kinds[n(piece)] == "random"
        assert float(b[n(piece)]) == 0.0 and float(E[n(piece)].abs().sum()) > 0
    assert r.counts == {"copied": 5, "special": 5, "composed": 5, "random": 2}
    assert sum(r.counts.values()) == new_tok.vocab_size
    # output embeddings stay tied; the head's bias parameter is the decoder's
    assert r.model.get_output_embeddings().weight is r.model.get_input_embeddings().weight
    assert torch.equal(r.model.cls.predictions.bias, b)
    assert r.model.config.pad_token_id == new_tok.pad_id
    assert (r.model.config.bos_token_id, r.model.config.eos_token_id) == (n("<s>"), n("</s>"))


def test_segment_as_old_word_start_and_continuation(tmp_path):
    """A continuation is segmented without the word-start prefix; BERT punctuation starts a word."""
    import biotok

    ug = biotok.load(unigram(tmp_path / "ug", UG_OLD))
    wp = biotok.load(wordpiece(tmp_path / "wp"))

    def seg(tok, form, word_start):
        return [tok.id_to_token(i) for i in segment_as_old(tok, form, word_start)]

    assert seg(ug, "patient", True) == ["▁patient"]
    assert seg(ug, "patient", False) == ["p", "a", "t", "ient"]  # no 'pat' without '▁'
    assert seg(ug, "leurs", False) == ["leur", "s"]
    assert seg(wp, "patients", True) == ["patient", "##s"]
    assert seg(wp, "tient", False) == ["##t", "##ient"]
    assert seg(wp, "t.", False) == ["##t", "."]  # BertPreTokenizer splits '.' off as a word
    assert seg(wp, "xyz", False) == ["[UNK]"]


@pytest.mark.parametrize("kind", ["roberta", "camembert"])
def test_unigram_roberta_to_wordpiece_keeps_the_function_on_shared_pieces(tmp_path, kind):
    """Pad id 1 -> 0: positions are shifted, so a text of copied pieces gives the same hidden states."""
    import biotok

    old_dir = _model_dir(tmp_path / kind, kind, unigram, UG_OLD)
    new_dir = wordpiece(tmp_path / "new-wp")
    r = transfer(old_dir, new_dir, TransferConfig(method="fvt"))
    old_tok, new_tok = biotok.load(old_dir), biotok.load(new_dir)
    old_model = transformers.AutoModelForMaskedLM.from_pretrained(str(old_dir)).eval()
    text = "le patient douleur"
    old_ids = [old_tok.cls_id] + old_tok.encode(text).ids + [old_tok.sep_id, old_tok.pad_id]
    new_ids = [new_tok.cls_id] + new_tok.encode(text).ids + [new_tok.sep_id, new_tok.pad_id]
    assert len(old_ids) == len(new_ids) == 6
    assert all(r.plan.kinds[i] in ("copied", "special") for i in new_ids)
    mask = torch.tensor([[1, 1, 1, 1, 1, 0]])
    with torch.no_grad():
        h_old = old_model.base_model(input_ids=torch.tensor([old_ids]), attention_mask=mask)[0]
        h_new = r.model.eval().base_model(input_ids=torch.tensor([new_ids]), attention_mask=mask)[0]
        logit_old = old_model(input_ids=torch.tensor([old_ids]), attention_mask=mask).logits
        logit_new = r.model(input_ids=torch.tensor([new_ids]), attention_mask=mask).logits
    assert torch.allclose(h_old[0, :5], h_new[0, :5], atol=1e-5)
    # logits of a shared piece are the same in both models
    for piece_old, piece_new in [("▁patient", "patient"), ("ient", "##ient"), ("▁le", "le")]:
        assert torch.allclose(logit_old[0, :5, old_tok.token_to_id(piece_old)],
                              logit_new[0, :5, new_tok.token_to_id(piece_new)], atol=1e-5)
    assert r.model.config.pad_token_id == 0 and r.model.config.max_position_embeddings == 40 - 1


def test_random_method_is_seeded_and_written_bytes_are_reproducible(tmp_path, bert_dir, new_unigram):
    a = transfer_to(bert_dir, new_unigram, tmp_path / "a", TransferConfig(method="random", seed=3))
    transfer_to(bert_dir, new_unigram, tmp_path / "b", TransferConfig(method="random", seed=3))
    c = transfer_to(bert_dir, new_unigram, tmp_path / "c", TransferConfig(method="random", seed=4))
    fvt = transfer(bert_dir, new_unigram, TransferConfig(method="fvt", seed=3))
    sa, sb, sc = ((tmp_path / x / "model.safetensors").read_bytes() for x in "abc")
    assert sa == sb and sa != sc
    assert (tmp_path / "a" / "tokenizer.json").read_bytes() == (tmp_path / "b" / "tokenizer.json").read_bytes()
    assert a.counts["composed"] == 0 and a.counts["random"] == 7
    assert a.counts["copied"] == fvt.counts["copied"] and a.counts["special"] == fvt.counts["special"]
    rand = [i for i, k in enumerate(a.plan.kinds) if k == "random"]
    E = _emb(a.model)
    assert not torch.allclose(E[rand], _emb(c.model)[rand])
    assert not torch.allclose(E[rand[:-2]], _emb(fvt.model)[rand[:-2]])
    # the model's initializer: normal(0, initializer_range), bias 0
    assert float(E[rand].std()) == pytest.approx(0.02, rel=0.5)
    assert torch.all(_bias(a.model)[rand] == 0)
    meta = json.loads((tmp_path / "a" / "transfer.json").read_text())
    assert meta["method"] == "random" and meta["seed"] == 3 and meta["counts"] == a.counts
    assert len(meta["model"]["weights_sha256"]["model.safetensors"]) == 64
    assert meta["new_tokenizer"]["fingerprint"] == a.tokenizer.fingerprint


def test_written_model_reloads_without_biotok(tmp_path, bert_dir, new_unigram):
    r = transfer_to(bert_dir, new_unigram, tmp_path / "out", TransferConfig())
    with torch.no_grad():
        ids = [r.tokenizer.cls_id] + r.tokenizer.encode("le patients").ids + [r.tokenizer.sep_id]
        want = r.model.eval()(input_ids=torch.tensor([ids])).logits[0, :, :].sum(-1).tolist()
    code = (
        "import sys, json, torch\n"
        "from transformers import AutoModelForMaskedLM, AutoTokenizer\n"
        f"m = AutoModelForMaskedLM.from_pretrained({str(tmp_path / 'out')!r}).eval()\n"
        f"t = AutoTokenizer.from_pretrained({str(tmp_path / 'out')!r})\n"
        "enc = t('le patients', return_tensors='pt')\n"
        "with torch.no_grad():\n"
        "    out = m(**enc).logits[0].sum(-1).tolist()\n"
        "assert not any(k == 'biotok' or k.startswith('biotok') for k in sys.modules)\n"
        "print(json.dumps({'ids': enc['input_ids'][0].tolist(), 'out': out, 'mask': t.mask_token,"
        " 'tied': m.get_output_embeddings().weight.data_ptr() == m.get_input_embeddings().weight.data_ptr()}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["ids"] == ids and got["mask"] == "<mask>" and got["tied"]
    assert got["out"] == pytest.approx(want, abs=1e-4)


def test_albert_pretraining_checkpoint(tmp_path, new_unigram):
    old_dir = _model_dir(tmp_path / "albert", "albert", wordpiece)
    r = transfer_to(old_dir, new_unigram, tmp_path / "out", TransferConfig())
    old = transformers.AlbertForPreTraining.from_pretrained(str(old_dir))
    assert type(r.model).__name__ == "AlbertForPreTraining"
    import biotok

    o, n = biotok.load(old_dir).token_to_id, r.tokenizer.token_to_id
    assert torch.equal(_emb(r.model)[n("▁patient")], _emb(old)[o("patient")])
    assert torch.allclose(_emb(r.model)[n("▁patients")], _emb(old)[[o("patient"), o("##s")]].mean(0))
    back = transformers.AutoModelForMaskedLM.from_pretrained(str(tmp_path / "out"))
    assert torch.equal(_emb(back), _emb(r.model)) and torch.equal(_bias(back), _bias(r.model))


def test_electra_discriminator_with_generator(tmp_path, new_unigram):
    """biotok's ELECTRA runs save the discriminator and generator/: both get the new vocabulary."""
    import biotok

    d = wordpiece(tmp_path / "electra")
    tok = biotok.load(d)
    common = dict(vocab_size=tok.vocab_size, embedding_size=8, num_hidden_layers=1, num_attention_heads=2,
                  max_position_embeddings=40, pad_token_id=0)
    torch.manual_seed(0)
    disc = transformers.ElectraForPreTraining(transformers.ElectraConfig(hidden_size=16, intermediate_size=32, **common))
    gen = transformers.ElectraForMaskedLM(transformers.ElectraConfig(hidden_size=8, intermediate_size=16, **common))
    gen.electra.embeddings.load_state_dict(disc.electra.embeddings.state_dict())
    with torch.no_grad():
        gen.generator_lm_head.bias.copy_(torch.randn(tok.vocab_size))
    disc.save_pretrained(str(d))
    gen.save_pretrained(str(d / "generator"))
    r = transfer_to(d, new_unigram, tmp_path / "out", TransferConfig(method="random", seed=0))
    assert r.generator is not None and type(r.model).__name__ == "ElectraForPreTraining"
    assert torch.equal(_emb(r.model), _emb(r.generator))  # shared embeddings stay equal, random rows too
    n, o = r.tokenizer.token_to_id, tok.token_to_id
    assert torch.equal(_bias(r.generator)[n("ient")], gen.generator_lm_head.bias[o("##ient")].detach())
    g2 = transformers.ElectraForMaskedLM.from_pretrained(str(tmp_path / "out" / "generator"))
    d2 = transformers.ElectraForPreTraining.from_pretrained(str(tmp_path / "out"))
    assert g2.config.vocab_size == d2.config.vocab_size == r.tokenizer.vocab_size
    assert torch.equal(_emb(g2), _emb(d2))


def _one_line(e: BaseException) -> None:
    assert isinstance(e, BiotokError) and "\n" not in str(e) and str(e)


def test_bad_inputs_raise_one_line_errors_and_write_nothing(tmp_path, bert_dir, new_unigram):
    out = tmp_path / "out"
    # a task head, no MLM head (a bare BertModel is accepted: tests/biotok_train/test_hf_models.py)
    plain = tmp_path / "plain"
    wordpiece(plain)
    transformers.BertForSequenceClassification(transformers.BertConfig(
        vocab_size=29, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32)).save_pretrained(str(plain))
    with pytest.raises(TransferError, match="no masked-LM head") as e:
        transfer_to(plain, new_unigram, out)
    _one_line(e.value)
    # unsupported architecture
    gpt = tmp_path / "gpt"
    wordpiece(gpt)
    transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=29, n_embd=16, n_layer=1, n_head=2)).save_pretrained(str(gpt))
    with pytest.raises(TransferError, match="unsupported architecture 'gpt2'") as e:
        transfer_to(gpt, new_unigram, out)
    _one_line(e.value)
    # ELECTRA discriminator alone
    disc = tmp_path / "disc"
    wordpiece(disc)
    transformers.ElectraForPreTraining(transformers.ElectraConfig(vocab_size=29, embedding_size=8, hidden_size=16,
                                       num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)).save_pretrained(str(disc))
    with pytest.raises(TransferError, match="without a generator") as e:
        transfer_to(disc, new_unigram, out)
    # not a model directory; a new tokenizer that cannot load
    empty = tmp_path / "empty"  # not a model (and the output is not inside it)
    empty.mkdir()
    with pytest.raises(TransferError, match="no config.json"):
        transfer_to(empty, new_unigram, out)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TokenizerLoadError, match="NEW tokenizer") as e:
        transfer_to(bert_dir, bad, out)
    _one_line(e.value)
    with pytest.raises(ConfigError, match="unknown transfer method"):
        TransferConfig(method="focus")
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]
    # an existing --out without force: refused before any work, left untouched
    out.mkdir()
    (out / "keep").write_text("x")
    with pytest.raises(OutputExistsError) as e:
        transfer_to(bert_dir, new_unigram, out)
    _one_line(e.value)
    assert [p.name for p in out.iterdir()] == ["keep"]
    with pytest.raises(OutputExistsError, match="not a biotok output"):  # --force: only a transfer output
        transfer_to(bert_dir, new_unigram, out, force=True)
    with pytest.raises(OutputExistsError, match="input"):  # never over an input
        transfer_to(bert_dir, new_unigram, bert_dir, force=True)
    (out / "keep").unlink()
    transfer_to(bert_dir, new_unigram, out, force=True)
    transfer_to(bert_dir, new_unigram, out, TransferConfig(seed=2), force=True)
    assert json.loads((out / "transfer.json").read_text())["seed"] == 2


def test_plan_of_identical_vocabularies_copies_everything(tmp_path):
    import biotok

    tok = biotok.load(wordpiece(tmp_path / "wp"))
    plan = plan_transfer(tok, tok, "fvt")
    assert plan.counts == {"copied": len(WP_PIECES), "special": 5, "composed": 0, "random": 0}
    assert all(src == (i,) for i, src in enumerate(plan.sources))


def test_cli_transfer_prints_the_counts_and_refuses_an_existing_out(tmp_path, bert_dir, new_unigram):
    from click.testing import CliRunner

    from biotok_train.cli import main

    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["transfer", str(bert_dir), "--tokenizer", str(new_unigram), "--method", "fvt",
                                  "--seed", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "5 copied, 5 special, 5 composed, 2 random" in r.output
    assert json.loads((out / "transfer.json").read_text())["counts"]["composed"] == 5
    r = CliRunner().invoke(main, ["transfer", str(bert_dir), "-t", str(new_unigram), "--out", str(out)])
    assert r.exit_code == 2
    lines = [l for l in r.output.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("biotok-train: error:") and "--force" in lines[0]
    r = CliRunner().invoke(main, ["transfer", str(bert_dir), "-t", str(new_unigram), "--method", "random",
                                  "--out", str(out), "--force"])
    assert r.exit_code == 0 and "0 composed, 7 random" in r.output
    r = CliRunner().invoke(main, ["transfer", str(tmp_path / "nope"), "-t", str(new_unigram), "--out",
                                  str(tmp_path / "o2")])
    assert r.exit_code == 2 and "not found" in r.output and not (tmp_path / "o2").exists()


def test_deberta_v2_masked_lm(tmp_path, new_unigram):
    """DeBERTa-v2/v3 (CamemBERTa's architecture): relative positions, a `cls` head with a bias."""
    import biotok

    d = wordpiece(tmp_path / "deberta")
    tok = biotok.load(d)
    torch.manual_seed(0)
    cfg = transformers.DebertaV2Config(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32, max_position_embeddings=40,
                                       pad_token_id=0, type_vocab_size=0, relative_attention=True,
                                       position_biased_input=False)
    old = transformers.DebertaV2ForMaskedLM(cfg)
    with torch.no_grad():
        old.get_output_embeddings().bias.copy_(torch.randn(tok.vocab_size))
    old.save_pretrained(str(d))
    r = transfer_to(d, new_unigram, tmp_path / "out", TransferConfig())
    n, o = r.tokenizer.token_to_id, tok.token_to_id
    assert torch.equal(_emb(r.model)[n("▁patient")], _emb(old)[o("patient")])
    assert torch.equal(_bias(r.model)[n("ient")], _bias(old)[o("##ient")])
    back = transformers.AutoModelForMaskedLM.from_pretrained(str(tmp_path / "out"))
    assert torch.equal(_emb(back), _emb(r.model)) and back.config.vocab_size == r.tokenizer.vocab_size


def test_extended_vocabulary_keeps_every_old_row_and_composes_the_new(tmp_path, bert_dir):
    """``biotok extend`` then transfer: the base's rows (and biases) bit-identical, each added
    piece the FVT mean of the base pieces it joins."""
    import biotok
    from biotok.extension import ExtendConfig, extend

    corpus = tmp_path / "c.txt"
    corpus.write_text("le patients la douleurs , patients douleurs .\nla patients tient douleurs\n" * 20,
                      encoding="utf-8")
    ext = extend(bert_dir, [corpus], tmp_path / "ext", ExtendConfig(add=2), workers=1)
    old_tok = biotok.load(bert_dir)
    old_model = transformers.BertForMaskedLM.from_pretrained(str(bert_dir))
    r = transfer(bert_dir, tmp_path / "ext", TransferConfig(method="fvt", seed=1))
    E_old, b_old, E, b = _emb(old_model), _bias(old_model), _emb(r.model), _bias(r.model)
    n_old = old_tok.vocab_size
    assert E.shape[0] == n_old + 2 and r.model.config.vocab_size == n_old + 2
    assert torch.equal(E[:n_old], E_old) and torch.equal(b[:n_old], b_old)
    assert sorted(a.piece for a in ext.added) == ["douleurs", "patients"]
    for a in ext.added:
        ids = [old_tok.token_to_id(p) for p in a.joins]
        assert r.plan.kinds[a.id] == "composed" and r.plan.sources[a.id] == tuple(ids)
        assert torch.allclose(E[a.id], E_old[ids].mean(0), atol=1e-7, rtol=0)
        assert torch.allclose(b[a.id], b_old[ids].mean(0), atol=1e-7, rtol=0)
    assert r.counts["random"] == 0
