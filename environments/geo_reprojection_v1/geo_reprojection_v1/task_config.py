"""The task's scoring knobs (``--env.taskset.task.*``; ``--taskset.task.*`` in vf-replay).

Each is read at scoring only, so a saved run can be re-scored under other values
(`piv_core.tasksets.rescoring`). ``graded``, ``graded_halflife`` and ``graded_per_coordinate`` also enter
the prompt of a task with several parts or a guided one (its scoring line names them) when the
task is generated; ``tolerance_scale`` never does: each part's tolerance is what its prompt
states, and the taskset's own tolerance knobs decide that.
"""

from __future__ import annotations

import math
from typing import Annotated

import verifiers.v1 as vf
from piv_core.tasksets.knobs import number
from pydantic import field_validator, model_validator


class GeoTaskConfig(vf.TaskConfig):
    graded: bool = False
    """Fold the error into the reward as 1 / (1 + (error / (tolerance * graded_halflife))^2)."""
    graded_halflife: Annotated[float, number()] = 1.0
    """The error, in tolerance units, at which the graded reward is 0.5."""
    graded_per_coordinate: bool = False
    """With ``graded``: a forward projection's easting and northing are scored one by one, each on
    its own error, and the part scores their mean (partial credit for one right coordinate)."""
    tolerance_scale: Annotated[float | None, number()] = None
    """Scoring only: score every part against the tolerance its prompt states times this (e.g. 2 to
    re-score a run at twice its tolerances: ``vf-replay <run> --taskset.task.tolerance-scale 2``);
    unset (the default), against the stated tolerance. The prompt is not changed; the taskset's
    ``tolerance_scale`` is what the prompts state."""

    @field_validator("graded_halflife", "tolerance_scale")
    @classmethod
    def _positive(cls, value: float | None, info) -> float | None:
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"{info.field_name} must be a positive number, got {value}")
        return value

    @model_validator(mode="after")
    def _per_coordinate_is_graded(self) -> GeoTaskConfig:
        if self.graded_per_coordinate and not self.graded:
            raise ValueError("graded_per_coordinate needs graded: set graded to true, or leave it off")
        return self

    def tolerance(self, stated: float) -> float:
        """The tolerance a part whose prompt states `stated` is scored against, to 12 digits."""
        scale = self.tolerance_scale
        return stated if scale is None or scale == 1.0 else float(f"{stated * scale:.12g}")
