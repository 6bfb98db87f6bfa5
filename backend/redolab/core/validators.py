"""Validators for values that will reach SSH and remote shells later.

Anything that is not plainly a host name, an IP literal, a POSIX user name or a Linux interface
name is refused here, at the edge, with a message that says what is allowed.
"""

from __future__ import annotations

import ipaddress
import re

# matched with fullmatch: `$` would also match before a trailing newline
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
_POSIX_USER = re.compile(r"[a-z_][a-z0-9_-]{0,30}\$?")
_INTERFACE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,14}")


def check_host_address(value: str) -> str:
    """A DNS host name (RFC 1123) or an IPv4/IPv6 literal; returned stripped."""
    value = value.strip()
    if not value:
        raise ValueError("Enter a host name or an IP address.")
    try:
        return str(ipaddress.ip_address(value.strip("[]")))
    except ValueError:
        pass
    name = value.removesuffix(".")
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in name.split(".")):
        raise ValueError(
            f"'{value}' is not a host name or IP address: use letters, digits, hyphens and dots "
            "(e.g. db1-stby.example.com), or an IPv4/IPv6 address."
        )
    if name.replace(".", "").isdigit():
        raise ValueError(f"'{value}' is not a valid IPv4 address.")
    return name


def check_posix_user(value: str) -> str:
    value = value.strip()
    if not _POSIX_USER.fullmatch(value):
        raise ValueError(
            f"'{value}' is not a valid user name: start with a lower-case letter or _, then "
            "lower-case letters, digits, _ or -, at most 32 characters (e.g. oracle)."
        )
    return value


def check_interface_name(value: str) -> str:
    value = value.strip()
    if not _INTERFACE.fullmatch(value):
        raise ValueError(
            f"'{value}' is not a network interface name: at most 15 letters, digits, "
            "'_', '.', ':' or '-', not starting with '-' (e.g. eth1 or bond0.120)."
        )
    return value
