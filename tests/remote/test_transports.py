"""One transport interface, two real transports: this machine and OpenSSH on 127.0.0.1. What a
user typed travels as an argument, never as shell text; kernel settings are read as the host has them."""

import asyncio
from pathlib import Path

import pytest

from redolab.environments.connect import connect_host
from redolab.remote.hostinfo import capture_settings, parse_settings
from redolab.remote.kernel import kernel_triple, manual_kernel_commands, read_buffers
from redolab.remote.local import LocalTransport
from redolab.remote.transport import TransportError, shell_join


def _proc(key: str) -> list[int]:
    return [int(part) for part in Path(f"/proc/sys/net/ipv4/{key}").read_text().split()]


async def _settings_and_buffers(make_transport, hostile: str):
    transport = await make_transport()
    try:
        settings = await capture_settings(transport, peer_address=hostile, interface=None)
        buffers = await read_buffers(transport)
        echoed = await transport.run(["printf", "%s", hostile])
        return settings, buffers, echoed.stdout
    finally:
        await transport.close()


@pytest.mark.parametrize("kind", ["local", "ssh"])
def test_both_transports_read_the_same_host_and_run_nothing_typed(kind, tmp_path, request, secret_key):
    marker = tmp_path / "pwned"
    hostile = f"127.0.0.1; touch {marker} $(touch {marker})"
    if kind == "local":

        async def make_transport():
            return LocalTransport()
    else:
        _, primary, _ = request.getfixturevalue("ssh_env")

        async def make_transport():
            return await connect_host(primary, secret_key=secret_key)

    settings, buffers, echoed = asyncio.run(_settings_and_buffers(make_transport, hostile))
    assert settings["kernel"].startswith("Linux ")
    assert settings["tcp_rmem"] == _proc("tcp_rmem") == buffers["tcp_rmem"]
    assert settings["tcp_wmem"] == _proc("tcp_wmem") == buffers["tcp_wmem"]
    assert echoed == hostile  # arrived as one argument, unchanged
    assert not marker.exists()  # and was never run


def test_a_command_that_overruns_its_timeout_is_named():
    with pytest.raises(TransportError, match=r"this machine: 'sleep' did not finish within 1 s"):
        asyncio.run(LocalTransport().run(["sleep", "5"], timeout=1))


def test_settings_text_is_read_field_by_field():
    text = "kernel=Linux 6.1.0\nmtu_bytes=9000\ntcp_rmem=4096 131072 6291456\ntcp_wmem=garbage\nrmem_max=\nnoise\n"
    assert parse_settings(text) == {
        "kernel": "Linux 6.1.0",
        "mtu_bytes": 9000,
        "tcp_rmem": [4096, 131072, 6291456],
        "tcp_wmem": None,
        "rmem_max": None,
    }


def test_kernel_maxima_keep_the_hosts_minimum_and_default():
    assert kernel_triple([4096, 131072, 6291456], 16 * 2**20) == [4096, 131072, 16 * 2**20]
    assert kernel_triple([4096, 131072, 6291456], 65536) == [4096, 65536, 65536]  # default lowered to the max
    lines = manual_kernel_commands([262144])
    assert lines[0].startswith("sysctl net.ipv4.tcp_rmem net.ipv4.tcp_wmem")
    assert lines[1] == "sysctl -w 'net.ipv4.tcp_rmem=4096 131072 262144' 'net.ipv4.tcp_wmem=4096 16384 262144'"
    assert shell_join(["echo", "a b", "$(x)"]) == "echo 'a b' '$(x)'"
