"""Extend CamemBERTv2 / CamemBERTa by K French biomedical pieces: held-out pieces/word against K,
beside fresh vocabularies of the same size, and savings vs naive frequency (issue 44).

    python -m benchmarks.experiments.extend_fr     # -> docs/results/extend-fr/
"""
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
KS = (500, 1000, 2000, 5000, 10000)
BASES = {"camembertv2": TOKENIZERS / "camembertv2-base", "camemberta": CAMEMBERTA}


def per_word(tok, lines):
    return sum(map(len, tok.encode_batch(lines))) / sum(len(l.split()) for l in lines)


def main() -> None:
    require_data()
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    held = [l for i, l in enumerate(lines, 1) if i % 10 == 0 and l.strip()]
    WORK.mkdir(parents=True, exist_ok=True)
    small = WORK / "sample_train.txt"  # the sample less every 10th line
    small.write_text("\n".join(l for i, l in enumerate(lines, 1) if i % 10) + "\n", encoding="utf-8")
    big = WORK / "train_large.txt"  # + the French WMT-biomed abstracts: enough candidates for +10k
    big.write_text(small.read_text(encoding="utf-8") + wmt_french_file(WORK / "wmt_fr.txt").read_text(encoding="utf-8"),
                   encoding="utf-8")
    res = {"held_out_lines": len(held), "large_mb": round(big.stat().st_size / 1e6, 1), "base": {}, "curve": {},
           "fresh": {}, "naive": {}}

    def ext(name, corpus, k, by="savings"):
        out = WORK / f"{name}-{corpus.stem}-{by}-{k}"
        if not (out / "biotok.json").is_file():
            extend(BASES[name], [corpus], out, ExtendConfig(add=k, by=by), force=True)
        return round(per_word(load(out), held), 4)

    for name, base in BASES.items():
        res["base"][name] = round(per_word(load(base), held), 4)
        res["naive"][name] = {by: ext(name, small, 2000, by) for by in ("savings", "frequency")}
        res["curve"][name] = {k: ext(name, big, k) for k in KS}
    for k in KS:
        size = 32768 + k
        out = WORK / f"fresh-wordpiece-{size}"
        if not (out / "biotok.json").is_file():
            train_tokenizer([big], TrainConfig(algo="wordpiece", vocab_size=size), out, force=True)
        res["fresh"][size] = round(per_word(load(out), held), 4)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    plot(res)
    page(res)


def plot(res) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for name in BASES:
        ax.plot(KS, [res["curve"][name][k] for k in KS], "o-", label=f"{name} + K (extend)")
        ax.axhline(res["base"][name], ls=":", color=ax.lines[-1].get_color(), label=f"{name} as is")
    ax.plot(KS, [res["fresh"][32768 + k] for k in KS], "s--", label="fresh biotok WordPiece, 32,768 + K")
    ax.set(xscale="log", xlabel="pieces added (K)", ylabel="held-out pieces / word")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "pieces_per_word.png", dpi=110)


def page(res) -> None:
    b, n = res["base"], res["naive"]
    cut = {m: {k: 1 - v / b[m] for k, v in n[m].items()} for m in BASES}
    rows = "\n".join(f"| {m} | {b[m]:.3f} | " + " | ".join(f"{res['curve'][m][k]:.3f} ({1 - res['curve'][m][k] / b[m]:.1%})"
                                                       for k in KS) + " |" for m in BASES)
    fresh = " | ".join(f"{res['fresh'][32768 + k]:.3f}" for k in KS)
    v2 = cut["camembertv2"]
    verdict = (f"On CamemBERTv2, +2,000 pieces chosen by savings cut the held-out pieces by {v2['savings']:.1%}, "
               f"against {v2['frequency']:.1%} for the same candidates by frequency: the done-when's 20 % is "
               f"{'met' if v2['savings'] >= 0.2 else 'not met'} on this sample. CamemBERTv2 + 10k gives "
               f"{res['curve']['camembertv2'][10000]:.3f} pieces/word, a fresh WordPiece of the same size "
               f"{res['fresh'][42768]:.3f}: the extension is {'shorter' if res['curve']['camembertv2'][10000] < res['fresh'][42768] else 'longer'}.")
    (OUT / "README.md").write_text(f"""# Extending CamemBERTv2 and CamemBERTa by French biomedical pieces

Regenerate: `python -m benchmarks.experiments.extend_fr`. Held out: every 10th line of
`corpora/sample/e3c_pamj_fr.txt` ({res['held_out_lines']} lines); pieces/word = pieces / whitespace words.

## Savings vs naive frequency (+2,000, trained on the other sample lines)

| base | as is | by savings | by frequency |
|---|---:|---:|---:|
""" + "\n".join(f"| {m} | {b[m]:.3f} | {n[m]['savings']:.3f} ({cut[m]['savings']:.1%}) | "
                f"{n[m]['frequency']:.3f} ({cut[m]['frequency']:.1%}) |" for m in BASES) + f"""

## Pieces/word against K (trained on the sample's other lines + the WMT-biomed French abstracts, {res['large_mb']} MB)

| base | as is | """ + " | ".join(f"+{k:,}" for k in KS) + " |\n|---|---:|" + "---:|" * len(KS) + f"""
{rows}
| fresh biotok WordPiece (32,768 + K) | | {fresh} |

![pieces per word](pieces_per_word.png)

{verdict}
""", encoding="utf-8")


if __name__ == "__main__":
    main()
