"""Masked-word accuracy top-1/3/5 (the AliBERT paper's Table 5), comparable across vocabularies.

Words are sampled from the raw text with a seed, before any tokenizer sees it, so every model is
asked about the same words at the same places. A word is masked whole: all its pieces become the
mask token, and the model fills them left to right with a beam search (beam = max k) over
hypotheses of exactly the gold number of pieces. A word counts as correct at k when the gold piece
sequence is among the k best complete hypotheses (by summed log-probability). For one-piece words
this is ordinary top-k accuracy. Definitions and caveats: docs/evaluation.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Sequence

from biotok.errors import ConfigError, CorpusError
from biotok.output import atomic_file, check_writable_file
from biotok.tokenizer import BiotokTokenizer
from biotok_train.hf_models import frame_ids, load_mlm

# A candidate word: 2+ letters, after whitespace or line start, before whitespace, line end or
# closing punctuation. "l'" + "administration" or "anti-TNF" are not candidates: their
# segmentation depends on the pre-tokenizer, which would make the word set tokenizer-dependent.
WORD = re.compile(r"(?<!\S)[^\W\d_]{2,}(?=[\s.,;:!?)\]»\"]|$)")
KS = (1, 3, 5)


@dataclass(frozen=True)
class WordSample:
    """One word to predict: its context text, character span in it, and corpus position."""

    text: str
    start: int
    end: int
    line: int  # 1-based index among the corpus' non-blank lines

    @property
    def word(self) -> str:
        return self.text[self.start : self.end]


@dataclass(frozen=True)
class MlmResult:
    """Accuracy at each k over the scored words, and the bookkeeping that makes it comparable."""

    model: str
    accuracy: dict[int, float]
    n_words: int
    skipped: int  # sampled words that had no piece at all (normalized away)
    misaligned: int  # words whose pieces spill over their boundaries (pieces masked anyway)
    mean_pieces: float  # pieces per scored word for this tokenizer
    samples_sha: str  # identifies the word sample: equal for every model on the same words
    # per sample, in sample order: 1-based rank of the gold word in the beam, 0 when outside it,
    # -1 when the word was not scored (skipped); lets an ablation pair two models word by word
    ranks: tuple[int, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("ranks")
        d["accuracy"] = {f"top{k}": v for k, v in self.accuracy.items()}
        return d


def _context(line: str, start: int, end: int, context_words: int) -> tuple[str, int, int]:
    """Cut a long line to ``context_words`` whitespace words on each side of [start, end)."""
    spans = [m.span() for m in re.finditer(r"\S+", line)]
    i = next(k for k, (s, e) in enumerate(spans) if s <= start < e)
    lo = spans[max(0, i - context_words)][0]
    hi = spans[min(len(spans) - 1, i + context_words)][1]
    return line[lo:hi], start - lo, end - lo


def sample_words(lines: Iterable[str], n: int, seed: int = 0, context_words: int = 48) -> list[WordSample]:
    """Reservoir-sample ``n`` candidate words (see :data:`WORD`) from a stream of lines.

    Depends only on the text, ``n`` and ``seed``: the same words for every tokenizer.
    """
    if n < 1:
        raise ConfigError("--n-words must be >= 1")
    rng = random.Random(seed)
    kept: list[WordSample] = []
    seen = 0
    for lineno, line in enumerate(lines, 1):
        for m in WORD.finditer(line):
            seen += 1
            slot = seen - 1 if len(kept) < n else rng.randrange(seen)
            if slot < n:
                text, s, e = _context(line, m.start(), m.end(), context_words)
                sample = WordSample(text, s, e, lineno)
                if len(kept) < n:
                    kept.append(sample)
                else:
                    kept[slot] = sample
    kept.sort(key=lambda w: (w.line, w.start, w.text))
    return kept


def samples_sha(samples: Sequence[WordSample]) -> str:
    """A short digest of the word sample: equal for every model scored on the same words."""
    h = hashlib.sha256()
    for s in samples:
        h.update(f"{s.line}\t{s.start}\t{s.end}\t{s.text}\n".encode("utf-8"))
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class _Item:
    ids: list[int]  # framed, with the mask ids in place
    positions: list[int]  # masked positions, left to right
    gold: tuple[int, ...]
    misaligned: bool


def _prepare(tok: BiotokTokenizer, samples: Sequence[WordSample], max_length: int) -> tuple[list[_Item | None], int]:
    """Each sample as framed ids with its word's pieces masked (None: the word has no piece or
    does not fit ``max_length``), and the mask id."""
    start_id, end_id, _ = frame_ids(tok)
    mask_id = tok.mask_id
    if mask_id is None:
        raise ConfigError(f"{tok.name}: the tokenizer has no mask token")
    items: list[_Item | None] = []
    encs = tok.encode_batch([s.text for s in samples])
    for s, enc in zip(samples, encs):
        lo = s.start - 1 if s.start > 0 and s.text[s.start - 1].isspace() else s.start  # '▁' pieces
        idx = [i for i, (a, b) in enumerate(enc.offsets) if a < s.end and b > lo and b > a]
        if not idx:
            items.append(None)
            continue
        idx = list(range(idx[0], idx[-1] + 1))
        mis = any(enc.offsets[i][0] < lo or enc.offsets[i][1] > s.end for i in idx)
        ids = list(enc.ids)
        gold = tuple(ids[i] for i in idx)
        room = max_length - 2
        first, last = idx[0], idx[-1] + 1
        if len(ids) > room:  # keep a window centred on the word
            if last - first > room:
                items.append(None)
                continue
            left = max(0, min(first - (room - (last - first)) // 2, len(ids) - room))
            ids = ids[left : left + room]
            first, last = first - left, last - left
        for i in range(first, last):
            ids[i] = mask_id
        items.append(_Item([start_id, *ids, end_id], list(range(first + 1, last + 1)), gold, mis))
    return items, mask_id


def beam_fill(model, items: Sequence[_Item], beam: int, pad_id: int, banned: Sequence[int] = (), batch_size: int = 32,
              bf16: bool = True) -> list[list[tuple[int, ...]]]:
    """For each item, the ``beam`` best piece sequences for its masked positions, best first.

    Left to right: at step j every hypothesis fills positions < j with its pieces (later ones
    stay masked) and is extended by the ``beam`` most probable pieces at position j. ``bf16``:
    the forward passes under bf16 autocast where supported, the log-softmax in fp32.
    """
    import torch

    from biotok_train.precision import autocast  # lazy: imports torch

    device = next(model.parameters()).device if any(True for _ in model.parameters()) else torch.device("cpu")
    out: list[list[tuple[int, ...]]] = []
    for b0 in range(0, len(items), batch_size):
        group = items[b0 : b0 + batch_size]
        hyps: list[list[tuple[float, tuple[int, ...]]]] = [[(0.0, ())] for _ in group]
        for step in range(max(len(it.positions) for it in group)):
            rows, owners = [], []
            for g, it in enumerate(group):
                if step >= len(it.positions):
                    continue
                for h, (_, seq) in enumerate(hyps[g]):
                    ids = list(it.ids)
                    for p, t in zip(it.positions, seq):
                        ids[p] = t
                    rows.append(ids)
                    owners.append((g, h))
            width = max(len(r) for r in rows)
            x = torch.full((len(rows), width), pad_id, dtype=torch.long)
            att = torch.zeros((len(rows), width), dtype=torch.long)
            for r, ids in enumerate(rows):
                x[r, : len(ids)] = torch.tensor(ids)
                att[r, : len(ids)] = 1
            with torch.no_grad(), autocast(device, bf16):
                logits = model(input_ids=x.to(device), attention_mask=att.to(device)).logits
            pos = torch.tensor([group[g].positions[step] for g, _ in owners], device=logits.device)
            lp = torch.log_softmax(logits[torch.arange(len(rows), device=logits.device), pos].float(), dim=-1)
            if banned:
                lp[:, list(banned)] = float("-inf")
            top = lp.topk(min(beam, lp.shape[-1]), dim=-1)
            cand: dict[int, list[tuple[float, tuple[int, ...]]]] = {}
            for r, (g, h) in enumerate(owners):
                score, seq = hyps[g][h]
                for v, t in zip(top.values[r].tolist(), top.indices[r].tolist()):
                    cand.setdefault(g, []).append((score + v, seq + (t,)))
            for g, c in cand.items():
                c.sort(key=lambda st: -st[0])  # stable: ties keep the model's top-k order
                hyps[g] = c[:beam]
        out.extend([seq for _, seq in h] for h in hyps)
    return out


def masked_word_accuracy(
    model, tok: BiotokTokenizer, samples: Sequence[WordSample], ks: Sequence[int] = KS,
    *, max_length: int = 512, batch_size: int = 32, name: str = "", bf16: bool = True,
) -> MlmResult:
    """Top-k whole-word accuracy of ``model`` (any module returning ``.logits``) on ``samples``
    (``bf16``: autocast where supported, :mod:`biotok_train.precision`)."""
    if batch_size < 1:
        raise ConfigError("--batch-size must be at least 1")
    cfg = getattr(model, "config", None)
    max_length = min(max_length, getattr(cfg, "max_position_embeddings", max_length) or max_length)
    items, _ = _prepare(tok, samples, max_length)
    scored = [it for it in items if it is not None]
    if not scored:
        raise ConfigError("no sampled word could be scored with this tokenizer")
    model.eval()
    beams = beam_fill(model, scored, max(ks), frame_ids(tok)[2], sorted(tok.special_ids), batch_size, bf16)
    acc = {k: sum(it.gold in b[:k] for it, b in zip(scored, beams)) / len(scored) for k in ks}
    found = iter([b.index(it.gold) + 1 if it.gold in b else 0 for it, b in zip(scored, beams)])
    ranks = tuple(-1 if it is None else next(found) for it in items)
    return MlmResult(
        model=name or tok.name, accuracy=acc, n_words=len(scored), skipped=len(items) - len(scored),
        misaligned=sum(it.misaligned for it in scored),
        mean_pieces=sum(len(it.gold) for it in scored) / len(scored), samples_sha=samples_sha(samples),
        ranks=ranks,
    )


def eval_mlm(
    model_path: str | os.PathLike[str], corpus: Sequence[str | os.PathLike[str]], n_words: int = 1000,
    seed: int = 0, *, field_name: str | None = None, out: str | os.PathLike[str] | None = None,
    batch_size: int = 32, force: bool = False,
) -> MlmResult:
    """Sample words from ``corpus`` (via :func:`biotok.corpus.iter_lines`) and score ``model_path``;
    with ``out``, write the result as JSON there (refused when it exists without ``force``)."""
    from biotok.corpus import corpus_names, iter_lines

    inputs = [model_path, *corpus]
    if out is not None:
        check_writable_file(out, force, inputs)
    samples = sample_words(iter_lines(corpus, field_name), n_words, seed)
    if not samples:  # said before the model loads, naming the files read
        raise CorpusError(f"no word to mask in --corpus {corpus_names(corpus)}: it is empty or holds no word of two "
                          "letters or more")
    model, tok = load_mlm(model_path)
    result = masked_word_accuracy(model, tok, samples, batch_size=batch_size, name=str(model_path))
    if out is not None:
        with atomic_file(out, force, inputs) as tmp:
            tmp.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
    return result


def format_mlm(result: MlmResult) -> str:
    """One terminal line: accuracy at each k and the bookkeeping."""
    accs = "  ".join(f"top-{k} {v:.3f}" for k, v in result.accuracy.items())
    return (f"{result.model}: {accs}  ({result.n_words} words, {result.mean_pieces:.2f} pieces/word, "
            f"{result.skipped} skipped, {result.misaligned} misaligned, sample {result.samples_sha})")
