"""``python -m assay.evidence._verify_packs_worker RUN [FILE ...]``: the pack pass of
``verify`` (and the digests of the named files of RUN) in a process of its own, its
answer written to stdout by ``marshal`` (see ``_verify_packs``): this process imports
neither msgspec nor the rest of ``_pack``, ~20 ms of CPU it has no use for."""

import marshal
import sys

from assay.evidence._verify_pack import scan

if __name__ == "__main__":
    sys.stdout.buffer.write(marshal.dumps(scan(sys.argv[1], sys.argv[2:])))
