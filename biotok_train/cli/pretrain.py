"""``biotok-train prepare | mlm | electra | plot``: a thin layer over prepare, the loop and plot.

Option defaults are the fields of :class:`~biotok_train.config.PrepareConfig` and
:class:`~biotok_train.config.PretrainConfig` (its ``optim``: :class:`~biotok_train.config.OptimConfig`);
the configs check the values. torch is imported inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

import click

from biotok.cli.options import default_of, field_option, force_option, progress_lines_option, progress_option
from biotok.cli.push import push_and_say, push_to_hub_option
from biotok_train.cli.options import report_to_option, stack
from biotok_train.config import (
    COMPILE_MODES, OPTIMIZERS, SCHEDULES, SIZES, OptimConfig, PrepareConfig, PretrainConfig,
)

_P = PretrainConfig()  # the defaults, its optimizer's included (lr: None, the run's default)
_OPTIM_OPTIONS = {"optim": "name", "lr": "lr", "warmup": "warmup", "schedule": "schedule",
                  "weight_decay": "weight_decay"}  # option -> OptimConfig field


def _d(name: str):
    return default_of(PretrainConfig, name)


train_options = stack(
    click.argument("data", type=click.Path(path_type=str)),
    click.option("--size", default=_d("size"), show_default=True, help=f"{' | '.join(SIZES['bert'])}."),
    click.option("--wwm/--no-wwm", default=_d("wwm"), show_default=True,
                 help="Whole-word masking (from the word starts recorded by prepare)."),
    click.option("--optim", default=_P.optim.name, show_default=True, help=f"{' | '.join(OPTIMIZERS)}."),
    click.option("--steps", type=int, default=_d("steps"), show_default=True, help="Optimizer steps."),
    click.option("--batch-size", type=int, default=_d("batch_size"), show_default=True,
                 help="Sequences per device per micro-batch."),
    click.option("--batch-tokens", type=int, default=_d("batch_tokens"), show_default=True, metavar="N",
                 help="The micro-batch in tokens instead (> 0: --batch-size = N // the data's sequence length)."),
    click.option("--grad-accum", type=int, default=_d("grad_accum"), show_default=True,
                 help="Micro-batches per optimizer step."),
    click.option("--lr", type=float, default=default_of(OptimConfig, "lr"),
                 help="Peak learning rate [5e-4; ELECTRA-base 2e-4]."),
    click.option("--warmup", type=float, default=_P.optim.warmup, show_default=True,
                 help="Warm-up: a fraction of the steps (< 1) or a number of steps."),
    click.option("--schedule", default=_P.optim.schedule, show_default=True, help=f"{' | '.join(SCHEDULES)} decay."),
    click.option("--mask-prob", type=float, default=_d("mask_prob"), show_default=True),
    click.option("--weight-decay", type=float, default=_P.optim.weight_decay, show_default=True,
                 help="Not applied to biases and LayerNorm."),
    click.option("--seed", type=int, default=_d("seed"), show_default=True),
    click.option("--out", "out", type=click.Path(path_type=str), default=None,
                 help="Run directory [runs/<objective>-<size>]."),
    click.option("--resume", is_flag=True, help="Continue the run saved in --out."),
    click.option("--compile/--no-compile", "compile", default=None,
                 help="torch.compile the training step [auto: on CUDA for a fresh model, off on CPU, where "
                      "inductor compiles for minutes]. A failure is one error line: rerun with --no-compile."),
    click.option("--compile-mode", type=click.Choice(COMPILE_MODES), default=_d("compile_mode"), show_default=True,
                 help="torch.compile mode: reduce-overhead replays the step as CUDA graphs (static shapes: packed "
                      "rows, bucketed masked positions); auto: reduce-overhead for a BERT tiny/small on one GPU "
                      "(what the ablation uses), else default."),
    click.option("--bf16/--no-bf16", default=_d("bf16"), show_default=True,
                 help="bf16 autocast where supported: CUDA, or a CPU with bf16 matrix units (amx_bf16, "
                      "avx512_bf16); elsewhere fp32."),
    click.option("--log-every", type=int, default=_d("log_every"), show_default=True, help="Steps per metrics row."),
    click.option("--save-every", type=int, default=_d("save_every"), show_default=True,
                 help="Checkpoint every N steps (0: at the end and on Ctrl-C)."),
    click.option("--peak-tflops", type=float, default=_d("peak_tflops"),
                 help="Device peak for MFU (default: known GPUs)."),
    click.option("--tokenizer", type=click.Path(path_type=str), default=None,
                 help="Check that DATA was prepared with this tokenizer."),
    click.option("--init-from", type=click.Path(path_type=str), default=_d("init_from"), metavar="MODEL_DIR",
                 help="Continue this Hugging Face checkpoint (its architecture and size; DATA must be "
                      "prepared with its tokenizer) instead of a fresh model."),
    click.option("--heldout", type=click.Path(path_type=str), default=_d("heldout"), metavar="DATA",
                 help="Held-out data prepared with the same tokenizer: at the end, the [MASK] loss and top-1 there "
                      "beside the unigram floor and the most-frequent-piece top-1 (also in OUT/heldout.json)."),
    click.option("--device", default=_d("device"), help="cuda, cuda:1, cpu [cuda when available]."),
    report_to_option,
    force_option,
    progress_lines_option,
    push_to_hub_option,
)


def _run(data: str, out: str | None, resume: bool, tokenizer: str | None, progress: bool, force: bool,
         push_to_hub: str | None, **options) -> None:
    """Check the data (and tokenizer), pretrain, print one summary line."""
    from biotok_train.pretrain.loop import pretrain
    from biotok_train.pretrain.prepare import check_tokenizer

    optim = OptimConfig(**{field: options.pop(opt) for opt, field in _OPTIM_OPTIONS.items()})
    config = PretrainConfig(**options, optim=optim)
    if tokenizer:
        check_tokenizer(data, tokenizer)
    out = out or f"runs/{config.objective if config.objective == 'electra' else config.arch}-{config.size}"
    r = pretrain(data, config, out, resume=resume, progress=progress, force=force)
    from biotok_train.pretrain.heldout import describe

    mfu = f"{100 * r.mfu:.1f} %" if r.mfu is not None else "n/a"
    if r.heldout is not None:
        quality = describe(r.heldout)
    else:  # a training loss of the last logged steps, not a single step's (and not held-out)
        quality = (f"training loss{'es' if config.objective == 'electra' else ''} of the last "
                   f"{r.metrics.get('steps_averaged', 1)} steps{':' if config.objective == 'electra' else ''} "
                   f"{_loss_words(r.metrics, config)} "
                   "(not held-out: pass --heldout DATA for the [MASK] loss beside its floors)")
    click.echo(f"{r.out}: {r.steps} steps, {quality}, "
               f"{r.tokens_per_second:,.0f} tokens/s, MFU {mfu}, {r.num_params / 1e6:.1f} M parameters")
    push_and_say(r.out, push_to_hub)


def _loss_words(metrics: dict, config: PretrainConfig) -> str:
    """The training loss as words: ELECTRA's is two losses, each named, and their weighted total."""
    loss = metrics.get("loss", 0.0)
    if config.objective != "electra" or "mlm_loss" not in metrics:
        return f"{loss:.3f}"
    return (f"generator MLM loss {metrics['mlm_loss']:.3f} + {config.rtd_weight:g} x discriminator RTD loss "
            f"{metrics.get('rtd_loss', 0.0):.3f} = weighted total {loss:.3f}")


@click.command("prepare")
@click.argument("corpus", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--tokenizer", "-t", required=True, help="Tokenizer directory, file or alias.")
@click.option("--seq-len", type=int, default=default_of(PrepareConfig, "seq_len"), show_default=True,
              help="Sequence length (128 or 512).")
@click.option("--out", required=True, type=click.Path(path_type=str), help="Data directory to write.")
@field_option
@force_option
@progress_option
@click.option("--sample-alpha", type=float, default=default_of(PrepareConfig, "sample_alpha"), metavar="A",
              help="Subword regularization: sample segmentations (Unigram: smoothing exponent, e.g. 0.1; "
              "BPE: dropout probability, e.g. 0.1) instead of the tokenizer's single best one.")
@click.option("--copies", type=int, default=default_of(PrepareConfig, "copies"), show_default=True,
              help="With --sample-alpha: K differently segmented copies of the corpus.")
@click.option("--seed", type=int, default=default_of(PrepareConfig, "seed"), show_default=True,
              help="Seed of the sampled segmentations.")
@click.option("--workers", type=int, default=default_of(PrepareConfig, "workers"), show_default=True,
              help="Tokenizing processes: 0 every core this process may use (one for a corpus under 4 MB), "
              "1 one process. The data is the same bytes whatever the number.")
def prepare_cmd(corpus, tokenizer, out, force, progress, **options):
    """Tokenize CORPUS once into packed, memory-mapped pretraining data.

    \b
    Example:  biotok-train prepare corpus.txt --tokenizer tok/ --seq-len 128 --out data/
    Subword regularization, 4 sampled segmentations:
              biotok-train prepare corpus.txt -t tok/ --sample-alpha 0.1 --copies 4 --out data/
    """
    from biotok_train.pretrain.prepare import prepare

    p = prepare(list(corpus), tokenizer, PrepareConfig(**options), out, force=force, progress=progress)
    click.echo(f"{p.path}: {p.num_tokens:,} tokens, {p.num_sequences:,} sequences of {p.seq_len} "
               f"({p.dtype}), tokenizer sha256 {p.fingerprint[:12]}")


@click.command("mlm")
@click.option("--arch", default=_d("arch"), show_default=True,
              help="bert: MLM; albert: MLM + sentence-order prediction, shared layers.")
@train_options
def mlm_cmd(**kw):
    """Pretrain BERT (MLM, 80/10/10 or whole-word) or ALBERT (MLM + SOP) on DATA.

    \b
    Example:  biotok-train mlm data/ --size tiny --steps 300 --wwm --out runs/bert-tiny
    Continue: biotok-train mlm data/ --init-from runs/transferred --steps 300 --out runs/continued
    """
    _run(objective="mlm", **kw)


@click.command("electra")
@train_options
def electra_cmd(**kw):
    """Pretrain ELECTRA (generator 1/3 + discriminator, replaced-token detection) on DATA.

    \b
    Example:  biotok-train electra data/ --size small --steps 10000 --out runs/electra-small
    """
    _run(objective="electra", **kw)


@click.command("plot")
@click.argument("run_dir", type=click.Path(path_type=str))
@click.option("--out", type=click.Path(path_type=str), default=None, help="PNG path [RUN_DIR/loss.png].")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
def plot_cmd(run_dir, out, force):
    """Draw the loss curve of RUN_DIR/metrics.jsonl as a PNG.

    \b
    Example:  biotok-train plot runs/bert-tiny
    """
    from biotok_train.pretrain.plot import plot_run

    click.echo(str(plot_run(run_dir, out, force)))


COMMANDS = (prepare_cmd, mlm_cmd, electra_cmd, plot_cmd)
