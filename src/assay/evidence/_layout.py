"""The names of the files in a run directory, in one place."""

import re

MANIFEST_SCHEMA = "assay.run/1"
SPEC = "spec.json"
PLAN = "plan.jsonl"
EVENTS = "events.jsonl"
BUNDLES = "bundles.jsonl"
SCORES = "scores.jsonl"
MANIFEST = "manifest.json"
ARTIFACTS = "artifacts"
LOCK = ".lock"
SINK_FALLBACK = "sink-fallback.jsonl"
REGATES = "regates.jsonl"
"""Looks made by re-gating a finished sequential run (`assay gate`, `assay score`),
chained to the run's events head: appended after the seal, so the manifest cannot list it."""
REPORTS = ("report.json", "report.md", "report.html")
ATTESTATION = "attestation.dsse.json"
"""The run's signature (an in-toto Statement in a DSSE envelope), written by `assay sign`
or `assay run --sign` after the seal: it signs the manifest, so the manifest cannot list it."""

LEFTOVER = re.compile(r"\..+\.tmp")
"""A file being written under a temporary name (``.NAME.tmp``) before it is renamed
into place: a kill leaves one behind, which the next ``assay resume`` removes."""
