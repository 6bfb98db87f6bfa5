"""Level 4 (with redo): probe runs: models, schemas, command (the probe's arguments), runner (the
run over a transport), service, exports, measured (a succeeded run as the plan sees it), api;
parsers/ (redoprobe JSON lines, oratcptest, iperf3). Imports core, auth, remote, environments, jobs."""
