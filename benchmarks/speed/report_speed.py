"""What writing an ablation's report costs: a toy French ablation (4 vocabularies x the French
tasks x 3 fine-tuning seeds, random-init floors, 200 resamples: the dry run's analysis) whose jobs
are fakes (seeded predictions on the real test sets, no model), then ``run_ablation`` once more on
the finished records: checks, plan, records and the whole report. Prints its CPU and wall seconds.

    python -m benchmarks.speed.report_speed WORK [--tasks e3c,morfitt,frenchmedmcqa] [--pairs all] [--profile]

Side by side with another checkout (the baseline: ``git archive COMMIT | tar -x -C /tmp/base``),
each in its own WORK: ``PYTHONPATH=/tmp/base python /tmp/base/../this-file ...``. The ablation.json
of two checkouts with the same ``--pairs`` should hold the same numbers.

Measured 2026-11-28 on the shared 2-core machine (load ~12), ``--tasks e3c,morfitt,frenchmedmcqa``:
8546eb7 170.8 CPU-s per call (the dry run's gpu_side made 4 of them, one per rotation of the
arms); this branch 5.8 CPU-s with ``--pairs reference`` and 5.5 CPU-s with ``--pairs all`` (every
pair in the one call). Where it went (cProfile): MORFITT's weighted F1 scored by sklearn on every
bootstrap resample (26 CPU-s per comparison, 0.07 with per-label counts), seqeval's entity
parsing, per-example MCQ head scores. ``--tasks e3c,frenchmedmcqa`` on both: ablation.json the
same numbers (comparisons, floors, arms, verdicts), the new keys aside.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "corpora" / "sample" / "e3c_pamj_fr.txt"
FRENCH = "e3c,quaero-emea-drb,quaero-medline-drb,morfitt,frenchmedmcqa"


def fake_jobs(data: dict) -> None:
    """The ablation's jobs replaced by fakes: fine-tuning predicts the gold answer of a seeded
    share of the test examples (smaller for floors), a constant wrong one elsewhere."""
    from biotok_train.ablate import jobs
    from biotok_train.ablate.store import encode
    from biotok_train.tasks import targets

    def finetune(env, task, model, seed, rel_run, task_key=None, *, needs):
        from biotok_train.finetune import make_head, resolve

        spec, d, kind = resolve(data[task])
        head = make_head(kind, env.cfg.finetune_config(seed), spec)
        rng = random.Random(f"{rel_run}/{seed}")
        skill = 0.1 if "/floor/" in rel_run else 0.3 + 0.1 * (sum(map(ord, rel_run.split("/")[2])) % 3)
        pred = []
        for g in targets(d.task_type, d.test):
            if rng.random() < skill:
                pred.append(g)
            elif d.task_type == "ner":
                pred.append(["O"] * len(g))
            elif d.task_type == "multilabel":
                pred.append((rng.choice(d.labels),))
            elif d.task_type == "mcq":
                pred.append((rng.randrange(5),))
            else:
                pred.append(rng.choice(d.labels))
        labels = head.labels(d)
        score = head.score(d.test, pred, labels).metrics[head.metric]
        return {"metric": head.metric, "score": score, "metrics": {head.metric: score}, "labels": labels,
                "predictions": encode(pred)}

    def evaluate(env, vocab, rel_model, needs):
        rng = random.Random(rel_model)
        hits = [rng.random() < 0.5 for _ in range(env.cfg.statistics.n_words)]
        return {"mlm": {"accuracy": {"top1": sum(hits) / len(hits), "top3": 0.5, "top5": 0.6}, "n_words": len(hits),
                        "ranks": [1 if h else 2 for h in hits]}, "heldout": {"rows": [[52.0, 60.0, 2.0, 0.5, 10.0]] * 50}}

    jobs.prepare = lambda env, vocab, tok, needs: {"vocab_size": 2000, "num_tokens": 10000, "fertility": 1.5,
                                                   "pieces_per_line": 40.0}
    jobs.pretrain = lambda env, size, vocab, seed, rel, init, needs: {"steps": 4, "final_loss": 5.0, "tokens_seen": 4096,
                                                                      "loss_curve": [[4, 5.0]]}
    jobs.random_bert = lambda env, vocab, size, seed, rel, needs: {"model": rel}
    jobs.evaluate, jobs.finetune = evaluate, finetune


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("--tasks", default=FRENCH)
    ap.add_argument("--pairs", default=None, help="reference | all (default: the config's default)")
    ap.add_argument("--profile", action="store_true", help="cProfile the report call (cumulative, top 40)")
    a = ap.parse_args(argv)
    from benchmarks import corpora as C
    from biotok.config import NormalizeConfig, TrainConfig
    from biotok.train import train_tokenizer
    import biotok_train.ablate.run as RUN
    from biotok_train.config import FinetuneConfig
    from biotok_train.ablate.config import AblationConfig, EngineConfig, Finetuning, Pretraining, Statistics
    from biotok_train.tasks import load

    tasks = tuple(a.tasks.split(","))
    toks = []
    for i, (algo, lower) in enumerate([("unigram", True), ("wordpiece", False), ("unigram", False), ("bpe", False)]):
        out = a.work / "toks" / f"t{i}-{algo}"
        if not (out / "tokenizer.json").is_file():
            train_tokenizer([SAMPLE], TrainConfig(algo=algo, vocab_size=2000 + 100 * i,
                                                  normalize=NormalizeConfig(lowercase=lower)), out, force=True, workers=1)
        toks.append(str(out))
    fake_jobs({t: load(t, str(C.CORPORA)) for t in tasks})
    cfg = AblationConfig(tokenizers=tuple(toks), corpus=(str(SAMPLE),), tasks=tasks, data_dir=str(C.CORPORA),
                         sizes=("tiny",), pretraining=Pretraining(budget=4, batch_size=2, seq_len=32, seeds=(0,)),
                         finetuning=Finetuning(FinetuneConfig(epochs=1, batch_size=4, max_length=64, max_steps=2,
                                                              max_train_sentences=8), seeds=(0, 1, 2)),
                         statistics=Statistics(n_words=50, n_resamples=200, heldout_every=20))
    if a.pairs:
        cfg = dataclasses.replace(cfg, statistics=dataclasses.replace(cfg.statistics, pairs=a.pairs))
    report = RUN._report
    RUN._report = lambda res: None  # the fakes' records first, no report
    RUN.run_ablation(cfg, a.work / "gpu", progress=False, engine=EngineConfig("local"), force=True)
    RUN._report = report
    wall, cpu = time.time(), time.process_time()
    if a.profile:
        import cProfile
        import pstats

        with cProfile.Profile() as pr:
            RUN.run_ablation(cfg, a.work / "gpu", progress=False, engine=EngineConfig("local"), force=True)
        pstats.Stats(pr).sort_stats("cumulative").print_stats(40)
    else:
        RUN.run_ablation(cfg, a.work / "gpu", progress=False, engine=EngineConfig("local"), force=True)
    print(f"report_speed: {len(tasks)} tasks, pairs {getattr(cfg, 'pairs', 'reference')}: the report from the records "
          f"in {time.process_time() - cpu:.1f} CPU-s ({time.time() - wall:.1f} s wall); {a.work / 'gpu' / 'ablation.json'}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
