"""The core stays light: importing biotok (and its CLI) never imports torch or transformers."""

from __future__ import annotations

import subprocess
import sys


def test_import_biotok_does_not_import_torch():
    code = (
        "import sys, biotok, biotok.cli, biotok.train, biotok.normalize, biotok.tokenizer;"
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_api():
    import biotok

    assert callable(biotok.normalize) and callable(biotok.train_tokenizer) and callable(biotok.load)
    assert biotok.normalize("a,b") == "a , b"


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_biotok_train_help_imports_neither_torch_nor_transformers():
    """`biotok-train --help` and `biotok-train fill-mask --help` start without torch (seconds of imports)."""
    for argv in (["--help"], ["fill-mask", "--help"]):
        loaded = _modules_after(f"from biotok_train.cli import main\nmain({argv!r}, standalone_mode=False)")
        assert "biotok_train.cli.eval" in loaded
        assert not {"torch", "transformers"} & loaded, argv


def test_a_command_imports_only_its_own_module():
    """fill-mask does not import the ablation engine, the probe or the pretraining commands."""
    loaded = _modules_after("from biotok_train.cli import main\nmain.get_command(None, 'fill-mask')")
    assert "biotok_train.cli.eval" in loaded
    assert not {"biotok_train.ablate", "biotok_train.cli.ablate", "biotok_train.cli.probe",
                "biotok_train.cli.pretrain", "torch"} & loaded


def test_every_command_is_found_where_the_group_says():
    import importlib

    from biotok_train.cli import MODULES, WHERE, main

    for name, module in WHERE.items():
        assert name in {c.name for c in importlib.import_module(f"biotok_train.cli.{module}").COMMANDS}
    assert set(WHERE) <= set(main.commands)
    assert all(main.get_command(None, name) is main.commands[name] for name in main.commands)
    assert set(MODULES) == set(WHERE.values())
    # loaded late, each still went through BiotokGroup.add_command: -h, and NaN refused at the door
    for cmd in main.commands.values():
        assert getattr(cmd.parse_args, "_checks_numbers", False) and "-h" in cmd.context_settings["help_option_names"]
