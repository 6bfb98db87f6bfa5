"""Probe output of any size: both transports read lines far longer than asyncio's 64 KiB limit (an
interval line of 1,024 connections is about 104 KB), keep stderr drained all along, and after a
line they refuse still read the command's output to its end, so the command never blocks."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redolab.environments.connect import connect_host
from redolab.remote.local import LocalTransport
from redolab.remote.transport import MAX_LINE_BYTES, OutputLineTooLong, command_name, discard, read_lines

# A command that writes what a 1,024-connection run writes and more: a 300 KB line between short
# ones, 1 MiB on stderr first (a pipe holds 64 KiB: unread, it would block the command), and a last
# line without its newline.
_WRITER = (
    "head -c 1048576 /dev/zero >&2; echo first; head -c 300000 /dev/zero | tr '\\0' x; echo; echo second; printf last"
)
# A line longer than MAX_LINE_BYTES, then more output than a pipe holds, then a line that says the
# command got to its end (it would block for ever if nobody read after the refused line).
_OVERLONG = (
    f"echo before; head -c {MAX_LINE_BYTES + 10} /dev/zero | tr '\\0' x; echo; "
    "head -c 1048576 /dev/zero; echo; echo finished >&2"
)


def _chunks(data: bytes, cuts: list[int]):
    """A read function returning `data` cut at `cuts` (as a pipe may deliver it)."""
    pieces, at = [], 0
    for cut in sorted({c % (len(data) + 1) for c in cuts}):
        pieces.append(data[at:cut])
        at = cut
    pieces.append(data[at:])
    queue = [piece for piece in pieces if piece]

    async def read(_size: int) -> bytes:
        return queue.pop(0) if queue else b""

    return read


async def _collect(read, **options) -> list[str]:
    return [line async for line in read_lines(read, where="test", **options)]


@given(st.lists(st.text(alphabet='ab{}":,é\r ', max_size=40), max_size=8), st.lists(st.integers(0, 400)))
def test_lines_are_the_same_however_the_output_is_cut(lines, cuts):
    data = "\n".join(lines).encode()
    expected = data.decode().split("\n")
    if expected[-1] == "":  # a newline ends the last line, it does not start another
        expected.pop()
    assert asyncio.run(_collect(_chunks(data, cuts))) == expected


def test_a_line_past_the_limit_is_refused_and_the_rest_is_read_to_the_end():
    data = b"short\n" + b"x" * 1000 + b"\nafter\n"
    read = _chunks(data, list(range(0, len(data), 7)))

    async def scenario():
        seen = []
        with pytest.raises(OutputLineTooLong, match=r"^test printed a line of more than 100 bytes$"):
            async for line in read_lines(read, where="test", max_line_bytes=100):
                seen.append(line)
        await discard(read)
        return seen, await read(1)

    seen, left = asyncio.run(scenario())
    assert seen == ["short"]
    assert left == b""  # the refused line was not read to its end by read_lines, but by discard


def test_command_names_say_which_probe():
    wrapped = ["sh", "-c", 'echo "$$"; exec "$0" "$@"', "/h/.cache/redolab/redoprobe-0.1.0-ab", "client"]
    assert command_name(wrapped) == "redoprobe client"
    assert command_name(["/opt/redoprobe", "server", "--json"]) == "redoprobe server"
    assert command_name(["sed", "1d"]) == "sed"


async def _read_all(transport, script: str) -> tuple[list[str], str, int]:
    try:
        process = await transport.start(["sh", "-c", script])
        lines = [line async for line in process.lines()]
        status = await asyncio.wait_for(process.wait(), 20)
        return lines, await process.stderr_text(), status
    finally:
        await transport.close()


async def _refused_then_drained(transport, script: str) -> tuple[list[str], str, str, int]:
    try:
        process = await transport.start(["sh", "-c", script])
        seen = []
        with pytest.raises(OutputLineTooLong) as refused:
            async for line in process.lines():
                seen.append(line)
        await asyncio.wait_for(process.drain(), 20)
        status = await asyncio.wait_for(process.wait(), 20)
        return seen, str(refused.value), await process.stderr_text(), status
    finally:
        await transport.close()


def _transport(kind: str, request, secret_key: str):
    if kind == "local":

        async def make():
            return LocalTransport()

        return make
    _, primary, _ = request.getfixturevalue("ssh_env")

    async def make_ssh():
        return await connect_host(primary, secret_key=secret_key)

    return make_ssh


@pytest.mark.parametrize("kind", ["local", "ssh"])
def test_long_lines_arrive_whole_and_stderr_never_blocks(kind, request, secret_key):
    make = _transport(kind, request, secret_key)

    async def scenario():
        return await asyncio.wait_for(_read_all(await make(), _WRITER), 60)

    lines, stderr, status = asyncio.run(scenario())
    assert status == 0
    assert [len(line) for line in lines] == [5, 300_000, 6, 4]
    assert lines[1] == "x" * 300_000 and lines[-1] == "last"
    assert len(stderr) == 64 * 1024  # the end of its 1 MiB, kept


@pytest.mark.parametrize("kind", ["local", "ssh"])
def test_after_a_refused_line_the_output_is_read_to_its_end(kind, request, secret_key):
    make = _transport(kind, request, secret_key)

    async def scenario():
        return await asyncio.wait_for(_refused_then_drained(await make(), _OVERLONG), 60)

    seen, message, stderr, status = asyncio.run(scenario())
    assert seen == ["before"]
    assert f"printed a line of more than {MAX_LINE_BYTES:,} bytes" in message and message.startswith("sh on ")
    assert status == 0 and stderr.strip() == "finished"  # it wrote its last 1 MiB and ended
