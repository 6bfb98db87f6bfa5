"""Level 1 (with auth): transports (ssh.py with asyncssh, local.py for this machine), probe
deployment, host settings and kernel buffers. Imports core and redoprobe (the probe's source) only;
environments/connect.py turns a Host row into one of these transports."""
