"""From your data to a decision (docs/results/decide-fr/): issue 45's scenario, the steps of docs/evaluation.md
("From your data to a decision") on a French corpus, QUAERO CoNLL files and three vocabularies, one after the other.

    OMP_NUM_THREADS=1 nice python -m benchmarks.experiments.decide_fr   # -> docs/results/decide-fr/
    python -m benchmarks.experiments.decide_fr --quick    # toy sizes, in benchmarks/.data/decide_fr_quick/ only

Work files in benchmarks/.data/decide_fr/, each step's wall and CPU seconds in its timings.json; a rerun skips
the finished steps (the probe and the ablation resume their own runs). The README: decide_fr_page.py.
"""
from __future__ import annotations

import argparse, json, os, resource, shutil, time  # noqa: E401
from pathlib import Path

from benchmarks import corpora as C
from benchmarks._common import CACHE, REPO

PUBLISHED, SCRIPT = REPO / "docs/results/decide-fr", "python -m benchmarks.experiments.decide_fr"
ARMS, EVIDENCE = ("camemberta", "tok-unigram-l", "tok-bpe"), ("compare.json", "probe", "ablation")
# the probe: 2 seeds (decide keeps an interval over two at least), probe-fr's shape; the ablation: ablate's defaults
FULL = dict(every=1, sentences=None, vocab=16000, seeds=(0, 1), probe=dict(steps=250, batch_size=8, lr=2e-3), ablate={})
QUICK = dict(every=12, sentences=40, vocab=1000, seeds=(0, 1), probe=dict(steps=6, batch_size=4, seq_len=32, hidden=32,
             n_resamples=200), ablate=dict(budget=3, batch_size=4, seq_len=32, epochs=1, n_words=60, n_resamples=100))


def steps(q: dict) -> dict:
    """Each step, calls of the API (the command a user types for each: decide_fr_page.commands)."""
    from biotok import TrainConfig, load, train_tokenizer
    from biotok.config import DecideConfig, NormalizeConfig
    from biotok.corpus import iter_lines
    from biotok.datasets.named import named_splits
    from biotok.decide import decide
    from biotok.report import build_report, compare_tokenizers
    from biotok.report.decision import write_decision
    from biotok_train.ablate import run_ablation
    from biotok_train.config import AblationConfig, FinetuneConfig, ProbeConfig
    from biotok_train.probe import run_probe

    def inputs():  # corpus.txt, heldout.txt (each 10th line) and task/{train,dev,test}.conll
        lines = C.dialogues_and_abstracts()[::q["every"]]
        C.write_lines(Path("heldout.txt"), lines[9::10])
        C.write_lines(Path("corpus.txt"), (line for i, line in enumerate(lines) if i % 10 != 9))
        Path("task").mkdir(exist_ok=True)
        for split, sents in zip(("train", "dev", "test"), named_splits("quaero", C.CORPORA)):
            C.write_conll(Path(f"task/{split}.conll"), sents[:q["sentences"]])

    def decision():
        d = decide(EVIDENCE, DecideConfig())
        Path("decision.json").write_text(json.dumps(d.as_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        for x in ("md", "html"):
            write_decision(d, f"decision.{x}", force=True, inputs=EVIDENCE)

    train = lambda algo, out: train_tokenizer(["corpus.txt"], TrainConfig(algo=algo, vocab_size=q["vocab"],  # noqa: E731
        normalize=NormalizeConfig(lowercase=algo == "unigram")), out, force=True, workers=1)
    ab = {k: v for k, v in q["ablate"].items() if k != "epochs"}
    ft = FinetuneConfig(**{"epochs": q["ablate"]["epochs"]} if "epochs" in q["ablate"] else {})
    held = lambda: iter_lines(["heldout.txt"])  # noqa: E731
    return {"inputs": inputs, "train Unigram_L": lambda: train("unigram", "tok-unigram-l"),
            "train BPE": lambda: train("bpe", "tok-bpe"),
            "compare": lambda: Path("compare.json").write_text(json.dumps(compare_tokenizers(
                [load(x) for x in ARMS], lines=held(), corpus=["heldout.txt"]).as_dict(), ensure_ascii=False), "utf-8"),
            "probe": lambda: run_probe(ProbeConfig(tokenizers=ARMS, corpus=("corpus.txt",), heldout=("heldout.txt",),
                                                   fair=True, seeds=q["seeds"], pairs="all", threads=1, **q["probe"]), "probe"),
            "ablate": lambda: run_ablation(AblationConfig(tokenizers=ARMS, corpus=("corpus.txt",), tasks=("quaero=task",),
                                                          pairs="all", finetune=ft, **ab), "ablation"),
            "decide": decision,
            "report": lambda: build_report([load(x) for x in ARMS], held(), "report", force=True,
                                           decide_from=EVIDENCE, inputs=["heldout.txt", *EVIDENCE], corpus_label="heldout.txt")}


def main(argv: list[str] | None = None) -> Path:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="toy sizes; nothing published")
    ap.add_argument("--work", type=Path, default=None, help="work folder [benchmarks/.data/decide_fr(_quick)]")
    args = ap.parse_args(argv)
    C.require_data()
    (work := (args.work or CACHE / f"decide_fr{'_quick' * args.quick}").resolve()).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("BIOTOK_SHARED_DATA", str(C.DATA))  # the alias camemberta, from any folder
    os.chdir(work)  # the pages name the files as a user in this folder would
    done = json.loads(Path("timings.json").read_text(encoding="utf-8")) if Path("timings.json").is_file() else {}
    who = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)  # CPU seconds: this process and its finished children
    cpu = lambda: sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, who))  # noqa: E731
    for name, fn in ((n, f) for n, f in steps(QUICK if args.quick else FULL).items() if n not in done):
        t, c = time.perf_counter(), cpu()
        fn()
        done[name] = {"wall_s": round(time.perf_counter() - t, 1), "cpu_s": round(cpu() - c, 1)}
        C.write_lines(Path("timings.json"), [json.dumps(done, indent=1)])
    if not args.quick:
        from benchmarks.experiments.decide_fr_page import readme

        PUBLISHED.mkdir(parents=True, exist_ok=True)
        for f in ("decision.md", "decision.html", "decision.json", "timings.json"):
            shutil.copyfile(f, PUBLISHED / f)
        (PUBLISHED / "README.md").write_text(readme(work, done, FULL, ARMS, SCRIPT), encoding="utf-8")
    return work.resolve() / "decision.md"


if __name__ == "__main__":
    main()
