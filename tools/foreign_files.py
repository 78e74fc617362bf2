"""How often ROOT would end the process on a foreign or header-garbled file, had hepfmt not
turned its aborts and crashes into errors (``analysis/hepfmt/formats/root/cxx/fatal.cxx``, cppyy's
signals as exceptions in ``backend.root``). Every call here goes straight to ROOT, past
hepfmt's own ``root`` magic check, and is counted by how it ended.

    .venv/bin/python tools/foreign_files.py --files 20000 \
        > results/reference/amd-epyc/foreign-files.txt

* foreign: random bytes (no ``root`` magic) opened by ``RNTupleReader::Open``, which reads a
  file without ROOT's header as a bare RNTuple;
* header-garbled: ``root`` followed by random bytes, opened by ``TFile::Open``.
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile
from pathlib import Path

from hepfmt.errors import CXX_SIGNALS
from hepfmt.formats.root.backend import TREE, cxx_what, root


def _ending(call) -> str:
    try:
        call()
    except Exception as exc:
        what = cxx_what(exc)
        if "crashed inside ROOT" in what or type(exc).__name__ in CXX_SIGNALS:
            return "crash (a signal: would have ended the process)"
        if what.startswith("ROOT:") or "violated at line" in what:
            return "Fatal/R__ASSERT (abort(): would have ended the process)"
        return "exception (an error the caller catches)"
    return "opened"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--bytes", type=int, default=4096)
    args = ap.parse_args()
    ROOT = root("rntuple_layout")
    counts: dict[str, collections.Counter] = {"foreign": collections.Counter(),
                                              "header-garbled": collections.Counter()}
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.root"
        for _ in range(args.files):
            path.write_bytes(os.urandom(args.bytes))
            counts["foreign"][_ending(lambda: ROOT.hepfmt_rntuple.layout(str(path), TREE))] += 1
            path.write_bytes(b"root" + os.urandom(args.bytes - 4))
            counts["header-garbled"][_ending(lambda: ROOT.TFile.Open(str(path), "READ"))] += 1
    print(f"# {args.files} random files of {args.bytes} bytes per kind, ROOT "
          f"{ROOT.gROOT.GetVersion()}")
    for kind, c in counts.items():
        for ending, n in sorted(c.items()):
            print(f"{kind:15s} {n:6d}  {ending}")


if __name__ == "__main__":
    main()
