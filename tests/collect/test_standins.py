"""The stand-ins run as the collection will run the real tools (a process, the script on standard
input), in every scenario; collect/output.py reads what they print, and names every failure. The
stand-ins accept the shipped scripts only."""

import os
import subprocess

import pytest

from redolab.collect.errors import CollectionError
from redolab.collect.output import read_db2, read_db2pd, read_sqlplus
from redolab.collect.scripts import (
    ORACLE_STEPS,
    SCRIPTS,
    archived_log_variables,
    db2_script,
    db2pd_hadr_arguments,
    oracle_session,
    script_text,
)
from redolab.hadr import db2pd
from tests.collect.standin import LOGON, STANDINS, environment, logged, run

ALL_STEPS = [(name, {}) for name in ORACLE_STEPS]
EXPECTED = tuple(step for steps in ORACLE_STEPS.values() for step in steps)


def sqlplus(tmp_path, scenario="ok", steps=ALL_STEPS, *, csv_markup=True, data=None, **extra):
    env = environment(tmp_path, scenario, data, **extra)
    return run("sqlplus", LOGON, stdin=oracle_session(steps, csv_markup=csv_markup), env=env)


@pytest.mark.parametrize("csv_markup", [True, False], ids=["csv", "colsep"])
def test_a_whole_collection_reads_in_both_layouts(tmp_path, csv_markup):
    done = sqlplus(tmp_path, csv_markup=csv_markup)
    collected = read_sqlplus(done.stdout, stderr=done.stderr, exit_code=done.returncode, expected=EXPECTED)
    assert collected.layout == ("csv" if csv_markup else "colsep")
    facts = collected.steps["database"][0]
    assert (facts.dbid, facts.db_unique_name, facts.log_mode, facts.host_utc_offset) == (
        1234567890,
        "ORCL_PRIM",
        "ARCHIVELOG",
        "+01:00",
    )
    assert [i.thread for i in collected.steps["instances"]] == [1, 2]
    assert collected.steps["size"][0].datafile_bytes == 2_199_023_255_552
    datafiles = collected.steps["datafiles"]  # DBA_DATA_FILES with DBA_TABLESPACES.BIGFILE, adding up to the size
    assert sum(f.bytes for f in datafiles) == 2_199_023_255_552
    assert [(f.tablespace_name, f.bigfile) for f in datafiles if f.bigfile == "YES"] == [("SALES_BIG", "YES")]
    assert {(g.log_type, g.members) for g in collected.steps["redo_logs"]} >= {("STANDBY", None), ("ONLINE", 2)}
    assert [d.transmit_mode for d in collected.steps["archive_dests"]] == ["SYNCHRONOUS", "ASYNCHRONOUS"]
    assert len(collected.steps["archived_log"]) == 11
    assert collected.steps["awr_sysmetric"][1].average == 0.5  # printed '.5', as SQL*Plus does


def test_the_log_holds_each_scripts_sha256(tmp_path):
    sqlplus(tmp_path)
    (entry,) = logged(tmp_path)
    assert entry["tool"] == "sqlplus" and entry["scripts"] == ["oracle_session_csv", *ORACLE_STEPS]
    assert entry["scripts_sha256"] == [SCRIPTS[name].sha256 for name in entry["scripts"]]


def test_incremental_watermark_returns_only_later_logs(tmp_path):
    variables = archived_log_variables({1: 120, 2: 88}, resetlogs_id=1088)
    done = sqlplus(tmp_path, steps=[("oracle_archived_log", variables)])
    logs = read_sqlplus(done.stdout, exit_code=done.returncode).steps["archived_log"]
    assert [(log.thread, log.sequence) for log in logs] == [(1, 121), (1, 122), (1, 123), (2, 89), (2, 90)]


def test_a_watermark_of_another_incarnation_takes_every_log(tmp_path):
    variables = archived_log_variables({1: 120, 2: 88}, resetlogs_id=999)
    done = sqlplus(tmp_path, steps=[("oracle_archived_log", variables)])
    assert len(read_sqlplus(done.stdout, exit_code=done.returncode).steps["archived_log"]) == 11


def test_nothing_new_is_no_rows_selected(tmp_path):
    variables = archived_log_variables({1: 200, 2: 200}, resetlogs_id=1088)
    done = sqlplus(tmp_path, steps=[("oracle_archived_log", variables)], csv_markup=False)
    assert "no rows selected" in done.stdout
    assert read_sqlplus(done.stdout, exit_code=done.returncode).steps["archived_log"] == []


@pytest.mark.parametrize(
    ("scenario", "kind", "step", "exit_code"),
    [
        ("wrong_password", "authentication", "connect", 1),
        ("no_privilege", "privilege", "connect", 1),
        ("instance_down", "instance_down", "connect", 1034 % 256),
        ("no_awr", "no_awr", "awr_sysmetric", 942 % 256),
        ("old_version", "old_version", "connect", 0),
        ("comma_decimals", "nls", "awr_sysmetric", 0),
        ("garbage", "garbage", "session", 0),
    ],
)
def test_each_failure_is_classified(tmp_path, scenario, kind, step, exit_code):
    done = sqlplus(tmp_path, scenario)
    assert done.returncode == exit_code
    with pytest.raises(CollectionError) as caught:
        read_sqlplus(done.stdout, stderr=done.stderr, exit_code=done.returncode, expected=EXPECTED)
    assert (caught.value.kind, caught.value.step) == (kind, step)


def test_an_old_sqlplus_reads_with_the_colsep_session(tmp_path):
    version = run("sqlplus", ["-V"], env=environment(tmp_path, "old_version"))
    assert "Release 11.2" in version.stdout
    done = sqlplus(tmp_path, "old_version", csv_markup=False)
    assert read_sqlplus(done.stdout, exit_code=done.returncode, expected=EXPECTED).layout == "colsep"


def test_without_oracle_sid_the_environment_is_named(tmp_path):
    env = environment(tmp_path)
    env.pop("ORACLE_SID")
    done = run("sqlplus", LOGON, stdin=oracle_session(ALL_STEPS), env=env)
    with pytest.raises(CollectionError) as caught:
        read_sqlplus(done.stdout, exit_code=done.returncode)
    assert caught.value.kind == "environment"


def test_a_hang_is_stopped_and_named(tmp_path):
    with pytest.raises(subprocess.TimeoutExpired):  # subprocess.run kills the stand-in it started
        sqlplus_hang = environment(tmp_path, "hang", STANDIN_HANG_SECONDS="30")
        run("sqlplus", LOGON, stdin=oracle_session(ALL_STEPS), env=sqlplus_hang, timeout=1)
    with pytest.raises(CollectionError) as caught:
        read_sqlplus("", exit_code=-9, was_stopped=True, timeout=1)
    assert caught.value.kind == "timeout"


def test_the_script_can_come_as_a_file(tmp_path):
    script = tmp_path / "collect.sql"
    script.write_text(oracle_session([("oracle_size", {})]))
    done = run("sqlplus", [*LOGON, f"@{script}"], env=environment(tmp_path))
    assert read_sqlplus(done.stdout, exit_code=done.returncode).steps["size"][0].tempfile_bytes == 68_719_476_736


@pytest.mark.parametrize(
    "text",
    [
        oracle_session(ALL_STEPS).replace("FROM v$log\n", "FROM v$log \n"),  # one blank more
        oracle_session(ALL_STEPS).replace("ORDER BY inst_id;", "ORDER BY inst_id DESC;"),
        oracle_session([("oracle_awr", {})]).replace("DEFINE awr_days = 8", "DEFINE awr_days = '8'"),
        oracle_session([("oracle_awr", {})]).replace("DEFINE awr_days = 8\n", ""),  # SQL*Plus would prompt
        oracle_session([("oracle_database", {})]) + "SELECT * FROM dba_users;\n",  # noqa: S608  (a test of refusal)
        "SELECT 1 FROM dual;\nEXIT\n",
        oracle_session([("oracle_database", {})]).replace("EXIT\n", "EXIT\nSELECT 1 FROM dual;\n"),
        SCRIPTS["oracle_database"].text,  # a step without its session
        script_text("db2_config"),
    ],
)
def test_anything_but_the_shipped_scripts_fails_loudly(tmp_path, text):
    done = run("sqlplus", LOGON, stdin=text, env=environment(tmp_path))
    assert done.returncode == 99 and "stand-in: unknown SQL" in done.stderr


@pytest.mark.parametrize("args", [["scott/tiger"], ["-S", "/", "as", "sysdba"], ["-S", "-L", "/", "as", "sysoper"]])
def test_other_arguments_fail_loudly(tmp_path, args):
    done = run("sqlplus", args, stdin=oracle_session(ALL_STEPS), env=environment(tmp_path))
    assert done.returncode == 99 and "stand-in: unknown SQL" in done.stderr


def test_an_unknown_scenario_fails_loudly(tmp_path):
    done = run("sqlplus", LOGON, stdin=oracle_session(ALL_STEPS), env=environment(tmp_path, "sunny"))
    assert done.returncode == 99 and "unknown scenario" in done.stderr


def test_on_the_path_and_not_installed(tmp_path):
    """As the collection calls them: by name, through a shell, from the PATH."""
    env = environment(tmp_path, PATH=f"{STANDINS}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["sh", "-c", "sqlplus -S -L / as sysdba"],
        input=oracle_session([("oracle_size", {})]),
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=30,
    )
    assert read_sqlplus(done.stdout, exit_code=done.returncode).steps["size"]
    env["PATH"] = str(tmp_path)
    missing = subprocess.run(
        ["/bin/sh", "-c", "sqlplus -S -L / as sysdba"],
        input="",
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=30,
    )
    assert missing.returncode == 127
    with pytest.raises(CollectionError) as caught:
        read_sqlplus(missing.stdout, stderr=missing.stderr, exit_code=missing.returncode)
    assert caught.value.kind == "not_installed"


# -- Db2 ---------------------------------------------------------------------------------------------
def db2(tmp_path, name, scenario="ok", data=None):
    return run("db2", ["-x", "-t", "+p"], stdin=db2_script(name), env=environment(tmp_path, scenario, data))


@pytest.mark.parametrize("name", ["db2_transaction_log", "db2_config", "db2_archived_logs"])
def test_db2_scripts_read(tmp_path, name):
    done = db2(tmp_path, name)
    rows = read_db2(name, done.stdout, stderr=done.stderr, exit_code=done.returncode)
    assert rows and logged(tmp_path)[0]["scripts_sha256"] == [SCRIPTS[name].sha256]


def test_db2_values_with_blanks_and_nulls(tmp_path):
    done = db2(tmp_path, "db2_config")
    config = {row.name: row.value for row in read_db2("db2_config", done.stdout, exit_code=done.returncode)}
    assert config["logarchmeth1"] == "DISK:/db2arch/my archive/" and config["logfilsiz"] == "76800"
    done = db2(tmp_path, "db2_archived_logs")
    history = read_db2("db2_archived_logs", done.stdout, exit_code=done.returncode)
    assert [row.location for row in history] == ["/db2arch/my archive/", "/db2arch/my archive/", None]


def test_db2_script_from_a_file_and_no_rows(tmp_path):
    script = tmp_path / "capture.sql"
    script.write_text(db2_script("db2_archived_logs"))
    done = run("db2", ["-x", "-tf", str(script)], env=environment(tmp_path, data={"db2_archived_logs": []}))
    assert done.returncode == 1 and done.stdout == ""
    assert read_db2("db2_archived_logs", done.stdout, exit_code=done.returncode) == []


@pytest.mark.parametrize(
    ("scenario", "name", "kind"),
    [
        ("no_privilege", "db2_transaction_log", "privilege"),
        ("instance_down", "db2_config", "instance_down"),
        ("no_awr", "db2_archived_logs", "missing_view"),
        ("garbage", "db2_transaction_log", "garbage"),
    ],
)
def test_db2_failures_are_classified(tmp_path, scenario, name, kind):
    done = db2(tmp_path, name, scenario)
    with pytest.raises(CollectionError) as caught:
        read_db2(name, done.stdout, stderr=done.stderr, exit_code=done.returncode)
    assert (caught.value.kind, caught.value.step) == (kind, name)


def test_db2_connect(tmp_path):
    done = run("db2", ["connect", "to", "SALESDB"], env=environment(tmp_path))
    assert done.returncode == 0 and "Local database alias   = SALESDB" in done.stdout
    refused = run("db2", ["connect", "to", "SALESDB"], env=environment(tmp_path, "wrong_password"))
    assert refused.returncode == 4
    with pytest.raises(CollectionError) as caught:
        read_db2("db2_config", refused.stdout, exit_code=refused.returncode)
    assert caught.value.kind == "authentication"


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["-x", "-t"], "SELECT * FROM SYSCAT.TABLES;\n"),
        (["-x", "-t"], SCRIPTS["db2_config"].text.replace("logbufsz", "logbufsz', 'newlogpath")),
        (["-t"], SCRIPTS["db2_config"].text),  # without -x the CLP prints headings
        (["-x", "-tv"], SCRIPTS["db2_config"].text),
        (["drop", "database", "SALESDB"], ""),
        (["-x", "-t"], oracle_session([("oracle_size", {})])),
    ],
)
def test_db2_accepts_only_the_shipped_scripts(tmp_path, args, stdin):
    done = run("db2", args, stdin=stdin, env=environment(tmp_path))
    assert done.returncode == 99 and "stand-in: unknown SQL" in done.stderr


# -- db2pd -------------------------------------------------------------------------------------------
def test_db2pd_hadr_reads_with_the_hadr_parser(tmp_path):
    done = run("db2pd", list(db2pd_hadr_arguments("salesdb")), env=environment(tmp_path))
    text = read_db2pd(done.stdout, stderr=done.stderr, exit_code=done.returncode)
    parsed = db2pd.parse(text.splitlines())
    assert parsed.samples and parsed.samples[0].role == "PRIMARY" and parsed.samples[0].sync_mode == "NEARSYNC"


@pytest.mark.parametrize(("scenario", "kind"), [("instance_down", "instance_down"), ("garbage", "garbage")])
def test_db2pd_failures(tmp_path, scenario, kind):
    done = run("db2pd", ["-db", "SALESDB", "-hadr"], env=environment(tmp_path, scenario))
    with pytest.raises(CollectionError) as caught:
        read_db2pd(done.stdout, stderr=done.stderr, exit_code=done.returncode)
    assert caught.value.kind == kind


@pytest.mark.parametrize("args", [["-db", "SALESDB", "-hadr", "-repeat", "1"], ["-db", "x;rm", "-hadr"], ["-edus"]])
def test_db2pd_other_arguments_fail_loudly(tmp_path, args):
    done = run("db2pd", args, env=environment(tmp_path))
    assert done.returncode == 99 and "stand-in: unknown SQL" in done.stderr
