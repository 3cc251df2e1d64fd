"""The probe's numbers, verdicts and files: bits per character per arm and seed, the unigram
floor, paired bootstraps over held-out documents, probe.json, probe.md and probe.png.

Bits per character = the sum over held-out documents of the pieces' negative log-likelihood in
bits, over the characters of those documents (the raw text, or the fair-mode text). The
bootstrap resamples held-out documents, each drawn with all its seeds.
"""

from __future__ import annotations

import json
import math
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from biotok.io import versions_sentence
from biotok.output import atomic_file
from biotok_train import stats as S
from biotok_train.config import ProbeConfig
from biotok_train.probe.data import Normalization


@dataclass
class ProbeReport:
    """Everything the probe reports (``to_dict`` is probe.json)."""

    config: ProbeConfig
    setup: dict
    arms: list[dict]
    comparisons: list[dict]
    notes: list[str]
    verdicts: list[str]
    command: str
    versions: str
    paths: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)  # CPU and wall seconds per run (timings.json, not probe.json)

    def to_dict(self) -> dict:
        return {"setup": self.setup, "arms": self.arms, "comparisons": self.comparisons, "notes": self.notes,
                "verdicts": self.verdicts, "command": self.command, "versions": self.versions}


def command(cfg: ProbeConfig, out: str | Path = "OUT") -> str:
    """The ``biotok-train probe`` command line of ``cfg``."""
    parts = ["biotok-train", "probe", *cfg.tokenizers, "--corpus", *cfg.corpus, "--heldout", *cfg.heldout]
    defaults = ProbeConfig()
    if cfg.tokens:
        parts += ["--tokens", str(cfg.tokens)]
    elif cfg.steps != defaults.steps:
        parts += ["--steps", str(cfg.steps)]
    if cfg.seeds != defaults.seeds:
        parts += ["--seeds", *map(str, cfg.seeds)]
    for name in ("batch_size", "seq_len", "layers", "hidden", "heads", "lr", "warmup", "n_resamples"):
        if getattr(cfg, name) != getattr(defaults, name):
            parts += [f"--{name.replace('_', '-')}", f"{getattr(cfg, name):g}"]
    if cfg.field_name:
        parts += ["--field", cfg.field_name]
    if cfg.fair:
        parts.append("--fair")
    if cfg.threads:
        parts += ["--threads", str(cfg.threads)]
    if cfg.pairs != defaults.pairs:
        parts += ["--pairs", cfg.pairs]
    parts += ["--out", str(out)]
    return " ".join(shlex.quote(p) for p in parts)


def versions_line() -> str:
    return versions_sentence(("python", "biotok", "torch", "transformers", "tokenizers", "numpy"))


def _rows(bits: Sequence[float], chars: np.ndarray) -> np.ndarray:
    return np.stack([np.asarray(bits, dtype=np.float64), chars], axis=1)


def _bootstrap(cfg: ProbeConfig, ref: dict, cand: dict, name: str) -> S.PairedBootstrap:
    r, c, clusters = S.pool_seeds(ref, cand)
    return S.paired_bootstrap(r, c, S.MEAN, clusters=clusters, n_resamples=cfg.n_resamples,
                              confidence=cfg.confidence, seed=0, higher_is_better=False, name=name)


def build_report(cfg: ProbeConfig, arms, runs: dict, chars: np.ndarray, train_chars: int, n_train_docs: int,
                 fair: Normalization | None):
    """Per-arm numbers, comparisons against the first arm and against each arm's floor, notes."""
    total_chars = float(chars.sum())
    rows: list[dict] = []
    per_seed: dict[str, dict[int, np.ndarray]] = {}
    for arm in arms:
        seeds = runs[arm.name]
        per_seed[arm.name] = {s: _rows(seeds[s]["doc_bits"], chars) for s in cfg.seeds}
        bpc = S.summarize_seeds([float(np.sum(seeds[s]["doc_bits"])) / total_chars for s in cfg.seeds])
        floor_rows = {s: _rows(arm.floor_bits, chars) for s in cfg.seeds}
        below = _bootstrap(cfg, floor_rows, per_seed[arm.name], "bits/char minus unigram floor")
        pieces = sum(len(d) for d in arm.held_docs)
        chars_per_token = train_chars / arm.stream_tokens
        first = seeds[cfg.seeds[0]]
        curve = np.mean([[loss for _, loss in seeds[s]["curve"]] for s in cfg.seeds], axis=0)
        rows.append({
            "name": arm.name, "tokenizer": arm.source, "vocab_size": arm.vocab - 1,
            "normalization": arm.norm.label(), "params": first["params"],
            "bits_per_char": bpc.to_dict(), "unigram_floor_bits_per_char": float(arm.floor_bits.sum()) / total_chars,
            "versus_floor": below.to_dict(),
            "heldout_pieces": pieces, "pieces_per_char": pieces / total_chars,
            "unk_share": arm.unk / pieces if pieces else 0.0, "round_trip_share": arm.round_trip,
            "train_tokens": first["tokens"], "train_chars_seen": int(round(first["tokens"] * chars_per_token)),
            "epochs": first["epochs"],
            "curve": {"chars_seen": [int(round(t * chars_per_token)) for t, _ in first["curve"]],
                      "bits_per_char": [float(v) / math.log(2) / chars_per_token for v in curve]},
        })
    comparisons = []
    pairs = ([(a, b) for i, a in enumerate(arms) for b in arms[i + 1:]] if cfg.pairs == "all"
             else [(arms[0], b) for b in arms[1:]])
    for ref_arm, arm in pairs:
        b = _bootstrap(cfg, per_seed[ref_arm.name], per_seed[arm.name], "bits/char")
        comparisons.append({"reference_arm": ref_arm.name, "candidate_arm": arm.name, **b.to_dict()})
    norms = {a.name: a.norm for a in arms}
    notes = _notes(cfg, norms, rows, fair)
    setup = {
        "model": {"class": "GPT2LMHeadModel", "layers": cfg.layers, "hidden": cfg.hidden, "heads": cfg.heads,
                  "inner": 4 * cfg.hidden, "dropout": 0.0, "positions": cfg.seq_len},
        "steps": cfg.steps, "batch_size": cfg.batch_size, "seq_len": cfg.seq_len, "tokens_per_arm": cfg.tokens_per_arm,
        "lr": cfg.lr, "warmup": cfg.warmup, "seeds": list(cfg.seeds),
        "train_documents": n_train_docs, "train_chars": train_chars,
        "heldout_documents": int(len(chars)), "heldout_chars": int(total_chars),
        "text": "fair: " + fair.label() if fair is not None else "raw",
        "bootstrap": {"resamples": cfg.n_resamples, "confidence": cfg.confidence, "unit": "held-out document"},
    }
    return ProbeReport(config=cfg, setup=setup, arms=rows, comparisons=comparisons, notes=notes,
                       verdicts=_verdicts(cfg, rows, comparisons), command="", versions=versions_line())


def share_text(share: float) -> str:
    """A share as a percentage with as few decimals as keep it honest: 0.9996 is "99.96 %", never "100 %"."""
    for places in range(4):
        shown = round(100 * share, places)
        if (shown < 100 or share >= 1) and (shown > 0 or share <= 0):
            break
    return f"{100 * share:.{places}f} %"


def _notes(cfg: ProbeConfig, norms: dict[str, Normalization], rows: list[dict], fair: Normalization | None) -> list[str]:
    notes = []
    labels = {n.label() for n in norms.values()}
    if len(labels) > 1 and fair is None:
        which = "; ".join(f"{k} {v.label()}" for k, v in norms.items())
        notes.append(f"**Not like for like.** The tokenizers' normalizations discard different information ({which}): "
                     "an arm that lowercases or strips accents predicts less than the raw text holds, so its bits per "
                     "character understate the cost of the raw text. Rerun with `--fair` to train and score every arm "
                     "on the same transformed text.")
    if fair is not None:
        notes.append(f"Fair mode: every arm is trained and scored on the same text, transformed as the most lossy "
                     f"normalization among the arms does ({fair.label()}); bits per character are over that text.")
    for r in rows:
        if r["unk_share"] > 0:
            notes.append(f"{r['name']} maps {100 * r['unk_share']:.2f} % of its held-out pieces to the unknown token: "
                         "what those pieces hide is not scored, so its bits per character are optimistic.")
        if r["round_trip_share"] < 1:
            notes.append(f"{r['name']}'s pieces decode back to its own normalized text for {share_text(r['round_trip_share'])} "
                         "of the held-out documents only (e.g. spacing around punctuation, or characters behind the "
                         "unknown token, are not recorded): its bits per character leave that out.")
        if r["epochs"] > 1:
            notes.append(f"{r['name']} went {r['epochs']:.1f} times over its training text (the budget exceeds it).")
    return notes


def _verdicts(cfg: ProbeConfig, rows: list[dict], comparisons: list[dict]) -> list[str]:
    out = []
    for r in rows:
        v = r["versus_floor"]
        where = "below" if v["verdict"] == S.BETTER else ("above" if v["verdict"] == S.WORSE else "not distinguishable from")
        out.append(f"{r['name']}: {r['bits_per_char']['mean']:.3f} bits/char, {where} its unigram floor "
                   f"({r['unigram_floor_bits_per_char']:.3f}): {v['difference']:+.3f} "
                   f"[{v['low']:+.3f}, {v['high']:+.3f}].")
    for c in comparisons:
        word = {S.BETTER: "better than", S.WORSE: "worse than"}.get(c["verdict"], "indistinguishable from")
        out.append(f"{c['candidate_arm']} is {word} {c['reference_arm']}: {c['difference']:+.3f} bits/char "
                   f"[{c['low']:+.3f}, {c['high']:+.3f}] ({c['confidence']:.0%} paired bootstrap over held-out documents).")
    return out


def _cell(s: dict) -> str:
    return S.SeedSummary.from_dict(s).format()


def format_markdown(report: ProbeReport) -> str:
    cfg, st = report.config, report.setup
    m = st["model"]
    params = ", ".join(f"{r['name']} {r['params'] / 1e6:.2f} M" for r in report.arms)
    lines = ["# Causal-LM probe: bits per character of held-out text", ""]
    if report.notes:
        lines += [f"> {n}" for n in report.notes] + [""]
    lines += ["| arm | vocab | normalization | bits/char (mean ± std over seeds) | unigram floor | vs floor [CI] | "
              "Δ vs " + report.arms[0]["name"] + " [CI] | pieces/char | [UNK] | decodes back | training chars seen |",
              "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    first = report.arms[0]["name"]
    by_name = {c["candidate_arm"]: c for c in report.comparisons if c["reference_arm"] == first}
    for r in report.arms:
        v = r["versus_floor"]
        c = by_name.get(r["name"])
        delta = f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}] {c['verdict']}" if c else "reference"
        lines.append(f"| {r['name']} | {r['vocab_size']:,} | {r['normalization']} | {_cell(r['bits_per_char'])} | "
                     f"{r['unigram_floor_bits_per_char']:.3f} | {v['difference']:+.3f} [{v['low']:+.3f}, {v['high']:+.3f}] | "
                     f"{delta} | {r['pieces_per_char']:.3f} | {100 * r['unk_share']:.2f} % | {100 * r['round_trip_share']:.0f} % | "
                     f"{r['train_chars_seen']:,} |")
    lines += ["", "## Verdicts", "", *[f"- {v}" for v in report.verdicts], "", "## Setup", "",
              f"- Model: transformers' `GPT2LMHeadModel`, {m['layers']} layers × {m['hidden']} hidden, {m['heads']} heads, "
              f"MLP {m['inner']}, no dropout, tied embeddings; the same shape for every arm (only the embedding rows "
              f"differ with the vocabulary: {params} parameters).",
              f"- Training: {st['steps']} AdamW steps × {st['batch_size']} sequences × {st['seq_len']} tokens = "
              f"{st['tokens_per_arm']:,} tokens per arm and seed, peak lr {st['lr']:g}, warm-up {st['warmup']:g}, "
              f"linear decay; seeds {', '.join(map(str, st['seeds']))}. Documents are joined by one boundary id.",
              f"- Text: {st['train_documents']:,} training documents ({st['train_chars']:,} characters); "
              f"{st['heldout_documents']:,} held-out documents ({st['heldout_chars']:,} characters); "
              f"{'raw text' if st['text'] == 'raw' else st['text']}.",
              "- Bits per character: the pieces' negative log-likelihood in bits (each document after a boundary id, "
              "sliding windows of the sequence length) summed over held-out documents, over their characters. "
              "Unigram floor: the same pieces under an add-one unigram model of the training pieces.",
              f"- Statistics: paired percentile bootstrap, {cfg.n_resamples} resamples of held-out documents (each drawn "
              f"with all its seeds), seed 0, {cfg.confidence:.0%} intervals; lower is better. CPU and wall time per "
              "run: timings.json.",
              "", "## Command and versions", "", "```", report.command, "```", "", report.versions, ""]
    return "\n".join(lines)


def plot(report: ProbeReport, path: Path) -> Path:
    """Bits per character per arm (seeds as dots, the unigram floor dashed) and the training
    curves in bits per character against characters seen."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    names = [r["name"] for r in report.arms]
    for x, r in enumerate(report.arms):
        s = r["bits_per_char"]
        color = colors[x % len(colors)]
        ax.bar(x, s["mean"], 0.6, yerr=s["std"] or 0, capsize=4, color=color, alpha=0.85)
        ax.plot([x] * len(s["values"]), s["values"], "k.", ms=5)
        ax.plot([x - 0.35, x + 0.35], [r["unigram_floor_bits_per_char"]] * 2, "k--", lw=1.2,
                label="unigram floor" if x == 0 else None)
        ax2.plot(r["curve"]["chars_seen"], r["curve"]["bits_per_char"], color=color, label=r["name"])
    ax.set_xticks(range(len(names)), names, rotation=15, fontsize=8)
    ax.set_ylabel("held-out bits per character")
    ax.legend(fontsize=7)
    ax.set_title("held-out bits/char (lower is better)", fontsize=9)
    ax2.set_xlabel("training characters seen")
    ax2.set_ylabel("training loss, bits per character")
    ax2.set_title("training curves (mean over seeds)", fontsize=9)
    ax2.legend(fontsize=7)
    st = report.setup
    fig.suptitle(f"GPT-2 {st['model']['layers']}×{st['model']['hidden']}, {st['tokens_per_arm']:,} tokens per arm, "
                 f"seeds {', '.join(map(str, st['seeds']))}; text: {st['text']}", fontsize=9)
    fig.tight_layout()
    with atomic_file(path, force=True) as tmp:
        fig.savefig(tmp, dpi=110, format="png", metadata={"Software": None})
    plt.close(fig)
    return path


def write_report(report: ProbeReport, folder: Path, out: Path | None = None) -> ProbeReport:
    """probe.json, probe.md and probe.png under ``folder``; ``out``: where they end up (the
    command line and ``report.paths`` name it) when the folder is built aside (``--force``)."""
    out = folder if out is None else out
    report.command = command(report.config, out)
    with atomic_file(folder / "probe.json", force=True) as tmp:
        tmp.write_text(json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with atomic_file(folder / "probe.md", force=True) as tmp:
        tmp.write_text(format_markdown(report), encoding="utf-8")
    plot(report, folder / "probe.png")
    report.paths = {"json": out / "probe.json", "md": out / "probe.md", "png": out / "probe.png"}
    return report


PUBLISHED_FILES = ("probe.md", "probe.json", "probe.png", "timings.json")
"""What a published probe keeps of each mode's run folder (raw/, fair/)."""


def setup_bullets(results: dict[str, dict], *, text: str, vocabularies: str) -> list[str]:
    """A published README's text and vocabulary bullets: ``text`` says what the documents are and
    which are held out, the counts come from probe.json; ``vocabularies`` says which and whence."""
    st = next(iter(results.values()))["setup"]
    return [f"- Text: {text}: {st['train_documents']:,} training documents ({st['train_chars']:,} characters), "
            f"{st['heldout_documents']:,} held-out documents ({st['heldout_chars']:,} characters).",
            f"- Vocabularies: {vocabularies}"]


def read_published(folder: Path, modes: Sequence[str] = ("raw", "fair")) -> tuple[dict[str, dict], dict[str, dict]]:
    """probe.json and timings.json (its runs) of each mode whose folder under ``folder`` holds them
    (what :func:`published_readme` takes): a README is rewritten from them without running anything."""
    results, timings = {}, {}
    for mode in modes:
        if (folder / mode / "probe.json").is_file():
            res = results[mode] = json.loads((folder / mode / "probe.json").read_text(encoding="utf-8"))
            runs = json.loads((folder / mode / "timings.json").read_text(encoding="utf-8"))
            # timings.json also keeps runs of other seeds the folder once held: only this report's count
            timings[mode] = {k: runs[k] for k in (f"{a['name']}/seed{s}" for a in res["arms"] for s in res["setup"]["seeds"])}
    return results, timings


def publish(runs: dict[str, Path], dest: Path, readme: str) -> Path:
    """Copy each mode's :data:`PUBLISHED_FILES` from its run folder (``runs[mode]``) to
    ``dest/mode`` and write ``readme`` as ``dest/README.md``; return that path."""
    for mode, run in runs.items():
        (dest / mode).mkdir(parents=True, exist_ok=True)
        for name in PUBLISHED_FILES:
            shutil.copyfile(run / name, dest / mode / name)
    with atomic_file(dest / "README.md", force=True) as tmp:
        tmp.write_text(readme, encoding="utf-8")
    return dest / "README.md"


def published_readme(results: dict[str, dict], timings: dict[str, dict], *, title: str, command: str,
                     setup: Sequence[str]) -> str:
    """README.md of a published probe: the command, its CPU time, the recipe's ``setup`` bullets (its
    text and vocabularies), the model and score, then per mode (raw, fair: each its probe.json) the
    table and the sentences computed from it, and whether the two modes rank alike."""
    st = next(iter(results.values()))["setup"]
    cpu = sum(t["train_cpu_s"] + t["eval_cpu_s"] for tm in timings.values() for t in tm.values()) / 60
    lines = [f"# {title}", "",
             "Regenerate everything here (" + " and ".join(f"{m}/" for m in results)
             + ": probe.md, probe.json, probe.png, timings.json; this README) with one command:", "", "```bash", command, "```", "",
             f"The runs took {cpu:.0f} CPU-minutes in all (timings.json in each folder); `--quick` checks at toy "
             "size that the script runs.", "", "## Setup", "", *setup,
             f"- Model: transformers' GPT2LMHeadModel, {st['model']['layers']} layers x {st['model']['hidden']} "
             f"hidden, the same for every arm; {st['steps']} steps x {st['batch_size']} x {st['seq_len']} = "
             f"{st['tokens_per_arm']:,} training tokens per arm and seed, seeds {', '.join(map(str, st['seeds']))}.",
             "- Score: bits per character of the held-out documents (the pieces' negative log-likelihood in bits "
             "over the documents' characters), beside each vocabulary's unigram floor (add-one unigram model of "
             "the training pieces); intervals: 95 % paired bootstrap over held-out documents, each drawn with all "
             "its seeds.", ""]
    for mode, res in results.items():
        lines += _mode_section(mode, res)
    if "raw" not in results:
        lines += ["The raw mode (each arm on its own normalization, which is not like for like when one lowercases) "
                  "was not run for this page: `--modes fair raw` adds it.", ""]
    if set(results) == {"raw", "fair"}:
        lines += _modes_compared(results)
    return "\n".join(lines)


def _mode_section(mode: str, res: dict) -> list[str]:
    """One mode's table (bits/char, floor, difference to the reference) and its computed sentences."""
    title = {"raw": "Raw text (not like for like: Unigram_L lowercases)",
             "fair": "Fair mode: every arm on the same lowercased text"}[mode]
    lines = [f"## {title}", "", f"Seeds: {', '.join(map(str, res['setup']['seeds']))}.", "",
             f"![{mode}]({mode}/probe.png)", "",
             "| arm | bits/char | unigram floor | vs floor [95 % CI] | Δ vs " + res["arms"][0]["name"]
             + " [95 % CI] | pieces/char | decodes back |", "|---|---:|---:|---:|---:|---:|---:|"]
    comps = {c["candidate_arm"]: c for c in res["comparisons"]}
    for a in res["arms"]:
        b, v, c = a["bits_per_char"], a["versus_floor"], comps.get(a["name"])
        delta = f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]" if c else "reference"
        lines.append(f"| {a['name']} | {S.SeedSummary.from_dict(b).format()} | {a['unigram_floor_bits_per_char']:.3f} | "
                     f"{v['difference']:+.3f} [{v['low']:+.3f}, {v['high']:+.3f}] | {delta} | {a['pieces_per_char']:.3f} | "
                     f"{100 * a['round_trip_share']:.0f} % |")
    below = [a["name"] for a in res["arms"] if a["versus_floor"]["verdict"] == "better"]
    ranking = sorted(res["arms"], key=lambda a: a["bits_per_char"]["mean"])
    lines += ["", f"- Below their unigram floor (interval excluding 0): {len(below)} of {len(res['arms'])} arms"
              + (f" ({', '.join(below)})" if 0 < len(below) < len(res["arms"]) else "") + ".",
              "- Ranking, lowest bits/char first: " + " < ".join(a["name"] for a in ranking) + "."]
    lines += [f"- {s}" for s in res["verdicts"] if " is " in s]
    return lines + [f"- Note: {n}" for n in res["notes"]] + [""]


def _modes_compared(results: dict[str, dict]) -> list[str]:
    """Whether the raw and the fair mode rank the vocabularies alike (lowest bits/char first)."""
    rank = {m: [a["name"] for a in sorted(r["arms"], key=lambda a: a["bits_per_char"]["mean"])]
            for m, r in results.items()}
    same = rank["raw"] == rank["fair"]
    return ["## Raw against fair", "",
            ("The two modes rank the vocabularies the same way." if same else
             f"The modes rank the vocabularies differently (raw: {' < '.join(rank['raw'])}; fair: "
             f"{' < '.join(rank['fair'])}): the raw ranking owes part of its order to what each normalization "
             "throws away."), ""]


__all__ = ["PUBLISHED_FILES", "ProbeReport", "build_report", "command", "format_markdown", "plot", "publish",
           "published_readme", "read_published", "setup_bullets", "share_text", "versions_line", "write_report"]
