"""The compressibility step: the logs of the worst and a typical hour listed by the shipped script through
the stand-in sqlplus, read on the host over the real sshd by a read-only python3 program, their zlib
ratio within 1 % of Python's zlib on the same bytes; ASM logs named with what to run; nothing written."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import math
import random
import re
import shutil
import subprocess
import sys
import zlib
from dataclasses import replace
from datetime import datetime

import pytest

from redolab.collect import compressibility as step
from redolab.collect import service
from redolab.collect import standby_timing as standby
from redolab.collect.commands import access_of, run_as, sqlplus_argv
from redolab.collect.models import Collection, CollectionStatus, CompressibilitySample
from redolab.collect.output import read_sqlplus
from redolab.collect.rows import ArchivedLogName
from redolab.collect.scripts import oracle_session
from redolab.collect.steps import SMALL_OUTPUT_CAPS, run_step
from redolab.environments.connect import connect_host
from redolab.planning.compressibility import LZ4, measure_file, overall
from tests.execution import execute_next


def log(thread, sequence, start, minutes=10, size=1_000_000, name=None) -> ArchivedLogName:
    first = datetime.fromisoformat(start)
    end = first.replace(minute=min(59, first.minute + minutes))
    return ArchivedLogName(thread, sequence, first, end, size // 512, 512, name or f"/arch/{thread}_{sequence}.arc")


def test_the_worst_and_a_typical_hour_are_chosen_and_spread():
    rows = [log(1, n, f"2026-11-20 08:{5 * n:02d}:00", size=10_000_000) for n in range(12)]  # worst: 120 MB
    rows += [log(1, 100 + n, f"2026-11-20 {h:02d}:10:00", size=s) for n, (h, s) in enumerate(
        [(9, 1_000_000), (10, 3_000_000), (11, 2_000_000)])]  # fmt: skip
    choice = step.choose_logs(rows, per_hour=4)
    (worst_label, worst, worst_logs), (typical_label, typical, typical_logs) = choice.hours
    assert (worst_label, worst.hour, typical_label, typical.hour) == ("worst hour", 8, "typical hour", 11)
    assert [r.sequence for r in worst_logs] == [0, 4, 7, 11]  # first, last and evenly between
    assert [r.sequence for r in typical_logs] == [102]  # the median of the other hours: 1, 2, 3 MB
    assert step.choose_logs([]) is None
    (only,) = step.choose_logs(rows[:1]).hours
    assert only[0] == "worst hour"


def test_the_host_command_passes_paths_as_arguments_and_refuses_odd_ones():
    argv = step.host_argv(["/u01/arch/1_5.arc"], prefix=["sudo", "-n", "-u", "oracle"])
    assert argv == ["sudo", "-n", "-u", "oracle", "nice", "-n", "19", "python3", "-", "6", str(step.SAMPLE_BYTES),
                    "/u01/arch/1_5.arc"]  # fmt: skip
    for odd in ("relative.arc", "/u01/arch/$(reboot)", "/u01/../etc/shadow", "/a b"):
        with pytest.raises(ValueError):
            step.host_argv([odd])


def test_the_host_program_only_reads():
    """Its one open() is read-only binary; the only commands it may run are the fixed codec tools, fed and
    read through pipes (their output to /dev/null), never through a shell; it writes nowhere else."""
    assert re.findall(r"\bopen\(([^)]*)\)", step.HOST_PROGRAM) == ['path, "rb"'] * 2  # zlib's pass, the tool's
    assert not re.search(r"\b(os|tempfile|shell|os\.system)\b", step.HOST_PROGRAM)
    assert re.findall(r"(\w+(?:\.\w+)*)\.write\(", step.HOST_PROGRAM) == ["pack.stdin", "unpack.stdin"]
    assert re.findall(r"Popen\((\w+)", step.HOST_PROGRAM) == ["tool", "tool"]
    tools = re.search(r"TOOLS = (\(.*?\)\))\n", step.HOST_PROGRAM, re.S).group(1)
    assert all(argv[0] in ("lz4", "zstd") and "-c" in argv for _, *argvs in ast.literal_eval(tools) for argv in argvs)


def test_hostile_output_keeps_only_valid_lines_for_logs_asked():
    asked = [("worst hour", log(1, 1, "2026-11-20 08:00:00")), ("worst hour", log(1, 2, "2026-11-20 08:10:00"))]
    good = {"path": "/arch/1_1.arc", "bytes": 1000, "zlib_bytes": 250, "compress_cpu_seconds": 0.01,
            "decompress_cpu_seconds": 0.002}  # fmt: skip
    lines = [
        "\x1b[2Jlogin banner",
        json.dumps({**good, "path": "/etc/passwd"}),
        json.dumps(good),
        json.dumps({**good, "path": "/arch/1_2.arc", "bytes": True}),
        "x" * 100_000,
    ]
    first, second = step.read_host_output("\n".join(lines), asked)
    assert first.ratio == 4.0 and first.per_gib(first.compress_cpu_seconds) == pytest.approx(0.01 * 2**30 / 1000)
    assert second.error == "the host's figures for it did not validate" and second.ratio is None


def made_logs(directory) -> dict[str, bytes]:
    """Redo-like logs: 512-byte blocks, a header and a row image with a few bytes changed."""
    rng = random.Random(59)
    template = b"ROWID AAAR3sAAEAAAACXAAA COL1 'ACTIVE' COL2 00042 " * 10
    made = {}
    for n in range(3):
        blocks = [n.to_bytes(4, "little") + i.to_bytes(4, "little") + rng.randbytes(8) + template[:496]
                  for i in range(600 * (n + 1))]  # fmt: skip
        data = b"".join(blocks)
        path = directory / f"1_{200 + n}_1088.arc"
        path.write_bytes(data)
        made[str(path)] = data
    return made


def fingerprint(directory) -> dict[str, tuple[str, int]]:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in directory.iterdir()}


def test_the_step_samples_through_the_stand_in_host_and_writes_nothing(session, secret_key, oracle_env, database,
                                                                        tmp_path):  # fmt: skip
    _, primary = oracle_env
    arch = tmp_path / "arch"
    arch.mkdir()
    made = made_logs(arch)
    rows = [[2, 90 + n, f"2026-11-20 09:{10 * n:02d}:00", f"2026-11-20 09:{10 * n + 10:02d}:00", len(data) // 512,
             512, path] for n, (path, data) in enumerate(made.items())]  # fmt: skip
    rows.append([1, 7, "2026-11-20 10:00:00", "2026-11-20 10:10:00", 100, 512, "+RECO/ORCL/ARCHIVELOG/1_7.arc"])
    database.data = {"archived_log_names": rows}
    database.write()
    before = fingerprint(arch)
    access = access_of(primary, secret_key)
    outcome = asyncio.run(measured(primary, secret_key, access, tmp_path))
    by_name = {sample.name: sample for sample in outcome.samples}
    for path, data in made.items():
        sample = by_name[path]
        assert sample.hour == "worst hour" and sample.bytes_read == len(data) and sample.error is None
        expected = len(data) / len(zlib.compress(data, step.ZLIB_LEVEL))
        assert abs(sample.ratio / expected - 1) <= 0.01
        assert sample.per_gib(sample.compress_cpu_seconds) >= 0
    asm = by_name["+RECO/ORCL/ARCHIVELOG/1_7.arc"]
    assert asm.hour == "typical hour" and asm.ratio is None and "ASM" in asm.error
    assert any("asmcmd cp +RECO/ORCL/ARCHIVELOG/1_7.arc /scratch/redolab/" in note for note in outcome.notes)
    assert fingerprint(arch) == before  # the logs unchanged, and nothing new beside them
    summary = outcome.notes[0]  # the step's figures, per host; LZ4 measured or what to install named
    assert summary.startswith(f"Compressibility on {primary.name} (3 logs, ")
    said_fast = [words for words in step.FAST_CODECS.values() if words in summary]
    assert said_fast or f"LZ4 not measured on {primary.name}: " in summary
    if shutil.which("lz4") == "/usr/bin/lz4":  # on the host's PATH too: measured by the command, same bytes
        assert said_fast in ([step.FAST_CODECS["lz4 command"]], [step.FAST_CODECS["lz4 module"]]), summary
    assert "timed on the primary's cores" in summary
    (call,) = database.calls()
    assert call["scripts"] == ["oracle_session_csv", "oracle_archived_log_names"]  # only the shipped SQL
    assert json.loads(json.dumps(outcome.to_json()))["samples"][0]["zlib_level"] == 6


async def measured(primary, secret_key, access, tmp_path):
    transport = await connect_host(primary, secret_key=secret_key)
    home = str(access.oracle_home)
    spool = tmp_path / "spool"
    spool.mkdir()

    async def run_sql(steps, *, expected):
        said = await run_step(transport, sqlplus_argv(access, home), step="session", spool=spool / "sql.out",
                              input=oracle_session(steps))  # fmt: skip
        return read_sqlplus(said.path.read_text(), stderr=said.stderr, exit_code=said.exit_code, expected=expected)

    async def run_command(argv, name, *, input):
        return await run_step(transport, argv, step=name, spool=spool / "host.out", input=input,
                              caps=SMALL_OUTPUT_CAPS)  # fmt: skip

    try:
        return await step.compressibility_step(run_sql, run_command, run_as=run_as(access), host=primary.name)
    finally:
        await transport.close()


def test_the_host_program_matches_python_zlib_locally(tmp_path):
    """The program as the host runs it (python3, standard input), on a file it reads in several chunks."""
    path = tmp_path / "big.arc"
    data = (b"redo row image 0001 " * 70_000) + random.Random(1).randbytes(200_000)
    path.write_bytes(data)
    done = subprocess.run([sys.executable, "-", "6", str(step.SAMPLE_BYTES), str(path), str(tmp_path / "gone")],
                          input=step.HOST_PROGRAM, capture_output=True, text=True, check=True)  # fmt: skip
    first, missing = (json.loads(line) for line in done.stdout.splitlines())
    assert first["bytes"] == len(data) and first["zlib_bytes"] == len(zlib.compress(data, 6))
    assert missing["error"] == "No such file or directory"
    # LZ4 on the same bytes where python3 has the lz4 module (this one does), as the local command measures it
    local = overall([measure_file(path)], LZ4)
    assert abs(first["fast_bytes"] / local.compressed_bytes - 1) <= 0.01
    (sample,) = step.read_host_output(done.stdout, [("worst hour", log(1, 1, "2026-11-20 08:00:00", name=str(path)))])
    assert sample.fast_ratio == pytest.approx(len(data) / first["fast_bytes"]) and sample.fast_codec == "lz4 module"
    # without the module (python3 -S: no site-packages) the lz4 command measures it where there is one; with
    # no command either (an empty PATH) the zlib figures stay and the fast codec is left out
    argv = [sys.executable, "-S", "-", "6", str(step.SAMPLE_BYTES), str(path)]
    if shutil.which("lz4"):
        by_tool = json.loads(subprocess.run(argv, input=step.HOST_PROGRAM, capture_output=True, text=True,
                                            check=True).stdout)  # fmt: skip
        assert by_tool["fast_codec"] == "lz4 command" and by_tool["zlib_bytes"] == first["zlib_bytes"]
        assert abs(by_tool["fast_bytes"] / first["fast_bytes"] - 1) <= 0.05  # LZ4 frames, -1 and level 0
    bare = subprocess.run(argv, input=step.HOST_PROGRAM, capture_output=True, text=True, check=True, env={"PATH": ""})
    plain = json.loads(bare.stdout)
    assert plain["zlib_bytes"] == first["zlib_bytes"] and "fast_bytes" not in plain


def test_the_summary_note_says_both_codecs_or_what_to_install():
    base = {"name": "/a/1.arc", "hour": "worst hour", "thread": 1, "sequence": 1, "log_bytes": 2 * step.GIB}
    zlib_only = step.HostSample(**base, bytes_read=step.GIB, zlib_bytes=step.GIB // 4, compress_cpu_seconds=8.0,
                                decompress_cpu_seconds=2.0)  # fmt: skip
    said = step.summary_note("db1", [zlib_only, step.HostSample(**base, error="unreadable")])
    assert said.startswith("Compressibility on db1 (1 log, 1,024.0 MiB read): zlib level 6 4.00 : 1, 8.00 CPU "
                           "s/GiB to compress and 2.00 to decompress; LZ4 not measured on db1: its python3 has no "
                           "lz4 module and it has no lz4 or zstd command (install the python3-lz4 or the lz4 "
                           "package there")  # fmt: skip
    both = replace(zlib_only, fast_codec="lz4 module", fast_bytes=step.GIB // 2, fast_compress_cpu_seconds=1.0,
                   fast_decompress_cpu_seconds=0.5)  # fmt: skip
    said = step.summary_note("db1", [both])
    assert f"{step.FAST_CODECS['lz4 module']} 2.00 : 1, 1.00 CPU s/GiB to compress and 0.50" in said
    assert "not measured" not in said and said.endswith("(the standby's, where timed, follows).")
    assert step.summary_note("db1", [step.HostSample(**base, error="unreadable")]) is None


def test_a_collection_asked_for_it_stores_the_samples(session, engine, secret_key, oracle_env, database, tmp_path):
    """Opt-in: the collection runs the step after the history, stores a row per log, notes the ASM advice."""
    environment, _ = oracle_env
    arch = tmp_path / "arch"
    arch.mkdir()
    (path, data), *_ = made_logs(arch).items()
    database.data = {"archived_log_names": [
        [1, 5, "2026-11-20 09:00:00", "2026-11-20 09:10:00", len(data) // 512, 512, path],
        [1, 6, "2026-11-20 10:00:00", "2026-11-20 10:10:00", 10, 512, "+RECO/ORCL/1_6.arc"]]}  # fmt: skip
    database.write()
    queued = service.queue_collection(
        session=session, environment=environment, requested_by="alice", compressibility=True
    )
    assert execute_next(engine, secret_key)
    session.expire_all()
    collection = session.get(Collection, queued.id)
    assert collection.status is CollectionStatus.succeeded, collection.failure_message
    assert "oracle_archived_log_names" in [script["name"] for script in collection.scripts]
    rows = {row.name: row for row in session.query(CompressibilitySample).filter_by(collection_id=collection.id)}
    assert rows[path].bytes_read == len(data) and rows[path].zlib_level == 6
    assert abs(len(data) / rows[path].zlib_bytes / (len(data) / len(zlib.compress(data, 6))) - 1) <= 0.01
    assert rows["+RECO/ORCL/1_6.arc"].error.startswith("stored in ASM")
    assert any("asmcmd cp +RECO/ORCL/1_6.arc" in note for note in collection.notes)
    # the standby (sb1, over the same sshd) decompressed that log's bytes, compressed on the primary and sent
    # through redolab as text: every byte restored, timed there; the other log has no standby figure
    assert rows[path].standby_bytes == len(data) and rows[path].standby_decompress_cpu_seconds >= 0
    assert rows["+RECO/ORCL/1_6.arc"].standby_bytes is None
    if shutil.which("lz4") == "/usr/bin/lz4":  # the host's python3 has no lz4 module here: its lz4 command
        assert rows[path].fast_codec in ("lz4 command", "lz4 module") and 0 < rows[path].fast_bytes < len(data)
    assert any(note.startswith("Decompression timed on the standby sb1 too: ") for note in collection.notes)


def test_the_standby_programs_round_trip_and_refuse_what_does_not_validate(tmp_path):
    """The primary's pack program and the standby's unpack program as the hosts run them, joined by text."""
    path = tmp_path / "1_9.arc"
    data = b"redo block " * 40_000 + random.Random(9).randbytes(100_000)
    path.write_bytes(data)
    packed = subprocess.run([sys.executable, "-", "6", str(standby.STANDBY_SAMPLE_BYTES), str(path)],
                            input=standby.PACK_PROGRAM, capture_output=True, text=True, check=True)  # fmt: skip
    assert max(map(len, packed.stdout.splitlines())) <= 76  # base64 lines, each decodable alone
    sent = len(zlib.compress(data, 6))
    unpacked = subprocess.run([sys.executable, *standby.unpack_argv()[4:]], input=packed.stdout,
                              capture_output=True, text=True, check=True)  # fmt: skip
    timing = standby.read_standby_output(unpacked.stdout, "sb1", str(path), sent)
    assert timing.restored_bytes == len(data) and timing.seconds_per_gib >= 0
    assert standby.read_standby_output(unpacked.stdout, "sb1", str(path), sent + 1) == (
        "the standby's figures did not validate"
    )
    hostile = subprocess.run([sys.executable, *standby.unpack_argv()[4:]], input="not base64 at all!\n",
                             capture_output=True, text=True, check=True)  # fmt: skip
    assert standby.read_standby_output(hostile.stdout, "sb1", "x", 0) == (
        "the standby could not decompress what the primary sent"
    )
    assert standby.read_standby_output("\x1b[2J banner", "sb1", "x", 0) == "the standby printed no result"
    assert re.findall(r"open\(([^)]*)\)", standby.PACK_PROGRAM) == ['path, "rb"']  # read-only on the primary
    assert "open(" not in standby.UNPACK_PROGRAM  # nothing opened on the standby
    # the cap on what the primary may print holds the worst case: incompressible bytes (+0.1 %), base64 lines
    worst = standby.STANDBY_SAMPLE_BYTES * 1.001 + 1024 + 57 * 33  # and a short last line per 1 MiB piece
    assert math.ceil(worst / 57) * 77 < standby.PACK_CAPS.total_bytes and worst / 57 < standby.PACK_CAPS.lines


def test_without_a_standby_the_figures_are_the_primarys():
    base = {"name": "/a/1.arc", "hour": "worst hour", "thread": 1, "sequence": 1, "log_bytes": 10}
    outcome = step.Outcome([step.HostSample(**base, bytes_read=10, zlib_bytes=5)], [])
    notes = []
    asyncio.run(standby.time_on_standby(outcome, None, None, host=None, prefix=(), notes=notes))
    assert notes == ["Decompression not timed on the standby: the environment has no standby host; the figures "
                     "are the primary's."]  # fmt: skip
    assert outcome.samples[0].standby_bytes is None
