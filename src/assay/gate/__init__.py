"""The release gate: policies applied to metrics, with evidence checked first."""

from assay.gate._decide import GateDecision, GateStatus, TargetDecision, decide

__all__ = ["GateDecision", "GateStatus", "TargetDecision", "decide"]
