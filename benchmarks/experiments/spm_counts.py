"""SentencePiece Unigram from word counts against SentencePiece on the text, side by side.

    python -m benchmarks.experiments.spm_counts        # about 2 min on 2 cores -> docs/results/spm-counts-fr/

Three trainings per corpus, the same options (biotok.backends.spm.spm_options: identity
normalization, the same user symbols, 4 threads, seed 0), lowercased, biotok-normalized text,
each 10th line held out:

- ``counts, one word a line``: biotok before issue 45, ``word<TAB>count`` as SentencePiece's TSV;
- ``counts (biotok train)``: ``biotok train --algo unigram --lower`` as it is now
  (:func:`biotok.backends.spm.write_spm_tsv`);
- ``text``: SentencePiece on the normalized training lines (every line loaded, none too long).

Measured on the held-out lines: pieces per word, how ``avec`` and ``vous`` are cut, the most
frequent piece, and how many of the 300 commonest training words are cut in two or more pieces.
Corpora: the checkout's sample (E3C clinical cases), the LabForSIMS dialogues, and those
dialogues with the WMT-biomed French abstracts (4.6 MB, the issue's kind of corpus).
"""

from __future__ import annotations

import io
import json
import sys
import time
from collections import Counter
from pathlib import Path

import sentencepiece as spm

from benchmarks import corpora as C
from benchmarks._common import CACHE
from biotok.backends.spm import scale_counts, spm_options, spm_user_symbols
from biotok.config import NormalizeConfig, TrainConfig
from biotok.counting import write_counts
from biotok.io import versions
from biotok.normalize import normalize
from biotok.train import train_tokenizer

OUT = C.REPO / "docs" / "results" / "spm-counts-fr"
COMMAND = "python -m benchmarks.experiments.spm_counts"
NORM = NormalizeConfig(lowercase=True)
WORDS = ("avec", "vous")
COMMON = 300  # the commonest training words checked for splits
HELD_EVERY = 10
ROWS = ("counts, one word a line", "counts (biotok train)", "text")


def corpora() -> dict[str, tuple[callable, int]]:
    """name -> (the corpus' lines, pieces asked)."""
    return {
        "sample (E3C clinical cases)": (lambda: C.SAMPLE.read_text(encoding="utf-8").splitlines(), 8000),
        "LabForSIMS dialogues": (C.labforsims_turns, 800),
        "dialogues + WMT-biomed abstracts": (lambda: C.labforsims_turns() + list(C.wmt_biomed_french()), 16000),
    }


def _old_counts_model(counts: Counter[str], cfg: TrainConfig) -> bytes:
    """SentencePiece from ``word<TAB>count``, one word a line: biotok's Unigram before issue 45."""
    user = spm_user_symbols(counts, cfg)
    scaled, _ = scale_counts(counts, cfg.seed_text_mb << 20)
    tsv = CACHE / "spm_counts" / "one-word-a-line.tsv"
    with open(tsv, "w", encoding="utf-8") as f:
        write_counts(scaled, f)
    model = io.BytesIO()
    spm.set_random_generator_seed(cfg.seed)
    spm.SentencePieceTrainer.train(input=str(tsv), input_format="tsv", model_writer=model, **spm_options(cfg, user))
    return model.getvalue()


def _text_model(lines: list[str], counts: Counter[str], cfg: TrainConfig) -> bytes:
    """SentencePiece on the normalized lines themselves, with the same options."""
    model = io.BytesIO()
    spm.set_random_generator_seed(cfg.seed)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model,
                                   max_sentence_length=max(len(l.encode("utf-8")) for l in lines) + 1,
                                   **spm_options(cfg, spm_user_symbols(counts, cfg)))
    return model.getvalue()


def measure(model: bytes, held: list[str], common: list[str]) -> dict:
    """Held-out pieces per word, the cut of WORDS, the most frequent piece, common words split."""
    sp = spm.SentencePieceProcessor(model_proto=model)
    pieces = Counter()
    words = 0
    for line in held:
        words += len(line.split())
        pieces.update(sp.encode(line, out_type=str))
    split = [w for w in common if len(sp.encode(w, out_type=str)) > 1]
    top, top_n = pieces.most_common(1)[0]
    return {"vocab_size": sp.get_piece_size(), "pieces_per_word": round(sum(pieces.values()) / words, 4),
            "cuts": {w: " ".join(sp.encode(w, out_type=str)) for w in WORDS},
            "most_frequent_piece": top, "most_frequent_share": round(top_n / sum(pieces.values()), 4),
            "common_words_split": len(split), "split_examples": split[:8]}


def run_corpus(name: str, lines: list[str], vocab: int) -> dict:
    folder = CACHE / "spm_counts" / name.split()[0].lower()
    train_file, held_file = C.held_out_split((l for l in lines if l.strip()), folder, HELD_EVERY)
    train = [normalize(l, NORM) for l in train_file.read_text(encoding="utf-8").splitlines()]
    held = [normalize(l, NORM) for l in held_file.read_text(encoding="utf-8").splitlines()]
    counts = Counter(w for l in train for w in l.split())
    common = [w for w, _ in counts.most_common(COMMON)]
    cfg = TrainConfig(algo="unigram", vocab_size=vocab, normalize=NORM)
    rows, seconds = {}, {}
    t = time.perf_counter()
    rows[ROWS[0]] = _old_counts_model(counts, cfg)
    seconds[ROWS[0]] = time.perf_counter() - t
    t = time.perf_counter()
    out = train_tokenizer([train_file], cfg, folder / "biotok", force=True, workers=1)
    rows[ROWS[1]] = (out.path / "spm.model").read_bytes()
    seconds[ROWS[1]] = time.perf_counter() - t
    t = time.perf_counter()
    rows[ROWS[2]] = _text_model(train, counts, cfg)
    seconds[ROWS[2]] = time.perf_counter() - t
    result = {"vocab_asked": vocab, "train_lines": len(train), "held_out_lines": len(held),
              "held_out_words": sum(len(l.split()) for l in held), "rows": {}}
    for row, model in rows.items():
        result["rows"][row] = {**measure(model, held, common), "seconds": round(seconds[row], 1)}
    return result


def render(results: dict) -> str:
    out = ["# SentencePiece Unigram from word counts vs from text (French)", "",
           f"Regenerate: `{COMMAND}` (writes this page and `results.json`).", "",
           "Each corpus lowercased and normalized by biotok, each 10th line held out; the three "
           "SentencePiece Unigram trainings use the same options (`biotok.backends.spm.spm_options`). "
           "*counts, one word a line* is how biotok trained before issue 45; *counts (biotok train)* is "
           "`biotok train --algo unigram --lower` now; *text* is SentencePiece on the normalized lines. "
           f"\"common words split\": of the {COMMON} commonest training words, those cut in two or more pieces.", ""]
    for name, r in results["corpora"].items():
        out += [f"## {name}", "",
                f"{r['train_lines']:,} training lines, {r['held_out_lines']:,} held out "
                f"({r['held_out_words']:,} words), {r['vocab_asked']:,} pieces asked.", "",
                "| trained from | pieces | held-out pieces/word | `avec` | `vous` | most frequent piece | "
                "common words split | seconds |", "|---|---:|---:|---|---|---|---:|---:|"]
        best = min(row["pieces_per_word"] for row in r["rows"].values())
        for row, m in r["rows"].items():
            ppw = f"{m['pieces_per_word']:.4f}"
            ppw = f"**{ppw}**" if m["pieces_per_word"] == best else ppw
            cuts = " | ".join(f"`{m['cuts'][w]}`" for w in WORDS)
            out.append(f"| {row} | {m['vocab_size']:,} | {ppw} | {cuts} | `{m['most_frequent_piece']}` "
                       f"({100 * m['most_frequent_share']:.1f} %) | {m['common_words_split']} | {m['seconds']} |")
        rows = r["rows"]
        now, text, old = (rows[k]["pieces_per_word"] for k in (ROWS[1], ROWS[2], ROWS[0]))
        out += ["", f"biotok train / text: {now / text:.3f} pieces per word "
                    f"({'no worse' if now <= text else 'worse'}); before the fix, one word a line / text: "
                    f"{old / text:.3f}.", ""]
    out += [f"Versions: {', '.join(f'{k} {v}' for k, v in results['versions'].items())}.", ""]
    return "\n".join(out)


def main() -> None:
    C.require_data()
    (CACHE / "spm_counts").mkdir(parents=True, exist_ok=True)
    results = {"command": COMMAND, "versions": versions(), "corpora": {}}
    for name, (lines, vocab) in corpora().items():
        print(f"{name} ...", file=sys.stderr, flush=True)
        results["corpora"][name] = run_corpus(name, list(lines()), vocab)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (OUT / "README.md").write_text(render(results), encoding="utf-8")
    print(render(results))


if __name__ == "__main__":
    main()
