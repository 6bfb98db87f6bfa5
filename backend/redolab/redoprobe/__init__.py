"""redoprobe, the bundled C probe: where its source and binary live, and how to build it.

The C source ships with the package (so a host of another architecture can build it); the
binary is built here by `make` (static with musl-gcc when present).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

PROBE_DIR = Path(__file__).resolve().parent
BINARY = PROBE_DIR / "redoprobe"
# The version the C source declares (probe.h), so deployment names and the binary's own
# `--version` and start event can never disagree.
VERSION = re.search(r'#define PROBE_VERSION "([^"]+)"', (PROBE_DIR / "probe.h").read_text())[1]


class ProbeBuildError(RuntimeError):
    """The probe could not be built; the message carries the compiler's output."""


def build(target: str = "redoprobe") -> Path:
    """Build the probe (or another Makefile target) and return its path."""
    command = ["make", "-s", "-C", str(PROBE_DIR), target]  # fixed arguments, no shell
    result = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603
    if result.returncode != 0:
        raise ProbeBuildError(f"building redoprobe failed:\n{result.stdout}{result.stderr}")
    return PROBE_DIR / target
