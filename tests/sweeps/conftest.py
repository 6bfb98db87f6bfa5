"""Sweeps run on the runs' fixtures: the environment on the test sshd and the no-leftover check."""

from tests.runs.conftest import nothing_left_behind, ssh_env  # noqa: F401 (fixtures)
