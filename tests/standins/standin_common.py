"""What the sqlplus, db2 and db2pd stand-ins share: the shipped scripts they accept (read from the
package's sql/ folder and hashed here, so that a stand-in needs nothing of redolab installed on the test
host), the strict reading of a session's text, the scenario and data the test chose, and the log.

Environment (set by the test):
- STANDIN_SCENARIO: ok (default) | wrong_password | no_privilege | no_awr | instance_down | hang |
  garbage | old_version | comma_decimals | missing_view (ORA-00942 on DBA_DATA_FILES) | killed (exit 137,
  nothing printed after the first step) | short_lines (a login script's STANDIN_FLOOD_BYTES, default
  63 MiB, of two-byte lines before the output) | wide_chars (STANDIN_FLOOD_BYTES, default 240 MB, of
  four-byte UTF-8 characters, 100 to a line) | long_lines (STANDIN_FLOOD_BYTES, default 150 MiB, of
  80-byte lines: within the output caps, refused when read) | escapes (a logon refused with terminal escapes, C0 and C1
  controls in the ORA- message, as a hostile host can print)
- STANDIN_PASSWORD: the password a `USER[@ALIAS]` logon must read as the first line of standard input
- STANDIN_DATA: a JSON file of what the database holds (keys as in DEFAULT_DATA); absent keys take the defaults
- STANDIN_LOG: a file to which every invocation appends one JSON line (tool, argv, sha256 of its input,
  the scripts recognised)
- STANDIN_SQL_DIR: the shipped scripts (default: backend/redolab/collect/sql of this checkout)
- STANDIN_HANG_SECONDS: how long `hang` sleeps (default 600)
Anything the stand-in does not recognise fails loudly: exit 99 and "stand-in: unknown SQL" on stderr.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path

UNKNOWN_EXIT = 99
SCENARIOS = ("ok", "wrong_password", "no_privilege", "no_awr", "instance_down", "hang", "garbage", "old_version",
             "comma_decimals", "missing_view", "killed", "short_lines", "wide_chars", "long_lines",
             "escapes")  # fmt: skip
FLOODS = {"short_lines": (b"x\n", 63 * 1024 * 1024),
          "wide_chars": (("\U0001f600" * 100 + "\n").encode(), 240_000_000),
          "long_lines": (b"x" * 79 + b"\n", 150 * 1024 * 1024)}  # fmt: skip
ESCAPES = "invalid \x1b[2J\x1b]0;owned\x07username\x9b31m\x00\x08; logon denied"
HEADER = "-- redolab-script: "
DEFINE = re.compile(r"^DEFINE ([a-z][a-z0-9_]{0,29}) = (\d{1,10})$")
VARIABLE = re.compile(r"&([a-z][a-z0-9_]*)", re.IGNORECASE)


def fail(why: str) -> None:
    print(f"stand-in: unknown SQL: {why}", file=sys.stderr)
    sys.exit(UNKNOWN_EXIT)


def sql_dir() -> Path:
    configured = os.environ.get("STANDIN_SQL_DIR")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "backend" / "redolab" / "collect" / "sql"


def shipped() -> dict[str, str]:
    """name -> text of every shipped script."""
    found = {path.stem: path.read_bytes().decode("utf-8") for path in sorted(sql_dir().glob("*.sql"))}
    if not found:
        fail(f"no shipped scripts in {sql_dir()}")
    return found


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def scenario() -> str:
    chosen = os.environ.get("STANDIN_SCENARIO", "ok")
    if chosen not in SCENARIOS:
        print(f"stand-in: unknown scenario '{chosen}'", file=sys.stderr)
        sys.exit(UNKNOWN_EXIT)
    return chosen


def flood(chosen: str) -> None:
    """Print the scenario's flood (STANDIN_FLOOD_BYTES of it), in blocks; a reader that stops ends it."""
    unit, default = FLOODS[chosen]
    total = int(os.environ.get("STANDIN_FLOOD_BYTES", default))
    block = unit * max(1, (1 << 20) // len(unit))
    try:
        while total > 0:
            sys.stdout.buffer.write(block[:total])
            total -= len(block)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        os._exit(141)


def hang() -> None:
    time.sleep(float(os.environ.get("STANDIN_HANG_SECONDS", "600")))


def log(tool: str, argv: list[str], received: str, scripts: list[str]) -> None:
    target = os.environ.get("STANDIN_LOG")
    if not target:
        return
    entry = {"tool": tool, "argv": argv, "sha256": sha256(received), "scripts": scripts,
             "scripts_sha256": [sha256(shipped()[name]) for name in scripts], "ps": command_lines()}  # fmt: skip
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def command_lines() -> list[str]:
    """What `ps` shows of this process and its parents (up to the session's sshd): each command line."""
    lines, pid = [], os.getpid()
    for _ in range(8):
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if pid <= 1:
            break
    return lines


def split_session(text: str, known: dict[str, str]) -> tuple[list[tuple[str, dict[str, int]]], bool]:
    """The scripts of a session's text, each with the DEFINE values set before it, and whether it ends
    with EXIT. Between scripts only `DEFINE name = digits` lines (and a final EXIT) may stand; each
    script must be a shipped one byte for byte (its sha256), and every &variable it uses defined."""
    lines = text.splitlines(keepends=True)
    found: list[tuple[str, dict[str, int]]] = []
    defines: dict[str, int] = {}
    index, exited = 0, False
    while index < len(lines):
        line = lines[index].rstrip("\r\n")
        if exited:
            fail(f"line {index + 1}: text after EXIT")
        if line.startswith(HEADER):
            name = line[len(HEADER) :].strip()
            end = index + 1
            while end < len(lines) and not _generated(lines[end]) and not lines[end].startswith(HEADER):
                end += 1
            chunk = "".join(lines[index:end])
            if name not in known or sha256(chunk) != sha256(known[name]):
                fail(f"line {index + 1}: script '{name[:40]}' is not a shipped script (sha256 {sha256(chunk)[:12]})")
            missing = sorted({v.lower() for v in VARIABLE.findall(chunk)} - set(defines))
            if missing:
                fail(f"script '{name}' uses {', '.join(missing)} without a DEFINE (SQL*Plus would prompt)")
            found.append((name, dict(defines)))
            index = end
            continue
        match = DEFINE.match(line)
        if match:
            defines[match.group(1)] = int(match.group(2))
        elif line == "EXIT":
            exited = True
        elif line.strip():
            fail(f"line {index + 1}: '{line[:60]}' is neither a shipped script, a DEFINE of digits nor EXIT")
        index += 1
    return found, exited


def _generated(line: str) -> bool:
    line = line.rstrip("\r\n")
    return bool(DEFINE.match(line)) or line == "EXIT"


def data() -> dict:
    """DEFAULT_DATA, with the test's STANDIN_DATA keys over it."""
    chosen = dict(DEFAULT_DATA)
    path = os.environ.get("STANDIN_DATA")
    if path:
        chosen.update(json.loads(Path(path).read_text(encoding="utf-8")))
    return chosen


def _archived_logs() -> list[list]:
    """Two RAC threads: thread 1 sequences 118 to 123, thread 2 sequences 86 to 90, every 10 minutes."""
    rows = []
    for thread, first, count, block_count in ((1, 118, 6, 1_228_800), (2, 86, 5, 2_457_600)):
        for n in range(count):
            minute = 10 * n + (5 if thread == 2 else 0)
            start = f"2026-11-20 {8 + minute // 60:02d}:{minute % 60:02d}:00"
            end_minute = minute + 10
            end = f"2026-11-20 {8 + end_minute // 60:02d}:{end_minute % 60:02d}:00"
            rows.append([thread, first + n, 1088, 1, start, end, block_count + 512 * n, 512])
    return rows


def _archived_log_names() -> list[list]:
    """The same logs with their names: thread 1's in ASM, thread 2's in a file system directory."""
    return [[thread, sequence, start, end, blocks, size,
             f"+RECO/ORCL/ARCHIVELOG/2026_11_20/thread_1_seq_{sequence}.1088" if thread == 1
             else f"/u01/arch/{thread}_{sequence}_1088.arc"]
            for thread, sequence, _, _, start, end, blocks, size in _archived_logs()]  # fmt: skip


DEFAULT_DATA: dict = {
    "database": [[1234567890, "ORCL", "ORCL_PRIM", "PRIMARY", "Linux x86 64-bit", "ARCHIVELOG", "YES",
                  "19.0.0.0.0", "+00:00", "+01:00", "MAXIMUM PERFORMANCE", "0"]],
    "instances": [[1, 1, "ORCL1", "dbhost01", 1, "OPEN", "19.0.0.0.0"],
                  [2, 2, "ORCL2", "dbhost02", 2, "OPEN", "19.0.0.0.0"]],
    "size": [[2_199_023_255_552, 68_719_476_736, 2_199_023_255_552]],
    "datafiles": [  # 2 TiB in all, as "size" says: four smallfile tablespaces and one bigfile
        [1, "SYSTEM", 1_073_741_824, "NO"],
        [2, "SYSAUX", 2_147_483_648, "NO"],
        [3, "UNDOTBS1", 4_294_967_296, "NO"],
        [4, "USERS", 9_663_676_416, "NO"],
        [5, "SALES_BIG", 2_181_843_386_368, "YES"],
    ],
    "redo_logs": [["ONLINE", 1, 1, 1_073_741_824, 2, "CURRENT"], ["ONLINE", 1, 2, 1_073_741_824, 2, "INACTIVE"],
                  ["ONLINE", 2, 3, 1_073_741_824, 2, "CURRENT"], ["STANDBY", 1, 11, 1_073_741_824, None, "UNASSIGNED"]],
    "archive_dests": [[1, "LOG_ARCHIVE_DEST_1", "VALID", "PRIMARY", "USE_DB_RECOVERY_FILE_DEST", "SYNCHRONOUS",
                       "NO", "ALL_ROLES", "NONE", 0, "DISABLE", 300, 0, 1, 0, "NONE"],
                      [2, "LOG_ARCHIVE_DEST_2", "VALID", "STANDBY", "orcl_stby", "ASYNCHRONOUS", "NO",
                       "ONLINE_LOGFILES,PRIMARY_ROLE", "ORCL_STBY", 30, "DISABLE", 300, 0, 1, 0, "NONE"]],
    "archived_log": _archived_logs(),
    "archived_log_names": _archived_log_names(),
    "awr_sysmetric": [["2026-11-20 08:00:00", "2026-11-20 09:00:00", 1, "Redo Generated Per Sec", 1048576.5,
                       5242880.25],
                      ["2026-11-20 09:00:00", "2026-11-20 10:00:00", 1, "Redo Generated Per Sec", 0.5, 2097152]],
    "awr_sysstat": [[101, 1, "2026-11-20 08:00:00", "2026-11-20 09:00:00", "redo size", 7_549_747_200],
                    [101, 1, "2026-11-20 08:00:00", "2026-11-20 09:00:00", "redo writes", 1_843_200]],
    "db2_transaction_log": [["2026-11-20-10.00.00.000000", 0, 1_000_000, 50_000, 120_000],
                            ["2026-11-20-10.00.00.000000", 1, 500_000, 30_000, 90_000]],
    "db2_config": [[0, "hadr_peer_window", "300"], [0, "hadr_spool_limit", "AUTOMATIC"],
                   [0, "hadr_syncmode", "NEARSYNC"], [0, "logarchmeth1", "DISK:/db2arch/my archive/"],
                   [0, "logbufsz", "2048"], [0, "logfilsiz", "76800"]],
    "db2_archived_logs": [[0, "20261120100000", "20261120100002", "1", "S0000120.LOG", "/db2arch/my archive/"],
                          [0, "20261120100500", "20261120100501", "1", "S0000121.LOG", "/db2arch/my archive/"],
                          [0, "20261120101000", "20261120101003", "1", "S0000122.LOG", None]],
    "db2pd_hadr": None,  # None: the stand-in's own primary block
}  # fmt: skip
