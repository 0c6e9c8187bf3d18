"""The trial plan: sample × target × repetition, with stable trial ids."""

from assay.plan._plan import Plan, Trial, plan, sample_order, trial_id

__all__ = ["Plan", "Trial", "plan", "sample_order", "trial_id"]
