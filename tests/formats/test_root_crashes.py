"""ROOT's process-ending failures become errors that name the file: a Fatal message (RNTuple's
reader asserts on a foreign header) and a crash (TFile::Init on random header lengths). Run in
a child process, as the damaged-file commands run: there the crash is real and, if it were not
caught, would end that process, not the test run."""

from __future__ import annotations

import os
import subprocess
import sys

from hepfmt.errors import VERBOSE

CHILD = r'''
from hepfmt.errors import exit_with, note_failure
from hepfmt.formats.root.backend import cxx_what, root

ROOT = root()
ROOT.gInterpreter.Declare("""
void hepfmt_test_fatal() { Fatal("hepfmt_test", "damaged header %d", 7); }
int hepfmt_test_crash(volatile int *p) { return *p; }
""")
for name, call in [("fatal", ROOT.hepfmt_test_fatal),
                   ("crash", lambda: ROOT.hepfmt_test_crash(ROOT.nullptr))]:
    try:
        call()
        print(name, "returned")
    except Exception as exc:
        note_failure(exc)
        print(name, cxx_what(exc), flush=True)
exit_with(2)
'''


def test_fatal_and_crash_become_exceptions() -> None:
    env = {k: v for k, v in os.environ.items() if k != VERBOSE}
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          timeout=600, env={**env, "PYTHONWARNINGS": "ignore"})
    out = proc.stdout.splitlines()
    assert "fatal hepfmt_test: damaged header 7" in out, proc.stdout + proc.stderr[-2000:]
    assert "crash crashed inside ROOT (SegmentationViolation, caught)" in out, \
        proc.stdout + proc.stderr[-2000:]
    # after a caught crash the process leaves without ROOT's teardown, with its own status
    assert proc.returncode == 2, proc.stderr[-2000:]
    # and quietly: no crash banner, no stack trace
    assert "stack trace" not in proc.stderr and "Break" not in proc.stderr, proc.stderr[-2000:]
