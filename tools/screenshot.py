"""A page as a user first sees it: headless Chromium renders a local HTML file (or a URL) in a
window of a given size and saves that first screen as PNG.

Issue 39 asks that the report's landing show the answer and the summary figure without
scrolling on a 1400x900 screen; this is how that is checked (and how the closing note's
screenshots are taken), on any machine with Debian's ``chromium`` (``apt-get install
chromium``):

    .venv/bin/python tools/screenshot.py results/report.html -o /tmp/landing-1400x900.png

The size is the page's viewport, what ``100vh`` is to the page: headless Chromium keeps room for
a browser's toolbars inside ``--window-size`` (a 1400x900 window gives the page 1400x757, while
the PNG is still 1400x900, with content drawn below the viewport's end). So the window is made
taller by what Chromium reports it keeps (``innerHeight``, asked first with ``--dump-dom``) and
the capture cut to the viewport. Snakemake's report is a JavaScript app that renders after the
page loads: the virtual-time budget lets its scripts run to the end before the capture. Each
run has its own throw-away browser profile and no network services (no sync, updates or QUIC),
so a screenshot depends only on the page.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The browsers tried, in order, unless --chromium or $CHROMIUM names one.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Flags for a capture that depends on the page alone (no GPU, sandbox, profile or network
#: services of the machine); the sandbox needs privileges a container or root does not have.
QUIET_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def browser(named: str | None = None) -> str:
    """The Chromium to run: the one named, else the first of :data:`BROWSERS` on PATH."""
    for candidate in ([named] if named else [os.environ.get("CHROMIUM"), *BROWSERS]):
        if candidate and (found := shutil.which(candidate)):
            return found
    raise SystemExit("screenshot: no Chromium found (apt-get install chromium, or --chromium)")


def page_url(page: str) -> str:
    """A URL as given; a path as its absolute ``file://`` URL (Chromium resolves no relative
    path against the caller's working directory)."""
    if "://" in page:
        return page
    path = Path(page)
    if not path.is_file():
        raise SystemExit(f"screenshot: {page}: no such file")
    return path.resolve().as_uri()


#: A page that prints the viewport Chromium gives it (for --dump-dom).
PROBE = "data:text/html,<body><script>document.body.textContent=innerWidth+'x'+innerHeight</script>"


def command(chromium: str, url: str, width: int, height: int, profile: Path,
            *action: str) -> list[str]:
    """The Chromium command line: ``action`` is e.g. ``--screenshot=PNG`` or ``--dump-dom``."""
    return [chromium, *QUIET_FLAGS, f"--user-data-dir={profile}",
            f"--window-size={width},{height}", *action, url]


def run(chromium: str, url: str, width: int, height: int, *action: str,
        timeout_s: float = 120) -> subprocess.CompletedProcess:
    """One Chromium run in a window of ``width`` x ``height``, with a profile of its own."""
    with tempfile.TemporaryDirectory(prefix="screenshot-profile-") as profile:
        return subprocess.run(command(chromium, url, width, height, Path(profile), *action),
                              capture_output=True, text=True, timeout=timeout_s)


def toolbar_height(chromium: str, width: int, height: int) -> int:
    """How much of a window of ``height`` Chromium keeps from the page (0 if it says nothing)."""
    found = re.search(r"(\d+)x(\d+)", run(chromium, PROBE, width, height, "--dump-dom").stdout)
    return max(0, height - int(found[2])) if found else 0


def screenshot(page: str, out: Path, width: int = 1400, height: int = 900,
               budget_ms: int = 10000, chromium: str | None = None,
               timeout_s: float = 120) -> Path:
    """Render ``page`` in a ``width`` x ``height`` viewport and write that screen to ``out``."""
    from PIL import Image  # matplotlib's dependency: in the venv

    chromium = browser(chromium)
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)  # a stale capture must not pass for this one
    window = height + toolbar_height(chromium, width, height)
    proc = run(chromium, page_url(page), width, window, f"--virtual-time-budget={budget_ms}",
               f"--screenshot={out}", timeout_s=timeout_s)
    if proc.returncode != 0 or not out.is_file():
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise SystemExit(f"screenshot: Chromium wrote no {out} (exit {proc.returncode})\n{tail}")
    with Image.open(out) as png:
        png.load()
    if png.size != (width, height):
        png.crop((0, 0, width, height)).save(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page", help="an HTML file or a URL")
    ap.add_argument("-o", "--out", type=Path, required=True, help="the PNG to write")
    ap.add_argument("--size", default="1400x900",
                    help="the viewport, WIDTHxHEIGHT (default %(default)s)")
    ap.add_argument("--virtual-time-budget", type=int, default=10000, metavar="MS",
                    help="virtual milliseconds the page's scripts may run before the capture "
                         "(default %(default)s)")
    ap.add_argument("--chromium", help="the browser binary (default: $CHROMIUM, else chromium)")
    args = ap.parse_args(argv)
    try:
        width, height = (int(x) for x in args.size.lower().split("x"))
    except ValueError:
        ap.error(f"--size {args.size!r}: expected WIDTHxHEIGHT, e.g. 1400x900")
    out = screenshot(args.page, args.out, width, height, args.virtual_time_budget, args.chromium)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
