"""eval-mlm and fill-mask on a hand-made model whose predictions are known exactly."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers

from biotok.errors import ConfigError, CorpusError
from biotok.tokenizer import BiotokTokenizer
from biotok_train.evaluate.masked_words import WordSample, masked_word_accuracy, sample_words, samples_sha
from biotok_train.evaluate.fillmask import fill_mask, read_cloze
from tests.conftest import REPO

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "le", "patient", "est", "mal", "##ade", "##in", "ma",
         "##lade", "grave", "ici"]
ID = {p: i for i, p in enumerate(VOCAB)}


@pytest.fixture(scope="module")
def toy_tok() -> BiotokTokenizer:
    backend = Tokenizer(models.WordPiece(ID, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return BiotokTokenizer(backend, name="toy")


class Bigram(torch.nn.Module):
    """Logits at position i are a fixed row chosen by the token at i-1: predictions known exactly."""

    def __init__(self) -> None:
        super().__init__()
        v = len(VOCAB)
        table = -0.001 * torch.arange(v, dtype=torch.float).repeat(v, 1)  # distinct scores, no ties
        table[ID["est"], ID["grave"]] = 10.0  # after "est": grave, then ici, then the rest
        table[ID["est"], ID["ici"]] = 9.0
        table[ID["patient"], ID["ma"]] = 10.0  # after "patient": ma, then mal
        table[ID["patient"], ID["mal"]] = 9.5
        table[ID["ma"], ID["##lade"]] = 10.0  # "ma ##lade" beats "mal ##ade"
        table[ID["mal"], ID["##ade"]] = 10.0
        self.table = torch.nn.Parameter(table, requires_grad=False)

    def forward(self, input_ids, attention_mask=None):
        prev = torch.cat([torch.zeros_like(input_ids[:, :1]), input_ids[:, :-1]], dim=1)
        return SimpleNamespace(logits=self.table[prev])


def _sample(text: str, word: str) -> WordSample:
    start = text.rindex(word)
    return WordSample(text, start, start + len(word), 1)


def test_known_topk(toy_tok):
    samples = [
        _sample("le patient est grave", "grave"),  # rank 1
        _sample("le patient est ici", "ici"),  # rank 2
        _sample("le patient malade", "malade"),  # [mal, ##ade]: rank 2 behind "ma ##lade"
        _sample("le patient est mal", "mal"),  # rank 6: grave, ici, le, patient, est, mal
    ]
    res = masked_word_accuracy(Bigram(), toy_tok, samples)
    assert res.accuracy == {1: 0.25, 3: 0.75, 5: 0.75}
    assert res.n_words == 4 and res.skipped == 0 and res.misaligned == 0
    assert res.mean_pieces == pytest.approx(5 / 4)


def test_topk_is_monotone_and_k1_single_piece(toy_tok):
    res = masked_word_accuracy(Bigram(), toy_tok, [_sample("le patient est ici", "ici")], ks=(1, 2))
    assert res.accuracy == {1: 0.0, 2: 1.0}


def test_sample_words_depends_only_on_text_and_seed():
    lines = [f"Le patient numéro {i} présente une toux sèche et une fièvre, traitée par paracétamol." for i in range(200)]
    a = sample_words(lines, 50, seed=1)
    assert a == sample_words(iter(lines), 50, seed=1)
    assert samples_sha(a) != samples_sha(sample_words(lines, 50, seed=2))
    assert len(a) == 50 and len({(s.line, s.start) for s in a}) == 50
    words = {s.word for s in a}
    assert words <= {"Le", "patient", "numéro", "présente", "une", "toux", "sèche", "et", "fièvre", "traitée",
                     "par", "paracétamol"}
    for s in a:  # the context is the line (short) and the span points at the word
        assert s.text == lines[s.line - 1] and s.text[s.start : s.end] == s.word


def test_sample_words_cuts_long_lines():
    line = " ".join(["mot"] * 500)
    [s] = sample_words([line], 1, seed=0, context_words=10)
    assert len(s.text.split()) <= 21 and s.word == "mot"


def test_sample_words_rejects_zero():
    with pytest.raises(ConfigError):
        sample_words(["a b"], 0)


def test_fill_mask_known(toy_tok):
    for text in ("le patient est <mask>", "le patient est [MASK]"):
        [fillers] = fill_mask(Bigram(), toy_tok, text, k=3)
        assert [f.piece for f in fillers] == ["grave", "ici", "le"]
        assert fillers[0].prob > fillers[1].prob > fillers[2].prob
    with pytest.raises(ConfigError, match="no <mask>"):
        fill_mask(Bigram(), toy_tok, "le patient", k=3)


def test_cloze_file_reads_and_validates(tmp_path):
    shipped = REPO / "corpora" / "cloze" / "fr_medical_cloze.tsv"
    samples = read_cloze(shipped)
    assert len(samples) >= 30
    assert samples[0].word == "antibiotiques" and "<mask>" not in samples[0].text
    bad = tmp_path / "bad.tsv"
    bad.write_text("Le patient est <mask> et <mask>.\tmalade\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.tsv:1: .*exactly one <mask>"):
        read_cloze(bad)
