"""SentencePiece Unigram from word counts against SentencePiece on the text, side by side.

    python -m benchmarks.experiments.spm_counts        # about 2 min on 2 cores -> docs/results/spm-counts-fr/
    python -m benchmarks.experiments.spm_counts --from-json docs/results/spm-counts-fr/results.json   # only README.md

Three SentencePiece Unigram trainings (ROWS) on each of CORPORA, trained side by side and measured on its held-out
lines by :mod:`benchmarks.held_out`; the page's INTRO says what each row is.
"""

from __future__ import annotations

from collections import Counter

from benchmarks import corpora as C, held_out as H, recipe as R
from benchmarks._common import CACHE
from biotok.backends.spm import scale_counts
from biotok.config import NormalizeConfig, TrainConfig
from biotok.counting import write_counts
from biotok.io import versions
from biotok.train import train_tokenizer

COMMAND, NORM, WORDS, HELD_EVERY = R.command("spm_counts"), NormalizeConfig(lowercase=True), ("avec", "vous"), 10
COMMON, ROWS = 300, ("counts, one word a line", "counts (biotok train)", "text")  # COMMON: words checked for splits
CORPORA = {  # name: (its lines, pieces asked)
    "sample (E3C clinical cases)": (lambda: C.SAMPLE.read_text(encoding="utf-8").splitlines(), 8000),
    "LabForSIMS dialogues": (C.labforsims_turns, 800),
    "dialogues + WMT-biomed abstracts": (lambda: C.labforsims_turns() + list(C.wmt_biomed_french()), 16000)}
INTRO = ("Each corpus lowercased and normalized by biotok, each 10th line held out; the three SentencePiece Unigram "
         "trainings use the same options (`biotok.backends.spm.spm_options`). *counts, one word a line* is how biotok "
         "trained before issue 45; *counts (biotok train)* is `biotok train --algo unigram --lower` now; *text* is "
         f"SentencePiece on the normalized lines. \"common words split\": of the {COMMON} commonest training words, "
         "those cut in two or more pieces.")


def _one_word_a_line(counts: Counter[str], cfg: TrainConfig) -> bytes:
    """biotok's Unigram before issue 45: SentencePiece from ``word<TAB>count``, one word a line."""
    with open(tsv := CACHE / "spm_counts" / "one-word-a-line.tsv", "w", encoding="utf-8") as f:  # beside the splits
        write_counts(scale_counts(counts, cfg.seed_text_mb << 20)[0], f)
    return H.spm_model(cfg, counts, input=str(tsv), input_format="tsv")


def run_corpus(name: str, lines: list[str], vocab: int) -> dict:
    """The ROWS trained side by side on the corpus' training lines, each measured on its held-out lines."""
    folder = CACHE / "spm_counts" / name.split()[0].lower()
    cfg = TrainConfig("unigram", vocab_size=vocab, normalize=NORM)  # the options of all three (spm_options)
    s = H.Split.of(lines, folder, HELD_EVERY, NORM, COMMON)
    biotok = lambda: train_tokenizer([s.train_file], cfg, folder / "biotok", force=True, workers=1).path  # noqa: E731
    longest = max(len(line.encode("utf-8")) for line in s.train) + 1
    return {"vocab_asked": vocab, **H.compare(s, {
        ROWS[0]: lambda: _one_word_a_line(s.counts, cfg), ROWS[1]: lambda: (biotok() / "spm.model").read_bytes(),
        ROWS[2]: lambda: H.spm_model(cfg, s.counts, sentence_iterator=iter(s.train), max_sentence_length=longest),
    }, WORDS)}


def render(results: dict) -> str:
    """README.md from results.json alone: a table per corpus (:func:`~benchmarks.held_out.table`), its verdict."""
    out = ["# SentencePiece Unigram from word counts vs from text (French)", "",
           f"Regenerate: `{COMMAND}` (writes this page and `results.json`).", "", INTRO, ""]
    for name, r in results["corpora"].items():
        now, text, old = (r["rows"][k]["pieces_per_word"] for k in (ROWS[1], ROWS[2], ROWS[0]))
        than = "no worse" if now <= text else "worse"
        out += [f"## {name}", "", f"{r['train_lines']:,} training lines, {r['held_out_lines']:,} held out "
                f"({r['held_out_words']:,} words), {r['vocab_asked']:,} pieces asked.", "", *H.table(r["rows"], WORDS),
                "", f"biotok train / text: {now / text:.3f} pieces per word ({than}); "
                f"before the fix, one word a line / text: {old / text:.3f}.", ""]
    return "\n".join(out + [f"Versions: {', '.join(f'{k} {v}' for k, v in results['versions'].items())}.", ""])


def compute(a, root) -> dict:
    """results.json: every corpus of CORPORA split, its ROWS trained and measured."""
    C.require_data()  # (the corpus' folder, made by its split, holds the counts TSV too)
    return {"command": COMMAND, "versions": versions(),
            "corpora": {name: run_corpus(name, list(lines()), vocab) for name, (lines, vocab) in CORPORA.items()}}


PAGE = R.Page("spm_counts", __doc__, lambda a: C.REPO / "docs" / "results" / "spm-counts-fr", "results.json",
              "README.md", compute, render)

if __name__ == "__main__":
    raise SystemExit(R.page_main(PAGE))
