"""``biotok-train prepare | mlm | electra | plot``: a thin layer over prepare/loop/plot."""

from __future__ import annotations

import click

_SIZES = ("tiny", "small", "base")


def _train_options(f):
    """Options shared by ``mlm`` and ``electra``."""
    opts = [
        click.argument("data", type=click.Path(path_type=str)),
        click.option("--size", default="tiny", show_default=True, help="tiny | small | base."),
        click.option("--wwm/--no-wwm", default=False, show_default=True,
                     help="Whole-word masking (from the word starts recorded by prepare)."),
        click.option("--optim", type=click.Choice(["adamw", "lamb"]), default="adamw", show_default=True),
        click.option("--steps", type=int, default=1000, show_default=True, help="Optimizer steps."),
        click.option("--batch-size", type=int, default=32, show_default=True,
                     help="Sequences per device per micro-batch."),
        click.option("--grad-accum", type=int, default=1, show_default=True,
                     help="Micro-batches per optimizer step."),
        click.option("--lr", type=float, default=None, help="Peak learning rate [5e-4; ELECTRA-base 2e-4]."),
        click.option("--warmup", type=float, default=0.06, show_default=True,
                     help="Warm-up: a fraction of the steps (< 1) or a number of steps."),
        click.option("--schedule", type=click.Choice(["linear", "cosine"]), default="linear", show_default=True),
        click.option("--mask-prob", type=float, default=0.15, show_default=True),
        click.option("--weight-decay", type=float, default=0.01, show_default=True),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--out", "out", type=click.Path(path_type=str), default=None,
                     help="Run directory [runs/<objective>-<size>]."),
        click.option("--resume", is_flag=True, help="Continue the run saved in --out."),
        click.option("--compile", "compile_", is_flag=True, help="torch.compile the model."),
        click.option("--bf16/--no-bf16", default=True, show_default=True, help="bf16 autocast (CUDA only)."),
        click.option("--log-every", type=int, default=10, show_default=True),
        click.option("--save-every", type=int, default=0, show_default=True,
                     help="Checkpoint every N steps (0: at the end and on Ctrl-C)."),
        click.option("--peak-tflops", type=float, default=None, help="Device peak for MFU (default: known GPUs)."),
        click.option("--tokenizer", type=click.Path(path_type=str), default=None,
                     help="Check that DATA was prepared with this tokenizer."),
        click.option("--device", default=None, help="cuda, cuda:1, cpu [cuda when available]."),
        click.option("--no-progress", is_flag=True, help="No progress bar."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _run(objective: str, arch: str, data: str, out: str | None, kw: dict) -> None:
    from biotok_train.loop import PretrainConfig, pretrain
    from biotok_train.prepare import check_tokenizer, open_prepared

    open_prepared(data)  # missing/broken data: one line, before any model is built
    if kw["tokenizer"]:
        check_tokenizer(data, kw["tokenizer"])
    lr = kw["lr"] if kw["lr"] is not None else (2e-4 if objective == "electra" and kw["size"] == "base" else 5e-4)
    config = PretrainConfig(
        objective=objective, arch=arch, size=kw["size"], wwm=kw["wwm"], optim=kw["optim"],
        steps=kw["steps"], batch_size=kw["batch_size"], grad_accum=kw["grad_accum"], lr=lr,
        warmup=kw["warmup"], schedule=kw["schedule"], seed=kw["seed"], bf16=kw["bf16"],
        compile=kw["compile_"], mask_prob=kw["mask_prob"], weight_decay=kw["weight_decay"],
        log_every=kw["log_every"], save_every=kw["save_every"], peak_tflops=kw["peak_tflops"],
        device=kw["device"],
    )
    out = out or f"runs/{objective if objective == 'electra' else arch}-{kw['size']}"
    r = pretrain(data, config, out, resume=kw["resume"], progress=not kw["no_progress"])
    mfu = f"{100 * r.mfu:.1f} %" if r.mfu is not None else "n/a"
    first = f"{r.losses[0]:.3f} -> " if r.losses else ""
    click.echo(f"{r.out}: {r.steps} steps, loss {first}{r.final_loss:.3f}, "
               f"{r.tokens_per_second:,.0f} tokens/s, MFU {mfu}, {r.num_params / 1e6:.1f} M parameters")


def register(group: click.Group) -> None:
    """Add prepare, mlm, electra and plot to the ``biotok-train`` group."""

    @group.command("prepare")
    @click.argument("corpus", nargs=-1, required=True, type=click.Path(path_type=str))
    @click.option("--tokenizer", "-t", required=True, help="Tokenizer directory, file or alias.")
    @click.option("--seq-len", type=int, default=128, show_default=True, help="Sequence length (128 or 512).")
    @click.option("--out", required=True, type=click.Path(path_type=str), help="Data directory to write.")
    @click.option("--field", "field_name", default=None, metavar="NAME",
                  help="JSON field holding the text in .jsonl inputs (default: text).")
    @click.option("--force", is_flag=True, help="Overwrite --out.")
    @click.option("--no-progress", is_flag=True)
    def prepare_cmd(corpus, tokenizer, seq_len, out, field_name, force, no_progress):
        """Tokenize CORPUS once into packed, memory-mapped pretraining data."""
        from biotok_train.prepare import prepare

        p = prepare(list(corpus), tokenizer, seq_len, out, field_name=field_name, force=force,
                    progress=not no_progress)
        click.echo(f"{p.path}: {p.num_tokens:,} tokens, {p.num_sequences:,} sequences of {p.seq_len} "
                   f"({p.dtype}), tokenizer sha256 {p.fingerprint[:12]}")

    @group.command("mlm")
    @click.option("--arch", type=click.Choice(["bert", "albert"]), default="bert", show_default=True,
                  help="bert: MLM; albert: MLM + sentence-order prediction, shared layers.")
    @_train_options
    def mlm_cmd(arch, data, out, **kw):
        """Pretrain BERT (MLM, 80/10/10 or whole-word) or ALBERT (MLM + SOP) on DATA."""
        _run("mlm", arch, data, out, kw)

    @group.command("electra")
    @_train_options
    def electra_cmd(data, out, **kw):
        """Pretrain ELECTRA (generator 1/3 + discriminator, replaced-token detection) on DATA."""
        _run("electra", "bert", data, out, kw)

    @group.command("plot")
    @click.argument("run_dir", type=click.Path(path_type=str))
    @click.option("--out", type=click.Path(path_type=str), default=None, help="PNG path [RUN_DIR/loss.png].")
    def plot_cmd(run_dir, out):
        """Draw the loss curve of RUN_DIR/metrics.jsonl as a PNG."""
        from biotok_train.plot import plot_run

        click.echo(str(plot_run(run_dir, out)))
