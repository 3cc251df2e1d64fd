"""What :mod:`benchmarks.experiments.extend_fr` measures beside ``biotok extend``: held-out pieces/word, the
issue's naive baseline at its best (a domain WordPiece's most frequent new pieces), the ceiling of any added
vocabulary, and the glued strings an extension makes longer. Tokenizers are folders or aliases biotok loads."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from biotok.extension import bare_model, base_words
from biotok.formats import load


def split(lines: list[str], folder: Path, every: int = 10) -> tuple[list[str], Path]:
    """Every ``every``-th non-blank line held out; the others written to folder/sample_train.txt."""
    held = [line for i, line in enumerate(lines, 1) if i % every == 0 and line.strip()]
    train = folder / "sample_train.txt"
    train.write_text("\n".join(line for i, line in enumerate(lines, 1) if i % every) + "\n", encoding="utf-8")
    return held, train


def words(lines: list[str]) -> int:
    """The whitespace words of ``lines``."""
    return sum(len(line.split()) for line in lines)


def pieces_per_word(tokenizer, held: list[str]) -> float:
    """The pieces ``tokenizer`` cuts ``held`` into (special tokens included) per whitespace word, to 4 places."""
    return round(sum(map(len, load(tokenizer).encode_batch(held))) / words(held), 4)


def domain_wordpiece(base: Path, train: Path, held: list[str], k: int, sizes=(8000, 16000, 32000)) -> dict:
    """The issue's naive baseline at its best: a WordPiece trained on ``train`` with the base's
    normalizer and pre-tokenizer, its ``k`` most frequent pieces the base lacks (by their count in
    its own segmentation of ``train``) appended to the base's vocabulary, no check; the size of
    that WordPiece that cuts the held-out pieces most. Lines the result makes longer are counted."""
    from tokenizers import Tokenizer

    tok = load(base)
    j, known = json.loads(tok.backend.to_str()), set(tok.get_vocab())
    lines = [line for line in train.read_text(encoding="utf-8").splitlines() if line.strip()]
    old = tok.backend.encode_batch(held, add_special_tokens=False)
    best = None
    for size in sizes:
        d = _domain(tok, j["model"], lines, size)
        seen = Counter(t for e in d.encode_batch(lines, add_special_tokens=False) for t in e.tokens)
        new = sorted((p for p in seen if p not in known), key=lambda p: (-seen[p], p))[:k]
        nj = json.loads(json.dumps(j))
        nj["model"]["vocab"].update({p: len(nj["model"]["vocab"]) + i for i, p in enumerate(new)})
        now = Tokenizer.from_str(json.dumps(nj)).encode_batch(held, add_special_tokens=False)
        row = {"trained_size": size, "added": len(new), "ppw": round(sum(len(e.ids) for e in now) / words(held), 4),
               "longer_lines": sum(len(b.ids) > len(a.ids) for a, b in zip(old, now))}
        if best is None or row["ppw"] < best["ppw"]:
            best = row
    return best


def _domain(tok, model: dict, lines: list[str], size: int):
    """A WordPiece of ``size`` trained on ``lines`` with the base's normalizer, pre-tokenizer and unknown token."""
    from tokenizers import Tokenizer, models, trainers

    from biotok.backends.hf import _wordpiece_seeds  # the trainer's "##c" ids in sorted order: the same vocabulary

    unk, norm = model["unk_token"], tok.backend.normalizer
    d = Tokenizer(models.WordPiece(unk_token=unk, max_input_chars_per_word=model["max_input_chars_per_word"]))
    d.normalizer, d.pre_tokenizer = norm, tok.backend.pre_tokenizer
    chars = {c for line in lines for c in (norm.normalize_str(line) if norm is not None else line)}
    specials = [unk, *_wordpiece_seeds(chars)]
    d.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=size, special_tokens=specials, show_progress=False))
    return d


def ceiling(base: Path, train: Path, held: list[str]) -> dict:
    """The most any vocabulary added to ``base`` can save on the held-out lines: every word the
    model sees there (after the base's normalizer and pre-tokenizer) taken as one piece; and only
    the words also seen in ``train``."""
    tok = load(base)
    counts = base_words(tok, Counter(w for line in held for w in line.split()))
    seen = base_words(tok, Counter(train.read_text(encoding="utf-8").split()))
    ws = sorted(counts)
    n = [len(e.ids) for e in bare_model(json.loads(tok.backend.to_str())).encode_batch(ws, add_special_tokens=False)]
    total = sum(counts[w] * k for w, k in zip(ws, n))
    return {"every_word": round(sum(counts[w] * (k - 1) for w, k in zip(ws, n)) / total, 4),
            "seen_words": round(sum(counts[w] * (k - 1) for w, k in zip(ws, n) if w in seen) / total, 4)}


def glued(lines: list[str], n: int = 30000, seed: int = 0) -> list[str]:
    """``n`` strings each glued from 3 fragments (1 to 8 characters) of the words of ``lines``, seeded."""
    vocab, rng = sorted({w for line in lines for w in line.split()}), random.Random(seed)
    return ["".join(w[rng.randrange(len(w)):][:rng.randrange(1, 9)] for w in rng.sample(vocab, 3)) for _ in range(n)]


def longer(base, extended, texts: list[str]) -> int:
    """The texts that ``extended`` cuts into more pieces than ``base``, or decodes differently."""
    old, new = load(base), load(extended)
    return sum(len(q) > len(p) or new.decode(q.ids) != old.decode(p.ids)
               for p, q in zip(old.encode_batch(texts), new.encode_batch(texts)))


__all__ = ["ceiling", "domain_wordpiece", "glued", "longer", "pieces_per_word", "split", "words"]
