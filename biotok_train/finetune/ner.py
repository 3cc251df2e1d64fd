"""Token classification (NER) as in the AliBERT paper's Table 4: a :class:`NerTask` for the engine.

Words come from :mod:`biotok_train.tasks` (word-level IOB2). Each word is tokenized on its own
(``is_pretokenized``), the label goes on its first piece and the other pieces get -100. Long
sentences are cut at word boundaries, outside entities when possible. Early stopping on the dev
micro-F1 (or the named task's benchmark metric); test is scored with seqeval, entity level,
strict IOB2 mode: precision, recall, F1 per type, micro and macro averages.

Tagging scheme (PubMedBERT Table 13): the model may be trained on ``bio`` (IOB2), ``bioul``
(BILOU) or ``io`` tags (:func:`to_scheme`); its predictions are turned back into IOB2
(:func:`from_scheme`: strict BILOU parsing, an IO run of one type is one entity) and always
scored against the original IOB2 gold, so the schemes are compared on the same entities (IO
cannot separate two adjacent entities of one type, and pays for it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from biotok.errors import ConfigError
from biotok.tokenizer import BiotokTokenizer
from biotok_train.config import FinetuneConfig
from biotok.datasets.bio import Sentence
from biotok_train.scores import SCHEMES, entity_report, io_to_bio
from biotok_train.finetune.common import Metric, add_benchmark, example_id
from biotok_train.finetune.batches import pad_rows
from biotok_train.finetune.engine import FinetuneResult, Scores, fit, label_kwargs
from biotok_train.finetune.engine import predict as engine_predict
from biotok_train.tasks.examples import TaskData
from biotok_train.hf_models import frame_ids


def to_scheme(tags: Sequence[str], scheme: str) -> list[str]:
    """IOB2 ``tags`` in ``scheme``: bio (as is), bioul (last word L-, single word U-) or io (B- -> I-)."""
    if scheme == "bio":
        return list(tags)
    if scheme == "io":
        return ["I-" + t[2:] if t.startswith("B-") else t for t in tags]
    if scheme != "bioul":
        raise ConfigError(f"unknown tagging scheme {scheme!r} (one of {', '.join(SCHEMES)})")
    out = []
    for i, t in enumerate(tags):
        if t == "O":
            out.append(t)
            continue
        ends = i + 1 == len(tags) or tags[i + 1] != "I-" + t[2:]
        if t.startswith("B-"):
            out.append(("U-" if ends else "B-") + t[2:])
        else:
            out.append(("L-" if ends else "I-") + t[2:])
    return out


def from_scheme(tags: Sequence[str], scheme: str) -> list[str]:
    """Predicted ``scheme`` tags as IOB2. bio: as is (seqeval's strict mode ignores a stray I-);
    io: each run of one type is an entity; bioul: strict, only U-X and B-X I-X* L-X are entities,
    every other tag becomes O."""
    if scheme == "bio":
        return list(tags)
    if scheme == "io":
        return io_to_bio(tags)
    out = ["O"] * len(tags)
    i = 0
    while i < len(tags):
        t = tags[i]
        if t.startswith("U-"):
            out[i] = "B-" + t[2:]
        elif t.startswith("B-"):
            typ, j = t[2:], i + 1
            while j < len(tags) and tags[j] == "I-" + typ:
                j += 1
            if j < len(tags) and tags[j] == "L-" + typ:
                out[i : j + 1] = ["B-" + typ] + ["I-" + typ] * (j - i)
                i = j
        i += 1
    return out


def scheme_labels(types: Sequence[str], scheme: str) -> list[str]:
    """'O' then the scheme's prefixes for every entity type."""
    prefixes = {"bio": "BI", "bioul": "BILU", "io": "I"}[scheme]
    return ["O"] + [f"{p}-{t}" for t in types for p in prefixes]


@dataclass(frozen=True)
class _Chunk:
    sentence: int  # index of the sentence it comes from
    first_word: int  # index of its first word in that sentence
    n_words: int
    input_ids: list[int]
    labels: list[int]  # -100 except on the first piece of each word
    word_pos: list[int]  # position of each word's first piece (-1: the word has no piece)


def encode(
    tok: BiotokTokenizer, sentences: Sequence[Sentence], label2id: dict[str, int], max_length: int,
    scheme: str = "bio",
) -> list[_Chunk]:
    """Sentences to model inputs, cut at word boundaries (not inside an entity when possible)
    so every chunk fits ``max_length`` pieces including [CLS]/[SEP]; the labels are the IOB2
    tags in ``scheme``."""
    start_id, end_id, _ = frame_ids(tok)
    budget = max_length - 2
    chunks: list[_Chunk] = []
    encs = tok.backend.encode_batch([list(s.words) for s in sentences], is_pretokenized=True, add_special_tokens=False)
    for si, (s, enc) in enumerate(zip(sentences, encs)):
        pieces: list[list[int]] = [[] for _ in s.words]
        for pid, wid in zip(enc.ids, enc.word_ids):
            if wid is not None:
                pieces[wid].append(pid)
        tags = to_scheme(s.tags, scheme)
        for tag in tags:
            if tag not in label2id:
                raise ConfigError(f"{s.source}: tag {tag} is not among the model's labels")
        w = 0
        while w < len(s.words):
            end = _chunk_end(s.tags, pieces, w, budget)
            ids, labels, pos = [start_id], [-100], []
            for k in range(w, end):
                p = pieces[k][: budget - (len(ids) - 1)] if pieces[k] else []
                pos.append(len(ids) if p else -1)
                for j, pid in enumerate(p):
                    ids.append(pid)
                    labels.append(label2id[tags[k]] if j == 0 else -100)
            ids.append(end_id)
            labels.append(-100)
            chunks.append(_Chunk(si, w, end - w, ids, labels, pos))
            w = end
    return chunks


def _chunk_end(tags: Sequence[str], pieces: list[list[int]], w: int, budget: int) -> int:
    """The word after the last one of the chunk starting at word ``w``: as many words as fit
    ``budget`` pieces, moved back to the last cut outside an entity when it would split one."""
    end, used, cut = w, 0, None
    while end < len(tags) and used + max(1, len(pieces[end])) <= budget:
        used += len(pieces[end])
        end += 1
        if end < len(tags) and not tags[end].startswith("I-"):
            cut = end
    if end == w:  # one word longer than the budget: keep its first pieces
        return w + 1
    if end < len(tags) and tags[end].startswith("I-") and cut is not None and cut > w:
        return cut
    return end


def score(gold: list[list[str]], pred: list[list[str]]) -> dict:
    """seqeval entity-level report (strict IOB2) as plain floats and ints
    (:func:`~biotok_train.scores.entity_report`: seqeval's numbers, entities read in one pass)."""
    return entity_report(gold, pred)


class NerTask:
    """Word-level tagging with ``AutoModelForTokenClassification``; dev metric micro-F1, or the
    benchmark ``metric`` of a named task (``entity_f1``). ``scheme``: the tags the model learns."""

    name = "ner"
    auto_model = "AutoModelForTokenClassification"

    def __init__(self, scheme: str = "bio", metric: Metric | None = None) -> None:
        if scheme not in SCHEMES:
            raise ConfigError(f"unknown tagging scheme {scheme!r} (one of {', '.join(SCHEMES)})")
        self.scheme, self.bench = scheme, metric
        self.metric = metric.name if metric is not None else "micro_f1"

    def labels(self, dataset) -> list[str]:
        """'O' then the scheme's prefixes (IOB2: B-/I-) of every entity type seen in any split."""
        splits = (dataset.train, dataset.dev, dataset.test)
        types = sorted({t for split in splits for s in split for t, _, _ in s.entities})
        return scheme_labels(types, self.scheme)

    def model_kwargs(self, labels: list[str]) -> dict:
        return label_kwargs(labels)

    def encode(self, tok: BiotokTokenizer, examples: Sequence[Sentence], labels: list[str], max_length: int) -> list:
        return encode(tok, examples, {l: i for i, l in enumerate(labels)}, max_length, self.scheme)

    def collate(self, features: Sequence[_Chunk], pad_id: int) -> dict:
        ids, mask = pad_rows([c.input_ids for c in features], pad_id)
        gold, _ = pad_rows([c.labels for c in features], -100)
        return {"input_ids": ids, "attention_mask": mask, "labels": gold}

    def decode(self, examples: Sequence[Sentence], features: Sequence[_Chunk], logits: list, labels: list[str]) -> list:
        """The argmax label of each word's first piece ('O' for a word without pieces), as IOB2."""
        out = [["O"] * len(s.words) for s in examples]
        for c, row in zip(features, logits):
            best = row.argmax(-1)
            for k, p in enumerate(c.word_pos):
                if p >= 0:
                    out[c.sentence][c.first_word + k] = labels[int(best[p])]
        return [from_scheme(tags, self.scheme) for tags in out]

    def score(self, examples: Sequence[Sentence], predictions: list, labels: list[str]) -> Scores:
        rep = score([list(s.tags) for s in examples], predictions)
        metrics = {"micro_f1": rep["micro avg"]["f1-score"], "macro_f1": rep["macro avg"]["f1-score"]}
        add_benchmark(metrics, self.bench, "ner", examples, predictions)
        return Scores(metrics, rep)

    def prediction_rows(self, examples: Sequence[Sentence], predictions: list) -> list[dict]:
        """predictions.jsonl: id, words, gold and predicted IOB2 tags of each sentence."""
        return [{"id": example_id(s, i), "words": list(s.words), "gold": list(s.tags), "pred": list(p)}
                for i, (s, p) in enumerate(zip(examples, predictions))]

    def write_predictions(self, path: Path, examples: Sequence[Sentence], predictions: list) -> None:
        """word, gold, predicted; a blank line between sentences."""
        with open(path, "w", encoding="utf-8") as f:
            for s, p in zip(examples, predictions):
                for w, g, t in zip(s.words, s.tags, p):
                    f.write(f"{w}\t{g}\t{t}\n")
                f.write("\n")


def predict(model, tok: BiotokTokenizer, sentences: Sequence[Sentence], labels: list[str],
            max_length: int, batch_size: int = 32) -> list[list[str]]:
    """Word-level tags: the argmax label of each word's first piece ('O' for a word without pieces)."""
    return engine_predict(model, NerTask(), tok, sentences, labels, max_length, batch_size)[0]


def finetune_ner(
    model_path: str | os.PathLike[str],
    dataset: TaskData,
    config: FinetuneConfig = FinetuneConfig(),
    out: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    progress: bool = True,
) -> FinetuneResult:
    """Fine-tune ``model_path`` for NER on ``dataset``; write results.json and test_predictions.tsv to ``out``."""
    return fit(model_path, NerTask(), dataset, config, out, force=force, progress=progress)


def format_report(result: FinetuneResult) -> str:
    """A terminal table: one row per entity type, then micro and macro averages."""
    rep = result.report
    types = sorted(k for k in rep if not k.endswith(" avg"))
    lines = [f"NER {result.dataset} · {result.model} · seed {result.config.seed} · best epoch {result.best_epoch}",
             f"{'type':<14}{'P':>8}{'R':>8}{'F1':>8}{'support':>9}"]
    for k in types + ["micro avg", "macro avg"]:
        r = rep[k]
        lines.append(f"{k:<14}{r['precision']:>8.4f}{r['recall']:>8.4f}{r['f1-score']:>8.4f}{r['support']:>9}")
    return "\n".join(lines)


__all__ = ["NerTask", "encode", "finetune_ner", "format_report", "from_scheme", "predict", "scheme_labels", "score",
           "to_scheme"]
