"""Evidence: the event log, the artifact store, observation bundles and verification."""

import typing as _typing

from assay._import_path import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:  # the same names, eagerly, for type checkers and editors
    from assay.evidence._bundle import BUNDLE_SCHEMA, bundle_digest, decode_output, seal_bundle
    from assay.evidence._detached import DetachedRecorder, replay_detached
    from assay.evidence._index import BUNDLE_INDEX, write_bundle_index, write_pack_index
    from assay.evidence._layout import (
        ARTIFACTS,
        BUNDLES,
        EVENTS,
        MANIFEST,
        MANIFEST_SCHEMA,
        PLAN,
        REGATES,
        REPORTS,
        SCORES,
        SINK_FALLBACK,
        SPEC,
    )
    from assay.evidence._log import GENESIS, EventLog, FileSink, LineSink, after_seal
    from assay.evidence._lookup import (
        TrialEvidence,
        checked_events,
        every_trial,
        find_trials,
        read_trial,
    )
    from assay.evidence._pack import LOOSE_MIN, pack_names
    from assay.evidence._recorder import TrialRecorder, current_recorder, record_event
    from assay.evidence._resume import ResumePoint, find_resume_point
    from assay.evidence._rundir import RunWriter, read_manifest, score_records
    from assay.evidence._sinks import HttpSink, PrintSink
    from assay.evidence._store import ArtifactRef, ArtifactStore
    from assay.evidence._usage import Usage, count_call, counting_calls
    from assay.evidence._verify import verify_run
    from assay.evidence._verify_checker import VerifyResult

# each name imported from its module when first asked for: verify's worker processes
# (``_verify_worker``, ``_verify_packs_worker``) start without the recorder, the store
# and the sinks they never use
_EXPORTS = {
    "BUNDLE_SCHEMA": "assay.evidence._bundle",
    "bundle_digest": "assay.evidence._bundle",
    "decode_output": "assay.evidence._bundle",
    "seal_bundle": "assay.evidence._bundle",
    "DetachedRecorder": "assay.evidence._detached",
    "replay_detached": "assay.evidence._detached",
    "BUNDLE_INDEX": "assay.evidence._index",
    "write_bundle_index": "assay.evidence._index",
    "write_pack_index": "assay.evidence._index",
    "ARTIFACTS": "assay.evidence._layout",
    "BUNDLES": "assay.evidence._layout",
    "EVENTS": "assay.evidence._layout",
    "MANIFEST": "assay.evidence._layout",
    "MANIFEST_SCHEMA": "assay.evidence._layout",
    "PLAN": "assay.evidence._layout",
    "REGATES": "assay.evidence._layout",
    "REPORTS": "assay.evidence._layout",
    "SCORES": "assay.evidence._layout",
    "SINK_FALLBACK": "assay.evidence._layout",
    "SPEC": "assay.evidence._layout",
    "GENESIS": "assay.evidence._log",
    "EventLog": "assay.evidence._log",
    "FileSink": "assay.evidence._log",
    "LineSink": "assay.evidence._log",
    "after_seal": "assay.evidence._log",
    "TrialEvidence": "assay.evidence._lookup",
    "checked_events": "assay.evidence._lookup",
    "every_trial": "assay.evidence._lookup",
    "find_trials": "assay.evidence._lookup",
    "read_trial": "assay.evidence._lookup",
    "LOOSE_MIN": "assay.evidence._pack",
    "pack_names": "assay.evidence._pack",
    "TrialRecorder": "assay.evidence._recorder",
    "current_recorder": "assay.evidence._recorder",
    "record_event": "assay.evidence._recorder",
    "ResumePoint": "assay.evidence._resume",
    "find_resume_point": "assay.evidence._resume",
    "RunWriter": "assay.evidence._rundir",
    "read_manifest": "assay.evidence._rundir",
    "score_records": "assay.evidence._rundir",
    "HttpSink": "assay.evidence._sinks",
    "PrintSink": "assay.evidence._sinks",
    "ArtifactRef": "assay.evidence._store",
    "ArtifactStore": "assay.evidence._store",
    "Usage": "assay.evidence._usage",
    "count_call": "assay.evidence._usage",
    "counting_calls": "assay.evidence._usage",
    "verify_run": "assay.evidence._verify",
    "VerifyResult": "assay.evidence._verify_checker",
}
__getattr__ = _lazy_exports(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "ARTIFACTS",
    "BUNDLES",
    "BUNDLE_INDEX",
    "BUNDLE_SCHEMA",
    "EVENTS",
    "GENESIS",
    "LOOSE_MIN",
    "MANIFEST",
    "MANIFEST_SCHEMA",
    "PLAN",
    "REGATES",
    "REPORTS",
    "SCORES",
    "SINK_FALLBACK",
    "SPEC",
    "ArtifactRef",
    "ArtifactStore",
    "DetachedRecorder",
    "EventLog",
    "FileSink",
    "HttpSink",
    "LineSink",
    "PrintSink",
    "ResumePoint",
    "RunWriter",
    "TrialEvidence",
    "TrialRecorder",
    "Usage",
    "VerifyResult",
    "after_seal",
    "bundle_digest",
    "checked_events",
    "count_call",
    "counting_calls",
    "current_recorder",
    "decode_output",
    "every_trial",
    "find_resume_point",
    "find_trials",
    "pack_names",
    "read_manifest",
    "read_trial",
    "record_event",
    "replay_detached",
    "score_records",
    "seal_bundle",
    "verify_run",
    "write_bundle_index",
    "write_pack_index",
]
