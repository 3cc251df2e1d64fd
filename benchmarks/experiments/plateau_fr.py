"""How long must a tiny French MLM train to leave the unigram plateau? (docs/results/plateau-fr/)

    python -m benchmarks.experiments.plateau_fr                  # 2 vocabularies x 16,000 steps (about an hour of CPU; resumable)
    python -m benchmarks.experiments.ablation_cpu --budget 16000 # then the ablation at that budget, reusing both seed-0 models
    python -m benchmarks.experiments.plateau_fr --quick          # a few steps into benchmarks/.data/ablation_cpu_quick/ only

Phases: (1) the split of the published CPU ablation (benchmarks/experiments/ablation_cpu.py: the E3C PAMJ
clinical cases, each 20th line held out) and its biotok Unigram_L of 8,000 pieces; (2) for
CamemBERTa's vocabulary and that Unigram_L, one BERT-tiny MLM (the ablation's recipe: batch 8 x
128, lr 2e-3, a linear schedule over --max-steps), the ablation's own seed-0 model at a budget of
--max-steps, in its own work folder, trained in chunks of --every steps; after each
chunk the held-out [MASK] loss minus the unigram floor of the same positions, with its paired
bootstrap interval over held-out sequences (biotok_train.pretrain.heldout); a vocabulary has
left the plateau at the first chunk whose interval lies below zero; (3) plateau.json,
plateau.png (the gap against token positions, one line per vocabulary, its interval shaded)
and a README written from the numbers. ``benchmarks/experiments/ablation_cpu.py --budget MAX_STEPS`` then
finds both seed-0 models trained and adds the fine-tuning, its floors and the probe.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

from benchmarks._common import REPO, ablation_cpu_recipe, ablation_cpu_workdir, ablation_unigram_l, require_data
from biotok_train.pretrain.heldout import PLATEAU_MARGIN  # noqa: E402

PUBLISHED = REPO / "docs" / "results" / "plateau-fr"
log = logging.getLogger("plateau_fr")


def vocabularies(max_steps: int, quick: bool):
    """The ablation's recipe at a budget of ``max_steps``, its run folder, its split and its two
    vocabularies by the ablation's names (CamemBERTa's and the biotok Unigram_L trained on the
    pretraining part)."""
    from biotok_train.ablate import leg_names

    work = ablation_cpu_workdir(max_steps, quick)
    tok = work / "Unigram_L-8k"
    cfg = ablation_cpu_recipe(tok, quick, max_steps)
    out = work / "run"
    train, held = ablation_unigram_l(cfg, out, tok)
    return cfg, out, train, held, dict(zip(leg_names(cfg.tokenizers), cfg.tokenizers))


def search(cfg, out: Path, name: str, data: Path, held: Path, every: int) -> list[dict]:
    """Train the ablation's seed-0 model of ``name`` in chunks of ``every`` steps (one schedule
    over the budget); the held-out gap after each chunk, each point saved as soon as it is
    measured (resumable). The model is the one ``ablation_cpu.py --budget`` then reuses."""
    from biotok_train.ablate.plan import arm_model_dir
    from biotok_train.pretrain.heldout import evaluate_saved
    from biotok_train.pretrain import checkpoint as ckpt
    from biotok_train.pretrain.loop import pretrain

    run = arm_model_dir(out, "tiny", name, 0)  # where the ablation's arm keeps it
    points_file = out.parent / "plateau" / f"{name}.points.json"
    points = json.loads(points_file.read_text(encoding="utf-8")) if points_file.is_file() else []
    pcfg = cfg.pretrain_config("tiny", 0)
    for stop in range(every, pcfg.steps + 1, every):
        if any(p["step"] == stop for p in points):
            continue
        t0 = time.process_time()
        res = pretrain(data, pcfg, run, resume=(run / ckpt.STATE).exists(), stop_after=stop, progress=False)
        train_cpu = time.process_time() - t0
        if res.steps != stop:  # the ablation trained this model past ``stop`` already: that point is gone
            log.info("%s: the model is at step %d, past %d; no point there", name, res.steps, stop)
            continue
        s = evaluate_saved(run, data, held).summary()
        points.append({"step": res.steps, "positions": res.steps * pcfg.batch_size * 128, "train_cpu_s": round(train_cpu, 1),
                       **{k: s[k] for k in ("loss", "floor_loss", "gap", "gap_low", "gap_high", "left_plateau",
                                            "top1", "floor_top1")}})
        points_file.parent.mkdir(parents=True, exist_ok=True)
        points_file.write_text(json.dumps(points, indent=1) + "\n", encoding="utf-8")
        log.info("%s step %d: gap %+.3f [%+.3f, %+.3f]", name, res.steps, s["gap"], s["gap_low"], s["gap_high"])
    return sorted(points, key=lambda p: p["step"])


def first_left(points: list[dict]) -> dict | None:
    """The first point whose interval lies below zero (the plateau is left there)."""
    return next((p for p in points if p["left_plateau"]), None)


def readme(result: dict, command: str) -> str:
    lines = ["# When does a tiny French MLM leave the unigram plateau?", "",
             "Regenerate everything here (plateau.json, plateau.png, this README) with one command:", "",
             "```bash", command, "```", "",
             f"Setup: BERT-tiny, batch 8 x 128 pieces, lr 2e-3, one linear schedule over {result['max_steps']:,} "
             f"steps, evaluated every {result['every']:,} steps on the held-out lines of the E3C PAMJ split of "
             "`benchmarks/experiments/ablation_cpu.py` (every [MASK] position scored against the add-one unigram floor of the "
             "training pieces; 95 % paired bootstrap over held-out sequences). A vocabulary has left the plateau at "
             f"the first point whose interval lies below -{PLATEAU_MARGIN:g} nats (a smaller gap is float rounding).", "",
             "![gap](plateau.png)", "",
             "| vocabulary | steps | token positions | held-out [MASK] loss | unigram floor | gap [95 % CI] | top-1 "
             "(most frequent piece) |", "|---|---:|---:|---:|---:|---|---|"]
    for name, pts in result["vocabularies"].items():
        for p in pts:
            lines.append(f"| {name} | {p['step']:,} | {p['positions']:,} | {p['loss']:.3f} | {p['floor_loss']:.3f} | "
                         f"{p['gap']:+.3f} [{p['gap_low']:+.3f}, {p['gap_high']:+.3f}] | {p['top1']:.3f} "
                         f"({p['floor_top1']:.3f}) |")
    lines += ["", "## Verdict", ""]
    for name, pts in result["vocabularies"].items():
        first = first_left(pts)
        if first is None:
            last = pts[-1] if pts else None
            where = (f"at {last['positions']:,} positions its gap is {last['gap']:+.3f} [{last['gap_low']:+.3f}, "
                     f"{last['gap_high']:+.3f}]") if last else "no point measured yet"
            lines.append(f"- {name} has not left the plateau within {result['max_steps']:,} steps ({where}).")
        else:
            cpu = sum(p["train_cpu_s"] for p in pts if p["step"] <= first["step"]) / 60
            lines.append(f"- {name} leaves the plateau by step {first['step']:,} ({first['positions']:,} token positions, "
                         f"{cpu:.0f} CPU-minutes of training): gap {first['gap']:+.3f} [{first['gap_low']:+.3f}, "
                         f"{first['gap_high']:+.3f}] nats.")
        if pts and all(p["top1"] <= p["floor_top1"] for p in pts):  # the same held-out positions at every point
            lines.append(f"- {name}'s top-1 on [MASK] positions never beats always answering the most frequent piece "
                         f"({pts[-1]['floor_top1']:.3f}): what it learned shows in the loss only.")
    found = [first_left(p) for p in result["vocabularies"].values()]
    if found and all(found):
        budget = max(f["step"] for f in found)
        lines += ["", f"An ablation whose arms all use context needs at least {budget:,} steps of this recipe: "
                      f"`python -m benchmarks.experiments.ablation_cpu --budget {budget}`."]
    return "\n".join(lines) + "\n"


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, pts in result["vocabularies"].items():
        x = [p["positions"] / 1e6 for p in pts]
        ax.plot(x, [p["gap"] for p in pts], marker="o", label=name)
        ax.fill_between(x, [p["gap_low"] for p in pts], [p["gap_high"] for p in pts], alpha=0.2)
    ax.axhline(0.0, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("token positions seen (millions)")
    ax.set_ylabel("held-out [MASK] loss - unigram floor (nats)")
    ax.set_title("Below 0: the model uses context", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few steps, results kept in benchmarks/.data only")
    ap.add_argument("--max-steps", type=int, default=16000,
                    help="the schedule's length and the most steps trained: the budget of the ablation that reuses "
                         "these seed-0 models (python -m benchmarks.experiments.ablation_cpu --budget MAX_STEPS)")
    ap.add_argument("--vocab", default=None, metavar="NAME",
                    help="camemberta-base or Unigram_L-8k: train only this vocabulary's model and write nothing "
                         "else (two processes, one each, "
                         "share two cores; a run without --vocab then publishes both from their saved points)")
    ap.add_argument("--every", type=int, default=2000, help="steps between two held-out evaluations")
    args = ap.parse_args(argv)
    require_data()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    if args.quick:
        args.max_steps, args.every = 20, 10
    from biotok_train.ablate.plan import data_dir, prepared

    cfg, run, train, held, vocabs = vocabularies(args.max_steps, args.quick)
    if args.vocab is not None and args.vocab not in vocabs:
        ap.error(f"--vocab {args.vocab}: one of {', '.join(vocabs)}")
    result = {"max_steps": args.max_steps, "every": args.every, "vocabularies": {}}
    for name, tok in vocabs.items():
        if args.vocab not in (None, name):
            continue
        # the ablation's own prepared text and held-out lines, which it then reuses
        data = prepared(data_dir(run, name), train, tok, cfg.seq_len).path
        hdata = prepared(data_dir(run, name, heldout=True), held, tok, cfg.seq_len).path
        result["vocabularies"][name] = search(cfg, run, name, data, hdata, args.every)
    if args.vocab is not None:
        return 0
    out = run.parent / "plateau" / "published" if args.quick else PUBLISHED
    out.mkdir(parents=True, exist_ok=True)
    (out / "plateau.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    plot(result, out / "plateau.png")
    command = " ".join(["python -m benchmarks.experiments.plateau_fr", *sys.argv[1:]]) if argv is None else "python -m benchmarks.experiments.plateau_fr"
    (out / "README.md").write_text(readme(result, command), encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
