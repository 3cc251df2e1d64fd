"""Masking: whole-word masking is right for every piece convention (▁, ##, Ġ, </w>), 80/10/10."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from biotok_train.pretrain.packed import PackedData  # noqa: E402
from biotok_train.pretrain.masking import IGNORE, apply_mask, mask_tokens, select, word_index  # noqa: E402
from biotok_train.config import PrepareConfig  # noqa: E402
from biotok_train.pretrain.prepare import prepare  # noqa: E402

torch.set_num_threads(1)
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_tokenizer(kind: str, lines: list[str], out: Path) -> Path:
    """A tiny tokenizer of one piece convention, trained with the `tokenizers` library."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if kind == "▁":
        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=600, special_tokens=SPECIALS, unk_token="[UNK]")
    elif kind == "##":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=600, special_tokens=SPECIALS)
    elif kind == "Ġ":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=SPECIALS,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    elif kind == "</w>":
        tok = Tokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=SPECIALS, end_of_word_suffix="</w>")
    else:  # pragma: no cover
        raise ValueError(kind)
    tok.train_from_iterator(lines, trainer)
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    (out / "special_tokens_map.json").write_text(json.dumps(
        {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]",
         "mask_token": "[MASK]"}))
    return out


def continues(kind: str, prev: str, piece: str) -> bool:
    """Independent oracle from piece strings: does ``piece`` continue the word of ``prev``?"""
    if kind == "▁":
        return not piece.startswith("▁")
    if kind == "##":
        return piece.startswith("##")
    if kind == "</w>":
        return not prev.endswith("</w>")
    # Ġ byte-level: same word when no Ġ and the characters at the join are of one class
    if piece.startswith("Ġ"):
        return False
    a, b = _bytes_text(prev), _bytes_text(piece)
    if not a or not b or "\ufffd" in a[-1] + b[0]:
        return False  # a piece cut inside a UTF-8 character: no verdict from strings
    a, b = a[-1], b[0]
    return (a.isalpha() and b.isalpha()) or (a.isdigit() and b.isdigit())


def _bytes_text(piece: str) -> str:
    """The text of a byte-level piece (its characters mapped back to bytes)."""
    from tokenizers import decoders

    return decoders.ByteLevel().decode([piece])


@pytest.fixture(scope="module")
def corpus(sample_lines, tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("mcorpus") / "c.txt"
    p.write_text("\n".join(sample_lines[:120]) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("kind", ["▁", "##", "Ġ", "</w>"])
def test_wwm_masks_whole_words_for_every_convention(kind, corpus, sample_lines, tmp_path):
    tok_dir = build_tokenizer(kind, sample_lines[:300], tmp_path / "tok")
    prepare([str(corpus)], tok_dir, PrepareConfig(seq_len=64), tmp_path / "data", progress=False)
    data = PackedData(tmp_path / "data")
    batch = data.batch(np.arange(min(64, len(data))))
    from tokenizers import Tokenizer

    piece = Tokenizer.from_file(str(tok_dir / "tokenizer.json")).id_to_token
    g = torch.Generator().manual_seed(0)
    m = mask_tokens(batch.input_ids, batch.word_starts, batch.special, mask_id=data.mask_id,
                    vocab_size=data.vocab_size, wwm=True, generator=g)
    sel = m.selected
    ids, special = batch.input_ids, batch.special
    checked_multi = 0
    for r in range(ids.shape[0]):
        for j in range(1, ids.shape[1]):
            if special[r, j] or special[r, j - 1]:
                continue
            prev, cur = piece(int(ids[r, j - 1])), piece(int(ids[r, j]))
            if continues(kind, prev, cur):
                # the flag from prepare agrees with the string convention...
                assert not batch.word_starts[r, j], (kind, prev, cur)
                # ...and a word is masked whole or not at all
                assert sel[r, j] == sel[r, j - 1], (kind, prev, cur)
                checked_multi += int(sel[r, j])
    assert checked_multi > 20  # many multi-piece words were actually masked
    frac = sel.sum().item() / (~special).sum().item()
    assert 0.08 < frac < 0.25
    assert (m.labels[sel] == ids[sel]).all() and (m.labels[~sel] == IGNORE).all()


def test_token_masking_splits_words_sometimes(corpus, sample_lines, tmp_path):
    """The check above can fail: without WWM, pieces of one word are masked independently."""
    tok_dir = build_tokenizer("##", sample_lines[:300], tmp_path / "tok")
    prepare([str(corpus)], tok_dir, PrepareConfig(seq_len=64), tmp_path / "data", progress=False)
    data = PackedData(tmp_path / "data")
    batch = data.batch(np.arange(min(64, len(data))))
    sel = select(batch.word_starts, batch.special, wwm=False, generator=torch.Generator().manual_seed(0))
    widx = word_index(batch.word_starts, batch.special)
    split = 0
    for r in range(sel.shape[0]):
        for w in widx[r][sel[r]].unique():
            members = (widx[r] == w) & ~batch.special[r]
            split += int(sel[r][members].any() and not sel[r][members].all())
    assert split > 0


def test_words_never_run_across_separators():
    ws = torch.tensor([[False, True, False, False, False, True, False]])
    special = torch.tensor([[True, False, False, True, False, False, True]])
    # token 4 continues a word cut by the window: it must not join the word before [SEP]
    idx = word_index(ws, special)[0].tolist()
    assert idx[1] == idx[2] and idx[4] != idx[2] and idx[4] != idx[5]


def test_80_10_10_and_specials_never_selected():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(10, 1000, (64, 128), generator=g)
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = special[:, -1] = True
    ws = torch.ones_like(special)
    m = mask_tokens(ids, ws, special, mask_id=3, vocab_size=1000, generator=g)
    sel = m.selected
    assert not sel[special].any()
    frac = sel.float().sum() / (~special).sum()
    assert abs(frac.item() - 0.15) < 0.01
    masked = (m.input_ids == 3) & sel
    kept = (m.input_ids == ids) & sel
    n = sel.sum().item()
    assert abs(masked.sum().item() / n - 0.8) < 0.03
    assert abs(kept.sum().item() / n - 0.1) < 0.03 + 0.01  # kept or random-equal-to-original
    assert (m.input_ids[~sel] == ids[~sel]).all()


def test_electra_corruption_has_no_random_tokens():
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(10, 1000, (32, 64), generator=g)
    sel = torch.rand(ids.shape, generator=g) < 0.15
    m = apply_mask(ids, sel, mask_id=3, vocab_size=1000, mask_frac=0.85, random_frac=0.0, generator=g)
    changed = m.input_ids != ids
    assert (m.input_ids[changed] == 3).all()
    assert abs(changed.sum().item() / sel.sum().item() - 0.85) < 0.05


def test_every_row_gets_a_prediction():
    ws = torch.ones(8, 6, dtype=torch.bool)
    special = torch.zeros(8, 6, dtype=torch.bool)
    special[:, 0] = True
    for wwm in (False, True):
        sel = select(ws, special, prob=1e-6, wwm=wwm, generator=torch.Generator().manual_seed(0))
        assert sel.any(dim=1).all() and not sel[special].any()
