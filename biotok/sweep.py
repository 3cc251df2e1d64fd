"""``biotok sweep``: train one corpus at several vocabulary sizes and find where growing stops paying.

For each size a tokenizer is trained (:func:`biotok.train_tokenizer`, same algorithm, seed and
normalization) on the corpus minus a held-out share of its lines, then measured on the held-out
lines: fertility, share of split words, pieces per line, and the embedding parameters the size
costs (vocab x hidden). The *knee* of the fertility curve is found with Kneedle (Satopää et
al., 2011, "Finding a 'Kneedle' in a Haystack"), offline form: both axes normalized to [0, 1],
the knee is the point farthest below the straight line joining the first and last points (the
maximum of Kneedle's difference curve); none when no point lies below that line. Past the knee,
doubling the vocabulary buys little fertility for its embedding parameters.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Sequence

from biotok.config import SweepConfig, TrainConfig
from biotok.corpus import corpus_names, iter_lines
from biotok.errors import BiotokError, ConfigError, CorpusError
from biotok.formats import load
from biotok.metrics import compare
from biotok.output import atomic_directory, check_writable
from biotok.report import json_safe
from biotok.tokenizer import BiotokTokenizer
from biotok.train import train_tokenizer
from biotok.zipf import ZipfChoice, best_fit, bootstrap_best, line_pieces

@dataclass(frozen=True)
class SweepPoint:
    """One vocabulary size and what it gives on the held-out text."""

    vocab_size: int
    fertility: float
    split_share: float
    mean_sequence_length: float
    pieces: int
    embedding_params: int
    path: str  # the trained tokenizer, relative to the sweep folder
    zipf_exponent: float | None = None  # power-law fit of the piece frequencies on the held-out text
    zipf_r2: float | None = None  # its goodness of fit (1: a perfect power law); None: too few pieces


MARKER = "sweep.json"  # the file that makes a folder a sweep output (what --force may replace)


@dataclass(frozen=True)
class SweepResult:
    algo: str
    hidden_size: int
    eval_lines: int
    eval_words: int
    points: tuple[SweepPoint, ...]
    knee: int | None  # the vocabulary size at the knee of the fertility curve
    knee_method: str = "Kneedle (Satopää et al., 2011), offline, on fertility vs vocabulary size"
    skipped: tuple[tuple[int, str], ...] = ()  # sizes this corpus could not train, with the reason
    zipf_best: int | None = None  # the size whose piece frequencies follow a power law most closely
    zipf_method: str = ("highest R² of a log-log least-squares fit of piece frequency against rank "
                        "(ranks with count >= 5), on the held-out text (He et al., EMNLP 2025)")
    # how sure the best fit is: R² margin over the runner-up, bootstrap over held-out lines
    zipf_choice: ZipfChoice | None = None
    out: str = field(default="", compare=False)

    @property
    def zipf_tied(self) -> tuple[int, ...]:
        """The best fit and the sizes the bootstrap cannot tell from it (just the best without one)."""
        if self.zipf_choice is not None and self.zipf_choice.tied:
            return self.zipf_choice.tied
        return (self.zipf_best,) if self.zipf_best is not None else ()

    @property
    def criteria_agree(self) -> bool | None:
        """Whether the fertility knee is the best Zipf fit, or one the fit cannot tell from it
        (None: one is missing)."""
        if self.knee is None or self.zipf_best is None:
            return None
        return self.knee in self.zipf_tied

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("out")
        return d


def kneedle(xs: Sequence[float], ys: Sequence[float], curve: str = "convex") -> int | None:
    """Index of the knee of (xs, ys) by Kneedle, offline: the largest gap between the normalized
    curve and the chord joining its ends (below the chord for a convex curve, above for concave).

    None when there are fewer than 3 points, the curve is flat, or no point is off the chord
    on the expected side.
    """
    if curve not in ("convex", "concave"):
        raise ConfigError(f"curve must be convex or concave, not {curve!r}")
    if len(xs) != len(ys):
        raise ConfigError("xs and ys must have the same length")
    n = len(xs)
    if n < 3:
        return None
    x0, x1 = float(xs[0]), float(xs[-1])
    lo, hi = min(ys), max(ys)
    if x1 == x0 or hi == lo:
        return None
    xn = [(float(x) - x0) / (x1 - x0) for x in xs]
    yn = [(float(y) - lo) / (hi - lo) for y in ys]
    chord = [yn[0] + (yn[-1] - yn[0]) * x for x in xn]
    diff = [(c - y) if curve == "convex" else (y - c) for c, y in zip(chord, yn)]
    best = max(range(n), key=lambda i: (diff[i], -i))
    return best if diff[best] > 1e-12 else None


def _split_corpus(lines, fraction: float, train_path: Path, eval_path: Path) -> tuple[int, int]:
    """Write each line to the training or the held-out file, by a hash of the line (deterministic)."""
    cut = int(fraction * 2**32)
    n_train = n_eval = 0
    with open(train_path, "w", encoding="utf-8") as tr, open(eval_path, "w", encoding="utf-8") as ev:
        for line in lines:
            h = int.from_bytes(hashlib.blake2b(line.encode("utf-8"), digest_size=4).digest(), "big")
            if h < cut:
                ev.write(line + "\n")
                n_eval += 1
            else:
                tr.write(line + "\n")
                n_train += 1
    return n_train, n_eval


def _train_and_eval_text(corpus: Sequence[str | os.PathLike[str]], eval_corpus, field_name: str | None,
                         cfg: SweepConfig, work: Path) -> tuple[list[str], list[str]]:
    """The files to train on and the lines to measure on: ``eval_corpus`` when given, else the
    corpus split by a hash of each line (the held-out share written apart in ``work``)."""
    if eval_corpus:
        train_files = [str(c) for c in corpus]
        eval_lines = list(iter_lines(list(eval_corpus), field_name))
        source = corpus_names(eval_corpus)
    else:
        tr, ev = work / "train.txt", work / "heldout.txt"
        n_train, n_eval = _split_corpus(iter_lines(list(corpus), field_name), cfg.heldout_fraction, tr, ev)
        if n_eval == 0 or n_train == 0:
            raise CorpusError(
                f"the corpus {corpus_names(corpus)} is too small to hold out {cfg.heldout_fraction:.0%} of its lines "
                f"({n_train + n_eval} lines); give --eval-corpus"
            )
        train_files = [str(tr)]
        source = corpus_names(corpus)
        eval_lines = ev.read_text(encoding="utf-8").splitlines()
    if cfg.max_eval_lines is not None:
        eval_lines = eval_lines[: cfg.max_eval_lines]
    if not eval_lines:
        raise CorpusError(f"no line to measure on in {source}")
    return train_files, eval_lines


def _split_names(train_files: list[str]) -> dict[str, str]:
    """What the provenance records for the temporary training split: a name, not its temp path
    (which differs on every run and would make two identical sweeps differ)."""
    return {f: "train.txt (the sweep's training lines)" for f in train_files if Path(f).name == "train.txt"
            and Path(f).parent.name.startswith("biotok-sweep-")}


def _train_sizes(train_files: list[str], sizes: Sequence[int], base: TrainConfig, field_name: str | None,
                 out: Path, progress: bool, final: Path | None = None,
                 ) -> tuple[list[tuple[int, str, BiotokTokenizer]], list[tuple[int, str]]]:
    """Train one tokenizer per size into ``out/tokenizers/``: (size, relative path, tokenizer) of
    those trained, and (size, reason) of the sizes this corpus could not train."""
    trained, skipped = [], []
    bar = _progress_bar(len(sizes)) if progress else None
    for size in sizes:
        rel = f"tokenizers/{base.algo}-{size}"
        dest = out / rel
        try:
            train_tokenizer(train_files, replace(base, vocab_size=size, field_name=field_name), dest,
                            corpus_names=_split_names(train_files), shown_as=str((final or out) / rel))
        except BiotokError as e:
            skipped.append((size, str(e)))
        else:
            tok = load(str(dest))
            tok.name = f"{base.algo}-{size}"
            trained.append((size, rel, tok))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    if not trained:
        raise ConfigError(f"no vocabulary size could be trained on this corpus: {skipped[0][1]}")
    return trained, skipped


def _progress_bar(total: int):
    # lazy: tqdm (25 ms) only when a progress bar is asked for
    from tqdm import tqdm

    return tqdm(total=total, desc="sweep", unit=" size")


def _measure(trained: list[tuple[int, str, BiotokTokenizer]], eval_lines: list[str], cfg: SweepConfig,
             base: TrainConfig, skipped: list[tuple[int, str]], out: str) -> SweepResult:
    """Each trained size measured on the held-out lines, and the knee of the fertility curve."""
    cmp = compare([t for _, _, t in trained], eval_lines)
    points = [SweepPoint(
        vocab_size=tok.vocab_size, fertility=r.fertility, split_share=r.split_share,
        mean_sequence_length=r.mean_sequence_length, pieces=r.pieces,
        embedding_params=tok.vocab_size * cfg.hidden_size, path=rel,
        zipf_exponent=z.exponent if z is not None else None, zipf_r2=z.r2 if z is not None else None,
    ) for (size, rel, tok), r, z in zip(trained, cmp.results, cmp.zipf)]
    k = kneedle([p.vocab_size for p in points], [p.fertility for p in points], "convex")
    return SweepResult(
        algo=base.algo, hidden_size=cfg.hidden_size, eval_lines=cmp.results[0].lines,
        eval_words=cmp.results[0].words, points=tuple(points),
        knee=points[k].vocab_size if k is not None else None, skipped=tuple(skipped),
        zipf_best=best_fit({p.vocab_size: z for p, z in zip(points, cmp.zipf)}), out=out,
        zipf_choice=bootstrap_best({p.vocab_size: z for p, z in zip(points, cmp.zipf)},
                                   {p.vocab_size: line_pieces(tok, eval_lines) for p, (_, _, tok) in zip(points, trained)},
                                   len(eval_lines)),
    )


def sweep(
    corpus: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    config: SweepConfig | None = None,
    train_config: TrainConfig | None = None,
    *,
    eval_corpus: Sequence[str | os.PathLike[str]] | None = None,
    field_name: str | None = None,
    force: bool = False,
    progress: bool = False,
) -> SweepResult:
    """Train every size, measure it on held-out text, find the knee; write tokenizers, sweep.json,
    sweep.md and sweep.png into ``out`` (built in a temporary sibling, renamed at the end)."""
    cfg = config or SweepConfig()
    base = train_config or TrainConfig()
    inputs = [str(c) for c in corpus] + [str(c) for c in (eval_corpus or ())]
    check_writable(out, force, inputs, marker=MARKER)
    with tempfile.TemporaryDirectory(prefix="biotok-sweep-") as work, \
            atomic_directory(out, force, inputs, marker=MARKER) as tmp:
        train_files, eval_lines = _train_and_eval_text(corpus, eval_corpus, field_name, cfg, Path(work))
        # the held-out split is plain text: the JSON field was already read
        trained, skipped = _train_sizes(train_files, cfg.sizes, base, field_name if eval_corpus else None, tmp,
                                        progress, Path(out))
        result = _measure(trained, eval_lines, cfg, base, skipped, str(out))
        (tmp / "sweep.json").write_text(json.dumps(json_safe(result.as_dict()), indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
        plot_sweep(result, tmp / "sweep.png")
        (tmp / "sweep.md").write_text(sweep_markdown(result), encoding="utf-8")
    return result


def criteria_sentence(r: SweepResult) -> str:
    """The two criteria in one sentence, and whether they agree (computed, never typed)."""
    knee = f"the knee of the fertility curve is **{r.knee:,}**" if r.knee else "no knee was found in the fertility curve"
    agree = {True: "The two criteria agree." if len(r.zipf_tied) <= 1 else "The knee is among the sizes the Zipf fit "
             "cannot tell apart.", False: "The two criteria disagree: fertility says the vocabulary "
             "stops paying for itself at the knee, the Zipf fit says where the distribution looks most like "
             "natural language; only downstream numbers (biotok-train ablate) can settle it.",
             None: ""}[r.criteria_agree]
    return f"{knee[0].upper()}{knee[1:]}; {zipf_sentence(r)}. {agree}".strip()


def zipf_sentence(r: SweepResult) -> str:
    """The best Zipf fit with its margin and interval, or "indistinguishable" (computed, never typed)."""
    if not r.zipf_best:
        return "no size had enough frequent pieces for a Zipf fit"
    c = r.zipf_choice
    if c is None or c.runner_up is None:
        why = ("the only size fitted" if sum(p.zipf_r2 is not None for p in r.points) < 2
               else "no interval: too few held-out lines to resample")
        return f"the piece frequencies follow a power law most closely at **{r.zipf_best:,}** ({why})"
    how = (f"R² {c.margin:+.4f} over {c.runner_up:,}, {c.confidence:.0%} interval [{c.low:+.4f}, {c.high:+.4f}], "
           f"paired bootstrap over {c.resamples} resamples of the held-out lines")
    if c.distinct:
        return f"the piece frequencies follow a power law most closely at **{r.zipf_best:,}** ({how})"
    others = ", ".join(f"{k:,}" for k in c.tied[1:])
    return (f"the Zipf fit cannot tell {r.zipf_best:,} from {others}: indistinguishable (best R² at "
            f"{r.zipf_best:,}, {how})")


def _zipf_cells(p: SweepPoint, r: SweepResult) -> str:
    if p.zipf_r2 is None:
        return "- | - | -"
    ci = {k: (lo, hi) for k, lo, hi in (r.zipf_choice.r2_intervals if r.zipf_choice else ())}.get(p.vocab_size)
    return f"{p.zipf_exponent:.3f} | {p.zipf_r2:.4f} | " + (f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-")


def sweep_markdown(r: SweepResult) -> str:
    lines = [
        f"# Vocabulary size sweep ({r.algo})",
        "",
        f"Measured on {r.eval_lines:,} held-out lines ({r.eval_words:,} biotok words). {criteria_sentence(r)}",
        "",
        f"| vocab size | fertility | split words | pieces/line | embedding params (hidden {r.hidden_size}) "
        "| Zipf exponent | Zipf R² | R² 95 % interval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in r.points:
        mark = "".join([" ◀ knee" if p.vocab_size == r.knee else "",
                        (" ◀ best Zipf fit" if len(r.zipf_tied) <= 1 else " ◀ best Zipf fit (indistinguishable)")
                        if p.vocab_size == r.zipf_best else
                        " ◀ indistinguishable Zipf fit" if p.vocab_size in r.zipf_tied else ""])
        lines.append(f"| {p.vocab_size:,}{mark} | {p.fertility:.3f} | {100 * p.split_share:.1f}% | "
                     f"{p.mean_sequence_length:.1f} | {p.embedding_params / 1e6:.1f} M | {_zipf_cells(p, r)} |")
    for size, why in r.skipped:
        lines.append(f"\nSkipped {size:,}: {why}")
    lines += ["", f"Knee method: {r.knee_method}.", f"Zipf criterion: {r.zipf_method}; formula in docs/compare.md.",
              "", "![sweep](sweep.png)", ""]
    return "\n".join(lines)


def plot_sweep(r: SweepResult, path: str | os.PathLike[str]) -> Path:
    """Three panels against vocabulary size: fertility (knee marked), pieces per line, embedding params."""
    # lazy: matplotlib (100-600 ms) only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: as above, once the Agg backend is chosen

    xs = [p.vocab_size for p in r.points]
    fig, axes = plt.subplots(1, 4, figsize=(17, 4))
    panels = (
        ([p.fertility for p in r.points], "Fertility (pieces per word)", "pieces per word"),
        ([p.mean_sequence_length for p in r.points], "Sequence length", "pieces per line"),
        ([p.embedding_params / 1e6 for p in r.points], f"Embedding parameters (hidden {r.hidden_size})", "millions"),
        ([p.zipf_r2 if p.zipf_r2 is not None else float("nan") for p in r.points], "Zipf fit (R² of log-log)", "R²"),
    )
    for ax, (ys, title, ylabel) in zip(axes, panels):
        ax.plot(xs, ys, marker="o", color="C0")
        if r.knee is not None:
            ax.axvline(r.knee, color="C3", linestyle="--", linewidth=1)
        ax.set_title(title)
        ax.set_xlabel("vocabulary size")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    if r.knee is not None:
        i = xs.index(r.knee)
        axes[0].annotate(f"knee: {r.knee:,}", (r.knee, r.points[i].fertility), textcoords="offset points",
                         xytext=(10, 10), color="C3")
    if r.zipf_best is not None:
        i = xs.index(r.zipf_best)
        axes[3].axvline(r.zipf_best, color="C2", linestyle=":", linewidth=1.5)
        label = f"best fit: {r.zipf_best:,}" if len(r.zipf_tied) <= 1 else (
            "indistinguishable: " + ", ".join(f"{k:,}" for k in r.zipf_tied))
        axes[3].annotate(label, (r.zipf_best, r.points[i].zipf_r2), textcoords="offset points",
                         xytext=(10, -15), color="C2")
        cis = r.zipf_choice.r2_intervals if r.zipf_choice is not None else ()
        if cis:
            axes[3].vlines([k for k, _, _ in cis], [lo for _, lo, _ in cis], [hi for _, _, hi in cis], color="C0",
                           linewidth=1)
    fig.suptitle(f"Vocabulary size sweep, {r.algo} ({r.eval_words:,} held-out words)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path
