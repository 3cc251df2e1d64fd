"""``extend``: add a domain's pieces to a pretrained tokenizer's own model, every base id kept.

The corpus is counted as ``biotok train`` counts it (whitespace words, on every core), then each
distinct word goes through the *base's* normalizer and pre-tokenizer and is segmented by the
base's model. A new piece always joins a run of base pieces that the base itself produces, and
is chosen greedily by the pieces it saves on the corpus, recounted after every choice (lazy
greedy over a priority queue: a candidate's saving only drops as others are chosen, so a
re-evaluated head that stays ahead is the best one).

The guarantee, no text segmented into more pieces than by the base and the same decoding:

- BPE (byte-level, '</w>' or SentencePiece): the new merges come after every base merge and
  make pieces no base merge uses, so they can only join what the base produced.
- Unigram: a new piece ``p`` that joins ``m`` base pieces scores their summed scores plus
  ``(m - 1) * DELTA``. Any segmentation using new pieces maps, by splitting each new piece back
  into its base run, to a base segmentation ``DELTA``\\ s below it; so Viterbi uses new pieces
  only on top of the base's own best path (when its lead over the runner-up exceeds the few
  ``DELTA``\\ s), where they can only merge pieces, and it maximizes the pieces saved.
- WordPiece (greedy longest match), by default (``strict``): a new piece ``p`` is kept only if
  the overhang proof accepts it (biotok.extension.wordpiece): where the greedy match takes ``p``
  the base takes ``r1``, the longest base piece beginning ``p``, and the base never takes fewer
  pieces over the rest of ``p`` and any text that follows than over that text alone (words are
  at most ``max_input_chars_per_word`` long), nor fails on one and not the other. Where some
  following text breaks this, ``p`` waits for a *shadow*: a longer piece (base or chosen) that
  begins ``p`` and that text, so that the greedy match never takes ``p`` there. By induction
  along any word, no word takes more pieces than with the base, and a word is ``[UNK]`` for both
  or for neither (docs/extend.md). The savings are counted along the base's boundaries (runs
  joined); the figures reported re-encode every word.

  ``strict=False`` keeps every candidate and only checks it: every counted word is re-encoded
  by the extended tokenizer itself and a piece that made one longer is dropped (more pieces;
  an unseen word can still take one piece more).

Every counted word is re-encoded in every model and mode (proven ones find nothing, ties aside).
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from tokenizers import Tokenizer

from biotok.card import ModelCard, code_block, command_section, current_command, files_table, md_text, py_str, \
    versions_line, write_card
from biotok.config import NormalizeConfig
from biotok.corpus import resolve
from biotok.counting import count_corpus
from biotok.errors import ConfigError, CorpusError, TokenizerLoadError
from biotok.formats import hub, load
from biotok.formats.sentencepiece import BPE as SPM_BPE, CONTROL, NORMAL, SPM_NAMES, UNIGRAM as SPM_UNIGRAM, \
    read_model_proto
from biotok.io import versions
from biotok.output import atomic_directory, check_writable
from biotok.progress import Progress
from biotok.tokenizer import BiotokTokenizer
from biotok.extension.wordpiece import Overhang

logger = logging.getLogger(__name__)

MARKER = "biotok.json"
MAX_SHADOWS = 8  # WordPiece, proven mode: most shadows one candidate may wait for
DELTA = 1e-5  # Unigram: score bonus per base piece a new piece saves (see the module docstring)
AUTO = "auto"
# The selection's version: raised whenever the same base, corpus and config choose other pieces (2: the
# WordPiece overhang proof), so that what is keyed by an extension's inputs (ablate's extend arm) is made again.
SELECTION_VERSION = 2


@dataclass(frozen=True)
class ExtendConfig:
    """How many pieces to add and which are candidates.

    ``add``: the number of pieces, or "auto" (stop where a piece saves under ``flat`` of the
    base's pieces); ``target``: stop once the corpus takes this fraction fewer pieces (0.2), or
    where the curve flattens first. ``max_run``: most base pieces one new piece joins;
    ``min_count``: fewest occurrences of a candidate on the corpus. ``strict`` (WordPiece): only
    pieces proven never to lengthen any text (False: every candidate, checked on the corpus's
    words only; more pieces, no proof for other text). Unigram and BPE are always proven.
    """

    add: int | str | None = AUTO
    target: float | None = None
    flat: float = 1e-4
    max_run: int = 8
    min_count: int = 2
    max_chars: int = 32
    strict: bool = True  # WordPiece: only pieces proven never to lengthen any text (False: checked on the corpus)
    by: str = "savings"  # or "frequency": the naive baseline (most frequent candidates, no recount)

    def __post_init__(self) -> None:
        if self.target is not None:
            if not 0 < self.target < 1:
                raise ConfigError(f"--target must be a fraction between 0 and 1 (such as 20%), not {self.target}")
        elif self.add != AUTO and (not isinstance(self.add, int) or isinstance(self.add, bool) or self.add <= 0):
            raise ConfigError(f"--add must be a positive number of pieces or 'auto', not {self.add!r}")
        if self.by not in ("savings", "frequency"):
            raise ConfigError(f"pieces are chosen by savings or frequency, not {self.by!r}")
        if self.max_run < 2 or self.min_count < 1 or self.max_chars < 2 or not 0 < self.flat < 1:
            raise ConfigError("max_run >= 2, min_count >= 1, max_chars >= 2 and 0 < flat < 1 are required")

    @property
    def selection(self) -> str:
        if self.target is not None:
            return f"target {self.target:.0%} fewer pieces"
        return "auto" if self.add == AUTO else f"{self.add} pieces"


@dataclass(frozen=True)
class AddedPiece:
    """One new piece: its id, its string in the model, the base pieces it joins, what it saved."""

    id: int
    piece: str
    joins: tuple[str, ...]
    savings: int
    score: float | None = None


@dataclass(frozen=True)
class ExtendResult:
    """Where the extended tokenizer went and what the added pieces buy on the corpus."""

    path: Path
    base: str
    model: str
    base_size: int
    vocab_size: int
    added: tuple[AddedPiece, ...]
    base_pieces: int
    pieces: int
    words: int
    seconds: float
    rejected: tuple[str, ...] = ()
    corpus: dict = field(default_factory=dict)
    target: float | None = None

    @property
    def reduction(self) -> float:
        return 1 - self.pieces / self.base_pieces if self.base_pieces else 0.0

    def summary(self) -> str:
        return (f"extended {self.base} ({self.model}, {self.base_size:,} tokens) by {len(self.added):,} pieces: "
                f"{self.base_pieces:,} -> {self.pieces:,} pieces on the corpus ({self.reduction:.1%} fewer) "
                f"in {self.seconds:.1f} s -> {self.path}"
                + (f" (the savings flattened before the {self.target:.0%} target)"
                   if self.target is not None and self.reduction < self.target else ""))

    def load(self) -> BiotokTokenizer:
        return load(self.path)


# --- the base's words -----------------------------------------------------------------------
def base_words(tok: BiotokTokenizer, counts: Counter[str] | dict[str, int]) -> Counter[str]:
    """Whitespace-word counts -> counts of the words the base's model sees (its normalizer and
    pre-tokenizer applied to each distinct word; both work within a whitespace word)."""
    norm, pre = tok.backend.normalizer, tok.backend.pre_tokenizer
    out: Counter[str] = Counter()
    for w, n in counts.items():
        s = norm.normalize_str(w) if norm is not None else w
        if pre is None:
            out[s] += n
            continue
        for piece, _ in pre.pre_tokenize_str(s):
            if piece.strip():
                out[piece] += n
    return out


def bare_model(tokenizer_json: dict) -> Tokenizer:
    """The model alone (no normalizer, pre-tokenizer, added tokens): encodes one model word."""
    j = dict(tokenizer_json, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None,
             added_tokens=[], truncation=None, padding=None)
    return Tokenizer.from_str(json.dumps(j))


def segment(model: Tokenizer, words: Sequence[str], unk_id: int | None = None, unk: str = "") -> list[list[str]]:
    """The model's pieces of each word (Rust, in batches); an unknown span becomes ``unk``."""
    out: list[list[str]] = []
    for i in range(0, len(words), 20000):
        for e in model.encode_batch(list(words[i:i + 20000]), add_special_tokens=False):
            out.append(e.tokens if unk_id is None or unk_id not in e.ids else
                       [unk if x == unk_id else t for t, x in zip(e.tokens, e.ids)])
    return out


# --- selection over runs of base pieces (WordPiece, Unigram) ---------------------------------
class _Runs:
    """Candidates that join runs of base pieces, and each word's segmentation given a chosen set."""

    def __init__(self, kind: str, model: dict, words: list[list[str]], counts: list[int], cfg: ExtendConfig,
                 unk: str | None, known: set[str]) -> None:
        self.kind, self.words, self.counts, self.cfg = kind, words, counts, cfg
        self.prefix = (model.get("continuing_subword_prefix") or "##") if kind == "WordPiece" else ""
        vocab = model["vocab"]
        self.vocab = set(vocab) if isinstance(vocab, dict) else {p for p, _ in vocab}
        self.base = known | self.vocab
        self.max_chars_per_word = model.get("max_input_chars_per_word") or 100
        self.scores = {p: s for p, s in vocab} if kind == "Unigram" else {}
        self.unk = unk
        self.chosen: dict[str, int] = {}  # piece -> base pieces it joins
        self.cur = [len(w) for w in words]
        self.index: dict[str, list[int]] = defaultdict(list)
        self.joins: dict[str, tuple[str, ...]] = {}
        self._collect()

    def join(self, pieces: Sequence[str]) -> str:
        k = len(self.prefix)
        return pieces[0] + "".join(p[k:] for p in pieces[1:]) if k else "".join(pieces)

    def _collect(self) -> None:
        cfg, seen_count = self.cfg, Counter()
        bad: set[str] = set()
        for wi, w in enumerate(self.words):
            if self.unk is not None and self.unk in w:
                continue
            n = self.counts[wi]
            found: set[str] = set()
            for a in range(len(w) - 1):
                for b in range(a + 2, min(len(w), a + cfg.max_run) + 1):
                    run = w[a:b]
                    cand = self.join(run)
                    if len(cand) > cfg.max_chars:
                        break
                    if cand in self.base or cand in bad:
                        continue
                    if cand not in self.joins:
                        self.joins[cand] = tuple(run)
                    elif self.joins[cand] != tuple(run):  # two base segmentations of one string
                        bad.add(cand)
                        continue
                    if cand not in found:
                        found.add(cand)
                        self.index[cand].append(wi)
                    seen_count[cand] += n
        self.frequency = seen_count
        for c in bad:
            self.index.pop(c, None)
            self.joins.pop(c, None)
        for c in [c for c in self.index if seen_count[c] < cfg.min_count]:
            del self.index[c]
            del self.joins[c]
        self.needs: dict[str, list[tuple[str, ...]]] = {}
        self.waiting: dict[str, list[str]] = defaultdict(list)
        if self.kind == "WordPiece" and cfg.strict:
            self._shadows()

    def _shadows(self) -> None:
        """WordPiece, proven mode: a candidate ``p`` is kept only if the base, started at the end
        of the longest base piece beginning ``p``, never takes fewer pieces than started at the
        end of ``p``, whatever text follows (biotok.extension.wordpiece: the overhang proof;
        docs/extend.md: the guarantee). Where a text that follows breaks this, a vocabulary
        piece longer than ``p`` that begins ``p`` and that text (a *shadow*) keeps the greedy
        match from taking ``p`` there: it must be a base piece or a candidate, and ``p`` waits
        until one of each group is chosen. Most candidates need none."""
        proof = Overhang(self.vocab, self.prefix, self.max_chars_per_word)
        needs: dict[str, list[tuple[str, ...]]] = {}
        drop: set[str] = set()
        for cand in self.joins:
            groups = proof.needs(cand, MAX_SHADOWS)
            if groups is None:
                drop.add(cand)
            elif groups:
                needs[cand] = groups
        while True:  # a shadow must itself be a candidate that can be chosen
            for c in drop:
                needs.pop(c, None)
                self.index.pop(c, None)
                self.joins.pop(c, None)
            drop = {c for c, gs in needs.items() if any(not any(q in self.joins for q in g) for g in gs)}
            if not drop:
                break
        self.needs = needs
        for c, gs in needs.items():
            for q in {q for g in gs for q in g}:
                self.waiting[q].append(c)

    def ready(self, cand: str, chosen: Iterable[str] | None = None) -> bool:
        """Whether every shadow ``cand`` needs is chosen (always, outside the proven WordPiece mode)."""
        have = self.chosen if chosen is None else chosen
        return all(any(q in have for q in g) for g in self.needs.get(cand, ()))

    def length(self, wi: int, extra: str | None = None) -> int:
        """Pieces of word ``wi`` with the chosen pieces (and ``extra``)."""
        w, chosen, cfg = self.words[wi], self.chosen, self.cfg
        n = len(w)

        def has(a: int, b: int) -> bool:
            c = self.join(w[a:b])
            return c in chosen or c == extra

        if self.kind == "WordPiece":  # greedy longest match over runs
            a, out = 0, 0
            while a < n:
                step = 1
                for b in range(min(n, a + cfg.max_run), a + 1, -1):
                    if has(a, b):
                        step = b - a
                        break
                a += step
                out += 1
            return out
        best = [0] * (n + 1)  # Unigram: most pieces saved on w[a:]
        for a in range(n - 2, -1, -1):
            v = best[a + 1]
            for b in range(a + 2, min(n, a + cfg.max_run) + 1):
                if has(a, b):
                    v = max(v, b - a - 1 + best[b])
            best[a] = v
        return n - best[0]

    def gain(self, cand: str) -> int:
        if cand in self.needs and not self.ready(cand):
            return 0
        return sum(self.counts[wi] * (self.cur[wi] - self.length(wi, cand)) for wi in self.index[cand])

    def accept(self, cand: str) -> list[str]:
        """Choose ``cand``; returns the candidates this makes ready (those waiting for it as a shadow)."""
        self.chosen[cand] = len(self.joins[cand])
        for wi in self.index[cand]:
            self.cur[wi] = self.length(wi)
        return sorted(c for c in self.waiting.get(cand, ()) if c not in self.chosen and self.ready(c))

    def candidates(self) -> list[str]:
        return list(self.index)

    def initial(self, cand: str) -> int:
        return self.gain(cand)


class _Merges:
    """BPE: merges of adjacent current pieces, most frequent pair first (a merge saves one piece
    per occurrence), after the base's own merges."""

    def __init__(self, model: dict, words: list[list[str]], counts: list[int], cfg: ExtendConfig,
                 unk: str | None, known: set[str]) -> None:
        self.words, self.counts, self.cfg = [list(w) for w in words], counts, cfg
        self.prefix = model.get("continuing_subword_prefix") or ""
        self.base = known | set(model["vocab"])
        self.new: set[str] = set()
        self.unk = unk
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.where: dict[tuple[str, str], set[int]] = defaultdict(set)
        for wi, w in enumerate(self.words):
            for pair in zip(w, w[1:]):
                self.pairs[pair] += counts[wi]
                self.where[pair].add(wi)
        self.chosen: list[tuple[str, str]] = []
        self.frequency = Counter(self.pairs)

    def merged(self, pair: tuple[str, str]) -> str:
        a, b = pair
        k = len(self.prefix)
        return a + (b[k:] if k and b.startswith(self.prefix) else b)

    def ok(self, pair: tuple[str, str]) -> bool:
        m = self.merged(pair)
        return (self.unk not in pair and m not in self.base and m not in self.new
                and len(m) <= self.cfg.max_chars and self.pairs[pair] >= self.cfg.min_count)

    def candidates(self) -> list[tuple[str, str]]:
        return [p for p in self.pairs if self.ok(p)]

    def initial(self, pair) -> int:
        return self.pairs[pair]

    def gain(self, pair) -> int:
        return self.pairs[pair] if self.ok(pair) else 0

    def accept(self, pair) -> list[tuple[str, str]]:
        """Merge ``pair`` everywhere; returns the new pairs it makes (candidates from now on)."""
        a, b = pair
        m = self.merged(pair)
        self.new.add(m)
        self.chosen.append(pair)
        fresh: set[tuple[str, str]] = set()
        for wi in sorted(self.where.pop(pair, ())):
            w, n = self.words[wi], self.counts[wi]
            for p in zip(w, w[1:]):
                self.pairs[p] -= n
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(m)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            self.words[wi] = out
            for p in zip(out, out[1:]):
                self.pairs[p] += n
                self.where[p].add(wi)
                if m in p:
                    fresh.add(p)
        self.pairs.pop(pair, None)
        return sorted(p for p in fresh if self.ok(p))


def _key(c) -> str:
    return c if isinstance(c, str) else "\0".join(c)


def select(sel, cfg: ExtendConfig, base_pieces: int, progress: bool = False, spare: int = 0) -> list[tuple[object, int]]:
    """Lazy greedy: the candidate that saves the most pieces now, recounted after each choice.
    ``spare``: pieces chosen beyond ``cfg.add`` when there are, for those the check drops."""
    if cfg.by == "frequency":  # the naive baseline: the most frequent candidates, never recounted
        ranked = sorted(sel.candidates(), key=lambda c: (-sel.frequency[c], _key(c)))
        n = cfg.add + spare if isinstance(cfg.add, int) else len(ranked)
        if isinstance(cfg.add, int) and len(ranked) < cfg.add:
            raise ConfigError(f"--add {cfg.add:,} is more than the {len(ranked):,} candidate pieces this corpus offers")
        out = []
        for c in ranked:
            if len(out) >= n:
                break
            if getattr(sel, "ready", None) is None or sel.ready(c):  # a piece waiting for a shadow is skipped
                out.append((c, sel.gain(c)))
                sel.accept(c)
        return out
    cands = sel.candidates()
    heap = [(-sel.initial(c), _key(c), c) for c in cands]
    heap = [h for h in heap if h[0] < 0]
    heapq.heapify(heap)
    waiting = sum(1 for c in cands if getattr(sel, "needs", None) and c in sel.needs and not sel.ready(c))
    want = cfg.add if isinstance(cfg.add, int) and cfg.target is None else None
    if want is not None and len(heap) > 0 and len(heap) + waiting < want:
        raise ConfigError(f"--add {want:,} is more than the {len(heap) + waiting:,} candidate pieces this corpus offers "
                          f"(runs of base pieces seen at least {cfg.min_count} times): ask for fewer")
    floor = max(1.0, cfg.flat * base_pieces)
    need, want = want, (want + spare if want is not None else None)
    stamp: dict[str, int] = {}
    out: list[tuple[object, int]] = []
    saved = 0
    bar = Progress(want, "choosing pieces", unit="piece", enabled=progress)
    while heap:
        if want is not None and len(out) >= want:
            break
        if cfg.target is not None and saved >= cfg.target * base_pieces:
            break
        neg, key, c = heapq.heappop(heap)
        if stamp.get(key) != len(out):
            g = sel.gain(c)
            stamp[key] = len(out)
            if g > 0:
                heapq.heappush(heap, (-g, key, c))
            continue
        g = -neg
        if want is None and g < floor:
            break
        for new in sel.accept(c):
            heapq.heappush(heap, (-sel.gain(new), _key(new), new))
        out.append((c, g))
        saved += g
        bar.update(1)
    bar.close()
    if need is not None and len(out) < need:
        raise ConfigError(f"--add {need:,} is more than the {len(out):,} pieces that save anything on this corpus: "
                          "ask for fewer, or give more text")
    return out


# --- building the extended tokenizer ---------------------------------------------------------
def _f32_above(x: float, floor: float) -> float:
    """``x`` as a float32 (a SentencePiece model stores scores so), kept strictly above ``floor``."""
    import numpy as np  # lazy: only a Unigram base needs it

    y = np.float32(x)
    while float(y) <= floor:
        y = np.nextafter(y, np.float32(np.inf))
    return float(y)


def _build(j: dict, kind: str, picks: list, sel, size: int) -> tuple[dict, list[AddedPiece], dict[int, str]]:
    """tokenizer.json with the new pieces at ids ``size``, ``size + 1``...; and the padding
    entries (added tokens beyond the model's vocabulary) a Unigram list needs first."""
    j = json.loads(json.dumps(j))
    model = j["model"]
    added: list[AddedPiece] = []
    padding: dict[int, str] = {}
    if kind == "Unigram":
        vocab = model["vocab"]
        top = {t["id"]: t["content"] for t in j["added_tokens"]}
        floor = min(s for _, s in vocab)
        while len(vocab) < size:  # ids of added tokens beyond the list: kept, as never-chosen pieces
            content = top.get(len(vocab), f"<extend_pad_{len(vocab)}>")
            padding[len(vocab)] = content
            vocab.append([content, floor])
        for i, (c, g) in enumerate(picks):
            runs = sel.joins[c]
            joined = sum(sel.scores[p] for p in runs)
            score = _f32_above(joined + (len(runs) - 1) * DELTA, joined)
            vocab.append([c, score])
            added.append(AddedPiece(size + i, c, runs, g, score))
    elif kind == "WordPiece":
        for i, (c, g) in enumerate(picks):
            model["vocab"][c] = size + i
            added.append(AddedPiece(size + i, c, sel.joins[c], g))
    else:  # BPE
        strings = bool(model["merges"]) and isinstance(model["merges"][0], str)
        for i, (pair, g) in enumerate(picks):
            m = sel.merged(pair)
            model["vocab"][m] = size + i
            model["merges"].append(f"{pair[0]} {pair[1]}" if strings else [pair[0], pair[1]])
            added.append(AddedPiece(size + i, m, tuple(pair), g))
    return j, added, padding


def _piece(sel, kind: str, c) -> str:
    return sel.merged(c) if kind == "BPE" else c


def _base_path(base: str | os.PathLike[str]) -> Path | None:
    """The base's file or folder: the path given, or an alias's local copy (None: neither)."""
    p = Path(str(base)).expanduser()
    if p.exists():
        return p
    if str(base).lower() in hub.REGISTRY:
        return hub.resolve(str(base))
    return None


def _spm_file(base: str | os.PathLike[str]) -> Path | None:
    p = Path(base)
    if p.is_file() and p.name.endswith(".model"):
        return p
    d = p if p.is_dir() else p.parent
    for name in SPM_NAMES:
        if (d / name).is_file():
            return d / name
    return None


def _extend_spm(path: Path, kind: str, added: list[AddedPiece], padding: dict[int, str], size: int) -> bytes | None:
    """The base's SentencePiece model with the same new pieces at the same ids (None: it does
    not describe this tokenizer's model, so it is left out)."""
    proto = read_model_proto(path)
    want = SPM_UNIGRAM if kind == "Unigram" else SPM_BPE
    if proto.trainer_spec.model_type != want or len(proto.pieces) > size:
        return None
    top = min(p.score for p in proto.pieces)
    names = {p.piece for p in proto.pieces}
    while len(proto.pieces) < size:  # the ids of added tokens beyond its pieces, as control pieces
        n = len(proto.pieces)
        content = padding.get(n, f"<extend_pad_{n}>")
        proto.pieces.add(piece=content if content not in names else f"<extend_pad_{n}>", score=0.0, type=CONTROL)
    for i, a in enumerate(added):
        score = a.score if kind == "Unigram" else top - 1 - i  # spm BPE merges by score: after the base's
        proto.pieces.add(piece=a.piece, score=score, type=NORMAL)
    return proto.SerializeToString()




def _tokenizer_config(tok: BiotokTokenizer, base_dir: Path | None) -> dict:
    cfg: dict = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 512,
                 "clean_up_tokenization_spaces": False}
    if base_dir is not None and (base_dir / "tokenizer_config.json").is_file():
        try:
            old = json.loads((base_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
            if isinstance(old.get("model_max_length"), int) and old["model_max_length"] < 10 ** 9:
                cfg["model_max_length"] = old["model_max_length"]
        except (OSError, ValueError):
            pass
    if tok.lowercase is not None:
        cfg["do_lower_case"] = tok.lowercase
    for role in ("unk", "pad", "cls", "sep", "mask", "bos", "eos"):
        if role in tok.specials:
            cfg[f"{role}_token"] = tok.specials[role]
    cfg["model_input_names"] = (["input_ids", "token_type_ids", "attention_mask"] if tok.family == "bert"
                                else ["input_ids", "attention_mask"])
    return cfg


def _corpus_words(tok, corpus: list, workers: int | None, progress: bool):
    """The corpus counted as ``biotok train`` counts it, then each distinct word as the base's own
    normalizer and pre-tokenizer cut it: (the count, words by falling count, their counts)."""
    files = resolve(corpus)
    counted = count_corpus(files, NormalizeConfig.raw(), workers=workers, progress=progress)
    if not counted.counts:
        names = ", ".join(cf.name for cf in files)
        raise CorpusError(f"the corpus is empty: no word in {names}")
    wc = base_words(tok, counted.counts)
    words = sorted(wc, key=lambda w: (-wc[w], w))
    counts = [wc[w] for w in words]
    return counted, words, counts


def _base_pieces(tok, j: dict, kind: str, words: list[str], counts: list[int]):
    """The base's unknown token, its pieces of each word and their total; a corpus mostly unknown
    to the base (a script it cannot encode) is refused."""
    model = bare_model(j)
    unk = j["model"].get("unk_token") if kind != "Unigram" else j["model"]["vocab"][j["model"].get("unk_id") or 0][0]
    unk_id = tok.token_to_id(unk) if unk is not None else None
    pieces = segment(model, words, unk_id, unk or "")
    total = sum(n * len(p) for n, p in zip(counts, pieces))
    unknown = sum(n for n, p in zip(counts, pieces) if unk is not None and unk in p)
    if unknown > 0.5 * sum(counts):
        raise CorpusError(f"{tok.name} cannot encode this corpus: {unknown / sum(counts):.0%} of its words hold "
                          f"{unk} (a script or alphabet the base does not know)")
    return unk, pieces, total


def _guaranteed(j: dict, kind: str, picks: list, sel, size: int, words: list[str], pieces: list, keep: int | None):
    """The extended model whose every counted word is no longer than with the base: a piece that
    makes one longer is dropped (and, for WordPiece, any piece whose shadow it was), then rebuilt.
    Returns (tokenizer.json, added pieces, padding, the words' new pieces, the dropped pieces)."""
    rejected: list[str] = []
    while True:  # the guarantee, checked on every counted word; a piece that breaks it is dropped
        if keep is not None and len(picks) < keep:
            raise ConfigError(f"--add {keep:,}: only {len(picks):,} pieces save anything and keep every word "
                              "as short as with the base: ask for fewer, or give more text")
        new_j, added, padding = _build(j, kind, picks[:keep], sel, size)
        new_model = bare_model(new_j)
        now = segment(new_model, words)
        used = {t for a, b in zip(pieces, now) if len(b) > len(a) for t in b}
        drop = {a.piece for a in added if a.piece in used}
        if not drop:
            break
        logger.info("dropped %d added pieces that made a word longer: %s", len(drop), ", ".join(sorted(drop)[:10]))
        picks = [(c, g) for (c, g) in picks if _piece(sel, kind, c) not in drop]
        if kind == "WordPiece" and sel.needs:  # a piece whose shadow was dropped goes too
            kept: set[str] = set()
            for c, _ in picks:
                if sel.ready(c, kept):
                    kept.add(c)
            drop |= {c for c, _ in picks if c not in kept}
            picks = [(c, g) for (c, g) in picks if c in kept]
        rejected.extend(sorted(drop))
    return new_j, added, padding, now, rejected


def _write(dest: Path, force: bool, inputs: list, new_tok, tok, where: Path | None, spm: Path | None,
           spm_bytes: bytes | None, meta: dict, out: str) -> None:
    """The extended tokenizer's folder, written whole or not at all."""
    base_dir = None if where is None else (where if where.is_dir() else where.parent)
    with atomic_directory(dest, force, inputs=inputs, marker=MARKER) as tmp:
        (tmp / "tokenizer.json").write_bytes(new_tok.to_str(pretty=True).encode("utf-8"))
        (tmp / "tokenizer_config.json").write_text(_dump(_tokenizer_config(tok, base_dir)), encoding="utf-8")
        (tmp / "special_tokens_map.json").write_text(
            _dump({f"{r}_token": t for r, t in tok.specials.items()}), encoding="utf-8")
        if spm_bytes is not None:
            (tmp / spm.name).write_bytes(spm_bytes)
        (tmp / MARKER).write_text(_dump(meta), encoding="utf-8")
        write_card(tmp, _card(out, meta, current_command()))


def extend(
    base: str | os.PathLike[str],
    corpus: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    config: ExtendConfig | None = None,
    *,
    force: bool = False,
    progress: bool = False,
    workers: int | None = None,
) -> ExtendResult:
    """Add pieces chosen by measured savings on ``corpus`` to the model of tokenizer ``base``
    (a path or alias), every base id kept; write a loadable tokenizer folder to ``out``.

    Raises a :class:`~biotok.errors.BiotokError` for bad input; nothing is written then.
    """
    cfg = config or ExtendConfig()
    corpus = list(corpus)
    if not corpus:
        raise CorpusError("no corpus given")
    inputs = corpus + ([base] if Path(str(base)).exists() else [])
    dest = check_writable(out, force, inputs=inputs, marker=MARKER)
    start = time.perf_counter()
    tok = load(base)
    j = json.loads(tok.backend.to_str())
    kind = j["model"]["type"]
    if kind not in ("WordPiece", "Unigram", "BPE"):
        raise TokenizerLoadError(f"{base}: a {kind} model cannot be extended (WordPiece, BPE and Unigram can)")
    size = tok.vocab_size
    counted, words, counts = _corpus_words(tok, corpus, workers, progress)
    unk, pieces, total = _base_pieces(tok, j, kind, words, counts)
    known = set(tok.get_vocab())
    sel = _Runs(kind, j["model"], pieces, counts, cfg, unk, known) if kind != "BPE" else \
        _Merges(j["model"], pieces, counts, cfg, unk, known)
    if not sel.candidates():
        raise ConfigError(f"the corpus offers no candidate piece for {tok.name} (no run of its pieces seen "
                          f"{cfg.min_count}+ times): give more text")
    spare = max(10, cfg.add // 50) if isinstance(cfg.add, int) and cfg.target is None else 0
    picks = select(sel, cfg, total, progress, spare)
    new_j, added, padding, now, rejected = _guaranteed(j, kind, picks, sel, size, words, pieces,
                                                       cfg.add if spare else None)
    new_pieces = sum(n * len(p) for n, p in zip(counts, now))
    new_tok = Tokenizer.from_str(json.dumps(new_j))
    seconds = time.perf_counter() - start
    where = _base_path(base)
    spm = _spm_file(where) if kind in ("Unigram", "BPE") and where is not None else None
    spm_bytes = _extend_spm(spm, kind, added, padding, size) if spm is not None else None
    result = ExtendResult(
        path=dest, base=str(base), model=kind, base_size=size, vocab_size=new_tok.get_vocab_size(True),
        added=tuple(added), base_pieces=total, pieces=new_pieces, words=sum(counts), seconds=seconds,
        rejected=tuple(rejected), corpus=counted.stats(), target=cfg.target,
    )
    meta = _provenance(result, tok, cfg)
    _write(dest, force, inputs, new_tok, tok, where, spm, spm_bytes, meta, str(out))
    return result


def _dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def _provenance(r: ExtendResult, tok: BiotokTokenizer, cfg: ExtendConfig) -> dict:
    return {
        "format": "biotok-tokenizer/1",
        "kind": "extended",
        "versions": versions(),
        "config": {"algo": r.model, "backend": "biotok extend", "normalize": {"lowercase": bool(tok.lowercase)},
                   "extend": asdict(cfg)},
        "base": {"name": tok.name, "source": tok.source or r.base, "vocab_size": r.base_size,
                 "fingerprint": tok.fingerprint},
        "corpus": r.corpus,
        "selection": cfg.selection,
        "added": len(r.added),
        "vocab_size": r.vocab_size,
        "pieces": {"base": r.base_pieces, "extended": r.pieces, "reduction": round(r.reduction, 6),
                   "words": r.words},
        "rejected": list(r.rejected),
        "seconds": round(r.seconds, 3),
        "added_pieces": [{"id": a.id, "piece": a.piece, "joins": list(a.joins), "savings": a.savings,
                          **({"score": a.score} if a.score is not None else {})} for a in r.added],
    }


def _card(name: str, meta: dict, command: str | None) -> ModelCard:
    base, p = meta["base"], meta["pieces"]
    top = ", ".join(md_text(a["piece"]) for a in meta["added_pieces"][:12])
    made = "\n".join([
        f"- base: **{md_text(base['name'])}** ({base['vocab_size']:,} tokens, a {md_text(meta['config']['algo'])} "
        "model): every one of its tokens keeps its id",
        f"- added: {meta['added']:,} pieces"
        + ("" if meta["selection"].endswith(" pieces") else f" ({md_text(meta['selection'])})")
        + f", ids {base['vocab_size']:,} and up, "
        "chosen by the pieces they save on the corpus",
        f"- on the corpus: {p['base']:,} -> {p['extended']:,} pieces ({p['reduction']:.1%} fewer)",
        f"- first added pieces: {top}",
        f"- versions: {versions_line(meta.get('versions', {}))}",
    ])
    usage = code_block("from transformers import AutoTokenizer\n"
                       f"tok = AutoTokenizer.from_pretrained({py_str(name)})\n"
                       "tok.tokenize(\"L’hôpital, 2,5 mg/kg d’acétyltransférase.\")", "python")
    return ModelCard(
        title=f"{md_text(Path(name).name)}: {md_text(base['name'])} extended by biotok",
        summary=("A pretrained tokenizer with a domain's pieces added to its own model: "
                 + ("no word of the corpus is" if meta["config"]["algo"] == "WordPiece"
                    and not meta["config"]["extend"]["strict"] else "no text is")
                 + " segmented into more pieces than by the base, and decoding is the base's. A model keeps "
                 "its rows (`biotok-train transfer MODEL --tokenizer THIS`)."),
        metadata={"library_name": "transformers", "tags": ["biotok", "tokenizer", "extended", "biomedical"]},
        sections=[("How it was made", made), ("Command", command_section(command)),
                  ("Corpus files", files_table((meta.get("corpus") or {}).get("files", []))), ("Usage", usage)],
    )


__all__ = ["AUTO", "SELECTION_VERSION", "AddedPiece", "ExtendConfig", "ExtendResult", "base_words", "extend", "select"]
