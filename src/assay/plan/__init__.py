"""The trial plan: sample × target × repetition, with stable trial ids."""

from assay.plan._plan import (
    SHARD_REASON,
    Plan,
    Shard,
    Trial,
    parse_shard,
    plan,
    sample_order,
    trial_id,
)

__all__ = [
    "SHARD_REASON",
    "Plan",
    "Shard",
    "Trial",
    "parse_shard",
    "plan",
    "sample_order",
    "trial_id",
]
