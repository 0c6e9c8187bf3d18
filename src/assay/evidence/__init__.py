"""Evidence: the event log, the artifact store, observation bundles and verification."""

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
