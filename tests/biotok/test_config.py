"""biotok.config: every number of a config is checked at the door, with a message that names its real bounds."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from biotok.config import check_numbers
from biotok.errors import ConfigError


@dataclass
class Knobs:
    lr: float = 1e-3
    steps: int = 10
    sizes: tuple = (1, 2)


def test_a_float_without_its_own_range_need_only_be_finite() -> None:
    """A float such as 1e30 was refused 'between -9223372036854775807 and 9223372036854775807',
    bounds that belong to 64-bit integers, not to floats."""
    check_numbers(Knobs(lr=1e30))
    with pytest.raises(ConfigError, match="--lr must be a finite number"):
        check_numbers(Knobs(lr=float("inf")))


def test_an_integer_must_fit_64_bits_and_its_own_range() -> None:
    with pytest.raises(ConfigError, match="--steps .* between"):
        check_numbers(Knobs(steps=2**70))
    with pytest.raises(ConfigError, match="--sizes 3 is out of range: it must be between 1 and 2"):
        check_numbers(Knobs(sizes=(1, 3)), {"sizes": (1, 2)})
    with pytest.raises(ConfigError, match="--lr 5.0 is out of range: it must be at most 1"):
        check_numbers(Knobs(lr=5.0), {"lr": (None, 1)})
