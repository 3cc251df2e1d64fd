"""From your data to a decision (docs/results/decide-fr/): issue 45's scenario, docs/evaluation.md's steps on a French
corpus, QUAERO CoNLL files and three vocabularies: ``OMP_NUM_THREADS=1 nice python -m benchmarks.experiments.decide_fr``
(``--quick``: toy sizes). Work files in benchmarks/.data/decide_fr/; a rerun skips the steps in its timings.json."""
import argparse, json, time  # noqa: E401
from pathlib import Path

from benchmarks import corpora as C
from benchmarks._common import CACHE, REPO
from benchmarks.experiments.decide_fr_page import cpu_seconds, publish, run_steps

PUBLISHED, SCRIPT = REPO / "docs/results/decide-fr", "python -m benchmarks.experiments.decide_fr"
ARMS, EVIDENCE = ("camemberta", "tok-unigram-l", "tok-bpe"), ("compare.json", "probe", "ablation")
GROUPS = (("inputs",), ("train Unigram_L",), ("train BPE",), ("compare",), ("probe", "ablate"), ("decide",), ("report",))
# a CPU check: the probe's 2 seeds (decide keeps an interval over two at least), the ablation's defaults but its budget
FULL = dict(every=1, sentences=None, vocab=16000, seeds=(0, 1), probe=dict(steps=80, batch_size=8, lr=3e-3), ablate=dict(budget=50))
QUICK = dict(every=12, sentences=40, vocab=1000, seeds=(0, 1), probe=dict(steps=6, batch_size=4, seq_len=32, hidden=32,
             n_resamples=200), ablate=dict(budget=3, batch_size=4, seq_len=32, n_words=60, n_resamples=100), ft=dict(epochs=1))


def steps(q: dict) -> dict:
    """Each step, calls of the API (the command a user types for each: decide_fr_page.commands)."""
    from biotok import TrainConfig, load, train_tokenizer
    from biotok.config import DecideConfig, NormalizeConfig
    from biotok.corpus import iter_lines
    from biotok.decide import decide
    from biotok.report import build_report, compare_tokenizers
    from biotok.report.decision import write_decision
    from biotok_train.ablate import AblationConfig, run_ablation
    from biotok_train.config import FinetuneConfig, ProbeConfig
    from biotok_train.probe import run_probe

    def inputs():  # corpus.txt, heldout.txt (each 10th line; each 4th of those for the probe), task/*.conll
        lines = C.dialogues_and_abstracts()[::q["every"]]
        C.write_lines(Path("heldout.txt"), lines[9::10])
        C.write_lines(Path("heldout-probe.txt"), lines[9::10][3::4])
        C.write_lines(Path("corpus.txt"), (line for i, line in enumerate(lines) if i % 10 != 9))
        C.quaero_conll(Path("task"), q["sentences"])

    def decision(d=None):  # the page as Markdown and HTML, and its numbers (decide_fr_page reads them)
        for x in ("md", "html"):
            write_decision(d := d or decide(EVIDENCE, DecideConfig()), f"decision.{x}", force=True, inputs=EVIDENCE)
        Path("decision.json").write_text(json.dumps(d.as_dict(), ensure_ascii=False, indent=1), encoding="utf-8")

    def train(algo: str, out: str):  # Unigram_L: the Unigram lowercased
        cfg = TrainConfig(algo=algo, vocab_size=q["vocab"], normalize=NormalizeConfig(lowercase=algo == "unigram"))
        train_tokenizer(["corpus.txt"], cfg, out, force=True, workers=1)
    toks, held, ft = lambda: [load(x) for x in ARMS], lambda: iter_lines(["heldout.txt"]), FinetuneConfig(**q.get("ft", {}))
    return {"inputs": inputs, "train Unigram_L": lambda: train("unigram", "tok-unigram-l"),
            "train BPE": lambda: train("bpe", "tok-bpe"),
            "compare": lambda: Path("compare.json").write_text(json.dumps(compare_tokenizers(
                toks(), lines=held(), corpus=["heldout.txt"]).as_dict(), ensure_ascii=False), encoding="utf-8"),
            "probe": lambda: run_probe(ProbeConfig(tokenizers=ARMS, corpus=("corpus.txt",), heldout=("heldout-probe.txt",),
                                                   fair=True, seeds=q["seeds"], pairs="all", threads=1, **q["probe"]), "probe"),
            "ablate": lambda: run_ablation(AblationConfig.from_flat(tokenizers=ARMS, corpus=("corpus.txt",),  # q: flat
                                                                    tasks=("quaero=task",), pairs="all", finetune=ft, **q["ablate"]), "ablation"),
            "decide": decision, "report": lambda: build_report(toks(), held(), "report", force=True, decide_from=EVIDENCE,
                                                               inputs=["heldout.txt", *EVIDENCE], corpus_label="heldout.txt")}


def timed(name: str, quick: bool) -> dict:
    """Run one step here (in this folder); its wall and CPU seconds."""
    t, c = time.perf_counter(), cpu_seconds()
    steps(QUICK if quick else FULL)[name]()
    return {"wall_s": round(time.perf_counter() - t, 1), "cpu_s": round(cpu_seconds() - c, 1)}


def main(argv: list[str] | None = None) -> Path:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="toy sizes; nothing published")
    ap.add_argument("--work", type=Path, default=None, help="work folder [benchmarks/.data/decide_fr(_quick)]")
    args = ap.parse_args(argv)
    work = (args.work or CACHE / f"decide_fr{'_quick' * args.quick}").resolve()
    done = run_steps(work, GROUPS, timed, args.quick)  # in work: the pages name the files as a user there would
    if not args.quick:
        publish(work, PUBLISHED, done, FULL, ARMS, SCRIPT)
    return work / "decision.md"


if __name__ == "__main__":
    main()
