"""The names of the files in a run directory, in one place."""

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
REPORTS = ("report.json", "report.md", "report.html")
