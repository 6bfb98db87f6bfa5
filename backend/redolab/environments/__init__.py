"""Level 2: environments, hosts (the HostPair mixin runs and sweeps share), SSH credentials,
host-key trust, and connect (a Host row to a transport). Imports core, auth and remote. What
deleting an environment takes with it is counted from the tables that name their rows in
`info["contents"]`, so this level imports no feature."""
