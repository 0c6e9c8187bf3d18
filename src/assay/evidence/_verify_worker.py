"""``python -m assay.evidence._verify_worker RUN [FILE ...]``: the event pass of
``verify`` (and the digests of the named files of RUN) in a process of its own, its
answer written to stdout as msgpack (see ``_verify_events``)."""

import sys

import msgspec

from assay.evidence._verify_events import scan_events

if __name__ == "__main__":
    sys.stdout.buffer.write(msgspec.msgpack.encode(scan_events(sys.argv[1], sys.argv[2:])))
