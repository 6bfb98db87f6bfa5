"""The command lines of a collection, from a host's database access: every element validated here and
quoted by remote.transport.shell_join; scripts and any password go on standard input, never here.

Oracle: `[sudo -n -u USER] env ORACLE_HOME=H ORACLE_SID=S H/bin/sqlplus -S -L / as sysdba` (sudo
resets the environment, so `env` comes after it); `/@ALIAS as sysdba` with a wallet; `USER[@ALIAS]`
with the password as the first line of standard input (SQL*Plus reads it there when the logon has none).
Db2: one fixed shell text that sources the instance's db2profile, connects and runs the CLP on the
script it reads from standard input, in one shell (the CLP back end belongs to the shell).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from redolab.collect.scripts import SQLPLUS_VERSION_ARGUMENTS, db2_database_name, oracle_sid
from redolab.core.security import decrypt_secret

ORATAB = "/etc/oratab"
_PATH = re.compile(r"/[A-Za-z0-9._+/-]{0,254}")
_OS_USER = re.compile(r"[a-z_][a-z0-9_.-]{0,31}")
_ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,254}")
_DB_USER = re.compile(r"[A-Za-z][A-Za-z0-9_$#]{0,127}")
# $0 names the shell in messages; $1 the sqllib directory, $2 the database. The CLP's messages about the
# connection go to stderr, so that stdout holds only the script's rows.
DB2_SHELL = (
    '. "$1/db2profile" || exit 127; db2 connect to "$2" 1>&2 || exit $?; db2 -x -t +p; rc=$?; '
    "db2 terminate >/dev/null 2>&1; exit $rc"
)
DB2PD_SHELL = '. "$1/db2profile" || exit 127; exec db2pd -db "$2" -hadr'


@dataclass(frozen=True)
class DatabaseAccess:
    """A host's database access as plain values (the password decrypted, in memory only)."""

    kind: str  # oracle or db2
    host_name: str
    os_user: str | None = None
    oracle_home: str | None = None
    oracle_sid: str | None = None
    connect: str | None = None
    user: str | None = None
    password: str | None = None
    db2_sqllib: str | None = None
    db2_database: str | None = None

    def __repr__(self) -> str:  # the password never reaches a log line
        return f"DatabaseAccess({self.kind!r}, {self.host_name!r}, sid={self.oracle_sid!r})"


def absolute_path(path: str, what: str) -> str:
    if not _PATH.fullmatch(path) or "/../" in path + "/" or "/./" in path + "/":
        raise ValueError(f"{what} '{path[:80]}' is not an absolute path of letters, digits and . _ + - /")
    return path.rstrip("/") or "/"


def _sudo(access: DatabaseAccess) -> list[str]:
    if not access.os_user:
        return []
    if not _OS_USER.fullmatch(access.os_user):
        raise ValueError(f"'{access.os_user[:40]}' is not an operating-system user name")
    return ["sudo", "-n", "-u", access.os_user]


def run_as(access: DatabaseAccess) -> list[str]:
    """The prefix that runs a command as the access's operating-system user (sudo -n -u), or none."""
    return _sudo(access)


def _oracle_env(access: DatabaseAccess, home: str) -> list[str]:
    env = ["env", f"ORACLE_HOME={absolute_path(home, 'ORACLE_HOME')}"]
    if access.oracle_sid:
        env.append(f"ORACLE_SID={oracle_sid(access.oracle_sid)}")
    return env


def sqlplus_version_argv(access: DatabaseAccess, home: str) -> list[str]:
    return [*_sudo(access), *_oracle_env(access, home), f"{home.rstrip('/')}/bin/sqlplus", *SQLPLUS_VERSION_ARGUMENTS]


def sqlplus_argv(access: DatabaseAccess, home: str) -> list[str]:
    """`sqlplus -S -L` and the logon, which never holds a password."""
    if access.connect is not None and not _ALIAS.fullmatch(access.connect):
        raise ValueError(f"'{access.connect[:40]}' is not a net service name")
    if access.user:
        if not _DB_USER.fullmatch(access.user):
            raise ValueError(f"'{access.user[:40]}' is not a database user name")
        logon = [f"{access.user}@{access.connect}" if access.connect else access.user]
    else:
        logon = [f"/@{access.connect}" if access.connect else "/", "as", "sysdba"]
    return [*_sudo(access), *_oracle_env(access, home), f"{home.rstrip('/')}/bin/sqlplus", "-S", "-L", *logon]


def sqlplus_input(access: DatabaseAccess, session_text: str) -> str:
    """Standard input: the password line first when the logon names a user, then the session."""
    if access.user:
        if access.password is None or any(c in access.password for c in "\r\n\0"):
            raise ValueError("a database user needs its password (one line)")
        return access.password + "\n" + session_text
    return session_text


def db2_argv(access: DatabaseAccess) -> list[str]:
    sqllib = absolute_path(access.db2_sqllib or "", "the sqllib directory")
    return [
        *_sudo(access),
        "sh",
        "-c",
        DB2_SHELL,
        "redolab-collect",
        sqllib,
        db2_database_name(access.db2_database or ""),
    ]


def db2pd_argv(access: DatabaseAccess) -> list[str]:
    sqllib = absolute_path(access.db2_sqllib or "", "the sqllib directory")
    return [
        *_sudo(access),
        "sh",
        "-c",
        DB2PD_SHELL,
        "redolab-collect",
        sqllib,
        db2_database_name(access.db2_database or ""),
    ]


def oratab_home(text: str, sid: str) -> str | None:
    """ORACLE_HOME of `sid` in /etc/oratab (`SID:HOME:Y|N` lines, # comments), or None."""
    for line in text.splitlines()[:2000]:
        line = line.split("#", 1)[0].strip()
        parts = line.split(":")
        if len(parts) >= 2 and parts[0] == sid and parts[1].startswith("/"):
            return parts[1]
    return None


def validate(access: DatabaseAccess) -> None:
    """Every value that will reach a command line, checked before anything runs (ValueError)."""
    if access.kind == "oracle":
        sqlplus_argv(access, access.oracle_home or "/oracle_home_from_oratab")
    elif access.kind == "db2":
        db2_argv(access)
    else:
        raise ValueError(f"'{access.kind}' is not a database kind redolab collects from (oracle or db2)")


def access_of(host, secret_key: str) -> DatabaseAccess:
    """A host's (environments.models.Host) database access, its password decrypted."""
    password = decrypt_secret(host.db_encrypted_password, secret_key=secret_key) if host.db_encrypted_password else None
    return DatabaseAccess(
        kind=host.db_kind or "",
        host_name=host.name,
        os_user=host.db_os_user,
        oracle_home=host.oracle_home,
        oracle_sid=host.oracle_sid,
        connect=host.db_connect,
        user=host.db_user,
        password=password,
        db2_sqllib=host.db2_sqllib,
        db2_database=host.db2_database,
    )
