"""CamemBERTv2 / CamemBERTa + K French biomedical pieces: held-out pieces/word against K beside fresh
vocabularies, savings vs frequency. ``python -m benchmarks.experiments.extend_fr`` -> docs/results/extend-fr/"""
from __future__ import annotations

import json
from pathlib import Path

from benchmarks._common import CACHE
from benchmarks.corpora import CAMEMBERTA, SAMPLE, TOKENIZERS, require_data, wmt_french_file
from biotok.config import TrainConfig
from biotok.extension import ExtendConfig, extend
from biotok.formats import load
from biotok.train import train_tokenizer

OUT, WORK = Path(__file__).resolve().parents[2] / "docs" / "results" / "extend-fr", CACHE / "extend-fr"
KS, BASES = (500, 1000, 2000, 5000, 10000), {"camembertv2": TOKENIZERS / "camembertv2-base", "camemberta": CAMEMBERTA}


def main() -> None:
    require_data()
    lines, _ = SAMPLE.read_text(encoding="utf-8").splitlines(), WORK.mkdir(parents=True, exist_ok=True)
    held = [l for i, l in enumerate(lines, 1) if i % 10 == 0 and l.strip()]
    small, big = WORK / "sample_train.txt", WORK / "train_large.txt"  # big: + the WMT-biomed French abstracts
    small.write_text("\n".join(l for i, l in enumerate(lines, 1) if i % 10) + "\n", encoding="utf-8")
    big.write_text(small.read_text("utf-8") + wmt_french_file(WORK / "wmt_fr.txt").read_text("utf-8"), "utf-8")
    ppw = lambda d: round(sum(map(len, load(d).encode_batch(held))) / sum(len(l.split()) for l in held), 4)  # noqa: E731

    def ext(name, corpus, k, by="savings"):  # cached in WORK
        if not (out := WORK / f"{name}-{corpus.stem}-{by}-{k}").joinpath("biotok.json").is_file():
            extend(BASES[name], [corpus], out, ExtendConfig(add=k, by=by), force=True)
        return ppw(out)

    def fresh(size):
        if not (out := WORK / f"fresh-wordpiece-{size}").joinpath("biotok.json").is_file():
            train_tokenizer([big], TrainConfig(algo="wordpiece", vocab_size=size), out, force=True)
        return ppw(out)

    r = {"held_out_lines": len(held), "large_mb": round(big.stat().st_size / 1e6, 1),
         "base": {m: ppw(b) for m, b in BASES.items()},
         "naive": {m: {by: ext(m, small, 2000, by) for by in ("savings", "frequency")} for m in BASES},
         "curve": {m: {k: ext(m, big, k) for k in KS} for m in BASES}, "fresh": {k: fresh(32768 + k) for k in KS}}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(r, indent=2) + "\n", encoding="utf-8")
    import matplotlib.pyplot as plt  # lazy: only to draw the figure
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for m in BASES:
        ax.plot(KS, [r["curve"][m][k] for k in KS], "o-", label=f"{m} + K (biotok extend)")
        ax.axhline(r["base"][m], ls=":", color=ax.lines[-1].get_color(), label=f"{m} as is")
    ax.plot(KS, [r["fresh"][k] for k in KS], "s--", label="fresh biotok WordPiece, 32,768 + K pieces")
    ax.set(xscale="log", xlabel="pieces added (K)", ylabel="held-out pieces / word")
    ax.legend(fontsize=8), fig.tight_layout(), fig.savefig(OUT / "pieces_per_word.png", dpi=110)
    b, n, c = r["base"], r["naive"], r["curve"]
    cut = lambda m, v: f"{v:.3f} ({1 - v / b[m]:.1%})"  # noqa: E731
    sv, fq = (1 - n["camembertv2"][by] / b["camembertv2"] for by in ("savings", "frequency"))
    e10, f10 = c["camembertv2"][10000], r["fresh"][10000]
    (OUT / "README.md").write_text(f"""# Extending CamemBERTv2 and CamemBERTa by French biomedical pieces

Regenerate: `python -m benchmarks.experiments.extend_fr`. Held out: every 10th line of
`corpora/sample/e3c_pamj_fr.txt` ({len(held)} lines); pieces/word = pieces / whitespace words.

## Chosen by savings or by frequency (+2,000, learned from the sample's other lines)

| base | as is | by savings | by frequency |
|---|---:|---:|---:|
""" + "".join(f"| {m} | {b[m]:.3f} | {cut(m, n[m]['savings'])} | {cut(m, n[m]['frequency'])} |\n" for m in BASES) + f"""
## Pieces/word against K (learned from the sample's other lines + WMT-biomed French abstracts, {r['large_mb']} MB)

| base | as is | """ + " | ".join(f"+{k:,}" for k in KS) + " |\n|---|---:|" + "---:|" * len(KS) + "\n" + "".join(
        f"| {m} | {b[m]:.3f} | " + " | ".join(cut(m, c[m][k]) for k in KS) + " |\n" for m in BASES) + f"""| fresh biotok WordPiece (32,768 + K) | | {' | '.join(f"{r['fresh'][k]:.3f}" for k in KS)} |

![held-out pieces per word against K](pieces_per_word.png)

On CamemBERTv2, +2,000 pieces chosen by savings cut the held-out pieces by {sv:.1%}, against {fq:.1%} for
the same candidates by frequency: the issue's 20 % is {'met' if sv >= 0.2 else 'not met'} on this sample.
CamemBERTv2 + 10,000 gives {e10:.3f} pieces/word, a fresh WordPiece of the same size {f10:.3f}: the
extension segments {'shorter' if e10 < f10 else 'longer'}, and keeps every one of the model's ids.
""", encoding="utf-8")

if __name__ == "__main__":
    main()
