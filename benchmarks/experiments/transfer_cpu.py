"""Vocabulary transfer on CPU: does FVT start lower than random rows, and for how long?

1. A small "general" BERT (size tiny) is pretrained on the French side of the WMT biomedical
   abstracts with CamemBERTa's vocabulary (32k SentencePiece Unigram).
2. A biotok in-domain vocabulary (spm-unigram, 8k, cased) is trained on the E3C clinical cases
   (PAMJ, CC BY) minus a held-out tenth of the documents.
3. The general model is transferred to that vocabulary with ``fvt`` and with ``random`` (same seed),
   and each is pretrained further on the clinical cases with the same steps, data order and masks
   (``--init-from``); at fixed steps both are scored on the held-out cases: MLM loss (every
   held-out sequence, fixed masks) and whole-word top-1 (the masked-word evaluation, fixed words).

Writes docs/results/transfer-cpu/{results.json, curves.png}. Inputs are derived into
benchmarks/.data/transfer_cpu/ (git-ignored) from ../shared/data.

    python -m benchmarks.experiments.transfer_cpu            # the committed run
    python -m benchmarks.experiments.transfer_cpu --quick    # a few steps: checks that the script still runs
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import json
import sys
import time
from pathlib import Path

from benchmarks._common import CACHE, REPO, machine, require_data
from benchmarks.corpora import CAMEMBERTA, PAMJ, wmt_french_file

from biotok.io import open_text  # noqa: E402

WORK = CACHE / "transfer_cpu"
OUT = REPO / "docs" / "results" / "transfer-cpu"


def general_text() -> Path:
    """The French side of the WMT biomedical training abstracts, one line each (cached in WORK)."""
    return wmt_french_file(WORK / "general_fr.txt")


def clinical_split() -> tuple[Path, Path]:
    """E3C PAMJ clinical cases, one paragraph a line; a document is held out when sha1(id) % 10 == 0."""
    train, held = WORK / "clinical_train.txt", WORK / "clinical_heldout.txt"
    if train.is_file() and held.is_file():
        return train, held
    with open_text(PAMJ, newline=None) as src, \
            open(train.with_suffix(".tmp"), "w", encoding="utf-8") as ft, \
            open(held.with_suffix(".tmp"), "w", encoding="utf-8") as fh:
        for line in src:
            doc = json.loads(line)
            f = fh if int(hashlib.sha1(doc["id"].encode()).hexdigest(), 16) % 10 == 0 else ft
            for para in doc["text"].splitlines():
                if para.strip():
                    f.write(para.strip() + "\n")
    train.with_suffix(".tmp").rename(train)
    held.with_suffix(".tmp").rename(held)
    return train, held


def heldout_loss(model, data: Path, unshared, *, limit: int, batch_size: int = 32, seed: int = 0) -> dict:
    """MLM loss and token accuracy on the first ``limit`` held-out sequences, masks fixed by ``seed``
    (token masking): over all predicted tokens, and over those whose row was not shared (``unshared``:
    a bool per vocabulary id, True where the row was composed by fvt / drawn by random)."""
    import numpy as np
    import torch

    from biotok_train.pretrain.masking import mask_tokens
    from biotok_train.pretrain.packed import PackedData

    packed = PackedData(data)
    one_type = int(getattr(model.config, "type_vocab_size", 2)) < 2
    sums = {"all": [0.0, 0, 0], "unshared": [0.0, 0, 0], "shared": [0.0, 0, 0]}  # loss, correct, count
    model.eval()
    with torch.no_grad():
        n = min(limit, len(packed))
        for start in range(0, n, batch_size):
            idx = np.arange(start, min(start + batch_size, n))
            batch = packed.batch(idx, sop=False, seed=seed)
            g = torch.Generator().manual_seed(seed * 7919 + start)
            m = mask_tokens(batch.input_ids, batch.word_starts, batch.special, mask_id=packed.mask_id,
                            vocab_size=packed.vocab_size, prob=0.15, wwm=False, mask_frac=0.8,
                            random_frac=0.1, generator=g)
            types = torch.zeros_like(batch.token_type_ids) if one_type else batch.token_type_ids
            logits = model(input_ids=m.input_ids, attention_mask=batch.attention_mask,
                           token_type_ids=types).logits
            sel = m.labels != -100
            y = m.labels[sel]
            lg = logits[sel].float()
            losses = torch.nn.functional.cross_entropy(lg, y, reduction="none")
            right = lg.argmax(-1) == y
            is_new = unshared[y]
            for key, keep in (("all", torch.ones_like(is_new)), ("unshared", is_new), ("shared", ~is_new)):
                sums[key][0] += float(losses[keep].sum())
                sums[key][1] += int(right[keep].sum())
                sums[key][2] += int(keep.sum())
    out = {}
    for key, (loss, right, count) in sums.items():
        suffix = "" if key == "all" else f"_{key}"
        out[f"heldout_loss{suffix}"] = loss / count if count else None
        out[f"token_acc{suffix}"] = right / count if count else None
        out[f"targets{suffix}"] = count
    return out


def score(model_dir: Path, heldout_data: Path, samples, unshared, limit: int) -> dict:
    from biotok_train.evaluate import masked_word_accuracy
    from biotok_train.hf_models import load_mlm

    model, tok = load_mlm(model_dir)
    acc = masked_word_accuracy(model, tok, samples, ks=(1,), name=str(model_dir))
    return {**heldout_loss(model, heldout_data, unshared, limit=limit), "top1": acc.accuracy[1],
            "n_words": acc.n_words}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-steps", type=int, default=800)
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--eval-at", default="0,10,25,50,100,150,200,250")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--n-words", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--heldout-sequences", type=int, default=256, help="the first N held-out sequences")
    ap.add_argument("--quick", action="store_true", help="a few steps, written to benchmarks/.data only")
    args = ap.parse_args(argv)
    if args.quick:
        args.base_steps, args.steps, args.eval_at, args.n_words = 4, 4, "0,2,4", 40
    require_data()
    import torch

    torch.set_num_threads(args.threads)
    from biotok.config import TrainConfig
    from biotok.train import train_tokenizer
    from biotok_train.config import OptimConfig, PretrainConfig
    from biotok_train.evaluate import sample_words
    from biotok_train.pretrain.loop import pretrain
    from biotok_train.config import PrepareConfig
    from biotok_train.pretrain.prepare import prepare
    from biotok_train.config import TransferConfig
    from biotok_train.transfer import transfer_to

    t0, c0 = time.perf_counter(), time.process_time()
    timings: dict[str, float] = {}
    WORK.mkdir(parents=True, exist_ok=True)
    tag = "quick" if args.quick else "full"
    run_dir = WORK / tag
    general = general_text()
    train_txt, held_txt = clinical_split()

    # the in-domain vocabulary and the three prepared data sets (cached)
    tok_dir = WORK / f"tok-clinical-{args.vocab_size}"
    if not tok_dir.is_dir():
        train_tokenizer([train_txt], TrainConfig(algo="spm-unigram", vocab_size=args.vocab_size, seed=args.seed), tok_dir)
    data = {}
    for name, corpus, tok in (("general", general, CAMEMBERTA), ("clinical", train_txt, tok_dir),
                              ("heldout", held_txt, tok_dir)):
        d = WORK / f"data-{name}-128"
        if not (d / "meta.json").is_file():
            prepare([str(corpus)], str(tok), PrepareConfig(seq_len=128), d, force=True, progress=False)
        data[name] = d
    timings["inputs_s"] = time.perf_counter() - t0

    # 1. the general model
    t = time.perf_counter()
    base = run_dir / "general"
    base_cfg = PretrainConfig(size="tiny", steps=args.base_steps, batch_size=args.batch_size,
                              optim=OptimConfig(lr=1e-3, warmup=0.06), seed=args.seed, device="cpu", log_every=25)
    if not (base / "biotok_pretrain.json").is_file() or \
            json.loads((base / "biotok_pretrain.json").read_text())["step"] != args.base_steps:
        shutil.rmtree(base, ignore_errors=True)
        pretrain(data["general"], base_cfg, base, progress=False)
    timings["general_s"] = time.perf_counter() - t

    # 2-3. transfer, continue, score
    samples = sample_words((l for l in held_txt.read_text(encoding="utf-8").splitlines() if l.strip()),
                           args.n_words, args.seed)
    eval_at = sorted({int(x) for x in args.eval_at.split(",")} | {args.steps})
    arms: dict[str, dict] = {}
    for method in ("fvt", "random"):
        t = time.perf_counter()
        start = run_dir / f"transfer-{method}"
        r = transfer_to(base, tok_dir, start, TransferConfig(method=method, seed=args.seed), force=True)
        unshared = torch.tensor([k in ("composed", "random") for k in r.plan.kinds])
        cfg = PretrainConfig(steps=args.steps, batch_size=args.batch_size, optim=OptimConfig(lr=1e-3, warmup=0.06),
                             seed=args.seed, device="cpu", log_every=5, init_from=str(start))
        cont = run_dir / f"continued-{method}"
        shutil.rmtree(cont, ignore_errors=True)
        curve = []
        for k in eval_at:
            if k > 0:
                pretrain(data["clinical"], cfg, cont, resume=(cont / "checkpoint").is_dir(), progress=False,
                         stop_after=k)
            s = score(start if k == 0 else cont, data["heldout"], samples, unshared, args.heldout_sequences)
            curve.append({"step": k, **s})
            print(f"{method:6s} step {k:4d}: held-out loss {s['heldout_loss']:.3f} (unshared rows "
                  f"{s['heldout_loss_unshared']:.3f}, shared {s['heldout_loss_shared']:.3f})  token acc "
                  f"{s['token_acc']:.3f}  word top-1 {s['top1']:.3f}", flush=True)
        train_losses = [json.loads(l) for l in (cont / "metrics.jsonl").read_text().splitlines() if l.strip()]
        arms[method] = {"counts": r.counts, "curve": curve,
                        "train_loss": [{"step": row["step"], "loss": row["loss"]} for row in train_losses],
                        "seconds": time.perf_counter() - t}
    timings["total_s"] = time.perf_counter() - t0
    timings["cpu_s"] = time.process_time() - c0  # this process, all threads (inputs cached: not counted)

    result = {
        "benchmark": "transfer_cpu",
        "command": "python -m benchmarks.experiments.transfer_cpu" + (" --quick" if args.quick else ""),
        "args": vars(args),
        "general": {"data": "WMT biomedical abstracts, fr side (medline, scielo, edp)",
                    "tokenizer": "camemberta-base", "config": base_cfg.to_dict(),
                    "final_train_loss": json.loads((base / "metrics.jsonl").read_text().splitlines()[-1])["loss"]},
        "clinical": {"data": "E3C layer 3 PAMJ clinical cases, 90 % of documents (sha1(id) % 10 != 0)",
                     "heldout": "the other 10 %", "tokenizer": f"biotok spm-unigram {args.vocab_size}, cased",
                     "heldout_sequences": min(args.heldout_sequences,
                                             json.loads((data["heldout"] / "meta.json").read_text())["num_sequences"]),
                     "heldout_words": arms["fvt"]["curve"][0]["n_words"]},
        "arms": arms,
        "timings": timings,
        "machine": machine(),
    }
    out = OUT if not args.quick else run_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    plot(arms, out / "curves.png")
    print(f"wrote {out / 'results.json'} and {out / 'curves.png'} in {timings['total_s'] / 60:.1f} min")
    return 0


def plot(arms: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    panels = (("heldout_loss", 1, "held-out MLM loss", "Held-out MLM loss, all targets"),
              ("heldout_loss_unshared", 1, "held-out MLM loss", "Targets whose row was composed / random"),
              ("top1", 100, "whole-word top-1 (%)", "Masked-word top-1"))
    for ax, (key, scale, ylabel, title) in zip(axes, panels):
        for method, style in (("fvt", "-o"), ("random", "--s")):
            curve = arms[method]["curve"]
            ax.plot([p["step"] for p in curve], [scale * p[key] for p in curve], style, label=method, markersize=4)
        ax.set(xlabel="continued-pretraining steps", ylabel=ylabel, title=title)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
