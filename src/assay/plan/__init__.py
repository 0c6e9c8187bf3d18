"""The trial plan: sample × target × repetition, with stable trial ids."""

from assay.plan._plan import Plan, Trial, plan, trial_id

__all__ = ["Plan", "Trial", "plan", "trial_id"]
