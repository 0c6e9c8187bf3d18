"""One line of the calibration table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """A measured property of one method in one setting, against what it promises.

    ``check`` names the method and the property (e.g. "gate interval coverage"),
    ``setting`` the grid point or the worst one ("n=50, p=0.9, ICC=0.6"), ``measured`` the
    simulated value, ``promised`` the bound it must meet ("≥ 0.93"), ``runs`` how many
    simulated runs (or "exact" for enumeration) it rests on.
    """

    check: str
    setting: str
    measured: float
    promised: str
    runs: str
