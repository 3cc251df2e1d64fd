"""The ``biotok-train ablate`` options and the way back from an :class:`AblationConfig` to them.

The options are declared once, here (defaults from :class:`~biotok_train.ablate.config.AblationConfig`),
in the order the command line is written; :mod:`biotok_train.cli.ablate` puts them on the command.
:func:`ablation_config` turns their values into the config and :func:`command_line` spells a
config as the command that makes it, walking the same options (so a new option is written in the
report's command line without a second spelling). Nothing here imports the runner or the CLI: the
report imports :func:`command_line`, the CLI imports the runner.
"""

from __future__ import annotations

import functools
import os
import shlex
from pathlib import Path

import click

from biotok.cli.options import GreedyOption, data_dir_option, default_of, field_option, quiet_option
from biotok_train.tasks.options import USER_TASK_OPTIONS, user_task_files
from biotok_train.config import COMPILE_MODES, PAIRS, TRANSFER_METHODS, FinetuneConfig, OptimConfig
from biotok_train.ablate.config import ENGINES, AblationConfig, EngineConfig

# Options that set a field of the fine-tuning recipe (AblationConfig.finetuning.recipe), by field name
# (the lr is a field of its optimizer).
FINETUNE_OPTIONS = {"ft_epochs": "epochs", "ft_batch_size": "batch_size", "ft_max_steps": "max_steps",
                    "train_fraction": "train_fraction"}
# Written in every command line, even at their default: they state what is compared, on what budget.
ALWAYS_WRITTEN = ("tokenizers", "corpus", "tasks", "budget", "batch_size", "seq_len", "lr", "pretrain_seeds", "seeds", "out")


_ab = AblationConfig.flat_default  # the options are the config's flat names (ablate.config.FLAT)
_ft, _eng = (functools.partial(default_of, c) for c in (FinetuneConfig, EngineConfig))
FT_LR = FinetuneConfig().optim.lr  # the fine-tuning lr when none is given


def _comma_list(ctx, param, value) -> tuple[str, ...]:
    """--sizes tiny,small or --sizes tiny small (or repeated)."""
    return tuple(x for v in value for x in str(v).split(",") if x)


def _int_list(ctx, param, value) -> tuple[int, ...]:
    """--curve 250,500 or --curve 250 500."""
    try:
        return tuple(int(x) for x in _comma_list(ctx, param, value))
    except ValueError:
        raise click.BadParameter(f"{','.join(map(str, value))} is not a list of steps") from None


def _curve_tasks(ctx, param, value) -> tuple[str, ...] | None:
    """--curve-tasks e3c,quaero; 'none' (or ''): no fine-tuning on the curve; not given: the first task."""
    if value is None:
        return None
    return tuple(x for x in str(value).split(",") if x and x != "none")


#: every option of ``ablate``, in command-line order
OPTIONS = (
    click.option("--tokenizers", "tokenizers", cls=GreedyOption, multiple=True, required=True,
                 help="Tokenizer dirs/files/aliases; the first is the reference (repeat, or several after one "
                      "option)."),
    click.option("--corpus", "corpus", cls=GreedyOption, multiple=True, required=True,
                 help="Pretraining corpus file(s)."),
    field_option,
    click.option("--task", "tasks", cls=GreedyOption, multiple=True, metavar="NAME|PATH|NAME=PATH",
                 help="Fine-tuning task: a registered dataset name, a BIO path, or NAME=PATH (your files, shown as NAME "
                      f"on the page; the name keys nothing) (repeatable) [default: {', '.join(_ab('tasks'))}, unless "
                      "--task-type]."),
    *USER_TASK_OPTIONS,
    data_dir_option,
    click.option("--sizes", "--size", "sizes", cls=GreedyOption, multiple=True, default=_ab("sizes"), show_default=True,
                 callback=_comma_list, help="Model sizes, e.g. tiny,small (Kendall τ of the rankings across them)."),
    click.option("--base", type=click.Path(path_type=str), default=None, metavar="MODEL_DIR",
                 help="A Hugging Face masked LM with its tokenizer: continual continues it, transfer moves it to each "
                      "tokenizer, scratch takes its architecture."),
    click.option("--arms", "arms", cls=GreedyOption, multiple=True, default=_ab("arms"), show_default=True,
                 callback=_comma_list,
                 help="How each model starts: scratch, continual, transfer, extend, general (comma list; all but "
                      "scratch need --base). extend: the base's vocabulary plus --extend-add pieces of the corpus "
                      "(biotok extend), their rows by FVT."),
    click.option("--transfer-methods", "--transfer-method", "transfer_methods", cls=GreedyOption, multiple=True,
                 default=_ab("transfer_methods"), show_default=True, callback=_comma_list,
                 help=f"How the transfer arms build the rows of new pieces ({', '.join(TRANSFER_METHODS)}; several: "
                      "one arm each, transfer-METHOD.T)."),
    click.option("--extend-add", type=int, default=_ab("extend_add"), show_default=True, metavar="K",
                 help="The extend arm: pieces added to the base's vocabulary, chosen by their savings on the "
                      "pretraining text."),
    click.option("--budget", type=int, default=_ab("budget"), show_default=True,
                 help="Pretraining steps of every arm."),
    click.option("--curve", "curve", cls=GreedyOption, multiple=True, default=_ab("curve"),
                 callback=_int_list, metavar="STEPS",
                 help="Save every pretrained arm at these steps, score each on the held-out [MASK] positions (and "
                      "where it starts) and fine-tune it on the --curve-tasks: the learning curve, with a paired "
                      "interval per step."),
    click.option("--curve-tasks", "curve_tasks", default=None, callback=_curve_tasks, metavar="TASKS",
                 help="Tasks fine-tuned at each --curve step (comma list of --task values; default: the first task). "
                      "'none': the curve is the held-out [MASK] loss only (it is measured at every step anyway), so "
                      "a plateau search costs only pretraining and evaluation."),
    click.option("--batch-size", type=int, default=_ab("batch_size"), show_default=True, help="Pretraining batch."),
    click.option("--seq-len", type=int, default=_ab("seq_len"), show_default=True, help="Pretraining sequence length."),
    click.option("--lr", type=float, default=_ab("lr"), show_default=True, help="Pretraining lr."),
    click.option("--pretrain-seeds", "pretrain_seeds", cls=GreedyOption, multiple=True, type=int,
                 default=_ab("pretrain_seeds"), show_default=True, help="Pretraining seeds (one model each)."),
    click.option("--seeds", "seeds", cls=GreedyOption, multiple=True, type=int, default=_ab("seeds"), show_default=True,
                 help="Fine-tuning seeds (one run per pretraining seed and task each)."),
    click.option("--ft-epochs", "--ner-epochs", "ft_epochs", type=int, default=_ft("epochs"), show_default=True,
                 help="Fine-tuning epochs."),
    click.option("--ft-lr", "--ner-lr", "ft_lr", type=float, default=FT_LR, show_default=True,
                 help="Fine-tuning peak lr."),
    click.option("--ft-batch-size", type=int, default=_ft("batch_size"), show_default=True, help="Fine-tuning batch."),
    click.option("--ft-max-steps", "--ner-max-steps", "ft_max_steps", type=int, default=_ft("max_steps"),
                 show_default=True, help="Cap on fine-tuning steps (0: none)."),
    click.option("--train-fraction", type=float, default=_ft("train_fraction"), show_default=True,
                 help="Share of each task's training examples every fine-tuning run uses (a fixed subset, the same "
                      "for every arm and seed)."),
    click.option("--n-words", type=int, default=_ab("n_words"), show_default=True, help="eval-mlm words."),
    click.option("--heldout-every", type=int, default=_ab("heldout_every"), show_default=True,
                 help="Hold out each Nth line of the corpus (fertility and masked words are measured on them)."),
    click.option("--n-resamples", type=int, default=_ab("n_resamples"), show_default=True, help="Bootstrap resamples."),
    click.option("--confidence", type=float, default=_ab("confidence"), show_default=True,
                 help="Level of the bootstrap intervals."),
    click.option("--no-floor", is_flag=True, help="Skip the random-init floors."),
    click.option("--pairs", type=click.Choice(PAIRS), default=_ab("pairs"), show_default=True,
                 help="Which arms the report compares: 'reference' (each with the first arm) or 'all' (every pair, "
                      "in one pass). Analysis only: no job changes."),
    click.option("--probe", type=int, default=_ab("probe"), show_default=True, metavar="STEPS",
                 help="Also a causal-LM probe of each vocabulary (biotok-train probe): bits per character of the "
                      "held-out lines after STEPS steps per pretraining seed, and whether it ranks the vocabularies as "
                      "the tasks do (0: no probe)."),
    click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True),
    quiet_option,
)


#: who runs the jobs: never part of the recipe, nor of the report's command line
ENGINE_OPTIONS = (
    click.option("--engine", type=click.Choice(ENGINES), default=_eng("engine"), show_default=True,
                 help="local: the jobs one after the other in this process; ray: Ray tasks, in parallel on a local "
                      "instance (--workers) or a running cluster (--address); processes: in parallel in --workers "
                      "processes of this machine, where Ray is not installed. The result is the same."),
    click.option("--workers", type=int, default=_eng("workers"), show_default=True,
                 help="local: torch threads; ray, processes: jobs at a time on this machine, one per CPU (0: all; "
                      "at most 1024)."),
    click.option("--gpus-per-job", type=float, default=_eng("gpus_per_job"), show_default=True,
                 help="ray, processes: the share of one GPU each fine-tuning job asks for, 0 < f <= 1 (0.5: two share "
                      "one GPU; 0: the CPUs)."),
    click.option("--address", default=_eng("address"), metavar="HOST:PORT",
                 help="ray: a running Ray cluster (HOST:PORT, ray://HOST:PORT, or 'auto': the one this node belongs "
                      "to) instead of a local instance; one that does not answer within seconds is refused."),
    click.option("--only", multiple=True, metavar="PATTERN",
                 help="Run just the jobs whose keys match PATTERN (repeatable; * spans slashes, e.g. "
                      "'finetune/small/tokA/p0/*') and the jobs they need: one piece of the grid for a short GPU slot. "
                      "The report is written once every job has a record."),
    click.option("--precision", default=None, metavar="DEVICE:bf16|fp32",
                 help="Key the models' jobs by another machine's arithmetic (cuda:bf16) to write the report here from "
                      "the records its pieces made; a job without such a record is refused, not run."),
    click.option("--compile/--no-compile", "compile", default=None,
                 help="torch.compile the pretrainings' training step [auto: on CUDA, off on CPU, where inductor "
                      "compiles for minutes], as biotok-train mlm. A failure is one error line: rerun with --no-compile."),
    click.option("--compile-mode", type=click.Choice(COMPILE_MODES), default=_eng("compile_mode"), show_default=True,
                 help="torch.compile mode of the pretrainings (biotok-train mlm --compile-mode; auto: reduce-overhead "
                      "for a BERT tiny/small on one GPU, else default)."),
    click.option("--force", is_flag=True,
                 help="Run this recipe in an OUT that holds another (or a damaged config.json): the jobs whose "
                      "inputs changed run again, the others are kept."),
)


def engine_config(options: dict) -> EngineConfig:
    """The :class:`EngineConfig` of ``ablate``'s option values (taken out of ``options``; --precision, which keys
    jobs, stays there for run_ablation)."""
    values = {k: options.pop(k) for k in ("engine", "workers", "gpus_per_job", "address", "only", "compile", "compile_mode")}
    return EngineConfig(**{**values, "only": tuple(values["only"])})


def ablate_options(f):
    """Put every ``ablate`` option on the command function ``f``."""
    for option in reversed(OPTIONS):
        f = option(f)
    return f


def _params() -> list[click.Parameter]:
    """The options as click parameters, in command-line order."""
    return click.command("ablate")(ablate_options(lambda **options: None)).params


def ablation_config(no_floor: bool, data_dir, ft_lr: float, task_type=None, train_file=None, dev_file=None,
                    test_file=None, **options) -> AblationConfig:
    """The config of ``ablate``'s option values (all but --out and --quiet): --task-type's files
    are one more task, after the --task ones (:func:`biotok_train.tasks.named.files_source`);
    neither given, the default task."""
    from biotok_train.tasks.named import files_source  # lazy: one use

    files = user_task_files(task_type, train_file, dev_file, test_file)
    tasks = tuple(options.pop("tasks", ()) or ())
    if files is not None:
        tasks += (files_source(task_type, *files),)
    options["tasks"] = tasks or _ab("tasks")
    finetune = FinetuneConfig(**{field: options.pop(opt) for opt, field in FINETUNE_OPTIONS.items()},
                              optim=OptimConfig(lr=ft_lr))
    values = {k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in options.items()}
    return AblationConfig.from_flat(**values, data_dir=str(data_dir) if data_dir else None, floor=not no_floor,
                                    finetune=finetune)


def option_values(cfg: AblationConfig, out: str | os.PathLike[str]) -> dict:
    """The inverse of :func:`ablation_config`: ``ablate``'s option values that give ``cfg``."""
    values = {k: v for k, v in cfg.flat().items() if k not in ("finetune", "floor")}
    recipe = cfg.finetuning.recipe
    values.update({opt: getattr(recipe, field) for opt, field in FINETUNE_OPTIONS.items()})
    values.update(_user_files(cfg.tasks))
    return {**values, "ft_lr": recipe.optim.lr, "no_floor": not cfg.statistics.floor, "out": str(out)}


def _user_files(tasks: tuple[str, ...]) -> dict:
    """--task and --task-type's values of ``tasks``: a last task of typed files (unnamed) is spelled
    by --task-type/--train/--dev/--test, as :func:`ablation_config` reads them back; any other stays a --task."""
    from biotok_train.tasks.named import parse_files, split_name  # lazy: one use

    none = {"task_type": None, "train_file": None, "dev_file": None, "test_file": None}
    last = parse_files(tasks[-1]) if tasks and split_name(tasks[-1])[0] is None else None
    if last is None:
        return none
    return {"tasks": tasks[:-1], "task_type": last[0], "train_file": last[1][0], "dev_file": last[1][1],
            "test_file": last[1][2]}


def _written(name: str, value, default, cfg: AblationConfig) -> bool:
    """Whether an option goes into the command line: when it differs from its default, or states the
    budget; with --base, --arms always and never --sizes (every arm has the base's architecture)."""
    if cfg.base.model is not None and name in ("sizes", "arms"):
        return name == "arms"
    if (name == "transfer_methods" and "transfer" not in cfg.arms) or (name == "extend_add" and "extend" not in cfg.arms):
        return False
    if name == "tasks" and not value:  # every task given by --task-type
        return False
    if name in ALWAYS_WRITTEN or (name == "sizes" and cfg.base.model is None):
        return True
    return value is not None and value is not False and value != default


def _spelled(param: click.Option, value) -> list[str]:
    """One option and its value(s) as ``ablate`` reads them back."""
    opt = param.opts[0]
    if param.is_flag:
        return [opt]
    if param.callback in (_comma_list, _int_list):
        return [opt, ",".join(map(str, value))]
    if param.callback is _curve_tasks:
        return [opt, ",".join(value) or "none"]
    values = value if param.multiple else (value,)
    return [opt, *(f"{v:g}" if isinstance(v, float) else str(v) for v in values)]


def command_line(cfg: AblationConfig, out: str | os.PathLike[str] = "OUT") -> str:
    """The ``biotok-train ablate`` command line of ``cfg``, walking the command's own options."""
    values = option_values(cfg, out)
    defaults = option_values(AblationConfig(tokenizers=("x",), corpus=()), out)
    params = _params()
    missing = set(values) - {p.name for p in params}
    if missing:  # a config field without an option could not be spelled: the command must grow one
        raise AssertionError(f"AblationConfig fields without an ablate option: {', '.join(sorted(missing))}")
    parts = ["biotok-train", "ablate"]
    for param in params:
        if param.name in values and _written(param.name, values[param.name], defaults[param.name], cfg):
            parts += _spelled(param, values[param.name])
    return " ".join(shlex.quote(p) for p in parts)
