"""The command lines of a collection: validated, quoted, never holding a script or a password."""

from __future__ import annotations

import shlex

import pytest
from pydantic import ValidationError

from redolab.collect.commands import (
    DatabaseAccess,
    db2_argv,
    db2pd_argv,
    oratab_home,
    sqlplus_argv,
    sqlplus_input,
    sqlplus_version_argv,
    validate,
)
from redolab.environments.schemas import DatabaseAccessUpdate
from redolab.remote.transport import shell_join

HOME = "/u01/app/oracle/product/19.0.0/dbhome_1"


def test_bequeath_logon_through_sudo():
    access = DatabaseAccess("oracle", "db1", os_user="oracle", oracle_sid="ORCL1")
    argv = sqlplus_argv(access, HOME)
    assert argv == [
        "sudo",
        "-n",
        "-u",
        "oracle",
        "env",
        f"ORACLE_HOME={HOME}",
        "ORACLE_SID=ORCL1",
        f"{HOME}/bin/sqlplus",
        "-S",
        "-L",
        "/",
        "as",
        "sysdba",
    ]
    assert shlex.split(shell_join(argv)) == argv
    assert sqlplus_version_argv(access, HOME)[-2:] == [f"{HOME}/bin/sqlplus", "-V"]


def test_wallet_and_password_logons_hold_no_secret():
    wallet = DatabaseAccess("oracle", "db1", connect="orcl_prim")
    assert sqlplus_argv(wallet, HOME)[-3:] == ["/@orcl_prim", "as", "sysdba"]
    user = DatabaseAccess("oracle", "db1", oracle_sid="ORCL1", connect="orcl", user="collector", password="s3cret pw")
    argv = sqlplus_argv(user, HOME)
    assert argv[-1] == "collector@orcl" and "s3cret" not in " ".join(argv)
    assert sqlplus_input(user, "SET ECHO OFF\n") == "s3cret pw\nSET ECHO OFF\n"
    assert "s3cret" not in repr(user)
    with pytest.raises(ValueError):
        sqlplus_input(DatabaseAccess("oracle", "db1", user="collector", password="a\nb"), "")


@pytest.mark.parametrize(
    "access",
    [
        DatabaseAccess("oracle", "db1", oracle_home="/u01/$(reboot)", oracle_sid="ORCL"),
        DatabaseAccess("oracle", "db1", oracle_home="relative/home", oracle_sid="ORCL"),
        DatabaseAccess("oracle", "db1", oracle_home="/u01/../etc", oracle_sid="ORCL"),
        DatabaseAccess("oracle", "db1", oracle_home=HOME, oracle_sid="ORCL; rm -rf /"),
        DatabaseAccess("oracle", "db1", oracle_home=HOME, oracle_sid="ORCL", os_user="root -s"),
        DatabaseAccess("oracle", "db1", oracle_home=HOME, connect="x y"),
        DatabaseAccess("db2", "db1", db2_sqllib="/home/db2inst1/sqllib", db2_database="SAMPLE'1"),
        DatabaseAccess("db2", "db1", db2_sqllib="~db2inst1/sqllib", db2_database="SAMPLE"),
    ],
)
def test_anything_unsafe_is_refused_before_anything_runs(access):
    with pytest.raises(ValueError):
        validate(access)


def test_db2_runs_in_one_shell_with_fixed_text():
    access = DatabaseAccess("db2", "db1", os_user="db2inst1", db2_sqllib="/home/db2inst1/sqllib", db2_database="sample")
    argv = db2_argv(access)
    assert argv[:6] == ["sudo", "-n", "-u", "db2inst1", "sh", "-c"]
    assert argv[-2:] == ["/home/db2inst1/sqllib", "SAMPLE"]
    assert 'db2 connect to "$2"' in argv[6] and "db2 -x -t +p" in argv[6]
    assert db2pd_argv(access)[-2:] == ["/home/db2inst1/sqllib", "SAMPLE"]


def test_oratab():
    text = "# comment\n+ASM:/u01/grid:N\nORCL1:/u01/app/oracle/19:Y  # the database\n\nORCL2:/u01/x:N\n"
    assert oratab_home(text, "ORCL1") == "/u01/app/oracle/19"
    assert oratab_home(text, "ORCL3") is None


def test_the_settings_form_refuses_what_the_command_would():
    with pytest.raises(ValidationError):
        DatabaseAccessUpdate(db_kind="oracle", oracle_home="/u01/$(id)", oracle_sid="ORCL")
    with pytest.raises(ValidationError):
        DatabaseAccessUpdate(db_kind="oracle")  # neither a SID nor a connect string
    with pytest.raises(ValidationError):
        DatabaseAccessUpdate(db_kind="db2", db2_sqllib="/home/db2inst1/sqllib")
    access = DatabaseAccessUpdate(db_kind="oracle", oracle_sid="ORCL1", oracle_home="")
    assert access.oracle_home is None  # from /etc/oratab
