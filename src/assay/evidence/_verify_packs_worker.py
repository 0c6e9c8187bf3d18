"""``python -m assay.evidence._verify_packs_worker RUN [FILE ...]``: the pack pass of
``verify`` (and the digests of the named files of RUN) in a process of its own, its
answer written to stdout as msgpack (see ``_verify_packs``)."""

import sys

import msgspec

from assay.evidence._verify_packs import scan_packs

if __name__ == "__main__":
    sys.stdout.buffer.write(msgspec.msgpack.encode(scan_packs(sys.argv[1], sys.argv[2:])))
