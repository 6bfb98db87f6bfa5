"""Remote tests reach the test's OpenSSH sshd through the runs' fixture."""

from tests.runs.conftest import ssh_env  # noqa: F401 (fixture)
